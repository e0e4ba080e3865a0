//! Scenario tests: Riftbound combat and showdowns, walked against
//! shared/rules/riftbound-combat-and-showdowns.md.

mod common;

use arbiter::rules::riftbound::Phase;
use common::*;
use serde_json::{Value, json};

fn game(mode: &str, seats: &[&str], battlefields: &[&str]) -> Sim {
    let mut options = json!({"mode": mode, "battlefields": battlefields});
    if mode == "2v2" {
        options["teams"] = json!([[seats[0], seats[2]], [seats[1], seats[3]]]);
    }
    Sim::ruleset("riftbound", seats, &["Dana"], options)
}

fn turn() -> Value {
    json!({"type": "announce", "what": "turn"})
}

/// A turn begins the way a table records it: the turn under way ends by
/// its player's `end_turn`, then the next player announces its turn.
trait Turns {
    fn begin(&mut self, who: &str) -> u64;
}

impl Turns for Sim {
    #[track_caller]
    fn begin(&mut self, who: &str) -> u64 {
        if self.riftbound().phase == Phase::Open {
            let player = self.riftbound().turn.as_ref().unwrap().player.clone();
            self.act(&player, json!({"type": "announce", "what": "end_turn"}));
        }
        self.act(who, turn())
    }
}
fn mv(units: Value, to: &str) -> Value {
    json!({"type": "announce", "what": "move", "units": units, "to": to})
}
fn unit(name: &str, might: i64) -> Value {
    json!({"name": name, "might": might})
}
fn spell(kind: &str, card: &str) -> Value {
    json!({"type": "play", "kind": kind, "card": card})
}
fn trigger(card: &str, t: &str) -> Value {
    json!({"type": "play", "kind": "trigger", "card": card, "trigger": t})
}
fn resolve_item(item: u64, changes: Value) -> Value {
    json!({"type": "resolve", "what": "chain_item", "item": item, "changes": changes})
}
fn damage(list: &[(&str, i64)]) -> Value {
    json!({"type": "resolve", "what": "damage", "assignments": list.iter().map(|(u, d)| json!({"unit": u, "damage": d})).collect::<Vec<_>>()})
}

/// p1 takes the first turn and does nothing; p2 takes Altar without combat:
/// a showdown in which all players are relevant, then control.
fn p2_holds_altar(sim: &mut Sim, units: Value) {
    sim.begin("p1");
    sim.begin("p2");
    sim.act("p2", mv(units, "Altar"));
    assert_eq!(sim.view().step.title, "Showdown");
    assert_eq!(sim.view().may_act, vec!["p2"], "the mover has Focus first");
    sim.pass(&["p2", "p1"]);
    assert_eq!(sim.riftbound().battlefields["Altar"].controller.as_deref(), Some("p2"));
}

#[test]
fn a_combat_walks_showdown_chain_damage_and_resolution() {
    let mut sim = game("1v1", &["p1", "p2"], &["Altar", "Forge"]);
    p2_holds_altar(&mut sim, json!([unit("Wall", 3), unit("Guard", 3), unit("Scout", 2)]));
    assert_eq!(sim.riftbound().scores["p2"], 1, "Conquer: gained control of a battlefield");
    assert_eq!(board(&sim).scoring[0].said, "Player p2 (p2) scores a point: conquered Altar (1 of 8)");
    sim.begin("p1");
    sim.refused("p2", mv(json!([{"name": "Wall"}]), "Forge")); // not p2's turn
    sim.act("p1", mv(json!([{"name": "Brute", "might": 2, "assault": [1, 2]}]), "Altar"));
    // Step 1: roles; Assault stacks: 2 + 1 + 2 = 5 Might while attacking.
    let s = sim.riftbound();
    assert_eq!(s.combat_might["Brute"], 5);
    assert_eq!(sim.view().step.title, "Showdown Step: Initial Chain");
    sim.refused("p2", trigger("Ambush", "defend")); // the Attacker (Focus) orders first
    sim.refused("p1", trigger("Brace", "defend"));
    let t1 = sim.act("p1", trigger("War Cry", "attack"));
    let t2 = sim.act("p2", trigger("Brace", "defend"));
    sim.pass(&["p1", "p2"]);
    // The chain resolves newest first.
    let v = sim.refused("p1", resolve_item(t1, json!([])));
    assert!(v.message.contains(&format!("seq {t2}")), "{v}");
    sim.act("p2", resolve_item(t2, json!([])));
    sim.act("p1", resolve_item(t1, json!([])));
    // Showdown window: the Attacker has Focus.
    assert_eq!(sim.view().may_act, vec!["p1"]);
    let a = sim.act("p1", spell("action", "Rally"));
    sim.refused("p2", spell("action", "Smite")); // only Reactions on a Chain
    let r = sim.act("p2", spell("reaction", "Counterspell"));
    sim.pass(&["p1", "p2"]);
    sim.act("p2", resolve_item(r, json!([])));
    sim.act("p1", resolve_item(a, json!([])));
    // Focus passed when the Chain resolved.
    assert_eq!(sim.view().may_act, vec!["p2"]);
    sim.pass(&["p2", "p1"]);
    // Step 2: the Attacker assigns 5 damage to units of 3, 3 and 2 Might.
    assert_eq!(sim.view().step.title, "Combat Damage Step");
    let v = sim.refused("p1", damage(&[("Wall", 2), ("Guard", 1), ("Scout", 1), ("Wall", 1)]));
    assert!(v.message.contains("twice") || v.message.contains("lethal"), "{v}");
    let v = sim.refused("p1", damage(&[("Scout", 1), ("Wall", 1), ("Guard", 3)]));
    assert!(v.message.contains("lethal is 2"), "2-1-1-1 style splits are refused: {v}");
    sim.refused("p1", damage(&[("Wall", 3), ("Guard", 1)])); // not all of the 5 Might
    sim.refused("p2", damage(&[("Brute", 8)])); // the Attacker assigns first
    sim.act("p1", damage(&[("Wall", 3), ("Guard", 2)]));
    // Then the Defender: 3 + 3 + 2 = 8 to the Brute (Might 5 in combat).
    sim.act("p2", damage(&[("Brute", 8)]));
    // Step 3: Wall and Brute die; only defenders remain: they keep control.
    let s = sim.riftbound();
    assert_eq!(s.trash, vec!["Brute", "Wall"]);
    assert_eq!(s.battlefields["Altar"].controller.as_deref(), Some("p2"));
    assert!(s.battlefields["Altar"].contested_by.is_none());
    assert!(s.units.values().all(|u| u.damage == 0), "all damage is cleared");
    assert_eq!(s.phase, Phase::Open);
}

#[test]
fn tank_units_take_lethal_damage_first() {
    let mut sim = game("1v1", &["p1", "p2"], &["Altar"]);
    p2_holds_altar(&mut sim, json!([unit("Wall", 2), {"name": "Bulwark", "might": 1, "tank": true, "shield": [2]}]));
    sim.begin("p1");
    sim.act("p1", mv(json!([unit("Brute", 4), unit("Imp", 1)]), "Altar"));
    sim.pass(&["p1", "p2", "p1", "p2"]);
    // Bulwark is a Tank with Might 1 + Shield 2 = 3 while defending.
    for list in [[("Bulwark", 2), ("Wall", 3)], [("Wall", 3), ("Bulwark", 2)]] {
        let v = sim.refused("p1", damage(&list));
        assert!(v.rule.contains("Tank") && v.message.contains("Wall gets damage while Tank Bulwark"), "{v}");
    }
    // The order of listing does not matter: the Tank has lethal damage.
    sim.act("p1", damage(&[("Wall", 2), ("Bulwark", 3)]));
    assert!(sim.view().step.title.contains("Damage"));
}

#[test]
fn outcomes_conquer_and_recall() {
    // Both sides remain: the attackers are recalled to base.
    let mut sim = game("1v1", &["p1", "p2"], &["Altar"]);
    p2_holds_altar(&mut sim, json!([unit("Wall", 5)]));
    sim.begin("p1");
    sim.act("p1", mv(json!([unit("Imp", 1)]), "Altar"));
    sim.pass(&["p1", "p2", "p1", "p2"]);
    sim.act("p1", damage(&[("Wall", 1)]));
    sim.act("p2", damage(&[("Imp", 5)]));
    assert!(!sim.riftbound().units.contains_key("Imp"));
    // Only attackers remain: conquered, and Conquer scores.
    sim.act("p1", mv(json!([unit("Giant", 9)]), "Altar"));
    sim.pass(&["p1", "p2", "p1", "p2"]);
    sim.act("p1", damage(&[("Wall", 9)]));
    sim.act("p2", damage(&[("Giant", 5)]));
    let s = sim.riftbound();
    assert_eq!(s.battlefields["Altar"].controller.as_deref(), Some("p1"));
    assert_eq!(s.scores["p1"], 1);
    // Both remain (p1 may put more than lethal on the Knight, gap 6): the attackers are recalled.
    sim.begin("p2");
    sim.act("p2", mv(json!([unit("Knight", 4), unit("Squire", 1)]), "Altar"));
    sim.pass(&["p2", "p1", "p2", "p1"]);
    sim.act("p2", damage(&[("Giant", 5)]));
    sim.act("p1", damage(&[("Knight", 9)]));
    let s = sim.riftbound();
    assert_eq!(s.units["Squire"].at, None, "attackers recalled to base");
    assert_eq!(s.units["Giant"].at.as_deref(), Some("Altar"));
    assert_eq!(s.battlefields["Altar"].controller.as_deref(), Some("p1"));
}

