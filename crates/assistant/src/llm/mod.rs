//! The provider clients: a provider-neutral message model ([`Message`], [`Part`]), what a call
//! streams ([`Event`]) and returns ([`Completion`]), and [`Client`], which speaks one protocol
//! to one configured endpoint.
//!
//! Each protocol is a request builder and a decoder of its stream (`openai.rs`,
//! `anthropic.rs`); the HTTP around them (retry, timeouts, errors) is `transport.rs`, the SSE
//! framing `sse.rs`, and what a call cost, from its usage, `cost.rs`. Nothing here knows the catalog: the loop hands in tool definitions and gets
//! tool calls back.

mod anthropic;
pub mod cost;
mod openai;
mod sse;
mod transport;

#[cfg(test)]
mod tests;

use std::time::Duration;

use ops::BoxFuture;
use serde_json::Value;

pub use transport::Client;

/// Which wire protocol an endpoint speaks, and an API key (never printed, logged or sent
/// anywhere but its provider): the catalog's types, which the settings use too.
pub use ops::assistant::{Protocol, Secret as ApiKey};

/// One endpoint, as an owner configures it.
#[derive(Clone, Debug)]
pub struct Endpoint {
    pub protocol: Protocol,
    /// e.g. `https://api.openai.com/v1`, `http://127.0.0.1:11434` (a bare address gets `/v1`),
    /// `https://api.anthropic.com`.
    pub base_url: String,
    /// Local servers need none: then no `Authorization` header is sent.
    pub api_key: Option<ApiKey>,
    pub timeouts: Timeouts,
}

/// How long a call may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// From sending the request to the last byte of the answer.
    pub call: Duration,
    /// Between two pieces of a streamed answer.
    pub idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self { call: Duration::from_secs(60), idle: Duration::from_secs(30) }
    }
}

/// Who says a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

/// A piece of a message.
#[derive(Clone, Debug, PartialEq)]
pub enum Part {
    Text(String),
    /// A picture (`image/png`, `image/jpeg`, `image/webp`), base64.
    Image {
        media_type: String,
        base64: String,
    },
    /// A PDF, base64, with the name it had.
    Pdf {
        name: String,
        base64: String,
    },
    /// The model asks for a tool; `arguments` is the JSON object it wrote.
    ToolCall {
        id: String,
        name: String,
        arguments: Value,
    },
    /// What a tool answered, to the call with `id`.
    ToolResult {
        id: String,
        content: String,
        is_error: bool,
    },
    /// A provider's reasoning block, kept verbatim: replayed only to the provider and model
    /// that wrote it, and only within one question (signed thinking is checked by Anthropic).
    Reasoning(Value),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub role: Role,
    pub parts: Vec<Part>,
}

impl Message {
    pub fn user_text(text: impl Into<String>) -> Self {
        Self { role: Role::User, parts: vec![Part::Text(text.into())] }
    }

    /// The text parts, joined.
    pub fn text(&self) -> String {
        self.parts
            .iter()
            .filter_map(|part| match part {
                Part::Text(text) => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The tool calls it holds, in order: `(id, name, arguments)`.
    pub fn tool_calls(&self) -> impl Iterator<Item = (&str, &str, &Value)> {
        self.parts.iter().filter_map(|part| match part {
            Part::ToolCall { id, name, arguments } => Some((id.as_str(), name.as_str(), arguments)),
            _ => None,
        })
    }
}

/// A tool the model may call: the catalog's name, description and JSON Schema.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// One model call.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub model: String,
    /// The static rules; never data.
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolDef>,
    /// Answer and reasoning together.
    pub max_tokens: u32,
    /// `None` leaves the provider's default.
    pub temperature: Option<f32>,
}

/// What a call streams while the model writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    Text(String),
    Reasoning(String),
    /// The model started writing a call of this tool.
    ToolCall(String),
}

/// Why the model stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// It answered.
    EndTurn,
    /// It asked for tools; the message holds the calls.
    ToolUse,
    /// The token limit cut it off.
    MaxTokens,
    /// It declined (Anthropic's `refusal`, OpenAI's `refusal` text or `content_filter`), with the
    /// provider's explanation when it gave one. The refused turn must not be sent back.
    Refusal(Option<String>),
    /// Anything else the provider said, kept as it said it.
    Other(String),
}

/// Tokens of one call, normalised: `input` never includes the cached tokens, which are counted
/// apart (Anthropic excludes them, OpenAI includes them; both are read to the same meaning).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Usage {
    pub input: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    /// Answer and reasoning.
    pub output: u64,
    /// What the provider says the call cost, when it says (OpenRouter, in its credits).
    pub reported_cost: Option<f64>,
    /// The provider's usage object as sent, so prices can be computed again.
    pub raw: Value,
}

/// A finished call.
#[derive(Clone, Debug, PartialEq)]
pub struct Completion {
    /// The assistant's message: text, tool calls and reasoning, in the order written.
    pub message: Message,
    pub stop: StopReason,
    /// `None` when the provider sent no usage (an OpenAI-compatible server may not).
    pub usage: Option<Usage>,
}

/// Why a call failed.
#[derive(Clone, Debug, thiserror::Error, PartialEq)]
pub enum LlmError {
    /// The provider could not be reached, or the connection broke.
    #[error("the provider could not be reached: {0}")]
    Unreachable(String),
    /// The provider answered with an error status, and this message.
    #[error("the provider answered {status}: {message}")]
    Status { status: u16, message: String },
    /// Too many requests, after the one retry; try again after this many seconds if known.
    #[error("the provider is rate limiting Exhale{}", .retry_after_secs.map(|s| format!("; try again in {s} s")).unwrap_or_default())]
    RateLimited { retry_after_secs: Option<u64> },
    #[error("the provider took longer than {} s", .0.as_secs_f32())]
    Timeout(Duration),
    /// The stream ended before its last frame: a cut-off answer is never a complete one.
    #[error("the provider's answer was cut off")]
    Truncated,
    /// The provider sent an error in the middle of its answer.
    #[error("the provider failed while answering: {0}")]
    Failed(String),
    /// The answer was not what the protocol says.
    #[error("the provider's answer could not be read: {0}")]
    Protocol(String),
}

/// A model provider, as the loop sees it: the [`Client`], or a scripted one in tests.
pub trait Provider: Send + Sync {
    /// Runs one call, handing each piece to `on_event` as it arrives.
    fn complete<'a>(
        &'a self,
        request: &'a Request,
        on_event: &'a mut (dyn FnMut(Event) + Send),
    ) -> BoxFuture<'a, Result<Completion, LlmError>>;
}

/// What a protocol's decoder made of one SSE event.
#[derive(Debug, PartialEq, Eq)]
enum Flow {
    More,
    /// The protocol's last frame: nothing follows.
    Done,
}

/// A protocol's reading of one streamed answer.
trait Decoder: Send {
    fn event(
        &mut self,
        event: &sse::SseEvent,
        on_event: &mut (dyn FnMut(Event) + Send),
    ) -> Result<Flow, LlmError>;

    /// The call's result, once the last frame has come.
    fn finish(self: Box<Self>) -> Result<Completion, LlmError>;
}
