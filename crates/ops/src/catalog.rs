//! The object-safe `Catalog` trait every adapter holds, and the typed helper [`call`].

use std::{future::Future, pin::Pin};

use serde_json::Value;

use crate::{caller::Caller, error::OpError, op::Op, op::OpMeta};

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Apply the change, or run it for real and roll it back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Apply,
    DryRun,
}

/// Published on the in-process bus after a write commits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeEvent {
    pub household_id: i64,
    /// "subscription", "charge", "category", …
    pub entity: String,
    pub entity_id: i64,
    pub op: String,
    pub audit_id: Option<i64>,
    /// Set when only this member may see the entity (a private subscription).
    pub private_to: Option<i64>,
}

/// The catalog implementation, as adapters see it.
pub trait Catalog: Send + Sync {
    /// Every op, in catalog order.
    fn ops(&self) -> &[OpMeta];

    /// Call an op with a JSON input. The one path for REST, MCP, the assistant and the CLI.
    fn call_json<'a>(
        &'a self,
        caller: &'a Caller,
        op: &'a str,
        input: Value,
        mode: Mode,
    ) -> BoxFuture<'a, Result<Value, OpError>>;

    /// The same as [`Catalog::call_json`], with the output already serialised: the fast path
    /// for adapters that pass JSON on as text (REST).
    fn call_json_text<'a>(
        &'a self,
        caller: &'a Caller,
        op: &'a str,
        input: Value,
        mode: Mode,
    ) -> BoxFuture<'a, Result<String, OpError>>;

    /// Resolve a bearer token to its caller (with `via` set by the adapter).
    fn authenticate_token<'a>(
        &'a self,
        token: &'a str,
        via: crate::Via,
    ) -> BoxFuture<'a, Result<Caller, OpError>>;

    /// Subscribe to change events.
    fn subscribe(&self) -> tokio::sync::broadcast::Receiver<ChangeEvent>;
}

/// Call an op with typed input and output (web, CLI, channels).
pub async fn call<O: Op>(
    catalog: &dyn Catalog,
    caller: &Caller,
    input: &O::Input,
    mode: Mode,
) -> Result<O::Output, OpError> {
    let input = serde_json::to_value(input).map_err(|_| OpError::Internal)?;
    let output = catalog.call_json(caller, O::INFO.name, input, mode).await?;
    serde_json::from_value(output).map_err(|_| OpError::Internal)
}
