//! Layout 4's values: many events, or many leaves of the log, to one sled
//! key (see `super::sled`, `LAYOUT`).
//!
//! Why: sled's costs follow its keys. With one key per event (and two more
//! per event for the log), a sled sync at 64 tables cost three times what
//! the same events cost 64 to a key (`benches/serve.rs`, last line of the
//! 64-table rows), and sled's open held 37 MB per million keys.
//!
//! A game's chunk `c` holds its events `c * EVENTS_PER_CHUNK ..` in seq order,
//! each with its place in the log: the seq is the chunk's first plus the
//! entry's place in it, so no seq is stored. A leaf chunk `c` holds the
//! log's leaves `c * LEAVES_PER_CHUNK ..`: each leaf's game, seq and hash,
//! so that a subtree of up to `LEAVES_PER_CHUNK` leaves is computed from
//! one chunk.
//!
//! Every decode checks lengths: a value changed behind arbiter's back is
//! `Damaged`, never a panic or a read past its end.

use crate::limits::{MAX_EVENT_BYTES, MAX_GAME_NAME_BYTES};
use crate::tlog::merkle::Hash;

/// Events to one key. sled keeps about one leaf node in memory for each
/// of the 256 shards of its cache whatever the cache's capacity (see
/// `super::sled::SCAN_TOUCHES`), and a leaf node holds up to 17 keys: the
/// events to a key bound what a scan holds. 8 events of at most
/// `MAX_EVENT_BYTES` make at most 128 KiB + 96 bytes; a node of them
/// stays below sled's blob threshold (a quarter of a segment, see
/// `super::sled::SEGMENT_SIZE`) unless nearly every event in it is close
/// to the largest. (Layout 3 put 64 to a key: a whole verify of 1,000,000
/// events then held about 43 MB of sled's nodes.)
pub const EVENTS_PER_CHUNK: u64 = 8;

/// Leaves of the log to one key: a subtree of up to 64 leaves is computed
/// from one chunk (`super::sled::STORED_LEVEL`). A leaf is at most 105
/// bytes, and only proofs read them, one chunk at a time.
pub const LEAVES_PER_CHUNK: u64 = 64;

/// The chunk that holds a game's event `seq`, and its place in it.
pub fn event_place(seq: u64) -> (u64, usize) {
    (seq / EVENTS_PER_CHUNK, (seq % EVENTS_PER_CHUNK) as usize)
}

/// The chunk that holds the log's leaf `index`, and its place in it.
pub fn leaf_place(index: u64) -> (u64, usize) {
    (index / LEAVES_PER_CHUNK, (index % LEAVES_PER_CHUNK) as usize)
}

/// The first byte of an events chunk's key (layout 4).
pub const EVENTS_KIND: u8 = b'e';

/// The first byte of a leaf chunk's key, in the `log` tree.
pub const LEAVES_KIND: u8 = b'L';

/// The key of a game's chunk `c`, in its tree: `EVENTS_KIND` then `c`,
/// big-endian, so key order is seq order.
pub fn events_key(c: u64) -> [u8; 9] {
    kind_key(EVENTS_KIND, c)
}

/// The key of leaf chunk `c`, in the `log` tree: 'L' then `c`, big-endian.
pub fn leaves_key(c: u64) -> [u8; 9] {
    kind_key(LEAVES_KIND, c)
}

/// `kind` then `c`, big-endian.
pub fn kind_key(kind: u8, c: u64) -> [u8; 9] {
    let mut k = [kind; 9];
    k[1..].copy_from_slice(&c.to_be_bytes());
    k
}

/// The chunk number in a key of `kind_key`'s form.
pub fn number(key: &[u8], kind: u8) -> Option<u64> {
    match key {
        [k, rest @ ..] if *k == kind && rest.len() == 8 => Some(u64::from_be_bytes(rest.try_into().ok()?)),
        _ => None,
    }
}

/// A value that fails its own lengths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damaged(pub String);

/// A game's chunk: entries of (index in the log: u64, length: u32, the
/// event's stored bytes), big-endian.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Events {
    bytes: Vec<u8>,
    /// Where each entry starts in `bytes`.
    starts: Vec<u32>,
}

