//! OAuth 2.1 for remote MCP clients, the protocol's machine endpoints: protected resource
//! metadata for `/mcp` (RFC 9728), authorization server metadata (RFC 8414), dynamic client
//! registration (RFC 7591), the token endpoint and revocation (RFC 7009), all at the origin's
//! root, and the fetcher of client metadata documents (`documents.rs`), its one outbound call. Each translates the wire format into a call to [`ops::oauth::OAuthServer`] and back;
//! every decision is the server's. The authorization page a person sees (`/authorize`, sign-in
//! and consent) is the web app's; access tokens are checked where bearer tokens are.

mod documents;
mod endpoints;

use std::sync::Arc;

use axum::{
    Router,
    routing::{get, post},
};
use ops::oauth::OAuthServer;

pub use documents::{Documents, DocumentsConfig};

/// The largest registration, token or revocation request read (registrations are the
/// largest: 8 redirect URIs and a name).
const MAX_BODY_BYTES: usize = 16 * 1024;

/// The OAuth routes, to merge into the server's router.
pub fn router(server: Arc<dyn OAuthServer>) -> Router {
    Router::new()
        .route(
            "/.well-known/oauth-protected-resource",
            get(endpoints::resource_metadata).options(endpoints::preflight),
        )
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(endpoints::resource_metadata).options(endpoints::preflight),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(endpoints::server_metadata).options(endpoints::preflight),
        )
        .route("/register", post(endpoints::register).options(endpoints::preflight))
        .route("/token", post(endpoints::token).options(endpoints::preflight))
        .route("/revoke", post(endpoints::revoke).options(endpoints::preflight))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::map_response(endpoints::cors_and_no_store))
        .with_state(server)
}
