//! What a head judge reads: `state` and `replay` of each sample, compared
//! with the snapshots in `tests/snapshots/` (times and hashes redacted, as
//! they change with every recording), by insta. `INSTA_UPDATE=always cargo
//! test --test judge_view` rewrites them (or `cargo insta review`, if
//! cargo-insta is installed); review the diff like any other change.

mod common;

use std::path::Path;

use common::*;

/// Times and hashes vary between recordings; the rest must not.
fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let words: Vec<String> = line
            .split(' ')
            .map(|w| {
                let core = w.trim_matches(|c| c == '(' || c == ')' || c == ',');
                let is_hash = core.len() == 64 && core.bytes().all(|b| b.is_ascii_hexdigit());
                let is_time =
                    core.len() >= 20 && core.as_bytes()[4] == b'-' && core.contains('T') && core.ends_with('Z');
                match (is_hash, is_time) {
                    (true, _) => w.replace(core, "HASH"),
                    (_, true) => w.replace(core, "TIME"),
                    _ => w.to_string(),
                }
            })
            .collect();
        out.push_str(&words.join(" "));
    }
    out + "\n"
}

/// `actual`, redacted, against `tests/snapshots/NAME.snap` (insta).
fn check_snapshot(name: &str, actual: &str) {
    insta::with_settings!({
        snapshot_path => Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots"),
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(name.trim_end_matches(".txt"), redact(actual));
    });
}

fn stdout(data: &Path, args: &[&str]) -> String {
    let out = arbiter(data, args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Names, not ids; the step once; no reducer JSON.
fn assert_reads_as_words(text: &str) {
    for internal in ["{\"", "\"scope\"", "sub_scope", "\"priority\":"] {
        assert!(!text.contains(internal), "internal JSON {internal:?} in:\n{text}");
    }
}

#[test]
fn doomtrooper_state_and_replay_read_as_a_judge_would_write_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The demo's own report is in words too: names, the step, the board.
    let demo = stdout(d, &["demo", "--ruleset", "doomtrooper", "--as", "dt"]);
    assert!(
        demo.contains(
            "now: Doomtrooper step 1 (ANNOUNCE ATTACKER AND DEFENDER); may act: Alice (p1), Bob (p2), Carol (p3)"
        ),
        "{demo}"
    );
    assert!(demo.contains("points  Alice (p1) 2 · Bob (p2) 0 · Carol (p3) 0"), "{demo}");
    assert!(!demo.contains("{\""), "no JSON in the demo's report:\n{demo}");
    // Mid-combat: Shield of Faith countered by Cancel, the step, who acts.
    let mid = stdout(d, &["state", "dt", "--at", "53"]);
    assert_reads_as_words(&mid);
    assert!(mid.contains("players: Alice (p1), Bob (p2), Carol (p3)"), "{mid}");
    assert!(mid.contains("Luna City Open, round 3, table 12"), "{mid}");
    assert!(mid.contains("may act: Bob (p2)"), "{mid}");
    assert!(mid.contains("Shield of Faith  [countered by Cancel (seq 52) by Carol (p3)]"), "{mid}");
    assert_eq!(mid.matches("MODIFY COMBAT RATINGS)").count(), 1, "the step is named once:\n{mid}");
    check_snapshot("doomtrooper-state-53.txt", &mid);
    let end = stdout(d, &["state", "dt"]);
    assert_reads_as_words(&end);
    assert!(end.contains("points  Alice (p1) 2 · Bob (p2) 0 · Carol (p3) 0"), "{end}");
    check_snapshot("doomtrooper-state.txt", &end);
    // Replay: what changed in the board's words.
    let replay = stdout(d, &["replay", "dt", "--hide-passes"]);
    assert!(replay.contains("Cancel (seq 3) by Bob (p2) counters seq 2 BATTLE TACTIC"), "{replay}");
    assert!(
        replay
            .contains("Body Guard (seq 11) by Bob (p2), CHANGE COMBATANTS: the defender becomes Legionnaire Sergeant")
    );
    assert!(!replay.contains("state.combat"), "no state paths in the words");
    assert_reads_as_words(&replay);
    check_snapshot("doomtrooper-replay.txt", &replay);
}

#[test]
fn riftbound_state_and_replay_read_as_a_judge_would_write_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    stdout(d, &["demo", "--ruleset", "riftbound", "--as", "rb"]);
    // Mid-combat: the Chain open (Firebolt, then Ward), Focus, Might with Assault and Shield.
    let mid = stdout(d, &["state", "rb", "--at", "15"]);
    assert_reads_as_words(&mid);
    assert!(mid.contains("players: Alice (p1), Bob (p2)"), "{mid}");
    assert!(mid.contains("combat at Altar: Alice (p1) attacks, Bob (p2) defends"), "{mid}");
    assert!(mid.contains("Might summed  Alice (p1) 8 · Bob (p2) 6"), "{mid}");
    assert!(mid.contains("Focus         Alice (p1)"), "{mid}");
    assert!(mid.contains("15  Bob (p2)    reaction Ward"), "{mid}");
    assert!(mid.contains("Altar  controlled by Bob (p2), contested by Alice (p1)"), "{mid}");
    assert!(mid.contains("Berserker    Might 4, Assault 2; Might 6 in this combat"), "{mid}");
    assert!(!mid.contains("\"battlefields\""), "the board, not the reducer's state:\n{mid}");
    check_snapshot("riftbound-state-15.txt", &mid);
    let end = stdout(d, &["state", "rb"]);
    assert_reads_as_words(&end);
    assert!(end.contains("scores  Alice (p1) 1 · Bob (p2) 1  (victory at 8)"), "{end}");
    assert!(end.contains("Altar  controlled by Alice (p1), scored this turn"), "{end}");
    assert!(end.contains("23  Alice (p1) scores a point: conquered Altar (1 of 8)"), "{end}");
    assert!(
        end.contains("turn 3: Alice (p1) (conquered this turn: Altar; over: the next in turn order begins the next)"),
        "{end}"
    );
    check_snapshot("riftbound-state.txt", &end);
    // Replay: what changed in the board's words, what a run of passes did included.
    let replay = stdout(d, &["replay", "rb", "--hide-passes"]);
    assert_reads_as_words(&replay);
    assert!(!replay.contains("state."), "no state paths in the words:\n{replay}");
    for said in [
        "Acolyte (Might 2, Shield 1) and Stone Golem (Might 3, Tank) of Bob (p2) move to Altar",
        "the showdown at Altar is over\n       Bob (p2) controls Altar (was uncontrolled)\n       Bob (p2) scores a point",
        "combat at Altar: Alice (p1) attacks with Berserker 6 and Scout 2 (Might 8), Bob (p2) defends with Acolyte 3 and Stone Golem 3 (Might 6)",
        "Ward (seq 15, reaction) by Bob (p2) goes on the Chain",
        "Firebolt (seq 14) by Alice (p1) resolves\n       Acolyte has 1 damage",
        "turn 1 of Alice (p1) is over",
        "the combat at Altar is over: only Alice (p1)'s units are left (Battlefield Conquered)",
    ] {
        assert!(replay.contains(said), "{said:?} in:\n{replay}");
    }
    check_snapshot("riftbound-replay.txt", &replay);
}

