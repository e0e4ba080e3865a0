//! The store and the append path: conditional appends, conflicts, retries,
//! concurrent writers, verification on the way out. Every test runs on
//! both backends, sled and PostgreSQL (`common::backend`).

mod common;

use std::sync::{Arc, Barrier};

use arbiter::record::{RecordError, Recorder, StoredGame, Submission, create, verify};
use arbiter::store::{AppendError, Store};
use common::backend::{Backend, Kind};
use common::*;
use serde_json::json;

fn header() -> arbiter::event::Header {
    doomtrooper_header()
}

fn sub(actor: &str, action: serde_json::Value) -> Submission {
    Submission { actor: actor.into(), action, at: None }
}

fn appends_chain_and_read_back_verified(kind: Kind) {
    let backend = Backend::new(kind);
    let store = backend.store();
    let e0 = create(store, "g", &header(), "organiser", None).unwrap();
    let mut r = Recorder::load(store, "g").unwrap();
    let e1 = r.append(&sub("p1", combat("p2", "A", "D")), Some(1)).unwrap().event;
    assert_eq!((e1.seq, e1.prev.as_str()), (1, e0.hash.as_str()));
    let events: Vec<_> = store.read("g", 0).unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(events.len(), 2);
    assert_eq!(store.head("g").unwrap().unwrap().hash, e1.hash);
    assert_eq!(store.games().unwrap(), vec!["g"]);
    // Reading from the middle still checks the link to the event before.
    assert_eq!(store.read("g", 1).unwrap().count(), 1);
    assert!(matches!(create(store, "g", &header(), "organiser", None), Err(RecordError::Exists(_))));
}

fn a_stale_expected_seq_is_a_conflict_and_a_retry_returns_the_stored_event(kind: Kind) {
    let backend = Backend::new(kind);
    let store = backend.store();
    create(store, "g", &header(), "organiser", None).unwrap();
    let mut r = Recorder::load(store, "g").unwrap();
    let first = r.append(&sub("p1", combat("p2", "A", "D")), Some(1)).unwrap();
    assert!(!first.duplicate);
    let head = store.head("g").unwrap().unwrap();
    // The reply was lost; the client retries the same action at the same seq.
    let again = r.append(&sub("p1", combat("p2", "A", "D")), Some(1)).unwrap();
    assert!(again.duplicate);
    assert_eq!(again.event, first.event);
    // A different action at a stale seq is a conflict, not a fork.
    let err = r.append(&sub("p1", tactic("Fight")), Some(1)).unwrap_err();
    assert!(matches!(err, RecordError::Conflict { expected: 1, next: 2 }), "{err}");
    let err = r.append(&sub("p1", tactic("Fight")), Some(7)).unwrap_err();
    assert!(matches!(err, RecordError::Conflict { expected: 7, next: 2 }), "{err}");
    assert_eq!(store.head("g").unwrap().unwrap(), head);
}

fn the_store_refuses_a_forking_append_even_from_a_second_writer(kind: Kind) {
    let backend = Backend::new(kind);
    let store = backend.store();
    create(store, "g", &header(), "organiser", None).unwrap();
    let mut a = Recorder::load(store, "g").unwrap();
    let mut b = Recorder::load(store, "g").unwrap();
    let b_before = b.folder().clone();
    a.append(&sub("p1", combat("p2", "A", "D")), None).unwrap();
    // b's view of the head is stale: its append (sealed on seq 0) must not land.
    let err = b.append(&sub("p2", combat("p1", "B", "C")), None).unwrap_err();
    assert!(matches!(err, RecordError::Conflict { expected: 1, next: 2 }), "{err}");
    // b folded its action in place before the store refused it: its state
    // is the one at its head again, not one with the action that was not stored.
    assert_eq!(b.folder(), &b_before);
    assert_eq!(b.head().seq, 0);
    let (v, _) = verify(&StoredGame::new(store, "g"), None).unwrap();
    assert_eq!(v.events, 2);
}

