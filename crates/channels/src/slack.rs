//! Slack in Socket Mode (an app-level token, no public address needed), written by hand: the
//! Web API calls Exhale needs (`auth.test`, `apps.connections.open`, `conversations.open`,
//! `chat.postMessage`, `chat.update`) and the WebSocket of envelopes, each acknowledged at once
//! and handled once (a re-delivered event is dropped by its id). Direct messages get the same
//! chat glue as Telegram (`chat.rs`): `link <code>` links the member's Slack user, commands,
//! the assistant, Block Kit buttons; reminders and agents' changes arrive as direct messages.

use std::{collections::VecDeque, sync::Arc, time::Duration};

use futures_util::{SinkExt as _, StreamExt as _};
use hyper::header::{self, HeaderValue};
use ops::{
    Caller, OpError,
    channels::{ChatBot, ChatKind, Chats, Message, Outcome, Secret},
};
use serde_json::{Value, json};
use tokio_tungstenite::{WebSocketStream, tungstenite::Message as Frame};

use crate::{
    chat::{self, Action, ChatServices, Reply, Style, Surface},
    http::{Http, Stream},
};

/// Envelope ids remembered, to drop Slack's re-deliveries.
const REMEMBERED: usize = 256;
/// Slack truncates longer section text.
const MAX_SECTION: usize = 2900;

/// Why a Web API call failed.
#[derive(Debug)]
pub(crate) enum ApiError {
    /// `ok: false` with Slack's error string.
    Refused(String),
    /// HTTP 429: wait this long.
    Limited(u64),
    Unreachable(String),
}

impl ApiError {
    fn text(&self) -> String {
        match self {
            Self::Refused(error) => error.clone(),
            Self::Limited(seconds) => format!("rate limited for {seconds} s"),
            Self::Unreachable(text) => text.clone(),
        }
    }
}

/// Slack's Web API at `base` (Slack's own, or a test's).
#[derive(Clone)]
pub(crate) struct Api {
    http: Arc<Http>,
    base: String,
}

impl Api {
    pub(crate) fn new(http: Arc<Http>, base: &str) -> Self {
        Self { http, base: base.trim_end_matches('/').to_owned() }
    }

    pub(crate) async fn call(
        &self,
        token: &Secret,
        method: &str,
        body: Value,
    ) -> Result<Value, ApiError> {
        let url = format!("{}/{method}", self.base);
        let bearer = HeaderValue::from_str(&format!("Bearer {}", token.expose()))
            .map_err(|_| ApiError::Refused("a token is not valid in a header".into()))?;
        let headers = vec![
            (header::CONTENT_TYPE, HeaderValue::from_static("application/json; charset=utf-8")),
            (header::AUTHORIZATION, bearer),
        ];
        let bytes = serde_json::to_vec(&body).unwrap_or_default();
        // The API's address is the operator's, never a member's: it may be local (a test).
        let reply = self
            .http
            .post(&url, headers, bytes, true)
            .await
            .map_err(|err| ApiError::Unreachable(err.to_string()))?;
        if reply.status.as_u16() == 429 {
            return Err(ApiError::Limited(reply.retry_after().unwrap_or(1)));
        }
        let answer: Value = serde_json::from_slice(&reply.body).map_err(|_| {
            ApiError::Unreachable(format!("Slack answered {} without JSON", reply.status.as_u16()))
        })?;
        if answer["ok"] == json!(true) {
            Ok(answer)
        } else {
            Err(ApiError::Refused(answer["error"].as_str().unwrap_or("refused").to_owned()))
        }
    }
}

