//! The moves agree with the reducer, on every ruleset (`kernel::moves`):
//! - complete: every event of each sample game is admitted by a move
//!   offered to its actor just before it (and every action any test records
//!   through `Sim` is, by `common::assert_offered`);
//! - sound: an action built from a random move, with random allowed picks
//!   and in-bounds values, is accepted, or refused only for a value the
//!   table typed, and the refusal names it.
//!
//! The games are walked from each prefix of the sample, with a fixed
//! pseudo-random sequence: the same moves are tried on every run.

mod common;

use arbiter::kernel::moves::put;
use arbiter::kernel::{Entry, EntryKind, Move};
use common::*;
use serde_json::{Value, json};

/// The sample recorded through `Sim`, up to (not including) line `upto`:
/// `Sim::try_act` checks each action is offered (`assert_offered`).
fn sample_sim(ruleset: &str, upto: usize) -> Sim {
    let lines = sample_lines(ruleset);
    let mut sim = Sim::open(lines[0].1.clone());
    for (actor, action) in &lines[1..upto.max(1)] {
        sim.act(actor, action.clone());
    }
    sim
}

fn every_sample_event_is_offered(ruleset: &str) {
    let lines = sample_lines(ruleset);
    let mut sim = Sim::open(lines[0].1.clone());
    for (actor, action) in &lines[1..] {
        assert_offered(&sim.table, &sim.events, actor, action);
        sim.act(actor, action.clone());
    }
}

/// A small, fixed pseudo-random sequence (splitmix64).
struct Dice(u64);

impl Dice {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next() % n as u64) as usize }
    }
    fn between(&mut self, min: i64, max: i64) -> i64 {
        min + (self.next() % ((max - min) as u64 + 1)) as i64
    }
}

/// A value for `entry`, of its kind and within its bounds.
fn entered(entry: &Entry, sim: &Sim, dice: &mut Dice) -> Value {
    match entry.kind {
        EntryKind::Card | EntryKind::Name | EntryKind::Text => {
            if !entry.suggest.is_empty() && dice.below(3) > 0 {
                return entry.suggest[dice.below(entry.suggest.len())].value.clone();
            }
            let word = match entry.kind {
                EntryKind::Card => "Card",
                EntryKind::Name => "Name",
                _ => "Text",
            };
            json!(format!("{word} {}", dice.below(4)))
        }
        EntryKind::Event => {
            let seq = dice.between(entry.min.unwrap_or(0), entry.max.unwrap_or(sim.events.len() as i64 - 1)) as usize;
            json!({"seq": seq, "hash": sim.events[seq].hash})
        }
        EntryKind::List => {
            let min = entry.min.unwrap_or(0);
            let max = entry.max.unwrap_or(min + 3).min(min + 3);
            let n = dice.between(min, max);
            (0..n)
                .map(|_| {
                    let mut item = json!({});
                    for c in &entry.choose {
                        if c.min == 0 && dice.below(3) == 0 {
                            continue;
                        }
                        put(&mut item, &c.field, c.options[dice.below(c.options.len())].value.clone());
                    }
                    for e in &entry.items {
                        if e.optional && dice.below(2) == 0 {
                            continue;
                        }
                        put(&mut item, &e.field, entered(e, sim, dice));
                    }
                    item
                })
                .collect()
        }
        _ => {
            let min = entry.min.unwrap_or(entry.max.map_or(0, |m| m - 12));
            let max = entry.max.unwrap_or(min + 12);
            json!(dice.between(min, max))
        }
    }
}

/// An action built from `m` with random allowed picks and entered values,
/// and the values entered (path, value).
fn built(m: &Move, sim: &Sim, dice: &mut Dice) -> (Value, Vec<(String, Value)>) {
    let mut values = vec![];
    for c in &m.choose {
        if c.list {
            let mut left: Vec<_> = c.options.iter().map(|o| o.value.clone()).collect();
            let n = dice.between(c.min as i64, (c.max as usize).min(left.len()) as i64) as usize;
            let picked: Vec<Value> = (0..n).map(|_| left.remove(dice.below(left.len()))).collect();
            values.push((c.field.clone(), Value::Array(picked)));
        } else if c.min == 0 && dice.below(3) == 0 {
            continue;
        } else {
            values.push((c.field.clone(), c.options[dice.below(c.options.len())].value.clone()));
        }
    }
    let mut typed = vec![];
    for e in &m.enter {
        if e.optional && dice.below(2) == 0 {
            continue;
        }
        let v = entered(e, sim, dice);
        typed.push((e.field.clone(), v.clone()));
        values.push((e.field.clone(), v));
    }
    (m.build(&values), typed)
}

