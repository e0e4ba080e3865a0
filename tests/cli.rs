//! The `arbiter` binary as a user meets it: every kind of bad input gets a
//! clear error, the right exit code, and leaves the head hash unchanged.

mod common;

use std::path::Path;

use common::*;
use serde_json::{Value, json};

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
    // Input that is not an action at all (malformed, duplicate keys, floats,
    // integers past 2^53, not an object) is a usage error: exit 2, as the README says.
    refused_unchanged(d, &app(r#"{"type":"announce","what":"#), 2, "malformed JSON");
    refused_unchanged(d, &app(r#"{"type":"teleport"}"#), 1, "unknown action type");
    refused_unchanged(
        d,
        &app(r#"{"type":"announce","what":"battle_tactic","tactic":"Fight","tactic":"Shoot"}"#),
        2,
        "duplicate key",
    );
    refused_unchanged(d, &app(r#"{"type":"announce","what":"battle_tactic","tactic":1.0}"#), 2, "floating-point");
    refused_unchanged(
        d,
        &app(r#"{"type":"announce","what":"battle_tactic","tactic":"Fight","n":9007199254740993}"#),
        2,
        "2^53",
    );
    refused_unchanged(d, &app(r#"["not an object"]"#), 2, "JSON object");
    refused_unchanged(d, &["append", "g", "--actor", "p9", r#"{"type":"pass"}"#], 1, "unknown actor");
    refused_unchanged(
        d,
        &["append", "g", "--actor", "p2", r#"{"type":"announce","what":"battle_tactic","tactic":"Fight"}"#],
        1,
        "only Alice (p1) acts",
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
    assert_eq!(out.status.code(), Some(2), "over a limit: bad input");
    assert!(stderr(&out).contains("longer than"), "{}", stderr(&out));
    let many: Vec<String> = (0..40).map(|i| format!("{{\"k{i}\":\"{}\"}}", "y".repeat(1000))).collect();
    let huge = format!(r#"{{"type":"announce","what":"equipment","items":[],"pad":[{}]}}"#, many.join(","));
    let out = arbiter(d, &["append", "g", "--actor", "p1", &huge]);
    assert_eq!(out.status.code(), Some(2), "over the event size limit: bad input");
    assert!(stderr(&out).contains("bytes; the limit is"), "{}", stderr(&out));
    assert_eq!(head(d, "g"), before);
    // A refusal names the step, the rule and who may act.
    let out = arbiter(d, &["append", "g", "--actor", "p1", r#"{"type":"play","effect":"modify","card":"Stimulants"}"#]);
    let err = stderr(&out);
    assert!(
        err.contains("at:   Doomtrooper step 2")
            && err.contains("rule:")
            && err.contains("may act now: Alice (p1)")
            && err.contains("nothing was stored"),
        "{err}"
    );
    // Usage, bad input and I/O errors exit 2; a refused header exits 1.
    let code = |args: &[&str]| arbiter(d, args).status.code();
    assert_eq!(code(&["append", "nosuch", "--actor", "p1", r#"{"type":"pass"}"#]), Some(2));
    assert_eq!(code(&["frobnicate"]), Some(2));
    assert_eq!(code(&["new", "bad name!", "--ruleset", "doomtrooper", "--seat", "p1=A", "--seat", "p2=B"]), Some(2));
    // A ruleset arbiter does not know is a bad argument (clap lists the five);
    // a header the rules refuse (two seats p1) exits 1.
    assert_eq!(code(&["new", "h", "--ruleset", "chess", "--seat", "p1=A", "--seat", "p2=B"]), Some(2));
    assert_eq!(code(&["new", "h", "--ruleset", "doomtrooper", "--seat", "p1=A", "--seat", "p1=B"]), Some(1));
    assert_eq!(
        code(&["new", "h", "--ruleset", "doomtrooper", "--ruleset-version", "9", "--seat", "p1=A", "--seat", "p2=B"]),
        Some(1)
    );
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
    assert_eq!(out.status.code(), Some(2), "an unknown field: bad input");
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
    assert_eq!(arbiter(d, &["state", "g", "--at", "9"]).status.code(), Some(2), "a seq past the head: a bad argument");
    let log = String::from_utf8(arbiter(d, &["log", "g"]).stdout).unwrap();
    assert_eq!(log.lines().count(), 3);
    assert!(log.contains("battle tactic Fight"), "{log}");
    // In words, `state` lists each actor's moves: here Bob may counter the battle tactic (seq 2).
    let text = String::from_utf8(arbiter(d, &["state", "g"]).stdout).unwrap();
    assert!(text.contains("Bob (p2) may: pass · counter battle tactic Fight (seq 2) by Alice (p1)"), "{text}");
}

#[test]
fn a_refusal_says_what_the_actor_may_do_instead_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    new_game(d, "g");
    let combat = r#"{"type":"announce","what":"combat","defending_player":"p2","attacker":"A","defender":"D"}"#;
    assert!(arbiter(d, &["append", "g", "--actor", "p1", combat]).status.success());
    let before = head(d, "g");
    // p1 passes where the battle tactic is owed.
    let out = arbiter(d, &["--json", "append", "g", "--actor", "p1", r#"{"type":"pass"}"#]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["violation"]["offered"], json!(["announce battle tactic"]), "{v}");
    let out = arbiter(d, &["append", "g", "--actor", "p1", r#"{"type":"pass"}"#]);
    assert!(stderr(&out).contains("you may: announce battle tactic"), "{}", stderr(&out));
    assert_eq!(head(d, "g"), before, "a refusal stored nothing");
    // Out of turn: p2 has no move here, so nothing is offered, and who may act is said.
    let out = arbiter(d, &["--json", "append", "g", "--actor", "p2", r#"{"type":"pass"}"#]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["error"]["violation"].get("offered").is_none(), "{v}");
    assert_eq!(v["error"]["violation"]["may_act"], json!(["p1"]));
    assert_eq!(head(d, "g"), before, "a refusal stored nothing");
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

/// The text writes the modes "1v1", "FFA3/FFA4" and "2v2": its
/// spelling is accepted, and so is the lower case accepted before.
#[test]
fn riftbound_modes_are_taken_as_the_text_writes_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let new = |game: &str, mode: &str, seats: &[&str]| {
        let mut args = vec!["new", game, "--ruleset", "riftbound"];
        for s in seats {
            args.extend(["--seat", s]);
        }
        let mode = format!("mode={mode}");
        args.extend(["--option", &mode, "--option", r#"battlefields=["Altar"]"#]);
        arbiter(d, &args)
    };
    let three = ["p1=A", "p2=B", "p3=C"];
    let four = ["p1=A", "p2=B", "p3=C", "p4=D"];
    for (game, mode, seats) in [("a", "FFA3", &three[..]), ("b", "FFA4", &four[..]), ("c", "ffa3", &three[..])] {
        let out = new(game, mode, seats);
        assert_eq!(out.status.code(), Some(0), "{mode}: {}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&arbiter(d, &["--json", "state", game]).stdout).unwrap();
        assert_eq!(v["state"]["victory_score"], 8, "{mode}");
        assert_eq!(v["board"]["scores"].as_array().map(Vec::len), Some(seats.len()), "{mode}");
    }
    let out = new("d", "FFA5", &four);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("1v1, FFA3, FFA4 or 2v2"), "{}", stderr(&out));
}

/// Penalties and notes made before a rewind stand, and `state` shows
/// them (and the judges, and the order of priority by name).
#[test]
fn state_shows_penalties_notes_and_priority_that_stand_across_a_rewind() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    new_game(d, "g");
    let append = |actor: &str, action: &str| {
        let out = arbiter(d, &["append", "g", "--actor", actor, action]);
        assert!(out.status.success(), "{}", stderr(&out));
    };
    append("p1", r#"{"type":"announce","what":"combat","defending_player":"p2","attacker":"A","defender":"D"}"#);
    append("p1", r#"{"type":"announce","what":"battle_tactic","tactic":"Fight"}"#);
    append("p2", r#"{"type":"counter","card":"Nullify","target":2}"#);
    let ok = |args: &[&str]| {
        let out = arbiter(d, args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    };
    ok(&[
        "penalty",
        "g",
        "--judge",
        "Dana",
        "--reason",
        "illegal counter",
        "--concerns",
        "3",
        "--seat",
        "p2",
        "--infraction",
        "game rule violation",
        "--penalty",
        "warning",
        "--fix",
        "rewind",
    ]);
    ok(&["note", "g", "--actor", "p1", "--concerns", "3", "p2 insisted"]);
    ok(&["rewind", "g", "--judge", "Dana", "--to", "2", "--reason", "Nullify is not legal here"]);
    let out = arbiter(d, &["--json", "state", "g"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["penalties"][0]["seat"], "p2", "{v}");
    assert_eq!(v["notes"][0]["text"], "p2 insisted", "{v}");
    assert_eq!(v["priority"], serde_json::json!(["p2", "p1"]));
    let text = String::from_utf8(arbiter(d, &["state", "g"]).stdout).unwrap();
    assert!(text.contains("order of priority: Bob (p2), Alice (p1)"), "{text}");
    assert!(text.contains("penalty (seq 4, about seq 3): warning for Bob (p2): game rule violation"), "{text}");
    assert!(text.contains("note (seq 5, about seq 3) by Alice (p1): p2 insisted"), "{text}");
    // The rulings that stand: the penalty (listed as one) and the rewind.
    let kinds: Vec<&str> = v["rulings"].as_array().unwrap().iter().map(|r| r["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["penalty", "rewind"], "{v}");
    assert!(text.contains("ruling (seq 6) by Dana: rewind to after seq 2: Nullify is not legal here"), "{text}");
    let replay = String::from_utf8(arbiter(d, &["replay", "g"]).stdout).unwrap();
    let penalty_line = replay.lines().find(|l| l.contains("penalty")).expect("penalty in the replay");
    assert!(!penalty_line.contains("REWOUND"), "{penalty_line}");
}

/// Only judges supply `at` (transcribing a paper record), and never
/// later than the store's clock plus a small skew; a refusal stores nothing.
#[test]
fn only_a_judge_supplies_at_and_never_in_the_future() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    new_game(d, "g");
    let combat = r#"{"type":"announce","what":"combat","defending_player":"p2","attacker":"A","defender":"D"}"#;
    let args = |actor: &'static str, at: &'static str| ["append", "g", "--actor", actor, "--at", at, combat];
    refused_unchanged(d, &args("p1", "2026-01-01T00:00:00Z"), 1, "only a judge supplies an event's time");
    refused_unchanged(d, &args("p1", "2099-01-01T00:00:00Z"), 1, "only a judge");
    let h0 = head(d, "g");
    let hash0 = h0.split_whitespace().nth(1).unwrap();
    let note_action = format!(r#"{{"type":"note","concerns":{{"seq":0,"hash":"{hash0}"}},"text":"paper record"}}"#);
    let future = ["append", "g", "--actor", "Dana", "--at", "2099-01-01T00:00:00Z", note_action.as_str()];
    refused_unchanged(d, &future, 2, "later than the store's clock");
    // A judge transcribing a time not later than the clock is accepted (here the
    // time of event 0: times never go backwards).
    let v: serde_json::Value = serde_json::from_slice(&arbiter(d, &["--json", "head", "g"]).stdout).unwrap();
    let at = v["at"].as_str().unwrap();
    let past = ["append", "g", "--actor", "Dana", "--at", at, note_action.as_str()];
    let out = arbiter(d, &past);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn completions_and_man_pages_come_from_the_argument_definitions() {
    let dir = tempfile::tempdir().unwrap();
    // The script a shell sources parses, and calls arbiter back at each Tab.
    for shell in ["bash", "zsh", "fish"] {
        let out = arbiter(dir.path(), &["completions", shell]);
        assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).contains("COMPLETE="), "{shell}");
    }
    let out = arbiter(dir.path(), &["completions", "bash"]);
    let script = dir.path().join("arbiter.bash");
    std::fs::write(&script, &out.stdout).unwrap();
    let check = std::process::Command::new("bash").arg("-n").arg(&script).output().unwrap();
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
    // What bash offers at a Tab after `words` (the last one is being typed),
    // through the sourced script as an interactive shell would call it.
    let tab = |words: &[&str]| -> Vec<String> {
        let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
        let call = format!(
            "source '{}'; COMP_WORDS=(arbiter {}); COMP_CWORD={}; _clap_complete_arbiter arbiter '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display(),
            quoted.join(" "),
            words.len(),
            words.last().unwrap(),
            if words.len() > 1 { words[words.len() - 2] } else { "arbiter" },
        );
        let out = std::process::Command::new("bash").arg("-c").arg(call).current_dir(dir.path()).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().lines().filter(|l| !l.is_empty()).map(String::from).collect()
    };
    for verb in ["append", "replay"] {
        assert!(tab(&[""]).contains(&verb.to_string()), "the verbs complete");
    }
    assert!(tab(&["new", "g", "--ruleset", "doo"]).contains(&"doomtrooper".to_string()));
    assert!(tab(&["log", "--hide"]).contains(&"--hide-passes".to_string()));
    // Game names complete for every verb that takes one, from the store the
    // line names (here the one `arbiter` makes in `dir`); a Tab on a
    // directory with no store creates none.
    assert!(arbiter(dir.path(), &["demo"]).status.success());
    let data = dir.path().to_str().unwrap();
    for verb in [
        "log",
        "state",
        "head",
        "moves",
        "append",
        "record",
        "replay",
        "whatif",
        "diff",
        "verify",
        "export",
        "fork",
        "rewind",
        "decide",
        "penalty",
        "note",
        "add-judge",
        "prove",
        "access",
    ] {
        assert_eq!(tab(&["--data", data, verb, "sam"]), ["sample"], "{verb}");
    }
    assert_eq!(tab(&["--data", data, "diff", "sample", "sam"]), ["sample"], "diff's second record");
    assert_eq!(tab(&["--data", data, "token", "list", "sam"]), ["sample"]);
    let none = dir.path().join("no-store");
    let offered = tab(&["--data", none.to_str().unwrap(), "log", ""]);
    assert!(offered.iter().all(|w| w.starts_with("--")), "only flags, no games: {offered:?}");
    assert!(!none.exists(), "a Tab created a store");
    // Man pages: one for arbiter and one per verb, in roff.
    let man = dir.path().join("man");
    assert!(arbiter(dir.path(), &["man", "--dir", man.to_str().unwrap()]).status.success());
    let page = std::fs::read_to_string(man.join("arbiter-new.1")).unwrap();
    assert!(page.starts_with(".ie") && page.contains(".TH arbiter-new 1"), "{page}");
    assert!(page.contains("gurps"), "new's page lists the rulesets");
    assert!(man.join("arbiter-replay.1").is_file());
    // Every page says what the exit codes mean.
    for name in ["arbiter.1", "arbiter-whatif.1", "arbiter-verify.1"] {
        let page = std::fs::read_to_string(man.join(name)).unwrap();
        assert!(page.contains(".SH \"EXIT STATUS\"") && page.contains("Usage or I/O"), "{name}");
    }
    // `new --help` lists the five rulesets with their documents; a bad one is a usage error.
    let help = String::from_utf8(arbiter(dir.path(), &["new", "--help"]).stdout).unwrap();
    for name in arbiter::rules::Kind::ALL.iter().map(|k| k.name()) {
        assert!(help.contains(&format!("- {name}:")), "{help}");
    }
    let out = arbiter(dir.path(), &["new", "g", "--ruleset", "chess", "--seat", "p1=A"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn hide_passes_folds_each_run_of_passes_into_one_line() {
    let dir = tempfile::tempdir().unwrap();
    assert!(arbiter(dir.path(), &["demo"]).status.success());
    for verb in ["log", "replay"] {
        let all = String::from_utf8(arbiter(dir.path(), &[verb, "sample"]).stdout).unwrap();
        let out = arbiter(dir.path(), &[verb, "sample", "--hide-passes"]);
        assert!(out.status.success());
        let folded = String::from_utf8(out.stdout).unwrap();
        // Seqs 4-6 of the sample are three passes after Cancel (seq 3).
        let run = folded.lines().find(|l| l.trim_start().starts_with("4-6 ")).unwrap_or_else(|| panic!("{folded}"));
        assert!(run.contains("Alice (p1), Carol (p3), Bob (p2) pass"), "{run}");
        assert!(!folded.lines().any(|l| l.trim_start().starts_with("5 ")), "seq 5 is folded into the run");
        assert!(folded.lines().any(|l| l.contains("Cancel counters battle tactic Fight (seq 2)")));
        assert!(folded.lines().count() < all.lines().count() / 2 + 20, "{verb}: passes are most of the sample");
    }
    // --json is for tools: it still has every event, passes included.
    let out = arbiter(dir.path(), &["--json", "log", "sample", "--hide-passes"]);
    let lines = String::from_utf8(out.stdout).unwrap().lines().count() as u64;
    let head: serde_json::Value =
        serde_json::from_slice(&arbiter(dir.path(), &["--json", "head", "sample"]).stdout).unwrap();
    assert_eq!(lines, head["seq"].as_u64().unwrap() + 1);
}

#[test]
fn a_batch_on_stdin_is_acknowledged_in_one_line_and_draws_no_bar_off_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let new = ["new", "g", "--ruleset", "doomtrooper", "--seat", "p1=Ann", "--seat", "p2=Ben"];
    assert!(arbiter(d, &new).status.success());
    let batch = [
        json!({"actor": "p1", "action": combat("p2", "A", "D")}),
        json!({"actor": "p1", "action": tactic("Fight")}),
        json!({"actor": "p2", "action": {"type": "pass"}}),
    ];
    let stdin: String = batch.iter().map(|l| format!("{l}\n")).collect();
    let out = arbiter_stdin(d, &["append", "g", "-"], &stdin);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].starts_with("seqs 1-3 appended (3 events); head 3 "), "{text}");
    assert!(lines[1].starts_with("  now: Doomtrooper"), "{text}");
    // stderr is a pipe here: no progress bar, nothing at all.
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    // --json keeps one acknowledgement per stored event, for tools.
    let more = format!("{}\n", json!({"actor": "p1", "action": {"type": "pass"}}));
    let out = arbiter_stdin(d, &["--json", "append", "g", "-"], &more);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["event"]["seq"], json!(4));
    // The same for verify and export.
    for args in [&["verify", "g"][..], &["export", "g", "-o", d.join("g.jsonl").to_str().unwrap()]] {
        let out = arbiter(d, args);
        assert!(out.status.success() && out.stderr.is_empty(), "{args:?}");
    }
}

/// A Riftbound final point that becomes "draw a card instead" is
/// said in words by `state`, `log` and `replay`, not only as `point: false`.
#[test]
fn a_final_point_drawn_as_a_card_is_said_in_state_log_and_replay() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let new = [
        "new",
        "g",
        "--ruleset",
        "riftbound",
        "--seat",
        "p1=Alice",
        "--seat",
        "p2=Bob",
        "--option",
        "mode=1v1",
        "--option",
        r#"battlefields=["Altar","Forge"]"#,
        "--option",
        r#"scores={"p1":7}"#,
    ];
    assert!(arbiter(d, &new).status.success());
    for (actor, action) in [
        ("p1", r#"{"type":"announce","what":"turn"}"#),
        ("p1", r#"{"type":"announce","what":"move","units":[{"name":"Imp","might":1}],"to":"Forge"}"#),
        ("p1", r#"{"type":"pass"}"#),
        ("p2", r#"{"type":"pass"}"#),
    ] {
        let out = arbiter(d, &["append", "g", "--actor", actor, action]);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let said = "final point: Alice (p1) draws a card instead of scoring: conquered Forge, but not every battlefield this turn (7 of 8)";
    let text = |args: &[&str]| String::from_utf8(arbiter(d, args).stdout).unwrap();
    assert!(text(&["state", "g"]).contains(said), "{}", text(&["state", "g"]));
    let log = text(&["log", "g"]);
    let lines: Vec<&str> = log.lines().collect();
    let at = lines.iter().position(|l| l.contains(said)).unwrap_or_else(|| panic!("{log}"));
    assert!(lines[at - 1].starts_with("    4 ") && lines[at - 1].contains("Bob (p2)   pass"), "{log}");
    assert!(text(&["log", "g", "--from", "4"]).contains(said));
    assert!(!text(&["--json", "log", "g"]).contains(said), "--json log lines are the events alone");
    assert!(text(&["replay", "g"]).contains(said), "{}", text(&["replay", "g"]));
}

/// `new --read token` or `import --read token` of a name that exists is
/// refused and leaves the game's read access as it was: the access is set
/// in the step that creates the game, as the server does (a refused create
/// once made a public game token-only).
#[test]
fn a_refused_create_of_a_name_that_exists_leaves_its_read_access_alone() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    sample_export(d);
    let file = d.join("sample.jsonl");
    new_game(d, "g");
    let before = head(d, "g");
    let out =
        arbiter(d, &["new", "g", "--ruleset", "doomtrooper", "--seat", "p1=A", "--seat", "p2=B", "--read", "token"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let out = arbiter(d, &["import", file.to_str().unwrap(), "--as", "g", "--read", "token"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(head(d, "g"), before);
    let store = open_store(d);
    assert_eq!(arbiter::access::read_access(&store, "g").unwrap(), arbiter::access::ReadAccess::Public);
    // A new name takes the access asked for.
    store.close();
    let out = arbiter(d, &["import", file.to_str().unwrap(), "--as", "h", "--read", "token"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let store = open_store(d);
    assert_eq!(arbiter::access::read_access(&store, "h").unwrap(), arbiter::access::ReadAccess::Token);
}

/// Doomtrooper steps 24-27 on the board `state` draws: each player's
/// equipment row names what they announced, and an announcement of none
/// says so ("Bob (p2): no equipment", not "Bob (p2): " with nothing after).
#[test]
fn the_board_names_equipment_and_says_when_none_was_announced() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    new_game(d, "g");
    let act = |actor: &str, action: Value| json!({"actor": actor, "action": action}).to_string();
    let pass = |actor: &str| act(actor, json!({"type": "pass"}));
    let mut lines = vec![
        act("p1", json!({"type":"announce","what":"combat","defending_player":"p2","attacker":"Max","defender":"Leg"})),
        act("p1", json!({"type":"announce","what":"battle_tactic","tactic":"Fight"})),
        pass("p2"),
        pass("p1"),
        act("p2", json!({"type":"announce","what":"warzone","warzone":null})),
    ];
    // 8-11, 12-15, 16-19, 20-23: everyone passes.
    for who in ["p1", "p2", "p2", "p1", "p1", "p2", "p2", "p1", "p1", "p2", "p2", "p1"] {
        lines.push(pass(who));
    }
    lines.push(act("p1", json!({"type":"announce","what":"equipment","items":["Bolter"]})));
    lines.extend([pass("p2"), pass("p1")]);
    lines.push(act("p2", json!({"type":"announce","what":"equipment","items":[]})));
    let out = arbiter_stdin(d, &["append", "g", "-"], &(lines.join("\n") + "\n"));
    assert!(out.status.success(), "{}", stderr(&out));
    let state = String::from_utf8(arbiter(d, &["state", "g"]).stdout).unwrap();
    assert!(state.contains("step 27"), "{state}");
    assert!(state.contains("  equipment      Alice (p1): Bolter\n"), "{state}");
    assert!(state.contains("  equipment      Bob (p2): no equipment\n"), "{state}");
    assert!(state.contains("equipment used: Bolter\n"), "{state}");
}

/// Raw Deal: after a play ended at 2d, `state` does not count it as a card
/// played: "ended so far" says how each breakdown ended.
#[test]
fn raw_deal_state_says_a_breakdown_ended_at_2d_was_not_played() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let new =
        ["new", "g", "--ruleset", "rawdeal", "--seat", "p1=Alice", "--seat", "p2=Bob", "--option", "rounding=down"];
    let out = arbiter(d, &new);
    assert!(out.status.success(), "{}", stderr(&out));
    for action in [
        r#"{"type":"play","card":"Spear","cost":5,"damage":4}"#,
        r#"{"type":"resolve","what":"cost","fortitude":3,"player_mods":[],"opponent_mods":[],"cost":5}"#,
        r#"{"type":"resolve","what":"requirements","must":true}"#,
    ] {
        let out = arbiter(d, &["append", "g", "--actor", "p1", action]);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let state = String::from_utf8(arbiter(d, &["state", "g"]).stdout).unwrap();
    assert!(state.contains("ended so far  1 breakdown: 1 not played (2d)\n"), "{state}");
    assert!(state.contains("Spear by Alice (p1): not played (2d: the cost 5 is more than the Fortitude 3)"), "{state}");
}

#[test]
fn a_read_verb_on_a_directory_with_no_store_says_so_and_makes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("typo").join("data");
    for verb in [&["games"][..], &["log", "g"], &["state", "g"], &["head", "g"], &["verify", "--all"]] {
        let out = arbiter(&missing, verb);
        assert_eq!(out.status.code(), Some(2), "{verb:?}");
        assert!(
            stderr(&out).contains("no store at") && stderr(&out).contains("`arbiter new` creates one"),
            "{}",
            stderr(&out)
        );
    }
    assert!(!dir.path().join("typo").exists(), "a read verb made directories");
    // A verb that writes still makes its store.
    assert!(
        arbiter(&missing, &["new", "g", "--ruleset", "gurps", "--seat", "p1=A", "--judge", "Dana"]).status.success()
    );
    assert!(arbiter(&missing, &["games"]).status.success());
}

#[test]
fn data_beside_a_server_the_flag_on_the_command_line_wins_and_two_flags_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    assert!(arbiter(dir.path(), &["demo"]).status.success());
    let run = |env: &[(&str, &str)], args: &[&str]| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_arbiter"));
        for v in ["ARBITER_SERVER", "ARBITER_TOKEN", "ARBITER_DATA", "ARBITER_STORE"] {
            cmd.env_remove(v);
        }
        cmd.envs(env.iter().copied()).args(args).output().unwrap()
    };
    let data = dir.path().to_str().unwrap();
    // Nothing listens on port 1: reaching for the server would fail.
    let server = "http://127.0.0.1:1";
    let out = run(&[("ARBITER_SERVER", server)], &["--data", data, "games"]);
    assert!(out.status.success(), "--data on the line wins over ARBITER_SERVER: {}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("sample"));
    let out = run(&[], &["--data", data, "--server", server, "games"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not both"), "{}", stderr(&out));
    let out = run(&[("ARBITER_SERVER", server), ("ARBITER_DATA", data)], &["games"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("both set"), "{}", stderr(&out));
    let out = run(&[("ARBITER_DATA", data)], &["--server", server, "games"]);
    assert!(stderr(&out).contains("cannot reach the server"), "--server on the line wins: {}", stderr(&out));
}

#[test]
fn a_rulings_refusal_names_the_seats_as_the_rulesets_refusals_do() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let new = ["new", "g", "--ruleset", "rawdeal", "--seat", "p1=Alice", "--seat", "p2=Bob", "--judge", "Dana"];
    assert!(arbiter(d, &new).status.success());
    let before = head(d, "g");
    let note = r#"{"type":"note","concerns":{"seq":5,"hash":"00"},"text":"x"}"#;
    let out = arbiter(d, &["append", "g", "--actor", "Dana", note]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("may act now: Alice (p1), Bob (p2)"), "{}", stderr(&out));
    assert_eq!(head(d, "g"), before);
}

/// Small things: a check that cannot run is an error (exit 2,
/// saying why), a check that fails is exit 1, and a refused export leaves
/// no file.
#[test]
fn diff_of_two_empty_files_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("a.jsonl"), "").unwrap();
    std::fs::write(d.join("b.jsonl"), "").unwrap();
    let a = d.join("a.jsonl").display().to_string();
    let b = d.join("b.jsonl").display().to_string();
    let out = arbiter(&d.join("data"), &["diff", &a, &b]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("holds no events"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn export_of_a_missing_game_writes_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    new_game(d, "g");
    let file = d.join("out.jsonl");
    let out = arbiter(d, &["export", "nosuch", "-o", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!file.exists(), "a refused export left a file behind");
    let left: Vec<_> = std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(!left.iter().any(|n| n.to_string_lossy().ends_with(".partial")), "{left:?}");
    let out = arbiter(d, &["export", "g", "-o", file.to_str().unwrap()]);
    assert!(out.status.success());
    assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 1);
}

#[test]
fn verify_file_of_a_missing_file_says_no_such_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nosuch.jsonl");
    let out = arbiter(&dir.path().join("data"), &["verify-file", missing.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no such file"), "{stderr}");
    assert!(!stderr.contains("failed verification"), "{stderr}");
}

#[test]
fn verify_bundle_kept_without_a_consistency_proof_is_a_failed_check() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    new_game(d, "g");
    let bundle = d.join("g.bundle");
    assert!(arbiter(d, &["prove", "g", "-o", bundle.to_str().unwrap()]).status.success());
    let out = arbiter(d, &["checkpoint"]);
    assert!(out.status.success());
    let kept = d.join("kept.note");
    std::fs::write(&kept, &out.stdout).unwrap();
    let out = arbiter(d, &["verify-bundle", bundle.to_str().unwrap(), "--kept", kept.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("FAILED") && stdout.contains("no consistency proof"), "{stdout}");
}
