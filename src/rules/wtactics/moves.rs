//! What each seat and judge may record now (see `kernel::moves`), driven by
//! the reducer's [`Phase`], the row of the step table (`STEPS`) for it (who
//! acts there), and the reducer's own checks: who may announce attackers,
//! which creatures may fight, whose Response opportunity it is, which
//! combats are left, who may record an outcome, and, when no Event or
//! Ability was played in the attack, the values, the damage and who dies.

use serde_json::{Value, json};

use crate::event::Header;
use crate::kernel::{Choice, Entry, EntryKind, Move, Pick};

use super::{Damage, Phase, State, dies};

/// The moves of the state, for every seat and judge.
pub fn moves(state: &State, header: &Header) -> Vec<Move> {
    match &state.phase {
        Phase::Idle => between_attacks(state, header),
        Phase::Responses { .. } => responses(state, "play an Event or Ability"),
        Phase::CombatResponses { attacker, .. } => {
            responses(state, &format!("play an Event or Ability in the combat of {attacker}"))
        }
        Phase::Defense => defense(state, header),
        Phase::Undefended => undefended(state, header),
        Phase::Confirm { by, damage, influence_lost } => confirm(state, header, by, damage, *influence_lost),
        Phase::UnblockedRuling => unblocked(state, header),
        Phase::Pick { .. } => pick(state),
        Phase::Resolution { attacker } => resolution(state, attacker, false),
        Phase::CombatRuling { attacker } => resolution(state, attacker, true),
    }
}

/// Between attacks: a player begins a turn (gap 7), the active player
/// announces the turn's attackers (I), an owner unmarks creatures (gap 4).
fn between_attacks(state: &State, header: &Header) -> Vec<Move> {
    let mut moves = vec![];
    for seat in &state.seats {
        let name = header.name_of(seat);
        moves.push(Move::new(seat, format!("begin {name}'s turn"), json!({"type": "announce", "what": "turn"})));
        if state.may_announce_attackers(seat).is_ok() {
            let announce = json!({"type": "announce", "what": "attackers"});
            let fighters: Vec<Pick> =
                state.fighters(seat).into_iter().map(|(n, c)| Pick::new(json!({"name": n}), creature(n, c))).collect();
            if !fighters.is_empty() {
                let most = fighters.len() as u32;
                let pick = Choice::some("attackers", fighters, 1, most);
                moves.push(Move::new(seat, "announce attackers", announce.clone()).choosing(pick));
            }
            moves.push(Move::new(seat, "announce attackers, naming them", announce).entering(Entry::list(
                "attackers",
                "the attackers",
                Some(1),
                None,
                creature_fields("", state, header, seat),
            )));
        }
        let living: Vec<Pick> = state
            .creatures
            .iter()
            .filter(|(_, c)| c.living_of(seat))
            .map(|(n, c)| Pick::new(n.clone(), if c.marked { format!("{n} (marked)") } else { n.clone() }))
            .collect();
        let most = living.len() as u32;
        let unmark = json!({"type": "resolve", "what": "unmark"});
        moves.push(Move::new(seat, "unmark creatures", unmark).choosing(Choice::some("creatures", living, 0, most)));
    }
    moves
}

/// A creature as the board shows it: "Orc Raider (ATK 3 DEF 2)".
fn creature(name: &str, c: &super::Creature) -> String {
    format!("{name} (ATK {} DEF {})", c.atk, c.def)
}

/// The fields of a creature the table names (under `prefix`), `owner`'s:
/// its name (one already on the board that may fight, or a new one), its
/// ATK and DEF (needed the first time it is named), its Enchantments.
fn creature_fields(prefix: &str, state: &State, header: &Header, owner: &str) -> Vec<Entry> {
    let fighters = state.fighters(owner).into_iter().map(|(n, c)| Pick::new(n.clone(), creature(n, c))).collect();
    let seats = state.seats.iter().map(|s| Pick::new(s.clone(), header.name_of(s))).collect();
    vec![
        Entry::new(&format!("{prefix}name"), EntryKind::Name, "the creature").suggesting(fighters),
        Entry::number(&format!("{prefix}atk"), EntryKind::Rating, "its ATK (to name a new creature)", None, None)
            .optional(),
        Entry::number(&format!("{prefix}def"), EntryKind::Rating, "its DEF (to name a new creature)", None, None)
            .optional(),
        Entry::list(
            &format!("{prefix}enchantments"),
            "the Enchantments attached to it",
            None,
            None,
            vec![
                Entry::new("card", EntryKind::Card, "the Enchantment"),
                Entry::new("owner", EntryKind::Name, "the seat whose discard pile it goes to").suggesting(seats),
            ],
        )
        .optional(),
    ]
}