fn racing_writers_get_exactly_one_event_per_seq(kind: Kind) {
    let backend = Backend::new(kind);
    let store = backend.shared();
    create(store.as_ref(), "g", &header(), "organiser", None).unwrap();
    let mut r = Recorder::load(store.as_ref(), "g").unwrap();
    r.append(&sub("p1", combat("p2", "A", "D")), None).unwrap();
    r.append(&sub("p1", tactic("Fight")), None).unwrap();
    // Steps 3-6 with two players: p2 and p1 may counter back and forth for ever.
    let writers = 8;
    let rounds = 10;
    let barrier = Arc::new(Barrier::new(writers));
    let handles: Vec<_> = (0..writers)
        .map(|w| {
            let (store, barrier) = (store.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let mut acked = Vec::new();
                let mut conflicts = 0;
                while acked.len() < rounds {
                    let mut r = Recorder::load(store.as_ref(), "g").unwrap();
                    let seat = r.table().view().may_act[0].clone();
                    let target = r.head().seq;
                    let s = sub(&seat, counter(&format!("Cancel by writer {w}"), target));
                    match r.append(&s, Some(target + 1)) {
                        Ok(done) => acked.push(done.event),
                        Err(RecordError::Conflict { .. }) => conflicts += 1,
                        Err(e) => panic!("writer {w}: {e}"),
                    }
                }
                (acked, conflicts)
            })
        })
        .collect();
    let mut acked = Vec::new();
    for h in handles {
        acked.extend(h.join().unwrap().0);
    }
    let stored: Vec<_> = store.read("g", 0).unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(stored.len(), 3 + writers * rounds);
    for event in &acked {
        assert_eq!(&stored[event.seq as usize], event, "an acknowledged event is stored as acknowledged");
    }
    let seqs: std::collections::BTreeSet<u64> = acked.iter().map(|e| e.seq).collect();
    assert_eq!(seqs.len(), acked.len(), "no seq acknowledged twice");
    verify(&stored, None).unwrap();
}

fn the_store_checks_on_the_way_in(kind: Kind) {
    let backend = Backend::new(kind);
    let store = backend.store();
    let e0 = create(store, "g", &header(), "organiser", None).unwrap();
    let head = store.head("g").unwrap();
    let mut r = Recorder::load(store, "g").unwrap();
    let (mut event, bytes, _) = r.check(&sub("p1", combat("p2", "A", "D"))).unwrap();
    // Bytes that do not match the event, or an event whose hash is wrong.
    assert!(store.append("g", &event, b"{}").is_err());
    event.hash = e0.hash.clone();
    assert!(matches!(store.append("g", &event, &bytes), Err(AppendError::Io(_))));
    assert_eq!(store.head("g").unwrap(), head);
    r.append(&sub("p1", combat("p2", "A", "D")), None).unwrap();
}

/// Events sealed after a head that is not the game's are refused by the
/// store itself, whatever its fold said, and store nothing: a seq past
/// the head (a gap), a seq already stored (a fork), a `prev` that is not
/// the head's hash, a time before the head's, and a second event 0.
fn an_append_that_does_not_follow_the_head_stores_nothing(kind: Kind) {
    use arbiter::event::{Draft, Link, seal};
    let backend = Backend::new(kind);
    let store = backend.store();
    let e0 = create(store, "g", &header(), "organiser", None).unwrap();
    Recorder::load(store, "g").unwrap().append(&sub("p1", combat("p2", "A", "D")), None).unwrap();
    let head = store.head("g").unwrap().unwrap();
    let draft = Draft { actor: "p1".into(), action: tactic("Fight"), at: None };
    let now = chrono::Utc::now();
    let after = |link: &Link, now| seal(&draft, Some(link), now).unwrap();
    let gap = after(&Link { seq: 2, ..head.clone() }, now);
    let err = store.append("g", &gap.0, &gap.1).unwrap_err();
    assert!(matches!(err, AppendError::Conflict { expected: 3, next: 2, .. }), "{err}");
    let fork = after(&e0.link(), now);
    let err = store.append("g", &fork.0, &fork.1).unwrap_err();
    assert!(matches!(err, AppendError::Conflict { expected: 1, next: 2, .. }), "{err}");
    let other_prev = after(&Link { hash: e0.hash.clone(), ..head.clone() }, now);
    let err = store.append("g", &other_prev.0, &other_prev.1).unwrap_err();
    assert!(matches!(err, AppendError::Invalid(_)), "{err}");
    let head_at = chrono::DateTime::parse_from_rfc3339(&head.at).unwrap().with_timezone(&chrono::Utc);
    // (Sealed after the head's seq and hash, but with a time long before
    // it, so that its own time is the one given, a second before the head's.)
    let long_ago = Link { at: format!("2000{}", &head.at[4..]), ..head.clone() };
    let earlier = after(&long_ago, head_at - chrono::Duration::seconds(1));
    let err = store.append("g", &earlier.0, &earlier.1).unwrap_err();
    assert!(matches!(err, AppendError::Invalid(_)), "{err}");
    let again = seal(&Draft { actor: "organiser".into(), action: e0.action.clone(), at: None }, None, now).unwrap();
    let err = store.append("g", &again.0, &again.1).unwrap_err();
    assert!(matches!(err, AppendError::Exists(_)), "{err}");
    assert_eq!(store.head("g").unwrap(), Some(head.clone()));
    // The event that does follow the head goes in.
    let next = after(&head, now);
    store.append("g", &next.0, &next.1).unwrap();
    let stored: Vec<_> = store.read("g", 0).unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(stored.len(), 3);
    verify(&stored, None).unwrap();
}

