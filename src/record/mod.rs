//! The record: appending to a game (rules first, then the store) and
//! checking whole records (verify, export, import).
//!
//! Append path: parse strictly -> a move offered to the actor admits it
//! (`offered_first`) -> apply to the current state (a Violation
//! refuses it) -> seal (seq, prev, at, hash) -> `Store::append`, which
//! checks the link again and stores only if the head has not moved ->
//! durable -> acknowledged. A refused or conflicting append stores nothing.
//! A batch (`Recorder::append_batch`) is sealed and folded whole, then
//! stored by one `Store::append_batch`: one durable write, all or nothing.

//!
//! The files: `append` (the append path: `Recorder`, `create`) and `check`
//! (whole records: `verify`, reading on two threads, `verify_snapshots`,
//! `read_export`, `import`). This file holds what both use: the errors,
//! `Submission`, and the sources the fold reads (a stored game, an export).

mod append;
mod check;

pub use self::append::{Appended, Recorder, Stored, create};
pub(crate) use self::check::each_event;
pub use self::check::{
    SnapshotsChecked, Verified, import, import_from, read_export, verify, verify_from, verify_keeping_snapshots,
    verify_snapshots,
};

use serde::Serialize;
use serde_json::Value;

use crate::event::{Draft, Event, Link};
use crate::fold::{FoldError, Folder, Source, StoredBytes};
use crate::json::parse_strict;
use crate::kernel::Violation;
use crate::rules::Table;
use crate::store::{AppendError, ReadError, Store};

/// Why an operation on a record failed. The variants are what a caller
/// does differently: fix the input, accept the refusal, re-read after a
/// conflict, distrust the record, or look at the machine.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("bad input: {0}")]
    Input(String),
    #[error("{0}")]
    Refused(Box<Violation>),
    #[error("conflict: expected seq {expected}, but the game's next seq is {next}; re-read the game and try again")]
    Conflict { expected: u64, next: u64 },
    #[error("game {0:?} does not exist")]
    NoSuchGame(String),
    #[error("game {0:?} already exists")]
    Exists(String),
    #[error("the record is broken at seq {seq}: {why}")]
    Broken { seq: u64, why: String },
    /// The store holds less than (or other than) what a signed checkpoint
    /// says it held: events were lost or rewritten.
    #[error("{0}")]
    Lost(String),
    #[error("{0}")]
    Io(String),
    /// The store cannot be reached now (a database down); retry later.
    #[error("{0}")]
    Unavailable(String),
}

impl RecordError {
    /// The stable code of this error, the same in `--json` output and in
    /// the HTTP API's error body.
    pub fn code(&self) -> &'static str {
        match self {
            RecordError::Input(_) => "input",
            RecordError::Refused(_) => "refused",
            RecordError::Conflict { .. } => "conflict",
            RecordError::NoSuchGame(_) => "no_such_game",
            RecordError::Exists(_) => "exists",
            RecordError::Broken { .. } => "broken",
            RecordError::Lost(_) => "lost",
            RecordError::Io(_) => "io",
            RecordError::Unavailable(_) => "store_unavailable",
        }
    }

    /// `{"error": {"code", "message", ...}}`: a refusal adds the step, the
    /// rule and who may act; a conflict the expected and the next seq.
    pub fn to_json(&self) -> Value {
        let mut body = serde_json::json!({"code": self.code(), "message": self.to_string()});
        match self {
            RecordError::Refused(v) => {
                body["message"] = Value::String(v.message.clone());
                body["violation"] = serde_json::to_value(v).expect("serialises");
            }
            RecordError::Conflict { expected, next } => {
                body["expected"] = (*expected).into();
                body["next"] = (*next).into();
            }
            RecordError::NoSuchGame(g) | RecordError::Exists(g) => body["game"] = g.clone().into(),
            RecordError::Broken { seq, why } => {
                body["seq"] = (*seq).into();
                body["why"] = why.clone().into();
            }
            RecordError::Input(_) | RecordError::Io(_) | RecordError::Unavailable(_) | RecordError::Lost(_) => {}
        }
        serde_json::json!({ "error": body })
    }

    /// The error an error body describes (what a client of the server
    /// reports, with the same exit code as if it had run locally).
    pub fn from_json(body: &Value) -> Option<RecordError> {
        let e = body.get("error")?;
        let message = e.get("message").and_then(Value::as_str).unwrap_or_default().to_string();
        let text = |k: &str| e.get(k).and_then(Value::as_str).map(str::to_string);
        let num = |k: &str| e.get(k).and_then(Value::as_u64);
        Some(match e.get("code")?.as_str()? {
            "input" => RecordError::Input(message.trim_start_matches("bad input: ").to_string()),
            "refused" => RecordError::Refused(Box::new(serde_json::from_value(e.get("violation")?.clone()).ok()?)),
            "conflict" => RecordError::Conflict { expected: num("expected")?, next: num("next")? },
            "no_such_game" => RecordError::NoSuchGame(text("game")?),
            "exists" => RecordError::Exists(text("game")?),
            "broken" => RecordError::Broken { seq: num("seq")?, why: text("why")? },
            "io" => RecordError::Io(message),
            "store_unavailable" => RecordError::Unavailable(message),
            "lost" => RecordError::Lost(message),
            _ => return None,
        })
    }
}

