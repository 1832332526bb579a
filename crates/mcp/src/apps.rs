//! MCP Apps (`io.modelcontextprotocol/ui`): Exhale's own views inside hosts that render them
//! (ChatGPT, Claude, VS Code), and the confirmation card, where the person confirms a change.
//!
//! A host that declares the extension gets, in `tools/list`, each write pointing at the card
//! (`_meta.ui.resourceUri`) and `confirm_change` visible to views only
//! (`_meta.ui.visibility: ["app"]`), so its model cannot call it. A write that needs the person
//! answers with its preview in the text the model reads and the confirmation id for the view
//! (in `_meta`, and in the structured content for hosts that pass views only that): only the
//! card's Confirm button applies it. A host without the extension sees none of this and keeps
//! the `confirm_change` path.
//!
//! The views are self-contained HTML documents in `crates/mcp/views/`, built into the binary.
//! They read and act through the host's `tools/call` (no network: their CSP denies it) and
//! set every name as text, never as markup. What they show is what the tools return, so it
//! follows the caller's rights exactly as the tools do.

use ops::{OpError, OpMeta, Text};
use rmcp::{
    ErrorData as McpError, RoleServer,
    model::{CallToolResult, ContentBlock, JsonObject, MetaObject, ResourceContents},
    service::RequestContext,
};
use serde_json::{Value, json};

/// The extension's id, as clients declare it in their capabilities.
pub(crate) const EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The media type of a view.
pub(crate) const VIEW_MIME: &str = "text/html;profile=mcp-app";

/// The confirmation card: a change waiting for the person, or one that applied, with Undo.
pub(crate) const CARD: &str = "ui://exhale/confirmation-card";

/// Where the card finds the confirmation id in a result's `_meta`.
pub(crate) const CONFIRMATION_KEY: &str = "exhale/confirmation";

/// Each view, by its address: its name and its document.
const VIEWS: &[(&str, &str, &str)] =
    &[(CARD, "confirmation-card", include_str!("../views/confirmation-card.html"))];

/// Whether the client renders views, from the capabilities it declared (in `initialize`, or on
/// this request in the 2026 wire).
pub(crate) fn hosts_views(cx: &RequestContext<RoleServer>) -> bool {
    cx.client_capabilities().is_some_and(|capabilities| {
        capabilities
            .extensions
            .as_ref()
            .is_some_and(|extensions| extensions.contains_key(EXTENSION))
    })
}

/// The same, from a 2026 request's `io.modelcontextprotocol/clientCapabilities` object.
pub(crate) fn declared_in(capabilities: &JsonObject) -> bool {
    capabilities
        .get("extensions")
        .and_then(Value::as_object)
        .is_some_and(|extensions| extensions.contains_key(EXTENSION))
}

/// What a tool says of views to a host that renders them: the card for every write, and
/// `confirm_change` for views only.
pub(crate) fn tool_meta(meta: &OpMeta) -> Option<MetaObject> {
    let mut object = JsonObject::new();
    if meta.name() == "confirm_change" {
        object.insert("ui".into(), json!({"visibility": ["app"]}));
    } else if meta.info.is_write() {
        object.insert("ui".into(), json!({"resourceUri": CARD}));
        // The key hosts of early 2026 read; the extension's own SDK still writes both.
        object.insert("ui/resourceUri".into(), json!(CARD));
    } else {
        return None;
    }
    Some(MetaObject(object))
}

/// What the server declares of the extension (no settings).
pub(crate) fn server_extensions() -> rmcp::model::ExtensionCapabilities {
    [(EXTENSION.to_owned(), JsonObject::new())].into_iter().collect()
}

/// A view's document, or `None` for an address that is not one.
pub(crate) fn read(uri: &str) -> Option<ResourceContents> {
    let (_, _, html) = VIEWS.iter().find(|(address, _, _)| *address == uri)?;
    let mut ui = JsonObject::new();
    // No network at all: the view talks only to its host.
    ui.insert("csp".into(), json!({"connectDomains": [], "resourceDomains": []}));
    ui.insert("prefersBorder".into(), json!(true));
    let mut meta = JsonObject::new();
    meta.insert("ui".into(), Value::Object(ui));
    Some(ResourceContents::text(*html, uri).with_mime_type(VIEW_MIME).with_meta(MetaObject(meta)))
}

/// A write waiting for the person, answered to a host with views: the model reads what would
/// change and that the person decides on the card; the card gets the id to confirm it with.
/// `title` is the op's summary ("Delete a subscription"), the card's heading.
pub(crate) fn waiting_for_the_card(title: &str, err: &OpError) -> Result<CallToolResult, McpError> {
    let OpError::ConfirmationRequired { confirmation_id, expires_at, preview, .. } = err else {
        return Ok(crate::tools::failure(err));
    };
    let changes = preview.get("changes").cloned().unwrap_or(Value::Null);
    let summaries: Vec<&str> = changes
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|change| change["summary"].as_str())
        .collect();
    // What the model reads: no id, and no tool to call; the person decides on the card.
    let said = Text::new(
        "confirmation_required: the person confirms or leaves this change on the card shown with this result: {changes}. Tell them what it changes and wait; nothing has changed yet.",
    )
    .with("changes", summaries.join("; "))
    .render();
    let mut result = CallToolResult::error(vec![ContentBlock::text(said)]);
    let card = json!({
        "confirmation_id": confirmation_id,
        "expires_at": expires_at,
        "title": title,
        "changes": changes,
    });
    // For the view: in `_meta`, which the extension keeps from the model, and again in the
    // structured content for hosts that hand views only that (ChatGPT, Claude Desktop with a
    // local server). A model that reads it still cannot confirm: `confirm_change` is for views.
    result.structured_content = Some(json!({"confirmation": card}));
    let mut meta = JsonObject::new();
    meta.insert(CONFIRMATION_KEY.into(), card);
    result.meta = Some(MetaObject(meta));
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The card's Content-Security-Policy allows its own script and style by their hashes and
    /// nothing else: no network, no other script.
    #[test]
    fn every_view_denies_the_network_and_runs_only_its_own_script() {
        for (uri, _, html) in VIEWS {
            let policy = html
                .split("http-equiv=\"Content-Security-Policy\" content=\"")
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .unwrap_or_else(|| panic!("{uri} has no CSP"));
            assert!(policy.starts_with("default-src 'none';"), "{uri}: {policy}");
            assert!(!policy.contains("unsafe") && !policy.contains("http"), "{uri}: {policy}");
            for (tag, directive) in [("script", "script-src"), ("style", "style-src")] {
                let body = html
                    .split(&format!("<{tag}>"))
                    .nth(1)
                    .and_then(|rest| rest.split(&format!("</{tag}>")).next())
                    .unwrap_or_else(|| panic!("{uri} has no {tag}"));
                let hash = sha256_base64(body.as_bytes());
                assert!(
                    policy.contains(&format!("{directive} 'sha256-{hash}'")),
                    "{uri}: the {tag}'s hash is sha256-{hash}; put it in the CSP: {policy}"
                );
            }
        }
    }

    fn sha256_base64(bytes: &[u8]) -> String {
        use base64::Engine;
        use sha2::Digest;
        base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(bytes))
    }
}