/// p2 holds Altar with a Wall; p1's Brute attacks it and both die: the seq of the last damage assignment.
fn both_sides_die_at_altar(sim: &mut Sim) -> u64 {
    p2_holds_altar(sim, json!([unit("Wall", 3)]));
    sim.begin("p1");
    sim.act("p1", mv(json!([unit("Brute", 3)]), "Altar"));
    sim.pass(&["p1", "p2", "p1", "p2"]);
    sim.act("p1", damage(&[("Wall", 3)]));
    sim.act("p2", damage(&[("Brute", 3)]))
}

/// When every unit of both sides dies, the text answers it twice
/// (the outcome table's "Neither | No control change"; the FAQ "What if all
/// Units die in Combat? No control change occurs"): the battlefield keeps
/// its controller, and the game goes on without a judge.
#[test]
fn when_every_unit_dies_in_combat_no_control_change_occurs() {
    let mut sim = game("1v1", &["p1", "p2"], &["Altar"]);
    both_sides_die_at_altar(&mut sim);
    let s = sim.riftbound();
    assert!(s.units.is_empty());
    assert!(s.battlefields["Altar"].contested_by.is_none());
    assert_eq!(s.battlefields["Altar"].controller.as_deref(), Some("p2"), "No control change");
    assert_eq!(s.phase, Phase::Open, "the game does not wait for a ruling");
    let v = sim.view();
    assert_eq!(v.awaiting_ruling, None);
    assert_eq!(v.may_act, vec!["p1", "Dana"], "the turn player (or a judge) ends the turn");
    // No ruling on control is taken: the text has answered.
    let v =
        sim.refused("Dana", json!({"type": "resolve", "what": "control", "battlefield": "Altar", "controller": null}));
    assert!(v.message.contains("unknown variant `control`"), "{v}");
    // p2 still controls Altar at its Beginning Phase: Hold scores.
    sim.begin("p2");
    assert_eq!(sim.riftbound().scores["p2"], 2);
}

/// After "No control change" a player controls a battlefield with no units
/// there. An opponent's units moving in contest it, and no combat follows
/// ("Combat occurs (if defender has Units)"): "After Combat, whoever has
/// remaining Units controls it", a Conquer.
#[test]
fn units_moving_into_a_battlefield_its_controller_has_no_units_at_take_it() {
    let mut sim = game("1v1", &["p1", "p2"], &["Altar"]);
    both_sides_die_at_altar(&mut sim);
    let lines = said(&mut sim, "p1", mv(json!([unit("Giant", 5)]), "Altar"));
    assert_eq!(
        lines,
        [
            "Giant (Might 5) of Player p1 (p1) moves to Altar",
            "Player p1 (p1) controls Altar (was Player p2 (p2))",
            "Player p1 (p1) scores a point: conquered Altar (1 of 8)",
        ]
    );
    assert_eq!(sim.riftbound().phase, Phase::Open);
    sim.begin("p2");
    assert_eq!(sim.riftbound().scores["p2"], 1, "no Hold of a battlefield p2 no longer controls");
}

/// A move of a unit to the battlefield it already stands on moves
/// nothing: it is refused, naming the unit and the battlefield, as is a
/// chain item's change that would (it would use up the item); and no move
/// offers it.
#[test]
fn a_unit_is_not_moved_where_it_already_stands() {
    let mut sim = game("1v1", &["p1", "p2"], &["Altar", "Forge"]);
    p2_holds_altar(&mut sim, json!([unit("Wall", 3), unit("Guard", 2)]));
    sim.begin("p1");
    sim.begin("p2");
    let v = sim.refused("p2", mv(json!([{"name": "Guard"}]), "Altar"));
    assert!(v.message.contains("Guard is already at Altar"), "{v}");
    let v = sim.refused("p2", mv(json!([{"name": "Imp", "might": 1}, {"name": "Wall"}]), "Altar"));
    assert!(v.message.contains("Wall is already at Altar"), "{v}");
    for (label, action) in offered(&sim, "p2") {
        if action["what"] == "move" && action["to"] == "Altar" {
            panic!("{label} offers to move a unit to Altar, where p2's units are all already");
        }
    }
    // A unit at base is not moved to base either.
    sim.act("p2", json!({"type": "announce", "what": "move", "to": null, "units": [unit("Reserve", 2)]}));
    let v = sim.refused("p2", json!({"type": "announce", "what": "move", "to": null, "units": [{"name": "Reserve"}]}));
    assert!(v.message.contains("Reserve is already at base"), "{v}");
    // A chain item's change: Guard "moves" to Altar in p2's showdown at Forge.
    sim.act("p2", mv(json!([{"name": "Reserve"}]), "Forge"));
    let call = sim.act("p2", spell("action", "Regroup"));
    sim.pass(&["p1", "p2"]);
    let v = sim.refused("p2", resolve_item(call, json!([{"unit": "Guard", "to": "Altar"}])));
    assert!(v.message.contains("Guard is already at Altar"), "{v}");
    sim.act("p2", resolve_item(call, json!([{"unit": "Guard", "to": "Forge"}])));
    assert_eq!(sim.riftbound().units["Guard"].at.as_deref(), Some("Forge"));
}

#[test]
fn a_player_whose_last_unit_dies_loses_control() {
    let mut sim = game("1v1", &["p1", "p2"], &["Altar", "Forge"]);
    p2_holds_altar(&mut sim, json!([unit("Wall", 3)]));
    assert_eq!(sim.riftbound().scores["p2"], 1);
    // p1 moves to the empty Forge; in that showdown, p1's Bolt kills the Wall at Altar.
    sim.begin("p1");
    sim.act("p1", mv(json!([unit("Imp", 1)]), "Forge"));
    let bolt = sim.act("p1", spell("action", "Bolt"));
    sim.pass(&["p2", "p1"]);
    sim.act("p1", resolve_item(bolt, json!([{"unit": "Wall", "dies": true}])));
    assert_eq!(sim.riftbound().battlefields["Altar"].controller, None, "Lost if you have no Units there");
    sim.pass(&["p2", "p1"]);
    assert_eq!(sim.riftbound().battlefields["Forge"].controller.as_deref(), Some("p1"));
    // P2 kept Altar with no units there and scored a Hold.
    sim.begin("p2");
    assert_eq!(sim.riftbound().scores["p2"], 1);
    // Moving the last units away loses control too.
    sim.begin("p1");
    assert_eq!(sim.riftbound().scores["p1"], 2, "conquered Forge, then held it");
    sim.act("p1", json!({"type": "announce", "what": "move", "units": [{"name": "Imp"}], "to": null}));
    assert_eq!(sim.riftbound().battlefields["Forge"].controller, None);
}

#[test]
fn a_teammate_left_at_the_battlefield_takes_control_without_scoring() {
    // Teams: a and c against b and d; turns a, b, c, d.
    let mut sim = game("2v2", &["a", "b", "c", "d"], &["Altar", "Forge"]);
    sim.begin("a");
    sim.act("a", mv(json!([unit("Knight", 2)]), "Altar"));
    sim.pass(&["a", "b", "c", "d"]);
    sim.begin("b");
    sim.begin("c");
    sim.act("c", mv(json!([unit("Squire", 1)]), "Altar"));
    sim.act("c", mv(json!([unit("Imp", 1)]), "Forge"));
    sim.pass(&["c"]);
    let bolt = sim.act("d", spell("action", "Bolt"));
    sim.pass(&["a", "b", "c", "d"]);
    sim.act("d", resolve_item(bolt, json!([{"unit": "Knight", "dies": true}])));
    // "Controlled - A player has Units there": c; a Conquer, but "Can't score
    // Battlefields teammate controlled at Beginning Phase".
    let s = sim.riftbound();
    assert_eq!(s.battlefields["Altar"].controller.as_deref(), Some("c"));
    assert_eq!(s.scores["team1"], 1);
}

