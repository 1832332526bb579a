//! The real binary under slow and crowded clients: a few hundred connections that send their
//! headers slowly, more than the server takes at once, do not stop `/healthz` from answering.
//! (The server loop's own tests, in the `http` crate, cover each limit on its own.)

use std::time::Duration;

use test_support::TempDir;
use tokio::{
    io::{AsyncReadExt as _, AsyncWriteExt as _},
    net::TcpStream,
};

use crate::cli::{listening_url, spawn_serve_with};

const SLOW_CLIENTS: usize = 300;

#[tokio::test]
async fn hundreds_of_slow_clients_do_not_stop_healthz() {
    let dir = TempDir::new();
    // Fewer connections than slow clients: the server must shed them to answer.
    let mut child = spawn_serve_with(&dir, &[("EXHALE_MAX_CONNECTIONS", "100")]);
    let url = listening_url(&mut child);
    let addr = url.trim_start_matches("http://").to_owned();
    let mut slow = Vec::with_capacity(SLOW_CLIENTS);
    for _ in 0..SLOW_CLIENTS {
        let mut stream = TcpStream::connect(&addr).await.unwrap();
        stream.write_all(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n").await.unwrap();
        slow.push(stream);
    }
    let client = reqwest::Client::new();
    for _ in 0..5 {
        let health = client.get(format!("{url}/healthz")).send().await.unwrap();
        assert_eq!(health.status(), 200);
    }
    // The first slow client was idle the longest, so it was closed to make room.
    let mut rest = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(20), slow[0].read_to_end(&mut rest));
    assert!(closed.await.is_ok(), "the oldest slow connection is still open");
    drop(slow);
    std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
}
