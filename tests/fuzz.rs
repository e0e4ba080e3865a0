//! Fuzzing with proptest: whatever bytes arrive, the parsers answer with a
//! value or an error, never a panic, and what they accept is consistent.
//!
//! - `json::parse_strict` on arbitrary text and on mutated sample events:
//!   what it accepts, written canonically, parses back to the same value.
//! - `event::decode` and `event::parse_stored` on arbitrary bytes and on
//!   mutated sealed events: an event `decode` accepts is read back by
//!   `parse_stored` from its canonical bytes, and an event `parse_stored`
//!   accepts is exactly what `decode` makes of those bytes (its fast path
//!   agrees with the slow one).
//! - each ruleset's payloads (`Table::apply`, which parses the action into
//!   the ruleset's payload type, then applies it), at positions along its
//!   sample game, with arbitrary JSON and with mutations of the sample's own
//!   actions: a refusal is a `Violation`, and `apply_in_place` agrees with
//!   `apply` (a refusal leaves the table exactly as it was).
//!
//! Deterministic: a fixed seed (`PROPTEST_RNG_SEED` overrides it) and a few
//! hundred cases per property, seconds in a debug build. `tools/fuzz` runs
//! the same properties with many more cases (`PROPTEST_CASES`) and other
//! seeds. A failure found is kept below as a plain regression test.

use std::sync::OnceLock;

use arbiter::event::{Draft, Header, check_stored, decode, parse_stored, parse_time, seal};
use arbiter::json::{canonical, parse_strict};
use arbiter::rules::Table;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};
use serde_json::{Map, Value, json};

const SEED: u64 = 0x0a2b_17e2_2026;

/// Every ruleset this build knows, from the registry.
fn rulesets() -> Vec<&'static str> {
    arbiter::rules::Kind::ALL.iter().map(|k| k.name()).collect()
}

/// Runs `test` on `cases` values of `strategy` (or `PROPTEST_CASES`), with
/// the fixed seed (or `PROPTEST_RNG_SEED`), persisting nothing.
fn check<S: Strategy>(cases: u32, strategy: S, test: impl Fn(S::Value) -> Result<(), TestCaseError>) {
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let config = Config {
        cases: env("PROPTEST_CASES").map_or(cases, |c| c as u32),
        rng_seed: RngSeed::Fixed(env("PROPTEST_RNG_SEED").unwrap_or(SEED)),
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    if let Err(e) = runner.run(&strategy, test) {
        panic!("{e}");
    }
}

/// One sample game: its submissions and the events they seal into.
struct Sample {
    /// (actor, action) per line; line 0 is the header.
    lines: Vec<(String, Value)>,
    /// Each line sealed in order (canonical bytes), as a store holds them.
    sealed: Vec<Vec<u8>>,
    /// The table after 0, a third, two thirds and all of the sample's
    /// actions the rules took (a line they refuse, such as a ruling, which
    /// the fold applies elsewhere, is passed over).
    tables: Vec<(u64, Table)>,
}

fn samples() -> &'static Vec<Sample> {
    static SAMPLES: OnceLock<Vec<Sample>> = OnceLock::new();
    SAMPLES.get_or_init(|| rulesets().iter().map(|r| sample(r)).collect())
}

fn sample(ruleset: &str) -> Sample {
    let path = format!("{}/examples/{ruleset}-sample.actions.jsonl", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<(String, Value)> = text
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (v["actor"].as_str().unwrap().to_string(), v["action"].clone())
        })
        .collect();
    let t0 = parse_time("2026-11-21T15:00:00Z").unwrap();
    let mut prev = None;
    let mut sealed = Vec::new();
    for (i, (actor, action)) in lines.iter().enumerate() {
        let draft = Draft { actor: actor.clone(), action: action.clone(), at: None };
        let (event, bytes) = seal(&draft, prev.as_ref(), t0 + chrono::TimeDelta::seconds(i as i64)).unwrap();
        prev = Some(event.link());
        sealed.push(bytes);
    }
    let header: Header = serde_json::from_value(lines[0].1.clone()).unwrap();
    let mut table = Table::open(&header).unwrap();
    let marks = [1, lines.len() / 3, 2 * lines.len() / 3, lines.len()];
    let mut tables = vec![(1, table.clone())];
    for (seq, (actor, action)) in lines.iter().enumerate().skip(1) {
        if let Ok(next) = table.apply(seq as u64, actor, action) {
            table = next;
        }
        if marks[1..].contains(&(seq + 1)) {
            tables.push((seq as u64 + 1, table.clone()));
        }
    }
    Sample { lines, sealed, tables }
}

