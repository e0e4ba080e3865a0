//! The table page in headless chromium at a phone's size (360x740): each
//! sample game recorded again by tapping, one browser per seat (and one
//! for the judge where the sample has the judge act), each signed in by its
//! own `#token=` link and kept on its table page for the whole game, so
//! every seat's page follows the others' events live; two seats tapping at
//! once; a server that restarts under an open page.
//!
//! The browsers are started once and reused for all five games (a
//! chromium per seat, not per game: four in all), which keeps the test to
//! a few minutes on two cores. Each event of a sample is recorded on its
//! actor's page: the move found as `tests/record.rs` finds it (the one of
//! the actor's moves that admits the sample's action), its button tapped,
//! its choices tapped, only the values it asks to enter typed, then
//! "Record". The export then equals the sample recorded by `demo`, event
//! for event, apart from the times.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::process::Command;
use std::time::{Duration, Instant};

use arbiter::kernel::moves::{Choice, Entry, EntryKind, Move, take};
use common::browser::{Driver, browser, wait_for};
use common::server::{Served, serve_at};
use common::*;
use fantoccini::{Client, Locator};
use serde_json::{Value, json};

/// A phone's viewport.
const WIDTH: u32 = 360;
const HEIGHT: u32 = 740;

/// One browser (its own chromium, profile and cookie), as a seat's phone.
struct Phone {
    c: Client,
    _driver: Driver,
    _profile: tempfile::TempDir,
}

async fn phone() -> Phone {
    let profile = tempfile::tempdir().unwrap();
    let (driver, c) = browser(profile.path()).await;
    // The window's size is its outside: the viewport is made the phone's.
    c.set_window_size(WIDTH, HEIGHT).await.unwrap();
    let inner = js(&c, "return [window.innerWidth, window.innerHeight]").await;
    let (w, h) = (inner[0].as_u64().unwrap() as u32, inner[1].as_u64().unwrap() as u32);
    c.set_window_size(WIDTH + WIDTH - w, HEIGHT + HEIGHT - h).await.unwrap();
    Phone { c, _driver: driver, _profile: profile }
}

async fn js(c: &Client, script: &str) -> Value {
    c.execute(script, vec![]).await.unwrap()
}

async fn text(c: &Client, css: &str) -> String {
    c.find(Locator::Css(css)).await.unwrap().text().await.unwrap()
}

async fn tap(c: &Client, css: &str) {
    let e = c.find(Locator::Css(css)).await.unwrap_or_else(|e| panic!("no {css}: {e}"));
    e.click().await.unwrap_or_else(|e| panic!("cannot tap {css}: {e}"));
}

/// Opens the table page of `game` signed in with `token`, and waits for it
/// to show seq `seq`.
async fn sign_in(c: &Client, url: &str, game: &str, token: &str, seq: u64) {
    c.goto(&format!("{url}/games/{game}/table#token={token}")).await.unwrap();
    wait_seq(c, seq).await;
    let address = c.current_url().await.unwrap();
    assert!(address.fragment().is_none(), "the token left the address bar: {address}");
}

/// Waits until the page shows seq `seq` (its moves read after it); fails
/// with what the page says.
async fn wait_seq(c: &Client, seq: u64) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let shown = js(c, "return document.body.dataset.seq || null").await;
        if shown == json!(seq.to_string())
            && js(c, "return document.body.dataset.notice || ''").await != json!("pending")
        {
            return;
        }
        if Instant::now() > deadline {
            let said = js(c, "return ['status','notice','why','error'].map(id => document.getElementById(id) ? id + ': ' + document.getElementById(id).textContent : '').join('\\n')").await;
            panic!("the page shows seq {shown}, not {seq}:\n{}", said.as_str().unwrap_or_default());
        }
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
}

