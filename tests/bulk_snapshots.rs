//! A game stored whole, by `import`, `copy` or `fork`, keeps the snapshots its
//! appends kept (every `limits::SNAPSHOT_EVERY` events: the two latest and
//! the sparse ones), so that `replay --from` near its end and `state --at`
//! start from one as they do on the game appended; and its answers are the
//! appended game's. On both backends (`common::backend`).

mod common;

use arbiter::event::Event;
use arbiter::fold::Source;
use arbiter::record::{ExportBytes, Recorder, StoredGame, Submission, canonical_bytes, create, import, import_from};
use arbiter::replay::{Told, replay};
use arbiter::store::{SledStore, Store};
use common::backend::{Backend, Kind};
use serde_json::Value;

const SAMPLE: &str = include_str!("../examples/doomtrooper-sample.actions.jsonl");

/// Long enough for two snapshots kept at the default interval (after 2,000 and 3,000).
const EVENTS: u64 = 3_100;

/// The sample's i-th action when it is played over and over (it ends
/// between combats): the seqs its counters name shifted to its round.
fn action(actions: &[Submission], i: usize) -> Submission {
    let n = actions.len();
    let by = (i / n * n) as u64;
    let mut sub = actions[i % n].clone();
    if let Some(t) = sub.action.get_mut("target") {
        *t = (t.as_u64().unwrap() + by).into();
    }
    if let Some(Value::Array(list)) = sub.action.get_mut("counted") {
        for q in list {
            *q = (q.as_u64().unwrap() + by).into();
        }
    }
    sub
}

/// `game`: `EVENTS` events of Doomtrooper, appended in batches of 1,000.
fn appended(store: &dyn Store, game: &str) {
    let mut lines = SAMPLE.lines().filter(|l| !l.trim().is_empty()).map(|l| Submission::parse(l).unwrap());
    let open = lines.next().unwrap();
    let actions: Vec<Submission> = lines.collect();
    create(store, game, &serde_json::from_value(open.action).unwrap(), &open.actor, None).unwrap();
    let mut recorder = Recorder::load(store, game).unwrap();
    let mut i = 0;
    while (i as u64) + 1 < EVENTS {
        let end = (i + 1000).min(EVENTS as usize - 1);
        let batch: Vec<Submission> = (i..end).map(|k| action(&actions, k)).collect();
        recorder.append_batch(&batch, None).unwrap();
        i = end;
    }
}

fn events(store: &dyn Store, game: &str) -> Vec<Event> {
    store.read(game, 0).unwrap().map(Result::unwrap).collect()
}

/// `replay --from` near the end and at a snapshot, and `state --at` around
/// the snapshots, without the game's name.
fn answers(store: &dyn Store, game: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for from in [EVENTS - 10, 2_000, 2_001, 1_999] {
        let mut shown = Vec::new();
        replay(&StoredGame::new(store, game), from, None, Told::WordsAndPaths, |s| {
            shown.push(serde_json::to_value(s).unwrap())
        })
        .unwrap();
        out.push(Value::Array(shown));
    }
    for at in [Some(1_000), Some(2_000), Some(2_500), Some(3_000), Some(EVENTS - 1), None] {
        let mut state = arbiter::ops::state(store, game, at).unwrap();
        state.as_object_mut().unwrap().remove("game");
        out.push(state);
    }
    out
}

/// The latest snapshot that checks out is read, and it is the one kept last.
fn reads_its_latest_snapshot(store: &dyn Store, game: &str) {
    let (folder, _) = StoredGame::new(store, game).snapshot(u64::MAX).expect("a snapshot that checks out");
    assert_eq!(folder.len(), 3_001);
}

