//! Thirty replay tabs in one headless browser (Debian's chromium through
//! chromedriver, as tests/browser.rs) stay live: every tab's stream goes
//! through one shared worker and one connection. In a file of its own, so
//! that no other browser test shares the two cores while it measures.

mod common;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::browser::{browser, wait_for};
use common::server::Served;
use common::*;
use serde_json::{Value, json};

fn epoch_ms() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64() * 1000.0
}

/// A judge follows thirty tables in thirty replay tabs of one browser. A
/// browser holds six connections per host over HTTP/1.1: with a stream per
/// tab the seventh tab froze. Through the shared worker the browser holds
/// one stream for all, and each tab shows its table's next event within a
/// second of the append's answer, even with all thirty appended at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_replay_tabs_in_one_browser_all_update_within_a_second() {
    const TABS: usize = 30;
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(&dir.path().join("store"));
    let games: Vec<String> = (1..=TABS).map(|i| format!("t{i}")).collect();
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
    let first = c.window().await.unwrap();
    let mut tabs = vec![first];
    for _ in 1..TABS {
        tabs.push(c.new_window(true).await.unwrap().handle);
    }
    for (tab, g) in tabs.iter().zip(&games) {
        c.switch_to_window(tab.clone()).await.unwrap();
        // With a stream per tab, the seventh tab's page never loaded: the
        // browser's six connections were all held by the tabs before it.
        let url = format!("{}/games/{g}/replay", s.url);
        match tokio::time::timeout(Duration::from_secs(20), c.goto(&url)).await {
            Ok(done) => done.unwrap(),
            Err(_) => panic!("the replay tab of {g} did not load in 20 s"),
        }
        wait_for(&c, "return document.body.dataset.shownSeq || null", json!("0")).await;
    }
    // Every tab is live, and notes the time it first shows seq 1.
    let watch = "window.shownAt = null;
        new MutationObserver(() => {
            if (document.body.dataset.shownSeq === '1' && window.shownAt === null) window.shownAt = Date.now();
        }).observe(document.body, {attributes: true});
        return document.getElementById('live').textContent";
    for tab in &tabs {
        c.switch_to_window(tab.clone()).await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while c.execute(watch, vec![]).await.unwrap() != json!("live") {
            assert!(Instant::now() < deadline, "a tab never went live");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    // All thirty appended back to back, each answer's time kept.
    let mut answered = Vec::new();
    for (i, g) in games.iter().enumerate() {
        let (status, v) = s.append(g, &p1[i], "p1", combat("p2", "A", "D"), 1);
        assert_eq!(status, 201, "{v}");
        answered.push(epoch_ms());
    }
    let mut worst = (0.0f64, String::new());
    for (i, tab) in tabs.iter().enumerate() {
        c.switch_to_window(tab.clone()).await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let shown = loop {
            let v = c.execute("return window.shownAt", vec![]).await.unwrap();
            if let Value::Number(n) = v {
                break n.as_f64().unwrap();
            }
            assert!(Instant::now() < deadline, "{}: never showed seq 1", games[i]);
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let late = shown - answered[i];
        println!("{}: shown {late:.0} ms after the append's answer", games[i]);
        if late > worst.0 {
            worst = (late, games[i].clone());
        }
        assert!(late < 1000.0, "{}: shown {late:.0} ms after the append's answer", games[i]);
    }
    println!("thirty tabs: the slowest, {}, showed its event {:.0} ms after the append's answer", worst.1, worst.0);
    c.close().await.unwrap();
}
