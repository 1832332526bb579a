//! The hot path of `/mcp`: a 2026-07-28 stateless `tools/call` of a read op (by its name or
//! through `call_tool`), `tools/list` or `resources/read`, answered here rather than by rmcp's
//! per-request service (a oneshot transport, a spawned task and a typed round trip of the
//! whole message, for every call).
//!
//! Only a request that is plainly well formed is taken: one JSON-RPC request whose `_meta`
//! names 2026-07-28, with `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers that
//! agree with the body, an allowed Host, no Origin, no session, and nothing in it this path
//! does not know. Everything else goes on to rmcp, which stays the judge of the protocol, and
//! so does any call whose answer would be a JSON-RPC error rather than a result (the call is
//! a read, so asking again changes nothing). `tests/it/mcp.rs` checks that the two paths answer
//! the same requests with the same JSON.
//!
//! A tool result is written once: the op's JSON text (`Catalog::call_json_text`) is the
//! `structuredContent`, and the same bytes, escaped, are the text block.

use std::{
    collections::{BTreeSet, HashMap},
    sync::{Arc, Mutex, PoisonError},
};

use axum::{
    body::Bytes,
    extract::{Request, State},
    http::{HeaderMap, HeaderValue, StatusCode, Uri, header, request::Parts},
    middleware::Next,
    response::{IntoResponse, Response},
};
use ops::{Caller, Catalog, OpError, OpMeta, tools::Kept};
use rmcp::model::{JsonObject, ListToolsResult, ReadResourceResult, ServerResult};
use serde::Serialize;
use serde_json::value::RawValue;

use crate::{
    incoming::{Incoming, Plain},
    resources, results, tools,
};

/// The one protocol revision this path serves.
const MODERN: &str = "2026-07-28";

/// What the hot path needs: the catalog, the Host values the transport accepts, and the
/// `tools/list` results written so far.
pub(crate) struct Direct {
    catalog: Arc<dyn Catalog>,
    allowed_hosts: Vec<String>,
    /// Each `tools/list` result as written, by the names of the tools it lists: tool
    /// definitions do not change while Exhale runs, and a whole list is 170 KB of JSON.
    tools_lists: Mutex<HashMap<Vec<&'static str>, Arc<str>>>,
}

impl Direct {
    pub(crate) fn new(catalog: Arc<dyn Catalog>, allowed_hosts: Vec<String>) -> Arc<Self> {
        Arc::new(Self { catalog, allowed_hosts, tools_lists: Mutex::default() })
    }

    /// The `tools/list` result for `caller`, written once per set of tools.
    fn tools_list(&self, caller: &Caller, uri: &Uri, kept: Kept) -> Option<Arc<str>> {
        // Stateless: nothing found earlier is listed.
        let none_found = BTreeSet::new();
        let offered = tools::offered(self.catalog.as_ref(), caller, Some(uri), kept, &none_found);
        let mut names: Vec<&'static str> = offered.iter().map(|meta| meta.info.name).collect();
        if ops::tools::lists_call_tool(tools::set_of(caller, Some(uri))) {
            // Its hints follow the caller's scope.
            names.push(caller.scope.as_str());
        }
        let mut lists = self.tools_lists.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(written) = lists.get(&names) {
            return Some(written.clone());
        }
        let tools =
            tools::listed(self.catalog.as_ref(), caller, Some(uri), kept, &none_found, false);
        let ResultJson::Serialised(written) =
            cacheable(ServerResult::ListToolsResult(ListToolsResult::with_all_items(tools)))?
        else {
            return None;
        };
        lists.insert(names, written.clone());
        Some(written)
    }
}

/// Answers the request when it is one this path takes, and otherwise hands it on unchanged.
pub(crate) async fn serve(
    State(direct): State<Arc<Direct>>,
    mut request: Request,
    next: Next,
) -> Response {
    if request.method() != axum::http::Method::POST || !direct.takes_headers(request.headers()) {
        return next.run(request).await;
    }
    // `framing::check`, further out, has read the message; nothing inside needs it again.
    let incoming = request.extensions_mut().remove::<Incoming>();
    let Some(Incoming { plain: Some(message), op, .. }) = incoming else {
        return next.run(request).await;
    };
    let (parts, body) = request.into_parts();
    if let Some(answer) = direct.answer(&parts, message, op).await {
        return answer;
    }
    next.run(Request::from_parts(parts, body)).await
}

