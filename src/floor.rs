//! The floor: a game at a glance, as the head judge's floor page and the
//! index show it (`GET /api/games/{game}/summary`). Where it stands (the
//! step, who may act), whether it waits for a judge (a call no judge has
//! answered, a ruling the rules wait for) and since when, and its last
//! event, read from the game folded at its head and a few of its events.
//!
//! A call is a note whose text starts with
//! [`CALL`](crate::adjudication::CALL); it is answered by a judge's note or
//! ruling about the call itself ([`open_calls`]). That is all a call is:
//! the event format and the state need nothing new for it.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::adjudication::{NoteRecord, is_call};
use crate::event::{Event, Seat, format_time};
use crate::kernel::StepRef;
use crate::record::{RecordError, Recorder};
use crate::rules::Table;
use crate::store::Store;

/// A game at a glance, as the floor's cards and the index show it
/// (`GET /api/games/{game}/summary`): where it stands, who is to act,
/// whether it waits for a judge and since when, and its last event.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Summary {
    pub game: String,
    pub ruleset: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tournament: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub round: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table: Option<u64>,
    pub seats: Vec<Seat>,
    /// The judges as they stand (rulings may add judges).
    pub judges: Vec<String>,
    /// The head's seq.
    pub seq: u64,
    /// The step, in the text's words.
    #[schemars(with = "StepWords")]
    pub step: StepRef,
    /// Who may act now: seat ids and judges' names.
    pub may_act: Vec<String>,
    pub status: Status,
    /// The ruling the game waits for, if it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub awaiting_ruling: Option<Awaiting>,
    /// The calls no judge has answered yet, oldest first
    /// ([`open_calls`]).
    pub calls: Vec<Call>,
    /// The head event.
    pub last: Last,
    /// The server's clock when it answered, to measure waits against
    /// (a phone's own clock may be off).
    pub now: String,
}

/// What a step is called: `kernel::StepRef`, for the schema.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct StepWords {
    /// The step's number(s) in the text; empty between combats.
    number: String,
    /// The step's heading in the text.
    title: String,
    /// How to find it in the text.
    reference: String,
}

/// Where a game stands for the floor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// A call no judge has answered, or a ruling the game waits for.
    WaitingForAJudge,
    /// Someone may act.
    InProgress,
    /// No one may act and nothing waits for a ruling (a Riftbound victory).
    Over,
}

/// A pending ruling: what it is about, and the event since which the game
/// has waited (the last one that could change where the combat stands:
/// [`may_change_the_combat`]).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Awaiting {
    pub what: String,
    pub seq: u64,
    pub at: String,
}

/// A seat's (or judge's) call for a judge: the note's seq, time, author and
/// words, and the event it is about.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Call {
    pub seq: u64,
    pub at: String,
    pub by: String,
    pub text: String,
    pub concerns: u64,
}

/// An event in words (`rules::describe`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Last {
    pub seq: u64,
    pub at: String,
    pub actor: String,
    pub action: String,
}

/// The game at its head, at the server's time `now`.
pub fn summary(store: &dyn Store, game: &str, now: DateTime<Utc>) -> Result<Summary, RecordError> {
    let recorder = Recorder::load(store, game)?;
    let (table, head) = (recorder.table(), recorder.head());
    let view = table.view();
    let event = |seq: u64| -> Result<Event, RecordError> {
        store.get(game, seq)?.ok_or_else(|| RecordError::Io(format!("seq {seq} of {game} is missing")))
    };
    let calls = open_calls(table)
        .into_iter()
        .map(|n| {
            let at = event(n.seq)?.at;
            Ok(Call { seq: n.seq, at, by: n.by.clone(), text: n.text.clone(), concerns: n.concerns })
        })
        .collect::<Result<Vec<_>, RecordError>>()?;
    let awaiting_ruling = match view.awaiting_ruling {
        Some(what) => {
            let since = waiting_since(store, game, head.seq)?;
            Some(Awaiting { what, seq: since.seq, at: since.at })
        }
        None => None,
    };
    let status = if awaiting_ruling.is_some() || !calls.is_empty() {
        Status::WaitingForAJudge
    } else if view.may_act.is_empty() {
        Status::Over
    } else {
        Status::InProgress
    };
    let last = event(head.seq)?;
    let h = &table.header;
    Ok(Summary {
        game: game.to_string(),
        ruleset: h.ruleset.clone(),
        tournament: h.tournament.clone(),
        round: h.round,
        table: h.table,
        seats: h.seats.clone(),
        judges: h.judges.clone(),
        seq: head.seq,
        step: view.step,
        may_act: view.may_act,
        status,
        awaiting_ruling,
        calls,
        // In the board's words, said at the head (the state before it would
        // take a second fold; the words name cards and seats, which stand).
        last: Last {
            seq: last.seq,
            at: last.at,
            actor: last.actor,
            action: crate::rules::words::words((last.seq > 0).then_some(table), &last.action),
        },
        now: format_time(now),
    })
}

