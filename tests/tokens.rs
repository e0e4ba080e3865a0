//! Tokens over loopback TCP and through the CLI: listing and revoking,
//! expiry, organiser rotation, the race of two creates of one name, the
//! `Referrer-Policy` header, the pages' cookie, no token in any log line,
//! and bad input that changes nothing.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Output, Stdio};

use common::browser::{browser, wait_for};
use common::server::Served;
use common::*;
use serde_json::{Value, json};

fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("(no code)")
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder().http_status_as_error(false).build().into()
}

/// A raw request: (status, headers, body as JSON or text). `cookie` is sent
/// as the `Cookie` header, `json` as a JSON body.
fn raw(
    method: &str,
    url: &str,
    bearer: Option<&str>,
    cookie: Option<&str>,
    json: Option<&Value>,
) -> (u16, ureq::http::HeaderMap, Value) {
    let a = agent();
    let mut headers = Vec::new();
    if let Some(t) = bearer {
        headers.push(("Authorization".to_string(), format!("Bearer {t}")));
    }
    if let Some(c) = cookie {
        headers.push(("Cookie".to_string(), c.to_string()));
    }
    let resp = match method {
        "GET" | "DELETE" => {
            let mut r = if method == "GET" { a.get(url) } else { a.delete(url) };
            for (k, v) in &headers {
                r = r.header(k, v);
            }
            r.call()
        }
        _ => {
            let mut r = if method == "POST" { a.post(url) } else { a.put(url) };
            for (k, v) in &headers {
                r = r.header(k, v);
            }
            match json {
                Some(b) => r.send_json(b),
                None => r.send_empty(),
            }
        }
    };
    let mut resp = resp.unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = resp.body_mut().read_to_string().unwrap();
    (status, headers, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

fn tokens(s: &Served, game: Option<&str>) -> Value {
    let path = match game {
        Some(g) => format!("/api/tokens?game={g}"),
        None => "/api/tokens".to_string(),
    };
    let (status, v) = s.get(&path, Some(&s.organiser));
    assert_eq!(status, 200, "{v}");
    v
}

fn issue(s: &Served, game: &str, body: Value) -> (u16, Value) {
    s.post(&format!("/api/games/{game}/tokens"), Some(&s.organiser), &body)
}

fn arbiter(args: &[&str], server: Option<(&str, &str)>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_arbiter"));
    if let Some((url, token)) = server {
        cmd.env("ARBITER_SERVER", url).env("ARBITER_TOKEN", token);
    }
    cmd.env_remove("ARBITER_DATA").args(args).output().unwrap()
}

fn stdout(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).unwrap().trim().to_string()
}

#[test]
fn tokens_are_listed_without_their_secrets_and_a_revoked_one_answers_401_saying_so() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(dir.path());
    s.doomtrooper("g", "public");
    s.doomtrooper("s", "token");
    let (status, p1) = issue(&s, "s", json!({"seat": "p1"}));
    assert_eq!(status, 201, "{p1}");
    let (_, dana) = issue(&s, "s", json!({"judge": "Dana"}));
    let (_, other) = issue(&s, "g", json!({"seat": "p2"}));
    let secret = |v: &Value| v["token"].as_str().unwrap().to_string();
    let id = |v: &Value| v["id"].as_str().unwrap().to_string();
    assert_eq!(p1["grant"], json!({"role": "seat", "game": "s", "seat": "p1"}), "{p1}");
    assert_eq!((p1["state"].as_str(), id(&p1).len()), (Some("active"), 16));
    // A day by default, counted from the issue time.
    let at = |v: &Value, k: &str| chrono::DateTime::parse_from_rfc3339(v[k].as_str().unwrap()).unwrap();
    assert_eq!(at(&p1, "expires") - at(&p1, "issued"), chrono::Duration::hours(24));

    // The list: every token by id, never a secret; one game's with game=.
    let all = tokens(&s, None);
    let text = all.to_string();
    for t in [&s.organiser, &secret(&p1), &secret(&dana), &secret(&other)] {
        assert!(!text.contains(t.as_str()), "the list shows no token");
    }
    let ids: Vec<&str> = all["tokens"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 4, "{all}");
    assert!(ids.contains(&id(&p1).as_str()) && ids.contains(&arbiter::access::id_of(&s.organiser).as_str()));
    let of_s = tokens(&s, Some("s"));
    let roles: Vec<(&str, &str)> = of_s["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["role"].as_str().unwrap(), t["game"].as_str().unwrap()))
        .collect();
    assert_eq!(roles, [("seat", "s"), ("judge", "s")]);
    // The organiser's only.
    assert_eq!(s.get("/api/tokens", None).0, 401);
    assert_eq!(s.get("/api/tokens", Some(&secret(&p1))).0, 403);
    assert_eq!(s.post(&format!("/api/tokens/{}/revoke", id(&dana)), Some(&secret(&p1)), &json!({})).0, 403);

    // Revoked: 401 at once, saying so, on every kind of route.
    assert_eq!(s.get("/api/games/s/state", Some(&secret(&p1))).0, 200);
    let (status, v) = s.post(&format!("/api/tokens/{}/revoke", id(&p1)), Some(&s.organiser), &json!({}));
    assert_eq!((status, v["state"].as_str()), (200, Some("revoked")), "{v}");
    let revoked_at = v["revoked"].clone();
    let (status, v) = s.get("/api/games/s/state", Some(&secret(&p1)));
    assert_eq!((status, code(&v), v["error"]["token"].as_str()), (401, "unauthorized", Some("revoked")), "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains("revoked"), "{v}");
    let (status, v) = s.get(&format!("/api/games/s/events?access_token={}", secret(&p1)), None);
    assert_eq!((status, v["error"]["token"].as_str()), (401, Some("revoked")), "in the query too: {v}");
    let (status, v) = s.append("s", &secret(&p1), "p1", combat("p2", "A", "D"), 1);
    assert_eq!((status, v["error"]["token"].as_str()), (401, Some("revoked")), "{v}");
    // The others still work; revoking again changes nothing.
    assert_eq!(s.get("/api/games/s/state", Some(&secret(&dana))).0, 200);
    let (status, v) = s.post(&format!("/api/tokens/{}/revoke", id(&p1)), Some(&s.organiser), &json!({}));
    assert_eq!((status, &v["revoked"]), (200, &revoked_at));

    // Bad input changes nothing: bad ids, unknown ids, a bad expiry, a bad grant.
    let before = tokens(&s, None);
    for bad in ["zz", "0000000000000000", "0123456789ABCDEF", &secret(&dana)] {
        let (status, v) = s.post(&format!("/api/tokens/{bad}/revoke"), Some(&s.organiser), &json!({}));
        assert_eq!((status, code(&v)), (400, "input"), "{bad}: {v}");
    }
    for body in [
        json!({"seat": "p1", "expires": "soon"}),
        json!({"seat": "p1", "expires": "0h"}),
        json!({"seat": "p1", "expires": 3600}),
        json!({"seat": "p9"}),
        json!({"seat": "p1", "judge": "Dana"}),
    ] {
        let (status, v) = issue(&s, "s", body.clone());
        assert_eq!((status, code(&v)), (400, "input"), "{body}: {v}");
    }
    assert_eq!(s.get("/api/tokens?game=..", Some(&s.organiser)).0, 400);
    assert_eq!(tokens(&s, None), before, "no refused request changed a token");
}

#[test]
fn a_token_expires_when_it_says_and_then_answers_401_saying_so() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(dir.path());
    s.doomtrooper("s", "token");
    // An expiry already past, or further off than the longest duration
    // (3650d), is refused: it would issue a dead token, or outlive the cap.
    let before = tokens(&s, None);
    for (when, says) in
        [("1999-01-01T00:00:00Z", "already past"), ("9999-12-31T23:59:59Z", "more than 3650 days from now")]
    {
        let (status, v) = issue(&s, "s", json!({"seat": "p1", "expires": when}));
        assert_eq!((status, code(&v)), (400, "input"), "{when}: {v}");
        assert!(v["error"]["message"].as_str().unwrap().contains(says), "{v}");
    }
    assert_eq!(tokens(&s, None), before, "nothing was issued");
    // Expiring two seconds from now: it works, then it does not.
    let at = arbiter::event::format_time(chrono::Utc::now() + chrono::Duration::seconds(2));
    let (status, old) = issue(&s, "s", json!({"seat": "p1", "expires": at}));
    assert_eq!((status, old["state"].as_str()), (201, Some("active")), "{old}");
    let token = old["token"].as_str().unwrap();
    assert_eq!(s.get("/api/games/s", Some(token)).0, 200);
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let (status, v) = s.get("/api/games/s", Some(token));
    assert_eq!((status, v["error"]["token"].as_str()), (401, Some("expired")), "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains(&format!("expired at {at}")), "{v}");
    let (status, v) = s.append("s", token, "p1", combat("p2", "A", "D"), 1);
    assert_eq!((status, v["error"]["token"].as_str()), (401, Some("expired")));
    let (status, _, v) = raw("POST", &format!("{}/api/session", s.url), None, None, Some(&json!({"token": token})));
    assert_eq!((status, v["error"]["token"].as_str()), (401, Some("expired")), "no cookie for it: {v}");
    // One far ahead, and one that never expires, work.
    let far = arbiter::event::format_time(chrono::Utc::now() + chrono::Duration::days(3000));
    let (_, later) = issue(&s, "s", json!({"seat": "p1", "expires": far}));
    let (_, never) = issue(&s, "s", json!({"judge": "Dana", "expires": "never"}));
    assert_eq!(never["expires"], Value::Null);
    for t in [&later, &never] {
        assert_eq!(s.get("/api/games/s", t["token"].as_str()).0, 200);
    }
    let listed = tokens(&s, Some("s"));
    let states: Vec<&str> = listed["tokens"].as_array().unwrap().iter().map(|t| t["state"].as_str().unwrap()).collect();
    assert_eq!(states, ["expired", "active", "active"]);
}

/// The CLI's `token list|revoke`, on the local store and through a server,
/// with the same output and exit codes; a new organiser token revokes the
/// old one; recovery when all organiser tokens are gone.
#[test]
fn the_cli_lists_and_revokes_tokens_and_a_new_organiser_token_replaces_the_old() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("store");
    let d = data.to_str().unwrap();
    stdout(&arbiter(
        &["--data", d, "new", "g", "--ruleset", "doomtrooper", "--seat", "p1=Ann", "--seat", "p2=Ben"],
        None,
    ));
    let p1 = stdout(&arbiter(&["--data", d, "token", "g", "--seat", "p1"], None));
    assert_eq!(p1.len(), 64, "the token alone on stdout");
    let p2: Value = serde_json::from_str(&stdout(&arbiter(
        &["--data", d, "--json", "token", "g", "--seat", "p2", "--expires", "2h"],
        None,
    )))
    .unwrap();
    let first: Value =
        serde_json::from_str(&stdout(&arbiter(&["--data", d, "--json", "token", "--organiser"], None))).unwrap();
    let listed: Value =
        serde_json::from_str(&stdout(&arbiter(&["--data", d, "--json", "token", "list", "g"], None))).unwrap();
    assert_eq!(listed["tokens"].as_array().unwrap().len(), 2, "{listed}");
    let text = stdout(&arbiter(&["--data", d, "token", "list"], None));
    assert_eq!(text.lines().count(), 3, "{text}");
    assert!(text.contains("seat p1 of g") && text.contains("organiser") && !text.contains(&p1), "{text}");
    // Bad input: exit 2, nothing changed.
    let before = stdout(&arbiter(&["--data", d, "--json", "token", "list"], None));
    for args in [
        &["token", "revoke", "zz"][..],
        &["token", "revoke", "0000000000000000"],
        &["token", "g", "--seat", "p1", "--expires", "soon"],
        &["token", "g", "--seat", "p1", "--expires", "1999-01-01T00:00:00Z"],
        &["token", "g", "--seat", "p1", "--expires", "9999-12-31T23:59:59Z"],
        &["token", "g", "--seat", "p9"],
        &["token", "list", "no/such"],
    ] {
        let out = arbiter(&[&["--data", d][..], args].concat(), None);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    assert_eq!(stdout(&arbiter(&["--data", d, "--json", "token", "list"], None)), before);
    let out = stdout(&arbiter(&["--data", d, "token", "revoke", p2["id"].as_str().unwrap()], None));
    assert!(out.starts_with("revoked ") && out.contains("revoked 20"), "{out}");

    // The server: the first organiser token works; through it, the same verbs.
    let mut s = Served::start(&data);
    assert_eq!(s.organiser, "", "the store has an organiser token: none is printed");
    let org = first["token"].as_str().unwrap();
    let remote = Some((s.url.as_str(), org));
    let listed: Value = serde_json::from_str(&stdout(&arbiter(&["--json", "token", "list", "g"], remote))).unwrap();
    let states: Vec<&str> = listed["tokens"].as_array().unwrap().iter().map(|t| t["state"].as_str().unwrap()).collect();
    assert_eq!(states, ["active", "revoked"]);
    assert_eq!(s.get("/api/games/g", Some(&p1)).0, 200);
    stdout(&arbiter(&["token", "revoke", &arbiter::access::id_of(&p1)], remote));
    assert_eq!(s.get("/api/games/g", Some(&p1)).1["error"]["token"], "revoked");
    for args in [
        &["token", "revoke", "zz"][..],
        &["token", "revoke", "0000000000000000"],
        &["token", "g", "--seat", "p1", "--expires", "1999-01-01T00:00:00Z"],
        &["token", "g", "--seat", "p1", "--expires", "9999-12-31T23:59:59Z"],
    ] {
        let out = arbiter(args, remote);
        assert_eq!(out.status.code(), Some(2), "the same exit code as locally: {args:?}");
    }
    // An organiser token is issued on the store's machine, not through the server.
    let out = arbiter(&["token", "--organiser"], remote);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("stop `arbiter serve`"));

    // Rotation: stop, issue a new one, start again; the old one is revoked.
    assert!(s.stop().success());
    let out = arbiter(&["--data", d, "token", "--organiser"], None);
    let second = stdout(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains(&arbiter::access::id_of(org)), "it names what it revoked");
    let mut s = Served::start(&data);
    let (status, v) = s.get("/api/tokens", Some(org));
    assert_eq!((status, v["error"]["token"].as_str()), (401, Some("revoked")), "{v}");
    assert_eq!(s.get("/api/tokens", Some(&second)).0, 200);
    // A leaked organiser token revoked through the API (here, by itself):
    // the next start prints a new one.
    let (status, _) =
        s.post(&format!("/api/tokens/{}/revoke", arbiter::access::id_of(&second)), Some(&second), &json!({}));
    assert_eq!(status, 200);
    assert_eq!(s.get("/api/tokens", Some(&second)).0, 401);
    assert!(s.stop().success());
    let s = Served::start(&data);
    assert_eq!(s.organiser.len(), 64, "a store with no working organiser token gets a new one at start");
    assert_eq!(s.get("/api/tokens", Some(&s.organiser)).0, 200);
}

/// Two creates of one name at once, one token-only and one public: exactly
/// one stores the game, and the game is read as the winner asked, every time.
#[test]
fn of_two_racing_creates_of_one_name_the_winners_read_access_always_holds() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(dir.path());
    let header = json!({"type": "open", "ruleset": "doomtrooper", "ruleset_version": 1,
        "seats": [{"id": "p1", "name": "Ann"}, {"id": "p2", "name": "Ben"}]});
    s.doomtrooper("src", "public");
    let mut wins = [0, 0];
    for i in 0..40 {
        let name = format!("race-{i}");
        let barrier = std::sync::Barrier::new(2);
        let results: Vec<(u16, Value, &str)> = std::thread::scope(|scope| {
            let racers: Vec<_> = ["token", "public"]
                .into_iter()
                .map(|read| {
                    let (s, barrier, name, header) = (&s, &barrier, &name, &header);
                    scope.spawn(move || {
                        barrier.wait();
                        // Every fourth pair: a fork (token-only) against a create.
                        let (status, v) = if i % 4 == 3 && read == "token" {
                            s.post(
                                "/api/games/src/fork",
                                Some(&s.organiser),
                                &json!({"at": 0, "name": name, "read": read}),
                            )
                        } else {
                            s.post(
                                "/api/games",
                                Some(&s.organiser),
                                &json!({"name": name, "header": header, "read": read}),
                            )
                        };
                        (status, v, read)
                    })
                })
                .collect();
            racers.into_iter().map(|r| r.join().unwrap()).collect()
        });
        let won: Vec<&(u16, Value, &str)> = results.iter().filter(|r| r.0 == 201).collect();
        assert_eq!(won.len(), 1, "exactly one create wins: {results:?}");
        let lost = results.iter().find(|r| r.0 != 201).unwrap();
        assert_eq!((lost.0, code(&lost.1)), (409, "exists"), "{results:?}");
        let anonymous = s.get(&format!("/api/games/{name}"), None).0;
        match won[0].2 {
            "token" => {
                assert_eq!(anonymous, 401, "pair {i}: the token-only winner's game is not public");
                wins[0] += 1;
            }
            _ => {
                assert_eq!(anonymous, 200, "pair {i}: the public winner's game is public");
                wins[1] += 1;
            }
        }
    }
    eprintln!("token-only won {} pairs, public {}", wins[0], wins[1]);
}

