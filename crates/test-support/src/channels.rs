//! Services messages go to, on 127.0.0.1:0, speaking their real protocols: an ntfy server
//! (publish as JSON to the root, bearer tokens, error JSON), a webhook receiver that checks
//! Standard Webhooks signatures on its own (a bad one is a `401`), and an SMTP sink. Each records
//! what it received and answers from a script (`answer_next`), else success.

use std::{collections::VecDeque, sync::Arc};

use axum::{
    Router,
    body::Bytes,
    extract::State,
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    routing::post,
};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader},
    net::TcpListener,
    sync::Mutex,
};

use crate::TestServer;

/// One request a fake received.
#[derive(Clone, Debug)]
pub struct Received {
    pub headers: HeaderMap,
    pub body: Value,
}

#[derive(Default)]
struct Script {
    received: Vec<Received>,
    /// Statuses (with a `Retry-After`) to answer before answering with success again.
    next: VecDeque<(u16, Option<u64>)>,
}

/// A recording HTTP service with a script of answers.
#[derive(Clone)]
pub struct Fake {
    script: Arc<Mutex<Script>>,
    /// The ntfy token it requires, or the webhook secret it verifies with.
    credential: Option<String>,
}

impl Fake {
    /// The requests received so far.
    pub async fn received(&self) -> Vec<Received> {
        self.script.lock().await.received.clone()
    }

    /// Answers the next request with `status` (and `Retry-After` when given).
    pub async fn answer_next(&self, status: u16, retry_after: Option<u64>) {
        self.script.lock().await.next.push_back((status, retry_after));
    }

    async fn take(&self, headers: HeaderMap, body: &Bytes) -> Option<Response> {
        let mut script = self.script.lock().await;
        script
            .received
            .push(Received { headers, body: serde_json::from_slice(body).unwrap_or(Value::Null) });
        let (status, retry_after) = script.next.pop_front()?;
        let mut response = (
            StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            axum::Json(json!({"code": u32::from(status) * 100 + 1, "http": status, "error": "scripted failure"})),
        )
            .into_response();
        if let Some(seconds) = retry_after {
            response.headers_mut().insert(
                "retry-after",
                seconds.to_string().parse().unwrap_or(axum::http::HeaderValue::from_static("1")),
            );
        }
        Some(response)
    }
}

async fn serve(router: Router) -> TestServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
    crate::serve_router(listener, router)
}

/// An ntfy server: `POST /` with a JSON message, answered with the message as ntfy does; a
/// missing or wrong token is ntfy's `401` error.
pub async fn ntfy(token: Option<&str>) -> (TestServer, Fake) {
    let fake = Fake { script: Arc::default(), credential: token.map(str::to_owned) };
    async fn publish(State(fake): State<Fake>, headers: HeaderMap, body: Bytes) -> Response {
        let authorised = match &fake.credential {
            None => true,
            Some(token) => headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v == format!("Bearer {token}")),
        };
        if let Some(scripted) = fake.take(headers, &body).await {
            return scripted;
        }
        if !authorised {
            return (
                StatusCode::UNAUTHORIZED,
                axum::Json(json!({"code": 40101, "http": 401, "error": "unauthorized"})),
            )
                .into_response();
        }
        let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let count = fake.script.lock().await.received.len();
        axum::Json(json!({
            "id": format!("msg{count:04}"),
            "time": 1_796_112_000,
            "event": "message",
            "topic": message["topic"],
            "title": message["title"],
            "message": message["message"],
        }))
        .into_response()
    }
    let router = Router::new().route("/", post(publish)).with_state(fake.clone());
    (serve(router).await, fake)
}

