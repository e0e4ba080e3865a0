//! `arbiter serve`: one process owns the store and every table records
//! into it over HTTP (sled allows one process per store).
//!
//! - [`routes`]: the route table; the same table writes the OpenAPI document.
//! - [`games`]: create, list, import, fork, tokens, read access.
//! - [`events`]: append (one or a batch), read pages, and the live stream (SSE).
//! - [`views`]: head, state, verify, export, what-if, diff, replay.
//! - [`body`]: reading a request's body and query, strictly.
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
//! the server stops taking appends (503 "shutting_down"), finishes those in
//! flight, ends live streams, and exits; nothing is acknowledged that was
//! not stored durably.

pub mod body;
pub mod error;
pub mod events;
pub mod games;
pub mod log;
pub mod observe;
pub mod page;
pub mod routes;
pub mod views;

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use axum::http::HeaderMap;
use tokio::sync::{Semaphore, watch};

use crate::access::{self, Grant, ReadAccess};
use crate::limits::{MAX_CACHED_GAMES, MAX_PENDING_APPENDS};
use crate::record::{RecordError, Recorder};
use crate::store::checkpoints;
use crate::store::{SledStore, Store};
use crate::tlog::NoteSigner;

pub use error::ApiError;

/// What every handler shares.
pub struct Server {
    /// The store lives as long as the process: it is leaked once at start
    /// so that folded games (`Recorder<'static>`) can be kept between requests.
    pub store: &'static SledStore,
    /// One slot per game touched since start.
    slots: Mutex<HashMap<String, Arc<Slot>>>,
    /// Permits for appends held at once (back-pressure).
    pending: Arc<Semaphore>,
    /// Set when shutdown begins.
    closing: watch::Sender<bool>,
    /// The organiser's log key and the newest checkpoint.
    pub keeper: log::Keeper,
}

/// A game's lock and live head.
pub struct Slot {
    /// The game folded at its head, loaded on first append. The lock
    /// serialises appends to this game.
    pub recorder: Arc<tokio::sync::Mutex<Option<Recorder<'static>>>>,
    /// The head seq, for live streams to wait on.
    pub head: watch::Sender<Option<u64>>,
}

pub type Shared = Arc<Server>;

impl Server {
    /// A server whose checkpoints are signed with the store's own key
    /// (`DATA/log.key`, made on first use).
    pub fn new(store: SledStore) -> Shared {
        let signer = checkpoints::signer(store.dir(), None, None).expect("the store's log key");
        Server::with_pending(store, signer, MAX_PENDING_APPENDS)
    }

    /// A server that signs checkpoints with `signer` and holds at most
    /// `pending` appends at once.
    pub fn with_pending(store: SledStore, signer: NoteSigner, pending: usize) -> Shared {
        let keeper = log::Keeper::new(signer, store.dir().to_path_buf());
        let store: &'static SledStore = Box::leak(Box::new(store));
        Arc::new(Server {
            store,
            slots: Mutex::new(HashMap::new()),
            pending: Arc::new(Semaphore::new(pending)),
            closing: watch::channel(false).0,
            keeper,
        })
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
        let head = self.store.head(game)?.map(|h| h.seq);
        let slot = Arc::new(Slot { recorder: Arc::new(tokio::sync::Mutex::new(None)), head: watch::channel(head).0 });
        slots.insert(game.to_string(), slot.clone());
        Ok(slot)
    }

