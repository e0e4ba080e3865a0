//! The fold: a stream of events, in order, to the state at each seq.
//!
//! Most events go straight to the ruleset through [`Table::apply`]. Rulings
//! and notes name an earlier event by seq and hash: the fold reads that
//! event's hash from the source when one arrives (they are rare), so it
//! keeps nothing per event; a `rewind` returns the combat to the state after
//! an earlier event, which the fold rebuilds by folding the source again up
//! to that event, from the nearest snapshot before it. Memory stays one
//! state, whatever the length. Events after the target and before the
//! rewind stay in the log, marked rewound.
//!
//! A snapshot ([`Folder::snapshot`], [`Folder::from_snapshot`]) is the fold
//! after some seq, kept beside the events as a cache: it names the hash of
//! the event it follows, carries a checksum, the snapshot format and the
//! ruleset's name and version, and is ignored unless all of them match.
//! Folding from a snapshot gives the same state as folding from seq 0
//! (`verify --snapshots` checks each one that way).

use std::convert::Infallible;

use serde::{Deserialize, Serialize};

use crate::adjudication::{Adjudication, NoteRecord, PenaltyRecord, Ruling, RulingRecord};
use crate::event::{ActionType, Event, Header, Link};
use crate::kernel::{StepRef, Violation};
use crate::rules::{Kind, RulesetState, StateReader, Table};

/// Somewhere events can be read again from any seq: a stored game, an export
/// file, a slice in memory.
pub trait Source {
    type Error;
    fn events_from(&self, from: u64) -> Box<dyn Iterator<Item = Result<Event, Self::Error>> + '_>;

    /// The hash of event `seq` (None past the end), to check a ruling or a
    /// note that names it.
    fn hash_of(&self, seq: u64) -> Result<Option<String>, Self::Error> {
        match self.events_from(seq).next() {
            Some(Ok(e)) if e.seq == seq => Ok(Some(e.hash)),
            Some(Err(e)) => Err(e),
            _ => Ok(None),
        }
    }

    /// The fold after the latest snapshot at or before `seq` that checks
    /// out, with the link of the event it follows. A cache: None (no
    /// snapshots, or none that checks out) is always a correct answer.
    fn snapshot(&self, _seq: u64) -> Option<(Folder, Link)> {
        None
    }

    /// The events from `from` as their stored bytes, unchecked (see
    /// `Store::read_stored`), read by an iterator another thread may run:
    /// `record::verify` checks and folds them there and here at once. None
    /// (the default): a source read only through `events_from`.
    fn stored_from(&self, _from: u64) -> Option<StoredBytes<'_, Self::Error>> {
        None
    }
}

/// A source's events as their stored bytes, each with the seq it is stored
/// under, unchecked (`Source::stored_from`); another thread may run it.
pub type StoredBytes<'a, E> = Box<dyn Iterator<Item = Result<(u64, Vec<u8>), E>> + Send + 'a>;

impl Source for [Event] {
    type Error = Infallible;
    fn events_from(&self, from: u64) -> Box<dyn Iterator<Item = Result<Event, Infallible>> + '_> {
        Box::new(self.iter().skip(from as usize).cloned().map(Ok))
    }
    fn hash_of(&self, seq: u64) -> Result<Option<String>, Infallible> {
        Ok(usize::try_from(seq).ok().and_then(|i| self.get(i)).filter(|e| e.seq == seq).map(|e| e.hash.clone()))
    }
}

impl Source for Vec<Event> {
    type Error = Infallible;
    fn events_from(&self, from: u64) -> Box<dyn Iterator<Item = Result<Event, Infallible>> + '_> {
        self.as_slice().events_from(from)
    }
    fn hash_of(&self, seq: u64) -> Result<Option<String>, Infallible> {
        self.as_slice().hash_of(seq)
    }
}

/// A source read without its snapshots: what `verify` folds, so that a
/// verification never rests on a cache.
pub struct NoSnapshots<'a, S: ?Sized>(pub &'a S);

impl<S: Source + ?Sized> Source for NoSnapshots<'_, S> {
    type Error = S::Error;
    fn events_from(&self, from: u64) -> Box<dyn Iterator<Item = Result<Event, S::Error>> + '_> {
        self.0.events_from(from)
    }
    fn hash_of(&self, seq: u64) -> Result<Option<String>, S::Error> {
        self.0.hash_of(seq)
    }
    fn stored_from(&self, from: u64) -> Option<StoredBytes<'_, S::Error>> {
        self.0.stored_from(from)
    }
}