type Step<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// Taps `value` (or nothing) for choice `ch`, whose field is at `path`.
fn choose<'a>(c: &'a Client, ch: &'a Choice, path: &'a str, value: Option<&'a Value>) -> Step<'a> {
    Box::pin(async move {
        let index = |v: &Value| {
            ch.options.iter().position(|o| o.value == *v).unwrap_or_else(|| panic!("{v} is not an option of {path}"))
        };
        let button = |k: usize| format!("[data-choice=\"{path}\"] button[data-option=\"{k}\"]");
        let picks: Vec<&Value> = match (ch.list, value) {
            (_, None) => vec![],
            (true, Some(v)) => v.as_array().unwrap().iter().collect(),
            (false, Some(v)) => vec![v],
        };
        for v in picks {
            let css = button(index(v));
            let pressed = c.find(Locator::Css(&css)).await.unwrap().attr("aria-pressed").await.unwrap();
            // A sole option that must be picked is shown picked already.
            if pressed.as_deref() != Some("true") {
                tap(c, &css).await;
            }
        }
    })
}

/// Types `value` (or nothing) for entry `e` at `path`; a list's items are
/// added with "add one".
fn enter<'a>(c: &'a Client, e: &'a Entry, path: &'a str, value: Option<&'a Value>) -> Step<'a> {
    Box::pin(async move {
        let input = format!("input[data-field=\"{path}\"]");
        let typed = |t: String| async move {
            c.find(Locator::Css(&input)).await.unwrap().send_keys(&t).await.unwrap();
        };
        match (e.kind, value) {
            (_, None) => {}
            // An optional list recorded empty: "none" (else it is left out).
            (EntryKind::List, Some(Value::Array(items))) if items.is_empty() && e.optional => {
                tap(c, &format!("button[data-none=\"{path}\"]")).await;
            }
            (EntryKind::List, Some(Value::Array(items))) => {
                let shown = e.min.unwrap_or(0).max(0) as usize;
                assert!(items.len() >= shown, "{path}: {} items, fewer than the {shown} shown", items.len());
                for _ in shown..items.len() {
                    tap(c, &format!("button[data-add=\"{path}\"]")).await;
                }
                for (i, item) in items.iter().enumerate() {
                    let mut rest = item.clone();
                    for ch in &e.choose {
                        let v = take(&mut rest, &ch.field);
                        choose(c, ch, &format!("{path}/{i}/{}", ch.field), v.as_ref()).await;
                    }
                    for f in &e.items {
                        let at =
                            if f.field.is_empty() { format!("{path}/{i}") } else { format!("{path}/{i}/{}", f.field) };
                        let v = if f.field.is_empty() { Some(item.clone()) } else { take(&mut item.clone(), &f.field) };
                        enter(c, f, &at, v.as_ref()).await;
                    }
                }
            }
            (EntryKind::Event, Some(v)) => typed(v["seq"].to_string()).await,
            (_, Some(Value::String(s))) => typed(s.clone()).await,
            (_, Some(v)) => typed(v.to_string()).await,
        }
    })
}

/// Taps and types `m`'s answers so that it builds `action` (entries'
/// values taken out first, as `Move::admits` reads a move).
async fn answer(c: &Client, m: &Move, action: &Value) {
    let mut rest = action.clone();
    let entered: Vec<Option<Value>> = m.enter.iter().map(|e| take(&mut rest, &e.field)).collect();
    let chosen: Vec<Option<Value>> = m.choose.iter().map(|ch| take(&mut rest, &ch.field)).collect();
    for (ch, v) in m.choose.iter().zip(&chosen) {
        choose(c, ch, &ch.field, v.as_ref()).await;
    }
    for (e, v) in m.enter.iter().zip(&entered) {
        enter(c, e, &e.field, v.as_ref()).await;
    }
}

/// The page fits the phone's width: nothing scrolls sideways.
async fn fits(c: &Client, what: &str) {
    let widths = js(c, "return [document.documentElement.scrollWidth, window.innerWidth, window.innerHeight]").await;
    assert_eq!(
        (widths[1].as_u64(), widths[2].as_u64()),
        (Some(WIDTH.into()), Some(HEIGHT.into())),
        "{what}: a phone's viewport"
    );
    assert!(widths[0].as_u64() <= widths[1].as_u64(), "{what}: the page scrolls sideways: {widths}");
}

