//! `parse_statement` through the catalog and REST: bank exports in the shapes banks write,
//! candidates matched with existing subscriptions and categories, and every kind of bad
//! input refused with a message while nothing is stored.

use serde_json::{Value, json};

use crate::fixtures::World;

/// Four months of a small household, UK style.
pub(crate) fn uk_export() -> String {
    let mut out = String::from("Date,Description,Amount\n");
    for month in 1..=4 {
        out.push_str(&format!("15/{month:02}/2026,NETFLIX.COM 866{month}7172,-12.99\n"));
        out.push_str(&format!("03/{month:02}/2026,GYMPOWER LTD #00{month}2,-29.90\n"));
        out.push_str(&format!(
            "0{month}/{month:02}/2026,TESCO STORES {month}21,-{}.{}\n",
            20 + month * 7,
            month * 13
        ));
        out.push_str(&format!("25/{month:02}/2026,SALARY ACME,\"2,500.00\"\n"));
    }
    out.push_str("31/02/2026,BROKEN ROW,-1.00\n");
    out
}

async fn parse(w: &World, input: Value) -> Result<Value, ops::OpError> {
    w.env.call(&w.ana, "parse_statement", input).await
}

#[tokio::test]
async fn a_statement_becomes_candidates_matched_with_what_exists() {
    let w = World::new().await;
    let before = w.env.dump().await;
    let parsed = parse(&w, json!({"content": uk_export()})).await.unwrap();
    assert_eq!(parsed["transaction_count"], 16);
    assert_eq!(parsed["problems"][0]["line"], 18, "{parsed}");
    assert!(parsed["notes"][0].as_str().unwrap().contains("comma-separated"), "{parsed}");
    let candidates = parsed["candidates"].as_array().unwrap();
    let names: Vec<&str> = candidates.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 2, "groceries and salary are not subscriptions: {names:?}");
    let netflix = candidates.iter().find(|c| c["merchant"] == "NETFLIX").unwrap();
    assert_eq!(netflix["existing"]["id"], w.netflix, "Ana has Netflix already");
    assert_eq!(
        (netflix["cycle"].as_str(), netflix["amount"]["amount"].as_str()),
        (Some("monthly"), Some("12.99"))
    );
    assert_eq!(netflix["next_expected_on"], "2026-05-15");
    assert_eq!(netflix["charges"].as_array().unwrap().len(), 4);
    let gym = candidates.iter().find(|c| c["merchant"] == "GYMPOWER").unwrap();
    assert!(gym["existing"].is_null());
    assert_eq!(gym["category"]["name"], "Fitness & health");
    assert_eq!(w.env.dump().await, before, "reading a statement stores nothing");
}

