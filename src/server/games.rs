//! Games as the organiser runs them: list, create, import, fork, tokens and
//! read access.

use std::collections::HashMap;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};

use super::body::{json_body, raw_body};
use super::{ApiError, Shared, blocking};
use crate::access::{self, Grant, ReadAccess};
use crate::event::{Header, check_game_name};
use crate::limits::MAX_IMPORT_BYTES;
use crate::ops;
use crate::record::{RecordError, read_export};
use crate::store::Store;

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
        claim(store, &req.name, req.read)?;
        ops::create(store, &req.name, &req.header, req.by.as_deref().unwrap_or("organiser"))
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
        claim(store, &name, read)?;
        ops::import(store, &name, events)
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
        claim(store, &req.name, read)?;
        ops::fork(store, &game, req.at, &req.name)
    })
    .await??;
    s.advanced(&name, done["at"].as_u64().unwrap_or(0));
    Ok((StatusCode::CREATED, Json(done)))
}

/// `POST /api/games/{game}/tokens`: `{"seat": "p1"}` or `{"judge": "Ann"}`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenRequest {
    #[serde(default)]
    pub seat: Option<String>,
    #[serde(default)]
    pub judge: Option<String>,
}

pub async fn token(
    State(s): State<Shared>,
    Path(game): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    s.organiser(&headers)?;
    let req: TokenRequest = json_body(body)?;
    let grant = match (req.seat, req.judge) {
        (Some(seat), None) => Grant::Seat { game, seat },
        (None, Some(judge)) => Grant::Judge { game, judge },
        _ => return Err(ApiError::input("name exactly one of \"seat\" or \"judge\"")),
    };
    let store = s.store();
    let (token, grant) = blocking(move || access::issue(store, &grant).map(|t| (t, grant))).await??;
    Ok((StatusCode::CREATED, Json(json!({"token": token, "grant": grant}))))
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

/// Checks that `name` is a free, valid game name and sets its read access.
/// Read access is set before the game exists, so a new game is never
/// readable by more than intended.
fn claim(store: &dyn Store, name: &str, read: ReadAccess) -> Result<(), RecordError> {
    check_game_name(name).map_err(RecordError::Input)?;
    if store.head(name)?.is_some() {
        return Err(RecordError::Exists(name.to_string()));
    }
    access::set_read_access(store, name, read)
}

fn read_param(q: &HashMap<String, String>) -> Result<ReadAccess, ApiError> {
    match q.get("read").map(String::as_str) {
        None | Some("public") => Ok(ReadAccess::Public),
        Some("token") => Ok(ReadAccess::Token),
        Some(other) => Err(ApiError::input(format!("read is \"public\" or \"token\", not {other:?}"))),
    }
}
