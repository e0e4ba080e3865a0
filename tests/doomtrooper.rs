//! Scenario tests: the Doomtrooper combat breakdown, walked step by step
//! against the text in shared/rules/doomtrooper-combat-breakdown.txt.

mod common;

use arbiter::event::ActionType;
use arbiter::rules::doomtrooper::{Order, Part};
use common::*;
use serde_json::json;

const A: &str = "Max Steiner"; // p1's warrior
const D: &str = "Legionnaire"; // p2's warrior

/// Steps 1-15 with no card played: two players, p1 attacks p2.
fn to_step_16(sim: &mut Sim) {
    sim.act("p1", combat("p2", A, D));
    sim.at_step("2", &["p1"]);
    sim.act("p1", tactic("Fight"));
    sim.at_step("3-6", &["p2"]);
    sim.pass(&["p2", "p1"]);
    sim.at_step("7", &["p2"]);
    sim.act("p2", warzone(Some("Venus")));
    sim.at_step("8-11", &["p1"]);
    sim.pass(&["p1", "p2"]);
    sim.at_step("12-15", &["p2"]);
    sim.pass(&["p2", "p1"]);
    sim.at_step("16", &["p1"]);
}

/// Steps 16-31 with no card played, simultaneous.
fn to_step_32(sim: &mut Sim) {
    to_step_16(sim);
    sim.pass(&["p1"]);
    sim.at_step("17", &["p2"]);
    sim.pass(&["p2"]);
    sim.at_step("18", &["p2"]);
    sim.pass(&["p2"]);
    sim.at_step("19", &["p1"]);
    sim.pass(&["p1"]);
    end_combat_steps(sim, "p1", "p2");
    sim.at_step("24", &["p1"]);
    sim.act("p1", equipment(&["Bolter"]));
    sim.at_step("25", &["p2"]);
    sim.pass(&["p2", "p1"]);
    sim.at_step("26", &["p2"]);
    sim.act("p2", equipment(&[]));
    sim.at_step("27", &["p1"]);
    sim.pass(&["p1", "p2"]);
    end_combat_steps(sim, "p1", "p2");
    sim.at_step("32", &["p1", "Dana"]);
}

/// END COMBAT with every player passing (two players).
fn end_combat_steps(sim: &mut Sim, first: &str, second: &str) {
    let n: u32 = sim.step_no().parse().unwrap();
    for (i, who) in [first, second, second, first].into_iter().enumerate() {
        sim.at_step(&(n + i as u32).to_string(), &[who]);
        sim.pass(&[who]);
    }
}

#[test]
fn simultaneous_combat_walks_every_step_in_the_texts_order() {
    let mut sim = Sim::new(&["p1", "p2"], &["Dana"]);
    sim.at_step("1", &["p1", "p2"]);
    to_step_32(&mut sim);
    sim.act("p1", standing((A, 6), (D, 4)));
    sim.at_step("33-36", &["p1"]);
    let stim = sim.act("p1", play("modify", "Stimulants"));
    sim.at_step("33-36", &["p2"]);
    sim.pass(&["p2", "p1"]);
    sim.at_step("37", &["p1", "Dana"]);
    sim.act("p1", results(&[(A, "unharmed"), (D, "wounded")], &[stim]));
    sim.walk(&[("38", "p1"), ("39", "p2"), ("39", "p1"), ("40", "p2"), ("41", "p1"), ("41", "p2")]);
    // Step 42: "Other players may ... save": there are none, so it is skipped.
    sim.at_step("43", &["p1"]);
    sim.pass(&["p1", "p2"]);
    sim.at_step("44", &["p1", "Dana"]);
    sim.act("p1", status(&[(A, "unharmed"), (D, "wounded")]));
    sim.at_step("45", &["p1", "Dana"]);
    sim.act("p1", award(1));
    sim.at_step("46", &["p2"]);
    sim.pass(&["p2", "p1"]);
    sim.at_step("47", &["p2", "Dana"]);
    sim.act("p2", award(0));
    sim.at_step("48", &["p1"]);
    sim.pass(&["p1", "p2"]);
    // Combat over: back to step 1, points credited, combat kept in history.
    sim.at_step("1", &["p1", "p2"]);
    assert_eq!(sim.state().points["p1"], 1);
    assert_eq!(sim.state().finished.len(), 1);
    assert_eq!(sim.state().finished.last().unwrap().first_combat.results.as_ref().unwrap()[1].warrior, D);
}

#[test]
fn other_players_act_where_the_text_says_in_seat_order() {
    let mut sim = Sim::new(&["p1", "p2", "p3", "p4"], &[]);
    sim.act("p2", combat("p4", A, D));
    sim.act("p2", tactic("Shoot"));
    // Steps 3-6: defending player, attacking player, other players (seat order).
    for who in ["p4", "p2", "p1", "p3"] {
        sim.at_step("3-6", &[who]);
        sim.pass(&[who]);
    }
    sim.act("p4", warzone(None));
    // Steps 8-11: attacking, defending, others.
    for who in ["p2", "p4", "p1", "p3"] {
        sim.at_step("8-11", &[who]);
        sim.pass(&[who]);
    }
    assert_eq!(sim.view().step.number, "12-15");
    assert_eq!(sim.combat().window.as_ref().unwrap().order.to_vec(), vec!["p4", "p2", "p1", "p3"]);
}

#[test]
fn a_play_restarts_the_round_of_passes() {
    let mut sim = Sim::new(&["p1", "p2", "p3"], &[]);
    sim.act("p1", combat("p2", A, D));
    let t = sim.act("p1", tactic("Fight"));
    sim.pass(&["p2"]);
    let c = sim.act("p1", counter("Misdirection", t)); // p1 counters its own tactic: legal, pointless
    // Everyone gets another chance: p3, p2, then p1 again.
    sim.pass(&["p3", "p2"]);
    sim.at_step("3-6", &["p1"]);
    sim.pass(&["p1"]);
    sim.at_step("7", &["p2"]);
    assert!(!sim.combat().effects.stands(t) && sim.combat().effects.stands(c));
}

