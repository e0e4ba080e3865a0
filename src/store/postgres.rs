//! The store on PostgreSQL, for an organiser who outgrows one machine:
//! several `arbiter serve` processes (venues, restarts without stopping the
//! tables) on one database. sled stays the embedded default.
//!
//! Layout (`migrations/postgres/`, applied at open by `migrate`): `events`
//! keyed by (game, seq), holding each event's exact canonical bytes, its
//! hash and time, and the id of the transaction that stored it; `log_leaves`, which event is at each
//! position of the verifiable log; `log_nodes`, the log's complete subtrees
//! above the leaves; `log_size`, one row; `settings`; `checkpoints`;
//! `snapshots`.
//!
//! Write path: one transaction per append or batch (READ COMMITTED), with
//! no lock that other games' appends wait on, and one round trip:
//! 1. One statement (`APPEND`, prepared once per connection) inserts the
//!    events only if they follow the game's head as `check_follows` would
//!    have them: the event before the first stored with the first's `prev`
//!    as its hash and a time not after the first's, kept in columns beside
//!    each event's bytes (the batch's own links are checked before it is
//!    sent); the primary key refuses a seq already stored. A stale
//!    expected seq is a `Conflict`, never a fork: when nothing went in, the
//!    head is read, and `check_follows` says why. Two appends racing for
//!    one seq both find the event before it; the primary key lets one
//!    commit and refuses the other, which is then the same `Conflict`. (A head
//!    stored before hashes and times were kept, in schema version 1, is
//!    read and checked as it was then, once per game.)
//! 2. The events carry the transaction's id (`pg_current_xact_id`), in
//!    that one statement (so one transaction, committed when it ends).
//!    `synchronous_commit = on` is set for every
//!    session (whatever the database's default), so it returns once the
//!    WAL is flushed (PostgreSQL's own group commit shares the flush
//!    between appends that commit together): the append is acknowledged
//!    only then. No NOTIFY in it: a notifying commit holds a lock of the
//!    whole cluster through its flush, and appends would commit one at a
//!    time (measured: 580 against 10,600 inserts/s).
//! 3. The process's sequencer (`sequencer`, a task woken after each
//!    commit) gives log positions. The issue left two choices: serialise
//!    every append on the position (one commit, so one WAL flush, at a time:
//!    500 appends/s whatever the number of tables, measured), or read only
//!    below the lowest transaction in flight. This is the second: under a
//!    lock of its own (`log_size`'s row), the sequencer takes the events
//!    without a leaf whose transactions have all ended (xid below the
//!    snapshot's xmin: no later transaction can get such an id, so the set
//!    is final), in xid order, and gives them the next positions, with no
//!    gap. Positions are so a function of the committed events alone: a
//!    sequencer run lost in a crash is redone identically, which is why it
//!    commits without waiting for the WAL (`synchronous_commit = off`); a
//!    checkpoint's own synchronous commit flushes the WAL of every run it
//!    covers first. While an older transaction is still open anywhere on
//!    the cluster the newer events wait, and a later run covers them;
//!    `log_size` runs it until it covers what was committed before the call
//!    (`caught_up`). After each run the sequencer NOTIFYs the games'
//!    new heads to the other servers (`watch_appends`), unflushed: a
//!    wake-up, never the events.
//!
//! A COMMIT whose answer is lost (the connection dropped) leaves the
//! outcome unknown: it is an I/O error, and the client's retry at the same
//! expected seq finds its event stored or not (`Recorder`'s duplicate
//! check), as after a crash of the embedded store.
//!
//! The server's appends, of many games at once, are committed together
//! (`batch`): `Store::append_batch_async` queues each, and one task sends
//! every append waiting as one statement, so one transaction and one WAL
//! flush, each game's events checked against its own head as `APPEND`
//! checks them. A game's append whose check fails there is made again
//! alone, as above, which says why.
//!
//! The `Store` trait is synchronous (the CLI calls it directly, the server
//! from its blocking pool). tokio-postgres is asynchronous, so the store
//! owns a small runtime of its own and each call runs there (`run`): it
//! works the same from a plain thread, from `spawn_blocking` and from a
//! test, and never nests one runtime's `block_on` inside another's. The
//! server awaits its appends' answers (`Store::append_batch_async`) on its
//! own async threads.
//! deadpool-postgres keeps the connections. (tokio-postgres and deadpool
//! rather than sqlx: sqlx's checked queries need a database, or a cache of
//! its answers committed, to build, and its pool adds nothing needed here.)

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use deadpool_postgres::GenericClient;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::NoTls;
use tokio_postgres::error::SqlState;

use super::checkpoints::{self, Record};
use super::{
    AppendError, AppendWatcher, Events, Head, OpenError, ReadError, Store, StoredEvents, SyncWatcher, Synced,
    decode_parsed,
};
use crate::event::{Chain, Event, Link, Parsed};
use crate::tlog::merkle::{Frontier, Hash, Nodes, leaf_hash};

mod batch;
mod columns;
mod migrate;
use columns::{Rows, follows_at};
use migrate::{MigrateError, migrate};

/// An append in one statement, so one round trip: the events go in only if
/// they follow the game's head as `check_follows` would have them: the
/// event before the first is stored, with the first's `prev` as its hash
/// and a time not after the first's (for event 0: the game has none). As
/// a game's seqs have no gap, that event is the head unless the first's
/// seq is stored too, and then the primary key refuses the insert. Two
/// appends racing for one seq both find the event before it; the primary
/// key lets one commit and refuses the other. Answers how many went in;
/// when none did, the caller reads the head for `check_follows` to say
/// why (or, for a head stored before its hash and time were kept, to
/// check it), a second round trip only then. (The head read in the same
/// statement, to answer with, cost every append a CTE and an aggregate
/// over the insert's rows, for an answer only a refused one needs.) Each
/// row is its transaction's id (`pg_current_xact_id`): see the sequencer.
/// (`batch::APPEND_MANY` makes the same check for many games at once. This
/// one is kept for an append alone: its game and check are plain
/// parameters, so PostgreSQL plans it once per connection, where the
/// arrays of the other are planned again at each call, about 0.1 ms of
/// the database's CPU, which a batch shares but an append alone does not:
/// one table's appends measured 0.27x of pgbench with it against 0.36x.)
const APPEND: &str = "INSERT INTO events (game, seq, xid, bytes, hash, at_ns) \
     SELECT $1, e.seq, pg_current_xact_id()::text::bigint, e.bytes, e.hash, e.at_ns \
     FROM unnest($2::int8[], $3::bytea[], $4::bytea[], $5::int8[]) AS e(seq, bytes, hash, at_ns) \
     WHERE CASE WHEN $6::int8 = 0 THEN NOT EXISTS (SELECT FROM events WHERE game = $1) \
           ELSE EXISTS (SELECT FROM events h WHERE h.game = $1 AND h.seq = $6 - 1 \
                        AND h.hash = $7::bytea AND h.at_ns <= $8::int8) END";

/// The same insert with no check of the head: after the head was read and
/// checked by `check_follows` (the primary key still decides a race).
const INSERT_CHECKED: &str = "INSERT INTO events (game, seq, xid, bytes, hash, at_ns) \
     SELECT $1, seq, pg_current_xact_id()::text::bigint, bytes, hash, at_ns \
     FROM unnest($2::int8[], $3::bytea[], $4::bytea[], $5::int8[]) AS e(seq, bytes, hash, at_ns)";

