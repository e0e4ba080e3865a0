//! The embedded default store, on sled 0.34.
//!
//! Layout: one sled tree per game, named `game/<name>`, key = seq as 8
//! big-endian bytes (so key order is seq order), value = the event's exact
//! canonical JSON bytes, the bytes that were hashed. A game exists when its
//! tree holds event 0.
//!
//! Write path (see ARCHITECTURE.md): check seq and prev against the tree's
//! last entry, `compare_and_swap(key, None, bytes)` so that two writers of
//! the same seq cannot both succeed (no fork), `flush()`, then `fdatasync`
//! on sled's log file. sled's own flush ends in `sync_file_range`, which
//! does not promise durability against power loss; the `sync_data` call
//! here does. Only then does `append` return Ok.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use sled::Transactional;
use sled::transaction::TransactionError;

use super::{AppendError, Events, Head, OpenError, ReadError, Store};
use crate::event::{Event, Link, check_link, decode};
use crate::tlog::merkle::{Frontier, Hash, leaf_hash};

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

/// sled's page cache (its default is 1 GiB): a long read, such as replaying
/// a 100,000-event game, keeps at most this much of the store in memory.
const CACHE_BYTES: u64 = 32 * 1024 * 1024;

pub struct SledStore {
    db: sled::Db,
    dir: PathBuf,
    /// sled's log file, kept open so each durable append is one fdatasync.
    log_file: File,
    /// Group commit. Every insert takes a ticket once it is in sled's
    /// memory (`written`); a sync covers every ticket taken before it began
    /// and records the highest in `durable`. An append whose ticket is
    /// already covered returns without syncing: concurrent appends (of any
    /// games) share one flush and one fdatasync instead of queueing one each.
    written: AtomicU64,
    /// The highest ticket known durable; the lock also serialises syncs.
    sync: Mutex<u64>,
    /// How many syncs were made (for tests and the benchmark).
    syncs: AtomicU64,
    /// The `log` tree.
    log: sled::Tree,
    /// The right edge of the log's tree; its mutex serialises every insert
    /// of events (see `insert`).
    frontier: Mutex<Frontier>,
}

/// Whether another process holds the exclusive lock sled takes on `db`
/// (flock). Asked only after sled failed to open, so this process does not
/// hold it; the probe's own lock, if it gets one, ends when the file closes.
fn held_by_another_process(db: &Path) -> bool {
    use std::os::fd::AsRawFd;
    let Ok(file) = File::open(db) else { return false };
    // SAFETY: flock on a descriptor this function owns for its whole call.
    let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    locked != 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::WouldBlock
}

impl SledStore {
    pub fn open(dir: &Path) -> Result<SledStore, OpenError> {
        let shown = dir.display().to_string();
        let db = sled::Config::new().path(dir).segment_size(SEGMENT_SIZE).cache_capacity(CACHE_BYTES).open().map_err(
            |e| {
                // sled takes an exclusive lock on `db` and reports another holder only
                // in words; another process holding it is a state to explain, not an
                // I/O failure, so ask the lock itself.
                if held_by_another_process(&dir.join("db")) {
                    OpenError::InUse { dir: shown.clone() }
                } else {
                    OpenError::Io { dir: shown.clone(), why: e.to_string() }
                }
            },
        )?;
        let log = File::open(dir.join("db")).map_err(|e| OpenError::Io { dir: shown.clone(), why: e.to_string() })?;
        // The directory entry of a new store must be durable too.
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        let io = |e: sled::Error| OpenError::Io { dir: shown.clone(), why: e.to_string() };
        let log_tree = db.open_tree(LOG_TREE).map_err(io)?;
        let size = match log_tree.get(SIZE_KEY).map_err(io)? {
            Some(v) => Some(u64::from_be_bytes(v.as_ref().try_into().map_err(|_| {
                OpenError::Lost(format!("the store at {shown} is damaged: its log size is not 8 bytes"))
            })?)),
            None => None,
        };
        let mut store = SledStore {
            db,
            dir: dir.to_path_buf(),
            log_file: log,
            written: AtomicU64::new(0),
            sync: Mutex::new(0),
            syncs: AtomicU64::new(0),
            log: log_tree,
            frontier: Mutex::new(Frontier::default()),
        };
        match size {
            Some(size) => {
                let frontier = Frontier::load(&super::LogNodes(&store), size)
                    .map_err(|e| OpenError::Lost(format!("the store at {shown} has lost part of its log: {e}")))?;
                store.frontier = Mutex::new(frontier);
            }
            None => store.build_log().map_err(|why| OpenError::Io { dir: shown.clone(), why })?,
        }
        // Never open a store that holds less than its last checkpoint.
        super::checkpoints::check(&store, dir)?;
        Ok(store)
    }