const EVENT_HEAD: usize = 8 + 4;

impl Events {
    /// Decodes a stored chunk, checking every length.
    pub fn decode(bytes: Vec<u8>) -> Result<Events, Damaged> {
        Events::decode_up_to(bytes, EVENTS_PER_CHUNK)
    }

    fn decode_up_to(bytes: Vec<u8>, most: u64) -> Result<Events, Damaged> {
        let mut starts = Vec::new();
        let mut at = 0;
        while at < bytes.len() {
            let head = bytes.get(at..at + EVENT_HEAD).ok_or_else(|| Damaged("an event's entry is cut short".into()))?;
            let len = u32::from_be_bytes(head[8..].try_into().expect("4 bytes")) as usize;
            if len == 0 || len > MAX_EVENT_BYTES {
                return Err(Damaged(format!("an event's entry gives a length of {len} bytes")));
            }
            if bytes.len() < at + EVENT_HEAD + len {
                return Err(Damaged("an event's bytes are cut short".into()));
            }
            if starts.len() as u64 == most {
                return Err(Damaged(format!("more than {most} events")));
            }
            starts.push(at as u32);
            at += EVENT_HEAD + len;
        }
        Ok(Events { bytes, starts })
    }

    pub fn len(&self) -> usize {
        self.starts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    pub fn is_full(&self) -> bool {
        self.starts.len() as u64 == EVENTS_PER_CHUNK
    }

    /// Entry `i`: the event's index in the log, and its stored bytes.
    pub fn get(&self, i: usize) -> Option<(u64, &[u8])> {
        let at = *self.starts.get(i)? as usize;
        let index = u64::from_be_bytes(self.bytes[at..at + 8].try_into().expect("8 bytes"));
        let len = u32::from_be_bytes(self.bytes[at + 8..at + EVENT_HEAD].try_into().expect("4 bytes")) as usize;
        Some((index, &self.bytes[at + EVENT_HEAD..at + EVENT_HEAD + len]))
    }

    /// Adds the next event (the caller keeps seq order and `EVENTS_PER_CHUNK`).
    pub fn push(&mut self, index: u64, event: &[u8]) {
        debug_assert!(!self.is_full(), "a full chunk takes no more events");
        self.starts.push(self.bytes.len() as u32);
        self.bytes.extend_from_slice(&index.to_be_bytes());
        self.bytes.extend_from_slice(&(event.len() as u32).to_be_bytes());
        self.bytes.extend_from_slice(event);
    }

    /// The value stored under the chunk's key.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Every entry, copied (for tools and tests that change a chunk).
    pub fn entries(&self) -> Vec<(u64, Vec<u8>)> {
        (0..self.len()).filter_map(|i| self.get(i)).map(|(index, bytes)| (index, bytes.to_vec())).collect()
    }
}

/// A leaf chunk: entries of (seq: u64, with `CONTINUES` set when the leaf
/// continues the insert of the leaf before it; the leaf's hash: 32 bytes;
/// the game's name: a u8 length, then its bytes).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Leaves {
    leaves: Vec<Leaf>,
}

/// One leaf of the log: which event it is, and its hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leaf {
    pub game: String,
    pub seq: u64,
    /// It continues the insert of the leaf before it (a batch's later events).
    pub continues: bool,
    pub hash: Hash,
}

/// A leaf's seq with this bit set continues the insert of the leaf before
/// it. (A seq never reaches it: `limits::MAX_STREAM_EVENTS`.)
const CONTINUES: u64 = 1 << 63;