/// The advisory lock signers take to keep a checkpoint ("arbiter" + 1).
const CHECKPOINT_LOCK: i64 = 0x0061_7262_6974_6573;

/// The channel every append NOTIFYs, with "<last seq> <game>".
const APPENDS_CHANNEL: &str = "arbiter_appends";

/// How long a cut watch of appends waits before it connects again.
const WATCH_RETRY: Duration = Duration::from_secs(1);

/// Connections per process. Appends serialise on one row anyway; more
/// connections serve readers (live streams, pages) beside them.
const POOL_SIZE: usize = 16;

/// How long a call waits for a connection, or to make one, before it
/// fails with an I/O error instead of hanging a table.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long `log_size` waits for transactions still open to end before it
/// answers with the log as it is.
const LOG_CATCH_UP: Duration = Duration::from_secs(2);

/// Events read per query: a long game is read in pages, never whole.
const READ_PAGE: i64 = 512;

/// Leaves `log_leaf` reads after the one asked for (`leaves_ahead`).
const LEAVES_AHEAD: usize = 1_024;

pub struct PostgresStore {
    /// Runs every query (see the module's comment). An Option only so that
    /// `drop` can shut it down without waiting.
    runtime: Option<tokio::runtime::Runtime>,
    pool: Pool,
    /// The URL as shown to people: no password.
    shown: String,
    /// The log's right edge at the size it was last seen by this process;
    /// reloaded from `log_nodes` when another process appended since.
    frontier: Arc<Mutex<Option<Frontier>>>,
    /// Wakes the process's sequencer (`sequencer`) after a commit.
    wake_sequencer: Arc<tokio::sync::Notify>,
    /// Games appended to since the sequencer last told the other servers,
    /// with their newest seq.
    notify: Arc<Mutex<HashMap<String, u64>>>,
    /// Transactions of events and settings committed (`Store::syncs`).
    commits: Arc<AtomicU64>,
    /// Leaves read by `log_leaf` after the one asked for, by position, each
    /// taken out when asked for (a leaf never changes once it has its
    /// position: only committed ones are read).
    leaves_ahead: Mutex<std::collections::BTreeMap<u64, (String, u64)>>,
    /// Told of each commit of events (`Store::on_sync`).
    watcher: Mutex<Option<SyncWatcher>>,
    /// How to connect, for the watch of appends (a connection of its own,
    /// outside the pool: it LISTENs for as long as the store is open).
    config: tokio_postgres::Config,
    /// Where the server's appends wait to be committed together
    /// (`batch`); its task starts with the first, and again if it ended.
    batches: Mutex<Option<tokio::sync::mpsc::UnboundedSender<batch::Waiting>>>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore").field("url", &self.shown).finish()
    }
}

