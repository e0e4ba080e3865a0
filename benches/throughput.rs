//! `cargo bench --bench throughput` (or `tools/bench`): arbiter's fold,
//! verify, replay, `state` and durable append, each beside its anchor
//! measured in the same run on the same bytes:
//!
//! - verify and fold beside the parse + BLAKE3 ceiling (serde_json parse and
//!   BLAKE3 of the stored lines, no rules): what reading a record must cost;
//! - replay beside verify, in words (as `arbiter replay` shows it) and with
//!   each change as a state path too (as `replay --json` gives it), the three
//!   in turns (`TURNS`);
//! - durable append to one game beside raw sled insert + flush + fdatasync
//!   per event;
//! - each at 10,000 events and at the largest size asked for, so that a
//!   cost growing with the game shows as a falling rate;
//! - `state`, `replay --from` and whole-record `verify` and `replay` through
//!   the `arbiter` binary, with each process's peak RSS;
//! - `import` of the game's export through the binary (its rate and peak
//!   RSS) beside the appends that made the game, then `replay --from N-10`
//!   of the imported game beside the appended one, in turns.
//!
//! `--phase NAME N` runs one phase alone on a store of N events (made first),
//! for `tools/bench --instructions`, which counts its instructions with
//! callgrind (only inside the `measured_*` functions), per event;
//! `--phase replay-beside-verify N` times the three in turns, three times, as
//! the main run does, and prints each turn, then all of them; `--phase
//! verify-by-size N` times verify of a 10,000-event game and of an N-event
//! one in turns; `--phase import N` makes an N-event game and runs the
//! import rows alone.
//!
//! The stream is the bundled sample combat, replayed over and over (it ends
//! between combats, so it can follow itself): real Doomtrooper events, with
//! the rules checked on every append.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use arbiter::event::Event;
use arbiter::fold::{Folder, Source};
use arbiter::record::{Recorder, StoredGame, Submission, canonical_bytes, create, verify};
use arbiter::replay::Told;
use arbiter::store::{SledStore, Store};

mod common;

use common::Sample;

/// The allocator the `arbiter` binary uses (see `src/main.rs`), so that the
/// in-process rows measure what the binary and the server run.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const GAME: &str = "bench";

/// Events are read back in chunks of this many, so that the fold and the
/// ceiling are timed on decoded events without holding a whole long game.
const CHUNK: u64 = 10_000;

fn main() {
    // As `arbiter` does (src/main.rs): no transparent huge pages for this
    // process, or each of mimalloc's arenas is zeroed 2 MiB at a time
    // (perf: `clear_page_erms` was 16% of the durable phase's samples).
    // SAFETY: PR_SET_THP_DISABLE takes plain integers and changes only this
    // process's paging.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    if args.first().is_some_and(|a| a == "--rss-of") {
        return rss_of(&args[1..]);
    }
    if let Some(i) = args.iter().position(|a| a == "--phase") {
        let phase = args.get(i + 1).expect("--phase NAME N");
        let n = args.get(i + 2).and_then(|n| n.parse().ok()).expect("--phase NAME N");
        return phase_alone(phase, n);
    }
    let mut sizes: Vec<u64> = args.iter().filter_map(|a| a.parse().ok()).collect();
    if sizes.is_empty() {
        sizes = vec![10_000, 1_000_000];
    }
    let sample = Sample::load();
    let work = tempfile::tempdir().unwrap();
    println!("Each row: arbiter beside its anchor, measured in this run on the same events.\n");
    let mut first: Option<Rates> = None;
    for &n in &sizes {
        let dir = work.path().join(format!("n{n}"));
        let made = Instant::now();
        make_store(&dir, &sample, n);
        let appended = made.elapsed();
        eprintln!("(made a store of {n} events in {:.1} s)", appended.as_secs_f64());
        let rates = in_process(&dir, n);
        rates.print(n, first.as_ref());
        if let Some(&small) = sizes.first().filter(|&&s| s < n) {
            let (small_store, store) =
                (SledStore::open(&work.path().join(format!("n{small}"))).unwrap(), SledStore::open(&dir).unwrap());
            verify_by_size(&small_store, small, &store, n);
            small_store.close();
            store.close();
        }
        with_the_store_open(&dir, n);
        through_the_binary(&dir, n);
        imported_beside_appended(&dir, n, appended);
        first.get_or_insert(rates);
    }
    durable_append(work.path(), &sample, 2_000);
}

