//! Judges' rulings and notes, on every ruleset through the same fold.

mod common;

use arbiter::record::{ExportBytes, canonical_bytes, verify};
use common::*;
use serde_json::{Value, json};

fn concerns(sim: &Sim, seq: u64) -> Value {
    json!({"seq": seq, "hash": sim.events[seq as usize].hash})
}

fn rewind(sim: &Sim, to: u64, reason: &str) -> Value {
    json!({"type": "ruling", "kind": "rewind", "concerns": concerns(sim, to), "reason": reason, "rule": "Doomtrooper step 3"})
}

fn export(sim: &Sim) -> Vec<u8> {
    sim.events
        .iter()
        .flat_map(|e| {
            let mut b = canonical_bytes(e);
            b.push(b'\n');
            b
        })
        .collect()
}

#[test]
fn a_counter_accepted_by_mistake_is_rewound_and_play_continues() {
    let mut sim = Sim::new(&["p1", "p2"], &["Dana"]);
    sim.act("p1", combat("p2", "Max", "Leg"));
    let tactic = sim.act("p1", tactic("Fight"));
    // p2 plays "Nullify" as a counter; the table accepts it, a judge later finds
    // the card may not be played in this window.
    sim.act("p2", counter("Nullify", tactic));
    sim.pass(&["p1", "p2"]);
    sim.act("p2", warzone(Some("Venus")));
    assert_eq!(sim.view().step.number, "8-11");
    let v = sim.refused("p1", rewind(&sim, tactic, "Nullify cannot be played in ANNOUNCE BATTLE TACTIC"));
    assert!(v.message.contains("not a judge"), "{v}");
    let r = sim.act("Dana", rewind(&sim, tactic, "Nullify cannot be played in ANNOUNCE BATTLE TACTIC"));
    // The combat is back after the battle tactic: step 3, p2 to act; the later events are rewound.
    sim.at_step("3-6", &["p2"]);
    assert_eq!(sim.folder.rewound(), &[(tactic + 1, r - 1)]);
    assert!(sim.combat().effects.stands(tactic));
    assert_eq!(sim.events.len() as u64, r + 1, "nothing is deleted");
    // Play continues from there.
    sim.pass(&["p2", "p1"]);
    sim.act("p2", warzone(None));
    assert_eq!(sim.view().step.number, "8-11");
    // A rewind to an event that was itself rewound is refused.
    let v = sim.refused("Dana", rewind(&sim, tactic + 1, "again"));
    assert!(v.message.contains("was itself rewound"), "{v}");
    // The whole record verifies, replays to the same state and lists the rewound range.
    let (verified, folder) = verify(&ExportBytes(export(&sim)), None).unwrap();
    assert_eq!(folder.table().unwrap(), &sim.table);
    assert_eq!(verified.rewound, vec![(tactic + 1, r - 1)]);
}

#[test]
fn rulings_name_a_real_event_by_its_hash() {
    let mut sim = Sim::new(&["p1", "p2"], &["Dana"]);
    sim.act("p1", combat("p2", "Max", "Leg"));
    sim.act("p1", tactic("Fight"));
    let bad_hash =
        json!({"type": "ruling", "kind": "rewind", "concerns": {"seq": 1, "hash": "0".repeat(64)}, "reason": "r"});
    let v = sim.refused("Dana", bad_hash);
    assert!(v.message.contains("not that event's hash"), "{v}");
    let future =
        json!({"type": "ruling", "kind": "rewind", "concerns": {"seq": 9, "hash": "0".repeat(64)}, "reason": "r"});
    assert!(sim.refused("Dana", future).message.contains("not an earlier event"));
    sim.refused("Dana", rewind(&sim, 2, "nothing follows")); // nothing to rewind after the head
    sim.refused("Dana", json!({"type": "ruling", "kind": "rewind", "concerns": concerns(&sim, 1), "reason": ""}));
    sim.refused("Dana", json!({"type": "ruling", "kind": "rewind", "concerns": concerns(&sim, 1)})); // no reason
}

#[test]
fn penalties_notes_and_new_judges() {
    let mut sim = Sim::new(&["p1", "p2"], &["Dana"]);
    sim.act("p1", combat("p2", "Max", "Leg"));
    let before = sim.table.state.clone();
    // A note by any seat changes nothing.
    sim.act("p2", json!({"type": "note", "concerns": concerns(&sim, 1), "text": "Max was already wounded?"}));
    assert_eq!(sim.table.state, before);
    sim.refused("Eve", json!({"type": "note", "concerns": concerns(&sim, 1), "text": "x"}));
    let penalty = json!({"type": "ruling", "kind": "penalty", "concerns": concerns(&sim, 1), "reason": "slow play",
        "rule": "tournament policy 3.1", "seat": "p1", "infraction": "slow play", "penalty": "warning", "fix": "none"});
    sim.refused("p2", penalty.clone());
    sim.act("Dana", penalty);
    assert_eq!(sim.table.penalties[0].penalty, "warning");
    assert_eq!(sim.table.state, before, "a penalty does not change the combat");
    // Eve is not a judge until one adds her.
    let eve_note = json!({"type": "ruling", "kind": "penalty", "concerns": concerns(&sim, 1), "reason": "r", "seat": "p2", "infraction": "i", "penalty": "p", "fix": "f"});
    sim.refused("Eve", eve_note.clone());
    sim.act("Dana", json!({"type": "ruling", "kind": "add_judge", "concerns": concerns(&sim, 0), "reason": "floor judge arrives", "judge": "Eve"}));
    sim.act("Eve", eve_note);
    sim.refused(
        "Dana",
        json!({"type": "ruling", "kind": "add_judge", "concerns": concerns(&sim, 0), "reason": "r", "judge": "p1"}),
    );
    // The new judge may record determinations too.
    sim.act("p1", tactic("Fight"));
    assert!(sim.view().may_act.contains(&"p2".to_string()));
}

