//! A headless chromium driven through chromedriver (WebDriver), for the
//! tests of the pages (tests/browser.rs, tests/tokens.rs). `.ci/run`
//! installs Debian's chromium and chromium-driver.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder};
use serde_json::{Value, json};

/// chromedriver, killed when dropped.
pub struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// chromedriver on a free port, and a WebDriver session of headless chromium.
pub async fn browser(profile: &std::path::Path) -> (Driver, Client) {
    for tool in ["/usr/bin/chromium", "/usr/bin/chromedriver"] {
        assert!(
            std::path::Path::new(tool).exists(),
            "{tool} is missing: .ci/run installs Debian's chromium and chromium-driver"
        );
    }
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let driver = Driver(
        Command::new("/usr/bin/chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({"binary": "/usr/bin/chromium", "args": [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
            format!("--user-data-dir={}", profile.display())]}),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        match ClientBuilder::new(connector)
            .capabilities(caps.clone())
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
        {
            Ok(client) => return (driver, client),
            Err(e) if Instant::now() > deadline => panic!("no WebDriver session: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}

/// Polls a script until it returns `want` (the page loads and follows the
/// stream asynchronously); fails with what it last saw. A script that
/// throws is polled again too: just after a `goto` the element it reads
/// may not be built yet (`querySelector(..)` is null), and on a busy
/// machine the first poll came before it (a floor page test failed so).
pub async fn wait_for(c: &Client, script: &str, want: Value) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let got = match c.execute(script, vec![]).await {
            Ok(got) => got,
            Err(e) => Value::String(format!("(the script threw: {e})")),
        };
        if got == want {
            return;
        }
        assert!(Instant::now() < deadline, "waited for `{script}` to be {want}, it is {got}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
