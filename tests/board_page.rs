//! The board panel in a real headless browser (Debian's chromium through
//! chromedriver, as tests/browser.rs): what stands reads plainly and what
//! does not is struck, on the Doomtrooper board; the Raw Deal board folds
//! the turn's earlier play sequences. Screenshots are written for people
//! to look at (target/tmp/screenshots).

mod common;

use std::process::Command;

use common::browser::{browser, wait_for};
use common::server::Served;
use fantoccini::{Client, Locator};
use serde_json::json;

async fn text(c: &Client, css: &str) -> String {
    c.find(Locator::Css(css)).await.unwrap().text().await.unwrap()
}

async fn show(c: &Client, url: &str, seq: u64) -> String {
    c.goto(url).await.unwrap();
    wait_for(c, "return document.body.dataset.shownSeq", json!(seq.to_string())).await;
    text(c, "#board").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_board_strikes_what_does_not_stand_and_folds_earlier_sequences() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(&dir.path().join("store"));
    let out = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .env("ARBITER_SERVER", &s.url)
        .env("ARBITER_TOKEN", &s.organiser)
        .args(["demo", "--ruleset", "doomtrooper", "--as", "dt"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Raw Deal: two plays by Alice that end at 2d, then a third under way.
    let header = json!({"type": "open", "ruleset": "rawdeal", "ruleset_version": 1,
        "seats": [{"id": "p1", "name": "Alice"}, {"id": "p2", "name": "Bob"}], "judges": ["Dana"]});
    let (status, v) =
        s.post("/api/games", Some(&s.organiser), &json!({"name": "rd", "header": header, "read": "public"}));
    assert_eq!(status, 201, "{v}");
    let p1 = s.token("rd", "seat", "p1");
    let cost = |c: i64| json!({"type": "resolve", "what": "cost", "fortitude": 3, "player_mods": [], "opponent_mods": [], "cost": c});
    let plays = [
        json!({"type": "play", "card": "Spear", "cost": 5, "damage": 4}),
        cost(5),
        json!({"type": "resolve", "what": "requirements", "must": true}),
        json!({"type": "play", "card": "Arm Drag", "cost": 0}),
        cost(0),
        json!({"type": "resolve", "what": "requirements", "must": false}),
        json!({"type": "play", "card": "Chokeslam", "cost": 0, "damage": 5}),
    ];
    for (i, action) in plays.into_iter().enumerate() {
        let (status, v) = s.append("rd", &p1, "p1", action, i as u64 + 1);
        assert_eq!(status, 201, "{v}");
    }

    let shots = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let profile = tempfile::tempdir().unwrap();
    if !common::has(common::Need::Chromium) {
        return;
    }
    let (_driver, c) = browser(profile.path()).await;
    c.set_window_size(1200, 1000).await.unwrap();
    let replay = |game: &str, seq: u64| format!("{}/games/{game}/replay?seq={seq}", s.url);

    // Seq 3: Bob's Cancel nullifies the battle tactic: struck, the counter named.
    let board = show(&c, &replay("dt", 3), 3).await;
    let struck = c.execute("return [...document.querySelectorAll('#board dd s')].map(s => s.textContent)", vec![]);
    assert_eq!(struck.await.unwrap(), json!(["Fight"]), "{board}");
    assert!(board.contains("seq 2, countered by Cancel (seq 3) by Bob (p2)"), "{board}");
    assert!(board.contains("standing modifiers\nnone"), "{board}");
    std::fs::write(shots.join("doomtrooper-countered-tactic.png"), c.screenshot().await.unwrap()).unwrap();
    // Seq 14: the combatants changed, steps 2-15 repeat.
    let board = show(&c, &replay("dt", 14), 14).await;
    assert!(board.contains("battle tactic\nto be announced again (the combatants changed)"), "{board}");
    assert!(board.contains("warzone\nto be announced again (the combatants changed)"), "{board}");
    // Seq 53: what stands, Shield of Faith countered and left out.
    let board = show(&c, &replay("dt", 53), 53).await;
    for words in [
        "battle tactic\nFight (seq 15)",
        "seq 15 · Alice (p1) · battle tactic Fight",
        "seq 39 · Alice (p1) · equipment Bolter (first combat)",
        "seq 50 · Alice (p1) · MODIFY COMBAT RATINGS Combat Drugs (first combat)",
    ] {
        assert!(board.contains(words), "{words:?} in {board}");
    }
    assert!(!board.contains("· MODIFY COMBAT RATINGS Shield of Faith (first combat)"), "{board}");
    std::fs::write(shots.join("doomtrooper-standing-modifiers.png"), c.screenshot().await.unwrap()).unwrap();

    // Raw Deal: the turn's two earlier sequences, folded, with their counts.
    let board = show(&c, &replay("rd", 7), 7).await;
    assert!(board.contains("ended so far: 2 breakdowns: 2 not played (2d)"), "{board}");
    let summaries = c.execute("return [...document.querySelectorAll('#board details.earlier')].map(d => [d.open, d.querySelector('summary').textContent])", vec![]);
    assert_eq!(
        summaries.await.unwrap(),
        json!([
            [false, "seq 1 · Alice (p1) · Spear: not played (2d) · 1 breakdown: 1 not played (2d)"],
            [false, "seq 4 · Alice (p1) · Arm Drag: not played (2d) · 1 breakdown: 1 not played (2d)"]
        ])
    );
    c.find(Locator::Css("#board details.earlier summary")).await.unwrap().click().await.unwrap();
    assert!(text(&c, "#board details.earlier").await.contains("seq 1 · Alice (p1) · Spear: not played (2d)"));
    std::fs::write(shots.join("rawdeal-earlier-sequences.png"), c.screenshot().await.unwrap()).unwrap();
    c.close().await.unwrap();
}
