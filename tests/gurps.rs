//! Scenario tests: the GURPS combat turn sequence, against shared/rules/gurps-combat-turn-sequence.txt.

mod common;

use arbiter::event::ActionType;
use arbiter::rules::gurps::Phase;
use common::*;
use serde_json::{Value, json};

fn game() -> Sim {
    Sim::ruleset("gurps", &["p1", "p2"], &["GM"], json!({}))
}

fn pc(name: &str, quarters: i64, dx: i64, seat: &str) -> Value {
    json!({"name": name, "speed_quarters": quarters, "dx": dx, "side": "party", "pc": true, "seat": seat})
}
fn npc(name: &str, quarters: i64, dx: i64, side: &str) -> Value {
    json!({"name": name, "speed_quarters": quarters, "dx": dx, "side": side, "pc": false})
}
fn combat(list: &[Value]) -> Value {
    json!({"type": "announce", "what": "combat", "combatants": list})
}
fn maneuver(m: &str) -> Value {
    json!({"type": "announce", "what": "maneuver", "maneuver": m})
}
fn roll(by: &str, kind: &str, roll: i64) -> Value {
    json!({"type": "resolve", "what": "roll", "by": by, "kind": kind, "roll": roll, "target": 12, "result": "success"})
}
fn turn_of(sim: &Sim) -> (u64, String) {
    match &sim.gurps().phase {
        Phase::Turn { index, .. } => (sim.gurps().second, sim.gurps().sequence[*index].clone()),
        other => panic!("not a turn: {other:?}"),
    }
}

#[test]
fn the_sequence_is_by_basic_speed_and_ties_follow_the_text() {
    let mut sim = game();
    // Basic Speed 6.25 = 25 quarters, 5.75 = 23, 5.5 = 22.
    let list = [
        npc("Orc A", 23, 10, "orcs"),
        pc("Alice", 22, 13, "p1"),
        npc("Orc B", 23, 11, "orcs"),
        pc("Bob", 22, 12, "p2"),
        npc("Chief", 25, 12, "orcs"),
        pc("Cara", 20, 11, "p1"),
        pc("Dev", 20, 11, "p2"),
    ];
    sim.refused("p1", combat(&list)); // the GM starts combat
    sim.act("GM", combat(&list));
    // Orc A and Orc B (NPCs, one side) tie: the GM decides. Alice/Bob: DX decides.
    // Cara/Dev tie on Speed and DX: a roll at the start.
    let view = sim.view();
    assert_eq!(view.may_act, vec!["GM"]);
    assert!(view.awaiting_ruling.unwrap().contains("Orc A, Orc B"));
    sim.refused("p1", maneuver("attack"));
    sim.refused("GM", json!({"type": "resolve", "what": "tie", "order": ["Orc B", "Alice"]}));
    sim.act("GM", json!({"type": "resolve", "what": "tie", "order": ["Orc B", "Orc A"]}));
    let v = sim.refused("GM", json!({"type": "resolve", "what": "tie", "order": ["Dev", "Cara"]}));
    assert!(v.message.contains("record one roll"), "{v}");
    sim.refused("GM", json!({"type": "resolve", "what": "tie", "order": ["Dev", "Cara"], "rolls": [{"combatant": "Cara", "roll": 4}, {"combatant": "Dev", "roll": 4}]}));
    sim.refused("GM", json!({"type": "resolve", "what": "tie", "order": ["Cara", "Dev"], "rolls": [{"combatant": "Cara", "roll": 2}, {"combatant": "Dev", "roll": 5}]}));
    sim.act("GM", json!({"type": "resolve", "what": "tie", "order": ["Dev", "Cara"], "rolls": [{"combatant": "Cara", "roll": 2}, {"combatant": "Dev", "roll": 5}]}));
    assert_eq!(sim.gurps().sequence, vec!["Chief", "Orc B", "Orc A", "Alice", "Bob", "Dev", "Cara"]);
    assert_eq!(turn_of(&sim), (1, "Chief".into()));
}

