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

/// Every event of `game`, the database's only game, read back checked
/// (hash, and link to the one before), then verified whole: their seqs
/// from 0, with no gap; each has its place in the log, once.
fn assert_one_chain(url: &str, game: &str, last: u64) -> Vec<String> {
    let hashes = assert_chain(url, game, last);
    assert_eq!(PostgresStore::open(url).unwrap().log_size().unwrap(), last + 1);
    hashes
}

/// Every event of `game` read back checked and verified whole: their seqs
/// from 0 to `last`, with no gap. Their hashes.
fn assert_chain(url: &str, game: &str, last: u64) -> Vec<String> {
    let store = PostgresStore::open(url).unwrap();
    let events: Vec<_> = store.read(game, 0).unwrap().collect::<Result<_, _>>().unwrap();
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (0..=last).collect::<Vec<_>>(), "one event per seq, no gap");
    let (verified, _) = verify(&StoredGame::new(&store, game), None).unwrap();
    assert_eq!(verified.events, last + 1);
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

/// An event sealed, with its canonical bytes.
type Sealed = (arbiter::event::Event, Vec<u8>);

/// The event that follows `head` in a Doomtrooper game, legal there (or
/// its event 0), sealed `later` ms from now (two sealed after one head
/// differ).
fn sealed(head: Option<&arbiter::event::Link>, later: i64) -> Sealed {
    use arbiter::event::{Draft, seal};
    let (actor, action) = match head.map(|h| h.seq + 1) {
        None => ("Dana", serde_json::to_value(doomtrooper_header()).unwrap()),
        Some(1) => ("p1", combat("p2", "A", "D")),
        Some(2) => ("p1", tactic("Fight")),
        Some(seq) => war(seq),
    };
    let draft = Draft { actor: actor.into(), action, at: None };
    seal(&draft, head, chrono::Utc::now() + chrono::Duration::milliseconds(later)).unwrap()
}

/// The event that follows `head`, sealed now.
fn next_event(head: Option<&arbiter::event::Link>) -> Sealed {
    sealed(head, 0)
}

/// Every append in `appends` queued at once (each `append_batch_async`
/// call queues its append before its answer is awaited), then each answer.
fn all_at_once(
    store: &'static dyn Store,
    appends: &[(&str, Vec<Sealed>)],
) -> Vec<Result<(), arbiter::store::AppendError>> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let waiting: Vec<_> = appends.iter().map(|(game, events)| store.append_batch_async(game, events)).collect();
    runtime.block_on(futures_util::future::join_all(waiting))
}

/// Appends of many games awaited at once are committed together: fewer
/// commits than appends, each acknowledged, each game's event stored after
/// its head and given its place in the log.
#[test]
fn appends_of_many_games_at_once_share_their_commits() {
    if !common::has(common::Need::Postgres) {
        return;
    }
    const GAMES: u64 = 32;
    let db = TestDatabase::new();
    let store = open(&db.url);
    let games: Vec<String> = (0..GAMES).map(|g| format!("g{g}")).collect();
    let mut appends = vec![];
    for game in &games {
        let e0 = create(store, game, &doomtrooper_header(), "Dana", None).unwrap();
        appends.push((game.as_str(), vec![next_event(Some(&e0.link()))]));
    }
    let commits = store.syncs();
    let answers = all_at_once(store, &appends);
    assert!(answers.iter().all(Result::is_ok), "{answers:?}");
    let shared = store.syncs() - commits;
    // Sent alone, each would be a commit of its own. Queued at once, all
    // but the first usually go in one (the first may go alone); on a busy
    // machine the test's thread may be paused between appends, and more
    // commits then share them, but never one each.
    assert!(shared < GAMES, "{shared} commits for {GAMES} appends at once");
    eprintln!("{shared} commits for {GAMES} appends at once");
    for (game, events) in &appends {
        assert_eq!(store.head(game).unwrap().unwrap(), events[0].0.link());
        assert_chain(&db.url, game, 1);
    }
    let log = PostgresStore::open(&db.url).unwrap();
    assert_eq!(log.log_size().unwrap(), 2 * GAMES, "every event has its place in the log, once");
}