/// A webhook receiver at `POST /hook` that verifies each signature with `secret` (its own
/// HMAC, not Exhale's) and answers `401` to a bad one, `204` otherwise.
pub async fn webhook(secret: &str) -> (TestServer, Fake) {
    let fake = Fake { script: Arc::default(), credential: Some(secret.to_owned()) };
    async fn receive(State(fake): State<Fake>, headers: HeaderMap, body: Bytes) -> Response {
        let header =
            |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
        let signed = format!("{}.{}.", header("webhook-id"), header("webhook-timestamp"));
        let secret = fake.credential.clone().unwrap_or_default();
        let valid = verify(&secret, signed.as_bytes(), &body, &header("webhook-signature"));
        if let Some(scripted) = fake.take(headers, &body).await {
            return scripted;
        }
        if valid {
            StatusCode::NO_CONTENT.into_response()
        } else {
            StatusCode::UNAUTHORIZED.into_response()
        }
    }
    let router = Router::new().route("/hook", post(receive)).with_state(fake.clone());
    (serve(router).await, fake)
}

/// HMAC-SHA256 as RFC 2104 writes it, over `prefix` then `body`, compared with each `v1,`
/// signature in `header`.
fn verify(secret: &str, prefix: &[u8], body: &[u8], header: &str) -> bool {
    use base64::Engine as _;
    use sha2::{Digest as _, Sha256};
    let engine = base64::engine::general_purpose::STANDARD;
    let Some(key) = secret.strip_prefix("whsec_").and_then(|k| engine.decode(k).ok()) else {
        return false;
    };
    let mut block = [0u8; 64];
    if key.len() > 64 {
        block[..32].copy_from_slice(&Sha256::digest(&key));
    } else {
        block[..key.len()].copy_from_slice(&key);
    }
    let pad = |byte: u8| block.iter().map(|b| b ^ byte).collect::<Vec<u8>>();
    let inner =
        Sha256::new().chain_update(pad(0x36)).chain_update(prefix).chain_update(body).finalize();
    let outer = Sha256::new().chain_update(pad(0x5c)).chain_update(inner).finalize();
    let expected = format!("v1,{}", engine.encode(outer));
    header.split(' ').any(|signature| signature == expected)
}

/// How the SMTP sink speaks TLS.
pub enum SinkTls {
    /// Plain, as a relay on the local network.
    None,
    /// TLS from the first byte (port 465), with the authority's certificate for `localhost`.
    Implicit(crate::TestAuthority),
    /// Plain, upgraded by STARTTLS (port 587); AUTH is offered only after the upgrade.
    StartTls(crate::TestAuthority),
}

