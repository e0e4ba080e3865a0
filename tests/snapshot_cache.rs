//! Snapshots are a cache of the fold: for every ruleset, folding from a
//! snapshot gives byte for byte the state folding from seq 0 gives, every
//! answer (`state --at`, `replay --from`, `whatif`, a recorder's load) is
//! the same with them and after deleting them all, and a damaged or stale
//! snapshot is passed over, never trusted.

use std::collections::BTreeSet;

use arbiter::compare::{Record, whatif};
use arbiter::event::Event;
use arbiter::event::Header;
use arbiter::fold::{Folder, NoSnapshots, Source, fold_to};
use arbiter::limits::SNAPSHOT_SPARSE;
use arbiter::ops;
use arbiter::record::{RecordError, Recorder, StoredGame, Submission, create, import_from, verify_snapshots};
use arbiter::replay::{Told, replay};
use arbiter::store::{SledStore, Store};
use serde_json::{Value, json};

/// A small interval, so each sample has several snapshots.
const EVERY: u64 = 4;

/// Every ruleset this build knows, from the registry.
fn rulesets() -> Vec<&'static str> {
    arbiter::rules::Kind::ALL.iter().map(|k| k.name()).collect()
}

fn sample(ruleset: &str) -> (Submission, Vec<Submission>) {
    let path = format!("{}/examples/{ruleset}-sample.actions.jsonl", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).unwrap();
    let mut subs = text.lines().filter(|l| !l.trim().is_empty()).map(|l| Submission::parse(l).unwrap());
    let open = subs.next().unwrap();
    (open, subs.collect())
}

/// Stores the sample of `ruleset` as game `ruleset`: the first half one
/// append at a time, the rest as one batch (both keep snapshots).
fn record(store: &SledStore, ruleset: &str) {
    let (open, actions) = sample(ruleset);
    let header: Header = serde_json::from_value(open.action.clone()).unwrap();
    create(store, ruleset, &header, &open.actor, None).unwrap();
    let mut r = Recorder::load_with(store, ruleset, EVERY).unwrap();
    let half = actions.len() / 2;
    for sub in &actions[..half] {
        r.append(sub, None).unwrap();
    }
    r.append_batch(&actions[half..], None).unwrap();
}

/// The Doomtrooper sample with a note and a judge's rewind into the combat,
/// then the combat played again from there: snapshots then carry rewound
/// ranges and adjudication that stands inside one.
fn record_with_rulings(store: &SledStore) -> u64 {
    let (open, actions) = sample("doomtrooper");
    let header: Header = serde_json::from_value(open.action.clone()).unwrap();
    create(store, "ruled", &header, &open.actor, None).unwrap();
    let mut r = Recorder::load_with(store, "ruled", EVERY).unwrap();
    let target = 40u64;
    for sub in &actions[..60] {
        r.append(sub, None).unwrap();
    }
    let concerns = |seq: u64| json!({"seq": seq, "hash": store.get("ruled", seq).unwrap().unwrap().hash});
    let note = json!({"type": "note", "concerns": concerns(45), "text": "slow play"});
    r.append(&Submission { actor: "p2".into(), action: note, at: None }, None).unwrap();
    let rewind = json!({"type": "ruling", "kind": "rewind", "concerns": concerns(target),
        "reason": "the counter was played out of its window"});
    let rewound_at = r.append(&Submission { actor: "Dana".into(), action: rewind, at: None }, None).unwrap().event.seq;
    // The rest of the combat again, its references to events after the
    // target moved to where they are now.
    let by = rewound_at - target;
    let shift = |v: &mut Value| {
        if let Some(t) = v.as_u64().filter(|t| *t > target) {
            *v = (t + by).into();
        }
    };
    let again: Vec<Submission> = actions[target as usize..]
        .iter()
        .map(|sub| {
            let mut sub = sub.clone();
            if let Some(t) = sub.action.get_mut("target") {
                shift(t);
            }
            if let Some(Value::Array(list)) = sub.action.get_mut("counted") {
                list.iter_mut().for_each(shift);
            }
            sub
        })
        .collect();
    r.append_batch(&again, None).unwrap();
    rewound_at
}

fn delete_snapshots(store: &SledStore, game: &str) {
    for seq in store.snapshot_seqs(game).unwrap() {
        store.delete_snapshot(game, seq).unwrap();
    }
}

fn table_bytes(folder: &Folder) -> Vec<u8> {
    serde_json::to_vec(folder.table().unwrap()).unwrap()
}

