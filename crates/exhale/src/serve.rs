//! `exhale serve`: the HTTP server (the web app, the REST API, `/mcp`, the calendar feed) and
//! the background work (due charges, message delivery).

use std::sync::Arc;

use anyhow::Context as _;
use tokio::net::TcpListener;

use crate::config::Config;

/// The whole HTTP application, once the listener is bound to `port`.
pub(crate) fn router(
    app: Arc<app::App>,
    assistant: Arc<dyn ops::assistant::Ask>,
    config: &Config,
    port: u16,
) -> anyhow::Result<axum::Router> {
    let catalog: Arc<dyn ops::Catalog> = app.clone();
    let origin = config.oauth_origin(port);
    app.set_public_origin(origin.clone());
    if let Some(origin) = &origin {
        // A document on this computer is no further inside than Exhale itself when Exhale is
        // reached on loopback; otherwise loopback is as private as any other address.
        let documents = oauth::Documents::new(oauth::DocumentsConfig {
            allow_loopback: origin.is_loopback(),
            ..oauth::DocumentsConfig::default()
        })
        .map_err(|err| anyhow::anyhow!("cannot set up client metadata documents: {err}"))?;
        app.set_metadata_documents(Some(Arc::new(documents)));
    }
    let web = web::router(
        catalog.clone(),
        app.clone(),
        app.clone(),
        assistant,
        web::WebConfig {
            secure_cookies: config.secure_cookies,
            mcp_command: mcp_command(config),
            max_request_bytes: config.max_request_bytes,
        },
    )
    .map_err(|err| anyhow::anyhow!("cannot set up the web app: {err}"))?;
    let mut mcp_config = mcp::HttpConfig {
        allowed_hosts: config.allowed_hosts.clone(),
        allowed_origins: config.allowed_origins.clone(),
        max_request_bytes: config.max_request_bytes,
        oauth: origin.clone(),
    }
    .with_own_origins(port);
    if let Some(origin) = &origin {
        // The public address is one /mcp answers on, whatever the allowlists say.
        let host = origin.origin.split_once("://").map_or("", |(_, host)| host);
        let name = host
            .rsplit_once(':')
            .filter(|(_, p)| p.parse::<u16>().is_ok())
            .map_or(host, |(h, _)| h);
        for value in [host, name] {
            if !mcp_config.allowed_hosts.iter().any(|h| h == value) {
                mcp_config.allowed_hosts.push(value.to_owned());
            }
        }
        if !mcp_config.allowed_origins.contains(&origin.origin) {
            mcp_config.allowed_origins.push(origin.origin.clone());
        }
    }
    let mcp = mcp::router(catalog.clone(), &mcp_config).context("cannot set up /mcp")?;
    // Each adapter applies the limit itself, so a refusal is in its own error format.
    Ok(api::router(config.max_request_bytes)
        .with_state(http::AppState::new(catalog.clone()))
        .merge(mcp)
        .merge(oauth::router(app.clone()))
        .merge(channels::router(catalog, app))
        .merge(web)
        .layer(tower_http::trace::TraceLayer::new_for_http().make_span_with(RequestSpan)))
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

/// How an MCP client on this machine starts `exhale mcp` against this server's data: none on
/// PostgreSQL, whose URL (and password) a page must not show.
fn mcp_command(config: &Config) -> Option<(String, Vec<String>)> {
    if config.database_url.is_some() {
        return None;
    }
    let exe = std::env::current_exe().ok()?;
    let args =
        vec!["--data-dir".to_owned(), config.data_dir.display().to_string(), "mcp".to_owned()];
    Some((exe.display().to_string(), args))
}

pub(crate) async fn run(config: Config, app: Arc<app::App>) -> anyhow::Result<()> {
    // Listen for SIGTERM before saying we are up, so a supervisor that stops us right after
    // the first line gets a clean exit.
    let terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("cannot listen for SIGTERM")?;
    let listener = TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("cannot listen on {}", config.listen))?;
    let address = listener.local_addr()?;
    println!("Exhale is listening on http://{address}");
    println!("Data: {}", config.database_name());
    if !app.has_members().await.map_err(|e| anyhow::anyhow!("{e}"))? {
        // Whoever can read this terminal may create the first owner; the link works once.
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no randomness: {e}"))?;
        let secret: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        println!("Nobody has an account yet. Set up Exhale in your browser:");
        println!("  http://{address}/setup/{secret}");
        println!(
            "or on the command line: exhale --data-dir {} member create-owner --email you@example.com --name You --password-stdin",
            config.data_dir.display()
        );
        app.open_setup_link(&secret).await.map_err(|e| anyhow::anyhow!("{}", e.text().render()))?;
    }
    let catalog: Arc<dyn ops::Catalog> = app.clone();
    let assistant: Arc<dyn ops::assistant::Ask> = Arc::new(
        assistant::Assistant::new(
            catalog.clone(),
            app.clone(),
            Arc::new(assistant::Providers::default()),
        )
        .context("cannot start the built-in assistant")?,
    );
    let outbox: Arc<dyn ops::channels::Outbox> = app.clone();
    let channels = Arc::new(
        channels::Channels::new(outbox, channels::ChannelsConfig::default())
            .map_err(|err| anyhow::anyhow!("{err}"))?,
    );
    // Other instances on the same database tell this one of their changes.
    let _hearing = app.hear_other_instances();
    let (_leading, leader) = app.lead();
    let background = tokio::spawn(run_background_work(
        leader,
        app.clone(),
        channels.clone(),
        catalog.clone(),
        assistant.clone(),
    ));
    let webhooks = channels.webhook_router(app.clone(), catalog, assistant.clone());
    let router = router(app, assistant, &config, address.port())?.merge(webhooks);
    http::serve(listener, router, config.serving(), shutdown_signal(terminate)).await;
    background.abort();
    Ok(())
}

/// Runs the background work (due charges, reminders and their delivery, the chat bots) while
/// this instance leads it: one instance on a database does, and when it stops another takes
/// over (`App::lead`).
async fn run_background_work(
    mut leader: tokio::sync::watch::Receiver<bool>,
    app: Arc<app::App>,
    channels: Arc<channels::Channels>,
    catalog: Arc<dyn ops::Catalog>,
    assistant: Arc<dyn ops::assistant::Ask>,
) {
    loop {
        if leader.wait_for(|leading| *leading).await.is_err() {
            return;
        }
        let jobs = app.spawn_jobs();
        let delivery = channels.clone().spawn();
        let chats = channels.clone().spawn_chats(app.clone(), catalog.clone(), assistant.clone());
        let stopped = leader.wait_for(|leading| !*leading).await.is_err();
        jobs.abort();
        delivery.abort();
        chats.abort();
        if stopped {
            return;
        }
    }
}

async fn shutdown_signal(mut terminate: tokio::signal::unix::Signal) {
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminate.recv() => {}
    }
    tracing::info!("shutting down");
}
