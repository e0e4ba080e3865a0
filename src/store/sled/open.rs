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
/// (flock, as std's `File::try_lock` on Linux). Asked only when this process's sled does not hold it (after
/// sled failed to open, or was closed); the probe's own lock, if it gets
/// one, ends when the file closes.
pub(super) fn held_by_another_process(db: &Path) -> bool {
    let Ok(file) = File::open(db) else { return false };
    matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock))
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

/// How many snapshots one open sets aside before it gives up: sled keeps
/// one, and a crash may leave one `.generating` beside it.
const MOST_SET_ASIDE: usize = 4;

/// Where an open puts the sled snapshots it sets aside, inside the store's
/// directory (sled reads only files named `snap.*` in the directory itself).
pub const SET_ASIDE_DIR: &str = "set-aside";

/// A sled snapshot that an open set aside because sled refused the store
/// with it (a snapshot a crash cut short, or a changed byte).
#[derive(Debug, Clone)]
pub struct SetAside {
    pub file: PathBuf,
    pub to: PathBuf,
}

/// The snapshot sled reads, as it picks it (pagecache/snapshot.rs,
/// `read_snapshot`): of the files named `snap.*` in `dir` but
/// `*.in___motion`, the greatest name.
fn newest_snapshot(dir: &Path) -> std::io::Result<Option<PathBuf>> {
    let mut newest: Option<String> = None;
    for entry in std::fs::read_dir(dir)? {
        let Ok(name) = entry?.file_name().into_string() else { continue };
        if name.starts_with("snap.") && !name.ends_with(".in___motion") && newest.as_ref().is_none_or(|n| name > *n) {
            newest = Some(name);
        }
    }
    Ok(newest.map(|n| dir.join(n)))
}

/// Moves the snapshot sled reads into `SET_ASIDE_DIR`, under a name no
/// earlier one has; none: there is no snapshot to blame.
fn set_aside_snapshot(dir: &Path) -> std::io::Result<Option<SetAside>> {
    let Some(file) = newest_snapshot(dir)? else { return Ok(None) };
    let into = dir.join(SET_ASIDE_DIR);
    std::fs::create_dir_all(&into)?;
    let name = file.file_name().unwrap_or_default().to_string_lossy().into_owned();
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let mut to = into.join(format!("{name}.{secs}"));
    let mut n = 1;
    while to.exists() {
        to = into.join(format!("{name}.{secs}-{n}"));
        n += 1;
    }
    std::fs::rename(&file, &to)?;
    // The rename must last: else a crash brings the snapshot back.
    for d in [dir, into.as_path()] {
        if let Ok(d) = File::open(d) {
            let _ = d.sync_all();
        }
    }
    Ok(Some(SetAside { file, to }))
}

/// sled refused the store at `dir` as damaged: which file, what arbiter
/// knows of what it held without sled (the checkpoints and the journal,
/// read from their own files), and what to do.
pub(super) fn sled_damaged(dir: &Path, at: Option<sled::DiskPtr>, set_aside: &[SetAside]) -> String {
    let file = match at {
        Some(at) => format!("{} (sled's log, at {at:?})", dir.join("db").display()),
        None if set_aside.is_empty() => format!("{} or its snapshot", dir.join("db").display()),
        None => format!(
            "{} (without its snapshots, set aside in {})",
            dir.join("db").display(),
            dir.join(SET_ASIDE_DIR).display()
        ),
    };
    let signed = match crate::store::checkpoints::read(dir) {
        Ok(records) => match records.last().map(|r| r.checkpoint()) {
            None => "it signed no checkpoint".to_string(),
            Some(Ok(c)) => {
                let games: std::collections::BTreeMap<&str, u64> =
                    records.iter().flat_map(|r| r.heads.iter().map(|(g, (seq, _))| (g.as_str(), *seq))).collect();
                let games: Vec<String> = games.iter().map(|(g, seq)| format!("{g} to seq {seq}")).collect();
                format!("its newest checkpoint signed {} events of the log ({})", c.size, games.join(", "))
            }
            Some(Err(e)) => format!("its newest checkpoint cannot be read ({e})"),
        },
        Err(e) => format!("its checkpoints cannot be read ({e})"),
    };
    let journaled = match journal::read_files(dir) {
        Ok(files) => {
            let events: usize =
                [&files.older, &files.newer].iter().flat_map(|r| r.records.iter()).map(|(_, e)| e.len()).sum();
            format!("its journal holds {events} events acknowledged since sled's last sync")
        }
        Err(e) => format!("its journal cannot be read ({e})"),
    };
    format!(
        "the store at {} is damaged: sled cannot read {file}: {signed}; {journaled}. Restore the store from a backup, or make a new one from exports (`arbiter import`) or bundles, and check it against the checkpoints you kept",
        dir.display()
    )
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
        let mut set_aside = Vec::new();
        let db = loop {
            let before = opening.as_ref().and_then(|_| Before::note(dir));
            let e = match open_sled(dir) {
                Ok(db) => break db,
                Err(e) => e,
            };
            if let Some(before) = &before {
                before.undo(dir);
            }
            // A snapshot sled refuses is its cache of where pages lie in
            // `db`, not data: set aside (never removed), sled recovers from
            // `db` alone, and the checks below still compare what it
            // recovered with the journal and the checkpoints.
            if let sled::Error::Corruption { at: None, .. } = e
                && set_aside.len() < MOST_SET_ASIDE
            {
                match set_aside_snapshot(dir) {
                    Ok(Some(s)) => {
                        set_aside.push(s);
                        continue;
                    }
                    Ok(None) => {}
                    Err(why) => {
                        drop(opening);
                        return Err(OpenError::Io {
                            dir: shown,
                            why: format!("sled refuses its snapshot, which cannot be set aside: {why}"),
                        });
                    }
                }
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
            } else if let sled::Error::Corruption { at, .. } = &e {
                OpenError::Lost(sled_damaged(dir, *at, &set_aside))
            } else {
                OpenError::Io { dir: shown, why: e.to_string() }
            });
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
            set_aside,
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

    /// The sled snapshots this open set aside (sled refused the store with
    /// them), for the caller to say so.
    pub fn set_aside(&self) -> &[SetAside] {
        &self.set_aside
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
