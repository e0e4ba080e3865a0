//! The verifiable log (`arbiter::tlog`) checked from outside: roots and
//! proofs by an independent RFC 6962 in Python's hashlib
//! (tests/log/rfc6962.py), signed checkpoints by Python's `cryptography`
//! (tests/log/note.py), a store damaged on disk, a rewritten history against
//! a checkpoint a player kept, the log over HTTP, and bad proof requests
//! that change nothing. tests/oracle.rs checks roots, proofs and checkpoints
//! again in-process, with the crates `tlog_tiles` and `signed_note`.

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use arbiter::event::{Draft, Link, decode, seal};
use arbiter::proof;
use arbiter::record::RecordError;
use arbiter::store::Store;
use arbiter::tlog::merkle;
use arbiter::tlog::note::{NoteVerifier, b64, open_checkpoint, unb64};
use common::logs::{build, checkpoint, export, interleaved, ok, ok_stdin, step, steps, text};
use common::server::Served;
use common::*;
use serde_json::{Value, json};

/// base64 of SHA-256 of nothing: RFC 6962's root of the empty tree.
const EMPTY_ROOT: &str = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=";

// Python, the independent side.

/// Runs `python3 tests/log/SCRIPT ARGS` with `stdin`.
fn python(script: &str, args: &[&Path], stdin: &[u8]) -> Output {
    let mut child = Command::new("python3")
        .arg(repo_file(&format!("tests/log/{script}")))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs (.ci/run relies on it)");
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || input.write_all(&data));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.stderr.is_empty(), "{script}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

fn checks(input: &Value) -> usize {
    ["roots", "inclusion", "consistency"].iter().map(|k| input[k].as_array().map_or(0, Vec::len)).sum()
}

/// Feeds `input` to rfc6962.py: (exit code, one line per check).
fn rfc6962(input: &Value) -> (i32, Vec<String>) {
    let out = python("rfc6962.py", &[], input.to_string().as_bytes());
    let lines: Vec<String> = String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect();
    assert_eq!(lines.len(), checks(input), "one line per check: {lines:#?}");
    (out.status.code().unwrap(), lines)
}

/// The independent RFC 6962 accepts every root and proof in `input`.
#[track_caller]
fn independent_accepts(input: &Value) {
    let (code, lines) = rfc6962(input);
    let rejected: Vec<&String> = lines.iter().filter(|l| !l.starts_with("ok ")).collect();
    assert!(rejected.is_empty() && code == 0, "rfc6962.py rejected (exit {code}): {rejected:#?}");
}

/// The independent RFC 6962 rejects every proof in `input`: each of
/// `what` (one per inclusion check, then one per consistency check).
#[track_caller]
fn independent_rejects(input: &Value, what: &[String]) {
    let (code, lines) = rfc6962(input);
    assert_eq!(lines.len(), what.len());
    for (line, what) in lines.iter().zip(what) {
        assert!(line.starts_with("REJECTED "), "rfc6962.py accepted a tampered proof ({what}): {line}");
    }
    assert_eq!(code, 1);
}

/// Runs note.py on `notes` with the verifier key `key`: (exit code, one line per note).
fn note_py(key: &str, notes: &[String]) -> (i32, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("key");
    std::fs::write(&key_file, key).unwrap();
    let mut files = vec![key_file];
    for (i, n) in notes.iter().enumerate() {
        let f = dir.path().join(format!("note{i}"));
        std::fs::write(&f, n).unwrap();
        files.push(f);
    }
    let args: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let out = python("note.py", &args, b"");
    let lines: Vec<String> = String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect();
    assert_eq!(lines.len(), notes.len(), "one line per note: {lines:#?}");
    (out.status.code().unwrap(), lines)
}

// Games and stores.

/// A base64 hash with one bit changed.
fn flip(hash: &Value) -> Value {
    let mut raw = unb64(hash.as_str().unwrap()).unwrap();
    raw[7] ^= 0x01;
    json!(b64(&raw))
}

// 1. RFC 6962, independently.

