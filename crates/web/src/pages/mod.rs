//! One module per area of the web app; each handler takes the signed-in person (`SignedIn`, or
//! `Posted` for a form), calls typed ops as that person and renders a template. What every
//! area shares is here: typed calls, form fields into op inputs, live pages, and the
//! confirmation page of a destructive op.

pub(crate) mod account;
pub(crate) mod activity;
pub(crate) mod assets;
pub(crate) mod assistant;
pub(crate) mod authorize;
pub(crate) mod backups;
pub(crate) mod banks;
pub(crate) mod export;
pub(crate) mod form;
pub(crate) mod import;
pub(crate) mod live;
pub(crate) mod money;
pub(crate) mod money_actions;
pub(crate) mod organise;
pub(crate) mod overview;
pub(crate) mod reminders;
pub(crate) mod settings;
pub(crate) mod subscription_actions;
pub(crate) mod subscriptions;
pub(crate) mod tokens;

use axum::{
    http::{HeaderMap, StatusCode},
    response::Response,
};
use ops::{Mode, Op, OpError, Text, Written, accounts::SessionCaller, common::Change};
use serde_json::{Value, json};

use crate::{
    reader::say,
    render::{self, op_error, redirect_with_notice},
    state::Web,
};

impl Web {
    /// Calls an op as the signed-in person (a read, or a write whose receipt is not needed).
    pub(crate) async fn call<O: Op>(
        &self,
        person: &SessionCaller,
        input: O::Input,
    ) -> Result<O::Output, OpError> {
        ops::call::<O>(self.catalog.as_ref(), &person.caller, &input, Mode::Apply).await
    }

    /// Applies a write as the signed-in person, or previews it (`Mode::DryRun`), with its
    /// receipt.
    pub(crate) async fn write<O: Op>(
        &self,
        person: &SessionCaller,
        input: O::Input,
        mode: Mode,
    ) -> Result<Written<O::Output>, OpError> {
        ops::call_write::<O>(self.catalog.as_ref(), &person.caller, &input, mode).await
    }

