//! Replay: each event of a record in plain words, with the step before and
//! after it and what it changed in the state, rulings and notes inline,
//! rewound events marked. Two streaming passes (one to learn which events
//! later rulings rewound, one to show them), each from the nearest
//! snapshot: memory is a few batches of states, whatever the length.

use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, channel, sync_channel};

use serde::Serialize;

use crate::delta::{Change, Differ, Found};
use crate::event::{ActionType, Chain, Event, Header, Link};
use crate::fold::{FoldError, Folder, Source};
use crate::kernel::StepRef;
use crate::record::{RecordError, each_event, verify, verify_from};
use crate::rules::{Board, Kept, RulesetState, Table, board_of, words};

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
    /// What changed in the state (outcome first), as paths for tools:
    /// where they were asked for ([`Told::WordsAndPaths`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<Vec<Change>>,
    /// What changed, in the board's words, for people (absent for the
    /// first event of a replay from seq 0: there is no board before it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub said: Option<Vec<String>>,
    /// A later ruling rewound this event: it stays in the log but no longer counts.
    pub rewound: bool,
}

/// What [`replay`] says each event changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Told {
    /// In the board's words (`Shown::said`): what `arbiter replay` prints
    /// and the replay page shows. `Shown::changes` is None.
    Words,
    /// Also each change as a path in the state with its values before and
    /// after (`Shown::changes`), for tools: `replay --json` and the API.
    /// Working those out is about a fifth of a replay's work.
    WordsAndPaths,
}

/// Calls `show` for every event with `from <= seq <= to`; returns the seq
/// ranges judges' rewinds took back (as `verify` says them). `show` is
/// lent each event (a caller that keeps one clones it): what the folding
/// thread made of it goes back to that thread to be freed (see `Spent`).
///
/// Which events later rulings rewound is known from the fold at the head
/// (`rewinds_at_head`): from the latest snapshot (the events after it
/// read, hashed, linked and folded, unless the replay goes on to the head
/// and none of them is a rewind), or, for a source without snapshots (an
/// export file), from a full verification. The events shown are folded
/// from the nearest snapshot before `from`.
///
/// A thread of its own folds the events (`fold_ahead`, reading stored
/// events on another as `verify` does, where the source has their bytes),
/// and the caller's shows them, in seq order. The folding thread keeps a
/// copy of the state before each event ([`Kept`]), brings it up to the
/// state after by copying the members that differ (`delta::CatchUp`), and
/// hands over each of those members' values before and after
/// (`delta::Found`; only where each lies, for `Told::Words`) and, where
/// one may show on the board, the state to draw it from. The caller's
/// thread compares those members where `told` asks for paths (what the
/// event changed, `delta::Changes`: only what differs written), draws the
/// boards, names the actor, puts the event in words, calls `show`, and
/// hands back what the folding thread made to be freed there. (Comparing
/// on the folding thread made it the one the other two waited for.)
/// An event the fold refuses, or that cannot be read, ends the replay with
/// that error once every event before it was shown, as on one thread.
pub fn replay<S>(
    source: &S,
    from: u64,
    to: Option<u64>,
    told: Told,
    mut show: impl FnMut(&Shown),
) -> Result<Vec<(u64, u64)>, RecordError>
where
    S: Source + Sync + ?Sized,
    S::Error: Into<RecordError>,
{
    let at_head = rewinds_at_head(source, to)?;
    let (folder, prev) = match from.checked_sub(1).and_then(|seq| source.snapshot(seq)) {
        Some((folder, link)) => (folder, Some(link)),
        None => (Folder::new(), None),
    };
    std::thread::scope(|threads| {
        let (to_show, folded) = sync_channel(FOLDED_AHEAD);
        let (spend, spent) = channel();
        threads.spawn(move || fold_ahead(source, folder, prev, (from, to), told, to_show, spent));
        // The step after the event shown last: the step before the next.
        let mut step: Option<StepRef> = None;
        // The board after the event shown last, once drawn.
        let mut board: Option<Board> = None;
        // The game's header as it stands (rulings may add judges).
        let mut header: Option<Arc<Header>> = None;
        // What each event changed is worked out here, from what the
        // folding thread found differed (`Found`).
        let mut differ = Differ::default();
        // Returning drops the receiver: the folding thread stops at its next batch.
        for batch in folded {
            let mut batch = batch?;
            let mut used =
                Spent { batch: vec![], drawn: Vec::with_capacity(batch.len()), shown: Vec::with_capacity(batch.len()) };
            for folded in batch.drain(..) {
                let Folded {
                    mut event,
                    kind,
                    before,
                    after,
                    header: new_header,
                    recorded,
                    found,
                    drawn_before,
                    drawn,
                    words,
                } = folded;
                if let Some(h) = new_header {
                    header = Some(h);
                }
                if let Some(d) = &drawn_before {
                    board = d.board();
                }
                let said = match &drawn {
                    // None of the changes shows on the board.
                    None => board.as_ref().map(|_| vec![]),
                    Some(d) => {
                        let now = d.board();
                        let said = match (&board, &now) {
                            (Some(b), Some(a)) => Some(a.changes_since(b)),
                            _ => None,
                        };
                        board = now;
                        said
                    }
                };
                let said = said.map(|said| by_ruling(said, &event));
                let by = header.as_ref().expect("the first event shown has the header").name_of(&event.actor);
                let shown = Shown {
                    seq: event.seq,
                    action: words,
                    at: std::mem::take(&mut event.at),
                    actor: std::mem::take(&mut event.actor),
                    by,
                    kind,
                    before: before.or_else(|| step.take()),
                    after,
                    recorded,
                    changes: (told == Told::WordsAndPaths).then(|| found.changes(&mut differ)),
                    said,
                    rewound: at_head.is_rewound(event.seq),
                };
                show(&shown);
                // The step after this event is the step before the next;
                // what the folding thread made goes back to it (the
                // changes, made here, are freed here).
                let Shown { before, after, recorded, .. } = shown;
                step = Some(after);
                used.shown.push((before, found, recorded));
                used.drawn.extend([drawn_before, drawn].into_iter().flatten());
            }
            used.batch = batch;
            let _ = spend.send(used);
        }
        Ok(at_head.rewound().to_vec())
    })
}

