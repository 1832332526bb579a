//! Telegram over the Bot API, written by hand (a dozen methods): sending reminders and
//! agents' changes with an Undo button, and the bot's side of the chat: `/start <code>` links a
//! private chat to the member who made the code, commands read through the catalog as that
//! member, free text goes to the assistant (typing, the answer edited in place as it streams,
//! its cards as Confirm, Discard and Undo buttons), and every button press is answered and
//! checked again: a chat linked to nobody, or a button that is not Exhale's, gets nothing.
//!
//! Updates come by long polling (`getUpdates`; the offset is saved after each batch, so an
//! update is handled once across restarts) or, when an owner chooses it, by a webhook with a
//! secret header (`Channels::webhook_router`). Text is HTML (three characters to escape); a `429`
//! is waited out for its `retry_after`.

use std::{sync::Arc, time::Duration};

use hyper::header::{self, HeaderValue};
use ops::{
    OpError, Text,
    channels::{ChatBot, ChatKind, Chats, Message, Outcome, Secret},
};
use serde_json::{Value, json};

use crate::{
    chat::{self, Action, ChatServices, Reply, Style, Surface},
    email::escape_html,
    http::Http,
};

/// How long one `getUpdates` waits for something to happen.
const POLL_SECS: u64 = 50;
/// The largest file a bot may download.
const MAX_FILE_BYTES: usize = 20 * 1000 * 1000;

/// A file sent to the bot: a document, or the largest size of a photo.
struct Attachment {
    id: String,
    size: Option<usize>,
}

fn attachment(message: &Value) -> Option<Attachment> {
    let file = match (message.get("document"), message["photo"].as_array()) {
        (Some(document), _) => document,
        (None, Some(sizes)) => sizes.last()?,
        _ => return None,
    };
    Some(Attachment {
        id: file["file_id"].as_str()?.to_owned(),
        size: file["file_size"].as_u64().and_then(|s| usize::try_from(s).ok()),
    })
}

/// Telegram's limit on a message's text, in UTF-16 code units; answers are cut shorter.
const MAX_TEXT: usize = 4000;

/// Why a Bot API call failed.
#[derive(Debug)]
pub(crate) enum ApiError {
    /// Telegram answered `ok: false`.
    Refused { code: u16, description: String, retry_after: Option<u64> },
    /// Nothing (usable) answered.
    Unreachable(String),
}

impl ApiError {
    fn text(&self) -> String {
        match self {
            Self::Refused { description, .. } => description.clone(),
            Self::Unreachable(text) => text.clone(),
        }
    }
}

/// The Bot API at `base` (Telegram's own, or a test's).
#[derive(Clone)]
pub(crate) struct Api {
    http: Arc<Http>,
    base: String,
}

impl Api {
    pub(crate) fn new(http: Arc<Http>, base: &str) -> Self {
        Self { http, base: base.trim_end_matches('/').to_owned() }
    }

    /// One method call; its `result`, or why not. A 429 is returned, not waited out: the caller
    /// decides.
    pub(crate) async fn call(
        &self,
        token: &Secret,
        method: &str,
        body: Value,
        wait: Duration,
    ) -> Result<Value, ApiError> {
        let url = format!("{}/bot{}/{method}", self.base, token.expose());
        let headers = vec![(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))];
        let bytes = serde_json::to_vec(&body).unwrap_or_default();
        // The API's address is the operator's, never a member's: it may be local (a test).
        let reply =
            self.http.post_within(&url, headers, bytes, true, wait).await.map_err(|err| {
                // The token is in the URL: only the error's words, never the address.
                ApiError::Unreachable(match err {
                    crate::http::HttpError::Refused(_) | crate::http::HttpError::Unreachable(_) => {
                        chat::say(&Text::new("Telegram could not be reached"))
                    }
                })
            })?;
        let answer: Value = serde_json::from_slice(&reply.body).map_err(|_| {
            ApiError::Unreachable(format!(
                "Telegram answered {} without JSON",
                reply.status.as_u16()
            ))
        })?;
        if answer["ok"] == json!(true) {
            return Ok(answer["result"].clone());
        }
        Err(ApiError::Refused {
            code: u16::try_from(answer["error_code"].as_u64().unwrap_or(0)).unwrap_or(0),
            description: answer["description"].as_str().unwrap_or("refused").to_owned(),
            retry_after: answer["parameters"]["retry_after"].as_u64(),
        })
    }

    /// A call made again after a 429's `retry_after` (once), as Telegram asks.
    async fn call_patiently(
        &self,
        token: &Secret,
        method: &str,
        body: Value,
    ) -> Result<Value, ApiError> {
        let wait = Duration::from_secs(15);
        match self.call(token, method, body.clone(), wait).await {
            Err(ApiError::Refused { code: 429, retry_after, .. }) => {
                tokio::time::sleep(Duration::from_secs(retry_after.unwrap_or(1).min(30))).await;
                self.call(token, method, body, wait).await
            }
            other => other,
        }
    }
}

