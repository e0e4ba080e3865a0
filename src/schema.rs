//! JSON Schema for the event envelope, the header and every ruleset's
//! payloads, generated from the Rust types that parse them, so the schema
//! cannot drift from the code (a test checks the committed files).

use schemars::schema_for;
use serde_json::Value;

use crate::event::{Event, Header};
use crate::rules::{doomtrooper, gurps, rawdeal, riftbound, wtactics};

/// (path under schemas/, schema) for every committed schema file.
pub fn all() -> Vec<(&'static str, Value)> {
    vec![
        ("event.schema.json", serde_json::to_value(schema_for!(Event)).expect("schema")),
        ("open.schema.json", serde_json::to_value(schema_for!(Header)).expect("schema")),
        ("move.schema.json", serde_json::to_value(schema_for!(crate::kernel::Move)).expect("schema")),
        ("ruling.schema.json", serde_json::to_value(schema_for!(crate::adjudication::Adjudication)).expect("schema")),
        ("doomtrooper/action.schema.json", serde_json::to_value(schema_for!(doomtrooper::Action)).expect("schema")),
        ("doomtrooper/board.schema.json", serde_json::to_value(schema_for!(doomtrooper::Board)).expect("schema")),
        ("wtactics/action.schema.json", serde_json::to_value(schema_for!(wtactics::Action)).expect("schema")),
        ("wtactics/board.schema.json", serde_json::to_value(schema_for!(wtactics::Board)).expect("schema")),
        ("gurps/action.schema.json", serde_json::to_value(schema_for!(gurps::Action)).expect("schema")),
        ("gurps/board.schema.json", serde_json::to_value(schema_for!(gurps::Board)).expect("schema")),
        ("rawdeal/action.schema.json", serde_json::to_value(schema_for!(rawdeal::Action)).expect("schema")),
        ("rawdeal/board.schema.json", serde_json::to_value(schema_for!(rawdeal::Board)).expect("schema")),
        ("riftbound/action.schema.json", serde_json::to_value(schema_for!(riftbound::Action)).expect("schema")),
        ("riftbound/board.schema.json", serde_json::to_value(schema_for!(riftbound::Board)).expect("schema")),
        // Not a JSON Schema but written from the same types: the HTTP API.
        ("openapi.json", crate::server::routes::openapi()),
    ]
}

/// The schema text as committed (pretty, with a final newline).
pub fn render(schema: &Value) -> String {
    serde_json::to_string_pretty(schema).expect("schema") + "\n"
}
