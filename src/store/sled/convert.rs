//! A store of an earlier layout is converted to layout 4 at its first open
//! by this arbiter (`SledStore::open`), in place: layout 4's keys are
//! added beside the old ones, and nothing is removed or changed, so a
//! conversion cut short (a crash, a full disk) is simply made again at the
//! next open, from the same keys, to the same result.
//!
//! The layout key is written first as `[4, N]` (being converted from
//! layout N; 0: no log), and synced: from then on an earlier arbiter
//! refuses the store ("written by a newer arbiter"), since its reads would
//! stumble on layout 4's keys. It is written `[4]` last, after sled's own
//! sync of everything else. An open that finds `[4, N]` converts again
//! (and one that finds `[3, N]`, a conversion to layout 3 cut short by an
//! earlier arbiter, converts from layout N to layout 4).
//!
//! The conversion comes before the open's check against the newest
//! checkpoint (which reads layout 4): a store that lost signed events is
//! converted, then reported. Its old keys are kept as they were. A verb
//! that only reads converts a store it can write, like any open.
//!
//! The old keys stay where they are, never read again. Removing them
//! would free sled's segments, which sled 0.34 then writes zeros over at
//! every open (measured when layout 1's keys were removed: 150 MB written
//! by every open of a 113,000-event store). `arbiter copy` to a new
//! directory makes a store of layout 4's keys alone.
//!
//! What each earlier layout gives the conversion:
//! - layout 3: the same log (its leaf chunks and subtrees are layout 4's),
//!   and each game's events 64 to a key ('c' and the chunk's number):
//!   they are written again 8 to a key (`chunk::EVENTS_PER_CHUNK`), each
//!   with its index in the log, byte for byte. Every chunk is read and
//!   checked before the marker is written: a chunk that fails its own
//!   lengths, or a gap, leaves the store as it was (layout 3, which an
//!   earlier arbiter still opens), and the open says which game and seq.
//! - layout 2: each event under its seq (8 bytes) in its game's tree, and
//!   the log's leaves in order (`l` and the index: seq, with bit 63 set when
//!   the leaf continues an insert, then the game). Its newest insert may
//!   have been cut short by a crash before its event was stored (one
//!   event's insert wrote its leaf first): that leaf is left out, as
//!   layout 2's open undid it (the insert was never acknowledged, or the
//!   journal, replayed after the conversion, puts it back).
//! - layout 1: as layout 2, once its own journal (its newest insert's
//!   writes, in one key) is redone, as layout 2's open did first.
//! - a store written before arbiter kept a log (or whose first building of
//!   its log was cut short): every game in name order, each in seq order,
//!   as that log was built.

use std::collections::HashMap;
use std::path::Path;

use super::{
    LAYOUT, LAYOUT_KEY, LOG_TREE, STORED_LEVEL, TREE_PREFIX, damaged, node_key, sync_blob_files, touch, write_error,
};
use crate::store::OpenError;
use crate::store::chunk::{self, EVENTS_PER_CHUNK, LEAVES_PER_CHUNK};
use crate::tlog::merkle::{Frontier, leaf_hash};

/// Events converted between two writes of sled batches: bounds the memory
/// a conversion holds (chunks are kept until full, one per game).
const BATCH_EVENTS: u64 = 4096;

/// A leaf's seq with this bit set continues the insert before it (layouts 1 and 2).
const CONTINUES: u64 = 1 << 63;

// Layout 1's keys of the `log` tree: its size, and its journal (one sled
// insert holding every write of the newest insert, stored before them).
const LAYOUT_1_SIZE_KEY: &[u8] = b"size";
const LAYOUT_1_JOURNAL_KEY: &[u8] = b"journal";

/// Which tree a layout-1 journaled write goes to.
const TO_GAME: u8 = 0;
const TO_LOG: u8 = 1;