impl Leaves {
    pub fn decode(bytes: &[u8]) -> Result<Leaves, Damaged> {
        let mut leaves = Vec::new();
        let mut rest = bytes;
        while !rest.is_empty() {
            let cut = || Damaged("a leaf's entry is cut short".into());
            let marked = u64::from_be_bytes(rest.get(..8).ok_or_else(cut)?.try_into().expect("8 bytes"));
            let hash: Hash = rest.get(8..40).ok_or_else(cut)?.try_into().expect("32 bytes");
            let len = *rest.get(40).ok_or_else(cut)? as usize;
            let name = rest.get(41..41 + len).ok_or_else(cut)?;
            let game = std::str::from_utf8(name)
                .ok()
                .filter(|g| !g.is_empty() && g.len() <= MAX_GAME_NAME_BYTES)
                .ok_or_else(|| Damaged("a leaf's game name is damaged".into()))?;
            if leaves.len() as u64 == LEAVES_PER_CHUNK {
                return Err(Damaged(format!("more than {LEAVES_PER_CHUNK} leaves")));
            }
            leaves.push(Leaf {
                game: game.to_string(),
                seq: marked & !CONTINUES,
                continues: marked & CONTINUES != 0,
                hash,
            });
            rest = &rest[41 + len..];
        }
        Ok(Leaves { leaves })
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.leaves.len() * 60);
        for leaf in &self.leaves {
            let marked = if leaf.continues { leaf.seq | CONTINUES } else { leaf.seq };
            out.extend_from_slice(&marked.to_be_bytes());
            out.extend_from_slice(&leaf.hash);
            out.push(leaf.game.len() as u8);
            out.extend_from_slice(leaf.game.as_bytes());
        }
        out
    }

    pub fn len(&self) -> usize {
        self.leaves.len()
    }

    pub fn is_empty(&self) -> bool {
        self.leaves.is_empty()
    }

    pub fn is_full(&self) -> bool {
        self.leaves.len() as u64 == LEAVES_PER_CHUNK
    }

    pub fn get(&self, i: usize) -> Option<&Leaf> {
        self.leaves.get(i)
    }

    pub fn hashes(&self) -> impl Iterator<Item = &Hash> {
        self.leaves.iter().map(|l| &l.hash)
    }

    /// Adds the next leaf (the caller keeps `LEAVES_PER_CHUNK`).
    pub fn push(&mut self, leaf: Leaf) {
        debug_assert!(!self.is_full(), "a full chunk takes no more leaves");
        debug_assert!(leaf.game.len() <= MAX_GAME_NAME_BYTES && leaf.seq & CONTINUES == 0);
        self.leaves.push(leaf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_events_chunk_reads_back_what_was_pushed_and_refuses_any_cut() {
        let mut chunk = Events::default();
        chunk.push(7, b"{\"a\":1}");
        chunk.push(9, b"{}");
        let stored = chunk.bytes().to_vec();
        let read = Events::decode(stored.clone()).unwrap();
        assert_eq!(read, chunk);
        assert_eq!(read.get(0), Some((7, &b"{\"a\":1}"[..])));
        assert_eq!(read.get(1), Some((9, &b"{}"[..])));
        assert_eq!(read.get(2), None);
        for cut in 1..stored.len() {
            if cut == EVENT_HEAD + 7 {
                continue; // a whole first entry
            }
            assert!(Events::decode(stored[..cut].to_vec()).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn a_leaves_chunk_reads_back_what_was_pushed_and_refuses_any_cut() {
        let mut chunk = Leaves::default();
        chunk.push(Leaf { game: "g".into(), seq: 3, continues: false, hash: [1; 32] });
        chunk.push(Leaf { game: "other".into(), seq: 0, continues: true, hash: [2; 32] });
        let stored = chunk.encode();
        assert_eq!(Leaves::decode(&stored).unwrap(), chunk);
        for cut in 1..stored.len() {
            if cut == 42 {
                continue; // a whole first entry
            }
            assert!(Leaves::decode(&stored[..cut]).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn a_chunk_holds_at_most_per_chunk_entries() {
        let mut chunk = Events::default();
        for i in 0..EVENTS_PER_CHUNK {
            chunk.push(i, b"{}");
        }
        assert!(chunk.is_full());
        let mut more = chunk.bytes().to_vec();
        more.extend_from_slice(&Events { bytes: Vec::new(), starts: Vec::new() }.bytes);
        more.extend_from_slice(&0u64.to_be_bytes());
        more.extend_from_slice(&2u32.to_be_bytes());
        more.extend_from_slice(b"{}");
        assert!(Events::decode(more).is_err());
        assert_eq!(event_place(130), (16, 2));
        assert_eq!(leaf_place(130), (2, 2));
    }
}
