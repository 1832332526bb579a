//! Settings → Reminders: a member's reminder timing, where their messages go (add, test,
//! remove), what is planned, their calendar feed, and the household's mail server (owners).
//! Secrets typed here are sent to the ops once and never shown again.

use axum::{
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
    response::Response,
};
use base64::Engine as _;
use ops::{
    Op, OpError, Text,
    access::GetSettings,
    accounts::SessionCaller,
    channels::{
        AddDestination, AddDestinationInput, ChatKind, Covers, CreateCalendarFeed,
        CreateCalendarFeedInput, CreateChatLink, CreateChatLinkInput, DestinationInput,
        DestinationKind, Digest, MailSecurity, MailServerInput, RemoveDestination,
        RevokeCalendarFeed, SLACK_MANIFEST, SendTestMessage, SetChannelSettings,
        SetChannelSettingsInput, SlackAppInput, UpdateReminderSettings,
        UpdateReminderSettingsInput,
    },
    household::Empty,
};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{
    pages::{Confirm, apply_and_go, apply_form, beside_the_form, confirm_page},
    render::{op_error, page_with_extra},
    session::{NoFields, Posted, SignedIn},
    state::Web,
};

const PAGE: &str = "/settings/reminders";

/// A fresh Standard Webhooks secret to paste into the receiver: the form suggests one, and
/// only what the person submits is saved.
fn suggested_webhook_secret() -> String {
    let mut bytes = [0u8; 32];
    if getrandom::fill(&mut bytes).is_err() {
        return String::new();
    }
    format!("whsec_{}", base64::engine::general_purpose::STANDARD.encode(bytes))
}

async fn reminders_page(
    web: &Web,
    headers: &HeaderMap,
    person: &SessionCaller,
    status: StatusCode,
    extra: Value,
) -> Response {
    let settings = match web.call::<GetSettings>(person, Empty {}).await {
        Ok(settings) => settings,
        Err(err) => return op_error(web, headers, person, &err),
    };
    let data = json!({
        "nav": "settings",
        "reminders": settings.reminders,
        "webhook_secret": suggested_webhook_secret(),
        "covers": Covers::NAMES,
        "digests": Digest::NAMES,
        "kinds": [DestinationKind::Ntfy.as_str(), DestinationKind::Webhook.as_str(), DestinationKind::Email.as_str()],
        "securities": MailSecurity::NAMES,
        "slack_manifest": SLACK_MANIFEST,
    });
    page_with_extra(web, headers, person, status, "reminders.html", data, extra)
}

pub(crate) async fn show(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
) -> Response {
    reminders_page(&web, &headers, &person, StatusCode::OK, json!({})).await
}

/// Applies an op from one of the page's forms: back to the page with a notice, or the page
/// again with the op's message beside the form.
async fn apply<O: Op>(
    web: &Web,
    headers: &HeaderMap,
    person: &SessionCaller,
    input: Result<O::Input, OpError>,
    form: &str,
    done: Text,
) -> Response {
    let again = |status, errors| reminders_page(web, headers, person, status, errors);
    apply_form::<O, _, _>(web, headers, person, input, PAGE, form, done, again).await
}

#[derive(Deserialize)]
pub(crate) struct TimingForm {
    /// Numbers separated by commas or spaces, e.g. "7, 1".
    days_before: String,
    time_of_day: String,
    covers: String,
    weekly_digest: String,
    #[serde(default)]
    trial_endings: Option<String>,
    #[serde(default)]
    card_expiry: Option<String>,
    #[serde(default)]
    price_rises: Option<String>,
    #[serde(default)]
    new_recurring: Option<String>,
}

fn days_before(text: &str) -> Result<Vec<u32>, OpError> {
    text.split([',', ' ', ';'])
        .filter(|part| !part.trim().is_empty())
        .map(|part| {
            part.trim().parse().map_err(|_| {
                OpError::invalid(
                    "/days_before",
                    Text::new("{part} is not a number of days; write them like 7, 1.")
                        .with("part", part.trim()),
                )
            })
        })
        .collect()
}

