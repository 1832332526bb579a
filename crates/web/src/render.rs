//! Rendering: the templates (embedded in the binary), the chrome every page shares (who is
//! signed in, the CSRF token, a one-time notice, the language), translation into the reader's
//! language (the catalogues are the `i18n` crate's), and error pages.

#[cfg(test)]
mod tests;

use std::cell::Cell;

use axum::{
    extract::Request,
    http::{HeaderMap, StatusCode, header},
    middleware::Next,
    response::{Html, IntoResponse, Redirect, Response},
};
use i18n::Language;
use minijinja::Environment;
use ops::{OpError, Text, accounts::SessionCaller};
use serde_json::{Value, json};

use crate::{
    Web,
    session::{self, NOTICE_COOKIE},
};

/// Every template, by name.
const TEMPLATES: &[(&str, &str)] = &[
    ("base.html", include_str!("../templates/base.html")),
    ("setup.html", include_str!("../templates/setup.html")),
    ("sign_in.html", include_str!("../templates/sign_in.html")),
    ("overview.html", include_str!("../templates/overview.html")),
    ("subscriptions.html", include_str!("../templates/subscriptions.html")),
    ("subscription.html", include_str!("../templates/subscription.html")),
    ("subscription_form.html", include_str!("../templates/subscription_form.html")),
    ("subscription_edit.html", include_str!("../templates/subscription_edit.html")),
    ("confirm.html", include_str!("../templates/confirm.html")),
    ("activity.html", include_str!("../templates/activity.html")),
    ("assistant.html", include_str!("../templates/assistant.html")),
    // Pieces other templates include or the assistant draws; `.html`, so they are escaped too.
    ("_proposal_card.html", include_str!("../templates/_proposal_card.html")),
    ("_screen.html", include_str!("../templates/_screen.html")),
    ("message.html", include_str!("../templates/message.html")),
    ("tokens.html", include_str!("../templates/tokens.html")),
    ("connect.html", include_str!("../templates/connect.html")),
    ("export.html", include_str!("../templates/export.html")),
    ("import.html", include_str!("../templates/import.html")),
    ("import_review.html", include_str!("../templates/import_review.html")),
    ("organise.html", include_str!("../templates/organise.html")),
    ("reminders.html", include_str!("../templates/reminders.html")),
    ("settings.html", include_str!("../templates/settings.html")),
    ("invitation.html", include_str!("../templates/invitation.html")),
    ("consent.html", include_str!("../templates/consent.html")),
    ("money.html", include_str!("../templates/money.html")),
    ("transactions.html", include_str!("../templates/transactions.html")),
];

pub(crate) struct Templates {
    env: Environment<'static>,
}

impl Templates {
    pub(crate) fn load() -> Result<Self, String> {
        let mut env = Environment::new();
        // A field a template prints that the data lacks (an op's output changed) fails the
        // page, and the tests, instead of rendering as nothing; `if` and `default` still test
        // for optional fields.
        env.set_undefined_behavior(minijinja::UndefinedBehavior::SemiStrict);
        for (name, source) in TEMPLATES {
            env.add_template(name, source).map_err(|err| format!("template {name}: {err}"))?;
        }
        // Strings in templates go through `t`, and sentences built in handlers are `Text`s
        // rendered by `say`: each is looked up by its English in the reader's catalogue.
        env.add_function("t", |text: String| i18n::format_in(reader(), &text).to_owned());
        // Dates and amounts as the reader's language writes them (`3 dic 2026`, `12,99 €`),
        // from the values ops return, never from their English `display`.
        env.add_filter("date", |value: minijinja::Value| written_date(&value));
        env.add_filter("money", |value: minijinja::Value| written_money(&value));
        // A word of a closed set (a status, a kind, a role) as the reader's language says it.
        env.add_filter("word", |value: String| i18n::word(reader(), &value));
        env.add_filter("cycle", |value: String| i18n::cycle(reader(), &value));
        Ok(Self { env })
    }

    /// Names of every template, for the test that renders them all.
    #[cfg(test)]
    pub(crate) fn names() -> impl Iterator<Item = &'static str> {
        TEMPLATES.iter().map(|(name, _)| *name).filter(|name| *name != "base.html")
    }

    /// Renders `name` with `data`, or a plain 500 if a template is broken.
    pub(crate) fn render(&self, name: &str, data: &Value) -> Result<String, String> {
        self.env
            .get_template(name)
            .and_then(|template| template.render(data))
            .map_err(|err| format!("rendering {name}: {err:#}"))
    }

    fn html(&self, status: StatusCode, name: &str, data: &Value) -> Response {
        match self.render(name, data) {
            Ok(html) => (status, Html(html)).into_response(),
            Err(err) => {
                tracing::error!(error = %err, "a page failed to render");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "This page failed to render; the details were logged.",
                )
                    .into_response()
            }
        }
    }

    /// A page that only says something, with a way back.
    pub(crate) fn refusal(&self, status: StatusCode, message: &Text) -> Response {
        let data = json!({"title": say(&Text::new("Not possible")), "message": say(message)});
        self.html(status, "message.html", &data)
    }
}

/// Renders a page for `session` (or nobody): the data plus the chrome, and the one-time
/// notice from the previous request, which is then cleared.
pub(crate) fn page(
    web: &Web,
    headers: &HeaderMap,
    session: Option<&SessionCaller>,
    name: &str,
    mut data: Value,
) -> Response {
    page_with_status(web, headers, session, StatusCode::OK, name, &mut data)
}