/// `&`, `<` and `>` escaped, as Slack's text formatting asks.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// A reply as Block Kit: a section of mrkdwn (the title bold, the note in italics) and an
/// actions block of buttons; and the plain text Slack shows in notifications.
fn render(reply: &Reply) -> (String, Value) {
    let mut parts = Vec::new();
    if let Some(title) = &reply.title {
        parts.push(format!("*{}*", escape(title)));
    }
    parts.extend(reply.lines.iter().map(|line| escape(line)));
    if let Some(note) = &reply.note {
        parts.push(format!("_{}_", escape(note)));
    }
    let mut section: String = parts.join("\n");
    if section.chars().count() > MAX_SECTION {
        section = section.chars().take(MAX_SECTION).collect::<String>() + "…";
    }
    let mut blocks = vec![json!({"type": "section", "text": {"type": "mrkdwn", "text": section}})];
    let buttons: Vec<Value> = reply
        .buttons
        .iter()
        .enumerate()
        .map(|(i, button)| {
            let mut element = json!({
                "type": "button",
                "text": {"type": "plain_text", "text": button.label},
                "action_id": format!("exhale.{i}"),
            });
            match &button.action {
                Action::Press(data) => element["value"] = json!(data),
                Action::Open(url) => element["url"] = json!(url),
            }
            match button.style {
                Style::Danger => element["style"] = json!("danger"),
                Style::Success => element["style"] = json!("primary"),
                Style::Primary => {}
            }
            element
        })
        .collect();
    if !buttons.is_empty() {
        blocks.push(json!({"type": "actions", "elements": buttons}));
    }
    let mut plain = reply.plain();
    if plain.is_empty() {
        plain.push('…');
    }
    (plain, json!(blocks))
}

/// The direct-message channel with a user.
async fn dm(api: &Api, token: &Secret, user: &str) -> Result<String, ApiError> {
    let opened = api.call(token, "conversations.open", json!({"users": user})).await?;
    opened["channel"]["id"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| ApiError::Refused("no channel".into()))
}

/// Sends a reminder or an agent's change to a linked Slack user, as a direct message.
pub(crate) async fn send(api: &Api, token: &Secret, user: &str, message: &Message) -> Outcome {
    let (text, blocks) = render(&chat::message(message));
    let posted = match dm(api, token, user).await {
        Ok(channel) => {
            api.call(
                token,
                "chat.postMessage",
                json!({"channel": channel, "text": text, "blocks": blocks}),
            )
            .await
        }
        Err(err) => Err(err),
    };
    match posted {
        Ok(posted) => Outcome::Sent { external_id: posted["ts"].as_str().map(str::to_owned) },
        Err(ApiError::Limited(seconds)) => {
            Outcome::Retry { after_secs: seconds, error: "Slack: ratelimited".into() }
        }
        Err(ApiError::Refused(error))
            if matches!(
                error.as_str(),
                "user_not_found" | "account_inactive" | "user_disabled" | "cannot_dm_bot"
            ) =>
        {
            Outcome::Gone { error: format!("Slack: {error}") }
        }
        Err(ApiError::Refused(error))
            if matches!(
                error.as_str(),
                "internal_error" | "fatal_error" | "service_unavailable" | "request_timeout"
            ) =>
        {
            Outcome::Retry { after_secs: 0, error: format!("Slack: {error}") }
        }
        Err(ApiError::Refused(error)) => Outcome::Failed { error: format!("Slack: {error}") },
        Err(ApiError::Unreachable(error)) => Outcome::Retry { after_secs: 0, error },
    }
}

/// A Socket Mode connection.
pub struct Socket {
    ws: WebSocketStream<Stream>,
}

/// One household's Slack app.
pub struct App {
    api: Api,
    http: Arc<Http>,
    bot: ChatBot,
    chats: Arc<dyn Chats>,
    glue: ChatServices,
    /// The app's own user, whose messages are not answered.
    bot_user: Option<String>,
    seen: VecDeque<String>,
}

/// A direct message channel, where replies go.
struct DmSurface<'a> {
    app: &'a App,
    channel: String,
}

impl Surface for DmSurface<'_> {
    type Sent = String;

    async fn send(&self, reply: &Reply) -> Option<String> {
        self.app.post(&self.channel, reply).await
    }

    async fn edit(&self, ts: &String, reply: &Reply) {
        self.app.update(&self.channel, ts, reply).await;
    }

    async fn typing(&self) {
        // A bot cannot show "typing…" in a direct message; the streamed text shows progress.
    }
}

impl App {
    pub(crate) fn new(
        api: Api,
        http: Arc<Http>,
        bot: ChatBot,
        chats: Arc<dyn Chats>,
        glue: ChatServices,
    ) -> Self {
        Self { api, http, bot, chats, glue, bot_user: None, seen: VecDeque::new() }
    }

