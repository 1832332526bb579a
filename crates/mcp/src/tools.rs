//! Rendering catalog ops as MCP tools: their definitions, the sets a client lists, and a call
//! read into the op it runs (results are `results.rs`).

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::{Arc, Mutex, PoisonError},
};

use axum::http::Uri;
use ops::{
    Caller, Catalog, Mode, OpError, OpMeta, Text, ToolSet,
    household::Empty,
    ledger::{ListAccounts, ListAccountsInput},
    organise::ListPaymentMethods,
    tools::Kept,
};
use rmcp::model::{CallToolResult, JsonObject, Tool, ToolAnnotations};
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
/// model, output schema and all four annotations set explicitly; for a host that renders views,
/// what it says of them ([`crate::apps::tool_meta`]).
pub(crate) fn tool(meta: &OpMeta, views: bool) -> Tool {
    let info = meta.info;
    let mut input = ops::tools::model_input_schema(meta);
    if let Some(Value::Object(properties)) = input.get_mut("properties") {
        if info.is_write() {
            // The server's instructions say what it does, once for every write.
            properties.insert("dry_run".into(), json!({"type": "boolean"}));
        }
        let is_page = properties.contains_key("cursor");
        if let Some(Value::Object(limit)) = properties.get_mut("limit").filter(|_| is_page) {
            limit.insert(
                "description".into(),
                json!(format!("At most {}; follow next_cursor.", ops::tools::MAX_PAGE_FOR_MODELS)),
            );
        }
    }
    let description = format!("{}. {}", info.summary, info.description);
    let mut tool = Tool::new(info.name, description, object(input)).with_title(info.summary);
    // A write shown with the card may answer with the card's data instead of its output, and
    // clients check structured content against an output schema even on an error result.
    if !(views && info.is_write()) {
        tool = tool.with_raw_output_schema(object(meta.output_schema()));
    }
    let tool = tool.with_annotations(annotations(info.hints));
    match crate::apps::tool_meta(meta).filter(|_| views) {
        Some(ui) => tool.with_meta(ui),
        None => tool,
    }
}

/// The tool set `caller` lists: the one it asked for in the endpoint's address
/// (`/mcp?tools=compact`, which wins over its token's setting: a client configured for a small
/// model says so itself), else its token's.
pub(crate) fn set_of(caller: &Caller, uri: Option<&Uri>) -> ToolSet {
    let asked = uri
        .and_then(Uri::query)
        .and_then(|query| query.split('&').find_map(|pair| pair.strip_prefix("tools=")))
        .and_then(ToolSet::parse);
    asked.unwrap_or(caller.tool_set())
}

/// What the caller's household keeps, as far as its tool set cares: whether it has accounts the
/// caller sees (then the subscriptions set lists the ledger's everyday reads and writes) and
/// payment methods (else changing them is left out). Read for each list, so a household that
/// opens its first account gets them in its next session; only the subscriptions set asks.
pub(crate) async fn kept(catalog: &dyn Catalog, caller: &Caller, uri: Option<&Uri>) -> Kept {
    if set_of(caller, uri) != ToolSet::Subscriptions {
        return Kept::default();
    }
    let accounts =
        ops::call::<ListAccounts>(catalog, caller, &ListAccountsInput::default(), Mode::Apply)
            .await
            .is_ok_and(|list| !list.items.is_empty());
    let payment_methods = ops::call::<ListPaymentMethods>(catalog, caller, &Empty {}, Mode::Apply)
        .await
        .is_ok_and(|list| !list.items.is_empty());
    Kept { accounts, payment_methods }
}

/// The ops `caller` may call, of its tool set ([`set_of`]) for a household that keeps `kept`,
/// and those `find_tools` found in its session ([`Found::names`]; none on a stateless request).
pub(crate) fn offered<'a>(
    catalog: &'a dyn Catalog,
    caller: &Caller,
    uri: Option<&Uri>,
    kept: Kept,
    found: &BTreeSet<&'static str>,
) -> Vec<&'a OpMeta> {
    let set = set_of(caller, uri);
    catalog
        .ops()
        .iter()
        .filter(|meta| ops::policy::may_call(caller, meta.info))
        .filter(|meta| ops::tools::offered(set, kept, meta.info) || found.contains(meta.info.name))
        .collect()
}

