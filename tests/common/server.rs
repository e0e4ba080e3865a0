//! A real `arbiter serve` on a loopback port, and a small HTTP client.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

pub struct Served {
    pub child: Child,
    pub url: String,
    pub organiser: String,
    pub data: PathBuf,
    agent: ureq::Agent,
}

/// `arbiter serve` over `data` at the address `listen` (to start again
/// where an open page has it, after a stop): the child, once it listens.
pub fn serve_at(data: &Path, listen: &str) -> Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["--data", data.to_str().unwrap(), "serve", "--listen", listen])
        .env("RUST_LOG", "error")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(first.starts_with("listening on"), "{first}");
    std::thread::spawn(move || for _ in lines.map_while(Result::ok) {});
    child
}

impl Served {
    /// Starts a server on a free port of 127.0.0.1 over `data`.
    pub fn start(data: &Path) -> Served {
        let (child, url, organiser) = spawn(data, &[]);
        let agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
        Served { child, url, organiser, data: data.to_path_buf(), agent }
    }

    /// Starts a server on a free port of 127.0.0.1 over `data`, with `extra`
    /// flags for `serve`.
    pub fn start_with(data: &Path, extra: &[&str]) -> Served {
        let (child, url, organiser) = spawn(data, extra);
        let agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
        Served { child, url, organiser, data: data.to_path_buf(), agent }
    }

    /// Starts a server over the PostgreSQL database at `store` (a URL).
    pub fn start_on_database(store: &str) -> Served {
        let (child, url, organiser) = spawn_with(&["--store", store], &[]);
        let agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
        Served { child, url, organiser, data: PathBuf::new(), agent }
    }

    /// Two servers on one database, both holding the organiser's token (the
    /// first server made it; the second is shown none).
    pub fn two_on_database(store: &str) -> (Served, Served) {
        let a = Served::start_on_database(store);
        let mut b = Served::start_on_database(store);
        b.organiser = a.organiser.clone();
        (a, b)
    }

    /// (status, JSON body) of a request; `token` as a bearer token.
    pub fn call(&self, method: &str, path: &str, token: Option<&str>, body: Option<&Value>) -> (u16, Value) {
        self.try_call(method, path, token, body).unwrap()
    }

    /// As `call`, but a request the server never answered (it died, the
    /// connection dropped) is an error, not a panic: for the crash tests.
    pub fn try_call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Result<(u16, Value), ureq::Error> {
        let url = format!("{}{path}", self.url);
        let auth = token.map(|t| format!("Bearer {t}"));
        let mut resp = match (method, body) {
            ("GET", _) => {
                let mut r = self.agent.get(&url);
                if let Some(a) = &auth {
                    r = r.header("Authorization", a);
                }
                r.call()
            }
            (m, b) => {
                let mut r = match m {
                    "POST" => self.agent.post(&url),
                    "PUT" => self.agent.put(&url),
                    _ => panic!("method {m}"),
                };
                if let Some(a) = &auth {
                    r = r.header("Authorization", a);
                }
                match b {
                    Some(b) => r.send_json(b),
                    None => r.send_empty(),
                }
            }
        }?;
        let status = resp.status().as_u16();
        let text = resp.body_mut().read_to_string()?;
        Ok((status, serde_json::from_str(&text).unwrap_or(Value::String(text))))
    }

    /// (status, Content-Type, body as text) of a GET: for answers that are
    /// not JSON (a checkpoint, an export).
    pub fn get_text(&self, path: &str, token: Option<&str>) -> (u16, String, String) {
        let mut r = self.agent.get(&format!("{}{path}", self.url));
        if let Some(t) = token {
            r = r.header("Authorization", &format!("Bearer {t}"));
        }
        let mut resp = r.call().unwrap();
        let status = resp.status().as_u16();
        let kind = resp.headers().get("content-type").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
        (status, kind, resp.body_mut().read_to_string().unwrap())
    }

    pub fn get(&self, path: &str, token: Option<&str>) -> (u16, Value) {
        self.call("GET", path, token, None)
    }
    pub fn post(&self, path: &str, token: Option<&str>, body: &Value) -> (u16, Value) {
        self.call("POST", path, token, Some(body))
    }

