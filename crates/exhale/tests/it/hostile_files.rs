//! Statements made to cost the reader without bound (`statement::test_pdfs::hostile`: PDFs
//! that unpack to gigabytes, nest without end or draw one thing a million times), sent as
//! the outside test sent them: every one refused through the catalog by both ops that read
//! statements, over MCP with a read token, and four at once to the real `exhale serve`, whose
//! memory stays small.

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
    let dir = test_support::TempDir::new();
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
