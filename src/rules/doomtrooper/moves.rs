//! What each seat and judge may record now (see `kernel::moves`).
//!
//! Driven by the step table: the current step's `Does` says who acts and
//! how, as it does for the reducer. Every option offered is one the
//! reducer's own checks accept (the special cards a step allows, the effects
//! a counter may name, the warriors a save may name, the statuses step 44
//! allows), and every answer the reducer checks is filled in: `counted` at
//! step 37, a status no standing save changes at step 44. What the table
//! determines (ratings, results, points, names, cards) is chosen or entered.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::{
    Combat, Does, Fate, Kind, Order, Part, Pending, Play, SPECIAL_CARDS, State, Step, counter_answers,
    counter_card_allowed, play_kinds, special_fits,
};
use crate::event::Header;
use crate::kernel::{Choice, Effect, Entry, EntryKind, Move, Pick};

const FATES: [Fate; 4] = [Fate::Unharmed, Fate::Wounded, Fate::Killed, Fate::RemovedFromPlay];

/// The moves of the state, for every seat and judge.
pub fn moves(state: &State, header: &Header) -> Vec<Move> {
    let Some(c) = &state.combat else {
        return state.seats.iter().map(|seat| announce_combat(state, seat, header)).collect();
    };
    // The text is silent (gap 4): only a judge's ruling moves the game on.
    if let Some(pending) = &c.awaiting_ruling {
        return state.judges.iter().map(|judge| ruling(c, pending, judge, header)).collect();
    }
    let others = c.others(&state.seats);
    let s = c.current();
    let judges = state.judges.iter().map(String::as_str);
    let mut moves = vec![];
    match s.does {
        Does::Announce(role, what, kinds) => {
            for seat in c.seat_refs(role, &others) {
                moves.extend(announce(state, c, seat, what));
                moves.extend(plays(c, s, seat, kinds, header));
            }
        }
        Does::Window(..) | Does::Plays(..) | Does::Awards(..) => {
            let (_, may) = s.window().expect("window step");
            if let Some(holder) = c.holder() {
                let mine = c.may_of(&may, &others, holder);
                moves.push(Move::new(holder, "pass", json!({"type": "pass"})));
                moves.extend(plays(c, s, holder, &play_kinds(&mine), header));
                if let Some(answers) = counter_answers(&mine) {
                    moves.extend(counter(c, s, holder, answers, &others, header));
                }
            }
        }
        // Gap 1: the recorder or a judge.
        Does::Determine(what) => {
            moves.extend(determine(c, what, c.recorder(), false, header));
            for judge in judges {
                moves.extend(determine(c, what, judge, true, header));
            }
        }
        Does::Award(role) => {
            let awarded = c.seat_refs(role, &others)[0];
            let label = format!("award points to {}", header.name_of(awarded));
            for actor in c.seat_refs(role, &others).into_iter().chain(judges) {
                moves.push(
                    Move::new(actor, label.clone(), json!({"type": "resolve", "what": "award"}))
                        .entering(Entry::number("points", EntryKind::Points, "the points earned", Some(0), None)),
                );
            }
        }
    }
    moves
}

/// Step 1: any seat attacks any other.
fn announce_combat(state: &State, seat: &str, header: &Header) -> Move {
    let defending =
        state.seats.iter().filter(|s| *s != seat).map(|s| Pick::new(s.as_str(), header.name_of(s))).collect();
    // The warriors of the last combat still in play: the table will often mean them.
    let last = state.finished.last().map(warriors_in_play).unwrap_or_default();
    let named = |mine: bool| -> Vec<Pick> {
        last.iter().filter(|(s, _)| (s == seat) == mine).map(|(_, w)| Pick::new(w.as_str(), w.as_str())).collect()
    };
    Move::new(seat, "announce attacker and defender", json!({"type": "announce", "what": "combat"}))
        .choosing(Choice::one("defending_player", defending))
        .entering(Entry::new("attacker", EntryKind::Name, "the attacker").suggesting(named(true)))
        .entering(Entry::new("defender", EntryKind::Name, "the defender").suggesting(named(false)))
}