/// Three players: p2 holds Altar, p3 holds Forge, and p1 moves two units to
/// Tower and plays Portal in that showdown; everyone passed on it. Returns
/// the game and Portal's seq.
fn portal_in_the_tower_showdown() -> (Sim, u64) {
    let mut sim = game("ffa3", &["p1", "p2", "p3"], &["Altar", "Forge", "Tower"]);
    sim.begin("p1");
    sim.begin("p2");
    sim.act("p2", mv(json!([unit("Wall", 3)]), "Altar"));
    sim.pass(&["p2", "p3", "p1"]);
    sim.begin("p3");
    sim.act("p3", mv(json!([unit("Golem", 3)]), "Forge"));
    sim.pass(&["p3", "p1", "p2"]);
    sim.begin("p1");
    sim.act("p1", mv(json!([unit("Imp", 1), unit("Rat", 1)]), "Tower"));
    let portal = sim.act("p1", spell("action", "Portal"));
    sim.pass(&["p2", "p3", "p1"]);
    (sim, portal)
}

#[test]
fn a_combat_that_no_longer_happens_leaves_the_battlefield_to_the_player_there() {
    let (mut sim, portal) = portal_in_the_tower_showdown();
    sim.act("p1", resolve_item(portal, json!([{"unit": "Imp", "to": "Altar"}, {"unit": "Rat", "to": "Forge"}])));
    sim.pass(&["p2", "p3", "p1"]);
    sim.act("p1", json!({"type": "announce", "what": "combat", "battlefield": "Forge"}));
    // During the Forge combat, p1's trigger kills the Wall at Altar, whose combat is pending.
    let howl = sim.act("p1", trigger("Howl", "attack"));
    sim.pass(&["p3", "p1"]);
    sim.act("p1", resolve_item(howl, json!([{"unit": "Wall", "dies": true}])));
    assert_eq!(
        sim.riftbound().battlefields["Altar"].controller.as_deref(),
        Some("p2"),
        "Maintained while Contested by opponent"
    );
    sim.pass(&["p1", "p3"]);
    sim.act("p1", damage(&[("Golem", 1)]));
    sim.act("p3", damage(&[("Rat", 3)]));
    // The Altar combat does not happen; p2 has no units there, p1 has.
    let s = sim.riftbound();
    assert!(s.pending.is_empty());
    assert_eq!(s.battlefields["Altar"].controller.as_deref(), Some("p1"));
    assert_eq!(s.scores["p1"], 1, "gaining control is a Conquer");
    assert_eq!(s.phase, Phase::Open);
}

#[test]
fn no_damage_step_when_one_side_has_no_units_left() {
    let mut sim = game("1v1", &["p1", "p2"], &["Altar"]);
    p2_holds_altar(&mut sim, json!([unit("Wall", 5)]));
    sim.begin("p1");
    sim.act("p1", mv(json!([unit("Imp", 1)]), "Altar"));
    sim.pass(&["p1", "p2"]);
    let bolt = sim.act("p1", spell("action", "Bolt"));
    sim.pass(&["p2", "p1"]);
    sim.act("p1", resolve_item(bolt, json!([{"unit": "Wall", "dies": true}])));
    sim.pass(&["p2", "p1"]);
    // Only attackers remain: conquered at once.
    assert_eq!(sim.riftbound().battlefields["Altar"].controller.as_deref(), Some("p1"));
}

#[test]
fn the_two_player_limit_and_the_turn_players_choice_of_pending_combats() {
    // In the Tower showdown, a card moves p1's units into both Altar and Forge.
    let (mut sim, portal) = portal_in_the_tower_showdown();
    sim.refused("p1", resolve_item(portal, json!([{"unit": "Imp", "to": "Nowhere"}])));
    sim.act("p1", resolve_item(portal, json!([{"unit": "Imp", "to": "Altar"}, {"unit": "Rat", "to": "Forge"}])));
    sim.pass(&["p2", "p3", "p1"]);
    // Two pending combats: the turn player chooses.
    assert_eq!(sim.view().may_act, vec!["p1"]);
    sim.refused("p2", json!({"type": "announce", "what": "combat", "battlefield": "Forge"}));
    sim.refused("p1", json!({"type": "announce", "what": "combat", "battlefield": "Tower"}));
    sim.act("p1", json!({"type": "announce", "what": "combat", "battlefield": "Forge"}));
    assert_eq!(sim.riftbound().pending, vec!["Altar"]);
    // A third player's units may not go to a battlefield with a pending combat.
    let t = sim.act("p1", trigger("Howl", "attack"));
    sim.pass(&["p3", "p1"]);
    let v = sim.refused("p1", resolve_item(t, json!([{"unit": "Golem", "to": "Altar"}])));
    assert!(v.rule.contains("Two-Player Limit"), "{v}");
    sim.act("p1", resolve_item(t, json!([])));
    sim.pass(&["p1", "p3"]);
    sim.act("p1", damage(&[("Golem", 1)]));
    sim.act("p3", damage(&[("Rat", 3)]));
    // Then the Altar combat begins on its own.
    assert_eq!(sim.view().step.title, "Showdown Step: Initial Chain");
    assert_eq!(sim.view().may_act, vec!["p1"]);
}

#[test]
fn invited_players_join_the_showdown() {
    let mut sim = game("ffa3", &["p1", "p2", "p3"], &["Altar"]);
    p2_holds_altar_ffa(&mut sim);
    sim.begin("p1");
    sim.act("p1", mv(json!([unit("Imp", 1)]), "Altar"));
    sim.pass(&["p1", "p2"]);
    sim.refused("p3", spell("action", "Meddle")); // not relevant
    sim.act("p1", json!({"type": "announce", "what": "invite", "player": "p3"}));
    sim.refused("p2", json!({"type": "announce", "what": "accept"}));
    sim.act("p3", json!({"type": "announce", "what": "accept"}));
    assert_eq!(sim.view().may_act, vec!["p2"]);
    sim.pass(&["p2", "p3"]);
    assert_eq!(sim.view().may_act, vec!["p1"]);
    sim.pass(&["p1"]);
    assert!(sim.view().step.title.contains("Damage"));
}

fn p2_holds_altar_ffa(sim: &mut Sim) {
    sim.begin("p1");
    sim.begin("p2");
    sim.act("p2", mv(json!([unit("Wall", 3)]), "Altar"));
    sim.pass(&["p2", "p3", "p1"]);
    sim.begin("p3");
}

#[test]
fn scoring_once_per_battlefield_per_turn_and_the_final_point() {
    let mut sim = game("1v1", &["p1", "p2"], &["Altar", "Forge"]);
    // p1 conquers Altar without combat (1), then holds it for six turns (7).
    sim.begin("p1");
    sim.act("p1", mv(json!([unit("Wall", 9)]), "Altar"));
    sim.pass(&["p1", "p2"]);
    for _ in 0..6 {
        sim.begin("p2");
        sim.begin("p1");
    }
    assert_eq!(sim.riftbound().scores["p1"], 7);
    // Moving more units to a battlefield you control scores nothing.
    sim.act("p1", mv(json!([unit("Imp", 1)]), "Altar"));
    assert_eq!(sim.riftbound().scores["p1"], 7);
    // p2 takes Altar.
    sim.begin("p2");
    sim.act("p2", mv(json!([unit("Dragon", 20)]), "Altar"));
    sim.pass(&["p2", "p1", "p2", "p1"]);
    sim.act("p2", damage(&[("Wall", 9), ("Imp", 11)]));
    sim.act("p1", damage(&[("Dragon", 10)]));
    assert_eq!(sim.riftbound().battlefields["Altar"].controller.as_deref(), Some("p2"));
    // p1, one point from victory, conquers Forge but not every battlefield: draws a card instead.
    sim.begin("p1");
    sim.act("p1", mv(json!([unit("Scout", 1)]), "Forge"));
    sim.pass(&["p1", "p2"]);
    let s = sim.riftbound();
    assert_eq!(s.scores["p1"], 7);
    assert!(!s.scoring.last().unwrap().point, "the final point by Conquer needs every battlefield");
    assert_eq!(
        board(&sim).scoring.last().unwrap().said,
        "final point: Player p1 (p1) draws a card instead of scoring: conquered Forge, but not every battlefield this turn (7 of 8)"
    );
    // Then conquers Altar too this turn: every battlefield conquered, the final point scores.
    sim.act("p1", mv(json!([unit("Titan", 30)]), "Altar"));
    sim.pass(&["p1", "p2", "p1", "p2"]);
    sim.act("p1", damage(&[("Dragon", 30)]));
    sim.act("p2", damage(&[("Titan", 20)]));
    let s = sim.riftbound();
    assert_eq!(s.scores["p1"], 8);
    assert_eq!(s.winner.as_deref(), Some("p1"));
    assert_eq!(s.phase, Phase::Over);
    sim.refused("p2", turn());
}