impl Drop for PostgresStore {
    fn drop(&mut self) {
        // Dropping a runtime waits for its tasks, which a drop inside
        // another runtime's task may not do: let them end on their own.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// Whether `location` names a PostgreSQL database rather than a directory.
pub fn is_url(location: &str) -> bool {
    location.starts_with("postgres://") || location.starts_with("postgresql://")
}

/// `url` without its password, to show in messages and logs.
pub fn shown_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    match rest.split_once('@') {
        Some((user, host)) => match user.split_once(':') {
            Some((name, _password)) => format!("{scheme}://{name}:***@{host}"),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

fn io(e: impl std::error::Error + 'static) -> ReadError {
    match unreachable(&e) {
        true => ReadError::Unavailable(why_unreachable(&e)),
        false => ReadError::Io(said(&e)),
    }
}

fn append_io(e: impl std::error::Error + 'static) -> AppendError {
    match unreachable(&e) {
        true => AppendError::Unavailable(why_unreachable(&e)),
        false => AppendError::Io(said(&e)),
    }
}

/// Why the database cannot be reached, in its own words or the network's
/// ("database \"x\" is not currently accepting connections", "Connection
/// refused"), not the pool's wrapping; said once where a read's
/// `Unavailable` is passed on.
fn why_unreachable(e: &(dyn std::error::Error + 'static)) -> String {
    match e.downcast_ref::<ReadError>() {
        Some(ReadError::Unavailable(why)) => why.clone(),
        _ => why_not_connected(e),
    }
}

/// Whether `e` says the database cannot be reached now, rather than that
/// it refused or failed a statement: the pool could not give a connection
/// (none made in time, the server refusing them, the database gone), the
/// connection is closed, or the server is shutting down or starting up.
/// Such a failure is `Unavailable`: the server answers 503 with
/// Retry-After, and `/health` says so.
fn unreachable(e: &(dyn std::error::Error + 'static)) -> bool {
    use std::error::Error;
    let mut cause: Option<&(dyn Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if let Some(ReadError::Unavailable(_)) = c.downcast_ref::<ReadError>() {
            return true;
        }
        if c.downcast_ref::<deadpool_postgres::PoolError>().is_some() {
            return true;
        }
        if let Some(pg) = c.downcast_ref::<tokio_postgres::Error>() {
            let down = [
                SqlState::ADMIN_SHUTDOWN,
                SqlState::CRASH_SHUTDOWN,
                SqlState::CANNOT_CONNECT_NOW,
                SqlState::CONNECTION_EXCEPTION,
                SqlState::CONNECTION_FAILURE,
                SqlState::SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION,
                SqlState::TOO_MANY_CONNECTIONS,
            ];
            return pg.is_closed() || pg.code().is_some_and(|code| down.contains(code));
        }
        cause = c.source();
    }
    false
}

/// An error in words, with what caused it: tokio-postgres says only "db
/// error" for an error the server sent, whose message is its source. A
/// cause already said by the error above it is not said twice.
fn said(e: &dyn std::error::Error) -> String {
    let mut words = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !words.ends_with(&text) {
            words = format!("{words}: {text}");
        }
        cause = c.source();
    }
    words
}

/// Why a connection could not be made: the first cause that is not the
/// pool's or the driver's wrapping ("database \"x\" does not exist",
/// "Connection refused").
fn why_not_connected(e: &dyn std::error::Error) -> String {
    let mut deepest = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        deepest = c.to_string();
        cause = c.source();
    }
    deepest
}

/// A seq or position as PostgreSQL's bigint. Every stored one fits
/// (`MAX_STREAM_EVENTS`); a larger one asked for reads as the largest.
fn big(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn unsigned(n: i64, what: &str) -> Result<u64, ReadError> {
    u64::try_from(n).map_err(|_| ReadError::Log(format!("{what} {n} is negative")))
}

impl PostgresStore {
    /// Connects to the database at `url`, brings its schema up to date
    /// (`migrate`) and checks that the log's size matches its events.
    pub fn open(url: &str) -> Result<PostgresStore, OpenError> {
        let shown = shown_url(url);
        let failed = |why: String| OpenError::Io { dir: shown.clone(), why };
        let mut config: tokio_postgres::Config =
            url.parse().map_err(|e| failed(format!("not a PostgreSQL URL: {}", said(&e))))?;
        // Without a name, PostgreSQL would pick the user's database (often
        // `postgres`, the cluster's own): a typo must not set up there.
        if config.get_dbname().is_none() {
            return Err(failed("the URL names no database (postgres://USER@HOST/DATABASE)".into()));
        }
        // NoTls: a URL that demands TLS is refused here, not by the server's
        // answer ("server does not support TLS"), which would blame it.
        if config.get_ssl_mode() == tokio_postgres::config::SslMode::Require {
            return Err(failed(
                "arbiter connects without TLS (sslmode=require is not supported): reach the database over a private network or loopback".into(),
            ));
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        // An append is acknowledged at its commit: it must be flushed then,
        // whatever the database's or the role's default (the sequencer
        // turns it off for its own transactions, which may be lost).
        let options = format!("{} -c synchronous_commit=on", config.get_options().unwrap_or_default());
        config.options(options.trim_start());
        // A connection cut without a word (a peer gone, a firewall) is
        // found in about half a minute, not TCP's two hours: the watch of
        // appends then connects again.
        config.keepalives_idle(Duration::from_secs(15));
        config.keepalives_interval(Duration::from_secs(5));
        config.keepalives_retries(3);
        config.application_name("arbiter");
        // One thread: its tasks wait on the database, and the server's
        // appends have a task of their own (`batch`). At 64 tables on one
        // server, a second thread here only added thread switches: 0.53x to
        // 0.56x of pgbench with one against 0.46x to 0.49x with two,
        // measured side by side.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("arbiter-pg")
            .enable_all()
            .build()
            .map_err(|e| failed(format!("cannot start the database client: {e}")))?;
        let manager =
            Manager::from_config(config.clone(), NoTls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(CONNECT_TIMEOUT))
            .create_timeout(Some(CONNECT_TIMEOUT))
            .build()
            .map_err(|e| failed(e.to_string()))?;
        let store = PostgresStore {
            runtime: Some(runtime),
            pool,
            shown: shown.clone(),
            frontier: Arc::new(Mutex::new(None)),
            wake_sequencer: Arc::default(),
            notify: Arc::default(),
            commits: Arc::default(),
            leaves_ahead: Mutex::default(),
            watcher: Mutex::new(None),
            config,
            batches: Mutex::new(None),
        };
        store.run(migrate(store.pool.clone())).map_err(|e| match e {
            // The database answers: it is the role's rights, not the URL.
            e @ MigrateError::MayNotCreate { .. } => OpenError::Unwritable { dir: shown.clone(), why: e.to_string() },
            e => failed(e.to_string()),
        })?;
        let sequencing =
            sequencer(store.pool.clone(), store.frontier.clone(), store.wake_sequencer.clone(), store.notify.clone());
        store.runtime.as_ref().expect("just made").spawn(sequencing);
        // Every event below the sequencer's mark has its leaf, and only
        // they: a table edited behind arbiter's back is found at the open,
        // as sled's damage is. (One statement, so one snapshot, whatever
        // other servers' sequencers do meanwhile. It counts every event:
        // O(n), about as long as sled's own open of the same store.)
        // A database restored into another cluster (pg_dump, logical
        // replication) brings xids above that cluster's: its new events
        // would never be taken, nor old ones not yet in the log. Under the
        // sequencer's lock (so no run moves the mark meanwhile), events
        // without a leaf are given this transaction's xid (in the order of
        // their game and seq, as one run would take them), and the mark,
        // only where the sequencer starts looking (it skips events that
        // have leaves), starts from 0 again.
        store
            .with_client(|mut c| async move {
                let tx = c.transaction().await.map_err(io)?;
                let row = tx.query_one("SELECT sequenced_below FROM log_size FOR UPDATE", &[]).await.map_err(io)?;
                let below: i64 = row.get(0);
                let next = tx
                    .query_one("SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint", &[])
                    .await
                    .map_err(io)?;
                if below > next.get::<_, i64>(0) {
                    tx.execute(
                        "UPDATE events e SET xid = pg_current_xact_id()::text::bigint WHERE e.xid >= $1 \
                         AND NOT EXISTS (SELECT 1 FROM log_leaves l WHERE l.game = e.game AND l.seq = e.seq)",
                        &[&next.get::<_, i64>(0)],
                    )
                    .await
                    .map_err(io)?;
                    tx.execute("UPDATE log_size SET sequenced_below = 0", &[]).await.map_err(io)?;
                }
                tx.commit().await.map_err(io)
            })
            .map_err(|e| failed(e.to_string()))?;
        store.sequence().map_err(|e| match e {
            ReadError::Log(why) => OpenError::Lost(format!("the database at {shown} is damaged: its log {why}")),
            e => failed(e.to_string()),
        })?;
        let (size, leaves, missing) = store
            .with_client(|c| async move {
                let row = c
                    .query_one(
                        "SELECT l.size, (SELECT count(*) FROM log_leaves), \
                         (SELECT count(*) FROM events e WHERE e.xid < l.sequenced_below \
                          AND NOT EXISTS (SELECT 1 FROM log_leaves f WHERE f.game = e.game AND f.seq = e.seq)) \
                         FROM log_size l",
                        &[],
                    )
                    .await
                    .map_err(io)?;
                Ok((row.get::<_, i64>(0), row.get::<_, i64>(1), row.get::<_, i64>(2)))
            })
            .map_err(|e| failed(e.to_string()))?;
        if size != leaves || missing != 0 {
            return Err(OpenError::Lost(format!(
                "the database at {shown} is damaged: its log holds {size} events, its leaves {leaves}, \
                 and {missing} events the log should hold have no leaf"
            )));
        }
        // Never open a store that holds less than its last checkpoint.
        checkpoints::check(&store)?;
        Ok(store)
    }

    fn runtime(&self) -> &tokio::runtime::Handle {
        self.runtime.as_ref().expect("the runtime lives as long as the store").handle()
    }

    /// Runs `work` on the store's runtime and waits for it.
    fn run<T: Send + 'static>(&self, work: impl Future<Output = T> + Send + 'static) -> T {
        let (done, result) = std::sync::mpsc::sync_channel(1);
        let runtime = self.runtime.as_ref().expect("the runtime lives as long as the store");
        runtime.spawn(async move {
            let _ = done.send(work.await);
        });
        result.recv().expect("a query's task ends with an answer (a panic in it is a bug)")
    }

    /// Runs `query` with a connection from the pool.
    fn with_client<T, F, Fut>(&self, query: F) -> Result<T, ReadError>
    where
        T: Send + 'static,
        F: FnOnce(deadpool_postgres::Object) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T, ReadError>> + Send,
    {
        let pool = self.pool.clone();
        self.run(async move {
            let client = pool.get().await.map_err(io)?;
            query(client).await
        })
    }

    /// Stores `events` (one game's, in order) in one transaction, then
    /// wakes the process's sequencer (`sequencer`) to give their positions
    /// and tell the other servers.
    fn insert(&self, game: &str, events: &[(Event, Vec<u8>)]) -> Result<(), AppendError> {
        let Some((events, last)) = to_append(events)? else { return Ok(()) };
        let (pool, named, count) = (self.pool.clone(), game.to_string(), events.len());
        let took = self.run(async move { append_events(&pool, &named, &events).await })?;
        self.committed(game.to_string(), last, count, took);
        Ok(())
    }

    /// After a commit of `count` events of `game` up to seq `last`, which
    /// took `took`: counted, told to the watcher, and the process's
    /// sequencer woken to give their positions and tell the other servers
    /// (`watch_appends`).
    fn committed(&self, game: String, last: u64, count: usize, took: Duration) {
        self.committed_many([(game, last, count)], took);
    }

    /// After one commit of many games' events (`batch`), each game with
    /// its last seq and how many: as `committed` for each, in one commit.
    fn committed_many(&self, games: impl IntoIterator<Item = (String, u64, usize)>, took: Duration) {
        self.commits.fetch_add(1, Ordering::Relaxed);
        let mut events = 0;
        {
            let mut heads = self.notify.lock().unwrap_or_else(|p| p.into_inner());
            for (game, last, count) in games {
                events += count as u64;
                let head = heads.entry(game).or_insert(last);
                *head = (*head).max(last);
            }
        }
        let watcher = self.watcher.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(watch) = watcher {
            watch(Synced { took, events });
        }
        self.wake_sequencer.notify_one();
    }

    /// Queues `waiting` for the task that commits appends together
    /// (`batch`), starting it if it is not running: at the first append,
    /// or after it ended (a panic in it, a bug: the appends it held were
    /// told the outcome is unknown, and appends go on).
    fn queue(&'static self, waiting: batch::Waiting) -> Result<(), AppendError> {
        let mut queue = self.batches.lock().unwrap_or_else(|p| p.into_inner());
        let waiting = match queue.as_ref() {
            None => waiting,
            Some(running) => match running.send(waiting) {
                Ok(()) => return Ok(()),
                Err(ended) => {
                    tracing::error!("the task that commits appends together had ended; it starts again");
                    ended.0
                }
            },
        };
        let closing = |_| AppendError::Unavailable("the store is closing: nothing was stored".into());
        queue.insert(batch::start(self)).send(waiting).map_err(closing)
    }

    /// Gives log positions to every event that has ended (`sequence_on`),
    /// now; returns the log's size after.
    fn sequence(&self) -> Result<u64, ReadError> {
        self.run(sequence_on(self.pool.clone(), self.frontier.clone())).map(|s| s.size)
    }

    /// The log's size once it covers every event committed before the
    /// call (an append acknowledged to this caller, say): the sequencer is
    /// run again until the oldest transaction still open anywhere on the
    /// cluster is younger than they are, for at most `LOG_CATCH_UP` (a
    /// transaction left open elsewhere only delays the log: then the size
    /// as it is).
    fn caught_up(&self) -> Result<u64, ReadError> {
        let (pool, cached) = (self.pool.clone(), self.frontier.clone());
        self.run(async move {
            let newest: Option<i64> = {
                let c = pool.get().await.map_err(io)?;
                // Never above the cluster's next xid (a database restored
                // elsewhere keeps its old ones: see `open`).
                let newest = prepared(
                    &c,
                    "SELECT least(max(xid), pg_snapshot_xmax(pg_current_snapshot())::text::bigint) FROM events",
                )
                .await?;
                c.query_one(&newest, &[]).await.map_err(io)?.get(0)
            };
            let deadline = tokio::time::Instant::now() + LOG_CATCH_UP;
            // From 1 ms, doubling to 64 ms: a transaction open elsewhere for
            // long costs a few runs a second, not a thousand.
            let mut wait = Duration::from_millis(1);
            loop {
                let now = sequence_on(pool.clone(), cached.clone()).await?;
                if newest.is_none_or(|x| now.below > x) || tokio::time::Instant::now() >= deadline {
                    return Ok(now.size);
                }
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_millis(64));
            }
        })
    }
}

/// Gives log positions, in xid order, to every event whose transaction
/// (and every older one) has ended; see the module's comment. Returns the
/// log's size after. Every statement is prepared once per connection
/// (`prepare_cached`): a statement sent as text is a second round trip.
async fn sequence_on(pool: Pool, cached: Arc<Mutex<Option<Frontier>>>) -> Result<Sequenced, ReadError> {
    let mut client = pool.get().await.map_err(io)?;
    let tx = client.transaction().await.map_err(io)?;
    // The lock; and this transaction commits without waiting for the WAL
    // (redone identically if lost in a crash: see the module's comment).
    let lock = prepared(
        &tx,
        "SELECT size, sequenced_below, set_config('synchronous_commit', 'off', true) FROM log_size FOR UPDATE",
    )
    .await?;
    let row = tx.query_one(&lock, &[]).await.map_err(io)?;
    let (size, below): (i64, i64) = (row.get(0), row.get(1));
    let size = unsigned(size, "the log's size")?;
    // One statement, one snapshot: the events it sees below its
    // xmin are every event that will ever have such an xid.
    let ended = prepared(
        &tx,
        "SELECT s.xmin, e.game, e.seq, e.bytes \
         FROM (SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS xmin) s \
         LEFT JOIN events e ON e.xid >= $1 AND e.xid < s.xmin \
           AND NOT EXISTS (SELECT 1 FROM log_leaves l WHERE l.game = e.game AND l.seq = e.seq) \
         ORDER BY e.xid, e.game, e.seq",
    )
    .await?;
    let rows = tx.query(&ended, &[&below]).await.map_err(io)?;
    let xmin: i64 = rows[0].get(0);
    let ended: Vec<(String, i64, &[u8])> =
        rows.iter().filter_map(|r| Some((r.get::<_, Option<String>>(1)?, r.get(2), r.get(3)))).collect();
    if ended.is_empty() && xmin <= below {
        return Ok(Sequenced { size, below });
    }
    let known = cached.lock().unwrap_or_else(|p| p.into_inner()).clone().filter(|f| f.size() == size);
    let mut frontier = match known {
        Some(f) => f,
        None => load_frontier(&tx, size).await?,
    };
    let (mut positions, mut games, mut seqs) = (vec![], vec![], vec![]);
    let (mut levels, mut indexes, mut hashes) = (vec![], vec![], vec![]);
    for (game, seq, bytes) in &ended {
        positions.push(big(frontier.size()));
        games.push(game.as_str());
        seqs.push(*seq);
        for (level, index, hash) in frontier.push(leaf_hash(bytes)) {
            if level > 0 {
                levels.push(i16::from(level));
                indexes.push(big(index));
                hashes.push(hash.to_vec());
            }
        }
    }
    // The leaves, the subtrees they complete and the new size: one statement.
    let grow = prepared(
        &tx,
        "WITH leaves AS (INSERT INTO log_leaves (position, game, seq) \
                         SELECT * FROM unnest($1::int8[], $2::text[], $3::int8[])), \
              nodes AS (INSERT INTO log_nodes (level, index, hash) \
                        SELECT * FROM unnest($4::int2[], $5::int8[], $6::bytea[])) \
         UPDATE log_size SET size = $7, sequenced_below = greatest(sequenced_below, $8)",
    )
    .await?;
    tx.execute(&grow, &[&positions, &games, &seqs, &levels, &indexes, &hashes, &big(frontier.size()), &xmin])
        .await
        .map_err(io)?;
    tx.commit().await.map_err(io)?;
    let size = frontier.size();
    *cached.lock().unwrap_or_else(|p| p.into_inner()) = Some(frontier);
    Ok(Sequenced { size, below: below.max(xmin) })
}

/// Where the log is after a sequencer's run: its size, and the xid below
/// which every event has its position.
struct Sequenced {
    size: u64,
    below: i64,
}

/// The process's sequencer: one run after each `wake` (runs asked for while
/// one is under way are one more run, not one each), so an appender
/// acknowledged at its commit never waits on the sequencer's lock.
/// After each run, it NOTIFYs the heads appended since the last one, in one
/// transaction that does not wait for the WAL (a wake-up lost in a crash
/// loses nothing: readers catch up by seq).
async fn sequencer(
    pool: Pool,
    cached: Arc<Mutex<Option<Frontier>>>,
    wake: Arc<tokio::sync::Notify>,
    notify: Arc<Mutex<HashMap<String, u64>>>,
) {
    loop {
        wake.notified().await;
        if let Err(e) = sequence_on(pool.clone(), cached.clone()).await.map(drop) {
            tracing::warn!(error = %e, "the log's positions are behind the events; the next run gives them");
        }
        let pending = std::mem::take(&mut *notify.lock().unwrap_or_else(|p| p.into_inner()));
        if pending.is_empty() {
            continue;
        }
        let heads: Vec<String> = pending.iter().map(|(game, seq)| format!("{seq} {game}")).collect();
        let told = async {
            let c = pool.get().await.map_err(io)?;
            let tell = prepared(
                &c,
                "SELECT count(pg_notify($1, head)) \
                 FROM (SELECT set_config('synchronous_commit', 'off', true)) AS unflushed, unnest($2::text[]) AS head",
            )
            .await?;
            c.execute(&tell, &[&APPENDS_CHANNEL, &heads]).await.map_err(io)
        };
        if let Err(e) = told.await {
            // Kept to be told again (a newer head of a game wins), after a
            // pause: the other servers' streams wait on these wake-ups.
            tracing::warn!(error = %e, "other servers were not told of appends; telling them again");
            {
                let mut notify_again = notify.lock().unwrap_or_else(|p| p.into_inner());
                for (game, seq) in pending {
                    let head = notify_again.entry(game).or_insert(seq);
                    *head = (*head).max(seq);
                }
            }
            tokio::time::sleep(WATCH_RETRY).await;
            wake.notify_one();
        }
    }
}

/// Events to store, each with its bytes, and the last one's seq.
type ToAppend = (Vec<(Event, Vec<u8>)>, u64);

/// The events an append commits, checked as every store checks them
/// (`check_incoming`), with the last one's seq (`PostgresStore::committed`);
/// none for no events.
fn to_append(events: &[(Event, Vec<u8>)]) -> Result<Option<ToAppend>, AppendError> {
    let Some((last, _)) = events.last() else { return Ok(None) };
    super::check_incoming(events)?;
    Ok(Some((events.to_vec(), last.seq)))
}

/// Stores `events` (one game's, in order, checked by `check_incoming`)
/// in one transaction, durable when it returns; how long the statement
/// took. Runs on the store's runtime (`insert`, `batch`), where the pool's
/// connections have their tasks.
async fn append_events(pool: &Pool, game: &str, events: &[(Event, Vec<u8>)]) -> Result<Duration, AppendError> {
    let client = pool.get().await.map_err(append_io)?;
    let rows = Rows::of(events);
    // One statement, so one transaction of its own, all or nothing,
    // and one round trip. No NOTIFY in it: a transaction that
    // notifies holds a lock of the whole cluster through its commit's
    // WAL flush, so appends would commit one at a time (measured:
    // 580 against 10,600 inserts/s); the sequencer sends them.
    if let Some((prev, at)) = follows_at(events) {
        let append = prepared(&client, APPEND).await.map_err(append_io)?;
        let began = std::time::Instant::now();
        let first = big(events[0].0.seq);
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 8] =
            [&game, &rows.seqs, &rows.bytes, &rows.hashes, &rows.ats, &first, &prev, &at];
        match client.execute(&append, &params).await {
            Ok(0) => {}
            Ok(_) => return Ok(began.elapsed()),
            Err(e) => return Err(refused(&client, game, events, e).await),
        }
        // None went in: the head, read, says why (`check_follows`), or is
        // one stored before hashes and times were kept beside the bytes,
        // which the insert as it was made then follows.
    }
    // The head needs no lock: the primary key decides a race.
    let head = head_of(&client, game).await.map_err(append_io)?;
    super::check_follows(game, events, head)?;
    let store = prepared(&client, INSERT_CHECKED).await.map_err(append_io)?;
    let began = std::time::Instant::now();
    match client.execute(&store, &[&game, &rows.seqs, &rows.bytes, &rows.hashes, &rows.ats]).await {
        Ok(_) => Ok(began.elapsed()),
        Err(e) => Err(refused(&client, game, events, e).await),
    }
}

/// LISTENs for appends until the connection ends; tells `tell` of each,
/// and `None` once listening, unless this is the `first` connection.
async fn listen(
    config: &tokio_postgres::Config,
    tell: &AppendWatcher,
    first: bool,
) -> Result<(), tokio_postgres::Error> {
    use futures_util::StreamExt;
    let (client, mut connection) = config.connect(NoTls).await?;
    let (heard, mut notes) = tokio::sync::mpsc::unbounded_channel();
    // The connection yields notifications only to whoever polls it.
    let driven = tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = messages.next().await {
            match message {
                Ok(tokio_postgres::AsyncMessage::Notification(n)) => {
                    if heard.send(n).is_err() {
                        break;
                    }
                }
                Ok(_) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    });
    client.batch_execute(&format!("LISTEN {APPENDS_CHANNEL}")).await?;
    if !first {
        tell(None);
    }
    while let Some(note) = notes.recv().await {
        if let Some((seq, game)) = note.payload().split_once(' ')
            && let Ok(seq) = seq.parse::<u64>()
        {
            tell(Some((game, seq)));
        }
    }
    drop(client);
    driven.await.unwrap_or(Ok(()))
}

/// `sql`, prepared once per connection: a statement sent as text is
/// prepared again each time, a second round trip.
async fn prepared(client: &impl GenericClient, sql: &str) -> Result<tokio_postgres::Statement, ReadError> {
    client.prepare_cached(sql).await.map_err(io)
}

/// An insert that failed: another append took the seq since the head was
/// read (it committed first, and the primary key refused a fork), the
/// database refused it, or no answer came.
async fn refused(
    client: &impl GenericClient,
    game: &str,
    events: &[(Event, Vec<u8>)],
    e: tokio_postgres::Error,
) -> AppendError {
    if e.code() == Some(&SqlState::UNIQUE_VIOLATION) {
        let head = match head_of(client, game).await {
            Ok(head) => head,
            Err(e) => return append_io(e),
        };
        let next = head.as_ref().map_or(0, |h| h.seq + 1);
        return match events[0].0.seq {
            0 => AppendError::Exists(game.to_string()),
            expected => AppendError::Conflict { expected, next, head },
        };
    }
    // The database refused it: nothing was stored.
    if surely_refused(&e) {
        return append_io(e);
    }
    AppendError::Unavailable(unconfirmed(&e))
}

/// Whether the database surely refused a statement, so that nothing of it
/// was stored: it answered with an error of the statement (severity
/// ERROR), not one that ends the session (FATAL, PANIC: an administrator's
/// or a crash's shutdown), which may come after the commit was flushed.
fn surely_refused(e: &tokio_postgres::Error) -> bool {
    e.as_db_error().is_some_and(|db| db.severity() == "ERROR") && !unreachable(e)
}

/// Why an append's outcome is unknown: no answer came (the connection
/// dropped), so it may have committed.
fn unconfirmed(e: &tokio_postgres::Error) -> String {
    format!("the database did not confirm the commit ({}): {UNKNOWN}", said(e))
}

/// What to do when an append's outcome is unknown.
const UNKNOWN: &str = "the events may or may not be stored; read the head (a retry at the same expected seq is safe)";

/// The last event of `game`, decoded and checked, as a link.
async fn head_of(client: &impl GenericClient, game: &str) -> Result<Option<Link>, ReadError> {
    let last = prepared(client, "SELECT seq, bytes FROM events WHERE game = $1 ORDER BY seq DESC LIMIT 1").await?;
    let row = client.query_opt(&last, &[&game]).await.map_err(io)?;
    match row {
        None => Ok(None),
        Some(row) => {
            let seq = unsigned(row.get(0), "a seq")?;
            Ok(Some(decode_parsed(seq, row.get::<_, &[u8]>(1))?.event.link()))
        }
    }
}

/// The hash of subtree (level, index); a leaf's is computed from its event.
async fn node_of(client: &impl GenericClient, level: u8, index: u64) -> Result<Hash, ReadError> {
    let missing = || ReadError::Log(format!("subtree {index} at level {level} is missing or damaged"));
    let row = match level {
        0 => {
            client
                .query_opt(
                    "SELECT e.bytes FROM log_leaves l JOIN events e USING (game, seq) WHERE l.position = $1",
                    &[&big(index)],
                )
                .await
        }
        _ => {
            client
                .query_opt(
                    "SELECT hash FROM log_nodes WHERE level = $1 AND index = $2",
                    &[&i16::from(level), &big(index)],
                )
                .await
        }
    };
    let row = row.map_err(io)?.ok_or_else(missing)?;
    let value: &[u8] = row.get(0);
    match level {
        0 => Ok(leaf_hash(value)),
        _ => value.try_into().map_err(|_| missing()),
    }
}

/// The log's right edge at `size`, read from the database: one node per
/// set bit of `size`.
async fn load_frontier(client: &impl GenericClient, size: u64) -> Result<Frontier, ReadError> {
    struct Read(HashMap<(u8, u64), Hash>);
    impl Nodes for Read {
        type Error = ReadError;
        fn node(&self, level: u8, index: u64) -> Result<Hash, ReadError> {
            self.0
                .get(&(level, index))
                .copied()
                .ok_or_else(|| ReadError::Log(format!("subtree {index} at level {level}")))
        }
    }
    let mut read = HashMap::new();
    let mut start = 0u64;
    for level in (0..64u8).rev() {
        if size >> level & 1 == 1 {
            read.insert((level, start >> level), node_of(client, level, start >> level).await?);
            start += 1 << level;
        }
    }
    Frontier::load(&Read(read), size)
}

impl Store for PostgresStore {
    fn games(&self) -> Result<Vec<String>, ReadError> {
        let mut games = self.with_client(|c| async move {
            let rows = c.query("SELECT game FROM events WHERE seq = 0", &[]).await.map_err(io)?;
            Ok(rows.iter().map(|r| r.get::<_, String>(0)).collect::<Vec<_>>())
        })?;
        // In byte order, as sled's, whatever the database's collation.
        games.sort();
        Ok(games)
    }

    fn head(&self, game: &str) -> Result<Option<Head>, ReadError> {
        let game = game.to_string();
        self.with_client(move |c| async move { head_of(&c, &game).await })
    }

    fn read(&self, game: &str, from: u64) -> Result<Events<'_>, ReadError> {
        let prev = match from.checked_sub(1) {
            None => {
                if self.head(game)?.is_none() {
                    return Err(ReadError::NoSuchGame(game.to_string()));
                }
                None
            }
            Some(p) => match self.get_stored(game, p)? {
                Some(bytes) => Some(decode_parsed(p, &bytes)?.event.link()),
                None if self.head(game)?.is_none() => return Err(ReadError::NoSuchGame(game.to_string())),
                None => return Ok(Box::new(std::iter::empty())),
            },
        };
        let mut chain = Chain::after(prev);
        Ok(Box::new(self.pages(game, from).map(move |item| {
            let (seq, bytes) = item?;
            let Parsed { event, at, .. } = decode_parsed(seq, &bytes)?;
            chain.push(&event, at).map_err(|why| ReadError::Corrupt { seq, why })?;
            Ok(event)
        })))
    }

    /// The event and the one before it (its link is checked), not a page.
    fn get(&self, game: &str, seq: u64) -> Result<Option<Event>, ReadError> {
        let (named, first) = (game.to_string(), seq.saturating_sub(1));
        let rows = self.with_client(move |c| async move {
            let two =
                prepared(&c, "SELECT seq, bytes FROM events WHERE game = $1 AND seq BETWEEN $2 AND $3 ORDER BY seq")
                    .await?;
            let rows = c.query(&two, &[&named, &big(first), &big(seq)]).await.map_err(io)?;
            rows.iter()
                .map(|r| Ok((unsigned(r.get(0), "a seq")?, r.get::<_, Vec<u8>>(1))))
                .collect::<Result<Vec<_>, _>>()
        })?;
        let mut prev: Option<Link> = None;
        for (at, bytes) in rows {
            let Parsed { event, at: time, .. } = decode_parsed(at, &bytes)?;
            if at < seq {
                prev = Some(event.link());
                continue;
            }
            if seq > 0 && prev.is_none() {
                // The event before it is missing.
                let why = crate::event::EventError::Seq { expected: seq - 1, found: seq };
                return Err(ReadError::Corrupt { seq, why });
            }
            Chain::after(prev).push(&event, time).map_err(|why| ReadError::Corrupt { seq, why })?;
            return Ok(Some(event));
        }
        match self.head(game)? {
            None => Err(ReadError::NoSuchGame(game.to_string())),
            Some(_) => Ok(None),
        }
    }

    fn read_stored(&self, game: &str, from: u64) -> Result<StoredEvents<'_>, ReadError> {
        if self.head(game)?.is_none() {
            return Err(ReadError::NoSuchGame(game.to_string()));
        }
        Ok(Box::new(self.pages(game, from)))
    }

    fn append(&self, game: &str, event: &Event, bytes: &[u8]) -> Result<(), AppendError> {
        self.insert(game, &[(event.clone(), bytes.to_vec())])
    }

    fn append_batch(&self, game: &str, events: &[(Event, Vec<u8>)]) -> Result<(), AppendError> {
        self.insert(game, events)
    }

    /// The append as `insert` makes it, committed together with the
    /// other games' appends waiting beside it (`batch`: one statement, one
    /// WAL flush), and answered when that commit returns.
    fn append_batch_async(&'static self, game: &str, events: &[(Event, Vec<u8>)]) -> super::Durable {
        let (events, last) = match to_append(events) {
            Ok(Some(append)) => append,
            Ok(None) => return Box::pin(std::future::ready(Ok(()))),
            Err(e) => return Box::pin(std::future::ready(Err(e))),
        };
        let (done, answer) = tokio::sync::oneshot::channel();
        if let Err(e) = self.queue(batch::Waiting { game: game.to_string(), events, last, done }) {
            return Box::pin(std::future::ready(Err(e)));
        }
        Box::pin(async move {
            // The batch's task answers every append it takes, unless it
            // panicked (a bug) or the store closed meanwhile.
            answer.await.unwrap_or_else(|_| {
                Err(AppendError::Unavailable(format!("the store stopped before the append was answered: {UNKNOWN}")))
            })
        })
    }

    fn setting(&self, key: &str) -> Result<Option<Vec<u8>>, ReadError> {
        let key = key.to_string();
        self.with_client(move |c| async move {
            let one = prepared(&c, "SELECT value FROM settings WHERE key = $1").await?;
            let row = c.query_opt(&one, &[&key]).await.map_err(io)?;
            Ok(row.map(|r| r.get::<_, Vec<u8>>(0)))
        })
    }

    fn settings(&self, prefix: &str) -> Result<Vec<(String, Vec<u8>)>, ReadError> {
        let prefix = prefix.to_string();
        let mut all = self.with_client(move |c| async move {
            // starts_with, not LIKE: a prefix may hold % or _.
            let rows =
                c.query("SELECT key, value FROM settings WHERE starts_with(key, $1)", &[&prefix]).await.map_err(io)?;
            Ok(rows.iter().map(|r| (r.get::<_, String>(0), r.get::<_, Vec<u8>>(1))).collect::<Vec<_>>())
        })?;
        all.sort();
        Ok(all)
    }

    fn put_setting(&self, key: &str, value: &[u8]) -> Result<(), AppendError> {
        let (key, value) = (key.to_string(), value.to_vec());
        self.with_client(move |c| async move {
            c.execute(
                "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = $2",
                &[&key, &value],
            )
            .await
            .map_err(io)
        })
        .map_err(append_io)?;
        self.commits.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn swap_setting(&self, key: &str, expected: Option<&[u8]>, new: Option<&[u8]>) -> Result<bool, AppendError> {
        let writes = expected.is_some() || new.is_some();
        let (key, expected, new) = (key.to_string(), expected.map(<[u8]>::to_vec), new.map(<[u8]>::to_vec));
        let swapped = self
            .with_client(move |c| async move {
                // Each case is one statement: atomic on its own.
                let changed = match (&expected, &new) {
                    (None, Some(new)) => {
                        c.execute(
                            "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                            &[&key, new],
                        )
                        .await
                    }
                    (Some(old), Some(new)) => {
                        c.execute("UPDATE settings SET value = $3 WHERE key = $1 AND value = $2", &[&key, old, new])
                            .await
                    }
                    (Some(old), None) => {
                        c.execute("DELETE FROM settings WHERE key = $1 AND value = $2", &[&key, old]).await
                    }
                    (None, None) => {
                        let there = c.query_opt("SELECT 1 FROM settings WHERE key = $1", &[&key]).await.map_err(io)?;
                        return Ok(there.is_none());
                    }
                };
                Ok(changed.map_err(io)? == 1)
            })
            .map_err(append_io)?;
        if swapped && writes {
            self.commits.fetch_add(1, Ordering::Relaxed);
        }
        Ok(swapped)
    }

    fn syncs(&self) -> u64 {
        self.commits.load(Ordering::Relaxed)
    }

    fn shared(&self) -> bool {
        true
    }

    /// A connection of its own LISTENs on `APPENDS_CHANNEL`; when it is
    /// cut, it connects again after `WATCH_RETRY`, and says `None` once
    /// it listens again (notifications sent meanwhile are lost).
    fn watch_appends(&self, tell: AppendWatcher) {
        let config = self.config.clone();
        let runtime = self.runtime.as_ref().expect("the runtime lives as long as the store");
        runtime.spawn(async move {
            let mut first = true;
            loop {
                if let Err(e) = listen(&config, &tell, first).await {
                    tracing::warn!(error = %e, "the watch of appends by other servers was cut; connecting again");
                }
                first = false;
                tokio::time::sleep(WATCH_RETRY).await;
            }
        });
    }

    fn on_sync(&self, watch: SyncWatcher) {
        *self.watcher.lock().unwrap_or_else(|p| p.into_inner()) = Some(watch);
    }

    fn checkpoints(&self) -> Result<Vec<Record>, checkpoints::CheckpointsError> {
        let rows = self
            .with_client(|c| async move {
                let rows = c.query("SELECT n, record FROM checkpoints ORDER BY n", &[]).await.map_err(io)?;
                Ok(rows.iter().map(|r| (r.get::<_, i64>(0), r.get::<_, String>(1))).collect::<Vec<_>>())
            })
            .map_err(|e| checkpoints::CheckpointsError::Database(e.to_string()))?;
        // A row is whole or absent (no torn line as in a file): every one must parse.
        rows.into_iter()
            .map(|(n, record)| {
                serde_json::from_str(&record).map_err(|why| checkpoints::CheckpointsError::DamagedRow {
                    place: self.checkpoints_place(),
                    row: n,
                    why,
                })
            })
            .collect()
    }

    /// In one transaction, under a lock every signer takes: kept only if
    /// larger than the newest, with `SIGNED_SETTING` beside it.
    fn keep_checkpoint(&self, record: &Record) -> Result<bool, checkpoints::KeepError> {
        let size = big(record.checkpoint()?.size);
        let text = serde_json::to_string(record)?;
        self.with_client(move |mut c| async move {
            let tx = c.transaction().await.map_err(io)?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&CHECKPOINT_LOCK]).await.map_err(io)?;
            let newest: Option<i64> = tx.query_one("SELECT max(size) FROM checkpoints", &[]).await.map_err(io)?.get(0);
            if newest.is_some_and(|n| n >= size) {
                return Ok(false);
            }
            tx.execute("INSERT INTO checkpoints (size, record) VALUES ($1, $2)", &[&size, &text]).await.map_err(io)?;
            tx.execute(
                "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = $2",
                &[&checkpoints::SIGNED_SETTING, &(size as u64).to_be_bytes().as_slice()],
            )
            .await
            .map_err(io)?;
            tx.commit().await.map_err(io)?;
            Ok(true)
        })
        .map_err(|e| checkpoints::KeepError::Database(e.to_string()))
    }