/// Makes a store holding one game of `n` events (event 0 and n - 1 actions),
/// in batches: one durable write per 1,000 events.
fn make_store(dir: &Path, sample: &Sample, n: u64) {
    let store = SledStore::open(dir).unwrap();
    create(&store, GAME, &sample.header, &sample.opened_by, None).unwrap();
    let mut recorder = Recorder::load(&store, GAME).unwrap();
    let mut i = 0usize;
    while (i as u64) + 1 < n {
        let end = ((i as u64 + 1000).min(n - 1)) as usize;
        let batch: Vec<Submission> = (i..end).map(|k| sample.action(k)).collect();
        recorder.append_batch(&batch, None).map_err(|(k, e)| format!("action {}: {e}", i + k)).unwrap();
        i = end;
    }
    drop(recorder);
    store.close();
}

/// Events per second of each in-process path, for one size.
struct Rates {
    ceiling: f64,
    verify: f64,
    fold: f64,
    replay: f64,
    replay_paths: f64,
}

impl Rates {
    fn print(&self, n: u64, first: Option<&Rates>) {
        println!("{n} events, in process (events/s):");
        let growth = |now: f64, then: Option<f64>| match then {
            Some(t) => format!("{:>6.2}x of the first size", now / t),
            None => String::new(),
        };
        let rows = [
            ("parse + BLAKE3 of the stored lines (ceiling)", self.ceiling, None, first.map(|f| f.ceiling)),
            (
                "verify (read + hash + link + fold)",
                self.verify,
                Some(("ceiling", self.ceiling)),
                first.map(|f| f.verify),
            ),
            ("fold alone (rules on decoded events)", self.fold, Some(("ceiling", self.ceiling)), first.map(|f| f.fold)),
            (
                "replay (verify, then each event in words)",
                self.replay,
                Some(("verify", self.verify)),
                first.map(|f| f.replay),
            ),
            (
                "replay with state paths (as --json)",
                self.replay_paths,
                Some(("verify", self.verify)),
                first.map(|f| f.replay_paths),
            ),
        ];
        for (name, rate, anchor, then) in rows {
            let vs = anchor.map_or(String::new(), |(a, r)| format!("{:>5.2}x {a}", rate / r));
            println!("  {name:<46} {rate:>10.0}  {vs:<14} {}", growth(rate, then));
        }
    }
}

fn in_process(dir: &Path, n: u64) -> Rates {
    let store = SledStore::open(dir).unwrap();
    let source = StoredGame::new(&store, GAME);

    // The ceiling and the fold, chunk by chunk: read and decode untimed.
    let (mut ceiling, mut fold) = (Duration::ZERO, Duration::ZERO);
    let mut folder = Folder::new();
    let mut from = 0;
    while from < n {
        let events: Vec<Event> = store.read(GAME, from).unwrap().take(CHUNK as usize).map(Result::unwrap).collect();
        let lines: Vec<Vec<u8>> = events.iter().map(canonical_bytes).collect();
        let t = Instant::now();
        std::hint::black_box(measured_parse_and_hash(&lines));
        ceiling += t.elapsed();
        let t = Instant::now();
        measured_fold(&mut folder, &events, &source);
        fold += t.elapsed();
        from += events.len() as u64;
    }
    assert_eq!(folder.len(), n);

    let turns = verify_and_replay_in_turns(&store, n);
    let (verify, replay, replay_paths) = turns.rates(n);
    store.close();
    let rate = |d: Duration| n as f64 / d.as_secs_f64();
    Rates { ceiling: rate(ceiling), verify, fold: rate(fold), replay, replay_paths }
}

/// Verify and replay of one game are timed in turns (verify, replay,
/// verify, ...), `TURNS` of each, and each rate is its events over its time
/// in all turns: on this shared machine verify's own rate moved from
/// 276,000 to 629,000 events/s between turns a few seconds apart (issue 13,
/// eighteenth note), so one turn of each gave a ratio that moved with it.
const TURNS: usize = 3;

