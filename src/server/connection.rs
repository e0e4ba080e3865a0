//! One client connection: HTTP/1.1 through hyper with a timeout on each
//! way a client can stall (the head, the body, an idle keep-alive), a
//! graceful close when the server stops, the answer to a connection past
//! the cap, and which peers' `X-Forwarded-Proto` is believed (`--trust-proxy`).

use std::convert::Infallible;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::http::{HeaderValue, Request, StatusCode, header};
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::service::Service;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use socket2::SockRef;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{Semaphore, watch};
use tokio::time::{Instant, Sleep};

use super::Connections;

/// Serves one connection until the client closes it, a timeout closes it,
/// or the server stops (a graceful close: the request in flight finishes).
/// Returns why the server cut it, if it did for a reason that is counted
/// (`observe::CUT_REASONS`): "head_timeout" (a request's head did not
/// arrive in time).
pub async fn serve(
    stream: TcpStream,
    app: axum::Router,
    limits: Connections,
    mut stopping: watch::Receiver<bool>,
) -> Option<&'static str> {
    let activity = Arc::new(Activity::default());
    // Asked once per connection: the peer does not change.
    let proxy = stream.peer_addr().is_ok_and(|peer| limits.trusted_proxies.iter().any(|r| r.contains(peer.ip())));
    let io = TokioIo::new(Watched { inner: stream, activity: activity.clone(), replacing: None });
    let body_timeout = limits.body_timeout;
    let on_request = activity.clone();
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let busy = on_request.start();
        let mut req = req.map(|body| Body::new(Deadline::new(body, body_timeout)));
        if proxy && forwarded_https(req.headers()) {
            req.extensions_mut().insert(ThroughTls);
        }
        let answer = TowerToHyperService::new(app.clone()).call(req);
        async move {
            let Ok(mut response) = answer.await;
            if response.status() == StatusCode::REQUEST_TIMEOUT {
                // The rest of the body may never come: do not wait to read it.
                response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            // The request is in flight until its answer is written (a live
            // stream's, until it ends).
            Ok::<_, Infallible>(response.map(|body| Body::new(Answer { inner: body, _busy: busy })))
        }
    });
    let conn = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .serve_connection(io, service);
    let mut conn = std::pin::pin!(conn);
    let mut idle = std::pin::pin!(activity.idle(limits.idle_timeout));
    let mut closing = *stopping.borrow_and_update();
    if closing {
        conn.as_mut().graceful_shutdown();
    }
    loop {
        tokio::select! {
            ended = conn.as_mut() => {
                return ended.err().filter(hyper::Error::is_timeout).map(|_| "head_timeout");
            }
            // Nothing in flight: nothing is lost by dropping it.
            _ = &mut idle => return None,
            changed = stopping.changed(), if !closing => {
                closing = true;
                if changed.is_ok() {
                    conn.as_mut().graceful_shutdown();
                }
            }
        }
    }
}

/// A request that came to a trusted proxy over TLS (`--trust-proxy`, and
/// the proxy said `X-Forwarded-Proto: https`): the pages' cookie it gets
/// is `Secure`. No other request carries it, whatever its headers say.
#[derive(Clone, Copy, Debug)]
pub struct ThroughTls;

/// The proxy said the client reached it over TLS. Proxies that append to
/// the header add their own value last, so the last one is the trusted
/// proxy's (a proxy in front of it could say anything).
fn forwarded_https(headers: &axum::http::HeaderMap) -> bool {
    let last = headers.get_all("x-forwarded-proto").iter().next_back();
    let last = last.and_then(|v| v.to_str().ok()).and_then(|v| v.rsplit(',').next());
    last.is_some_and(|v| v.trim().eq_ignore_ascii_case("https"))
}

/// A peer whose `X-Forwarded-Proto` is believed (`arbiter serve
/// --trust-proxy`): one address (`127.0.0.1`, `::1`) or a CIDR range
/// (`10.0.0.0/8`, `fd00::/8`). An IPv4 peer on an IPv6 socket
/// (`::ffff:10.1.2.3`) is matched as the IPv4 address it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProxyRange {
    addr: IpAddr,
    bits: u8,
}

