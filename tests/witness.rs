//! `arbiter witness` as a third party runs it: it cosigns a log's
//! checkpoint, then a later one only with a consistency proof from it, and
//! refuses a checkpoint of another history signed by the same key.

mod common;

use std::path::Path;

use arbiter::store::{SledStore, Store};
use arbiter::tlog::note::unb64;
use arbiter::tlog::witness::Request;
use common::*;

fn checkpoint(data: &Path) -> String {
    let out = arbiter(data, &["checkpoint"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn note(data: &Path, args: &[&str]) {
    let out = arbiter(data, args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// The add-checkpoint request for `data`'s newest checkpoint, proving
/// consistency from `old` leaves.
fn request(data: &Path, old: u64) -> String {
    let cp = checkpoint(data);
    let size: u64 = cp.lines().nth(1).unwrap().parse().unwrap();
    let store = SledStore::open(data).unwrap();
    let proof = arbiter::proof::consistency(&store, old, size).unwrap();
    let hashes: Vec<_> = proof["consistency"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| unb64(h.as_str().unwrap()).unwrap().try_into().unwrap())
        .collect();
    assert_eq!(store.log_size().unwrap(), size);
    // sled lets go of its lock a moment after a drop: the CLI runs next.
    store.close();
    Request::write(old, &hashes, &cp)
}

fn witness(dir: &Path, log_key: &str, request: &str) -> std::process::Output {
    let file = dir.join("request.txt");
    std::fs::write(&file, request).unwrap();
    let w = dir.join("w");
    arbiter(
        dir,
        &["witness", "--dir", w.to_str().unwrap(), "--name", "witness.test", "--log", log_key, file.to_str().unwrap()],
    )
}

#[test]
fn a_witness_cosigns_only_an_extension_of_what_it_cosigned() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    note(&a, &["demo"]);
    let key = String::from_utf8(arbiter(&a, &["checkpoint", "--public-key"]).stdout).unwrap().trim().to_string();

    // The first checkpoint it sees: no proof needed.
    let out = witness(tmp.path(), &key, &request(&a, 0));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let cosigned = String::from_utf8(out.stdout).unwrap();
    assert_eq!(cosigned.matches('\u{2014}').count(), 2, "the log's signature and the witness's: {cosigned}");
    let seen = arbiter::store::checkpoints::read(&a).unwrap().pop().unwrap().checkpoint().unwrap().size;

    // Another history signed by the same key (a store that holds the
    // organiser's key file): larger than what the witness saw, but not an
    // extension of it.
    std::fs::create_dir_all(&b).unwrap();
    std::fs::copy(a.join("log.key"), b.join("log.key")).unwrap();
    note(&b, &["new", "other", "--ruleset", "doomtrooper", "--seat", "p1=Ann", "--seat", "p2=Ben"]);
    let zero = String::from_utf8(arbiter(&b, &["--json", "head", "other"]).stdout).unwrap();
    let zero: serde_json::Value = serde_json::from_str(&zero).unwrap();
    let line = serde_json::json!({"actor": "p1", "action": {"type": "note", "text": "forged",
        "concerns": {"seq": 0, "hash": zero["hash"]}}});
    let lines = format!("{line}\n").repeat(seen as usize + 2);
    let out = arbiter_stdin(&b, &["append", "other", "-"], &lines);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let forged = request(&b, seen);
    let out = witness(tmp.path(), &key, &forged);
    assert_eq!(out.status.code(), Some(1), "a second history is refused: {}", String::from_utf8_lossy(&out.stdout));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("not consistent"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // The real log grows; the witness cosigns the extension with its proof.
    note(&a, &["note", "sample", "--actor", "p1", "after the round"]);
    let out = witness(tmp.path(), &key, &request(&a, seen));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    // A request from a size the witness did not cosign is a conflict, not a cosignature.
    let out = witness(tmp.path(), &key, &request(&a, seen));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("ask again from"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