#[test]
fn out_of_turn_and_illegal_actions_are_refused_with_step_rule_and_who_may_act() {
    let mut sim = Sim::new(&["p1", "p2", "p3"], &["Dana"]);
    let v = sim.refused("p1", json!({"type": "pass"}));
    assert!(v.message.contains("step 1"), "{v}");
    sim.refused("p1", combat("p1", A, D)); // attacking yourself
    sim.refused("Dana", combat("p2", A, D)); // a judge does not attack
    sim.act("p1", combat("p2", A, D));
    let v = sim.refused("p2", tactic("Fight"));
    assert_eq!(v.may_act, vec!["p1"]);
    assert_eq!(v.step.reference, "Doomtrooper step 2 (ANNOUNCE BATTLE TACTIC)");
    let t = sim.act("p1", tactic("Fight"));
    let v = sim.refused("p1", counter("Cancel", t)); // p2 has priority at step 3
    assert!(v.to_string().contains("it is Player p2 (p2)'s turn"), "{v}");
    assert_eq!(v.may_act, vec!["p2"]);
    // A modifier outside MODIFY COMBAT RATINGS.
    let v = sim.refused("p2", play("modify", "Stimulants"));
    assert!(v.message.contains("may not play"), "{v}");
    // Counters name an effect that exists.
    let v = sim.refused("p2", counter("Cancel", 99));
    assert!(v.message.contains("seq 99"), "{v}");
    sim.refused("p2", json!({"type": "resolve", "what": "award", "points": 1}));
    sim.refused("p2", json!({"type": "open"}));
    sim.refused("p2", json!({"type": "teleport"}));
    sim.refused("p2", json!({"type": "pass", "extra": 1}));
}

#[test]
fn step_13_attacker_counters_only_the_defenders_actions_and_others_only_the_combatants() {
    let mut sim = Sim::new(&["p1", "p2", "p3"], &[]);
    sim.act("p1", combat("p2", A, D));
    sim.act("p1", tactic("Fight"));
    sim.pass(&["p2", "p1", "p3"]);
    sim.act("p2", warzone(None));
    sim.pass(&["p1", "p2", "p3"]);
    // 12-15: p2 (defending) changes combatants; p1 may counter it; p3 may counter either.
    let change = sim.act(
        "p2",
        json!({"type": "play", "effect": "change_combatants", "card": "Body Guard", "defender": "Sergeant"}),
    );
    let v = sim.refused("p1", play("change_combatants", "Clumsiness"));
    assert!(v.message.contains("only counter"), "{v}");
    sim.pass(&["p1"]);
    let c3 = sim.act("p3", counter("Cancel", change));
    // p2 answers p3's counter (the defending player may counter anything).
    sim.pass(&["p2"]);
    // p1 may not counter p3's counter: "counter Defending player's actions".
    let v = sim.refused("p1", counter("Cancel", c3));
    assert!(v.rule.contains("step 13"), "{v}");
    sim.pass(&["p1", "p3"]);
    // The change was countered: no repeat; on to 16.
    sim.at_step("16", &["p1"]);
    assert_eq!(sim.combat().defender, D);
    assert_eq!(sim.combat().repeats, 0);
}

#[test]
fn changed_combatants_repeat_steps_2_to_15() {
    let mut sim = Sim::new(&["p1", "p2"], &[]);
    sim.act("p1", combat("p2", A, D));
    sim.act("p1", tactic("Fight"));
    sim.pass(&["p2", "p1"]);
    sim.act("p2", warzone(None));
    sim.pass(&["p1", "p2"]);
    sim.act("p2", json!({"type": "play", "effect": "change_combatants", "card": "Rear Guard", "defender": "Sergeant"}));
    sim.pass(&["p1", "p2"]);
    // IF COMBATANTS ARE CHANGED, REPEAT STEPS 2-15.
    sim.at_step("2", &["p1"]);
    assert_eq!((sim.combat().defender.as_str(), sim.combat().repeats), ("Sergeant", 1));
    sim.act("p1", tactic("Shoot"));
    sim.pass(&["p2", "p1"]);
    sim.act("p2", warzone(Some("Mars")));
    sim.pass(&["p1", "p2"]);
    // A "change" to the same combatants is no change: no second repeat.
    sim.act(
        "p2",
        json!({"type": "play", "effect": "change_combatants", "card": "Point Guard", "defender": "Sergeant"}),
    );
    sim.pass(&["p1", "p2"]);
    sim.at_step("16", &["p1"]);
    assert_eq!(sim.combat().repeats, 1);
    // Counters may not reach back into the previous round of steps 2-15.
    sim.refused("p1", counter("Cancel", 9));
}

#[test]
fn non_simultaneous_combat_runs_both_sub_combats_when_the_second_warrior_lives() {
    let mut sim = Sim::new(&["p1", "p2", "p3"], &["Dana"]);
    sim.act("p1", combat("p2", A, D));
    sim.act("p1", tactic("Fight"));
    sim.pass(&["p2", "p1", "p3"]);
    sim.act("p2", warzone(None));
    sim.pass(&["p1", "p2", "p3"]);
    sim.pass(&["p2", "p1", "p3"]);
    sim.at_step("16", &["p1"]);
    sim.pass(&["p1"]);
    sim.pass(&["p2", "p3"]);
    sim.at_step("18", &["p2"]);
    // The defender's Surprise Attack: p2's warrior strikes first.
    sim.act("p2", json!({"type": "play", "effect": "strike_order", "card": "Surprise Attack", "first": "p2"}));
    sim.pass(&["p2"]);
    sim.at_step("19", &["p1"]);
    sim.pass(&["p1", "p3"]);
    assert_eq!(sim.combat().order, Order::NonSimultaneous { first: "p2".into(), second: "p1".into() });
    assert_eq!(sim.combat().part, Part::FirstCombat);
    assert!(sim.view().step.reference.contains("non-simultaneous breakdown, step 20"));
    // END COMBAT with the first and second player: 20 first, 21 second then others, 22 second, 23 first then others.
    sim.walk(&[("20", "p2"), ("21", "p1"), ("21", "p3"), ("22", "p1"), ("23", "p2"), ("23", "p3")]);
    sim.at_step("24", &["p2"]);
    sim.act("p2", equipment(&["Plasma Carbine"]));
    sim.pass(&["p1", "p3", "p2"]);
    // Non-simultaneous: no step 26/27; straight to END COMBAT 28.
    sim.walk(&[("28", "p2"), ("29", "p1"), ("29", "p3"), ("30", "p1"), ("31", "p2"), ("31", "p3")]);
    sim.at_step("32", &["p2", "Dana"]);
    sim.refused("p1", standing((D, 5), (A, 5))); // the first player (or a judge) records
    sim.act("Dana", standing((D, 5), (A, 5)));
    sim.at_step("33-36", &["p2"]); // first player, second player, others
    sim.pass(&["p2", "p1", "p3"]);
    sim.act("p2", results(&[(D, "unharmed"), (A, "wounded")], &[]));
    // First combat ESCAPE WOUNDING: 38 first, 39 second/others/first, 42 others, 43 first/second/others.
    sim.walk(&[
        ("38", "p2"),
        ("39", "p1"),
        ("39", "p3"),
        ("39", "p2"),
        ("42", "p3"),
        ("43", "p2"),
        ("43", "p1"),
        ("43", "p3"),
    ]);
    sim.act("p2", status(&[(D, "unharmed"), (A, "wounded")]));
    sim.at_step("45", &["p2", "Dana"]);
    sim.act("p2", award(1));
    sim.pass(&["p1", "p3", "p2"]);
    // IF SECOND WARRIOR IS STILL ALIVE, PROCEED: p1's warrior is only wounded.
    assert_eq!(sim.combat().part, Part::SecondCombat);
    sim.at_step("24", &["p1"]); // SECOND PLAYER DETERMINES EQUIPMENT USAGE
    sim.act("p1", equipment(&[]));
    sim.pass(&["p2", "p3", "p1"]);
    // "NOTE THAT FIRST PLAYER STILL GOES FIRST IN MANY INSTANCES": 28 is still the first player's.
    sim.walk(&[("28", "p2"), ("29", "p1"), ("29", "p3"), ("30", "p1"), ("31", "p2"), ("31", "p3")]);
    sim.act("p2", standing((A, 3), (D, 5)));
    sim.at_step("33-36", &["p2"]);
    let m = sim.act("p2", play("modify", "Turn of Events"));
    sim.pass(&["p1", "p3", "p2"]);
    sim.act("p2", results(&[(A, "wounded"), (D, "killed")], &[m]));
    sim.walk(&[
        ("38", "p1"),
        ("39", "p2"),
        ("39", "p3"),
        ("39", "p1"),
        ("42", "p3"),
        ("43", "p1"),
        ("43", "p2"),
        ("43", "p3"),
    ]);
    sim.act("p2", status(&[(A, "wounded"), (D, "killed")]));
    sim.at_step("45", &["p1", "Dana"]); // Second player is awarded
    sim.act("p1", award(2));
    sim.pass(&["p2", "p3", "p1"]);
    sim.at_step("1", &["p1", "p2", "p3"]);
    assert_eq!((sim.state().points["p1"], sim.state().points["p2"]), (2, 1));
    assert_eq!(sim.state().finished.len(), 1);
    let done = sim.state().finished.last().unwrap();
    assert_eq!(
        done.second_combat.as_ref().unwrap().results.as_ref().unwrap()[1].outcome,
        arbiter::rules::doomtrooper::Fate::Killed
    );
}

