//! One module per area of the web app; each handler reads the session, calls ops as the
//! signed-in person and renders a template.

pub(crate) mod account;
pub(crate) mod activity;
pub(crate) mod assets;
pub(crate) mod export;
pub(crate) mod import;
pub(crate) mod live;
pub(crate) mod organise;
pub(crate) mod overview;
pub(crate) mod settings;
pub(crate) mod subscription_actions;
pub(crate) mod subscriptions;
pub(crate) mod tokens;

use axum::{http::HeaderMap, response::Response};
use ops::{Mode, OpError, accounts::SessionCaller};
use serde_json::{Value, json};

use crate::{
    Web,
    render::{self, op_error, redirect_with_notice},
};

/// Calls an op as the signed-in person.
pub(crate) async fn call(
    web: &Web,
    session: &SessionCaller,
    op: &str,
    input: Value,
    mode: Mode,
) -> Result<Value, OpError> {
    web.catalog.call_json(&session.caller, op, input, mode).await
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

/// What the confirmation page of a destructive op says. `{name}` in the title becomes the
/// dry run's `name`, when it has one.
pub(crate) struct Confirm<'a> {
    pub(crate) nav: &'a str,
    pub(crate) title: &'a str,
    pub(crate) explanation: &'a str,
    /// Where the page posts to apply the change.
    pub(crate) action: String,
    pub(crate) confirm_label: &'a str,
    pub(crate) cancel: String,
    /// Fields posted back with the confirmation.
    pub(crate) hidden: Value,
}

/// The confirmation page of `op`, built from its dry run: nothing changes until the person
/// confirms.
pub(crate) async fn confirm_page(
    web: &Web,
    headers: &HeaderMap,
    person: &SessionCaller,
    op: &str,
    input: Value,
    confirm: Confirm<'_>,
) -> Response {
    match call(web, person, op, input, Mode::DryRun).await {
        Ok(preview) => render::page(
            web,
            headers,
            Some(person),
            "confirm.html",
            json!({
                "nav": confirm.nav,
                "title": confirm.title.replace("{name}", preview["name"].as_str().unwrap_or_default()),
                "explanation": confirm.explanation,
                "changes": preview["changes"],
                "action": confirm.action,
                "hidden": confirm.hidden,
                "confirm_label": confirm.confirm_label,
                "cancel": confirm.cancel,
            }),
        ),
        Err(err) => op_error(web, headers, person, &err),
    }
}

/// Applies `op` and goes to `to` with `notice`, or shows why it could not.
pub(crate) async fn apply_and_go(
    web: &Web,
    headers: &HeaderMap,
    person: &SessionCaller,
    op: &str,
    input: Value,
    to: &str,
    notice: &str,
) -> Response {
    match call(web, person, op, input, Mode::Apply).await {
        Ok(_) => redirect_with_notice(web, to, notice),
        Err(err) => op_error(web, headers, person, &err),
    }
}
