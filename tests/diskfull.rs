//! A full disk and read-only media: reading verbs still read, a failed
//! open leaves the store as it was (and openable once space is freed), and
//! a batch cut short by a full disk says exactly what it stored.
//!
//! How a store's writes are made to fail, deterministically, with nothing
//! timed:
//!
//! - A small tmpfs, filled to the last byte (a real ENOSPC) or remounted
//!   read-only (a real EROFS), when this process may mount one (root with
//!   CAP_SYS_ADMIN; most CI containers may not).
//! - RLIMIT_FSIZE on the child `arbiter`, with SIGXFSZ ignored, so that a
//!   write past the limit fails with EFBIG: a simulated full disk that
//!   works anywhere. It limits every file the child writes, a copy in
//!   /dev/shm too, so it cannot show a reading verb reading a copy.
//! - A store whose files and directories are not writable (chmod a-w), run
//!   by a child that cannot override file permissions (as root, its
//!   CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_FOWNER are dropped from
//!   its bounding set before exec): EACCES, as on read-only media, while
//!   /dev/shm stays writable.
//!
//! Each test prints which mechanism it ran on (see it with --nocapture). A
//! test that uses a tmpfs when it can uses the others when it cannot
//! (ARBITER_TEST_NO_TMPFS=1 makes it so on a machine that can): no case is
//! skipped. The RLIMIT cases of a failed open run everywhere.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use arbiter::store::{SledStore, Store, checkpoints};
use serde_json::Value;

/// How the child's writes fail.
#[derive(Debug, Clone, Copy)]
enum Writes {
    /// They do not.
    Free,
    /// RLIMIT_FSIZE: no write reaches past this many bytes of any file.
    Limit(u64),
    /// The child cannot override file permissions (see the module's comment).
    NoOverride,
}

fn arbiter(data: &Path, args: &[&str], stdin: &str, writes: Writes) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_arbiter"));
    cmd.env_remove("ARBITER_SERVER")
        .env_remove("ARBITER_TOKEN")
        .env_remove("ARBITER_DATA")
        .arg("--data")
        .arg(data)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match writes {
        Writes::Free => {}
        // SAFETY: only async-signal-safe calls (signal, setrlimit) between fork and exec.
        Writes::Limit(bytes) => unsafe {
            cmd.pre_exec(move || {
                // Ignored, SIGXFSZ stays ignored across exec: a write past
                // the limit then fails with EFBIG instead of killing.
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                let limit = libc::rlimit { rlim_cur: bytes, rlim_max: bytes };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        },
        // SAFETY: only async-signal-safe calls (geteuid, prctl) between fork and exec.
        Writes::NoOverride => unsafe {
            cmd.pre_exec(|| {
                if libc::geteuid() == 0 {
                    // CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER: out of
                    // the bounding set, root does not regain them at exec.
                    for cap in [1, 2, 3] {
                        if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 {
                            return Err(std::io::Error::last_os_error());
                        }
                    }
                }
                Ok(())
            });
        },
    }
    let mut child = cmd.spawn().expect("run arbiter");
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_string();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(stdin.as_bytes());
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[track_caller]
fn ok(out: &Output) -> String {
    assert!(out.status.success(), "arbiter failed: {}\n{}", text(&out.stdout), text(&out.stderr));
    text(&out.stdout)
}

/// A small tmpfs of our own, unmounted when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// None when this process may not mount one, or when
    /// ARBITER_TEST_NO_TMPFS is set (to run the other mechanisms here).
    fn mount(size: &str) -> Option<Tmpfs> {
        if std::env::var_os("ARBITER_TEST_NO_TMPFS").is_some() {
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        mounted.then_some(Tmpfs { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn remount(&self, how: &str) {
        let done = Command::new("mount").args(["-o", &format!("remount,{how}")]).arg(self.path()).status().unwrap();
        assert!(done.success(), "mount -o remount,{how} failed");
    }

    /// Fills the tmpfs to the last byte: every write that needs a new page
    /// fails with ENOSPC from now on. Returns the file to remove to free it.
    fn fill(&self) -> PathBuf {
        let path = self.path().join("fill");
        let mut f = std::fs::File::create(&path).unwrap();
        for chunk in [vec![0u8; 1 << 16], vec![0u8; 1]] {
            loop {
                if let Err(e) = f.write_all(&chunk) {
                    assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "filling the tmpfs: {e}");
                    break;
                }
            }
        }
        path
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(self.path()).status();
    }
}

/// Every file under `dir`, with its bytes.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut all = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                all.insert(path.strip_prefix(dir).unwrap().join(""), Vec::new());
                todo.push(path);
            } else {
                all.insert(path.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(&path).unwrap());
            }
        }
    }
    all
}

