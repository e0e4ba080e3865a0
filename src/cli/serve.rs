//! `arbiter serve [--listen 127.0.0.1:7878]`: the store, over HTTP.

use std::net::SocketAddr;
use std::path::Path;
use std::process::ExitCode;

use std::time::Duration;

use anyhow::Context;
use arbiter::limits;
use arbiter::server::{self, Connections, Server};

use arbiter::store::Location;

use super::open_store;

/// Where `serve` listens unless told otherwise; `token` links start there
/// unless told otherwise.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7878";

#[derive(clap::Args)]
pub struct Args {
    /// Address to listen on (port 0: any free port, printed at start).
    #[arg(long, default_value = DEFAULT_LISTEN)]
    pub listen: SocketAddr,
    /// Seconds a request's head may take to arrive.
    #[arg(long, value_name = "SECS", default_value_t = limits::HEADER_TIMEOUT_SECONDS)]
    pub header_timeout: u64,
    /// Seconds a request's body may take to arrive after its head (then 408).
    #[arg(long, value_name = "SECS", default_value_t = limits::BODY_TIMEOUT_SECONDS)]
    pub body_timeout: u64,
    /// Seconds a connection may stay open with no request in flight.
    #[arg(long, value_name = "SECS", default_value_t = limits::IDLE_TIMEOUT_SECONDS)]
    pub idle_timeout: u64,
    /// Most connections open at once (then 503); lowered to what the
    /// process's file descriptor limit allows.
    #[arg(long, value_name = "N", default_value_t = limits::MAX_CONNECTIONS)]
    pub max_connections: usize,
    /// On SIGTERM, seconds requests in flight have to finish before the
    /// server exits anyway (acknowledging nothing it did not store).
    #[arg(long, value_name = "SECS", default_value_t = limits::SHUTDOWN_DEADLINE_SECONDS)]
    pub shutdown_deadline: u64,
    /// A TLS-terminating proxy in front (an address, or a CIDR range such as
    /// 10.0.0.0/8; repeat it or separate with commas): only from these peers
    /// is `X-Forwarded-Proto: https` believed, and then the pages' cookie is
    /// Secure. The proxy must set that header itself (docs/tls.md).
    #[arg(long, value_name = "ADDR[/BITS]", value_delimiter = ',')]
    pub trust_proxy: Vec<server::ProxyRange>,
}

pub fn run(cli: &super::Cli, a: &Args) -> anyhow::Result<ExitCode> {
    server::init_log();
    let location = cli.location()?;
    let store = open_store(&location, false)?;
    let signer = super::checkpoint::signer(cli, store.as_ref())?;
    let key = signer.verifier().to_text();
    let organiser = server::first_organiser_token(store.as_ref()).map_err(super::rec)?;
    let connections = Connections {
        header_timeout: Duration::from_secs(a.header_timeout),
        body_timeout: Duration::from_secs(a.body_timeout),
        idle_timeout: Duration::from_secs(a.idle_timeout),
        max_open: descriptors_for(a.max_connections),
        shutdown_deadline: Duration::from_secs(a.shutdown_deadline),
        trusted_proxies: a.trust_proxy.clone(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start tokio")?;
    runtime.block_on(async {
        let listener =
            tokio::net::TcpListener::bind(a.listen).await.with_context(|| format!("cannot listen on {}", a.listen))?;
        let addr = listener.local_addr()?;
        // Ctrl-C and SIGTERM are caught from here on, before the first
        // line says the server is there: caught only when the accept loop
        // first waited, a SIGTERM sent soon after that line (a loaded
        // machine: the test suite beside a build) could find the default
        // action still in place and kill the server, with no last
        // checkpoint.
        let shutdown = shutdown_signal()?;
        // Written before the first line, so whoever reads it finds the notice too.
        let _notice = match &location {
            Location::Dir(data) => Some(ServingNotice::write(data, &format!("http://{addr}"))),
            // Servers on one database hold no lock on it: nothing to explain.
            Location::Database(_) => None,
        };
        // Scripts (and the tests) read these lines to find the server.
        println!("listening on http://{addr}");
        if let Some(token) = organiser {
            println!("organiser token (shown once, stored hashed): {token}");
        }
        println!("replay pages: http://{addr}/games/GAME/replay; API: http://{addr}/openapi.json");
        println!("log key (publish it; checkpoints at http://{addr}/checkpoint): {key}");
        std::io::Write::flush(&mut std::io::stdout())?;
        let server = Server::with_limits(store, signer, limits::MAX_PENDING_APPENDS, Default::default());
        let stopped =
            server::serve_with(listener, server, connections, shutdown).await.context("the server failed")?;
        match stopped.cut {
            0 => println!("shut down: requests in flight finished; every acknowledged append is stored"),
            n => println!(
                "shut down: {n} connection(s) still open after {}s were cut, unanswered; every acknowledged append is stored",
                a.shutdown_deadline
            ),
        }
        anyhow::Ok(())
    })?;
    // A worker still running after the deadline (a long verify) is not
    // waited for: the store holds nothing it has not synced for an answer.
    runtime.shutdown_timeout(Duration::from_secs(1));
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

/// File descriptors the store, sled and the runtime need besides connections.
const OTHER_DESCRIPTORS: u64 = 256;

/// Raises the soft limit on open files toward what `connections` need (up to
/// the hard limit) and returns how many connections fit under it, so the
/// cap answers 503 before accept fails with "too many open files".
fn descriptors_for(connections: usize) -> usize {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit and setrlimit with a valid rlimit struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return connections;
        }
        let want = (connections as u64).saturating_add(OTHER_DESCRIPTORS).min(lim.rlim_max);
        if lim.rlim_cur < want {
            let raised = libc::rlimit { rlim_cur: want, rlim_max: lim.rlim_max };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim.rlim_cur = want;
            }
        }
    }
    let fit = lim.rlim_cur.saturating_sub(OTHER_DESCRIPTORS).max(1);
    if (fit as usize) < connections {
        eprintln!("note: the file descriptor limit ({}) allows {fit} connections, not {connections}", lim.rlim_cur);
    }
    connections.min(fit as usize)
}

/// Ctrl-C or SIGTERM, both caught from this call on (their handlers are
/// installed here, not at the future's first poll).
fn shutdown_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt()).context("cannot catch Ctrl-C")?;
    let mut term = signal(SignalKind::terminate()).context("cannot catch SIGTERM")?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = term.recv() => {}
        }
    })
}
