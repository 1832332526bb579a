//! The MCP adapter: the catalog as MCP tools, on rmcp, over stdio and Streamable HTTP.
//!
//! [`ExhaleMcp`] is a hand-written `ServerHandler` (no `#[tool]` macros): `tools/list` renders
//! the ops the caller's scope allows from `ops::all()`, and `tools/call` goes through
//! `Catalog::call_json` like every other adapter. Business failures come back as `isError`
//! results whose text says what to do next; JSON-RPC errors are for protocol faults only.
//! rmcp types stay inside this crate (but for the handler bound of [`endpoint`]).
//!
//! Resources (`exhale://context` and one per entity) and prompts (ready-made workflows) are
//! read through the same catalog ops.
//!
//! Changes made anywhere (REST, the web, another agent) reach watching clients as
//! `resources/updated` notifications, from the catalog's event bus.
//!
//! A write that needs the person's confirmation shows them Exhale's confirmation card in a host
//! that renders MCP Apps views ([`apps`]), asks them through the client's own form when it has
//! one (elicitation), and otherwise returns a `confirmation_id` for `confirm_change`.
//!
//! [`endpoint`] is the Streamable HTTP transport for any handler: the app's, and the
//! conformance fixture's in the integration tests.

mod apps;
mod confirm;
mod direct;
mod framing;
mod incoming;
mod notify;
mod prompts;
mod resources;
mod results;
mod server;
mod sessions;
mod step_up;
mod tools;
mod transport;

pub use apps::sentences as view_sentences;
pub use server::ExhaleMcp;
pub use transport::{HttpConfig, endpoint, router, router_for_caller, serve_stdio};