#[test]
fn no_second_combat_when_the_second_warrior_was_killed() {
    let mut sim = Sim::new(&["p1", "p2"], &[]);
    to_step_16(&mut sim);
    sim.act("p1", json!({"type": "play", "effect": "strike_order", "card": "Ambush", "first": "p1"}));
    sim.pass(&["p1", "p2", "p2", "p1"]); // 16, 17, 18, 19
    end_combat_steps(&mut sim, "p1", "p2");
    sim.act("p1", equipment(&[]));
    sim.pass(&["p2", "p1"]);
    end_combat_steps(&mut sim, "p1", "p2");
    sim.act("p1", standing((A, 8), (D, 2)));
    sim.pass(&["p1", "p2"]);
    sim.act("p1", results(&[(A, "unharmed"), (D, "killed")], &[]));
    sim.pass(&["p1", "p2", "p1", "p1", "p2"]); // 38, 39, 43
    sim.act("p1", status(&[(A, "unharmed"), (D, "killed")]));
    sim.act("p1", award(1));
    sim.pass(&["p2", "p1"]);
    sim.at_step("1", &["p1", "p2"]);
    assert_eq!(sim.state().finished.len(), 1);
    assert!(sim.state().finished.last().unwrap().second_combat.is_none());
}

#[test]
fn a_combat_ending_card_that_stands_goes_to_step_37_and_one_countered_does_not() {
    let mut sim = Sim::new(&["p1", "p2"], &[]);
    to_step_16(&mut sim);
    sim.pass(&["p1", "p2", "p2", "p1"]);
    // 20: Attack Prediction, countered at 21: combat goes on.
    sim.at_step("20", &["p1"]);
    let ap = sim.act("p1", play("end_combat", "Attack Prediction"));
    sim.at_step("21", &["p2"]);
    sim.act("p2", counter("Cancel", ap));
    sim.pass(&["p2"]);
    sim.at_step("22", &["p2"]);
    sim.pass(&["p2", "p1"]);
    sim.at_step("24", &["p1"]);
    sim.act("p1", equipment(&[]));
    sim.pass(&["p2", "p1"]);
    sim.act("p2", equipment(&[]));
    sim.pass(&["p1", "p2"]);
    // 30: the defender's Minefield stands: IMMEDIATELY to step 37.
    sim.pass(&["p1", "p2"]);
    sim.at_step("30", &["p2"]);
    let mf = sim.act("p2", play("end_combat", "Minefield"));
    // Step 30 is complete; at 31 only counters and passes are legal.
    sim.at_step("31", &["p1"]);
    let v = sim.refused("p1", play("end_combat", "Smoke Bomb"));
    assert!(v.message.contains("only counters") || v.message.contains("may not play"), "{v}");
    sim.pass(&["p1"]);
    sim.at_step("37", &["p1"]);
    assert_eq!(sim.combat().ended_by, Some(mf));
    assert!(sim.combat().first_combat.standing.is_none(), "steps 32-36 were skipped");
    sim.act("p1", results(&[(A, "unharmed"), (D, "unharmed")], &[]));
    sim.at_step("38", &["p1"]);
}

#[test]
fn pacifism_ends_combat_from_modify_combat_ratings() {
    let mut sim = Sim::new(&["p1", "p2"], &["Dana"]);
    to_step_32(&mut sim);
    sim.act("p1", standing((A, 5), (D, 5)));
    let stim = sim.act("p1", play("modify", "Stimulants"));
    let v = sim.refused("p2", play("modify", "Pacifism"));
    assert!(v.message.contains("COMBAT ENDING CARD"), "{v}");
    let pac = sim.act("p2", play("end_combat", "Pacifism"));
    sim.refused("p1", play("modify", "Adrenaline"));
    sim.pass(&["p1", "p2"]);
    sim.at_step("37", &["p1", "Dana"]);
    assert_eq!(sim.combat().ended_by, Some(pac));
    // Cards that were not countered still count.
    sim.act("p1", results(&[(A, "unharmed"), (D, "unharmed")], &[stim]));
}

