//! An auditor with jq and b3sum alone: tools/verify-with-jq.sh on a real
//! export, and on a tampered one. `.ci/run` installs jq and b3sum; without
//! them this test fails rather than pass unseen.

mod common;

use std::process::Command;

use common::*;

#[test]
fn jq_and_b3sum_alone_verify_an_export_and_catch_tampering() {
    if !has(Need::Program("jq")) || !has(Need::Program("b3sum")) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert!(arbiter(d, &["demo"]).status.success());
    let file = d.join("sample.jsonl");
    assert!(arbiter(d, &["export", "sample", "-o", file.to_str().unwrap()]).status.success());
    let script = repo_file("tools/verify-with-jq.sh");
    let head = String::from_utf8(arbiter(d, &["head", "sample"]).stdout).unwrap();
    let head = head.split_whitespace().nth(1).unwrap();
    let ok = Command::new("bash").arg(&script).arg(&file).arg(head).output().unwrap();
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    assert!(String::from_utf8_lossy(&ok.stdout).contains("every hash and link verified"));

    // The README's one-liner reproduces one event's hash.
    let line = std::fs::read_to_string(&file).unwrap().lines().nth(3).unwrap().to_string();
    let cmd = format!("jq -cS 'del(.hash)' <<<'{line}' | tr -d '\\n' | b3sum --no-names");
    let out = Command::new("bash").args(["-c", &cmd]).output().unwrap();
    let (event, _) = arbiter::event::decode(&line).unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap().trim(), event.hash);

    let text = std::fs::read_to_string(&file).unwrap();
    let tampered = d.join("tampered.jsonl");
    std::fs::write(&tampered, text.replacen("\"Bolter\"", "\"Plasma\"", 1)).unwrap();
    let bad = Command::new("bash").arg(&script).arg(&tampered).output().unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("hash mismatch"), "{}", String::from_utf8_lossy(&bad.stderr));
    let mut lines: Vec<&str> = text.lines().collect();
    lines.remove(10);
    std::fs::write(&tampered, lines.join("\n") + "\n").unwrap();
    let bad = Command::new("bash").arg(&script).arg(&tampered).output().unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("seq 10"), "{}", String::from_utf8_lossy(&bad.stderr));
}
