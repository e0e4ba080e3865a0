//! What each seat and judge may record now (see `kernel::moves`).
//!
//! Every action is offered to exactly the actors the reducer's own checks
//! (`State::may_*`, which the step runs first) let through now; a field the
//! rules fix is filled in (the acting character of an attack roll, the tied
//! combatants of a tie roll), a field with a closed list is picked (a
//! maneuver, a combatant, a seat), and what the table makes up or rolls is
//! entered. The text gives no dice for any roll (its tie roll is "roll
//! randomly"; attack, defense and damage rolls are in chapters it only
//! names), so rolls are entered without bounds.

use serde::Serialize;
use serde_json::{Value, json};

use super::{Maneuver, RollKind, State, maneuver_name, roll_name};
use crate::event::{ActionType, Header};
use crate::kernel::{Choice, Entry, EntryKind, Move, Pick};

/// The most combatants a combat is offered with. A combatant's `pc` is a
/// yes/no, which only a choice can hold, and a choice's field is a fixed
/// path: so a combat is offered once per number of combatants (the GM picks
/// the move for the fight's size), up to this many.
const MAX_COMBATANTS: usize = 12;

/// The moves of the state, for every seat and judge: what the row of the
/// step it stands at lists (`STEPS`), to the actors the reducer's checks let
/// through.
pub fn moves(state: &State, header: &Header) -> Vec<Move> {
    let row = state.phase.step();
    let lists = |ty, what| row.allows(ty, what);
    let mut moves = vec![];
    for actor in state.seats.iter().chain(&state.judges) {
        let actor = actor.as_str();
        if lists(ActionType::Announce, "combat") {
            start_combat(state, header, actor, &mut moves);
        }
        if lists(ActionType::Resolve, "tie") {
            settle_tie(state, header, actor, &mut moves);
        }
        if lists(ActionType::Announce, "maneuver") {
            maneuver(state, header, actor, &mut moves);
        }
        if lists(ActionType::Resolve, "roll") {
            rolls(state, header, actor, &mut moves);
        }
        if lists(ActionType::Pass, "")
            && let Ok(index) = state.may_pass(actor)
        {
            let label = format!("pass: end {}'s turn", state.sequence[index]);
            moves.push(Move::new(actor, label, json!({"type": "pass"})));
        }
        if lists(ActionType::Resolve, "status") {
            status(state, header, actor, &mut moves);
        }
        if lists(ActionType::Resolve, "determination") && state.gm_only(actor, super::RULE_GM).is_ok() {
            moves.push(
                Move::new(actor, "record a determination", json!({"type": "resolve", "what": "determination"}))
                    .entering(Entry::new("text", EntryKind::Text, "the determination")),
            );
        }
        if lists(ActionType::Announce, "drop_out")
            && let Ok(index) = state.may_drop_out(actor)
        {
            let label = format!("drop out of combat time (it resumes at {}'s turn)", state.sequence[index]);
            moves.push(Move::new(actor, label, json!({"type": "announce", "what": "drop_out"})));
        }
        if lists(ActionType::Announce, "resume")
            && let Ok(index) = state.may_resume(actor)
        {
            let label = format!("resume combat time at {}'s turn", state.sequence[index]);
            moves.push(Move::new(actor, label, json!({"type": "announce", "what": "resume"})));
        }
        if lists(ActionType::Announce, "end_combat") && state.may_end_combat(actor).is_ok() {
            moves.push(Move::new(actor, "end combat", json!({"type": "announce", "what": "end_combat"})));
        }
    }
    moves
}

/// A value as its action field holds it ("all_out_attack").
fn value(v: impl Serialize) -> Value {
    serde_json::to_value(v).expect("a maneuver or roll kind is a string")
}

/// A character with who plays it, as the board says it: "Wren, played by Bob (p2)".
fn played_by(state: &State, header: &Header, name: &str) -> String {
    match &state.characters[name].seat {
        Some(seat) => format!("{name}, played by {}", header.name_of(seat)),
        None => format!("{name}, played by the GM"),
    }
}

