//! `verify` of a stored game reads its bytes on one thread and checks and
//! folds them on another once the record is longer than a batch. Whatever is
//! wrong with the stored bytes, it must say exactly what reading the decoded
//! events one at a time says (the same error, at the same seq), and pass the
//! same record.

use std::path::Path;

use arbiter::event::Event;
use arbiter::fold::Source;
use arbiter::record::{RecordError, Recorder, StoredGame, Submission, create, verify};
use arbiter::replay::{Told, replay};
use arbiter::store::{SledStore, chunk};

#[path = "../benches/common/mod.rs"]
mod common;

const GAME: &str = "g";
/// Several batches of the reading thread, and a read range boundary is not needed to see them.
const EVENTS: u64 = 1_000;

/// A stored game read only as decoded events: `verify`'s one-thread way.
struct Decoded<'a>(&'a StoredGame<'a>);

impl Source for Decoded<'_> {
    type Error = RecordError;
    fn events_from(&self, from: u64) -> Box<dyn Iterator<Item = Result<Event, RecordError>> + '_> {
        self.0.events_from(from)
    }
    fn hash_of(&self, seq: u64) -> Result<Option<String>, RecordError> {
        self.0.hash_of(seq)
    }
}

fn make(dir: &Path) {
    make_with(dir, arbiter::limits::SNAPSHOT_EVERY);
}

/// The game, with a snapshot kept every `every` events.
fn make_with(dir: &Path, every: u64) {
    let sample = common::Sample::load();
    let store = SledStore::open(dir).unwrap();
    create(&store, GAME, &sample.header, &sample.opened_by, None).unwrap();
    let mut recorder = Recorder::load_with(&store, GAME, every).unwrap();
    let batch: Vec<Submission> = (0..EVENTS as usize - 1).map(|i| sample.action(i)).collect();
    recorder.append_batch(&batch, None).map_err(|(i, e)| format!("action {i}: {e}")).unwrap();
    drop(recorder);
    store.close();
}

/// Both ways of verifying, as text (the error's words and its seq).
fn both(dir: &Path) -> (String, String) {
    let store = SledStore::open(dir).unwrap();
    let stored = StoredGame::new(&store, GAME);
    let say = |r: Result<_, RecordError>| match r {
        Ok((v, _)) => format!("ok {v:?}"),
        Err(e) => format!("{e:?}"),
    };
    let threads = say(verify(&stored, None));
    let one = say(verify(&Decoded(&stored), None));
    drop(stored);
    store.close();
    (threads, one)
}

/// Changes the stored bytes of `seq` behind arbiter's back, in its chunk
/// (`arbiter::store::chunk`; None: removes the event, so that the events
/// after it in the chunk each sit one seq early).
fn tamper(dir: &Path, seq: u64, change: impl FnOnce(Vec<u8>) -> Option<Vec<u8>>) -> Vec<u8> {
    rewrite(dir, seq, false, change)
}

/// As `tamper`; `put_back`: the bytes go in before the event at `seq`
/// (undoing a removal).
fn rewrite(dir: &Path, seq: u64, put_back: bool, change: impl FnOnce(Vec<u8>) -> Option<Vec<u8>>) -> Vec<u8> {
    let db = sled::Config::new().path(dir).segment_size(8 * 1024 * 1024).open().unwrap();
    let tree = db.open_tree(format!("game/{GAME}")).unwrap();
    let (c, i) = chunk::event_place(seq);
    let stored = tree.get(arbiter::store::chunk::events_key(c)).unwrap().map_or_else(Vec::new, |b| b.to_vec());
    let mut entries = chunk::Events::decode(stored).unwrap().entries();
    // A removed event is put back from the bytes the caller kept.
    let was = entries.get(i).map_or_else(Vec::new, |(_, b)| b.clone());
    let index = entries.get(i).map_or_else(|| entries[i - 1].0 + 1, |(index, _)| *index);
    match (change(was.clone()), put_back || was.is_empty()) {
        (Some(bytes), false) => entries[i] = (index, bytes),
        (Some(bytes), true) => entries.insert(i, (index, bytes)),
        (None, _) => drop(entries.remove(i)),
    }
    let mut changed = chunk::Events::default();
    for (index, bytes) in &entries {
        changed.push(*index, bytes);
    }
    tree.insert(arbiter::store::chunk::events_key(c), changed.bytes()).unwrap();
    db.flush().unwrap();
    drop(tree);
    drop(db);
    // sled lets go of its lock a moment after the drop.
    std::thread::sleep(std::time::Duration::from_millis(200));
    was
}

fn restore(dir: &Path, seq: u64, bytes: Vec<u8>, removed: bool) {
    assert!(!bytes.is_empty());
    rewrite(dir, seq, removed, |_| Some(bytes));
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap()
}