/// An SMTP server that takes every message (220, 250 to EHLO with `AUTH PLAIN`, 235 to AUTH,
/// 250 to MAIL and RCPT, 354 to DATA, 250 after the final dot, 221 to QUIT) and keeps what came
/// after DATA, or refuses every recipient with `550` when `refuse` is set.
pub struct SmtpSink {
    pub port: u16,
    pub messages: Arc<Mutex<Vec<String>>>,
    /// What each `AUTH PLAIN` carried, decoded.
    pub logins: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What one SMTP session does.
#[derive(Clone)]
struct Session {
    messages: Arc<Mutex<Vec<String>>>,
    logins: Arc<Mutex<Vec<String>>>,
    refuse: bool,
}

impl Session {
    /// Speaks SMTP on `stream`; when the client asks for STARTTLS (and `offer_starttls`), hands
    /// the stream back to be upgraded.
    async fn run<S>(&self, stream: S, greet: bool, offer_starttls: bool) -> Option<S>
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    {
        let mut stream = BufReader::new(stream);
        if greet {
            let _ = stream.get_mut().write_all(b"220 sink.test ESMTP\r\n").await;
        }
        let mut data: Option<String> = None;
        let mut line = String::new();
        loop {
            line.clear();
            if stream.read_line(&mut line).await.ok()? == 0 {
                return None;
            }
            let text = line.trim_end_matches(['\r', '\n']).to_owned();
            if let Some(body) = data.as_mut() {
                if text == "." {
                    self.messages.lock().await.push(std::mem::take(body));
                    data = None;
                    let _ = stream.get_mut().write_all(b"250 2.0.0 Ok: queued as SINK1\r\n").await;
                } else {
                    body.push_str(text.strip_prefix('.').unwrap_or(&text));
                    body.push('\n');
                }
                continue;
            }
            let command = text.to_ascii_uppercase();
            let reply: &[u8] = if command.starts_with("EHLO") || command.starts_with("HELO") {
                if offer_starttls {
                    b"250-sink.test\r\n250-STARTTLS\r\n250 8BITMIME\r\n"
                } else {
                    b"250-sink.test\r\n250-AUTH PLAIN\r\n250 8BITMIME\r\n"
                }
            } else if command.starts_with("STARTTLS") && offer_starttls {
                let _ = stream.get_mut().write_all(b"220 2.0.0 Ready to start TLS\r\n").await;
                return Some(stream.into_inner());
            } else if let Some(encoded) = text.strip_prefix("AUTH PLAIN ") {
                use base64::Engine as _;
                let decoded = base64::engine::general_purpose::STANDARD
                    .decode(encoded.trim())
                    .unwrap_or_default();
                self.logins.lock().await.push(String::from_utf8_lossy(&decoded).into_owned());
                b"235 2.7.0 Authentication successful\r\n"
            } else if command.starts_with("RCPT") && self.refuse {
                b"550 5.1.1 No such user here\r\n"
            } else if command.starts_with("DATA") {
                data = Some(String::new());
                b"354 End data with <CR><LF>.<CR><LF>\r\n"
            } else if command.starts_with("QUIT") {
                let _ = stream.get_mut().write_all(b"221 Bye\r\n").await;
                return None;
            } else {
                b"250 Ok\r\n"
            };
            let _ = stream.get_mut().write_all(reply).await;
        }
    }
}

pub async fn smtp_sink(refuse: bool) -> SmtpSink {
    smtp_sink_with(refuse, SinkTls::None).await
}

pub async fn smtp_sink_with(refuse: bool, tls: SinkTls) -> SmtpSink {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
    let port = listener.local_addr().expect("a local address").port();
    let session = Session { messages: Arc::default(), logins: Arc::default(), refuse };
    let (messages, logins) = (session.messages.clone(), session.logins.clone());
    let tls = Arc::new(tls);
    let task = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (session, tls) = (session.clone(), tls.clone());
            tokio::spawn(async move {
                match &*tls {
                    SinkTls::None => {
                        session.run(stream, true, false).await;
                    }
                    SinkTls::Implicit(authority) => {
                        if let Ok(stream) = authority.acceptor.accept(stream).await {
                            session.run(stream, true, false).await;
                        }
                    }
                    SinkTls::StartTls(authority) => {
                        if let Some(plain) = session.run(stream, true, true).await
                            && let Ok(stream) = authority.acceptor.accept(plain).await
                        {
                            session.run(stream, false, false).await;
                        }
                    }
                }
            });
        }
    });
    SmtpSink { port, messages, logins, task }
}

/// One call the Telegram fake received: the method and its JSON body.
#[derive(Clone, Debug)]
pub struct BotCall {
    pub token: String,
    pub method: String,
    pub body: Value,
    /// The message a send or an edit made or changed.
    pub message_id: Option<i64>,
}

#[derive(Default)]
struct Telegram {
    /// Updates per bot token, with rising ids.
    updates: std::collections::HashMap<String, Vec<Value>>,
    next_update: i64,
    next_message: i64,
    calls: Vec<BotCall>,
    /// Answer the next send with 429 and this `retry_after`.
    flood: Option<u64>,
    /// Files sent to bots, by file id: their path and bytes.
    files: std::collections::HashMap<String, (String, Vec<u8>)>,
}

