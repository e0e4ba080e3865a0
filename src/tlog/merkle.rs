//! The Merkle tree of RFC 6962 / RFC 9162 (section 2.1), with SHA-256.
//!
//! ```text
//! MTH({})      = SHA-256()
//! leaf hash    = SHA-256(0x00 || data)          data = an event's canonical bytes
//! MTH(D[n])    = SHA-256(0x01 || MTH(D[0:k]) || MTH(D[k:n]))   k = largest power of 2 < n
//! ```
//!
//! The tree is kept as its *complete subtrees*: node (level L, index i) is
//! the hash of leaves `[i*2^L, (i+1)*2^L)`, written once when its last leaf
//! arrives and never changed (level 0 is the leaf hashes). Every subtree an
//! RFC 6962 proof names is either one such node or splits into them, so a
//! root, an inclusion proof or a consistency proof reads O(log n) nodes
//! whatever the size of the log, and an append computes O(1) hashes on
//! average (`Frontier::push`). Nothing here does I/O: the nodes come from a
//! `Nodes` (the store, or memory).

use sha2::{Digest, Sha256};

/// A SHA-256 hash in the tree.
pub type Hash = [u8; 32];

/// RFC 6962 hash of the empty tree.
pub fn empty_root() -> Hash {
    Sha256::digest([]).into()
}

/// RFC 6962 leaf hash: SHA-256(0x00 || data).
pub fn leaf_hash(data: &[u8]) -> Hash {
    let mut h = Sha256::new();
    h.update([0u8]);
    h.update(data);
    h.finalize().into()
}

/// RFC 6962 interior node: SHA-256(0x01 || left || right).
pub fn node_hash(left: &Hash, right: &Hash) -> Hash {
    let mut h = Sha256::new();
    h.update([1u8]);
    h.update(left);
    h.update(right);
    h.finalize().into()
}

/// Where complete subtrees are kept. `node(level, index)` must return the
/// hash of leaves `[index << level, (index + 1) << level)`, all of which exist.
pub trait Nodes {
    type Error;
    fn node(&self, level: u8, index: u64) -> Result<Hash, Self::Error>;
}

/// Why a proof was not made or did not check.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProofError {
    #[error("leaf {index} is not in a tree of size {size}")]
    NoSuchLeaf { index: u64, size: u64 },
    #[error("a tree of size {from} cannot be proved consistent with a smaller one of size {to}")]
    Shrinks { from: u64, to: u64 },
    #[error("the proof has the wrong length or shape")]
    Shape,
    #[error("the proof does not lead to the root")]
    Mismatch,
}

/// The largest power of two strictly below `n` (n >= 2): RFC 6962's split.
fn split(n: u64) -> u64 {
    debug_assert!(n >= 2);
    1 << (63 - (n - 1).leading_zeros())
}

/// MTH of leaves `[start, end)`, from the complete subtrees.
pub fn subtree<N: Nodes>(nodes: &N, start: u64, end: u64) -> Result<Hash, N::Error> {
    let n = end - start;
    if n == 0 {
        return Ok(empty_root());
    }
    if n.is_power_of_two() && start.is_multiple_of(n) {
        return nodes.node(n.trailing_zeros() as u8, start / n);
    }
    let k = split(n);
    Ok(node_hash(&subtree(nodes, start, start + k)?, &subtree(nodes, start + k, end)?))
}

/// The root of the tree of the first `size` leaves.
pub fn root<N: Nodes>(nodes: &N, size: u64) -> Result<Hash, N::Error> {
    subtree(nodes, 0, size)
}

/// RFC 9162 2.1.3.1 PATH(m, D[n]): the inclusion proof of leaf `index` in
/// the tree of the first `size` leaves, nearest sibling first.
pub fn inclusion_proof<N: Nodes>(nodes: &N, index: u64, size: u64) -> Result<Result<Vec<Hash>, ProofError>, N::Error> {
    if index >= size {
        return Ok(Err(ProofError::NoSuchLeaf { index, size }));
    }
    let mut path = Vec::new();
    path_of(nodes, index, 0, size, &mut path)?;
    Ok(Ok(path))
}

fn path_of<N: Nodes>(nodes: &N, m: u64, start: u64, end: u64, out: &mut Vec<Hash>) -> Result<(), N::Error> {
    let n = end - start;
    if n <= 1 {
        return Ok(());
    }
    let k = split(n);
    if m < k {
        path_of(nodes, m, start, start + k, out)?;
        out.push(subtree(nodes, start + k, end)?);
    } else {
        path_of(nodes, m - k, start + k, end, out)?;
        out.push(subtree(nodes, start, start + k)?);
    }
    Ok(())
}

