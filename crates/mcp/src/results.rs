//! Op results as MCP answers: a success as a tool result with structured content, a refusal as
//! a tool result the model can act on (or, where MCP wants one, a protocol error), and a
//! failure inside as an internal error that says no more. The lowest layer of the crate.

use ops::{OpError, Text};
use rmcp::{
    ErrorData as McpError,
    model::{CallToolResult, ContentBlock},
};
use serde_json::{Value, json};

/// A successful op result for rmcp: the structured output, with the same JSON as text for
/// clients that read only text. `text` comes from [`fit`].
pub(crate) fn success(text: String) -> Result<CallToolResult, McpError> {
    let structured: Value = serde_json::from_str(&text).map_err(|_| internal())?;
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structured);
    Ok(result)
}

/// A write's preview (`dry_run`): the same result as [`success`], after a first text that says
/// nothing changed and gives the words to say, as a change that waits gives them. A small model
/// that previewed a cancellation told the person it "has been cancelled", and one that
/// previewed an import that it was "successfully imported".
pub(crate) fn preview(text: String) -> Result<CallToolResult, McpError> {
    let mut result = success(text)?;
    let said = Text::new(
        "Preview only: nothing was changed (dry_run). Say to them: \"Nothing has changed yet: that was only a preview. Shall I go ahead?\" If they agree, call the tool again without dry_run.",
    );
    result.content.insert(0, ContentBlock::text(said.render()));
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
