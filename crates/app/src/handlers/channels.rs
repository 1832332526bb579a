//! Reminders and where messages go, each member's own (`get_settings` shows them):
//! `update_reminder_settings`, `add_destination`, `remove_destination`, `send_test_message`,
//! the calendar feed (`create_calendar_feed`, `revoke_calendar_feed`) and the owner's mail
//! server (`set_channel_settings`). Secrets (destination secrets, the mail password) are written
//! here and never read back; planning and wording are `reminders.rs`, delivery `outbox.rs`.

use base64::Engine as _;
use domain::{Text, entities::EntityKind};
use ops::{
    OpError,
    channels::{
        AddDestinationInput, CHAT_LINK_MINUTES, CalendarFeed, CalendarFeedCreated, ChatKind,
        ChatLink, CreateCalendarFeedInput, CreateChatLinkInput, DESTINATIONS, Destination,
        DestinationInput, DestinationKind, MailServerInput, Queued, REMINDER_OFFSETS,
        ReminderSettings, SetChannelSettingsInput, UpdateReminderSettingsInput,
    },
    common::Timestamp,
    household::Empty,
};
use store::channels::{self as rows, DestinationRow, MailServerRow, NewDestination};

/// Test messages a member may send in an hour: a test button must not become a way to send
/// mail or webhooks in bulk.
const TESTS_PER_HOUR: i64 = 5;

use crate::{
    credentials,
    ctx::Ctx,
    reminders::{self, About},
    transactions::StoreExt,
};

/// Drops the member's pending reminders and plans them again, so Settings shows what the new
/// preferences or destinations will send.
fn replan(ctx: &Ctx<'_>) -> Result<(), OpError> {
    rows::drop_pending_reminders(ctx.db, ctx.me()).or_internal()?;
    reminders::plan_member(ctx.db, &ctx.household, ctx.me(), ctx.now).or_internal()?;
    Ok(())
}

pub(crate) fn update_reminder_settings(
    ctx: &mut Ctx<'_>,
    input: UpdateReminderSettingsInput,
) -> Result<ReminderSettings, OpError> {
    let me = ctx.me();
    let before = ctx.snapshot(EntityKind::Member, me)?;
    let mut row = rows::preferences(ctx.db, me).or_internal()?.unwrap_or_default();
    if let Some(days) = &input.days_before {
        let max = ops::limits::REMINDER_DAYS;
        if days.len() > REMINDER_OFFSETS || days.iter().any(|d| *d > max) {
            return Err(OpError::invalid(
                "/days_before",
                Text::new("days_before takes up to {count} numbers from 0 to {max}, e.g. [7, 1].")
                    .with("count", REMINDER_OFFSETS)
                    .with("max", max),
            ));
        }
        let mut days = days.clone();
        days.sort_unstable_by(|a, b| b.cmp(a));
        days.dedup();
        row.days_before = Some(serde_json::to_string(&days).map_err(|_| OpError::Internal)?);
    }
    if let Some(time) = &input.time_of_day {
        if ops::channels::time_of_day(time).is_none() {
            return Err(OpError::invalid(
                "/time_of_day",
                Text::new("{time} is not a time of day; write it as HH:MM, e.g. 09:00 or 18:30.")
                    .with("time", time),
            ));
        }
        row.time_of_day.clone_from(time);
    }
    if let Some(covers) = input.covers {
        row.covers = covers.as_str().into();
    }
    if let Some(on) = input.trial_endings {
        row.trial_endings = on;
    }
    if let Some(on) = input.card_expiry {
        row.card_expiry = on;
    }
    if let Some(on) = input.price_rises {
        row.price_rises = on;
    }
    if let Some(digest) = input.weekly_digest {
        row.weekly_digest = digest.as_str().into();
    }
    if let Some(on) = input.new_recurring {
        row.new_recurring = on;
    }
    rows::put_preferences(ctx.db, me, &row, &ctx.now_text()).or_internal()?;
    ctx.record(EntityKind::Member, me, before, Text::new("Changed reminder settings"))?;
    replan(ctx)?;
    reminders::settings_view(ctx)
}

