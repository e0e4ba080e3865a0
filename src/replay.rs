//! Replay: each event of a record in plain words, with the step before and
//! after it and what it changed in the state, rulings and notes inline,
//! rewound events marked. Two streaming passes (one to learn which events
//! later rulings rewound, one to show them), each from the nearest
//! snapshot: memory is a few batches of states, whatever the length.

use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, channel, sync_channel};

use serde::Serialize;

use crate::delta::{Change, Differ};
use crate::event::{ActionType, Chain, Event, Header, Link};
use crate::fold::{FoldError, Folder, Source};
use crate::kernel::StepRef;
use crate::record::{RecordError, each_event, verify, verify_from};
use crate::rules::{Board, Compared, Table, describe};

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
/// snapshot before `from`. Each state is copied once: the state after one
/// event is the state before the next.
///
/// Two threads, as `verify` has: one reads and folds the events and copies
/// what replay compares of each state (`fold_ahead`), in batches; the
/// caller's compares each state with the one before (`delta::Changes`:
/// member by member, only what differs written), builds the board again
/// where a change shows on it, and calls `show`, in seq order.
/// An event the fold refuses, or that cannot be read, ends the replay with
/// that error once every event before it was shown, as on one thread.
pub fn replay<S>(
    source: &S,
    from: u64,
    to: Option<u64>,
    mut show: impl FnMut(Shown),
) -> Result<Vec<(u64, u64)>, RecordError>
where
    S: Source + Sync + ?Sized,
    S::Error: Into<RecordError>,
{
    let (_, at_head) = match source.snapshot(u64::MAX) {
        Some((folder, link)) => verify_from(source, folder, Some(link), None)?,
        None => verify(source, None)?,
    };
    let (folder, prev) = match from.checked_sub(1).and_then(|seq| source.snapshot(seq)) {
        Some((folder, link)) => (folder, Some(link)),
        None => (Folder::new(), None),
    };
    std::thread::scope(|threads| {
        let (to_show, folded) = sync_channel(FOLDED_AHEAD);
        let (spend, spent) = channel();
        threads.spawn(move || fold_ahead(source, folder, prev, from, to, to_show, spent));
        // The state before the event shown next, and its board once built.
        let mut before: Option<Before> = None;
        let mut board: Option<Board> = None;
        let mut differ = Differ::default();
        // Returning drops the receiver: the folding thread stops at its next batch.
        for batch in folded {
            let batch = batch?;
            let mut used = Vec::with_capacity(batch.len());
            for step in batch {
                let Folded { mut event, first, after, by, recorded } = step;
                let (changes, said, before_step, compared) = match first.map(|b| *b).or(before.take()) {
                    Some(b) => {
                        let changes = differ.changes(&*b.compared, &*after.compared);
                        let was = board.take().or_else(|| b.compared.board(&b.header));
                        let (now, said) = board_after(was, &b.header, &after, &changes);
                        board = now;
                        (changes, said, Some(b.step), Some(b.compared))
                    }
                    None => (vec![], None, None, None),
                };
                let kind = match event.action_type() {
                    Some(ActionType::Ruling) => "ruling",
                    Some(ActionType::Note) => "note",
                    Some(ActionType::Pass) => "pass",
                    _ => "action",
                };
                show(Shown {
                    seq: event.seq,
                    action: describe(&event.action),
                    at: std::mem::take(&mut event.at),
                    actor: std::mem::take(&mut event.actor),
                    by,
                    kind,
                    before: before_step,
                    after: after.step.clone(),
                    recorded,
                    changes,
                    said,
                    rewound: at_head.is_rewound(event.seq),
                });
                used.push(Spent { event, compared });
                before = Some(after);
            }
            let _ = spend.send(used);
        }
        Ok(at_head.rewound().to_vec())
    })
}

/// What the showing thread is done with, handed back to the folding thread
/// that made it to be dropped there: a block freed on another thread than
/// the one that allocated it costs the allocator (mimalloc) several times a
/// local free, and such frees were a third of a replay's time (perf).
#[expect(dead_code, reason = "held only to be dropped on the folding thread")]
struct Spent {
    event: Event,
    /// The state before the event.
    compared: Option<Box<Compared>>,
}

