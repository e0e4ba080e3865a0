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
//!
//! The files: `open` (opening, its checks, closing), `commit` (an insert
//! and the group commit's rounds), `write_back` (memory into sled, and
//! sled's own sync), `replay` (the journal put back at open), `keys` (the
//! layout, its keys and their reads), `snapshots`, and `kept` (settings
//! read from memory).

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};

mod commit;
mod kept;
mod keys;
mod open;
mod replay;
mod snapshots;
#[cfg(test)]
mod tests;
mod write_back;

use self::commit::{Commit, Round};
use self::keys::{STORED_LEVEL, decode_stored, node_key};
use self::write_back::{BlobsSeen, Flusher, Unsynced};
use super::chunk;
use super::dir;
use super::journal::Journal;
use super::{AppendError, Durable, Events, Head, ReadError, Store, StoredEvents, SyncWatcher, Ticket, decode_parsed};
use crate::event::{Chain, Event, Link, Parsed};
use crate::tlog::merkle::Hash;

pub use self::open::{Copied, SetAside};

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
    /// sled's snapshots this open set aside (`open::set_aside_snapshot`),
    /// for the caller to say so.
    set_aside: Vec<open::SetAside>,
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

    fn checkpoints(&self) -> Result<Vec<super::checkpoints::Record>, super::checkpoints::CheckpointsError> {
        super::checkpoints::read(&self.dir)
    }

    /// One process holds a sled store, and it signs one checkpoint at a
    /// time (`checkpoints::sign`), each larger than the last.
    fn keep_checkpoint(&self, record: &super::checkpoints::Record) -> Result<bool, super::checkpoints::KeepError> {
        let size = record.checkpoint()?.size;
        super::checkpoints::append(&self.dir, record)?;
        self.put_setting(super::checkpoints::SIGNED_SETTING, &size.to_be_bytes()).map_err(|why| {
            super::checkpoints::KeepError::SizeNotRecorded { size, place: self.checkpoints_place(), why }
        })?;
        Ok(true)
    }

    fn checkpoints_place(&self) -> String {
        format!("the checkpoint file {}", self.dir.join(super::checkpoints::CHECKPOINT_FILE).display())
    }

    fn home(&self) -> Option<&Path> {
        Some(&self.dir)
    }

    fn is_a_copy(&self) -> bool {
        self.copy.is_some()
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

    fn tree(&self, game: &str) -> sled::Result<sled::Tree> {
        self.db.open_tree(format!("{TREE_PREFIX}{game}"))
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
                let tree = self.tree(game).map_err(|e| ReadError::Io(e.to_string()))?;
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
}
