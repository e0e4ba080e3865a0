//! One client connection: HTTP/1.1 through hyper with a timeout on each
//! way a client can stall (the head, the body, an idle keep-alive), a
//! graceful close when the server stops, and the answer to a connection
//! past the cap.

use std::convert::Infallible;
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
    let io = TokioIo::new(Watched { inner: stream, activity: activity.clone() });
    let body_timeout = limits.body_timeout;
    let on_request = activity.clone();
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let busy = on_request.start();
        let req = req.map(|body| Body::new(Deadline::new(body, body_timeout)));
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

/// The socket, noting each read in the connection's activity.
struct Watched {
    inner: TcpStream,
    activity: Arc<Activity>,
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
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
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