/// The size `--phase verify-by-size` compares a long game's verify with
/// (the targets' first size).
const SMALL: u64 = 10_000;

/// Each turn's times, and replay's CPU seconds in each: replay in words
/// (as `arbiter replay` and the replay page show it) and with each change
/// as a state path too (as `replay --json` and the API give it).
struct Turns {
    verify: Vec<Duration>,
    replay: Vec<Duration>,
    replay_cpu: Vec<f64>,
    replay_paths: Vec<Duration>,
    replay_paths_cpu: Vec<f64>,
}

impl Turns {
    /// Verify's, replay's and replay's with paths events per second over all the turns.
    fn rates(&self, n: u64) -> (f64, f64, f64) {
        let over_all =
            |times: &[Duration]| (n * times.len() as u64) as f64 / times.iter().sum::<Duration>().as_secs_f64();
        (over_all(&self.verify), over_all(&self.replay), over_all(&self.replay_paths))
    }
}

/// The three in turns, the one that goes first changing each turn
/// (verify, words, paths; words, paths, verify; ...), so that none always
/// finds the caches another left.
fn verify_and_replay_in_turns(store: &SledStore, n: u64) -> Turns {
    let mut turns =
        Turns { verify: vec![], replay: vec![], replay_cpu: vec![], replay_paths: vec![], replay_paths_cpu: vec![] };
    for turn in 0..TURNS {
        for which in (0..3).map(|k| (turn + k) % 3) {
            let (cpu, t) = (cpu_seconds(), Instant::now());
            match which {
                0 => {
                    measured_verify(store, n);
                    turns.verify.push(t.elapsed());
                }
                1 => {
                    measured_replay(store, n);
                    turns.replay.push(t.elapsed());
                    turns.replay_cpu.push(cpu_seconds() - cpu);
                }
                _ => {
                    measured_replay_paths(store, n);
                    turns.replay_paths.push(t.elapsed());
                    turns.replay_paths_cpu.push(cpu_seconds() - cpu);
                }
            }
        }
    }
    turns
}

#[inline(never)]
fn measured_parse_and_hash(lines: &[Vec<u8>]) -> u8 {
    let mut x = 0u8;
    for line in lines {
        let value: serde_json::Value = serde_json::from_slice(line).unwrap();
        x ^= blake3::hash(line).as_bytes()[0] ^ value.is_object() as u8;
    }
    x
}

#[inline(never)]
fn measured_fold(folder: &mut Folder, events: &[Event], source: &StoredGame) {
    for event in events {
        folder.push(event, source).unwrap();
    }
}

#[inline(never)]
fn measured_verify(store: &SledStore, n: u64) {
    let (verified, _) = verify(&StoredGame::new(store, GAME), None).unwrap();
    assert_eq!(verified.events, n);
}

/// Replay in words, as `arbiter replay` and the replay page show it.
#[inline(never)]
fn measured_replay(store: &SledStore, n: u64) {
    replay_whole(store, n, Told::Words);
}

/// Replay with each change as a state path too, as `replay --json` and the API give it.
#[inline(never)]
fn measured_replay_paths(store: &SledStore, n: u64) {
    replay_whole(store, n, Told::WordsAndPaths);
}

fn replay_whole(store: &SledStore, n: u64, told: Told) {
    let mut shown = 0u64;
    arbiter::replay::replay(&StoredGame::new(store, GAME), 0, None, told, |s| {
        assert_eq!(s.changes.is_some(), told == Told::WordsAndPaths);
        std::hint::black_box(&s);
        shown += 1;
    })
    .unwrap();
    assert_eq!(shown, n);
}

/// Checks `k` actions against the rules at the head (seal + fold, nothing
/// stored): the work an append does before the store.
#[inline(never)]
fn measured_append_check(recorder: &Recorder, subs: &[Submission]) {
    for sub in subs {
        std::hint::black_box(recorder.check(sub).unwrap());
    }
}