/// The fold at the head, which knows what judges' rewinds took back: from
/// the latest snapshot (the events after it read, hashed, linked and
/// folded), or, for a source without snapshots, a full verification.
pub fn fold_at_head<S>(source: &S) -> Result<Folder, RecordError>
where
    S: Source + Sync + ?Sized,
    S::Error: Into<RecordError>,
{
    let (_, at_head) = match source.snapshot(u64::MAX) {
        Some((folder, link)) => verify_from(source, folder, Some(link), None)?,
        None => verify(source, None)?,
    };
    Ok(at_head)
}

/// What replay needs of the fold at the head: which events later rulings
/// rewound. A replay that goes on to the head checks every event after the
/// latest snapshot itself (read, hashed, linked and folded), so where none
/// of those events' bytes holds `"rewind"` (no rewind follows the snapshot:
/// a rewind's `kind` is written so in canonical JSON), the snapshot's fold
/// knows every rewind there is, and the events after it are not checked
/// twice. Otherwise (a rewind after the snapshot, a replay that stops
/// short of the head, a source without snapshots or stored bytes, an event
/// that cannot be read), the fold at the head as [`fold_at_head`] makes it.
/// (Checking the events after the snapshot first was a tenth of a replay
/// of 10,000 events, and all of the wait before its first event.)
fn rewinds_at_head<S>(source: &S, to: Option<u64>) -> Result<Folder, RecordError>
where
    S: Source + Sync + ?Sized,
    S::Error: Into<RecordError>,
{
    if let Some((folder, _)) = source.snapshot(u64::MAX)
        && let Some(stored) = source.stored_from(folder.len())
    {
        // The seq of the last event, while none after the snapshot may be
        // a rewind (None: one may be, or one could not be read).
        let mut head = Some(folder.len() - 1);
        for read in stored {
            head = match read {
                Ok((seq, bytes)) if memchr::memmem::find(&bytes, b"\"rewind\"").is_none() => Some(seq),
                _ => None,
            };
            if head.is_none() {
                break;
            }
        }
        if head.is_some_and(|head| to.is_none_or(|to| to >= head)) {
            return Ok(folder);
        }
    }
    fold_at_head(source)
}

