//! Reminders and messages to members: reminder preferences, destinations and how sending to
//! them went, the outbox of messages (planned, leased, finished), calendar feeds and the
//! household's mail server. Secrets (destination secrets, the mail password) live in `secrets`
//! and are read only to send.

use crate::{db::Row, value::params};

use crate::{
    Db, Result,
    access::{secret, set_secret},
};

/// The name of the mail server's password in `secrets`.
const MAIL_PASSWORD: &str = "smtp_password";

/// The name of a destination's secret in `secrets`.
fn destination_secret(id: i64) -> String {
    format!("destination:{id}")
}

/// A member's reminder timing as stored; see the migration for the defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreferencesRow {
    /// JSON array, or `None` for the household's default.
    pub days_before: Option<String>,
    pub time_of_day: String,
    pub covers: String,
    pub trial_endings: bool,
    pub card_expiry: bool,
    pub price_rises: bool,
    pub weekly_digest: String,
    /// Told when a bank sync notices a new recurring charge.
    pub new_recurring: bool,
}

impl Default for PreferencesRow {
    fn default() -> Self {
        Self {
            days_before: None,
            time_of_day: "09:00".into(),
            covers: "mine".into(),
            trial_endings: true,
            card_expiry: true,
            price_rises: true,
            weekly_digest: "off".into(),
            new_recurring: false,
        }
    }
}

pub fn preferences(db: &Db<'_>, member_id: i64) -> Result<Option<PreferencesRow>> {
    db.query_opt(
        "SELECT days_before, time_of_day, covers, trial_endings, card_expiry, price_rises, weekly_digest,
             new_recurring FROM reminder_preferences WHERE member_id = ?1",
        params![member_id],
        |r| {
            Ok(PreferencesRow {
                days_before: r.get(0)?,
                time_of_day: r.get(1)?,
                covers: r.get(2)?,
                trial_endings: r.get(3)?,
                card_expiry: r.get(4)?,
                price_rises: r.get(5)?,
                weekly_digest: r.get(6)?,
                new_recurring: r.get(7)?,
            })
        },
    )
}

pub fn put_preferences(db: &Db<'_>, member_id: i64, row: &PreferencesRow, now: &str) -> Result<()> {
    db.execute("INSERT INTO reminder_preferences
           (member_id, days_before, time_of_day, covers, trial_endings, card_expiry, price_rises, weekly_digest, updated_at,
            new_recurring)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
         ON CONFLICT (member_id) DO UPDATE SET days_before = ?2, time_of_day = ?3, covers = ?4,
           trial_endings = ?5, card_expiry = ?6, price_rises = ?7, weekly_digest = ?8, updated_at = ?9,
           new_recurring = ?10", params![
            member_id,
            row.days_before,
            row.time_of_day,
            row.covers,
            row.trial_endings,
            row.card_expiry,
            row.price_rises,
            row.weekly_digest,
            now,
            row.new_recurring
        ])?;
    Ok(())
}

/// A destination with how sending to it went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DestinationRow {
    pub id: i64,
    pub household_id: i64,
    pub member_id: i64,
    pub kind: String,
    pub name: String,
    pub address: String,
    pub reminders: bool,
    pub agent_changes: bool,
    pub allow_lan: bool,
    pub last_sent_at: Option<String>,
    pub last_error: Option<String>,
    pub disabled_at: Option<String>,
}

const DESTINATION_COLUMNS: &str =
    "d.id, d.household_id, d.member_id, d.kind, d.name, d.address, d.reminders,
    d.agent_changes, d.allow_lan, h.last_sent_at, h.last_error, h.disabled_at
    FROM destinations d LEFT JOIN destination_health h ON h.destination_id = d.id";

fn destination_row(r: &Row<'_>) -> Result<DestinationRow> {
    Ok(DestinationRow {
        id: r.get(0)?,
        household_id: r.get(1)?,
        member_id: r.get(2)?,
        kind: r.get(3)?,
        name: r.get(4)?,
        address: r.get(5)?,
        reminders: r.get(6)?,
        agent_changes: r.get(7)?,
        allow_lan: r.get(8)?,
        last_sent_at: r.get(9)?,
        last_error: r.get(10)?,
        disabled_at: r.get(11)?,
    })
}

/// A member's destinations, oldest first.
pub fn destinations(db: &Db<'_>, member_id: i64) -> Result<Vec<DestinationRow>> {
    let sql = format!("SELECT {DESTINATION_COLUMNS} WHERE d.member_id = ?1 ORDER BY d.id");
    let rows = db.query_map(&sql, params![member_id], destination_row)?;
    Ok(rows)
}

