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

pub fn run(data: &Path, a: &Args) -> anyhow::Result<ExitCode> {
    let store = open_store(data)?;
    let organiser = server::first_organiser_token(&store).map_err(super::rec)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start tokio")?;
    runtime.block_on(async {
        let listener =
            tokio::net::TcpListener::bind(a.listen).await.with_context(|| format!("cannot listen on {}", a.listen))?;
        let addr = listener.local_addr()?;
        // Scripts (and the tests) read these lines to find the server.
        println!("listening on http://{addr}");
        if let Some(token) = organiser {
            println!("organiser token (shown once, stored hashed): {token}");
        }
        println!("replay pages: http://{addr}/games/GAME/replay; API: http://{addr}/openapi.json");
        std::io::Write::flush(&mut std::io::stdout())?;
        server::serve(listener, Server::new(store), shutdown_signal()).await.context("the server failed")?;
        println!("shut down: appends in flight finished; every acknowledged append is stored");
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
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
