//! Email through the household's mail server (lettre over SMTP: implicit TLS, STARTTLS that
//! must succeed, or plain to a relay on the local network), as plain text with an HTML
//! alternative. The `Message-ID` comes from the message's key, so a resend after a crash is the
//! same email to the receiving server; `Auto-Submitted` keeps vacation replies away.

use std::time::Duration;

use lettre::{
    AsyncSmtpTransport, AsyncTransport as _, Tokio1Executor,
    message::{
        Mailbox, MultiPart,
        header::{HeaderName, HeaderValue},
    },
    transport::smtp::{
        authentication::Credentials,
        client::{Certificate, Tls, TlsParameters},
    },
};
use ops::channels::{MailSecurity, MailServerTarget, Message, Outcome};
use sha2::{Digest as _, Sha256};

const TIMEOUT: Duration = Duration::from_secs(20);

/// `&`, `<`, `>` and quotes escaped for HTML text and attributes.
pub(crate) fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn plain(message: &Message) -> String {
    let mut text = format!("{}\n", message.title);
    for line in &message.lines {
        text.push_str(&format!("\n{line}"));
    }
    text.push('\n');
    for link in message.open.iter().chain(message.undo.iter()) {
        text.push_str(&format!("\n{}: {}", link.label, link.url));
    }
    text
}

fn html(message: &Message) -> String {
    let mut html = format!("<p><strong>{}</strong></p>", escape_html(&message.title));
    for line in &message.lines {
        html.push_str(&format!("<p>{}</p>", escape_html(line)));
    }
    let links: Vec<String> = message
        .open
        .iter()
        .chain(message.undo.iter())
        .map(|l| format!("<a href=\"{}\">{}</a>", escape_html(&l.url), escape_html(&l.label)))
        .collect();
    if !links.is_empty() {
        html.push_str(&format!("<p>{}</p>", links.join(" · ")));
    }
    html
}

/// `<hex@domain>` from the message's key and the sender's domain.
pub(crate) fn message_id(key: &str, from: &Mailbox) -> String {
    let digest = Sha256::digest(key.as_bytes());
    let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("<rem-{hex}@{}>", from.email.domain())
}

/// Sends one email; `extra_roots` are authorities trusted besides the built-in ones (tests).
pub(crate) async fn send(
    server: &MailServerTarget,
    to: &str,
    key: &str,
    message: &Message,
    extra_roots: &[Vec<u8>],
) -> Outcome {
    let failed = |error: String| Outcome::Failed { error };
    let Ok(from) = server.from.parse::<Mailbox>() else {
        return failed(format!("the mail server's From address {} is not valid", server.from));
    };
    let Ok(to) = to.parse::<Mailbox>() else {
        return failed(format!("{to} is not an email address"));
    };
    let email = lettre::Message::builder()
        .from(from.clone())
        .to(to)
        .subject(message.title.clone())
        .message_id(Some(message_id(key, &from)))
        .raw_header(HeaderValue::new(
            HeaderName::new_from_ascii_str("Auto-Submitted"),
            "auto-generated".into(),
        ))
        .multipart(MultiPart::alternative_plain_html(plain(message), html(message)));
    let email = match email {
        Ok(email) => email,
        Err(err) => return failed(format!("the email cannot be written: {err}")),
    };
    let tls = || {
        let mut builder = TlsParameters::builder(server.host.clone());
        for der in extra_roots {
            if let Ok(certificate) = Certificate::from_der(der.clone()) {
                builder = builder.add_root_certificate(certificate);
            }
        }
        builder.build_rustls()
    };
    let builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(server.host.clone());
    let builder = match server.security {
        MailSecurity::Tls => match tls() {
            Ok(parameters) => builder.tls(Tls::Wrapper(parameters)),
            Err(err) => return failed(format!("TLS cannot be set up: {err}")),
        },
        MailSecurity::Starttls => match tls() {
            Ok(parameters) => builder.tls(Tls::Required(parameters)),
            Err(err) => return failed(format!("TLS cannot be set up: {err}")),
        },
        MailSecurity::Unencrypted => builder.tls(Tls::None),
    };
    let mut builder = builder.port(server.port).timeout(Some(TIMEOUT));
    if let Some(username) = &server.username {
        let password = server.password.as_ref().map(|p| p.expose().to_owned()).unwrap_or_default();
        builder = builder.credentials(Credentials::new(username.clone(), password));
    }
    let transport = builder.build();
    match transport.send(email).await {
        Ok(response) => Outcome::Sent { external_id: response.first_line().map(str::to_owned) },
        Err(err) if err.is_permanent() => failed(format!("the mail server refused it: {err}")),
        // Exhale and the server cannot agree (no common way to sign in): a setting to change.
        Err(err) if err.is_client() => {
            failed(format!("the mail server cannot be used as set up: {err}"))
        }
        Err(err) => Outcome::Retry {
            after_secs: 0,
            error: format!("the mail server could not take it: {err}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_id_is_the_same_for_the_same_key() {
        let from: Mailbox = "Exhale <exhale@example.net>".parse().unwrap();
        let id = message_id("rem:v1:1:2026-12-15:3:1:2", &from);
        assert_eq!(id, message_id("rem:v1:1:2026-12-15:3:1:2", &from));
        assert_ne!(id, message_id("rem:v1:1:2026-12-15:1:1:2", &from));
        assert!(id.starts_with("<rem-") && id.ends_with("@example.net>"), "{id}");
    }

    #[test]
    fn html_escapes_what_a_name_may_hold() {
        assert_eq!(
            escape_html("<b>\"Tom & Jerry's\"</b>"),
            "&lt;b&gt;&quot;Tom &amp; Jerry&#39;s&quot;&lt;/b&gt;"
        );
    }
}