/// A reply as Telegram's HTML (the title bold, the note in italics, text cut to fit) and its
/// inline keyboard.
fn render(reply: &Reply) -> (String, Value) {
    // Telegram's limit counts the text as shown, after the tags: the lines are cut as plain
    // text, then escaped, so a cut never splits an entity or drops a closing tag.
    let units = |text: &str| text.encode_utf16().count();
    let title = reply.title.as_deref().map(|t| cut_to(t, 200));
    let note = reply.note.as_deref().map(|n| cut_to(n, 300));
    let room = MAX_TEXT
        .saturating_sub(title.as_deref().map_or(0, units) + note.as_deref().map_or(0, units) + 2);
    let lines = cut_to(&reply.lines.join("\n"), room);
    let mut parts = Vec::new();
    if let Some(title) = &title {
        parts.push(format!("<b>{}</b>", escape_html(title)));
    }
    if !lines.is_empty() {
        parts.push(escape_html(&lines));
    }
    if let Some(note) = &note {
        parts.push(format!("<i>{}</i>", escape_html(note)));
    }
    let row: Vec<Value> = reply
        .buttons
        .iter()
        .map(|button| {
            let style = match button.style {
                Style::Primary => "primary",
                Style::Success => "success",
                Style::Danger => "danger",
            };
            match &button.action {
                Action::Press(data) => {
                    json!({"text": button.label, "callback_data": data, "style": style})
                }
                Action::Open(url) => json!({"text": button.label, "url": url}),
            }
        })
        .collect();
    let keyboard = json!({"inline_keyboard": if row.is_empty() { vec![] } else { vec![row] }});
    (parts.join("\n"), keyboard)
}

/// What `sendMessage` (and, with a `message_id`, `editMessageText`) is given to show a reply
/// in a chat: its HTML without link previews, and its buttons.
fn message_body(chat_id: i64, reply: &Reply) -> Value {
    let (text, keyboard) = render(reply);
    json!({
        "chat_id": chat_id,
        "text": text,
        "parse_mode": "HTML",
        "link_preview_options": {"is_disabled": true},
        "reply_markup": keyboard,
    })
}

/// Sends a reminder or an agent's change to a linked chat.
pub(crate) async fn send(api: &Api, token: &Secret, chat_id: i64, message: &Message) -> Outcome {
    let body = message_body(chat_id, &chat::message(message));
    match api.call(token, "sendMessage", body, Duration::from_secs(15)).await {
        Ok(sent) => {
            Outcome::Sent { external_id: sent["message_id"].as_i64().map(|id| id.to_string()) }
        }
        Err(ApiError::Refused { code: 429, retry_after, description }) => {
            Outcome::Retry { after_secs: retry_after.unwrap_or(1), error: description }
        }
        Err(ApiError::Refused { description, .. })
            if description.contains("bot was blocked")
                || description.contains("chat not found")
                || description.contains("user is deactivated") =>
        {
            Outcome::Gone { error: description }
        }
        Err(ApiError::Refused { code, description, .. }) if code >= 500 => {
            Outcome::Retry { after_secs: 0, error: description }
        }
        Err(ApiError::Refused { description, .. }) => Outcome::Failed { error: description },
        Err(ApiError::Unreachable(error)) => Outcome::Retry { after_secs: 0, error },
    }
}

/// One household's bot answering its chats.
pub struct Bot {
    api: Api,
    bot: ChatBot,
    chats: Arc<dyn Chats>,
    glue: ChatServices,
    /// The last poll failed (and Settings says why).
    failing: bool,
}

/// One chat of the bot, where replies go.
struct ChatSurface<'a> {
    bot: &'a Bot,
    chat_id: i64,
}