#[track_caller]
fn assert_unchanged(before: &BTreeMap<PathBuf, Vec<u8>>, dir: &Path) {
    let now = files(dir);
    let names = |m: &BTreeMap<PathBuf, Vec<u8>>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&now), names(before), "the store's files changed");
    for (name, bytes) in before {
        assert!(now[name] == *bytes, "{} changed ({} bytes, was {})", name.display(), now[name].len(), bytes.len());
    }
}

/// Makes every file and directory under `dir` read-only (or writable again).
fn set_writable(dir: &Path, writable: bool) {
    let mode = |is_dir: bool| match (is_dir, writable) {
        (true, true) => 0o755,
        (true, false) => 0o555,
        (false, true) => 0o644,
        (false, false) => 0o444,
    };
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path.clone());
            }
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode(path.is_dir()))).unwrap();
        }
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode(true))).unwrap();
}

/// The bundled Doomtrooper sample's actions from the `from`-th on (the one
/// at seq from + 1), replayed as long as needed: it ends between combats,
/// so it can follow itself once the seqs it names are shifted.
fn actions(from: usize, n: usize) -> String {
    let sample = include_str!("../examples/doomtrooper-sample.actions.jsonl");
    let lines: Vec<Value> =
        sample.lines().skip(1).filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect();
    let mut out = String::new();
    for i in from..from + n {
        let mut line = lines[i % lines.len()].clone();
        let by = (i / lines.len() * lines.len()) as u64;
        let action = &mut line["action"];
        if let Some(t) = action.get_mut("target") {
            *t = (t.as_u64().unwrap() + by).into();
        }
        if let Some(Value::Array(list)) = action.get_mut("counted") {
            for q in list {
                *q = (q.as_u64().unwrap() + by).into();
            }
        }
        out += &format!("{line}\n");
    }
    out
}

const NEW: &[&str] = &[
    "new",
    "g",
    "--ruleset",
    "doomtrooper",
    "--seat",
    "p1=Alice",
    "--seat",
    "p2=Bob",
    "--seat",
    "p3=Carol",
    "--judge",
    "Dana",
];

/// A store with game `g` of `events` events after the header, left as a
/// writing verb leaves it (sled's log has gone on past its last snapshot,
/// so the next open writes a new snapshot).
fn store_with(data: &Path, events: usize) {
    ok(&arbiter(data, NEW, "", Writes::Free));
    if events > 0 {
        ok(&arbiter(data, &["append", "g", "-"], &actions(0, events), Writes::Free));
    }
}

fn head(data: &Path) -> (u64, String) {
    let store = SledStore::open(data).unwrap();
    let h = store.head("g").unwrap().unwrap();
    // Closed, so that the next `arbiter` finds the store free.
    store.close();
    (h.seq, h.hash)
}

/// The copy a reading verb said it read, which must be gone once it ended.
#[track_caller]
fn assert_read_a_copy_and_removed_it(out: &Output, errno_text: &str) {
    let err = text(&out.stderr);
    assert!(err.contains("cannot be written") && err.contains(errno_text), "no note of why: {err}");
    let at = err.split("reading a copy in ").nth(1).expect("the note says where the copy is").trim();
    assert!(!Path::new(at).exists(), "the copy {at} was left behind");
}

/// The reading verbs, each on a store whose writes fail, against what they
/// print once it can be written again.
const READS: &[&[&str]] =
    &[&["head", "g"], &["verify", "--all"], &["export", "g"], &["state", "g"], &["games"], &["log", "g"]];