/// The same reads as the binary's, in a process that has the store open
/// already (as `arbiter serve` has): what a view costs once sled's open,
/// which grows with the store, is paid.
fn with_the_store_open(dir: &Path, n: u64) {
    let store = SledStore::open(dir).unwrap();
    let (last, from) = (n - 1, n.saturating_sub(10));
    println!("{n} events, in a process with the store open (as the server has it):");
    let time = |what: &str, f: &dyn Fn()| {
        f(); // the first read warms sled's cache, as the server's first view of a game does
        let t = Instant::now();
        f();
        println!("  {what:<46} {:>8.1} ms", t.elapsed().as_secs_f64() * 1000.0);
    };
    time("state (at the head)", &|| {
        std::hint::black_box(arbiter::ops::state(&store, GAME, None).unwrap());
    });
    time(&format!("state --at {}", last / 2), &|| {
        std::hint::black_box(arbiter::ops::state(&store, GAME, Some(last / 2)).unwrap());
    });
    time(&format!("replay --from {from}"), &|| {
        let mut shown = 0;
        arbiter::replay::replay(&StoredGame::new(&store, GAME), from, None, Told::Words, |s| {
            std::hint::black_box(s);
            shown += 1;
        })
        .unwrap();
        assert_eq!(shown, n - from);
    });
    store.close();
}

/// The verbs a judge runs, through the binary: wall time and peak RSS.
fn through_the_binary(dir: &Path, n: u64) {
    let last = n - 1;
    let from = n.saturating_sub(10);
    println!("{n} events, through the arbiter binary (after a first open):");
    // The first open after the store was written pays sled's recovery.
    run(dir, &["head", GAME]);
    for (what, args) in [
        ("head", vec!["head".to_string(), GAME.into()]),
        ("state (at the head)", vec!["state".into(), GAME.into()]),
        (&format!("state --at {}", last / 2), vec!["state".into(), GAME.into(), "--at".into(), (last / 2).to_string()]),
        (&format!("replay --from {from}"), vec!["replay".into(), GAME.into(), "--from".into(), from.to_string()]),
        ("verify", vec!["verify".into(), GAME.into()]),
        ("replay (whole record)", vec!["replay".into(), GAME.into()]),
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (time, rss) = run(dir, &args);
        println!("  {what:<46} {:>8.1} ms  peak RSS {:>6.1} MiB", time.as_secs_f64() * 1000.0, rss as f64 / 1024.0);
    }
}

/// The game of `dir` (`n` events, appended in `appended` by `make_store`)
/// exported and imported through the binary as `IMPORTED`, with the
/// import's rate and peak RSS beside the appends'; then `replay --from
/// N-10` of each game in turns, through the binary and in a process with
/// the store open: the imported game must read from its snapshots as the
/// appended one does. (The import is left in the store.)
fn imported_beside_appended(dir: &Path, n: u64, appended: Duration) {
    let file = dir.with_extension("export.jsonl");
    let f = file.to_str().unwrap();
    run(dir, &["export", GAME, "-o", f]);
    let (import, rss) = run(dir, &["import", f, "--as", IMPORTED]);
    std::fs::remove_file(&file).unwrap();
    let rate = |d: Duration| n as f64 / d.as_secs_f64();
    println!("{n} events imported beside the same game appended (events/s):");
    println!("  {:<46} {:>10.0}", "append, in batches of 1,000 (the anchor)", rate(appended));
    println!(
        "  {:<46} {:>10.0}  {:>5.2}x append  peak RSS {:>6.1} MiB",
        "import through the binary",
        rate(import),
        rate(import) / rate(appended),
        rss as f64 / 1024.0
    );
    let from = n.saturating_sub(10).to_string();
    let (mut binary, mut open) = ([Duration::ZERO; 2], [Duration::ZERO; 2]);
    let mut rss = [0i64; 2];
    let store = SledStore::open(dir).unwrap();
    for turn in 0..TURNS {
        // Which goes first changes each turn.
        let order = if turn % 2 == 0 { [0, 1] } else { [1, 0] };
        for i in order {
            let game = [GAME, IMPORTED][i];
            let t = Instant::now();
            measured_replay_from(&store, game, n);
            open[i] += t.elapsed();
        }
    }
    store.close();
    run(dir, &["head", GAME]);
    for turn in 0..TURNS {
        let order = if turn % 2 == 0 { [0, 1] } else { [1, 0] };
        for i in order {
            let (time, peak) = run(dir, &["replay", [GAME, IMPORTED][i], "--from", &from]);
            binary[i] += time;
            rss[i] = rss[i].max(peak);
        }
    }
    let ms = |d: Duration| d.as_secs_f64() * 1000.0 / TURNS as f64;
    println!("  replay --from {from}, {TURNS} turns each (ms per turn):");
    for (what, t, peak) in [("through the binary", binary, Some(rss)), ("store open", open, None)] {
        let peak = peak.map_or(String::new(), |r| {
            format!("  peak RSS {:.1} / {:.1} MiB", r[0] as f64 / 1024.0, r[1] as f64 / 1024.0)
        });
        println!(
            "    {what:<20} appended {:>8.1}  imported {:>8.1}  {:>5.2}x the appended{peak}",
            ms(t[0]),
            ms(t[1]),
            t[1].as_secs_f64() / t[0].as_secs_f64()
        );
    }
}

