//! What `arbiter serve` tells its operators, over loopback TCP: one log
//! line per request on stderr (never a token, a header or a query string),
//! `/health`, and the Prometheus metrics at `/metrics`.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

struct Logged {
    child: Child,
    url: String,
    organiser: String,
    agent: ureq::Agent,
}

impl Logged {
    /// `arbiter serve` on a free loopback port, its stderr (the log) into `log`.
    fn start(data: &Path, log: &Path) -> Logged {
        let mut child = Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .args(["--data", data.to_str().unwrap(), "serve", "--listen", "127.0.0.1:0"])
            .env_remove("RUST_LOG")
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let url = lines.next().unwrap().unwrap().strip_prefix("listening on ").unwrap().to_string();
        let organiser = lines
            .next()
            .unwrap()
            .unwrap()
            .strip_prefix("organiser token (shown once, stored hashed): ")
            .unwrap()
            .into();
        std::thread::spawn(move || for _ in lines.map_while(Result::ok) {});
        let agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
        Logged { child, url, organiser, agent }
    }

    fn call(&self, method: &str, path: &str, token: Option<&str>, body: Option<Value>) -> (u16, String) {
        let url = format!("{}{path}", self.url);
        let mut resp = match method {
            "GET" => {
                let mut r = self.agent.get(&url);
                if let Some(t) = token {
                    r = r.header("Authorization", &format!("Bearer {t}")).header("Cookie", &format!("token={t}"));
                }
                r.call()
            }
            _ => {
                let mut r = self.agent.post(&url);
                if let Some(t) = token {
                    r = r.header("Authorization", &format!("Bearer {t}"));
                }
                r.send_json(body.unwrap())
            }
        }
        .unwrap();
        (resp.status().as_u16(), resp.body_mut().read_to_string().unwrap())
    }

    fn json(&self, method: &str, path: &str, token: Option<&str>, body: Option<Value>) -> (u16, Value) {
        let (status, text) = self.call(method, path, token, body);
        (status, serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: not JSON ({e}): {text}")))
    }

    fn append(&self, token: &str, actor: &str, action: Value, expect: u64) -> u16 {
        self.json(
            "POST",
            "/api/games/g/events",
            Some(token),
            Some(json!({"actor": actor, "action": action, "expect_seq": expect})),
        )
        .0
    }

    /// The value of one sample of `/metrics` (0 when absent).
    fn metric(&self, sample: &str) -> f64 {
        let (status, text) = self.call("GET", "/metrics", None, None);
        assert_eq!(status, 200);
        common::server::metric(&text, sample)
    }

    fn stop(&mut self) {
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        assert!(self.child.wait().unwrap().success());
    }
}

impl Drop for Logged {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn combat() -> Value {
    json!({"type": "announce", "what": "combat", "defending_player": "p2", "attacker": "A", "defender": "D"})
}

#[test]
fn each_request_is_one_log_line_without_tokens_and_the_metrics_count_what_happened() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("stderr.log");
    let mut s = Logged::start(&dir.path().join("data"), &log);

    let (status, health) = s.json("GET", "/health", None, None);
    assert_eq!(status, 200, "{health}");
    assert_eq!((health["status"].as_str(), health["last_sync"].as_str()), (Some("ok"), Some("ok")));

    let header = json!({"type": "open", "ruleset": "doomtrooper", "ruleset_version": 1,
        "seats": [{"id": "p1", "name": "Ann"}, {"id": "p2", "name": "Ben"}], "judges": ["Dana"]});
    let (status, v) = s.json("POST", "/api/games", Some(&s.organiser), Some(json!({"name": "g", "header": header})));
    assert_eq!(status, 201, "{v}");
    let token = |seat: &str| {
        let (status, v) = s.json("POST", "/api/games/g/tokens", Some(&s.organiser), Some(json!({"seat": seat})));
        assert_eq!(status, 201, "{v}");
        v["token"].as_str().unwrap().to_string()
    };
    let (p1, p2) = (token("p1"), token("p2"));

    // A live stream, its token in the query as a browser sends it.
    let resp = s.agent.get(format!("{}/api/games/g/stream?from=0&access_token={p1}", s.url)).call().unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let mut stream = BufReader::new(resp.into_body().into_reader());
    let mut first = String::new();
    while !first.starts_with("data:") {
        first.clear();
        stream.read_line(&mut first).unwrap();
    }
    assert_eq!(s.metric("arbiter_subscribers"), 1.0, "the open stream is counted");

    assert_eq!(s.append(&p1, "p1", combat(), 1), 201);
    assert_eq!(s.append(&p1, "p1", combat(), 1), 200, "a retry of a stored append");
    assert_eq!(s.append(&p1, "p1", combat(), 5), 409, "a stale expect_seq");
    assert_eq!(s.append(&p2, "p2", json!({"type": "pass"}), 2), 422, "out of turn");
    assert_eq!(s.append(&p2, "p1", json!({"type": "pass"}), 2), 403, "as another seat");
    let (status, _) = s.json("GET", &format!("/api/games/g/state?access_token={p2}&at=1"), None, None);
    assert_eq!(status, 200);
    let (status, _) = s.json("GET", "/api/games/g", Some(&p2), None);
    assert_eq!(status, 200, "a bearer token and a cookie");

