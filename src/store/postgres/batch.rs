//! The server's appends of many games committed together: one statement,
//! so one transaction and one WAL flush, for every append waiting when the
//! last one went out (group commit, as sled's flush is shared by the
//! appends that wait on it).
//!
//! How (`Store::append_batch_async` on PostgreSQL):
//! 1. Each append waits in a queue (`Waiting`), with the channel its
//!    answer comes back on.
//! 2. One task (`batcher`) takes the first append waiting, and with it every
//!    other one already waiting, up to `MAX_APPENDS` appends and about
//!    `MAX_BYTES`. It sends them as one statement (`APPEND_MANY`): each
//!    game's events go in only if they follow that game's head, the check
//!    `APPEND` makes for one game. It sends one statement at a time: the
//!    appends that arrive while one is under way wait, and go out together
//!    in the next. That wait is what makes the batches; under light load
//!    each append finds none under way and goes at once, alone.
//! 3. The answers:
//!    - A game whose events went in is acknowledged once the statement's
//!      commit returned (`synchronous_commit = on`, as for one append).
//!    - A game whose check failed (its events do not follow its head: a
//!      second event 0, a `prev` that is not the head's; or a head kept
//!      before schema version 2) is appended again alone (`append_events`),
//!      after the batch, which reads its head and says why, as for one.
//!    - The same game twice in a batch (never from the server, whose game
//!      lock lets one append of a game out at a time) goes alone after it.
//!    - If the database refused the statement (a seq already stored: an
//!      append sealed after a stale head, or two servers raced for one seq,
//!      and the primary key refused it), nothing of it was stored, and each
//!      append is made again alone, so each gets its own answer. If no
//!      answer came, or the database ended the session (it may have
//!      committed first), each is told so, as one alone would be: the
//!      outcome is unknown, and a retry at the same expected seq is safe.
//!
//! Gap-free log positions are untouched: the sequencer takes events by
//! (xid, game, seq), and a batch's events share one xid as one game's
//! batch always did.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use futures_util::future::join_all;
use tokio::sync::{mpsc, oneshot};

use super::columns::{Check, Rows};
use super::{PostgresStore, append_events, append_io, big, follows_at, prepared, surely_refused, unconfirmed};
use crate::event::Event;
use crate::store::AppendError;

/// At most this many appends (games) in one statement, and about this many
/// bytes of events (no more are taken once a batch holds that many): a
/// statement and its answer stay bounded. (An append is at most
/// `limits::MAX_BATCH_EVENTS` events of `limits::MAX_EVENT_BYTES`.)
const MAX_APPENDS: usize = 256;
const MAX_BYTES: usize = 4 << 20;

/// Many games' appends in one statement, each game's events stored only if
/// they follow its head, checked as `APPEND` checks one game's (the event
/// before the first stored, with the first's `prev` as its hash and a time
/// not after the first's; for event 0, the game has none). Each row carries
/// its game's check (`first`, `prev`, `prev_at`: `Appending`), so a game's
/// rows go in all or none; the statement does not see its own rows, so the
/// check is against the heads stored before it. The primary key refuses a
/// seq already stored, and then the whole statement. Answers the game of
/// each row that went in.
const APPEND_MANY: &str = "INSERT INTO events (game, seq, xid, bytes, hash, at_ns) \
     SELECT e.game, e.seq, pg_current_xact_id()::text::bigint, e.bytes, e.hash, e.at_ns \
     FROM unnest($1::text[], $2::int8[], $3::bytea[], $4::bytea[], $5::int8[], $6::int8[], $7::bytea[], $8::int8[]) \
          AS e(game, seq, bytes, hash, at_ns, first, prev, prev_at) \
     WHERE CASE WHEN e.first = 0 THEN NOT EXISTS (SELECT FROM events WHERE game = e.game) \
           ELSE EXISTS (SELECT FROM events h WHERE h.game = e.game AND h.seq = e.first - 1 \
                        AND h.hash = e.prev AND h.at_ns <= e.prev_at) END \
     RETURNING game";

