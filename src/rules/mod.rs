//! The rulesets, dispatched by one enum, and the fold that drives them.
//!
//! A ruleset is a pure reducer: `(state, event) -> new state | Violation`.
//! [`Table`] holds the header and the ruleset's state; [`Table::apply`]
//! does the checks every ruleset shares (the actor is a seat or judge, the
//! action type is known, `open` only at seq 0) and hands the rest to the
//! ruleset's own step script.

pub mod doomtrooper;
pub mod gurps;
pub mod rawdeal;
pub mod riftbound;
pub mod wtactics;

use serde::Serialize;
use serde_json::Value;

use crate::event::{ActionType, Event, Header};
use crate::kernel::{StepRef, View, Violation};

/// Ruleset names and the versions this build knows.
pub const RULESETS: &[(&str, u64)] = &[
    (doomtrooper::NAME, doomtrooper::VERSION),
    (wtactics::NAME, wtactics::VERSION),
    (riftbound::NAME, riftbound::VERSION),
    (rawdeal::NAME, rawdeal::VERSION),
    (gurps::NAME, gurps::VERSION),
];

/// Each ruleset's state, one variant per ruleset.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum RulesetState {
    Doomtrooper(doomtrooper::State),
    Wtactics(wtactics::State),
    Riftbound(riftbound::State),
    Rawdeal(rawdeal::State),
    Gurps(gurps::State),
}

/// A game's state after some prefix of its stream.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Table {
    pub header: Header,
    pub state: RulesetState,
}

impl Table {
    /// The state after event 0.
    pub fn open(header: &Header) -> Result<Table, Violation> {
        let refuse = |message: String| Violation {
            step: StepRef { number: "0".into(), title: "open".into(), reference: "event 0 (the header)".into() },
            rule: "event 0 holds the header".into(),
            message,
            may_act: vec![],
        };
        header.check().map_err(refuse)?;
        let state = match (header.ruleset.as_str(), header.ruleset_version) {
            (doomtrooper::NAME, doomtrooper::VERSION) => {
                RulesetState::Doomtrooper(doomtrooper::open(header).map_err(refuse)?)
            }
            (wtactics::NAME, wtactics::VERSION) => RulesetState::Wtactics(wtactics::open(header).map_err(refuse)?),
            (riftbound::NAME, riftbound::VERSION) => RulesetState::Riftbound(riftbound::open(header).map_err(refuse)?),
            (rawdeal::NAME, rawdeal::VERSION) => RulesetState::Rawdeal(rawdeal::open(header).map_err(refuse)?),
            (gurps::NAME, gurps::VERSION) => RulesetState::Gurps(gurps::open(header).map_err(refuse)?),
            (name, version) => {
                let known: Vec<String> = RULESETS.iter().map(|(n, v)| format!("{n} v{v}")).collect();
                return Err(refuse(format!(
                    "unknown ruleset {name} v{version}; this arbiter knows {}",
                    known.join(", ")
                )));
            }
        };
        Ok(Table { header: header.clone(), state })
    }

    /// The state after event `seq` by `actor`, or why it is illegal.
    pub fn apply(&self, seq: u64, actor: &str, action: &Value) -> Result<Table, Violation> {
        let view = self.view();
        if !self.header.is_seat(actor) && !self.header.is_judge(actor) {
            let mut known = self.header.seat_ids();
            known.extend(self.header.judges.iter().cloned());
            return Err(Violation::new(
                &view,
                "every actor is a seat or a judge of the header",
                format!("unknown actor {actor:?}; the seats and judges are {}", known.join(", ")),
            ));
        }
        let kind = action.get("type").and_then(Value::as_str).unwrap_or_default();
        match ActionType::parse(kind) {
            None => {
                let names: Vec<_> = ActionType::ALL.iter().map(|t| t.name()).collect();
                return Err(Violation::new(
                    &view,
                    "the kernel's action types",
                    format!("unknown action type {kind:?}; the types are {}", names.join(", ")),
                ));
            }
            Some(ActionType::Open) => {
                return Err(Violation::new(&view, "event 0 holds the header", "a game is opened once, at seq 0"));
            }
            Some(_) => {}
        }
        let state = match &self.state {
            RulesetState::Doomtrooper(s) => RulesetState::Doomtrooper(s.apply(seq, actor, action)?),
            RulesetState::Wtactics(s) => RulesetState::Wtactics(s.apply(seq, actor, action)?),
            RulesetState::Riftbound(s) => RulesetState::Riftbound(s.apply(seq, actor, action)?),
            RulesetState::Rawdeal(s) => RulesetState::Rawdeal(s.apply(seq, actor, action)?),
            RulesetState::Gurps(s) => RulesetState::Gurps(s.apply(seq, actor, action)?),
        };
        Ok(Table { header: self.header.clone(), state })
    }

    pub fn view(&self) -> View {
        match &self.state {
            RulesetState::Doomtrooper(s) => s.view(),
            RulesetState::Wtactics(s) => s.view(),
            RulesetState::Riftbound(s) => s.view(),
            RulesetState::Rawdeal(s) => s.view(),
            RulesetState::Gurps(s) => s.view(),
        }
    }
}

/// Folds a stream from event 0: each event must be legal where it stands.
/// `f` sees every event with the state after it.
pub fn fold<'e>(
    events: impl IntoIterator<Item = &'e Event>,
    mut f: impl FnMut(&Event, &Table),
) -> Result<Option<Table>, (u64, Violation)> {
    let mut table: Option<Table> = None;
    for event in events {
        let next = step(table.as_ref(), event).map_err(|v| (event.seq, v))?;
        f(event, &next);
        table = Some(next);
    }
    Ok(table)
}

/// Applies one event to the state before it (None: before event 0).
pub fn step(table: Option<&Table>, event: &Event) -> Result<Table, Violation> {
    match table {
        None => {
            let header: Header = serde_json::from_value(event.action.clone()).map_err(|e| Violation {
                step: StepRef { number: "0".into(), title: "open".into(), reference: "event 0 (the header)".into() },
                rule: "event 0 is {\"type\":\"open\", ...} with the header (schemas/open.schema.json)".into(),
                message: format!("not a valid header: {e}"),
                may_act: vec![],
            })?;
            Table::open(&header)
        }
        Some(t) => t.apply(event.seq, &event.actor, &event.action),
    }
}

/// An action in plain words: its type, then its fields, e.g.
/// `counter Smoke Bomb -> seq 12` or `announce combat defending_player=p2 attacker=...`.
pub fn describe(action: &Value) -> String {
    let Some(map) = action.as_object() else {
        return action.to_string();
    };
    let mut words = vec![map.get("type").and_then(Value::as_str).unwrap_or("?").to_string()];
    for tag in ["what", "effect"] {
        if let Some(Value::String(s)) = map.get(tag) {
            words.push(s.clone());
        }
    }
    if let Some(Value::String(card)) = map.get("card") {
        words.push(format!("\"{card}\""));
    }
    if let Some(target) = map.get("target") {
        words.push(format!("-> seq {target}"));
    }
    for (k, v) in map {
        if !["type", "what", "effect", "card", "target"].contains(&k.as_str()) {
            let v = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            words.push(format!("{k}={v}"));
        }
    }
    words.join(" ")
}
