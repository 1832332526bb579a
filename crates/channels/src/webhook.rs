//! Outgoing webhooks signed as Standard Webhooks say: `webhook-id` (the message's key, the
//! same on every attempt, so receivers drop a repeat), `webhook-timestamp` (seconds, when this
//! attempt is made) and `webhook-signature` (`v1,` and base64 of HMAC-SHA256 over
//! `id.timestamp.body` with the secret's bytes). The body is
//! `{"type": "charge.upcoming", "timestamp": …, "data": {…}}`.

use base64::Engine as _;
use hmac::{Hmac, Mac as _};
use hyper::header::{self, HeaderName, HeaderValue};
use ops::channels::{Message, MessageKind, Outcome, Secret};
use serde_json::{Value, json};
use sha2::Sha256;

use crate::{
    http::Http,
    outcome::{of_error, of_reply},
};

/// The event type a receiver filters on.
pub fn event_type(kind: MessageKind) -> &'static str {
    match kind {
        MessageKind::ChargeUpcoming => "charge.upcoming",
        MessageKind::TrialEnding => "trial.ending",
        MessageKind::CardExpiring => "card.expiring",
        MessageKind::PriceRise => "price.rise",
        MessageKind::WeeklyDigest => "digest.weekly",
        MessageKind::AgentChange => "agent.change",
        MessageKind::BankConsentEnding => "bank.consent_ending",
        MessageKind::NewRecurring => "bank.new_recurring",
        MessageKind::Test => "test",
    }
}

/// The signature header's value for `body` sent as `id` at `timestamp`; `None` when the secret
/// is not `whsec_` and base64.
pub fn signature(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Option<String> {
    let key =
        base64::engine::general_purpose::STANDARD.decode(secret.strip_prefix("whsec_")?).ok()?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).ok()?;
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    let signed = base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
    Some(format!("v1,{signed}"))
}

/// The JSON a receiver gets.
pub(crate) fn body(message: &Message, timestamp: &str) -> Value {
    let mut data = message.data.clone();
    if let Value::Object(map) = &mut data {
        map.insert("title".into(), json!(message.title));
        map.insert("lines".into(), json!(message.lines));
        if let Some(open) = &message.open {
            map.insert("open_url".into(), json!(open.url));
        }
        if let Some(undo) = &message.undo {
            map.insert("undo_url".into(), json!(undo.url));
        }
    }
    json!({"type": event_type(message.kind), "timestamp": timestamp, "data": data})
}

#[expect(
    clippy::disallowed_methods,
    reason = "the receiver checks a signature's time against its own clock, so it is the real time, not the app's"
)]
fn now() -> jiff::Timestamp {
    jiff::Timestamp::now()
}

pub(crate) async fn send(
    http: &Http,
    url: &str,
    secret: &Secret,
    allow_lan: bool,
    key: &str,
    message: &Message,
) -> Outcome {
    let now = now();
    let body = serde_json::to_vec(&body(message, &now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()))
        .unwrap_or_default();
    let Some(signature) = signature(secret.expose(), key, now.as_second(), &body) else {
        return Outcome::Failed {
            error: "the webhook's signing secret is not whsec_ and base64".into(),
        };
    };
    let header = |value: String| HeaderValue::from_str(&value);
    let (Ok(id), Ok(timestamp), Ok(signature)) =
        (header(key.to_owned()), header(now.as_second().to_string()), header(signature))
    else {
        return Outcome::Failed { error: "a webhook header is not valid".into() };
    };
    let headers = vec![
        (header::CONTENT_TYPE, HeaderValue::from_static("application/json")),
        (HeaderName::from_static("webhook-id"), id),
        (HeaderName::from_static("webhook-timestamp"), timestamp),
        (HeaderName::from_static("webhook-signature"), signature),
    ];
    match http.post(url, headers, body, allow_lan).await {
        Ok(reply) => of_reply("The webhook", &reply, None),
        Err(err) => of_error(err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_matches_the_specifications_vector() {
        let signed = signature(
            "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD",
            "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk",
            1_649_367_553,
            br#"{"email":"test@example.com","username":"test_user"}"#,
        );
        assert_eq!(signed.as_deref(), Some("v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw="));
        assert_eq!(signature("not-a-secret", "id", 1, b"{}"), None);
    }
}
