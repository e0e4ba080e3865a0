//! `arbiter serve`: one process owns the store and every table records
//! into it over HTTP (sled allows one process per store).
//!
//! - [`routes`]: the route table; the same table writes the OpenAPI document.
//! - [`games`]: create, list, import, fork, tokens, read access.
//! - [`events`]: append (one or a batch), read pages, and the live stream (SSE).
//! - [`views`]: head, state, verify, export, what-if, diff, replay.
//! - [`body`]: reading a request's body and query, strictly.
//! - [`connection`]: one client connection, with its timeouts; the cap.
//! - [`error`]: the one error body, with a stable code.
//! - [`page`]: the replay page (one HTML file, no build step).
//! - [`observe`]: the request log, `/health` and `/metrics`.
//! - [`log`]: the verifiable log: signed checkpoints (one a second while
//!   appends arrive, and at shutdown), proofs and bundles.
//!
//! Appends to one game are serialised by that game's lock, which also
//! holds the game folded at its head (so an append is one rules check, not
//! a re-fold). Appends to different games run in parallel on tokio's
//! blocking threads, and their durable syncs are shared by the store's group
//! commit. At most `MAX_PENDING_APPENDS` appends are held at once: past
//! that the server answers 503 "busy" at once (back-pressure). On shutdown
//! the server stops taking appends (503 "shutting_down"), ends live
//! streams, lets requests in flight finish until a deadline, cuts what is
//! left, and exits; nothing is acknowledged that was not stored durably.

pub(crate) mod body;
pub(crate) mod connection;
pub(crate) mod error;
pub(crate) mod events;
pub(crate) mod games;
pub(crate) mod log;
pub(crate) mod observe;
pub(crate) mod page;
pub(crate) mod routes;
pub(crate) mod views;

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::HeaderMap;
use tokio::sync::{Semaphore, broadcast, watch};

use crate::access::{self, Grant, ReadAccess};
use crate::limits::{
    BODY_TIMEOUT_SECONDS, FANOUT_BUFFER, HEADER_TIMEOUT_SECONDS, IDLE_TIMEOUT_SECONDS, MAX_CACHED_GAMES,
    MAX_CATCHING_UP, MAX_CONNECTIONS, MAX_GAME_SUBSCRIBERS, MAX_PENDING_APPENDS, MAX_REFUSING, MAX_SUBSCRIBERS,
    SHUTDOWN_DEADLINE_SECONDS, UNACKED_WRITE_SECONDS,
};
use crate::record::{RecordError, Recorder};
use crate::store::Store;
use crate::store::checkpoints;
use crate::tlog::NoteSigner;

pub use connection::ProxyRange;
pub use error::ApiError;
pub use games::issued_json;
pub use observe::init_log;
pub use page::ASSETS;
pub use routes::ROUTES;

/// What every handler shares.
pub struct Server {
    /// The store lives as long as the process: it is leaked once at start
    /// so that folded games (`Recorder<'static>`) can be kept between requests.
    pub store: &'static dyn Store,
    /// One slot per game touched since start.
    slots: Mutex<HashMap<String, Arc<Slot>>>,
    /// Permits for appends held at once (back-pressure). An append's task
    /// holds one until it is done, so all of them free means none is under
    /// way (what shutdown waits for).
    pending: Arc<Semaphore>,
    /// How many permits `pending` has.
    most_pending: u32,
    /// Set when shutdown begins.
    closing: watch::Sender<bool>,
    /// The organiser's log key and the newest checkpoint.
    pub keeper: log::Keeper,
    /// Live subscriptions in all, and the caps on them.
    subscribers: AtomicUsize,
    pub streams: Streams,
    /// Live streams reading the store at once (to catch up).
    pub catching_up: Semaphore,
    /// Bumped by every revoke through this server: a live stream checks its
    /// token again at its next event (`events::Watch`).
    revocations: AtomicU64,
    /// Tokens that worked when last looked up in a store that is a round
    /// trip away (`standing`), so that an append does not look its token
    /// up each time.
    tokens: Mutex<HashMap<String, Looked>>,
    /// What `/metrics` shows, fed by the router's middleware, the store's
    /// syncs and the connection loop (its cuts).
    pub metrics: Arc<observe::Metrics>,
}

