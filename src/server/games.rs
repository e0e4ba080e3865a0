//! Games as the organiser runs them: list, create, import, fork, tokens
//! (issue, list, revoke) and read access.

use std::collections::HashMap;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use chrono::Utc;
use serde::Deserialize;
use serde_json::{Value, json};

use super::body::{json_body, raw_body};
use super::{ApiError, Shared, blocking};
use crate::access::{self, Grant, ReadAccess};
use crate::event::Header;
use crate::limits::MAX_IMPORT_BYTES;
use crate::ops;
use crate::record::{RecordError, read_export};
use crate::sign_in::{self, Base};

/// `GET /api/games`: the names of the games the caller may read.
pub async fn list(
    State(s): State<Shared>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Json<Value>, ApiError> {
    let grant = s.reading(&headers, &q)?;
    let store = s.store();
    let names = blocking(move || -> Result<Vec<String>, RecordError> {
        let mut names = Vec::new();
        for game in store.games()? {
            let readable = access::read_access(store, &game)? == ReadAccess::Public
                || grant.as_ref().is_some_and(|g| g.may_read(&game));
            if readable {
                names.push(game);
            }
        }
        Ok(names)
    })
    .await??;
    Ok(Json(json!(names)))
}

/// `POST /api/games`: the organiser creates a game.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateRequest {
    pub name: String,
    pub header: Header,
    /// The actor of event 0 (default "organiser").
    #[serde(default)]
    pub by: Option<String>,
    /// Who may read the game (default public).
    #[serde(default)]
    pub read: ReadAccess,
}

pub async fn create(
    State(s): State<Shared>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    s.organiser(&headers)?;
    let req: CreateRequest = json_body(body)?;
    let store = s.store();
    let name = req.name.clone();
    let event = blocking(move || -> Result<Value, RecordError> {
        access::creating(store, &req.name, req.read, || {
            ops::create(store, &req.name, &req.header, req.by.as_deref().unwrap_or("organiser"))
        })
    })
    .await??;
    s.advanced(&name, 0);
    Ok((StatusCode::CREATED, Json(event)))
}

/// `POST /api/games/{game}/import?read=public|token`: an export (JSON
/// Lines) stored as a new game, verified whole before anything is stored.
pub async fn import(
    State(s): State<Shared>,
    Path(game): Path<String>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    s.organiser(&headers)?;
    let read = read_param(&q)?;
    let bytes = raw_body(body, MAX_IMPORT_BYTES)?;
    let store = s.store();
    let name = game.clone();
    let done = blocking(move || -> Result<Value, RecordError> {
        let events = read_export(std::io::Cursor::new(&bytes[..])).collect::<Result<Vec<_>, _>>()?;
        access::creating(store, &name, read, || ops::import(store, &name, events))
    })
    .await??;
    if let Some(events) = done["events"].as_u64() {
        s.advanced(&game, events - 1);
    }
    Ok((StatusCode::CREATED, Json(done)))
}

/// `POST /api/games/{game}/fork`: a new game sharing events 0..=at.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForkRequest {
    pub at: u64,
    pub name: String,
    #[serde(default)]
    pub read: Option<ReadAccess>,
}

pub async fn fork(
    State(s): State<Shared>,
    Path(game): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    s.organiser(&headers)?;
    let req: ForkRequest = json_body(body)?;
    let store = s.store();
    let name = req.name.clone();
    let done = blocking(move || -> Result<Value, RecordError> {
        // The fork is read like the game it came from, unless told otherwise.
        let read = match req.read {
            Some(r) => r,
            None => access::read_access(store, &game)?,
        };
        access::creating(store, &req.name, read, || ops::fork(store, &game, req.at, &req.name))
    })
    .await??;
    s.advanced(&name, done["at"].as_u64().unwrap_or(0));
    Ok((StatusCode::CREATED, Json(done)))
}

/// `POST /api/games/{game}/tokens`: `{"seat": "p1"}` or `{"judge": "Ann"}`,
/// and when it expires.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenRequest {
    #[serde(default)]
    pub seat: Option<String>,
    #[serde(default)]
    pub judge: Option<String>,
    /// When the token stops working: "never", a duration ("30m", "12h",
    /// "7d") or an RFC 3339 UTC time (default: 24 hours after it is issued).
    #[serde(default)]
    pub expires: Option<String>,
}

