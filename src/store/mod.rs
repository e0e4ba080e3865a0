//! The store: append-only streams of canonical event bytes, one per game.
//!
//! The trait is small on purpose: a backend keeps bytes in order and makes
//! them durable; everything about what the bytes mean (hashes, links,
//! rules) is checked above it, in `record`, and again here on the way in
//! and out (TigerBeetle style: assert on both sides of the boundary).
//! `sled` is the embedded default; `postgres` keeps the same contract in
//! PostgreSQL, for several servers on one database. `open` picks one by
//! `Location`; the store tests run on both (tests/common/backend.rs).
//!
//! The write path of a backend (see `SledStore` and ARCHITECTURE.md): an
//! append is checked against the stream's head and stored with its entries
//! of the verifiable log all or none (never a fork), then made durable by
//! a group commit: one sync at a time covers every insert made before it
//! began, the appends it covers wait for it and are acknowledged together,
//! and a sync that fails fails the store. So concurrent appends (of any
//! games) share syncs, and a batch is one sync.

pub mod checkpoints;
// Public, hidden, only for the tests that damage a stored chunk on purpose.
#[doc(hidden)]
pub mod chunk;
pub(crate) mod dir;
// Public, hidden, only for the tests that read the journal a crash leaves.
#[doc(hidden)]
pub mod journal;
pub(crate) mod postgres;
pub(crate) mod sled;

use crate::event::{Event, EventError, Link};
use crate::tlog::{Hash, Nodes};

pub use self::postgres::{PostgresStore, is_url as is_postgres_url};
pub use self::sled::{Copied, SetAside, SledStore};

/// The head of a stream: its last event.
pub type Head = Link;

/// Why an append did not happen. A conflict (someone else appended first)
/// is distinct from an I/O failure: the caller re-reads and decides.
#[derive(Debug, thiserror::Error)]
pub enum AppendError {
    #[error("conflict: expected to append seq {expected}, but the stream's next seq is {next}")]
    Conflict { expected: u64, next: u64, head: Option<Head> },
    #[error("game {0:?} already exists")]
    Exists(String),
    #[error("game {0:?} does not exist")]
    NoSuchGame(String),
    #[error("refused by the store: {0}")]
    Invalid(#[from] EventError),
    #[error("store I/O error: {0}")]
    Io(String),
    /// The store cannot be reached (a database down, restarting, or
    /// refusing connections): nothing was stored, or, where the message
    /// says so, the outcome is unknown and a retry at the same expected
    /// seq is safe. Worth retrying later, unlike `Io`.
    #[error("the store is unavailable: {0}")]
    Unavailable(String),
}

/// One leaf of the log as the store holds it (`Store::log_leaves`).
#[derive(Debug, Clone)]
pub struct LeafRead {
    /// The event the leaf names.
    pub game: String,
    pub seq: u64,
    /// That event, read and checked as `Store::get` does (its hash, its
    /// link to the event before it); None if the store does not hold it.
    pub event: Option<Event>,
    /// The leaf's hash as the store keeps it (`log_node(0, index)`).
    pub stored: Hash,
    /// Where the store says (game, seq) is in the log (`log_position`).
    pub position: Option<u64>,
}

/// Why a store did not open. A store that holds less than its last
/// checkpoint, or other events than it, is `Lost`: the one failure an
/// audit log must never pass over. A store held by another process (sled allows
/// one) is told apart, so the CLI can say who holds it and what to do.
///
/// A store that cannot be written where it is (read-only media, a full disk
/// or quota, a file size limit, no permission) is `Unwritable`: even a
/// read opens sled, which writes at every open, so a reading verb then reads
/// a copy (`SledStore::open_for_reading`) and a writing verb stops, with the
/// store left as it was (see `SledStore::open`).
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("the store at {dir} is in use by another process")]
    InUse { dir: String },
    #[error("the store at {dir} cannot be written ({why})")]
    Unwritable { dir: String, why: String },
    #[error("cannot open store at {dir}: {why}")]
    Io { dir: String, why: String },
    #[error("{0}")]
    Lost(String),
    /// A sled store of a layout before 4, written by an unreleased build.
    #[error(
        "the store at {dir} has {found}: this release reads layout 4 only, and stores of earlier layouts were written by unreleased builds of arbiter"
    )]
    Layout { dir: String, found: String },
}

