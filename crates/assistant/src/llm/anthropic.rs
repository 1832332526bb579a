//! Anthropic's Messages API: the request body, and the reading of its stream into a
//! [`Completion`] (llm.md section 2).
//!
//! Blocks are kept by their `index` and in order. Thinking blocks (with their signature) and
//! redacted thinking are kept verbatim as [`Part::Reasoning`], so the assistant turn goes back
//! exactly as it came within one question; a tool call's input is the concatenation of its
//! `input_json_delta` fragments, read when the stream ends. `message_delta`'s usage is
//! cumulative: it replaces, never adds. An `error` event after the answer started fails the call.

use serde_json::{Map, Value, json};

use super::{
    Completion, Decoder, Event, Flow, LlmError, Message, Part, Request, Role, StopReason, Usage,
    sse::SseEvent,
};

/// The API version every request names.
pub(super) const VERSION: &str = "2023-06-01";

/// The messages URL under `base` (`https://api.anthropic.com`, with or without `/v1`).
pub(super) fn url(base: &str) -> String {
    let base = base.trim_end_matches('/');
    if base.ends_with("/v1") { format!("{base}/messages") } else { format!("{base}/v1/messages") }
}

pub(super) fn body(request: &Request) -> Value {
    let messages: Vec<Value> = request.messages.iter().map(wire_message).collect();
    let mut body = json!({
        "model": request.model,
        "max_tokens": request.max_tokens,
        "stream": true,
        "system": request.system,
        "messages": messages,
    });
    if let Some(temperature) = request.temperature {
        body["temperature"] = json!(temperature);
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({"name": tool.name, "description": tool.description, "input_schema": tool.parameters})
            })
            .collect();
        body["tools"] = json!(tools);
    }
    body
}

/// One neutral message as a Messages API message: in a user turn the tool results come first,
/// as the API requires; an assistant turn keeps its blocks in the order they were written.
fn wire_message(message: &Message) -> Value {
    let mut results = Vec::new();
    let mut rest = Vec::new();
    for part in &message.parts {
        match part {
            Part::ToolResult { id, content, is_error } => results.push(json!({
                "type": "tool_result", "tool_use_id": id, "content": content, "is_error": is_error})),
            Part::Text(text) if !text.is_empty() => rest.push(json!({"type": "text", "text": text})),
            Part::Text(_) => {}
            Part::Image { media_type, base64 } => rest.push(json!({"type": "image",
                "source": {"type": "base64", "media_type": media_type, "data": base64}})),
            Part::Pdf { name, base64 } => rest.push(json!({"type": "document", "title": name,
                "source": {"type": "base64", "media_type": "application/pdf", "data": base64}})),
            Part::ToolCall { id, name, arguments } => {
                let input = if arguments.is_object() { arguments.clone() } else { json!({}) };
                rest.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
            }
            Part::Reasoning(block) => rest.push(block.clone()),
        }
    }
    results.extend(rest);
    let role = match message.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    json!({"role": role, "content": results})
}

/// A content block being received.
enum Block {
    Text(String),
    Thinking {
        thinking: String,
        signature: String,
    },
    /// Redacted thinking arrives whole; it goes back as it came.
    Verbatim(Value),
    ToolUse {
        id: String,
        name: String,
        input: String,
    },
}

/// The reading of one Messages stream.
#[derive(Default)]
pub(super) struct AnthropicDecoder {
    blocks: Vec<(u64, Block)>,
    stop_reason: Option<String>,
    stop_details: Value,
    usage: Map<String, Value>,
}

impl AnthropicDecoder {
    fn block(&mut self, index: u64) -> Option<&mut Block> {
        self.blocks.iter_mut().find(|(i, _)| *i == index).map(|(_, block)| block)
    }
}