/// `APPEND_MANY`'s columns for many games' appends: the
/// events' own (`Rows`), and on each row its game and its game's check.
#[derive(Default)]
struct Appending<'a> {
    games: Vec<&'a str>,
    rows: Rows<'a>,
    firsts: Vec<i64>,
    prevs: Vec<Vec<u8>>,
    prev_ats: Vec<i64>,
}

impl<'a> Appending<'a> {
    /// `game`'s `events` after those already here, with their `check`.
    fn push(&mut self, game: &'a str, events: &'a [(Event, Vec<u8>)], (prev, prev_at): Check) {
        let first = events.first().map_or(0, |(e, _)| big(e.seq));
        for _ in events {
            self.games.push(game);
            self.firsts.push(first);
            self.prevs.push(prev.clone());
            self.prev_ats.push(prev_at);
        }
        self.rows.extend(events);
    }

    fn params(&self) -> [&(dyn tokio_postgres::types::ToSql + Sync); 8] {
        let r = &self.rows;
        [&self.games, &r.seqs, &r.bytes, &r.hashes, &r.ats, &self.firsts, &self.prevs, &self.prev_ats]
    }
}

/// One game's append waiting to go out: its events (checked by
/// `check_incoming`), the last one's seq, and where its answer goes.
pub(super) struct Waiting {
    pub(super) game: String,
    pub(super) events: Vec<(Event, Vec<u8>)>,
    pub(super) last: u64,
    pub(super) done: oneshot::Sender<Result<(), AppendError>>,
}

impl Waiting {
    fn bytes(&self) -> usize {
        self.events.iter().map(|(_, b)| b.len()).sum()
    }

    fn answer(self, outcome: Result<(), AppendError>) {
        // The server may have stopped waiting (its client went away): the
        // append's outcome stands either way.
        let _ = self.done.send(outcome);
    }
}

/// Starts `store`'s batcher on its runtime; appends are sent to it. (The
/// queue needs no bound of its own: each append in it is a request the
/// server is answering, which the server's own limits bound.)
pub(super) fn start(store: &'static PostgresStore) -> mpsc::UnboundedSender<Waiting> {
    let (queue, waiting) = mpsc::unbounded_channel();
    store.runtime().spawn(batcher(store, waiting));
    queue
}

/// Takes the appends waiting, as many as one statement holds, and commits
/// them; then again. Ends with the store.
///
/// One statement at a time, not more: at 64 tables on one server, two or
/// three under way at once made smaller batches (10 and 7 appends against
/// 15), so more database work per append, and no more appends a second
/// (measured side by side with pgbench).
async fn batcher(store: &'static PostgresStore, mut waiting: mpsc::UnboundedReceiver<Waiting>) {
    loop {
        let Some(first) = waiting.recv().await else { return };
        let mut bytes = first.bytes();
        let mut batch = vec![first];
        while batch.len() < MAX_APPENDS && bytes < MAX_BYTES {
            let Ok(next) = waiting.try_recv() else { break };
            bytes += next.bytes();
            batch.push(next);
        }
        commit(store, batch).await;
    }
}

