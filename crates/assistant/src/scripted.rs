//! A provider that replays a script and records every request it was sent: the deterministic
//! model of the assistant's tests. Each step is what one call answers; a step can stream its
//! text in pieces, call tools, reason, refuse or fail.

use std::{collections::VecDeque, sync::Mutex};

use ops::BoxFuture;
use serde_json::Value;

use crate::llm::{
    Completion, Event, LlmError, Message, Part, Provider, Request, Role, StopReason, Usage,
};

/// One call's answer.
#[derive(Clone, Debug)]
pub enum Step {
    /// Text, streamed in these pieces, then the end of the turn.
    Say(Vec<String>),
    /// Some text, then these tool calls `(name, arguments)`.
    Call { text: String, calls: Vec<(String, Value)> },
    /// A reasoning block (kept verbatim), then tool calls.
    ReasonThenCall { reasoning: Value, calls: Vec<(String, Value)> },
    /// The provider's refusal, with its explanation.
    Refuse(Option<String>),
    /// The call fails.
    Fail(LlmError),
}

impl Step {
    pub fn say(text: &str) -> Self {
        Self::Say(vec![text.to_owned()])
    }

    pub fn call(name: &str, arguments: Value) -> Self {
        Self::Call { text: String::new(), calls: vec![(name.to_owned(), arguments)] }
    }
}

/// The scripted provider. Each call takes the next step; an empty script says so and ends.
#[derive(Debug, Default)]
pub struct Scripted {
    steps: Mutex<VecDeque<Step>>,
    seen: Mutex<Vec<Request>>,
    /// Tokens each call reports, input and output.
    pub usage: Option<(u64, u64)>,
}

impl Scripted {
    pub fn new(steps: impl IntoIterator<Item = Step>) -> Self {
        Self {
            steps: Mutex::new(steps.into_iter().collect()),
            seen: Mutex::default(),
            usage: Some((1000, 50)),
        }
    }

    /// Adds steps for the next question.
    pub fn then(&self, steps: impl IntoIterator<Item = Step>) {
        lock(&self.steps).extend(steps);
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<Request> {
        lock(&self.seen).clone()
    }

    /// Steps not yet used.
    pub fn left(&self) -> usize {
        lock(&self.steps).len()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Provider for Scripted {
    fn complete<'a>(
        &'a self,
        request: &'a Request,
        on_event: &'a mut (dyn FnMut(Event) + Send),
    ) -> BoxFuture<'a, Result<Completion, LlmError>> {
        Box::pin(async move {
            lock(&self.seen).push(request.clone());
            let step = lock(&self.steps).pop_front();
            let usage =
                self.usage.map(|(input, output)| Usage { input, output, ..Usage::default() });
            let round = lock(&self.seen).len();
            let tool_calls = |calls: Vec<(String, Value)>| {
                calls.into_iter().enumerate().map(move |(index, (name, arguments))| {
                    Part::ToolCall { id: format!("call_{round}_{index}"), name, arguments }
                })
            };
            let (parts, stop) = match step {
                None => (vec![Part::Text("(the script has ended)".into())], StopReason::EndTurn),
                Some(Step::Say(pieces)) => {
                    for piece in &pieces {
                        on_event(Event::Text(piece.clone()));
                    }
                    (vec![Part::Text(pieces.concat())], StopReason::EndTurn)
                }
                Some(Step::Call { text, calls }) => {
                    if !text.is_empty() {
                        on_event(Event::Text(text.clone()));
                    }
                    let mut parts = vec![Part::Text(text)];
                    parts.extend(tool_calls(calls));
                    (parts, StopReason::ToolUse)
                }
                Some(Step::ReasonThenCall { reasoning, calls }) => {
                    let mut parts = vec![Part::Reasoning(reasoning)];
                    parts.extend(tool_calls(calls));
                    (parts, StopReason::ToolUse)
                }
                Some(Step::Refuse(explanation)) => (Vec::new(), StopReason::Refusal(explanation)),
                Some(Step::Fail(err)) => return Err(err),
            };
            Ok(Completion { message: Message { role: Role::Assistant, parts }, stop, usage })
        })
    }
}
