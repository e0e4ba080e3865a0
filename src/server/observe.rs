//! What the server tells its operators: one log line per request,
//! `GET /health`, and Prometheus metrics at `GET /metrics`.
//!
//! The request log goes through `tracing` to stderr (`init_log`), filtered
//! as `RUST_LOG` says (default `info`). A line names the method, the route's
//! pattern (`/api/games/{game}/events`: never the URI, whose query may hold
//! `access_token=`), the game, the status and the latency; never a header
//! (so never an Authorization or Cookie header) and never a query string.
//! An answer of 500 or more is logged as an error with its message. A
//! refusal by policy (a cap reached: `busy`, `too_many_streams`; a drain:
//! `shutting_down`) is the server working as meant, and a client could
//! fill the log with them: it is logged at WARN, one line per code per
//! `LOGGED_EVERY` saying how many were refused since the last (`Throttle`).
//! A database that does not answer (`store_unavailable`) is an error, but
//! every table's request would say it: it is throttled the same way. A
//! connection cut because its request's head did not arrive in time (a
//! slowloris) is counted in `arbiter_connections_cut_total{reason}` and
//! logged the same way.
//!
//! The metrics live beside the router (`Metrics`, one per router), fed by
//! the request middleware (`record`), by the store's group commit
//! (`Store::on_sync`: the sync's latency and how many events it made
//! durable; the store knows nothing of Prometheus), and read from the
//! server at each scrape (games folded in memory).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use futures_util::StreamExt;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use serde_json::{Value, json};

use super::error::Refusal;
use super::{ApiError, Shared, blocking};
use crate::store::Synced;

/// Where `RUST_LOG` is not set (or does not parse): the request log and
/// anything else arbiter says at info, other crates' warnings only.
const DEFAULT_FILTER: &str = "warn,arbiter=info";

/// Installs the log on stderr, once per process (later calls do nothing).
/// For `arbiter serve`; the library never calls it.
pub fn init_log() {
    // `RUST_LOG` as targets and levels ("warn,arbiter=debug"): tracing's
    // `Targets`, without `EnvFilter`'s span and field filters, which a
    // request log does not need and whose regex engine is most of a build.
    use tracing_subscriber::filter::Targets;
    use tracing_subscriber::prelude::*;
    let default: Targets = DEFAULT_FILTER.parse().expect("the default filter parses");
    let filter = match std::env::var("RUST_LOG") {
        Ok(spec) if !spec.trim().is_empty() => spec.parse::<Targets>().unwrap_or_else(|e| {
            eprintln!("RUST_LOG={spec:?} does not parse ({e}); logging with {DEFAULT_FILTER:?}");
            default
        }),
        _ => default,
    };
    let log = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(false);
    let _ = tracing_subscriber::registry().with(log.with_filter(filter)).try_init();
}

/// Every figure `/metrics` shows, registered once.
pub struct Metrics {
    registry: Registry,
    /// Append requests (POSTs to an append route) acknowledged, by route
    /// and by what the answer was: `stored` (201) or `retry` (200, a retry
    /// of what was already stored). A GET of the same route reads a page.
    appends: Family<[(&'static str, &'static str); 2], Counter>,
    /// Error answers by their code (`error::CODES`), conflicts apart.
    refusals: Family<[(&'static str, &'static str); 1], Counter>,
    /// Appends whose `expect_seq` was not the game's next seq (409 `conflict`).
    conflicts: Counter,
    /// Each group-commit sync (flush + fdatasync), in seconds.
    sync_seconds: Histogram,
    /// Events each sync made durable: the group's size.
    sync_events: Histogram,
    /// Connections the server cut, by why (`CUT_REASONS`).
    cuts: Family<[(&'static str, &'static str); 1], Counter>,
    /// Live streams (Server-Sent Events) open now.
    subscribers: Gauge,
    /// Games folded at their head in the server's memory, set at each scrape.
    open_games: Gauge,
    /// The router's route patterns, the labels a request is counted under
    /// (any other: `UNMATCHED`). Given by the router, so that this hook
    /// does not read the route table.
    routes: Vec<&'static str>,
    /// When each refusal by policy and each cut was last logged.
    throttle: Throttle,
}

