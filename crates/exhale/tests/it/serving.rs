//! The real binary under slow, crowded and hostile clients: a few hundred connections that
//! send their headers slowly, more than the server takes at once, do not stop `/healthz` from
//! answering (the server loop's own tests, in the `http` crate, cover each limit on its own),
//! and text from requests cannot flood or forge its log.

use std::time::Duration;

use test_support::DataDir;
use tokio::{
    io::{AsyncReadExt as _, AsyncWriteExt as _},
    net::TcpStream,
};

use serde_json::json;

use crate::cli::{listening_url, owner_with_token, spawn_serve_logging, spawn_serve_with};

const SLOW_CLIENTS: usize = 300;

#[tokio::test]
async fn hundreds_of_slow_clients_do_not_stop_healthz() {
    let dir = DataDir::new();
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

#[tokio::test]
async fn text_from_requests_is_cut_and_escaped_in_the_log() {
    let dir = DataDir::new();
    let token = owner_with_token(&dir, "read");
    let log_path = dir.path().join("serve.log");
    let log = std::fs::File::create(&log_path).unwrap();
    // Everything our libraries log too, at the most talkative level.
    let mut child = spawn_serve_logging(&dir, &[("RUST_LOG", "debug")], log);
    let url = listening_url(&mut child);
    let hostile = format!("{}\nFORGED log line\u{1b}[31m", "A".repeat(100_000));
    let client = reqwest::Client::new();
    let mcp = |body: serde_json::Value, session: Option<&str>| {
        let mut request = client
            .post(format!("{url}/mcp"))
            .bearer_auth(&token)
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(session) = session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-11-25");
        }
        request.send()
    };
    // A 2025 session opened by a client with a hostile name, then a tool by a hostile name.
    let opened = mcp(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": hostile, "version": "1"}}}),
        None,
    )
    .await
    .unwrap();
    let session = opened.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    mcp(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}), Some(&session))
        .await
        .unwrap();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": hostile, "arguments": {}}});
    assert_eq!(mcp(call.clone(), Some(&session)).await.unwrap().status(), 200);
    mcp(call, None).await.unwrap();
    // A REST op by a hostile name, and a hostile value.
    let path = format!("{url}/api/v1/ops/{}", "B".repeat(50_000));
    client.post(path).bearer_auth(&token).send().await.unwrap();
    client
        .post(format!("{url}/api/v1/ops/list_subscriptions"))
        .bearer_auth(&token)
        .json(&json!({"status": hostile}))
        .send()
        .await
        .unwrap();
    std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));

    let log = std::fs::read_to_string(&log_path).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert!(lines.iter().any(|l| l.contains("AAAAAAAAAA")), "the hostile requests were logged");
    for line in &lines {
        assert!(line.chars().count() <= 2_100, "a line of {} characters", line.chars().count());
        assert!(!line.starts_with("FORGED") && !line.contains('\u{1b}'), "{line}");
    }
}

/// Spawns a writer that creates subscriptions through `url`, the `n`th named `name(n)`, for
/// each `n` in `writes`. It sends the id of each write the server acknowledged to `acks`,
/// passes over a refused one, and stops once the server is gone.
pub(crate) fn spawn_writer(
    client: reqwest::Client,
    url: String,
    token: String,
    writes: std::ops::Range<usize>,
    name: impl Fn(usize) -> String + Send + 'static,
    acks: tokio::sync::mpsc::UnboundedSender<i64>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        for n in writes {
            let input = json!({"name": name(n), "amount": "1.00", "cycle": "monthly",
                "next_charge_on": "2026-12-20"});
            let sent = client
                .post(format!("{url}/api/v1/ops/create_subscription"))
                .bearer_auth(&token)
                .json(&input)
                .send()
                .await;
            let Ok(response) = sent else { return };
            if response.status() != 200 {
                continue;
            }
            let Ok(created) = response.json::<serde_json::Value>().await else { return };
            let _ = acks.send(created["id"].as_i64().unwrap());
        }
    })
}

/// Writers at once, and rounds of killing the server under them.
const WRITERS: usize = 6;
const ROUNDS: usize = 5;
/// Writes acknowledged in a round before the server is killed.
const WRITES_BEFORE_KILL: usize = 150;

/// Every subscription id in the data directory, read page by page through the CLI.
fn stored_ids(dir: &DataDir) -> std::collections::HashSet<i64> {
    let mut ids = std::collections::HashSet::new();
    let mut cursor = None;
    loop {
        let mut input = json!({"limit": 500});
        if let Some(cursor) = &cursor {
            input["cursor"] = json!(cursor);
        }
        let page = crate::cli::exhale(
            dir,
            &["op", "list_subscriptions", "--json", &input.to_string()],
            "",
        );
        assert!(page.status.success(), "{}", String::from_utf8_lossy(&page.stderr));
        let page: serde_json::Value = serde_json::from_slice(&page.stdout).unwrap();
        ids.extend(page["items"].as_array().unwrap().iter().map(|s| s["id"].as_i64().unwrap()));
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return ids,
        }
    }
}

#[tokio::test]
async fn every_acknowledged_write_survives_kill_9_under_concurrent_writers() {
    let dir = DataDir::new();
    let token = owner_with_token(&dir, "trusted");
    let no_limit = [("EXHALE_TOKEN_RATE_PER_SECOND", "0")];
    let client = reqwest::Client::new();
    let mut acknowledged: Vec<i64> = Vec::new();
    for round in 0..ROUNDS {
        let mut child = spawn_serve_with(&dir, &no_limit);
        let url = listening_url(&mut child);
        let (acks, mut heard) = tokio::sync::mpsc::unbounded_channel::<i64>();
        let writers: Vec<_> = (0..WRITERS)
            .map(|writer| {
                // Each writes until the server is gone.
                let name = move |n| format!("R{round} W{writer} #{n}");
                let (client, url, token) = (client.clone(), url.clone(), token.clone());
                spawn_writer(client, url, token, 0..usize::MAX, name, acks.clone())
            })
            .collect();
        drop(acks);
        for _ in 0..WRITES_BEFORE_KILL {
            acknowledged.push(heard.recv().await.unwrap());
        }
        // No clean shutdown: the process dies between two writes, or in one.
        std::process::Command::new("kill")
            .args(["-KILL", &child.id().to_string()])
            .status()
            .unwrap();
        child.wait().unwrap();
        for writer in writers {
            writer.await.unwrap();
        }
        // Answers that arrived before the kill landed are acknowledged too.
        while let Ok(id) = heard.try_recv() {
            acknowledged.push(id);
        }
        let stored = stored_ids(&dir);
        let lost: Vec<_> = acknowledged.iter().filter(|id| !stored.contains(id)).collect();
        assert!(lost.is_empty(), "round {round}: acknowledged writes lost: {lost:?}");
        let integrity = crate::cli::exhale(&dir, &["check"], "");
        assert!(
            integrity.status.success(),
            "round {round}: {}",
            String::from_utf8_lossy(&integrity.stdout)
        );
    }
    println!(
        "{} acknowledged writes over {ROUNDS} rounds of kill -9, none lost",
        acknowledged.len()
    );
}