    fn name(&self) -> String {
        self.config.get_dbname().unwrap_or_default().to_string()
    }

    fn checkpoints_place(&self) -> String {
        format!("the checkpoints table of {}", self.shown)
    }

    /// The size once every event committed before the call has its
    /// position (`caught_up`).
    fn log_size(&self) -> Result<u64, ReadError> {
        self.caught_up()
    }

    fn log_node(&self, level: u8, index: u64) -> Result<Hash, ReadError> {
        self.with_client(move |c| async move { node_of(&c, level, index).await })
    }

    /// From the leaves read ahead if it is there (each is served once),
    /// else with the `LEAVES_AHEAD` after it: a signer reads every new leaf
    /// in order once a second (`checkpoints::sign_after`), which was a round
    /// trip per append.
    fn log_leaf(&self, index: u64) -> Result<Option<(String, u64)>, ReadError> {
        if let Some(leaf) = self.leaves_ahead.lock().unwrap_or_else(|p| p.into_inner()).remove(&index) {
            return Ok(Some(leaf));
        }
        let rows = self.with_client(move |c| async move {
            let page = prepared(
                &c,
                "SELECT position, game, seq FROM log_leaves WHERE position >= $1 ORDER BY position LIMIT $2",
            )
            .await?;
            let rows = c.query(&page, &[&big(index), &(LEAVES_AHEAD as i64 + 1)]).await.map_err(io)?;
            rows.iter()
                .map(|r| {
                    let position = unsigned(r.get(0), "a position")?;
                    Ok((position, r.get::<_, String>(1), unsigned(r.get(2), "a seq")?))
                })
                .collect::<Result<Vec<_>, ReadError>>()
        })?;
        let mut ahead = self.leaves_ahead.lock().unwrap_or_else(|p| p.into_inner());
        if ahead.len() >= 4 * LEAVES_AHEAD {
            ahead.clear();
        }
        let mut found = None;
        for (position, game, seq) in rows {
            match position == index {
                true => found = Some((game, seq)),
                false => drop(ahead.insert(position, (game, seq))),
            }
        }
        Ok(found)
    }

