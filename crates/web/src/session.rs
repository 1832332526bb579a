//! Sessions and CSRF: the session cookie, the signed-in person behind it, the CSRF token
//! every form carries, and the form cookie that protects the sign-in and setup forms (there is
//! no session yet). Failed sign-ins are limited by the accounts service, not here.

use axum::{
    body::Bytes,
    extract::{FromRequest, FromRequestParts, Request},
    http::{HeaderMap, HeaderValue, Method, StatusCode, header, request::Parts},
    response::{IntoResponse, Redirect, Response},
};
use ops::{Text, accounts::SessionCaller};
use serde::{Deserialize, de::DeserializeOwned};

use crate::state::Web;

pub(crate) const SESSION_COOKIE: &str = "exhale_session";
/// Double-submit token of the forms shown before there is a session.
pub(crate) const FORM_COOKIE: &str = "exhale_form";
/// A message for the next page ("Deleted Netflix."), shown once.
pub(crate) const NOTICE_COOKIE: &str = "exhale_notice";

/// A cookie's name as sent: behind HTTPS with the `__Host-` prefix, which browsers accept only
/// from a secure origin, for the whole host (no `Domain`, `Path=/`), so neither a sibling
/// subdomain nor a plain-HTTP page can set or shadow it. Plain HTTP (loopback) cannot have it.
fn wire_name(web: &Web, name: &str) -> String {
    if web.config.secure_cookies { format!("__Host-{name}") } else { name.to_owned() }
}

/// The value of cookie `name`, if the request has it.
pub(crate) fn cookie<'a>(web: &Web, headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let name = wire_name(web, name);
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

/// A `Set-Cookie` value: HttpOnly, SameSite=Lax (a link from the terminal or an e-mail still
/// arrives signed in; another site's form posts do not carry it), `Secure` and `__Host-` behind
/// HTTPS. `max_age` 0 deletes the cookie; `None` makes it last as long as the browser session.
pub(crate) fn set_cookie(web: &Web, name: &str, value: &str, max_age: Option<u64>) -> HeaderValue {
    let name = wire_name(web, name);
    let mut cookie = format!("{name}={value}; Path=/; HttpOnly; SameSite=Lax");
    if let Some(seconds) = max_age {
        cookie.push_str(&format!("; Max-Age={seconds}"));
    }
    if web.config.secure_cookies {
        cookie.push_str("; Secure");
    }
    HeaderValue::from_str(&cookie).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// 32 random bytes as hex.
pub(crate) fn random_token() -> Result<String, Response> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Compares secrets without stopping at the first difference.
pub(crate) fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The signed-in person, as handlers take it: without a live session the request is answered
/// with a redirect to the sign-in page, which comes back here afterwards.
pub(crate) struct SignedIn(pub(crate) SessionCaller);

impl FromRequestParts<Web> for SignedIn {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, web: &Web) -> Result<Self, Response> {
        // After signing in, a GET comes back to itself; a POST to the page its form was on.
        let back = if parts.method == Method::GET {
            parts.uri.path_and_query().map(|p| p.as_str().to_owned())
        } else {
            referring_path(&parts.headers)
        };
        signed_in_person(web, &parts.headers).await.map(SignedIn).map_err(|()| {
            let next = match back.as_deref().map(|path| local_path(Some(path))) {
                Some(path) if path != "/" => format!("?next={}", encode(path)),
                _ => String::new(),
            };
            Redirect::to(&format!("/sign-in{next}")).into_response()
        })
    }
}

/// The person behind the request's session cookie.
/// The rest of the request is written in their language.
async fn signed_in_person(web: &Web, headers: &HeaderMap) -> Result<SessionCaller, ()> {
    let secret = cookie(web, headers, SESSION_COOKIE).ok_or(())?;
    let mut person = web.accounts.session(secret).await.map_err(|_| ())?;
    crate::reader::read_by(&person, headers);
    // What the catalog writes for this person (summaries, activity) is in their language too.
    person.caller.language = crate::reader::reader();
    Ok(person)
}

