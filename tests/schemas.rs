//! The committed JSON Schemas are current, and real events validate
//! against them (scenario tests validate every event they produce too).

mod common;

use arbiter::schema;
use common::*;

#[test]
fn committed_schemas_are_current() {
    for (path, value) in schema::all() {
        let committed = std::fs::read_to_string(repo_file("schemas").join(path)).unwrap_or_default();
        assert!(committed == schema::render(&value), "schemas/{path} is stale: run `cargo run -- schema`");
    }
}

#[test]
fn the_sample_games_validate_event_by_event() {
    let dir = tempfile::tempdir().unwrap();
    for ruleset in ["doomtrooper", "wtactics", "riftbound", "rawdeal", "gurps"] {
        let out = arbiter(dir.path(), &["demo", "--ruleset", ruleset, "--as", ruleset]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let out = arbiter(dir.path(), &["export", ruleset]);
        let text = String::from_utf8(out.stdout).unwrap();
        let mut n = 0;
        for line in text.lines() {
            let (event, _) = arbiter::event::decode(line).unwrap();
            assert_schema_valid_for(ruleset, &event);
            n += 1;
        }
        assert!(n > 10, "{ruleset}: {n} events");
    }
}

#[test]
fn the_schemas_refuse_what_the_reducer_refuses_to_parse() {
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo_file("schemas/doomtrooper/action.schema.json")).unwrap())
            .unwrap();
    let v = jsonschema::validator_for(&s).unwrap();
    assert!(v.is_valid(&serde_json::json!({"type": "pass"})));
    assert!(!v.is_valid(&serde_json::json!({"type": "pass", "x": 1})));
    assert!(!v.is_valid(&serde_json::json!({"type": "counter", "card": "Cancel"})));
    assert!(!v.is_valid(&serde_json::json!({"type": "play", "effect": "modify"})));
}
