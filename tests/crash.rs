//! Kill a writing process with SIGKILL in the middle of a stream: every
//! acknowledged event must be there, and the chain must verify.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use arbiter::record::{create, verify};
use common::backend::{Backend, Kind};
use common::*;

/// A long legal stream: a combat, then a counter war at steps 3-6.
fn counter_war(lines: usize) -> String {
    let mut out = String::new();
    out += &format!("{}\n", serde_json::json!({"actor": "p1", "action": combat("p2", "A", "D")}));
    out += &format!("{}\n", serde_json::json!({"actor": "p1", "action": tactic("Fight")}));
    for i in 0..lines {
        let seq = 3 + i as u64;
        let actor = if i % 2 == 0 { "p2" } else { "p1" };
        out += &format!("{}\n", serde_json::json!({"actor": actor, "action": counter("Cancel", seq - 1)}));
    }
    out
}

/// On sled, the process's own sync; on PostgreSQL, the database's commit:
/// either way, an event acknowledged before the kill is there after it.
fn sigkill_mid_stream_loses_no_acknowledged_event(kind: Kind) {
    let mut backend = Backend::new(kind);
    create(backend.store(), "g", &doomtrooper_header(), "organiser", None).unwrap();
    for kill_after in [5usize, 40] {
        let head_before = backend.store().head("g").unwrap().unwrap().seq;
        let mut acked = Vec::new();
        // sled's store is held by one process: closed while the writer runs.
        backend.reopen_after(|b| {
            let mut child = Command::new(env!("CARGO_BIN_EXE_arbiter"))
                .args(b.cli_args())
                .args(["--json", "append", "g", "-"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            // Continue the game from its head: a fresh combat cannot start mid-combat,
            // so the second round continues the counter war.
            let stream = if head_before == 0 {
                counter_war(2000)
            } else {
                (0..2000)
                    .map(|i| {
                        let seq = head_before + 1 + i as u64;
                        let actor = if seq % 2 == 1 { "p2" } else { "p1" };
                        format!("{}\n", serde_json::json!({"actor": actor, "action": counter("Cancel", seq - 1)}))
                    })
                    .collect()
            };
            child.stdin.take().unwrap().write_all(stream.as_bytes()).unwrap();
            let mut reader = BufReader::new(child.stdout.take().unwrap());
            let mut line = String::new();
            while acked.len() < kill_after {
                line.clear();
                assert!(reader.read_line(&mut line).unwrap() > 0, "the writer stopped early");
                let v: serde_json::Value = serde_json::from_str(&line).unwrap();
                acked.push((v["event"]["seq"].as_u64().unwrap(), v["event"]["hash"].as_str().unwrap().to_string()));
            }
            // SIGKILL: no destructors, no flush on exit.
            child.kill().unwrap();
            child.wait().unwrap();
        });
        let events: Vec<_> =
            backend.store().read("g", 0).unwrap().collect::<Result<_, _>>().expect("every stored event verifies");
        for (seq, hash) in &acked {
            let e = events.get(*seq as usize).unwrap_or_else(|| panic!("acknowledged seq {seq} is missing"));
            assert_eq!(&e.hash, hash, "acknowledged seq {seq} changed");
        }
        let total = head_before + 1 + if head_before == 0 { 2002 } else { 2000 };
        assert!((events.len() as u64) < total, "the kill came after the whole stream was stored: nothing was tested");
        verify(&events, None).expect("the chain verifies after the crash");
    }
}

on_both_backends!(sigkill_mid_stream_loses_no_acknowledged_event);

fn have_strace() -> bool {
    common::has(common::Need::Program("strace"))
}

/// A copy of the store at `from` (sled's files, the journal, the
/// checkpoints, the key), so that each kill starts from the same store.
fn copy_store(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_store(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A new Doomtrooper game `g` in a new store: sled has written no snapshot
/// of it yet (the next open writes its first).
fn new_store(d: &std::path::Path) {
    let out = arbiter(d, &["new", "g", "--ruleset", "doomtrooper", "--seat", "p1=A", "--seat", "p2=B"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!std::fs::read_dir(d).unwrap().any(|e| e.unwrap().file_name().to_string_lossy().starts_with("snap.")));
}

/// `arbiter --data D ARGS` under strace, SIGKILLed at the `n`th call of
/// `syscall` (by any of its threads), with `stdin`: its stdout, whatever it
/// wrote before it died.
fn killed_at(d: &std::path::Path, syscall: &str, n: usize, args: &[&str], stdin: &str) -> (bool, String) {
    let mut child = Command::new("strace")
        .args(["-f", "-o", "/dev/null", "-e"])
        .arg(format!("inject={syscall}:signal=SIGKILL:when={n}"))
        .arg(env!("CARGO_BIN_EXE_arbiter"))
        .arg("--data")
        .arg(d)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The writer may die before it reads all of it.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    let out = child.wait_with_output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The events acknowledged on `stdout` (`--json append`'s lines), as
/// (seq, hash); a line cut short by the kill acknowledged nothing.
fn acknowledged(stdout: &str) -> Vec<(u64, String)> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .map(|v| (v["event"]["seq"].as_u64().unwrap(), v["event"]["hash"].as_str().unwrap().to_string()))
        .collect()
}

/// The store at `d`, opened once the killed writer has let go of its lock:
/// strace can return while the kernel still tears the writer down, and its
/// lock on sled's files goes only with its last thread (seen once: "could
/// not acquire lock" right after the kill). Up to 5 s; any other error at
/// once.
fn open_after_kill(d: &std::path::Path) -> Result<arbiter::store::SledStore, arbiter::store::OpenError> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match arbiter::store::SledStore::open(d) {
            Err(e) if e.to_string().contains("could not acquire lock") && std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            opened => return opened,
        }
    }
}

/// The store at `d` opens, by itself, with every event of `acked` and a
/// chain that verifies, and `verify --all` passes.
fn opens_with_every_acknowledged_event(d: &std::path::Path, acked: &[(u64, String)], what: &str) {
    {
        let store = open_after_kill(d).unwrap_or_else(|e| panic!("{what}: the store does not open: {e}"));
        let events: Vec<_> = arbiter::store::Store::read(&store, "g", 0)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        for (seq, hash) in acked {
            let e = events.get(*seq as usize).unwrap_or_else(|| panic!("{what}: acknowledged seq {seq} is missing"));
            assert_eq!(&e.hash, hash, "{what}: acknowledged seq {seq} changed");
        }
        verify(&events, None).unwrap_or_else(|e| panic!("{what}: the chain does not verify: {e:?}"));
    }
    let out = arbiter(d, &["verify", "--all"]);
    assert!(out.status.success(), "{what}: verify --all: {}", String::from_utf8_lossy(&out.stderr));
}

/// A kill while sled writes its first snapshot (sled 0.34 writes it at the
/// open, to `snap.*.generating`) leaves a snapshot cut short, which sled
/// then refuses at every open. It is its cache, not data: the next open sets
/// it aside, says so, and the store is all there.
#[test]
fn a_snapshot_cut_short_by_a_kill_is_set_aside_and_the_store_opens() {
    if !have_strace() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let template = dir.path().join("template");
    new_store(&template);
    let announce = r#"{"type":"announce","what":"combat","defending_player":"p2","attacker":"A","defender":"D"}"#;
    let mut cut_short = 0;
    for n in 1..=3 {
        let d = dir.path().join(format!("write-{n}"));
        copy_store(&template, &d);
        let (ok, _) = killed_at(&d, "write", n, &["append", "g", "--actor", "p1", announce], "");
        assert!(!ok, "write {n}: the append was not killed");
        let generating =
            std::fs::read_dir(&d).unwrap().any(|e| e.unwrap().file_name().to_string_lossy().ends_with(".generating"));
        let out = arbiter(&d, &["head", "g"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "write {n}: {stderr}");
        if generating {
            cut_short += 1;
            assert!(
                stderr.contains("set aside"),
                "write {n}: the open did not say it set the snapshot aside: {stderr}"
            );
            let kept = std::fs::read_dir(d.join("set-aside")).unwrap().count();
            assert_eq!(kept, 1, "write {n}: the snapshot is kept, set aside");
        }
        opens_with_every_acknowledged_event(&d, &[], &format!("write {n}"));
    }
    assert!(cut_short > 0, "no kill left a snapshot cut short: nothing was tested");
}

/// A changed byte in sled's snapshot: sled refuses it; the open sets it
/// aside and sled recovers from its log.
#[test]
fn a_damaged_sled_snapshot_is_set_aside_and_the_store_opens() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    new_store(d);
    let out = arbiter(d, &["--json", "append", "g", "--actor", "p1", &combat("p2", "A", "D").to_string()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let acked = acknowledged(&String::from_utf8_lossy(&out.stdout));
    let snap = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("snap."))
        .expect("sled wrote a snapshot");
    let mut bytes = std::fs::read(&snap).unwrap();
    bytes[20] ^= 0x40;
    std::fs::write(&snap, bytes).unwrap();
    let out = arbiter(d, &["head", "g"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("set aside"), "{stderr}");
    opens_with_every_acknowledged_event(d, &acked, "a damaged snapshot");
}

/// An append killed at each of its first 20 `write()` calls and each of its
/// first 20 `fdatasync()` calls, on a store sled has written no snapshot
/// of yet: each time the store opens afterwards by itself, with every event
/// that was acknowledged.
#[test]
fn an_append_killed_at_each_of_its_first_writes_and_syncs_loses_nothing_acknowledged() {
    if !have_strace() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let template = dir.path().join("template");
    new_store(&template);
    let stream = counter_war(40);
    let mut acked_somewhere = false;
    for syscall in ["write", "fdatasync"] {
        for n in 1..=20 {
            let what = format!("{syscall} {n}");
            let d = dir.path().join(format!("{syscall}-{n}"));
            copy_store(&template, &d);
            let (ok, stdout) = killed_at(&d, syscall, n, &["--json", "append", "g", "-"], &stream);
            let acked = acknowledged(&stdout);
            assert!(!ok || acked.len() == 42, "{what}: the append neither finished nor was killed");
            acked_somewhere |= !acked.is_empty();
            opens_with_every_acknowledged_event(&d, &acked, &what);
            std::fs::remove_dir_all(&d).unwrap();
        }
    }
    assert!(acked_somewhere, "every kill came before the first acknowledgement: nothing was tested");
}
