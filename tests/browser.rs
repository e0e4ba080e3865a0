//! The replay page in a real headless browser: Debian's chromium, driven
//! through chromedriver (WebDriver), both installed by `.ci/run`. The page
//! is served by a real `arbiter serve`; the test steps through a game with
//! a ruling and a rewound event, follows it live, and opens a diff.

mod common;

use std::process::Command;

use common::browser::{browser, wait_for};
use common::server::Served;
use common::*;
use fantoccini::{Client, Locator};
use serde_json::json;

async fn text(c: &Client, css: &str) -> String {
    c.find(Locator::Css(css)).await.unwrap().text().await.unwrap()
}

async fn click(c: &Client, css: &str) {
    c.find(Locator::Css(css)).await.unwrap().click().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_replay_page_steps_through_a_game_follows_it_live_and_shows_a_diff() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(&dir.path().join("store"));
    s.doomtrooper("g", "public");
    let p1 = s.token("g", "seat", "p1");
    let p2 = s.token("g", "seat", "p2");
    let dana = s.token("g", "judge", "Dana");
    // seq 1-2 by p1; seq 3 a counter by p2; seq 4 the judge rewinds to seq 2.
    assert_eq!(s.append("g", &p1, "p1", combat("p2", "A", "D"), 1).0, 201);
    assert_eq!(s.append("g", &p1, "p1", tactic("Fight"), 2).0, 201);
    let hash2 = s.get("/api/games/g/events?from=2&limit=1", None).1["events"][0]["hash"].clone();
    assert_eq!(s.append("g", &p2, "p2", counter("Cancel", 2), 3).0, 201);
    let rewind = json!({"type": "ruling", "kind": "rewind", "concerns": {"seq": 2, "hash": hash2},
        "reason": "the counter was played from the wrong zone"});
    let (status, v) = s.append("g", &dana, "Dana", rewind, 4);
    assert_eq!(status, 201, "{v}");
    // A second record of the same combat that went another way, for the diff.
    assert_eq!(s.post("/api/games/g/fork", Some(&s.organiser), &json!({"at": 2, "name": "g2"})).0, 201);
    let p2b = s.token("g2", "seat", "p2");
    assert_eq!(s.append("g2", &p2b, "p2", counter("Nullify", 2), 3).0, 201);

    let profile = tempfile::tempdir().unwrap();
    if !common::has(common::Need::Chromium) {
        return;
    }
    let (_driver, c) = browser(profile.path()).await;
    c.goto(&format!("{}/games/g/replay", s.url)).await.unwrap();

    // The timeline: every event, the ruling and the rewound counter marked.
    wait_for(&c, "return document.querySelectorAll('#timeline li').length", json!(5)).await;
    wait_for(&c, "return document.body.dataset.shownSeq || null", json!("4")).await;
    let classes = c
        .execute("return [...document.querySelectorAll('#timeline li')].map(li => li.className)", vec![])
        .await
        .unwrap();
    assert!(classes[3].as_str().unwrap().contains("rewound"), "seq 3 is marked rewound: {classes}");
    assert!(classes[4].as_str().unwrap().contains("ruling"), "seq 4 is marked a ruling: {classes}");
    assert!(!classes[2].as_str().unwrap().contains("rewound"), "{classes}");
    assert_eq!(text(&c, "#position").await, "seq 4 (5 of 5)");
    // Each event is labelled with the step it was made at, as `log` does:
    // the announcement at step 1, the battle tactic at step 2; event 0 at none.
    let steps = c
        .execute("return [...document.querySelectorAll('#timeline li .step')].map(s => s.textContent)", vec![])
        .await
        .unwrap();
    assert_eq!(steps[0], "", "event 0 is made at no step: {steps}");
    assert!(steps[1].as_str().unwrap().starts_with("Doomtrooper step 1 "), "{steps}");
    assert!(steps[2].as_str().unwrap().starts_with("Doomtrooper step 2 "), "{steps}");
    let adjudication = text(&c, "#adjudication").await;
    assert!(adjudication.contains("ruling (seq 4) by Dana: rewind to after seq 2"), "{adjudication}");
    assert!(text(&c, "#event-tags").await.contains("ruling"));

    // Back one step: the rewound counter, with its step names from the rules.
    click(&c, "#back").await;
    wait_for(&c, "return document.body.dataset.shownSeq", json!("3")).await;
    assert_eq!(text(&c, "#position").await, "seq 3 (4 of 5)");
    assert!(text(&c, "#event-tags").await.contains("rewound"));
    assert!(text(&c, "#step-after").await.starts_with("Doomtrooper step"), "{}", text(&c, "#step-after").await);

    // Jump to seq 1: the state panel shows the state after it.
    let jump = c.find(Locator::Css("#jump")).await.unwrap();
    jump.clear().await.unwrap();
    jump.send_keys("1").await.unwrap();
    click(&c, "#go").await;
    wait_for(&c, "return document.body.dataset.shownSeq", json!("1")).await;
    assert_eq!(text(&c, "#state-may-act").await, "Ann (p1)", "after the announcement, Ann picks the battle tactic");
    assert_eq!(text(&c, "#state-step").await, "Doomtrooper step 2 (ANNOUNCE BATTLE TACTIC)", "the step, once");
    let board = text(&c, "#board").await;
    assert!(board.contains("attacker · Ann (p1)") && board.contains("defender · Ben (p2)"), "the board: {board}");
    assert!(text(&c, "#teams").await.starts_with("Ann (p1), Ben (p2) · judges: Dana"));
    // The reducer's state, for tools, is fetched when a reader opens it.
    click(&c, "#raw summary").await;
    wait_for(&c, "return document.getElementById('state').textContent.includes('\"attacker\"')", json!(true)).await;
    click(&c, "#forward").await;
    wait_for(&c, "return document.body.dataset.shownSeq", json!("2")).await;

    // Live: a new event at the table appears on the open page.
    wait_for(&c, "return document.getElementById('live').textContent", json!("live")).await;
    let (status, v) = s.append("g", &p2, "p2", counter("Nullify", 2), 5);
    assert_eq!(status, 201, "{v}");
    wait_for(&c, "return document.querySelectorAll('#timeline li').length", json!(6)).await;
    assert_eq!(text(&c, "#position").await, "seq 2 (3 of 6)", "a reader looking back is not moved");
    click(&c, "#timeline li:last-child").await;
    wait_for(&c, "return document.body.dataset.shownSeq", json!("5")).await;

    // Side by side: the two records part after seq 2.
    c.goto(&format!("{}/games/g/replay?diff=g2", s.url)).await.unwrap();
    wait_for(&c, "return document.getElementById('diff').hidden", json!(false)).await;
    assert!(text(&c, "#diff-summary").await.contains("differ from seq 3"), "{}", text(&c, "#diff-summary").await);
    let a = text(&c, "#diff-a").await;
    let b = text(&c, "#diff-b").await;
    assert!(a.contains("Cancel") && b.contains("Nullify"), "A: {a}\nB: {b}");
    assert!(a.contains("Ben (p2)") && b.contains("Ben (p2)"), "seats by name: A: {a}\nB: {b}");
    // The diff's outcome is what the judge opened the page for: at the top, above the state panel.
    let above = "const top = id => document.getElementById(id).getBoundingClientRect().top; \
        return top('diff-outcome') < top('state-panel') && top('diff-outcome') < top('board-panel')";
    assert_eq!(c.execute(above, vec![]).await.unwrap(), json!(true), "the outcome above the state panel");
    c.close().await.unwrap();
}

