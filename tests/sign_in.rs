//! Signing in at a table: `arbiter token` prints each seat's and judge's
//! link (the token in its fragment) and QR code, `--all-seats` a sheet for
//! a round, the issuing API answers the link and the code as SVG, and a
//! browser that opens the link is signed in. Every code is decoded (rqrr)
//! and must read as its link.

mod common;

use std::path::Path;
use std::process::Output;

use common::browser::{browser, wait_for};
use common::server::Served;
use common::*;
use serde_json::{Value, json};

fn new_game(data: &Path) {
    let out = arbiter(
        data,
        &[
            "new",
            "g",
            "--ruleset",
            "doomtrooper",
            "--seat",
            "p1=Alice",
            "--seat",
            "p2=Bob <B>",
            "--judge",
            "Dana",
            "--tournament",
            "Open",
            "--round",
            "3",
            "--table",
            "12",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

fn ok(out: &Output) -> (String, String) {
    assert!(out.status.success(), "{}", text(&out.stderr));
    (text(&out.stdout), text(&out.stderr))
}

/// Modules as pixels, 4 to a module, dark 0 and light 255, read by rqrr:
/// the one text it finds.
fn decode(rows: &[Vec<bool>]) -> String {
    const SCALE: usize = 4;
    let side = rows.len() * SCALE;
    let mut img = rqrr::PreparedImage::prepare_from_greyscale(side, side, |x, y| match rows[y / SCALE][x / SCALE] {
        true => 0,
        false => 255,
    });
    let grids = img.detect_grids();
    assert_eq!(grids.len(), 1, "one code");
    grids[0].decode().expect("the code decodes").1
}

/// The codes drawn in half blocks in `out`, in order: each is a run of
/// lines made only of ' ', '▀', '▄' and '█' holding at least one block.
fn text_codes(out: &str) -> Vec<Vec<Vec<bool>>> {
    let is_code = |l: &str| !l.is_empty() && l.chars().all(|c| " \u{2580}\u{2584}\u{2588}".contains(c));
    let mut codes = Vec::new();
    let mut rows: Vec<Vec<bool>> = Vec::new();
    for line in out.lines().chain([""]) {
        if is_code(line) {
            let (top, bottom): (Vec<bool>, Vec<bool>) = line
                .chars()
                .map(|c| match c {
                    '\u{2580}' => (true, false),
                    '\u{2584}' => (false, true),
                    '\u{2588}' => (true, true),
                    _ => (false, false),
                })
                .unzip();
            rows.push(top);
            rows.push(bottom);
        } else if rows.iter().flatten().any(|d| *d) {
            // An odd number of rows of modules leaves the last line's bottom half empty.
            let width = rows[0].len();
            rows.truncate(width);
            codes.push(std::mem::take(&mut rows));
        } else {
            rows.clear();
        }
    }
    codes
}

/// The modules an SVG from `qr_svg` draws: `M{x} {y}h{w}v1H{x}z` per run
/// of dark modules in a `viewBox="0 0 N N"`.
fn svg_modules(svg: &str) -> Vec<Vec<bool>> {
    let n: usize = svg.split("viewBox=\"0 0 ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    let mut rows = vec![vec![false; n]; n];
    let path = svg.split(" d=\"").nth(1).unwrap().split('"').next().unwrap();
    for run in path.split('M').skip(1) {
        let (x, rest) = run.split_once(' ').unwrap();
        let (y, rest) = rest.split_once('h').unwrap();
        let w = rest.split('v').next().unwrap();
        let (x, y, w): (usize, usize, usize) = (x.parse().unwrap(), y.parse().unwrap(), w.parse().unwrap());
        rows[y][x..x + w].fill(true);
    }
    rows
}

fn token_list(data: &Path) -> Vec<Value> {
    let (out, _) = ok(&arbiter(data, &["--json", "token", "list", "g"]));
    serde_json::from_str::<Value>(&out).unwrap()["tokens"].as_array().unwrap().clone()
}

#[test]
fn a_seats_token_prints_its_link_and_a_code_that_reads_as_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    new_game(d);
    // The token alone on stdout, as before; the link and the code for people on stderr.
    let (token, said) = ok(&arbiter(d, &["token", "g", "--seat", "p1"]));
    let token = token.trim();
    assert_eq!(token.len(), 64, "{token}");
    let link = format!("http://127.0.0.1:7878/games/g/table#token={token}");
    assert!(said.contains(&format!("link (opens the table page signed in): {link}\n")), "{said}");
    assert!(said.contains("only this machine reaches"), "a loopback base is pointed out: {said}");
    let codes = text_codes(&said);
    assert_eq!(codes.len(), 1, "{said}");
    assert_eq!(decode(&codes[0]), link);

    // --url: where the phones reach the server; JSON keeps its fields and adds link and qr_svg.
    let (out, said) = ok(&arbiter(d, &["--json", "token", "g", "--judge", "Dana", "--url", "http://10.0.0.5:7878/"]));
    let v: Value = serde_json::from_str(&out).unwrap();
    let token = v["token"].as_str().unwrap();
    let link = format!("http://10.0.0.5:7878/games/g/table#token={token}");
    assert_eq!(v["link"], json!(link));
    assert!(!link.contains('?'), "the token is in the fragment, never the query");
    assert_eq!(decode(&svg_modules(v["qr_svg"].as_str().unwrap())), link);
    for field in ["id", "issued", "expires", "state"] {
        assert!(v[field].is_string(), "{field} in {v}");
    }
    assert_eq!(v["grant"], json!({"role": "judge", "game": "g", "judge": "Dana"}));
    assert_eq!(said, "", "--json says nothing else");

    // One seat's card alone, as a sheet.
    let one = d.join("one.html");
    let (token, _) = ok(&arbiter(d, &["token", "g", "--seat", "p2", "--sheet", one.to_str().unwrap()]));
    let html = std::fs::read_to_string(&one).unwrap();
    assert_eq!(html.matches("<svg ").count(), 1);
    assert!(
        html.contains("<h2>Bob &lt;B&gt;</h2>") && html.contains("<p>seat p2 · Open, round 3, table 12 (game g)</p>")
    );
    assert!(
        html.contains(&format!("<p class=\"link\">http://127.0.0.1:7878/games/g/table#token={}</p>", token.trim()))
    );
}

#[test]
fn all_seats_gives_every_seat_and_judge_a_fresh_token_on_one_sheet() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    new_game(d);
    // A judge added by a ruling is on the sheet too.
    ok(&arbiter(d, &["add-judge", "g", "--judge", "Dana", "--name", "Eve", "--reason", "shift change"]));
    let (old, _) = ok(&arbiter(d, &["token", "g", "--seat", "p1"]));
    let sheet = d.join("round3.html");
    let args = ["token", "g", "--all-seats", "--url", "http://10.0.0.5:7878", "--sheet", sheet.to_str().unwrap()];
    let (out, said) = ok(&arbiter(d, &args));
    assert!(said.contains("wrote the sheet to") && !said.contains("only this machine"), "{said}");
    assert!(out.starts_with("Open, round 3, table 12 (game g): 4 sign-in code(s)\n"), "{out}");
    // Every seat and judge by name and role, each with its link and a code that reads as it.
    let who = ["Alice, seat p1", "Bob <B>, seat p2", "Dana, judge", "Eve, judge"];
    let links: Vec<&str> = out.lines().filter(|l| l.starts_with("http://")).collect();
    assert_eq!(links.len(), 4, "{out}");
    let codes = text_codes(&out);
    assert_eq!(codes.len(), 4);
    for (i, name) in who.iter().enumerate() {
        assert!(out.contains(&format!("\n{name} (expires ")), "{name} in {out}");
        assert!(links[i].starts_with("http://10.0.0.5:7878/games/g/table#token="), "{}", links[i]);
        assert_eq!(decode(&codes[i]), links[i]);
    }
    // Fresh tokens: none is the one issued before, which stays active beside them.
    let listed = token_list(d);
    assert_eq!(listed.len(), 5);
    assert!(listed.iter().all(|t| t["state"] == "active"));
    assert!(!out.contains(old.trim()), "a stored token is never printed again");
    let granted: Vec<String> =
        listed.iter().map(|t| t["seat"].as_str().or(t["judge"].as_str()).unwrap().to_string()).collect();
    assert_eq!(granted.iter().filter(|g| *g == "p1").count(), 2, "{granted:?}");

    // The sheet: one code per card, each reading as its link, names escaped, nothing loaded from elsewhere.
    let html = std::fs::read_to_string(&sheet).unwrap();
    assert!(html.contains("@page { size: A4"));
    assert!(html.contains("<h2>Bob &lt;B&gt;</h2>") && !html.contains("<B>"));
    let svgs: Vec<&str> = html.split("<svg ").skip(1).collect();
    assert_eq!(svgs.len(), 4);
    for (svg, link) in svgs.iter().zip(&links) {
        assert_eq!(decode(&svg_modules(svg)), *link);
        assert!(html.contains(&format!("<p class=\"link\">{link}</p>")));
    }
    assert!(!html.contains("src=") && !html.contains("href=") && !html.contains("<script"));

    // --json: every token with its name, link and code.
    let (out, _) = ok(&arbiter(d, &["--json", "token", "g", "--all-seats"]));
    let v: Value = serde_json::from_str(&out).unwrap();
    let tokens = v["tokens"].as_array().unwrap();
    let names: Vec<&str> = tokens.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Alice", "Bob <B>", "Dana", "Eve"]);
    for t in tokens {
        let link = format!("http://127.0.0.1:7878/games/g/table#token={}", t["token"].as_str().unwrap());
        assert_eq!(t["link"], json!(link));
        assert_eq!(decode(&svg_modules(t["qr_svg"].as_str().unwrap())), link);
    }
    assert_eq!(token_list(d).len(), 9);
}

#[test]
fn a_bad_base_or_sheet_is_refused_with_exit_2_and_issues_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    new_game(d);
    for (args, says) in [
        (vec!["token", "g", "--seat", "p1", "--url", "127.0.0.1:7878"], "no http:// or https://"),
        (vec!["token", "g", "--all-seats", "--url", "ftp://10.0.0.5"], "only http and https"),
        (vec!["token", "g", "--all-seats", "--url", "http://10.0.0.5:7878/?x=1"], "a query or fragment"),
        (vec!["token", "g", "--seat", "p1", "--url", "http://admin:pw@10.0.0.5"], "no user or password"),
        (vec!["token", "g", "--seat", "p1", "--url", "http://10.0.0.5:99999"], "port"),
        (vec!["token", "g", "--all-seats", "--sheet", "/nonexistent/dir/sheet.html"], "cannot write the sheet"),
        (vec!["token", "g", "--all-seats", "--seat", "p1"], "cannot be used with"),
        (vec!["token", "g", "--seat", "p9"], "error: bad input: \"p9\" is not a seat of g\n"),
        (vec!["token", "g", "--all-seats", "--expires", "soon"], "error: bad input: expires is"),
        (vec!["token", "--organiser", "--url", "http://10.0.0.5"], "cannot be used with"),
    ] {
        let out = arbiter(d, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(says), "{args:?} said: {}", text(&out.stderr));
        assert_eq!(out.stdout, b"", "{args:?}");
    }
    // A sheet whose tokens could not be issued leaves the file as it was, and nothing beside it.
    let sheets = tempfile::tempdir().unwrap();
    let kept = sheets.path().join("kept.html");
    std::fs::write(&kept, "the last round's sheet").unwrap();
    let out = arbiter(d, &["token", "g", "--seat", "p9", "--sheet", kept.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "the last round's sheet");
    let there: Vec<_> = std::fs::read_dir(sheets.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(there, ["kept.html"]);
    // An unknown game: nothing issued either.
    let out = arbiter(d, &["token", "nope", "--all-seats"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(token_list(d).is_empty(), "nothing was issued");
}

/// The issuing API answers the link (from the Host it was reached at) and
/// the code as SVG; `arbiter --server URL token` links start with URL, or
/// with --url.
#[test]
fn the_issuing_api_answers_the_link_and_its_code() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(&dir.path().join("store"));
    s.doomtrooper("g", "token");
    let (status, v) = s.post("/api/games/g/tokens", Some(&s.organiser), &json!({"seat": "p1"}));
    assert_eq!(status, 201, "{v}");
    let link = format!("{}/games/g/table#token={}", s.url, v["token"].as_str().unwrap());
    assert_eq!(v["link"], json!(link), "{v}");
    assert_eq!(decode(&svg_modules(v["qr_svg"].as_str().unwrap())), link);
    assert_eq!(v["grant"], json!({"role": "seat", "game": "g", "seat": "p1"}));

    let remote = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .env_remove("ARBITER_DATA")
            .env("ARBITER_SERVER", format!("{}/", s.url))
            .env("ARBITER_TOKEN", &s.organiser)
            .args(args)
            .output()
            .unwrap();
        ok(&out)
    };
    let (out, _) = remote(&["--json", "token", "g", "--judge", "Dana"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["link"], json!(format!("{}/games/g/table#token={}", s.url, v["token"].as_str().unwrap())));
    let (out, _) = remote(&["--json", "token", "g", "--all-seats", "--url", "https://arbiter.example/open"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let tokens = v["tokens"].as_array().unwrap();
    assert_eq!(tokens.len(), 3, "two seats and a judge: {v}");
    for t in tokens {
        let link = format!("https://arbiter.example/open/games/g/table#token={}", t["token"].as_str().unwrap());
        assert_eq!(t["link"], json!(link));
        assert_eq!(decode(&svg_modules(t["qr_svg"].as_str().unwrap())), link);
        // Each works on the server.
        assert_eq!(s.get("/api/games/g", t["token"].as_str()).0, 200);
    }
}

/// In a real browser: the link printed by `arbiter token` opens the table
/// page, which trades the token for the HttpOnly cookie and drops the
/// fragment from the address; the page then appends as its seat through
/// the API with the cookie alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opening_the_link_signs_the_seat_in() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(&dir.path().join("store"));
    s.doomtrooper("g", "token");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .env_remove("ARBITER_DATA")
        .env("ARBITER_SERVER", &s.url)
        .env("ARBITER_TOKEN", &s.organiser)
        .args(["token", "g", "--seat", "p1"])
        .output()
        .unwrap();
    let (token, said) = ok(&out);
    let link = said.lines().find_map(|l| l.strip_prefix("link (opens the table page signed in): ")).unwrap();
    assert_eq!(link, format!("{}/games/g/table#token={}", s.url, token.trim()));

    if !common::has(common::Need::Chromium) {
        return;
    }
    let (_driver, c) = browser(&dir.path().join("profile")).await;
    c.goto(link).await.unwrap();
    // Still on the table page; the token is gone from the address.
    let address = "return [location.pathname, location.hash, location.href.includes('token')]";
    wait_for(&c, address, json!(["/games/g/table", "", false])).await;
    // The cookie is set, for the whole site, and no script reads it.
    let cookie = loop {
        let cookies = c.get_all_cookies().await.unwrap();
        if let Some(cookie) = cookies.into_iter().find(|k| k.name() == "arbiter_token") {
            break cookie;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!((cookie.value(), cookie.http_only(), cookie.path()), (token.trim(), Some(true), Some("/")));
    assert_eq!(c.execute("return document.cookie", vec![]).await.unwrap(), json!(""));
    // The page's own requests carry the cookie: it appends as p1, and not as p2.
    let append = r#"
        const [actor, done] = [arguments[0], arguments[arguments.length - 1]];
        fetch("/api/games/g/events", { method: "POST", headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ actor, expect_seq: 1, action: { type: "announce", what: "combat",
                defending_player: "p2", attacker: "A", defender: "D" } }) })
            .then(r => done(r.status), e => done(String(e)));
    "#;
    let as_p2 = c.execute_async(append, vec![json!("p2")]).await.unwrap();
    assert_eq!(as_p2, json!(403));
    let as_p1 = c.execute_async(append, vec![json!("p1")]).await.unwrap();
    assert_eq!(as_p1, json!(201));
    let (status, events) = s.get("/api/games/g/events?from=1", Some(&s.organiser));
    assert_eq!(status, 200, "{events}");
    let actors: Vec<&str> = events["events"].as_array().unwrap().iter().map(|e| e["actor"].as_str().unwrap()).collect();
    assert_eq!(actors, ["p1"], "{events}");
    c.close().await.unwrap();
}

/// The printed sheet as a browser draws it (a screenshot of the page in
/// headless chromium, as a printer would get it): every code on it is
/// found and reads as its seat's or judge's link.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sheet_a_browser_draws_reads_as_its_links() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    new_game(d);
    let sheet = d.join("sheet.html");
    let args =
        ["--json", "token", "g", "--all-seats", "--url", "http://10.0.0.5:7878", "--sheet", sheet.to_str().unwrap()];
    let (out, _) = ok(&arbiter(d, &args));
    let v: Value = serde_json::from_str(&out).unwrap();
    let mut links: Vec<String> =
        v["tokens"].as_array().unwrap().iter().map(|t| t["link"].as_str().unwrap().to_string()).collect();
    assert_eq!(links.len(), 3);

    if !common::has(common::Need::Chromium) {
        return;
    }
    let (_driver, c) = browser(&d.join("profile")).await;
    // A4 at 96 dpi, a little taller than the three cards.
    c.set_window_size(800, 1200).await.unwrap();
    c.goto(&format!("file://{}", sheet.display())).await.unwrap();
    let png = c.screenshot().await.unwrap();
    c.close().await.unwrap();

    let mut reader = png::Decoder::new(std::io::Cursor::new(png)).read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut pixels).unwrap();
    let (w, h) = (frame.width as usize, frame.height as usize);
    let channels = frame.line_size / w;
    // Black on white: the first channel is enough.
    let mut img = rqrr::PreparedImage::prepare_from_greyscale(w, h, |x, y| pixels[y * frame.line_size + x * channels]);
    let mut read: Vec<String> = img.detect_grids().iter().map(|g| g.decode().expect("a code decodes").1).collect();
    read.sort();
    links.sort();
    assert_eq!(read, links);
}
