//! Scenario tests: WTactics combat, walked against shared/rules/wtactics-combat.rst.

mod common;

use arbiter::event::ActionType;
use common::*;
use serde_json::{Value, json};

fn game() -> Sim {
    Sim::ruleset("wtactics", &["p1", "p2"], &["Dana"], json!({}))
}

fn creature(name: &str, atk: i64, def: i64) -> Value {
    json!({"name": name, "atk": atk, "def": def})
}
fn attackers(list: &[Value]) -> Value {
    json!({"type": "announce", "what": "attackers", "attackers": list})
}
fn blocks(list: &[(Value, &str)]) -> Value {
    json!({"type": "announce", "what": "defenders", "blocks": list.iter().map(|(d, a)| json!({"defender": d, "attacker": a})).collect::<Vec<_>>()})
}
fn turn() -> Value {
    json!({"type": "announce", "what": "turn"})
}
fn next(attacker: &str) -> Value {
    json!({"type": "announce", "what": "next_combat", "attacker": attacker})
}
fn event(card: &str) -> Value {
    json!({"type": "play", "kind": "event", "card": card})
}
fn ability(card: &str) -> Value {
    json!({"type": "play", "kind": "ability", "card": card})
}
fn outcome(a: (i64, i64), defenders: &[(&str, i64, i64)], dead: &[&str]) -> Value {
    json!({"type": "resolve", "what": "combat", "attacker": {"atk": a.0, "def": a.1},
           "defenders": defenders.iter().map(|(n, atk, def)| json!({"name": n, "atk": atk, "def": def})).collect::<Vec<_>>(), "dead": dead})
}

#[test]
fn an_attack_resolves_one_attacker_at_a_time_with_alternating_picks() {
    let mut sim = game();
    sim.act("p1", attackers(&[creature("Orc", 3, 2), creature("Troll", 5, 5), creature("Goblin", 1, 1)]));
    // I: the passive player gets the first Response opportunity.
    assert_eq!(sim.view().may_act, vec!["p2"]);
    sim.pass(&["p2", "p1"]);
    // II/III: defenders, each against one attacker.
    assert_eq!(sim.view().step.number, "II");
    sim.act(
        "p2",
        blocks(&[
            (creature("Knight", 2, 3), "Orc"),
            (creature("Wall", 0, 6), "Troll"),
            (creature("Archer", 2, 1), "Goblin"),
        ]),
    );
    // IV: the attacking player picks first, then the defending player.
    assert_eq!(sim.view().may_act, vec!["p1"]);
    let v = sim.refused("p2", next("Troll"));
    assert!(v.rule.contains("attacking player chooses"), "{v}");
    sim.act("p1", next("Troll"));
    sim.pass(&["p2", "p1"]);
    // Troll 5 ATK vs Wall 6 DEF: the Wall survives; Wall 0 ATK vs Troll 5 DEF: the Troll survives.
    let v = sim.refused("p1", outcome((5, 5), &[("Wall", 0, 6)], &["Wall"]));
    assert!(v.message.contains("the dead are {}"), "{v}");
    sim.act("p1", outcome((5, 5), &[("Wall", 0, 6)], &[]));
    assert_eq!(sim.view().may_act, vec!["p2"], "the defending player picks the next combat");
    sim.refused("p2", next("Troll")); // already resolved
    sim.act("p2", next("Orc"));
    sim.pass(&["p2", "p1"]);
    // Orc 3 ATK > Knight 3 DEF? No: the Knight survives. Knight 2 ATK >= Orc 2 DEF: the Orc dies.
    sim.act("p2", outcome((3, 2), &[("Knight", 2, 3)], &["Orc"]));
    // One combat left: nothing to choose. Goblin 1 vs Archer DEF 1: survives; Archer 2 >= 1: Goblin dies.
    assert_eq!(sim.view().step.title, "Response phase of the combat");
    sim.pass(&["p2", "p1"]);
    sim.act("p1", outcome((1, 1), &[("Archer", 2, 1)], &["Goblin"]));
    let s = sim.wtactics();
    assert_eq!(s.discard["p1"], vec!["Orc", "Goblin"]);
    assert_eq!(s.influence_lost["p2"], 0, "the defenders protect the influence whatever the outcome");
    assert_eq!(sim.view().step.number, "I");
}