/// A Response phase (I, or an individual combat's in IV): the player with
/// the opportunity plays one Event or one Ability, or passes.
fn responses(state: &State, label: &str) -> Vec<Move> {
    let kinds = vec![Pick::new("event", "an Event"), Pick::new("ability", "an Ability")];
    let play = Move::new("", label, json!({"type": "play"})).choosing(Choice::one("kind", kinds)).entering(Entry::new(
        "card",
        EntryKind::Card,
        "the card",
    ));
    [each(state, play), each(state, Move::new("", "pass", json!({"type": "pass"})))].concat()
}

/// II/III: the defending player defends (each defender against one
/// attacker) or allows the attacks.
fn defense(state: &State, header: &Header) -> Vec<Move> {
    let attack = state.attack.as_ref().expect("an attack");
    let passive = &attack.passive;
    let attackers =
        attack.combats.iter().map(|(a, _)| Pick::new(a.clone(), creature(a, &state.creatures[a]))).collect();
    let mut block = creature_fields("defender/", state, header, passive);
    block.push(Entry::new("attacker", EntryKind::Name, "the attacker it defends against").suggesting(attackers));
    let declare = json!({"type": "announce", "what": "defenders"});
    let defend = Move::new("", "defend", declare).entering(Entry::list(
        "blocks",
        "the defenders, each against one attacker",
        Some(1),
        None,
        block,
    ));
    let allow = Move::new("", "allow the attacks", json!({"type": "announce", "what": "defenders", "blocks": []}));
    [each(state, defend), each(state, allow)].concat()
}

/// The move `m` (its seat left empty) for each who acts at the step under
/// way: its row's role (see `STEPS`).
fn each(state: &State, m: Move) -> Vec<Move> {
    state.acting().into_iter().map(|seat| Move { seat, ..m.clone() }).collect()
}

/// II: the influence lost to the attacks let through: with no Event or
/// Ability played, each attacker's own ATK and their total; else the table
/// enters each attacker's damage and the total.
fn undefended(state: &State, header: &Header) -> Vec<Move> {
    let attack = state.attack.as_ref().expect("an attack");
    let passive = header.name_of(&attack.passive);
    match state.own_damage() {
        // The reducer refuses a negative damage: a creature named with a
        // negative ATK leaves nothing to offer but the judges' rulings.
        Some(own) if own.iter().any(|d| d.damage < 0) => vec![],
        Some(own) => {
            let total: i64 = own.iter().map(|d| d.damage).sum();
            let fixed = json!({"type": "resolve", "what": "undefended", "damage": own, "influence_lost": total});
            each(state, Move::new("", format!("{passive} loses {total} influence"), fixed))
        }
        None => {
            let named: Vec<Value> = attack.combats.iter().map(|(a, _)| json!({"attacker": a})).collect();
            let action = json!({"type": "resolve", "what": "undefended", "damage": named});
            let mut m = Move::new("", "record the influence lost", action);
            for (i, (a, _)) in attack.combats.iter().enumerate() {
                let what = format!("{a}'s damage, all effects counted");
                m = m.entering(Entry::number(&format!("damage/{i}/damage"), EntryKind::Points, what, Some(0), None));
            }
            let what = format!("the influence {passive} loses: the damage's total");
            each(state, m.entering(Entry::number("influence_lost", EntryKind::Points, what, Some(0), None)))
        }
    }
}