/// `--trust-proxy` that is not an address or a CIDR range.
#[derive(Debug, thiserror::Error)]
#[error("{0:?} is not an IP address or a CIDR range (such as 127.0.0.1, ::1 or 10.0.0.0/8)")]
pub struct NotARange(String);

impl std::str::FromStr for ProxyRange {
    type Err = NotARange;

    fn from_str(text: &str) -> Result<ProxyRange, NotARange> {
        let bad = || NotARange(text.to_string());
        let (addr, bits) = match text.trim().split_once('/') {
            Some((addr, bits)) => (addr, Some(bits)),
            None => (text.trim(), None),
        };
        let addr: IpAddr = addr.parse().map_err(|_| bad())?;
        let addr = addr.to_canonical();
        let most = if addr.is_ipv4() { 32 } else { 128 };
        let bits = match bits {
            Some(bits) => bits.parse::<u8>().ok().filter(|b| *b <= most).ok_or_else(bad)?,
            None => most,
        };
        Ok(ProxyRange { addr, bits })
    }
}

impl ProxyRange {
    /// `ip` is in the range.
    pub fn contains(&self, ip: IpAddr) -> bool {
        // The first `bits` bits, as a number of the address's width.
        let prefix = |bits: u32, width: u32, n: u128| if bits == 0 { 0 } else { n >> (width - bits) };
        let bits = u32::from(self.bits);
        match (self.addr, ip.to_canonical()) {
            (IpAddr::V4(a), IpAddr::V4(b)) => {
                prefix(bits, 32, u32::from(a).into()) == prefix(bits, 32, u32::from(b).into())
            }
            (IpAddr::V6(a), IpAddr::V6(b)) => prefix(bits, 128, u128::from(a)) == prefix(bits, 128, u128::from(b)),
            _ => false,
        }
    }
}

/// Past the cap: a 503 in the JSON error body, then closed. At most
/// `MAX_REFUSING` at once, each for at most a second.
pub fn refuse(stream: TcpStream, refusing: &Arc<Semaphore>) {
    let Ok(permit) = refusing.clone().try_acquire_owned() else { return };
    tokio::spawn(async move {
        let _permit = permit;
        let body = r#"{"error":{"code":"busy","message":"too many connections are open; retry shortly"}}"#;
        let answer = format!(
            "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nretry-after: 1\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = tokio::time::timeout(Duration::from_secs(1), async {
            let mut answer = answer.as_bytes();
            while !answer.is_empty() {
                stream.writable().await?;
                match stream.try_write(answer) {
                    Ok(n) => answer = &answer[n..],
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e),
                }
            }
            shutdown_write(&stream);
            // Read what the client sent until it closes: closing with
            // unread bytes would reset the connection and lose the answer.
            let mut sink = [0u8; 4096];
            loop {
                stream.readable().await?;
                match stream.try_read(&mut sink) {
                    Ok(0) => return Ok(()),
                    Ok(_) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e),
                }
            }
        })
        .await;
    });
}

/// Says the answer is complete (FIN) while still reading. Best effort: a
/// socket already gone has nothing left to say.
fn shutdown_write(stream: &TcpStream) {
    let _ = SockRef::from(stream).shutdown(std::net::Shutdown::Write);
}

/// TCP_USER_TIMEOUT: the kernel drops a connection whose sent bytes stay
/// unacknowledged this long (a client gone without a word). Best effort.
pub fn unacked_write_timeout(stream: &TcpStream, after: Duration) {
    let _ = SockRef::from(stream).set_tcp_user_timeout(Some(after));
}

/// What a connection is doing, for its idle timeout.
#[derive(Default)]
struct Activity {
    /// Requests whose answer is not yet written.
    in_flight: AtomicUsize,
    /// Bumped on every read and every request started or ended.
    seen: AtomicU64,
}

impl Activity {
    fn start(self: &Arc<Self>) -> Busy {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        self.seen.fetch_add(1, Ordering::SeqCst);
        Busy(self.clone())
    }

