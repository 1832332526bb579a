//! The MCP adapter: the catalog as MCP tools, on rmcp, over stdio and Streamable HTTP.
//!
//! [`ExhaleMcp`] is a hand-written `ServerHandler` (no `#[tool]` macros): `tools/list` renders
//! the ops the caller's scope allows from `ops::all()`, and `tools/call` goes through
//! `Catalog::call_json` like every other adapter. Business failures come back as `isError`
//! results whose text says what to do next; JSON-RPC errors are for protocol faults only.
//! rmcp types stay inside this crate.
//!
//! Not here yet (issue 3 continues): resources, prompts, elicitation, change notifications
//! and the conformance fixture.

mod server;
mod tools;
mod transport;

pub use server::ExhaleMcp;
pub use transport::{HttpConfig, router, serve_stdio};