/// The token a request was let in with, for a live stream to check again
/// (`events::Watch`): a revoke or an expiry ends the stream.
#[derive(Clone)]
pub struct SignedIn {
    pub grant: Grant,
    pub token: String,
    pub expires: Option<chrono::DateTime<chrono::Utc>>,
}

/// A token that worked when it was looked up (`Server::standing`).
struct Looked {
    at: std::time::Instant,
    /// `Server::revocations` before it was looked up: a revoke through this
    /// server since then means it is looked up again.
    revocations: u64,
    grant: Grant,
    expires: Option<chrono::DateTime<chrono::Utc>>,
}

/// How long a token that worked is taken as working without looking it
/// up again, on a store other servers share: a revoke through another
/// server (or `arbiter token revoke` on the database) stops it here within
/// this, as it stops a live stream here (`events::Watch`). A revoke
/// through this server stops it at once.
const TOKEN_RECHECK: std::time::Duration = std::time::Duration::from_secs(1);

/// Tokens kept by `Server::standing` at most (past that it starts again):
/// a bound on memory, far above the seats and judges of a venue.
const MAX_LOOKED: usize = 4_096;

/// The caps on live subscriptions (`limits`; tests and benchmarks set their own).
#[derive(Clone, Copy, Debug)]
pub struct Streams {
    pub per_game: usize,
    pub in_all: usize,
}

impl Default for Streams {
    fn default() -> Streams {
        Streams { per_game: MAX_GAME_SUBSCRIBERS, in_all: MAX_SUBSCRIBERS }
    }
}

/// A live subscription to one game, counted while it lives.
pub struct Subscription {
    server: Shared,
    slot: Arc<Slot>,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.slot.subscribers.fetch_sub(1, Ordering::SeqCst);
        self.server.subscribers.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A game's lock and its live subscribers.
pub struct Slot {
    /// The game folded at its head, loaded on first append. The lock
    /// serialises appends to this game.
    pub recorder: Arc<tokio::sync::Mutex<Option<Recorder<'static>>>>,
    /// The events once stored, as SSE bytes made once for all subscribers
    /// (`events::Fanned`; those stored close together gathered into one,
    /// `events::publish`). Sent in seq order; never waits: a subscriber
    /// too far behind is told it lagged and reads the store instead.
    pub fanout: broadcast::Sender<events::Fanned>,
    /// Events stored soon after the fan-out's last send, waiting to be
    /// sent together (`events::publish`).
    pub outbox: Mutex<events::Outbox>,
    /// Live subscriptions to this game.
    pub subscribers: AtomicUsize,
}

pub type Shared = Arc<Server>;

impl Server {
    /// A server whose checkpoints are signed with the store's own key
    /// (`DATA/log.key`, or a database's setting, made on first use).
    pub fn new(store: impl Store + 'static) -> Shared {
        let signer = checkpoints::signer(&store, None, None).expect("the store's log key");
        Server::with_pending(store, signer, MAX_PENDING_APPENDS)
    }

    /// A server that signs checkpoints with `signer` and holds at most
    /// `pending` appends at once.
    pub fn with_pending(store: impl Store + 'static, signer: NoteSigner, pending: usize) -> Shared {
        Server::with_limits(Box::new(store), signer, pending, Streams::default())
    }

    /// A server with its own caps on appends held and on live streams.
    pub fn with_limits(store: Box<dyn Store>, signer: NoteSigner, pending: usize, streams: Streams) -> Shared {
        let keeper = log::Keeper::new(signer);
        let store: &'static dyn Store = Box::leak(store);
        let metrics = Arc::new(observe::Metrics::new(routes::ROUTES.iter().map(|r| r.path).collect()));
        observe::watch_store(store, &metrics);
        let server = Arc::new(Server {
            store,
            slots: Mutex::new(HashMap::new()),
            pending: Arc::new(Semaphore::new(pending)),
            most_pending: pending.min(u32::MAX as usize) as u32,
            closing: watch::channel(false).0,
            keeper,
            subscribers: AtomicUsize::new(0),
            streams,
            catching_up: Semaphore::new(MAX_CATCHING_UP),
            revocations: AtomicU64::new(0),
            tokens: Mutex::new(HashMap::new()),
            metrics,
        });
        // Appends through other servers on the same database (none for sled).
        let weak = Arc::downgrade(&server);
        store.watch_appends(Arc::new(move |head| {
            if let Some(server) = weak.upgrade() {
                server.appended_elsewhere(head);
            }
        }));
        server
    }

