//! Riftbound's actions in the board's words: units with Might and
//! keywords, battlefields by name, players by name.

use serde::Deserialize;
use serde_json::Value;

use super::list;
use crate::event::Header;
use crate::rules::riftbound::{Action, Announce, PlayKind, Resolve, State, Trigger, UnitChange, UnitSpec};

pub fn words(_state: &State, header: &Header, action: &Value) -> Option<String> {
    let action = Action::deserialize(action).ok()?;
    Some(match action {
        Action::Announce(Announce::Turn {}) => "turn begins".into(),
        Action::Announce(Announce::EndTurn {}) => "turn ends".into(),
        Action::Announce(Announce::Move { units, to }) => {
            let to = to.unwrap_or_else(|| "base".into());
            format!("move {} to {to}", list(units.iter().map(unit)))
        }
        Action::Announce(Announce::Combat { battlefield }) => format!("combat at {battlefield} first"),
        Action::Announce(Announce::Invite { player }) => {
            format!("invite {} into the showdown", header.name_of(&player))
        }
        Action::Announce(Announce::Accept {}) => "accept the invitation".into(),
        Action::Announce(Announce::Decline {}) => "decline the invitation".into(),
        Action::Play { kind, card, trigger } => {
            let kind = match kind {
                PlayKind::Action => "action",
                PlayKind::Reaction => "reaction",
                PlayKind::ActionAbility => "action ability",
                PlayKind::ReactionAbility => "reaction ability",
                PlayKind::Trigger => "trigger",
            };
            let when = match trigger {
                Some(Trigger::Attack) => " (when attacking)",
                Some(Trigger::Defend) => " (when defending)",
                None => "",
            };
            format!("{kind} {card}{when}")
        }
        Action::Pass {} => "pass".into(),
        Action::Resolve(Resolve::ChainItem { item, changes }) => {
            format!("chain item seq {item} resolves; changes: {}", list(changes.iter().map(change)))
        }
        Action::Resolve(Resolve::Damage { assignments }) => {
            format!("combat damage: {}", list(assignments.iter().map(|a| format!("{} {}", a.unit, a.damage))))
        }
    })
}

/// "Stone Golem (Might 3, Tank)", "Berserker (Might 4, Assault 2)".
fn unit(u: &UnitSpec) -> String {
    let mut about = vec![];
    if let Some(m) = u.might {
        about.push(format!("Might {m}"));
    }
    about.extend(u.assault.iter().map(|x| format!("Assault {x}")));
    about.extend(u.shield.iter().map(|x| format!("Shield {x}")));
    if u.tank {
        about.push("Tank".into());
    }
    if about.is_empty() { u.name.clone() } else { format!("{} ({})", u.name, about.join(", ")) }
}

/// "Acolyte 1 damage", "Scout dies".
fn change(c: &UnitChange) -> String {
    let mut what = vec![];
    if let Some(d) = c.damage {
        what.push(format!("{d} damage"));
    }
    if let Some(m) = c.might {
        what.push(format!("Might {m}"));
    }
    if c.dies {
        what.push("dies".into());
    }
    if c.to_base {
        what.push("to base".into());
    }
    if let Some(to) = &c.to {
        what.push(format!("to {to}"));
    }
    format!("{} {}", c.unit, what.join(", "))
}
