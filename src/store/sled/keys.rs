//! The log's keys and their reads: the layout (`LAYOUT`), where a game's
//! events, the log's leaves and its subtrees are kept, and the reads of
//! them (memory first, then sled), including a game's head and a scan of
//! its events.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::SledStore;
use crate::event::{Event, Link};
use crate::store::chunk::{self, EVENTS_PER_CHUNK, LEAVES_PER_CHUNK};
use crate::store::{ReadError, StoredEvents, decode_parsed};
use crate::tlog::merkle::{Hash, node_hash};

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
pub(super) const SCAN_TOUCHES: usize = 2;

/// Asks sled for `key` of `tree` `times` times, only so that its cache
/// pages out what a scan is done with (see `SCAN_TOUCHES`). What it
/// answers was read already: an error here is the read's to report.
pub(super) fn touch(tree: &sled::Tree, key: &[u8], times: usize) {
    for _ in 0..times {
        let _ = tree.get(key);
    }
}

/// The log's size as sled holds it: the last leaf chunk's first index
/// plus its leaves.
pub(super) fn stored_size(log: &sled::Tree) -> Result<u64, ReadError> {
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

// Keys of the `log` tree: complete subtrees (leaf chunks: `chunk::leaves_key`).
pub(super) fn node_key(level: u8, index: u64) -> [u8; 10] {
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
pub(super) const LAYOUT_KEY: &[u8] = b"format";

pub(super) const LAYOUT: &[u8] = &[4];

/// Subtrees at this level and above are stored; those below (at most 32
/// leaves) are computed from one leaf chunk.
pub(super) const STORED_LEVEL: u8 = 6;

pub(super) fn decode_stored(seq: u64, bytes: &[u8]) -> Result<Event, ReadError> {
    Ok(decode_parsed(seq, bytes)?.event)
}

impl SledStore {
    /// Chunk `c` of `game`: as inserted, if a write-back has not written
    /// it yet; else as sled holds it. (A chunk a write-back forgets is in
    /// sled by then, so no read finds it in neither.)
    pub(super) fn events_chunk(
        &self,
        game: &str,
        tree: &sled::Tree,
        c: u64,
    ) -> Result<Option<Arc<chunk::Events>>, ReadError> {
        let unsynced = self.unsynced.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(chunk) = unsynced.games.get(game).and_then(|g| g.chunks.get(&c)) {
            return Ok(Some(chunk.clone()));
        }
        drop(unsynced);
        Ok(self.stored_events_chunk(game, tree, c)?.map(Arc::new))
    }

    /// Leaf chunk `c`, as `events_chunk` finds a game's.
    pub(super) fn leaves_chunk(&self, c: u64) -> Result<Option<Arc<chunk::Leaves>>, ReadError> {
        if let Some(chunk) = self.unsynced.lock().unwrap_or_else(|p| p.into_inner()).leaves.get(&c) {
            return Ok(Some(chunk.clone()));
        }
        Ok(self.stored_leaves_chunk(c)?.map(Arc::new))
    }

    /// Event `seq` of `game`: its index in the log and its stored bytes.
    pub(super) fn stored_event(
        &self,
        game: &str,
        tree: &sled::Tree,
        seq: u64,
    ) -> Result<Option<(u64, Vec<u8>)>, ReadError> {
        let (c, i) = chunk::event_place(seq);
        let Some(chunk) = self.events_chunk(game, tree, c)? else { return Ok(None) };
        Ok(chunk.get(i).map(|(index, bytes)| (index, bytes.to_vec())))
    }

    /// The last event of `game` that a read may return: the last stored,
    /// or in a failed store the last whose index in the log is below the
    /// durable size (indexes are given in the order events are inserted,
    /// so those after it are the ones the failed sync did not cover).
    pub(super) fn last_event(&self, game: &str, tree: &sled::Tree) -> Result<Option<(u64, Vec<u8>)>, ReadError> {
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
    pub(super) fn durable_head(&self, game: &str, tree: &sled::Tree) -> Result<Option<Link>, ReadError> {
        match self.last_event(game, tree)? {
            None => Ok(None),
            Some((seq, bytes)) => Ok(Some(decode_stored(seq, &bytes)?.link())),
        }
    }

    /// The stored events of `game` from `from`, unchecked, each with its
    /// seq: chunk after chunk, to the game's end when the read began (a
    /// chunk not full is its last), or in a failed store to the last
    /// durable event.
    pub(super) fn stored_range(&self, game: &str, tree: sled::Tree, from: u64) -> StoredEvents<'_> {
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

    /// Chunk `c` of `game` as sled holds it (see `events_chunk` for what
    /// memory holds).
    pub(super) fn stored_events_chunk(
        &self,
        game: &str,
        tree: &sled::Tree,
        c: u64,
    ) -> Result<Option<chunk::Events>, ReadError> {
        let Some(v) = tree.get(chunk::events_key(c)).map_err(|e| ReadError::Io(e.to_string()))? else {
            return Ok(None);
        };
        chunk::Events::decode(v.to_vec()).map(Some).map_err(|e| {
            ReadError::Log(format!("{game}'s events from seq {} are damaged: {}", c * EVENTS_PER_CHUNK, e.0))
        })
    }

    /// Leaf chunk `c` as sled holds it (see `leaves_chunk`).
    pub(super) fn stored_leaves_chunk(&self, c: u64) -> Result<Option<chunk::Leaves>, ReadError> {
        let Some(v) = self.log.get(chunk::leaves_key(c)).map_err(|e| ReadError::Io(e.to_string()))? else {
            return Ok(None);
        };
        chunk::Leaves::decode(&v)
            .map(Some)
            .map_err(|e| ReadError::Log(format!("the log's leaves from {} are damaged: {}", c * LEAVES_PER_CHUNK, e.0)))
    }

    /// The hash of the complete subtree `index` at `level`, below
    /// `STORED_LEVEL`: computed from its leaves' hashes, which one leaf
    /// chunk holds (2^level divides `LEAVES_PER_CHUNK`).
    pub(super) fn computed_node(&self, level: u8, index: u64) -> Result<Hash, ReadError> {
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
