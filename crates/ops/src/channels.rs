//! The contract of reminders and messages to members: a member's reminder preferences, the
//! destinations messages go to (ntfy, a webhook, email; Telegram and Slack chats once linked),
//! the member's calendar feed, the owner's mail server, and [`Outbox`], the trait the delivery
//! worker in the `channels` crate drives. How a message looks on each service is the
//! `channels` crate's business; what it says and who gets it is decided here and in `app`.

use std::fmt;

use domain::named_enum;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    BoxFuture, OpError,
    common::{Ref, Timestamp},
    household::Empty,
    op::{Hints, Op, OpInfo},
};

pub use crate::assistant::Secret;

named_enum! {
    /// A service a member is told things through.
    pub enum DestinationKind("destination kind") {
        /// A topic on an ntfy server, for phone notifications.
        Ntfy => "ntfy",
        /// An HTTPS endpoint that receives signed JSON (Home Assistant, n8n).
        Webhook => "webhook",
        /// An email address, through the household's mail server.
        Email => "email",
        /// A Telegram chat with the household's bot.
        Telegram => "telegram",
        /// A Slack direct message from the household's app.
        Slack => "slack",
    }
}

named_enum! {
    /// Whose subscriptions a member is reminded of.
    pub enum Covers("reminder coverage") {
        /// The ones the member owns.
        Mine => "mine",
        /// Every one the member can see.
        Household => "household",
    }
}

named_enum! {
    /// The day a weekly digest goes out, or off.
    pub enum Digest("weekly digest") {
        /// No digest.
        Off => "off",
        Monday => "monday",
        Tuesday => "tuesday",
        Wednesday => "wednesday",
        Thursday => "thursday",
        Friday => "friday",
        Saturday => "saturday",
        Sunday => "sunday",
    }
}

named_enum! {
    /// What a message is about.
    pub enum MessageKind("message kind") {
        /// A charge is coming.
        ChargeUpcoming => "charge_upcoming",
        /// A free trial ends and the first charge follows.
        TrialEnding => "trial_ending",
        /// The card a subscription is charged to expires before its next charge.
        CardExpiring => "card_expiring",
        /// A price rise takes effect at the next charge.
        PriceRise => "price_rise",
        /// The week ahead.
        WeeklyDigest => "weekly_digest",
        /// An agent or the assistant changed something.
        AgentChange => "agent_change",
        /// A bank's consent to a connection ends within a week.
        BankConsentEnding => "bank_consent_ending",
        /// A bank sync noticed a recurring charge that is not a subscription yet.
        NewRecurring => "new_recurring",
        /// A test message from Settings.
        Test => "test",
    }
}

/// Most reminders per charge (e.g. a week before and the day before).
pub const REMINDER_OFFSETS: usize = 3;
/// Destinations per member.
pub const DESTINATIONS: usize = 10;
/// `HH:MM`, 24-hour.
pub const TIME_OF_DAY_PATTERN: &str = "^([01][0-9]|2[0-3]):[0-5][0-9]$";

/// One place a member is told things. Its secret (an ntfy token, a webhook signing secret) is
/// never shown.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Destination {
    pub id: i64,
    pub kind: DestinationKind,
    pub name: String,
    /// Enough of the address to recognise it: an email address, a host and the start of a
    /// topic, a webhook's host (its path may be a secret).
    pub address: String,
    /// Reminders go here.
    pub reminders: bool,
    /// Messages about changes made by agents go here.
    pub agent_changes: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_sent_at: Option<Timestamp>,
    /// The last failure, when the last attempt failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// Nothing more is sent: the service said the destination is gone.
    pub disabled: bool,
}

/// A message planned for later.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PlannedMessage {
    pub due_at: Timestamp,
    pub kind: MessageKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscription: Option<Ref>,
    /// Its destination's name.
    pub destination: String,
}

/// The member's calendar feed, without its secret address.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CalendarFeed {
    pub created_at: Timestamp,
    pub show_amounts: bool,
}

named_enum! {
    /// How Exhale talks to a mail server.
    pub enum MailSecurity("mail security") {
        /// TLS from the first byte (usually port 465).
        Tls => "tls",
        /// Plain, then upgraded with STARTTLS, which must succeed (usually port 587).
        Starttls => "starttls",
        /// No encryption: only for a relay on this machine or network.
        Unencrypted => "none",
    }
}