/// Why a read did not return an event.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("game {0:?} does not exist")]
    NoSuchGame(String),
    #[error("stored event seq {seq} is broken: {why}")]
    Corrupt { seq: u64, why: EventError },
    #[error("the store's log is broken: {0}")]
    Log(String),
    #[error("store I/O error: {0}")]
    Io(String),
    /// The store cannot be reached (see `AppendError::Unavailable`).
    #[error("the store is unavailable: {0}")]
    Unavailable(String),
}

/// A read an append needed failed: said once, in the read's own words (not
/// "store I/O error: store I/O error: ..."), and a store that cannot be
/// reached stays `Unavailable`, worth a retry.
impl From<ReadError> for AppendError {
    fn from(e: ReadError) -> AppendError {
        match e {
            ReadError::Io(m) => AppendError::Io(m),
            ReadError::Unavailable(m) => AppendError::Unavailable(m),
            other => AppendError::Io(other.to_string()),
        }
    }
}

/// Opens the store at `location`: a PostgreSQL URL (`postgres://...`), or
/// else a directory, sled's. The one place a verb's store is chosen.
pub fn open(location: &Location) -> Result<Box<dyn Store>, OpenError> {
    Ok(match location {
        Location::Dir(dir) => Box::new(SledStore::open(dir)?),
        Location::Database(url) => Box::new(PostgresStore::open(url)?),
    })
}

/// Where a store is: sled's directory or a PostgreSQL database's URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    Dir(std::path::PathBuf),
    Database(String),
}

impl Location {
    /// `given` on a command line: a PostgreSQL URL, or else a directory.
    pub fn named(given: &str) -> Location {
        match postgres::is_url(given) {
            true => Location::Database(given.to_string()),
            false => Location::Dir(given.into()),
        }
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Dir(dir) => write!(f, "{}", dir.display()),
            Location::Database(url) => write!(f, "{}", postgres::shown_url(url)),
        }
    }
}

/// A backend that keeps each game's events in order, durably.
pub trait Store: Send + Sync {
    /// Names of all games, sorted.
    fn games(&self) -> Result<Vec<String>, ReadError>;

    /// The last event of `game`, or None if the game does not exist.
    fn head(&self, game: &str) -> Result<Option<Head>, ReadError>;

    /// Events of `game` from `from` on, in order, each verified (hash, and
    /// link to the one before it within this read).
    fn read(&self, game: &str, from: u64) -> Result<Events<'_>, ReadError>;

    /// The stored bytes of `game`'s events from `from` on, in order, each
    /// with the seq it is stored under, not checked: for a reader that
    /// checks them itself (`event::parse_stored`, `check_stored`, `Chain`:
    /// what `read` does), on a thread of its own (`record::verify`).
    fn read_stored(&self, game: &str, from: u64) -> Result<StoredEvents<'_>, ReadError>;

    /// Appends `event` (already sealed; `bytes` its canonical JSON) if and
    /// only if it is the next event of the stream: seq = head + 1 and prev =
    /// head's hash (seq 0 creates the game). Returns only once durable.
    fn append(&self, game: &str, event: &Event, bytes: &[u8]) -> Result<(), AppendError>;

    /// Appends several events in order as one durable write: all of them
    /// or none (a batch of `append -`, import, fork). Each is checked like
    /// `append`.
    fn append_batch(&self, game: &str, events: &[(Event, Vec<u8>)]) -> Result<(), AppendError>;

    /// The first half of `append_batch`, for a caller that waits for the
    /// disk without holding a thread (the server, on tokio): checks and
    /// stores `events` as `append_batch` does, readable at once, but
    /// returns before they are durable. They are acknowledged only once
    /// `wait_durable` or `durable` returns Ok for what this returns. A
    /// backend whose append is one round trip (PostgreSQL's commit) makes
    /// them durable here, as this default does.
    fn insert_batch(&self, game: &str, events: &[(Event, Vec<u8>)]) -> Result<Ticket, AppendError> {
        self.append_batch(game, events).map(|()| Ticket::DURABLE)
    }

    /// A ticket that covers every insert made so far: for a caller that
    /// answers with events already stored (a retry), which an insert still
    /// waiting for its sync may have stored.
    fn newest_ticket(&self) -> Ticket {
        Ticket::DURABLE
    }

    /// The second half of `append_batch`: returns once `ticket` is
    /// durable (sled's group commit; this thread may lead its sync).
    fn wait_durable(&self, _ticket: Ticket) -> Result<(), AppendError> {
        Ok(())
    }

