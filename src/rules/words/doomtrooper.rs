//! Doomtrooper's actions in the board's words.

use serde::Deserialize;
use serde_json::Value;

use super::list;
use crate::event::Header;
use crate::rules::doomtrooper::{Action, Announce, Fate, Outcome, Play, Resolve, State};

pub fn words(state: &State, header: &Header, action: &Value) -> Option<String> {
    let action = Action::deserialize(action).ok()?;
    let name = |seat: &str| header.name_of(seat);
    Some(match action {
        Action::Announce(Announce::Combat { defending_player, attacker, defender }) => {
            format!("{attacker} attacks {defender}; defending player {}", name(&defending_player))
        }
        Action::Announce(Announce::BattleTactic { tactic }) => format!("battle tactic {tactic}"),
        Action::Announce(Announce::Warzone { warzone: Some(w) }) => format!("warzone {w}"),
        Action::Announce(Announce::Warzone { warzone: None }) => "no warzone".into(),
        Action::Announce(Announce::Equipment { items }) if items.is_empty() => "no equipment used".into(),
        Action::Announce(Announce::Equipment { items }) => format!("equipment used: {}", items.join(", ")),
        Action::Counter { card, target } => format!("{card} counters {}", effect(state, target)),
        Action::Play(play) => match play {
            Play::ChangeCombatants { card, attacker, defender } => {
                let mut new = vec![];
                if let Some(a) = attacker {
                    new.push(format!("attacker {a}"));
                }
                if let Some(d) = defender {
                    new.push(format!("defender {d}"));
                }
                format!("{card} changes combatants: {}", list(new))
            }
            Play::StrikeOrder { card, first: Some(seat) } => format!("{card}: {} strikes first", name(&seat)),
            Play::StrikeOrder { card, first: None } => format!("{card}: the combat is simultaneous"),
            Play::EndCombat { card } => format!("{card} ends the combat"),
            Play::Equipment { card } => format!("{card} used with equipment"),
            Play::Modify { card } => format!("{card} modifies combat ratings"),
            Play::Save { card, warrior } => format!("{card} saves {warrior}"),
            Play::ModifyAward { card, points } => format!("{card} modifies the award: {}", points_words(points)),
        },
        Action::Pass {} => "pass".into(),
        Action::Resolve(resolve) => match resolve {
            Resolve::Standing { ratings } => {
                format!("combat ratings: {}", list(ratings.iter().map(|r| format!("{} {}", r.warrior, r.rating))))
            }
            Resolve::Results { results, counted } => {
                let counted = list(counted.iter().map(|seq| effect(state, *seq)));
                format!("{}; counted: {counted}", outcomes(&results))
            }
            Resolve::Status { status } => format!("after escape wounding: {}", outcomes(&status)),
            Resolve::Award { points } => format!("{} awarded", points_words(points)),
            Resolve::StrikeOrder { first: Some(seat) } => format!("{} strikes first", name(&seat)),
            Resolve::StrikeOrder { first: None } => "the combat is simultaneous".into(),
            Resolve::Combatants { attacker, defender } => format!("combatants: {attacker} attacks {defender}"),
        },
    })
}

/// "Max Steiner unharmed, Legionnaire Sergeant killed".
fn outcomes(list: &[Outcome]) -> String {
    super::list(list.iter().map(|o| format!("{} {}", o.warrior, fate(o.outcome))))
}

fn fate(f: Fate) -> &'static str {
    match f {
        Fate::Unharmed => "unharmed",
        Fate::Wounded => "wounded",
        Fate::Killed => "killed",
        Fate::RemovedFromPlay => "removed from play",
    }
}

fn points_words(points: u64) -> String {
    if points == 1 { "1 point".into() } else { format!("{points} points") }
}

/// The effect made by event `seq`, by its card where the combat knows it:
/// "Combat Drugs (seq 50)", "battle tactic Fight (seq 2)".
fn effect(state: &State, seq: u64) -> String {
    let combat = state.combat.as_ref();
    let card = combat.and_then(|c| c.effects.get(seq)).and_then(|e| e.card.clone());
    let announced = || {
        let c = combat?;
        match (&c.battle_tactic, &c.warzone) {
            (Some((s, tactic)), _) if *s == seq => Some(format!("battle tactic {tactic}")),
            (_, Some((s, Some(w)))) if *s == seq => Some(format!("warzone {w}")),
            _ => None,
        }
    };
    match card.or_else(announced) {
        Some(what) => format!("{what} (seq {seq})"),
        None => format!("seq {seq}"),
    }
}
