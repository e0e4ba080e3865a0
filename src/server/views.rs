//! Reading a game: head, state at a seq, verify, export, and the dispute
//! tools (what-if, diff, replay). Nothing here stores anything.

use std::collections::{BTreeSet, HashMap};

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use super::body::{json_body, query_num};
use super::{ApiError, Shared, blocking};
use crate::compare::{self, Record};
use crate::limits::MAX_PAGE_EVENTS;
use crate::ops;
use crate::record::{RecordError, StoredGame, Submission, canonical_bytes};
use crate::replay::{Told, replay as replay_record};
use crate::rules::describe;

type Q = Query<HashMap<String, String>>;

/// `GET /api/games/{game}`: the head.
pub async fn head(
    State(s): State<Shared>,
    Path(game): Path<String>,
    h: HeaderMap,
    Query(q): Q,
) -> Result<Json<Value>, ApiError> {
    s.reader(&h, &q, &game)?;
    let store = s.store();
    Ok(Json(blocking(move || ops::head(store, &game)).await??))
}

/// `GET /api/games/{game}/state?at=SEQ`.
pub async fn state(
    State(s): State<Shared>,
    Path(game): Path<String>,
    h: HeaderMap,
    Query(q): Q,
) -> Result<Json<Value>, ApiError> {
    s.reader(&h, &q, &game)?;
    let at = query_num(&q, "at")?;
    // `raw=0` leaves out the reducer's state: the page draws the board and
    // asks for the raw state only when a reader opens it (on a long game
    // the finished combats make it hundreds of kilobytes).
    let raw = q.get("raw").is_none_or(|r| r != "0");
    let store = s.store();
    let mut v = blocking(move || ops::state(store, &game, at)).await??;
    if !raw {
        v.as_object_mut().expect("an object").remove("state");
    }
    Ok(Json(v))
}

/// `GET /api/games/{game}/summary`: the game at a glance, for the floor's
/// cards and the index (`floor::summary`).
pub async fn summary(
    State(s): State<Shared>,
    Path(game): Path<String>,
    h: HeaderMap,
    Query(q): Q,
) -> Result<Json<crate::floor::Summary>, ApiError> {
    s.reader(&h, &q, &game)?;
    let store = s.store();
    Ok(Json(blocking(move || crate::floor::summary(store, &game, chrono::Utc::now())).await??))
}

/// `GET /api/games/{game}/moves?at=SEQ&as=SEAT`: what may be recorded now.
/// A seat's or judge's token (as a bearer or as the page's cookie) sees its
/// own moves: `as` may name only itself. Anyone else who may read the game
/// sees every actor's moves, or `as`'s alone.
pub async fn moves(
    State(s): State<Shared>,
    Path(game): Path<String>,
    h: HeaderMap,
    Query(q): Q,
) -> Result<Json<Value>, ApiError> {
    let grant = s.reading(&h, &q)?;
    s.may_read(&grant, &game)?;
    let at = query_num(&q, "at")?;
    let own = grant.as_ref().map(|g| match g {
        crate::access::Grant::Cookie(inner) => inner.as_ref(),
        g => g,
    });
    let actor = match (own.and_then(|g| g.actor_in(&game)), q.get("as")) {
        (Some(own), Some(other)) if own != other => {
            return Err(ApiError::forbidden(format!("this token is {own}'s: it shows {own}'s moves, not {other}'s")));
        }
        (Some(own), _) => Some(own.to_string()),
        (None, asked) => asked.cloned(),
    };
    let store = s.store();
    Ok(Json(blocking(move || ops::moves(store, &game, at, actor.as_deref())).await??))
}

/// `GET /api/games/{game}/verify?head=HASH`.
pub async fn verify(
    State(s): State<Shared>,
    Path(game): Path<String>,
    h: HeaderMap,
    Query(q): Q,
) -> Result<Json<Value>, ApiError> {
    s.reader(&h, &q, &game)?;
    let expect = q.get("head").cloned();
    let store = s.store();
    Ok(Json(blocking(move || ops::verify_game(store, &game, expect.as_deref())).await??))
}

