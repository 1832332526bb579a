//! The catalog contract: every business operation Exhale offers, described once.
//!
//! An op is a unit struct implementing [`Op`]: its name, summary, description, the scope it
//! needs, its hints, whether it is financial, whether agents may call it, and its input and
//! output types (serde + JSON Schema). Adapters (REST, MCP, web, CLI, chat, assistant) render
//! from [`all`] and call through the object-safe [`Catalog`] trait; the implementation lives in
//! the `app` crate. Nothing here does IO or knows a wire format beyond JSON values.
//!
//! **API Boundary**: this crate is what adapters see. Changing a type here changes the public
//! contract (REST, MCP tools, `docs/ops.md`).

pub mod access;
pub mod accounts;
pub mod activity;
pub mod assistant;
pub mod backups;
pub mod banks;
pub mod budgets;
pub mod caller;
pub mod catalog;
pub mod channels;
pub mod charges;
pub mod common;
pub mod docs;
pub mod error;
pub mod events;
pub mod household;
pub mod import;
pub mod ledger;
pub mod ledger_reports;
pub mod limits;
pub mod network;
pub mod oauth;
pub mod op;
pub mod organise;
pub mod policy;
pub mod registry;
pub mod reports;
pub mod resolve;
pub mod rules;
mod schema;
pub mod subscriptions;
pub mod tools;

pub use caller::{Actor, Caller, Credential, Scope, ToolSet, Via};
pub use catalog::{
    Catalog, ChangeFeed, Heard, Mode, UnboundFeed, Written, call, call_text, call_value, call_write,
};
/// Re-exported so adapters write messages and name closed sets without depending on `domain`.
pub use domain::{CyclePreset, CycleUnit, Language, Text, entities, entities::Role};
pub use error::OpError;
pub use events::ChangeEvent;
pub use op::BoxFuture;
pub use op::{Exposure, Hints, Op, OpInfo, OpMeta};
pub use registry::{all, find, largest_request};

/// Exhale's version (every crate has the workspace's): what `exhale --version`, `/healthz`,
/// the web's footer, the OpenAPI document and MCP's `serverInfo` say.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
