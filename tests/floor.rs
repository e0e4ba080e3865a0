//! The floor: the summary its cards read (`GET /api/games/{game}/summary`)
//! and the many-games stream from a seq, over HTTP; then, in a real
//! headless browser (Debian's chromium through chromedriver, as
//! tests/browser.rs), the floor page shows a call and a pending ruling with
//! how long each has waited, sorts them first, and a judge answers a call
//! from the page; the index shows each game's ruleset, table, step and
//! status. (Thirty tabs: tests/thirty_tabs.rs.)

mod common;

use common::browser::{browser, wait_for};
use common::server::Served;
use common::*;
use fantoccini::{Client, Locator};
use serde_json::{Value, json};

/// A game as an export (JSON Lines) whose events were recorded at the
/// times given: event 0's header, then each (seconds ago, actor, action);
/// a note's `concerns` names a seq, and gets that event's hash here.
fn export_at(header: Value, events: &[(i64, &str, Value)], opened_ago: i64) -> Vec<u8> {
    use arbiter::event::{Draft, seal};
    let now = chrono::Utc::now();
    let ago = |s: i64| now - chrono::Duration::seconds(s);
    let (first, bytes) =
        seal(&Draft { actor: "organiser".into(), action: header, at: None }, None, ago(opened_ago)).unwrap();
    let mut out = bytes;
    out.push(b'\n');
    let mut prev = first.link();
    let mut hashes = vec![first.hash.clone()];
    for (secs, actor, action) in events {
        let mut action = action.clone();
        if let Some(seq) = action.pointer("/concerns/seq").and_then(Value::as_u64) {
            action["concerns"]["hash"] = json!(hashes[seq as usize]);
        }
        let draft = Draft { actor: actor.to_string(), action, at: None };
        let (event, bytes) = seal(&draft, Some(&prev), ago(*secs)).unwrap();
        out.extend(bytes);
        out.push(b'\n');
        prev = event.link();
        hashes.push(event.hash);
    }
    out
}

fn import(s: &Served, game: &str, export: &[u8]) {
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let mut resp = agent
        .post(&format!("{}/api/games/{game}/import", s.url))
        .header("Authorization", &format!("Bearer {}", s.organiser))
        .send(export)
        .unwrap();
    let body: Value = resp.body_mut().read_json().unwrap();
    assert_eq!(resp.status().as_u16(), 201, "{body}");
}

/// A header of `ruleset` at table `table` of round 3, with judge Dana.
fn header(ruleset: &str, table: u64, options: Value) -> Value {
    let mut h = json!({"type": "open", "ruleset": ruleset, "ruleset_version": 1,
        "seats": [{"id": "p1", "name": "Ann"}, {"id": "p2", "name": "Ben"}], "judges": ["Dana"],
        "tournament": "Luna City Open", "round": 3, "table": table});
    if options.is_object() {
        h["options"] = options;
    }
    h
}

fn create(s: &Served, game: &str, header: Value) {
    let (status, v) = s.post("/api/games", Some(&s.organiser), &json!({"name": game, "header": header}));
    assert_eq!(status, 201, "{v}");
}

fn note(s: &Served, game: &str, token: &str, actor: &str, about: u64, text: &str, expect: u64) -> (u16, Value) {
    let hash = s.get(&format!("/api/games/{game}/events?from={about}&limit=1"), None).1["events"][0]["hash"].clone();
    s.append(
        game,
        token,
        actor,
        json!({"type": "note", "concerns": {"seq": about, "hash": hash}, "text": text}),
        expect,
    )
}

fn summary(s: &Served, game: &str) -> Value {
    let (status, v) = s.get(&format!("/api/games/{game}/summary"), None);
    assert_eq!(status, 200, "{v}");
    v
}