fn an_imported_game_has_the_appended_games_snapshots_and_answers(kind: Kind) {
    let backend = Backend::new(kind);
    let store = backend.store();
    appended(store, "appended");
    assert_eq!(store.snapshot_seqs("appended").unwrap(), [2_000, 3_000], "what appends keep");
    import(store, "imported", events(store, "appended")).unwrap();
    // As an export file's bytes are read: twice, never whole in memory.
    let export: Vec<u8> = events(store, "appended")
        .iter()
        .flat_map(|e| {
            let mut line = canonical_bytes(e);
            line.push(b'\n');
            line
        })
        .collect();
    import_from(store, "from-bytes", &ExportBytes(export), arbiter::limits::SNAPSHOT_EVERY).unwrap();
    let want = answers(store, "appended");
    for game in ["imported", "from-bytes"] {
        assert_eq!(store.snapshot_seqs(game).unwrap(), [2_000, 3_000], "{game}");
        reads_its_latest_snapshot(store, game);
        assert_eq!(answers(store, game), want, "{game}");
        let (_, checked) = arbiter::record::verify_snapshots(store, game).unwrap();
        assert_eq!((checked.agree, checked.kept), (2, 2), "{game}: {checked:?}");
    }
}

fn a_copied_game_has_the_sources_snapshots_and_answers(kind: Kind) {
    let dir = tempfile::tempdir().unwrap();
    let source = SledStore::open(dir.path()).unwrap();
    appended(&source, "appended");
    let backend = Backend::new(kind);
    let target = backend.store();
    arbiter::copy::copy(&source, target, None, |_| {}).unwrap();
    assert_eq!(target.snapshot_seqs("appended").unwrap(), source.snapshot_seqs("appended").unwrap());
    reads_its_latest_snapshot(target, "appended");
    assert_eq!(answers(target, "appended"), answers(&source, "appended"));
}

/// A fork at the head is the game again, and keeps its snapshots too (a
/// fork of a long game is replayed and diffed near its end).
fn a_forked_game_has_the_appended_games_snapshots_and_answers(kind: Kind) {
    let backend = Backend::new(kind);
    let store = backend.store();
    appended(store, "appended");
    arbiter::compare::fork(store, "appended", EVENTS - 1, "forked").unwrap();
    assert_eq!(store.snapshot_seqs("forked").unwrap(), [2_000, 3_000]);
    reads_its_latest_snapshot(store, "forked");
    assert_eq!(answers(store, "forked"), answers(store, "appended"));
}

on_both_backends!(
    an_imported_game_has_the_appended_games_snapshots_and_answers,
    a_copied_game_has_the_sources_snapshots_and_answers,
    a_forked_game_has_the_appended_games_snapshots_and_answers,
);

/// An export that reads otherwise from its second read on (a file changed
/// while it was imported): `then` instead of `first`.
struct Changing {
    first: Vec<Event>,
    then: Vec<Event>,
    reads: std::cell::Cell<u32>,
}

impl Source for Changing {
    type Error = std::convert::Infallible;
    fn events_from(&self, from: u64) -> Box<dyn Iterator<Item = Result<Event, Self::Error>> + '_> {
        self.reads.set(self.reads.get() + 1);
        let events = if self.reads.get() == 1 { &self.first } else { &self.then };
        Box::new(events.iter().skip(from as usize).cloned().map(Ok))
    }
}

#[test]
fn an_export_that_changes_between_its_two_reads_stores_nothing_unverified() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    appended(&store, "appended");
    appended(&store, "other");
    let (ours, other) = (events(&store, "appended"), events(&store, "other"));
    let import = |game: &str, then: Vec<Event>| {
        let changing = Changing { first: ours.clone(), then, reads: Default::default() };
        let err = import_from(&store, game, &changing, arbiter::limits::SNAPSHOT_EVERY).unwrap_err();
        assert!(err.to_string().contains("the export changed while it was imported"), "{err}");
        store.head(game).unwrap()
    };
    // Another game read the second time (other times, so other hashes):
    // its first batch is not what was verified, and nothing is stored.
    assert_eq!(import("swapped", other), None, "nothing stored");
    // Cut short the second time: the batches read whole are the ones
    // verified (their last hashes are), and stored; the rest is not.
    let head = import("cut", ours[..ours.len() - 1].to_vec()).expect("the whole batches");
    assert_eq!((head.seq, &head.hash), (2_999, &ours[2_999].hash));
}