fn corruption_in_the_store_is_found_on_read(kind: Kind) {
    let mut backend = Backend::new(kind);
    create(backend.store(), "g", &header(), "organiser", None).unwrap();
    Recorder::load(backend.store(), "g").unwrap().append(&sub("p1", combat("p2", "A", "D")), None).unwrap();
    // Change a stored event behind arbiter's back, through sled itself or SQL.
    backend.tamper("g", 1, |text| text.replace("\"A\"", "\"B\""));
    let err = Recorder::load(backend.store(), "g").err().unwrap();
    assert!(matches!(err, RecordError::Broken { seq: 1, .. }), "{err}");
}

fn a_record_that_is_no_longer_legal_fails_verification(kind: Kind) {
    // Hashes and links can be perfect while the rules are broken: verify re-folds.
    let backend = Backend::new(kind);
    let store = backend.store();
    let e0 = create(store, "g", &header(), "organiser", None).unwrap();
    let draft = arbiter::event::Draft { actor: "p2".into(), action: json!({"type": "pass"}), at: None };
    let (e1, bytes) = arbiter::event::seal(&draft, Some(&e0.link()), chrono::Utc::now()).unwrap();
    store.append("g", &e1, &bytes).unwrap(); // the store checks links, not rules
    let err = verify(&StoredGame::new(store, "g"), None).unwrap_err();
    assert!(matches!(err, RecordError::Broken { seq: 1, .. }), "{err}");
}

/// A batch is sealed and folded whole, then stored by one durable write:
/// one sync for all of it, and a refused event anywhere in it stores none.
/// A retry of a batch whose answer was lost returns the run already stored
/// and stores the rest; a rewind in a batch rebuilds the state from the
/// stored events.
fn a_batch_is_one_durable_write_all_or_nothing(kind: Kind) {
    let backend = Backend::new(kind);
    let store = backend.store();
    create(store, "g", &header(), "organiser", None).unwrap();
    let mut r = Recorder::load(store, "g").unwrap();
    let batch = vec![
        sub("p1", combat("p2", "A", "D")),
        sub("p1", tactic("Fight")),
        sub("p2", counter("Cancel", 2)),
        sub("p1", counter("Cancel", 3)),
    ];
    let (head, syncs) = (store.head("g").unwrap(), store.syncs());
    let mut refused = batch.clone();
    refused.push(sub("nobody", json!({"type": "pass"})));
    let (at, err) = r.append_batch(&refused, Some(1)).unwrap_err();
    assert_eq!(at, 4, "the refused event is named");
    assert!(matches!(err, RecordError::Refused(_)), "{err}");
    assert_eq!((store.head("g").unwrap(), store.syncs()), (head, syncs), "nothing stored, nothing synced");

    let done = r.append_batch(&batch[..2], Some(1)).unwrap();
    assert_eq!(done.iter().map(|d| (d.event.seq, d.duplicate)).collect::<Vec<_>>(), [(1, false), (2, false)]);
    assert_eq!(store.syncs(), syncs + 1, "one sync for the batch");
    // The answer was lost; the client sends the whole batch again, longer.
    let again = r.append_batch(&batch, Some(1)).unwrap();
    let seqs: Vec<_> = again.iter().map(|d| (d.event.seq, d.duplicate)).collect();
    assert_eq!(seqs, [(1, true), (2, true), (3, false), (4, false)]);
    assert_eq!(
        again[..2].iter().map(|d| &d.event).collect::<Vec<_>>(),
        done.iter().map(|d| &d.event).collect::<Vec<_>>()
    );
    assert_eq!(store.syncs(), syncs + 2);
    assert_eq!(again[3].view, r.table().view());
    // Not a retry: other actions at a stale seq are a conflict.
    let (_, err) = r.append_batch(&[sub("p2", tactic("Fight"))], Some(2)).unwrap_err();
    assert!(matches!(err, RecordError::Conflict { expected: 2, next: 5 }), "{err}");

    // A judge rewinds to seq 2 and play goes on from there, in one batch.
    let two = store.get("g", 2).unwrap().unwrap();
    let rewind =
        json!({"type": "ruling", "kind": "rewind", "concerns": {"seq": 2, "hash": two.hash}, "reason": "misplay"});
    let done = r.append_batch(&[sub("Dana", rewind), sub("p2", counter("Cancel", 2))], Some(5)).unwrap();
    assert_eq!(done.len(), 2);
    let (v, _) = verify(&StoredGame::new(store, "g"), None).unwrap();
    assert_eq!((v.events, v.rewound), (7, vec![(3, 4)]));
}

