//! A POST's JSON-RPC message, read once by `framing::check` and handed to the layers inside
//! in the request's extensions: the size limit and step-up read the op a `tools/call` runs,
//! and the hot path (`direct`) the whole message, so none of them parses the body again.
//! rmcp, which answers everything else, reads the body itself.

use std::borrow::Cow;

use ops::OpMeta;
use rmcp::model::JsonObject;
use serde::Deserialize;
use serde_json::value::RawValue;

/// What a message says, as read once.
#[derive(Clone)]
pub(crate) struct Incoming {
    /// The id of a message without the plain shape (a plain one's is in it): see [`Incoming::id`].
    other_id: Option<Box<RawValue>>,
    /// For a `tools/call`, the op it runs: the tool's, or the one `call_tool` names; `None`
    /// for any other method or a name no op has.
    pub(crate) op: Option<&'static OpMeta>,
    /// The whole message, when it has the plain shape the hot path takes.
    pub(crate) plain: Option<Plain>,
}

/// A JSON-RPC request in the shape the hot path takes; an unknown field anywhere leaves the
/// message to rmcp.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Plain {
    pub(crate) jsonrpc: String,
    pub(crate) id: Box<RawValue>,
    pub(crate) method: String,
    pub(crate) params: PlainParams,
}

#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PlainParams {
    #[serde(default)]
    pub(crate) name: Option<String>,
    #[serde(default)]
    pub(crate) arguments: Option<JsonObject>,
    #[serde(default)]
    pub(crate) uri: Option<String>,
    #[serde(rename = "_meta")]
    pub(crate) meta: PlainMeta,
}

#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PlainMeta {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    pub(crate) protocol_version: String,
    // An object, as the revision requires; a client that renders views is rmcp's to answer.
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
    pub(crate) client_capabilities: JsonObject,
    #[serde(rename = "io.modelcontextprotocol/clientInfo", default)]
    pub(crate) client_info: Option<ClientInfo>,
}

#[derive(Clone, Deserialize)]
pub(crate) struct ClientInfo {
    pub(crate) name: String,
    // Required by the revision, as rmcp reads it; unused here.
    #[serde(rename = "version")]
    _version: String,
}

/// Any other message, read only as far as the op a `tools/call` runs.
#[derive(Deserialize)]
struct Named<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(default)]
    params: Option<NamedParams>,
}

#[derive(Deserialize)]
struct NamedParams {
    #[serde(default)]
    name: Option<String>,
    /// `call_tool`'s, which name the op it calls.
    #[serde(default)]
    arguments: Option<NamedOnly>,
}

#[derive(Deserialize)]
struct NamedOnly {
    #[serde(default)]
    name: Option<String>,
}

impl Incoming {
    /// The message in `bytes`, when it is one JSON object.
    pub(crate) fn read(bytes: &[u8]) -> Option<Self> {
        if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            return None;
        }
        if let Ok(plain) = serde_json::from_slice::<Plain>(bytes) {
            let op = (plain.method == TOOLS_CALL)
                .then(|| {
                    let params = &plain.params;
                    let named =
                        params.arguments.as_ref().and_then(|arguments| arguments.get("name"));
                    op_of(params.name.as_deref()?, named.and_then(|name| name.as_str()))
                })
                .flatten();
            return Some(Self { other_id: None, op, plain: Some(plain) });
        }
        let named: Named<'_> = serde_json::from_slice(bytes).ok()?;
        let op = (named.method == TOOLS_CALL)
            .then(|| {
                let params = named.params.as_ref()?;
                let inner =
                    params.arguments.as_ref().and_then(|arguments| arguments.name.as_deref());
                op_of(params.name.as_deref()?, inner)
            })
            .flatten();
        Some(Self { other_id: named.id.map(ToOwned::to_owned), op, plain: None })
    }

    /// The request's id as written; `None` for a notification.
    pub(crate) fn id(&self) -> Option<&RawValue> {
        match &self.plain {
            Some(plain) => Some(&plain.id),
            None => self.other_id.as_deref(),
        }
    }
}

const TOOLS_CALL: &str = "tools/call";

/// The op a tool call runs: the tool's, or for `call_tool` the one it names.
fn op_of(tool: &str, named_in_arguments: Option<&str>) -> Option<&'static OpMeta> {
    ops::tools::called_name(tool, named_in_arguments).and_then(ops::find)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_read_as_the_op_it_runs_whatever_its_shape() {
        let plain = br#"{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "call_tool", "arguments": {"name": "list_tags", "arguments": {}}, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}}"#;
        let read = Incoming::read(plain).unwrap_or_else(|| panic!("read"));
        assert_eq!(read.op.map(|op| op.name()), Some("list_tags"));
        assert_eq!(read.id().map(RawValue::get), Some("7"));
        assert!(read.plain.is_some());

        // Not the hot path's shape (no _meta, an extra field): still the op, for step-up.
        let other = br#"{"jsonrpc": "2.0", "id": "a", "method": "tools/call", "extra": 1, "params": {"name": "get_subscription", "arguments": {"id": 1}}}"#;
        let read = Incoming::read(other).unwrap_or_else(|| panic!("read"));
        assert_eq!(read.op.map(|op| op.name()), Some("get_subscription"));
        assert_eq!(read.id().map(RawValue::get), Some("\"a\""));
        assert!(read.plain.is_none());

        let listed = br#"{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}"#;
        assert!(Incoming::read(listed).is_some_and(|read| read.op.is_none()));
        let unknown = br#"{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "no_such_op"}}"#;
        assert!(Incoming::read(unknown).is_some_and(|read| read.op.is_none()));
        for not_one in [&b"[{}]"[..], b"", b"null", b"{"] {
            assert!(Incoming::read(not_one).is_none());
        }
    }
}
