//! Statements made to cost the reader without bound (`statement::test_pdfs::hostile`: PDFs
//! that unpack to gigabytes, nest without end or draw one thing a million times), sent as
//! the outside test sent them: every one refused through the catalog by both ops that read
//! statements, over MCP with a read token, and four at once to the real `exhale serve`, whose
//! memory stays small. What the checks do not model (`test_pdfs::beyond_the_checks`) stops
//! only the process the real server reads a PDF in, and a PDF a real writer made (Chromium)
//! is read in that process.

use serde_json::{Value, json};
use statement::test_pdfs;

use crate::{
    cli::{listening_url, owner_with_token, spawn_serve},
    fixtures::World,
    mcp::{call, http_client, text},
};

#[tokio::test]
async fn every_hostile_pdf_is_refused_by_both_readers_and_nothing_is_stored() {
    let w = World::new().await;
    let before = w.env.dump().await;
    for hostile in test_pdfs::hostile() {
        let pdf = ops::import::encode_base64(&(hostile.pdf)());
        for (op, input) in [
            ("parse_statement", json!({"content_base64": pdf})),
            ("import_transactions", json!({"account_id": w.joint, "content_base64": pdf})),
        ] {
            let refused = w.env.call(&w.ana, op, input).await.unwrap_err();
            assert_eq!(refused.code(), "invalid_input", "{}: {op}", hostile.name);
            let message = refused.text().render();
            assert!(
                message.contains(hostile.refused) && message.contains("CSV or OFX"),
                "{}: {op} said {message:?}",
                hostile.name
            );
        }
    }
    assert_eq!(w.env.dump().await, before);
}

#[tokio::test]
async fn a_read_token_s_bomb_over_mcp_is_answered_with_what_to_send_instead() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let (token, _) = w.env.token(&w.ana, "read").await;
    let client = http_client(server.url("/mcp"), &token, "bomber").await;
    let pdf = ops::import::encode_base64(&test_pdfs::gibibyte_of_zeros());
    let result = call(&client, "parse_statement", json!({"content_base64": pdf})).await;
    assert_eq!(result.is_error, Some(true));
    let said = text(&result);
    assert!(said.contains("unpacks to more than 4 MB"), "{said}");
    assert!(said.contains("export the statement as CSV or OFX"), "{said}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn four_bombs_at_once_leave_the_real_server_small_and_answering() {
    let dir = test_support::DataDir::new();
    let token = owner_with_token(&dir, "read");
    let mut child = spawn_serve(&dir);
    let url = listening_url(&mut child);
    let client = reqwest::Client::new();
    let healthz = || client.get(format!("{url}/healthz")).send();
    assert_eq!(healthz().await.unwrap().status(), 200);
    let (idle, _) = test_support::memory_of(child.id());
    let body =
        json!({"content_base64": ops::import::encode_base64(&test_pdfs::gibibyte_of_zeros())});
    let bomb = || {
        client
            .post(format!("{url}/api/v1/ops/parse_statement"))
            .bearer_auth(&token)
            .json(&body)
            .send()
    };
    let answers = futures_util::future::join_all((0..4).map(|_| bomb())).await;
    for answer in answers {
        let answer = answer.unwrap();
        assert_eq!(answer.status(), 400);
        let problem: Value = answer.json().await.unwrap();
        assert_eq!(problem["code"], "invalid_input", "{problem}");
        assert!(problem["detail"].as_str().unwrap().contains("unpacks to more than"), "{problem}");
    }
    assert_eq!(healthz().await.unwrap().status(), 200);
    let (_, peak) = test_support::memory_of(child.id());
    // The outside test saw 2.1 GiB for one of these; the budget is 100 MiB above idle.
    assert!(peak < idle + (100 << 20), "idle {} MiB, peak {} MiB", idle >> 20, peak >> 20);
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn the_ops_that_read_statements_state_the_reader_s_limits() {
    use ops::Op as _;
    let limits = format!(
        "a PDF unpacking past {} MB, {} MB a stream, is refused",
        statement::MAX_EXPANDED_BYTES >> 20,
        statement::MAX_STREAM_BYTES >> 20
    );
    assert!(ops::import::ParseStatement::INFO.description.contains(&limits));
    assert!(
        ops::import::ImportTransactions::INFO
            .description
            .starts_with("Formats and limits as parse_statement")
    );
}

#[tokio::test]
async fn what_the_checks_miss_stops_only_the_process_that_reads_the_pdf() {
    let dir = test_support::DataDir::new();
    let token = owner_with_token(&dir, "read");
    let mut child = spawn_serve(&dir);
    let url = listening_url(&mut child);
    let client = reqwest::Client::new();
    assert_eq!(client.get(format!("{url}/healthz")).send().await.unwrap().status(), 200);
    let (idle, _) = test_support::memory_of(child.id());
    for (name, pdf) in test_pdfs::beyond_the_checks() {
        let body = json!({"content_base64": ops::import::encode_base64(&pdf())});
        let answer = client
            .post(format!("{url}/api/v1/ops/parse_statement"))
            .bearer_auth(&token)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 400, "{name}");
        let problem: Value = answer.json().await.unwrap();
        let detail = problem["detail"].as_str().unwrap();
        assert!(detail.contains("takes more work to read than a statement"), "{name}: {detail}");
    }
    // The reader's process used what it was allowed and stopped; the server did not notice.
    assert_eq!(client.get(format!("{url}/healthz")).send().await.unwrap().status(), 200);
    let (_, peak) = test_support::memory_of(child.id());
    assert!(peak < idle + (100 << 20), "idle {} MiB, peak {} MiB", idle >> 20, peak >> 20);
    child.kill().unwrap();
    child.wait().unwrap();
}