#[test]
fn hold_scores_the_final_point_and_modes_set_the_victory_score() {
    let mut sim = game("1v1", &["p1", "p2"], &["Altar"]);
    sim.begin("p1");
    sim.act("p1", mv(json!([unit("Wall", 9)]), "Altar"));
    sim.pass(&["p1", "p2"]);
    for _ in 0..7 {
        sim.begin("p2");
        sim.begin("p1");
    }
    assert_eq!(sim.riftbound().winner.as_deref(), Some("p1"));
    let s = game("2v2", &["a", "b", "c", "d"], &["Altar"]);
    assert_eq!(s.riftbound().victory_score, 11);
    assert_eq!(s.riftbound().scores.keys().collect::<Vec<_>>(), vec!["team1", "team2"]);
    assert_eq!(game("ffa4", &["a", "b", "c", "d"], &["X"]).riftbound().victory_score, 8);
}

#[test]
fn team_mode_scores_per_team() {
    // Teams: a and c against b and d.
    let mut sim = game("2v2", &["a", "b", "c", "d"], &["Altar", "Forge"]);
    sim.begin("a");
    sim.act("a", mv(json!([unit("Knight", 2)]), "Altar"));
    // Without combat, all players are relevant, in seat order from the mover.
    sim.pass(&["a", "b", "c", "d"]);
    assert_eq!(sim.riftbound().scores["team1"], 1, "a Conquer scores for the team");
    // A teammate's units at the same battlefield are not opposing: no combat.
    sim.begin("b");
    sim.begin("c");
    sim.act("c", mv(json!([unit("Squire", 1)]), "Altar"));
    assert_eq!(sim.riftbound().phase, Phase::Open);
    assert!(sim.riftbound().battlefields["Altar"].contested_by.is_none());
    // Hold at c's Beginning Phase does not score a battlefield a controls.
    assert_eq!(sim.riftbound().scores["team1"], 1);
}

#[test]
fn turns_pass_in_seat_order() {
    let mut sim = game("ffa3", &["p1", "p2", "p3"], &["Altar"]);
    let v = sim.refused("p2", turn());
    assert!(v.message.contains("Player p1 (p1)'s turn next"), "the first turn is the first seat's: {v}");
    sim.begin("p1");
    sim.act("p1", mv(json!([unit("Wall", 3)]), "Altar"));
    sim.pass(&["p1", "p2", "p3"]);
    assert_eq!(sim.riftbound().scores["p1"], 1);
    // P1 announced three turns in a row and scored a Hold each time.
    sim.refused("p1", turn());
    assert_eq!(sim.view().may_act, vec!["p1", "Dana"], "p1 may still move, or end the turn");
    sim.act("p1", json!({"type": "announce", "what": "end_turn"}));
    let v = sim.refused("p1", turn());
    assert!(v.message.contains("Player p2 (p2)'s turn next"), "{v}");
    sim.refused("p3", turn());
    assert_eq!(sim.view().may_act, vec!["p2"], "p2 begins the next turn");
    sim.begin("p2");
    sim.begin("p3");
    sim.begin("p1");
    assert_eq!(sim.riftbound().scores["p1"], 2, "one Hold in p1's second turn");
    sim.refused("p1", turn());
}

#[test]
fn in_2v2_the_teams_alternate_in_the_order_the_header_gives() {
    // Teams: a and b against c and d, so seat order would not alternate.
    let options = json!({"mode": "2v2", "battlefields": ["Altar"], "teams": [["a", "b"], ["c", "d"]]});
    let mut sim = Sim::ruleset("riftbound", &["a", "b", "c", "d"], &["Dana"], options);
    for (who, wrong) in [("a", "b"), ("c", "b"), ("b", "d"), ("d", "a"), ("a", "c")] {
        if sim.riftbound().phase == Phase::Open {
            let player = sim.riftbound().turn.as_ref().unwrap().player.clone();
            sim.act(&player, end_turn());
        }
        let v = sim.refused(wrong, turn());
        assert!(v.message.contains(&format!("Player {who} ({who})'s turn next")), "{v}");
        sim.act(who, turn());
    }
}

/// Whether p1's 8 Might may be assigned so to p2's Golem (Might 3), Imp (5) and Rat (2).
fn assignment_accepted(list: &[(&str, i64)]) -> bool {
    let mut sim = game("1v1", &["p1", "p2"], &["Altar"]);
    p2_holds_altar(&mut sim, json!([unit("Golem", 3), unit("Imp", 5), unit("Rat", 2)]));
    sim.begin("p1");
    sim.act("p1", mv(json!([unit("Giant", 8)]), "Altar"));
    sim.pass(&["p1", "p2", "p1", "p2"]);
    sim.try_act("p1", damage(list)).is_ok()
}

#[test]
fn the_order_of_listing_does_not_change_whether_an_assignment_is_legal() {
    let cases: [(&[(&str, i64)], bool); 4] = [
        // More than lethal on the Golem, then the rest on the Imp: "Lethal damage = damage ≥ Unit's Might".
        (&[("Golem", 4), ("Imp", 4)], true),
        (&[("Golem", 2), ("Imp", 6)], true),
        (&[("Golem", 3), ("Imp", 5)], true),
        // Two units short of lethal: damage moved on before one had lethal damage.
        (&[("Golem", 2), ("Imp", 4), ("Rat", 2)], false),
    ];
    for (list, legal) in cases {
        let mut reversed = list.to_vec();
        reversed.reverse();
        let mut rotated = list.to_vec();
        rotated.rotate_left(1);
        for order in [list.to_vec(), reversed, rotated] {
            assert_eq!(assignment_accepted(&order), legal, "{order:?}");
        }
    }
}

/// Whether a 1v1 header with these options opens, or why not.
fn opens(options: Value) -> Result<(), String> {
    let mut h = header(&["p1", "p2"], &["Dana"]);
    h["ruleset"] = json!("riftbound");
    h["options"] = options;
    let h: arbiter::event::Header = serde_json::from_value(h).unwrap();
    arbiter::rules::Table::open(&h).map(|_| ()).map_err(|v| v.message)
}

#[test]
fn a_game_recorded_from_the_middle_of_a_match_starts_with_its_scores_and_control() {
    let options = json!({"mode": "1v1", "battlefields": ["Altar", "Forge"], "scores": {"p1": 7, "p2": 5},
        "control": {"Altar": "p2"}, "units": {"Altar": {"p2": [{"name": "Wall", "might": 3, "tank": true}]}}, "first_turn": "p2"});
    let mut sim = Sim::ruleset("riftbound", &["p1", "p2"], &["Dana"], options);
    let s = sim.riftbound();
    assert_eq!((s.scores["p1"], s.scores["p2"]), (7, 5));
    assert_eq!(s.units["Wall"].at.as_deref(), Some("Altar"));
    let v = sim.refused("p1", turn());
    assert!(v.message.contains("Player p2 (p2)'s turn next"), "{v}");
    sim.begin("p2");
    assert_eq!(sim.riftbound().scores["p2"], 6, "Hold of Altar");
    // The Wall is there: p1's move into Altar is a combat.
    sim.begin("p1");
    sim.act("p1", mv(json!([unit("Giant", 5)]), "Altar"));
    assert_eq!(sim.view().step.title, "Showdown Step: Initial Chain");
    sim.pass(&["p1", "p2", "p1", "p2"]);
    sim.act("p1", damage(&[("Wall", 5)]));
    sim.act("p2", damage(&[("Giant", 3)]));
    // One point from victory, p1 conquers Altar but not Forge: a card instead.
    let s = sim.riftbound();
    assert_eq!(s.battlefields["Altar"].controller.as_deref(), Some("p1"));
    assert_eq!(s.scores["p1"], 7);
    assert!(!s.scoring.last().unwrap().point);
}

