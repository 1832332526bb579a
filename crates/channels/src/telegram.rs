//! Telegram over the Bot API, written by hand (a dozen methods): sending reminders and
//! agents' changes with an Undo button, and the bot's side of the chat: `/start <code>` links a
//! private chat to the member who made the code, commands read through the catalog as that
//! member, free text goes to the assistant (typing, the answer edited in place as it streams,
//! its cards as Confirm, Discard and Undo buttons), and every button press is answered and
//! checked again: a chat linked to nobody, or a button that is not Exhale's, gets nothing.
//!
//! Updates come by long polling (`getUpdates`); the offset is saved after each batch, so an
//! update is handled once across restarts. Text is HTML (three characters to escape); a `429`
//! is waited out for its `retry_after`.

use std::{sync::Arc, time::Duration};

use hyper::header::{self, HeaderValue};
use ops::{
    Caller, Catalog, Mode, OpError, Text,
    activity::{ListActivity, ListActivityInput},
    assistant::{Ask, Card, ProposalAction, ProposalStatus, Said},
    channels::{ChatBot, ChatKind, Chats, Message, Outcome, Secret},
    charges::{ListUpcomingCharges, ListUpcomingInput},
    reports::{GetSpendingSummary, SpendingSummaryInput},
    subscriptions::{ListSubscriptions, ListSubscriptionsInput},
};
use serde_json::{Value, json};

use crate::{email::escape_html, http::Http};

/// How long one `getUpdates` waits for something to happen.
const POLL_SECS: u64 = 50;
/// The most often a streaming answer is edited: Telegram tolerates about one message a second
/// per chat.
const EDIT_EVERY: Duration = Duration::from_millis(1500);
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
                        Text::new("Telegram could not be reached").render()
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

/// A message's text as Telegram's HTML: the title in bold, then the lines.
fn html(message: &Message) -> String {
    let mut text = format!("<b>{}</b>", escape_html(&message.title));
    for line in &message.lines {
        text.push('\n');
        text.push_str(&escape_html(line));
    }
    text
}

/// Buttons under a message: Undo for an agent's change, and Open when Exhale has a public
/// `https` address (Telegram refuses others).
fn message_buttons(message: &Message) -> Value {
    let mut row = Vec::new();
    if let Some(batch) = &message.batch {
        row.push(json!({"text": Text::new("Undo").render(), "callback_data": format!("u:{batch}"), "style": "danger"}));
    }
    if let Some(open) = message.open.as_ref().filter(|l| l.url.starts_with("https://")) {
        row.push(json!({"text": open.label, "url": open.url}));
    }
    json!({"inline_keyboard": if row.is_empty() { vec![] } else { vec![row] }})
}

/// Sends a reminder or an agent's change to a linked chat.
pub(crate) async fn send(api: &Api, token: &Secret, chat_id: i64, message: &Message) -> Outcome {
    let body = json!({
        "chat_id": chat_id,
        "text": html(message),
        "parse_mode": "HTML",
        "link_preview_options": {"is_disabled": true},
        "reply_markup": message_buttons(message),
    });
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
    catalog: Arc<dyn Catalog>,
    assistant: Arc<dyn Ask>,
}

/// The commands the bot lists in Telegram's menu.
fn commands() -> Value {
    json!([
        {"command": "upcoming", "description": Text::new("Charges in the next two weeks").render()},
        {"command": "totals", "description": Text::new("What subscriptions cost a month and a year").render()},
        {"command": "subscriptions", "description": Text::new("Your subscriptions").render()},
        {"command": "undo", "description": Text::new("Undo the last change").render()},
        {"command": "help", "description": Text::new("What this bot does").render()},
    ])
}

fn help() -> String {
    Text::new("Commands: /upcoming, /totals, /subscriptions, /undo. Reminders and agents' changes arrive here.").render()
}

