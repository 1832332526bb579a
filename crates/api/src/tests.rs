//! Tests of the REST routes, driven in-process against a fake catalog that accepts one token
//! and echoes each call (or fails it with a chosen `OpError`).

use std::sync::Arc;

use axum::{
    Router,
    body::{Body, to_bytes},
    http::{HeaderMap, Method, Request, StatusCode, header},
};
use http::AppState;
use ops::{Actor, BoxFuture, Caller, Catalog, Mode, OpError, OpMeta, Scope, UnboundFeed, Via};
use ops::{Role, Text};
use serde_json::{Value, json};
use tokio::sync::broadcast;
use tower::ServiceExt;

const TOKEN: &str = "exh_good";

struct FakeCatalog {
    ops: Vec<OpMeta>,
    fail_with: Option<OpError>,
}

impl Catalog for FakeCatalog {
    fn ops(&self) -> &[OpMeta] {
        &self.ops
    }

    fn call_json_text<'a>(
        &'a self,
        caller: &'a Caller,
        op: &'a str,
        input: Value,
        mode: Mode,
    ) -> BoxFuture<'a, Result<String, OpError>> {
        Box::pin(async move { Ok(self.call_json(caller, op, input, mode).await?.to_string()) })
    }

    fn call_json<'a>(
        &'a self,
        caller: &'a Caller,
        op: &'a str,
        input: Value,
        mode: Mode,
    ) -> BoxFuture<'a, Result<Value, OpError>> {
        Box::pin(async move {
            if let Some(err) = &self.fail_with {
                return Err(err.clone());
            }
            Ok(json!({
                "op": op,
                "input": input,
                "mode": if mode == Mode::DryRun { "dry_run" } else { "apply" },
                "via": caller.via.as_str(),
                "member_id": caller.member_id,
            }))
        })
    }

    fn authenticate_token<'a>(
        &'a self,
        token: &'a str,
        via: Via,
    ) -> BoxFuture<'a, Result<Caller, OpError>> {
        Box::pin(async move {
            if token != TOKEN {
                return Err(OpError::Unauthenticated {
                    message: Text::new("This token is unknown, expired or revoked."),
                });
            }
            Ok(Caller {
                household_id: 1,
                member_id: 7,
                role: Role::Member,
                scope: Scope::Write,
                actor: Actor::Token {
                    token_id: 3,
                    token_name: "laptop".into(),
                    client_name: None,
                    tools: ops::ToolSet::Full,
                    credential: ops::Credential::ApiToken,
                },
                via,
                language: ops::Language::English,
            })
        })
    }

    fn person_reads<'a>(
        &'a self,
        _caller: &'a Caller,
    ) -> BoxFuture<'a, Result<Option<ops::Language>, OpError>> {
        // REST never asks: what it returns is for agents, in English.
        Box::pin(async { Ok(None) })
    }

    fn subscribe_unbound(&self) -> UnboundFeed {
        UnboundFeed::new(broadcast::channel(1).1)
    }
}

fn fake_ops() -> Vec<OpMeta> {
    ["list_subscriptions", "get_subscription", "delete_subscription", "create_token"]
        .into_iter()
        .map(|name| *ops::find(name).unwrap())
        .collect()
}

fn app_failing_with(fail_with: Option<OpError>) -> Router {
    let catalog = FakeCatalog { ops: fake_ops(), fail_with };
    crate::router(1024 * 1024).with_state(AppState::new(Arc::new(catalog)))
}

fn app() -> Router {
    app_failing_with(None)
}

struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Value,
}

impl Answer {
    fn header(&self, name: header::HeaderName) -> &str {
        self.headers.get(&name).map_or("", |value| value.to_str().unwrap())
    }

    fn is_problem(&self, status: StatusCode, code: &str) -> bool {
        self.status == status
            && self.header(header::CONTENT_TYPE) == "application/problem+json"
            && self.body["code"] == code
            && self.body["status"] == status.as_u16()
    }
}

async fn send(app: Router, request: Request<Body>) -> Answer {
    let response = app.oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = to_bytes(response.into_body(), usize::MAX).await.unwrap();
    let body = if bytes.is_empty() { Value::Null } else { serde_json::from_slice(&bytes).unwrap() };
    Answer { status, headers, body }
}

fn request(method: Method, uri: &str, body: &str) -> Request<Body> {
    Request::builder()
        .method(method)
        .uri(uri)
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_owned()))
        .unwrap()
}

