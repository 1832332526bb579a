//! The core benchmark (DESIGN section 9): a household with 500 subscriptions and five years of
//! charges.
//!
//! - In-process: medians of ops through the catalog's text path.
//! - Over loopback, 16 concurrent clients: the real `exhale serve` against a floor, a bare axum
//!   server in its own process that answers the same requests from the same rows with
//!   hand-written JSON. For each call (get one subscription, a list page of 50, `tools/list`,
//!   over REST and MCP) the benchmark first checks that both answer the same bytes, then
//!   alternates the two: calls per second, p50, p99 and server CPU per call, medians of several
//!   runs, and Exhale's RSS.
//! - The web app's overview and subscriptions list: server time per page and page weight.
//!
//! Run: `cargo bench -p exhale --bench core` (or `-- --quick` for a short run; `-- --only LABEL`
//! for one loopback row, e.g. under `perf record`). With `EXHALE_TEST_PG` naming a cluster
//! (`scripts/postgres-cluster start`) the household is seeded on PostgreSQL, and the loopback
//! rows set Exhale on PostgreSQL against Exhale on SQLite instead of the floor:
//! the same seed on both, the same calls checked byte-identical, then alternated.

#![expect(
    clippy::print_stdout,
    clippy::unwrap_used,
    reason = "a benchmark prints its figures and stops on any failure"
)]

use std::time::{Duration, Instant};

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
    /// Server CPU (user and system) per call.
    cpu_per_call: Duration,
}

/// One kind of request the load generator sends.
#[derive(Clone)]
struct Target {
    url: String,
    token: Option<String>,
    body: String,
    headers: Vec<(&'static str, String)>,
}

impl Target {
    fn plain(url: String, token: Option<&str>, body: String) -> Self {
        Self { url, token: token.map(str::to_owned), body, headers: Vec::new() }
    }

    fn request(&self, client: &reqwest::Client) -> reqwest::RequestBuilder {
        let mut request = client
            .post(&self.url)
            .header("content-type", "application/json")
            .body(self.body.clone());
        for (name, value) in &self.headers {
            request = request.header(*name, value);
        }
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        request
    }

    /// The one answer, for the byte comparison.
    async fn answer(&self) -> String {
        let response = self.request(&reqwest::Client::new()).send().await.unwrap();
        assert!(response.status().is_success(), "{} {}", self.url, response.status());
        response.text().await.unwrap()
    }
}

/// A server process the benchmark started: Exhale or the floor.
struct Server {
    child: std::process::Child,
    /// `http://127.0.0.1:PORT`.
    url: String,
}

impl Server {
    /// Starts `command`, whose first line of output ends with the URL it listens on.
    fn start(mut command: std::process::Command) -> Self {
        let mut child = command.stdout(std::process::Stdio::piped()).spawn().unwrap();
        let mut lines =
            std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
        let first = lines.next().unwrap().unwrap();
        std::thread::spawn(move || lines.for_each(drop));
        let url = first.rsplit(' ').next().unwrap().trim_end_matches('/').to_owned();
        Self { child, url }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.url)
    }

    /// User and system CPU time so far.
    fn cpu(&self) -> Duration {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap();
        // The fields after the command name, which is in parentheses.
        let fields: Vec<&str> = stat.rsplit_once(')').unwrap().1.split_whitespace().collect();
        let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
        Duration::from_secs_f64(ticks as f64 / clock_ticks_per_second())
    }

    /// Resident memory now and at its peak, in MB.
    fn rss_mb(&self) -> (f64, f64) {
        let (now, peak) = test_support::memory_of(self.child.id());
        (now as f64 / 1024.0 / 1024.0, peak as f64 / 1024.0 / 1024.0)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn clock_ticks_per_second() -> f64 {
    static TICKS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        let out = std::process::Command::new("getconf").arg("CLK_TCK").output().unwrap();
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
    })
}

async fn load(server: &Server, target: &Target, seconds: f64) -> Load {
    load_spread(&[server], std::slice::from_ref(target), seconds).await
}

