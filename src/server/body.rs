//! Reading a request: its JSON body (parsed strictly, like every other
//! input), its raw body under a limit, and numbers in its query string.
//! Every handler reads its input through these, so every bad request gets
//! the same JSON error body.

use std::collections::HashMap;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use serde::de::DeserializeOwned;

use super::ApiError;
use crate::json::parse_strict;
use crate::limits::MAX_REQUEST_BYTES;

/// A JSON request body, parsed strictly (no floats, no duplicate keys,
/// no unknown fields) like every other input.
pub fn json_body<T: DeserializeOwned>(body: Result<Bytes, BytesRejection>) -> Result<T, ApiError> {
    let bytes = raw_body(body, MAX_REQUEST_BYTES)?;
    let text = std::str::from_utf8(&bytes).map_err(|_| ApiError::input("the body is not UTF-8"))?;
    let value = parse_strict(text).map_err(|e| ApiError::input(format!("the body is not valid JSON: {}", e.0)))?;
    serde_json::from_value(value).map_err(|e| ApiError::input(format!("the body does not fit the request: {e}")))
}

pub fn raw_body(body: Result<Bytes, BytesRejection>, limit: usize) -> Result<Bytes, ApiError> {
    body.map_err(|e| match e {
        BytesRejection::FailedToBufferBody(_) if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE => {
            ApiError::too_large(limit)
        }
        e if timed_out(&e) => ApiError::timeout(format!("{e}; the connection is closed")),
        e => ApiError::input(format!("cannot read the body: {e}")),
    })
}

/// An unsigned number from the query string, if given.
pub fn query_num(q: &HashMap<String, String>, key: &str) -> Result<Option<u64>, ApiError> {
    q.get(key)
        .map(|v| v.parse::<u64>().map_err(|_| ApiError::input(format!("{key} must be an unsigned integer, not {v:?}"))))
        .transpose()
}

/// The body stopped arriving before its deadline (`connection::BodyTimeout`).
fn timed_out(e: &BytesRejection) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(e) = source {
        if e.is::<super::connection::BodyTimeout>() {
            return true;
        }
        source = e.source();
    }
    false
}
