//! Stores of several interleaved games built with the library, for the
//! tests that check the log (tests/log.rs with Python, tests/oracle.rs with
//! tlog_tiles and signed_note).

use std::path::Path;

use super::{arbiter, arbiter_stdin};

use arbiter::event::{Header, OpenTag, Seat};
use arbiter::record::{Recorder, Submission, create};
use arbiter::store::SledStore;
use serde_json::{Value, json};

use super::{combat, counter, tactic};

/// The header of game `table`: each game's own table, so that no two
/// games' event 0 are the same bytes (created within one millisecond, they
/// would be, and then a proof of one leaf is rightly a proof of the other).
pub fn header(table: u64) -> Header {
    Header {
        kind: OpenTag::Open,
        ruleset: "doomtrooper".into(),
        ruleset_version: 1,
        seats: vec![Seat { id: "p1".into(), name: "Ann".into() }, Seat { id: "p2".into(), name: "Ben".into() }],
        judges: vec!["Dana".into()],
        tournament: None,
        round: None,
        table: Some(table),
        options: Default::default(),
    }
}

/// The actor and action of event `seq` (>= 1) of every game here: p1's
/// combat, then a counter war (each seat counters the card before it).
pub fn step(seq: u64) -> (&'static str, Value) {
    match seq {
        1 => ("p1", combat("p2", "A", "D")),
        2 => ("p1", tactic("Fight")),
        s => (if s % 2 == 1 { "p2" } else { "p1" }, counter("Cancel", s - 1)),
    }
}

/// Events `seqs` as `arbiter append GAME -` reads them.
pub fn steps(seqs: std::ops::RangeInclusive<u64>) -> String {
    seqs.map(|seq| {
        let (actor, action) = step(seq);
        format!("{}\n", json!({"actor": actor, "action": action}))
    })
    .collect()
}

/// Records games g0, g1, ... of `lengths` events in a new store at `dir`
/// with the library, one event of each game in turn; returns the log's
/// leaves as (game, seq), in the order they were stored.
pub fn build(dir: &Path, lengths: &[u64]) -> Vec<(String, u64)> {
    let store = SledStore::open(dir).unwrap();
    let names: Vec<String> = (0..lengths.len()).map(|i| format!("g{i}")).collect();
    let mut recorders: Vec<Option<Recorder>> = lengths.iter().map(|_| None).collect();
    let mut order = Vec::new();
    for seq in 0..lengths.iter().copied().max().unwrap_or(0) {
        for (i, name) in names.iter().enumerate() {
            if seq >= lengths[i] {
                continue;
            }
            if seq == 0 {
                create(&store, name, &header(i as u64 + 1), "organiser", None).unwrap();
                recorders[i] = Some(Recorder::load(&store, name).unwrap());
            } else {
                let (actor, action) = step(seq);
                let sub = Submission { actor: actor.into(), action, at: None };
                recorders[i].as_mut().unwrap().append(&sub, Some(seq)).unwrap();
            }
            order.push((name.clone(), seq));
        }
    }
    // sled lets go of its lock a moment after a drop: wait, so that the
    // CLI run next finds the store free.
    drop(recorders);
    store.close();
    order
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs a verb that must succeed; its stdout.
#[track_caller]
pub fn ok(data: &Path, args: &[&str]) -> String {
    let out = arbiter(data, args);
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[track_caller]
pub fn ok_stdin(data: &Path, args: &[&str], stdin: &str) -> String {
    let out = arbiter_stdin(data, args, stdin);
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// A game's exported lines.
pub fn export(data: &Path, game: &str) -> Vec<String> {
    ok(data, &["export", game]).lines().map(str::to_string).collect()
}

/// `arbiter --json checkpoint`: {origin, size, root, checkpoint, key, new}.
pub fn checkpoint(data: &Path) -> Value {
    serde_json::from_str(&ok(data, &["--json", "checkpoint"])).unwrap()
}

/// Each seat's token, by (game, seat).
pub type Tokens<'g> = std::collections::BTreeMap<(&'g str, &'static str), String>;

/// Two Doomtrooper games served by `s`, appended through the API in turns
/// (a seat's token each): `games.0` to seq `first`, `games.1` to `second`
/// (at most `first`). Each (game, seq) in the order stored, event 0 of
/// both first; and each seat's token, by (game, seat).
pub fn interleaved<'g>(
    s: &super::server::Served,
    games: (&'g str, &'g str),
    access: &str,
    first: u64,
    second: u64,
) -> (Vec<(&'g str, u64)>, Tokens<'g>) {
    s.doomtrooper(games.0, "public");
    s.doomtrooper(games.1, access);
    let tokens: std::collections::BTreeMap<(&str, &'static str), String> =
        [games.0, games.1].iter().flat_map(|g| ["p1", "p2"].map(|p| ((*g, p), s.token(g, "seat", p)))).collect();
    let mut order = vec![(games.0, 0), (games.1, 0)];
    for seq in 1..=first {
        for game in [games.0, games.1] {
            if game == games.1 && seq > second {
                continue;
            }
            let (actor, action) = step(seq);
            let (status, v) = s.append(game, &tokens[&(game, actor)], actor, action, seq);
            assert_eq!(status, 201, "{v}");
            order.push((game, seq));
        }
    }
    (order, tokens)
}