#[test]
fn the_options_for_a_record_from_the_middle_of_a_match_are_checked() {
    let base = |extra: Value| {
        let mut o = json!({"mode": "1v1", "battlefields": ["Altar", "Forge"]});
        o.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        o
    };
    let wall = json!({"Altar": {"p1": [{"name": "Wall", "might": 3}]}});
    assert_eq!(opens(base(json!({"scores": {"p1": 7}, "control": {"Altar": "p1"}, "units": wall}))), Ok(()));
    for (extra, why) in [
        (json!({"scores": {"p1": 8}}), "8 wins the game"),
        (json!({"scores": {"p9": 1}}), "p9 is not a seat"),
        (json!({"scores": {"p1": -1}}), "scores"),
        (json!({"control": {"Tower": "p1"}, "units": wall}), "Tower is not a battlefield"),
        (json!({"control": {"Altar": "p9"}}), "p9 is not a seat"),
        (json!({"control": {"Altar": "p1"}}), "Lost if you have no Units there"),
        (json!({"units": wall}), "Altar is uncontrolled"),
        (json!({"control": {"Altar": "p2"}, "units": wall}), "would be a combat"),
        (json!({"control": {"Altar": "p1"}, "units": {"Altar": {"p1": [{"name": "Wall"}]}}}), "give its Might"),
        (json!({"first_turn": "p3"}), "p3 is not a seat"),
    ] {
        let got = opens(base(extra.clone()));
        assert!(got.as_ref().is_err_and(|m| m.contains(why)), "{extra}: {got:?}");
    }
    // In 2v2 the scores are the teams'.
    let team = |scores: Value| {
        let mut h = header(&["a", "b", "c", "d"], &["Dana"]);
        h["ruleset"] = json!("riftbound");
        h["options"] =
            json!({"mode": "2v2", "battlefields": ["Altar"], "teams": [["a", "c"], ["b", "d"]], "scores": scores});
        let h: arbiter::event::Header = serde_json::from_value(h).unwrap();
        arbiter::rules::Table::open(&h).map(|_| ()).map_err(|v| v.message)
    };
    assert_eq!(team(json!({"team1": 10, "team2": 4})), Ok(()));
    assert!(team(json!({"a": 3})).is_err_and(|m| m.contains("team1, team2")));
    assert!(team(json!({"team2": 11})).is_err());
}

// ---------------------------------------------------------------------------
// The board: what a judge draws, and what changed in its words.
// ---------------------------------------------------------------------------

fn board(sim: &Sim) -> arbiter::rules::riftbound::Board {
    match sim.table.board() {
        Some(arbiter::rules::Board::Riftbound(b)) => b,
        other => panic!("not a Riftbound board: {other:?}"),
    }
}

/// Acts, and returns what changed in the board's words, then what the ruleset recorded.
#[track_caller]
fn said(sim: &mut Sim, actor: &str, action: Value) -> Vec<String> {
    let before = sim.table.board().unwrap();
    let seq = sim.act(actor, action);
    let mut lines = sim.table.board().unwrap().changes_since(&before);
    lines.extend(sim.table.said(seq));
    lines
}

#[test]
fn the_board_says_combats_outcomes_and_control_as_a_judge_writes_them() {
    let mut sim = game("1v1", &["p1", "p2"], &["Altar"]);
    p2_holds_altar(&mut sim, json!([unit("Wall", 5)]));
    sim.begin("p1");
    let lines = said(&mut sim, "p1", mv(json!([{"name": "Imp", "might": 1, "assault": [2]}]), "Altar"));
    assert_eq!(
        lines,
        [
            "Imp (Might 1, Assault 2) of Player p1 (p1) moves to Altar",
            "Player p1 (p1) contests Altar",
            "combat at Altar: Player p1 (p1) attacks with Imp 3 (Might 3), Player p2 (p2) defends with Wall 5 (Might 5)",
            "initial chain: Player p1 (p1) has Focus and orders triggers first",
        ]
    );
    let b = board(&sim);
    let combat = b.combat.as_ref().unwrap();
    assert_eq!((combat.step.as_str(), combat.attacker_might, combat.defender_might), ("Showdown Step", 3, 5));
    let imp = b.battlefields[0].units.iter().find(|u| u.name == "Imp").unwrap();
    assert_eq!((imp.might, imp.combat_might), (1, Some(3)), "Assault while attacking");
    assert_eq!(b.battlefields[0].contested_by.as_deref(), Some("Player p1 (p1)"));
    sim.pass(&["p1", "p2", "p1"]);
    assert_eq!(
        said(&mut sim, "p2", json!({"type": "pass"})),
        ["Combat Damage Step: Player p1 (p1) assigns 3 damage first"]
    );
    assert_eq!(
        said(&mut sim, "p1", damage(&[("Wall", 3)])),
        ["Player p1 (p1) assigns Wall 3; Player p2 (p2) assigns 5 damage next"]
    );
    assert_eq!(
        said(&mut sim, "p2", damage(&[("Imp", 5)])),
        [
            "Imp of Player p1 (p1) dies",
            "the combat at Altar is over: only Player p2 (p2)'s units are left (Defenders keep control)"
        ]
    );
    // Both sides remain: the Attackers are recalled to base.
    sim.act("p1", mv(json!([unit("Giant", 9)]), "Altar"));
    sim.pass(&["p1", "p2", "p1", "p2"]);
    sim.act("p1", damage(&[("Wall", 9)]));
    sim.act("p2", damage(&[("Giant", 5)]));
    sim.begin("p2");
    sim.act("p2", mv(json!([unit("Knight", 4), unit("Squire", 1)]), "Altar"));
    sim.pass(&["p2", "p1", "p2", "p1"]);
    sim.act("p2", damage(&[("Giant", 5)]));
    let lines = said(&mut sim, "p1", damage(&[("Knight", 9)]));
    assert_eq!(
        lines,
        [
            "Knight of Player p2 (p2) dies",
            "Squire of Player p2 (p2) is recalled to base",
            "the combat at Altar is over: both sides have units left (Attackers Recalled to Base)",
        ]
    );
    assert_eq!(board(&sim).base[0].name, "Squire");
    let rows = arbiter::rules::riftbound::outcome(&board(&sim));
    assert_eq!(rows[0], ("scores".into(), "Player p1 (p1) 1, Player p2 (p2) 1".into()), "the scores first");
    assert!(rows.contains(&("control of Altar".into(), "Player p1 (p1)".into())), "{rows:?}");

    // Neither side remains: no control change, and the board says so.
    let mut sim = game("1v1", &["p1", "p2"], &["Altar"]);
    p2_holds_altar(&mut sim, json!([unit("Wall", 3)]));
    sim.begin("p1");
    sim.act("p1", mv(json!([unit("Brute", 3)]), "Altar"));
    sim.pass(&["p1", "p2", "p1", "p2"]);
    sim.act("p1", damage(&[("Wall", 3)]));
    let lines = said(&mut sim, "p2", damage(&[("Brute", 3)]));
    assert_eq!(
        lines,
        [
            "Brute of Player p1 (p1) dies",
            "Wall of Player p2 (p2) dies",
            "the combat at Altar is over: neither side has units left (No control change)",
        ]
    );
    assert_eq!(board(&sim).battlefields[0].controller.as_deref(), Some("Player p2 (p2)"));
}

#[test]
fn the_board_shows_the_chain_focus_invitations_and_pending_combats() {
    let mut sim = game("ffa3", &["p1", "p2", "p3"], &["Altar"]);
    p2_holds_altar_ffa(&mut sim);
    sim.begin("p1");
    sim.act("p1", mv(json!([unit("Imp", 1)]), "Altar"));
    sim.pass(&["p1"]);
    assert_eq!(said(&mut sim, "p2", json!({"type": "pass"})), ["Player p1 (p1) has Focus"]);
    assert_eq!(
        said(&mut sim, "p1", json!({"type": "announce", "what": "invite", "player": "p3"})),
        ["Player p3 (p3) is invited into the showdown"]
    );
    assert_eq!(board(&sim).showdown.unwrap().invited.as_deref(), Some("Player p3 (p3)"));
    assert_eq!(
        said(&mut sim, "p3", json!({"type": "announce", "what": "accept"})),
        ["Player p3 (p3) joins the showdown", "Player p2 (p2) has Focus"]
    );
    assert_eq!(
        said(&mut sim, "p2", spell("action", "Bolt")),
        ["Bolt (seq 17, action) by Player p2 (p2) opens the Chain"]
    );
    let reaction = spell("reaction", "Ward");
    assert_eq!(said(&mut sim, "p3", reaction), ["Ward (seq 18, reaction) by Player p3 (p3) goes on the Chain"]);
    let s = board(&sim).showdown.unwrap();
    assert_eq!((s.stage.as_str(), s.focus.as_deref()), ("Chain open", Some("Player p2 (p2)")));
    let chain: Vec<(&str, &str)> = s.chain.iter().map(|i| (i.card.as_str(), i.player.as_str())).collect();
    assert_eq!(chain, [("Bolt", "Player p2 (p2)"), ("Ward", "Player p3 (p3)")], "oldest first");
    assert_eq!(s.relevant, ["Player p1 (p1)", "Player p2 (p2)", "Player p3 (p3)"]);

    // Two pending combats; one that no longer happens is said so.
    let (mut sim, portal) = portal_in_the_tower_showdown();
    let lines = said(
        &mut sim,
        "p1",
        resolve_item(portal, json!([{"unit": "Imp", "to": "Altar"}, {"unit": "Rat", "to": "Forge"}])),
    );
    assert_eq!(
        lines[..3],
        [
            "Portal (seq 17) by Player p1 (p1) resolves",
            "Imp of Player p1 (p1) moves to Altar",
            "Rat of Player p1 (p1) moves to Forge"
        ]
    );
    // Pending as the card contests them, while the Tower showdown goes on.
    assert_eq!(
        lines[3..],
        [
            "Player p1 (p1) contests Altar",
            "Player p1 (p1) contests Forge",
            "combat pending at Altar: Player p1 (p1) attacks, Player p2 (p2) defends",
            "combat pending at Forge: Player p1 (p1) attacks, Player p3 (p3) defends",
            "Player p2 (p2) has Focus",
        ]
    );
    sim.pass(&["p2", "p3"]);
    let lines = said(&mut sim, "p1", json!({"type": "pass"}));
    assert_eq!(lines, ["the showdown at Tower is over"]);
    assert_eq!(board(&sim).pending_combats.len(), 2);
    sim.act("p1", json!({"type": "announce", "what": "combat", "battlefield": "Forge"}));
    let howl = sim.act("p1", trigger("Howl", "attack"));
    sim.pass(&["p3", "p1"]);
    sim.act("p1", resolve_item(howl, json!([{"unit": "Wall", "dies": true}])));
    sim.pass(&["p1", "p3"]);
    sim.act("p1", damage(&[("Golem", 1)]));
    let lines = said(&mut sim, "p3", damage(&[("Rat", 3)]));
    assert_eq!(
        lines[2..],
        [
            "Altar is no longer contested: the combat there does not happen",
            "Player p1 (p1) controls Altar (was Player p2 (p2))",
            "Player p1 (p1) scores a point: conquered Altar (1 of 8)",
        ]
    );
}

