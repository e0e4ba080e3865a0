//! `cargo bench --bench serve` (or `tools/bench-serve N`): durable appends
//! per second and p50/p99 latency through the HTTP API of `arbiter serve`,
//! for 1 and 64 tables recording at once, beside the same appends made
//! through the library directly (one thread per table, one store), and
//! beside the disk's ceiling measured in the same run: sled insert, flush
//! and fdatasync once per event, and once per 64 events (what a perfect
//! group commit of 64 tables could reach).
//!
//! Each table replays the bundled Doomtrooper sample (rules checked on
//! every append), appending as the seat or judge that acts, with that
//! seat's token and the expected seq, as a table's device would: one
//! keep-alive connection per table, every answer read whole. The
//! "syncs/append" column shows the group commit: concurrent appends share
//! one flush and fdatasync. "cpu us/append" is the process's CPU time
//! (user + system, all threads; for the API, the clients' too) over the
//! run, per append: less sensitive than appends/s to a busy machine.
//! Each of those rows runs in turns with its ceiling (`turns=K`, default
//! 3): the ceiling, the row, the ceiling, the row..., so that the disk's
//! drift from one second to the next (its ceiling here moves by half
//! between runs a minute apart) weighs on both alike; the row's ratio is
//! its appends over its time in all turns beside the ceiling's events
//! over its time, and the last column gives each turn's ratio alone.
//! Then one table's appends through the API with 500 live subscribers of
//! its game open (each event checked delivered to each), in turns with the
//! same appends with none (`subscribers_in_turns`).
//! Arguments: appends per table; `library` or `api`, and `tables=N` (1
//! and 64 by default; any N), run only those rows (to profile one of them);
//! `subscribers` only the rows with subscribers; `turns=K`. With
//! `verify-all --store URL`: `verify --all` on sled beside PostgreSQL.
//! With `scale-out --store URL`: one and two `arbiter serve` processes on
//! one database, each held to a share of one core (`cap=PERCENT`, default
//! 25), in turns (`scale_out`).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use arbiter::access::{self, Grant};
use arbiter::record::{Recorder, create};
use arbiter::server::{self, Server};
use arbiter::store::{SledStore, Store};
use serde_json::json;

mod common;

/// The allocator the `arbiter` binary uses (see `src/main.rs`), so that
/// the server here runs as `arbiter serve` does (with glibc's malloc,
/// malloc and free were about 15% of the CPU at 64 tables).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use common::Sample;

struct Run {
    appends: usize,
    elapsed: Duration,
    latencies: Vec<Duration>,
    syncs: u64,
    /// CPU time of the whole process (user + system, every thread: the
    /// appenders, sled's, and for the API the server and its clients too).
    cpu: Duration,
    /// Of it, the live subscribers' client thread's.
    subscribers_cpu: Duration,
    /// The database cluster's CPU time over the run (its every process),
    /// when the row runs on PostgreSQL on this machine.
    db_cpu: Option<Duration>,
    /// Of it, the appending tables' client thread's.
    tables_cpu: Duration,
}

