//! Judges' rulings and notes: events about other events.
//!
//! Every ruling names the event it concerns by seq and hash, gives a reason
//! and may cite a rule. Only a judge named in the header (or added by a
//! later ruling) may rule; anyone at the table may add a note. Rulings never
//! change or remove an event: a `rewind` returns the combat to the state
//! after an earlier event and marks the events since as rewound (they stay
//! in the log); a `decide` answers a state that waits for a judge; a
//! `penalty` is kept in the record; `add_judge` adds a judge. A `note`
//! changes nothing.
//!
//! The hash check and the rewind need the events before this one, so they
//! live in the fold ([`crate::fold`]); the checks that need only the state
//! live here.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::check_name;

/// `{"type":"ruling", ...}` or `{"type":"note", ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Adjudication {
    Ruling(Ruling),
    /// Any seat or judge annotates an event; the state does not change.
    Note {
        concerns: Concerns,
        text: String,
    },
}

/// The event a ruling or note is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Concerns {
    pub seq: u64,
    #[schemars(regex(pattern = "^[0-9a-f]{64}$"))]
    pub hash: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Ruling {
    /// The combat returns to the state after `concerns`; later events stay in the log, rewound.
    Rewind {
        concerns: Concerns,
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rule: Option<String>,
    },
    /// Answers a state that waits for a ruling: `decision` is the ruleset's action, made by the judge.
    Decide {
        concerns: Concerns,
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rule: Option<String>,
        decision: Value,
    },
    /// Infraction, penalty and fix against a seat.
    Penalty {
        concerns: Concerns,
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rule: Option<String>,
        seat: String,
        infraction: String,
        penalty: String,
        fix: String,
    },
    /// Adds a judge to the game.
    AddJudge {
        concerns: Concerns,
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rule: Option<String>,
        judge: String,
    },
}

impl Ruling {
    pub fn concerns(&self) -> &Concerns {
        match self {
            Ruling::Rewind { concerns, .. }
            | Ruling::Decide { concerns, .. }
            | Ruling::Penalty { concerns, .. }
            | Ruling::AddJudge { concerns, .. } => concerns,
        }
    }

    fn reason(&self) -> &str {
        match self {
            Ruling::Rewind { reason, .. }
            | Ruling::Decide { reason, .. }
            | Ruling::Penalty { reason, .. }
            | Ruling::AddJudge { reason, .. } => reason,
        }
    }

    /// The ruling's own fields are complete (names, reason).
    pub fn check(&self) -> Result<(), String> {
        check_name("reason", self.reason())?;
        match self {
            Ruling::Penalty { seat, infraction, penalty, fix, .. } => {
                check_name("seat", seat)?;
                check_name("infraction", infraction)?;
                check_name("penalty", penalty)?;
                check_name("fix", fix)
            }
            Ruling::AddJudge { judge, .. } => check_name("judge", judge),
            Ruling::Decide { decision, .. } if !decision.is_object() => {
                Err("a decision is the ruleset's action, a JSON object".into())
            }
            _ => Ok(()),
        }
    }
}

impl Adjudication {
    pub fn concerns(&self) -> &Concerns {
        match self {
            Adjudication::Ruling(r) => r.concerns(),
            Adjudication::Note { concerns, .. } => concerns,
        }
    }
}

/// A note as the state keeps it (notes change nothing else).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoteRecord {
    pub seq: u64,
    pub by: String,
    pub concerns: u64,
    pub text: String,
}

/// A ruling as the state keeps it, for `state` to list the rulings that
/// stand. (A penalty's own details are in `PenaltyRecord`.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RulingRecord {
    pub seq: u64,
    pub judge: String,
    /// "rewind", "decide", "penalty" or "add_judge".
    pub kind: String,
    pub concerns: u64,
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

impl RulingRecord {
    pub fn new(seq: u64, judge: &str, ruling: &Ruling) -> RulingRecord {
        let (kind, reason, rule) = match ruling {
            Ruling::Rewind { reason, rule, .. } => ("rewind", reason, rule),
            Ruling::Decide { reason, rule, .. } => ("decide", reason, rule),
            Ruling::Penalty { reason, rule, .. } => ("penalty", reason, rule),
            Ruling::AddJudge { reason, rule, .. } => ("add_judge", reason, rule),
        };
        RulingRecord {
            seq,
            judge: judge.to_string(),
            kind: kind.into(),
            concerns: ruling.concerns().seq,
            reason: reason.clone(),
            rule: rule.clone(),
        }
    }
}

/// A penalty as the state keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PenaltyRecord {
    pub seq: u64,
    pub judge: String,
    pub seat: String,
    pub concerns: u64,
    pub infraction: String,
    pub penalty: String,
    pub fix: String,
}