/// RFC 7235: the scheme's name is case-insensitive.
#[test]
fn the_bearer_scheme_is_read_in_any_case() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(dir.path());
    s.doomtrooper("s", "token");
    let get = |auth: &str| {
        let mut resp = agent().get(format!("{}/api/games/s", s.url)).header("Authorization", auth).call().unwrap();
        (resp.status().as_u16(), resp.body_mut().read_to_string().unwrap())
    };
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let (status, body) = get(&format!("{scheme} {}", s.organiser));
        assert_eq!(status, 200, "{scheme}: {body}");
    }
    for bad in [format!("Basic {}", s.organiser), format!("Bearer{}", s.organiser), "bearer ".to_string()] {
        let (status, body) = get(&bad);
        assert_eq!(status, 401, "{bad}: {body}");
    }
}

#[test]
fn every_response_says_referrer_policy_no_referrer() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(dir.path());
    s.doomtrooper("g", "token");
    let u = |p: &str| format!("{}{p}", s.url);
    let answers = [
        raw("GET", &u("/"), None, None, None),
        raw("GET", &u("/games/g/replay"), None, None, None),
        raw("GET", &u("/follow?games=g"), None, None, None),
        raw("GET", &u("/api/games"), None, None, None),
        raw("GET", &u("/api/games/g"), Some(&s.organiser), None, None),
        raw("GET", &u("/api/games/g"), None, None, None),
        raw("GET", &u("/api/games/g/export"), Some(&s.organiser), None, None),
        raw("GET", &u("/no/such/route"), None, None, None),
        raw("POST", &u("/api/games"), Some(&s.organiser), None, Some(&json!({"bad": 1}))),
        raw("POST", &u("/api/session"), None, None, Some(&json!({"token": s.organiser}))),
        raw("DELETE", &u("/api/session"), None, None, None),
        raw("GET", &u("/openapi.json"), None, None, None),
        raw("GET", &u("/checkpoint"), None, None, None),
    ];
    for (i, (status, headers, _)) in answers.iter().enumerate() {
        let policy = headers.get("referrer-policy").map(|v| v.to_str().unwrap());
        assert_eq!(policy, Some("no-referrer"), "answer {i} ({status})");
    }
}

