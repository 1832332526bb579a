//! The object-safe `Catalog` trait every adapter holds, the typed helper [`call`], and the
//! change feed that yields only what its caller may see.

use serde_json::Value;
use tokio::sync::broadcast::{self, error::RecvError, error::TryRecvError};

use serde::Deserialize as _;

use crate::{
    caller::Caller,
    common::Receipt,
    error::OpError,
    events::ChangeEvent,
    op::{BoxFuture, Op, OpMeta},
    policy,
};

/// Apply the change, or run it for real and roll it back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Apply,
    DryRun,
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

    /// The language the person behind `caller` reads Exhale in: their own setting, else their
    /// household's; `None` when Exhale speaks neither. For what a person reads through an
    /// agent's connection (MCP Apps views), whatever language the agent reads.
    fn person_reads<'a>(
        &'a self,
        caller: &'a Caller,
    ) -> BoxFuture<'a, Result<Option<crate::Language>, OpError>>;

    /// Change events from now on, to be bound to a caller before anything can be read. For an
    /// adapter that must subscribe before it knows who listens (MCP acknowledges a
    /// `subscriptions/listen` before the handler sees the request's caller); everyone else
    /// calls [`Catalog::subscribe`].
    fn subscribe_unbound(&self) -> UnboundFeed;

    /// The change events `caller` may see, from now on: nothing from another household, and
    /// nothing about another member's private items.
    fn subscribe(&self, caller: &Caller) -> ChangeFeed {
        self.subscribe_unbound().bind(caller.clone())
    }
}

/// Change events nobody can read yet: [`UnboundFeed::bind`] names the caller they are for.
#[derive(Debug)]
pub struct UnboundFeed(broadcast::Receiver<ChangeEvent>);

impl UnboundFeed {
    /// For the catalog implementation: a feed over its event bus.
    pub fn new(receiver: broadcast::Receiver<ChangeEvent>) -> Self {
        Self(receiver)
    }

    /// The events of this feed that `caller` may see (`policy::may_see`).
    pub fn bind(self, caller: Caller) -> ChangeFeed {
        ChangeFeed { receiver: self.0, caller }
    }
}

/// What a change feed yields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Heard {
    /// A change the caller may see.
    Change(ChangeEvent),
    /// The listener fell behind and some events were dropped: treat everything as changed.
    Missed,
}

/// The change events one caller may see, filtered here so that no adapter has to.
#[derive(Debug)]
pub struct ChangeFeed {
    receiver: broadcast::Receiver<ChangeEvent>,
    caller: Caller,
}

impl ChangeFeed {
    /// The next change the caller may see; `None` once the catalog shuts down.
    pub async fn next(&mut self) -> Option<Heard> {
        loop {
            match self.receiver.recv().await {
                Ok(event) if policy::may_see(&self.caller, &event) => {
                    return Some(Heard::Change(event));
                }
                Ok(_) => {}
                Err(RecvError::Lagged(_)) => return Some(Heard::Missed),
                Err(RecvError::Closed) => return None,
            }
        }
    }

    /// The next change already published that the caller may see, without waiting.
    pub fn try_next(&mut self) -> Option<Heard> {
        loop {
            match self.receiver.try_recv() {
                Ok(event) if policy::may_see(&self.caller, &event) => {
                    return Some(Heard::Change(event));
                }
                Ok(_) => {}
                Err(TryRecvError::Lagged(_)) => return Some(Heard::Missed),
                Err(TryRecvError::Empty | TryRecvError::Closed) => return None,
            }
        }
    }
}

/// Call an op with typed input and output (web, CLI, channels). A write's receipt is left out;
/// [`call_write`] keeps it.
pub async fn call<O: Op>(
    catalog: &dyn Catalog,
    caller: &Caller,
    input: &O::Input,
    mode: Mode,
) -> Result<O::Output, OpError> {
    let output = call_value::<O>(catalog, caller, input, mode).await?;
    O::Output::deserialize(&output).map_err(|_| OpError::Internal)
}

/// A write's output with the receipt the invoker added: batch id, audit ids, changes.
#[derive(Clone, Debug, PartialEq)]
pub struct Written<T> {
    pub output: T,
    pub receipt: Receipt,
}

/// [`call`] for a write, keeping its receipt (to offer Undo, or to show a dry run's changes).
pub async fn call_write<O: Op>(
    catalog: &dyn Catalog,
    caller: &Caller,
    input: &O::Input,
    mode: Mode,
) -> Result<Written<O::Output>, OpError> {
    let output = call_value::<O>(catalog, caller, input, mode).await?;
    Ok(Written {
        output: O::Output::deserialize(&output).map_err(|_| OpError::Internal)?,
        receipt: Receipt::deserialize(&output).map_err(|_| OpError::Internal)?,
    })
}

/// [`call`], with the output as the catalog's JSON: for an adapter that passes it on as it is
/// (an MCP resource).
pub async fn call_value<O: Op>(
    catalog: &dyn Catalog,
    caller: &Caller,
    input: &O::Input,
    mode: Mode,
) -> Result<Value, OpError> {
    let input = serde_json::to_value(input).map_err(|_| OpError::Internal)?;
    catalog.call_json(caller, O::INFO.name, input, mode).await
}

/// [`call`], with the output as the catalog's JSON text, serialised once (an MCP tool result).
pub async fn call_text<O: Op>(
    catalog: &dyn Catalog,
    caller: &Caller,
    input: &O::Input,
    mode: Mode,
) -> Result<String, OpError> {
    let input = serde_json::to_value(input).map_err(|_| OpError::Internal)?;
    catalog.call_json_text(caller, O::INFO.name, input, mode).await
}