    /// The store's directory (where its checkpoints are kept).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn tree(&self, game: &str) -> Result<sled::Tree, String> {
        self.db.open_tree(format!("{TREE_PREFIX}{game}")).map_err(|e| e.to_string())
    }

    fn existing_tree(&self, game: &str) -> Result<sled::Tree, ReadError> {
        let name = format!("{TREE_PREFIX}{game}");
        let exists = self.db.tree_names().iter().any(|n| n.as_ref() == name.as_bytes());
        if !exists {
            return Err(ReadError::NoSuchGame(game.to_string()));
        }
        let tree = self.tree(game).map_err(ReadError::Io)?;
        if tree.is_empty() {
            return Err(ReadError::NoSuchGame(game.to_string()));
        }
        Ok(tree)
    }

    /// How many durable syncs this store has made since it was opened.
    pub fn syncs(&self) -> u64 {
        self.syncs.load(Ordering::Relaxed)
    }

    /// Takes a ticket for an insert that is now in sled's memory.
    fn ticket(&self) -> u64 {
        self.written.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Makes the insert with `ticket` durable: if a sync that began after
    /// it has already finished, nothing to do; else this caller syncs
    /// everything written so far (its own insert and any others').
    fn make_durable(&self, ticket: u64) -> Result<(), AppendError> {
        let mut durable = self.sync.lock().unwrap_or_else(|p| p.into_inner());
        if *durable >= ticket {
            return Ok(());
        }
        // Every ticket up to `covers` was taken after its insert finished,
        // so the flush below includes all of them.
        let covers = self.written.load(Ordering::SeqCst);
        self.sync_now()?;
        *durable = covers;
        Ok(())
    }

    /// sled flush, then fdatasync of its log file (and of any blob file,
    /// which sled never syncs).
    fn sync_now(&self) -> Result<(), AppendError> {
        self.syncs.fetch_add(1, Ordering::Relaxed);
        self.db.flush().map_err(|e| AppendError::Io(format!("flush failed: {e}")))?;
        self.log_file.sync_data().map_err(|e| AppendError::Io(format!("fdatasync failed: {e}")))?;
        let blobs = self.dir.join("blobs");
        if let Ok(entries) = std::fs::read_dir(&blobs) {
            let mut any = false;
            for entry in entries.flatten() {
                any = true;
                File::open(entry.path())
                    .and_then(|f| f.sync_data())
                    .map_err(|e| AppendError::Io(format!("sync of blob failed: {e}")))?;
            }
            if any {
                File::open(&blobs)
                    .and_then(|f| f.sync_all())
                    .map_err(|e| AppendError::Io(format!("sync of blobs dir failed: {e}")))?;
            }
        }
        Ok(())
    }
}

fn key(seq: u64) -> [u8; 8] {
    seq.to_be_bytes()
}

