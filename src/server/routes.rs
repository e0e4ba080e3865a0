//! The route table. Each route is written once, with what the OpenAPI
//! document says of it, so the router and `/openapi.json` cannot drift
//! apart (and `schemas/openapi.json` is checked against it by a test).

use axum::extract::DefaultBodyLimit;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, delete, get, post, put};
use axum::{Extension, Router, middleware};
use serde_json::{Map, Value, json};

use super::error::{self, CODES};
use super::{ApiError, Shared, events, games, log, observe, page, views};
use crate::limits::{MAX_IMPORT_BYTES, MAX_REQUEST_BYTES};

/// Who may call a route.
#[derive(Clone, Copy)]
pub enum Who {
    Anyone,
    /// Anyone for a public game; else the organiser and the game's seats and judges.
    Reader,
    /// A seat or judge of the game, as itself.
    Actor,
    Organiser,
}

/// One route: its method and path, and what the OpenAPI document says of it.
pub struct Route {
    pub method: &'static str,
    pub path: &'static str,
    pub summary: &'static str,
    pub who: Who,
    /// Query parameters: (name, description).
    pub query: &'static [(&'static str, &'static str)],
    /// The request body: a schema from `components`, or a media type.
    pub body: Option<Body>,
    /// The success status and what it returns.
    pub ok: (u16, &'static str),
    /// Error codes this route may answer (from `error::CODES`).
    pub errors: &'static [&'static str],
    pub handler: fn() -> MethodRouter<Shared>,
}