async fn post(uri: &str, body: &str) -> Answer {
    send(app(), request(Method::POST, uri, body)).await
}

async fn get(uri: &str) -> Answer {
    send(app(), request(Method::GET, uri, "")).await
}

#[tokio::test]
async fn health_needs_no_token() {
    let request = Request::get("/healthz").body(Body::empty()).unwrap();
    let answer = send(app(), request).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.body, json!({"status": "ok", "version": ops::VERSION}));
}

#[tokio::test]
async fn no_token_is_401_with_a_challenge() {
    let request = Request::post("/api/v1/ops/list_subscriptions").body(Body::empty()).unwrap();
    let answer = send(app(), request).await;
    assert!(answer.is_problem(StatusCode::UNAUTHORIZED, "unauthenticated"), "{:?}", answer.body);
    assert_eq!(answer.header(header::WWW_AUTHENTICATE), "Bearer realm=\"exhale\"");
    assert!(answer.body["detail"].as_str().unwrap().contains("Authorization: Bearer"));
}

#[tokio::test]
async fn a_malformed_header_is_401() {
    let request = Request::get("/api/v1/ops/list_subscriptions")
        .header(header::AUTHORIZATION, format!("Basic {TOKEN}"))
        .body(Body::empty())
        .unwrap();
    let answer = send(app(), request).await;
    assert!(answer.is_problem(StatusCode::UNAUTHORIZED, "unauthenticated"));
    assert_eq!(answer.header(header::WWW_AUTHENTICATE), "Bearer realm=\"exhale\"");
}

#[tokio::test]
async fn a_refused_token_is_401_invalid_token() {
    let request = Request::post("/api/v1/ops/list_subscriptions")
        .header(header::AUTHORIZATION, "Bearer exh_wrong")
        .body(Body::empty())
        .unwrap();
    let answer = send(app(), request).await;
    assert!(answer.is_problem(StatusCode::UNAUTHORIZED, "unauthenticated"));
    assert_eq!(
        answer.header(header::WWW_AUTHENTICATE),
        "Bearer realm=\"exhale\", error=\"invalid_token\""
    );
    assert_eq!(answer.body["detail"], "This token is unknown, expired or revoked.");
}

#[tokio::test]
async fn post_calls_the_op_with_the_body_as_rest() {
    let answer = post("/api/v1/ops/get_subscription", r#"{"id": 42}"#).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.header(header::CONTENT_TYPE), "application/json");
    assert_eq!(answer.header(header::CACHE_CONTROL), "no-store");
    assert_eq!(
        answer.body,
        json!({
            "op": "get_subscription",
            "input": {"id": 42},
            "mode": "apply",
            "via": "rest",
            "member_id": 7,
        })
    );
}

#[tokio::test]
async fn an_empty_body_is_an_empty_input() {
    let answer = post("/api/v1/ops/list_subscriptions", "").await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.body["input"], json!({}));
    // Whitespace is not empty, and not JSON: the schema says a body is an object.
    let answer = post("/api/v1/ops/list_subscriptions", "  \n").await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.body["code"], "invalid_input");
}

