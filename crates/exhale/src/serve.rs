//! `exhale serve`: the HTTP server (the web app, the REST API, `/mcp`, the calendar feed) and
//! the background work (due charges, message delivery).

use std::sync::Arc;

use anyhow::Context as _;
use tokio::net::TcpListener;

use crate::config::Config;

/// What `exhale serve` serves with, once the listener is bound to `port`.
fn settings(config: &Config, port: u16) -> server::Settings {
    server::Settings {
        port,
        public_origin: config.oauth_origin(port),
        allowed_hosts: config.allowed_hosts.clone(),
        allowed_origins: config.allowed_origins.clone(),
        max_request_bytes: config.max_request_bytes,
        secure_cookies: config.secure_cookies,
        mcp_command: mcp_command(config),
    }
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
    app.set_backup_plan(config.backup_plan()?);
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
    let parts = server::Parts { app, assistant, channels };
    let router = server::build(&parts, &settings(&config, address.port()))?;
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
        let services = channels::ChatServices::new(app.clone(), catalog.clone(), assistant.clone());
        let chats = channels.clone().spawn_chats(services);
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