#[test]
fn one_turn_per_active_character_per_second_and_inactive_ones_are_skipped() {
    let mut sim = game();
    sim.act("GM", combat(&[pc("Alice", 24, 12, "p1"), npc("Orc", 22, 10, "orcs"), pc("Bob", 20, 11, "p2")]));
    assert_eq!(turn_of(&sim), (1, "Alice".into()));
    sim.refused("p2", maneuver("attack")); // Bob's player, on Alice's turn
    sim.refused("p1", json!({"type": "pass"})); // a turn is choosing a maneuver
    sim.act("p1", maneuver("do_nothing"));
    sim.act("p1", json!({"type": "pass"}));
    assert_eq!(turn_of(&sim), (1, "Orc".into()));
    sim.act("GM", maneuver("move"));
    sim.act("GM", json!({"type": "pass"}));
    sim.act("p2", maneuver("aim"));
    sim.act("p2", json!({"type": "pass"}));
    // After everyone, one second has passed; Do Nothing kept Alice active.
    assert_eq!(turn_of(&sim), (2, "Alice".into()));
    sim.act(
        "GM",
        json!({"type": "resolve", "what": "status", "combatant": "Orc", "active": false, "reason": "knocked out"}),
    );
    sim.act("p1", maneuver("ready"));
    sim.act("p1", json!({"type": "pass"}));
    assert_eq!(turn_of(&sim), (2, "Bob".into()), "the knocked-out Orc is skipped");
    sim.act("p2", maneuver("wait"));
    sim.act("p2", json!({"type": "pass"}));
    assert_eq!(turn_of(&sim), (3, "Alice".into()));
    sim.act("GM", json!({"type": "resolve", "what": "status", "combatant": "Orc", "active": true, "reason": "wakes"}));
    sim.act("p1", maneuver("evaluate"));
    sim.act("p1", json!({"type": "pass"}));
    assert_eq!(turn_of(&sim), (3, "Orc".into()));
}

#[test]
fn the_maneuver_governs_options_until_the_next_turn() {
    let mut sim = game();
    sim.act("GM", combat(&[pc("Alice", 24, 12, "p1"), npc("Orc", 22, 10, "orcs")]));
    sim.refused("p1", roll("Alice", "attack", 9)); // no maneuver chosen yet
    sim.act("p1", maneuver("all_out_attack"));
    sim.act("p1", roll("Alice", "attack", 9));
    sim.act("GM", roll("Orc", "active_defense", 11)); // the Orc may defend
    sim.refused("p1", roll("Alice", "feint", 9));
    sim.act("p1", json!({"type": "pass"}));
    // The Orc's turn: Alice made an All-Out Attack, so no active defense until her next turn.
    sim.act("GM", maneuver("attack"));
    sim.refused("p1", roll("Alice", "attack", 9)); // not her turn
    sim.act("GM", roll("Orc", "attack", 8));
    let v = sim.refused("p1", roll("Alice", "active_defense", 10));
    assert!(v.rule.contains("All-Out Attack"), "{v}");
    sim.act("GM", json!({"type": "pass"}));
    // Her next turn: a new maneuver, and the limit is gone.
    sim.act("p1", maneuver("all_out_defense"));
    sim.refused("p1", roll("Alice", "attack", 9));
    sim.act("p1", roll("Alice", "active_defense", 10));
    // A ruling by the GM may record what the sequence would not allow (gap 4).
    sim.act("GM", json!({"type": "resolve", "what": "roll", "by": "Alice", "kind": "attack", "roll": 7, "result": "hit", "ruling": "Wait triggered"}));
}

#[test]
fn the_gm_drops_out_of_and_resumes_combat_time() {
    let mut sim = game();
    sim.act("GM", combat(&[pc("Alice", 24, 12, "p1"), pc("Bob", 20, 11, "p2")]));
    sim.act("p1", maneuver("move"));
    sim.act("p1", json!({"type": "pass"}));
    sim.refused("p2", json!({"type": "announce", "what": "drop_out"}));
    sim.act("GM", json!({"type": "announce", "what": "drop_out"}));
    assert!(sim.view().step.title.contains("out of combat time"));
    sim.refused("p2", maneuver("attack"));
    sim.act(
        "GM",
        json!({"type": "resolve", "what": "determination", "text": "rooftop chase: Bob jumps, DX roll made"}),
    );
    sim.act("GM", json!({"type": "announce", "what": "resume"}));
    assert_eq!(turn_of(&sim), (1, "Bob".into()), "combat time resumes where it stopped");
    sim.act("GM", json!({"type": "announce", "what": "end_combat"}));
    assert_eq!(sim.gurps().phase, Phase::Out);
}