/// This process's CPU time so far, user + system, all threads. Less
/// sensitive than appends/s to what else the machine runs.
fn cpu_time() -> Duration {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// This process's context switches so far, all threads: (voluntary, a
/// thread that waits, as one handing work to another does; involuntary,
/// a thread preempted, which other work on the machine adds to).
fn switches() -> (u64, u64) {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    (usage.ru_nvcsw as u64, usage.ru_nivcsw as u64)
}

/// The calling thread's CPU time so far.
fn thread_cpu_time() -> Duration {
    let mut t: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: clock_gettime fills the struct it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

impl Run {
    fn rate(&self) -> f64 {
        self.appends as f64 / self.elapsed.as_secs_f64()
    }

    /// Runs of the same row one after the other, as one: their appends,
    /// times, latencies, syncs and CPU added up.
    fn merged(runs: Vec<Run>) -> Run {
        let mut all = Run {
            appends: 0,
            elapsed: Duration::ZERO,
            latencies: Vec::new(),
            syncs: 0,
            cpu: Duration::ZERO,
            subscribers_cpu: Duration::ZERO,
            db_cpu: None,
            tables_cpu: Duration::ZERO,
        };
        for run in runs {
            all.appends += run.appends;
            all.elapsed += run.elapsed;
            all.latencies.extend(run.latencies);
            all.syncs += run.syncs;
            all.cpu += run.cpu;
            all.subscribers_cpu += run.subscribers_cpu;
            all.db_cpu = match (all.db_cpu, run.db_cpu) {
                (Some(a), Some(b)) => Some(a + b),
                (a, b) => a.or(b),
            };
            all.tables_cpu += run.tables_cpu;
        }
        all
    }

    /// `turns` of `run`, each just after a measure of the ceiling
    /// (`ceiling`, events/s), printed as one row: the ratio of the row's
    /// appends/s over all turns to the ceiling's over all turns (the same
    /// number of events in each of its turns, so the harmonic mean), then
    /// each turn's ratio.
    fn in_turns(
        tables: usize,
        path: &str,
        turns: usize,
        mut ceiling: impl FnMut() -> f64,
        mut run: impl FnMut() -> Run,
    ) {
        let (mut ceilings, mut runs) = (Vec::new(), Vec::new());
        for _ in 0..turns {
            ceilings.push(ceiling());
            runs.push(run());
        }
        let each: Vec<String> = runs.iter().zip(&ceilings).map(|(r, c)| format!("{:.2}", r.rate() / c)).collect();
        let ceiling = ceilings.len() as f64 / ceilings.iter().map(|c| 1.0 / c).sum::<f64>();
        Run::merged(runs).row(tables, path, ceiling);
        println!("{:>6}  {:<16} each turn: {}x", "", "", each.join("x, "));
    }

    /// The latency under which a fraction `p` of the appends were answered, in ms.
    fn percentile(&mut self, p: f64) -> f64 {
        self.latencies.sort();
        let i = ((self.latencies.len() as f64 * p).ceil() as usize).clamp(1, self.latencies.len()) - 1;
        self.latencies[i].as_secs_f64() * 1000.0
    }

    fn row(&mut self, tables: usize, path: &str, ceiling: f64) {
        let (p50, p99) = (self.percentile(0.50), self.percentile(0.99));
        let db_cpu = match self.db_cpu {
            Some(db) => format!(" {:>13.0}", db.as_secs_f64() * 1e6 / self.appends as f64),
            None => String::new(),
        };
        println!(
            "{tables:>6}  {path:<16} {:>10.0} {:>9.2} {:>9.2} {:>13.3} {:>13.0} {:>10.0} {:>8.2}x{db_cpu}",
            self.rate(),
            p50,
            p99,
            self.syncs as f64 / self.appends as f64,
            self.cpu.as_secs_f64() * 1e6 / self.appends as f64,
            ceiling,
            self.rate() / ceiling
        );
    }
}

fn new_store(sample: &Sample, tables: usize) -> (tempfile::TempDir, SledStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    for t in 0..tables {
        create(&store, &format!("t{t}"), &sample.header, &sample.opened_by, None).unwrap();
    }
    (dir, store)
}

/// Every table appends `per_table` actions through the library, one thread each.
fn library(sample: &Sample, tables: usize, per_table: usize) -> Run {
    let (_dir, store) = new_store(sample, tables);
    let syncs = store.syncs();
    let latencies = Mutex::new(Vec::new());
    let (start, cpu) = (Instant::now(), cpu_time());
    std::thread::scope(|scope| {
        for t in 0..tables {
            let (store, latencies) = (&store, &latencies);
            scope.spawn(move || {
                let mut recorder = Recorder::load(store, &format!("t{t}")).unwrap();
                let mut mine = Vec::with_capacity(per_table);
                for i in 0..per_table {
                    let sub = sample.action(i);
                    let t0 = Instant::now();
                    recorder.append(&sub, Some(i as u64 + 1)).unwrap();
                    mine.push(t0.elapsed());
                }
                latencies.lock().unwrap().extend(mine);
            });
        }
    });
    let (elapsed, cpu) = (start.elapsed(), cpu_time() - cpu);
    Run {
        appends: tables * per_table,
        elapsed,
        latencies: latencies.into_inner().unwrap(),
        syncs: store.syncs() - syncs,
        cpu,
        subscribers_cpu: Duration::ZERO,
        db_cpu: None,
        tables_cpu: Duration::ZERO,
    }
}

/// The same through `arbiter serve` on loopback: one HTTP client per table;
/// with `subscribers` live streams of table t0 open throughout, each read
/// by its own client, and every event checked delivered to each.
fn api(sample: &Sample, tables: usize, per_table: usize, subscribers: usize) -> Run {
    let (_dir, store) = new_store(sample, tables);
    api_on(vec![Box::new(store)], sample, tables, per_table, subscribers)
}

/// `api` with one server on each of `stores` (the first holds the games;
/// more than one: several servers on one database), table t's client on
/// server t mod the number of servers.
fn api_on(stores: Vec<Box<dyn Store>>, sample: &Sample, tables: usize, per_table: usize, subscribers: usize) -> Run {
    let tokens = issue_tokens(stores[0].as_ref(), sample, tables);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let (mut urls, mut servers, mut serving) = (Vec::new(), Vec::new(), Vec::new());
    for store in stores {
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        urls.push(format!("http://{}", listener.local_addr().unwrap()));
        let signer = arbiter::store::checkpoints::signer(store.as_ref(), None, None).unwrap();
        let server = Server::with_limits(store, signer, arbiter::limits::MAX_PENDING_APPENDS, Default::default());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        serving.push((
            stop,
            runtime.spawn(server::serve(listener, server.clone(), async {
                let _ = stopped.await;
            })),
        ));
        servers.push(server);
    }
    let watchers = Watchers::open(&urls[0], "t0", subscribers);
    let watchers_cpu = watchers.cpu();
    let syncs_now = || servers.iter().map(|s| s.store.syncs()).sum::<u64>();
    let syncs = syncs_now();
    let requests = requests_for(&tokens, sample, per_table);
    let (start, cpu, db_cpu, tables_cpu) = (Instant::now(), cpu_time(), cluster_cpu(), thread_cpu_time());
    let switched = switches();
    let latencies = send_all(&urls, requests);
    let (elapsed, tables_cpu) = (start.elapsed(), thread_cpu_time() - tables_cpu);
    let syncs = syncs_now() - syncs;
    // The CPU counted is until every subscriber has every event: the
    // fan-out's last send can come after the last append.
    watchers.all_saw(per_table as u64);
    let (cpu, subscribers_cpu) = (cpu_time() - cpu, watchers.cpu() - watchers_cpu);
    if db_cpu.is_some() {
        let ((waited, preempted), appends) = (switches(), (tables * per_table) as f64);
        let (waited, preempted) = ((waited - switched.0) as f64 / appends, (preempted - switched.1) as f64 / appends);
        println!(
            "{:>6}  {:<16} this turn, per append in this process: {waited:.1} threads waited, {preempted:.1} preempted",
            "", ""
        );
    }
    for (stop, serving) in serving {
        let _ = stop.send(());
        runtime.block_on(serving).unwrap().unwrap();
    }
    let db_cpu = db_cpu.zip(cluster_cpu()).map(|(before, after)| after.saturating_sub(before));
    Run { appends: tables * per_table, elapsed, latencies, syncs, cpu, subscribers_cpu, db_cpu, tables_cpu }
}

/// Each table's seats and judges get their tokens, as an organiser would
/// issue them: with their expiry (the default lifetime). Table t's, by actor.
fn issue_tokens(store: &dyn Store, sample: &Sample, tables: usize) -> Vec<std::collections::HashMap<String, String>> {
    let issue = |grant: &Grant| {
        let now = chrono::Utc::now();
        access::issue_at(store, grant, now, access::expiry(grant, None, now).unwrap()).unwrap().token
    };
    let mut tokens = Vec::new();
    for t in 0..tables {
        let game = format!("t{t}");
        let mut mine = std::collections::HashMap::new();
        for seat in &sample.header.seats {
            let grant = Grant::Seat { game: game.clone(), seat: seat.id.clone() };
            mine.insert(seat.id.clone(), issue(&grant));
        }
        for judge in &sample.header.judges {
            let grant = Grant::Judge { game: game.clone(), judge: judge.clone() };
            mine.insert(judge.clone(), issue(&grant));
        }
        tokens.push(mine);
    }
    tokens
}

/// Each table's requests, made before the clock starts: what is timed is
/// the server's work, not the load generator's JSON.
fn requests_for(
    tokens: &[std::collections::HashMap<String, String>],
    sample: &Sample,
    per_table: usize,
) -> Vec<Vec<Vec<u8>>> {
    tokens
        .iter()
        .enumerate()
        .map(|(t, tokens)| {
            (0..per_table)
                .map(|i| {
                    let sub = sample.action(i);
                    let body = json!({"actor": sub.actor, "action": sub.action, "expect_seq": i + 1}).to_string();
                    format!(
                        "POST /api/games/t{t}/events HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {}\r\n\
                         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                        tokens[&sub.actor],
                        body.len()
                    )
                    .into_bytes()
                })
                .collect()
        })
        .collect()
}

/// Table t's requests sent in order on a keep-alive connection of its own
/// to server t mod the number of `urls`, every table at once, the clients
/// on one thread; each answer must be 201. Every request's latency.
fn send_all(urls: &[String], requests: Vec<Vec<Vec<u8>>>) -> Vec<Duration> {
    let clients = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    clients.block_on(async {
        let tables: Vec<_> = requests
            .into_iter()
            .enumerate()
            .map(|(t, requests)| {
                let addr = urls[t % urls.len()].strip_prefix("http://").unwrap().to_string();
                tokio::spawn(async move {
                    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
                    stream.set_nodelay(true).unwrap();
                    let mut mine = Vec::with_capacity(requests.len());
                    for (i, request) in requests.iter().enumerate() {
                        let t0 = Instant::now();
                        let (status, answer) = exchange(&stream, request).await;
                        mine.push(t0.elapsed());
                        assert_eq!(status, 201, "table {t} seq {}: {}", i + 1, String::from_utf8_lossy(&answer));
                    }
                    mine
                })
            })
            .collect();
        let mut all = Vec::new();
        for table in tables {
            all.extend(table.await.unwrap());
        }
        all
    })
}

/// One `arbiter serve` process on the database at `store`, held to `cap`
/// percent of one core by a cgroup of its own (cgroup v1's cpu controller:
/// `cpu.cfs_quota_us`), standing in for a machine of its own. Killed, and
/// its cgroup removed, when dropped.
struct Capped {
    child: std::process::Child,
    cgroup: std::path::PathBuf,
    url: String,
}

impl Capped {
    fn start(store: &str, cap: u32) -> Result<Capped, String> {
        use std::io::BufRead;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .args(["serve", "--store", store, "--listen", "127.0.0.1:0"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start arbiter serve: {e}"))?;
        let cgroup = std::path::PathBuf::from(format!("/sys/fs/cgroup/cpu/arbiter-bench-{}", child.id()));
        let capped = (|| {
            std::fs::create_dir(&cgroup)?;
            // A period of 10 ms: held back for at most that long at a time.
            std::fs::write(cgroup.join("cpu.cfs_period_us"), "10000")?;
            std::fs::write(cgroup.join("cpu.cfs_quota_us"), (cap * 100).to_string())?;
            // Every thread of the process, and those it starts later.
            std::fs::write(cgroup.join("cgroup.procs"), child.id().to_string())
        })();
        let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let url = lines.find_map(|l| l.ok()?.strip_prefix("listening on ").map(str::to_string));
        // What it prints later is read and dropped, so that it never blocks.
        std::thread::spawn(move || lines.for_each(drop));
        let server = Capped { child, cgroup, url: url.unwrap_or_default() };
        capped.map_err(|e| format!("cannot hold a process to a share of a core ({}): {e}", server.cgroup.display()))?;
        match server.url.is_empty() {
            true => Err("arbiter serve did not say where it listens".into()),
            false => Ok(server),
        }
    }

    /// The process's peak resident memory so far, in KiB (`VmHWM`).
    fn peak_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        let line = status.lines().find_map(|l| l.strip_prefix("VmHWM:")).unwrap_or("");
        line.trim().trim_end_matches(" kB").trim().parse().unwrap_or(0)
    }

    /// The process's CPU time so far, user + system.
    fn cpu(&self) -> Duration {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap_or_default();
        let after = stat.rfind(')').map_or("", |i| &stat[i + 2..]);
        let words: Vec<u64> = after.split(' ').skip(11).take(2).filter_map(|w| w.parse().ok()).collect();
        // SAFETY: sysconf reads a constant of the system.
        let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
        Duration::from_secs_f64(words.iter().sum::<u64>() as f64 / per_second)
    }
}

impl Drop for Capped {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir(&self.cgroup);
    }
}

/// Whether a second server adds appends on a database with spare cores,
/// shown on one 2-core machine: each server is a process of its own held
/// to `cap` percent of one core (`Capped`), so that one server is what
/// limits the rate and the database and the clients have cores to spare.
/// `tables` tables of `per_table` appends through one server, then through
/// two (table t's client on server t mod 2), each on a fresh database, in
/// `turns` turns; each turn's rate with two beside the rate with one.
fn scale_out(admin: &str, sample: &Sample, tables: usize, per_table: usize, cap: u32, turns: usize) {
    *POSTMASTER.lock().unwrap() = postmaster(admin);
    println!(
        "scale-out: {tables} tables of {per_table} appends through 1 and 2 `arbiter serve` processes on one \
         database, each held to {cap}% of one core, in {turns} turns"
    );
    println!(
        "{:>7}  {:>10} {:>9} {:>9} {:>18} {:>14} {:>13} {:>16}",
        "servers",
        "appends/s",
        "p50 ms",
        "p99 ms",
        "server cpu/append",
        "of their caps",
        "db us/append",
        "peak RSS/server"
    );
    let run = |servers: usize| -> Result<f64, String> {
        let db = Scratch::new(admin, "arbiter_bench_scale_out");
        let tokens = {
            let store = arbiter::store::PostgresStore::open(&db.url).unwrap();
            for t in 0..tables {
                create(&store, &format!("t{t}"), &sample.header, &sample.opened_by, None).unwrap();
            }
            issue_tokens(&store, sample, tables)
        };
        let capped = (0..servers).map(|_| Capped::start(&db.url, cap)).collect::<Result<Vec<_>, _>>()?;
        let urls: Vec<String> = capped.iter().map(|c| c.url.clone()).collect();
        let requests = requests_for(&tokens, sample, per_table);
        let server_cpu = || capped.iter().map(Capped::cpu).sum::<Duration>();
        let (start, cpu, db_cpu) = (Instant::now(), server_cpu(), cluster_cpu());
        let latencies = send_all(&urls, requests);
        let (elapsed, cpu) = (start.elapsed(), server_cpu() - cpu);
        let peak_rss_mib = capped.iter().map(Capped::peak_rss_kib).max().unwrap_or(0) / 1024;
        let db_cpu = db_cpu.zip(cluster_cpu()).map(|(before, after)| after.saturating_sub(before));
        let mut run = Run {
            appends: tables * per_table,
            elapsed,
            latencies,
            syncs: 0,
            cpu,
            subscribers_cpu: Duration::ZERO,
            db_cpu,
            tables_cpu: Duration::ZERO,
        };
        let (appends, p50, p99) = (run.appends as f64, run.percentile(0.5), run.percentile(0.99));
        let per_append = |d: Duration| d.as_secs_f64() * 1e6 / appends;
        let used = cpu.as_secs_f64() / (elapsed.as_secs_f64() * servers as f64 * f64::from(cap) / 100.0);
        println!(
            "{servers:>7}  {:>10.0} {:>9.2} {:>9.2} {:>15.0} us {:>13.0}% {:>13} {peak_rss_mib:>12} MiB",
            run.rate(),
            p50,
            p99,
            per_append(cpu),
            used * 100.0,
            run.db_cpu.map_or("-".into(), |d| format!("{:.0}", per_append(d)))
        );
        Ok(run.rate())
    };
    let mut ratios = Vec::new();
    for _ in 0..turns {
        match (run(1), run(2)) {
            (Ok(one), Ok(two)) => ratios.push(two / one),
            (Err(why), _) | (_, Err(why)) => return println!("({why}: no scale-out rows)"),
        }
    }
    let each: Vec<String> = ratios.iter().map(|r| format!("{r:.2}x")).collect();
    println!("two servers beside one, each turn: {}", each.join(", "));
}

/// The postmaster of the PostgreSQL cluster the rows run on, when it runs
/// on this machine (`on_postgres` sets it): its processes' CPU is shown
/// beside arbiter's, since both share the cores.
static POSTMASTER: Mutex<Option<u32>> = Mutex::new(None);

/// The cluster's CPU time so far, user + system: the postmaster's, its
/// children's that have ended (which it has waited for) and those running.
fn cluster_cpu() -> Option<Duration> {
    let postmaster = (*POSTMASTER.lock().unwrap())?;
    // After the command's name (in parentheses, which may hold spaces):
    // state, ppid, ... utime (14th field), stime, cutime, cstime.
    let fields = |pid: &str| -> Option<Vec<u64>> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let after = &stat[stat.rfind(')')? + 2..];
        let words: Vec<&str> = after.split(' ').collect();
        let number = |i: usize| words.get(i).and_then(|w| w.parse::<u64>().ok());
        Some(vec![number(1)?, number(11)?, number(12)?, number(13)?, number(14)?])
    };
    let own = fields(&postmaster.to_string())?;
    let mut ticks = own[1] + own[2] + own[3] + own[4];
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().filter(|n| n.bytes().all(|b| b.is_ascii_digit())) else { continue };
        if let Some(f) = fields(pid).filter(|f| f[0] == u64::from(postmaster)) {
            ticks += f[1] + f[2];
        }
    }
    // SAFETY: sysconf reads a constant of the system.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Some(Duration::from_secs_f64(ticks as f64 / per_second as f64))
}

