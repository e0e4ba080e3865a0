//! `arbiter serve` under faults and bad clients, over loopback TCP: half a
//! request, a stalled body, idle connections, the connection cap, shutdown
//! with clients still connected (in process and by SIGTERM), live
//! subscribers and their caps, errors axum answers itself, batches (1,000
//! events, retried, SIGKILLed), appends to many games at once (SIGKILLed)
//! and the CLI on a store a server holds.
//!
//! Timeouts are set low through `Connections` (or the binary's flags), and
//! every bound asserted is generous: "within 10 s" of a 1 s timeout.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Child;
use std::time::{Duration, Instant};

use arbiter::server::{self, Connections, Server, Stopped, Streams};
use arbiter::store::{SledStore, checkpoints};
use common::server::{Served, sse_frames};
use serde_json::{Value, json};

/// Far longer than any test: a limit that must not be the one that fires.
const NEVER: Duration = Duration::from_secs(600);
/// The bound on anything that should happen after a 1 s timeout.
const GENEROUS: Duration = Duration::from_secs(10);

fn limits() -> Connections {
    Connections {
        header_timeout: NEVER,
        body_timeout: NEVER,
        idle_timeout: NEVER,
        max_open: 64,
        shutdown_deadline: NEVER,
        trusted_proxies: Vec::new(),
    }
}

/// A server in this process on a loopback port, with its own limits.
struct Local {
    url: String,
    addr: std::net::SocketAddr,
    organiser: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: Option<std::thread::JoinHandle<std::io::Result<Stopped>>>,
    _dir: tempfile::TempDir,
}