/// The combatants of a finished combat (seat, warrior) that were neither
/// killed nor removed from play.
fn warriors_in_play(c: &Combat) -> Vec<(String, String)> {
    let fates = c.first_combat.status.iter().chain(c.second_combat.iter().flat_map(|d| &d.status)).flatten();
    let gone: BTreeSet<&str> = fates.filter(|o| !o.outcome.alive()).map(|o| o.warrior.as_str()).collect();
    [(&c.attacking_player, &c.attacker), (&c.defending_player, &c.defender)]
        .into_iter()
        .filter(|(_, w)| !gone.contains(w.as_str()))
        .map(|(s, w)| (s.clone(), w.clone()))
        .collect()
}

/// Steps 2, 7, 24 and 26: the announcement the step table names.
fn announce(state: &State, c: &Combat, seat: &str, what: &str) -> Vec<Move> {
    let action = json!({"type": "announce", "what": what});
    let last = state.finished.last();
    let names = |list: Vec<&String>| -> Vec<Pick> {
        let mut seen = BTreeSet::new();
        list.into_iter().filter(|n| seen.insert(n.as_str())).map(|n| Pick::new(n.as_str(), n.as_str())).collect()
    };
    match what {
        "battle_tactic" => {
            // Announced before steps 2-15 were repeated, or in the last combat.
            let known = names(
                c.battle_tactic.iter().chain(last.and_then(|l| l.battle_tactic.as_ref())).map(|t| &t.1).collect(),
            );
            vec![
                Move::new(seat, "announce battle tactic", action)
                    .entering(Entry::new("tactic", EntryKind::Name, "the battle tactic").suggesting(known)),
            ]
        }
        "warzone" => {
            let known = names(
                c.warzone.iter().chain(last.and_then(|l| l.warzone.as_ref())).filter_map(|w| w.1.as_ref()).collect(),
            );
            vec![
                Move::new(seat, "announce warzone", action.clone()).entering(
                    Entry::new("warzone", EntryKind::Name, "the warzone the defender defends from").suggesting(known),
                ),
                // "if Defender will defend from a Warzone": null, or left out, for none.
                Move::new(seat, "announce no warzone", action)
                    .choosing(Choice { min: 0, ..Choice::one("warzone", vec![Pick::new(Value::Null, "no warzone")]) }),
            ]
        }
        "equipment" => {
            // IN PLAY equipment: what this player used before is likely still in play.
            let known = names(
                c.equipment.get(seat).into_iter().chain(last.and_then(|l| l.equipment.get(seat))).flatten().collect(),
            );
            let item = Entry::new("", EntryKind::Card, "an item of equipment or a relic").suggesting(known);
            vec![Move::new(seat, "announce equipment used", action).entering(Entry::list(
                "items",
                "the IN PLAY equipment used",
                Some(0),
                None,
                vec![item],
            ))]
        }
        _ => vec![],
    }
}

