//! `cargo bench --bench tlog [N]` (or `tools/bench-tlog N`): the verifiable
//! log's costs at scale, on simulated leaves (default 10,000,000): building
//! the tree incrementally (what each append adds), the root, and inclusion
//! and consistency proofs: their size and the time to make and check one.
//! Subtrees are kept in memory here; the store keeps the same ones in sled,
//! so a proof reads the same O(log n) subtrees.

use std::time::Instant;

use arbiter::tlog::merkle::{
    MemoryTree, consistency_proof, inclusion_proof, leaf_hash, root, verify_consistency, verify_inclusion,
};

fn main() {
    let n: u64 = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(10_000_000);
    // A leaf's data is an event's canonical bytes; 200 bytes is a typical event.
    let mut data = [b'x'; 200];
    let mut tree = MemoryTree::default();
    let t = Instant::now();
    for i in 0..n {
        data[..8].copy_from_slice(&i.to_be_bytes());
        tree.push(leaf_hash(&data));
    }
    let build = t.elapsed();
    println!(
        "tree of {n} leaves: {:.2} s to build, {:.2} us per leaf (leaf hash of 200 bytes + the subtrees it completes)",
        build.as_secs_f64(),
        build.as_secs_f64() * 1e6 / n as f64
    );

    let t = Instant::now();
    let whole = root(&tree, n).unwrap();
    println!("root from stored subtrees: {:.1} us", t.elapsed().as_secs_f64() * 1e6);
    assert_eq!(whole, tree.root());

    // Proofs at spread-out leaves, timed over many.
    let picks: Vec<u64> = (0..1000u64).map(|i| (i * 7_919_993) % n).collect();
    let t = Instant::now();
    let proofs: Vec<_> = picks.iter().map(|&i| inclusion_proof(&tree, i, n).unwrap().unwrap()).collect();
    let make = t.elapsed().as_secs_f64() * 1e6 / picks.len() as f64;
    let t = Instant::now();
    for (&i, p) in picks.iter().zip(&proofs) {
        data[..8].copy_from_slice(&i.to_be_bytes());
        verify_inclusion(&leaf_hash(&data), i, n, p, &whole).unwrap();
    }
    let check = t.elapsed().as_secs_f64() * 1e6 / picks.len() as f64;
    let hashes = proofs.iter().map(Vec::len).max().unwrap_or(0);
    println!(
        "inclusion proof: {hashes} hashes at most ({} bytes; {} in base64 JSON), {make:.1} us to make, {check:.1} us to check",
        hashes * 32,
        hashes * 47
    );

    let t = Instant::now();
    let pairs: Vec<(u64, u64)> = picks.iter().map(|&m| (m.max(1), n)).collect();
    let proofs: Vec<_> = pairs.iter().map(|&(m, to)| consistency_proof(&tree, m, to).unwrap().unwrap()).collect();
    let make = t.elapsed().as_secs_f64() * 1e6 / pairs.len() as f64;
    let roots: Vec<_> = pairs.iter().map(|&(m, _)| root(&tree, m).unwrap()).collect();
    let t = Instant::now();
    for ((&(m, to), p), r) in pairs.iter().zip(&proofs).zip(&roots) {
        verify_consistency(m, to, r, &whole, p).unwrap();
    }
    let check = t.elapsed().as_secs_f64() * 1e6 / pairs.len() as f64;
    let hashes = proofs.iter().map(Vec::len).max().unwrap_or(0);
    println!(
        "consistency proof to {n}: {hashes} hashes at most ({} bytes), {make:.1} us to make, {check:.1} us to check",
        hashes * 32
    );
}
