//! `cargo bench --bench diff` (or `tools/bench-diff N`): two N-event games
//! (default 1,000,000) that share the first 90%, then `diff`: the hash
//! comparisons and time to find the common prefix, and the time of the
//! whole diff (which folds both records to compare the outcome).

use std::time::Instant;

use arbiter::compare::{self, Record};
use arbiter::event::{Draft, Event, Header, Link, seal};
use arbiter::record::{StoredGame, Submission, canonical_bytes};
use arbiter::store::{SledStore, Store};

const SAMPLE: &str = include_str!("../examples/doomtrooper-sample.actions.jsonl");

/// The sample's actions, shifted to follow `offset` events, with the battle tactic renamed (for the second game's tail).
fn shifted(sub: &Submission, by: u64, tactic: &str) -> Submission {
    let mut sub = sub.clone();
    if let Some(t) = sub.action.get_mut("target") {
        *t = (t.as_u64().unwrap() + by).into();
    }
    if let Some(serde_json::Value::Array(list)) = sub.action.get_mut("counted") {
        for q in list {
            *q = (q.as_u64().unwrap() + by).into();
        }
    }
    if sub.action.get("what").and_then(|w| w.as_str()) == Some("battle_tactic") {
        sub.action["tactic"] = tactic.into();
    }
    sub
}

/// Appends `count` events (the sample replayed) after `prev`, in batches made durable once each.
fn extend(store: &SledStore, game: &str, prev: &mut Link, actions: &[Submission], count: u64, tactic: &str) {
    let at = chrono::Utc::now();
    let mut batch: Vec<(Event, Vec<u8>)> = Vec::new();
    for _ in 0..count {
        let i = (prev.seq) as usize % actions.len(); // seq 1 is the sample's first action
        let round = prev.seq / actions.len() as u64 * actions.len() as u64;
        let sub = shifted(&actions[i], round, tactic);
        let draft = Draft { actor: sub.actor, action: sub.action, at: None };
        let (event, bytes) = seal(&draft, Some(prev), at).unwrap();
        *prev = event.link();
        batch.push((event, bytes));
        if batch.len() == 10_000 {
            store.append_batch(game, &batch).unwrap();
            batch.clear();
        }
    }
    store.append_batch(game, &batch).unwrap();
}

fn main() {
    let n: u64 = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(1_000_000);
    let shared = n * 9 / 10;
    let mut lines = SAMPLE.lines();
    let first = Submission::parse(lines.next().unwrap()).unwrap();
    let header: Header = serde_json::from_value(first.action).unwrap();
    let actions: Vec<Submission> = lines.map(|l| Submission::parse(l).unwrap()).collect();
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();

    let t = Instant::now();
    let open = Draft { actor: "organiser".into(), action: serde_json::to_value(&header).unwrap(), at: None };
    let (e0, b0) = seal(&open, None, chrono::Utc::now()).unwrap();
    store.append("a", &e0, &b0).unwrap();
    let mut head_a = e0.link();
    extend(&store, "a", &mut head_a, &actions, n - 1, "Fight");
    // b shares a's first `shared` events byte for byte (a fork), then goes its own way.
    let prefix: Vec<(Event, Vec<u8>)> = store
        .read("a", 0)
        .unwrap()
        .take(shared as usize)
        .map(|e| {
            let e = e.unwrap();
            let b = canonical_bytes(&e);
            (e, b)
        })
        .collect();
    store.append_batch("b", &prefix).unwrap();
    let mut head_b = prefix.last().unwrap().0.link();
    drop(prefix);
    extend(&store, "b", &mut head_b, &actions, n - shared, "Shoot");
    println!("built two {n}-event games sharing {shared} events in {:.1}s", t.elapsed().as_secs_f64());

    let (a, b) = (Record::Stored(StoredGame::new(&store, "a")), Record::Stored(StoredGame::new(&store, "b")));
    let t = Instant::now();
    let compare::Prefix { alignment, common, comparisons, .. } = compare::common_prefix(&a, &b).unwrap();
    let prefix_time = t.elapsed();
    println!(
        "common prefix: {common} events by {alignment:?}, {comparisons} hash comparisons, {:.3} ms",
        prefix_time.as_secs_f64() * 1e3
    );
    assert!(common >= shared && common < n);

    let t = Instant::now();
    let d = compare::diff(&a, &b).unwrap();
    println!(
        "whole diff (prefix, divergence, both records verified and folded, state delta): {:.1}s, {} changes, agree = {}",
        t.elapsed().as_secs_f64(),
        d.changes.len(),
        d.agree
    );
}