/// (seq, actor, action) of each event of an export.
fn export(s: &Served, game: &str) -> Vec<(u64, String, Value)> {
    let (status, _, text) = s.get_text(&format!("/api/games/{game}/export"), Some(&s.organiser));
    assert_eq!(status, 200, "{text}");
    text.lines()
        .map(|l| {
            let e: Value = serde_json::from_str(l).unwrap();
            (e["seq"].as_u64().unwrap(), e["actor"].as_str().unwrap().to_string(), e["action"].clone())
        })
        .collect()
}

/// The phone an actor records on: one per seat id, one for any judge.
fn phone_of(header: &Value, actor: &str) -> String {
    let judge = header["judges"].as_array().is_some_and(|j| j.iter().any(|n| n == actor));
    if judge { "judge".into() } else { actor.into() }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_sample_is_recorded_again_by_tapping_on_phones() {
    if !common::has(common::Need::Chromium) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(&dir.path().join("store"));
    let shots = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let mut phones: Vec<(String, Phone)> = vec![];
    let started = Instant::now();
    for kind in arbiter::rules::Kind::ALL {
        let r = kind.name();
        let took = Instant::now();
        // The sample as `demo` records it, and a game with the same header
        // (a fork at event 0) to record it again on the phones.
        let reference = format!("{r}-sample");
        let out = Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .env("ARBITER_SERVER", &s.url)
            .env("ARBITER_TOKEN", &s.organiser)
            .args(["demo", "--ruleset", r, "--as", &reference])
            .output()
            .unwrap();
        assert!(out.status.success(), "{r}: {}", String::from_utf8_lossy(&out.stderr));
        let (status, v) =
            s.post(&format!("/api/games/{reference}/fork"), Some(&s.organiser), &json!({"at": 0, "name": r}));
        assert_eq!(status, 201, "{v}");

        let lines = sample_lines(r);
        let header = lines[0].1.clone();
        let mut signed: Vec<String> = vec![];
        for (actor, _) in &lines[1..] {
            let key = phone_of(&header, actor);
            if signed.contains(&key) {
                continue;
            }
            let role = if key == "judge" { "judge" } else { "seat" };
            let token = s.token(r, role, actor);
            if !phones.iter().any(|(k, _)| *k == key) {
                phones.push((key.clone(), phone().await));
            }
            let p = &phones.iter().find(|(k, _)| *k == key).unwrap().1;
            sign_in(&p.c, &s.url, r, &token, 0).await;
            assert_eq!(js(&p.c, "return document.body.dataset.me").await, json!(actor), "{r}: signed in as {actor}");
            signed.push(key);
        }
        let page = |actor: &str| &phones.iter().find(|(k, _)| *k == phone_of(&header, actor)).unwrap().1.c;

        let mut sim = Sim::open(header.clone());
        let middle = lines.len() / 2;
        for (seq, (actor, action)) in lines.iter().enumerate().skip(1) {
            let seq = seq as u64;
            let c = page(actor);
            // The actor's page has followed the game to the event before.
            wait_seq(c, seq - 1).await;
            let mine: Vec<Move> = sim.table.moves(seq).into_iter().filter(|m| m.seat == *actor).collect();
            let Some(i) = mine.iter().position(|m| m.admits(action).is_ok()) else {
                panic!("{r} seq {seq}: no move of {actor} admits {action}");
            };
            let button = format!("#mine button.move[data-index=\"{i}\"]");
            let kind = c.find(Locator::Css(&button)).await.unwrap().attr("data-move").await.unwrap();
            assert_eq!(kind.as_deref(), Some(mine[i].kind.name()), "{r} seq {seq}: data-move is the move's type");
            tap(c, &button).await;
            answer(c, &mine[i], action).await;
            let why = text(c, "#why").await;
            assert!(why.is_empty(), "{r} seq {seq}: the page still asks for something: {why}");
            if seq as usize == middle {
                // Mid-combat: the acting seat's page, its move filled in;
                // another seat's page says whom it waits for, by name.
                fits(c, r).await;
                js(c, "window.scrollTo(0, 0)").await;
                std::fs::write(shots.join(format!("{r}-table.png")), c.screenshot().await.unwrap()).unwrap();
                let view = sim.table.view();
                for (key, p) in phones.iter().filter(|(k, _)| signed.contains(k) && *k != phone_of(&header, actor)) {
                    let me = js(&p.c, "return document.body.dataset.me").await;
                    if view.may_act.iter().any(|a| json!(a) == me) || view.awaiting_ruling.is_some() {
                        continue;
                    }
                    let names: Vec<String> = view.may_act.iter().map(|a| header_name(&header, a)).collect();
                    let status = text(&p.c, "#status").await;
                    assert_eq!(status, format!("Waiting for {}", names.join(", ")), "{r}: {key}'s page");
                    fits(&p.c, r).await;
                }
            }
            tap(c, "#record").await;
            wait_seq(c, seq).await;
            let said = text(c, "#notice").await;
            assert!(said.starts_with(&format!("seq {seq} recorded")), "{r} seq {seq}: {said}");
            sim.act(actor, action.clone());
        }
        assert_eq!(
            export(&s, r),
            export(&s, &reference),
            "{r}: the game recorded on the table pages differs from the sample"
        );
        eprintln!("{r}: {} events recorded by tapping in {:.1?}", lines.len() - 1, took.elapsed());
    }
    eprintln!("five samples in {:.1?}", started.elapsed());
    for (_, p) in phones {
        p.c.close().await.unwrap();
    }
}

/// "Name (id)" of a seat, a judge's name as it is: as the page names them.
fn header_name(header: &Value, id: &str) -> String {
    let seats = header["seats"].as_array().unwrap();
    match seats.iter().find(|s| s["id"] == id) {
        Some(seat) => format!("{} ({id})", seat["name"].as_str().unwrap()),
        None => id.to_string(),
    }
}

/// Opens the seat's note move and types what it is about and its words.
async fn write_note(c: &Client, concerns: u64, words: &str) {
    let note =
        js(c, "return [...document.querySelectorAll('#other button[data-move=note]')].map(b => b.dataset.index)").await;
    tap(c, &format!("#other button[data-index=\"{}\"]", note[0].as_str().unwrap())).await;
    c.find(Locator::Css("input[data-field=\"concerns\"]"))
        .await
        .unwrap()
        .send_keys(&concerns.to_string())
        .await
        .unwrap();
    c.find(Locator::Css("input[data-field=\"text\"]")).await.unwrap().send_keys(words).await.unwrap();
}

/// With the server down, taps "Record": the action is kept ("not sent
/// yet"); the server started again (returned), it is sent and recorded as
/// seq `seq`, its notice starting with `label`.
async fn record_while_down(
    c: &Client,
    data: &std::path::Path,
    listen: &str,
    seq: u64,
    label: &str,
) -> std::process::Child {
    tap(c, "#record").await;
    // "sending" is `pending` too: wait for the words of one kept.
    let kept = "return document.body.dataset.notice === 'pending' && document.getElementById('notice').textContent.startsWith('not sent yet')";
    wait_for(c, kept, json!(true)).await;
    let said = text(c, "#notice").await;
    assert!(said.starts_with(&format!("not sent yet (the connection to the server is lost): {label}")), "{said}");
    let child = serve_at(data, listen);
    wait_seq(c, seq).await;
    let said = text(c, "#notice").await;
    assert!(said.starts_with(&format!("seq {seq} recorded: {label}")), "{said}");
    child
}

/// Two seats tap "Record" at once: one event is stored, and the other
/// seat's page says who recorded first and that nothing of its own was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_seats_tapping_at_once_store_one_event_and_the_other_is_told() {
    if !common::has(common::Need::Chromium) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(&dir.path().join("store"));
    s.doomtrooper("g", "token");
    let p1 = s.token("g", "seat", "p1");
    let p2 = s.token("g", "seat", "p2");
    assert_eq!(s.append("g", &p1, "p1", combat("p2", "Max", "Leg"), 1).0, 201);
    let (ann, ben) = (phone().await, phone().await);
    sign_in(&ann.c, &s.url, "g", &p1, 1).await;
    sign_in(&ben.c, &s.url, "g", &p2, 1).await;
    // Ann is to act (the battle tactic); Ben's page says so, by name.
    assert_eq!(text(&ann.c, "#status").await, "Your move");
    assert_eq!(text(&ben.c, "#status").await, "Waiting for Ann (p1)");
    // Both write a note about event 1 (a note is open to every seat at any time).
    for (p, words) in [(&ann, "Ann's note"), (&ben, "Ben's note")] {
        write_note(&p.c, 1, words).await;
    }
    let (a, b) =
        (ann.c.find(Locator::Css("#record")).await.unwrap(), ben.c.find(Locator::Css("#record")).await.unwrap());
    let (x, y) = tokio::join!(a.click(), b.click());
    x.unwrap();
    y.unwrap();
    wait_seq(&ann.c, 2).await;
    wait_seq(&ben.c, 2).await;
    assert_eq!(s.head("g")["seq"], 2, "one event stored of the two");
    let export = export(&s, "g");
    let (winner, loser) = if export[2].1 == "p1" { (&ann, &ben) } else { (&ben, &ann) };
    let won = text(&winner.c, "#notice").await;
    assert!(won.starts_with("seq 2 recorded: note"), "{won}");
    let lost = text(&loser.c, "#notice").await;
    let first = if export[2].1 == "p1" { "Ann (p1)" } else { "Ben (p2)" };
    assert!(
        lost.starts_with(&format!("{first} recorded “note: concerns seq 1 · text"))
            && lost.contains("first (seq 2): nothing of yours was stored"),
        "{lost}"
    );
    assert_eq!(js(&loser.c, "return document.body.dataset.notice").await, json!("conflict"));
    // The loser's page shows its moves after the new event, and records.
    assert!(js(&loser.c, "return document.getElementById('composer').textContent").await == json!(""));
    ann.c.close().await.unwrap();
    ben.c.close().await.unwrap();
}