#[test]
fn special_cards_are_legal_only_in_the_steps_named_at_the_end_of_the_text() {
    let mut sim = Sim::new(&["p1", "p2"], &[]);
    to_step_16(&mut sim);
    // Ambush: DETERMINE NON-SIMULTANEOUS COMBAT, so legal here...
    // ...but Medkit (ESCAPE WOUNDING) and Smoke Bomb (equipment or END COMBAT) are not.
    let v = sim.refused("p1", json!({"type": "play", "effect": "save", "card": "Medkit", "warrior": A}));
    assert!(v.message.contains("not wounded") || v.message.contains("ESCAPE WOUNDING"), "{v}");
    let v = sim.refused("p1", play("end_combat", "Smoke Bomb"));
    assert!(v.message.contains("DETERMINE EQUIPMENT USAGE or END COMBAT"), "{v}");
    sim.pass(&["p1", "p2", "p2", "p1"]);
    // END COMBAT: Ambush is not legal here; an unlisted combat-ending card is.
    let v = sim.refused("p1", json!({"type": "play", "effect": "strike_order", "card": "Ambush", "first": "p1"}));
    assert!(v.message.contains("Ambush is played during DETERMINE NON-SIMULTANEOUS COMBAT only"), "{v}");
    sim.refused("p1", play("end_combat", "Premonition"));
    sim.pass(&["p1", "p2", "p2", "p1"]);
    // Step 24: equipment-usage cards before the announcement (Ticker; Smoke Bomb as combat ending).
    sim.act("p1", play("equipment", "Ticker"));
    sim.refused("p1", play("equipment", "Turn of Events"));
    let relic = sim.act("p1", equipment(&["Relic of Ilian"]));
    assert_eq!(sim.view().step.number, "25");
    // Counters at 25 may not use a card listed for another step.
    let v = sim.refused("p2", counter("Medkit", relic));
    assert!(v.message.contains("Medkit"), "{v}");
}

#[test]
fn step_37_disregards_countered_cards_and_counters_nest() {
    let mut sim = Sim::new(&["p1", "p2"], &["Dana"]);
    to_step_32(&mut sim);
    sim.act("p1", standing((A, 5), (D, 5)));
    let m1 = sim.act("p1", play("modify", "Stimulants"));
    let c1 = sim.act("p2", counter("Cancel", m1));
    let c2 = sim.act("p1", counter("Cancel the Cancel", c1)); // m1 stands again
    let m2 = sim.act("p2", play("modify", "Shield"));
    let c3 = sim.act("p1", counter("Cancel", m2));
    sim.pass(&["p2", "p1"]);
    assert!(sim.combat().effects.stands(m1) && sim.combat().effects.stands(c2) && !sim.combat().effects.stands(m2));
    let _ = c3;
    let v = sim.refused("p1", results(&[(A, "unharmed"), (D, "wounded")], &[m1, m2]));
    assert!(v.rule.contains("disregard those cards") && v.message.contains(&format!("[{m2}]")), "{v}");
    sim.refused("p1", results(&[(A, "unharmed"), (D, "wounded")], &[]));
    sim.refused("p1", results(&[(A, "unharmed")], &[m1])); // every combatant
    sim.refused("p1", results(&[(A, "unharmed"), ("Nobody", "wounded")], &[m1]));
    sim.act("p1", results(&[(A, "unharmed"), (D, "wounded")], &[m1]));
    // ESCAPE WOUNDING: only a harmed warrior can be saved.
    sim.refused("p1", json!({"type": "play", "effect": "save", "card": "Medkit", "warrior": A}));
    sim.pass(&["p1", "p2", "p1"]);
    let save = sim.act("p2", json!({"type": "play", "effect": "save", "card": "Medkit", "warrior": D}));
    sim.pass(&["p2", "p1", "p2"]); // 40 ends; 41 p1, p2
    sim.pass(&["p1", "p2"]); // 43
    assert!(sim.combat().effects.stands(save));
    // The save stands, so D's status may differ from its result; A's may not.
    sim.refused("p1", status(&[(A, "wounded"), (D, "unharmed")]));
    sim.act("p1", status(&[(A, "unharmed"), (D, "unharmed")]));
}

#[test]
fn status_must_follow_the_result_unless_a_save_stands() {
    let mut sim = Sim::new(&["p1", "p2"], &["Dana"]);
    to_step_32(&mut sim);
    sim.act("p1", standing((A, 5), (D, 5)));
    sim.pass(&["p1", "p2"]);
    sim.act("p1", results(&[(A, "killed"), (D, "wounded")], &[]));
    sim.pass(&["p1", "p2", "p1", "p2", "p1", "p2", "p1", "p2"]);
    let v = sim.refused("p1", status(&[(A, "wounded"), (D, "wounded")]));
    assert!(v.rule.contains("step 44"), "{v}");
    sim.act("p1", status(&[(A, "killed"), (D, "wounded")]));
}

#[test]
fn conflicting_strike_orders_wait_for_a_judges_ruling() {
    let mut sim = Sim::new(&["p1", "p2"], &["Dana"]);
    to_step_16(&mut sim);
    sim.act("p1", json!({"type": "play", "effect": "strike_order", "card": "Ambush", "first": "p1"}));
    sim.pass(&["p1", "p2"]);
    sim.act("p2", json!({"type": "play", "effect": "strike_order", "card": "Surprise Attack", "first": "p2"}));
    sim.pass(&["p2", "p1"]);
    let view = sim.view();
    assert_eq!(view.may_act, vec!["Dana"]);
    assert_eq!(view.legal, vec![ActionType::Resolve]);
    assert!(view.awaiting_ruling.as_deref().unwrap().contains("disagree"));
    let v = sim.refused("p1", json!({"type": "resolve", "what": "strike_order", "first": "p1"}));
    assert!(v.message.contains("not a judge"), "{v}");
    sim.refused("Dana", award(3)); // the wrong ruling
    sim.refused("Dana", json!({"type": "resolve", "what": "strike_order", "first": "p7"}));
    sim.act("Dana", json!({"type": "resolve", "what": "strike_order", "first": "p2"}));
    assert_eq!(sim.combat().order, Order::NonSimultaneous { first: "p2".into(), second: "p1".into() });
    sim.at_step("20", &["p2"]);
}

#[test]
fn awards_can_be_countered_or_modified() {
    let mut sim = Sim::new(&["p1", "p2", "p3"], &["Dana"]);
    sim.act("p1", combat("p2", A, D));
    sim.act("p1", tactic("Fight"));
    sim.pass(&["p2", "p1", "p3"]);
    sim.act("p2", warzone(None));
    sim.pass(&["p1", "p2", "p3", "p2", "p1", "p3"]);
    sim.pass(&["p1", "p2", "p3", "p2", "p1", "p3"]); // 16-19
    sim.pass(&["p1", "p2", "p3", "p2", "p1", "p3"]); // 20-23
    sim.act("p1", equipment(&[]));
    sim.pass(&["p2", "p3", "p1"]);
    sim.act("p2", equipment(&[]));
    sim.pass(&["p1", "p3", "p2"]);
    sim.pass(&["p1", "p2", "p3", "p2", "p1", "p3"]); // 28-31
    sim.act("p1", standing((A, 5), (D, 1)));
    sim.pass(&["p1", "p2", "p3"]);
    sim.act("p1", results(&[(A, "unharmed"), (D, "killed")], &[]));
    sim.pass(&["p1", "p2", "p3", "p1", "p2", "p1", "p3", "p2", "p3", "p1", "p2", "p3"]); // 38-43
    sim.act("p1", status(&[(A, "unharmed"), (D, "killed")]));
    let a1 = sim.act("p1", award(3));
    // 46: the defending player counters the award; p1 does not answer.
    sim.act("p2", counter("Denial", a1));
    sim.pass(&["p3", "p1", "p2"]);
    sim.at_step("47", &["p2", "Dana"]);
    sim.act("p2", award(1));
    // 48: p1 and p3 modify the awarding differently: a judge decides.
    sim.act("p1", json!({"type": "play", "effect": "modify_award", "card": "Bureaucracy", "points": 0}));
    sim.act("p3", json!({"type": "play", "effect": "modify_award", "card": "Promotion", "points": 2}));
    sim.pass(&["p2", "p1", "p3"]);
    assert!(sim.view().awaiting_ruling.is_some());
    sim.act("Dana", award(2));
    sim.at_step("1", &["p1", "p2", "p3"]);
    assert_eq!((sim.state().points["p1"], sim.state().points["p2"]), (0, 2));
}