/// Appends queued at once are each answered as they would be alone, in
/// whatever batch they go: one that follows its head is stored; a second
/// event 0 is refused as existing; a `prev` that is not the head's hash is
/// refused; two of one game go in the order they came. Then one sealed after a
/// stale head, queued with others: it is a conflict naming the head (the
/// primary key refuses its batch's statement, and each goes again alone).
/// Nothing refused is stored. Last, two of one game of which the first
/// cannot be checked in a batch's statement: they too go in the order
/// they came.
#[test]
fn appends_at_once_are_each_answered_as_alone() {
    if !common::has(common::Need::Postgres) {
        return;
    }
    use arbiter::event::Link;
    use arbiter::store::AppendError;
    let db = TestDatabase::new();
    let store = open(&db.url);
    let mut heads = std::collections::HashMap::new();
    for game in ["first", "fresh", "stale", "exists", "twice", "other_prev"] {
        let e0 = create(store, game, &doomtrooper_header(), "Dana", None).unwrap();
        heads.insert(game, e0.link());
    }
    // "stale" moves on beyond the head its next append is sealed after.
    let moved = next_event(Some(&heads["stale"]));
    store.append("stale", &moved.0, &moved.1).unwrap();
    let twice = next_event(Some(&heads["twice"]));
    let twice_again = next_event(Some(&twice.0.link()));
    let wrong_prev = Link { hash: moved.0.hash.clone(), ..heads["other_prev"].clone() };
    let first = next_event(Some(&heads["first"]));
    let appends = vec![
        ("first", vec![first.clone()]),
        ("fresh", vec![next_event(Some(&heads["fresh"]))]),
        ("exists", vec![next_event(None)]),
        ("twice", vec![twice.clone()]),
        ("new", vec![next_event(None)]),
        ("other_prev", vec![next_event(Some(&wrong_prev))]),
        ("twice", vec![twice_again.clone()]),
    ];
    let refused = ["stale", "exists", "other_prev"];
    let before: Vec<_> = refused.map(|g| store.head(g).unwrap()).into();
    let answers = all_at_once(store, &appends);
    let said: Vec<String> = answers.iter().map(|a| format!("{a:?}")).collect();
    assert!(answers[0].is_ok() && answers[1].is_ok(), "{said:?}");
    assert!(matches!(&answers[2], Err(AppendError::Exists(g)) if g == "exists"), "{said:?}");
    assert!(answers[3].is_ok() && answers[4].is_ok(), "{said:?}");
    assert!(matches!(&answers[5], Err(AppendError::Invalid(_))), "{said:?}");
    assert!(answers[6].is_ok(), "{said:?}");
    assert_eq!(store.head("twice").unwrap().unwrap(), twice_again.0.link());

    let stale = vec![
        ("first", vec![next_event(Some(&first.0.link()))]),
        ("stale", vec![next_event(Some(&heads["stale"]))]),
        ("new", vec![next_event(Some(&appends[4].1[0].0.link()))]),
    ];
    let answers = all_at_once(store, &stale);
    let said: Vec<String> = answers.iter().map(|a| format!("{a:?}")).collect();
    assert!(answers[0].is_ok() && answers[2].is_ok(), "{said:?}");
    assert!(
        matches!(&answers[1], Err(AppendError::Conflict { expected: 1, next: 2, head: Some(h) }) if *h == moved.0.link()),
        "{said:?}"
    );
    let after: Vec<_> = refused.map(|g| store.head(g).unwrap()).into();
    assert_eq!(after, before, "nothing refused is stored");
    for (game, last) in [("first", 2), ("fresh", 1), ("stale", 1), ("exists", 0), ("twice", 2), ("new", 1)] {
        assert_chain(&db.url, game, last);
    }

    // A game kept since 1600, whose next append's time does not fit the
    // column the statement checks (so it goes alone), then one of today:
    // still in the order they came.
    let long_ago = chrono::DateTime::parse_from_rfc3339("1600-01-01T00:00:00Z").unwrap().with_timezone(&chrono::Utc);
    let draft = |actor: &str, action: Value| arbiter::event::Draft { actor: actor.into(), action, at: None };
    let old = arbiter::event::seal(&draft("Dana", serde_json::to_value(doomtrooper_header()).unwrap()), None, long_ago)
        .unwrap();
    store.append("old", &old.0, &old.1).unwrap();
    let then = arbiter::event::seal(&draft("p1", combat("p2", "A", "D")), Some(&old.0.link()), long_ago).unwrap();
    let today = next_event(Some(&then.0.link()));
    let in_order = vec![
        ("first", vec![next_event(Some(&stale[0].1[0].0.link()))]),
        ("old", vec![then]),
        ("old", vec![today.clone()]),
        ("fresh", vec![next_event(Some(&appends[1].1[0].0.link()))]),
    ];
    let answers = all_at_once(store, &in_order);
    assert!(answers.iter().all(Result::is_ok), "{answers:?}");
    assert_eq!(store.head("old").unwrap().unwrap(), today.0.link());
    assert_chain(&db.url, "old", 2);
}

