//! The REST API over real HTTP on 127.0.0.1:0 with a real client.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::fixtures::World;

async fn post(
    client: &reqwest::Client,
    url: String,
    token: &str,
    body: &str,
) -> (StatusCode, Value) {
    let response = client
        .post(url)
        .bearer_auth(token)
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn an_agent_creates_previews_confirms_deletes_and_undoes_over_rest() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let client = reqwest::Client::new();
    let (token, _) = w.env.token(&w.ana, "write").await;
    let op = |name: &str| server.url(&format!("/api/v1/ops/{name}"));

    let body = json!({"name": "Hulu", "amount": "7.99", "currency": "USD", "cycle": "monthly", "next_charge_on": "2026-12-03"});
    let (status, problem) =
        post(&client, op("create_subscription"), &token, &body.to_string()).await;
    assert_eq!(status, StatusCode::PRECONDITION_REQUIRED);
    assert_eq!(problem["code"], "confirmation_required");
    assert_eq!(problem["preview"]["name"], "Hulu");
    let confirmation = problem["confirmation_id"].as_str().unwrap();
    let (status, created) = post(
        &client,
        op("confirm_change"),
        &token,
        &json!({"confirmation_id": confirmation}).to_string(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{created}");
    let id = created["id"].as_i64().unwrap();

    let (status, preview) = post(
        &client,
        op("delete_subscription"),
        &token,
        &json!({"id": id, "dry_run": true}).to_string(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(preview["dry_run"], true);
    let (_, problem) =
        post(&client, op("delete_subscription"), &token, &json!({"id": id}).to_string()).await;
    let confirmation = problem["confirmation_id"].as_str().unwrap();
    let (status, deleted) = post(
        &client,
        op("confirm_change"),
        &token,
        &json!({"confirmation_id": confirmation}).to_string(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) =
        post(&client, op("get_subscription"), &token, &json!({"id": id}).to_string()).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Undo can bring charges back, so a write token confirms it too.
    let (status, problem) =
        post(&client, op("undo"), &token, &json!({"batch_id": deleted["batch_id"]}).to_string())
            .await;
    assert_eq!(status, StatusCode::PRECONDITION_REQUIRED);
    let confirmation = problem["confirmation_id"].as_str().unwrap();
    let (status, undone) = post(
        &client,
        op("confirm_change"),
        &token,
        &json!({"confirmation_id": confirmation}).to_string(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{undone}");
    let got = client
        .get(server.url(&format!("/api/v1/ops/get_subscription?id={id}")))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(got.status(), StatusCode::OK);
    assert_eq!(got.json::<Value>().await.unwrap()["name"], "Hulu");
    // A name in a query parameter, and a phrase for a date, are read like ids and dates, and
    // the (serialised) list says how.
    let by_name = client
        .get(server.url("/api/v1/ops/list_charges?subscription_id=hulu&from=last%20month"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(by_name.status(), StatusCode::OK);
    let by_name: Value = by_name.json().await.unwrap();
    assert_eq!(by_name["resolved"][1]["id"], id, "{by_name}");
    assert_eq!(by_name["resolved"][0]["date"], "2026-10-29", "{by_name}");
    assert!(by_name["items"].is_array(), "{by_name}");
}

#[tokio::test]
async fn http_errors_are_problem_json_with_stable_codes() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let client = reqwest::Client::new();
    let (token, _) = w.env.token(&w.ana, "read").await;
    let url = server.url("/api/v1/ops/list_subscriptions");

    let anonymous = client.post(&url).body("{}").send().await.unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    assert!(anonymous.headers()["www-authenticate"].to_str().unwrap().starts_with("Bearer"));
    assert_eq!(anonymous.headers()["content-type"], "application/problem+json");

    let (status, problem) = post(&client, url.clone(), "exh_not_a_token", "{}").await;
    assert_eq!(
        (status, problem["code"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("unauthenticated"))
    );

    // Cut-off JSON, and whitespace, which is not the empty body that means {}.
    for body in ["{\"limit\": ", "\n", "  "] {
        let (status, problem) = post(&client, url.clone(), &token, body).await;
        assert_eq!(
            (status, problem["code"].as_str()),
            (StatusCode::BAD_REQUEST, Some("invalid_input")),
            "{body:?}"
        );
    }

    let (status, problem) = post(&client, url.clone(), &token, "{\"colour\": \"red\"}").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(problem["detail"].as_str().unwrap().contains("unknown field"));

    let (status, problem) =
        post(&client, server.url("/api/v1/ops/create_category"), &token, "{\"name\": \"Pets\"}")
            .await;
    assert_eq!((status, problem["code"].as_str()), (StatusCode::FORBIDDEN, Some("forbidden")));

    let (status, problem) = post(
        &client,
        server.url("/api/v1/ops/get_subscription"),
        &token,
        &json!({"id": w.bobs_gym}).to_string(),
    )
    .await;
    assert_eq!((status, problem["code"].as_str()), (StatusCode::NOT_FOUND, Some("not_found")));

    let (status, problem) = post(&client, server.url("/api/v1/ops/no_such_op"), &token, "{}").await;
    assert_eq!((status, problem["code"].as_str()), (StatusCode::NOT_FOUND, Some("not_found")));

    let big = format!("{{\"text\": \"{}\"}}", "x".repeat(2 * 1024 * 1024));
    let response = client.post(&url).bearer_auth(&token).body(big).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);

    let get = client
        .get(server.url("/api/v1/ops/list_subscriptions?status=active&status=trial&limit=1"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(get.status(), StatusCode::OK);
    assert_eq!(get.json::<Value>().await.unwrap()["items"].as_array().unwrap().len(), 1);
    let write_by_get = client
        .get(server.url("/api/v1/ops/delete_subscription?id=1"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(write_by_get.status(), StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn openapi_and_health_describe_every_op() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let client = reqwest::Client::new();
    let health = client.get(server.url("/healthz")).send().await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    // The version, as `exhale --version` says it, from outside: the health check and every
    // page's footer.
    let health: Value = health.json().await.unwrap();
    assert_eq!(health, json!({"status": "ok", "version": env!("CARGO_PKG_VERSION")}));
    let page = client.get(server.url("/sign-in")).send().await.unwrap().text().await.unwrap();
    let footer = format!(
        "<footer class=\"site-footer muted\">Exhale {}</footer>",
        env!("CARGO_PKG_VERSION")
    );
    assert!(page.contains(&footer), "{page}");
    // What an agent reads before connecting, without a token, from the catalog.
    let guide = client.get(server.url("/llms.txt")).send().await.unwrap();
    assert_eq!(guide.status(), StatusCode::OK);
    assert_eq!(guide.headers()["content-type"], "text/plain; charset=utf-8");
    let guide = guide.text().await.unwrap();
    assert!(guide.starts_with("# Exhale\n\n> "), "{guide}");
    assert_eq!(guide, ops::docs::agent_guide());
    for needed in
        ["`/mcp`", "`confirm_change`", "- `get_context` (read)", "- `undo` (destructive write)"]
    {
        assert!(guide.contains(needed), "{needed}: {guide}");
    }
    assert!(!guide.contains("`set_enable_banking` ("), "an op agents may not call is not a tool");
    let document: Value =
        client.get(server.url("/api/v1/openapi.json")).send().await.unwrap().json().await.unwrap();
    assert_eq!(document["openapi"], "3.1.0");
    for meta in ops::all() {
        let path = &document["paths"][format!("/api/v1/ops/{}", meta.name())];
        assert_eq!(path["post"]["operationId"], meta.name());
        assert_eq!(path["get"].is_object(), meta.info.hints.read_only, "{}", meta.name());
    }
}

#[tokio::test]
async fn openapi_document_passes_a_third_party_validator() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let document =
        reqwest::get(server.url("/api/v1/openapi.json")).await.unwrap().text().await.unwrap();
    let path = w.env.dir.path().join("openapi.json");
    std::fs::write(&path, document).unwrap();
    let output = std::process::Command::new("python3")
        .args(["-m", "openapi_spec_validator"])
        .arg(&path)
        .output()
        .expect("python3 runs (scripts/test installs the packages the tests need)");
    assert!(
        output.status.success(),
        "openapi-spec-validator refused the document (scripts/test installs it):\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
