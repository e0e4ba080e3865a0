//! JSON Schema for the event envelope, the header and every ruleset's
//! payloads, generated from the Rust types that parse them, so the schema
//! cannot drift from the code (a test checks the committed files).

use schemars::schema_for;
use serde_json::Value;

use crate::event::{Event, Header};
use crate::rules::Kind;

/// (path under schemas/, schema) for every committed schema file.
pub fn all() -> Vec<(String, Value)> {
    let mut all: Vec<(String, Value)> = kernel().into_iter().map(|(p, v)| (p.to_string(), v)).collect();
    all.extend(Kind::ALL.iter().flat_map(|k| k.schemas()));
    // Not a JSON Schema but written from the same types: the HTTP API.
    all.push(("openapi.json".into(), crate::server::routes::openapi()));
    all
}

/// The schemas of the kernel's types: the envelope, the header, rulings, moves.
fn kernel() -> Vec<(&'static str, Value)> {
    vec![
        ("event.schema.json", serde_json::to_value(schema_for!(Event)).expect("schema")),
        ("open.schema.json", serde_json::to_value(schema_for!(Header)).expect("schema")),
        ("move.schema.json", serde_json::to_value(schema_for!(crate::kernel::Move)).expect("schema")),
        ("ruling.schema.json", serde_json::to_value(schema_for!(crate::adjudication::Adjudication)).expect("schema")),
    ]
}

/// The schema text as committed (pretty, with a final newline).
pub fn render(schema: &Value) -> String {
    serde_json::to_string_pretty(schema).expect("schema") + "\n"
}