/// Riftbound to victory (from tests/riftbound.rs): p1 holds Altar until
/// it has eight points.
fn riftbound_won() -> Vec<(i64, &'static str, Value)> {
    let turn = || json!({"type": "announce", "what": "turn"});
    let pass = || json!({"type": "pass"});
    let mut events = vec![
        (60, "p1", turn()),
        (60, "p1", json!({"type": "announce", "what": "move", "units": [{"name": "Wall", "might": 9}], "to": "Altar"})),
        (60, "p1", pass()),
        (60, "p2", pass()),
    ];
    for _ in 0..7 {
        events.push((60, "p2", turn()));
        events.push((60, "p1", turn()));
    }
    events
}

/// The summary the floor's cards and the index read: step, who may act,
/// status, the open calls and a pending ruling with the event each waits
/// since, and the last event in words.
#[test]
fn a_summary_says_where_a_game_stands_and_who_waits_for_a_judge() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(&dir.path().join("store"));
    create(&s, "g", header("doomtrooper", 12, Value::Null));
    let p1 = s.token("g", "seat", "p1");
    let p2 = s.token("g", "seat", "p2");
    let dana = s.token("g", "judge", "Dana");
    let v = summary(&s, "g");
    assert_eq!(
        (v["game"].as_str(), v["ruleset"].as_str(), v["table"].as_u64(), v["round"].as_u64()),
        (Some("g"), Some("doomtrooper"), Some(12), Some(3))
    );
    assert_eq!(v["status"], "in_progress");
    assert_eq!(v["step"]["reference"], "Doomtrooper step 1 (ANNOUNCE ATTACKER AND DEFENDER)");
    assert_eq!(v["may_act"], json!(["p1", "p2"]));
    assert_eq!(v["calls"], json!([]));
    assert!(v.get("awaiting_ruling").is_none(), "{v}");
    assert_eq!((v["last"]["seq"].as_u64(), v["last"]["actor"].as_str()), (Some(0), Some("organiser")));
    assert!(v["now"].as_str().unwrap().ends_with('Z'));

    // A seat calls a judge about seq 1: the game waits for a judge.
    assert_eq!(s.append("g", &p1, "p1", combat("p2", "A", "D"), 1).0, 201);
    let (status, called) = note(&s, "g", &p2, "p2", 1, "call a judge: the defender was not in play", 2);
    assert_eq!(status, 201, "{called}");
    let v = summary(&s, "g");
    assert_eq!(v["status"], "waiting_for_a_judge");
    assert_eq!(
        v["calls"],
        json!([{"seq": 2, "at": called["event"]["at"], "by": "p2", "text": "call a judge: the defender was not in play", "concerns": 1}])
    );
    assert_eq!(v["last"]["action"], "note on seq 1: call a judge: the defender was not in play");
    assert_eq!(v["step"]["reference"], "Doomtrooper step 2 (ANNOUNCE BATTLE TACTIC)", "a call leaves the step");
    // A seat's word about the call does not answer it; a judge's note does.
    assert_eq!(note(&s, "g", &p1, "p1", 2, "it was", 3).0, 201);
    assert_eq!(summary(&s, "g")["calls"].as_array().unwrap().len(), 1);
    assert_eq!(note(&s, "g", &dana, "Dana", 2, "on my way", 4).0, 201);
    let v = summary(&s, "g");
    assert_eq!((v["status"].as_str(), v["calls"].clone()), (Some("in_progress"), json!([])));

    // A ruling awaited dates from the event that brought it, not from the
    // notes and penalties after it; a decision ends the wait.
    create(&s, "w", header("wtactics", 7, Value::Null));
    let w1 = s.token("w", "seat", "p1");
    let w2 = s.token("w", "seat", "p2");
    let wd = s.token("w", "judge", "Dana");
    let attackers = json!({"type": "announce", "what": "attackers", "attackers": [{"name": "Orc", "atk": 3, "def": 2}, {"name": "Troll", "atk": 5, "def": 5}]});
    assert_eq!(s.append("w", &w1, "p1", attackers, 1).0, 201);
    assert_eq!(s.append("w", &w2, "p2", json!({"type": "pass"}), 2).0, 201);
    assert_eq!(s.append("w", &w1, "p1", json!({"type": "pass"}), 3).0, 201);
    let blocks = json!({"type": "announce", "what": "defenders", "blocks": [{"defender": {"name": "Knight", "atk": 2, "def": 3}, "attacker": "Orc"}]});
    let (_, blocked) = s.append("w", &w2, "p2", blocks, 4);
    let hash4 = blocked["event"]["hash"].clone();
    let penalty = json!({"type": "ruling", "kind": "penalty", "concerns": {"seq": 4, "hash": hash4}, "reason": "slow play",
        "seat": "p2", "infraction": "slow play", "penalty": "warning", "fix": "none"});
    assert_eq!(s.append("w", &wd, "Dana", penalty, 5).0, 201);
    assert_eq!(note(&s, "w", &w1, "p1", 4, "waiting", 6).0, 201);
    let v = summary(&s, "w");
    assert_eq!(v["status"], "waiting_for_a_judge");
    assert_eq!(v["may_act"], json!(["Dana"]));
    let awaiting = &v["awaiting_ruling"];
    assert_eq!((awaiting["seq"].as_u64(), &awaiting["at"]), (Some(4), &blocked["event"]["at"]), "{v}");
    assert!(awaiting["what"].as_str().unwrap().contains("undefended"), "{v}");
    let decide = json!({"type": "ruling", "kind": "decide", "concerns": {"seq": 4, "hash": hash4}, "reason": "r",
        "decision": {"type": "resolve", "what": "unblocked", "influence_lost": 5}});
    assert_eq!(s.append("w", &wd, "Dana", decide, 7).0, 201);
    let v = summary(&s, "w");
    assert!(v.get("awaiting_ruling").is_none(), "{v}");
    assert_eq!(v["status"], "in_progress");

    // No one may act once a Riftbound game is won: over.
    let options = json!({"mode": "1v1", "battlefields": ["Altar"]});
    import(&s, "r", &export_at(header("riftbound", 3, options), &riftbound_won(), 60));
    let v = summary(&s, "r");
    assert_eq!((v["status"].as_str(), v["may_act"].clone()), (Some("over"), json!([])), "{v}");
    assert_eq!(v["step"]["title"], "Victory");

    // Read like any read: a token-only game needs a token, an unknown game is 404.
    let (status, v) = s.post(
        "/api/games",
        Some(&s.organiser),
        &json!({"name": "secret", "header": header("doomtrooper", 1, Value::Null), "read": "token"}),
    );
    assert_eq!(status, 201, "{v}");
    assert_eq!(s.get("/api/games/secret/summary", None).0, 401);
    assert_eq!(s.get("/api/games/secret/summary", Some(&s.organiser)).0, 200);
    let (status, v) = s.get("/api/games/nope/summary", None);
    assert_eq!((status, v["error"]["code"].as_str()), (404, Some("no_such_game")), "{v}");
}