/// Text that JSON parsers meet at their edges.
const TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "\\",
    "\\u0000",
    "\\ud800",
    "\\udc00x",
    "\\u",
    "null",
    "true",
    "-0",
    "0.0",
    "1e309",
    "1.5",
    "1E2",
    "-",
    "9007199254740993",
    "18446744073709551616",
    "-9223372036854775809",
    "00",
    "\u{feff}",
    "\u{0}",
    "\"hash\"",
    "\"seq\"",
    "\"v\"",
    "\"type\"",
    "[[[[[[[[[[[[[[[[[[",
    "}}}}",
    "\"a\":1,\"a\":2",
    "\u{2028}",
    "\u{ffff}",
];

/// A change to bytes: flip, cut, insert a token, repeat a slice, or end.
#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Cut(usize, usize),
    Insert(usize, usize),
    Repeat(usize, usize),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Mutation::Flip(at, b)),
        (any::<usize>(), 1usize..16).prop_map(|(at, n)| Mutation::Cut(at, n)),
        (any::<usize>(), 0..TOKENS.len()).prop_map(|(at, t)| Mutation::Insert(at, t)),
        (any::<usize>(), 1usize..64).prop_map(|(at, n)| Mutation::Repeat(at, n)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn mutate(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let len = bytes.len().max(1);
        match *m {
            Mutation::Flip(at, b) if !bytes.is_empty() => bytes[at % len] ^= b.max(1),
            Mutation::Cut(at, n) if !bytes.is_empty() => {
                let at = at % len;
                bytes.drain(at..(at + n).min(bytes.len()));
            }
            Mutation::Insert(at, t) => {
                let at = at % (bytes.len() + 1);
                bytes.splice(at..at, TOKENS[t].bytes());
            }
            Mutation::Repeat(at, n) if !bytes.is_empty() => {
                let at = at % len;
                let slice: Vec<u8> = bytes[at..(at + n).min(bytes.len())].to_vec();
                bytes.splice(at..at, slice);
            }
            Mutation::Truncate(at) => bytes.truncate(at % (bytes.len() + 1)),
            _ => {}
        }
    }
    bytes
}

/// Bytes to feed a parser: arbitrary, or a sealed sample event mutated.
fn input() -> impl Strategy<Value = Vec<u8>> {
    let sealed =
        (0..rulesets().len(), any::<usize>(), prop::collection::vec(mutation(), 1..6)).prop_map(|(r, i, ms)| {
            let sample = &samples()[r];
            mutate(sample.sealed[i % sample.sealed.len()].clone(), &ms)
        });
    prop_oneof![
        1 => prop::collection::vec(any::<u8>(), 0..256),
        1 => any::<String>().prop_map(String::into_bytes),
        4 => sealed,
    ]
}