/// The GM starts combat: one move per number of combatants, each
/// combatant's name, Basic Speed, DX and side entered, and whether it is a
/// PC and who plays it picked together (a PC needs a seat).
fn start_combat(state: &State, header: &Header, actor: &str, moves: &mut Vec<Move>) {
    if state.may_start(actor).is_err() {
        return;
    }
    // The last combat's fighters and sides: a GM often starts the next with them.
    let names: Vec<Pick> = state.sequence.iter().map(|n| Pick::new(n.clone(), n.clone())).collect();
    let mut sides: Vec<&String> = state.characters.values().map(|c| &c.side).collect();
    sides.sort();
    sides.dedup();
    let sides: Vec<Pick> = sides.into_iter().map(|s| Pick::new(s.clone(), s.clone())).collect();
    let mut kinds = vec![];
    for seat in &state.seats {
        kinds.push(Pick::new(json!({"pc": true, "seat": seat}), format!("a PC played by {}", header.name_of(seat))));
    }
    kinds.push(Pick::new(json!({"pc": false}), "an NPC played by the GM"));
    // The same, with the seat written as null (NPCs are the GM's: "absent").
    kinds.push(Pick::new(json!({"pc": false, "seat": null}), "an NPC played by the GM (seat null)"));
    for seat in &state.seats {
        kinds.push(Pick::new(json!({"pc": false, "seat": seat}), format!("an NPC played by {}", header.name_of(seat))));
    }
    for n in 2..=MAX_COMBATANTS {
        let template = vec![json!({}); n];
        let mut m = Move::new(
            actor,
            format!("start combat with {n} combatants"),
            json!({"type": "announce", "what": "combat", "combatants": template}),
        );
        for i in 0..n {
            let at = |field: &str| format!("combatants/{i}/{field}");
            let no = i + 1;
            m = m
                .choosing(Choice::one(&format!("combatants/{i}"), kinds.clone()))
                .entering(
                    Entry::new(&at("name"), EntryKind::Name, format!("combatant {no}'s name"))
                        .suggesting(names.clone()),
                )
                .entering(Entry::number(
                    &at("speed_quarters"),
                    EntryKind::Number,
                    format!("combatant {no}'s Basic Speed in quarter points (5.75 is 23)"),
                    Some(1),
                    None,
                ))
                .entering(Entry::number(&at("dx"), EntryKind::Number, format!("combatant {no}'s DX"), None, None))
                .entering(
                    Entry::new(&at("side"), EntryKind::Name, format!("combatant {no}'s side"))
                        .suggesting(sides.clone()),
                );
        }
        moves.push(m);
    }
}

/// The GM settles the first open tie: the order picked; for PCs tied on
/// Speed and DX, one roll entered for each (the higher goes first, gap 2:
/// the order depends on the rolls typed, so it is picked, and the reducer
/// refuses an order the rolls do not give, naming the rolls).
fn settle_tie(state: &State, header: &Header, actor: &str, moves: &mut Vec<Move>) {
    let Ok((group, how)) = state.may_settle_tie(actor) else { return };
    let picks = group.iter().map(|n| Pick::new(n.clone(), played_by(state, header, n))).collect();
    let n = group.len() as u32;
    let order = Choice::some("order", picks, n, n);
    let m = if how == "roll" {
        let rolls: Vec<Value> = group.iter().map(|c| json!({"combatant": c})).collect();
        let label = format!("settle the tie by rolls: {}", group.join(", "));
        let mut m = Move::new(actor, label, json!({"type": "resolve", "what": "tie", "rolls": rolls}));
        for (i, c) in group.iter().enumerate() {
            m = m.entering(Entry::number(
                &format!("rolls/{i}/roll"),
                EntryKind::Roll,
                format!("{c}'s roll"),
                None,
                None,
            ));
        }
        m.choosing(order)
    } else {
        let label = format!("order the tie: {}", group.join(", "));
        Move::new(actor, label, json!({"type": "resolve", "what": "tie"})).choosing(order)
    };
    moves.push(m);
}

