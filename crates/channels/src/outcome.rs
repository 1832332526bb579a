//! What an HTTP service's answer means for a message: sent, worth a retry, refused for good, or
//! the destination gone. ntfy and webhooks share it; Telegram and Slack read their own errors.

use ops::channels::Outcome;

use crate::http::{HttpError, Reply};

/// The start of a reply's body, for Settings: enough to recognise the service's own words.
fn excerpt(reply: &Reply) -> String {
    let text = String::from_utf8_lossy(&reply.body);
    let mut excerpt: String = text.trim().chars().take(200).collect();
    if excerpt.len() < text.trim().len() {
        excerpt.push('…');
    }
    excerpt
}

/// Reads an HTTP answer the way Standard Webhooks says to: 2xx is success; 410 means the
/// endpoint is gone; 429 and 5xx are retried (after `Retry-After` when given); anything else
/// (3xx, other 4xx) will not change by retrying.
pub(crate) fn of_reply(service: &str, reply: &Reply, external_id: Option<String>) -> Outcome {
    let status = reply.status.as_u16();
    let error = || {
        let excerpt = excerpt(reply);
        if excerpt.is_empty() {
            format!("{service} answered {status}")
        } else {
            format!("{service} answered {status}: {excerpt}")
        }
    };
    match status {
        200..=299 => Outcome::Sent { external_id },
        410 => Outcome::Gone { error: error() },
        408 | 425 | 429 | 500..=599 => {
            Outcome::Retry { after_secs: reply.retry_after().unwrap_or(0), error: error() }
        }
        _ => Outcome::Failed { error: error() },
    }
}

pub(crate) fn of_error(error: HttpError) -> Outcome {
    match error {
        HttpError::Refused(error) => Outcome::Failed { error },
        HttpError::Unreachable(error) => Outcome::Retry { after_secs: 0, error },
    }
}