/// Every event gets one position in the verifiable log, in the order the
/// events were stored across games, with no gap; the stored subtrees give
/// the root the leaves give; checkpoints are kept with the store and only
/// grow.
fn the_log_gives_every_event_one_position_in_the_order_stored(kind: Kind) {
    use arbiter::store::{LogNodes, checkpoints};
    use arbiter::tlog::merkle::{Frontier, leaf_hash, root};
    let backend = Backend::new(kind);
    let store = backend.store();
    create(store, "g", &header(), "organiser", None).unwrap();
    create(store, "h", &header(), "organiser", None).unwrap();
    let (mut g, mut h) = (Recorder::load(store, "g").unwrap(), Recorder::load(store, "h").unwrap());
    g.append(&sub("p1", combat("p2", "A", "D")), None).unwrap();
    h.append(&sub("p1", combat("p2", "B", "C")), None).unwrap();
    g.append(&sub("p1", tactic("Fight")), None).unwrap();
    h.append(&sub("p1", tactic("Fight")), None).unwrap();
    let order = [("g", 0), ("h", 0), ("g", 1), ("h", 1), ("g", 2), ("h", 2)];
    assert_eq!(store.log_size().unwrap(), order.len() as u64);
    let mut frontier = Frontier::default();
    for (i, (game, seq)) in order.iter().enumerate() {
        assert_eq!(store.log_leaf(i as u64).unwrap(), Some((game.to_string(), *seq)));
        assert_eq!(store.log_position(game, *seq).unwrap(), Some(i as u64));
        let bytes = arbiter::record::canonical_bytes(&store.get(game, *seq).unwrap().unwrap());
        assert_eq!(store.log_node(0, i as u64).unwrap(), leaf_hash(&bytes));
        frontier.push(leaf_hash(&bytes));
    }
    assert_eq!(store.log_leaf(order.len() as u64).unwrap(), None);
    assert_eq!(root(&LogNodes(store), order.len() as u64).unwrap(), frontier.root());
    let signer = checkpoints::signer(store, None, Some("test.example/log")).unwrap();
    let first = checkpoints::sign(store, &signer).unwrap();
    assert_eq!((first.checkpoint.size, first.new), (6, true));
    assert!(!checkpoints::sign(store, &signer).unwrap().new, "nothing new: the newest is given again");
    g.append(&sub("p2", counter("Cancel", 2)), None).unwrap();
    assert_eq!(checkpoints::sign(store, &signer).unwrap().checkpoint.size, 7);
    let kept: Vec<u64> = store.checkpoints().unwrap().iter().map(|r| r.checkpoint().unwrap().size).collect();
    assert_eq!(kept, [6, 7]);
    checkpoints::check(store).unwrap();
    assert_eq!(checkpoints::verify_log(store).unwrap().checkpoint, Some(7));
}

