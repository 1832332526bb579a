//! Two real `exhale serve` processes on one PostgreSQL database, as behind a load balancer:
//! whatever a person or an agent does through one, the other knows, and one dying loses
//! nothing. These run on PostgreSQL in both passes (`DataDir::postgres`): SQLite is one
//! instance's database.

use reqwest::StatusCode;
use serde_json::{Value, json};
use test_support::DataDir;

use crate::{
    cli::{exhale, listening_url, owner_with_token, spawn_serve_with, stdout},
    serving::spawn_writer,
    web::{Visitor, read_events},
};

/// The password `owner_with_token` gives Ana.
const ANA_PASSWORD: &str = "a long enough password";

/// Two instances on one database, killed when dropped.
pub(crate) struct Pair {
    pub(crate) urls: [String; 2],
    children: [std::process::Child; 2],
}

impl Pair {
    fn start(dir: &DataDir) -> Self {
        Self::start_with(dir, &[("EXHALE_TOKEN_RATE_PER_SECOND", "0")])
    }

    pub(crate) fn start_with(dir: &DataDir, env: &[(&str, &str)]) -> Self {
        let mut first = spawn_serve_with(dir, env);
        let mut second = spawn_serve_with(dir, env);
        let urls = [listening_url(&mut first), listening_url(&mut second)];
        Self { urls, children: [first, second] }
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// What `heard` gives, or a failure after ten seconds: what another instance did is heard
/// within a moment or not at all.
pub(crate) async fn within<T>(heard: impl std::future::Future<Output = T>) -> T {
    match tokio::time::timeout(std::time::Duration::from_secs(10), heard).await {
        Ok(value) => value,
        Err(_) => panic!("nothing was heard from the other instance within ten seconds"),
    }
}

async fn post(url: &str, op: &str, token: &str, body: Value) -> (StatusCode, Value) {
    let response = reqwest::Client::new()
        .post(format!("{url}/api/v1/ops/{op}"))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    (response.status(), response.json().await.unwrap_or(Value::Null))
}

fn create_subscription(dir: &DataDir, name: &str) -> i64 {
    let input =
        json!({"name": name, "amount": "9.99", "cycle": "monthly", "next_charge_on": "2026-12-20"});
    let created =
        stdout(&exhale(dir, &["op", "create_subscription", "--json", &input.to_string()], ""));
    serde_json::from_str::<Value>(&created).unwrap()["id"].as_i64().unwrap()
}

#[tokio::test]
async fn a_write_through_one_instance_reaches_the_pages_and_mcp_subscriptions_of_the_other() {
    use rmcp::model::{ServerNotification, SubscriptionFilter};
    let dir = DataDir::postgres();
    let token = owner_with_token(&dir, "write");
    let netflix = create_subscription(&dir, "Netflix");
    let pair = Pair::start(&dir);
    let [first, second] = &pair.urls;

    // Ana's open page and an agent's MCP subscription are served by the second instance.
    let mut ana = Visitor::at(second);
    ana.sign_in("ana@a.test", ANA_PASSWORD).await;
    let mut stream = ana.events("/events").await;
    assert_eq!(read_events(&mut stream, 1).await[0].0, "ready");
    let netflix_uri = format!("exhale://subscriptions/{netflix}");
    let watcher = crate::mcp::modern_http_client(format!("{second}/mcp"), &token, "Watcher").await;
    let filter = SubscriptionFilter::builder().resource_subscription(netflix_uri.clone()).build();
    let mut listening = watcher.listen(filter).await.unwrap();

    // An agent changes Netflix through the first.
    let (status, updated) =
        post(first, "update_subscription", &token, json!({"id": netflix, "notes": "4K"})).await;
    assert_eq!(status, StatusCode::OK, "{updated}");

    let events = within(read_events(&mut stream, 1)).await;
    assert_eq!(events[0].0, "change", "{events:?}");
    assert!(events[0].1.contains("update_subscription"), "{events:?}");
    let notification = within(listening.next()).await.unwrap().unwrap();
    let ServerNotification::ResourceUpdatedNotification(heard) = notification else {
        panic!("{notification:?}")
    };
    assert_eq!(heard.params.uri, netflix_uri);
    watcher.cancel().await.unwrap();
}

#[tokio::test]
async fn a_change_asked_for_on_one_instance_is_confirmed_on_the_other_once() {
    let dir = DataDir::postgres();
    let token = owner_with_token(&dir, "write");
    let netflix = create_subscription(&dir, "Netflix");
    let pair = Pair::start(&dir);
    let [first, second] = &pair.urls;

    let (status, asked) = post(first, "delete_subscription", &token, json!({"id": netflix})).await;
    assert_eq!(status, StatusCode::PRECONDITION_REQUIRED, "{asked}");
    let confirmation = asked["confirmation_id"].as_str().unwrap().to_owned();
    let (status, deleted) =
        post(second, "confirm_change", &token, json!({"confirmation_id": confirmation})).await;
    assert_eq!(status, StatusCode::OK, "{deleted}");
    let (status, again) =
        post(first, "confirm_change", &token, json!({"confirmation_id": confirmation})).await;
    assert_eq!(status, StatusCode::CONFLICT, "a confirmation applies once: {again}");
    let (_, list) = post(first, "list_subscriptions", &token, json!({})).await;
    assert_eq!(list["total"], 0, "{list}");
}

#[tokio::test]
async fn one_instance_killed_under_concurrent_writes_loses_no_acknowledged_write_and_the_other_answers()
 {
    let dir = DataDir::postgres();
    let token = owner_with_token(&dir, "trusted");
    let mut pair = Pair::start(&dir);
    let urls = pair.urls.clone();
    let (acks, mut heard) = tokio::sync::mpsc::unbounded_channel::<i64>();
    // Three writers on each instance. A writer on the first stops when it is killed; those on
    // the second stop after 41 writes, so that the test ends.
    let writers: Vec<_> = (0..6)
        .map(|writer: usize| {
            let (url, token) = (urls[writer % 2].clone(), token.clone());
            let writes = if writer % 2 == 1 { 0..41 } else { 0..1000 };
            let name = move |n| format!("W{writer} #{n}");
            spawn_writer(reqwest::Client::new(), url, token, writes, name, acks.clone())
        })
        .collect();
    drop(acks);
    let mut acknowledged = Vec::new();
    for _ in 0..60 {
        acknowledged.push(heard.recv().await.unwrap());
    }
    // The first instance dies mid-write, with its connections to the database.
    let first = &mut pair.children[0];
    std::process::Command::new("kill").args(["-KILL", &first.id().to_string()]).status().unwrap();
    first.wait().unwrap();
    for writer in writers {
        writer.await.unwrap();
    }
    while let Ok(id) = heard.try_recv() {
        acknowledged.push(id);
    }
    // The second still answers, and holds every write either acknowledged.
    let stored = stored_subscriptions(&urls[1], &token).await;
    let lost: Vec<_> = acknowledged.iter().filter(|id| !stored.contains(id)).collect();
    assert!(acknowledged.len() >= 60 && lost.is_empty(), "acknowledged writes lost: {lost:?}");
}

/// Every subscription's id, page after page, through `url`.
async fn stored_subscriptions(url: &str, token: &str) -> std::collections::HashSet<i64> {
    let mut stored = std::collections::HashSet::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut input = json!({"limit": 500});
        if let Some(cursor) = &cursor {
            input["cursor"] = json!(cursor);
        }
        let (status, page) = post(url, "list_subscriptions", token, input).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        stored.extend(page["items"].as_array().unwrap().iter().map(|s| s["id"].as_i64().unwrap()));
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return stored,
        }
    }
}

