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
    Catalog, OpError,
    assistant::Ask,
    channels::{ChatBot, ChatKind, Chats, Delivery, Outbox, Outcome, Secret, Target},
};

pub use feed::router;

/// Messages leased per round.
const BATCH: usize = 50;

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
    pub fn telegram_bot(
        &self,
        bot: ChatBot,
        chats: Arc<dyn Chats>,
        catalog: Arc<dyn Catalog>,
        assistant: Arc<dyn Ask>,
    ) -> telegram::Bot {
        telegram::Bot::new(self.telegram.clone(), bot, chats, chat::Glue::new(catalog, assistant))
    }

    /// A household's Slack app, answering direct messages through the catalog and the
    /// assistant.
    pub fn slack_app(
        &self,
        bot: ChatBot,
        chats: Arc<dyn Chats>,
        catalog: Arc<dyn Catalog>,
        assistant: Arc<dyn Ask>,
    ) -> slack::App {
        slack::App::new(
            self.slack.clone(),
            self.http.clone(),
            bot,
            chats,
            chat::Glue::new(catalog, assistant),
        )
    }

    /// Runs every household's bot, starting the ones an owner adds and stopping the ones they
    /// remove or replace, until the task is stopped.
    pub fn spawn_chats(
        self: Arc<Self>,
        chats: Arc<dyn Chats>,
        catalog: Arc<dyn Catalog>,
        assistant: Arc<dyn Ask>,
    ) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            let mut running: HashMap<(i64, ChatKind), (Secret, tokio::task::JoinHandle<()>)> =
                HashMap::new();
            loop {
                match chats.chat_bots().await {
                    Ok(bots) => {
                        running.retain(|key, (token, task)| {
                            let kept = bots
                                .iter()
                                .any(|b| (b.household_id, b.kind) == *key && b.token == *token);
                            if !kept {
                                task.abort();
                            }
                            kept
                        });
                        for bot in bots {
                            let key = (bot.household_id, bot.kind);
                            if running.contains_key(&key) {
                                continue;
                            }
                            let token = bot.token.clone();
                            let runner = self.telegram_bot(
                                bot,
                                chats.clone(),
                                catalog.clone(),
                                assistant.clone(),
                            );
                            running.insert(key, (token, tokio::spawn(runner.run())));
                        }
                    }
                    Err(err) => tracing::warn!(code = err.code(), "reading the chat bots failed"),
                }
                tokio::time::sleep(BOTS_EVERY).await;
            }
        })
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