    /// One query for the whole batch (a round trip a leaf made `verify
    /// --all` wait on the network five times longer than it computed). Each
    /// leaf's event comes with the one before it, checked as `get` checks
    /// it. A leaf's stored hash is its event's (a database keeps no leaf
    /// hashes: `node_of`), and (game, seq) is unique among the leaves, so
    /// its position is the row's own.
    fn log_leaves(&self, from: u64, count: u64) -> Result<Vec<super::LeafRead>, ReadError> {
        let end = from.saturating_add(count);
        let rows = self.with_client(move |c| async move {
            let batch = prepared(
                &c,
                "SELECT l.position, l.game, l.seq, e.bytes, p.bytes FROM log_leaves l \
                 LEFT JOIN events e ON e.game = l.game AND e.seq = l.seq \
                 LEFT JOIN events p ON p.game = l.game AND p.seq = l.seq - 1 \
                 WHERE l.position >= $1 AND l.position < $2 ORDER BY l.position",
            )
            .await?;
            c.query(&batch, &[&big(from), &big(end)]).await.map_err(io)
        })?;
        let mut leaves = Vec::with_capacity(rows.len());
        for (row, index) in rows.iter().zip(from..end) {
            // A gap: the caller finds no leaf at `index`.
            if unsigned(row.get(0), "a position")? != index {
                break;
            }
            let (game, seq) = (row.get::<_, String>(1), unsigned(row.get(2), "a seq")?);
            let (bytes, before) = (row.get::<_, Option<&[u8]>>(3), row.get::<_, Option<&[u8]>>(4));
            let Some(bytes) = bytes else {
                leaves.push(super::LeafRead { game, seq, event: None, stored: [0; 32], position: Some(index) });
                continue;
            };
            let Parsed { event, at: time, .. } = decode_parsed(seq, bytes)?;
            let prev = match (seq, before) {
                (0, _) => None,
                (_, Some(b)) => Some(decode_parsed(seq - 1, b)?.event.link()),
                (_, None) => {
                    let why = crate::event::EventError::Seq { expected: seq - 1, found: seq };
                    return Err(ReadError::Corrupt { seq, why });
                }
            };
            Chain::after(prev).push(&event, time).map_err(|why| ReadError::Corrupt { seq, why })?;
            leaves.push(super::LeafRead {
                game,
                seq,
                event: Some(event),
                stored: leaf_hash(bytes),
                position: Some(index),
            });
        }
        Ok(leaves)
    }