/// The card effects `actor` may play now, of the kinds `allowed`: none while
/// a combat-ending card stands (gap 2). The special cards the step allows
/// are suggested; where only special cards may end combat here (Pacifism in
/// MODIFY COMBAT RATINGS, Smoke Bomb at steps 24 and 26), they are the choice.
fn plays(c: &Combat, s: Step, actor: &str, allowed: &[Kind], header: &Header) -> Vec<Move> {
    if allowed.is_empty() || c.no_ending_card().is_err() {
        return vec![];
    }
    let specials = |kind: Kind| -> Vec<Pick> {
        SPECIAL_CARDS
            .iter()
            .filter(|sp| special_fits(sp, kind, allowed, s))
            .map(|sp| Pick::new(sp.name, sp.name))
            .collect()
    };
    let card = |kind: Kind| Entry::new("card", EntryKind::Card, "the card").suggesting(specials(kind));
    let play = |kind: Kind, label: &str| {
        Move::new(actor, label, json!({"type": "play", "effect": kind.name()})).entering(card(kind))
    };
    let mut kinds: Vec<Kind> = vec![];
    for k in allowed {
        if !kinds.contains(k) {
            kinds.push(*k);
        }
    }
    let mut moves = vec![];
    for kind in kinds.iter().copied() {
        match kind {
            Kind::ChangeCombatants => {
                let new = |field: &str| Entry::new(field, EntryKind::Name, format!("the new {field}"));
                let unchanged =
                    |field: &str| Choice { min: 0, ..Choice::one(field, vec![Pick::new(Value::Null, "unchanged")]) };
                moves.push(play(kind, "change the attacker").entering(new("attacker")).choosing(unchanged("defender")));
                moves.push(play(kind, "change the defender").entering(new("defender")).choosing(unchanged("attacker")));
                moves.push(
                    play(kind, "change attacker and defender").entering(new("attacker")).entering(new("defender")),
                );
            }
            Kind::StrikeOrder => moves.push(play(kind, "alter strike order").choosing(first_player(c, header))),
            Kind::EndCombat => moves.push(play(kind, "end combat")),
            Kind::Equipment => moves.push(play(kind, "play a card with equipment")),
            Kind::Modify => moves.push(play(kind, "modify combat")),
            Kind::Save => {
                let harmed: Vec<Pick> = c.harmed().map(|w| Pick::new(w, w)).collect();
                if !harmed.is_empty() {
                    moves.push(play(kind, "save a warrior").choosing(Choice::one("warrior", harmed)));
                }
            }
            Kind::ModifyAward => moves.push(play(kind, "modify the awarding").entering(Entry::number(
                "points",
                EntryKind::Points,
                "the award as modified",
                Some(0),
                None,
            ))),
        }
    }
    if !kinds.contains(&Kind::EndCombat) {
        let ending = specials(Kind::EndCombat);
        if !ending.is_empty() {
            let action = json!({"type": "play", "effect": Kind::EndCombat.name()});
            moves.push(Move::new(actor, "end combat", action).choosing(Choice::one("card", ending)));
        }
    }
    moves
}

/// Who strikes first: one of the two in combat, or null (or left out) for
/// simultaneous combat.
fn first_player(c: &Combat, header: &Header) -> Choice {
    let mut options: Vec<Pick> = [&c.attacking_player, &c.defending_player]
        .into_iter()
        .filter(|s| c.may_strike_first(s))
        .map(|s| Pick::new(s.as_str(), format!("{} strikes first", header.name_of(s))))
        .collect();
    options.push(Pick::new(Value::Null, "simultaneous"));
    Choice { min: 0, ..Choice::one("first", options) }
}

/// A counter: to any effect of the current part of the breakdown this
/// player may answer (the newest first). The reducer also accepts a counter
/// to an effect already countered (it stands again if that counter falls),
/// so those are offered too, marked.
fn counter(c: &Combat, s: Step, actor: &str, answers: super::Answers, others: &[String], header: &Header) -> Vec<Move> {
    let standing = c.effects.standing();
    let targets: Vec<Pick> = c
        .counter_targets(s, answers, others)
        .rev()
        .map(|e| Pick::new(e.seq, effect_label(c, e, standing.contains(&e.seq), header)))
        .collect();
    if targets.is_empty() {
        return vec![];
    }
    // The counter cards already played in this combat that this step allows.
    let mut cards: Vec<Pick> = vec![];
    for card in c.effects.effects.iter().filter(|e| e.counters.is_some()).filter_map(|e| e.card.as_deref()) {
        if counter_card_allowed(card, s).is_ok() && !cards.iter().any(|p| p.value == card) {
            cards.push(Pick::new(card, card));
        }
    }
    vec![
        Move::new(actor, "counter", json!({"type": "counter"}))
            .choosing(Choice::one("target", targets))
            .entering(Entry::new("card", EntryKind::Card, "the counter card").suggesting(cards)),
    ]
}

