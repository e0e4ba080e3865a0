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

/// The modules `text` names as `<prefix>NAME` (e.g. `crate::store`), in
/// code, with the line of the first mention of each.
fn mentions(text: &str, prefix: &str, names: &[String]) -> Vec<(String, usize)> {
    let mut found: Vec<(String, usize)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = code(line);
        for (at, _) in line.match_indices(prefix) {
            let rest = &line[at + prefix.len()..];
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if names.contains(&name) && !found.iter().any(|(f, _)| *f == name) {
                found.push((name, n + 1));
            }
        }
    }
    found
}

/// A cycle in `edges` (module -> modules it uses, with where), as the
/// modules in order and the places that make each step; None if none.
fn cycle(edges: &std::collections::BTreeMap<String, Vec<(String, String)>>) -> Option<Vec<String>> {
    fn walk(
        at: &str,
        edges: &std::collections::BTreeMap<String, Vec<(String, String)>>,
        path: &mut Vec<(String, String)>,
        done: &mut std::collections::BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|(m, _)| m == at) {
            let mut c: Vec<String> = path[i..].iter().map(|(m, why)| format!("{m} ({why})")).collect();
            c.push(at.to_string());
            return Some(c);
        }
        if !done.insert(at.to_string()) {
            return None;
        }
        for (to, why) in edges.get(at).into_iter().flatten() {
            path.push((at.to_string(), why.clone()));
            if let Some(c) = walk(to, edges, path, done) {
                return Some(c);
            }
            path.pop();
        }
        None
    }
    let mut done = std::collections::BTreeSet::new();
    edges.keys().find_map(|m| walk(m, edges, &mut Vec::new(), &mut done))
}

/// The module a file belongs to, one level below `within` (a path relative
/// to src/, "" for the crate): `store/sled/open.rs` is `store` in the crate
/// and `sled` within `store`. None for `within`'s own root file.
fn child_of(rel: &Path, within: &Path) -> Option<String> {
    let rest = rel.strip_prefix(within).ok()?;
    let first = rest.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "mod" | "lib" | "main")).then(|| name.to_string())
}

/// No import circles, as layers should be: among the crate's top-level
/// modules (`crate::record` used by `store` while `store` is used by
/// `record`), and among the modules of each directory module (`server/`'s
/// `error`, `observe` and `routes`). A circle means one of the modules is
/// in the wrong place; the binary's `cli/` sits on top and is left out.
#[test]
fn no_import_circles_between_modules() {
    let root = src();
    let files = sources(&root);
    let rel = |p: &Path| p.strip_prefix(&root).unwrap().to_path_buf();
    let mut scopes: Vec<PathBuf> = vec![PathBuf::new()];
    scopes.extend(files.iter().filter_map(|(p, _)| {
        let r = rel(p);
        (r.file_name()? == "mod.rs" && !r.starts_with("cli")).then(|| r.parent().unwrap().to_path_buf())
    }));
    let mut circles = Vec::new();
    for scope in &scopes {
        let mut names: Vec<String> =
            files.iter().filter_map(|(p, _)| child_of(&rel(p), scope)).filter(|n| n != "cli").collect();
        names.sort();
        names.dedup();
        let crate_path = match scope.as_os_str().is_empty() {
            true => "crate::".to_string(),
            false => format!("crate::{}::", scope.display().to_string().replace('/', "::")),
        };
        let mut edges: std::collections::BTreeMap<String, Vec<(String, String)>> = Default::default();
        for (path, text) in &files {
            let r = rel(path);
            let Some(from) = child_of(&r, scope).filter(|n| names.contains(n)) else { continue };
            let mut used = mentions(text, &crate_path, &names);
            // A file directly in the scope (not in a module of its own
            // below it) names its siblings as `super::`.
            let direct = r.parent() == Some(scope.as_path())
                || (r.file_name().is_some_and(|f| f == "mod.rs") && r.parent().and_then(Path::parent) == Some(scope));
            if direct && !scope.as_os_str().is_empty() {
                used.extend(mentions(text, "super::", &names));
            }
            for (to, line) in used {
                if to != from {
                    edges.entry(from.clone()).or_default().push((to, format!("{}:{line}", r.display())));
                }
            }
        }
        if let Some(c) = cycle(&edges) {
            circles.push(format!("in src/{}: {}", scope.display(), c.join(" -> ")));
        }
    }
    assert!(circles.is_empty(), "import circles:\n{}", circles.join("\n"));
}

/// The modules below the crate's top level that are public: the library's
/// interface the binary and the tests use. Everything else below the top
/// level is private to its parent (or to the crate), so that a reader
/// knows what may be called from outside; a module made public is a
/// decision, made here. (`store::chunk` and `store::journal` are public,
/// hidden from the docs, only for the tests that damage or read a store's
/// files on purpose.)
#[test]
fn only_the_interface_modules_are_public() {
    const PUBLIC: &[&str] = &[
        "kernel::moves",
        "proof::bundle",
        "rules::doomtrooper",
        "rules::gurps",
        "rules::rawdeal",
        "rules::riftbound",
        "rules::wtactics",
        "store::checkpoints",
        "store::chunk",
        "store::journal",
        "tlog::merkle",
        "tlog::note",
        "tlog::witness",
    ];
    let root = src();
    let mut public = Vec::new();
    for (path, text) in sources(&root) {
        let rel = path.strip_prefix(&root).unwrap();
        if rel.starts_with("cli") || rel == Path::new("lib.rs") || rel == Path::new("main.rs") {
            continue;
        }
        let parent = match rel.file_name().unwrap() == "mod.rs" {
            true => rel.parent().unwrap().to_path_buf(),
            false => rel.with_extension(""),
        };
        for line in text.lines() {
            if let Some(name) = line.trim().strip_prefix("pub mod ").and_then(|r| r.strip_suffix(';')) {
                public.push(format!("{}::{name}", parent.display().to_string().replace('/', "::")));
            }
        }
    }
    public.sort();
    assert_eq!(public, PUBLIC, "public modules below the top level (make it private, or add it here with why)");
}