#[derive(Clone, Copy)]
pub enum Body {
    Json(&'static str),
    Media(&'static str),
}

const READ_ERRORS: &[&str] = &["input", "no_such_game", "broken", "io", "unauthorized", "forbidden"];
const APPEND_ERRORS: &[&str] = &[
    "input",
    "refused",
    "conflict",
    "no_such_game",
    "io",
    "unauthorized",
    "forbidden",
    "too_large",
    "busy",
    "shutting_down",
    "timeout",
];
/// A live stream can also be past the caps on subscribers.
const STREAM_ERRORS: &[&str] =
    &["input", "no_such_game", "broken", "io", "unauthorized", "forbidden", "too_many_streams"];
const ORGANISER_ERRORS: &[&str] =
    &["input", "exists", "no_such_game", "broken", "io", "unauthorized", "forbidden", "too_large"];

pub const ROUTES: &[Route] = &[
    Route {
        method: "get",
        path: "/api/games",
        summary: "The games the caller may read",
        who: Who::Anyone,
        query: &[],
        body: None,
        ok: (200, "an array of game names"),
        errors: &["unauthorized", "io"],
        handler: || get(games::list),
    },
    Route {
        method: "post",
        path: "/api/games",
        summary: "Create a game: event 0 with the header",
        who: Who::Organiser,
        query: &[],
        body: Some(Body::Json("CreateRequest")),
        ok: (201, "event 0"),
        errors: ORGANISER_ERRORS,
        handler: || post(games::create),
    },
    Route {
        method: "get",
        path: "/api/games/{game}",
        summary: "The head: the last event's seq, hash and time",
        who: Who::Reader,
        query: &[],
        body: None,
        ok: (200, "{seq, hash, at}"),
        errors: READ_ERRORS,
        handler: || get(views::head),
    },
    Route {
        method: "post",
        path: "/api/games/{game}/events",
        summary: "Append one action at expect_seq (a retry of a stored append answers 200 with it)",
        who: Who::Actor,
        query: &[],
        body: Some(Body::Json("AppendRequest")),
        ok: (201, "{event, duplicate, view}"),
        errors: APPEND_ERRORS,
        handler: || post(events::append),
    },
    Route {
        method: "get",
        path: "/api/games/{game}/events",
        summary: "A page of events from a seq",
        who: Who::Reader,
        query: &[("from", "first seq (default 0)"), ("limit", "at most this many (default 100, at most 1000)")],
        body: None,
        ok: (200, "{events, next (seq of the next page, or null), head}"),
        errors: READ_ERRORS,
        handler: || get(events::read),
    },
    Route {
        method: "post",
        path: "/api/games/{game}/batch",
        summary: "Append several actions from expect_seq, checked whole first (one refused stores none)",
        who: Who::Actor,
        query: &[],
        body: Some(Body::Json("BatchRequest")),
        ok: (201, "{appended: [{event, duplicate, view}...]}"),
        errors: APPEND_ERRORS,
        handler: || post(events::batch),
    },
    Route {
        method: "get",
        path: "/api/games/{game}/stream",
        summary: "Server-Sent Events: every event from a seq, then each new one; SSE id = seq, so Last-Event-ID resumes",
        who: Who::Reader,
        query: &[("from", "first seq (default 0); Last-Event-ID, when sent, wins")],
        body: None,
        ok: (200, "text/event-stream of `event` messages, data = the canonical event"),
        errors: STREAM_ERRORS,
        handler: || get(events::stream),
    },
    Route {
        method: "get",
        path: "/api/stream",
        summary: "Server-Sent Events for many games over one connection, as {game, event}: each event stored after the stream opens, or from a seq for a game named game:SEQ",
        who: Who::Reader,
        query: &[(
            "games",
            "the games to follow, separated by commas (at most 64); game:SEQ follows that game from seq SEQ",
        )],
        body: None,
        ok: (200, "text/event-stream of `event` messages, data = {game, event}"),
        errors: STREAM_ERRORS,
        handler: || get(events::stream_many),
    },
    Route {
        method: "get",
        path: "/api/games/{game}/state",
        summary: "Where the game is after a seq: step, who may act, what is legal, the ruleset's state",
        who: Who::Reader,
        query: &[("at", "the seq (default the head)"), ("raw", "0: leave out the reducer's state (the board stays)")],
        body: None,
        ok: (200, "{game, seq, hash, ruleset, step, may_act, legal, awaiting_ruling, state}"),
        errors: READ_ERRORS,
        handler: || get(views::state),
    },
    Route {
        method: "get",
        path: "/api/games/{game}/summary",
        summary: "The game at a glance, for the floor and the index: step, who may act, status (waiting for a judge, in progress, over), open calls and a pending ruling with the time each has waited since, the last event in words",
        who: Who::Reader,
        query: &[],
        body: None,
        ok: (200, "the summary"),
        errors: READ_ERRORS,
        handler: || get(views::summary),
    },
    Route {
        method: "get",
        path: "/api/games/{game}/moves",
        summary: "What each seat and judge may record after a seq: every move with its choices and the values it asks for (schemas/move.schema.json); a seat's or judge's token sees its own",
        who: Who::Reader,
        query: &[("at", "the seq (default the head)"), ("as", "only this seat's or judge's moves")],
        body: None,
        ok: (200, "{game, seq, hash, seats, step, may_act, awaiting_ruling, moves}"),
        errors: READ_ERRORS,
        handler: || get(views::moves),
    },
    Route {
        method: "get",
        path: "/api/games/{game}/verify",
        summary: "Verify hashes, links and a full re-fold",
        who: Who::Reader,
        query: &[("head", "the hash the game must end at")],
        body: None,
        ok: (200, "{game, ok, events, head, rewound}"),
        errors: READ_ERRORS,
        handler: || get(views::verify),
    },
    Route {
        method: "get",
        path: "/api/games/{game}/export",
        summary: "The record as JSON Lines, one canonical event per line",
        who: Who::Reader,
        query: &[],
        body: None,
        ok: (200, "application/jsonl"),
        errors: READ_ERRORS,
        handler: || get(views::export),
    },
    Route {
        method: "post",
        path: "/api/games/{game}/import",
        summary: "Store an export (JSON Lines) as a new game, verified whole first",
        who: Who::Organiser,
        query: &[("read", "public (default) or token")],
        body: Some(Body::Media("application/jsonl")),
        ok: (201, "{game, events, head}"),
        errors: ORGANISER_ERRORS,
        handler: || post(games::import),
    },
    Route {
        method: "post",
        path: "/api/games/{game}/fork",
        summary: "A new game sharing events 0..=at byte for byte",
        who: Who::Organiser,
        query: &[],
        body: Some(Body::Json("ForkRequest")),
        ok: (201, "{game, from, at, events, head}"),
        errors: ORGANISER_ERRORS,
        handler: || post(games::fork),
    },
    Route {
        method: "post",
        path: "/api/games/{game}/whatif",
        summary: "Fold the game without some events (and with others after it); nothing is stored",
        who: Who::Reader,
        query: &[],
        body: Some(Body::Json("WhatIfRequest")),
        ok: (
            200,
            "{legal, illegal?, changes, outcome, step?, board?, skipped, appended}: legal false and illegal [seq, why] when an event becomes illegal; board and step where the what-if stops",
        ),
        errors: READ_ERRORS,
        handler: || post(views::whatif),
    },
    Route {
        method: "get",
        path: "/api/games/{game}/replay",
        summary: "Each event in plain words, with the step before and after, what changed, rulings and rewinds",
        who: Who::Reader,
        query: &[
            ("from", "first seq shown (default 0)"),
            ("to", "last seq shown"),
            ("limit", "at most this many (default and at most 1000)"),
            ("paths", "0: what changed in the board's words only (no changes as state paths)"),
        ],
        body: None,
        ok: (
            200,
            "{events: [{seq, at, actor, kind, action, before, after, said?, changes?, rewound}...], next, rewound: [[first, last]...]}",
        ),
        errors: READ_ERRORS,
        handler: || get(views::replay),
    },
    Route {
        method: "get",
        path: "/api/diff",
        summary: "Compare two games: common prefix, each side from the divergence, the state delta outcome first",
        who: Who::Reader,
        query: &[("a", "a game"), ("b", "another game")],
        body: None,
        ok: (
            200,
            "{alignment, common, a_events, b_events, comparisons, a_from, b_from, rows: [{a?, b?, same}...] lined up by content, outcome, changes, renumbered, agree}",
        ),
        errors: READ_ERRORS,
        handler: || get(views::diff),
    },
    Route {
        method: "post",
        path: "/api/games/{game}/tokens",
        summary: "Issue a token for a seat or a judge of the game (shown once; stored hashed)",
        who: Who::Organiser,
        query: &[],
        body: Some(Body::Json("TokenRequest")),
        ok: (
            201,
            "{token, id, grant, issued, expires, state, link, qr_svg}: link opens the table page signed in (the token in its fragment, from the request's Host); qr_svg draws it",
        ),
        errors: ORGANISER_ERRORS,
        handler: || post(games::token),
    },
    Route {
        method: "get",
        path: "/api/tokens",
        summary: "Every token (of one game, with game=): id, role, game, seat or judge, issued, expires, revoked, state; never the token",
        who: Who::Organiser,
        query: &[("game", "only this game's tokens")],
        body: None,
        ok: (200, "{tokens: [{id, role, game?, seat?, judge?, issued, expires, revoked, state}...]}"),
        errors: &["input", "io", "unauthorized", "forbidden"],
        handler: || get(games::tokens),
    },
    Route {
        method: "post",
        path: "/api/tokens/{id}/revoke",
        summary: "Revoke a token by its id (from GET /api/tokens): it answers 401 from now on",
        who: Who::Organiser,
        query: &[],
        body: None,
        ok: (200, "{id, role, game?, seat?, judge?, issued, expires, revoked, state}"),
        errors: &["input", "io", "unauthorized", "forbidden"],
        handler: || post(games::revoke),
    },
    Route {
        method: "post",
        path: "/api/session",
        summary: "Trade a token for the pages' cookie (HttpOnly, SameSite=Strict, Path=/), which reads, and appends from this server's pages only",
        who: Who::Anyone,
        query: &[],
        body: Some(Body::Json("SessionRequest")),
        ok: (200, "{grant, expires}, and Set-Cookie"),
        errors: &["input", "io", "unauthorized", "too_large"],
        handler: || post(page::session),
    },
    Route {
        method: "get",
        path: "/api/session",
        summary: "Who the caller is signed in as: the pages' cookie's grant (or a bearer token's), or null",
        who: Who::Anyone,
        query: &[],
        body: None,
        ok: (200, "{grant: {role, game?, seat? | judge?} | null}"),
        errors: &["io", "unauthorized"],
        handler: || get(page::signed_in),
    },
    Route {
        method: "delete",
        path: "/api/session",
        summary: "Forget the pages' cookie",
        who: Who::Anyone,
        query: &[],
        body: None,
        ok: (200, "{ended: true}, and Set-Cookie that clears it"),
        errors: &[],
        handler: || delete(page::end_session),
    },
    Route {
        method: "put",
        path: "/api/games/{game}/access",
        summary: "Who may read the game: public, or token-only",
        who: Who::Organiser,
        query: &[],
        body: Some(Body::Json("AccessRequest")),
        ok: (200, "{game, read}"),
        errors: ORGANISER_ERRORS,
        handler: || put(games::set_access),
    },
    Route {
        method: "get",
        path: "/games/{game}/replay",
        summary: "The replay page (HTML): timeline, stepper, state panel, diff, live follow",
        who: Who::Anyone,
        query: &[("diff", "another game to show side by side"), ("seq", "the seq to open at")],
        body: None,
        ok: (200, "text/html"),
        errors: &[],
        handler: || get(page::replay),
    },
    Route {
        method: "get",
        path: "/games/{game}/table",
        summary: "The table page (HTML): a seat or judge signed in on this browser records by tapping its moves; the board, whose turn, live",
        who: Who::Anyone,
        query: &[],
        body: None,
        ok: (200, "text/html"),
        errors: &["no_such_game"],
        handler: || get(page::table),
    },
    Route {
        method: "get",
        path: "/follow",
        summary: "The floor page (HTML): a card per game, live; calls and pending rulings with how long they have waited, first; a judge answers a call from it",
        who: Who::Anyone,
        query: &[("games", "the games to follow, separated by commas (default: every game the caller may read)")],
        body: None,
        ok: (200, "text/html"),
        errors: &[],
        handler: || get(page::follow),
    },
    Route {
        method: "get",
        path: "/assets/{name}",
        summary: "A page's module or style sheet (text/javascript or text/css), compiled into the binary",
        who: Who::Anyone,
        query: &[],
        body: None,
        ok: (200, "text/javascript or text/css"),
        errors: &["not_found"],
        handler: || get(page::asset),
    },
    Route {
        method: "get",
        path: "/",
        summary: "An index page of the games the caller may read: each one's ruleset, table, step and status, linked to its pages",
        who: Who::Anyone,
        query: &[],
        body: None,
        ok: (200, "text/html"),
        errors: &[],
        handler: || get(page::index),
    },
    Route {
        method: "get",
        path: "/checkpoint",
        summary: "The latest signed checkpoint of the log (a C2SP signed note, text/plain)",
        who: Who::Anyone,
        query: &[],
        body: None,
        ok: (200, "text/plain: origin, tree size, base64 root, a blank line, signature lines"),
        errors: &["io", "lost"],
        handler: || get(log::checkpoint),
    },
    Route {
        method: "get",
        path: "/api/log",
        summary: "The log's origin, public key (name+id+key) and latest checkpoint",
        who: Who::Anyone,
        query: &[],
        body: None,
        ok: (200, "{origin, key, size, checkpoint}"),
        errors: &["io", "lost"],
        handler: || get(log::log),
    },
    Route {
        method: "get",
        path: "/api/proof/inclusion",
        summary: "The RFC 6962 inclusion proof of a game's event in the log",
        who: Who::Reader,
        query: &[
            ("game", "the game (required)"),
            ("seq", "the event (default: the game's head)"),
            ("size", "the tree size (default: the latest checkpoint's)"),
        ],
        body: None,
        ok: (200, "{game, seq, hash, leaf_index, size, root, leaf, inclusion: [base64 hash]}"),
        errors: READ_ERRORS,
        handler: || get(log::inclusion),
    },
    Route {
        method: "get",
        path: "/api/proof/consistency",
        summary: "The RFC 6962 consistency proof between two tree sizes of the log",
        who: Who::Anyone,
        query: &[("from", "the smaller tree size (required)"), ("to", "the larger (default: the latest checkpoint's)")],
        body: None,
        ok: (200, "{from, to, from_root, to_root, consistency: [base64 hash]}"),
        errors: &["input", "io"],
        handler: || get(log::consistency),
    },
    Route {
        method: "get",
        path: "/api/proof/bundle",
        summary: "An offline bundle: the game's export, the inclusion proof of its event, the signed checkpoint, the key",
        who: Who::Reader,
        query: &[
            ("game", "the game (required)"),
            ("seq", "the event (default: the game's head)"),
            ("kept", "the tree size of a checkpoint the player kept: adds a consistency proof from it"),
        ],
        body: None,
        ok: (200, "an arbiter-bundle/1 (see `arbiter verify-bundle`)"),
        errors: READ_ERRORS,
        handler: || get(log::bundle),
    },
    Route {
        method: "get",
        path: "/health",
        summary: "Whether the server can store: the store answers reads and its last sync succeeded",
        who: Who::Anyone,
        query: &[],
        body: None,
        ok: (200, "{status: ok, store: open, last_sync: ok, syncs, games, events}"),
        errors: &["unhealthy", "shutting_down", "internal"],
        handler: || get(observe::health),
    },
    Route {
        method: "get",
        path: "/metrics",
        summary: "Prometheus metrics (OpenMetrics text): appends, refusals by code, conflicts, sync latency, events per sync, live streams, games in memory",
        who: Who::Anyone,
        query: &[],
        body: None,
        ok: (200, "application/openmetrics-text"),
        errors: &[],
        handler: || get(observe::metrics),
    },
    Route {
        method: "get",
        path: "/openapi.json",
        summary: "This document",
        who: Who::Anyone,
        query: &[],
        body: None,
        ok: (200, "the OpenAPI document"),
        errors: &[],
        handler: || get(|| async { axum::Json(openapi()) }),
    },
];

pub fn router(server: Shared) -> Router {
    let metrics = server.metrics.clone();
    let mut router = Router::new();
    for route in ROUTES {
        let limit = body_limit(route);
        let handler = (route.handler)()
            .layer(DefaultBodyLimit::max(limit))
            .layer(middleware::from_fn(move |req, next| declared_length(limit, req, next)));
        router = router.route(route.path, handler);
    }
    router
        .fallback(|| async { ApiError::not_found().into_response() })
        // axum's own 405 has an empty body; every error is the JSON one (axum keeps `Allow`).
        .method_not_allowed_fallback(|| async { ApiError::method_not_allowed().into_response() })
        .layer(DefaultBodyLimit::max(MAX_REQUEST_BYTES))
        .layer(middleware::map_response(page::no_referrer))
        .layer(middleware::from_fn_with_state(server.clone(), super::draining))
        // Every error in the JSON body, also those axum answers in plain
        // text; inside the request log, which then logs the final code.
        .layer(middleware::map_response(error::json_errors))
        .layer(middleware::from_fn_with_state(metrics.clone(), observe::record))
        .layer(Extension(metrics))
        .with_state(server)
}

/// The most bytes a route's request body may hold: an import's is an
/// export (JSON Lines), every other a JSON body.
fn body_limit(route: &Route) -> usize {
    match route.body {
        Some(Body::Media("application/jsonl")) => MAX_IMPORT_BYTES,
        _ => MAX_REQUEST_BYTES,
    }
}

/// A body whose declared `Content-Length` is over the route's limit is
/// answered 413 at once (else it is read up to the limit, or waited for
/// until the body timeout if the client sends none of it), and the
/// connection closed. Until then what arrives of the body is read and
/// dropped for at most `LINGER`: a client still sending it when the
/// connection closes would get a reset, not the answer (nginx's lingering
/// close does the same).
async fn declared_length(limit: usize, req: axum::extract::Request, next: middleware::Next) -> Response {
    let declared = req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        let mut body = req.into_body().into_data_stream();
        tokio::spawn(tokio::time::timeout(LINGER, async move {
            while let Some(Ok(_)) = futures_util::StreamExt::next(&mut body).await {}
        }));
        let mut answer = ApiError::too_large(limit).into_response();
        answer.headers_mut().insert(header::CONNECTION, header::HeaderValue::from_static("close"));
        return answer;
    }
    next.run(req).await
}

/// How long a refused body is read and dropped before its connection closes.
const LINGER: std::time::Duration = std::time::Duration::from_secs(5);

/// The OpenAPI 3.1 document, from the route table and the request types.
pub fn openapi() -> Value {
    let mut generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.definitions_path = "#/components/schemas".into())
        .into_generator();
    let named = |name: &str, schema: schemars::Schema| (name.to_string(), schema.to_value());
    let mut schemas: Map<String, Value> = [
        named("AppendRequest", generator.root_schema_for::<events::AppendRequest>()),
        named("BatchRequest", generator.root_schema_for::<events::BatchRequest>()),
        named("CreateRequest", generator.root_schema_for::<games::CreateRequest>()),
        named("ForkRequest", generator.root_schema_for::<games::ForkRequest>()),
        named("TokenRequest", generator.root_schema_for::<games::TokenRequest>()),
        named("AccessRequest", generator.root_schema_for::<games::AccessRequest>()),
        named("SessionRequest", generator.root_schema_for::<page::SessionRequest>()),
        named("WhatIfRequest", generator.root_schema_for::<views::WhatIfRequest>()),
        named("Event", generator.root_schema_for::<crate::event::Event>()),
    ]
    .into_iter()
    .collect();
    for schema in schemas.values_mut() {
        if let Some(o) = schema.as_object_mut() {
            o.remove("$schema");
        }
    }
    // An answer's schema, by reference: it lands among the definitions.
    generator.subschema_for::<crate::floor::Summary>();
    schemas.extend(generator.take_definitions(true));
    let codes: Vec<Value> = CODES.iter().map(|(c, _, _)| json!(c)).collect();
    schemas.insert(
        "Error".into(),
        json!({"type": "object", "required": ["error"], "properties": {"error": {"type": "object",
            "required": ["code", "message"], "properties": {
                "code": {"enum": codes}, "message": {"type": "string"},
                "violation": {"description": "refused: the step, the rule, the message, who may act, and (on an append) what the actor may record instead, in words (offered)"},
                "head": {"description": "conflict: the game's current head {seq, hash}"}}}}}),
    );
    let mut paths = Map::new();
    for route in ROUTES {
        let entry = paths.entry(route.path).or_insert_with(|| json!({}));
        entry[route.method] = operation(route);
    }
    json!({
        "openapi": "3.1.0",
        "info": {"title": "arbiter", "version": env!("CARGO_PKG_VERSION"),
            "description": format!("The HTTP API of `arbiter serve`. Send tokens as `Authorization: Bearer TOKEN` (GET requests may use `?access_token=`). Error codes: {}.",
                CODES.iter().map(|(c, s, m)| format!("`{c}` ({s}): {m}")).collect::<Vec<_>>().join("; "))},
        "components": {"schemas": schemas, "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "paths": paths,
    })
}

/// A path parameter's schema: in the API and the table page, a game's name
/// is a ref (`event::check_game_name`) and a token's id is hex; the other
/// pages take any text and say what they find.
fn path_schema(route: &Route, name: &str) -> Value {
    match name {
        "game" if route.path.starts_with("/api/") || route.path == "/games/{game}/table" => {
            json!({"type": "string", "pattern": GAME_NAME_PATTERN})
        }
        // A token's public id (`access::id_of`): 16 hex digits of its hash.
        "id" => json!({"type": "string", "pattern": "^[0-9a-f]{16}$"}),
        // The pages' modules, a fixed list.
        "name" => json!({"type": "string", "enum": super::page::ASSETS.iter().map(|(n, _, _)| *n).collect::<Vec<_>>()}),
        _ => json!({"type": "string"}),
    }
}

/// `event::check_game_name` as a pattern: 1-64 letters, digits, '.', '-',
/// '_', not starting with '.'.
const GAME_NAME_PATTERN: &str = "^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$";

/// A query parameter's schema: in the API, seqs, sizes and counts are
/// unsigned integers (`body::query_num`) and `read` is public or token;
/// the rest, and every parameter of a page (read by its script), text.
fn query_schema(route: &Route, name: &str) -> Value {
    if !route.path.starts_with("/api/") {
        return json!({"type": "string"});
    }
    match name {
        "from" | "to" | "limit" | "at" | "seq" | "size" | "kept" => {
            json!({"type": "integer", "minimum": 0, "maximum": u64::MAX})
        }
        "read" => json!({"type": "string", "enum": ["public", "token"]}),
        _ => json!({"type": "string"}),
    }
}

/// The routes whose answer has a schema of its own in `components`
/// (the others say what they answer in words).
const RESPONSE_SCHEMAS: &[(&str, &str)] = &[("/api/games/{game}/summary", "Summary")];

fn operation(route: &Route) -> Value {
    let who = match route.who {
        Who::Anyone => "Anyone.",
        Who::Reader => "Anyone for a public game; the organiser and the game's seats and judges for a token-only game.",
        Who::Actor => "A seat's or a judge's token of this game, appending as itself.",
        Who::Organiser => "The organiser's token.",
    };
    let mut params: Vec<Value> = route
        .path
        .split('/')
        .filter_map(|p| p.strip_prefix('{').and_then(|p| p.strip_suffix('}')))
        .map(|p| json!({"name": p, "in": "path", "required": true, "schema": path_schema(route, p)}))
        .collect();
    params.extend(
        route
            .query
            .iter()
            .map(|(n, d)| json!({"name": n, "in": "query", "description": d, "schema": query_schema(route, n)})),
    );
    let mut responses = Map::new();
    let mut ok = json!({"description": route.ok.1});
    if let Some((_, schema)) = RESPONSE_SCHEMAS.iter().find(|(path, _)| *path == route.path) {
        ok["content"] = json!({"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}});
    }
    responses.insert(route.ok.0.to_string(), ok);
    // Wherever the store may fail, it may also be unreachable (a database).
    let unreachable = route.errors.contains(&"io").then_some(&"store_unavailable");
    for code in route.errors.iter().chain(unreachable) {
        let (_, status, meaning) = CODES.iter().find(|(c, _, _)| c == code).expect("a known code");
        let entry = responses.entry(status.to_string()).or_insert_with(|| {
            json!({"description": "", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}})
        });
        let text = entry["description"].as_str().unwrap_or_default();
        let line = format!("`{code}`: {meaning}");
        entry["description"] = json!(if text.is_empty() { line } else { format!("{text}; {line}") });
    }
    let mut op = json!({"summary": route.summary, "description": who, "parameters": params, "responses": responses});
    match route.who {
        Who::Anyone => {}
        Who::Reader => op["security"] = json!([{}, {"bearer": []}]),
        Who::Actor | Who::Organiser => op["security"] = json!([{"bearer": []}]),
    }
    match route.body {
        Some(Body::Json(schema)) => {
            op["requestBody"] = json!({"required": true, "content": {"application/json":
                {"schema": {"$ref": format!("#/components/schemas/{schema}")}}}});
        }
        Some(Body::Media(media)) => {
            op["requestBody"] = json!({"required": true, "content": {media: {"schema": {"type": "string"}}}});
        }
        None => {}
    }
    op
}