/// One request on a table's keep-alive connection: `request` written
/// whole, then the answer read whole by its Content-Length; the status and
/// the body. The tables' clients are tasks on one thread of their own, as
/// a load generator such as wrk drives its connections from an event loop:
/// with a general client (ureq) on a thread per table, the clients took
/// about a quarter of the process's CPU at 64 tables (two writes and a probe
/// of the connection per request, and a thread woken per answer), which
/// measured the load generator more than the server.
async fn exchange(stream: &tokio::net::TcpStream, request: &[u8]) -> (u16, Vec<u8>) {
    let mut written = 0;
    while written < request.len() {
        stream.writable().await.unwrap();
        match stream.try_write(&request[written..]) {
            Ok(n) => written += n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(e) => panic!("a client's write failed: {e}"),
        }
    }
    let (mut answer, mut buf) = (Vec::new(), [0u8; 16 * 1024]);
    loop {
        if let Some(end) = answer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = std::str::from_utf8(&answer[..end]).expect("an ASCII head");
            let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("a status line");
            let length = head
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length").then(|| value.trim().parse::<usize>().ok())?
                })
                .expect("every answer of the API has a Content-Length");
            if answer.len() >= end + 4 + length {
                return (status, answer[end + 4..end + 4 + length].to_vec());
            }
        }
        stream.readable().await.unwrap();
        match stream.try_read(&mut buf) {
            Ok(0) => panic!("the server closed the connection"),
            Ok(n) => answer.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(e) => panic!("a client's read failed: {e}"),
        }
    }
}

