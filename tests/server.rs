//! `arbiter serve` over real TCP on loopback: roles and refusals, conflicts,
//! racing writers, the live stream and its resumption, limits, the CLI
//! against a server, and a graceful shutdown.

mod common;

use std::sync::{Arc, Mutex};

use arbiter::record::{ExportBytes, verify};
use common::server::{Served, sse, start_combat, stream, war};
use common::*;
use serde_json::{Value, json};

/// The actor and action of seq `seq` (>= 3) of a counter war at steps 3-6.
fn head_hash(s: &Served, game: &str) -> String {
    s.head(game)["hash"].as_str().unwrap().to_string()
}

fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("(no code)")
}

#[test]
fn each_role_may_do_only_its_part_and_every_refusal_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(dir.path());
    assert_eq!(s.organiser.len(), 64, "a new store prints an organiser token once");
    s.doomtrooper("g", "public");
    let p1 = s.token("g", "seat", "p1");
    let p2 = s.token("g", "seat", "p2");
    let dana = s.token("g", "judge", "Dana");

    // Creating a game: the organiser only.
    let header = json!({"type": "open", "ruleset": "doomtrooper", "ruleset_version": 1,
        "seats": [{"id": "p1", "name": "Ann"}, {"id": "p2", "name": "Ben"}]});
    let create = json!({"name": "h", "header": header});
    assert_eq!(s.post("/api/games", None, &create).0, 401);
    let (status, v) = s.post("/api/games", Some(&p1), &create);
    assert_eq!((status, code(&v)), (403, "forbidden"));
    let (status, v) = s.post("/api/games", Some("not-a-token"), &create);
    assert_eq!((status, code(&v)), (401, "unauthorized"), "{v}");
    assert_eq!(s.get("/api/games/h", None).0, 404, "no refused create stored a game");

    // Tokens: the organiser only, for real seats and judges only.
    assert_eq!(s.post("/api/games/g/tokens", Some(&p1), &json!({"seat": "p2"})).0, 403);
    let (status, v) = s.post("/api/games/g/tokens", Some(&s.organiser), &json!({"seat": "p9"}));
    assert_eq!((status, code(&v)), (400, "input"), "{v}");
    let (status, v) = s.post("/api/games/g/tokens", Some(&s.organiser), &json!({"judge": "Mallory"}));
    assert_eq!((status, code(&v)), (400, "input"), "{v}");

    let before = head_hash(&s, "g");
    // No token; the organiser; a seat as another seat; a judge as a seat.
    let (status, v) = s.append("g", "", "p1", combat("p2", "A", "D"), 1);
    assert_eq!((status, code(&v)), (401, "unauthorized"), "{v}");
    let (status, v) = s.append("g", &s.organiser, "p1", combat("p2", "A", "D"), 1);
    assert_eq!((status, code(&v)), (403, "forbidden"));
    let (status, v) = s.append("g", &p2, "p1", combat("p2", "A", "D"), 1);
    assert_eq!((status, code(&v)), (403, "forbidden"));
    assert!(v["error"]["message"].as_str().unwrap().contains("appends as \"p2\""), "{v}");
    let (status, _) = s.append("g", &dana, "p1", combat("p2", "A", "D"), 1);
    assert_eq!(status, 403);
    // A seat may not rule: the rules refuse it (a judge's action).
    let ruling = json!({"type": "ruling", "kind": "penalty", "concerns": {"seq": 0, "hash": before},
        "reason": "slow play", "seat": "p2", "infraction": "slow play", "penalty": "warning", "fix": "none"});
    let (status, v) = s.append("g", &p1, "p1", ruling.clone(), 1);
    assert_eq!((status, code(&v)), (422, "refused"), "{v}");
    assert!(v["error"]["violation"]["rule"].is_string(), "a refusal carries the rule: {v}");
    assert_eq!(head_hash(&s, "g"), before, "no refusal stored anything");

    // The judge rules as themself; the seat acts as itself.
    assert_eq!(s.append("g", &dana, "Dana", ruling, 1).0, 201);
    assert_eq!(s.append("g", &p1, "p1", combat("p2", "A", "D"), 2).0, 201);
    // Out of turn: the battle tactic is the attacking player's (p1).
    let before = head_hash(&s, "g");
    let (status, v) = s.append("g", &p2, "p2", tactic("Fight"), 3);
    assert_eq!((status, code(&v)), (422, "refused"), "{v}");
    assert_eq!(v["error"]["violation"]["may_act"], json!(["p1"]));
    assert_eq!(head_hash(&s, "g"), before, "no refusal stored anything");
    // A token of one game does not act in another.
    s.doomtrooper("other", "public");
    let (status, v) = s.append("other", &p1, "p1", combat("p2", "A", "D"), 1);
    assert_eq!((status, code(&v)), (403, "forbidden"), "{v}");
}