    /// Completes once a whole `timeout` passed with nothing in flight and
    /// nothing received: within `timeout` to twice it of going idle.
    async fn idle(&self, timeout: Duration) {
        loop {
            let seen = self.seen.load(Ordering::SeqCst);
            tokio::time::sleep(timeout).await;
            if self.in_flight.load(Ordering::SeqCst) == 0 && self.seen.load(Ordering::SeqCst) == seen {
                return;
            }
        }
    }
}

/// A request in flight.
struct Busy(Arc<Activity>);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
        self.0.seen.fetch_add(1, Ordering::SeqCst);
    }
}

/// The socket, noting each read in the connection's activity, and
/// putting the JSON error body in hyper's own answer to a request it
/// could not parse.
///
/// hyper (1.x) answers a request it cannot parse by itself, before any
/// service sees it, with a bare head and no body (`Conn::on_parse_error`
/// writes the head `role::Server::on_error` makes: 400, 414 or 431), and
/// has no hook to answer otherwise. That answer is recognised here, on its
/// way to the socket, and the same status with the JSON body is written
/// instead. hyper closes the connection after it.
struct Watched {
    inner: TcpStream,
    activity: Arc<Activity>,
    /// The answer being written in place of hyper's bare one.
    replacing: Option<Replacing>,
}

/// Our answer written in place of hyper's bare one: how much of it is
/// written, and how many bytes of hyper's it stands for.
struct Replacing {
    ours: Vec<u8>,
    written: usize,
    theirs: usize,
}

/// The status of hyper's bare answer to a request it could not parse, if
/// `buf` is one: the whole of it a head of status 400, 414 or 431 with
/// `content-length: 0`. None of this server's own answers is: every
/// refusal of the router has the JSON body.
fn bare_answer(buf: &[u8]) -> Option<StatusCode> {
    // Most writes are answers' bodies and live streams' events: ruled out
    // by their first bytes.
    if !buf.starts_with(b"HTTP/1.1 4") || buf.len() > 512 {
        return None;
    }
    let head = std::str::from_utf8(buf).ok()?.strip_suffix("\r\n\r\n")?;
    let mut lines = head.split("\r\n");
    let status = lines.next()?.strip_prefix("HTTP/1.1 ")?.split(' ').next()?;
    let status = match status {
        "400" => StatusCode::BAD_REQUEST,
        "414" => StatusCode::URI_TOO_LONG,
        "431" => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        _ => return None,
    };
    lines.any(|l| l.eq_ignore_ascii_case("content-length: 0")).then_some(status)
}

/// The answer written in place of hyper's bare one of `status`.
fn parse_error_answer(status: StatusCode) -> Vec<u8> {
    let message = match status {
        StatusCode::URI_TOO_LONG => "the request line is too long (over 64 KiB)",
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => {
            "the request's head is too large (over 100 headers, or about 400 KiB)"
        }
        _ => {
            "the request is not HTTP/1.1 this server can read: a malformed request line, or a malformed or repeated header"
        }
    };
    let body = serde_json::json!({"error": {"code": "bad_request", "message": message}}).to_string();
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

impl Watched {
    /// Writes our answer for `buf` if `buf` is hyper's bare one (or the
    /// rest of it, if it was begun): Some with how many of hyper's bytes
    /// are done (all of them, once ours is written whole); None to write
    /// `buf` as it is.
    fn poll_replace(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Option<Poll<std::io::Result<usize>>> {
        if self.replacing.is_none() {
            let status = bare_answer(buf)?;
            self.replacing = Some(Replacing { ours: parse_error_answer(status), written: 0, theirs: buf.len() });
        }
        let replacing = self.replacing.as_mut().expect("set above");
        while replacing.written < replacing.ours.len() {
            match Pin::new(&mut self.inner).poll_write(cx, &replacing.ours[replacing.written..]) {
                Poll::Ready(Ok(0)) => return Some(Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()))),
                Poll::Ready(Ok(n)) => replacing.written += n,
                Poll::Ready(Err(e)) => return Some(Poll::Ready(Err(e))),
                // hyper writes the same bytes again when the socket is ready.
                Poll::Pending => return Some(Poll::Pending),
            }
        }
        let theirs = replacing.theirs;
        self.replacing = None;
        Some(Poll::Ready(Ok(theirs)))
    }
}

