//! Rendering catalog ops as MCP tools, and op results as tool results.

use std::{collections::BTreeMap, sync::Arc};

use axum::http::Uri;
use ops::{Caller, Catalog, Mode, OpError, OpMeta, Text};
use rmcp::{
    ErrorData as McpError,
    model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations},
};
use serde_json::{Value, json, value::RawValue};

/// Tool results handed to a model stay under this many bytes.
const MAX_RESULT_BYTES: usize = ops::limits::MODEL_RESULT_BYTES;

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// The MCP tool for an op: its input schema (plus `dry_run` on writes) written compactly for a
/// model, output schema and all four annotations set explicitly.
pub(crate) fn tool(meta: &OpMeta) -> Tool {
    let info = meta.info;
    let mut input = meta.input_schema();
    if let Value::Object(root) = &mut input {
        // The Rust type's name tells a model nothing, nor "No input." an empty object.
        root.remove("title");
        if root.get("properties").is_none() {
            root.remove("description");
        }
    }
    compact(&mut input);
    if let Some(Value::Object(properties)) = input.get_mut("properties") {
        if info.is_write() {
            // The server's instructions say what it does, once for every write.
            properties.insert("dry_run".into(), json!({"type": "boolean"}));
        }
        let is_page = properties.contains_key("cursor");
        if let Some(Value::Object(limit)) = properties.get_mut("limit").filter(|_| is_page) {
            limit.insert(
                "description".into(),
                json!(format!(
                    "At most {MAX_PAGE_FOR_MODELS} over MCP, and what fits in 30 KB; follow next_cursor."
                )),
            );
        }
    }
    let description = format!("{}. {}", info.summary, info.description);
    Tool::new(info.name, description, object(input))
        .with_title(info.summary)
        .with_raw_output_schema(object(meta.output_schema()))
        .with_annotations(
            ToolAnnotations::new()
                .read_only(info.hints.read_only)
                .destructive(info.hints.destructive)
                .idempotent(info.hints.idempotent)
                .open_world(info.hints.open_world),
        )
}

/// The ops `caller` may call, of the tool set it asked for in the endpoint's address
/// (`/mcp?tools=compact`, which wins over its token's setting: a client configured for a small
/// model says so itself).
pub(crate) fn offered<'a>(
    catalog: &'a dyn Catalog,
    caller: &Caller,
    uri: Option<&Uri>,
) -> Vec<&'a OpMeta> {
    let asked = uri
        .and_then(Uri::query)
        .and_then(|query| query.split('&').find_map(|pair| pair.strip_prefix("tools=")))
        .and_then(ops::tools::ToolSet::parse);
    let set = asked.unwrap_or(caller.tool_set());
    catalog
        .ops()
        .iter()
        .filter(|meta| ops::policy::may_call(caller, meta.info))
        .filter(|meta| ops::tools::offered(set, meta.info))
        .collect()
}

/// The tools of [`offered`].
pub(crate) fn listed(catalog: &dyn Catalog, caller: &Caller, uri: Option<&Uri>) -> Vec<Tool> {
    offered(catalog, caller, uri).into_iter().map(tool).collect()
}