impl Surface for ChatSurface<'_> {
    type Sent = i64;

    async fn send(&self, reply: &Reply) -> Option<i64> {
        self.bot.say(self.chat_id, reply).await
    }

    async fn edit(&self, sent: &i64, reply: &Reply) {
        self.bot.edit(self.chat_id, *sent, reply).await;
    }

    async fn typing(&self) {
        let body = json!({"chat_id": self.chat_id, "action": "typing"});
        let _ = self
            .bot
            .api
            .call(&self.bot.bot.token, "sendChatAction", body, Duration::from_secs(10))
            .await;
    }
}

/// The commands the bot lists in Telegram's menu, described in `language`.
fn commands(language: i18n::Language) -> Value {
    let say = |text: Text| i18n::say(language, &text);
    json!([
        {"command": "upcoming", "description": say(Text::new("Charges in the next two weeks"))},
        {"command": "totals", "description": say(Text::new("What subscriptions cost a month and a year"))},
        {"command": "subscriptions", "description": say(Text::new("Your subscriptions"))},
        {"command": "undo", "description": say(Text::new("Undo the last change"))},
        {"command": "help", "description": say(Text::new("What this bot does"))},
    ])
}

impl Bot {
    pub(crate) fn new(api: Api, bot: ChatBot, chats: Arc<dyn Chats>, glue: ChatServices) -> Self {
        Self { api, bot, chats, glue, failing: false }
    }

    fn kind(&self) -> ChatKind {
        self.bot.kind
    }

    /// Checks the token with `getMe` and sets the command menu; records the bot's username or
    /// why it failed, for Settings.
    pub async fn start(&self) -> Result<(), OpError> {
        let token = &self.bot.token;
        match self.api.call(token, "getMe", json!({}), Duration::from_secs(15)).await {
            Ok(me) => {
                let username = me["username"].as_str().map(str::to_owned);
                self.chats.bot_status(self.bot.household_id, self.kind(), username, None).await?;
                // English for everyone, and each language Exhale speaks for clients set to it.
                for language in i18n::Language::ALL {
                    let mut body = json!({"commands": commands(*language)});
                    if *language != i18n::Language::English {
                        body["language_code"] = json!(language.code());
                    }
                    let wait = Duration::from_secs(15);
                    let _ = self.api.call(token, "setMyCommands", body, wait).await;
                }
                // Long polling and a webhook exclude each other: one is set, the other cleared.
                let wait = Duration::from_secs(15);
                let set = match &self.bot.webhook {
                    Some(hook) => {
                        let body = json!({
                            "url": hook.url,
                            "secret_token": hook.secret.expose(),
                            "allowed_updates": ["message", "callback_query"],
                        });
                        self.api.call(token, "setWebhook", body, wait).await
                    }
                    None => self.api.call(token, "deleteWebhook", json!({}), wait).await,
                };
                if let Err(err) = set {
                    let error = chat::say(
                        &Text::new("Telegram refused the webhook: {error}")
                            .with("error", err.text()),
                    );
                    self.chats
                        .bot_status(self.bot.household_id, self.kind(), None, Some(error))
                        .await?;
                }
                Ok(())
            }
            Err(err) => {
                let error = match &err {
                    ApiError::Refused { code: 401, .. } => chat::say(&Text::new(
                        "Telegram does not know this bot token; paste it again from @BotFather.",
                    )),
                    other => other.text(),
                };
                self.chats.bot_status(self.bot.household_id, self.kind(), None, Some(error)).await
            }
        }
    }

    /// Reads and handles one batch of updates, waiting up to `wait_secs` for one; returns how
    /// many were handled.
    pub async fn poll_once(&mut self, wait_secs: u64) -> Result<usize, OpError> {
        let body = json!({
            "offset": self.bot.offset,
            "timeout": wait_secs,
            "allowed_updates": ["message", "callback_query"],
        });
        let deadline = Duration::from_secs(wait_secs + 10);
        let updates = match self.api.call(&self.bot.token, "getUpdates", body, deadline).await {
            Ok(updates) => {
                if std::mem::take(&mut self.failing) {
                    // Reached again: Settings stops showing the old error.
                    self.chats.bot_status(self.bot.household_id, self.kind(), None, None).await?;
                }
                updates
            }
            Err(ApiError::Refused { code: 429, retry_after, .. }) => {
                tokio::time::sleep(Duration::from_secs(retry_after.unwrap_or(1).min(60))).await;
                return Ok(0);
            }
            Err(err) => {
                self.failing = true;
                self.chats
                    .bot_status(self.bot.household_id, self.kind(), None, Some(err.text()))
                    .await?;
                tokio::time::sleep(Duration::from_secs(5)).await;
                return Ok(0);
            }
        };
        let updates = updates.as_array().cloned().unwrap_or_default();
        for update in &updates {
            if let Some(id) = update["update_id"].as_i64() {
                // Past this one whatever happens: an update that fails is not retried forever.
                self.bot.offset = self.bot.offset.max(id + 1);
            }
            if let Err(err) = self.answer(update).await {
                tracing::warn!(code = err.code(), "a Telegram update failed");
            }
        }
        if !updates.is_empty() {
            self.chats.save_offset(self.bot.household_id, self.kind(), self.bot.offset).await?;
        }
        Ok(updates.len())
    }

