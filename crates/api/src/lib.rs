//! The REST adapter: every op of the catalog at `/api/v1/ops/{name}`, and its OpenAPI document.
//!
//! - `POST /api/v1/ops/{name}`: the body is the op's input as a JSON object (empty = `{}`);
//!   `"dry_run": true` runs a write as a preview.
//! - `GET /api/v1/ops/{name}`: read-only ops only; query parameters are the input, coerced
//!   by the op's input schema.
//! - `GET /api/v1/openapi.json`: OpenAPI 3.1, generated from the catalog at run time.
//! - `GET /healthz`: liveness and the version, without authentication.
//! - `GET /llms.txt`: the agents' guide (`ops::docs::agent_guide`), without authentication.
//!
//! Every error is problem JSON from the `http` crate. Nothing here holds a business rule:
//! the catalog checks scopes, exposure, confirmations and the input itself.

mod input;
mod openapi;
mod routes;

use axum::{
    Router,
    routing::{any, get, post},
};

pub use openapi::openapi_document;

/// The REST routes, to merge into the server's router; a body over `max_request_bytes` (or
/// over an op's own larger limit, for the ops that take one) is refused with a `413`
/// problem, whether it declares its length or not.
pub fn router(max_request_bytes: usize) -> Router<http::AppState> {
    // Each op's body is held to its own limit, chosen from the path before anything is read.
    let ops = Router::new()
        .route(
            "/api/v1/ops/{name}",
            post(routes::post_op).get(routes::get_op).fallback(routes::wrong_method),
        )
        .layer(axum::extract::DefaultBodyLimit::disable())
        .layer(axum::middleware::from_fn_with_state(max_request_bytes, limit_body))
        .layer(axum::Extension(routes::RequestLimit(max_request_bytes)));
    Router::new()
        .route("/healthz", get(routes::healthz))
        .route("/api/v1/openapi.json", get(routes::openapi_json))
        .route("/llms.txt", get(routes::llms_txt))
        // Anything else under the prefix answers in the API's own error format, not with an
        // empty 404 from whatever fallback the server has.
        .route("/api/v1", any(routes::no_such_endpoint))
        .route("/api/v1/{*rest}", any(routes::no_such_endpoint))
        .layer(axum::extract::DefaultBodyLimit::max(max_request_bytes))
        .merge(ops)
        .layer(axum::middleware::map_response(http::mark_private))
}

/// Holds a request's body to the limit of the op its path names: the server's
/// `max_request_bytes`, or the op's own when it takes more (a statement file).
async fn limit_body(
    axum::extract::State(max_request_bytes): axum::extract::State<usize>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let name = request.uri().path().strip_prefix("/api/v1/ops/").unwrap_or_default();
    let limit = ops::find(name)
        .map_or(max_request_bytes, |meta| meta.info.request_limit(max_request_bytes));
    // A body that may be larger than the server's limit takes one of the few places for such.
    let declared = request
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok()?.parse::<usize>().ok());
    let place = if limit > max_request_bytes && declared.is_none_or(|n| n > max_request_bytes) {
        match http::large_request() {
            Some(place) => Some(place),
            None => return routes::busy(),
        }
    } else {
        None
    };
    let request =
        request.map(|body| axum::body::Body::new(http_body_util::Limited::new(body, limit)));
    let response = next.run(request).await;
    drop(place);
    response
}

#[cfg(test)]
mod tests;
