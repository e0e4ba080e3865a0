//! Adjudication from the command line: rulings, replay, fork, what-if and
//! diff, on stored games and on export files.

mod common;

use std::path::Path;

use common::*;
use serde_json::{Value, json};

fn ok(out: &std::process::Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// The stdout of a run that exits `code` (whatif: 1 when an event becomes illegal).
fn exits(code: i32, out: &std::process::Output) -> String {
    assert_eq!(out.status.code(), Some(code), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// The events of a game, as JSON.
fn events(d: &Path, game: &str) -> Vec<Value> {
    ok(&arbiter(d, &["--json", "log", game])).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn seq_of(events: &[Value], pred: impl Fn(&Value) -> bool) -> u64 {
    events.iter().find(|e| pred(e)).unwrap()["seq"].as_u64().unwrap()
}

fn export(d: &Path, game: &str) -> String {
    let file = d.join(format!("{game}.jsonl"));
    ok(&arbiter(d, &["export", game, "-o", file.to_str().unwrap()]));
    file.to_str().unwrap().to_string()
}

#[test]
fn a_counter_accepted_by_mistake_is_rewound_and_the_replay_shows_both() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(&arbiter(
        d,
        &["new", "g", "--ruleset", "doomtrooper", "--seat", "p1=Alice", "--seat", "p2=Bob", "--judge", "Dana"],
    ));
    let lines = [
        json!({"actor": "p1", "action": combat("p2", "Max", "Leg")}),
        json!({"actor": "p1", "action": tactic("Fight")}),
        json!({"actor": "p2", "action": counter("Nullify", 2)}),
        json!({"actor": "p1", "action": {"type": "pass"}}),
        json!({"actor": "p2", "action": {"type": "pass"}}),
    ];
    let stdin: String = lines.iter().map(|l| format!("{l}\n")).collect();
    ok(&arbiter_stdin(d, &["append", "g", "-"], &stdin));
    let evs = events(d, "g");
    let hash2 = evs[2]["hash"].as_str().unwrap().to_string();
    let ruling = |actor: &str| {
        arbiter(
            d,
            &[
                "append",
                "g",
                "--actor",
                actor,
                &json!({"type": "ruling", "kind": "rewind", "concerns": {"seq": 2, "hash": hash2},
            "reason": "Nullify may not be played in ANNOUNCE BATTLE TACTIC", "rule": "Doomtrooper step 3"})
                .to_string(),
            ],
        )
    };
    let head = ok(&arbiter(d, &["head", "g"]));
    let refused = ruling("p1");
    assert_eq!(refused.status.code(), Some(1), "a non-judge's ruling is refused");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("not a judge"));
    assert_eq!(ok(&arbiter(d, &["head", "g"])), head, "and nothing is stored");
    ok(&ruling("Dana"));
    let state: Value = serde_json::from_str(&ok(&arbiter(d, &["--json", "state", "g"]))).unwrap();
    assert_eq!(state["step"]["number"], "3-6");
    assert_eq!(state["may_act"], json!(["p2"]));
    // The replay shows the counter, marked rewound, and the ruling inline.
    let replay = ok(&arbiter(d, &["replay", "g"]));
    assert!(replay.lines().any(|l| l.contains("Nullify counters") && l.contains("[REWOUND]")), "{replay}");
    assert!(replay.contains("RULING rewind to seq "), "{replay}");
    let shown: Vec<Value> = ok(&arbiter(d, &["--json", "replay", "g", "--from", "3"]))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        shown.iter().map(|s| s["rewound"].as_bool().unwrap()).collect::<Vec<_>>(),
        vec![true, true, true, false]
    );
    assert_eq!(shown[3]["kind"], "ruling");
    assert!(shown[0]["changes"].as_array().unwrap().iter().any(|c| c["path"].as_str().unwrap().contains("effects")));
    // verify re-checks the ruling; the export verifies without a store too.
    ok(&arbiter(d, &["verify", "g"]));
    // A what-if over a record with a rewind: leaving out only the counter makes p1's pass
    // out of turn; leaving out all the rewound events changes nothing; leaving out the
    // event the rewind names makes the next event illegal.
    let v: Value = serde_json::from_str(&exits(1, &arbiter(d, &["--json", "whatif", "g", "--skip", "3"]))).unwrap();
    assert_eq!(v["illegal"][0], 4, "{v}");
    // Where it stops: the board and step before seq 4, which without seq 3 are those after seq 2.
    let at2: Value = serde_json::from_str(&ok(&arbiter(d, &["--json", "state", "g", "--at", "2"]))).unwrap();
    assert_eq!((&v["board"], &v["step"]), (&at2["board"], &at2["step"]), "{v}");
    let v: Value = serde_json::from_str(&ok(&arbiter(d, &["--json", "whatif", "g", "--skip", "3", "4", "5"]))).unwrap();
    assert!(v["illegal"].is_null() && v["changes"].as_array().unwrap().is_empty(), "{v}");
    let v: Value = serde_json::from_str(&exits(1, &arbiter(d, &["--json", "whatif", "g", "--skip", "2"]))).unwrap();
    assert_eq!(v["illegal"][0], 3, "{v}");
    let file = export(d, "g");
    ok(&arbiter(d, &["verify-file", &file]));
    assert!(ok(&arbiter(d, &["replay", &file])).contains("[REWOUND]"), "replay works on an export file");
}

#[test]
fn fork_shares_the_prefix_byte_for_byte_and_diff_finds_it_by_hash() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(&arbiter(d, &["demo"]));
    ok(&arbiter(d, &["fork", "sample", "--at", "40", "alt"]));
    let a = std::fs::read_to_string(export(d, "sample")).unwrap();
    let b = std::fs::read_to_string(export(d, "alt")).unwrap();
    assert!(a.starts_with(&b), "the fork is the first 41 lines, byte for byte");
    assert_eq!(b.lines().count(), 41);
    assert_eq!(arbiter(d, &["fork", "sample", "--at", "400", "x"]).status.code(), Some(2), "a bad argument");
    assert_eq!(arbiter(d, &["fork", "sample", "--at", "3", "alt"]).status.code(), Some(1), "alt exists");
    // Agreeing records: exit 0; a prefix: exit 1, divergence at 41.
    ok(&arbiter(d, &["import", &export(d, "sample"), "--as", "copy"]));
    assert!(ok(&arbiter(d, &["diff", "sample", "copy"])).contains("the records agree"));
    let out = arbiter(d, &["--json", "diff", "sample", "alt"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((v["alignment"].as_str(), v["common"].as_u64()), (Some("hash"), Some(41)));
    assert!(v["comparisons"].as_u64().unwrap() <= 8, "binary search: {}", v["comparisons"]);
    // Files work the same, without a store.
    let (fa, fb) = (d.join("sample.jsonl"), d.join("alt.jsonl"));
    let out = arbiter(Path::new("/nonexistent-store"), &["diff", fa.to_str().unwrap(), fb.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
}

/// A small Doomtrooper combat up to MODIFY COMBAT RATINGS, as JSON Lines; `p2_plays` decides
/// whether p2 plays a modifier at 33-36 or passes there.
fn recording(p2_plays: bool) -> String {
    let mut l: Vec<Value> = vec![
        json!({"actor": "p1", "action": combat("p2", "Max", "Leg")}),
        json!({"actor": "p1", "action": tactic("Fight")}),
    ];
    let pass = |s: &str| json!({"actor": s, "action": {"type": "pass"}});
    l.extend(["p2", "p1"].map(pass));
    l.push(json!({"actor": "p2", "action": warzone(None)}));
    l.extend(["p1", "p2", "p2", "p1", "p1", "p2", "p2", "p1", "p1", "p2", "p2", "p1"].map(pass)); // 8-23
    l.push(json!({"actor": "p1", "action": equipment(&[])}));
    l.extend(["p2", "p1"].map(pass));
    l.push(json!({"actor": "p2", "action": equipment(&[])}));
    l.extend(["p1", "p2", "p1", "p2", "p2", "p1"].map(pass)); // 27-31
    l.push(json!({"actor": "p1", "action": standing(("Max", 5), ("Leg", 5))}));
    l.push(pass("p1"));
    let m = l.len() as u64 + 1; // the seq p2's modifier would get
    if p2_plays {
        l.push(json!({"actor": "p2", "action": play("modify", "Shield of Faith")}));
        l.extend(["p1", "p2"].map(pass));
    } else {
        l.push(pass("p2"));
    }
    let counted: Vec<u64> = if p2_plays { vec![m] } else { vec![] };
    let outcome = if p2_plays { "unharmed" } else { "wounded" };
    l.push(json!({"actor": "p1", "action": results(&[("Max", "unharmed"), ("Leg", outcome)], &counted)}));
    l.extend(["p1", "p2", "p1", "p2", "p1", "p2", "p1", "p2"].map(pass));
    l.push(json!({"actor": "p1", "action": status(&[("Max", "unharmed"), ("Leg", outcome)])}));
    l.push(json!({"actor": "p1", "action": award(if p2_plays { 0 } else { 1 })}));
    l.iter().map(|v| format!("{v}\n")).collect()
}

#[test]
fn two_recordings_that_differ_in_a_single_pass_are_aligned_by_content() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (game, plays) in [("table", false), ("judge", true)] {
        ok(&arbiter(d, &["new", game, "--ruleset", "doomtrooper", "--seat", "p1=Alice", "--seat", "p2=Bob"]));
        ok(&arbiter_stdin(d, &["append", game, "-"], &recording(plays)));
    }
    let out = arbiter(d, &["--json", "diff", "table", "judge"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["alignment"], "content", "recorded independently: different times, different hashes");
    let events = events(d, "table");
    // p1 passes after the standing (step 33), then p2 passes where the other record has p2's modifier.
    let pass_seq = seq_of(&events, |e| e["action"]["what"] == "standing") + 2;
    assert_eq!(v["common"].as_u64(), Some(pass_seq), "the first divergence is p2's pass");
    assert_eq!(v["a_from"][0]["action"]["type"], "pass");
    assert_eq!(v["b_from"][0]["action"]["effect"], "modify");
    let first = &v["changes"][0];
    let path = first["path"].as_str().unwrap();
    assert!(["results", "points", "award"].iter().any(|w| path.contains(w)), "outcome first: {first}");
    let text = ok(&arbiter(d, &["diff", "table", "table"]));
    assert!(text.contains("agree"));
}

#[test]
fn a_what_if_that_makes_a_later_counter_illegal() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(&arbiter(d, &["demo"]));
    let evs = events(d, "sample");
    let shield = seq_of(&evs, |e| e["action"]["card"] == "Shield of Faith");
    let out = exits(1, &arbiter(d, &["--json", "whatif", "sample", "--skip", &shield.to_string()]));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["illegal"][0].as_u64(), Some(shield + 1), "p3's counter named the skipped card");
    let why = v["illegal"][1]["message"].as_str().unwrap();
    assert!(why.contains(&format!("its target (seq {shield}) was skipped")), "{why}");
    // Nothing was stored.
    assert_eq!(events(d, "sample").len(), evs.len());
    // A what-if that stays legal reports the changed outcome: the sample's last award, and a judge's penalty added.
    let then = d.join("then.jsonl");
    let hash = evs[1]["hash"].as_str().unwrap();
    std::fs::write(&then, format!("{}\n", json!({"actor": "Dana", "action": {"type": "ruling", "kind": "penalty", "concerns": {"seq": 1, "hash": hash},
        "reason": "r", "seat": "p1", "infraction": "slow play", "penalty": "warning", "fix": "none"}}))).unwrap();
    let out = ok(&arbiter(d, &["--json", "whatif", "sample", "--then", then.to_str().unwrap()]));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v["illegal"].is_null(), "{v}");
    assert_eq!(v["changes"][0]["path"], "penalties[0]");
    // Skipping an event whose absence leaves everything legal can still change the outcome.
    let file = export(d, "sample");
    let out = exits(1, &arbiter(d, &["--json", "whatif", &file, "--skip", &(shield + 1).to_string()]));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(
        v["illegal"].is_array(),
        "without the counter, the recorded results no longer count the standing Shield: {v}"
    );
}

#[test]
fn judges_verbs_fill_in_the_hash() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(&arbiter(
        d,
        &["new", "w", "--ruleset", "wtactics", "--seat", "p1=Alice", "--seat", "p2=Bob", "--judge", "Dana"],
    ));
    let lines = [
        json!({"actor": "p1", "action": {"type": "announce", "what": "attackers", "attackers": [{"name": "Orc", "atk": 3, "def": 2}, {"name": "Troll", "atk": 5, "def": 5}]}}),
        json!({"actor": "p2", "action": {"type": "pass"}}),
        json!({"actor": "p1", "action": {"type": "pass"}}),
        json!({"actor": "p2", "action": {"type": "announce", "what": "defenders", "blocks": [{"defender": {"name": "Knight", "atk": 2, "def": 3}, "attacker": "Orc"}]}}),
    ];
    let stdin: String = lines.iter().map(|l| format!("{l}\n")).collect();
    ok(&arbiter_stdin(d, &["append", "w", "-"], &stdin));
    let decision = r#"{"type":"resolve","what":"unblocked","influence_lost":5}"#;
    assert_eq!(arbiter(d, &["decide", "w", "--judge", "p1", "--reason", "r", decision]).status.code(), Some(1));
    ok(&arbiter(
        d,
        &["decide", "w", "--judge", "Dana", "--reason", "the Troll was not blocked", "--rule", "WTactics II", decision],
    ));
    ok(&arbiter(d, &["note", "w", "--actor", "p2", "--concerns", "4", "I meant to block the Troll too"]));
    ok(&arbiter(
        d,
        &[
            "penalty",
            "w",
            "--judge",
            "Dana",
            "--concerns",
            "4",
            "--seat",
            "p2",
            "--infraction",
            "unclear blocks",
            "--penalty",
            "warning",
            "--fix",
            "none",
            "--reason",
            "blocks must be shown clearly",
        ],
    ));
    ok(&arbiter(d, &["add-judge", "w", "--judge", "Dana", "--name", "Eve", "--reason", "shift change"]));
    ok(&arbiter(d, &["rewind", "w", "--judge", "Eve", "--to", "3", "--reason", "let p2 declare blocks again"]));
    let state: Value = serde_json::from_str(&ok(&arbiter(d, &["--json", "state", "w"]))).unwrap();
    assert_eq!(state["step"]["number"], "II", "back before the blocks");
    assert_eq!(state["state"]["influence_lost"]["p2"], 0, "the decision was rewound too");
    let events = events(d, "w");
    assert_eq!(events.len(), 10);
    assert_eq!(events[5]["action"]["concerns"]["hash"], events[4]["hash"]);
    ok(&arbiter(d, &["verify", "w"]));
    // Without the rewind, the decision stands: the what-if says so in the board's words.
    let text = ok(&arbiter(d, &["whatif", "w", "--skip", "9"]));
    assert!(text.contains("the outcome changes:\n  influence lost\n    recorded: Alice (p1) 0, Bob (p2) 0\n    what if:  Alice (p1) 0, Bob (p2) 5"), "{text}");
    // A seq past the head is a bad argument (exit 2), not a refusal.
    assert_eq!(arbiter(d, &["rewind", "w", "--judge", "Eve", "--to", "99", "--reason", "r"]).status.code(), Some(2));
}