/// Proofs changed in every way that must fail: each hash of a path, the
/// index, the leaf, the path's length, the size proved from. Returns the
/// tampered inclusion and consistency checks and a description of each.
fn tampered(
    leaves: &[&str],
    inclusion: &[Value],
    consistency: &[Value],
    roots: &BTreeMap<u64, Value>,
) -> (Vec<Value>, Vec<Value>, Vec<String>) {
    let n = leaves.len() as u64;
    let (mut inc, mut con, mut what) = (Vec::new(), Vec::new(), Vec::new());
    // Leaves first, in the middle and last, in the whole tree.
    let mut chosen: Vec<u64> = vec![0, n / 2, n.saturating_sub(1)];
    chosen.dedup();
    for c in inclusion.iter().filter(|c| c["size"] == json!(n) && chosen.contains(&c["index"].as_u64().unwrap())) {
        let (i, path) = (c["index"].as_u64().unwrap(), c["path"].as_array().unwrap());
        let mut push = |why: String, mut case: Value| {
            case.as_object_mut().unwrap().remove("leaf");
            inc.push(case);
            what.push(format!("leaf {i} of {n}: {why}"));
        };
        for k in 0..path.len() {
            let mut t = c.clone();
            t["path"][k] = flip(&path[k]);
            push(format!("path hash {k} changed"), t);
        }
        if n >= 2 {
            for wrong in [(i + 1) % n, (i + n - 1) % n] {
                let mut t = c.clone();
                t["index"] = json!(wrong);
                push(format!("index {wrong} claimed"), t);
            }
            let mut t = c.clone();
            t["data"] = json!(leaves[((i + 1) % n) as usize]);
            push("another event's line".into(), t);
        }
        let mut t = c.clone();
        t["data"] = json!(leaves[i as usize].replacen("\"v\":1", "\"v\":2", 1));
        push("its line changed".into(), t);
        let mut t = c.clone();
        t["index"] = json!(n);
        push("an index past the tree".into(), t);
        if !path.is_empty() {
            let mut t = c.clone();
            t["path"].as_array_mut().unwrap().pop();
            push("its path cut short".into(), t);
        }
        let mut t = c.clone();
        t["path"].as_array_mut().unwrap().push(roots[&n].clone());
        push("its path made longer".into(), t);
    }
    for c in consistency.iter().filter(|c| c["to"] == json!(n)) {
        let (m, path) = (c["from"].as_u64().unwrap(), c["path"].as_array().unwrap());
        let mut push = |why: String, case: Value| {
            con.push(case);
            what.push(format!("consistency {m} to {n}: {why}"));
        };
        if m == n {
            if m > 0 {
                let mut t = c.clone();
                t["path"] = json!([roots[&n]]);
                push("a path between equal trees".into(), t);
            }
            continue;
        }
        if m == 0 {
            let mut t = c.clone();
            t["path"] = json!([roots[&n]]);
            push("a path from the empty tree".into(), t);
            continue;
        }
        for k in 0..path.len() {
            let mut t = c.clone();
            t["path"][k] = flip(&path[k]);
            push(format!("path hash {k} changed"), t);
        }
        let mut t = c.clone();
        t["path"] = json!([]);
        push("no path".into(), t);
        let mut t = c.clone();
        t["path"].as_array_mut().unwrap().pop();
        push("its path cut short".into(), t);
        let mut t = c.clone();
        t["path"].as_array_mut().unwrap().push(roots[&m].clone());
        push("its path made longer".into(), t);
        if m >= 2 {
            // The proof of another first tree, with that tree's true root.
            let mut t = c.clone();
            t["from"] = json!(m - 1);
            t["from_root"] = roots[&(m - 1)].clone();
            push(format!("claimed from {}", m - 1), t);
        }
    }
    (inc, con, what)
}