#[test]
fn a_game_holds_many_combats_in_sequence() {
    let mut sim = Sim::new(&["p1", "p2"], &[]);
    for n in 1..=3u64 {
        to_step_16(&mut sim);
        sim.pass(&["p1", "p2", "p2", "p1"]);
        let card = sim.act("p1", play("end_combat", "Smoke Bomb"));
        sim.pass(&["p2"]); // 21 answers it; 22 and 23 do not run
        assert_eq!(sim.combat().ended_by, Some(card));
        assert_eq!(sim.combat().number, n);
        sim.act("p1", results(&[(A, "unharmed"), (D, "unharmed")], &[]));
        sim.pass(&["p1", "p2", "p1", "p2", "p1", "p2", "p1", "p2"]);
        sim.act("p1", status(&[(A, "unharmed"), (D, "unharmed")]));
        sim.act("p1", award(1));
        sim.pass(&["p2", "p1"]);
        sim.act("p2", award(0));
        sim.pass(&["p1", "p2"]);
    }
    assert_eq!(sim.state().finished.len(), 3);
    assert_eq!(sim.state().points["p1"], 3);
}

#[test]
fn the_bundled_sample_is_legal_and_ends_as_recorded() {
    let mut lines = sample().lines();
    let first: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(
        first["action"],
        header(&["p1", "p2", "p3"], &["Dana"]).as_object().map(|_| first["action"].clone()).unwrap()
    );
    let mut sim = Sim::new(&["p1", "p2", "p3"], &["Dana"]);
    let mut first_repeats = None;
    for line in lines {
        let sub: serde_json::Value = serde_json::from_str(line).unwrap();
        sim.act(sub["actor"].as_str().unwrap(), sub["action"].clone());
        if sim.state().finished.len() == 1 {
            first_repeats = sim.state().finished.last().map(|c| c.repeats);
        }
    }
    assert_eq!(sim.state().finished.len(), 2);
    assert_eq!(sim.state().points["p1"], 2);
    assert_eq!(first_repeats, Some(1), "the first combat was repeated once");
}

// ---------------------------------------------------------------------------
// "Once a COMBAT ENDING CARD is played, combat IMMEDIATELY ends and
// proceed to step 37." Only the counter window that answers the card runs.
// ---------------------------------------------------------------------------

/// Steps 1-23 with no card played (two players), to step 24.
fn to_step_24(sim: &mut Sim) {
    to_step_16(sim);
    sim.pass(&["p1", "p2", "p2", "p1"]); // 16-19
    end_combat_steps(sim, "p1", "p2");
    sim.at_step("24", &["p1"]);
}

#[test]
fn smoke_bomb_at_step_24_ends_combat_after_its_counter_window() {
    let mut sim = Sim::new(&["p1", "p2", "p3"], &["Dana"]);
    sim.act("p1", combat("p2", A, D));
    sim.act("p1", tactic("Fight"));
    sim.pass(&["p2", "p1", "p3"]);
    sim.act("p2", warzone(None));
    sim.pass(&["p1", "p2", "p3", "p2", "p1", "p3"]); // 8-11, 12-15
    sim.pass(&["p1", "p2", "p3", "p2", "p1", "p3"]); // 16-19
    sim.pass(&["p1", "p2", "p3", "p2", "p1", "p3"]); // 20-23
    sim.at_step("24", &["p1"]);
    let bomb = sim.act("p1", play("end_combat", "Smoke Bomb"));
    // No announcement after it: the combat has ended; step 25 answers the card.
    sim.at_step("25", &["p2"]);
    assert!(!sim.view().legal.contains(&ActionType::Play), "{:?}", sim.view().legal);
    sim.pass(&["p2", "p3", "p1"]);
    // The card stands: straight to 37, no step 26 (the defending player announces nothing).
    sim.at_step("37", &["p1", "Dana"]);
    let v = sim.refused("p2", equipment(&["Plasma Carbine"]));
    assert!(v.step.number == "37", "{v}");
    assert_eq!(sim.combat().ended_by, Some(bomb));
    assert!(sim.combat().equipment.is_empty(), "no equipment was announced");
}

#[test]
fn a_countered_smoke_bomb_at_step_24_returns_to_the_announcement() {
    let mut sim = Sim::new(&["p1", "p2"], &[]);
    to_step_24(&mut sim);
    let bomb = sim.act("p1", play("end_combat", "Smoke Bomb"));
    sim.at_step("25", &["p2"]);
    sim.act("p2", counter("Cancel", bomb));
    sim.pass(&["p1", "p2"]);
    // Nullified: the attacking player still announces its equipment.
    sim.at_step("24", &["p1"]);
    sim.act("p1", equipment(&["Bolter"]));
    sim.pass(&["p2", "p1"]);
    sim.at_step("26", &["p2"]);
    assert_eq!(sim.combat().ended_by, None);
}

#[test]
fn a_combat_ending_card_at_step_20_skips_steps_22_and_23() {
    let mut sim = Sim::new(&["p1", "p2"], &["Dana"]);
    to_step_16(&mut sim);
    sim.pass(&["p1", "p2", "p2", "p1"]);
    sim.at_step("20", &["p1"]);
    let ap = sim.act("p1", play("end_combat", "Attack Prediction"));
    // Step 20 is complete at once; 21 answers the card, with counters only.
    sim.at_step("21", &["p2"]);
    assert_eq!(sim.view().legal, vec![ActionType::Counter, ActionType::Pass]);
    sim.pass(&["p2"]);
    sim.at_step("37", &["p1", "Dana"]);
    assert_eq!(sim.combat().ended_by, Some(ap));
}

#[test]
fn legal_never_lists_play_while_a_combat_ending_card_stands() {
    let mut sim = Sim::new(&["p1", "p2"], &["Dana"]);
    to_step_32(&mut sim);
    sim.act("p1", standing((A, 5), (D, 5)));
    sim.at_step("33-36", &["p1"]);
    assert!(sim.view().legal.contains(&ActionType::Play));
    sim.act("p1", play("end_combat", "Pacifism"));
    // p2 holds priority: it may counter Pacifism or pass, and play is refused.
    sim.at_step("33-36", &["p2"]);
    assert!(!sim.view().legal.contains(&ActionType::Play), "{:?}", sim.view().legal);
    sim.refused("p2", play("modify", "Shield"));
}

