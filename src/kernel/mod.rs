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
//! - [`Move`]: one thing an actor may record now, with what it chooses and
//!   enters; each ruleset generates its moves from its state.
//! - [`View`]: what the kernel tells about any point of a game: the step and
//!   its reference in the rules text, who may act, which action types are legal.
//!
//! Everything here is pure: no I/O, no clock, no randomness.

mod chain;
mod ledger;
pub mod moves;
mod window;

pub use chain::{Chain, ChainItem};
pub use ledger::{Effect, Ledger};
pub use moves::{Choice, Entry, EntryKind, Move, Pick};
pub use window::Window;

use std::collections::BTreeMap;

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
#[error("refused at {}: {message}. Rule: {rule}. {}", step.reference, may_act_sentence(self.may_act_by_name()))]
pub struct Violation {
    pub step: StepRef,
    /// The rule, in the text's words where it has them.
    pub rule: String,
    pub message: String,
    pub may_act: Vec<String>,
    /// What the actor refused may record now, in words (its moves of the
    /// combat, `moves::move_words`): filled in on the append path, where a
    /// refusal is shown to the table; empty elsewhere.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub offered: Vec<String>,
    /// `may_act` by name ("Alice (p1)"), for the text a person reads;
    /// filled in where the header is known (`Table::named`), else empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub may_act_names: Vec<String>,
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
        Violation {
            step: view.step.clone(),
            rule: rule.into(),
            message: message.into(),
            may_act: view.may_act.clone(),
            offered: vec![],
            may_act_names: vec![],
        }
    }

    /// Who may act, by name where the names are known, else by id.
    pub fn may_act_by_name(&self) -> &[String] {
        if self.may_act_names.is_empty() { &self.may_act } else { &self.may_act_names }
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
    view: impl Fn(&S) -> View,
    ruleset: &str,
    action: &Value,
    step: impl FnOnce(&mut S, &A) -> Result<(), Refusal>,
) -> Result<S, Violation> {
    let action = payload(state, &view, ruleset, action)?;
    let mut next = state.clone();
    // The copy takes the step: the state a refusal names is the one before.
    match step(&mut next, &action) {
        Ok(()) => Ok(next),
        Err((rule, message)) => Err(Violation::new(&view(state), rule, message)),
    }
}

/// [`apply`] on the state itself, for a ruleset whose steps check
/// everything before they change anything: a refusal leaves the state as it
/// was (debug builds assert it), and an accepted action copies nothing.
/// The view is built only for a refusal, from the unchanged state.
pub fn apply_in_place<S: Clone + PartialEq + std::fmt::Debug, A: DeserializeOwned>(
    state: &mut S,
    view: impl Fn(&S) -> View,
    ruleset: &str,
    action: &Value,
    step: impl FnOnce(&mut S, &A) -> Result<(), Refusal>,
) -> Result<(), Violation> {
    in_place(state, view, ruleset, action, step, |_| (), |_, ()| {})
}

/// A state whose growing histories only ever grow at their end: no step
/// removes or changes an entry of one. A step on such a state can be undone
/// by putting back a copy of the rest (small: what the game is doing now)
/// and cutting each history back to the length it had.
pub trait Undo {
    /// What undoes one step: the rest of the state and the histories' lengths.
    type Mark;
    fn mark(&self) -> Self::Mark;
    fn undo(&mut self, mark: Self::Mark);
}

/// [`apply`] on the state itself, for a ruleset whose steps may change the
/// state before they refuse: the step runs in place after a [`Undo::mark`],
/// and a refusal is undone from it, so a refusal leaves the state as it was
/// (debug builds assert it) and an accepted action copies only the small
/// rest of the state, never its histories. The view is built only for a
/// refusal, from the state as it was.
pub fn apply_undoable<S: Undo + Clone + PartialEq + std::fmt::Debug, A: DeserializeOwned>(
    state: &mut S,
    view: impl Fn(&S) -> View,
    ruleset: &str,
    action: &Value,
    step: impl FnOnce(&mut S, &A) -> Result<(), Refusal>,
) -> Result<(), Violation> {
    in_place(state, view, ruleset, action, step, S::mark, S::undo)
}

/// A step on the state itself: `mark` before it, `undo` after a refusal
/// (nothing to undo for a ruleset whose steps refuse before they change).
fn in_place<S: Clone + PartialEq + std::fmt::Debug, A: DeserializeOwned, M>(
    state: &mut S,
    view: impl Fn(&S) -> View,
    ruleset: &str,
    action: &Value,
    step: impl FnOnce(&mut S, &A) -> Result<(), Refusal>,
    mark: impl FnOnce(&S) -> M,
    undo: impl FnOnce(&mut S, M),
) -> Result<(), Violation> {
    let action = payload(state, &view, ruleset, action)?;
    #[cfg(debug_assertions)]
    let before = state.clone();
    let marked = mark(state);
    match step(state, &action) {
        Ok(()) => Ok(()),
        Err((rule, message)) => {
            undo(state, marked);
            #[cfg(debug_assertions)]
            assert_eq!(*state, before, "a refused {ruleset} action left another state");
            Err(Violation::new(&view(state), rule, message))
        }
    }
}

/// Each pile's length, for [`Undo::mark`].
pub fn pile_lengths<T>(piles: &BTreeMap<String, Vec<T>>) -> BTreeMap<String, usize> {
    piles.iter().map(|(k, v)| (k.clone(), v.len())).collect()
}

/// Cuts each pile back to its length in `lengths`, and drops the piles a
/// step added, for [`Undo::undo`].
pub fn cut_piles<T>(piles: &mut BTreeMap<String, Vec<T>>, lengths: &BTreeMap<String, usize>) {
    piles.retain(|k, v| lengths.get(k).map(|&n| v.truncate(n)).is_some());
}

/// The action as the ruleset's payload type, read from the event's JSON by
/// reference (the payload copies only the strings it keeps).
fn payload<S, A: DeserializeOwned>(
    state: &S,
    view: impl FnOnce(&S) -> View,
    ruleset: &str,
    action: &Value,
) -> Result<A, Violation> {
    A::deserialize(action).map_err(|e| {
        Violation::new(
            &view(state),
            format!("the payloads in schemas/{ruleset}/action.schema.json"),
            format!("not a {ruleset} action: {e}"),
        )
    })
}

/// A growing list as a replay shows it: how many, and the newest.
pub fn tail<T: Serialize>(list: &[T]) -> Tail<'_, T> {
    Tail { count: list.len(), last: list.last() }
}

/// [`tail`]'s answer, serialised as `{"count": n, "last": ...}`.
#[derive(PartialEq, Serialize)]
pub struct Tail<'a, T> {
    pub count: usize,
    pub last: Option<&'a T>,
}