/// The Telegram Bot API for the given bot tokens: `getMe`, long-polled `getUpdates`,
/// `sendMessage` and `editMessageText` (refusing text over 4,096 UTF-16 units and callback data
/// over 64 bytes, as Telegram does), `answerCallbackQuery`, `sendChatAction`, `setMyCommands`,
/// `deleteWebhook`; a wrong token is `401 Unauthorized`, and `flood_next` makes the next send
/// a `429` with `retry_after`.
#[derive(Clone)]
pub struct TelegramFake {
    state: Arc<Mutex<Telegram>>,
    arrived: Arc<tokio::sync::Notify>,
    /// Woken on every call the bot makes.
    called: Arc<tokio::sync::Notify>,
    tokens: Arc<Vec<String>>,
}

fn refusal(code: u16, description: &str, retry_after: Option<u64>) -> Response {
    let mut body = json!({"ok": false, "error_code": code, "description": description});
    if let Some(seconds) = retry_after {
        body["parameters"] = json!({"retry_after": seconds});
    }
    (StatusCode::from_u16(code).unwrap_or(StatusCode::BAD_REQUEST), axum::Json(body))
        .into_response()
}

fn ok(result: Value) -> Response {
    axum::Json(json!({"ok": true, "result": result})).into_response()
}

impl TelegramFake {
    /// A private message from the user `chat_id` to the bot with `token`, whose Telegram is
    /// set to English.
    pub async fn message(&self, token: &str, chat_id: i64, text: &str) {
        self.message_in(token, chat_id, text, "en").await;
    }

    /// [`TelegramFake::message`] from a client set to `language` (Telegram's `language_code`).
    pub async fn message_in(&self, token: &str, chat_id: i64, text: &str, language: &str) {
        let mut state = self.state.lock().await;
        state.next_update += 1;
        state.next_message += 1;
        let update = json!({"update_id": 517_000_000 + state.next_update, "message": {
            "message_id": state.next_message, "date": 1_796_112_000,
            "from": {"id": chat_id, "is_bot": false, "first_name": "Ana", "language_code": language},
            "chat": {"id": chat_id, "type": "private", "first_name": "Ana"},
            "text": text,
        }});
        state.updates.entry(token.to_owned()).or_default().push(update);
        drop(state);
        self.arrived.notify_waiters();
    }

    /// A file sent to the bot by `chat_id`: a document, or a photo when `photo` is set.
    pub async fn file(&self, token: &str, chat_id: i64, name: &str, bytes: &[u8], photo: bool) {
        let mut state = self.state.lock().await;
        state.next_update += 1;
        state.next_message += 1;
        let id = format!("BQACAgIAAxkBAAI{}", state.next_update);
        let path = if photo {
            format!("photos/file_{}.jpg", state.next_update)
        } else {
            format!("documents/{name}")
        };
        state.files.insert(id.clone(), (path, bytes.to_vec()));
        let file =
            json!({"file_id": id, "file_unique_id": format!("u{id}"), "file_size": bytes.len()});
        let mut message = json!({"message_id": state.next_message, "date": 1_796_112_000,
            "from": {"id": chat_id, "is_bot": false, "first_name": "Ana"},
            "chat": {"id": chat_id, "type": "private", "first_name": "Ana"}});
        if photo {
            message["photo"] = json!([file]);
        } else {
            let mut document = file;
            document["file_name"] = json!(name);
            document["mime_type"] = json!("text/csv");
            message["document"] = document;
        }
        let update = json!({"update_id": 517_000_000 + state.next_update, "message": message});
        state.updates.entry(token.to_owned()).or_default().push(update);
        drop(state);
        self.arrived.notify_waiters();
    }

    /// A press of the button with `data` under the bot's message `message_id`, by `from`.
    pub async fn press(&self, token: &str, from: i64, message_id: i64, data: &str) {
        let mut state = self.state.lock().await;
        state.next_update += 1;
        let update = json!({"update_id": 517_000_000 + state.next_update, "callback_query": {
            "id": format!("cbq{}", state.next_update),
            "from": {"id": from, "is_bot": false, "first_name": "Ana"},
            "message": {"message_id": message_id, "date": 1_796_112_000, "chat": {"id": from, "type": "private"}},
            "chat_instance": "1", "data": data,
        }});
        state.updates.entry(token.to_owned()).or_default().push(update);
        drop(state);
        self.arrived.notify_waiters();
    }

