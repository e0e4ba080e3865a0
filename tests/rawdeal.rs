//! Scenario tests: the Raw Deal timing breakdown, against shared/rules/rawdeal-timing-breakdown.txt.

mod common;

use arbiter::event::ActionType;
use arbiter::rules::rawdeal::Outcome;
use common::*;
use serde_json::{Value, json};

fn game(rounding: Option<&str>) -> Sim {
    let options = rounding.map_or(json!({}), |r| json!({"rounding": r}));
    Sim::ruleset("rawdeal", &["p1", "p2"], &["Dana"], options)
}

fn play(card: &str, cost: i64, damage: Option<i64>) -> Value {
    let mut v = json!({"type": "play", "card": card, "cost": cost});
    if let Some(d) = damage {
        v["damage"] = json!(d);
    }
    v
}
fn reversal(card: &str, cost: i64) -> Value {
    json!({"type": "play", "card": card, "cost": cost, "reversal": true})
}
fn m(op: &str, value: i64) -> Value {
    json!({"op": op, "value": value})
}
fn cost(fortitude: i64, player: Value, opponent: Value, cost: i64) -> Value {
    json!({"type": "resolve", "what": "cost", "fortitude": fortitude, "player_mods": player, "opponent_mods": opponent, "cost": cost})
}
fn requirements(must: bool) -> Value {
    json!({"type": "resolve", "what": "requirements", "must": must})
}
fn damage(mods: Value, damage: i64) -> Value {
    json!({"type": "resolve", "what": "damage", "mods": mods, "damage": damage})
}
fn overturn(card: &str) -> Value {
    json!({"type": "resolve", "what": "overturn", "card": card})
}

/// What `legal` and `may_act` say is what the reducer accepts: of one action
/// of every kind, those accepted are by the actors `may_act` lists (each of
/// them has one) and of the types `legal` lists (each of them has one).
#[track_caller]
fn assert_view_is_what_is_accepted(sim: &Sim) {
    let s = sim.rawdeal();
    let top = s.stack.last();
    let printed_cost = top.map_or(0, |b| b.printed_cost);
    let current_damage = top.map_or(0, |b| b.damage.or(b.printed_damage).unwrap_or(0));
    let low = top.and_then(|b| b.awaiting_ruling.as_ref()).map_or(0, |u| u.low);
    let resolve = |v: Value| (ActionType::Resolve, v);
    let candidates = [
        (ActionType::Play, play("Clothesline", 0, Some(2))),
        (ActionType::Play, reversal("Block", 0)),
        (ActionType::Pass, json!({"type": "pass"})),
        resolve(cost(99, json!([]), json!([]), printed_cost)),
        resolve(requirements(true)),
        resolve(json!({"type": "resolve", "what": "effects", "effects": []})),
        resolve(damage(json!([]), current_damage)),
        resolve(json!({"type": "resolve", "what": "reversal_mods", "cannot_be_reversed": false})),
        resolve(overturn("Spear")),
        resolve(json!({"type": "resolve", "what": "end_turn", "ends_turn": false})),
        resolve(json!({"type": "resolve", "what": "rounding", "value": low})),
    ];
    assert_view_is_what_the_reducer_accepts(sim, &["p1", "p2", "Dana"], &candidates);
}

#[test]
fn legal_and_may_act_are_what_the_reducer_accepts_along_the_sample() {
    let mut lines = include_str!("../examples/rawdeal-sample.actions.jsonl").lines();
    let header: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    let mut sim = game(header["action"]["options"]["rounding"].as_str());
    for line in lines {
        assert_view_is_what_is_accepted(&sim);
        let line: Value = serde_json::from_str(line).unwrap();
        sim.act(line["actor"].as_str().unwrap(), line["action"].clone());
    }
    assert_view_is_what_is_accepted(&sim);
    assert!(sim.rawdeal().stack.is_empty() && sim.rawdeal().history.len() == 4, "{:?}", sim.rawdeal().history);
}

/// 1a-2f for a card with its cost met and no 'when played' effects.
fn through_2f(sim: &mut Sim, player: &str, opponent: &str, card: Value, printed_cost: i64) {
    sim.act(player, card);
    sim.act(player, cost(20, json!([]), json!([]), printed_cost));
    sim.act(player, requirements(true));
    sim.pass(&[player, opponent]); // 2e, 2f
}

