//! MCP through rmcp's own client: over stdio against the real `exhale mcp` process, and over
//! Streamable HTTP against `/mcp` on 127.0.0.1:0 with a bearer token.

use rmcp::{
    RoleClient, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    },
    service::RunningService,
    transport::{
        ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess,
        streamable_http_client::StreamableHttpClientTransportConfig,
    },
};
use serde_json::{Value, json};

use crate::fixtures::{World, id};

pub(crate) type Client = RunningService<RoleClient, ClientConfig>;

fn client_info(name: &str) -> ClientConfig {
    ClientConfig::new(ClientCapabilities::default(), Implementation::new(name, "1.0"))
}

/// Streamable HTTP to `url` with `token` as the bearer, for any client handler.
pub(crate) fn http_transport(
    url: String,
    token: &str,
) -> StreamableHttpClientTransport<reqwest::Client> {
    StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url).auth_header(token),
    )
}

/// A 2025-11-25 client: `initialize`, then a session.
pub(crate) async fn http_client(url: String, token: &str, name: &str) -> Client {
    client_info(name).serve(http_transport(url, token)).await.unwrap()
}

/// A client of the real `exhale mcp` process over stdio, on the data in `dir`, with `token`
/// and `extra` arguments after `mcp`.
pub(crate) async fn stdio_client(
    dir: &test_support::DataDir,
    token: &str,
    extra: &[&str],
    config: ClientConfig,
) -> Client {
    let transport = TokioChildProcess::new(
        tokio::process::Command::new(env!("CARGO_BIN_EXE_exhale")).configure(|cmd| {
            cmd.arg("--data-dir")
                .arg(dir.path())
                .arg("mcp")
                .args(extra)
                .env("EXHALE_TOKEN", token)
                .envs(dir.env())
                .env_remove("RUST_LOG");
        }),
    )
    .unwrap();
    config.serve(transport).await.unwrap()
}

/// A 2025-11-25 client of a server that acts for one caller without a token
/// (`TestEnv::serve_mcp_as`).
pub(crate) async fn client_without_token(url: String, name: &str) -> Client {
    client_info(name).serve(StreamableHttpClientTransport::from_uri(url)).await.unwrap()
}

/// A 2026-07-28 client: `server/discover`, then stateless requests.
pub(crate) async fn modern_http_client(url: String, token: &str, name: &str) -> Client {
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
    let transport = http_transport(url, token);
    let mode = ClientLifecycleMode::Discover {
        preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
    };
    client_info(name).serve_with_lifecycle(transport, mode).await.unwrap()
}

pub(crate) async fn call(
    client: &rmcp::Peer<RoleClient>,
    tool: &str,
    arguments: Value,
) -> CallToolResult {
    let Value::Object(arguments) = arguments else { panic!("arguments must be an object") };
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
        .unwrap()
}

pub(crate) fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

pub(crate) fn confirmation_id(result: &CallToolResult) -> String {
    assert_eq!(result.is_error, Some(true), "{}", text(result));
    let text = text(result);
    let start = text.find("cf_").unwrap_or_else(|| panic!("no confirmation id in {text}"));
    text[start..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect()
}

#[tokio::test]
async fn tools_mirror_the_catalog_with_schemas_and_annotations() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let (write, _) = w.env.token(&w.ana, "write").await;
    let (read, _) = w.env.token(&w.ana, "read").await;
    // Every tool: the full set.
    let client = http_client(server.url("/mcp?tools=full"), &write, "Schema check").await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for meta in ops::all() {
        let excluded = matches!(meta.info.exposure, ops::Exposure::Excluded { .. });
        // Ana is an owner: she gets every op agents may call, owner-only ones included.
        assert_eq!(names.contains(&meta.name()), !excluded, "{}", meta.name());
    }
    for tool in &tools {
        let meta = ops::find(&tool.name).unwrap();
        let annotations = tool.annotations.as_ref().unwrap();
        assert_eq!(annotations.read_only_hint, Some(meta.info.hints.read_only), "{}", tool.name);
        assert_eq!(
            annotations.destructive_hint,
            Some(meta.info.hints.destructive),
            "{}",
            tool.name
        );
        assert_eq!(annotations.idempotent_hint, Some(meta.info.hints.idempotent), "{}", tool.name);
        assert_eq!(annotations.open_world_hint, Some(meta.info.hints.open_world), "{}", tool.name);
        assert_eq!(tool.input_schema.get("type"), Some(&json!("object")), "{}", tool.name);
        assert_eq!(
            tool.output_schema.as_ref().unwrap().get("type"),
            Some(&json!("object")),
            "{}",
            tool.name
        );
        let has_dry_run =
            tool.input_schema.get("properties").and_then(|p| p.get("dry_run")).is_some();
        assert_eq!(has_dry_run, meta.info.is_write(), "{}", tool.name);
    }
    client.cancel().await.unwrap();

    let reader = http_client(server.url("/mcp"), &read, "Reader").await;
    let tools = reader.list_all_tools().await.unwrap();
    assert!(
        tools.iter().all(|t| ops::find(&t.name).map_or(t.name == "call_tool", |op| op.info.hints.read_only)),
        "a read token sees read tools only (and call_tool, which reaches only reads for it)"
    );
    let refused = call(&reader, "create_category", json!({"name": "Pets"})).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(text(&refused).starts_with("forbidden"), "{}", text(&refused));
    reader.cancel().await.unwrap();
}

