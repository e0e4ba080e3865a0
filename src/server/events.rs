//! Appending (one action, or a batch checked whole first), reading pages of
//! events, and the live stream.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;

use std::sync::Arc;

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::broadcast;

use super::body::{json_body, query_num, raw_body};
use super::{ApiError, Shared, SignedIn, Subscription, blocking, page};
use crate::access::{self, Grant};
use crate::event::{Event, Link};
use crate::limits::{MAX_BATCH_EVENTS, MAX_FOLLOWED_GAMES, MAX_PAGE_EVENTS, MAX_REQUEST_BYTES, MAX_STREAM_EVENTS};
use crate::ops;
use crate::record::{Appended, RecordError, Recorder, Submission, canonical_bytes};
use crate::store::Store;

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
// Only its schema is used (the OpenAPI document): the body itself is read
// by `batch_body`, which keeps each event's text as sent.
#[allow(dead_code)]
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
    may_append(&grant, &headers, &game, std::slice::from_ref(&sub))?;
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
    let (events, expect_seq) = batch_body(body)?;
    // Who may append is said before how many events a batch may hold.
    may_append(&grant, &headers, &game, &events)?;
    if events.is_empty() || events.len() > MAX_BATCH_EVENTS {
        return Err(ApiError::input(format!("a batch has 1 to {MAX_BATCH_EVENTS} events, not {}", events.len())));
    }
    let done = run(&s, &game, events, expect_seq).await?;
    // An identical retry of a stored batch stored nothing: 200, as for one append.
    let status = if done.iter().all(|(_, duplicate)| *duplicate) { StatusCode::OK } else { StatusCode::CREATED };
    let appended: Vec<Value> = done.into_iter().map(|(v, _)| v).collect();
    Ok((status, Json(json!({ "appended": appended }))))
}

/// The batch's envelope, its events left as text: each is then parsed
/// strictly on its own, with the limits of one event (`MAX_ARRAY_ITEMS`,
/// `MAX_DEPTH`), so the envelope's array may hold `MAX_BATCH_EVENTS`.
/// (Parsed whole with `parse_strict`, the array limit of an event capped a
/// batch at 64.) serde refuses a duplicate or unknown field and a float.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BatchEnvelope<'a> {
    #[serde(borrow)]
    events: Vec<&'a serde_json::value::RawValue>,
    expect_seq: u64,
}

