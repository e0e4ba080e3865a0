//! The verifiable log checked in-process by code from other hands: the
//! crates `signed_note` (c2sp.org/signed-note, Ed25519) and `tlog_tiles`
//! (c2sp.org/tlog-checkpoint, and the RFC 6962 tree of Go's
//! golang.org/x/mod/sumdb/tlog, ported). No network, no Python: these are
//! dev-dependencies. tests/log.rs keeps its Python oracles as a second
//! opinion.
//!
//! What a leaf is (docs/verifiable-log.md): one event's canonical bytes,
//! exactly one line of `arbiter export` without its newline, in the order
//! the store stored the events.

mod common;

use arbiter::proof;
use arbiter::store::Store;
use common::logs::{build, checkpoint, export, interleaved, ok, ok_stdin, steps, text};
use common::server::Served;
use common::*;
use serde_json::{Value, json};
use signed_note::{Note, StandardVerifier, VerifierList};
use tlog_tiles::{
    Checkpoint, HashReader, check_record, check_tree, prove_record, prove_tree, record_hash, stored_hashes, tree_hash,
};

use tlog_tiles::Hash;

// The oracles.

/// The signed note `note` opened as signed_note and tlog_tiles read it:
/// parsed, its signature by `key` (a verifier key, `name+id+key`)
/// verified, its text a C2SP checkpoint. Any failure is a refusal.
fn oracle_opens(key: &str, note: &[u8]) -> Result<Checkpoint, String> {
    let verifier = StandardVerifier::new(key).map_err(|e| format!("the key: {e}"))?;
    let note = Note::from_bytes(note).map_err(|e| format!("the note: {e}"))?;
    let known = VerifierList::new(vec![Box::new(verifier)]);
    let (verified, _) = note.verify(&known).map_err(|e| format!("the signature: {e}"))?;
    assert_eq!(verified.len(), 1);
    Checkpoint::from_bytes(note.text()).map_err(|e| format!("the checkpoint: {e}"))
}

/// Every hash tlog_tiles stores for a log of `leaves`, in its own order
/// (Go's tlog: a record's hash and the subtrees it completes).
struct Stored(Vec<Hash>);

impl HashReader for Stored {
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<Hash>, tlog_tiles::Error> {
        indexes.iter().map(|&i| self.0.get(i as usize).copied().ok_or(tlog_tiles::Error::IndexesNotInTree)).collect()
    }
}

impl Stored {
    /// tlog_tiles' tree of `leaves`, and its root at every size 0..=n.
    fn of(leaves: &[&str]) -> (Stored, Vec<Hash>) {
        let mut stored = Stored(Vec::new());
        let mut roots = vec![tree_hash(0, &stored).unwrap()];
        for (n, leaf) in leaves.iter().enumerate() {
            let more = stored_hashes(n as u64, leaf.as_bytes(), &stored).unwrap();
            stored.0.extend(more);
            roots.push(tree_hash(n as u64 + 1, &stored).unwrap());
        }
        (stored, roots)
    }
}

/// A base64 hash as arbiter writes it, read by tlog_tiles.
fn hash(v: &Value) -> Hash {
    Hash::parse_hash(v.as_str().unwrap_or_else(|| panic!("a base64 hash: {v}"))).unwrap()
}

fn path(v: &Value) -> Vec<Hash> {
    v.as_array().unwrap_or_else(|| panic!("a list of hashes: {v}")).iter().map(hash).collect()
}

/// `h` with one bit changed.
fn flipped(h: Hash) -> Hash {
    let mut raw = h.0;
    raw[7] ^= 0x01;
    Hash(raw)
}

// Stores, built by arbiter.

// Tampering: every way a proof may be changed that must fail.

