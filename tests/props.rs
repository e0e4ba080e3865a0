//! Property tests: replay is deterministic, and any single-byte change to
//! an export is detected.

mod common;

use std::io::Cursor;

use arbiter::event::{Draft, parse_time, seal};
use arbiter::record::{canonical_bytes, read_export, verify};
use arbiter::rules::fold;
use common::*;
use proptest::prelude::*;
use serde_json::{Value, json};

const A: &str = "Max";
const D: &str = "Leg";

/// A plausible action for the current state, steered by `pick` and `n`: most
/// are legal, some are not (they must be refused and change nothing).
fn candidate(sim: &Sim, pick: u8, n: u8) -> (String, Value) {
    let view = sim.view();
    let seats = ["p1", "p2", "p3"];
    let actor = if pick.is_multiple_of(7) || view.may_act.is_empty() {
        seats[n as usize % 3].to_string()
    } else {
        view.may_act[n as usize % view.may_act.len()].clone()
    };
    let Some(c) = sim.state().combat.as_ref() else {
        let def = seats[(n as usize + 1) % 3];
        return (actor, combat(def, A, D));
    };
    let warriors = [c.attacker.as_str(), c.defender.as_str()];
    let last = sim.events.len() as u64 - 1;
    let standing_mods: Vec<u64> =
        c.effects.effects.iter().filter(|e| e.kind == "modify" && c.effects.stands(e.seq)).map(|e| e.seq).collect();
    let action = match (view.step.number.as_str(), pick % 5) {
        ("2", _) => tactic("Fight"),
        ("7", _) => warzone(if n.is_multiple_of(2) { None } else { Some("Mars") }),
        ("24" | "26", 0) => play("equipment", "Ticker"),
        ("24" | "26", _) => equipment(&["Bolter"]),
        ("32", _) => standing((warriors[0], n as i64), (warriors[1], 3)),
        ("37", _) => results(
            &[(warriors[0], "unharmed"), (warriors[1], if n.is_multiple_of(2) { "wounded" } else { "killed" })],
            &standing_mods,
        ),
        ("44", _) => {
            let r = c
                .first_combat
                .results
                .clone()
                .or(c.second_combat.as_ref().and_then(|s| s.results.clone()))
                .unwrap_or_default();
            let list: Vec<(String, String)> = r
                .iter()
                .map(|o| (o.warrior.clone(), serde_json::to_value(o.outcome).unwrap().as_str().unwrap().to_string()))
                .collect();
            json!({"type": "resolve", "what": "status", "status": list.iter().map(|(w, o)| json!({"warrior": w, "outcome": o})).collect::<Vec<_>>()})
        }
        ("45" | "47", _) => award(n as u64 % 3),
        (_, 0) => counter("Cancel", last.saturating_sub(n as u64 % 3)),
        (_, 1) => match view.step.number.as_str() {
            "12-15" => {
                json!({"type": "play", "effect": "change_combatants", "card": "Body Guard", "defender": format!("G{}", n % 2)})
            }
            "16" | "18" => {
                json!({"type": "play", "effect": "strike_order", "card": "Ambush", "first": seats[n as usize % 2]})
            }
            "20" | "22" | "28" | "30" => play("end_combat", "Smoke Bomb"),
            "33-36" => play("modify", "Stimulants"),
            _ => play("modify", "Out Of Place"),
        },
        _ if view.awaiting_ruling.is_some() => {
            json!({"type": "resolve", "what": "strike_order", "first": "p1"})
        }
        _ => json!({"type": "pass"}),
    };
    let actor = if view.awaiting_ruling.is_some() { "Dana".to_string() } else { actor };
    (actor, action)
}

fn play_out(choices: &[(u8, u8)]) -> Sim {
    let mut sim = Sim::new(&["p1", "p2", "p3"], &["Dana"]);
    for (pick, n) in choices {
        let (actor, action) = candidate(&sim, *pick, *n);
        let _ = sim.try_act(&actor, action); // a refusal leaves the state as it was (checked in try_act's callers)
    }
    sim
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    #[test]
    fn replaying_an_accepted_stream_reproduces_identical_state_and_hashes(choices in prop::collection::vec((any::<u8>(), any::<u8>()), 1..300)) {
        let sim = play_out(&choices);
        // Fold the stored events from nothing: the same state.
        let replayed = fold(&sim.events, |_, _| {}).unwrap().unwrap();
        prop_assert_eq!(&replayed, &sim.table);
        // Re-seal the same drafts at the same times: the same hashes.
        let mut prev = None;
        for e in &sim.events {
            let draft = Draft { actor: e.actor.clone(), action: e.action.clone(), at: Some(e.at.clone()) };
            let (again, _) = seal(&draft, prev.as_ref(), parse_time(&e.at).unwrap()).unwrap();
            prop_assert_eq!(&again, e);
            prev = Some(again.link());
        }
        // And the export verifies, with the same head.
        let export: Vec<u8> = sim.events.iter().flat_map(|e| { let mut b = canonical_bytes(e); b.push(b'\n'); b }).collect();
        let (v, table) = verify(read_export(Cursor::new(export)), None).unwrap();
        prop_assert_eq!(v.head, sim.events.last().unwrap().hash.clone());
        prop_assert_eq!(table.unwrap(), sim.table);
    }

    #[test]
    fn any_single_byte_change_to_an_export_is_detected(choices in prop::collection::vec((any::<u8>(), any::<u8>()), 1..120), at in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let sim = play_out(&choices);
        let export: Vec<u8> = sim.events.iter().flat_map(|e| { let mut b = canonical_bytes(e); b.push(b'\n'); b }).collect();
        let i = at.index(export.len());
        prop_assume!(export[i] != byte);
        let mut changed = export.clone();
        changed[i] = byte;
        let head = sim.events.last().unwrap().hash.clone();
        prop_assert!(verify(read_export(Cursor::new(changed)), Some(&head)).is_err(), "byte {} changed to {:#x} went unnoticed", i, byte);
    }
}

#[test]
fn random_play_reaches_deep_into_the_breakdown() {
    // Guards the property tests against testing only step 1 and 2.
    let choices: Vec<(u8, u8)> = (0..600u32).map(|i| ((i * 7 % 251) as u8, (i * 13 % 253) as u8)).collect();
    let sim = play_out(&choices);
    let deepest = sim.events.len();
    assert!(deepest > 150, "only {deepest} events accepted");
    assert!(!sim.state().finished.is_empty(), "no combat finished");
}
