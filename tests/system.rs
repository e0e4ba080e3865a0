//! Checks of the process as the system sees it: the real sync call on the
//! append path (under strace, which `.ci/run` installs where missing), and
//! the interactive replay on a pseudo-terminal (expectrl).

mod common;

use std::process::Command;
use std::time::Duration;

use common::*;

fn have(tool: &'static str) -> bool {
    common::has(common::Need::Program(tool))
}

/// One append: its record is written to the store's journal and the
/// journal is fdatasync'ed, and only then is the append acknowledged (the
/// journal is what makes a small append durable; sled's own sync comes at
/// the store's close, after the acknowledgement).
#[test]
fn an_append_is_acknowledged_only_after_fdatasync() {
    if !have("strace") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = arbiter(d, &["new", "g", "--ruleset", "doomtrooper", "--seat", "p1=A", "--seat", "p2=B"]);
    assert!(out.status.success());
    let log = d.join("strace.log");
    let status = Command::new("strace")
        // The appending thread alone (no -f): the journal is written and
        // synced by the append's own thread, and the acknowledgement too.
        .args(["-e", "trace=openat,fsync,fdatasync,sync_file_range,write,pwrite64", "-o"])
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
    // The journal's descriptor as opened to write to it (an open only
    // reads it first): `openat(AT_FDCWD, ".../journal", O_RDWR|O_CREAT|O_CLOEXEC, 0666) = FD`.
    // Its records are written over space the file has (`pwrite64`).
    let journal = format!("{}\"", d.join("journal").display());
    let fd = lines[..ack]
        .iter()
        .rfind(|l| l.starts_with("openat(") && l.contains(&journal) && l.contains("O_RDWR"))
        .and_then(|l| l.rsplit("= ").next()?.trim().parse::<u32>().ok())
        .unwrap_or_else(|| panic!("the journal was not opened to write before the acknowledgement:\n{trace}"));
    let written = lines[..ack].iter().rposition(|l| l.starts_with(&format!("pwrite64({fd}, ")));
    let synced = lines[..ack].iter().rposition(|l| l.starts_with(&format!("fdatasync({fd})")) && l.ends_with("= 0"));
    assert!(written.is_some(), "no write to the journal before the acknowledgement:\n{trace}");
    assert!(synced.is_some(), "no fdatasync before the acknowledgement:\n{trace}");
    assert!(written < synced, "the journal's fdatasync must follow its write:\n{trace}");
}

#[test]
fn interactive_replay_steps_one_event_per_key_on_a_terminal() {
    use expectrl::Expect;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert!(arbiter(d, &["demo"]).status.success());
    // The sample's length, from its head: "[k/n]" counts its events. (Asked
    // before the replay starts: the store is held by one process at a time.)
    let head: serde_json::Value = serde_json::from_slice(&arbiter(d, &["--json", "head", "sample"]).stdout).unwrap();
    let n = head["seq"].as_u64().unwrap() + 1;
    // On a pseudo-terminal, as a judge's terminal would run it.
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_arbiter"));
    cmd.arg("--data").arg(d).args(["replay", "sample", "--interactive"]).env("NO_COLOR", "1");
    let mut p = expectrl::Session::spawn(cmd).unwrap();
    p.get_process_mut().set_window_size(200, 40).unwrap();
    p.set_expect_timeout(Some(Duration::from_secs(20)));
    // Each key redraws the screen: the event in words, then "[k/n]".
    let screen = |p: &mut expectrl::session::OsSession, want: &str| -> String {
        let found = p.expect(want).unwrap_or_else(|e| panic!("the screen never showed {want:?}: {e}"));
        String::from_utf8_lossy(found.before()).into_owned()
    };
    screen(&mut p, &format!("[1/{n}]"));
    p.send("n").unwrap();
    let shown = screen(&mut p, &format!("[2/{n}]"));
    assert!(shown.contains("Max Steiner attacks Legionnaire"), "{shown}");
    p.send("\x1b[C").unwrap(); // Right
    screen(&mut p, &format!("[3/{n}]"));
    p.send("p").unwrap();
    screen(&mut p, &format!("[2/{n}]"));
    p.send("g50\r").unwrap();
    let shown = screen(&mut p, &format!("[51/{n}]"));
    assert!(shown.contains("Combat Drugs"), "{shown}");
    p.send("q").unwrap();
    p.expect(expectrl::Eof).unwrap();
}