/// The inclusion proof `p` of leaf `index` (of `leaves`) in the tree of
/// `size`, changed: (what, proof, index, leaf hash).
fn tampered_inclusion(p: &[Hash], index: u64, size: u64, leaves: &[&str]) -> Vec<(String, Vec<Hash>, u64, Hash)> {
    let leaf = record_hash(leaves[index as usize].as_bytes());
    let mut out = Vec::new();
    for k in 0..p.len() {
        let mut t = p.to_vec();
        t[k] = flipped(t[k]);
        out.push((format!("path hash {k} changed"), t, index, leaf));
    }
    if size >= 2 {
        for wrong in [(index + 1) % size, (index + size - 1) % size] {
            out.push((format!("index {wrong} claimed"), p.to_vec(), wrong, leaf));
        }
        let other = record_hash(leaves[((index + 1) % size) as usize].as_bytes());
        out.push(("another event's line".into(), p.to_vec(), index, other));
    }
    let changed = leaves[index as usize].replacen("\"v\":1", "\"v\":2", 1);
    assert_ne!(changed, leaves[index as usize], "a leaf names its format version");
    out.push(("its line changed".into(), p.to_vec(), index, record_hash(changed.as_bytes())));
    out.push(("an index past the tree".into(), p.to_vec(), size, leaf));
    if !p.is_empty() {
        out.push(("its path cut short".into(), p[..p.len() - 1].to_vec(), index, leaf));
    }
    let mut longer = p.to_vec();
    longer.push(leaf);
    out.push(("its path made longer".into(), longer, index, leaf));
    out
}

/// The consistency proof `p` from the tree of `from` to the tree of `to`
/// (1 <= from < to), changed: (what, proof, from, from's root).
fn tampered_consistency(p: &[Hash], from: u64, roots: &[Hash]) -> Vec<(String, Vec<Hash>, u64, Hash)> {
    let old = roots[from as usize];
    let mut out = Vec::new();
    for k in 0..p.len() {
        let mut t = p.to_vec();
        t[k] = flipped(t[k]);
        out.push((format!("path hash {k} changed"), t, from, old));
    }
    out.push(("no path".into(), vec![], from, old));
    out.push(("its path cut short".into(), p[..p.len() - 1].to_vec(), from, old));
    let mut longer = p.to_vec();
    longer.push(old);
    out.push(("its path made longer".into(), longer, from, old));
    out.push(("another first root".into(), p.to_vec(), from, flipped(old)));
    if from >= 2 {
        // The proof of another first tree, with that tree's true root.
        out.push((format!("claimed from {}", from - 1), p.to_vec(), from - 1, roots[from as usize - 1]));
    }
    out
}

// 1. Roots and proofs against tlog_tiles.