/// An effect in the board's words: "Shield of Faith (seq 51) by Bob (p2)".
fn effect_label(c: &Combat, e: &Effect, stands: bool, header: &Header) -> String {
    let who = header.name_of(&e.seat);
    let seq = e.seq;
    let mut label = match (&e.card, e.kind.as_str()) {
        (Some(card), _) => format!("{card} (seq {seq}) by {who}"),
        (None, "battle_tactic") => {
            let tactic = c.battle_tactic.as_ref().filter(|t| t.0 == seq).map_or("", |t| t.1.as_str());
            format!("battle tactic {tactic} (seq {seq}) by {who}")
        }
        (None, "warzone") => {
            let warzone = c.warzone.as_ref().filter(|w| w.0 == seq).and_then(|w| w.1.as_deref()).unwrap_or("none");
            format!("warzone {warzone} (seq {seq}) by {who}")
        }
        (None, "equipment_used") => {
            let items = c.equipment.get(&e.seat).map(|i| i.join(", ")).unwrap_or_default();
            format!("equipment used [{items}] (seq {seq}) by {who}")
        }
        (None, "award") => {
            let points = c.award.filter(|a| a.0 == seq).map_or(0, |a| a.1);
            format!("award of {points} points (seq {seq}) to {who}")
        }
        (None, kind) => format!("{kind} (seq {seq}) by {who}"),
    };
    if let Some(target) = e.counters {
        label.push_str(&format!(", countering seq {target}"));
    }
    if !stands {
        label.push_str(" (already countered)");
    }
    label
}

/// Steps 32, 37 and 44, by `actor` (the recorder, or a judge).
fn determine(c: &Combat, what: &str, actor: &str, judge: bool, header: &Header) -> Vec<Move> {
    let mut moves = vec![];
    for order in listings(c) {
        let list = |f: &dyn Fn(&str) -> Value| Value::Array(order.iter().map(|w| f(w)).collect());
        let names = order.join(", ");
        match what {
            "standing" => {
                let action =
                    json!({"type": "resolve", "what": "standing", "ratings": list(&|w| json!({"warrior": w}))});
                let mut m = Move::new(actor, format!("determine combat standing: {names}"), action);
                for (i, w) in order.iter().enumerate() {
                    m = m.entering(Entry::new(
                        &format!("ratings/{i}/rating"),
                        EntryKind::Rating,
                        format!("{w}'s combat rating"),
                    ));
                }
                moves.push(m);
            }
            "results" => {
                // Step 37: "Note which cards were countered by card effects and
                // disregard those cards": the modifiers that still stand.
                let counted: Vec<u64> = c.standing_modifiers().into_iter().collect();
                let cards: Vec<String> = counted
                    .iter()
                    .filter_map(|q| c.effects.get(*q))
                    .map(|e| effect_label(c, e, true, header))
                    .collect();
                let label = match cards.len() {
                    0 => format!("resolve combat: {names}; no modifiers stand"),
                    _ => format!("resolve combat: {names}; counting {}", cards.join(", ")),
                };
                let action = json!({"type": "resolve", "what": "results", "counted": counted,
                                    "results": list(&|w| json!({"warrior": w}))});
                let mut m = Move::new(actor, label, action);
                for (i, w) in order.iter().enumerate() {
                    m = m.choosing(Choice::one(&format!("results/{i}/outcome"), fates(&FATES, w)));
                }
                moves.push(m);
            }
            "status" => moves.extend(status(c, &order, actor, judge)),
            _ => {}
        }
    }
    moves
}

/// Step 44: a warrior no standing save names keeps its result (filled in);
/// one a save names takes a milder status (or, by a judge, any), chosen.
fn status(c: &Combat, order: &[&str], actor: &str, judge: bool) -> Option<Move> {
    let saved = c.standing_saves();
    let mut items = vec![];
    let mut choices = vec![];
    let mut said = vec![];
    for (i, w) in order.iter().enumerate() {
        let allowed: Vec<Fate> =
            FATES.iter().copied().filter(|f| c.status_allowed(w, *f, &saved, judge).is_ok()).collect();
        match allowed.as_slice() {
            [] => return None,
            [only] => {
                items.push(json!({"warrior": w, "outcome": only}));
                said.push(format!("{w} {}", fate_words(*only)));
            }
            _ => {
                items.push(json!({"warrior": w}));
                choices.push(Choice::one(&format!("status/{i}/outcome"), fates(&allowed, w)));
                said.push(format!("{w} saved"));
            }
        }
    }
    let action = json!({"type": "resolve", "what": "status", "status": items});
    let m = Move::new(actor, format!("change warrior status: {}", said.join(", ")), action);
    Some(choices.into_iter().fold(m, Move::choosing))
}