/// Every answer that may start from a snapshot, for `game`.
fn answers(store: &SledStore, game: &str) -> Vec<Value> {
    let head = store.head(game).unwrap().unwrap().seq;
    let stored = StoredGame::new(store, game);
    let mut out = Vec::new();
    for seq in 0..=head {
        out.push(ops::state(store, game, Some(seq)).unwrap());
    }
    out.push(ops::state(store, game, None).unwrap());
    for from in [0, 1, EVERY, EVERY + 1, head.saturating_sub(3), head] {
        let mut shown = Vec::new();
        let rewound =
            replay(&stored, from, None, Told::WordsAndPaths, |s| shown.push(serde_json::to_value(s).unwrap())).unwrap();
        out.push(json!({"from": from, "shown": shown, "rewound": rewound}));
    }
    for skip in [head, head - 1, EVERY + 1, 2] {
        let w = whatif(&Record::Stored(StoredGame::new(store, game)), &BTreeSet::from([skip]), &[]).unwrap();
        out.push(serde_json::to_value(w).unwrap());
    }
    let r = Recorder::load(store, game).unwrap();
    out.push(json!({"head": r.head().seq, "table": r.table(), "rewound": r.folder().rewound()}));
    out
}

/// A store under `dir` with a game of each ruleset (named after it) and
/// one with rulings ("ruled").
fn every_ruleset_recorded(dir: &std::path::Path) -> SledStore {
    let store = SledStore::open(&dir.join("s")).unwrap();
    for ruleset in rulesets() {
        record(&store, ruleset);
    }
    record_with_rulings(&store);
    store
}

#[test]
fn folding_from_snapshots_gives_the_same_states_and_answers_for_every_ruleset() {
    let dir = tempfile::tempdir().unwrap();
    let store = every_ruleset_recorded(dir.path());
    for game in rulesets().into_iter().chain(["ruled"]) {
        let head = store.head(game).unwrap().unwrap().seq;
        let kept = store.snapshot_seqs(game).unwrap();
        let latest = head / EVERY * EVERY;
        let sparse = EVERY * SNAPSHOT_SPARSE;
        let want: Vec<u64> =
            (1..=head).filter(|s| s % EVERY == 0 && (s % sparse == 0 || *s + EVERY >= latest)).collect();
        assert_eq!(kept, want, "{game}: the two latest snapshots and one every {sparse} events");
        let stored = StoredGame::new(&store, game);
        for seq in 0..=head {
            let with = fold_to(&stored, seq).unwrap();
            let without = fold_to(&NoSnapshots(&stored), seq).unwrap();
            assert_eq!(table_bytes(&with), table_bytes(&without), "{game} seq {seq}");
            assert_eq!(with, without, "{game} seq {seq}: the fold's own bookkeeping too");
            if seq >= kept[0] {
                let Some((from, _)) = stored.snapshot(seq) else {
                    let (at, bytes) = store.snapshot(game, seq).unwrap().unwrap();
                    let hash = store.get(game, at).unwrap().unwrap().hash;
                    panic!("{game} seq {seq}: {:?}", Folder::from_snapshot(&bytes, at, &hash).err());
                };
                let nearest = kept.iter().rev().find(|s| **s <= seq).unwrap();
                assert_eq!(from.len(), nearest + 1, "{game}: the nearest snapshot is used");
            }
        }
        let (_, checked) = verify_snapshots(&store, game).unwrap();
        assert_eq!((checked.agree, checked.kept), (kept.len() as u64, kept.len() as u64), "{game}: {checked:?}");
        let with = answers(&store, game);
        delete_snapshots(&store, game);
        assert!(store.snapshot_seqs(game).unwrap().is_empty());
        assert!(stored.snapshot(u64::MAX).is_none());
        assert_eq!(with, answers(&store, game), "{game}: deleting the snapshots changes no answer");
    }
}

/// `answers` without the game's name (the only thing that tells two
/// games holding the same events apart).
fn unnamed(answers: Vec<Value>) -> Vec<Value> {
    answers
        .into_iter()
        .map(|mut a| {
            if let Some(o) = a.as_object_mut() {
                o.remove("game");
            }
            a
        })
        .collect()
}