#[test]
fn each_refusal_names_its_own_rule() {
    let mut sim = game();
    let mut refusals = vec![];
    // A roll out of combat time.
    let v = sim.refused("GM", roll("Alice", "other", 9));
    assert!(v.rule.contains("Out of combat time") && v.message.contains("determination"), "{v}");
    refusals.push(v);
    sim.act("GM", combat(&[pc("Alice", 24, 12, "p1"), pc("Bob", 20, 11, "p2")]));
    // A pass before a maneuver.
    let v = sim.refused("p1", json!({"type": "pass"}));
    assert!(v.rule.contains("Your Turn") && v.message.contains("has not chosen a maneuver"), "{v}");
    refusals.push(v);
    sim.act("p1", maneuver("attack"));
    // A second maneuver in a turn.
    let v = sim.refused("p1", maneuver("all_out_defense"));
    assert!(v.rule.contains("Your Turn") && v.message.contains("Alice chose Attack this turn"), "{v}");
    refusals.push(v);
    // Bob's player announcing on Alice's turn was told "the next action is ... announce by p2".
    let v = sim.refused("p2", maneuver("attack"));
    assert!(v.message.contains("it is Alice's turn"), "{v}");
    refusals.push(v);
    // drop_out by a seat.
    let v = sim.refused("p2", json!({"type": "announce", "what": "drop_out"}));
    assert!(v.rule.contains("drop out of combat time") && v.message.contains("Player p2 (p2) is not the GM"), "{v}");
    refusals.push(v);
    // A tie roll mid-fight.
    let v = sim.refused(
        "GM",
        json!({"type": "resolve", "what": "tie", "order": ["Alice", "Bob"], "rolls": [{"combatant": "Alice", "roll": 5}, {"combatant": "Bob", "roll": 3}]}),
    );
    assert!(v.rule.contains("does not change") && v.message.contains("fixed at its start"), "{v}");
    refusals.push(v);
    // A new combat mid-fight.
    let v = sim.refused("GM", combat(&[pc("Alice", 24, 12, "p1"), npc("Orc", 22, 10, "orcs")]));
    assert!(v.rule.contains("GM decides") && v.message.contains("a combat is under way"), "{v}");
    refusals.push(v);
    sim.act("GM", json!({"type": "announce", "what": "drop_out"}));
    let v = sim.refused("p1", roll("Alice", "damage", 8));
    assert!(v.rule.contains("Out of combat time"), "{v}");
    refusals.push(v);
    let v = sim.refused("GM", json!({"type": "announce", "what": "drop_out"}));
    assert!(v.message.contains("dropped out of already"), "{v}");
    refusals.push(v);
    for v in refusals {
        assert!(!v.message.contains("the next action is"), "a refusal names its own rule: {v}");
    }
}

