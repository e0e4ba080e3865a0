//! Appends on PostgreSQL made on the server's async threads
//! (`Recorder::store_batch_async`, `Store::append_batch_async`): two
//! writers racing for one seq on one database, one wins and the other is
//! told a conflict, nothing is stored twice or half, and the loser's fold is
//! never left past what the store holds.

mod common;

use arbiter::record::{Recorder, StoredGame, Submission, create, verify};
use arbiter::store::{PostgresStore, Store};
use common::backend::TestDatabase;
use common::server::{Served, start_combat, war};
use common::*;
use serde_json::{Value, json};

/// A store of its own on `url`, for as long as the test runs (the async
/// append borrows its store for good, as the server's does).
fn open(url: &str) -> &'static dyn Store {
    Box::leak(Box::new(PostgresStore::open(url).unwrap()))
}

/// The game's view at its head, folded afresh from the database.
fn fresh_view(url: &str, game: &str) -> Value {
    let store = PostgresStore::open(url).unwrap();
    let recorder = Recorder::load(&store, game).unwrap();
    serde_json::to_value(recorder.table().view()).unwrap()
}

/// Every event of `game` read back checked (hash, and link to the one
/// before), then verified whole: their seqs from 0, with no gap.
fn assert_one_chain(url: &str, game: &str, last: u64) -> Vec<String> {
    let store = PostgresStore::open(url).unwrap();
    let events: Vec<_> = store.read(game, 0).unwrap().collect::<Result<_, _>>().unwrap();
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (0..=last).collect::<Vec<_>>(), "one event per seq, no gap");
    let (verified, _) = verify(&StoredGame::new(&store, game), None).unwrap();
    assert_eq!(verified.events, last + 1);
    // Every event has its place in the log, once.
    assert_eq!(store.log_size().unwrap(), last + 1);
    events.into_iter().map(|e| e.hash).collect()
}

/// Two recorders of one game on two stores (two servers' worth), both at
/// the head, append at the same seq at once: one is stored, the other is
/// told a conflict naming the new head, and its recorder, whose fold went
/// past the head, appends nothing more until loaded again. Loaded again,
/// its retry of the same action is answered as the one already stored, and
/// it goes on. Twenty rounds, so both orders happen.
#[test]
fn two_recorders_race_for_one_seq_and_one_wins() {
    if !common::has(common::Need::Postgres) {
        return;
    }
    const ROUNDS: u64 = 20;
    let db = TestDatabase::new();
    let (one, two) = (open(&db.url), open(&db.url));
    create(one, "g", &doomtrooper_header(), "Dana", None).unwrap();
    let sub = |actor: &str, action: Value| Submission { actor: actor.into(), action, at: None };
    let mut first = Recorder::load(one, "g").unwrap();
    for s in [sub("p1", combat("p2", "A", "D")), sub("p1", tactic("Fight"))] {
        first.append(&s, None).unwrap();
    }
    let mut second = Recorder::load(two, "g").unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let mut wins = [0, 0];
    for seq in 3..3 + ROUNDS {
        let (actor, action) = war(seq);
        let racing = [sub(actor, action.clone()), sub(actor, action)];
        let [a, b] = racing.clone();
        let (one_did, two_did) = runtime.block_on(async move {
            let one_did = tokio::spawn(async move {
                let result = first.store_batch_async(std::slice::from_ref(&a), Some(seq)).await;
                (first, result.map(|stored| stored.ticket))
            });
            let two_did = tokio::spawn(async move {
                let result = second.store_batch_async(std::slice::from_ref(&b), Some(seq)).await;
                (second, result.map(|stored| stored.ticket))
            });
            (one_did.await.unwrap(), two_did.await.unwrap())
        });
        let (won, (lost, lost_store, why), winner) = match (one_did, two_did) {
            ((r1, Ok(_)), (r2, Err((_, e)))) => (r1, (r2, two, e), 0),
            ((r1, Err((_, e))), (r2, Ok(_))) => (r2, (r1, one, e), 1),
            ((_, o1), (_, o2)) => panic!("at seq {seq}, exactly one wins: {o1:?} {o2:?}"),
        };
        wins[winner] += 1;
        let head = won.head().clone();
        assert_eq!(head.seq, seq);
        match why {
            arbiter::record::RecordError::Conflict { expected, next } => assert_eq!((expected, next), (seq, seq + 1)),
            e => panic!("the loser at seq {seq} is told a conflict, not {e}"),
        }
        assert!(lost.is_unfolded(), "the loser's fold went past the head: it appends no more");
        let mut lost = lost;
        let refused =
            lost.append(&racing[1 - winner], Some(seq + 1)).expect_err("an unfolded recorder appends nothing");
        assert_eq!(refused.code(), "io", "{refused}");
        // Loaded again: at the winner's head, and the same action retried
        // at the same seq is the one stored.
        let mut lost = Recorder::load(lost_store, "g").unwrap();
        assert_eq!(lost.head(), &head);
        let again = lost.append(&racing[1 - winner], Some(seq)).unwrap();
        assert!(again.duplicate && again.event.link() == head, "{again:?}");
        assert_eq!(lost.folder().len(), won.folder().len());
        (first, second) = match winner {
            0 => (won, lost),
            _ => (lost, won),
        };
    }
    assert_one_chain(&db.url, "g", 2 + ROUNDS);
    assert_eq!(
        serde_json::to_value(first.table().view()).unwrap(),
        fresh_view(&db.url, "g"),
        "both folds are the store's"
    );
    assert_eq!(serde_json::to_value(second.table().view()).unwrap(), fresh_view(&db.url, "g"));
    eprintln!("wins: {wins:?}");
}