/// The canonical bytes `decode` and `parse_stored` accept agree.
fn check_event_bytes(bytes: &[u8]) -> Result<(), TestCaseError> {
    let text = String::from_utf8_lossy(bytes);
    if let Ok(value) = parse_strict(&text) {
        let again = parse_strict(std::str::from_utf8(&canonical(&value)).unwrap());
        prop_assert_eq!(again.as_ref().ok(), Some(&value), "canonical JSON parses back to the same value");
    }
    if let Ok((event, canonical_bytes)) = decode(&text) {
        let stored = parse_stored(&canonical_bytes);
        prop_assert!(stored.is_ok(), "decode took it, parse_stored refused its canonical bytes: {:?}", stored.err());
        prop_assert_eq!(stored.unwrap().event, event);
    }
    // A stored event is read in two halves (`parse_stored`, then
    // `check_stored`: size, hash, seq); together they take exactly what
    // `decode` takes, when the bytes are its canonical bytes.
    let stored = parse_stored(bytes).and_then(|p| check_stored(&p, p.event.seq, bytes).map(|()| p));
    if let Ok(parsed) = &stored {
        let text = std::str::from_utf8(bytes);
        prop_assert!(text.is_ok(), "parse_stored took bytes that are not UTF-8");
        let decoded = decode(text.unwrap());
        prop_assert!(decoded.is_ok(), "parse_stored and check_stored took what decode refuses: {:?}", decoded.err());
        let (event, canonical_bytes) = decoded.unwrap();
        prop_assert_eq!(&parsed.event, &event);
        prop_assert_eq!(canonical_bytes.as_slice(), bytes, "parse_stored took bytes that are not canonical");
    } else if let Ok((_, canonical_bytes)) = decode(&text) {
        prop_assert!(
            canonical_bytes != bytes,
            "decode took canonical bytes that a stored read refuses: {:?}",
            stored.err()
        );
    }
    Ok(())
}

#[test]
fn parse_strict_decode_and_parse_stored_never_panic_and_agree() {
    check(4000, input(), |bytes| check_event_bytes(&bytes));
}

/// Words the rulesets read, so that mutated payloads reach past the first
/// unknown field.
const WORDS: &[&str] = &[
    "p1",
    "p2",
    "p3",
    "p4",
    "Dana",
    "announce",
    "pass",
    "play",
    "counter",
    "resolve",
    "ruling",
    "note",
    "combat",
    "battle_tactic",
    "warzone",
    "equipment",
    "standing",
    "results",
    "status",
    "award",
    "turn",
    "attackers",
    "defenders",
    "move",
    "damage",
    "chain_item",
    "control",
    "undefended",
    "next_combat",
    "unmark",
    "invite",
    "action",
    "reaction",
    "trigger",
    "attack",
    "defend",
    "Fight",
    "Altar",
    "Forge",
    "Troll",
    "Knight",
    "Cancel",
    "wounded",
    "killed",
    "",
    "mode",
    "1v1",
    "2v2",
    "battlefields",
    "teams",
    "scores",
    "units",
    "first_turn",
    "might",
    "name",
    "team1",
    "seats",
    "judges",
    "options",
    "id",
    "atk",
    "def",
    "speed",
    "dx",
    "characters",
    "rounding",
];

fn word() -> impl Strategy<Value = String> {
    prop_oneof![4 => (0..WORDS.len()).prop_map(|i| WORDS[i].to_string()), 1 => ".{0,12}"]
}

/// Any JSON value that strict parsing allows (integers within 2^53, no
/// floats), weighted to the words and shapes payloads use.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        prop_oneof![
            -3i64..70,
            Just((1i64 << 53) - 1),
            Just(-(1i64 << 53) + 1),
            any::<i64>().prop_map(|n| n % (1i64 << 53))
        ]
        .prop_map(|n| json!(n)),
        word().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((word(), inner), 0..6).prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// A change to an action: a member set to any value, removed, or added.