/// RFC 9162 2.1.4.1 PROOF(m, D[n]): the consistency proof from the tree of
/// the first `from` leaves to the tree of the first `to`. Empty when `from`
/// is 0 or equals `to` (nothing to prove).
pub fn consistency_proof<N: Nodes>(nodes: &N, from: u64, to: u64) -> Result<Result<Vec<Hash>, ProofError>, N::Error> {
    if from > to {
        return Ok(Err(ProofError::Shrinks { from, to }));
    }
    let mut path = Vec::new();
    if from > 0 && from < to {
        subproof(nodes, from, 0, to, true, &mut path)?;
    }
    Ok(Ok(path))
}

fn subproof<N: Nodes>(
    nodes: &N,
    m: u64,
    start: u64,
    end: u64,
    whole: bool,
    out: &mut Vec<Hash>,
) -> Result<(), N::Error> {
    let n = end - start;
    if m == n {
        if !whole {
            out.push(subtree(nodes, start, end)?);
        }
        return Ok(());
    }
    let k = split(n);
    if m <= k {
        subproof(nodes, m, start, start + k, whole, out)?;
        out.push(subtree(nodes, start + k, end)?);
    } else {
        subproof(nodes, m - k, start + k, end, false, out)?;
        out.push(subtree(nodes, start, start + k)?);
    }
    Ok(())
}

/// RFC 9162 2.1.3.2: checks that `leaf` (a leaf hash) is leaf `index` of the
/// tree of `size` leaves whose root is `root`.
pub fn verify_inclusion(leaf: &Hash, index: u64, size: u64, path: &[Hash], root: &Hash) -> Result<(), ProofError> {
    if index >= size {
        return Err(ProofError::NoSuchLeaf { index, size });
    }
    let (mut fnode, mut snode, mut r) = (index, size - 1, *leaf);
    for p in path {
        if snode == 0 {
            return Err(ProofError::Shape);
        }
        if fnode & 1 == 1 || fnode == snode {
            r = node_hash(p, &r);
            while fnode & 1 == 0 && fnode != 0 {
                fnode >>= 1;
                snode >>= 1;
            }
        } else {
            r = node_hash(&r, p);
        }
        fnode >>= 1;
        snode >>= 1;
    }
    if snode != 0 {
        return Err(ProofError::Shape);
    }
    if &r != root {
        return Err(ProofError::Mismatch);
    }
    Ok(())
}

/// RFC 9162 2.1.4.2: checks that the tree of `from` leaves with root
/// `from_root` is a prefix of the tree of `to` leaves with root `to_root`.
pub fn verify_consistency(
    from: u64,
    to: u64,
    from_root: &Hash,
    to_root: &Hash,
    path: &[Hash],
) -> Result<(), ProofError> {
    if from > to {
        return Err(ProofError::Shrinks { from, to });
    }
    if from == to {
        return match (path.is_empty(), from_root == to_root) {
            (false, _) => Err(ProofError::Shape),
            (true, false) => Err(ProofError::Mismatch),
            (true, true) => Ok(()),
        };
    }
    if from == 0 {
        // The empty tree is a prefix of every tree.
        return if path.is_empty() { Ok(()) } else { Err(ProofError::Shape) };
    }
    if path.is_empty() {
        return Err(ProofError::Shape);
    }
    let mut steps: Vec<Hash> = Vec::with_capacity(path.len() + 1);
    if from.is_power_of_two() {
        steps.push(*from_root);
    }
    steps.extend_from_slice(path);
    let (mut fnode, mut snode) = (from - 1, to - 1);
    while fnode & 1 == 1 {
        fnode >>= 1;
        snode >>= 1;
    }
    let (mut fr, mut sr) = (steps[0], steps[0]);
    for c in &steps[1..] {
        if snode == 0 {
            return Err(ProofError::Shape);
        }
        if fnode & 1 == 1 || fnode == snode {
            fr = node_hash(c, &fr);
            sr = node_hash(c, &sr);
            while fnode & 1 == 0 && fnode != 0 {
                fnode >>= 1;
                snode >>= 1;
            }
        } else {
            sr = node_hash(&sr, c);
        }
        fnode >>= 1;
        snode >>= 1;
    }
    if snode != 0 {
        return Err(ProofError::Shape);
    }
    if &fr != from_root || &sr != to_root {
        return Err(ProofError::Mismatch);
    }
    Ok(())
}

/// The right edge of the tree: the roots of its complete subtrees, largest
/// first (one per set bit of `size`). Enough to append and to compute the
/// root without reading anything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Frontier {
    size: u64,
    /// (level, hash), levels strictly decreasing.
    edge: Vec<(u8, Hash)>,
}

impl Frontier {
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The frontier of the first `size` leaves, read from complete subtrees.
    pub fn load<N: Nodes>(nodes: &N, size: u64) -> Result<Frontier, N::Error> {
        let mut edge = Vec::new();
        let mut start = 0;
        for level in (0..64u8).rev() {
            if size >> level & 1 == 1 {
                edge.push((level, nodes.node(level, start >> level)?));
                start += 1 << level;
            }
        }
        Ok(Frontier { size, edge })
    }