/// [`load`] over several targets (several households, on one or several servers): each client
/// takes the next target for each call, the clients starting apart; CPU is every server's.
async fn load_spread(servers: &[&Server], targets: &[Target], seconds: f64) -> Load {
    let client = reqwest::Client::builder().pool_max_idle_per_host(CLIENTS).build().unwrap();
    let cpu = || servers.iter().map(|server| server.cpu()).sum::<Duration>();
    let cpu_before = cpu();
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let started = Instant::now();
    let mut tasks = Vec::new();
    let targets = std::sync::Arc::new(targets.to_vec());
    for first in 0..CLIENTS {
        let client = client.clone();
        let targets = targets.clone();
        tasks.push(tokio::spawn(async move {
            let mut times = Vec::new();
            let mut next = first * targets.len() / CLIENTS;
            while Instant::now() < deadline {
                let target = &targets[next % targets.len()];
                next += 1;
                let start = Instant::now();
                let response = target.request(&client).send().await.unwrap();
                assert!(response.status().is_success(), "{}", response.status());
                let body = response.bytes().await.unwrap();
                // Inspect the first answer of each client only: the check must not load the
                // machine that is being measured.
                assert!(
                    !times.is_empty()
                        || !String::from_utf8_lossy(&body).contains("\"isError\":true"),
                    "a failed call: {}",
                    String::from_utf8_lossy(&body)
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
    let cpu = cpu().saturating_sub(cpu_before);
    times.sort();
    Load {
        calls_per_second: times.len() as f64 / elapsed,
        p50: percentile(&times, 0.5),
        p99: percentile(&times, 0.99),
        cpu_per_call: cpu / u32::try_from(times.len()).unwrap().max(1),
    }
}

/// The median of each figure over several runs.
/// Loads `first` and `second` in turn, `rounds` times each (`second` first in each round);
/// the medians of each.
async fn alternate(
    first: (&Server, &Target),
    second: (&Server, &Target),
    rounds: usize,
    seconds: f64,
) -> (Load, Load) {
    let (mut first_runs, mut second_runs) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        second_runs.push(load(second.0, second.1, seconds).await);
        first_runs.push(load(first.0, first.1, seconds).await);
    }
    (medians(&first_runs), medians(&second_runs))
}

/// One side against the other, as a row's columns: calls per second, their ratio, p50, p99
/// and CPU per call.
fn compared(a: &Load, b: &Load) -> String {
    let us = |d: Duration| format!("{:.0} µs", d.as_secs_f64() * 1e6);
    format!(
        "{:>9.0} {:>9.0} {:>7.2}  {:>9} {:>9}  {:>9} {:>9}  {:>8} {:>8}",
        a.calls_per_second,
        b.calls_per_second,
        a.calls_per_second / b.calls_per_second,
        ms(a.p50),
        ms(b.p50),
        ms(a.p99),
        ms(b.p99),
        us(a.cpu_per_call),
        us(b.cpu_per_call)
    )
}

fn medians(runs: &[Load]) -> Load {
    fn median<T: Copy + PartialOrd>(mut values: Vec<T>) -> T {
        values.sort_by(|a, b| a.partial_cmp(b).unwrap());
        values[values.len() / 2]
    }
    Load {
        calls_per_second: median(runs.iter().map(|r| r.calls_per_second).collect()),
        p50: median(runs.iter().map(|r| r.p50).collect()),
        p99: median(runs.iter().map(|r| r.p99).collect()),
        cpu_per_call: median(runs.iter().map(|r| r.cpu_per_call).collect()),
    }
}

/// A 2026-07-28 stateless request, as a modern MCP client sends it.
fn mcp_request(url: String, token: &str, method: &str, params: Value) -> Target {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"}
    });
    let mut headers = vec![
        ("accept", "application/json, text/event-stream".to_owned()),
        ("mcp-protocol-version", "2026-07-28".to_owned()),
        ("mcp-method", method.to_owned()),
    ];
    if let Some(name) = params["name"].as_str() {
        headers.push(("mcp-name", name.to_owned()));
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    Target { url, token: Some(token.to_owned()), body: body.to_string(), headers }
}

/// The same request for rmcp's own path: `mcp/src/direct.rs` leaves a weighted `Accept` to it.
fn via_rmcp(mut target: Target) -> Target {
    for (name, value) in &mut target.headers {
        if *name == "accept" {
            *value = "application/json;q=1, text/event-stream".to_owned();
        }
    }
    target
}

/// Where two answers that should be equal first differ.
fn first_difference(a: &str, b: &str) -> String {
    let at = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    let around =
        |s: &str| s.get(at.saturating_sub(60)..(at + 60).min(s.len())).unwrap_or("").to_owned();
    format!(
        "byte {at} of {} and {}:\n  Exhale: …{}…\n  floor:  …{}…",
        a.len(),
        b.len(),
        around(a),
        around(b)
    )
}

/// The floor: a bare axum server in its own process that answers the benchmark's requests from
/// the same SQLite rows with hand-written JSON, byte for byte what Exhale answers (the benchmark
/// checks before it measures). It does the work the answer needs and nothing else: the bearer
/// token looked up and checked in the read transaction, then the rows; no invoker, no schema,
/// no serde of the output. It computes what the benchmark's rows hold (active subscriptions
/// with tags, no category, card, pause or end date).
mod floor {
    use std::sync::Arc;

    use domain::{Currency, Date, Money, PricePoint, Series};
    use serde_json::Value;
    use store::subscriptions::SubscriptionRow;

    pub(crate) struct Floor {
        pub(crate) store: store::Store,
        pub(crate) household_id: i64,
        pub(crate) member_id: i64,
        pub(crate) today: Date,
        /// The `result` of `tools/list`: the same definitions for every call, so a bare server
        /// holds them written once.
        pub(crate) tools_list: String,
    }

    fn string(out: &mut String, text: &str) {
        out.push_str(&serde_json::to_string(text).unwrap());
    }

    fn amount(out: &mut String, minor: i64, currency: Currency) {
        let money = Money::new(minor, currency);
        out.push_str("{\"amount\":\"");
        out.push_str(&money.to_decimal_string());
        out.push_str("\",\"currency\":\"");
        out.push_str(currency.code());
        out.push_str("\",\"display\":");
        string(out, &money.display());
        out.push('}');
    }

    fn reference(out: &mut String, id: i64, name: &str) {
        out.push_str(&format!("{{\"id\":{id},\"name\":"));
        string(out, name);
        out.push('}');
    }

    fn prices(row: &SubscriptionRow) -> Vec<PricePoint> {
        row.prices.iter().map(|&(effective_on, minor)| PricePoint { effective_on, minor }).collect()
    }

    fn series<'a>(row: &SubscriptionRow, prices: &'a [PricePoint]) -> Series<'a> {
        Series { anchor: row.anchor_on, cycle: row.cycle, end_on: row.ends_on, pauses: &[], prices }
    }

    /// Whether `bearer` is a live API token of the floor's member, read in `db`.
    fn admitted(floor: &Floor, db: &store::Db<'_>, bearer: &str) -> store::Result<bool> {
        use sha2::Digest as _;
        let hash: String =
            sha2::Sha256::digest(bearer.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
        // Today's start stands for now: the benchmark's token does not expire.
        let now = floor.today.to_string();
        Ok(store::access::find_token_by_hash(db, &hash)?.is_some_and(|token| {
            token.revoked_at.is_none()
                && token.expires_at.is_none_or(|at| at > now)
                && (token.household_id, token.member_id) == (floor.household_id, floor.member_id)
        }))
    }

    impl Floor {
        /// `list_subscriptions` with `limit`: the first page, read as Exhale reads it (only the
        /// page's rows, and the count of all).
        pub(crate) fn list(&self, bearer: &str, limit: usize) -> String {
            let (rows, total) = self
                .store
                .read(|db| {
                    assert!(admitted(self, db, bearer)?, "the floor refused the token");
                    let filter = store::subscriptions::PageFilter::default();
                    let order = store::subscriptions::PageOrder::Name;
                    store::subscriptions::list_page(
                        db,
                        self.household_id,
                        Some(self.member_id),
                        &filter,
                        order,
                        limit as u32,
                        0,
                    )
                })
                .unwrap()
                .unwrap();
            let mut out = String::with_capacity(limit * 256);
            out.push_str("{\"items\":[");
            for (i, row) in rows.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let prices = prices(row);
                let series = series(row, &prices);
                let price = series.amount_on(self.today.max(row.anchor_on));
                out.push_str(&format!("{{\"id\":{},\"name\":", row.id));
                string(&mut out, &row.name);
                out.push_str(",\"price\":");
                amount(&mut out, price, row.currency);
                out.push_str(",\"cycle\":");
                string(&mut out, &row.cycle.describe());
                out.push_str(&format!(",\"status\":\"{}\"", row.status.as_str()));
                if let Some(next) = series.next_on_or_after(self.today) {
                    out.push_str(&format!(",\"next_charge_on\":\"{}\"", next.date));
                    if next.minor != price {
                        out.push_str(",\"next_charge_amount\":");
                        amount(&mut out, next.minor, row.currency);
                    }
                }
                out.push_str(",\"owner\":");
                string(&mut out, &row.owner_name);
                out.push_str(&format!(",\"visibility\":\"{}\"}}", row.visibility.as_str()));
            }
            out.push_str(&format!("],\"total\":{total}"));
            if total > limit as u64 {
                out.push_str(&format!(",\"next_cursor\":\"o{limit}\""));
            }
            out.push('}');
            out
        }

        /// `get_subscription`: the subscription, its price history and its last 12 charges.
        pub(crate) fn one(&self, bearer: &str, id: i64) -> String {
            let (row, charges) = self
                .store
                .read(|db| {
                    assert!(admitted(self, db, bearer)?, "the floor refused the token");
                    let row =
                        store::subscriptions::get(db, self.household_id, Some(self.member_id), id)?;
                    let filter = store::charges::ChargeFilter {
                        subscription_id: Some(id),
                        ..Default::default()
                    };
                    let (charges, _) = store::charges::list(
                        db,
                        self.household_id,
                        Some(self.member_id),
                        &filter,
                        12,
                        0,
                    )?;
                    Ok::<_, store::StoreError>((row, charges))
                })
                .unwrap()
                .unwrap();
            let prices = prices(&row);
            let series = series(&row, &prices);
            let price = series.amount_on(self.today.max(row.anchor_on));
            let currency = row.currency;
            let mut out = String::with_capacity(4096);
            out.push_str(&format!("{{\"id\":{},\"name\":", row.id));
            string(&mut out, &row.name);
            out.push_str(",\"price\":");
            amount(&mut out, price, currency);
            out.push_str(&format!(
                ",\"cycle\":{{\"every\":{},\"unit\":\"{}\"",
                row.cycle.every(),
                row.cycle.unit().as_str()
            ));
            if let Some(preset) = row.cycle.as_preset() {
                out.push_str(&format!(",\"preset\":\"{}\"", preset.as_str()));
            }
            out.push_str(",\"description\":");
            string(&mut out, &row.cycle.describe());
            out.push_str(&format!(
                "}},\"status\":\"{}\",\"anchor_on\":\"{}\"",
                row.status.as_str(),
                row.anchor_on
            ));
            if let Some(next) = series.next_on_or_after(self.today) {
                out.push_str(&format!(
                    ",\"next_charge_on\":\"{}\",\"next_charge_amount\":",
                    next.date
                ));
                amount(&mut out, next.minor, currency);
            }
            out.push_str(",\"tags\":[");
            for (i, tag) in row.tags.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                string(&mut out, tag);
            }
            out.push_str("],\"owner\":");
            reference(&mut out, row.owner_id, &row.owner_name);
            out.push_str(&format!(",\"visibility\":\"{}\",\"monthly\":", row.visibility.as_str()));
            amount(&mut out, row.cycle.monthly_minor(price), currency);
            out.push_str(",\"yearly\":");
            amount(&mut out, row.cycle.yearly_minor(price), currency);
            out.push_str(",\"price_history\":[");
            for (i, point) in prices.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&format!("{{\"effective_on\":\"{}\",\"price\":", point.effective_on));
                amount(&mut out, point.minor, currency);
                out.push('}');
            }
            out.push_str("],\"pauses\":[],\"recent_charges\":[");
            for (i, charge) in charges.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&format!("{{\"id\":{},\"subscription\":", charge.id));
                reference(&mut out, charge.subscription_id, &charge.subscription_name);
                out.push_str(&format!(",\"charged_on\":\"{}\",\"amount\":", charge.charged_on));
                amount(&mut out, charge.amount_minor, charge.currency);
                out.push_str(&format!(",\"status\":\"{}\"}}", charge.status.as_str()));
            }
            out.push_str("],\"next_charges\":[");
            for (i, next) in series.upcoming(self.today, 3).iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str("{\"subscription\":");
                reference(&mut out, row.id, &row.name);
                out.push_str(&format!(",\"charge_on\":\"{}\",\"amount\":", next.date));
                amount(&mut out, next.minor, currency);
                out.push('}');
            }
            out.push_str("]}");
            out
        }

        /// A JSON-RPC request to `/mcp`, answered as a tool result whose structured content
        /// and text are the same JSON.
        fn mcp(&self, bearer: &str, request: &Value) -> String {
            let id = &request["id"];
            let params = &request["params"];
            if request["method"] == "tools/list" {
                let admitted = self.store.read(|db| admitted(self, db, bearer)).unwrap().unwrap();
                assert!(admitted, "the floor refused the token");
                return format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{}}}",
                    self.tools_list
                );
            }
            let output = self.tool(bearer, params["name"].as_str().unwrap(), &params["arguments"]);
            let text = serde_json::to_string(&output).unwrap();
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"resultType\":\"complete\",\"content\":[{{\"type\":\"text\",\"text\":{text}}}],\"structuredContent\":{output},\"isError\":false}}}}"
            )
        }

        fn tool(&self, bearer: &str, name: &str, arguments: &Value) -> String {
            match name {
                "get_subscription" => self.one(bearer, arguments["id"].as_i64().unwrap()),
                _ => self.list(bearer, arguments["limit"].as_u64().unwrap() as usize),
            }
        }
    }

    /// Serves the floor until killed; prints where on its first line.
    pub(crate) fn serve(floor: Floor) {
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
        runtime.block_on(async move {
            let floor = Arc::new(floor);
            // Answers with JSON written in a read transaction, off the async threads.
            async fn answer(
                floor: Arc<Floor>,
                headers: axum::http::HeaderMap,
                body: axum::body::Bytes,
                write: fn(&Floor, &str, &Value) -> String,
            ) -> ([(&'static str, &'static str); 1], String) {
                let body = tokio::task::spawn_blocking(move || {
                    let authorization = headers.get("authorization").unwrap().to_str().unwrap();
                    let bearer = authorization.strip_prefix("Bearer ").unwrap();
                    let request: Value = serde_json::from_slice(&body).unwrap();
                    write(&floor, bearer, &request)
                })
                .await
                .unwrap();
                ([("content-type", "application/json")], body)
            }
            let (one, list, mcp) = (floor.clone(), floor.clone(), floor);
            let router = axum::Router::new()
                .route(
                    "/rest/get_subscription",
                    axum::routing::post(move |headers, body| {
                        answer(one.clone(), headers, body, |f, b, r| {
                            f.one(b, r["id"].as_i64().unwrap())
                        })
                    }),
                )
                .route(
                    "/rest/list_subscriptions",
                    axum::routing::post(move |headers, body| {
                        answer(list.clone(), headers, body, |f, b, r| {
                            f.list(b, r["limit"].as_u64().unwrap() as usize)
                        })
                    }),
                )
                .route(
                    "/mcp",
                    axum::routing::post(move |headers, body| {
                        answer(mcp.clone(), headers, body, Floor::mcp)
                    }),
                );
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            println!("The floor is listening on http://{}", listener.local_addr().unwrap());
            axum::serve(listener, router).await.unwrap();
        });
    }
}