impl AsyncRead for Watched {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let read = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.seen.fetch_add(1, Ordering::SeqCst);
        }
        read
    }
}

impl AsyncWrite for Watched {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        if let Some(done) = self.poll_replace(cx, buf) {
            return done;
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        // hyper's bare answer is a head alone: one buffer.
        let mut full = bufs.iter().filter(|b| !b.is_empty());
        if let (Some(only), None) = (full.next(), full.next())
            && let Some(done) = self.poll_replace(cx, only)
        {
            return done;
        }
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// A request body that must arrive whole by a deadline.
struct Deadline {
    inner: Incoming,
    deadline: Instant,
    timeout: Duration,
    /// Armed only once the body is waited for (most requests have it at once).
    sleep: Option<Pin<Box<Sleep>>>,
}

impl Deadline {
    fn new(inner: Incoming, timeout: Duration) -> Deadline {
        Deadline { inner, deadline: Instant::now() + timeout, timeout, sleep: None }
    }
}

/// The error a body that did not arrive in time ends with (`body::raw_body`
/// answers it 408).
#[derive(Debug, thiserror::Error)]
#[error("the request's body did not arrive within {0:?}")]
pub struct BodyTimeout(pub Duration);

impl HttpBody for Deadline {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        let deadline = self.deadline;
        let sleep = self.sleep.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(BodyTimeout(self.timeout))))),
            Poll::Pending => Poll::Pending,
        }
    }
    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }
    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A response body that keeps its request counted in flight until written.
struct Answer {
    inner: Body,
    _busy: Busy,
}

impl HttpBody for Answer {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }
    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }
    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proxy_range_is_an_address_or_a_cidr_range_and_matches_mapped_ipv4() {
        let range = |s: &str| s.parse::<ProxyRange>().unwrap();
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert!(range("127.0.0.1").contains(ip("127.0.0.1")));
        assert!(!range("127.0.0.1").contains(ip("127.0.0.2")));
        assert!(range("10.0.0.0/8").contains(ip("10.200.3.4")));
        assert!(!range("10.0.0.0/8").contains(ip("11.0.0.1")));
        assert!(range("0.0.0.0/0").contains(ip("203.0.113.9")));
        assert!(!range("0.0.0.0/0").contains(ip("::1")), "an IPv4 range holds no IPv6 peer");
        assert!(range("::1").contains(ip("::1")));
        assert!(range("fd00::/8").contains(ip("fd12:3456::1")));
        assert!(!range("fd00::/8").contains(ip("fe80::1")));
        // An IPv4 peer on a socket bound to [::] is seen as ::ffff:a.b.c.d.
        assert!(range("192.168.1.0/24").contains(ip("::ffff:192.168.1.7")));
        assert!(range("::ffff:127.0.0.1").contains(ip("127.0.0.1")));
        for bad in ["", "localhost", "10.0.0.0/33", "::1/129", "10.0.0.0/x", "10.0.0/8"] {
            assert!(bad.parse::<ProxyRange>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn only_the_last_forwarded_proto_counts() {
        let headers = |values: &[&str]| {
            let mut h = axum::http::HeaderMap::new();
            for v in values {
                h.append("x-forwarded-proto", HeaderValue::from_str(v).unwrap());
            }
            h
        };
        assert!(forwarded_https(&headers(&["https"])));
        assert!(forwarded_https(&headers(&["HTTPS"])));
        assert!(forwarded_https(&headers(&["http, https"])));
        assert!(forwarded_https(&headers(&["http", "https"])));
        assert!(!forwarded_https(&headers(&["https, http"])));
        assert!(!forwarded_https(&headers(&["https", "http"])));
        assert!(!forwarded_https(&headers(&[])));
        assert!(!forwarded_https(&headers(&["wss"])));
    }
}
