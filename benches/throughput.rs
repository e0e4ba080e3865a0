//! `cargo bench` (or `tools/bench N`): arbiter's append, verify and fold
//! rates beside the same bytes through raw sled and through BLAKE3 alone.
//!
//! The stream is the bundled sample combat, replayed over and over (it ends
//! between combats, so it can follow itself): real Doomtrooper events, with
//! the rules checked on every append.

use std::time::Instant;

use arbiter::fold::fold_all;
use arbiter::record::{Recorder, StoredGame, canonical_bytes, create, verify};
use arbiter::store::{SledStore, Store};

mod common;

use common::Sample;

fn main() {
    let n: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(2000);
    let sample = Sample::load();

    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(&dir.path().join("arbiter")).unwrap();
    create(&store, "bench", &sample.header, &sample.opened_by, None).unwrap();
    let mut recorder = Recorder::load(&store, "bench").unwrap();

    let t = Instant::now();
    for i in 0..n {
        recorder.append(&sample.action(i), None).unwrap();
    }
    let append = t.elapsed();

    let t = Instant::now();
    let events: Vec<_> = store.read("bench", 0).unwrap().collect::<Result<_, _>>().unwrap();
    let (verified, _) = verify(&StoredGame::new(&store, "bench"), None).unwrap();
    let verify_time = t.elapsed();
    assert_eq!(verified.events as usize, n + 1);

    let t = Instant::now();
    fold_all(&events).unwrap();
    let fold_time = t.elapsed();

    let bytes: Vec<Vec<u8>> = events.iter().map(canonical_bytes).collect();
    let raw = sled::open(dir.path().join("raw")).unwrap();
    let tree = raw.open_tree("raw").unwrap();
    let t = Instant::now();
    for (i, b) in bytes.iter().enumerate() {
        tree.insert((i as u64).to_be_bytes(), b.as_slice()).unwrap();
        raw.flush().unwrap();
    }
    let raw_time = t.elapsed();

    let t = Instant::now();
    let mut x = 0u8;
    for b in &bytes {
        x ^= blake3::hash(b).as_bytes()[0];
    }
    let hash_time = t.elapsed();
    std::hint::black_box(x);

    let total: usize = bytes.iter().map(Vec::len).sum();
    let rate = |d: std::time::Duration| (n as f64 + 1.0) / d.as_secs_f64();
    println!("{} events, {} bytes canonical JSON (mean {} bytes/event)", n + 1, total, total / (n + 1));
    println!("{:<46} {:>12} {:>10}", "", "events/s", "vs raw");
    let raw_rate = rate(raw_time);
    for (name, d) in [
        ("arbiter append (rules + hash + sled + fdatasync)", append),
        ("raw sled insert + flush (no fdatasync)", raw_time),
        ("arbiter verify (read + hash + link + fold)", verify_time),
        ("arbiter fold (rules only)", fold_time),
        ("BLAKE3 alone over the same bytes", hash_time),
    ] {
        println!("{:<46} {:>12.0} {:>9.2}x", name, rate(d), rate(d) / raw_rate);
    }
}
