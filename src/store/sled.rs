//! The embedded default store, on sled 0.34.
//!
//! Layout 4 (see `LAYOUT`): one sled tree per game, named `game/<name>`,
//! holding its events 8 to a key (`super::chunk::Events`: each event's
//! exact canonical JSON bytes, the bytes that were hashed, with its place
//! in the log); the `log` tree holding the log's leaves 64 to a key and
//! its larger subtrees. A game exists when its tree holds event 0.
//!
//! Write path (see ARCHITECTURE.md): under the log's mutex (`Unsynced`),
//! check seq and prev against the game's head, so a seq is never taken
//! twice (no fork), add the events to their chunks in memory, take a
//! ticket. Then the group commit (`make_durable`): one leader at a time,
//! with no lock held, makes everything inserted so far durable, while the
//! appenders it covers wait on a condvar and wake together
//! (`sync_through`): the journal's records of the small inserts since the
//! last sync, in one write and one `fdatasync` (`super::journal`); or,
//! when something the journal does not hold was inserted, sled's own sync:
//! every chunk changed since the last one written into sled in one
//! transaction (`write_back`), then `flush()` and `fdatasync` on sled's
//! log file, which also empties the journal. A full journal is rotated,
//! and sled's own sync runs behind the round (`write_back_behind`), so
//! the appenders of that round do not wait for it. So sled only ever
//! holds the store as of one of its own syncs, whole (a transaction is
//! recovered all or none), and the journal's files every insert
//! acknowledged since: an open puts back what they hold
//! (`replay_journal`), and has nothing to repair. sled's own flush ends in
//! `sync_file_range`, which does not promise durability against power loss
//! (it neither writes the file's metadata nor flushes the disk's cache);
//! the `sync_data` call here does. Only then does `append` return Ok.
//! A setting is made durable by sled's flush and `fdatasync` beside the
//! rounds (`sync_settings`), and read from memory (`kept`).
//!
//! A failed sync (a full disk) leaves in memory what is not durable: the
//! store is then failed (`SledStore::failed`). It stores nothing more, and
//! reads only what is durable (events and the log up to the last sync that
//! succeeded), so what this process shows or signs afterwards is what a
//! reopened store holds.
//!
//! Opening: see `open` (a failed open leaves the store as it was, per
//! `super::dir`) and `open_for_reading` (a store that cannot be written is
//! read from a copy).

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use sled::Transactional;

use super::chunk::{self, EVENTS_PER_CHUNK, LEAVES_PER_CHUNK};

mod kept;
use super::dir::{self, Before, Opening};
use super::journal::{self, Journal};
use super::{
    AppendError, Durable, Events, Head, OpenError, ReadError, Store, StoredEvents, SyncWatcher, Synced, Ticket,
    decode_parsed,
};
use crate::event::{Chain, Event, Link, Parsed};
use crate::tlog::merkle::{Frontier, Hash, leaf_hash, node_hash};

const TREE_PREFIX: &str = "game/";

/// The tree of settings (hashed tokens, read access), apart from the games.
const SETTINGS_TREE: &str = "settings";

/// The tree of the verifiable log (`crate::tlog`): its leaves, 64 to a
/// key, and its complete subtrees from `STORED_LEVEL` up.
const LOG_TREE: &str = "log";

/// sled stores a node larger than segment_size / 4 as a separate blob file,
/// which it never syncs. 8 MiB segments put that threshold at 2 MiB: a
/// chunk is at most 128 KiB + 96 bytes (`chunk::EVENTS_PER_CHUNK`) and sled
/// splits a node above 16 entries, so a node of 17 chunks passes it only
/// if nearly every event in it is close to `MAX_EVENT_BYTES` (15 KiB on
/// average). Such a node is a blob, which `sync_blobs` makes durable.
const SEGMENT_SIZE: usize = 8 * 1024 * 1024;

/// sled's flush on a timer (its default): its thread also cleans sled's
/// segments (`attempt_gc`, which nothing else runs) and fsyncs sled's file.
/// The crate's own unit tests turn it off, so that a test can tell what
/// only the journal holds (`an_acknowledged_append_survives_a_crash_through_the_journal`).
#[cfg(not(test))]
const FLUSH_EVERY_MS: Option<u64> = Some(500);
#[cfg(test)]
const FLUSH_EVERY_MS: Option<u64> = None;

/// sled's page cache (its default is 1 GiB): a long read, such as replaying
/// a 1,000,000-event game, keeps about this much of the store in memory,
/// plus about one leaf node per shard of the cache (see `SCAN_TOUCHES`).
/// 8 MiB holds the pages a server's appends and views use (each game's
/// last chunk, the log's last leaf chunk, the index nodes above them) for
/// hundreds of games; with 32 MiB a whole verify of 1,000,000 events
/// peaked at 64 MB, with 8 MiB at 44 MB, with 4 or 1 MiB no lower.
const CACHE_BYTES: u64 = 8 * 1024 * 1024;

pub struct SledStore {
    db: sled::Db,
    dir: PathBuf,
    /// sled's log file, kept open so that sled's own sync is one fdatasync.
    log_file: File,
    /// Group commit. Every insert takes a ticket under the log's mutex,
    /// with the log's size then (`Commit::written`); a sync covers
    /// every ticket taken before it began and records the highest in
    /// `Commit::durable`, and the size at it in `durable_size`. An append
    /// whose ticket is already covered returns without syncing: concurrent
    /// appends (of any games) share one sync (a write of the journal and
    /// its fdatasync, or sled's flush and fdatasync) instead of
    /// queueing one each. The lock is held only to read or change these,
    /// never across a sync (see `make_durable`).
    commit: Mutex<Commit>,
    /// Signalled when a sync ends (well or not), one for even rounds and
    /// one for odd (`Commit::round`): the followers a sync covers wait on
    /// its round's and wake together; those that came after it began wait
    /// on the next round's, and one of them is woken to lead it. (One
    /// condvar for all woke every waiter at every sync, to find most of
    /// them not covered: at 64 tables, several wake-ups per append.)
    committed: [Condvar; 2],
    /// The same for followers on async threads (`durable_async`, the
    /// server's), which wait without holding a thread.
    woken: [tokio::sync::Notify; 2],
    /// The thread that runs the syncs that async appenders lead
    /// (`durable_async`), started by the first: a sync waits for the disk,
    /// which an async thread must not. (Not tokio's blocking pool: a
    /// round queued there behind threads that all wait for that round in
    /// `make_durable` would never run.) It holds the store, so it lives as
    /// long as the process (the server's store does too).
    syncer: Mutex<Option<std::sync::mpsc::Sender<Round<'static>>>>,
    /// The log's size at the last sync that succeeded: what `log_size`
    /// says, so no checkpoint covers an event that is not yet durable.
    durable_size: AtomicU64,
    /// How many syncs were made (for tests and the benchmark).
    syncs: AtomicU64,
    /// `blobs/` as the last sync that listed it found it (`sync_blobs`).
    /// (Boxed, as `unsynced`.)
    blobs_seen: Box<Mutex<BlobsSeen>>,
    /// The thread that runs sled's flush for the group commit's leader.
    /// (Boxed, as `unsynced`.)
    flusher: Box<Mutex<Flusher>>,
    /// The journal (`super::journal`), written only by the group commit's
    /// leader. (Boxed, as `unsynced`.)
    journal: Box<Mutex<Journal>>,
    /// Held across each of sled's own syncs (`write_back` and `sync_now`):
    /// one at a time, since two write-backs at once could write a chunk
    /// older than one already written and forget the newer. Taken after
    /// `journal` when both are, never before. (Boxed, as `unsynced`.)
    sled_syncing: Box<Mutex<()>>,
    /// Told of every sync that succeeds (`on_sync`): the server's metrics.
    /// The store itself keeps no figures but `syncs`. (Boxed, as `unsynced`.)
    sync_watcher: Box<Mutex<Option<SyncWatcher>>>,
    /// Why a write failed, once one has: the store is then failed.
    failed: Mutex<Option<Failure>>,
    /// The `log` tree.
    log: sled::Tree,
    /// The settings tree, once it exists: made by the first `put_setting`,
    /// never by a read (a store that only opens and reads writes nothing
    /// of arbiter's).
    settings: Mutex<Option<sled::Tree>>,
    /// The settings read so far, as sled holds them (`kept`): a read of a
    /// token on every request never waits for sled. (Boxed, as `unsynced`.)
    kept_settings: Box<kept::KeptSettings>,
    /// What was inserted since sled's last sync, and the log's right edge;
    /// its mutex serialises every insert of events (see `insert`). (Boxed:
    /// the store is held by value in the CLI's `Target`.)
    unsynced: Box<Mutex<Unsynced>>,
    /// The trees of games found to exist (`existing_tree`); a game's tree
    /// is never dropped. (Boxed, as `unsynced`.)
    trees: Box<Mutex<HashMap<String, sled::Tree>>>,
    /// Why the log's right edge could not be loaded at open (a subtree it
    /// is computed from is missing or damaged): every insert is refused.
    edge_broken: Option<String>,
    /// The copy this store was opened on (`open_for_reading`), removed
    /// when the store is dropped: this field is last, so sled is closed first.
    copy: Option<dir::Copy>,
}

impl Drop for SledStore {
    /// What the journal holds goes into sled's own sync before sled closes,
    /// so that the next open has nothing to replay. A failed store syncs
    /// nothing more; a sync that fails here leaves the journal for the next
    /// open, which replays it.
    fn drop(&mut self) {
        let _ = Store::settle(self);
    }
}

/// Events the journal holds and sled lacks: a game, and the events of one
/// insert to it (`SledStore::journal_adds`).
type Missing = (String, Vec<(Event, Vec<u8>)>);

/// The last ticket taken, and the log's size when it was taken.
#[derive(Debug, Clone, Copy, Default)]
struct Written {
    ticket: u64,
    size: u64,
}

/// Where the group commit is: the last ticket taken, the highest durable,
/// whether a leader is syncing now (at most one is), and what the next
/// sync must write.
#[derive(Debug, Default)]
struct Commit {
    written: Written,
    durable: u64,
    syncing: bool,
    /// How many syncs have begun: the running one's number, while one runs.
    round: u64,
    /// The highest ticket the running sync covers.
    covering: u64,
    /// How many followers are waiting now (for tests).
    waiting: u64,
    /// The journal's records of the events inserted since the last sync
    /// began, in the order of the log (`insert`; see `super::journal`).
    journal: Vec<u8>,
    /// Something was inserted since the last sync began that the journal
    /// does not hold (a large batch, `Unsynced` past its limit, the
    /// close's `settle`): the next sync is sled's own.
    sled_sync: bool,
}

/// Ends a leader's turn (its sync's round) even if its sync panics or
/// never runs, so that followers are not left waiting for a sync that will
/// never end.
struct Leading<'s> {
    store: &'s SledStore,
    round: u64,
    /// Set once the sync has run and its result is recorded.
    finished: bool,
}

impl Drop for Leading<'_> {
    /// Wakes every follower of this round (covered, or to see the
    /// failure), and one of the next round's to lead it; after a failure,
    /// every one of the next round's too, to see it. Followers on async
    /// threads (`durable_async`) are all woken, this round's and the
    /// next's: which of the next round's leads is decided under the lock.
    fn drop(&mut self) {
        // A leader that panicked in its sync, or whose sync never ran (its
        // round could not be handed to the syncing thread), took its
        // round's journal records with it: nothing may count them durable,
        // so the store is failed. (Not `thread::panicking()`: a store
        // dropped while its thread unwinds syncs, and that sync may succeed.)
        if !self.finished {
            self.store.fail(Failure { why: "a sync panicked or never ran".into(), errno: None });
        }
        let SledStore { commit, committed, woken, .. } = self.store;
        commit.lock().unwrap_or_else(|p| p.into_inner()).syncing = false;
        let (this, next) = ((self.round % 2) as usize, ((self.round + 1) % 2) as usize);
        committed[this].notify_all();
        woken[this].notify_waiters();
        match self.store.failure() {
            Some(_) => committed[next].notify_all(),
            None => committed[next].notify_one(),
        }
        woken[next].notify_waiters();
    }
}

/// What a caller of the group commit does next (`SledStore::turn`).
enum Turn<'s> {
    /// Its ticket is durable.
    Done,
    /// Wait for the end of this round's sync.
    Wait(u64),
    /// Lead a sync: the round begun for it.
    Lead(Round<'s>),
}

/// A sync a leader runs (`SledStore::lead`): the tickets it covers and
/// what it writes, taken under the commit's lock as its round began.
struct Round<'s> {
    leading: Leading<'s>,
    covers: Written,
    records: Vec<u8>,
    sled_sync: bool,
}

/// The sync of sled's that a rotation of the journal leaves to run behind
/// its round (`SledStore::write_back_behind`): the rotation it lets go of.
/// Dropped without running, the journal's older file stays until the
/// next sync of sled's in a round (the next rotation's fallback, a large
/// batch, the store's close), and an open after a crash replays it:
/// nothing is lost.
#[must_use]
#[derive(Debug, Clone, Copy)]
struct Behind {
    rotation: u64,
}

/// What was inserted since sled's last sync wrote it into sled
/// (`SledStore::write_back`), kept in memory, where reads find it first;
/// and the log's right edge. Each chunk an insert changes is here from
/// then until a write-back has written it, unchanged since; a chunk not
/// here is as sled holds it. Changed only by `insert`, under this lock,
/// in the order of the log: one insert's changes are seen whole or not
/// at all.
///
/// Its size is bounded by the journal's: an insert the journal does not
/// take (a batch of more than `journal::MOST_EVENTS`) makes the next sync
/// sled's own, and a journal grown past `journal::LIMIT` brings one behind
/// its rotation (or, while one runs, in the next full round).
#[derive(Default)]
struct Unsynced {
    frontier: Frontier,
    /// The head of each game this process inserted to: what the next
    /// insert to it must follow. (Else the head is read from sled.)
    heads: HashMap<String, Link>,
    /// The chunks of each game changed since the last write-back.
    games: HashMap<String, GameChunks>,
    /// The leaf chunks changed since the last write-back.
    leaves: BTreeMap<u64, Arc<chunk::Leaves>>,
    /// The subtrees at `STORED_LEVEL` and above completed since.
    nodes: BTreeMap<(u8, u64), Hash>,
    /// About how many bytes the chunks here hold: past `UNSYNCED_LIMIT`,
    /// the next insert asks for sled's own sync (a chunk read in to be
    /// added to may be far larger than the event the journal records).
    held: usize,
}

/// How much `Unsynced` may hold before an insert asks for sled's own sync.
const UNSYNCED_LIMIT: usize = 64 * 1024 * 1024;

/// A game's changed chunks, by number, and its tree to write them to.
struct GameChunks {
    tree: sled::Tree,
    chunks: BTreeMap<u64, Arc<chunk::Events>>,
}

impl Unsynced {
    /// Whether nothing waits for a write-back.
    fn is_clean(&self) -> bool {
        self.games.is_empty() && self.leaves.is_empty() && self.nodes.is_empty()
    }
}

/// A game's chunks, by number.
type Chunks = Vec<(u64, Arc<chunk::Events>)>;

/// What one write-back writes: Arcs of the chunks as they were taken, so
/// that those not changed since are known (`Arc::ptr_eq`) and forgotten.
struct WriteBack {
    games: Vec<(String, sled::Tree, Chunks)>,
    leaves: Vec<(u64, Arc<chunk::Leaves>)>,
    nodes: Vec<((u8, u64), Hash)>,
}

/// What a flush answers: sled's result, once it returns.
type Flushed = std::sync::mpsc::Receiver<sled::Result<usize>>;

/// The thread sled's flushes run on, so that a leader can wait for one
/// with a deadline (`SledStore::flush_within`). It is started by the first
/// flush and lives as long as the store: a thread started for every
/// flush cost a `clone3`, a stack's `mmap` and a wake-up on the other
/// core, about as much as the flush itself (one durable append was 0.47x
/// raw sled's insert + flush + fdatasync). It holds the `Db` only while
/// it flushes (each request brings a handle, dropped before the answer),
/// so dropping the store closes sled as before; it ends when the store
/// (and with it the sending side) is dropped.
#[derive(Default)]
struct Flusher {
    requests: Option<std::sync::mpsc::Sender<(sled::Db, std::sync::mpsc::SyncSender<sled::Result<usize>>)>>,
}

impl Flusher {
    /// Asks for a flush of `db`; the answer comes on the receiver.
    fn flush(&mut self, db: &sled::Db) -> Result<Flushed, Failure> {
        let (done, flushed) = std::sync::mpsc::sync_channel(1);
        let request = (db.clone(), done);
        // Only a panic in sled's flush ends the thread, and that fails the
        // store (its caller sees the answer's channel closed), so no sync
        // follows it; should one come all the same, it goes to a new thread.
        let request = match &self.requests {
            Some(requests) => match requests.send(request) {
                Ok(()) => return Ok(flushed),
                Err(std::sync::mpsc::SendError(request)) => request,
            },
            None => request,
        };
        let (requests, asked) = std::sync::mpsc::channel::<(sled::Db, std::sync::mpsc::SyncSender<_>)>();
        std::thread::Builder::new()
            .name("arbiter-flush".into())
            .spawn(move || {
                for (db, done) in asked {
                    let result = db.flush();
                    drop(db);
                    let _ = done.send(result);
                }
            })
            .map_err(|e| Failure::io("cannot start the flush", &e))?;
        requests
            .send(request)
            .map_err(|_| Failure { why: "the flushing thread ended at its start".into(), errno: None })?;
        self.requests = Some(requests);
        Ok(flushed)
    }
}

/// A write that failed: what the OS said (its errno, when it said one).
#[derive(Debug, Clone)]
struct Failure {
    why: String,
    errno: Option<i32>,
}

impl Failure {
    fn io(what: &str, e: &std::io::Error) -> Failure {
        Failure { why: format!("{what}: {e}"), errno: e.raw_os_error() }
    }

    fn sled(what: &str, e: &sled::Error) -> Failure {
        match e {
            // sled shows an I/O error in its Debug form; the OS's words read better.
            sled::Error::Io(io) => Failure::io(what, io),
            _ => Failure { why: format!("{what}: {e}"), errno: None },
        }
    }
}

/// A store opened on a copy (`SledStore::open_for_reading`): why the store
/// itself could not be opened, and where the copy is.
#[derive(Debug, Clone)]
pub struct Copied {
    pub why: String,
    pub at: PathBuf,
}