/// A card in a showdown moves units into opponents' battlefields:
/// their combats are pending (a third player may not go there, the Two-Player
/// Limit), and the board lists them while the showdown goes on, not only
/// from the Cleanup on.
#[test]
fn the_board_lists_a_combat_pending_from_a_card_while_the_showdown_goes_on() {
    let (mut sim, portal) = portal_in_the_tower_showdown();
    sim.act("p1", resolve_item(portal, json!([{"unit": "Imp", "to": "Altar"}, {"unit": "Rat", "to": "Forge"}])));
    assert!(matches!(sim.riftbound().phase, Phase::Showdown(_)), "the Tower showdown goes on");
    let pending: Vec<(String, String, String)> =
        board(&sim).pending_combats.into_iter().map(|p| (p.battlefield, p.attacker, p.defender)).collect();
    let pair = |bf: &str, d: &str| (bf.to_string(), "Player p1 (p1)".to_string(), format!("Player {d} ({d})"));
    assert_eq!(pending, [pair("Altar", "p2"), pair("Forge", "p3")]);
    assert_eq!(sim.riftbound().pending, ["Altar", "Forge"]);
    // The Cleanup after the showdown: the turn player chooses between them.
    sim.pass(&["p2", "p3", "p1"]);
    assert_eq!(sim.riftbound().phase, Phase::ChooseCombat);
    assert_eq!(board(&sim).pending_combats.len(), 2);
}

#[test]
fn in_2v2_the_board_scores_by_team_with_its_players() {
    let mut sim = game("2v2", &["a", "b", "c", "d"], &["Altar", "Forge"]);
    sim.begin("a");
    sim.act("a", mv(json!([unit("Knight", 2)]), "Altar"));
    sim.pass(&["a", "b", "c", "d"]);
    let b = board(&sim);
    assert_eq!(b.scores[0].player, "team1 (Player a (a), Player c (c))");
    assert_eq!((b.scores[0].score, b.scores[1].score, b.victory_score), (1, 0, 11));
    assert_eq!(b.battlefields.iter().map(|b| b.name.as_str()).collect::<Vec<_>>(), ["Altar", "Forge"]);
}

/// A card that moves a unit into the battlefield of the combat under way
/// (here from base) used to crash the damage step (the unit had no Might
/// for the combat). The text does not say whether such a unit attacks or
/// defends (gap 11): the change is refused, nothing changes, and the combat
/// goes on with the units it began with.
#[test]
fn a_unit_moved_into_the_combat_under_way_is_refused_not_guessed() {
    let mut sim = game("1v1", &["p1", "p2"], &["Altar", "Forge"]);
    p2_holds_altar(&mut sim, json!([unit("Wall", 3)]));
    sim.begin("p1");
    // p1 keeps a unit at base, then attacks Altar.
    sim.act("p1", json!({"type": "announce", "what": "move", "to": null, "units": [unit("Reserve", 2)]}));
    sim.act("p1", mv(json!([unit("Brute", 4)]), "Altar"));
    sim.pass(&["p1", "p2"]);
    // In the showdown a card would bring Reserve from base into the combat.
    let call = sim.act("p1", spell("action", "Call to Arms"));
    sim.pass(&["p2", "p1"]);
    let v = sim.refused("p1", resolve_item(call, json!([{"unit": "Reserve", "to": "Altar"}])));
    assert!(v.rule.contains("gap 11") && v.message.contains("record the move after the combat"), "{v}");
    sim.act("p1", resolve_item(call, json!([])));
    sim.pass(&["p2", "p1"]);
    assert_eq!(sim.view().step.title, "Combat Damage Step");
    sim.act("p1", damage(&[("Wall", 4)]));
    sim.act("p2", damage(&[("Brute", 3)]));
    let s = sim.riftbound();
    assert_eq!(s.battlefields["Altar"].controller.as_deref(), Some("p1"), "only the attacker is left: conquered");
    assert_eq!(s.units["Reserve"].at, None, "Reserve stayed at base");
}

/// The moves offered to `seat` now, as (label, action) for the combat's own
/// (not notes or rulings).
fn offered(sim: &Sim, seat: &str) -> Vec<(String, Value)> {
    sim.table
        .moves(sim.events.len() as u64)
        .into_iter()
        .filter(|m| m.seat == seat && !matches!(m.kind.name(), "note" | "ruling"))
        .map(|m| (m.label, m.action))
        .collect()
}

#[test]
fn damage_moves_carry_the_lethal_amounts_tanks_first() {
    let mut sim = game("1v1", &["p1", "p2"], &["Altar"]);
    p2_holds_altar(&mut sim, json!([unit("Wall", 2), {"name": "Bulwark", "might": 1, "tank": true, "shield": [2]}]));
    sim.begin("p1");
    sim.act("p1", mv(json!([unit("Brute", 4), unit("Imp", 1)]), "Altar"));
    sim.pass(&["p1", "p2", "p1", "p2"]);
    // 5 damage; Bulwark (Tank, 1 + Shield 2 = 3) must have lethal before Wall gets any.
    let moves = offered(&sim, "p1");
    let computed: Vec<&Value> =
        moves.iter().filter(|(l, _)| !l.contains("typed")).map(|(_, a)| &a["assignments"]).collect();
    assert_eq!(
        computed,
        [&json!([{"unit": "Bulwark", "damage": 3}, {"unit": "Wall", "damage": 2}])],
        "only the Tank-first, lethal-first assignment: {moves:?}"
    );
    assert!(moves.iter().any(|(l, _)| l == "assign Player p1 (p1)'s 5 damage: Bulwark 3 (lethal), Wall 2 (lethal)"));
    // The judge may assign too; every computed move is accepted.
    assert!(offered(&sim, "Dana").iter().any(|(_, a)| a["assignments"] == *computed[0]));
    sim.act("p1", moves.iter().find(|(l, _)| !l.contains("typed")).unwrap().1.clone());
    // p2's 2 + 3 = 5 Might (Shield counts while defending) on Brute (4) and Imp (1): both lethal, once.
    let p2: Vec<Value> = offered(&sim, "p2")
        .into_iter()
        .filter(|(l, _)| !l.contains("typed"))
        .map(|(_, a)| a["assignments"].clone())
        .collect();
    assert_eq!(p2, [json!([{"unit": "Imp", "damage": 1}, {"unit": "Brute", "damage": 4}])]);
}

