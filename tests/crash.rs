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