/// A household's chat bot as Exhale last saw it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ChatBotStatus {
    /// Telegram: updates arrive by webhook rather than long polling.
    #[serde(default)]
    pub webhook: bool,
    /// The bot's username (Telegram) or user id (Slack), once Exhale reached it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// Why Exhale cannot reach it, when it cannot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// The household's mail server, without its password.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MailServer {
    pub host: String,
    pub port: u16,
    pub security: MailSecurity,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    pub password_saved: bool,
    /// The From address, e.g. "Exhale <exhale@example.net>".
    pub from: String,
}

/// A member's reminders and where messages go.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReminderSettings {
    /// Days before a charge each reminder goes out, largest first; empty for none.
    pub days_before: Vec<u32>,
    /// Local time, `HH:MM`, in the household's time zone.
    #[schemars(regex(pattern = TIME_OF_DAY_PATTERN))]
    pub time_of_day: String,
    pub time_zone: String,
    pub covers: Covers,
    pub trial_endings: bool,
    /// Warn when a card expires before its next charge.
    pub card_expiry: bool,
    pub price_rises: bool,
    pub weekly_digest: Digest,
    /// Told when a bank sync notices a new recurring charge.
    pub new_recurring: bool,
    pub destinations: Vec<Destination>,
    /// The next few messages planned.
    pub upcoming: Vec<PlannedMessage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calendar_feed: Option<CalendarFeed>,
    /// Email destinations work: an owner set up a mail server.
    pub email_available: bool,
    /// The household's Telegram bot, when an owner set one up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telegram: Option<ChatBotStatus>,
    /// The household's Slack app, when an owner set one up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slack: Option<ChatBotStatus>,
    /// The mail server, for owners.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mail_server: Option<MailServer>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateReminderSettingsInput {
    /// Days before a charge, e.g. [7, 1]; [] for none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = REMINDER_OFFSETS), inner(range(max = crate::limits::REMINDER_DAYS)))]
    pub days_before: Option<Vec<u32>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = TIME_OF_DAY_PATTERN))]
    pub time_of_day: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub covers: Option<Covers>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial_endings: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card_expiry: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_rises: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weekly_digest: Option<Digest>,
    /// Told when a bank sync notices a new recurring charge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_recurring: Option<bool>,
}

pub struct UpdateReminderSettings;
impl Op for UpdateReminderSettings {
    const INFO: OpInfo = OpInfo::write(
        "update_reminder_settings",
        "Set when your reminders go out and what they cover",
        "Fields left out stay; where messages go is set in Settings.",
        Hints::write(true),
    );
    type Input = UpdateReminderSettingsInput;
    type Output = ReminderSettings;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddDestinationInput {
    /// ntfy, webhook or email; Telegram and Slack chats are linked from the chat.
    pub kind: DestinationKind,
    /// The ntfy topic URL, the webhook URL or the email address.
    #[schemars(length(min = 1, max = crate::limits::URL))]
    pub address: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::limits::SHORT_NAME))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub name: Option<String>,
    /// An ntfy access token, or the webhook's signing secret (whsec_ and base64, 24 to 64
    /// bytes); saved and never shown again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 200))]
    pub secret: Option<String>,
    #[serde(default = "yes")]
    pub reminders: bool,
    #[serde(default = "yes")]
    pub agent_changes: bool,
}

fn yes() -> bool {
    true
}

pub struct AddDestination;
impl Op for AddDestination {
    const INFO: OpInfo = OpInfo::write(
        "add_destination",
        "Add a place your reminders and messages go: an ntfy topic, a webhook or an email address",
        "The caller's own. Call send_test_message next to check it.",
        Hints::write(false),
    )
    .excluded("it decides where the household's data is sent, including the messages that tell a member what agents changed, and holds a secret");
    type Input = AddDestinationInput;
    type Output = Destination;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DestinationInput {
    /// From get_settings.
    pub destination: i64,
}

pub struct RemoveDestination;
impl Op for RemoveDestination {
    const INFO: OpInfo = OpInfo::write(
        "remove_destination",
        "Stop sending anything to one of your destinations",
        "Its planned messages are dropped.",
        Hints::destructive(true),
    )
    .excluded("it decides where the household's data is sent, including the messages that tell a member what agents changed");
    type Input = DestinationInput;
    type Output = ReminderSettings;
}

/// A message on its way.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Queued {
    pub due_at: Timestamp,
    pub destination: String,
}