/// `/api/stream?games=a:N,b` follows `a` from seq N (what was stored
/// since comes first) and `b` from its next event: how the pages' shared
/// worker opens a new stream where each game left off.
#[test]
fn the_many_games_stream_follows_each_game_from_the_seq_it_names() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(&dir.path().join("store"));
    s.doomtrooper("a", "public");
    s.doomtrooper("b", "public");
    let pa = s.token("a", "seat", "p1");
    let pb = s.token("b", "seat", "p1");
    common::server::start_combat(&s, "a", &pa);
    let mut stream = common::server::stream(&s, "/api/stream?games=a:1,b", None);
    let frames = common::server::sse_frames(&mut stream, 2);
    let seen: Vec<(&str, u64)> =
        frames.iter().map(|(_, d)| (d["game"].as_str().unwrap(), d["event"]["seq"].as_u64().unwrap())).collect();
    assert_eq!(seen, [("a", 1), ("a", 2)], "a from seq 1: what was stored since");
    assert_eq!(s.append("b", &pb, "p1", combat("p2", "A", "D"), 1).0, 201);
    let (_, d) = &common::server::sse_frames(&mut stream, 1)[0];
    assert_eq!((d["game"].as_str(), d["event"]["seq"].as_u64()), (Some("b"), Some(1)), "b from its next event");
    for bad in ["a:x", "a:", "a:16777216"] {
        let (status, v) = s.get(&format!("/api/stream?games={bad}"), None);
        assert_eq!((status, v["error"]["code"].as_str()), (400, Some("input")), "{bad}: {v}");
        assert!(v["error"]["message"].as_str().unwrap().contains("the seq to follow the game from"), "{v}");
    }
}

