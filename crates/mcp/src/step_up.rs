//! Step-up for connected apps: a `tools/call` that needs more scope than an OAuth grant holds
//! is answered `403` with an `insufficient_scope` challenge (RFC 6750 section 3.1, MCP's
//! authorization spec), so the client can send the person back to the consent page for more.
//!
//! Whether the scope falls short is the catalog's decision (`ops::policy::refusal`); this
//! module only reads the op a call runs (as `framing::check` read it: the tool's, or the one
//! `call_tool` names) and translates the refusal. Agents with an API token keep the
//! `forbidden` tool result, which tells the model what to ask the person for: their client has
//! no way to ask for more. Every other refusal (owner-only ops, ops agents cannot call) is
//! a tool result for every caller, since no consent could change it.

use std::sync::Arc;

use axum::{
    extract::{Request, State},
    http::{HeaderValue, Method, StatusCode, header},
    middleware::Next,
    response::Response,
};
use ops::{Caller, OpError, Text, oauth::PublicOrigin, policy};
use serde_json::json;

use crate::incoming::Incoming;

/// What the check needs: the origin whose metadata the challenge names.
pub(crate) struct StepUp {
    pub(crate) origin: PublicOrigin,
}

/// Answers a connected app's call beyond its scope with the challenge; hands everything else on
/// unchanged.
pub(crate) async fn check(
    State(step_up): State<Arc<StepUp>>,
    request: Request,
    next: Next,
) -> Response {
    let caller = request.extensions().get::<Caller>().filter(|caller| caller.is_connected_app());
    let Some(caller) = caller.cloned().filter(|_| request.method() == Method::POST) else {
        return next.run(request).await;
    };
    // `framing::check`, further out, has read the message.
    let incoming = request.extensions().get::<Incoming>();
    if let Some(refused) = incoming.and_then(|incoming| step_up.refusal(&caller, incoming)) {
        return refused;
    }
    next.run(request).await
}

impl StepUp {
    /// The 403 for a `tools/call` the caller's scope does not reach, or `None`.
    fn refusal(&self, caller: &Caller, incoming: &Incoming) -> Option<Response> {
        let meta = incoming.op?;
        let Some(OpError::Forbidden { needed: Some(needed), .. }) =
            policy::refusal(caller, meta.info)
        else {
            return None;
        };
        let description = Text::new(
            "{tool} needs more than this connection was allowed. To use it, reconnect the app and choose 'Read and make changes' on Exhale's consent page.",
        )
        .with("tool", meta.name())
        .render();
        let id = incoming
            .id()
            .and_then(|id| serde_json::from_str(id.get()).ok())
            .unwrap_or(serde_json::Value::Null);
        let mut response = crate::framing::error_response(
            StatusCode::FORBIDDEN,
            id,
            crate::framing::INVALID_REQUEST,
            json!({"code": "forbidden", "needed_scope": needed.as_str()}),
            &description,
        );
        let challenge = http::insufficient_scope_challenge(&self.origin, needed, &description);
        let headers = response.headers_mut();
        headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_str(&challenge).ok()?);
        headers.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static("WWW-Authenticate"),
        );
        Some(response)
    }
}
