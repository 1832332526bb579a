//! The server loop against raw TCP clients: slow headers are cut off, a full server makes room
//! by closing its idlest connection or refuses with a problem when all are busy, a response
//! that does not start in time is a problem, a response sent before its request's body says the
//! connection closes, and the client address reaches the handler.

use std::{net::IpAddr, sync::Arc, time::Duration};

use axum::{
    Extension, Router,
    routing::{get, post},
};
use tokio::{
    io::{AsyncReadExt as _, AsyncWriteExt as _},
    net::TcpStream,
    sync::{Notify, mpsc},
};

use super::*;

/// A server with `/hold`, which tells the test it was entered and then waits for `release`.
struct Held {
    addr: SocketAddr,
    entered: mpsc::UnboundedReceiver<()>,
    release: Arc<Notify>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn start(config: ServeConfig) -> Held {
    let (tell, entered) = mpsc::unbounded_channel();
    let release = Arc::new(Notify::new());
    let waiting = release.clone();
    let router =
        Router::new()
            .route(
                "/ok",
                get(|Extension(ClientAddress(ip)): Extension<ClientAddress>| async move {
                    ip.to_string()
                }),
            )
            .route("/echo", post(|body: axum::body::Bytes| async move { body.len().to_string() }))
            .route("/refuse", post(|| async { StatusCode::UNAUTHORIZED }))
            .route(
                "/hold",
                get(move || {
                    let tell = tell.clone();
                    let waiting = waiting.clone();
                    async move {
                        let _ = tell.send(());
                        waiting.notified().await;
                        "released"
                    }
                }),
            );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(serve(listener, router, config, async {
        let _ = stopped.await;
    }));
    Held { addr, entered, release, stop: Some(stop) }
}

/// Sends a GET and reads the whole answer (the server closes after it).
async fn get_path(addr: SocketAddr, path: &str) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    read_to_end(&mut stream).await
}

async fn read_to_end(stream: &mut TcpStream) -> String {
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut answer));
    match read.await {
        Ok(Ok(_)) | Ok(Err(_)) => String::from_utf8_lossy(&answer).into_owned(),
        Err(_) => panic!("the server kept the connection open: {answer:?}"),
    }
}

fn config(max_connections: usize) -> ServeConfig {
    ServeConfig {
        max_connections,
        header_read_timeout: Duration::from_secs(1),
        request_timeout: Duration::from_secs(1),
        trusted_proxies: Vec::new(),
    }
}

#[tokio::test]
async fn a_connection_that_sends_no_headers_is_closed_after_the_header_timeout() {
    let server = start(config(8)).await;
    let mut silent = TcpStream::connect(server.addr).await.unwrap();
    let mut slow = TcpStream::connect(server.addr).await.unwrap();
    slow.write_all(b"GET /ok HTTP/1.1\r\nhost: x\r\n").await.unwrap();
    // Both are closed without an answer; the test would time out otherwise.
    assert!(!read_to_end(&mut silent).await.contains("200 OK"));
    assert!(!read_to_end(&mut slow).await.contains("200 OK"));
    assert!(get_path(server.addr, "/ok").await.starts_with("HTTP/1.1 200 OK"));
}

#[tokio::test]
async fn a_full_server_closes_its_idlest_connection_for_a_new_one() {
    let server =
        start(ServeConfig { header_read_timeout: Duration::from_secs(60), ..config(4) }).await;
    let mut idle = Vec::new();
    for _ in 0..4 {
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        stream.write_all(b"GET /ok HTTP/1.1\r\n").await.unwrap();
        idle.push(stream);
    }
    // Four slow connections fill the server; new requests still get in.
    for _ in 0..3 {
        let answer = get_path(server.addr, "/ok").await;
        assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
        assert!(answer.ends_with("127.0.0.1"), "the handler sees the client address: {answer}");
    }
    // The oldest idle one made room first.
    assert_eq!(read_to_end(&mut idle[0]).await, "");
}

