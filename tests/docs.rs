//! The Markdown pages a reader follows: every relative link leads to a file
//! that exists, and every `#anchor` to a heading of its target (GitHub's
//! slugs); the README stays a front page (at most 400 lines) and names the
//! `rust-version` that Cargo.toml declares; and the README's by-hand and
//! adjudication examples run as written.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Parser, Tag, TagEnd};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The pages checked: the top-level ones and every page under docs/.
fn pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> =
        ["README.md", "CONTRIBUTING.md", "ARCHITECTURE.md", "CHANGELOG.md", "benches/README.md"]
            .iter()
            .map(|p| root().join(p))
            .collect();
    let mut dirs = vec![root().join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    pages
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// GitHub's anchor for a heading: its text lower-cased, every character
/// that is not a letter, a digit, a space, `-` or `_` dropped, and spaces
/// made `-`; a repeated anchor gets `-1`, `-2`, ... in order.
fn anchors(markdown: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    let mut text: Option<String> = None;
    for event in Parser::new(markdown) {
        match event {
            Event::Start(Tag::Heading { .. }) => text = Some(String::new()),
            Event::Text(t) | Event::Code(t) if text.is_some() => text.as_mut().unwrap().push_str(&t),
            Event::End(TagEnd::Heading(_)) => {
                let heading = text.take().unwrap();
                let slug: String = heading
                    .to_lowercase()
                    .chars()
                    .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
                    .map(|c| if c == ' ' { '-' } else { c })
                    .collect();
                let mut anchor = slug.clone();
                let mut n = 0;
                while !seen.insert(anchor.clone()) {
                    n += 1;
                    anchor = format!("{slug}-{n}");
                }
            }
            _ => {}
        }
    }
    seen
}

/// Every link and image destination of a page.
fn links(markdown: &str) -> Vec<String> {
    Parser::new(markdown)
        .filter_map(|event| match event {
            Event::Start(Tag::Link { dest_url, .. }) | Event::Start(Tag::Image { dest_url, .. }) => {
                Some(dest_url.into_string())
            }
            _ => None,
        })
        .collect()
}

#[test]
fn every_relative_link_leads_to_a_file_and_every_anchor_to_a_heading() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = read(&page);
        for link in links(&text) {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = match link.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (link.as_str(), None),
            };
            let target = if path.is_empty() { page.clone() } else { page.parent().unwrap().join(path) };
            let name = page.strip_prefix(root()).unwrap().display().to_string();
            if !target.exists() {
                broken.push(format!("{name}: {link}: no such file"));
                continue;
            }
            if let Some(anchor) = anchor {
                if target.extension().is_none_or(|e| e != "md") {
                    broken.push(format!("{name}: {link}: an anchor into a file that is not Markdown"));
                } else if !anchors(&read(&target)).contains(anchor) {
                    broken.push(format!("{name}: {link}: no heading makes #{anchor}"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    // The pages link to one another: a parser that found nothing would pass.
    assert!(checked > 50, "only {checked} relative links found");
}

#[test]
fn anchors_follow_githubs_slugs() {
    let page = "# Running a tournament: `arbiter serve`\n## Durability and recovery, snapshots, limits\n## A\n## A\n### fold_rulesets\n";
    let found = anchors(page);
    for anchor in
        ["running-a-tournament-arbiter-serve", "durability-and-recovery-snapshots-limits", "a", "a-1", "fold_rulesets"]
    {
        assert!(found.contains(anchor), "{anchor} not in {found:?}");
    }
}

#[test]
fn the_readme_is_a_front_page_that_names_the_rust_version() {
    let readme = read(&root().join("README.md"));
    let lines = readme.lines().count();
    assert!(lines <= 400, "README.md has {lines} lines: move reference to docs/");
    let version = env!("CARGO_PKG_RUST_VERSION");
    assert!(!version.is_empty(), "Cargo.toml declares no rust-version");
    assert!(
        readme.contains(&format!("Rust {version} or later")),
        "the README does not say \"Rust {version} or later\", the rust-version of Cargo.toml"
    );
    // Every heading of the README opens with a level-1 title and then level 2.
    let levels: Vec<HeadingLevel> = Parser::new(&readme)
        .filter_map(|e| match e {
            Event::Start(Tag::Heading { level, .. }) => Some(level),
            _ => None,
        })
        .collect();
    assert_eq!(levels.first(), Some(&HeadingLevel::H1));
}

/// The README's shell block that contains `marker`, as written.
fn readme_block(marker: &str) -> String {
    let readme = read(&root().join("README.md"));
    let mut block: Option<String> = None;
    for event in Parser::new(&readme) {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(lang))) if &*lang == "sh" => block = Some(String::new()),
            Event::Text(t) if block.is_some() => block.as_mut().unwrap().push_str(&t),
            Event::End(TagEnd::CodeBlock) => match block.take() {
                Some(b) if b.contains(marker) => return b,
                _ => {}
            },
            _ => {}
        }
    }
    panic!("the README has no sh block with {marker:?}")
}

/// Runs one command line of a README block in bash, with `arbiter` this
/// build's binary on a store in `dir`; its exit code and output.
fn run_line(dir: &Path, line: &str) -> (i32, String) {
    let script = format!("arbiter() {{ \"$ARBITER_BIN\" \"$@\"; }}\n{line}");
    let out = Command::new("bash")
        .current_dir(dir)
        .args(["-c", &script])
        .env("ARBITER_BIN", env!("CARGO_BIN_EXE_arbiter"))
        .env("ARBITER_DATA", dir.join("data"))
        .env_remove("ARBITER_SERVER")
        .env_remove("ARBITER_STORE")
        .env_remove("ARBITER_TOKEN")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), said)
}

