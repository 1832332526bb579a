//! `exhale serve`: the HTTP server (REST API today; MCP and web join it in their issues).

use std::sync::Arc;

use anyhow::Context as _;
use tokio::net::TcpListener;

use crate::config::Config;

/// The whole HTTP application, once the listener is bound to `port`.
pub(crate) fn router(
    catalog: Arc<dyn ops::Catalog>,
    config: &Config,
    port: u16,
) -> anyhow::Result<axum::Router> {
    let mcp = mcp::router(
        catalog.clone(),
        &mcp::HttpConfig {
            allowed_hosts: config.allowed_hosts.clone(),
            allowed_origins: config.allowed_origins.clone(),
            max_request_bytes: config.max_request_bytes,
        }
        .with_own_origins(port),
    )
    .context("cannot set up /mcp")?;
    Ok(api::router()
        .with_state(http::AppState::new(catalog))
        .merge(mcp)
        .layer(tower_http::limit::RequestBodyLimitLayer::new(config.max_request_bytes))
        .layer(tower_http::trace::TraceLayer::new_for_http()))
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
    println!("Data: {}", config.database().display());
    if !app.has_members().await.map_err(|e| anyhow::anyhow!("{e}"))? {
        println!("No owner yet. Create one with:");
        println!(
            "  exhale --data-dir {} member create-owner --email you@example.com --name You --password-stdin",
            config.data_dir.display()
        );
    }
    let jobs = app.spawn_jobs();
    let catalog: Arc<dyn ops::Catalog> = app;
    axum::serve(listener, router(catalog, &config, address.port())?)
        .with_graceful_shutdown(shutdown_signal(terminate))
        .await?;
    jobs.abort();
    Ok(())
}

async fn shutdown_signal(mut terminate: tokio::signal::unix::Signal) {
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminate.recv() => {}
    }
    tracing::info!("shutting down");
}