#[test]
fn an_imported_game_keeps_the_snapshots_its_appends_kept_and_answers_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let store = every_ruleset_recorded(dir.path());
    for game in rulesets().into_iter().chain(["ruled"]) {
        let events: Vec<Event> = store.read(game, 0).unwrap().map(Result::unwrap).collect();
        let imported = format!("{game}-imported");
        import_from(&store, &imported, &events, EVERY).unwrap();
        let kept = store.snapshot_seqs(&imported).unwrap();
        assert!(kept.len() >= 2, "{game}: {kept:?}");
        assert_eq!(kept, store.snapshot_seqs(game).unwrap(), "{game}: the snapshots appends kept");
        let (_, checked) = verify_snapshots(&store, &imported).unwrap();
        assert_eq!((checked.agree, checked.kept), (kept.len() as u64, kept.len() as u64), "{game}: {checked:?}");
        let (latest, _) = StoredGame::new(&store, &imported).snapshot(u64::MAX).expect("a snapshot that checks out");
        assert_eq!(latest.len(), kept[kept.len() - 1] + 1, "{game}: the latest is read");
        assert_eq!(unnamed(answers(&store, &imported)), unnamed(answers(&store, game)), "{game}");
    }
}

#[test]
fn a_rewind_is_kept_in_the_snapshots_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(&dir.path().join("s")).unwrap();
    let rewound_at = record_with_rulings(&store);
    let stored = StoredGame::new(&store, "ruled");
    let (folder, _) = stored.snapshot(u64::MAX).unwrap();
    assert!(folder.len() > rewound_at);
    assert_eq!(folder.rewound(), &[(41, rewound_at - 1)]);
    assert!(folder.is_rewound(50) && !folder.is_rewound(61), "the note (seq 61) stands inside the range");
    let mut shown = Vec::new();
    replay(&stored, rewound_at - 2, Some(rewound_at), Told::WordsAndPaths, |s| shown.push(s.clone())).unwrap();
    assert_eq!(shown.iter().map(|s| s.rewound).collect::<Vec<_>>(), [true, false, false], "the note stands");
    assert_eq!(shown[0].seq, rewound_at - 2);
    assert_eq!(shown[2].kind, "ruling");
    let mut earlier = Vec::new();
    replay(&stored, 50, Some(51), Told::WordsAndPaths, |s| earlier.push(s.clone())).unwrap();
    assert!(earlier.iter().all(|s| s.rewound), "replay from a snapshot knows what a later rewind took back");
}

/// A replay to the head takes which events were rewound from the latest
/// snapshot only while no rewind follows it: here the rewind is among the
/// events after the latest snapshot, and every replay to the head, from
/// before the rewound range, within it and from the snapshot on, still
/// marks the rewound events (as the fold of the whole record does).
#[test]
fn a_rewind_after_the_latest_snapshot_is_known_to_a_replay_to_the_head() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(&dir.path().join("s")).unwrap();
    let (open, actions) = sample("doomtrooper");
    let header: Header = serde_json::from_value(open.action.clone()).unwrap();
    create(&store, "late", &header, &open.actor, None).unwrap();
    let mut r = Recorder::load_with(&store, "late", 16).unwrap();
    for sub in &actions[..54] {
        r.append(sub, None).unwrap();
    }
    let concerns = json!({"seq": 40, "hash": store.get("late", 40).unwrap().unwrap().hash});
    let rewind = json!({"type": "ruling", "kind": "rewind", "concerns": concerns, "reason": "out of its window"});
    let rewound_at = r.append(&Submission { actor: "Dana".into(), action: rewind, at: None }, None).unwrap().event.seq;
    assert_eq!(rewound_at, 55);
    let latest = *store.snapshot_seqs("late").unwrap().last().unwrap();
    assert!(
        (41..rewound_at).contains(&latest),
        "the latest snapshot ({latest}) is inside the range, before the rewind"
    );
    let stored = StoredGame::new(&store, "late");
    for from in [0, 45, latest + 1] {
        let mut shown = Vec::new();
        let ranges = replay(&stored, from, None, Told::Words, |s| shown.push((s.seq, s.rewound))).unwrap();
        assert_eq!(ranges, [(41, rewound_at - 1)], "from {from}");
        let want: Vec<_> = (from..=rewound_at).map(|seq| (seq, (41..rewound_at).contains(&seq))).collect();
        assert_eq!(shown, want, "from {from}");
    }
}

/// The body of a snapshot, changed by `edit`, with a checksum that matches.
fn edited(bytes: &[u8], edit: impl Fn(&mut Value)) -> Vec<u8> {
    let mut body: Value = serde_json::from_slice(&bytes[32..]).unwrap();
    edit(&mut body);
    let body = serde_json::to_vec(&body).unwrap();
    let mut out = blake3::hash(&body).as_bytes().to_vec();
    out.extend_from_slice(&body);
    out
}