/// The board after an event, from `was` (the board before it), and what
/// changed on it in words. A board is built again unless the ruleset says
/// that none of the changes shows on it (`Compared::board_unchanged_by`)
/// and the header its names come from is the same: most events pass
/// priority on, which a board does not show, and building a board was a
/// quarter of a replay's work. A debug build checks each board kept
/// against one built afresh.
fn board_after(
    was: Option<Board>,
    header: &Arc<Header>,
    after: &Before,
    changes: &[Change],
) -> (Option<Board>, Option<Vec<String>>) {
    if Arc::ptr_eq(header, &after.header) && after.compared.board_unchanged_by(changes) {
        debug_assert_eq!(after.compared.board(&after.header), was, "a change the board does not show changed it");
        let said = was.as_ref().map(|_| vec![]);
        return (was, said);
    }
    let now = after.compared.board(&after.header);
    let said = match (&was, &now) {
        (Some(b), Some(a)) => Some(a.changes_since(b)),
        _ => None,
    };
    (now, said)
}

/// Events folded and handed from the folding thread to the showing one at a time.
const FOLDED_BATCH: usize = 64;

/// Batches folded ahead of the showing at most: memory stays bounded
/// whatever the two threads' pace.
const FOLDED_AHEAD: usize = 4;

/// One event shown, as the folding thread hands it over.
struct Folded {
    event: Event,
    /// The state before it, for the first event shown (none for event 0).
    /// None for the others: the showing thread keeps the state after the
    /// event before.
    first: Option<Box<Before>>,
    after: Before,
    /// The actor by name.
    by: String,
    /// What the ruleset recorded in words for it.
    recorded: Vec<String>,
}

/// The folding thread: folds `folder` (after the event `prev`) on through
/// the events to `to`, each checked as `verify` checks it (from its stored
/// bytes, read on a thread of its own, where the source has them), and
/// copies what replay compares of each state from `from` on. Hands them over
/// in batches until the events run out, one is an error (handed over after
/// the events before it), or the showing thread stops taking them.
/// (A frame of its own, so that `tools/bench --instructions` counts it.)
#[inline(never)]
fn fold_ahead<S>(
    source: &S,
    mut folder: Folder,
    prev: Option<Link>,
    from: u64,
    to: Option<u64>,
    to_show: SyncSender<Result<Vec<Folded>, RecordError>>,
    spent: Receiver<Vec<Spent>>,
) where
    S: Source + ?Sized,
    S::Error: Into<RecordError>,
{
    let next = folder.len();
    // The game's header, shared by the states handed over until a ruling changes it.
    let mut header: Option<Arc<Header>> = None;
    let mut batch = Vec::with_capacity(FOLDED_BATCH);
    let ended = each_event(source, next, to, &mut Chain::after(prev), |event| {
        if let Some(folded) = fold_one(&mut folder, event, from, source, &mut header)? {
            batch.push(folded);
            if batch.len() == FOLDED_BATCH {
                spent.try_iter().for_each(drop);
            }
            if batch.len() == FOLDED_BATCH
                && to_show.send(Ok(std::mem::replace(&mut batch, Vec::with_capacity(FOLDED_BATCH)))).is_err()
            {
                return Ok(ControlFlow::Break(()));
            }
        }
        Ok(ControlFlow::Continue(()))
    });
    if to_show.send(Ok(batch)).is_ok()
        && let Err(e) = ended
    {
        let _ = to_show.send(Err(e));
    }
}

/// Folds `event`; for one from `from` on, the state it leaves as replay
/// compares it, and before the event at `from` (the first shown: the fold
/// starts at or before it), the state before it too.
fn fold_one<S>(
    folder: &mut Folder,
    event: Event,
    from: u64,
    source: &S,
    header: &mut Option<Arc<Header>>,
) -> Result<Option<Folded>, RecordError>
where
    S: Source + ?Sized,
    S::Error: Into<RecordError>,
{
    let first = match event.seq == from {
        true => folder.table().map(|t| Box::new(Before::of(t, header))),
        false => None,
    };
    folder.push(&event, source).map_err(broken)?;
    if event.seq < from {
        return Ok(None);
    }
    let table = folder.table().expect("a folded event leaves a state");
    let by = table.header.name_of(&event.actor);
    let recorded = table.said(event.seq);
    let after = Before::of(table, header);
    Ok(Some(Folded { event, first, after, by, recorded }))
}

/// A state as replay compares it: what it compares of it, its step, and
/// the header its board names the seats from.
struct Before {
    /// Boxed: a state is several hundred bytes, and each is handed between
    /// threads and moved several times (memcpy was a tenth of a replay's work).
    compared: Box<Compared>,
    step: StepRef,
    header: Arc<Header>,
}

impl Before {
    /// `table` as replay compares it; `header` is the last one handed
    /// over, shared again while the table's is the same.
    fn of(table: &Table, header: &mut Option<Arc<Header>>) -> Before {
        let header = match header {
            Some(h) if **h == table.header => h.clone(),
            _ => header.insert(Arc::new(table.header.clone())).clone(),
        };
        Before { compared: Box::new(table.compared()), step: table.step(), header }
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