/// `GET /api/games/{game}/export`: JSON Lines, one canonical event per
/// line, streamed from the store (a reader slower than the store holds
/// back the reading, not the server's memory).
pub async fn export(
    State(s): State<Shared>,
    Path(game): Path<String>,
    h: HeaderMap,
    Query(q): Q,
) -> Result<Response, ApiError> {
    s.reader(&h, &q, &game)?;
    let store = s.store();
    if s.inline(|| store.head(&game)).map_err(RecordError::from)?.is_none() {
        return Err(RecordError::NoSuchGame(game).into());
    }
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(16);
    tokio::task::spawn_blocking(move || {
        let events = match store.read(&game, 0) {
            Ok(events) => events,
            Err(e) => {
                let _ = tx.blocking_send(Err(std::io::Error::other(e.to_string())));
                return;
            }
        };
        for event in events {
            let chunk = event.map(|e| {
                let mut line = canonical_bytes(&e);
                line.push(b'\n');
                Bytes::from(line)
            });
            // A broken event ends the body early, so the client sees a
            // truncated export (which verify-file refuses), never a bad line.
            let stop = chunk.is_err();
            if tx.blocking_send(chunk.map_err(|e| std::io::Error::other(e.to_string()))).is_err() || stop {
                return;
            }
        }
    });
    let body = Body::from_stream(futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|chunk| (chunk, rx))
    }));
    Ok(([(header::CONTENT_TYPE, "application/jsonl")], body).into_response())
}

/// `POST /api/games/{game}/whatif`: `{"skip": [seq...], "then": [{"actor","action"}...]}`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WhatIfRequest {
    #[serde(default)]
    pub skip: Vec<u64>,
    #[serde(default)]
    pub then: Vec<Submission>,
}

pub async fn whatif(
    State(s): State<Shared>,
    Path(game): Path<String>,
    h: HeaderMap,
    Query(q): Q,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    s.reader(&h, &q, &game)?;
    let req: WhatIfRequest = json_body(body)?;
    let store = s.store();
    let w = blocking(move || {
        let skip: BTreeSet<u64> = req.skip.into_iter().collect();
        compare::whatif(&Record::Stored(StoredGame::new(store, &game)), &skip, &req.then)
    })
    .await??;
    Ok(Json(json!(w)))
}

/// `GET /api/diff?a=GAME&b=GAME`.
pub async fn diff(State(s): State<Shared>, h: HeaderMap, Query(q): Q) -> Result<Json<Value>, ApiError> {
    let name = |k: &str| q.get(k).cloned().ok_or_else(|| ApiError::input(format!("name game {k}: ?a=GAME&b=GAME")));
    let (a, b) = (name("a")?, name("b")?);
    let grant = s.reading(&h, &q)?;
    s.may_read(&grant, &a)?;
    s.may_read(&grant, &b)?;
    let store = s.store();
    let d = blocking(move || {
        compare::diff(&Record::Stored(StoredGame::new(store, &a)), &Record::Stored(StoredGame::new(store, &b)))
    })
    .await??;
    // The events from the divergence in words too, for the page's side-by-side rows.
    let words = |events: &[crate::event::Event]| -> Vec<Value> {
        events.iter().map(|e| json!({"seq": e.seq, "actor": e.actor, "action": describe(&e.action)})).collect()
    };
    let mut body = json!(d);
    body["a_words"] = json!(words(&d.a_from));
    body["b_words"] = json!(words(&d.b_from));
    Ok(Json(body))
}

/// `GET /api/games/{game}/replay?from=N&to=M&limit=L`: each event in plain
/// words, with the step before and after, what changed, rulings and
/// rewinds. Paged: at most `limit` (default and at most
/// `MAX_PAGE_EVENTS`) events from `from`, with `next` (the seq to ask for
/// next, null at the end) and `rewound` (the seq ranges judges' rewinds
/// took back), so a reader that follows a game asks only for what is new.
/// `paths=0` leaves out each event's changes as state paths (`said` stays):
/// the replay page shows the board's words, and working out the paths is
/// about a fifth of a replay's work.
pub async fn replay(
    State(s): State<Shared>,
    Path(game): Path<String>,
    h: HeaderMap,
    Query(q): Q,
) -> Result<Json<Value>, ApiError> {
    s.reader(&h, &q, &game)?;
    let from = query_num(&q, "from")?.unwrap_or(0);
    let limit = query_num(&q, "limit")?.unwrap_or(MAX_PAGE_EVENTS).clamp(1, MAX_PAGE_EVENTS);
    let page_end = from.saturating_add(limit - 1);
    let to = query_num(&q, "to")?.map_or(page_end, |t| t.min(page_end));
    let told = match q.get("paths").is_none_or(|p| p != "0") {
        true => Told::WordsAndPaths,
        false => Told::Words,
    };
    let store = s.store();
    let (shown, rewound, head) = blocking(move || {
        let mut shown = Vec::new();
        let rewound = replay_record(&StoredGame::new(store, &game), from, Some(to), told, |e| {
            shown.push(serde_json::to_value(e).expect("a shown event serialises"))
        })?;
        let head = store.head(&game)?.map(|h| h.seq);
        Ok::<_, RecordError>((shown, rewound, head))
    })
    .await??;
    let next = head.filter(|h| to == page_end && to < *h).map(|_| to + 1);
    Ok(Json(json!({ "events": shown, "next": next, "rewound": rewound })))
}