    fn log_position(&self, game: &str, seq: u64) -> Result<Option<u64>, ReadError> {
        let game = game.to_string();
        let position = self.with_client(move |c| async move {
            let row = c
                .query_opt("SELECT position FROM log_leaves WHERE game = $1 AND seq = $2", &[&game, &big(seq)])
                .await
                .map_err(io)?;
            Ok(row.map(|r| r.get::<_, i64>(0)))
        })?;
        position.map(|p| unsigned(p, "a position")).transpose()
    }

    fn snapshot(&self, game: &str, seq: u64) -> Result<Option<(u64, Vec<u8>)>, ReadError> {
        let game = game.to_string();
        let found = self.with_client(move |c| async move {
            let row = c
                .query_opt(
                    "SELECT seq, bytes FROM snapshots WHERE game = $1 AND seq <= $2 ORDER BY seq DESC LIMIT 1",
                    &[&game, &big(seq)],
                )
                .await
                .map_err(io)?;
            Ok(row.map(|r| (r.get::<_, i64>(0), r.get::<_, Vec<u8>>(1))))
        })?;
        found.map(|(seq, bytes)| Ok((unsigned(seq, "a snapshot's seq")?, bytes))).transpose()
    }

    /// Written without waiting for the WAL to reach the disk
    /// (`synchronous_commit = off` for this one transaction): a snapshot
    /// lost in a crash is only slower, never wrong, since every reader
    /// checks it.
    fn put_snapshot(&self, game: &str, seq: u64, bytes: &[u8]) -> Result<(), AppendError> {
        let (game, bytes) = (game.to_string(), bytes.to_vec());
        self.with_client(move |mut c| async move {
            let tx = c.transaction().await.map_err(io)?;
            tx.batch_execute("SET LOCAL synchronous_commit = off").await.map_err(io)?;
            tx.execute(
                "INSERT INTO snapshots (game, seq, bytes) VALUES ($1, $2, $3) \
                 ON CONFLICT (game, seq) DO UPDATE SET bytes = $3",
                &[&game, &big(seq), &bytes],
            )
            .await
            .map_err(io)?;
            tx.commit().await.map_err(io)
        })
        .map_err(append_io)
    }

