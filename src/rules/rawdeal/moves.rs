//! What each seat and judge may record now (see `kernel::moves`), driven by
//! the breakdown on top of the stack: its step in [`STEPS`](super::STEPS)
//! says what is recorded there, and the reducer's own `legal` and `may_act`
//! say which action types and who. A reversal is a play at 5a/5b that opens
//! a breakdown of its own; its moves are those of the step it stands at.
//!
//! Cost and damage: the reducer computes them from the modifiers. The
//! modifiers are what the table types (the text lists no cards), so only
//! the value without modifiers can be filled in ("cost 3 as printed",
//! "damage stays 9"); with modifiers typed, the value is entered too and a
//! wrong one is refused naming it ("printed cost 3 with these modifiers is
//! 2, not 5").

use serde_json::{Value, json};

use crate::event::{ActionType, Header};
use crate::kernel::{Choice, Entry, EntryKind, Move, Pick};

use super::{Breakdown, Computed, D, State, Uneven, compute};

/// The moves of the state, for every seat and judge.
pub fn moves(state: &State, header: &Header) -> Vec<Move> {
    let Some(b) = state.stack.last() else {
        // Step 1: either player may play a card.
        return state.seats.iter().flat_map(|seat| plays(state, seat, None)).collect();
    };
    if let Some(uneven) = &b.awaiting_ruling {
        return state.judges.iter().map(|judge| rounding(judge, uneven)).collect();
    }
    let legal = b.legal();
    let mut moves = vec![];
    for actor in state.may_act(b, &legal) {
        // Plays and passes are the players' own; a judge records resolves.
        let priority = actor == b.priority;
        for kind in &legal {
            match kind {
                ActionType::Play if priority => moves.extend(plays(state, &actor, Some((b, header)))),
                ActionType::Pass if priority => moves.push(pass(&actor, b)),
                ActionType::Resolve => moves.extend(resolves(state, &actor, b, header)),
                _ => {}
            }
        }
    }
    moves
}

/// 1a: play a card, or at 5a/5b a reversal to `reversing` (the breakdown it
/// answers): one move for a maneuver (with damage), one for a card without.
fn plays(state: &State, seat: &str, reversing: Option<(&Breakdown, &Header)>) -> Vec<Move> {
    let (action, what) = match reversing {
        None => (json!({"type": "play"}), "play a card".to_string()),
        Some((b, header)) => {
            // The first reversal to a Multi card does not reverse it (6).
            let reverses = match b.reversed_by_a_reversal() {
                Some(_) => String::new(),
                None => "; the first reversal to a Multi card does not reverse it".into(),
            };
            let label =
                format!("play a reversal to {} (seq {}) by {}{reverses}", b.card, b.seq, header.name_of(&b.player));
            (json!({"type": "play", "reversal": true}), label)
        }
    };
    let played = played_by(state, seat);
    let card = || Entry::new("card", EntryKind::Card, "the card").suggesting(played.clone());
    let cost = || Entry::new("cost", EntryKind::Points, "the printed Fortitude cost");
    let multi = || optional(Choice::one("multi", vec![Pick::new(true, "Multi"), Pick::new(false, "not Multi")]));
    let areas = std::iter::once("ringside").chain(state.areas.keys().map(String::as_str).filter(|a| *a != "ringside"));
    let goes_to = || {
        Entry::new("goes_to", EntryKind::Name, "6a: where it goes instead of the Ring Area")
            .optional()
            .suggesting(areas.clone().map(|a| Pick::new(a, a)).collect())
    };
    let targets = || {
        Entry::list(
            "targets",
            "1a: its target or targets",
            None,
            None,
            vec![Entry::new("", EntryKind::Name, "a target")],
        )
        .optional()
    };
    let maneuver = Move::new(seat, format!("{what} (a maneuver, with damage)"), action.clone())
        .entering(card())
        .entering(cost())
        .entering(Entry::new("damage", EntryKind::Points, "the printed damage"))
        .choosing(multi())
        .entering(goes_to())
        .entering(targets());
    let other = Move::new(seat, format!("{what} (no damage)"), action)
        .entering(card())
        .entering(cost())
        .choosing(optional(Choice::one("damage", vec![Pick::new(Value::Null, "no damage")])))
        .choosing(multi())
        .entering(goes_to())
        .entering(targets());
    vec![maneuver, other]
}

/// The cards `seat` has played before, the latest first: the table often
/// plays the same again.
fn played_by(state: &State, seat: &str) -> Vec<Pick> {
    let mut cards: Vec<Pick> = vec![];
    for p in state.history.iter().rev().filter(|p| p.player == seat) {
        if cards.len() == 10 {
            break;
        }
        if !cards.iter().any(|c| c.value == p.card.as_str()) {
            cards.push(Pick::new(p.card.as_str(), p.card.as_str()));
        }
    }
    cards
}

/// A choice that may be left out.
fn optional(c: Choice) -> Choice {
    Choice { min: 0, ..c }
}

fn pass(seat: &str, b: &Breakdown) -> Move {
    let s = b.step_now();
    let label = match s.does {
        D::Reverse => format!("pass: no reversal ({}: {} is successfully played)", s.no, b.card),
        _ => format!("pass ({}: {})", s.no, s.title),
    };
    Move::new(seat, label, json!({"type": "pass"}))
}