/// Converts the store in `db`, of `layout` (None: layout 1, or no log).
/// Fails, with the store as it was but for layout 4's keys added, when an
/// event its log names is missing (other than a newest insert cut short)
/// or its events have a gap: nothing is guessed. (From layout 3, such a
/// store is found before anything is written.)
pub(super) fn convert(
    db: &sled::Db,
    dir: &Path,
    shown: &str,
    layout: Option<&[u8]>,
    had_log: bool,
) -> Result<(), OpenError> {
    let io = |e: sled::Error| write_error(shown, &e);
    let log = db.open_tree(LOG_TREE).map_err(io)?;
    // Which layout it was: from the marker of a conversion cut short (to
    // layout 4, or to layout 3 by an earlier arbiter), or as found. The
    // marker is written (and synced) before any of layout 4's keys, so
    // that an earlier arbiter refuses a store it would no longer read (its
    // reads stumble on layout 4's keys).
    let from = match layout {
        Some([4, from]) if *from <= 3 => *from,
        Some([3, from]) if *from <= 2 => *from,
        Some([3]) => 3,
        Some([2]) => 2,
        None if had_log && log.contains_key(LAYOUT_1_SIZE_KEY).map_err(io)? => 1,
        None => 0,
        Some(other) => return Err(damaged(shown, format!("its log has an unknown layout {other:?}"))),
    };
    // Layout 3's chunks are all checked before the marker is written.
    let layout_3 = if from == 3 { Some(layout_3_games(db, shown)?) } else { None };
    log.insert(LAYOUT_KEY, &[LAYOUT[0], from][..]).map_err(io)?;
    sync(db, dir).map_err(io)?;
    if let Some(games) = layout_3 {
        return rechunk(db, dir, &log, &games).map_err(io);
    }
    let layout_1 = from == 1;
    if layout_1 {
        redo_layout_1_journal(db, &log).map_err(io)?.map_err(|why| damaged(shown, why))?;
    }
    let mut into = Converting::new(db, dir, log.clone());
    if from >= 1 {
        let first = leaf_key(0);
        let mut leaves = log.range(first..=leaf_key(u64::MAX)).peekable();
        while let Some(item) = leaves.next() {
            let (k, v) = item.map_err(io)?;
            let index = u64::from_be_bytes(k[1..].try_into().map_err(|_| damaged(shown, "a leaf's key is damaged"))?);
            let (game, seq, continues) =
                parse_leaf(&v).ok_or_else(|| damaged(shown, format!("leaf {index} of its log is damaged")))?;
            if index != into.frontier.size() {
                return Err(damaged(shown, format!("leaf {} of its log is missing", into.frontier.size())));
            }
            let name = format!("{TREE_PREFIX}{game}");
            let stored = match db.tree_names().iter().any(|n| n.as_ref() == name.as_bytes()) {
                true => db.open_tree(&name).map_err(io)?.get(seq.to_be_bytes()).map_err(io)?,
                false => None,
            };
            match stored {
                Some(bytes) => into.push(&game, seq, continues, &bytes).map_err(|why| damaged(shown, why))?,
                // Layout 2 wrote one event's leaf before its event: a crash
                // between left this, undone by its open (see the module's
                // comment).
                None if leaves.peek().is_none() && !continues => break,
                None => {
                    return Err(damaged(
                        shown,
                        format!("{game} seq {seq}, leaf {index} of its log, is missing: it cannot be converted"),
                    ));
                }
            }
        }
    } else {
        let mut games: Vec<String> = db
            .tree_names()
            .iter()
            .filter_map(|n| std::str::from_utf8(n).ok()?.strip_prefix(TREE_PREFIX).map(str::to_string))
            .collect();
        games.sort();
        for game in games {
            let tree = db.open_tree(format!("{TREE_PREFIX}{game}")).map_err(io)?;
            for item in tree.iter() {
                let (k, bytes) = item.map_err(io)?;
                // Layout 3's and 4's own keys (nine bytes), from a conversion cut short, are not events.
                let Ok(seq) = <[u8; 8]>::try_from(k.as_ref()).map(u64::from_be_bytes) else { continue };
                into.push(&game, seq, false, &bytes).map_err(|why| damaged(shown, why))?;
            }
        }
    }
    into.finish().map_err(io)
}

