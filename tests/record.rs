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

use arbiter::kernel::moves::{Choice, Entry, EntryKind, Move, Pick, menu, take};
use common::*;
use expectrl::session::OsSession;
use expectrl::{Expect, Session};
use serde_json::Value;

const DOWN: &str = "\x1b[B";
const ENTER: &str = "\r";

/// Waits for `prompt` on screen; if it does not come, fails with what the screen showed last.
fn expect(p: &mut OsSession, prompt: &str) {
    if let Err(e) = p.expect(prompt) {
        let mut buf = vec![0u8; 1 << 16];
        let n = p.try_read(&mut buf).unwrap_or(0);
        let shown = String::from_utf8_lossy(&buf[..n]);
        let tail: String = shown.chars().rev().take(3000).collect::<Vec<_>>().into_iter().rev().collect();
        panic!("no prompt {prompt:?} ({e}); the terminal showed last:\n{tail}");
    }
}

/// Picks option `index` of the Select on screen (the first is highlighted).
fn select(p: &mut OsSession, prompt: &str, index: usize) {
    expect(p, prompt);
    p.send(DOWN.repeat(index) + ENTER).unwrap();
}

/// Types `text` into the prompt on screen.
fn typed(p: &mut OsSession, prompt: &str, text: &str) {
    expect(p, prompt);
    p.send(format!("{text}{ENTER}")).unwrap();
}

