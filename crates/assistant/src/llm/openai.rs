//! OpenAI-compatible chat completions: the request body, and the reading of its stream into a
//! [`Completion`], with the quirks of the servers that speak it (llm.md section 1.5).
//!
//! Tool calls arrive as fragments keyed by `index`; a server that sends no index has the
//! fragment's position, and one that reuses `index: 0` for every call (Ollama) starts a new call
//! whenever a different id arrives. A name is set only from a non-empty string (LM Studio sends
//! `""` in later fragments). Tool calls count whatever `finish_reason` says (Gemini ends a tool
//! turn with `stop`), and Gemini's `extra_content` (its thought signature) goes back with its
//! call. The usage chunk has no choices. Mistral gets tool-call ids in the only form it takes,
//! and a server that names the other token-limit field is asked again with it.

use serde_json::{Map, Value, json};

use super::{
    Completion, Decoder, Event, Flow, LlmError, Message, Part, Request, Role, StopReason, Usage,
    sse::SseEvent,
};

/// The chat completions URL under `base`: a bare address (`http://127.0.0.1:11434`) gets `/v1`.
pub(super) fn url(base: &str) -> String {
    let base = base.trim_end_matches('/');
    let has_path = base.split_once("://").is_some_and(|(_, rest)| rest.contains('/'));
    if has_path {
        format!("{base}/chat/completions")
    } else {
        format!("{base}/v1/chat/completions")
    }
}

/// The request body. OpenAI's own API takes `max_completion_tokens` (its newer models refuse
/// `max_tokens`); every other server takes `max_tokens`.
pub(super) fn body(request: &Request, base: &str) -> Value {
    let ids = if base.contains("mistral.ai") { IdForm::Mistral } else { IdForm::AsWritten };
    let mut messages = vec![json!({"role": "system", "content": request.system})];
    for message in &request.messages {
        messages.extend(wire_messages(message, ids));
    }
    let mut body = json!({
        "model": request.model,
        "stream": true,
        "stream_options": {"include_usage": true},
        "messages": messages,
    });
    let tokens_field =
        if base.contains("://api.openai.com") { "max_completion_tokens" } else { "max_tokens" };
    body[tokens_field] = json!(request.max_tokens);
    if let Some(temperature) = request.temperature {
        body["temperature"] = json!(temperature);
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({"type": "function", "function": {
                    "name": tool.name, "description": tool.description, "parameters": tool.parameters}})
            })
            .collect();
        body["tools"] = json!(tools);
        body["tool_choice"] = json!("auto");
    }
    body
}

/// How tool-call ids are written to a server.
#[derive(Clone, Copy, PartialEq, Eq)]
enum IdForm {
    AsWritten,
    /// Mistral takes only ids of nine letters and digits: any other id is written as nine
    /// characters derived from it, the same for a call and its result.
    Mistral,
}

impl IdForm {
    fn write(self, id: &str) -> String {
        let fits = id.len() == 9 && id.bytes().all(|b| b.is_ascii_alphanumeric());
        if self == Self::AsWritten || fits {
            return id.to_owned();
        }
        const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
        // FNV-1a: stable across runs and builds, unlike the standard library's hasher.
        let mut hash = id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        });
        (0..9)
            .map(|_| {
                let digit = DIGITS[(hash % 62) as usize];
                hash /= 62;
                char::from(digit)
            })
            .collect()
    }
}

/// The key under which a call's provider-specific extra (Gemini's `extra_content`, holding its
/// thought signature) is kept in a [`Part::Reasoning`], by call id.
const CALL_EXTRAS: &str = "exhale_tool_call_extras";

