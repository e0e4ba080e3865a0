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

use crate::event::{Header, check_name};
use crate::kernel::{Choice, Entry, EntryKind, Move, Pick};

/// A note whose text starts with these words calls a judge to the table
/// (the table page's "Call a judge" button writes `call a judge` or `call
/// a judge: WHAT HAPPENED`, about the last event). A note is not addressed
/// to anyone in the event format; these words are how a call is told from
/// any other note, also by a seat on the CLI.
pub const CALL: &str = "call a judge";

/// Whether a note's text calls a judge (see [`CALL`]).
pub fn is_call(text: &str) -> bool {
    text.strip_prefix(CALL).is_some_and(|rest| rest.is_empty() || rest.starts_with(':'))
}

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

/// The adjudication's moves at a point of the game whose next event is
/// `next_seq`, added to the ruleset's own (`moves`): every judge may rewind,
/// penalise a seat and add a judge; while the game waits for a ruling, each
/// judge's move of the ruleset is offered as a `decide` too; every seat and
/// judge may note an earlier event. A ruling names the event it concerns
/// (`{"seq", "hash"}`, entered: the recorder fills the hash in from the seq).
/// `awaiting_ruling`: whether the game waits for a judge's ruling now.
pub fn moves(header: &Header, awaiting_ruling: bool, next_seq: u64, moves: &mut Vec<Move>) {
    use serde_json::json;
    // Event 0 is always there: the moves follow some event.
    let last = i64::try_from(next_seq.max(1)).unwrap_or(i64::MAX) - 1;
    let concerns = |label: &str, max: i64| Entry::number("concerns", EntryKind::Event, label, Some(0), Some(max));
    let reason = || Entry::new("reason", EntryKind::Text, "the reason");
    let rule = || Entry::new("rule", EntryKind::Text, "the rule cited").optional();
    let decisions: Vec<Move> = match awaiting_ruling {
        true => moves.iter().filter(|m| header.is_judge(&m.seat)).map(decide).collect(),
        false => vec![],
    };
    moves.extend(decisions.into_iter().map(|m| m.entering(concerns("the event the decision answers", last))));
    for judge in &header.judges {
        // A rewind takes back at least one event (fold.rs): it names one before the last.
        if last >= 1 {
            moves.push(
                Move::new(judge, "rewind", json!({"type": "ruling", "kind": "rewind"}))
                    .entering(concerns("the event to return to", last - 1))
                    .entering(reason())
                    .entering(rule()),
            );
        }
        let seats = header.seats.iter().map(|s| Pick::new(s.id.clone(), header.name_of(&s.id))).collect();
        moves.push(
            Move::new(judge, "penalty", json!({"type": "ruling", "kind": "penalty"}))
                .entering(concerns("the event it concerns", last))
                .choosing(Choice::one("seat", seats))
                .entering(Entry::new("infraction", EntryKind::Text, "the infraction"))
                .entering(Entry::new("penalty", EntryKind::Text, "the penalty"))
                .entering(Entry::new("fix", EntryKind::Text, "the fix"))
                .entering(reason())
                .entering(rule()),
        );
        moves.push(
            Move::new(judge, "add judge", json!({"type": "ruling", "kind": "add_judge"}))
                .entering(concerns("the event it concerns", last))
                .entering(Entry::new("judge", EntryKind::Name, "the judge's name"))
                .entering(reason())
                .entering(rule()),
        );
    }
    for actor in header.seats.iter().map(|s| &s.id).chain(&header.judges) {
        moves.push(
            Move::new(actor, "note", json!({"type": "note"}))
                .entering(concerns("the event it is about", last))
                .entering(Entry::new("text", EntryKind::Text, "the note")),
        );
    }
}

/// A judge's move of the ruleset as a `decide` ruling: its action becomes
/// the decision, its fields move under `decision/`.
fn decide(m: &Move) -> Move {
    use serde_json::json;
    let under = |field: &str| if field.is_empty() { "decision".to_string() } else { format!("decision/{field}") };
    Move {
        seat: m.seat.clone(),
        kind: crate::event::ActionType::Ruling,
        label: format!("decide: {}", m.label),
        action: json!({"type": "ruling", "kind": "decide", "decision": m.action}),
        choose: m.choose.iter().map(|c| Choice { field: under(&c.field), ..c.clone() }).collect(),
        enter: m
            .enter
            .iter()
            .map(|e| Entry { field: under(&e.field), ..e.clone() })
            .chain([
                Entry::new("reason", EntryKind::Text, "the reason"),
                Entry::new("rule", EntryKind::Text, "the rule cited").optional(),
            ])
            .collect(),
    }
}

#[cfg(test)]
mod call_tests {
    #[test]
    fn a_call_is_a_note_that_starts_with_the_words() {
        assert!(super::is_call("call a judge"));
        assert!(super::is_call("call a judge: Bloodlust was not counted"));
        assert!(!super::is_call("call a judged"));
        assert!(!super::is_call("I will call a judge"));
    }
}
