//! The CLI's client over TLS: `--server https://...` through a
//! TLS-terminating proxy (as Caddy or nginx would be, docs/tls.md) in front
//! of a real `arbiter serve`, with a self-signed certificate trusted through
//! `--ca-cert` (or `ARBITER_CA_CERT`), and refused without it; and the
//! pages' cookie, `Secure` only when a proxy the server trusts
//! (`--trust-proxy`) says the request came over TLS.

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Output};
use std::sync::Arc;

use common::server::Served;

/// A TLS proxy on a free port of 127.0.0.1 in front of `upstream` (host:port):
/// it decrypts and copies bytes both ways. Returns its port.
fn tls_proxy(upstream: String, cert: &rcgen::CertifiedKey<rcgen::KeyPair>) -> u16 {
    let chain = vec![cert.cert.der().clone()];
    let key = rustls::pki_types::PrivateKeyDer::try_from(cert.signing_key.serialize_der()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let (Ok(client), config, upstream) = (client, config.clone(), upstream.clone()) else { continue };
            std::thread::spawn(move || {
                let conn = rustls::ServerConnection::new(config).unwrap();
                let mut tls = rustls::StreamOwned::new(conn, client);
                let mut server = TcpStream::connect(&upstream).unwrap();
                // One request and its answer at a time (the CLI's way):
                // each side read with a short timeout in turn.
                let timeout = Some(std::time::Duration::from_millis(20));
                tls.sock.set_read_timeout(timeout).unwrap();
                server.set_read_timeout(timeout).unwrap();
                let mut buf = [0u8; 16384];
                loop {
                    match tls.read(&mut buf) {
                        Ok(0) => return,
                        Ok(n) => server.write_all(&buf[..n]).unwrap(),
                        Err(e) if would_block(&e) => {}
                        Err(_) => return,
                    }
                    match server.read(&mut buf) {
                        Ok(0) => return,
                        Ok(n) => {
                            if tls.write_all(&buf[..n]).and_then(|_| tls.flush()).is_err() {
                                return;
                            }
                        }
                        Err(e) if would_block(&e) => {}
                        Err(_) => return,
                    }
                }
            });
        }
    });
    port
}

fn would_block(e: &std::io::Error) -> bool {
    matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)
}

fn arbiter(args: &[&str], ca_env: Option<&std::path::Path>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_arbiter"));
    cmd.env_remove("ARBITER_DATA").env_remove("ARBITER_SERVER").env_remove("ARBITER_CA_CERT");
    if let Some(ca) = ca_env {
        cmd.env("ARBITER_CA_CERT", ca);
    }
    cmd.args(args).output().unwrap()
}

#[test]
fn the_cli_reaches_a_server_behind_a_tls_proxy_trusting_the_ca_it_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let s = Served::start(&dir.path().join("store"));
    s.doomtrooper("g1", "public");
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, cert.cert.pem()).unwrap();
    let port = tls_proxy(s.url.strip_prefix("http://").unwrap().to_string(), &cert);
    let url = format!("https://localhost:{port}");
    let games = |out: &Output| {
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout.clone()).unwrap()
    };
    let ca_flag = ca.to_str().unwrap();
    let by_flag = games(&arbiter(&["--server", &url, "--token", &s.organiser, "--ca-cert", ca_flag, "games"], None));
    assert!(by_flag.contains("g1"), "{by_flag}");
    let by_env = games(&arbiter(&["--server", &url, "--token", &s.organiser, "games"], Some(&ca)));
    assert_eq!(by_env, by_flag);
    // An append through TLS, with the seat's token.
    let (_, v) = s.post("/api/games/g1/tokens", Some(&s.organiser), &serde_json::json!({"judge": "Dana"}));
    let dana = v["token"].as_str().unwrap();
    let out = arbiter(
        &["--server", &url, "--token", dana, "--ca-cert", ca_flag, "note", "g1", "--actor", "Dana", "over TLS"],
        None,
    );
    let _ = games(&out);
    let (_, head) = s.get("/api/games/g1", None);
    assert_eq!(head["seq"], 1, "{head}");

    // Not trusted (the public CAs did not sign it): refused, saying why.
    let out = arbiter(&["--server", &url, "--token", &s.organiser, "games"], None);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr).to_lowercase();
    assert!(err.contains("cannot reach the server") && err.contains("certificate"), "{err}");
    // A --ca-cert that is no certificate: a clear error, before any request.
    let junk = dir.path().join("junk.pem");
    std::fs::write(&junk, "not a certificate").unwrap();
    for (file, says) in [(junk.to_str().unwrap(), "no certificate in it"), ("/nonexistent/ca.pem", "No such file")] {
        let out = arbiter(&["--server", &url, "--ca-cert", file, "games"], None);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--ca-cert") && err.contains(says), "{err}");
    }
}