/// `bench --floor DB HOUSEHOLD MEMBER TODAY TOOLS_FILE`: the floor process.
fn floor_main(args: &[String]) {
    floor::serve(floor::Floor {
        store: store::Store::open(std::path::Path::new(&args[0])).unwrap(),
        household_id: args[1].parse().unwrap(),
        member_id: args[2].parse().unwrap(),
        today: args[3].parse().unwrap(),
        tools_list: std::fs::read_to_string(&args[4]).unwrap(),
    });
}

/// The input `--profile OP` calls its op with.
fn profile_input(op: &str) -> Value {
    match op {
        "get_subscription" => json!({"id": 250}),
        "list_subscriptions" => json!({"limit": 500}),
        _ => json!({}),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--floor") {
        return floor_main(&args[at + 1..]);
    }
    let quick = args.iter().any(|a| a == "--quick");
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let env = TestEnv::new();
        if let Some(count) = args.iter().skip_while(|a| *a != "--households").nth(1) {
            return many_households(env, count.parse().unwrap(), quick).await;
        }
        let profile = args.iter().skip_while(|a| *a != "--profile").nth(1);
        if env.database.is_postgres() {
            return stores(env, quick, profile.map(String::as_str)).await;
        }
        let started = Instant::now();
        let owner = seed(&env).await;
        let charges = env.call(&owner, "list_charges", json!({"limit": 1})).await.unwrap()["total"].as_u64().unwrap();
        println!("Seeded {SUBSCRIPTIONS} subscriptions and {charges} charges in {:.1} s", started.elapsed().as_secs_f64());

        if let Some(op) = profile {
            // For `perf record`: only this op, many times.
            let (p50, _, _) = in_process(&env, &owner, op, profile_input(op), 3000).await;
            println!("{op}: median {}", ms(p50));
            return;
        }
        let runs = if quick { 20 } else { 200 };
        println!("\nIn-process, through the catalog's text path as REST and MCP use it ({runs} runs each; median, p99, output bytes):");
        for (op, input, runs) in [
            ("list_subscriptions", json!({"limit": 500}), runs),
            ("list_subscriptions", json!({"limit": 50}), runs),
            ("get_spending_summary", json!({}), runs),
            ("get_context", json!({}), runs / 4),
            ("get_subscription", json!({"id": 250}), runs),
        ] {
            let (p50, p99, bytes) = in_process(&env, &owner, op, input.clone(), runs.max(5)).await;
            println!("  {:<28} median {:>10}  p99 {:>10}  {bytes:>7} bytes", format!("{op} {input}"), ms(p50), ms(p99));
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

        let (token, _) = env.token(&owner, "write").await;
        let exhale = serve(&env);
        let (idle_rss, _) = exhale.rss_mb();
        let household = Target::plain(exhale.url("/api/v1/ops/get_household"), Some(&token), "{}".into()).answer().await;
        let today = serde_json::from_str::<Value>(&household).unwrap()["today"].as_str().unwrap().to_owned();
        let tools_list = mcp_request(exhale.url("/mcp"), &token, "tools/list", json!({})).answer().await;
        // The result as Exhale wrote it, for the floor to hold.
        let tools_result = tools_list.strip_prefix(r#"{"jsonrpc":"2.0","id":1,"result":"#).unwrap().strip_suffix('}').unwrap().to_owned();
        let tools_file = env.dir.path().join("tools-list.json");
        std::fs::write(&tools_file, &tools_result).unwrap();
        let mut command = std::process::Command::new(std::env::current_exe().unwrap());
        command
            .arg("--floor")
            .arg(env.dir.path().join("exhale.db"))
            .args([owner.household_id.to_string(), owner.member_id.to_string(), today.clone()])
            .arg(&tools_file);
        let floor = Server::start(command);

        let get = json!({"id": 250});
        let list = json!({"limit": 50});
        let cases = [
            ("REST get_subscription", Target::plain(exhale.url("/api/v1/ops/get_subscription"), Some(&token), get.to_string()), Target::plain(floor.url("/rest/get_subscription"), Some(&token), get.to_string())),
            ("MCP get_subscription", mcp_request(exhale.url("/mcp"), &token, "tools/call", json!({"name": "get_subscription", "arguments": get})), mcp_request(floor.url("/mcp"), &token, "tools/call", json!({"name": "get_subscription", "arguments": get}))),
            // The same call with an `Accept` weight, which only rmcp reads: what its per-request
            // service (a oneshot transport and a spawned task) costs next to the hot path.
            ("MCP get_subscription, rmcp", via_rmcp(mcp_request(exhale.url("/mcp"), &token, "tools/call", json!({"name": "get_subscription", "arguments": get}))), mcp_request(floor.url("/mcp"), &token, "tools/call", json!({"name": "get_subscription", "arguments": get}))),
            ("REST list_subscriptions, 50", Target::plain(exhale.url("/api/v1/ops/list_subscriptions"), Some(&token), list.to_string()), Target::plain(floor.url("/rest/list_subscriptions"), Some(&token), list.to_string())),
            ("MCP list_subscriptions, 50", mcp_request(exhale.url("/mcp"), &token, "tools/call", json!({"name": "list_subscriptions", "arguments": list})), mcp_request(floor.url("/mcp"), &token, "tools/call", json!({"name": "list_subscriptions", "arguments": list}))),
            ("MCP tools/list", mcp_request(exhale.url("/mcp"), &token, "tools/list", json!({})), mcp_request(floor.url("/mcp"), &token, "tools/list", json!({}))),
        ];
        let only = args.iter().skip_while(|a| *a != "--only").nth(1);
        let (rounds, seconds) = if quick { (1, 1.0) } else { (3, 3.0) };
        println!(
            "\nOver loopback, {CLIENTS} concurrent clients; Exhale (`exhale serve`, today {today}) against the floor (a bare axum server in its own process answering the same rows with hand-written JSON, checked byte-identical first); medians of {rounds} runs of {seconds} s each, the two sides alternating:"
        );
        println!("  {:<28} {:>9} {:>9} {:>7}  {:>9} {:>9}  {:>9} {:>9}  {:>8} {:>8}  {:>7}", "call", "Exhale/s", "floor/s", "ratio", "p50", "floor", "p99", "floor", "CPU/call", "floor", "bytes");
        for (label, at_exhale, at_floor) in &cases {
            if only.is_some_and(|only| !label.contains(only.as_str())) {
                continue;
            }
            let (mine, theirs) = (at_exhale.answer().await, at_floor.answer().await);
            if label.ends_with(", rmcp") {
                // rmcp writes the same JSON with its keys sorted.
                let parsed = |body: &str| serde_json::from_str::<Value>(body).unwrap();
                assert_eq!(parsed(&mine), parsed(&theirs), "{label}: the floor's answer is not Exhale's");
            } else {
                assert!(mine == theirs, "{label}: the floor's answer is not Exhale's, {}", first_difference(&mine, &theirs));
            }
            let (e, f) = alternate((&exhale, at_exhale), (&floor, at_floor), rounds, seconds).await;
            println!("  {label:<28} {}  {:>7}", compared(&e, &f), mine.len());
        }
        let (rss, peak) = exhale.rss_mb();
        let (_, floor_peak) = floor.rss_mb();
        println!("  Exhale's RSS: {idle_rss:.0} MB idle after start, {rss:.0} MB now, {peak:.0} MB at its peak (the floor's peak: {floor_peak:.0} MB)");
        tools_list_size("the token's set (the default, subscriptions)", &tools_result);
        let full = mcp_request(exhale.url("/mcp?tools=full"), &token, "tools/list", json!({})).answer().await;
        let full: Value = serde_json::from_str(&full).unwrap();
        tools_list_size("every tool", &full["result"].to_string());

        web_pages(&exhale, quick).await;
    });
}