/// One destination of a member; `None` for anyone else's.
pub fn destination(db: &Db<'_>, member_id: i64, id: i64) -> Result<Option<DestinationRow>> {
    let sql = format!("SELECT {DESTINATION_COLUMNS} WHERE d.member_id = ?1 AND d.id = ?2");
    db.query_opt(&sql, params![member_id, id], destination_row)
}

pub struct NewDestination<'a> {
    pub household_id: i64,
    pub member_id: i64,
    pub kind: &'a str,
    pub name: &'a str,
    pub address: &'a str,
    pub reminders: bool,
    pub agent_changes: bool,
    pub allow_lan: bool,
}

/// Adds a destination; `None` when the member already has this address.
pub fn insert_destination(db: &Db<'_>, new: &NewDestination<'_>, now: &str) -> Result<Option<i64>> {
    db.query_opt(
        "INSERT INTO destinations (household_id, member_id, kind, name, address, reminders, agent_changes, allow_lan, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT (member_id, kind, address) DO NOTHING RETURNING id",
        params![
            new.household_id,
            new.member_id,
            new.kind,
            new.name,
            new.address,
            new.reminders,
            new.agent_changes,
            new.allow_lan,
            now
        ],
        |row| row.get(0),
    )
}

/// Deletes a destination with its messages (and, by the trigger, its secret).
pub fn delete_destination(db: &Db<'_>, household_id: i64, id: i64) -> Result<()> {
    db.execute(
        "DELETE FROM destinations WHERE household_id = ?1 AND id = ?2",
        params![household_id, id],
    )?;
    Ok(())
}

pub fn destination_secret_value(db: &Db<'_>, household_id: i64, id: i64) -> Result<Option<String>> {
    secret(db, household_id, &destination_secret(id))
}

pub fn set_destination_secret(
    db: &Db<'_>,
    household_id: i64,
    id: i64,
    value: Option<&str>,
) -> Result<()> {
    set_secret(db, household_id, &destination_secret(id), value)
}

/// Records a message the destination accepted.
pub fn record_sent(db: &Db<'_>, destination_id: i64, now: &str) -> Result<()> {
    db.execute("INSERT INTO destination_health (destination_id, last_sent_at) VALUES (?1, ?2)
         ON CONFLICT (destination_id) DO UPDATE SET last_sent_at = ?2, last_error = NULL, last_error_at = NULL", params![destination_id, now])?;
    Ok(())
}

/// Forgets how sending to a destination went, so a destination the service had said was gone
/// takes messages again.
pub fn clear_health(db: &Db<'_>, destination_id: i64) -> Result<()> {
    db.execute(
        "DELETE FROM destination_health WHERE destination_id = ?1",
        params![destination_id],
    )?;
    Ok(())
}

/// Records a failure; `gone` stops all sending to the destination.
pub fn record_error(
    db: &Db<'_>,
    destination_id: i64,
    error: &str,
    now: &str,
    gone: bool,
) -> Result<()> {
    db.execute(
        "INSERT INTO destination_health (destination_id, last_error, last_error_at, disabled_at)
         VALUES (?1, ?2, ?3, CASE WHEN ?4 THEN ?3 END)
         ON CONFLICT (destination_id) DO UPDATE SET last_error = ?2, last_error_at = ?3,
           disabled_at = CASE WHEN ?4 THEN ?3 ELSE destination_health.disabled_at END",
        params![destination_id, error, now, gone],
    )?;
    Ok(())
}

/// A message to write to the outbox.
pub struct NewMessage<'a> {
    pub household_id: i64,
    pub member_id: i64,
    pub destination_id: i64,
    pub key: &'a str,
    pub kind: &'a str,
    pub payload: &'a str,
    pub due_at: &'a str,
}

/// Adds a message unless one with its key exists; returns whether it was added.
pub fn enqueue(db: &Db<'_>, message: &NewMessage<'_>, now: &str) -> Result<bool> {
    let inserted = db.execute(
        "INSERT INTO outbox (household_id, member_id, destination_id, key, kind, payload, due_at, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (key) DO NOTHING",
        params![
            message.household_id,
            message.member_id,
            message.destination_id,
            message.key,
            message.kind,
            message.payload,
            message.due_at,
            now
        ],
    )?;
    Ok(inserted == 1)
}

