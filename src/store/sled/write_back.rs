//! Write-back: what was inserted since sled's last sync, held in memory
//! (`Unsynced`), written into sled in one transaction; sled's own sync
//! (its flush on a thread of its own, with a deadline, then `fdatasync` of
//! its file and of any blob file); and the sync of sled's that runs behind
//! a rotation of the journal.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use sled::Transactional;

use super::keys::node_key;
use super::{Failure, SledStore};
use crate::event::Link;
use crate::store::chunk;
use crate::store::journal::Journal;
use crate::tlog::merkle::{Frontier, Hash};

/// The sync of sled's that a rotation of the journal leaves to run behind
/// its round (`SledStore::write_back_behind`): the rotation it lets go of.
/// Dropped without running, the journal's older file stays until the
/// next sync of sled's in a round (the next rotation's fallback, a large
/// batch, the store's close), and an open after a crash replays it:
/// nothing is lost.
#[must_use]
#[derive(Debug, Clone, Copy)]
pub(super) struct Behind {
    pub(super) rotation: u64,
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
pub(super) struct Unsynced {
    pub(super) frontier: Frontier,
    /// The head of each game this process inserted to: what the next
    /// insert to it must follow. (Else the head is read from sled.)
    pub(super) heads: HashMap<String, Link>,
    /// The chunks of each game changed since the last write-back.
    pub(super) games: HashMap<String, GameChunks>,
    /// The leaf chunks changed since the last write-back.
    pub(super) leaves: BTreeMap<u64, Arc<chunk::Leaves>>,
    /// The subtrees at `STORED_LEVEL` and above completed since.
    pub(super) nodes: BTreeMap<(u8, u64), Hash>,
    /// About how many bytes the chunks here hold: past `UNSYNCED_LIMIT`,
    /// the next insert asks for sled's own sync (a chunk read in to be
    /// added to may be far larger than the event the journal records).
    pub(super) held: usize,
}

/// How much `Unsynced` may hold before an insert asks for sled's own sync.
pub(super) const UNSYNCED_LIMIT: usize = 64 * 1024 * 1024;

/// A game's changed chunks, by number, and its tree to write them to.
pub(super) struct GameChunks {
    pub(super) tree: sled::Tree,
    pub(super) chunks: BTreeMap<u64, Arc<chunk::Events>>,
}

impl Unsynced {
    /// Whether nothing waits for a write-back.
    pub(super) fn is_clean(&self) -> bool {
        self.games.is_empty() && self.leaves.is_empty() && self.nodes.is_empty()
    }
}

/// A game's chunks, by number.
pub(super) type Chunks = Vec<(u64, Arc<chunk::Events>)>;

/// What one write-back writes: Arcs of the chunks as they were taken, so
/// that those not changed since are known (`Arc::ptr_eq`) and forgotten.
pub(super) struct WriteBack {
    pub(super) games: Vec<(String, sled::Tree, Chunks)>,
    pub(super) leaves: Vec<(u64, Arc<chunk::Leaves>)>,
    pub(super) nodes: Vec<((u8, u64), Hash)>,
}

/// What a flush answers: sled's result, once it returns.
pub(super) type Flushed = std::sync::mpsc::Receiver<sled::Result<usize>>;

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
pub(super) struct Flusher {
    pub(super) requests: Option<std::sync::mpsc::Sender<(sled::Db, std::sync::mpsc::SyncSender<sled::Result<usize>>)>>,
}

impl Flusher {
    /// Asks for a flush of `db`; the answer comes on the receiver.
    pub(super) fn flush(&mut self, db: &sled::Db) -> Result<Flushed, Failure> {
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

/// The mtime of `blobs/` at the last listing of it, when that mtime can be
/// trusted to change with the next file sled adds: a file system stamps
/// times from a clock that ticks every few milliseconds, so a file added
/// in the same tick as the mtime seen leaves it as it was. An mtime at
/// least `TRUSTED_AGE` older than the listing is safe: any later change
/// stamps a later time. (A store's `blobs/` is made when the store is,
/// and then never changes.)
#[derive(Debug, Default)]
pub(super) struct BlobsSeen {
    pub(super) trusted: Option<std::time::SystemTime>,
    /// How many times the directory was listed (for tests).
    pub(super) listings: u64,
}

impl BlobsSeen {
    pub(super) const TRUSTED_AGE: Duration = Duration::from_secs(1);

    pub(super) fn old_enough(mtime: std::time::SystemTime, now: std::time::SystemTime) -> bool {
        now.duration_since(mtime).is_ok_and(|age| age >= Self::TRUSTED_AGE)
    }
}

/// Syncs every file in sled's `blobs` directory, and the directory itself
/// if it holds any: sled never syncs them.
pub(super) fn sync_blob_files(blobs: &Path) -> std::io::Result<()> {
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
pub(super) fn probe_write(dir: &Path) -> std::io::Result<()> {
    use std::io::Write;
    let path = dir.join("sync-probe");
    let written = File::create(&path).and_then(|mut f| f.write_all(b"\n").and_then(|()| f.sync_data()));
    let _ = std::fs::remove_file(&path);
    written
}

impl SledStore {
    /// The sync of sled's owed to a rotation of the journal (`Behind`):
    /// every insert so far written into sled, then the journal's older
    /// file removed; nothing, if a later sync of sled's (a round's, which
    /// empties both files) has seen to it. It runs with no lock of the
    /// commit held, so appends go on through the journal's new file
    /// meanwhile. A failed sync fails the store (what the journal
    /// acknowledged stays in its files, for the next open), and the next
    /// append sees it.
    pub(super) fn write_back_behind(&self, behind: Behind) {
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
    pub(super) fn flush_within(&self, deadline: Duration) -> Result<(), Failure> {
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

    /// Writes every chunk and subtree inserted since the last write-back
    /// into sled, in one transaction: sled recovers it all or none, so
    /// after a crash sled holds the store as of one of its syncs, and the
    /// journal what was acknowledged since (see the module's comment).
    /// What it wrote stays readable in memory until it is in sled, then
    /// is forgotten, unless an insert changed it meanwhile.
    pub(super) fn write_back(&self) -> Result<(), Failure> {
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
    pub(super) fn sync_now(&self) -> Result<(), Failure> {
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
    pub(super) fn sync_blobs(&self) -> Result<(), Failure> {
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
