//! A client of `arbiter serve`, for `--server URL`: every verb that touches
//! the store sends its request here instead. Errors come back as the
//! record layer's errors, so the exit codes and messages are the same as
//! against a local store.

use std::path::Path;

use anyhow::{Context, anyhow};
use arbiter::event::check_game_name;
use arbiter::record::RecordError;
use serde_json::Value;

/// A refusal by the server's access rules (401/403): exit code 1.
#[derive(Debug, thiserror::Error)]
#[error("{code}: {message}")]
pub struct Denied {
    pub code: String,
    pub message: String,
}

#[derive(Clone)]
pub struct Client {
    base: String,
    token: Option<String>,
    agent: ureq::Agent,
}

impl Client {
    /// A client of the server at `base` (http:// or https://; https is
    /// checked against the public CAs, or only those in `ca_cert`, a PEM file).
    pub fn new(base: &str, token: Option<String>, ca_cert: Option<&Path>) -> anyhow::Result<Client> {
        if !base.starts_with("http://") && !base.starts_with("https://") {
            anyhow::bail!("--server must be an http:// or https:// URL, not {base:?}");
        }
        let mut tls = ureq::tls::TlsConfig::builder();
        if let Some(file) = ca_cert {
            tls = tls.root_certs(ureq::tls::RootCerts::new_with_certs(&ca_certs(file)?));
        }
        let agent = ureq::Agent::config_builder().http_status_as_error(false).tls_config(tls.build()).build().into();
        Ok(Client { base: base.trim_end_matches('/').to_string(), token, agent })
    }

    /// The same server, with another token.
    pub fn with_token(&self, token: &str) -> Client {
        Client { base: self.base.clone(), token: Some(token.to_string()), agent: self.agent.clone() }
    }

    /// The server's URL, as --server gave it (less a trailing `/`).
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The API path of a game, e.g. `/api/games/g1/state`.
    pub fn game(&self, game: &str, rest: &str) -> anyhow::Result<String> {
        // A name that is not a valid game name cannot name a stored game.
        check_game_name(game).map_err(|_| anyhow::Error::new(RecordError::NoSuchGame(game.to_string())))?;
        Ok(format!("/api/games/{game}{rest}"))
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn auth<B>(&self, req: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        match &self.token {
            Some(t) => req.header("Authorization", &format!("Bearer {t}")),
            None => req,
        }
    }

    pub fn get(&self, path: &str) -> anyhow::Result<Value> {
        let resp = self.auth(self.agent.get(&self.url(path))).call().map_err(|e| self.unreachable(e))?;
        answer(resp)
    }

    /// A body as bytes (exports).
    pub fn get_bytes(&self, path: &str) -> anyhow::Result<Vec<u8>> {
        let mut resp = self.auth(self.agent.get(&self.url(path))).call().map_err(|e| self.unreachable(e))?;
        if !resp.status().is_success() {
            return answer(resp).map(|_| Vec::new());
        }
        resp.body_mut()
            .with_config()
            .limit(arbiter::limits::MAX_IMPORT_BYTES as u64)
            .read_to_vec()
            .context("cannot read the server's answer")
    }

    /// A live stream (Server-Sent Events), read line by line as it comes.
    pub fn stream(&self, path: &str) -> anyhow::Result<impl std::io::BufRead + use<>> {
        let req = self.auth(self.agent.get(&self.url(path))).header("Accept", "text/event-stream");
        let resp = req.call().map_err(|e| self.unreachable(e))?;
        if !resp.status().is_success() {
            answer(resp)?;
            anyhow::bail!("the server did not open the live stream");
        }
        Ok(std::io::BufReader::new(resp.into_body().into_reader()))
    }

    pub fn post(&self, path: &str, body: &Value) -> anyhow::Result<Value> {
        let resp = self.auth(self.agent.post(&self.url(path))).send_json(body).map_err(|e| self.unreachable(e))?;
        answer(resp)
    }

    pub fn post_bytes(&self, path: &str, media: &str, bytes: &[u8]) -> anyhow::Result<Value> {
        let req = self.auth(self.agent.post(&self.url(path))).header("Content-Type", media);
        answer(req.send(bytes).map_err(|e| self.unreachable(e))?)
    }

    pub fn put(&self, path: &str, body: &Value) -> anyhow::Result<Value> {
        let resp = self.auth(self.agent.put(&self.url(path))).send_json(body).map_err(|e| self.unreachable(e))?;
        answer(resp)
    }

    fn unreachable(&self, e: ureq::Error) -> anyhow::Error {
        anyhow::Error::new(RecordError::Io(format!("cannot reach the server at {}: {e}", self.base)))
    }
}

/// The certificates of a PEM file (`--ca-cert`); at least one.
fn ca_certs(file: &Path) -> anyhow::Result<Vec<ureq::tls::Certificate<'static>>> {
    let usage = |why: String| anyhow::Error::new(RecordError::Input(format!("--ca-cert {}: {why}", file.display())));
    let pem = std::fs::read(file).map_err(|e| usage(e.to_string()))?;
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(&pem) {
        if let ureq::tls::PemItem::Certificate(cert) = item.map_err(|e| usage(e.to_string()))? {
            certs.push(cert);
        }
    }
    if certs.is_empty() {
        return Err(usage("no certificate in it (a PEM file: -----BEGIN CERTIFICATE-----)".into()));
    }
    Ok(certs)
}

fn answer(mut resp: ureq::http::Response<ureq::Body>) -> anyhow::Result<Value> {
    let status = resp.status();
    let body: Value = resp
        .body_mut()
        .read_json()
        .map_err(|e| anyhow::Error::new(RecordError::Io(format!("the server answered {status} without JSON: {e}"))))?;
    if status.is_success() {
        return Ok(body);
    }
    if let Some(e) = RecordError::from_json(&body) {
        return Err(anyhow::Error::new(e));
    }
    let code = body["error"]["code"].as_str().unwrap_or("unknown").to_string();
    let message = body["error"]["message"].as_str().unwrap_or_default().to_string();
    if status == 401 || status == 403 {
        return Err(anyhow::Error::new(Denied { code, message }));
    }
    Err(anyhow!("the server answered {status}: {code}: {message}"))
}