#[tokio::test]
async fn an_agent_reads_the_briefing_deletes_with_confirmation_and_undoes_over_http() {
    agent_session(false).await;
}

#[tokio::test]
async fn the_same_agent_session_works_in_the_2026_protocol() {
    agent_session(true).await;
}

async fn agent_session(modern: bool) {
    let w = World::new().await;
    let server = w.env.serve().await;
    let (token, _) = w.env.token(&w.ana, "write").await;
    let client = if modern {
        modern_http_client(server.url("/mcp"), &token, "Claude Desktop").await
    } else {
        http_client(server.url("/mcp"), &token, "Claude Desktop").await
    };
    // The instructions say how to begin and, in either protocol, what day it is in the
    // caller's household, so a model need not guess the year.
    let instructions = client.peer_info().unwrap().instructions.clone().unwrap();
    assert!(instructions.contains("get_context"), "{instructions}");
    assert!(
        instructions.contains(" Today is Sunday 2026-11-29 in this household. "),
        "{instructions}"
    );
    // Then which tool answers each everyday question: the default set lists the ledger's
    // reads and writes for a household that keeps accounts Ana sees.
    assert!(instructions.contains("what is in an account: list_accounts;"), "{instructions}");
    assert!(
        instructions.contains("the last change: list_activity with limit 1;"),
        "{instructions}"
    );
    assert!(
        instructions.ends_with("always putting a payee's payments under a category: create_rule."),
        "{instructions}"
    );

    let context = call(&client, "get_context", json!({})).await;
    assert_eq!(context.is_error, Some(false));
    assert!(
        context.structured_content.as_ref().unwrap()["markdown"]
            .as_str()
            .unwrap()
            .contains("Netflix")
    );

    let preview =
        call(&client, "delete_subscription", json!({"id": w.netflix, "dry_run": true})).await;
    assert_eq!(preview.structured_content.as_ref().unwrap()["dry_run"], true);
    // Its first words say nothing changed; the JSON follows, as for any result.
    let said = text(&preview);
    assert!(said.starts_with("Preview only: nothing was changed (dry_run)."), "{said}");
    assert!(
        said.contains(
            "Say to them: \"Nothing has changed yet: that was only a preview. Shall I go ahead?\""
        ),
        "{said}"
    );
    let json = &preview.content[1].as_text().unwrap().text;
    assert_eq!(
        &serde_json::from_str::<Value>(json).unwrap(),
        preview.structured_content.as_ref().unwrap()
    );
    let asked = call(&client, "delete_subscription", json!({"id": w.netflix})).await;
    // The words to say to the person come with it, so a small model repeats them.
    assert!(
        text(&asked).starts_with(
            "confirmation_required: Not done yet: waiting for the person to confirm. Say to them: \"Nothing has changed yet. This waits for your confirmation: Deleted Netflix. Shall I go ahead?\""
        ),
        "{}",
        text(&asked)
    );
    let deleted =
        call(&client, "confirm_change", json!({"confirmation_id": confirmation_id(&asked)})).await;
    assert_eq!(deleted.is_error, Some(false), "{}", text(&deleted));
    let batch = deleted.structured_content.as_ref().unwrap()["batch_id"].clone();

    let activity =
        w.env.call(&w.ana, "list_activity", json!({"op": "delete_subscription"})).await.unwrap();
    assert_eq!(
        activity["items"][0]["actor"]["label"],
        "Claude Desktop (token write token) for Home owner"
    );

    let undo = call(&client, "undo", json!({"batch_id": batch})).await;
    let undone =
        call(&client, "confirm_change", json!({"confirmation_id": confirmation_id(&undo)})).await;
    assert_eq!(undone.is_error, Some(false), "{}", text(&undone));
    let back = call(&client, "get_subscription", json!({"id": w.netflix})).await;
    assert_eq!(back.structured_content.as_ref().unwrap()["name"], "Netflix");

    let missing = call(&client, "get_subscription", json!({"id": w.bobs_gym})).await;
    assert!(
        text(&missing).starts_with("not_found"),
        "Bob's private gym does not exist for Ana's agent"
    );
    let bad = call(
        &client,
        "create_subscription",
        json!({"name": "X", "amount": "1", "cycle": "monthly", "next_charge_on": "2026-02-30"}),
    )
    .await;
    assert!(text(&bad).contains("/next_charge_on"), "{}", text(&bad));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn http_refuses_missing_tokens_and_foreign_origins() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let (token, _) = w.env.token(&w.ana, "read").await;
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    let client = reqwest::Client::new();
    let post = |token: Option<&str>, origin: Option<&str>| {
        let mut request = client
            .post(server.url("/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(initialize.to_string());
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        request.send()
    };
    let anonymous = post(None, None).await.unwrap();
    assert_eq!(anonymous.status(), 401);
    assert!(anonymous.headers()["www-authenticate"].to_str().unwrap().starts_with("Bearer"));
    assert_eq!(post(Some(&token), Some("https://evil.example")).await.unwrap().status(), 403);
    assert_eq!(post(Some(&token), Some("http://localhost:3000")).await.unwrap().status(), 200);
    assert_eq!(post(Some(&token), None).await.unwrap().status(), 200);
}

#[tokio::test]
async fn every_refusal_on_mcp_is_a_json_rpc_error_with_the_stable_code() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let (token, _) = w.env.token(&w.ana, "read").await;
    let client = reqwest::Client::new();
    let send = |token: Option<&str>, content_type: &str, body: reqwest::Body| {
        let mut request = client
            .post(server.url("/mcp"))
            .header("content-type", content_type)
            .header("accept", "application/json, text/event-stream")
            .body(body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        async move {
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            let content_type = response.headers()["content-type"].to_str().unwrap().to_owned();
            let body: Value = response.json().await.unwrap();
            assert_eq!(content_type, "application/json", "{body}");
            assert_eq!((body["jsonrpc"].as_str(), &body["id"]), (Some("2.0"), &Value::Null));
            (
                status,
                body["error"]["code"].as_i64().unwrap(),
                body["error"]["data"]["code"].clone(),
                body,
            )
        }
    };
    let json = "application/json";
    let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    let batch = json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]).to_string();
    let huge = format!(
        r#"{{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {{"pad": "{}"}}}}"#,
        "x".repeat(1024 * 1024)
    );
    let chunked = || {
        let pieces = vec![Ok::<_, std::io::Error>(huge.clone().into_bytes())];
        reqwest::Body::wrap_stream(futures_util::stream::iter(pieces))
    };
    for (case, (status, rpc_code, code, body)) in [
        ("not JSON", send(Some(&token), json, "hello".into()).await),
        ("nested too deep", send(Some(&token), json, deep.clone().into()).await),
        ("a batch", send(Some(&token), json, batch.into()).await),
        ("not an object", send(Some(&token), json, "42".into()).await),
        ("too large", send(Some(&token), json, huge.clone().into()).await),
        ("too large, chunked", send(Some(&token), json, chunked()).await),
        ("not JSON by its type", send(Some(&token), "text/plain", "{}".into()).await),
        ("no token", send(None, json, "{}".into()).await),
    ] {
        let expected = match case {
            "not JSON" | "nested too deep" => (400, -32700, "invalid_input"),
            "a batch" | "not an object" => (400, -32600, "invalid_input"),
            "too large" | "too large, chunked" => (413, -32600, "invalid_input"),
            "not JSON by its type" => (415, -32600, "invalid_input"),
            _ => (401, -32600, "unauthenticated"),
        };
        assert_eq!((status, rpc_code, code.as_str().unwrap()), expected, "{case}: {body}");
        assert!(body["error"]["message"].as_str().unwrap().len() > 10, "{case}: {body}");
    }
    // The same limit on the REST API is problem JSON, whether the length is declared or not.
    for body in [reqwest::Body::from(huge.clone()), chunked()] {
        let response = client
            .post(server.url("/api/v1/ops/list_subscriptions"))
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 413);
        assert_eq!(response.headers()["content-type"], "application/problem+json");
        let problem: Value = response.json().await.unwrap();
        assert_eq!(problem["code"], "invalid_input", "{problem}");
    }
}

