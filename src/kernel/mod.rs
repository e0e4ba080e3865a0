//! The rules kernel: the machinery every ruleset's procedure is made of,
//! written once.
//!
//! - [`Window`]: a window of priority. Players in a given order may act or
//!   pass; it closes when every eligible player has passed in a row, and any
//!   play restarts the round (Doomtrooper "continue until all players
//!   pass", WTactics response phases, Riftbound's showdown focus, Raw
//!   Deal's reversal opportunities).
//! - [`Ledger`]: card effects played, and counters that nullify them;
//!   counters can themselves be countered, to any depth. Whether an effect
//!   still stands is computed from the record, never stored.
//! - [`Chain`]: items that resolve newest first (Riftbound's Chain).
//! - [`Violation`]: why an action is refused, naming the step, the rule and
//!   who may act.
//! - [`View`]: what the kernel tells about any point of a game: the step and
//!   its reference in the rules text, who may act, which action types are legal.
//!
//! Everything here is pure: no I/O, no clock, no randomness.

mod chain;
mod ledger;
mod window;

pub use chain::{Chain, ChainItem};
pub use ledger::{Effect, Ledger};
pub use window::Window;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::ActionType;

/// Where a game is in its procedure, as a judge would say it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepRef {
    /// Step number(s) in the text, e.g. "13" or "12-15"; empty between combats.
    pub number: String,
    /// The heading of the step in the text, e.g. "CHANGE COMBATANTS".
    pub title: String,
    /// How to find it in the text, e.g. "Doomtrooper steps 12-15".
    pub reference: String,
}

/// The kernel's answer to "where are we and who may act?".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct View {
    pub step: StepRef,
    /// Actors who may append the next event (seat ids, judge names).
    pub may_act: Vec<String>,
    /// Action types that can be legal now.
    pub legal: Vec<ActionType>,
    /// Set when the text is silent and the game waits for a judge's ruling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub awaiting_ruling: Option<String>,
}

/// Why an action was refused. Nothing was stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("refused at {}: {message}. Rule: {rule}. {}", step.reference, may_act_sentence(may_act))]
pub struct Violation {
    pub step: StepRef,
    /// The rule, in the text's words where it has them.
    pub rule: String,
    pub message: String,
    pub may_act: Vec<String>,
}

fn may_act_sentence(may_act: &[String]) -> String {
    if may_act.is_empty() {
        "No one may act here.".to_string()
    } else {
        format!("May act now: {}.", may_act.join(", "))
    }
}

impl Violation {
    pub fn new(view: &View, rule: impl Into<String>, message: impl Into<String>) -> Violation {
        Violation { step: view.step.clone(), rule: rule.into(), message: message.into(), may_act: view.may_act.clone() }
    }
}

/// A ruleset's refusal before the kernel dresses it as a [`Violation`]:
/// the rule (in the text's words) and what is wrong.
pub type Refusal = (&'static str, String);

pub fn refuse<T>(rule: &'static str, message: impl Into<String>) -> Result<T, Refusal> {
    Err((rule, message.into()))
}

/// The shape of every ruleset's reducer: parse the action into the
/// ruleset's own payload type `A`, apply it to a copy of the state, and on
/// refusal name the step and who may act as they were before the action.
pub fn apply<S: Clone, A: DeserializeOwned>(
    state: &S,
    view: impl FnOnce(&S) -> View,
    ruleset: &str,
    action: &Value,
    step: impl FnOnce(&mut S, &A) -> Result<(), Refusal>,
) -> Result<S, Violation> {
    let view = view(state);
    let action: A = serde_json::from_value(action.clone()).map_err(|e| {
        Violation::new(
            &view,
            format!("the payloads in schemas/{ruleset}/action.schema.json"),
            format!("not a {ruleset} action: {e}"),
        )
    })?;
    let mut next = state.clone();
    step(&mut next, &action).map_err(|(rule, message)| Violation::new(&view, rule, message))?;
    Ok(next)
}

/// A growing list as a replay shows it: how many, and the newest.
pub fn tail<T: Serialize>(list: &[T]) -> Value {
    serde_json::json!({"count": list.len(), "last": list.last()})
}
