//! The ledger benchmark (issue 16's budgets): statements of 100,000 transactions imported into
//! an account, first and again (everything then a duplicate), and `search_transactions` over
//! the 100,000 with each filter, in-process through the catalog's text path as REST and MCP
//! use it, the briefing and what needs attention over them (which look for pending bank
//! payments among them), and the web's transactions page over them through the real server
//! on loopback.
//! Prints medians; it asserts only that each run did the work (the counts, the rows shown).
//!
//! Run: `cargo bench -p exhale --bench ledger` (or `-- --quick` for fewer runs).

#![expect(
    clippy::print_stdout,
    clippy::unwrap_used,
    reason = "a benchmark prints its figures and stops on any failure"
)]

use std::time::{Duration, Instant};

use ops::{Catalog as _, Mode};
use serde_json::{Value, json};
use test_support::TestEnv;

const TRANSACTIONS: usize = 100_000;

const PAYEES: &[&str] = &[
    "CORNER CAFE MADRID",
    "SUPERMERCADO DIA 0231",
    "NETFLIX.COM",
    "SHELL 4411 VALENCIA",
    "AMAZON MKTPLACE EU",
    "FARMACIA LOPEZ",
    "RENFE VIAJEROS",
    "PAYROLL ACME SL",
    "BAR LA ESQUINA",
    "IKEA MURCIA",
];