/// The page's board for every ruleset's sample: the players' names, the
/// step in the text's words and the outcome strip, with a screenshot of
/// each written for people to look at.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_rulesets_board_is_drawn_with_names_step_and_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(&dir.path().join("store"));
    let rulesets: Vec<&str> = arbiter::rules::Kind::ALL.iter().map(|k| k.name()).collect();
    for &r in &rulesets {
        let out = Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .env("ARBITER_SERVER", &s.url)
            .env("ARBITER_TOKEN", &s.organiser)
            .args(["demo", "--ruleset", r, "--as", r])
            .output()
            .unwrap();
        assert!(out.status.success(), "{r}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let shots = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let profile = tempfile::tempdir().unwrap();
    if !common::has(common::Need::Chromium) {
        return;
    }
    let (_driver, c) = browser(profile.path()).await;
    c.set_window_size(1400, 1000).await.unwrap();
    for &r in &rulesets {
        let head = s.get(&format!("/api/games/{r}"), None).1["seq"].as_u64().unwrap();
        let state = s.get(&format!("/api/games/{r}/state"), None).1;
        c.goto(&format!("{}/games/{r}/replay", s.url)).await.unwrap();
        wait_for(&c, "return document.body.dataset.shownSeq", json!(head.to_string())).await;
        let seats = state["header"]["seats"].as_array().unwrap();
        let teams = text(&c, "#teams").await;
        for seat in seats {
            let name = format!("{} ({})", seat["name"].as_str().unwrap(), seat["id"].as_str().unwrap());
            assert!(teams.contains(&name), "{r}: {name} in {teams}");
        }
        assert_eq!(text(&c, "#state-step").await, state["step"]["reference"].as_str().unwrap(), "{r}");
        let board = text(&c, "#board").await;
        assert!(!board.trim().is_empty(), "{r}: a board is drawn");
        assert!(state["board"].is_object(), "{r}: every ruleset has a board");
        assert!(!board.contains("{\""), "{r}: the board is drawn, not dumped: {board}");
        // Each ruleset's own drawing, not the generic table.
        let drawn = c.execute("return document.getElementById('board').dataset.drawn", vec![]).await.unwrap();
        assert_eq!(drawn, json!(r), "{r}: drawn by its own panel");
        if r == "doomtrooper" {
            assert!(text(&c, "#strip").await.starts_with("points: Alice (p1) 2"), "{r}: the outcome strip");
        }
        if r == "riftbound" {
            assert!(
                text(&c, "#strip").await.starts_with("scores: Alice (p1) 1 · Bob (p2) 1"),
                "{r}: the outcome strip"
            );
            assert!(board.contains("controlled by Alice (p1)"), "{r}: {board}");
        }
        std::fs::write(shots.join(format!("{r}-replay.png")), c.screenshot().await.unwrap()).unwrap();
    }
    // Riftbound mid-combat: the battlefield fought over, the Chain and Focus.
    c.goto(&format!("{}/games/riftbound/replay?seq=15", s.url)).await.unwrap();
    wait_for(&c, "return document.body.dataset.shownSeq", json!("15")).await;
    let board = text(&c, "#board").await;
    for words in [
        "contested by Alice (p1)",
        "The Chain (resolves newest first)",
        "reaction Ward · resolves next",
        "Might 6 in this combat",
    ] {
        assert!(board.contains(words), "{words:?} in {board}");
    }
    std::fs::write(shots.join("riftbound-replay-15.png"), c.screenshot().await.unwrap()).unwrap();
    c.close().await.unwrap();
}

/// A judge follows eight tables: the floor page holds one stream for all of
/// them (a browser allows six connections per host), and each table's card
/// follows its own game.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_floor_page_follows_eight_tables_over_one_stream() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(&dir.path().join("store"));
    let games: Vec<String> = (1..=8).map(|i| format!("t{i}")).collect();
    let mut p1 = Vec::new();
    for g in &games {
        s.doomtrooper(g, "public");
        p1.push(s.token(g, "seat", "p1"));
    }
    let profile = tempfile::tempdir().unwrap();
    if !common::has(common::Need::Chromium) {
        return;
    }
    let (_driver, c) = browser(profile.path()).await;
    c.goto(&format!("{}/follow?games={}", s.url, games.join(","))).await.unwrap();
    wait_for(&c, "return document.getElementById('live').className", json!("on")).await;
    wait_for(&c, "return document.querySelectorAll('.table').length", json!(8)).await;
    for (i, g) in games.iter().enumerate() {
        assert_eq!(s.append(g, &p1[i], "p1", combat("p2", "A", "D"), 1).0, 201);
    }
    for g in &games {
        let script = format!("return document.querySelector('[data-game=\"{g}\"]').dataset.seq");
        wait_for(&c, &script, json!("1")).await;
    }
    let last = text(&c, "[data-game=\"t8\"] .step").await;
    assert!(last.contains("ANNOUNCE BATTLE TACTIC"), "{last}");
    assert!(text(&c, "[data-game=\"t8\"] .may-act").await.contains("Ann (p1)"));
    // Leaving the page gives the stream back (pagehide), and a replay page
    // opened next goes live at once.
    c.goto(&format!("{}/games/t1/replay", s.url)).await.unwrap();
    wait_for(&c, "return document.getElementById('live').textContent", json!("live")).await;
    let shots = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    c.goto(&format!("{}/follow?games={}", s.url, games.join(","))).await.unwrap();
    wait_for(&c, "return document.querySelector('[data-game=\"t8\"]').dataset.seq", json!("1")).await;
    std::fs::write(shots.join("floor.png"), c.screenshot().await.unwrap()).unwrap();
    c.close().await.unwrap();
}