fn mutate_value(value: &mut Value, path: &[usize], replacement: Value, remove: bool) {
    let Some((&first, rest)) = path.split_first() else {
        *value = replacement;
        return;
    };
    match value {
        Value::Object(map) if !map.is_empty() => {
            let key = map.keys().nth(first % map.len()).unwrap().clone();
            if rest.is_empty() && remove {
                map.remove(&key);
            } else {
                mutate_value(map.get_mut(&key).unwrap(), rest, replacement, remove);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            let len = items.len();
            if rest.is_empty() && remove {
                items.remove(first % len);
            } else {
                mutate_value(&mut items[first % len], rest, replacement, remove);
            }
        }
        _ => *value = replacement,
    }
}

/// An action for a ruleset's table: a sample action mutated once or twice,
/// a sample action with a member added, or any JSON at all.
fn action(r: usize) -> impl Strategy<Value = Value> {
    let n = samples()[r].lines.len();
    let mutated =
        (1..n, prop::collection::vec((prop::collection::vec(any::<usize>(), 0..4), json_value(), any::<bool>()), 1..3))
            .prop_map(move |(i, changes)| {
                let mut action = samples()[r].lines[i].1.clone();
                for (path, replacement, remove) in changes {
                    mutate_value(&mut action, &path, replacement, remove);
                }
                action
            });
    let added = (1..n, word(), json_value()).prop_map(move |(i, key, v)| {
        let mut action = samples()[r].lines[i].1.clone();
        if let Some(o) = action.as_object_mut() {
            o.insert(key, v);
        }
        action
    });
    let typed = (0..WORDS.len(), prop::collection::vec((word(), json_value()), 0..5)).prop_map(|(t, kv)| {
        let mut o: Map<String, Value> = kv.into_iter().collect();
        o.insert("type".into(), json!(WORDS[t]));
        Value::Object(o)
    });
    prop_oneof![4 => mutated, 1 => added, 2 => typed, 1 => json_value()]
}

/// A refusal is a `Violation`, and the in-place fold agrees with `apply`.
fn check_rules(table: &Table, seq: u64, actor: &str, action: &Value) -> Result<(), TestCaseError> {
    let applied = table.apply(seq, actor, action);
    let mut in_place = table.clone();
    let done = in_place.apply_in_place(seq, actor, action);
    match (&applied, &done) {
        (Ok(next), Ok(())) => prop_assert_eq!(next, &in_place, "apply and apply_in_place agree"),
        (Err(a), Err(b)) => {
            prop_assert_eq!(a, b, "the same refusal");
            prop_assert_eq!(&in_place, table, "a refusal changes nothing");
        }
        _ => prop_assert!(false, "apply said {:?}, apply_in_place {:?}", applied.as_ref().err(), done.err()),
    }
    Ok(())
}

fn rules_never_panic(r: usize) {
    let actors = {
        let header: Header = serde_json::from_value(samples()[r].lines[0].1.clone()).unwrap();
        let mut a = header.seat_ids();
        a.extend(header.judges.iter().cloned());
        a.push("stranger".into());
        a
    };
    let positions = samples()[r].tables.len();
    let strategy = (0..positions, 0..actors.len(), action(r));
    check(1500, strategy, |(p, a, action)| {
        let (seq, table) = &samples()[r].tables[p];
        check_rules(table, *seq, &actors[a], &action)
    });
}

#[test]
fn doomtrooper_payloads_are_refused_never_panic() {
    rules_never_panic(0);
}

#[test]
fn wtactics_payloads_are_refused_never_panic() {
    rules_never_panic(1);
}

#[test]
fn riftbound_payloads_are_refused_never_panic() {
    rules_never_panic(2);
}

#[test]
fn rawdeal_payloads_are_refused_never_panic() {
    rules_never_panic(3);
}

#[test]
fn gurps_payloads_are_refused_never_panic() {
    rules_never_panic(4);
}

/// A header (event 0) for a ruleset: the sample's, with its options and
/// seats mutated. `Table::open` parses the ruleset's options; a bad header
/// is a `Violation` (or, before it, a serde error), never a panic.
fn headers_never_panic(r: usize) {
    let header = samples()[r].lines[0].1.clone();
    let strategy =
        prop::collection::vec((prop::collection::vec(any::<usize>(), 0..4), json_value(), any::<bool>()), 1..4)
            .prop_map(move |changes| {
                let mut h = header.clone();
                for (path, replacement, remove) in changes {
                    mutate_value(&mut h, &path, replacement, remove);
                }
                h
            });
    check(1000, strategy, |h| {
        if let Ok(header) = serde_json::from_value::<Header>(h) {
            let _ = Table::open(&header);
        }
        Ok(())
    });
}

#[test]
fn every_rulesets_header_and_options_are_refused_never_panic() {
    for r in 0..rulesets().len() {
        headers_never_panic(r);
    }
}