/// sled's `open` of the store at `dir`. A store whose lock is held is
/// tried again for up to half a second before it is reported in use, passing
/// sled's epochs meanwhile: a store this process dropped a moment ago
/// keeps sled's file open until threads pass them (see `SledStore::close`),
/// and a child this process is starting holds every open file until its
/// `exec`. (A store held by another arbiter is reported that much later.)
fn open_sled(dir: &Path) -> sled::Result<sled::Db> {
    let db = dir.join("db");
    let mut tries = 0;
    loop {
        let opened = sled::Config::new()
            .path(dir)
            .segment_size(SEGMENT_SIZE)
            .cache_capacity(CACHE_BYTES)
            .flush_every_ms(FLUSH_EVERY_MS)
            .open();
        if opened.is_ok() || tries == 500 || !held_by_another_process(&db) {
            return opened;
        }
        tries += 1;
        sled::pin().flush();
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Whether another process holds the exclusive lock sled takes on `db`
/// (flock). Asked only when this process's sled does not hold it (after
/// sled failed to open, or was closed); the probe's own lock, if it gets
/// one, ends when the file closes.
fn held_by_another_process(db: &Path) -> bool {
    use std::os::fd::AsRawFd;
    let Ok(file) = File::open(db) else { return false };
    // SAFETY: flock on a descriptor this function owns for its whole call.
    let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    locked != 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::WouldBlock
}

impl SledStore {
    /// Opens (or creates) the store at `dir` and checks it against its
    /// newest checkpoint.
    ///
    /// sled writes at every open, even one only to read (see `super::dir`).
    /// If sled's open fails (a full disk, read-only media), what it wrote
    /// is undone there (`Before::undo`) and the store is as it was: it
    /// opens again once it can be written. If sled opens but the store
    /// fails its checks (`OpenError::Lost`), nothing is undone and arbiter
    /// writes nothing: the store is reported as sled recovered it. The one
    /// exception is a store whose journal (`super::journal`) holds events
    /// sled lacks that may be what the checkpoint misses
    /// (`journal_may_explain`): they are put back, and if the check still
    /// fails, the journal is kept as it was for the next open to report.
    pub fn open(dir: &Path) -> Result<SledStore, OpenError> {
        let shown = dir.display().to_string();
        // One arbiter process opens the store at a time, so that what the
        // undo finds new or grown was written by this open.
        let opening = Opening::begin(dir);
        let before = opening.as_ref().and_then(|_| Before::note(dir));
        let opened = open_sled(dir);
        let db = match opened {
            Ok(db) => db,
            Err(e) => {
                if let Some(before) = &before {
                    before.undo(dir);
                }
                drop(opening);
                // sled takes an exclusive lock on `db` and reports another holder only
                // in words; another process holding it is a state to explain, not an
                // I/O failure, so ask the lock itself.
                return Err(if held_by_another_process(&dir.join("db")) {
                    OpenError::InUse { dir: shown }
                } else if let sled::Error::Io(io) = &e
                    && dir::is_unwritable(io)
                {
                    OpenError::Unwritable { dir: shown, why: io.to_string() }
                } else {
                    OpenError::Io { dir: shown, why: e.to_string() }
                });
            }
        };
        // sled holds its lock on `db` now: no one else opens the store.
        drop(opening);
        let log = File::open(dir.join("db")).map_err(|e| OpenError::Io { dir: shown.clone(), why: e.to_string() })?;
        // The directory entry of a new store must be durable too.
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        let io = |e: sled::Error| OpenError::Io { dir: shown.clone(), why: e.to_string() };
        let exists = |name: &str| db.tree_names().iter().any(|n| n.as_ref() == name.as_bytes());
        let settings = match exists(SETTINGS_TREE) {
            true => Some(db.open_tree(SETTINGS_TREE).map_err(io)?),
            false => None,
        };
        let has_games = db.tree_names().iter().any(|n| n.starts_with(TREE_PREFIX.as_bytes()));
        // A store with games but no log, with checkpoints, has lost its
        // log: it is reported as it is, with nothing written.
        if !exists(LOG_TREE) {
            let signed = match &settings {
                Some(t) => t.get(super::checkpoints::SIGNED_SETTING).map_err(io)?.is_some(),
                None => false,
            };
            let records = super::checkpoints::read(dir).map_err(OpenError::Lost)?;
            if signed || !records.is_empty() {
                return Err(OpenError::Lost(format!(
                    "the store at {shown} has lost its log: it has none, but it signed checkpoints of it"
                )));
            }
        }
        let log_tree = match exists(LOG_TREE) {
            true => Some(db.open_tree(LOG_TREE).map_err(io)?),
            false => None,
        };
        let layout = match &log_tree {
            Some(t) => t.get(LAYOUT_KEY).map_err(io)?.map(|v| v.to_vec()),
            None => None,
        };
        // New: no games, and no log (or an empty one, from a first open
        // cut short before it wrote the layout).
        let new = !has_games && log_tree.as_ref().is_none_or(|t| layout.is_none() && t.is_empty());
        if let Some(l) = &layout
            && l.first().is_some_and(|&n| n > LAYOUT[0])
        {
            return Err(OpenError::Lost(format!(
                "the store at {shown} has a log of layout {l:?}, which this arbiter does not know (it knows {LAYOUT:?}): it was written by a newer arbiter"
            )));
        }
        // Earlier layouts were written only by unreleased builds: this
        // release reads layout 4 and converts nothing.
        if !new && layout.as_deref() != Some(LAYOUT) {
            return Err(earlier_layout(&shown, layout.as_deref(), log_tree.is_some()));
        }
        let log_tree = match log_tree {
            Some(t) => t,
            None => db.open_tree(LOG_TREE).map_err(io)?,
        };
        let size = stored_size(&log_tree).map_err(|e| read_failure(&shown, e, |e| e.to_string()))?;
        // Read before anything is written: what the journal holds that sled
        // lost is put back below (`replay_journal`).
        let journaled = journal::read_files(dir)
            .map_err(|e| OpenError::Io { dir: shown.clone(), why: format!("cannot read its journal: {e}") })?;
        let mut store = SledStore {
            db,
            dir: dir.to_path_buf(),
            log_file: log,
            commit: Mutex::new(Commit::default()),
            committed: [Condvar::new(), Condvar::new()],
            woken: Default::default(),
            syncer: Mutex::new(None),
            durable_size: AtomicU64::new(size),
            syncs: AtomicU64::new(0),
            blobs_seen: Box::default(),
            flusher: Box::default(),
            journal: Box::new(Mutex::new(Journal::new(dir, &journaled))),
            sled_syncing: Box::default(),
            sync_watcher: Box::default(),
            failed: Mutex::new(None),
            log: log_tree,
            settings: Mutex::new(settings),
            kept_settings: Box::default(),
            unsynced: Box::default(),
            trees: Box::default(),
            edge_broken: None,
            copy: None,
        };
        let unwritable = |store: &SledStore, why: String| match store.failure() {
            Some(f) if f.errno.is_some_and(|n| dir::is_unwritable(&std::io::Error::from_raw_os_error(n))) => {
                OpenError::Unwritable { dir: shown.clone(), why }
            }
            _ => OpenError::Io { dir: shown.clone(), why },
        };
        // What the journal holds that sled lost, checked whole before
        // anything is written.
        let adds = store.journal_adds(&shown, &journaled)?;
        // Checked before anything is written, so that a store that lost
        // what it signed is not written; unless a crash left a journal
        // that may explain what the check misses (`journal_may_explain`):
        // then it is made again at the end.
        if let Err(e) = super::checkpoints::check(&store)
            && !(journaled.bytes() > 0 && store.journal_may_explain(&adds, size))
        {
            return Err(e);
        }
        // The right edge's subtrees below `STORED_LEVEL` are computed from
        // the leaves. If one is missing or changed (behind arbiter's back:
        // checked against the checkpoint above), the store still opens, for
        // the reads and `verify` that say which event; only an append,
        // which needs the edge, is refused.
        match Frontier::load(&super::LogNodes(&store), size) {
            Ok(frontier) => store.unsynced.get_mut().unwrap_or_else(|p| p.into_inner()).frontier = frontier,
            Err(e) => store.edge_broken = Some(format!("the store at {shown} has lost part of its log: {e}")),
        }
        // The log's newest event must be stored where its leaf says: else
        // the next append to its game would take its seq again.
        if let Some(why) = store.newest_event_missing().map_err(|e| read_failure(&shown, e, |e| e.to_string()))? {
            store.edge_broken = Some(format!("the store at {shown} has lost part of its log: {why}"));
        }
        store.commit.get_mut().unwrap_or_else(|p| p.into_inner()).written = Written { ticket: 0, size };
        if new {
            store.log.insert(LAYOUT_KEY, LAYOUT).map_err(|e| write_error(&shown, &e))?;
            store.make_durable(store.ticket()).map_err(|e| unwritable(&store, e.to_string()))?;
        }
        if journaled.bytes() > 0 {
            store.replay_journal(&shown, adds)?;
            // sled's own sync: what was put back is durable in sled. The
            // journal is kept until the check below passes.
            store.make_durable(store.ticket()).map_err(|e| unwritable(&store, e.to_string()))?;
        }
        // Never open a store that holds less than its last checkpoint.
        super::checkpoints::check(&store)?;
        if journaled.bytes() > 0 {
            let mut journal = store.journal.lock().unwrap_or_else(|p| p.into_inner());
            journal.mark_replayed();
            journal
                .empty()
                .map_err(|e| OpenError::Io { dir: shown.clone(), why: format!("cannot empty its journal: {e}") })?;
        }
        Ok(store)
    }

    /// Opens the store at `dir` for a verb that only reads. A store that
    /// cannot be written where it is (read-only media, a full disk) is
    /// still read: sled writes at every open, so the store is copied (sled's
    /// files and the checkpoints; `dir::copy`) into a new directory in
    /// /dev/shm (memory, since the store's own disk may be the full one) or
    /// else the system's temporary directory, and the copy is opened and
    /// checked like the store. The copy is removed when the store is
    /// dropped; the store itself is not written (its failed open undone).
    /// Returns where the copy is, for the caller to say so.
    pub fn open_for_reading(dir: &Path) -> Result<(SledStore, Option<Copied>), OpenError> {
        let why = match SledStore::open(dir) {
            Err(OpenError::Unwritable { why, .. }) => why,
            other => return other.map(|store| (store, None)),
        };
        let shown = dir.display().to_string();
        let mut failures = Vec::new();
        for place in dir::copy_places() {
            let copy = match dir::copy(dir, &place) {
                Ok(c) => c,
                Err(e) => {
                    failures.push(e);
                    continue;
                }
            };
            let in_copy = copy.path().display().to_string();
            match SledStore::open(copy.path()) {
                Ok(mut store) => {
                    let at = copy.path().to_path_buf();
                    store.copy = Some(copy);
                    return Ok((store, Some(Copied { why, at })));
                }
                // The copy's place is full too: try the next.
                Err(OpenError::Unwritable { why, .. }) => failures.push(format!("{in_copy}: {why}")),
                // Anything else is the store's own (its checks): name the store, not the copy.
                Err(OpenError::Lost(m)) => return Err(OpenError::Lost(m.replace(&in_copy, &shown))),
                Err(OpenError::Io { why, .. }) => {
                    return Err(OpenError::Io { dir: shown.clone(), why: why.replace(&in_copy, &shown) });
                }
                Err(e @ OpenError::InUse { .. }) => return Err(e),
                Err(OpenError::Layout { found, .. }) => return Err(OpenError::Layout { dir: shown.clone(), found }),
            }
        }
        Err(OpenError::Unwritable {
            dir: shown,
            why: format!("{why}; and no copy of it could be read: {}", failures.join("; ")),
        })
    }

    /// Closes the store and waits until it can be opened again, by this
    /// process too (which opens it again after a failed write, to sign
    /// what is durable): sled lets go of its file, and so of its lock, when
    /// the last of its background tasks (a write of its log) ends, which
    /// may be a moment after the store is dropped. The wait ends as soon as
    /// the lock is free, and gives up after two seconds (another process
    /// may have opened the store meanwhile).
    ///
    /// sled's drop flushes, and after a failed write (a full disk) that
    /// flush may never return (sled 0.34; see `flush_within`): the store is
    /// dropped on a thread of its own, so a stuck drop keeps the lock (the
    /// store then cannot be opened again by this process, which says so)
    /// but never hangs the caller.
    pub fn close(self) {
        let db = self.dir.join("db");
        // Without a thread for it, the store is dropped here, with the closure.
        let _ = std::thread::Builder::new().name("arbiter-close".into()).spawn(move || drop(self));
        for _ in 0..2000 {
            if !held_by_another_process(&db) {
                return;
            }
            // The drop's last handle on sled's file may wait for a thread
            // to pass sled's epochs.
            sled::pin().flush();
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// The store's directory (where its checkpoints are kept); for a store
    /// opened on a copy, the copy's.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn failure(&self) -> Option<Failure> {
        self.failed.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Records the first failed write.
    fn fail(&self, failure: Failure) {
        let mut failed = self.failed.lock().unwrap_or_else(|p| p.into_inner());
        if failed.is_none() {
            *failed = Some(failure);
        }
    }

    fn settings_tree(&self) -> Option<sled::Tree> {
        self.settings.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The settings tree, made on the first write.
    fn settings_to_write(&self) -> Result<sled::Tree, AppendError> {
        let mut settings = self.settings.lock().unwrap_or_else(|p| p.into_inner());
        match &*settings {
            Some(t) => Ok(t.clone()),
            None => Ok(settings
                .insert(self.db.open_tree(SETTINGS_TREE).map_err(|e| AppendError::Io(e.to_string()))?)
                .clone()),
        }
    }

    /// Fails the store with `failure`; its error.
    fn failed_with(&self, failure: Failure) -> AppendError {
        let why = failure.why.clone();
        self.fail(failure);
        AppendError::Io(why)
    }

    /// The error for a write to a failed store.
    fn refuse(&self) -> Result<(), AppendError> {
        match self.failure() {
            None => Ok(()),
            Some(f) => Err(AppendError::Io(format!(
                "an earlier write to this store failed ({}); nothing more is stored until it is opened again",
                f.why
            ))),
        }
    }

    /// The error for a read of what may not be durable in a failed store.
    fn unreadable(&self, what: &str) -> ReadError {
        let why = self.failed().unwrap_or_default();
        ReadError::Io(format!("{what} cannot be read: an earlier write to this store failed ({why})"))
    }

    fn tree(&self, game: &str) -> Result<sled::Tree, String> {
        self.db.open_tree(format!("{TREE_PREFIX}{game}")).map_err(|e| e.to_string())
    }

    /// The tree of a game that exists, never made by asking: sled's
    /// `open_tree` makes a tree it does not find, so a tree is opened only
    /// once `tree_names` (a copy of every name) shows it, and kept
    /// (`trees`): a log check computes subtrees from events of any game,
    /// one leaf at a time.
    fn existing_tree(&self, game: &str) -> Result<sled::Tree, ReadError> {
        let kept = self.trees.lock().unwrap_or_else(|p| p.into_inner()).get(game).cloned();
        let tree = match kept {
            Some(tree) => tree,
            None => {
                let name = format!("{TREE_PREFIX}{game}");
                let exists = self.db.tree_names().iter().any(|n| n.as_ref() == name.as_bytes());
                if !exists {
                    return Err(ReadError::NoSuchGame(game.to_string()));
                }
                let tree = self.tree(game).map_err(ReadError::Io)?;
                self.trees.lock().unwrap_or_else(|p| p.into_inner()).insert(game.to_string(), tree.clone());
                tree
            }
        };
        // A new game's first events may be in memory only (`Unsynced`):
        // asked first, since a write-back forgets them once sled holds them.
        let unsynced = self.unsynced.lock().unwrap_or_else(|p| p.into_inner()).games.contains_key(game);
        if !unsynced && tree.is_empty() {
            return Err(ReadError::NoSuchGame(game.to_string()));
        }
        Ok(tree)
    }

    /// Takes a ticket for an insert, the log then holding `size` events,
    /// and gives the next sync its journal `record` (`journal_record`), or,
    /// with none, asks for sled's own sync. The caller holds the log's
    /// lock (`unsynced`), so tickets and records are taken in the order of
    /// the log.
    fn ticket_at(&self, size: u64, record: Option<Vec<u8>>) -> u64 {
        let mut commit = self.commit.lock().unwrap_or_else(|p| p.into_inner());
        commit.written.ticket += 1;
        commit.written.size = size;
        match record {
            Some(record) => commit.journal.extend_from_slice(&record),
            None => commit.sled_sync = true,
        }
        commit.written.ticket
    }

    /// Makes every setting written so far durable: sled's flush and
    /// fdatasync (`sync_now`), run here beside the group commit, while
    /// appends go on through the journal. Nothing is written back first:
    /// sled's events stay as of its last write-back (a transaction,
    /// whole), and the journal keeps every record it holds, as after
    /// sled's flush on its timer; so an open after a crash finds the same
    /// store. (As a round of sled's own sync, a setting held up every
    /// appender of that round and the next: the server's checkpoint,
    /// whose size is a setting written each second, stalled every table
    /// for 12 to 18 ms at 64 tables, most of the API's slowest appends.
    /// With a write-back too, beside the rounds, the p99 was 0.2 to 5.5
    /// ms higher than without in three turns: a write-back is 10 to 15 ms
    /// of one core's time, each second.)
    fn sync_settings(&self) -> Result<(), AppendError> {
        let began = Instant::now();
        {
            let _one = self.sled_syncing.lock().unwrap_or_else(|p| p.into_inner());
            self.refuse()?;
            self.sync_now().map_err(|failure| self.failed_with(failure))?;
        }
        self.tell_watcher(Synced { took: began.elapsed(), events: 0 });
        Ok(())
    }

    /// Tells the watcher (`on_sync`) of a sync that succeeded, with the
    /// watcher's lock let go first: it may take its time.
    fn tell_watcher(&self, synced: Synced) {
        let watcher = self.sync_watcher.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(watch) = watcher {
            watch(synced);
        }
    }

    /// Takes a ticket for an insert of no events (an empty insert, the
    /// close's `settle`): the sync that covers it is sled's own.
    fn ticket(&self) -> u64 {
        let unsynced = self.unsynced.lock().unwrap_or_else(|p| p.into_inner());
        self.ticket_at(unsynced.frontier.size(), None)
    }

    /// Makes the insert with `ticket` durable (group commit, leader and
    /// followers). If a sync that began after the insert has finished,
    /// nothing to do. If one is running, wait for it to end if it covers
    /// this ticket, else for the next round, which one of its waiters will
    /// lead. Else this caller leads: it syncs everything written so far
    /// (its own insert and any others') with no lock held, then wakes its
    /// round's waiters at once and one of the next round's. A sync that
    /// fails fails the store (see the module's comment), and every waiter
    /// it did not cover gets the error.
    fn make_durable(&self, ticket: u64) -> Result<(), AppendError> {
        let mut commit = self.commit.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            match self.turn(&mut commit, ticket)? {
                Turn::Done => return Ok(()),
                Turn::Wait(round) => {
                    commit.waiting += 1;
                    commit = self.committed[(round % 2) as usize].wait(commit).unwrap_or_else(|p| p.into_inner());
                    commit.waiting -= 1;
                }
                Turn::Lead(round) => {
                    drop(commit);
                    return self.lead_here(round);
                }
            }
        }
    }

    /// `make_durable` for a caller on tokio's async threads (the server):
    /// a follower waits without holding its thread, and a leader hands its
    /// round's sync to the syncing thread (`syncer`), then waits for it as
    /// a follower. So an append hops to another thread only when it leads
    /// a sync (at 64 tables through the API, one append in 8 to 14), not
    /// every time.
    async fn durable_async(&'static self, ticket: u64) -> Result<(), AppendError> {
        loop {
            let turn = {
                let mut commit = self.commit.lock().unwrap_or_else(|p| p.into_inner());
                match self.turn(&mut commit, ticket)? {
                    Turn::Done => return Ok(()),
                    // Made under the lock: a sync that ends after the lock
                    // is let go wakes it, even before it is first polled
                    // (`Notify::notify_waiters`).
                    Turn::Wait(round) => Err(self.woken[(round % 2) as usize].notified()),
                    Turn::Lead(round) => Ok(round),
                }
            };
            match turn {
                Err(woken) => woken.await,
                // Its ticket is in the round: the next turn waits for it.
                Ok(round) => self.hand_over(round)?,
            }
        }
    }

    /// Hands `round` to the syncing thread, started on first use. If the
    /// thread cannot be started, the sync runs here, once; if it is gone
    /// (it panicked in a sync, which failed the store), the round is
    /// dropped, and its `Leading` fails the store.
    fn hand_over(&'static self, round: Round<'static>) -> Result<(), AppendError> {
        let mut syncer = self.syncer.lock().unwrap_or_else(|p| p.into_inner());
        if syncer.is_none() {
            let (to_sync, rounds) = std::sync::mpsc::channel::<Round<'static>>();
            let started = std::thread::Builder::new().name("arbiter-sync".into()).spawn(move || {
                for round in rounds {
                    // A failure fails the store, which its followers see.
                    self.lead_on_syncer(round);
                }
            });
            if started.is_err() {
                drop(syncer);
                return self.lead_here(round);
            }
            *syncer = Some(to_sync);
        }
        let _ = syncer.as_ref().expect("started").send(round);
        Ok(())
    }

    /// The group commit's decision for `ticket`, under its lock: durable
    /// already; the store failed; wait for a round; or lead the next sync,
    /// whose round it begins here (covering every ticket taken so far).
    fn turn(&self, commit: &mut Commit, ticket: u64) -> Result<Turn<'_>, AppendError> {
        if commit.durable >= ticket {
            return Ok(Turn::Done);
        }
        if let Err(e) = self.refuse() {
            // The store may have failed outside any sync (an insert that
            // sled refused), with no follower woken to see it: wake them
            // all, or those of the next round would wait for a leader
            // that never comes. (Holding the lock: none is missed.)
            self.committed.iter().for_each(Condvar::notify_all);
            self.woken.iter().for_each(tokio::sync::Notify::notify_waiters);
            return Err(e);
        }
        if commit.syncing {
            return Ok(Turn::Wait(if ticket <= commit.covering { commit.round } else { commit.round + 1 }));
        }
        commit.syncing = true;
        commit.round += 1;
        // Every ticket up to `covers` has its record (if any) in the
        // journal's records taken here, so the sync includes all of
        // them: those records, or sled's own sync of every insert made
        // so far (`sync_through`).
        let covers = commit.written;
        commit.covering = covers.ticket;
        Ok(Turn::Lead(Round {
            leading: Leading { store: self, round: commit.round, finished: false },
            covers,
            records: std::mem::take(&mut commit.journal),
            sled_sync: std::mem::take(&mut commit.sled_sync),
        }))
    }

    /// Runs the sync of `round` with no lock held, records what it made
    /// durable, then ends the round (waking its followers; `Leading`).
    /// Returns the sync of sled's that a rotation of the journal left to
    /// run behind the round, if it did (`Behind`).
    fn lead(&self, round: Round<'_>) -> Result<Option<Behind>, AppendError> {
        let Round { mut leading, covers, records, sled_sync } = round;
        let began = Instant::now();
        let synced = self.sync_through(&records, sled_sync);
        let took = began.elapsed();
        let mut commit = self.commit.lock().unwrap_or_else(|p| p.into_inner());
        let result = match synced {
            Ok(behind) => {
                commit.durable = commit.durable.max(covers.ticket);
                let before = self.durable_size.fetch_max(covers.size, Ordering::SeqCst);
                Ok((covers.size.saturating_sub(before), behind))
            }
            // Failed before the followers wake, so that they see it.
            Err(failure) => Err(self.failed_with(failure)),
        };
        drop(commit);
        leading.finished = true;
        drop(leading);
        let (events, behind) = result?;
        self.tell_watcher(Synced { took, events });
        Ok(behind)
    }

    /// `lead`, then the sync of sled's it leaves to run behind the round,
    /// here: the leader's own append, durable already, returns after it;
    /// the other appenders of the round do not wait for it.
    fn lead_here(&self, round: Round<'_>) -> Result<(), AppendError> {
        if let Some(behind) = self.lead(round)? {
            self.write_back_behind(behind);
        }
        Ok(())
    }

    /// `lead` on the syncing thread (`hand_over`), whose next round must
    /// not wait for a sync of sled's: that runs on a thread of its own.
    fn lead_on_syncer(&'static self, round: Round<'static>) {
        let Ok(Some(behind)) = self.lead(round) else { return };
        let started =
            std::thread::Builder::new().name("arbiter-write-back".into()).spawn(move || self.write_back_behind(behind));
        if started.is_err() {
            // No thread to be had: it runs here, once.
            self.write_back_behind(behind);
        }
    }

    /// The sync of sled's owed to a rotation of the journal (`Behind`):
    /// every insert so far written into sled, then the journal's older
    /// file removed; nothing, if a later sync of sled's (a round's, which
    /// empties both files) has seen to it. It runs with no lock of the
    /// commit held, so appends go on through the journal's new file
    /// meanwhile. A failed sync fails the store (what the journal
    /// acknowledged stays in its files, for the next open), and the next
    /// append sees it.
    fn write_back_behind(&self, behind: Behind) {
        let owed = |journal: &Journal| journal.rotations() == behind.rotation && journal.older_bytes() > 0;
        if self.failure().is_some() || !owed(&self.journal.lock().unwrap_or_else(|p| p.into_inner())) {
            return;
        }
        let synced = {
            let _one = self.sled_syncing.lock().unwrap_or_else(|p| p.into_inner());
            self.write_back().and_then(|()| self.sync_now())
        };
        if let Err(failure) = synced {
            return self.fail(failure);
        }
        // A file that cannot be removed is left, with nothing lost: sled
        // holds what it held, and the next sync of sled's in a round (the
        // journal full again, a large batch, the close) tries again.
        let mut journal = self.journal.lock().unwrap_or_else(|p| p.into_inner());
        let _ = journal.forget_older(Some(behind.rotation));
    }

    /// sled's flush, on the store's flushing thread (`Flusher`), waited
    /// for at most `deadline` (`limits::SYNC_DEADLINE_SECONDS`: sled 0.34
    /// may never return from a flush after a failed write). A flush that
    /// does not return fails the store, saying what a write to the store's
    /// directory now answers (a full disk: "No space left on device"). The
    /// stuck thread keeps its handle on sled, so sled's lock stays held
    /// until the process ends: the store cannot be opened again by this
    /// process.
    fn flush_within(&self, deadline: Duration) -> Result<(), Failure> {
        let flushed = self.flusher.lock().unwrap_or_else(|p| p.into_inner()).flush(&self.db)?;
        match flushed.recv_timeout(deadline) {
            Ok(result) => result.map(|_| ()).map_err(|e| Failure::sled("flush failed", &e)),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                Err(Failure { why: "sled's flush panicked".into(), errno: None })
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                let what = format!("sled's flush did not finish within {} s", deadline.as_secs());
                Err(match probe_write(&self.dir) {
                    Err(e) => Failure::io(&format!("{what}; a write to the store's directory fails"), &e),
                    Ok(()) => Failure { why: format!("{what} (the disk takes writes; sled is stuck)"), errno: None },
                })
            }
        }
    }

    /// One sync of the group commit, covering every ticket taken before it
    /// began: `records` written to the journal and synced, one trip to the
    /// disk. When that would take the journal past `journal::LIMIT`, it is
    /// rotated first (`Journal::rotate`), and the sync of sled's that will
    /// let its older file go is returned, for the leader to run once the
    /// round has ended (`Behind`). When `sled_sync` asks for it, or the
    /// journal is full again before the last rotation's sync has ended,
    /// the sync is sled's own, here: every insert so far written into
    /// sled (`write_back`: those tickets, and any taken since), then
    /// `sync_now`, after which both of the journal's files are emptied.
    fn sync_through(&self, records: &[u8], sled_sync: bool) -> Result<Option<Behind>, Failure> {
        let mut journal = self.journal.lock().unwrap_or_else(|p| p.into_inner());
        let full = journal.bytes() + records.len() as u64 > journal::LIMIT;
        if sled_sync || (full && journal.older_bytes() > 0) {
            {
                // Waits for a sync behind a rotation, if one runs.
                let _one = self.sled_syncing.lock().unwrap_or_else(|p| p.into_inner());
                self.write_back()?;
                self.sync_now()?;
            }
            // Both files: the sync covers every insert made before it,
            // and so every record the journal holds.
            return journal.empty().map(|()| None).map_err(|e| Failure::io("the journal could not be emptied", &e));
        }
        let rotate = full && journal.bytes() > 0;
        if rotate {
            journal.rotate().map_err(|e| Failure::io("the journal could not be rotated", &e))?;
        }
        self.syncs.fetch_add(1, Ordering::Relaxed);
        journal.append(records).map_err(|e| Failure::io("the journal's write failed", &e))?;
        Ok(rotate.then(|| Behind { rotation: journal.rotations() }))
    }

    /// Writes every chunk and subtree inserted since the last write-back
    /// into sled, in one transaction: sled recovers it all or none, so
    /// after a crash sled holds the store as of one of its syncs, and the
    /// journal what was acknowledged since (see the module's comment).
    /// What it wrote stays readable in memory until it is in sled, then
    /// is forgotten, unless an insert changed it meanwhile.
    fn write_back(&self) -> Result<(), Failure> {
        let taken = {
            let unsynced = self.unsynced.lock().unwrap_or_else(|p| p.into_inner());
            if unsynced.is_clean() {
                return Ok(());
            }
            WriteBack {
                games: unsynced
                    .games
                    .iter()
                    .map(|(game, g)| {
                        let chunks = g.chunks.iter().map(|(c, chunk)| (*c, chunk.clone())).collect();
                        (game.clone(), g.tree.clone(), chunks)
                    })
                    .collect(),
                leaves: unsynced.leaves.iter().map(|(c, chunk)| (*c, chunk.clone())).collect(),
                nodes: unsynced.nodes.iter().map(|(k, h)| (*k, *h)).collect(),
            }
        };
        let leaves: Vec<([u8; 9], Vec<u8>)> =
            taken.leaves.iter().map(|(c, l)| (chunk::leaves_key(*c), l.encode())).collect();
        let mut trees = vec![self.log.clone()];
        trees.extend(taken.games.iter().map(|(_, tree, _)| tree.clone()));
        let written = trees[..].transaction(|t| {
            for (k, v) in &leaves {
                t[0].insert(k.as_slice(), v.as_slice())?;
            }
            for ((level, index), hash) in &taken.nodes {
                t[0].insert(node_key(*level, *index).as_slice(), hash.as_slice())?;
            }
            for (i, (_, _, chunks)) in taken.games.iter().enumerate() {
                for (c, chunk) in chunks {
                    t[i + 1].insert(&chunk::events_key(*c), chunk.bytes())?;
                }
            }
            Ok::<_, sled::transaction::ConflictableTransactionError<()>>(())
        });
        if let Err(e) = written {
            return Err(match e {
                sled::transaction::TransactionError::Storage(e) => Failure::sled("sled failed to store the events", &e),
                sled::transaction::TransactionError::Abort(()) => {
                    Failure { why: "a write-back aborted".into(), errno: None }
                }
            });
        }
        let mut unsynced = self.unsynced.lock().unwrap_or_else(|p| p.into_inner());
        for (game, _, chunks) in &taken.games {
            let Some(kept) = unsynced.games.get_mut(game) else { continue };
            for (c, chunk) in chunks {
                if kept.chunks.get(c).is_some_and(|now| Arc::ptr_eq(now, chunk)) {
                    kept.chunks.remove(c);
                }
            }
            if kept.chunks.is_empty() {
                unsynced.games.remove(game);
            }
        }
        for (c, chunk) in &taken.leaves {
            if unsynced.leaves.get(c).is_some_and(|now| Arc::ptr_eq(now, chunk)) {
                unsynced.leaves.remove(c);
            }
        }
        for (k, _) in &taken.nodes {
            unsynced.nodes.remove(k);
        }
        let games: usize = unsynced.games.values().flat_map(|g| g.chunks.values()).map(|c| c.bytes().len()).sum();
        unsynced.held = games + unsynced.leaves.len() * 64 * 60;
        Ok(())
    }

    /// sled flush, then fdatasync of its log file (and of any blob file,
    /// which sled never syncs).
    fn sync_now(&self) -> Result<(), Failure> {
        self.syncs.fetch_add(1, Ordering::Relaxed);
        self.flush_within(Duration::from_secs(crate::limits::SYNC_DEADLINE_SECONDS))?;
        self.log_file.sync_data().map_err(|e| Failure::io("fdatasync failed", &e))?;
        self.sync_blobs()
    }

    /// Syncs every file in `blobs/` and the directory itself, if it holds
    /// any. Only a node of chunks of events near the largest becomes a blob
    /// (see `SEGMENT_SIZE`), so this is seldom needed, and cheap: the directory
    /// is listed again only when its mtime is not the one a listing could
    /// trust (`BlobsSeen`). Listing it at every sync (an open, a stat, two
    /// reads of it and a close) cost a twentieth of a durable append.
    fn sync_blobs(&self) -> Result<(), Failure> {
        let blobs = self.dir.join("blobs");
        let Ok(meta) = std::fs::metadata(&blobs) else {
            return Ok(());
        };
        let mtime = meta.modified().ok();
        let mut seen = self.blobs_seen.lock().unwrap_or_else(|p| p.into_inner());
        if mtime.is_some() && seen.trusted == mtime {
            return Ok(());
        }
        seen.listings += 1;
        sync_blob_files(&blobs).map_err(|e| Failure::io("sync of sled's blobs failed", &e))?;
        seen.trusted = mtime.filter(|m| BlobsSeen::old_enough(*m, std::time::SystemTime::now()));
        Ok(())
    }
}

/// The mtime of `blobs/` at the last listing of it, when that mtime can be
/// trusted to change with the next file sled adds: a file system stamps
/// times from a clock that ticks every few milliseconds, so a file added
/// in the same tick as the mtime seen leaves it as it was. An mtime at
/// least `TRUSTED_AGE` older than the listing is safe: any later change
/// stamps a later time. (A store's `blobs/` is made when the store is,
/// and then never changes.)
#[derive(Debug, Default)]
struct BlobsSeen {
    trusted: Option<std::time::SystemTime>,
    /// How many times the directory was listed (for tests).
    listings: u64,
}

impl BlobsSeen {
    const TRUSTED_AGE: Duration = Duration::from_secs(1);

    fn old_enough(mtime: std::time::SystemTime, now: std::time::SystemTime) -> bool {
        now.duration_since(mtime).is_ok_and(|age| age >= Self::TRUSTED_AGE)
    }
}

/// A store not new and not of layout 4: what its log says of its layout
/// (`LAYOUT_KEY`; none at all in a store from before arbiter kept a log,
/// and a log without the key is layout 1's).
fn earlier_layout(shown: &str, layout: Option<&[u8]>, has_log: bool) -> OpenError {
    let found = match (has_log, layout) {
        (false, _) => "no log (it was written before arbiter kept one)".to_string(),
        (true, None) => "a log of layout 1".to_string(),
        (true, Some([n])) => format!("a log of layout {n}"),
        (true, Some(other)) => format!("a log of layout {other:?} (a conversion cut short)"),
    };
    OpenError::Layout { dir: shown.to_string(), found }
}

/// The store at `shown` fails a check of its own: damage, not I/O.
fn damaged(shown: &str, why: impl std::fmt::Display) -> OpenError {
    OpenError::Lost(format!("the store at {shown} is damaged: {why}"))
}

/// A read of an open that failed: an I/O error is one; anything else is
/// damage, said as `why` says it.
fn read_failure(shown: &str, e: ReadError, why: impl FnOnce(ReadError) -> String) -> OpenError {
    match e {
        ReadError::Io(io) => OpenError::Io { dir: shown.to_string(), why: io },
        e => damaged(shown, why(e)),
    }
}

/// A write of an open (completing or undoing the newest insert) that
/// failed: the store cannot be written there, or another I/O error.
fn write_error(shown: &str, e: &sled::Error) -> OpenError {
    match e {
        sled::Error::Io(io) if dir::is_unwritable(io) => {
            OpenError::Unwritable { dir: shown.to_string(), why: io.to_string() }
        }
        _ => OpenError::Io { dir: shown.to_string(), why: e.to_string() },
    }
}

/// Syncs every file in sled's `blobs` directory, and the directory itself
/// if it holds any: sled never syncs them.
fn sync_blob_files(blobs: &Path) -> std::io::Result<()> {
    let mut any = false;
    if let Ok(entries) = std::fs::read_dir(blobs) {
        for entry in entries.flatten() {
            any = true;
            File::open(entry.path())?.sync_data()?;
        }
    }
    if any {
        File::open(blobs)?.sync_all()?;
    }
    Ok(())
}

/// Writes and syncs one byte in a file of `dir`, then removes it: what the
/// disk under a store answers now.
fn probe_write(dir: &Path) -> std::io::Result<()> {
    use std::io::Write;
    let path = dir.join("sync-probe");
    let written = File::create(&path).and_then(|mut f| f.write_all(b"\n").and_then(|()| f.sync_data()));
    let _ = std::fs::remove_file(&path);
    written
}

impl SledStore {
    /// Chunk `c` of `game`: as inserted, if a write-back has not written
    /// it yet; else as sled holds it. (A chunk a write-back forgets is in
    /// sled by then, so no read finds it in neither.)
    fn events_chunk(&self, game: &str, tree: &sled::Tree, c: u64) -> Result<Option<Arc<chunk::Events>>, ReadError> {
        let unsynced = self.unsynced.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(chunk) = unsynced.games.get(game).and_then(|g| g.chunks.get(&c)) {
            return Ok(Some(chunk.clone()));
        }
        drop(unsynced);
        Ok(self.stored_events_chunk(game, tree, c)?.map(Arc::new))
    }

    /// Leaf chunk `c`, as `events_chunk` finds a game's.
    fn leaves_chunk(&self, c: u64) -> Result<Option<Arc<chunk::Leaves>>, ReadError> {
        if let Some(chunk) = self.unsynced.lock().unwrap_or_else(|p| p.into_inner()).leaves.get(&c) {
            return Ok(Some(chunk.clone()));
        }
        Ok(self.stored_leaves_chunk(c)?.map(Arc::new))
    }

    /// Event `seq` of `game`: its index in the log and its stored bytes.
    fn stored_event(&self, game: &str, tree: &sled::Tree, seq: u64) -> Result<Option<(u64, Vec<u8>)>, ReadError> {
        let (c, i) = chunk::event_place(seq);
        let Some(chunk) = self.events_chunk(game, tree, c)? else { return Ok(None) };
        Ok(chunk.get(i).map(|(index, bytes)| (index, bytes.to_vec())))
    }

    /// The last event of `game` that a read may return: the last stored,
    /// or in a failed store the last whose index in the log is below the
    /// durable size (indexes are given in the order events are inserted,
    /// so those after it are the ones the failed sync did not cover).
    fn last_event(&self, game: &str, tree: &sled::Tree) -> Result<Option<(u64, Vec<u8>)>, ReadError> {
        let newest = {
            let unsynced = self.unsynced.lock().unwrap_or_else(|p| p.into_inner());
            unsynced.games.get(game).and_then(|g| g.chunks.last_key_value()).map(|(c, chunk)| (*c, chunk.clone()))
        };
        let (mut c, mut chunk) = match newest {
            Some(found) => found,
            None => {
                let last = tree.last().map_err(|e| ReadError::Io(e.to_string()))?;
                let Some(c) = last.and_then(|(k, _)| chunk::number(&k, chunk::EVENTS_KIND)) else { return Ok(None) };
                match self.events_chunk(game, tree, c)? {
                    Some(chunk) => (c, chunk),
                    None => return Ok(None),
                }
            }
        };
        let durable = self.failure().map(|_| self.durable_size.load(Ordering::SeqCst));
        loop {
            for i in (0..chunk.len()).rev() {
                let (index, bytes) = chunk.get(i).expect("within the chunk");
                if durable.is_none_or(|d| index < d) {
                    return Ok(Some((c * EVENTS_PER_CHUNK + i as u64, bytes.to_vec())));
                }
            }
            let Some(before) = c.checked_sub(1) else { return Ok(None) };
            c = before;
            chunk = match self.events_chunk(game, tree, c)? {
                Some(chunk) => chunk,
                None => return Ok(None),
            };
        }
    }

    /// The head of `game` as a read sees it (`last_event`).
    fn durable_head(&self, game: &str, tree: &sled::Tree) -> Result<Option<Link>, ReadError> {
        match self.last_event(game, tree)? {
            None => Ok(None),
            Some((seq, bytes)) => Ok(Some(decode_stored(seq, &bytes)?.link())),
        }
    }

    /// The stored events of `game` from `from`, unchecked, each with its
    /// seq: chunk after chunk, to the game's end when the read began (a
    /// chunk not full is its last), or in a failed store to the last
    /// durable event.
    fn stored_range(&self, game: &str, tree: sled::Tree, from: u64) -> StoredEvents<'_> {
        let durable = self.failure().map(|_| self.durable_size.load(Ordering::SeqCst));
        let game = game.to_string();
        let mut next = from;
        let mut chunk: Option<Arc<chunk::Events>> = None;
        let mut ended = false;
        Box::new(std::iter::from_fn(move || {
            if ended {
                return None;
            }
            let (c, i) = chunk::event_place(next);
            if i == 0 || chunk.is_none() {
                chunk = match self.events_chunk(&game, &tree, c) {
                    Ok(found) => found,
                    Err(e) => {
                        ended = true;
                        return Some(Err(e));
                    }
                };
                touch(&tree, &chunk::events_key(c), SCAN_TOUCHES);
            }
            let entry = chunk.as_ref().and_then(|ch| ch.get(i));
            match entry {
                Some((index, bytes)) if durable.is_none_or(|d| index < d) => {
                    next += 1;
                    Some(Ok((next - 1, bytes.to_vec())))
                }
                Some(_) => {
                    ended = true;
                    None
                }
                // The game's end, unless a later chunk is stored. Appends
                // may have grown this chunk since it was read: the next
                // chunk is asked first (it exists only once this one is
                // full), then this one again. If it still lacks the event,
                // events were removed behind arbiter's back (sled writes a
                // chunk whole), and the read says so rather than end early.
                None => {
                    let after = self.events_chunk(&game, &tree, c + 1);
                    let again = match self.events_chunk(&game, &tree, c) {
                        Ok(again) => again,
                        Err(e) => {
                            ended = true;
                            return Some(Err(e));
                        }
                    };
                    if let Some((index, bytes)) = again.as_ref().and_then(|ch| ch.get(i))
                        && durable.is_none_or(|d| index < d)
                    {
                        let bytes = bytes.to_vec();
                        chunk = again;
                        next += 1;
                        return Some(Ok((next - 1, bytes)));
                    }
                    ended = true;
                    match after {
                        Ok(None) => None,
                        Ok(Some(after)) => Some(Err(ReadError::Corrupt {
                            seq: next,
                            why: crate::event::EventError::Malformed(format!(
                                "it is missing, and {} events from seq {} are stored after it",
                                after.len(),
                                (c + 1) * EVENTS_PER_CHUNK
                            )),
                        })),
                        Err(e) => Some(Err(e)),
                    }
                }
            }
        }))
    }
}

/// How many more times a scan asks sled for each chunk it reads. sled 0.34
/// applies reads to its cache's LRU 64 at a time in each of 256 shards, and
/// pages nothing out of a shard before: a scan that reads each chunk once
/// pages out little, and a replay of 1,000,000 events held the whole game
/// (layout 3: 231 MB peak; 93 MB with 8 touches). Asked again, a chunk
/// already in the cache costs a lookup. sled's LRU also never evicts the
/// last page of any of its 256 shards, and a leaf node holds up to 17
/// keys, so about 256 nodes of chunks stay whatever the capacity: with 64
/// events to a key (layout 3) about 43 MB at 1,000,000 events, which is
/// why layout 4 puts 8 to a key. On layout 4, a whole verify of 1,000,000
/// events in the bench's process peaked at 65, 48, 46 and 45 MB with 0, 2,
/// 4 and 8 touches, at 19,228, 19,957, 20,706 and 22,188 instructions per
/// event (callgrind, 50,000 events; layout 3 with 8 touches: 19,359).
const SCAN_TOUCHES: usize = 2;

/// Asks sled for `key` of `tree` `times` times, only so that its cache
/// pages out what a scan is done with (see `SCAN_TOUCHES`). What it
/// answers was read already: an error here is the read's to report.
fn touch(tree: &sled::Tree, key: &[u8], times: usize) {
    for _ in 0..times {
        let _ = tree.get(key);
    }
}

impl Store for SledStore {
    fn games(&self) -> Result<Vec<String>, ReadError> {
        let mut names = Vec::new();
        for raw in self.db.tree_names() {
            let Ok(name) = std::str::from_utf8(&raw) else {
                continue;
            };
            if let Some(game) = name.strip_prefix(TREE_PREFIX)
                && self.head(game)?.is_some()
            {
                names.push(game.to_string());
            }
        }
        names.sort();
        Ok(names)
    }

    fn head(&self, game: &str) -> Result<Option<Head>, ReadError> {
        let tree = match self.existing_tree(game) {
            Ok(t) => t,
            Err(ReadError::NoSuchGame(_)) => return Ok(None),
            Err(e) => return Err(e),
        };
        self.durable_head(game, &tree)
    }

    fn read(&self, game: &str, from: u64) -> Result<Events<'_>, ReadError> {
        let tree = self.existing_tree(game)?;
        if self.durable_head(game, &tree)?.is_none() {
            return Err(ReadError::NoSuchGame(game.to_string()));
        }
        // The first event read links to the one before it: fetch that link.
        let prev: Option<Link> = match from.checked_sub(1) {
            None => None,
            Some(p) => match self.stored_event(game, &tree, p)? {
                Some((_, bytes)) => Some(decode_stored(p, &bytes)?.link()),
                None => return Ok(Box::new(std::iter::empty())),
            },
        };
        let mut chain = Chain::after(prev);
        Ok(Box::new(self.stored_range(game, tree, from).map(move |item| {
            let (seq, bytes) = item?;
            let Parsed { event, at, .. } = decode_parsed(seq, &bytes)?;
            chain.push(&event, at).map_err(|why| ReadError::Corrupt { seq, why })?;
            Ok(event)
        })))
    }

    fn read_stored(&self, game: &str, from: u64) -> Result<StoredEvents<'_>, ReadError> {
        let tree = self.existing_tree(game)?;
        if self.durable_head(game, &tree)?.is_none() {
            return Err(ReadError::NoSuchGame(game.to_string()));
        }
        Ok(self.stored_range(game, tree, from))
    }

    fn append(&self, game: &str, event: &Event, bytes: &[u8]) -> Result<(), AppendError> {
        let ticket = self.insert(game, &[(event.clone(), bytes.to_vec())])?;
        self.make_durable(ticket)
    }

    fn append_batch(&self, game: &str, events: &[(Event, Vec<u8>)]) -> Result<(), AppendError> {
        let ticket = self.insert(game, events)?;
        self.make_durable(ticket)
    }

    fn insert_batch(&self, game: &str, events: &[(Event, Vec<u8>)]) -> Result<Ticket, AppendError> {
        self.insert(game, events).map(Ticket::of)
    }

    fn newest_ticket(&self) -> Ticket {
        Ticket::of(self.commit.lock().unwrap_or_else(|p| p.into_inner()).written.ticket)
    }

    fn wait_durable(&self, ticket: Ticket) -> Result<(), AppendError> {
        ticket.to_wait_for().map_or(Ok(()), |t| self.make_durable(t))
    }

    fn durable(&'static self, ticket: Ticket) -> Durable {
        match ticket.to_wait_for() {
            Some(ticket) => Box::pin(self.durable_async(ticket)),
            None => Box::pin(std::future::ready(Ok(()))),
        }
    }

    /// The size at the last sync that succeeded: an event in memory whose
    /// sync is still running (or failed) is not counted.
    fn log_size(&self) -> Result<u64, ReadError> {
        Ok(self.durable_size.load(Ordering::SeqCst))
    }

    fn log_node(&self, level: u8, index: u64) -> Result<Hash, ReadError> {
        let broken = || ReadError::Log(format!("subtree {index} at level {level} is missing or damaged"));
        if self.failure().is_some() {
            let end = index.checked_add(1).and_then(|n| n.checked_mul(1u64.checked_shl(level.into())?));
            if end.is_none_or(|end| end > self.durable_size.load(Ordering::SeqCst)) {
                return Err(self.unreadable(&format!("subtree {index} at level {level}")));
            }
        }
        if level < STORED_LEVEL {
            return self.computed_node(level, index);
        }
        if let Some(hash) = self.unsynced.lock().unwrap_or_else(|p| p.into_inner()).nodes.get(&(level, index)) {
            return Ok(*hash);
        }
        let value = self.log.get(node_key(level, index)).map_err(|e| ReadError::Io(e.to_string()))?;
        value.and_then(|v| v.as_ref().try_into().ok()).ok_or_else(broken)
    }

    fn log_leaf(&self, index: u64) -> Result<Option<(String, u64)>, ReadError> {
        if self.failure().is_some() && index >= self.durable_size.load(Ordering::SeqCst) {
            return Ok(None);
        }
        let (c, i) = chunk::leaf_place(index);
        let Some(chunk) = self.leaves_chunk(c)? else { return Ok(None) };
        Ok(chunk.get(i).map(|leaf| (leaf.game.clone(), leaf.seq)))
    }

    fn log_position(&self, game: &str, seq: u64) -> Result<Option<u64>, ReadError> {
        let tree = match self.existing_tree(game) {
            Ok(t) => t,
            Err(ReadError::NoSuchGame(_)) => return Ok(None),
            Err(e) => return Err(e),
        };
        let position = self.stored_event(game, &tree, seq)?.map(|(index, _)| index);
        match (position, self.failure()) {
            (Some(p), Some(_)) if p >= self.durable_size.load(Ordering::SeqCst) => Ok(None),
            _ => Ok(position),
        }
    }

    /// A failed store reads no setting: one written just before the
    /// failure may not be durable.
    fn setting(&self, key: &str) -> Result<Option<Vec<u8>>, ReadError> {
        if self.failure().is_some() {
            return Err(self.unreadable("settings"));
        }
        if let Some(kept) = self.kept_settings.get(key) {
            return Ok(Some(kept));
        }
        let writes = self.kept_settings.writes();
        let Some(tree) = self.settings_tree() else { return Ok(None) };
        let value = tree.get(key.as_bytes()).map_err(|e| ReadError::Io(e.to_string()))?.map(|v| v.to_vec());
        self.kept_settings.keep(key, value.as_deref(), writes);
        Ok(value)
    }

    fn settings(&self, prefix: &str) -> Result<Vec<(String, Vec<u8>)>, ReadError> {
        if self.failure().is_some() {
            return Err(self.unreadable("settings"));
        }
        let Some(tree) = self.settings_tree() else { return Ok(Vec::new()) };
        let mut out = Vec::new();
        for item in tree.scan_prefix(prefix.as_bytes()) {
            let (k, v) = item.map_err(|e| ReadError::Io(e.to_string()))?;
            out.push((String::from_utf8_lossy(&k).into_owned(), v.to_vec()));
        }
        Ok(out)
    }

    fn put_setting(&self, key: &str, value: &[u8]) -> Result<(), AppendError> {
        self.refuse()?;
        {
            // One writer at a time, so that memory is told in sled's order.
            let _writing = self.kept_settings.writing();
            self.settings_to_write()?
                .insert(key.as_bytes(), value)
                .map_err(|e| self.failed_with(Failure::sled("sled failed to store a setting", &e)))?;
            self.kept_settings.written(key, Some(value));
        }
        self.sync_settings()
    }

    fn swap_setting(&self, key: &str, expected: Option<&[u8]>, new: Option<&[u8]>) -> Result<bool, AppendError> {
        self.refuse()?;
        let swapped = {
            // One writer at a time, so that memory is told in sled's order.
            let _writing = self.kept_settings.writing();
            let swapped = self
                .settings_to_write()?
                .compare_and_swap(key.as_bytes(), expected, new)
                .map_err(|e| self.failed_with(Failure::sled("sled failed to store a setting", &e)))?;
            match &swapped {
                Ok(()) => self.kept_settings.written(key, new),
                // What sled holds, which memory then holds too.
                Err(e) => self.kept_settings.written(key, e.current.as_deref()),
            }
            swapped.is_ok()
        };
        match swapped {
            true => self.sync_settings().map(|()| true),
            false => Ok(false),
        }
    }

    fn syncs(&self) -> u64 {
        self.syncs.load(Ordering::Relaxed)
    }

    /// Why a write to the store failed, once one has. The store then
    /// stores nothing more and reads only what is durable; open it again
    /// (in a new process) to go on.
    fn failed(&self) -> Option<String> {
        self.failure().map(|f| f.why)
    }

    /// Calls `watch` after every sync that succeeds, on the thread that
    /// led it, once its followers are woken (so it delays no append but
    /// the leader's, and that by what `watch` costs: keep it to counters).
    /// A second call replaces the first watcher.
    fn on_sync(&self, watch: SyncWatcher) {
        *self.sync_watcher.lock().unwrap_or_else(|p| p.into_inner()) = Some(watch);
    }

    fn close(self: Box<Self>) {
        SledStore::close(*self)
    }

    /// sled's own sync in a round, if the journal holds anything: it
    /// writes every insert into sled and empties the journal. A failed
    /// store syncs nothing more.
    fn settle(&self) -> Result<(), AppendError> {
        let journal = self.journal.lock().unwrap_or_else(|p| p.into_inner());
        let journaled = journal.bytes() + journal.older_bytes() > 0 && journal.replayed();
        drop(journal);
        match journaled {
            true => self.refuse().and_then(|()| self.make_durable(self.ticket())),
            false => Ok(()),
        }
    }

    fn checkpoints(&self) -> Result<Vec<super::checkpoints::Record>, String> {
        super::checkpoints::read(&self.dir)
    }

    /// One process holds a sled store, and it signs one checkpoint at a
    /// time (`checkpoints::sign`), each larger than the last.
    fn keep_checkpoint(&self, record: &super::checkpoints::Record) -> Result<bool, String> {
        let size = record.checkpoint().map_err(|e| e.to_string())?.size;
        super::checkpoints::append(&self.dir, record)?;
        self.put_setting(super::checkpoints::SIGNED_SETTING, &size.to_be_bytes()).map_err(|e| {
            format!(
                "checkpoint {size} is signed and in {}, but the store could not record its size: {e}",
                self.checkpoints_place()
            )
        })?;
        Ok(true)
    }

    fn checkpoints_place(&self) -> String {
        format!("the checkpoint file {}", self.dir.join(super::checkpoints::CHECKPOINT_FILE).display())
    }

    fn home(&self) -> Option<&Path> {
        Some(&self.dir)
    }

    fn name(&self) -> String {
        let dir = std::fs::canonicalize(&self.dir).unwrap_or_else(|_| self.dir.clone());
        dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    }

    fn snapshot(&self, game: &str, seq: u64) -> Result<Option<(u64, Vec<u8>)>, ReadError> {
        self.latest_snapshot(game, seq)
    }

    fn put_snapshot(&self, game: &str, seq: u64, bytes: &[u8]) -> Result<(), AppendError> {
        self.keep_snapshot(game, seq, bytes)
    }

    fn snapshot_seqs(&self, game: &str) -> Result<Vec<u64>, ReadError> {
        self.kept_snapshots(game)
    }

    fn delete_snapshot(&self, game: &str, seq: u64) -> Result<(), AppendError> {
        self.drop_snapshot(game, seq)
    }
}