/// An http(s) URL with a host, read as the senders will read it (`ops::network::read_url`) and
/// checked by the rule they will apply; plain http and addresses on the local network only
/// when an owner adds it (`lan`). The URL and its host as read.
fn checked_url(url: &str, lan: bool, what: Text) -> Result<(String, url::Url), OpError> {
    let url = url.trim();
    let not_what = || {
        OpError::invalid(
            "/address",
            Text::new("{url} is not {what}.").with("url", url).with("what", what.clone()),
        )
    };
    if url.len() > ops::limits::URL || url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(not_what());
    }
    let parsed = ops::network::read_url(url).ok_or_else(not_what)?;
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(OpError::invalid(
            "/address",
            Text::new(
                "Put no user name or password in the address; an ntfy token or a webhook secret goes in the secret field.",
            ),
        ));
    }
    match parsed.scheme() {
        "https" => {}
        "http" if lan => {}
        "http" => {
            return Err(OpError::invalid(
                "/address",
                Text::new(
                    "{url} is plain http; use https (only an owner may add an http address, for a service on the local network).",
                )
                .with("url", url),
            ));
        }
        _ => return Err(not_what()),
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(not_what());
    }
    if !lan && ops::network::is_local_url(&parsed) {
        return Err(OpError::invalid(
            "/address",
            Text::new("{host} is on this machine or the local network; only an owner may add such an address.")
                .with("host", parsed.host_str().unwrap_or_default()),
        ));
    }
    Ok((url.to_owned(), parsed))
}

/// A Standard Webhooks secret: `whsec_` and base64 of 24 to 64 random bytes.
fn checked_webhook_secret(secret: Option<&str>) -> Result<String, OpError> {
    let secret = secret.map(str::trim).unwrap_or_default();
    let bytes = secret
        .strip_prefix("whsec_")
        .and_then(|b64| base64::engine::general_purpose::STANDARD.decode(b64).ok());
    match bytes {
        Some(bytes) if (24..=64).contains(&bytes.len()) => Ok(secret.to_owned()),
        _ => Err(OpError::invalid(
            "/secret",
            Text::new(
                "A webhook needs a signing secret: whsec_ followed by 24 to 64 random bytes in base64 (the Settings page suggests one). The receiver checks each message with it.",
            ),
        )),
    }
}

fn one_line_secret(secret: Option<&str>) -> Result<Option<String>, OpError> {
    let secret = secret.map(str::trim).filter(|s| !s.is_empty());
    if secret.is_some_and(|s| s.chars().any(|c| c.is_whitespace() || c.is_control())) {
        return Err(OpError::invalid(
            "/secret",
            Text::new("A token is one line without spaces; paste it again."),
        ));
    }
    Ok(secret.map(str::to_owned))
}