#[tokio::test]
async fn stdio_serves_the_token_holder() {
    let dir = test_support::DataDir::new();
    let token = crate::cli::owner_with_token(&dir, "trusted");
    let client = stdio_client(&dir, &token, &[], client_info("Cursor")).await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "create_subscription"));
    assert!(!tools.iter().any(|t| t.name == "create_token"), "credentials are not for agents");
    let created = call(&client, "create_subscription", json!({"name": "Hulu", "amount": "7.99", "cycle": "monthly", "next_charge_on": "2026-12-03"})).await;
    assert_eq!(
        created.is_error,
        Some(false),
        "a trusted token creates without confirmation: {}",
        text(&created)
    );
    let deleted = call(
        &client,
        "delete_subscription",
        json!({"id": created.structured_content.as_ref().unwrap()["id"]}),
    )
    .await;
    assert!(text(&deleted).starts_with("confirmation_required"), "but still confirms a delete");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn resources_prompts_and_completions_serve_the_callers_data() {
    use rmcp::model::{GetPromptRequestParams, ReadResourceRequestParams};
    let w = World::new().await;
    let server = w.env.serve().await;
    let (token, _) = w.env.token(&w.ana, "read").await;
    let client = http_client(server.url("/mcp"), &token, "Resource reader").await;

    let resources = client.list_all_resources().await.unwrap();
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris[0], "exhale://context");
    assert!(uris.contains(&format!("exhale://subscriptions/{}", w.netflix).as_str()));
    assert!(
        !uris.contains(&format!("exhale://subscriptions/{}", w.bobs_gym).as_str()),
        "Bob's private gym is not Ana's"
    );
    let templates = client.list_all_resource_templates().await.unwrap();
    assert!(templates.iter().any(|t| t.uri_template == "exhale://subscriptions/{id}"));

    let read = |uri: String| client.read_resource(ReadResourceRequestParams::new(uri));
    let context = read("exhale://context".into()).await.unwrap();
    let rmcp::model::ResourceContents::TextResourceContents { text, mime_type, .. } =
        &context.contents[0]
    else {
        panic!("text")
    };
    assert_eq!(mime_type.as_deref(), Some("text/markdown"));
    let tool_context = w.env.call(&w.ana, "get_context", json!({})).await.unwrap();
    assert_eq!(
        text,
        tool_context["markdown"].as_str().unwrap(),
        "the resource and the tool give the same briefing"
    );
    let netflix = read(format!("exhale://subscriptions/{}", w.netflix)).await.unwrap();
    let rmcp::model::ResourceContents::TextResourceContents { text, .. } = &netflix.contents[0]
    else {
        panic!("text")
    };
    assert_eq!(serde_json::from_str::<Value>(text).unwrap()["name"], "Netflix");
    assert!(read(format!("exhale://charges/{}", w.charge)).await.is_ok());
    assert!(read(format!("exhale://categories/{}", w.streaming)).await.is_ok());
    // Someone else's private item, another household's and one that never existed look the
    // same: not found, naming the URI (SEP-2164).
    for uri in [
        format!("exhale://subscriptions/{}", w.bobs_gym),
        format!("exhale://subscriptions/{}", w.other_household_sub),
        "exhale://nonsense/1".to_owned(),
    ] {
        let Err(rmcp::service::ServiceError::McpError(error)) = read(uri.clone()).await else {
            panic!("{uri} is not found")
        };
        assert_eq!(error.code, rmcp::model::ErrorCode::RESOURCE_NOT_FOUND, "{uri}");
        assert_eq!(error.data, Some(json!({"uri": uri})));
    }

    let prompts = client.list_all_prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "monthly_review",
            "find_savings",
            "audit_price_increases",
            "import_statement",
            "clean_up_categories"
        ]
    );
    let review = client.get_prompt(GetPromptRequestParams::new("monthly_review")).await.unwrap();
    let rmcp::model::ContentBlock::Text(message) = &review.messages[0].content else {
        panic!("a text message")
    };
    assert!(
        message.text.contains("2026-11") && message.text.contains("get_context"),
        "{}",
        message.text
    );
    assert!(
        client.get_prompt(GetPromptRequestParams::new("import_statement")).await.is_err(),
        "the statement is required"
    );

    let months =
        client.complete_prompt_argument("monthly_review", "month", "2026-1", None).await.unwrap();
    assert_eq!(months.values, ["2026-11", "2026-10"]);
    let ids = client
        .complete_resource_argument("exhale://subscriptions/{id}", "id", "", None)
        .await
        .unwrap();
    assert!(
        ids.values.contains(&w.netflix.to_string())
            && !ids.values.contains(&w.bobs_gym.to_string())
    );
    client.cancel().await.unwrap();
}