#[test]
fn only_unmarked_creatures_attack_or_defend_and_never_both() {
    let mut sim = game();
    sim.act("p1", attackers(&[creature("Orc", 3, 2)]));
    sim.pass(&["p2", "p1"]);
    sim.refused("p2", blocks(&[(creature("Orc", 1, 1), "Orc")])); // an attacker cannot defend
    sim.refused("p2", blocks(&[(creature("Knight", 2, 3), "Troll")])); // not an attacker
    sim.refused("p1", blocks(&[(creature("Knight", 2, 3), "Orc")])); // only the defending player defends
    sim.act("p2", blocks(&[(creature("Knight", 2, 5), "Orc")]));
    sim.pass(&["p2", "p1"]);
    sim.act("p1", outcome((3, 2), &[("Knight", 2, 5)], &["Orc"]));
    // Next attack by p2, in p2's turn: the Knight defended but was not marked; p1's Orc is dead.
    sim.act("p2", turn());
    sim.act("p2", attackers(&[json!({"name": "Knight"})]));
    sim.pass(&["p1", "p2"]);
    let v = sim.refused("p1", blocks(&[(json!({"name": "Orc"}), "Knight")]));
    assert!(v.message.contains("dead"), "{v}");
    sim.act("p1", blocks(&[]));
    sim.act("p1", json!({"type": "resolve", "what": "undefended", "damage": [{"attacker": "Knight", "damage": 2}], "influence_lost": 2}));
    // The Knight is marked now: it may not attack again until unmarked.
    sim.act("p1", turn());
    sim.act("p2", turn());
    let v = sim.refused("p2", attackers(&[json!({"name": "Knight"})]));
    assert!(v.message.contains("marked"), "{v}");
    sim.refused("p1", json!({"type": "resolve", "what": "unmark", "creatures": ["Knight"]})); // not p1's
    sim.act("p2", json!({"type": "resolve", "what": "unmark", "creatures": ["Knight"]}));
    sim.act("p2", attackers(&[json!({"name": "Knight", "atk": 2})]));
    sim.pass(&["p1", "p2"]);
    let v = sim.refused("p1", blocks(&[(creature("Squire", 1, 1), "Knight"), (creature("Squire", 1, 1), "Knight")]));
    assert!(v.message.contains("only defend against one attacker"), "{v}");
}

#[test]
fn the_active_player_announces_all_attackers_of_a_turn_at_once() {
    let mut sim = game();
    // The first attackers announcement begins turn 1 without a turn action.
    sim.act("p1", attackers(&[creature("Orc", 3, 2)]));
    sim.pass(&["p2", "p1"]);
    sim.act("p2", blocks(&[]));
    sim.act("p2", json!({"type": "resolve", "what": "undefended", "damage": [{"attacker": "Orc", "damage": 3}], "influence_lost": 3}));
    assert!(sim.view().step.title.contains("turn 1 (p1): its attacks are over"), "{}", sim.view().step.title);
    // An attacker announced after the turn's attackers were declared.
    let v = sim.refused("p1", attackers(&[creature("Troll", 5, 5)]));
    assert!(v.rule.contains("all attackers that will fight this turn"), "{v}");
    assert!(v.message.contains("attackers of turn 1 already"), "{v}");
    // Only the active player attacks; the other player's turn must begin first.
    let v = sim.refused("p2", attackers(&[creature("Knight", 2, 3)]));
    assert!(v.rule.contains("active player is the only one"), "{v}");
    assert!(v.message.contains("it is Player p1 (p1)'s turn"), "{v}");
    sim.refused("Dana", turn()); // a judge is not a player
    sim.act("p2", turn());
    assert_eq!(sim.wtactics().turn.as_ref().map(|t| (t.number, t.active.as_str())), Some((2, "p2")));
    assert!(sim.view().step.title.contains("turn 2 (p2): announce attackers"), "{}", sim.view().step.title);
    sim.refused("p1", attackers(&[creature("Troll", 5, 5)]));
    sim.act("p2", attackers(&[creature("Knight", 2, 3)]));
    assert_eq!(sim.view().step.title, "Response phase");
    // A turn does not begin in the middle of an attack.
    let v = sim.refused("p1", turn());
    assert!(v.message.contains("attack is under way"), "{v}");
}