pub(crate) fn add_destination(
    ctx: &mut Ctx<'_>,
    input: AddDestinationInput,
) -> Result<Destination, OpError> {
    let me = ctx.me();
    let lan = ctx.caller.is_owner();
    let existing = rows::destinations(ctx.db, me).or_internal()?;
    if existing.len() >= DESTINATIONS {
        return Err(OpError::conflict(
            Text::new("You have {count} destinations, the most there can be; remove one first.")
                .with("count", existing.len()),
        ));
    }
    let (address, secret, default_name) = match input.kind {
        DestinationKind::Ntfy => {
            let (url, parsed) = checked_url(
                &input.address,
                lan,
                Text::new("an ntfy topic URL such as https://ntfy.sh/my-topic"),
            )?;
            if parsed.path().trim_start_matches('/').is_empty() {
                return Err(OpError::invalid(
                    "/address",
                    Text::new("{url} has no topic; add it after the server, e.g. https://ntfy.sh/my-topic.").with("url", &url),
                ));
            }
            let host = parsed.host_str().unwrap_or_default();
            let name = ctx.say(&Text::new("ntfy on {host}").with("host", host));
            (url, one_line_secret(input.secret.as_deref())?, name)
        }
        DestinationKind::Webhook => {
            let (url, parsed) = checked_url(
                &input.address,
                lan,
                Text::new("a webhook URL such as https://example.net/hooks/exhale"),
            )?;
            let secret = checked_webhook_secret(input.secret.as_deref())?;
            let host = parsed.host_str().unwrap_or_default();
            let name = ctx.say(&Text::new("Webhook to {host}").with("host", host));
            (url, Some(secret), name)
        }
        DestinationKind::Email => {
            if rows::mail_server(ctx.db, ctx.household_id()).or_internal()?.is_none() {
                return Err(OpError::conflict(Text::new(
                    "No mail server is set up for this household; an owner sets one in Settings first.",
                )));
            }
            let email = credentials::clean_email("/address", &input.address)?;
            (email.clone(), None, email)
        }
        DestinationKind::Telegram | DestinationKind::Slack => {
            return Err(OpError::invalid(
                "/kind",
                Text::new(
                    "Telegram and Slack chats are linked from the chat itself, not added here; choose ntfy, webhook or email.",
                ),
            ));
        }
    };
    let name = match input.name.as_deref().map(str::trim).filter(|n| !n.is_empty()) {
        Some(name) => crate::input::clean_name("/name", name, ops::limits::SHORT_NAME)?,
        None => default_name,
    };
    let new = NewDestination {
        household_id: ctx.household_id(),
        member_id: me,
        kind: input.kind.as_str(),
        name: &name,
        address: &address,
        reminders: input.reminders,
        agent_changes: input.agent_changes,
        allow_lan: lan,
    };
    let Some(id) = rows::insert_destination(ctx.db, &new, &ctx.now_text()).or_internal()? else {
        return Err(OpError::conflict(
            Text::new("You already have this {kind} destination; get_settings lists it.")
                .with("kind", input.kind.as_str()),
        ));
    };
    rows::set_destination_secret(ctx.db, ctx.household_id(), id, secret.as_deref())
        .or_internal()?;
    ctx.record(
        EntityKind::Destination,
        id,
        None,
        Text::new("Added destination {name}").with("name", &name),
    )?;
    replan(ctx)?;
    let row = rows::destination(ctx.db, me, id).or_internal()?.ok_or(OpError::Internal)?;
    reminders::destination_view(&row)
}

fn own_destination(ctx: &Ctx<'_>, id: i64) -> Result<DestinationRow, OpError> {
    rows::destination(ctx.db, ctx.me(), id).or_internal()?.ok_or_else(|| {
        OpError::not_found(
            Text::new("You have no destination with id {id}. Call get_settings to see yours.")
                .with("id", id),
        )
    })
}

pub(crate) fn remove_destination(
    ctx: &mut Ctx<'_>,
    input: DestinationInput,
) -> Result<ReminderSettings, OpError> {
    let row = own_destination(ctx, input.destination)?;
    let before = ctx.snapshot(EntityKind::Destination, row.id)?;
    rows::delete_destination(ctx.db, ctx.household_id(), row.id).or_internal()?;
    ctx.record(
        EntityKind::Destination,
        row.id,
        before,
        Text::new("Removed destination {name}").with("name", &row.name),
    )?;
    reminders::settings_view(ctx)
}

pub(crate) fn send_test_message(
    ctx: &mut Ctx<'_>,
    input: DestinationInput,
) -> Result<Queued, OpError> {
    let row = own_destination(ctx, input.destination)?;
    if row.disabled_at.is_some() {
        return Err(OpError::conflict(
            Text::new("{name} stopped accepting messages ({error}); remove it and add it again.")
                .with("name", &row.name)
                .with("error", row.last_error.as_deref().unwrap_or_default()),
        ));
    }
    let hour_ago = crate::clock::timestamp_text(ctx.now - jiff::SignedDuration::from_hours(1));
    if rows::tests_since(ctx.db, ctx.me(), &hour_ago).or_internal()? >= TESTS_PER_HOUR {
        return Err(OpError::RateLimited {
            message: Text::new("That is {count} test messages in the last hour, the most there can be; try again later.")
                .with("count", TESTS_PER_HOUR),
            retry_after_secs: 3600,
        });
    }
    let unique = crate::random::random_hex(8)?;
    let recipient = reminders::Recipient {
        household_id: ctx.household_id(),
        member_id: ctx.me(),
        destinations: std::slice::from_ref(&row),
    };
    reminders::enqueue_for(ctx.db, &recipient, &About::Test, ctx.now, ctx.now, Some(&unique))
        .or_internal()?;
    Ok(Queued { due_at: Timestamp(ctx.now), destination: row.name })
}