    fn snapshot_seqs(&self, game: &str) -> Result<Vec<u64>, ReadError> {
        let game = game.to_string();
        let seqs = self.with_client(move |c| async move {
            let rows = c.query("SELECT seq FROM snapshots WHERE game = $1 ORDER BY seq", &[&game]).await.map_err(io)?;
            Ok(rows.iter().map(|r| r.get::<_, i64>(0)).collect::<Vec<_>>())
        })?;
        seqs.into_iter().map(|s| unsigned(s, "a snapshot's seq")).collect()
    }

    fn delete_snapshot(&self, game: &str, seq: u64) -> Result<(), AppendError> {
        let game = game.to_string();
        self.with_client(move |c| async move {
            c.execute("DELETE FROM snapshots WHERE game = $1 AND seq = $2", &[&game, &big(seq)]).await.map_err(io)
        })
        .map(drop)
        .map_err(append_io)
    }
}

impl PostgresStore {
    /// The stored bytes of one event, unchecked.
    fn get_stored(&self, game: &str, seq: u64) -> Result<Option<Vec<u8>>, ReadError> {
        let game = game.to_string();
        self.with_client(move |c| async move {
            let one = prepared(&c, "SELECT bytes FROM events WHERE game = $1 AND seq = $2").await?;
            let row = c.query_opt(&one, &[&game, &big(seq)]).await.map_err(io)?;
            Ok(row.map(|r| r.get::<_, Vec<u8>>(0)))
        })
    }

