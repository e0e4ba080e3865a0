//! Opening a sled store: sled's own open (and who holds its lock), the
//! checks of the layout and against the newest checkpoint, the journal put
//! back (`super::replay`), reading from a copy when the store cannot be
//! written, and closing so that it can be opened again.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use super::commit::{Commit, Written};
use super::keys::{LAYOUT, LAYOUT_KEY, stored_size};
use super::{CACHE_BYTES, FLUSH_EVERY_MS, LOG_TREE, SEGMENT_SIZE, SETTINGS_TREE, SledStore, TREE_PREFIX};
use crate::store::dir::{self, Before, Opening};
use crate::store::journal::{self, Journal};
use crate::store::{OpenError, ReadError, Store};
use crate::tlog::merkle::Frontier;

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
pub(super) fn open_sled(dir: &Path) -> sled::Result<sled::Db> {
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
pub(super) fn held_by_another_process(db: &Path) -> bool {
    use std::os::fd::AsRawFd;
    let Ok(file) = File::open(db) else { return false };
    // SAFETY: flock on a descriptor this function owns for its whole call.
    let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    locked != 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::WouldBlock
}

/// A store not new and not of layout 4: what its log says of its layout
/// (`LAYOUT_KEY`; none at all in a store from before arbiter kept a log,
/// and a log without the key is layout 1's).
pub(super) fn earlier_layout(shown: &str, layout: Option<&[u8]>, has_log: bool) -> OpenError {
    let found = match (has_log, layout) {
        (false, _) => "no log (it was written before arbiter kept one)".to_string(),
        (true, None) => "a log of layout 1".to_string(),
        (true, Some([n])) => format!("a log of layout {n}"),
        (true, Some(other)) => format!("a log of layout {other:?} (a conversion cut short)"),
    };
    OpenError::Layout { dir: shown.to_string(), found }
}

/// The store at `shown` fails a check of its own: damage, not I/O.
pub(super) fn damaged(shown: &str, why: impl std::fmt::Display) -> OpenError {
    OpenError::Lost(format!("the store at {shown} is damaged: {why}"))
}

/// A read of an open that failed: an I/O error is one; anything else is
/// damage, said as `why` says it.
pub(super) fn read_failure(shown: &str, e: ReadError, why: impl FnOnce(ReadError) -> String) -> OpenError {
    match e {
        ReadError::Io(io) => OpenError::Io { dir: shown.to_string(), why: io },
        e => damaged(shown, why(e)),
    }
}

/// A write of an open (completing or undoing the newest insert) that
/// failed: the store cannot be written there, or another I/O error.
pub(super) fn write_error(shown: &str, e: &sled::Error) -> OpenError {
    match e {
        sled::Error::Io(io) if dir::is_unwritable(io) => {
            OpenError::Unwritable { dir: shown.to_string(), why: io.to_string() }
        }
        _ => OpenError::Io { dir: shown.to_string(), why: e.to_string() },
    }
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
                Some(t) => t.get(crate::store::checkpoints::SIGNED_SETTING).map_err(io)?.is_some(),
                None => false,
            };
            let records = crate::store::checkpoints::read(dir).map_err(|e| OpenError::Lost(e.to_string()))?;
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
        if let Err(e) = crate::store::checkpoints::check(&store)
            && !(journaled.bytes() > 0 && store.journal_may_explain(&adds, size))
        {
            return Err(e);
        }
        // The right edge's subtrees below `STORED_LEVEL` are computed from
        // the leaves. If one is missing or changed (behind arbiter's back:
        // checked against the checkpoint above), the store still opens, for
        // the reads and `verify` that say which event; only an append,
        // which needs the edge, is refused.
        match Frontier::load(&crate::store::LogNodes(&store), size) {
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
        crate::store::checkpoints::check(&store)?;
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
                    failures.push(e.to_string());
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

    /// Why the log's newest leaf does not match its event, if it does not:
    /// the event is not stored at its seq, or is stored at another index.
    /// (Only a change behind arbiter's back makes one: sled writes a
    /// chunk and its leaves in one transaction.)
    pub(super) fn newest_event_missing(&self) -> Result<Option<String>, ReadError> {
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
}