pub(crate) fn create_calendar_feed(
    ctx: &mut Ctx<'_>,
    input: CreateCalendarFeedInput,
) -> Result<CalendarFeedCreated, OpError> {
    let me = ctx.me();
    let secret = crate::random::random_hex(24)?;
    // Like a token, the address is not audited state: an Undo must never bring an old one back.
    rows::put_feed(
        ctx.db,
        me,
        &credentials::hash_token(&secret),
        input.show_amounts,
        &ctx.now_text(),
    )
    .or_internal()?;
    Ok(CalendarFeedCreated {
        path: format!("/cal/{secret}.ics"),
        feed: CalendarFeed { created_at: Timestamp(ctx.now), show_amounts: input.show_amounts },
    })
}

pub(crate) fn revoke_calendar_feed(
    ctx: &mut Ctx<'_>,
    _: Empty,
) -> Result<ReminderSettings, OpError> {
    let me = ctx.me();
    rows::delete_feed(ctx.db, me).or_internal()?;
    reminders::settings_view(ctx)
}

fn checked_mail_server(input: &MailServerInput) -> Result<MailServerRow, OpError> {
    let host = input.host.trim();
    if host.is_empty()
        || host.len() > 253
        || host.chars().any(|c| c.is_whitespace() || c.is_control() || c == '/')
    {
        return Err(OpError::invalid(
            "/mail_server/host",
            Text::new("{host} is not a host name such as smtp.example.net.").with("host", host),
        ));
    }
    if input.port == 0 {
        return Err(OpError::invalid(
            "/mail_server/port",
            Text::new(
                "The port is a number from 1 to 65535: usually 465 for TLS or 587 for STARTTLS.",
            ),
        ));
    }
    let from = input.from.trim();
    let address = from.rsplit_once('<').map_or(from, |(_, rest)| rest.trim_end_matches('>'));
    credentials::clean_email("/mail_server/from", address)?;
    if from.chars().any(char::is_control) {
        return Err(OpError::invalid(
            "/mail_server/from",
            Text::new("The From address is one line, e.g. Exhale <exhale@example.net>."),
        ));
    }
    Ok(MailServerRow {
        host: host.to_owned(),
        port: input.port,
        security: input.security.as_str().into(),
        username: input
            .username
            .as_deref()
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .map(str::to_owned),
        from_address: from.to_owned(),
    })
}

