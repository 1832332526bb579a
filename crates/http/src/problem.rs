//! `OpError` as an HTTP response: RFC 9457 problem JSON with Exhale's stable `code`.
//!
//! The body always has `type` (`about:blank`), `title`, `status`, `detail` (the error's
//! message, rendered) and `code`, plus the fields a client needs to act: `pointer` for
//! `invalid_input`, `needed_scope` for `forbidden`, `confirmation_id`, `expires_at` and
//! `preview` for `confirmation_required`, `retry_after` for `rate_limited` and `unavailable`.

use axum::{
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use ops::{OpError, Text};
use serde_json::{Map, Value, json};

/// The challenge sent with every 401.
pub const BEARER_CHALLENGE: &str = "Bearer realm=\"exhale\"";

/// The media type of every error body.
pub const PROBLEM_CONTENT_TYPE: &str = "application/problem+json";

/// The HTTP status an error maps to.
fn status_of(err: &OpError) -> StatusCode {
    match err {
        OpError::InvalidInput { .. } => StatusCode::BAD_REQUEST,
        OpError::NotFound { .. } => StatusCode::NOT_FOUND,
        OpError::Conflict { .. } => StatusCode::CONFLICT,
        OpError::Forbidden { .. } => StatusCode::FORBIDDEN,
        OpError::ConfirmationRequired { .. } => StatusCode::PRECONDITION_REQUIRED,
        OpError::Unauthenticated { .. } => StatusCode::UNAUTHORIZED,
        OpError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
        OpError::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
        OpError::Internal => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// A short title per code, the same for every occurrence (RFC 9457 `title`).
pub fn title_of(err: &OpError) -> &'static str {
    match err {
        OpError::InvalidInput { .. } => "Invalid input",
        OpError::NotFound { .. } => "Not found",
        OpError::Conflict { .. } => "Conflict",
        OpError::Forbidden { .. } => "Forbidden",
        OpError::ConfirmationRequired { .. } => "Confirmation required",
        OpError::Unauthenticated { .. } => "Unauthenticated",
        OpError::RateLimited { .. } => "Rate limited",
        OpError::Unavailable { .. } => "Unavailable",
        OpError::Internal => "Internal error",
    }
}

/// The problem JSON object for `err`, answered with `status`.
pub fn problem_body(err: &OpError, status: StatusCode) -> Value {
    let mut body = Map::new();
    body.insert("type".into(), json!("about:blank"));
    body.insert("title".into(), json!(title_of(err)));
    body.insert("status".into(), json!(status.as_u16()));
    body.insert("detail".into(), json!(err.text().render()));
    body.insert("code".into(), json!(err.code()));
    match err {
        OpError::InvalidInput { pointer, .. } => {
            body.insert("pointer".into(), json!(pointer));
        }
        OpError::Forbidden { needed: Some(scope), .. } => {
            body.insert("needed_scope".into(), json!(scope.as_str()));
        }
        OpError::ConfirmationRequired { confirmation_id, expires_at, preview, .. } => {
            body.insert("confirmation_id".into(), json!(confirmation_id));
            body.insert("expires_at".into(), json!(expires_at));
            body.insert("preview".into(), (**preview).clone());
        }
        OpError::RateLimited { retry_after_secs, .. }
        | OpError::Unavailable { retry_after_secs, .. } => {
            body.insert("retry_after".into(), json!(retry_after_secs));
        }
        OpError::Forbidden { needed: None, .. }
        | OpError::NotFound { .. }
        | OpError::Conflict { .. }
        | OpError::Unauthenticated { .. }
        | OpError::Internal => {}
    }
    Value::Object(body)
}

/// The response for `err` with its usual status.
pub fn problem_response(err: &OpError) -> Response {
    problem_response_with_status(err, status_of(err))
}

/// The response for `err` with another status, for the few cases where HTTP has a more
/// precise one than the code (405 for a read-only route called with the wrong method).
pub fn problem_response_with_status(err: &OpError, status: StatusCode) -> Response {
    let body = problem_body(err, status);
    // Serialising a `Value` cannot fail; the fallback only keeps this function total.
    let bytes = serde_json::to_vec(&body).unwrap_or_default();
    let mut response = (status, bytes).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_CONTENT_TYPE));
    match err {
        OpError::Unauthenticated { .. } => {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(BEARER_CHALLENGE));
        }
        OpError::RateLimited { retry_after_secs, .. }
        | OpError::Unavailable { retry_after_secs, .. } => {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(*retry_after_secs));
        }
        _ => {}
    }
    response
}

/// The `invalid_input` error for a request body that is not JSON.
pub fn invalid_json_body(err: &serde_json::Error) -> OpError {
    OpError::invalid(
        "",
        Text::new(
            "The request body is not valid JSON: {error}. Send a JSON object with the op's input fields, or an empty body when it has none.",
        )
        .with("error", err),
    )
}

#[cfg(test)]
mod tests;