/// The pages load scripts from this server alone: every page's CSP allows
/// no inline script and no framing, and its modules are served at
/// `/assets/NAME` with their type and an ETag a browser revalidates.
#[test]
fn the_pages_run_only_the_servers_modules() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(dir.path());
    s.doomtrooper("g", "public");
    let u = |p: &str| format!("{}{p}", s.url);
    for page in ["/", "/games/g/replay", "/follow?games=g"] {
        let (status, headers, _) = raw("GET", &u(page), None, None, None);
        assert_eq!(status, 200, "{page}");
        let csp = headers.get("content-security-policy").unwrap().to_str().unwrap();
        let script = csp.split(';').map(str::trim).find(|d| d.starts_with("script-src")).unwrap();
        assert_eq!(script, "script-src 'self'", "{page}: {csp}");
        assert!(csp.contains("frame-ancestors 'none'"), "{page}: {csp}");
    }
    let (status, headers, _) = raw("GET", &u("/assets/board.js"), None, None, None);
    assert_eq!(status, 200);
    assert_eq!(headers.get("content-type").unwrap(), "text/javascript; charset=utf-8");
    let (_, css, _) = raw("GET", &u("/assets/board.css"), None, None, None);
    assert_eq!(css.get("content-type").unwrap(), "text/css; charset=utf-8");
    let etag = headers.get("etag").unwrap().to_str().unwrap().to_string();
    let again = agent().get(&u("/assets/board.js")).header("If-None-Match", &etag).call().unwrap();
    assert_eq!(again.status().as_u16(), 304, "the same module: not sent again");
    let (status, _, v) = raw("GET", &u("/assets/secrets.js"), None, None, None);
    assert_eq!((status, &v["error"]["code"]), (404, &json!("not_found")), "only the listed assets: {v}");
}