/// The game `imported_beside_appended` imports.
const IMPORTED: &str = "imported";

/// `replay --from N-10` of `game` with the store open.
#[inline(never)]
fn measured_replay_from(store: &SledStore, game: &str, n: u64) {
    let from = n.saturating_sub(10);
    let mut shown = 0;
    arbiter::replay::replay(&StoredGame::new(store, game), from, None, Told::Words, |s| {
        std::hint::black_box(s);
        shown += 1;
    })
    .unwrap();
    assert_eq!(shown, n - from);
}

/// Runs `arbiter --data DIR ARGS` with its output discarded: wall time and
/// its peak RSS in KiB. A child inherits its parent's peak RSS through exec,
/// so this bench (which holds events in memory) starts a fresh copy of itself
/// (`--rss-of`), small, which runs arbiter and reports the peak from wait4.
fn run(dir: &Path, args: &[&str]) -> (Duration, i64) {
    let t = Instant::now();
    let out = Command::new(std::env::current_exe().unwrap())
        .arg("--rss-of")
        .arg(binary())
        .arg("--data")
        .arg(dir)
        .args(args)
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    let time = t.elapsed();
    assert!(out.status.success(), "arbiter {args:?} failed");
    let rss = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    (time, rss)
}

/// `--rss-of PROGRAM ARGS...`: runs the program with its output discarded
/// and prints its peak RSS in KiB; exits 1 if it failed.
// The child is reaped by wait4 (for its rusage), not by `Child::wait`.
#[allow(clippy::zombie_processes)]
fn rss_of(args: &[String]) {
    let child = Command::new(&args[0]).args(&args[1..]).stdout(Stdio::null()).spawn().unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid);
    println!("{}", usage.ru_maxrss);
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        std::process::exit(1);
    }
}

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_arbiter"))
}

/// Durable append to one game, one event at a time, beside raw sled insert
/// + flush + fdatasync of the same bytes.
fn durable_append(work: &Path, sample: &Sample, n: usize) {
    let store = SledStore::open(&work.join("append")).unwrap();
    create(&store, GAME, &sample.header, &sample.opened_by, None).unwrap();
    let mut recorder = Recorder::load(&store, GAME).unwrap();
    let raw = sled::open(work.join("raw")).unwrap();
    let tree = raw.open_tree("raw").unwrap();
    let log = std::fs::File::open(work.join("raw").join("db")).unwrap();
    // The two side by side, in turns of `TURN` events (arbiter's append,
    // then the same bytes through raw sled), so that the disk's pace, which
    // drifts by 2x within a minute on this shared machine, weighs on both
    // alike.
    const TURN: usize = 100;
    let (mut append, mut ceiling) = (Duration::ZERO, Duration::ZERO);
    for turn in (0..n).step_by(TURN) {
        let end = (turn + TURN).min(n);
        let t = Instant::now();
        for i in turn..end {
            recorder.append(&sample.action(i), None).unwrap();
        }
        append += t.elapsed();
        let bytes: Vec<Vec<u8>> =
            store.read(GAME, turn as u64 + 1).unwrap().take(end - turn).map(|e| canonical_bytes(&e.unwrap())).collect();
        let t = Instant::now();
        for (i, b) in (turn..end).zip(&bytes) {
            tree.insert((i as u64).to_be_bytes(), b.as_slice()).unwrap();
            raw.flush().unwrap();
            log.sync_data().unwrap();
        }
        ceiling += t.elapsed();
    }
    drop(recorder);
    store.close();
    let rate = |d: Duration| n as f64 / d.as_secs_f64();
    println!("durable append to one game, {n} events one at a time, in turns of {TURN} (events/s):");
    println!("  {:<46} {:>10.0}", "sled insert + flush + fdatasync (ceiling)", rate(ceiling));
    println!(
        "  {:<46} {:>10.0}  {:>5.2}x ceiling",
        "arbiter append (rules + seal + store + sync)",
        rate(append),
        rate(append) / rate(ceiling)
    );
}

