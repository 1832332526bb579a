//! MCP Apps (`io.modelcontextprotocol/ui`): Exhale's own views inside hosts that render them
//! (ChatGPT, Claude, VS Code), and the confirmation card, where the person confirms a change.
//!
//! A host that declares the extension gets, in `tools/list`, each write pointing at the card
//! (`_meta.ui.resourceUri`) and `confirm_change` visible to views only
//! (`_meta.ui.visibility: ["app"]`), so its model cannot call it: the host enforces that, and
//! the safety of the card rests on it. A write that needs the person answers with its preview
//! in the text the model reads and the confirmation id for the view (in `_meta`, and in the
//! structured content for hosts that pass views only that; never in the text): only the card's
//! Confirm button applies it. A host without the extension sees none of this and keeps
//! the `confirm_change` path, and so does every client over stdio (Claude Desktop hands a
//! local server's view neither the structured content nor the `_meta` of a result).
//!
//! The views are self-contained HTML documents, put together here from `crates/mcp/views/` (one
//! style, the bridge to the host, and each view's script) and built into the binary. They read
//! and act through the host's `tools/call` (no network: their CSP denies it, and allows only
//! their own script and style by hash) and set every name as text, never as markup. What they
//! show is what the tools return, so it follows the caller's rights exactly as the tools do.
//! Reads with a view: `list_subscriptions`, `get_subscription`, `list_upcoming_charges` and
//! `get_spending_summary`.

use std::sync::LazyLock;

use base64::{Engine, engine::general_purpose::STANDARD as BASE64};
use i18n::Language;
use ops::{
    Caller, Catalog, Mode, Op as _, OpError, OpMeta, Text,
    access::ConfirmChange,
    charges::ListUpcomingCharges,
    reports::GetSpendingSummary,
    subscriptions::{GetSubscription, ListSubscriptions},
};
use rmcp::{
    ErrorData as McpError, RoleServer,
    model::{CallToolResult, ContentBlock, JsonObject, MetaObject, ResourceContents},
    service::RequestContext,
};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The extension's id, as clients declare it in their capabilities.
pub(crate) const EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The media type of a view.
pub(crate) const VIEW_MIME: &str = "text/html;profile=mcp-app";

/// The confirmation card: a change waiting for the person, or one that applied, with Undo.
pub(crate) const CARD: &str = "ui://exhale/confirmation-card";

/// Where the card finds the confirmation id in a result's `_meta`.
pub(crate) const CONFIRMATION_KEY: &str = "exhale/confirmation";

/// A view: its address, its title, the ops whose results it shows (the card: every write),
/// and its script, which draws a result with the pieces of `views/bridge.js`.
struct View {
    uri: &'static str,
    title: &'static str,
    ops: &'static [&'static str],
    script: &'static str,
}

const VIEWS: &[View] = &[
    View {
        uri: CARD,
        title: "A change",
        ops: &[],
        script: include_str!("../views/confirmation-card.js"),
    },
    View {
        uri: "ui://exhale/subscriptions",
        title: "Subscriptions",
        ops: &[ListSubscriptions::INFO.name],
        script: include_str!("../views/subscriptions.js"),
    },
    View {
        uri: "ui://exhale/subscription",
        title: "A subscription",
        ops: &[GetSubscription::INFO.name],
        script: include_str!("../views/subscription.js"),
    },
    View {
        uri: "ui://exhale/upcoming-charges",
        title: "Upcoming charges",
        ops: &[ListUpcomingCharges::INFO.name],
        script: include_str!("../views/upcoming-charges.js"),
    },
    View {
        uri: "ui://exhale/spending",
        title: "Spending",
        ops: &[GetSpendingSummary::INFO.name],
        script: include_str!("../views/spending.js"),
    },
];

/// Each view's document in each language Exhale speaks: one HTML file with its style, its
/// script and its sentences inline, and a Content-Security-Policy that denies everything but
/// them (by hash): no network, no other script.
static DOCUMENTS: LazyLock<Vec<(&'static str, Language, String)>> = LazyLock::new(|| {
    VIEWS
        .iter()
        .flat_map(|view| {
            Language::ALL
                .iter()
                .map(move |&language| (view.uri, language, document(view, language)))
        })
        .collect()
});

/// Words of the ops' closed sets a view shows as they come (a status, a grouping, a cycle), so
/// it can say them in its reader's language.
fn data_words() -> Vec<&'static str> {
    let cycles = [
        "daily",
        "weekly",
        "monthly",
        "quarterly",
        "yearly",
        "every 2 weeks",
        "every 2 months",
        "every 6 months",
    ];
    ops::entities::SubscriptionStatus::NAMES
        .iter()
        .chain(ops::entities::ChargeStatus::NAMES)
        .chain(ops::reports::SpendingGroupBy::NAMES)
        .copied()
        .chain(cycles)
        .collect()
}