#[test]
fn every_root_and_proof_checks_with_tlog_tiles_and_tampered_ones_do_not() {
    // Logs of several games stored in turn, of sizes mostly not powers of
    // two, and the empty log; every prefix of each is a tree too.
    let shapes: &[&[u64]] = &[&[], &[1], &[1, 1], &[2, 1], &[3, 2], &[4, 2, 1], &[3, 3, 2], &[6, 4, 3], &[13, 11, 7]];
    let (mut accepted, mut refused) = (0, 0);
    for lengths in shapes {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("store");
        let order = build(&d, lengths);
        let n = order.len() as u64;
        let games = (0..lengths.len()).map(|i| format!("g{i}"));
        let exports: std::collections::BTreeMap<String, Vec<String>> =
            games.map(|g| (g.clone(), export(&d, &g))).collect();
        let leaves: Vec<&str> = order.iter().map(|(g, s)| exports[g][*s as usize].as_str()).collect();
        let (stored, roots) = Stored::of(&leaves);

        // The root the CLI signs is tlog_tiles' root of the exported lines.
        let cp = checkpoint(&d);
        assert_eq!((cp["size"].as_u64(), hash(&cp["root"])), (Some(n), roots[n as usize]), "{lengths:?}: {cp}");

        let store = open_store(&d);
        assert_eq!(store.log_size().unwrap(), n);
        for size in 0..=n {
            let to_root = proof::consistency(&store, 0, size).unwrap()["to_root"].clone();
            assert_eq!(hash(&to_root), roots[size as usize], "{lengths:?}: the root of the tree of size {size}");
            let root = roots[size as usize];

            for (index, (game, seq)) in order.iter().enumerate().take(size as usize) {
                let index = index as u64;
                let p = proof::inclusion(&store, game, Some(*seq), size).unwrap();
                let what = format!("{lengths:?}: {game} seq {seq}, leaf {index} of {size}");
                assert_eq!((p["leaf_index"].as_u64(), hash(&p["root"])), (Some(index), root), "{what}");
                let leaf = record_hash(leaves[index as usize].as_bytes());
                assert_eq!(hash(&p["leaf"]), leaf, "{what}: the leaf hash is SHA-256(0x00 || exported line)");
                let path = path(&p["inclusion"]);
                check_record(&path, size, root, index, leaf).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(path, prove_record(size, index, &stored).unwrap(), "{what}: tlog_tiles' own proof");
                accepted += 1;
                // Leaves first, in the middle and last of the whole tree: every tampering.
                if size == n && [0, n / 2, n - 1].contains(&index) {
                    for (why, t, i, l) in tampered_inclusion(&path, index, size, &leaves) {
                        assert!(check_record(&t, size, root, i, l).is_err(), "{what}: accepted with {why}");
                        refused += 1;
                    }
                }
            }

            for from in 1..=size {
                let c = proof::consistency(&store, from, size).unwrap();
                let what = format!("{lengths:?}: consistency {from} to {size}");
                let old = roots[from as usize];
                assert_eq!((hash(&c["from_root"]), hash(&c["to_root"])), (old, root), "{what}");
                let path = path(&c["consistency"]);
                check_tree(&path, size, root, from, old).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(path, prove_tree(size, from, &stored).unwrap(), "{what}: tlog_tiles' own proof");
                accepted += 1;
                if size == n && from < size {
                    for (why, t, m, h) in tampered_consistency(&path, from, &roots) {
                        assert!(check_tree(&t, size, root, m, h).is_err(), "{what}: accepted with {why}");
                        refused += 1;
                    }
                }
                if size == n && from == size {
                    assert!(path.is_empty(), "{what}: equal trees need no path");
                    assert!(check_tree(&vec![root], size, root, from, root).is_err(), "{what}: accepted a path");
                    refused += 1;
                }
            }
        }
    }
    eprintln!("tlog_tiles accepted {accepted} proofs from arbiter and refused {refused} tampered ones");
    assert!(accepted > 1000 && refused > 100, "{accepted} accepted, {refused} refused");
}

// 2. The signed checkpoint against signed_note and tlog_tiles.

#[test]
fn a_checkpoint_parses_and_verifies_with_signed_note_and_any_changed_byte_fails() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("open-2026");
    ok(&d, &["demo"]);
    let note = ok(&d, &["checkpoint"]);
    let key = ok(&d, &["checkpoint", "--public-key"]).trim().to_string();
    let cp = checkpoint(&d);

    let opened = oracle_opens(&key, note.as_bytes()).unwrap_or_else(|e| panic!("{e}:\n{note}"));
    assert_eq!(opened.origin(), "localhost/arbiter/open-2026");
    assert_eq!((opened.size(), *opened.hash()), (113, hash(&cp["root"])));
    assert_eq!(opened.extension(), "", "arbiter's checkpoints carry no extension lines");
    // tlog_tiles writes the same checkpoint text back, byte for byte.
    let body = note.split_once("\n\n").unwrap().0;
    assert_eq!(text(&opened.to_bytes()), format!("{body}\n"));

    // Every ASCII byte changed in turn (the signed text, the blank line, the
    // signature line), and the em dash replaced: each is refused.
    let mut forged = Vec::new();
    for (i, b) in note.bytes().enumerate() {
        if b.is_ascii() {
            let mut bytes = note.clone().into_bytes();
            bytes[i] ^= 0x01;
            forged.push((i, bytes));
        }
    }
    forged.push((usize::MAX, note.replacen('\u{2014}', "-", 1).into_bytes()));
    assert!(forged.len() > 100, "the whole note was changed, byte by byte");
    for (i, f) in &forged {
        assert!(oracle_opens(&key, f).is_err(), "byte {i} changed, and accepted:\n{}", text(f));
    }

    // A key whose id is not its hash; another store's key under the same name.
    let (name, rest) = key.split_once('+').unwrap();
    let (_, public) = rest.split_once('+').unwrap();
    let wrong_id = oracle_opens(&format!("{name}+00000000+{public}"), note.as_bytes()).unwrap_err();
    assert!(wrong_id.starts_with("the key:"), "{wrong_id}");
    let other = dir.path().join("elsewhere").join("open-2026");
    ok(&other, &["checkpoint"]);
    let other_key = ok(&other, &["checkpoint", "--public-key"]).trim().to_string();
    assert!(other_key.starts_with(&format!("{name}+")) && other_key != key, "the same log name, another key");
    let refused = oracle_opens(&other_key, note.as_bytes()).unwrap_err();
    assert!(refused.starts_with("the signature:"), "{refused}");
}

