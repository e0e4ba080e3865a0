//! Invariants of the source tree that no compiler checks, checked here as
//! rust-analyzer's `xtask/src/tidy.rs` does: the reducers stay pure, and
//! files are touched only where `lib.rs` says I/O happens.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, with its text.
fn sources(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                out.push((path, text));
            }
        }
    }
    out.sort();
    out
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// What a line says, outside its `//` comment (a comment may name what the
/// code must not do).
fn code(line: &str) -> &str {
    line.split("//").next().unwrap_or("")
}

#[test]
fn reducers_are_pure_no_clock_no_files_no_randomness_no_globals() {
    // The rulesets, the kernel they share, and the judges' rulings fold
    // events into state: the same events must give the same state anywhere.
    const IMPURE: &[&str] = &[
        "std::fs",
        "std::time",
        "std::env",
        "std::net",
        "std::thread",
        "std::process",
        "Utc::now",
        "Local::now",
        "SystemTime",
        "Instant",
        "rand::",
        "getrandom",
        "static mut",
        "thread_local!",
        "OnceLock",
        "LazyLock",
        "Mutex",
        "RefCell",
    ];
    let mut found = Vec::new();
    let root = src();
    let mut files = sources(&root.join("rules"));
    files.extend(sources(&root.join("kernel")));
    files.push((root.join("adjudication.rs"), std::fs::read_to_string(root.join("adjudication.rs")).unwrap()));
    assert!(files.len() > 10, "the reducers' files were found");
    for (path, text) in &files {
        for (n, line) in text.lines().enumerate() {
            for word in IMPURE {
                if code(line).contains(word) {
                    found.push(format!("{}:{}: {word}: {}", path.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "a reducer must not read the clock, files, randomness or global state:\n{}",
        found.join("\n")
    );
}

#[test]
fn files_are_opened_only_where_lib_rs_says_io_happens() {
    // lib.rs: "I/O happens only in `store`, `server`, `record`'s export
    // files and the binary". The other modules take bytes and values.
    let root = src();
    let allowed = |path: &Path| {
        let rel = path.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
        ["store/", "server/", "cli/", "main.rs", "record"].iter().any(|p| rel.starts_with(p))
    };
    let mut found = Vec::new();
    for (path, text) in sources(&root) {
        if allowed(&path) {
            continue;
        }
        for (n, line) in text.lines().enumerate() {
            for word in ["std::fs", "File::open", "File::create", "OpenOptions", "TcpStream", "TcpListener"] {
                if code(line).contains(word) {
                    found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(found.is_empty(), "I/O outside store, server, record and the binary:\n{}", found.join("\n"));
    let lib = std::fs::read_to_string(root.join("lib.rs")).unwrap();
    assert!(lib.contains("I/O happens only in `store`, `server`, `record`'s export files and the binary"));
}

#[test]
fn comments_say_what_and_why_not_which_issue_they_came_from() {
    // History is git's: a comment naming the issue or the progress note it
    // came from tells a reader nothing about the code in front of them.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = sources(&root.join("src"));
    files.extend(sources(&root.join("tests")));
    let mut found = Vec::new();
    for (path, text) in &files {
        for (n, line) in text.lines().enumerate() {
            let Some(comment) = line.find("//").map(|i| &line[i..]) else { continue };
            let lower = comment.to_lowercase();
            let names_issue = lower
                .match_indices("issue ")
                .any(|(i, _)| lower[i + 6..].chars().next().is_some_and(|c| c.is_ascii_digit()));
            if names_issue || lower.contains("th note") {
                found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "comments that name an issue or a note:\n{}", found.join("\n"));
}