#[test]
fn a_maneuver_runs_every_step_with_the_arithmetic_checked() {
    let mut sim = game(Some("down"));
    sim.act("p1", play("Chokeslam", 2, Some(5)));
    assert_eq!(sim.view().step.number, "2a");
    // The player's modifiers first, then the opponent's; x and / before + and -.
    let v = sim.refused("p1", cost(10, json!([m("add", 1), m("mul", 2)]), json!([m("sub", 1)]), 5));
    assert!(v.message.contains("is 4, not 5"), "{v}");
    sim.act("p1", cost(10, json!([m("add", 1), m("mul", 2)]), json!([m("sub", 1)]), 4));
    sim.act("p1", json!({"type": "resolve", "what": "requirements", "must": true, "follow_up": true}));
    assert!(sim.rawdeal().stack[0].in_no_area, "2d: the card is in no area while the breakdown runs");
    assert_eq!(sim.view().step.number, "2e");
    sim.act("p1", json!({"type": "resolve", "what": "effects", "effects": ["discard a card"]}));
    let v = sim.refused("p1", json!({"type": "pass"}));
    assert_eq!(v.may_act, vec!["p2", "Dana"], "2f: the opponent's 'when played' effects (or a judge's record)");
    sim.pass(&["p2"]);
    // 3a: 5 x2 + 2 = 12 (not (5+2) x2).
    sim.refused("p1", damage(json!([m("add", 2), m("mul", 2)]), 14));
    sim.act("p1", damage(json!([m("add", 2), m("mul", 2)]), 12));
    sim.pass(&["p1"]); // 3b
    sim.act("p2", damage(json!([m("sub", 3)]), 9)); // 4
    sim.pass(&["p2"]); // 5a: no reversal
    assert!(
        sim.rawdeal().ring_area["p1"].contains(&"Chokeslam".to_string()),
        "6: Successfully Played: in the Ring Area"
    );
    sim.pass(&["p1", "p2"]); // 7a, 7b
    sim.act("p1", json!({"type": "resolve", "what": "effects", "effects": ["opponent discards 1"]})); // 8
    sim.pass(&["p1", "p2"]); // 9a
    assert_eq!(sim.view().step.number, "9b");
    for i in 0..9 {
        sim.act("p2", overturn(&format!("card {i}")));
    }
    assert_eq!(sim.view().step.number, "9c");
    sim.pass(&["p1", "p2", "p1"]); // 9c, 9d, 9e
    let s = sim.rawdeal();
    assert!(s.stack.is_empty());
    assert_eq!(s.history[0].outcome, Outcome::Successful);
    assert_eq!(sim.view().step.number, "1");
}

#[test]
fn a_card_whose_cost_cannot_be_met_is_not_played() {
    let mut sim = game(Some("down"));
    sim.act("p1", play("Spear", 5, Some(4)));
    sim.act("p1", cost(3, json!([]), json!([]), 5));
    sim.act("p1", requirements(true));
    let s = sim.rawdeal();
    assert_eq!(s.history[0].outcome, Outcome::NotPlayed);
    assert!(s.ring_area["p1"].is_empty(), "2d: the card remains where it started");
    // A 'when played' effect of the play may lower the cost.
    sim.act("p1", play("Spear", 5, Some(4)));
    sim.act("p1", json!({"type": "resolve", "what": "cost", "fortitude": 3, "when_played": [m("sub", 2)], "cost": 3}));
    sim.act("p1", requirements(true));
    assert_eq!(sim.view().step.number, "2e");
    // A failed 'must' requirement ends it too.
    let mut sim = game(Some("down"));
    sim.act("p1", play("Spear", 0, None));
    sim.act("p1", cost(3, json!([]), json!([]), 0));
    sim.act("p1", requirements(false));
    assert_eq!(sim.rawdeal().history[0].outcome, Outcome::NotPlayed);
}

