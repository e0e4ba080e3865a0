//! Raw Deal's actions in the timing breakdown's words: costs, damage and
//! their modifiers as arithmetic.

use serde::Deserialize;
use serde_json::Value;

use super::list;
use crate::event::Header;
use crate::rules::rawdeal::{Action, Modifier, Op, Resolve, State};

pub fn words(_state: &State, _header: &Header, action: &Value) -> Option<String> {
    let action = Action::deserialize(action).ok()?;
    Some(match action {
        Action::Play { card, cost, damage, multi, reversal, goes_to, targets } => {
            let mut about = vec![format!("cost {cost}")];
            if let Some(d) = damage {
                about.push(format!("damage {d}"));
            }
            if multi {
                about.push("Multi".into());
            }
            if reversal {
                about.push("reversal".into());
            }
            if !targets.is_empty() {
                about.push(format!("targets {}", targets.join(", ")));
            }
            if let Some(to) = goes_to {
                about.push(format!("goes to {to}"));
            }
            format!("play {card} ({})", about.join(", "))
        }
        Action::Pass {} => "pass".into(),
        Action::Resolve(resolve) => match resolve {
            Resolve::Cost { fortitude, player_mods, opponent_mods, when_played, cost } => {
                let mut s = format!("Fortitude cost {cost} (Fortitude {fortitude}");
                for (whose, mods) in
                    [("player", &player_mods), ("opponent", &opponent_mods), ("when played", &when_played)]
                {
                    if !mods.is_empty() {
                        s += &format!("; {whose} modifiers {}", modifiers(mods));
                    }
                }
                s + ")"
            }
            Resolve::Requirements { must, follow_up } => {
                let mut s = format!("'must' requirements {}", if must { "met" } else { "not met" });
                if let Some(f) = follow_up {
                    s += &format!(", follow-up {}", if f { "met" } else { "not met" });
                }
                s
            }
            Resolve::Effects { effects } => format!("effects: {}", list(effects)),
            Resolve::Damage { mods, damage } if mods.is_empty() => format!("damage {damage}"),
            Resolve::Damage { mods, damage } => format!("damage {damage} ({})", modifiers(&mods)),
            Resolve::ReversalMods { cannot_be_reversed, effects } => {
                let mut s = if cannot_be_reversed { "cannot be reversed" } else { "may be reversed" }.to_string();
                if !effects.is_empty() {
                    s += &format!("; effects: {}", list(effects));
                }
                s
            }
            Resolve::Overturn { card, stops: false } => format!("overturn {card}"),
            Resolve::Overturn { card, stops: true } => format!("overturn {card}: it stops the damage"),
            Resolve::EndTurn { ends_turn, effects } => {
                let mut s = if ends_turn { "the turn ends" } else { "the turn does not end" }.to_string();
                if !effects.is_empty() {
                    s += &format!("; effects: {}", list(effects));
                }
                s
            }
            Resolve::Rounding { value } => format!("rounded to {value}"),
        },
    })
}

/// "+1 (Big Show), ÷2 (Kane)".
fn modifiers(mods: &[Modifier]) -> String {
    list(mods.iter().map(|m| {
        let op = match m.op {
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "×",
            Op::Div => "÷",
        };
        match &m.source {
            Some(source) => format!("{op}{} ({source})", m.value),
            None => format!("{op}{}", m.value),
        }
    }))
}