    /// Checks the bot token with `auth.test`; records the app's user, or why it failed.
    pub async fn start(&mut self) -> Result<(), OpError> {
        match self.api.call(&self.bot.token, "auth.test", json!({})).await {
            Ok(me) => {
                self.bot_user = me["user_id"].as_str().map(str::to_owned);
                self.chats
                    .bot_status(self.bot.household_id, ChatKind::Slack, self.bot_user.clone(), None)
                    .await
            }
            Err(err) => {
                let error = match &err {
                    ApiError::Refused(code) if code == "invalid_auth" || code == "not_authed" => {
                        chat::say(&ops::Text::new(
                            "Slack does not accept the bot token; copy it again from OAuth & Permissions.",
                        ))
                    }
                    other => other.text(),
                };
                self.chats
                    .bot_status(self.bot.household_id, ChatKind::Slack, None, Some(error))
                    .await
            }
        }
    }

    /// Opens a Socket Mode connection with the app-level token.
    pub async fn connect(&self) -> Result<Socket, String> {
        let Some(app_token) = &self.bot.app_token else {
            return Err("no app-level token".into());
        };
        let opened = self
            .api
            .call(app_token, "apps.connections.open", json!({}))
            .await
            .map_err(|err| err.text())?;
        let url = opened["url"].as_str().ok_or("no socket address")?.to_owned();
        let stream = self.http.open(&url).await.map_err(|err| err.to_string())?;
        let (ws, _) = tokio_tungstenite::client_async(url.as_str(), stream)
            .await
            .map_err(|err| err.to_string())?;
        Ok(Socket { ws })
    }

    /// Reads frames until one envelope is handled; `false` when Slack asked to reconnect or the
    /// socket closed.
    pub async fn next(&mut self, socket: &mut Socket) -> Result<bool, OpError> {
        loop {
            let Some(frame) = socket.ws.next().await else { return Ok(false) };
            let text = match frame {
                Ok(Frame::Text(text)) => text.to_string(),
                Ok(Frame::Ping(payload)) => {
                    let _ = socket.ws.send(Frame::Pong(payload)).await;
                    continue;
                }
                Ok(Frame::Close(_)) | Err(_) => return Ok(false),
                Ok(_) => continue,
            };
            let Ok(envelope) = serde_json::from_str::<Value>(&text) else { continue };
            match envelope["type"].as_str().unwrap_or_default() {
                "hello" => continue,
                "disconnect" => return Ok(false),
                _ => {}
            }
            // Acknowledged first, within Slack's three seconds, then handled.
            if let Some(id) = envelope["envelope_id"].as_str() {
                let ack = json!({"envelope_id": id}).to_string();
                let _ = socket.ws.send(Frame::Text(ack.into())).await;
            }
            let key = envelope["payload"]["event_id"]
                .as_str()
                .or(envelope["envelope_id"].as_str())
                .unwrap_or_default()
                .to_owned();
            if self.seen.contains(&key) {
                return Ok(true);
            }
            self.seen.push_back(key);
            if self.seen.len() > REMEMBERED {
                self.seen.pop_front();
            }
            match envelope["type"].as_str().unwrap_or_default() {
                // Slack does not say the person's language; a linked member's own is used.
                "events_api" => {
                    chat::answer_in(None, self.event(&envelope["payload"]["event"])).await?
                }
                "interactive" => {
                    chat::answer_in(None, self.interaction(&envelope["payload"])).await?
                }
                _ => {}
            }
            return Ok(true);
        }
    }

    /// Connects and handles envelopes until the task is stopped, reconnecting when Slack asks.
    pub async fn run(mut self) {
        if let Err(err) = self.start().await {
            tracing::warn!(code = err.code(), "starting a Slack app failed");
        }
        loop {
            match self.connect().await {
                Ok(mut socket) => loop {
                    match self.next(&mut socket).await {
                        Ok(true) => {}
                        Ok(false) => break,
                        Err(err) => tracing::warn!(code = err.code(), "a Slack envelope failed"),
                    }
                },
                Err(error) => {
                    let _ = self
                        .chats
                        .bot_status(self.bot.household_id, ChatKind::Slack, None, Some(error))
                        .await;
                    tokio::time::sleep(Duration::from_secs(30)).await;
                }
            }
        }
    }