    pub fn store(&self) -> &'static dyn Store {
        self.store
    }

    /// The slot of `game`, made on first use with the game's current head.
    pub fn slot(&self, game: &str) -> Result<Arc<Slot>, RecordError> {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(slot) = slots.get(game) {
            return Ok(slot.clone());
        }
        if slots.len() >= MAX_CACHED_GAMES {
            // Drop folded states that no append is using; they are folded
            // again on their next append.
            for slot in slots.values() {
                if let Ok(mut r) = slot.recorder.try_lock() {
                    *r = None;
                }
            }
        }
        let slot = Arc::new(Slot {
            recorder: Arc::new(tokio::sync::Mutex::new(None)),
            fanout: broadcast::channel(FANOUT_BUFFER).0,
            outbox: Mutex::default(),
            subscribers: AtomicUsize::new(0),
        });
        slots.insert(game.to_string(), slot.clone());
        Ok(slot)
    }

    /// Tells live streams that `game`'s head is now `seq` (a create, an
    /// import or a fork stored it): they read the new events from the store.
    pub fn advanced(&self, game: &str, seq: u64) {
        if let Ok(slot) = self.slot(game)
            && slot.fanout.receiver_count() > 0
        {
            let _ = slot.fanout.send(events::Fanned::head(seq));
        }
    }

    /// Events of a game were appended, maybe through another server
    /// (`Store::watch_appends`): its live streams read them from the store,
    /// and a fold of it kept here that is behind is dropped, to be folded
    /// again at its next append. None: anything may have been missed, so
    /// every game is treated so. Only games this server has a slot for.
    pub fn appended_elsewhere(&self, head: Option<(&str, u64)>) {
        let slots: Vec<(Arc<Slot>, u64)> = {
            let slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
            match head {
                Some((game, seq)) => slots.get(game).map(|slot| (slot.clone(), seq)).into_iter().collect(),
                None => slots.values().map(|slot| (slot.clone(), u64::MAX)).collect(),
            }
        };
        for (slot, seq) in slots {
            if slot.fanout.receiver_count() > 0 {
                let _ = slot.fanout.send(events::Fanned::head(seq));
            }
            // A slot whose lock is held is appending: it checks the head itself.
            if let Ok(mut folded) = slot.recorder.try_lock()
                && folded.as_ref().is_some_and(|r| r.head().seq < seq)
            {
                *folded = None;
            }
        }
    }

    /// A live subscription to `game` (the receiver to subscribe with, and
    /// the count), or 503 past the caps.
    pub fn subscribe(
        self: &Arc<Self>,
        game: &str,
    ) -> Result<(Subscription, broadcast::Receiver<events::Fanned>), ApiError> {
        let slot = self.slot(game)?;
        let all = self.subscribers.fetch_add(1, Ordering::SeqCst);
        let mine = slot.subscribers.fetch_add(1, Ordering::SeqCst);
        // Counted first, refused after: two racing subscribers never both
        // take the last place.
        let sub = Subscription { server: self.clone(), slot: slot.clone() };
        if mine >= self.streams.per_game {
            return Err(ApiError::too_many_streams(format!(
                "{game} has {} live streams, the most it may have; retry later or follow it through another client",
                self.streams.per_game
            )));
        }
        if all >= self.streams.in_all {
            return Err(ApiError::too_many_streams(format!(
                "the server has {} live streams, the most it may have; retry later",
                self.streams.in_all
            )));
        }
        let live = slot.fanout.subscribe();
        Ok((sub, live))
    }

    pub fn closing(&self) -> watch::Receiver<bool> {
        self.closing.subscribe()
    }