impl From<ReadError> for RecordError {
    fn from(e: ReadError) -> Self {
        match e {
            ReadError::NoSuchGame(g) => RecordError::NoSuchGame(g),
            ReadError::Corrupt { seq, why } => RecordError::Broken { seq, why: why.to_string() },
            ReadError::Io(m) => RecordError::Io(m),
            e @ ReadError::Unavailable(_) => RecordError::Unavailable(e.to_string()),
            e @ ReadError::Log(_) => RecordError::Io(e.to_string()),
        }
    }
}

impl From<AppendError> for RecordError {
    fn from(e: AppendError) -> Self {
        match e {
            AppendError::Conflict { expected, next, .. } => RecordError::Conflict { expected, next },
            AppendError::Exists(g) => RecordError::Exists(g),
            AppendError::NoSuchGame(g) => RecordError::NoSuchGame(g),
            AppendError::Invalid(why) => RecordError::Input(why.to_string()),
            AppendError::Io(m) => RecordError::Io(m),
            e @ AppendError::Unavailable(_) => RecordError::Unavailable(e.to_string()),
        }
    }
}

/// An action as submitted: `{"actor": ..., "action": {...}}` (and `at` when transcribing).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Submission {
    pub actor: String,
    pub action: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

impl Submission {
    /// Parses one JSON Lines entry strictly.
    pub fn parse(line: &str) -> Result<Submission, RecordError> {
        let value = parse_strict(line).map_err(|e| RecordError::Input(e.0))?;
        serde_json::from_value(value)
            .map_err(|e| RecordError::Input(format!("expected {{\"actor\": ..., \"action\": {{...}}}}: {e}")))
    }
    /// The draft to seal after the game's state `table`. Only a judge
    /// supplies `at` (transcribing a paper record); everyone else's events
    /// take the store's clock, so a seat cannot stamp the record's times.
    fn draft(&self, table: Option<&Table>) -> Result<Draft, RecordError> {
        if !self.action.is_object() || self.action.get("type").and_then(Value::as_str).is_none() {
            return Err(RecordError::Input("an action is a JSON object with a string \"type\"".into()));
        }
        if let (Some(at), Some(table)) = (&self.at, table)
            && !table.header.is_judge(&self.actor)
        {
            return Err(RecordError::Refused(Box::new(Violation::new(
                &table.view(),
                "only a judge supplies an event's time (`at`), transcribing a paper record",
                format!("{} is not a judge of this game, so it cannot set the time {at}", self.actor),
            ))));
        }
        Ok(Draft { actor: self.actor.clone(), action: self.action.clone(), at: self.at.clone() })
    }
}

/// A stored game, as a source the fold can read again (for a rewind).
pub struct StoredGame<'s> {
    pub store: &'s dyn Store,
    pub game: String,
}

