//! Delivery's store side, `ops::channels::Outbox` for `App`: planning reminders, leasing the
//! messages due with their destination and its secret, recording what came of each attempt
//! (retries with backoff, failures shown in Settings), and announcing an agent's change to its
//! member in the transaction that made it. Sending is the `channels` crate's; what reminders
//! say is `reminders.rs`.
//!
//! A message is leased for [`LEASE_SECS`] while it is sent; one whose worker stopped mid-send
//! is tried again when the lease ends. So a message is sent once, except after a crash between
//! the service accepting it and Exhale recording that, when it is sent again with the same key
//! (a webhook's `webhook-id`, an email's `Message-ID`) for the receiver to drop.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use ops::{
    BoxFuture, OpError,
    channels::{
        Delivery, DestinationKind, MailSecurity, MailServerTarget, Outbox, Outcome, Secret, Target,
    },
};
use store::{
    Db, StoreError,
    channels::{self as rows, DestinationRow, MessageRow},
};

use crate::{
    App, clock,
    reminders::{self, About, Worded},
    transactions,
};

/// How long a worker holds a message it is sending.
const LEASE_SECS: i64 = 120;
/// Attempts before a message is given up.
const MAX_ATTEMPTS: i64 = 8;
/// The wait before each retry, by attempt; a service's own `retry_after` wins when longer.
const BACKOFF_SECS: [i64; 7] = [30, 120, 600, 1800, 7200, 21_600, 43_200];
/// The longest a service's `Retry-After` is waited.
const MAX_WAIT_SECS: i64 = 24 * 3600;
/// The longest the worker sleeps, so the planner runs this often.
const IDLE: Duration = Duration::from_secs(300);

/// Tells the member about an agent's change, with Undo, on every destination that takes such
/// messages. Written in the change's transaction: if it rolls back, nothing is sent.
pub(crate) fn announce_change(
    db: &Db<'_>,
    caller: &ops::Caller,
    batch_id: &str,
    changes: &[ops::common::Change],
    now: Timestamp,
) -> Result<usize, StoreError> {
    let destinations: Vec<DestinationRow> = rows::destinations(db, caller.member_id)?
        .into_iter()
        .filter(|d| d.agent_changes && d.disabled_at.is_none())
        .collect();
    if destinations.is_empty() {
        return Ok(0);
    }
    let by = match &caller.actor {
        ops::Actor::Token { token_name, client_name, .. } => {
            client_name.clone().unwrap_or_else(|| token_name.clone())
        }
        _ => domain::Text::new("The assistant").render(),
    };
    let about = About::Change {
        batch_id: batch_id.to_owned(),
        by,
        summaries: changes.iter().map(|c| c.summary.clone()).collect(),
        first_audit_id: changes.iter().find_map(|c| c.audit_id),
    };
    let recipient = reminders::Recipient {
        household_id: caller.household_id,
        member_id: caller.member_id,
        destinations: &destinations,
    };
    reminders::enqueue_for(db, &recipient, &about, now, now, None)
}

/// How a destination is reached, with its secret; `Err` says what is missing, for Settings.
fn target(db: &Db<'_>, destination: &DestinationRow) -> Result<Result<Target, String>, StoreError> {
    let secret = rows::destination_secret_value(db, destination.household_id, destination.id)?
        .map(Secret::new);
    let Some(kind) = DestinationKind::parse(&destination.kind) else {
        return Ok(Err(format!("unknown destination kind {}", destination.kind)));
    };
    // The local network is for an owner's destinations, and only while they are an owner.
    let owner = store::households::get_member(db, destination.household_id, destination.member_id)?
        .role
        == domain::entities::Role::Owner;
    let allow_lan = destination.allow_lan && owner;
    Ok(Ok(match kind {
        DestinationKind::Ntfy => {
            Target::Ntfy { topic_url: destination.address.clone(), token: secret, allow_lan }
        }
        DestinationKind::Webhook => match secret {
            Some(secret) => Target::Webhook { url: destination.address.clone(), secret, allow_lan },
            None => {
                return Ok(Err(domain::Text::new(
                    "The webhook has no signing secret; remove it and add it again with one.",
                )
                .render()));
            }
        },
        DestinationKind::Email => match rows::mail_server(db, destination.household_id)? {
            Some(server) => Target::Email {
                to: destination.address.clone(),
                server: MailServerTarget {
                    host: server.host,
                    port: server.port,
                    security: MailSecurity::parse(&server.security).unwrap_or(MailSecurity::Tls),
                    username: server.username,
                    password: rows::mail_password(db, destination.household_id)?.map(Secret::new),
                    from: server.from_address,
                },
            },
            None => {
                return Ok(Err(domain::Text::new(
                    "No mail server is set up; an owner sets one in Settings.",
                )
                .render()));
            }
        },
        DestinationKind::Telegram => {
            let token = rows::bot_token(db, destination.household_id, "telegram")?;
            match (token, destination.address.parse()) {
                (Some(token), Ok(chat_id)) => {
                    Target::Telegram { token: Secret::new(token), chat_id }
                }
                (None, _) => {
                    return Ok(Err(domain::Text::new(
                        "The household's Telegram bot was removed; an owner adds its token again in Settings.",
                    )
                    .render()));
                }
                (_, Err(_)) => return Ok(Err("the Telegram chat id is not a number".into())),
            }
        }
        DestinationKind::Slack => match rows::bot_token(db, destination.household_id, "slack")? {
            Some(token) => {
                Target::Slack { token: Secret::new(token), user: destination.address.clone() }
            }
            None => {
                return Ok(Err(domain::Text::new(
                    "The household's Slack app was removed; an owner adds its tokens again in Settings.",
                )
                .render()));
            }
        },
    }))
}