    /// `game`'s stored events from `from` on, unchecked, read `READ_PAGE`
    /// at a time. Events are never changed, so pages read one after the
    /// other are one consistent read; a seq missing in the middle is left
    /// for the reader's chain check to name.
    fn pages(&self, game: &str, from: u64) -> impl Iterator<Item = Result<(u64, Vec<u8>), ReadError>> + Send + '_ {
        let game = game.to_string();
        let mut next = Some(from);
        let mut page: std::vec::IntoIter<(u64, Vec<u8>)> = Vec::new().into_iter();
        std::iter::from_fn(move || {
            if let Some(item) = page.next() {
                return Some(Ok(item));
            }
            let at = next?;
            let game = game.clone();
            let rows = self.with_client(move |c| async move {
                let page =
                    prepared(&c, "SELECT seq, bytes FROM events WHERE game = $1 AND seq >= $2 ORDER BY seq LIMIT $3")
                        .await?;
                let rows = c.query(&page, &[&game, &big(at), &READ_PAGE]).await.map_err(io)?;
                rows.iter().map(|r| Ok((unsigned(r.get(0), "a seq")?, r.get::<_, Vec<u8>>(1)))).collect()
            });
            let rows: Vec<(u64, Vec<u8>)> = match rows {
                Ok(rows) => rows,
                Err(e) => {
                    next = None;
                    return Some(Err(e));
                }
            };
            next = match rows.len() as i64 == READ_PAGE {
                true => rows.last().map(|(seq, _)| seq + 1),
                false => None,
            };
            page = rows.into_iter();
            page.next().map(Ok)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_shown_without_its_password() {
        assert_eq!(shown_url("postgres://arbiter:s3cret@db:5432/t"), "postgres://arbiter:***@db:5432/t");
        assert_eq!(shown_url("postgres://arbiter@db/t"), "postgres://arbiter@db/t");
        assert!(is_url("postgresql://h/t") && !is_url("./data"));
    }
}
