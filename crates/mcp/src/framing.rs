//! Every refusal on `/mcp` is a JSON-RPC error, with Exhale's stable code in `error.data.code`.
//!
//! rmcp answers a body it cannot read (not JSON, nested too deep, a batch) with `415` and a
//! line of plain text, and its other refusals (unknown session, wrong `Accept`) the same way.
//! This middleware reads a POST's body, within the size limit, reads the message once for the
//! layers inside ([`Incoming`]: the op a call runs, and the whole message when the hot path
//! takes it), and hands rmcp the bytes. Only when rmcp refuses a JSON body does it look at
//! why, and answer as JSON-RPC does: `-32700` for a body that is not JSON, `-32600` for one
//! that is not a single request object (batches were removed from MCP in 2025-06-18). Any plain-text
//! or problem-JSON refusal from further in is rewritten the same way, keeping its HTTP status
//! and headers. Tool results, which hold an op's own failures, are untouched.

use axum::{
    body::{Body, Bytes},
    extract::{Request, State},
    http::{HeaderValue, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};
use http_body_util::BodyExt;
use ops::Text;
use serde_json::{Value, json};

use crate::incoming::Incoming;

/// JSON-RPC's code for a body that is not JSON.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's code for JSON that is not a valid request.
pub(crate) const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC's code for a failure inside the server.
const INTERNAL_ERROR: i64 = -32603;

/// The largest refusal body read back to rewrite; rmcp's are one line.
const MAX_REFUSAL_BYTES: usize = 16 * 1024;

/// A JSON-RPC error response without an id (the request's could not be read), answered with
/// `status`.
fn refusal(status: StatusCode, rpc_code: i64, data: Value, message: &str) -> Response {
    error_response(status, Value::Null, rpc_code, data, message)
}

/// A JSON-RPC error response to the request `id`, answered with `status`.
pub(crate) fn error_response(
    status: StatusCode,
    id: Value,
    rpc_code: i64,
    data: Value,
    message: &str,
) -> Response {
    let body = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": rpc_code, "message": message, "data": data},
    });
    (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

/// Reads a POST's body within the limit and, when rmcp cannot read it as JSON-RPC, says why.
pub(crate) async fn check(
    State(max_request_bytes): State<usize>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != axum::http::Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let is_json = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/json"));
    let too_large = || {
        let message = Text::new(
            "The request is larger than this server takes ({max} bytes, its max_request_bytes; a call of an op that takes a file, up to {largest}), or was cut off. Send a smaller message.",
        )
        .with("max", max_request_bytes)
        .with("largest", ops::largest_request(max_request_bytes));
        refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            INVALID_REQUEST,
            json!({"code": "invalid_input"}),
            &message.render(),
        )
    };
    // Read up to the largest op's limit; past the server's own, only a few messages at once,
    // and only a call of an op that takes that much may pass.
    let largest = ops::largest_request(max_request_bytes);
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok()?.parse::<usize>().ok());
    if declared.is_some_and(|length| length > largest) {
        return too_large();
    }
    let mut body = body;
    let mut collected: Vec<u8> = Vec::with_capacity(declared.unwrap_or(0).min(max_request_bytes));
    let mut large_read = None;
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else { return too_large() };
        let Ok(data) = frame.into_data() else { continue };
        collected.extend_from_slice(&data);
        if collected.len() > largest {
            return too_large();
        }
        if collected.len() > max_request_bytes && large_read.is_none() {
            match http::large_request() {
                Some(permit) => large_read = Some(permit),
                None => return busy(),
            }
        }
    }
    let bytes = Bytes::from(collected);
    let incoming = Incoming::read(&bytes);
    if bytes.len() > max_request_bytes
        && incoming
            .as_ref()
            .and_then(|incoming| incoming.op)
            .is_none_or(|meta| bytes.len() > meta.info.request_limit(max_request_bytes))
    {
        return too_large();
    }
    // The bytes are shared, not copied: kept only to explain a refusal.
    let mut request = Request::from_parts(parts, Body::from(bytes.clone()));
    if let Some(incoming) = incoming {
        request.extensions_mut().insert(incoming);
    }
    let response = next.run(request).await;
    drop(large_read);
    if is_json
        && response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE
        && let Some(refused) = framing_error(&bytes)
    {
        return refused;
    }
    response
}

/// The answer while `http::MAX_LARGE_REQUESTS` are being read.
fn busy() -> Response {
    let mut response = refusal(
        StatusCode::SERVICE_UNAVAILABLE,
        INVALID_REQUEST,
        json!({"code": "rate_limited"}),
        &Text::new("Other large messages are being read; send this one again in a few seconds.")
            .render(),
    );
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    response
}

/// The deepest nesting rmcp's parser (serde_json's) accepts.
const MAX_DEPTH: usize = 128;

