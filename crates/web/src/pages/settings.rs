//! Settings: the household (owners), exchange rates (owners), my profile and password, and
//! the members with their invitations (owners); and the page an invited person opens to
//! choose a password.

use axum::{
    Form,
    extract::{Path, State},
    http::{HeaderMap, StatusCode, header},
    response::Response,
};
use ops::{Mode, OpError, accounts::SessionCaller};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::{
    Web,
    pages::{Confirm, account::signed_in, apply_and_go, call, confirm_page},
    render::{add_notice, op_error, page_with_status, redirect_with_notice},
    session::{self, FORM_COOKIE},
};

async fn settings_page(
    web: &Web,
    headers: &HeaderMap,
    person: &SessionCaller,
    status: StatusCode,
    extra: Value,
) -> Response {
    let (household, members, settings) = tokio::join!(
        call(web, person, "get_household", json!({}), Mode::Apply),
        call(web, person, "list_members", json!({}), Mode::Apply),
        call(web, person, "get_settings", json!({}), Mode::Apply),
    );
    let (household, members, settings) = match (household, members, settings) {
        (Ok(h), Ok(m), Ok(s)) => (h, m, s),
        (Err(err), ..) | (_, Err(err), _) | (.., Err(err)) => {
            return op_error(web, headers, person, &err);
        }
    };
    let mut data = json!({
        "nav": "settings",
        "household": household,
        "members": members["items"],
        "settings": settings,
        "me_id": person.caller.member_id,
    });
    if let (Some(data), Value::Object(extra)) = (data.as_object_mut(), extra) {
        data.extend(extra);
    }
    page_with_status(web, headers, Some(person), status, "settings.html", &mut data)
}

pub(crate) async fn show(State(web): State<Web>, headers: HeaderMap) -> Response {
    let person = match session::person(&web, &headers, "/settings").await {
        Ok(person) => person,
        Err(to_sign_in) => return to_sign_in,
    };
    settings_page(&web, &headers, &person, StatusCode::OK, json!({})).await
}

/// Applies an op from a settings form: back to Settings with a notice, or the page again with
/// the op's message where the form is.
async fn apply(
    web: &Web,
    headers: &HeaderMap,
    person: &SessionCaller,
    op: &str,
    input: Value,
    form: &str,
    done: &str,
) -> Response {
    match call(web, person, op, input, Mode::Apply).await {
        Ok(_) => redirect_with_notice(web, "/settings", done),
        Err(
            err @ (OpError::InvalidInput { .. }
            | OpError::Forbidden { .. }
            | OpError::Conflict { .. }),
        ) => {
            let status = match err {
                OpError::Forbidden { .. } => StatusCode::FORBIDDEN,
                OpError::Conflict { .. } => StatusCode::CONFLICT,
                _ => StatusCode::UNPROCESSABLE_ENTITY,
            };
            settings_page(
                web,
                headers,
                person,
                status,
                json!({"errors": {form: err.text().render()}}),
            )
            .await
        }
        Err(err) => op_error(web, headers, person, &err),
    }
}

/// The signed-in person, with the settings form's CSRF token checked.
async fn checked(web: &Web, headers: &HeaderMap, csrf: &str) -> Result<SessionCaller, Response> {
    session::checked(web, headers, "/settings", csrf).await
}

#[derive(Deserialize)]
pub(crate) struct HouseholdForm {
    csrf: String,
    name: String,
    currency: String,
    time_zone: String,
    language: String,
}

pub(crate) async fn household(
    State(web): State<Web>,
    headers: HeaderMap,
    Form(form): Form<HouseholdForm>,
) -> Response {
    let person = match checked(&web, &headers, &form.csrf).await {
        Ok(person) => person,
        Err(refused) => return refused,
    };
    let input = json!({"name": form.name, "currency": form.currency, "time_zone": form.time_zone, "language": form.language});
    apply(&web, &headers, &person, "update_household", input, "household", "Saved the household.")
        .await
}

#[derive(Deserialize)]
pub(crate) struct RatesForm {
    csrf: String,
    /// Lines of `CODE RATE`; a code with nothing after it removes that rate.
    rates: String,
    /// Days before a charge that reminders go out.
    #[serde(default)]
    reminder_days_before: String,
}