/// One neutral message as chat-completion messages: a user turn's tool results become `tool`
/// messages, each after the other, before the rest of the turn.
fn wire_messages(message: &Message, ids: IdForm) -> Vec<Value> {
    match message.role {
        Role::User => {
            let mut out: Vec<Value> = message
                .parts
                .iter()
                .filter_map(|part| match part {
                    Part::ToolResult { id, content, .. } => Some(
                        json!({"role": "tool", "tool_call_id": ids.write(id), "content": content}),
                    ),
                    _ => None,
                })
                .collect();
            let content: Vec<Value> = message
                .parts
                .iter()
                .filter_map(|part| match part {
                    Part::Text(text) => Some(json!({"type": "text", "text": text})),
                    Part::Image { media_type, base64 } => Some(json!({"type": "image_url",
                        "image_url": {"url": format!("data:{media_type};base64,{base64}")}})),
                    Part::Pdf { name, base64 } => Some(json!({"type": "file", "file": {
                        "filename": name, "file_data": format!("data:application/pdf;base64,{base64}")}})),
                    _ => None,
                })
                .collect();
            // Plain text as a string: the form every server takes.
            match content.as_slice() {
                [] => {}
                [only] if only["type"] == "text" => {
                    out.push(json!({"role": "user", "content": only["text"]}));
                }
                _ => out.push(json!({"role": "user", "content": content})),
            }
            out
        }
        Role::Assistant => {
            let text = message.text();
            let mut wire = Map::new();
            wire.insert("role".into(), json!("assistant"));
            wire.insert("content".into(), if text.is_empty() { Value::Null } else { json!(text) });
            let extras = message.parts.iter().find_map(|part| match part {
                Part::Reasoning(block) => block.get(CALL_EXTRAS),
                _ => None,
            });
            let calls: Vec<Value> = message
                .tool_calls()
                .map(|(id, name, arguments)| {
                    let arguments = match arguments {
                        Value::String(raw) => raw.clone(),
                        other => other.to_string(),
                    };
                    let mut call = json!({"id": ids.write(id), "type": "function",
                        "function": {"name": name, "arguments": arguments}});
                    if let Some(extra) = extras.and_then(|extras| extras.get(id)) {
                        call["extra_content"] = extra.clone();
                    }
                    call
                })
                .collect();
            if !calls.is_empty() {
                wire.insert("tool_calls".into(), json!(calls));
            }
            // OpenRouter's reasoning models want their reasoning details back in a tool loop.
            for part in &message.parts {
                if let Part::Reasoning(Value::Object(fields)) = part {
                    let details = fields.iter().filter(|(key, _)| *key != CALL_EXTRAS);
                    wire.extend(details.map(|(key, value)| (key.clone(), value.clone())));
                }
            }
            vec![Value::Object(wire)]
        }
    }
}

/// A tool call being assembled.
struct Call {
    id: String,
    name: String,
    arguments: String,
    /// Gemini's `extra_content` (its thought signature), to send back with the call.
    extra: Option<Value>,
}

/// The reading of one chat-completions stream.
#[derive(Default)]
pub(super) struct OpenAiDecoder {
    text: String,
    refusal: String,
    calls: Vec<Call>,
    /// Which call each key (`index`, or position) is filling now.
    current: Vec<(u64, usize)>,
    reasoning_details: Vec<Value>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
}

impl OpenAiDecoder {
    fn tool_call_delta(
        &mut self,
        position: usize,
        delta: &Value,
        on_event: &mut (dyn FnMut(Event) + Send),
    ) {
        let key = delta["index"].as_u64().unwrap_or(position as u64);
        let id = delta["id"].as_str().filter(|id| !id.is_empty());
        let existing = self.current.iter().find(|(k, _)| *k == key).map(|(_, at)| *at);
        let at = match existing {
            // The same key, a different id: a new call (Ollama reuses index 0).
            Some(at)
                if id
                    .is_some_and(|id| !self.calls[at].id.is_empty() && self.calls[at].id != id) =>
            {
                None
            }
            other => other,
        };
        let at = at.unwrap_or_else(|| {
            self.calls.push(Call {
                id: String::new(),
                name: String::new(),
                arguments: String::new(),
                extra: None,
            });
            let at = self.calls.len() - 1;
            self.current.retain(|(k, _)| *k != key);
            self.current.push((key, at));
            at
        });
        let call = &mut self.calls[at];
        if let Some(id) = id {
            call.id = id.to_owned();
        }
        if let Some(extra) = delta.get("extra_content").filter(|extra| !extra.is_null()) {
            call.extra = Some(extra.clone());
        }
        if let Some(name) = delta["function"]["name"].as_str().filter(|name| !name.is_empty())
            && call.name.is_empty()
        {
            call.name = name.to_owned();
            on_event(Event::ToolCall(call.name.clone()));
        }
        match &delta["function"]["arguments"] {
            Value::String(fragment) => call.arguments.push_str(fragment),
            Value::Null => {}
            // Some servers send the whole object instead of a string.
            object => call.arguments = object.to_string(),
        }
    }
}

