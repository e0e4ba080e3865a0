//! Fold rate per ruleset at two game lengths: each bundled sample replayed
//! as long as needed, and the events per second of the in-place fold
//! (`Folder::push`, what verify and load run) measured over the same number
//! of events early in the game and late in it. The target is no growth with
//! length: the late rate equals the early one.
//!
//! A sample whose units or creatures die cannot follow itself as it is (a
//! dead card may not come back), so each round after the first renames the
//! cards that died in the round before it (`Troll` becomes `Troll #2`); seq
//! references (`target`, `counted`) are shifted as in `common::Sample`.
//!
//! `cargo bench --bench fold_rulesets [-- LENGTH]` (default 6,000: the copy
//! path is quadratic, and WTactics at 20,000 takes minutes).

use std::collections::BTreeSet;
use std::time::Instant;

use arbiter::event::{Draft, Event, parse_time, seal};
use arbiter::fold::Folder;
use arbiter::record::Submission;
use serde_json::Value;

const SAMPLES: [(&str, &str); 4] = [
    ("wtactics", include_str!("../examples/wtactics-sample.actions.jsonl")),
    ("riftbound", include_str!("../examples/riftbound-sample.actions.jsonl")),
    ("rawdeal", include_str!("../examples/rawdeal-sample.actions.jsonl")),
    ("gurps", include_str!("../examples/gurps-sample.actions.jsonl")),
];

/// Events timed at each point of the game.
const WINDOW: usize = 1_000;

fn main() {
    let length: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(6_000);
    let early = 2_000.min(length);
    println!("events/s over {WINDOW} events ending at event {early} and at event {length} (best of 3)");
    println!("  in place: Table::apply_in_place (Folder::push); copy: Table::apply (a copy of the state per event)");
    for (ruleset, sample) in SAMPLES {
        let (events, stopped) = repeated(sample, length);
        if let Some(why) = stopped {
            println!("  {ruleset:<10} the sample stops repeating at event {}: {why}", events.len());
        }
        if events.len() < early + WINDOW {
            continue;
        }
        let n = events.len();
        for (path, in_place) in [("copy", false), ("in place", true)] {
            let (a, b) = rates(&events, early, in_place);
            println!(
                "  {ruleset:<10} {path:<8} at {early:>7}: {a:>9.0}   at {n:>7}: {b:>9.0}   late/early {:.2}",
                b / a
            );
        }
    }
}

/// The events/s of `WINDOW` events ending at `early`, and of the last `WINDOW` (best of 3 folds).
fn rates(events: &[Event], early: usize, in_place: bool) -> (f64, f64) {
    let n = events.len();
    let (mut a, mut b) = (0f64, 0f64);
    for _ in 0..3 {
        let mut folder = Folder::new();
        folder.push(&events[0], events).unwrap();
        let mut table = folder.table().unwrap().clone();
        let mut timed = |range: std::ops::Range<usize>, measure: bool| {
            let t = Instant::now();
            for e in &events[range.clone()] {
                if in_place {
                    table.apply_in_place(e.seq, &e.actor, &e.action).unwrap();
                } else {
                    table = table.apply(e.seq, &e.actor, &e.action).unwrap();
                }
            }
            if measure { range.len() as f64 / t.elapsed().as_secs_f64() } else { 0.0 }
        };
        timed(1..early - WINDOW, false);
        a = a.max(timed(early - WINDOW..early, true));
        timed(early..n - WINDOW, false);
        b = b.max(timed(n - WINDOW..n, true));
    }
    (a, b)
}

