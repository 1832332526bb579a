//! OAuth's authorization page (`/authorize`): an app asks to act as the signed-in person; the
//! page says who asks (the name it gives itself, marked unverified), where the browser goes
//! afterwards, and what it may do, and the person allows or denies. The request is checked and
//! kept by the authorization server (`ops::oauth::OAuthServer`), so the form posts only its
//! id, the CSRF token and the chosen scope: nothing the app sent can be changed on the way.
//! A person who is not signed in signs in first and comes back here.

use axum::{
    extract::State,
    http::{HeaderMap, HeaderValue, StatusCode, Uri, header},
    response::{IntoResponse, Redirect, Response},
};
use ops::{
    Scope, Text,
    oauth::{AuthorizationRequest, AuthorizeRefusal, Decision},
};
use serde::Deserialize;
use serde_json::json;

use crate::{
    headers::CONTENT_SECURITY_POLICY,
    render::page,
    session::{Posted, SignedIn},
    state::Web,
};

/// The query of an authorization request; `Err` when a parameter is repeated (RFC 6749
/// section 3.1), which no honest client does.
fn read_query(uri: &Uri) -> Result<AuthorizationRequest, Text> {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(uri.query().unwrap_or_default())
        .map_err(|_| {
            Text::new("The app's request cannot be read. Connect it again from the app.")
        })?;
    let mut request = AuthorizationRequest::default();
    for (key, value) in pairs {
        let slot = match key.as_str() {
            "client_id" => &mut request.client_id,
            "redirect_uri" => &mut request.redirect_uri,
            "response_type" => &mut request.response_type,
            "code_challenge" => &mut request.code_challenge,
            "code_challenge_method" => &mut request.code_challenge_method,
            "state" => &mut request.state,
            "scope" => &mut request.scope,
            "resource" => &mut request.resource,
            _ => continue,
        };
        if slot.replace(value).is_some() {
            return Err(Text::new(
                "The app sent {parameter} twice, so Exhale stopped here. Connect it again from the app.",
            )
            .with("parameter", key));
        }
    }
    Ok(request)
}

pub(crate) async fn show(
    State(web): State<Web>,
    headers: HeaderMap,
    uri: Uri,
    SignedIn(person): SignedIn,
) -> Response {
    let request = match read_query(&uri) {
        Ok(request) => request,
        Err(message) => return web.templates.refusal(StatusCode::BAD_REQUEST, &message),
    };
    let consent = match web.oauth.authorize(&person.caller, request).await {
        Ok(consent) => consent,
        Err(AuthorizeRefusal::Page(message)) => {
            return web.templates.refusal(StatusCode::BAD_REQUEST, &message);
        }
        Err(AuthorizeRefusal::Redirect(to)) => return Redirect::to(&to).into_response(),
    };
    let data = json!({
        "client_name": consent.client_name,
        "described_at": consent.described_at,
        "redirect_host": consent.redirect_host,
        "loopback": consent.redirect_is_loopback,
        "request_id": consent.request_id,
        "requested": consent.requested.as_str(),
        "write_offered": consent.offered.contains(&Scope::Write),
        "trusted_offered": consent.offered.contains(&Scope::Trusted),
    });
    let mut response = page(&web, &headers, Some(&person), "consent.html", data);
    let policy = CONTENT_SECURITY_POLICY
        .replace("form-action 'self'", &format!("form-action 'self' {}", consent.redirect_source));
    if let Ok(value) = HeaderValue::from_str(&policy) {
        response.headers_mut().insert(header::CONTENT_SECURITY_POLICY, value);
    }
    response
}

#[derive(Default, Deserialize)]
#[serde(default)]
pub(crate) struct DecisionForm {
    request_id: String,
    decision: String,
    scope: String,
}

pub(crate) async fn decide(State(web): State<Web>, posted: Posted<DecisionForm>) -> Response {
    let Posted { person, form } = posted;
    let decision = match form.decision.as_str() {
        "approve" => {
            // The app keeps the choice within what its page offered; no choice reads as the least.
            Decision::Approve(Scope::parse(&form.scope).unwrap_or(Scope::Read))
        }
        "deny" => Decision::Deny,
        _ => {
            return web
                .templates
                .refusal(StatusCode::BAD_REQUEST, &Text::new("Choose Allow or Deny."));
        }
    };
    match web.oauth.decide(&person.caller, &form.request_id, decision).await {
        // 303, never 307: the browser must not post the form to the app (RFC 9700 4.12).
        Ok(to) => Redirect::to(&to).into_response(),
        Err(message) => web.templates.refusal(StatusCode::BAD_REQUEST, &message),
    }
}