    pub fn is_closing(&self) -> bool {
        *self.closing.borrow()
    }

    /// A permit to hold one append, or 503.
    pub fn permit(&self) -> Result<tokio::sync::OwnedSemaphorePermit, ApiError> {
        if self.is_closing() {
            return Err(ApiError::shutting_down());
        }
        self.pending.clone().try_acquire_owned().map_err(|_| ApiError::busy())
    }

    /// The caller's grant from `Authorization: Bearer TOKEN` (or, for GET
    /// requests, where a browser cannot set headers, `access_token=` in the
    /// query), else from the pages' cookie (`page::COOKIE`, set by
    /// `POST /api/session`), which reads, and appends only from this server's
    /// pages (`events::may_append`). No token: None. A token sent
    /// explicitly that this server did not issue, or that was revoked or has
    /// expired, is 401, saying which. A cookie that no longer works counts
    /// as no token: the browser sends it with every request, and a public
    /// game must stay readable after a seat's token expires.
    ///
    /// Tokens ride in query strings and cookies: nothing may log those
    /// (a request log writes the route's pattern, never the query string,
    /// the Authorization header or the Cookie header).
    pub fn caller(&self, headers: &HeaderMap, query_token: Option<&str>) -> Result<Option<Grant>, ApiError> {
        Ok(self.signed_in(headers, query_token)?.map(|s| s.grant))
    }

    /// The caller (as `caller`), with the token it was let in with.
    pub fn signed_in(&self, headers: &HeaderMap, query_token: Option<&str>) -> Result<Option<SignedIn>, ApiError> {
        let header = headers.get(axum::http::header::AUTHORIZATION);
        let token = match header {
            Some(v) => {
                let v = v.to_str().map_err(|_| ApiError::unauthorized("the Authorization header is not text"))?;
                Some(
                    bearer(v)
                        .ok_or_else(|| ApiError::unauthorized("the Authorization header must be \"Bearer TOKEN\""))?,
                )
            }
            None => query_token,
        };
        // The clock is read here, at the edge: `access` is given the time.
        let now = chrono::Utc::now();
        if let Some(token) = token {
            let standing = self.standing(token, now)?;
            let expires = match &standing {
                access::Standing::Valid(_, expires) => *expires,
                _ => None,
            };
            let grant = page::standing_grant(standing)?;
            return Ok(Some(SignedIn { grant, token: token.to_string(), expires }));
        }
        match page::cookie_token(headers) {
            Some(token) => match self.standing(token, now)? {
                access::Standing::Valid(grant, expires) => {
                    Ok(Some(SignedIn { grant: Grant::Cookie(Box::new(grant)), token: token.to_string(), expires }))
                }
                _ => Ok(None),
            },
            None => Ok(None),
        }
    }

    /// What `token` is worth at `now` (`access::check`). On a store that is
    /// a round trip away (PostgreSQL), a token that worked is taken as
    /// working for `TOKEN_RECHECK` after it was looked up, unless a token
    /// was revoked through this server since, or it has expired: every
    /// request with it would otherwise be one more query.
    pub fn standing(&self, token: &str, now: chrono::DateTime<chrono::Utc>) -> Result<access::Standing, ApiError> {
        if !self.store.shared() {
            return Ok(self.inline(|| access::check(self.store, token, now))?);
        }
        // Read before the lookup: a revoke made during it makes it stale.
        let revocations = self.revocations();
        {
            let tokens = self.tokens.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(looked) = tokens.get(token)
                && looked.revocations == revocations
                && looked.at.elapsed() < TOKEN_RECHECK
                && looked.expires.is_none_or(|t| now < t)
            {
                return Ok(access::Standing::Valid(looked.grant.clone(), looked.expires));
            }
        }
        let at = std::time::Instant::now();
        let standing = self.inline(|| access::check(self.store, token, now))?;
        let mut tokens = self.tokens.lock().unwrap_or_else(|p| p.into_inner());
        match &standing {
            access::Standing::Valid(grant, expires) => {
                if tokens.len() >= MAX_LOOKED {
                    tokens.clear();
                }
                let looked = Looked { at, revocations, grant: grant.clone(), expires: *expires };
                tokens.insert(token.to_string(), looked);
            }
            _ => {
                tokens.remove(token);
            }
        }
        Ok(standing)
    }

