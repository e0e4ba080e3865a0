//! What replay says changed at each event is exactly the difference between
//! the state before it and the state after it, for every ruleset, from any
//! first seq to any last: replay keeps one copy of the state before each
//! event, compares it with the state after member by member, writing only
//! the members that differ and passing over what successive states share (a
//! Doomtrooper game's last finished combat, compared by address), brings
//! the copy up to that state by copying only what changed, and draws boards
//! on another thread, and none of that may change an answer. The reference
//! here folds on one thread and compares the two states as
//! `serde_json::Value`s, each written whole.

use arbiter::delta::{Change, Differ, Found, diff};
use arbiter::event::Header;
use arbiter::fold::Folder;
use arbiter::record::{Recorder, StoredGame, Submission, create};
use arbiter::replay::{Shown, Told, replay};
use arbiter::rules::{Kept, Table};
use arbiter::store::{SledStore, Store};
use serde_json::{Value, json};

/// Each ruleset's sample, and the Doomtrooper sample with adjudication
/// (`RULED`).
const GAMES: &[&str] = &["doomtrooper", "wtactics", "riftbound", "rawdeal", "gurps", RULED];

/// The Doomtrooper sample with, after event 60, a note, a penalty and a
/// judge added (the live state's notes, penalties and judges, and a header
/// that changes under the board), and at its end a judge's rewind into the
/// first combat (a state that changes almost whole).
const RULED: &str = "doomtrooper-ruled";

fn record(store: &SledStore, game: &str) {
    let ruleset = game.strip_suffix("-ruled").unwrap_or(game);
    let path = format!("{}/examples/{ruleset}-sample.actions.jsonl", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).unwrap();
    let mut subs = text.lines().filter(|l| !l.trim().is_empty()).map(|l| Submission::parse(l).unwrap());
    let open = subs.next().unwrap();
    let header: Header = serde_json::from_value(open.action.clone()).unwrap();
    create(store, game, &header, &open.actor, None).unwrap();
    // Snapshots every 16 events: replay from a seq past one starts there.
    let mut r = Recorder::load_with(store, game, 16).unwrap();
    let subs: Vec<Submission> = subs.collect();
    if game != RULED {
        r.append_batch(&subs, None).unwrap();
        return;
    }
    let concerns = |seq: u64| json!({"seq": seq, "hash": store.get(game, seq).unwrap().unwrap().hash});
    let act = |r: &mut Recorder, actor: &str, action: Value| {
        r.append(&Submission { actor: actor.into(), action, at: None }, None).unwrap();
    };
    r.append_batch(&subs[..60], None).unwrap();
    act(&mut r, "p2", json!({"type": "note", "concerns": concerns(45), "text": "slow play"}));
    act(
        &mut r,
        "Dana",
        json!({"type": "ruling", "kind": "penalty", "concerns": concerns(45), "reason": "slow play",
        "rule": "tournament policy 3.1", "seat": "p2", "infraction": "slow play", "penalty": "warning", "fix": "none"}),
    );
    act(
        &mut r,
        "Dana",
        json!({"type": "ruling", "kind": "add_judge", "concerns": concerns(0),
        "reason": "floor judge arrives", "judge": "Eve"}),
    );
    // The sample's later events name earlier ones by seq: shifted past the three above.
    let shifted: Vec<Submission> = subs[60..]
        .iter()
        .map(|sub| {
            let mut sub = sub.clone();
            if let Some(t) = sub.action.get_mut("target").filter(|t| t.as_u64() > Some(60)) {
                *t = (t.as_u64().unwrap() + 3).into();
            }
            if let Some(Value::Array(list)) = sub.action.get_mut("counted") {
                for q in list.iter_mut().filter(|q| q.as_u64() > Some(60)) {
                    *q = (q.as_u64().unwrap() + 3).into();
                }
            }
            sub
        })
        .collect();
    r.append_batch(&shifted, None).unwrap();
    act(
        &mut r,
        "Eve",
        json!({"type": "ruling", "kind": "rewind", "concerns": concerns(40),
        "reason": "the counter was played out of its window"}),
    );
}

