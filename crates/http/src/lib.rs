//! Shared axum glue for the HTTP adapters (REST, MCP over HTTP, web, OAuth).
//!
//! - [`AppState`]: what every handler gets, the catalog behind `dyn ops::Catalog`.
//! - [`Bearer`] and [`authenticate_bearer`]: `Authorization: Bearer <token>` to an
//!   [`ops::Caller`], through [`ops::Catalog::authenticate_token`].
//! - [`problem_response`]: an [`ops::OpError`] as RFC 9457 problem JSON with
//!   Exhale's stable `code`, the one error format of the HTTP API.
//! - [`mark_private`]: `no-store` and `nosniff` on answers with personal data.
//! - [`serve`]: the server loop, with timeouts, a connection cap and [`ClientAddress`].
//! - [`large_request`]: a place for one of the few requests larger than `max_request_bytes`.
//!
//! Nothing here holds a business rule: the catalog decides, this crate translates.

mod auth;
mod large;
mod private;
mod problem;
mod serve;
mod state;

pub use auth::{
    Bearer, BearerRejection, authenticate_bearer, insufficient_scope_challenge, oauth_challenge,
    parse_bearer,
};
pub use large::{LargeRequest, MAX_LARGE_REQUESTS, large_request, large_requests_in_use};
pub use private::{mark_private, mark_private_headers};
pub use problem::{
    BEARER_CHALLENGE, PROBLEM_CONTENT_TYPE, invalid_json_body, problem_body, problem_response,
    problem_response_with_status, title_of,
};
pub use serve::{ClientAddress, ServeConfig, serve};
pub use state::AppState;