/// The orders a determination may list the combatants in (each exactly
/// once): the text's first ("Determine combat standing for the First
/// player's warrior against the Second player's warrior"), then the other.
fn listings(c: &Combat) -> Vec<Vec<&str>> {
    let (a, d) = (c.attacker.as_str(), c.defender.as_str());
    let first_player_first = match (&c.order, c.part) {
        (Order::NonSimultaneous { first, .. }, Part::FirstCombat) => *first == c.attacking_player,
        (Order::NonSimultaneous { first, .. }, Part::SecondCombat) => *first != c.attacking_player,
        _ => true,
    };
    let text = if first_player_first { vec![a, d] } else { vec![d, a] };
    debug_assert_eq!(text.iter().copied().collect::<BTreeSet<_>>(), c.combatants());
    if a == d {
        return vec![vec![a]];
    }
    let other = text.iter().rev().copied().collect();
    vec![text, other]
}

fn fates(list: &[Fate], warrior: &str) -> Vec<Pick> {
    list.iter().map(|f| Pick::new(json!(f), format!("{warrior} {}", fate_words(*f)))).collect()
}

fn fate_words(f: Fate) -> &'static str {
    match f {
        Fate::Unharmed => "unharmed",
        Fate::Wounded => "wounded",
        Fate::Killed => "killed",
        Fate::RemovedFromPlay => "removed from play",
    }
}

/// The ruling the game waits for (gap 4), by `judge`.
fn ruling(c: &Combat, pending: &Pending, judge: &str, header: &Header) -> Move {
    let action = json!({"type": "resolve", "what": pending.what()});
    match pending {
        Pending::StrikeOrder { .. } => {
            Move::new(judge, "rule who strikes first", action).choosing(first_player(c, header))
        }
        Pending::Combatants { cards } => {
            // The warriors the conflicting changes name, and those now in combat.
            let (mut attackers, mut defenders) = (vec![c.attacker.as_str()], vec![c.defender.as_str()]);
            for q in cards {
                if let Some(Play::ChangeCombatants { attacker, defender, .. }) = c.plays.get(q) {
                    attackers.extend(attacker.as_deref());
                    defenders.extend(defender.as_deref());
                }
            }
            let picks = |mut list: Vec<&str>| -> Vec<Pick> {
                let mut seen = BTreeSet::new();
                list.retain(|w| seen.insert(*w));
                list.into_iter().map(|w| Pick::new(w, w)).collect()
            };
            Move::new(judge, "rule the combatants", action)
                .entering(Entry::new("attacker", EntryKind::Name, "the attacker").suggesting(picks(attackers)))
                .entering(Entry::new("defender", EntryKind::Name, "the defender").suggesting(picks(defenders)))
        }
        Pending::Award { seat, cards } => {
            // The points the award and the conflicting modifications name.
            let mut named: Vec<Pick> = c.award.iter().map(|a| Pick::new(a.1, format!("as awarded: {}", a.1))).collect();
            for q in cards {
                if let (Some(Play::ModifyAward { card, points }), Some(e)) = (c.plays.get(q), c.effects.get(*q)) {
                    named
                        .push(Pick::new(*points, format!("{card} (seq {q}) by {}: {points}", header.name_of(&e.seat))));
                }
            }
            Move::new(judge, format!("rule the award to {}", header.name_of(seat)), action).entering(
                Entry::number("points", EntryKind::Points, "the points awarded", Some(0), None).suggesting(named),
            )
        }
    }
}