/// The answer carries, besides the token, the seat's `link` to the table
/// page (`sign_in::table_link`, the token in its fragment) and its QR code
/// as `qr_svg`: this answer is the only time the token is known, so the
/// code is drawn now, not served later at an address (which would put the
/// token in a URL, and no URL of this server holds one). The link starts
/// with the `Host` the request came to, and `http://` (this server speaks
/// plain HTTP), or `https://` when a trusted proxy says the organiser
/// reached it over TLS (`--trust-proxy`). Behind a proxy that changes the
/// path, a client builds the link from `token` itself (`arbiter token
/// --url` does).
pub async fn token(
    State(s): State<Shared>,
    Path(game): Path<String>,
    tls: Option<axum::Extension<super::connection::ThroughTls>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    s.organiser(&headers)?;
    let req: TokenRequest = json_body(body)?;
    let grant = match (req.seat, req.judge) {
        (Some(seat), None) => Grant::Seat { game: game.clone(), seat },
        (None, Some(judge)) => Grant::Judge { game: game.clone(), judge },
        _ => return Err(ApiError::input("name exactly one of \"seat\" or \"judge\"")),
    };
    // The clock is read here, at the edge; `access` is given the time.
    let now = Utc::now();
    let expires = access::expiry(&grant, req.expires.as_deref(), now)?;
    let store = s.store();
    let issued = blocking(move || access::issue_at(store, &grant, now, expires)).await??;
    let mut answer = issued_json(&issued);
    // A Host that is not a host name or address (HTTP/1.0 sends none) gets no link.
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    let scheme = if tls.is_some() { "https" } else { "http" };
    if let Some(base) = host.and_then(|h| Base::parse(&format!("{scheme}://{h}")).ok()) {
        let link = sign_in::table_link(&base, &game, &issued.token);
        answer["qr_svg"] = json!(sign_in::svg_code(&link));
        answer["link"] = json!(link);
    }
    Ok((StatusCode::CREATED, Json(answer)))
}

/// A new token as the API and `arbiter token` show it: the token (this
/// once), its id, its grant (as before, for clients that read `grant`),
/// its times and state.
pub fn issued_json(issued: &access::Issued) -> Value {
    let mut v = json!(issued);
    v["grant"] = json!(issued.listed.grant);
    v
}

/// `GET /api/tokens?game=G`: every token (of one game), never the secrets.
pub async fn tokens(
    State(s): State<Shared>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Json<Value>, ApiError> {
    s.organiser(&headers)?;
    let game = q.get("game").cloned();
    let now = Utc::now();
    let store = s.store();
    let listed = blocking(move || access::list(store, game.as_deref(), now)).await??;
    Ok(Json(json!({ "tokens": listed })))
}

/// `POST /api/tokens/{id}/revoke`: the token stops working at once. The
/// body, if any, is not used, but is read before answering: a request
/// answered with its body unread closes its connection, and a client
/// that reuses it finds it gone.
pub async fn revoke(
    State(s): State<Shared>,
    Path(id): Path<String>,
    headers: HeaderMap,
    _body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    s.organiser(&headers)?;
    let now = Utc::now();
    let store = s.store();
    let listed = blocking(move || access::revoke(store, &id, now)).await??;
    s.revoked();
    Ok(Json(json!(listed)))
}

/// `PUT /api/games/{game}/access`: `{"read": "public"}` or `{"read": "token"}`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AccessRequest {
    pub read: ReadAccess,
}

pub async fn set_access(
    State(s): State<Shared>,
    Path(game): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    s.organiser(&headers)?;
    let req: AccessRequest = json_body(body)?;
    let store = s.store();
    let game2 = game.clone();
    blocking(move || -> Result<(), RecordError> {
        store.head(&game2)?.ok_or_else(|| RecordError::NoSuchGame(game2.clone()))?;
        access::set_read_access(store, &game2, req.read)
    })
    .await??;
    Ok(Json(json!({"game": game, "read": req.read})))
}

fn read_param(q: &HashMap<String, String>) -> Result<ReadAccess, ApiError> {
    match q.get("read").map(String::as_str) {
        None | Some("public") => Ok(ReadAccess::Public),
        Some("token") => Ok(ReadAccess::Token),
        Some(other) => Err(ApiError::input(format!("read is \"public\" or \"token\", not {other:?}"))),
    }
}