fn decode_stored(seq: u64, bytes: &[u8]) -> Result<Event, ReadError> {
    let corrupt = |why| ReadError::Corrupt { seq, why };
    let text =
        std::str::from_utf8(bytes).map_err(|_| corrupt(crate::event::EventError::Malformed("not UTF-8".into())))?;
    let (event, canonical) = decode(text).map_err(corrupt)?;
    if canonical != bytes {
        return Err(corrupt(crate::event::EventError::Malformed("stored bytes are not canonical".into())));
    }
    if event.seq != seq {
        return Err(corrupt(crate::event::EventError::Seq { expected: seq, found: event.seq }));
    }
    Ok(event)
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
        last_link(&tree)
    }

    fn read(&self, game: &str, from: u64) -> Result<Events<'_>, ReadError> {
        let tree = self.existing_tree(game)?;
        // The first event read links to the one before it: fetch that link.
        let mut prev: Option<Link> = match from.checked_sub(1) {
            None => None,
            Some(p) => match tree.get(key(p)).map_err(|e| ReadError::Io(e.to_string()))? {
                Some(bytes) => Some(decode_stored(p, &bytes)?.link()),
                None => return Ok(Box::new(std::iter::empty())),
            },
        };
        let iter = tree.range(key(from)..).map(move |item| {
            let (k, v) = item.map_err(|e| ReadError::Io(e.to_string()))?;
            let seq = u64::from_be_bytes(k.as_ref().try_into().map_err(|_| ReadError::Io("bad key".into()))?);
            let event = decode_stored(seq, &v)?;
            check_link(&event, prev.as_ref()).map_err(|why| ReadError::Corrupt { seq, why })?;
            prev = Some(event.link());
            Ok(event)
        });
        Ok(Box::new(iter))
    }

    fn append(&self, game: &str, event: &Event, bytes: &[u8]) -> Result<(), AppendError> {
        self.insert(game, &[(event.clone(), bytes.to_vec())])?;
        self.make_durable(self.ticket())
    }

    fn append_batch(&self, game: &str, events: &[(Event, Vec<u8>)]) -> Result<(), AppendError> {
        self.insert(game, events)?;
        self.make_durable(self.ticket())
    }

    fn log_size(&self) -> Result<u64, ReadError> {
        Ok(self.frontier.lock().unwrap_or_else(|p| p.into_inner()).size())
    }

    fn log_node(&self, level: u8, index: u64) -> Result<Hash, ReadError> {
        let broken = || ReadError::Log(format!("subtree {index} at level {level} is missing or damaged"));
        let value = self.log.get(node_key(level, index)).map_err(|e| ReadError::Io(e.to_string()))?;
        value.and_then(|v| v.as_ref().try_into().ok()).ok_or_else(broken)
    }

    fn log_leaf(&self, index: u64) -> Result<Option<(String, u64)>, ReadError> {
        let Some(v) = self.log.get(leaf_key(index)).map_err(|e| ReadError::Io(e.to_string()))? else {
            return Ok(None);
        };
        let broken = || ReadError::Log(format!("leaf {index} is damaged"));
        let seq = u64::from_be_bytes(v.get(..8).ok_or_else(broken)?.try_into().map_err(|_| broken())?);
        let game = std::str::from_utf8(&v[8..]).map_err(|_| broken())?;
        Ok(Some((game.to_string(), seq)))
    }

    fn log_position(&self, game: &str, seq: u64) -> Result<Option<u64>, ReadError> {
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

    fn setting(&self, key: &str) -> Result<Option<Vec<u8>>, ReadError> {
        let tree = self.db.open_tree(SETTINGS_TREE).map_err(|e| ReadError::Io(e.to_string()))?;
        Ok(tree.get(key.as_bytes()).map_err(|e| ReadError::Io(e.to_string()))?.map(|v| v.to_vec()))
    }

    fn settings(&self, prefix: &str) -> Result<Vec<(String, Vec<u8>)>, ReadError> {
        let tree = self.db.open_tree(SETTINGS_TREE).map_err(|e| ReadError::Io(e.to_string()))?;
        let mut out = Vec::new();
        for item in tree.scan_prefix(prefix.as_bytes()) {
            let (k, v) = item.map_err(|e| ReadError::Io(e.to_string()))?;
            out.push((String::from_utf8_lossy(&k).into_owned(), v.to_vec()));
        }
        Ok(out)
    }

    fn put_setting(&self, key: &str, value: &[u8]) -> Result<(), AppendError> {
        let tree = self.db.open_tree(SETTINGS_TREE).map_err(|e| AppendError::Io(e.to_string()))?;
        tree.insert(key.as_bytes(), value).map_err(|e| AppendError::Io(e.to_string()))?;
        self.make_durable(self.ticket())
    }
}