    /// An address of this server as the person reached it, for links they copy elsewhere (an
    /// invitation, a calendar feed).
    pub(crate) fn absolute(&self, headers: &HeaderMap, path: &str) -> String {
        let host = headers
            .get(axum::http::header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("127.0.0.1:8080");
        let scheme = if self.config.secure_cookies { "https" } else { "http" };
        format!("{scheme}://{host}{path}")
    }
}

/// Applies an op from one form of a page: to `back_to` with a notice, or the page again (drawn
/// by `again` with the status and `{"errors": {form: message}}`) when the person can put the
/// refusal right there.
#[expect(clippy::too_many_arguments, reason = "a form's whole round trip, read at each call")]
pub(crate) async fn apply_form<O, Again, Drawn>(
    web: &Web,
    headers: &HeaderMap,
    person: &SessionCaller,
    input: Result<O::Input, OpError>,
    back_to: &str,
    form: &str,
    done: Text,
    again: Again,
) -> Response
where
    O: Op,
    Again: FnOnce(StatusCode, Value) -> Drawn,
    Drawn: Future<Output = Response>,
{
    let result = match input {
        Ok(input) => web.call::<O>(person, input).await.map(|_| ()),
        Err(err) => Err(err),
    };
    match result {
        Ok(()) => redirect_with_notice(web, back_to, &done),
        Err(err) => refused_form(web, headers, person, &err, form, again).await,
    }
}

/// A form's refusal: the page again with the message at the form (`form` names which) when the
/// person can put it right there, the error page otherwise.
pub(crate) async fn refused_form<Again, Drawn>(
    web: &Web,
    headers: &HeaderMap,
    person: &SessionCaller,
    err: &OpError,
    form: &str,
    again: Again,
) -> Response
where
    Again: FnOnce(StatusCode, Value) -> Drawn,
    Drawn: Future<Output = Response>,
{
    match beside_the_form(err) {
        Some(status) => {
            again(status, json!({"errors": {form: crate::reader::say(&err.text())}})).await
        }
        None => op_error(web, headers, person, err),
    }
}

/// The status of a refusal shown beside the form that caused it, where the person can put it
/// right; `None` for one that gets the error page.
pub(crate) fn beside_the_form(err: &OpError) -> Option<StatusCode> {
    match err {
        OpError::InvalidInput { .. } => Some(StatusCode::UNPROCESSABLE_ENTITY),
        OpError::Forbidden { .. } => Some(StatusCode::FORBIDDEN),
        OpError::Conflict { .. } => Some(StatusCode::CONFLICT),
        _ => None,
    }
}

/// Renders a page that refreshes itself when something changes (see `live.rs`).
pub(crate) async fn live_page(
    web: &Web,
    headers: &HeaderMap,
    person: &SessionCaller,
    name: &str,
    mut data: Value,
) -> Response {
    data["live"] = json!(true);
    data["live_since"] = json!(live::newest_change(web, person).await);
    render::page(web, headers, Some(person), name, data)
}

/// What the confirmation page of a destructive op says.
pub(crate) struct Confirm {
    pub(crate) nav: &'static str,
    pub(crate) title: Text,
    pub(crate) explanation: Text,
    /// Where the page posts to apply the change.
    pub(crate) action: String,
    pub(crate) confirm_label: Text,
    pub(crate) cancel: String,
    /// Fields posted back with the confirmation, as (name, value) pairs.
    pub(crate) hidden: Vec<(String, String)>,
}

/// The confirmation page of `O`, built from its dry run: nothing changes until the person
/// confirms. `title` may name what the dry run found (the subscription's name).
pub(crate) async fn confirm_page<O: Op>(
    web: &Web,
    headers: &HeaderMap,
    person: &SessionCaller,
    input: O::Input,
    confirm: impl FnOnce(&O::Output) -> Confirm,
) -> Response {
    match web.write::<O>(person, input, Mode::DryRun).await {
        Ok(preview) => {
            confirmation(web, headers, person, confirm(&preview.output), &preview.receipt.changes)
        }
        Err(err) => op_error(web, headers, person, &err),
    }
}

/// The page that asks before a destructive change: what it is, the `changes` its dry run
/// found, and a form that posts `confirm.hidden` back to `confirm.action`.
pub(crate) fn confirmation(
    web: &Web,
    headers: &HeaderMap,
    person: &SessionCaller,
    confirm: Confirm,
    changes: &[Change],
) -> Response {
    let hidden: Vec<Value> =
        confirm.hidden.iter().map(|(name, value)| json!({"name": name, "value": value})).collect();
    render::page(
        web,
        headers,
        Some(person),
        "confirm.html",
        json!({
            "nav": confirm.nav,
            "title": say(&confirm.title),
            "explanation": say(&confirm.explanation),
            "changes": changes,
            "action": confirm.action,
            "hidden": hidden,
            "confirm_label": say(&confirm.confirm_label),
            "cancel": confirm.cancel,
        }),
    )
}

/// Whether a change shows its confirmation page first: the op destroys something with this
/// input (the catalog's hints say so, `Op::destroys`) and the person has not confirmed it yet.
/// Every page's form asks this.
pub(crate) fn asks_first<O: Op>(input: &O::Input, confirmed: bool) -> bool {
    O::destroys(input) && !confirmed
}

/// A posted form's fields again, marked confirmed, for its confirmation page to post back.
pub(crate) fn confirmed(
    fields: impl IntoIterator<Item = (String, String)>,
) -> Vec<(String, String)> {
    let mut hidden: Vec<(String, String)> =
        fields.into_iter().filter(|(name, _)| name != "csrf" && name != "confirmed").collect();
    hidden.push(("confirmed".to_owned(), "yes".to_owned()));
    hidden
}

/// Applies `O` and goes to `to` with `notice`, or shows why it could not.
pub(crate) async fn apply_and_go<O: Op>(
    web: &Web,
    headers: &HeaderMap,
    person: &SessionCaller,
    input: O::Input,
    to: &str,
    notice: Text,
) -> Response {
    match web.call::<O>(person, input).await {
        Ok(_) => redirect_with_notice(web, to, &notice),
        Err(err) => op_error(web, headers, person, &err),
    }
}