/// Commits `batch` and answers each append in it (see the module's comment).
async fn commit(store: &'static PostgresStore, batch: Vec<Waiting>) {
    // Into the statement: the first append of each game, if its check can
    // be made there. The rest go alone, after it: a game's later appends
    // always do, so that each game's go in the order they came.
    let mut seen = HashSet::new();
    let (mut together, mut alone) = (Vec::new(), Vec::new());
    for w in batch {
        let check = if seen.insert(w.game.clone()) { follows_at(&w.events) } else { None };
        match check {
            Some(check) => together.push((w, check)),
            None => alone.push(w),
        }
    }
    // In the order of their games: two servers' statements that hold two
    // same games then insert them in one order, and one waits for the
    // other rather than both for each other (a deadlock PostgreSQL breaks
    // only after a second).
    together.sort_by(|(a, _), (b, _)| a.game.cmp(&b.game));
    if together.len() < 2 {
        return in_order(store, together.into_iter().map(|(w, _)| w).chain(alone)).await;
    }
    let outcome = append_many(store, &together).await;
    let together = together.into_iter().map(|(w, _)| w);
    match outcome {
        Ok((stored, took)) => {
            let (went_in, missed): (Vec<Waiting>, Vec<Waiting>) =
                together.partition(|w| stored.get(&w.game) == Some(&w.events.len()));
            // A game's rows go in all or none (one check for all of them).
            assert_eq!(went_in.len(), stored.len(), "every game stored is one of the batch's, whole");
            store.committed_many(went_in.iter().map(|w| (w.game.clone(), w.last, w.events.len())), took);
            for w in went_in {
                w.answer(Ok(()));
            }
            in_order(store, missed.into_iter().chain(alone)).await;
        }
        // Refused by the database: nothing of the statement was stored.
        Err(Failed::Refused) => in_order(store, together.chain(alone)).await,
        Err(Failed::Told(e)) => {
            for w in together {
                w.answer(Err(again(&e)));
            }
            in_order(store, alone).await;
        }
    }
}

/// Why a batch's statement stored nothing, or may have.
enum Failed {
    /// The database refused it (a seq already stored, say): nothing was
    /// stored, and each append made alone gets its own answer.
    Refused,
    /// What to tell each append: no statement was sent (no connection),
    /// or no answer came (the outcome unknown, as for one append alone).
    Told(AppendError),
}

/// `e` again, for the next append of a batch (`append_io` and
/// `unconfirmed` make only these two kinds).
fn again(e: &AppendError) -> AppendError {
    match e {
        AppendError::Unavailable(why) => AppendError::Unavailable(why.clone()),
        AppendError::Io(why) => AppendError::Io(why.clone()),
        other => AppendError::Io(other.to_string()),
    }
}

/// Appends made alone, in the order they came for each game (one after
/// another), and different games' at once.
async fn in_order(store: &'static PostgresStore, appends: impl IntoIterator<Item = Waiting>) {
    let mut games: Vec<Vec<Waiting>> = vec![];
    let mut at: HashMap<String, usize> = HashMap::new();
    for w in appends {
        match at.get(&w.game) {
            Some(&i) => games[i].push(w),
            None => {
                at.insert(w.game.clone(), games.len());
                games.push(vec![w]);
            }
        }
    }
    join_all(games.into_iter().map(|one_game| async move {
        for w in one_game {
            append_alone(store, w).await;
        }
    }))
    .await;
}

/// One append made alone, as without batches (`append_events`), answered.
async fn append_alone(store: &'static PostgresStore, w: Waiting) {
    let outcome = append_events(&store.pool, &w.game, &w.events).await;
    let outcome = outcome.map(|took| store.committed(w.game.clone(), w.last, w.events.len(), took));
    w.answer(outcome);
}

/// Sends `APPEND_MANY` for `batch`, each append with its check; how many rows
/// of each game went in, and how long the statement (with its commit) took.
async fn append_many(
    store: &'static PostgresStore,
    batch: &[(Waiting, Check)],
) -> Result<(HashMap<String, usize>, Duration), Failed> {
    let mut appending = Appending::default();
    for (w, check) in batch {
        appending.push(&w.game, &w.events, check.clone());
    }
    let client = store.pool.get().await.map_err(|e| Failed::Told(append_io(e)))?;
    let statement = prepared(&client, APPEND_MANY).await.map_err(|e| Failed::Told(append_io(e)))?;
    let began = std::time::Instant::now();
    let rows = client.query(&statement, &appending.params()).await.map_err(|e| match surely_refused(&e) {
        true => Failed::Refused,
        false => Failed::Told(AppendError::Unavailable(unconfirmed(&e))),
    })?;
    let took = began.elapsed();
    let mut stored = HashMap::new();
    for row in &rows {
        *stored.entry(row.get::<_, String>(0)).or_insert(0) += 1;
    }
    Ok((stored, took))
}