#[tokio::test]
async fn the_database_crashing_under_concurrent_writes_loses_no_acknowledged_write_and_both_instances_carry_on()
 {
    use std::sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    };
    let dir = DataDir::postgres_to_restart();
    let token = owner_with_token(&dir, "trusted");
    let pair = Pair::start(&dir);
    let urls = pair.urls.clone();
    let (answers, mut heard) = tokio::sync::mpsc::unbounded_channel::<(usize, StatusCode, Value)>();
    let running = Arc::new(AtomicBool::new(true));
    // Two writers on each instance, until told to stop. An instance that died would fail the
    // writer's request, and the test with it.
    let writers: Vec<_> = (0..4)
        .map(|writer: usize| {
            let (url, token) = (urls[writer % 2].clone(), token.clone());
            let (answers, running) = (answers.clone(), running.clone());
            tokio::spawn(async move {
                let client = reqwest::Client::new();
                let mut n = 0;
                while running.load(Ordering::Relaxed) {
                    n += 1;
                    let input = json!({"name": format!("W{writer} #{n}"), "amount": "1.00",
                        "cycle": "monthly", "next_charge_on": "2026-12-20"});
                    let response = client
                        .post(format!("{url}/api/v1/ops/create_subscription"))
                        .bearer_auth(&token)
                        .json(&input)
                        .send()
                        .await
                        .unwrap();
                    let status = response.status();
                    let retry_after = response.headers().get("retry-after").cloned();
                    let mut body = response.json::<Value>().await.unwrap();
                    if let Some(value) = retry_after {
                        body["retry-after header"] = json!(value.to_str().unwrap());
                    }
                    let _ = answers.send((writer % 2, status, body));
                }
            })
        })
        .collect();
    drop(answers);
    let mut acknowledged = Vec::new();
    let mut refused = Vec::new();
    // Acknowledged writes through each instance.
    let mut through = [0usize; 2];
    let mut take = |(instance, status, body): (usize, StatusCode, Value)| {
        if status == StatusCode::OK {
            acknowledged.push(body["id"].as_i64().unwrap());
            through[instance] += 1;
        } else {
            refused.push((status, body));
        }
        through
    };
    let mut at_restart = [0; 2];
    while at_restart.iter().sum::<usize>() < 30 {
        at_restart = take(within(heard.recv()).await.unwrap());
    }
    // The server crashes mid-write and recovers, as after a kill or a power cut of its own.
    let dir = tokio::task::spawn_blocking(move || {
        dir.restart_database();
        dir
    })
    .await
    .unwrap();
    // Both instances connect again and write: ten more through each.
    loop {
        let now = take(within(heard.recv()).await.unwrap());
        if now[0] >= at_restart[0] + 10 && now[1] >= at_restart[1] + 10 {
            break;
        }
    }
    running.store(false, Ordering::Relaxed);
    for writer in writers {
        writer.await.unwrap();
    }
    while let Ok(answer) = heard.try_recv() {
        take(answer);
    }
    // What failed meanwhile failed as something to try again, never as a broken server.
    for (status, body) in &refused {
        assert_eq!(*status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert_eq!(body["code"], "unavailable", "{body}");
        assert_eq!(body["retry-after header"], "1", "{body}");
    }
    let stored = stored_subscriptions(&urls[0], &token).await;
    let lost: Vec<_> = acknowledged.iter().filter(|id| !stored.contains(id)).collect();
    assert!(lost.is_empty(), "acknowledged writes lost: {lost:?}");
    drop(pair);
    drop(dir);
}

