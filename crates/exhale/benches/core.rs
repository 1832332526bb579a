//! The core benchmark (DESIGN section 9): a household with 500 subscriptions and five years of
//! charges; medians of in-process ops, and REST `list_subscriptions` over loopback with 16
//! concurrent clients against a floor (a bare axum handler answering the same rows with
//! hand-written JSON, measured in the same run).
//!
//! Also the web app's overview and subscriptions list for the same household: server time
//! per page (one client, sequential) and page weight.
//!
//! Run: `cargo bench -p exhale --bench core` (or `-- --quick` for a short run).

#![expect(
    clippy::print_stdout,
    clippy::unwrap_used,
    reason = "a benchmark prints its figures and stops on any failure"
)]

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use ops::{Catalog as _, Mode};
use serde_json::{Value, json};
use test_support::TestEnv;

const SUBSCRIPTIONS: usize = 500;
const CLIENTS: usize = 16;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

async fn seed(env: &TestEnv) -> ops::Caller {
    let owner = env.household("Bench", "bench@example.com").await;
    let cycles = [
        "monthly",
        "monthly",
        "monthly",
        "yearly",
        "quarterly",
        "weekly",
        "every_two_weeks",
        "every_six_months",
    ];
    for i in 0..SUBSCRIPTIONS {
        // Anchors spread over five years back from the fixed "today" (2026-11-29).
        let anchor = jiff::civil::date(2021, 12, 1)
            .checked_add(jiff::Span::new().days((i % 28) as i64))
            .unwrap();
        let input = json!({
            "name": format!("Service {i:03}"),
            "amount": format!("{}.{:02}", 3 + i % 40, i % 100),
            "currency": if i % 10 == 0 { "USD" } else { "EUR" },
            "cycle": cycles[i % cycles.len()],
            "next_charge_on": anchor.to_string(),
            "tags": [format!("tag{}", i % 7)],
        });
        env.call(&owner, "create_subscription", input).await.unwrap();
    }
    env.call(&owner, "update_settings", json!({"exchange_rates": {"USD": "0.92"}})).await.unwrap();
    owner
}

async fn in_process(
    env: &TestEnv,
    owner: &ops::Caller,
    op: &str,
    input: serde_json::Value,
    runs: usize,
) -> (Duration, Duration, usize) {
    let mut times = Vec::with_capacity(runs);
    let mut bytes = 0;
    for _ in 0..runs {
        let start = Instant::now();
        let output = env.app.call_json_text(owner, op, input.clone(), Mode::Apply).await.unwrap();
        times.push(start.elapsed());
        bytes = output.len();
    }
    times.sort();
    (percentile(&times, 0.5), percentile(&times, 0.99), bytes)
}

struct Load {
    calls_per_second: f64,
    p50: Duration,
    p99: Duration,
}

/// One kind of request the load generator sends.
#[derive(Clone)]
struct Target {
    url: String,
    token: Option<String>,
    body: String,
    headers: Vec<(&'static str, String)>,
}

async fn load(target: Target, seconds: f64) -> Load {
    let client = reqwest::Client::builder().pool_max_idle_per_host(CLIENTS).build().unwrap();
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..CLIENTS {
        let client = client.clone();
        let target = target.clone();
        tasks.push(tokio::spawn(async move {
            let mut times = Vec::new();
            while Instant::now() < deadline {
                let start = Instant::now();
                let mut request = client
                    .post(&target.url)
                    .header("content-type", "application/json")
                    .body(target.body.clone());
                for (name, value) in &target.headers {
                    request = request.header(*name, value);
                }
                if let Some(token) = &target.token {
                    request = request.bearer_auth(token);
                }
                let response = request.send().await.unwrap();
                assert!(response.status().is_success(), "{}", response.status());
                let body = response.bytes().await.unwrap();
                // Inspect the first answer of each client only: the check must not load the
                // machine that is being measured.
                assert!(
                    !times.is_empty()
                        || !String::from_utf8_lossy(&body).contains("\"isError\":true"),
                    "a failed call"
                );
                times.push(start.elapsed());
            }
            times
        }));
    }
    let mut times = Vec::new();
    for task in tasks {
        times.extend(task.await.unwrap());
    }
    let elapsed = started.elapsed().as_secs_f64();
    times.sort();
    Load {
        calls_per_second: times.len() as f64 / elapsed,
        p50: percentile(&times, 0.5),
        p99: percentile(&times, 0.99),
    }
}

/// A stateless 2026-07-28 `tools/call`, as a modern MCP client sends it.
fn mcp_call(url: String, token: &str, tool: &str, arguments: serde_json::Value) -> Target {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"}
        }}
    });
    Target {
        url,
        token: Some(token.to_owned()),
        body: body.to_string(),
        headers: vec![
            ("accept", "application/json, text/event-stream".to_owned()),
            ("mcp-protocol-version", "2026-07-28".to_owned()),
            ("mcp-method", "tools/call".to_owned()),
            ("mcp-name", tool.to_owned()),
        ],
    }
}