/// The `Set-Cookie` of `POST /api/session` (and of `DELETE`) sent to the
/// server at `url` from 127.0.0.1 with `X-Forwarded-Proto: proto`, if any.
fn session_cookies(url: &str, token: &str, proto: Option<&str>) -> [String; 2] {
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let cookie = |resp: ureq::http::Response<ureq::Body>| {
        assert_eq!(resp.status().as_u16(), 200);
        resp.headers().get("set-cookie").unwrap().to_str().unwrap().to_string()
    };
    let mut post = agent.post(&format!("{url}/api/session"));
    let mut delete = agent.delete(&format!("{url}/api/session"));
    if let Some(proto) = proto {
        post = post.header("X-Forwarded-Proto", proto);
        delete = delete.header("X-Forwarded-Proto", proto);
    }
    let token = serde_json::json!({ "token": token });
    [cookie(post.send_json(&token).unwrap()), cookie(delete.call().unwrap())]
}

/// The sign-in link a new token comes with (and its QR code) starts with
/// `https://` when a trusted proxy says the organiser reached it over TLS:
/// a seat scanning it then goes where the organiser went. Otherwise
/// `http://`, whatever an untrusted peer's header says.
#[test]
fn the_sign_in_link_is_https_when_a_trusted_proxy_says_so() {
    let link = |s: &Served, proto: Option<&str>| {
        let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
        let mut post = agent
            .post(&format!("{}/api/games/g1/tokens", s.url))
            .header("Authorization", &format!("Bearer {}", s.organiser));
        if let Some(proto) = proto {
            post = post.header("X-Forwarded-Proto", proto);
        }
        let mut resp = post.send_json(serde_json::json!({"judge": "Dana"})).unwrap();
        assert_eq!(resp.status().as_u16(), 201);
        let v: serde_json::Value = serde_json::from_str(&resp.body_mut().read_to_string().unwrap()).unwrap();
        v["link"].as_str().unwrap().to_string()
    };
    let dir = tempfile::tempdir().unwrap();
    let trusted = Served::start_with(dir.path(), &["--trust-proxy", "127.0.0.1"]);
    trusted.doomtrooper("g1", "public");
    assert!(link(&trusted, Some("https")).starts_with("https://"), "{}", link(&trusted, Some("https")));
    assert!(link(&trusted, None).starts_with("http://"));
    let dir = tempfile::tempdir().unwrap();
    let untrusted = Served::start_with(dir.path(), &[]);
    untrusted.doomtrooper("g1", "public");
    assert!(link(&untrusted, Some("https")).starts_with("http://"));
}

#[test]
fn the_cookie_is_secure_only_when_a_trusted_proxy_says_https() {
    let secure = |cookie: &str| cookie.split("; ").any(|a| a == "Secure");
    // The tests' requests come from 127.0.0.1: a proxy there is trusted
    // (named alone, and as a range among others).
    for trust in ["127.0.0.1", "10.0.0.0/8,127.0.0.0/8"] {
        let dir = tempfile::tempdir().unwrap();
        let s = Served::start_with(dir.path(), &["--trust-proxy", trust]);
        for cookie in session_cookies(&s.url, &s.organiser, Some("https")) {
            assert!(secure(&cookie), "--trust-proxy {trust}: {cookie}");
        }
        for proto in [None, Some("http"), Some("https, http")] {
            for cookie in session_cookies(&s.url, &s.organiser, proto) {
                assert!(!secure(&cookie), "--trust-proxy {trust}, X-Forwarded-Proto {proto:?}: {cookie}");
            }
        }
    }
    // From a peer that is not trusted (none, or not this one), the header
    // changes nothing.
    for trust in [&[][..], &["--trust-proxy", "10.0.0.0/8"], &["--trust-proxy", "::1", "--trust-proxy", "127.0.0.2"]] {
        let dir = tempfile::tempdir().unwrap();
        let s = Served::start_with(dir.path(), trust);
        for proto in [None, Some("https")] {
            for cookie in session_cookies(&s.url, &s.organiser, proto) {
                assert!(!secure(&cookie), "{trust:?}, X-Forwarded-Proto {proto:?}: {cookie}");
            }
        }
    }
    // What is not an address or a range is refused at start.
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let out = arbiter(&["--data", data, "serve", "--listen", "127.0.0.1:0", "--trust-proxy", "proxy.local"], None);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("not an IP address or a CIDR range"), "{out:?}");
}
