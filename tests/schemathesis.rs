//! schemathesis against `arbiter serve` over loopback: every operation of
//! the served `/openapi.json`, with data drawn from the document (valid and
//! invalid), must answer without a 5xx, with the JSON error body for every
//! error, and as the document says (status codes, content types, response
//! schemas and headers, invalid data refused, auth required where the
//! document says so, 405 with `Allow` for other methods).
//!
//! schemathesis comes from PyPI (`.ci/run` installs the pinned version);
//! without it this test fails, it does not skip. The run is bounded by a
//! number of examples per operation (`ARBITER_SCHEMATHESIS_EXAMPLES`,
//! default 15: one to four minutes on two shared cores) with a fixed seed, and by a
//! deadline after which it fails.
//!
//! `tests/schemathesis_hooks.py` points two of three drawn game names at the
//! games made here (so requests reach the rules), serialises the import's
//! JSON Lines and adds the check that every error is the JSON error body;
//! `tests/schemathesis.toml` says that unknown query parameters are not
//! invalid data (the server ignores them). One check is left out:
//! `positive_data_acceptance` expects every request the document allows to
//! succeed, but the document cannot say all the server checks (the rules,
//! which seats exist, and strict JSON: `1.0` is an integer to JSON Schema and
//! a float, refused, to arbiter), so those refusals are right.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::server::Served;

/// The version `.ci/run` installs.
const PINNED: &str = "4.32.5";

/// The run fails if it takes longer than this.
const DEADLINE: Duration = Duration::from_secs(15 * 60);

/// schemathesis through the Python that `.ci/run` installed it for (its
/// script may not be on the PATH).
fn schemathesis() -> Command {
    let mut cmd = Command::new("python3");
    cmd.args(["-m", "schemathesis.cli"])
        .env("PYTHONPATH", Path::new(env!("CARGO_MANIFEST_DIR")).join("tests"))
        .env("SCHEMATHESIS_HOOKS", "schemathesis_hooks");
    cmd
}

#[test]
fn the_served_api_answers_as_its_openapi_document_says() {
    if !common::has(common::Need::Schemathesis) {
        return;
    }
    let version = schemathesis().arg("--version").output().unwrap_or_else(|e| {
        panic!("schemathesis is not installed ({e}): `python3 -m pip install schemathesis=={PINNED}` (.ci/run does)")
    });
    let version = String::from_utf8_lossy(&version.stdout).to_string();
    assert!(version.contains(PINNED), "schemathesis {PINNED} expected (.ci/run installs it), found {version:?}");

    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(&dir.path().join("data"));
    s.doomtrooper("g1", "public");
    s.doomtrooper("g2", "token");

    let examples = std::env::var("ARBITER_SCHEMATHESIS_EXAMPLES").unwrap_or_else(|_| "15".into());
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemathesis.toml");
    let work = dir.path().join("schemathesis");
    std::fs::create_dir(&work).unwrap();
    let mut child = schemathesis()
        .current_dir(&work)
        .arg("--config-file")
        .arg(&config)
        .args(["run", &format!("{}/openapi.json", s.url)])
        .args(["--header", &format!("Authorization: Bearer {}", s.organiser)])
        .args(["--exclude-checks", "positive_data_acceptance"])
        .args(["--max-examples", &examples, "--seed", "1", "--workers", "2"])
        .args(["--generation-database", "none", "--no-color", "--request-timeout", "30"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read the output on threads so a full pipe never stalls the run.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || std::io::read_to_string(&mut out).unwrap());
    let err = std::thread::spawn(move || std::io::read_to_string(&mut err).unwrap());
    let began = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if began.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    let report = format!("{out}\n{err}");
    let Some(status) = status else { panic!("schemathesis ran past {DEADLINE:?}:\n{report}") };
    assert!(status.success(), "schemathesis found failures ({status}):\n{report}");

    // Every operation of the document was tested, but the one that serves
    // the document (schemathesis leaves out the schema's own location).
    let operations = arbiter::server::ROUTES.len() - 1;
    assert!(
        report.contains(&format!("Selected: {operations}/{operations}"))
            && report.contains(&format!("Tested: {operations}\n")),
        "not all {operations} operations were tested:\n{report}"
    );

    // The server is still up, and the games it was sent are whole.
    for game in ["g1", "g2"] {
        let (status, v) = s.get(&format!("/api/games/{game}/verify"), Some(&s.organiser));
        assert_eq!((status, v["ok"].as_bool()), (200, Some(true)), "{v}");
    }
}