    // The stream ends when its client goes; the next event it would send
    // finds the connection closed, and the count falls.
    drop(stream);
    let tactic = json!({"type": "announce", "what": "battle_tactic", "tactic": "Fight"});
    assert_eq!(s.append(&p1, "p1", tactic, 2), 201);
    let mut tries = 0;
    while s.metric("arbiter_subscribers") != 0.0 {
        tries += 1;
        assert!(tries < 500, "the closed stream is still counted");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }

    // Reading pages of the append route is no append.
    for _ in 0..3 {
        assert_eq!(s.json("GET", &format!("/api/games/g/events?access_token={p2}"), None, None).0, 200);
    }
    let events = "/api/games/{game}/events";
    assert_eq!(s.metric(&format!("arbiter_appends_total{{route=\"{events}\",outcome=\"stored\"}}")), 2.0);
    assert_eq!(s.metric(&format!("arbiter_appends_total{{route=\"{events}\",outcome=\"retry\"}}")), 1.0);
    assert_eq!(s.metric("arbiter_conflicts_total"), 1.0);
    assert_eq!(s.metric("arbiter_refusals_total{code=\"refused\"}"), 1.0);
    assert_eq!(s.metric("arbiter_refusals_total{code=\"forbidden\"}"), 1.0);
    assert_eq!(s.metric("arbiter_open_games"), 1.0, "g is folded at its head");
    // Event 0 and two appends were made durable by the group commit.
    assert!(s.metric("arbiter_sync_events_sum") >= 3.0);
    assert!(s.metric("arbiter_sync_seconds_count") >= 1.0);
    let (_, text) = s.call("GET", "/metrics", None, None);
    assert!(text.ends_with("# EOF\n"), "OpenMetrics text ends with # EOF: {text}");

    s.stop();
    let log = std::fs::read_to_string(&log).unwrap();
    for secret in [&s.organiser, &p1, &p2] {
        assert!(!log.contains(secret.as_str()), "a token in the log:\n{log}");
    }
    for never in ["access_token", "Bearer", "Cookie", "from=0", "at=1"] {
        assert!(!log.contains(never), "{never:?} in the log:\n{log}");
    }
    let requests: Vec<&str> = log.lines().filter(|l| l.contains(" request ")).collect();
    let line = |route: &str, status: u16| {
        let want = format!("route=\"{route}\"");
        requests
            .iter()
            .find(|l| l.contains(&want) && l.contains(&format!("status={status} ")))
            .unwrap_or_else(|| panic!("no line for {route} {status}:\n{log}"))
            .to_string()
    };
    let appended = line(events, 201);
    for field in ["INFO", "method=POST", "game=\"g\"", "latency_us="] {
        assert!(appended.contains(field), "{field} in {appended}");
    }
    assert!(line(events, 422).contains("code=\"refused\""));
    assert!(line(events, 409).contains("code=\"conflict\""));
    assert!(line("/api/games/{game}/stream", 200).contains("method=GET"));
    assert!(line("/api/games/{game}/state", 200).contains("game=\"g\""));
    assert!(line("/health", 200).contains("method=GET"));
    assert!(!line("/health", 200).contains("game="), "no game, no field");
}

#[test]
fn an_unknown_route_is_logged_without_its_path_and_a_bad_rust_log_falls_back() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("stderr.log");
    let mut s = Logged::start(&dir.path().join("data"), &log);
    let (status, v) = s.json("GET", "/api/no/such/place?access_token=secret", None, None);
    assert_eq!((status, v["error"]["code"].as_str()), (404, Some("not_found")));
    assert_eq!(s.metric("arbiter_refusals_total{code=\"not_found\"}"), 1.0);
    s.stop();
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(log.contains("route=\"-\" status=404"), "{log}");
    assert!(!log.contains("/api/no/such/place") && !log.contains("secret"), "{log}");

    // RUST_LOG that does not parse: said once, then the default filter.
    let data = dir.path().join("data2");
    let mut child = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["--data", data.to_str().unwrap(), "serve", "--listen", "127.0.0.1:0"])
        .env("RUST_LOG", "arbiter=[")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    let url = first.trim().strip_prefix("listening on ").unwrap_or_else(|| panic!("{first}")).to_string();
    // Answering means it is serving, and so handles SIGTERM.
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    assert_eq!(agent.get(format!("{url}/health")).call().unwrap().status().as_u16(), 200);
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(child.wait().unwrap().success());
    assert!(err.contains("RUST_LOG=\"arbiter=[\" does not parse"), "{err}");
}