    /// The updates for the bot with `token` that no poll has fetched, taken: what Telegram
    /// posts to a bot's webhook instead.
    pub async fn take_updates(&self, token: &str) -> Vec<Value> {
        self.state.lock().await.updates.remove(token).unwrap_or_default()
    }

    pub async fn calls(&self) -> Vec<BotCall> {
        self.state.lock().await.calls.clone()
    }

    /// The calls of `method` so far.
    pub async fn calls_of(&self, method: &str) -> Vec<BotCall> {
        self.calls().await.into_iter().filter(|c| c.method == method).collect()
    }

    /// Waits until the calls so far satisfy `done` (for work the bot does in a task of its own).
    pub async fn until(&self, done: impl Fn(&[BotCall]) -> bool) {
        loop {
            let called = self.called.notified();
            if done(&self.state.lock().await.calls) {
                return;
            }
            called.await;
        }
    }

    pub async fn flood_next(&self, retry_after: u64) {
        self.state.lock().await.flood = Some(retry_after);
    }
}

pub async fn telegram(tokens: &[&str]) -> (TestServer, TelegramFake) {
    let fake = TelegramFake {
        state: Arc::default(),
        arrived: Arc::default(),
        called: Arc::default(),
        tokens: Arc::new(tokens.iter().map(|t| (*t).to_owned()).collect()),
    };
    async fn method(
        State(fake): State<TelegramFake>,
        axum::extract::Path((bot, method)): axum::extract::Path<(String, String)>,
        body: Bytes,
    ) -> Response {
        let Some(token) = bot.strip_prefix("bot").filter(|t| fake.tokens.iter().any(|k| k == t))
        else {
            return refusal(401, "Unauthorized", None);
        };
        let body: Value = serde_json::from_slice(&body).unwrap_or(json!({}));
        if method == "getUpdates" {
            let offset = body["offset"].as_i64().unwrap_or(0);
            let wait = std::time::Duration::from_secs(body["timeout"].as_u64().unwrap_or(0));
            let pending = |state: &Telegram| -> Vec<Value> {
                state
                    .updates
                    .get(token)
                    .map(|all| {
                        all.iter()
                            .filter(|u| u["update_id"].as_i64().unwrap_or(0) >= offset)
                            .cloned()
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let notified = fake.arrived.notified();
            let found = pending(&*fake.state.lock().await);
            if !found.is_empty() || wait.is_zero() {
                return ok(json!(found));
            }
            let _ = tokio::time::timeout(wait, notified).await;
            return ok(json!(pending(&*fake.state.lock().await)));
        }
        let mut state = fake.state.lock().await;
        state.calls.push(BotCall {
            token: token.to_owned(),
            method: method.clone(),
            body: body.clone(),
            message_id: None,
        });
        fake.called.notify_waiters();
        match method.as_str() {
            "getMe" => ok(
                json!({"id": 9001, "is_bot": true, "first_name": "Exhale", "username": "exhale_test_bot"}),
            ),
            "sendMessage" | "editMessageText" => {
                if let Some(seconds) = state.flood.take() {
                    return refusal(
                        429,
                        &format!("Too Many Requests: retry after {seconds}"),
                        Some(seconds),
                    );
                }
                let text = body["text"].as_str().unwrap_or_default();
                let units = text.encode_utf16().count();
                if units == 0 || units > 4096 {
                    return refusal(400, "Bad Request: message text is empty or too long", None);
                }
                let buttons =
                    body["reply_markup"]["inline_keyboard"].as_array().cloned().unwrap_or_default();
                if buttons.iter().flat_map(|row| row.as_array().cloned().unwrap_or_default()).any(
                    |b| b["callback_data"].as_str().is_some_and(|d| d.is_empty() || d.len() > 64),
                ) {
                    return refusal(400, "Bad Request: BUTTON_DATA_INVALID", None);
                }
                let message_id = match body["message_id"].as_i64() {
                    Some(id) => id,
                    None => {
                        state.next_message += 1;
                        state.next_message
                    }
                };
                if let Some(call) = state.calls.last_mut() {
                    call.message_id = Some(message_id);
                }
                ok(
                    json!({"message_id": message_id, "date": 1_796_112_000, "chat": {"id": body["chat_id"], "type": "private"}, "text": text}),
                )
            }
            "answerCallbackQuery" => {
                if body["text"].as_str().is_some_and(|t| t.chars().count() > 200) {
                    return refusal(400, "Bad Request: text is too long", None);
                }
                ok(json!(true))
            }
            "sendChatAction" | "setMyCommands" | "deleteWebhook" => ok(json!(true)),
            "setWebhook" => {
                let secret = body["secret_token"].as_str().unwrap_or_default();
                let url = body["url"].as_str().unwrap_or_default();
                if !url.starts_with("https://") {
                    return refusal(
                        400,
                        "Bad Request: bad webhook: An HTTPS URL must be provided for webhook",
                        None,
                    );
                }
                if secret.len() > 256
                    || !secret.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
                {
                    return refusal(
                        400,
                        "Bad Request: secret token contains unallowed characters",
                        None,
                    );
                }
                ok(json!(true))
            }
            "getFile" => match body["file_id"]
                .as_str()
                .and_then(|id| state.files.get(id).map(|f| (id.to_owned(), f.clone())))
            {
                Some((id, (path, bytes))) => ok(
                    json!({"file_id": id, "file_unique_id": format!("u{id}"), "file_size": bytes.len(), "file_path": path}),
                ),
                None => refusal(400, "Bad Request: invalid file_id", None),
            },
            _ => refusal(404, "Not Found", None),
        }
    }
    async fn download(
        State(fake): State<TelegramFake>,
        axum::extract::Path((bot, path)): axum::extract::Path<(String, String)>,
    ) -> Response {
        if !bot.strip_prefix("bot").is_some_and(|t| fake.tokens.iter().any(|k| k == t)) {
            return StatusCode::UNAUTHORIZED.into_response();
        }
        let state = fake.state.lock().await;
        match state.files.values().find(|(p, _)| *p == path) {
            Some((_, bytes)) => bytes.clone().into_response(),
            None => StatusCode::NOT_FOUND.into_response(),
        }
    }
    let router = Router::new()
        .route("/{bot}/{method}", post(method))
        .route("/file/{bot}/{*path}", axum::routing::get(download))
        .with_state(fake.clone());
    (serve(router).await, fake)
}

/// One Web API call the Slack fake received.
#[derive(Clone, Debug)]
pub struct SlackCall {
    pub method: String,
    pub body: Value,
    /// The message a post or an update made or changed.
    pub ts: Option<String>,
}

#[derive(Default)]
struct Slack {
    calls: Vec<SlackCall>,
    acks: Vec<String>,
    next: u64,
    /// Answer the next post with 429 and this `Retry-After`.
    limited: Option<u64>,
    /// The event id of the last direct message, for a re-delivery.
    last_event: String,
}

/// Slack for one app: the Web API methods Exhale calls (with Slack's error strings, and a
/// `429` with `Retry-After` on demand) and a Socket Mode WebSocket that says hello, carries the
/// envelopes a test pushes and records their acknowledgements.
#[derive(Clone)]
pub struct SlackFake {
    state: Arc<Mutex<Slack>>,
    acked: Arc<tokio::sync::Notify>,
    /// Woken on every Web API call.
    called: Arc<tokio::sync::Notify>,
    envelopes: tokio::sync::mpsc::UnboundedSender<Value>,
    app_token: String,
    bot_token: String,
    ws_url: String,
}

impl SlackFake {
    fn envelope_id(state: &mut Slack) -> String {
        state.next += 1;
        format!("dbdd0ef3-1543-4f94-bfb4-{:012}", state.next)
    }

    /// A direct message from `user` to the app; the envelope's id.
    pub async fn dm(&self, user: &str, text: &str) -> String {
        let mut state = self.state.lock().await;
        let id = Self::envelope_id(&mut state);
        state.last_event = format!("Ev{}", state.next);
        let envelope = json!({"envelope_id": id, "type": "events_api", "accepts_response_payload": false,
            "payload": {"type": "event_callback", "event_id": state.last_event,
                "event": {"type": "message", "channel": format!("D{user}"), "user": user, "text": text,
                          "ts": format!("1796112000.{:06}", state.next), "channel_type": "im"}}});
        drop(state);
        let _ = self.envelopes.send(envelope);
        id
    }

    /// The same event again under a new envelope, as Slack re-delivers.
    pub async fn redeliver_last_dm(&self, user: &str, text: &str) -> String {
        let mut state = self.state.lock().await;
        let event_id = state.last_event.clone();
        let id = Self::envelope_id(&mut state);
        let envelope = json!({"envelope_id": id, "type": "events_api", "retry_attempt": 1, "retry_reason": "timeout",
            "payload": {"type": "event_callback", "event_id": event_id,
                "event": {"type": "message", "channel": format!("D{user}"), "user": user, "text": text, "channel_type": "im"}}});
        drop(state);
        let _ = self.envelopes.send(envelope);
        id
    }

    /// A press of a button with `value` on the message `ts`, by `user`.
    pub async fn press(&self, user: &str, ts: &str, value: &str) -> String {
        let mut state = self.state.lock().await;
        let id = Self::envelope_id(&mut state);
        let envelope = json!({"envelope_id": id, "type": "interactive", "accepts_response_payload": false,
            "payload": {"type": "block_actions", "user": {"id": user}, "trigger_id": "1.2.3",
                "container": {"type": "message", "message_ts": ts, "channel_id": format!("D{user}")},
                "channel": {"id": format!("D{user}")}, "message": {"ts": ts},
                "actions": [{"action_id": "exhale.0", "block_id": "b", "value": value, "type": "button", "action_ts": "1"}]}});
        drop(state);
        let _ = self.envelopes.send(envelope);
        id
    }

    /// Slack asks the app to reconnect.
    pub fn disconnect(&self) {
        let _ = self.envelopes.send(json!({"type": "disconnect", "reason": "refresh_requested"}));
    }

    pub async fn calls(&self) -> Vec<SlackCall> {
        self.state.lock().await.calls.clone()
    }

    pub async fn limit_next(&self, retry_after: u64) {
        self.state.lock().await.limited = Some(retry_after);
    }

    /// Waits until the calls so far satisfy `done` (for work the app does in a task of its own).
    pub async fn until(&self, done: impl Fn(&[SlackCall]) -> bool) {
        loop {
            let called = self.called.notified();
            if done(&self.state.lock().await.calls) {
                return;
            }
            called.await;
        }
    }

    /// Waits until the app acknowledged the envelope `id`.
    pub async fn acknowledged(&self, id: &str) {
        loop {
            let notified = self.acked.notified();
            if self.state.lock().await.acks.iter().any(|a| a == id) {
                return;
            }
            notified.await;
        }
    }
}

pub async fn slack(app_token: &str, bot_token: &str) -> (TestServer, SlackFake) {
    use futures_util::{SinkExt as _, StreamExt as _};
    let sockets = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
    let ws_url = format!("ws://{}/link/?ticket=t1", sockets.local_addr().expect("an address"));
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel::<Value>();
    let receiver = Arc::new(Mutex::new(receiver));
    let fake = SlackFake {
        state: Arc::default(),
        acked: Arc::default(),
        called: Arc::default(),
        envelopes: sender,
        app_token: app_token.to_owned(),
        bot_token: bot_token.to_owned(),
        ws_url,
    };
    let socket_fake = fake.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = sockets.accept().await {
            let (fake, receiver) = (socket_fake.clone(), receiver.clone());
            tokio::spawn(async move {
                let Ok(ws) = tokio_tungstenite::accept_async(stream).await else { return };
                let (mut write, mut read) = ws.split();
                let hello = json!({"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A1234"},
                    "debug_info": {"host": "applink-test", "build_number": 54, "approximate_connection_time": 3600}});
                let _ = write
                    .send(tokio_tungstenite::tungstenite::Message::Text(hello.to_string().into()))
                    .await;
                let mut receiver = receiver.lock().await;
                loop {
                    tokio::select! {
                        envelope = receiver.recv() => {
                            let Some(envelope) = envelope else { return };
                            let _ = write.send(tokio_tungstenite::tungstenite::Message::Text(envelope.to_string().into())).await;
                        }
                        frame = read.next() => {
                            let Some(Ok(tokio_tungstenite::tungstenite::Message::Text(text))) = frame else { return };
                            if let Some(id) = serde_json::from_str::<Value>(&text).ok().and_then(|a| a["envelope_id"].as_str().map(str::to_owned)) {
                                fake.state.lock().await.acks.push(id);
                                fake.acked.notify_waiters();
                            }
                        }
                    }
                }
            });
        }
    });
    async fn method(
        State(fake): State<SlackFake>,
        axum::extract::Path(method): axum::extract::Path<String>,
        headers: HeaderMap,
        body: Bytes,
    ) -> Response {
        let bearer = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let wanted =
            if method == "apps.connections.open" { &fake.app_token } else { &fake.bot_token };
        if bearer != format!("Bearer {wanted}") {
            return axum::Json(json!({"ok": false, "error": "invalid_auth"})).into_response();
        }
        let body: Value = serde_json::from_slice(&body).unwrap_or(json!({}));
        let mut state = fake.state.lock().await;
        if matches!(method.as_str(), "chat.postMessage" | "chat.update")
            && let Some(seconds) = state.limited.take()
        {
            let mut response = (
                StatusCode::TOO_MANY_REQUESTS,
                axum::Json(json!({"ok": false, "error": "ratelimited"})),
            )
                .into_response();
            response.headers_mut().insert(
                "retry-after",
                seconds.to_string().parse().unwrap_or(axum::http::HeaderValue::from_static("1")),
            );
            return response;
        }
        state.calls.push(SlackCall { method: method.clone(), body: body.clone(), ts: None });
        fake.called.notify_waiters();
        let answer = match method.as_str() {
            "auth.test" => {
                json!({"ok": true, "url": "https://home.slack.com/", "team": "Home", "user": "exhale", "team_id": "T1", "user_id": "UBOT", "bot_id": "BBOT"})
            }
            "apps.connections.open" => json!({"ok": true, "url": fake.ws_url}),
            "conversations.open" => match body["users"].as_str() {
                Some(user) if !user.is_empty() => {
                    json!({"ok": true, "channel": {"id": format!("D{user}")}})
                }
                _ => json!({"ok": false, "error": "user_not_found"}),
            },
            "chat.postMessage" | "chat.update" => {
                let blocks = body["blocks"].as_array().map_or(0, Vec::len);
                if body["text"].as_str().is_none_or(str::is_empty) && blocks == 0 {
                    json!({"ok": false, "error": "no_text"})
                } else if blocks > 50 {
                    json!({"ok": false, "error": "invalid_blocks"})
                } else {
                    let ts = match body["ts"].as_str() {
                        Some(ts) => ts.to_owned(),
                        None => {
                            state.next += 1;
                            format!("1796112000.{:06}", state.next)
                        }
                    };
                    if let Some(call) = state.calls.last_mut() {
                        call.ts = Some(ts.clone());
                    }
                    json!({"ok": true, "channel": body["channel"], "ts": ts})
                }
            }
            _ => json!({"ok": false, "error": "unknown_method"}),
        };
        axum::Json(answer).into_response()
    }
    let router = Router::new().route("/api/{method}", post(method)).with_state(fake.clone());
    (serve(router).await, fake)
}