impl SledStore {
    /// Checks `events` (in order, all of one game), adds them and their
    /// leaves to their chunks in memory (`Unsynced`) and takes a ticket;
    /// not yet durable; returns the ticket for `make_durable`. The log's
    /// lock is held from reading the head to the ticket, so positions in
    /// the log are given in the order events are inserted, with no gap,
    /// and a seq is never taken twice (no fork). What can fail (reading
    /// the chunks to add to) comes before anything is changed: a refused
    /// insert changes nothing.
    fn insert(&self, game: &str, events: &[(Event, Vec<u8>)]) -> Result<u64, AppendError> {
        self.refuse()?;
        if let Some(why) = &self.edge_broken {
            return Err(AppendError::Io(format!("{why}; nothing can be appended (`arbiter verify --all` says where)")));
        }
        if events.is_empty() {
            return Ok(self.ticket());
        }
        super::check_incoming(events)?;
        let tree = self.tree(game).map_err(AppendError::Io)?;
        // What needs no lock is done before the log's lock is taken: every
        // other table's insert waits on that lock.
        let hashes: Vec<Hash> = events.iter().map(|(_, b)| leaf_hash(b)).collect();
        let record = journal_record(game, events);
        let io = |e: ReadError| AppendError::Io(e.to_string());
        let mut unsynced = self.unsynced.lock().unwrap_or_else(|p| p.into_inner());
        self.refuse()?;
        let head = match unsynced.heads.get(game) {
            Some(head) => Some(head.clone()),
            None => {
                drop(unsynced);
                let head = self.durable_head(game, &tree).map_err(io)?;
                unsynced = self.unsynced.lock().unwrap_or_else(|p| p.into_inner());
                // Another insert to this game may have come meanwhile.
                unsynced.heads.get(game).cloned().or(head)
            }
        };
        let prev = super::check_follows(game, events, head)?;
        // The chunks the first event and leaf go to, read from sled when
        // not in memory (and not new): the rest go to new chunks.
        let first_seq = events[0].0.seq;
        let first_index = unsynced.frontier.size();
        let (game_chunk, _) = chunk::event_place(first_seq);
        let (leaf_chunk, _) = chunk::leaf_place(first_index);
        let loaded_events = match unsynced.games.get(game).is_some_and(|g| g.chunks.contains_key(&game_chunk)) {
            true => None,
            false if first_seq.is_multiple_of(EVENTS_PER_CHUNK) => Some(chunk::Events::default()),
            false => {
                let chunk = self.stored_events_chunk(game, &tree, game_chunk).map_err(io)?;
                Some(chunk.ok_or_else(|| {
                    AppendError::Io(format!("{game}'s events from seq {} are missing", game_chunk * EVENTS_PER_CHUNK))
                })?)
            }
        };
        let loaded_leaves = match unsynced.leaves.contains_key(&leaf_chunk) {
            true => None,
            false if first_index.is_multiple_of(LEAVES_PER_CHUNK) => Some(chunk::Leaves::default()),
            false => {
                let chunk = self.stored_leaves_chunk(leaf_chunk).map_err(io)?;
                Some(chunk.ok_or_else(|| {
                    AppendError::Io(format!("the log's leaves from {} are missing", leaf_chunk * LEAVES_PER_CHUNK))
                })?)
            }
        };
        // Nothing fails from here on.
        let loaded = loaded_events.as_ref().map_or(0, |c| c.bytes().len()) + 64 * 60;
        unsynced.held += loaded + events.iter().map(|(_, b)| b.len() + 72).sum::<usize>();
        let record = record.filter(|_| unsynced.held <= UNSYNCED_LIMIT);
        let Unsynced { frontier, heads, games, leaves, nodes, .. } = &mut *unsynced;
        let kept = games.entry(game.to_string()).or_insert_with(|| GameChunks { tree, chunks: BTreeMap::new() });
        if let Some(chunk) = loaded_events {
            kept.chunks.insert(game_chunk, Arc::new(chunk));
        }
        if let Some(chunk) = loaded_leaves {
            leaves.insert(leaf_chunk, Arc::new(chunk));
        }
        for (n, ((event, bytes), hash)) in events.iter().zip(&hashes).enumerate() {
            let index = frontier.size();
            for (level, i, node) in frontier.push(*hash) {
                if level >= STORED_LEVEL {
                    nodes.insert((level, i), node);
                }
            }
            let (c, _) = chunk::event_place(event.seq);
            Arc::make_mut(kept.chunks.entry(c).or_default()).push(index, bytes);
            let (c, _) = chunk::leaf_place(index);
            let leaf = chunk::Leaf { game: game.to_string(), seq: event.seq, continues: n > 0, hash: *hash };
            Arc::make_mut(leaves.entry(c).or_default()).push(leaf);
        }
        let ticket = self.ticket_at(frontier.size(), record);
        heads.insert(game.to_string(), prev);
        Ok(ticket)
    }