#[test]
fn response_phases_alternate_one_card_at_a_time_until_both_pass() {
    let mut sim = game();
    sim.act("p1", attackers(&[creature("Orc", 3, 2)]));
    let v = sim.refused("p1", event("Charge"));
    assert_eq!(v.may_act, vec!["p2"]);
    sim.act("p2", event("Fog"));
    sim.act("p1", ability("Rage"));
    sim.pass(&["p2"]);
    assert_eq!(sim.view().legal, vec![ActionType::Play, ActionType::Pass]);
    sim.act("p1", event("Charge")); // a play restarts the round
    sim.pass(&["p2", "p1"]);
    assert_eq!(sim.view().step.number, "II");
    sim.act("p2", blocks(&[(creature("Knight", 2, 3), "Orc")]));
    sim.act("p2", event("Parry"));
    sim.pass(&["p1", "p2"]);
    // Effects were played: the table's values count (ATK 4 after Rage).
    sim.act("p1", outcome((4, 2), &[("Knight", 2, 3)], &["Knight", "Orc"]));
    let s = sim.wtactics();
    // The combat's Event and the dead go at once; part I's Events when the attack is over.
    assert_eq!(s.discard["p2"], vec!["Knight", "Parry", "Fog"]);
    assert_eq!(s.discard["p1"], vec!["Orc", "Charge"]);
}

#[test]
fn undefended_attacks_cost_their_total_damage_in_influence() {
    let mut sim = game();
    sim.act("p1", attackers(&[creature("Orc", 3, 2), creature("Troll", 5, 5)]));
    sim.pass(&["p2", "p1"]);
    sim.act("p2", blocks(&[]));
    let damage = json!([{"attacker": "Orc", "damage": 3}, {"attacker": "Troll", "damage": 5}]);
    let v = sim.refused("p2", json!({"type": "resolve", "what": "undefended", "damage": damage, "influence_lost": 7}));
    assert!(v.message.contains("totals 8"), "{v}");
    sim.refused("p2", json!({"type": "resolve", "what": "undefended", "damage": [{"attacker": "Orc", "damage": 3}], "influence_lost": 3}));
    sim.act("p2", json!({"type": "resolve", "what": "undefended", "damage": damage, "influence_lost": 8}));
    assert_eq!(sim.wtactics().influence_lost["p2"], 8);
}

#[test]
fn undefended_damage_is_each_attackers_atk_unless_an_effect_was_played() {
    let undefended = |damage: &[(&str, i64)], lost: i64| {
        json!({"type": "resolve", "what": "undefended", "influence_lost": lost,
               "damage": damage.iter().map(|(a, d)| json!({"attacker": a, "damage": d})).collect::<Vec<_>>()})
    };
    let mut sim = game();
    sim.act("p1", attackers(&[creature("Imp", 2, 1), creature("Orc", 3, 2)]));
    sim.pass(&["p2", "p1"]);
    sim.act("p2", blocks(&[]));
    // The Imp's 3 damage added up correctly (6) but no effect made it more than its ATK 2.
    let v = sim.refused("p2", undefended(&[("Imp", 3), ("Orc", 3)], 6));
    assert!(v.message.contains("Imp's damage is its own ATK 2, not 3"), "{v}");
    assert!(v.rule.contains("an attacker deals its ATK"), "{v}");
    sim.act("p2", undefended(&[("Imp", 2), ("Orc", 3)], 5));
    assert_eq!(sim.wtactics().influence_lost["p2"], 5);
    // With an Event played in the attack, the table's damage counts (the
    // effect is the table's to apply), once the other player confirms it.
    let mut sim = game();
    sim.act("p1", attackers(&[creature("Imp", 2, 1), creature("Orc", 3, 2)]));
    sim.pass(&["p2"]);
    sim.act("p1", event("Frenzy"));
    sim.pass(&["p2", "p1"]);
    sim.act("p2", blocks(&[]));
    sim.act("p2", undefended(&[("Imp", 3), ("Orc", 3)], 6));
    sim.act("p1", json!({"type": "resolve", "what": "confirm"}));
    assert_eq!(sim.wtactics().influence_lost["p2"], 6);
}