impl Local {
    fn start(limits: Connections, streams: Streams) -> Local {
        let dir = tempfile::tempdir().unwrap();
        let store = SledStore::open(dir.path()).unwrap();
        let organiser = server::first_organiser_token(&store).unwrap().unwrap();
        let signer = checkpoints::signer(&store, None, None).unwrap();
        let server = Server::with_limits(Box::new(store), signer, 1024, streams);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let done = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
            let served = runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener)?;
                server::serve_with(listener, server, limits, async {
                    let _ = stopped.await;
                })
                .await
            });
            runtime.shutdown_timeout(Duration::from_secs(1));
            served
        });
        Local { url: format!("http://{addr}"), addr, organiser, stop: Some(stop), done: Some(done), _dir: dir }
    }

    fn call(&self, method: &str, path: &str, token: Option<&str>, body: Option<&Value>) -> (u16, Value) {
        call(&self.url, method, path, token, body)
    }

    /// Begins shutdown (as SIGTERM does) and waits for `serve_with` to return.
    fn stop(&mut self) -> (Stopped, Duration) {
        let began = Instant::now();
        let _ = self.stop.take().unwrap().send(());
        let done = self.done.take().unwrap();
        while !done.is_finished() {
            assert!(began.elapsed() < GENEROUS, "the server did not stop within {GENEROUS:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
        (done.join().unwrap().unwrap(), began.elapsed())
    }

    fn connect(&self) -> TcpStream {
        let c = TcpStream::connect(self.addr).unwrap();
        c.set_read_timeout(Some(GENEROUS)).unwrap();
        c
    }
}

impl Drop for Local {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

fn call(url: &str, method: &str, path: &str, token: Option<&str>, body: Option<&Value>) -> (u16, Value) {
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let url = format!("{url}{path}");
    let auth = token.map(|t| format!("Bearer {t}"));
    let resp = match method {
        "GET" => {
            let mut r = agent.get(&url);
            if let Some(a) = &auth {
                r = r.header("Authorization", a);
            }
            r.call()
        }
        _ => {
            let mut r = agent.post(&url);
            if let Some(a) = &auth {
                r = r.header("Authorization", a);
            }
            r.send_json(body.unwrap())
        }
    };
    let mut resp = resp.unwrap();
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

fn create(url: &str, organiser: &str, game: &str) -> String {
    let header = json!({"type": "open", "ruleset": "doomtrooper", "ruleset_version": 1,
        "seats": [{"id": "p1", "name": "Ann"}, {"id": "p2", "name": "Ben"}], "judges": ["Dana"]});
    let (s, v) = call(url, "POST", "/api/games", Some(organiser), Some(&json!({"name": game, "header": header})));
    assert_eq!(s, 201, "{v}");
    let (s, v) = call(url, "POST", &format!("/api/games/{game}/tokens"), Some(organiser), Some(&json!({"seat": "p1"})));
    assert_eq!(s, 201, "{v}");
    v["token"].as_str().unwrap().to_string()
}

/// A note by p1 about event 0: legal any number of times in a row.
fn note(hash0: &str, text: &str) -> Value {
    json!({"actor": "p1", "action": {"type": "note", "concerns": {"seq": 0, "hash": hash0}, "text": text}})
}

fn hash0(url: &str, game: &str) -> String {
    let (s, v) = call(url, "GET", &format!("/api/games/{game}/events?from=0&limit=1"), None, None);
    assert_eq!(s, 200, "{v}");
    v["events"][0]["hash"].as_str().unwrap().to_string()
}

/// The text of each note after event 0 of `game` in the store at `dir`,
/// as `arbiter export` gives them (the server that held it is gone).
fn exported_texts(dir: &std::path::Path, game: &str) -> Vec<String> {
    let out = common::arbiter(dir, &["export", game]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["action"]["text"].as_str().unwrap().to_string())
        .collect()
}

/// Reads until the server closes the connection; what it said, if anything.
fn until_closed(c: &mut TcpStream) -> String {
    let mut out = Vec::new();
    match c.read_to_end(&mut out) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        Err(e) => panic!("the connection was not closed within {GENEROUS:?}: {e}"),
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The JSON body of a raw HTTP answer.
fn body_of(answer: &str) -> Value {
    let body = answer.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
    serde_json::from_str(body).unwrap_or_else(|_| panic!("not a JSON body: {answer:?}"))
}

/// A declared body over the route's limit is answered 413 at once, not
/// after the body timeout (60 s here: the binary's default).
#[test]
fn a_declared_content_length_over_the_limit_is_answered_413_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(dir.path());
    s.doomtrooper("g", "public");
    let limits = [
        ("/api/games/g/events", arbiter::limits::MAX_REQUEST_BYTES),
        ("/api/games/g/batch", arbiter::limits::MAX_REQUEST_BYTES),
        ("/api/games/h/import", arbiter::limits::MAX_IMPORT_BYTES),
    ];
    for (path, limit) in limits {
        let mut c = TcpStream::connect(s.url.strip_prefix("http://").unwrap()).unwrap();
        c.set_read_timeout(Some(GENEROUS)).unwrap();
        let started = Instant::now();
        write!(
            c,
            "POST {path} HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            s.organiser,
            limit + 1
        )
        .unwrap();
        // The answer, whole, before any of the body was sent.
        let mut answer = Vec::new();
        let mut byte = [0u8; 1];
        while !answer.ends_with(b"\r\n\r\n") {
            c.read_exact(&mut byte).unwrap();
            answer.push(byte[0]);
        }
        let head = String::from_utf8(answer).unwrap().to_ascii_lowercase();
        let length: usize =
            head.split("content-length: ").nth(1).unwrap().split("\r\n").next().unwrap().parse().unwrap();
        let mut body = vec![0; length];
        c.read_exact(&mut body).unwrap();
        assert!(started.elapsed() < Duration::from_secs(2), "{path}: answered after {:?}", started.elapsed());
        assert!(head.starts_with("http/1.1 413") && head.contains("connection: close"), "{path}: {head}");
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["error"]["code"], "too_large", "{path}");
        // Closed once the refused body stops being waited for (5 s), not
        // at the body timeout (60 s).
        until_closed(&mut c);
        assert!(started.elapsed() < GENEROUS, "{path}: closed after {:?}", started.elapsed());
    }
    assert_eq!(s.get("/api/games/h", None).0, 404, "nothing was imported");
}

#[test]
fn a_client_that_sends_half_a_head_is_dropped_after_the_header_timeout() {
    let server = Local::start(Connections { header_timeout: Duration::from_secs(1), ..limits() }, Streams::default());
    let mut c = server.connect();
    let began = Instant::now();
    c.write_all(b"POST /api/games/g/events HTTP/1.1\r\nHost: arbiter\r\nContent-Le").unwrap();
    until_closed(&mut c);
    assert!(began.elapsed() < GENEROUS);
    // The server still serves others.
    assert_eq!(server.call("GET", "/api/games", None, None).0, 200);
    // The cut is counted by its reason.
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let metrics = agent.get(format!("{}/metrics", server.url)).call().unwrap().body_mut().read_to_string().unwrap();
    assert_eq!(
        common::server::metric(&metrics, "arbiter_connections_cut_total{reason=\"head_timeout\"}"),
        1.0,
        "{metrics}"
    );
}

#[test]
fn a_body_that_stops_arriving_is_answered_408_in_json_and_the_connection_closed() {
    let server = Local::start(Connections { body_timeout: Duration::from_secs(1), ..limits() }, Streams::default());
    let p1 = create(&server.url, &server.organiser, "g");
    let mut c = server.connect();
    let head = format!(
        "POST /api/games/g/events HTTP/1.1\r\nHost: arbiter\r\nAuthorization: Bearer {p1}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n"
    );
    c.write_all(head.as_bytes()).unwrap();
    c.write_all(br#"{"actor": "p1", "act"#).unwrap();
    let began = Instant::now();
    let answer = until_closed(&mut c);
    assert!(began.elapsed() < GENEROUS);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert_eq!(body_of(&answer)["error"]["code"], "timeout", "{answer}");
    let (_, head) = server.call("GET", "/api/games/g", None, None);
    assert_eq!(head["seq"], 0, "nothing was stored");
}

#[test]
fn an_idle_keep_alive_connection_is_closed_after_the_idle_timeout() {
    let server = Local::start(Connections { idle_timeout: Duration::from_secs(1), ..limits() }, Streams::default());
    let mut c = server.connect();
    c.write_all(b"GET /api/games HTTP/1.1\r\nHost: arbiter\r\n\r\n").unwrap();
    // The answer comes, and the connection stays open for the next request...
    let mut reader = BufReader::new(c.try_clone().unwrap());
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    // ...until it has been idle for the timeout.
    let began = Instant::now();
    let mut rest = Vec::new();
    match reader.read_to_end(&mut rest) {
        Ok(_) => {}
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "not closed within {GENEROUS:?}: {e}"),
    }
    assert!(began.elapsed() < GENEROUS);
}

#[test]
fn connections_past_the_cap_are_answered_503_in_json() {
    let server = Local::start(Connections { max_open: 2, ..limits() }, Streams::default());
    let held = [server.connect(), server.connect()];
    // Accepted in the order they connected: the third is past the cap.
    let mut third = server.connect();
    let answer = until_closed(&mut third);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert_eq!(body_of(&answer)["error"]["code"], "busy");
    // A place freed is a place taken again.
    drop(held);
    let began = Instant::now();
    while server.call("GET", "/api/games", None, None).0 != 200 {
        assert!(began.elapsed() < GENEROUS, "the freed places were not taken again");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn shutdown_cuts_clients_still_connected_at_the_deadline() {
    let mut server =
        Local::start(Connections { shutdown_deadline: Duration::from_secs(1), ..limits() }, Streams::default());
    let p1 = create(&server.url, &server.organiser, "g");
    // Half a head, half a body (an append in flight) and a live subscriber.
    let mut half_head = server.connect();
    half_head.write_all(b"GET /api/games HTTP/1.1\r\nHost: arb").unwrap();
    let mut half_body = server.connect();
    in_flight_with_half_a_body(&mut half_body, &p1);
    let mut live = server.connect();
    live.write_all(b"GET /api/games/g/stream HTTP/1.1\r\nHost: arbiter\r\n\r\n").unwrap();
    let mut first = [0u8; 12];
    live.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    let (stopped, took) = server.stop();
    assert!(took < GENEROUS, "{took:?}");
    assert!(stopped.cut >= 1, "the append whose body never came was cut: {stopped:?}");
    let answer = until_closed(&mut half_body);
    assert!(!answer.contains("201"), "nothing was acknowledged: {answer}");
    until_closed(&mut half_head);
    until_closed(&mut live);
}

#[test]
fn a_draining_server_answers_health_on_new_connections_and_refuses_the_rest_with_retry_after() {
    let mut server =
        Local::start(Connections { shutdown_deadline: Duration::from_secs(2), ..limits() }, Streams::default());
    let p1 = create(&server.url, &server.organiser, "g");
    // An append in flight holds the drain open until the deadline.
    let mut half_body = server.connect();
    in_flight_with_half_a_body(&mut half_body, &p1);
    let _ = server.stop.take().unwrap().send(());
    let began = Instant::now();
    // Each probe on a connection of its own, as a load balancer's. (One
    // accepted in the instant the drain begins may be closed unanswered.)
    let probe = |path: &str| {
        let mut c = server.connect();
        c.write_all(format!("GET {path} HTTP/1.1\r\nHost: arbiter\r\n\r\n").as_bytes()).unwrap();
        until_closed(&mut c)
    };
    let health = loop {
        let answer = probe("/health");
        if answer.starts_with("HTTP/1.1 503") {
            break answer;
        }
        assert!(began.elapsed() < GENEROUS, "/health still {answer}");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(body_of(&health)["error"]["code"], "shutting_down", "{health}");
    assert_eq!(body_of(&probe("/health"))["error"]["code"], "shutting_down", "and again");
    // Anything else, on a new connection: 503 with Retry-After, then closed.
    let answer = probe("/api/games");
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.to_ascii_lowercase().contains("retry-after: 5"), "{answer}");
    assert_eq!(body_of(&answer)["error"]["code"], "shutting_down", "{answer}");
    let done = server.done.take().unwrap();
    while !done.is_finished() {
        assert!(began.elapsed() < GENEROUS, "the drain did not end at its deadline");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(done.join().unwrap().unwrap().cut >= 1, "the append whose body never came was cut");
}

/// Starts an append and sends half its body, returning once the server is
/// reading it (it answers `100 Continue` only then): a request in flight.
fn in_flight_with_half_a_body(c: &mut TcpStream, token: &str) {
    let head = format!(
        "POST /api/games/g/events HTTP/1.1\r\nHost: arbiter\r\nAuthorization: Bearer {token}\r\nContent-Length: 200\r\nExpect: 100-continue\r\n\r\n"
    );
    c.write_all(head.as_bytes()).unwrap();
    let mut reader = BufReader::new(c.try_clone().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    assert!(line.starts_with("HTTP/1.1 100"), "{line}");
    c.write_all(br#"{"actor": "p1""#).unwrap();
}

fn wait_exit(child: &mut Child, within: Duration) -> std::process::ExitStatus {
    let began = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(began.elapsed() < within, "the server did not exit within {within:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SIGTERM is caught from the moment the server says where it listens: a
/// server sent it at once shuts down (exit 0, its last checkpoint signed),
/// never dies of it. (Caught only once the accept loop first waited, a
/// SIGTERM this early could kill it: seen on a loaded machine.)
#[test]
fn sigterm_sent_as_soon_as_the_server_listens_shuts_it_down() {
    for _ in 0..10 {
        let dir = tempfile::tempdir().unwrap();
        let (mut child, _, _) = common::server::spawn(dir.path(), &[]);
        unsafe {
            libc::kill(child.id() as i32, libc::SIGTERM);
        }
        let status = wait_exit(&mut child, GENEROUS);
        assert!(status.success(), "{status:?}");
    }
}

#[test]
fn sigterm_ends_the_server_within_the_deadline_while_a_client_holds_half_a_request() {
    let dir = tempfile::tempdir().unwrap();
    let slow = ["--header-timeout", "600", "--body-timeout", "600", "--idle-timeout", "600"];
    let (mut child, url, organiser) =
        common::server::spawn(dir.path(), &[&slow[..], &["--shutdown-deadline", "1"]].concat());
    let p1 = create(&url, &organiser, "g");
    let addr = url.strip_prefix("http://").unwrap();
    let mut half_head = TcpStream::connect(addr).unwrap();
    half_head.write_all(b"GET /api/games HTTP/1.1\r\nHo").unwrap();
    let mut half_body = TcpStream::connect(addr).unwrap();
    half_body.set_read_timeout(Some(GENEROUS)).unwrap();
    in_flight_with_half_a_body(&mut half_body, &p1);
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let status = wait_exit(&mut child, GENEROUS);
    assert!(status.success(), "{status:?}");
    assert!(!until_closed(&mut half_body).contains("201"));
    // The store is free again, and nothing was stored for the cut append.
    let out = common::arbiter(dir.path(), &["head", "g", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let head: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(head["seq"], 0);
}

/// Opens a live stream: Ok(reader) on 200, Err((status, body)) otherwise.
#[allow(clippy::type_complexity)]
fn subscribe(url: &str, path: &str, last_id: Option<&str>) -> Result<BufReader<TcpStream>, (u16, Value)> {
    let mut c = TcpStream::connect(url.strip_prefix("http://").unwrap()).unwrap();
    c.set_read_timeout(Some(GENEROUS)).unwrap();
    let id = last_id.map(|id| format!("Last-Event-ID: {id}\r\n")).unwrap_or_default();
    write!(c, "GET {path} HTTP/1.1\r\nHost: arbiter\r\n{id}\r\n").unwrap();
    let mut reader = BufReader::new(c);
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    let code: u16 = status.split(' ').nth(1).unwrap().parse().unwrap();
    let mut length = 0;
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).unwrap();
        if h == "\r\n" {
            break;
        }
        if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length: ") {
            length = v.trim().parse().unwrap();
        }
    }
    if code == 200 {
        return Ok(reader);
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    Err((code, serde_json::from_slice(&body).unwrap_or(Value::Null)))
}

#[test]
fn every_subscriber_gets_every_event_once_in_order_and_the_caps_answer_503() {
    let server = Local::start(limits(), Streams { per_game: 3, in_all: 4 });
    let p1 = create(&server.url, &server.organiser, "g");
    create(&server.url, &server.organiser, "h");
    let h0 = hash0(&server.url, "g");
    let mut subs: Vec<_> = (0..3).map(|_| subscribe(&server.url, "/api/games/g/stream", None).unwrap()).collect();
    let (status, v) = subscribe(&server.url, "/api/games/g/stream", None).expect_err("past the game's cap");
    assert_eq!((status, v["error"]["code"].as_str()), (503, Some("too_many_streams")), "{v}");
    let floor = subscribe(&server.url, "/api/stream?games=h", None).unwrap();
    let (status, v) = subscribe(&server.url, "/api/games/h/stream", None).expect_err("past the cap in all");
    assert_eq!((status, v["error"]["code"].as_str()), (503, Some("too_many_streams")), "{v}");
    // Singles and a batch, as they come: each subscriber sees 0..=40 once, in order.
    for i in 1..=20 {
        let (s, v) = server.call(
            "POST",
            "/api/games/g/events",
            Some(&p1),
            Some(&{
                let mut a = note(&h0, &format!("n{i}"));
                a["expect_seq"] = json!(i);
                a
            }),
        );
        assert_eq!(s, 201, "{v}");
    }
    let batch: Vec<Value> = (21..=40).map(|i| note(&h0, &format!("n{i}"))).collect();
    let (s, v) =
        server.call("POST", "/api/games/g/batch", Some(&p1), Some(&json!({"events": batch, "expect_seq": 21})));
    assert_eq!(s, 201, "{v}");
    for sub in &mut subs {
        let got = sse_frames(sub, 41);
        let seqs: Vec<u64> = got
            .iter()
            .map(|(id, e)| {
                assert_eq!(Some(e["seq"].as_u64().unwrap()), *id);
                id.unwrap()
            })
            .collect();
        assert_eq!(seqs, (0..=40).collect::<Vec<u64>>());
    }
    // A subscriber that leaves frees its place (noticed at the next write).
    drop(subs.pop());
    drop(floor);
    let began = Instant::now();
    let mut seq = 41;
    let mut again = loop {
        if let Ok(r) = subscribe(&server.url, "/api/games/g/stream?from=41", None) {
            break r;
        }
        assert!(began.elapsed() < GENEROUS, "a place was not freed");
        let mut a = note(&h0, "poke");
        a["expect_seq"] = json!(seq);
        assert_eq!(server.call("POST", "/api/games/g/events", Some(&p1), Some(&a)).0, 201);
        seq += 1;
    };
    let mut a = note(&h0, "after");
    a["expect_seq"] = json!(seq);
    assert_eq!(server.call("POST", "/api/games/g/events", Some(&p1), Some(&a)).0, 201);
    assert_eq!(sse_frames(&mut again, 1)[0].0, Some(41));
}

/// Many live streams of one game, opened at different places (from 0, by
/// Last-Event-ID, on `/api/stream`, and while the appends run) while
/// single appends and batches come as fast as one client sends them: each
/// stream gets every event from where it began exactly once, in order.
/// (Events stored close together reach the streams joined; nothing may be
/// lost or sent twice where the joins meet the store's reads.)
#[test]
fn many_subscribers_of_one_game_each_get_every_event_exactly_once() {
    const SINGLES: u64 = 150;
    const BATCHES: u64 = 3;
    const IN_A_BATCH: u64 = 20;
    let server = Local::start(Connections { max_open: 256, ..limits() }, Streams { per_game: 200, in_all: 200 });
    let p1 = create(&server.url, &server.organiser, "g");
    let h0 = hash0(&server.url, "g");
    let append = |seq: u64| {
        let mut a = note(&h0, &format!("n{seq}"));
        a["expect_seq"] = json!(seq);
        let (s, v) = server.call("POST", "/api/games/g/events", Some(&p1), Some(&a));
        assert_eq!(s, 201, "{v}");
    };
    for seq in 1..=9 {
        append(seq);
    }
    let last = 9 + SINGLES + BATCHES * IN_A_BATCH;
    // Each reader: the seqs it got, until the last one.
    let read = |mut sub: BufReader<TcpStream>, from: u64| {
        std::thread::spawn(move || {
            let frames = sse_frames(&mut sub, (last + 1 - from) as usize);
            let seqs: Vec<u64> = frames
                .iter()
                .map(|(id, data)| {
                    // `/stream` has the seq as id; `/api/stream` has none, and the event under "event".
                    let event = if id.is_some() { data } else { &data["event"] };
                    assert_eq!(data.get("game").is_some(), id.is_none(), "{data}");
                    let seq = event["seq"].as_u64().unwrap();
                    assert!(id.is_none_or(|id| id == seq), "id {id:?} of {event}");
                    seq
                })
                .collect();
            (from, seqs, sub)
        })
    };
    let mut readers = Vec::new();
    for i in 0..30 {
        readers.push(read(subscribe(&server.url, "/api/games/g/stream", None).unwrap(), 0));
        let id = (i % 9).to_string();
        readers.push(read(subscribe(&server.url, "/api/games/g/stream", Some(&id)).unwrap(), i % 9 + 1));
        readers.push(read(subscribe(&server.url, "/api/stream?games=g:0", None).unwrap(), 0));
    }
    // More open while the appends run, each from where the game is then.
    let url = server.url.clone();
    let opening = std::thread::spawn(move || {
        (0..30)
            .map(|i| {
                std::thread::sleep(Duration::from_millis(5));
                let from = (i * 7) % 100;
                (subscribe(&url, &format!("/api/games/g/stream?from={from}"), None).unwrap(), from)
            })
            .collect::<Vec<_>>()
    });
    let mut seq = 10;
    for _ in 0..BATCHES {
        for _ in 0..SINGLES / BATCHES {
            append(seq);
            seq += 1;
        }
        let batch: Vec<Value> = (0..IN_A_BATCH).map(|i| note(&h0, &format!("b{}", seq + i))).collect();
        let (s, v) =
            server.call("POST", "/api/games/g/batch", Some(&p1), Some(&json!({"events": batch, "expect_seq": seq})));
        assert_eq!(s, 201, "{v}");
        seq += IN_A_BATCH;
    }
    assert_eq!(seq, last + 1);
    for (sub, from) in opening.join().unwrap() {
        readers.push(read(sub, from));
    }
    assert_eq!(readers.len(), 120);
    let mut subs = Vec::new();
    for reader in readers {
        let (from, seqs, sub) = reader.join().unwrap();
        assert_eq!(seqs, (from..=last).collect::<Vec<u64>>(), "the stream from {from}");
        subs.push(sub);
    }
    // Nothing more was sent than the events: the next frame of each is the next event.
    append(last + 1);
    for mut sub in subs {
        let (id, data) = sse_frames(&mut sub, 1).remove(0);
        let event = if id.is_some() { &data } else { &data["event"] };
        assert_eq!(event["seq"], last + 1, "{data}");
    }
}

#[test]
fn errors_axum_answers_itself_come_in_the_json_body_and_last_event_id_does_not_wrap() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(dir.path());
    s.doomtrooper("g", "public");
    let json_error = |answer: &str, status: &str, code: &str| {
        assert!(answer.starts_with(&format!("HTTP/1.1 {status}")), "{answer}");
        assert!(answer.to_ascii_lowercase().contains("content-type: application/json"), "{answer}");
        assert_eq!(body_of(answer)["error"]["code"], code, "{answer}");
    };
    let raw = |request: &str| {
        let mut c = TcpStream::connect(s.url.strip_prefix("http://").unwrap()).unwrap();
        c.set_read_timeout(Some(GENEROUS)).unwrap();
        c.write_all(request.as_bytes()).unwrap();
        until_closed(&mut c)
    };
    // A seq no stream can hold: 400, not a replay from 0.
    let (status, v) = subscribe(&s.url, "/api/games/g/stream", Some("18446744073709551615")).expect_err("refused");
    assert_eq!((status, v["error"]["code"].as_str()), (400, Some("input")), "{v}");
    let (status, _) = subscribe(&s.url, "/api/games/g/stream", Some("x")).expect_err("refused");
    assert_eq!(status, 400);
    // The last event's id resumes after it: nothing yet, but a stream.
    assert!(subscribe(&s.url, "/api/games/g/stream", Some("0")).is_ok());
    // The first seq past what a stream holds: as Last-Event-ID and as
    // from=, the same 400 at once (from= waited forever).
    let by_id = subscribe(&s.url, "/api/games/g/stream", Some("16777215")).expect_err("refused");
    for path in ["/api/games/g/stream?from=16777216", "/api/games/g/stream?from=18446744073709551615"] {
        let by_from = subscribe(&s.url, path, None).expect_err("refused");
        assert_eq!(by_from, by_id, "{path}");
    }
    assert_eq!(by_id.0, 400);
    assert!(subscribe(&s.url, "/api/games/g/stream?from=16777215", None).is_ok(), "the last seq a stream holds");
    // A game name that is not UTF-8 once percent-decoded.
    json_error(&raw("GET /api/games/%FF HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"), "400", "input");
    json_error(&raw("GET /api/games/%FF/events HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"), "400", "input");
    // A query that does not decode.
    json_error(
        &raw("GET /api/games/g/events?from=%FF HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"),
        "400",
        "input",
    );
    // Wrong method: 405 with Allow, in JSON.
    let answer = raw("DELETE /api/games/g HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
    json_error(&answer, "405", "method_not_allowed");
    assert!(answer.to_ascii_lowercase().contains("allow: get"), "{answer}");
    json_error(
        &raw("PUT /api/games HTTP/1.1\r\nHost: a\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"),
        "405",
        "method_not_allowed",
    );
    // What hyper cannot parse as HTTP/1.1 is answered before any route
    // (docs/http-api.md lists these cases), in the same JSON body, and the
    // connection is closed.
    let long = format!("GET /{} HTTP/1.1\r\nHost: a\r\n\r\n", "a".repeat(70_000));
    // More headers than hyper reads (100).
    let many: String = (0..120).map(|i| format!("X-{i}: a\r\n")).collect();
    let huge = format!("GET / HTTP/1.1\r\nHost: a\r\n{many}\r\n");
    for (request, status) in [
        ("GARBAGE\r\n\r\n", "400"),
        ("GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n", "400"),
        ("GET / HTTP/1.1\r\nHost: a\r\nX: a\0b\r\n\r\n", "400"),
        ("POST /api/games HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", "400"),
        ("GET /a\u{7f}b HTTP/1.1\r\nHost: a\r\n\r\n", "400"),
        (long.as_str(), "414"),
        (huge.as_str(), "431"),
    ] {
        let answer = raw(request);
        json_error(&answer, status, "bad_request");
        assert!(answer.to_ascii_lowercase().contains("connection: close\r\n"), "{answer}");
    }
    // A request that was read is answered as before on the same connection
    // (a 400 of the router's own is not taken for hyper's).
    json_error(&raw("GET /api/games/g/events?from=x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"), "400", "input");
    // No such route (a body over the limit: tests/server.rs).
    json_error(&raw("GET /nowhere HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"), "404", "not_found");
}

#[test]
fn a_batch_of_1000_is_one_write_and_its_identical_retry_answers_200_with_the_stored_events() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(dir.path());
    s.doomtrooper("g", "public");
    let p1 = s.token("g", "seat", "p1");
    let h0 = hash0(&s.url, "g");
    let events: Vec<Value> = (1..=1000).map(|i| note(&h0, &format!("line {i}"))).collect();
    let too_many: Vec<Value> = (1..=1001).map(|i| note(&h0, &format!("line {i}"))).collect();
    let (status, v) = s.post("/api/games/g/batch", Some(&p1), &json!({"events": too_many, "expect_seq": 1}));
    assert_eq!((status, v["error"]["code"].as_str()), (400, Some("input")), "{v}");
    // Each event keeps an event's own limits: an array of 65 is refused, and says which.
    let mut long = events[..3].to_vec();
    long[2]["action"]["extra"] = json!(vec![1; 65]);
    let (status, v) = s.post("/api/games/g/batch", Some(&p1), &json!({"events": long, "expect_seq": 1}));
    assert_eq!(status, 400, "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains("batch event 3"), "{v}");
    assert_eq!(s.head("g")["seq"], 0, "a refused batch stores nothing");

    let (status, first) = s.post("/api/games/g/batch", Some(&p1), &json!({"events": events, "expect_seq": 1}));
    assert_eq!(status, 201, "{first}");
    assert_eq!(first["appended"].as_array().unwrap().len(), 1000);
    assert_eq!(s.head("g")["seq"], 1000);
    let (status, retry) = s.post("/api/games/g/batch", Some(&p1), &json!({"events": events, "expect_seq": 1}));
    assert_eq!(status, 200, "{retry}");
    let hashes = |v: &Value| -> Vec<String> {
        v["appended"].as_array().unwrap().iter().map(|a| a["event"]["hash"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(hashes(&retry), hashes(&first));
    assert!(retry["appended"].as_array().unwrap().iter().all(|a| a["duplicate"] == true));
    assert_eq!(s.head("g")["seq"], 1000, "the retry stored nothing");
    // A different batch at the same seq is a conflict, not a retry.
    let other: Vec<Value> = (1..=2).map(|i| note(&h0, &format!("other {i}"))).collect();
    let (status, v) = s.post("/api/games/g/batch", Some(&p1), &json!({"events": other, "expect_seq": 1}));
    assert_eq!((status, v["error"]["code"].as_str()), (409, Some("conflict")), "{v}");

    // The CLI against the server sends stdin of more than 64 lines as a batch.
    let lines: String = (1..=100).map(|i| format!("{}\n", note(&h0, &format!("stdin {i}")))).collect();
    let out = common::arbiter_stdin(dir.path(), &["--server", &s.url, "--token", &p1, "append", "g", "-"], &lines);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(s.head("g")["seq"], 1100);
}

#[test]
fn a_server_killed_during_batches_keeps_each_batch_whole_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, mut url, organiser) = common::server::spawn(dir.path(), &[]);
    let p1 = create(&url, &organiser, "g");
    let h0 = hash0(&url, "g");
    // Batch k (from 0) has 2 + k % 7 events, texts "k/i".
    let size = |k: usize| 2 + k % 7;
    let mut next_batch = 0;
    for round in 0..3 {
        let (tx, rx) = std::sync::mpsc::channel();
        let (writer_url, token, h0) = (url.clone(), p1.clone(), h0.clone());
        let from_batch = next_batch;
        let writer = std::thread::spawn(move || {
            let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
            let mut k = from_batch;
            let mut expect = 1 + (0..k).map(size).sum::<usize>() as u64;
            loop {
                let events: Vec<Value> = (0..size(k)).map(|i| note(&h0, &format!("{k}/{i}"))).collect();
                let sent = agent
                    .post(&format!("{writer_url}/api/games/g/batch"))
                    .header("Authorization", &format!("Bearer {token}"))
                    .send_json(json!({"events": events, "expect_seq": expect}));
                match sent {
                    Ok(r) if r.status().as_u16() == 201 && tx.send(k).is_ok() => {}
                    _ => return,
                }
                expect += size(k) as u64;
                k += 1;
            }
        });
        // Killed after a few acknowledgements, while the writer keeps sending.
        let mut acknowledged = 0;
        for _ in 0..(5 + round * 3) {
            acknowledged = rx.recv_timeout(GENEROUS).expect("a batch acknowledged") + 1;
        }
        child.kill().unwrap();
        child.wait().unwrap();
        writer.join().unwrap();
        while let Ok(k) = rx.try_recv() {
            acknowledged = k + 1;
        }
        // What the store holds: whole batches from 0, every acknowledged one.
        let texts = exported_texts(dir.path(), "g");
        let (mut at, mut k) = (0, 0);
        while at < texts.len() {
            for i in 0..size(k) {
                assert_eq!(texts.get(at + i), Some(&format!("{k}/{i}")), "batch {k} is not whole (round {round})");
            }
            at += size(k);
            k += 1;
        }
        assert!(k >= acknowledged, "batch {} was acknowledged but is not stored", acknowledged - 1);
        next_batch = k;
        let (restarted, new_url, _) = common::server::spawn(dir.path(), &[]);
        (child, url) = (restarted, new_url);
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Tables appending at once through a server share its syncs (one round
/// of the group commit makes several games' appends durable): whatever
/// round an append was made durable in, once acknowledged it survives a
/// SIGKILL, and each game holds its appends in order.
#[test]
fn a_server_killed_amid_appends_to_many_games_keeps_every_acknowledged_one() {
    const GAMES: usize = 8;
    let dir = tempfile::tempdir().unwrap();
    let (mut child, url, organiser) = common::server::spawn(dir.path(), &[]);
    let games: Vec<(String, String, String)> = (0..GAMES)
        .map(|g| {
            let game = format!("g{g}");
            let token = create(&url, &organiser, &game);
            let h0 = hash0(&url, &game);
            (game, token, h0)
        })
        .collect();
    let (tx, rx) = std::sync::mpsc::channel::<(usize, u64)>();
    let writers: Vec<_> = games
        .iter()
        .enumerate()
        .map(|(g, (game, token, h0))| {
            let (url, game, token, h0, tx) = (url.clone(), game.clone(), token.clone(), h0.clone(), tx.clone());
            std::thread::spawn(move || {
                let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
                for seq in 1u64.. {
                    let mut body = note(&h0, &format!("{game}/{seq}"));
                    body["expect_seq"] = json!(seq);
                    let sent = agent
                        .post(&format!("{url}/api/games/{game}/events"))
                        .header("Authorization", &format!("Bearer {token}"))
                        .send_json(&body);
                    match sent {
                        Ok(r) if r.status().as_u16() == 201 && tx.send((g, seq)).is_ok() => {}
                        _ => return,
                    }
                }
            })
        })
        .collect();
    drop(tx);
    let mut acknowledged = [0u64; GAMES];
    for _ in 0..400 {
        let (g, seq) = rx.recv_timeout(GENEROUS).expect("an append acknowledged");
        acknowledged[g] = acknowledged[g].max(seq);
    }
    // The rounds were shared: some sync made more than one append durable.
    let (status, metrics) = call(&url, "GET", "/metrics", None, None);
    assert_eq!(status, 200);
    let text = metrics.as_str().expect("OpenMetrics text");
    let sample = |name: &str| common::server::metric(text, name);
    let (events, syncs) = (sample("arbiter_sync_events_sum"), sample("arbiter_sync_events_count"));
    assert!(events > syncs, "{events} events in {syncs} syncs: no sync was shared");
    child.kill().unwrap();
    child.wait().unwrap();
    for writer in writers {
        writer.join().unwrap();
    }
    while let Ok((g, seq)) = rx.try_recv() {
        acknowledged[g] = acknowledged[g].max(seq);
    }
    for (g, (game, _, _)) in games.iter().enumerate() {
        let texts = exported_texts(dir.path(), game);
        let expected: Vec<String> = (1..=texts.len()).map(|seq| format!("{game}/{seq}")).collect();
        assert_eq!(texts, expected, "{game}'s events are its appends in order");
        assert!(
            texts.len() as u64 >= acknowledged[g],
            "{game}: seq {} was acknowledged but is not stored",
            acknowledged[g]
        );
    }
    let out = common::arbiter(dir.path(), &["verify", "--all"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn every_verb_on_a_store_a_server_holds_says_which_pid_and_to_use_server_url() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(dir.path());
    s.doomtrooper("g", "public");
    let pid = s.child.id();
    let export = dir.path().join("g.jsonl");
    std::fs::write(&export, "").unwrap();
    let export = export.to_str().unwrap();
    let verbs: &[&[&str]] = &[
        &["new", "h", "--ruleset", "doomtrooper", "--seat", "p1=Ann", "--seat", "p2=Ben"],
        &["append", "g", "--actor", "p1", r#"{"type":"pass"}"#],
        &["games"],
        &["log", "g"],
        &["state", "g"],
        &["head", "g"],
        &["verify", "g"],
        &["export", "g"],
        &["import", export, "--as", "h"],
        &["note", "g", "--actor", "p1", "--concerns", "0", "x"],
        &["replay", "g"],
        &["fork", "g", "h", "--at", "0"],
        &["whatif", "g", "--skip", "0"],
        &["diff", "g", "g"],
        &["token", "g", "--seat", "p1"],
        &["access", "g", "--read", "token"],
        &["checkpoint"],
        &["prove", "g", "--out", export],
        &["serve", "--listen", "127.0.0.1:0"],
    ];
    for args in verbs {
        let out = common::arbiter(dir.path(), args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} ran on a store a server holds");
        assert!(err.contains(&format!("pid {pid}")) && err.contains(&format!("--server {}", s.url)), "{args:?}: {err}");
    }
}