impl Direct {
    /// The headers that do not depend on the body: version, session, Host, Origin, media types.
    fn takes_headers(&self, headers: &HeaderMap) -> bool {
        only(headers, "mcp-protocol-version").is_some_and(|version| version == MODERN)
            && !headers.contains_key("mcp-session-id")
            && !headers.contains_key(header::ORIGIN)
            && !headers.keys().any(|name| name.as_str().starts_with("mcp-param-"))
            && only(headers, header::HOST.as_str())
                .is_some_and(|host| host_allowed(&self.allowed_hosts, host))
            && accepts_json_and_events(headers)
            && only(headers, header::CONTENT_TYPE.as_str()).is_some_and(|value| {
                let essence = value.split_once(';').map_or(value, |(essence, _)| essence);
                essence.trim().eq_ignore_ascii_case("application/json")
            })
    }

    /// The answer to a request this path takes, or `None` to hand it to rmcp.
    async fn answer(
        &self,
        parts: &Parts,
        message: Plain,
        op: Option<&'static OpMeta>,
    ) -> Option<Response> {
        let id = plain_id(&message.id)?;
        let params = message.params;
        if message.jsonrpc != "2.0"
            || params.meta.protocol_version != MODERN
            || crate::apps::declared_in(&params.meta.client_capabilities)
        {
            return None;
        }
        let headers = &parts.headers;
        let method = message.method.as_str();
        if only(headers, "mcp-method")? != method {
            return None;
        }
        let named = match method {
            "tools/call" => params.name.as_deref(),
            "resources/read" => params.uri.as_deref(),
            _ => None,
        };
        match (only(headers, "mcp-name"), named) {
            (None, None) => {}
            // An encoded name (`=?base64?…?=`) is rmcp's to read.
            (Some(header), Some(named)) if header == named && !header.starts_with("=?") => {}
            _ => return None,
        }
        let caller = parts
            .extensions
            .get::<Caller>()?
            .clone()
            .with_client_name(params.meta.client_info.map(|info| info.name));
        let result = match (method, params.name, params.uri) {
            ("tools/call", Some(name), None) => {
                self.call_tool(&caller, &name, op?, params.arguments.unwrap_or_default()).await?
            }
            ("tools/list", None, None) if params.arguments.is_none() => {
                let kept = tools::kept(self.catalog.as_ref(), &caller, Some(&parts.uri)).await;
                ResultJson::Serialised(self.tools_list(&caller, &parts.uri, kept)?)
            }
            ("resources/read", None, Some(uri)) if params.arguments.is_none() => {
                let contents = resources::read(self.catalog.as_ref(), &caller, &uri).await.ok()?;
                cacheable(ServerResult::ReadResourceResult(ReadResourceResult::new(vec![
                    contents,
                ])))?
            }
            _ => return None,
        };
        Some(reply(id, &result))
    }

    /// A read op's tool result, called by its name or through `call_tool`; `None` for a write
    /// (it may need the person), an unknown tool or a failure inside Exhale (a JSON-RPC error,
    /// rmcp's to write).
    async fn call_tool(
        &self,
        caller: &Caller,
        name: &str,
        op: &'static OpMeta,
        arguments: JsonObject,
    ) -> Option<ResultJson> {
        // No views here: a client that renders them is rmcp's.
        let mut called = match tools::called_op(op, name, arguments) {
            Ok(called) => called,
            Err(err) => return serialised(&results::failure(&err)),
        };
        let meta = called.meta;
        if !meta.info.hints.read_only {
            return None;
        }
        let prepared = match tools::prepare(meta, std::mem::take(&mut called.arguments)) {
            Ok(prepared) => prepared,
            Err(err) => return serialised(&called.failure(err)),
        };
        match self.catalog.call_json_text(caller, meta.name(), prepared.input, prepared.mode).await
        {
            Ok(text) => Some(ResultJson::Output(tools::fit(text, prepared.page))),
            Err(OpError::Internal) => None,
            Err(err) => serialised(&called.failure(err)),
        }
    }
}

/// The `result` of a reply.
enum ResultJson {
    /// A successful tool call: the op's JSON, to be both the structured content and the text.
    Output(String),
    /// Any other result, as rmcp's types serialise it.
    Serialised(Arc<str>),
}

/// A list or read result with the caching hints rmcp's handler adds for a 2026-07-28 peer.
fn cacheable(mut result: ServerResult) -> Option<ResultJson> {
    result.fill_missing_cache_hints();
    serialised(&result)
}

fn serialised(result: &impl Serialize) -> Option<ResultJson> {
    serde_json::to_string(result).ok().map(|written| ResultJson::Serialised(written.into()))
}

