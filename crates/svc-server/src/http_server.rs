//! The HTTP server loop: HTTP/1.1 connections with a header timeout, an idle keep-alive timeout, a
//! request-body timeout and a cap on open connections, and graceful shutdown. `axum::serve` has none
//! of these settings, so connections are driven with hyper directly.
//!
//! A connection is, at any moment, waiting for a request (nothing of it has arrived), reading a
//! request head (some bytes arrived, the head is not complete), or busy (a request is being
//! answered: its body read, the handler run, the response written).
//!
//! - A new connection must deliver its first request head within the header timeout, counted from
//!   accept; otherwise it is closed.
//! - After a response, a kept-alive connection may wait for its next request for the idle timeout;
//!   once the first byte of that request arrives, its head must be complete within the header timeout.
//! - A request body must have fully arrived within the body timeout, counted from its head; otherwise
//!   the connection is closed without an answer.
//! - Busy connections have no deadline of their own.
//! - At the cap, a new connection is admitted by closing the connection that has been waiting (or
//!   reading a head) the longest, never a busy one: idle and slow-head connections cannot lock out
//!   health checks or real clients. When every connection is busy, new connections wait in the
//!   listen backlog until one finishes. At most one connection beyond the cap is held open.

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::ConnectInfo;
use axum::http::{Request, Response};
use hyper::body::{Body as HttpBody, Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, watch};
use tokio::time::{Instant, Sleep};
use tower::ServiceExt;

/// The largest default connection cap; a low file-descriptor limit lowers it (see
/// [`max_connections_for`]).
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// File descriptors left for everything that is not a client connection: database connections, the
/// listener, logs, the runtime.
const RESERVED_DESCRIPTORS: u64 = 64;
/// After an accept error such as "Too many open files", wait this long before trying again instead
/// of spinning; waiting clients stay in the listen backlog meanwhile.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);
/// The cap and accept-error warnings are logged at most this often.
const LOG_INTERVAL: Duration = Duration::from_secs(10);

/// How connections are bounded (`SVC_HEADER_TIMEOUT_SECS`, `SVC_IDLE_TIMEOUT_SECS`,
/// `SVC_BODY_TIMEOUT_SECS`, `SVC_MAX_CONNECTIONS`).
#[derive(Debug, Clone)]
pub struct ConnectionSettings {
    /// A new connection's first request head, or a later head from its first byte, must arrive
    /// within this.
    pub header_timeout: Duration,
    /// A kept-alive connection may wait this long for its next request.
    pub idle_timeout: Duration,
    /// A request body must have fully arrived this long after its head.
    pub body_timeout: Duration,
    /// Open connections at most.
    pub max_connections: usize,
}

impl ConnectionSettings {
    pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(30);
    /// Longer than the 60 s idle timeout of common load balancers, so that the balancer, not the
    /// server, closes an idle connection: a request sent as the server closes would be lost.
    pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(75);
    /// Five minutes: a 100 MB upload needs about 2.8 Mbit/s to make it; raise it for larger uploads
    /// over slower links.
    pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(300);
}

impl Default for ConnectionSettings {
    fn default() -> Self {
        ConnectionSettings {
            header_timeout: Self::DEFAULT_HEADER_TIMEOUT,
            idle_timeout: Self::DEFAULT_IDLE_TIMEOUT,
            body_timeout: Self::DEFAULT_BODY_TIMEOUT,
            max_connections: default_max_connections(),
        }
    }
}

/// The process's soft limit on open files, where the platform has one.
pub fn descriptor_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        // `None` is no limit.
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
        Some(limit.current.unwrap_or(u64::MAX))
    }
    #[cfg(not(unix))]
    None
}

/// The connection cap a file-descriptor limit allows: half of what is left after the reserve, since
/// a busy connection may hold a second descriptor (a blob file it streams to or from), and at most
/// [`DEFAULT_MAX_CONNECTIONS`].
pub fn max_connections_for(descriptor_limit: Option<u64>) -> usize {
    match descriptor_limit {
        Some(limit) => {
            (limit.saturating_sub(RESERVED_DESCRIPTORS) / 2).clamp(1, DEFAULT_MAX_CONNECTIONS as u64) as usize
        }
        None => DEFAULT_MAX_CONNECTIONS,
    }
}

/// The default cap, derived from this process's file-descriptor limit.
pub fn default_max_connections() -> usize {
    max_connections_for(descriptor_limit())
}