/// A page opened with `#token=` posts it to /api/session once; the cookie
/// it gets back reads what the token reads, and appends as its seat from
/// this server's pages alone.
#[test]
fn the_pages_cookie_reads_appends_only_from_a_page_and_a_bad_one_counts_as_no_token() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(dir.path());
    s.doomtrooper("s", "token");
    s.doomtrooper("g", "public");
    let p1 = s.token("s", "seat", "p1");
    let session = format!("{}/api/session", s.url);
    let (status, headers, v) = raw("POST", &session, None, None, Some(&json!({"token": p1})));
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["grant"], json!({"role": "seat", "game": "s", "seat": "p1"}));
    let set = headers.get("set-cookie").unwrap().to_str().unwrap().to_string();
    let parts: Vec<&str> = set.split("; ").collect();
    assert_eq!(parts[0], format!("arbiter_token={p1}"));
    for attr in ["Path=/", "HttpOnly", "SameSite=Strict"] {
        assert!(parts.contains(&attr), "{attr} in {set}");
    }
    let max_age: i64 = parts.iter().find_map(|p| p.strip_prefix("Max-Age=")).unwrap().parse().unwrap();
    assert!((86_000..=86_400).contains(&max_age), "until the token expires: {set}");
    let cookie = format!("theme=dark; arbiter_token={p1}");

    // Reading routes take it.
    let u = |p: &str| format!("{}{p}", s.url);
    assert_eq!(raw("GET", &u("/api/games/s/state"), None, None, None).0, 401);
    assert_eq!(raw("GET", &u("/api/games/s/state"), None, Some(&cookie), None).0, 200);
    assert_eq!(raw("GET", &u("/api/games"), None, Some(&cookie), None).2, json!(["g", "s"]));
    // A page asks who it is signed in as.
    let whoami = raw("GET", &u("/api/session"), None, Some(&cookie), None).2;
    assert_eq!(whoami, json!({"grant": {"role": "seat", "game": "s", "seat": "p1"}}));
    assert_eq!(raw("GET", &u("/api/session"), None, None, None).2, json!({"grant": null}));
    // It appends as its own seat only from a page of this server: not as
    // a form would send it (another site's, or another port's of this
    // host), not from another origin, not as another seat. An organiser's
    // cookie does not act as the organiser: that takes the bearer header.
    let append = json!({"actor": "p1", "action": combat("p2", "A", "D"), "expect_seq": 1});
    let events = u("/api/games/s/events");
    let form = agent()
        .post(&events)
        .header("Cookie", &cookie)
        .header("Content-Type", "text/plain")
        .send(append.to_string())
        .unwrap();
    assert_eq!(form.status().as_u16(), 403, "a form cannot append with the cookie");
    let cross = agent()
        .post(&events)
        .header("Cookie", &cookie)
        .header("Sec-Fetch-Site", "same-site")
        .send_json(&append)
        .unwrap();
    assert_eq!(cross.status().as_u16(), 403, "another origin of the site cannot append with the cookie");
    let as_p2 = json!({"actor": "p2", "action": combat("p1", "A", "D"), "expect_seq": 1});
    assert_eq!(raw("POST", &events, None, Some(&cookie), Some(&as_p2)).0, 403, "only as its own seat");
    assert_eq!(s.head("s")["seq"], 0, "nothing was appended");
    let page = agent()
        .post(&events)
        .header("Cookie", &cookie)
        .header("Sec-Fetch-Site", "same-origin")
        .send_json(&append)
        .unwrap();
    assert_eq!(page.status().as_u16(), 201, "the table page records with the cookie");
    assert_eq!(raw("POST", &events, None, Some(&cookie), Some(&append)).0, 200, "a retry: the stored event");
    assert_eq!(s.head("s")["seq"], 1);
    let org_cookie = format!("arbiter_token={}", s.organiser);
    assert_eq!(raw("GET", &u("/api/tokens"), None, Some(&org_cookie), None).0, 403);
    let create = json!({"name": "h", "header": {"type": "open", "ruleset": "doomtrooper", "ruleset_version": 1,
        "seats": [{"id": "p1", "name": "Ann"}]}});
    assert_eq!(raw("POST", &u("/api/games"), None, Some(&org_cookie), Some(&create)).0, 403);
    assert_eq!(s.get("/api/games/h", Some(&s.organiser)).0, 404, "nothing was created");

    // Revoked: the cookie counts as no token (public games stay readable).
    let id = arbiter::access::id_of(&p1);
    assert_eq!(s.post(&format!("/api/tokens/{id}/revoke"), Some(&s.organiser), &json!({})).0, 200);
    assert_eq!(raw("GET", &u("/api/games/s/state"), None, Some(&cookie), None).0, 401);
    assert_eq!(raw("GET", &u("/api/games/g/state"), None, Some(&cookie), None).0, 200);
    let (status, headers, v) = raw("POST", &session, None, None, Some(&json!({"token": p1})));
    assert_eq!((status, v["error"]["token"].as_str()), (401, Some("revoked")));
    assert!(headers.get("set-cookie").is_none(), "no cookie for a revoked token");

    // Bad input sets no cookie: unknown token, not JSON, extra fields.
    let (status, headers, _) = raw("POST", &session, None, None, Some(&json!({"token": "x".repeat(64)})));
    assert_eq!(status, 401);
    assert!(headers.get("set-cookie").is_none());
    let form = agent()
        .post(&session)
        .header("Content-Type", "text/plain")
        .send(format!("{{\"token\":\"{}\"}}", s.organiser))
        .unwrap();
    assert_eq!(form.status().as_u16(), 400, "a form from another site cannot set the cookie");
    assert!(form.headers().get("set-cookie").is_none());
    let (status, _, _) = raw("POST", &session, None, None, Some(&json!({"token": s.organiser, "more": 1})));
    assert_eq!(status, 400);

    // Forgetting it.
    let (status, headers, _) = raw("DELETE", &session, None, None, None);
    assert_eq!(status, 200);
    assert!(headers.get("set-cookie").unwrap().to_str().unwrap().contains("Max-Age=0"));

    // The pages read through the cookie: no token in any URL their modules
    // build, and they sign in through the one module that posts it.
    for (name, _, _) in arbiter::server::ASSETS {
        let (status, _, text) = raw("GET", &u(&format!("/assets/{name}")), None, None, None);
        assert_eq!(status, 200, "{name}");
        let text = text.as_str().unwrap();
        assert!(!text.contains("access_token"), "{name}");
        assert_eq!(text.contains("\"/api/session\""), *name == "api.js", "{name}");
    }
}

