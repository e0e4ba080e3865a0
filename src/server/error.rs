//! The API's one error body: `{"error": {"code": "...", "message": "...", ...}}`.
//!
//! Codes are stable (clients branch on them; the OpenAPI document lists
//! them). The record layer's codes are the CLI's (`RecordError::code`); the
//! server adds its own for what only a server can refuse.

use axum::Json;
use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::record::RecordError;

/// Every code the API can answer, with its status and meaning (for the
/// OpenAPI document and the README).
pub const CODES: &[(&str, u16, &str)] = &[
    ("input", 400, "the request is malformed (bad JSON, a float, a missing field, a bad name)"),
    (
        "bad_request",
        400,
        "the request is not HTTP/1.1 the server can read (a malformed request line or header; 414 for a request line over 64 KiB, 431 for a head of over 100 headers or about 400 KiB); the connection is closed",
    ),
    ("refused", 422, "the rules refuse the action; `violation` has the step, the rule and who may act"),
    ("conflict", 409, "expect_seq is not the game's next seq; `head` is the current head"),
    ("no_such_game", 404, "the game does not exist"),
    ("exists", 409, "a game of that name already exists"),
    ("broken", 422, "a record (an import, or a stored game) fails verification"),
    ("io", 500, "the store failed; nothing was acknowledged"),
    (
        "store_unavailable",
        503,
        "the store (a database) cannot be reached now; nothing was acknowledged: retry after Retry-After (an append at the same expected seq is safe)",
    ),
    ("lost", 500, "the store holds less than (or other than) a signed checkpoint says it held"),
    ("unauthorized", 401, "no token, or a token this server did not issue"),
    ("forbidden", 403, "the token's role may not do this"),
    ("too_large", 413, "the request body is over the limit"),
    ("busy", 503, "too many appends are waiting, or too many connections are open; retry shortly"),
    ("too_many_streams", 503, "too many live streams on this game or in all; retry later"),
    ("timeout", 408, "the request's body did not arrive in time; the connection is closed"),
    ("method_not_allowed", 405, "the route exists but not with this method; `Allow` lists those it has"),
    ("shutting_down", 503, "the server is shutting down and takes no more appends"),
    ("unhealthy", 503, "/health: a write to the store failed, or the store does not answer"),
    ("not_found", 404, "no such route"),
    ("internal", 500, "a bug in arbiter"),
];

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub body: Value,
}

impl ApiError {
    fn new(code: &str, message: impl Into<String>) -> ApiError {
        let status = CODES.iter().find(|(c, _, _)| *c == code).map_or(500, |(_, s, _)| *s);
        ApiError {
            status: StatusCode::from_u16(status).expect("a valid status"),
            body: json!({"error": {"code": code, "message": message.into()}}),
        }
    }
    pub fn unauthorized(message: impl Into<String>) -> ApiError {
        ApiError::new("unauthorized", message)
    }
    pub fn forbidden(message: impl Into<String>) -> ApiError {
        ApiError::new("forbidden", message)
    }
    pub fn input(message: impl Into<String>) -> ApiError {
        ApiError::from(RecordError::Input(message.into()))
    }
    pub fn too_large(limit: usize) -> ApiError {
        ApiError::new("too_large", format!("the request body is over {limit} bytes"))
    }
    pub fn busy() -> ApiError {
        ApiError::new("busy", "too many appends are waiting; retry shortly")
    }
    pub fn shutting_down() -> ApiError {
        ApiError::new("shutting_down", "the server is shutting down; nothing was stored")
    }
    pub fn unhealthy(message: impl Into<String>) -> ApiError {
        ApiError::new("unhealthy", message)
    }
    pub fn not_found() -> ApiError {
        ApiError::new("not_found", "no such route; see /openapi.json")
    }
    pub fn method_not_allowed() -> ApiError {
        ApiError::new("method_not_allowed", "this route does not take this method; see Allow and /openapi.json")
    }
    pub fn too_many_streams(message: impl Into<String>) -> ApiError {
        ApiError::new("too_many_streams", message)
    }
    pub fn timeout(message: impl Into<String>) -> ApiError {
        ApiError::new("timeout", message)
    }
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new("internal", message)
    }
}

impl From<RecordError> for ApiError {
    fn from(e: RecordError) -> ApiError {
        let mut err = ApiError::new(e.code(), "");
        err.body = e.to_json();
        err
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        // The request log and the metrics read the code from here, not the body.
        let refusal = Refusal::of(&self.body);
        let retry = retry_after(refusal.code);
        let mut response = (self.status, Json(self.body)).into_response();
        response.extensions_mut().insert(refusal);
        if let Some(seconds) = retry {
            response.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from_static(seconds));
        }
        response
    }
}

/// Retry-After, in seconds, of the 503s a client should retry: a cap
/// frees in a moment; a drain or a database that does not answer takes
/// longer (a restart, a failover).
fn retry_after(code: &str) -> Option<&'static str> {
    match code {
        "busy" => Some("1"),
        "shutting_down" | "store_unavailable" => Some("5"),
        _ => None,
    }
}

/// Every error answered in the one JSON body, including those axum and its
/// extractors answer themselves in plain text (a 405, a path segment that is
/// not UTF-8 after percent-decoding, a query that does not parse): their
/// text becomes the message, the status picks the code.
pub async fn json_errors(response: Response) -> Response {
    let status = response.status();
    let json =
        response.headers().get(header::CONTENT_TYPE).is_some_and(|t| t.as_bytes().starts_with(b"application/json"));
    if !(status.is_client_error() || status.is_server_error()) || json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    // axum's rejections are one short line; an error body is never streamed.
    let text = axum::body::to_bytes(body, 64 * 1024).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text).trim().to_string();
    let message = match text.is_empty() {
        true => status.canonical_reason().unwrap_or("error").to_string(),
        false => text,
    };
    let code = match status.as_u16() {
        401 => "unauthorized",
        403 => "forbidden",
        404 => "not_found",
        405 => "method_not_allowed",
        408 => "timeout",
        413 => "too_large",
        503 => "busy",
        s if s < 500 => "input",
        _ => "internal",
    };
    let body = json!({"error": {"code": code, "message": message}});
    // The request log and the metrics read the code from here (see `into_response`).
    parts.extensions.insert(Refusal::of(&body));
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(header::CONTENT_TYPE, header::HeaderValue::from_static("application/json"));
    Response::from_parts(parts, Body::from(body.to_string()))
}

/// The code and message of an error answer, put beside the response by
/// `ApiError::into_response`, so that the log and the metrics need not read
/// the body back.
#[derive(Debug, Clone)]
pub struct Refusal {
    pub code: &'static str,
    pub message: String,
}

impl Refusal {
    /// From an error body `{"error": {"code", "message"}}`.
    pub fn of(body: &Value) -> Refusal {
        let code = body["error"]["code"].as_str().unwrap_or_default();
        let code = CODES.iter().find(|(c, _, _)| *c == code).map_or("internal", |(c, _, _)| c);
        Refusal { code, message: body["error"]["message"].as_str().unwrap_or_default().to_string() }
    }
}