/// Why a fold stopped.
#[derive(Debug)]
pub enum FoldError<E> {
    /// The event at `seq` is not legal where it stands.
    Illegal { seq: u64, violation: Box<Violation> },
    /// The source could not give the events.
    Source(E),
}

/// What one event does to the fold: the state after it, and the seqs it rewound.
#[derive(Debug, Clone)]
pub struct Next {
    pub table: Table,
    pub rewound: Option<(u64, u64)>,
}

/// The state of a fold after some prefix.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Folder {
    table: Option<Table>,
    /// Events folded (the next seq).
    len: u64,
    rewound: Vec<(u64, u64)>,
    /// Seqs of penalties, judges added and notes, ascending: they stand even
    /// inside a range a later rewind took back (the adjudication is not rewound).
    adjudication: Vec<u64>,
}

fn header_violation(message: String) -> Violation {
    Violation {
        step: StepRef { number: "0".into(), title: "open".into(), reference: "event 0 (the header)".into() },
        rule: "event 0 is {\"type\":\"open\", ...} with the header (schemas/open.schema.json)".into(),
        message,
        may_act: vec![],
        offered: vec![],
        may_act_names: vec![],
    }
}

impl Folder {
    pub fn new() -> Folder {
        Folder::default()
    }

    /// The state after the last event folded (None before event 0).
    pub fn table(&self) -> Option<&Table> {
        self.table.as_ref()
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Ranges of seqs (inclusive) that judges' rewinds took back.
    pub fn rewound(&self) -> &[(u64, u64)] {
        &self.rewound
    }

    /// A later rewind took this event back: it stays in the log but no
    /// longer counts. Penalties, judges added and notes are never rewound.
    pub fn is_rewound(&self, seq: u64) -> bool {
        self.in_rewound_range(seq) && self.adjudication.binary_search(&seq).is_err()
    }

    /// The seq of the judge's rewind that took this event back (the first
    /// that did, where later rewinds took it back again), if one did.
    pub fn rewound_by(&self, seq: u64) -> Option<u64> {
        if !self.is_rewound(seq) {
            return None;
        }
        // A rewind at seq r takes back the events after its target up to r - 1.
        self.rewound.iter().find(|(a, b)| (*a..=*b).contains(&seq)).map(|(_, b)| b + 1)
    }

    /// Inside a range a rewind took back. A rewind may not name such an event
    /// (even a penalty that stands): the combat after it is not one that was played.
    fn in_rewound_range(&self, seq: u64) -> bool {
        self.rewound.iter().any(|(a, b)| (*a..=*b).contains(&seq))
    }

    /// The state `event` (the next seq) leads to, without changing the fold.
    pub fn next<S: Source + ?Sized>(&self, event: &Event, source: &S) -> Result<Next, FoldError<S::Error>> {
        let illegal = |violation: Violation| FoldError::Illegal { seq: event.seq, violation: Box::new(violation) };
        let Some(table) = &self.table else {
            let header: Header = serde_json::from_value(event.action.clone())
                .map_err(|e| illegal(header_violation(format!("not a valid header: {e}"))))?;
            return Ok(Next { table: Table::open(&header).map_err(illegal)?, rewound: None });
        };
        let kind = event.action_type();
        if !matches!(kind, Some(ActionType::Ruling | ActionType::Note)) {
            return Ok(Next {
                table: table.apply(event.seq, &event.actor, &event.action).map_err(illegal)?,
                rewound: None,
            });
        }
        // A ruling's or a note's refusal in the seats' names too, as the
        // rulesets' are (`Table::apply` names its own; naming twice would
        // name a seat whose name holds its id again).
        let illegal = |violation: Violation| illegal(table.named(violation));
        let view = table.view();
        let adjudication: Adjudication = serde_json::from_value(event.action.clone()).map_err(|e| {
            illegal(Violation::new(
                &view,
                "the payloads in schemas/ruling.schema.json",
                format!("not a valid ruling or note: {e}"),
            ))
        })?;
        let concerns = adjudication.concerns();
        // Read from the source, not kept per event: rulings and notes are rare.
        let known = match concerns.seq < event.seq {
            true => source.hash_of(concerns.seq).map_err(FoldError::Source)?,
            false => None,
        };
        if known.as_deref() != Some(concerns.hash.as_str()) {
            let why = match known {
                None => format!("concerns: seq {} is not an earlier event of this game", concerns.seq),
                Some(_) => format!("concerns: the hash given for seq {} is not that event's hash", concerns.seq),
            };
            return Err(illegal(Violation::new(
                &view,
                "every ruling names the event it concerns by seq and hash",
                why,
            )));
        }
        match adjudication {
            Adjudication::Note { text, concerns } => Ok(Next {
                table: table.note(event.seq, &event.actor, concerns.seq, &text).map_err(illegal)?,
                rewound: None,
            }),
            Adjudication::Ruling(ref rewind @ Ruling::Rewind { ref concerns, ref reason, .. }) => {
                table.check_judge(&event.actor).map_err(illegal)?;
                crate::event::check_name("reason", reason)
                    .map_err(|m| illegal(Violation::new(&view, "a ruling gives a reason", m)))?;
                let target = concerns.seq;
                if self.in_rewound_range(target) {
                    return Err(illegal(Violation::new(
                        &view,
                        "rewind to an event that stands",
                        format!("concerns: seq {target} was itself rewound"),
                    )));
                }
                if target + 1 >= event.seq {
                    return Err(illegal(Violation::new(
                        &view,
                        "rewind takes back later events",
                        format!("concerns: nothing follows seq {target}: there is nothing to rewind"),
                    )));
                }
                let earlier = fold_to(source, target)?;
                if earlier.len() != target + 1 {
                    return Err(illegal(Violation::new(
                        &view,
                        "rewind to an earlier event",
                        format!("concerns: the events up to seq {target} are not available to rebuild the state"),
                    )));
                }
                let earlier = earlier.table.expect("a fold to a seq has a state");
                let table = table.rewound_to(earlier, event.seq, &event.actor, rewind);
                Ok(Next { table, rewound: Some((target + 1, event.seq - 1)) })
            }
            Adjudication::Ruling(ruling) => Ok(Next {
                table: table.apply_ruling(event.seq, &event.actor, &ruling).map_err(illegal)?,
                rewound: None,
            }),
        }
    }

    /// Takes the result of `next` for `event`.
    pub fn commit(&mut self, event: &Event, next: Next) {
        self.commit_len(event);
        if let Some(range) = next.rewound {
            self.rewound.push(range);
        }
        if is_adjudication(event) {
            self.adjudication.push(event.seq);
        }
        self.table = Some(next.table);
    }

    /// Counts `event` (the next seq) as folded.
    fn commit_len(&mut self, event: &Event) {
        debug_assert_eq!(event.seq, self.len());
        self.len = event.seq + 1;
    }

    /// Folds one more event. An action (not a ruling or note) is applied to
    /// the state in place, copying nothing; a refusal leaves the fold as it was.
    pub fn push<S: Source + ?Sized>(&mut self, event: &Event, source: &S) -> Result<(), FoldError<S::Error>> {
        if let Some(table) = &mut self.table
            && !matches!(event.action_type(), Some(ActionType::Ruling | ActionType::Note))
        {
            table
                .apply_in_place(event.seq, &event.actor, &event.action)
                .map_err(|violation| FoldError::Illegal { seq: event.seq, violation: Box::new(violation) })?;
            self.commit_len(event);
            return Ok(());
        }
        let next = self.next(event, source)?;
        self.commit(event, next);
        Ok(())
    }
}

/// A penalty, a judge added or a note: the adjudication, which rewinds keep.
fn is_adjudication(event: &Event) -> bool {
    match event.action_type() {
        Some(ActionType::Note) => true,
        Some(ActionType::Ruling) => {
            matches!(event.action.get("kind").and_then(|k| k.as_str()), Some("penalty" | "add_judge"))
        }
        _ => false,
    }
}

/// Folds a source up to and including `last`, from the nearest snapshot
/// at or before it (else from event 0).
pub fn fold_to<S: Source + ?Sized>(source: &S, last: u64) -> Result<Folder, FoldError<S::Error>> {
    let mut folder = source.snapshot(last).map(|(f, _)| f).unwrap_or_default();
    for event in source.events_from(folder.len()) {
        let event = event.map_err(FoldError::Source)?;
        if event.seq > last {
            break;
        }
        folder.push(&event, source)?;
    }
    Ok(folder)
}

/// Folds a whole source.
pub fn fold_all<S: Source + ?Sized>(source: &S) -> Result<Folder, FoldError<S::Error>> {
    fold_to(source, u64::MAX)
}

/// The snapshot format this build writes and reads. A snapshot of another
/// format is ignored: the fold starts from an earlier one, or from seq 0.
/// Raised whenever a ruleset's state gains or changes a field (2: the
/// Doomtrooper announcements kept across a change of combatants, the Raw
/// Deal turn's end), so that no state is read with a field defaulted.
pub const SNAPSHOT_FORMAT: u64 = 2;

#[derive(Serialize)]
struct SnapshotOut<'a> {
    format: u64,
    ruleset: &'a str,
    ruleset_version: u64,
    seq: u64,
    hash: &'a str,
    rewound: &'a [(u64, u64)],
    adjudication: &'a [u64],
    table: &'a Table,
}