impl SledStore {
    /// Checks and stores `events` (in order, all of one game) with their
    /// leaves of the log, in one sled transaction: all or none, not yet
    /// durable. The log's mutex is held from reading the head to the commit,
    /// so positions in the log are given in the order events are stored,
    /// with no gap, and a seq is never taken twice (no fork).
    fn insert(&self, game: &str, events: &[(Event, Vec<u8>)]) -> Result<(), AppendError> {
        let Some((first, _)) = events.first() else { return Ok(()) };
        // On the way in: the bytes must be exactly each event, hash intact.
        for (event, bytes) in events {
            let (decoded, canonical) =
                decode(std::str::from_utf8(bytes).map_err(|_| AppendError::Io("not UTF-8".into()))?)?;
            if &decoded != event || canonical != *bytes {
                return Err(AppendError::Io("event and bytes disagree".into()));
            }
        }
        let tree = self.tree(game).map_err(AppendError::Io)?;
        let mut frontier = self.frontier.lock().unwrap_or_else(|p| p.into_inner());
        let head = last_link(&tree).map_err(|e| AppendError::Io(e.to_string()))?;
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
            check_link(event, prev.as_ref())?;
            prev = Some(event.link());
        }
        // The leaves, and every subtree they complete.
        let mut grown = frontier.clone();
        let mut log: Vec<(Vec<u8>, Vec<u8>)> = Vec::with_capacity(events.len() * 4 + 1);
        for (event, bytes) in events {
            let index = grown.size();
            for (level, i, hash) in grown.push(leaf_hash(bytes)) {
                log.push((node_key(level, i).to_vec(), hash.to_vec()));
            }
            let mut leaf = event.seq.to_be_bytes().to_vec();
            leaf.extend_from_slice(game.as_bytes());
            log.push((leaf_key(index).to_vec(), leaf));
            log.push((position_key(game, event.seq), index.to_be_bytes().to_vec()));
        }
        log.push((SIZE_KEY.to_vec(), grown.size().to_be_bytes().to_vec()));
        let trees = [tree, self.log.clone()];
        let committed = trees[..].transaction(|t| {
            // The head was read under the log's mutex, which every append
            // holds; this check only restates the no-fork rule at the commit.
            if t[0].get(key(first.seq))?.is_some() {
                return sled::transaction::abort(());
            }
            for (event, bytes) in events {
                t[0].insert(&key(event.seq), bytes.as_slice())?;
            }
            for (k, v) in &log {
                t[1].insert(k.as_slice(), v.as_slice())?;
            }
            Ok(())
        });
        match committed {
            Ok(()) => {
                *frontier = grown;
                Ok(())
            }
            Err(TransactionError::Abort(())) => {
                let head = self.head(game).map_err(|e| AppendError::Io(e.to_string()))?;
                let next = head.as_ref().map_or(0, |h| h.seq + 1);
                Err(AppendError::Conflict { expected: first.seq, next, head })
            }
            Err(TransactionError::Storage(e)) => Err(AppendError::Io(e.to_string())),
        }
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
                let index = frontier.size();
                for (level, i, hash) in frontier.push(leaf_hash(&bytes)) {
                    log.insert(&node_key(level, i), &hash);
                }
                let mut leaf = event.seq.to_be_bytes().to_vec();
                leaf.extend_from_slice(game.as_bytes());
                log.insert(&leaf_key(index), leaf);
                log.insert(position_key(&game, event.seq), &index.to_be_bytes());
            }
            log.insert(SIZE_KEY, &frontier.size().to_be_bytes());
            self.log.apply_batch(log).map_err(|e| e.to_string())?;
        }
        if self.log.get(SIZE_KEY).map_err(|e| e.to_string())?.is_none() {
            self.log.insert(SIZE_KEY, &0u64.to_be_bytes()).map_err(|e| e.to_string())?;
        }
        drop(frontier);
        self.make_durable(self.ticket()).map_err(|e| e.to_string())
    }
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

// Keys of the `log` tree: complete subtrees, leaves, positions, the size.
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

const SIZE_KEY: &[u8] = b"size";

#[cfg(test)]
mod tests {
    use super::*;

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
}