/// Each game's tree, its layout-3 chunks all read and checked: every
/// chunk decodes, and chunk c begins at seq c * 64 (so none is missing,
/// and none before the last is short: layout 3 wrote a chunk whole, and
/// the next only once it was full). Reads only: a store that fails is
/// left as it was.
fn layout_3_games(db: &sled::Db, shown: &str) -> Result<Vec<sled::Tree>, OpenError> {
    let io = |e: sled::Error| write_error(shown, &e);
    let mut games = Vec::new();
    for name in db.tree_names() {
        let Some(game) = std::str::from_utf8(&name).ok().and_then(|n| n.strip_prefix(TREE_PREFIX)) else { continue };
        let tree = db.open_tree(&name).map_err(io)?;
        let mut events = 0u64;
        for item in layout_3_chunks(&tree) {
            let (c, value) = item.map_err(io)?;
            let damaged_at =
                |why: &str| damaged(shown, format!("{game}'s events from seq {events} {why}: it cannot be converted"));
            // Chunk c begins at seq c * 64: else a chunk before it is
            // missing, or one is short of events.
            if c.checked_mul(chunk::LAYOUT_3_EVENTS_PER_CHUNK) != Some(events) {
                return Err(damaged_at("are missing"));
            }
            let stored = chunk::Events::decode_layout_3(value.to_vec())
                .map_err(|e| damaged_at(&format!("are damaged ({})", e.0)))?;
            events += stored.len() as u64;
        }
        games.push(tree);
    }
    Ok(games)
}

/// Layout 3's events chunks of a game's tree, in seq order: each with its
/// number. Each is asked for again `LAYOUT_3_TOUCHES` times, as layout 3's
/// scans did (see `super::SCAN_TOUCHES`): else sled's cache pages out
/// almost nothing, and converting 1,000,000 events peaked at 375 MB.
pub(super) fn layout_3_chunks(tree: &sled::Tree) -> impl Iterator<Item = sled::Result<(u64, sled::IVec)>> {
    let kind = chunk::LAYOUT_3_EVENTS_KIND;
    let touched = tree.clone();
    tree.range(chunk::kind_key(kind, 0)..=chunk::kind_key(kind, u64::MAX)).map(move |item| {
        let (k, v) = item?;
        touch(&touched, &k, LAYOUT_3_TOUCHES);
        Ok((chunk::number(&k, kind).expect("a key of the range"), v))
    })
}

/// See `layout_3_chunks`.
const LAYOUT_3_TOUCHES: usize = 8;

/// Writes each game's events (checked by `layout_3_games`) again, 8 to a
/// key, then syncs sled, writes the layout key, and syncs again. The log's
/// leaves and subtrees are layout 4's already.
fn rechunk(db: &sled::Db, dir: &Path, log: &sled::Tree, games: &[sled::Tree]) -> sled::Result<()> {
    for tree in games {
        let mut batch = sled::Batch::default();
        let mut into = chunk::Events::default();
        let mut seq = 0u64;
        for item in layout_3_chunks(tree) {
            let (_, value) = item?;
            let stored = chunk::Events::decode_layout_3(value.to_vec()).expect("checked by layout_3_games");
            for i in 0..stored.len() {
                let (index, bytes) = stored.get(i).expect("within the chunk");
                into.push(index, bytes);
                seq += 1;
                if into.is_full() {
                    batch.insert(chunk::events_key((seq - 1) / EVENTS_PER_CHUNK).to_vec(), into.bytes());
                    into = chunk::Events::default();
                }
            }
            if seq.is_multiple_of(BATCH_EVENTS) {
                tree.apply_batch(std::mem::take(&mut batch))?;
            }
        }
        if !into.is_empty() {
            batch.insert(chunk::events_key((seq - 1) / EVENTS_PER_CHUNK).to_vec(), into.bytes());
        }
        tree.apply_batch(batch)?;
    }
    sync(db, dir)?;
    log.insert(LAYOUT_KEY, LAYOUT)?;
    sync(db, dir)
}

/// sled's flush, then what it leaves out (see `SledStore::sync_now`): its
/// flush ends in `sync_file_range`, which does not promise durability
/// against power loss, so its log file is fdatasynced; and it never syncs
/// its blobs. Else the layout key written last could be durable before
/// the keys it stands for.
fn sync(db: &sled::Db, dir: &Path) -> sled::Result<()> {
    db.flush()?;
    std::fs::File::open(dir.join("db"))?.sync_data()?;
    sync_blob_files(&dir.join("blobs"))?;
    Ok(())
}

/// Layout 4's keys, as a conversion builds them: each game's chunk not
/// yet full, the leaf chunk not yet full, the log's frontier, and the
/// writes not yet given to sled.
struct Converting<'a> {
    db: &'a sled::Db,
    dir: &'a Path,
    log: sled::Tree,
    frontier: Frontier,
    games: HashMap<String, Game>,
    leaves: chunk::Leaves,
    log_batch: sled::Batch,
}

