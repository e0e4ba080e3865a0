//! The judge's controls on the replay page, in headless chromium against a
//! real `arbiter serve`: a judge signed in by its `#token=` link rewinds
//! from the timeline (the board it returns to shown first, the reason
//! required), asks what if an event were skipped (nothing stored), decides
//! a pending ruling and records a penalty from its moves; a conflict and a
//! refusal say so and store nothing; a ruling recorded while the server is
//! down is stored once when it is back; a seat's or a reader's page shows
//! none of it.
//!
//! One chromium at a time (`ONE_BROWSER`): the tests share two cores with
//! everything else.

mod common;

use std::time::{Duration, Instant};

use common::browser::{browser, wait_for};
use common::server::{Served, serve_at};
use common::*;
use fantoccini::{Client, Locator};
use serde_json::{Value, json};

static ONE_BROWSER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn js(c: &Client, script: &str) -> Value {
    c.execute(script, vec![]).await.unwrap()
}

async fn text(c: &Client, css: &str) -> String {
    c.find(Locator::Css(css)).await.unwrap_or_else(|e| panic!("no {css}: {e}")).text().await.unwrap()
}

async fn click(c: &Client, css: &str) {
    let e = c.find(Locator::Css(css)).await.unwrap_or_else(|e| panic!("no {css}: {e}"));
    e.click().await.unwrap_or_else(|e| panic!("cannot click {css}: {e}"));
}

/// Replaces what an input holds with `value`, typed (WebDriver's clear
/// alone fires no `input` event, as a person's deleting does).
async fn fill(c: &Client, css: &str, value: &str) {
    let e = c.find(Locator::Css(css)).await.unwrap_or_else(|e| panic!("no {css}: {e}"));
    e.clear().await.unwrap();
    let typed = if value.is_empty() { "x\u{E003}".to_string() } else { value.to_string() };
    e.send_keys(&typed).await.unwrap();
}

/// Waits until the judge's notice is of `kind` (ok, refused, conflict...);
/// fails with what it says.
async fn notice(c: &Client, kind: &str) -> String {
    notice_saying(c, kind, "").await
}