#[tokio::test]
async fn a_server_whose_connections_are_all_busy_refuses_with_a_problem() {
    let mut server =
        start(ServeConfig { request_timeout: Duration::from_secs(60), ..config(2) }).await;
    let mut busy = Vec::new();
    for _ in 0..2 {
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        stream.write_all(b"GET /hold HTTP/1.1\r\nhost: x\r\n\r\n").await.unwrap();
        server.entered.recv().await.unwrap();
        busy.push(stream);
    }
    let refused = get_path(server.addr, "/ok").await;
    assert!(refused.starts_with("HTTP/1.1 503 Service Unavailable"), "{refused}");
    assert!(refused.contains("application/problem+json") && refused.contains("retry-after: 1"));
    assert!(refused.contains(r#""code":"unavailable""#), "{refused}");
    // Once the held requests answer, there is room again.
    server.release.notify_waiters();
    for stream in &mut busy {
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).await.unwrap();
        assert_eq!(&head, b"HTTP/1.1 200");
    }
    // The answered connections are idle now (once the server has dropped the response), so a
    // new one gets in by closing one of them.
    let mut answer = String::new();
    for _ in 0..1000 {
        answer = get_path(server.addr, "/ok").await;
        if !answer.contains("503") {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
}

#[tokio::test]
async fn a_response_that_does_not_start_in_time_is_a_problem() {
    let mut server = start(config(8)).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream.write_all(b"GET /hold HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").await.unwrap();
    server.entered.recv().await.unwrap();
    let answer = read_to_end(&mut stream).await;
    assert!(answer.starts_with("HTTP/1.1 503 Service Unavailable"), "{answer}");
    assert!(answer.contains("longer than 1 s"), "{answer}");
}

/// Sends a POST whose body of `size` bytes arrives one byte at a time, `pause` apart; only
/// `stop_after` of them when given.
async fn trickle(
    addr: SocketAddr,
    size: usize,
    pause: Duration,
    stop_after: Option<usize>,
) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /echo HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-length: {size}\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    for _ in 0..stop_after.unwrap_or(size) {
        // The pace is what is under test: a phone uploading on a slow line.
        tokio::time::sleep(pause).await;
        stream.write_all(b"x").await.unwrap();
    }
    read_to_end(&mut stream).await
}

#[tokio::test]
async fn a_slow_upload_that_keeps_arriving_is_not_cut_off() {
    let server = start(config(8)).await;
    // 8 bytes over about 2.4 s: longer than the 1 s request timeout, never pausing 1 s.
    let answer = trickle(server.addr, 8, Duration::from_millis(300), None).await;
    assert!(answer.starts_with("HTTP/1.1 200 OK") && answer.ends_with("\r\n\r\n8"), "{answer}");
}

#[tokio::test]
async fn a_response_sent_before_the_body_arrived_says_the_connection_closes() {
    let server = start(config(8)).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    // The body never comes: the handler answers on the headers alone, as the sign-in check
    // of /mcp does. The client must learn not to send its next request on this connection.
    let head = "POST /refuse HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\n\r\n";
    stream.write_all(head.as_bytes()).await.unwrap();
    let answer = read_to_end(&mut stream).await;
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    assert!(answer.contains("connection: close\r\n"), "{answer}");

    // A body that was read leaves the connection open for the next request.
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let requests = "POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 3\r\n\r\nabc\
                    GET /ok HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n";
    stream.write_all(requests.as_bytes()).await.unwrap();
    let answers = read_to_end(&mut stream).await;
    assert_eq!(answers.matches("HTTP/1.1 200 OK").count(), 2, "{answers}");
    assert_eq!(answers.matches("connection: close").count(), 1, "{answers}");
}

#[tokio::test]
async fn an_upload_that_stops_arriving_is_refused() {
    let server = start(config(8)).await;
    let answer = trickle(server.addr, 8, Duration::from_millis(10), Some(2)).await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
}

#[test]
fn a_forwarded_address_counts_only_from_a_trusted_proxy() {
    let proxy: IpAddr = "10.0.0.1".parse().unwrap();
    let mut headers = HeaderMap::new();
    headers.insert("x-forwarded-for", "203.0.113.9, 198.51.100.7".parse().unwrap());
    assert_eq!(ClientAddress::of(proxy, &headers, &[]).0, proxy);
    assert_eq!(
        ClientAddress::of(proxy, &headers, &[proxy]).0,
        "198.51.100.7".parse::<IpAddr>().unwrap()
    );
    assert_eq!(ClientAddress::of(proxy, &HeaderMap::new(), &[proxy]).0, proxy);
}