/// A CSV statement of `TRANSACTIONS` rows over about five years, newest last.
fn statement() -> String {
    let mut out = String::from("Date,Description,Amount\n");
    let start = jiff::civil::date(2021, 12, 1);
    for i in 0..TRANSACTIONS {
        let day = start.checked_add(jiff::Span::new().days((i / 55) as i64)).unwrap();
        let payee = PAYEES[i % PAYEES.len()];
        let sign = if payee.starts_with("PAYROLL") { "" } else { "-" };
        out.push_str(&format!("{day},{payee} {},{sign}{}.{:02}\n", i % 97, 1 + i % 150, i % 100));
    }
    out
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

async fn call(env: &TestEnv, caller: &ops::Caller, op: &str, input: Value) -> (Duration, String) {
    let start = Instant::now();
    let output = env.app.call_json_text(caller, op, input, Mode::Apply).await.unwrap();
    (start.elapsed(), output)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let env = TestEnv::new();
        let content = statement();
        println!("A statement of {TRANSACTIONS} transactions, {} bytes (CSV)", content.len());
        let imports = if quick { 1 } else { 3 };
        let mut first = Vec::new();
        let mut again = Vec::new();
        let mut owners = Vec::new();
        let mut batches = Vec::new();
        for run in 0..imports {
            let owner = env.household(&format!("Bench {run}"), &format!("bench{run}@example.com")).await;
            let account = env.call(&owner, "create_account", json!({"name": "Current", "kind": "checking"})).await.unwrap();
            let input = json!({"account_id": account["id"], "content": content});
            let (took, output) = call(&env, &owner, "import_transactions", input.clone()).await;
            let output: Value = serde_json::from_str(&output).unwrap();
            assert_eq!(output["imported"], TRANSACTIONS, "{output}");
            batches.push(output["batch_id"].clone());
            first.push(took);
            let (took, output) = call(&env, &owner, "import_transactions", input).await;
            let output: Value = serde_json::from_str(&output).unwrap();
            assert_eq!(output["already_imported"], TRANSACTIONS, "{output}");
            again.push(took);
            owners.push(owner);
        }
        println!("import_transactions, {imports} households: first import median {}, the same statement again (all duplicates) median {}", ms(median(first)), ms(median(again)));

        // Categories and labels on part of them, so those filters have something to find.
        let owner = &owners[0];
        let label = env.call(owner, "create_label", json!({"name": "holiday"})).await.unwrap();
        let category = env.call(owner, "create_category", json!({"name": "Eating out"})).await.unwrap();
        for page in 0..10 {
            let cursor = format!("o{}", page * 500);
            let found = env.call(owner, "search_transactions", json!({"text": "cafe", "limit": 500, "cursor": cursor})).await.unwrap();
            let ids: Vec<Value> = found["items"].as_array().unwrap().iter().map(|t| t["id"].clone()).collect();
            env.call(owner, "categorise_transactions", json!({"ids": ids, "category_id": category["id"], "add_label_ids": [label["id"]]})).await.unwrap();
        }
        let runs = if quick { 20 } else { 200 };
        // The position after the 50,000th transaction, as a client paging there holds it.
        let deep = env.call(owner, "search_transactions", json!({"limit": 50, "cursor": "o49950"})).await.unwrap();
        let position = deep["next_cursor"].as_str().unwrap().to_owned();
        println!("\nsearch_transactions over {TRANSACTIONS} transactions, in-process ({runs} runs each; median, p99-ish max of the fastest 99%, output bytes, total):");
        for input in [
            json!({"limit": 50}),
            json!({"limit": 50, "cursor": "o50000"}),
            json!({"limit": 50, "cursor": position}),
            json!({"account_id": "Current", "limit": 50}),
            json!({"category_id": category["id"], "limit": 50}),
            json!({"label_ids": [label["id"]], "limit": 50}),
            json!({"from": "2024-03-01", "to": "2024-03-31", "limit": 50}),
            json!({"min_amount": "-20", "max_amount": "-10", "limit": 50}),
            json!({"text": "farmacia", "limit": 50}),
            json!({"text": "farmacia", "from": "2025-01-01", "min_amount": "-100", "limit": 50}),
            // Rare text: about 100 rows hold it, and none "nowhere".
            json!({"text": "esquina 42", "limit": 50}),
            json!({"text": "nowhere", "limit": 50}),
            json!({"uncategorised": true, "limit": 500}),
        ] {
            let mut times = Vec::with_capacity(runs);
            let mut output = String::new();
            for _ in 0..runs {
                let (took, out) = call(&env, owner, "search_transactions", input.clone()).await;
                times.push(took);
                output = out;
            }
            times.sort();
            let p99 = times[(times.len() * 99 / 100).min(times.len() - 1)];
            let total = serde_json::from_str::<Value>(&output).unwrap()["total"].clone();
            println!("  {:<72} median {:>10}  p99 {:>10}  {:>7} bytes  total {total}", input.to_string(), ms(median(times)), ms(p99), output.len());
        }

        // What needs attention and the briefing read the household's pending bank payments
        // (none here) among its booked ones, at every question an agent asks.
        println!("\nThe briefing and what needs attention over {TRANSACTIONS} transactions (none pending), in-process ({runs} runs each):");
        for op in ["list_attention_items", "get_context"] {
            let mut times = Vec::with_capacity(runs);
            let mut output = String::new();
            for _ in 0..runs {
                let (took, out) = call(&env, owner, op, json!({})).await;
                times.push(took);
                output = out;
            }
            println!("  {op:<72} median {:>10}  {:>7} bytes", ms(median(times)), output.len());
        }

        // The transactions page, signed in as a browser would be, through the real server.
        let server = env.serve().await;
        let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        let cookies = sign_in(&client, &server.url(""), "bench0@example.com").await;
        println!("\nGET /transactions over {TRANSACTIONS} transactions, 100 rows a page, through the server on loopback ({runs} runs each):");
        let deep_page = format!("/transactions?cursor={position}");
        for path in ["/transactions", "/transactions?q=farmacia", "/transactions?q=esquina+42", "/transactions?from=2024-03-01&to=2024-03-31", "/transactions?cursor=o50000", deep_page.as_str()] {
            let mut times = Vec::with_capacity(runs);
            let mut body = String::new();
            for _ in 0..runs {
                let start = Instant::now();
                let response = client.get(server.url(path)).header("cookie", &cookies).send().await.unwrap();
                assert_eq!(response.status(), 200, "{path}");
                body = response.text().await.unwrap();
                times.push(start.elapsed());
            }
            assert_eq!(body.matches("<tr><td>").count(), 100, "{path}: a full page");
            times.sort();
            println!("  {path:<52} median {:>10}  {:>7} bytes", ms(median(times)), body.len());
        }

        // Last, as it leaves the file's pages in another order: undoing an import takes its
        // transactions away, and undoing that brings them back.
        let (took_undo, output) = call(&env, &owners[0], "undo", json!({"batch_id": batches[0]})).await;
        let undone: Value = serde_json::from_str(&output).unwrap();
        let (took_redo, _) = call(&env, &owners[0], "undo", json!({"audit_ids": undone["audit_ids"]})).await;
        let back = env.call(&owners[0], "list_accounts", json!({})).await.unwrap();
        assert_eq!(back["items"][0]["transaction_count"], TRANSACTIONS, "{back}");
        println!("undo of the import {}, and undo of that undo (its {TRANSACTIONS} transactions back) {}", ms(took_undo), ms(took_redo));
    });
}

/// Signs in through the sign-in form; returns the session's cookies as a header value.
async fn sign_in(client: &reqwest::Client, base: &str, email: &str) -> String {
    let form = client.get(format!("{base}/sign-in")).send().await.unwrap();
    let mut cookies: Vec<String> = form
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().split(';').next().unwrap().to_owned())
        .collect();
    let html = form.text().await.unwrap();
    let token = html
        .split("name=\"form_token\" value=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    let signed = client
        .post(format!("{base}/sign-in"))
        .header("cookie", cookies.join("; "))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!(
            "form_token={token}&email={}&password={}&next=%2F",
            email.replace('@', "%40"),
            test_support::PASSWORD.replace(' ', "+")
        ))
        .send()
        .await
        .unwrap();
    assert!(signed.status().is_redirection(), "signing in: {}", signed.status());
    cookies.extend(
        signed
            .headers()
            .get_all("set-cookie")
            .iter()
            .map(|v| v.to_str().unwrap().split(';').next().unwrap().to_owned()),
    );
    cookies.join("; ")
}