    /// Appends a leaf hash; returns every subtree it completes (the leaf at
    /// level 0 first), as (level, index, hash), for the caller to keep.
    pub fn push(&mut self, leaf: Hash) -> Vec<(u8, u64, Hash)> {
        let index = self.size;
        let mut done = vec![(0u8, index, leaf)];
        let (mut level, mut hash) = (0u8, leaf);
        while let Some(&(l, left)) = self.edge.last() {
            if l != level {
                break;
            }
            self.edge.pop();
            hash = node_hash(&left, &hash);
            level += 1;
            done.push((level, index >> level, hash));
        }
        self.edge.push((level, hash));
        self.size += 1;
        done
    }

    /// The root of the tree so far.
    pub fn root(&self) -> Hash {
        let mut edge = self.edge.iter().rev();
        let Some(&(_, mut r)) = edge.next() else { return empty_root() };
        for (_, left) in edge {
            r = node_hash(left, &r);
        }
        r
    }
}

/// Complete subtrees in memory (tests, benchmarks, and checking an export).
#[derive(Debug, Clone, Default)]
pub struct MemoryTree {
    levels: Vec<Vec<Hash>>,
    frontier: Frontier,
}

impl MemoryTree {
    pub fn push(&mut self, leaf: Hash) {
        for (level, index, hash) in self.frontier.push(leaf) {
            let level = level as usize;
            if self.levels.len() <= level {
                self.levels.push(Vec::new());
            }
            debug_assert_eq!(self.levels[level].len() as u64, index);
            self.levels[level].push(hash);
        }
    }
    pub fn size(&self) -> u64 {
        self.frontier.size()
    }
    pub fn root(&self) -> Hash {
        self.frontier.root()
    }
}

impl Nodes for MemoryTree {
    type Error = std::convert::Infallible;
    fn node(&self, level: u8, index: u64) -> Result<Hash, Self::Error> {
        Ok(self.levels[level as usize][index as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MTH straight from RFC 6962's definition, over leaf data.
    fn mth(leaves: &[Vec<u8>]) -> Hash {
        match leaves.len() {
            0 => empty_root(),
            1 => leaf_hash(&leaves[0]),
            n => {
                let k = split(n as u64) as usize;
                node_hash(&mth(&leaves[..k]), &mth(&leaves[k..]))
            }
        }
    }

    fn tree(n: usize) -> (Vec<Vec<u8>>, MemoryTree) {
        let data: Vec<Vec<u8>> = (0..n).map(|i| format!("leaf {i}").into_bytes()).collect();
        let mut t = MemoryTree::default();
        data.iter().for_each(|d| t.push(leaf_hash(d)));
        (data, t)
    }

    #[test]
    fn roots_agree_with_the_definition_for_every_size_up_to_70() {
        for n in 0..70 {
            let (data, t) = tree(n);
            assert_eq!(t.root(), mth(&data), "size {n}");
            assert_eq!(root(&t, n as u64).unwrap(), mth(&data), "size {n} from nodes");
            for m in 0..=n {
                assert_eq!(root(&t, m as u64).unwrap(), mth(&data[..m]), "prefix {m} of {n}");
            }
            assert_eq!(Frontier::load(&t, n as u64).unwrap().root(), t.root());
        }
    }

    #[test]
    fn every_inclusion_and_consistency_proof_checks_and_a_wrong_one_does_not() {
        let (data, t) = tree(33);
        for n in 1..=33u64 {
            let r = root(&t, n).unwrap();
            for i in 0..n {
                let path = inclusion_proof(&t, i, n).unwrap().unwrap();
                let leaf = leaf_hash(&data[i as usize]);
                assert_eq!(verify_inclusion(&leaf, i, n, &path, &r), Ok(()), "leaf {i} of {n}");
                let other = leaf_hash(b"not a leaf");
                assert!(verify_inclusion(&other, i, n, &path, &r).is_err());
                if n > 1 {
                    assert!(verify_inclusion(&leaf, (i + 1) % n, n, &path, &r).is_err(), "wrong index {i} of {n}");
                }
            }
            for m in 0..=n {
                let path = consistency_proof(&t, m, n).unwrap().unwrap();
                let mr = root(&t, m).unwrap();
                assert_eq!(verify_consistency(m, n, &mr, &r, &path), Ok(()), "{m} -> {n}");
                if m > 0 && m < n {
                    let forged = leaf_hash(b"forged");
                    assert!(verify_consistency(m, n, &forged, &r, &path).is_err(), "{m} -> {n} forged");
                }
            }
        }
    }
}