/// A message in the outbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MessageRow {
    pub id: i64,
    pub household_id: i64,
    pub member_id: i64,
    pub destination_id: i64,
    pub key: String,
    pub kind: String,
    pub payload: String,
    pub due_at: String,
    pub status: String,
    pub attempts: i64,
    pub last_error: Option<String>,
}

const MESSAGE_COLUMNS: &str = "id, household_id, member_id, destination_id, key, kind, payload, due_at, status, attempts, last_error";

fn message_row(r: &Row<'_>) -> Result<MessageRow> {
    Ok(MessageRow {
        id: r.get(0)?,
        household_id: r.get(1)?,
        member_id: r.get(2)?,
        destination_id: r.get(3)?,
        key: r.get(4)?,
        kind: r.get(5)?,
        payload: r.get(6)?,
        due_at: r.get(7)?,
        status: r.get(8)?,
        attempts: r.get(9)?,
        last_error: r.get(10)?,
    })
}

/// Leases up to `limit` messages due by `now` (pending, or sending with an ended lease: the
/// worker that held it stopped), oldest due first, until `lease_until`.
pub fn claim_due(
    db: &Db<'_>,
    now: &str,
    lease_until: &str,
    limit: usize,
) -> Result<Vec<MessageRow>> {
    let sql = format!(
        "UPDATE outbox SET status = 'sending', lease_until = ?2, attempts = attempts + 1
         WHERE id IN (SELECT id FROM outbox
                      WHERE (status = 'pending' AND due_at <= ?1) OR (status = 'sending' AND lease_until <= ?1)
                      ORDER BY due_at, id LIMIT ?3)
         RETURNING {MESSAGE_COLUMNS}"
    );
    let mut rows: Vec<MessageRow> = db.query_map(
        &sql,
        params![now, lease_until, i64::try_from(limit).unwrap_or(i64::MAX)],
        message_row,
    )?;
    rows.sort_by(|a, b| (&a.due_at, a.id).cmp(&(&b.due_at, b.id)));
    Ok(rows)
}

/// Fails the messages whose lease ended after `max_attempts` attempts (their worker stopped
/// each time), saying so.
pub fn give_up_abandoned(db: &Db<'_>, now: &str, max_attempts: i64) -> Result<()> {
    db.execute(
        "UPDATE outbox SET status = 'failed', lease_until = NULL,
           last_error = coalesce(last_error, 'the sender stopped while sending it, every time')
         WHERE status = 'sending' AND lease_until <= ?1 AND attempts >= ?2",
        params![now, max_attempts],
    )?;
    Ok(())
}

/// Ends a message: `sent`, `failed`, `obsolete` or `missed`.
pub fn finish(
    db: &Db<'_>,
    id: i64,
    status: &str,
    now: &str,
    external_id: Option<&str>,
    error: Option<&str>,
) -> Result<()> {
    db.execute(
        "UPDATE outbox SET status = ?2, lease_until = NULL, external_id = ?4, last_error = ?5,
           sent_at = CASE WHEN ?2 = 'sent' THEN ?3 END
         WHERE id = ?1",
        params![id, status, now, external_id, error],
    )?;
    Ok(())
}

/// Puts a message back to be tried again at `due_at`.
pub fn retry(db: &Db<'_>, id: i64, due_at: &str, error: &str) -> Result<()> {
    db.execute(
        "UPDATE outbox SET status = 'pending', lease_until = NULL, due_at = ?2, last_error = ?3 WHERE id = ?1",
        params![id, due_at, error],
    )?;
    Ok(())
}

pub fn message(db: &Db<'_>, id: i64) -> Result<Option<MessageRow>> {
    let sql = format!("SELECT {MESSAGE_COLUMNS} FROM outbox WHERE id = ?1");
    db.query_opt(&sql, params![id], message_row)
}

/// When the next pending message falls due, if any.
pub fn next_due(db: &Db<'_>) -> Result<Option<String>> {
    db.query_row(
        "SELECT min(CASE status WHEN 'pending' THEN due_at ELSE lease_until END) FROM outbox
             WHERE status IN ('pending', 'sending')",
        params![],
        |r| r.get(0),
    )
}