/// The state after each event, folded on one thread.
fn tables(store: &SledStore, game: &str) -> Vec<Table> {
    let source = StoredGame::new(store, game);
    let mut folder = Folder::new();
    let mut out = Vec::new();
    for event in store.read(game, 0).unwrap() {
        folder.push(&event.unwrap(), &source).unwrap();
        out.push(folder.table().unwrap().clone());
    }
    out
}

#[test]
fn replay_says_exactly_what_changed_between_successive_states() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    for ruleset in GAMES {
        record(&store, ruleset);
        let tables = tables(&store, ruleset);
        let states: Vec<Value> = tables.iter().map(Table::live_json).collect();
        let head = states.len() as u64 - 1;
        let want = |seq: u64| -> Vec<Change> {
            match seq {
                0 => vec![],
                _ => diff(&states[seq as usize - 1], &states[seq as usize]),
            }
        };
        // What changed on the board, from boards built afresh at every
        // event (replay builds one again only after a change it shows).
        let boards: Vec<_> = tables.iter().map(|t| t.board().unwrap()).collect();
        let said = |seq: u64| match seq {
            0 => None,
            _ => Some(boards[seq as usize].changes_since(&boards[seq as usize - 1])),
        };
        let source = StoredGame::new(&store, ruleset);
        for (from, to) in [(0, None), (1, None), (17, Some(40)), (head - 2, None), (head, Some(head))] {
            let mut shown = Vec::new();
            replay(&source, from, to, Told::WordsAndPaths, |s| shown.push(s.clone())).unwrap();
            // In words only, every event is shown as with the paths, but
            // for the paths (the folding thread keeps no values then).
            let mut in_words = Vec::new();
            replay(&source, from, to, Told::Words, |s| in_words.push(s.clone())).unwrap();
            assert_eq!(in_words.len(), shown.len(), "{ruleset} from {from} to {to:?}: as many in words");
            for (w, s) in in_words.iter().zip(&shown) {
                assert_eq!(w.changes, None, "{ruleset}: seq {} in words has no paths", w.seq);
                let with_paths = Shown { changes: None, ..s.clone() };
                assert_eq!(
                    serde_json::to_value(w).unwrap(),
                    serde_json::to_value(&with_paths).unwrap(),
                    "{ruleset}: seq {} in words as with the paths (replay from {from})",
                    w.seq
                );
            }
            let last = to.unwrap_or(head).min(head);
            let seqs: Vec<u64> = shown.iter().map(|s| s.seq).collect();
            assert_eq!(
                seqs,
                (from..=last).collect::<Vec<_>>(),
                "{ruleset} from {from} to {to:?}: every event, in order"
            );
            for s in &shown {
                let (at, seq) = (&tables[s.seq as usize], s.seq as usize);
                assert_eq!(
                    s.changes,
                    Some(want(s.seq)),
                    "{ruleset}: the changes at seq {} (replay from {from})",
                    s.seq
                );
                assert_eq!(s.said, said(s.seq), "{ruleset}: the board's changes at seq {} (replay from {from})", s.seq);
                // The step on each side and the actor by name, as the state after says them.
                assert_eq!(s.after, at.step(), "{ruleset}: the step after seq {seq} (replay from {from})");
                assert_eq!(s.before, seq.checked_sub(1).map(|b| tables[b].step()), "{ruleset}: the step before {seq}");
                assert_eq!(s.by, at.header.name_of(&s.actor), "{ruleset}: who made seq {seq} (replay from {from})");
            }
        }
        // A Doomtrooper game's last finished combat is shared between
        // states and compared by address until another ends: the sample
        // finishes more than one, so both cases are crossed.
        if *ruleset == "doomtrooper" {
            let finished: Vec<&Value> = states.iter().map(|s| &s["state"]["finished"]["count"]).collect();
            assert!(finished.last().and_then(|c| c.as_u64()).unwrap() >= 2, "the sample finishes two combats");
        }
        // The adjudication is in the states compared, and the rewind
        // changes most of the state.
        if *ruleset == RULED {
            let last = &states[head as usize];
            assert_eq!(last["judges"], json!(["Dana", "Eve"]));
            assert_eq!(last["notes"].as_array().map(Vec::len), Some(1));
            assert_eq!(last["penalties"].as_array().map(Vec::len), Some(1));
            let rewound: Vec<String> = want(head).into_iter().map(|c| c.path).collect();
            assert!(rewound.contains(&"state.combat".to_string()), "the rewind returns into a combat: {rewound:?}");
        }
    }
}