#[test]
fn token_only_games_are_read_by_their_own_token_holders() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(dir.path());
    s.doomtrooper("secret", "token");
    s.doomtrooper("open", "public");
    s.doomtrooper("elsewhere", "public");
    let p1 = s.token("secret", "seat", "p1");
    let stranger = s.token("elsewhere", "seat", "p1");
    for path in ["/api/games/secret", "/api/games/secret/events", "/api/games/secret/state", "/api/games/secret/export"]
    {
        assert_eq!(s.get(path, None).0, 401, "{path} without a token");
        assert_eq!(s.get(path, Some(&stranger)).0, 403, "{path} with another game's token");
        assert_eq!(s.get(path, Some(&p1)).0, 200, "{path} with the game's seat token");
        assert_eq!(s.get(path, Some(&s.organiser)).0, 200, "{path} with the organiser's token");
    }
    assert_eq!(s.get("/api/games/open/state", None).0, 200, "a public game needs no token");
    assert_eq!(s.get("/api/games", None).1, json!(["elsewhere", "open"]), "the list shows only readable games");
    assert_eq!(s.get("/api/games", Some(&p1)).1, json!(["elsewhere", "open", "secret"]));
    // The organiser opens the game to everyone.
    assert_eq!(s.call("PUT", "/api/games/secret/access", Some(&p1), Some(&json!({"read": "public"}))).0, 403);
    assert_eq!(s.call("PUT", "/api/games/secret/access", Some(&s.organiser), Some(&json!({"read": "public"}))).0, 200);
    assert_eq!(s.get("/api/games/secret/state", None).0, 200);
}

#[test]
fn a_stale_expected_seq_is_a_409_with_the_head_and_a_retry_is_not_stored_twice() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(dir.path());
    s.doomtrooper("g", "public");
    let p1 = s.token("g", "seat", "p1");
    let (status, first) = s.append("g", &p1, "p1", combat("p2", "A", "D"), 1);
    assert_eq!(status, 201);
    assert_eq!(first["duplicate"], json!(false));
    assert_eq!(first["view"]["may_act"].as_array().unwrap().len(), 1, "the view says who acts next: {first}");
    // The same request again (a retry after a lost answer): 200, the stored event.
    let (status, again) = s.append("g", &p1, "p1", combat("p2", "A", "D"), 1);
    assert_eq!((status, again["duplicate"].clone()), (200, json!(true)));
    assert_eq!(again["event"], first["event"]);
    // Another action at a taken seq: 409 with the head.
    let before = head_hash(&s, "g");
    let (status, v) = s.append("g", &p1, "p1", tactic("Fight"), 1);
    assert_eq!((status, code(&v)), (409, "conflict"), "{v}");
    assert_eq!(v["error"]["head"], json!({"seq": 1, "hash": before}));
    let (status, v) = s.append("g", &p1, "p1", tactic("Fight"), 7);
    assert_eq!((status, code(&v)), (409, "conflict"));
    // The expected seq is required.
    let (status, v) = s.post("/api/games/g/events", Some(&p1), &json!({"actor": "p1", "action": tactic("Fight")}));
    assert_eq!((status, code(&v)), (400, "input"), "{v}");
    assert_eq!(head_hash(&s, "g"), before);
}