/// Rewrites a JSON Schema in fewer tokens that accept the same values (JSON Schema 2020-12):
/// - schemars' numeric `format`s (`int64`, `uint32`, `double`…) go: they are annotations;
/// - a `oneOf` of branches that each have one distinct `type` and only keywords of that type
///   becomes one schema with a list of types (`minimum` applies only to numbers, `minLength`
///   only to strings, so nothing changes): an id or a name is
///   `{"type": ["integer", "string"], "minimum": 1, …, "minLength": 1, …}`;
/// - `type` goes where an `enum` already lists every allowed value.
///
/// One change accepts more: a date's digit pattern goes, because a date also takes words.
fn compact(schema: &mut Value) {
    match schema {
        Value::Array(items) => items.iter_mut().for_each(compact),
        Value::Object(map) => {
            map.values_mut().for_each(compact);
            if map.get("format").and_then(Value::as_str).is_some_and(|format| {
                [
                    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                    "float", "double",
                ]
                .contains(&format)
            }) {
                map.remove("format");
            }
            // An id's bound of 2^53 - 1 (JSON's largest exact whole number) tells a model
            // nothing; the server still refuses larger ones.
            if map.get("maximum").and_then(Value::as_u64) == Some((1 << 53) - 1) {
                map.remove("maximum");
            }
            // A date also takes words ("in 10 days"), which the pattern of its digits would
            // refuse; `format: date` and the description say both.
            if map.get("format").and_then(Value::as_str) == Some("date") {
                map.remove("pattern");
            }
            if let Some(merged) = map.get("oneOf").and_then(merge_typed_branches) {
                map.remove("oneOf");
                map.extend(merged);
            }
            let enum_types = map
                .get("enum")
                .and_then(Value::as_array)
                .map(|values| values.iter().map(json_type).collect::<Vec<_>>());
            let declared = match map.get("type") {
                Some(Value::String(kind)) => Some(vec![kind.as_str()]),
                Some(Value::Array(kinds)) => kinds.iter().map(Value::as_str).collect(),
                _ => None,
            };
            if let (Some(enum_types), Some(declared)) = (enum_types, declared)
                && enum_types.iter().all(|kind| declared.contains(kind))
            {
                map.remove("type");
            }
        }
        _ => {}
    }
}

/// JSON Schema's type of a value (`integer` for whole numbers).
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The keywords that constrain only values of one type.
fn keywords_of(kind: &str) -> &'static [&'static str] {
    match kind {
        "integer" | "number" => {
            &["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"]
        }
        "string" => &["minLength", "maxLength", "pattern", "format"],
        _ => &[],
    }
}

/// The branches of a `oneOf` as one schema, when each has one distinct type (and `integer`
/// and `number` are not both there: they overlap) and only keywords of that type.
fn merge_typed_branches(branches: &Value) -> Option<JsonObject> {
    let branches = branches.as_array()?;
    let mut types: Vec<&str> = Vec::new();
    let mut merged = JsonObject::new();
    for branch in branches {
        let branch = branch.as_object()?;
        let kind = branch.get("type")?.as_str()?;
        let overlaps = |other: &str| types.contains(&other);
        if overlaps(kind)
            || (kind == "number" && overlaps("integer"))
            || (kind == "integer" && overlaps("number"))
        {
            return None;
        }
        types.push(kind);
        for (key, value) in branch {
            if key == "type" {
                continue;
            }
            if !keywords_of(kind).contains(&key.as_str()) {
                return None;
            }
            merged.insert(key.clone(), value.clone());
        }
    }
    merged.insert("type".into(), json!(types));
    Some(merged)
}

/// Over MCP a list page holds at most this many items, whatever `limit` asks (ops allow
/// 500): more would not fit in a tool result, and computing rows only to cut them away
/// would waste the server.
const MAX_PAGE_FOR_MODELS: u64 = 50;

/// Caps a list tool's `limit` at [`MAX_PAGE_FOR_MODELS`]. A `limit` that is not a positive
/// number is left for the op to refuse with its own message. Lists are the ops that page
/// (a `cursor`); `find_tools` has a `limit` of its own.
fn cap_page(meta: &OpMeta, arguments: &mut JsonObject) {
    let is_list = meta.schemas().0["properties"].get("cursor").is_some();
    if !is_list {
        return;
    }
    match arguments.get("limit").map(Value::as_u64) {
        None => {
            arguments.insert("limit".into(), json!(MAX_PAGE_FOR_MODELS));
        }
        Some(Some(limit)) if limit > MAX_PAGE_FOR_MODELS => {
            arguments.insert("limit".into(), json!(MAX_PAGE_FOR_MODELS));
        }
        Some(_) => {}
    }
}

/// A tools/call's arguments made ready for the catalog: `dry_run` taken out as the call's mode,
/// a list's page capped for a model, and where the page asked for starts.
pub(crate) struct Prepared {
    pub(crate) input: Value,
    pub(crate) mode: Mode,
    pub(crate) page_offset: u64,
}