/// Why the server cuts a connection (`arbiter_connections_cut_total`'s
/// `reason`): its request's head did not arrive within the header timeout
/// (a slowloris, or a client stalled), or it was still open at the
/// shutdown's deadline.
pub const CUT_REASONS: &[&str] = &["head_timeout", "shutdown_deadline"];

/// How often a refusal by policy (or a cut) of one kind is logged at most.
pub const LOGGED_EVERY: Duration = Duration::from_secs(10);

/// Codes refused by policy: a cap reached or a drain, not a fault.
const BY_POLICY: &[&str] = &["busy", "too_many_streams", "shutting_down"];

/// When each kind of line (a code, a cut's reason) was last logged, and
/// how many of its kind came since.
#[derive(Default)]
struct Throttle(Mutex<HashMap<&'static str, (Instant, u64)>>);

impl Throttle {
    /// Notes one `kind` at `now`. Some(n) when a line is due (the first, or
    /// the first after `LOGGED_EVERY` since the last line): n of this kind
    /// since the last line, this one included.
    fn note(&self, kind: &'static str, now: Instant) -> Option<u64> {
        let mut seen = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match seen.get_mut(kind) {
            Some((last, since)) if now.saturating_duration_since(*last) < LOGGED_EVERY => {
                *since += 1;
                None
            }
            Some((last, since)) => {
                let n = *since + 1;
                (*last, *since) = (now, 0);
                Some(n)
            }
            None => {
                seen.insert(kind, (now, 0));
                Some(1)
            }
        }
    }
}

impl Metrics {
    pub fn new(routes: Vec<&'static str>) -> Metrics {
        let mut registry = Registry::with_prefix("arbiter");
        let appends = Family::default();
        registry.register(
            "appends",
            "Append requests acknowledged, by route and outcome (stored, retry)",
            appends.clone(),
        );
        let refusals = Family::default();
        registry.register("refusals", "Error answers by code (conflicts are counted apart)", refusals.clone());
        let conflicts = Counter::default();
        registry.register("conflicts", "Appends whose expect_seq was not the game's next seq", conflicts.clone());
        // 100 us to about 3.3 s: a sync on a fast disk to a disk in trouble.
        let sync_seconds = Histogram::new(exponential_buckets(0.0001, 2.0, 16));
        registry.register(
            "sync_seconds",
            "Group-commit syncs (the journal's write + fdatasync, or sled's flush + fdatasync), in seconds",
            sync_seconds.clone(),
        );
        // 0 (a sync of settings alone), then 1 to 4,096 events.
        let sync_events = Histogram::new(std::iter::once(0.0).chain(exponential_buckets(1.0, 2.0, 13)));
        registry.register("sync_events", "Events made durable by each group-commit sync", sync_events.clone());
        let cuts = Family::default();
        registry.register(
            "connections_cut",
            "Connections cut by the server, by reason (head_timeout: the request's head did not arrive in time; shutdown_deadline)",
            cuts.clone(),
        );
        let subscribers = Gauge::default();
        registry.register("subscribers", "Live streams (Server-Sent Events) open now", subscribers.clone());
        let open_games = Gauge::default();
        registry.register("open_games", "Games folded at their head in the server's memory", open_games.clone());
        Metrics {
            registry,
            appends,
            refusals,
            conflicts,
            sync_seconds,
            sync_events,
            cuts,
            subscribers,
            open_games,
            routes,
            throttle: Throttle::default(),
        }
    }

    /// `n` connections cut for `reason` (one of `CUT_REASONS`): counted,
    /// and logged at WARN at most once per `LOGGED_EVERY`.
    pub fn cut(&self, reason: &'static str, n: u64) {
        debug_assert!(CUT_REASONS.contains(&reason), "a cut's reason is one of CUT_REASONS, not {reason}");
        self.cuts.get_or_create(&[("reason", reason)]).inc_by(n);
        for _ in 0..n {
            if let Some(cut) = self.throttle.note(reason, Instant::now()) {
                let every_s = LOGGED_EVERY.as_secs();
                tracing::warn!(
                    reason,
                    cut,
                    every_s,
                    "connections cut (one line per reason every every_s seconds; cut: since the last)"
                );
            }
        }
    }

    /// One group-commit sync, as the store reports it.
    pub fn synced(&self, synced: Synced) {
        self.sync_seconds.observe(synced.took.as_secs_f64());
        self.sync_events.observe(synced.events as f64);
    }

    /// The metrics in the OpenMetrics text format (which Prometheus reads).
    pub fn encode(&self) -> String {
        let mut text = String::new();
        encode(&mut text, &self.registry).expect("writing to a String does not fail");
        text
    }

    /// Counts one answer.
    fn answered(&self, route: &'static str, method: &Method, status: StatusCode, refusal: Option<&Refusal>) {
        if let Some(r) = refusal {
            if r.code == "conflict" {
                self.conflicts.inc();
            } else {
                self.refusals.get_or_create(&[("code", r.code)]).inc();
            }
        } else if status.is_client_error() || status.is_server_error() {
            // An answer axum made without the error body (none is expected).
            self.refusals.get_or_create(&[("code", "other")]).inc();
        }
        if status.is_success() && method == Method::POST && APPEND_ROUTES.contains(&route) {
            let outcome = if status == StatusCode::CREATED { "stored" } else { "retry" };
            self.appends.get_or_create(&[("route", route), ("outcome", outcome)]).inc();
        }
    }
}

const APPEND_ROUTES: &[&str] = &["/api/games/{game}/events", "/api/games/{game}/batch"];

/// A request that matched no route.
const UNMATCHED: &str = "-";

/// Feeds `metrics` from `store`'s group commit.
pub fn watch_store(store: &dyn crate::store::Store, metrics: &Arc<Metrics>) {
    let metrics = metrics.clone();
    store.on_sync(Arc::new(move |synced| metrics.synced(synced)));
}

/// The middleware of every route: logs the request when its answer is
/// ready (a live stream: when it opens) and counts it.
pub async fn record(State(metrics): State<Arc<Metrics>>, request: Request, next: Next) -> Response {
    let began = Instant::now();
    let method = request.method().clone();
    let route = request.extensions().get::<MatchedPath>().map(|m| m.as_str().to_string());
    let game = game_of(route.as_deref(), request.uri());
    let mut response = next.run(request).await;
    let latency_us = began.elapsed().as_micros() as u64;
    let status = response.status();
    let refusal = response.extensions().get::<Refusal>().cloned();
    // The table's own pattern, as a static label (a route outside the table, none).
    let known = route.as_deref().and_then(|r| metrics.routes.iter().find(|t| **t == r)).copied();
    metrics.answered(known.unwrap_or(UNMATCHED), &method, status, refusal.as_ref());
    // Absent fields (no game, no error code) are left out of the line.
    let route = route.as_deref().unwrap_or(UNMATCHED);
    let game = (!game.is_empty()).then_some(game.as_str());
    let code = refusal.as_ref().map(|r| r.code);
    let every_s = LOGGED_EVERY.as_secs();
    if let Some(r) = refusal.as_ref().filter(|r| BY_POLICY.contains(&r.code)) {
        if let Some(refused) = metrics.throttle.note(r.code, Instant::now()) {
            tracing::warn!(%method, route, game, status = status.as_u16(), code, error = r.message.as_str(), refused, every_s,
                "refused by policy (one line per code every every_s seconds; refused: since the last)");
        }
    } else if let Some(r) = refusal.as_ref().filter(|r| r.code == "store_unavailable") {
        if let Some(refused) = metrics.throttle.note(r.code, Instant::now()) {
            tracing::error!(%method, route, game, status = status.as_u16(), code, error = r.message.as_str(), refused, every_s,
                "the store does not answer (one line every every_s seconds; refused: since the last)");
        }
    } else if status.is_server_error() {
        // (`error`, not `message`: that name is the line's own text.)
        let error = refusal.as_ref().map(|r| r.message.as_str());
        tracing::error!(%method, route, game, status = status.as_u16(), latency_us, code, error, "request failed");
    } else {
        tracing::info!(%method, route, game, status = status.as_u16(), latency_us, code, "request");
    }
    if is_event_stream(&response) {
        response = count_subscriber(response, &metrics);
    }
    response
}

/// The game a request names: the `{game}` segment of its path, else a
/// `game` query parameter (the proof routes), as sent (still
/// percent-encoded, so the log line holds no control character), at
/// most 128 bytes. Nothing else of the query is read.
fn game_of(route: Option<&str>, uri: &axum::http::Uri) -> String {
    let from_path = route.and_then(|r| {
        let at = r.split('/').position(|s| s == "{game}")?;
        uri.path().split('/').nth(at)
    });
    let from_query =
        || uri.query().and_then(|q| q.split('&').find_map(|pair| pair.strip_prefix("game=")).filter(|g| !g.is_empty()));
    let game = from_path.or_else(from_query).unwrap_or("");
    let mut end = game.len().min(128);
    while !game.is_char_boundary(end) {
        end -= 1;
    }
    game[..end].to_string()
}

fn is_event_stream(response: &Response) -> bool {
    response.status().is_success()
        && response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"))
}

/// Counts a live stream in `subscribers` for as long as its body is held:
/// the count falls when the stream ends or the client goes away, whatever
/// ends it, without the stream's code knowing.
fn count_subscriber(response: Response, metrics: &Metrics) -> Response {
    let open = Subscriber::open(&metrics.subscribers);
    let (parts, body) = response.into_parts();
    let body = body.into_data_stream().map(move |chunk| {
        let _held = &open;
        chunk
    });
    Response::from_parts(parts, Body::from_stream(body))
}

/// One open live stream.
struct Subscriber(Gauge);

impl Subscriber {
    fn open(gauge: &Gauge) -> Subscriber {
        gauge.inc();
        Subscriber(gauge.clone())
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// `GET /metrics`: the Prometheus metrics.
pub async fn metrics(State(s): State<Shared>, Extension(metrics): Extension<Arc<Metrics>>) -> Response {
    metrics.open_games.set(s.open_games() as i64);
    let mut response = metrics.encode().into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
    );
    response
}

/// `GET /health`: 200 while the store answers reads and its last sync
/// succeeded; 503 `unhealthy` once a write failed (the store then stores
/// nothing more until the server is started again), 503
/// `store_unavailable` while the database cannot be reached (it answers
/// 200 again once it can), 503 `shutting_down` while draining.
pub async fn health(State(s): State<Shared>) -> Result<Json<Value>, ApiError> {
    if s.is_closing() {
        return Err(ApiError::shutting_down());
    }
    if let Some(why) = s.store.failed() {
        return Err(ApiError::unhealthy(format!(
            "a write to the store failed ({why}); it stores nothing more: restart the server once the cause is fixed"
        )));
    }
    let store = s.store;
    // A read that reaches sled, so a store that no longer answers shows here.
    let read = blocking(move || Ok::<_, crate::store::ReadError>((store.games()?.len(), store.log_size()?))).await?;
    let (games, events) = read.map_err(|e| match e {
        // A database down: its own code, as appends then answer.
        e @ crate::store::ReadError::Unavailable(_) => ApiError::from(crate::record::RecordError::from(e)),
        e => ApiError::unhealthy(format!("the store does not answer reads: {e}")),
    })?;
    Ok(Json(json!({
        "status": "ok",
        "store": "open",
        "last_sync": "ok",
        "syncs": store.syncs(),
        "games": games,
        "events": events,
    })))
}

impl super::Server {
    /// Games whose folded state the server holds now (a game whose append
    /// is under way counts).
    fn open_games(&self) -> usize {
        let slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        slots.values().filter(|slot| slot.recorder.try_lock().map_or(true, |r| r.is_some())).count()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use axum::Router;
    use axum::routing::get;

    use super::*;

    /// The log's lines, kept for the test to read.
    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Lines {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A server of one route that answers `refusal`, behind the request
    /// hook, on loopback: its address, its log (kept while the returned
    /// guard lives) and its metrics.
    async fn serve_one(
        route: &str,
        refusal: fn() -> ApiError,
    ) -> (std::net::SocketAddr, Lines, Arc<Metrics>, tracing::subscriber::DefaultGuard) {
        let lines = Lines::default();
        let writer = lines.clone();
        let subscriber = tracing_subscriber::fmt().with_writer(move || writer.clone()).with_ansi(false).finish();
        let log = tracing::subscriber::set_default(subscriber);
        let metrics = Arc::new(Metrics::new(Vec::new()));
        let app: Router = Router::new()
            .route(route, get(move || async move { refusal() }))
            .layer(axum::middleware::from_fn_with_state(metrics.clone(), record));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        (addr, lines, metrics, log)
    }

    /// One request over loopback (on a blocking thread: the server runs on
    /// the test's own), its answer's status line.
    async fn get_status(addr: std::net::SocketAddr, path: &str) -> String {
        let request =
            format!("GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sekrit\r\nConnection: close\r\n\r\n");
        tokio::task::spawn_blocking(move || {
            use std::io::{Read, Write};
            let mut tcp = std::net::TcpStream::connect(addr).unwrap();
            tcp.write_all(request.as_bytes()).unwrap();
            let mut answer = String::new();
            tcp.read_to_string(&mut answer).unwrap();
            answer.lines().next().unwrap_or_default().to_string()
        })
        .await
        .unwrap()
    }

    #[tokio::test]
    async fn a_server_error_is_logged_with_its_message_and_counted_by_code() {
        let (addr, lines, metrics, _log) =
            serve_one("/api/games/{game}/boom", || ApiError::internal("the disk said no")).await;

        let status = get_status(addr, "/api/games/t%2012/boom?access_token=sekrit").await;
        assert_eq!(status, "HTTP/1.1 500 Internal Server Error");
        let log = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
        let line = log.lines().find(|l| l.contains("request failed")).unwrap_or_else(|| panic!("{log}"));
        for field in [
            "ERROR",
            "method=GET",
            "route=\"/api/games/{game}/boom\"",
            "game=\"t%2012\"",
            "status=500",
            "code=\"internal\"",
            "error=\"the disk said no\"",
        ] {
            assert!(line.contains(field), "{field} in {line}");
        }
        assert!(!log.contains("sekrit"), "{log}");
        assert!(metrics.encode().contains("arbiter_refusals_total{code=\"internal\"} 1"), "{}", metrics.encode());
    }

    #[tokio::test]
    async fn refusals_by_policy_are_a_warning_once_per_interval_and_cuts_are_logged() {
        let (addr, lines, metrics, _log) =
            serve_one("/api/games/{game}/stream", || ApiError::too_many_streams("the most it may have")).await;
        for _ in 0..5 {
            assert_eq!(get_status(addr, "/api/games/g/stream").await, "HTTP/1.1 503 Service Unavailable");
        }
        metrics.cut("head_timeout", 3);
        let log = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
        assert!(!log.contains("ERROR"), "{log}");
        let refused: Vec<&str> = log.lines().filter(|l| l.contains("refused by policy")).collect();
        assert_eq!(refused.len(), 1, "{log}");
        for field in ["WARN", "code=\"too_many_streams\"", "refused=1", "every_s=10", "status=503"] {
            assert!(refused[0].contains(field), "{field} in {}", refused[0]);
        }
        let cut: Vec<&str> = log.lines().filter(|l| l.contains("connections cut")).collect();
        assert_eq!(cut.len(), 1, "{log}");
        assert!(cut[0].contains("WARN") && cut[0].contains("reason=\"head_timeout\"") && cut[0].contains("cut=1"));
        let text = metrics.encode();
        assert!(text.contains("arbiter_refusals_total{code=\"too_many_streams\"} 5"), "{text}");
        assert!(text.contains("arbiter_connections_cut_total{reason=\"head_timeout\"} 3"), "{text}");
    }

    #[test]
    fn the_throttle_says_how_many_came_since_its_last_line() {
        let throttle = Throttle::default();
        let t0 = Instant::now();
        assert_eq!(throttle.note("busy", t0), Some(1));
        assert_eq!(throttle.note("busy", t0 + Duration::from_secs(1)), None);
        assert_eq!(throttle.note("too_many_streams", t0 + Duration::from_secs(1)), Some(1), "each code its own");
        assert_eq!(throttle.note("busy", t0 + Duration::from_secs(9)), None);
        assert_eq!(throttle.note("busy", t0 + LOGGED_EVERY), Some(3));
        assert_eq!(throttle.note("busy", t0 + LOGGED_EVERY + Duration::from_secs(1)), None);
    }
}