impl Decoder for AnthropicDecoder {
    fn event(
        &mut self,
        event: &SseEvent,
        on_event: &mut (dyn FnMut(Event) + Send),
    ) -> Result<Flow, LlmError> {
        let data: Value = serde_json::from_str(&event.data)
            .map_err(|err| LlmError::Protocol(format!("an event is not JSON: {err}")))?;
        let index = data["index"].as_u64().unwrap_or(0);
        match data["type"].as_str().unwrap_or(&event.name) {
            "message_start" => {
                if let Some(usage) = data["message"]["usage"].as_object() {
                    self.usage.extend(usage.clone());
                }
            }
            "content_block_start" => {
                let start = &data["content_block"];
                let block = match start["type"].as_str() {
                    Some("text") => Block::Text(start["text"].as_str().unwrap_or("").to_owned()),
                    Some("thinking") => Block::Thinking {
                        thinking: start["thinking"].as_str().unwrap_or("").to_owned(),
                        signature: start["signature"].as_str().unwrap_or("").to_owned(),
                    },
                    Some("tool_use") => {
                        let name = start["name"].as_str().unwrap_or("").to_owned();
                        on_event(Event::ToolCall(name.clone()));
                        Block::ToolUse {
                            id: start["id"].as_str().unwrap_or("").to_owned(),
                            name,
                            input: String::new(),
                        }
                    }
                    // redacted_thinking, and any block this client does not know: kept as sent.
                    _ => Block::Verbatim(start.clone()),
                };
                self.blocks.push((index, block));
            }
            "content_block_delta" => {
                let delta = &data["delta"];
                let fragment = |field: &str| delta[field].as_str().unwrap_or("").to_owned();
                match (delta["type"].as_str(), self.block(index)) {
                    (Some("text_delta"), Some(Block::Text(text))) => {
                        let piece = fragment("text");
                        text.push_str(&piece);
                        on_event(Event::Text(piece));
                    }
                    (Some("thinking_delta"), Some(Block::Thinking { thinking, .. })) => {
                        let piece = fragment("thinking");
                        thinking.push_str(&piece);
                        on_event(Event::Reasoning(piece));
                    }
                    (Some("signature_delta"), Some(Block::Thinking { signature, .. })) => {
                        signature.push_str(&fragment("signature"));
                    }
                    (Some("input_json_delta"), Some(Block::ToolUse { input, .. })) => {
                        input.push_str(&fragment("partial_json"));
                    }
                    // citations_delta, and deltas of blocks kept verbatim.
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(reason) = data["delta"]["stop_reason"].as_str() {
                    self.stop_reason = Some(reason.to_owned());
                }
                self.stop_details = data["delta"]["stop_details"].clone();
                // Cumulative: each count replaces the one before.
                if let Some(usage) = data["usage"].as_object() {
                    self.usage.extend(usage.clone());
                }
            }
            "message_stop" => return Ok(Flow::Done),
            "error" => {
                let message = data["error"]["message"].as_str().unwrap_or("unknown error");
                return Err(LlmError::Failed(message.to_owned()));
            }
            // ping, content_block_stop, and events this client does not know.
            _ => {}
        }
        Ok(Flow::More)
    }

    fn finish(self: Box<Self>) -> Result<Completion, LlmError> {
        let mut blocks = self.blocks;
        blocks.sort_by_key(|(index, _)| *index);
        let mut parts = Vec::new();
        for (_, block) in blocks {
            match block {
                Block::Text(text) if !text.is_empty() => parts.push(Part::Text(text)),
                Block::Text(_) => {}
                Block::Thinking { thinking, signature } => parts.push(Part::Reasoning(
                    json!({"type": "thinking", "thinking": thinking, "signature": signature}),
                )),
                Block::Verbatim(block) => parts.push(Part::Reasoning(block)),
                Block::ToolUse { id, name, input } => {
                    let arguments = if input.trim().is_empty() {
                        json!({})
                    } else {
                        serde_json::from_str(&input).unwrap_or(Value::String(input))
                    };
                    parts.push(Part::ToolCall { id, name, arguments });
                }
            }
        }
        let stop = match self.stop_reason.as_deref() {
            Some("end_turn") | Some("stop_sequence") | None => StopReason::EndTurn,
            Some("tool_use") => StopReason::ToolUse,
            Some("max_tokens") | Some("model_context_window_exceeded") => StopReason::MaxTokens,
            Some("refusal") => {
                StopReason::Refusal(self.stop_details["explanation"].as_str().map(str::to_owned))
            }
            Some(other) => StopReason::Other(other.to_owned()),
        };
        let count = |field: &str| self.usage.get(field).and_then(Value::as_u64).unwrap_or(0);
        let usage = (!self.usage.is_empty()).then(|| Usage {
            input: count("input_tokens"),
            cache_read: count("cache_read_input_tokens"),
            cache_write: count("cache_creation_input_tokens"),
            output: count("output_tokens"),
            reported_cost: None,
            raw: Value::Object(self.usage.clone()),
        });
        Ok(Completion { message: Message { role: Role::Assistant, parts }, stop, usage })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{ToolDef, sse::SseReader};

    fn read(stream: &str) -> (Vec<Event>, Result<Completion, LlmError>) {
        let mut decoder = Box::new(AnthropicDecoder::default());
        let mut events = Vec::new();
        let mut on_event = |event| events.push(event);
        for event in SseReader::default().feed(stream.as_bytes()).unwrap() {
            match decoder.event(&event, &mut on_event) {
                Ok(Flow::Done) => return (events, decoder.finish()),
                Ok(Flow::More) => {}
                Err(err) => return (events, Err(err)),
            }
        }
        (events, Err(LlmError::Truncated))
    }

    fn stream(events: &[Value]) -> String {
        events
            .iter()
            .map(|event| format!("event: {}\ndata: {event}\n\n", event["type"].as_str().unwrap()))
            .collect()
    }

    /// A thinking turn that calls a tool, with redacted thinking between, as the API streams it.
    fn tool_turn() -> String {
        stream(&[
            json!({"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 900, "output_tokens": 1, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 20}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Find Netflix."}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig=="}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "redacted_thinking", "data": "opaque"}}),
            json!({"type": "content_block_stop", "index": 1}),
            json!({"type": "ping"}),
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "Looking."}}),
            json!({"type": "content_block_start", "index": 3, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "find_subscriptions", "input": {}}}),
            json!({"type": "content_block_delta", "index": 3, "delta": {"type": "input_json_delta", "partial_json": "{\"query\": \"Net"}}),
            json!({"type": "content_block_delta", "index": 3, "delta": {"type": "input_json_delta", "partial_json": "flix \\u00e9\"}"}}),
            json!({"type": "content_block_start", "index": 4, "content_block": {"type": "tool_use", "id": "toolu_2", "name": "list_categories", "input": {}}}),
            json!({"type": "content_block_delta", "index": 4, "delta": {"type": "input_json_delta", "partial_json": ""}}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 40}}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 57}}),
            json!({"type": "message_stop"}),
        ])
    }

    #[test]
    fn a_thinking_tool_turn_is_kept_verbatim_and_goes_back_as_it_came() {
        let (events, completion) = read(&tool_turn());
        assert_eq!(
            events,
            vec![
                Event::Reasoning("Find Netflix.".into()),
                Event::Text("Looking.".into()),
                Event::ToolCall("find_subscriptions".into()),
                Event::ToolCall("list_categories".into()),
            ]
        );
        let completion = completion.unwrap();
        assert_eq!(completion.stop, StopReason::ToolUse);
        assert_eq!(
            completion.message.parts,
            vec![
                Part::Reasoning(
                    json!({"type": "thinking", "thinking": "Find Netflix.", "signature": "sig=="})
                ),
                Part::Reasoning(json!({"type": "redacted_thinking", "data": "opaque"})),
                Part::Text("Looking.".into()),
                Part::ToolCall {
                    id: "toolu_1".into(),
                    name: "find_subscriptions".into(),
                    arguments: json!({"query": "Netflix é"})
                },
                Part::ToolCall {
                    id: "toolu_2".into(),
                    name: "list_categories".into(),
                    arguments: json!({})
                },
            ]
        );
        let usage = completion.usage.unwrap();
        assert_eq!(
            (usage.input, usage.cache_read, usage.cache_write, usage.output),
            (900, 100, 20, 57),
            "usage replaces"
        );

        // The next call sends the turn back block for block, then the results first.
        let request = Request {
            model: "claude".into(),
            system: "rules".into(),
            messages: vec![
                Message::user_text("What do we pay for Netflix?"),
                completion.message,
                Message {
                    role: Role::User,
                    parts: vec![
                        Part::Text("(results)".into()),
                        Part::ToolResult {
                            id: "toolu_1".into(),
                            content: "[]".into(),
                            is_error: false,
                        },
                        Part::ToolResult {
                            id: "toolu_2".into(),
                            content: "bad".into(),
                            is_error: true,
                        },
                    ],
                },
            ],
            tools: vec![ToolDef {
                name: "find_subscriptions".into(),
                description: "d".into(),
                parameters: json!({"type": "object"}),
            }],
            max_tokens: 8192,
            temperature: None,
        };
        let body = body(&request);
        let assistant = &body["messages"][1]["content"];
        assert_eq!(
            assistant[0],
            json!({"type": "thinking", "thinking": "Find Netflix.", "signature": "sig=="})
        );
        assert_eq!(assistant[1], json!({"type": "redacted_thinking", "data": "opaque"}));
        assert_eq!(assistant[3]["input"], json!({"query": "Netflix é"}));
        let results = &body["messages"][2]["content"];
        assert_eq!(results[0]["type"], "tool_result");
        assert_eq!(results[1]["is_error"], true);
        assert_eq!(results[2]["type"], "text", "tool results come first");
        assert_eq!(body["tools"][0]["input_schema"], json!({"type": "object"}));
        assert_eq!(body["system"], "rules");
    }

    #[test]
    fn a_refusal_an_error_and_a_cut_off_stream_are_not_answers() {
        let refused = stream(&[
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 5}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "I"}}),
            json!({"type": "message_delta", "delta": {"stop_reason": "refusal", "stop_details": {"type": "refusal", "category": null, "explanation": "Not something I can help with."}}, "usage": {"output_tokens": 3}}),
            json!({"type": "message_stop"}),
        ]);
        assert_eq!(
            read(&refused).1.unwrap().stop,
            StopReason::Refusal(Some("Not something I can help with.".into()))
        );
        let overloaded = stream(&[
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 5}}}),
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ]);
        assert_eq!(read(&overloaded).1, Err(LlmError::Failed("Overloaded".into())));
        let whole = tool_turn();
        let cut = &whole[..whole.find("event: message_stop").unwrap()];
        assert_eq!(read(cut).1, Err(LlmError::Truncated));
    }

    #[test]
    fn the_url_takes_the_base_with_or_without_v1() {
        assert_eq!(url("https://api.anthropic.com"), "https://api.anthropic.com/v1/messages");
        assert_eq!(url("https://api.anthropic.com/v1/"), "https://api.anthropic.com/v1/messages");
    }
}