/// The last event up to `head` that could change where the combat stands:
/// read back from the head a page at a time (the notes and penalties after
/// it are few).
fn waiting_since(store: &dyn Store, game: &str, head: u64) -> Result<Event, RecordError> {
    const PAGE: u64 = 64;
    let mut end = head + 1;
    loop {
        let from = end.saturating_sub(PAGE);
        let mut found = None;
        for e in store.read(game, from)?.take((end - from) as usize) {
            let e = e?;
            if e.seq == 0 || may_change_the_combat(&e.action) {
                found = Some(e);
            }
        }
        if let Some(e) = found {
            return Ok(e);
        }
        end = from;
    }
}

/// The calls of a table no judge has answered yet, oldest first.
///
/// A call is a note [`is_call`]; it is answered by a judge's note or ruling
/// that concerns the call itself (`concerns.seq` is the call's seq): the
/// floor page's "answer" records such a note, and a judge on the CLI can
/// write `arbiter note GAME --concerns SEQ ...` or rule about it. A seat's
/// note about a call (a second word from the table) does not answer it.
/// Read from what the table keeps: notes stand across rewinds, and so do
/// rulings but a decision a later rewind took back, which then no longer
/// answers.
pub fn open_calls(table: &Table) -> Vec<&NoteRecord> {
    let header = &table.header;
    let answered = |seq: u64| {
        table.rulings.iter().any(|r| r.concerns == seq)
            || table.notes.iter().any(|n| n.concerns == seq && header.is_judge(&n.by))
    };
    table.notes.iter().filter(|n| is_call(&n.text) && !answered(n.seq)).collect()
}

/// Whether an action may change where the combat stands (the step, who may
/// act, a ruling awaited): anything but a note, a penalty or a judge added.
/// The floor dates a pending ruling from the last event that did.
pub fn may_change_the_combat(action: &Value) -> bool {
    match action.get("type").and_then(Value::as_str) {
        Some("note") => false,
        Some("ruling") => !matches!(action.get("kind").and_then(Value::as_str), Some("penalty" | "add_judge")),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adjudication::{Concerns, Ruling};
    use serde_json::json;

    fn table() -> Table {
        let header = serde_json::from_value(json!({"type": "open", "ruleset": "doomtrooper", "ruleset_version": 1,
            "seats": [{"id": "p1", "name": "Ann"}, {"id": "p2", "name": "Ben"}], "judges": ["Dana"]}))
        .unwrap();
        Table::open(&header).unwrap()
    }

    fn concerns(seq: u64) -> Concerns {
        Concerns { seq, hash: "0".repeat(64) }
    }

    #[test]
    fn a_call_stays_open_until_a_judge_notes_or_rules_about_it() {
        let t = table();
        // seq 1: a call about event 0; seq 2: a plain note; seq 3: another call.
        let t = t.note(1, "p1", 0, "call a judge: the counter came from the wrong zone").unwrap();
        let t = t.note(2, "p2", 0, "I agree").unwrap();
        let t = t.note(3, "p2", 0, "call a judge").unwrap();
        let open: Vec<u64> = open_calls(&t).iter().map(|n| n.seq).collect();
        assert_eq!(open, [1, 3]);
        // A seat's word about the call, or a judge's note about another event, answers nothing.
        let t = t.note(4, "p2", 1, "it did not").unwrap();
        let t = t.note(5, "Dana", 0, "seen").unwrap();
        assert_eq!(open_calls(&t).iter().map(|n| n.seq).collect::<Vec<_>>(), [1, 3]);
        // The judge's note about the call answers it.
        let t = t.note(6, "Dana", 1, "coming").unwrap();
        assert_eq!(open_calls(&t).iter().map(|n| n.seq).collect::<Vec<_>>(), [3]);
        // So does a ruling about it.
        let penalty = Ruling::Penalty {
            concerns: concerns(3),
            reason: "slow play".into(),
            rule: None,
            seat: "p2".into(),
            infraction: "slow play".into(),
            penalty: "warning".into(),
            fix: "none".into(),
        };
        let t = t.apply_ruling(7, "Dana", &penalty).unwrap();
        assert!(open_calls(&t).is_empty());
    }

    #[test]
    fn notes_penalties_and_judges_added_leave_the_combat_where_it_was() {
        assert!(!may_change_the_combat(&json!({"type": "note"})));
        assert!(!may_change_the_combat(&json!({"type": "ruling", "kind": "penalty"})));
        assert!(!may_change_the_combat(&json!({"type": "ruling", "kind": "add_judge"})));
        assert!(may_change_the_combat(&json!({"type": "ruling", "kind": "decide"})));
        assert!(may_change_the_combat(&json!({"type": "ruling", "kind": "rewind"})));
        assert!(may_change_the_combat(&json!({"type": "pass"})));
    }
}