/// Every sentence the views say, English first: their titles and what their scripts say, for
/// the catalogue test (each needs its translation).
pub fn sentences() -> Vec<&'static str> {
    let bridge = include_str!("../views/bridge.js");
    VIEWS
        .iter()
        .map(|view| view.title)
        .chain(said_in(bridge))
        .chain(VIEWS.iter().flat_map(|view| said_in(view.script)))
        .collect()
}

/// The sentences a script says (`said("...")`), as they are written in it.
fn said_in(script: &str) -> Vec<&str> {
    script.split("said(\"").skip(1).filter_map(|rest| rest.split('"').next()).collect()
}

fn document(view: &View, language: Language) -> String {
    let style = include_str!("../views/style.css");
    let script = format!("{}\n{}", include_str!("../views/bridge.js"), view.script);
    let words: serde_json::Map<String, Value> = said_in(&script)
        .into_iter()
        .map(|english| (english, i18n::format_in(language, english).to_owned()))
        .chain(
            data_words()
                .into_iter()
                .map(|word| (word, i18n::cycle(language, &i18n::word(language, word)))),
        )
        .map(|(english, said)| (english.to_owned(), Value::String(said)))
        .collect();
    // Data for the script, never run; `<` written as an escape so nothing in it ends the element.
    let words = Value::Object(words).to_string().replace('<', "\\u003c");
    let hash = |text: &str| BASE64.encode(Sha256::digest(text.as_bytes()));
    let policy = format!(
        "default-src 'none'; script-src 'sha256-{}'; style-src 'sha256-{}'; base-uri 'none'; form-action 'none'",
        hash(&script),
        hash(style)
    );
    format!(
        "<!doctype html>\n<html lang=\"{lang}\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{policy}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>{style}</style>\n</head>\n<body>\n\
         <main id=\"view\" aria-live=\"polite\"><p class=\"muted\">…</p></main>\n\
         <script type=\"application/json\" id=\"words\">{words}</script>\n\
         <script>{script}</script>\n</body>\n</html>\n",
        lang = language.code(),
        title = i18n::format_in(language, view.title),
    )
}

/// The language the person behind `caller` reads, as the catalog says (English when it speaks
/// neither of theirs). Views and cards are for people, whatever language the agent reads.
pub(crate) async fn reader(catalog: &dyn Catalog, caller: &Caller) -> Language {
    catalog.person_reads(caller).await.ok().flatten().unwrap_or_default()
}

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

/// What a tool says of views to a host that renders them: its view (the card for every
/// write), and `confirm_change` for views only.
pub(crate) fn tool_meta(meta: &OpMeta) -> Option<MetaObject> {
    if for_views_only(meta) {
        let mut object = JsonObject::new();
        object.insert("ui".into(), json!({"visibility": ["app"]}));
        return Some(MetaObject(object));
    }
    let uri = if meta.info.is_write() {
        CARD
    } else {
        VIEWS.iter().find(|view| view.ops.contains(&meta.name()))?.uri
    };
    Some(view_meta(uri))
}

/// Whether a host with views hands the tool to views only: `confirm_change`, the card's.
pub(crate) fn for_views_only(meta: &OpMeta) -> bool {
    meta.name() == ConfirmChange::INFO.name
}

/// What a tool that shows its results in the card says of it (`call_tool`, which may call a
/// write).
pub(crate) fn card_meta() -> MetaObject {
    view_meta(CARD)
}

fn view_meta(uri: &str) -> MetaObject {
    let mut object = JsonObject::new();
    object.insert("ui".into(), json!({"resourceUri": uri}));
    // The key hosts of early 2026 read; the extension's own SDK still writes both.
    object.insert("ui/resourceUri".into(), json!(uri));
    MetaObject(object)
}

/// What the server declares of the extension (no settings).
pub(crate) fn server_extensions() -> rmcp::model::ExtensionCapabilities {
    [(EXTENSION.to_owned(), JsonObject::new())].into_iter().collect()
}

/// A view's document in `language`, or `None` for an address that is not one.
pub(crate) fn read(uri: &str, language: Language) -> Option<ResourceContents> {
    let (_, _, html) = DOCUMENTS
        .iter()
        .find(|(address, written_in, _)| *address == uri && *written_in == language)?;
    let mut ui = JsonObject::new();
    // No network at all: the view talks only to its host.
    ui.insert("csp".into(), json!({"connectDomains": [], "resourceDomains": []}));
    ui.insert("prefersBorder".into(), json!(true));
    let mut meta = JsonObject::new();
    meta.insert("ui".into(), Value::Object(ui));
    Some(ResourceContents::text(html, uri).with_mime_type(VIEW_MIME).with_meta(MetaObject(meta)))
}

/// Whether `uri` names a view.
pub(crate) fn is_view(uri: &str) -> bool {
    VIEWS.iter().any(|view| view.uri == uri)
}