/// The combat of `recording` finished (awards at 45-48), so its
/// outcome lies in the finished combat and the points.
fn finished_recording(p2_plays: bool) -> String {
    let mut l = recording(p2_plays);
    for (actor, action) in [
        ("p2", json!({"type": "pass"})),
        ("p1", json!({"type": "pass"})),
        ("p2", award(0)),
        ("p1", json!({"type": "pass"})),
        ("p2", json!({"type": "pass"})),
    ] {
        l += &format!("{}\n", json!({"actor": actor, "action": action}));
    }
    l
}

#[test]
fn diff_shows_the_outcome_first_and_does_not_count_renumbering_as_a_difference() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (game, plays) in [("table", false), ("judge", true)] {
        ok(&arbiter(d, &["new", game, "--ruleset", "doomtrooper", "--seat", "p1=Alice", "--seat", "p2=Bob"]));
        ok(&arbiter_stdin(d, &["append", game, "-"], &finished_recording(plays)));
    }
    let out = arbiter(d, &["--json", "diff", "table", "judge"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let paths: Vec<&str> = v["changes"].as_array().unwrap().iter().map(|c| c["path"].as_str().unwrap()).collect();
    assert!(paths[0].ends_with("points.p1") && paths[1].ends_with("points.p1"), "the points first: {paths:?}");
    assert!(paths[2].contains("results") || paths[2].contains("status"), "{paths:?}");
    for p in &paths {
        let leaf = p.rsplit('.').next().unwrap();
        assert!(!["seq", "scope", "sub_scope", "target", "counters"].contains(&leaf), "renumbering listed: {p}");
    }
    assert!(v["renumbered"].as_u64().unwrap() > 0, "{v}");
    // For people: the outcome in the board's words, then the two sides row by row.
    let rows = v["outcome"].as_array().unwrap();
    assert_eq!(rows[0]["what"], "points", "{rows:?}");
    assert_ne!(rows[0]["a"], rows[0]["b"]);
    let text = String::from_utf8(arbiter(d, &["diff", "table", "judge"]).stdout).unwrap();
    let outcome = text.find("  points: Alice (p1) ").expect("points shown in words");
    let events = text.find("the events lined up").expect("events shown");
    assert!(outcome < events, "outcome before the events:\n{text}");
    assert!(!text.contains("state.points"), "no state paths for people:\n{text}");
    assert!(text.contains("differ only by renumbering"), "{text}");
}

/// A rewind says that it rewound, naming the counter and the ruling; `log` marks
/// each event a ruling took back, and by which.
#[test]
fn a_rewind_says_the_counter_was_rewound_and_log_marks_what_it_took_back() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(&arbiter(
        d,
        &["new", "g", "--ruleset", "doomtrooper", "--seat", "p1=Alice", "--seat", "p2=Bob", "--judge", "Dana"],
    ));
    let lines = [
        json!({"actor": "p1", "action": combat("p2", "Max", "Leg")}),
        json!({"actor": "p1", "action": tactic("Fight")}),
        json!({"actor": "p2", "action": counter("Nullify", 2)}),
        json!({"actor": "p1", "action": {"type": "pass"}}),
        json!({"actor": "p2", "action": {"type": "pass"}}),
    ];
    let stdin: String = lines.iter().map(|l| format!("{l}\n")).collect();
    ok(&arbiter_stdin(d, &["append", "g", "-"], &stdin));
    ok(&arbiter(d, &["rewind", "g", "--judge", "Dana", "--to", "2", "--reason", "Nullify may not be played here"]));
    let replay = ok(&arbiter(d, &["replay", "g"]));
    assert!(
        replay.contains(
            "seq 2 BATTLE TACTIC stands again: the counter against it (seq 3) was rewound by the judge's ruling (seq 6)"
        ),
        "{replay}"
    );
    assert!(!replay.contains("was countered"), "nothing countered the counter:\n{replay}");
    let log = ok(&arbiter(d, &["log", "g"]));
    for line in log.lines() {
        let seq: u64 = line.split_whitespace().next().unwrap().parse().unwrap();
        let marked = line.contains("rewound by seq 6");
        assert_eq!(marked, (3..=5).contains(&seq), "seq {seq}: {line}\n{log}");
    }
}