    /// `wait_durable` without holding the caller's thread: a future the
    /// server awaits on its async threads (any executor will do: sled's
    /// leader hands its sync to a thread of the store's own).
    fn durable(&'static self, _ticket: Ticket) -> Durable {
        Box::pin(std::future::ready(Ok(())))
    }

    /// `append_batch` as a future the server awaits on its async threads,
    /// for a store whose append is a round trip to a database (PostgreSQL):
    /// Ok once `events` are stored and durable; an error as
    /// `append_batch`'s (a `Conflict` stored nothing). The events are
    /// checked as `append_batch` checks them. This default stores them
    /// here (`insert_batch`) and awaits `durable`: an error then may also
    /// be a store that failed after storing them, so a caller folds the
    /// game again from the store after any error.
    fn append_batch_async(&'static self, game: &str, events: &[(Event, Vec<u8>)]) -> Durable {
        match self.insert_batch(game, events) {
            Ok(ticket) => self.durable(ticket),
            Err(e) => Box::pin(std::future::ready(Err(e))),
        }
    }

    /// A setting beside the games (the server's hashed tokens and read
    /// access). Settings are not events: they are not hashed or chained,
    /// and they are not part of any export.
    fn setting(&self, key: &str) -> Result<Option<Vec<u8>>, ReadError>;

    /// Every setting whose key starts with `prefix`, in key order.
    fn settings(&self, prefix: &str) -> Result<Vec<(String, Vec<u8>)>, ReadError>;

    /// Sets a setting; returns only once durable.
    fn put_setting(&self, key: &str, value: &[u8]) -> Result<(), AppendError>;

    /// Sets a setting to `new` (None: removes it) only if it holds
    /// `expected` now (None: it is not set), in one atomic step; returns
    /// whether it did, and only once durable. Of two that race on one key,
    /// only the one that saw what is there wins (see `access::creating`).
    fn swap_setting(&self, key: &str, expected: Option<&[u8]>, new: Option<&[u8]>) -> Result<bool, AppendError>;

    /// How many events the verifiable log holds (every game's, in the
    /// order they were stored; see `crate::tlog`).
    fn log_size(&self) -> Result<u64, ReadError>;

    /// Leaves `from..from + count` of the log, in order, each with what
    /// `checkpoints::verify_log` checks of it; fewer where the log ends (or
    /// has no leaf at the next index). The default asks for each leaf on
    /// its own (four reads, memory reads on sled); a database answers a
    /// whole batch in one round trip.
    fn log_leaves(&self, from: u64, count: u64) -> Result<Vec<LeafRead>, ReadError> {
        let mut leaves = Vec::new();
        for index in from..from.saturating_add(count) {
            let Some((game, seq)) = self.log_leaf(index)? else { break };
            let event = self.get(&game, seq)?;
            let stored = self.log_node(0, index)?;
            let position = self.log_position(&game, seq)?;
            leaves.push(LeafRead { game, seq, event, stored, position });
        }
        Ok(leaves)
    }

    /// The hash of the complete subtree (level, index) of the log: leaves
    /// `[index << level, (index + 1) << level)`; level 0 is a leaf hash.
    fn log_node(&self, level: u8, index: u64) -> Result<Hash, ReadError>;

    /// Which event is leaf `index` of the log: (game, seq).
    fn log_leaf(&self, index: u64) -> Result<Option<(String, u64)>, ReadError>;

    /// The log position of event `seq` of `game`, stored beside it.
    fn log_position(&self, game: &str, seq: u64) -> Result<Option<u64>, ReadError>;

    /// The latest snapshot of `game` at or before `seq`: (its seq, its
    /// bytes). Snapshots are a cache beside the events (see
    /// `crate::fold::Folder::snapshot`): a backend may keep none.
    fn snapshot(&self, _game: &str, _seq: u64) -> Result<Option<(u64, Vec<u8>)>, ReadError> {
        Ok(None)
    }

    /// Keeps a snapshot of `game` after event `seq`. Not synced on its own
    /// (the next durable write carries it): a snapshot lost or torn in a
    /// crash is only slower, never wrong, since every reader checks it.
    fn put_snapshot(&self, _game: &str, _seq: u64, _bytes: &[u8]) -> Result<(), AppendError> {
        Ok(())
    }