/// How deeply arrays and objects nest in `bytes`, outside strings.
fn nesting_depth(bytes: &[u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &byte in bytes {
        match (in_string, escaped, byte) {
            (true, true, _) => escaped = false,
            (true, false, b'\\') => escaped = true,
            (true, false, b'"') | (false, _, b'"') => in_string = !in_string,
            (false, _, b'[' | b'{') => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            (false, _, b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Why `bytes` is not one JSON-RPC message, as the answer to send.
fn framing_error(bytes: &Bytes) -> Option<Response> {
    // Checks the syntax and depth without building the value: rmcp parses it next.
    let too_deep = nesting_depth(bytes) > MAX_DEPTH;
    // JSON is UTF-8 (RFC 8259), and skipping a value does not look inside its strings.
    let syntax = std::str::from_utf8(bytes)
        .map_err(|e| Text::new("not UTF-8: {error}").with("error", e).render())
        .and_then(|text| {
            serde_json::from_str::<serde::de::IgnoredAny>(text).map_err(|e| e.to_string())
        });
    if let Err(err) = syntax.and_then(|_| {
        if too_deep {
            Err(Text::new("nested more than {max} levels deep").with("max", MAX_DEPTH).render())
        } else {
            Ok(())
        }
    }) {
        let message = Text::new(
            "The body is not JSON ({error}). Send one JSON-RPC request object, such as {\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/list\"}.",
        )
        .with("error", err);
        return Some(refusal(
            StatusCode::BAD_REQUEST,
            PARSE_ERROR,
            json!({"code": "invalid_input"}),
            &message.render(),
        ));
    }
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    let message = match first {
        Some(b'{') => return None,
        Some(b'[') => Text::new(
            "Batches are not supported (MCP removed them in 2025-06-18). Send each JSON-RPC message in its own request.",
        ),
        _ => Text::new(
            "A JSON-RPC message is an object with jsonrpc, method and, for a request, id. Send one object.",
        ),
    };
    Some(refusal(
        StatusCode::BAD_REQUEST,
        INVALID_REQUEST,
        json!({"code": "invalid_input"}),
        &message.render(),
    ))
}

/// A refusal in plain text (rmcp's) or problem JSON (bearer authentication's) as a JSON-RPC
/// error, with the same status and headers.
pub(crate) async fn rewrite_refusal(response: Response) -> Response {
    let status = response.status();
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("text/plain")
        .to_owned();
    let is_problem = content_type.starts_with(http::PROBLEM_CONTENT_TYPE);
    if !(status.is_client_error() || status.is_server_error())
        || !(is_problem || content_type.starts_with("text/plain"))
    {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_REFUSAL_BYTES).await.unwrap_or_default();
    let problem = serde_json::from_slice::<Value>(&bytes).ok().filter(|_| is_problem);
    let (data, message) = match problem {
        // The problem's own fields (code, retry_after, needed_scope…) become the data.
        Some(Value::Object(mut fields)) => {
            let message = fields.remove("detail").and_then(|d| d.as_str().map(str::to_owned));
            for generic in ["type", "title", "status"] {
                fields.remove(generic);
            }
            (Value::Object(fields), message.unwrap_or_default())
        }
        _ => (json!({"code": code_of(status)}), String::from_utf8_lossy(&bytes).trim().to_owned()),
    };
    let rpc_code = if status.is_server_error() { INTERNAL_ERROR } else { INVALID_REQUEST };
    let rewritten = refusal(status, rpc_code, data, &message);
    parts.headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, rewritten.into_body())
}

/// The stable code of a refusal that has only its HTTP status.
fn code_of(status: StatusCode) -> &'static str {
    match status {
        StatusCode::UNAUTHORIZED => "unauthenticated",
        StatusCode::FORBIDDEN => "forbidden",
        StatusCode::NOT_FOUND => "not_found",
        StatusCode::TOO_MANY_REQUESTS => "rate_limited",
        StatusCode::SERVICE_UNAVAILABLE => "unavailable",
        status if status.is_server_error() => "internal",
        _ => "invalid_input",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fuzz target (see the `fuzz` crate): whatever the body, the check answers, and what it
    /// lets through is one JSON object, which rmcp's parser reads.
    #[test]
    fn fuzz_json_rpc_framing() {
        let seeds: Vec<Vec<u8>> = [
            r#"{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "list_subscriptions", "arguments": {"limit": 5}}}"#,
            r#"[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]"#,
            r#"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#,
            r#"{"a": "\"[[[{{{", "b": [[[[]]]]}"#,
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
        let crashes = std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../target/fuzz-crashes"
        ));
        fuzz::check("json_rpc_framing", &seeds, &[b"[", b"{", b"\"", b"\\"], &crashes, |bytes| {
            let body = Bytes::copy_from_slice(bytes);
            if framing_error(&body).is_none() {
                let parsed = serde_json::from_slice::<Value>(bytes);
                assert!(matches!(parsed, Ok(Value::Object(_))), "let through: {parsed:?}");
            }
        });
    }

    #[test]
    fn nesting_is_counted_outside_strings_only() {
        assert_eq!(nesting_depth(br#"{"a": [1, {"b": 2}]}"#), 3);
        assert_eq!(nesting_depth(br#"{"a": "[[[{{{\"[[["}"#), 1);
        assert_eq!(nesting_depth(b"]]]]"), 0);
        assert!(
            framing_error(&Bytes::from(format!("{}{}", "[".repeat(129), "]".repeat(129))))
                .is_some()
        );
        assert!(
            framing_error(&Bytes::from_static(
                br#" {"jsonrpc": "2.0", "method": "ping", "id": 1}"#
            ))
            .is_none()
        );
    }
}