/// A client that forwards `resources/updated` notifications to a channel (legacy sessions).
#[derive(Clone)]
struct Watcher {
    info: ClientConfig,
    updates: tokio::sync::mpsc::UnboundedSender<String>,
}

impl rmcp::ClientHandler for Watcher {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        let _ = self.updates.send(params.uri);
    }
}

#[tokio::test]
async fn a_change_made_through_rest_reaches_watching_clients_in_both_protocol_eras() {
    use rmcp::model::{
        ProtocolVersion, ServerNotification, SubscribeRequestParams, SubscriptionFilter,
    };
    let w = World::new().await;
    let server = w.env.serve().await;
    let (token, _) = w.env.token(&w.ana, "read").await;
    let (bobs_token, _) = w.env.token(&w.bob, "read").await;
    let netflix_uri = format!("exhale://subscriptions/{}", w.netflix);
    let gym_uri = format!("exhale://subscriptions/{}", w.bobs_gym);

    // 2026-07-28: subscriptions/listen.
    let modern = modern_http_client(server.url("/mcp"), &token, "Modern").await;
    let filter = SubscriptionFilter::builder()
        .resource_subscription(netflix_uri.clone())
        .resource_subscription(gym_uri.clone())
        .build();
    let mut listening = modern.listen(filter).await.unwrap();
    // 2025-11-25: resources/subscribe on a session.
    let (updates, mut received) = tokio::sync::mpsc::unbounded_channel();
    let watcher = Watcher {
        info: client_info("Legacy").with_protocol_version(ProtocolVersion::V_2025_11_25),
        updates,
    };
    let transport = http_transport(server.url("/mcp"), &token);
    let legacy = watcher.serve(transport).await.unwrap();
    #[expect(deprecated, reason = "resources/subscribe is how 2025-11-25 clients watch resources")]
    {
        legacy.subscribe(SubscribeRequestParams::new(netflix_uri.clone())).await.unwrap();
        // Bob's private gym cannot be watched, and the refusal is the one for no such thing.
        let refusal = |uri: String| {
            let legacy = &legacy;
            async move {
                let err = legacy.subscribe(SubscribeRequestParams::new(uri)).await.unwrap_err();
                err.to_string().replace(char::is_numeric, "")
            }
        };
        let private = refusal(gym_uri.clone()).await;
        assert_eq!(private, refusal(netflix_uri.replace(&w.netflix.to_string(), "987654")).await);
        assert!(private.contains("No resource"), "{private}");
    }

    // Bob's private change is not announced to Ana; then Ana changes Netflix through REST.
    w.env
        .call(&w.bob, "update_subscription", json!({"id": w.bobs_gym, "notes": "6am"}))
        .await
        .unwrap();
    let rest = reqwest::Client::new();
    let response = rest
        .post(server.url("/api/v1/ops/update_subscription"))
        .bearer_auth(w.env.token(&w.ana, "write").await.0)
        .json(&json!({"id": w.netflix, "name": "Netflix HD"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(received.recv().await.unwrap(), netflix_uri, "the legacy session heard about it");
    let notification = listening.next().await.unwrap().unwrap();
    let ServerNotification::ResourceUpdatedNotification(updated) = notification else {
        panic!("{notification:?}")
    };
    assert_eq!(
        updated.params.uri, netflix_uri,
        "the 2026 listen stream heard about Netflix first, and nothing about Bob's private gym"
    );
    assert!(received.try_recv().is_err(), "nothing about Bob's private gym");
    let _ = bobs_token;
    legacy.cancel().await.unwrap();
    modern.cancel().await.unwrap();
}

/// A client whose person answers confirmation forms with `yes` (or not).
#[derive(Clone)]
struct Person {
    info: ClientConfig,
    says_yes: bool,
    asked: tokio::sync::mpsc::UnboundedSender<String>,
}

impl rmcp::ClientHandler for Person {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
        let ElicitRequestParams::FormElicitationParams { message, .. } = request else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let _ = self.asked.send(message);
        Ok(ElicitResult::new(ElicitationAction::Accept)
            .with_content(json!({"confirm": self.says_yes})))
    }
}

async fn eliciting_client(
    url: String,
    token: &str,
    modern: bool,
    says_yes: bool,
) -> (RunningService<RoleClient, Person>, tokio::sync::mpsc::UnboundedReceiver<String>) {
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
    let mut capabilities = ClientCapabilities::default();
    capabilities.elicitation = Some(rmcp::model::ElicitationCapability::default());
    let version = if modern {
        rmcp::model::ProtocolVersion::V_2026_07_28
    } else {
        rmcp::model::ProtocolVersion::V_2025_11_25
    };
    let info = ClientConfig::new(capabilities, Implementation::new("Eliciting client", "1.0"))
        .with_protocol_version(version.clone());
    let (asked, questions) = tokio::sync::mpsc::unbounded_channel();
    let transport = http_transport(url, token);
    let person = Person { info, says_yes, asked };
    let client = if modern {
        person
            .serve_with_lifecycle(
                transport,
                ClientLifecycleMode::Discover { preferred_versions: vec![version] },
            )
            .await
            .unwrap()
    } else {
        person.serve(transport).await.unwrap()
    };
    (client, questions)
}

#[tokio::test]
async fn clients_that_can_ask_the_person_confirm_through_their_own_form_in_both_eras() {
    for modern in [false, true] {
        let w = World::new().await;
        let server = w.env.serve().await;
        let (token, _) = w.env.token(&w.ana, "write").await;

        let (client, mut questions) =
            eliciting_client(server.url("/mcp"), &token, modern, true).await;
        let Value::Object(arguments) = json!({"id": w.netflix}) else { unreachable!() };
        let deleted = client
            .call_tool(CallToolRequestParams::new("delete_subscription").with_arguments(arguments))
            .await
            .unwrap();
        assert_eq!(deleted.is_error, Some(false), "modern={modern}: {}", text(&deleted));
        let question = questions.recv().await.unwrap();
        assert!(
            question.contains("Deleted Netflix"),
            "Exhale wrote the question from the dry run: {question}"
        );
        assert_eq!(
            test_support::code(
                &w.env.call(&w.ana, "get_subscription", json!({"id": w.netflix})).await
            ),
            "not_found"
        );
        client.cancel().await.unwrap();

        let (client, _questions) =
            eliciting_client(server.url("/mcp"), &token, modern, false).await;
        let Value::Object(arguments) = json!({"id": w.spotify}) else { unreachable!() };
        let declined = client
            .call_tool(CallToolRequestParams::new("delete_subscription").with_arguments(arguments))
            .await
            .unwrap();
        assert_eq!(declined.is_error, Some(true));
        assert!(text(&declined).starts_with("declined"), "modern={modern}: {}", text(&declined));
        assert_eq!(
            test_support::code(
                &w.env.call(&w.ana, "get_subscription", json!({"id": w.spotify})).await
            ),
            "ok"
        );
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn an_agent_session_with_the_official_python_client() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let (write, _) = w.env.token(&w.ana, "write").await;
    let (read, _) = w.env.token(&w.ana, "read").await;
    let (trusted, _) = w.env.token(&w.ana, "trusted").await;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/mcp_clients/python_session.py");
    let output = tokio::process::Command::new("python3")
        .arg(script)
        .env("EXHALE_MCP_URL", server.url("/mcp"))
        .env("EXHALE_REST_URL", server.url(""))
        .env("EXHALE_WRITE_TOKEN", write)
        .env("EXHALE_READ_TOKEN", read)
        .env("EXHALE_TRUSTED_TOKEN", trusted)
        .output()
        .await
        .expect("python3 runs (scripts/test installs the mcp package)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.trim_end().ends_with("ok"),
        "the Python MCP client session failed (scripts/test installs it):\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Ending its 2025 sessions, the client is answered as it expects (it logs any other
    // status, such as rmcp's 202, as a failure).
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("Session termination failed"), "{stderr}");
}

#[tokio::test]
async fn results_too_large_for_a_model_are_cut_with_a_note() {
    let w = World::new().await;
    // List rows are lean, so only long names make 50 of them outgrow a tool result: 4-byte
    // characters, as many as a name may hold.
    let long = "💶".repeat(95);
    let category_name = "💶".repeat(60);
    let category =
        w.env.call(&w.ana, "create_category", json!({"name": category_name})).await.unwrap();
    for i in 0..80 {
        w.env
            .call(&w.ana, "create_subscription", json!({"name": format!("{i:02} {long}"), "amount": "1", "cycle": "monthly", "next_charge_on": "2026-12-01", "category_id": category["id"]}))
            .await
            .unwrap();
    }
    let server = w.env.serve().await;
    let (token, _) = w.env.token(&w.ana, "read").await;
    let client = http_client(server.url("/mcp"), &token, "Big lists").await;
    let listed = call(&client, "list_subscriptions", json!({"limit": 500})).await;
    let structured = listed.structured_content.as_ref().unwrap();
    assert!(structured.to_string().len() <= 30_000, "{} bytes", structured.to_string().len());
    let kept = structured["items"].as_array().unwrap().len();
    assert!(kept > 10 && kept < 50, "{kept} items kept");
    assert!(
        structured["truncated"].as_str().unwrap().contains(&format!("first {kept} of these 50"))
    );
    assert_eq!(structured["total"], 82);
    // The hot path of 2026 clients cuts the page the same way.
    let params = json!({"name": "list_subscriptions", "arguments": {"limit": 500}});
    let body = on_both_paths(&server.url("/mcp"), &token, "tools/call", params).await;
    let modern: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(&modern["result"]["structuredContent"], structured);

    // Following next_cursor from a cut page reaches every item exactly once.
    let mut seen: Vec<i64> = Vec::new();
    let mut arguments = json!({"limit": 500});
    loop {
        let page = call(&client, "list_subscriptions", arguments.clone()).await;
        let page = page.structured_content.unwrap();
        assert!(page["items"].as_array().unwrap().len() <= 50, "a page over MCP is capped");
        seen.extend(
            page["items"].as_array().unwrap().iter().map(|item| item["id"].as_i64().unwrap()),
        );
        match page["next_cursor"].as_str() {
            Some(cursor) => arguments["cursor"] = json!(cursor),
            None => break,
        }
    }
    let all = w.env.call(&w.ana, "list_subscriptions", json!({"limit": 500})).await.unwrap();
    let expected: Vec<i64> =
        all["items"].as_array().unwrap().iter().map(|item| item["id"].as_i64().unwrap()).collect();
    assert_eq!(seen, expected);

    // A transaction search hands out positions, and so does a page cut short: the position
    // after the last item kept, counted from the start. The newest 50 are short, so the first
    // page fits; the 30 older ones hold long notes and are cut. A transaction added before
    // the cut page's cursor moves nothing after it: no item is seen twice.
    let notes = "n".repeat(1500);
    for i in 0..80 {
        let on = if i < 30 { "2026-10-01" } else { "2026-11-01" };
        let mut input =
            json!({"account_id": w.joint, "on": on, "amount": "-1", "payee": format!("Shop {i}")});
        if i < 30 {
            input["notes"] = json!(notes);
        }
        w.env.call(&w.ana, "create_transaction", input).await.unwrap();
    }
    let all = w.env.call(&w.ana, "search_transactions", json!({"limit": 500})).await.unwrap();
    let expected: Vec<i64> = all["items"].as_array().unwrap().iter().map(id).collect();
    let before = |cursor: &str| cursor.rsplit('.').next().unwrap().parse::<u64>().unwrap();
    let (mut seen, mut cursors, mut added) = (Vec::new(), Vec::new(), 0);
    let mut arguments = json!({"limit": 50});
    loop {
        let page = call(&client, "search_transactions", arguments.clone()).await;
        let page = page.structured_content.unwrap();
        // Counted from the cursor's place, so the one added before it is not in the total.
        assert_eq!(page["total"], expected.len(), "{}", page["next_cursor"]);
        seen.extend(page["items"].as_array().unwrap().iter().map(id));
        match page["next_cursor"].as_str() {
            Some(cursor) => {
                cursors.push(cursor.to_owned());
                arguments["cursor"] = json!(cursor);
            }
            None => break,
        }
        if cursors.len() == 2 && added == 0 {
            let newest =
                json!({"account_id": w.joint, "on": "2026-11-20", "amount": "-1", "payee": "Late"});
            w.env.call(&w.ana, "create_transaction", newest).await.unwrap();
            added = 1;
        }
    }
    assert_eq!(seen, expected);
    assert!(cursors.len() >= 2 && cursors.iter().all(|c| !c.starts_with('o')), "{cursors:?}");
    assert!(cursors[0].ends_with(".50") && (51..100).contains(&before(&cursors[1])), "{cursors:?}");

    // The briefing of so large a household lists less, and says where the rest is.
    let context = call(&client, "get_context", json!({})).await;
    let briefing = context.structured_content.as_ref().unwrap();
    assert!(briefing.to_string().len() <= 30_000, "{} bytes", briefing.to_string().len());
    let listed = briefing["subscriptions"].as_array().unwrap().len() as u64;
    assert!(listed > 0 && briefing["subscriptions_omitted"].as_u64() == Some(82 - listed));
    assert!(briefing["markdown"].as_str().unwrap().contains("more: call list_subscriptions"));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_session_belongs_to_the_token_that_opened_it() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let (ana, _) = w.env.token(&w.ana, "read").await;
    let (anas_other_token, _) = w.env.token(&w.ana, "read").await;
    let (cai, _) = w.env.token(&w.cai, "read").await;
    let http = reqwest::Client::new();
    let send =
        |method: reqwest::Method, token: &str, session: Option<&str>, body: Option<Value>| {
            let mut request = http
                .request(method, server.url("/mcp"))
                .bearer_auth(token)
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2025-11-25");
            if let Some(session) = session {
                request = request.header("mcp-session-id", session);
            }
            if let Some(body) = body {
                request = request.json(&body);
            }
            request.send()
        };
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
    let opened = send(
        reqwest::Method::POST,
        &ana,
        None,
        Some(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})),
    )
    .await
    .unwrap();
    assert!(opened.status().is_success());
    let session = opened.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    send(reqwest::Method::POST, &ana, Some(&session), Some(initialized)).await.unwrap();
    // Another household's token, or another token of the same member, meets an unknown
    // session: a request, the notification stream and the end of the session alike.
    for stranger in [&cai, &anas_other_token] {
        for (method, body) in [
            (reqwest::Method::POST, Some(list.clone())),
            (reqwest::Method::GET, None),
            (reqwest::Method::DELETE, None),
        ] {
            let refused = send(method.clone(), stranger, Some(&session), body).await.unwrap();
            assert_eq!(refused.status(), reqwest::StatusCode::NOT_FOUND, "{method}");
        }
    }
    // The session is still Ana's, and only she ends it.
    let listed =
        send(reqwest::Method::POST, &ana, Some(&session), Some(list.clone())).await.unwrap();
    assert!(listed.status().is_success(), "{}", listed.status());
    let closed = send(reqwest::Method::DELETE, &ana, Some(&session), None).await.unwrap();
    // 204, as the official clients expect (rmcp says 202, which the Python SDK logs as failed).
    assert_eq!(closed.status(), reqwest::StatusCode::NO_CONTENT);
    assert_eq!(closed.text().await.unwrap(), "");
    let gone = send(reqwest::Method::POST, &ana, Some(&session), Some(list)).await.unwrap();
    assert_eq!(gone.status(), reqwest::StatusCode::NOT_FOUND);
}

/// A 2026-07-28 stateless request as a modern client sends it, with the given `Accept`; the
/// answer's status, content type and body.
async fn modern_post(
    url: &str,
    token: &str,
    method: &str,
    params: &Value,
    accept: &str,
) -> (u16, String, String) {
    let mut params = params.clone();
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "both paths", "version": "1"},
    });
    let name = params["name"].as_str().or(params["uri"].as_str()).map(str::to_owned);
    let mut request = reqwest::Client::new()
        .post(url)
        .bearer_auth(token)
        .header("content-type", "application/json")
        .header("accept", accept)
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .body(json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).to_string());
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let content_type = response.headers()["content-type"].to_str().unwrap().to_owned();
    (status, content_type, response.text().await.unwrap())
}