/// The acting character's player chooses its maneuver.
fn maneuver(state: &State, header: &Header, actor: &str, moves: &mut Vec<Move>) {
    let allowed: Vec<Maneuver> =
        Maneuver::ALL.into_iter().filter(|m| state.may_choose_maneuver(actor, *m).is_ok()).collect();
    let Some(first) = allowed.first() else { return };
    let Ok(index) = state.may_choose_maneuver(actor, *first) else { return };
    let options = allowed.iter().map(|m| Pick::new(value(m), maneuver_name(*m))).collect();
    let label = format!("choose the maneuver of {}", played_by(state, header, &state.sequence[index]));
    moves.push(
        Move::new(actor, label, json!({"type": "announce", "what": "maneuver"}))
            .choosing(Choice::one("maneuver", options)),
    );
}

/// The rolls `actor` may record now: of each kind, for the characters the
/// reducer lets it roll for (one: filled in); and the GM's roll by ruling
/// (gap 4), for anyone, of any kind.
fn rolls(state: &State, header: &Header, actor: &str, moves: &mut Vec<Move>) {
    let entries = |m: Move| {
        m.entering(Entry::number("roll", EntryKind::Roll, "the roll", None, None))
            .entering(Entry::number("target", EntryKind::Number, "the number rolled against", None, None).optional())
            .entering(Entry::new("result", EntryKind::Text, "the result"))
    };
    let who = |name: &String| Pick::new(name.clone(), played_by(state, header, name));
    for kind in RollKind::ALL {
        let by: Vec<&String> =
            state.sequence.iter().filter(|b| state.may_roll(actor, b, kind, false).is_ok()).collect();
        let action = json!({"type": "resolve", "what": "roll", "kind": value(kind)});
        let m = match by.as_slice() {
            [] => continue,
            [one] => {
                let mut m = Move::new(actor, format!("{} roll by {one}", roll_name(kind)), action);
                m.action["by"] = json!(one);
                m
            }
            many => Move::new(actor, format!("{} roll", roll_name(kind)), action)
                .choosing(Choice::one("by", many.iter().map(|b| who(b)).collect())),
        };
        moves.push(entries(m));
    }
    let by: Vec<Pick> = state
        .sequence
        .iter()
        .filter(|b| RollKind::ALL.iter().all(|k| state.may_roll(actor, b, *k, true).is_ok()))
        .map(who)
        .collect();
    if by.is_empty() {
        return;
    }
    let kinds = RollKind::ALL.iter().map(|k| Pick::new(value(k), roll_name(*k))).collect();
    let m = Move::new(
        actor,
        "record a roll by ruling (gap 4: out of sequence)",
        json!({"type": "resolve", "what": "roll"}),
    )
    .choosing(Choice::one("by", by))
    .choosing(Choice::one("kind", kinds))
    .entering(Entry::new("ruling", EntryKind::Text, "the ruling"));
    moves.push(entries(m));
}

/// The GM makes a combatant inactive (knocked out, asleep, ...) or active
/// again: anyone in the combat, whatever it is now.
fn status(state: &State, header: &Header, actor: &str, moves: &mut Vec<Move>) {
    if state.may_set_status(actor).is_err() {
        return;
    }
    let picks: Vec<Pick> = state
        .sequence
        .iter()
        .map(|n| {
            let now = if state.characters[n].active { "active" } else { "inactive" };
            Pick::new(n.clone(), format!("{} ({now})", played_by(state, header, n)))
        })
        .collect();
    for (active, label) in [(false, "a combatant becomes inactive"), (true, "a combatant is active again")] {
        moves.push(
            Move::new(actor, label, json!({"type": "resolve", "what": "status", "active": active}))
                .choosing(Choice::one("combatant", picks.clone()))
                .entering(Entry::new("reason", EntryKind::Text, "why (knocked out, asleep, ...)")),
        );
    }
}
