//! Rendering catalog ops as MCP tools, and op results as tool results.

use std::sync::Arc;

use ops::{OpError, OpMeta, Text};
use rmcp::{
    ErrorData as McpError,
    model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations},
};
use serde_json::{Value, json};

/// Tool results handed to a model stay under this many bytes (DESIGN section 4).
pub(crate) const MAX_RESULT_BYTES: usize = 30_000;

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// The MCP tool for an op: its input schema (plus `dry_run` on writes), output schema and all
/// four annotations set explicitly.
pub(crate) fn tool(meta: &OpMeta) -> Tool {
    let info = meta.info;
    let mut input = meta.input_schema();
    if let Some(Value::Object(properties)) = input.get_mut("properties") {
        if info.is_write() {
            properties.insert(
                "dry_run".into(),
                json!({"type": "boolean", "description": "Preview the change without applying it."}),
            );
        }
        let is_page = properties.contains_key("cursor");
        if let Some(Value::Object(limit)) = properties.get_mut("limit").filter(|_| is_page) {
            limit.insert(
                "description".into(),
                json!(format!(
                    "Items per page. Over MCP a page holds at most {MAX_PAGE_FOR_MODELS} items and what fits in 30 KB; follow next_cursor for more."
                )),
            );
        }
    }
    let description = format!("{}.\n\n{}", info.summary, info.description);
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

/// Over MCP a list page holds at most this many items, whatever `limit` asks (ops allow
/// 500): more would not fit in a tool result, and computing rows only to cut them away
/// would waste the server.
const MAX_PAGE_FOR_MODELS: u64 = 50;

/// Caps a list tool's `limit` at [`MAX_PAGE_FOR_MODELS`]. A `limit` that is not a positive
/// number is left for the op to refuse with its own message. Lists are the ops that page
/// (a `cursor`); `find_tools` has a `limit` of its own.
pub(crate) fn cap_page(meta: &OpMeta, arguments: &mut JsonObject) {
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

/// A successful op result: the structured output, with the same JSON as text for clients that
/// read only text. A page too large for a model is cut at the end; `next_cursor` then points
/// at the first item left out. `page_offset` is where the page asked for starts.
pub(crate) fn success(mut output: Value, page_offset: u64) -> CallToolResult {
    let mut text = output.to_string();
    if text.len() > MAX_RESULT_BYTES
        && let Some(Value::Array(items)) = output.get_mut("items")
    {
        // Measure each item once and keep the longest prefix that fits, leaving room for the
        // note; popping and re-serialising the whole list would be quadratic.
        let returned = items.len();
        let sizes: Vec<usize> = items.iter().map(|item| item.to_string().len() + 1).collect();
        let mut budget =
            (MAX_RESULT_BYTES - 400).saturating_sub(text.len() - sizes.iter().sum::<usize>());
        let kept = sizes
            .iter()
            .take_while(|size| budget.checked_sub(**size).map(|left| budget = left).is_some())
            .count();
        items.truncate(kept);
        let note = match output.get("total").and_then(Value::as_u64) {
            Some(total) => {
                match ops::common::next_cursor(page_offset, kept, total) {
                    Some(cursor) => output["next_cursor"] = json!(cursor),
                    None => {
                        output.as_object_mut().map(|fields| fields.remove("next_cursor"));
                    }
                }
                Text::new(
                    "Only the first {kept} of these {returned} items fit in a tool result; pass next_cursor as cursor for the rest, or narrow the query with filters.",
                )
            }
            None => Text::new(
                "Only the first {kept} of these {returned} items fit in a tool result; narrow the query with filters.",
            ),
        };
        let note = note.with("kept", kept).with("returned", returned);
        output["truncated"] = json!(note.render());
        text = output.to_string();
    }
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(output);
    result
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
