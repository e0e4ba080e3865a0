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

    // The one-liner of docs/event-format.md, as the page shows it (from
    // `line=` to the `jq -r .hash` line), reproduces event seq 3's hash.
    let page = std::fs::read_to_string(repo_file("docs/event-format.md")).unwrap();
    let start = page.find("line=$(sed -n 4p sample.jsonl)").expect("the page's audit example");
    let end = start + page[start..].find("tools/verify-with-jq.sh").unwrap();
    let out = Command::new("bash").current_dir(d).args(["-c", &page[start..end]]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let printed = String::from_utf8(out.stdout).unwrap();
    let printed: Vec<&str> = printed.lines().map(|l| l.trim()).collect();
    let line = std::fs::read_to_string(&file).unwrap().lines().nth(3).unwrap().to_string();
    let (event, _) = arbiter::event::decode(&line).unwrap();
    assert_eq!(event.seq, 3);
    assert_eq!(printed, [event.hash.as_str(), event.hash.as_str()], "b3sum's hash, then the stored one");

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

/// The log's leaves are the export's exact bytes: a file that differs from
/// them in whitespace alone (a final newline replaced by a space, a tab or
/// a CR, a leading space, a CRLF line end) is not the export, and the jq
/// check refuses it as `verify-file` does.
#[test]
fn jq_check_refuses_what_is_not_the_byte_exact_export() {
    if !has(Need::Program("jq")) || !has(Need::Program("b3sum")) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert!(arbiter(d, &["demo"]).status.success());
    let file = d.join("sample.jsonl");
    let whole = d.join("whole.jsonl");
    assert!(arbiter(d, &["export", "sample", "-o", whole.to_str().unwrap()]).status.success());
    // Its first five events (an export's prefix is an export): jq runs a
    // few times a line.
    let text: String = std::fs::read_to_string(&whole).unwrap().lines().take(5).map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, &text).unwrap();
    let script = repo_file("tools/verify-with-jq.sh");
    let body = text.strip_suffix('\n').unwrap();
    let first_end = text.find('\n').unwrap();
    let variants = [
        ("a final space", format!("{body} ")),
        ("a final tab", format!("{body}\t")),
        ("a final CR", format!("{body}\r")),
        ("a leading space", format!(" {text}")),
        ("a CRLF line end", format!("{}\r{}", &text[..first_end], &text[first_end..])),
        ("a space inside a line", text.replacen("\",\"", "\", \"", 1)),
    ];
    for (what, bytes) in variants {
        let bad = d.join("bad.jsonl");
        std::fs::write(&bad, &bytes).unwrap();
        let out = Command::new("bash").arg(&script).arg(&bad).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{what}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("exact bytes"),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = arbiter(d, &["verify-file", bad.to_str().unwrap()]);
        assert!(!out.status.success(), "{what}: verify-file accepted it");
    }
    let ok = Command::new("bash").arg(&script).arg(&file).output().unwrap();
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
}