/// The path of the page a form was posted from, when it is this site's.
fn referring_path(headers: &HeaderMap) -> Option<String> {
    let referer = headers.get(header::REFERER)?.to_str().ok()?;
    let host = headers.get(header::HOST)?.to_str().ok()?;
    let rest = referer.split_once("://")?.1.strip_prefix(host)?;
    rest.starts_with('/').then(|| rest.to_owned())
}

/// A form posted by the signed-in person, its CSRF token checked before anything else is read:
/// the start of every POST.
pub(crate) struct Posted<T> {
    pub(crate) person: SessionCaller,
    pub(crate) form: T,
}

#[derive(Deserialize)]
struct CsrfField {
    #[serde(default)]
    csrf: String,
}

impl<T: DeserializeOwned> FromRequest<Web> for Posted<T> {
    type Rejection = Response;

    async fn from_request(request: Request, web: &Web) -> Result<Self, Response> {
        let (mut parts, body) = request.into_parts();
        let SignedIn(person) = SignedIn::from_request_parts(&mut parts, web).await?;
        let bytes = Bytes::from_request(Request::from_parts(parts, body), web)
            .await
            .map_err(IntoResponse::into_response)?;
        let csrf = serde_urlencoded::from_bytes::<CsrfField>(&bytes).map(|f| f.csrf);
        check_csrf(web, &person, csrf.as_deref().unwrap_or_default())?;
        let form = serde_urlencoded::from_bytes(&bytes).map_err(|err| {
            tracing::info!(error = %err, "a form did not fit its handler");
            web.templates.refusal(
                StatusCode::BAD_REQUEST,
                &Text::new("This form is incomplete. Go back, reload the page and try again."),
            )
        })?;
        Ok(Self { person, form })
    }
}

/// A form with nothing but its CSRF token (delete, revoke, sign out).
#[derive(Deserialize)]
pub(crate) struct NoFields {}

/// Refuses a form whose CSRF token is not the session's.
pub(crate) fn check_csrf(
    web: &Web,
    session: &SessionCaller,
    submitted: &str,
) -> Result<(), Response> {
    if same_secret(&session.csrf, submitted) {
        Ok(())
    } else {
        Err(web.templates.refusal(
            StatusCode::FORBIDDEN,
            &Text::new(
                "This form expired or did not come from Exhale. Go back, reload the page and try again.",
            ),
        ))
    }
}

/// Refuses a sign-in or setup form whose token does not match its form cookie.
pub(crate) fn check_form_token(
    web: &Web,
    headers: &HeaderMap,
    submitted: &str,
) -> Result<(), Response> {
    match cookie(web, headers, FORM_COOKIE) {
        Some(expected) if same_secret(expected, submitted) => Ok(()),
        _ => Err(web.templates.refusal(
            StatusCode::FORBIDDEN,
            &Text::new(
                "This form expired or did not come from Exhale. Reload the page and try again.",
            ),
        )),
    }
}

/// Percent-encodes a path or a notice for a query string or a cookie.
pub(crate) fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The reverse of [`encode`]; invalid escapes are kept as they are.
pub(crate) fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = (bytes[i] == b'%')
            .then(|| text.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match hex {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(if bytes[i] == b'+' { b' ' } else { bytes[i] });
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Only a path on this site may follow sign-in (no open redirect). Browsers read `\\` as `/`
/// and drop tabs and newlines from a URL, so `/\t/evil.example` would be `//evil.example`:
/// a path with either, or with any space or control character, goes home instead.
pub(crate) fn local_path(next: Option<&str>) -> &str {
    match next {
        Some(path)
            if path.starts_with('/')
                && !path.starts_with("//")
                && !path.chars().any(|c| c == '\\' || c.is_whitespace() || c.is_control()) =>
        {
            path
        }
        _ => "/",
    }
}