/// Inserts a judge's note after `after` events of `lines` (JSON Lines of a game's events
/// 1...), as a table that called the judge once more than the other would have.
fn record_with_note(d: &Path, game: &str, lines: &[String], after: usize) {
    ok(&arbiter_stdin(d, &["append", game, "-"], &lines[..after].concat()));
    ok(&arbiter(d, &["note", game, "--actor", "Dana", "--concerns", "2", "judge called to the table"]));
    ok(&arbiter_stdin(d, &["append", game, "-"], &lines[after..].concat()));
}

/// The demo's sample, event 1 on, as JSON Lines.
fn sample_events() -> Vec<String> {
    sample_lines("doomtrooper")[1..].iter().map(|(a, v)| format!("{}\n", json!({"actor": a, "action": v}))).collect()
}

/// One extra event in one record flags that row alone, and an outcome that
/// differs only by that renumbering ("ended by Smoke Bomb (seq 88)" against "(seq 89)")
/// is not a difference.
#[test]
fn diff_aligns_by_content_and_an_outcome_renumbered_is_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let lines = sample_events();
    let smoke = lines.iter().position(|l| l.contains("Smoke Bomb")).unwrap();
    let new = |game: &str| {
        ok(&arbiter(
            d,
            &[
                "new",
                "--ruleset",
                "doomtrooper",
                game,
                "--seat",
                "p1=Alice",
                "--seat",
                "p2=Bob",
                "--seat",
                "p3=Carol",
                "--judge",
                "Dana",
                "--tournament",
                "Luna City Open",
                "--round",
                "3",
                "--table",
                "12",
            ],
        ))
    };
    new("table");
    ok(&arbiter_stdin(d, &["append", "table", "-"], &lines.concat()));
    new("judge");
    record_with_note(d, "judge", &lines, smoke - 2);
    let out = arbiter(d, &["--json", "diff", "table", "judge"]);
    assert_eq!(out.status.code(), Some(1), "the note is a difference");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["outcome"], json!([]), "renumbering is not an outcome difference: {}", v["outcome"]);
    let differing: Vec<&Value> = v["rows"].as_array().unwrap().iter().filter(|r| r["same"] == false).collect();
    assert_eq!(differing.len(), 1, "one row, the note: {differing:?}");
    assert!(differing[0]["a"].is_null() && differing[0]["b"]["words"].as_str().unwrap().contains("note"));
    assert_eq!(differing[0]["b"]["by"], "Dana");
    let text = String::from_utf8(arbiter(d, &["diff", "table", "judge"]).stdout).unwrap();
    assert_eq!(text.lines().filter(|l| l.starts_with('*')).count(), 1, "{text}");
    assert!(text.lines().take(3).any(|l| l.contains("outcome: the same")), "{text}");
}

