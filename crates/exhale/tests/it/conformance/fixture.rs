//! The conformance fixture: an MCP server with the `test_*` tools, resources and prompts the
//! conformance suite's scenarios call by name, written from the scenario descriptions. It runs
//! on `mcp::endpoint`, the transport the app itself uses, so the suite checks our transport
//! policy and both protocol eras, not a different server.
//!
//! Nothing here is Exhale's business logic; `ExhaleMcp` is checked against the real app in
//! `conformance.rs` (the generic scenarios) and in `mcp.rs`.

#![allow(
    deprecated,
    reason = "sampling, roots and logging are deprecated by the 2026 revision but scored by 2025-11-25"
)]

use std::{
    collections::HashSet,
    sync::{Arc, Mutex},
    time::Duration,
};

use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities,
        CompleteRequestParams, CompleteResult, CompletionInfo, GetPromptRequestParams,
        GetPromptResponse, GetPromptResult, InputRequest, InputRequests, InputRequiredResult,
        InputResponses, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
        ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
        ReadResourceResponse, ReadResourceResult, RequestStateCodec, SealOptions, ServerConfig,
        SetLevelRequestParams, SubscribeRequestParams, SubscriptionFilter, Tool,
        UnsubscribeRequestParams,
    },
    service::{RequestContext, SubscriptionContext},
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::sync::broadcast;

/// A 1×1 PNG.
const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
/// Eight samples of silence as an 8 kHz mono WAV.
const WAV: &str = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";

/// Which list a `test_trigger_*` tool changed.
#[derive(Clone, Copy, Debug)]
enum ListChanged {
    Tools,
    Prompts,
}

/// What every per-request handler of one fixture server shares.
pub(super) struct Shared {
    codec: RequestStateCodec,
    changes: broadcast::Sender<ListChanged>,
}

impl Shared {
    pub(super) fn new() -> Arc<Self> {
        Arc::new(Self {
            codec: RequestStateCodec::try_new(vec![7; 32]).unwrap(),
            changes: broadcast::channel(16).0,
        })
    }
}

/// One handler: per legacy session, or per 2026 request.
#[derive(Clone)]
pub(super) struct Fixture {
    shared: Arc<Shared>,
    /// `logging/setLevel` of a legacy session.
    log_level: Arc<Mutex<Option<Value>>>,
    /// `resources/subscribe` of a legacy session.
    watched: Arc<Mutex<HashSet<String>>>,
    /// Taken by `listen`: subscribed before the acknowledgement, so no change is missed.
    pending_listen: Arc<Mutex<Option<broadcast::Receiver<ListChanged>>>>,
}

impl Fixture {
    pub(super) fn new(shared: Arc<Shared>) -> Self {
        Self {
            shared,
            log_level: Arc::default(),
            watched: Arc::default(),
            pending_listen: Arc::default(),
        }
    }
}

fn from_json<T: DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).unwrap()
}

/// A complete result from its JSON: the 2026 revision requires `resultType`, and rmcp drops it
/// for 2025 clients.
fn complete<T: DeserializeOwned>(mut result: Value) -> T {
    result["resultType"] = json!("complete");
    from_json(result)
}

fn modern(cx: &RequestContext<RoleServer>) -> bool {
    cx.protocol_version().is_some_and(|version| version >= ProtocolVersion::V_2026_07_28)
}

fn text(text: impl Into<String>) -> CallToolResponse {
    complete::<CallToolResult>(json!({"content": [{"type": "text", "text": text.into()}]})).into()
}

fn input_required(requests: &[(&str, Value)], state: Option<String>) -> InputRequiredResult {
    let requests: InputRequests = requests
        .iter()
        .map(|(key, request)| ((*key).to_owned(), from_json::<InputRequest>(request.clone())))
        .collect();
    InputRequiredResult::new(Some(requests), state)
}

fn elicit(message: &str, schema: Value) -> Value {
    json!({"method": "elicitation/create", "params": {"message": message, "requestedSchema": schema}})
}