#[test]
fn decide_answers_a_state_that_waits_for_a_ruling() {
    let mut sim = Sim::ruleset("wtactics", &["p1", "p2"], &["Dana"], json!({}));
    let early = json!({"type": "ruling", "kind": "decide", "concerns": concerns(&sim, 0), "reason": "r",
        "decision": {"type": "resolve", "what": "unblocked", "influence_lost": 1}});
    let v = sim.refused("Dana", early);
    assert!(v.message.contains("not waiting"), "{v}");
    sim.act("p1", json!({"type": "announce", "what": "attackers", "attackers": [{"name": "Orc", "atk": 3, "def": 2}, {"name": "Troll", "atk": 5, "def": 5}]}));
    sim.pass(&["p2", "p1"]);
    let blocks = sim.act("p2", json!({"type": "announce", "what": "defenders", "blocks": [{"defender": {"name": "Knight", "atk": 2, "def": 3}, "attacker": "Orc"}]}));
    assert!(sim.view().awaiting_ruling.is_some());
    let hash = sim.events[blocks as usize].hash.clone();
    let decide = |influence: i64| {
        json!({"type": "ruling", "kind": "decide", "concerns": {"seq": blocks, "hash": hash},
        "reason": "an undefended attacker strikes the influence", "rule": "WTactics II", "decision": {"type": "resolve", "what": "unblocked", "influence_lost": influence}})
    };
    sim.refused("p1", decide(5));
    sim.refused("Dana", decide(-1)); // the decision itself is checked by the ruleset
    sim.act("Dana", decide(5));
    assert_eq!(sim.wtactics().influence_lost["p2"], 5);
    assert!(sim.view().awaiting_ruling.is_none());
}

/// A rewind returns the combat, not the adjudication. A penalty,
/// a note and a judge added inside the range a rewind takes back stand: they
/// are not marked rewound, and the state keeps them.
#[test]
fn penalties_notes_and_judges_added_stand_across_a_rewind() {
    let mut sim = Sim::new(&["p1", "p2"], &["Dana"]);
    sim.act("p1", combat("p2", "Max", "Leg"));
    let tactic = sim.act("p1", tactic("Fight"));
    let bad = sim.act("p2", counter("Nullify", tactic));
    let penalty = sim.act(
        "Dana",
        json!({"type": "ruling", "kind": "penalty", "concerns": concerns(&sim, bad), "reason": "card not legal here",
            "seat": "p2", "infraction": "game rule violation", "penalty": "warning", "fix": "rewind"}),
    );
    let note =
        sim.act("p1", json!({"type": "note", "concerns": concerns(&sim, bad), "text": "p2 called it a counter"}));
    let added = sim.act(
        "Dana",
        json!({"type": "ruling", "kind": "add_judge", "concerns": concerns(&sim, 0), "reason": "head judge", "judge": "Eve"}),
    );
    let r = sim.act("Dana", rewind(&sim, tactic, "Nullify cannot be played in ANNOUNCE BATTLE TACTIC"));
    assert_eq!(sim.folder.rewound(), &[(tactic + 1, r - 1)]);
    assert!(sim.folder.is_rewound(bad), "the counter is taken back");
    for seq in [penalty, note, added] {
        assert!(!sim.folder.is_rewound(seq), "seq {seq} is adjudication: it stands");
    }
    assert_eq!(sim.table.penalties.len(), 1);
    assert_eq!(sim.table.penalties[0].seq, penalty);
    assert_eq!(sim.table.notes.len(), 1);
    assert_eq!(sim.table.notes[0].text, "p2 called it a counter");
    assert!(sim.table.header.judges.contains(&"Eve".to_string()));
    // A rewind may still not name an event inside a range taken back, even one that stands.
    let v = sim.refused("Dana", rewind(&sim, penalty, "to the penalty"));
    assert!(v.message.contains("was itself rewound"), "{v}");
    // The replay agrees: the penalty is not struck through.
    let (_, folder) = verify(&ExportBytes(export(&sim)), None).unwrap();
    assert!(!folder.is_rewound(penalty) && folder.is_rewound(bad));
}