    /// Chunk `c` of `game` as sled holds it (see `events_chunk` for what
    /// memory holds).
    fn stored_events_chunk(&self, game: &str, tree: &sled::Tree, c: u64) -> Result<Option<chunk::Events>, ReadError> {
        let Some(v) = tree.get(chunk::events_key(c)).map_err(|e| ReadError::Io(e.to_string()))? else {
            return Ok(None);
        };
        chunk::Events::decode(v.to_vec()).map(Some).map_err(|e| {
            ReadError::Log(format!("{game}'s events from seq {} are damaged: {}", c * EVENTS_PER_CHUNK, e.0))
        })
    }

    /// Leaf chunk `c` as sled holds it (see `leaves_chunk`).
    fn stored_leaves_chunk(&self, c: u64) -> Result<Option<chunk::Leaves>, ReadError> {
        let Some(v) = self.log.get(chunk::leaves_key(c)).map_err(|e| ReadError::Io(e.to_string()))? else {
            return Ok(None);
        };
        chunk::Leaves::decode(&v)
            .map(Some)
            .map_err(|e| ReadError::Log(format!("the log's leaves from {} are damaged: {}", c * LEAVES_PER_CHUNK, e.0)))
    }

    /// What the journal's records add to what sled holds, checked whole
    /// before anything is written (see `super::journal`): in the
    /// journal's order (its older file's, then its file's), which is the
    /// log's, each insert's events that sled
    /// lacks, each following its game's head (sled's, or the journal's
    /// event before it). An event sled holds with the same bytes is passed
    /// over. An event that is not whole, differs from the one stored at
    /// its seq, or does not follow its game's head is damage: the store
    /// does not open, and nothing is written.
    fn journal_adds(&self, shown: &str, journaled: &journal::Files) -> Result<Vec<Missing>, OpenError> {
        let files = journaled.in_order(&self.dir);
        let records = files.iter().flat_map(|(place, read)| {
            read.records
                .iter()
                .enumerate()
                .map(move |(i, record)| (format!("{}, record {}", place.display(), i + 1), record))
        });
        let mut heads: HashMap<&str, Option<Link>> = HashMap::new();
        let mut adds = Vec::new();
        let failure = |e| read_failure(shown, e, |e| e.to_string());
        for (at, (game, events)) in records {
            let bad = |why: String| damaged(shown, format!("{at}: game {game}: {why}"));
            let tree = match self.existing_tree(game) {
                Ok(tree) => Some(tree),
                Err(ReadError::NoSuchGame(_)) => None,
                Err(e) => return Err(failure(e)),
            };
            let mut lacking = Vec::new();
            for bytes in events {
                let parsed = crate::event::parse_stored(bytes).map_err(|e| bad(e.to_string()))?;
                let seq = parsed.event.seq;
                crate::event::check_stored(&parsed, seq, bytes).map_err(|e| bad(e.to_string()))?;
                let stored = match &tree {
                    Some(t) => self.stored_event(game, t, seq).map_err(failure)?.map(|(_, b)| b),
                    None => None,
                };
                match stored {
                    Some(stored) if stored != *bytes => {
                        return Err(bad(format!("seq {seq} differs from the event stored there")));
                    }
                    Some(_) if lacking.is_empty() => continue,
                    Some(_) => {
                        return Err(bad(format!("seq {seq} is stored, but an event before it in its insert is not")));
                    }
                    None => {}
                }
                let head = match heads.get(game.as_str()) {
                    Some(h) => h.clone(),
                    None => match &tree {
                        Some(t) => self.durable_head(game, t).map_err(failure)?,
                        None => None,
                    },
                };
                crate::event::check_link(&parsed.event, head.as_ref())
                    .map_err(|e| bad(format!("seq {seq} does not follow what the store holds: {e}")))?;
                heads.insert(game, Some(parsed.event.link()));
                lacking.push((parsed.event, bytes.clone()));
            }
            if !lacking.is_empty() {
                adds.push((game.clone(), lacking));
            }
        }
        Ok(adds)
    }