/// What a snapshot says of itself, read before its state (serde skips the rest).
#[derive(Deserialize)]
struct SnapshotHead {
    format: u64,
    ruleset: String,
    ruleset_version: u64,
    seq: u64,
    hash: String,
}

#[derive(Deserialize)]
struct SnapshotBody<S> {
    rewound: Vec<(u64, u64)>,
    adjudication: Vec<u64>,
    table: TableIn<S>,
}

/// A `Table` as serialised, with the ruleset's state of a type chosen by
/// the snapshot's ruleset (the state is untagged when shown).
#[derive(Deserialize)]
struct TableIn<S> {
    header: Header,
    state: S,
    penalties: Vec<PenaltyRecord>,
    notes: Vec<NoteRecord>,
    rulings: Vec<RulingRecord>,
}

const CHECKSUM_BYTES: usize = 32;

impl Folder {
    /// This fold as a snapshot, after its last event, whose hash is `hash`:
    /// a BLAKE3 checksum of the rest (a torn write is found), then JSON.
    pub fn snapshot(&self, hash: &str) -> Vec<u8> {
        let table = self.table.as_ref().expect("a snapshot follows event 0");
        let out = SnapshotOut {
            format: SNAPSHOT_FORMAT,
            ruleset: &table.header.ruleset,
            ruleset_version: table.header.ruleset_version,
            seq: self.len - 1,
            hash,
            rewound: &self.rewound,
            adjudication: &self.adjudication,
            table,
        };
        let body = crate::json::to_vec_whole(&out).expect("a state serialises");
        let mut bytes = Vec::with_capacity(CHECKSUM_BYTES + body.len());
        bytes.extend_from_slice(blake3::hash(&body).as_bytes());
        bytes.extend_from_slice(&body);
        bytes
    }

