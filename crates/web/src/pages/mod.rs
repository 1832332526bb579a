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

use crate::{Web, render};

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