pub struct SendTestMessage;
impl Op for SendTestMessage {
    const INFO: OpInfo = OpInfo::write(
        "send_test_message",
        "Send a test message to one of your destinations",
        "get_settings shows how it went.",
        Hints::write(false),
    );
    type Input = DestinationInput;
    type Output = Queued;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateCalendarFeedInput {
    /// Show amounts in event titles; calendar services (Google, Apple) then read them.
    #[serde(default = "yes")]
    pub show_amounts: bool,
}

/// The feed's secret address, shown once.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CalendarFeedCreated {
    /// Path on this server, e.g. "/cal/….ics"; a calendar app subscribes to it.
    pub path: String,
    pub feed: CalendarFeed,
}

pub struct CreateCalendarFeed;
impl Op for CreateCalendarFeed {
    const INFO: OpInfo = OpInfo::write(
        "create_calendar_feed",
        "Create your calendar feed of upcoming charges at a new secret address",
        "The caller's own. An older address stops working.",
        Hints::write(false),
    )
    .excluded("it creates a credential: the feed's address is its own key");
    type Input = CreateCalendarFeedInput;
    type Output = CalendarFeedCreated;
}

pub struct RevokeCalendarFeed;
impl Op for RevokeCalendarFeed {
    const INFO: OpInfo = OpInfo::write(
        "revoke_calendar_feed",
        "Turn off your calendar feed",
        "Its address stops working at once.",
        Hints::destructive(true),
    )
    .excluded("calendar feed addresses are credentials, which people manage");
    type Input = Empty;
    type Output = ReminderSettings;
}

named_enum! {
    /// A chat service a member links a chat of.
    pub enum ChatKind("chat service") {
        /// Telegram, through the household's bot.
        Telegram => "telegram",
        /// Slack, in a direct message with the household's app.
        Slack => "slack",
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateChatLinkInput {
    pub kind: ChatKind,
}

/// A one-time code that links the chat it is sent from to the member who asked for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ChatLink {
    pub code: String,
    /// Opens the chat with the code ready to send (Telegram's `t.me/<bot>?start=<code>`), once
    /// Exhale knows the bot's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    pub expires_at: Timestamp,
}

/// The Slack app manifest an owner pastes to create the household's app: Socket Mode (no
/// public address), direct messages and buttons, and only the scopes Exhale uses.
pub const SLACK_MANIFEST: &str = r#"_metadata: {major_version: 1, minor_version: 1}
display_information:
  name: Exhale
  description: Household subscriptions, reminders and the Exhale assistant
features:
  app_home: {home_tab_enabled: false, messages_tab_enabled: true, messages_tab_read_only_enabled: false}
  bot_user: {display_name: Exhale, always_online: true}
oauth_config:
  scopes:
    bot: [chat:write, im:history, im:read, im:write]
settings:
  event_subscriptions:
    bot_events: [message.im]
  interactivity: {is_enabled: true}
  org_deploy_enabled: false
  socket_mode_enabled: true
  token_rotation_enabled: false
"#;

/// How long a chat link code works.
pub const CHAT_LINK_MINUTES: i64 = 10;

/// How long what a document sent to a chat holds waits for its sender's Import button.
pub const CHAT_IMPORT_MINUTES: i64 = 30;

pub struct CreateChatLink;
impl Op for CreateChatLink {
    const INFO: OpInfo = OpInfo::write(
        "create_chat_link",
        "Make a one-time code that links your Telegram or Slack chat with Exhale",
        "The caller's own; it works once, for 10 minutes.",
        Hints::write(false),
    )
    .excluded("the code is a credential: whoever sends it links their chat to the member");
    type Input = CreateChatLinkInput;
    type Output = ChatLink;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MailServerInput {
    #[schemars(length(min = 1, max = 253))]
    pub host: String,
    pub port: u16,
    pub security: MailSecurity,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 200))]
    pub username: Option<String>,
    /// Saved and never shown again; left out keeps the saved one, empty removes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 200))]
    pub password: Option<String>,
    /// e.g. "Exhale <exhale@example.net>".
    #[schemars(length(min = 3, max = 200))]
    pub from: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetChannelSettingsInput {
    /// The mail server email reminders go through; null removes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mail_server: Option<Option<MailServerInput>>,
    /// The household's Telegram bot token from @BotFather; saved and never shown again, empty
    /// removes the bot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 200))]
    pub telegram_bot_token: Option<String>,
    /// Receive Telegram's updates at Exhale's public https address (a webhook with a secret
    /// header) instead of asking for them (long polling, the default, which needs no public
    /// address).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telegram_webhook: Option<bool>,
    /// The household's Slack app (Socket Mode): its app-level token and bot token; null removes
    /// the app.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slack: Option<Option<SlackAppInput>>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SlackAppInput {
    /// The app-level token with connections:write, "xapp-…"; saved and never shown again.
    #[schemars(length(max = 300))]
    pub app_token: String,
    /// The Bot User OAuth Token, "xoxb-…"; saved and never shown again.
    #[schemars(length(max = 300))]
    pub bot_token: String,
}