/// (a) A reading verb on a store whose writes fail (a full disk) reads it,
/// prints what it prints on a healthy store, and leaves the store byte for
/// byte as it was.
#[test]
fn reading_verbs_read_a_store_that_cannot_be_written_and_leave_it_as_it_was() {
    let tmpfs = Tmpfs::mount("24m");
    let plain = tempfile::tempdir().unwrap();
    let (data, writes, errno) = match &tmpfs {
        Some(t) => (t.path().join("store"), Writes::Free, "No space left on device"),
        None => (plain.path().join("store"), Writes::NoOverride, "Permission denied"),
    };
    eprintln!(
        "(a) ran on {}",
        match tmpfs {
            Some(_) => "a full tmpfs (ENOSPC)",
            None => "a store that is not writable, without CAP_DAC_OVERRIDE (EACCES): no tmpfs could be mounted",
        }
    );
    store_with(&data, 40);
    let before = files(&data);
    let fill = match &tmpfs {
        Some(t) => Some(t.fill()),
        None => {
            set_writable(&data, false);
            None
        }
    };
    let mut printed = Vec::new();
    for verb in READS {
        let out = arbiter(&data, verb, "", writes);
        printed.push(ok(&out));
        assert_read_a_copy_and_removed_it(&out, errno);
    }
    assert_unchanged(&before, &data);
    match fill {
        Some(f) => std::fs::remove_file(f).unwrap(),
        None => set_writable(&data, true),
    }
    for (verb, printed) in READS.iter().zip(&printed) {
        let out = arbiter(&data, verb, "", Writes::Free);
        assert_eq!(&ok(&out), printed, "{verb:?} read something else from the copy");
        assert!(!text(&out.stderr).contains("copy"), "a store that can be written is read in place");
    }
    assert_eq!(head(&data).0, 40);
}

/// (b) An open that fails because the store cannot be written undoes what
/// sled wrote: no new file (on a full disk, sled left an empty
/// `snap.*.generating` that stopped every later open), no file grown. The
/// writing verb says so and exits 2; the store opens once it can be written.
#[test]
fn a_failed_open_leaves_no_file_behind_and_the_store_opens_once_it_can_be_written() {
    // RLIMIT_FSIZE, a store just created: sled's open extends `db` (from
    // 904 bytes to the limit) before its write fails; that is cut back.
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("store");
    store_with(&data, 0);
    let note = ["note", "--actor", "p1", "g", "hello"];
    for limit in [0, 64 * 1024] {
        let before = files(&data);
        let out = arbiter(&data, &note, "", Writes::Limit(limit));
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        let err = text(&out.stderr);
        assert!(err.contains("cannot be written") && err.contains("File too large"), "{err}");
        assert!(err.contains("nothing was stored, and the store is as it was"), "{err}");
        assert_unchanged(&before, &data);
    }
    ok(&arbiter(&data, &note, "", Writes::Free));
    // A store that has been opened (its `db` is a whole segment): the open
    // fails inside it, and its bytes are as they were too.
    let before = files(&data);
    let out = arbiter(&data, &note, "", Writes::Limit(1 << 20));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_unchanged(&before, &data);
    assert_eq!(head(&data).0, 1);
    eprintln!("(b) ran with RLIMIT_FSIZE (EFBIG)");

    // A full tmpfs: sled's open gets as far as its new snapshot.
    let Some(tmpfs) = Tmpfs::mount("24m") else {
        eprintln!("(b) on a full tmpfs did not run: no tmpfs could be mounted here");
        return;
    };
    let data = tmpfs.path().join("store");
    store_with(&data, 40);
    let before = files(&data);
    let fill = tmpfs.fill();
    for _ in 0..2 {
        let out = arbiter(&data, &note, "", Writes::Free);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        let err = text(&out.stderr);
        assert!(err.contains("cannot be written") && err.contains("No space left on device"), "{err}");
        assert_unchanged(&before, &data);
    }
    std::fs::remove_file(fill).unwrap();
    let out = ok(&arbiter(&data, &["verify", "--all"], "", Writes::Free));
    assert!(out.contains("41 events"), "{out}");
    ok(&arbiter(&data, &note, "", Writes::Free));
    assert_eq!(head(&data).0, 41);
    eprintln!("(b) ran on a full tmpfs (ENOSPC) too");
}