#[test]
fn roots_and_every_proof_check_with_an_independent_rfc6962_and_tampered_ones_do_not() {
    // Logs of several games stored in turn, of sizes that are mostly not
    // powers of two, and the empty log. Every prefix of each is a tree too.
    let shapes: &[&[u64]] = &[&[], &[1], &[1, 1], &[2, 1], &[3, 2], &[4, 2, 1], &[3, 3, 2], &[6, 4, 3], &[13, 11, 7]];
    for lengths in shapes {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("store");
        let order = build(&d, lengths);
        let n = order.len() as u64;
        // The checkpoint the CLI signs: the empty store's too.
        let cp = checkpoint(&d);
        assert_eq!(cp["size"], json!(n), "{cp}");
        if n == 0 {
            assert_eq!(cp["root"], json!(EMPTY_ROOT), "the empty log's root is SHA-256 of nothing: {cp}");
        }
        // The leaves: each event's exported line, in the order stored.
        let exports: BTreeMap<String, Vec<String>> =
            (0..lengths.len()).map(|i| format!("g{i}")).map(|g| (g.clone(), export(&d, &g))).collect();
        let leaves: Vec<&str> = order.iter().map(|(g, s)| exports[g][*s as usize].as_str()).collect();

        let store = open_store(&d);
        assert_eq!(store.log_size().unwrap(), n);
        let mut roots = BTreeMap::new();
        let (mut inclusion, mut consistency) = (Vec::new(), Vec::new());
        for size in 0..=n {
            roots.insert(size, proof::consistency(&store, 0, size).unwrap()["to_root"].clone());
            for (index, (game, seq)) in order.iter().enumerate() {
                let index = index as u64;
                let p = proof::inclusion(&store, game, Some(*seq), size);
                if index >= size {
                    assert!(matches!(p, Err(RecordError::Input(_))), "{game} {seq} is not in tree {size}: {p:?}");
                    continue;
                }
                let p = p.unwrap();
                assert_eq!(
                    (&p["game"], &p["seq"], &p["leaf_index"], &p["size"]),
                    (&json!(game), &json!(seq), &json!(index), &json!(size)),
                    "the leaf's position is the order the events were stored in"
                );
                inclusion.push(json!({"data": leaves[index as usize], "index": index, "size": size,
                    "root": p["root"], "path": p["inclusion"], "leaf": p["leaf"]}));
            }
            for from in 0..=size {
                let c = proof::consistency(&store, from, size).unwrap();
                consistency.push(json!({"from": from, "to": size, "from_root": c["from_root"],
                    "to_root": c["to_root"], "path": c["consistency"]}));
            }
        }
        assert_eq!(roots[&n], cp["root"], "the signed root is the log's");
        assert!(matches!(proof::consistency(&store, 0, n + 1), Err(RecordError::Input(_))), "no tree past the log");
        let mut claimed: Vec<Value> = roots.iter().map(|(size, root)| json!({"size": size, "root": root})).collect();
        claimed.push(json!({"size": n, "root": cp["root"]}));
        let input = json!({"leaves": leaves, "roots": claimed, "inclusion": inclusion, "consistency": consistency});
        independent_accepts(&input);

        let (inc, con, what) = tampered(&leaves, &inclusion, &consistency, &roots);
        // arbiter's own checks refuse them too.
        let hash = |h: &Value| -> [u8; 32] { unb64(h.as_str().unwrap()).unwrap().try_into().unwrap() };
        let path = |c: &Value| -> Vec<[u8; 32]> { c["path"].as_array().unwrap().iter().map(hash).collect() };
        let num = |c: &Value, k: &str| c[k].as_u64().unwrap();
        for (c, what) in inc.iter().zip(&what) {
            let leaf = merkle::leaf_hash(c["data"].as_str().unwrap().as_bytes());
            let checked = merkle::verify_inclusion(&leaf, num(c, "index"), num(c, "size"), &path(c), &hash(&c["root"]));
            assert!(checked.is_err(), "arbiter accepted a tampered proof ({what})");
        }
        for (c, what) in con.iter().zip(&what[inc.len()..]) {
            let (from, to) = (num(c, "from"), num(c, "to"));
            let checked = merkle::verify_consistency(from, to, &hash(&c["from_root"]), &hash(&c["to_root"]), &path(c));
            assert!(checked.is_err(), "arbiter accepted a tampered proof ({what})");
        }
        if n > 0 {
            assert!(!inc.is_empty() && !con.is_empty(), "something was tampered with for size {n}");
            independent_rejects(&json!({"leaves": leaves, "inclusion": inc, "consistency": con}), &what);
        }
    }
}

// 2. Ed25519, independently.

#[test]
fn a_checkpoint_verifies_with_an_independent_ed25519_and_any_changed_byte_fails() {
    if !common::has(common::Need::PythonCryptography) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("open-2026");
    ok(&d, &["demo"]);
    let note = ok(&d, &["checkpoint"]);
    let key = ok(&d, &["checkpoint", "--public-key"]).trim().to_string();
    let cp = checkpoint(&d);
    assert_eq!(cp["new"], json!(false), "demo signed a checkpoint of its events already");
    assert_eq!(note, cp["checkpoint"].as_str().unwrap(), "`checkpoint` prints the note byte for byte");
    assert_eq!(key, cp["key"].as_str().unwrap());
    assert!(key.starts_with("localhost/arbiter/open-2026+"), "{key}");

    let (code, lines) = note_py(&key, std::slice::from_ref(&note));
    assert_eq!(
        (code, lines[0].as_str()),
        (0, format!("ok localhost/arbiter/open-2026 113 {}", cp["root"].as_str().unwrap()).as_str()),
        "note.py: {lines:?}"
    );

    // Every ASCII byte changed in turn (the signed text, the blank line, the
    // signature line), and the em dash replaced: each fails, in Python and in arbiter.
    let verifier = NoteVerifier::parse(&key).unwrap();
    let mut forged = Vec::new();
    for (i, b) in note.bytes().enumerate() {
        if b.is_ascii() {
            let mut bytes = note.clone().into_bytes();
            bytes[i] ^= 0x01;
            forged.push(String::from_utf8(bytes).unwrap());
        }
    }
    forged.push(note.replacen('\u{2014}', "-", 1));
    assert!(forged.len() > 100, "the whole note was changed, byte by byte");
    for f in &forged {
        assert!(open_checkpoint(&verifier, f).is_err(), "arbiter accepted a changed note:\n{f}");
    }
    let (code, lines) = note_py(&key, &forged);
    for (line, f) in lines.iter().zip(&forged) {
        assert!(line.starts_with("REJECTED: "), "note.py accepted a changed note ({line}):\n{f}");
    }
    assert_eq!(code, 1);

    // A key whose id is not its hash; another store's key with the same name.
    let (name, rest) = key.split_once('+').unwrap();
    let (_, public) = rest.split_once('+').unwrap();
    let (code, lines) = note_py(&format!("{name}+00000000+{public}"), std::slice::from_ref(&note));
    assert_eq!(code, 1);
    assert!(lines[0].contains("key id"), "{lines:?}");
    let other = dir.path().join("elsewhere").join("open-2026");
    ok(&other, &["checkpoint"]);
    let other_key = ok(&other, &["checkpoint", "--public-key"]).trim().to_string();
    assert!(other_key.starts_with(&format!("{name}+")), "the same log name, another key");
    let (code, lines) = note_py(&other_key, std::slice::from_ref(&note));
    assert_eq!(code, 1, "{lines:?}");
}