pub struct SetChannelSettings;
impl Op for SetChannelSettings {
    const INFO: OpInfo = OpInfo::write(
        "set_channel_settings",
        "Set up the household's mail server, Telegram bot and Slack app",
        "Owners only. Passwords and tokens are saved as secrets no op returns.",
        Hints::write(true),
    )
    .owner_only()
    .excluded("it holds the mail server's password and the bot token, and decides where the household's messages go");
    type Input = SetChannelSettingsInput;
    type Output = ReminderSettings;
}

/// How a delivery reaches its destination, with the secrets only the sender sees.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Ntfy { topic_url: String, token: Option<Secret>, allow_lan: bool },
    Webhook { url: String, secret: Secret, allow_lan: bool },
    Email { to: String, server: MailServerTarget },
    Telegram { token: Secret, chat_id: i64 },
    Slack { token: Secret, user: String },
}

/// The mail server, with its password, for the sender.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MailServerTarget {
    pub host: String,
    pub port: u16,
    pub security: MailSecurity,
    pub username: Option<String>,
    pub password: Option<Secret>,
    pub from: String,
}

/// A link in a message: a label and an absolute URL, or a path when Exhale has no public
/// address.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Link {
    pub label: String,
    pub url: String,
}

/// A message, worded for its member at the moment it is sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub kind: MessageKind,
    /// One line, e.g. "Netflix charges €17.99 tomorrow".
    pub title: String,
    /// Further lines of plain text.
    pub lines: Vec<String>,
    /// Where to see it in Exhale.
    pub open: Option<Link>,
    /// For an agent's change: the activity entry's Undo.
    pub undo: Option<Link>,
    /// The batch an agent change was, for a chat's Undo button.
    pub batch: Option<String>,
    /// What a webhook receiver gets as `data`.
    pub data: serde_json::Value,
}

/// One message due now, leased to the worker that received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    pub id: i64,
    /// Unique per message, the same on every attempt (a webhook's `webhook-id`, an email's
    /// `Message-ID`), so receivers can drop a repeat.
    pub key: String,
    pub attempt: u32,
    pub target: Target,
    pub message: Message,
}

/// What came of one attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The service accepted it, with its id for the message when it gave one.
    Sent { external_id: Option<String> },
    /// Worth another try (a 429, a 5xx, a timeout), after at least this many seconds.
    Retry { after_secs: u64, error: String },
    /// It will never work as it is (a 4xx, a bad address): shown in Settings.
    Failed { error: String },
    /// The destination is gone (the bot was blocked, the endpoint answered 410): nothing more is
    /// sent there.
    Gone { error: String },
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sent { .. } => f.write_str("sent"),
            Self::Retry { error, .. } | Self::Failed { error } | Self::Gone { error } => {
                f.write_str(error)
            }
        }
    }
}

/// The store side of delivery, implemented by `app`: plans reminders, leases what is due, and
/// records what came of it. The worker in `channels` only sends.
pub trait Outbox: Send + Sync {
    /// Plans reminders up to the horizon, then leases up to `limit` messages due now.
    fn due(&self, limit: usize) -> BoxFuture<'_, Result<Vec<Delivery>, OpError>>;
    /// Records one attempt: sent, retried later with backoff, or given up and shown in
    /// Settings.
    fn finish(&self, id: i64, outcome: Outcome) -> BoxFuture<'_, Result<(), OpError>>;
    /// Resolves when there may be work: a write committed, or the next message falls due (at
    /// the latest after a few minutes, so the planner runs).
    fn wait(&self) -> BoxFuture<'_, ()>;
}

/// Who reads a calendar feed, as its secret address finds them: the member, with read rights.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeedReader {
    pub caller: crate::Caller,
    pub member_name: String,
    pub show_amounts: bool,
}

/// Calendar feeds by their secret address, implemented by `app`.
pub trait CalendarFeeds: Send + Sync {
    /// The feed's reader, or `None` for an address that is unknown or was revoked.
    fn feed_reader<'a>(
        &'a self,
        secret: &'a str,
    ) -> BoxFuture<'a, Result<Option<FeedReader>, OpError>>;
}