/// The floor's list answer: every visible subscription, as hand-written JSON.
fn floor_list(
    db: &store::Db<'_>,
    household_id: i64,
    member_id: i64,
) -> Result<String, store::StoreError> {
    let rows = store::subscriptions::list(db, household_id, Some(member_id))?;
    let mut out = String::with_capacity(rows.len() * 200);
    out.push_str("{\"items\":[");
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let price = row.prices.last().map(|p| p.1).unwrap_or_default();
        out.push_str(&format!(
            "{{\"id\":{},\"name\":{:?},\"amount\":\"{}\",\"currency\":\"{}\",\"every\":{},\"unit\":\"{}\",\"anchor_on\":\"{}\",\"status\":\"{}\"}}",
            row.id,
            row.name,
            domain::Money::new(price, row.currency).to_decimal_string(),
            row.currency.code(),
            row.cycle.every(),
            row.cycle.unit().as_str(),
            row.anchor_on,
            row.status.as_str()
        ));
    }
    out.push_str("]}");
    Ok(out)
}

/// The floor's one-subscription answer: the same rows get_subscription reads (the subscription
/// with its children and its 12 most recent charges), as hand-written JSON.
fn floor_one(
    db: &store::Db<'_>,
    household_id: i64,
    member_id: i64,
    id: i64,
) -> Result<String, store::StoreError> {
    let row = store::subscriptions::get(db, household_id, Some(member_id), id)?;
    let filter = store::charges::ChargeFilter { subscription_id: Some(id), ..Default::default() };
    let (charges, _) = store::charges::list(db, household_id, Some(member_id), &filter, 12, 0)?;
    let price = row.prices.last().map(|p| p.1).unwrap_or_default();
    let mut out = format!(
        "{{\"id\":{},\"name\":{:?},\"amount\":\"{}\",\"currency\":\"{}\",\"anchor_on\":\"{}\",\"recent_charges\":[",
        row.id,
        row.name,
        domain::Money::new(price, row.currency).to_decimal_string(),
        row.currency.code(),
        row.anchor_on
    );
    for (i, charge) in charges.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!(
            "{{\"id\":{},\"charged_on\":\"{}\",\"amount\":\"{}\",\"status\":\"{}\"}}",
            charge.id,
            charge.charged_on,
            domain::Money::new(charge.amount_minor, charge.currency).to_decimal_string(),
            charge.status.as_str()
        ));
    }
    out.push_str("]}");
    Ok(out)
}

/// Answers with JSON written by `write` in a read transaction, off the async threads.
async fn floor_answer(
    store: Arc<store::Store>,
    write: impl FnOnce(&store::Db<'_>) -> Result<String, store::StoreError> + Send + 'static,
) -> ([(&'static str, &'static str); 1], String) {
    let body =
        tokio::task::spawn_blocking(move || store.read(write).unwrap().unwrap()).await.unwrap();
    ([("content-type", "application/json")], body)
}

/// The floor: a bare axum handler answering from the same rows with hand-written JSON.
async fn serve_floor(
    database: std::path::PathBuf,
    household_id: i64,
    member_id: i64,
) -> std::net::SocketAddr {
    let store = Arc::new(store::Store::open(&database).unwrap());
    let list_store = store.clone();
    let handler =
        move || floor_answer(list_store.clone(), move |db| floor_list(db, household_id, member_id));
    let one = move |body: axum::body::Bytes| {
        let id = serde_json::from_slice::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| v["id"].as_i64())
            .unwrap_or(0);
        floor_answer(store.clone(), move |db| floor_one(db, household_id, member_id, id))
    };
    let router = axum::Router::new()
        .route("/floor", axum::routing::post(handler))
        .route("/floor/one", axum::routing::post(one));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    addr
}

