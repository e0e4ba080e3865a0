//! The pages a browser opens: the replay page of a game, the table page
//! (a seat or judge records by tapping), the floor page and an index.
//! Each page is an HTML shell, and its script is a browser-native ES
//! module from `assets/`; modules share code by `import` (the board panel,
//! the API calls, the moves, the live stream). Shells and modules are
//! compiled into the binary as they are in the repository (no build step,
//! no bundler: what runs in the browser is what is reviewed), and read the
//! same JSON API as everyone else, with the token in a cookie set once from
//! the address's `#token=` (`session`).

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::{Extension, Json};
use chrono::Utc;
use serde::Deserialize;
use serde_json::json;

use super::body::json_body;
use super::connection::ThroughTls;
use super::{ApiError, Shared, blocking};
use crate::access::{self, Grant, Standing};

/// `GET /games/{game}/replay`: the page finds its game in its own path, so
/// it is the same bytes for every game.
pub async fn replay() -> Response {
    page(include_str!("replay.html"))
}

/// `GET /games/{game}/table`: a seat's or a judge's moves as buttons. A
/// name that cannot be a game's has no table (404, as the API says).
pub async fn table(Path(game): Path<String>) -> Response {
    if crate::event::check_game_name(&game).is_err() {
        return ApiError::from(crate::record::RecordError::NoSuchGame(game)).into_response();
    }
    page(include_str!("table.html"))
}

/// `GET /follow?games=a,b,c`: the floor page, many games over one stream.
pub async fn follow() -> Response {
    page(include_str!("follow.html"))
}

/// `GET /`
pub async fn index() -> Response {
    page(include_str!("index.html"))
}

/// What a page may load: scripts and styles from this server alone (no
/// inline script: a page's script is a module from `/assets/`), inline
/// styles, the shared worker that holds the browser's live streams
/// (`assets/stream-worker.js`) from this server alone, and no framing by
/// another site (a page that records must not be clicked through from
/// under another page).
pub const CSP: &str = "default-src 'self'; script-src 'self'; worker-src 'self'; style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

fn page(html: &'static str) -> Response {
    ([(header::CONTENT_SECURITY_POLICY, CSP)], Html(html)).into_response()
}

const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

/// The pages' modules and styles, served at `/assets/NAME`: a fixed list,
/// compiled in.
pub const ASSETS: &[(&str, &str, &str)] = &[
    ("api.js", JS, include_str!("assets/api.js")),
    ("board.js", JS, include_str!("assets/board.js")),
    ("board.css", CSS, include_str!("assets/board.css")),
    ("dom.js", JS, include_str!("assets/dom.js")),
    ("follow.js", JS, include_str!("assets/follow.js")),
    ("hub.js", JS, include_str!("assets/hub.js")),
    ("stream-worker.js", JS, include_str!("assets/stream-worker.js")),
    ("index.js", JS, include_str!("assets/index.js")),
    ("judge.js", JS, include_str!("assets/judge.js")),
    ("live.js", JS, include_str!("assets/live.js")),
    ("moves.js", JS, include_str!("assets/moves.js")),
    ("replay.js", JS, include_str!("assets/replay.js")),
    ("send.js", JS, include_str!("assets/send.js")),
    ("table.js", JS, include_str!("assets/table.js")),
];

/// `GET /assets/{name}`. The ETag is the content's hash: a browser asks
/// again each time (`no-cache`) and gets 304 while the binary is the same,
/// so a new arbiter's pages never run an older module.
pub async fn asset(Path(name): Path<String>, headers: HeaderMap) -> Response {
    let Some((_, kind, text)) = ASSETS.iter().find(|(n, _, _)| *n == name) else {
        return ApiError::not_found().into_response();
    };
    let etag = format!("\"{}\"", &blake3::hash(text.as_bytes()).to_hex()[..32]);
    let cache = [(header::CACHE_CONTROL, "no-cache".to_string()), (header::ETAG, etag.clone())];
    let seen = headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok());
    if seen.is_some_and(|v| v.split(',').any(|t| t.trim() == etag)) {
        return (StatusCode::NOT_MODIFIED, cache).into_response();
    }
    (cache, [(header::CONTENT_TYPE, *kind)], *text).into_response()
}

/// The cookie the pages read with: the token, sent by the browser with
/// every request to this server and readable by no script (HttpOnly).
pub const COOKIE: &str = "arbiter_token";

/// The token in the request's `arbiter_token` cookie, if any.
pub fn cookie_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.trim())
        .filter(|v| !v.is_empty())
}

/// The grant of a token that works, or 401 saying why it does not: unknown,
/// revoked or expired (`error.token` names which, for clients).
pub fn standing_grant(standing: Standing) -> Result<Grant, ApiError> {
    let (message, why) = match standing {
        Standing::Valid(grant, _) => return Ok(grant),
        Standing::Unknown => return Err(ApiError::unauthorized("unknown token")),
        Standing::Revoked(at) => {
            (format!("this token was revoked at {at}; ask the organiser for a new one"), "revoked")
        }
        Standing::Expired(at) => (format!("this token expired at {at}; ask the organiser for a new one"), "expired"),
    };
    let mut err = ApiError::unauthorized(message);
    err.body["error"]["token"] = json!(why);
    Err(err)
}

