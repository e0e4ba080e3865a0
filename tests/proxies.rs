//! docs/tls.md's nginx and Caddy configs, run as written: each block is
//! taken from the page, changed only where a test machine must differ (the
//! name, the certificate, the ports; the page lists them), and started as a
//! process of the test's own in front of a real `arbiter serve`. Through
//! it: the CLI over https, a live stream that is not held back, large
//! bodies and the server's own 413, and the forwarded headers.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use common::server::Served;
use serde_json::{Value, json};

/// A free TCP port of 127.0.0.1 (free when asked; the proxy binds it next).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The one fenced block of docs/tls.md whose info string is `info`.
fn docs_block(info: &str) -> String {
    let page = std::fs::read_to_string(common::repo_file("docs/tls.md")).unwrap();
    let mut blocks = Vec::new();
    let mut lines = page.lines();
    while let Some(line) = lines.next() {
        if line.trim_end() == format!("```{info}") {
            blocks.push(lines.by_ref().take_while(|l| l.trim_end() != "```").collect::<Vec<_>>().join("\n") + "\n");
        }
    }
    assert_eq!(blocks.len(), 1, "docs/tls.md should have one ```{info} block");
    blocks.pop().unwrap()
}

/// `text` with `from` replaced: `from` must be there, so that a change of
/// the page that the test no longer matches fails here, not silently.
fn swap(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "docs/tls.md's block no longer has {from:?}; update tests/proxies.rs:\n{text}");
    text.replace(from, to)
}

/// A proxy process, killed when dropped, with its own temporary directory
/// (config, logs, pid, caches).
struct Proxy {
    child: Child,
    url: String,
    /// Removed once the proxy is killed (`drop` runs before the fields').
    _dir: tempfile::TempDir,
    log: PathBuf,
}

impl Proxy {
    /// Waits until the proxy accepts connections on `port`; a proxy that
    /// exits first fails the test with its log.
    fn ready(mut self, port: u16) -> Proxy {
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("the proxy exited ({status}): {}", std::fs::read_to_string(&self.log).unwrap_or_default());
            }
            assert!(Instant::now() < deadline, "the proxy did not listen on {port} within 30 s");
            std::thread::sleep(Duration::from_millis(20));
        }
        self
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The test's certificate for `localhost`, self-signed: (cert, key) files,
/// and the certificate itself.
fn certificate(dir: &Path) -> (PathBuf, PathBuf, rustls::pki_types::CertificateDer<'static>) {
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let (c, k) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&c, cert.cert.pem()).unwrap();
    std::fs::write(&k, cert.signing_key.serialize_pem()).unwrap();
    (c, k, cert.cert.der().clone())
}

/// (status, body) of a POST of `len` spaces to the proxy at `url`, read
/// while the body is still being sent, as curl does: a proxy that streams
/// the body (Caddy) passes the server's early 413 on and then closes the
/// connection, so a client that only reads once it has sent everything
/// gets a broken pipe instead of the answer.
fn post_large(
    url: &str,
    path: &str,
    token: &str,
    kind: &str,
    len: usize,
    ca: &rustls::pki_types::CertificateDer<'static>,
) -> (u16, String) {
    let port: u16 = url.rsplit(':').next().unwrap().parse().unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.clone()).unwrap();
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let conn = rustls::ClientConnection::new(Arc::new(config), "localhost".try_into().unwrap()).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, TcpStream::connect(("127.0.0.1", port)).unwrap());
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: localhost:{port}\r\nAuthorization: Bearer {token}\r\nContent-Type: {kind}\r\nContent-Length: {len}\r\n\r\n"
    );
    tls.write_all(head.as_bytes()).unwrap();
    let (chunk, mut buf, mut answer, mut sent) = (vec![b' '; 64 * 1024], vec![0u8; 64 * 1024], Vec::new(), 0);
    tls.sock.set_read_timeout(Some(Duration::from_millis(1))).unwrap();
    while sent < len {
        let n = chunk.len().min(len - sent);
        if tls.write_all(&chunk[..n]).and_then(|_| tls.flush()).is_err() {
            break;
        }
        sent += n;
        if let Ok(n @ 1..) = tls.read(&mut buf) {
            answer.extend_from_slice(&buf[..n]);
            break;
        }
    }
    tls.sock.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    loop {
        let text = String::from_utf8_lossy(&answer).to_string();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head.lines().find_map(|l| {
                l.to_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse::<usize>().unwrap())
            });
            if length.is_some_and(|n| body.len() >= n) {
                let status = head.split(' ').nth(1).unwrap().parse().unwrap();
                return (status, body.to_string());
            }
        }
        match tls.read(&mut buf) {
            Ok(n @ 1..) => answer.extend_from_slice(&buf[..n]),
            other => panic!("POST {path}: the answer ended ({other:?}) with {text:?}"),
        }
    }
}