fn rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map(|kb| kb / 1024.0)
        .unwrap_or(0.0)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let env = TestEnv::new();
        // The load below is one token at hundreds of calls a second, on purpose.
        env.app.set_token_rate_limit(None);
        let started = Instant::now();
        let owner = seed(&env).await;
        let charges = env.call(&owner, "list_charges", json!({"limit": 1})).await.unwrap()["total"].as_u64().unwrap();
        println!("Seeded {SUBSCRIPTIONS} subscriptions and {charges} charges in {:.1} s", started.elapsed().as_secs_f64());

        if let Some(op) = std::env::args().skip_while(|a| a != "--profile").nth(1) {
            // For `perf record`: only this op, many times.
            let input = if op == "get_subscription" { json!({"id": 250}) } else { json!({}) };
            let (p50, _, _) = in_process(&env, &owner, &op, input, 3000).await;
            println!("{op}: median {}", ms(p50));
            return;
        }
        let runs = if quick { 20 } else { 200 };
        println!("\nIn-process, through the catalog's text path as REST uses it ({runs} runs each; median, p99, output bytes):");
        for (op, input, runs) in [
            ("list_subscriptions", json!({"limit": 500}), runs),
            ("get_spending_summary", json!({}), runs),
            ("get_context", json!({}), runs / 4),
            ("get_subscription", json!({"id": 250}), runs),
        ] {
            let (p50, p99, bytes) = in_process(&env, &owner, op, input, runs.max(5)).await;
            println!("  {op:<22} median {:>10}  p99 {:>10}  {bytes:>7} bytes", ms(p50), ms(p99));
        }
        {
            let mut times = Vec::new();
            for _ in 0..runs {
                let start = Instant::now();
                let value = env.app.call_json(&owner, "list_subscriptions", json!({"limit": 500}), Mode::Apply).await.unwrap();
                times.push(start.elapsed());
                assert_eq!(value["items"].as_array().unwrap().len(), SUBSCRIPTIONS);
            }
            times.sort();
            println!("  (list_subscriptions as a JSON value tree, as MCP will use it: median {})", ms(percentile(&times, 0.5)));
        }
        {
            // The part of list_subscriptions that is SQLite and row mapping, for comparison.
            let store = store::Store::open(&env.dir.path().join("exhale.db")).unwrap();
            let mut times = Vec::new();
            for _ in 0..runs {
                let start = Instant::now();
                let rows = store.read(|db| store::subscriptions::list(db, owner.household_id, Some(owner.member_id))).unwrap().unwrap();
                times.push(start.elapsed());
                assert_eq!(rows.len(), SUBSCRIPTIONS);
            }
            times.sort();
            println!("  (store only: the 500 rows with tags, prices and pauses: median {})", ms(percentile(&times, 0.5)));
        }
        let context = env.call(&owner, "get_context", json!({})).await.unwrap();
        println!("  briefing markdown: {} bytes", context["markdown"].as_str().unwrap().len());

        let server = env.serve().await;
        let (token, _) = env.token(&owner, "read").await;
        let floor = serve_floor(env.dir.path().join("exhale.db"), owner.household_id, owner.member_id).await;
        let seconds = if quick { 2.0 } else { 6.0 };
        let list_body = json!({"limit": 500}).to_string();
        let plain = |url: String, token: Option<String>, body: String| Target { url, token, body, headers: Vec::new() };
        println!("\nOver loopback, {CLIENTS} concurrent clients, {seconds} s each; the floor is a bare axum handler answering from the same rows with hand-written JSON:");
        let rss_before = rss_mb();
        let rows = [
            ("floor, 500 rows", plain(format!("http://{floor}/floor"), None, list_body.clone())),
            ("REST list_subscriptions (500 rows)", plain(server.url("/api/v1/ops/list_subscriptions"), Some(token.clone()), list_body.clone())),
            ("MCP tools/call list_subscriptions (500 rows)", mcp_call(server.url("/mcp"), &token, "list_subscriptions", json!({"limit": 500}))),
            ("floor, one subscription and its recent charges", plain(format!("http://{floor}/floor/one"), None, json!({"id": 250}).to_string())),
            ("REST get_subscription", plain(server.url("/api/v1/ops/get_subscription"), Some(token.clone()), json!({"id": 250}).to_string())),
            ("MCP tools/call get_subscription", mcp_call(server.url("/mcp"), &token, "get_subscription", json!({"id": 250}))),
        ];
        let only = std::env::args().skip_while(|a| a != "--only").nth(1);
        if let Some(only) = &only {
            // For `perf record`: one load row only, for longer.
            let (label, target) = rows.into_iter().find(|(label, _)| label.contains(only.as_str())).unwrap();
            let result = load(target, 10.0).await;
            println!("  {label}: {:.0} calls/s", result.calls_per_second);
            return;
        }
        let mut results = Vec::new();
        for (label, target) in rows {
            let result = load(target, seconds).await;
            println!("  {label:<46} {:>8.0} calls/s  p50 {}  p99 {}", result.calls_per_second, ms(result.p50), ms(result.p99));
            results.push(result.calls_per_second);
        }
        println!(
            "  ratios: REST list / floor {:.2}; MCP list / floor {:.2}; REST get / floor {:.2}; MCP get / floor {:.2}",
            results[1] / results[0],
            results[2] / results[0],
            results[4] / results[3],
            results[5] / results[3]
        );
        for (set, path) in [("every tool", "/mcp"), ("the compact set", "/mcp?tools=compact")] {
            let tools = reqwest::Client::new()
                .post(server.url(path))
                .bearer_auth(&token)
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "tools/list")
                .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}}))
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            let count = serde_json::from_str::<Value>(&tools).unwrap()["result"]["tools"].as_array().unwrap().len();
            println!("  tools/list for a read token, {set}: {count} tools, {} bytes", tools.len());
        }

        web_pages(&server, quick).await;
        println!("\nRSS (bench process, app and load generator together): {rss_before:.0} MB before the load, {:.0} MB after", rss_mb());
    });
}