/// What `legal` and `may_act` say is what the reducer accepts: of one action
/// of every kind, those accepted are by the actors `may_act` lists (each of
/// them has one) and of the types `legal` lists (each of them has one).
#[track_caller]
fn assert_view_is_what_is_accepted(sim: &Sim) {
    let s = sim.gurps();
    let announce = |what: &str| (ActionType::Announce, json!({"type": "announce", "what": what}));
    let mut candidates = vec![
        (ActionType::Announce, combat(&[pc("Ann", 24, 12, "p1"), npc("Orc", 20, 10, "orcs")])),
        (ActionType::Announce, maneuver("attack")),
        announce("drop_out"),
        announce("resume"),
        announce("end_combat"),
        (ActionType::Pass, json!({"type": "pass"})),
        (ActionType::Resolve, json!({"type": "resolve", "what": "determination", "text": "a DX roll to jump"})),
    ];
    if let (Phase::Ties, Some((group, how))) = (&s.phase, s.ties.first()) {
        // The settling order: the group as it stands, with rolls that give it.
        let rolls: Vec<Value> =
            group.iter().enumerate().map(|(i, c)| json!({"combatant": c, "roll": 18 - i as i64})).collect();
        let rolls = if how == "roll" { rolls } else { vec![] };
        candidates
            .push((ActionType::Resolve, json!({"type": "resolve", "what": "tie", "order": group, "rolls": rolls})));
    }
    for name in &s.sequence {
        let status = json!({"type": "resolve", "what": "status", "combatant": name, "active": true, "reason": "r"});
        candidates.push((ActionType::Resolve, status));
        for kind in ["attack", "feint", "active_defense", "damage", "other"] {
            candidates.push((ActionType::Resolve, roll(name, kind, 10)));
        }
    }
    assert_view_is_what_the_reducer_accepts(sim, &["p1", "p2", "GM"], &candidates);
}

#[test]
fn may_act_and_legal_are_what_the_reducer_accepts_along_the_sample() {
    let lines = include_str!("../examples/gurps-sample.actions.jsonl").lines().skip(1);
    let mut sim = game();
    for line in lines {
        assert_view_is_what_is_accepted(&sim);
        let line: Value = serde_json::from_str(line).unwrap();
        sim.act(line["actor"].as_str().unwrap(), line["action"].clone());
    }
    assert_view_is_what_is_accepted(&sim);
    assert_eq!(sim.gurps().combats, 1);
}

#[test]
fn rolls_come_from_the_table_on_any_turn() {
    let mut sim = game();
    sim.act("GM", combat(&[pc("Alice", 24, 12, "p1"), npc("Orc", 22, 10, "orcs"), pc("Bob", 20, 11, "p2")]));
    // Alice's turn: Bob's player may act too (Bob defends on Alice's turn), and the GM.
    let view = sim.view();
    assert_eq!(view.may_act, vec!["p1", "p2", "GM"]);
    sim.act("p1", maneuver("attack"));
    sim.act("p1", roll("Alice", "attack", 9));
    sim.act("GM", roll("Orc", "active_defense", 14));
    sim.act("p2", roll("Bob", "active_defense", 8)); // not Bob's turn: a defense is rolled on another's
    sim.refused("p2", roll("Alice", "damage", 8)); // but only for his own character
}

/// The moves of `seat` that are the ruleset's own (not rulings or notes).
fn moves_of(sim: &Sim, seat: &str) -> Vec<arbiter::kernel::Move> {
    let moves = sim.table.moves(sim.events.len() as u64);
    moves.into_iter().filter(|m| m.seat == seat && !matches!(m.kind.name(), "ruling" | "note")).collect()
}

/// The values a move offers for `field`.
fn options(m: &arbiter::kernel::Move, field: &str) -> Vec<Value> {
    let c = m.choose.iter().find(|c| c.field == field).unwrap_or_else(|| panic!("{}: no choice {field}", m.label));
    c.options.iter().map(|o| o.value.clone()).collect()
}