#[test]
fn a_save_outside_escape_wounding_is_refused_for_its_step_not_its_target() {
    let mut sim = Sim::new(&["p1", "p2"], &["Dana"]);
    to_step_32(&mut sim);
    sim.act("p1", standing((A, 5), (D, 5)));
    let v = sim.refused("p1", json!({"type": "play", "effect": "save", "card": "Medkit", "warrior": A}));
    assert!(!v.message.contains("not wounded"), "the step, not the target, is the reason: {v}");
    assert!(v.message.contains("ESCAPE WOUNDING") || v.rule.contains("ESCAPE WOUNDING"), "{v}");
    // An unlisted save card names its step too.
    let v = sim.refused("p1", json!({"type": "play", "effect": "save", "card": "Iron Will", "warrior": D}));
    assert!(v.message.contains("save effect is not legal here"), "{v}");
}

/// To step 44 of a combat in which D was killed and p2's Medkit saves it (and stands).
fn to_status_with_a_standing_save(sim: &mut Sim) -> u64 {
    to_step_32(sim);
    sim.act("p1", standing((A, 5), (D, 5)));
    sim.pass(&["p1", "p2"]);
    sim.act("p1", results(&[(A, "unharmed"), (D, "killed")], &[]));
    sim.pass(&["p1", "p2", "p1"]); // 38, 39
    let save = sim.act("p2", json!({"type": "play", "effect": "save", "card": "Medkit", "warrior": D}));
    sim.pass(&["p2", "p1", "p2", "p1", "p2"]); // 40, 41, 43
    assert!(sim.combat().effects.stands(save));
    sim.at_step("44", &["p1", "Dana"]);
    save
}

#[test]
fn a_saved_warrior_cannot_be_recorded_with_the_fate_it_was_saved_from() {
    let mut sim = Sim::new(&["p1", "p2"], &["Dana"]);
    let save = to_status_with_a_standing_save(&mut sim);
    let v = sim.refused("p1", status(&[(A, "unharmed"), (D, "killed")]));
    assert!(v.message.contains(&format!("seq {save}")) && v.rule.contains("step 44"), "{v}");
    sim.refused("p1", status(&[(A, "unharmed"), (D, "removed_from_play")]));
    // What the save changed it to is the table's to record (the text gives no arithmetic).
    sim.act("p1", status(&[(A, "unharmed"), (D, "wounded")]));
}

#[test]
fn a_judge_may_record_a_status_that_a_standing_save_contradicts() {
    let mut sim = Sim::new(&["p1", "p2"], &["Dana"]);
    to_status_with_a_standing_save(&mut sim);
    sim.act("Dana", status(&[(A, "unharmed"), (D, "killed")]));
    sim.at_step("45", &["p1", "Dana"]);
}

#[test]
fn other_players_priority_is_the_headers_seat_order_and_the_view_names_it() {
    let mut sim = Sim::new(&["p1", "p2", "p3", "p4", "p5"], &[]);
    sim.act("p3", combat("p1", A, D));
    sim.act("p3", tactic("Fight"));
    // Steps 3-6: defending, attacking, then the other players in the header's seat order.
    assert_eq!(sim.table.priority(), vec!["p1", "p3", "p2", "p4", "p5"]);
    sim.pass(&["p1", "p3"]);
    assert_eq!(sim.view().may_act, vec!["p2"]);
}

// ---------------------------------------------------------------------------
// The moves carry what the reducer computes, and offer exactly
// what it accepts (tests/moves.rs checks both over random games).
// ---------------------------------------------------------------------------

/// The combat's moves offered to `actor` now (not notes or rulings).
fn offered(sim: &Sim, actor: &str) -> Vec<arbiter::kernel::Move> {
    let moves = sim.table.moves(sim.events.len() as u64);
    moves.into_iter().filter(|m| m.seat == actor && !matches!(m.kind.name(), "note" | "ruling")).collect()
}

fn options(m: &arbiter::kernel::Move, field: &str) -> Vec<serde_json::Value> {
    let choice = m.choose.iter().find(|c| c.field == field).unwrap_or_else(|| panic!("{}: no {field}", m.label));
    choice.options.iter().map(|o| o.value.clone()).collect()
}

#[test]
fn step_37_is_offered_with_the_modifiers_that_still_stand_counted() {
    let mut sim = Sim::new(&["p1", "p2"], &["Dana"]);
    to_step_32(&mut sim);
    sim.act("p1", standing((A, 5), (D, 5)));
    let m1 = sim.act("p1", play("modify", "Stimulants"));
    let c1 = sim.act("p2", counter("Cancel", m1));
    sim.act("p1", counter("Cancel the Cancel", c1)); // m1 stands again
    let m2 = sim.act("p2", play("modify", "Shield"));
    sim.act("p1", counter("Cancel", m2));
    sim.pass(&["p2", "p1"]);
    for who in ["p1", "Dana"] {
        let moves = offered(&sim, who);
        // The text's order (attacker first), and the other.
        assert_eq!(moves.len(), 2, "{who}");
        for m in &moves {
            assert_eq!(m.action["counted"], json!([m1]), "{}", m.label);
            assert!(m.label.contains("Stimulants"), "{}", m.label);
            assert_eq!(options(m, "results/0/outcome").len(), 4);
        }
    }
    assert!(offered(&sim, "p2").is_empty(), "p2 records nothing at step 37");
}

#[test]
fn counter_targets_are_the_effects_of_this_part_the_player_may_answer() {
    let mut sim = Sim::new(&["p1", "p2", "p3"], &[]);
    let counter_move = |sim: &Sim, who: &str| offered(sim, who).into_iter().find(|m| m.label == "counter");
    sim.act("p1", combat("p2", A, D));
    let t = sim.act("p1", tactic("Fight"));
    assert_eq!(options(&counter_move(&sim, "p2").unwrap(), "target"), vec![json!(t)]);
    sim.pass(&["p2", "p1", "p3"]);
    sim.act("p2", warzone(None));
    sim.pass(&["p1", "p2", "p3"]);
    let change = sim.act(
        "p2",
        json!({"type": "play", "effect": "change_combatants", "card": "Body Guard", "defender": "Sergeant"}),
    );
    // Step 13: the attacking player counters only the defending player's actions.
    assert_eq!(options(&counter_move(&sim, "p1").unwrap(), "target"), vec![json!(change)]);
    sim.pass(&["p1"]);
    sim.act("p3", counter("Cancel", change));
    // Step 12: the defending player only plays changes.
    assert!(counter_move(&sim, "p2").is_none());
    sim.pass(&["p2"]);
    // p3's counter is not the defending player's; the change, countered, still is.
    let m = counter_move(&sim, "p1").unwrap();
    assert_eq!(options(&m, "target"), vec![json!(change)]);
    assert!(m.choose[0].options[0].label.contains("already countered"), "{:?}", m.choose[0].options);
}