/// A new store whose first open fails leaves nothing: not even its directory.
#[test]
fn a_new_store_that_cannot_be_made_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("new-store");
    let out = arbiter(&data, NEW, "", Writes::Limit(0));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(!data.exists(), "left behind: {:?}", files(&data).keys().collect::<Vec<_>>());
    ok(&arbiter(&data, NEW, "", Writes::Free));
    eprintln!("(b) a new store ran with RLIMIT_FSIZE (EFBIG)");
}

/// Moves the end of sled's log (in its first 8 MiB segment) to about
/// `offset` (at most 256 KiB past it), with settings no verb reads, so that
/// a batch after it reaches the segment's end, where the disk is made full,
/// within a few thousand events.
fn advance_log_to(data: &Path, offset: u64) {
    const FILLER: usize = 256 * 1024;
    for round in 0.. {
        let store = SledStore::open(data).unwrap();
        // sled wrote a snapshot at this open, named by where its log ends.
        let tip = std::fs::read_dir(data)
            .unwrap()
            .filter_map(|e| e.unwrap().file_name().to_str()?.strip_prefix("snap.").map(String::from))
            .filter_map(|lsn| u64::from_str_radix(&lsn, 16).ok())
            .max()
            .unwrap_or(0);
        if tip >= offset {
            return store.close();
        }
        for i in 0..((offset - tip) as usize / FILLER).max(1) {
            store.put_setting(&format!("test/filler/{round}/{i}"), &vec![7u8; FILLER]).unwrap();
        }
        store.close();
    }
}

/// What `append g -` said it stored before the disk was full: the last seq
/// stored, from "seqs 1-B (stdin lines 1-B) are stored and durable; line
/// B+1 on was not stored", checked against what stdout acknowledged.
#[track_caller]
fn cut_short(out: &Output, first: u64) -> u64 {
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    let stdout = text(&out.stdout);
    let said = err.lines().find(|l| l.contains("are stored and durable")).unwrap_or_else(|| panic!("{err}"));
    let b: u64 = said.split(&format!("seqs {first}-")).nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    let lines = b - first + 1;
    assert_eq!(
        said,
        format!(
            "error: seqs {first}-{b} (stdin lines 1-{lines}) are stored and durable; line {} on was not stored",
            lines + 1
        )
    );
    assert!(!err.contains("nothing from stdin was stored"), "{err}");
    assert!(stdout.starts_with(&format!("seqs {first}-{b} appended ({lines} events); head {b} ")), "{stdout}");
    assert_eq!(lines % 1000, 0, "a batch is stored in chunks of 1000, each all or nothing");
    b
}

/// The store holds exactly seqs 0..=`last`, verifies, and opens (checked
/// against its newest checkpoint); when a checkpoint was signed after the
/// failure, it covers exactly them.
#[track_caller]
fn holds_exactly(data: &Path, last: u64, hash: Option<&str>, signed: bool) {
    let (seq, head_hash) = head(data);
    assert_eq!(seq, last, "the store holds other events than it said");
    if let Some(h) = hash {
        assert_eq!(head_hash, h);
    }
    let out = ok(&arbiter(data, &["verify", "--all"], "", Writes::Free));
    assert!(out.contains(&format!("{} events", last + 1)), "{out}");
    let newest = checkpoints::read(data).unwrap().pop().unwrap();
    if signed {
        assert_eq!(newest.heads["g"], (last, head_hash.clone()), "the newest checkpoint covers what is stored");
        assert_eq!(newest.checkpoint().unwrap().size, last + 1);
    }
    assert!(newest.checkpoint().unwrap().size <= last + 1, "a checkpoint covers events that are not stored");
}