/// The messages due now, leased, worded and addressed; the ones whose reason went away are
/// finished here as obsolete or missed.
fn lease_due(
    db: &Db<'_>,
    now: Timestamp,
    limit: usize,
    origin: Option<&str>,
) -> Result<Vec<Delivery>, StoreError> {
    reminders::plan(db, now)?;
    let now_text = clock::timestamp_text(now);
    let lease = clock::timestamp_text(now + SignedDuration::from_secs(LEASE_SECS));
    // A message whose worker stopped mid-send on every attempt is given up, not retried for ever.
    rows::give_up_abandoned(db, &now_text, MAX_ATTEMPTS)?;
    let mut deliveries = Vec::new();
    for row in rows::claim_due(db, &now_text, &lease, limit)? {
        let Some(destination) = rows::destination(db, row.member_id, row.destination_id)? else {
            continue;
        };
        if destination.disabled_at.is_some() {
            rows::finish(db, row.id, "failed", &now_text, None, destination.last_error.as_deref())?;
            continue;
        }
        let household = store::households::get_household(db, row.household_id)?;
        let worded = match reminders::word(db, &row, &household, now, origin) {
            Ok(worded) => worded,
            // One message that cannot be worded (a payload from a version that wrote it
            // differently) fails alone; the others go.
            Err(err) => {
                tracing::warn!(error = %err, "a message could not be worded");
                fail(
                    db,
                    &row,
                    &domain::Text::new("Exhale could not word this message.").render(),
                    &now_text,
                    false,
                )?;
                continue;
            }
        };
        let message = match worded {
            Worded::Send(message) => *message,
            Worded::Obsolete => {
                rows::finish(db, row.id, "obsolete", &now_text, None, None)?;
                continue;
            }
            Worded::Missed => {
                rows::finish(db, row.id, "missed", &now_text, None, None)?;
                continue;
            }
        };
        let target = match target(db, &destination)? {
            Ok(target) => target,
            Err(error) => {
                fail(db, &row, &error, &now_text, false)?;
                continue;
            }
        };
        deliveries.push(Delivery {
            id: row.id,
            key: row.key.clone(),
            attempt: u32::try_from(row.attempts).unwrap_or(u32::MAX),
            target,
            message,
        });
    }
    Ok(deliveries)
}

fn fail(
    db: &Db<'_>,
    row: &MessageRow,
    error: &str,
    now: &str,
    gone: bool,
) -> Result<(), StoreError> {
    rows::finish(db, row.id, "failed", now, None, Some(error))?;
    rows::record_error(db, row.destination_id, error, now, gone)
}