impl Bot {
    pub(crate) fn new(
        api: Api,
        bot: ChatBot,
        chats: Arc<dyn Chats>,
        catalog: Arc<dyn Catalog>,
        assistant: Arc<dyn Ask>,
    ) -> Self {
        Self { api, bot, chats, catalog, assistant }
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
                let _ = self
                    .api
                    .call(
                        token,
                        "setMyCommands",
                        json!({"commands": commands()}),
                        Duration::from_secs(15),
                    )
                    .await;
                // Long polling and a webhook exclude each other.
                let _ =
                    self.api.call(token, "deleteWebhook", json!({}), Duration::from_secs(15)).await;
                Ok(())
            }
            Err(err) => {
                let error = match &err {
                    ApiError::Refused { code: 401, .. } => Text::new(
                        "Telegram does not know this bot token; paste it again from @BotFather.",
                    )
                    .render(),
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
            Ok(updates) => updates,
            Err(ApiError::Refused { code: 429, retry_after, .. }) => {
                tokio::time::sleep(Duration::from_secs(retry_after.unwrap_or(1).min(60))).await;
                return Ok(0);
            }
            Err(err) => {
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
            if let Err(err) = self.handle(update).await {
                tracing::warn!(code = err.code(), "a Telegram update failed");
            }
        }
        if !updates.is_empty() {
            self.chats.save_offset(self.bot.household_id, self.kind(), self.bot.offset).await?;
        }
        Ok(updates.len())
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

    async fn say(&self, chat_id: i64, text: &str, buttons: Value) -> Result<Option<i64>, OpError> {
        let body = json!({
            "chat_id": chat_id,
            "text": text,
            "parse_mode": "HTML",
            "link_preview_options": {"is_disabled": true},
            "reply_markup": buttons,
        });
        match self.api.call_patiently(&self.bot.token, "sendMessage", body).await {
            Ok(sent) => Ok(sent["message_id"].as_i64()),
            Err(err) => {
                tracing::warn!(error = %err.text(), "a Telegram reply was not sent");
                Ok(None)
            }
        }
    }

    async fn edit(&self, chat_id: i64, message_id: i64, text: &str, buttons: Value) {
        let body = json!({
            "chat_id": chat_id,
            "message_id": message_id,
            "text": text,
            "parse_mode": "HTML",
            "link_preview_options": {"is_disabled": true},
            "reply_markup": buttons,
        });
        match self.api.call_patiently(&self.bot.token, "editMessageText", body).await {
            Ok(_) => {}
            // The text was the same: nothing to do.
            Err(ApiError::Refused { description, .. })
                if description.contains("message is not modified") => {}
            Err(err) => tracing::warn!(error = %err.text(), "a Telegram message was not edited"),
        }
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
            let reply = match self.chats.link_chat(self.bot.household_id, self.kind(), code, &chat_id.to_string()).await? {
                Some(name) => Text::new("Linked to Exhale as {name}. Your reminders and agents' changes will come here. {help}")
                    .with("name", escape_html(&name))
                    .with("help", help())
                    .render(),
                None => Text::new("That link did not work: it was used or it expired. Make a new one in Exhale, Settings → Reminders.").render(),
            };
            self.say(chat_id, &reply, json!({})).await?;
            return Ok(());
        }
        let Some(caller) = self
            .chats
            .chat_caller(self.bot.household_id, self.kind(), &chat_id.to_string())
            .await?
        else {
            let reply = Text::new("This chat is not linked to Exhale. In Exhale, open Settings → Reminders and link Telegram.").render();
            self.say(chat_id, &reply, json!({})).await?;
            return Ok(());
        };
        if text.is_empty() {
            let reply = Text::new(
                "Send me text: a command, or a question when the assistant is on. {help}",
            )
            .with("help", help())
            .render();
            self.say(chat_id, &reply, json!({})).await?;
            return Ok(());
        }
        let command = text.split_whitespace().next().unwrap_or_default();
        let command = command.split('@').next().unwrap_or(command);
        match command {
            "/upcoming" => self.upcoming(&caller, chat_id).await,
            "/totals" => self.totals(&caller, chat_id).await,
            "/subscriptions" => self.subscriptions(&caller, chat_id).await,
            "/undo" => self.offer_undo(&caller, chat_id).await,
            "/help" | "/start" => self.say(chat_id, &help(), json!({})).await.map(|_| ()),
            _ if self.assistant.is_on(&caller).await.unwrap_or(false) => {
                self.ask(&caller, chat_id, text).await
            }
            _ => {
                let reply = Text::new(
                    "The assistant is off in this household, so I only know commands. {help}",
                )
                .with("help", help())
                .render();
                self.say(chat_id, &reply, json!({})).await.map(|_| ())
            }
        }
    }

    async fn refusal(&self, chat_id: i64, err: &OpError) -> Result<(), OpError> {
        self.say(chat_id, &escape_html(&err.text().render()), json!({})).await.map(|_| ())
    }

    async fn upcoming(&self, caller: &Caller, chat_id: i64) -> Result<(), OpError> {
        let input = ListUpcomingInput { days: Some(14), ..Default::default() };
        let upcoming =
            match ops::call::<ListUpcomingCharges>(&*self.catalog, caller, &input, Mode::Apply)
                .await
            {
                Ok(upcoming) => upcoming,
                Err(err) => return self.refusal(chat_id, &err).await,
            };
        let mut text = format!("<b>{}</b>", Text::new("The next two weeks").render());
        if upcoming.items.is_empty() {
            text.push('\n');
            text.push_str(&Text::new("Nothing is due.").render());
        }
        for item in upcoming.items.iter().take(30) {
            text.push_str(&format!(
                "\n{} · {} · {}",
                item.charge_on,
                escape_html(&item.subscription.name),
                escape_html(&item.amount.display)
            ));
        }
        for total in &upcoming.totals {
            text.push_str(&format!(
                "\n<b>{}</b>",
                Text::new("Total {amount}").with("amount", escape_html(&total.display)).render()
            ));
        }
        self.say(chat_id, &text, json!({})).await.map(|_| ())
    }

    async fn totals(&self, caller: &Caller, chat_id: i64) -> Result<(), OpError> {
        let summary = match ops::call::<GetSpendingSummary>(
            &*self.catalog,
            caller,
            &SpendingSummaryInput::default(),
            Mode::Apply,
        )
        .await
        {
            Ok(summary) => summary,
            Err(err) => return self.refusal(chat_id, &err).await,
        };
        let mut text =
            Text::new("<b>{monthly}</b> a month, {yearly} a year, for {count} subscriptions.")
                .with("monthly", escape_html(&summary.monthly.display))
                .with("yearly", escape_html(&summary.yearly.display))
                .with("count", summary.subscription_count)
                .render();
        for group in summary.groups.iter().take(10) {
            text.push_str(&format!(
                "\n{} · {}",
                escape_html(&group.label),
                escape_html(&group.monthly.display)
            ));
        }
        self.say(chat_id, &text, json!({})).await.map(|_| ())
    }

    async fn subscriptions(&self, caller: &Caller, chat_id: i64) -> Result<(), OpError> {
        let input = ListSubscriptionsInput { limit: Some(30), ..Default::default() };
        let page = match ops::call::<ListSubscriptions>(&*self.catalog, caller, &input, Mode::Apply)
            .await
        {
            Ok(page) => page,
            Err(err) => return self.refusal(chat_id, &err).await,
        };
        let mut text = format!(
            "<b>{}</b>",
            Text::new("{count} subscriptions").with("count", page.total).render()
        );
        for item in &page.items {
            text.push_str(&format!(
                "\n{} · {} · {}",
                escape_html(&item.name),
                escape_html(&item.price.display),
                escape_html(&item.cycle)
            ));
        }
        self.say(chat_id, &text, json!({})).await.map(|_| ())
    }

    /// Offers the newest change the member may undo, behind a button.
    async fn offer_undo(&self, caller: &Caller, chat_id: i64) -> Result<(), OpError> {
        let input = ListActivityInput { limit: Some(10), ..Default::default() };
        let page =
            match ops::call::<ListActivity>(&*self.catalog, caller, &input, Mode::Apply).await {
                Ok(page) => page,
                Err(err) => return self.refusal(chat_id, &err).await,
            };
        let Some(entry) = page.items.iter().find(|entry| entry.undone_by.is_none()) else {
            return self
                .say(chat_id, &Text::new("Nothing to undo.").render(), json!({}))
                .await
                .map(|_| ());
        };
        let text =
            Text::new("Undo this? {summary}").with("summary", escape_html(&entry.summary)).render();
        let buttons = json!({"inline_keyboard": [[{"text": Text::new("Undo").render(), "callback_data": format!("u:{}", entry.batch_id), "style": "danger"}]]});
        self.say(chat_id, &text, buttons).await.map(|_| ())
    }

    /// Free text to the assistant: typing, then the answer edited in place as it is written,
    /// its cards as buttons.
    async fn ask(&self, caller: &Caller, chat_id: i64, question: &str) -> Result<(), OpError> {
        let token = &self.bot.token;
        let _ = self
            .api
            .call(
                token,
                "sendChatAction",
                json!({"chat_id": chat_id, "action": "typing"}),
                Duration::from_secs(10),
            )
            .await;
        let so_far = Arc::new(std::sync::Mutex::new(String::new()));
        let written = so_far.clone();
        let mut said = move |piece: Said| {
            if let Ok(mut text) = written.lock() {
                match piece {
                    Said::Delta { text: delta } => text.push_str(&delta),
                    Said::Restart => text.clear(),
                }
            }
        };
        let mut shown: Option<(i64, String)> = None;
        let answer = {
            let asking = self.assistant.ask(caller, question, &mut said);
            tokio::pin!(asking);
            let mut ticker = tokio::time::interval(EDIT_EVERY);
            ticker.tick().await;
            loop {
                tokio::select! {
                    answer = &mut asking => break answer,
                    _ = ticker.tick() => {
                        let text = so_far.lock().map(|t| t.clone()).unwrap_or_default();
                        if text.trim().is_empty() || shown.as_ref().is_some_and(|(_, s)| *s == text) {
                            let _ = self.api.call(token, "sendChatAction", json!({"chat_id": chat_id, "action": "typing"}), Duration::from_secs(10)).await;
                            continue;
                        }
                        let html = escape_html(&cut(&text));
                        match &shown {
                            Some((id, _)) => self.edit(chat_id, *id, &html, json!({})).await,
                            None => if let Some(id) = self.say(chat_id, &html, json!({})).await? { shown = Some((id, String::new())); },
                        }
                        if let Some((_, last)) = shown.as_mut() { *last = text; }
                    }
                }
            }
        };
        let answer = match answer {
            Ok(answer) => answer,
            Err(err) => return self.refusal(chat_id, &err).await,
        };
        let mut text = escape_html(&cut(&answer.text));
        if let Some(notice) = &answer.notice {
            text.push_str(&format!("\n<i>{}</i>", escape_html(&notice.render())));
        }
        if text.trim().is_empty() {
            text = Text::new("Done.").render();
        }
        match &shown {
            Some((id, _)) => self.edit(chat_id, *id, &text, json!({})).await,
            None => {
                self.say(chat_id, &text, json!({})).await?;
            }
        }
        for card in &answer.cards {
            self.say(chat_id, &card_text(card), card_buttons(card)).await?;
        }
        Ok(())
    }

    /// A button press: always answered, then checked as the chat's member.
    async fn pressed(&self, press: &Value) -> Result<(), OpError> {
        let token = &self.bot.token;
        let answer = |text: String| json!({"callback_query_id": press["id"], "text": text});
        let Some(from) = press["from"]["id"].as_i64() else { return Ok(()) };
        let data = press["data"].as_str().unwrap_or_default();
        let chat_id = press["message"]["chat"]["id"].as_i64().unwrap_or(from);
        let message_id = press["message"]["message_id"].as_i64();
        let Some(caller) = self
            .chats
            .chat_caller(self.bot.household_id, self.kind(), &from.to_string())
            .await?
            .filter(|_| chat_id == from)
        else {
            let _ = self
                .api
                .call(
                    token,
                    "answerCallbackQuery",
                    answer(Text::new("This chat is not linked to Exhale.").render()),
                    Duration::from_secs(10),
                )
                .await;
            return Ok(());
        };
        let (kind, id) = data.split_once(':').unwrap_or(("", ""));
        let outcome = match kind {
            "u" => {
                let input = json!({"batch_id": id});
                match self.catalog.call_json(&caller, "undo", input, Mode::Apply).await {
                    Ok(_) => Ok((Text::new("Undone.").render(), json!({}))),
                    Err(err) => Err(err.text().render()),
                }
            }
            "c" | "d" | "x" => {
                let action = match kind {
                    "c" => ProposalAction::Confirm,
                    "d" => ProposalAction::Discard,
                    _ => ProposalAction::Undo,
                };
                match self.assistant.act(&caller, id, action).await {
                    Ok(card) => Ok((card_text(&card), card_buttons(&card))),
                    Err(err) => Err(err.text().render()),
                }
            }
            _ => Err(Text::new("That button is not Exhale's.").render()),
        };
        let (note, edited) = match outcome {
            Ok((text, buttons)) => (Text::new("Done.").render(), Some((text, buttons))),
            Err(error) => (error, None),
        };
        let note: String = note.chars().take(200).collect();
        let _ = self
            .api
            .call(token, "answerCallbackQuery", answer(note), Duration::from_secs(10))
            .await;
        if let (Some((text, buttons)), Some(message_id)) = (edited, message_id) {
            self.edit(chat_id, message_id, &text, buttons).await;
        }
        Ok(())
    }
}

/// An answer cut to fit one message.
fn cut(text: &str) -> String {
    let units: usize = text.encode_utf16().count();
    if units <= MAX_TEXT {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut count = 0;
    for c in text.chars() {
        count += c.len_utf16();
        if count > MAX_TEXT - 1 {
            break;
        }
        out.push(c);
    }
    out.push('…');
    out
}

/// A proposal as a message: what Exhale will do, in Exhale's words.
fn card_text(card: &Card) -> String {
    let status = match card.status {
        ProposalStatus::Pending => Text::new("Confirm?"),
        ProposalStatus::Applied => Text::new("Done."),
        ProposalStatus::Discarded => Text::new("Discarded."),
        ProposalStatus::Undone => Text::new("Undone."),
    };
    let mut text = format!("<b>{}</b>", escape_html(&card.title));
    for line in &card.lines {
        text.push_str(&format!("\n{}", escape_html(line)));
    }
    text.push_str(&format!("\n<i>{}</i>", status.render()));
    text
}

/// A proposal's buttons, as it now stands.
fn card_buttons(card: &Card) -> Value {
    let button = |label: Text, prefix: &str, style: &str| json!({"text": label.render(), "callback_data": format!("{prefix}:{}", card.id), "style": style});
    let row = match card.status {
        ProposalStatus::Pending => vec![
            button(Text::new("Confirm"), "c", if card.destructive { "danger" } else { "success" }),
            button(Text::new("Discard"), "d", "primary"),
        ],
        ProposalStatus::Applied => vec![button(Text::new("Undo"), "x", "danger")],
        ProposalStatus::Discarded | ProposalStatus::Undone => Vec::new(),
    };
    json!({"inline_keyboard": if row.is_empty() { vec![] } else { vec![row] }})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_answers_are_cut_in_utf16_units() {
        let text = "💶".repeat(3000);
        let cut = cut(&text);
        assert!(cut.encode_utf16().count() <= MAX_TEXT, "{}", cut.encode_utf16().count());
        assert!(cut.ends_with('…'));
        assert_eq!(super::cut("short"), "short");
    }

    #[test]
    fn button_data_fits_telegrams_64_bytes() {
        let card = Card {
            id: format!("cf_{}", "a".repeat(32)),
            op: "cancel_subscription".into(),
            title: "Cancel Gym".into(),
            lines: vec![],
            destructive: true,
            said: None,
            status: ProposalStatus::Pending,
            expires_at: "2026-12-01T10:00:00Z".into(),
            audit_ids: vec![],
        };
        for row in card_buttons(&card)["inline_keyboard"].as_array().unwrap() {
            for button in row.as_array().unwrap() {
                assert!(button["callback_data"].as_str().unwrap().len() <= 64, "{button}");
            }
        }
    }
}
