//! The committed JSON Schemas are current, and real events validate
//! against them (scenario tests validate every event they produce too).

mod common;

use arbiter::schema;
use common::*;

#[test]
fn committed_schemas_are_current() {
    for (path, value) in schema::all() {
        let committed = std::fs::read_to_string(repo_file("schemas").join(&path)).unwrap_or_default();
        assert!(committed == schema::render(&value), "schemas/{path} is stale: run `cargo run -- schema`");
    }
}

#[test]
fn the_sample_games_validate_event_by_event() {
    let dir = tempfile::tempdir().unwrap();
    for ruleset in arbiter::rules::Kind::ALL.iter().map(|k| k.name()) {
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

/// A board is what `state --json` shows under `board`: for every ruleset
/// with a board schema, the board after every event of its sample matches it.
#[test]
fn every_board_of_the_samples_validates_against_its_schema() {
    let dir = tempfile::tempdir().unwrap();
    for ruleset in arbiter::rules::Kind::ALL.iter().map(|k| k.name()) {
        let path = repo_file("schemas").join(ruleset).join("board.schema.json");
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let validator = jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).unwrap();
        let out = arbiter(dir.path(), &["demo", "--ruleset", ruleset, "--as", ruleset]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let out = arbiter(dir.path(), &["export", ruleset]);
        let events: Vec<arbiter::event::Event> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|line| arbiter::event::decode(line).unwrap().0)
            .collect();
        let mut folder = arbiter::fold::Folder::new();
        for event in &events {
            folder.push(event, &events).unwrap_or_else(|e| panic!("{ruleset} seq {}: {e:?}", event.seq));
            let board = serde_json::to_value(folder.table().unwrap().board()).unwrap();
            assert!(board.is_object(), "{ruleset} has a board schema, so a board");
            if let Err(e) = validator.validate(&board) {
                panic!("{ruleset}: the board after seq {} does not match its schema: {e}\n{board}", event.seq);
            }
        }
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
