//! `arbiter record` in a pseudo-terminal: each sample game is recorded
//! again by choosing moves only (arrow keys for the move and its options,
//! typing for the values it asks for: no JSON), and its export is equal,
//! event for event, to the one `demo` recorded through `append`, apart from
//! the times (and so the hashes).
//!
//! The test finds, for each line of the sample, the move that admits it
//! in the recorder's list (`kernel::moves::menu`, the order `record` shows)
//! and presses the keys a person would.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use arbiter::kernel::moves::{Entry, EntryKind, Move, menu, take};
use common::*;
use expectrl::session::OsSession;
use expectrl::{Expect, Session};
use serde_json::Value;

const DOWN: &str = "\x1b[B";
const ENTER: &str = "\r";

/// The sample's lines: (actor, action), event 0 first.
fn sample(ruleset: &str) -> Vec<(String, Value)> {
    let text = std::fs::read_to_string(repo_file(&format!("examples/{ruleset}-sample.jsonl"))).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (v["actor"].as_str().unwrap().to_string(), v["action"].clone())
        })
        .collect()
}

/// Picks option `index` of the Select on screen (the first is highlighted).
fn select(p: &mut OsSession, prompt: &str, index: usize) {
    p.expect(prompt).unwrap_or_else(|e| panic!("no prompt {prompt:?}: {e}"));
    p.send(DOWN.repeat(index) + ENTER).unwrap();
}

/// Types `text` into the prompt on screen.
fn typed(p: &mut OsSession, prompt: &str, text: &str) {
    p.expect(prompt).unwrap_or_else(|e| panic!("no prompt {prompt:?}: {e}"));
    p.send(format!("{text}{ENTER}")).unwrap();
}

/// Enters `value` (or nothing) for `e` at `path`, as `record` asks for it.
fn enter(p: &mut OsSession, e: &Entry, path: &str, value: Option<&Value>) {
    let prompt = format!("{} ({path}", e.label);
    match (e.kind, value) {
        (_, None) => typed(p, &prompt, ""),
        (EntryKind::List, Some(Value::Array(items))) => {
            typed(p, &format!("how many: {prompt}"), &items.len().to_string());
            for (i, item) in items.iter().enumerate() {
                for field in &e.items {
                    let at = if field.field.is_empty() {
                        format!("{path}/{i}")
                    } else {
                        format!("{path}/{i}/{}", field.field)
                    };
                    let v =
                        if field.field.is_empty() { Some(item) } else { item.pointer(&format!("/{}", field.field)) };
                    enter(p, field, &at, v);
                }
            }
        }
        (EntryKind::Event, Some(v)) => typed(p, &prompt, &v["seq"].to_string()),
        (_, Some(Value::String(s))) => typed(p, &prompt, s),
        (_, Some(v)) => typed(p, &prompt, &v.to_string()),
    }
}

/// Answers `m`'s questions so that it builds `action`.
fn answer(p: &mut OsSession, m: &Move, action: &Value) {
    let mut rest = action.clone();
    for c in &m.choose {
        let value = take(&mut rest, &c.field);
        let index = |options: &[&arbiter::kernel::Pick], v: &Value| {
            options.iter().position(|o| o.value == *v).unwrap_or_else(|| panic!("{v} is not an option of {}", c.field))
        };
        if !c.list {
            let options: Vec<_> = c.options.iter().collect();
            let i = value.as_ref().map_or(options.len(), |v| index(&options, v));
            select(p, &format!("{}:", c.field), i);
            continue;
        }
        let wanted = value.as_ref().and_then(Value::as_array).cloned().unwrap_or_default();
        let mut picked: Vec<Value> = vec![];
        loop {
            let left: Vec<_> = c.options.iter().filter(|o| !picked.contains(&o.value)).collect();
            if picked.len() as u32 >= c.max || left.is_empty() {
                break;
            }
            let can_stop = picked.len() as u32 >= c.min;
            let prompt = format!("{} ({} picked;", c.field, picked.len());
            match wanted.get(picked.len()) {
                None => {
                    select(p, &prompt, 0);
                    break;
                }
                Some(v) => {
                    select(p, &prompt, index(&left, v) + usize::from(can_stop));
                    picked.push(v.clone());
                }
            }
        }
    }
    for e in &m.enter {
        let value = take(&mut rest, &e.field);
        enter(p, e, &e.field, value.as_ref());
    }
}

fn record_again(ruleset: &str) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let reference = format!("{ruleset}-sample");
    let ok = |args: &[&str]| {
        let out = arbiter(&data, args);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        out
    };
    ok(&["demo", "--ruleset", ruleset]);
    // The same header, byte for byte: a fork at event 0.
    ok(&["fork", &reference, "again", "--at", "0"]);

    let lines = sample(ruleset);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_arbiter"));
    cmd.args(["--data", data.to_str().unwrap(), "record", "again"]).env("NO_COLOR", "1");
    let mut p = Session::spawn(cmd).unwrap();
    p.set_expect_timeout(Some(Duration::from_secs(30)));
    let mut sim = Sim::open(lines[0].1.clone());
    for (seq, (actor, action)) in lines.iter().enumerate().skip(1) {
        let moves = sim.table.moves(seq as u64);
        let listed = menu(&moves);
        let Some(i) = listed.iter().position(|m| m.seat == *actor && m.admits(action).is_ok()) else {
            panic!("{ruleset} seq {seq}: no move of {actor} admits {action}");
        };
        select(&mut p, &format!("move after seq {}:", seq - 1), i);
        answer(&mut p, listed[i], action);
        p.expect("(Y/n)").unwrap();
        p.send(ENTER).unwrap();
        p.expect(format!("seq {seq} appended")).unwrap_or_else(|e| panic!("{ruleset} seq {seq} was not appended: {e}"));
        sim.act(actor, action.clone());
    }
    // Esc at the move list ends the recorder.
    p.expect(format!("move after seq {}:", lines.len() - 1)).unwrap();
    p.send("\x1b").unwrap();
    p.expect(expectrl::Eof).unwrap();

    let export = |game: &str| -> Vec<(u64, String, Value)> {
        let out = ok(&["export", game]);
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| {
                let e: Value = serde_json::from_str(l).unwrap();
                (e["seq"].as_u64().unwrap(), e["actor"].as_str().unwrap().to_string(), e["action"].clone())
            })
            .collect()
    };
    assert_eq!(export("again"), export(&reference), "{ruleset}: the game recorded by moves differs from the sample");
}

/// The recorder refuses to run without a terminal, and says what to use instead.
#[test]
fn record_needs_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let data: &Path = &dir.path().join("data");
    assert!(arbiter(data, &["demo", "--ruleset", "wtactics"]).status.success());
    let out = arbiter_stdin(data, &["record", "wtactics-sample"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("arbiter append GAME -"));
}

#[test]
fn doomtrooper_is_recorded_by_moves_alone() {
    record_again("doomtrooper");
}

#[test]
fn wtactics_is_recorded_by_moves_alone() {
    record_again("wtactics");
}

#[test]
fn riftbound_is_recorded_by_moves_alone() {
    record_again("riftbound");
}

#[test]
fn rawdeal_is_recorded_by_moves_alone() {
    record_again("rawdeal");
}

#[test]
fn gurps_is_recorded_by_moves_alone() {
    record_again("gurps");
}