pub(crate) fn page_with_status(
    web: &Web,
    headers: &HeaderMap,
    session: Option<&SessionCaller>,
    status: StatusCode,
    name: &str,
    data: &mut Value,
) -> Response {
    let notice = session::cookie(web, headers, NOTICE_COOKIE)
        .and_then(|cookie| serde_json::from_str::<Text>(&session::decode(cookie)).ok())
        .map(|notice| say(&notice));
    if let Some(fields) = data.as_object_mut() {
        // Forms take the catalog's limits, so a field refuses what the op would.
        fields.insert("limits".into(), json!(ops::limits::FORMS));
        fields.insert("lang".into(), json!(reader().code()));
        if let Some(session) = session {
            fields.insert(
                "me".into(),
                json!({"name": session.name, "owner": session.caller.is_owner()}),
            );
            fields.insert("csrf".into(), json!(session.csrf));
        }
        if let Some(notice) = &notice {
            fields.insert("notice".into(), json!(notice));
        }
    }
    let mut response = web.templates.html(status, name, data);
    if notice.is_some() {
        response
            .headers_mut()
            .append(header::SET_COOKIE, session::set_cookie(web, NOTICE_COOKIE, "", Some(0)));
    }
    response
}

/// Redirects (303) to `to`, leaving `notice` for the page there.
pub(crate) fn redirect_with_notice(web: &Web, to: &str, notice: &Text) -> Response {
    let mut response = Redirect::to(to).into_response();
    add_notice(web, &mut response, notice);
    response
}

/// Leaves `notice` for the next page this browser shows, which says it in its reader's words.
pub(crate) fn add_notice(web: &Web, response: &mut Response, notice: &Text) {
    let stored = serde_json::to_string(notice).unwrap_or_default();
    response.headers_mut().append(
        header::SET_COOKIE,
        session::set_cookie(web, NOTICE_COOKIE, &session::encode(&stored), None),
    );
}

/// An op's refusal as a page: what went wrong and what to do, with the fitting status.
pub(crate) fn op_error(
    web: &Web,
    headers: &HeaderMap,
    session: &SessionCaller,
    err: &OpError,
) -> Response {
    let status = match err {
        OpError::NotFound { .. } => StatusCode::NOT_FOUND,
        OpError::Forbidden { .. } => StatusCode::FORBIDDEN,
        OpError::Conflict { .. } => StatusCode::CONFLICT,
        OpError::Unauthenticated { .. } => return Redirect::to("/sign-in").into_response(),
        OpError::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::UNPROCESSABLE_ENTITY,
    };
    let title = match status {
        StatusCode::NOT_FOUND => Text::new("Not found"),
        StatusCode::CONFLICT => Text::new("Something changed in the meantime"),
        StatusCode::INTERNAL_SERVER_ERROR => Text::new("Exhale failed"),
        _ => Text::new("Not possible"),
    };
    let mut data = json!({"title": say(&title), "message": say(&err.text())});
    page_with_status(web, headers, Some(session), status, "message.html", &mut data)
}

tokio::task_local! {
    /// The language the request being answered is written in.
    static READER: Cell<Language>;
}

/// Answers a request in its reader's language: the one their browser asks for
/// (`Accept-Language`) until the person is known, then theirs (`read_in`, when the session is
/// read). Every `say` and template `t` while answering reads it.
pub(crate) async fn in_readers_language(request: Request, next: Next) -> Response {
    let asked = request.headers().get(header::ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok());
    let language = i18n::choose(None, None, asked);
    READER.scope(Cell::new(language), next.run(request)).await
}

/// The rest of this request is written in the signed-in person's language: their setting,
/// else what their browser asks for.
pub(crate) fn read_by(person: &SessionCaller, headers: &HeaderMap) {
    let asked = headers.get(header::ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok());
    let language = i18n::choose(Some(&person.language), None, asked);
    // Outside a request (a test rendering a template) there is nobody to write for.
    let _ = READER.try_with(|reader| reader.set(language));
}

/// Runs `work` (a task spawned while answering a request) in `language`.
pub(crate) async fn written_in<F: Future>(language: Language, work: F) -> F::Output {
    READER.scope(Cell::new(language), work).await
}

/// The language of the request being answered; English outside one.
pub(crate) fn reader() -> Language {
    READER.try_with(Cell::get).unwrap_or_default()
}

/// A date (`2026-12-03`) or an instant (`2026-12-03T10:00:00Z`, its UTC day) as the reader's
/// language writes the day; anything else as it is.
fn written_date(value: &minijinja::Value) -> String {
    let text = value.as_str().map(str::to_owned).unwrap_or_else(|| value.to_string());
    match text.get(..10).and_then(|day| day.parse::<ops::common::IsoDate>().ok()) {
        Some(day) => i18n::format::date(reader(), day.date()),
        None => text,
    }
}

/// An amount as ops return it (`{"amount": "-12.99", "currency": "EUR", ...}`) as the reader's
/// language writes it; anything else as it is.
fn written_money(value: &minijinja::Value) -> String {
    let field = |name: &str| value.get_attr(name).ok().filter(|v| !v.is_undefined());
    match (field("amount"), field("currency")) {
        (Some(amount), Some(currency)) => match (amount.as_str(), currency.as_str()) {
            (Some(amount), Some(currency)) => money(amount, currency),
            _ => value.to_string(),
        },
        _ => value.to_string(),
    }
}

/// An amount, from its decimal and its currency's code, as the reader writes it.
fn money(decimal: &str, currency: &str) -> String {
    i18n::format::money(reader(), decimal, currency)
}

/// An op's amount as the reader writes it.
pub(crate) fn amount(amount: &ops::common::Amount) -> String {
    money(&amount.amount, &amount.currency)
}

/// A day as the reader writes it.
pub(crate) fn day(on: ops::common::IsoDate) -> String {
    i18n::format::date(reader(), on.date())
}

/// A sentence as the reader reads it.
pub(crate) fn say(text: &Text) -> String {
    i18n::say(reader(), text)
}