fn batch_body(body: Result<Bytes, BytesRejection>) -> Result<(Vec<Submission>, u64), ApiError> {
    let bytes = raw_body(body, MAX_REQUEST_BYTES)?;
    let text = std::str::from_utf8(&bytes).map_err(|_| ApiError::input("the body is not UTF-8"))?;
    let envelope: BatchEnvelope =
        serde_json::from_str(text).map_err(|e| ApiError::input(format!("the body does not fit the request: {e}")))?;
    // The count is checked by the caller, after who may append; the
    // request body's size limit bounds the work done here before it.
    let events = envelope
        .events
        .iter()
        .enumerate()
        .map(|(i, raw)| {
            Submission::parse(raw.get()).map_err(|e| match e {
                RecordError::Input(m) => ApiError::input(format!("batch event {}: {m}; nothing was stored", i + 1)),
                e => e.into(),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((events, envelope.expect_seq))
}

/// A seat appends only as itself, a judge only as themself, and only in
/// their own game. The organiser does not act in games.
///
/// The pages' cookie appends too (the table page records with it), but
/// only from a page of this server: a cookie goes with every request the
/// browser makes here, so a request another site makes the browser send
/// must not act. The cookie is SameSite=Strict (no other site's request
/// carries it), and a request with it must be JSON (`Content-Type:
/// application/json`: another origin, even of the same site, such as
/// another port of this host, cannot send that without a CORS preflight,
/// which this server never grants) and, where the browser says where it
/// comes from (`Sec-Fetch-Site`), from this origin.
fn may_append(grant: &Option<Grant>, headers: &HeaderMap, game: &str, subs: &[Submission]) -> Result<(), ApiError> {
    let Some(grant) = grant else {
        return Err(ApiError::unauthorized("appending needs a seat's or a judge's token"));
    };
    let grant = match grant {
        Grant::Cookie(inner) => {
            from_a_page(headers)?;
            inner.as_ref()
        }
        grant => grant,
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

/// A request the pages' cookie may append with: JSON, from this origin.
fn from_a_page(headers: &HeaderMap) -> Result<(), ApiError> {
    let text = |name| headers.get(name).and_then(|v: &header::HeaderValue| v.to_str().ok());
    let json = text(header::CONTENT_TYPE)
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"));
    let site = text(header::HeaderName::from_static("sec-fetch-site"));
    if !json || site.is_some_and(|s| s != "same-origin") {
        return Err(ApiError::forbidden(
            "a page's cookie appends only from this server's pages (JSON, same origin); elsewhere, send a seat's or a judge's token in Authorization",
        ));
    }
    Ok(())
}

/// Appends in order under the game's lock, from `expect` on. Returns each
/// event's JSON and whether it was a retry of one already stored. The new
/// events go to the game's live subscribers once stored, still under the
/// lock (so in seq order), as bytes made once: the append never waits on
/// a subscriber.
///
/// Once it holds the lock, the append runs as a task of its own: if the
/// client goes away (hyper then drops this handler's future), the append
/// still finishes (or not) under the lock, made durable before the lock is
/// let go, so a retry with the same expect_seq finds it stored and durable.
async fn run(s: &Shared, game: &str, subs: Vec<Submission>, expect: u64) -> Result<Vec<(Value, bool)>, ApiError> {
    let permit = s.permit()?;
    let slot = s.slot(game)?;
    let folded = slot.recorder.clone().lock_owned().await;
    let (store, game) = (s.store(), game.to_string());
    let appending = tokio::spawn(async move {
        let _permit = permit;
        let (result, head, fanned, folded) = match store.shared() {
            true => append_shared(store, &game, subs, expect, folded, &slot.fanout).await?,
            false => append_here(store, &game, subs, expect, folded, &slot.fanout).await?,
        };
        // Handed over under the lock, so in seq order; the subscribers
        // it wakes run once this task yields.
        if let Some(fanned) = fanned {
            publish(&slot, fanned);
        }
        drop(folded);
        Ok::<_, ApiError>((result, head))
    });
    let (result, head) = appending.await.map_err(|e| ApiError::internal(format!("an append failed: {e}")))??;
    result.map_err(|e| {
        let conflict = matches!(e, RecordError::Conflict { .. });
        let mut err = ApiError::from(e);
        if let (true, Some(head)) = (conflict, head) {
            err.body["error"]["head"] = json!({"seq": head.seq, "hash": head.hash});
        }
        err
    })
}

/// A game's folded state, under its lock (`Slot::recorder`).
type Folded = tokio::sync::OwnedMutexGuard<Option<Recorder<'static>>>;

/// What an append did: each event's answer (or why not), the game's head
/// after it, the frames for its subscribers, and the game's lock.
type Done = (Result<Vec<(Value, bool)>, RecordError>, Option<Link>, Option<Fanned>, Folded);

/// An append on a store only this process writes (sled): checking and
/// storing are done here on the async thread, and the wait for the disk
/// is awaited (`Store::durable`: no thread is held while it waits). They
/// are mostly memory work: what sled does not yet hold is in the store's
/// memory, and sled's reads (a chunk to add to, a ruling's hash check)
/// mostly come from its cache; a judge's rewind folds again from the
/// latest snapshot, at most `limits::SNAPSHOT_EVERY` events. (Every append
/// on the blocking pool was two hops and a wake-up of one of many
/// threads: at 64 tables, more CPU than the append itself.)
async fn append_here(
    store: &'static dyn Store,
    game: &str,
    subs: Vec<Submission>,
    expect: u64,
    mut folded: Folded,
    fanout: &broadcast::Sender<Fanned>,
) -> Result<Done, ApiError> {
    if folded.is_none() {
        // The game's first append here folds it from the store (from its
        // latest snapshot on): reads, off the async threads.
        let name = game.to_string();
        let (loaded, back) = blocking(move || (Recorder::load(store, &name), folded)).await?;
        folded = back;
        match loaded {
            Ok(r) => *folded = Some(r),
            Err(e) => return Ok((Err(e), None, None, folded)),
        }
    }
    let recorder = folded.as_mut().expect("loaded");
    let result = match recorder.store_batch(&subs, Some(expect)) {
        Ok(stored) => {
            let durable = store.durable(stored.ticket).await;
            recorder.acknowledge(stored, durable)
        }
        Err(e) => Err(e),
    };
    Ok(finish(game, &subs, result, folded, fanout))
}

/// An append on a store other servers write too (PostgreSQL), on the
/// async thread as `append_here`: the fold's checks here, the store's
/// append awaited (`Recorder::store_batch_async`: committed together with
/// the other games' appends waiting beside it, no thread held while the
/// database works). What reads the
/// store on the way goes to the blocking pool (`append_on_a_worker`), as
/// each read is a round trip: the game's first append here (its load), an
/// append at a seq before the fold's head (a retry: the events already
/// stored are read), a ruling or a note (its fold reads the event it
/// concerns), snapshots to keep, and a conflict or a refusal, which may
/// come of a fold behind the store (another server appended).
async fn append_shared(
    store: &'static dyn Store,
    game: &str,
    subs: Vec<Submission>,
    expect: u64,
    mut folded: Folded,
    fanout: &broadcast::Sender<Fanned>,
) -> Result<Done, ApiError> {
    let here = folded.as_ref().is_some_and(|r| expect > r.head().seq)
        && !subs.iter().any(|s| matches!(s.action.get("type").and_then(Value::as_str), Some("ruling" | "note")));
    if !here {
        return append_on_a_worker(store, game, subs, expect, folded, fanout.clone(), None).await;
    }
    let recorder = folded.as_mut().expect("loaded");
    let result = match recorder.store_batch_async(&subs, Some(expect)).await {
        Ok(stored) if stored.keeps_snapshots() => {
            let (name, fanout) = (game.to_string(), fanout.clone());
            return blocking(move || {
                let result = folded.as_mut().expect("loaded").acknowledge(stored, Ok(()));
                finish(&name, &subs, result, folded, &fanout)
            })
            .await;
        }
        Ok(stored) => recorder.acknowledge(stored, Ok(())),
        Err(e) => Err(e),
    };
    if recorder.is_unfolded() {
        // Its fold went past what the store took: loaded again next time.
        *folded = None;
    }
    if matches!(result, Err((_, RecordError::Conflict { .. } | RecordError::Refused(_)))) {
        return append_on_a_worker(store, game, subs, expect, folded, fanout.clone(), Some(result)).await;
    }
    Ok(finish(game, &subs, result, folded, fanout))
}

/// An append on a store other servers write too, on the blocking pool,
/// since each store call is a round trip; or, with `tried`, what such an
/// append on the async thread came to, looked at again here. The lock
/// moves into the worker: if the client goes away, the append still
/// finishes (or not) under the lock, and a retry with the same
/// expect_seq finds it.
async fn append_on_a_worker(
    store: &'static dyn Store,
    game: &str,
    subs: Vec<Submission>,
    expect: u64,
    mut folded: Folded,
    fanout: broadcast::Sender<Fanned>,
    tried: Option<Result<Vec<Appended>, (usize, RecordError)>>,
) -> Result<Done, ApiError> {
    let name = game.to_string();
    blocking(move || {
        let mut result = match tried {
            Some(result) => result,
            None => {
                if folded.is_none() {
                    match Recorder::load(store, &name) {
                        Ok(r) => *folded = Some(r),
                        Err(e) => return (Err(e), None, None, folded),
                    }
                }
                folded.as_mut().expect("loaded").append_batch(&subs, Some(expect))
            }
        };
        // Another server on the same database may have appended since this
        // game was folded here (its fold is behind the store): on a
        // conflict, or a refusal made on that fold, fold it again from the
        // store and try once more. (A read of the head before every append
        // would cost a query each; this costs one only on a refusal.)
        if match &result {
            Err((_, RecordError::Conflict { .. })) => true,
            Err((_, RecordError::Refused(_))) => {
                let folded_at = folded.as_ref().map(|r| r.head().clone());
                store.head(&name).ok().flatten() != folded_at
            }
            _ => false,
        } {
            result = match Recorder::load(store, &name) {
                Ok(r) => folded.insert(r).append_batch(&subs, Some(expect)),
                Err(e) => Err((0, e)),
            };
        }
        finish(&name, &subs, result, folded, &fanout)
    })
    .await
}

/// The answers of an append, its head and its subscribers' frames (made
/// once for all, and only if someone listens); a store that failed under
/// it has the game folded again from the store next time.
fn finish(
    game: &str,
    subs: &[Submission],
    result: Result<Vec<Appended>, (usize, RecordError)>,
    mut folded: Folded,
    fanout: &broadcast::Sender<Fanned>,
) -> Done {
    let head = folded.as_ref().map(|r| r.head().clone());
    let result = result.map_err(|(i, e)| match (subs.len() > 1, e) {
        // Say which event of the batch was refused (and that none was stored).
        (true, RecordError::Input(m)) => RecordError::Input(format!("batch event {}: {m}; nothing was stored", i + 1)),
        (true, RecordError::Refused(mut v)) => {
            v.message = format!("batch event {}: {}; nothing was stored", i + 1, v.message);
            RecordError::Refused(v)
        }
        (_, e) => e,
    });
    let fanned = match &result {
        // The events are copied only for a game someone follows.
        Ok(done) if fanout.receiver_count() > 0 => {
            let stored: Vec<Event> = done.iter().filter(|d| !d.duplicate).map(|d| d.event.clone()).collect();
            (!stored.is_empty()).then(|| Fanned::events(game, &stored))
        }
        Ok(_) => None,
        // A store that did not answer may also have kept the fold from
        // being made again (`Recorder::refold`): dropped too, or the retry
        // would be told `io` while the store is merely away.
        Err(RecordError::Io(_) | RecordError::Unavailable(_) | RecordError::Broken { .. }) => {
            *folded = None;
            None
        }
        Err(_) => None,
    };
    let answers = result.map(|done| done.iter().map(|d| (ops::appended(d, &d.view), d.duplicate)).collect());
    (answers, head, fanned, folded)
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
/// resumes with no gap and no duplicate. New events come from the append
/// path once stored (the same bytes to every subscriber); older ones, and
/// any a subscriber fell too far behind on, are read from the store by seq.
pub async fn stream(
    State(s): State<Shared>,
    Path(game): Path<String>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    let watch = s.stream_reader(&headers, &q, &game)?;
    // No stream holds a seq past MAX_STREAM_EVENTS - 1: a larger one is
    // not from this server, and following from it would wait forever (or,
    // had it wrapped, replay the whole game). A 400 makes a browser's
    // EventSource stop instead of retrying; `from` and Last-Event-ID alike.
    let beyond = || {
        ApiError::input(format!(
            "a stream starts at a seq below {MAX_STREAM_EVENTS}: from must be below it, and Last-Event-ID the id of an event this stream sent"
        ))
    };
    let from = match headers.get("last-event-id") {
        Some(id) => {
            let id = id.to_str().ok().and_then(|id| id.trim().parse::<u64>().ok());
            id.filter(|id| *id < MAX_STREAM_EVENTS).ok_or_else(beyond)? + 1
        }
        None => query_num(&q, "from")?.unwrap_or(0),
    };
    if from >= MAX_STREAM_EVENTS {
        return Err(beyond());
    }
    if s.inline(|| s.store().head(&game)).map_err(RecordError::from)?.is_none() {
        return Err(RecordError::NoSuchGame(game).into());
    }
    let follow = Follow::new(&s, game, from, false, watch)?;
    Ok(sse(futures_util::stream::unfold(follow, |mut f| async move { f.next_frame().await.map(|b| (b, f)) })))
}

/// `GET /api/stream?games=a,b:12,c`: one live stream for many games, so a
/// browser holds one connection for every table it follows, not one per
/// table (a browser allows six per host; the pages' shared worker,
/// `assets/stream-worker.js`, puts all of a browser's tabs through one).
/// Each message is `{"game", "event"}`. A game named alone is followed
/// from the next event stored; `game:N` from seq N (the events stored
/// since are sent first, in order), so a client that reconnects, or
/// follows one more game, opens a new stream where each game left off.
pub async fn stream_many(
    State(s): State<Shared>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    let games: Vec<&str> = q.get("games").map(|g| g.split(',').filter(|g| !g.is_empty()).collect()).unwrap_or_default();
    if games.is_empty() || games.len() > MAX_FOLLOWED_GAMES {
        return Err(ApiError::input(format!("games: name 1 to {MAX_FOLLOWED_GAMES} games, separated by commas")));
    }
    let mut follows = Vec::new();
    for named in games {
        let (game, from) = match named.split_once(':') {
            Some((game, from)) => match from.parse::<u64>().ok().filter(|n| *n < MAX_STREAM_EVENTS) {
                Some(n) => (game.to_string(), Some(n)),
                None => {
                    return Err(ApiError::input(format!(
                        "games: {named:?}: after the colon, the seq to follow the game from (below {MAX_STREAM_EVENTS})"
                    )));
                }
            },
            None => (named.to_string(), None),
        };
        let watch = s.stream_reader(&headers, &q, &game)?;
        let Some(head) = s.inline(|| s.store().head(&game)).map_err(RecordError::from)? else {
            return Err(RecordError::NoSuchGame(game).into());
        };
        let follow = Follow::new(&s, game, from.unwrap_or(head.seq + 1), true, watch)?;
        follows.push(Box::pin(futures_util::stream::unfold(follow, |mut f| async move {
            f.next_frame().await.map(|b| (b, f))
        })));
    }
    Ok(sse(futures_util::stream::select_all(follows)))
}

/// How often a live stream with nothing to send says so (an SSE comment),
/// so that proxies and the client see it is alive.
const KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(15);

/// A `text/event-stream` answer of ready-made frames, with a comment when
/// nothing was sent for `KEEP_ALIVE`. One timer per stream, moved on only
/// when it fires (not made again for every frame: with many subscribers,
/// a timer set and cancelled per frame per subscriber is work the fan-out
/// need not do).
fn sse(frames: impl futures_util::Stream<Item = Bytes> + Send + 'static) -> Response {
    let quiet = Box::pin(tokio::time::sleep(KEEP_ALIVE));
    let state = (Box::pin(frames), quiet, tokio::time::Instant::now());
    let body = futures_util::stream::unfold(state, |(mut frames, mut quiet, mut sent)| async move {
        loop {
            tokio::select! {
                frame = futures_util::StreamExt::next(&mut frames) => {
                    sent = tokio::time::Instant::now();
                    return frame.map(|f| (Ok::<_, Infallible>(f), (frames, quiet, sent)));
                }
                _ = &mut quiet => {
                    let now = tokio::time::Instant::now();
                    if now < sent + KEEP_ALIVE {
                        quiet.as_mut().reset(sent + KEEP_ALIVE);
                        continue;
                    }
                    quiet.as_mut().reset(now + KEEP_ALIVE);
                    return Some((Ok(Bytes::from_static(b":\n\n")), (frames, quiet, now)));
                }
            }
        }
    });
    ([(header::CONTENT_TYPE, "text/event-stream"), (header::CACHE_CONTROL, "no-cache")], Body::from_stream(body))
        .into_response()
}

/// Stored events as SSE messages, for `/stream` (id = seq, data = the
/// canonical event) and for `/api/stream` (data = `{"game", "event"}`):
/// one event, or a run of them (seq to last) in one piece, written to a
/// subscriber in one write.
#[derive(Clone)]
pub struct Frame {
    seq: u64,
    last: u64,
    one: Bytes,
    many: Bytes,
}

impl Frame {
    fn new(game: &str, event: &Event) -> Frame {
        let bytes = canonical_bytes(event);
        let data = std::str::from_utf8(&bytes).expect("canonical JSON is UTF-8");
        // Canonical JSON has no raw newline, so each is one `data:` line.
        let one = format!("id: {}\nevent: event\ndata: {data}\n\n", event.seq);
        let name = serde_json::to_string(game).expect("a string");
        let many = format!("event: event\ndata: {{\"game\":{name},\"event\":{data}}}\n\n");
        Frame { seq: event.seq, last: event.seq, one: Bytes::from(one), many: Bytes::from(many) }
    }

    /// Frames of consecutive events as one.
    fn joined(frames: &[Frame]) -> Frame {
        let join = |part: fn(&Frame) -> &Bytes| -> Bytes {
            let mut all = Vec::with_capacity(frames.iter().map(|f| part(f).len()).sum());
            frames.iter().for_each(|f| all.extend_from_slice(part(f)));
            all.into()
        };
        let (first, last) = (frames.first().expect("frames"), frames.last().expect("frames"));
        Frame { seq: first.seq, last: last.last, one: join(|f| &f.one), many: join(|f| &f.many) }
    }
}

/// What a game's fan-out carries: stored events, made into frames once for
/// every subscriber (each event alone, and all of them in one piece), and
/// the head after them (a create, an import or a fork sends the head
/// alone: subscribers read the store).
#[derive(Clone)]
pub struct Fanned {
    head: u64,
    frames: Arc<[Frame]>,
    /// All of `frames` as one, for a subscriber that is at the first of
    /// them (most are): one write for them all.
    whole: Option<Frame>,
}

impl Fanned {
    pub fn events(game: &str, events: &[Event]) -> Fanned {
        Fanned::frames(events.iter().map(|e| Frame::new(game, e)).collect())
    }
    fn frames(frames: Vec<Frame>) -> Fanned {
        // Gathered appends of this server can have another server's events
        // between them (PostgreSQL): only consecutive events are joined, or
        // the joined frame would carry a gap past the subscriber's check.
        let consecutive = frames.windows(2).all(|w| w[1].seq == w[0].last + 1);
        let whole = match frames.len() {
            0 => None,
            1 => Some(frames[0].clone()),
            _ if consecutive => Some(Frame::joined(&frames)),
            _ => None,
        };
        Fanned { head: frames.last().map_or(0, |f| f.last), frames: frames.into(), whole }
    }
    pub fn head(seq: u64) -> Fanned {
        Fanned { head: seq, frames: Arc::from([]), whole: None }
    }
}

/// How long a game's fan-out gathers events before it sends them, when it
/// sent some less than this ago. A live subscriber costs the server a
/// wake-up and a write per send (and its client a read): sent per event,
/// 500 subscribers of a table took 5.5 ms of CPU per append (0.11x the
/// rate with none); gathered, a table appending faster than this wakes
/// each subscriber once per `GATHER`, whatever its rate. A lone event is
/// sent at once; with fewer than `SUBSCRIBERS_PER_GATHER` * 2 subscribers
/// no event waits longer than this (with more, see `longest_gather`).
pub const GATHER: std::time::Duration = std::time::Duration::from_millis(25);

/// A gathered message this large is sent once `GATHER` has passed: a write
/// to a socket costs about the same up to this (a loopback packet's most),
/// so only smaller ones wait longer. (With 32 KiB, 500 subscribers of a
/// table on a disk storing 3,500 to 4,500 appends a second took 1.40 to
/// 1.45 times the server's CPU per append with none; with 64 KiB, 1.28 to
/// 1.31 times; on tmpfs, at 50 KB a message, the same.)
const FULL: usize = 64 * 1024;

/// With this many subscribers more, a small message may wait one `GATHER`
/// more (`longest_gather`).
const SUBSCRIBERS_PER_GATHER: usize = 125;

/// How long a message smaller than `FULL` may gather, for a game with
/// `subscribers`: `GATHER`, and one `GATHER` more per
/// `SUBSCRIBERS_PER_GATHER` subscribers past the first, at most 4 in all
/// (100 ms, from 500 subscribers). Each send costs a write per subscriber
/// of however few bytes: on a disk that stores 600 to 2,500 appends a
/// second, a message of 25 ms is 4 to 17 KB, and with 500 subscribers the
/// server took 1.6 to 4 times its CPU per append with none (and the table
/// appended at 0.4x to 0.6x its rate); gathered so, 1.45 to 1.65 times
/// (at 0.75x to 0.95x).
fn longest_gather(subscribers: usize) -> std::time::Duration {
    GATHER * (subscribers / SUBSCRIBERS_PER_GATHER).clamp(1, 4) as u32
}

/// A game's events stored but not yet sent to its subscribers (`GATHER`).
#[derive(Default)]
pub struct Outbox {
    frames: Vec<Frame>,
    /// Their size as one message (`Frame::one`).
    bytes: usize,
    /// When the fan-out last sent.
    sent: Option<tokio::time::Instant>,
    /// A send is due (a task waits to make it): frames wait for it.
    due: bool,
    /// Sends made, so that a task whose send was made early (the message
    /// filled) makes none.
    sends: u64,
}

impl Outbox {
    fn add(&mut self, fanned: &Fanned) {
        self.bytes += fanned.frames.iter().map(|f| f.one.len()).sum::<usize>();
        self.frames.extend(fanned.frames.iter().cloned());
    }

    /// Sends what was gathered. Under the outbox's lock: nothing newer goes first.
    fn send(&mut self, slot: &super::Slot) {
        let frames = std::mem::take(&mut self.frames);
        (self.bytes, self.due, self.sends) = (0, false, self.sends + 1);
        self.sent = Some(tokio::time::Instant::now());
        // Err only if no one listens.
        let _ = slot.fanout.send(Fanned::frames(frames));
    }
}

/// When a message gathered since the last send (at `sent`), `bytes` large,
/// is sent: `GATHER` after the last send if it is `FULL`, else
/// `longest_gather` after it.
fn send_at(sent: tokio::time::Instant, bytes: usize, subscribers: usize) -> tokio::time::Instant {
    sent + if bytes >= FULL { GATHER } else { longest_gather(subscribers) }
}

/// Sends an append's frames to the game's subscribers: at once if the
/// fan-out sent nothing in the last `GATHER`, else with all that is stored
/// until `send_at`, in one message. Called under the game's lock, so in
/// seq order; never waits (the send is a task's, or this call's when the
/// message fills past `GATHER`).
fn publish(slot: &Arc<super::Slot>, fanned: Fanned) {
    let mut outbox = slot.outbox.lock().unwrap_or_else(|p| p.into_inner());
    let now = tokio::time::Instant::now();
    let subscribers = slot.fanout.receiver_count();
    if outbox.due {
        outbox.add(&fanned);
        if outbox.sent.is_some_and(|at| send_at(at, outbox.bytes, subscribers) <= now) {
            outbox.send(slot);
        }
        return;
    }
    let Some(sent) = outbox.sent.filter(|at| *at + GATHER > now) else {
        outbox.sent = Some(now);
        outbox.sends += 1;
        let _ = slot.fanout.send(fanned);
        return;
    };
    outbox.add(&fanned);
    outbox.due = true;
    let (slot, sends) = (slot.clone(), outbox.sends);
    tokio::spawn(async move {
        // `send_at` moves as the message fills (and as subscribers come and
        // go): looked at again at each wake-up, from `GATHER` on.
        let mut at = sent + GATHER;
        loop {
            tokio::time::sleep_until(at).await;
            let mut outbox = slot.outbox.lock().unwrap_or_else(|p| p.into_inner());
            if outbox.sends != sends {
                // Sent by `publish` when it filled.
                return;
            }
            at = send_at(sent, outbox.bytes, slot.fanout.receiver_count());
            if at <= tokio::time::Instant::now() {
                outbox.send(&slot);
                return;
            }
        }
    });
}

/// A live stream's place in its game.
struct Follow {
    s: Shared,
    game: String,
    /// The seq of the next event to send.
    next: u64,
    /// Frames to send, in seq order from `next`.
    buf: VecDeque<Frame>,
    /// The fan-out can no longer be trusted to hold `next` (the stream
    /// starts before the head, or the subscriber lagged or saw a gap):
    /// read the store until it has nothing more.
    behind: bool,
    live: broadcast::Receiver<Fanned>,
    closing: tokio::sync::watch::Receiver<bool>,
    /// For `/api/stream`'s frames.
    many: bool,
    /// The token the stream was opened with, if any.
    watch: Option<Watch>,
    /// The token stopped working: the error was sent, nothing more is.
    ended: bool,
    _counted: Subscription,
}

/// The token a live stream was opened with, checked again before each
/// event it sends: the stream ends at its first event after the token
/// expires or is revoked, with an `event: error` saying which (a client
/// that reconnects with it gets the same 401). The expiry is known, so it
/// costs no read; the token is looked up again after any revoke through
/// this server, and otherwise at most once a second (a revoke through
/// another server on the same database), not once per event per stream.
struct Watch {
    signed_in: SignedIn,
    revocations: u64,
    checked: std::time::Instant,
}

/// How often a live stream looks its token up again with no revoke seen here.
const RECHECK: std::time::Duration = std::time::Duration::from_secs(1);

impl Watch {
    fn new(s: &Shared, signed_in: SignedIn) -> Watch {
        Watch { signed_in, revocations: s.revocations(), checked: std::time::Instant::now() }
    }

    /// None while the token works; else the error body that ends the stream.
    fn stopped(&mut self, s: &Shared) -> Option<Value> {
        let now = chrono::Utc::now();
        let expired = self.signed_in.expires.is_some_and(|t| now >= t);
        let revocations = s.revocations();
        if !expired && revocations == self.revocations && self.checked.elapsed() < RECHECK {
            return None;
        }
        self.revocations = revocations;
        self.checked = std::time::Instant::now();
        let standing = match s.inline(|| access::check(s.store(), &self.signed_in.token, now)) {
            Ok(standing) => standing,
            // The store failed: end the stream, as a failed read does.
            Err(e) => return Some(ApiError::from(e).body),
        };
        page::standing_grant(standing).err().map(|e| e.body)
    }
}

impl Follow {
    /// Subscribed before anything is read from the store, so that every
    /// event stored after the read comes through the fan-out.
    fn new(s: &Shared, game: String, next: u64, many: bool, watch: Option<SignedIn>) -> Result<Follow, ApiError> {
        let (counted, live) = s.subscribe(&game)?;
        let watch = watch.map(|w| Watch::new(s, w));
        Ok(Follow {
            s: s.clone(),
            game,
            next,
            buf: VecDeque::new(),
            behind: true,
            live,
            closing: s.closing(),
            many,
            watch,
            ended: false,
            _counted: counted,
        })
    }

    /// The next frame to send, waiting for its event to be stored; None
    /// ends the stream (shutdown, or the store failed).
    async fn next_frame(&mut self) -> Option<Bytes> {
        if self.ended {
            return None;
        }
        loop {
            if let Some(frame) = self.buf.pop_front() {
                if frame.last < self.next {
                    continue;
                }
                // A gap (events stored through another server between this
                // server's): read them from the store, never skip them.
                if frame.seq > self.next {
                    self.buf.clear();
                    self.behind = true;
                    continue;
                }
                if let Some(error) = self.watch.as_mut().and_then(|w| w.stopped(&self.s)) {
                    // A page's cookie that stopped working counts as no
                    // token: a public game is still read.
                    let cookie = self.watch.as_ref().is_some_and(|w| matches!(w.signed_in.grant, Grant::Cookie(_)));
                    let public = cookie
                        && self.s.inline(|| access::read_access(self.s.store(), &self.game)).ok()
                            == Some(access::ReadAccess::Public);
                    if public {
                        self.watch = None;
                    } else {
                        self.ended = true;
                        let mut error = error;
                        if self.many {
                            error["error"]["game"] = json!(self.game);
                        }
                        return Some(Bytes::from(format!("event: error\ndata: {error}\n\n")));
                    }
                }
                self.next = frame.last + 1;
                return Some(if self.many { frame.many } else { frame.one });
            }
            if *self.closing.borrow() {
                return None;
            }
            if self.behind {
                // The slow path: read from the store, this subscriber alone,
                // a few subscribers at a time (each read holds a worker thread).
                let _reading = self.s.catching_up.acquire().await;
                let (store, game, from) = (self.s.store(), self.game.clone(), self.next);
                let page = blocking(move || -> Result<Vec<Frame>, RecordError> {
                    let events = store.read(&game, from)?.take(STORE_PAGE).collect::<Result<Vec<_>, _>>()?;
                    Ok(events.iter().map(|e| Frame::new(&game, e)).collect())
                })
                .await;
                match page {
                    Ok(Ok(frames)) => {
                        self.behind = frames.len() == STORE_PAGE;
                        self.buf.extend(frames);
                        continue;
                    }
                    _ => return None,
                }
            }
            tokio::select! {
                fanned = self.live.recv() => match fanned {
                    // (`buf` is empty here: the loop waits only once it is.)
                    Ok(fanned) => match (fanned.frames.first(), fanned.whole) {
                        // Next in order: all in one write.
                        (Some(first), Some(whole)) if first.seq == self.next => self.buf.push_back(whole),
                        // Some already sent (read from the store meanwhile).
                        (Some(first), _) if first.seq <= self.next => self.buf.extend(fanned.frames.iter().cloned()),
                        // A gap, or a head moved by a create, import or fork.
                        _ if fanned.head >= self.next => self.behind = true,
                        _ => {}
                    },
                    // Too far behind: the fan-out dropped what it missed.
                    Err(broadcast::error::RecvError::Lagged(_)) => self.behind = true,
                    Err(broadcast::error::RecvError::Closed) => return None,
                },
                _ = self.closing.changed() => {}
            }
        }
    }
}

/// Events a lagging subscriber reads from the store at a time.
const STORE_PAGE: usize = 256;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::FANOUT_BUFFER;
    use crate::store::{SledStore, checkpoints};

    /// Gathered frames with another server's event between them are not
    /// joined: a joined frame would carry the gap past a subscriber.
    #[test]
    fn only_consecutive_frames_are_joined() {
        let frame = |seq: u64| Frame { seq, last: seq, one: Bytes::from(format!("{seq}")), many: Bytes::new() };
        let joined = Fanned::frames(vec![frame(11), frame(12), frame(13)]);
        assert_eq!(joined.whole.map(|w| (w.seq, w.last, w.one)), Some((11, 13, Bytes::from("111213"))));
        let gap = Fanned::frames(vec![frame(11), frame(13)]);
        assert!(gap.whole.is_none(), "11 and 13 (12 stored through another server) joined");
        assert_eq!(gap.head, 13);
    }

    /// With many subscribers, a small gathered message waits longer for
    /// more: one `GATHER` more per 125 subscribers past the first 125, up
    /// to 100 ms from 500.
    #[test]
    fn with_many_subscribers_a_small_gathered_message_waits_longer() {
        let sent = tokio::time::Instant::now();
        for (subscribers, bytes, after) in [
            (0, 300, GATHER),
            (10, 300, GATHER),
            (249, 300, GATHER),
            (250, 300, 2 * GATHER),
            (499, 300, 3 * GATHER),
            (500, 300, 4 * GATHER),
            (5000, FULL - 1, 4 * GATHER),
            (5000, FULL, GATHER),
        ] {
            assert_eq!(send_at(sent, bytes, subscribers), sent + after, "{subscribers} subscribers, {bytes} bytes");
        }
    }

    fn slot() -> Arc<super::super::Slot> {
        Arc::new(super::super::Slot {
            recorder: Arc::default(),
            fanout: broadcast::channel(FANOUT_BUFFER).0,
            outbox: std::sync::Mutex::default(),
            subscribers: Default::default(),
        })
    }

    fn frames(seqs: std::ops::RangeInclusive<u64>, bytes: usize) -> Fanned {
        Fanned::frames(
            seqs.map(|seq| Frame { seq, last: seq, one: vec![b'x'; bytes].into(), many: Bytes::new() }).collect(),
        )
    }

    fn seqs(fanned: Fanned) -> Vec<u64> {
        fanned.frames.iter().map(|f| f.seq).collect()
    }

    /// A gathered message is sent once, whole, no sooner than `send_at`
    /// (timers never fire early, so these bounds hold on any machine).
    #[test]
    fn a_gathered_message_is_sent_once_whole_and_no_sooner_than_its_time() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            for (subscribers, bytes) in [(10, 300), (500, 300), (500, FULL)] {
                let slot = slot();
                let mut live: Vec<_> = (0..subscribers).map(|_| slot.fanout.subscribe()).collect();
                let sent = tokio::time::Instant::now();
                publish(&slot, frames(1..=1, bytes));
                assert_eq!(seqs(live[0].try_recv().unwrap()), [1], "a lone event goes at once");
                publish(&slot, frames(2..=3, bytes / 2));
                publish(&slot, frames(4..=4, bytes / 2));
                let gathered = live[0].recv().await.unwrap();
                assert!(tokio::time::Instant::now() >= send_at(sent, bytes, subscribers));
                assert_eq!(seqs(gathered), [2, 3, 4], "{subscribers} subscribers, {bytes} bytes");
                let last = live.last_mut().unwrap();
                assert_eq!((seqs(last.try_recv().unwrap()), seqs(last.try_recv().unwrap())), (vec![1], vec![2, 3, 4]));
                tokio::time::sleep(4 * GATHER).await;
                assert!(live[0].is_empty(), "sent twice");
            }
        });
    }

    /// With many subscribers, a small message that fills once `GATHER` has
    /// passed is sent at once by the append that filled it, and the task
    /// that waited for it sends nothing more.
    #[test]
    fn a_message_that_fills_past_gather_goes_at_once_and_once() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let slot = slot();
            let mut live: Vec<_> = (0..500).map(|_| slot.fanout.subscribe()).collect();
            publish(&slot, frames(1..=1, 300));
            publish(&slot, frames(2..=2, 300));
            tokio::time::sleep(GATHER).await;
            assert_eq!(seqs(live[0].try_recv().unwrap()), [1]);
            publish(&slot, frames(3..=3, FULL));
            assert_eq!(seqs(live[0].try_recv().unwrap()), [2, 3], "filled past GATHER: sent at once");
            tokio::time::sleep(4 * GATHER).await;
            assert!(live[0].is_empty(), "sent again by the task that waited");
            drop(live);
        });
    }

    fn note(hash0: &str, seq: u64) -> Submission {
        Submission {
            actor: "p1".into(),
            action: json!({"type": "note", "concerns": {"seq": 0, "hash": hash0}, "text": format!("n{seq}")}),
            at: None,
        }
    }

    #[test]
    fn a_subscriber_too_far_behind_for_the_fan_out_catches_up_from_the_store_with_no_gap() {
        let dir = tempfile::tempdir().unwrap();
        let store = SledStore::open(dir.path()).unwrap();
        let header = serde_json::from_value(json!({"type": "open", "ruleset": "doomtrooper", "ruleset_version": 1,
            "seats": [{"id": "p1", "name": "Ann"}, {"id": "p2", "name": "Ben"}]}))
        .unwrap();
        let e0 = crate::record::create(&store, "g", &header, "organiser", None).unwrap();
        let signer = checkpoints::signer(&store, None, None).unwrap();
        let s = super::super::Server::with_pending(store, signer, 16);
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let id = |frame: Bytes| String::from_utf8(frame.to_vec()).unwrap().lines().next().unwrap().to_string();
        runtime.block_on(async {
            let mut follow = Follow::new(&s, "g".into(), 0, false, None).unwrap();
            assert_eq!(id(follow.next_frame().await.unwrap()), "id: 0");
            // Three times what the fan-out keeps, appended while the
            // subscriber reads nothing.
            let n = 3 * FANOUT_BUFFER as u64;
            for seq in 1..=n {
                run(&s, "g", vec![note(&e0.hash, seq)], seq).await.unwrap();
                // Each append sent alone (not gathered with the next).
                tokio::time::sleep(GATHER).await;
            }
            assert!(follow.live.len() > FANOUT_BUFFER, "more unread than the fan-out keeps: it lagged");
            for seq in 1..=n {
                assert_eq!(id(follow.next_frame().await.unwrap()), format!("id: {seq}"));
            }
            // Caught up, it is back on the fan-out.
            run(&s, "g", vec![note(&e0.hash, n + 1)], n + 1).await.unwrap();
            assert_eq!(id(follow.next_frame().await.unwrap()), format!("id: {}", n + 1));
            assert!(!follow.behind);
        });
    }
}
