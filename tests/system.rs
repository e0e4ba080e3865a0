//! Checks that need the machine's own tools (strace and tmux, both on the
//! project's machine image; `.ci/run` installs them where missing): the real
//! sync call on the append path, and the interactive replay on a terminal.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::*;

fn have(tool: &str) {
    let found = Command::new("sh").args(["-c", &format!("command -v {tool}")]).status().unwrap().success();
    assert!(found, "{tool} is not installed (.ci/run installs it)");
}

#[test]
fn an_append_is_acknowledged_only_after_fdatasync() {
    have("strace");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = arbiter(d, &["new", "g", "--ruleset", "doomtrooper", "--seat", "p1=A", "--seat", "p2=B"]);
    assert!(out.status.success());
    let log = d.join("strace.log");
    let status = Command::new("strace")
        .args(["-f", "-e", "trace=fsync,fdatasync,sync_file_range,write", "-o"])
        .arg(&log)
        .arg(env!("CARGO_BIN_EXE_arbiter"))
        .arg("--data")
        .arg(d)
        .args([
            "append",
            "g",
            "--actor",
            "p1",
            r#"{"type":"announce","what":"combat","defending_player":"p2","attacker":"A","defender":"D"}"#,
        ])
        .output()
        .unwrap();
    assert!(status.status.success(), "strace or arbiter failed: {}", String::from_utf8_lossy(&status.stderr));
    let trace = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = trace.lines().collect();
    let ack = lines
        .iter()
        .position(|l| l.contains("write(1") && l.contains("appended"))
        .unwrap_or_else(|| panic!("no acknowledgement in:\n{trace}"));
    // Where each call returned: with -f, a call another thread interrupts is
    // split into "fdatasync(4 <unfinished ...>" and "<... fdatasync resumed>) = 0".
    let returned = |l: &str, call: &str| {
        (l.contains(&format!("{call}(")) || l.contains(&format!("{call} resumed>"))) && l.contains("= 0")
    };
    let synced = lines[..ack].iter().rposition(|l| returned(l, "fdatasync"));
    let flushed = lines[..ack].iter().rposition(|l| returned(l, "sync_file_range"));
    assert!(synced.is_some(), "no fdatasync before the acknowledgement:\n{trace}");
    assert!(flushed.is_none_or(|f| f < synced.unwrap()), "fdatasync must follow sled's sync_file_range:\n{trace}");
}

#[test]
fn interactive_replay_steps_one_event_per_key_on_a_terminal() {
    have("tmux");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert!(arbiter(d, &["demo"]).status.success());
    // The sample's length, from its head: "[k/n]" counts its events. (Asked
    // before the replay starts: the store is held by one process at a time.)
    let head: serde_json::Value = serde_json::from_slice(&arbiter(d, &["--json", "head", "sample"]).stdout).unwrap();
    let n = head["seq"].as_u64().unwrap() + 1;
    let session = format!("arbiter-test-{}", std::process::id());
    let socket = d.join("tmux.sock");
    let tmux = |args: &[&str]| {
        let mut all = vec!["-S", socket.to_str().unwrap()];
        all.extend_from_slice(args);
        Command::new("tmux").args(&all).status().unwrap()
    };
    let cmd = format!("{} --data {} replay sample --interactive", env!("CARGO_BIN_EXE_arbiter"), d.display());
    assert!(tmux(&["new-session", "-d", "-s", &session, "-x", "200", "-y", "40", &cmd]).success());
    let wait = |want: &str| {
        let start = Instant::now();
        loop {
            let out = Command::new("tmux")
                .args(["-S", socket.to_str().unwrap(), "capture-pane", "-t", &session, "-p"])
                .output()
                .unwrap();
            let screen = String::from_utf8_lossy(&out.stdout).into_owned();
            if screen.contains(want) {
                return screen;
            }
            assert!(start.elapsed() < Duration::from_secs(20), "the screen never showed {want:?}:\n{screen}");
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    wait(&format!("[1/{n}]"));
    tmux(&["send-keys", "-t", &session, "n"]);
    let screen = wait(&format!("[2/{n}]"));
    assert!(screen.contains("announce combat"), "{screen}");
    tmux(&["send-keys", "-t", &session, "Right"]);
    wait(&format!("[3/{n}]"));
    tmux(&["send-keys", "-t", &session, "p"]);
    wait(&format!("[2/{n}]"));
    tmux(&["send-keys", "-t", &session, "g", "5", "0", "Enter"]);
    let screen = wait(&format!("[51/{n}]"));
    assert!(screen.contains("Combat Drugs"), "{screen}");
    tmux(&["send-keys", "-t", &session, "q"]);
    let _ = tmux(&["kill-server"]);
}