#[test]
fn a_reversal_runs_its_own_breakdown_nested_and_ends_the_one_it_reverses() {
    let mut sim = game(Some("down"));
    through_2f(&mut sim, "p1", "p2", play("Chokeslam", 2, Some(5)), 2);
    sim.pass(&["p1", "p1", "p2"]); // 3a, 3b, 4
    assert_eq!(sim.view().step.number, "5a");
    sim.refused("p1", reversal("Block", 0));
    sim.refused("p2", play("Block", 0, None)); // a play here is a reversal
    sim.act("p2", reversal("No Chance in Hell", 0));
    // Nested: the stack shows both breakdowns.
    let s = sim.rawdeal();
    assert_eq!(s.stack.len(), 2);
    assert_eq!(
        (s.stack[1].card.as_str(), s.stack[1].player.as_str(), s.stack[1].step.as_str()),
        ("No Chance in Hell", "p2", "2a")
    );
    assert!(
        sim.view().step.reference.contains("breakdown 2 of 2: Chokeslam <- No Chance in Hell"),
        "{}",
        sim.view().step.reference
    );
    through_rest_of_2f(&mut sim, "p2", "p1");
    sim.pass(&["p2"]); // 3b (no damage: 3a and 4 skipped)
    assert_eq!(sim.view().step.number, "5a");
    assert_eq!(sim.view().may_act, vec!["p1"], "the reversal can be reversed in turn, by its target");
    sim.pass(&["p1"]);
    assert!(sim.rawdeal().stack[0].reversed, "6: the affected maneuver is now considered reversed");
    sim.pass(&["p2", "p1"]); // 7a, 7b
    sim.act("p2", json!({"type": "resolve", "what": "effects", "effects": ["end p1's turn"]})); // 8
    assert_eq!(sim.rawdeal().areas["ringside"]["p1"], vec!["Chokeslam"], "8: the reversed card moves to Ringside");
    sim.act("p2", json!({"type": "resolve", "what": "end_turn", "ends_turn": true})); // 9e
    let s = sim.rawdeal();
    assert!(s.stack.is_empty(), "5c: the reversed card's breakdown ends");
    let outcomes: Vec<_> = s.history.iter().map(|h| (h.card.as_str(), h.outcome, h.depth)).collect();
    assert_eq!(outcomes, vec![("No Chance in Hell", Outcome::Successful, 1), ("Chokeslam", Outcome::Reversed, 0)]);
}

/// 2a-2f of a breakdown already opened.
fn through_rest_of_2f(sim: &mut Sim, player: &str, opponent: &str) {
    sim.act(player, cost(20, json!([]), json!([]), 0));
    sim.act(player, requirements(true));
    sim.pass(&[player, opponent]);
}

#[test]
fn a_multi_card_allows_a_second_reversal_after_the_first_completes() {
    let mut sim = game(Some("down"));
    through_2f(
        &mut sim,
        "p1",
        "p2",
        json!({"type": "play", "card": "Flurry", "cost": 0, "damage": 2, "multi": true}),
        0,
    );
    sim.pass(&["p1", "p1", "p2"]);
    sim.act("p2", reversal("Duck", 0));
    through_rest_of_2f(&mut sim, "p2", "p1");
    sim.pass(&["p2", "p1", "p2", "p1", "p2", "p2"]); // 3b, 5a, 7a, 7b, 8, 9e
    // The first reversal to a Multi card does not reverse it: 5b.
    let s = sim.rawdeal();
    assert_eq!(s.stack.len(), 1);
    assert!(!s.stack[0].reversed);
    assert_eq!(sim.view().step.number, "5b");
    sim.act("p2", reversal("Duck Again", 0));
    through_rest_of_2f(&mut sim, "p2", "p1");
    sim.pass(&["p2", "p1", "p2", "p1", "p2", "p2"]);
    assert!(sim.rawdeal().stack.is_empty());
    assert_eq!(sim.rawdeal().history.last().unwrap().outcome, Outcome::Reversed);
}

#[test]
fn cannot_be_reversed_and_a_failed_reversal_leaves_the_opponent_at_5a() {
    let mut sim = game(Some("down"));
    through_2f(&mut sim, "p1", "p2", play("Panic", 0, Some(3)), 0);
    sim.pass(&["p1"]); // 3a
    sim.act("p1", json!({"type": "resolve", "what": "reversal_mods", "cannot_be_reversed": true}));
    sim.pass(&["p2"]); // 4
    assert_eq!(sim.view().step.number, "5a");
    assert_eq!(sim.view().legal, vec![ActionType::Pass], "play is not legal on a card that cannot be reversed");
    let v = sim.refused("p2", reversal("Block", 0));
    assert!(v.message.contains("cannot be reversed"), "{v}");
    let mut sim = game(Some("down"));
    through_2f(&mut sim, "p1", "p2", play("Punch", 0, Some(3)), 0);
    sim.pass(&["p1", "p1", "p2"]);
    sim.act("p2", reversal("Block", 4));
    sim.act("p2", cost(2, json!([]), json!([]), 4)); // cannot pay 4 with 2
    sim.act("p2", requirements(true));
    assert_eq!(sim.view().step.number, "5a");
    assert_eq!(sim.rawdeal().stack.len(), 1);
    sim.pass(&["p2"]);
    assert_eq!(sim.view().step.number, "7a");
}