/// Any two states of a game, not only successive ones, compared member by
/// member, say what `diff` says of their JSON written whole: far apart,
/// most members differ (a combat begun or ended, a turn passed), so every
/// member list is crossed, the optional members present on one side only
/// included.
#[test]
fn changes_found_member_by_member_are_the_diff_of_the_whole_json_for_any_two_states() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    let mut differ = Differ::default();
    for ruleset in GAMES {
        record(&store, ruleset);
        let tables = tables(&store, ruleset);
        let states: Vec<Value> = tables.iter().map(Table::live_json).collect();
        let mut compared = 0;
        for i in 0..tables.len() {
            assert_eq!(tables[i].step(), tables[i].view().step, "{ruleset}: the step after seq {i}");
            for j in (0..tables.len()).step_by(7).chain([i.saturating_sub(1), i + 1]) {
                let Some(later) = tables.get(j) else { continue };
                let want = diff(&states[i], &states[j]);
                assert_eq!(
                    differ.changes(&tables[i].compared(), &later.compared()),
                    want,
                    "{ruleset}: from the state after seq {i} to after {j}"
                );
                compared += 1;
                // Replay's copy of the state after seq i, brought up to the
                // state after j (across combats, rewinds and rulings), is
                // that state as far as any comparison can tell.
                // What differed, handed over as replay hands it to the
                // thread that shows the events, compares to the same changes.
                let mut kept = Kept::of(&tables[i]);
                let found = kept.catch_up(later);
                assert_eq!(found.changes(&mut differ), want, "{ruleset}: what differed from {i} to {j}, compared");
                assert_eq!(
                    differ.changes(&kept.compared(), &later.compared()),
                    vec![],
                    "{ruleset}: {i} kept up to {j}"
                );
                let k = (j + 5) % tables.len();
                assert_eq!(
                    differ.changes(&kept.compared(), &tables[k].compared()),
                    diff(&states[j], &states[k]),
                    "{ruleset}: {i} kept up to {j}, then compared with {k}"
                );
                // Caught up keeping only where each member that differed
                // lies (replay in words): the same copy, and the same
                // answer to whether the board must be drawn again.
                let mut by_name = Kept::of(&tables[i]);
                let named = by_name.catch_up_into(later, Found::names_only(16));
                assert_eq!(
                    differ.changes(&by_name.compared(), &later.compared()),
                    vec![],
                    "{ruleset}: {i} kept up to {j} by name"
                );
                assert_eq!(
                    later.board_unchanged_by(&named),
                    later.board_unchanged_by(&found),
                    "{ruleset}: whether the board changed from {i} to {j}, by name"
                );
            }
        }
        assert!(compared > 3 * tables.len(), "{ruleset}: {compared} pairs");
    }
}

#[test]
fn replay_past_the_head_shows_nothing_and_a_short_range_stops_at_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let store = SledStore::open(dir.path()).unwrap();
    record(&store, "doomtrooper");
    let head = store.head("doomtrooper").unwrap().unwrap().seq;
    let source = StoredGame::new(&store, "doomtrooper");
    let mut shown = Vec::new();
    replay(&source, head + 1, None, Told::Words, |s| shown.push(s.seq)).unwrap();
    assert!(shown.is_empty());
    replay(&source, 5, Some(3), Told::Words, |s| shown.push(s.seq)).unwrap();
    assert!(shown.is_empty(), "to before from shows nothing");
    replay(&source, 3, Some(5), Told::Words, |s| shown.push(s.seq)).unwrap();
    assert_eq!(shown, vec![3, 4, 5]);
}
