//! The embedded default store, on sled 0.34.
//!
//! Layout: one sled tree per game, named `game/<name>`, key = seq as 8
//! big-endian bytes (so key order is seq order), value = the event's exact
//! canonical JSON bytes, the bytes that were hashed. A game exists when its
//! tree holds event 0.
//!
//! Write path (see ARCHITECTURE.md): under the log's mutex, check seq and
//! prev against the game's head (kept in memory since this process's last
//! insert to it), so a seq is never taken twice (no fork), take a ticket
//! and hand the insert to the applier (`Applier`), the one thread that
//! stores the events and their entries of the log into sled, one insert
//! after another in the log's order, as plain inserts in an order an open
//! can read, so that it completes or undoes an insert a crash cut short
//! (`insert`, `apply`, `LAYOUT_KEY`, `last_insert`).
//! Then the group commit (`make_durable`): one leader at a time, with no
//! lock held, makes everything written so far durable, while the appenders
//! it covers wait on a condvar and wake together (`sync_through`): the
//! journal's records of the small inserts since the last sync, in one
//! write and one `fdatasync` (`super::journal`); or, when something the
//! journal does not hold was written or the journal is full, sled's own
//! sync, `flush()` and `fdatasync` on sled's log file, which also empties
//! the journal. sled's own flush ends in `sync_file_range`, which does not
//! promise durability against power loss (it neither writes the file's
//! metadata nor flushes the disk's cache); the `sync_data` call here does.
//! Only then does `append` return Ok. An open puts back what the journal
//! holds and sled lost in a crash (`replay_journal`).
//!
//! A failed sync (a full disk) leaves sled holding in memory what is not
//! durable: the store is then failed (`SledStore::failed`). It stores
//! nothing more, and reads only what is durable (events and the log up to
//! the last sync that succeeded), so what this process shows or signs
//! afterwards is what a reopened store holds.
//!
//! Opening: see `open` (a failed open leaves the store as it was, per
//! `super::dir`) and `open_for_reading` (a store that cannot be written is
//! read from a copy).

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use sled::Transactional;
use sled::transaction::TransactionError;

use super::dir::{self, Before, Opening};
use super::journal::{self, Journal};
use super::{AppendError, Events, Head, OpenError, ReadError, Store, StoredEvents, SyncWatcher, Synced, decode_parsed};
use crate::event::{Chain, Event, Link, Parsed};
use crate::tlog::merkle::{Frontier, Hash, leaf_hash, node_hash};

const TREE_PREFIX: &str = "game/";

/// The tree of settings (hashed tokens, read access), apart from the games.
const SETTINGS_TREE: &str = "settings";

/// The tree of the verifiable log (`crate::tlog`): each event's leaf and
/// position, and every complete subtree's hash.
const LOG_TREE: &str = "log";

/// sled stores a node larger than segment_size / 4 as a separate blob file,
/// which it never syncs. 8 MiB segments put that threshold at 2 MiB, far
/// above any leaf arbiter can build (sled splits leaves above 16 entries,
/// events are at most `MAX_EVENT_BYTES`), so every event lives in `db`.
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
/// a 100,000-event game, keeps at most this much of the store in memory.
const CACHE_BYTES: u64 = 32 * 1024 * 1024;

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
    /// The log's size at the last sync that succeeded: what `log_size`
    /// says, so no checkpoint covers an event that is not yet durable.
    durable_size: AtomicU64,
    /// How many syncs were made (for tests and the benchmark).
    syncs: AtomicU64,
    /// `blobs/` as the last sync that listed it found it (`sync_blobs`).
    /// (Boxed, as `heads`.)
    blobs_seen: Box<Mutex<BlobsSeen>>,
    /// The thread that runs sled's flush for the group commit's leader.
    /// (Boxed, as `heads`.)
    flusher: Box<Mutex<Flusher>>,
    /// The journal (`super::journal`), written only by the group commit's
    /// leader. (Boxed, as `heads`.)
    journal: Box<Mutex<Journal>>,
    /// Told of every sync that succeeds (`on_sync`): the server's metrics.
    /// The store itself keeps no figures but `syncs`. (Boxed, as `heads`.)
    sync_watcher: Box<Mutex<Option<SyncWatcher>>>,
    /// Why a write failed, once one has: the store is then failed.
    /// (Shared with the applier's thread, which may be the one to fail.)
    failed: Arc<Mutex<Option<Failure>>>,
    /// The thread that writes inserts into sled, behind the journal
    /// (see `Applier`).
    applier: Applier,
    /// The `log` tree.
    log: sled::Tree,
    /// The settings tree, once it exists: made by the first `put_setting`,
    /// never by a read (a store that only opens and reads writes nothing
    /// of arbiter's).
    settings: Mutex<Option<sled::Tree>>,
    /// The right edge of the log's tree; its mutex serialises every insert
    /// of events (see `insert`).
    frontier: Mutex<Frontier>,
    /// The head of each game this process stored an event to: what an
    /// insert to it must follow, whether or not the applier has written it
    /// into sled yet. Read and changed only under `frontier`'s lock, only
    /// by `insert` (the one writer of game trees while the store is open),
    /// and only ever to a higher seq. (Boxed: the store is held by value
    /// in the CLI's `Target`.)
    heads: Box<Mutex<HashMap<String, Link>>>,
    /// The trees of games found to exist (`existing_tree`); a game's tree
    /// is never dropped. (Boxed, as `heads`.)
    trees: Box<Mutex<HashMap<String, sled::Tree>>>,
    /// Why the log's right edge could not be loaded at open (an event it
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
        let journal = self.journal.lock().unwrap_or_else(|p| p.into_inner());
        let journaled = journal.bytes() > 0 && journal.replayed();
        drop(journal);
        if journaled && self.failure().is_none() {
            let _ = self.make_durable(self.ticket());
        }
        // The applier writes what it holds (unless its own write failed),
        // and ends before sled closes.
        self.applier.close();
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
    /// Something was written since the last sync began that the journal
    /// does not hold (a setting, a large batch, an open's repair): the
    /// next sync is sled's own.
    sled_sync: bool,
}

/// Ends a leader's turn (its sync's round) even if its sync panics, so
/// that followers are not left waiting for a sync that will never end.
struct Leading<'s> {
    store: &'s SledStore,
    round: u64,
}

impl Drop for Leading<'_> {
    /// Wakes every follower of this round (covered, or to see the
    /// failure), and one of the next round's to lead it; after a failure,
    /// every one of the next round's too, to see it.
    fn drop(&mut self) {
        // A leader that panics took its round's journal records with it:
        // nothing may count them durable, so the store is failed.
        if std::thread::panicking() {
            self.store.fail(Failure { why: "a sync panicked".into(), errno: None });
        }
        let SledStore { commit, committed, .. } = self.store;
        commit.lock().unwrap_or_else(|p| p.into_inner()).syncing = false;
        let (this, next) = (&committed[(self.round % 2) as usize], &committed[((self.round + 1) % 2) as usize]);
        this.notify_all();
        match self.store.failure() {
            Some(_) => next.notify_all(),
            None => next.notify_one(),
        }
    }
}

/// One insert handed to the applier: its ticket, and what sled must hold
/// for it (the events, and their entries of the log).
/// Every ticket is handed over, in the order taken, so that "the applier
/// has applied ticket T" means sled holds every insert up to T: a ticket
/// of no events (a setting's) has no writes.
struct Unapplied {
    ticket: u64,
    /// The log's size once this ticket's insert is in.
    size: u64,
    writes: Option<Writes>,
}

/// What sled must hold for one insert: the events (each seq and its
/// stored bytes), and their entries of the log.
struct Writes {
    game: String,
    tree: sled::Tree,
    events: Vec<(u64, Vec<u8>)>,
    entries: LogEntries,
}

/// How far the applier is: the ticket of the last insert handed to it and
/// of the last it wrote into sled, and whether it has ended (closed, or
/// the store failed).
#[derive(Debug, Default)]
struct Progress {
    sent: u64,
    applied: u64,
    /// The log's size at `applied`, once the applier has applied a ticket.
    applied_size: Option<u64>,
    ended: bool,
    /// How many callers wait for it (`caught_up`): it signals only then.
    waiting: u64,
}

/// The one thread that writes inserts into sled: an append is durable
/// once its journal record is (`make_durable`), so sled's writes need not
/// be made on the append's own path, under the log's lock, where every
/// table waited for them (with 64 tables that lock was held about 20 us
/// per insert for sled's three keys, and appends/s were bound by it). The
/// applier writes the inserts one after another in the log's order, with
/// the same writes in the same order as an insert made them before (see
/// `store_in_order`), so after a crash sled holds a prefix of them, only
/// the newest possibly cut short, and the journal holds every one that was
/// acknowledged: an open repairs and replays as before.
///
/// A read of events or of the log first waits for the applier to write
/// every acknowledged insert (`SledStore::current`), so it sees every
/// acknowledged append, as before; a sync by sled's own flush waits for
/// the tickets it covers. The queue is short (`APPLIER_QUEUE`), so those
/// waits are short: an insert that finds it full waits for room (under the
/// log's lock, so the order is kept). An insert the applier cannot write
/// (sled's error, or a fork) may already be acknowledged by the journal:
/// the store fails, its log ends at the last insert the applier wrote
/// (`log_size`), and the next open replays the journal (or, for a fork,
/// reports the contradiction).
struct Applier {
    /// Hands inserts to the thread; none once closed.
    to_apply: Mutex<Option<SyncSender<Unapplied>>>,
    progress: Arc<(Mutex<Progress>, Condvar)>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// How many inserts may wait for the applier.
const APPLIER_QUEUE: usize = 64;

impl Applier {
    fn start(log: sled::Tree, failed: Arc<Mutex<Option<Failure>>>) -> Applier {
        let (to_apply, from) = std::sync::mpsc::sync_channel(APPLIER_QUEUE);
        let progress = Arc::new((Mutex::new(Progress::default()), Condvar::new()));
        let shared = progress.clone();
        let thread = std::thread::Builder::new()
            .name("arbiter-applier".into())
            .spawn(move || apply_all(&log, from, &shared, &failed))
            .expect("a thread for sled's writes");
        Applier { to_apply: Mutex::new(Some(to_apply)), progress, thread: Mutex::new(Some(thread)) }
    }