/// Live subscribers of one game, each a connection read by a task of a
/// runtime of their own (one worker thread, named `subscribers`: the
/// clients, not the server). They stand for browsers on other machines, so
/// each does as little as it can: one read per wake-up (a short read
/// clears the readiness, with no read that would block after it) into one
/// buffer, in which only the last message's id is looked for.
struct Watchers {
    runtime: tokio::runtime::Runtime,
    /// The highest seq each has received.
    seen: Vec<std::sync::Arc<std::sync::atomic::AtomicU64>>,
}

/// The seq of the last whole `id: SEQ\n` line in `bytes`. A line starts
/// after a newline (the head's, a chunk size's or the message before's),
/// and an event's data has none (canonical JSON escapes them), so text
/// such as `paid: 5` in an event is never taken for an id.
fn last_id(bytes: &[u8]) -> Option<u64> {
    let mut end = bytes.len();
    while let Some(at) = bytes[..end].windows(5).rposition(|w| w == b"\nid: ") {
        let digits = &bytes[at + 5..];
        if let Some(stop) = digits.iter().position(|b| *b == b'\n') {
            return std::str::from_utf8(&digits[..stop]).ok()?.parse().ok();
        }
        end = at;
    }
    None
}

impl Watchers {
    /// `n` subscribers from seq 0, returned once each has received event 0.
    fn open(url: &str, game: &str, n: usize) -> Watchers {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("subscribers")
            .enable_all()
            .build()
            .unwrap();
        let addr = url.strip_prefix("http://").unwrap().to_string();
        let seen: Vec<_> = (0..n).map(|_| std::sync::Arc::new(std::sync::atomic::AtomicU64::new(u64::MAX))).collect();
        for seen in &seen {
            let (addr, game, seen) = (addr.clone(), game.to_string(), seen.clone());
            runtime.spawn(async move {
                let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
                let request = format!("GET /api/games/{game}/stream HTTP/1.1\r\nHost: bench\r\n\r\n");
                stream.writable().await.unwrap();
                stream.try_write(request.as_bytes()).unwrap();
                // `tail`: the end of what was read before, for an id line
                // cut in two by a read.
                let (mut buf, mut tail) = (vec![0u8; 256 * 1024], Vec::with_capacity(64));
                loop {
                    let n = std::future::poll_fn(|cx| {
                        let mut read = tokio::io::ReadBuf::new(&mut buf);
                        tokio::io::AsyncRead::poll_read(std::pin::Pin::new(&mut stream), cx, &mut read)
                            .map_ok(|()| read.filled().len())
                    })
                    .await
                    .unwrap_or_else(|e| panic!("a subscriber failed: {e}"));
                    if n == 0 {
                        return;
                    }
                    let read = &buf[..n];
                    // An id wholly in this read is later than one cut in two.
                    let last = last_id(read).or_else(|| {
                        let mut across = tail.clone();
                        across.extend_from_slice(&read[..n.min(32)]);
                        last_id(&across)
                    });
                    if let Some(seq) = last {
                        seen.store(seq, std::sync::atomic::Ordering::SeqCst);
                    }
                    tail.extend_from_slice(&read[n.saturating_sub(32)..]);
                    tail.drain(..tail.len().saturating_sub(32));
                }
            });
        }
        let watchers = Watchers { runtime, seen };
        watchers.all_saw(0);
        watchers
    }

    /// CPU time of the subscribers' client thread so far.
    fn cpu(&self) -> Duration {
        self.runtime.block_on(self.runtime.spawn(async { thread_cpu_time() })).unwrap()
    }