    /// Whether this bot takes its updates by webhook.
    pub fn by_webhook(&self) -> bool {
        self.bot.webhook.is_some()
    }

    /// Whether a webhook post carries this bot's secret header (compared in constant time).
    pub fn accepts(&self, secret: Option<&str>) -> bool {
        let Some(hook) = &self.bot.webhook else { return false };
        same(secret.unwrap_or_default().as_bytes(), hook.secret.expose().as_bytes())
    }

    /// Handles one update Telegram posted.
    pub async fn handle_update(&self, update: &Value) {
        if let Err(err) = self.answer(update).await {
            tracing::warn!(code = err.code(), "a Telegram update failed");
        }
    }

    /// Polls until the task is stopped.
    pub async fn run(mut self) {
        if let Err(err) = self.start().await {
            tracing::warn!(code = err.code(), "starting a Telegram bot failed");
        }
        loop {
            if let Err(err) = self.poll_once(POLL_SECS).await {
                tracing::warn!(code = err.code(), "polling Telegram failed");
                tokio::time::sleep(Duration::from_secs(5)).await;
            }
        }
    }

    async fn say(&self, chat_id: i64, reply: &Reply) -> Option<i64> {
        let body = message_body(chat_id, reply);
        match self.api.call_patiently(&self.bot.token, "sendMessage", body).await {
            Ok(sent) => sent["message_id"].as_i64(),
            Err(err) => {
                tracing::warn!(error = %err.text(), "a Telegram reply was not sent");
                None
            }
        }
    }

    async fn edit(&self, chat_id: i64, message_id: i64, reply: &Reply) {
        let mut body = message_body(chat_id, reply);
        body["message_id"] = json!(message_id);
        match self.api.call_patiently(&self.bot.token, "editMessageText", body).await {
            Ok(_) => {}
            // The text was the same: nothing to do.
            Err(ApiError::Refused { description, .. })
                if description.contains("message is not modified") => {}
            Err(err) => tracing::warn!(error = %err.text(), "a Telegram message was not edited"),
        }
    }

    /// Handles one update in the language of whoever sent it.
    async fn answer(&self, update: &Value) -> Result<(), OpError> {
        let sender = update.get("message").or_else(|| update.get("callback_query"));
        let client_language = sender.and_then(|s| s["from"]["language_code"].as_str());
        chat::answer_in(client_language, self.handle(update)).await
    }

    async fn handle(&self, update: &Value) -> Result<(), OpError> {
        if let Some(press) = update.get("callback_query") {
            return self.pressed(press).await;
        }
        let Some(message) = update.get("message") else { return Ok(()) };
        // Only private chats: a group would show one member's money to everyone in it.
        if message["chat"]["type"] != "private" {
            return Ok(());
        }
        let Some(chat_id) = message["chat"]["id"].as_i64() else { return Ok(()) };
        if message["from"]["id"].as_i64() != Some(chat_id) {
            return Ok(());
        }
        let text = message["text"].as_str().unwrap_or_default().trim();
        if let Some(code) = text.strip_prefix("/start").map(str::trim).filter(|c| !c.is_empty()) {
            let name = self
                .chats
                .link_chat(self.bot.household_id, self.kind(), code, &chat_id.to_string())
                .await?;
            self.say(chat_id, &chat::linked(name.as_deref())).await;
            return Ok(());
        }
        let Some(caller) = self
            .chats
            .chat_caller(
                self.bot.household_id,
                self.kind(),
                &chat_id.to_string(),
                message["from"]["language_code"].as_str(),
            )
            .await?
        else {
            self.say(chat_id, &chat::not_linked()).await;
            return Ok(());
        };
        chat::read_by(&caller);
        let surface = ChatSurface { bot: self, chat_id };
        if let Some(file) = attachment(message) {
            match self.fetch(&file).await {
                Ok(bytes) => self.glue.on_document(&surface, &caller, bytes).await,
                Err(why) => {
                    surface.send(&Reply::text(why)).await;
                }
            }
            return Ok(());
        }
        self.glue.on_text(&surface, &caller, text).await;
        Ok(())
    }