pub(crate) async fn rates(
    State(web): State<Web>,
    headers: HeaderMap,
    Form(form): Form<RatesForm>,
) -> Response {
    let person = match checked(&web, &headers, &form.csrf).await {
        Ok(person) => person,
        Err(refused) => return refused,
    };
    let current = match call(&web, &person, "get_settings", json!({}), Mode::Apply).await {
        Ok(settings) => settings["exchange_rates"].as_object().cloned().unwrap_or_default(),
        Err(err) => return op_error(&web, &headers, &person, &err),
    };
    // Every rate not in the form is removed: the form shows them all.
    let mut rates: Map<String, Value> =
        current.keys().map(|code| (code.clone(), Value::Null)).collect();
    for line in form.rates.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let mut words = line.split_whitespace();
        if let Some(code) = words.next() {
            rates.insert(code.to_uppercase(), words.next().map_or(Value::Null, |rate| json!(rate)));
        }
    }
    let mut input = json!({"exchange_rates": rates});
    if let Ok(days) = form.reminder_days_before.trim().parse::<u32>() {
        input["reminder_days_before"] = json!(days);
    }
    apply(
        &web,
        &headers,
        &person,
        "update_settings",
        input,
        "rates",
        "Saved the exchange rates and reminders.",
    )
    .await
}

#[derive(Deserialize)]
pub(crate) struct ProfileForm {
    csrf: String,
    name: String,
}

pub(crate) async fn profile(
    State(web): State<Web>,
    headers: HeaderMap,
    Form(form): Form<ProfileForm>,
) -> Response {
    let person = match checked(&web, &headers, &form.csrf).await {
        Ok(person) => person,
        Err(refused) => return refused,
    };
    let input = json!({"id": person.caller.member_id, "name": form.name});
    apply(&web, &headers, &person, "update_member", input, "profile", "Saved your name.").await
}

#[derive(Deserialize)]
pub(crate) struct PasswordForm {
    csrf: String,
    current_password: String,
    new_password: String,
}

pub(crate) async fn password(
    State(web): State<Web>,
    headers: HeaderMap,
    Form(form): Form<PasswordForm>,
) -> Response {
    let person = match checked(&web, &headers, &form.csrf).await {
        Ok(person) => person,
        Err(refused) => return refused,
    };
    match web
        .accounts
        .change_password(&person.caller, &form.current_password, &form.new_password)
        .await
    {
        Ok(()) => {
            // Every session ended with the old password; this browser gets a new one.
            let mut response = signed_in(&web, &person.caller, "/settings").await;
            add_notice(&web, &mut response, "Changed your password. Other devices are signed out.");
            response
        }
        Err(err @ OpError::InvalidInput { .. }) => {
            settings_page(
                &web,
                &headers,
                &person,
                StatusCode::UNPROCESSABLE_ENTITY,
                json!({"errors": {"password": err.text().render()}}),
            )
            .await
        }
        Err(err) => op_error(&web, &headers, &person, &err),
    }
}

#[derive(Deserialize)]
pub(crate) struct InviteForm {
    csrf: String,
    name: String,
    email: String,
    #[serde(default)]
    role: String,
}

pub(crate) async fn invite(
    State(web): State<Web>,
    headers: HeaderMap,
    Form(form): Form<InviteForm>,
) -> Response {
    let person = match checked(&web, &headers, &form.csrf).await {
        Ok(person) => person,
        Err(refused) => return refused,
    };
    let mut input = json!({"name": form.name, "email": form.email});
    if !form.role.is_empty() {
        input["role"] = json!(form.role);
    }
    match call(&web, &person, "invite_member", input, Mode::Apply).await {
        Ok(invitation) => {
            let host =
                headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("127.0.0.1:8080");
            let scheme = if web.config.secure_cookies { "https" } else { "http" };
            let code = invitation["invite_code"].as_str().unwrap_or_default();
            let link = format!("{scheme}://{host}/invite/{code}");
            let mut response = settings_page(
                &web,
                &headers,
                &person,
                StatusCode::OK,
                json!({"invited": {"name": invitation["member"]["name"], "link": link, "expires_at": invitation["expires_at"]}}),
            )
            .await;
            // The link is a credential until used: never keep it in a cache.
            response
                .headers_mut()
                .insert(header::CACHE_CONTROL, header::HeaderValue::from_static("no-store"));
            response
        }
        Err(err @ (OpError::InvalidInput { .. } | OpError::Forbidden { .. })) => {
            settings_page(
                &web,
                &headers,
                &person,
                StatusCode::UNPROCESSABLE_ENTITY,
                json!({"errors": {"invite": err.text().render()}}),
            )
            .await
        }
        Err(err) => op_error(&web, &headers, &person, &err),
    }
}