/// A member's pending messages, soonest first.
pub fn pending_of(db: &Db<'_>, member_id: i64, limit: usize) -> Result<Vec<MessageRow>> {
    let sql = format!(
        "SELECT {MESSAGE_COLUMNS} FROM outbox WHERE member_id = ?1 AND status = 'pending' ORDER BY due_at, id LIMIT ?2"
    );
    let rows = db.query_map(
        &sql,
        params![member_id, i64::try_from(limit).unwrap_or(i64::MAX)],
        message_row,
    )?;
    Ok(rows)
}

/// Drops a member's pending reminders (not agent-change or test messages), for the planner to
/// plan them again after the member's timing changed.
pub fn drop_pending_reminders(db: &Db<'_>, member_id: i64) -> Result<()> {
    db.execute(
        "DELETE FROM outbox WHERE member_id = ?1 AND status = 'pending'
           AND kind NOT IN ('agent_change', 'test')",
        params![member_id],
    )?;
    Ok(())
}

/// Every member with at least one destination that takes reminders, as
/// `(household_id, member_id)`.
pub fn members_with_reminders(db: &Db<'_>) -> Result<Vec<(i64, i64)>> {
    let rows = db.query_map(
        "SELECT DISTINCT d.household_id, d.member_id FROM destinations d
             LEFT JOIN destination_health h ON h.destination_id = d.id
             WHERE d.reminders = 1 AND h.disabled_at IS NULL ORDER BY d.household_id, d.member_id",
        params![],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(rows)
}

/// A calendar feed as its address finds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeedRow {
    pub member_id: i64,
    pub household_id: i64,
    pub show_amounts: bool,
    pub created_at: String,
}

pub fn feed_of(db: &Db<'_>, member_id: i64) -> Result<Option<FeedRow>> {
    db.query_opt(
        "SELECT f.member_id, m.household_id, f.show_amounts, f.created_at FROM calendar_feeds f
             JOIN members m ON m.id = f.member_id WHERE f.member_id = ?1",
        params![member_id],
        feed_row,
    )
}

pub fn feed_by_hash(db: &Db<'_>, token_hash: &str) -> Result<Option<FeedRow>> {
    db.query_opt(
        "SELECT f.member_id, m.household_id, f.show_amounts, f.created_at FROM calendar_feeds f
             JOIN members m ON m.id = f.member_id WHERE f.token_hash = ?1",
        params![token_hash],
        feed_row,
    )
}

fn feed_row(r: &Row<'_>) -> Result<FeedRow> {
    Ok(FeedRow {
        member_id: r.get(0)?,
        household_id: r.get(1)?,
        show_amounts: r.get(2)?,
        created_at: r.get(3)?,
    })
}

/// Replaces the member's feed (an older address stops working).
pub fn put_feed(
    db: &Db<'_>,
    member_id: i64,
    token_hash: &str,
    show_amounts: bool,
    now: &str,
) -> Result<()> {
    db.execute(
        "INSERT INTO calendar_feeds (member_id, token_hash, show_amounts, created_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (member_id) DO UPDATE SET token_hash = ?2, show_amounts = ?3, created_at = ?4",
        params![member_id, token_hash, show_amounts, now],
    )?;
    Ok(())
}

pub fn delete_feed(db: &Db<'_>, member_id: i64) -> Result<()> {
    db.execute("DELETE FROM calendar_feeds WHERE member_id = ?1", params![member_id])?;
    Ok(())
}

/// The household's mail server as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MailServerRow {
    pub host: String,
    pub port: u16,
    pub security: String,
    pub username: Option<String>,
    pub from_address: String,
}

pub fn mail_server(db: &Db<'_>, household_id: i64) -> Result<Option<MailServerRow>> {
    db.query_opt(
        "SELECT host, port, security, username, from_address FROM mail_servers WHERE household_id = ?1",
        params![household_id],
        |r| {
            Ok(MailServerRow {
                host: r.get(0)?,
                port: r.get(1)?,
                security: r.get(2)?,
                username: r.get(3)?,
                from_address: r.get(4)?,
            })
        },
    )
}

/// Saves the mail server, or removes it (and its password) with `None`.
pub fn put_mail_server(
    db: &Db<'_>,
    household_id: i64,
    row: Option<&MailServerRow>,
    now: &str,
) -> Result<()> {
    match row {
        Some(row) => db.execute(
            "INSERT INTO mail_servers (household_id, host, port, security, username, from_address, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT (household_id) DO UPDATE SET host = ?2, port = ?3, security = ?4, username = ?5,
               from_address = ?6, updated_at = ?7",
            params![household_id, row.host, row.port, row.security, row.username, row.from_address, now],
        )?,
        None => {
            set_mail_password(db, household_id, None)?;
            db.execute("DELETE FROM mail_servers WHERE household_id = ?1", params![household_id])?
        }
    };
    Ok(())
}

