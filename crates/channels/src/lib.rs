//! Messages to members, outside Exhale: the delivery worker ([`Channels`]) that takes what the
//! outbox says is due (`ops::channels::Outbox`, implemented by `app`) and sends it to ntfy, a
//! Standard Webhooks receiver, a mail server, a Telegram chat or a Slack direct message; the
//! bots' side of the chat (`telegram.rs`, `slack.rs`, sharing `chat.rs`); and the calendar feed ([`router`]:
//! `GET /cal/<secret>.ics`). What a message says, who gets it and when are decided by the
//! catalog; this crate only knows the services' wire formats.

mod chat;
mod email;
mod feed;
mod http;
pub mod ics;
mod ntfy;
mod outcome;
pub mod slack;
pub mod telegram;
pub mod webhook;

use std::{collections::HashMap, sync::Arc, time::Duration};

use ops::{
    OpError,
    channels::{ChatBot, ChatKind, Delivery, Outbox, Outcome, Target},
};

pub use chat::ChatServices;
pub use feed::{SECRET_PATHS, router};

/// Messages leased per round.
const BATCH: usize = 50;

/// Whether two readings of a bot are the same bot, set up the same way (the offset it reached
/// does not matter).
fn same_bot(a: &ChatBot, b: &ChatBot) -> bool {
    (a.household_id, a.kind, &a.token, &a.app_token, &a.webhook)
        == (b.household_id, b.kind, &b.token, &b.app_token, &b.webhook)
}