/// The JSON-RPC response with `id` and `result`, as rmcp would write it.
fn reply(id: &str, result: &ResultJson) -> Response {
    let mut body = Vec::with_capacity(match result {
        ResultJson::Output(text) => 2 * text.len() + 160,
        ResultJson::Serialised(text) => text.len() + 40,
    });
    body.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    body.extend_from_slice(id.as_bytes());
    body.extend_from_slice(b",\"result\":");
    match result {
        ResultJson::Output(text) => {
            // What `CallToolResult::success` with structured content serialises to.
            body.extend_from_slice(
                b"{\"resultType\":\"complete\",\"content\":[{\"type\":\"text\",\"text\":",
            );
            if serde_json::to_writer(&mut body, text.as_str()).is_err() {
                return StatusCode::INTERNAL_SERVER_ERROR.into_response();
            }
            body.extend_from_slice(b"}],\"structuredContent\":");
            body.extend_from_slice(text.as_bytes());
            body.extend_from_slice(b",\"isError\":false}");
        }
        ResultJson::Serialised(text) => body.extend_from_slice(text.as_bytes()),
    }
    body.push(b'}');
    let mut response = Bytes::from(body).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// The request id as rmcp writes it back: a whole number that fits an `i64` exactly, or a
/// string without escapes. Any other id is rmcp's to read.
fn plain_id(id: &RawValue) -> Option<&str> {
    let raw = id.get();
    let digits = raw.strip_prefix('-').unwrap_or(raw);
    let number = !digits.is_empty()
        && digits.len() <= 15
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    let string = raw.len() >= 2
        && raw.starts_with('"')
        && raw.ends_with('"')
        && !raw[1..raw.len() - 1].contains(['\\', '"']);
    (number || string).then_some(raw)
}

/// The Host rule of rmcp's transport: an allowed entry names the host, and the port when it
/// has one; no entries allow every host.
fn host_allowed(allowed_hosts: &[String], host: &str) -> bool {
    let Ok(host) = host.parse::<axum::http::uri::Authority>() else { return false };
    let normalise = |name: &str| name.trim_matches(['[', ']']).to_ascii_lowercase();
    let name = normalise(host.host());
    allowed_hosts.is_empty()
        || allowed_hosts.iter().any(|allowed| {
            let allowed = allowed.trim();
            let (allowed_name, port) = match allowed.parse::<axum::http::uri::Authority>() {
                Ok(authority) => (normalise(authority.host()), authority.port_u16()),
                Err(_) => (normalise(allowed), None),
            };
            allowed_name == name && port.is_none_or(|port| host.port_u16() == Some(port))
        })
}

/// The value of a header sent once, as text; `None` when absent, repeated or not text.
fn only<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    value.to_str().ok()
}

/// Whether `Accept` lists both JSON and event streams without parameters (weights are rmcp's
/// to read).
fn accepts_json_and_events(headers: &HeaderMap) -> bool {
    let ranges: Vec<&str> = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .collect();
    let has = |wanted: &str| ranges.iter().any(|range| range.eq_ignore_ascii_case(wanted));
    has("application/json") && has("text/event-stream")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_ids_are_taken() {
        let id = |raw: &str| serde_json::from_str::<Box<RawValue>>(raw).unwrap();
        for taken in ["1", "0", "-7", "123456789012345", "\"abc-1\"", "\"\""] {
            assert_eq!(plain_id(&id(taken)), Some(taken), "{taken}");
        }
        for left in ["1.0", "1e3", "1234567890123456", "\"a\\\"b\"", "null", "true", "[1]", "{}"] {
            assert_eq!(plain_id(&id(left)), None, "{left}");
        }
    }

    #[test]
    fn hosts_follow_the_transport_rule() {
        let allowed: Vec<String> =
            ["localhost", "127.0.0.1:8080", "[::1]"].iter().map(|h| (*h).to_owned()).collect();
        assert!(host_allowed(&allowed, "localhost:1234"));
        assert!(host_allowed(&allowed, "LOCALHOST"));
        assert!(host_allowed(&allowed, "127.0.0.1:8080"));
        assert!(!host_allowed(&allowed, "127.0.0.1:8081"));
        assert!(host_allowed(&allowed, "[::1]:9"));
        assert!(!host_allowed(&allowed, "evil.example:80"));
        assert!(!host_allowed(&allowed, "not a host"));
        assert!(host_allowed(&[], "anything"));
    }
}