/// The server stops under an open page and starts again: the page catches
/// up with what was recorded meanwhile, and an action tapped while the
/// server was down is kept and stored once when it is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_whose_server_restarts_catches_up_and_still_records() {
    if !common::has(common::Need::Chromium) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("store");
    let mut s = Served::start(&data);
    s.doomtrooper("g", "public");
    let p1 = s.token("g", "seat", "p1");
    let p2 = s.token("g", "seat", "p2");
    let ann = phone().await;
    sign_in(&ann.c, &s.url, "g", &p1, 0).await;
    wait_for(&ann.c, "return document.getElementById('live').textContent", json!("live")).await;
    let listen = s.url.strip_prefix("http://").unwrap().to_string();

    // Down: the page says so. Up again, with an event recorded meanwhile
    // by another client: the page catches up.
    assert!(s.stop().success());
    wait_for(&ann.c, "return document.getElementById('live').textContent", json!("reconnecting…")).await;
    let mut child = serve_at(&data, &listen);
    assert_eq!(s.append("g", &p1, "p1", combat("p2", "Max", "Leg"), 1).0, 201);
    wait_seq(&ann.c, 1).await;
    wait_for(&ann.c, "return document.getElementById('live').textContent", json!("live")).await;
    assert_eq!(text(&ann.c, "#status").await, "Your move");

    // Ann picks the battle tactic; the server goes down before she taps Record.
    let tactic =
        js(&ann.c, "return [...document.querySelectorAll('#moves button')].map(b => [b.dataset.index, b.textContent])")
            .await;
    let announce = tactic
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b[1].as_str().unwrap().contains("battle tactic"))
        .unwrap_or_else(|| panic!("{tactic}"));
    tap(&ann.c, &format!("#moves button[data-index=\"{}\"]", announce[0].as_str().unwrap())).await;
    ann.c.find(Locator::Css("input[data-field=\"tactic\"]")).await.unwrap().send_keys("Fight").await.unwrap();
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    assert!(child.wait().unwrap().success());
    // Back up: the kept action is sent again and stored once.
    let mut child = record_while_down(&ann.c, &data, &listen, 2, "announce battle tactic").await;
    assert_eq!(s.head("g")["seq"], 2, "stored once");
    assert_eq!(export(&s, "g")[2].2, json!({"type": "announce", "what": "battle_tactic", "tactic": "Fight"}));
    assert_eq!(s.append("g", &p2, "p2", json!({"type": "pass"}), 3).0, 201);
    wait_seq(&ann.c, 3).await;
    let _ = child.kill();
    let _ = child.wait();
    ann.c.close().await.unwrap();
}