/// A bot's task, stopped when the supervisor forgets it or is itself stopped.
struct Running(tokio::task::JoinHandle<()>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// How often the chat supervisor looks for bots an owner added, changed or removed.
const BOTS_EVERY: Duration = Duration::from_secs(30);

/// How the worker reaches services.
#[derive(Clone, Debug)]
pub struct ChannelsConfig {
    /// Authorities (DER) trusted besides the built-in roots, for tests' HTTPS and mail servers.
    pub extra_roots: Vec<Vec<u8>>,
    /// The Telegram Bot API's address.
    pub telegram_api: String,
    /// Slack's Web API address.
    pub slack_api: String,
}

impl Default for ChannelsConfig {
    fn default() -> Self {
        Self {
            extra_roots: Vec::new(),
            telegram_api: "https://api.telegram.org".into(),
            slack_api: "https://slack.com/api".into(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ChannelsError {
    #[error("the channels cannot start: {0}")]
    Setup(String),
}

/// The delivery worker.
pub struct Channels {
    outbox: Arc<dyn Outbox>,
    http: Arc<http::Http>,
    telegram: telegram::Api,
    slack: slack::Api,
    config: ChannelsConfig,
}

impl Channels {
    pub fn new(outbox: Arc<dyn Outbox>, config: ChannelsConfig) -> Result<Self, ChannelsError> {
        let http = Arc::new(http::Http::new(&config.extra_roots).map_err(ChannelsError::Setup)?);
        let telegram = telegram::Api::new(http.clone(), &config.telegram_api);
        let slack = slack::Api::new(http.clone(), &config.slack_api);
        Ok(Self { outbox, http, telegram, slack, config })
    }

    /// A household's Telegram bot, answering its chats through the catalog and the assistant.
    pub fn telegram_bot(&self, bot: ChatBot, services: ChatServices) -> telegram::Bot {
        telegram::Bot::new(self.telegram.clone(), bot, services.chats.clone(), services)
    }

    /// A household's Slack app, answering direct messages through the catalog and the
    /// assistant.
    pub fn slack_app(&self, bot: ChatBot, services: ChatServices) -> slack::App {
        let chats = services.chats.clone();
        slack::App::new(self.slack.clone(), self.http.clone(), bot, chats, services)
    }

    /// Runs every household's bot, starting the ones an owner adds and stopping the ones they
    /// remove or replace, until the task is stopped.
    pub fn spawn_chats(self: Arc<Self>, services: ChatServices) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            let mut running: HashMap<(i64, ChatKind), (ChatBot, Running)> = HashMap::new();
            loop {
                match services.chats.chat_bots().await {
                    Ok(bots) => {
                        running.retain(|_, (seen, _)| bots.iter().any(|b| same_bot(b, seen)));
                        for bot in bots {
                            let key = (bot.household_id, bot.kind);
                            if running.contains_key(&key) {
                                continue;
                            }
                            let seen = bot.clone();
                            let services = services.clone();
                            let task = match bot.kind {
                                ChatKind::Telegram if bot.webhook.is_some() => {
                                    // Updates arrive at the webhook route of any instance;
                                    // this instance, leading, registers it with Telegram, and
                                    // again now and then: Telegram may have been unreachable,
                                    // or the webhook dropped.
                                    let runner = self.telegram_bot(bot, services);
                                    tokio::spawn(async move {
                                        loop {
                                            if let Err(err) = runner.start().await {
                                                tracing::warn!(
                                                    code = err.code(),
                                                    "starting a Telegram bot failed"
                                                );
                                            }
                                            tokio::time::sleep(Duration::from_secs(600)).await;
                                        }
                                    })
                                }
                                ChatKind::Telegram => {
                                    tokio::spawn(self.telegram_bot(bot, services).run())
                                }
                                ChatKind::Slack => {
                                    tokio::spawn(self.slack_app(bot, services).run())
                                }
                            };
                            running.insert(key, (seen, Running(task)));
                        }
                    }
                    Err(err) => tracing::warn!(code = err.code(), "reading the chat bots failed"),
                }
                tokio::time::sleep(BOTS_EVERY).await;
            }
        })
    }

    /// The route Telegram posts updates to in webhook mode (`ops::channels::telegram_webhook_path`),
    /// served by every instance: the household's bot is read from the database for each post,
    /// so an instance that is not running the bots answers as well as the one that is. `404`
    /// for a household without a bot in webhook mode, `403` unless the secret header is its
    /// bot's, `503` while the database is away (Telegram posts again).
    pub fn webhook_router(self: Arc<Self>, services: ChatServices) -> axum::Router {
        use axum::{
            extract::{Path, State},
            http::{HeaderMap, StatusCode},
            routing::post,
        };
        async fn receive(
            State((channels, services)): State<(Arc<Channels>, ChatServices)>,
            Path(household_id): Path<i64>,
            headers: HeaderMap,
            axum::Json(update): axum::Json<serde_json::Value>,
        ) -> StatusCode {
            let bot = match services.chats.chat_bot(household_id, ChatKind::Telegram).await {
                Ok(Some(bot)) if bot.webhook.is_some() => bot,
                Ok(_) => return StatusCode::NOT_FOUND,
                Err(_) => return StatusCode::SERVICE_UNAVAILABLE,
            };
            let bot = channels.telegram_bot(bot, services);
            let secret =
                headers.get("x-telegram-bot-api-secret-token").and_then(|v| v.to_str().ok());
            if !bot.accepts(secret) {
                return StatusCode::FORBIDDEN;
            }
            // Answered at once: an answer from the assistant can take longer than Telegram waits.
            tokio::spawn(async move { bot.handle_update(&update).await });
            StatusCode::OK
        }
        axum::Router::new()
            .route("/telegram/{household_id}/updates", post(receive))
            .with_state((self, services))
    }

    /// Sends what is due now, one round; returns how many messages were tried.
    pub async fn deliver_due(&self) -> Result<usize, OpError> {
        let due = self.outbox.due(BATCH).await?;
        for delivery in &due {
            let outcome = self.send(delivery).await;
            match &outcome {
                Outcome::Sent { .. } => {
                    tracing::info!(
                        kind = delivery.message.kind.as_str(),
                        attempt = delivery.attempt,
                        "message sent"
                    );
                }
                other => tracing::warn!(
                    kind = delivery.message.kind.as_str(),
                    attempt = delivery.attempt,
                    error = %other,
                    "message not sent"
                ),
            }
            self.outbox.finish(delivery.id, outcome).await?;
        }
        Ok(due.len())
    }

    async fn send(&self, delivery: &Delivery) -> Outcome {
        let message = &delivery.message;
        match &delivery.target {
            Target::Ntfy { topic_url, token, allow_lan } => {
                ntfy::send(&self.http, topic_url, token.as_ref(), *allow_lan, message).await
            }
            Target::Webhook { url, secret, allow_lan } => {
                webhook::send(&self.http, url, secret, *allow_lan, &delivery.key, message).await
            }
            Target::Email { to, server } => {
                email::send(server, to, &delivery.key, message, &self.config.extra_roots).await
            }
            Target::Telegram { token, chat_id } => {
                telegram::send(&self.telegram, token, *chat_id, message).await
            }
            Target::Slack { token, user } => slack::send(&self.slack, token, user, message).await,
        }
    }

    /// Delivers whenever the outbox has work, until the task is stopped.
    pub fn spawn(self: Arc<Self>) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            loop {
                match self.deliver_due().await {
                    // A full round may have left more behind.
                    Ok(count) if count == BATCH => continue,
                    Ok(_) => {}
                    Err(err) => {
                        tracing::warn!(code = err.code(), "delivering messages failed");
                        // Not in a tight loop while the database is unwell.
                        tokio::time::sleep(std::time::Duration::from_secs(5)).await;
                    }
                }
                self.outbox.wait().await;
            }
        })
    }
}
