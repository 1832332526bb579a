//! The two transports: stdio for `exhale mcp`, and Streamable HTTP mounted at `/mcp` inside
//! `exhale serve`, behind bearer authentication.

use std::sync::Arc;

use axum::{
    Router,
    extract::{Request, State},
    http::header,
    middleware::{self, Next},
    response::{IntoResponse, Response},
};
use ops::{Caller, Catalog, Via};
use rmcp::{
    ServerHandler, ServiceExt,
    transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    },
};

use crate::ExhaleMcp;

/// What the HTTP transport accepts.
#[derive(Clone, Debug)]
pub struct HttpConfig {
    /// Host header values accepted (DNS-rebinding protection).
    pub allowed_hosts: Vec<String>,
    /// Browser origins accepted; a request with any other Origin header is refused.
    pub allowed_origins: Vec<String>,
    pub max_request_bytes: usize,
    /// Where OAuth clients find the authorization server, named in the 401 challenge; `None`
    /// when OAuth is off.
    pub oauth: Option<ops::oauth::PublicOrigin>,
}

impl HttpConfig {
    /// Adds the origins of Exhale's own addresses (`http://HOST:PORT` for every allowed host),
    /// so a page Exhale serves itself, or a local tool, may call `/mcp`.
    pub fn with_own_origins(mut self, port: u16) -> Self {
        for host in &self.allowed_hosts {
            let host = if host.contains(':') { format!("[{host}]") } else { host.clone() };
            for scheme in ["http", "https"] {
                let origin = format!("{scheme}://{host}:{port}");
                if !self.allowed_origins.contains(&origin) {
                    self.allowed_origins.push(origin);
                }
            }
        }
        self
    }
}

/// Serves one caller over stdin and stdout until the client closes them.
pub async fn serve_stdio(catalog: Arc<dyn Catalog>, caller: Caller) -> Result<(), std::io::Error> {
    let server = ExhaleMcp::new(catalog, Some(Caller { via: Via::Mcp, ..caller }))?;
    let running = server.serve(rmcp::transport::stdio()).await.map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}

/// The `/mcp` endpoint, for nesting into the app's router.
pub fn router(catalog: Arc<dyn Catalog>, config: &HttpConfig) -> Result<Router, std::io::Error> {
    Ok(exhale_endpoint(catalog.clone(), config)?
        .layer(middleware::from_fn_with_state((catalog, config.oauth.clone()), authenticate))
        .layer(middleware::map_response(crate::framing::rewrite_refusal)))
}

/// The `/mcp` endpoint acting for one fixed caller, without bearer authentication: for test
/// harnesses whose third-party tools cannot send headers (the conformance suite). Nothing in
/// the configuration reaches this; `exhale serve` always uses [`router`].
pub fn router_for_caller(
    catalog: Arc<dyn Catalog>,
    config: &HttpConfig,
    caller: Caller,
) -> Result<Router, std::io::Error> {
    let caller = Caller { via: Via::Mcp, ..caller };
    Ok(exhale_endpoint(catalog, config)?.layer(middleware::from_fn(
        move |mut request: Request, next: Next| {
            request.extensions_mut().insert(caller.clone());
            next.run(request)
        },
    )))
}

fn exhale_endpoint(
    catalog: Arc<dyn Catalog>,
    config: &HttpConfig,
) -> Result<Router, std::io::Error> {
    let codec = Arc::new(crate::confirm::codec()?);
    let direct = crate::direct::Direct::new(catalog.clone(), config.allowed_hosts.clone());
    let mut rmcp = rmcp_endpoint(
        {
            let catalog = catalog.clone();
            move || ExhaleMcp::with_codec(catalog.clone(), None, codec.clone())
        },
        config,
    )
    .layer(middleware::from_fn_with_state(direct, crate::direct::serve));
    if let Some(origin) = config.oauth.clone() {
        let step_up = Arc::new(crate::step_up::StepUp { origin });
        rmcp = rmcp.layer(middleware::from_fn_with_state(step_up, crate::step_up::check));
    }
    Ok(with_transport_policy(rmcp, config))
}

