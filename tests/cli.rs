//! The `arbiter` binary as a user meets it: every kind of bad input gets a
//! clear error, the right exit code, and leaves the head hash unchanged.

mod common;

use std::path::Path;

use common::*;

fn new_game(data: &Path, game: &str) {
    let out = arbiter(
        data,
        &[
            "new",
            game,
            "--ruleset",
            "doomtrooper",
            "--seat",
            "p1=Alice",
            "--seat",
            "p2=Bob",
            "--judge",
            "Dana",
            "--tournament",
            "Open",
            "--round",
            "2",
            "--table",
            "7",
        ],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn head(data: &Path, game: &str) -> String {
    let out = arbiter(data, &["head", game]);
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[track_caller]
fn refused_unchanged(data: &Path, args: &[&str], code: i32, says: &str) {
    let before = head(data, "g");
    let out = arbiter(data, args);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
    assert!(stderr(&out).contains(says), "{args:?} said: {}", stderr(&out));
    assert_eq!(head(data, "g"), before, "{args:?} changed the head");
}

#[test]
fn bad_input_of_every_kind_is_refused_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    new_game(d, "g");
    let ok = arbiter(
        d,
        &[
            "append",
            "g",
            "--actor",
            "p1",
            "--expect-seq",
            "1",
            r#"{"type":"announce","what":"combat","defending_player":"p2","attacker":"A","defender":"D"}"#,
        ],
    );
    assert!(ok.status.success(), "{}", stderr(&ok));
    let app = |action: &'static str| ["append", "g", "--actor", "p1", action];
    refused_unchanged(d, &app(r#"{"type":"announce","what":"#), 1, "malformed JSON");
    refused_unchanged(d, &app(r#"{"type":"teleport"}"#), 1, "unknown action type");
    refused_unchanged(
        d,
        &app(r#"{"type":"announce","what":"battle_tactic","tactic":"Fight","tactic":"Shoot"}"#),
        1,
        "duplicate key",
    );
    refused_unchanged(d, &app(r#"{"type":"announce","what":"battle_tactic","tactic":1.0}"#), 1, "floating-point");
    refused_unchanged(
        d,
        &app(r#"{"type":"announce","what":"battle_tactic","tactic":"Fight","n":9007199254740993}"#),
        1,
        "2^53",
    );
    refused_unchanged(d, &app(r#"["not an object"]"#), 1, "JSON object");
    refused_unchanged(d, &["append", "g", "--actor", "p9", r#"{"type":"pass"}"#], 1, "unknown actor");
    refused_unchanged(
        d,
        &["append", "g", "--actor", "p2", r#"{"type":"announce","what":"battle_tactic","tactic":"Fight"}"#],
        1,
        "only p1 acts",
    );
    refused_unchanged(
        d,
        &[
            "append",
            "g",
            "--actor",
            "p1",
            "--expect-seq",
            "1",
            r#"{"type":"announce","what":"battle_tactic","tactic":"Fight"}"#,
        ],
        1,
        "conflict",
    );
    let big = format!(r#"{{"type":"announce","what":"battle_tactic","tactic":"{}"}}"#, "x".repeat(2000));
    let before = head(d, "g");
    let out = arbiter(d, &["append", "g", "--actor", "p1", &big]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("longer than"), "{}", stderr(&out));
    let many: Vec<String> = (0..40).map(|i| format!("{{\"k{i}\":\"{}\"}}", "y".repeat(1000))).collect();
    let huge = format!(r#"{{"type":"announce","what":"equipment","items":[],"pad":[{}]}}"#, many.join(","));
    let out = arbiter(d, &["append", "g", "--actor", "p1", &huge]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("bytes; the limit is"), "{}", stderr(&out));
    assert_eq!(head(d, "g"), before);
    // A refusal names the step, the rule and who may act.
    let out = arbiter(d, &["append", "g", "--actor", "p1", r#"{"type":"play","effect":"modify","card":"Stimulants"}"#]);
    let err = stderr(&out);
    assert!(
        err.contains("at:   Doomtrooper step 2")
            && err.contains("rule:")
            && err.contains("may act now: p1")
            && err.contains("nothing was stored"),
        "{err}"
    );
    // Usage and I/O errors exit 2; a refused header exits 1.
    let code = |args: &[&str]| arbiter(d, args).status.code();
    assert_eq!(code(&["append", "nosuch", "--actor", "p1", r#"{"type":"pass"}"#]), Some(2));
    assert_eq!(code(&["frobnicate"]), Some(2));
    for (game, ruleset, second_seat) in
        [("bad name!", "doomtrooper", "p2=B"), ("h", "chess", "p2=B"), ("h", "doomtrooper", "p1=B")]
    {
        assert_eq!(
            code(&["new", game, "--ruleset", ruleset, "--seat", "p1=A", "--seat", second_seat]),
            Some(1),
            "{game} {ruleset} {second_seat}"
        );
    }
    assert_eq!(arbiter(d, &["games"]).stdout, b"g\n");
}

#[test]
fn stdin_batches_are_checked_whole_before_anything_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    new_game(d, "g");
    let before = head(d, "g");
    let lines = concat!(
        r#"{"actor":"p1","action":{"type":"announce","what":"combat","defending_player":"p2","attacker":"A","defender":"D"}}"#,
        "\n",
        r#"{"actor":"p1","action":{"type":"announce","what":"battle_tactic","tactic":"Fight"}}"#,
        "\n",
        r#"{"actor":"p1","action":{"type":"pass"}}"#,
        "\n",
    );
    let out = arbiter_stdin(d, &["append", "g", "-"], lines);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("stdin line 3"), "{}", stderr(&out));
    assert_eq!(head(d, "g"), before, "line 3 was illegal: lines 1 and 2 must not be stored either");
    let good =
        lines.replace(r#"{"actor":"p1","action":{"type":"pass"}}"#, r#"{"actor":"p2","action":{"type":"pass"}}"#);
    let out = arbiter_stdin(d, &["append", "g", "-"], &good);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(head(d, "g").starts_with("3 "));
    let out = arbiter_stdin(d, &["append", "g", "-"], "{\"actor\":\"p1\",\"action\":{\"type\":\"pass\"},\"x\":1}\n");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn state_shows_the_step_who_may_act_and_what_is_legal() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    new_game(d, "g");
    arbiter(
        d,
        &[
            "append",
            "g",
            "--actor",
            "p1",
            r#"{"type":"announce","what":"combat","defending_player":"p2","attacker":"A","defender":"D"}"#,
        ],
    );
    arbiter(d, &["append", "g", "--actor", "p1", r#"{"type":"announce","what":"battle_tactic","tactic":"Fight"}"#]);
    let out = arbiter(d, &["--json", "state", "g"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["step"]["reference"], "Doomtrooper steps 3-6 (ANNOUNCE BATTLE TACTIC)");
    assert_eq!(v["may_act"], serde_json::json!(["p2"]));
    assert_eq!(v["legal"], serde_json::json!(["counter", "pass"]));
    assert_eq!(v["seq"], 2);
    let out = arbiter(d, &["--json", "state", "g", "--at", "1"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["step"]["number"], "2");
    assert_eq!(arbiter(d, &["state", "g", "--at", "9"]).status.code(), Some(1));
    let log = String::from_utf8(arbiter(d, &["log", "g"]).stdout).unwrap();
    assert_eq!(log.lines().count(), 3);
    assert!(log.contains("announce battle_tactic tactic=Fight"), "{log}");
}

/// An export of the sample, via the demo.
fn sample_export(d: &Path) -> String {
    let out = arbiter(d, &["demo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let file = d.join("sample.jsonl");
    let out = arbiter(d, &["export", "sample", "-o", file.to_str().unwrap()]);
    assert!(out.status.success());
    std::fs::read_to_string(file).unwrap()
}

#[test]
fn export_verify_file_and_import_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = sample_export(d);
    let file = d.join("sample.jsonl");
    let f = file.to_str().unwrap();
    let head_hash = head(d, "sample").split_whitespace().nth(1).unwrap().to_string();
    assert!(arbiter(d, &["verify-file", f, "--head", &head_hash]).status.success());
    assert_eq!(arbiter(d, &["verify-file", f, "--head", &"0".repeat(64)]).status.code(), Some(1));
    assert!(arbiter(d, &["verify", "--all"]).status.success());
    let out = arbiter(d, &["import", f, "--as", "copy"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(head(d, "copy"), head(d, "sample"));
    let copy = String::from_utf8(arbiter(d, &["export", "copy"]).stdout).unwrap();
    assert_eq!(copy, text, "import then export is byte for byte");
    // Importing over an existing game is refused.
    assert_eq!(arbiter(d, &["import", f, "--as", "copy"]).status.code(), Some(1));
}

#[test]
fn tampered_truncated_and_reordered_imports_are_refused_and_store_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = sample_export(d);
    let lines: Vec<&str> = text.lines().collect();
    let cases: Vec<(&str, String, &str)> = vec![
        ("tampered", text.replacen("\"Fight\"", "\"Shoot\"", 1), "seq 2: line 3: hash does not match"),
        ("truncated", lines[..lines.len() - 1].join("\n") + "\n" + &lines[lines.len() - 1][..40], "malformed"),
        (
            "reordered",
            {
                let mut l = lines.clone();
                l.swap(5, 6);
                l.join("\n") + "\n"
            },
            "seq 5",
        ),
        (
            "dropped",
            {
                let mut l = lines.clone();
                l.remove(4);
                l.join("\n") + "\n"
            },
            "seq 4",
        ),
        ("empty", String::new(), "empty"),
        ("float", lines[0].replacen("\"round\":3", "\"round\":3.0", 1), "floating-point"),
        ("dupkey", lines[0].replacen("{", "{\"v\":1,", 1), "duplicate key"),
    ];
    for (name, content, says) in cases {
        let file = d.join(format!("{name}.jsonl"));
        std::fs::write(&file, &content).unwrap();
        let f = file.to_str().unwrap();
        let out = arbiter(d, &["verify-file", f]);
        assert_eq!(out.status.code(), Some(1), "{name}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{name}: {}", stderr(&out));
        let out = arbiter(d, &["import", f]);
        assert_eq!(out.status.code(), Some(1), "{name}");
        assert_eq!(arbiter(d, &["games"]).stdout, b"sample\n", "{name} stored something");
    }
}

#[test]
fn every_ruleset_is_selectable_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let code = |args: &[&str]| arbiter(d, args).status.code();
    assert_eq!(code(&["new", "w", "--ruleset", "wtactics", "--seat", "p1=A", "--seat", "p2=B"]), Some(0));
    assert_eq!(
        code(&["new", "d", "--ruleset", "rawdeal", "--seat", "p1=A", "--seat", "p2=B", "--option", "rounding=down"]),
        Some(0)
    );
    assert_eq!(
        code(&[
            "new",
            "d2",
            "--ruleset",
            "rawdeal",
            "--seat",
            "p1=A",
            "--seat",
            "p2=B",
            "--option",
            "rounding=sideways"
        ]),
        Some(1)
    );
    assert_eq!(code(&["new", "g", "--ruleset", "gurps", "--seat", "p1=A"]), Some(1), "GURPS needs a GM");
    assert_eq!(code(&["new", "g", "--ruleset", "gurps", "--seat", "p1=A", "--judge", "GM"]), Some(0));
    let r = ["new", "r", "--ruleset", "riftbound", "--seat", "p1=A", "--seat", "p2=B", "--option", "mode=1v1"];
    assert_eq!(code(&r), Some(1), "battlefields are required");
    let mut r = r.to_vec();
    r.extend(["--option", r#"battlefields=["Altar","Forge"]"#]);
    assert_eq!(code(&r), Some(0));
    let out = arbiter(
        d,
        &[
            "append",
            "r",
            "--actor",
            "p1",
            r#"{"type":"announce","what":"move","units":[{"name":"Imp","might":1}],"to":"Altar"}"#,
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("it is no one's turn"), "{}", stderr(&out));
    let out = arbiter(d, &["--json", "state", "r"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["state"]["battlefields"]["Forge"]["controller"], serde_json::Value::Null);
    assert_eq!(v["legal"], serde_json::json!(["announce"]));
}