    /// Tells live streams that `game`'s head is now `seq`.
    pub fn advanced(&self, game: &str, seq: u64) {
        if let Ok(slot) = self.slot(game) {
            slot.head.send_if_modified(|h| {
                let newer = h.is_none_or(|h| h < seq);
                if newer {
                    *h = Some(seq);
                }
                newer
            });
        }
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
    /// `POST /api/session`), which only reads. No token: None. A token sent
    /// explicitly that this server did not issue, or that was revoked or has
    /// expired, is 401, saying which. A cookie that no longer works counts
    /// as no token: the browser sends it with every request, and a public
    /// game must stay readable after a seat's token expires.
    ///
    /// Tokens ride in query strings and cookies: nothing may log those
    /// (a request log writes the route's pattern, never the query string,
    /// the Authorization header or the Cookie header).
    pub fn caller(&self, headers: &HeaderMap, query_token: Option<&str>) -> Result<Option<Grant>, ApiError> {
        let header = headers.get(axum::http::header::AUTHORIZATION);
        let token = match header {
            Some(v) => {
                let v = v.to_str().map_err(|_| ApiError::unauthorized("the Authorization header is not text"))?;
                let t = v
                    .strip_prefix("Bearer ")
                    .ok_or_else(|| ApiError::unauthorized("the Authorization header must be \"Bearer TOKEN\""))?;
                Some(t.trim())
            }
            None => query_token,
        };
        // The clock is read here, at the edge: `access` is given the time.
        let now = chrono::Utc::now();
        if let Some(token) = token {
            return page::standing_grant(access::check(self.store, token, now)?).map(Some);
        }
        match page::cookie_token(headers) {
            Some(token) => match access::check(self.store, token, now)? {
                access::Standing::Valid(grant, _) => Ok(Some(Grant::Cookie(Box::new(grant)))),
                _ => Ok(None),
            },
            None => Ok(None),
        }
    }

    /// Only the organiser.
    pub fn organiser(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        match self.caller(headers, None)? {
            None => Err(ApiError::unauthorized("this needs the organiser's token")),
            Some(g) if g.is_organiser() => Ok(()),
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

    /// Anyone for a public game; the organiser and the game's seats and
    /// judges for a token-only game.
    pub fn may_read(&self, grant: &Option<Grant>, game: &str) -> Result<(), ApiError> {
        if access::read_access(self.store, game)? == ReadAccess::Public {
            return Ok(());
        }
        match grant {
            None => Err(ApiError::unauthorized(format!("reading {game} needs a token"))),
            Some(g) if g.may_read(game) => Ok(()),
            Some(_) => Err(ApiError::forbidden(format!("this token may not read {game}"))),
        }
    }
}

/// Runs a blocking store operation off the async threads.
///
/// Appends go through here too, and that hop is kept on purpose: an append
/// blocks until the group commit covers it (a flush and an fdatasync, a
/// millisecond or more), and the runtime has as many threads as cores. Run
/// on them (measured with `benches/serve.rs`), 64 tables at once had at
/// most two appends in flight, so each sync covered about one append
/// (0.78 syncs per append) and appends/s fell 4x; `block_in_place`
/// measured no better than this hop. On the blocking pool every waiting
/// append joins the next sync (about 0.05 syncs per append at 64 tables).
pub async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f).await.map_err(|e| ApiError::internal(format!("a worker failed: {e}")))
}

/// Serves until `shutdown` completes, then stops taking appends, finishes
/// the requests in flight, ends live streams and returns.
pub async fn serve(
    listener: tokio::net::TcpListener,
    server: Shared,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = routes::router(server.clone());
    let closing = server.closing.clone();
    let ticking = tokio::spawn(sign_checkpoints(server.clone()));
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown.await;
            closing.send_replace(true);
        })
        .await;
    ticking.abort();
    // The last checkpoint covers every append acknowledged before shutdown.
    let last = server.clone();
    let signed = tokio::task::spawn_blocking(move || last.keeper.tick(last.store())).await;
    match signed {
        Ok(Ok(_)) => served,
        Ok(Err(e)) => Err(std::io::Error::other(format!("the last checkpoint was not signed: {e}"))),
        Err(e) => Err(std::io::Error::other(format!("the last checkpoint was not signed: {e}"))),
    }
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
        let store = SledStore::open(dir.path()).unwrap();
        let signer = checkpoints::signer(dir.path(), None, None).unwrap();
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