fn record(db: &Db<'_>, id: i64, outcome: &Outcome, now: Timestamp) -> Result<(), StoreError> {
    let Some(row) = rows::message(db, id)? else { return Ok(()) };
    if row.status != "sending" {
        return Ok(());
    }
    let now_text = clock::timestamp_text(now);
    match outcome {
        Outcome::Sent { external_id } => {
            rows::finish(db, id, "sent", &now_text, external_id.as_deref(), None)?;
            rows::record_sent(db, row.destination_id, &now_text)
        }
        Outcome::Retry { after_secs, error } if row.attempts < MAX_ATTEMPTS => {
            let index = usize::try_from(row.attempts.saturating_sub(1)).unwrap_or(0);
            let backoff = BACKOFF_SECS[index.min(BACKOFF_SECS.len() - 1)];
            // A service's own wait counts, up to a day: a member's server cannot park a message
            // for ever (or overflow the clock).
            let asked = i64::try_from(*after_secs).unwrap_or(i64::MAX).min(MAX_WAIT_SECS);
            let due = now.checked_add(SignedDuration::from_secs(backoff.max(asked))).unwrap_or(now);
            rows::retry(db, id, &clock::timestamp_text(due), error)?;
            rows::record_error(db, row.destination_id, error, &now_text, false)
        }
        Outcome::Retry { error, .. } | Outcome::Failed { error } => {
            fail(db, &row, error, &now_text, false)
        }
        Outcome::Gone { error } => fail(db, &row, error, &now_text, true),
    }
}

impl App {
    /// The messages due now, leased to the caller (`Outbox::due`).
    pub async fn due_messages(&self, limit: usize) -> Result<Vec<Delivery>, OpError> {
        let store = self.store.clone();
        let now = self.clock.now();
        let origin = self.public_origin().map(|o| o.origin);
        transactions::blocking_write(store, move |db| {
            lease_due(db, now, limit, origin.as_deref()).map_err(transactions::internal)
        })
        .await
    }

    /// Records what came of sending one message (`Outbox::finish`).
    pub async fn finish_message(&self, id: i64, outcome: Outcome) -> Result<(), OpError> {
        let store = self.store.clone();
        let now = self.clock.now();
        transactions::blocking_write(store, move |db| {
            record(db, id, &outcome, now).map_err(transactions::internal)
        })
        .await
    }

    async fn wait_for_messages(&self) {
        let store = self.store.clone();
        let next = transactions::blocking(move || {
            transactions::read(&store, |db| rows::next_due(db).map_err(transactions::internal))
        })
        .await
        .ok()
        .flatten();
        let now = self.clock.now();
        let sleep = next
            .and_then(|due| due.parse::<Timestamp>().ok())
            .map(|due| due.duration_since(now))
            .and_then(|wait| Duration::try_from(wait).ok())
            .map_or(IDLE, |wait| wait.min(IDLE));
        // Whichever comes first: a commit's wake-up, or the next message's time.
        let _ = tokio::time::timeout(sleep, self.outbox_wake.notified()).await;
    }
}

impl Outbox for App {
    fn due(&self, limit: usize) -> BoxFuture<'_, Result<Vec<Delivery>, OpError>> {
        Box::pin(self.due_messages(limit))
    }

    fn finish(&self, id: i64, outcome: Outcome) -> BoxFuture<'_, Result<(), OpError>> {
        Box::pin(self.finish_message(id, outcome))
    }

    fn wait(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.wait_for_messages())
    }
}

impl ops::channels::CalendarFeeds for App {
    /// A feed's secret is a long random string, stored hashed as tokens are; its reader is the
    /// member with read rights only.
    fn feed_reader<'a>(
        &'a self,
        secret: &'a str,
    ) -> BoxFuture<'a, Result<Option<ops::channels::FeedReader>, OpError>> {
        let store = self.store.clone();
        let hash = crate::credentials::hash_token(secret);
        Box::pin(transactions::blocking(move || {
            transactions::read(&store, |db| {
                let Some(feed) = rows::feed_by_hash(db, &hash).map_err(transactions::internal)?
                else {
                    return Ok(None);
                };
                let member = store::households::get_member(db, feed.household_id, feed.member_id)
                    .map_err(transactions::internal)?;
                let caller = ops::Caller {
                    household_id: feed.household_id,
                    member_id: member.id,
                    role: member.role,
                    scope: ops::Scope::Read,
                    actor: ops::Actor::Person,
                    via: ops::Via::Calendar,
                    // Event titles are read by the person, in their calendar.
                    language: crate::views::reads_in(db, &member)
                        .map_err(transactions::internal)?
                        .unwrap_or_default(),
                };
                Ok(Some(ops::channels::FeedReader {
                    caller,
                    member_name: member.name,
                    show_amounts: feed.show_amounts,
                }))
            })
        }))
    }
}