/// Gap 6: the other player confirms the damage `by` recorded; a judge may
/// record it instead (the same entries as the players had).
fn confirm(state: &State, header: &Header, by: &str, damage: &[Damage], influence_lost: i64) -> Vec<Move> {
    let attack = state.attack.as_ref().expect("an attack");
    let list: Vec<String> = damage.iter().map(|d| format!("{} {}", d.attacker, d.damage)).collect();
    let label = format!(
        "confirm what {} recorded: {}; {} loses {influence_lost} influence",
        header.name_of(by),
        list.join(", "),
        header.name_of(&attack.passive)
    );
    let mut moves: Vec<Move> = state
        .seats
        .iter()
        .filter(|s| *s != by)
        .map(|s| Move::new(s, label.clone(), json!({"type": "resolve", "what": "confirm"})))
        .collect();
    for m in undefended(state, header) {
        if state.judges.contains(&m.seat) {
            moves.push(m);
        }
    }
    moves
}

/// Gap 2: a judge rules on the influence lost to the attackers left
/// undefended beside defended ones (the text is silent: it is entered).
fn unblocked(state: &State, header: &Header) -> Vec<Move> {
    let attack = state.attack.as_ref().expect("an attack");
    let passive = header.name_of(&attack.passive);
    let left = attack.undefended.join(", ");
    let rule = Move::new(
        "",
        format!("rule on the attackers left undefended ({left})"),
        json!({"type": "resolve", "what": "unblocked"}),
    );
    let what = format!("the influence {passive} loses to {left}");
    each(state, rule.entering(Entry::number("influence_lost", EntryKind::Points, what, Some(0), None)))
}

/// IV: the picker chooses the combat to resolve next.
fn pick(state: &State) -> Vec<Move> {
    let left = state
        .combats_left()
        .into_iter()
        .map(|a| {
            let against = state.blockers(&a).join(", ");
            Pick::new(a.clone(), format!("{a} against {against}"))
        })
        .collect();
    let next = json!({"type": "announce", "what": "next_combat"});
    each(state, Move::new("", state.step_now().title, next).choosing(Choice::one("attacker", left)))
}

/// IV: a combat resolves. With no Event or Ability played in the attack the
/// values are the creatures' own, and against one defender the dead follow
/// from them: the whole action is fixed. With effects played the table
/// enters the values and picks the dead (the reducer checks them against
/// the values). With several defenders (`ruling`, gap 1) a judge names the
/// dead among the combat's creatures. Who records it is the row's role.
fn resolution(state: &State, attacker: &str, ruling: bool) -> Vec<Move> {
    let in_combat = state.in_combat(attacker);
    let role = |n: &String| if n == attacker { "attacker" } else { "defender" };
    let picks = in_combat.iter().map(|n| Pick::new(n.clone(), format!("{n} ({})", role(n)))).collect();
    let dead = Choice::some("dead", picks, 0, in_combat.len() as u32);
    let m = match state.own_values(attacker) {
        Some((values, defenders)) if !ruling => {
            let died = dies(attacker, &values, &defenders[0]);
            let action =
                json!({"type": "resolve", "what": "combat", "attacker": values, "defenders": defenders, "dead": died});
            Move::new("", format!("resolve combat: {}", died_words(&died)), action)
        }
        Some((values, defenders)) => {
            let action = json!({"type": "resolve", "what": "combat", "attacker": values, "defenders": defenders});
            Move::new("", "resolve combat (several defenders): name the dead", action).choosing(dead)
        }
        None => {
            let blockers = state.blockers(attacker);
            let names: Vec<Value> = blockers.iter().map(|d| json!({"name": d})).collect();
            let action = json!({"type": "resolve", "what": "combat", "attacker": {}, "defenders": names});
            let label = if ruling { "resolve combat (several defenders)" } else { "resolve combat" };
            let mut m = Move::new("", label, action);
            let fighters = std::iter::once(("attacker".to_string(), attacker))
                .chain(blockers.iter().enumerate().map(|(i, d)| (format!("defenders/{i}"), d.as_str())));
            for (at, name) in fighters {
                for (field, what) in [("atk", "ATK"), ("def", "DEF")] {
                    let label = format!("{name}'s {what}, all effects counted");
                    m = m.entering(Entry::number(&format!("{at}/{field}"), EntryKind::Rating, label, None, None));
                }
            }
            m.choosing(dead)
        }
    };
    each(state, m)
}

/// "Orc Raider dies", "Knight and Orc Raider die", "no one dies".
fn died_words(dead: &[String]) -> String {
    match dead {
        [] => "no one dies".into(),
        [one] => format!("{one} dies"),
        many => format!("{} die", many.join(" and ")),
    }
}