    /// Hands `insert` to the thread (the caller holds the log's lock, under
    /// which it took the ticket, so tickets arrive in order); waits while
    /// the queue is full.
    fn send(&self, insert: Unapplied) -> Result<(), Failure> {
        let ticket = insert.ticket;
        let to_apply =
            self.to_apply.lock().unwrap_or_else(|p| p.into_inner()).clone().ok_or_else(Failure::applier_stopped)?;
        self.progress.0.lock().unwrap_or_else(|p| p.into_inner()).sent = ticket;
        to_apply.send(insert).map_err(|_| Failure::applier_stopped())
    }

    /// Waits until sled holds every insert with a ticket up to `through`
    /// (none: every one handed over so far); false if the applier ended
    /// first (the store has failed, and says why). A ticket taken may not
    /// have been handed over yet (its insert still holds the log's lock):
    /// it is waited for all the same.
    fn caught_up(&self, through: Option<u64>) -> bool {
        let (lock, signal) = &*self.progress;
        let mut progress = lock.lock().unwrap_or_else(|p| p.into_inner());
        let target = through.unwrap_or(progress.sent);
        while progress.applied < target && !progress.ended {
            progress.waiting += 1;
            progress = signal.wait(progress).unwrap_or_else(|p| p.into_inner());
            progress.waiting -= 1;
        }
        progress.applied >= target
    }

    /// The log's size at the last ticket the applier applied (none before
    /// its first).
    fn applied_size(&self) -> Option<u64> {
        self.progress.0.lock().unwrap_or_else(|p| p.into_inner()).applied_size
    }

    /// Lets the thread write what it holds, and waits for it to end.
    fn close(&self) {
        drop(self.to_apply.lock().unwrap_or_else(|p| p.into_inner()).take());
        if let Some(thread) = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = thread.join();
        }
        // sled frees what its writes replaced only once every thread has
        // moved past them (epoch-based reclamation, crossbeam's), and the
        // applier's thread, ending, left its share for whichever thread
        // passes next. Without these passes sled's file stayed open for a
        // while after the store was dropped (an open right after found the
        // store in use, 1 run in 3 of a loaded test); with them, no run of
        // 800 did.
        for _ in 0..4 {
            sled::pin().flush();
        }
    }
}

/// The applier's thread: writes each insert into sled, in the order
/// handed over, until the queue closes or one of its writes fails (which
/// fails the store: nothing more is written into sled, and every waiter is
/// told). A store failed by something else (a journal's fdatasync) still
/// gets what was handed over before: a failed store reads what is durable,
/// and the journal may already have made those inserts so. (No new insert
/// is handed over to a failed store.)
fn apply_all(
    log: &sled::Tree,
    from: Receiver<Unapplied>,
    progress: &(Mutex<Progress>, Condvar),
    failed: &Mutex<Option<Failure>>,
) {
    /// Ends the applier's turn even if a write panics: the store is then
    /// failed (what sled holds in memory is not known), and waiters woken.
    struct Ending<'a>(&'a (Mutex<Progress>, Condvar), &'a Mutex<Option<Failure>>);
    impl Drop for Ending<'_> {
        fn drop(&mut self) {
            if std::thread::panicking() {
                let mut failed = self.1.lock().unwrap_or_else(|p| p.into_inner());
                failed.get_or_insert(Failure { why: "the store's writer into sled panicked".into(), errno: None });
            }
            self.0.0.lock().unwrap_or_else(|p| p.into_inner()).ended = true;
            self.0.1.notify_all();
        }
    }
    let _ending = Ending(progress, failed);
    for insert in from {
        if let Err(failure) = apply(log, &insert) {
            failed.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(failure);
            // The log ends before this insert, even if it is the first.
            let written = insert.writes.as_ref().map_or(0, |w| w.events.len() as u64);
            progress.0.lock().unwrap_or_else(|p| p.into_inner()).applied_size.get_or_insert(insert.size - written);
            return;
        }
        let mut done = progress.0.lock().unwrap_or_else(|p| p.into_inner());
        done.applied = insert.ticket;
        done.applied_size = Some(insert.size);
        if done.waiting > 0 {
            progress.1.notify_all();
        }
    }
}