#[test]
fn uneven_division_follows_the_header_option_or_waits_for_a_judge() {
    let mut sim = game(None);
    sim.act("p1", play("Chokeslam", 5, Some(5)));
    sim.act("p1", cost(10, json!([m("div", 2)]), json!([]), 2));
    let view = sim.view();
    assert_eq!(view.may_act, vec!["Dana"]);
    assert!(view.awaiting_ruling.unwrap().contains("2 to 3"));
    assert_view_is_what_is_accepted(&sim);
    sim.refused("p1", requirements(true));
    sim.refused("p1", json!({"type": "resolve", "what": "rounding", "value": 3}));
    sim.refused("Dana", json!({"type": "resolve", "what": "rounding", "value": 4}));
    sim.act("Dana", json!({"type": "resolve", "what": "rounding", "value": 3}));
    assert_eq!(sim.rawdeal().stack[0].cost, Some(3));
    assert_eq!(sim.view().step.number, "2b-2c");
    let mut up = game(Some("up"));
    up.act("p1", play("Chokeslam", 5, Some(5)));
    up.refused("p1", cost(10, json!([m("div", 2)]), json!([]), 2));
    up.act("p1", cost(10, json!([m("div", 2)]), json!([]), 3));
}

/// The moves offered now to `actor`.
fn moves_of(sim: &Sim, actor: &str) -> Vec<arbiter::kernel::Move> {
    sim.table.moves(sim.events.len() as u64).into_iter().filter(|m| m.seat == actor).collect()
}

#[test]
fn moves_carry_the_cost_and_damage_the_reducer_computes() {
    let mut sim = game(Some("down"));
    sim.act("p1", play("Chokeslam", 3, Some(5)));
    // 2a without modifiers: the cost is the printed one, filled in; the Fortitude is typed.
    for actor in ["p1", "Dana"] {
        let printed = moves_of(&sim, actor).into_iter().find(|m| m.action["what"] == "cost" && m.enter.len() == 1);
        let printed = printed.unwrap_or_else(|| panic!("{actor} has no move with the cost as printed"));
        assert_eq!(printed.action, json!({"type": "resolve", "what": "cost", "cost": 3}));
        assert_eq!(printed.enter[0].field, "fortitude");
    }
    assert!(moves_of(&sim, "p2").iter().all(|m| m.kind == ActionType::Note), "p2 has no priority at 2a");
    // With modifiers typed, the cost is typed too, and a wrong one is refused naming it.
    let v = sim.refused("p1", cost(12, json!([m("add", 1)]), json!([m("div", 2)]), 3));
    assert!(v.message.contains("cost 3 with these modifiers is 2, not 3"), "{v}");
    sim.act("p1", cost(12, json!([m("add", 1)]), json!([m("div", 2)]), 2));
    // 2d is known at 2b-2c: the cost is met.
    let req = moves_of(&sim, "p1").into_iter().find(|m| m.action["what"] == "requirements").unwrap();
    assert!(!req.label.contains("not played"), "{}", req.label);
    sim.act("p1", requirements(true));
    sim.pass(&["p1", "p2"]); // 2e, 2f
    // 3a: the damage as it stands, filled in.
    let stays = moves_of(&sim, "p1").into_iter().find(|m| m.action["what"] == "damage" && m.enter.is_empty()).unwrap();
    assert_eq!(stays.action, json!({"type": "resolve", "what": "damage", "mods": [], "damage": 5}));
    sim.act("p1", damage(json!([m("mul", 2)]), 10));
    sim.pass(&["p1"]); // 3b
    let stays = moves_of(&sim, "p2").into_iter().find(|m| m.action["what"] == "damage" && m.enter.is_empty()).unwrap();
    assert_eq!(stays.action["damage"], 10, "4: the damage after 3a's modifiers");
    // A mistyped modifier is refused naming its list.
    let v = sim.refused(
        "p2",
        json!({"type": "resolve", "what": "damage", "mods": [{"op": "halve", "value": 2}], "damage": 5}),
    );
    assert!(v.message.contains("mods"), "{v}");
    let v = sim.refused("p2", damage(json!([m("div", 0)]), 5));
    assert!(v.message.contains("mods: a Div by 0"), "{v}");
}