/// A write this host would show without the card (it did not list it, and it was called by
/// name): the model gets neither the confirmation id nor `confirm_change`, but the way to show
/// the card, `call_tool` with the same call.
pub(crate) fn shown_only_on_the_card(op: &OpMeta) -> CallToolResult {
    let said = Text::new(
        "confirmation_required: here the person confirms changes on Exhale's card, which shows only with the tools listed to you. Call call_tool with name {name} and the same arguments to show it to them; nothing has changed yet.",
    )
    .with("name", op.name())
    .render();
    CallToolResult::error(vec![ContentBlock::text(said)])
}

/// A write waiting for the person, answered to a host with views: the model reads what would
/// change and that the person decides on the card; the card gets the id to confirm it with,
/// and its heading and lines in the person's language (from a second dry run read by them).
pub(crate) async fn waiting_for_the_card(
    catalog: &dyn Catalog,
    caller: &Caller,
    op: &OpMeta,
    input: Value,
    err: &OpError,
) -> Result<CallToolResult, McpError> {
    let OpError::ConfirmationRequired { confirmation_id, expires_at, preview, .. } = err else {
        return Ok(crate::results::failure(err));
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
    let language = reader(catalog, caller).await;
    // The person's words for the same changes: a second dry run read by them, kept only when it
    // names the same changes (something may have changed in between).
    let theirs = if language == caller.language {
        None
    } else {
        let read = caller.clone().reading(language);
        catalog.call_json(&read, op.name(), input, Mode::DryRun).await.ok()
    };
    let same = |a: &Value, b: &Value| {
        let keys = |v: &Value| -> Vec<(Value, Value, Value)> {
            v.as_array()
                .into_iter()
                .flatten()
                .map(|c| (c["entity"].clone(), c["entity_id"].clone(), c["action"].clone()))
                .collect()
        };
        keys(a) == keys(b)
    };
    let lines = theirs
        .and_then(|output| output.get("changes").cloned())
        .filter(|theirs| same(theirs, &changes))
        .unwrap_or_else(|| changes.clone());
    let card = json!({
        "confirmation_id": confirmation_id,
        "expires_at": expires_at,
        "title": i18n::say(language, &Text::new(op.info.summary)),
        "changes": lines,
    });
    // For the view: in `_meta`, which the extension keeps out of model context, and again in
    // the structured content for hosts that hand views only that (ChatGPT). Some hosts also
    // show structured content to the model: what keeps a model from confirming is that a host
    // with views never hands it `confirm_change` (visibility "app"), not that it cannot read
    // the id; the id is never in the text.
    result.structured_content = Some(json!({"confirmation": card}));
    let mut meta = JsonObject::new();
    meta.insert(CONFIRMATION_KEY.into(), card);
    result.meta = Some(MetaObject(meta));
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each view's Content-Security-Policy allows its own script and style by their hashes and
    /// nothing else: no network, no other script.
    #[test]
    fn every_view_denies_the_network_and_runs_only_its_own_script() {
        assert_eq!(DOCUMENTS.len(), VIEWS.len() * Language::ALL.len());
        for (uri, language, html) in DOCUMENTS.iter() {
            let policy = html
                .split("http-equiv=\"Content-Security-Policy\" content=\"")
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .unwrap_or_else(|| panic!("{uri} has no CSP"));
            assert!(policy.starts_with("default-src 'none';"), "{uri}: {policy}");
            assert!(!policy.contains("unsafe") && !policy.contains("http"), "{uri}: {policy}");
            for (tag, directive) in [("script", "script-src"), ("style", "style-src")] {
                // (The sentences are a `<script type="application/json">`: data, never run.)
                let bodies: Vec<&str> = html.split(&format!("<{tag}>")).skip(1).collect();
                assert_eq!(bodies.len(), 1, "{uri}: one {tag}");
                let body = bodies[0].split(&format!("</{tag}>")).next().unwrap_or_default();
                let hash = BASE64.encode(Sha256::digest(body.as_bytes()));
                assert!(
                    policy.contains(&format!("{directive} 'sha256-{hash}'")),
                    "{uri}: {policy}"
                );
            }
            // Names are set as text: no view writes markup from data.
            assert!(!html.contains("innerHTML") && !html.contains("insertAdjacentHTML"), "{uri}");
            println!("{uri} ({}): {} bytes", language.code(), html.len());
        }
    }

    #[test]
    fn every_write_has_the_card_and_each_read_view_names_real_reads() {
        for view in VIEWS {
            for op in view.ops {
                let meta = ops::all().iter().find(|meta| meta.name() == *op);
                assert!(meta.is_some_and(|meta| !meta.info.is_write()), "{op} is a read");
            }
        }
        for meta in ops::all().iter().filter(|meta| meta.info.is_write()) {
            let ui = tool_meta(meta).map(|meta| meta.0["ui"].clone()).unwrap_or_default();
            let expected = if meta.name() == ConfirmChange::INFO.name {
                json!({"visibility": ["app"]})
            } else {
                json!({"resourceUri": CARD})
            };
            assert_eq!(ui, expected, "{}", meta.name());
        }
    }
}
