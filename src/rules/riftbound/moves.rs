//! What each seat and judge may record now (see `kernel::moves`), driven by
//! the reducer's phase and stage, with its own checks: the destinations a
//! player's units may enter (`may_enter`), the trigger each side puts on
//! the initial chain (`trigger_of`), what Focus and an open Chain allow
//! (the step table's `plays`), whom Focus may invite (`invitable`), and
//! which damage assignments keep the Tank and lethal rules
//! (`check_assignment`).

use serde_json::{Value, json};

use crate::event::Header;
use crate::kernel::{Choice, Entry, EntryKind, Move, Pick};

use super::{Assignment, Phase, PlayKind, Stage, State, Trigger, kind_name};

/// More defending (or attacking) units than this, and the assignments that
/// reach units in order are not listed one by one (2^n of them): the
/// amounts are typed.
const MAX_LISTED_TARGETS: usize = 10;

/// The moves of the state, for every seat and judge.
pub fn moves(state: &State, header: &Header) -> Vec<Move> {
    let name = |id: &str| header.name_of(id);
    let mut moves = vec![];
    match &state.phase {
        Phase::Over => {}
        Phase::Setup | Phase::Between => moves.push(begin_turn(state)),
        Phase::Open => {
            // Version 1: the next player's announcement ended the turn under way.
            if state.version == 1 {
                moves.push(begin_turn(state));
            }
            if let Some(player) = state.turn_player() {
                moves.extend(unit_moves(state, header, player));
                if state.version >= 2 {
                    let end = json!({"type": "announce", "what": "end_turn"});
                    moves.push(Move::new(player, "end the turn", end.clone()));
                    for judge in &state.judges {
                        moves.push(Move::new(judge, format!("end {}'s turn", name(player)), end.clone()));
                    }
                }
            }
        }
        Phase::ChooseCombat => {
            if let Some(player) = state.turn_player() {
                let pending =
                    state.pending.iter().map(|bf| Pick::new(bf.as_str(), combat_at(state, header, bf))).collect();
                moves.push(
                    Move::new(
                        player,
                        "choose the combat to resolve first",
                        json!({"type": "announce", "what": "combat"}),
                    )
                    .choosing(Choice::one("battlefield", pending)),
                );
            }
        }
        Phase::Showdown(sd) => match &sd.stage {
            Stage::InitialChain { window } => {
                if let Some(holder) = window.holder() {
                    let trigger = sd.trigger_of(holder);
                    let (value, words) = match trigger {
                        Trigger::Attack => ("attack", "\"when I attack\""),
                        Trigger::Defend => ("defend", "\"when I defend\""),
                    };
                    moves.push(
                        Move::new(
                            holder,
                            format!("add a {words} trigger"),
                            json!({"type": "play", "kind": "trigger", "trigger": value}),
                        )
                        .entering(card()),
                    );
                    moves.push(pass(holder));
                }
            }
            Stage::Focus { window } => {
                if let Some(holder) = window.holder() {
                    moves.push(play(holder, "play or activate (Focus)", sd.stage.row().plays));
                    let invitable: Vec<Pick> =
                        state.invitable(sd).iter().map(|p| Pick::new(p.as_str(), name(p))).collect();
                    if !invitable.is_empty() {
                        moves.push(
                            Move::new(holder, "invite a player", json!({"type": "announce", "what": "invite"}))
                                .choosing(Choice::one("player", invitable)),
                        );
                    }
                    moves.push(pass(holder));
                }
            }
            Stage::Invited { player, .. } => {
                moves.push(Move::new(player, "accept the invitation", json!({"type": "announce", "what": "accept"})));
                moves.push(Move::new(player, "decline the invitation", json!({"type": "announce", "what": "decline"})));
            }
            Stage::Chain { window, .. } => {
                if let Some(holder) = window.holder() {
                    moves.push(play(holder, "react", sd.stage.row().plays));
                    moves.push(pass(holder));
                }
            }
            Stage::Resolving { .. } => {
                if let Some(item) = sd.chain.newest() {
                    let label = format!("resolve {} (seq {}) by {}", item.card, item.seq, name(&item.seat));
                    // Who played it, or a judge: the step table's roles.
                    for actor in &state.actors() {
                        moves.push(
                            Move::new(
                                actor,
                                label.clone(),
                                json!({"type": "resolve", "what": "chain_item", "item": item.seq}),
                            )
                            .entering(changes(state, header).optional()),
                        );
                    }
                }
            }
        },
        Phase::Damage { battlefield, attacker, defender, assigning, .. } => {
            let target = if assigning == attacker { defender } else { attacker };
            let assign = damage_moves(state, header, battlefield, assigning, target);
            // The side assigning, or a judge: the step table's roles.
            for actor in &state.actors() {
                moves.extend(assign.iter().map(|m| Move { seat: actor.clone(), ..m.clone() }));
            }
        }
    }
    moves
}

/// The next player in turn order begins its turn.
fn begin_turn(state: &State) -> Move {
    Move::new(&state.next_turn(), "begin the turn", json!({"type": "announce", "what": "turn"}))
}

