//! Appending (one action, or a batch checked whole first), reading pages of
//! events, and the live stream.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use serde::Deserialize;
use serde_json::{Value, json};

use super::body::{json_body, query_num};
use super::{ApiError, Shared, blocking};
use crate::access::Grant;
use crate::event::Event;
use crate::limits::{MAX_BATCH_EVENTS, MAX_FOLLOWED_GAMES, MAX_PAGE_EVENTS};
use crate::ops;
use crate::record::{RecordError, Recorder, Submission, canonical_bytes};

/// `POST /api/games/{game}/events`: one action, at the seq the table expects.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppendRequest {
    pub actor: String,
    pub action: Value,
    #[serde(default)]
    pub at: Option<String>,
    /// Required: the seq this action must be stored at (optimistic concurrency).
    pub expect_seq: u64,
}

/// `POST /api/games/{game}/batch`: several actions, checked whole first.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchRequest {
    pub events: Vec<Submission>,
    pub expect_seq: u64,
}

pub async fn append(
    State(s): State<Shared>,
    Path(game): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let grant = s.caller(&headers, None)?;
    let req: AppendRequest = json_body(body)?;
    let sub = Submission { actor: req.actor, action: req.action, at: req.at };
    may_append(&grant, &game, std::slice::from_ref(&sub))?;
    let mut done = run(&s, &game, vec![sub], req.expect_seq).await?;
    let (value, duplicate) = done.pop().expect("one append");
    Ok((if duplicate { StatusCode::OK } else { StatusCode::CREATED }, Json(value)))
}

pub async fn batch(
    State(s): State<Shared>,
    Path(game): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let grant = s.caller(&headers, None)?;
    let req: BatchRequest = json_body(body)?;
    may_append(&grant, &game, &req.events)?;
    if req.events.is_empty() || req.events.len() > MAX_BATCH_EVENTS {
        return Err(ApiError::input(format!("a batch has 1 to {MAX_BATCH_EVENTS} events")));
    }
    let done = run(&s, &game, req.events, req.expect_seq).await?;
    let appended: Vec<Value> = done.into_iter().map(|(v, _)| v).collect();
    Ok((StatusCode::CREATED, Json(json!({ "appended": appended }))))
}

/// A seat appends only as itself, a judge only as themself, and only in
/// their own game. The organiser does not act in games.
fn may_append(grant: &Option<Grant>, game: &str, subs: &[Submission]) -> Result<(), ApiError> {
    let Some(grant) = grant else {
        return Err(ApiError::unauthorized("appending needs a seat's or a judge's token"));
    };
    let Some(me) = grant.actor_in(game) else {
        return Err(ApiError::forbidden(match grant {
            Grant::Organiser => "the organiser does not act in games; use a seat's or a judge's token".to_string(),
            _ => format!("this token is not for game {game}"),
        }));
    };
    if let Some(other) = subs.iter().find(|s| s.actor != me) {
        return Err(ApiError::forbidden(format!("this token appends as {me:?}, not as {:?}", other.actor)));
    }
    Ok(())
}

/// Appends in order under the game's lock, from `expect` on. Returns each
/// event's JSON and whether it was a retry of one already stored.
async fn run(s: &Shared, game: &str, subs: Vec<Submission>, expect: u64) -> Result<Vec<(Value, bool)>, ApiError> {
    let _permit = s.permit()?;
    let slot = s.slot(game)?;
    let mut folded = slot.recorder.clone().lock_owned().await;
    let store = s.store();
    let name = game.to_string();
    // The lock moves into the worker: if the client goes away, the append
    // still finishes (or not) under the lock, and a retry with the same
    // expect_seq finds it.
    let (result, head) = blocking(move || {
        if folded.is_none() {
            match Recorder::load(store, &name) {
                Ok(r) => *folded = Some(r),
                Err(e) => return (Err(e), None),
            }
        }
        let recorder = folded.as_mut().expect("loaded");
        let result = append_all(recorder, &subs, expect);
        let head = recorder.head().clone();
        if let Err(RecordError::Io(_) | RecordError::Broken { .. }) = &result {
            // The store failed under us: fold again from the store next time.
            *folded = None;
        }
        (result, Some(head))
    })
    .await?;
    if let Some(head) = &head {
        s.advanced(game, head.seq);
    }
    result.map_err(|e| {
        let conflict = matches!(e, RecordError::Conflict { .. });
        let mut err = ApiError::from(e);
        if let (true, Some(head)) = (conflict, head) {
            err.body["error"]["head"] = json!({"seq": head.seq, "hash": head.hash});
        }
        err
    })
}

/// Appends `subs` at `expect` as one durable write (`Recorder::append_batch`:
/// all or nothing, one sync); a leading run already stored there (a retry)
/// comes back as duplicates.
fn append_all(recorder: &mut Recorder, subs: &[Submission], expect: u64) -> Result<Vec<(Value, bool)>, RecordError> {
    let done = recorder.append_batch(subs, Some(expect)).map_err(|(i, e)| match (subs.len() > 1, e) {
        // Say which event of the batch was refused (and that none was stored).
        (true, RecordError::Input(m)) => RecordError::Input(format!("batch event {}: {m}; nothing was stored", i + 1)),
        (true, RecordError::Refused(mut v)) => {
            v.message = format!("batch event {}: {}; nothing was stored", i + 1, v.message);
            RecordError::Refused(v)
        }
        (_, e) => e,
    })?;
    Ok(done.iter().map(|d| (ops::appended(d, &d.view), d.duplicate)).collect())
}