/// The command lines of a block (its `#` lines are what they print).
fn commands(block: &str) -> Vec<&str> {
    block.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect()
}

#[test]
fn the_readme_by_hand_example_runs_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let block = readme_block("arbiter append final --actor p2");
    for line in commands(&block) {
        let (code, said) = run_line(dir.path(), line);
        // The block shows p2's pass refused, out of turn: exit 1, nothing stored.
        let expected = if line.contains("--actor p2 '{\"type\":\"pass\"}'") { 1 } else { 0 };
        assert_eq!(code, expected, "{line}\n{said}");
    }
    let (_, said) = run_line(dir.path(), "arbiter head final");
    assert!(said.starts_with("2 "), "{said}");
    assert_eq!(read(&dir.path().join("final.jsonl")).lines().count(), 3);
}

#[test]
fn the_readme_adjudication_example_runs_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let block = readme_block("arbiter decide duel");
    for line in commands(&block) {
        let (code, said) = run_line(dir.path(), line);
        assert_eq!(code, 0, "{line}\n{said}");
        if line.contains("\"what\":\"defenders\"") {
            assert!(said.contains("may act: Dana"), "the game waits for a judge: {said}");
        }
    }
    let (_, state) = run_line(dir.path(), "arbiter state duel");
    for shown in ["rewind to after seq 3", "Eve", "warning", "I meant to block the Orc Raider too"] {
        assert!(state.contains(shown), "state does not show {shown:?}:\n{state}");
    }
}

/// The README names the Debian packages `.ci/run` installs, the same ones:
/// a newcomer installs them by hand from the README's list.
#[test]
fn the_readme_names_the_packages_ci_installs() {
    let run = read(&root().join(".ci/run"));
    let line = run.lines().find_map(|l| l.strip_prefix("packages=(")).expect(".ci/run has a packages=(...) line");
    let packages = line.trim_end_matches(')').trim();
    let readme = read(&root().join("README.md")).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        readme.contains(&format!("`{packages}`")),
        "the README does not name .ci/run's packages as one list: `{packages}`"
    );
}