fn pass(seat: &str) -> Move {
    Move::new(seat, "pass", json!({"type": "pass"}))
}

fn card() -> Entry {
    Entry::new("card", EntryKind::Card, "the card")
}

/// A play of one of `kinds`, with the card typed.
fn play(seat: &str, label: &str, kinds: &[PlayKind]) -> Move {
    let kinds = kinds.iter().map(|k| Pick::new(kind_name(*k), kind_name(*k).replace('_', " "))).collect();
    Move::new(seat, label, json!({"type": "play"})).choosing(Choice::one("kind", kinds)).entering(card())
}

/// "Alice (p1) attacks Bob (p2) at Altar".
fn combat_at(state: &State, header: &Header, bf: &str) -> String {
    match state.combat_players(bf) {
        Some((a, d)) => format!("{bf}: {} attacks {}", header.name_of(&a), header.name_of(&d)),
        None => bf.to_string(),
    }
}

/// A unit as the board shows it: "Imp (Might 1, at Altar)".
fn unit_label(state: &State, header: &Header, name: &str, owner: bool) -> String {
    let u = &state.units[name];
    let at = u.at.as_deref().map_or("base".to_string(), |bf| bf.to_string());
    let tank = if u.tank { ", Tank" } else { "" };
    if owner {
        format!("{name} (Might {}{tank}, at {at}) of {}", u.might, header.name_of(&u.owner))
    } else {
        format!("{name} (Might {}{tank}, at {at})", u.might)
    }
}

/// Where `player` may move units: base (`to` null), and each battlefield
/// its units may enter.
fn destinations(state: &State, player: &str) -> Vec<Pick> {
    let mut to = vec![Pick::new(Value::Null, "base")];
    for bf in state.battlefields.keys() {
        if state.may_enter(player, bf).is_ok() {
            to.push(Pick::new(bf.as_str(), bf.as_str()));
        }
    }
    to
}

/// The turn player's moves of units (gap 2): its units on the board to
/// each destination, picked; and units typed, new ones with their Might and
/// keywords (a unit's first mention gives them).
fn unit_moves(state: &State, header: &Header, player: &str) -> Vec<Move> {
    let mut moves = vec![];
    let own: Vec<&String> = state.units.iter().filter(|(_, u)| u.owner == player).map(|(n, _)| n).collect();
    let to = destinations(state, player);
    for dest in &to {
        let here = dest.value.as_str();
        let units: Vec<Pick> = own
            .iter()
            .filter(|n| state.units[n.as_str()].at.as_deref() != here)
            .map(|n| Pick::new(json!({"name": n}), unit_label(state, header, n, false)))
            .collect();
        if units.is_empty() {
            continue;
        }
        let max = units.len() as u32;
        moves.push(
            Move::new(
                player,
                format!("move units to {}", dest.label),
                json!({"type": "announce", "what": "move", "to": dest.value}),
            )
            .choosing(Choice::some("units", units, 1, max)),
        );
    }
    let suggest: Vec<Pick> = own.iter().map(|n| Pick::new(n.as_str(), unit_label(state, header, n, false))).collect();
    let keyword = |field: &str, label: &str| {
        Entry::list(field, label, None, None, vec![Entry::number("", EntryKind::Points, "X", Some(0), None)]).optional()
    };
    let flag = |field: &str, label: &str| Choice {
        min: 0,
        ..Choice::one(field, vec![Pick::new(true, label), Pick::new(false, format!("no {label}"))])
    };
    let units = Entry::list(
        "units",
        "the units (a new unit with its Might and keywords)",
        Some(1),
        None,
        vec![
            Entry::new("name", EntryKind::Name, "the unit").suggesting(suggest),
            Entry::number("might", EntryKind::Points, "its Might (a new unit)", Some(0), None).optional(),
            keyword("assault", "Assault X (each +X Might while attacking)"),
            keyword("shield", "Shield X (each +X Might while defending)"),
        ],
    )
    .choosing(flag("tank", "Tank"));
    moves.push(
        Move::new(player, "move units (new units by name and Might)", json!({"type": "announce", "what": "move"}))
            .choosing(Choice { min: 0, ..Choice::one("to", to) })
            .entering(units),
    );
    moves
}

/// The changes a chain item made to units (gap 1), as the table records them.
fn changes(state: &State, header: &Header) -> Entry {
    let units: Vec<Pick> =
        state.units.keys().map(|n| Pick::new(n.as_str(), unit_label(state, header, n, true))).collect();
    let battlefields: Vec<Pick> = state.battlefields.keys().map(|bf| Pick::new(bf.as_str(), bf.as_str())).collect();
    let flag = |field: &str, yes: &str| Choice {
        min: 0,
        ..Choice::one(field, vec![Pick::new(true, yes), Pick::new(false, format!("not: {yes}"))])
    };
    let mut entry = Entry::list(
        "changes",
        "what the item did to units",
        Some(0),
        None,
        vec![
            Entry::new("unit", EntryKind::Name, "the unit").suggesting(units),
            Entry::number("might", EntryKind::Points, "its Might now", Some(0), None).optional(),
            Entry::number("damage", EntryKind::Points, "its damage now", Some(0), None).optional(),
        ],
    )
    .choosing(flag("dies", "dies"))
    .choosing(flag("to_base", "moves to base"));
    if !battlefields.is_empty() {
        entry = entry.choosing(Choice { min: 0, ..Choice::one("to", battlefields) });
    }
    entry
}