/// Two servers' batches, each with appends of games of its own, race for
/// one seq of a shared game: exactly one of the two is stored, the other is
/// told a conflict naming it, and every other append of both batches is
/// stored. Ten rounds, so both orders happen, and the batch whose
/// statement the primary key refused is made again append by append.
#[test]
fn two_servers_batches_race_for_one_seq() {
    if !common::has(common::Need::Postgres) {
        return;
    }
    use arbiter::store::AppendError;
    const ROUNDS: u64 = 10;
    let db = TestDatabase::new();
    let (one, two) = (open(&db.url), open(&db.url));
    let e0 = create(one, "shared", &doomtrooper_header(), "Dana", None).unwrap();
    let mut head = e0.link();
    let mut own = vec![];
    for game in ["one0", "one1", "two0", "two1"] {
        own.push(create(one, game, &doomtrooper_header(), "Dana", None).unwrap().link());
    }
    let mut wins = [0, 0];
    for round in 1..=ROUNDS {
        let racing = [sealed(Some(&head), 0), sealed(Some(&head), 1)];
        let theirs: Vec<_> = own.iter().map(|h| next_event(Some(h))).collect();
        let batches = [
            vec![
                ("one0", vec![theirs[0].clone()]),
                ("shared", vec![racing[0].clone()]),
                ("one1", vec![theirs[1].clone()]),
            ],
            vec![
                ("two0", vec![theirs[2].clone()]),
                ("shared", vec![racing[1].clone()]),
                ("two1", vec![theirs[3].clone()]),
            ],
        ];
        let barrier = std::sync::Barrier::new(2);
        let answers: Vec<_> = std::thread::scope(|scope| {
            let sent: Vec<_> = [(one, &batches[0]), (two, &batches[1])]
                .into_iter()
                .map(|(store, batch)| {
                    let barrier = &barrier;
                    scope.spawn(move || {
                        barrier.wait();
                        all_at_once(store, batch)
                    })
                })
                .collect();
            sent.into_iter().map(|t| t.join().unwrap()).collect()
        });
        for (batch, answered) in answers.iter().enumerate() {
            assert!(answered[0].is_ok() && answered[2].is_ok(), "server {batch}, round {round}: {answered:?}");
        }
        let winner = match (&answers[0][1], &answers[1][1]) {
            (Ok(()), Err(AppendError::Conflict { expected, next, head: Some(h) })) => {
                assert_eq!((*expected, *next, h), (round, round + 1, &racing[0].0.link()));
                0
            }
            (Err(AppendError::Conflict { expected, next, head: Some(h) }), Ok(())) => {
                assert_eq!((*expected, *next, h), (round, round + 1, &racing[1].0.link()));
                1
            }
            (a, b) => panic!("round {round}: exactly one wins, the other told a conflict: {a:?} {b:?}"),
        };
        wins[winner] += 1;
        head = racing[winner].0.link();
        own = theirs.iter().map(|(e, _)| e.link()).collect();
    }
    assert_chain(&db.url, "shared", ROUNDS);
    for game in ["one0", "one1", "two0", "two1"] {
        assert_chain(&db.url, game, ROUNDS);
    }
    eprintln!("wins: {wins:?}");
}
