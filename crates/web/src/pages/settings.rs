//! Settings: the household (owners), exchange rates (owners), my profile and password, and
//! the members with their invitations (owners); and the page an invited person opens to
//! choose a password.

use std::collections::BTreeMap;

use axum::{
    Form,
    extract::{Path, State},
    http::{HeaderMap, StatusCode, header},
    response::Response,
};
use ops::{
    Op, OpError, Text,
    access::{GetSettings, UpdateSettings, UpdateSettingsInput},
    accounts::SessionCaller,
    assistant::{
        GetAssistantSettings, PriceInput, Provider, SetAssistantSettings, SetAssistantSettingsInput,
    },
    common::{CurrencyCode, ExchangeRate, Patch},
    entities::Role,
    household::*,
};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{
    pages::{Confirm, account::signed_in, apply_and_go, apply_form, confirm_page, form},
    render::{add_notice, op_error, page_with_extra, page_with_status},
    session::{self, FORM_COOKIE, NoFields, Posted, SignedIn},
    state::Web,
};

async fn settings_page(
    web: &Web,
    headers: &HeaderMap,
    person: &SessionCaller,
    status: StatusCode,
    extra: Value,
) -> Response {
    let (household, members, settings) = tokio::join!(
        web.call::<GetHousehold>(person, Empty {}),
        web.call::<ListMembers>(person, Empty {}),
        web.call::<GetSettings>(person, Empty {}),
    );
    let (household, members, settings) = match (household, members, settings) {
        (Ok(h), Ok(m), Ok(s)) => (h, m, s),
        (Err(err), ..) | (_, Err(err), _) | (.., Err(err)) => {
            return op_error(web, headers, person, &err);
        }
    };
    // Owners only: where the household's questions go.
    let assistant = if person.caller.is_owner() {
        match web.call::<GetAssistantSettings>(person, Empty {}).await {
            Ok(settings) => Some(settings),
            Err(err) => return op_error(web, headers, person, &err),
        }
    } else {
        None
    };
    let data = json!({
        "nav": "settings",
        "household": household,
        "members": members.items,
        "settings": settings,
        "me_id": person.caller.member_id,
        // Each language Exhale speaks, by its code and its own name.
        "languages": i18n::Language::ALL.iter().map(|l| (l.code(), l.endonym())).collect::<Vec<_>>(),
        "assistant": assistant,
        "providers": Provider::ALL.iter().map(|p| json!({
            "name": p.as_str(),
            "local": p.is_local(),
            "default_base_url": p.default_base_url(),
        })).collect::<Vec<_>>(),
    });
    page_with_extra(web, headers, person, status, "settings.html", data, extra)
}

pub(crate) async fn show(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
) -> Response {
    settings_page(&web, &headers, &person, StatusCode::OK, json!({})).await
}

/// Applies an op from a settings form: back to Settings with a notice, or the page again with
/// the op's message where the form is.
async fn apply<O: Op>(
    web: &Web,
    headers: &HeaderMap,
    person: &SessionCaller,
    input: Result<O::Input, OpError>,
    form: &str,
    done: Text,
) -> Response {
    let again = |status, errors| settings_page(web, headers, person, status, errors);
    apply_form::<O, _, _>(web, headers, person, input, "/settings", form, done, again).await
}

#[derive(Deserialize)]
pub(crate) struct HouseholdForm {
    name: String,
    currency: String,
    time_zone: String,
    language: String,
}

pub(crate) async fn household(
    State(web): State<Web>,
    headers: HeaderMap,
    Posted { person, form }: Posted<HouseholdForm>,
) -> Response {
    let input = form::required::<CurrencyCode>("/currency", &form.currency).map(|currency| {
        UpdateHouseholdInput {
            name: Some(form.name),
            currency: Some(currency),
            time_zone: Some(form.time_zone),
            language: Some(form.language),
            week_start: None,
        }
    });
    let done = Text::new("Saved the household.");
    apply::<UpdateHousehold>(&web, &headers, &person, input, "household", done).await
}

#[derive(Deserialize)]
pub(crate) struct RatesForm {
    /// Lines of `CODE RATE`; a code with nothing after it removes that rate.
    rates: String,
    /// Days before a charge that reminders go out.
    #[serde(default)]
    reminder_days_before: String,
}