#[test]
fn values_without_any_effect_are_the_creatures_own() {
    let mut sim = game();
    sim.act("p1", attackers(&[creature("Orc", 3, 2)]));
    sim.pass(&["p2", "p1"]);
    sim.act("p2", blocks(&[(creature("Knight", 2, 3), "Orc")]));
    sim.pass(&["p2", "p1"]);
    let v = sim.refused("p1", outcome((4, 2), &[("Knight", 2, 3)], &["Knight", "Orc"]));
    assert!(v.message.contains("own ATK and DEF"), "{v}");
    sim.refused("p1", outcome((3, 2), &[("Squire", 2, 3)], &["Orc"]));
    sim.act("p1", outcome((3, 2), &[("Knight", 2, 3)], &["Orc"]));
}

#[test]
fn several_defenders_on_one_attacker_wait_for_a_judge() {
    let mut sim = game();
    sim.act(
        "p1",
        attackers(&[json!({"name": "Troll", "atk": 5, "def": 5, "enchantments": [{"card": "Curse", "owner": "p2"}]})]),
    );
    sim.pass(&["p2", "p1"]);
    sim.act("p2", blocks(&[(creature("Knight", 2, 3), "Troll"), (creature("Squire", 3, 1), "Troll")]));
    sim.pass(&["p2", "p1"]);
    let view = sim.view();
    assert_eq!(view.may_act, vec!["Dana"]);
    assert!(view.awaiting_ruling.unwrap().contains("several defenders"));
    let v = sim.refused("p1", outcome((5, 5), &[("Knight", 2, 3), ("Squire", 3, 1)], &["Troll"]));
    assert!(v.message.contains("not a judge"), "{v}");
    sim.refused("Dana", outcome((5, 5), &[("Knight", 2, 3), ("Squire", 3, 1)], &["Bystander"]));
    sim.act("Dana", outcome((5, 5), &[("Knight", 2, 3), ("Squire", 3, 1)], &["Troll", "Squire"]));
    let s = sim.wtactics();
    assert_eq!(s.discard["p1"], vec!["Troll"]);
    assert_eq!(s.discard["p2"], vec!["Squire", "Curse"], "the enchantment on the dead Troll goes to its owner's pile");
}

#[test]
fn attackers_left_undefended_beside_defended_ones_wait_for_a_judge() {
    let mut sim = game();
    sim.act("p1", attackers(&[creature("Orc", 3, 2), creature("Troll", 5, 5)]));
    sim.pass(&["p2", "p1"]);
    sim.act("p2", blocks(&[(creature("Knight", 2, 3), "Orc")]));
    assert!(sim.view().awaiting_ruling.unwrap().contains("left undefended"));
    sim.refused("p2", json!({"type": "resolve", "what": "unblocked", "influence_lost": 5}));
    sim.act("Dana", json!({"type": "resolve", "what": "unblocked", "influence_lost": 5}));
    assert_eq!(sim.wtactics().influence_lost["p2"], 5);
    // Only the Orc's combat remains.
    sim.pass(&["p2", "p1"]);
    sim.act("p1", outcome((3, 2), &[("Knight", 2, 3)], &["Orc"]));
    assert_eq!(sim.view().step.number, "I");
}

