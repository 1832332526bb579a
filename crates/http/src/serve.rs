//! Serving a router on a TCP listener with the limits a small machine needs against slow and
//! crowded clients (`axum::serve` has none of them):
//!
//! - a connection must send a request's headers within `header_read_timeout`, also between
//!   two requests on a kept-alive connection, so half-open and slow-header connections close;
//!   while it sends a body, it may not pause longer than that either;
//! - a response must have started within `request_timeout` of the request's end (a large
//!   upload on a slow line is not cut off while it arrives; a stream may go on after);
//! - at most `max_connections` at once. When full, the connection idle the longest (no request
//!   in flight) is closed to make room for the new one; when every connection is busy, the new
//!   one gets a `503` problem and is closed. Load is shed, never queued;
//! - a response sent before its request's body arrived (a `401` to a POST) says
//!   `connection: close`, as the connection is closed after it.
//!
//! Each request carries its [`ClientAddress`] (the peer, or what a trusted proxy says), which
//! the sign-in limit counts by. Routes and what they answer live in the adapters, not here.

use std::{
    collections::HashMap,
    future::Future,
    net::{IpAddr, SocketAddr},
    pin::Pin,
    sync::{
        Arc, Mutex, MutexGuard, PoisonError,
        atomic::{AtomicBool, Ordering},
    },
    task::{Context, Poll},
    time::{Duration, Instant},
};

use axum::{
    Router,
    body::Body,
    http::{HeaderMap, HeaderValue, Request, Response, StatusCode, header},
};
use hyper_util::rt::{TokioIo, TokioTimer};
use ops::{OpError, Text};
use tokio::{io::AsyncWriteExt as _, net::TcpListener, sync::Notify};

use crate::problem::{PROBLEM_CONTENT_TYPE, problem_body, problem_response};

/// The limits of [`serve`].
#[derive(Clone, Debug)]
pub struct ServeConfig {
    pub max_connections: usize,
    pub header_read_timeout: Duration,
    pub request_timeout: Duration,
    /// Peers whose `X-Forwarded-For` is believed: the reverse proxies in front of Exhale.
    pub trusted_proxies: Vec<IpAddr>,
}

impl Default for ServeConfig {
    /// Room for a household's browsers and agents on a machine whose default file limit is
    /// 1,024; timeouts long enough for a phone on a bad network.
    fn default() -> Self {
        Self {
            max_connections: 512,
            header_read_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            trusted_proxies: Vec::new(),
        }
    }
}

/// Where a request comes from: the connection's peer, or the address a trusted proxy put last
/// in `X-Forwarded-For`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientAddress(pub IpAddr);

impl ClientAddress {
    fn of(peer: IpAddr, headers: &HeaderMap, trusted_proxies: &[IpAddr]) -> Self {
        if !trusted_proxies.contains(&peer) {
            return Self(peer);
        }
        let forwarded = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .filter_map(|entry| entry.trim().parse::<IpAddr>().ok())
            .next_back();
        Self(forwarded.unwrap_or(peer))
    }
}

/// Serves `router` on `listener` until `shutdown` completes, then lets requests in flight
/// finish for up to five seconds (an event stream never does).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    config: ServeConfig,
    shutdown: impl Future<Output = ()>,
) {
    let connections = Arc::new(Connections::default());
    let config = Arc::new(config);
    let mut http1 = hyper::server::conn::http1::Builder::new();
    http1.timer(TokioTimer::new()).header_read_timeout(config.header_read_timeout);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    // Out of file descriptors, most likely: wait for some to close rather
                    // than spin.
                    tracing::warn!(error = %err, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Some(slot) = connections.open(config.max_connections) else {
            tokio::spawn(refuse_busy(stream));
            continue;
        };
        let service = ConnectionService {
            router: router.clone(),
            config: config.clone(),
            peer,
            slot: slot.clone(),
        };
        let connection = graceful.watch(http1.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            tokio::select! {
                _ = connection => {}
                () = slot.evicted.notified() => {}
            }
            slot.close();
        });
    }
    drop(listener);
    let _ = tokio::time::timeout(Duration::from_secs(5), graceful.shutdown()).await;
}

/// The open connections, and whether each has a request in flight.
#[derive(Default)]
struct Connections(Mutex<ConnectionTable>);

#[derive(Default)]
struct ConnectionTable {
    next_id: u64,
    open: HashMap<u64, Arc<Slot>>,
}

struct Slot {
    id: u64,
    connections: std::sync::Weak<Connections>,
    /// Requests whose response has not been sent in full.
    in_flight: Mutex<(usize, Instant)>,
    evicted: Notify,
}

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Connections {
    /// A slot for a new connection, making room by closing the connection idle the longest;
    /// `None` when every connection is busy.
    fn open(self: &Arc<Self>, max: usize) -> Option<Arc<Slot>> {
        let mut table = locked(&self.0);
        if table.open.len() >= max {
            let idlest = table
                .open
                .values()
                .filter_map(|slot| {
                    let (in_flight, since) = *locked(&slot.in_flight);
                    (in_flight == 0).then_some((since, slot.id))
                })
                .min()?;
            if let Some(slot) = table.open.remove(&idlest.1) {
                slot.evicted.notify_one();
            }
        }
        table.next_id += 1;
        let slot = Arc::new(Slot {
            id: table.next_id,
            connections: Arc::downgrade(self),
            in_flight: Mutex::new((0, Instant::now())),
            evicted: Notify::new(),
        });
        table.open.insert(slot.id, slot.clone());
        Some(slot)
    }
}