/// The outcome values are within the first 3 lines; the rows name seats by name.
#[test]
fn diff_says_the_outcome_values_first_and_names_the_seats() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (game, plays) in [("table", false), ("judge", true)] {
        ok(&arbiter(d, &["new", game, "--ruleset", "doomtrooper", "--seat", "p1=Alice", "--seat", "p2=Bob"]));
        ok(&arbiter_stdin(d, &["append", game, "-"], &finished_recording(plays)));
    }
    let text = String::from_utf8(arbiter(d, &["diff", "table", "judge"]).stdout).unwrap();
    let top: Vec<&str> = text.lines().take(3).collect();
    assert!(top.iter().any(|l| l.contains("points: Alice (p1) 1 against 0")), "{text}");
    let rows: Vec<&str> = text.lines().filter(|l| l.contains("  B: ") || l.contains(" A: ")).collect();
    assert!(!rows.is_empty(), "{text}");
    assert!(text.contains("Bob (p2) Shield of Faith modifies combat ratings"), "{text}");
    for bare in [" p1 ", " p2 "] {
        assert!(!rows.iter().any(|l| l.contains(&format!("A:{bare}")) || l.contains(&format!("B:{bare}"))), "{text}");
    }
    // Only the events that differ are flagged: p2's modifier and p1's pass (B only), the
    // results, the status and the award.
    assert_eq!(text.lines().filter(|l| l.starts_with('*')).count(), 5, "{text}");
}