/// Tokens in headers, query strings and cookies, good and bad: none
/// appears in anything the server writes (stdout or stderr), at any log
/// level, but the organiser token's one line at the first start.
#[test]
fn no_line_the_server_writes_holds_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["--data", dir.path().to_str().unwrap(), "serve", "--listen", "127.0.0.1:0"])
        .env("RUST_LOG", "debug")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let url = line.trim().strip_prefix("listening on ").unwrap().to_string();
    line.clear();
    out.read_line(&mut line).unwrap();
    let organiser = line.trim().rsplit(' ').next().unwrap().to_string();
    assert_eq!(organiser.len(), 64, "{line}");
    let rest = std::thread::spawn(move || {
        let mut text = String::new();
        out.read_to_string(&mut text).unwrap();
        text
    });
    let mut err = child.stderr.take().unwrap();
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        err.read_to_string(&mut text).unwrap();
        text
    });

    let post =
        |path: &str, token: Option<&str>, body: Value| raw("POST", &format!("{url}{path}"), token, None, Some(&body));
    let header = json!({"type": "open", "ruleset": "doomtrooper", "ruleset_version": 1,
        "seats": [{"id": "p1", "name": "Ann"}, {"id": "p2", "name": "Ben"}]});
    assert_eq!(post("/api/games", Some(&organiser), json!({"name": "s", "header": header, "read": "token"})).0, 201);
    let (_, _, p1) = post("/api/games/s/tokens", Some(&organiser), json!({"seat": "p1"}));
    let p1 = p1["token"].as_str().unwrap().to_string();
    let soon = arbiter::event::format_time(chrono::Utc::now() + chrono::Duration::seconds(1));
    let (_, _, old) = post("/api/games/s/tokens", Some(&organiser), json!({"seat": "p2", "expires": soon}));
    let old = old["token"].as_str().unwrap().to_string();
    // Expired before it is used.
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let unknown = "f".repeat(64);
    for t in [&p1, &old, &unknown, &organiser] {
        raw("GET", &format!("{url}/api/games/s/state"), Some(t), None, None);
        raw("GET", &format!("{url}/api/games/s/events?access_token={t}&from=0"), None, None, None);
        raw("GET", &format!("{url}/api/games/s/state"), None, Some(&format!("arbiter_token={t}")), None);
        raw("GET", &format!("{url}/games/s/replay?access_token={t}"), None, None, None);
        post("/api/session", None, json!({ "token": t }));
        post("/api/games/s/events", Some(t), json!({"actor": "p1", "action": combat("p2", "A", "D"), "expect_seq": 1}));
        raw("GET", &format!("{url}/no/such/route?access_token={t}"), None, None, None);
    }
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    assert!(child.wait().unwrap().success());
    let written = format!("{}\n{}", rest.join().unwrap(), errors.join().unwrap());
    for t in [&p1, &old, &unknown, &organiser] {
        assert!(!written.contains(t.as_str()), "a token in the server's output:\n{written}");
    }
}