#[test]
fn wtactics_is_a_two_player_game() {
    let draft = arbiter::event::Draft {
        actor: "o".into(),
        action: {
            let mut h = header(&["p1", "p2", "p3"], &[]);
            h["ruleset"] = json!("wtactics");
            h
        },
        at: None,
    };
    let (e, _) = arbiter::event::seal(&draft, None, chrono::Utc::now()).unwrap();
    match arbiter::fold::Folder::new().next(&e, &Vec::new()) {
        Err(arbiter::fold::FoldError::Illegal { violation, .. }) => assert!(violation.message.contains("two players")),
        other => panic!("{other:?}"),
    }
}

/// The moves offered to `actor` now whose label starts with `label`.
fn offered(sim: &Sim, actor: &str, label: &str) -> Vec<arbiter::kernel::Move> {
    let moves = sim.table.moves(sim.events.len() as u64);
    moves.into_iter().filter(|m| m.seat == actor && m.label.starts_with(label)).collect()
}

#[test]
fn with_no_effect_played_the_moves_carry_the_outcome_the_reducer_computes() {
    let mut sim = game();
    sim.act("p1", attackers(&[creature("Orc", 3, 2), creature("Imp", 2, 1)]));
    sim.pass(&["p2", "p1"]);
    sim.act("p2", blocks(&[(creature("Knight", 2, 3), "Orc"), (creature("Squire", 1, 1), "Imp")]));
    let pick = offered(&sim, "p1", "choose the next combat");
    assert_eq!(pick[0].choose[0].options.len(), 2);
    sim.act("p1", next("Imp"));
    sim.pass(&["p2", "p1"]);
    // Imp ATK 2 > Squire DEF 1: the Squire dies; Squire ATK 1 >= Imp DEF 1: the Imp dies.
    for actor in ["p1", "p2", "Dana"] {
        let resolve = offered(&sim, actor, "resolve combat");
        assert_eq!(resolve.len(), 1, "{actor}");
        assert_eq!(resolve[0].label, "resolve combat: Squire and Imp die");
        assert!(resolve[0].choose.is_empty() && resolve[0].enter.is_empty(), "the whole action is fixed");
        assert_eq!(resolve[0].action, outcome((2, 1), &[("Squire", 1, 1)], &["Squire", "Imp"]));
    }
    sim.act("Dana", offered(&sim, "Dana", "resolve combat")[0].action.clone());
    sim.pass(&["p2", "p1"]);
    let resolve = offered(&sim, "p2", "resolve combat");
    assert_eq!(resolve[0].action["dead"], json!(["Orc"]));
    sim.act("p2", resolve[0].action.clone());

    // Undefended: each attacker's own ATK, and their total.
    sim.act("p2", turn());
    sim.act("p2", attackers(&[json!({"name": "Knight"})]));
    sim.pass(&["p1", "p2"]);
    sim.act("p1", blocks(&[]));
    let lost = offered(&sim, "p1", "Player p1 (p1) loses");
    assert_eq!(lost[0].label, "Player p1 (p1) loses 2 influence");
    assert_eq!(
        lost[0].action,
        json!({"type": "resolve", "what": "undefended", "damage": [{"attacker": "Knight", "damage": 2}], "influence_lost": 2})
    );
}

#[test]
fn with_an_effect_played_the_values_are_entered_and_the_dead_picked() {
    let mut sim = game();
    sim.act("p1", attackers(&[creature("Orc", 3, 2)]));
    sim.pass(&["p2"]);
    sim.act("p1", event("Frenzy"));
    sim.pass(&["p2", "p1"]);
    sim.act("p2", blocks(&[(creature("Knight", 2, 3), "Orc")]));
    sim.pass(&["p2", "p1"]);
    let resolve = offered(&sim, "p1", "resolve combat");
    let fields: Vec<&str> = resolve[0].enter.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["attacker/atk", "attacker/def", "defenders/0/atk", "defenders/0/def"]);
    assert_eq!(resolve[0].choose[0].field, "dead");
    // A wrong pick of the dead is refused, naming the values entered.
    let wrong = resolve[0].build(&[
        ("attacker/atk".into(), json!(5)),
        ("attacker/def".into(), json!(2)),
        ("defenders/0/atk".into(), json!(1)),
        ("defenders/0/def".into(), json!(3)),
        ("dead".into(), json!([])),
    ]);
    let v = sim.refused("p1", wrong);
    assert!(v.message.contains("ATK 5 against DEF 3"), "{v}");
    sim.act("p1", outcome((5, 2), &[("Knight", 1, 3)], &["Knight"]));
}