impl Decoder for OpenAiDecoder {
    fn event(
        &mut self,
        event: &SseEvent,
        on_event: &mut (dyn FnMut(Event) + Send),
    ) -> Result<Flow, LlmError> {
        if event.data.trim() == "[DONE]" {
            return Ok(Flow::Done);
        }
        let chunk: Value = serde_json::from_str(&event.data)
            .map_err(|err| LlmError::Protocol(format!("a chunk is not JSON: {err}")))?;
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            let message =
                error["message"].as_str().map_or_else(|| error.to_string(), str::to_owned);
            return Err(LlmError::Failed(message));
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(normalised_usage(usage));
        }
        let Some(choice) = chunk["choices"].as_array().and_then(|choices| choices.first()) else {
            return Ok(Flow::More);
        };
        let delta = &choice["delta"];
        if let Some(text) = delta["content"].as_str().filter(|t| !t.is_empty()) {
            self.text.push_str(text);
            on_event(Event::Text(text.to_owned()));
        }
        for field in ["reasoning_content", "reasoning"] {
            if let Some(text) = delta[field].as_str().filter(|t| !t.is_empty()) {
                on_event(Event::Reasoning(text.to_owned()));
            }
        }
        if let Some(details) = delta["reasoning_details"].as_array() {
            self.reasoning_details.extend(details.iter().cloned());
        }
        if let Some(refusal) = delta["refusal"].as_str() {
            self.refusal.push_str(refusal);
        }
        if let Some(calls) = delta["tool_calls"].as_array() {
            for (position, call) in calls.iter().enumerate() {
                self.tool_call_delta(position, call, on_event);
            }
        }
        if let Some(reason) = choice["finish_reason"].as_str() {
            self.finish_reason = Some(reason.to_owned());
        }
        Ok(Flow::More)
    }

    fn finish(self: Box<Self>) -> Result<Completion, LlmError> {
        let mut parts = Vec::new();
        let mut reasoning = Map::new();
        if !self.reasoning_details.is_empty() {
            reasoning.insert("reasoning_details".into(), json!(self.reasoning_details));
        }
        let extras: Map<String, Value> = self
            .calls
            .iter()
            .enumerate()
            .filter_map(|(n, call)| Some((call_id(n, &call.id), call.extra.clone()?)))
            .collect();
        if !extras.is_empty() {
            reasoning.insert(CALL_EXTRAS.into(), Value::Object(extras));
        }
        if !reasoning.is_empty() {
            parts.push(Part::Reasoning(Value::Object(reasoning)));
        }
        if !self.text.is_empty() {
            parts.push(Part::Text(self.text));
        }
        let has_calls = !self.calls.is_empty();
        for (n, call) in self.calls.into_iter().enumerate() {
            let arguments = if call.arguments.trim().is_empty() {
                json!({})
            } else {
                // Kept as written when it is not JSON: the loop tells the model so.
                serde_json::from_str(&call.arguments).unwrap_or(Value::String(call.arguments))
            };
            let id = call_id(n, &call.id);
            parts.push(Part::ToolCall { id, name: call.name, arguments });
        }
        let stop = if !self.refusal.is_empty() {
            StopReason::Refusal(Some(self.refusal))
        } else if has_calls {
            StopReason::ToolUse
        } else {
            match self.finish_reason.as_deref() {
                Some("stop") | Some("tool_calls") | None => StopReason::EndTurn,
                Some("length") => StopReason::MaxTokens,
                Some("content_filter") => StopReason::Refusal(None),
                Some(other) => StopReason::Other(other.to_owned()),
            }
        };
        Ok(Completion {
            message: Message { role: Role::Assistant, parts },
            stop,
            usage: self.usage,
        })
    }
}

/// A call's id: the server's, or one made from its position when the server sent none.
fn call_id(position: usize, sent: &str) -> String {
    if sent.is_empty() { format!("call_{position}") } else { sent.to_owned() }
}