/// In a real browser: the page opened with `#token=` reads a token-only
/// game, drops the fragment from the address bar, and keeps the token in a
/// cookie no script can read; later pages need no token in their address.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_opened_with_a_token_fragment_trades_it_for_the_cookie_and_drops_it() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(&dir.path().join("store"));
    s.doomtrooper("s", "token");
    let p1 = s.token("s", "seat", "p1");
    // Expired by the time it is used below (a time already past is refused).
    let soon = arbiter::event::format_time(chrono::Utc::now() + chrono::Duration::seconds(1));
    let (_, old) = issue(&s, "s", json!({"seat": "p2", "expires": soon}));
    if !common::has(common::Need::Chromium) {
        return;
    }
    let (_driver, c) = browser(&dir.path().join("profile")).await;
    let position = "return document.getElementById('position').textContent.startsWith('seq 0')";

    c.goto(&format!("{}/games/s/replay#token={p1}", s.url)).await.unwrap();
    wait_for(&c, position, json!(true)).await;
    wait_for(&c, "return [location.hash, location.href.includes('token')]", json!(["", false])).await;
    wait_for(&c, "return document.cookie", json!("")).await;
    // Without a fragment now: the cookie reads.
    c.goto(&format!("{}/games/s/replay", s.url)).await.unwrap();
    wait_for(&c, position, json!(true)).await;
    c.goto(&s.url.to_string()).await.unwrap();
    wait_for(
        &c,
        "return [...document.querySelectorAll('#games td.name a')].map(a => a.textContent).join(',')",
        json!("s"),
    )
    .await;
    // Forgotten: the game is no longer readable from this browser.
    c.find(fantoccini::Locator::Css("#forget")).await.unwrap().click().await.unwrap();
    wait_for(&c, "return document.querySelector('#games tbody').textContent", json!("no games")).await;
    // An expired token in the fragment: the page says so, and drops it too.
    let expires = chrono::DateTime::parse_from_rfc3339(&soon).unwrap();
    while chrono::Utc::now() <= expires {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    c.goto(&format!("{}/games/s/replay#token={}", s.url, old["token"].as_str().unwrap())).await.unwrap();
    wait_for(&c, "return document.getElementById('error').textContent.includes('expired')", json!(true)).await;
    wait_for(&c, "return location.hash", json!("")).await;
    c.close().await.unwrap();
}