/// A seat's note about an event, tapped while the server is down: the
/// event's hash is read when the note is sent, not before it is kept, so
/// the note is sent once the server is back, and stored once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_note_about_an_event_tapped_while_the_server_is_down_is_stored_once_when_it_is_back() {
    if !common::has(common::Need::Chromium) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("store");
    let mut s = Served::start(&data);
    s.doomtrooper("g", "public");
    let p1 = s.token("g", "seat", "p1");
    assert_eq!(s.append("g", &p1, "p1", combat("p2", "Max", "Leg"), 1).0, 201);
    let hash1 = s.stored("g")[1].1.clone();
    let listen = s.url.strip_prefix("http://").unwrap().to_string();
    let ann = phone().await;
    sign_in(&ann.c, &s.url, "g", &p1, 1).await;
    write_note(&ann.c, 1, "Leg was tapped").await;
    assert!(s.stop().success());
    let mut child = record_while_down(&ann.c, &data, &listen, 2, "note").await;
    assert_eq!(s.head("g")["seq"], 2, "stored once");
    assert_eq!(
        export(&s, "g")[2],
        (2, "p1".to_string(), json!({"type": "note", "concerns": {"seq": 1, "hash": hash1}, "text": "Leg was tapped"}))
    );
    let _ = child.kill();
    let _ = child.wait();
    ann.c.close().await.unwrap();
}