fn sample(prompt: &str, max_tokens: u32) -> Value {
    json!({"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
        "maxTokens": max_tokens,
    }})
}

fn list_roots() -> Value {
    json!({"method": "roots/list", "params": {}})
}

fn ask_name() -> Value {
    elicit(
        "What is your name?",
        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
    )
}

/// An accepted elicitation's `content.<field>` string, if the response is one.
fn accepted_field(response: Option<&Value>, field: &str) -> Option<String> {
    let response = response?;
    (response.get("action")?.as_str()? == "accept")
        .then(|| response.get("content")?.get(field)?.as_str().map(str::to_owned))
        .flatten()
}

fn is_object(response: Option<&Value>) -> bool {
    response.is_some_and(Value::is_object)
}

/// What a question put to the client came to.
enum Asked {
    Answer(Value),
    /// 2026: the client must retry with the answer.
    Retry(InputRequiredResult),
}

/// Asks the client `request` (a `{method, params}` object) under `key`: over the legacy
/// session, or as an `input_required` result that a 2026 client answers in its retry.
async fn ask(
    cx: &RequestContext<RoleServer>,
    responses: Option<&InputResponses>,
    key: &str,
    request: Value,
) -> Result<Asked, McpError> {
    if modern(cx) {
        return Ok(match responses.and_then(|responses| responses.get(key)) {
            Some(answer) if answer.is_object() => Asked::Answer(answer.clone()),
            _ => Asked::Retry(input_required(&[(key, request)], None)),
        });
    }
    let capabilities = cx.client_capabilities().unwrap_or_default();
    let params = request["params"].clone();
    let refused = |err: rmcp::service::ServiceError| {
        McpError::internal_error(format!("the client did not answer: {err}"), None)
    };
    let answer = match request["method"].as_str() {
        Some("sampling/createMessage") => {
            if capabilities.sampling.is_none() {
                return Err(McpError::invalid_params("the client does not support sampling", None));
            }
            serde_json::to_value(cx.peer.create_message(from_json(params)).await.map_err(refused)?)
        }
        Some("elicitation/create") => {
            if capabilities.elicitation.is_none() {
                return Err(McpError::invalid_params(
                    "the client does not support elicitation",
                    None,
                ));
            }
            serde_json::to_value(
                cx.peer.create_elicitation(from_json(params)).await.map_err(refused)?,
            )
        }
        _ => serde_json::to_value(cx.peer.list_roots().await.map_err(refused)?),
    };
    Ok(Asked::Answer(answer.unwrap()))
}

/// Asks a form question and reports what came back, as the SEP-1034 and SEP-1330 scenarios
/// expect.
async fn elicitation_completed(
    cx: &RequestContext<RoleServer>,
    responses: Option<&InputResponses>,
    key: &str,
    question: Value,
) -> Result<CallToolResponse, McpError> {
    Ok(match ask(cx, responses, key, question).await? {
        Asked::Answer(answer) => text(format!(
            "Elicitation completed: action={}, content={}",
            answer["action"].as_str().unwrap_or_default(),
            answer["content"]
        )),
        Asked::Retry(retry) => retry.into(),
    })
}

fn tool(name: &str, description: &str, input_schema: Value) -> Tool {
    Tool::new(name.to_owned(), description.to_owned(), Arc::new(from_json(input_schema)))
}

fn no_arguments() -> Value {
    json!({"type": "object", "properties": {}})
}

fn string_arguments(names: &[&str]) -> Value {
    let properties: serde_json::Map<String, Value> =
        names.iter().map(|name| ((*name).to_owned(), json!({"type": "string"}))).collect();
    json!({"type": "object", "properties": properties, "required": names})
}

