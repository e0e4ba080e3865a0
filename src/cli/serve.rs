//! `arbiter serve [--listen 127.0.0.1:7878]`: the store, over HTTP.

use std::net::SocketAddr;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use arbiter::server::{self, Server};

use super::open_store;

#[derive(clap::Args)]
pub struct Args {
    /// Address to listen on (port 0: any free port, printed at start).
    #[arg(long, default_value = "127.0.0.1:7878")]
    pub listen: SocketAddr,
}

pub fn run(cli: &super::Cli, a: &Args) -> anyhow::Result<ExitCode> {
    server::observe::init_log();
    let data = cli.data.as_path();
    let store = open_store(data, false)?;
    let signer = super::checkpoint::signer(cli, &store)?;
    let key = signer.verifier().to_text();
    let organiser = server::first_organiser_token(&store).map_err(super::rec)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start tokio")?;
    runtime.block_on(async {
        let listener =
            tokio::net::TcpListener::bind(a.listen).await.with_context(|| format!("cannot listen on {}", a.listen))?;
        let addr = listener.local_addr()?;
        // Written before the first line, so whoever reads it finds the notice too.
        let _notice = ServingNotice::write(data, &format!("http://{addr}"));
        // Scripts (and the tests) read these lines to find the server.
        println!("listening on http://{addr}");
        if let Some(token) = organiser {
            println!("organiser token (shown once, stored hashed): {token}");
        }
        println!("replay pages: http://{addr}/games/GAME/replay; API: http://{addr}/openapi.json");
        println!("log key (publish it; checkpoints at http://{addr}/checkpoint): {key}");
        std::io::Write::flush(&mut std::io::stdout())?;
        let server = Server::with_pending(store, signer, arbiter::limits::MAX_PENDING_APPENDS);
        server::serve(listener, server, shutdown_signal()).await.context("the server failed")?;
        println!("shut down: appends in flight finished; every acknowledged append is stored");
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The file in the store directory that says which `arbiter serve` holds
/// the store, so that a CLI verb refused by sled's lock can say "use
/// --server URL" instead of an OS error. Not part of the store: sled never
/// reads it, and a stale one (the server was killed) is recognised because
/// its pid is no longer alive.
const NOTICE_FILE: &str = "serve.pid";

struct ServingNotice(std::path::PathBuf);

impl ServingNotice {
    /// Best effort: a store in a read-only directory still serves.
    fn write(data: &Path, url: &str) -> ServingNotice {
        let path = data.join(NOTICE_FILE);
        let _ = std::fs::write(&path, format!("{} {url}\n", std::process::id()));
        ServingNotice(path)
    }
}

impl Drop for ServingNotice {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Who holds the store, if it is a live `arbiter serve`: (pid, url).
pub fn serving(data: &Path) -> Option<(u32, String)> {
    let text = std::fs::read_to_string(data.join(NOTICE_FILE)).ok()?;
    let (pid, url) = text.trim().split_once(' ')?;
    let pid: u32 = pid.parse().ok()?;
    // Signal 0 checks that the process exists without touching it.
    let alive = unsafe { libc::kill(pid as libc::pid_t, 0) } == 0;
    alive.then(|| (pid, url.to_string()))
}

/// Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term => {}
    }
}