/// Reads `dry_run` (a read ignores it) and caps a list's page; a `dry_run` that is not true or
/// false is refused.
pub(crate) fn prepare(meta: &OpMeta, mut arguments: JsonObject) -> Result<Prepared, OpError> {
    let dry_run = match arguments.remove("dry_run") {
        None | Some(Value::Bool(false)) => false,
        Some(Value::Bool(true)) => meta.info.is_write(),
        Some(_) => {
            return Err(OpError::invalid("/dry_run", Text::new("dry_run is true or false.")));
        }
    };
    cap_page(meta, &mut arguments);
    let page_offset =
        ops::common::cursor_offset(arguments.get("cursor").and_then(Value::as_str)).unwrap_or(0);
    let mode = if dry_run { Mode::DryRun } else { Mode::Apply };
    Ok(Prepared { input: Value::Object(arguments), mode, page_offset })
}

/// An op's output (its JSON text) as a tool result holds it: whole when it fits in
/// [`MAX_RESULT_BYTES`], otherwise a list page cut at the end, with `next_cursor` pointing at
/// the first item left out and a `truncated` note. `page_offset` is where the page asked for
/// starts. The cut reads each item's size off the text once; nothing is serialised again.
pub(crate) fn fit(text: String, page_offset: u64) -> String {
    if text.len() <= MAX_RESULT_BYTES {
        return text;
    }
    cut_page(&text, page_offset).unwrap_or(text)
}

/// The longest prefix of the page's items that fits, with the note; `None` when the output is
/// not a page.
fn cut_page(text: &str, page_offset: u64) -> Option<String> {
    let fields: BTreeMap<&str, &RawValue> = serde_json::from_str(text).ok()?;
    let items: Vec<&RawValue> = serde_json::from_str(fields.get("items")?.get()).ok()?;
    let total = fields.get("total").and_then(|total| total.get().parse::<u64>().ok());
    let kept_fields =
        fields.iter().filter(|(name, _)| !matches!(**name, "items" | "next_cursor" | "truncated"));
    // Room for the braces, the item separators, next_cursor and the note.
    let others: usize =
        kept_fields.clone().map(|(name, value)| name.len() + value.get().len() + 4).sum();
    let mut budget = (MAX_RESULT_BYTES - 400).saturating_sub(others + "\"items\":[],".len());
    let kept = items
        .iter()
        .map(|item| item.get().len() + 1)
        .take_while(|size| budget.checked_sub(*size).map(|left| budget = left).is_some())
        .count();
    let returned = items.len();
    let (next_cursor, note) = match total {
        Some(total) => (
            ops::common::next_cursor(page_offset, kept, total),
            Text::new(
                "Only the first {kept} of these {returned} items fit in a tool result; pass next_cursor as cursor for the rest, or narrow the query with filters.",
            ),
        ),
        None => (
            None,
            Text::new(
                "Only the first {kept} of these {returned} items fit in a tool result; narrow the query with filters.",
            ),
        ),
    };
    let note = note.with("kept", kept).with("returned", returned).render();
    let mut out = String::with_capacity(MAX_RESULT_BYTES);
    out.push_str("{\"items\":[");
    for (i, item) in items[..kept].iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(item.get());
    }
    out.push(']');
    for (name, value) in kept_fields {
        push_field(&mut out, name, value.get());
    }
    if let Some(cursor) = next_cursor {
        push_field(&mut out, "next_cursor", &Value::String(cursor).to_string());
    }
    push_field(&mut out, "truncated", &Value::String(note).to_string());
    out.push('}');
    Some(out)
}

/// Appends `,"name":value` to an object being written.
fn push_field(out: &mut String, name: &str, value: &str) {
    out.push_str(",\"");
    out.push_str(name);
    out.push_str("\":");
    out.push_str(value);
}

/// A successful op result for rmcp: the structured output, with the same JSON as text for
/// clients that read only text. `text` comes from [`fit`].
pub(crate) fn success(text: String) -> Result<CallToolResult, McpError> {
    let structured: Value = serde_json::from_str(&text).map_err(|_| internal())?;
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structured);
    Ok(result)
}

/// Exhale broke inside: a JSON-RPC error that says no more (the details were logged).
pub(crate) fn internal() -> McpError {
    McpError::internal_error(
        Text::new("Exhale failed inside; the details were logged on the server.").render(),
        None,
    )
}