    /// POST with a raw body (to send what a JSON encoder would not).
    pub fn post_raw(&self, path: &str, token: Option<&str>, body: &[u8]) -> (u16, Value) {
        let mut r = self.agent.post(&format!("{}{path}", self.url)).header("Content-Type", "application/json");
        if let Some(t) = token {
            r = r.header("Authorization", &format!("Bearer {t}"));
        }
        let mut resp = r.send(body).unwrap();
        let status = resp.status().as_u16();
        let text = resp.body_mut().read_to_string().unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    /// Creates a Doomtrooper game with seats p1, p2 and judge Dana.
    pub fn doomtrooper(&self, game: &str, read: &str) {
        let header = json!({"type": "open", "ruleset": "doomtrooper", "ruleset_version": 1,
            "seats": [{"id": "p1", "name": "Ann"}, {"id": "p2", "name": "Ben"}], "judges": ["Dana"]});
        let (s, v) =
            self.post("/api/games", Some(&self.organiser), &json!({"name": game, "header": header, "read": read}));
        assert_eq!(s, 201, "{v}");
    }

    /// A token for a seat or judge of `game`.
    pub fn token(&self, game: &str, role: &str, name: &str) -> String {
        let (s, v) = self.post(&format!("/api/games/{game}/tokens"), Some(&self.organiser), &json!({ role: name }));
        assert_eq!(s, 201, "{v}");
        v["token"].as_str().unwrap().to_string()
    }

    pub fn head(&self, game: &str) -> Value {
        let (s, v) = self.get(&format!("/api/games/{game}"), Some(&self.organiser));
        assert_eq!(s, 200, "{v}");
        v
    }

    /// Every stored event of `game` (up to 1,000), as (seq, hash), read
    /// through the API.
    pub fn stored(&self, game: &str) -> Vec<(u64, String)> {
        let (status, page) = self.get(&format!("/api/games/{game}/events?from=0&limit=1000"), None);
        assert_eq!(status, 200, "{page}");
        page["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["seq"].as_u64().unwrap(), e["hash"].as_str().unwrap().to_string()))
            .collect()
    }

    /// Appends at `expect` as `actor` with `token`.
    pub fn append(&self, game: &str, token: &str, actor: &str, action: Value, expect: u64) -> (u16, Value) {
        self.post(
            &format!("/api/games/{game}/events"),
            Some(token),
            &json!({"actor": actor, "action": action, "expect_seq": expect}),
        )
    }

    /// As `append`, but an append the server never answered is `None`.
    pub fn try_append(&self, game: &str, token: &str, actor: &str, action: Value, expect: u64) -> Option<(u16, Value)> {
        let body = json!({"actor": actor, "action": action, "expect_seq": expect});
        self.try_call("POST", &format!("/api/games/{game}/events"), Some(token), Some(&body)).ok()
    }

    /// SIGTERM, then wait for the process to end.
    pub fn stop(&mut self) -> std::process::ExitStatus {
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        self.child.wait().unwrap()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The value of one sample (`name{labels}`) in `/metrics`'s OpenMetrics
/// `text` (0 when absent).
pub fn metric(text: &str, sample: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(sample).and_then(|v| v.strip_prefix(' ')))
        .map_or(0.0, |v| v.parse().unwrap())
}

/// `arbiter serve` on a free port of 127.0.0.1 over `data`, with `extra`
/// flags: (child, url, organiser token, empty once the store has one).
pub fn spawn(data: &Path, extra: &[&str]) -> (Child, String, String) {
    spawn_with(&["--data", data.to_str().unwrap()], extra)
}

/// `arbiter serve` over the store `store` names (`--data DIR` or `--store URL`).
pub fn spawn_with(store: &[&str], extra: &[&str]) -> (Child, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(store)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(extra)
        // The request log only where asked (RUST_LOG=info cargo test): errors otherwise.
        .env("RUST_LOG", std::env::var("RUST_LOG").unwrap_or_else(|_| "error".into()))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let url = first.strip_prefix("listening on ").unwrap_or_else(|| panic!("unexpected: {first}")).to_string();
    let second = lines.next().unwrap().unwrap();
    let organiser = second.strip_prefix("organiser token (shown once, stored hashed): ").unwrap_or("").to_string();
    // Keep draining stdout so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines.map_while(Result::ok) {});
    (child, url, organiser)
}

/// The counter war at steps 3-6 of a Doomtrooper combat: seq's actor and action.
pub fn war(seq: u64) -> (&'static str, Value) {
    (if seq % 2 == 1 { "p2" } else { "p1" }, super::counter("Cancel", seq - 1))
}

/// Starts a combat so that the counter war can follow (seqs 1 and 2, by p1).
pub fn start_combat(s: &Served, game: &str, p1: &str) {
    assert_eq!(s.append(game, p1, "p1", super::combat("p2", "A", "D"), 1).0, 201);
    assert_eq!(s.append(game, p1, "p1", super::tactic("Fight"), 2).0, 201);
}

/// Reads SSE messages `(id, data)` from a stream response, each with an id.
pub fn sse(reader: &mut impl BufRead, n: usize) -> Vec<(u64, Value)> {
    sse_frames(reader, n).into_iter().map(|(id, data)| (id.expect("an id before the data"), data)).collect()
}

/// Reads SSE frames until `n` came: (id if any, data).
pub fn sse_frames(reader: &mut impl BufRead, n: usize) -> Vec<(Option<u64>, Value)> {
    let mut out = Vec::new();
    let (mut id, mut line) = (None, String::new());
    while out.len() < n {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "the stream ended early");
        let l = line.trim_end();
        if let Some(v) = l.strip_prefix("id: ").or_else(|| l.strip_prefix("id:")) {
            id = Some(v.trim().parse::<u64>().unwrap());
        } else if let Some(d) = l.strip_prefix("data: ").or_else(|| l.strip_prefix("data:")) {
            out.push((id.take(), serde_json::from_str(d.trim()).unwrap()));
        }
    }
    out
}

pub fn stream(s: &Served, path: &str, last_id: Option<u64>) -> BufReader<Box<dyn std::io::Read + Send + Sync>> {
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let mut req = agent.get(&format!("{}{path}", s.url));
    if let Some(id) = last_id {
        req = req.header("Last-Event-ID", &id.to_string());
    }
    let resp = req.call().unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    BufReader::new(Box::new(resp.into_body().into_reader()))
}