/// `GET /api/games/{game}/events?from=N&limit=M`: a page of events.
pub async fn read(
    State(s): State<Shared>,
    Path(game): Path<String>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Json<Value>, ApiError> {
    s.reader(&headers, &q, &game)?;
    let from = query_num(&q, "from")?.unwrap_or(0);
    let limit = query_num(&q, "limit")?.unwrap_or(100).clamp(1, MAX_PAGE_EVENTS);
    let store = s.store();
    let page = blocking(move || -> Result<Value, RecordError> {
        let head = store.head(&game)?.ok_or_else(|| RecordError::NoSuchGame(game.clone()))?;
        let events: Vec<Event> = store.read(&game, from)?.take(limit as usize).collect::<Result<_, _>>()?;
        let next = events.last().map(|e| e.seq + 1).filter(|n| *n <= head.seq);
        Ok(json!({"events": events, "next": next, "head": head.seq}))
    })
    .await??;
    Ok(Json(page))
}

/// `GET /api/games/{game}/stream?from=N` (or `Last-Event-ID: N-1`): every
/// event from seq N on, then each new one as it is stored. The SSE id of
/// each message is its seq, so a client that reconnects with Last-Event-ID
/// resumes with no gap and no duplicate. Events are read from the store in
/// seq order, never from the append path, so what is sent was stored.
pub async fn stream(
    State(s): State<Shared>,
    Path(game): Path<String>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Sse<impl futures_util::Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    s.reader(&headers, &q, &game)?;
    let last_id = headers.get("last-event-id").and_then(|v| v.to_str().ok());
    let from = match last_id {
        Some(id) => id.trim().parse::<u64>().map_err(|_| ApiError::input("Last-Event-ID is not a seq"))? + 1,
        None => query_num(&q, "from")?.unwrap_or(0),
    };
    if s.store().head(&game).map_err(RecordError::from)?.is_none() {
        return Err(RecordError::NoSuchGame(game).into());
    }
    let slot = s.slot(&game)?;
    let follow = Follow {
        s: s.clone(),
        game,
        next: from,
        buf: VecDeque::new(),
        head: slot.head.subscribe(),
        closing: s.closing(),
    };
    let events = futures_util::stream::unfold(follow, |mut f| async move {
        let event = f.next_event().await?;
        let data = String::from_utf8(canonical_bytes(&event)).expect("canonical JSON is UTF-8");
        Some((Ok(SseEvent::default().id(event.seq.to_string()).event("event").data(data)), f))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}

/// `GET /api/stream?games=a,b,c`: one live stream for many games, so a
/// judge following a floor of tables holds one connection, not one per
/// table (a browser allows six per host). Only events stored after the
/// stream opens are sent; each message is `{"game", "event"}`. A client
/// that reconnects reads the games' state again instead of resuming.
pub async fn stream_many(
    State(s): State<Shared>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Sse<impl futures_util::Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    let games: Vec<String> =
        q.get("games").map(|g| g.split(',').filter(|g| !g.is_empty()).map(String::from).collect()).unwrap_or_default();
    if games.is_empty() || games.len() > MAX_FOLLOWED_GAMES {
        return Err(ApiError::input(format!("games: name 1 to {MAX_FOLLOWED_GAMES} games, separated by commas")));
    }
    let mut follows = Vec::new();
    for game in games {
        s.reader(&headers, &q, &game)?;
        let Some(head) = s.store().head(&game).map_err(RecordError::from)? else {
            return Err(RecordError::NoSuchGame(game).into());
        };
        let slot = s.slot(&game)?;
        let follow = Follow {
            s: s.clone(),
            game,
            next: head.seq + 1,
            buf: VecDeque::new(),
            head: slot.head.subscribe(),
            closing: s.closing(),
        };
        follows.push(Box::pin(futures_util::stream::unfold(follow, |mut f| async move {
            let event = f.next_event().await?;
            let data = json!({"game": f.game, "event": event}).to_string();
            Some((Ok(SseEvent::default().event("event").data(data)), f))
        })));
    }
    Ok(Sse::new(futures_util::stream::select_all(follows)).keep_alive(KeepAlive::default()))
}

/// A live stream's place in its game.
struct Follow {
    s: Shared,
    game: String,
    next: u64,
    buf: VecDeque<Event>,
    head: tokio::sync::watch::Receiver<Option<u64>>,
    closing: tokio::sync::watch::Receiver<bool>,
}

impl Follow {
    /// The event at `next`, waiting for it to be stored; None ends the
    /// stream (shutdown, or the store failed).
    async fn next_event(&mut self) -> Option<Event> {
        loop {
            if let Some(event) = self.buf.pop_front() {
                self.next = event.seq + 1;
                return Some(event);
            }
            if *self.closing.borrow() {
                return None;
            }
            let head = *self.head.borrow_and_update();
            if head.is_some_and(|h| h >= self.next) {
                let (store, game, from) = (self.s.store(), self.game.clone(), self.next);
                let page = blocking(move || {
                    store.read(&game, from).and_then(|events| events.take(256).collect::<Result<Vec<_>, _>>())
                })
                .await;
                match page {
                    Ok(Ok(events)) if !events.is_empty() => {
                        self.buf.extend(events);
                        continue;
                    }
                    Ok(Ok(_)) => {}
                    _ => return None,
                }
            }
            tokio::select! {
                changed = self.head.changed() => if changed.is_err() { return None },
                _ = self.closing.changed() => {}
            }
        }
    }
}