    /// Waits until each subscriber has received `seq`.
    fn all_saw(&self, seq: u64) {
        let began = Instant::now();
        let _clients = &self.runtime;
        // u64::MAX (nothing yet) + 1 wraps to 0.
        while self.seen.iter().any(|s| s.load(std::sync::atomic::Ordering::SeqCst).wrapping_add(1) < seq + 1) {
            assert!(began.elapsed() < Duration::from_secs(120), "a subscriber did not receive seq {seq}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// The disk's ceiling for `events` durable events of `bytes` bytes each:
/// sled insert, then flush + fdatasync of sled's log once per `per_sync`
/// events, on one thread, with nothing of arbiter's in the way.
fn ceiling(events: usize, per_sync: usize, bytes: usize) -> f64 {
    sled_alone(events, per_sync, bytes, 1, Keys::EventOnly)
}

/// What sled writes for each event.
#[derive(Clone, Copy, PartialEq)]
enum Keys {
    /// One key, the event: the issue's ceiling.
    EventOnly,
    /// arbiter's keys before layout 3 (layouts 1 and 2): the event in its
    /// game's tree, and in the log's tree its leaf (game and seq) and its
    /// position, and every 16th event a stored subtree (32 bytes).
    Arbiters,
    /// Layout 3's keys (see `LAYOUT` in `src/store/sled/keys.rs`; layout 4 keeps a game's events
    /// 8 to a key, the leaves still 64): each game's
    /// events kept 64 to a key with their places in the log (written when
    /// the 64th arrives), the log's leaves 64 to a key with a stored
    /// subtree, and what is not yet in sled made durable by a journal (one
    /// write over its space + fdatasync per sync, records hashed as
    /// arbiter's are); when
    /// the journal passes 1 MiB, the keys not yet full are written as they
    /// are, then sled's own flush + fdatasync, then the journal is emptied.
    SixtyFourToAKey,
}

/// `ceiling` with `keys` written per event, the events spread over
/// `games` games in turn (a tree each).
fn sled_alone(events: usize, per_sync: usize, bytes: usize, games: usize, keys: Keys) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let db = sled::Config::new().path(dir.path()).segment_size(8 << 20).open().unwrap();
    let games: Vec<(String, sled::Tree)> =
        (0..games).map(|t| (format!("t{t}"), db.open_tree(format!("game/t{t}")).unwrap())).collect();
    let log_tree = db.open_tree("log").unwrap();
    let log = std::fs::File::open(dir.path().join("db")).unwrap();
    let value = vec![b'x'; bytes];
    if keys == Keys::SixtyFourToAKey {
        return sixty_four_to_a_key(&db, &log, dir.path(), &games, &log_tree, &value, events, per_sync);
    }
    let start = Instant::now();
    for i in 0..events {
        let ((game, tree), seq) = (&games[i % games.len()], (i / games.len()) as u64);
        if keys == Keys::Arbiters {
            let leaf = [&seq.to_be_bytes()[..], game.as_bytes()].concat();
            log_tree.insert([&b"l"[..], &(i as u64).to_be_bytes()].concat(), leaf).unwrap();
            let position = [&b"p"[..], game.as_bytes(), &[0], &seq.to_be_bytes()].concat();
            log_tree.insert(position, &(i as u64).to_be_bytes()).unwrap();
        }
        tree.insert(seq.to_be_bytes(), value.as_slice()).unwrap();
        if keys == Keys::Arbiters && (i + 1) % 16 == 0 {
            log_tree.insert([&b"n"[..], &[4], &((i as u64) >> 4).to_be_bytes()].concat(), &[0u8; 32]).unwrap();
        }
        if (i + 1) % per_sync == 0 || i + 1 == events {
            db.flush().unwrap();
            log.sync_data().unwrap();
        }
    }
    events as f64 / start.elapsed().as_secs_f64()
}

/// `sled_alone` with `Keys::SixtyFourToAKey`.
#[allow(clippy::too_many_arguments)]
fn sixty_four_to_a_key(
    db: &sled::Db,
    log: &std::fs::File,
    dir: &std::path::Path,
    games: &[(String, sled::Tree)],
    log_tree: &sled::Tree,
    value: &[u8],
    events: usize,
    per_sync: usize,
) -> f64 {
    use std::os::unix::fs::FileExt;
    const TO_A_KEY: usize = 64;
    // As arbiter's journal is: made 1 MiB long with zeros first, then
    // written over from its start, each write ending with four zeros;
    // emptied by starting again at its start.
    let journal = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .read(true)
        .write(true)
        .open(dir.join("journal"))
        .unwrap();
    journal.write_all_at(&vec![0; 1 << 20], 0).unwrap();
    journal.sync_data().unwrap();
    let (mut records, mut journaled) = (Vec::new(), 0usize);
    // Each game's events not yet in a full key, each with its place in the
    // log (the layout keeps positions in the game's keys, not apart).
    let mut kept: Vec<Vec<u8>> = vec![Vec::new(); games.len()];
    let mut leaves = Vec::new();
    let start = Instant::now();
    for i in 0..events {
        let (g, seq) = (i % games.len(), i / games.len());
        let (game, tree) = &games[g];
        // A record as arbiter's journal writes one: length, bytes, BLAKE3.
        records.extend_from_slice(&(value.len() as u32).to_le_bytes());
        records.extend_from_slice(value);
        records.extend_from_slice(blake3::hash(value).as_bytes());
        kept[g].extend_from_slice(&(i as u64).to_be_bytes());
        kept[g].extend_from_slice(&(value.len() as u32).to_le_bytes());
        kept[g].extend_from_slice(value);
        leaves.extend_from_slice(&(seq as u64).to_be_bytes());
        leaves.extend_from_slice(game.as_bytes());
        if (seq + 1) % TO_A_KEY == 0 {
            let first = (seq + 1 - TO_A_KEY) as u64;
            tree.insert(first.to_be_bytes(), std::mem::take(&mut kept[g])).unwrap();
        }
        if (i + 1) % TO_A_KEY == 0 {
            let first = (i + 1 - TO_A_KEY) as u64;
            log_tree.insert([&b"l"[..], &first.to_be_bytes()].concat(), std::mem::take(&mut leaves)).unwrap();
            log_tree.insert([&b"n"[..], &[6], &(first >> 6).to_be_bytes()].concat(), &[0u8; 32]).unwrap();
        }
        if (i + 1) % per_sync == 0 || i + 1 == events {
            records.extend_from_slice(&[0; 4]);
            journal.write_all_at(&records, journaled as u64).unwrap();
            journaled += records.len() - 4;
            records.clear();
            journal.sync_data().unwrap();
            if journaled > 1 << 20 {
                // Before the journal is emptied, sled gets what only the
                // journal held: each key not yet full, written as it is
                // (the full key later writes over it).
                for (g, (_, tree)) in games.iter().enumerate() {
                    if !kept[g].is_empty() {
                        let first = ((i / games.len()) / TO_A_KEY * TO_A_KEY) as u64;
                        tree.insert(first.to_be_bytes(), kept[g].as_slice()).unwrap();
                    }
                }
                if !leaves.is_empty() {
                    let first = (i / TO_A_KEY * TO_A_KEY) as u64;
                    log_tree.insert([&b"l"[..], &first.to_be_bytes()].concat(), leaves.as_slice()).unwrap();
                }
                db.flush().unwrap();
                log.sync_data().unwrap();
                journaled = 0;
            }
        }
    }
    events as f64 / start.elapsed().as_secs_f64()
}

/// A database of its own for one row, on the cluster of `admin` (a URL),
/// dropped after it (psql, as the tests make theirs).
struct Scratch {
    admin: String,
    name: String,
    url: String,
}

impl Scratch {
    fn new(admin: &str, name: &str) -> Scratch {
        let psql = |sql: &str| {
            let out = std::process::Command::new("psql").args([admin, "-X", "-q", "-c", sql]).output().unwrap();
            assert!(out.status.success(), "psql {sql}: {}", String::from_utf8_lossy(&out.stderr));
        };
        psql(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
        psql(&format!("CREATE DATABASE {name}"));
        let base = admin.rsplit_once('/').expect("a URL with a database").0;
        Scratch { admin: admin.to_string(), name: name.to_string(), url: format!("{base}/{name}") }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::process::Command::new("psql")
            .args([&self.admin, "-X", "-q", "-c", &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name)])
            .output();
    }
}

/// PostgreSQL's ceiling, measured with pgbench: `clients` connections each
/// inserting one `bytes`-byte row per transaction for 5 seconds, with the
/// database's commit settings (synchronous_commit on, as arbiter uses it).
fn pgbench(admin: &str, clients: usize, bytes: usize) -> f64 {
    let db = Scratch::new(admin, "arbiter_bench_raw");
    let out = std::process::Command::new("psql")
        .args([&db.url, "-X", "-q", "-c", "CREATE TABLE raw (n bigserial PRIMARY KEY, v bytea NOT NULL)"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let script = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(script.path(), format!("INSERT INTO raw (v) VALUES (convert_to(repeat('x', {bytes}), 'UTF8'));\n"))
        .unwrap();
    let (db_cpu, client_cpu) = (cluster_cpu(), children_cpu());
    let out = std::process::Command::new("pgbench")
        .args(["-n", "-T", "5", "-c", &clients.to_string(), "-j", &clients.min(2).to_string(), "-f"])
        .arg(script.path())
        .arg(&db.url)
        .output()
        .unwrap();
    let (db_cpu, client_cpu) =
        (db_cpu.zip(cluster_cpu()).map(|(a, b)| b.saturating_sub(a)), children_cpu() - client_cpu);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "pgbench: {text}{}", String::from_utf8_lossy(&out.stderr));
    let inserts: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("number of transactions actually processed: ")?.trim().parse().ok())
        .unwrap_or_else(|| panic!("pgbench said no count: {text}"));
    if let Some(db_cpu) = db_cpu {
        let mut spent = PGBENCH_CPU.lock().unwrap();
        *spent = (spent.0 + inserts, spent.1 + db_cpu, spent.2 + client_cpu);
    }
    text.lines()
        .find_map(|l| l.strip_prefix("tps = ")?.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("pgbench said no tps: {text}"))
}

/// pgbench's inserts since the last row, and the CPU they took: the
/// cluster's and pgbench's own (`pgbench_cpu` says it per insert).
static PGBENCH_CPU: Mutex<(u64, Duration, Duration)> = Mutex::new((0, Duration::ZERO, Duration::ZERO));

/// The CPU per insert of pgbench's turns since the last call, in the
/// database and in pgbench, as a line under a row; None if the cluster's
/// CPU is not seen from here.
fn pgbench_cpu() -> Option<String> {
    let (inserts, db, client) = std::mem::take(&mut *PGBENCH_CPU.lock().unwrap());
    let per = |d: Duration| d.as_secs_f64() * 1e6 / inserts.max(1) as f64;
    (inserts > 0).then(|| {
        format!("pgbench's CPU per insert: {:.0} us in the database, {:.0} us in pgbench", per(db), per(client))
    })
}

/// The CPU time of this process's children that have ended (pgbench).
fn children_cpu() -> Duration {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// `tools/bench-serve --store postgres://...`: the API on PostgreSQL, with
/// one and with two servers on one database, beside sled's one server,
/// each row in turns with its ceiling, pgbench's raw inserts (pgbench, the
/// row, pgbench, the row...: the machine's drift weighs on both alike),
/// for 1, 8, 64 and 256 tables (`tables=N`: those only; `servers=N`: only
/// the rows on PostgreSQL with N servers, no sled row). The cluster's own
/// CPU per append is shown when it runs on this machine. Then, if the
/// cluster loads pg_stat_statements, the statements one server's appends
/// ran at the largest count, with their calls per append and time.
fn on_postgres(
    admin: &str,
    sample: &Sample,
    per_table: usize,
    bytes: usize,
    counts: &[usize],
    turns: usize,
    servers: &[usize],
) {
    *POSTMASTER.lock().unwrap() = postmaster(admin);
    println!("through the API, {per_table} appends per table; ceiling: pgbench, one INSERT of a {bytes}-byte row");
    println!("and COMMIT per transaction from as many clients as tables (synchronous_commit on, as arbiter uses it),");
    println!("measured in {turns} turns with each row");
    let db_column = match *POSTMASTER.lock().unwrap() {
        Some(_) => format!(" {:>13}", "db us/append"),
        None => String::new(),
    };
    println!(
        "{:>6}  {:<16} {:>10} {:>9} {:>9} {:>13} {:>13} {:>10} {:>9}{db_column}",
        "tables", "store", "appends/s", "p50 ms", "p99 ms", "syncs/append", "cpu us/append", "ceiling/s", "x ceiling"
    );
    let on = |tables: usize, servers: usize| {
        let db = Scratch::new(admin, "arbiter_bench_serve");
        let stores: Vec<Box<dyn Store>> = (0..servers)
            .map(|_| Box::new(arbiter::store::PostgresStore::open(&db.url).unwrap()) as Box<dyn Store>)
            .collect();
        for t in 0..tables {
            create(stores[0].as_ref(), &format!("t{t}"), &sample.header, &sample.opened_by, None).unwrap();
        }
        (db, stores)
    };
    for &tables in counts {
        let ceiling = || pgbench(admin, tables, bytes);
        let pgbench_line = || {
            if let Some(line) = pgbench_cpu() {
                println!("{:>6}  {:<16} {line}", "", "");
            }
        };
        if servers.is_empty() {
            Run::in_turns(tables, "sled, 1 server", turns, ceiling, || api(sample, tables, per_table, 0));
            pgbench_line();
        }
        for servers in if servers.is_empty() { &[1, 2][..] } else { servers } {
            let label = format!("postgres, {servers} srv");
            Run::in_turns(tables, &label, turns, ceiling, || {
                let (_db, stores) = on(tables, *servers);
                api_on(stores, sample, tables, per_table, 0)
            });
            pgbench_line();
        }
    }
    println!("peak RSS of this process (servers, clients, sled rows): {} MiB", peak_rss_kib() / 1024);
    let Some(&tables) = counts.iter().max() else { return };
    let psql = |url: &str, sql: &str| {
        let out = std::process::Command::new("psql")
            .args([url, "-X", "-q", "-A", "-t", "-F", "\t", "-c", sql])
            .output()
            .unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let (_, preloaded) = psql(admin, "SHOW shared_preload_libraries");
    if !preloaded.contains("pg_stat_statements") {
        println!("(the cluster does not load pg_stat_statements: no account of the statements; see tools/pg-cluster)");
        return;
    }
    let (made, _) = psql(admin, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    assert!(made, "CREATE EXTENSION pg_stat_statements");
    let (db, stores) = on(tables, 1);
    psql(admin, "SELECT pg_stat_statements_reset()");
    let run = api_on(stores, sample, tables, per_table, 0);
    let (_, rows) = psql(
        admin,
        &format!(
            "SELECT s.calls, round(s.total_exec_time::numeric, 1), regexp_replace(s.query, '\\s+', ' ', 'g') \
             FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid \
             WHERE d.datname = '{}' ORDER BY s.calls DESC, s.total_exec_time DESC",
            db.name
        ),
    );
    println!();
    println!(
        "statements of one server's {} appends at {tables} tables ({:.0}/s; the tokens' issue before the clock included),",
        run.appends,
        run.rate()
    );
    println!("from pg_stat_statements: calls, calls per append, total ms in the database, the statement");
    for line in rows.lines() {
        let mut cells = line.splitn(3, '\t');
        let (Some(calls), Some(ms), Some(query)) = (cells.next(), cells.next(), cells.next()) else { continue };
        let calls: f64 = calls.parse().unwrap_or(0.0);
        let query: String = query.chars().take(150).collect();
        println!("{calls:>8.0} {:>8.3} {ms:>10} {query}", calls / run.appends as f64);
    }
}

/// The pid of the postmaster of the cluster at `admin`, if it runs on this
/// machine and its data directory can be read here.
fn postmaster(admin: &str) -> Option<u32> {
    let out = std::process::Command::new("psql").args([admin, "-X", "-A", "-t", "-c", "SHOW data_directory"]).output();
    let dir = String::from_utf8(out.ok()?.stdout).ok()?;
    let pid = std::fs::read_to_string(std::path::Path::new(dir.trim()).join("postmaster.pid")).ok()?;
    pid.lines().next()?.trim().parse().ok()
}

/// The peak resident memory of this process so far, in KiB.
fn peak_rss_kib() -> u64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    usage.ru_maxrss as u64
}

/// `tools/bench-serve verify-all --store postgres://...`: `verify --all`
/// (every game, then the log against its newest checkpoint, as the CLI
/// runs it) of one store of 32 games of 1,000 events, on sled and on
/// PostgreSQL in turns, and on PostgreSQL with the log read a leaf at a
/// time (four round trips a leaf, as before it was read in batches).
fn verify_all_side_by_side(admin: &str, sample: &Sample) {
    const GAMES: usize = 32;
    const PER_GAME: usize = 1_000;
    let (_dir, sled) = new_store(sample, GAMES);
    std::thread::scope(|s| {
        for t in 0..GAMES {
            let sled = &sled;
            s.spawn(move || {
                let mut recorder = Recorder::load(sled, &format!("t{t}")).unwrap();
                for i in 0..PER_GAME - 1 {
                    recorder.append(&sample.action(i), None).unwrap();
                }
            });
        }
    });
    arbiter::store::checkpoints::signer(&sled, None, None).unwrap();
    let db = Scratch::new(admin, "arbiter_bench_verify");
    let pg = arbiter::store::PostgresStore::open(&db.url).unwrap();
    let copied = arbiter::copy::copy(&sled, &pg, None, |_| {}).unwrap();
    println!(
        "verify --all of {} games, {} events, in 3 turns (wall and this process's CPU)",
        copied.games, copied.size
    );
    println!("{:<48} {:>10} {:>10} {:>12}", "store", "wall s", "cpu s", "x sled wall");
    let time = |f: &dyn Fn()| {
        let (start, cpu) = (Instant::now(), cpu_time());
        f();
        (start.elapsed(), cpu_time() - cpu)
    };
    let all = |store: &dyn Store| {
        for game in store.games().unwrap() {
            arbiter::ops::verify_game(store, &game, None).unwrap();
        }
        arbiter::store::checkpoints::verify_log(store).unwrap();
    };
    // The log as it was read before batches: each leaf, its event, its
    // stored hash and its position, one call (a round trip on PostgreSQL) each.
    let per_leaf = |store: &dyn Store| {
        for game in store.games().unwrap() {
            arbiter::ops::verify_game(store, &game, None).unwrap();
        }
        for index in 0..store.log_size().unwrap() {
            let (game, seq) = store.log_leaf(index).unwrap().unwrap();
            store.get(&game, seq).unwrap().unwrap();
            store.log_node(0, index).unwrap();
            store.log_position(&game, seq).unwrap();
        }
    };
    let mut sums = [(Duration::ZERO, Duration::ZERO); 2];
    for _ in 0..3 {
        for (i, took) in [time(&|| all(&sled)), time(&|| all(&pg))].into_iter().enumerate() {
            sums[i].0 += took.0;
            sums[i].1 += took.1;
        }
    }
    let sums = sums.map(|(wall, cpu)| (wall.as_secs_f64() / 3.0, cpu.as_secs_f64() / 3.0));
    // The slow path once: it takes minutes.
    let (wall, cpu) = time(&|| per_leaf(&pg));
    let rows = [
        ("sled", sums[0]),
        ("PostgreSQL (the log in batches)", sums[1]),
        ("PostgreSQL (the log a leaf at a time; 1 turn)", (wall.as_secs_f64(), cpu.as_secs_f64())),
    ];
    for (label, (wall, cpu)) in rows {
        println!("{label:<48} {wall:>10.2} {cpu:>10.2} {:>11.2}x", wall / sums[0].0);
    }
}

fn main() {
    // As `arbiter` does (src/main.rs): no transparent huge pages for this
    // process, or each of mimalloc's arenas is zeroed 2 MiB at a time.
    // SAFETY: PR_SET_THP_DISABLE takes plain integers and changes only this
    // process's paging.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let per_table: usize = args.iter().find_map(|a| a.parse().ok()).unwrap_or(200);
    // `library`, `api`, `tables=1` or `tables=64` among the arguments runs
    // only those rows (to profile one path).
    let only =
        |word: &str, all: &[&str]| !args.iter().any(|a| all.contains(&a.as_str())) || args.iter().any(|a| a == word);
    let sample = Sample::load();
    // The ceiling's values are as large as the sample's stored events on average.
    let bytes = {
        let (_dir, store) = new_store(&sample, 1);
        let mut recorder = Recorder::load(&store, "t0").unwrap();
        let stored: usize = (0..sample.actions.len())
            .map(|i| arbiter::record::canonical_bytes(&recorder.append(&sample.action(i), None).unwrap().event).len())
            .sum();
        stored / sample.actions.len()
    };
    println!("durable appends, {per_table} per table (Doomtrooper sample, rules checked on each)");
    if let Some(admin) = args.iter().position(|a| a == "--store").and_then(|i| args.get(i + 1)) {
        if args.iter().any(|a| a == "verify-all") {
            return verify_all_side_by_side(admin, &sample);
        }
        if args.iter().any(|a| a == "scale-out") {
            let tables = args.iter().find_map(|a| a.strip_prefix("tables=")?.parse().ok()).unwrap_or(64);
            let cap = args.iter().find_map(|a| a.strip_prefix("cap=")?.parse().ok()).unwrap_or(25);
            let turns = args.iter().find_map(|a| a.strip_prefix("turns=")?.parse().ok()).unwrap_or(2);
            return scale_out(admin, &sample, tables, per_table, cap, turns);
        }
        let named: Vec<usize> = args.iter().filter_map(|a| a.strip_prefix("tables=")?.parse().ok()).collect();
        let counts = if named.is_empty() { vec![1, 8, 64, 256] } else { named };
        let turns: usize = args.iter().find_map(|a| a.strip_prefix("turns=")?.parse().ok()).unwrap_or(2).max(1);
        let servers: Vec<usize> = args.iter().filter_map(|a| a.strip_prefix("servers=")?.parse().ok()).collect();
        return on_postgres(admin, &sample, per_table, bytes, &counts, turns, &servers);
    }
    println!("ceiling: sled insert + flush + fdatasync of {bytes}-byte values on one thread, once per event for");
    println!("1 table, once per T events for T tables, measured in turns with each row (the disk is shared)");
    println!(
        "{:>6}  {:<16} {:>10} {:>9} {:>9} {:>13} {:>13} {:>10} {:>9}",
        "tables", "path", "appends/s", "p50 ms", "p99 ms", "syncs/append", "cpu us/append", "ceiling/s", "x ceiling"
    );
    let subscribers_only = args.iter().any(|a| a == "subscribers");
    let turns: usize = args.iter().find_map(|a| a.strip_prefix("turns=")?.parse().ok()).unwrap_or(3).max(1);
    // `tables=N` among the arguments runs only those counts (any N).
    let named: Vec<usize> = args.iter().filter_map(|a| a.strip_prefix("tables=")?.parse().ok()).collect();
    let counts = match (subscribers_only, named.is_empty()) {
        (true, _) => Vec::new(),
        (false, true) => vec![1, 64],
        (false, false) => named.clone(),
    };
    for &tables in &counts {
        let ceiling = || ceiling(tables * 1_000, tables, bytes);
        if only("library", &["library", "api"]) {
            Run::in_turns(tables, "library", turns, ceiling, || library(&sample, tables, per_table));
        }
        if only("api", &["library", "api"]) {
            Run::in_turns(tables, "api", turns, ceiling, || api(&sample, tables, per_table, 0));
        }
    }
    // What sled alone reaches with arbiter's keys, 64 games in turn, beside
    // the event alone: the most a path through those keys could reach,
    // rules, sealing and threads aside.
    if counts.contains(&64) {
        let one = sled_alone(64_000, 64, bytes, 64, Keys::EventOnly);
        let arbiters = sled_alone(64_000, 64, bytes, 64, Keys::Arbiters);
        let sixty_four = sled_alone(64_000, 64, bytes, 64, Keys::SixtyFourToAKey);
        println!(
            "sled alone, 64 games, once per 64 events: {one:.0}/s with the event only, {arbiters:.0}/s with \
             arbiter's keys before layout 3 (event, leaf, position, a subtree per 16): {:.2}x; {sixty_four:.0}/s \
             with events and leaves 64 to a key behind a journal (layout 3's keys; layout 4 keeps events 8 \
             to a key): {:.2}x",
            arbiters / one,
            sixty_four / one
        );
    }
    // `subscribers` among the arguments runs only these rows.
    if subscribers_only || (named.is_empty() && !args.iter().any(|a| a == "library" || a == "api")) {
        subscribers_in_turns(&sample, per_table, turns);
    }
}

/// One table's appends through the API with no live subscriber (the
/// anchor) and with 500 of its game, in `turns` turns (the anchor, the
/// row, the anchor, the row...). Each run is printed with its CPU per
/// append split by thread: the server's (all but the clients'), the
/// subscribers' clients' and the table's client's; and with the process's
/// resident memory at its start and its peak during it (each run leaves
/// its store behind, as a server keeps its store for its whole life).
/// Then the row's appends/s over all turns beside the anchor's, and each
/// turn's ratio.
fn subscribers_in_turns(sample: &Sample, per_table: usize, turns: usize) {
    const SUBSCRIBERS: usize = 500;
    println!();
    println!("one table's appends through the API with live subscribers of its game open, in turns with none");
    println!("(each event checked delivered to every subscriber); CPU per append: all, then the server's alone,");
    println!("the subscribers' clients' (one thread) and the table's client's (another); resident MiB");
    println!(
        "{:>4} {:>11}  {:>10} {:>9} {:>9} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9}",
        "turn", "subscribers", "appends/s", "p50 ms", "p99 ms", "cpu us", "server", "subs", "table", "RSS from", "peak"
    );
    let per = |d: Duration, run: &Run| d.as_secs_f64() * 1e6 / run.appends as f64;
    let (mut anchors, mut rows) = (Vec::new(), Vec::new());
    for turn in 1..=turns {
        for subscribers in [0, SUBSCRIBERS] {
            let from = reset_peak_rss_kib() as f64 / 1024.0;
            let mut run = api(sample, 1, per_table, subscribers);
            let peak = peak_rss_since_reset_kib() as f64 / 1024.0;
            run.latencies.sort();
            let pct = |p: f64| {
                let i = ((run.latencies.len() as f64 * p).ceil() as usize).clamp(1, run.latencies.len()) - 1;
                run.latencies[i].as_secs_f64() * 1000.0
            };
            let server = run.cpu.saturating_sub(run.subscribers_cpu + run.tables_cpu);
            println!(
                "{turn:>4} {subscribers:>11}  {:>10.0} {:>9.2} {:>9.2} {:>8.0} {:>8.0} {:>8.0} {:>8.0} {from:>9.0} {peak:>9.0}",
                run.rate(),
                pct(0.50),
                pct(0.99),
                per(run.cpu, &run),
                per(server, &run),
                per(run.subscribers_cpu, &run),
                per(run.tables_cpu, &run),
            );
            if subscribers == 0 { anchors.push(run) } else { rows.push(run) }
        }
    }
    let each: Vec<String> = rows.iter().zip(&anchors).map(|(r, a)| format!("{:.2}x", r.rate() / a.rate())).collect();
    let (anchor, row) = (Run::merged(anchors), Run::merged(rows));
    let server = |run: &Run| per(run.cpu.saturating_sub(run.subscribers_cpu + run.tables_cpu), run);
    println!(
        "{SUBSCRIBERS} subscribers: {:.0}/s against {:.0}/s with none, {:.2}x (each turn: {}); the server's CPU \
         per append {:.0} us against {:.0} us",
        row.rate(),
        anchor.rate(),
        row.rate() / anchor.rate(),
        each.join(", "),
        server(&row),
        server(&anchor),
    );
}

/// Starts this process's peak RSS over from what it holds now (Linux:
/// `/proc/self/clear_refs`), so that each run states its own; what it
/// holds now, in KiB.
fn reset_peak_rss_kib() -> u64 {
    std::fs::write("/proc/self/clear_refs", "5").expect("the peak RSS started over");
    status_kib("VmRSS:")
}

/// The peak resident memory of this process since `reset_peak_rss_kib`, in
/// KiB (`VmHWM`: `getrusage` keeps the peak of the whole life).
fn peak_rss_since_reset_kib() -> u64 {
    status_kib("VmHWM:")
}

/// A figure of `/proc/self/status` given in kB.
fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status.lines().find(|l| l.starts_with(field)).expect("the field");
    line.split_whitespace().nth(1).and_then(|kib| kib.parse().ok()).expect("a figure in kB")
}