/// `/mcp` over Streamable HTTP for any rmcp handler, with Exhale's transport policy: JSON
/// responses (SSE only when a handler sends something before its answer), the Host allowlist,
/// Origin validation and the request size limit. Both protocol eras are served: 2025 clients
/// get sessions, each bound to the caller that opened it (`sessions.rs`), 2026 clients are
/// served statelessly.
///
/// Public so the conformance fixture (in the integration tests) runs on the same transport as
/// the app; everything else goes through [`router`]. The app's own endpoint adds the hot path
/// of `direct.rs` in front of rmcp.
pub fn endpoint<H: ServerHandler + Send + 'static>(
    make_handler: impl Fn() -> H + Send + Sync + 'static,
    config: &HttpConfig,
) -> Router {
    with_transport_policy(rmcp_endpoint(make_handler, config), config)
}

/// rmcp's Streamable HTTP service at `/mcp`, its sessions bound to their callers.
fn rmcp_endpoint<H: ServerHandler + Send + 'static>(
    make_handler: impl Fn() -> H + Send + Sync + 'static,
    config: &HttpConfig,
) -> Router {
    let sessions = Arc::new(LocalSessionManager::default());
    let owners = crate::sessions::Owners::new(sessions.clone());
    let service = StreamableHttpService::new(
        move || Ok(make_handler()),
        sessions,
        StreamableHttpServerConfig::default()
            .with_json_response(true)
            .with_allowed_hosts(config.allowed_hosts.clone())
            .with_allowed_origins(config.allowed_origins.clone())
            .enforce_origin_validation()
            // `framing::check`, further out, holds each message to its op's limit.
            .with_max_request_body_bytes(ops::largest_request(config.max_request_bytes)),
    );
    Router::new()
        .route_service("/mcp", service)
        .layer(middleware::from_fn_with_state(owners, crate::sessions::bind))
}

/// What every `/mcp` answer goes through: the body read within the limit, refusals as JSON-RPC
/// errors, and the headers of a private response.
fn with_transport_policy(router: Router, config: &HttpConfig) -> Router {
    router
        .layer(middleware::from_fn_with_state(config.max_request_bytes, crate::framing::check))
        .layer(middleware::map_response(crate::framing::rewrite_refusal))
        .layer(middleware::map_response(http::mark_private))
}

/// Puts the bearer token's caller into the request for `ExhaleMcp`, or answers 401 with a
/// `WWW-Authenticate` challenge, which names the OAuth metadata when OAuth is on.
async fn authenticate(
    State((catalog, oauth)): State<(Arc<dyn Catalog>, Option<ops::oauth::PublicOrigin>)>,
    mut request: Request,
    next: Next,
) -> Response {
    match http::authenticate_bearer(request.headers(), catalog.as_ref(), Via::Mcp).await {
        Ok(caller) => {
            request.extensions_mut().insert(caller);
            next.run(request).await
        }
        Err(rejection) => {
            let token_sent = !matches!(rejection, http::BearerRejection::Missing);
            let refused_token = matches!(
                rejection,
                http::BearerRejection::Missing
                    | http::BearerRejection::Malformed
                    | http::BearerRejection::Refused(ops::OpError::Unauthenticated { .. })
            );
            let mut response = rejection.into_response();
            if let Some(origin) = oauth.filter(|_| refused_token)
                && let Ok(value) =
                    header::HeaderValue::from_str(&http::oauth_challenge(&origin, token_sent))
            {
                let headers = response.headers_mut();
                headers.insert(header::WWW_AUTHENTICATE, value);
                // Browser-based clients read the challenge to start OAuth.
                headers.insert(
                    header::ACCESS_CONTROL_EXPOSE_HEADERS,
                    header::HeaderValue::from_static("WWW-Authenticate"),
                );
            }
            response
        }
    }
}
