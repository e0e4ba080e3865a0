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

use std::io::BufRead;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{SyncSender, sync_channel};

use chrono::Utc;
use serde::Serialize;
use serde_json::Value;

use crate::event::{
    Chain, Draft, Event, EventError, Header, Link, Parsed, check_game_name, check_link, check_stored, decode,
    parse_stored, seal,
};
use crate::fold::{FoldError, Folder, Next, NoSnapshots, Source, StoredBytes};
use crate::json::parse_strict;
use crate::kernel::{View, Violation};
use crate::limits::{MAX_LINE_BYTES, MAX_STREAM_EVENTS, SNAPSHOT_EVERY, SNAPSHOT_SPARSE};
use crate::rules::Table;
use crate::store::{AppendError, ReadError, Store, Ticket};

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
            RecordError::Input(_) | RecordError::Io(_) | RecordError::Lost(_) => {}
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

/// The result of an append.
#[derive(Debug, Clone, Serialize)]
pub struct Appended {
    pub event: Event,
    /// True when this was a retry of an append already stored (same actor
    /// and action at the expected seq): the stored event is returned.
    pub duplicate: bool,
    /// Where the game stands after this event (for a retry, at the head).
    pub view: View,
}

/// A game loaded for recording: its state at the head.
pub struct Recorder<'s> {
    source: StoredGame<'s>,
    folder: Folder,
    head: Link,
    /// A snapshot of the fold is kept after every stored event whose seq is
    /// a multiple of this (0: none).
    every: u64,
    /// Set when an append folded in place was not stored and the state at
    /// `head` could not be folded again from the store (see `refold`): the
    /// fold is then past the head, and nothing more is appended through
    /// this recorder.
    unfolded: Option<String>,
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

/// A game's stored events up to `next`, then a batch being sealed after
/// them: what the fold reads again when a rewind in the batch goes back to
/// an event before it, in the store or earlier in the batch.
struct Pending<'a, 's> {
    stored: &'a StoredGame<'s>,
    /// The seq of the batch's first event (the stored game ends before it).
    next: u64,
    batch: &'a [Event],
}

impl Source for Pending<'_, '_> {
    type Error = RecordError;
    fn events_from(&self, from: u64) -> Box<dyn Iterator<Item = Result<Event, RecordError>> + '_> {
        let batch = self.batch.iter().cloned().map(Ok);
        match self.next.checked_sub(from) {
            Some(stored) if stored > 0 => Box::new(self.stored.events_from(from).take(stored as usize).chain(batch)),
            _ => Box::new(batch.skip((from - self.next) as usize)),
        }
    }

    fn hash_of(&self, seq: u64) -> Result<Option<String>, RecordError> {
        match seq.checked_sub(self.next) {
            None => self.stored.hash_of(seq),
            Some(i) => Ok(self.batch.get(i as usize).map(|e| e.hash.clone())),
        }
    }

    fn snapshot(&self, seq: u64) -> Option<(Folder, Link)> {
        self.stored.snapshot(seq.min(self.next.checked_sub(1)?))
    }
}

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

/// `sub` drafted against the state `table` and sealed as the event after
/// `head`, stamped now: its canonical bytes beside it.
fn sealed_after(sub: &Submission, table: Option<&Table>, head: &Link) -> Result<(Event, Vec<u8>), RecordError> {
    let draft = sub.draft(table)?;
    seal(&draft, Some(head), Utc::now()).map_err(|e| RecordError::Input(e.to_string()))
}