#[test]
fn moves_name_the_pending_combats_and_the_attackers_trigger() {
    let (mut sim, portal) = portal_in_the_tower_showdown();
    sim.act("p1", resolve_item(portal, json!([{"unit": "Imp", "to": "Altar"}, {"unit": "Rat", "to": "Forge"}])));
    sim.pass(&["p2", "p3", "p1"]);
    // Two pending combats: the turn player picks one.
    let choose = sim.table.moves(sim.events.len() as u64);
    let m = choose.iter().find(|m| m.seat == "p1" && m.label.starts_with("choose the combat")).unwrap();
    let options: Vec<&Value> = m.choose[0].options.iter().map(|o| &o.value).collect();
    assert_eq!(options, [&json!("Altar"), &json!("Forge")]);
    assert!(!choose.iter().any(|m| m.seat == "p2" && m.kind.name() == "announce"));
    sim.act("p1", json!({"type": "announce", "what": "combat", "battlefield": "Forge"}));
    // The Attacker's initial chain takes "when I attack" triggers, filled in.
    let p1 = offered(&sim, "p1");
    assert!(p1.iter().any(|(_, a)| a == &json!({"type": "play", "kind": "trigger", "trigger": "attack"})), "{p1:?}");
    assert!(offered(&sim, "p3").is_empty(), "the Defender adds its triggers after the Attacker");
}

/// A refusal as a judge reads it: the step (number and title), the rule
/// quoted, the message, and who may act.
fn refusal(sim: &mut Sim, actor: &str, action: Value) -> String {
    let v = sim.refused(actor, action);
    format!("{} {} | {} | {} | {}", v.step.number, v.step.title, v.rule, v.message, v.may_act.join(", "))
}

/// Passes for whoever holds the window until the showdown (any of its stages) ends.
fn pass_out_the_showdown(sim: &mut Sim) {
    while matches!(sim.riftbound().phase, Phase::Showdown(_)) {
        let holder = sim.view().may_act[0].clone();
        sim.pass(&[&holder]);
    }
}

/// Every row of the step table, walked in one game, each refusing someone
/// else and something the step does not take: the rule texts the refusals
/// quote are the table's, word for word as they were before the table.
#[test]
fn each_step_refuses_with_its_rows_rule() {
    let mut sim = game("ffa3", &["p1", "p2", "p3"], &["Altar", "Forge"]);
    let mut said = vec![];
    said.push(refusal(&mut sim, "p2", turn()));
    said.push(refusal(&mut sim, "p1", mv(json!([unit("Wall", 3)]), "Altar")));
    said.push(refusal(&mut sim, "p1", json!({"type": "pass"})));
    sim.begin("p1");
    said.push(refusal(&mut sim, "p2", mv(json!([unit("Imp", 1)]), "Altar")));
    // Without Combat: p1 takes Altar, all players relevant.
    sim.act("p1", mv(json!([unit("Wall", 3), unit("Guard", 2)]), "Altar"));
    said.push(refusal(&mut sim, "p2", json!({"type": "pass"})));
    said.push(refusal(&mut sim, "p1", json!({"type": "play", "kind": "trigger", "card": "Roar"})));
    let bolt = sim.act("p1", spell("action", "Bolt"));
    said.push(refusal(&mut sim, "p1", json!({"type": "pass"})));
    said.push(refusal(&mut sim, "p2", spell("action", "Zap")));
    sim.pass(&["p2", "p3", "p1"]);
    said.push(refusal(&mut sim, "p2", resolve_item(bolt, json!([]))));
    said.push(refusal(&mut sim, "p1", resolve_item(bolt + 1, json!([]))));
    said.push(refusal(&mut sim, "p1", json!({"type": "pass"})));
    sim.act("p1", resolve_item(bolt, json!([])));
    pass_out_the_showdown(&mut sim);
    // p2 attacks Altar: Step 1.
    sim.begin("p2");
    sim.act("p2", mv(json!([unit("Brute", 2)]), "Altar"));
    said.push(refusal(&mut sim, "p1", json!({"type": "pass"})));
    said.push(refusal(&mut sim, "p2", trigger("Roar", "defend")));
    said.push(refusal(&mut sim, "p2", spell("action", "Bolt")));
    sim.pass(&["p2", "p1"]);
    sim.act("p2", json!({"type": "announce", "what": "invite", "player": "p3"}));
    said.push(refusal(&mut sim, "p1", json!({"type": "announce", "what": "accept"})));
    said.push(refusal(&mut sim, "p3", json!({"type": "pass"})));
    sim.act("p3", json!({"type": "announce", "what": "decline"}));
    said.push(refusal(&mut sim, "p1", json!({"type": "announce", "what": "invite", "player": "p2"})));
    sim.pass(&["p1", "p2"]);
    // Step 2.
    said.push(refusal(&mut sim, "p1", damage(&[("Brute", 5)])));
    said.push(refusal(&mut sim, "p2", damage(&[("Guard", 1)])));
    said.push(refusal(&mut sim, "p2", json!({"type": "pass"})));
    sim.act("p2", damage(&[("Guard", 2)]));
    sim.act("p1", damage(&[("Brute", 5)]));
    assert_eq!(sim.riftbound().phase, Phase::Open);

    // Pending combats, and victory.
    let mut sim = game_with(json!({
        "mode": "1v1", "battlefields": ["Altar", "Forge", "Cave"], "scores": {"p2": 7},
        "control": {"Altar": "p2", "Forge": "p2"},
        "units": {"Altar": {"p2": [unit("Wall", 2)]}, "Forge": {"p2": [unit("Gate", 2)]}},
    }));
    sim.begin("p1");
    sim.act("p1", mv(json!([unit("Imp", 2), unit("Orc", 1), unit("Elf", 3)]), "Cave"));
    let portal = sim.act("p1", spell("action", "Portal"));
    sim.pass(&["p2", "p1"]);
    sim.act("p1", resolve_item(portal, json!([{"unit": "Imp", "to": "Altar"}, {"unit": "Orc", "to": "Forge"}])));
    pass_out_the_showdown(&mut sim);
    said.push(refusal(&mut sim, "p2", json!({"type": "announce", "what": "combat", "battlefield": "Altar"})));
    said.push(refusal(&mut sim, "p1", json!({"type": "announce", "what": "combat", "battlefield": "Cave"})));
    said.push(refusal(&mut sim, "p1", json!({"type": "pass"})));
    sim.act("p1", json!({"type": "announce", "what": "combat", "battlefield": "Altar"}));
    sim.pass(&["p1", "p2", "p1", "p2"]);
    sim.act("p1", damage(&[("Wall", 2)]));
    sim.act("p2", damage(&[("Imp", 2)]));
    // Neither side remains at Altar: "No control change", and the Forge combat begins.
    assert_eq!(sim.riftbound().battlefields["Altar"].controller.as_deref(), Some("p2"));
    sim.pass(&["p1", "p2", "p1", "p2"]);
    sim.act("p1", damage(&[("Gate", 1)]));
    sim.act("p2", damage(&[("Orc", 2)]));
    sim.begin("p2");
    said.push(refusal(&mut sim, "p1", turn()));
    #[rustfmt::skip]
    let want = [
        r#"Section 5 between turns | gap 10 (module docs): turns pass in seat order (2v2: the teams alternate) | it is Player p1 (p1)'s turn next, not Player p2 (p2)'s (turn order: Player p1 (p1), Player p2 (p2), Player p3 (p3)) | p1"#,
        r#"Section 5 between turns | gap 2 (module docs): the turn player moves units between showdowns | it is no one's turn: a player begins one with {"type":"announce","what":"turn"} | p1"#,
        r#"Section 5 between turns | the turn structure | not legal now: the next action is announce by Player p1 (p1) | p1"#,
        r#"Section 5 turn under way | gap 2 (module docs): the turn player moves units between showdowns | it is Player p1 (p1)'s turn | p1, Dana"#,
        r#"545-553 Showdown | Showdown (545-553): the player with Focus plays an Action or Reaction, activates an ability, invites a player, or passes; the showdown ends when all Relevant Players pass in sequence | Player p1 (p1) has Focus, not Player p2 (p2) | p1"#,
        r#"545-553 Showdown | Showdown (545-553): the player with Focus plays an Action or Reaction, activates an ability, invites a player, or passes; the showdown ends when all Relevant Players pass in sequence | with Focus: play an Action or Reaction, activate an ability, invite a player, or pass | p1"#,
        r#"545-553 Showdown: Chain | each card played creates a Chain; its items resolve newest first; Focus passes when the Chain resolves | it is Player p2 (p2)'s chance to react or pass | p2"#,
        r#"545-553 Showdown: Chain | each card played creates a Chain; its items resolve newest first; Focus passes when the Chain resolves | while a Chain is open only Reactions may be added | p2"#,
        r#"545-553 Showdown: Chain resolves | each card played creates a Chain; its items resolve newest first; Focus passes when the Chain resolves | Player p1 (p1) (who played it) or a judge records how Bolt resolves | p1, Dana"#,
        r#"545-553 Showdown: Chain resolves | each card played creates a Chain; its items resolve newest first; Focus passes when the Chain resolves | the Chain resolves newest first: seq 3 (Bolt) is next | p1, Dana"#,
        r#"545-553 Showdown: Chain resolves | each card played creates a Chain; its items resolve newest first; Focus passes when the Chain resolves | the Chain is resolving: record its newest item's resolution (resolve chain_item) | p1, Dana"#,
        r#"625 Showdown Step: Initial Chain | 625.3: Initial Chain: Player with Focus orders first | it is Player p2 (p2)'s turn to add a trigger or pass | p2"#,
        r#"625 Showdown Step: Initial Chain | 625.3: "When I attack" triggers, "When I defend" triggers | the Attacker puts "when I attack" triggers on the chain | p2"#,
        r#"625 Showdown Step: Initial Chain | 625.3: Initial Chain | the initial chain takes "when I attack" / "when I defend" triggers (play, kind trigger), or a pass | p2"#,
        r#"545-553 Showdown: invitation | Relevant Players: Invited | Player p3 (p3) answers the invitation | p3"#,
        r#"545-553 Showdown: invitation | Relevant Players: Invited | accept or decline the invitation | p3"#,
        r#"545-553 Showdown | Relevant Players: Invited: Players who accept invitation | Player p2 (p2) is not a player outside the showdown | p1"#,
        r#"626 Combat Damage Step | 626: Distribute Damage (Attacker first, then Defender) | Player p2 (p2) assigns damage now, not Player p1 (p1) | p2, Dana"#,
        r#"626 Combat Damage Step | 626.1: Sum Might for each side; 626.2: Distribute Damage | assignments: Player p2 (p2)'s units have 2 Might in all: assign exactly 2, each amount positive (assigned 1) | p2, Dana"#,
        r#"626 Combat Damage Step | the turn structure | not legal now: the next action is resolve by Player p2 (p2), Dana | p2, Dana"#,
        r#"620-621 Pending Combat | Pending Combat: Turn Player chooses which Pending Combat to resolve first | Player p2 (p2) is not the turn player | p1"#,
        r#"620-621 Pending Combat | Pending Combat | no combat is pending at Cave: ["Altar", "Forge"] | p1"#,
        r#"620-621 Pending Combat | the turn structure | not legal now: the next action is announce by Player p1 (p1) | p1"#,
        r#"629-633 Victory | Victory Scores | the game is over: Player p2 (p2) won | "#,
    ];
    assert_eq!(said, want);
}