/// A household's configured chat bot, with its token, for the chat task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatBot {
    pub household_id: i64,
    pub kind: ChatKind,
    /// Telegram's bot token; Slack's bot token (`xoxb-`).
    pub token: Secret,
    /// Slack's app-level token (`xapp-`), for Socket Mode.
    pub app_token: Option<Secret>,
    /// Telegram: the next `getUpdates` offset, kept across restarts.
    pub offset: i64,
    /// Telegram in webhook mode: where Telegram sends updates and the secret it sends with them.
    pub webhook: Option<BotWebhook>,
}

/// A Telegram webhook: Exhale's address for one household's updates, and the secret header
/// Telegram echoes (compared in constant time; anything else is refused).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BotWebhook {
    pub url: String,
    pub secret: Secret,
}

/// The path Telegram posts a household's updates to, under Exhale's public origin.
pub fn telegram_webhook_path(household_id: i64) -> String {
    format!("/telegram/{household_id}/updates")
}

/// What the chat task needs of the store, implemented by `app`: the bots, their state, and
/// which member a chat belongs to. What a linked member may see and do is then the catalog's.
pub trait Chats: Send + Sync {
    /// Every household's configured bot.
    fn chat_bots(&self) -> BoxFuture<'_, Result<Vec<ChatBot>, OpError>>;
    /// One household's bot of a kind, read now (a Telegram webhook post checks its secret
    /// against this, on whichever instance it lands).
    fn chat_bot(
        &self,
        household_id: i64,
        kind: ChatKind,
    ) -> BoxFuture<'_, Result<Option<ChatBot>, OpError>>;
    /// Records how reaching a bot went: its username, or why it failed.
    fn bot_status(
        &self,
        household_id: i64,
        kind: ChatKind,
        username: Option<String>,
        error: Option<String>,
    ) -> BoxFuture<'_, Result<(), OpError>>;
    /// Keeps the next update to read.
    fn save_offset(
        &self,
        household_id: i64,
        kind: ChatKind,
        offset: i64,
    ) -> BoxFuture<'_, Result<(), OpError>>;
    /// Links the chat at `address` to the member whose unexpired code this is (once); the
    /// member's name, or `None` for a wrong, used or expired code.
    fn link_chat<'a>(
        &'a self,
        household_id: i64,
        kind: ChatKind,
        code: &'a str,
        address: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, OpError>>;
    /// Keeps the import a document sent by `caller` was found to hold, for
    /// [`CHAT_IMPORT_MINUTES`], in the database so any instance honours the Import button; the
    /// button's key.
    fn hold_import<'a>(
        &'a self,
        caller: &'a crate::Caller,
        items: &'a [crate::import::ImportItem],
    ) -> BoxFuture<'a, Result<String, OpError>>;
    /// Keeps an import taken with [`Chats::take_import`] again under its key, after importing
    /// it failed (the database was away a moment): pressing again tries again.
    fn put_back_import<'a>(
        &'a self,
        caller: &'a crate::Caller,
        key: &'a str,
        items: &'a [crate::import::ImportItem],
    ) -> BoxFuture<'a, Result<(), OpError>>;
    /// Takes the import waiting under `key` (once): `None` when it is unknown, expired or
    /// someone else's.
    fn take_import<'a>(
        &'a self,
        caller: &'a crate::Caller,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<Vec<crate::import::ImportItem>>, OpError>>;
    /// The member a linked chat belongs to, acting as themselves through the chat; `None` for a
    /// chat linked to nobody in this household. They read their own language, else their
    /// household's, else the one their chat client asks for (`client_language`, a code such as
    /// Telegram's "es") when Exhale speaks neither.
    fn chat_caller<'a>(
        &'a self,
        household_id: i64,
        kind: ChatKind,
        address: &'a str,
        client_language: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Option<crate::Caller>, OpError>>;
}

/// Checks `HH:MM` and returns hours and minutes.
pub fn time_of_day(text: &str) -> Option<(i8, i8)> {
    let (hours, minutes) = text.split_once(':')?;
    let digits = |part: &str| part.len() == 2 && part.bytes().all(|b| b.is_ascii_digit());
    if !digits(hours) || !digits(minutes) {
        return None;
    }
    let hours: i8 = hours.parse().ok()?;
    let minutes: i8 = minutes.parse().ok()?;
    ((0..24).contains(&hours) && (0..60).contains(&minutes)).then_some((hours, minutes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_of_day_is_two_digits_a_colon_and_two_digits() {
        assert_eq!(time_of_day("09:00"), Some((9, 0)));
        assert_eq!(time_of_day("23:59"), Some((23, 59)));
        for wrong in ["9:00", "+9:00", "24:00", "12:60", "12-00", "", "ab:cd"] {
            assert_eq!(time_of_day(wrong), None, "{wrong}");
        }
    }
}