    async fn post(&self, channel: &str, reply: &Reply) -> Option<String> {
        let (text, blocks) = render(reply);
        match self
            .api
            .call(
                &self.bot.token,
                "chat.postMessage",
                json!({"channel": channel, "text": text, "blocks": blocks}),
            )
            .await
        {
            Ok(posted) => posted["ts"].as_str().map(str::to_owned),
            Err(err) => {
                tracing::warn!(error = %err.text(), "a Slack reply was not posted");
                None
            }
        }
    }

    async fn update(&self, channel: &str, ts: &str, reply: &Reply) {
        let (text, blocks) = render(reply);
        let body = json!({"channel": channel, "ts": ts, "text": text, "blocks": blocks});
        if let Err(err) = self.api.call(&self.bot.token, "chat.update", body).await {
            tracing::warn!(error = %err.text(), "a Slack message was not updated");
        }
    }

    /// The member linked to this Slack user, now the chat's reader; when nobody is, the
    /// direct message says how to link and there is no caller.
    async fn linked_caller(
        &self,
        surface: &DmSurface<'_>,
        user: &str,
    ) -> Result<Option<Caller>, OpError> {
        let caller =
            self.chats.chat_caller(self.bot.household_id, ChatKind::Slack, user, None).await?;
        match &caller {
            Some(caller) => chat::read_by(caller),
            None => {
                surface.send(&chat::not_linked()).await;
            }
        }
        Ok(caller)
    }

    /// A direct message from a person (never the app's own, an edit or a deletion).
    async fn event(&self, event: &Value) -> Result<(), OpError> {
        let own =
            event["user"].as_str() == self.bot_user.as_deref() || event.get("bot_id").is_some();
        if event["type"] != "message"
            || event["channel_type"] != "im"
            || event.get("subtype").is_some()
            || own
        {
            return Ok(());
        }
        let (Some(user), Some(channel)) = (event["user"].as_str(), event["channel"].as_str())
        else {
            return Ok(());
        };
        let surface = DmSurface { app: self, channel: channel.to_owned() };
        let text = event["text"].as_str().unwrap_or_default().trim();
        if let Some(code) = text.strip_prefix("link ").map(str::trim).filter(|c| !c.is_empty()) {
            let name =
                self.chats.link_chat(self.bot.household_id, ChatKind::Slack, code, user).await?;
            surface.send(&chat::linked(name.as_deref())).await;
            return Ok(());
        }
        let Some(caller) = self.linked_caller(&surface, user).await? else { return Ok(()) };
        self.glue.on_text(&surface, &caller, text).await;
        Ok(())
    }

    /// A button press (`block_actions`): acted on as the member who pressed.
    async fn interaction(&self, payload: &Value) -> Result<(), OpError> {
        if payload["type"] != "block_actions" {
            return Ok(());
        }
        let Some(user) = payload["user"]["id"].as_str() else { return Ok(()) };
        let channel = payload["container"]["channel_id"]
            .as_str()
            .or(payload["channel"]["id"].as_str())
            .unwrap_or_default()
            .to_owned();
        let ts = payload["container"]["message_ts"]
            .as_str()
            .or(payload["message"]["ts"].as_str())
            .unwrap_or_default()
            .to_owned();
        // A link button (Open in Exhale) is reported too, without a value: nothing to do.
        let Some(data) = payload["actions"][0]["value"].as_str().filter(|v| !v.is_empty()) else {
            return Ok(());
        };
        let surface = DmSurface { app: self, channel: channel.clone() };
        let Some(caller) = self.linked_caller(&surface, user).await? else { return Ok(()) };
        match self.glue.on_press(&caller, data).await {
            Ok(reply) => self.update(&channel, &ts, &reply).await,
            Err(note) => {
                surface.send(&Reply::text(note)).await;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_buttons_carry_their_data() {
        let reply = Reply {
            title: Some("Tom & Jerry <3".into()),
            lines: vec!["a".into()],
            note: None,
            buttons: vec![chat::Button {
                label: "Undo".into(),
                action: Action::Press("u:abc".into()),
                style: Style::Danger,
            }],
        };
        let (plain, blocks) = render(&reply);
        assert_eq!(plain, "Tom & Jerry <3\na");
        assert_eq!(blocks[0]["text"]["text"], "*Tom &amp; Jerry &lt;3*\na");
        assert_eq!(blocks[1]["elements"][0]["value"], "u:abc");
        assert_eq!(blocks[1]["elements"][0]["style"], "danger");
    }
}