#[tokio::test]
async fn sign_in_failures_on_one_instance_count_on_the_other() {
    let dir = DataDir::postgres();
    owner_with_token(&dir, "read");
    let pair = Pair::start(&dir);
    let [first, second] = &pair.urls;
    let mut guesser = Visitor::at(first);
    for _ in 0..5 {
        let page = guesser.sign_in("ana@a.test", "guess guess guess").await;
        assert_eq!(page.status, StatusCode::UNAUTHORIZED);
    }
    // The same address, now at the other instance, with the right password.
    let blocked = Visitor::at(second).sign_in("ana@a.test", ANA_PASSWORD).await;
    assert_eq!(blocked.status, StatusCode::TOO_MANY_REQUESTS, "{}", blocked.body);
    assert!(blocked.body.contains("Try again in 15 min"), "{}", blocked.body);
}

#[tokio::test]
async fn a_tokens_calls_on_both_instances_count_against_one_rate() {
    let dir = DataDir::postgres();
    let token = owner_with_token(&dir, "read");
    // One call a second, three at once: the four calls below take a few milliseconds.
    let pair = Pair::start_with(
        &dir,
        &[("EXHALE_TOKEN_RATE_PER_SECOND", "1"), ("EXHALE_TOKEN_RATE_BURST", "3")],
    );
    let [first, second] = &pair.urls;
    for url in [first, second, first] {
        let (status, body) = post(url, "list_subscriptions", &token, json!({})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let (status, body) = post(second, "list_subscriptions", &token, json!({})).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["code"], "rate_limited", "{body}");
}

#[tokio::test]
async fn an_oauth_code_from_one_instance_is_redeemed_at_the_other_and_a_refresh_retried_there_gets_the_same_pair()
 {
    use crate::oauth::{REDIRECT, VERIFIER, authorize_path, consent, param, public_client_to};
    let dir = DataDir::postgres();
    owner_with_token(&dir, "read");
    // Both answer as one public origin, as behind a load balancer: the first's address.
    let mut first_child = spawn_serve_with(&dir, &[]);
    let first = listening_url(&mut first_child);
    let mut second_child = spawn_serve_with(&dir, &[("EXHALE_PUBLIC_ORIGIN", first.as_str())]);
    let second = listening_url(&mut second_child);
    let _pair =
        Pair { urls: [first.clone(), second.clone()], children: [first_child, second_child] };
    let resource = format!("{first}/mcp");

    let client_id = public_client_to(&second, "Claude", REDIRECT).await;
    let mut ana = Visitor::at(&first);
    ana.sign_in("ana@a.test", ANA_PASSWORD).await;
    let back = consent(&mut ana, &authorize_path(&client_id, &[]), "write", "approve").await;
    let code = param(&back, "code").unwrap();
    let (status, tokens) = crate::oauth::token(
        &second,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("code_verifier", VERIFIER),
            ("client_id", &client_id),
            ("resource", &resource),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "the code the first issued works at the second: {tokens}");
    let refresh_token = tokens["refresh_token"].as_str().unwrap();

    let (status, refreshed) = crate::oauth::refresh(&first, &client_id, refresh_token).await;
    assert_eq!(status, StatusCode::OK, "{refreshed}");
    // The client's answer was lost; it retries at the other instance within the minute.
    let (status, retried) = crate::oauth::refresh(&second, &client_id, refresh_token).await;
    assert_eq!(status, StatusCode::OK, "{retried}");
    assert_eq!(retried["access_token"], refreshed["access_token"]);
    assert_eq!(retried["refresh_token"], refreshed["refresh_token"]);
    // Another client presenting it gets nothing.
    let other = public_client_to(&first, "Other", REDIRECT).await;
    let (status, _) = crate::oauth::refresh(&second, &other, refresh_token).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn a_setup_link_one_instance_printed_opens_on_the_other() {
    use std::io::BufRead as _;
    let dir = DataDir::postgres();
    let mut first = spawn_serve_with(&dir, &[]);
    let printed: Vec<String> = std::io::BufReader::new(first.stdout.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .take_while(|line| !line.starts_with("or on the command line"))
        .collect();
    let link = printed.iter().find_map(|line| line.trim().split_once("/setup/")).unwrap().1;
    let mut second = spawn_serve_with(&dir, &[]);
    let second_url = listening_url(&mut second);
    let _pair = Pair { urls: [String::new(), second_url.clone()], children: [first, second] };
    let mut visitor = Visitor::at(&second_url);
    let page = visitor.get(&format!("/setup/{link}")).await;
    assert_eq!(page.status, StatusCode::OK, "{printed:?}: {}", page.body);
    let guessed = visitor.get("/setup/0123456789abcdef0123456789abcdef").await;
    assert_eq!(guessed.status, StatusCode::NOT_FOUND);
}

/// A 2025-protocol MCP session lives in the instance that began it. Another instance answers
/// a request in it as the protocol says for a session the server does not know, 404, and the
/// client begins a new one there (docs/install/postgres.md: route by `Mcp-Session-Id`, or use
/// the 2026 protocol, which has no sessions).
#[tokio::test]
async fn a_2025_mcp_session_from_one_instance_is_unknown_to_the_other_which_begins_a_new_one() {
    let dir = DataDir::postgres();
    let token = owner_with_token(&dir, "read");
    let pair = Pair::start(&dir);
    let [first, second] = &pair.urls;
    let send = |url: String, session: Option<String>, body: Value| {
        let token = token.clone();
        async move {
            let mut request = reqwest::Client::new()
                .post(format!("{url}/mcp"))
                .bearer_auth(token)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2025-11-25")
                .body(body.to_string());
            if let Some(session) = session {
                request = request.header("mcp-session-id", session);
            }
            request.send().await.unwrap()
        }
    };
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    let began = send(first.clone(), None, initialize.clone()).await;
    assert_eq!(began.status(), StatusCode::OK);
    let session = began.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let elsewhere = send(second.clone(), Some(session), list).await;
    assert_eq!(elsewhere.status(), StatusCode::NOT_FOUND);
    let again = send(second.clone(), None, initialize).await;
    assert_eq!(again.status(), StatusCode::OK);
    assert!(again.headers().contains_key("mcp-session-id"));
}