/// Where Debian's package puts nginx.
const NGINX: &str = "/usr/sbin/nginx";

/// nginx from docs/tls.md's server block, in front of `upstream`.
fn nginx(upstream: u16, cert: &Path, key: &Path) -> Proxy {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let port = free_port();
    let mut site = docs_block("nginx");
    site = swap(&site, "listen 443 ssl;", &format!("listen 127.0.0.1:{port} ssl;"));
    site = swap(&site, "/etc/letsencrypt/live/arbiter.example.org/fullchain.pem", cert.to_str().unwrap());
    site = swap(&site, "/etc/letsencrypt/live/arbiter.example.org/privkey.pem", key.to_str().unwrap());
    site = swap(&site, "arbiter.example.org", "localhost");
    site = swap(&site, "127.0.0.1:7878", &format!("127.0.0.1:{upstream}"));
    std::fs::write(dir.path().join("arbiter.conf"), site).unwrap();
    // In place of Debian's /etc/nginx/nginx.conf: everything in `d`, in the
    // foreground, and one process (no workers that would switch to the
    // `nobody` user when run as root and not reach `d`; the kill ends it all).
    let main = format!(
        "daemon off;\nmaster_process off;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\nevents {{}}\nhttp {{\n\
         access_log {d}/access.log;\nclient_body_temp_path {d}/body;\nproxy_temp_path {d}/proxy;\n\
         fastcgi_temp_path {d}/fastcgi;\nuwsgi_temp_path {d}/uwsgi;\nscgi_temp_path {d}/scgi;\n\
         include {d}/arbiter.conf;\n}}\n"
    );
    std::fs::write(dir.path().join("nginx.conf"), main).unwrap();
    let log = dir.path().join("error.log");
    let program = if Path::new(NGINX).exists() { NGINX } else { "nginx" };
    let child = Command::new(program)
        .args(["-p", d, "-e", log.to_str().unwrap(), "-c", &format!("{d}/nginx.conf")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    Proxy { child, url: format!("https://localhost:{port}"), _dir: dir, log }.ready(port)
}

/// Caddy from docs/tls.md's site block, in front of `upstream`.
fn caddy(upstream: u16, cert: &Path, key: &Path) -> Proxy {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut site = docs_block("caddyfile");
    site = swap(
        &site,
        "arbiter.example.org {",
        &format!("localhost:{port} {{\n\tbind 127.0.0.1\n\ttls {} {}", cert.display(), key.display()),
    );
    site = swap(&site, "127.0.0.1:7878", &format!("127.0.0.1:{upstream}"));
    // Nothing bound beyond the port: no admin endpoint, no port 80 for
    // redirects, no UDP for HTTP/3.
    let global = "{\n\tadmin off\n\tauto_https disable_redirects\n\tservers {\n\t\tprotocols h1 h2\n\t}\n}\n\n";
    let file = dir.path().join("Caddyfile");
    std::fs::write(&file, format!("{global}{site}")).unwrap();
    let log = dir.path().join("caddy.log");
    let child = Command::new("caddy")
        .args(["run", "--adapter", "caddyfile", "--config", file.to_str().unwrap()])
        .env("HOME", dir.path())
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    Proxy { child, url: format!("https://localhost:{port}"), _dir: dir, log }.ready(port)
}

/// Between the proxy and `arbiter serve`: copies bytes both ways and keeps
/// the head of each request the proxy sent (bodies skipped by their
/// Content-Length), to see the headers the proxy adds. Returns its port.
fn tee(upstream: String, heads: Arc<Mutex<Vec<String>>>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for proxy in listener.incoming() {
            let Ok(proxy) = proxy else { continue };
            let Ok(server) = TcpStream::connect(&upstream) else { continue };
            let (proxy2, server2) = (proxy.try_clone().unwrap(), server.try_clone().unwrap());
            let heads = heads.clone();
            std::thread::spawn(move || requests(proxy, server, heads));
            std::thread::spawn(move || {
                let (mut from, mut to) = (server2, proxy2);
                let _ = std::io::copy(&mut from, &mut to);
                let _ = to.shutdown(Shutdown::Write);
            });
        }
    });
    port
}

