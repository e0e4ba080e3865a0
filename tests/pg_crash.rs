//! Crashes on PostgreSQL: a server SIGKILLed while another serves the same
//! database, and the database's postmaster SIGKILLed under a server. Each
//! time every acknowledged append is stored once, as acknowledged, the
//! chains verify, the log's positions have no gap, and appends go on.

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::backend::{TestDatabase, psql};
use common::server::{Served, start_combat, war};
use serde_json::Value;

/// Each game's stream ends at this seq.
const LAST: u64 = 60;

/// An acknowledged append: (game, seq, hash).
type Acked = Vec<(String, u64, String)>;

/// Polls `done` every 10 ms until it holds, for at most `secs` seconds.
fn wait_until(what: &str, secs: u64, mut done: impl FnMut() -> bool) {
    let began = Instant::now();
    while !done() {
        assert!(began.elapsed() < Duration::from_secs(secs), "waited {secs} s for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Every acknowledged append is stored as acknowledged, each game holds
/// seqs 0..=LAST once each, `verify --all` passes, and every event has
/// one position of the log, 0..size with no hole.
fn nothing_acknowledged_is_lost(url: &str, survivor: &Served, games: &[String], acked: &Acked) {
    for game in games {
        let stored = survivor.stored(game);
        let seqs: Vec<u64> = stored.iter().map(|(seq, _)| *seq).collect();
        assert_eq!(seqs, (0..=LAST).collect::<Vec<_>>(), "{game}: every seq once, in order");
        for (g, seq, hash) in acked.iter().filter(|(g, ..)| g == game) {
            assert_eq!(&stored[*seq as usize].1, hash, "{g}: acknowledged seq {seq} is stored as acknowledged");
        }
    }
    let out = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["--store", url, "--json", "verify", "--all"])
        .output()
        .unwrap();
    assert!(out.status.success(), "verify --all: {}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let events = games.len() as u64 * (LAST + 1);
    assert_eq!(lines.last().unwrap()["log"]["size"].as_u64(), Some(events), "{lines:?}");
    // The log's leaves, straight from the table: one per event, at
    // positions 0..size, none twice (the primary key and UNIQUE say the rest).
    let leaves = psql(
        url,
        "SELECT count(*), min(position), max(position), \
                (SELECT count(*) FROM events), \
                (SELECT count(*) FROM events e WHERE NOT EXISTS \
                   (SELECT 1 FROM log_leaves l WHERE l.game = e.game AND l.seq = e.seq)) \
         FROM log_leaves",
    );
    assert_eq!(leaves.trim(), format!("{events}|0|{}|{events}|0", events - 1), "leaves|min|max|events|unplaced");
}

/// Two servers on one database, a writer per game, half the games through
/// each; the second server SIGKILLed once 60 appends were acknowledged. Its
/// writers retry their unanswered append on the first at the same
/// expect_seq (stored or not, never a fork) and finish their games there.
#[test]
fn two_servers_sigkill_one_loses_no_acknowledged_append() {
    if !common::has(common::Need::Postgres) {
        return;
    }
    let db = TestDatabase::new();
    let (a, b) = Served::two_on_database(&db.url);
    let games: Vec<String> = (0..6).map(|i| format!("g{i}")).collect();
    let mut tokens = Vec::new();
    for game in &games {
        a.doomtrooper(game, "public");
        let (p1, p2) = (b.token(game, "seat", "p1"), a.token(game, "seat", "p2"));
        start_combat(&a, game, &p1);
        tokens.push((p1, p2));
    }
    let b_pid = b.child.id();
    let servers = Arc::new([a, b]);
    let acked = Arc::new(Mutex::new(Acked::new()));
    let count = Arc::new(AtomicUsize::new(0));
    let killed = Arc::new(AtomicBool::new(false));
    let retried = Arc::new(AtomicUsize::new(0));
    let writers: Vec<_> = games
        .iter()
        .cloned()
        .zip(tokens)
        .enumerate()
        .map(|(i, (game, (p1, p2)))| {
            let (servers, acked, count, killed, retried) =
                (servers.clone(), acked.clone(), count.clone(), killed.clone(), retried.clone());
            std::thread::spawn(move || {
                let mut through = i % 2;
                for seq in 3..=LAST {
                    let (actor, action) = war(seq);
                    let token = if actor == "p1" { &p1 } else { &p2 };
                    let (status, v) = loop {
                        match servers[through].try_append(&game, token, actor, action.clone(), seq) {
                            Some(answer) => break answer,
                            // Only the killed server leaves an append unanswered.
                            None => {
                                assert!(through == 1 && killed.load(Ordering::SeqCst), "{game} seq {seq}: no answer");
                                through = 0;
                                retried.fetch_add(1, Ordering::SeqCst);
                            }
                        }
                    };
                    // 201: stored now; 200: the retry found it stored.
                    assert!(status == 201 || status == 200, "{game} seq {seq}: {status} {v}");
                    assert_eq!(v["event"]["seq"].as_u64(), Some(seq), "{v}");
                    let hash = v["event"]["hash"].as_str().unwrap().to_string();
                    acked.lock().unwrap().push((game.clone(), seq, hash));
                    count.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    wait_until("60 acknowledged appends", 30, || count.load(Ordering::SeqCst) >= 60);
    // SIGKILL: no shutdown, connections cut mid-transaction.
    killed.store(true, Ordering::SeqCst);
    unsafe {
        libc::kill(b_pid as i32, libc::SIGKILL);
    }
    let at_kill = count.load(Ordering::SeqCst);
    for w in writers {
        w.join().unwrap();
    }
    let servers = Arc::try_unwrap(servers).unwrap_or_else(|_| panic!("the writers are done"));
    let [a, mut b] = servers;
    b.child.wait().unwrap();
    let total = games.len() * (LAST as usize - 2);
    assert!(at_kill < total / 2, "the kill came after {at_kill} of {total} appends: too late to test anything");
    assert!(retried.load(Ordering::SeqCst) >= 3, "each of the killed server's writers moved to the survivor");
    let acked = acked.lock().unwrap();
    assert_eq!(acked.len(), total);
    nothing_acknowledged_is_lost(&db.url, &a, &games, &acked);
}

/// A PostgreSQL cluster of this test's own (tools/pg-cluster), stopped at
/// the end.
struct Cluster {
    dir: tempfile::TempDir,
    url: String,
}

fn pg_cluster(args: &[&str]) -> std::process::Output {
    Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/pg-cluster")).args(args).output().unwrap()
}

impl Cluster {
    fn start() -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port().to_string();
        let out = pg_cluster(&["start", dir.path().to_str().unwrap(), &port]);
        assert!(out.status.success(), "pg-cluster start: {}", String::from_utf8_lossy(&out.stderr));
        Cluster { url: String::from_utf8(out.stdout).unwrap().trim().to_string(), dir }
    }

    /// The postmaster's pid: the first line of DATA/postmaster.pid.
    fn postmaster(&self) -> i32 {
        let pid = std::fs::read_to_string(self.dir.path().join("data/postmaster.pid")).unwrap();
        pid.lines().next().unwrap().trim().parse().unwrap()
    }

    /// Starts it again over its data. The backends of the killed
    /// postmaster end on their own once they notice it gone; until then
    /// its shared memory is in use and PostgreSQL refuses to start: poll.
    fn restart(&self) {
        let began = Instant::now();
        loop {
            let out = pg_cluster(&["restart", self.dir.path().to_str().unwrap()]);
            if out.status.success() {
                assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), self.url, "the same cluster");
                return;
            }
            assert!(
                began.elapsed() < Duration::from_secs(30),
                "the cluster does not start again: {}\n{}",
                String::from_utf8_lossy(&out.stderr),
                std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = pg_cluster(&["stop", self.dir.path().to_str().unwrap()]);
    }
}

/// The postmaster SIGKILLed under a running server, once 40 appends were
/// acknowledged: appends are refused with 503 store_unavailable while the
/// database is down (the writers retry at the same expect_seq), and once
/// it is started again the same server takes them, and nothing
/// acknowledged is lost.
#[test]
fn sigkill_the_postmaster_loses_no_acknowledged_append() {
    if !common::has(common::Need::Postgres) {
        return;
    }
    let cluster = Cluster::start();
    let server = Arc::new(Served::start_on_database(&cluster.url));
    let games: Vec<String> = (0..3).map(|i| format!("g{i}")).collect();
    let mut tokens = Vec::new();
    for game in &games {
        server.doomtrooper(game, "public");
        let (p1, p2) = (server.token(game, "seat", "p1"), server.token(game, "seat", "p2"));
        start_combat(&server, game, &p1);
        tokens.push((p1, p2));
    }
    let acked = Arc::new(Mutex::new(Acked::new()));
    let count = Arc::new(AtomicUsize::new(0));
    let refused = Arc::new(AtomicUsize::new(0));
    let writers: Vec<_> = games
        .iter()
        .cloned()
        .zip(tokens)
        .map(|(game, (p1, p2))| {
            let (server, acked, count, refused) = (server.clone(), acked.clone(), count.clone(), refused.clone());
            std::thread::spawn(move || {
                for seq in 3..=LAST {
                    let (actor, action) = war(seq);
                    let token = if actor == "p1" { &p1 } else { &p2 };
                    let began = Instant::now();
                    let v = loop {
                        let (status, v) = server.append(&game, token, actor, action.clone(), seq);
                        match status {
                            // 201: stored now; 200: a retry found it stored.
                            200 | 201 => break v,
                            503 => {
                                assert_eq!(v["error"]["code"], "store_unavailable", "{game} seq {seq}: {v}");
                                refused.fetch_add(1, Ordering::SeqCst);
                                assert!(began.elapsed() < Duration::from_secs(45), "{game} seq {seq}: still {v}");
                                std::thread::sleep(Duration::from_millis(20));
                            }
                            _ => panic!("{game} seq {seq}: {status} {v}"),
                        }
                    };
                    assert_eq!(v["event"]["seq"].as_u64(), Some(seq), "{v}");
                    let hash = v["event"]["hash"].as_str().unwrap().to_string();
                    acked.lock().unwrap().push((game.clone(), seq, hash));
                    count.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    wait_until("40 acknowledged appends", 30, || count.load(Ordering::SeqCst) >= 40);
    // SIGKILL the postmaster: no shutdown checkpoint; its backends end on
    // their own, and the restart replays the WAL.
    unsafe {
        libc::kill(cluster.postmaster(), libc::SIGKILL);
    }
    let at_kill = count.load(Ordering::SeqCst);
    wait_until("an append refused while the database is down", 30, || refused.load(Ordering::SeqCst) > 0);
    cluster.restart();
    for w in writers {
        w.join().unwrap();
    }
    let total = games.len() * (LAST as usize - 2);
    assert!(at_kill < total / 2, "the kill came after {at_kill} of {total} appends: too late to test anything");
    let acked = acked.lock().unwrap();
    assert_eq!(acked.len(), total);
    nothing_acknowledged_is_lost(&cluster.url, &server, &games, &acked);
}