/// The tools of [`offered`], and `call_tool` where the set leaves tools out, for a client that
/// renders views or not.
pub(crate) fn listed(
    catalog: &dyn Catalog,
    caller: &Caller,
    uri: Option<&Uri>,
    kept: Kept,
    found: &BTreeSet<&'static str>,
    views: bool,
) -> Vec<Tool> {
    let mut tools: Vec<Tool> = offered(catalog, caller, uri, kept, found)
        .into_iter()
        .map(|meta| tool(meta, views))
        .collect();
    if ops::tools::lists_call_tool(set_of(caller, uri)) {
        tools.push(call_tool(caller, views));
    }
    tools
}

/// All four hints, explicitly.
fn annotations(hints: ops::Hints) -> ToolAnnotations {
    ToolAnnotations::new()
        .read_only(hints.read_only)
        .destructive(hints.destructive)
        .idempotent(hints.idempotent)
        .open_world(hints.open_world)
}

/// `call_tool` ([`ops::tools::CALL_TOOL`]) as a client lists it: for a host with views and a
/// caller who may write, its results show in the card, like every write's, since it may call
/// one.
pub(crate) fn call_tool(caller: &Caller, views: bool) -> Tool {
    let info = ops::tools::CALL_TOOL;
    let hints = ops::tools::call_tool_hints(caller.scope);
    let description = format!("{}. {}", info.summary, info.description);
    let tool = Tool::new(info.name, description, object(ops::tools::call_tool_input_schema()))
        .with_title(info.summary)
        .with_annotations(annotations(hints));
    if views && caller.scope.allows(ops::Scope::Write) {
        tool.with_meta(crate::apps::card_meta())
    } else {
        tool
    }
}

/// A `tools/call` as the op it runs ([`called`]).
pub(crate) struct Called<'a> {
    pub(crate) meta: &'a OpMeta,
    pub(crate) arguments: JsonObject,
    /// Called through `call_tool`, whose own arguments hold the op's.
    pub(crate) through_call_tool: bool,
}

impl Called<'_> {
    /// A refusal of the op as a tool result; through `call_tool`, a field it names is at
    /// `/arguments/...` of what the model sent.
    pub(crate) fn failure(&self, err: OpError) -> CallToolResult {
        crate::results::failure(&if self.through_call_tool {
            err.within("/arguments")
        } else {
            err
        })
    }
}

/// A `tools/call` as the op it runs: `call_tool`'s, the op it names; any other, the op of that
/// name, or `None`. A tool for views only is refused through `call_tool` to a host with views
/// (its model must not confirm for the person).
pub(crate) fn called<'a>(
    catalog: &'a dyn Catalog,
    name: &str,
    arguments: JsonObject,
    views: bool,
) -> Result<Option<Called<'a>>, OpError> {
    if name != ops::tools::CALL_TOOL.name {
        let meta = catalog.ops().iter().find(|meta| meta.name() == name);
        return Ok(meta.map(|meta| Called { meta, arguments, through_call_tool: false }));
    }
    let (meta, arguments) = ops::tools::called_by_name(catalog.ops(), arguments)?;
    if views && crate::apps::for_views_only(meta) {
        return Err(OpError::invalid(
            "/name",
            Text::new("{name} is for the person, on the card: they confirm the change there.")
                .with("name", meta.name()),
        ));
    }
    Ok(Some(Called { meta, arguments, through_call_tool: true }))
}

/// [`called`] for a call whose op `framing::check` has found already (the tool's, or the one
/// `call_tool` names): no lookup, and `call_tool`'s arguments unwrapped.
pub(crate) fn called_op(
    op: &'static OpMeta,
    name: &str,
    arguments: JsonObject,
) -> Result<Called<'static>, OpError> {
    if name != ops::tools::CALL_TOOL.name {
        return Ok(Called { meta: op, arguments, through_call_tool: false });
    }
    let input = ops::tools::call_tool_input(arguments)?;
    Ok(Called { meta: op, arguments: input.arguments, through_call_tool: true })
}