/// Serves `app` on `listener` until `shutdown` completes, then stops accepting, closes connections
/// that are not busy, lets busy ones finish their request, and returns when every connection has
/// closed. Handlers see the peer address as `ConnectInfo<SocketAddr>`.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    settings: ConnectionSettings,
    shutdown: impl Future<Output = ()> + Send,
) {
    // The semaphore's permits are the connection slots; `acquire_many` takes a u32.
    let max_connections = settings.max_connections.clamp(1, (u32::MAX as usize).min(Semaphore::MAX_PERMITS));
    let server = Arc::new(Server {
        settings,
        max_connections,
        slots: Arc::new(Semaphore::new(max_connections)),
        open: Mutex::new(HashMap::new()),
        next_id: AtomicU64::new(0),
        cap_log: LogThrottle::default(),
        accept_log: LogThrottle::default(),
    });
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut shutdown = pin!(shutdown);
    loop {
        let (stream, peer, permit) = tokio::select! {
            biased;
            () = &mut shutdown => break,
            admitted = server.admit(&listener) => admitted,
        };
        let (slot, tracked) = server.register(permit);
        tokio::spawn(connection(stream, peer, app.clone(), server.clone(), tracked, stop_rx.clone(), slot));
    }
    // New clients are refused from here on.
    drop(listener);
    stop_tx.send_replace(true);
    // Every connection holds a slot until it ends: all slots free means all connections closed.
    let _all = server.slots.acquire_many(max_connections as u32).await;
}

struct Server {
    settings: ConnectionSettings,
    max_connections: usize,
    slots: Arc<Semaphore>,
    open: Mutex<HashMap<u64, Arc<Tracked>>>,
    next_id: AtomicU64,
    cap_log: LogThrottle,
    accept_log: LogThrottle,
}