// 3. A damaged store.

/// Runs arbiter with a time limit (a damaged file must not hang it).
fn arbiter_within(data: &Path, args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .env_remove("ARBITER_SERVER")
        .env_remove("ARBITER_TOKEN")
        .arg("--data")
        .arg(data)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            panic!("arbiter {args:?} on {} took longer than {limit:?}", data.display());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

fn copy_store(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "serve.pid" {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            copy_store(&entry.path(), &to.join(&name));
        } else {
            std::fs::copy(entry.path(), to.join(&name)).unwrap();
        }
    }
}

/// What `verify --all` said of a store.
#[derive(Debug, PartialEq)]
enum Verdict {
    /// Exit 0: each game's (events, head).
    Ok(Vec<(String, u64, String)>),
    /// Exit 1 with the code "lost": the message.
    Lost(String),
    /// Anything else: exit code, code, message.
    Failed(Option<i32>, String, String),
}

fn verdict(out: &Output) -> Verdict {
    let lines: Vec<Value> = text(&out.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    if out.status.success() {
        return Verdict::Ok(
            lines
                .iter()
                // One line per game; `verify --all` then adds one for the log.
                .filter(|v| v.get("log").is_none())
                .map(|v| {
                    (
                        v["game"].as_str().unwrap().to_string(),
                        v["events"].as_u64().unwrap(),
                        v["head"].as_str().unwrap().to_string(),
                    )
                })
                .collect(),
        );
    }
    let error = lines.iter().find_map(|v| v.get("error")).cloned().unwrap_or_default();
    let code = error["code"].as_str().unwrap_or_default().to_string();
    let message = error["message"].as_str().map_or_else(|| text(&out.stderr), str::to_string);
    if code == "lost" && out.status.code() == Some(1) {
        Verdict::Lost(message)
    } else {
        Verdict::Failed(out.status.code(), code, message)
    }
}

/// "lost events X..Y of game G": (X, Y, G).
fn lost_range(message: &str) -> Option<(u64, u64, String)> {
    let rest = &message[message.find("lost events ")? + "lost events ".len()..];
    let (range, rest) = rest.split_once(" of game ")?;
    let (x, y) = range.split_once("..")?;
    let game: String = rest.chars().take_while(|c| !c.is_whitespace() && *c != ',').collect();
    Some((x.parse().ok()?, y.parse().ok()?, game))
}

#[test]
fn a_store_damaged_on_disk_never_verifies_ok_with_events_missing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("store");
    let mut s = Served::start(&d);
    s.doomtrooper("g1", "public");
    let p1 = s.token("g1", "seat", "p1");
    let p2 = s.token("g1", "seat", "p2");
    for seq in 1..=60 {
        let (actor, action) = step(seq);
        let token = if actor == "p1" { &p1 } else { &p2 };
        let (status, v) = s.append("g1", token, actor, action, seq);
        assert_eq!(status, 201, "{v}");
    }
    let head = s.head("g1")["hash"].as_str().unwrap().to_string();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, _, note) = s.get_text("/checkpoint", None);
        if status == 200 && note.lines().nth(1) == Some("61") {
            break;
        }
        assert!(Instant::now() < deadline, "no checkpoint of the 61 events: {note}");
        std::thread::sleep(Duration::from_millis(100));
    }
    // Stopped (SIGTERM): the close writes every event into sled and
    // empties the journal, so sled's file alone holds them. (While the
    // journal holds them, as after a crash, an open puts back from it
    // what a damaged sled lost: the case below needs a store without.)
    assert!(s.stop().success());
    let journaled = arbiter::store::journal::read(&d.join(arbiter::store::journal::FILE)).unwrap();
    assert_eq!(journaled.records.len(), 0, "the close emptied the journal");
    let whole = Verdict::Ok(vec![("g1".to_string(), 61, head.clone())]);
    let copy = dir.path().join("intact");
    copy_store(&d, &copy);
    assert_eq!(verdict(&arbiter_within(&copy, &["--json", "verify", "--all"], Duration::from_secs(30))), whole);

    // One byte flipped at each of offsets spread over the used part of sled's file.
    let db = std::fs::read(d.join("db")).unwrap();
    let used: Vec<usize> = (0..db.len()).filter(|&i| db[i] != 0).collect();
    assert!(used.len() > 1000, "the db file holds the events: {} bytes used", used.len());
    // The first and the last used byte, and one in the middle of each of 30 equal parts.
    const PARTS: usize = 30;
    let mut offsets = vec![used[0]];
    offsets.extend((0..PARTS).map(|k| used[k * used.len() / PARTS + used.len() / (2 * PARTS)]));
    offsets.push(used[used.len() - 1]);
    let mut lost = 0;
    let mut seen = Vec::new();
    for offset in offsets {
        let damaged = dir.path().join(format!("flip-{offset}"));
        copy_store(&d, &damaged);
        let mut bytes = db.clone();
        bytes[offset] ^= 0xff;
        std::fs::write(damaged.join("db"), &bytes).unwrap();
        let mut verdicts = Vec::new();
        for _ in 0..2 {
            let out = arbiter_within(&damaged, &["--json", "verify", "--all"], Duration::from_secs(30));
            verdicts.push(verdict(&out));
        }
        for v in &verdicts {
            match v {
                Verdict::Ok(_) => assert_eq!(v, &whole, "offset {offset}: verified OK with events missing or changed"),
                Verdict::Lost(m) if m.contains("lost events") => {
                    let (from, to, game) =
                        lost_range(m).unwrap_or_else(|| panic!("offset {offset}: no range in {m:?}"));
                    assert_eq!((to, game.as_str()), (60, "g1"), "offset {offset}: {m}");
                    assert!(from <= to, "offset {offset}: {m}");
                    assert!(m.contains("since checkpoint 61"), "offset {offset}: {m}");
                }
                Verdict::Lost(_) | Verdict::Failed(..) => {}
            }
        }
        // A second open finds the store as the first left it: never OK after a loss.
        if let Verdict::Lost(_) = &verdicts[0] {
            assert_eq!(verdicts[1], verdicts[0], "offset {offset}: the second open said otherwise");
        }
        if matches!(&verdicts[0], Verdict::Lost(m) if m.contains("lost events")) {
            lost += 1;
        }
        seen.push((offset, verdicts));
        std::fs::remove_dir_all(&damaged).unwrap();
    }
    eprintln!("{seen:#?}");
    assert!(lost > 0, "no flipped byte lost events (the case this test is for): {seen:#?}");
}