/// An op's refusal where MCP wants a protocol error (resources, completions), not a tool
/// result: its stable code and message.
pub(crate) fn protocol_error(err: &OpError) -> McpError {
    McpError::invalid_params(
        Text::new("{code}: {message}")
            .with("code", err.code())
            .with("message", err.text().render())
            .render(),
        None,
    )
}

/// A business failure as a tool result the model can act on.
pub(crate) fn failure(err: &OpError) -> CallToolResult {
    let mut text = Text::new("{code}: {message}")
        .with("code", err.code())
        .with("message", err.text().render())
        .render();
    match err {
        OpError::InvalidInput { pointer, .. } if !pointer.is_empty() => {
            text.push_str(&Text::new(" (at {pointer})").with("pointer", pointer).render());
        }
        OpError::ConfirmationRequired { confirmation_id, expires_at, preview, .. } => {
            let details = json!({
                "confirmation_id": confirmation_id,
                "expires_at": expires_at,
                "changes": preview.get("changes"),
            });
            text.push_str(&format!("\n{details}"));
        }
        _ => {}
    }
    CallToolResult::error(vec![ContentBlock::text(text)])
}

#[cfg(test)]
mod tests {
    use ops::{Actor, Caller, Role, Scope, Via, tools::ToolSet};
    use serde_json::{Value, json};

    use super::{compact, tool};

    /// What a client hands the model of a tool: its name, description and input schema.
    fn model_visible(tool: &rmcp::model::Tool) -> usize {
        let description = tool.description.as_deref().unwrap_or_default();
        tool.name.len()
            + description.len()
            + Value::Object((*tool.input_schema).clone()).to_string().len()
    }

    #[test]
    fn a_write_token_s_tools_list_stays_small_for_a_model() {
        let caller = Caller {
            household_id: 1,
            member_id: 1,
            role: Role::Owner,
            scope: Scope::Write,
            actor: Actor::Token {
                token_id: 1,
                token_name: "t".into(),
                client_name: None,
                tools: ToolSet::Full,
                credential: ops::Credential::ApiToken,
            },
            via: Via::Mcp,
        };
        let tools: Vec<_> = ops::all()
            .iter()
            .filter(|meta| ops::policy::may_call(&caller, meta.info))
            .map(tool)
            .collect();
        let visible: usize = tools.iter().map(model_visible).sum();
        // 39.4 KB before schemas were compacted and descriptions cut to 300 characters, 30.6 KB
        // with 50 tools; the aim is 24 KB. This keeps it from growing back.
        assert!(visible <= 31_000, "{} tools, {visible} bytes a model reads", tools.len());
    }

    #[test]
    fn compact_schemas_accept_the_same_values() {
        let mut id_or_name = json!({"oneOf": [
            {"type": "integer", "format": "int64", "minimum": 1, "maximum": 9},
            {"type": "string", "minLength": 1, "maxLength": 100},
            {"type": "null"},
        ], "description": "Id or name."});
        let mut id = json!({"type": "integer", "minimum": 1, "maximum": 9_007_199_254_740_991_u64});
        compact(&mut id);
        assert_eq!(id, json!({"type": "integer", "minimum": 1}));
        compact(&mut id_or_name);
        assert_eq!(
            id_or_name,
            json!({"type": ["integer", "string", "null"], "minimum": 1, "maximum": 9, "minLength": 1, "maxLength": 100, "description": "Id or name."})
        );
        let mut choice = json!({"enum": ["a", "b", null], "type": ["string", "null"]});
        compact(&mut choice);
        assert_eq!(choice, json!({"enum": ["a", "b", null]}));
        // Left as they are: branches that share a type, overlap (integer and number), or carry
        // more than their type's keywords; an enum the type does not cover.
        for untouched in [
            json!({"oneOf": [{"type": "string", "maxLength": 3}, {"type": "string", "pattern": "^a"}]}),
            json!({"oneOf": [{"type": "integer"}, {"type": "number"}]}),
            json!({"oneOf": [{"type": "string", "description": "x"}, {"type": "null"}]}),
            json!({"oneOf": [{"type": "object", "properties": {}}, {"type": "null"}]}),
            json!({"enum": ["a", 1], "type": "string"}),
        ] {
            let mut schema = untouched.clone();
            compact(&mut schema);
            assert_eq!(schema, untouched);
        }
    }
}