/// Picks `value` (or leaves it out) for choice `c`, whose field is at `path`, as `record` asks for it.
fn choose(p: &mut OsSession, c: &Choice, path: &str, value: Option<&Value>) {
    let index = |options: &[&Pick], v: &Value| {
        options.iter().position(|o| o.value == *v).unwrap_or_else(|| panic!("{v} is not an option of {path}"))
    };
    if !c.list {
        let options: Vec<_> = c.options.iter().collect();
        let i = value.map_or(options.len(), |v| index(&options, v));
        select(p, &format!("{path}:"), i);
        return;
    }
    let wanted = value.and_then(Value::as_array).cloned().unwrap_or_default();
    let mut picked: Vec<Value> = vec![];
    loop {
        let left: Vec<_> = c.options.iter().filter(|o| !picked.contains(&o.value)).collect();
        if picked.len() as u32 >= c.max || left.is_empty() {
            break;
        }
        let can_stop = picked.len() as u32 >= c.min;
        let prompt = format!("{path} ({} picked;", picked.len());
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

/// Enters `value` (or nothing) for `e` at `path`, as `record` asks for it.
fn enter(p: &mut OsSession, e: &Entry, path: &str, value: Option<&Value>) {
    let prompt = format!("{} ({path}", e.label);
    match (e.kind, value) {
        (_, None) => typed(p, &prompt, ""),
        (EntryKind::List, Some(Value::Array(items))) => {
            typed(p, &format!("how many: {prompt}"), &items.len().to_string());
            for (i, item) in items.iter().enumerate() {
                // As `record` asks: the item's choices, then its entries.
                let mut rest = item.clone();
                let chosen: Vec<Option<Value>> = e.choose.iter().map(|c| take(&mut rest, &c.field)).collect();
                for (c, v) in e.choose.iter().zip(&chosen) {
                    choose(p, c, &format!("{path}/{i}/{}", c.field), v.as_ref());
                }
                for field in &e.items {
                    let at = if field.field.is_empty() {
                        format!("{path}/{i}")
                    } else {
                        format!("{path}/{i}/{}", field.field)
                    };
                    let v =
                        if field.field.is_empty() { Some(item.clone()) } else { take(&mut item.clone(), &field.field) };
                    enter(p, field, &at, v.as_ref());
                }
            }
        }
        (EntryKind::Event, Some(v)) => typed(p, &prompt, &v["seq"].to_string()),
        (_, Some(Value::String(s))) => typed(p, &prompt, s),
        (_, Some(v)) => typed(p, &prompt, &v.to_string()),
    }
}

/// Answers `m`'s questions so that it builds `action`: its entries' values
/// are taken out first (a choice may pick an object whose other fields are
/// entered, as `Move::admits` reads it), then its choices'; `record` asks
/// for the choices first.
fn answer(p: &mut OsSession, m: &Move, action: &Value) {
    let mut rest = action.clone();
    let entered: Vec<Option<Value>> = m.enter.iter().map(|e| take(&mut rest, &e.field)).collect();
    let chosen: Vec<Option<Value>> = m.choose.iter().map(|c| take(&mut rest, &c.field)).collect();
    for (c, v) in m.choose.iter().zip(&chosen) {
        choose(p, c, &c.field, v.as_ref());
    }
    for (e, v) in m.enter.iter().zip(&entered) {
        enter(p, e, &e.field, v.as_ref());
    }
}

/// `arbiter` on the store `store` names (`--data DIR` or `--store URL`); it must succeed.
fn ok(store: &[&str], args: &[&str]) -> std::process::Output {
    let out = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .env_remove("ARBITER_SERVER")
        .env_remove("ARBITER_TOKEN")
        .args(store)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

/// `arbiter record` on a pseudo-terminal wide enough that no prompt wraps
/// (a wrapped line breaks the text the test waits for).
fn recorder(args: &[&str]) -> OsSession {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_arbiter"));
    cmd.args(args).env("NO_COLOR", "1").env_remove("ARBITER_SERVER").env_remove("ARBITER_TOKEN");
    let mut p = Session::spawn(cmd).unwrap();
    p.get_process_mut().set_window_size(1000, 50).unwrap();
    p.set_expect_timeout(Some(Duration::from_secs(30)));
    p
}

/// Records `ruleset`'s sample again with `record` on the store `store`
/// names, and compares the two exports.
fn record_again(ruleset: &str, store: &[&str]) {
    let reference = format!("{ruleset}-sample");
    let ok = |args: &[&str]| ok(store, args);
    ok(&["demo", "--ruleset", ruleset, "--as", &reference]);
    // The same header, byte for byte: a fork at event 0.
    ok(&["fork", &reference, "again", "--at", "0"]);

    let lines = sample_lines(ruleset);
    let mut p = recorder(&[store, &["record", "again"]].concat());
    let mut sim = Sim::open(lines[0].1.clone());
    for (seq, (actor, action)) in lines.iter().enumerate().skip(1) {
        let moves = sim.table.moves(seq as u64);
        let listed = menu(&moves);
        let Some(i) = listed.iter().position(|m| m.seat == *actor && m.admits(action).is_ok()) else {
            panic!("{ruleset} seq {seq}: no move of {actor} admits {action}");
        };
        select(&mut p, &format!("move after seq {}:", seq - 1), i);
        answer(&mut p, listed[i], action);
        expect(&mut p, "(Y/n)");
        p.send(ENTER).unwrap();
        expect(&mut p, &format!("seq {seq} appended"));
        sim.act(actor, action.clone());
    }
    // Esc at the move list ends the recorder.
    expect(&mut p, &format!("move after seq {}:", lines.len() - 1));
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
    let dir = tempfile::tempdir().unwrap();
    record_again("doomtrooper", &["--data", dir.path().to_str().unwrap()]);
}

#[test]
fn wtactics_is_recorded_by_moves_alone() {
    let dir = tempfile::tempdir().unwrap();
    record_again("wtactics", &["--data", dir.path().to_str().unwrap()]);
}

#[test]
fn riftbound_is_recorded_by_moves_alone() {
    let dir = tempfile::tempdir().unwrap();
    record_again("riftbound", &["--data", dir.path().to_str().unwrap()]);
}

#[test]
fn rawdeal_is_recorded_by_moves_alone() {
    let dir = tempfile::tempdir().unwrap();
    record_again("rawdeal", &["--data", dir.path().to_str().unwrap()]);
}

#[test]
fn gurps_is_recorded_by_moves_alone() {
    let dir = tempfile::tempdir().unwrap();
    record_again("gurps", &["--data", dir.path().to_str().unwrap()]);
}

/// Against a server, a seat with nothing to do waits on the live stream and
/// offers its moves as soon as the other seat's event arrives.
#[test]
fn a_seat_waits_for_the_other_seats_event_on_the_live_stream() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::server::Served::start(dir.path());
    s.doomtrooper("g", "public");
    let p1 = s.token("g", "seat", "p1");
    let p2 = s.token("g", "seat", "p2");
    assert_eq!(s.append("g", &p1, "p1", combat("p2", "Max", "Leg"), 1).0, 201);

    let mut p = recorder(&["--server", &s.url, "--token", &p2, "record", "g", "--as", "p2"]);
    // Step 2 is the attacking player's: p2 waits.
    expect(&mut p, "p2 has no move now; waiting for p1");
    assert_eq!(s.append("g", &p1, "p1", tactic("Fight"), 2).0, 201);
    // The battle tactic's window: p2 may answer it.
    expect(&mut p, "move after seq 2:");
    p.send("\x1b").unwrap();
    p.expect(expectrl::Eof).unwrap();

    // A judge never waits: rulings are always open (here, nothing of the combat is the judge's).
    let dana = s.token("g", "judge", "Dana");
    let mut p = recorder(&["--server", &s.url, "--token", &dana, "record", "g", "--judge", "Dana"]);
    expect(&mut p, "Dana: penalty");
    expect(&mut p, "move after seq 2:");
    p.send("\x1b").unwrap();
    p.expect(expectrl::Eof).unwrap();
}

/// On a database store: the recorder records a sample as on a directory,
/// and a seat waits for the other seat's event, which another process
/// appends meanwhile (a directory store is held by the recorder: there it
/// says so instead).
#[test]
fn on_postgresql_a_sample_is_recorded_by_moves_and_a_seat_waits_for_the_other() {
    if !common::has(common::Need::Postgres) {
        return;
    }
    let db = common::backend::Backend::new(common::backend::Kind::Postgres);
    let store = db.cli_args();
    record_again("wtactics", &store);

    ok(&store, &["new", "w", "--ruleset", "wtactics", "--seat", "p1=Alice", "--seat", "p2=Bob"]);
    let attack = r#"{"type":"announce","what":"attackers","attackers":[{"name":"Orc Raider","atk":3,"def":2}]}"#;
    ok(&store, &["append", "w", "--actor", "p1", attack]);
    ok(&store, &["append", "w", "--actor", "p2", r#"{"type":"pass"}"#]);
    // Alice (p1) has the Response opportunity now: Bob waits.
    let mut p = recorder(&[&store[..], &["record", "w", "--as", "p2"]].concat());
    expect(&mut p, "p2 has no move now; waiting for p1");
    ok(&store, &["append", "w", "--actor", "p1", r#"{"type":"pass"}"#]);
    // Part II: Bob defends or lets the attack through.
    expect(&mut p, "move after seq 3:");
    p.send("\x1b").unwrap();
    p.expect(expectrl::Eof).unwrap();
}

/// On a directory store no one else can record while the recorder holds
/// it: a seat with nothing to do is told so, not left waiting.
#[test]
fn on_a_directory_store_a_seat_with_no_move_is_told_why_it_cannot_wait() {
    let dir = tempfile::tempdir().unwrap();
    let store = ["--data", dir.path().to_str().unwrap()];
    ok(&store, &["new", "w", "--ruleset", "wtactics", "--seat", "p1=Alice", "--seat", "p2=Bob"]);
    let attack = r#"{"type":"announce","what":"attackers","attackers":[{"name":"Orc Raider","atk":3,"def":2}]}"#;
    ok(&store, &["append", "w", "--actor", "p1", attack]);
    ok(&store, &["append", "w", "--actor", "p2", r#"{"type":"pass"}"#]);
    let mut p = recorder(&[&store[..], &["record", "w", "--as", "p2"]].concat());
    expect(&mut p, "no one else can record in this store while it is open here");
    expect(&mut p, "move after seq 2:");
    p.send("\x1b").unwrap();
    p.expect(expectrl::Eof).unwrap();
}