/// Two servers on one database, racing through the API: a server whose
/// fold is behind the store is told a conflict with the store's head (409),
/// and its fold is not left advanced by the append it tried (its next
/// append at the right seq is stored, its state the store's); two clients
/// sending different actions at one seq, one to each server at once:
/// exactly one is stored, the other told 409 with the winner's head, and
/// its retry at the next seq is stored, and answered as a duplicate when
/// sent again to either server. The stream has one event per seq.
#[test]
fn two_servers_race_for_one_seq_through_the_api() {
    if !common::has(common::Need::Postgres) {
        return;
    }
    const ROUNDS: u64 = 8;
    let db = TestDatabase::new();
    let (a, b) = Served::two_on_database(&db.url);
    a.doomtrooper("g", "public");
    let tokens = [a.token("g", "seat", "p1"), a.token("g", "seat", "p2")];
    let token = |actor: &str| tokens[usize::from(actor == "p2")].clone();
    start_combat(&a, "g", &tokens[0]);
    // b folds the game here (its first append, at seq 3); a's fold stays
    // at seq 2, behind the store.
    let (actor, action) = war(3);
    let (status, by_b) = b.append("g", &token(actor), actor, action, 3);
    assert_eq!(status, 201, "{by_b}");
    // To a, seq 3 is next: it seals it there, the store refuses it.
    let (status, v) = a.append("g", &token(actor), actor, counter("Deflect", 2), 3);
    assert_eq!((status, v["error"]["code"].as_str()), (409, Some("conflict")), "{v}");
    assert_eq!(v["error"]["head"], json!({"seq": 3, "hash": by_b["event"]["hash"]}), "{v}");
    // a's fold is the store's, not the one it tried: seq 4 goes in.
    let (actor, action) = war(4);
    let (status, v) = a.append("g", &token(actor), actor, action, 4);
    assert_eq!(status, 201, "{v}");
    assert_eq!(v["view"], fresh_view(&db.url, "g"));
    let mut last = 4;
    // b is behind now: brought to the head by a refusal there (a seat
    // acting out of turn; its fold is read again from the store first).
    let behind = |s: &Served, last: u64| {
        let (actor, _) = war(last + 2);
        let (status, v) = s.append("g", &token(actor), actor, counter("Cancel", last), last + 1);
        assert_eq!((status, v["error"]["code"].as_str()), (422, Some("refused")), "{v}");
    };
    behind(&b, last);
    let servers = [&a, &b];
    let mut wins = [0, 0];
    for _ in 0..ROUNDS {
        let seq = last + 1;
        let (actor, _) = war(seq);
        let barrier = std::sync::Barrier::new(2);
        let answers: Vec<(u16, Value)> = std::thread::scope(|scope| {
            let racing: Vec<_> = [("Cancel", &a), ("Deflect", &b)]
                .into_iter()
                .map(|(card, s)| {
                    let (barrier, token) = (&barrier, token(actor));
                    scope.spawn(move || {
                        barrier.wait();
                        s.append("g", &token, actor, counter(card, seq - 1), seq)
                    })
                })
                .collect();
            racing.into_iter().map(|t| t.join().unwrap()).collect()
        });
        let won = match (answers[0].0, answers[1].0) {
            (201, 409) => 0,
            (409, 201) => 1,
            _ => panic!("at seq {seq}, exactly one wins: {answers:?}"),
        };
        wins[won] += 1;
        let (winner, loser) = (&answers[won].1, &answers[1 - won].1);
        assert_eq!(loser["error"]["head"], json!({"seq": seq, "hash": winner["event"]["hash"]}), "{loser}");
        assert_eq!(loser["error"]["next"], json!(seq + 1), "{loser}");
        // The loser's retry, at the head it was told.
        let (actor, action) = war(seq + 1);
        let (status, v) = servers[1 - won].append("g", &token(actor), actor, action.clone(), seq + 1);
        assert_eq!(status, 201, "{v}");
        assert_eq!(v["view"], fresh_view(&db.url, "g"));
        // Sent again (its answer lost), to either server, even to the one
        // whose fold is behind: the event stored, as a duplicate.
        for s in [servers[won], servers[1 - won]] {
            let (status, again) = s.append("g", &token(actor), actor, action.clone(), seq + 1);
            assert_eq!((status, &again["duplicate"]), (200, &json!(true)), "{again}");
            assert_eq!(again["event"], v["event"]);
        }
        last = seq + 1;
        // The winner is behind now: brought to the head for the next round.
        behind(servers[won], last);
    }
    let hashes = assert_one_chain(&db.url, "g", last);
    let through_api: Vec<String> = b.stored("g").into_iter().map(|(_, h)| h).collect();
    assert_eq!(through_api, hashes);
    eprintln!("wins: {wins:?}");
}