    /// Downloads an attachment (`getFile`, then the file within the hour Telegram keeps it).
    async fn fetch(&self, file: &Attachment) -> Result<Vec<u8>, String> {
        let too_large = || {
            chat::say(&Text::new(
                "That file is larger than the 20 MB a bot can fetch; export a shorter period.",
            ))
        };
        if file.size.is_some_and(|size| size > MAX_FILE_BYTES) {
            return Err(too_large());
        }
        let found = self
            .api
            .call(&self.bot.token, "getFile", json!({"file_id": file.id}), Duration::from_secs(15))
            .await
            .map_err(|err| err.text())?;
        let path = found["file_path"].as_str().ok_or_else(too_large)?;
        let url = format!("{}/file/bot{}/{path}", self.api.base, self.bot.token.expose());
        match self.api.http.download(&url, MAX_FILE_BYTES, Duration::from_secs(60)).await {
            Ok(reply) if reply.status.is_success() => Ok(reply.body.to_vec()),
            Ok(_) => Err(chat::say(&Text::new("Telegram did not give the file; send it again."))),
            Err(crate::http::HttpError::Refused(_)) => Err(too_large()),
            Err(crate::http::HttpError::Unreachable(_)) => {
                Err(chat::say(&Text::new("Telegram could not be reached; send the file again.")))
            }
        }
    }

    /// A button press: always answered, then acted on as the chat's member.
    async fn pressed(&self, press: &Value) -> Result<(), OpError> {
        let token = &self.bot.token;
        let answer = |text: String| json!({"callback_query_id": press["id"], "text": text.chars().take(200).collect::<String>()});
        let Some(from) = press["from"]["id"].as_i64() else { return Ok(()) };
        let data = press["data"].as_str().unwrap_or_default();
        let chat_id = press["message"]["chat"]["id"].as_i64().unwrap_or(from);
        let message_id = press["message"]["message_id"].as_i64();
        let caller = self
            .chats
            .chat_caller(
                self.bot.household_id,
                self.kind(),
                &from.to_string(),
                press["from"]["language_code"].as_str(),
            )
            .await?;
        let Some(caller) = caller.filter(|_| chat_id == from) else {
            let note = chat::not_linked().plain();
            let _ = self
                .api
                .call(token, "answerCallbackQuery", answer(note), Duration::from_secs(10))
                .await;
            return Ok(());
        };
        chat::read_by(&caller);
        let (note, edited) = match self.glue.on_press(&caller, data).await {
            Ok(reply) => (chat::say(&Text::new("Done.")), Some(reply)),
            Err(error) => (error, None),
        };
        let _ = self
            .api
            .call(token, "answerCallbackQuery", answer(note), Duration::from_secs(10))
            .await;
        if let (Some(reply), Some(message_id)) = (edited, message_id) {
            self.edit(chat_id, message_id, &reply).await;
        }
        Ok(())
    }
}

/// Whether two secrets are equal, in time that does not depend on where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

/// Plain text cut to at most `max` UTF-16 units (Telegram counts in those), with "…" when cut.
fn cut_to(text: &str, max: usize) -> String {
    if text.encode_utf16().count() <= max {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut count = 0;
    for c in text.chars() {
        count += c.len_utf16();
        if count + 1 > max {
            break;
        }
        out.push(c);
    }
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_compare_whole() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd") && !same(b"abc", b"ab") && !same(b"", b"a"));
    }

    #[test]
    fn long_answers_are_cut_in_utf16_units_before_escaping() {
        let reply = Reply {
            title: Some("A & B".into()),
            lines: vec!["&".repeat(5000)],
            note: Some("note".into()),
            buttons: vec![],
        };
        let (text, _) = render(&reply);
        assert!(
            text.starts_with("<b>A &amp; B</b>\n&amp;") && text.ends_with("…\n<i>note</i>"),
            "{}",
            &text[..60]
        );
        let shown = text
            .replace("&amp;", "&")
            .replace("<b>", "")
            .replace("</b>", "")
            .replace("<i>", "")
            .replace("</i>", "");
        assert!(shown.encode_utf16().count() <= MAX_TEXT, "{}", shown.encode_utf16().count());
        assert_eq!(cut_to("💶💶💶", 4), "💶…");
        assert_eq!(cut_to("short", 10), "short");
    }
}
