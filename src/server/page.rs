//! The pages a browser opens: the replay page of a game and an index. Each
//! is one HTML file with its script inline, compiled into the binary (no
//! build step). They read the same JSON API as everyone else, with the
//! token in a cookie set once from the address's `#token=` (`session`).

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{Html, IntoResponse, Response};
use chrono::Utc;
use serde::Deserialize;
use serde_json::json;

use super::body::json_body;
use super::{ApiError, Shared, blocking};
use crate::access::{self, Grant, Standing};

use std::sync::LazyLock;

// Each page is one HTML file with its scripts inline (the CSP allows no
// other script); the sign-in script the three share is written once, in
// `sign_in.js`, and put where a page says `/* sign_in.js */`.
static REPLAY: LazyLock<String> = LazyLock::new(|| with_sign_in(include_str!("replay.html")));
static INDEX: LazyLock<String> = LazyLock::new(|| with_sign_in(include_str!("index.html")));
static FOLLOW: LazyLock<String> = LazyLock::new(|| with_sign_in(include_str!("follow.html")));

fn with_sign_in(html: &str) -> String {
    const MARK: &str = "/* sign_in.js */\n";
    assert!(html.contains(MARK), "every page signs in from #token=");
    html.replacen(MARK, include_str!("sign_in.js"), 1)
}

/// `GET /games/{game}/replay`: the page finds its game in its own path, so
/// it is the same bytes for every game.
pub async fn replay() -> Response {
    page(&REPLAY)
}

/// `GET /games/{game}/table`: where a seat's link leads (`sign_in`). A
/// stand-in, the replay page with its sign-in, until the table page is
/// built (issue 41).
pub async fn table() -> Response {
    page(&REPLAY)
}

/// `GET /follow?games=a,b,c`: the floor page, many games over one stream.
pub async fn follow() -> Response {
    page(&FOLLOW)
}

/// `GET /`
pub async fn index() -> Response {
    page(&INDEX)
}

fn page(html: &'static str) -> Response {
    // The page loads nothing from elsewhere: say so to the browser.
    let csp = "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'";
    ([(header::CONTENT_SECURITY_POLICY, csp)], Html(html)).into_response()
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
/// whole site, and drops the fragment from the address bar. The cookie
/// reads what its token reads and appends as its seat or judge
/// (`Grant::Cookie`: the table page records with it); it lasts until the
/// token expires (or the browser closes, for a token that does not
/// expire). JSON only (`json_sent`): no other site can put its token in a
/// visitor's browser.
pub async fn session(
    State(s): State<Shared>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    if !json_sent(&headers) {
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
    let mut cookie = format!("{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict");
    if let Some(t) = expires {
        cookie.push_str(&format!("; Max-Age={}", (t - now).num_seconds().max(1)));
    }
    let body = json!({"grant": grant, "expires": expires.map(crate::event::format_time)});
    Ok(([(header::SET_COOKIE, cookie)], Json(body)).into_response())
}

/// Whether the request says its body is JSON. Another site's page can
/// send a form (or text/plain) to this server without asking, but not
/// JSON: that takes a CORS preflight, which this server never grants. So a
/// request that carries the cookie and says JSON came from this server's
/// own pages (or from a client that holds the token anyway).
pub fn json_sent(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(';').next().is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json")))
}

/// `DELETE /api/session`: forget the cookie (a shared tablet at the venue).
pub async fn end_session() -> Response {
    let cookie = format!("{COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
    ([(header::SET_COOKIE, cookie)], Json(json!({"ended": true}))).into_response()
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
mod sign_in_tests {
    /// Every page carries the one sign-in script, where it asked for it.
    #[test]
    fn every_page_has_the_sign_in_script_in_place_of_its_mark() {
        for page in [&*super::REPLAY, &*super::INDEX, &*super::FOLLOW] {
            assert_eq!(page.matches("async function signIn()").count(), 1);
            assert!(!page.contains("/* sign_in.js */"));
        }
    }
}