/// Whether `message` names one of the typed values: the value itself (a
/// name or text of three letters or more, a number as a word of its own:
/// "totals 19, not 4"), or its field as a word ("roll: ...", "the rolls put
/// them in the order ...", "reason \"\" must ...").
fn names_a_typed_value(message: &str, typed: &[(String, Value)]) -> bool {
    let words: Vec<&str> = message.split(|c: char| !c.is_alphanumeric() && c != '_').collect();
    typed.iter().any(|(field, value)| {
        let key = field.rsplit('/').find(|k| k.parse::<usize>().is_err()).unwrap_or(field);
        let field_named = words.iter().any(|w| w.starts_with(key));
        let value_named = match value {
            Value::String(s) => s.len() >= 3 && message.contains(s.as_str()),
            Value::Number(n) => words.contains(&n.to_string().as_str()),
            other => message.contains(&other.to_string()),
        };
        field_named || value_named
    })
}

/// Random walks from each prefix of the sample: every move tried is built
/// at random and must be accepted, or refused for a typed value it names.
fn moves_are_sound(ruleset: &str, walks_per_prefix: u64, steps: usize) {
    let lines = sample_lines(ruleset);
    let (mut tried, mut accepted) = (0, 0);
    for upto in 1..=lines.len() {
        for walk in 0..walks_per_prefix {
            let mut sim = sample_sim(ruleset, upto);
            let mut dice = Dice(upto as u64 * 1_000 + walk);
            for _ in 0..steps {
                let moves = sim.table.moves(sim.events.len() as u64);
                assert!(!moves.is_empty(), "no moves at {}", sim.view().step.reference);
                // Mostly the combat's own moves: notes and rulings are offered everywhere.
                let combat: Vec<&Move> = moves.iter().filter(|m| !matches!(m.kind.name(), "note" | "ruling")).collect();
                let m = if !combat.is_empty() && dice.below(8) > 0 {
                    combat[dice.below(combat.len())]
                } else {
                    &moves[dice.below(moves.len())]
                };
                let (action, typed) = built(m, &sim, &mut dice);
                assert_eq!(m.admits(&action), Ok(()), "{}: a move does not admit what it built: {action}", m.label);
                tried += 1;
                match sim.try_act(&m.seat, action.clone()) {
                    Ok(_) => accepted += 1,
                    Err(v) => {
                        let at = &v.step.reference;
                        assert!(
                            !typed.is_empty(),
                            "{ruleset} at {at}: {} {action} built from move {:?} with no typed value was refused: {}",
                            m.seat,
                            m.label,
                            v.message
                        );
                        assert!(
                            names_a_typed_value(&v.message, &typed),
                            "{ruleset} at {at}: the refusal of {} {action} (move {:?}) does not name a typed value {typed:?}: {}",
                            m.seat,
                            m.label,
                            v.message
                        );
                    }
                }
            }
        }
    }
    // The walks must mostly move the game on, or they test little.
    assert!(accepted * 2 > tried, "{ruleset}: only {accepted} of {tried} random moves were accepted");
}

macro_rules! ruleset_tests {
    ($($name:ident),*) => {$(
        mod $name {
            #[test]
            fn every_sample_event_is_offered_just_before_it() {
                super::every_sample_event_is_offered(stringify!($name));
            }

            #[test]
            fn actions_built_from_moves_are_accepted() {
                super::moves_are_sound(stringify!($name), 3, 25);
            }
        }
    )*};
}

ruleset_tests!(doomtrooper, wtactics, riftbound, rawdeal, gurps);