    /// A token was revoked through this server (live streams check theirs).
    pub fn revoked(&self) {
        self.revocations.fetch_add(1, Ordering::SeqCst);
    }

    /// How many revokes this server has made.
    pub fn revocations(&self) -> u64 {
        self.revocations.load(Ordering::SeqCst)
    }

    /// Only the organiser.
    pub fn organiser(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        match self.caller(headers, None)? {
            None => Err(ApiError::unauthorized("this needs the organiser's token")),
            Some(g) if g.is_organiser() => Ok(()),
            Some(Grant::Cookie(_)) => Err(ApiError::forbidden(
                "a page's cookie does not act as the organiser; this needs the organiser's token in Authorization",
            )),
            Some(_) => Err(ApiError::forbidden("only the organiser may do this")),
        }
    }

    /// The caller of a reading route: the bearer token, or `access_token`
    /// in the query.
    pub fn reading(&self, headers: &HeaderMap, query: &HashMap<String, String>) -> Result<Option<Grant>, ApiError> {
        self.caller(headers, query.get("access_token").map(String::as_str))
    }

    /// The caller may read `game` (see `may_read`).
    pub fn reader(&self, headers: &HeaderMap, query: &HashMap<String, String>, game: &str) -> Result<(), ApiError> {
        self.may_read(&self.reading(headers, query)?, game)
    }

    /// The caller may read `game` (see `may_read`); the token it was let
    /// in with, for a live stream to check again.
    pub fn stream_reader(
        &self,
        headers: &HeaderMap,
        query: &HashMap<String, String>,
        game: &str,
    ) -> Result<Option<SignedIn>, ApiError> {
        let signed_in = self.signed_in(headers, query.get("access_token").map(String::as_str))?;
        self.may_read(&signed_in.as_ref().map(|s| s.grant.clone()), game)?;
        Ok(signed_in)
    }

    /// Anyone for a public game; the organiser and the game's seats and
    /// judges for a token-only game.
    pub fn may_read(&self, grant: &Option<Grant>, game: &str) -> Result<(), ApiError> {
        if self.inline(|| access::read_access(self.store, game))? == ReadAccess::Public {
            return Ok(());
        }
        match grant {
            None => Err(ApiError::unauthorized(format!("reading {game} needs a token"))),
            Some(g) if g.may_read(game) => Ok(()),
            Some(_) => Err(ApiError::forbidden(format!("this token may not read {game}"))),
        }
    }
}

impl Server {
    /// A short store read made on an async thread (a token's lookup, a
    /// game's head). sled's are memory reads (what is not yet in sled is
    /// read from the store's own memory); a database's is a round
    /// trip, so on a store that is one the worker is handed over to the
    /// runtime's other tasks while it waits (`block_in_place`, which only a
    /// multi-threaded runtime has: the server's).
    pub fn inline<T>(&self, read: impl FnOnce() -> T) -> T {
        let many = tokio::runtime::Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
        match self.store.shared() && many {
            true => tokio::task::block_in_place(read),
            false => read(),
        }
    }
}

/// The token of an `Authorization: Bearer TOKEN` header. The scheme's name
/// is case-insensitive (RFC 7235 section 2.1): `bearer` and `BEARER` too.
fn bearer(value: &str) -> Option<&str> {
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}

/// Runs a blocking store operation off the async threads.
///
/// An append to sled does not come here (`events::append_here`): it is
/// checked and stored on the async thread (mostly memory work), and it waits for
/// the group commit as a future (`Store::durable`), so a waiting append
/// holds no thread and joins the next sync. Blocking on the async threads
/// instead (measured with `benches/serve.rs`) left at most two appends in
/// flight at 64 tables (0.78 syncs per append, 4x fewer appends/s); every
/// append hopping to this pool cost two hops and a wake-up of one of many
/// threads, more CPU than the append itself. On PostgreSQL each store call
/// is a round trip, so appends there still come here.
pub async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f).await.map_err(|e| ApiError::internal(format!("a worker failed: {e}")))
}

