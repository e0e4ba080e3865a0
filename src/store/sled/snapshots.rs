//! Snapshots (`crate::fold::Folder::snapshot`): a cache beside the games
//! in the `snapshots` tree, each in parts of at most 64 KiB.

use super::SledStore;
use crate::store::{AppendError, ReadError};

/// The tree of snapshots (`crate::fold::Folder::snapshot`), a cache beside
/// the games: key game NUL seq part (big-endian), value a part of the
/// snapshot's bytes.
pub(super) const SNAPSHOT_TREE: &str = "snapshots";

/// A snapshot is stored in parts of at most this size: a sled node larger
/// than a quarter of a segment becomes a blob file (see `SEGMENT_SIZE`),
/// and a leaf of 16 such parts stays well below it.
pub(super) const SNAPSHOT_PART_BYTES: usize = 64 * 1024;

pub(super) fn snapshot_key(game: &str, seq: u64, part: u32) -> Vec<u8> {
    let mut k = snapshot_prefix(game);
    k.extend_from_slice(&seq.to_be_bytes());
    k.extend_from_slice(&part.to_be_bytes());
    k
}

pub(super) fn snapshot_prefix(game: &str) -> Vec<u8> {
    let mut k = game.as_bytes().to_vec();
    k.push(0);
    k
}

/// The seq in a snapshot part's key.
pub(super) fn snapshot_seq(prefix: &[u8], key: &[u8]) -> Option<u64> {
    key.get(prefix.len()..prefix.len() + 8)?.try_into().ok().map(u64::from_be_bytes)
}

impl SledStore {
    /// The snapshot tree if it exists: a store that only reads never makes it.
    pub(super) fn snapshot_tree(&self) -> sled::Result<Option<sled::Tree>> {
        if !self.db.tree_names().iter().any(|n| n.as_ref() == SNAPSHOT_TREE.as_bytes()) {
            return Ok(None);
        }
        self.db.open_tree(SNAPSHOT_TREE).map(Some)
    }

    /// A failed store gives no snapshot: the event one follows may not be durable.
    pub(super) fn latest_snapshot(&self, game: &str, seq: u64) -> Result<Option<(u64, Vec<u8>)>, ReadError> {
        if self.failure().is_some() {
            return Ok(None);
        }
        let io = |e: sled::Error| ReadError::Io(e.to_string());
        let Some(tree) = self.snapshot_tree().map_err(|e| ReadError::Io(e.to_string()))? else { return Ok(None) };
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
    pub(super) fn keep_snapshot(&self, game: &str, seq: u64, bytes: &[u8]) -> Result<(), AppendError> {
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

    pub(super) fn kept_snapshots(&self, game: &str) -> Result<Vec<u64>, ReadError> {
        let Some(tree) = self.snapshot_tree().map_err(|e| ReadError::Io(e.to_string()))? else { return Ok(Vec::new()) };
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
    pub(super) fn drop_snapshot(&self, game: &str, seq: u64) -> Result<(), AppendError> {
        self.refuse()?;
        let io = |e: sled::Error| AppendError::Io(e.to_string());
        let Some(tree) = self.snapshot_tree().map_err(|e| AppendError::Io(e.to_string()))? else { return Ok(()) };
        let mut batch = sled::Batch::default();
        for key in tree.scan_prefix(&snapshot_key(game, seq, 0)[..snapshot_prefix(game).len() + 8]).keys() {
            batch.remove(key.map_err(io)?);
        }
        tree.apply_batch(batch).map_err(io)
    }
}