pub fn mail_password(db: &Db<'_>, household_id: i64) -> Result<Option<String>> {
    secret(db, household_id, MAIL_PASSWORD)
}

pub fn set_mail_password(db: &Db<'_>, household_id: i64, value: Option<&str>) -> Result<()> {
    set_secret(db, household_id, MAIL_PASSWORD, value)
}

/// How many test messages a member asked for since `since`.
pub fn tests_since(db: &Db<'_>, member_id: i64, since: &str) -> Result<i64> {
    db.query_row(
        "SELECT count(*) FROM outbox WHERE member_id = ?1 AND kind = 'test' AND created_at >= ?2",
        params![member_id, since],
        |r| r.get(0),
    )
}

/// Removes finished messages due before `before`; the planner never plans that far back, so
/// their keys are not needed.
pub fn prune_finished(db: &Db<'_>, before: &str) -> Result<()> {
    db.execute(
        "DELETE FROM outbox WHERE status IN ('sent', 'failed', 'obsolete', 'missed') AND due_at < ?1",
        params![before],
    )?;
    Ok(())
}

/// The name of a chat bot's token in `secrets`.
fn bot_token_name(kind: &str) -> String {
    format!("{kind}_bot_token")
}

pub fn bot_token(db: &Db<'_>, household_id: i64, kind: &str) -> Result<Option<String>> {
    secret(db, household_id, &bot_token_name(kind))
}

/// The name of the Telegram webhook's secret header in `secrets`.
const TELEGRAM_WEBHOOK_SECRET: &str = "telegram_webhook_secret";

/// Switches a bot between webhook (with its secret) and long polling.
pub fn set_bot_webhook(
    db: &Db<'_>,
    household_id: i64,
    kind: &str,
    secret: Option<&str>,
) -> Result<()> {
    set_secret(db, household_id, TELEGRAM_WEBHOOK_SECRET, secret)?;
    db.execute(
        "UPDATE chat_bots SET webhook = ?3 WHERE household_id = ?1 AND kind = ?2",
        params![household_id, kind, secret.is_some()],
    )?;
    Ok(())
}

pub fn bot_webhook_secret(db: &Db<'_>, household_id: i64) -> Result<Option<String>> {
    secret(db, household_id, TELEGRAM_WEBHOOK_SECRET)
}

/// The name of Slack's app-level token in `secrets`.
const SLACK_APP_TOKEN: &str = "slack_app_token";

pub fn slack_app_token(db: &Db<'_>, household_id: i64) -> Result<Option<String>> {
    secret(db, household_id, SLACK_APP_TOKEN)
}

pub fn set_slack_app_token(db: &Db<'_>, household_id: i64, token: Option<&str>) -> Result<()> {
    set_secret(db, household_id, SLACK_APP_TOKEN, token)
}

/// Saves a bot's token (a new bot starts from its first update), or removes the bot.
pub fn set_bot_token(
    db: &Db<'_>,
    household_id: i64,
    kind: &str,
    token: Option<&str>,
    now: &str,
) -> Result<()> {
    set_secret(db, household_id, &bot_token_name(kind), token)?;
    match token {
        Some(_) => db.execute(
            "INSERT INTO chat_bots (household_id, kind, updated_at) VALUES (?1, ?2, ?3)
             ON CONFLICT (household_id, kind) DO UPDATE SET username = NULL, last_error = NULL,
               update_offset = 0, updated_at = ?3",
            params![household_id, kind, now],
        )?,
        None => {
            if kind == "telegram" {
                set_secret(db, household_id, TELEGRAM_WEBHOOK_SECRET, None)?;
            }
            db.execute(
                "DELETE FROM chat_bots WHERE household_id = ?1 AND kind = ?2",
                params![household_id, kind],
            )?
        }
    };
    Ok(())
}

/// A bot with its state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BotRow {
    pub household_id: i64,
    pub kind: String,
    pub username: Option<String>,
    pub last_error: Option<String>,
    pub update_offset: i64,
    pub webhook: bool,
}

fn bot_row(r: &Row<'_>) -> Result<BotRow> {
    Ok(BotRow {
        household_id: r.get(0)?,
        kind: r.get(1)?,
        username: r.get(2)?,
        last_error: r.get(3)?,
        update_offset: r.get(4)?,
        webhook: r.get(5)?,
    })
}