/// Under a judge's rewind, what the board says was rewound names the ruling
/// that did it: a board compares two states only, and cannot tell a rewind
/// from play, but the event shown is the ruling ("the counter against it
/// (seq 3) was rewound by the judge's ruling (seq 6)").
fn by_ruling(said: Vec<String>, event: &Event) -> Vec<String> {
    let rewind = event.action_type() == Some(ActionType::Ruling) && event.action["kind"] == "rewind";
    if !rewind {
        return said;
    }
    said.into_iter()
        .map(|s| if s.ends_with(" was rewound") { format!("{s} by the judge's ruling (seq {})", event.seq) } else { s })
        .collect()
}

/// What the showing thread is done with, handed back to the folding thread
/// that made it, to be freed there: the states it drew boards from, what
/// differed, the steps and words of the events shown, and the batch's list. A
/// block freed on another thread than the one that allocated it costs the
/// allocator (mimalloc) several times a local free, and more when the
/// thread that made it takes the block again: perf put a fifth of the
/// folding thread's time on the load of the next free block, a cache miss
/// on a line the other core had written. (The events are freed where they
/// are shown: from a store most were parsed on the reading thread, so no
/// thread of the two frees them locally, and the showing thread is the
/// less busy.)
struct Spent {
    /// The batch's own list, emptied: the last one back when a batch is
    /// full is the next batch's list.
    batch: Vec<Folded>,
    /// Boxed as they came: each box is freed on the thread that made it.
    #[allow(clippy::vec_box)]
    drawn: Vec<Box<Drawn>>,
    /// What the folding thread made of each event shown: the step before
    /// it (for the first event shown, as handed over; for the others, the
    /// step after the event before, kept by the showing thread until
    /// then), what differed (the values before and after of each member),
    /// and the words recorded. The step after the last event shown stays
    /// on the showing thread.
    shown: Vec<(Option<StepRef>, Found, Vec<String>)>,
}

/// Events folded and handed from the folding thread to the showing one at a time.
const FOLDED_BATCH: usize = 64;

/// Batches folded ahead of the showing at most: memory stays bounded
/// whatever the two threads' pace.
const FOLDED_AHEAD: usize = 4;

/// One event shown, as the folding thread hands it over.
struct Folded {
    event: Event,
    /// "action", "pass", "ruling" or "note" (`Shown::kind`).
    kind: &'static str,
    /// The step before it, for the first event shown (none for event 0).
    /// None for the others: the showing thread keeps the step after the
    /// event before.
    before: Option<StepRef>,
    after: StepRef,
    /// The game's header after it, where it is new: for the first event
    /// shown, and after a ruling that added a judge. The showing thread
    /// names the actor from it.
    header: Option<Arc<Header>>,
    /// What the ruleset recorded in words for it.
    recorded: Vec<String>,
    /// The members of the state it changed, each with its value before
    /// and after, for the showing thread to compare (none for the event
    /// the copy of the state begins at: event 0).
    found: Found,
    /// The state before it, to draw the board before it from: for the
    /// first event shown.
    drawn_before: Option<Box<Drawn>>,
    /// The state after it, to draw the board after it from, where a change
    /// may show on the board (None: the board is as it was).
    drawn: Option<Box<Drawn>>,
    /// The action in words, said at the state before it (`rules::words`).
    words: String,
}

/// A state and the header whose names its board gives the seats: what the
/// showing thread draws a board from. Drawing it there, not on the folding
/// thread, shares the work between the two (a board drawn is most of what
/// replay does at the events that change one).
struct Drawn {
    state: Arc<RulesetState>,
    header: Arc<Header>,
}