async fn text(c: &Client, css: &str) -> String {
    c.find(Locator::Css(css)).await.unwrap().text().await.unwrap()
}

/// The cards in the order they are seen, top to bottom, left to right (the
/// page sorts them by CSS order, so an answer being typed keeps its focus).
const SEEN_ORDER: &str = "return [...document.querySelectorAll('.table')]
    .map(c => [c.getBoundingClientRect(), c.dataset.game])
    .sort(([a], [b]) => (a.top - b.top) || (a.left - b.left)).map(([, g]) => g)";

fn shots() -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The head judge's floor: a seat's call shows on its card at once, with
/// how long it has waited in amber, and the card goes first; the judge of
/// that game, signed in on the page, answers it from the card (a note of
/// the judge's `note` move, about the call) and the card says so. A call
/// and a ruling that have waited longer go before it, the one past two
/// minutes in red.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_floor_shows_a_call_sorts_it_first_and_a_judge_answers_it_from_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(&dir.path().join("store"));
    create(&s, "t1", header("doomtrooper", 1, Value::Null));
    create(&s, "t2", header("doomtrooper", 2, Value::Null));
    let options = json!({"mode": "1v1", "battlefields": ["Altar"]});
    import(&s, "r", &export_at(header("riftbound", 3, options), &riftbound_won(), 60));
    let p1 = s.token("t2", "seat", "p1");
    let dana = s.token("t2", "judge", "Dana");
    assert_eq!(s.append("t2", &p1, "p1", combat("p2", "A", "D"), 1).0, 201);

    let profile = tempfile::tempdir().unwrap();
    if !common::has(common::Need::Chromium) {
        return;
    }
    let (_driver, c) = browser(profile.path()).await;
    c.set_window_size(1300, 900).await.unwrap();
    c.goto(&format!("{}/follow?games=t1,r,t2#token={dana}", s.url)).await.unwrap();
    wait_for(&c, "return document.getElementById('live').className", json!("on")).await;
    wait_for(&c, "return document.querySelector('[data-game=\"t2\"]').dataset.status || null", json!("in_progress"))
        .await;
    assert_eq!(text(&c, "#who").await, "signed in as Dana, judge of t2: answer its calls here");
    assert_eq!(c.execute(SEEN_ORDER, vec![]).await.unwrap(), json!(["t1", "t2", "r"]), "the game over goes last");
    assert_eq!(text(&c, "[data-game=\"r\"] .status").await, "over");
    assert_eq!(text(&c, "[data-game=\"t2\"] .step").await, "Doomtrooper step 2 (ANNOUNCE BATTLE TACTIC)");
    assert_eq!(text(&c, "[data-game=\"t2\"] .may-act").await, "to act: Ann (p1)");
    assert_eq!(text(&c, "[data-game=\"t2\"] .where").await, "table 2");
    assert_eq!(
        text(&c, "[data-game=\"t2\"] .title").await,
        "doomtrooper · Luna City Open, round 3 · Ann (p1), Ben (p2)"
    );
    assert!(text(&c, "[data-game=\"t1\"] .last").await.ends_with("the game opened"));

    // Ann calls a judge from her table: the card shows it live, first.
    let (status, v) = note(&s, "t2", &p1, "p1", 1, "call a judge: the defender was not in play", 2);
    assert_eq!(status, 201, "{v}");
    wait_for(&c, "return document.querySelector('[data-game=\"t2\"]').dataset.status", json!("waiting_for_a_judge"))
        .await;
    let call = "[data-game=\"t2\"] li.call";
    assert!(text(&c, call).await.starts_with("call by Ann (p1): the defender was not in play (seq 2, about seq 1)"));
    wait_for(&c, &format!("return document.querySelector('{call} .wait').className"), json!("wait soon")).await;
    let waited = text(&c, &format!("{call} .wait")).await;
    assert!(waited.starts_with("waited 0:0"), "{waited}");
    assert_eq!(
        c.execute(SEEN_ORDER, vec![]).await.unwrap(),
        json!(["t2", "t1", "r"]),
        "waiting for a judge goes first"
    );
    // Only the game Dana judges offers her an answer.
    assert!(c.find(Locator::Css("[data-game=\"t1\"] button[data-answer]")).await.is_err());
    std::fs::write(shots().join("floor-call.png"), c.screenshot().await.unwrap()).unwrap();

    // Dana answers from the card.
    let words = c.find(Locator::Css("[data-game=\"t2\"] .answer input")).await.unwrap();
    words.send_keys("on my way").await.unwrap();
    c.find(Locator::Css("[data-game=\"t2\"] button[data-answer=\"2\"]")).await.unwrap().click().await.unwrap();
    wait_for(&c, "return document.querySelector('[data-game=\"t2\"]').dataset.status", json!("in_progress")).await;
    assert_eq!(text(&c, "[data-game=\"t2\"] .answered").await, "answered by Dana (seq 3): the call at seq 2");
    assert!(c.find(Locator::Css(call)).await.is_err(), "the call is no longer open");
    assert_eq!(c.execute(SEEN_ORDER, vec![]).await.unwrap(), json!(["t1", "t2", "r"]));
    let stored = s.get("/api/games/t2/events?from=2", None).1;
    let (call_event, answer) = (&stored["events"][0], &stored["events"][1]);
    assert_eq!(answer["actor"], "Dana");
    assert_eq!(
        answer["action"],
        json!({"type": "note", "concerns": {"seq": 2, "hash": call_event["hash"]}, "text": "on my way"})
    );
    std::fs::write(shots().join("floor-answered.png"), c.screenshot().await.unwrap()).unwrap();

    // A call three minutes old (red) and a ruling awaited (amber) go
    // first, the longer wait before.
    let call = json!({"type": "note", "concerns": {"seq": 0}, "text": "call a judge: slow play"});
    import(&s, "old", &export_at(header("doomtrooper", 5, Value::Null), &[(180, "p2", call)], 300));
    create(&s, "w", header("wtactics", 7, Value::Null));
    let (w1, w2) = (s.token("w", "seat", "p1"), s.token("w", "seat", "p2"));
    let attackers = json!({"type": "announce", "what": "attackers", "attackers": [{"name": "Orc", "atk": 3, "def": 2}, {"name": "Troll", "atk": 5, "def": 5}]});
    assert_eq!(s.append("w", &w1, "p1", attackers, 1).0, 201);
    assert_eq!(s.append("w", &w2, "p2", json!({"type": "pass"}), 2).0, 201);
    assert_eq!(s.append("w", &w1, "p1", json!({"type": "pass"}), 3).0, 201);
    let blocks = json!({"type": "announce", "what": "defenders", "blocks": [{"defender": {"name": "Knight", "atk": 2, "def": 3}, "attacker": "Orc"}]});
    assert_eq!(s.append("w", &w2, "p2", blocks, 4).0, 201);
    c.goto(&format!("{}/follow?games=t1,r,t2,w,old", s.url)).await.unwrap();
    wait_for(&c, "return document.querySelectorAll('.table[data-status]').length", json!(5)).await;
    wait_for(&c, "return document.querySelector('[data-game=\"old\"] .wait').className", json!("wait long")).await;
    assert!(text(&c, "[data-game=\"old\"] .wait").await.starts_with("waited 3:"));
    let late =
        c.execute("return document.querySelector('[data-game=\"old\"]').classList.contains('late')", vec![]).await;
    assert_eq!(late.unwrap(), json!(true));
    assert!(
        text(&c, "[data-game=\"w\"] li.ruling").await.starts_with("awaiting a ruling: attackers were left undefended")
    );
    assert_eq!(text(&c, "[data-game=\"w\"] li.ruling .wait").await.split(':').next(), Some("waited 0"));
    assert_eq!(text(&c, "[data-game=\"w\"] .may-act").await, "to act: Dana");
    assert_eq!(c.execute(SEEN_ORDER, vec![]).await.unwrap(), json!(["old", "w", "t1", "t2", "r"]));
    assert!(
        c.find(Locator::Css("button[data-answer]")).await.is_err(),
        "signed in as t2's judge: no answers elsewhere"
    );
    std::fs::write(shots().join("floor.png"), c.screenshot().await.unwrap()).unwrap();
    // A phone on the floor: one card a row, nothing wider than the screen.
    c.set_window_size(360, 740).await.unwrap();
    let wide = c.execute("return document.documentElement.scrollWidth <= window.innerWidth", vec![]).await.unwrap();
    assert_eq!(wide, json!(true), "no horizontal scrolling at 360 px");
    std::fs::write(shots().join("floor-360.png"), c.screenshot().await.unwrap()).unwrap();
    c.close().await.unwrap();
}