/// Every tool, in one fixed order.
fn tools() -> Vec<Tool> {
    let mut tools: Vec<Tool> = [
        ("test_simple_text", "Returns a simple text"),
        ("test_image_content", "Returns an image"),
        ("test_audio_content", "Returns audio"),
        ("test_embedded_resource", "Returns an embedded resource"),
        ("test_multiple_content_types", "Returns text, an image and a resource"),
        ("test_tool_with_logging", "Logs three messages while it runs"),
        ("test_tool_with_progress", "Reports progress while it runs"),
        ("test_error_handling", "Always fails"),
        ("test_elicitation_sep1034_defaults", "Asks for values that all have defaults"),
        ("test_elicitation_sep1330_enums", "Asks with the five kinds of enum"),
        ("test_input_required_result_elicitation", "Asks the person's name"),
        ("test_input_required_result_sampling", "Asks the model a question"),
        ("test_input_required_result_list_roots", "Asks for the client's roots"),
        ("test_input_required_result_request_state", "Asks for a confirmation, with state"),
        ("test_input_required_result_multiple_inputs", "Asks three things at once"),
        ("test_input_required_result_multi_round", "Asks two things, one after the other"),
        ("test_input_required_result_tampered_state", "Asks with integrity-protected state"),
        ("test_input_required_result_capabilities", "Asks only what the client can answer"),
        ("test_missing_capability", "Needs the client's sampling capability"),
        ("test_streaming_elicitation", "Asks the person something"),
        ("test_logging_tool", "Logs only at the level the request asks for"),
        ("test_trigger_tool_change", "Changes the tool list"),
        ("test_trigger_prompt_change", "Changes the prompt list"),
    ]
    .into_iter()
    .map(|(name, description)| tool(name, description, no_arguments()))
    .collect();
    tools.push(tool("test_sampling", "Asks the client's model", string_arguments(&["prompt"])));
    tools.push(tool("test_elicitation", "Asks the person", string_arguments(&["message"])));
    tools.push(tool(
        "test_custom_header",
        "Mirrors its region argument into an HTTP header",
        json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
        }, "required": ["region"]}),
    ));
    tools.push(tool(
        "json_schema_2020_12_tool",
        "Tool with JSON Schema 2020-12 features",
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            }},
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"},
                "email": {"type": "string"},
            },
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": false,
        }),
    ));
    tools
}

/// Log severities in order, as the spec names them.
const LEVELS: [&str; 8] =
    ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

fn severity(level: &Value) -> usize {
    LEVELS.iter().position(|name| level.as_str() == Some(name)).unwrap_or(0)
}

impl Fixture {
    /// The level below which nothing is logged: the 2026 request's own, or the legacy
    /// session's (everything when unset). A 2026 request without one gets no logs.
    fn log_threshold(&self, cx: &RequestContext<RoleServer>) -> Option<usize> {
        if let Some(level) = cx.meta.log_level() {
            return Some(severity(&serde_json::to_value(level).unwrap()));
        }
        if modern(cx) {
            return None;
        }
        Some(self.log_level.lock().unwrap().as_ref().map_or(0, severity))
    }