#[test]
fn a_pipelined_verify_says_what_reading_one_event_at_a_time_says() {
    let dir = tempfile::tempdir().unwrap();
    make(dir.path());
    let (threads, one) = both(dir.path());
    assert!(threads.starts_with("ok ") && threads.contains(&format!("events: {EVENTS}")), "{threads}");
    assert_eq!(threads, one);

    type Change = fn(Vec<u8>) -> Option<Vec<u8>>;
    let changes: [(&str, Change); 8] = [
        ("a changed actor (hash)", |b| Some(text(b).replacen("\"actor\":\"", "\"actor\":\"x", 1).into_bytes())),
        ("white space (not canonical)", |b| Some(text(b).replacen(',', ", ", 1).into_bytes())),
        ("keys out of order", |b| Some(text(b).replacen("{\"action\":", "{\"zz\":1,\"action\":", 1).into_bytes())),
        ("a float", |b| Some(text(b).replacen("\"seq\":", "\"seq\":1.5,\"seq2\":", 1).into_bytes())),
        ("a duplicate key", |b| Some(text(b).replacen("\"v\":1", "\"v\":1,\"v\":1", 1).into_bytes())),
        ("not JSON", |b| Some(b[..b.len() / 2].to_vec())),
        ("not UTF-8", |mut b| {
            b[10] = 0xFF;
            Some(b)
        }),
        ("a removed event (a gap)", |_| None),
    ];
    // In the first batch (read before any thread), in a later one, and the last event.
    for seq in [3, 300, 611, EVENTS - 1] {
        for (what, change) in changes {
            let was = tamper(dir.path(), seq, change);
            let (threads, one) = both(dir.path());
            restore(dir.path(), seq, was, what.contains("removed"));
            assert_eq!(threads, one, "{what} at seq {seq}");
            // Without the expected head, a record without its last event is a shorter record.
            let shorter = seq == EVENTS - 1 && what.contains("removed");
            assert_eq!(threads.starts_with("Broken"), !shorter, "{what} at seq {seq}: {threads}");
        }
    }
    // An event moved to another seq (its link and seq are then wrong), and an earlier one broken too: the first wins.
    let moved = tamper(dir.path(), 400, Some);
    let was = tamper(dir.path(), 401, |_| Some(moved.clone()));
    let first = tamper(dir.path(), 350, |b| Some(text(b).replacen("\"actor\":\"", "\"actor\":\"y", 1).into_bytes()));
    let (threads, one) = both(dir.path());
    assert_eq!(threads, one);
    assert!(threads.contains("seq: 350"), "{threads}");
    restore(dir.path(), 350, first, false);
    let (threads, one) = both(dir.path());
    assert_eq!(threads, one);
    assert!(threads.contains("seq: 401"), "{threads}");
    restore(dir.path(), 401, was, false);
    let (threads, one) = both(dir.path());
    assert_eq!(threads, one);
    assert!(threads.starts_with("ok "), "{threads}");
}

/// Replay reads, checks and folds on threads of its own as verify does. A
/// broken event that its first pass does not read (that pass starts from
/// the latest snapshot) ends the replay there, after every event before it
/// was shown, with the error verify gives for it; a replay that starts from
/// a snapshot after it, and stops before the end, reads nothing broken.
#[test]
fn a_replay_shows_every_event_before_a_broken_one_then_says_what_broke() {
    let dir = tempfile::tempdir().unwrap();
    make_with(dir.path(), 16);
    tamper(dir.path(), 300, |b| Some(text(b).replacen("\"actor\":\"", "\"actor\":\"x", 1).into_bytes()));
    let store = SledStore::open(dir.path()).unwrap();
    let stored = StoredGame::new(&store, GAME);
    let verified = format!("{:?}", verify(&stored, None).unwrap_err());
    let mut shown = Vec::new();
    let replayed = format!("{:?}", replay(&stored, 0, None, Told::Words, |s| shown.push(s.seq)).unwrap_err());
    assert_eq!(shown, (0..300).collect::<Vec<_>>(), "every event before the broken one, in order");
    assert_eq!(replayed, verified, "{verified}");
    assert!(replayed.contains("seq: 300"), "{replayed}");
    shown.clear();
    // Of the snapshots older than the two newest, one in `SNAPSHOT_SPARSE`
    // is kept: seq 512 is, and a replay from 600 starts there.
    replay(&stored, 600, Some(700), Told::Words, |s| shown.push(s.seq)).unwrap();
    assert_eq!(shown, (600..=700).collect::<Vec<_>>());
    drop(stored);
    store.close();
}