/// Offer-first: an action is recorded only if a move offered to its actor
/// at this point ([`Table::moves`]) admits it (`Move::admits`: its choices
/// among the options, its entries of the right kind and within bounds).
/// Only then does the fold check the typed values against the rules that
/// depend on them and apply the effect. So what the table is offered and
/// what the record takes are one list, as a chess program's `is_legal` is
/// membership in its legal moves.
///
/// If no move admits the action, the refusal says why in the rules' own
/// words where the fold has them (it would refuse too), else names the
/// nearest move of the action's type and what it does not admit; either
/// way with what the actor may record instead (`Violation::offered`).
///
/// Only new actions are held to the moves. Events already stored were
/// taken when they were appended, and folding them again (load, verify,
/// replay, import) checks them against the rules alone: a record made by an
/// earlier arbiter whose moves admitted less stays readable.
fn offered_first<S: Source + ?Sized>(folder: &Folder, event: &Event, source: &S) -> Result<(), RecordError>
where
    S::Error: Into<RecordError>,
{
    let Some(table) = folder.table() else { return Ok(()) };
    // A ruling or a note is one of the adjudication's moves; any other
    // action one of the ruleset's, which are all a refusal lists.
    let moves = match event.action.get("type").and_then(Value::as_str) {
        Some("ruling" | "note") => table.moves(event.seq),
        _ => table.combat_moves(),
    };
    let mine: Vec<&crate::kernel::moves::Move> = moves.iter().filter(|m| m.seat == event.actor).collect();
    if mine.iter().any(|m| m.admits(&event.action).is_ok()) {
        return Ok(());
    }
    let offered = crate::kernel::moves::offered_to(&moves, &event.actor);
    let mut violation = match folder.next(event, source) {
        Err(FoldError::Illegal { violation, .. }) => violation,
        Err(FoldError::Source(e)) => return Err(e.into()),
        Ok(_) => Box::new(not_offered(table, event, &mine)),
    };
    violation.offered = offered;
    Err(RecordError::Refused(violation))
}