/// Sends the request on the hot path (`mcp/src/direct.rs`) and again with an `Accept` only
/// rmcp reads (a weight), and checks that both answer the same JSON. Returns the hot path's
/// body.
async fn on_both_paths(url: &str, token: &str, method: &str, params: Value) -> String {
    let direct =
        modern_post(url, token, method, &params, "application/json, text/event-stream").await;
    let rmcp =
        modern_post(url, token, method, &params, "application/json;q=1, text/event-stream").await;
    assert_eq!((direct.0, &direct.1), (rmcp.0, &rmcp.1), "{method} {params}: {}", direct.2);
    let parsed = |body: &str| serde_json::from_str::<Value>(body).unwrap();
    assert_eq!(parsed(&direct.2), parsed(&rmcp.2), "{method} {params}");
    direct.2
}

fn tool_call(op: &str, arguments: &Value) -> Value {
    json!({"name": op, "arguments": arguments})
}

#[tokio::test]
async fn a_statement_larger_than_other_messages_is_read_over_mcp() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let (token, _) = w.env.token(&w.ana, "read").await;
    let url = server.url("/mcp");
    let statement = crate::import::long_statement(75_000);
    let arguments = json!({"content_base64": ops::import::encode_base64(statement.as_bytes())});
    let body =
        on_both_paths(&url, &token, "tools/call", tool_call("parse_statement", &arguments)).await;
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        answer["result"]["structuredContent"]["transaction_count"],
        75_000,
        "{}",
        &body[..body.len().min(500)]
    );
    // Through call_tool (for a client that was not given parse_statement), the same.
    let through = json!({"name": "call_tool", "arguments": {"name": "parse_statement", "arguments": arguments}});
    let (status, _, body) =
        modern_post(&url, &token, "tools/call", &through, "application/json, text/event-stream")
            .await;
    assert_eq!(status, 200, "{}", &body[..body.len().min(500)]);
    assert!(body.contains(r#""transaction_count":75000"#), "{}", &body[..body.len().min(500)]);
    // The same size for any other tool is refused, before it is read as a call.
    let padded =
        json!({"name": "get_context", "arguments": {}, "pad": arguments["content_base64"]});
    let (status, _, body) =
        modern_post(&url, &token, "tools/call", &padded, "application/json, text/event-stream")
            .await;
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("max_request_bytes"), "{body}");
    // A batch is not a call, whatever it holds.
    let batch = json!([{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "parse_statement", "arguments": arguments}}]);
    let response = reqwest::Client::new()
        .post(&url)
        .bearer_auth(&token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(batch.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 413);
}