#[test]
fn the_moves_follow_the_sequence_the_ties_and_the_maneuvers() {
    let mut sim = game();
    // Out of combat: the GM starts one or records a determination; the seats only note.
    assert!(moves_of(&sim, "p1").is_empty());
    let gm = moves_of(&sim, "GM");
    assert!(gm.iter().any(|m| m.label == "start combat with 3 combatants"));
    assert!(gm.iter().all(|m| m.label.starts_with("start combat") || m.label == "record a determination"));
    sim.act("GM", combat(&[pc("Alice", 24, 12, "p1"), pc("Bob", 24, 12, "p2"), npc("Orc", 22, 10, "orcs")]));
    // Alice and Bob tie on Speed and DX: the GM settles it by rolls, one entered for each of them.
    let tie = moves_of(&sim, "GM").into_iter().find(|m| m.label.starts_with("settle the tie by rolls")).unwrap();
    assert_eq!(tie.action["rolls"], json!([{"combatant": "Alice"}, {"combatant": "Bob"}]));
    assert_eq!(options(&tie, "order"), vec![json!("Alice"), json!("Bob")]);
    assert_eq!(tie.enter.iter().map(|e| e.field.as_str()).collect::<Vec<_>>(), ["rolls/0/roll", "rolls/1/roll"]);
    // The order depends on the rolls typed: the refusal names them.
    let v = sim.refused(
        "GM",
        tie.build(&[
            ("order".into(), json!(["Alice", "Bob"])),
            ("rolls/0/roll".into(), json!(3)),
            ("rolls/1/roll".into(), json!(5)),
        ]),
    );
    assert!(v.message.contains("rolls"), "{v}");
    sim.act(
        "GM",
        tie.build(&[
            ("order".into(), json!(["Bob", "Alice"])),
            ("rolls/0/roll".into(), json!(3)),
            ("rolls/1/roll".into(), json!(5)),
        ]),
    );
    // Bob's turn: only Bob's player chooses its maneuver; the GM may not for a PC.
    assert!(moves_of(&sim, "GM").iter().all(|m| !m.label.starts_with("choose the maneuver")));
    assert!(moves_of(&sim, "p1").iter().all(|m| !m.label.starts_with("choose the maneuver")));
    let choose = moves_of(&sim, "p2").into_iter().find(|m| m.label.starts_with("choose the maneuver")).unwrap();
    assert_eq!(options(&choose, "maneuver").len(), 13);
    sim.act("p2", maneuver("all_out_attack"));
    // Bob's attack roll is Bob's: filled in; no feint after All-Out Attack, no pass by Alice's player.
    let p2 = moves_of(&sim, "p2");
    let attack = p2.iter().find(|m| m.action["kind"] == "attack").unwrap();
    assert_eq!(attack.action["by"], "Bob");
    assert!(p2.iter().all(|m| m.action["kind"] != "feint"));
    assert!(moves_of(&sim, "p1").iter().all(|m| m.kind != ActionType::Pass));
    assert!(moves_of(&sim, "GM").iter().any(|m| m.kind == ActionType::Pass), "the GM may end a turn");
    sim.act("p2", json!({"type": "pass"}));
    // Until his next turn Bob has no active defense: not offered to his player, nor for him to the GM.
    assert!(moves_of(&sim, "p2").iter().all(|m| m.action["kind"] != "active_defense"));
    let defense = moves_of(&sim, "GM").into_iter().find(|m| m.action["kind"] == "active_defense").unwrap();
    assert_eq!(options(&defense, "by"), vec![json!("Alice"), json!("Orc")]);
    // The GM drops out of combat time; it resumes at the turn where it stopped.
    sim.act("GM", json!({"type": "announce", "what": "drop_out"}));
    let gm = moves_of(&sim, "GM");
    assert!(gm.iter().any(|m| m.label == "resume combat time at Alice's turn"));
    assert!(gm.iter().all(|m| m.action["what"] != "roll" && m.action["what"] != "drop_out"));
}