    /// Whether, after a crash that left a journal, what the newest
    /// checkpoint finds missing may be what the open puts right without
    /// touching what it signed: the journal's events (`adds`, after a log
    /// of `size` events) and the newest insert's subtrees, computed from
    /// its events (sled's flush on a timer may have written an insert the
    /// journal acknowledged only in part). So the log, once they are
    /// added, reaches the checkpoint, and each game's head at the
    /// checkpoint is in sled or among `adds`; then the only position the
    /// repair may undo (the newest insert's, cut short before its event)
    /// is one whose event the journal puts back. Otherwise the store lost
    /// what no journal holds, and the open stops before writing anything.
    /// (The signed root is checked by the check at the end of the open.)
    fn journal_may_explain(&self, adds: &[Missing], size: u64) -> bool {
        let Ok(records) = super::checkpoints::read(&self.dir) else { return false };
        let Some(Ok(newest)) = records.last().map(|r| r.checkpoint()) else { return false };
        let added: u64 = adds.iter().map(|(_, events)| events.len() as u64).sum();
        if size + added < newest.size {
            return false;
        }
        let mut heads: HashMap<&str, &(u64, String)> = HashMap::new();
        for r in &records {
            heads.extend(r.heads.iter().map(|(g, h)| (g.as_str(), h)));
        }
        heads.into_iter().all(|(game, (seq, hash))| {
            let in_journal = adds
                .iter()
                .any(|(g, events)| g == game && events.iter().any(|(e, _)| e.seq == *seq && e.hash == *hash));
            in_journal || self.get(game, *seq).ok().flatten().is_some_and(|e| e.hash == *hash)
        })
    }

    /// Inserts what `journal_adds` found sled lacks, each insert as an
    /// append would make it: the positions in the log come out as they were.
    fn replay_journal(&self, shown: &str, adds: Vec<Missing>) -> Result<(), OpenError> {
        for (game, events) in adds {
            self.insert(&game, &events).map_err(|e| match e {
                AppendError::Io(why) => OpenError::Io { dir: shown.to_string(), why },
                e => damaged(shown, format!("the journal's events of game {game} could not be put back: {e}")),
            })?;
        }
        Ok(())
    }

    /// Why the log's newest leaf does not match its event, if it does not:
    /// the event is not stored at its seq, or is stored at another index.
    /// (Only a change behind arbiter's back makes one: sled writes a
    /// chunk and its leaves in one transaction.)
    fn newest_event_missing(&self) -> Result<Option<String>, ReadError> {
        let size = self.durable_size.load(Ordering::SeqCst);
        let Some(newest) = size.checked_sub(1) else { return Ok(None) };
        let Some((game, seq)) = self.log_leaf(newest)? else { return Ok(None) };
        let missing = Some(format!("{game} seq {seq}, its newest event, is missing"));
        let tree = match self.existing_tree(&game) {
            Ok(tree) => tree,
            Err(ReadError::NoSuchGame(_)) => return Ok(missing),
            Err(e) => return Err(e),
        };
        Ok(match self.stored_event(&game, &tree, seq)? {
            Some((index, _)) if index == newest => None,
            _ => missing,
        })
    }

    /// The hash of the complete subtree `index` at `level`, below
    /// `STORED_LEVEL`: computed from its leaves' hashes, which one leaf
    /// chunk holds (2^level divides `LEAVES_PER_CHUNK`).
    fn computed_node(&self, level: u8, index: u64) -> Result<Hash, ReadError> {
        let broken = || ReadError::Log(format!("subtree {index} at level {level} is missing or damaged"));
        let first = index.checked_shl(level.into()).ok_or_else(broken)?;
        let (c, i) = chunk::leaf_place(first);
        let chunk = self.leaves_chunk(c)?.ok_or_else(broken)?;
        let mut hashes: Vec<Hash> = chunk.hashes().skip(i).take(1 << level).copied().collect();
        if hashes.len() != 1 << level {
            return Err(broken());
        }
        while hashes.len() > 1 {
            hashes = hashes.chunks(2).map(|pair| node_hash(&pair[0], &pair[1])).collect();
        }
        Ok(hashes[0])
    }
}

/// The log's size as sled holds it: the last leaf chunk's first index
/// plus its leaves.
fn stored_size(log: &sled::Tree) -> Result<u64, ReadError> {
    let last = log.range(chunk::leaves_key(0)..=chunk::leaves_key(u64::MAX)).next_back();
    let Some(item) = last else { return Ok(0) };
    let (k, v) = item.map_err(|e| ReadError::Io(e.to_string()))?;
    let c =
        chunk::number(&k, chunk::LEAVES_KIND).ok_or_else(|| ReadError::Log("a leaf chunk's key is damaged".into()))?;
    let leaves = chunk::Leaves::decode(&v)
        .map_err(|e| ReadError::Log(format!("the log's leaves from {} are damaged: {}", c * LEAVES_PER_CHUNK, e.0)))?;
    if leaves.is_empty() {
        return Err(ReadError::Log(format!("the log's leaves from {} are empty", c * LEAVES_PER_CHUNK)));
    }
    Ok(c * LEAVES_PER_CHUNK + leaves.len() as u64)
}

/// The journal's record of an insert of `events` to `game`, or none for a
/// batch too long for one record (`journal::MOST_EVENTS`): sled's own sync
/// covers that.
fn journal_record(game: &str, events: &[(Event, Vec<u8>)]) -> Option<Vec<u8>> {
    if events.is_empty() || events.len() > journal::MOST_EVENTS {
        return None;
    }
    let mut record = Vec::new();
    journal::encode(game, events.iter().map(|(_, bytes)| bytes.as_slice()), &mut record);
    Some(record)
}

// Keys of the `log` tree: complete subtrees (leaf chunks: `chunk::leaves_key`).
fn node_key(level: u8, index: u64) -> [u8; 10] {
    let mut k = [0u8; 10];
    k[0] = b'n';
    k[1] = level;
    k[2..].copy_from_slice(&index.to_be_bytes());
    k
}

/// The log's layout, kept under `LAYOUT_KEY` in the `log` tree.
///
/// Layout 4: a game's events 8 to a key (`chunk::Events`, key 'e' and the
/// chunk's number, so key order is seq order), each with its index in the log, so
/// an event's place in the log needs no key of its own; the log's leaves
/// 64 to a key (`chunk::Leaves`, key 'L' and the chunk's number), each with
/// its hash, so a subtree of up to 64 leaves is computed from one chunk;
/// and a subtree's hash only at `STORED_LEVEL` and above (one per 64
/// events). The size is the last leaf chunk's first index plus its
/// leaves. A chunk not yet full is written as it is at each sled sync and
/// again, longer, at the next (see `Unsynced`).
///
///
/// Earlier layouts (1 to 3, and stores from before arbiter kept a log)
/// were written only by unreleased builds: an open refuses them, naming
/// the layout (`earlier_layout`). A later change of layout comes with its
/// converter, tested on a store written by the release before it.
const LAYOUT_KEY: &[u8] = b"format";
const LAYOUT: &[u8] = &[4];

/// Subtrees at this level and above are stored; those below (at most 32
/// leaves) are computed from one leaf chunk.
const STORED_LEVEL: u8 = 6;

fn decode_stored(seq: u64, bytes: &[u8]) -> Result<Event, ReadError> {
    Ok(decode_parsed(seq, bytes)?.event)
}

/// The tree of snapshots (`crate::fold::Folder::snapshot`), a cache beside
/// the games: key game NUL seq part (big-endian), value a part of the
/// snapshot's bytes.
const SNAPSHOT_TREE: &str = "snapshots";

/// A snapshot is stored in parts of at most this size: a sled node larger
/// than a quarter of a segment becomes a blob file (see `SEGMENT_SIZE`),
/// and a leaf of 16 such parts stays well below it.
const SNAPSHOT_PART_BYTES: usize = 64 * 1024;

fn snapshot_key(game: &str, seq: u64, part: u32) -> Vec<u8> {
    let mut k = snapshot_prefix(game);
    k.extend_from_slice(&seq.to_be_bytes());
    k.extend_from_slice(&part.to_be_bytes());
    k
}

fn snapshot_prefix(game: &str) -> Vec<u8> {
    let mut k = game.as_bytes().to_vec();
    k.push(0);
    k
}

/// The seq in a snapshot part's key.
fn snapshot_seq(prefix: &[u8], key: &[u8]) -> Option<u64> {
    key.get(prefix.len()..prefix.len() + 8)?.try_into().ok().map(u64::from_be_bytes)
}

impl SledStore {
    /// The snapshot tree if it exists: a store that only reads never makes it.
    fn snapshot_tree(&self) -> Result<Option<sled::Tree>, String> {
        if !self.db.tree_names().iter().any(|n| n.as_ref() == SNAPSHOT_TREE.as_bytes()) {
            return Ok(None);
        }
        self.db.open_tree(SNAPSHOT_TREE).map(Some).map_err(|e| e.to_string())
    }

    /// A failed store gives no snapshot: the event one follows may not be durable.
    fn latest_snapshot(&self, game: &str, seq: u64) -> Result<Option<(u64, Vec<u8>)>, ReadError> {
        if self.failure().is_some() {
            return Ok(None);
        }
        let io = |e: sled::Error| ReadError::Io(e.to_string());
        let Some(tree) = self.snapshot_tree().map_err(ReadError::Io)? else { return Ok(None) };
        let prefix = snapshot_prefix(game);
        let found = tree.range(prefix.clone()..=snapshot_key(game, seq, u32::MAX)).next_back();
        let Some(item) = found else { return Ok(None) };
        let Some(at) = snapshot_seq(&prefix, &item.map_err(io)?.0) else { return Ok(None) };
        let mut bytes = Vec::new();
        for part in tree.scan_prefix(&snapshot_key(game, at, 0)[..prefix.len() + 8]).values() {
            bytes.extend_from_slice(&part.map_err(io)?);
        }
        Ok(Some((at, bytes)))
    }