#[tokio::test]
async fn dry_run_becomes_the_mode_of_a_write() {
    let answer = post("/api/v1/ops/delete_subscription", r#"{"id": 4, "dry_run": true}"#).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.body["mode"], "dry_run");
    assert_eq!(answer.body["input"], json!({"id": 4}));

    let answer = post("/api/v1/ops/delete_subscription", r#"{"id": 4, "dry_run": false}"#).await;
    assert_eq!(answer.body["mode"], "apply");
    assert_eq!(answer.body["input"], json!({"id": 4}));
}

#[tokio::test]
async fn dry_run_is_ignored_by_reads() {
    let answer = post("/api/v1/ops/list_subscriptions", r#"{"dry_run": true}"#).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.body["mode"], "apply");
    assert_eq!(answer.body["input"], json!({}));
}

#[tokio::test]
async fn dry_run_must_be_a_boolean() {
    let answer = post("/api/v1/ops/delete_subscription", r#"{"id": 4, "dry_run": "yes"}"#).await;
    assert!(answer.is_problem(StatusCode::BAD_REQUEST, "invalid_input"));
    assert_eq!(answer.body["pointer"], "/dry_run");
}

#[tokio::test]
async fn malformed_json_is_our_problem_json() {
    let answer = post("/api/v1/ops/get_subscription", r#"{"id": 42"#).await;
    assert!(answer.is_problem(StatusCode::BAD_REQUEST, "invalid_input"), "{:?}", answer.body);
    assert_eq!(answer.body["pointer"], "");
    let detail = answer.body["detail"].as_str().unwrap();
    assert!(detail.starts_with("The request body is not valid JSON: "), "{detail}");
    assert!(detail.contains("JSON object"), "{detail}");
}

#[tokio::test]
async fn a_body_that_is_not_an_object_is_refused() {
    for (body, kind) in [("[1, 2]", "an array"), ("\"id\"", "a string"), ("42", "a number")] {
        let answer = post("/api/v1/ops/get_subscription", body).await;
        assert!(answer.is_problem(StatusCode::BAD_REQUEST, "invalid_input"));
        assert_eq!(answer.body["pointer"], "");
        assert!(answer.body["detail"].as_str().unwrap().ends_with(&format!("not {kind}.")));
    }
}

#[tokio::test]
async fn get_coerces_the_query_by_the_input_schema() {
    let answer =
        get("/api/v1/ops/list_subscriptions?status=active&status=trial,paused&category_id=4\
         &uncategorised=true&limit=20&text=a%20b,c&dry_run=true")
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    assert_eq!(answer.header(header::CACHE_CONTROL), "no-store");
    assert_eq!(answer.body["mode"], "apply");
    assert_eq!(
        answer.body["input"],
        json!({
            "status": ["active", "trial", "paused"],
            "category_id": 4,
            "uncategorised": true,
            "limit": 20,
            "text": "a b,c",
        })
    );
}

#[tokio::test]
async fn get_without_a_query_is_an_empty_input() {
    let answer = get("/api/v1/ops/list_subscriptions").await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.body["input"], json!({}));
}

#[tokio::test]
async fn get_passes_unknown_keys_as_strings_for_the_op_to_refuse() {
    let answer = get("/api/v1/ops/get_subscription?id=5&colour=red&x=1&x=2").await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.body["input"], json!({"id": 5, "colour": "red", "x": ["1", "2"]}));
    // An id that may be a name stays a string unless it is a number.
    let named = get("/api/v1/ops/list_subscriptions?category_id=Streaming&owner_id=3").await;
    assert_eq!(named.body["input"], json!({"category_id": "Streaming", "owner_id": 3}));
}

#[tokio::test]
async fn get_refuses_values_that_do_not_coerce_with_a_pointer() {
    let cases = [
        ("limit=four", "/limit", "limit must be a whole number, not \"four\"."),
        (
            "uncategorised=yes",
            "/uncategorised",
            "uncategorised must be true or false, not \"yes\".",
        ),
        ("limit=1&limit=2", "/limit", "limit was given 2 times; give it once."),
    ];
    for (query, pointer, detail) in cases {
        let answer = get(&format!("/api/v1/ops/list_subscriptions?{query}")).await;
        assert!(answer.is_problem(StatusCode::BAD_REQUEST, "invalid_input"), "{query}");
        assert_eq!(answer.body["pointer"], pointer);
        assert_eq!(answer.body["detail"], detail);
    }
}

#[tokio::test]
async fn get_on_a_write_is_405_and_says_to_post() {
    let answer = get("/api/v1/ops/delete_subscription?id=4").await;
    assert!(answer.is_problem(StatusCode::METHOD_NOT_ALLOWED, "invalid_input"));
    assert_eq!(answer.header(header::ALLOW), "POST");
    assert_eq!(answer.body["detail"], "delete_subscription changes data: call it with POST.");
}

#[tokio::test]
async fn other_methods_are_405_problems() {
    let answer = send(app(), request(Method::PUT, "/api/v1/ops/delete_subscription", "")).await;
    assert!(answer.is_problem(StatusCode::METHOD_NOT_ALLOWED, "invalid_input"));
    assert_eq!(answer.header(header::ALLOW), "POST");

    let answer = send(app(), request(Method::DELETE, "/api/v1/ops/list_subscriptions", "")).await;
    assert!(answer.is_problem(StatusCode::METHOD_NOT_ALLOWED, "invalid_input"));
    assert_eq!(answer.header(header::ALLOW), "GET, HEAD, POST");
}

#[tokio::test]
async fn an_unknown_op_is_404_pointing_at_the_list() {
    for method in [Method::POST, Method::GET] {
        let answer = send(app(), request(method, "/api/v1/ops/list_everything", "")).await;
        assert!(answer.is_problem(StatusCode::NOT_FOUND, "not_found"));
        assert_eq!(
            answer.body["detail"],
            "No op named list_everything. GET /api/v1/openapi.json lists them."
        );
    }
}

#[tokio::test]
async fn an_unknown_path_under_the_prefix_is_a_404_problem() {
    for uri in ["/api/v1/subscriptions", "/api/v1/ops/a/b", "/api/v1"] {
        let answer = send(app(), request(Method::GET, uri, "")).await;
        assert!(answer.is_problem(StatusCode::NOT_FOUND, "not_found"), "{uri}");
        assert!(answer.body["detail"].as_str().unwrap().contains(uri));
    }
}

#[tokio::test]
async fn excluded_ops_are_left_to_the_catalog_to_refuse() {
    let answer = post("/api/v1/ops/create_token", r#"{"name": "x", "scope": "read"}"#).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.body["op"], "create_token");
}

#[tokio::test]
async fn every_op_error_maps_to_its_status_and_fields() {
    let text = || Text::new("Look at {thing}.").with("thing", "this");
    let confirmation = OpError::ConfirmationRequired {
        confirmation_id: "conf_1".into(),
        expires_at: "2026-03-01T10:10:00Z".into(),
        preview: Box::new(json!({"dry_run": true, "changes": []})),
        message: text(),
    };
    let cases = [
        (OpError::invalid("/id", text()), StatusCode::BAD_REQUEST),
        (OpError::not_found(text()), StatusCode::NOT_FOUND),
        (OpError::conflict(text()), StatusCode::CONFLICT),
        (
            OpError::Forbidden { message: text(), needed: Some(Scope::Trusted) },
            StatusCode::FORBIDDEN,
        ),
        (confirmation, StatusCode::PRECONDITION_REQUIRED),
        (OpError::Unauthenticated { message: text() }, StatusCode::UNAUTHORIZED),
        (
            OpError::RateLimited { retry_after_secs: 30, message: text() },
            StatusCode::TOO_MANY_REQUESTS,
        ),
        (OpError::Internal, StatusCode::INTERNAL_SERVER_ERROR),
    ];
    for (err, status) in cases {
        let code = err.code();
        let app = app_failing_with(Some(err));
        let answer = send(app, request(Method::POST, "/api/v1/ops/delete_subscription", "")).await;
        assert!(answer.is_problem(status, code), "{code}: {:?}", answer.body);
        assert_eq!(answer.body["type"], "about:blank");
        assert!(!answer.body["title"].as_str().unwrap().is_empty());
        let detail = answer.body["detail"].as_str().unwrap();
        match code {
            "internal" => assert!(detail.contains("logged"), "{detail}"),
            _ => assert_eq!(detail, "Look at this."),
        }
        match code {
            "invalid_input" => assert_eq!(answer.body["pointer"], "/id"),
            "forbidden" => assert_eq!(answer.body["needed_scope"], "trusted"),
            "confirmation_required" => {
                assert_eq!(answer.body["confirmation_id"], "conf_1");
                assert_eq!(answer.body["expires_at"], "2026-03-01T10:10:00Z");
                assert_eq!(answer.body["preview"], json!({"dry_run": true, "changes": []}));
            }
            "unauthenticated" => {
                assert_eq!(answer.header(header::WWW_AUTHENTICATE), "Bearer realm=\"exhale\"");
            }
            "rate_limited" => {
                assert_eq!(answer.header(header::RETRY_AFTER), "30");
                assert_eq!(answer.body["retry_after"], 30);
            }
            _ => {}
        }
    }
}

#[tokio::test]
async fn openapi_json_is_served_without_a_token_for_the_catalogs_ops() {
    let request = Request::get("/api/v1/openapi.json").body(Body::empty()).unwrap();
    let answer = send(app(), request).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.body["openapi"], "3.1.0");
    let paths = answer.body["paths"].as_object().unwrap();
    let names: Vec<&str> = fake_ops().iter().map(OpMeta::name).collect();
    assert_eq!(paths.len(), names.len());
    for name in names {
        assert_eq!(paths[&format!("/api/v1/ops/{name}")]["post"]["operationId"], name);
    }
}