/// Writes one insert into sled: one event as plain inserts, in the order
/// `last_insert` reads (`store_in_order`); a batch in one transaction. A
/// seq already stored is never written over (a fork: the kept head said
/// otherwise, which only a bug or a write behind arbiter's back can do);
/// the store fails instead, with nothing of the insert written.
fn apply(log: &sled::Tree, insert: &Unapplied) -> Result<(), Failure> {
    let Some(Writes { game, tree, events, entries }) = &insert.writes else {
        return Ok(());
    };
    let io = |e: &sled::Error| Failure::sled("sled failed to store the events", e);
    let fork = |seq: u64| Failure {
        why: format!("{game} seq {seq} is already stored: nothing was written over it (a fork refused)"),
        errno: None,
    };
    match events.as_slice() {
        [(seq, _)] => {
            if tree.contains_key(key(*seq)).map_err(|e| io(&e))? {
                return Err(fork(*seq));
            }
            store_in_order(log, tree, events, entries).map_err(|e| io(&e))
        }
        _ => match store_in_transaction(log, tree, events, entries) {
            Ok(()) => Ok(()),
            Err(TransactionError::Abort(seq)) => Err(fork(seq)),
            Err(TransactionError::Storage(e)) => Err(io(&e)),
        },
    }
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

    /// The applier has ended (it failed, and said why in the store's
    /// failure, which callers report first).
    fn applier_stopped() -> Failure {
        Failure { why: "the store's writer into sled has stopped".into(), errno: None }
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
/// keeps sled's file open until threads pass them (see `Applier::close`),
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
    /// writes nothing (but for completing a layout-1 store's journal
    /// record, which comes first): the store is reported as sled recovered
    /// it. The one exception is a store whose journal (`super::journal`)
    /// holds events sled lacks that may be what the checkpoint misses
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
        // A store without a log was written before arbiter kept one, and
        // its log is built below, unless it has checkpoints: then the log
        // was lost, and the store is reported as it is, with nothing written
        // (not even an empty log tree).
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
        let had_log = exists(LOG_TREE);
        let log_tree = db.open_tree(LOG_TREE).map_err(io)?;
        let layout = log_tree.get(LAYOUT_KEY).map_err(io)?;
        if let Some(layout) = &layout
            && layout.as_ref() != LAYOUT
        {
            return Err(OpenError::Lost(format!(
                "the store at {shown} has a log of layout {:?}, which this arbiter does not know (it knows {:?}): it was written by a newer arbiter",
                layout.as_ref(),
                LAYOUT
            )));
        }
        // Layout 1 always has its size. A log tree with neither a layout
        // nor a size is one whose building (`build_log`, which writes the
        // layout last) was cut short: it is built again, from the start.
        let layout_1 = had_log && layout.is_none() && log_tree.contains_key(LAYOUT_1_SIZE_KEY).map_err(io)?;
        let built = layout.is_some() || layout_1;
        if layout_1 {
            redo_layout_1_journal(&db, &log_tree).map_err(io)?.map_err(|why| damaged(&shown, why))?;
        }
        let last = match built {
            true => last_insert(&db, &log_tree).map_err(|e| e.open_error(&shown))?,
            false => LastInsert::None,
        };
        let size = last.size();
        // Read before anything is written: what the journal holds that sled
        // lost is put back below (`replay_journal`).
        let journaled = journal::read(&dir.join(journal::FILE))
            .map_err(|e| OpenError::Io { dir: shown.clone(), why: format!("cannot read its journal: {e}") })?;
        let failed = Arc::new(Mutex::new(None));
        let mut store = SledStore {
            db,
            dir: dir.to_path_buf(),
            log_file: log,
            commit: Mutex::new(Commit::default()),
            committed: [Condvar::new(), Condvar::new()],
            durable_size: AtomicU64::new(size),
            syncs: AtomicU64::new(0),
            blobs_seen: Box::default(),
            flusher: Box::default(),
            journal: Box::new(Mutex::new(Journal::new(dir, journaled.bytes()))),
            sync_watcher: Box::default(),
            failed: failed.clone(),
            applier: Applier::start(log_tree.clone(), failed),
            log: log_tree,
            settings: Mutex::new(settings),
            frontier: Mutex::new(Frontier::default()),
            heads: Box::default(),
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
        let adds = store.journal_adds(&shown, &journaled.records)?;
        if built {
            // Checked before the newest insert is made whole or undone, so
            // that a store that lost what it signed is not written; unless a
            // crash left a journal that may explain what the check misses
            // (`journal_may_explain`): then it is made again at the end.
            if let Err(e) = super::checkpoints::check(&store)
                && !(journaled.bytes() > 0 && store.journal_may_explain(&adds, size))
            {
                return Err(e);
            }
            let missing = match &last {
                LastInsert::Whole { missing: Some((game, seq)), .. } => Some(format!(
                    "the store at {shown} has lost part of its log: {game} seq {seq}, its newest event, is missing"
                )),
                _ => None,
            };
            let mut wrote = store.finish_last_insert(last)?;
            let written = |e: sled::Error| write_error(&shown, &e);
            if layout_1 {
                store.log.insert(LAYOUT_KEY, LAYOUT).map_err(written)?;
                wrote = true;
            }
            wrote |= remove_layout_1_keys(&store.log).map_err(written)?;
            // The right edge's subtrees below `STORED_LEVEL` are computed
            // from the newest events. If one is missing or changed (behind
            // arbiter's back: checked against the checkpoint above), the
            // store still opens, for the reads and `verify` that say which
            // event; only an append, which needs the edge, is refused.
            match Frontier::load(&super::LogNodes(&store), size) {
                Ok(frontier) => store.frontier = Mutex::new(frontier),
                Err(e) => store.edge_broken = Some(format!("the store at {shown} has lost part of its log: {e}")),
            }
            if missing.is_some() {
                store.edge_broken = missing;
            }
            store.commit.get_mut().unwrap_or_else(|p| p.into_inner()).written = Written { ticket: 0, size };
            if wrote {
                store.make_durable(store.ticket()).map_err(|e| unwritable(&store, e.to_string()))?;
            }
        } else {
            // A store written before it had a log (or whose first building
            // of it was cut short): its log is built here. A checkpoint
            // would mean the log was lost: check first, so that a lost
            // store is not written.
            super::checkpoints::check(&store)?;
            store.build_log().map_err(|why| unwritable(&store, why))?;
        }
        if journaled.bytes() > 0 {
            store.replay_journal(&shown, adds)?;
            // sled's own sync: what was put back (and what sled recovered,
            // which its flush at the last close did not sync) is durable
            // in sled. The journal is kept until the check below passes.
            store.make_durable(store.ticket()).map_err(|e| unwritable(&store, e.to_string()))?;
        }
        // Never open a store that holds less than its last checkpoint.
        super::checkpoints::check(&store)?;
        if journaled.bytes() > 0 {
            let mut journal = store.journal.lock().unwrap_or_else(|p| p.into_inner());
            journal.mark_replayed();
            journal
                .clear()
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
            // to pass sled's epochs (see `Applier::close`).
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
        if tree.is_empty() {
            return Err(ReadError::NoSuchGame(game.to_string()));
        }
        Ok(tree)
    }

    /// The last event of a game's tree that is durable: in a store that
    /// has not failed, its last event; in a failed one, the last whose
    /// position in the log is below the durable size (positions are given
    /// in the order events are stored, so those after it are the ones the
    /// failed sync did not cover).
    fn durable_head(&self, game: &str, tree: &sled::Tree) -> Result<Option<Link>, ReadError> {
        if self.failure().is_none() {
            return last_link(tree);
        }
        let durable = self.durable_size.load(Ordering::SeqCst);
        for item in tree.iter().rev() {
            let (k, v) = item.map_err(|e| ReadError::Io(e.to_string()))?;
            let seq = u64::from_be_bytes(k.as_ref().try_into().map_err(|_| ReadError::Io("bad key".into()))?);
            match self.stored_position(game, seq)? {
                Some(p) if p < durable => return Ok(Some(decode_stored(seq, &v)?.link())),
                _ => {}
            }
        }
        Ok(None)
    }

    /// The log position stored beside event `seq` of `game`.
    fn stored_position(&self, game: &str, seq: u64) -> Result<Option<u64>, ReadError> {
        let v = self.log.get(position_key(game, seq)).map_err(|e| ReadError::Io(e.to_string()))?;
        match v {
            None => Ok(None),
            Some(v) => Ok(Some(u64::from_be_bytes(
                v.as_ref()
                    .try_into()
                    .map_err(|_| ReadError::Log(format!("the position of {game} seq {seq} is damaged")))?,
            ))),
        }
    }

    /// Takes a ticket for an insert, the log then holding `size` events
    /// (the caller hands the insert to the applier next, with the ticket),
    /// and gives the next sync its journal
    /// `record` (`journal_record`), or, with none, asks for sled's own
    /// sync. The caller holds the frontier's lock, so tickets and records
    /// are taken in the order of the log.
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

    /// Takes a ticket for an insert that is not of events (a setting): the
    /// sync that covers it is sled's own.
    fn ticket(&self) -> u64 {
        let frontier = self.frontier.lock().unwrap_or_else(|p| p.into_inner());
        let ticket = self.ticket_at(frontier.size(), None);
        // Handed over too (see `Unapplied`). If the applier has ended, the
        // store has failed, and the sync that waits for this ticket says so.
        let _ = self.applier.send(Unapplied { ticket, size: frontier.size(), writes: None });
        ticket
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
            if commit.durable >= ticket {
                return Ok(());
            }
            if let Err(e) = self.refuse() {
                // The store may have failed outside any sync (an insert that
                // sled refused), with no follower woken to see it: wake them
                // all, or those of the next round would wait for a leader
                // that never comes. (Holding the lock: none is missed.)
                self.committed.iter().for_each(Condvar::notify_all);
                return Err(e);
            }
            if !commit.syncing {
                break;
            }
            let round = if ticket <= commit.covering { commit.round } else { commit.round + 1 };
            commit.waiting += 1;
            commit = self.committed[(round % 2) as usize].wait(commit).unwrap_or_else(|p| p.into_inner());
            commit.waiting -= 1;
        }
        commit.syncing = true;
        commit.round += 1;
        // Every ticket up to `covers` has its record (if any) in the
        // journal's records taken here, so the sync below includes all of
        // them: those records, or sled's own flush once the applier has
        // applied every ticket up to `covers` (`sync_through`).
        let covers = commit.written;
        commit.covering = covers.ticket;
        let records = std::mem::take(&mut commit.journal);
        let sled_sync = std::mem::take(&mut commit.sled_sync);
        let leading = Leading { store: self, round: commit.round };
        drop(commit);
        let began = Instant::now();
        let synced = self.sync_through(&records, sled_sync, covers.ticket);
        let took = began.elapsed();
        let mut commit = self.commit.lock().unwrap_or_else(|p| p.into_inner());
        let result = match synced {
            Ok(()) => {
                commit.durable = commit.durable.max(covers.ticket);
                let before = self.durable_size.fetch_max(covers.size, Ordering::SeqCst);
                Ok(covers.size.saturating_sub(before))
            }
            // Failed before the followers wake, so that they see it.
            Err(failure) => Err(self.failed_with(failure)),
        };
        drop(commit);
        drop(leading);
        let events = result?;
        let watcher = self.sync_watcher.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(watch) = watcher {
            watch(Synced { took, events });
        }
        Ok(())
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

    /// One sync of the group commit, covering every ticket up to
    /// `through`: `records` written to the journal and synced, one trip to
    /// the disk; or, when `sled_sync` asks for it or the journal has grown
    /// past `journal::LIMIT`, sled's own sync (`sync_now`) once the applier
    /// has written every insert it covers into sled (the records, and every
    /// record the journal holds), after which the journal is cut to nothing.
    fn sync_through(&self, records: &[u8], sled_sync: bool, through: u64) -> Result<(), Failure> {
        let mut journal = self.journal.lock().unwrap_or_else(|p| p.into_inner());
        if sled_sync || journal.bytes() + records.len() as u64 > journal::LIMIT {
            if !self.applier.caught_up(Some(through)) {
                return Err(self.failure().unwrap_or_else(Failure::applier_stopped));
            }
            self.sync_now()?;
            return journal.clear().map_err(|e| Failure::io("the journal could not be emptied", &e));
        }
        self.syncs.fetch_add(1, Ordering::Relaxed);
        journal.append(records).map_err(|e| Failure::io("the journal's write failed", &e))
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
    /// any. arbiter never builds a node large enough to become a blob (see
    /// `SEGMENT_SIZE`), so this is a guard, and a cheap one: the directory
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
        let mut any = false;
        if let Ok(entries) = std::fs::read_dir(&blobs) {
            for entry in entries.flatten() {
                any = true;
                File::open(entry.path())
                    .and_then(|f| f.sync_data())
                    .map_err(|e| Failure::io("sync of blob failed", &e))?;
            }
        }
        if any {
            File::open(&blobs).and_then(|f| f.sync_all()).map_err(|e| Failure::io("sync of blobs dir failed", &e))?;
        }
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

/// Writes and syncs one byte in a file of `dir`, then removes it: what the
/// disk under a store answers now.
fn probe_write(dir: &Path) -> std::io::Result<()> {
    use std::io::Write;
    let path = dir.join("sync-probe");
    let written = File::create(&path).and_then(|mut f| f.write_all(b"\n").and_then(|()| f.sync_data()));
    let _ = std::fs::remove_file(&path);
    written
}

fn key(seq: u64) -> [u8; 8] {
    seq.to_be_bytes()
}

fn decode_stored(seq: u64, bytes: &[u8]) -> Result<Event, ReadError> {
    Ok(decode_parsed(seq, bytes)?.event)
}

/// The stored events of `tree` from `from` to `last`, unchecked, each with
/// the seq it is stored under.
fn stored_range(tree: &sled::Tree, from: u64, last: u64) -> StoredEvents<'static> {
    if from > last {
        return Box::new(std::iter::empty());
    }
    Box::new(tree.range(key(from)..=key(last)).map(|item| {
        let (k, v) = item.map_err(|e| ReadError::Io(e.to_string()))?;
        let seq = u64::from_be_bytes(k.as_ref().try_into().map_err(|_| ReadError::Io("bad key".into()))?);
        Ok((seq, v.to_vec()))
    }))
}

impl SledStore {
    /// Waits until sled holds every insert made durable so far (see
    /// `Applier`), so that a read sees every append acknowledged before it
    /// began. Inserts not yet acknowledged are not waited for: the applier
    /// is nearly always ahead of the syncs, so a read seldom waits at all.
    fn current(&self) {
        let durable = self.commit.lock().unwrap_or_else(|p| p.into_inner()).durable;
        self.applier.caught_up(Some(durable));
    }

    /// The last seq a read may return: a failed store reads up to its
    /// durable head only.
    fn readable_to(&self, game: &str, tree: &sled::Tree) -> Result<u64, ReadError> {
        match self.failure() {
            None => Ok(u64::MAX),
            Some(_) => match self.durable_head(game, tree)? {
                Some(head) => Ok(head.seq),
                None => Err(ReadError::NoSuchGame(game.to_string())),
            },
        }
    }
}

impl Store for SledStore {
    fn games(&self) -> Result<Vec<String>, ReadError> {
        self.current();
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
        self.current();
        let tree = match self.existing_tree(game) {
            Ok(t) => t,
            Err(ReadError::NoSuchGame(_)) => return Ok(None),
            Err(e) => return Err(e),
        };
        self.durable_head(game, &tree)
    }

    fn read(&self, game: &str, from: u64) -> Result<Events<'_>, ReadError> {
        self.current();
        let tree = self.existing_tree(game)?;
        let last = self.readable_to(game, &tree)?;
        // The first event read links to the one before it: fetch that link.
        let prev: Option<Link> = match from.checked_sub(1) {
            None => None,
            Some(p) => match tree.get(key(p)).map_err(|e| ReadError::Io(e.to_string()))? {
                Some(bytes) => Some(decode_stored(p, &bytes)?.link()),
                None => return Ok(Box::new(std::iter::empty())),
            },
        };
        let mut chain = Chain::after(prev);
        Ok(Box::new(stored_range(&tree, from, last).map(move |item| {
            let (seq, bytes) = item?;
            let Parsed { event, at, .. } = decode_parsed(seq, &bytes)?;
            chain.push(&event, at).map_err(|why| ReadError::Corrupt { seq, why })?;
            Ok(event)
        })))
    }

    fn read_stored(&self, game: &str, from: u64) -> Result<StoredEvents<'_>, ReadError> {
        self.current();
        let tree = self.existing_tree(game)?;
        let last = self.readable_to(game, &tree)?;
        Ok(stored_range(&tree, from, last))
    }

    fn append(&self, game: &str, event: &Event, bytes: &[u8]) -> Result<(), AppendError> {
        let ticket = self.insert(game, &[(event.clone(), bytes.to_vec())])?;
        self.make_durable(ticket)
    }

    fn append_batch(&self, game: &str, events: &[(Event, Vec<u8>)]) -> Result<(), AppendError> {
        let ticket = self.insert(game, events)?;
        self.make_durable(ticket)
    }

    /// The size at the last sync that succeeded: an event in sled's memory
    /// whose sync is still running (or failed) is not counted; nor, in a
    /// failed store, one the applier could not write (see `Applier`).
    fn log_size(&self) -> Result<u64, ReadError> {
        self.current();
        let durable = self.durable_size.load(Ordering::SeqCst);
        Ok(match self.failure() {
            Some(_) => durable.min(self.applier.applied_size().unwrap_or(durable)),
            None => durable,
        })
    }

    fn log_node(&self, level: u8, index: u64) -> Result<Hash, ReadError> {
        self.current();
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
        let value = self.log.get(node_key(level, index)).map_err(|e| ReadError::Io(e.to_string()))?;
        value.and_then(|v| v.as_ref().try_into().ok()).ok_or_else(broken)
    }

    fn log_leaf(&self, index: u64) -> Result<Option<(String, u64)>, ReadError> {
        self.current();
        if self.failure().is_some() && index >= self.durable_size.load(Ordering::SeqCst) {
            return Ok(None);
        }
        let Some(v) = self.log.get(leaf_key(index)).map_err(|e| ReadError::Io(e.to_string()))? else {
            return Ok(None);
        };
        let (game, seq, _) = parse_leaf(&v).ok_or_else(|| ReadError::Log(format!("leaf {index} is damaged")))?;
        Ok(Some((game, seq)))
    }

    fn log_position(&self, game: &str, seq: u64) -> Result<Option<u64>, ReadError> {
        self.current();
        let position = self.stored_position(game, seq)?;
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
        let Some(tree) = self.settings_tree() else { return Ok(None) };
        Ok(tree.get(key.as_bytes()).map_err(|e| ReadError::Io(e.to_string()))?.map(|v| v.to_vec()))
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
        self.settings_to_write()?
            .insert(key.as_bytes(), value)
            .map_err(|e| self.failed_with(Failure::sled("sled failed to store a setting", &e)))?;
        self.make_durable(self.ticket())
    }

    fn swap_setting(&self, key: &str, expected: Option<&[u8]>, new: Option<&[u8]>) -> Result<bool, AppendError> {
        self.refuse()?;
        let swapped = self
            .settings_to_write()?
            .compare_and_swap(key.as_bytes(), expected, new)
            .map_err(|e| self.failed_with(Failure::sled("sled failed to store a setting", &e)))?;
        match swapped {
            Ok(()) => self.make_durable(self.ticket()).map(|()| true),
            Err(_) => Ok(false),
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
    /// Checks `events` (in order, all of one game), computes their entries
    /// of the log and hands them to the applier, which stores them into
    /// sled; not yet durable; returns the ticket for `make_durable`. The
    /// log's mutex is held from reading the head to the hand-over, so
    /// positions in the log are given in the order events are stored, with
    /// no gap, and a seq is never taken twice (no fork). The applier's
    /// writes are ordered so that an open can tell an insert a crash cut
    /// short, and undo it (see `store_in_order`, `LAYOUT_KEY` and
    /// `last_insert`).
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
        let leaves: Vec<(u64, Hash)> = events.iter().map(|(e, b)| (e.seq, leaf_hash(b))).collect();
        let record = journal_record(game, events);
        let mut frontier = self.frontier.lock().unwrap_or_else(|p| p.into_inner());
        // The store may have failed since (the applier's write).
        self.refuse()?;
        let head = self.head_to_insert_after(game, &tree).map_err(|e| AppendError::Io(e.to_string()))?;
        let prev = super::check_follows(game, events, head)?;
        let mut grown = frontier.clone();
        let entries = log_entries(&mut grown, game, leaves.into_iter());
        let ticket = self.ticket_at(grown.size(), record);
        let stored = events.iter().map(|(e, b)| (e.seq, b.clone())).collect();
        let writes = Writes { game: game.to_string(), tree, events: stored, entries };
        let unapplied = Unapplied { ticket, size: grown.size(), writes: Some(writes) };
        self.applier.send(unapplied).map_err(|failure| self.failed_with(failure))?;
        *frontier = grown;
        let mut heads = self.heads.lock().unwrap_or_else(|p| p.into_inner());
        match heads.get_mut(game) {
            Some(head) => *head = prev,
            None => {
                heads.insert(game.to_string(), prev);
            }
        }
        Ok(ticket)
    }

    /// The head an insert to `game` must follow (the caller holds the
    /// frontier's lock): the one kept in memory since this process's last
    /// insert to it, which the applier may not have written yet; else (no
    /// insert to it yet, so nothing of it waits for the applier) the
    /// tree's last event, decoded. sled's `last` copies a whole node
    /// through a reverse iterator (4% of an append's CPU with 64 tables),
    /// hence the kept head.
    fn head_to_insert_after(&self, game: &str, tree: &sled::Tree) -> Result<Option<Link>, ReadError> {
        if let Some(head) = self.heads.lock().unwrap_or_else(|p| p.into_inner()).get(game) {
            return Ok(Some(head.clone()));
        }
        last_link(tree)
    }

    /// What the journal's records add to what sled holds, checked whole
    /// before anything is written (see `super::journal`): in the
    /// journal's order, which is the log's, each insert's events that sled
    /// lacks, each following its game's head (sled's, or the journal's
    /// event before it). An event sled holds with the same bytes is passed
    /// over. An event that is not whole, differs from the one stored at
    /// its seq, or does not follow its game's head is damage: the store
    /// does not open, and nothing is written.
    fn journal_adds(&self, shown: &str, records: &[journal::Insert]) -> Result<Vec<Missing>, OpenError> {
        if records.is_empty() {
            return Ok(Vec::new());
        }
        let place = self.dir.join(journal::FILE).display().to_string();
        let mut heads: HashMap<&str, Option<Link>> = HashMap::new();
        let mut adds = Vec::new();
        for (i, (game, events)) in records.iter().enumerate() {
            let at = format!("{place}, record {}", i + 1);
            let bad = |why: String| damaged(shown, format!("{at}: game {game}: {why}"));
            let tree = match self.existing_tree(game) {
                Ok(tree) => Some(tree),
                Err(ReadError::NoSuchGame(_)) => None,
                Err(e) => return Err(read_failure(shown, e, |e| e.to_string())),
            };
            let mut lacking = Vec::new();
            for bytes in events {
                let parsed = crate::event::parse_stored(bytes).map_err(|e| bad(e.to_string()))?;
                let seq = parsed.event.seq;
                crate::event::check_stored(&parsed, seq, bytes).map_err(|e| bad(e.to_string()))?;
                let stored = match &tree {
                    Some(t) => t.get(key(seq)).map_err(|e| write_error(shown, &e))?,
                    None => None,
                };
                match stored {
                    Some(stored) if stored != bytes => {
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
                        Some(t) => last_link(t).map_err(|e| read_failure(shown, e, |e| e.to_string()))?,
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

    /// Builds the log of a store written before it had one: every game in
    /// name order, each in seq order. Runs once, at the first open.
    fn build_log(&self) -> Result<(), String> {
        let mut frontier = self.frontier.lock().unwrap_or_else(|p| p.into_inner());
        for game in self.games().map_err(|e| e.to_string())? {
            let mut log = sled::Batch::default();
            for event in self.read(&game, 0).map_err(|e| e.to_string())? {
                let event = event.map_err(|e| e.to_string())?;
                let bytes = crate::record::canonical_bytes(&event);
                let entries = log_entries(&mut frontier, &game, [(event.seq, leaf_hash(&bytes))].into_iter());
                for (k, v) in entries.before.into_iter().chain(entries.after) {
                    log.insert(k, v);
                }
            }
            self.log.apply_batch(log).map_err(|e| e.to_string())?;
        }
        self.log.insert(LAYOUT_KEY, LAYOUT).map_err(|e| e.to_string())?;
        self.durable_size.store(frontier.size(), Ordering::SeqCst);
        drop(frontier);
        self.make_durable(self.ticket()).map_err(|e| e.to_string())
    }

    /// The hash of the complete subtree `index` at `level`, below
    /// `STORED_LEVEL`: computed from its leaves' events (at most
    /// 2^(STORED_LEVEL - 1) of them).
    fn computed_node(&self, level: u8, index: u64) -> Result<Hash, ReadError> {
        let broken = || ReadError::Log(format!("subtree {index} at level {level} is missing or damaged"));
        let mut hashes = Vec::with_capacity(1 << level);
        for leaf in index << level..(index + 1) << level {
            let (game, seq) = self.log_leaf(leaf)?.ok_or_else(broken)?;
            let tree = self.existing_tree(&game).map_err(|_| broken())?;
            let bytes = tree.get(key(seq)).map_err(|e| ReadError::Io(e.to_string()))?.ok_or_else(broken)?;
            hashes.push(leaf_hash(&bytes));
        }
        while hashes.len() > 1 {
            hashes = hashes.chunks(2).map(|pair| node_hash(&pair[0], &pair[1])).collect();
        }
        Ok(hashes[0])
    }

    /// Makes the newest insert whole, or undoes it (see `last_insert`),
    /// and loads the log's right edge. Called by `open` after the store
    /// was checked against its checkpoint: a store that lost events it
    /// signed is reported as sled recovered it, with nothing undone (unless
    /// the journal may hold what it lost: see `open`).
    fn finish_last_insert(&self, last: LastInsert) -> Result<bool, OpenError> {
        let shown = self.dir.display().to_string();
        let io = |e: sled::Error| write_error(&shown, &e);
        let mut wrote = false;
        match last {
            LastInsert::None => {}
            LastInsert::CutShort { index, game, seq } => {
                // The position first, the leaf last: an undo cut short by
                // another crash is found again, and finished, at the next
                // open. There is no event to remove: that is why it is undone.
                self.log.remove(position_key(&game, seq)).map_err(io)?;
                self.log.remove(leaf_key(index)).map_err(io)?;
                wrote = true;
            }
            // Changed behind arbiter's back: left as it is (see `open`).
            LastInsert::Whole { missing: Some(_), .. } => {}
            LastInsert::Whole { first, leaves, missing: None } => {
                // Its subtrees, written after its events, may be missing;
                // found by their keys alone, so an open reads no event
                // unless one is (a damaged event is reported by the reads
                // that check it, as before).
                let end = first + leaves.len() as u64;
                let mut complete = true;
                for (level, index) in (first + 1..=end).flat_map(completed_by) {
                    complete &= self.log.contains_key(node_key(level, index)).map_err(io)?;
                }
                if complete {
                    return Ok(false);
                }
                let mut frontier = Frontier::load(&super::LogNodes(self), first)
                    .map_err(|e| read_failure(&shown, e, |e| e.to_string()))?;
                let mut events = Vec::with_capacity(leaves.len());
                for (game, seq) in &leaves {
                    let missing = || format!("{game} seq {seq}, in the log, is missing");
                    let tree = self.existing_tree(game).map_err(|e| read_failure(&shown, e, |_| missing()))?;
                    let bytes = tree.get(key(*seq)).map_err(io)?.ok_or_else(|| damaged(&shown, missing()))?;
                    events.push((*seq, bytes));
                }
                let game = leaves.first().map(|(g, _)| g.as_str()).unwrap_or_default();
                let entries = log_entries(&mut frontier, game, events.iter().map(|(s, b)| (*s, leaf_hash(b))));
                for (k, v) in entries.after {
                    if !self.log.contains_key(&k).map_err(io)? {
                        self.log.insert(k, v).map_err(io)?;
                        wrote = true;
                    }
                }
            }
        }
        Ok(wrote)
    }
}

/// The newest insert, as an open finds it.
///
/// CutShort: one event's insert (plain inserts, in order: leaf, position,
/// event, subtrees) whose event is not stored: a crash came before it, so
/// sled did not make it durable, and its leaf `index` and position are
/// undone. An open thus never removes an event. (It may have been
/// acknowledged through the journal: then the journal holds the event, and
/// the open inserts it again after the undo, at the same position.)
///
/// Whole: any other insert, `first` being its first leaf: one event's
/// insert whose event is stored (only its subtrees, written last, may be
/// missing), or a batch, which sled recovers all or none (a batch whose
/// event is missing was changed behind arbiter's back: it is left as it
/// is, for the reads that check events to report).
#[derive(Debug)]
enum LastInsert {
    None,
    Whole { first: u64, leaves: Vec<(String, u64)>, missing: Option<(String, u64)> },
    CutShort { index: u64, game: String, seq: u64 },
}

impl LastInsert {
    /// The log's size once the insert is made whole or undone.
    fn size(&self) -> u64 {
        match self {
            LastInsert::None => 0,
            LastInsert::Whole { first, leaves, .. } => first + leaves.len() as u64,
            LastInsert::CutShort { index, .. } => *index,
        }
    }
}

/// Reads the newest insert from the log's last leaf back to the leaf that
/// began it (a leaf's `CONTINUES` bit is clear). Reads only: sled
/// recovers its log as a prefix of what was written, and inserts are
/// written one after another by the applier, so only the newest can have
/// been cut short.
fn last_insert(db: &sled::Db, log: &sled::Tree) -> Result<LastInsert, OpenFault> {
    let io = |e: sled::Error| OpenFault::Io(e.to_string());
    let Some((k, _)) = log.range(leaf_key(0)..=leaf_key(u64::MAX)).next_back().transpose().map_err(io)? else {
        return Ok(LastInsert::None);
    };
    let last = u64::from_be_bytes(k[1..].try_into().map_err(|_| OpenFault::Damaged("a leaf's key is damaged".into()))?);
    let mut leaves = Vec::new();
    let mut index = last;
    loop {
        let v = log
            .get(leaf_key(index))
            .map_err(io)?
            .ok_or_else(|| OpenFault::Damaged(format!("leaf {index} is missing")))?;
        let (game, seq, continues) =
            parse_leaf(&v).ok_or_else(|| OpenFault::Damaged(format!("leaf {index} is damaged")))?;
        leaves.push((game, seq));
        if !continues || index == 0 {
            break;
        }
        index -= 1;
    }
    leaves.reverse();
    let (game, seq) = leaves.last().expect("at least the last leaf").clone();
    let name = format!("{TREE_PREFIX}{game}");
    let stored = db.tree_names().iter().any(|n| n.as_ref() == name.as_bytes())
        && db.open_tree(&name).map_err(io)?.contains_key(key(seq)).map_err(io)?;
    Ok(match (stored, leaves.len()) {
        (true, _) => LastInsert::Whole { first: index, leaves, missing: None },
        (false, 1) => LastInsert::CutShort { index, game, seq },
        // A batch is recovered all or none: its event was removed behind
        // arbiter's back. Nothing is undone; appends are refused.
        (false, _) => LastInsert::Whole { first: index, leaves, missing: Some((game, seq)) },
    })
}

/// Why an open's reading of its newest insert failed.
#[derive(Debug)]
enum OpenFault {
    Io(String),
    Damaged(String),
}

impl OpenFault {
    fn open_error(self, shown: &str) -> OpenError {
        match self {
            OpenFault::Io(why) => OpenError::Io { dir: shown.to_string(), why },
            OpenFault::Damaged(why) => damaged(shown, why),
        }
    }
}

/// Stores one insert as plain inserts, in the order `last_insert` reads:
/// the leaves and positions, the events, the subtrees.
fn store_in_order(
    log: &sled::Tree,
    tree: &sled::Tree,
    events: &[(u64, Vec<u8>)],
    entries: &LogEntries,
) -> sled::Result<()> {
    for (k, v) in &entries.before {
        log.insert(k.as_slice(), v.as_slice())?;
    }
    for (seq, bytes) in events {
        tree.insert(key(*seq), bytes.as_slice())?;
    }
    for (k, v) in &entries.after {
        log.insert(k.as_slice(), v.as_slice())?;
    }
    Ok(())
}

/// Stores a batch in one sled transaction over the game's tree and the
/// log: sled recovers it all or none, so an open never has to undo it
/// (see `LAYOUT_KEY`). Aborts, writing nothing, with the seq of an event
/// already stored.
fn store_in_transaction(
    log: &sled::Tree,
    tree: &sled::Tree,
    events: &[(u64, Vec<u8>)],
    entries: &LogEntries,
) -> Result<(), TransactionError<u64>> {
    let trees = [tree.clone(), log.clone()];
    trees[..].transaction(|t| {
        for (seq, _) in events {
            if t[0].get(key(*seq))?.is_some() {
                return Err(sled::transaction::ConflictableTransactionError::Abort(*seq));
            }
        }
        for (k, v) in &entries.before {
            t[1].insert(k.as_slice(), v.as_slice())?;
        }
        for (seq, bytes) in events {
            t[0].insert(&key(*seq), bytes.as_slice())?;
        }
        for (k, v) in &entries.after {
            t[1].insert(k.as_slice(), v.as_slice())?;
        }
        Ok(())
    })
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

/// What one insert writes to the `log` tree: `before` its events (each
/// event's leaf and position), and `after` them (the stored subtrees its
/// leaves complete).
struct LogEntries {
    before: Vec<(Vec<u8>, Vec<u8>)>,
    after: Vec<(Vec<u8>, Vec<u8>)>,
}

/// The entries of the `log` tree for the events of one insert, given as
/// (seq, `leaf_hash` of the stored bytes), appended to `frontier`: each
/// leaf (which event it is, and whether it continues the insert), each
/// position, and every subtree at `STORED_LEVEL` or above that they
/// complete.
fn log_entries(frontier: &mut Frontier, game: &str, events: impl Iterator<Item = (u64, Hash)>) -> LogEntries {
    let mut entries = LogEntries { before: Vec::new(), after: Vec::new() };
    for (n, (seq, leaf)) in events.enumerate() {
        let index = frontier.size();
        for (level, i, hash) in frontier.push(leaf) {
            if level >= STORED_LEVEL {
                entries.after.push((node_key(level, i).to_vec(), hash.to_vec()));
            }
        }
        let marked = if n == 0 { seq } else { seq | CONTINUES };
        let mut leaf = marked.to_be_bytes().to_vec();
        leaf.extend_from_slice(game.as_bytes());
        entries.before.push((leaf_key(index).to_vec(), leaf));
        entries.before.push((position_key(game, seq), index.to_be_bytes().to_vec()));
    }
    entries
}

/// The stored subtrees (level, index) that the log's `size`-th leaf
/// completes: those at `STORED_LEVEL` and above whose size divides `size`.
fn completed_by(size: u64) -> impl Iterator<Item = (u8, u64)> {
    (STORED_LEVEL..64)
        .take_while(move |level| size.is_multiple_of(1 << level))
        .map(move |level| (level, (size >> level) - 1))
}

/// A leaf's value: (game, seq, whether it continues the insert before it).
fn parse_leaf(v: &[u8]) -> Option<(String, u64, bool)> {
    let marked = u64::from_be_bytes(v.get(..8)?.try_into().ok()?);
    let game = std::str::from_utf8(&v[8..]).ok()?;
    Some((game.to_string(), marked & !CONTINUES, marked & CONTINUES != 0))
}

/// The last event of a game's tree, as a link.
fn last_link(tree: &sled::Tree) -> Result<Option<Link>, ReadError> {
    match tree.last().map_err(|e| ReadError::Io(e.to_string()))? {
        None => Ok(None),
        Some((k, v)) => {
            let seq = u64::from_be_bytes(k.as_ref().try_into().map_err(|_| ReadError::Io("bad key".into()))?);
            Ok(Some(decode_stored(seq, &v)?.link()))
        }
    }
}

// Keys of the `log` tree: complete subtrees, leaves, positions.
fn node_key(level: u8, index: u64) -> [u8; 10] {
    let mut k = [0u8; 10];
    k[0] = b'n';
    k[1] = level;
    k[2..].copy_from_slice(&index.to_be_bytes());
    k
}

fn leaf_key(index: u64) -> [u8; 9] {
    let mut k = [0u8; 9];
    k[0] = b'l';
    k[1..].copy_from_slice(&index.to_be_bytes());
    k
}

/// A game name has no NUL (`check_game_name`), so NUL ends it.
fn position_key(game: &str, seq: u64) -> Vec<u8> {
    let mut k = Vec::with_capacity(game.len() + 10);
    k.push(b'p');
    k.extend_from_slice(game.as_bytes());
    k.push(0);
    k.extend_from_slice(&seq.to_be_bytes());
    k
}

/// The log's layout, kept under `LAYOUT_KEY` (absent: the first layout).
///
/// Its first byte is not one of the other keys' ('n', 'l', 'p').
///
/// Layout 2, per event: the event in its game's tree, its leaf
/// (`leaf_key`: seq and game) and its position (`position_key`), and a
/// subtree's hash only at `STORED_LEVEL` and above (one per 16 events);
/// the subtrees below are computed from the events (`computed_node`), and
/// the size is the last leaf's index + 1. Three sled inserts of about 600
/// bytes in all, where layout 1 made seven of about 2 KB: a journal
/// record holding every write (the event's bytes again), then each
/// write. A sync's cost follows the bytes it writes: on this disk, raw
/// sled made the seven writes at 0.81x-0.86x of one, the three at
/// 0.96x-1.06x.
///
/// Without a journal, one event's insert is not written all or none: it
/// is written in an order an open can read (`insert`), and an open undoes
/// an insert cut short before its event (`last_insert`), which was never
/// acknowledged. A batch of events is stored in one sled transaction
/// (`store_in_transaction`), which sled recovers all or none: it costs
/// about 5x the plain inserts, once per batch, and an open never has to
/// write a thousand removals to undo one (an open after a full disk, with
/// a little space freed, must not need more). A layout-1 store is changed at its first open: its
/// journal is redone (`redo_layout_1_journal`), then the keys layout 2
/// does not keep are removed (`remove_layout_1_keys`).
const LAYOUT_KEY: &[u8] = b"format";
const LAYOUT: &[u8] = &[2];

/// Subtrees at this level and above are stored; those below (at most 8
/// leaves) are computed from the events. Four levels cut the stored
/// subtrees from one per event to one per 16, and a proof reads at most
/// 15 events more.
const STORED_LEVEL: u8 = 4;

/// A leaf's seq with this bit set continues the insert of the leaf before
/// it; clear, it begins an insert. (A seq never reaches it:
/// `limits::MAX_STREAM_EVENTS`.)
const CONTINUES: u64 = 1 << 63;

// Layout 1's keys of the `log` tree that layout 2 does not keep: its size,
// and its journal (one sled insert holding every write of the newest
// insert, stored before them; an open completed what a crash cut short).
const LAYOUT_1_SIZE_KEY: &[u8] = b"size";
const LAYOUT_1_JOURNAL_KEY: &[u8] = b"journal";

/// Which tree a layout-1 journaled write goes to.
const TO_GAME: u8 = 0;
const TO_LOG: u8 = 1;

/// The writes of a layout-1 journal record: (game, [(tree, key, value)]);
/// None if it is damaged.
#[allow(clippy::type_complexity)]
fn journal_writes(record: &[u8]) -> Option<(String, Vec<(u8, Vec<u8>, Vec<u8>)>)> {
    let mut rest = record;
    let mut take = || -> Option<Vec<u8>> {
        let n = u32::from_be_bytes(rest.get(..4)?.try_into().ok()?) as usize;
        let bytes = rest.get(4..4 + n)?.to_vec();
        rest = &rest[4 + n..];
        Some(bytes)
    };
    let game = String::from_utf8(take()?).ok()?;
    let mut writes = Vec::new();
    while let Some(to) = take() {
        let (k, v) = (take()?, take()?);
        writes.push((*to.first()?, k, v));
    }
    Some((game, writes))
}

/// Completes a layout-1 store's newest insert if a crash cut it short
/// after its journal record: each of its writes whose key the store does
/// not hold is made. Writes nothing when the store holds them all. A value
/// the store holds is never overwritten: if it differs from the record,
/// that is damage, and the checks that find damage report it (an event's
/// hash on read, the log against its checkpoint at open). A record that
/// cannot be parsed is the inner error.
fn redo_layout_1_journal(db: &sled::Db, log: &sled::Tree) -> sled::Result<Result<(), String>> {
    let Some(record) = log.get(LAYOUT_1_JOURNAL_KEY)? else { return Ok(Ok(())) };
    let damaged = || Ok(Err("its journal is damaged".to_string()));
    let Some((game, writes)) = journal_writes(&record) else { return damaged() };
    let tree = db.open_tree(format!("{TREE_PREFIX}{game}"))?;
    for (to, k, v) in writes {
        let target = match to {
            TO_GAME => &tree,
            TO_LOG => log,
            _ => return damaged(),
        };
        // Layout 2 keeps no size: the last leaf gives it.
        if to == TO_LOG && k == LAYOUT_1_SIZE_KEY {
            continue;
        }
        if target.get(&k)?.is_none() {
            target.insert(k, v)?;
        }
    }
    Ok(Ok(()))
}

/// Removes layout 1's journal and size, the size last (an open that finds
/// it goes on removing). Without its size, an earlier arbiter refuses the
/// store rather than write layout 1's keys into it. Layout 1's subtrees
/// below `STORED_LEVEL` are left where they are, never read: removing
/// them frees sled segments, which sled 0.34 then writes zeros over at
/// every open (measured on a 113,000-event store: 150 MB written by every
/// open, even a `head`, where a store written as layout 2 writes none).
fn remove_layout_1_keys(log: &sled::Tree) -> sled::Result<bool> {
    if !log.contains_key(LAYOUT_1_SIZE_KEY)? {
        return Ok(false);
    }
    log.remove(LAYOUT_1_JOURNAL_KEY)?;
    log.remove(LAYOUT_1_SIZE_KEY)?;
    Ok(true)
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
    use crate::tlog::merkle::{MemoryTree, Nodes};

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

    /// The variable that makes `journal_child_appends_then_aborts` run: the
    /// store's directory.
    const JOURNAL_CHILD: &str = "ARBITER_TEST_JOURNAL_CHILD";

    /// The child of `an_acknowledged_append_survives_a_crash_through_the_journal`:
    /// appends a batch of three to game "g", then to "g" and "h" in turn,
    /// one event at a time; says each event acknowledged with its position
    /// in the log, then aborts (no close, no drop: sled writes nothing more).
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
        // First: sled's first transaction after an open flushes sled (its
        // counter of ids), which would make sled hold what came before it.
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
        std::process::abort();
    }

    /// A process that dies right after its appends were acknowledged (each
    /// made durable by the journal alone: in these tests sled flushes on no
    /// timer, and the process never closed its store) loses none of them:
    /// the next open puts them back from the journal, every event at the
    /// position in the log it had, and empties the journal.
    #[test]
    fn an_acknowledged_append_survives_a_crash_through_the_journal() {
        let (dir, store, _) = with_first_event();
        let (h0, hb0) = sealed(None);
        store.append("h", &h0, &hb0).unwrap();
        store.close();
        let journal_path = dir.path().join(journal::FILE);
        assert_eq!(std::fs::metadata(&journal_path).unwrap().len(), 0, "a close empties the journal");
        let out = run_child("journal_child_appends_then_aborts", JOURNAL_CHILD, dir.path());
        assert!(!out.status.success(), "the child aborts");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let acknowledged: Vec<(String, u64, u64)> = stdout
            .lines()
            .filter_map(|l| {
                let mut words = l.strip_prefix("acknowledged ")?.split(' ');
                Some((words.next()?.to_string(), words.next()?.parse().ok()?, words.next()?.parse().ok()?))
            })
            .collect();
        assert_eq!(acknowledged.len(), 23, "{stdout}");
        let journaled = journal::read(&journal_path).unwrap();
        assert_eq!(journaled.records.len(), 21, "an insert a record: the batch and 20 appends");
        assert_eq!(journaled.records[0].1.len(), 3);
        // sled alone lost the appends: no timer flushed them, and no close.
        {
            let db = open_sled(dir.path()).unwrap();
            let held = |game: &str| db.open_tree(format!("{TREE_PREFIX}{game}")).unwrap().len();
            assert!(
                held("g") <= 4 && held("h") == 1,
                "sled held more than it was made to: {}, {}",
                held("g"),
                held("h")
            );
        }

        let store = SledStore::open(dir.path()).unwrap();
        assert_eq!(store.head("g").unwrap().unwrap().seq, 13);
        assert_eq!(store.head("h").unwrap().unwrap().seq, 10);
        for game in ["g", "h"] {
            // `read` checks every link of the chain.
            let read: Vec<Event> = store.read(game, 0).unwrap().collect::<Result<_, _>>().unwrap();
            assert_eq!(read.len() as u64, store.head(game).unwrap().unwrap().seq + 1);
        }
        for (game, seq, position) in &acknowledged {
            assert_eq!(store.log_position(game, *seq).unwrap(), Some(*position), "{game} {seq}");
        }
        assert_eq!(store.log_size().unwrap(), 25);
        assert_eq!(std::fs::metadata(&journal_path).unwrap().len(), 0, "the open emptied the journal");
        let dir_path = closed_durably(store);
        let store = SledStore::open(&dir_path).unwrap();
        assert_eq!(store.head("g").unwrap().unwrap().seq, 13, "what was put back is sled's own now");
    }

    /// The variable that makes `applier_child_appends_concurrently_then_aborts`
    /// run: the store's directory.
    const APPLIER_CHILD: &str = "ARBITER_TEST_APPLIER_CHILD";

    /// The child of `acknowledged_appends_survive_a_crash_amid_concurrent_syncs`:
    /// four threads append to a game each while a fifth writes a setting
    /// every 2 ms (each a sled sync that waits for the applier, then
    /// empties the journal); prints each acknowledgement; aborts once 400
    /// are made, with appends, syncs and the applier all under way.
    #[test]
    #[ignore = "run by acknowledged_appends_survive_a_crash_amid_concurrent_syncs"]
    fn applier_child_appends_concurrently_then_aborts() {
        use std::io::Write;
        let Ok(dir) = std::env::var(APPLIER_CHILD) else { return };
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
                    std::thread::sleep(Duration::from_millis(2));
                }
            });
            while acknowledged.load(Ordering::SeqCst) < 400 {
                std::thread::sleep(Duration::from_millis(1));
            }
            std::process::abort();
        });
    }

    /// Appends acknowledged while sled's own syncs (for a setting) run
    /// beside them and the applier writes behind them all survive a crash:
    /// a sync empties the journal only once sled holds what it covers.
    #[test]
    fn acknowledged_appends_survive_a_crash_amid_concurrent_syncs() {
        let dir = tempfile::tempdir().unwrap();
        let out = run_child("applier_child_appends_concurrently_then_aborts", APPLIER_CHILD, dir.path());
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

    /// The journal is emptied whenever sled's own sync runs: once it would
    /// grow past `journal::LIMIT`, and for a write it does not hold (a
    /// setting). Until then each small append's sync writes it alone.
    #[test]
    fn sled_s_own_sync_empties_the_journal_past_its_limit_and_for_a_setting() {
        let (dir, store, (e0, _)) = with_first_event();
        let journal_len = || std::fs::metadata(dir.path().join(journal::FILE)).map_or(0, |m| m.len());
        let mut head = e0.link();
        let mut lengths = Vec::new();
        // Batches of 64 events (one record each) until the journal has
        // been emptied once.
        while lengths.len() < 2 || lengths.windows(2).all(|w| w[0] < w[1]) {
            let batch = events_after_link(&head, journal::MOST_EVENTS);
            store.append_batch("g", &batch).unwrap();
            head = batch.last().unwrap().0.link();
            lengths.push(journal_len());
            assert!(lengths.len() < 1000, "the journal never emptied: {} bytes after 1,000 batches", journal_len());
        }
        let before = lengths[lengths.len() - 2];
        assert!(before <= journal::LIMIT, "{lengths:?}");
        assert!(before + lengths[0] > journal::LIMIT, "emptied before its limit: {lengths:?}");
        assert_eq!(*lengths.last().unwrap(), 0, "sled's own sync emptied it, and wrote no record of its batch");
        let (e, b) = sealed(Some(&head));
        store.append("g", &e, &b).unwrap();
        assert!(journal_len() > 0);
        store.put_setting("any", b"x").unwrap();
        assert_eq!(journal_len(), 0, "a setting's sync is sled's own");
        let events = store.read("g", 0).unwrap().count() as u64;
        assert_eq!(events, e.seq + 1);
    }

    /// A crash that left an insert the journal acknowledged whole in sled
    /// but for its subtree (sled's flush on a timer came between its event
    /// and its subtree), after a checkpoint was signed over it: the open
    /// writes the subtree from the events and opens, the checkpoint holding.
    /// (Found by a second review of the journal.)
    #[test]
    fn an_acknowledged_insert_whose_subtree_sled_lost_opens_against_its_checkpoint() {
        let (dir, store, (e0, _)) = with_first_event();
        let batch = events_after(&e0, 14);
        store.append_batch("g", &batch).unwrap();
        // Leaf 15 completes subtree 0 at level 4.
        let (x, xb) = sealed(Some(&batch[13].0.link()));
        store.append("g", &x, &xb).unwrap();
        let signer = super::super::checkpoints::signer(&store, None, Some("test.example/log")).unwrap();
        super::super::checkpoints::sign(&store, &signer).unwrap();
        let node = store.log_node(STORED_LEVEL, 0).unwrap();
        store.log.remove(node_key(STORED_LEVEL, 0)).unwrap();
        let at = closed_durably(store);
        let mut records = Vec::new();
        journal::encode("g", std::iter::once(xb.as_slice()), &mut records);
        std::fs::write(dir.path().join(journal::FILE), &records).unwrap();

        let store = SledStore::open(&at).unwrap();
        assert_eq!((store.head("g").unwrap().unwrap().seq, store.log_size().unwrap()), (15, 16));
        assert_eq!(store.log_node(STORED_LEVEL, 0).unwrap(), node);
        assert_eq!(std::fs::metadata(dir.path().join(journal::FILE)).unwrap().len(), 0);
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
        // Not durable, so a read does not wait for it: wait for the applier.
        store.applier.caught_up(None);
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

    /// A store that lost a signed event opens with nothing written, whatever
    /// its journal holds: a journal of events sled holds already (an
    /// emptying a crash undid) does not stop the check before the repair,
    /// and a journal whose events cannot make up for what was lost does not
    /// get them written. (Both were found by a review of the journal.)
    #[test]
    fn a_store_that_lost_a_signed_event_is_not_written_whatever_its_journal_holds() {
        let sign = |store: &SledStore| {
            let signer = super::super::checkpoints::signer(store, None, Some("test.example/log")).unwrap();
            super::super::checkpoints::sign(store, &signer).unwrap();
        };
        let leaf_of = |dir: &Path, index: u64| {
            let db = open_sled(dir).unwrap();
            db.open_tree(LOG_TREE).unwrap().get(leaf_key(index)).unwrap().map(|v| v.to_vec())
        };
        // g1, signed, removed behind arbiter's back: its insert looks cut
        // short, and the journal holds only g0, which sled holds.
        let (dir, store, (e0, b0)) = with_first_event();
        let (e1, b1) = sealed(Some(&e0.link()));
        store.append("g", &e1, &b1).unwrap();
        sign(&store);
        store.tree("g").unwrap().remove(key(1)).unwrap();
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
        store.tree("h").unwrap().remove(key(0)).unwrap();
        store.log.remove(position_key("h", 0)).unwrap();
        store.log.remove(leaf_key(1)).unwrap();
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

    /// The applier finds a seq already stored where the kept head says the
    /// game ends (only a bug, or a write behind arbiter's back, makes one):
    /// it writes nothing over it, and the store fails.
    #[test]
    fn the_applier_never_writes_over_a_stored_seq_and_fails_the_store() {
        // A seq already in a game's tree (written behind the store's back)
        // where the kept head says the game ends: one event, then a batch.
        for batch in [false, true] {
            let (_dir, store, (e0, _)) = with_first_event();
            let (e1, b1) = sealed(Some(&e0.link()));
            let (e2, b2) = sealed(Some(&e1.link()));
            let tree = store.tree("g").unwrap();
            let taken = if batch { 2 } else { 1 };
            tree.insert(key(taken), b"behind".as_slice()).unwrap();
            // Journaled, so acknowledged; the applier refuses it.
            let _ = match batch {
                false => store.append("g", &e1, &b1),
                true => store.append_batch("g", &[(e1.clone(), b1), (e2.clone(), b2.clone())]),
            };
            store.applier.caught_up(None);
            let failed = store.failed().expect("the store failed");
            assert!(failed.contains(&format!("g seq {taken} is already stored")), "{failed}");
            assert_eq!(tree.get(key(taken)).unwrap().unwrap().as_ref(), b"behind");
            assert_eq!(tree.len(), 2, "nothing of the insert written");
            assert_eq!(store.log_size().unwrap(), 1, "the log ends where the applier stopped");
            assert_eq!(store.log_leaf(1).unwrap(), None);
            let (e3, b3) = sealed(Some(&e2.link()));
            let err = store.append("g", &e3, &b3).unwrap_err().to_string();
            assert!(err.contains("an earlier write to this store failed"), "{err}");
        }
    }

    /// After a failed sync, sled holds in memory events that are not
    /// durable: the store shows none of them, stores nothing more, and its
    /// log ends where the last sync that succeeded left it.
    #[test]
    fn a_failed_store_reads_only_what_is_durable_and_stores_nothing() {
        let (_dir, store, (e0, _)) = with_first_event();
        let (e1, b1) = sealed(Some(&e0.link()));
        let (e2, b2) = sealed(Some(&e1.link()));
        // In sled's memory (once the applier has written it), then the
        // sync fails.
        store.insert("g", &[(e1.clone(), b1), (e2.clone(), b2.clone())]).unwrap();
        store.applier.caught_up(None);
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
        // once the applier has written what was appended.
        store.applier.caught_up(None);
        (dir, store, (e0, b0))
    }

    /// What `insert` writes for `batch` after the store's last event.
    fn entries_of(store: &SledStore, batch: &[(Event, Vec<u8>)]) -> LogEntries {
        store.applier.caught_up(None);
        let mut grown = store.frontier.lock().unwrap().clone();
        log_entries(&mut grown, "g", batch.iter().map(|(e, b)| (e.seq, leaf_hash(b))))
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

    /// A crash within an insert, before its event was stored: the insert
    /// was never acknowledged, and the next open undoes it (its position
    /// and leaf), so the store holds what it held
    /// before and the next append takes the same seq.
    #[test]
    fn an_open_undoes_an_insert_cut_short_before_its_last_event() {
        let (_dir, store, (e0, _)) = with_first_event();
        // An insert's leaf and position, without its event.
        let cut = events_after(&e0, 1);
        let entries = entries_of(&store, &cut);
        for (k, v) in &entries.before {
            store.log.insert(k.as_slice(), v.as_slice()).unwrap();
        }
        let at = closed_durably(store);

        let store = SledStore::open(&at).unwrap();
        assert_eq!(store.head("g").unwrap(), Some(e0.link()));
        assert_eq!(store.log_size().unwrap(), 1);
        assert_eq!(store.log_leaf(1).unwrap(), None);
        assert_eq!(store.log_position("g", 1).unwrap(), None);
        assert_eq!(store.get("g", 1).unwrap(), None);
        let other = events_after(&e0, 1);
        store.append("g", &other[0].0, &other[0].1).unwrap();
        assert_eq!(store.log_size().unwrap(), 2);
        assert_eq!(store.log_leaf(1).unwrap(), Some(("g".to_string(), 1)));
        store.close();
        // The undo is durable: a second open finds the same.
        let store = SledStore::open(&at).unwrap();
        assert_eq!(store.head("g").unwrap(), Some(other[0].0.link()));
        assert_eq!(store.log_size().unwrap(), 2);
    }

    /// A crash after an insert's last event but before the subtrees its
    /// leaves complete: the next open writes them, and the log's root is
    /// the one its events give.
    #[test]
    fn an_open_stores_the_subtrees_an_insert_cut_short_after_its_events_left_out() {
        let (_dir, store, (e0, b0)) = with_first_event();
        let mut all = vec![(e0.clone(), b0)];
        let first = events_after(&e0, 14);
        store.append_batch("g", &first).unwrap();
        all.extend(first);
        // Leaf 15, one event's insert: it completes subtree 0 at level 4.
        let batch = events_after(&all[14].0, 1);
        let entries = entries_of(&store, &batch);
        assert_eq!(entries.after.len(), 1, "one stored subtree: {:?}", entries.after);
        for (k, v) in &entries.before {
            store.log.insert(k.as_slice(), v.as_slice()).unwrap();
        }
        let tree = store.tree("g").unwrap();
        for (e, b) in &batch {
            tree.insert(key(e.seq), b.as_slice()).unwrap();
        }
        drop(tree);
        all.extend(batch);
        let at = closed_durably(store);

        let store = SledStore::open(&at).unwrap();
        assert_eq!(store.log_size().unwrap(), 16);
        let mut tree = MemoryTree::default();
        for (_, b) in &all {
            tree.push(leaf_hash(b));
        }
        assert_eq!(store.log_node(STORED_LEVEL, 0).unwrap(), tree.node(STORED_LEVEL, 0).unwrap());
        assert_eq!(crate::tlog::merkle::root(&super::super::LogNodes(&store), 16).unwrap(), tree.root());
        assert_eq!(store.frontier.lock().unwrap().root(), tree.root());
    }

    /// A layout-1 journal record (as the earlier arbiter wrote it).
    fn layout_1_journal_record(game: &str, writes: &[(u8, Vec<u8>, Vec<u8>)]) -> Vec<u8> {
        let mut record = Vec::new();
        let mut put = |bytes: &[u8]| {
            record.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
            record.extend_from_slice(bytes);
        };
        put(game.as_bytes());
        for (to, k, v) in writes {
            put(&[*to]);
            put(k);
            put(v);
        }
        record
    }

    /// A store the earlier arbiter wrote (layout 1: every subtree, a size
    /// and a journal) opens: its journal's insert, cut short by a crash, is
    /// completed; its journal and size are removed; the log's root is
    /// unchanged; and appends go on.
    #[test]
    fn a_layout_1_store_is_changed_at_its_first_open_and_its_log_is_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let (e0, b0) = sealed(None);
        let mut all = vec![(e0.clone(), b0)];
        all.extend(events_after(&e0, 39));
        // Layout 1's writes for each event; the last event's written only to the journal.
        {
            let db = open_sled(dir.path()).unwrap();
            let log = db.open_tree(LOG_TREE).unwrap();
            let game = db.open_tree("game/g").unwrap();
            let mut frontier = Frontier::default();
            for (n, (e, b)) in all.iter().enumerate() {
                let index = frontier.size();
                let mut writes: Vec<(u8, Vec<u8>, Vec<u8>)> = frontier
                    .push(leaf_hash(b))
                    .into_iter()
                    .map(|(level, i, h)| (TO_LOG, node_key(level, i).to_vec(), h.to_vec()))
                    .collect();
                let mut leaf = e.seq.to_be_bytes().to_vec();
                leaf.extend_from_slice(b"g");
                writes.push((TO_LOG, leaf_key(index).to_vec(), leaf));
                writes.push((TO_LOG, position_key("g", e.seq), index.to_be_bytes().to_vec()));
                writes.push((TO_LOG, LAYOUT_1_SIZE_KEY.to_vec(), frontier.size().to_be_bytes().to_vec()));
                writes.push((TO_GAME, key(e.seq).to_vec(), b.clone()));
                log.insert(LAYOUT_1_JOURNAL_KEY, layout_1_journal_record("g", &writes)).unwrap();
                if n + 1 < all.len() {
                    for (to, k, v) in writes {
                        let tree = if to == TO_LOG { &log } else { &game };
                        tree.insert(k, v).unwrap();
                    }
                }
            }
            db.flush().unwrap();
            assert!(log.contains_key(node_key(0, 3)).unwrap());
        }
        std::thread::sleep(std::time::Duration::from_millis(200));

        let store = SledStore::open(dir.path()).unwrap();
        assert_eq!(store.head("g").unwrap(), Some(all[39].0.link()));
        assert_eq!(store.log_size().unwrap(), 40);
        let mut tree = MemoryTree::default();
        for (_, b) in &all {
            tree.push(leaf_hash(b));
        }
        assert_eq!(crate::tlog::merkle::root(&super::super::LogNodes(&store), 40).unwrap(), tree.root());
        assert_eq!(store.log.get(LAYOUT_KEY).unwrap().as_deref(), Some(LAYOUT));
        for gone in [LAYOUT_1_SIZE_KEY, LAYOUT_1_JOURNAL_KEY] {
            assert!(!store.log.contains_key(gone).unwrap(), "{gone:?} is still there");
        }
        // Left, unread (see `remove_layout_1_keys`).
        assert!(store.log.contains_key(node_key(0, 3)).unwrap());
        assert!(store.log.contains_key(node_key(STORED_LEVEL, 1)).unwrap());
        let next = events_after(&all[39].0, 1);
        store.append("g", &next[0].0, &next[0].1).unwrap();
        assert_eq!(store.log_position("g", 40).unwrap(), Some(40));
        let at = store.dir().to_path_buf();
        store.close();
        let store = SledStore::open(&at).unwrap();
        assert_eq!(store.log_size().unwrap(), 41);
    }

    /// A batch (here a large one) is stored in one transaction, and opens whole.
    #[test]
    fn a_batch_is_stored_in_a_transaction_and_opens_whole() {
        let (_dir, store, (e0, _)) = with_first_event();
        // (A string is at most 1 KiB: the event is large by many of them.)
        let note: Vec<String> = (0..12).map(|_| "x".repeat(1000)).collect();
        let mut batch = Vec::new();
        let mut head = e0.link();
        while batch.iter().map(|(_, b): &(Event, Vec<u8>)| b.len()).sum::<usize>() <= 256 * 1024 {
            let draft =
                Draft { actor: "p1".into(), action: serde_json::json!({"type": "note", "text": note}), at: None };
            let (event, bytes) = seal(&draft, Some(&head), chrono::Utc::now()).unwrap();
            head = event.link();
            batch.push((event, bytes));
        }
        store.append_batch("g", &batch).unwrap();
        let at = store.dir().to_path_buf();
        store.close();
        let store = SledStore::open(&at).unwrap();
        assert_eq!(store.head("g").unwrap(), Some(head));
        assert_eq!(store.log_size().unwrap(), 1 + batch.len() as u64);
        let leaves: Vec<_> = (0..store.log_size().unwrap()).map(|i| store.log_leaf(i).unwrap().unwrap().1).collect();
        assert_eq!(leaves, (0..=batch.len() as u64).collect::<Vec<_>>());
    }

    /// An event of the log's right edge removed behind arbiter's back: the
    /// store opens (its reads say what is missing), and appends are refused.
    #[test]
    fn a_store_missing_an_event_of_its_right_edge_opens_and_refuses_appends() {
        let (_dir, store, (e0, _)) = with_first_event();
        let batch = events_after(&e0, 2);
        store.append_batch("g", &batch).unwrap();
        store.applier.caught_up(None);
        store.tree("g").unwrap().remove(key(2)).unwrap();
        let at = closed_durably(store);

        let store = SledStore::open(&at).unwrap();
        assert_eq!(store.head("g").unwrap(), Some(batch[0].0.link()));
        let (e2, b2) = &batch[1];
        let refused = store.append("g", e2, b2).unwrap_err().to_string();
        assert!(refused.contains("lost part of its log") && refused.contains("nothing can be appended"), "{refused}");
        assert_eq!(store.head("g").unwrap(), Some(batch[0].0.link()));
    }

    /// A crash within an undo (the position removed, not yet the leaf):
    /// the next open finishes it.
    #[test]
    fn an_open_finishes_an_undo_cut_short() {
        let (_dir, store, (e0, _)) = with_first_event();
        let cut = events_after(&e0, 1);
        let entries = entries_of(&store, &cut);
        let (leaf_k, leaf_v) = &entries.before[0];
        store.log.insert(leaf_k.as_slice(), leaf_v.as_slice()).unwrap();
        let at = closed_durably(store);
        let store = SledStore::open(&at).unwrap();
        assert_eq!(store.log_size().unwrap(), 1);
        assert_eq!(store.log_leaf(1).unwrap(), None);
        store.append("g", &cut[0].0, &cut[0].1).unwrap();
        assert_eq!(store.log_position("g", 1).unwrap(), Some(1));
    }

    /// A log tree with neither a layout nor a size (its first building cut
    /// short, or a store from before the log) is built again, whole.
    #[test]
    fn a_log_whose_building_was_cut_short_is_built_again() {
        let dir = tempfile::tempdir().unwrap();
        let store = SledStore::open(dir.path()).unwrap();
        let mut leaves = Vec::new();
        for game in ["b", "a"] {
            let (e0, b0) = sealed(None);
            store.append(game, &e0, &b0).unwrap();
            let batch = events_after(&e0, 20);
            store.append_batch(game, &batch).unwrap();
            leaves.push((game, std::iter::once((e0, b0)).chain(batch).collect::<Vec<_>>()));
        }
        // The log as a cut-short first building leaves it: game "a" only,
        // and no layout.
        store.applier.caught_up(None);
        store.log.clear().unwrap();
        let mut frontier = Frontier::default();
        let a = &leaves[1].1;
        let entries = log_entries(&mut frontier, "a", a.iter().map(|(e, b)| (e.seq, leaf_hash(b))));
        for (k, v) in entries.before.into_iter().chain(entries.after) {
            store.log.insert(k, v).unwrap();
        }
        let at = closed_durably(store);

        let store = SledStore::open(&at).unwrap();
        assert_eq!(store.log_size().unwrap(), 42);
        let mut tree = MemoryTree::default();
        for (_, events) in leaves.iter().rev() {
            for (_, b) in events {
                tree.push(leaf_hash(b));
            }
        }
        assert_eq!(crate::tlog::merkle::root(&super::super::LogNodes(&store), 42).unwrap(), tree.root());
        assert_eq!(store.log_leaf(21).unwrap(), Some(("b".to_string(), 0)));
    }

    /// A log of a layout this arbiter does not know is refused, unwritten.
    #[test]
    fn a_log_of_a_newer_layout_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = SledStore::open(dir.path()).unwrap();
        store.log.insert(LAYOUT_KEY, &[3u8][..]).unwrap();
        let at = closed_durably(store);
        let why = match SledStore::open(&at) {
            Err(OpenError::Lost(why)) => why,
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("a newer layout opened"),
        };
        assert!(why.contains("newer arbiter"), "{why}");
    }
}