    /// All parts in one sled batch (a torn one is found by its checksum).
    fn keep_snapshot(&self, game: &str, seq: u64, bytes: &[u8]) -> Result<(), AppendError> {
        self.refuse()?;
        let io = |e: sled::Error| AppendError::Io(e.to_string());
        let tree = self.db.open_tree(SNAPSHOT_TREE).map_err(io)?;
        let mut batch = sled::Batch::default();
        for key in tree.scan_prefix(&snapshot_key(game, seq, 0)[..snapshot_prefix(game).len() + 8]).keys() {
            batch.remove(key.map_err(io)?);
        }
        for (i, part) in bytes.chunks(SNAPSHOT_PART_BYTES).enumerate() {
            batch.insert(snapshot_key(game, seq, i as u32), part);
        }
        tree.apply_batch(batch).map_err(io)
    }

    fn kept_snapshots(&self, game: &str) -> Result<Vec<u64>, ReadError> {
        let Some(tree) = self.snapshot_tree().map_err(ReadError::Io)? else { return Ok(Vec::new()) };
        let prefix = snapshot_prefix(game);
        let mut seqs = Vec::new();
        for k in tree.scan_prefix(&prefix).keys() {
            let k = k.map_err(|e| ReadError::Io(e.to_string()))?;
            let seq = snapshot_seq(&prefix, &k).ok_or_else(|| ReadError::Io("bad snapshot key".into()))?;
            if seqs.last() != Some(&seq) {
                seqs.push(seq);
            }
        }
        Ok(seqs)
    }

    /// Not synced on its own either: a snapshot that comes back after a
    /// crash is still checked by every reader.
    fn drop_snapshot(&self, game: &str, seq: u64) -> Result<(), AppendError> {
        self.refuse()?;
        let io = |e: sled::Error| AppendError::Io(e.to_string());
        let Some(tree) = self.snapshot_tree().map_err(AppendError::Io)? else { return Ok(()) };
        let mut batch = sled::Batch::default();
        for key in tree.scan_prefix(&snapshot_key(game, seq, 0)[..snapshot_prefix(game).len() + 8]).keys() {
            batch.remove(key.map_err(io)?);
        }
        tree.apply_batch(batch).map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Draft, seal};

    fn sealed(prev: Option<&Link>) -> (Event, Vec<u8>) {
        let draft = Draft { actor: "p1".into(), action: serde_json::json!({"type": "pass"}), at: None };
        seal(&draft, prev, chrono::Utc::now()).unwrap()
    }

    /// `store` synced and closed, with what a test wrote into it key by key
    /// (the state a crash would leave); where it is, to open again.
    fn closed_durably(store: SledStore) -> PathBuf {
        store.make_durable(store.ticket()).unwrap();
        let at = store.dir().to_path_buf();
        // Dropped here, not through `close` (which stops waiting for the
        // drop after two seconds, too soon on a loaded machine).
        drop(store);
        at
    }

    /// Runs the ignored test `name` of this module in a process of its own,
    /// with `var` (which makes it run) set to the store's directory `dir`.
    fn run_child(name: &str, var: &str, dir: &Path) -> std::process::Output {
        std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", &format!("store::sled::tests::{name}"), "--ignored", "--nocapture"])
            .env(var, dir)
            .output()
            .unwrap()
    }