    /// The seqs of the snapshots kept for `game`, ascending.
    fn snapshot_seqs(&self, _game: &str) -> Result<Vec<u64>, ReadError> {
        Ok(Vec::new())
    }

    /// Removes the snapshot of `game` after `seq`, if there is one:
    /// answers stay the same, only slower.
    fn delete_snapshot(&self, _game: &str, _seq: u64) -> Result<(), AppendError> {
        Ok(())
    }

    /// How many durable writes this store made since it was opened: sled's
    /// group-commit syncs, PostgreSQL's committed transactions of events
    /// and settings. A batch is one; for tests and the benchmark.
    fn syncs(&self) -> u64;

    /// The signed checkpoints of the log kept with this store, oldest first
    /// (`checkpoints`: sled's in `DATA/checkpoints`, PostgreSQL's in a table).
    fn checkpoints(&self) -> Result<Vec<checkpoints::Record>, checkpoints::CheckpointsError>;

    /// Keeps one more signed checkpoint after the others, and records its
    /// size in the store (`checkpoints::SIGNED_SETTING`); returns once
    /// durable. A checkpoint no larger than the newest kept (another server
    /// on the same database signed a later one meanwhile) is not kept:
    /// checkpoints only grow, whoever signs them.
    /// Returns whether it was kept.
    fn keep_checkpoint(&self, record: &checkpoints::Record) -> Result<bool, checkpoints::KeepError>;

    /// Where the checkpoints are kept, in words, for messages.
    fn checkpoints_place(&self) -> String;

    /// The store's name for people, in the log's default origin: sled's
    /// directory's, a database's own.
    fn name(&self) -> String;

    /// The directory of the store's own files (sled's), where its log key
    /// is by default; None for a store that is a database.
    fn home(&self) -> Option<&std::path::Path> {
        None
    }

    /// Whether this is a copy of the store opened for a verb that only
    /// reads (`SledStore::open_for_reading`): nothing written to it lasts,
    /// so nothing (a checkpoint, a key) is made in it.
    fn is_a_copy(&self) -> bool {
        false
    }

    /// Why the store stopped storing, once a write failed in a way that
    /// leaves what it holds unknown (sled's failed sync); None while it works.
    fn failed(&self) -> Option<String> {
        None
    }

    /// Calls `watch` after every durable write of events that succeeds
    /// (sled's sync, PostgreSQL's commit): the server's metrics. A second
    /// call replaces the first watcher.
    fn on_sync(&self, watch: SyncWatcher);

    /// Closes the store. sled's may need a thread of its own for it (see
    /// `SledStore::close`); others just drop.
    fn close(self: Box<Self>) {}

    /// Writes into the store's own form what it holds durable elsewhere:
    /// for sled, its own sync in a round of the group commit, which
    /// writes every insert into sled and empties the journal (what its
    /// close does), so the next open has nothing to put back. The server
    /// calls it last at shutdown, since its store is never dropped; an
    /// append still under way then (past the shutdown's deadline) may
    /// leave a record in the journal, which the next open puts back.
    fn settle(&self) -> Result<(), AppendError> {
        Ok(())
    }

    /// Whether other processes may append to this store while it is open
    /// (several servers on one PostgreSQL database; never for sled, which
    /// one process holds): a game folded in memory must then be checked
    /// against the store's head before it is appended to.
    fn shared(&self) -> bool {
        false
    }

    /// Calls `tell` when events are appended to the store by any process
    /// (this one too): `Some((game, seq))` for a game's new head, `None`
    /// when some may have been missed (the watch was cut and is back): then
    /// every game followed should be read again. A wake-up only, never the
    /// events themselves: readers always catch up by seq from the store,
    /// so a lost call delays, and loses nothing. A store only this process
    /// writes (sled) calls nothing.
    fn watch_appends(&self, _tell: AppendWatcher) {}

    /// One event by seq.
    fn get(&self, game: &str, seq: u64) -> Result<Option<Event>, ReadError> {
        let mut events = self.read(game, seq)?;
        events.next().transpose()
    }
}

/// A stored event read and checked: `crate::event::parse_stored` then
/// `check_stored` (the link is the reader's to check).
pub(crate) fn decode_parsed(seq: u64, bytes: &[u8]) -> Result<crate::event::Parsed, ReadError> {
    let corrupt = |why| ReadError::Corrupt { seq, why };
    let parsed = crate::event::parse_stored(bytes).map_err(corrupt)?;
    crate::event::check_stored(&parsed, seq, bytes).map_err(corrupt)?;
    Ok(parsed)
}