#[test]
fn racing_writers_store_exactly_one_event_per_seq_and_every_acknowledged_one() {
    let dir = tempfile::tempdir().unwrap();
    let s = Arc::new(Served::start(dir.path()));
    s.doomtrooper("g", "public");
    let p1 = s.token("g", "seat", "p1");
    let p2 = s.token("g", "seat", "p2");
    start_combat(&s, "g", &p1);
    const WRITERS: usize = 8;
    const LAST: u64 = 160;
    let acked: Arc<Mutex<Vec<(u64, String)>>> = Arc::default();
    let conflicts = Arc::new(Mutex::new(0u64));
    // All writers read the same head before their first append, so the
    // first round is a race for one seq however the threads are scheduled.
    let start = Arc::new(std::sync::Barrier::new(WRITERS));
    let threads: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (s, acked, conflicts, p1, p2) = (s.clone(), acked.clone(), conflicts.clone(), p1.clone(), p2.clone());
            let start = start.clone();
            std::thread::spawn(move || {
                for round in 0.. {
                    // Each writer reads the head and tries to add the next event.
                    let next = s.head("g")["seq"].as_u64().unwrap() + 1;
                    if round == 0 {
                        start.wait();
                    }
                    if next > LAST {
                        return;
                    }
                    // Each writer plays its own card, so two writers never send the same action.
                    let (actor, _) = war(next);
                    let action = counter(&format!("Cancel {w}"), next - 1);
                    let token = if actor == "p1" { &p1 } else { &p2 };
                    let (status, v) = s.append("g", token, actor, action, next);
                    match status {
                        201 => acked.lock().unwrap().push((next, v["event"]["hash"].as_str().unwrap().to_string())),
                        409 => *conflicts.lock().unwrap() += 1,
                        _ => panic!("unexpected {status}: {v}"),
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    let (status, export) = s.get("/api/games/g/export", None);
    assert_eq!(status, 200);
    let export = match export {
        Value::String(text) => text,
        other => other.to_string() + "\n",
    };
    let (verified, _) = verify(&ExportBytes(export.into_bytes()), None).expect("the stored record verifies: no fork");
    assert_eq!(verified.events, LAST + 1, "exactly one event per seq");
    let mut seqs: Vec<u64> = acked.iter().map(|(q, _)| *q).collect();
    seqs.sort();
    seqs.dedup();
    assert_eq!(seqs.len(), acked.len(), "no seq was acknowledged twice as new");
    let stored = s.stored("g");
    for (seq, hash) in &acked {
        assert_eq!(&stored[*seq as usize], &(*seq, hash.clone()), "acknowledged seq {seq} is stored as acknowledged");
    }
    assert!(*conflicts.lock().unwrap() >= WRITERS as u64 - 1, "the writers raced: the losers were told 409");
}

#[test]
fn the_live_stream_resumes_from_a_seq_with_no_gap_and_no_duplicate() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(dir.path());
    s.doomtrooper("g", "public");
    let p1 = s.token("g", "seat", "p1");
    let p2 = s.token("g", "seat", "p2");
    start_combat(&s, "g", &p1);
    let tok = |actor: &str| if actor == "p1" { p1.clone() } else { p2.clone() };
    for seq in 3..=10 {
        let (actor, action) = war(seq);
        assert_eq!(s.append("g", &tok(actor), actor, action, seq).0, 201);
    }
    // From seq 0: the stored events, in order, ids = seqs.
    let mut r = stream(&s, "/api/games/g/stream?from=0", None);
    let got = sse(&mut r, 6);
    assert_eq!(got.iter().map(|(id, _)| *id).collect::<Vec<_>>(), vec![0, 1, 2, 3, 4, 5]);
    assert!(got.iter().all(|(id, e)| e["seq"] == json!(id)), "each message's id is its event's seq");
    drop(r);
    // Meanwhile the table goes on.
    for seq in 11..=14 {
        let (actor, action) = war(seq);
        assert_eq!(s.append("g", &tok(actor), actor, action, seq).0, 201);
    }
    // A reconnection with Last-Event-ID: 5 resumes at 6, through the stored
    // events and on into live ones, with no gap and no duplicate.
    let mut r = stream(&s, "/api/games/g/stream?from=0", Some(5));
    let stored = sse(&mut r, 9);
    assert_eq!(stored.iter().map(|(id, _)| *id).collect::<Vec<_>>(), (6..=14).collect::<Vec<_>>());
    let (actor, action) = war(15);
    let (_, appended) = s.append("g", &tok(actor), actor, action, 15);
    let live = sse(&mut r, 1);
    assert_eq!(live[0].0, 15);
    assert_eq!(live[0].1, appended["event"], "the live message is the stored event");
    // ?from=N resumes too.
    let mut r = stream(&s, "/api/games/g/stream?from=14", None);
    assert_eq!(sse(&mut r, 2).iter().map(|(id, _)| *id).collect::<Vec<_>>(), vec![14, 15]);
}

#[test]
fn bad_requests_get_a_coded_error_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(dir.path());
    s.doomtrooper("g", "public");
    let p1 = s.token("g", "seat", "p1");
    let before = head_hash(&s, "g");
    let path = "/api/games/g/events";
    let cases: Vec<(&[u8], &str)> = vec![
        (b"{not json", "input"),
        (br#"{"actor":"p1","action":{"type":"announce","what":"combat","defending_player":"p2","attacker":"A","defender":"D","x":1.5},"expect_seq":1}"#, "input"),
        (br#"{"actor":"p1","actor":"p1","action":{"type":"pass"},"expect_seq":1}"#, "input"),
        (br#"{"actor":"p1","action":{"type":"pass"},"expect_seq":1,"extra":true}"#, "input"),
        (br#"{"actor":"p1","action":{"type":"bogus"},"expect_seq":1}"#, "refused"),
        (br#"{"actor":"p1","action":{"type":"pass"},"expect_seq":1}"#, "refused"),
    ];
    for (body, want) in cases {
        let (status, v) = s.post_raw(path, Some(&p1), body);
        assert_eq!(code(&v), want, "{}: {status} {v}", String::from_utf8_lossy(body));
        assert!(status >= 400);
    }
    let huge = vec![b' '; arbiter::limits::MAX_REQUEST_BYTES + 1];
    let (status, v) = s.post_raw(path, Some(&p1), &huge);
    assert_eq!((status, code(&v)), (413, "too_large"), "{v}");
    let (status, v) = s.get("/api/nowhere", None);
    assert_eq!((status, code(&v)), (404, "not_found"));
    let (status, v) = s.get("/api/games/g/events?from=x", None);
    assert_eq!((status, code(&v)), (400, "input"));
    let (status, v) = s.get("/api/games/nope/state", None);
    assert_eq!((status, code(&v)), (404, "no_such_game"));
    // A batch with one refused event stores none of it.
    let batch = json!({"expect_seq": 1, "events": [
        {"actor": "p1", "action": combat("p2", "A", "D")},
        {"actor": "p1", "action": {"type": "pass"}}]});
    let (status, v) = s.post("/api/games/g/batch", Some(&p1), &batch);
    assert_eq!((status, code(&v)), (422, "refused"), "{v}");
    assert!(v["error"]["message"].as_str().unwrap().starts_with("batch event 2"), "{v}");
    assert_eq!(head_hash(&s, "g"), before, "nothing was stored");
}

#[test]
fn the_served_openapi_document_is_the_committed_one() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(dir.path());
    let (status, served) = s.get("/openapi.json", None);
    assert_eq!(status, 200);
    let committed: Value =
        serde_json::from_str(&std::fs::read_to_string(repo_file("schemas/openapi.json")).unwrap()).unwrap();
    assert_eq!(served, committed, "schemas/openapi.json is stale: run `cargo run -- schema`");
    for path in ["/api/games/{game}/events", "/api/games/{game}/stream", "/api/diff", "/games/{game}/replay"] {
        assert!(served["paths"][path].is_object(), "{path} is documented");
    }
    assert_eq!(
        served["paths"]["/api/games/{game}/events"]["post"]["responses"]["409"]["content"]["application/json"]["schema"]
            ["$ref"],
        json!("#/components/schemas/Error")
    );
}

#[test]
fn dispute_tools_work_over_the_api() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(dir.path());
    let file = dir.path().join("sample.jsonl");
    // A recorded sample, exported locally, then imported through the server.
    let local = tempfile::tempdir().unwrap();
    assert!(arbiter(local.path(), &["demo", "--as", "sample"]).status.success());
    assert!(arbiter(local.path(), &["export", "sample", "-o", file.to_str().unwrap()]).status.success());
    let bytes = std::fs::read(&file).unwrap();
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let mut resp = agent
        .post(&format!("{}/api/games/sample/import", s.url))
        .header("Authorization", &format!("Bearer {}", s.organiser))
        .send(&bytes[..])
        .unwrap();
    let body: Value = resp.body_mut().read_json().unwrap();
    assert_eq!(resp.status().as_u16(), 201, "{body}");
    let events = body["events"].as_u64().unwrap();
    // The export through the server is the file, byte for byte.
    let mut resp = agent.get(&format!("{}/api/games/sample/export", s.url)).call().unwrap();
    assert_eq!(resp.body_mut().read_to_vec().unwrap(), bytes);
    // Fork, what-if, diff, replay, verify, state at a seq.
    let (status, v) = s.post("/api/games/sample/fork", Some(&s.organiser), &json!({"at": 10, "name": "f"}));
    assert_eq!(status, 201, "{v}");
    let (_, d) = s.get("/api/diff?a=sample&b=f", None);
    assert_eq!((d["agree"].clone(), d["common"].clone()), (json!(false), json!(11)), "{d}");
    let (_, w) = s.post("/api/games/sample/whatif", None, &json!({"skip": [5]}));
    assert!(w.get("illegal").is_some() || w.get("changes").is_some(), "{w}");
    let (_, r) = s.get("/api/games/sample/replay?from=3&to=5", None);
    assert_eq!(r["events"].as_array().unwrap().len(), 3);
    assert!(r["events"][0]["after"]["reference"].as_str().unwrap().starts_with("Doomtrooper"));
    // Each change as a state path by default; `paths=0` (the replay page's)
    // the same events in the board's words alone.
    let (_, words) = s.get("/api/games/sample/replay?from=3&to=5&paths=0", None);
    let (with, without) = (r["events"].as_array().unwrap(), words["events"].as_array().unwrap());
    assert_eq!(with.len(), without.len());
    for (w, o) in with.iter().zip(without) {
        assert!(w["changes"].is_array() && w["said"].is_array(), "{w}");
        let mut w = w.clone();
        w.as_object_mut().unwrap().remove("changes");
        assert_eq!(o, &w, "paths=0: the event without its paths");
    }
    // The replay comes in pages: `next` says where the next one starts.
    let (_, r) = s.get("/api/games/sample/replay?from=3&limit=4", None);
    let seqs: Vec<u64> = r["events"].as_array().unwrap().iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!((seqs, r["next"].clone(), r["rewound"].clone()), (vec![3, 4, 5, 6], json!(7), json!([])));
    let (_, r) = s.get(&format!("/api/games/sample/replay?from={}", events - 2), None);
    assert_eq!((r["events"].as_array().unwrap().len(), r["next"].clone()), (2, json!(null)));
    let (_, v) = s.get("/api/games/sample/verify", None);
    assert_eq!((v["ok"].clone(), v["events"].as_u64()), (json!(true), Some(events)));
    let (_, st) = s.get("/api/games/sample/state?at=3", None);
    assert_eq!(st["seq"], json!(3));
    // Paged reading.
    let (_, page) = s.get("/api/games/sample/events?from=0&limit=50", None);
    assert_eq!(page["events"].as_array().unwrap().len(), 50);
    assert_eq!(page["next"], json!(50));
    // Re-importing under a taken name is refused.
    let resp = agent
        .post(&format!("{}/api/games/sample/import", s.url))
        .header("Authorization", &format!("Bearer {}", s.organiser))
        .send(&bytes[..])
        .unwrap();
    assert_eq!(resp.status().as_u16(), 409);
}

/// The CLI with --server: the same verbs, the same exit codes.
#[test]
fn the_cli_works_against_a_server() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(&dir.path().join("store"));
    let cli = |token: &str, args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .env("ARBITER_SERVER", &s.url)
            .env("ARBITER_TOKEN", token)
            .args(args)
            .output()
            .unwrap()
    };
    let org = s.organiser.clone();
    let out = cli(
        &org,
        &["new", "t1", "--ruleset", "doomtrooper", "--seat", "p1=Ann", "--seat", "p2=Ben", "--judge", "Dana"],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let token = |args: &[&str]| String::from_utf8(cli(&org, args).stdout).unwrap().trim().to_string();
    let p1 = token(&["token", "t1", "--seat", "p1"]);
    let dana = token(&["token", "t1", "--judge", "Dana"]);
    assert_eq!(p1.len(), 64);
    let announce = combat("p2", "A", "D").to_string();
    let out = cli(&p1, &["append", "t1", "--actor", "p1", &announce]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("seq 1 appended"));
    // Refused by the rules: exit 1, the refusal in the judge's words.
    let out = cli(&p1, &["append", "t1", "--actor", "p1", r#"{"type":"pass"}"#]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing was stored"));
    // Refused by the roles: exit 1.
    let out = cli(&p1, &["append", "t1", "--actor", "p2", r#"{"type":"pass"}"#]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("forbidden"));
    // A stale --expect-seq: exit 1, conflict.
    let out = cli(&p1, &["--json", "append", "t1", "--actor", "p1", "--expect-seq", "1", &tactic("Fight").to_string()]);
    assert_eq!(out.status.code(), Some(1));
    let err: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(err["error"]["code"], json!("conflict"));
    // A judge's verb fills in the hash through the server.
    let out = cli(&dana, &["note", "t1", "--actor", "Dana", "--concerns", "1", "checked the announcement"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for args in
        [&["state", "t1"][..], &["head", "t1"], &["log", "t1"], &["verify", "t1"], &["replay", "t1"], &["games"]]
    {
        let out = cli("", args);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let out = cli("", &["--json", "state", "t1"]);
    let state: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(state["seq"], json!(2));
    // The whole demo through the server: tokens per seat, appends as each.
    let out = cli(&org, &["demo", "--as", "served"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("in the server"));
    // Export through the server, verified locally.
    let file = dir.path().join("served.jsonl");
    assert!(cli("", &["export", "served", "-o", file.to_str().unwrap()]).status.success());
    let out = arbiter(dir.path(), &["verify-file", file.to_str().unwrap()]);
    assert!(out.status.success());
    // The store itself is held by the server: the CLI says which and how to reach it.
    let out = arbiter(&dir.path().join("store"), &["games"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    let pid = s.child.id();
    assert!(err.contains(&format!("in use by `arbiter serve` (pid {pid}); use --server {}", s.url)), "{err}");
    // No server there: exit 2.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["--server", "http://127.0.0.1:9", "games"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_graceful_shutdown_finishes_appends_in_flight_and_acknowledges_only_stored_ones() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(dir.path());
    const TABLES: usize = 6;
    let mut tokens = Vec::new();
    for t in 0..TABLES {
        let game = format!("t{t}");
        s.doomtrooper(&game, "public");
        let p1 = s.token(&game, "seat", "p1");
        let p2 = s.token(&game, "seat", "p2");
        start_combat(&s, &game, &p1);
        tokens.push((game, p1, p2));
    }
    let s = Arc::new(Mutex::new(Some(s)));
    let url = s.lock().unwrap().as_ref().unwrap().url.clone();
    let acked: Arc<Mutex<Vec<(String, u64, String)>>> = Arc::default();
    let threads: Vec<_> = tokens
        .into_iter()
        .map(|(game, p1, p2)| {
            let (acked, url) = (acked.clone(), url.clone());
            std::thread::spawn(move || {
                let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
                for seq in 3.. {
                    let (actor, action) = war(seq);
                    let token = if actor == "p1" { &p1 } else { &p2 };
                    let resp = agent
                        .post(&format!("{url}/api/games/{game}/events"))
                        .header("Authorization", &format!("Bearer {token}"))
                        .send_json(json!({"actor": actor, "action": action, "expect_seq": seq}));
                    let Ok(mut resp) = resp else { return }; // the server is gone
                    let status = resp.status().as_u16();
                    let Ok(v) = resp.body_mut().read_json::<Value>() else { return };
                    match status {
                        201 => {
                            acked.lock().unwrap().push((game.clone(), seq, v["event"]["hash"].as_str().unwrap().into()))
                        }
                        503 => {
                            assert_eq!(v["error"]["code"], json!("shutting_down"), "{v}");
                            return;
                        }
                        _ => panic!("unexpected {status}: {v}"),
                    }
                }
            })
        })
        .collect();
    // Let the tables record for a moment, then shut down under load.
    while acked.lock().unwrap().len() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let mut served = s.lock().unwrap().take().unwrap();
    // A spectator follows a game live: the shutdown ends the stream rather than waiting on it.
    let mut follower = stream(&served, "/api/games/t0/stream?from=0", None);
    assert_eq!(sse(&mut follower, 1)[0].0, 0);
    let status = served.stop();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut follower, &mut rest).expect("the stream ends cleanly");
    assert!(status.success(), "a graceful shutdown exits 0: {status:?}");
    for t in threads {
        t.join().unwrap();
    }
    let data = served.data.clone();
    drop(served);
    // The process is gone: the store opens, and every acknowledged append is in it.
    let store = arbiter::store::SledStore::open(&data).unwrap();
    use arbiter::store::Store;
    for (game, seq, hash) in acked.lock().unwrap().iter() {
        let e = store.get(game, *seq).unwrap().unwrap_or_else(|| panic!("acknowledged {game} seq {seq} is missing"));
        assert_eq!(&e.hash, hash);
    }
    for t in 0..TABLES {
        verify(&arbiter::record::StoredGame::new(&store, &format!("t{t}")), None).expect("each game verifies");
    }
    // The checkpoint signed at shutdown covers every event stored, and so
    // every acknowledged one: the newest checkpoint's size is the log's size.
    let newest = arbiter::store::checkpoints::read(&data).unwrap().pop().expect("a checkpoint was signed");
    assert_eq!(newest.checkpoint().unwrap().size, store.log_size().unwrap());
    for (game, seq, _) in acked.lock().unwrap().iter() {
        assert!(store.log_position(game, *seq).unwrap().unwrap() < store.log_size().unwrap());
    }
}

#[test]
fn the_moves_are_the_callers_own_and_as_the_store_gives_them() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(dir.path());
    s.doomtrooper("g", "token");
    let p1 = s.token("g", "seat", "p1");
    let seats = |v: &Value| -> std::collections::BTreeSet<String> {
        v["moves"].as_array().unwrap().iter().map(|m| m["seat"].as_str().unwrap().to_string()).collect()
    };
    // The organiser reads every actor's moves, or one actor's with `as`.
    let (status, all) = s.get("/api/games/g/moves", Some(&s.organiser));
    assert_eq!(status, 200, "{all}");
    assert_eq!(all["seq"], json!(0));
    assert!(seats(&all).is_superset(&["Dana", "p1", "p2"].map(String::from).into()), "{all}");
    let (status, v) = s.get("/api/games/g/moves?as=p2", Some(&s.organiser));
    assert_eq!((status, seats(&v)), (200, ["p2".to_string()].into()), "{v}");
    // A seat's token: its own moves, and no other seat's.
    let (status, mine) = s.get("/api/games/g/moves", Some(&p1));
    assert_eq!((status, seats(&mine)), (200, ["p1".to_string()].into()), "{mine}");
    assert!(mine["moves"].as_array().unwrap().iter().any(|m| m["type"] == "announce"), "p1 may attack: {mine}");
    let (status, v) = s.get("/api/games/g/moves?as=p2", Some(&p1));
    assert_eq!((status, code(&v)), (403, "forbidden"), "{v}");
    // Not a seat: a clear 400; a token-only game without a token: 401.
    let (status, v) = s.get("/api/games/g/moves?as=p9", Some(&s.organiser));
    assert_eq!((status, code(&v)), (400, "input"), "{v}");
    assert_eq!(s.get("/api/games/g/moves", None).0, 401);
    // The CLI against the server shows what the API gives.
    let out = arbiter(dir.path(), &["--server", &s.url, "--token", &p1, "--json", "moves", "g"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let cli: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(cli["moves"], mine["moves"]);
    // A name with a space reaches the server whole (and is not an actor of g).
    let out = arbiter(dir.path(), &["--server", &s.url, "--token", &s.organiser, "moves", "g", "--as", "Dana Smith"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Dana Smith is not a seat or judge of g"));
    // `state` does not hand out the moves: they are read through /moves, with its rule.
    let (status, state) = s.get("/api/games/g/state", Some(&p1));
    assert_eq!(status, 200);
    assert!(state.get("moves").is_none(), "{state}");
}