#[test]
fn moves_offer_no_reversal_where_3b_bars_it_and_name_a_multi_cards_first_reversal() {
    let mut sim = game(Some("down"));
    through_2f(
        &mut sim,
        "p1",
        "p2",
        json!({"type": "play", "card": "Flurry", "cost": 0, "damage": 2, "multi": true}),
        0,
    );
    sim.pass(&["p1", "p1", "p2"]); // 3a, 3b, 4
    let plays: Vec<_> = moves_of(&sim, "p2").into_iter().filter(|m| m.kind == ActionType::Play).collect();
    assert!(!plays.is_empty() && plays.iter().all(|m| m.action["reversal"] == true));
    assert!(plays[0].label.contains("the first reversal to a Multi card does not reverse it"), "{}", plays[0].label);
    assert!(moves_of(&sim, "Dana").iter().all(|m| m.kind != ActionType::Play), "plays are the players' own");
    let mut sim = game(Some("down"));
    through_2f(&mut sim, "p1", "p2", play("Panic", 0, Some(3)), 0);
    sim.pass(&["p1"]); // 3a
    sim.act("p1", json!({"type": "resolve", "what": "reversal_mods", "cannot_be_reversed": true}));
    sim.pass(&["p2"]); // 4
    let kinds: Vec<_> = moves_of(&sim, "p2").iter().map(|m| m.kind).filter(|k| *k != ActionType::Note).collect();
    assert_eq!(kinds, vec![ActionType::Pass], "3b: Panic cannot be reversed");
}

#[test]
fn an_uneven_value_is_offered_to_the_judges_within_its_roundings() {
    let mut sim = game(None);
    sim.act("p1", play("Chokeslam", 5, Some(5)));
    sim.act("p1", cost(10, json!([m("div", 2)]), json!([]), 2));
    assert!(moves_of(&sim, "p1").iter().all(|m| m.kind == ActionType::Note), "only a judge rules");
    let dana = moves_of(&sim, "Dana");
    let rule = dana.iter().find(|m| m.action["what"] == "rounding").unwrap();
    assert_eq!((rule.enter[0].field.as_str(), rule.enter[0].min, rule.enter[0].max), ("value", Some(2), Some(3)));
    // The same ruling as a `decide`, built from the move offered.
    let decide = dana.iter().find(|m| m.action["decision"]["what"] == "rounding").unwrap();
    let concerns = json!({"seq": 2, "hash": sim.events[2].hash});
    let action = decide.build(&[
        ("decision/value".into(), json!(3)),
        ("concerns".into(), concerns),
        ("reason".into(), json!("a half rounds up at this table")),
    ]);
    sim.act("Dana", action);
    assert_eq!(sim.rawdeal().stack[0].cost, Some(3));
    assert_eq!(sim.view().step.number, "2b-2c");
}

#[test]
fn the_requirements_move_says_when_2d_will_end_the_play_for_the_cost() {
    let mut sim = game(Some("down"));
    sim.act("p1", play("Spear", 5, Some(4)));
    sim.act("p1", cost(3, json!([]), json!([]), 5));
    let req = moves_of(&sim, "p1").into_iter().find(|m| m.action["what"] == "requirements").unwrap();
    assert!(req.label.contains("the cost 5 is more than the Fortitude 3: not played"), "{}", req.label);
}

fn rawdeal_board(sim: &Sim) -> arbiter::rules::rawdeal::Board {
    match sim.table.board() {
        Some(arbiter::rules::Board::Rawdeal(b)) => b,
        other => panic!("not a Raw Deal board: {other:?}"),
    }
}

/// 2d: "If any of these steps can not be satisfied, the sequence ends": the
/// ending names each of 2a-2c that was not (the cost against the Fortitude,
/// a 'must' requirement, the Follow-up condition), on the board and in what
/// replay says; the board counts it as not played, not as a card played.
#[test]
fn an_ending_at_2d_says_which_check_failed() {
    let mut sim = game(Some("down"));
    sim.act("p1", play("Spear", 5, Some(4)));
    sim.act("p1", cost(3, json!([]), json!([]), 5));
    let before = sim.table.board().unwrap();
    sim.act("p1", json!({"type": "resolve", "what": "requirements", "must": true, "follow_up": false}));
    let ended = "not played (2d: the cost 5 is more than the Fortitude 3; the Follow-up condition is not met); \
                 the card remains where it started";
    let said = sim.table.board().unwrap().changes_since(&before);
    assert!(said.contains(&format!("the breakdown of Spear (seq 1) ends: {ended}")), "{said:?}");
    let b = rawdeal_board(&sim);
    assert_eq!(b.sequence.unwrap().breakdowns[0].outcome.as_deref(), Some(ended));
    assert_eq!((b.breakdowns_ended, b.not_played, b.reversed), (1, 1, 0));
    // A 'must' requirement alone.
    sim.act("p1", play("Spear", 0, None));
    sim.act("p1", cost(3, json!([]), json!([]), 0));
    sim.act("p1", requirements(false));
    let b = rawdeal_board(&sim);
    assert_eq!(
        b.sequence.unwrap().breakdowns[0].outcome.as_deref(),
        Some("not played (2d: a 'must' requirement is not met); the card remains where it started")
    );
    assert_eq!((b.breakdowns_ended, b.not_played), (2, 2));
}

