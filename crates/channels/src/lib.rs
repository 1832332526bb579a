//! Messages to members, outside Exhale: the delivery worker ([`Channels`]) that takes what the
//! outbox says is due (`ops::channels::Outbox`, implemented by `app`) and sends it to ntfy, a
//! Standard Webhooks receiver or a mail server, and the calendar feed ([`router`]:
//! `GET /cal/<secret>.ics`). What a message says, who gets it and when are decided by the
//! catalog; this crate only knows the services' wire formats.

mod email;
mod feed;
mod http;
pub mod ics;
mod ntfy;
mod outcome;
pub mod webhook;

use std::sync::Arc;

use ops::{
    OpError,
    channels::{Delivery, Outbox, Outcome, Target},
};

pub use feed::router;

/// Messages leased per round.
const BATCH: usize = 50;

/// How the worker reaches services.
#[derive(Clone, Debug, Default)]
pub struct ChannelsConfig {
    /// Authorities (DER) trusted besides the built-in roots, for tests' HTTPS and mail servers.
    pub extra_roots: Vec<Vec<u8>>,
}

#[derive(Debug, thiserror::Error)]
pub enum ChannelsError {
    #[error("the channels cannot start: {0}")]
    Setup(String),
}

/// The delivery worker.
pub struct Channels {
    outbox: Arc<dyn Outbox>,
    http: http::Http,
    config: ChannelsConfig,
}

impl Channels {
    pub fn new(outbox: Arc<dyn Outbox>, config: ChannelsConfig) -> Result<Self, ChannelsError> {
        let http = http::Http::new(&config.extra_roots).map_err(ChannelsError::Setup)?;
        Ok(Self { outbox, http, config })
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
            Target::Telegram { .. } | Target::Slack { .. } => Outcome::Failed {
                error: "Telegram and Slack are not connected in this version of Exhale".into(),
            },
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
