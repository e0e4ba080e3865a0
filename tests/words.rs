//! Words, not payloads: `replay` and `log` say each event in the board's
//! words (names, Basic Speed, the card a counted seq is), never as the
//! payload's `key=value` pairs.

mod common;

use std::path::Path;

use common::*;

fn stdout(data: &Path, args: &[&str]) -> String {
    let out = arbiter(data, args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// A word that reads as a payload's `key=value`: letters and `_`, then `=`.
fn payload_words(text: &str) -> Vec<String> {
    text.lines()
        .filter(|line| {
            line.split_whitespace().any(|w| {
                w.split_once('=')
                    .is_some_and(|(k, _)| !k.is_empty() && k.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'))
            })
        })
        .map(String::from)
        .collect()
}

/// A game of `ruleset` with the sample's seats and judge, and its events 1..=`upto`.
fn sample_prefix(d: &Path, ruleset: &str, game: &str, seats: &[&str], judge: &str, upto: usize) {
    let mut args = vec!["new", game, "--ruleset", ruleset, "--judge", judge];
    for s in seats {
        args.extend(["--seat", s]);
    }
    stdout(d, &args);
    let lines: String = sample_lines(ruleset)[1..=upto]
        .iter()
        .map(|(actor, action)| serde_json::json!({"actor": actor, "action": action}).to_string() + "\n")
        .collect();
    let out = arbiter_stdin(d, &["append", game, "-"], &lines);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn record(d: &Path, ruleset: &str) -> (String, String, String) {
    let game = format!("{ruleset}-g");
    let demo = stdout(d, &["demo", "--ruleset", ruleset, "--as", &game]);
    (stdout(d, &["replay", &game]), stdout(d, &["log", &game]), demo)
}

#[test]
fn every_samples_replay_and_log_read_as_words_not_key_value() {
    let dir = tempfile::tempdir().unwrap();
    for ruleset in ["doomtrooper", "wtactics", "riftbound", "rawdeal", "gurps"] {
        let (replay, log, demo) = record(dir.path(), ruleset);
        for (verb, text) in [("replay", &replay), ("log", &log), ("demo", &demo)] {
            let left = payload_words(text);
            assert!(left.is_empty(), "{ruleset} {verb} still reads as key=value:\n{}", left.join("\n"));
        }
    }
}

#[test]
fn doomtrooper_says_outcomes_with_the_cards_counted_and_seats_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let (replay, log, _) = record(dir.path(), "doomtrooper");
    for text in [&replay, &log] {
        assert!(
            text.contains("Max Steiner unharmed, Legionnaire Sergeant killed; counted: Combat Drugs (seq 50)"),
            "{text}"
        );
        assert!(text.contains("defending player Bob (p2)"), "{text}");
        assert!(text.contains("Cancel counters Shield of Faith (seq 51)"), "{text}");
    }
}

#[test]
fn gurps_says_basic_speed_never_quarters() {
    let dir = tempfile::tempdir().unwrap();
    let (replay, log, _) = record(dir.path(), "gurps");
    for text in [&replay, &log] {
        assert!(text.contains("Sir Roland (Alice (p1), party): Basic Speed 6.00, DX 12"), "{text}");
        assert!(!text.contains("quarters"), "{text}");
    }
}

/// The GM's ruling on a roll the sequence would not allow (a Wait
/// triggered) is said as a ruling, not as `ruling=...`.
#[test]
fn a_gms_ruling_on_a_roll_reads_as_a_ruling() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    sample_prefix(d, "gurps", "g", &["p1=Alice", "p2=Bob"], "GM", 14);
    let roll = r#"{"type":"resolve","what":"roll","by":"Bandit","kind":"attack","roll":8,"target":11,"result":"hit","ruling":"a Wait triggered"}"#;
    stdout(d, &["append", "g", "--actor", "GM", roll]);
    let replay = stdout(d, &["replay", "g", "--from", "15"]);
    assert!(
        replay.contains("Bandit's attack roll 8 against 11: hit, by the GM's ruling: a Wait triggered"),
        "{replay}"
    );
}

/// Rulings and notes say what they rule: a rewind its target, a decision
/// what it decides, a penalty whom it is against.
#[test]
fn rulings_and_notes_say_what_they_rule() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    sample_prefix(d, "doomtrooper", "g", &["p1=Alice", "p2=Bob", "p3=Carol"], "Dana", 6);
    stdout(d, &["note", "g", "--actor", "p2", "--concerns", "3", "the Cancel came from the hand"]);
    stdout(
        d,
        &[
            "penalty",
            "g",
            "--judge",
            "Dana",
            "--reason",
            "drew an extra card",
            "--seat",
            "p2",
            "--infraction",
            "Drawing Extra Cards",
            "--penalty",
            "warning",
            "--fix",
            "card shuffled back",
        ],
    );
    stdout(d, &["rewind", "g", "--judge", "Dana", "--reason", "Cancel was played from the wrong zone", "--to", "2"]);
    let replay = stdout(d, &["replay", "g", "--from", "7"]);
    let log = stdout(d, &["log", "g"]);
    for text in [&replay, &log] {
        assert!(text.contains("note on seq 3: the Cancel came from the hand"), "{text}");
        assert!(
            text.contains("penalty against Bob (p2): warning for Drawing Extra Cards (fix: card shuffled back): drew an extra card"),
            "{text}"
        );
        assert!(text.contains("rewind to seq 2: Cancel was played from the wrong zone"), "{text}");
        let left = payload_words(text);
        assert!(left.is_empty(), "still key=value:\n{}", left.join("\n"));
    }
}

/// Acknowledgements and refusals name the seats ("Alice (p1)"), in the
/// text a person reads; the JSON fields that carry ids keep the ids.
#[test]
fn acknowledgements_and_refusals_name_the_seats() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    stdout(d, &["new", "g", "--ruleset", "doomtrooper", "--seat", "p1=Alice", "--seat", "p2=Bob", "--judge", "Dana"]);
    let combat = r#"{"type":"announce","what":"combat","defending_player":"p2","attacker":"Max","defender":"Leg"}"#;
    let ack = stdout(d, &["append", "g", "--actor", "p1", combat]);
    assert!(ack.contains("may act: Alice (p1);"), "{ack}");
    let tactic = r#"{"type":"announce","what":"battle_tactic","tactic":"Fight"}"#;
    let out = arbiter(d, &["append", "g", "--actor", "p2", tactic]);
    let refusal = String::from_utf8(out.stderr).unwrap();
    assert!(refusal.contains("only Alice (p1) acts at this step, not Bob (p2)"), "{refusal}");
    assert!(refusal.contains("may act now: Alice (p1)"), "{refusal}");
    let out = arbiter(d, &["--json", "append", "g", "--actor", "p2", tactic]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["violation"]["message"], "only Alice (p1) acts at this step, not Bob (p2)", "{v}");
    assert_eq!(v["error"]["violation"]["may_act"], serde_json::json!(["p1"]), "ids stay ids: {v}");
}