/// The turn's earlier play sequences are on the board beside the last one,
/// each folded to how its breakdowns ended; a card played at step 1 by the
/// other player, or after a breakdown whose 9e ended the turn, starts a new
/// turn, which has none. `state` shows them too.
#[test]
fn the_turns_earlier_sequences_are_shown_folded() {
    let mut sim = game(Some("down"));
    // Two plays by p1 that end at 2d, then a third under way.
    sim.act("p1", play("Spear", 5, Some(4)));
    sim.act("p1", cost(3, json!([]), json!([]), 5));
    sim.act("p1", requirements(true));
    sim.act("p1", play("Arm Drag", 0, None));
    sim.act("p1", cost(3, json!([]), json!([]), 0));
    sim.act("p1", requirements(false));
    assert_eq!(rawdeal_board(&sim).earlier.len(), 1, "the last sequence is `sequence`, the one before is earlier");
    sim.act("p1", play("Chokeslam", 0, Some(5)));
    let b = rawdeal_board(&sim);
    let earlier: Vec<_> = b.earlier.iter().map(|e| (e.seq, e.card.as_str(), e.outcome.as_str())).collect();
    assert_eq!(earlier, [(1, "Spear", "not played (2d)"), (4, "Arm Drag", "not played (2d)")]);
    let e = &b.earlier[0];
    assert_eq!((e.played, e.not_played, e.reversed, e.breakdowns.len()), (0, 1, 0, 1));
    assert_eq!(e.player, "Player p1 (p1)");
    // The other player's card at step 1: a new turn.
    let mut other = game(Some("down"));
    other.act("p1", play("Spear", 5, Some(4)));
    other.act("p1", cost(3, json!([]), json!([]), 5));
    other.act("p1", requirements(true));
    other.act("p2", play("Arm Drag", 0, None));
    assert!(rawdeal_board(&other).earlier.is_empty());
}

/// The sample's first play (seq 1-19): No Chance in Hell reverses Chokeslam
/// and ends the turn at 9e, so a card played next starts a new turn even by
/// the same player; before that card, the sequence is the last one shown.
#[test]
fn a_sequence_that_ended_the_turn_is_not_earlier_in_the_next_turn() {
    let mut lines = include_str!("../examples/rawdeal-sample.actions.jsonl").lines();
    lines.next();
    let mut sim = game(Some("down"));
    for line in lines.take(19) {
        let line: Value = serde_json::from_str(line).unwrap();
        sim.act(line["actor"].as_str().unwrap(), line["action"].clone());
    }
    assert!(sim.rawdeal().history.iter().any(|p| p.ends_turn), "{:?}", sim.rawdeal().history);
    sim.act("p1", play("Arm Drag", 0, None));
    assert!(rawdeal_board(&sim).earlier.is_empty());
}

/// In the terminal, an earlier sequence is one line with its counts, its
/// reversals under it.
#[test]
fn state_lists_the_turns_earlier_sequences_with_their_counts() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = arbiter(d, &["new", "g", "--ruleset", "rawdeal", "--seat", "p1=Alice", "--seat", "p2=Bob"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for (actor, action) in [
        ("p1", play("Spear", 5, Some(4))),
        ("p1", cost(3, json!([]), json!([]), 5)),
        ("p1", requirements(true)),
        ("p1", play("Arm Drag", 0, None)),
    ] {
        let out = arbiter(d, &["append", "g", "--actor", actor, &action.to_string()]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let text = String::from_utf8(arbiter(d, &["state", "g"]).stdout).unwrap();
    assert!(text.contains("earlier this turn\n"), "{text}");
    assert!(
        text.contains("  seq 1  Spear by Alice (p1): not played (2d) · 1 breakdown: 1 not played (2d)\n"),
        "{text}"
    );
}