/// Each step of the text's procedure, as its row of `STEPS` reads: the
/// view's number, title, reference, who acts and what is legal, word for
/// word, and a refusal there quoting the row's rule.
#[test]
fn each_step_reads_as_its_row_of_the_text() {
    use ActionType::{Announce, Pass, Resolve};
    let step = |sim: &Sim| {
        let v = sim.view();
        (v.step.number, v.step.title, v.step.reference, v.may_act, v.legal)
    };
    let mut sim = game();
    let combat_title = "Combat (the GM decides when to start)";
    assert_eq!(
        step(&sim),
        ("".into(), combat_title.into(), format!("GURPS {combat_title}"), vec!["GM".into()], vec![Announce, Resolve])
    );
    let v = sim.refused("GM", json!({"type": "announce", "what": "end_combat"}));
    assert_eq!(v.rule, "The GM decides when to start using the combat rules");

    sim.act("GM", combat(&[npc("Orc A", 23, 10, "orcs"), npc("Orc B", 23, 11, "orcs"), pc("Alice", 20, 12, "p1")]));
    assert_eq!(
        step(&sim),
        ("".into(), "Tied Speeds".into(), "GURPS Tied Speeds".into(), vec!["GM".into()], vec![Resolve, Announce])
    );
    let v = sim.refused("GM", json!({"type": "announce", "what": "drop_out"}));
    assert!(v.rule.starts_with("Tied Speeds: NPCs on the same side: the GM decides"), "{v}");

    sim.act("GM", json!({"type": "resolve", "what": "tie", "order": ["Orc A", "Orc B"]}));
    let title = "second 1, Orc A's turn: choose a maneuver";
    assert_eq!(
        step(&sim),
        (
            "1".into(),
            title.into(),
            format!("GURPS Combat Turn Sequence, {title}"),
            vec!["p1".into(), "GM".into()],
            vec![Announce, Resolve]
        )
    );
    let v = sim.refused("p1", maneuver("attack"));
    assert_eq!(v.rule, "Combat Turn Sequence: each active character gets one turn per second, choosing a maneuver");

    sim.act("GM", maneuver("all_out_defense"));
    let title = "second 1, Orc A's turn";
    assert_eq!(
        step(&sim),
        (
            "1".into(),
            title.into(),
            format!("GURPS Combat Turn Sequence, {title}"),
            vec!["p1".into(), "GM".into()],
            vec![Pass, Resolve, Announce]
        )
    );
    let v = sim.refused("GM", maneuver("attack"));
    assert!(v.rule.starts_with("\"Your Turn\": a turn is the one-second period"), "{v}");

    sim.act("GM", json!({"type": "announce", "what": "drop_out"}));
    let title = "out of combat time (the GM may resume)";
    assert_eq!(
        step(&sim),
        ("".into(), title.into(), format!("GURPS {title}"), vec!["GM".into()], vec![Announce, Resolve])
    );
    let v = sim.refused("GM", json!({"type": "announce", "what": "drop_out"}));
    assert!(v.rule.starts_with("The GM may drop out of combat time"), "{v}");
}

/// The turn steps' reference is short ("GURPS Combat Turn
/// Sequence, second 1, Alice's turn"): who rolls is said once, when the
/// combat begins, not on every line replay writes.
#[test]
fn who_rolls_is_said_once_when_the_combat_begins() {
    let mut sim = game();
    let before = sim.table.board().unwrap();
    sim.act("GM", combat(&[pc("Alice", 24, 12, "p1"), npc("Orc", 22, 10, "orcs")]));
    let said = sim.table.board().unwrap().changes_since(&before);
    assert_eq!(
        said,
        ["combat 1 begins: the turn sequence by Basic Speed is Alice 6.00, Orc 5.50; rolls come from the table: \
          each character's player, the GM for NPCs"]
    );
    assert_eq!(sim.view().step.reference, "GURPS Combat Turn Sequence, second 1, Alice's turn: choose a maneuver");
    sim.act("p1", maneuver("attack"));
    assert_eq!(sim.view().step.reference, "GURPS Combat Turn Sequence, second 1, Alice's turn");
}

/// Gap 4: a roll the sequence does not allow, by the GM without `ruling`,
/// is refused with the way to record it: the same roll as a ruling.
#[test]
fn a_gm_roll_out_of_turn_is_refused_with_the_ruling_route() {
    let mut sim = game();
    sim.act("GM", combat(&[pc("Alice", 24, 12, "p1"), npc("Orc", 22, 10, "orcs")]));
    sim.act("p1", maneuver("wait"));
    sim.act("p1", json!({"type": "pass"}));
    sim.act("GM", maneuver("attack"));
    let v = sim.refused("GM", roll("Alice", "attack", 7));
    assert!(v.message.starts_with("it is Orc's turn"), "{v}");
    assert!(
        v.message.contains(r#"the GM records it as a ruling: the same roll with "ruling": "<why>" (a Wait triggered)"#),
        "{v}"
    );
    // A seat is not pointed there: only the GM records a ruling.
    let v = sim.refused("p1", roll("Alice", "attack", 7));
    assert!(!v.message.contains("ruling"), "{v}");
    sim.act("GM", json!({"type": "resolve", "what": "roll", "by": "Alice", "kind": "attack", "roll": 7, "result": "hit", "ruling": "Wait triggered"}));
}
