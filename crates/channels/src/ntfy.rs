//! ntfy: a message published as JSON to the server's root (so titles with "€" or accents
//! arrive intact, which headers would not carry), with a tap opening Exhale and, for an
//! agent's change, an Undo button. Actions are `view` links to pages that ask the person to
//! sign in and confirm, so no credential ever sits on a phone.

use hyper::header::{self, HeaderName, HeaderValue};
use ops::channels::{Message, MessageKind, Outcome, Secret};
use serde_json::{Value, json};

use crate::{
    http::Http,
    outcome::{of_error, of_reply},
};

/// The server's root and the topic of a topic URL (`https://ntfy.sh/ana` → `https://ntfy.sh/`
/// and `ana`; a server under a path keeps it).
fn split_topic(topic_url: &str) -> Option<(String, String)> {
    let trimmed = topic_url.trim_end_matches('/');
    let (root, topic) = trimmed.rsplit_once('/')?;
    (!topic.is_empty() && root.contains("://") && !root.ends_with(':'))
        .then(|| (format!("{root}/"), topic.to_owned()))
}

fn is_absolute(url: &str) -> bool {
    url.starts_with("https://") || url.starts_with("http://")
}

/// The JSON ntfy publishes.
pub(crate) fn body(topic: &str, message: &Message) -> Value {
    let mut text = message.lines.join("\n");
    if text.is_empty() {
        text.clone_from(&message.title);
    }
    let mut actions = Vec::new();
    for link in message.open.iter().chain(message.undo.iter()) {
        if is_absolute(&link.url) {
            actions.push(
                json!({"action": "view", "label": link.label, "url": link.url, "clear": true}),
            );
        }
    }
    let tag = match message.kind {
        MessageKind::AgentChange => "robot",
        MessageKind::CardExpiring => "credit_card",
        MessageKind::Test => "white_check_mark",
        MessageKind::BankConsentEnding => "bank",
        _ => "moneybag",
    };
    let mut body = json!({
        "topic": topic,
        "title": message.title,
        "message": text,
        "tags": [tag],
        "actions": actions,
    });
    if let Some(open) = message.open.as_ref().filter(|l| is_absolute(&l.url)) {
        body["click"] = json!(open.url);
    }
    body
}

pub(crate) async fn send(
    http: &Http,
    topic_url: &str,
    token: Option<&Secret>,
    allow_lan: bool,
    message: &Message,
) -> Outcome {
    let Some((root, topic)) = split_topic(topic_url) else {
        return Outcome::Failed { error: "the address is not an ntfy topic URL".into() };
    };
    let mut headers = vec![(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))];
    if let Some(token) = token {
        match HeaderValue::from_str(&format!("Bearer {}", token.expose())) {
            Ok(value) => headers.push((HeaderName::from_static("authorization"), value)),
            Err(_) => {
                return Outcome::Failed { error: "the ntfy token is not valid in a header".into() };
            }
        }
    }
    let body = serde_json::to_vec(&body(&topic, message)).unwrap_or_default();
    match http.post(&root, headers, body, allow_lan).await {
        Ok(reply) => {
            let id = serde_json::from_slice::<Value>(&reply.body)
                .ok()
                .and_then(|v| v.get("id")?.as_str().map(str::to_owned));
            of_reply("ntfy", &reply, id)
        }
        Err(err) => of_error(err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_topic_url_is_a_server_and_a_topic() {
        assert_eq!(
            split_topic("https://ntfy.sh/ana"),
            Some(("https://ntfy.sh/".into(), "ana".into()))
        );
        assert_eq!(
            split_topic("https://example.net/ntfy/ana/"),
            Some(("https://example.net/ntfy/".into(), "ana".into()))
        );
        assert_eq!(split_topic("https://ntfy.sh"), None);
        assert_eq!(split_topic("ana"), None);
    }
}