/// The resolves of the step breakdown `b` stands at, by `actor` (the player
/// with priority, or a judge).
fn resolves(state: &State, actor: &str, b: &Breakdown, header: &Header) -> Vec<Move> {
    let s = b.step_now();
    let resolve = |what: &str| json!({"type": "resolve", "what": what});
    // Labels name the card: a reversal's breakdown runs on top of the card it answers.
    let at = |what: &str| format!("{what} for {} ({}: {})", b.card, s.no, s.title);
    let yes_no =
        |field: &str, yes: &str, no: &str| Choice::one(field, vec![Pick::new(true, yes), Pick::new(false, no)]);
    let effects =
        |label: &str| Entry::list("effects", label, None, None, vec![Entry::new("", EntryKind::Text, "an effect")]);
    let rounding = state.rounding.as_deref();
    match s.does {
        D::Cost => {
            let fortitude =
                || Entry::new("fortitude", EntryKind::Points, format!("{}'s Fortitude", header.name_of(&b.player)));
            let mut moves = vec![];
            // Without modifiers the reducer's answer is known: the printed cost.
            if let Ok(Computed::Exact(cost)) = compute(b.printed_cost, &[], rounding) {
                let mut action = resolve("cost");
                action["cost"] = json!(cost);
                moves.push(
                    Move::new(actor, format!("{}'s cost {cost} as printed, no modifiers (2a)", b.card), action)
                        .entering(fortitude()),
                );
            }
            moves.push(
                Move::new(
                    actor,
                    format!("{}'s cost with modifiers (2a: printed cost {})", b.card, b.printed_cost),
                    resolve("cost"),
                )
                .entering(fortitude())
                .entering(modifiers("player_mods", "the player's cost modifiers").optional())
                .entering(modifiers("opponent_mods", "the opponent's cost modifiers").optional())
                .entering(modifiers("when_played", "'when played' effects of this play that lower the cost").optional())
                .entering(Entry::new("cost", EntryKind::Points, "the cost with these modifiers")),
            );
            moves
        }
        D::Requirements => {
            // 2d: whether the cost is met is known already; the requirements are the table's.
            let label = if b.cost_met() {
                at("requirements")
            } else {
                let (cost, fortitude) = (b.cost.unwrap_or_default(), b.fortitude.unwrap_or_default());
                let card = &b.card;
                format!(
                    "requirements for {card} (2d: the cost {cost} is more than the Fortitude {fortitude}: not played)"
                )
            };
            let follow_up = vec![
                Pick::new(true, "the Follow-up condition is met"),
                Pick::new(false, "the Follow-up condition is not met"),
                Pick::new(Value::Null, "no Follow-up condition"),
            ];
            vec![
                Move::new(actor, label, resolve("requirements"))
                    .choosing(yes_no("must", "the 'must' requirements are met", "a 'must' requirement is not met"))
                    .choosing(optional(Choice::one("follow_up", follow_up))),
            ]
        }
        D::Effects => {
            vec![
                Move::new(actor, at("effects"), resolve("effects"))
                    .entering(effects("the effects, in the order applied")),
            ]
        }
        D::Damage => {
            let current = b.current_damage();
            let mut moves = vec![];
            // Without modifiers the reducer's answer is known: the damage as it stands.
            if let Ok(Computed::Exact(damage)) = compute(current, &[], rounding) {
                let action = json!({"type": "resolve", "what": "damage", "mods": [], "damage": damage});
                moves.push(Move::new(
                    actor,
                    format!("{}'s damage stays {damage}, no modifiers ({})", b.card, s.no),
                    action,
                ));
            }
            moves.push(
                Move::new(actor, at(&format!("damage modifiers to {current}")), resolve("damage"))
                    .entering(modifiers("mods", "the damage modifiers"))
                    .entering(Entry::new("damage", EntryKind::Points, "the damage with these modifiers")),
            );
            moves
        }
        D::ReversalMods => vec![
            Move::new(actor, at("reversal modifiers"), resolve("reversal_mods"))
                .choosing(yes_no("cannot_be_reversed", "it cannot be reversed", "it may be reversed"))
                .entering(effects("other reversal modifiers").optional()),
        ],
        D::Overturn => {
            let (n, damage) = (b.overturned.len() + 1, b.current_damage());
            let label = format!("overturn a card for {}'s damage ({n} of {damage})", b.card);
            vec![
                Move::new(actor, label, resolve("overturn"))
                    .entering(Entry::new("card", EntryKind::Card, "the card overturned"))
                    .choosing(optional(yes_no(
                        "stops",
                        "an overturned reversal: the damage stops here",
                        "the damage goes on",
                    ))),
            ]
        }
        D::EndTurn => vec![
            Move::new(actor, at("end the turn"), resolve("end_turn"))
                .choosing(yes_no("ends_turn", "the turn ends", "the turn goes on"))
                .entering(effects("effects triggered by ending the turn").optional()),
        ],
        // A reversal is a play, not a resolve.
        D::Reverse => vec![],
    }
}

/// A list of modifiers as the table types them (an op, a value, a source).
fn modifiers(field: &str, label: &str) -> Entry {
    let ops = vec![
        Pick::new("mul", "mul: multiply"),
        Pick::new("div", "div: divide"),
        Pick::new("add", "add"),
        Pick::new("sub", "sub: subtract"),
    ];
    let items = vec![
        Entry::new("op", EntryKind::Text, "mul, div, add or sub").suggesting(ops),
        // Gap 6: no negative multipliers or divisors (nor values to add).
        Entry::number("value", EntryKind::Number, "the value", Some(0), None),
        Entry::new("source", EntryKind::Name, "its source").optional(),
    ];
    Entry::list(field, label, None, None, items)
}

/// Gap 1: a judge rules on an uneven value, between rounding every division
/// down and rounding every one up.
fn rounding(judge: &str, u: &Uneven) -> Move {
    let label = format!("rule on the {}: {} (rounding down) to {} (rounding up)", u.what, u.low, u.high);
    Move::new(judge, label, json!({"type": "resolve", "what": "rounding"})).entering(Entry::number(
        "value",
        EntryKind::Points,
        format!("the {}", u.what),
        Some(u.low),
        Some(u.high),
    ))
}
