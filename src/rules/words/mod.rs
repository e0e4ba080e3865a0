//! Each event's action in the board's words, for `replay`, `log` and the
//! replay page: "Max Steiner unharmed, Legionnaire Sergeant killed;
//! counted: Combat Drugs (seq 50)", not the payload's `key=value` pairs.
//!
//! Each ruleset says its own actions ([`crate::rules::Ruleset::words`],
//! one module here per ruleset), with the seats' names from the header and
//! the state before the event (a counted seq is named by its card); the
//! adjudication (rulings, notes) and the header are said here; anything
//! else falls back to [`describe`]. Pure functions of the action and the
//! state before it: nothing here changes a state.

pub(crate) mod doomtrooper;
pub(crate) mod gurps;
pub(crate) mod rawdeal;
pub(crate) mod riftbound;
pub(crate) mod wtactics;

use serde_json::Value;

use super::{Table, describe};
use crate::event::{ActionType, Header};

/// `action` in words, made at `before` (None for event 0, the header).
pub fn words(before: Option<&Table>, action: &Value) -> String {
    let kind = action.get("type").and_then(Value::as_str).and_then(ActionType::parse);
    match (kind, before) {
        (Some(ActionType::Pass), _) => "pass".into(),
        (Some(ActionType::Open), _) => match serde_json::from_value::<Header>(action.clone()) {
            Ok(header) => open(&header),
            Err(_) => describe(action),
        },
        (Some(ActionType::Ruling), Some(table)) => ruling(table, action).unwrap_or_else(|| describe(action)),
        (Some(ActionType::Note), Some(_)) => note(action).unwrap_or_else(|| describe(action)),
        (_, Some(table)) => table.state.words(&table.header, action).unwrap_or_else(|| describe(action)),
        (_, None) => describe(action),
    }
}

/// The header: "Doomtrooper v1, Luna City Open round 3 table 12; seats
/// Alice (p1), Bob (p2); judges Dana".
pub fn open(header: &Header) -> String {
    let title = super::Kind::named(&header.ruleset).map_or(header.ruleset.as_str(), |k| k.title());
    let mut s = format!("open {title} v{}", header.ruleset_version);
    let mut at = vec![];
    if let Some(t) = &header.tournament {
        at.push(t.clone());
    }
    if let Some(r) = header.round {
        at.push(format!("round {r}"));
    }
    if let Some(t) = header.table {
        at.push(format!("table {t}"));
    }
    if !at.is_empty() {
        s += &format!(", {}", at.join(" "));
    }
    let seats: Vec<String> = header.seats.iter().map(|seat| header.name_of(&seat.id)).collect();
    s += &format!("; seats {}", seats.join(", "));
    if !header.judges.is_empty() {
        s += &format!("; judges {}", header.judges.join(", "));
    }
    if !header.options.is_empty() {
        let options: Vec<String> = header.options.iter().map(|(k, v)| format!("{k} {}", plain(v))).collect();
        s += &format!("; options: {}", options.join(", "));
    }
    s
}

/// A judge's ruling, saying what it rules: "rewind to seq 6: why",
/// "decide on seq 12: <the decision in the ruleset's words>: why".
fn ruling(table: &Table, action: &Value) -> Option<String> {
    let concerns = action.get("concerns")?.get("seq")?.as_u64()?;
    let reason = action.get("reason")?.as_str()?;
    let what = match action.get("kind")?.as_str()? {
        "rewind" => format!("rewind to seq {concerns}"),
        "decide" => {
            let decision = action.get("decision")?;
            let words = table.state.words(&table.header, decision).unwrap_or_else(|| describe(decision));
            format!("decide on seq {concerns}: {words}")
        }
        "penalty" => format!(
            "penalty against {}: {} for {} (fix: {})",
            table.header.name_of(action.get("seat")?.as_str()?),
            action.get("penalty")?.as_str()?,
            action.get("infraction")?.as_str()?,
            action.get("fix")?.as_str()?
        ),
        "add_judge" => format!("add judge {}", action.get("judge")?.as_str()?),
        _ => return None,
    };
    let rule = action.get("rule").and_then(Value::as_str).map(|r| format!(" ({r})")).unwrap_or_default();
    Some(format!("{what}: {reason}{rule}"))
}

/// "note on seq 3: the text".
fn note(action: &Value) -> Option<String> {
    let concerns = action.get("concerns")?.get("seq")?.as_u64()?;
    Some(format!("note on seq {concerns}: {}", action.get("text")?.as_str()?))
}

/// A header option's value: a list joined with commas.
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(plain).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

/// "Max Steiner, Legionnaire" or "none".
fn list(items: impl IntoIterator<Item = String>) -> String {
    let items: Vec<String> = items.into_iter().collect();
    if items.is_empty() { "none".into() } else { items.join(", ") }
}