    async fn log_three(&self, cx: &RequestContext<RoleServer>) -> CallToolResponse {
        let threshold = self.log_threshold(cx);
        for (index, message) in
            ["Tool execution started", "Tool processing data", "Tool execution completed"]
                .into_iter()
                .enumerate()
        {
            if index > 0 {
                // The scenario asks for pauses, to show the messages arrive while the tool runs.
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            if threshold.is_some_and(|threshold| severity(&json!("info")) >= threshold) {
                let _ = cx
                    .peer
                    .notify_logging_message(from_json(json!({"level": "info", "data": message})))
                    .await;
            }
        }
        text("Tool execution finished with three log messages")
    }

    async fn progress(&self, cx: &RequestContext<RoleServer>) -> CallToolResponse {
        let token = cx.meta.get_progress_token();
        for (index, progress) in [0, 50, 100].into_iter().enumerate() {
            if index > 0 {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            if let Some(token) = &token {
                let _ = cx
                    .peer
                    .notify_progress(from_json(
                        json!({"progressToken": token, "progress": progress, "total": 100}),
                    ))
                    .await;
            }
        }
        text("Tool execution finished at 100/100")
    }

    fn seal(&self, tool: &str, state: &Value) -> String {
        self.shared
            .codec
            .seal_json_with(
                state,
                &SealOptions::new().associated_data(tool.as_bytes()).ttl(Duration::from_secs(600)),
            )
            .unwrap()
    }

    /// Opens a state this fixture sealed for `tool`; anything else is refused.
    fn open(&self, tool: &str, state: Option<&String>) -> Result<Option<Value>, McpError> {
        let Some(state) = state else { return Ok(None) };
        self.shared
            .codec
            .open_json_with(state, tool.as_bytes())
            .map(Some)
            .map_err(|_| McpError::invalid_params("requestState failed its integrity check", None))
    }

    fn call_mrtr(
        &self,
        request: &CallToolRequestParams,
        cx: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.as_ref();
        let responses = request.input_responses.as_ref();
        let response = |key: &str| responses.and_then(|responses| responses.get(key));
        let confirm = || {
            elicit(
                "Please confirm",
                json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}),
            )
        };
        Ok(match name {
            "test_input_required_result_elicitation" => {
                match accepted_field(response("user_name"), "name") {
                    Some(name) => text(format!("Hello, {name}!")),
                    None => input_required(&[("user_name", ask_name())], None).into(),
                }
            }
            "test_input_required_result_sampling" => {
                let answer = response("capital_question")
                    .and_then(|answer| answer.get("content")?.get("text")?.as_str());
                match answer {
                    Some(answer) => text(format!("The model answered: {answer}")),
                    None => input_required(
                        &[("capital_question", sample("What is the capital of France?", 100))],
                        None,
                    )
                    .into(),
                }
            }
            "test_input_required_result_list_roots" => {
                match response("client_roots").and_then(|answer| answer.get("roots")?.as_array()) {
                    Some(roots) => {
                        let uris: Vec<&str> =
                            roots.iter().filter_map(|root| root["uri"].as_str()).collect();
                        text(format!("The client's roots: {}", uris.join(", ")))
                    }
                    None => input_required(&[("client_roots", list_roots())], None).into(),
                }
            }
            "test_input_required_result_request_state"
            | "test_input_required_result_tampered_state" => {
                let state = self.open(name, request.request_state.as_ref())?;
                match (state, is_object(response("confirm"))) {
                    (Some(state), true) if state["asked"] == json!("confirm") => {
                        text("state-ok: the requestState verified and the answer arrived")
                    }
                    _ => input_required(
                        &[("confirm", confirm())],
                        Some(self.seal(name, &json!({"asked": "confirm"}))),
                    )
                    .into(),
                }
            }
            "test_input_required_result_multiple_inputs" => {
                let state = self.open(name, request.request_state.as_ref())?;
                let all = ["user_name", "greeting", "client_roots"]
                    .iter()
                    .all(|key| is_object(response(key)));
                if state.is_some() && all {
                    text("All three answers arrived")
                } else {
                    input_required(
                        &[
                            ("user_name", ask_name()),
                            ("greeting", sample("Generate a greeting", 50)),
                            ("client_roots", list_roots()),
                        ],
                        Some(self.seal(name, &json!({"round": 1}))),
                    )
                    .into()
                }
            }
            "test_input_required_result_multi_round" => {
                let state = self.open(name, request.request_state.as_ref())?;
                let round = state.as_ref().and_then(|state| state["round"].as_u64());
                let step2 = || {
                    elicit(
                        "Step 2: What is your favorite color?",
                        json!({"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}),
                    )
                };
                match (round, accepted_field(response("step1"), "name")) {
                    (Some(2), _) => match accepted_field(response("step2"), "color") {
                        Some(color) => text(format!(
                            "{} likes {color}",
                            state.as_ref().and_then(|s| s["name"].as_str()).unwrap_or_default()
                        )),
                        None => input_required(
                            &[("step2", step2())],
                            request.request_state.clone(),
                        )
                        .into(),
                    },
                    (Some(1), Some(name_given)) => input_required(
                        &[("step2", step2())],
                        Some(self.seal(name, &json!({"round": 2, "name": name_given}))),
                    )
                    .into(),
                    _ => input_required(
                        &[(
                            "step1",
                            elicit(
                                "Step 1: What is your name?",
                                json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
                            ),
                        )],
                        Some(self.seal(name, &json!({"round": 1}))),
                    )
                    .into(),
                }
            }
            "test_input_required_result_capabilities" => {
                if responses.is_some_and(|responses| !responses.is_empty()) {
                    return Ok(text("The answers arrived"));
                }
                let capabilities = cx.client_capabilities().unwrap_or_default();
                let mut requests = Vec::new();
                if capabilities.elicitation.is_some() {
                    requests.push(("user_name", ask_name()));
                }
                if capabilities.sampling.is_some() {
                    requests.push(("greeting", sample("Generate a greeting", 50)));
                }
                if capabilities.roots.is_some() {
                    requests.push(("client_roots", list_roots()));
                }
                if requests.is_empty() {
                    return Ok(text("The client can answer nothing, so nothing was asked"));
                }
                input_required(&requests, None).into()
            }
            _ => {
                return Err(McpError::invalid_params(format!("Unknown tool {name}"), None));
            }
        })
    }

    async fn call(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let arguments = request.arguments.clone().unwrap_or_default();
        let argument = |name: &str| arguments.get(name).and_then(Value::as_str).unwrap_or_default();
        let responses = request.input_responses.as_ref();
        Ok(match request.name.as_ref() {
            "test_simple_text" => text("This is a simple text response for testing."),
            "test_image_content" => complete::<CallToolResult>(
                json!({"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]}),
            )
            .into(),
            "test_audio_content" => complete::<CallToolResult>(
                json!({"content": [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]}),
            )
            .into(),
            "test_embedded_resource" => complete::<CallToolResult>(json!({"content": [{
                "type": "resource",
                "resource": {"uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content."},
            }]}))
            .into(),
            "test_multiple_content_types" => complete::<CallToolResult>(json!({"content": [
                {"type": "text", "text": "Multiple content types test:"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
                {"type": "resource", "resource": {
                    "uri": "test://mixed-content-resource",
                    "mimeType": "application/json",
                    "text": "{\"test\":\"data\",\"value\":123}",
                }},
            ]}))
            .into(),
            "test_tool_with_logging" | "test_logging_tool" => self.log_three(&cx).await,
            "test_tool_with_progress" => self.progress(&cx).await,
            "test_error_handling" => complete::<CallToolResult>(json!({
                "isError": true,
                "content": [{"type": "text", "text": "This tool intentionally returns an error for testing"}],
            }))
            .into(),
            "test_sampling" => {
                match ask(&cx, responses, "sampling", sample(argument("prompt"), 100)).await? {
                    Asked::Answer(answer) => text(format!(
                        "LLM response: {}",
                        answer["content"]["text"].as_str().unwrap_or_default()
                    )),
                    Asked::Retry(retry) => retry.into(),
                }
            }
            "test_elicitation" | "test_streaming_elicitation" => {
                let message = match argument("message") {
                    "" => "Please tell us who you are",
                    message => message,
                };
                let schema = json!({"type": "object", "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"},
                }, "required": ["username", "email"]});
                match ask(&cx, responses, "user_response", elicit(message, schema)).await? {
                    Asked::Answer(answer) => text(format!("User response: {answer}")),
                    Asked::Retry(retry) => retry.into(),
                }
            }
            "test_elicitation_sep1034_defaults" => {
                let schema = json!({"type": "object", "properties": {
                    "name": {"type": "string", "default": "John Doe"},
                    "age": {"type": "integer", "default": 30},
                    "score": {"type": "number", "default": 95.5},
                    "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                    "verified": {"type": "boolean", "default": true},
                }});
                elicitation_completed(&cx, responses, "details", elicit("Please review your details", schema)).await?
            }
            "test_elicitation_sep1330_enums" => {
                let schema = json!({"type": "object", "properties": {
                    "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                    "titledSingle": {"type": "string", "oneOf": [
                        {"const": "value1", "title": "First Option"},
                        {"const": "value2", "title": "Second Option"},
                        {"const": "value3", "title": "Third Option"},
                    ]},
                    "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
                    "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                    "titledMulti": {"type": "array", "items": {"anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"},
                    ]}},
                }});
                elicitation_completed(&cx, responses, "choices", elicit("Please choose", schema)).await?
            }
            "test_missing_capability" => {
                let declared = cx.client_capabilities().is_some_and(|c| c.sampling.is_some());
                if !declared {
                    return Err(McpError::missing_required_client_capability(
                        from_json::<ClientCapabilities>(json!({"sampling": {}})),
                    ));
                }
                match ask(&cx, responses, "sampling", sample("Say hello", 20)).await? {
                    Asked::Answer(_) => text("The client sampled"),
                    Asked::Retry(retry) => retry.into(),
                }
            }
            "test_trigger_tool_change" | "test_trigger_prompt_change" => {
                let change = if request.name == "test_trigger_tool_change" {
                    ListChanged::Tools
                } else {
                    ListChanged::Prompts
                };
                let _ = self.shared.changes.send(change);
                if !modern(&cx) {
                    let _ = match change {
                        ListChanged::Tools => cx.peer.notify_tool_list_changed().await,
                        ListChanged::Prompts => cx.peer.notify_prompt_list_changed().await,
                    };
                }
                text(format!("Announced a change of the {change:?} list"))
            }
            "test_custom_header" => text(format!("Region {}", argument("region"))),
            "json_schema_2020_12_tool" => text("Arguments accepted"),
            _ => return self.call_mrtr(&request, &cx),
        })
    }
}