#[tokio::test]
async fn a_charge_matches_only_subscriptions_the_person_can_see() {
    let w = World::new().await;
    let statement: String =
        (1..=4).map(|m| format!("2026-0{m}-01,BOB'S GYM 12{m}4,-30.00\n")).collect();
    let as_ana = parse(&w, json!({"content": statement})).await.unwrap();
    assert!(as_ana["candidates"][0]["existing"].is_null(), "Bob's gym is private to Bob: {as_ana}");
    let as_bob =
        w.env.call(&w.bob, "parse_statement", json!({"content": statement})).await.unwrap();
    assert_eq!(as_bob["candidates"][0]["existing"]["id"], w.bobs_gym);
    let as_cai =
        w.env.call(&w.cai, "parse_statement", json!({"content": uk_export()})).await.unwrap();
    let netflix = as_cai["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["merchant"] == "NETFLIX")
        .unwrap();
    assert_eq!(netflix["existing"]["id"], w.other_household_sub, "Cai's own Netflix, not Ana's");
}

#[tokio::test]
async fn exports_in_other_encodings_come_as_base64() {
    let w = World::new().await;
    let text = uk_export().replace(',', "\t").replace("\"2\t500.00\"", "2500.00");
    let utf16: Vec<u8> =
        [0xFF, 0xFE].into_iter().chain(text.encode_utf16().flat_map(u16::to_le_bytes)).collect();
    let encoded = ops::import::encode_base64(&utf16);
    let parsed = parse(&w, json!({"content_base64": encoded})).await.unwrap();
    assert_eq!(parsed["transaction_count"], 16, "{parsed}");
    assert!(parsed["notes"][0].as_str().unwrap().starts_with("UTF-16, tab-separated"), "{parsed}");
}

#[tokio::test]
async fn bad_statements_are_refused_with_a_message_and_nothing_is_stored() {
    let w = World::new().await;
    let before = w.env.dump().await;
    let cases: Vec<(Value, &str)> = vec![
        (json!({}), "Give the statement's text as content"),
        (json!({"content": "a", "content_base64": "YQ=="}), "not both"),
        (json!({"content": ""}), "empty"),
        (json!({"content_base64": "%%%"}), "not base64"),
        (
            json!({"content_base64": ops::import::encode_base64(&[0, 1, 2, 3, 200, 201, 0, 0, 7, 8])}),
            "not a text file",
        ),
        (json!({"content": "name,colour\nx,red\n"}), "no column of dates and amounts"),
        (
            json!({"content": "x".repeat(ops::import::MAX_STATEMENT_BYTES + 1)}),
            "Export a shorter period",
        ),
        (json!({"content": "Date,Description,Amount\n2026-01-01,A,12abc\n"}), "not an amount"),
    ];
    for (input, expected) in cases {
        let err = parse(&w, input.clone()).await.unwrap_err();
        assert_eq!(err.code(), "invalid_input", "{input}");
        let message = err.text().render();
        assert!(message.contains(expected), "{expected:?} not in {message:?}");
    }
    // Spreadsheet formulas in descriptions are text, like any other.
    let formula = "Date,Description,Amount\n2026-01-05,=HYPERLINK(\"x\"),-5.00\n2026-02-05,=HYPERLINK(\"x\"),-5.00\n2026-03-05,=HYPERLINK(\"x\"),-5.00\n";
    let parsed = parse(&w, json!({"content": formula})).await.unwrap();
    assert_eq!(parsed["transactions"][0]["description"], "=HYPERLINK(\"x\")");
    assert_eq!(w.env.dump().await, before);
}

#[tokio::test]
async fn a_read_token_may_parse_over_rest() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let (token, _) = w.env.token(&w.ana, "read").await;
    let response = reqwest::Client::new()
        .post(server.url("/api/v1/ops/parse_statement"))
        .bearer_auth(token)
        .json(&json!({"content": uk_export()}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["candidates"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn reviewed_candidates_are_imported_with_their_price_history_once() {
    let w = World::new().await;
    let parsed = parse(&w, json!({"content": uk_export()})).await.unwrap();
    // The person keeps the candidates that are not subscriptions yet, renaming the gym.
    let items: Vec<Value> = parsed["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["existing"].is_null() && c["active"] == true)
        .map(|c| {
            json!({
                "name": if c["merchant"] == "GYMPOWER" { json!("Gym Power") } else { c["name"].clone() },
                "amount": c["amount"]["amount"],
                "cycle": c["cycle"],
                "category_id": c["category"]["id"],
                "charges": c["charges"].as_array().unwrap().iter()
                    .map(|ch| json!({"date": ch["date"], "amount": ch["amount"]["amount"]})).collect::<Vec<_>>(),
            })
        })
        .collect();
    assert_eq!(items.len(), 1);
    let before = w.env.dump().await;
    let preview =
        w.env.dry_run(&w.ana, "import_subscriptions", json!({"items": items})).await.unwrap();
    assert_eq!(preview["created"][0]["name"], "Gym Power");
    assert_eq!(w.env.dump().await, before, "a dry run creates nothing");

    let imported =
        w.env.call(&w.ana, "import_subscriptions", json!({"items": items})).await.unwrap();
    let id = imported["created"][0]["id"].as_i64().unwrap();
    let gym = w.env.call(&w.ana, "get_subscription", json!({"id": id})).await.unwrap();
    assert_eq!(
        (gym["name"].as_str(), gym["cycle"]["preset"].as_str()),
        (Some("Gym Power"), Some("monthly"))
    );
    assert_eq!(gym["anchor_on"], "2026-01-03", "the series starts at the first charge seen");
    assert_eq!(gym["category"]["name"], "Fitness & health");
    let charges = w
        .env
        .call(&w.ana, "list_charges", json!({"subscription_id": id, "limit": 50}))
        .await
        .unwrap();
    assert!(charges["total"].as_u64().unwrap() >= 4, "past charges are recorded: {charges}");

    // The same import again creates nothing, and says why.
    let again = w.env.call(&w.ana, "import_subscriptions", json!({"items": items})).await.unwrap();
    assert_eq!(again["created"], json!([]));
    assert_eq!(again["skipped"][0]["existing"]["id"], id);

    // A price rise in the charges becomes the price history; past charges follow it.
    let rising = json!({"items": [{"name": "Streamy", "amount": "9.99", "cycle": "monthly", "charges": [
        {"date": "2026-07-10", "amount": "7.99"}, {"date": "2026-08-10", "amount": "7.99"}, {"date": "2026-09-10", "amount": "9.99"},
    ]}]});
    let created = w.env.call(&w.ana, "import_subscriptions", rising).await.unwrap();
    let id = created["created"][0]["id"].as_i64().unwrap();
    let streamy = w.env.call(&w.ana, "get_subscription", json!({"id": id})).await.unwrap();
    let history: Vec<(&str, &str)> = streamy["price_history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["effective_on"].as_str().unwrap(), p["price"]["amount"].as_str().unwrap()))
        .collect();
    assert_eq!(history, vec![("2026-07-10", "7.99"), ("2026-09-10", "9.99")]);
    let charges = w
        .env
        .call(&w.ana, "list_charges", json!({"subscription_id": id, "limit": 50}))
        .await
        .unwrap();
    let paid: Vec<&str> = charges["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["amount"]["amount"].as_str().unwrap())
        .collect();
    assert!(paid.contains(&"7.99") && paid.contains(&"9.99"), "{paid:?}");
}

#[tokio::test]
async fn an_import_with_a_bad_item_creates_nothing_and_points_at_it() {
    let w = World::new().await;
    let before = w.env.dump().await;
    let items = json!([
        {"name": "Fine", "amount": "5.00", "cycle": "monthly", "charges": [{"date": "2026-10-01", "amount": "5.00"}]},
        {"name": "Broken", "amount": "5.00", "cycle": "monthly", "charges": [{"date": "2026-02-30", "amount": "5.00"}]},
    ]);
    let err =
        w.env.call(&w.ana, "import_subscriptions", json!({"items": items})).await.unwrap_err();
    assert_eq!(err.code(), "invalid_input");
    let ops::OpError::InvalidInput { pointer, .. } = &err else { panic!("{err:?}") };
    assert_eq!(pointer, "/items/1/charges/0/date");
    let none = w
        .env
        .call(
            &w.ana,
            "import_subscriptions",
            json!({"items": [{"name": "X", "amount": "1", "cycle": "monthly", "charges": []}]}),
        )
        .await
        .unwrap_err();
    assert!(none.text().render().contains("at least one"), "{none:?}");
    assert_eq!(
        w.env.call(&w.ana, "import_subscriptions", json!({"items": []})).await.unwrap_err().code(),
        "invalid_input"
    );
    assert_eq!(w.env.dump().await, before, "one bad item and nothing is imported");
    // A read token cannot import; a write token's import waits for the person's yes.
    let (_, reader) = w.env.token(&w.ana, "read").await;
    assert_eq!(
        w.env
            .call(&reader, "import_subscriptions", json!({"items": items}))
            .await
            .unwrap_err()
            .code(),
        "forbidden"
    );
    let (_, writer) = w.env.token(&w.ana, "write").await;
    let fine = json!({"items": [items[0].clone()]});
    assert_eq!(
        w.env.call(&writer, "import_subscriptions", fine).await.unwrap_err().code(),
        "confirmation_required"
    );
}

/// A statement of `rows` transactions of a busy account, about 40 bytes a row.
pub(crate) fn long_statement(rows: usize) -> String {
    let mut out = String::from("Date,Description,Amount\n");
    for n in 0..rows {
        out.push_str(&format!(
            "2026-{:02}-{:02},SHOP {n},-1.{:02}\n",
            n % 12 + 1,
            n % 28 + 1,
            n % 100
        ));
    }
    out
}

#[tokio::test]
async fn a_statement_larger_than_other_requests_is_read_over_rest() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let (token, _) = w.env.token(&w.ana, "read").await;
    let client = reqwest::Client::new();
    // About 2 MB, 2.7 MB in base64: over the 1 MB any other request may be, within the op's
    // own limit.
    let statement = long_statement(75_000);
    let body =
        json!({"content_base64": ops::import::encode_base64(statement.as_bytes())}).to_string();
    assert!(body.len() > 2 * 1024 * 1024, "{}", body.len());
    let post = |op: &str, body: String| {
        client
            .post(server.url(&format!("/api/v1/ops/{op}")))
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let response = post("parse_statement", body.clone()).await.unwrap();
    assert_eq!(response.status(), 200);
    let parsed: Value = response.json().await.unwrap();
    assert_eq!(parsed["transaction_count"], 75_000);
    // Every other op keeps the server's limit.
    let response = post("list_subscriptions", body.clone()).await.unwrap();
    assert_eq!(response.status(), 413);
    let problem: Value = response.json().await.unwrap();
    assert!(
        problem["detail"].as_str().unwrap_or_default().contains("max_request_bytes"),
        "{problem}"
    );
    let response = post("no_such_op", body).await.unwrap();
    assert_eq!(response.status(), 404, "the op is named first");
    // And the op's own limit holds.
    let over =
        format!("{{\"content\": \"{}\"}}", "x".repeat(ops::import::MAX_STATEMENT_REQUEST_BYTES));
    assert_eq!(post("parse_statement", over).await.unwrap().status(), 413);
}

#[tokio::test]
async fn a_bill_that_follows_use_is_proposed_and_imported_as_an_estimate() {
    let w = World::new().await;
    let mut statement = String::from("Fecha;Concepto;Importe\n");
    for (month, amount) in ["61,20", "58,40", "43,10", "39,90", "44,75", "52,30"].iter().enumerate()
    {
        statement.push_str(&format!(
            "14/{:02}/2026;IBERDROLA CLIENTES {month}8812;-{amount}\n",
            month + 1
        ));
        statement.push_str(&format!("20/{:02}/2026;Reintegro efectivo cajero;-50,00\n", month + 1));
    }
    let parsed = parse(&w, json!({"content": statement})).await.unwrap();
    let candidates = parsed["candidates"].as_array().unwrap();
    assert_eq!(candidates.len(), 1, "cash is never a subscription: {parsed}");
    let bill = &candidates[0];
    assert_eq!(bill["amount_varies"], true);
    assert_eq!(bill["amount"]["amount"], "44.75", "the median of the last three charges");
    assert_eq!(bill["price_changes"], json!([]));
    assert_eq!(bill["proposed"], true);
    let item = json!({
        "name": bill["name"], "amount": bill["amount"]["amount"], "cycle": bill["cycle"],
        "charges": bill["charges"].as_array().unwrap().iter()
            .map(|c| json!({"date": c["date"], "amount": c["amount"]["amount"]})).collect::<Vec<_>>(),
    });
    let imported =
        w.env.call(&w.ana, "import_subscriptions", json!({"items": [item]})).await.unwrap();
    let id = imported["created"][0]["id"].as_i64().unwrap();
    let subscription = w.env.call(&w.ana, "get_subscription", json!({"id": id})).await.unwrap();
    assert_eq!(subscription["price"]["amount"], "44.75", "{subscription}");
    assert_eq!(subscription["price_history"].as_array().unwrap().len(), 1, "{subscription}");
    assert!(subscription["notes"].as_str().unwrap().contains("estimate"), "{subscription}");
}

#[tokio::test]
async fn at_most_four_large_requests_are_read_at_once_on_rest_and_mcp_together() {
    use futures_util::StreamExt;
    let w = World::new().await;
    let server = w.env.serve().await;
    let (token, _) = w.env.token(&w.ana, "read").await;
    let client = reqwest::Client::new();
    // Four messages to /mcp that send more than the server's 1 MB limit, then nothing more.
    let stalled = || {
        let chunk = Ok::<_, std::io::Error>(vec![b' '; 1_100_000]);
        let body = futures_util::stream::iter([chunk]).chain(futures_util::stream::pending());
        let request = client
            .post(server.url("/mcp"))
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(reqwest::Body::wrap_stream(body))
            .send();
        tokio::spawn(request)
    };
    let held: Vec<_> = (0..http::MAX_LARGE_REQUESTS).map(|_| stalled()).collect();
    // A statement sent without a declared length may be large: it waits for a place, and
    // is told to come back while the four are being read.
    let chunked_statement = || {
        let chunk = Ok::<_, std::io::Error>(br#"{"content": "2026-01-01,A,-1.00\n"}"#.to_vec());
        client
            .post(server.url("/api/v1/ops/parse_statement"))
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .body(reqwest::Body::wrap_stream(futures_util::stream::iter([chunk])))
            .send()
    };
    // The server runs in this process: wait, without a timer, until it reads the four.
    while http::large_requests_in_use() < http::MAX_LARGE_REQUESTS {
        tokio::task::yield_now().await;
    }
    let refused = chunked_statement().await.unwrap();
    assert_eq!(refused.status(), 503, "the fifth large request waits while four are read");
    assert_eq!(refused.headers()["retry-after"], "5");
    let problem: Value = refused.json().await.unwrap();
    assert_eq!(problem["code"], "rate_limited", "{problem}");
    // Once the four are gone, statements are read again.
    for request in held {
        request.abort();
        let _ = request.await;
    }
    while http::large_requests_in_use() > 0 {
        tokio::task::yield_now().await;
    }
    assert_eq!(chunked_statement().await.unwrap().status(), 200);
}