fn requests(mut from: TcpStream, mut to: TcpStream, heads: Arc<Mutex<Vec<String>>>) {
    let (mut head, mut body_left, mut chunked) = (Vec::new(), 0u64, false);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
        let mut rest = &buf[..n];
        // A chunked body is not parsed: only the heads before it are kept.
        while !rest.is_empty() && !chunked {
            if body_left > 0 {
                let k = body_left.min(rest.len() as u64);
                body_left -= k;
                rest = &rest[k as usize..];
                continue;
            }
            head.push(rest[0]);
            rest = &rest[1..];
            if head.ends_with(b"\r\n\r\n") {
                let text = String::from_utf8_lossy(&head).to_lowercase();
                chunked = text.contains("transfer-encoding: chunked");
                body_left = text
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map_or(0, |v| v.trim().parse().unwrap());
                heads.lock().unwrap().push(text);
                head.clear();
            }
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

fn cli(url: &str, ca: &Path, token: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .env_remove("ARBITER_DATA")
        .env_remove("ARBITER_SERVER")
        .env_remove("ARBITER_CA_CERT")
        .env_remove("ARBITER_TOKEN")
        .args(["--server", url, "--ca-cert", ca.to_str().unwrap(), "--token", token])
        .args(args)
        .output()
        .unwrap()
}

#[track_caller]
fn ok(out: Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// An https client that trusts only the test's certificate.
fn client(ca: &Path) -> ureq::Agent {
    let pem = std::fs::read(ca).unwrap();
    let certs: Vec<_> = ureq::tls::parse_pem(&pem)
        .filter_map(|i| match i.unwrap() {
            ureq::tls::PemItem::Certificate(c) => Some(c),
            _ => None,
        })
        .collect();
    let tls = ureq::tls::TlsConfig::builder().root_certs(ureq::tls::RootCerts::new_with_certs(&certs)).build();
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .tls_config(tls)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into()
}

/// The checks, through a proxy started by `start(upstream, cert, key)`.
fn through(start: fn(u16, &Path, &Path) -> Proxy) {
    let dir = tempfile::tempdir().unwrap();
    // The proxy is on 127.0.0.1: its X-Forwarded-Proto is believed.
    let s = Served::start_with(&dir.path().join("store"), &["--trust-proxy", "127.0.0.1"]);
    let heads = Arc::new(Mutex::new(Vec::new()));
    let upstream = tee(s.url.strip_prefix("http://").unwrap().to_string(), heads.clone());
    let (cert, key, der) = certificate(dir.path());
    let proxy = start(upstream, &cert, &key);
    let (url, ca, org) = (proxy.url.clone(), cert.as_path(), s.organiser.as_str());
    let agent = client(ca);

    // 1. The CLI over https: creates a game, issues a judge's token, appends.
    ok(cli(
        &url,
        ca,
        org,
        &["new", "g1", "--ruleset", "doomtrooper", "--seat", "p1=Ann", "--seat", "p2=Ben", "--judge", "Dana"],
    ));
    let issued: Value =
        serde_json::from_str(&ok(cli(&url, ca, org, &["--json", "token", "g1", "--judge", "Dana"]))).unwrap();
    let dana = issued["token"].as_str().unwrap().to_string();
    ok(cli(&url, ca, &dana, &["note", "g1", "--actor", "Dana", "through the proxy"]));
    assert_eq!(s.head("g1")["seq"], 1);

    // 2. A live stream gets an event appended after it opened at once:
    // long before the server's idle comment (every 15 s), which is what
    // a proxy that buffers would hold it back until (or longer).
    let (tx, rx) = mpsc::channel::<String>();
    let stream_url = format!("{url}/api/games/g1/stream?from=2");
    let streaming = agent.clone();
    std::thread::spawn(move || {
        let resp = streaming.get(&stream_url).call().unwrap();
        let _ = tx.send(format!("status {}", resp.status().as_u16()));
        for line in BufReader::new(resp.into_body().into_reader()).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let opened = rx.recv_timeout(Duration::from_secs(10)).expect("the stream's answer did not come through in 10 s");
    assert_eq!(opened, "status 200");
    let appended = Instant::now();
    ok(cli(&url, ca, &dana, &["note", "g1", "--actor", "Dana", "live"]));
    let data = loop {
        let line =
            rx.recv_timeout(Duration::from_secs(5)).expect("the new event did not come through the stream in 5 s");
        assert!(!line.starts_with(':'), "the idle comment came before the event");
        if let Some(d) = line.strip_prefix("data: ") {
            break serde_json::from_str::<Value>(d).unwrap();
        }
    };
    assert_eq!((data["seq"].as_u64(), data["action"]["text"].as_str()), (Some(2), Some("live")), "{data}");
    eprintln!("{url}: the event came through the stream {:?} after its append began", appended.elapsed());

    // 3. An import of several MiB passes (nginx's default is 1 MiB); bodies
    // over the server's limits get its own 413 JSON, not the proxy's page.
    // Notes of the longest text a note may have (128 bytes), 6,000 of them.
    let text = "x".repeat(128);
    let (_, v) = s.post(
        "/api/games",
        Some(org),
        &json!({"name": "big", "read": "public", "header": common::header(&["p1", "p2"], &["Dana"])}),
    );
    assert!(v["hash"].is_string(), "{v}");
    let judge = s.token("big", "judge", "Dana");
    let hash0 = v["hash"].as_str().unwrap();
    for batch in 0..6u64 {
        let events: Vec<Value> = (0..1000)
            .map(|_| json!({"actor": "Dana", "action": {"type": "note", "concerns": {"seq": 0, "hash": hash0}, "text": text}}))
            .collect();
        let (status, v) =
            s.post("/api/games/big/batch", Some(&judge), &json!({"events": events, "expect_seq": 1 + batch * 1000}));
        assert_eq!(status, 201, "{v}");
    }
    let (status, _, export) = s.get_text("/api/games/big/export", None);
    assert_eq!(status, 200);
    assert!(export.len() > 2 << 20, "the export is {} bytes", export.len());
    let file = dir.path().join("big.jsonl");
    std::fs::write(&file, &export).unwrap();
    ok(cli(&url, ca, org, &["import", file.to_str().unwrap(), "--as", "big-copy"]));
    assert_eq!(s.head("big-copy"), s.head("big"));

    let limits = [
        ("/api/games/g1/events", "application/json", arbiter::limits::MAX_REQUEST_BYTES),
        ("/api/games/huge/import", "application/jsonl", arbiter::limits::MAX_IMPORT_BYTES),
    ];
    for (to, kind, limit) in limits {
        let (status, body) = post_large(&url, to, org, kind, limit + 1, &der);
        assert_eq!(status, 413, "{to}: {body}");
        let v: Value = serde_json::from_str(&body).unwrap_or_else(|_| panic!("{to}: not the server's JSON: {body}"));
        assert_eq!(v["error"]["code"], "too_large", "{v}");
        assert!(v["error"]["message"].as_str().unwrap().contains(&limit.to_string()), "{v}");
    }
    assert_eq!(s.get("/api/games/huge", None).0, 404, "nothing was imported");

    // 4. The forwarded headers, for `serve --trust-proxy`: the pages' cookie
    // through the proxy, and what the proxy told the server about it.
    let mut resp = agent
        .post(&format!("{url}/api/session"))
        .header("Content-Type", "application/json")
        .send(json!({"token": dana}).to_string())
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let cookie = resp.headers().get("set-cookie").expect("a cookie").to_str().unwrap().to_string();
    let _ = resp.body_mut().read_to_string();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "{cookie}");
    // `Secure`: the trusted proxy said the page came over TLS.
    assert!(cookie.split("; ").any(|a| a == "Secure"), "{cookie}");
    // And a new token's sign-in link starts with https://.
    let mut resp = agent
        .post(&format!("{url}/api/games/g1/tokens"))
        .header("Authorization", &format!("Bearer {org}"))
        .header("Content-Type", "application/json")
        .send(json!({"judge": "Dana"}).to_string())
        .unwrap();
    let v: Value = serde_json::from_str(&resp.body_mut().read_to_string().unwrap()).unwrap();
    assert!(v["link"].as_str().is_some_and(|l| l.starts_with(&format!("{url}/games/g1/table#token="))), "{v}");
    let heads = heads.lock().unwrap();
    let session =
        heads.iter().rfind(|h| h.starts_with("post /api/session ")).expect("the session request reached the server");
    assert!(session.contains("\r\nx-forwarded-proto: https\r\n"), "{session}");
    assert!(session.contains("\r\nx-forwarded-for: 127.0.0.1\r\n"), "{session}");
    drop(proxy);
}

#[test]
fn nginx_from_docs_tls_md_passes_the_cli_live_streams_large_bodies_and_the_forwarded_headers() {
    // Debian puts nginx in /usr/sbin, which is not on a user's PATH.
    if std::path::Path::new(NGINX).exists() || common::has(common::Need::Program("nginx")) {
        through(nginx);
    }
}

#[test]
fn caddy_from_docs_tls_md_passes_the_cli_live_streams_large_bodies_and_the_forwarded_headers() {
    if common::has(common::Need::Program("caddy")) {
        through(caddy);
    }
}
