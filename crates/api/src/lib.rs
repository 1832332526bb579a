//! The REST adapter: every op of the catalog at `/api/v1/ops/{name}`, and its OpenAPI document.
//!
//! - `POST /api/v1/ops/{name}`: the body is the op's input as a JSON object (empty = `{}`);
//!   `"dry_run": true` runs a write as a preview.
//! - `GET /api/v1/ops/{name}`: read-only ops only; query parameters are the input, coerced
//!   by the op's input schema.
//! - `GET /api/v1/openapi.json`: OpenAPI 3.1, generated from the catalog at run time.
//! - `GET /healthz`: liveness, without authentication.
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
    // The ops route reads up to the largest op's limit; each op's own is checked once the
    // op is known (`routes::post_op`).
    let ops = Router::new()
        .route(
            "/api/v1/ops/{name}",
            post(routes::post_op).get(routes::get_op).fallback(routes::wrong_method),
        )
        .layer(axum::extract::DefaultBodyLimit::max(ops::largest_request(max_request_bytes)))
        .layer(axum::Extension(routes::RequestLimit(max_request_bytes)));
    Router::new()
        .route("/healthz", get(routes::healthz))
        .route("/api/v1/openapi.json", get(routes::openapi_json))
        // Anything else under the prefix answers in the API's own error format, not with an
        // empty 404 from whatever fallback the server has.
        .route("/api/v1", any(routes::no_such_endpoint))
        .route("/api/v1/{*rest}", any(routes::no_such_endpoint))
        .layer(axum::extract::DefaultBodyLimit::max(max_request_bytes))
        .merge(ops)
        .layer(axum::middleware::map_response(http::mark_private))
}

#[cfg(test)]
mod tests;