pub(crate) async fn confirm_remove(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(id): Path<i64>,
) -> Response {
    let person = match session::person(&web, &headers, "/settings").await {
        Ok(person) => person,
        Err(to_sign_in) => return to_sign_in,
    };
    let confirm = Confirm {
        nav: "settings",
        title: "Remove this member?",
        explanation: "They can no longer sign in, and their tokens stop working. Their private subscriptions are removed with them. You can undo this from Activity.",
        action: format!("/settings/members/{id}/remove"),
        confirm_label: "Remove",
        cancel: "/settings".into(),
        hidden: json!({}),
    };
    confirm_page(&web, &headers, &person, "remove_member", json!({"id": id}), confirm).await
}

pub(crate) async fn remove(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(id): Path<i64>,
    Form(form): Form<session::CsrfForm>,
) -> Response {
    let person = match checked(&web, &headers, &form.csrf).await {
        Ok(person) => person,
        Err(refused) => return refused,
    };
    apply_and_go(
        &web,
        &headers,
        &person,
        "remove_member",
        json!({"id": id}),
        "/settings",
        "Removed.",
    )
    .await
}

/// The form an invited person opens from their link.
fn invitation_form(
    web: &Web,
    headers: &HeaderMap,
    status: StatusCode,
    mut data: Value,
) -> Response {
    let token = match session::random_token() {
        Ok(token) => token,
        Err(response) => return response,
    };
    data["form_token"] = json!(token);
    let mut response = page_with_status(web, headers, None, status, "invitation.html", &mut data);
    response
        .headers_mut()
        .append(header::SET_COOKIE, session::set_cookie(web, FORM_COOKIE, &token, None));
    response
}

pub(crate) async fn invitation(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(code): Path<String>,
) -> Response {
    match web.accounts.invitation(&code).await {
        Ok(name) => {
            invitation_form(&web, &headers, StatusCode::OK, json!({"code": code, "name": name}))
        }
        Err(err) => web.templates.refusal(StatusCode::NOT_FOUND, &err.text().render()),
    }
}

#[derive(Deserialize)]
pub(crate) struct AcceptForm {
    form_token: String,
    password: String,
}

pub(crate) async fn accept(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(code): Path<String>,
    Form(form): Form<AcceptForm>,
) -> Response {
    if let Err(refused) = session::check_form_token(&web, &headers, &form.form_token) {
        return refused;
    }
    match web.accounts.accept_invitation(&code, &form.password).await {
        Ok(caller) => signed_in(&web, &caller, "/").await,
        Err(err @ OpError::InvalidInput { .. }) => {
            let name = web.accounts.invitation(&code).await.unwrap_or_default();
            invitation_form(
                &web,
                &headers,
                StatusCode::UNPROCESSABLE_ENTITY,
                json!({"code": code, "name": name, "error": err.text().render()}),
            )
        }
        Err(err) => web.templates.refusal(StatusCode::NOT_FOUND, &err.text().render()),
    }
}

#[derive(Deserialize)]
pub(crate) struct RoleForm {
    csrf: String,
    role: String,
}

pub(crate) async fn role(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(id): Path<i64>,
    Form(form): Form<RoleForm>,
) -> Response {
    let person = match checked(&web, &headers, &form.csrf).await {
        Ok(person) => person,
        Err(refused) => return refused,
    };
    let input = json!({"id": id, "role": form.role});
    apply(&web, &headers, &person, "update_member", input, "members", "Changed the role.").await
}