/// The view now: step number, title, who may act, what is legal.
#[track_caller]
fn at(sim: &Sim, number: &str, title: &str, may_act: &[&str], legal: &[ActionType]) {
    let v = sim.view();
    assert_eq!(
        (v.step.number.as_str(), v.step.title.as_str(), v.may_act.iter().map(String::as_str).collect::<Vec<_>>()),
        (number, title, may_act.to_vec())
    );
    assert_eq!(v.legal, legal, "at {}", v.step.reference);
    assert_eq!(v.step.reference, format!("WTactics combat {number} ({title})"));
}

/// The rule the refusal quotes, whole.
#[track_caller]
fn refused_by(sim: &mut Sim, actor: &str, action: Value, rule: &str) {
    let v = sim.refused(actor, action);
    assert_eq!(v.rule, rule, "{v}");
}

/// Every row of the step table, walked: what the view shows there and the
/// rule a refusal there quotes (the text's words, as a judge reads them
/// beside the document).
#[test]
fn every_step_shows_its_row_and_its_refusals_quote_its_rule() {
    use ActionType::{Announce, Pass, Play, Resolve};
    const RESPONSE: &str =
        "Response phase: one Event card or one Ability (not both); the players alternate until both pass";
    let mut sim = game();
    at(&sim, "I", "announce attackers", &["p1", "p2"], &[Announce, Resolve]);
    refused_by(
        &mut sim,
        "Dana",
        attackers(&[creature("Orc", 3, 2)]),
        "I: only unmarked creatures may attack; the active player announces all attackers at once, marking them",
    );
    sim.act("p1", attackers(&[creature("Orc", 3, 2), creature("Troll", 5, 5), creature("Goblin", 1, 1)]));
    at(&sim, "I", "Response phase", &["p2"], &[Play, Pass]);
    refused_by(&mut sim, "p1", json!({"type": "pass"}), RESPONSE);
    sim.pass(&["p2", "p1"]);
    at(&sim, "II", "defend or allow the attacks", &["p2"], &[Announce]);
    refused_by(&mut sim, "p1", blocks(&[]), "II: the defending player may choose to defend or allow the attacks");
    refused_by(
        &mut sim,
        "p2",
        blocks(&[(creature("Knight", 2, 3), "Nobody")]),
        "III: defenders to any attackers; every defender can only defend against one attacker; a creature is never both attacker and defender",
    );
    refused_by(
        &mut sim,
        "p2",
        blocks(&[(json!({"name": "Orc"}), "Troll")]),
        "III: defenders to any attackers; every defender can only defend against one attacker; a creature is never both attacker and defender",
    );
    sim.act(
        "p2",
        blocks(&[
            (creature("Knight", 2, 3), "Orc"),
            (creature("Wall", 0, 6), "Troll"),
            (creature("Archer", 2, 1), "Goblin"),
            (creature("Guard", 1, 1), "Goblin"),
        ]),
    );
    const PICK: &str =
        "IV: the attacking player chooses which combat resolves first, then the defending player the next, alternating";
    at(&sim, "IV", "choose the next combat", &["p1"], &[Announce]);
    refused_by(&mut sim, "p2", next("Goblin"), PICK);
    refused_by(&mut sim, "p1", next("Knight"), PICK);
    sim.act("p1", next("Goblin"));
    at(&sim, "IV", "Response phase of the combat", &["p2"], &[Play, Pass]);
    refused_by(&mut sim, "p1", ability("Rally"), RESPONSE);
    sim.pass(&["p2", "p1"]);
    at(&sim, "IV", "resolve the combat", &["Dana"], &[Resolve]);
    assert!(sim.view().awaiting_ruling.is_some_and(|r| r.starts_with("Goblin has several defenders")));
    let several = outcome((1, 1), &[("Archer", 2, 1), ("Guard", 1, 1)], &["Goblin"]);
    refused_by(
        &mut sim,
        "p1",
        several.clone(),
        "gap 1 (module docs): how several defenders strike or are struck is not in the text; a judge rules",
    );
    refused_by(
        &mut sim,
        "Dana",
        outcome((1, 1), &[("Archer", 2, 1), ("Guard", 1, 1)], &["Orc"]),
        "gap 1 (module docs)",
    );
    refused_by(
        &mut sim,
        "Dana",
        outcome((2, 1), &[("Archer", 2, 1), ("Guard", 1, 1)], &["Goblin"]),
        "IV: take into account all effects",
    );
    sim.act("Dana", several);
    at(&sim, "IV", "choose the next combat", &["p2"], &[Announce]);
    sim.act("p2", next("Orc"));
    sim.pass(&["p2", "p1"]);
    at(&sim, "IV", "resolve the combat", &["p1", "p2", "Dana"], &[Resolve]);
    assert_eq!(sim.view().awaiting_ruling, None);
    refused_by(
        &mut sim,
        "p1",
        outcome((3, 2), &[("Knight", 2, 3)], &[]),
        "IV: Attacker ATK higher than Defender DEF: the Defender dies; Defender ATK equal to or higher than Attacker DEF: the Attacker dies",
    );
    sim.act("p1", outcome((3, 2), &[("Knight", 2, 3)], &["Orc"]));
    sim.pass(&["p2", "p1"]);
    sim.act("p2", outcome((5, 5), &[("Wall", 0, 6)], &[]));
    at(&sim, "I", "turn 1 (p1): its attacks are over; the next turn begins", &["p1", "p2"], &[Announce, Resolve]);
    refused_by(
        &mut sim,
        "p1",
        attackers(&[json!({"name": "Troll"})]),
        "I: the active player announces all attackers that will fight this turn, at once",
    );
    const TURN: &str = "gap 7 (module docs): a turn begins with the active player's announce turn, between attacks";
    refused_by(&mut sim, "Dana", turn(), TURN);
    refused_by(
        &mut sim,
        "p2",
        json!({"type": "resolve", "what": "unmark", "creatures": ["Troll"]}),
        "gap 4 (module docs): the owner records that its creatures are unmarked",
    );

    // II: the attacks let through.
    sim.act("p2", turn());
    at(&sim, "I", "turn 2 (p2): announce attackers", &["p1", "p2"], &[Announce, Resolve]);
    refused_by(
        &mut sim,
        "p1",
        attackers(&[json!({"name": "Troll"})]),
        "The active player is the only one that can perform attacks during his/her Attack/Move-phase",
    );
    sim.act("p2", attackers(&[json!({"name": "Knight"})]));
    refused_by(&mut sim, "p2", turn(), TURN);
    sim.pass(&["p1", "p2"]);
    sim.act("p1", blocks(&[]));
    at(&sim, "II", "undefended: influence lost", &["p1", "p2", "Dana"], &[Resolve]);
    let undefended = |damage: Value, lost: i64| json!({"type": "resolve", "what": "undefended", "damage": damage, "influence_lost": lost});
    refused_by(&mut sim, "p1", undefended(json!([]), 0), "II");
    refused_by(
        &mut sim,
        "p1",
        undefended(json!([{"attacker": "Knight", "damage": 2}]), 3),
        "II: the defending player loses influence equal to the total amount of damage dealt by the attackers",
    );
    refused_by(
        &mut sim,
        "p1",
        undefended(json!([{"attacker": "Knight", "damage": 1}]), 1),
        "II: influence lost equal to the total damage dealt by the attackers; an attacker deals its ATK, all effects taken into account (gap 5, module docs)",
    );
    sim.act("p1", undefended(json!([{"attacker": "Knight", "damage": 2}]), 2));

    // III: an attacker left undefended beside a defended one.
    sim.act("p1", turn());
    refused_by(&mut sim, "p1", attackers(&[json!({"name": "Troll"})]), "Only unmarked creatures may attack or defend");
    sim.act("p1", json!({"type": "resolve", "what": "unmark", "creatures": ["Troll"]}));
    sim.act("p1", attackers(&[json!({"name": "Troll"}), creature("Imp", 1, 1)]));
    sim.pass(&["p2", "p1"]);
    sim.act("p2", blocks(&[(json!({"name": "Wall"}), "Troll")]));
    at(&sim, "III", "attackers left undefended", &["Dana"], &[Resolve]);
    assert!(sim.view().awaiting_ruling.is_some());
    let unblocked = |lost: i64| json!({"type": "resolve", "what": "unblocked", "influence_lost": lost});
    refused_by(&mut sim, "p1", unblocked(1), "gap 2 (module docs): the text is silent; a judge rules");
    refused_by(&mut sim, "Dana", unblocked(-1), "gap 2 (module docs)");
    sim.act("Dana", unblocked(1));
    at(&sim, "IV", "Response phase of the combat", &["p2"], &[Play, Pass]);
}