pub(crate) async fn rates(
    State(web): State<Web>,
    headers: HeaderMap,
    Posted { person, form }: Posted<RatesForm>,
) -> Response {
    let current = match web.call::<GetSettings>(&person, Empty {}).await {
        Ok(settings) => settings.exchange_rates,
        Err(err) => return op_error(&web, &headers, &person, &err),
    };
    let input = rates_input(current, &form);
    let done = Text::new("Saved the exchange rates and reminders.");
    apply::<UpdateSettings>(&web, &headers, &person, input, "rates", done).await
}

/// The rates form as the op's input: a line per currency, its code and its rate ("USD 0.92");
/// every rate not in the form is removed, as the form shows them all.
fn rates_input(
    current: BTreeMap<CurrencyCode, ExchangeRate>,
    form: &RatesForm,
) -> Result<UpdateSettingsInput, OpError> {
    let mut rates: BTreeMap<CurrencyCode, Option<ExchangeRate>> =
        current.into_keys().map(|code| (code, None)).collect();
    for line in form.rates.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let mut words = line.split_whitespace();
        if let Some(code) = words.next() {
            let code: CurrencyCode = form::required("/exchange_rates", code)?;
            let pointer = format!("/exchange_rates/{code}");
            let rate = words.next().map(|rate| form::required(&pointer, rate)).transpose()?;
            rates.insert(code, rate);
        }
    }
    Ok(UpdateSettingsInput {
        exchange_rates: rates,
        reminder_days_before: form.reminder_days_before.trim().parse().ok(),
    })
}

#[derive(Deserialize)]
pub(crate) struct AssistantForm {
    provider: String,
    model: String,
    #[serde(default)]
    base_url: String,
    /// Empty keeps the saved key.
    #[serde(default)]
    api_key: String,
    #[serde(default)]
    remove_api_key: Option<String>,
    /// Dollars per million tokens for the model; both empty sets no price.
    #[serde(default)]
    price_input: String,
    #[serde(default)]
    price_output: String,
}

pub(crate) async fn assistant(
    State(web): State<Web>,
    headers: HeaderMap,
    Posted { person, form }: Posted<AssistantForm>,
) -> Response {
    let Some(provider) = Provider::parse(&form.provider) else {
        let err = OpError::invalid("/provider", Text::new("Choose a provider from the list."));
        let done = Text::new("");
        return apply::<SetAssistantSettings>(&web, &headers, &person, Err(err), "assistant", done)
            .await;
    };
    let api_key = if form.remove_api_key.is_some() {
        Some(String::new())
    } else {
        Some(form.api_key.trim().to_owned()).filter(|key| !key.is_empty())
    };
    let (price_input, price_output) = (form.price_input.trim(), form.price_output.trim());
    let model = form.model.trim().to_owned();
    let prices = if price_input.is_empty() && price_output.is_empty() {
        Ok(Vec::new())
    } else {
        form::amount("/prices/0/input", price_input).and_then(|input| {
            let output = form::amount("/prices/0/output", price_output)?;
            Ok(vec![PriceInput { model: model.clone(), input, output }])
        })
    };
    let input = prices.map(|prices| SetAssistantSettingsInput {
        provider: Some(provider),
        model: Some(model),
        base_url: Some(form.base_url),
        api_key,
        prices: Some(prices),
    });
    let done = Text::new("Saved the built-in assistant's settings.");
    apply::<SetAssistantSettings>(&web, &headers, &person, input, "assistant", done).await
}

#[derive(Deserialize)]
pub(crate) struct ProfileForm {
    name: String,
    /// A language Exhale speaks, or empty to follow the household's.
    #[serde(default)]
    language: String,
}

pub(crate) async fn profile(
    State(web): State<Web>,
    headers: HeaderMap,
    Posted { person, form }: Posted<ProfileForm>,
) -> Response {
    let language = match form.language.trim() {
        "" => Patch::Clear,
        code => Patch::Set(code.to_owned()),
    };
    let input = UpdateMemberInput {
        id: person.caller.member_id.into(),
        name: Some(form.name),
        language,
        ..Default::default()
    };
    let done = Text::new("Saved your name and language.");
    apply::<UpdateMember>(&web, &headers, &person, Ok(input), "profile", done).await
}