impl ServerHandler for Fixture {
    fn get_info(&self) -> ServerConfig {
        let capabilities = from_json(json!({
            "tools": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": true},
            "prompts": {"listChanged": true},
            "completions": {},
            "logging": {},
        }));
        ServerConfig::new(capabilities)
            .with_server_info(rmcp::model::Implementation::new("exhale-conformance-fixture", "1"))
            .with_instructions("The conformance suite's fixture server; nothing else.")
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools().into_iter().find(|tool| tool.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.call(request, cx).await
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        *self.log_level.lock().unwrap() = Some(serde_json::to_value(request.level).unwrap());
        Ok(())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(complete(json!({"resources": [
            {"uri": "test://static-text", "name": "static-text", "description": "A static text resource", "mimeType": "text/plain"},
            {"uri": "test://static-binary", "name": "static-binary", "description": "A static PNG", "mimeType": "image/png"},
            {"uri": "test://watched-resource", "name": "watched-resource", "description": "A resource to subscribe to", "mimeType": "text/plain"},
        ]})))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(complete(json!({"resourceTemplates": [
            {"uriTemplate": "test://template/{id}/data", "name": "template-data", "description": "Data for an id", "mimeType": "application/json"},
        ]})))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let uri = request.uri.as_str();
        let contents = match uri {
            "test://static-text" => {
                json!({"uri": uri, "mimeType": "text/plain", "text": "This is the content of the static text resource."})
            }
            "test://static-binary" => json!({"uri": uri, "mimeType": "image/png", "blob": PNG}),
            "test://watched-resource" => {
                json!({"uri": uri, "mimeType": "text/plain", "text": "Watched content."})
            }
            _ => match uri
                .strip_prefix("test://template/")
                .and_then(|rest| rest.strip_suffix("/data"))
            {
                Some(id) if !id.is_empty() && !id.contains('/') => json!({
                    "uri": uri,
                    "mimeType": "application/json",
                    "text": json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string(),
                }),
                _ => {
                    return Err(McpError::resource_not_found(
                        "Resource not found",
                        Some(json!({"uri": uri})),
                    ));
                }
            },
        };
        Ok(complete::<ReadResourceResult>(json!({"contents": [contents]})).into())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.watched.lock().unwrap().insert(request.uri);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.watched.lock().unwrap().remove(&request.uri);
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        *self.pending_listen.lock().unwrap() = Some(self.shared.changes.subscribe());
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let Some(mut changes) = self.pending_listen.lock().unwrap().take() else {
            return Ok(());
        };
        loop {
            let change = tokio::select! {
                () = context.cancelled() => return Ok(()),
                change = changes.recv() => change,
            };
            let sent = match change {
                Ok(ListChanged::Tools) => context.sink().notify_tool_list_changed().await,
                Ok(ListChanged::Prompts) => context.sink().notify_prompt_list_changed().await,
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return Ok(()),
            };
            // A change the client did not ask to hear about is simply not sent.
            if let Err(rmcp::service::SubscriptionSendError::SubscriptionClosed) = sent {
                return Ok(());
            }
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(complete(json!({"prompts": [
            {"name": "test_simple_prompt", "description": "A prompt without arguments"},
            {"name": "test_prompt_with_arguments", "description": "A prompt with two arguments", "arguments": [
                {"name": "arg1", "description": "First test argument", "required": true},
                {"name": "arg2", "description": "Second test argument", "required": true},
            ]},
            {"name": "test_prompt_with_embedded_resource", "description": "A prompt with a resource", "arguments": [
                {"name": "resourceUri", "description": "URI of the resource to embed", "required": true},
            ]},
            {"name": "test_prompt_with_image", "description": "A prompt with an image"},
            {"name": "test_input_required_result_prompt", "description": "A prompt that asks for context first"},
        ]})))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let arguments = request.arguments.clone().unwrap_or_default();
        let argument = |name: &str| arguments.get(name).and_then(Value::as_str).unwrap_or_default();
        let user_text =
            |text: String| json!({"role": "user", "content": {"type": "text", "text": text}});
        let messages = match request.name.as_str() {
            "test_simple_prompt" => vec![user_text("This is a simple prompt for testing.".into())],
            "test_prompt_with_arguments" => vec![user_text(format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                argument("arg1"),
                argument("arg2")
            ))],
            "test_prompt_with_embedded_resource" => vec![
                json!({"role": "user", "content": {"type": "resource", "resource": {
                    "uri": argument("resourceUri"),
                    "mimeType": "text/plain",
                    "text": "Embedded resource content for testing.",
                }}}),
                user_text("Please process the embedded resource above.".into()),
            ],
            "test_prompt_with_image" => vec![
                json!({"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}}),
                user_text("Please analyze the image above.".into()),
            ],
            "test_input_required_result_prompt" => {
                let question = elicit(
                    "What context should the prompt use?",
                    json!({"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}),
                );
                let responses = request.input_responses.as_ref();
                match ask(&cx, responses, "user_context", question).await? {
                    Asked::Answer(answer) => vec![user_text(format!(
                        "Use this context: {}",
                        answer["content"]["context"].as_str().unwrap_or("(none given)")
                    ))],
                    Asked::Retry(retry) => return Ok(GetPromptResponse::InputRequired(retry)),
                }
            }
            other => {
                return Err(McpError::invalid_params(
                    format!("Unknown prompt {other}; prompts/list has them all."),
                    None,
                ));
            }
        };
        Ok(complete::<GetPromptResult>(json!({"messages": messages})).into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let typed = request.argument.value.to_lowercase();
        let values: Vec<String> = ["paris", "park", "party"]
            .into_iter()
            .filter(|value| value.starts_with(&typed))
            .map(str::to_owned)
            .collect();
        Ok(CompleteResult::new(CompletionInfo::new(values).unwrap()))
    }
}