impl Drawn {
    /// `table`'s state (shared with `kept` where that is a whole copy of it).
    fn of(table: &Table, kept: &Kept, header: &Arc<Header>) -> Box<Drawn> {
        let state = kept.whole().unwrap_or_else(|| Arc::new(table.state.clone()));
        Box::new(Drawn { state, header: header.clone() })
    }

    fn board(&self) -> Option<Board> {
        board_of(&self.state, &self.header)
    }
}

/// The folding thread: folds `folder` (after the event `prev`) on through
/// the events to `to`, each checked as `verify` checks it (from its stored
/// bytes, read on a thread of its own, where the source has them), and
/// finds what each event from `from` on changed. Hands them over in batches
/// until the events run out, one is an error (handed over after the events
/// before it), or the showing thread stops taking them. What the showing
/// thread is done with comes back (`spent`) to be freed here.
/// (A frame of its own, so that `tools/bench --instructions` counts it.)
#[inline(never)]
fn fold_ahead<S>(
    source: &S,
    mut folder: Folder,
    prev: Option<Link>,
    (from, to): (u64, Option<u64>),
    told: Told,
    to_show: SyncSender<Result<Vec<Folded>, RecordError>>,
    spent: Receiver<Spent>,
) where
    S: Source + ?Sized,
    S::Error: Into<RecordError>,
{
    let next = folder.len();
    let mut behind: Option<Behind> = None;
    let mut batch = Vec::with_capacity(FOLDED_BATCH);
    let ended = each_event(source, next, to, &mut Chain::after(prev), |event| {
        if let Some(folded) = fold_one(&mut folder, event, (from, told), source, &mut behind)? {
            batch.push(folded);
            if batch.len() == FOLDED_BATCH {
                // Freed here, where they were made; the last list back is the next batch's.
                let mut next = None;
                for used in spent.try_iter() {
                    next = Some(used.batch);
                }
                let next = next.unwrap_or_else(|| Vec::with_capacity(FOLDED_BATCH));
                if to_show.send(Ok(std::mem::replace(&mut batch, next))).is_err() {
                    return Ok(ControlFlow::Break(()));
                }
            }
        }
        Ok(ControlFlow::Continue(()))
    });
    if to_show.send(Ok(batch)).is_ok()
        && let Err(e) = ended
    {
        let _ = to_show.send(Err(e));
    }
    // What comes back of the last batches is freed here too, until the
    // showing thread is done (it drops its end once the batches end,
    // which needs this end of theirs dropped first).
    drop(to_show);
    spent.into_iter().for_each(drop);
}

/// Folds `event`; for one from `from` on, what it changed and the step it
/// leaves. `behind` is the state before the event (from the event at
/// `from` on: the fold starts at or before it).
fn fold_one<S>(
    folder: &mut Folder,
    event: Event,
    (from, told): (u64, Told),
    source: &S,
    behind: &mut Option<Behind>,
) -> Result<Option<Folded>, RecordError>
where
    S: Source + ?Sized,
    S::Error: Into<RecordError>,
{
    let (mut before, mut drawn_before) = (None, None);
    if event.seq == from
        && let Some(table) = folder.table()
    {
        let b = Behind::of(table, told);
        drawn_before = Some(Drawn::of(table, &b.kept, &b.header));
        before = Some(table.step());
        *behind = Some(b);
    }
    // Said at the state before it: a counted seq is named by its card there.
    let said = (event.seq >= from).then(|| words::words(folder.table(), &event.action));
    folder.push(&event, source).map_err(broken)?;
    let Some(words) = said else {
        return Ok(None);
    };
    let table = folder.table().expect("a folded event leaves a state");
    let action_type = event.action_type();
    let kind = match action_type {
        Some(t @ (ActionType::Ruling | ActionType::Note | ActionType::Pass)) => t.name(),
        _ => "action",
    };
    let (found, drawn, header) = match behind {
        Some(behind) => {
            let ruling = action_type == Some(ActionType::Ruling);
            let (found, drawn, new_header) = behind.follow(table, ruling);
            // The first event shown takes the header with it, new or not.
            let header = new_header.or_else(|| (event.seq == from).then(|| behind.header.clone()));
            (found, drawn, header)
        }
        None => {
            let b = behind.insert(Behind::of(table, told));
            (Found::default(), Some(Drawn::of(table, &b.kept, &b.header)), Some(b.header.clone()))
        }
    };
    Ok(Some(Folded {
        kind,
        header,
        recorded: table.said(event.seq),
        before,
        after: table.step(),
        found,
        drawn_before,
        drawn,
        words,
        event,
    }))
}