/// The index: each game with its ruleset, table, step and status, linked
/// to its replay, its table page and the floor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_index_shows_each_games_ruleset_table_step_and_status() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(&dir.path().join("store"));
    create(&s, "t1", header("doomtrooper", 1, Value::Null));
    create(&s, "t2", header("doomtrooper", 2, Value::Null));
    let options = json!({"mode": "1v1", "battlefields": ["Altar"]});
    import(&s, "r", &export_at(header("riftbound", 3, options), &riftbound_won(), 60));
    let p1 = s.token("t2", "seat", "p1");
    assert_eq!(s.append("t2", &p1, "p1", combat("p2", "A", "D"), 1).0, 201);
    assert_eq!(note(&s, "t2", &p1, "p1", 1, "call a judge", 2).0, 201);

    let profile = tempfile::tempdir().unwrap();
    if !common::has(common::Need::Chromium) {
        return;
    }
    let (_driver, c) = browser(profile.path()).await;
    c.set_window_size(1100, 600).await.unwrap();
    c.goto(&format!("{}/", s.url)).await.unwrap();
    wait_for(&c, "return document.body.dataset.loaded || null", json!("true")).await;
    let rows = c
        .execute(
            "return [...document.querySelectorAll('#games tbody tr')].map(tr =>
                [...tr.querySelectorAll('td')].slice(1, 6).map(td => td.textContent))",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        rows,
        json!([
            ["r", "riftbound", "Luna City Open, round 3, table 3 · Ann v Ben", "Riftbound Victory (629-633)", "over"],
            [
                "t1",
                "doomtrooper",
                "Luna City Open, round 3, table 1 · Ann v Ben",
                "Doomtrooper step 1 (ANNOUNCE ATTACKER AND DEFENDER)",
                "in progress"
            ],
            [
                "t2",
                "doomtrooper",
                "Luna City Open, round 3, table 2 · Ann v Ben",
                "Doomtrooper step 2 (ANNOUNCE BATTLE TACTIC)",
                "waiting for a judge"
            ],
        ])
    );
    let links = c
        .execute(
            "return [...document.querySelectorAll('tr[data-game=\"t2\"] td.links a')].map(a => a.getAttribute('href'))",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(links, json!(["/games/t2/replay", "/games/t2/table", "/follow?games=t2"]));
    std::fs::write(shots().join("index.png"), c.screenshot().await.unwrap()).unwrap();
    // The ticked games open together on the floor.
    c.find(Locator::Css("tr[data-game=\"t1\"] input")).await.unwrap().click().await.unwrap();
    c.find(Locator::Css("tr[data-game=\"t2\"] input")).await.unwrap().click().await.unwrap();
    c.find(Locator::Css("#follow")).await.unwrap().click().await.unwrap();
    wait_for(&c, "return document.querySelectorAll('.table[data-status]').length", json!(2)).await;
    assert!(c.current_url().await.unwrap().as_str().ends_with("/follow?games=t1,t2"));
    c.close().await.unwrap();
}