/// `POST /api/session`: `{"token": "..."}`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionRequest {
    pub token: String,
}

/// `POST /api/session`: a page that was opened with `#token=...` (the
/// fragment never reaches the server, a log or a `Referer`) posts the token
/// here once, gets it back as an HttpOnly, SameSite=Strict cookie for the
/// whole site, and drops the fragment from the address bar. The cookie reads,
/// and appends only from this server's pages (`Grant::Cookie`,
/// `events::may_append`); it lasts until the token expires (or the browser
/// closes, for a token that does not expire). JSON only: a form on another
/// site cannot send JSON without a CORS preflight, which this server never
/// grants, so no other site can put its token in a visitor's browser.
/// Behind a trusted TLS proxy (`connection::ThroughTls`) the cookie is
/// `Secure`: the browser then never sends it over plain HTTP.
pub async fn session(
    State(s): State<Shared>,
    tls: Option<Extension<ThroughTls>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let json_sent = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(';').next().is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json")));
    if !json_sent {
        return Err(ApiError::input("send the token as JSON (Content-Type: application/json)"));
    }
    let req: SessionRequest = json_body(body)?;
    let now = Utc::now();
    let store = s.store();
    let token = req.token.trim().to_string();
    let (standing, token) = blocking(move || access::check(store, &token, now).map(|s| (s, token))).await??;
    let expires = match &standing {
        Standing::Valid(_, expires) => *expires,
        _ => None,
    };
    let grant = standing_grant(standing)?;
    // A token is hex; anything else cannot be a token this server issued
    // and was refused above, so the cookie's value needs no quoting.
    let mut cookie = format!("{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict{}", secure(&tls));
    if let Some(t) = expires {
        cookie.push_str(&format!("; Max-Age={}", (t - now).num_seconds().max(1)));
    }
    let body = json!({"grant": grant, "expires": expires.map(crate::event::format_time)});
    Ok(([(header::SET_COOKIE, cookie)], Json(body)).into_response())
}

/// `GET /api/session`: who this browser is signed in as (the cookie's
/// grant, or a bearer token's), or null: a page says who records there.
pub async fn signed_in(State(s): State<Shared>, headers: HeaderMap) -> Result<Json<serde_json::Value>, ApiError> {
    let grant = match s.caller(&headers, None)? {
        Some(Grant::Cookie(inner)) => Some(*inner),
        grant => grant,
    };
    Ok(Json(json!({ "grant": grant })))
}

/// `DELETE /api/session`: forget the cookie (a shared tablet at the venue).
pub async fn end_session(tls: Option<Extension<ThroughTls>>) -> Response {
    let cookie = format!("{COOKIE}=; Path=/; HttpOnly; SameSite=Strict{}; Max-Age=0", secure(&tls));
    ([(header::SET_COOKIE, cookie)], Json(json!({"ended": true}))).into_response()
}

/// The cookie's `Secure` attribute, for a request that came through TLS.
fn secure(tls: &Option<Extension<ThroughTls>>) -> &'static str {
    if tls.is_some() { "; Secure" } else { "" }
}

/// `Referrer-Policy: no-referrer` on every response. Tokens ride in URLs
/// (`?access_token=` on API calls, `#token=` on pages until the page trades
/// it for the cookie); a browser following a link from such a page would
/// otherwise send the page's address to the next site. `no-referrer`
/// rather than `same-origin`: this server reads no `Referer`, so keeping it
/// within the origin buys nothing, and a proxy or another application on
/// the same origin that logs `Referer` would log the URL.
pub async fn no_referrer(mut response: Response) -> Response {
    response.headers_mut().insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

#[cfg(test)]
mod tests {
    use super::ASSETS;

    /// Every module a page or another module imports is served, so a page
    /// never asks for a script that is not there.
    #[test]
    fn every_import_and_script_is_an_asset() {
        let served = |name: &str| ASSETS.iter().any(|(n, _, _)| *n == name);
        let pages = [
            include_str!("replay.html"),
            include_str!("table.html"),
            include_str!("follow.html"),
            include_str!("index.html"),
        ];
        for text in pages.iter().chain(ASSETS.iter().map(|(_, _, t)| t)) {
            for quote in ["src=\"/assets/", "href=\"/assets/", "from \"./", "SharedWorker(\"/assets/"] {
                for part in text.split(quote).skip(1) {
                    let name = &part[..part.find('"').expect("a closing quote")];
                    assert!(served(name), "{name} is imported but not in ASSETS");
                }
            }
        }
        // The call's words are the library's.
        let moves = ASSETS.iter().find(|(n, _, _)| *n == "moves.js").unwrap().2;
        assert!(moves.contains(&format!("export const CALL = {:?};", crate::adjudication::CALL)));
        // No page has a script of its own: the CSP allows none.
        for page in pages {
            assert!(!page.contains("<script>"), "a page's script is a module from /assets/");
        }
    }
}