/// A game being converted: its tree, its chunk not yet full, its next
/// seq, and its writes not yet given to sled.
struct Game {
    tree: sled::Tree,
    chunk: chunk::Events,
    next: u64,
    batch: sled::Batch,
}

impl<'a> Converting<'a> {
    fn new(db: &'a sled::Db, dir: &'a Path, log: sled::Tree) -> Converting<'a> {
        Converting {
            db,
            dir,
            log,
            frontier: Frontier::default(),
            games: HashMap::new(),
            leaves: chunk::Leaves::default(),
            log_batch: sled::Batch::default(),
        }
    }

    /// Adds the log's next leaf and its event; why not, if its seq does
    /// not follow its game's last.
    fn push(&mut self, game: &str, seq: u64, continues: bool, bytes: &[u8]) -> Result<(), String> {
        if !self.games.contains_key(game) {
            let tree = self.db.open_tree(format!("{TREE_PREFIX}{game}")).map_err(|e| e.to_string())?;
            let new = Game { tree, chunk: chunk::Events::default(), next: 0, batch: sled::Batch::default() };
            self.games.insert(game.to_string(), new);
        }
        let kept = self.games.get_mut(game).expect("added above");
        if seq != kept.next {
            return Err(format!("{game} seq {} is missing (seq {seq} comes after it)", kept.next));
        }
        let index = self.frontier.size();
        let hash = leaf_hash(bytes);
        for (level, i, node) in self.frontier.push(hash) {
            if level >= STORED_LEVEL {
                self.log_batch.insert(node_key(level, i).to_vec(), node.to_vec());
            }
        }
        kept.chunk.push(index, bytes);
        kept.next += 1;
        if kept.chunk.is_full() {
            let full = std::mem::take(&mut kept.chunk);
            kept.batch.insert(chunk::events_key(seq / EVENTS_PER_CHUNK).to_vec(), full.bytes());
        }
        self.leaves.push(chunk::Leaf { game: game.to_string(), seq, continues, hash });
        if self.leaves.is_full() {
            let full = std::mem::take(&mut self.leaves);
            self.log_batch.insert(chunk::leaves_key(index / LEAVES_PER_CHUNK).to_vec(), full.encode());
        }
        if self.frontier.size().is_multiple_of(BATCH_EVENTS) {
            self.apply().map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Gives sled the writes made so far.
    fn apply(&mut self) -> sled::Result<()> {
        for kept in self.games.values_mut() {
            kept.tree.apply_batch(std::mem::take(&mut kept.batch))?;
        }
        self.log.apply_batch(std::mem::take(&mut self.log_batch))
    }

    /// Writes the chunks not yet full, syncs sled, then writes the layout
    /// key and syncs again: the store is of layout 4 from then on.
    fn finish(mut self) -> sled::Result<()> {
        for kept in self.games.values_mut() {
            if !kept.chunk.is_empty() {
                let c = (kept.next - 1) / EVENTS_PER_CHUNK;
                kept.batch.insert(chunk::events_key(c).to_vec(), kept.chunk.bytes());
            }
        }
        if !self.leaves.is_empty() {
            let c = (self.frontier.size() - 1) / LEAVES_PER_CHUNK;
            self.log_batch.insert(chunk::leaves_key(c).to_vec(), self.leaves.encode());
        }
        self.apply()?;
        sync(self.db, self.dir)?;
        self.log.insert(LAYOUT_KEY, LAYOUT)?;
        sync(self.db, self.dir)
    }
}

fn leaf_key(index: u64) -> [u8; 9] {
    let mut k = [b'l'; 9];
    k[1..].copy_from_slice(&index.to_be_bytes());
    k
}

/// A layout-2 leaf's value: (game, seq, whether it continues the insert before it).
fn parse_leaf(v: &[u8]) -> Option<(String, u64, bool)> {
    let marked = u64::from_be_bytes(v.get(..8)?.try_into().ok()?);
    let game = std::str::from_utf8(&v[8..]).ok()?;
    Some((game.to_string(), marked & !CONTINUES, marked & CONTINUES != 0))
}

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