#[derive(Deserialize)]
pub(crate) struct PasswordForm {
    current_password: String,
    new_password: String,
}

pub(crate) async fn password(
    State(web): State<Web>,
    headers: HeaderMap,
    Posted { person, form }: Posted<PasswordForm>,
) -> Response {
    match web
        .accounts
        .change_password(&person.caller, &form.current_password, &form.new_password)
        .await
    {
        Ok(()) => {
            // Every session ended with the old password; this browser gets a new one.
            let mut response = signed_in(&web, &person.caller, "/settings").await;
            let notice = Text::new("Changed your password. Other devices are signed out.");
            add_notice(&web, &mut response, &notice);
            response
        }
        Err(err @ OpError::InvalidInput { .. }) => {
            settings_page(
                &web,
                &headers,
                &person,
                StatusCode::UNPROCESSABLE_ENTITY,
                json!({"errors": {"password": crate::reader::say(&err.text())}}),
            )
            .await
        }
        Err(err) => op_error(&web, &headers, &person, &err),
    }
}

#[derive(Deserialize)]
pub(crate) struct InviteForm {
    name: String,
    email: String,
    #[serde(default)]
    role: String,
}

pub(crate) async fn invite(
    State(web): State<Web>,
    headers: HeaderMap,
    Posted { person, form }: Posted<InviteForm>,
) -> Response {
    let invited = match form::parsed::<Role>("/role", &form.role) {
        Ok(role) => {
            let input = InviteMemberInput { name: form.name, email: form.email, role };
            web.call::<InviteMember>(&person, input).await
        }
        Err(err) => Err(err),
    };
    match invited {
        Ok(invitation) => {
            let link = web.absolute(&headers, &format!("/invite/{}", invitation.invite_code));
            let mut response = settings_page(
                &web,
                &headers,
                &person,
                StatusCode::OK,
                json!({"invited": {"name": invitation.member.name, "link": link, "expires_at": invitation.expires_at}}),
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
                json!({"errors": {"invite": crate::reader::say(&err.text())}}),
            )
            .await
        }
        Err(err) => op_error(&web, &headers, &person, &err),
    }
}

pub(crate) async fn confirm_remove(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
    Path(id): Path<i64>,
) -> Response {
    confirm_page::<RemoveMember>(&web, &headers, &person, ops::common::IdInput { id: id.into() }, |removed| Confirm {
        nav: "settings",
        title: Text::new("Remove {name}?").with("name", &removed.name),
        explanation: Text::new(
            "They can no longer sign in, and their tokens stop working. Their private subscriptions are removed with them. You can undo this from Activity.",
        ),
        action: format!("/settings/members/{id}/remove"),
        confirm_label: Text::new("Remove"),
        cancel: "/settings".into(),
        hidden: Vec::new(),
    })
    .await
}

pub(crate) async fn remove(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(id): Path<i64>,
    Posted { person, .. }: Posted<NoFields>,
) -> Response {
    let done = Text::new("Removed.");
    apply_and_go::<RemoveMember>(
        &web,
        &headers,
        &person,
        ops::common::IdInput { id: id.into() },
        "/settings",
        done,
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
        Err(err) => web.templates.refusal(StatusCode::NOT_FOUND, &err.text()),
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
                json!({"code": code, "name": name, "error": crate::reader::say(&err.text())}),
            )
        }
        Err(err) => web.templates.refusal(StatusCode::NOT_FOUND, &err.text()),
    }
}

#[derive(Deserialize)]
pub(crate) struct RoleForm {
    role: String,
}

pub(crate) async fn role(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(id): Path<i64>,
    Posted { person, form }: Posted<RoleForm>,
) -> Response {
    let input = form::required::<Role>("/role", &form.role).map(|role| UpdateMemberInput {
        id: id.into(),
        role: Some(role),
        ..Default::default()
    });
    let done = Text::new("Changed the role.");
    apply::<UpdateMember>(&web, &headers, &person, input, "members", done).await
}