/// How `serve` treats connections. The defaults are `limits`' (each says
/// why); tests set them low.
#[derive(Clone, Debug)]
pub struct Connections {
    /// A request's head must arrive within this of the connection being
    /// ready for it (hyper's `header_read_timeout`).
    pub header_timeout: Duration,
    /// A request's body must arrive within this of its head (408).
    pub body_timeout: Duration,
    /// Closed after this (and at most twice this) with no request in
    /// flight and nothing received.
    pub idle_timeout: Duration,
    /// Most connections open at once; past it, 503 "busy" and closed.
    pub max_open: usize,
    /// After shutdown begins, connections still open this long are cut.
    pub shutdown_deadline: Duration,
    /// Peers whose `X-Forwarded-Proto: https` is believed (a TLS proxy in
    /// front): their requests' cookies are `Secure`. None by default.
    pub trusted_proxies: Vec<connection::ProxyRange>,
}

impl Default for Connections {
    fn default() -> Connections {
        Connections {
            header_timeout: Duration::from_secs(HEADER_TIMEOUT_SECONDS),
            body_timeout: Duration::from_secs(BODY_TIMEOUT_SECONDS),
            idle_timeout: Duration::from_secs(IDLE_TIMEOUT_SECONDS),
            max_open: MAX_CONNECTIONS,
            shutdown_deadline: Duration::from_secs(SHUTDOWN_DEADLINE_SECONDS),
            trusted_proxies: Vec::new(),
        }
    }
}

/// How a shutdown went.
#[derive(Debug, Default)]
pub struct Stopped {
    /// Connections still open at the deadline, cut (their requests were not
    /// answered, so nothing they sent was acknowledged).
    pub cut: usize,
}