/// A statement as a real writer makes it: Chromium prints an HTML statement to PDF (Skia's
/// writer: subset TrueType fonts with ToUnicode maps, compressed content), with its columns
/// apart as a bank's are, and the real server reads it in the reader's own process.
#[tokio::test]
async fn a_statement_printed_to_pdf_by_chromium_is_read_by_the_real_server() {
    let dir = test_support::DataDir::new();
    let mut rows = String::new();
    for month in 1..=4 {
        rows.push_str(&format!(
            "<tr><td>15/{month:02}/2026</td><td>NETFLIX.COM 866-579</td><td>-12.99</td></tr>\
             <tr><td>03/{month:02}/2026</td><td>GYMPOWER LTD</td><td>-29.90</td></tr>"
        ));
    }
    let html = dir.path().join("statement.html");
    std::fs::write(
        &html,
        format!(
            "<!doctype html><html><head><meta charset=\"utf-8\">\
             <style>td {{ padding: 2px 24px; }}</style></head><body>\
             <h1>Example Bank</h1><p>Statement, 1 January 2026 to 30 April 2026</p>\
             <table><tr><th>Date</th><th>Description</th><th>Amount</th></tr>{rows}</table>\
             </body></html>"
        ),
    )
    .unwrap();
    let pdf_path = dir.path().join("statement.pdf");
    let printed = std::process::Command::new("/usr/bin/chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--no-pdf-header-footer",
        ])
        .arg(format!("--user-data-dir={}", dir.path().join("profile").display()))
        .arg(format!("--print-to-pdf={}", pdf_path.display()))
        .arg(format!("file://{}", html.display()))
        .output()
        .expect("Debian's chromium, which scripts/test installs");
    assert!(printed.status.success(), "{}", String::from_utf8_lossy(&printed.stderr));
    let pdf = std::fs::read(&pdf_path).unwrap();
    assert!(pdf.starts_with(b"%PDF"));

    let token = owner_with_token(&dir, "read");
    let mut child = spawn_serve(&dir);
    let url = listening_url(&mut child);
    let answer = reqwest::Client::new()
        .post(format!("{url}/api/v1/ops/parse_statement"))
        .bearer_auth(&token)
        .json(&json!({"content_base64": ops::import::encode_base64(&pdf)}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let parsed: Value = answer.json().await.unwrap();
    assert_eq!(parsed["transactions"].as_array().unwrap().len(), 8, "{parsed}");
    let names: Vec<&str> = parsed["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert!(names.contains(&"Netflix"), "{names:?}");
    child.kill().unwrap();
    child.wait().unwrap();
}