pub(crate) async fn timing(
    State(web): State<Web>,
    headers: HeaderMap,
    Posted { person, form }: Posted<TimingForm>,
) -> Response {
    let input = days_before(&form.days_before).map(|days| UpdateReminderSettingsInput {
        days_before: Some(days),
        time_of_day: Some(form.time_of_day.trim().to_owned()),
        covers: Covers::parse(&form.covers),
        trial_endings: Some(form.trial_endings.is_some()),
        card_expiry: Some(form.card_expiry.is_some()),
        price_rises: Some(form.price_rises.is_some()),
        weekly_digest: Digest::parse(&form.weekly_digest),
        new_recurring: Some(form.new_recurring.is_some()),
    });
    let done = Text::new("Saved your reminders.");
    apply::<UpdateReminderSettings>(&web, &headers, &person, input, "timing", done).await
}

#[derive(Deserialize)]
pub(crate) struct DestinationForm {
    kind: String,
    address: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    secret: String,
    #[serde(default)]
    reminders: Option<String>,
    #[serde(default)]
    agent_changes: Option<String>,
}

pub(crate) async fn add(
    State(web): State<Web>,
    headers: HeaderMap,
    Posted { person, form }: Posted<DestinationForm>,
) -> Response {
    let input = match DestinationKind::parse(&form.kind) {
        Some(kind) => Ok(AddDestinationInput {
            kind,
            address: form.address.trim().to_owned(),
            name: Some(form.name.trim().to_owned()).filter(|n| !n.is_empty()),
            secret: Some(form.secret.trim().to_owned()).filter(|s| !s.is_empty()),
            reminders: form.reminders.is_some(),
            agent_changes: form.agent_changes.is_some(),
        }),
        None => Err(OpError::invalid("/kind", Text::new("Choose ntfy, webhook or email."))),
    };
    let done = Text::new("Added. Send a test message to check it.");
    apply::<AddDestination>(&web, &headers, &person, input, "destination", done).await
}

pub(crate) async fn test(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(id): Path<i64>,
    Posted { person, .. }: Posted<NoFields>,
) -> Response {
    let input = DestinationInput { destination: id };
    let done = Text::new("A test message is on its way; this page shows how it went.");
    apply::<SendTestMessage>(&web, &headers, &person, Ok(input), "destinations", done).await
}

pub(crate) async fn confirm_remove(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
    Path(id): Path<i64>,
) -> Response {
    let input = DestinationInput { destination: id };
    confirm_page::<RemoveDestination>(&web, &headers, &person, input, |_| Confirm {
        nav: "settings",
        title: Text::new("Stop sending here?"),
        explanation: Text::new("Reminders and messages about agents' changes stop going to this destination, and its saved secret is deleted."),
        action: format!("{PAGE}/destinations/{id}/remove"),
        confirm_label: Text::new("Remove"),
        cancel: PAGE.into(),
        hidden: Vec::new(),
    })
    .await
}

pub(crate) async fn remove(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(id): Path<i64>,
    Posted { person, .. }: Posted<NoFields>,
) -> Response {
    let input = DestinationInput { destination: id };
    apply_and_go::<RemoveDestination>(&web, &headers, &person, input, PAGE, Text::new("Removed."))
        .await
}

#[derive(Deserialize)]
pub(crate) struct FeedForm {
    #[serde(default)]
    show_amounts: Option<String>,
}

pub(crate) async fn create_feed(
    State(web): State<Web>,
    headers: HeaderMap,
    Posted { person, form }: Posted<FeedForm>,
) -> Response {
    let input = CreateCalendarFeedInput { show_amounts: form.show_amounts.is_some() };
    match web.call::<CreateCalendarFeed>(&person, input).await {
        Ok(created) => {
            let https = web.absolute(&headers, &created.path);
            let webcal =
                https.replacen("https://", "webcal://", 1).replacen("http://", "webcal://", 1);
            let extra = json!({"feed_created": {"url": https, "webcal": webcal}});
            reminders_page(&web, &headers, &person, StatusCode::OK, extra).await
        }
        Err(err) => op_error(&web, &headers, &person, &err),
    }
}

pub(crate) async fn confirm_revoke_feed(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
) -> Response {
    confirm_page::<RevokeCalendarFeed>(&web, &headers, &person, Empty {}, |_| Confirm {
        nav: "settings",
        title: Text::new("Turn off your calendar feed?"),
        explanation: Text::new("Calendar apps subscribed to its address stop getting your charges. You can create a new address later."),
        action: format!("{PAGE}/feed/revoke"),
        confirm_label: Text::new("Turn off"),
        cancel: PAGE.into(),
        hidden: Vec::new(),
    })
    .await
}

pub(crate) async fn revoke_feed(
    State(web): State<Web>,
    headers: HeaderMap,
    Posted { person, .. }: Posted<NoFields>,
) -> Response {
    let done = Text::new("The calendar feed is off.");
    apply_and_go::<RevokeCalendarFeed>(&web, &headers, &person, Empty {}, PAGE, done).await
}