/// Switches the body's token limit to the other field name when the server's refusal asks for
/// it (`max_tokens` to `max_completion_tokens` for OpenAI's newer models, or back for a server
/// that does not know the new one); whether it did. A refusal about the limit's value (`max_tokens
/// must be at most 4096`) names no other field and switches nothing.
pub(super) fn switch_token_field(body: &mut Value, refusal: &str) -> bool {
    let Some(fields) = body.as_object_mut() else { return false };
    let lowered = refusal.to_ascii_lowercase();
    let (from, to) = if fields.contains_key("max_tokens") {
        if !lowered.contains("max_completion_tokens") {
            return false;
        }
        ("max_tokens", "max_completion_tokens")
    } else {
        let unknown = ["unrecognized", "unsupported", "unknown", "not supported", "extra"]
            .iter()
            .any(|word| lowered.contains(word));
        if !(unknown && lowered.contains("max_completion_tokens")) {
            return false;
        }
        ("max_completion_tokens", "max_tokens")
    };
    match fields.remove(from) {
        Some(limit) => {
            fields.insert(to.into(), limit);
            true
        }
        None => false,
    }
}

/// OpenAI's usage: `prompt_tokens` includes the cached ones, which are counted apart here.
fn normalised_usage(usage: &Value) -> Usage {
    let count = |value: &Value| value.as_u64().unwrap_or(0);
    let prompt = count(&usage["prompt_tokens"]);
    let cache_read = count(&usage["prompt_tokens_details"]["cached_tokens"]);
    Usage {
        input: prompt.saturating_sub(cache_read),
        cache_read,
        cache_write: count(&usage["prompt_tokens_details"]["cache_write_tokens"]),
        output: count(&usage["completion_tokens"]),
        reported_cost: usage["cost"].as_f64(),
        raw: usage.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{ToolDef, sse::SseReader};

    /// Reads a whole fixture stream; the events it emitted and the completion.
    pub(crate) fn read(stream: &str) -> (Vec<Event>, Result<Completion, LlmError>) {
        let mut decoder = Box::new(OpenAiDecoder::default());
        let mut events = Vec::new();
        let mut on_event = |event| events.push(event);
        for event in SseReader::default().feed(stream.as_bytes()).unwrap() {
            match decoder.event(&event, &mut on_event) {
                Ok(Flow::Done) => break,
                Ok(Flow::More) => {}
                Err(err) => return (events, Err(err)),
            }
        }
        (events, decoder.finish())
    }

    fn data(chunks: &[Value]) -> String {
        let mut out: String = chunks.iter().map(|chunk| format!("data: {chunk}\n\n")).collect();
        out.push_str("data: [DONE]\n\n");
        out
    }

    #[test]
    fn a_bare_address_gets_v1() {
        assert_eq!(url("http://127.0.0.1:11434"), "http://127.0.0.1:11434/v1/chat/completions");
        assert_eq!(url("https://api.openai.com/v1/"), "https://api.openai.com/v1/chat/completions");
        assert_eq!(
            url("https://openrouter.ai/api/v1"),
            "https://openrouter.ai/api/v1/chat/completions"
        );
    }

    #[test]
    fn the_body_carries_tools_results_pictures_and_the_right_token_field() {
        let request = Request {
            model: "m".into(),
            system: "rules".into(),
            messages: vec![
                Message {
                    role: Role::User,
                    parts: vec![
                        Part::Text("hi".into()),
                        Part::Image { media_type: "image/png".into(), base64: "AAA".into() },
                    ],
                },
                Message {
                    role: Role::Assistant,
                    parts: vec![Part::ToolCall {
                        id: "c1".into(),
                        name: "list_subscriptions".into(),
                        arguments: json!({"limit": 5}),
                    }],
                },
                Message {
                    role: Role::User,
                    parts: vec![Part::ToolResult {
                        id: "c1".into(),
                        content: "{}".into(),
                        is_error: false,
                    }],
                },
            ],
            tools: vec![ToolDef {
                name: "list_subscriptions".into(),
                description: "d".into(),
                parameters: json!({"type": "object"}),
            }],
            max_tokens: 100,
            temperature: None,
        };
        let body_sent = body(&request, "http://127.0.0.1:8080");
        assert!(body_sent.get("temperature").is_none(), "the provider's default stays");
        let local = Request { temperature: Some(0.0), ..request.clone() };
        assert_eq!(body(&local, "http://127.0.0.1:8080")["temperature"], 0.0);
        let body = body_sent;
        assert_eq!(body["max_tokens"], 100);
        assert!(body.get("max_completion_tokens").is_none());
        assert_eq!(body["messages"][0], json!({"role": "system", "content": "rules"}));
        assert_eq!(
            body["messages"][1]["content"][1]["image_url"]["url"],
            "data:image/png;base64,AAA"
        );
        assert_eq!(body["messages"][2]["content"], Value::Null);
        assert_eq!(body["messages"][2]["tool_calls"][0]["function"]["arguments"], "{\"limit\":5}");
        assert_eq!(
            body["messages"][3],
            json!({"role": "tool", "tool_call_id": "c1", "content": "{}"})
        );
        assert_eq!(body["tools"][0]["function"]["name"], "list_subscriptions");
        let openai = super::body(&request, "https://api.openai.com/v1");
        assert_eq!(openai["max_completion_tokens"], 100);
        assert!(openai.get("max_tokens").is_none());
    }

    #[test]
    fn text_streams_and_usage_comes_in_a_chunk_without_choices() {
        let stream = data(&[
            json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": null}, "finish_reason": null}]}),
            json!({"choices": [{"index": 0, "delta": {"content": "You pay "}}]}),
            json!({"choices": [{"index": 0, "delta": {"content": "€17.99."}, "finish_reason": "stop"}], "timings": {}}),
            json!({"choices": [], "usage": {"prompt_tokens": 213, "completion_tokens": 50, "prompt_tokens_details": {"cached_tokens": 200}, "cost": 0.0012}}),
        ]);
        let (events, completion) = read(&stream);
        assert_eq!(events, vec![Event::Text("You pay ".into()), Event::Text("€17.99.".into())]);
        let completion = completion.unwrap();
        assert_eq!(completion.message.text(), "You pay €17.99.");
        assert_eq!(completion.stop, StopReason::EndTurn);
        let usage = completion.usage.unwrap();
        assert_eq!((usage.input, usage.cache_read, usage.output), (13, 200, 50));
        assert_eq!(usage.reported_cost, Some(0.0012));
    }

    #[test]
    fn tool_calls_are_assembled_from_fragments_as_each_server_sends_them() {
        // llama-server and OpenAI: by index, one fragment at a time, two calls.
        let indexed = data(&[
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "a", "type": "function", "function": {"name": "get_subscription", "arguments": "{\"id\""}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 1, "id": "b", "function": {"name": "list_charges", "arguments": ""}}]}}]}),
            json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}),
        ]);
        // Ollama: index 0 for every call; LM Studio: empty names later; Gemini: no index and
        // finish_reason "stop".
        let ollama = data(&[
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "a", "function": {"name": "get_subscription", "arguments": "{\"id\": 1}"}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "b", "function": {"name": "list_charges", "arguments": {}}}]}}]}),
        ]);
        let lm_studio = data(&[
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "a", "function": {"name": "get_subscription", "arguments": "{\"id\":"}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"name": "", "arguments": " 1}"}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 1, "id": "b", "function": {"name": "list_charges"}}]}}]}),
        ]);
        let gemini = data(&[
            json!({"choices": [{"delta": {"tool_calls": [{"id": "a", "function": {"name": "get_subscription", "arguments": "{\"id\": 1}"}}, {"id": "b", "function": {"name": "list_charges", "arguments": "{}"}}]}, "finish_reason": "stop"}]}),
        ]);
        for (server, stream) in
            [("indexed", indexed), ("ollama", ollama), ("lm studio", lm_studio), ("gemini", gemini)]
        {
            let (events, completion) = read(&stream);
            let completion = completion.unwrap();
            assert_eq!(completion.stop, StopReason::ToolUse, "{server}");
            let calls: Vec<(&str, &str, &Value)> = completion.message.tool_calls().collect();
            assert_eq!(
                calls,
                vec![
                    ("a", "get_subscription", &json!({"id": 1})),
                    ("b", "list_charges", &json!({}))
                ],
                "{server}"
            );
            assert_eq!(
                events,
                vec![
                    Event::ToolCall("get_subscription".into()),
                    Event::ToolCall("list_charges".into())
                ],
                "{server}"
            );
        }
    }

    #[test]
    fn geminis_thought_signature_goes_back_with_its_call_and_mistral_gets_its_id_form() {
        let stream = data(&[
            json!({"choices": [{"delta": {"tool_calls": [{"id": "call_abc", "function": {"name": "list_charges", "arguments": "{}"}, "extra_content": {"google": {"thought_signature": "sig"}}}]}, "finish_reason": "stop"}]}),
        ]);
        let completion = read(&stream).1.unwrap();
        let replay = wire_messages(&completion.message, IdForm::AsWritten);
        assert_eq!(
            replay[0]["tool_calls"][0]["extra_content"]["google"]["thought_signature"],
            "sig"
        );
        assert!(replay[0].get(CALL_EXTRAS).is_none(), "Exhale's own key stays home");
        let result = Message {
            role: Role::User,
            parts: vec![Part::ToolResult {
                id: "call_abc".into(),
                content: "[]".into(),
                is_error: false,
            }],
        };
        let request = Request {
            model: "mistral-large".into(),
            system: "s".into(),
            messages: vec![completion.message, result],
            tools: vec![],
            max_tokens: 10,
            temperature: None,
        };
        let body = body(&request, "https://api.mistral.ai/v1");
        let call_id = body["messages"][1]["tool_calls"][0]["id"].as_str().unwrap();
        assert!(
            call_id.len() == 9 && call_id.bytes().all(|b| b.is_ascii_alphanumeric()),
            "{call_id}"
        );
        assert_eq!(body["messages"][2]["tool_call_id"], call_id, "the result names the same call");
        assert_eq!(IdForm::Mistral.write("D8j5aZ0q1"), "D8j5aZ0q1", "Mistral's own ids are kept");
    }

    #[test]
    fn the_token_limit_field_switches_when_the_server_names_the_other() {
        let mut body = json!({"max_tokens": 10});
        assert!(!switch_token_field(&mut body, "Invalid model"));
        assert!(!switch_token_field(&mut body, "max_tokens must be at most 4096"));
        assert!(switch_token_field(
            &mut body,
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."
        ));
        assert_eq!(body, json!({"max_completion_tokens": 10}));
        assert!(!switch_token_field(&mut body, "max_completion_tokens must be at most 4096"));
        assert!(switch_token_field(
            &mut body,
            "Unrecognized request argument supplied: max_completion_tokens"
        ));
        assert_eq!(body, json!({"max_tokens": 10}));
    }

    #[test]
    fn arguments_that_are_not_json_are_kept_for_the_loop_to_explain() {
        let stream = data(&[
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "a", "function": {"name": "x", "arguments": "{\"id\": "}}]}}]}),
        ]);
        let completion = read(&stream).1.unwrap();
        assert_eq!(completion.message.tool_calls().next().unwrap().2, &json!("{\"id\": "));
    }

    #[test]
    fn refusals_errors_and_reasoning_are_told_apart_from_text() {
        let refused = data(&[
            json!({"choices": [{"delta": {"refusal": "I can't help with that."}, "finish_reason": "stop"}]}),
        ]);
        assert_eq!(
            read(&refused).1.unwrap().stop,
            StopReason::Refusal(Some("I can't help with that.".into()))
        );
        let filtered =
            data(&[json!({"choices": [{"delta": {}, "finish_reason": "content_filter"}]})]);
        assert_eq!(read(&filtered).1.unwrap().stop, StopReason::Refusal(None));
        let cut =
            data(&[json!({"choices": [{"delta": {"content": "x"}, "finish_reason": "length"}]})]);
        assert_eq!(read(&cut).1.unwrap().stop, StopReason::MaxTokens);
        let failed = data(&[json!({"error": {"message": "Provider returned error", "code": 502}})]);
        assert_eq!(read(&failed).1, Err(LlmError::Failed("Provider returned error".into())));
        let thinking = data(&[
            json!({"choices": [{"delta": {"reasoning_content": "Netflix is monthly."}}]}),
            json!({"choices": [{"delta": {"reasoning": "So", "reasoning_details": [{"type": "reasoning.text", "text": "So"}]}}]}),
            json!({"choices": [{"delta": {"content": "€17.99"}, "finish_reason": "stop"}]}),
        ]);
        let (events, completion) = read(&thinking);
        assert_eq!(
            events[..2],
            [Event::Reasoning("Netflix is monthly.".into()), Event::Reasoning("So".into())]
        );
        let completion = completion.unwrap();
        assert_eq!(
            completion.message.parts[0],
            Part::Reasoning(
                json!({"reasoning_details": [{"type": "reasoning.text", "text": "So"}]})
            )
        );
        // Replayed on the assistant message, as OpenRouter wants it.
        let replay = wire_messages(&completion.message, IdForm::AsWritten);
        assert_eq!(replay[0]["reasoning_details"][0]["text"], "So");
        assert_eq!(replay[0]["content"], "€17.99");
    }
}