pub fn bots(db: &Db<'_>) -> Result<Vec<BotRow>> {
    let rows = db.query_map(
        "SELECT household_id, kind, username, last_error, update_offset, webhook FROM chat_bots ORDER BY household_id, kind",
        params![],
        bot_row,
    )?;
    Ok(rows)
}

pub fn bot(db: &Db<'_>, household_id: i64, kind: &str) -> Result<Option<BotRow>> {
    db.query_opt(
        "SELECT household_id, kind, username, last_error, update_offset, webhook FROM chat_bots
             WHERE household_id = ?1 AND kind = ?2",
        params![household_id, kind],
        bot_row,
    )
}

pub fn set_bot_status(
    db: &Db<'_>,
    household_id: i64,
    kind: &str,
    username: Option<&str>,
    error: Option<&str>,
    now: &str,
) -> Result<()> {
    db.execute(
        "UPDATE chat_bots SET username = coalesce(?3, username), last_error = ?4, updated_at = ?5
         WHERE household_id = ?1 AND kind = ?2",
        params![household_id, kind, username, error, now],
    )?;
    Ok(())
}

pub fn set_bot_offset(db: &Db<'_>, household_id: i64, kind: &str, offset: i64) -> Result<()> {
    db.execute(
        "UPDATE chat_bots SET update_offset = CASE WHEN ?3 > update_offset THEN ?3 ELSE update_offset END WHERE household_id = ?1 AND kind = ?2",
        params![household_id, kind, offset],
    )?;
    Ok(())
}

pub fn insert_link_code(
    db: &Db<'_>,
    code_hash: &str,
    household_id: i64,
    member_id: i64,
    kind: &str,
    expires_at: &str,
) -> Result<()> {
    db.execute(
        "INSERT INTO chat_link_codes (code_hash, household_id, member_id, kind, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![code_hash, household_id, member_id, kind, expires_at],
    )?;
    Ok(())
}

/// Takes a link code (it works once): the member it was made for, unless it is unknown, for
/// another household or service, or expired before `now`. Expired codes are removed.
pub fn take_link_code(
    db: &Db<'_>,
    code_hash: &str,
    household_id: i64,
    kind: &str,
    now: &str,
) -> Result<Option<i64>> {
    db.execute("DELETE FROM chat_link_codes WHERE expires_at <= ?1", params![now])?;
    db.query_opt(
        "DELETE FROM chat_link_codes WHERE code_hash = ?1 AND household_id = ?2 AND kind = ?3
             RETURNING member_id",
        params![code_hash, household_id, kind],
        |r| r.get(0),
    )
}

/// Keeps what a document sent to a chat was found to hold (`items`, JSON) under `id`, for
/// `member_id` to import before `expires_at`. The household's expired ones are removed.
pub fn hold_chat_import(
    db: &Db<'_>,
    id: &str,
    household_id: i64,
    member_id: i64,
    items: &str,
    expires_at: &str,
    now: &str,
) -> Result<()> {
    db.execute(
        "DELETE FROM chat_imports WHERE household_id = ?1 AND expires_at <= ?2",
        params![household_id, now],
    )?;
    db.execute(
        "INSERT INTO chat_imports (id, household_id, member_id, items, expires_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
        params![id, household_id, member_id, items, expires_at],
    )?;
    Ok(())
}

/// Takes a waiting import (once): its items, unless it is unknown, another member's or
/// expired before `now`.
pub fn take_chat_import(
    db: &Db<'_>,
    id: &str,
    household_id: i64,
    member_id: i64,
    now: &str,
) -> Result<Option<String>> {
    db.query_opt(
        "DELETE FROM chat_imports
             WHERE id = ?1 AND household_id = ?2 AND member_id = ?3 AND expires_at > ?4
             RETURNING items",
        params![id, household_id, member_id, now],
        |r| r.get(0),
    )
}

/// The destination of a linked chat in a household.
pub fn chat_destination(
    db: &Db<'_>,
    household_id: i64,
    kind: &str,
    address: &str,
) -> Result<Option<DestinationRow>> {
    let sql = format!(
        "SELECT {DESTINATION_COLUMNS} WHERE d.household_id = ?1 AND d.kind = ?2 AND d.address = ?3
         AND h.disabled_at IS NULL ORDER BY d.id LIMIT 1"
    );
    db.query_opt(&sql, params![household_id, kind, address], destination_row)
}
