//! Replay: each event of a record in plain words, with the step before and
//! after it and what it changed in the state, rulings and notes inline,
//! rewound events marked. Two streaming passes (one to learn which events
//! later rulings rewound, one to show them), each from the nearest
//! snapshot: memory is one state, whatever the length.

use serde::Serialize;

use crate::delta::{self, Change, Doc};
use crate::event::{ActionType, Event};
use crate::fold::{FoldError, Folder, Source};
use crate::kernel::StepRef;
use crate::record::{RecordError, verify, verify_from};
use crate::rules::describe;

#[derive(Debug, Clone, Serialize)]
pub struct Shown {
    pub seq: u64,
    pub at: String,
    pub actor: String,
    /// The actor by name ("Alice (p1)"); a judge as named.
    pub by: String,
    /// "action", "pass", "ruling" or "note".
    pub kind: &'static str,
    /// The action in plain words.
    pub action: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<StepRef>,
    pub after: StepRef,
    /// What the ruleset recorded in words for this event (a score, a final
    /// point drawn as a card instead): see `Table::said`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub recorded: Vec<String>,
    /// What changed in the state (outcome first), as paths for tools.
    pub changes: Vec<Change>,
    /// What changed, in the board's words, for people (absent for a ruleset
    /// without a board yet: `changes` says it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub said: Option<Vec<String>>,
    /// A later ruling rewound this event: it stays in the log but no longer counts.
    pub rewound: bool,
}

/// Calls `show` for every event with `from <= seq <= to`; returns the seq
/// ranges judges' rewinds took back (as `verify` says them).
///
/// Which events later rulings rewound is known from the fold at the head:
/// from the latest snapshot (the events after it read, hashed, linked and
/// folded), or, for a source without snapshots (an export file), from a
/// full verification. The events shown are folded from the nearest
/// snapshot before `from`. Each state's JSON and board are built once: the
/// state after one event is the state before the next.
pub fn replay<S>(
    source: &S,
    from: u64,
    to: Option<u64>,
    mut show: impl FnMut(Shown),
) -> Result<Vec<(u64, u64)>, RecordError>
where
    S: Source + ?Sized,
    S::Error: Into<RecordError>,
{
    let (_, at_head) = match source.snapshot(u64::MAX) {
        Some((folder, link)) => verify_from(source, folder, Some(link), None)?,
        None => verify(source, None)?,
    };
    let mut folder = match from.checked_sub(1).and_then(|seq| source.snapshot(seq)) {
        Some((folder, _)) => folder,
        None => Folder::new(),
    };
    // What the state before the next event looks like: built once per event.
    let mut before: Option<Before> = None;
    // The text buffer of the state before last, written over next.
    let mut spare = Doc::default();
    for event in source.events_from(folder.len()) {
        let event = event.map_err(Into::into)?;
        if to.is_some_and(|t| event.seq > t) {
            break;
        }
        let shown = event.seq >= from;
        if shown && before.is_none() {
            before = folder.table().map(|t| Before::of(t, Doc::default()));
        }
        folder.push(&event, source).map_err(broken)?;
        if !shown {
            continue;
        }
        let after = Before::of(folder.table().expect("state"), std::mem::take(&mut spare));
        let (changes, said, before_step) = match before.take() {
            Some(b) => {
                let said = match (&b.board, &after.board) {
                    (Some(b), Some(a)) => Some(a.changes_since(b)),
                    _ => None,
                };
                let changes = delta::diff_docs(&b.live, &after.live);
                spare = b.live;
                (changes, said, Some(b.step))
            }
            None => (vec![], None, None),
        };
        let table = folder.table().expect("state");
        let kind = match event.action_type() {
            Some(ActionType::Ruling) => "ruling",
            Some(ActionType::Note) => "note",
            Some(ActionType::Pass) => "pass",
            _ => "action",
        };
        show(Shown {
            seq: event.seq,
            at: event.at.clone(),
            actor: event.actor.clone(),
            by: table.header.name_of(&event.actor),
            kind,
            action: describe(&event.action),
            before: before_step,
            after: after.step.clone(),
            recorded: table.said(event.seq),
            changes,
            said,
            rewound: at_head.is_rewound(event.seq),
        });
        before = Some(after);
    }
    Ok(at_head.rewound().to_vec())
}

/// A state as replay compares it: its live JSON text, its step and its board.
struct Before {
    live: Doc,
    step: StepRef,
    board: Option<crate::rules::Board>,
}

impl Before {
    /// `table` as replay compares it, its text written into `live`'s buffer.
    fn of(table: &crate::rules::Table, mut live: Doc) -> Before {
        table.write_live_json(&mut live);
        Before { live, step: table.view().step, board: table.board() }
    }
}

fn broken<E: Into<RecordError>>(e: FoldError<E>) -> RecordError {
    match e {
        FoldError::Illegal { seq, violation } => RecordError::Broken { seq, why: violation.to_string() },
        FoldError::Source(e) => e.into(),
    }
}

/// The fold behind `log` in words: each event in turn, from seq 0, and what
/// the ruleset recorded in words for it (see `Table::said`).
#[derive(Default)]
pub struct Said {
    folder: Folder,
    /// The fold stopped at an illegal event: `log` still shows every event
    /// (it is how a judge reads a broken record), only without words.
    stopped: bool,
}

/// What `log` says of one event beyond the event itself.
pub struct Logged {
    /// The actor by name ("Alice (p1)"); a judge as named.
    pub by: String,
    /// The step the event was made at (none for event 0).
    pub at: Option<StepRef>,
    /// What the ruleset recorded in words for it.
    pub recorded: Vec<String>,
}

impl Said {
    /// Folds `event` (the next seq); `source` gives earlier events again for
    /// a rewind. None from the first event the rules refuse on: the record
    /// is broken there (`verify` says why), and the rest has no words.
    pub fn next<S>(&mut self, event: &Event, source: &S) -> Result<Option<Logged>, RecordError>
    where
        S: Source + ?Sized,
        S::Error: Into<RecordError>,
    {
        if self.stopped {
            return Ok(None);
        }
        let at = self.folder.table().map(|t| t.view().step);
        match self.folder.push(event, source) {
            Ok(()) => {}
            Err(FoldError::Illegal { .. }) => {
                self.stopped = true;
                return Ok(None);
            }
            Err(e) => return Err(broken(e)),
        }
        let table = self.folder.table().expect("a folded event leaves a state");
        Ok(Some(Logged { by: table.header.name_of(&event.actor), at, recorded: table.said(event.seq) }))
    }
}