    /// Returns once `done` says so, asking every millisecond (the crash
    /// tests' children, waiting for their appenders to get somewhere).
    fn wait_until(mut done: impl FnMut() -> bool) {
        while !done() {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// What a child said it acknowledged: each event's game, seq and
    /// position in the log, from its lines `acknowledged GAME SEQ POSITION`.
    fn acknowledged_in(stdout: &str) -> Vec<(String, u64, u64)> {
        stdout
            .lines()
            .filter_map(|l| {
                let mut words = l.strip_prefix("acknowledged ")?.split(' ');
                Some((words.next()?.to_string(), words.next()?.parse().ok()?, words.next()?.parse().ok()?))
            })
            .collect()
    }

    /// The variable that makes `journal_child_appends_then_aborts` run: the
    /// store's directory.
    const JOURNAL_CHILD: &str = "ARBITER_TEST_JOURNAL_CHILD";

    /// The child of `an_acknowledged_append_survives_a_crash_through_the_journal`:
    /// appends a batch of three to game "g", then to "g" and "h" in turn,
    /// one event at a time; says each event acknowledged with its position
    /// in the log; signs a checkpoint of them; then aborts (no close, no
    /// drop: sled writes nothing more).
    #[test]
    #[ignore = "run by its parent test, in a process of its own"]
    fn journal_child_appends_then_aborts() {
        use std::io::Write;
        let Ok(dir) = std::env::var(JOURNAL_CHILD) else { return };
        let store = SledStore::open(Path::new(&dir)).unwrap();
        let head_of = |game: &str| store.get(game, store.head(game).unwrap().unwrap().seq).unwrap().map(|e| e.link());
        let said = |game: &str, seq: u64| {
            println!("acknowledged {game} {seq} {}", store.log_position(game, seq).unwrap().unwrap());
            std::io::stdout().flush().unwrap();
        };
        let batch = events_after_link(head_of("g").as_ref().unwrap(), 3);
        store.append_batch("g", &batch).unwrap();
        for (event, _) in &batch {
            said("g", event.seq);
        }
        let mut heads = [Some(batch[2].0.link()), head_of("h")];
        for i in 0..20 {
            let (game, head) = (["g", "h"][i % 2], &mut heads[i % 2]);
            let (event, bytes) = sealed(head.as_ref());
            store.append(game, &event, &bytes).unwrap();
            said(game, event.seq);
            *head = Some(event.link());
        }
        // A checkpoint of them all: its size is a setting, made durable
        // by sled's flush beside the commit, with no write-back (sled
        // holds no more events for it).
        let signer = super::super::checkpoints::signer(&store, None, Some("test.example/log")).unwrap();
        let signed = super::super::checkpoints::sign(&store, &signer).unwrap();
        println!("signed {}", signed.checkpoint.size);
        std::io::stdout().flush().unwrap();
        std::process::abort();
    }

    /// A process that dies right after its appends were acknowledged (each
    /// made durable by the journal alone: in these tests sled flushes on no
    /// timer, and the process never closed its store) loses none of them:
    /// the next open puts them back from the journal, every event at the
    /// position in the log it had, and empties the journal. A checkpoint
    /// signed of them (its size a setting, synced by sled's flush alone)
    /// is met by the open: the journal makes up what sled lacks.
    #[test]
    fn an_acknowledged_append_survives_a_crash_through_the_journal() {
        let (dir, store, _) = with_first_event();
        let (h0, hb0) = sealed(None);
        store.append("h", &h0, &hb0).unwrap();
        store.close();
        let journal_path = dir.path().join(journal::FILE);
        assert_eq!(journal::read(&journal_path).unwrap().bytes(), 0, "a close empties the journal");
        let out = run_child("journal_child_appends_then_aborts", JOURNAL_CHILD, dir.path());
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(acknowledged_in(&stdout).len(), 23, "{stdout}");
        let journaled = journal::read(&journal_path).unwrap();
        assert_eq!(journaled.records.len(), 21, "an insert a record: the batch and 20 appends");
        assert_eq!(journaled.records[0].1.len(), 3);
        // sled alone lost the appends: no timer flushed them, and no close.
        {
            let db = open_sled(dir.path()).unwrap();
            let held = |game: &str| {
                let tree = db.open_tree(format!("{TREE_PREFIX}{game}")).unwrap();
                tree.iter().values().map(|v| chunk::Events::decode(v.unwrap().to_vec()).unwrap().len()).sum::<usize>()
            };
            assert!(
                held("g") == 1 && held("h") == 1,
                "sled held more than it was made to: {}, {}",
                held("g"),
                held("h")
            );
        }

        assert!(stdout.contains("signed 25"), "{stdout}");
        let store = every_acknowledged_event_is_put_back(dir.path(), &out);
        assert_eq!(store.head("g").unwrap().unwrap().seq, 13);
        assert_eq!(store.head("h").unwrap().unwrap().seq, 10);
        assert_eq!(store.log_size().unwrap(), 25);
        let signed = store.setting(super::super::checkpoints::SIGNED_SETTING).unwrap();
        assert_eq!(signed, Some(25u64.to_be_bytes().to_vec()), "the checkpoint's size survived in sled");
        let dir_path = closed_durably(store);
        let store = SledStore::open(&dir_path).unwrap();
        assert_eq!(store.head("g").unwrap().unwrap().seq, 13, "what was put back is sled's own now");
    }

    /// The variable that makes `concurrent_child_appends_then_aborts`
    /// run: the store's directory.
    const CONCURRENT_CHILD: &str = "ARBITER_TEST_CONCURRENT_CHILD";

    /// The child of `acknowledged_appends_survive_a_crash_amid_concurrent_syncs`:
    /// four threads append to a game each while a fifth, every 2 ms,
    /// writes a setting (sled's own sync, beside the commit) and asks for
    /// a round of sled's own sync (which writes what was inserted into
    /// sled, then empties the journal); prints each acknowledgement; aborts
    /// once 400 are made, with appends and syncs under way.
    #[test]
    #[ignore = "run by acknowledged_appends_survive_a_crash_amid_concurrent_syncs"]
    fn concurrent_child_appends_then_aborts() {
        use std::io::Write;
        let Ok(dir) = std::env::var(CONCURRENT_CHILD) else { return };
        let store = SledStore::open(Path::new(&dir)).unwrap();
        let acknowledged = AtomicU64::new(0);
        std::thread::scope(|scope| {
            for game in ["a", "b", "c", "d"] {
                let (store, acknowledged) = (&store, &acknowledged);
                scope.spawn(move || {
                    let (e0, b0) = sealed(None);
                    store.append(game, &e0, &b0).unwrap();
                    let mut head = e0.link();
                    loop {
                        let (event, bytes) = sealed(Some(&head));
                        store.append(game, &event, &bytes).unwrap();
                        println!("acknowledged {game} {}", event.seq);
                        std::io::stdout().flush().unwrap();
                        head = event.link();
                        acknowledged.fetch_add(1, Ordering::SeqCst);
                    }
                });
            }
            scope.spawn(|| {
                for i in 0u64.. {
                    store.put_setting("tick", &i.to_be_bytes()).unwrap();
                    store.make_durable(store.ticket()).unwrap();
                    std::thread::sleep(Duration::from_millis(2));
                }
            });
            wait_until(|| acknowledged.load(Ordering::SeqCst) >= 400);
            std::process::abort();
        });
    }

    /// Appends acknowledged while sled's own syncs (a setting's, and
    /// rounds of it) run beside them all survive a crash: a sync empties the journal only
    /// once sled holds what it covers.
    #[test]
    fn acknowledged_appends_survive_a_crash_amid_concurrent_syncs() {
        let dir = tempfile::tempdir().unwrap();
        let out = run_child("concurrent_child_appends_then_aborts", CONCURRENT_CHILD, dir.path());
        assert!(!out.status.success(), "the child aborts");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let mut last: HashMap<String, u64> = HashMap::new();
        for line in stdout.lines() {
            let Some(rest) = line.strip_prefix("acknowledged ") else { continue };
            let (game, seq) = rest.split_once(' ').unwrap();
            let seq: u64 = seq.parse().unwrap();
            let newest = last.entry(game.to_string()).or_insert(seq);
            *newest = (*newest).max(seq);
        }
        assert!(last.values().sum::<u64>() >= 400, "{stdout}");
        let store = SledStore::open(dir.path()).unwrap();
        for (game, seq) in &last {
            let head = store.head(game).unwrap().unwrap().seq;
            assert!(head >= *seq, "{game}: acknowledged seq {seq}, the store's head is {head}");
            // `read` checks every link of the chain.
            let read = store.read(game, 0).unwrap().collect::<Result<Vec<_>, _>>().unwrap();
            assert_eq!(read.len() as u64, head + 1);
        }
        assert!(store.setting("tick").unwrap().is_some());
    }

    /// Past `journal::LIMIT` the journal is rotated: the round that passes
    /// it writes its record into a new file, and sled's own sync runs
    /// behind it (here, on the leader's thread once the round has ended),
    /// then removes the older file. A setting is synced by sled's flush
    /// beside the group commit, which leaves the journal as it is.
    /// Until then each small append's sync writes it alone.
    #[test]
    fn past_its_limit_the_journal_rotates_and_a_setting_s_sync_leaves_it() {
        let (dir, store, (e0, _)) = with_first_event();
        // How long each file's journal is (its records, not its space).
        let len_of =
            |name: &str| dir.path().join(name).exists().then(|| journal::read(&dir.path().join(name)).unwrap().bytes());
        let mut head = e0.link();
        let mut lengths = Vec::new();
        // Batches of 64 events (one record each) until the journal has
        // been rotated once.
        while lengths.len() < 2 || lengths.windows(2).all(|w| w[0] < w[1]) {
            let batch = events_after_link(&head, journal::MOST_EVENTS);
            store.append_batch("g", &batch).unwrap();
            head = batch.last().unwrap().0.link();
            lengths.push(len_of(journal::FILE).unwrap());
            assert!(lengths.len() < 1000, "the journal never rotated: {lengths:?}");
        }
        let before = lengths[lengths.len() - 2];
        assert!(before <= journal::LIMIT, "{lengths:?}");
        assert!(before + *lengths.last().unwrap() > journal::LIMIT, "rotated before its limit: {lengths:?}");
        let newer = journal::read(&dir.path().join(journal::FILE)).unwrap();
        assert_eq!(newer.records.len(), 1, "the new file holds the round's record alone: {lengths:?}");
        let newest = crate::event::canonical_bytes(&store.get("g", head.seq).unwrap().unwrap());
        assert_eq!(newer.records[0].1.last().unwrap(), &newest);
        assert_eq!(len_of(journal::OLDER), None, "the sync behind the rotation removed the older file");
        let journal = store.journal.lock().unwrap();
        assert_eq!((journal.rotations(), journal.older_bytes()), (1, 0));
        drop(journal);
        assert!(store.unsynced.lock().unwrap().is_clean(), "the sync behind wrote everything into sled");
        let (e, b) = sealed(Some(&head));
        store.append("g", &e, &b).unwrap();
        assert!(len_of(journal::FILE).unwrap() > *lengths.last().unwrap());
        let (journaled, syncs) = (len_of(journal::FILE), store.syncs());
        store.put_setting("any", b"x").unwrap();
        assert_eq!(store.syncs(), syncs + 1, "a setting's sync is one of sled's");
        assert_eq!(len_of(journal::FILE), journaled, "beside the commit: the journal keeps its records");
        let events = store.read("g", 0).unwrap().count() as u64;
        assert_eq!(events, e.seq + 1);
    }

    /// A journal full again before the sync behind its last rotation has
    /// removed the older file is not rotated a second time (two files at
    /// most wait for sled): the round runs sled's own sync itself, which
    /// empties both. A sync behind an earlier rotation, running late,
    /// leaves a later rotation's older file alone.
    #[test]
    fn a_journal_full_while_its_older_file_waits_is_emptied_by_sled_s_own_sync() {
        let (dir, store, (e0, _)) = with_first_event();
        let older = dir.path().join(journal::OLDER);
        let (e1, b1) = sealed(Some(&e0.link()));
        store.append("g", &e1, &b1).unwrap();
        // A rotation whose sync behind has not run (it is dropped).
        store.journal.lock().unwrap().rotate().unwrap();
        assert_eq!(journal::read(&older).unwrap().records.len(), 1);
        let mut head = e1.link();
        while store.journal.lock().unwrap().older_bytes() > 0 {
            let batch = events_after_link(&head, journal::MOST_EVENTS);
            store.append_batch("g", &batch).unwrap();
            head = batch.last().unwrap().0.link();
            assert!(journal::read(&dir.path().join(journal::FILE)).unwrap().bytes() <= journal::LIMIT);
        }
        assert!(!older.exists());
        assert_eq!(store.journal.lock().unwrap().bytes(), 0, "sled's own sync emptied the file too");
        assert_eq!(store.journal.lock().unwrap().rotations(), 1, "and did not rotate it");

        // Rotation 2's older file; a sync behind rotation 1 leaves it.
        let (e, b) = sealed(Some(&head));
        store.append("g", &e, &b).unwrap();
        store.journal.lock().unwrap().rotate().unwrap();
        store.write_back_behind(Behind { rotation: 1 });
        assert!(older.exists(), "a late sync behind rotation 1 removed rotation 2's file");
        store.write_back_behind(Behind { rotation: 2 });
        assert!(!older.exists());
        assert_eq!(store.read("g", 0).unwrap().count() as u64, e.seq + 1);
    }

    /// The variable that makes the rotation's children run: the store's
    /// directory.
    const ROTATION_CHILD: &str = "ARBITER_TEST_ROTATION_CHILD";

    /// The child of `acknowledged_appends_survive_a_crash_across_a_rotation`
    /// (`rotation_child(false)`).
    #[test]
    #[ignore = "run by its parent test, in a process of its own"]
    fn rotation_child_holds_sled_s_sync_then_aborts() {
        rotation_child(false);
    }

    /// The child of `acknowledged_appends_survive_a_crash_after_a_rotation_s_sync`
    /// (`rotation_child(true)`).
    #[test]
    #[ignore = "run by its parent test, in a process of its own"]
    fn rotation_child_lets_the_sync_run_then_aborts() {
        rotation_child(true);
    }

    /// A child that appends across a rotation of the journal: a thread
    /// holds sled's sync (so the sync behind the rotation waits, and with
    /// it the rotation's leader), while one thread appends batches to "g"
    /// and another appends to "h" one event at a time, each saying every
    /// event acknowledged with its position in the log. With `release`,
    /// the hold ends once the rotation is made, and the child waits for
    /// the sync behind it to remove the older file. Then it aborts once
    /// 200 more events are acknowledged (more than the 65 that each
    /// thread's append in flight may say, and far fewer than would fill
    /// the new file). A watchdog ends it with another status after 60 s.
    fn rotation_child(release: bool) {
        use std::io::Write;
        let Ok(dir) = std::env::var(ROTATION_CHILD) else { return };
        let store = SledStore::open(Path::new(&dir)).unwrap();
        let acknowledged = AtomicU64::new(0);
        let said = |game: &str, seq: u64| {
            println!("acknowledged {game} {seq} {}", store.log_position(game, seq).unwrap().unwrap());
            std::io::stdout().flush().unwrap();
            acknowledged.fetch_add(1, Ordering::SeqCst);
        };
        let older = Path::new(&dir).join(journal::OLDER);
        let (held, holding) = std::sync::mpsc::channel();
        let (rotated, to_release) = std::sync::mpsc::channel::<()>();
        let to_release = Mutex::new(to_release);
        std::thread::spawn(|| {
            std::thread::sleep(Duration::from_secs(60));
            std::process::exit(3);
        });
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let hold = store.sled_syncing.lock().unwrap();
                held.send(()).unwrap();
                let _ = to_release.lock().unwrap().recv();
                drop(hold);
            });
            holding.recv().unwrap();
            scope.spawn(|| {
                let (e0, b0) = sealed(None);
                store.append("g", &e0, &b0).unwrap();
                said("g", 0);
                let mut head = e0.link();
                loop {
                    let batch = events_after_link(&head, journal::MOST_EVENTS);
                    store.append_batch("g", &batch).unwrap();
                    for (event, _) in &batch {
                        said("g", event.seq);
                    }
                    head = batch.last().unwrap().0.link();
                }
            });
            scope.spawn(|| {
                let (h0, hb0) = sealed(None);
                store.append("h", &h0, &hb0).unwrap();
                said("h", 0);
                let mut head = h0.link();
                loop {
                    let (event, bytes) = sealed(Some(&head));
                    store.append("h", &event, &bytes).unwrap();
                    said("h", event.seq);
                    head = event.link();
                }
            });
            wait_until(|| older.exists());
            if release {
                rotated.send(()).unwrap();
                // On to a second rotation and its sync behind: a file cut
                // and made again at the rotation, written over.
                wait_until(|| store.journal.lock().unwrap().rotations() >= 2 && !older.exists());
            }
            let at = acknowledged.load(Ordering::SeqCst);
            wait_until(|| acknowledged.load(Ordering::SeqCst) >= at + 200);
            std::process::abort();
        });
    }

    /// A process that dies while the sync behind a rotation has not run
    /// loses no acknowledged append: sled holds none of them, the older
    /// file holds those before the rotation and the new file those after,
    /// and the open puts back both, in that order, at the positions they
    /// had, then empties both.
    #[test]
    fn acknowledged_appends_survive_a_crash_across_a_rotation() {
        let dir = tempfile::tempdir().unwrap();
        let out = run_child("rotation_child_holds_sled_s_sync_then_aborts", ROTATION_CHILD, dir.path());
        let journaled = journal::read_files(dir.path()).unwrap();
        assert!(journaled.older.bytes() > journal::LIMIT / 2, "{:?}", journaled.older.bytes());
        assert!(!journaled.newer.records.is_empty(), "nothing was acknowledged after the rotation");
        {
            let db = open_sled(dir.path()).unwrap();
            for game in ["g", "h"] {
                let name = format!("{TREE_PREFIX}{game}");
                let held = db.tree_names().iter().any(|n| n.as_ref() == name.as_bytes())
                    && !db.open_tree(&name).unwrap().is_empty();
                assert!(!held, "sled held events of {game}, which no sync of its own wrote");
            }
        }
        drop(every_acknowledged_event_is_put_back(dir.path(), &out));
    }

    /// A process that dies after the sync behind a second rotation removed
    /// the older file loses no acknowledged append either: sled holds
    /// those before the rotation (and perhaps some after), the new file
    /// the rest.
    #[test]
    fn acknowledged_appends_survive_a_crash_after_a_rotation_s_sync() {
        let dir = tempfile::tempdir().unwrap();
        let out = run_child("rotation_child_lets_the_sync_run_then_aborts", ROTATION_CHILD, dir.path());
        let journaled = journal::read_files(dir.path()).unwrap();
        assert_eq!(journaled.older, journal::Read::default(), "the sync behind removed the older file");
        assert!(!journaled.newer.records.is_empty(), "nothing was acknowledged after the rotation");
        drop(every_acknowledged_event_is_put_back(dir.path(), &out));
    }

    /// After a child aborted (not another end: a panic, its watchdog), the
    /// store opens with every event the child said acknowledged at the
    /// position it said, both games whole, and the journal's files emptied.
    /// Returns the store, open.
    fn every_acknowledged_event_is_put_back(dir: &Path, out: &std::process::Output) -> SledStore {
        use std::os::unix::process::ExitStatusExt;
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.signal(), Some(libc::SIGABRT), "the child aborts: {stdout}");
        let acknowledged = acknowledged_in(&stdout);
        let store = SledStore::open(dir).unwrap();
        for (game, seq, position) in &acknowledged {
            assert_eq!(store.log_position(game, *seq).unwrap(), Some(*position), "{game} {seq}");
        }
        for game in ["g", "h"] {
            let newest = acknowledged.iter().filter(|(g, ..)| g == game).map(|(_, seq, _)| *seq).max().unwrap();
            let head = store.head(game).unwrap().unwrap().seq;
            assert!(head >= newest, "{game}: acknowledged {newest}, head {head}");
            // `read` checks every link of the chain.
            let read = store.read(game, 0).unwrap().collect::<Result<Vec<_>, _>>().unwrap();
            assert_eq!(read.len() as u64, head + 1);
        }
        assert_eq!(journal::read_files(dir).unwrap(), journal::Files::default(), "the open emptied both");
        assert!(!dir.join(journal::OLDER).exists());
        store
    }

    /// A store that fails outside any sync (an insert sled refused) after
    /// a sync's end woke one follower of the next round to lead it: that
    /// follower wakes the others as it returns the error, and none waits
    /// for ever. (Found by a second review of the group commit.)
    #[test]
    fn followers_of_the_next_round_see_a_failure_made_outside_any_sync() {
        let (dir, store, (e0, _)) = with_first_event();
        // Leaked: a follower that never woke would hold it for ever.
        let store: &'static SledStore = Box::leak(Box::new(store));
        let t1 = store.insert("g", &events_after(&e0, 1)).unwrap();
        let e1 = store.get("g", 1).unwrap().unwrap();
        let t2 = store.insert("g", &events_after(&e1, 1)).unwrap();
        // A sync is running (as if led by another thread) that covers neither.
        let round = {
            let mut commit = store.commit.lock().unwrap();
            commit.syncing = true;
            commit.round += 1;
            commit.covering = 0;
            commit.round
        };
        let (answer, answers) = std::sync::mpsc::channel();
        for ticket in [t1, t2] {
            let answer = answer.clone();
            std::thread::spawn(move || answer.send(store.make_durable(ticket)).unwrap());
        }
        while store.commit.lock().unwrap().waiting < 2 {
            std::thread::yield_now();
        }
        // The sync's end saw no failure and woke one of the next round's;
        // then the store failed, before that one ran.
        store.fail(Failure { why: "sled failed to store the events".into(), errno: None });
        store.committed[((round + 1) % 2) as usize].notify_one();
        for _ in 0..2 {
            let got = answers.recv_timeout(Duration::from_secs(10)).expect("a follower waits for ever");
            assert!(got.is_err(), "{got:?}");
        }
        drop(dir);
    }

    /// An event in the journal that differs from the one sled stores at
    /// its seq is damage, not something to choose between: the store does
    /// not open, says where, and the journal is left as it was.
    #[test]
    fn a_journal_that_contradicts_the_store_stops_the_open() {
        let (dir, store, (e0, _)) = with_first_event();
        let (e1, b1) = sealed(Some(&e0.link()));
        store.append("g", &e1, &b1).unwrap();
        store.close();
        let (_, other) = sealed(Some(&e0.link()));
        let mut records = Vec::new();
        journal::encode("g", std::iter::once(other.as_slice()), &mut records);
        std::fs::write(dir.path().join(journal::FILE), &records).unwrap();
        for _ in 0..2 {
            let Err(e) = SledStore::open(dir.path()) else { panic!("opened") };
            let said = e.to_string();
            assert!(said.contains("journal, record 1: game g: seq 1 differs from the event stored there"), "{said}");
            let kept = std::fs::read(dir.path().join(journal::FILE)).unwrap();
            assert_eq!(kept, records, "a failed open leaves the journal as it was");
        }
    }

    /// The same for the journal's older file (left by a rotation whose
    /// sync of sled's had not run): the open names it, and keeps it.
    #[test]
    fn an_older_journal_file_that_contradicts_the_store_stops_the_open_and_is_kept() {
        let (dir, store, (e0, _)) = with_first_event();
        let (e1, b1) = sealed(Some(&e0.link()));
        store.append("g", &e1, &b1).unwrap();
        store.close();
        let (_, other) = sealed(Some(&e0.link()));
        let mut records = Vec::new();
        journal::encode("g", std::iter::once(other.as_slice()), &mut records);
        std::fs::write(dir.path().join(journal::OLDER), &records).unwrap();
        let Err(e) = SledStore::open(dir.path()) else { panic!("opened") };
        let said = e.to_string();
        assert!(said.contains("journal.older, record 1: game g: seq 1 differs from the event stored there"), "{said}");
        assert_eq!(std::fs::read(dir.path().join(journal::OLDER)).unwrap(), records);
    }

    /// A store dropped with only the journal's older file holding records
    /// (its sync behind never ran) syncs sled's own and removes it: the
    /// next open has nothing to put back, and holds the event.
    #[test]
    fn a_store_dropped_with_an_older_journal_file_syncs_and_removes_it() {
        let (dir, store, (e0, _)) = with_first_event();
        let (e1, b1) = sealed(Some(&e0.link()));
        store.append("g", &e1, &b1).unwrap();
        store.journal.lock().unwrap().rotate().unwrap();
        assert!(dir.path().join(journal::OLDER).exists());
        drop(store);
        assert_eq!(journal::read_files(dir.path()).unwrap(), journal::Files::default());
        let store = SledStore::open(dir.path()).unwrap();
        assert_eq!(store.head("g").unwrap().unwrap().seq, 1);
    }

    /// A store that lost a signed event opens with nothing written, whatever
    /// its journal holds: a journal of events sled holds already (an
    /// emptying a crash undid) does not stop the check before the repair,
    /// and a journal whose events cannot make up for what was lost does not
    /// get them written. (Both were found by a review of the journal.)
    #[test]
    fn a_store_that_lost_a_signed_event_is_not_written_whatever_its_journal_holds() {
        // Signed, then a round of sled's own sync (as the close asks for),
        // so that sled holds the events, not the journal alone.
        let sign = |store: &SledStore| {
            let signer = super::super::checkpoints::signer(store, None, Some("test.example/log")).unwrap();
            super::super::checkpoints::sign(store, &signer).unwrap();
            store.settle().unwrap();
        };
        let leaf_of = |dir: &Path, index: u64| {
            let db = open_sled(dir).unwrap();
            let chunk =
                db.open_tree(LOG_TREE).unwrap().get(chunk::leaves_key(index / LEAVES_PER_CHUNK)).unwrap().unwrap();
            chunk::Leaves::decode(&chunk).unwrap().get((index % LEAVES_PER_CHUNK) as usize).cloned()
        };
        // g1, signed, removed behind arbiter's back: its insert looks cut
        // short, and the journal holds only g0, which sled holds.
        let (dir, store, (e0, b0)) = with_first_event();
        let (e1, b1) = sealed(Some(&e0.link()));
        store.append("g", &e1, &b1).unwrap();
        sign(&store);
        keep_only(&store, "g", 0, 1);
        let dir_path = closed_durably(store);
        let mut stale = Vec::new();
        journal::encode("g", std::iter::once(b0.as_slice()), &mut stale);
        std::fs::write(dir.path().join(journal::FILE), &stale).unwrap();
        let leaf = leaf_of(&dir_path, 1);
        assert!(leaf.is_some());
        let Err(OpenError::Lost(why)) = SledStore::open(&dir_path) else { panic!("opened") };
        assert!(why.contains("lost events 1..1 of game g"), "{why}");
        assert_eq!(leaf_of(&dir_path, 1), leaf, "the signed leaf is kept");
        assert_eq!(std::fs::read(dir.path().join(journal::FILE)).unwrap(), stale);

        // h0, signed, removed with its leaf and position; the journal holds g1.
        let (dir, store, (e0, _)) = with_first_event();
        let (h0, hb0) = sealed(None);
        store.append("h", &h0, &hb0).unwrap();
        sign(&store);
        store.tree("h").unwrap().remove(chunk::events_key(0)).unwrap();
        let leaves = chunk::Leaves::decode(&store.log.get(chunk::leaves_key(0)).unwrap().unwrap()).unwrap();
        let mut first = chunk::Leaves::default();
        first.push(leaves.get(0).unwrap().clone());
        store.log.insert(chunk::leaves_key(0), first.encode()).unwrap();
        let dir_path = closed_durably(store);
        let (_, g1) = sealed(Some(&e0.link()));
        let mut records = Vec::new();
        journal::encode("g", std::iter::once(g1.as_slice()), &mut records);
        std::fs::write(dir.path().join(journal::FILE), &records).unwrap();
        let Err(OpenError::Lost(why)) = SledStore::open(&dir_path) else { panic!("opened") };
        assert!(why.contains("game h"), "{why}");
        assert_eq!(leaf_of(&dir_path, 1), None, "nothing was put at the lost position");
        assert_eq!(std::fs::read(dir.path().join(journal::FILE)).unwrap(), records);
    }

    /// A setting read or written before is read from memory while a
    /// transaction holds sled (sled 0.34 makes every read of its wait for
    /// one, and a write-back is one): a token check, on every request,
    /// does not wait for it. A read gets what the last write stored.
    #[test]
    fn a_kept_setting_is_read_while_a_transaction_holds_sled() {
        let (_dir, store, _) = with_first_event();
        store.put_setting("token/a", b"1").unwrap();
        assert!(store.swap_setting("token/c", None, Some(b"3")).unwrap());
        assert_eq!(store.setting("token/b").unwrap(), None);
        let (inside, entered) = std::sync::mpsc::channel();
        let (release, released) = std::sync::mpsc::channel::<()>();
        let released = Mutex::new(released);
        std::thread::scope(|scope| {
            let holding = scope.spawn(|| {
                store.log.transaction(|_| {
                    let _ = inside.send(());
                    let _ = released.lock().unwrap().recv();
                    Ok::<_, sled::transaction::ConflictableTransactionError<()>>(())
                })
            });
            entered.recv().unwrap();
            let (said, heard) = std::sync::mpsc::channel();
            let store = &store;
            scope.spawn(move || {
                let read = |key: &str| store.setting(key).unwrap();
                let _ = said.send((read("token/a"), read("token/c")));
            });
            // Far longer than a read from memory takes; a read that waits
            // for the transaction never comes before it is released.
            let read = heard.recv_timeout(Duration::from_secs(30));
            release.send(()).unwrap();
            holding.join().unwrap().unwrap();
            assert_eq!(read, Ok((Some(b"1".to_vec()), Some(b"3".to_vec()))), "the reads waited for sled");
        });
        store.put_setting("token/a", b"2").unwrap();
        assert!(store.swap_setting("token/c", Some(b"3"), None).unwrap());
        assert_eq!((store.setting("token/a").unwrap(), store.setting("token/c").unwrap()), (Some(b"2".to_vec()), None));
        let dir = closed_durably(store);
        let store = SledStore::open(&dir).unwrap();
        assert_eq!((store.setting("token/a").unwrap(), store.setting("token/c").unwrap()), (Some(b"2".to_vec()), None));
    }

    /// Two writers of one key, and a compare-and-swap that fails: what a
    /// read gets from memory is what sled holds.
    #[test]
    fn settings_kept_in_memory_are_what_sled_holds_whatever_writes_race() {
        let (_dir, store, _) = with_first_event();
        let in_sled = |key: &str| store.settings_tree().unwrap().get(key).unwrap().map(|v| v.to_vec());
        std::thread::scope(|scope| {
            for writer in 0..2u8 {
                let store = &store;
                scope.spawn(move || {
                    for i in 0..50u8 {
                        store.put_setting("token/a", &[writer, i]).unwrap();
                        assert!(store.setting("token/a").unwrap().is_some());
                    }
                });
            }
        });
        assert_eq!(store.setting("token/a").unwrap(), in_sled("token/a"));
        // A swap that fails tells memory what sled holds.
        store.kept_settings.written("token/a", Some(b"stale"));
        assert!(!store.swap_setting("token/a", Some(b"stale"), Some(b"x")).unwrap());
        assert_eq!(store.setting("token/a").unwrap(), in_sled("token/a"));
    }

    /// A sync lists `blobs/` only when the directory may have changed since
    /// the last listing: an old mtime is trusted until the directory
    /// changes; a file added (a blob sled wrote) is listed, and synced, at
    /// the next sync; a recent mtime is not trusted, and is listed again.
    #[test]
    fn a_sync_lists_blobs_again_only_when_the_directory_may_have_changed() {
        let dir = tempfile::tempdir().unwrap();
        let store = SledStore::open(dir.path()).unwrap();
        let blobs = dir.path().join("blobs");
        let an_hour_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
        File::open(&blobs).unwrap().set_modified(an_hour_ago).unwrap();
        // The open's own sync (if it made one) listed it already.
        let (at_open, syncs_at_open) = (store.blobs_seen.lock().unwrap().listings, store.syncs());
        let listings = || store.blobs_seen.lock().unwrap().listings - at_open;
        let sync = || store.make_durable(store.ticket()).unwrap();
        sync();
        assert_eq!(listings(), 1);
        sync();
        sync();
        assert_eq!(listings(), 1, "an old mtime, unchanged: not listed again");
        std::fs::write(blobs.join("77"), b"a blob").unwrap();
        sync();
        assert_eq!(listings(), 2, "a file added changes the mtime");
        sync();
        assert_eq!(listings(), 3, "a mtime stamped just now is not trusted");
        assert_eq!(store.syncs() - syncs_at_open, 5);
    }

    /// A flush that returns within its deadline is a sync; the probe that
    /// says why a stuck flush is stuck reports what the directory answers.
    #[test]
    fn a_flush_within_its_deadline_succeeds_and_the_probe_says_what_the_disk_answers() {
        let dir = tempfile::tempdir().unwrap();
        let store = SledStore::open(dir.path()).unwrap();
        store.flush_within(Duration::from_secs(crate::limits::SYNC_DEADLINE_SECONDS)).unwrap();
        probe_write(dir.path()).unwrap();
        assert!(!dir.path().join("sync-probe").exists(), "the probe leaves nothing behind");
        let gone = dir.path().join("no-such-dir");
        assert_eq!(probe_write(&gone).unwrap_err().kind(), std::io::ErrorKind::NotFound);
    }

    /// Every flush of a store runs on the one flushing thread it keeps,
    /// and closing the store ends that thread with its handles on sled:
    /// this process opens the store again.
    #[test]
    fn flushes_share_one_thread_that_ends_with_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let store = SledStore::open(dir.path()).unwrap();
        let deadline = Duration::from_secs(crate::limits::SYNC_DEADLINE_SECONDS);
        store.flush_within(deadline).unwrap();
        let queue = store.flusher.lock().unwrap().requests.clone().expect("started by the first flush");
        for _ in 0..3 {
            store.flush_within(deadline).unwrap();
        }
        // The first flush's thread still takes requests: it was not replaced.
        let (answer, answered) = std::sync::mpsc::sync_channel(1);
        queue.send((store.db.clone(), answer)).unwrap();
        assert!(answered.recv_timeout(deadline).unwrap().is_ok());
        drop(queue);
        store.close();
        SledStore::open(dir.path()).expect("no flush keeps the store open");
    }

    /// After a failed sync, sled holds in memory events that are not
    /// durable: the store shows none of them, stores nothing more, and its
    /// log ends where the last sync that succeeded left it.
    #[test]
    fn a_failed_store_reads_only_what_is_durable_and_stores_nothing() {
        let (_dir, store, (e0, _)) = with_first_event();
        let (e1, b1) = sealed(Some(&e0.link()));
        let (e2, b2) = sealed(Some(&e1.link()));
        // Inserted, then the sync fails.
        store.insert("g", &[(e1.clone(), b1), (e2.clone(), b2.clone())]).unwrap();
        assert_eq!(store.head("g").unwrap().unwrap().seq, 2);
        store.fail(Failure { why: "fdatasync failed: No space left on device".into(), errno: Some(libc::ENOSPC) });
        assert_eq!(store.head("g").unwrap(), Some(e0.link()));
        let read: Vec<Event> = store.read("g", 0).unwrap().collect::<Result<_, _>>().unwrap();
        assert_eq!(read, vec![e0.clone()]);
        assert_eq!(store.read("g", 1).unwrap().count(), 0);
        assert_eq!(store.games().unwrap(), vec!["g"]);
        assert_eq!(store.log_size().unwrap(), 1);
        assert_eq!((store.log_leaf(1).unwrap(), store.log_position("g", 1).unwrap()), (None, None));
        assert!(store.log_node(1, 0).is_err(), "a subtree over an event that is not durable");
        assert!(store.log_node(0, 0).is_ok());
        assert!(store.setting("any").is_err());
        let (e3, b3) = sealed(Some(&e2.link()));
        let err = store.append("g", &e3, &b3).unwrap_err().to_string();
        assert!(err.contains("an earlier write to this store failed") && err.contains("No space left"), "{err}");
        assert!(store.put_setting("any", b"x").is_err());
        assert_eq!(store.failed().as_deref(), Some("fdatasync failed: No space left on device"));
    }

    #[test]
    fn each_sync_tells_the_watcher_how_many_events_it_made_durable() {
        let dir = tempfile::tempdir().unwrap();
        let store = SledStore::open(dir.path()).unwrap();
        let seen = std::sync::Arc::new(Mutex::new(Vec::new()));
        let into = seen.clone();
        store.on_sync(std::sync::Arc::new(move |s: Synced| into.lock().unwrap().push(s.events)));
        let (e0, b0) = sealed(None);
        store.append("g", &e0, &b0).unwrap();
        // Two inserts, then one sync covering both: a group of two.
        let (e1, b1) = sealed(Some(&e0.link()));
        let (e2, b2) = sealed(Some(&e1.link()));
        store.insert("g", &[(e1.clone(), b1)]).unwrap();
        let ticket = store.insert("g", &[(e2, b2)]).unwrap();
        store.make_durable(ticket).unwrap();
        // A setting alone: a sync of no event.
        store.put_setting("any", b"x").unwrap();
        assert_eq!(*seen.lock().unwrap(), vec![1, 2, 0]);
    }

    #[test]
    fn a_sync_covers_every_insert_that_took_its_ticket_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = SledStore::open(dir.path()).unwrap();
        // (A new store's open made its empty log durable: count from there.)
        let base = store.syncs();
        let (first, second) = (store.ticket(), store.ticket());
        store.make_durable(second).unwrap();
        assert_eq!(store.syncs(), base + 1);
        // The first insert's appender arrives late: the sync for the second covered it.
        store.make_durable(first).unwrap();
        assert_eq!(store.syncs(), base + 1, "no second fdatasync for an insert already durable");
        let third = store.ticket();
        store.make_durable(third).unwrap();
        assert_eq!(store.syncs(), base + 2, "an insert after the last sync needs a sync of its own");
    }

    /// The server's path: `insert_batch`, then `durable` awaited on
    /// tokio's async threads, beside a thread appending through
    /// `append`. Tasks run on a runtime of one async thread, so a task
    /// that held its thread while it waited would keep every other task
    /// from inserting until its sync was done, and each would sync alone
    /// (with `durable` blocking, 332 syncs for 340 appends): tasks share
    /// syncs only if followers wait without a thread (a leader's sync runs
    /// on the store's syncing thread). Each acknowledged append is
    /// durable: the log's durable size covers it.
    #[test]
    fn async_appenders_wait_without_a_thread_and_share_syncs_with_threads() {
        const TASKS: usize = 16;
        const APPENDS: usize = 20;
        let dir = tempfile::tempdir().unwrap();
        let store: &'static SledStore = Box::leak(Box::new(SledStore::open(dir.path()).unwrap()));
        let firsts: Vec<(Event, Vec<u8>)> = (0..=TASKS).map(|_| sealed(None)).collect();
        for (t, first) in firsts.iter().enumerate() {
            store.append_batch(&format!("t{t}"), std::slice::from_ref(first)).unwrap();
        }
        let base = store.syncs();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let thread_head = firsts[TASKS].0.link();
        let thread = std::thread::spawn(move || {
            let mut head = thread_head;
            for _ in 0..APPENDS {
                let (event, bytes) = sealed(Some(&head));
                store.append(&format!("t{TASKS}"), &event, &bytes).unwrap();
                head = event.link();
            }
        });
        runtime.block_on(async {
            let tasks: Vec<_> = (0..TASKS)
                .map(|t| {
                    let mut head = firsts[t].0.link();
                    tokio::spawn(async move {
                        let game = format!("t{t}");
                        for _ in 0..APPENDS {
                            let event = sealed(Some(&head));
                            let ticket = store.insert_batch(&game, std::slice::from_ref(&event)).unwrap();
                            store.durable(ticket).await.unwrap();
                            let position = store.log_position(&game, event.0.seq).unwrap().unwrap();
                            assert!(store.log_size().unwrap() > position, "acknowledged but not durable");
                            head = event.0.link();
                        }
                    })
                })
                .collect();
            for task in tasks {
                task.await.unwrap();
            }
        });
        thread.join().unwrap();
        let appends = ((TASKS + 1) * APPENDS) as u64;
        let syncs = store.syncs() - base;
        assert!(syncs < appends / 2, "{syncs} syncs for {appends} appends: tasks share syncs");
        assert_eq!(store.log_size().unwrap(), TASKS as u64 + 1 + appends, "every append durable");
        for t in 0..=TASKS {
            assert_eq!(store.head(&format!("t{t}")).unwrap().unwrap().seq, APPENDS as u64);
        }
        // (The store stays open, as the server's does: its syncing thread
        // holds it. That appends made durable this way survive a crash is
        // the journal's, as for every other sync: the crash tests above.)
    }

    /// A retry answered from what is stored (a duplicate) is durable
    /// before it is answered: its ticket is the store's newest, not
    /// "durable already", though the insert it repeats may not be.
    #[test]
    fn a_duplicate_waits_for_every_insert_made_before_it() {
        let (_dir, store, first) = with_first_event();
        let game = "g";
        let (event, bytes) = sealed(Some(&first.0.link()));
        let ticket = store.insert(game, &[(event, bytes)]).unwrap();
        assert_eq!(store.newest_ticket(), Ticket::of(ticket));
        let base = store.syncs();
        store.wait_durable(store.newest_ticket()).unwrap();
        assert_eq!(store.syncs(), base + 1, "the newest ticket waited for a sync");
        assert_eq!(store.newest_ticket(), Ticket::of(ticket));
        store.wait_durable(store.newest_ticket()).unwrap();
        assert_eq!(store.syncs(), base + 1, "and once durable, no more");
    }

    /// Appenders that arrive while a sync runs wait for it and share the
    /// next one: with every insert in sled's memory before any appender
    /// asks, one sync covers them all, whichever thread leads it. And an
    /// append acknowledged under contention is durable: the log's durable
    /// size already covers its position, and a reopened store holds it.
    #[test]
    fn concurrent_appenders_share_syncs_and_each_acknowledged_append_is_durable() {
        const THREADS: usize = 8;
        const APPENDS: usize = 25;
        let dir = tempfile::tempdir().unwrap();
        let store = SledStore::open(dir.path()).unwrap();
        let base = store.syncs();
        let firsts: Vec<(Event, Vec<u8>)> = (0..THREADS).map(|_| sealed(None)).collect();
        let tickets: Vec<u64> = firsts
            .iter()
            .enumerate()
            .map(|(t, e)| store.insert(&format!("t{t}"), std::slice::from_ref(e)).unwrap())
            .collect();
        let ready = std::sync::Barrier::new(THREADS);
        std::thread::scope(|scope| {
            for ticket in &tickets {
                let (store, ready) = (&store, &ready);
                scope.spawn(move || {
                    ready.wait();
                    store.make_durable(*ticket).unwrap();
                });
            }
        });
        assert_eq!(store.syncs(), base + 1, "one sync for {THREADS} inserts made before it");
        assert_eq!(store.log_size().unwrap(), THREADS as u64);

        let base = store.syncs();
        std::thread::scope(|scope| {
            for (t, (first, _)) in firsts.iter().enumerate() {
                let store = &store;
                scope.spawn(move || {
                    let game = format!("t{t}");
                    let mut head = first.link();
                    for _ in 0..APPENDS {
                        let (event, bytes) = sealed(Some(&head));
                        store.append(&game, &event, &bytes).unwrap();
                        let position = store.log_position(&game, event.seq).unwrap().unwrap();
                        assert!(store.log_size().unwrap() > position, "acknowledged but not durable");
                        head = event.link();
                    }
                });
            }
        });
        let appends = (THREADS * APPENDS) as u64;
        assert!(store.syncs() - base <= appends, "never more than one sync per append");
        let dir = store.dir().to_path_buf();
        store.close();
        let store = SledStore::open(&dir).unwrap();
        assert_eq!(store.log_size().unwrap(), THREADS as u64 + appends);
        for t in 0..THREADS {
            assert_eq!(store.head(&format!("t{t}")).unwrap().unwrap().seq, APPENDS as u64);
        }
    }

    /// A new store whose game "g" holds its first event (and the directory, kept).
    fn with_first_event() -> (tempfile::TempDir, SledStore, (Event, Vec<u8>)) {
        let dir = tempfile::tempdir().unwrap();
        let store = SledStore::open(dir.path()).unwrap();
        let (e0, b0) = sealed(None);
        store.append("g", &e0, &b0).unwrap();
        // Tests that change sled's trees behind the store's back do so
        // once sled holds what was appended (a sync of its own).
        store.make_durable(store.ticket()).unwrap();
        (dir, store, (e0, b0))
    }

    /// Keeps only the first `n` events of chunk `c` of `game` in sled, as
    /// a change behind arbiter's back would (the store holds nothing
    /// unsynced: see `with_first_event`).
    fn keep_only(store: &SledStore, game: &str, c: u64, n: usize) {
        assert!(store.unsynced.lock().unwrap().is_clean());
        let tree = store.tree(game).unwrap();
        let stored = chunk::Events::decode(tree.get(chunk::events_key(c)).unwrap().unwrap().to_vec()).unwrap();
        let mut kept = chunk::Events::default();
        for i in 0..n {
            let (index, bytes) = stored.get(i).unwrap();
            kept.push(index, bytes);
        }
        tree.insert(chunk::events_key(c), kept.bytes()).unwrap();
    }

    fn events_after(head: &Event, n: usize) -> Vec<(Event, Vec<u8>)> {
        events_after_link(&head.link(), n)
    }

    fn events_after_link(head: &Link, n: usize) -> Vec<(Event, Vec<u8>)> {
        let mut link = head.clone();
        (0..n)
            .map(|_| {
                let (e, b) = sealed(Some(&link));
                link = e.link();
                (e, b)
            })
            .collect()
    }

    /// An event of the log's right edge removed behind arbiter's back: the
    /// store opens (its reads say what is missing), and appends are refused.
    #[test]
    fn a_store_missing_an_event_of_its_right_edge_opens_and_refuses_appends() {
        let (_dir, store, (e0, _)) = with_first_event();
        let batch = events_after(&e0, 2);
        store.append_batch("g", &batch).unwrap();
        store.make_durable(store.ticket()).unwrap();
        keep_only(&store, "g", 0, 2);
        let at = closed_durably(store);

        let store = SledStore::open(&at).unwrap();
        assert_eq!(store.head("g").unwrap(), Some(batch[0].0.link()));
        let (e2, b2) = &batch[1];
        let refused = store.append("g", e2, b2).unwrap_err().to_string();
        assert!(refused.contains("lost part of its log") && refused.contains("nothing can be appended"), "{refused}");
        assert_eq!(store.head("g").unwrap(), Some(batch[0].0.link()));
    }

    /// Inserts, in the log's order: each a game and its events.
    type Inserts = Vec<(&'static str, Vec<(Event, Vec<u8>)>)>;

    /// Writes a store of an earlier layout into `dir` by hand, as an
    /// unreleased build left it (`inserts` in the log's order): each event
    /// under its seq, each leaf under `l` and its index; with `format` as
    /// its layout key (None: layout 1's size key instead), or with no log
    /// at all (`log` false: a store from before arbiter kept one).
    fn earlier_store(dir: &Path, inserts: &Inserts, log: bool, format: Option<&[u8]>) {
        let db = open_sled(dir).unwrap();
        let mut index = 0u64;
        for (game, events) in inserts {
            let tree = db.open_tree(format!("{TREE_PREFIX}{game}")).unwrap();
            for (n, (e, b)) in events.iter().enumerate() {
                if log {
                    let marked = if n == 0 { e.seq } else { e.seq | (1 << 63) };
                    let mut leaf = marked.to_be_bytes().to_vec();
                    leaf.extend_from_slice(game.as_bytes());
                    let mut k = vec![b'l'];
                    k.extend_from_slice(&index.to_be_bytes());
                    db.open_tree(LOG_TREE).unwrap().insert(k, leaf).unwrap();
                }
                tree.insert(e.seq.to_be_bytes(), b.as_slice()).unwrap();
                index += 1;
            }
        }
        if log {
            let tree = db.open_tree(LOG_TREE).unwrap();
            match format {
                Some(f) => tree.insert(LAYOUT_KEY, f).unwrap(),
                None => tree.insert(b"size", &index.to_be_bytes()).unwrap(),
            };
        }
        db.flush().unwrap();
    }

    /// Every key and value of every tree of the store in `dir`.
    fn every_key(dir: &Path) -> Vec<(sled::IVec, sled::IVec, sled::IVec)> {
        let db = open_sled(dir).unwrap();
        let mut names = db.tree_names();
        names.sort();
        names
            .into_iter()
            .flat_map(|name| {
                let tree = db.open_tree(&name).unwrap();
                tree.iter().map(move |item| {
                    let (k, v) = item.unwrap();
                    (name.clone(), k, v)
                })
            })
            .collect()
    }

    /// A store of a layout before 4 (written by unreleased builds) is not
    /// converted: the open fails, naming the layout it found and that this
    /// release reads layout 4 only, and writes none of arbiter's keys.
    #[test]
    fn a_store_of_an_earlier_layout_is_refused_naming_its_layout() {
        let g0 = sealed(None);
        let inserts: Inserts = vec![("g", vec![g0.clone()]), ("g", events_after(&g0.0, 3))];
        for (log, format, found) in [
            (true, Some(&[3u8][..]), "has a log of layout 3:"),
            (true, Some(&[2u8][..]), "has a log of layout 2:"),
            (true, None, "has a log of layout 1:"),
            (false, None, "has no log (it was written before arbiter kept one):"),
            (true, Some(&[4u8, 2][..]), "has a log of layout [4, 2] (a conversion cut short):"),
        ] {
            let dir = tempfile::tempdir().unwrap();
            earlier_store(dir.path(), &inserts, log, format);
            let before = every_key(dir.path());
            let err = match SledStore::open(dir.path()) {
                Err(e @ OpenError::Layout { .. }) => e.to_string(),
                Err(e) => panic!("{found}: {e}"),
                Ok(_) => panic!("{found}: opened"),
            };
            let shown = dir.path().display().to_string();
            assert!(err.starts_with(&format!("the store at {shown} {found}")), "{err}");
            assert!(err.contains("this release reads layout 4 only"), "{err}");
            assert_eq!(every_key(dir.path()), before, "{found}: nothing written");
        }
    }

    /// A read that began before appends filled its chunk and began the
    /// next reads on into them: a chunk it read short is read again, not
    /// taken for a gap. (Found by a review of layout 3.)
    #[test]
    fn a_read_goes_on_through_appends_made_while_it_reads() {
        let (_dir, store, (e0, _)) = with_first_event();
        // Chunk 0 half full when the read begins.
        let batch = events_after(&e0, EVENTS_PER_CHUNK as usize / 2 - 1);
        store.append_batch("g", &batch).unwrap();
        let mut read = store.read("g", 0).unwrap();
        assert_eq!(read.next().unwrap().unwrap().seq, 0);
        let more = events_after(&batch.last().unwrap().0, 70);
        for (e, b) in &more {
            store.append("g", e, b).unwrap();
        }
        let rest: Vec<Event> = read.collect::<Result<_, _>>().unwrap();
        let seqs: Vec<u64> = rest.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, (1..=(batch.len() + more.len()) as u64).collect::<Vec<_>>());
    }

    #[test]
    fn a_log_of_a_newer_layout_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = SledStore::open(dir.path()).unwrap();
        store.log.insert(LAYOUT_KEY, &[LAYOUT[0] + 1][..]).unwrap();
        let at = closed_durably(store);
        let why = match SledStore::open(&at) {
            Err(OpenError::Lost(why)) => why,
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("a newer layout opened"),
        };
        assert!(why.contains("newer arbiter"), "{why}");
    }
}
