//! Asking the person in the client to confirm a change (DESIGN section 4), when the client can
//! show a form: the 2025 `elicitation/create` request over the session, or the 2026
//! `input_required` result with a sealed `requestState`. Clients that cannot elicit get the
//! preview and `confirmation_id` for `confirm_change` instead (in `results::failure`).
//!
//! Either way the person answers a question Exhale wrote from the dry run, and the change
//! applied is the stored confirmation, which the catalog re-validates and applies once.

use ops::Text;
use std::time::Duration;

use ops::Caller;
use rmcp::{
    ErrorData as McpError, RoleServer,
    model::{
        CallToolResponse, ElicitRequestParams, ElicitationAction, ElicitationSchema, InputRequest,
        InputRequests, InputRequiredResult, InputResponses, ProtocolVersion, Request,
        RequestStateCodec, SealOptions,
    },
    service::RequestContext,
};
use serde_json::Value;

/// The key of the one input Exhale asks for.
const CONFIRM: &str = "confirm";
/// The same lifetime as the stored confirmation.
const STATE_TTL: Duration = Duration::from_secs(ops::limits::CONFIRMATION_MINS.unsigned_abs() * 60);

/// Seals `requestState` with a key that lives as long as the process: after a restart a
/// pending question is asked again, which is harmless.
pub(crate) fn codec() -> Result<RequestStateCodec, std::io::Error> {
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).map_err(|err| std::io::Error::other(err.to_string()))?;
    RequestStateCodec::try_new(key.to_vec()).map_err(std::io::Error::other)
}

/// Binds a sealed state to the caller that asked.
fn principal(caller: &Caller) -> String {
    let token = caller.token_id().map_or_else(|| "-".to_owned(), |id| id.to_string());
    format!("{}:{}:{token}", caller.household_id, caller.member_id)
}

fn question(message: &str) -> Result<ElicitRequestParams, McpError> {
    let schema = ElicitationSchema::builder()
        .required_bool(CONFIRM)
        .build()
        .map_err(|err| McpError::internal_error(format!("elicitation schema: {err}"), None))?;
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: message.to_owned(),
        requested_schema: schema,
    })
}

fn accepted(action: &ElicitationAction, content: Option<&Value>) -> bool {
    matches!(action, ElicitationAction::Accept)
        && content.and_then(|c| c.get(CONFIRM)).and_then(Value::as_bool) == Some(true)
}

/// What the person said.
pub(crate) enum Answer {
    Yes(String),
    No,
}

/// How this client can be asked, if at all.
pub(crate) enum Asking {
    /// 2026-07-28: return `input_required`; the client retries with the answer.
    InputRequired(CallToolResponse),
    /// 2025-11-25: the answer came back over the session.
    Answered(Answer),
    /// The client cannot show a form: fall back to `confirm_change`.
    CannotAsk,
}

/// Asks the person to confirm the stored change `confirmation_id`, described by `message`.
pub(crate) async fn ask(
    codec: &RequestStateCodec,
    cx: &RequestContext<RoleServer>,
    caller: &Caller,
    confirmation_id: &str,
    message: &str,
) -> Result<Asking, McpError> {
    let can_elicit =
        cx.client_capabilities().is_some_and(|capabilities| capabilities.elicitation.is_some());
    if !can_elicit {
        return Ok(Asking::CannotAsk);
    }
    let modern =
        cx.protocol_version().is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
    if modern {
        let principal = principal(caller);
        let state = codec
            .seal_json_with(
                &confirmation_id,
                &SealOptions::new().associated_data(principal.as_bytes()).ttl(STATE_TTL),
            )
            .map_err(|err| {
                McpError::internal_error(format!("sealing requestState: {err}"), None)
            })?;
        let requests: InputRequests =
            [(CONFIRM.to_owned(), InputRequest::Elicitation(Request::new(question(message)?)))]
                .into();
        return Ok(Asking::InputRequired(
            InputRequiredResult::new(Some(requests), Some(state)).into(),
        ));
    }
    let answer = match cx.peer.create_elicitation(question(message)?).await {
        Ok(result) if accepted(&result.action, result.content.as_ref()) => {
            Answer::Yes(confirmation_id.to_owned())
        }
        Ok(_) => Answer::No,
        // A client that declared elicitation but failed to answer: let the model fall back.
        Err(_) => return Ok(Asking::CannotAsk),
    };
    Ok(Asking::Answered(answer))
}

/// Reads the person's answer from a 2026 retry: the sealed state names the confirmation.
pub(crate) fn answer_from_retry(
    codec: &RequestStateCodec,
    caller: &Caller,
    state: &str,
    responses: Option<&InputResponses>,
) -> Result<Answer, McpError> {
    let principal = principal(caller);
    let confirmation_id: String =
        codec.open_json_with(state, principal.as_bytes()).map_err(|_| {
            McpError::invalid_params(
                Text::new("requestState failed verification; call the tool again").render(),
                None,
            )
        })?;
    let response = responses.and_then(|r| r.get(CONFIRM));
    let action = response.and_then(|r| r.get("action")).and_then(Value::as_str);
    let yes = action == Some("accept")
        && response
            .and_then(|r| r.get("content"))
            .and_then(|c| c.get(CONFIRM))
            .and_then(Value::as_bool)
            == Some(true);
    Ok(if yes { Answer::Yes(confirmation_id) } else { Answer::No })
}