#[test]
fn wtactics_state_and_replay_read_as_a_judge_would_write_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    stdout(d, &["demo", "--ruleset", "wtactics", "--as", "wt"]);
    // Mid-attack: the Orc Raider's combat, Shield Wall played in it, the Troll's still to come.
    let mid = stdout(d, &["state", "wt", "--at", "7"]);
    assert_reads_as_words(&mid);
    assert!(mid.contains("players: Alice (p1), Bob (p2)"), "{mid}");
    assert!(mid.contains("attack 1: Alice (p1) attacks Bob (p2)"), "{mid}");
    assert!(mid.contains("defended by    Pikeman ATK 3 DEF 2 and Archer ATK 2 DEF 1"), "{mid}");
    assert!(mid.contains("chosen by Alice (p1); in its Response phases"), "{mid}");
    assert!(mid.contains("Ability Shield Wall, in the combat of Orc Raider"), "{mid}");
    assert!(mid.contains("enchanted: Bloodlust (Alice (p1))"), "{mid}");
    check_snapshot("wtactics-state-7.txt", &mid);
    // The attack over: the values as recorded (Knight's DEF 4 with Shield Wall), the dead, the piles.
    let end = stdout(d, &["state", "wt"]);
    assert_reads_as_words(&end);
    assert!(end.contains("attack 1 (over)"), "{end}");
    assert!(end.contains("Orc Raider's ATK 3 against Knight's DEF 4, Knight's ATK 2 against DEF 2: Orc Raider dies"));
    assert!(end.contains("ruled at seq 13 by Dana"), "{end}");
    assert!(end.contains("Alice (p1)     Orc Raider, Troll, Bloodlust"), "{end}");
    assert!(end.contains("Bob (p2)       Pikeman, Ambush"), "{end}");
    check_snapshot("wtactics-state.txt", &end);
    let replay = stdout(d, &["replay", "wt", "--hide-passes"]);
    assert!(replay.contains("Pikeman ATK 3 DEF 2 and Archer ATK 2 DEF 1 defend against Troll"), "{replay}");
    assert!(replay.contains("the combat of Troll: awaiting a judge's ruling (several defenders)"), "{replay}");
    assert!(replay.contains("to Bob (p2)'s discard pile: Pikeman, Ambush"), "{replay}");
    assert!(!replay.contains("state.attack"), "no state paths in the words");
    check_snapshot("wtactics-replay.txt", &replay);
}