    /// The fold a snapshot holds, or why it is not trusted: it must be
    /// whole (its checksum), of this build's snapshot format and version of
    /// its ruleset, and follow event `seq`, whose hash is `hash`.
    pub fn from_snapshot(bytes: &[u8], seq: u64, hash: &str) -> Result<Folder, String> {
        let (sum, body) = bytes.split_at_checked(CHECKSUM_BYTES).ok_or("shorter than its checksum")?;
        if blake3::hash(body).as_bytes() != sum {
            return Err("its checksum does not match (a torn or damaged write)".into());
        }
        let head: SnapshotHead = serde_json::from_slice(body).map_err(|e| format!("not a snapshot: {e}"))?;
        if head.format != SNAPSHOT_FORMAT {
            return Err(format!("snapshot format {}, this build reads {SNAPSHOT_FORMAT}", head.format));
        }
        let Some(kind) = Kind::named(&head.ruleset).filter(|k| k.folds(head.ruleset_version)) else {
            return Err(format!("ruleset {} v{} is not one this build folds", head.ruleset, head.ruleset_version));
        };
        if head.seq != seq || head.hash != hash {
            return Err(format!("it follows seq {} {}, not the stored seq {seq} {hash}", head.seq, head.hash));
        }
        let folder = kind.read_with(SnapshotOf { body, seq })?;
        let header = &folder.table.as_ref().expect("a state").header;
        if (header.ruleset.as_str(), header.ruleset_version) != (head.ruleset.as_str(), head.ruleset_version) {
            return Err("its header is of another ruleset than it says".into());
        }
        Ok(folder)
    }
}

/// A snapshot's body read straight into its ruleset's state type.
struct SnapshotOf<'a> {
    body: &'a [u8],
    seq: u64,
}

impl StateReader for SnapshotOf<'_> {
    type Out = Result<Folder, String>;
    fn read<S: serde::de::DeserializeOwned>(self, wrap: fn(S) -> RulesetState) -> Result<Folder, String> {
        let b: SnapshotBody<S> = serde_json::from_slice(self.body).map_err(|e| format!("not a snapshot: {e}"))?;
        let t = b.table;
        let table = Table {
            header: t.header,
            state: wrap(t.state),
            penalties: t.penalties,
            notes: t.notes,
            rulings: t.rulings,
        };
        Ok(Folder { table: Some(table), len: self.seq + 1, rewound: b.rewound, adjudication: b.adjudication })
    }
}