#[derive(Deserialize)]
pub(crate) struct MailForm {
    host: String,
    port: String,
    security: String,
    #[serde(default)]
    username: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    remove_password: Option<String>,
    from: String,
}

pub(crate) async fn mail(
    State(web): State<Web>,
    headers: HeaderMap,
    Posted { person, form }: Posted<MailForm>,
) -> Response {
    let port = form.port.trim().parse::<u16>().map_err(|_| {
        OpError::invalid(
            "/mail_server/port",
            Text::new("The port is a number: usually 465 for TLS or 587 for STARTTLS."),
        )
    });
    let input = port.and_then(|port| {
        let security = MailSecurity::parse(&form.security).ok_or_else(|| {
            OpError::invalid("/mail_server/security", Text::new("Choose TLS, STARTTLS or none."))
        })?;
        let password = if form.remove_password.is_some() {
            Some(String::new())
        } else {
            Some(form.password).filter(|p| !p.is_empty())
        };
        Ok(SetChannelSettingsInput {
            telegram_bot_token: None,
            telegram_webhook: None,
            slack: None,
            mail_server: Some(Some(MailServerInput {
                host: form.host.trim().to_owned(),
                port,
                security,
                username: Some(form.username.trim().to_owned()).filter(|u| !u.is_empty()),
                password,
                from: form.from.trim().to_owned(),
            })),
        })
    });
    let done = Text::new("Saved the mail server.");
    apply::<SetChannelSettings>(&web, &headers, &person, input, "mail", done).await
}

#[derive(Deserialize)]
pub(crate) struct ChatLinkForm {
    kind: String,
}

pub(crate) async fn chat_link(
    State(web): State<Web>,
    headers: HeaderMap,
    Posted { person, form }: Posted<ChatLinkForm>,
) -> Response {
    let kind = ChatKind::parse(&form.kind).unwrap_or(ChatKind::Telegram);
    let input = CreateChatLinkInput { kind };
    match web.call::<CreateChatLink>(&person, input).await {
        Ok(link) => {
            let extra = json!({"chat_link": link, "chat_link_kind": kind.as_str()});
            reminders_page(&web, &headers, &person, StatusCode::OK, extra).await
        }
        Err(err) => match beside_the_form(&err) {
            Some(status) => {
                let errors = json!({"errors": {kind.as_str(): crate::reader::say(&err.text())}});
                reminders_page(&web, &headers, &person, status, errors).await
            }
            None => op_error(&web, &headers, &person, &err),
        },
    }
}

#[derive(Default, Deserialize)]
#[serde(default)]
pub(crate) struct BotForm {
    token: String,
    remove: Option<String>,
    /// Updates by webhook at the public address instead of long polling.
    webhook: Option<String>,
}

pub(crate) async fn telegram_bot(
    State(web): State<Web>,
    headers: HeaderMap,
    Posted { person, form }: Posted<BotForm>,
) -> Response {
    let token = form.token.trim();
    let input = if form.remove.is_some() {
        SetChannelSettingsInput { telegram_bot_token: Some(String::new()), ..Default::default() }
    } else {
        // An empty token field keeps the saved one.
        SetChannelSettingsInput {
            telegram_bot_token: (!token.is_empty()).then(|| token.to_owned()),
            telegram_webhook: Some(form.webhook.is_some()),
            ..Default::default()
        }
    };
    let done = Text::new("Saved the Telegram bot. Exhale reaches it within a minute.");
    apply::<SetChannelSettings>(&web, &headers, &person, Ok(input), "bot", done).await
}

#[derive(Default, Deserialize)]
#[serde(default)]
pub(crate) struct SlackForm {
    app_token: String,
    bot_token: String,
    remove: Option<String>,
}

pub(crate) async fn slack_app(
    State(web): State<Web>,
    headers: HeaderMap,
    Posted { person, form }: Posted<SlackForm>,
) -> Response {
    let slack = if form.remove.is_some() {
        None
    } else {
        Some(SlackAppInput { app_token: form.app_token, bot_token: form.bot_token })
    };
    let input = SetChannelSettingsInput { slack: Some(slack), ..Default::default() };
    let done = Text::new("Saved the Slack app. Exhale connects to it within a minute.");
    apply::<SetChannelSettings>(&web, &headers, &person, Ok(input), "slack_app", done).await
}