/// (c) `append g -` of thousands of lines, cut short by a full disk: the
/// message says exactly which seqs and lines were stored, and the store
/// holds exactly those, checked against a checkpoint signed after the
/// failure; a batch whose first chunk does not fit stores nothing, says
/// so, and the head is unchanged. On a full tmpfs when one can be mounted,
/// else with RLIMIT_FSIZE at the end of sled's first 8 MiB segment.
#[test]
fn a_batch_cut_short_says_exactly_what_was_stored() {
    let tmpfs = Tmpfs::mount("24m");
    let plain = tempfile::tempdir().unwrap();
    let data = tmpfs.as_ref().map_or(plain.path(), |t| t.path()).join("store");
    let (writes, errno) = match &tmpfs {
        Some(_) => (Writes::Free, "No space left on device"),
        None => (Writes::Limit(8 << 20), "File too large"),
    };
    eprintln!(
        "(c) ran {}",
        match tmpfs {
            Some(_) => "on a full tmpfs (ENOSPC)",
            None => "with RLIMIT_FSIZE (EFBIG): no tmpfs could be mounted",
        }
    );
    store_with(&data, 0);
    // About 1.5 MB left in sled's first segment: the first chunk of 1000
    // events (about 1 MB of sled's log) fits, the second does not. (The
    // store's layout decides how much a chunk takes: with layout 1's
    // journal it was 1.5 MB, and 2.6 MB were left.)
    advance_log_to(&data, 6_900_000);
    // The disk is full. (sled's open writes a snapshot only when its log
    // went on since the last one; `advance_log_to` just opened it, so the
    // batch's own open needs no new page of a full tmpfs.)
    let fill = tmpfs.as_ref().map(Tmpfs::fill);
    let out = arbiter(&data, &["append", "g", "-"], &actions(0, 2000), writes);
    let last = cut_short(&out, 1);
    let err = text(&out.stderr);
    assert!(err.contains(errno), "{err}");
    // What is durable is signed by the store opened again, which on a tmpfs
    // filled to its last page has no page for sled's snapshot: then it says
    // that no checkpoint was signed, and the store is left as it was.
    let signed = !err.contains("no checkpoint was signed");
    assert!(signed || tmpfs.is_some(), "the stored events are covered by a checkpoint: {err}");
    if let Some(f) = &fill {
        std::fs::remove_file(f).unwrap();
    }
    holds_exactly(&data, last, None, signed);
    let (_, hash) = head(&data);

    // The next batch does not fit at all.
    let fill = tmpfs.as_ref().map(Tmpfs::fill);
    let out = arbiter(&data, &["append", "g", "-"], &actions(last as usize, 1000), writes);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("error: nothing from stdin was stored") && err.contains(errno), "{err}");
    assert_eq!(text(&out.stdout), "", "nothing was acknowledged");
    if let Some(f) = &fill {
        std::fs::remove_file(f).unwrap();
    }
    holds_exactly(&data, last, Some(&hash), signed);
}

/// (d) Read-only media: reading verbs read a copy; a writing verb stops with
/// a clear message and exit 2; the store is byte for byte as it was.
#[test]
fn read_only_media_is_read_and_not_written() {
    let tmpfs = Tmpfs::mount("24m");
    let plain = tempfile::tempdir().unwrap();
    let (data, writes, errno) = match &tmpfs {
        Some(t) => (t.path().join("store"), Writes::Free, "Read-only file system"),
        None => (plain.path().join("store"), Writes::NoOverride, "Permission denied"),
    };
    eprintln!(
        "(d) ran on {}",
        match tmpfs {
            Some(_) => "a tmpfs remounted read-only (EROFS)",
            None => "a store that is not writable, without CAP_DAC_OVERRIDE (EACCES): no tmpfs could be mounted",
        }
    );
    store_with(&data, 40);
    let before = files(&data);
    match &tmpfs {
        Some(t) => t.remount("ro"),
        None => set_writable(&data, false),
    }
    // The mechanism works: the child cannot write there.
    let probe = arbiter(&data, &["append", "g", "--actor", "p1", r#"{"type":"pass"}"#], "", writes);
    assert_eq!(probe.status.code(), Some(2), "{}", text(&probe.stderr));
    let err = text(&probe.stderr);
    assert!(err.contains("cannot be written") && err.contains(errno), "{err}");
    assert!(err.contains("nothing was stored, and the store is as it was"), "{err}");
    for verb in [&["head", "g"][..], &["verify", "--all"], &["export", "g"]] {
        let out = arbiter(&data, verb, "", writes);
        ok(&out);
        assert_read_a_copy_and_removed_it(&out, errno);
    }
    let exported = ok(&arbiter(&data, &["export", "g"], "", writes));
    assert_eq!(exported.lines().count(), 41);
    assert_unchanged(&before, &data);
    match &tmpfs {
        Some(t) => t.remount("rw"),
        None => set_writable(&data, true),
    }
    assert_eq!(head(&data).0, 40);
}
