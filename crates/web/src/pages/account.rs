//! First-run setup, sign-in and sign-out.

use axum::{
    Extension, Form,
    extract::{Path, Query, State},
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Redirect, Response},
};
use ops::{OpError, Text, accounts::NewHousehold};
use serde::Deserialize;
use serde_json::json;

use crate::{
    render::page_with_status,
    session::{self, FORM_COOKIE, NoFields, Posted, SESSION_COOKIE},
    state::Web,
};

/// Renders a pre-session form with a fresh form token in a cookie and a hidden field.
fn form_page(
    web: &Web,
    headers: &HeaderMap,
    status: StatusCode,
    name: &str,
    mut data: serde_json::Value,
) -> Response {
    let token = match session::random_token() {
        Ok(token) => token,
        Err(response) => return response,
    };
    data["form_token"] = json!(token);
    let mut response = page_with_status(web, headers, None, status, name, &mut data);
    response
        .headers_mut()
        .append(header::SET_COOKIE, session::set_cookie(web, FORM_COOKIE, &token, None));
    response
}

/// Starts a session for `caller` and sends them to `to`.
pub(crate) async fn signed_in(web: &Web, caller: &ops::Caller, to: &str) -> Response {
    match web.accounts.start_session(caller).await {
        Ok(new) => {
            let mut response = Redirect::to(to).into_response();
            let seconds = 14 * 24 * 3600;
            let headers = response.headers_mut();
            headers.append(
                header::SET_COOKIE,
                session::set_cookie(web, SESSION_COOKIE, &new.secret, Some(seconds)),
            );
            headers.append(header::SET_COOKIE, session::set_cookie(web, FORM_COOKIE, "", Some(0)));
            response
        }
        Err(err) => {
            tracing::error!(error = %err.text().render(), "could not start a session");
            web.templates.refusal(
                StatusCode::INTERNAL_SERVER_ERROR,
                &Text::new("Signing in failed; try again."),
            )
        }
    }
}

async fn setup_open(web: &Web, secret: &str) -> bool {
    web.accounts.setup_link_opens(secret).await.unwrap_or(false)
}

fn setup_closed(web: &Web) -> Response {
    web.templates.refusal(
        StatusCode::NOT_FOUND,
        &Text::new(
            "This setup link is not valid. If Exhale is already set up, sign in at /sign-in; otherwise use the link `exhale serve` printed when it started.",
        ),
    )
}

pub(crate) async fn setup_form(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(secret): Path<String>,
) -> Response {
    if !setup_open(&web, &secret).await {
        return setup_closed(&web);
    }
    form_page(
        &web,
        &headers,
        StatusCode::OK,
        "setup.html",
        json!({"secret": secret, "values": {"currency": "EUR", "time_zone": "Europe/Berlin", "language": "en"}}),
    )
}

#[derive(Deserialize)]
pub(crate) struct SetupForm {
    form_token: String,
    household_name: String,
    currency: String,
    time_zone: String,
    language: String,
    owner_name: String,
    email: String,
    password: String,
}

pub(crate) async fn set_up(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(secret): Path<String>,
    Form(form): Form<SetupForm>,
) -> Response {
    if !setup_open(&web, &secret).await {
        return setup_closed(&web);
    }
    if let Err(refused) = session::check_form_token(&web, &headers, &form.form_token) {
        return refused;
    }
    let values = json!({
        "household_name": form.household_name, "currency": form.currency, "time_zone": form.time_zone,
        "language": form.language, "owner_name": form.owner_name, "email": form.email,
    });
    let new = NewHousehold {
        household_name: form.household_name,
        currency: form.currency,
        time_zone: form.time_zone,
        language: form.language,
        owner_name: form.owner_name,
        email: form.email,
        password: form.password,
    };
    match web.accounts.set_up(new).await {
        Ok(owner) => signed_in(&web, &owner, "/").await,
        Err(OpError::Forbidden { .. }) => setup_closed(&web),
        Err(err) => form_page(
            &web,
            &headers,
            StatusCode::UNPROCESSABLE_ENTITY,
            "setup.html",
            json!({"secret": secret, "values": values, "error": crate::reader::say(&err.text())}),
        ),
    }
}

#[derive(Deserialize)]
pub(crate) struct Next {
    next: Option<String>,
}

pub(crate) async fn sign_in_form(
    State(web): State<Web>,
    headers: HeaderMap,
    Query(next): Query<Next>,
) -> Response {
    let needs_setup = web.accounts.needs_setup().await.unwrap_or(false);
    form_page(
        &web,
        &headers,
        StatusCode::OK,
        "sign_in.html",
        json!({"next": session::local_path(next.next.as_deref()), "needs_setup": needs_setup}),
    )
}

#[derive(Deserialize)]
pub(crate) struct SignInForm {
    form_token: String,
    email: String,
    password: String,
    next: Option<String>,
}

pub(crate) async fn sign_in(
    State(web): State<Web>,
    headers: HeaderMap,
    client: Option<Extension<http::ClientAddress>>,
    Form(form): Form<SignInForm>,
) -> Response {
    if let Err(refused) = session::check_form_token(&web, &headers, &form.form_token) {
        return refused;
    }
    let next = session::local_path(form.next.as_deref()).to_owned();
    let again = |status: StatusCode, error: &str| {
        form_page(
            &web,
            &headers,
            status,
            "sign_in.html",
            json!({"next": next, "email": form.email, "error": error}),
        )
    };
    let client = client.map(|Extension(http::ClientAddress(ip))| ip);
    match web.accounts.sign_in(&form.email, &form.password, client).await {
        Ok(caller) => signed_in(&web, &caller, &next).await,
        Err(err @ OpError::RateLimited { .. }) => {
            again(StatusCode::TOO_MANY_REQUESTS, &crate::reader::say(&err.text()))
        }
        Err(err) => again(StatusCode::UNAUTHORIZED, &crate::reader::say(&err.text())),
    }
}

pub(crate) async fn sign_out(
    State(web): State<Web>,
    headers: HeaderMap,
    _: Posted<NoFields>,
) -> Response {
    if let Some(secret) = session::cookie(&web, &headers, SESSION_COOKIE) {
        let _ = web.accounts.end_session(secret).await;
    }
    let mut response =
        crate::render::redirect_with_notice(&web, "/sign-in", &Text::new("You are signed out."));
    response
        .headers_mut()
        .append(header::SET_COOKIE, session::set_cookie(&web, SESSION_COOKIE, "", Some(0)));
    response
}