/// Step 2's assignments of `by`'s Might to `target`'s units at `bf`: each
/// assignment that reaches units in an order the rules allow (Tanks first,
/// each lethal before the next, the rest on the last reached), with the
/// lethal amounts filled in; and one with the amounts typed, for more than
/// lethal on a unit other than the last.
fn damage_moves(state: &State, header: &Header, bf: &str, by: &str, target: &str) -> Vec<Move> {
    let total = state.side_might(bf, by);
    let targets: Vec<&String> =
        state.units.iter().filter(|(_, u)| u.owner == target && u.at.as_deref() == Some(bf)).map(|(n, _)| n).collect();
    let who = header.name_of(by);
    let action = |list: &[Assignment]| json!({"type": "resolve", "what": "damage", "assignments": list.iter().map(|a| json!({"unit": a.unit, "damage": a.damage})).collect::<Vec<_>>()});
    let mut moves = vec![];
    for list in lethal_assignments(state, bf, by, target, total, &targets) {
        let words: Vec<String> = list
            .iter()
            .map(|a| {
                let lethal = if a.damage >= state.lethal(&a.unit) { " (lethal)" } else { "" };
                format!("{} {}{lethal}", a.unit, a.damage)
            })
            .collect();
        let said = if words.is_empty() { "none".to_string() } else { words.join(", ") };
        moves.push(Move::new(by, format!("assign {who}'s {total} damage: {said}"), action(&list)));
    }
    if total > 0 && !targets.is_empty() {
        let units = targets.iter().map(|n| Pick::new(n.as_str(), unit_label(state, header, n, false))).collect();
        let items = vec![
            Entry::new("unit", EntryKind::Name, "the unit").suggesting(units),
            Entry::number("damage", EntryKind::Points, "its damage", Some(1), Some(total)),
        ];
        moves.push(
            Move::new(
                by,
                format!("assign {who}'s {total} damage (amounts typed)"),
                json!({"type": "resolve", "what": "damage"}),
            )
            .entering(Entry::list(
                "assignments",
                "the damage each unit gets",
                Some(1),
                Some(targets.len() as i64),
                items,
            )),
        );
    }
    moves
}

/// The assignments that reach units in order: a set of units each given
/// exactly lethal damage, then the last unit reached given the rest (more
/// than lethal only when every unit is reached). Each is kept only if the
/// reducer's own check accepts it; listed Tanks first, the last unit last.
fn lethal_assignments(
    state: &State,
    bf: &str,
    by: &str,
    target: &str,
    total: i64,
    targets: &[&String],
) -> Vec<Vec<Assignment>> {
    let legal = |list: &Vec<Assignment>| state.check_assignment(bf, by, target, list).is_ok();
    if total == 0 {
        return vec![vec![]].into_iter().filter(legal).collect();
    }
    // Units already with lethal damage take none before the rest is placed.
    let mut reach: Vec<&String> = targets.iter().copied().filter(|n| state.lethal(n) > 0).collect();
    if reach.is_empty() {
        reach = targets.to_vec();
    }
    if reach.len() > MAX_LISTED_TARGETS {
        return vec![];
    }
    reach.sort_by_key(|n| !state.units[n.as_str()].tank);
    let mut found = vec![];
    // The same amounts reached in another order are one assignment.
    let mut seen = std::collections::BTreeSet::new();
    for (last, l) in reach.iter().enumerate() {
        let others: Vec<&String> = reach.iter().enumerate().filter(|(i, _)| *i != last).map(|(_, n)| *n).collect();
        for mask in 0u32..(1 << others.len()) {
            let lethal: Vec<&String> = (0..others.len()).filter(|i| mask & (1 << i) != 0).map(|i| others[i]).collect();
            let rest = total - lethal.iter().map(|n| state.lethal(n)).sum::<i64>();
            let everyone = lethal.len() == others.len();
            if rest < 1 || (rest > state.lethal(l).max(1) && !everyone) {
                continue;
            }
            let mut list: Vec<Assignment> =
                lethal.iter().map(|n| Assignment { unit: n.to_string(), damage: state.lethal(n) }).collect();
            list.push(Assignment { unit: l.to_string(), damage: rest });
            // Listed in the order reached: Tanks first, a unit short of lethal last.
            list.sort_by_key(|a| (a.damage < state.lethal(&a.unit), !state.units[&a.unit].tank));
            let mut amounts: Vec<(String, i64)> = list.iter().map(|a| (a.unit.clone(), a.damage)).collect();
            amounts.sort();
            if legal(&list) && seen.insert(amounts) {
                found.push(list);
            }
        }
    }
    found
}