/// On the way in, before a backend stores anything: the bytes must be
/// exactly each event, hash intact. The bytes are the canonical JSON of the
/// event (written once more from the event, not parsed back), under the
/// strict rules, and the hash is the hash of those bytes without it.
pub(crate) fn check_incoming(events: &[(Event, Vec<u8>)]) -> Result<(), AppendError> {
    for (event, bytes) in events {
        if crate::event::canonical_event(event)? != *bytes {
            return Err(AppendError::Io("event and bytes disagree".into()));
        }
        event.check_envelope()?;
        crate::event::check_canonical_bytes(event, bytes)?;
    }
    Ok(())
}

/// The no-fork rule, read against the game's head under the backend's
/// lock: `events` (not empty) must start at the seq after `head` and each
/// link to the one before. Returns the new head.
pub(crate) fn check_follows(game: &str, events: &[(Event, Vec<u8>)], head: Option<Head>) -> Result<Head, AppendError> {
    let first = &events.first().expect("a non-empty insert").0;
    let next = head.as_ref().map_or(0, |h| h.seq + 1);
    if first.seq != next {
        if first.seq == 0 {
            return Err(AppendError::Exists(game.to_string()));
        }
        if head.is_none() {
            return Err(AppendError::NoSuchGame(game.to_string()));
        }
        return Err(AppendError::Conflict { expected: first.seq, next, head });
    }
    let mut prev = head;
    for (event, _) in events {
        crate::event::check_link(event, prev.as_ref())?;
        prev = Some(event.link());
    }
    Ok(prev.expect("at least one event"))
}

/// Events stored by `Store::insert_batch`, not yet acknowledged: the
/// group commit's ticket that makes them durable, if the backend has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "stored events are acknowledged only once durable (`Store::wait_durable`)"]
pub struct Ticket(Option<u64>);

impl Ticket {
    /// Durable already (a backend with no group commit of its own).
    pub const DURABLE: Ticket = Ticket(None);

    pub(crate) fn of(ticket: u64) -> Ticket {
        Ticket(Some(ticket))
    }

    /// The ticket to wait for; None when durable already.
    pub(crate) fn to_wait_for(self) -> Option<u64> {
        self.0
    }
}

/// The future of `Store::durable`.
pub type Durable = std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), AppendError>> + Send>>;

/// What one durable write did: how long it took (sled's flush and
/// fdatasync, PostgreSQL's commit), and how many events it made durable
/// (a group's size; 0 for a write of settings alone, such as a token).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Synced {
    pub took: std::time::Duration,
    pub events: u64,
}

/// Told of appends by any process (`Store::watch_appends`).
pub type AppendWatcher = std::sync::Arc<dyn Fn(Option<(&str, u64)>) + Send + Sync>;

/// Told of every durable write (`Store::on_sync`).
pub type SyncWatcher = std::sync::Arc<dyn Fn(Synced) + Send + Sync>;

/// An iterator over verified events.
pub type Events<'a> = Box<dyn Iterator<Item = Result<Event, ReadError>> + 'a>;

/// An iterator over stored events' bytes, each with the seq it is stored
/// under; another thread may run it.
pub type StoredEvents<'a> = Box<dyn Iterator<Item = Result<(u64, Vec<u8>), ReadError>> + Send + 'a>;

/// A store's log as the tree's complete subtrees, for `crate::tlog::merkle`.
pub struct LogNodes<'s>(pub &'s dyn Store);

impl Nodes for LogNodes<'_> {
    type Error = ReadError;
    fn node(&self, level: u8, index: u64) -> Result<Hash, ReadError> {
        self.0.log_node(level, index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_read_in_an_append_is_said_once() {
        let e = AppendError::from(ReadError::Io("the disk is gone".into()));
        assert_eq!(e.to_string(), "store I/O error: the disk is gone");
        let e = AppendError::from(ReadError::Unavailable("connection refused".into()));
        assert!(matches!(e, AppendError::Unavailable(_)), "{e:?}");
        let e = AppendError::from(ReadError::Log("leaf 3 is missing".into()));
        assert_eq!(e.to_string(), "store I/O error: the store's log is broken: leaf 3 is missing");
    }
}