pub(crate) fn set_channel_settings(
    ctx: &mut Ctx<'_>,
    input: SetChannelSettingsInput,
) -> Result<ReminderSettings, OpError> {
    let household = ctx.household_id();
    let before = ctx.snapshot(EntityKind::Household, household)?;
    if let Some(token) = &input.telegram_bot_token {
        let token = token.trim();
        // A bot token is the bot's id, a colon and its secret (BotFather's format).
        let well_formed = token.split_once(':').is_some_and(|(id, secret)| {
            !id.is_empty()
                && id.bytes().all(|b| b.is_ascii_digit())
                && secret.len() >= 20
                && secret.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        });
        if !token.is_empty() && !well_formed {
            return Err(OpError::invalid(
                "/telegram_bot_token",
                Text::new(
                    "That is not a bot token; @BotFather's look like 123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11.",
                ),
            ));
        }
        let token = (!token.is_empty()).then_some(token);
        rows::set_bot_token(ctx.db, household, "telegram", token, &ctx.now_text()).or_internal()?;
    }
    let has_bot = rows::bot(ctx.db, household, "telegram").or_internal()?.is_some();
    if let Some(webhook) = input.telegram_webhook.filter(|on| *on || has_bot) {
        if !has_bot {
            return Err(OpError::conflict(Text::new(
                "Add the Telegram bot's token first; webhook mode is how its updates arrive.",
            )));
        }
        // 32 random bytes as hex: within Telegram's 1 to 256 of A-Z, a-z, 0-9, _ and -.
        let secret = if webhook { Some(crate::random::random_hex(32)?) } else { None };
        rows::set_bot_webhook(ctx.db, household, "telegram", secret.as_deref()).or_internal()?;
    }
    match &input.slack {
        None => {}
        Some(None) => {
            rows::set_bot_token(ctx.db, household, "slack", None, &ctx.now_text()).or_internal()?;
            rows::set_slack_app_token(ctx.db, household, None).or_internal()?;
        }
        Some(Some(app)) => {
            let token = |value: &str, prefix: &str, pointer: &str, what: Text| {
                let value = value.trim();
                if value.starts_with(prefix)
                    && value.len() > prefix.len() + 10
                    && value.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                {
                    Ok(value.to_owned())
                } else {
                    Err(OpError::invalid(pointer, what))
                }
            };
            let app_token = token(
                &app.app_token,
                "xapp-",
                "/slack/app_token",
                Text::new(
                    "The app-level token starts with xapp-: Basic Information → App-Level Tokens, with the connections:write scope.",
                ),
            )?;
            let bot_token = token(
                &app.bot_token,
                "xoxb-",
                "/slack/bot_token",
                Text::new(
                    "The bot token starts with xoxb-: OAuth & Permissions → Bot User OAuth Token, after installing the app.",
                ),
            )?;
            rows::set_bot_token(ctx.db, household, "slack", Some(&bot_token), &ctx.now_text())
                .or_internal()?;
            rows::set_slack_app_token(ctx.db, household, Some(&app_token)).or_internal()?;
        }
    }
    match &input.mail_server {
        None => {}
        Some(None) => {
            rows::put_mail_server(ctx.db, household, None, &ctx.now_text()).or_internal()?
        }
        Some(Some(server)) => {
            let row = checked_mail_server(server)?;
            rows::put_mail_server(ctx.db, household, Some(&row), &ctx.now_text()).or_internal()?;
            if let Some(password) = &server.password {
                if password.chars().any(|c| c == '\n' || c == '\r') {
                    return Err(OpError::invalid(
                        "/mail_server/password",
                        Text::new("A password is one line; paste it again."),
                    ));
                }
                rows::set_mail_password(
                    ctx.db,
                    household,
                    (!password.is_empty()).then_some(password),
                )
                .or_internal()?;
            }
        }
    }
    ctx.record(
        EntityKind::Household,
        household,
        before,
        Text::new("Changed the channel settings"),
    )?;
    reminders::settings_view(ctx)
}

pub(crate) fn create_chat_link(
    ctx: &mut Ctx<'_>,
    input: CreateChatLinkInput,
) -> Result<ChatLink, OpError> {
    let kind = input.kind.as_str();
    let Some(bot) = rows::bot(ctx.db, ctx.household_id(), kind).or_internal()? else {
        return Err(OpError::conflict(
            Text::new("This household has no {service} bot yet; an owner sets it up in Settings → Reminders.")
                .with("service", kind),
        ));
    };
    // 16 random bytes as hex: within Telegram's 64 characters of A-Z, a-z, 0-9, _ and -.
    let code = crate::random::random_hex(16)?;
    let expires = ctx.now + jiff::SignedDuration::from_mins(CHAT_LINK_MINUTES);
    rows::insert_link_code(
        ctx.db,
        &credentials::hash_token(&code),
        ctx.household_id(),
        ctx.me(),
        kind,
        &crate::clock::timestamp_text(expires),
    )
    .or_internal()?;
    Ok(ChatLink {
        // Slack has no such link: the member sends "link <code>" to the app.
        url: (input.kind == ChatKind::Telegram)
            .then_some(bot.username)
            .flatten()
            .map(|bot| format!("https://t.me/{bot}?start={code}")),
        code,
        expires_at: Timestamp(expires),
    })
}