// 3. A bundle from `arbiter prove`, checked with the oracles alone.

#[test]
fn a_bundle_from_prove_checks_with_the_oracles_alone_and_a_changed_one_does_not() {
    let root = tempfile::tempdir().unwrap();
    let a = root.path().join("a");
    ok(&a, &["new", "g", "--ruleset", "doomtrooper", "--seat", "p1=Ann", "--seat", "p2=Ben", "--judge", "Dana"]);
    ok_stdin(&a, &["append", "g", "-"], &steps(1..=20));
    let kept_note = ok(&a, &["checkpoint"]);
    let kept_file = root.path().join("kept.checkpoint");
    std::fs::write(&kept_file, &kept_note).unwrap();
    let key = ok(&a, &["checkpoint", "--public-key"]).trim().to_string();
    ok(&a, &["new", "h", "--ruleset", "doomtrooper", "--seat", "p1=Cy", "--seat", "p2=Di", "--judge", "Dana"]);
    ok_stdin(&a, &["append", "h", "-"], &steps(1..=5));
    ok_stdin(&a, &["append", "g", "-"], &steps(21..=30));
    let bundle_file = root.path().join("g.bundle");
    ok(&a, &["prove", "g", "--kept", kept_file.to_str().unwrap(), "-o", bundle_file.to_str().unwrap()]);
    let b: Value = serde_json::from_str(&std::fs::read_to_string(&bundle_file).unwrap()).unwrap();
    assert_eq!(b["log_key"], json!(key), "the bundle carries the key the organiser publishes");

    // What an auditor with only these crates does: open both checkpoints
    // with the published key, hash the export's last line, run the proofs.
    let kept = oracle_opens(&key, kept_note.as_bytes()).unwrap();
    let signed = oracle_opens(&key, b["checkpoint"].as_str().unwrap().as_bytes()).unwrap();
    assert_eq!((kept.size(), signed.size()), (21, 37));
    assert_eq!(kept.origin(), signed.origin());
    let lines: Vec<&str> = b["export"].as_str().unwrap().lines().collect();
    assert_eq!(lines.len(), 31, "events 0..=30");
    let leaf = record_hash(lines[30].as_bytes());
    let (index, inclusion) = (b["leaf_index"].as_u64().unwrap(), path(&b["inclusion"]));
    assert_eq!(index, 36, "g's event 30 is the log's last leaf (21 of g, 6 of h, 10 more of g)");
    check_record(&inclusion, signed.size(), *signed.hash(), index, leaf).unwrap();
    assert_eq!(b["kept"]["from"], json!(21));
    let consistency = path(&b["kept"]["consistency"]);
    check_tree(&consistency, signed.size(), *signed.hash(), kept.size(), *kept.hash()).unwrap();

    // The whole tree, from the exports: g's 21, then h's 6, then g's 10.
    let h = export(&a, "h");
    let all: Vec<&str> =
        lines[..21].iter().copied().chain(h.iter().map(String::as_str)).chain(lines[21..].iter().copied()).collect();
    let (_, roots) = Stored::of(&all);
    assert_eq!((roots[21], roots[37]), (*kept.hash(), *signed.hash()), "the signed roots are tlog_tiles' roots");

    // Changed: an export byte (another leaf), an inclusion hash, a
    // consistency hash, the kept checkpoint's root: each is refused.
    let changed_leaf = record_hash(lines[30].replacen("Cancel", "Cancal", 1).as_bytes());
    assert!(check_record(&inclusion, signed.size(), *signed.hash(), index, changed_leaf).is_err());
    let mut t = inclusion.clone();
    t[0] = flipped(t[0]);
    assert!(check_record(&t, signed.size(), *signed.hash(), index, leaf).is_err());
    let mut t = consistency.clone();
    t[0] = flipped(t[0]);
    assert!(check_tree(&t, signed.size(), *signed.hash(), kept.size(), *kept.hash()).is_err());
    assert!(check_tree(&consistency, signed.size(), *signed.hash(), kept.size(), flipped(*kept.hash())).is_err());
}