/// Verify of a small game and of a long one in turns (the small one over
/// and over), printed with the long one's rate beside the small one's: so
/// that a rate that falls with the size is the game's cost, not this
/// machine's pace drifting between sizes measured minutes apart (one run
/// gave verify at 1,000,000 events 0.83x its rate at 10,000 measured so).
/// The game's cost includes sled's: the small game stays in sled's cache
/// (8 MiB), the long one is read from the file's pages. Turns do not make
/// this machine steady (thirteen runs gave 0.80x to 1.06x, single turns
/// 0.73x to 1.33x), but both sizes share its pace; callgrind gives the
/// per-event cost that repeats (19,263 instructions at 10,000 events,
/// 19,737 at 200,000).
fn verify_by_size(small: &SledStore, small_n: u64, long: &SledStore, n: u64) {
    let (mut small_events, mut small_time, mut long_time) = (0, Duration::ZERO, Duration::ZERO);
    let mut each = vec![];
    // The small game's side of a turn lasts as long as the long one's last
    // (half a second the first time), so that both weigh alike in a turn.
    let mut last_long = Duration::from_millis(500);
    for turn in 0..TURNS {
        let (mut small_turn, mut small_turn_events, mut long_turn) = (Duration::ZERO, 0, Duration::ZERO);
        // Which goes first changes each turn: small, long, long, small, ...
        for long_now in [turn % 2 == 1, turn % 2 == 0] {
            let t = Instant::now();
            if long_now {
                measured_verify(long, n);
                long_turn = t.elapsed();
            } else {
                while t.elapsed() < last_long {
                    measured_verify(small, small_n);
                    small_turn_events += small_n;
                }
                small_turn = t.elapsed();
            }
        }
        last_long = long_turn;
        (small_events, small_time, long_time) =
            (small_events + small_turn_events, small_time + small_turn, long_time + long_turn);
        let rate = |events: u64, d: Duration| events as f64 / d.as_secs_f64();
        each.push(format!("{:.2}x", rate(n, long_turn) / rate(small_turn_events, small_turn)));
    }
    let small_rate = small_events as f64 / small_time.as_secs_f64();
    let long_rate = (n * TURNS as u64) as f64 / long_time.as_secs_f64();
    println!(
        "verify in {TURNS} turns with the first size: {small_n} events {small_rate:.0}/s, {n} events {long_rate:.0}/s: {:.2}x the rate at {small_n} (each turn: {})",
        long_rate / small_rate,
        each.join(", ")
    );
}