/// The ops `find_tools` returned in one session beyond its tool set, listed from then on: a
/// client hands its model only listed tools, so a tool found but not listed could not be
/// called. Shared by the clones of one session's server; empty for a stateless request.
#[derive(Clone, Default)]
pub(crate) struct Found(Arc<Mutex<BTreeSet<&'static str>>>);

impl Found {
    /// The names found so far.
    pub(crate) fn names(&self) -> BTreeSet<&'static str> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Adds the tools a `find_tools` result (its JSON text) names that `offered` leaves out;
    /// whether any was new, so the client is told the list changed.
    pub(crate) fn add(&self, all: &[OpMeta], listed: &[&OpMeta], result: &str) -> bool {
        #[derive(serde::Deserialize)]
        struct Named {
            name: String,
        }
        #[derive(serde::Deserialize)]
        struct Result {
            tools: Vec<Named>,
        }
        let Ok(result) = serde_json::from_str::<Result>(result) else {
            return false;
        };
        let mut names = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let mut added = false;
        for tool in result.tools {
            let unlisted = !listed.iter().any(|meta| meta.name() == tool.name);
            if let Some(meta) = all.iter().find(|meta| meta.name() == tool.name)
                && unlisted
            {
                added |= names.insert(meta.info.name);
            }
        }
        added
    }
}

/// A tools/call's arguments made ready for the catalog: `dry_run` taken out as the call's mode,
/// a list's page capped for a model, and where the page asked for starts.
pub(crate) struct Prepared {
    pub(crate) input: Value,
    pub(crate) mode: Mode,
    pub(crate) page: PageStart,
}

/// Where the page a list call asked for starts, and how its cursors name a place, for
/// [`fit`] to point at the rest of a page it cuts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PageStart {
    /// How many items come before the page.
    pub(crate) offset: u64,
    pub(crate) by_position: bool,
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
    ops::tools::cap_page(meta, &mut arguments);
    let page = PageStart {
        offset: ops::common::items_before(arguments.get("cursor").and_then(Value::as_str)),
        by_position: ops::tools::pages_by_position(meta),
    };
    let mode = if dry_run { Mode::DryRun } else { Mode::Apply };
    Ok(Prepared { input: Value::Object(arguments), mode, page })
}

/// An op's output (its JSON text) as a tool result holds it: whole when it fits in
/// [`MAX_RESULT_BYTES`], otherwise a list page cut at the end, with `next_cursor` pointing at
/// the first item left out and a `truncated` note. The cut reads each item's size off the
/// text once; nothing is serialised again.
pub(crate) fn fit(text: String, page: PageStart) -> String {
    if text.len() <= MAX_RESULT_BYTES {
        return text;
    }
    cut_page(&text, page).unwrap_or(text)
}