/// `exhale serve` on `env`'s database (SQLite in its directory, or PostgreSQL by URL), with a
/// token that may call thousands of times a second.
fn serve(env: &TestEnv) -> Server {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_exhale"));
    command
        .arg("--data-dir")
        .arg(env.dir.path())
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("HOME", env.dir.path())
        .envs(env.database.env())
        // The load is one token at thousands of calls a second, on purpose.
        .env("EXHALE_TOKEN_RATE_PER_SECOND", "0")
        .env_remove("RUST_LOG")
        .stderr(std::process::Stdio::null());
    Server::start(command)
}

/// The two stores side by side: the household seeded alike on PostgreSQL (`postgres`) and on
/// SQLite, each served by `exhale serve`, the same calls checked byte-identical on both, then
/// alternated under the same load. CPU per call is Exhale's process alone: on PostgreSQL the
/// server's own work is in its processes, uncounted.
async fn stores(postgres: TestEnv, quick: bool, profile: Option<&str>) {
    if let Some(op) = profile {
        // For `perf record`: only this op on PostgreSQL, many times.
        let owner = seed(&postgres).await;
        let (p50, _, _) = in_process(&postgres, &owner, op, profile_input(op), 3000).await;
        println!("{op} on PostgreSQL: median {}", ms(p50));
        return;
    }
    let sqlite = TestEnv::on_sqlite();
    let started = Instant::now();
    let (on_postgres, on_sqlite) = (seed(&postgres).await, seed(&sqlite).await);
    println!(
        "Seeded {SUBSCRIPTIONS} subscriptions on each store in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let runs = if quick { 20 } else { 200 };
    println!(
        "\nIn-process, through the catalog's text path ({runs} runs each; median, p99; PostgreSQL, then SQLite):"
    );
    for (op, input) in [
        ("get_subscription", json!({"id": 250})),
        ("list_subscriptions", json!({"limit": 50})),
        ("list_subscriptions", json!({"limit": 500})),
        ("get_spending_summary", json!({})),
    ] {
        let (pg50, pg99, pg_bytes) =
            in_process(&postgres, &on_postgres, op, input.clone(), runs).await;
        let (lite50, lite99, lite_bytes) =
            in_process(&sqlite, &on_sqlite, op, input.clone(), runs).await;
        assert_eq!(pg_bytes, lite_bytes, "{op} {input}: the two stores answer alike");
        println!(
            "  {:<40} {:>10} {:>10}   {:>10} {:>10}  {:>5.1}x",
            format!("{op} {input}"),
            ms(pg50),
            ms(pg99),
            ms(lite50),
            ms(lite99),
            pg50.as_secs_f64() / lite50.as_secs_f64()
        );
    }
    let (pg_token, _) = postgres.token(&on_postgres, "write").await;
    let (lite_token, _) = sqlite.token(&on_sqlite, "write").await;
    let (pg, lite) = (serve(&postgres), serve(&sqlite));
    let get = json!({"id": 250});
    let list = json!({"limit": 50});
    let both = |path: &str, body: &Value| {
        (
            Target::plain(pg.url(path), Some(&pg_token), body.to_string()),
            Target::plain(lite.url(path), Some(&lite_token), body.to_string()),
        )
    };
    let mcp = |name: &str, arguments: &Value| {
        let params = json!({"name": name, "arguments": arguments});
        (
            mcp_request(pg.url("/mcp"), &pg_token, "tools/call", params.clone()),
            mcp_request(lite.url("/mcp"), &lite_token, "tools/call", params),
        )
    };
    let cases = [
        ("REST get_subscription", both("/api/v1/ops/get_subscription", &get)),
        ("MCP get_subscription", mcp("get_subscription", &get)),
        ("REST list_subscriptions, 50", both("/api/v1/ops/list_subscriptions", &list)),
        ("MCP list_subscriptions, 50", mcp("list_subscriptions", &list)),
    ];
    let (rounds, seconds) = if quick { (1, 1.0) } else { (3, 3.0) };
    println!(
        "\nOver loopback, {CLIENTS} concurrent clients; `exhale serve` on PostgreSQL against `exhale serve` on SQLite (answers checked byte-identical first); medians of {rounds} runs of {seconds} s each, alternating:"
    );
    println!(
        "  {:<28} {:>9} {:>9} {:>7}  {:>9} {:>9}  {:>9} {:>9}  {:>8} {:>8}",
        "call", "PG/s", "SQLite/s", "ratio", "p50", "SQLite", "p99", "SQLite", "CPU/call", "SQLite"
    );
    for (label, (at_pg, at_lite)) in &cases {
        let (theirs, ours) = (at_pg.answer().await, at_lite.answer().await);
        assert!(
            theirs == ours,
            "{label}: the stores answer differently, {}",
            first_difference(&theirs, &ours)
        );
        let (p, l) = alternate((&pg, at_pg), (&lite, at_lite), rounds, seconds).await;
        println!("  {label:<28} {}", compared(&p, &l));
    }
}

/// Transactions and subscriptions of each household in [`many_households`].
const HOUSEHOLD_TRANSACTIONS: usize = 5_000;
const HOUSEHOLD_SUBSCRIPTIONS: usize = 50;

/// `-- --households N` (on PostgreSQL with `EXHALE_TEST_PG`): N households of 50 subscriptions
/// and 5,000 transactions on one database, a read token each; 16 clients calling for the
/// households in turn, against one `exhale serve`, then spread over two on the same database.
async fn many_households(env: TestEnv, count: usize, quick: bool) {
    let started = Instant::now();
    let mut statement = String::from("Date,Description,Amount\n");
    for i in 0..HOUSEHOLD_TRANSACTIONS {
        let day = jiff::civil::date(2024, 1, 1)
            .checked_add(jiff::Span::new().days((i / 5) as i64))
            .unwrap();
        statement.push_str(&format!(
            "{day},SHOP {} {},-{}.{:02}\n",
            i % 13,
            i % 97,
            1 + i % 80,
            i % 100
        ));
    }
    let mut tokens = Vec::with_capacity(count);
    for h in 0..count {
        let owner = env.household(&format!("Home {h}"), &format!("home{h}@example.com")).await;
        let account = env
            .call(&owner, "create_account", json!({"name": "Current", "kind": "checking"}))
            .await
            .unwrap();
        let imported = env
            .call(
                &owner,
                "import_transactions",
                json!({"account_id": account["id"], "content": statement}),
            )
            .await
            .unwrap();
        assert_eq!(imported["imported"], HOUSEHOLD_TRANSACTIONS, "{imported}");
        for i in 0..HOUSEHOLD_SUBSCRIPTIONS {
            let input = json!({"name": format!("Service {i:02}"), "amount": format!("{}.99", 3 + i % 20), "cycle": "monthly", "next_charge_on": format!("2026-12-{:02}", 1 + i % 28)});
            env.call(&owner, "create_subscription", input).await.unwrap();
        }
        let (token, _) = env.token(&owner, "read").await;
        tokens.push(token);
        if (h + 1) % 100 == 0 {
            println!("  {} households seeded, {:.0} s", h + 1, started.elapsed().as_secs_f64());
        }
    }
    println!(
        "Seeded {count} households of {HOUSEHOLD_SUBSCRIPTIONS} subscriptions and {HOUSEHOLD_TRANSACTIONS} transactions in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    let (first, second) = (serve(&env), serve(&env));
    let calls: [(&str, &str, Value); 3] = [
        ("MCP get_subscription", "get_subscription", json!({"id": "Service 25"})),
        ("MCP list_subscriptions, 50", "list_subscriptions", json!({"limit": 50})),
        (
            "MCP search_transactions \"shop 7\"",
            "search_transactions",
            json!({"text": "shop 7", "limit": 50}),
        ),
    ];
    let (rounds, seconds) = if quick { (1, 2.0) } else { (3, 5.0) };
    println!(
        "\nOver loopback, {CLIENTS} concurrent clients, each call for the next of the {count} households; medians of {rounds} runs of {seconds} s:"
    );
    println!(
        "  {:<36} {:>12} {:>9} {:>9} {:>12} {:>9} {:>9}",
        "call", "one/s", "p50", "p99", "two/s", "p50", "p99"
    );
    for (label, tool, arguments) in &calls {
        let on = |server: &Server, token: &str| {
            mcp_request(
                server.url("/mcp"),
                token,
                "tools/call",
                json!({"name": tool, "arguments": arguments}),
            )
        };
        let one: Vec<Target> = tokens.iter().map(|token| on(&first, token)).collect();
        let two: Vec<Target> = tokens
            .iter()
            .enumerate()
            .map(|(h, token)| on(if h % 2 == 0 { &first } else { &second }, token))
            .collect();
        assert_eq!(
            one[1].answer().await,
            two[1].answer().await,
            "{label}: both instances answer alike"
        );
        // Each household called once on each instance first, one at a time, each answer
        // checked: the load then measures calls, not the first sight of every token.
        for target in one.iter().chain(&two) {
            assert!(!target.answer().await.contains("\"isError\":true"), "{label}: a failed call");
        }
        let (mut alone, mut spread) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            alone.push(load_spread(&[&first], &one, seconds).await);
            spread.push(load_spread(&[&first, &second], &two, seconds).await);
        }
        let (a, b) = (medians(&alone), medians(&spread));
        println!(
            "  {label:<36} {:>12.0} {:>9} {:>9} {:>12.0} {:>9} {:>9}",
            a.calls_per_second,
            ms(a.p50),
            ms(a.p99),
            b.calls_per_second,
            ms(b.p50),
            ms(b.p99)
        );
    }
}

/// What `tools/list` hands a model (names, descriptions and input schemas) and the whole list,
/// for a write token listing `set`.
fn tools_list_size(set: &str, result: &str) {
    let result: Value = serde_json::from_str(result).unwrap();
    let tools = result["tools"].as_array().unwrap();
    let visible: usize = tools
        .iter()
        .map(|tool| {
            tool["name"].as_str().unwrap().len()
                + tool["description"].as_str().unwrap().len()
                + tool["inputSchema"].to_string().len()
        })
        .sum();
    let longest = tools
        .iter()
        .map(|tool| tool["description"].as_str().unwrap().chars().count())
        .max()
        .unwrap();
    println!(
        "  tools/list for a write token, {set}: {} tools, {} bytes in all, {visible} bytes model-visible (names, descriptions, input schemas); longest description {longest} characters",
        tools.len(),
        result.to_string().len()
    );
}

/// Signs in as the bench owner through the real form and returns the session cookie.
async fn web_session(server: &Server) -> String {
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
async fn web_pages(server: &Server, quick: bool) {
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
