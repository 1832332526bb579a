//! The whole HTTP application, put together once: `exhale serve` and the tests both call
//! [`build`], so the tests run the server people run: the same routes (the REST API, `/mcp`,
//! OAuth, the calendar feed, the chat webhooks, the web app), the same request span, the same
//! OAuth set-up (the public origin, the client metadata fetcher) and the same hosts and origins
//! `/mcp` answers.
//!
//! Each adapter applies the request limit itself, so a refusal is in its own error format.

use std::sync::Arc;

use ops::oauth::PublicOrigin;

/// What differs between one server and another: where it answers and what it allows.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The port the listener is bound to (`/mcp` answers its own origins on it).
    pub port: u16,
    /// The origin OAuth works under; `None` turns OAuth off.
    pub public_origin: Option<PublicOrigin>,
    /// Hosts and origins `/mcp` answers besides its own and the public origin's.
    pub allowed_hosts: Vec<String>,
    pub allowed_origins: Vec<String>,
    /// The largest request body, but for the ops that take larger ones.
    pub max_request_bytes: usize,
    /// Mark cookies `Secure` (served over HTTPS).
    pub secure_cookies: bool,
    /// How an MCP client on this machine starts `exhale mcp`, for the web app to show.
    pub mcp_command: Option<(String, Vec<String>)>,
}

/// What the server serves: the catalog's implementation, the assistant, and the channels (for
/// the chat webhooks).
pub struct Parts {
    pub app: Arc<app::App>,
    pub assistant: Arc<dyn ops::assistant::Ask>,
    pub channels: Arc<channels::Channels>,
}

/// Why the application could not be put together.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("cannot set up client metadata documents: {0}")]
    Documents(String),
    #[error("cannot set up the web app: {0}")]
    Web(String),
    #[error("cannot set up /mcp: {0}")]
    Mcp(String),
}

/// The application for `parts` with `settings`: every route, and the request span around them.
/// Sets the app's OAuth origin and, under one, the client metadata fetcher (which may reach
/// loopback only when Exhale itself is reached there).
pub fn build(parts: &Parts, settings: &Settings) -> Result<axum::Router, BuildError> {
    let app = &parts.app;
    let catalog: Arc<dyn ops::Catalog> = app.clone();
    let origin = settings.public_origin.clone();
    app.set_public_origin(origin.clone());
    if let Some(origin) = &origin {
        let documents = oauth::Documents::new(oauth::DocumentsConfig {
            allow_loopback: origin.is_loopback(),
            ..oauth::DocumentsConfig::default()
        })
        .map_err(BuildError::Documents)?;
        app.set_metadata_documents(Some(Arc::new(documents)));
    }
    let web = web::router(
        catalog.clone(),
        app.clone(),
        app.clone(),
        parts.assistant.clone(),
        app.clone(),
        web::WebConfig {
            secure_cookies: settings.secure_cookies,
            mcp_command: settings.mcp_command.clone(),
            max_request_bytes: settings.max_request_bytes,
        },
    )
    .map_err(BuildError::Web)?;
    let mcp = mcp::router(catalog.clone(), &mcp_config(settings))
        .map_err(|err| BuildError::Mcp(err.to_string()))?;
    let services =
        channels::ChatServices::new(app.clone(), catalog.clone(), parts.assistant.clone());
    let webhooks = parts.channels.clone().webhook_router(services);
    Ok(api::router(settings.max_request_bytes)
        .with_state(http::AppState::new(catalog.clone()))
        .merge(mcp)
        .merge(oauth::router(app.clone()))
        .merge(channels::router(catalog, app.clone()))
        .merge(webhooks)
        .merge(web)
        .layer(tower_http::trace::TraceLayer::new_for_http().make_span_with(RequestSpan)))
}

/// `/mcp`'s transport settings: the allowlists, its own origins on `port`, and the public
/// address, which `/mcp` answers on whatever the allowlists say.
fn mcp_config(settings: &Settings) -> mcp::HttpConfig {
    let mut config = mcp::HttpConfig {
        allowed_hosts: settings.allowed_hosts.clone(),
        allowed_origins: settings.allowed_origins.clone(),
        max_request_bytes: settings.max_request_bytes,
        oauth: settings.public_origin.clone(),
    }
    .with_own_origins(settings.port);
    if let Some(origin) = &settings.public_origin {
        let host = origin.origin.split_once("://").map_or("", |(_, host)| host);
        let name = host
            .rsplit_once(':')
            .filter(|(_, port)| port.parse::<u16>().is_ok())
            .map_or(host, |(name, _)| name);
        for value in [host, name] {
            if !config.allowed_hosts.iter().any(|allowed| allowed == value) {
                config.allowed_hosts.push(value.to_owned());
            }
        }
        if !config.allowed_origins.contains(&origin.origin) {
            config.allowed_origins.push(origin.origin.clone());
        }
    }
    config
}

/// A request's span in the log: its method and path, with the secret some paths carry (the
/// setup link's, an invitation's, a calendar feed's) and any query (a sign-in's `next` may
/// hold one of those paths) left out.
#[derive(Clone, Copy)]
struct RequestSpan;

impl<B> tower_http::trace::MakeSpan<B> for RequestSpan {
    fn make_span(&mut self, request: &axum::http::Request<B>) -> tracing::Span {
        tracing::debug_span!(
            "request",
            method = %request.method(),
            uri = %loggable_path(request.uri()),
            version = ?request.version(),
        )
    }
}

/// The path as a log may show it: up to a secret path's secret, and `?…` for a query.
fn loggable_path(uri: &axum::http::Uri) -> String {
    let path = uri.path();
    let secret =
        web::SECRET_PATHS.iter().chain(channels::SECRET_PATHS).find(|p| path.starts_with(**p));
    let shown = match secret {
        Some(prefix) => format!("{prefix}…"),
        None => path.to_owned(),
    };
    if uri.query().is_some() { format!("{shown}?…") } else { shown }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_logged_path_keeps_no_secret_and_no_query() {
        let path = |uri: &str| loggable_path(&uri.parse().unwrap());
        assert_eq!(path("/setup/abcdef"), "/setup/…");
        assert_eq!(path("/cal/secret.ics"), "/cal/…");
        assert_eq!(path("/sign-in?next=/invite/abc"), "/sign-in?…");
        assert_eq!(path("/subscriptions/7"), "/subscriptions/7");
    }

    #[test]
    fn mcp_answers_the_public_host_with_and_without_its_port() {
        let settings = Settings {
            port: 8080,
            public_origin: Some(PublicOrigin { origin: "https://exhale.example.net:8443".into() }),
            allowed_hosts: vec!["localhost".into()],
            allowed_origins: Vec::new(),
            max_request_bytes: 1024,
            secure_cookies: true,
            mcp_command: None,
        };
        let config = mcp_config(&settings);
        for host in ["localhost", "exhale.example.net:8443", "exhale.example.net"] {
            assert!(config.allowed_hosts.iter().any(|h| h == host), "{host}: {config:?}");
        }
        assert!(config.allowed_origins.iter().any(|o| o == "https://exhale.example.net:8443"));
    }
}