/// A tool result on the hot path holds the op's own JSON as REST answers it, byte for byte:
/// written once, the same bytes as structured content and (escaped) as text.
async fn assert_written_once(
    server: &test_support::TestServer,
    token: &str,
    body: &str,
    op: &str,
    arguments: &Value,
) {
    let rest = reqwest::Client::new()
        .post(server.url(&format!("/api/v1/ops/{op}")))
        .bearer_auth(token)
        .json(arguments)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(body.contains(&format!("\"structuredContent\":{rest},")), "{op}: {body}");
    let text = serde_json::to_string(&rest).unwrap();
    assert!(body.contains(&format!("\"text\":{text}")), "{op}: {body}");
}

#[tokio::test]
async fn the_hot_path_answers_as_rmcp_does() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let url = server.url("/mcp");
    let (read, _) = w.env.token(&w.ana, "read").await;
    let (write, _) = w.env.token(&w.ana, "write").await;
    // Bob sees his private gym, which Ana's tokens do not.
    let (bobs, _) = w.env.token(&w.bob, "read").await;
    let netflix = format!("exhale://subscriptions/{}", w.netflix);
    for token in [&read, &write, &bobs] {
        for arguments in [
            json!({"id": w.netflix}),
            json!({"id": "netflix"}),
            json!({"limit": 2}),
            json!({"limit": 2, "cursor": "o2", "sort": "price"}),
        ] {
            let op = if arguments.get("id").is_some() {
                "get_subscription"
            } else {
                "list_subscriptions"
            };
            let body = on_both_paths(&url, token, "tools/call", tool_call(op, &arguments)).await;
            assert!(body.contains("\"isError\":false"), "{body}");
            assert_written_once(&server, token, &body, op, &arguments).await;
        }
        // Refusals are tool results on both paths: another member's private subscription,
        // another household's, a bad dry_run, an unknown field, a name that matches nothing.
        for (op, arguments) in [
            ("get_subscription", json!({"id": w.bobs_gym})),
            ("get_subscription", json!({"id": w.other_household_sub})),
            ("get_subscription", json!({"id": w.netflix, "dry_run": "yes"})),
            ("list_charges", json!({"bogus": 1})),
            ("get_subscription", json!({"id": "no such thing"})),
        ] {
            let body = on_both_paths(&url, token, "tools/call", tool_call(op, &arguments)).await;
            // Only Bob may read his private gym.
            let refused = token != &bobs || arguments["id"] != w.bobs_gym;
            assert_eq!(body.contains("\"isError\":true"), refused, "{op} {arguments}: {body}");
        }
        on_both_paths(&url, token, "tools/call", json!({"name": "get_context"})).await;
        // Through call_tool, the same answers, and refusals point into its arguments; an
        // unknown tool and a write are rmcp's.
        for (op, arguments) in [
            ("list_accounts", json!({})),
            ("get_subscription", json!({"id": w.bobs_gym})),
            ("list_charges", json!({"bogus": 1})),
            ("no_such_tool", json!({})),
            ("create_category", json!({"name": "Pets", "dry_run": true})),
        ] {
            let through = json!({"name": "call_tool", "arguments": tool_call(op, &arguments)});
            let body = on_both_paths(&url, token, "tools/call", through).await;
            if op == "list_charges" {
                assert!(body.contains("(at /arguments"), "{body}");
            }
        }
        on_both_paths(&url, token, "tools/list", json!({})).await;
        on_both_paths(&format!("{url}?tools=compact"), token, "tools/list", json!({})).await;
        for uri in ["exhale://context", netflix.as_str()] {
            let body = on_both_paths(&url, token, "resources/read", json!({"uri": uri})).await;
            assert!(body.contains("\"contents\""), "{body}");
        }
        // What the hot path leaves to rmcp is answered the same: a private resource of another
        // member, an unknown tool, a write.
        let gym = format!("exhale://subscriptions/{}", w.bobs_gym);
        on_both_paths(&url, token, "resources/read", json!({"uri": gym})).await;
        on_both_paths(&url, token, "tools/call", json!({"name": "no_such_tool"})).await;
        on_both_paths(
            &url,
            token,
            "tools/call",
            json!({"name": "create_category", "arguments": {"name": "Pets", "dry_run": true}}),
        )
        .await;
    }
}
