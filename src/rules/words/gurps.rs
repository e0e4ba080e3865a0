//! GURPS's actions in the GM's words: Basic Speed as the sheet writes it
//! (6.00, never quarter points), characters by name, the GM's rulings said
//! as rulings.

use serde::Deserialize;
use serde_json::Value;

use super::list;
use crate::event::Header;
use crate::rules::gurps::{Action, Announce, Combatant, Resolve, RollKind, State, maneuver_name};

pub fn words(_state: &State, header: &Header, action: &Value) -> Option<String> {
    let action = Action::deserialize(action).ok()?;
    Some(match action {
        Action::Announce(Announce::Combat { combatants }) => {
            let each: Vec<String> = combatants.iter().map(|c| combatant(header, c)).collect();
            format!("combat begins: {}", each.join("; "))
        }
        Action::Announce(Announce::Maneuver { maneuver }) => format!("maneuver {}", maneuver_name(maneuver)),
        Action::Announce(Announce::DropOut {}) => "the GM drops out of combat time".into(),
        Action::Announce(Announce::Resume {}) => "the GM resumes combat time".into(),
        Action::Announce(Announce::EndCombat {}) => "the GM ends combat".into(),
        Action::Pass {} => "pass".into(),
        Action::Resolve(Resolve::Tie { order, rolls }) => {
            let mut s = format!("tie order: {}", order.join(", "));
            if !rolls.is_empty() {
                s += &format!(" (rolls: {})", list(rolls.iter().map(|r| format!("{} {}", r.combatant, r.roll))));
            }
            s
        }
        Action::Resolve(Resolve::Roll { by, kind, roll, target, result, ruling }) => {
            let against = target.map(|t| format!(" against {t}")).unwrap_or_default();
            let mut s = format!("{by}'s {} roll {roll}{against}: {result}", roll_name(kind));
            // Gap 4: a roll the sequence would not allow, by the GM's ruling.
            if let Some(why) = ruling {
                s += &format!(", by the GM's ruling: {why}");
            }
            s
        }
        Action::Resolve(Resolve::Status { combatant, active: false, reason }) => {
            format!("{combatant} is out of action: {reason}")
        }
        Action::Resolve(Resolve::Status { combatant, active: true, reason }) => {
            format!("{combatant} is active again: {reason}")
        }
        Action::Resolve(Resolve::Determination { text }) => format!("the GM determines: {text}"),
    })
}

/// "Sir Roland (Alice (p1), party): Basic Speed 6.00, DX 12"; an NPC "(NPC, bandits)".
fn combatant(header: &Header, c: &Combatant) -> String {
    let who = match (&c.seat, c.pc) {
        (Some(seat), _) => header.name_of(seat),
        (None, true) => "PC".into(),
        (None, false) => "NPC".into(),
    };
    format!("{} ({who}, {}): Basic Speed {}, DX {}", c.name, c.side, basic_speed(c.speed_quarters), c.dx)
}

/// Quarter points as the sheet writes Basic Speed: 23 is "5.75".
pub fn basic_speed(quarters: i64) -> String {
    let sign = if quarters < 0 { "-" } else { "" };
    let q = quarters.unsigned_abs();
    format!("{sign}{}.{:02}", q / 4, (q % 4) * 25)
}

fn roll_name(kind: RollKind) -> &'static str {
    match kind {
        RollKind::Attack => "attack",
        RollKind::Feint => "feint",
        RollKind::ActiveDefense => "active defense",
        RollKind::Damage => "damage",
        RollKind::Other => "other",
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn basic_speed_reads_as_the_sheet_writes_it() {
        assert_eq!(super::basic_speed(24), "6.00");
        assert_eq!(super::basic_speed(23), "5.75");
        assert_eq!(super::basic_speed(22), "5.50");
    }
}