#[test]
fn step_44_fills_in_each_status_no_save_changes() {
    let mut sim = Sim::new(&["p1", "p2"], &["Dana"]);
    to_status_with_a_standing_save(&mut sim);
    let m = offered(&sim, "p1").remove(0);
    assert_eq!(m.action["status"], json!([{"warrior": A, "outcome": "unharmed"}, {"warrior": D}]));
    // Saved from being killed: milder, for the recorder; anything, for a judge.
    assert_eq!(options(&m, "status/1/outcome"), vec![json!("unharmed"), json!("wounded")]);
    assert_eq!(options(&offered(&sim, "Dana")[0], "status/1/outcome").len(), 4);
}

#[test]
fn where_only_special_cards_end_combat_they_are_the_choice() {
    let mut sim = Sim::new(&["p1", "p2"], &[]);
    to_step_24(&mut sim);
    let moves = offered(&sim, "p1");
    let end = moves.iter().find(|m| m.action["effect"] == "end_combat").unwrap();
    assert_eq!(options(end, "card"), vec![json!("Personal Anti-Personnel Mines"), json!("Smoke Bomb")]);
    let with_equipment = moves.iter().find(|m| m.action["effect"] == "equipment").unwrap();
    assert_eq!(with_equipment.enter[0].suggest[0].value, json!("Ticker"));
    sim.act("p1", play("end_combat", "Smoke Bomb"));
    // Step 25 answers the card: counters and passes only (gap 2).
    let labels: Vec<String> = offered(&sim, "p2").into_iter().map(|m| m.label).collect();
    assert_eq!(labels, ["pass", "counter"]);
}

/// Offer-first (`record::offered_first`): where only special cards may end
/// combat (Pacifism in MODIFY COMBAT RATINGS), the move offers them by
/// their one name. The reducer alone would take "pacifism" (it compares
/// card names word by word, whatever the case), but the record refuses it
/// as no offered move, names the card it offers, and stores nothing.
#[test]
fn a_special_card_spelt_otherwise_where_the_move_names_it_is_refused_on_append() {
    use arbiter::kernel::moves::offered_to;
    use arbiter::record::{RecordError, Recorder, Submission, import};
    use arbiter::store::{SledStore, Store};
    let mut sim = Sim::new(&["p1", "p2"], &["Dana"]);
    to_step_32(&mut sim);
    sim.act("p1", standing((A, 5), (D, 5)));
    sim.act("p1", play("modify", "Stimulants"));
    let lower = play("end_combat", "pacifism");
    let next = sim.events.len() as u64;
    assert!(sim.table.apply(next, "p2", &lower).is_ok(), "the reducer alone takes it");
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    import(&store, "g", sim.events.clone()).unwrap();
    let head = store.head("g").unwrap();
    let mut recorder = Recorder::load(&store, "g").unwrap();
    let sub = Submission { actor: "p2".into(), action: lower, at: None };
    let v = match recorder.append(&sub, Some(next)) {
        Err(RecordError::Refused(v)) => v,
        other => panic!("{other:?}"),
    };
    assert!(v.message.contains("card: \"pacifism\" is not one of the options (Pacifism)"), "{v}");
    assert_eq!(v.offered, offered_to(&sim.table.moves(next), "p2"));
    assert!(v.offered.iter().any(|o| o.contains("Pacifism")), "{:?}", v.offered);
    assert_eq!(store.head("g").unwrap(), head, "nothing stored");
    // The card by its name is taken.
    let sub = Submission { actor: "p2".into(), action: play("end_combat", "Pacifism"), at: None };
    recorder.append(&sub, Some(next)).unwrap();
}

// ---------------------------------------------------------------------------
// The step titles and equipment in the text's words.
// ---------------------------------------------------------------------------

fn doom_board(sim: &Sim) -> arbiter::rules::doomtrooper::Board {
    match sim.table.board() {
        Some(arbiter::rules::Board::Doomtrooper(b)) => b,
        other => panic!("not a Doomtrooper board: {other:?}"),
    }
}

/// Acts, and returns what changed in the board's words.
#[track_caller]
fn said(sim: &mut Sim, actor: &str, action: serde_json::Value) -> Vec<String> {
    let before = sim.table.board().unwrap();
    sim.act(actor, action);
    sim.table.board().unwrap().changes_since(&before)
}

/// Step 1 has its heading, ANNOUNCE ATTACKER AND DEFENDER, like every other step.
#[test]
fn step_1_is_titled_as_the_text_heads_it() {
    let sim = Sim::new(&["p1", "p2"], &["Dana"]);
    let step = sim.view().step;
    assert_eq!(step.title, "ANNOUNCE ATTACKER AND DEFENDER");
    assert_eq!(step.reference, "Doomtrooper step 1 (ANNOUNCE ATTACKER AND DEFENDER)");
}

/// Steps 24 and 26: the equipment announced is named on the board's effect
/// line, and an announcement of none says "none", never an empty list.
#[test]
fn equipment_announced_is_named_and_none_says_none() {
    let mut sim = Sim::new(&["p1", "p2"], &["Dana"]);
    to_step_16(&mut sim);
    sim.walk(&[("16", "p1"), ("17", "p2"), ("18", "p2"), ("19", "p1")]);
    end_combat_steps(&mut sim, "p1", "p2");
    sim.at_step("24", &["p1"]);
    assert_eq!(said(&mut sim, "p1", equipment(&["Bolter", "Shield"])), ["Player p1 (p1) uses Bolter, Shield"]);
    sim.pass(&["p2", "p1"]);
    sim.at_step("26", &["p2"]);
    assert_eq!(said(&mut sim, "p2", equipment(&[])), ["Player p2 (p2) uses no equipment"]);
    let b = doom_board(&sim);
    let used: Vec<_> = b.combat.unwrap().effects.into_iter().filter(|e| e.what == "equipment used").collect();
    let details: Vec<_> = used.iter().map(|e| (e.player.as_str(), e.detail.as_deref())).collect();
    assert_eq!(details, [("Player p1 (p1)", Some("Bolter, Shield")), ("Player p2 (p2)", Some("none"))]);
}

