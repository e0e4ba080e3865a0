//! WTactics's actions in the board's words: creatures with ATK and DEF,
//! owners by name.

use serde::Deserialize;
use serde_json::Value;

use super::list;
use crate::event::Header;
use crate::rules::wtactics::{Action, Announce, CreatureSpec, PlayKind, Resolve, State};

pub fn words(_state: &State, header: &Header, action: &Value) -> Option<String> {
    let action = Action::deserialize(action).ok()?;
    Some(match action {
        Action::Announce(Announce::Turn {}) => "turn begins".into(),
        Action::Announce(Announce::Attackers { attackers }) => {
            format!("attackers: {}", list(attackers.iter().map(|c| creature(header, c))))
        }
        Action::Announce(Announce::Defenders { blocks }) if blocks.is_empty() => {
            "no defenders: the attacks go through".into()
        }
        Action::Announce(Announce::Defenders { blocks }) => format!(
            "defenders: {}",
            list(blocks.iter().map(|b| format!("{} blocks {}", creature(header, &b.defender), b.attacker)))
        ),
        Action::Announce(Announce::NextCombat { attacker }) => format!("next combat: {attacker}'s"),
        Action::Play { kind: PlayKind::Event, card } => format!("event {card}"),
        Action::Play { kind: PlayKind::Ability, card } => format!("ability {card}"),
        Action::Pass {} => "pass".into(),
        Action::Resolve(Resolve::Undefended { damage, influence_lost }) => format!(
            "undefended: {}; influence lost {influence_lost}",
            list(damage.iter().map(|d| format!("{} {} damage", d.attacker, d.damage)))
        ),
        Action::Resolve(Resolve::Unblocked { influence_lost }) => {
            format!("influence lost to the attacks let through: {influence_lost}")
        }
        Action::Resolve(Resolve::Combat { attacker, defenders, dead }) => format!(
            "combat: attacker ATK {} DEF {} against {}; dead: {}",
            attacker.atk,
            attacker.def,
            list(defenders.iter().map(|d| format!("{} ATK {} DEF {}", d.name, d.atk, d.def))),
            list(dead)
        ),
        Action::Resolve(Resolve::Confirm {}) => "confirm the claimed undefended damage".into(),
        Action::Resolve(Resolve::Unmark { creatures }) => format!("unmarked: {}", list(creatures)),
    })
}

/// "Troll (ATK 5, DEF 5; Bloodlust of Alice (p1))".
fn creature(header: &Header, c: &CreatureSpec) -> String {
    let mut about = vec![];
    if let Some(atk) = c.atk {
        about.push(format!("ATK {atk}"));
    }
    if let Some(def) = c.def {
        about.push(format!("DEF {def}"));
    }
    let mut s = about.join(", ");
    if !c.enchantments.is_empty() {
        let each = c.enchantments.iter().map(|e| format!("{} of {}", e.card, header.name_of(&e.owner)));
        if !s.is_empty() {
            s += "; ";
        }
        s += &format!("enchanted: {}", list(each));
    }
    if s.is_empty() { c.name.clone() } else { format!("{} ({s})", c.name) }
}