/// Waits for a notice of `kind` whose words start with `words`: "sending"
/// and "not sent yet" are both `pending`, and a slow refusal of the
/// connection can leave "sending" up for a moment.
async fn notice_saying(c: &Client, kind: &str, words: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let got = js(c, "return document.body.dataset.judgeNotice || null").await;
        let said = text(c, "#judge-notice").await;
        if got == json!(kind) && said.starts_with(words) {
            return said;
        }
        assert!(Instant::now() < deadline, "waited for a notice {kind} saying {words:?}; it is {got}: {said}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Opens the replay page of `game` (signed in with `token`, if any) and
/// waits for it to show seq `seq`.
async fn open(c: &Client, url: &str, game: &str, token: Option<&str>, seq: u64) {
    let fragment = token.map(|t| format!("#token={t}")).unwrap_or_default();
    c.goto(&format!("{url}/games/{game}/replay{fragment}")).await.unwrap();
    wait_for(c, "return document.body.dataset.shownSeq || null", json!(seq.to_string())).await;
}

/// Shows event `seq` (a click on the timeline, once the live stream has
/// brought it there).
async fn show(c: &Client, seq: u64) {
    let item = format!("#timeline li[data-seq=\"{seq}\"]");
    wait_for(c, &format!("return !!document.querySelector('{item}')"), json!(true)).await;
    click(c, &item).await;
    wait_for(c, "return document.body.dataset.shownSeq", json!(seq.to_string())).await;
    wait_for(c, "return document.getElementById('judge-event').dataset.seq", json!(seq.to_string())).await;
}

/// A screenshot in target/tmp/screenshots, for people to look at.
async fn shot(c: &Client, name: &str) {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("screenshots");
    std::fs::create_dir_all(&path).unwrap();
    std::fs::write(path.join(name), c.screenshot().await.unwrap()).unwrap();
}

/// The Doomtrooper combat of tests/browser.rs: seqs 1-2 by p1 (Ann), seq 3
/// a counter by p2 (Ben); judge Dana. Returns (p1, p2, Dana) tokens.
fn counter_war(s: &Served, game: &str) -> (String, String, String) {
    s.doomtrooper(game, "public");
    let (p1, p2, dana) = (s.token(game, "seat", "p1"), s.token(game, "seat", "p2"), s.token(game, "judge", "Dana"));
    assert_eq!(s.append(game, &p1, "p1", combat("p2", "A", "D"), 1).0, 201);
    assert_eq!(s.append(game, &p1, "p1", tactic("Fight"), 2).0, 201);
    assert_eq!(s.append(game, &p2, "p2", counter("Cancel", 2), 3).0, 201);
    (p1, p2, dana)
}

fn event(s: &Served, game: &str, seq: u64) -> Value {
    let (status, page) = s.get(&format!("/api/games/{game}/events?from={seq}&limit=1"), None);
    assert_eq!(status, 200, "{page}");
    page["events"][0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_rewinds_from_the_page_after_seeing_the_board_it_returns_to() {
    let _one = ONE_BROWSER.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(&dir.path().join("store"));
    let (_, p2, dana) = counter_war(&s, "g");
    let profile = tempfile::tempdir().unwrap();
    if !common::has(common::Need::Chromium) {
        return;
    }
    let (_driver, c) = browser(profile.path()).await;
    c.set_window_size(1400, 1100).await.unwrap();
    open(&c, &s.url, "g", Some(&dana), 3).await;
    wait_for(&c, "return document.getElementById('judge').hidden", json!(false)).await;
    assert_eq!(text(&c, "#judge-me").await, "Dana");

    // The head cannot be rewound to (nothing follows it): said, not offered.
    show(&c, 3).await;
    assert_eq!(js(&c, "return document.getElementById('rewind-here').disabled").await, json!(true));
    assert!(text(&c, "#judge-event-why").await.contains("nothing follows seq 3"));

    // Rewind to seq 2: first the board the rewind returns to, nothing stored.
    let head = s.head("g");
    show(&c, 2).await;
    click(&c, "#rewind-here").await;
    wait_for(&c, "return document.getElementById('judge-preview').dataset.kind", json!("rewind")).await;
    wait_for(&c, "return document.getElementById('judge-preview').hidden", json!(false)).await;
    assert_eq!(text(&c, "#judge-preview-title").await, "Rewind to seq 2: the board it returns to");
    let drawn = js(&c, "return document.getElementById('rewind-board').dataset.drawn").await;
    assert_eq!(drawn, json!("doomtrooper"), "the board is drawn as the replay draws it");
    let board = text(&c, "#rewind-board").await;
    assert!(board.contains("attacker · Ann (p1)") && board.contains("Fight"), "the board after seq 2: {board}");
    let back = text(&c, "#rewind-taken-back").await;
    assert!(back.contains("seqs 3 to 3") && back.contains("Ben (p2)"), "what it takes back: {back}");
    assert_eq!(s.head("g"), head, "a preview stores nothing");
    shot(&c, "judge-rewind-preview.png").await;

    // The reason is filled in, and required.
    let reason = "#judge-preview-body input[data-field=\"reason\"]";
    let default = js(&c, &format!("return document.querySelector('{reason}').value")).await;
    assert!(default.as_str().unwrap().starts_with("rewind to after seq 2"), "{default}");
    assert_eq!(js(&c, "return document.getElementById('judge-record').disabled").await, json!(false));
    fill(&c, reason, "").await;
    wait_for(&c, "return document.getElementById('judge-record').disabled", json!(true)).await;
    assert!(text(&c, "#judge-preview-body .why").await.contains("enter the reason"));

    fill(&c, reason, "the counter was played from the wrong zone").await;
    fill(&c, "#judge-preview-body input[data-field=\"rule\"]", "Doomtrooper 5.3").await;

    // Meanwhile Ben notes the counter: the rewind was offered before it, so
    // it is a conflict, said; the preview stays, now after seq 4.
    let hash3 = event(&s, "g", 3)["hash"].clone();
    let note = json!({"type": "note", "concerns": {"seq": 3, "hash": hash3}, "text": "from my hand"});
    assert_eq!(s.append("g", &p2, "p2", note, 4).0, 201);
    wait_for(&c, "return document.querySelectorAll('#timeline li').length", json!(5)).await;
    click(&c, "#judge-record").await;
    let said = notice(&c, "conflict").await;
    assert!(said.starts_with("Ben (p2) recorded “note: "), "{said}");
    assert_eq!(s.stored("g").len(), 5, "nothing of the judge's was stored");
    let back = text(&c, "#rewind-taken-back").await;
    assert!(
        back.contains("seqs 3 to 4 · seq 3 Ben (p2): Cancel counters battle tactic Fight (seq 2)"),
        "what it takes back now: {back}"
    );

    click(&c, "#judge-record").await;
    let said = notice(&c, "ok").await;
    assert!(said.starts_with("seq 5 recorded: rewind to seq 2"), "{said}");
    let e = event(&s, "g", 5);
    let hash2 = event(&s, "g", 2)["hash"].clone();
    assert_eq!(e["actor"], "Dana");
    assert_eq!(
        e["action"],
        json!({"type": "ruling", "kind": "rewind", "concerns": {"seq": 2, "hash": hash2},
            "reason": "the counter was played from the wrong zone", "rule": "Doomtrooper 5.3"})
    );

    // The replay shows the rewound counter struck (the note stands), and the ruling.
    wait_for(&c, "return document.querySelectorAll('#timeline li').length", json!(6)).await;
    wait_for(
        &c,
        "return document.querySelector('#timeline li[data-seq=\"3\"]').classList.contains('rewound')",
        json!(true),
    )
    .await;
    let struck =
        js(&c, "return getComputedStyle(document.querySelector('#timeline li[data-seq=\"3\"]')).textDecorationLine")
            .await;
    assert_eq!(struck, json!("line-through"));
    let classes =
        js(&c, "return [...document.querySelectorAll('#timeline li')].map(li => li.classList.contains('rewound'))")
            .await;
    assert_eq!(classes, json!([false, false, false, true, false, false]));
    assert!(js(&c, "return document.getElementById('judge-preview').hidden").await == json!(true));
    // Seq 3 is rewound: it is not offered again.
    show(&c, 3).await;
    assert_eq!(js(&c, "return document.getElementById('rewind-here').disabled").await, json!(true));
    assert!(text(&c, "#judge-event-why").await.contains("was itself rewound"));
    shot(&c, "judge-rewound.png").await;
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_if_skipped_shows_the_first_illegal_event_and_stores_nothing() {
    let _one = ONE_BROWSER.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(&dir.path().join("store"));
    let (_, _, dana) = counter_war(&s, "g");
    let profile = tempfile::tempdir().unwrap();
    if !common::has(common::Need::Chromium) {
        return;
    }
    let (_driver, c) = browser(profile.path()).await;
    c.set_window_size(1400, 1100).await.unwrap();
    open(&c, &s.url, "g", Some(&dana), 3).await;
    wait_for(&c, "return document.getElementById('judge').hidden", json!(false)).await;
    let head = s.head("g");

    // The header cannot be skipped.
    show(&c, 0).await;
    assert_eq!(js(&c, "return document.getElementById('whatif-skip').disabled").await, json!(true));

    // Without the combat's announcement, the battle tactic is out of place.
    show(&c, 1).await;
    click(&c, "#whatif-skip").await;
    wait_for(&c, "return document.getElementById('judge-preview').dataset.kind", json!("whatif")).await;
    wait_for(&c, "return (document.getElementById('whatif-illegal') || {dataset: {}}).dataset.seq || null", json!("2"))
        .await;
    let api = s.post("/api/games/g/whatif", None, &json!({"skip": [1]})).1;
    let violation = &api["illegal"][1];
    let said = text(&c, "#whatif-illegal").await;
    assert!(said.starts_with("seq 2 becomes illegal (Ann (p1): "), "{said}");
    assert!(said.ends_with(violation["message"].as_str().unwrap()), "the rules' own reason: {said}");
    assert!(text(&c, "#judge-preview-body .rule").await.contains(violation["rule"].as_str().unwrap()));
    assert_eq!(js(&c, "return document.getElementById('whatif-board').dataset.drawn").await, json!("doomtrooper"));
    assert_eq!(text(&c, "#whatif-board").await, "No combat yet.", "the board just before seq 2, without seq 1");
    assert!(text(&c, "#judge-preview-body").await.contains("The board just before seq 2, without seq 1"));
    shot(&c, "judge-whatif.png").await;
    // The event that becomes illegal, one click away.
    click(&c, "#judge-preview-body button").await;
    wait_for(&c, "return document.body.dataset.shownSeq", json!("2")).await;

    // Skipping the counter leaves every event legal; the board at the end.
    show(&c, 3).await;
    click(&c, "#whatif-skip").await;
    wait_for(&c, "return !!document.getElementById('whatif-legal')", json!(true)).await;
    assert!(text(&c, "#whatif-board").await.contains("Fight"));

    assert_eq!(s.head("g"), head, "a what-if stores nothing: the head is the same");
    assert_eq!(s.stored("g").len(), 4);
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_and_a_penalty_from_the_page_land_in_the_record() {
    let _one = ONE_BROWSER.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(&dir.path().join("store"));
    // WTactics: an attacker left undefended beside a defended one waits for a judge.
    let header = json!({"type": "open", "ruleset": "wtactics", "ruleset_version": 1,
        "seats": [{"id": "p1", "name": "Ann"}, {"id": "p2", "name": "Ben"}], "judges": ["Dana"]});
    let (status, v) =
        s.post("/api/games", Some(&s.organiser), &json!({"name": "w", "header": header, "read": "public"}));
    assert_eq!(status, 201, "{v}");
    let (p1, p2, dana) = (s.token("w", "seat", "p1"), s.token("w", "seat", "p2"), s.token("w", "judge", "Dana"));
    let attackers = json!({"type": "announce", "what": "attackers",
        "attackers": [{"name": "Orc", "atk": 3, "def": 2}, {"name": "Troll", "atk": 5, "def": 5}]});
    assert_eq!(s.append("w", &p1, "p1", attackers, 1).0, 201);
    assert_eq!(s.append("w", &p2, "p2", json!({"type": "pass"}), 2).0, 201);
    assert_eq!(s.append("w", &p1, "p1", json!({"type": "pass"}), 3).0, 201);
    let blocks = json!({"type": "announce", "what": "defenders",
        "blocks": [{"defender": {"name": "Knight", "atk": 2, "def": 3}, "attacker": "Orc"}]});
    assert_eq!(s.append("w", &p2, "p2", blocks, 4).0, 201);

    let profile = tempfile::tempdir().unwrap();
    if !common::has(common::Need::Chromium) {
        return;
    }
    let (_driver, c) = browser(profile.path()).await;
    c.set_window_size(1400, 1100).await.unwrap();
    open(&c, &s.url, "w", Some(&dana), 4).await;
    wait_for(&c, "return document.getElementById('judge').hidden", json!(false)).await;
    wait_for(&c, "return document.getElementById('judge-awaiting').className", json!("alert")).await;
    assert!(text(&c, "#judge-awaiting").await.starts_with("Awaiting your ruling: attackers were left undefended"));

    // Decide: the options of the pending ruling, the influence entered.
    click(&c, "#judge-moves button[data-kind=\"decide\"]").await;
    let composer = "#judge-composer .composer";
    wait_for(&c, &format!("return !!document.querySelector('{composer}')"), json!(true)).await;
    let concerns =
        js(&c, &format!("return document.querySelector('{composer} input[data-field=\"concerns\"]').value")).await;
    assert_eq!(concerns, json!("4"), "a decision answers the last event");
    fill(&c, &format!("{composer} input[data-field=\"decision/influence_lost\"]"), "5").await;
    fill(&c, &format!("{composer} input[data-field=\"reason\"]"), "an undefended attacker strikes the influence").await;
    fill(&c, &format!("{composer} input[data-field=\"rule\"]"), "WTactics II").await;
    shot(&c, "judge-decide.png").await;
    click(&c, "#judge-record").await;
    let said = notice(&c, "ok").await;
    assert!(said.starts_with("seq 5 recorded: decide: "), "{said}");
    let e = event(&s, "w", 5);
    assert_eq!((e["actor"].clone(), e["action"]["kind"].clone()), (json!("Dana"), json!("decide")));
    assert_eq!(e["action"]["concerns"], json!({"seq": 4, "hash": event(&s, "w", 4)["hash"]}));
    assert_eq!(e["action"]["decision"], json!({"type": "resolve", "what": "unblocked", "influence_lost": 5}));
    assert_eq!(e["action"]["reason"], "an undefended attacker strikes the influence");
    wait_for(&c, "return document.getElementById('judge-awaiting').textContent", json!("No ruling is pending.")).await;
    assert_eq!(
        js(&c, "return document.querySelectorAll('#judge-moves button[data-kind=\"decide\"]').length").await,
        json!(0)
    );

    // A penalty about the event shown (seq 4), Ben chosen from the seats.
    wait_for(&c, "return document.body.dataset.shownSeq", json!("5")).await;
    show(&c, 4).await;
    click(&c, "#judge-moves button[data-kind=\"penalty\"]").await;
    wait_for(&c, &format!("return !!document.querySelector('{composer}')"), json!(true)).await;
    let concerns =
        js(&c, &format!("return document.querySelector('{composer} input[data-field=\"concerns\"]').value")).await;
    assert_eq!(concerns, json!("4"), "the event shown");
    click(&c, &format!("{composer} fieldset[data-choice=\"seat\"] button[data-option=\"1\"]")).await;
    for (field, value) in [
        ("infraction", "looking at extra cards"),
        ("penalty", "warning"),
        ("fix", "shuffle the revealed cards back"),
        ("reason", "Ben drew two cards instead of one"),
    ] {
        fill(&c, &format!("{composer} input[data-field=\"{field}\"]"), value).await;
    }
    // Meanwhile Ann notes something at the table: the judge's form was offered
    // before it, so the first attempt is a conflict, said, and the form kept.
    let hash4 = event(&s, "w", 4)["hash"].clone();
    let note = json!({"type": "note", "concerns": {"seq": 4, "hash": hash4}, "text": "I saw it too"});
    assert_eq!(s.append("w", &p1, "p1", note, 6).0, 201);
    wait_for(&c, "return document.querySelectorAll('#timeline li').length", json!(7)).await;
    wait_for(
        &c,
        "return document.querySelector('#judge-composer .stale').textContent.includes('moved on to seq 6')",
        json!(true),
    )
    .await;
    click(&c, "#judge-record").await;
    let said = notice(&c, "conflict").await;
    assert!(said.starts_with("Ann (p1) recorded “note: ") && said.contains("nothing of yours was stored"), "{said}");
    assert_eq!(s.stored("w").len(), 7, "nothing of the judge's was stored");
    assert_eq!(text(&c, "#judge-composer .stale").await, "", "the form is offered after the new head");
    click(&c, "#judge-record").await;
    let said = notice(&c, "ok").await;
    assert!(said.starts_with("seq 7 recorded: penalty"), "{said}");
    let e = event(&s, "w", 7);
    assert_eq!(
        e["action"],
        json!({"type": "ruling", "kind": "penalty", "concerns": {"seq": 4, "hash": event(&s, "w", 4)["hash"]},
            "seat": "p2", "infraction": "looking at extra cards", "penalty": "warning",
            "fix": "shuffle the revealed cards back", "reason": "Ben drew two cards instead of one"})
    );
    // The penalty stands in the adjudication the page shows.
    show(&c, 7).await;
    wait_for(&c, "return document.getElementById('adjudication').textContent.includes('warning')", json!(true)).await;

    // Add a judge: the name entered. A seat's id the rules refuse, in their
    // words, and nothing is stored; the form stays for another name.
    click(&c, "#judge-moves button[data-kind=\"add_judge\"]").await;
    fill(&c, &format!("{composer} input[data-field=\"judge\"]"), "p1").await;
    fill(&c, &format!("{composer} input[data-field=\"reason\"]"), "floor judge arrives").await;
    click(&c, "#judge-record").await;
    let said = notice(&c, "refused").await;
    assert!(said.starts_with("refused: Ann (p1) is already a seat or judge\nrule: "), "{said}");
    assert!(said.ends_with("nothing was stored"), "{said}");
    assert_eq!(s.stored("w").len(), 8);
    fill(&c, &format!("{composer} input[data-field=\"judge\"]"), "Eve").await;
    click(&c, "#judge-record").await;
    notice(&c, "ok").await;
    let e = event(&s, "w", 8);
    assert_eq!((e["action"]["kind"].clone(), e["action"]["judge"].clone()), (json!("add_judge"), json!("Eve")));
    shot(&c, "judge-rulings.png").await;
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seats_or_a_readers_page_shows_no_judge_controls() {
    let _one = ONE_BROWSER.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(&dir.path().join("store"));
    let (p1, _, _) = counter_war(&s, "g");
    s.doomtrooper("other", "public");
    let other_judge = s.token("other", "judge", "Dana");
    let profile = tempfile::tempdir().unwrap();
    if !common::has(common::Need::Chromium) {
        return;
    }
    let (_driver, c) = browser(profile.path()).await;
    let hidden = "return ['judge-event', 'judge', 'judge-preview'].map(id => document.getElementById(id).hidden)";
    let visible = "return [...document.querySelectorAll('[data-judge], #judge-moves button')].filter(b => b.offsetParent !== null).length";
    // A reader (no sign-in), a seat, and a judge of another game.
    for token in [None, Some(p1.as_str()), Some(other_judge.as_str())] {
        open(&c, &s.url, "g", token, 3).await;
        // The page has asked who it is signed in as: not a judge of this game.
        wait_for(&c, "return document.body.dataset.judge ?? null", json!("")).await;
        assert_eq!(js(&c, hidden).await, json!([true, true, true]), "{token:?}");
        assert_eq!(js(&c, visible).await, json!(0), "{token:?}");
    }
    c.close().await.unwrap();
}

/// A ruling recorded while the server is down is kept, sent again when it
/// is back, and stored once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ruling_recorded_while_the_server_is_down_is_stored_once_when_it_is_back() {
    let _one = ONE_BROWSER.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("store");
    let mut s = Served::start(&data);
    let (_, _, dana) = counter_war(&s, "g");
    let listen = s.url.strip_prefix("http://").unwrap().to_string();
    let profile = tempfile::tempdir().unwrap();
    if !common::has(common::Need::Chromium) {
        return;
    }
    let (_driver, c) = browser(profile.path()).await;
    c.set_window_size(1400, 1100).await.unwrap();
    open(&c, &s.url, "g", Some(&dana), 3).await;
    wait_for(&c, "return document.getElementById('judge').hidden", json!(false)).await;
    click(&c, "#judge-moves button[data-kind=\"note\"]").await;
    let composer = "#judge-composer .composer";
    fill(&c, &format!("{composer} input[data-field=\"text\"]"), "Ben's counter came from his hand").await;

    assert!(s.stop().success());
    // Every notice said from here on, in order.
    let log = "window.said = []; new MutationObserver(() => said.push(document.getElementById('judge-notice').textContent)).observe(document.getElementById('judge-notice'), { childList: true, characterData: true, subtree: true }); return true";
    assert_eq!(js(&c, log).await, json!(true));
    click(&c, "#judge-record").await;
    let said = notice_saying(&c, "pending", "not sent yet").await;
    assert!(said.starts_with("not sent yet (the connection to the server is lost): note"), "{said}");
    // A retry (a second after) leaves "not sent yet" up: no "sending" again.
    let kept = "return said.filter(t => t.startsWith('not sent yet')).length >= 2";
    wait_for(&c, kept, json!(true)).await;
    let words = js(&c, "return said.map(t => t.split(':')[0])").await;
    let words: Vec<&str> = words.as_array().unwrap().iter().map(|w| w.as_str().unwrap()).collect();
    assert_eq!(words[0], "sending", "{words:?}");
    assert!(words[1..].iter().all(|w| *w == "not sent yet (the connection to the server is lost)"), "{words:?}");
    let mut child = serve_at(&data, &listen);
    let said = notice(&c, "ok").await;
    assert!(said.starts_with("seq 4 recorded: note"), "{said}");
    assert_eq!(s.stored("g").len(), 5, "stored once");
    assert_eq!(event(&s, "g", 4)["action"]["text"], "Ben's counter came from his hand");
    wait_for(&c, "return document.querySelectorAll('#timeline li').length", json!(5)).await;
    let _ = child.kill();
    let _ = child.wait();
    c.close().await.unwrap();
}