/// NON-SIMULTANEOUS COMBAT BREAKDOWN: END COMBAT (20-23) comes before the
/// heading FIRST COMBAT, so those steps are not labelled "first combat";
/// step 24 is.
#[test]
fn non_simultaneous_end_combat_comes_before_the_first_combat_heading() {
    let mut sim = Sim::new(&["p1", "p2"], &["Dana"]);
    to_step_16(&mut sim);
    sim.act("p1", json!({"type": "play", "effect": "strike_order", "card": "Ambush", "first": "p1"}));
    sim.pass(&["p1"]);
    sim.walk(&[("17", "p2"), ("18", "p2"), ("19", "p1")]);
    for (no, who) in [("20", "p1"), ("21", "p2"), ("22", "p2"), ("23", "p1")] {
        sim.at_step(no, &[who]);
        assert_eq!(
            sim.view().step.reference,
            format!("Doomtrooper non-simultaneous breakdown, step {no} (END COMBAT)")
        );
        sim.pass(&[who]);
    }
    sim.at_step("24", &["p1"]);
    assert_eq!(
        sim.view().step.reference,
        "Doomtrooper non-simultaneous breakdown, first combat, step 24 (DETERMINE EQUIPMENT USAGE)"
    );
}

// ---------------------------------------------------------------------------
// The board shows only what stands.
// ---------------------------------------------------------------------------

use arbiter::rules::doomtrooper::Announced;

fn announced(seq: u64, name: &str, countered_by: Option<&str>) -> Option<Announced> {
    Some(Announced { seq, name: name.into(), countered_by: countered_by.map(String::from) })
}

/// "IF COMBATANTS ARE CHANGED, REPEAT STEPS 2-15": the battle tactic and
/// warzone of the round before no longer stand. The board has none until
/// they are announced again (`repeats` says why), replay says so, and the
/// effect lines of the earlier round keep the names they announced.
#[test]
fn after_a_change_of_combatants_the_tactic_and_warzone_are_to_be_announced_again() {
    let mut sim = Sim::new(&["p1", "p2"], &["Dana"]);
    sim.act("p1", combat("p2", A, D));
    let t = sim.act("p1", tactic("Fight"));
    sim.pass(&["p2", "p1"]);
    let w = sim.act("p2", warzone(Some("Venus")));
    sim.pass(&["p1", "p2"]);
    sim.act("p2", json!({"type": "play", "effect": "change_combatants", "card": "Rear Guard", "defender": "Sergeant"}));
    sim.pass(&["p1"]);
    let words = said(&mut sim, "p2", json!({"type": "pass"}));
    sim.at_step("2", &["p1"]);
    assert!(words.contains(&"battle tactic: to be announced again".to_string()), "{words:?}");
    assert!(words.contains(&"warzone: to be announced again".to_string()), "{words:?}");
    let c = doom_board(&sim).combat.unwrap();
    assert_eq!((c.battle_tactic.clone(), c.warzone.clone(), c.repeats), (None, None, 1));
    assert!(c.modifiers.is_empty(), "nothing of the round before stands: {:?}", c.modifiers);
    let detail = |c: &arbiter::rules::doomtrooper::CombatBoard, seq| {
        c.effects.iter().find(|e| e.seq == seq).and_then(|e| e.detail.clone())
    };
    let earlier = |name: &str| Some(format!("{name} (before the combatants changed)"));
    assert_eq!((detail(&c, t), detail(&c, w)), (earlier("Fight"), earlier("Venus")));
    // Announced again: the new ones stand, the earlier lines still say theirs.
    let t2 = sim.act("p1", tactic("Shoot"));
    sim.pass(&["p2", "p1"]);
    let w2 = sim.act("p2", warzone(None));
    let c = doom_board(&sim).combat.unwrap();
    assert_eq!(c.battle_tactic, announced(t2, "Shoot", None));
    assert_eq!(c.warzone, announced(w2, "none", None));
    assert_eq!((detail(&c, t), detail(&c, t2)), (earlier("Fight"), Some("Shoot".to_string())));
}

/// A countered battle tactic does not stand: the board row names it with
/// the counter, the standing modifiers leave it out; countering the counter
/// makes it stand again.
#[test]
fn a_countered_battle_tactic_is_shown_countered_not_standing() {
    let mut sim = Sim::new(&["p1", "p2", "p3"], &["Dana"]);
    sim.act("p1", combat("p2", A, D));
    let t = sim.act("p1", tactic("Fight"));
    let k = sim.act("p2", counter("Cancel", t));
    let c = doom_board(&sim).combat.unwrap();
    assert_eq!(c.battle_tactic, announced(t, "Fight", Some(&format!("Cancel (seq {k}) by Player p2 (p2)"))));
    assert!(c.modifiers.is_empty(), "{:?}", c.modifiers);
    sim.act("p1", counter("Nullify", k));
    let c = doom_board(&sim).combat.unwrap();
    assert_eq!(c.battle_tactic, announced(t, "Fight", None));
    let m: Vec<_> = c.modifiers.iter().map(|m| (m.seq, m.what.as_str(), m.name.as_str())).collect();
    assert_eq!(m, [(t, "battle tactic", "Fight")]);
}

/// The sample in the terminal: attacker, defender, what stands and the
/// points are read from `state` alone; a countered item is struck (~~ ~~)
/// with the counter named; after the change of combatants the battle tactic
/// and warzone are to be announced again.
#[test]
fn state_names_the_combatants_what_stands_and_strikes_what_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert!(arbiter(d, &["demo", "--ruleset", "doomtrooper", "--as", "dt"]).status.success());
    let state = |at: &str| String::from_utf8(arbiter(d, &["state", "dt", "--at", at]).stdout).unwrap();
    let at3 = state("3");
    assert!(at3.contains("  battle tactic  ~~Fight~~ (seq 2, countered by Cancel (seq 3) by Bob (p2))\n"), "{at3}");
    assert!(at3.contains("  standing modifiers  none\n"), "{at3}");
    let at14 = state("14");
    assert!(at14.contains("  battle tactic  to be announced again (the combatants changed)\n"), "{at14}");
    assert!(at14.contains("  warzone        to be announced again (the combatants changed)\n"), "{at14}");
    assert!(at14.contains("WARZONE: Venus Jungle"), "the earlier round's line keeps its name: {at14}");
    let at53 = state("53");
    for line in [
        "  attacker       Max Steiner of Alice (p1)\n",
        "  defender       Legionnaire Sergeant of Bob (p2)\n",
        "  battle tactic  Fight (seq 15)\n",
        "  warzone        none (seq 19)\n",
        "  standing modifiers\n",
        "      15  Alice (p1)  battle tactic Fight\n",
        "      39  Alice (p1)  equipment Bolter (first combat)\n",
        "      50  Alice (p1)  MODIFY COMBAT RATINGS Combat Drugs (first combat)\n",
    ] {
        assert!(at53.contains(line), "{line:?} in:\n{at53}");
    }
    assert!(!at53.contains("Shield of Faith (first combat)"), "a countered modifier does not stand: {at53}");
    assert!(at53.starts_with("dt: ") && at53.contains("points  Alice (p1) 0 · Bob (p2) 0 · Carol (p3) 0"), "{at53}");
}