/// A counter whose target was skipped says so; whatif exits 1 when an event
/// becomes illegal, 0 when the record stays legal.
#[test]
fn whatif_names_the_skipped_target_and_exits_1_when_an_event_becomes_illegal() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(&arbiter(d, &["demo"]));
    let evs = events(d, "sample");
    let shield = seq_of(&evs, |e| e["action"]["card"] == "Shield of Faith");
    let out = arbiter(d, &["--json", "whatif", "sample", "--skip", &shield.to_string()]);
    assert_eq!(out.status.code(), Some(1), "an event becomes illegal");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["illegal"][0].as_u64(), Some(shield + 1));
    assert_eq!(v["legal"], false);
    let why = v["illegal"][1]["message"].as_str().unwrap();
    assert!(why.contains(&format!("its target (seq {shield}) was skipped")), "{why}");
    let text = arbiter(d, &["whatif", "sample", "--skip", &shield.to_string()]);
    assert_eq!(text.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&text.stdout).contains("was skipped"));
    // The record as it stands is legal: exit 0.
    let legal = arbiter(d, &["whatif", "sample"]);
    assert_eq!(legal.status.code(), Some(0), "{}", String::from_utf8_lossy(&legal.stderr));
    let help = String::from_utf8(arbiter(d, &["whatif", "--help"]).stdout).unwrap();
    assert!(help.contains("exit 1"), "{help}");
}