/// With an Event played in the attack, the defending player alone
/// could record the damage and influence it loses itself (0/0 was
/// accepted). A player's record of the damage, when effects count, is a
/// claim: it stands once the other player confirms it, or a judge records
/// the damage; nothing is lost before.
#[test]
fn undefended_damage_with_an_effect_played_needs_the_other_players_confirmation_or_a_judge() {
    let undefended = |damage: &[(&str, i64)], lost: i64| {
        json!({"type": "resolve", "what": "undefended", "influence_lost": lost,
               "damage": damage.iter().map(|(a, d)| json!({"attacker": a, "damage": d})).collect::<Vec<_>>()})
    };
    let confirm = || json!({"type": "resolve", "what": "confirm"});
    let attack_with_frenzy = || {
        let mut sim = game();
        sim.act("p1", attackers(&[creature("Imp", 2, 1), creature("Orc", 3, 2)]));
        sim.pass(&["p2"]);
        sim.act("p1", event("Frenzy"));
        sim.pass(&["p2", "p1"]);
        sim.act("p2", blocks(&[]));
        sim
    };
    // The defending player's 0/0 waits for the attacking player.
    let mut sim = attack_with_frenzy();
    sim.act("p2", undefended(&[("Imp", 0), ("Orc", 0)], 0));
    assert_eq!(sim.wtactics().influence_lost["p2"], 0);
    assert_eq!(sim.view().may_act, vec!["p1", "Dana"], "the attacking player confirms, or a judge records");
    let head = sim.events.last().unwrap().hash.clone();
    let v = sim.refused("p2", confirm());
    assert!(v.message.contains("Player p1 (p1) confirms what Player p2 (p2) recorded"), "{v}");
    let v = sim.refused("p2", attackers(&[creature("Elf", 1, 1)]));
    assert!(!v.message.is_empty());
    assert_eq!(sim.events.last().unwrap().hash, head, "refusals leave the head as it was");
    // A judge records what the table determined: it stands.
    sim.act("Dana", undefended(&[("Imp", 3), ("Orc", 3)], 6));
    assert_eq!(sim.wtactics().influence_lost["p2"], 6);

    // The attacking player's record waits for the defending player; confirmed, it stands.
    let mut sim = attack_with_frenzy();
    sim.act("p1", undefended(&[("Imp", 3), ("Orc", 3)], 6));
    assert_eq!(sim.wtactics().influence_lost["p2"], 0, "not lost before it is confirmed");
    sim.refused("p1", confirm());
    sim.act("p2", confirm());
    assert_eq!(sim.wtactics().influence_lost["p2"], 6);

    // With no effect played the damage is the attackers' own ATK: nothing to confirm.
    let mut sim = game();
    sim.act("p1", attackers(&[creature("Imp", 2, 1)]));
    sim.pass(&["p2", "p1"]);
    sim.act("p2", blocks(&[]));
    sim.act("p2", undefended(&[("Imp", 2)], 2));
    assert_eq!(sim.wtactics().influence_lost["p2"], 2);
}