/// What the folding thread keeps of the state before the next event: what
/// replay compares of it, and the header its board names the seats from
/// (shared with the showing thread's boards until a ruling changes it).
struct Behind {
    kept: Kept,
    header: Arc<Header>,
    /// Whether the values of what differed are handed over too.
    told: Told,
    /// A debug build draws every board, to check each one kept.
    #[cfg(debug_assertions)]
    board: Option<Board>,
}

impl Behind {
    fn of(table: &Table, told: Told) -> Behind {
        Behind {
            kept: Kept::of(table),
            header: Arc::new(table.header.clone()),
            told,
            #[cfg(debug_assertions)]
            board: table.board(),
        }
    }

    /// What differed from this state to `table`'s (`Kept::catch_up`: to be
    /// compared on the showing thread), whether the board must be drawn
    /// again (the state to draw it from), and the header where it is new;
    /// then this is `table`'s state. The board is drawn again unless the
    /// ruleset says that none of the members that differed shows on it
    /// (`Table::board_unchanged_by`)
    /// and the header its names come from is the same: most events pass
    /// priority on, which a board does not show, and drawing a board was a
    /// quarter of a replay's work. A debug build checks each board kept
    /// against one drawn afresh. Only a ruling changes the header (a judge
    /// added), so only after one is it compared (a debug build compares it
    /// after every event).
    fn follow(&mut self, table: &Table, ruling: bool) -> Followed {
        let found = match self.told {
            Told::Words => Found::names_only(16),
            Told::WordsAndPaths => Found::with_capacity(16),
        };
        let found = self.kept.catch_up_into(table, found);
        let same_header = !ruling || *self.header == table.header;
        debug_assert_eq!(same_header, *self.header == table.header, "only a ruling changes the header");
        let unchanged = same_header && table.board_unchanged_by(&found);
        #[cfg(debug_assertions)]
        {
            let now = table.board();
            if unchanged {
                debug_assert_eq!(now, self.board, "a change the board does not show changed it");
            }
            self.board = now;
        }
        if unchanged {
            return (found, None, None);
        }
        let new_header = (!same_header).then(|| {
            self.header = Arc::new(table.header.clone());
            self.header.clone()
        });
        (found, Some(Drawn::of(table, &self.kept, &self.header)), new_header)
    }
}

/// What `Behind::follow` found: what differed, the state to draw the board
/// from if it must be drawn again, and the header if a ruling changed it.
type Followed = (Found, Option<Box<Drawn>>, Option<Arc<Header>>);

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
    /// The judge's rewind that took it back, if one did: `Said` leaves it
    /// None (a later event may rewind this one), `log` fills it in.
    pub rewound_by: Option<u64>,
    /// The action in words, said at the state before it (`rules::words`).
    pub words: String,
}

impl Said {
    /// The judge's rewind among the events folded so far that took `seq`
    /// back, if one did.
    pub fn rewound_by(&self, seq: u64) -> Option<u64> {
        self.folder.rewound_by(seq)
    }

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
        let said = words::words(self.folder.table(), &event.action);
        match self.folder.push(event, source) {
            Ok(()) => {}
            Err(FoldError::Illegal { .. }) => {
                self.stopped = true;
                return Ok(None);
            }
            Err(e) => return Err(broken(e)),
        }
        let table = self.folder.table().expect("a folded event leaves a state");
        Ok(Some(Logged {
            by: table.header.name_of(&event.actor),
            at,
            recorded: table.said(event.seq),
            words: said,
            rewound_by: None,
        }))
    }
}
