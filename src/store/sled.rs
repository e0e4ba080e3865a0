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

use super::{AppendError, Events, Head, OpenError, ReadError, Store};
use crate::event::{Event, Link, check_link, decode};

const TREE_PREFIX: &str = "game/";

/// The tree of settings (hashed tokens, read access), apart from the games.
const SETTINGS_TREE: &str = "settings";

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
    log: File,
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
        Ok(SledStore {
            db,
            dir: dir.to_path_buf(),
            log,
            written: AtomicU64::new(0),
            sync: Mutex::new(0),
            syncs: AtomicU64::new(0),
        })
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
        self.log.sync_data().map_err(|e| AppendError::Io(format!("fdatasync failed: {e}")))?;
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
        match tree.last().map_err(|e| ReadError::Io(e.to_string()))? {
            None => Ok(None),
            Some((k, v)) => {
                let seq = u64::from_be_bytes(k.as_ref().try_into().map_err(|_| ReadError::Io("bad key".into()))?);
                Ok(Some(decode_stored(seq, &v)?.link()))
            }
        }
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
        self.insert(game, event, bytes)?;
        self.make_durable(self.ticket())
    }

    fn append_batch(&self, game: &str, events: &[(Event, Vec<u8>)]) -> Result<(), AppendError> {
        let mut result = Ok(());
        for (event, bytes) in events {
            result = self.insert(game, event, bytes);
            if result.is_err() {
                break;
            }
        }
        // What was inserted is made durable even when a later event failed,
        // as the trait promises (a valid prefix may be stored).
        self.make_durable(self.ticket())?;
        result
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
    /// Checks and inserts one event (not yet durable).
    fn insert(&self, game: &str, event: &Event, bytes: &[u8]) -> Result<(), AppendError> {
        // On the way in: the bytes must be exactly this event, hash intact.
        let (decoded, canonical) =
            decode(std::str::from_utf8(bytes).map_err(|_| AppendError::Io("not UTF-8".into()))?)?;
        if &decoded != event || canonical != bytes {
            return Err(AppendError::Io("event and bytes disagree".into()));
        }
        let tree = self.tree(game).map_err(AppendError::Io)?;
        let head = match tree.last().map_err(|e| AppendError::Io(e.to_string()))? {
            None => None,
            Some((k, v)) => {
                let seq = u64::from_be_bytes(k.as_ref().try_into().map_err(|_| AppendError::Io("bad key".into()))?);
                Some(decode_stored(seq, &v).map_err(|e| AppendError::Io(e.to_string()))?.link())
            }
        };
        let next = head.as_ref().map_or(0, |h| h.seq + 1);
        if event.seq != next {
            if event.seq == 0 {
                return Err(AppendError::Exists(game.to_string()));
            }
            if head.is_none() {
                return Err(AppendError::NoSuchGame(game.to_string()));
            }
            return Err(AppendError::Conflict { expected: event.seq, next, head });
        }
        check_link(event, head.as_ref())?;
        // Insert only if no one has taken this seq since we read the head.
        let swapped = tree
            .compare_and_swap(key(event.seq), None as Option<&[u8]>, Some(bytes))
            .map_err(|e| AppendError::Io(e.to_string()))?;
        if swapped.is_err() {
            let head = self.head(game).map_err(|e| AppendError::Io(e.to_string()))?;
            let next = head.as_ref().map_or(0, |h| h.seq + 1);
            if event.seq == 0 {
                return Err(AppendError::Exists(game.to_string()));
            }
            return Err(AppendError::Conflict { expected: event.seq, next, head });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sync_covers_every_insert_that_took_its_ticket_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = SledStore::open(dir.path()).unwrap();
        let (first, second) = (store.ticket(), store.ticket());
        store.make_durable(second).unwrap();
        assert_eq!(store.syncs(), 1);
        // The first insert's appender arrives late: the sync for the second covered it.
        store.make_durable(first).unwrap();
        assert_eq!(store.syncs(), 1, "no second fdatasync for an insert already durable");
        let third = store.ticket();
        store.make_durable(third).unwrap();
        assert_eq!(store.syncs(), 2, "an insert after the last sync needs a sync of its own");
    }
}