/// One phase alone, for callgrind: the store is made first (not counted:
/// callgrind collects only inside the `measured_*` functions).
fn phase_alone(phase: &str, n: u64) {
    let sample = Sample::load();
    let work = tempfile::tempdir().unwrap();
    if phase == "import" {
        // The appends that make the store are the import's anchor: timed.
        let dir = work.path().join("import");
        let made = Instant::now();
        make_store(&dir, &sample, n);
        return imported_beside_appended(&dir, n, made.elapsed());
    }
    // ARBITER_BENCH_KEEP=DIR keeps the store made for N events in DIR/N and
    // reuses it, so that a profiler run sees the phase and not the making.
    // Set but empty is not set: it would keep the store in ./N, wherever
    // the bench was started (it once left one in the repository).
    let dir = match std::env::var_os("ARBITER_BENCH_KEEP").filter(|keep| !keep.is_empty()) {
        Some(keep) => Path::new(&keep).join(n.to_string()),
        None => work.path().join("store"),
    };
    if !dir.exists() {
        make_store(&dir, &sample, n);
    }
    let store = SledStore::open(&dir).unwrap();
    match phase {
        "append-check" => {
            // The next action, checked 1,000 times at the head of an n-event game.
            let recorder = Recorder::load(&store, GAME).unwrap();
            let next = vec![sample.action(n as usize - 1); 1000];
            measured_append_check(&recorder, &next);
            println!("events {}", next.len());
        }
        "fold" => {
            let events: Vec<Event> = store.read(GAME, 0).unwrap().map(Result::unwrap).collect();
            let mut folder = Folder::new();
            measured_fold(&mut folder, &events, &StoredGame::new(&store, GAME));
            println!("events {n}");
        }
        "verify" => {
            measured_verify(&store, n);
            println!("events {n}");
        }
        "replay-beside-verify" => {
            // The ratio the targets name, in turns as `tools/bench` takes
            // it: each turn, with replay's CPU per wall second (how busy its
            // threads keep this machine's two cores), then all of them.
            let turns = verify_and_replay_in_turns(&store, n);
            for i in 0..TURNS {
                let (verify, replay, paths) = (turns.verify[i], turns.replay[i], turns.replay_paths[i]);
                let rate = |d: Duration| n as f64 / d.as_secs_f64();
                println!(
                    "verify {:.0}/s, replay {:.0}/s: {:.2}x verify, {:.2} s of CPU per second; \
                     with paths {:.0}/s: {:.2}x verify, {:.2} s of CPU per second",
                    rate(verify),
                    rate(replay),
                    verify.as_secs_f64() / replay.as_secs_f64(),
                    turns.replay_cpu[i] / replay.as_secs_f64(),
                    rate(paths),
                    verify.as_secs_f64() / paths.as_secs_f64(),
                    turns.replay_paths_cpu[i] / paths.as_secs_f64(),
                );
            }
            let (verify, replay, paths) = turns.rates(n);
            println!(
                "all {TURNS} turns: verify {verify:.0}/s, replay {replay:.0}/s: {:.2}x verify; with paths {paths:.0}/s: {:.2}x verify",
                replay / verify,
                paths / verify
            );
        }
        "verify-by-size" => {
            let small_dir = work.path().join("small");
            make_store(&small_dir, &sample, SMALL);
            verify_by_size(&SledStore::open(&small_dir).unwrap(), SMALL, &store, n);
        }
        "replay" => {
            measured_replay(&store, n);
            println!("events {n}");
        }
        "replay-paths" => {
            measured_replay_paths(&store, n);
            println!("events {n}");
        }
        "ceiling" => {
            let lines: Vec<Vec<u8>> = store.read(GAME, 0).unwrap().map(|e| canonical_bytes(&e.unwrap())).collect();
            std::hint::black_box(measured_parse_and_hash(&lines));
            println!("events {n}");
        }
        "durable" => durable_append(work.path(), &sample, n as usize),

        "scan" => {
            // The stored bytes alone, read as verify reads them: what sled's reads cost.
            let t = Instant::now();
            let read = StoredGame::new(&store, GAME).stored_from(0).unwrap().map(Result::unwrap).count();
            let took = t.elapsed();
            let t = Instant::now();
            measured_verify(&store, n);
            println!(
                "events {read}: scan {:.0}/s, verify {:.0}/s",
                n as f64 / took.as_secs_f64(),
                n as f64 / t.elapsed().as_secs_f64()
            );
        }
        "append" => {
            // n more durable appends, one at a time, after the n-event game
            // (for strace: what each append asks of the disk).
            let mut recorder = Recorder::load(&store, GAME).unwrap();
            for i in 0..n as usize {
                recorder.append(&sample.action(n as usize - 1 + i), None).unwrap();
            }
            println!("events {n}");
        }
        other => panic!(
            "unknown phase {other}: append-check, fold, verify, replay, replay-paths, replay-beside-verify, verify-by-size, ceiling, append, scan, durable, import"
        ),
    }
}

/// This process's CPU time so far (user and system), in seconds.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes the struct it is given and nothing else.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}