// 4. Over HTTP.

#[test]
fn the_served_checkpoint_and_proofs_check_with_the_oracles() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(dir.path());
    let (order, _) = interleaved(&s, ("one", "two"), "public", 7, 4);
    let n = order.len() as u64;
    assert_eq!(n, 13);
    // The server signs within a second of the last append.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let note = loop {
        let (status, kind, note) = s.get_text("/checkpoint", None);
        assert_eq!(status, 200);
        assert!(kind.starts_with("text/plain"), "{kind}");
        if note.lines().nth(1) == Some(&n.to_string()) {
            break note;
        }
        assert!(std::time::Instant::now() < deadline, "no checkpoint of the {n} events: {note}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let (status, log) = s.get("/api/log", None);
    assert_eq!(status, 200, "{log}");
    let signed = oracle_opens(log["key"].as_str().unwrap(), note.as_bytes()).unwrap_or_else(|e| panic!("{e}:\n{note}"));
    assert_eq!((signed.origin(), signed.size()), (log["origin"].as_str().unwrap(), n));

    let exports: std::collections::BTreeMap<&str, Vec<String>> = ["one", "two"]
        .into_iter()
        .map(|g| {
            let (status, _, body) = s.get_text(&format!("/api/games/{g}/export"), None);
            assert_eq!(status, 200);
            (g, body.lines().map(str::to_string).collect())
        })
        .collect();
    let leaves: Vec<&str> = order.iter().map(|(g, seq)| exports[g][*seq as usize].as_str()).collect();
    let (_, roots) = Stored::of(&leaves);
    assert_eq!(roots[n as usize], *signed.hash(), "the signed root is tlog_tiles' root of the exported lines");

    // Every leaf's inclusion proof at the checkpoint's size (the default),
    // and every consistency proof into it.
    for (index, (game, seq)) in order.iter().enumerate() {
        let (status, p) = s.get(&format!("/api/proof/inclusion?game={game}&seq={seq}"), None);
        assert_eq!(status, 200, "{p}");
        assert_eq!((p["size"].as_u64(), p["leaf_index"].as_u64()), (Some(n), Some(index as u64)));
        let leaf = record_hash(leaves[index].as_bytes());
        let path = path(&p["inclusion"]);
        check_record(&path, n, *signed.hash(), index as u64, leaf).unwrap_or_else(|e| panic!("{game} {seq}: {e}"));
        let mut t = path.clone();
        t[0] = flipped(t[0]);
        assert!(check_record(&t, n, *signed.hash(), index as u64, leaf).is_err(), "{game} {seq}: tampered");
    }
    for from in 1..=n {
        let (status, c) = s.get(&format!("/api/proof/consistency?from={from}&to={n}"), None);
        assert_eq!(status, 200, "{c}");
        let path = path(&c["consistency"]);
        let old = roots[from as usize];
        assert_eq!(hash(&c["from_root"]), old);
        check_tree(&path, n, *signed.hash(), from, old).unwrap_or_else(|e| panic!("{from} to {n}: {e}"));
        if from < n {
            assert!(check_tree(&path, n, *signed.hash(), from, flipped(old)).is_err(), "{from}: another old root");
        }
    }
}