#[test]
fn rawdeal_state_and_replay_read_as_a_judge_would_write_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    stdout(d, &["demo", "--ruleset", "rawdeal", "--as", "rd"]);
    // Mid-sequence: No Chance in Hell's breakdown on top of Chokeslam's, which waits at 5a.
    let mid = stdout(d, &["state", "rd", "--at", "13"]);
    assert_reads_as_words(&mid);
    assert!(mid.contains("players: Alice (p1), Bob (p2)"), "{mid}");
    assert!(mid.contains("seq 1  Chokeslam by Alice (p1): waits at 5a (the targeted opponent may play a reversal)"));
    assert!(mid.contains("cost 2 (printed 3, Fortitude 12), damage 9 (printed 5) · in no area"), "{mid}");
    assert!(mid.contains("seq 9  No Chance in Hell by Bob (p2), reversal to Chokeslam (seq 1): at 3b"), "{mid}");
    check_snapshot("rawdeal-state-13.txt", &mid);
    // The first sequence over: Chokeslam reversed and at ringside, the reversal in the Ring Area.
    let first = stdout(d, &["state", "rd", "--at", "19"]);
    assert!(first.contains("Chokeslam by Alice (p1): completely reversed (5c)"), "{first}");
    assert!(first.contains("ringside      Alice (p1): Chokeslam"), "{first}");
    // The head: Clothesline (Multi) and Duck, the first reversal to it, which does not reverse it.
    let end = stdout(d, &["state", "rd"]);
    assert_reads_as_words(&end);
    assert!(end.contains("Ring Area     Alice (p1): Duck · Bob (p2): No Chance in Hell, Clothesline"), "{end}");
    assert!(end.contains("(the first to a Multi card: does not reverse it): successfully played"), "{end}");
    assert!(end.contains("overturned (9b): Arm Drag, Headlock, Hip Toss"), "{end}");
    check_snapshot("rawdeal-state.txt", &end);
    let replay = stdout(d, &["replay", "rd", "--hide-passes"]);
    assert!(replay.contains("Chokeslam (seq 1): damage 12 (was 5)"), "{replay}");
    assert!(replay.contains("No Chance in Hell (seq 9) played by Bob (p2) as a reversal to Chokeslam (seq 1)"));
    assert!(replay.contains("Chokeslam (seq 1) is now considered reversed (6)"), "{replay}");
    assert!(replay.contains("Chokeslam goes to Alice (p1)'s ringside"), "{replay}");
    assert!(!replay.contains("state.stack"), "no state paths in the words");
    check_snapshot("rawdeal-replay.txt", &replay);
}

#[test]
fn gurps_state_and_replay_read_as_a_judge_would_write_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    stdout(d, &["demo", "--ruleset", "gurps", "--as", "gu"]);
    // Tied Speeds before the first turn: the provisional sequence and the tie a roll settles.
    let ties = stdout(d, &["state", "gu", "--at", "1"]);
    assert!(ties.contains("tied           Sir Roland, Wren: a roll at the start settles it"), "{ties}");
    // Second 2, Wren's turn: Sir Roland's All-Out Attack still bars his active defense; the Bandit is out.
    let mid = stdout(d, &["state", "gu", "--at", "15"]);
    assert_reads_as_words(&mid);
    assert!(mid.contains("players: Alice (p1), Bob (p2)"), "{mid}");
    assert!(mid.contains("combat 1, second 2"), "{mid}");
    assert!(mid.contains("turn           Wren, played by Bob (p2): Attack chosen; a pass ends the turn"), "{mid}");
    assert!(mid.contains("All-Out Attack: no active defense until its next turn"), "{mid}");
    assert!(mid.contains("Bandit      the GM      bandits  NPC  Basic Speed 5.50  DX 11  Attack  [inactive]"));
    assert!(mid.contains("the latest, seq 15: Bandit inactive (knocked out)"), "{mid}");
    check_snapshot("gurps-state-15.txt", &mid);
    let end = stdout(d, &["state", "gu"]);
    assert_reads_as_words(&end);
    assert!(end.contains("time  not in combat"), "{end}");
    assert!(end.contains("combat 1 (ended in second 2)"), "{end}");
    check_snapshot("gurps-state.txt", &end);
    let replay = stdout(d, &["replay", "gu", "--hide-passes"]);
    assert!(replay.contains("tie settled: the turn sequence is Wren, Sir Roland, Bandit"), "{replay}");
    assert!(replay.contains("Sir Roland chooses All-Out Attack: may roll to attack this turn; no active defense"));
    assert!(replay.contains("recorded: Bandit's active defense roll 13 vs 9: failed"), "{replay}");
    assert!(replay.contains("second 2 begins"), "{replay}");
    assert!(!replay.contains("state.characters"), "no state paths in the words");
    check_snapshot("gurps-replay.txt", &replay);
}