/// The refusal of an action the rules would take but no move offers: the
/// moves of its type (if any) and why the first does not admit it.
fn not_offered(table: &Table, event: &Event, mine: &[&crate::kernel::moves::Move]) -> Violation {
    let kind = event.action.get("type").and_then(Value::as_str).unwrap_or_default();
    let who = table.header.name_of(&event.actor);
    // The nearest move: of the action's type, with the most of its fixed
    // fields as the action has them (a play's `effect`, a resolve's `what`).
    let alike = |m: &crate::kernel::moves::Move| match (m.action.as_object(), event.action.as_object()) {
        (Some(fixed), Some(given)) => fixed.iter().filter(|(k, v)| given.get(*k) == Some(v)).count(),
        _ => 0,
    };
    let same_type = mine.iter().filter(|m| m.kind.name() == kind);
    // `max_by_key` keeps the last of equals: reversed, the first offered.
    let message = match same_type.rev().max_by_key(|m| alike(m)) {
        Some(m) => format!(
            "{who}'s {kind} is not one of the moves offered now; as \"{}\": {}",
            m.label,
            m.admits(&event.action).expect_err("no move admits it")
        ),
        None => format!("{who} is offered no {kind} now"),
    };
    Violation::new(&table.view(), "an action is recorded as one of the moves offered now (`arbiter moves`)", message)
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

/// Creates a game: event 0 with the header. `opened_by` is the actor of event 0.
pub fn create(
    store: &dyn Store,
    game: &str,
    header: &Header,
    opened_by: &str,
    at: Option<String>,
) -> Result<Event, RecordError> {
    check_game_name(game).map_err(RecordError::Input)?;
    let action = serde_json::to_value(header).map_err(|e| RecordError::Input(e.to_string()))?;
    crate::event::check_name("actor", opened_by).map_err(RecordError::Input)?;
    let draft = Draft { actor: opened_by.to_string(), action, at };
    let (event, bytes) = seal(&draft, None, Utc::now()).map_err(|e| RecordError::Input(e.to_string()))?;
    Folder::new().next(&event, &Vec::<Event>::new()).map_err(refused)?;
    store.append(game, &event, &bytes)?;
    Ok(event)
}

impl<'s> Recorder<'s> {
    /// The game folded at its head, from its latest snapshot that checks out
    /// (else from seq 0), every event read verified on the way; snapshots
    /// kept every `limits::SNAPSHOT_EVERY` events.
    pub fn load(store: &'s dyn Store, game: &str) -> Result<Recorder<'s>, RecordError> {
        Recorder::load_with(store, game, SNAPSHOT_EVERY)
    }

    /// `load`, keeping a snapshot every `every` events (0: none).
    pub fn load_with(store: &'s dyn Store, game: &str, every: u64) -> Result<Recorder<'s>, RecordError> {
        let source = StoredGame::new(store, game);
        let (mut folder, mut head) = match source.snapshot(u64::MAX) {
            Some((folder, link)) => (folder, Some(link)),
            None => (Folder::new(), None),
        };
        for event in source.events_from(folder.len()) {
            let event = event?;
            folder.push(&event, &source).map_err(|e| broken(e, "no longer legal"))?;
            head = Some(event.link());
        }
        match head {
            Some(head) => Ok(Recorder { source, folder, head, every, unfolded: None }),
            None => Err(RecordError::NoSuchGame(game.to_string())),
        }
    }

    /// Whether a snapshot is kept after event `seq`.
    fn snapshot_after(&self, seq: u64) -> bool {
        self.every > 0 && seq > 0 && seq.is_multiple_of(self.every)
    }

    /// Keeps snapshots beside the events just stored, and removes the one
    /// two before each unless it is one of the sparse ones kept for good
    /// (`limits::SNAPSHOT_SPARSE`). A cache: one that is not kept (a full
    /// disk) makes later reads slower, not wrong.
    fn keep_snapshots(&self, snapshots: &[(u64, Vec<u8>)]) {
        let (store, game) = (self.source.store, &self.source.game);
        for (seq, bytes) in snapshots {
            if store.put_snapshot(game, *seq, bytes).is_err() {
                continue;
            }
            // The two latest stay: any seq near the head is within
            // `every` events after one of them (`replay --from` near the end).
            if let Some(before) = seq.checked_sub(2 * self.every).filter(|b| *b > 0)
                && !before.is_multiple_of(self.every * SNAPSHOT_SPARSE)
            {
                let _ = store.delete_snapshot(game, before);
            }
        }
    }

    pub fn table(&self) -> &Table {
        self.folder.table().expect("a loaded game has a state")
    }
    pub fn folder(&self) -> &Folder {
        &self.folder
    }
    pub fn head(&self) -> &Link {
        &self.head
    }

    /// Checks a submission against the rules at the head without storing it.
    pub fn check(&self, sub: &Submission) -> Result<(Event, Vec<u8>, Next), RecordError> {
        let (event, bytes) = sealed_after(sub, self.folder.table(), &self.head)?;
        offered_first(&self.folder, &event, &self.source)?;
        let next = self.folder.next(&event, &self.source).map_err(refused)?;
        Ok((event, bytes, next))
    }

    /// Checks a batch in order against the rules without storing anything;
    /// on refusal, the index of the first bad submission.
    pub fn check_batch(&self, subs: &[Submission]) -> Result<(), (usize, RecordError)> {
        self.seal_batch(subs, self.folder.clone(), false).map(|_| ())
    }

    /// Seals `subs` in order after the head, each folded on `folder` (the
    /// state at the head): the events with their bytes, the view after each
    /// (if `with_views`), and the state after the last; with views, the
    /// snapshots to keep once stored too.
    #[allow(clippy::type_complexity)]
    fn seal_batch(
        &self,
        subs: &[Submission],
        mut folder: Folder,
        with_views: bool,
    ) -> Result<(Vec<(Event, Vec<u8>)>, Vec<View>, Folder, Vec<(u64, Vec<u8>)>), (usize, RecordError)> {
        let mut snapshots = Vec::new();
        let next = self.head.seq + 1;
        let mut head = self.head.clone();
        let mut sealed: Vec<(Event, Vec<u8>)> = Vec::with_capacity(subs.len());
        let mut events: Vec<Event> = Vec::with_capacity(subs.len());
        let mut views = Vec::with_capacity(subs.len());
        for (i, sub) in subs.iter().enumerate() {
            let (event, bytes) = sealed_after(sub, folder.table(), &head).map_err(|e| (i, e))?;
            let source = Pending { stored: &self.source, next, batch: &events };
            offered_first(&folder, &event, &source).map_err(|e| (i, e))?;
            let folded = folder.next(&event, &source).map_err(|e| (i, refused(e)))?;
            folder.commit(&event, folded);
            if with_views {
                views.push(folder.table().expect("a folded game has a state").view());
                if self.snapshot_after(event.seq) {
                    snapshots.push((event.seq, folder.snapshot(&event.hash)));
                }
            }
            head = event.link();
            events.push(event.clone());
            sealed.push((event, bytes));
        }
        Ok((sealed, views, folder, snapshots))
    }

    /// The state at `head` folded again from the store (from its latest
    /// snapshot at or before it), after an append folded in place was not
    /// stored. If that fails too, the recorder appends nothing more.
    fn refold(&mut self) {
        let head = self.head.seq;
        let mut folder = match self.source.snapshot(head) {
            Some((folder, _)) => folder,
            None => Folder::new(),
        };
        let mut folded = || -> Result<(), RecordError> {
            for event in self.source.events_from(folder.len()).take((head + 1).saturating_sub(folder.len()) as usize) {
                folder.push(&event?, &self.source).map_err(|e| broken(e, "no longer legal"))?;
            }
            match folder.len() == head + 1 {
                true => Ok(()),
                false => Err(RecordError::Io(format!("the store holds fewer than {} events", head + 1))),
            }
        };
        match folded() {
            Ok(()) => self.folder = folder,
            Err(e) => {
                self.unfolded =
                    Some(format!("the state at seq {head} could not be folded again after a failed append: {e}"))
            }
        }
    }

    /// Appends one action. With `expect`, it must go at that seq (optimistic
    /// concurrency); a retry of an append already stored at `expect` returns
    /// the stored event.
    pub fn append(&mut self, sub: &Submission, expect: Option<u64>) -> Result<Appended, RecordError> {
        let mut done = self.append_batch(std::slice::from_ref(sub), expect).map_err(|(_, e)| e)?;
        Ok(done.pop().expect("one appended"))
    }

    /// The leading run of `subs` already stored at `expect`, `expect + 1`,
    /// ... (same actor and action): a retry of a batch whose answer was
    /// lost. Empty without `expect`.
    pub fn already_stored(&self, subs: &[Submission], expect: Option<u64>) -> Result<Vec<Event>, RecordError> {
        let Some(expected) = expect else { return Ok(Vec::new()) };
        let next = self.head.seq + 1;
        let mut stored = Vec::new();
        for (i, sub) in subs.iter().enumerate() {
            let seq = expected.saturating_add(i as u64);
            if seq >= next {
                break;
            }
            match self.source.store.get(&self.source.game, seq)? {
                Some(e) if e.actor == sub.actor && e.action == sub.action => stored.push(e),
                _ => break,
            }
        }
        Ok(stored)
    }

    /// Appends `subs` in order as one durable write (one
    /// `Store::append_batch`: all of them or none, one sync): each is sealed
    /// after the one before and folded, and nothing is stored unless every
    /// one is legal. With `expect`, the batch must go at that seq; a leading
    /// run already stored there (a retry, as for `append`) is returned as
    /// duplicates and the rest goes at the head. On failure, the index of
    /// the submission it concerns; nothing from there on was stored.
    pub fn append_batch(
        &mut self,
        subs: &[Submission],
        expect: Option<u64>,
    ) -> Result<Vec<Appended>, (usize, RecordError)> {
        let stored = self.store_batch(subs, expect)?;
        let durable = self.source.store.wait_durable(stored.ticket);
        self.acknowledge(stored, durable)
    }

    /// The first half of `append_batch`: checks and stores, and returns
    /// before the events are durable (`Store::insert_batch`), for a caller
    /// that waits for the disk without holding a thread (the server:
    /// `Store::durable`), then hands the result to `acknowledge`. Later
    /// appends through this recorder may be stored meanwhile: they follow
    /// these, and no sync covers them without covering these.
    pub fn store_batch(&mut self, subs: &[Submission], expect: Option<u64>) -> Result<Stored, (usize, RecordError)> {
        let mut done: Vec<Appended> = self
            .already_stored(subs, expect)
            .map_err(|e| (0, e))?
            .into_iter()
            .map(|event| Appended { event, duplicate: true, view: self.table().view() })
            .collect();
        let (k, rest) = (done.len(), &subs[done.len()..]);
        if rest.is_empty() {
            // A retry of appends already stored: they may be stored by an
            // insert still waiting for its sync, so the answer waits for
            // every insert made so far (at no cost once they are durable).
            let ticket = self.source.store.newest_ticket();
            return Ok(Stored { done, first: k, ticket, snapshots: Vec::new() });
        }
        if let Some(why) = &self.unfolded {
            return Err((k, RecordError::Io(format!("{why}; load the game again"))));
        }
        let next = self.head.seq + 1;
        if let Some(expected) = expect
            && expected + k as u64 != next
        {
            return Err((k, RecordError::Conflict { expected: expected + k as u64, next }));
        }
        // One event folds on the recorder's own state in place (a copy of
        // the state and the drop of the old one were a fifth of an append's
        // CPU with 64 tables): a refusal leaves it as it was, and a store
        // that does not take the event gets it folded again (`refold`), a
        // cost paid only on that rare path. Several fold on a copy, which
        // replaces the state once they are stored.
        let (sealed, views, snapshots, ticket) = match rest {
            [sub] => {
                let (event, bytes) = sealed_after(sub, self.folder.table(), &self.head).map_err(|e| (k, e))?;
                offered_first(&self.folder, &event, &self.source).map_err(|e| (k, e))?;
                if let Err(e) = self.folder.push(&event, &self.source) {
                    return Err((k, self.with_offers(refused(e), &sub.actor)));
                }
                let view = self.table().view();
                let sealed = vec![(event, bytes)];
                let ticket = match self.source.store.insert_batch(&self.source.game, &sealed) {
                    Ok(ticket) => ticket,
                    Err(e) => {
                        self.refold();
                        return Err((k, e.into()));
                    }
                };
                let event = &sealed[0].0;
                let snapshots = match self.snapshot_after(event.seq) {
                    true => vec![(event.seq, self.folder.snapshot(&event.hash))],
                    false => Vec::new(),
                };
                (sealed, vec![view], snapshots, ticket)
            }
            _ => {
                let (sealed, views, folder, snapshots) =
                    self.seal_batch(rest, self.folder.clone(), true).map_err(|(i, e)| (k + i, e))?;
                let ticket = self.source.store.insert_batch(&self.source.game, &sealed).map_err(|e| (k, e.into()))?;
                self.folder = folder;
                (sealed, views, snapshots, ticket)
            }
        };
        self.head = sealed.last().expect("a batch").0.link();
        done.extend(sealed.into_iter().zip(views).map(|((event, _), view)| Appended { event, duplicate: false, view }));
        Ok(Stored { done, first: k, ticket, snapshots })
    }

    /// A refusal of `actor`'s action at the head, with what `actor` may
    /// record there instead (`Violation::offered`): the moves are worked out
    /// only here, on the refusal's cold path.
    fn with_offers(&self, e: RecordError, actor: &str) -> RecordError {
        match (e, self.folder.table()) {
            (RecordError::Refused(mut v), Some(table)) => {
                v.offered = crate::kernel::moves::offered_to(&table.moves(self.head.seq + 1), actor);
                RecordError::Refused(v)
            }
            (e, _) => e,
        }
    }

    /// The second half of `append_batch`: `durable` is what the store said
    /// of `stored.ticket`. Once durable, the appends are acknowledged and
    /// their snapshots kept. If not, the store has failed (a sync that
    /// fails fails it), this recorder's fold is past what is durable, and
    /// it appends nothing more: the game is loaded again.
    pub fn acknowledge(
        &mut self,
        stored: Stored,
        durable: Result<(), AppendError>,
    ) -> Result<Vec<Appended>, (usize, RecordError)> {
        if let Err(e) = durable {
            self.unfolded = Some(format!("an append was stored but not made durable ({e})"));
            return Err((stored.first, e.into()));
        }
        self.keep_snapshots(&stored.snapshots);
        Ok(stored.done)
    }
}

/// Appends stored by `Recorder::store_batch`, not yet acknowledged: only
/// `Recorder::acknowledge`, once the store says they are durable, returns
/// them to the caller.
#[must_use = "stored appends are acknowledged only once durable (`Recorder::acknowledge`)"]
pub struct Stored {
    done: Vec<Appended>,
    /// The index in the batch of the first event newly stored (those
    /// before were already stored: a retry).
    first: usize,
    /// What the store waits on to make them durable.
    pub ticket: Ticket,
    snapshots: Vec<(u64, Vec<u8>)>,
}

/// What a successful verification found.
#[derive(Debug, Clone, Serialize)]
pub struct Verified {
    pub events: u64,
    pub head: String,
    /// Seq ranges that judges' rewinds took back.
    pub rewound: Vec<(u64, u64)>,
}

/// Verifies a record from seq 0: hashes, links, and a full re-fold in which
/// every event must still be legal and every ruling names a real event by
/// its hash and was made by a judge. Streams: memory is one state, whatever
/// the length. No snapshot is used (a rewind folds again from seq 0): a
/// verification never rests on a cache.
pub fn verify<S>(source: &S, expect_head: Option<&str>) -> Result<(Verified, Folder), RecordError>
where
    S: Source + ?Sized,
    S::Error: Into<RecordError>,
{
    verify_from(&NoSnapshots(source), Folder::new(), None, expect_head)
}

/// `verify` from a fold already made (`start`, after the event `prev`
/// links to): the events after it are read, hashed, linked and folded.
///
/// A source that gives its stored bytes (a stored game) is read, checked
/// and folded on two threads when the record is long enough for a thread
/// to pay: one reads the bytes and parses each event (strict, canonical,
/// once), the other checks each hash and link on the same bytes and folds
/// (`each_event`). The first broken event wins, as it would on
/// one thread: the folding thread meets the events, and a reading error,
/// in order.
pub fn verify_from<S>(
    source: &S,
    start: Folder,
    prev: Option<Link>,
    expect_head: Option<&str>,
) -> Result<(Verified, Folder), RecordError>
where
    S: Source + ?Sized,
    S::Error: Into<RecordError>,
{
    let mut folder = start;
    let mut chain = Chain::after(prev);
    each_event(source, folder.len(), None, &mut chain, |event| {
        folder.push(&event, source).map_err(|e| broken(e, "the event is not legal"))?;
        Ok(ControlFlow::Continue(()))
    })?;
    let Some(head) = chain.into_last() else {
        return Err(RecordError::Broken { seq: 0, why: "the record is empty".into() });
    };
    if let Some(want) = expect_head
        && want != head.hash
    {
        return Err(RecordError::Broken {
            seq: head.seq,
            why: format!(
                "the head is {}, not the expected {want} (events were added or removed at the end)",
                head.hash
            ),
        });
    }
    let rewound = folder.rewound().to_vec();
    Ok((Verified { events: head.seq + 1, head: head.hash, rewound }, folder))
}

/// Stored events handed from the reading thread to the checking one at a time.
const BATCH: usize = 256;

/// Batches read ahead of the checking at most: memory stays bounded whatever
/// the two threads' pace.
const BATCHES_AHEAD: usize = 4;

/// A stored event as the reading thread hands it over: checked (parsed,
/// and its hash checked against its bytes), or its bytes, where the reading
/// was the slower thread and left that to the checking one (see
/// `read_ahead`).
enum Read {
    Checked(Parsed),
    Bytes { seq: u64, bytes: Vec<u8> },
}

/// A stored event that does not check out, as reading it always said.
fn corrupt(seq: u64, why: EventError) -> RecordError {
    ReadError::Corrupt { seq, why }.into()
}

/// The check of a stored event on its own: strict JSON in canonical form,
/// the envelope, the hash of its bytes and the seq it is stored under.
fn check_read(seq: u64, bytes: &[u8]) -> Result<Parsed, RecordError> {
    let parsed = parse_stored(bytes).map_err(|why| corrupt(seq, why))?;
    check_stored(&parsed, seq, bytes).map_err(|why| corrupt(seq, why))?;
    Ok(parsed)
}

/// Up to `BATCH` stored events, each checked on its own if `check`, and whether
/// reading is over (the events ran out, or one did not check out: nothing
/// after the first broken event matters).
fn read_batch(stored: &mut StoredBytes<'_, RecordError>, check: bool) -> (Vec<Result<Read, RecordError>>, bool) {
    let mut batch = Vec::with_capacity(BATCH);
    while batch.len() < BATCH {
        let Some(item) = stored.next() else {
            return (batch, true);
        };
        let read = item.and_then(|(seq, bytes)| match check {
            true => check_read(seq, &bytes).map(Read::Checked),
            false => Ok(Read::Bytes { seq, bytes }),
        });
        let broken = read.is_err();
        batch.push(read);
        if broken {
            return (batch, true);
        }
    }
    (batch, false)
}

/// The reading thread: batches until reading is over or the checking
/// thread stops taking them (it stopped at a broken event, or was done).
/// `queued` counts the batches handed over and not yet taken. While at
/// least half of `BATCHES_AHEAD` wait, the checking thread is the slower
/// and this one checks the next batch's events on their own too (parsed and
/// hashed: `check_read`); below that, the checking thread is catching up
/// with this one, and the next batch goes unchecked for it to check. So the
/// two share the work whichever is slower. On a long
/// record the reading is: at 1,000,000 events sled's pages no longer fit
/// its cache, and perf showed this thread busy 95% of the time and the
/// checking one 60%; sharing the parsing took verify from about 330,000 to
/// about 500,000 events/s there. (Leaving a batch unparsed whenever none
/// waited gained nothing: one almost always did.)
fn read_ahead(
    mut stored: StoredBytes<'_, RecordError>,
    to_check: SyncSender<Vec<Result<Read, RecordError>>>,
    queued: &AtomicUsize,
) {
    loop {
        let check = queued.load(Ordering::Relaxed) >= BATCHES_AHEAD / 2;
        let (batch, over) = read_batch(&mut stored, check);
        queued.fetch_add(1, Ordering::Relaxed);
        if to_check.send(batch).is_err() || over {
            return;
        }
    }
}

/// The events of `source` from `from` on, each checked as `verify` checks
/// it, then handed to `each`, in seq order, until they run out (or pass
/// `to`), one does not check out (its error), or `each` stops or fails:
/// from their stored bytes on two threads (`each_stored`) where the source
/// has them, else decoded one at a time. Either way each is linked to the
/// one before (`chain`, which starts at the link of the event before `from`).
pub(crate) fn each_event<S>(
    source: &S,
    from: u64,
    to: Option<u64>,
    chain: &mut Chain,
    mut each: impl FnMut(Event) -> Result<ControlFlow<()>, RecordError>,
) -> Result<(), RecordError>
where
    S: Source + ?Sized,
    S::Error: Into<RecordError>,
{
    let within = move |seq: u64| to.is_none_or(|t| seq <= t);
    if let Some(stored) = source.stored_from(from) {
        // Nothing past `to` is read.
        let stored = stored
            .map(|read| read.map_err(Into::into))
            .take_while(move |read| read.as_ref().map_or(true, |(seq, _)| within(*seq)));
        return each_stored(Box::new(stored), chain, each);
    }
    for event in source.events_from(from) {
        let event = event.map_err(Into::into)?;
        if !within(event.seq) {
            break;
        }
        // A broken link is reported at the position where the record breaks.
        let at = chain.last().map_or(0, |p| p.seq + 1);
        chain.push_event(&event).map_err(|why| RecordError::Broken { seq: at, why: why.to_string() })?;
        if each(event)?.is_break() {
            break;
        }
    }
    Ok(())
}

/// Stored events checked from their bytes and handed to `each` in seq
/// order, until they run out, one does not check out (its error), or
/// `each` stops or fails. Two threads: one reads, and checks each event on
/// its own where this one is the slower (`check_read`: strict JSON in
/// canonical form, the envelope, the hash of the bytes, the seq they are
/// stored under); this one checks the rest, links each to the event before
/// (`chain`), then calls `each`. The first batch is read here: a record
/// that ends within it is checked with no thread.
fn each_stored(
    mut stored: StoredBytes<'_, RecordError>,
    chain: &mut Chain,
    mut each: impl FnMut(Event) -> Result<ControlFlow<()>, RecordError>,
) -> Result<(), RecordError> {
    let mut step = |read: Result<Read, RecordError>| {
        let parsed = match read? {
            Read::Checked(parsed) => parsed,
            Read::Bytes { seq, bytes } => check_read(seq, &bytes)?,
        };
        let seq = parsed.event.seq;
        chain.push(&parsed.event, parsed.at).map_err(|why| corrupt(seq, why))?;
        each(parsed.event)
    };
    let (first, over) = read_batch(&mut stored, true);
    if over {
        for read in first {
            if step(read)?.is_break() {
                break;
            }
        }
        return Ok(());
    }
    let queued = AtomicUsize::new(0);
    std::thread::scope(|threads| {
        let (to_check, read) = sync_channel(BATCHES_AHEAD);
        let queued = &queued;
        threads.spawn(move || read_ahead(stored, to_check, queued));
        // Returning drops the receiver: the reading thread stops at its next batch.
        let taken = read.into_iter().inspect(|_| {
            queued.fetch_sub(1, Ordering::Relaxed);
        });
        for batch in std::iter::once(first).chain(taken) {
            for read in batch {
                if step(read)?.is_break() {
                    return Ok(());
                }
            }
        }
        Ok(())
    })
}

/// What `verify --snapshots` found for one game's snapshots.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SnapshotsChecked {
    /// Snapshots kept for the game.
    pub kept: u64,
    /// Snapshots that check out and hold exactly the fold from seq 0.
    pub agree: u64,
    /// Snapshots no reader trusts (torn, damaged, stale, of another format
    /// or ruleset version, past the head), and why: folds pass over them.
    pub ignored: Vec<(u64, String)>,
}

/// Verifies a stored game as `verify` does (from seq 0, no snapshot used)
/// and compares each snapshot kept for it with the fold at its seq. A
/// snapshot that checks out (checksum, format, ruleset, the hash of the
/// event it follows) but holds another state would give wrong answers: the
/// record is then reported broken at that seq.
pub fn verify_snapshots(store: &dyn Store, game: &str) -> Result<(Verified, SnapshotsChecked), RecordError> {
    let seqs = store.snapshot_seqs(game)?;
    let stored = StoredGame::new(store, game);
    let source = NoSnapshots(&stored);
    let mut checked = SnapshotsChecked { kept: seqs.len() as u64, ..Default::default() };
    let mut wanted = seqs.iter().copied().peekable();
    let mut folder = Folder::new();
    let mut prev: Option<Link> = None;
    for event in source.events_from(0) {
        let event = event?;
        let at = prev.as_ref().map_or(0, |p| p.seq + 1);
        check_link(&event, prev.as_ref()).map_err(|why| RecordError::Broken { seq: at, why: why.to_string() })?;
        folder.push(&event, &source).map_err(|e| broken(e, "the event is not legal"))?;
        while let Some(seq) = wanted.next_if(|s| *s <= event.seq) {
            let bytes = match store.snapshot(game, seq)? {
                Some((s, bytes)) if s == seq => bytes,
                _ => continue,
            };
            match Folder::from_snapshot(&bytes, seq, &event.hash) {
                Err(why) => checked.ignored.push((seq, why)),
                Ok(kept) if kept == folder => checked.agree += 1,
                Ok(_) => {
                    return Err(RecordError::Broken {
                        seq,
                        why:
                            "the snapshot after this event checks out but holds another state than the fold from seq 0"
                                .into(),
                    });
                }
            }
        }
        prev = Some(event.link());
    }
    let Some(head) = prev else {
        return Err(RecordError::Broken { seq: 0, why: "the record is empty".into() });
    };
    checked.ignored.extend(wanted.map(|s| (s, "it follows no stored event (past the head)".to_string())));
    let rewound = folder.rewound().to_vec();
    Ok((Verified { events: head.seq + 1, head: head.hash, rewound }, checked))
}

/// Reads an export (JSON Lines, one event per line), each event checked on
/// its own (strict JSON, hash); `verify` checks the chain and the rules.
pub fn read_export(reader: impl BufRead) -> impl Iterator<Item = Result<Event, RecordError>> {
    let mut lines = reader.split(b'\n').enumerate();
    let mut count: u64 = 0;
    std::iter::from_fn(move || {
        let (n, line) = lines.next()?;
        let line_no = n as u64 + 1;
        let seq = count;
        let broken = move |why: String| RecordError::Broken { seq, why: format!("line {line_no}: {why}") };
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                return Some(Err(RecordError::Io(format!("cannot read line {line_no}: {e}"))));
            }
        };
        if line.len() > MAX_LINE_BYTES {
            return Some(Err(broken(format!("line longer than {MAX_LINE_BYTES} bytes"))));
        }
        if count >= MAX_STREAM_EVENTS {
            return Some(Err(broken(EventError::StreamFull.to_string())));
        }
        let text = match std::str::from_utf8(&line) {
            Ok(t) => t,
            Err(_) => return Some(Err(broken("not UTF-8".into()))),
        };
        if text.trim().is_empty() {
            return Some(Err(broken("empty line".into())));
        }
        count += 1;
        // An exported line is exactly the canonical JSON of its event, so any
        // changed byte, even white space, is found.
        Some(match decode(text) {
            Ok((event, bytes)) if bytes == line => Ok(event),
            Ok(_) => Err(broken("not the canonical JSON of the event (was the file reformatted?)".into())),
            Err(why) => Err(broken(why.to_string())),
        })
    })
}

/// Imports a verified export as a new game: everything is checked before
/// anything is stored.
pub fn import(store: &dyn Store, game: &str, events: Vec<Event>) -> Result<Verified, RecordError> {
    check_game_name(game).map_err(RecordError::Input)?;
    if store.head(game)?.is_some() {
        return Err(RecordError::Exists(game.to_string()));
    }
    let (verified, _) = verify(&events, None)?;
    let batch: Vec<(Event, Vec<u8>)> = events
        .into_iter()
        .map(|e| {
            let b = canonical_bytes(&e);
            (e, b)
        })
        .collect();
    store.append_batch(game, &batch)?;
    Ok(verified)
}

/// The canonical bytes of an event (what is stored, hashed and exported).
pub use crate::event::canonical_bytes;