// 4. A rewritten history.

/// The export `lines` with event `at`'s card changed and every event
/// from it on sealed again (same actors, actions and times), so that the
/// BLAKE3 chain verifies: what an organiser who rewrites a game can make.
fn forge(lines: &[String], at: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut prev: Option<Link> = None;
    for (seq, line) in lines.iter().enumerate() {
        let (mut event, _) = decode(line).unwrap();
        if seq >= at {
            if seq == at {
                event.action["card"] = json!("Nullify");
            }
            let draft = Draft { actor: event.actor.clone(), action: event.action.clone(), at: Some(event.at.clone()) };
            let (sealed, bytes) = seal(&draft, prev.as_ref(), chrono::Utc::now()).unwrap();
            event = sealed;
            out.push(String::from_utf8(bytes).unwrap());
        } else {
            out.push(line.clone());
        }
        prev = Some(event.link());
    }
    out
}

fn write_lines(path: &Path, lines: &[String]) {
    std::fs::write(path, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
}

#[track_caller]
fn verify_bundle(data: &Path, args: &[&str]) -> Output {
    let mut all = vec!["verify-bundle"];
    all.extend_from_slice(args);
    arbiter(data, &all)
}

#[test]
fn a_rewritten_history_fails_against_the_checkpoint_a_player_kept() {
    let root = tempfile::tempdir().unwrap();
    let path = |p: &str| root.path().join(p);
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let a = path("a");
    ok(&a, &["new", "g", "--ruleset", "doomtrooper", "--seat", "p1=Ann", "--seat", "p2=Ben", "--judge", "Dana"]);
    ok_stdin(&a, &["append", "g", "-"], &steps(1..=20));
    // A player keeps the checkpoint of the 21 events (and the key the organiser published).
    let kept = path("K.cp");
    std::fs::write(&kept, ok(&a, &["checkpoint"])).unwrap();
    let key = ok(&a, &["checkpoint", "--public-key"]).trim().to_string();
    let key_file = path("log.pub");
    std::fs::write(&key_file, format!("{key}\n")).unwrap();
    let genuine = export(&a, "g");
    assert_eq!(genuine.len(), 21);
    let checkpoints_at_k = std::fs::read(a.join("checkpoints")).unwrap();
    // The organiser goes on.
    ok_stdin(&a, &["append", "g", "-"], &steps(21..=30));

    // A genuine bundle proves the game and that the log still extends K.
    let bundle = path("a.bundle");
    ok(&a, &["prove", "g", "--kept", &s(&kept), "-o", &s(&bundle)]);
    for expect in [key.clone(), s(&key_file)] {
        let out = verify_bundle(&a, &[&s(&bundle), "--kept", &s(&kept), "--expect-key", &expect]);
        assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
        assert!(text(&out.stdout).contains("still extends your kept checkpoint 21"), "{}", text(&out.stdout));
    }
    let b: Value = serde_json::from_str(&std::fs::read_to_string(&bundle).unwrap()).unwrap();
    assert_eq!((&b["seq"], &b["kept"]["from"]), (&json!(30), &json!(21)));
    // Any change to it fails (exit 1); what is not a bundle is bad input (exit 2).
    let mut changed_export = b.clone();
    changed_export["export"] = json!(b["export"].as_str().unwrap().replacen("Cancel", "Cancal", 1));
    let mut changed_hash = b.clone();
    changed_hash["inclusion"][0] = flip(&b["inclusion"][0]);
    let mut changed_kept = b.clone();
    changed_kept["kept"]["consistency"][0] = flip(&b["kept"]["consistency"][0]);
    for (what, forged) in
        [("an export byte", changed_export), ("an inclusion hash", changed_hash), ("a consistency hash", changed_kept)]
    {
        let f = path("changed.bundle");
        std::fs::write(&f, serde_json::to_string_pretty(&forged).unwrap()).unwrap();
        let out = verify_bundle(&a, &[&s(&f), "--kept", &s(&kept), "--expect-key", &key]);
        assert_eq!(out.status.code(), Some(1), "{what} changed: {}{}", text(&out.stdout), text(&out.stderr));
        assert!(text(&out.stdout).starts_with("FAILED: "), "{what}: {}", text(&out.stdout));
    }
    let other_key = {
        let o = path("other");
        ok(&o, &["checkpoint", "--public-key"]).trim().to_string()
    };
    let out = verify_bundle(&a, &[&s(&bundle), "--expect-key", &other_key]);
    assert_eq!(out.status.code(), Some(1), "another log's key: {}", text(&out.stdout));
    for not_a_bundle in [kept.clone(), key_file.clone()] {
        let out = verify_bundle(&a, &[&s(&not_a_bundle)]);
        assert_eq!(out.status.code(), Some(2), "{}: {}", not_a_bundle.display(), text(&out.stderr));
        assert!(text(&out.stderr).contains("not a bundle"), "{}", text(&out.stderr));
    }

    // A published key that is not a key is bad input, named by the option it came from.
    let out = verify_bundle(&a, &[&s(&bundle), "--expect-key", "not-a-key"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("--expect-key: not a key"), "{}", text(&out.stderr));

    // The forged game: event 5's card changed, every later event sealed again.
    let forged = forge(&genuine, 5);
    assert_eq!(forged[..5], genuine[..5]);
    assert!(forged[5..].iter().zip(&genuine[5..]).all(|(f, g)| f != g), "every event from 5 on differs");
    let forged_file = path("g.jsonl");
    write_lines(&forged_file, &forged);
    ok(&a, &["verify-file", &s(&forged_file)]);

    // B: the forged game, with A's checkpoint file and key as they were at K.
    let b_dir = path("b");
    ok(&b_dir, &["import", &s(&forged_file), "--as", "g"]);
    std::fs::write(b_dir.join("checkpoints"), &checkpoints_at_k).unwrap();
    std::fs::copy(a.join("log.key"), b_dir.join("log.key")).unwrap();
    for verb in [&["verify", "--all"][..], &["head", "g"], &["checkpoint"]] {
        let out = arbiter(&b_dir, verb);
        assert_eq!(out.status.code(), Some(1), "{verb:?} on the forged store: {}", text(&out.stderr));
        let err = text(&out.stderr);
        assert!(err.contains("event 20 of game g") && err.contains("differ"), "{verb:?}: {err}");
    }

    // C: the forged game under the same key, but with no checkpoint file of
    // A's: it signs its own checkpoints, and grows past K.
    let c_dir = path("c");
    std::fs::create_dir_all(&c_dir).unwrap();
    std::fs::copy(a.join("log.key"), c_dir.join("log.key")).unwrap();
    ok(&c_dir, &["import", &s(&forged_file), "--as", "g"]);
    ok_stdin(&c_dir, &["append", "g", "-"], &steps(21..=30));
    assert_eq!(checkpoint(&c_dir)["key"], json!(key), "C signs with the organiser's key");
    // `prove --kept` refuses: K is not a prefix of C's log.
    let out = arbiter(&c_dir, &["prove", "g", "--kept", &s(&kept), "-o", &s(&path("c-kept.bundle"))]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("not a prefix"), "{}", text(&out.stderr));
    assert!(!path("c-kept.bundle").exists());
    // A bundle from C checks alone (the same key signed it) ...
    let c_bundle = path("c.bundle");
    ok(&c_dir, &["prove", "g", "-o", &s(&c_bundle)]);
    let out = verify_bundle(&a, &[&s(&c_bundle), "--expect-key", &key]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    // ... but no consistency proof C can make leads from K to it.
    let mut cb: Value = serde_json::from_str(&std::fs::read_to_string(&c_bundle).unwrap()).unwrap();
    let size = {
        let store = open_store(&c_dir);
        let size = store.log_size().unwrap();
        cb["kept"] = serde_json::to_value(proof::kept(&store, 21, size).unwrap()).unwrap();
        size
    };
    assert_eq!(size, 31);
    std::fs::write(&c_bundle, serde_json::to_string(&cb).unwrap()).unwrap();
    let out = verify_bundle(&a, &[&s(&c_bundle), "--kept", &s(&kept), "--expect-key", &key]);
    assert_eq!(out.status.code(), Some(1), "{}{}", text(&out.stdout), text(&out.stderr));
    assert!(text(&out.stdout).contains("the log was rewritten"), "{}", text(&out.stdout));
}

#[test]
fn the_same_events_stored_in_another_order_fail_against_the_checkpoint() {
    // Every game's events are unchanged, but the log's order is not what
    // was signed: only the root shows it.
    let root = tempfile::tempdir().unwrap();
    let a = root.path().join("a");
    build(&a, &[4, 3]);
    let cp = checkpoint(&a);
    assert_eq!(cp["size"], json!(7));
    let b = root.path().join("b");
    for game in ["g0", "g1"] {
        let file = root.path().join(format!("{game}.jsonl"));
        write_lines(&file, &export(&a, game));
        ok(&b, &["import", file.to_str().unwrap()]);
    }
    assert_ne!(checkpoint(&b)["root"], cp["root"], "another order is another tree");
    std::fs::copy(a.join("checkpoints"), b.join("checkpoints")).unwrap();
    std::fs::copy(a.join("log.key"), b.join("log.key")).unwrap();
    let out = arbiter(&b, &["verify", "--all"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("the store's log differs from checkpoint 7"), "{}", text(&out.stderr));
}

// 5. Over HTTP.

#[test]
fn the_log_over_http_checks_independently_and_a_token_only_games_proof_needs_a_token() {
    if !common::has(common::Need::PythonCryptography) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(dir.path());
    let (order, tokens) = interleaved(&s, ("open", "secret"), "token", 8, 6);
    let n = order.len() as u64;
    assert_eq!(n, 16);

    // The checkpoint: text/plain, signed by the key the log publishes.
    let (status, kind, note) = s.get_text("/checkpoint", None);
    assert_eq!(status, 200);
    assert!(kind.starts_with("text/plain"), "{kind}");
    let (status, log) = s.get("/api/log", None);
    assert_eq!(status, 200, "{log}");
    assert_eq!((&log["size"], log["checkpoint"].as_str()), (&json!(n), Some(note.as_str())));
    let key = log["key"].as_str().unwrap();
    let (code, lines) = note_py(key, std::slice::from_ref(&note));
    assert_eq!(code, 0, "{lines:?}");
    assert!(lines[0].starts_with(&format!("ok {} {n} ", log["origin"].as_str().unwrap())), "{lines:?}");
    let signed = open_checkpoint(&NoteVerifier::parse(key).unwrap(), &note).unwrap();
    assert_eq!(signed.size, n);

    // The leaves, from the exports (the secret game's with its seat's token).
    let secret = tokens[&("secret", "p1")].as_str();
    let exports: BTreeMap<&str, Vec<String>> = [("open", None), ("secret", Some(secret))]
        .into_iter()
        .map(|(g, t)| {
            let (status, _, body) = s.get_text(&format!("/api/games/{g}/export"), t);
            assert_eq!(status, 200);
            (g, body.lines().map(str::to_string).collect())
        })
        .collect();
    let leaves: Vec<&str> = order.iter().map(|(g, seq)| exports[g][*seq as usize].as_str()).collect();

    // Every leaf's inclusion proof at every size that holds it; the default
    // size is the latest checkpoint's.
    let mut inclusion = Vec::new();
    for size in 1..=n {
        for (index, (game, seq)) in order.iter().enumerate().take(size as usize) {
            let (status, p) =
                s.get(&format!("/api/proof/inclusion?game={game}&seq={seq}&size={size}"), Some(&s.organiser));
            assert_eq!(status, 200, "{p}");
            assert_eq!(p["leaf_index"], json!(index));
            inclusion.push(json!({"data": leaves[index], "index": index, "size": size,
                "root": p["root"], "path": p["inclusion"], "leaf": p["leaf"]}));
        }
    }
    let (status, p) = s.get("/api/proof/inclusion?game=open", None);
    assert_eq!((status, &p["size"], &p["seq"], &p["root"]), (200, &json!(n), &json!(8), &json!(b64(&signed.root))));
    let mut consistency = Vec::new();
    for to in 0..=n {
        for from in 0..=to {
            let (status, c) = s.get(&format!("/api/proof/consistency?from={from}&to={to}"), None);
            assert_eq!(status, 200, "{c}");
            consistency.push(json!({"from": from, "to": to, "from_root": c["from_root"],
                "to_root": c["to_root"], "path": c["consistency"]}));
        }
    }
    let (status, c) = s.get("/api/proof/consistency?from=3", None);
    assert_eq!((status, &c["to"]), (200, &json!(n)));
    let roots = vec![json!({"size": n, "root": b64(&signed.root)}), json!({"size": 0, "root": EMPTY_ROOT})];
    independent_accepts(&json!({"leaves": leaves, "roots": roots, "inclusion": inclusion, "consistency": consistency}));

    // A token-only game's proofs need a token that reads it.
    let stranger = tokens[&("open", "p1")].as_str();
    for path in [
        "/api/proof/inclusion?game=secret",
        "/api/proof/inclusion?game=secret&seq=2&size=6",
        "/api/proof/bundle?game=secret",
    ] {
        assert_eq!(s.get(path, None).0, 401, "{path} without a token");
        assert_eq!(s.get(path, Some(stranger)).0, 403, "{path} with another game's token");
        assert_eq!(s.get(path, Some(secret)).0, 200, "{path} with the game's seat token");
    }
    assert_eq!(s.get("/api/proof/inclusion?game=open&seq=2", None).0, 200, "a public game's needs none");
    let (status, bundle) = s.get("/api/proof/bundle?game=open&kept=5", None);
    assert_eq!(status, 200, "{bundle}");
    assert_eq!(bundle["kept"]["from"], json!(5));
}

// 6. Bad requests change nothing.

#[test]
fn bad_proof_requests_change_neither_the_head_nor_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Served::start(dir.path());
    s.doomtrooper("g", "public");
    let p1 = s.token("g", "seat", "p1");
    let p2 = s.token("g", "seat", "p2");
    for seq in 1..=5 {
        let (actor, action) = step(seq);
        assert_eq!(s.append("g", if actor == "p1" { &p1 } else { &p2 }, actor, action, seq).0, 201);
    }
    let state = |s: &Served| {
        let (_, log) = s.get("/api/log", None);
        (s.head("g")["hash"].as_str().unwrap().to_string(), log["size"].clone(), log["checkpoint"].clone())
    };
    let before = state(&s);
    assert_eq!(before.1, json!(6));
    let cases = [
        ("/api/proof/inclusion?game=g&size=7", 400),
        ("/api/proof/inclusion?game=g&seq=6", 400),
        ("/api/proof/inclusion?game=g&seq=99999999999999999999", 400),
        ("/api/proof/inclusion?game=g&seq=abc", 400),
        ("/api/proof/inclusion?game=g&seq=-1", 400),
        ("/api/proof/inclusion?game=g&seq=4&size=3", 400),
        ("/api/proof/inclusion?game=g&size=x", 400),
        ("/api/proof/inclusion?seq=1", 400),
        ("/api/proof/inclusion?game=nosuch", 404),
        ("/api/proof/consistency?from=4&to=2", 400),
        ("/api/proof/consistency?from=1&to=7", 400),
        ("/api/proof/consistency?from=7", 400),
        ("/api/proof/consistency?from=x&to=2", 400),
        ("/api/proof/consistency", 400),
        ("/api/proof/bundle?game=g&kept=7", 400),
        ("/api/proof/bundle?game=g&seq=6", 400),
        ("/api/proof/bundle?game=g&seq=x", 400),
    ];
    for (path, expected) in cases {
        let (status, v) = s.get(path, None);
        assert_eq!(status, expected, "{path}: {v}");
        assert!(v["error"]["code"].is_string(), "{path}: a coded error: {v}");
        assert_eq!(state(&s), before, "{path} changed the game or the log");
    }
    // The store still takes the next event where it was.
    let (actor, action) = step(6);
    assert_eq!(s.append("g", if actor == "p1" { &p1 } else { &p2 }, actor, action, 6).0, 201);
    let after = state(&s);
    assert_eq!(after.1, json!(7));
    s.stop();

    // The same through the CLI: each refused, nothing signed or stored.
    let d = dir.path();
    let lines = |d: &Path| std::fs::read_to_string(d.join("checkpoints")).unwrap().lines().count();
    let (head, signed) = (ok(d, &["head", "g"]), lines(d));
    let garbage = d.join("garbage.cp");
    std::fs::write(&garbage, "not a checkpoint\n").unwrap();
    for (args, code) in [
        (vec!["prove", "g", "--seq", "7"], 2),
        (vec!["prove", "nosuch"], 2),
        (vec!["prove", "g", "--kept", garbage.to_str().unwrap()], 2),
        (vec!["prove", "g", "--kept", d.join("missing.cp").to_str().unwrap()], 2),
    ] {
        let out = arbiter(d, &args);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", text(&out.stderr));
        assert_eq!((ok(d, &["head", "g"]), lines(d)), (head.clone(), signed), "{args:?} changed something");
    }
    let cp = checkpoint(d);
    assert_eq!((&cp["size"], &cp["new"], &cp["checkpoint"]), (&json!(7), &json!(false), &after.2));
    let store = open_store(d);
    assert!(matches!(proof::inclusion(&store, "g", Some(7), 7), Err(RecordError::Input(_))));
    assert!(matches!(proof::inclusion(&store, "g", None, 8), Err(RecordError::Input(_))));
    assert!(matches!(proof::consistency(&store, 8, 7), Err(RecordError::Input(_))));
    assert_eq!(store.log_size().unwrap(), 7);
    assert_eq!(store.head("g").unwrap().unwrap().seq, 6);
}