/// A live stream opened with `auth` as the Authorization header (the token
/// may be in `path` instead, as `access_token=`).
fn open_stream(s: &Served, path: &str, auth: Option<&str>) -> BufReader<Box<dyn Read + Send + Sync>> {
    let mut req = agent().get(format!("{}{path}", s.url));
    if let Some(a) = auth {
        req = req.header("Authorization", a);
    }
    let resp = req.call().unwrap();
    assert_eq!(resp.status().as_u16(), 200, "{path}");
    BufReader::new(Box::new(resp.into_body().into_reader()))
}

/// The stream's next message: (its event name, its data), or None once it ended.
fn next_message(r: &mut impl BufRead) -> Option<(String, Value)> {
    let (mut event, mut line) = (String::new(), String::new());
    loop {
        line.clear();
        if r.read_line(&mut line).unwrap() == 0 {
            return None;
        }
        let l = line.trim_end();
        if let Some(e) = l.strip_prefix("event: ") {
            event = e.to_string();
        } else if let Some(d) = l.strip_prefix("data: ") {
            return Some((event, serde_json::from_str(d).unwrap()));
        }
    }
}

/// A stream ends at its first event after its token is revoked or expires,
/// with an `event: error` saying which, whether the token came in the
/// Authorization header or in `access_token=`, on `/stream` and `/api/stream`.
#[test]
fn a_live_stream_ends_at_its_first_event_after_its_token_is_revoked_or_expires() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(dir.path());
    for read in ["token", "public"] {
        let game = format!("g{read}");
        s.doomtrooper(&game, read);
        let (_, v) = s.get(&format!("/api/games/{game}/events?from=0"), Some(&s.organiser));
        let hash0 = v["events"][0]["hash"].as_str().unwrap().to_string();
        let note = |seq: u64| json!({"type": "note", "concerns": {"seq": 0, "hash": hash0}, "text": format!("n{seq}")});
        let (_, dana) = issue(&s, &game, json!({"judge": "Dana", "expires": "never"}));
        let dana = dana["token"].as_str().unwrap().to_string();
        let (_, p1) = issue(&s, &game, json!({"seat": "p1"}));
        let p1 = p1["token"].as_str().unwrap().to_string();
        let soon = arbiter::event::format_time(chrono::Utc::now() + chrono::Duration::seconds(2));
        let (_, p2) = issue(&s, &game, json!({"seat": "p2", "expires": soon}));
        let p2 = p2["token"].as_str().unwrap().to_string();
        let open = |token: &str| {
            vec![
                open_stream(&s, &format!("/api/games/{game}/stream?from=1"), Some(&format!("Bearer {token}"))),
                open_stream(&s, &format!("/api/games/{game}/stream?from=1&access_token={token}"), None),
                open_stream(&s, &format!("/api/stream?games={game}:1&access_token={token}"), None),
            ]
        };
        let (mut revoked, mut expiring, mut judge) = (open(&p1), open(&p2), open(&dana));
        assert_eq!(s.append(&game, &dana, "Dana", note(1), 1).0, 201);
        for r in revoked.iter_mut().chain(&mut expiring).chain(&mut judge) {
            assert_eq!(next_message(r).unwrap().0, "event", "every stream gets the first note");
        }
        let id = arbiter::access::id_of(&p1);
        assert_eq!(s.post(&format!("/api/tokens/{id}/revoke"), Some(&s.organiser), &json!({})).0, 200);
        std::thread::sleep(std::time::Duration::from_millis(2500));
        assert_eq!(s.append(&game, &dana, "Dana", note(2), 2).0, 201);
        for (streams, why) in [(&mut revoked, "revoked"), (&mut expiring, "expired")] {
            for r in streams.iter_mut() {
                let (event, data) = next_message(r).expect("an error, then the end");
                assert_eq!((event.as_str(), data["error"]["token"].as_str()), ("error", Some(why)), "{game}: {data}");
                assert_eq!(data["error"]["code"], "unauthorized");
                assert!(data["error"]["message"].as_str().unwrap().contains(why), "{data}");
                assert!(next_message(r).is_none(), "the stream ended");
            }
        }
        for r in &mut judge {
            let (event, data) = next_message(r).unwrap();
            assert_eq!(event, "event", "a working token's stream goes on: {data}");
        }
    }
}