/// Serves with the default limits until `shutdown` completes (see `serve_with`).
pub async fn serve(
    listener: tokio::net::TcpListener,
    server: Shared,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<Stopped> {
    serve_with(listener, server, Connections::default(), shutdown).await
}

/// Serves until `shutdown` completes, then stops accepting, stops taking
/// appends (503), ends live streams, lets requests in flight finish until
/// `limits.shutdown_deadline`, cuts what is left, signs a last checkpoint
/// and returns. hyper's own connection loop (not `axum::serve`, which sets
/// no timeout) so that each connection has its head, body and idle timeouts.
pub async fn serve_with(
    listener: tokio::net::TcpListener,
    server: Shared,
    limits: Connections,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<Stopped> {
    let app = routes::router(server.clone());
    let ticking = tokio::spawn(sign_checkpoints(server.clone()));
    let open = Arc::new(Semaphore::new(limits.max_open));
    let refusing = Arc::new(Semaphore::new(MAX_REFUSING));
    let (stop, stopping) = watch::channel(false);
    let mut connections = tokio::task::JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            _ = &mut shutdown => break,
            // Finished connections are reaped as they end.
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of file descriptors or the like: wait for a
                // connection to end rather than spin (as axum::serve does).
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        match open.clone().try_acquire_owned() {
            Ok(permit) => {
                connection::unacked_write_timeout(&stream, Duration::from_secs(UNACKED_WRITE_SECONDS));
                let conn = connection::serve(stream, app.clone(), limits.clone(), stopping.clone());
                let metrics = server.metrics.clone();
                connections.spawn(async move {
                    if let Some(reason) = conn.await {
                        metrics.cut(reason, 1);
                    }
                    drop(permit);
                });
            }
            Err(_) => connection::refuse(stream, &refusing),
        }
    }
    server.closing.send_replace(true);
    stop.send_replace(true);
    // The drain: connections still accepted, so that a load balancer's
    // fresh probe of /health reads `shutting_down` (not a refused
    // connection, which looks like a crash); every other request on them is
    // 503 `shutting_down` (`draining`). They are not told to stop (that
    // would close them before their request is read): `draining` closes
    // each after its one answer.
    let (_not_stopping, drain_only) = watch::channel(false);
    let deadline = tokio::time::Instant::now() + limits.shutdown_deadline;
    let drained = loop {
        tokio::select! {
            _ = tokio::time::sleep_until(deadline) => break false,
            ended = connections.join_next() => if ended.is_none() { break true },
            accepted = listener.accept() => if let Ok((stream, _)) = accepted {
                match open.clone().try_acquire_owned() {
                    Ok(permit) => {
                        let conn = connection::serve(stream, app.clone(), limits.clone(), drain_only.clone());
                        connections.spawn(async move {
                            conn.await;
                            drop(permit);
                        });
                    }
                    Err(_) => connection::refuse(stream, &refusing),
                }
            },
        }
    };
    drop(listener);
    let mut stopped = Stopped::default();
    if !drained {
        // Cut: a handler dropped here was not answered.
        stopped.cut = connections.len();
        connections.shutdown().await;
        server.metrics.cut("shutdown_deadline", stopped.cut as u64);
    }
    // An append under way (a task of its own, `events::run`) still
    // finishes, stored durably or not at all, before the last checkpoint
    // and before the runtime, which would drop it, ends.
    let _ = tokio::time::timeout(limits.shutdown_deadline, server.pending.acquire_many(server.most_pending)).await;
    ticking.abort();
    // The last checkpoint covers every append acknowledged before shutdown.
    // Then the store is left in its own form (sled: its journal emptied),
    // as a close would leave it: the store is never dropped.
    let last = server.clone();
    let signed = tokio::task::spawn_blocking(move || {
        let signed = last.keeper.tick(last.store());
        (signed, last.store().settle())
    })
    .await;
    match signed {
        Ok((Ok(_), Ok(()))) => Ok(stopped),
        Ok((Ok(_), Err(e))) => Err(std::io::Error::other(format!("the store's last sync at shutdown failed: {e}"))),
        Ok((Err(e), _)) => Err(std::io::Error::other(format!("the last checkpoint was not signed: {e}"))),
        Err(e) => Err(std::io::Error::other(format!("the last checkpoint was not signed: {e}"))),
    }
}

/// The middleware of every route: while the server drains, only `/health`
/// is answered (it says `shutting_down`); any other request is 503
/// `shutting_down` with Retry-After, and every answer closes its
/// connection.
pub async fn draining(
    axum::extract::State(server): axum::extract::State<Shared>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    if !server.is_closing() {
        return next.run(request).await;
    }
    let mut response = match request.uri().path() {
        "/health" => next.run(request).await,
        _ => ApiError::shutting_down().into_response(),
    };
    let close = axum::http::HeaderValue::from_static("close");
    response.headers_mut().insert(axum::http::header::CONNECTION, close);
    response
}

/// Signs a checkpoint every `CHECKPOINT_EVERY` while the log grows.
async fn sign_checkpoints(server: Shared) {
    let mut every = tokio::time::interval(log::CHECKPOINT_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        let s = server.clone();
        // A failure is retried on the next tick; reads of /checkpoint report it.
        let _ = tokio::task::spawn_blocking(move || s.keeper.tick(s.store())).await;
    }
}

/// The organiser's token on first start: if the store has none, one is
/// issued and returned (to be shown once).
pub fn first_organiser_token(store: &dyn Store) -> Result<Option<String>, RecordError> {
    if access::has_organiser(store)? {
        return Ok(None);
    }
    access::issue(store, &Grant::Organiser).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_past_the_limit_are_told_busy_and_none_after_shutdown_begins() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::SledStore::open(dir.path()).unwrap();
        let signer = checkpoints::signer(&store, None, None).unwrap();
        let server = Server::with_pending(store, signer, 2);
        let held = (server.permit().unwrap(), server.permit().unwrap());
        let busy = server.permit().unwrap_err();
        assert_eq!((busy.status.as_u16(), busy.body["error"]["code"].as_str()), (503, Some("busy")));
        drop(held);
        assert!(server.permit().is_ok(), "a finished append frees its place");
        server.closing.send_replace(true);
        let closing = server.permit().unwrap_err();
        assert_eq!(closing.body["error"]["code"], "shutting_down");
    }
}