/// Taps move `m` of `actor` (found among the moves of `sim` as the one
/// that admits `action`), answers it, records it, and waits for `seq`.
async fn record_move(c: &Client, sim: &Sim, actor: &str, action: &Value, seq: u64) {
    let mine: Vec<Move> = sim.table.moves(seq).into_iter().filter(|m| m.seat == actor).collect();
    let i = mine.iter().position(|m| m.admits(action).is_ok()).unwrap_or_else(|| panic!("no move admits {action}"));
    tap(c, &format!("#mine button.move[data-index=\"{i}\"]")).await;
    answer(c, &mine[i], action).await;
    tap(c, "#record").await;
    wait_seq(c, seq).await;
}

/// A judge rules from the table page: the judge's moves are buttons like
/// a seat's (a decision while the game waits for one, a penalty, a
/// rewind); a seat calls a judge with one button.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_decides_penalises_and_rewinds_and_a_seat_calls_a_judge() {
    if !common::has(common::Need::Chromium) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(&dir.path().join("store"));
    let lines = sample_lines("wtactics");
    let (status, v) =
        s.post("/api/games", Some(&s.organiser), &json!({"name": "w", "header": lines[0].1, "read": "public"}));
    assert_eq!(status, 201, "{v}");
    let tokens: Vec<(String, String)> = ["p1", "p2"].iter().map(|p| (p.to_string(), s.token("w", "seat", p))).collect();
    let dana = s.token("w", "judge", "Dana");
    // The sample up to where WTactics waits for a judge (several defenders).
    let mut sim = recorded_through_the_api(&s, "w", &tokens, &lines[..13]);
    let (judge, alice) = (phone().await, phone().await);
    sign_in(&judge.c, &s.url, "w", &dana, 12).await;
    sign_in(&alice.c, &s.url, "w", &tokens[0].1, 12).await;
    let waiting = "Troll has several defenders; the text does not say how several defenders strike or are struck";
    assert_eq!(text(&alice.c, "#status").await, format!("Waiting for a judge: {waiting}"));
    assert_eq!(text(&judge.c, "#status").await, format!("Your ruling: {waiting}"));
    assert_eq!(text(&judge.c, "#me").await, "you: judge Dana");
    // The judge's moves, as buttons like any other.
    let labels = js(
        &judge.c,
        "return [...document.querySelectorAll('#mine button.move')].map(b => b.dataset.move + ' ' + b.textContent)",
    )
    .await;
    let labels: Vec<&str> = labels.as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    for want in ["ruling rewind", "ruling penalty", "ruling add judge", "note note"] {
        assert!(labels.contains(&want), "{want} in {labels:?}");
    }
    assert!(labels.iter().any(|l| l.starts_with("ruling decide: ")), "{labels:?}");
    assert!(
        js(&judge.c, "return document.getElementById('call').hidden").await == json!(true),
        "a judge calls no judge"
    );
    let hash = |seq: usize| s.stored("w")[seq].1.clone();

    // Decide: the sample's own resolution, as the judge's decision.
    let decision = lines[13].1.clone();
    let decide = |h: String| {
        json!({"type": "ruling", "kind": "decide", "concerns": {"seq": 12, "hash": h},
        "reason": "each defender strikes the Troll in turn", "decision": decision})
    };
    record_move(&judge.c, &sim, "Dana", &decide(sim.events[12].hash.clone()), 13).await;
    sim.act("Dana", decide(sim.events[12].hash.clone()));
    assert_eq!(export(&s, "w")[13].2, decide(hash(12)));
    wait_seq(&alice.c, 13).await;

    // Alice calls a judge: a note about the last event, with what happened.
    assert_eq!(text(&alice.c, "#call").await, "Call a judge");
    tap(&alice.c, "#call").await;
    alice
        .c
        .find(Locator::Css("input[data-field=\"text\"]"))
        .await
        .unwrap()
        .send_keys("Bloodlust was not counted")
        .await
        .unwrap();
    tap(&alice.c, "#record").await;
    wait_seq(&alice.c, 14).await;
    let call = json!({"type": "note", "concerns": {"seq": 13, "hash": hash(13)}, "text": "call a judge: Bloodlust was not counted"});
    assert_eq!(export(&s, "w")[14], (14, "p1".to_string(), call));
    assert!(arbiter::adjudication::is_call("call a judge: Bloodlust was not counted"));
    sim.act("p1", json!({"type": "note", "concerns": {"seq": 13, "hash": sim.events[13].hash}, "text": "call a judge: Bloodlust was not counted"}));
    wait_seq(&judge.c, 14).await;
    let standing = text(&judge.c, "#adjudication").await;
    assert!(
        standing.contains("note (seq 14, about seq 13) by Alice (p1): call a judge: Bloodlust was not counted"),
        "{standing}"
    );

    // A penalty, then a rewind to before the decision.
    let penalty = |h: String| {
        json!({"type": "ruling", "kind": "penalty", "concerns": {"seq": 13, "hash": h}, "seat": "p1",
        "infraction": "slow play", "penalty": "warning", "fix": "none", "reason": "the round clock"})
    };
    record_move(&judge.c, &sim, "Dana", &penalty(sim.events[13].hash.clone()), 15).await;
    sim.act("Dana", penalty(sim.events[13].hash.clone()));
    let rewind = |h: String| {
        json!({"type": "ruling", "kind": "rewind", "concerns": {"seq": 12, "hash": h},
        "reason": "Bloodlust was not counted"})
    };
    record_move(&judge.c, &sim, "Dana", &rewind(sim.events[12].hash.clone()), 16).await;
    let recorded = export(&s, "w");
    assert_eq!((recorded[15].2.clone(), recorded[16].2.clone()), (penalty(hash(13)), rewind(hash(12))));
    // Alice's page is back where the game waits for the judge.
    wait_seq(&alice.c, 16).await;
    assert_eq!(text(&alice.c, "#status").await, format!("Waiting for a judge: {waiting}"));
    fits(&alice.c, "wtactics").await;
    fits(&judge.c, "wtactics").await;
    judge.c.close().await.unwrap();
    alice.c.close().await.unwrap();
}

