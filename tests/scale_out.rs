//! Several `arbiter serve` processes on one PostgreSQL database, and what
//! only PostgreSQL does: migrations, `copy`, a database damaged behind
//! arbiter's back. (The store's own tests run on both backends in
//! tests/store.rs.)

mod common;

use std::sync::{Arc, Mutex};

use arbiter::record::{ExportBytes, verify};
use arbiter::store::{LogNodes, PostgresStore, Store};
use arbiter::tlog::merkle::root;
use arbiter::tlog::note::checkpoint_of;
use common::backend::{TestDatabase, psql};
use common::server::{Served, sse, start_combat, stream, war};
use common::*;
use serde_json::Value;

/// Two servers, one database, clients on both racing for the same seqs:
/// exactly one event per seq, every acknowledged event stored as
/// acknowledged, live streams on either server complete and in order
/// whichever server an event came through (even with the notifications
/// cut for a while), and both servers' checkpoints signed by one key over
/// one log.
#[test]
fn two_servers_on_one_database_serve_one_tournament() {
    if !common::has(common::Need::Postgres) {
        return;
    }
    const LAST: u64 = 60;
    let db = TestDatabase::new();
    let a = Served::start_on_database(&db.url);
    assert!(!a.organiser.is_empty(), "the first server of a new database makes the organiser's token");
    let mut b = Served::start_on_database(&db.url);
    assert!(b.organiser.is_empty(), "the second finds it made: shown once");
    b.organiser = a.organiser.clone();
    a.doomtrooper("g", "public");
    // Tokens made through one server work on the other: they are in the database.
    let p1 = b.token("g", "seat", "p1");
    let p2 = a.token("g", "seat", "p2");
    start_combat(&b, "g", &p1);
    // b holds the game folded at seq 2; a stores seq 3. An append to b at
    // the stale seq 3 that b's old fold would refuse (p1 may not act there)
    // is told the truth: a conflict, from the store's head.
    let (actor, action) = war(3);
    assert_eq!(a.append("g", &p2, actor, action, 3).0, 201);
    let (status, v) = b.append("g", &p1, "p1", counter("Cancel", 2), 3);
    assert_eq!((status, v["error"]["code"].as_str()), (409, Some("conflict")), "{v}");
    // Spectators on both servers, from seq 0, before the race.
    let mut on_a = stream(&a, "/api/games/g/stream?from=0", None);
    let mut on_b = stream(&b, "/api/games/g/stream?from=0", None);
    // Cut both servers' watches of appends: notifications sent while they
    // connect again are lost, and the streams must not lose the events.
    let cut = psql(
        &db.url,
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
         WHERE datname = current_database() AND query LIKE 'LISTEN%'",
    );
    assert_eq!(cut.trim(), "2", "each server listens on a connection of its own");
    let servers = Arc::new([a, b]);
    let acked = Arc::new(Mutex::new(Vec::new()));
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let (servers, acked, p1, p2) = (servers.clone(), acked.clone(), p1.clone(), p2.clone());
            std::thread::spawn(move || {
                let s = &servers[w % 2];
                loop {
                    let next = s.head("g")["seq"].as_u64().unwrap() + 1;
                    if next > LAST {
                        return;
                    }
                    let (actor, action) = war(next);
                    let token = if actor == "p1" { &p1 } else { &p2 };
                    let (status, v) = s.append("g", token, actor, action, next);
                    match status {
                        201 => acked.lock().unwrap().push((next, v["event"]["hash"].as_str().unwrap().to_string())),
                        // The same action at the same seq, stored meanwhile
                        // through the other server (a retry's answer), or
                        // another action there first.
                        200 | 409 => {}
                        _ => panic!("writer {w}: {status} {v}"),
                    }
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let [a, b] = &*servers;
    // One event per seq: the record verifies (no fork) and holds every seq once.
    let (_, _, export) = a.get_text("/api/games/g/export", None);
    let (verified, _) = verify(&ExportBytes(export.into_bytes()), None).expect("the record verifies: no fork");
    assert_eq!(verified.events, LAST + 1);
    let stored = b.stored("g");
    let acked = acked.lock().unwrap();
    for (seq, hash) in acked.iter() {
        assert_eq!(&stored[*seq as usize], &(*seq, hash.clone()), "acknowledged seq {seq} is stored as acknowledged");
    }
    let mut seqs: Vec<u64> = acked.iter().map(|(seq, _)| *seq).collect();
    seqs.sort();
    seqs.dedup();
    assert_eq!(seqs.len(), acked.len(), "no seq acknowledged twice as new");
    // Each live stream has every event, in order, with the stored hashes.
    for (name, follower) in [("a", &mut on_a), ("b", &mut on_b)] {
        let seen: Vec<(u64, String)> = sse(follower, LAST as usize + 1)
            .into_iter()
            .map(|(id, e)| (id, e["hash"].as_str().unwrap().to_string()))
            .collect();
        assert_eq!(seen, stored, "server {name}'s live stream");
    }
    // Both servers sign with one key, over one log.
    let (_, log_a) = a.get("/api/log", None);
    let (_, log_b) = b.get("/api/log", None);
    assert_eq!(log_a["key"], log_b["key"], "one log key in the database");
    let store = PostgresStore::open(&db.url).unwrap();
    for s in [a, b] {
        let (status, _, note) = s.get_text("/checkpoint", None);
        assert_eq!(status, 200);
        let checkpoint = checkpoint_of(&note).unwrap();
        assert!(checkpoint.size <= store.log_size().unwrap());
        assert_eq!(root(&LogNodes(&store), checkpoint.size).unwrap(), checkpoint.root, "a checkpoint of the one log");
    }
    // The checkpoints kept only grow, whichever server signed them.
    let sizes: Vec<u64> = store.checkpoints().unwrap().iter().map(|r| r.checkpoint().unwrap().size).collect();
    assert!(sizes.windows(2).all(|w| w[0] < w[1]), "{sizes:?}");
}

/// `copy` moves a sled store into PostgreSQL in log order: the same log
/// (root, checkpoints, key), every game verified on both sides; a second
/// copy after more play resumes; and back into a directory.
#[test]
fn copy_moves_a_store_into_postgres_and_back_with_the_same_log() {
    if !common::has(common::Need::Postgres) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    assert!(arbiter(&data, &["demo"]).status.success());
    assert!(arbiter(&data, &["demo", "--ruleset", "gurps"]).status.success());
    let db = TestDatabase::new();
    let copy = |from: &str, to: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .args(["--json", "copy", "--from", from, "--to", to])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let first = copy(data.to_str().unwrap(), &db.url);
    assert_eq!((first["games"].as_u64(), first["already"].as_u64()), (Some(2), Some(0)));
    let on_database = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .args(["--store", &db.url, "--json"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        // One JSON line each (`verify --all`: a line per game, then the log's).
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect::<Vec<Value>>()
    };
    let sled_checkpoint = json_of(&arbiter(&data, &["--json", "checkpoint"]));
    let pg_checkpoint = &on_database(&["checkpoint"])[0];
    assert_eq!(pg_checkpoint["checkpoint"], sled_checkpoint["checkpoint"], "the same signed checkpoint, the same key");
    // More play on the original, then the copy again: only the rest moves.
    assert!(arbiter(&data, &["demo"]).status.success());
    let second = copy(data.to_str().unwrap(), &db.url);
    assert_eq!((second["games"].as_u64(), &second["already"]), (Some(3), &first["size"]), "{second}");
    assert_eq!(second["root"], json_of(&arbiter(&data, &["--json", "checkpoint"]))["root"]);
    let verified = on_database(&["verify", "--all"]);
    assert_eq!(verified.len(), 4, "three games and the log: {verified:?}");
    assert!(verified[..3].iter().all(|v| v["ok"] == Value::Bool(true)), "{verified:?}");
    assert_eq!(verified[3]["log"]["checkpoint"], verified[3]["log"]["size"], "the newest checkpoint covers the copy");
    // And back into a new directory.
    let back = dir.path().join("back");
    let third = copy(&db.url, back.to_str().unwrap());
    assert_eq!(third["root"], second["root"]);
    assert!(arbiter(&back, &["verify", "--all"]).status.success());
    // The key came along (into DATA/log.key): the copy signs as the same log.
    let there = json_of(&arbiter(&back, &["--json", "checkpoint"]));
    let here = json_of(&arbiter(&data, &["--json", "checkpoint"]));
    assert_eq!((&there["key"], &there["checkpoint"]), (&here["key"], &here["checkpoint"]));
    // A source that is not there is not an empty store to copy.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["copy", "--from", dir.path().join("typo").to_str().unwrap(), "--to", &db.url])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such store directory"));
    // A store that is not a prefix of the source is refused, and left as it was.
    let other = dir.path().join("other");
    assert!(arbiter(&other, &["demo", "--ruleset", "rawdeal"]).status.success());
    let before = psql(&db.url, "SELECT size FROM log_size");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["copy", "--from", other.to_str().unwrap(), "--to", &db.url])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a copy of it"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(psql(&db.url, "SELECT size FROM log_size"), before);
}

fn json_of(out: &std::process::Output) -> Value {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The schema is applied once, by whichever of several processes opening a
/// new database at once comes first; a database from a newer arbiter is
/// refused, as is one whose log no longer matches its events.
#[test]
fn migrations_run_once_and_a_damaged_or_newer_database_is_refused() {
    if !common::has(common::Need::Postgres) {
        return;
    }
    let db = TestDatabase::new();
    let opened: Vec<_> = (0..4)
        .map(|_| {
            let url = db.url.clone();
            std::thread::spawn(move || PostgresStore::open(&url).map(drop).map_err(|e| e.to_string()))
        })
        .collect();
    for o in opened {
        o.join().unwrap().unwrap();
    }
    // Each migration once (there are three).
    assert_eq!(psql(&db.url, "SELECT count(*), count(DISTINCT version) FROM arbiter_migrations").trim(), "3|3");
    let store = PostgresStore::open(&db.url).unwrap();
    arbiter::record::create(&store, "g", &common::doomtrooper_header(), "organiser", None).unwrap();
    let signer = arbiter::store::checkpoints::signer(&store, None, None).unwrap();
    arbiter::store::checkpoints::sign(&store, &signer).unwrap();
    drop(store);
    // As if restored into a cluster whose xids are far lower (pg_dump),
    // with event 0 not yet in the log: it is taken at the open, and the
    // log keeps up with new events at once.
    psql(
        &db.url,
        "DELETE FROM log_leaves; UPDATE events SET xid = 9000000000; \
         UPDATE log_size SET size = 0, sequenced_below = 9000000001",
    );
    let store = PostgresStore::open(&db.url).unwrap();
    assert_eq!(store.log_leaf(0).unwrap(), Some(("g".to_string(), 0)));
    arbiter::record::create(&store, "h", &common::doomtrooper_header(), "organiser", None).unwrap();
    let began = std::time::Instant::now();
    assert_eq!(store.log_size().unwrap(), 2);
    assert!(began.elapsed() < std::time::Duration::from_secs(1), "log_size waited {:?}", began.elapsed());
    drop(store);
    // The database refuses to delete events, or to empty their table.
    for sql in ["DELETE FROM events WHERE seq = 0", "TRUNCATE events CASCADE"] {
        let out = std::process::Command::new("psql")
            .args([db.url.as_str(), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && said.contains("events are never deleted"), "{sql}: {said}");
    }
    assert_eq!(psql(&db.url, "SELECT count(*) FROM events").trim(), "2");
    // Events removed behind arbiter's back all the same (its guard turned
    // off): the log's size says so at open.
    psql(&db.url, "ALTER TABLE events DISABLE TRIGGER events_not_deleted; DELETE FROM log_leaves; DELETE FROM events");
    let err = PostgresStore::open(&db.url).unwrap_err();
    assert!(matches!(err, arbiter::store::OpenError::Lost(_)), "{err}");
    assert!(err.to_string().contains("is damaged: its log holds 2 events, its leaves 0"), "{err}");
    // The log cut to match: the newest checkpoint still names what was lost.
    psql(&db.url, "UPDATE log_size SET size = 0");
    let err = PostgresStore::open(&db.url).unwrap_err();
    assert!(err.to_string().contains("the store has lost events 0..0 of game g"), "{err}");
    psql(&db.url, "INSERT INTO arbiter_migrations (version, name) VALUES (99, 'from the future')");
    let err = PostgresStore::open(&db.url).unwrap_err();
    assert!(err.to_string().contains("newer than this arbiter"), "{err}");
}

/// A database that is down or misnamed is a clear error (exit 2), not a hang.
#[test]
fn an_unreachable_database_is_a_clear_error() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["--store", "postgres://nobody:secret@127.0.0.1:1/none", "games"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("postgres://nobody:***@127.0.0.1:1/none") && !err.contains("secret"), "{err}");
    let refused = |args: &[&str], says: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_arbiter")).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    };
    refused(&["--store", "./dir", "games"], "--store takes a PostgreSQL URL");
    if !common::has(common::Need::Postgres) {
        return;
    }
    let cluster = common::backend::cluster_url();
    let no_database = cluster.rsplit_once('/').unwrap().0;
    // Not the cluster's own database by default: a URL must name one.
    refused(&["--store", no_database, "games"], "the URL names no database");
    refused(&["--store", &format!("{cluster}?sslmode=require"), "games"], "arbiter connects without TLS");
    refused(&["--store", &cluster, "--data", "./d", "games"], "not both");
    let db = TestDatabase::new();
    refused(&["--store", &db.url.replace("arbiter_test", "arbiter_typo"), "games"], "does not exist");
}

/// A log keeps its key: `--log-key` naming a file that is not there makes
/// a new key only for a log that is not signed yet.
#[test]
fn a_missing_log_key_file_is_refused_once_the_log_is_signed() {
    if !common::has(common::Need::Postgres) {
        return;
    }
    let db = TestDatabase::new();
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .args(["--store", &db.url])
            .args(args)
            .output()
            .unwrap()
    };
    assert!(run(&["demo"]).status.success());
    let key = dir.path().join("typo.key");
    let out = run(&["--log-key", key.to_str().unwrap(), "checkpoint"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("already signed: give the key that signs it"));
    assert!(!key.exists(), "no new key was made");
}

/// A database that cannot be reached (its connections ended and new ones
/// refused, as while it restarts): appends and reads answer 503
/// `store_unavailable` with Retry-After, never 500 with the pool's wording,
/// and `/health` says so; once it is back, both work again with nothing
/// stored meanwhile.
#[test]
fn a_database_that_cannot_be_reached_is_503_store_unavailable_until_it_is_back() {
    if !common::has(common::Need::Postgres) {
        return;
    }
    let db = TestDatabase::new();
    let s = Served::start_on_database(&db.url);
    s.doomtrooper("g", "public");
    let p1 = s.token("g", "seat", "p1");
    let name = psql(&db.url, "SELECT current_database()").trim().to_string();
    let admin = common::backend::cluster_url();
    psql(&admin, &format!("ALTER DATABASE {name} ALLOW_CONNECTIONS false"));
    psql(&admin, &format!("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '{name}'"));

    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let body = serde_json::json!({"actor": "p1", "action": combat("p2", "A", "D"), "expect_seq": 1});
    let mut resp = agent
        .post(format!("{}/api/games/g/events", s.url))
        .header("Authorization", &format!("Bearer {p1}"))
        .send_json(&body)
        .unwrap();
    let retry = resp.headers().get("retry-after").map(|v| v.to_str().unwrap().to_string());
    let answer: Value = serde_json::from_str(&resp.body_mut().read_to_string().unwrap()).unwrap();
    assert_eq!(
        (resp.status().as_u16(), answer["error"]["code"].as_str()),
        (503, Some("store_unavailable")),
        "{answer}"
    );
    assert_eq!(retry.as_deref(), Some("5"));
    let message = answer["error"]["message"].as_str().unwrap();
    // In the database's words (or the connection's), once, not the pool's.
    assert!(message.starts_with("the store is unavailable: "), "{message}");
    assert_eq!(message.matches("unavailable").count(), 1, "{message}");
    assert!(!message.contains("Error occurred while creating a new object"), "{message}");
    let (status, health) = s.get("/health", None);
    assert_eq!((status, health["error"]["code"].as_str()), (503, Some("store_unavailable")), "{health}");
    let (status, page) = s.get("/api/games/g/events?from=0", None);
    assert_eq!((status, page["error"]["code"].as_str()), (503, Some("store_unavailable")), "{page}");

    psql(&admin, &format!("ALTER DATABASE {name} ALLOW_CONNECTIONS true"));
    // Connections the pool held before the cut are found dead as they are
    // used: /health answers 200 again within a few requests.
    let began = std::time::Instant::now();
    while s.get("/health", None).0 != 200 {
        assert!(began.elapsed() < std::time::Duration::from_secs(30), "/health did not come back");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(s.head("g")["seq"], 0, "nothing was stored while the database was away");
    assert_eq!(s.append("g", &p1, "p1", combat("p2", "A", "D"), 1).0, 201);
}

/// The set-up as docs/postgres.md wrote it before PostgreSQL 15 (a
/// database made by the superuser, arbiter run as another role) is refused
/// with what to grant, not "check that the database is up"; as the docs
/// write it now (the role owns the database), it opens.
#[test]
fn a_role_that_may_not_create_tables_is_told_what_to_grant() {
    if !common::has(common::Need::Postgres) {
        return;
    }
    let db = TestDatabase::new();
    let name = psql(&db.url, "SELECT current_database()").trim().to_string();
    let role = format!("{name}_role");
    let admin = common::backend::cluster_url();
    psql(&admin, &format!("CREATE ROLE {role} LOGIN"));
    let as_role = db.url.replacen("postgres@", &format!("{role}@"), 1);
    assert_ne!(as_role, db.url);
    let run = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .env_remove("ARBITER_SERVER")
            .args(["--store", &as_role, "games"])
            .output()
            .unwrap()
    };
    let out = run();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let want = format!(
        "the role {role} may not create tables in schema public of {name}: permission denied for schema public"
    );
    assert!(err.contains(&want), "{err}");
    assert!(err.contains(&format!("ALTER DATABASE {name} OWNER TO {role}")), "{err}");
    assert!(!err.contains("check that the database is up"), "{err}");
    // The fix it names works: the role owns the database (and so, on 15 and
    // later, schema public, which pg_database_owner owns).
    psql(&admin, &format!("ALTER DATABASE {name} OWNER TO {role}"));
    let out = run();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    drop(db);
    psql(&admin, &format!("DROP ROLE {role}"));
}

/// `verify --all` reads the log in batches on PostgreSQL (one query a
/// batch, not four round trips a leaf): each batch holds what the leaf's
/// own reads give, from any start, and stops where the log ends.
#[test]
fn the_log_read_in_batches_is_what_each_leaf_reads_alone() {
    if !common::has(common::Need::Postgres) {
        return;
    }
    let db = TestDatabase::new();
    let s = Served::start_on_database(&db.url);
    for game in ["g", "h"] {
        s.doomtrooper(game, "public");
        let (p1, p2) = (s.token(game, "seat", "p1"), s.token(game, "seat", "p2"));
        start_combat(&s, game, &p1);
        for seq in 3..=12 {
            let (actor, action) = war(seq);
            let token = if actor == "p1" { &p1 } else { &p2 };
            assert_eq!(s.append(game, token, actor, action, seq).0, 201);
        }
    }
    let store = PostgresStore::open(&db.url).unwrap();
    let size = store.log_size().unwrap();
    assert_eq!(size, 26);
    for from in [0, 1, 13, 25] {
        let batch = store.log_leaves(from, 100).unwrap();
        assert_eq!(batch.len() as u64, size - from, "to the log's end from {from}");
        for (leaf, index) in batch.iter().zip(from..) {
            let (game, seq) = store.log_leaf(index).unwrap().unwrap();
            assert_eq!((&leaf.game, leaf.seq), (&game, seq));
            assert_eq!(leaf.event, store.get(&game, seq).unwrap(), "leaf {index}");
            assert_eq!(leaf.stored, store.log_node(0, index).unwrap());
            assert_eq!(leaf.position, store.log_position(&game, seq).unwrap());
        }
    }
    assert_eq!(store.log_leaves(3, 2).unwrap().len(), 2);
    assert!(arbiter::store::checkpoints::verify_log(&store).is_ok());
}

/// A token that worked is not looked up in the database on every request,
/// but a revoke stops it at once on the server it went through, and on
/// another server of the same database within a second of the revoke.
#[test]
fn a_revoked_token_stops_at_once_here_and_within_a_second_on_another_server() {
    if !common::has(common::Need::Postgres) {
        return;
    }
    let db = TestDatabase::new();
    let (a, b) = Served::two_on_database(&db.url);
    a.doomtrooper("g", "token");
    let (p1, p2) = (a.token("g", "seat", "p1"), a.token("g", "seat", "p2"));
    // Both servers have looked both tokens up, and take them as working.
    for s in [&a, &b] {
        for token in [&p1, &p2] {
            assert_eq!(s.get("/api/games/g/state", Some(token)).0, 200);
        }
    }
    let revoke = |id: String| {
        let (status, v) = a.post(&format!("/api/tokens/{id}/revoke"), Some(&a.organiser), &serde_json::json!({}));
        assert_eq!(status, 200, "{v}");
    };
    revoke(arbiter::access::id_of(&p1));
    let revoked = std::time::Instant::now();
    let (status, v) = a.get("/api/games/g/state", Some(&p1));
    assert_eq!((status, v["error"]["token"].as_str()), (401, Some("revoked")), "at once where it was revoked: {v}");
    let (status, v) = a.append("g", &p1, "p1", combat("p2", "A", "D"), 1);
    assert_eq!((status, v["error"]["token"].as_str()), (401, Some("revoked")), "appends too: {v}");
    // b looked it up before the revoke: a second after the revoke, it
    // looks it up again.
    std::thread::sleep(std::time::Duration::from_millis(1_050).saturating_sub(revoked.elapsed()));
    for (path, what) in [("/api/games/g/state", "reads"), ("/api/games/g", "the head")] {
        let (status, v) = b.get(path, Some(&p1));
        assert_eq!((status, v["error"]["token"].as_str()), (401, Some("revoked")), "{what} on the other server: {v}");
    }
    let (status, v) = b.append("g", &p1, "p1", combat("p2", "A", "D"), 1);
    assert_eq!((status, v["error"]["token"].as_str()), (401, Some("revoked")), "appends on the other server: {v}");
    // The other seat's token still works on both.
    for s in [&a, &b] {
        assert_eq!(s.get("/api/games/g/state", Some(&p2)).0, 200);
    }
}

/// Events stored before each row kept its hash and time (schema version
/// 1): an append after such a head reads and checks it as before, a stale
/// one is still a conflict, and a second writer cannot fork the game.
#[test]
fn a_head_stored_before_hashes_were_kept_is_read_and_checked_as_before() {
    if !common::has(common::Need::Postgres) {
        return;
    }
    use arbiter::record::{RecordError, Recorder, Submission, create};
    let db = TestDatabase::new();
    let store = PostgresStore::open(&db.url).unwrap();
    create(&store, "g", &common::doomtrooper_header(), "organiser", None).unwrap();
    let sub = |actor: &str, action: Value| Submission { actor: actor.into(), action, at: None };
    let mut a = Recorder::load(&store, "g").unwrap();
    let mut b = Recorder::load(&store, "g").unwrap();
    psql(&db.url, "UPDATE events SET hash = NULL, at_ns = NULL");
    a.append(&sub("p1", combat("p2", "A", "D")), Some(1)).unwrap();
    assert_eq!(psql(&db.url, "SELECT count(*) FROM events WHERE hash IS NOT NULL AND at_ns IS NOT NULL").trim(), "1");
    psql(&db.url, "UPDATE events SET hash = NULL, at_ns = NULL");
    // b's fold is at seq 0: its append there must not land.
    let err = b.append(&sub("p2", combat("p1", "B", "C")), None).unwrap_err();
    assert!(matches!(err, RecordError::Conflict { expected: 1, next: 2 }), "{err}");
    let err = a.append(&sub("p1", tactic("Fight")), Some(7)).unwrap_err();
    assert!(matches!(err, RecordError::Conflict { expected: 7, next: 2 }), "{err}");
    a.append(&sub("p1", tactic("Fight")), Some(2)).unwrap();
    // Then the next one checks the head in the statement that stores it.
    let seat = a.table().view().may_act[0].clone();
    a.append(&sub(&seat, counter("Cancel", 2)), Some(3)).unwrap();
    let stored: Vec<_> = store.read("g", 0).unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(stored.len(), 4);
    verify(&stored, None).unwrap();
    let hashes = psql(&db.url, "SELECT seq, encode(hash, 'hex') FROM events WHERE hash IS NOT NULL ORDER BY seq");
    assert_eq!(hashes.trim(), format!("2|{}\n3|{}", stored[2].hash, stored[3].hash));
}