impl<'s> StoredGame<'s> {
    pub fn new(store: &'s dyn Store, game: &str) -> StoredGame<'s> {
        StoredGame { store, game: game.to_string() }
    }
}

impl Source for StoredGame<'_> {
    type Error = RecordError;
    /// Read in ranges of `READ_RANGE` events, each a new read of the store
    /// (which checks the link to the event before it): a long scan through
    /// one sled iterator keeps the pages it passed in memory.
    fn events_from(&self, from: u64) -> Box<dyn Iterator<Item = Result<Event, RecordError>> + '_> {
        Box::new(in_ranges(from, |next| self.store.read(&self.game, next), |e| e.seq).map(|r| r.map_err(Into::into)))
    }

    /// In ranges as `events_from` reads.
    fn stored_from(&self, from: u64) -> Option<StoredBytes<'_, RecordError>> {
        let read = in_ranges(from, |next| self.store.read_stored(&self.game, next), |(seq, _)| *seq);
        Some(Box::new(read.map(|r| r.map_err(RecordError::from))))
    }

    fn hash_of(&self, seq: u64) -> Result<Option<String>, RecordError> {
        Ok(self.store.get(&self.game, seq)?.map(|e| e.hash))
    }

    /// The latest stored snapshot at or before `seq` that checks out
    /// against the stored event it names; one that does not is passed over
    /// for an earlier one (a few at most, then the fold starts from seq 0).
    fn snapshot(&self, seq: u64) -> Option<(Folder, Link)> {
        let mut at_most = seq;
        for _ in 0..SNAPSHOT_TRIES {
            let (at, bytes) = self.store.snapshot(&self.game, at_most).ok()??;
            if let Ok(Some(event)) = self.store.get(&self.game, at)
                && let Ok(folder) = Folder::from_snapshot(&bytes, at, &event.hash)
            {
                return Some((folder, event.link()));
            }
            at_most = at.checked_sub(1)?;
        }
        None
    }
}

/// Items read in ranges of `READ_RANGE`, each a new `read` from the seq
/// after the last item (`seq_of`), until one is an error or a read is empty.
fn in_ranges<'a, T: 'a, I>(
    from: u64,
    read: impl Fn(u64) -> Result<I, ReadError> + 'a,
    seq_of: fn(&T) -> u64,
) -> impl Iterator<Item = Result<T, ReadError>> + 'a
where
    I: Iterator<Item = Result<T, ReadError>> + 'a,
{
    let (mut next, mut range, mut left, mut done) = (from, None, 0, false);
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        if left == 0 {
            match read(next) {
                Ok(items) => (range, left) = (Some(items), READ_RANGE),
                Err(e) => {
                    done = true;
                    return Some(Err(e));
                }
            }
        }
        let item = range.as_mut()?.next();
        left -= 1;
        match item {
            Some(Ok(item)) => {
                next = seq_of(&item) + 1;
                Some(Ok(item))
            }
            Some(Err(e)) => {
                done = true;
                Some(Err(e))
            }
            None => {
                done = true;
                None
            }
        }
    })
}

/// Events read through one store iterator (see `StoredGame::events_from`).
const READ_RANGE: u64 = 10_000;

/// Stored snapshots tried, newest first, before a fold starts from seq 0.
const SNAPSHOT_TRIES: usize = 3;

/// An export file, read again from the start when the fold needs earlier events.
pub struct ExportFile {
    pub path: std::path::PathBuf,
}

impl Source for ExportFile {
    type Error = RecordError;
    fn events_from(&self, from: u64) -> Box<dyn Iterator<Item = Result<Event, RecordError>> + '_> {
        match std::fs::File::open(&self.path) {
            Ok(f) => Box::new(read_export(std::io::BufReader::new(f)).skip(from as usize)),
            Err(e) => {
                Box::new(std::iter::once(Err(RecordError::Io(format!("cannot open {}: {e}", self.path.display())))))
            }
        }
    }
}

/// An export held in memory (bytes as exported).
pub struct ExportBytes(pub Vec<u8>);

impl Source for ExportBytes {
    type Error = RecordError;
    fn events_from(&self, from: u64) -> Box<dyn Iterator<Item = Result<Event, RecordError>> + '_> {
        Box::new(read_export(std::io::Cursor::new(&self.0)).skip(from as usize))
    }
}

impl From<std::convert::Infallible> for RecordError {
    fn from(e: std::convert::Infallible) -> Self {
        match e {}
    }
}

/// A fold that stopped, as the record layer says it.
fn broken<E: Into<RecordError>>(e: FoldError<E>, what: &str) -> RecordError {
    match e {
        FoldError::Illegal { seq, violation } => RecordError::Broken { seq, why: format!("{what}: {violation}") },
        FoldError::Source(e) => e.into(),
    }
}

fn refused<E: Into<RecordError>>(e: FoldError<E>) -> RecordError {
    match e {
        FoldError::Illegal { violation, .. } => RecordError::Refused(violation),
        FoldError::Source(e) => e.into(),
    }
}

/// The canonical bytes of an event (what is stored, hashed and exported).
pub use crate::event::canonical_bytes;