/// The sample (header first) followed by itself until `length` events, each
/// round checked by the fold as it is sealed; or as far as it goes, and why not further.
fn repeated(sample: &str, length: usize) -> (Vec<Event>, Option<String>) {
    let subs: Vec<Submission> =
        sample.lines().filter(|l| !l.trim().is_empty()).map(|l| Submission::parse(l).unwrap()).collect();
    let at = parse_time("2026-11-21T10:00:00Z").unwrap();
    let mut events: Vec<Event> = vec![];
    let mut folder = Folder::new();
    let seal_one = |events: &mut Vec<Event>, folder: &mut Folder, sub: &Submission| -> Result<(), String> {
        let draft = Draft { actor: sub.actor.clone(), action: sub.action.clone(), at: None };
        let (event, _) = seal(&draft, events.last().map(|e| e.link()).as_ref(), at).unwrap();
        folder.push(&event, events).map_err(|e| format!("{e:?}"))?;
        events.push(event);
        Ok(())
    };
    seal_one(&mut events, &mut folder, &subs[0]).unwrap();
    let round = &subs[1..];
    let mut renamed: BTreeSet<String> = BTreeSet::new();
    let mut r = 0;
    while events.len() < length {
        let state = serde_json::to_value(&folder.table().unwrap().state).unwrap();
        let mut between = vec![];
        if r > 0 && state.get("creatures").is_some() {
            // WTactics: a new turn, and the first player unmarks its creatures that attacked.
            let p1 = round[0].actor.clone();
            between.push(
                Submission::parse(&format!(r#"{{"actor":"{p1}","action":{{"type":"announce","what":"turn"}}}}"#))
                    .unwrap(),
            );
            let marked: Vec<&String> = state["creatures"]
                .as_object()
                .unwrap()
                .iter()
                .filter(|(_, c)| c["owner"] == p1.as_str() && c["marked"] == true && c["dead"] != true)
                .map(|(k, _)| k)
                .collect();
            if !marked.is_empty() {
                let unmark = serde_json::json!({"actor": p1, "action": {"type": "resolve", "what": "unmark", "creatures": marked}});
                between.push(Submission::parse(&unmark.to_string()).unwrap());
            }
        }
        let offset = events.len() as u64 + between.len() as u64 - 1;
        for sub in &between {
            if let Err(e) = seal_one(&mut events, &mut folder, sub) {
                return (events, Some(e));
            }
        }
        for sub in round {
            if events.len() == length {
                break;
            }
            let mut sub = sub.clone();
            shifted(&mut sub.action, offset, &renamed, r);
            if let Err(e) = seal_one(&mut events, &mut folder, &sub) {
                return (events, Some(e));
            }
        }
        // The cards that died so far: the next round plays them under new names.
        let state = serde_json::to_value(&folder.table().unwrap().state).unwrap();
        renamed.clear();
        for key in ["discard", "trash"] {
            dead(&state[key], &mut renamed);
        }
        renamed = renamed.into_iter().map(|n| n.split(" #").next().unwrap().to_string()).collect();
        r += 1;
    }
    (events, None)
}

fn dead(v: &Value, into: &mut BTreeSet<String>) {
    match v {
        Value::String(s) => {
            into.insert(s.clone());
        }
        Value::Array(l) => l.iter().for_each(|x| dead(x, into)),
        Value::Object(m) => m.values().for_each(|x| dead(x, into)),
        _ => {}
    }
}

/// Round `r` of the sample: seq references shifted, dead cards renamed.
fn shifted(v: &mut Value, by: u64, renamed: &BTreeSet<String>, r: usize) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                match (k.as_str(), &mut *x) {
                    ("target", Value::Number(n)) => *x = (n.as_u64().unwrap() + by).into(),
                    ("counted", Value::Array(l)) => {
                        l.iter_mut().for_each(|q| *q = (q.as_u64().unwrap() + by).into());
                    }
                    _ => shifted(x, by, renamed, r),
                }
            }
        }
        Value::Array(l) => l.iter_mut().for_each(|x| shifted(x, by, renamed, r)),
        Value::String(s) if r > 0 && renamed.contains(s.as_str()) => *s = format!("{s} #{}", r + 1),
        _ => {}
    }
}