impl Slot {
    fn close(&self) {
        if let Some(connections) = self.connections.upgrade() {
            locked(&connections.0).open.remove(&self.id);
        }
    }

    fn begin(self: &Arc<Self>) -> InFlight {
        locked(&self.in_flight).0 += 1;
        InFlight(self.clone())
    }
}

/// A request in flight on its connection, until its response body is dropped.
struct InFlight(Arc<Slot>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut in_flight = locked(&self.0.in_flight);
        in_flight.0 = in_flight.0.saturating_sub(1);
        in_flight.1 = Instant::now();
    }
}

/// A response body that keeps its connection counted busy while it is being sent.
struct TrackedBody {
    body: Body,
    _in_flight: InFlight,
}

impl http_body::Body for TrackedBody {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// One connection's requests into the router, with the client address and the request
/// timeout.
#[derive(Clone)]
struct ConnectionService {
    router: Router,
    config: Arc<ServeConfig>,
    peer: SocketAddr,
    slot: Arc<Slot>,
}

/// A request body that must keep arriving: a pause longer than `idle` ends it with an error
/// (the handler refuses a body it cannot read). Its end, or its drop, starts the response
/// timeout.
struct ArrivingBody {
    body: hyper::body::Incoming,
    idle: Duration,
    stall: Option<Pin<Box<tokio::time::Sleep>>>,
    read: Option<tokio::sync::oneshot::Sender<()>>,
    /// Set once the body has arrived to its end.
    ended: Arc<AtomicBool>,
}

impl ArrivingBody {
    fn finished(&mut self) {
        if let Some(read) = self.read.take() {
            let _ = read.send(());
        }
    }
}

impl Drop for ArrivingBody {
    fn drop(&mut self) {
        self.finished();
    }
}

impl http_body::Body for ArrivingBody {
    type Data = axum::body::Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.body).poll_frame(cx) {
            Poll::Ready(frame) => {
                this.stall = None;
                if frame.is_none() || this.body.is_end_stream() {
                    this.ended.store(true, Ordering::Relaxed);
                    this.finished();
                }
                Poll::Ready(frame.map(|frame| frame.map_err(Into::into)))
            }
            Poll::Pending => {
                let idle = this.idle;
                let stall = this.stall.get_or_insert_with(|| Box::pin(tokio::time::sleep(idle)));
                if stall.as_mut().poll(cx).is_ready() {
                    this.finished();
                    let message = format!("the client paused longer than {} s", idle.as_secs());
                    return Poll::Ready(Some(Err(message.into())));
                }
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

impl hyper::service::Service<Request<hyper::body::Incoming>> for ConnectionService {
    type Response = Response<TrackedBody>;
    type Error = std::convert::Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn call(&self, request: Request<hyper::body::Incoming>) -> Self::Future {
        let in_flight = self.slot.begin();
        let (read, body_read) = tokio::sync::oneshot::channel();
        // A request without a body is read already: its timeout starts now.
        let no_body = http_body::Body::is_end_stream(request.body());
        let read = if no_body {
            let _ = read.send(());
            None
        } else {
            Some(read)
        };
        let ended = Arc::new(AtomicBool::new(no_body));
        let idle = self.config.header_read_timeout;
        let arriving = |body| ArrivingBody { body, idle, stall: None, read, ended: ended.clone() };
        let mut request = request.map(|body| Body::new(arriving(body)));
        let client =
            ClientAddress::of(self.peer.ip(), request.headers(), &self.config.trusted_proxies);
        request.extensions_mut().insert(client);
        let mut router = self.router.clone();
        let limit = self.config.request_timeout;
        Box::pin(async move {
            let deadline = async {
                let _ = body_read.await;
                tokio::time::sleep(limit).await;
            };
            let mut response = tokio::select! {
                answered = tower::Service::call(&mut router, request) => match answered {
                    Ok(response) => response,
                    Err(never) => match never {},
                },
                () = deadline => too_slow(limit),
            };
            // Answered before its body arrived (a 401 to a POST, say): hyper gives up on the
            // rest of the body and closes the connection after the response. Saying so in the
            // response keeps the client from sending its next request into that closing
            // connection, which it reports as "server disconnected".
            if !ended.load(Ordering::Relaxed) {
                response
                    .headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            Ok(response.map(|body| TrackedBody { body, _in_flight: in_flight }))
        })
    }
}

fn too_slow(limit: Duration) -> Response<Body> {
    let err = OpError::Unavailable {
        retry_after_secs: 1,
        message: Text::new(
            "The request took longer than {seconds} s, so the server stopped it. Send it again; if it keeps happening, send less at once.",
        )
        .with("seconds", limit.as_secs()),
    };
    problem_response(&err)
}

fn busy() -> OpError {
    OpError::Unavailable {
        retry_after_secs: 1,
        message: Text::new(
            "The server has as many connections as it takes, all of them busy. Try again in a second.",
        ),
    }
}

/// Answers a connection there is no room for with a `503` problem, then closes it.
async fn refuse_busy(mut stream: tokio::net::TcpStream) {
    let status = StatusCode::SERVICE_UNAVAILABLE;
    let body = serde_json::to_vec(&problem_body(&busy(), status)).unwrap_or_default();
    let head = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: {PROBLEM_CONTENT_TYPE}\r\nretry-after: 1\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let write = async {
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(&body).await?;
        stream.shutdown().await
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), write).await;
}

#[cfg(test)]
mod tests;