/// Settings: a swap happens only from what is there (of two racing, one
/// wins), and a prefix lists them in key order.
fn settings_swap_only_from_what_is_there(kind: Kind) {
    let backend = Backend::new(kind);
    let store = backend.store();
    assert_eq!(store.setting("token/a").unwrap(), None);
    assert!(store.swap_setting("token/a", None, Some(b"1")).unwrap());
    assert!(!store.swap_setting("token/a", None, Some(b"2")).unwrap(), "it is there now");
    assert!(!store.swap_setting("token/a", Some(b"9"), Some(b"2")).unwrap(), "not what is there");
    assert_eq!(store.setting("token/a").unwrap().as_deref(), Some(&b"1"[..]));
    assert!(store.swap_setting("token/a", Some(b"1"), Some(b"2")).unwrap());
    store.put_setting("token/b", b"3").unwrap();
    store.put_setting("tokens", b"not under the prefix").unwrap();
    store.put_setting("read/g", b"public").unwrap();
    assert_eq!(
        store.settings("token/").unwrap(),
        vec![("token/a".to_string(), b"2".to_vec()), ("token/b".to_string(), b"3".to_vec())]
    );
    assert!(store.swap_setting("token/a", Some(b"2"), None).unwrap(), "a swap to nothing removes it");
    assert_eq!(store.setting("token/a").unwrap(), None);
    // Eight racing to make one key: exactly one wins.
    let shared = backend.shared();
    let won: usize = (0..8)
        .map(|i| {
            let store = shared.clone();
            std::thread::spawn(move || store.swap_setting("organiser", None, Some(format!("{i}").as_bytes())).unwrap())
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap() as usize)
        .sum();
    assert_eq!(won, 1);
}

/// Snapshots are a cache beside the events: the latest at or before a seq
/// is found, and one deleted is gone.
fn snapshots_are_kept_found_and_deleted(kind: Kind) {
    let backend = Backend::new(kind);
    let store = backend.store();
    assert_eq!(store.snapshot("g", u64::MAX).unwrap(), None);
    store.put_snapshot("g", 10, b"ten").unwrap();
    store.put_snapshot("g", 20, &vec![7u8; 200_000]).unwrap();
    store.put_snapshot("h", 15, b"other game").unwrap();
    assert_eq!(store.snapshot("g", 9).unwrap(), None);
    assert_eq!(store.snapshot("g", 19).unwrap(), Some((10, b"ten".to_vec())));
    assert_eq!(store.snapshot("g", u64::MAX).unwrap().map(|(seq, b)| (seq, b.len())), Some((20, 200_000)));
    assert_eq!(store.snapshot_seqs("g").unwrap(), [10, 20]);
    store.delete_snapshot("g", 20).unwrap();
    assert_eq!(store.snapshot("g", u64::MAX).unwrap(), Some((10, b"ten".to_vec())));
    assert_eq!(store.snapshot_seqs("h").unwrap(), [15]);
}

on_both_backends!(
    the_log_gives_every_event_one_position_in_the_order_stored,
    settings_swap_only_from_what_is_there,
    snapshots_are_kept_found_and_deleted,
    appends_chain_and_read_back_verified,
    a_stale_expected_seq_is_a_conflict_and_a_retry_returns_the_stored_event,
    the_store_refuses_a_forking_append_even_from_a_second_writer,
    racing_writers_get_exactly_one_event_per_seq,
    the_store_checks_on_the_way_in,
    an_append_that_does_not_follow_the_head_stores_nothing,
    corruption_in_the_store_is_found_on_read,
    a_record_that_is_no_longer_legal_fails_verification,
    a_batch_is_one_durable_write_all_or_nothing,
);

/// A retry of an append that is stored but not yet durable (its appender
/// still waits for the sync, as the server's may) is answered only once
/// the append it repeats is durable: the retry's ticket covers it.
#[test]
fn a_retry_of_an_append_not_yet_durable_waits_for_its_sync() {
    let dir = tempfile::tempdir().unwrap();
    let store = arbiter::store::SledStore::open(dir.path()).unwrap();
    create(&store, "g", &header(), "organiser", None).unwrap();
    let mut r = Recorder::load(&store, "g").unwrap();
    let action = || sub("p1", combat("p2", "A", "D"));
    let stored = r.store_batch(&[action()], Some(1)).map_err(|(_, e)| e).unwrap();
    let durable = store.log_size().unwrap();
    let retry = r.store_batch(&[action()], Some(1)).map_err(|(_, e)| e).unwrap();
    assert_ne!(retry.ticket, arbiter::store::Ticket::DURABLE, "the event it repeats is not durable yet");
    let ticket = retry.ticket;
    let again = r.acknowledge(retry, store.wait_durable(ticket)).map_err(|(_, e)| e).unwrap();
    assert!(again[0].duplicate);
    assert_eq!(store.log_size().unwrap(), durable + 1, "answered once the event it repeats is durable");
    let ticket = stored.ticket;
    let first = r.acknowledge(stored, store.wait_durable(ticket)).map_err(|(_, e)| e).unwrap();
    assert_eq!(first[0].event, again[0].event);
}

/// A sled `db` swapped for another store's: the open says what it found (the
/// database is not the one the checkpoints were signed for, and which event
/// differs), not that checkpoints were removed; and checkpoints removed
/// from the file are said as that.
#[test]
fn a_swapped_sled_db_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (dir.path().join("a"), dir.path().join("b"), dir.path().join("c"));
    let new = |d: &std::path::Path, game: &str| {
        let out = arbiter(d, &["new", game, "--ruleset", "doomtrooper", "--seat", "p1=A", "--seat", "p2=B"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(arbiter(d, &["checkpoint"]).status.success());
    };
    new(&a, "g");
    new(&b, "g");
    new(&b, "h");
    std::fs::create_dir_all(&c).unwrap();
    for f in std::fs::read_dir(&b).unwrap() {
        let f = f.unwrap();
        if f.file_type().unwrap().is_file() {
            std::fs::copy(f.path(), c.join(f.file_name())).unwrap();
        }
    }
    // b's sled files into a: a's checkpoints, b's database.
    for f in std::fs::read_dir(&a).unwrap() {
        let name = f.unwrap().file_name().to_string_lossy().into_owned();
        if name.starts_with("snap.") {
            std::fs::remove_file(a.join(name)).unwrap();
        }
    }
    for f in std::fs::read_dir(&b).unwrap() {
        let name = f.unwrap().file_name().to_string_lossy().into_owned();
        if name == "db" || name == "conf" || name.starts_with("snap.") {
            std::fs::copy(b.join(&name), a.join(&name)).unwrap();
        }
    }
    let out = arbiter(&a, &["head", "g"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("is not the one") && stderr.contains("g seq 0 has hash"), "{stderr}");
    assert!(!stderr.contains("checkpoints were removed"), "{stderr}");
    // c: b with its newest checkpoint removed from the file.
    let kept = std::fs::read_to_string(c.join("checkpoints")).unwrap();
    std::fs::write(c.join("checkpoints"), format!("{}\n", kept.lines().next().unwrap())).unwrap();
    let out = arbiter(&c, &["head", "g"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("checkpoints were removed"), "{stderr}");
}

/// A writer that dies between an acknowledgement and its checkpoint leaves
/// events in no signed checkpoint. `verify` names them while they are so;
/// `games` and `verify` sign a checkpoint of them first.
#[test]
fn an_acknowledged_tail_in_no_checkpoint_is_named_and_then_signed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    {
        // The library appends without signing: as a writer killed before it signed.
        let store = arbiter::store::SledStore::open(d).unwrap();
        create(&store, "g", &header(), "organiser", None).unwrap();
        let mut r = Recorder::load(&store, "g").unwrap();
        r.append(&sub("p1", combat("p2", "A", "D")), Some(1)).unwrap();
        store.close();
    }
    // No checkpoint can be signed (a key that cannot be read): verify says
    // which events are in none.
    let no_key = d.join("nowhere").join("log.key");
    let out = arbiter(d, &["verify", "g", "--log-key", no_key.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("events 0..1 of g are not yet in a signed checkpoint"), "{stdout}");
    let out = arbiter(d, &["--json", "verify", "g", "--log-key", no_key.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["unsigned"], json!({"from": 0, "to": 1}));
    // `games` signs it.
    let out = arbiter(d, &["games"]);
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("signed a checkpoint"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(d.join("checkpoints")).unwrap().lines().count(), 1);
    let out = arbiter(d, &["verify", "--all"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!stdout.contains("not yet in a signed checkpoint"), "{stdout}");
    assert!(stdout.contains("its root at 2 is the one checkpoint 2 signed"), "{stdout}");
    // Another writer's tail: `verify` signs it before it verifies.
    {
        let store = arbiter::store::SledStore::open(d).unwrap();
        let mut r = Recorder::load(&store, "g").unwrap();
        r.append(&sub("p1", tactic("Fight")), Some(2)).unwrap();
        store.close();
    }
    let out = arbiter(d, &["verify", "--all"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(String::from_utf8_lossy(&out.stderr).contains("signed a checkpoint"));
    assert!(stdout.contains("its root at 3 is the one checkpoint 3 signed"), "{stdout}");
}