#[test]
fn a_damaged_or_stale_snapshot_is_ignored_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(&dir.path().join("s")).unwrap();
    record(&store, "doomtrooper");
    let game = "doomtrooper";
    let kept = store.snapshot_seqs(game).unwrap();
    let (seq, other_seq) = (kept[kept.len() - 1], kept[0]);
    assert!(other_seq < seq, "{kept:?}");
    let good = store.snapshot(game, seq).unwrap().unwrap().1;
    let other = store.snapshot(game, other_seq).unwrap().unwrap().1;
    let hash = store.get(game, seq).unwrap().unwrap().hash;
    let folded = fold_to(&NoSnapshots(&StoredGame::new(&store, game)), seq).unwrap();
    delete_snapshots(&store, game);
    let want = answers(&store, game);
    let mut torn = good.clone();
    torn.truncate(good.len() / 2);
    let mut flipped = good.clone();
    let last = flipped.len() - 2;
    flipped[last] ^= 1;
    let bad: Vec<(&str, Vec<u8>)> = vec![
        ("garbage", b"garbage".to_vec()),
        ("torn", torn),
        ("a flipped bit", flipped),
        ("another seq's snapshot", other),
        ("the wrong hash", folded.snapshot(&"0".repeat(64))),
        ("another format", edited(&good, |b| b["format"] = 99.into())),
        ("another ruleset version", edited(&good, |b| b["ruleset_version"] = 99.into())),
        ("another ruleset", edited(&good, |b| b["ruleset"] = "wtactics".into())),
        ("a header of another version", edited(&good, |b| b["table"]["header"]["ruleset_version"] = 99.into())),
    ];
    for (what, bytes) in bad {
        assert!(Folder::from_snapshot(&bytes, seq, &hash).is_err(), "{what}");
        store.put_snapshot(game, seq, &bytes).unwrap();
        assert!(StoredGame::new(&store, game).snapshot(u64::MAX).is_none(), "{what} is passed over");
        assert_eq!(answers(&store, game), want, "{what} changes no answer");
        let (_, checked) = verify_snapshots(&store, game).unwrap();
        assert_eq!(checked.ignored.len(), 1, "{what}: {checked:?}");
        assert_eq!(checked.ignored[0].0, seq);
        delete_snapshots(&store, game);
    }
    // One that checks out but holds another state would be believed:
    // `verify --snapshots` finds it.
    let lying = edited(&good, |b| b["table"]["notes"] = json!([{"seq": 1, "by": "p1", "concerns": 0, "text": "x"}]));
    store.put_snapshot(game, seq, &lying).unwrap();
    match verify_snapshots(&store, game) {
        Err(RecordError::Broken { seq: at, .. }) => assert_eq!(at, seq),
        other => panic!("a snapshot with another state must fail verification: {other:?}"),
    }
    // The good one back: it checks out again.
    delete_snapshots(&store, game);
    store.put_snapshot(game, seq, &good).unwrap();
    let (_, checked) = verify_snapshots(&store, game).unwrap();
    assert_eq!((checked.agree, checked.ignored.len()), (1, 0));
}

#[test]
fn a_large_snapshot_is_kept_in_parts_not_in_a_blob_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(&dir.path().join("s")).unwrap();
    record(&store, "wtactics");
    // Larger than the quarter segment above which sled writes a node to a
    // blob file, which arbiter's sync does not expect.
    let big: Vec<u8> = (0..3 * 1024 * 1024u32).map(|i| (i % 251) as u8).collect();
    store.put_snapshot("wtactics", 10, &big).unwrap();
    store.put_setting("flush", b"now").unwrap();
    assert_eq!(store.snapshot("wtactics", 11).unwrap(), Some((10, big.clone())));
    assert_eq!(store.snapshot("wtactics", 9).unwrap().map(|(s, _)| s), Some(8));
    let blobs = store.dir().join("blobs");
    let files = std::fs::read_dir(&blobs).map(|d| d.count()).unwrap_or(0);
    assert_eq!(files, 0, "no blob files");
    store.delete_snapshot("wtactics", 10).unwrap();
    assert_eq!(store.snapshot("wtactics", 11).unwrap().map(|(s, _)| s), Some(8));
    assert_eq!(store.snapshot_seqs("wtactics").unwrap(), [8, 12]);
}