/// Signs in as the bench owner through the real form and returns the session cookie.
async fn web_session(server: &test_support::TestServer) -> String {
    let client =
        reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let form = client.get(server.url("/sign-in")).send().await.unwrap();
    let form_cookie =
        form.headers()["set-cookie"].to_str().unwrap().split(';').next().unwrap().to_owned();
    let body = form.text().await.unwrap();
    let marker = r#"name="form_token" value=""#;
    let start = body.find(marker).unwrap() + marker.len();
    let token = body[start..].split('"').next().unwrap();
    let signed_in = client
        .post(server.url("/sign-in"))
        .header("cookie", form_cookie)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("form_token={token}&email=bench%40example.com&password=correct+horse+battery+staple&next=%2F"))
        .send()
        .await
        .unwrap();
    signed_in
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|c| c.to_str().unwrap())
        .find(|c| c.starts_with("exhale_session="))
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned()
}

/// The overview and the subscriptions list: median and p99 time to the whole page, one request
/// at a time, and what a browser downloads for each (HTML, CSS and JS, uncompressed).
async fn web_pages(server: &test_support::TestServer, quick: bool) {
    let cookie = web_session(server).await;
    let client = reqwest::Client::new();
    let fetch = |path: &str| client.get(server.url(path)).header("cookie", cookie.clone()).send();
    let css = fetch("/static/app.css").await.unwrap().bytes().await.unwrap().len();
    let js = fetch("/static/app.js").await.unwrap().bytes().await.unwrap().len();
    let runs = if quick { 30 } else { 200 };
    println!(
        "\nWeb pages for the same household ({runs} sequential requests each; the list shows its first page of 100):"
    );
    for path in ["/", "/subscriptions"] {
        let mut times = Vec::with_capacity(runs);
        let mut html = 0;
        for _ in 0..runs {
            let start = Instant::now();
            let response = fetch(path).await.unwrap();
            assert_eq!(response.status(), 200);
            html = response.bytes().await.unwrap().len();
            times.push(start.elapsed());
        }
        times.sort();
        println!(
            "  {path:<16} median {}  p99 {}  page weight {} bytes (HTML {html} + CSS {css} + JS {js})",
            ms(percentile(&times, 0.5)),
            ms(percentile(&times, 0.99)),
            html + css + js
        );
    }
}
