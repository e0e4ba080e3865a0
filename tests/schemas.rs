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
fn the_sample_boards_validate_at_every_seq() {
    let dir = tempfile::tempdir().unwrap();
    for ruleset in ["doomtrooper", "wtactics", "riftbound", "rawdeal", "gurps"] {
        let out = arbiter(dir.path(), &["demo", "--ruleset", ruleset, "--as", ruleset]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let out = arbiter(dir.path(), &["export", ruleset]);
        let events: Vec<arbiter::event::Event> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|line| arbiter::event::decode(line).unwrap().0)
            .collect();
        let mut folder = arbiter::fold::Folder::new();
        let mut validator = None;
        for event in &events {
            folder.push(event, &events).unwrap();
            // A ruleset without a board yet shows its raw state: nothing to validate.
            let Some(board) = folder.table().unwrap().board() else { continue };
            let v = validator.get_or_insert_with(|| {
                let path = repo_file("schemas").join(ruleset).join("board.schema.json");
                let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
                jsonschema::validator_for(&schema).unwrap()
            });
            let board = serde_json::to_value(&board).unwrap();
            if let Err(e) = v.validate(&board) {
                panic!("{ruleset}: the board after seq {} does not match its schema: {e}: {board}", event.seq);
            }
        }
        let has_board = ruleset != "riftbound";
        assert!(!has_board || validator.is_some(), "{ruleset} has a board");
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
