//! One module per area of the web app; each handler reads the session, calls ops as the
//! signed-in person and renders a template.

pub(crate) mod account;
pub(crate) mod activity;
pub(crate) mod assets;
pub(crate) mod overview;
pub(crate) mod subscriptions;

use ops::{Mode, OpError, accounts::SessionCaller};
use serde_json::Value;

use crate::Web;

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