fn game_with(options: Value) -> Sim {
    Sim::ruleset("riftbound", &["p1", "p2"], &["Dana"], options)
}

// ---------------------------------------------------------------------------
// The end of a turn.
// ---------------------------------------------------------------------------

fn end_turn() -> Value {
    json!({"type": "announce", "what": "end_turn"})
}

/// Refused, with the head hash unchanged.
#[track_caller]
fn refused_at_head(sim: &mut Sim, actor: &str, action: Value) -> arbiter::kernel::Violation {
    let head = sim.events.last().unwrap().hash.clone();
    let v = sim.refused(actor, action);
    assert_eq!(sim.events.last().unwrap().hash, head, "a refusal leaves the head as it was");
    v
}

/// The next seat could end the turn player's turn at any moment by
/// announcing its own, and then score Hold at once. A turn ends by the turn
/// player's `end_turn` (or a judge's); only then does the next seat in turn
/// order announce its turn.
#[test]
fn a_turn_ends_by_the_turn_players_end_turn_and_only_then_the_next_begins() {
    let mut sim = game("1v1", &["p1", "p2"], &["Altar"]);
    sim.begin("p1");
    assert_eq!(sim.view().may_act, vec!["p1", "Dana"], "the turn player acts; a judge may end the turn");
    let v = refused_at_head(&mut sim, "p2", turn());
    assert!(v.message.contains("(p1)'s turn") && v.message.contains("end_turn"), "{v}");
    let v = refused_at_head(&mut sim, "p2", end_turn());
    assert!(v.message.contains("Player p1 (p1) ends their own turn, or a judge"), "{v}");
    let offered_p1: Vec<Value> = offered(&sim, "p1").into_iter().map(|(_, a)| a).collect();
    assert!(offered_p1.contains(&end_turn()), "end_turn is offered to the turn player: {offered_p1:?}");
    assert!(offered(&sim, "p2").is_empty(), "p2 has nothing to record during p1's turn");
    sim.act("p1", mv(json!([unit("Wall", 3)]), "Altar"));
    // In a showdown the turn does not end.
    refused_at_head(&mut sim, "p1", end_turn());
    sim.pass(&["p1", "p2"]);
    sim.act("p1", end_turn());
    assert_eq!(sim.view().may_act, vec!["p2"], "only the next in turn order");
    assert!(sim.view().step.reference.contains("between turns"), "{}", sim.view().step.reference);
    let v = refused_at_head(&mut sim, "p1", mv(json!([unit("Imp", 1)]), "Altar"));
    assert!(v.message.contains("Player p1 (p1)'s turn is over"), "{v}");
    refused_at_head(&mut sim, "p1", end_turn());
    sim.begin("p2");
    // A judge's ruling ends it too.
    sim.act("Dana", end_turn());
    sim.begin("p1");
    assert_eq!(sim.riftbound().scores["p1"], 2, "conquered Altar, then held it");
}

/// The step's label says what it is, not a bare "(5)".
#[test]
fn the_turn_steps_say_what_they_are() {
    let mut sim = game("1v1", &["p1", "p2"], &["Altar"]);
    let before = sim.view().step.reference;
    sim.begin("p1");
    let during = sim.view().step.reference;
    assert_eq!(before, "Riftbound between turns (Turn Structure: Section 5 of the Core Rules)");
    assert_eq!(during, "Riftbound turn under way (Turn Structure: Section 5 of the Core Rules)");
}

/// Scores are said with the seat's name, and a Conquer of a
/// battlefield a teammate held at the Beginning Phase says why it scores nothing.
#[test]
fn scores_name_the_player_and_a_teammates_battlefield_says_why_no_point() {
    let mut sim = game("1v1", &["p1", "p2"], &["Altar"]);
    sim.begin("p1");
    sim.act("p1", mv(json!([unit("Wall", 3)]), "Altar"));
    sim.act("p1", json!({"type": "pass"}));
    let lines = said(&mut sim, "p2", json!({"type": "pass"}));
    assert!(lines.contains(&"Player p1 (p1) scores a point: conquered Altar (1 of 8)".to_string()), "{lines:?}");

    // Teams: a and c against b and d; turns a, b, c, d.
    let mut sim = game("2v2", &["a", "b", "c", "d"], &["Altar", "Forge"]);
    sim.begin("a");
    sim.act("a", mv(json!([unit("Knight", 2)]), "Altar"));
    sim.pass(&["a", "b", "c", "d"]);
    assert_eq!(
        sim.table.said(sim.events.len() as u64 - 1),
        ["Player a (a) scores a point: conquered Altar (team1: 1 of 11)"]
    );
    sim.act("a", end_turn());
    sim.begin("b");
    sim.act("b", end_turn());
    sim.begin("c");
    sim.act("c", mv(json!([unit("Squire", 1)]), "Altar"));
    sim.act("c", mv(json!([unit("Imp", 1)]), "Forge"));
    sim.pass(&["c"]);
    let bolt = sim.act("d", spell("action", "Bolt"));
    sim.pass(&["a", "b", "c", "d"]);
    let lines = said(&mut sim, "d", resolve_item(bolt, json!([{"unit": "Knight", "dies": true}])));
    assert!(lines.contains(&"Player c (c) controls Altar (was Player a (a))".to_string()), "{lines:?}");
    assert!(
        lines.contains(&"no point: Altar was held by teammate Player a (a) at the Beginning Phase".to_string()),
        "{lines:?}"
    );
    assert_eq!(sim.riftbound().scores["team1"], 1);
}

/// Games recorded under version 1 (before `end_turn`) fold as before: the
/// next seat's turn ends the turn under way.
#[test]
fn version_1_games_fold_as_they_did() {
    let mut h = header(&["p1", "p2"], &["Dana"]);
    h["ruleset"] = json!("riftbound");
    h["ruleset_version"] = json!(1);
    h["options"] = json!({"mode": "1v1", "battlefields": ["Altar"]});
    let mut sim = Sim::open(h);
    sim.act("p1", turn());
    sim.act("p1", mv(json!([unit("Wall", 3)]), "Altar"));
    sim.pass(&["p1", "p2"]);
    assert_eq!(sim.view().may_act, vec!["p1", "p2"]);
    refused_at_head(&mut sim, "p1", end_turn());
    sim.act("p2", turn());
    sim.act("p1", turn());
    assert_eq!(sim.riftbound().scores["p1"], 2);
}
