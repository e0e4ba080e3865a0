//! The pages a browser opens: the replay page of a game and an index. Each
//! is one HTML file with its script inline, compiled into the binary (no
//! build step). They read the same JSON API as everyone else.

use axum::http::header;
use axum::response::{Html, IntoResponse, Response};

const REPLAY: &str = include_str!("replay.html");
const INDEX: &str = include_str!("index.html");
const FOLLOW: &str = include_str!("follow.html");

/// `GET /games/{game}/replay`: the page finds its game in its own path, so
/// it is the same bytes for every game.
pub async fn replay() -> Response {
    page(REPLAY)
}

/// `GET /follow?games=a,b,c`: the floor page, many games over one stream.
pub async fn follow() -> Response {
    page(FOLLOW)
}

/// `GET /`
pub async fn index() -> Response {
    page(INDEX)
}

fn page(html: &'static str) -> Response {
    // The page loads nothing from elsewhere: say so to the browser.
    let csp = "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'";
    ([(header::CONTENT_SECURITY_POLICY, csp)], Html(html)).into_response()
}