impl Server {
    /// The next connection with a slot for it. At the cap the new connection is held (the one
    /// descriptor beyond the cap) while a slot is freed or, when every connection is busy, until one
    /// finishes; no other connection is accepted meanwhile.
    async fn admit(&self, listener: &TcpListener) -> (TcpStream, SocketAddr, OwnedSemaphorePermit) {
        loop {
            let (stream, peer) = match listener.accept().await {
                Ok(accepted) => accepted,
                // The client gave up before we took it: nothing to do.
                Err(error) if is_connection_error(&error) => continue,
                Err(error) => {
                    self.accept_log.hit(|suppressed| {
                        tracing::error!(%error, suppressed, "cannot accept connections; retrying shortly");
                    });
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            };
            if let Ok(permit) = self.slots.clone().try_acquire_owned() {
                return (stream, peer, permit);
            }
            let freeing = self.free_a_slot();
            let max_connections = self.max_connections;
            self.cap_log.hit(|suppressed| {
                if freeing {
                    tracing::warn!(
                        max_connections,
                        suppressed,
                        "connection cap reached (SVC_MAX_CONNECTIONS): closing the longest-idle connection to admit a new one"
                    );
                } else {
                    tracing::warn!(
                        max_connections,
                        suppressed,
                        "connection cap reached (SVC_MAX_CONNECTIONS) and every connection is busy: new connections wait until one finishes"
                    );
                }
            });
            let permit = self.slots.clone().acquire_owned().await.expect("the slot semaphore is never closed");
            return (stream, peer, permit);
        }
    }

    /// Closes the connection that has been waiting for a request the longest; false when every
    /// connection is busy. A connection already closing frees a slot by itself.
    fn free_a_slot(&self) -> bool {
        let open = lock(&self.open);
        if open.values().any(|tracked| tracked.must_close()) {
            return true;
        }
        match open
            .values()
            .filter_map(|tracked| Some((tracked.waiting_since()?, tracked)))
            .min_by_key(|(since, _)| *since)
        {
            Some((_, tracked)) => {
                tracked.close();
                true
            }
            None => false,
        }
    }

    fn register(self: &Arc<Self>, permit: OwnedSemaphorePermit) -> (Slot, Arc<Tracked>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let tracked = Arc::new(Tracked::new());
        lock(&self.open).insert(id, tracked.clone());
        (Slot { server: self.clone(), id, _permit: permit }, tracked)
    }
}

/// Errors that concern one would-be connection, not the listener.
fn is_connection_error(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
    )
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A connection's place: out of the registry and its slot freed when the connection ends.
struct Slot {
    server: Arc<Server>,
    id: u64,
    _permit: OwnedSemaphorePermit,
}

impl Drop for Slot {
    fn drop(&mut self) {
        lock(&self.server.open).remove(&self.id);
    }
}

/// Drives one connection until it ends, a deadline passes, it is closed to free its slot, or the
/// server stops.
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    app: Router,
    server: Arc<Server>,
    tracked: Arc<Tracked>,
    mut stop: watch::Receiver<bool>,
    _slot: Slot,
) {
    let settings = &server.settings;
    let io = TokioIo::new(TrackedIo { stream, tracked: tracked.clone() });
    let service = ConnectionService { app, peer, tracked: tracked.clone(), body_timeout: settings.body_timeout };
    let mut builder = http1::Builder::new();
    // hyper's own header timeout also runs while a kept-alive connection waits; ours tells the two apart.
    builder.header_read_timeout(None);
    // hyper grows a connection's read buffer up to 400 KiB by default, and uploads filled it. Such
    // blocks sit in the allocator's 4 MiB pages (per thread and size), which go back only when
    // empty: with 64 uploads at once the resident memory stood at two to three times the live
    // bytes (bench/README.md, "The screenshot peak"). 64 KiB still holds any sensible request head.
    builder.max_buf_size(64 * 1024);
    let mut conn = pin!(builder.serve_connection(io, service));
    let mut timer = pin!(tokio::time::sleep_until(Instant::now()));
    let mut stopping = *stop.borrow_and_update();
    if stopping {
        return;
    }
    loop {
        if tracked.must_close() {
            return;
        }
        let deadline = tracked.deadline(settings);
        if let Some(deadline) = deadline {
            timer.as_mut().reset(deadline);
        }
        // The connection first: a change of phase it makes is then seen in the same pass, without
        // waking the task again.
        tokio::select! {
            biased;
            result = conn.as_mut() => {
                if let Err(error) = result {
                    tracing::debug!(%error, "connection ended with an error");
                }
                return;
            }
            () = tracked.changed.notified() => {}
            () = timer.as_mut(), if deadline.is_some() => {
                // The request may have arrived in the same instant.
                if tracked.deadline(settings).is_some_and(|deadline| deadline <= Instant::now()) {
                    tracing::debug!("closing a connection that sent no complete request in time");
                    return;
                }
            }
            _ = stop.changed(), if !stopping => {
                stopping = true;
                if !tracked.is_busy() {
                    return;
                }
                // Finish the request in flight, then close.
                conn.as_mut().graceful_shutdown();
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Nothing of the next request has arrived.
    Waiting,
    /// Part of a request head has arrived.
    ReadingHead,
    /// A request is being answered.
    Busy,
}

struct Phase {
    state: State,
    /// When `state` began.
    since: Instant,
    /// Whether a response has been given; before that, the header timeout counts from accept.
    answered: bool,
    in_flight: u32,
}

/// What the server knows of one connection.
struct Tracked {
    accepted: Instant,
    phase: Mutex<Phase>,
    /// Woken on every change of phase, and to close the connection.
    changed: Notify,
    /// Set to close the connection (its slot is needed, or its request body is too slow).
    close: AtomicBool,
}

impl Tracked {
    fn new() -> Self {
        let now = Instant::now();
        Tracked {
            accepted: now,
            phase: Mutex::new(Phase { state: State::Waiting, since: now, answered: false, in_flight: 0 }),
            changed: Notify::new(),
            close: AtomicBool::new(false),
        }
    }

    fn bytes_arrived(&self) {
        let mut phase = lock(&self.phase);
        if phase.state == State::Waiting {
            phase.state = State::ReadingHead;
            phase.since = Instant::now();
            drop(phase);
            self.changed.notify_one();
        }
    }

    fn request_started(&self) {
        let mut phase = lock(&self.phase);
        phase.in_flight += 1;
        phase.state = State::Busy;
        drop(phase);
        self.changed.notify_one();
    }

    fn request_finished(&self) {
        let mut phase = lock(&self.phase);
        phase.in_flight = phase.in_flight.saturating_sub(1);
        if phase.in_flight == 0 {
            phase.state = State::Waiting;
            phase.since = Instant::now();
            phase.answered = true;
        }
        drop(phase);
        self.changed.notify_one();
    }

    /// When the connection is closed unless its phase changes; `None` while busy.
    fn deadline(&self, settings: &ConnectionSettings) -> Option<Instant> {
        let phase = lock(&self.phase);
        match (phase.state, phase.answered) {
            (State::Busy, _) => None,
            (_, false) => Some(self.accepted + settings.header_timeout),
            (State::Waiting, true) => Some(phase.since + settings.idle_timeout),
            (State::ReadingHead, true) => Some(phase.since + settings.header_timeout),
        }
    }

    /// Since when the connection has had nothing to answer; `None` while busy.
    fn waiting_since(&self) -> Option<Instant> {
        let phase = lock(&self.phase);
        match (phase.state, phase.answered) {
            (State::Busy, _) => None,
            (_, false) => Some(self.accepted),
            (_, true) => Some(phase.since),
        }
    }

    fn is_busy(&self) -> bool {
        lock(&self.phase).state == State::Busy
    }

    fn close(&self) {
        self.close.store(true, Ordering::Release);
        self.changed.notify_one();
    }

    fn must_close(&self) -> bool {
        self.close.load(Ordering::Acquire)
    }
}

/// The socket, noting when the first byte of a request arrives.
struct TrackedIo {
    stream: TcpStream,
    tracked: Arc<Tracked>,
}

impl AsyncRead for TrackedIo {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let result = Pin::new(&mut self.stream).poll_read(cx, buf);
        if matches!(result, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.tracked.bytes_arrived();
        }
        result
    }
}

impl AsyncWrite for TrackedIo {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// The app for one connection: adds the peer address, times the request body, and marks the
/// connection busy from the request head until the response has been sent.
struct ConnectionService {
    app: Router,
    peer: SocketAddr,
    tracked: Arc<Tracked>,
    body_timeout: Duration,
}

impl hyper::service::Service<Request<Incoming>> for ConnectionService {
    type Response = Response<TrackedBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn call(&self, mut request: Request<Incoming>) -> Self::Future {
        let in_flight = InFlight::start(self.tracked.clone());
        request.extensions_mut().insert(ConnectInfo(self.peer));
        let deadline = Instant::now() + self.body_timeout;
        let tracked = self.tracked.clone();
        let request = request.map(|body| {
            if body.is_end_stream() {
                Body::new(body)
            } else {
                Body::new(TimedBody { inner: body, deadline, sleep: None, tracked })
            }
        });
        let app = self.app.clone();
        Box::pin(async move {
            let response = match app.oneshot(request).await {
                Ok(response) => response,
                Err(never) => match never {},
            };
            Ok(response.map(|body| TrackedBody { inner: body, _in_flight: in_flight }))
        })
    }
}

/// A request being answered; finished when dropped (with its response body, once sent).
struct InFlight(Arc<Tracked>);

impl InFlight {
    fn start(tracked: Arc<Tracked>) -> Self {
        tracked.request_started();
        InFlight(tracked)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.request_finished();
    }
}

/// A request body that must have fully arrived by `deadline`. Past it, the connection is closed and
/// the handler reading the body waits until it is dropped with the connection: no answer is sent.
struct TimedBody {
    inner: Incoming,
    deadline: Instant,
    /// Armed the first time the body is not ready, so a body that arrives at once costs no timer.
    sleep: Option<Pin<Box<Sleep>>>,
    tracked: Arc<Tracked>,
}

impl HttpBody for TimedBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = &mut *self;
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame);
        }
        let deadline = this.deadline;
        let sleep = this.sleep.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if sleep.as_mut().poll(cx).is_ready() && !this.tracked.must_close() {
            tracing::debug!("a request body did not arrive within the body timeout; closing the connection");
            this.tracked.close();
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A response body that keeps its request in flight until it has been sent (or dropped).
struct TrackedBody {
    inner: Body,
    _in_flight: InFlight,
}

impl HttpBody for TrackedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Lets a warning through at most once per [`LOG_INTERVAL`], with how many were held back since.
#[derive(Default)]
struct LogThrottle {
    last: Mutex<Option<Instant>>,
    suppressed: AtomicU64,
}

impl LogThrottle {
    fn hit(&self, log: impl FnOnce(u64)) {
        let now = Instant::now();
        {
            let mut last = lock(&self.last);
            if last.is_some_and(|at| now.duration_since(at) < LOG_INTERVAL) {
                self.suppressed.fetch_add(1, Ordering::Relaxed);
                return;
            }
            *last = Some(now);
        }
        log(self.suppressed.swap(0, Ordering::Relaxed));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_cap_leaves_descriptors_for_files_and_the_database() {
        // The limit of the reported incident: 256 descriptors.
        assert_eq!(max_connections_for(Some(256)), 96);
        assert_eq!(max_connections_for(Some(1024)), 480);
        assert_eq!(max_connections_for(Some(1 << 20)), DEFAULT_MAX_CONNECTIONS);
        assert_eq!(max_connections_for(Some(u64::MAX)), DEFAULT_MAX_CONNECTIONS);
        assert_eq!(max_connections_for(Some(10)), 1);
        assert_eq!(max_connections_for(None), DEFAULT_MAX_CONNECTIONS);
    }

    #[tokio::test]
    async fn the_log_throttle_counts_what_it_held_back() {
        let throttle = LogThrottle::default();
        let mut logged = Vec::new();
        for _ in 0..5 {
            throttle.hit(|suppressed| logged.push(suppressed));
        }
        assert_eq!(logged, vec![0]);
        assert_eq!(throttle.suppressed.load(Ordering::Relaxed), 4);
    }
}