/// A value the rules refuse (the dead of a combat, against the ATK and DEF
/// typed): the page shows the rule's own words and what the seat may do,
/// nothing is stored, and the move stays open to be put right.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_shows_the_rule_and_changes_nothing() {
    if !common::has(common::Need::Chromium) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(&dir.path().join("store"));
    let lines = sample_lines("wtactics");
    let (status, v) =
        s.post("/api/games", Some(&s.organiser), &json!({"name": "w", "header": lines[0].1, "read": "public"}));
    assert_eq!(status, 201, "{v}");
    let tokens: Vec<(String, String)> = ["p1", "p2"].iter().map(|p| (p.to_string(), s.token("w", "seat", p))).collect();
    let sim = recorded_through_the_api(&s, "w", &tokens, &lines[..10]);
    let alice = phone().await;
    sign_in(&alice.c, &s.url, "w", &tokens[0].1, 9).await;
    // The sample's resolution with the wrong creature dead.
    let right = lines[10].1.clone();
    let mut wrong = right.clone();
    wrong["dead"] = json!(["Knight"]);
    let mine: Vec<Move> = sim.table.moves(10).into_iter().filter(|m| m.seat == "p1").collect();
    let i = mine.iter().position(|m| m.admits(&wrong).is_ok()).unwrap();
    tap(&alice.c, &format!("#mine button.move[data-index=\"{i}\"]")).await;
    answer(&alice.c, &mine[i], &wrong).await;
    tap(&alice.c, "#record").await;
    wait_for(&alice.c, "return document.body.dataset.notice", json!("refused")).await;
    let said = text(&alice.c, "#notice").await;
    assert_eq!(
        said,
        "refused: ATK 3 against DEF 4, and ATK 2 against DEF 2: the dead are {\"Orc Raider\"}, not {\"Knight\"}\n\
         rule: IV: Attacker ATK higher than Defender DEF: the Defender dies; Defender ATK equal to or higher than Attacker DEF: the Attacker dies\n\
         you may: resolve combat Orc Raider (attacker) / Knight (defender)\n\
         nothing was stored"
    );
    assert_eq!(s.head("w")["seq"], 9, "nothing was stored");
    // Put right on the same form: Knight out, Orc Raider in.
    let dead = mine[i].choose.iter().find(|c| c.field == "dead").unwrap();
    let option = |name: &str| dead.options.iter().position(|o| o.value == name).unwrap();
    tap(&alice.c, &format!("[data-choice=\"dead\"] button[data-option=\"{}\"]", option("Knight"))).await;
    tap(&alice.c, &format!("[data-choice=\"dead\"] button[data-option=\"{}\"]", option("Orc Raider"))).await;
    tap(&alice.c, "#record").await;
    wait_seq(&alice.c, 10).await;
    assert_eq!(export(&s, "w")[10].2, right);
    alice.c.close().await.unwrap();
}

/// `lines` (the header first) appended to `game` through the API, each by
/// its seat's token, and folded beside it.
fn recorded_through_the_api(s: &Served, game: &str, tokens: &[(String, String)], lines: &[(String, Value)]) -> Sim {
    let mut sim = Sim::open(lines[0].1.clone());
    for (seq, (actor, action)) in lines.iter().enumerate().skip(1) {
        let token = &tokens.iter().find(|(p, _)| p == actor).unwrap().1;
        assert_eq!(s.append(game, token, actor, action.clone(), seq as u64).0, 201);
        sim.act(actor, action.clone());
    }
    sim
}