/// The longest prefix of the page's items that fits, with the note; `None` when the output is
/// not a page.
fn cut_page(text: &str, page: PageStart) -> Option<String> {
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
            ops::common::cut_cursor(
                page.by_position,
                page.offset,
                kept,
                kept.checked_sub(1).map(|last| items[last].get()),
                total,
            ),
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

#[cfg(test)]
mod tests {
    use ops::{Actor, Caller, Role, Scope, ToolSet, Via, tools::Kept};
    use serde_json::Value;

    use super::tool;

    /// What a client hands the model of a tool: its name, description and input schema.
    fn model_visible(tool: &rmcp::model::Tool) -> usize {
        let description = tool.description.as_deref().unwrap_or_default();
        tool.name.len()
            + description.len()
            + Value::Object((*tool.input_schema).clone()).to_string().len()
    }

    /// The bytes a model reads of a write token's `tools/list` in a tool set, and how many tools.
    fn listed_for_a_model(set: ToolSet, kept: Kept) -> (usize, usize) {
        let caller = Caller {
            household_id: 1,
            member_id: 1,
            role: Role::Owner,
            scope: Scope::Write,
            actor: Actor::Token {
                token_id: 1,
                token_name: "t".into(),
                client_name: None,
                tools: set,
                credential: ops::Credential::ApiToken,
            },
            via: Via::Mcp,
            language: ops::Language::English,
        };
        let mut tools: Vec<_> = ops::all()
            .iter()
            .filter(|meta| ops::policy::may_call(&caller, meta.info))
            .filter(|meta| ops::tools::offered(set, kept, meta.info))
            .map(|meta| tool(meta, false))
            .collect();
        if ops::tools::lists_call_tool(set) {
            tools.push(super::call_tool(&caller, false));
        }
        (tools.iter().map(model_visible).sum(), tools.len())
    }

    #[test]
    fn a_found_tool_is_new_once_and_only_if_it_is_not_listed() {
        let found = super::Found::default();
        let listed: Vec<_> = ops::all().iter().filter(|meta| meta.name() == "list_tags").collect();
        let result = |names: &[&str]| {
            let tools: Vec<_> =
                names.iter().map(|name| serde_json::json!({"name": name})).collect();
            serde_json::json!({"tools": tools}).to_string()
        };
        // Not a find_tools result, or only tools already listed: nothing new.
        assert!(!found.add(ops::all(), &listed, "{}"));
        assert!(!found.add(ops::all(), &listed, &result(&["list_tags", "no_such_tool"])));
        assert!(found.add(ops::all(), &listed, &result(&["create_account", "list_tags"])));
        assert!(!found.add(ops::all(), &listed, &result(&["create_account"])));
        assert_eq!(found.names().into_iter().collect::<Vec<_>>(), ["create_account"]);
    }

    #[test]
    fn a_write_token_s_tools_list_stays_small_for_a_model() {
        let households = [false, true].into_iter().flat_map(|accounts| {
            [false, true].map(|payment_methods| Kept { accounts, payment_methods })
        });
        for set in [ToolSet::Full, ToolSet::Subscriptions, ToolSet::Compact] {
            for kept in households.clone() {
                let (visible, count) = listed_for_a_model(set, kept);
                println!("{} {kept:?}: {count} tools, {visible} bytes a model reads", set.as_str());
            }
        }
        let (visible, count) = listed_for_a_model(ToolSet::Full, Kept::default());
        // 39.4 KB before schemas were compacted and descriptions cut to 300 characters, 30.6 KB
        // with 50 tools, 31.0 KB with 54 (the reminder ops, paid for by shorter descriptions and
        // an activity filter that lists only the ops that write), 28.0 KB once what the briefing
        // says for every field (an id takes a name, a date takes words) was no longer repeated
        // in each (`ops::tools::say_once`), 36.6 KB with 69 (accounts, balances, transactions,
        // labels and import_transactions: 15 ops at about the same 530 bytes a tool), 39.1 KB
        // with 74 (the five budget ops, create_budget cut to 1.2 KB), 43.5 KB with 82 (rules and
        // the three ledger reports), 44.6 KB with 84 (splits and transfers), 45.0 KB with 85
        // (match_charge), 44.8 KB once amount patterns were said once too (and names'
        // patterns, new for the REST schema, left out here), 44.4 KB once what an amount is was
        // said once too and descriptions no longer said which writes wait for confirm_change
        // (the instructions say it), 44.8 KB with 86 (set_token_tools), 46.0 KB with 89
        // (list_bank_connections, sync_bank_connection and dismiss_recurring_proposal, about
        // 400 bytes each), 45.1 KB with 90 (list_banks) once a closed set of more than 40
        // values (the activity filter's every write op, 1.3 KB) was left to its description
        // (`ops::tools::MODEL_ENUM_VALUES`). This keeps each tool, and the whole, from growing.
        assert!(visible <= 46_000, "{count} tools, {visible} bytes a model reads");
        assert!(visible / count <= 530, "{count} tools, {visible} bytes");
        // A new token or connected app takes the subscriptions set (`ToolSet::DEFAULT`): the
        // budget of issue 11 (24 KB), with find_tools and call_tool for the rest.
        // For a household that keeps accounts the set lists the ledger's everyday reads and
        // writes instead of reads other tools answer and rarer writes, within the same budget.
        assert_eq!(ToolSet::DEFAULT, ToolSet::Subscriptions);
        for kept in households {
            let (visible, count) = listed_for_a_model(ToolSet::Subscriptions, kept);
            assert!(visible <= 24_000, "{kept:?}: {count} tools, {visible} bytes a model reads");
        }
        // A small window takes the compact set.
        let (visible, count) = listed_for_a_model(ToolSet::Compact, Kept::default());
        assert!(visible <= 12_000, "{count} tools, {visible} bytes a model reads");
    }
}
