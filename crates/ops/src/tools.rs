//! The tools a model is offered: the full catalog, the subscriptions set (what a household
//! that keeps only subscriptions uses, about half the catalog's bytes), or a compact set for
//! clients and models with small windows (the ops a household uses most); the last two with
//! `find_tools`, which searches the rest by words and returns the definitions to call next.
//!
//! Adapters ask [`offered`] which ops to list, and the `find_tools` handler ranks with
//! [`find`]; who may call an op is still `crate::policy`, and an op left out of the compact
//! list stays callable by name.

use domain::names::fold;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::{
    OpError, OpMeta, Text,
    caller::ToolSet,
    op::{Hints, Op, OpInfo},
};

/// The ops of the compact set besides `find_tools`: the briefing, reading and changing
/// subscriptions, what is coming and what it costs, what changed and its undo, and
/// confirming. (A 1.5B model offered a set without resume and activity called pause for
/// "resume" and upcoming charges for "what changed": it rarely searches. Without delete and
/// change_price it cancelled for "delete" and resumed for "goes up to 19.99".)
pub const COMPACT: &[&str] = &[
    "get_context",
    "list_subscriptions",
    "get_subscription",
    "create_subscription",
    "update_subscription",
    "pause_subscription",
    "resume_subscription",
    "cancel_subscription",
    "delete_subscription",
    "change_price",
    "list_upcoming_charges",
    "get_spending_summary",
    "list_activity",
    "undo",
    "confirm_change",
];

/// The ops of the subscriptions set besides `find_tools` and those of [`COMPACT`]: the rest of
/// what a household keeping subscriptions does, its reports, and statements to import. Left
/// out: the ledger (accounts, transactions, labels, rules, budgets and their reports) and the
/// household's administration (members, settings, tokens, channels; `get_context` tells the
/// household and its members), about 21 KB of a write token's 45 KB.
pub const SUBSCRIPTIONS: &[&str] = &[
    "reschedule_subscription",
    "bulk_update_subscriptions",
    "list_charges",
    "get_charge",
    "update_charge",
    "list_categories",
    "create_category",
    "update_category",
    "delete_category",
    "merge_categories",
    "list_payment_methods",
    "create_payment_method",
    "update_payment_method",
    "delete_payment_method",
    "list_tags",
    "rename_tag",
    "delete_tag",
    "get_spending_history",
    "list_price_changes",
    "find_savings",
    "parse_statement",
    "import_subscriptions",
    "list_attention_items",
];

/// The ledger's everyday reads, which the subscriptions set lists for a household that keeps
/// accounts: its accounts and balances, its transactions, what it spends by category, and its
/// budgets.
pub const LEDGER_READS: &[&str] =
    &["list_accounts", "search_transactions", "spending_by_category", "list_budgets"];

/// What the subscriptions set gives up for [`LEDGER_READS`], so that it stays within its
/// budget: reads whose answer another listed tool also gives (a charge is in `list_charges`,
/// the tags in `list_subscriptions`, what needs attention in the briefing, and spending over
/// time, which for a household that keeps its transactions `spending_by_category` tells from
/// the money itself). The price changes stay: read from each subscription, a small model
/// answered "what went up in price" with the spending summary instead.
pub const LEFT_FOR_LEDGER: &[&str] =
    &["get_charge", "list_tags", "list_attention_items", "get_spending_history"];

/// The ledger's everyday writes, which the subscriptions set lists for a household that keeps
/// accounts: a cash payment, a payment's category, a statement into an account, a budget and a
/// rule for the payments to come. (Offered only through `find_tools`, a 1.5B model never
/// searched for them: it recorded a cash expense as a subscription, a budget as a category and
/// a statement as subscriptions, and categorised a payment by renaming a payment method.)
pub const LEDGER_WRITES: &[&str] = &[
    "create_transaction",
    "categorise_transactions",
    "import_transactions",
    "create_budget",
    "create_rule",
];

/// What the subscriptions set gives up for [`LEDGER_WRITES`]: reading a statement for
/// subscriptions (a household that keeps accounts loads it into one with `import_transactions`)
/// and tidying categories and tags (renaming, deleting, merging), which are rare and which a
/// small model took for renaming a subscription. `find_tools` still finds them all.
pub const LEFT_FOR_LEDGER_WRITES: &[&str] = &[
    "parse_statement",
    "import_subscriptions",
    "update_category",
    "delete_category",
    "merge_categories",
    "rename_tag",
    "delete_tag",
];

/// What the subscriptions set leaves out for a household without payment methods the caller
/// sees, since there is nothing to change or delete (a small model called them for "delete
/// iCloud" and "put the payment under Restaurants"); adding the first one stays listed.
pub const PAYMENT_METHOD_CHANGES: &[&str] = &["update_payment_method", "delete_payment_method"];

/// What the household the caller reads keeps, as far as the tool sets care.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Kept {
    /// It has accounts the caller can see.
    pub accounts: bool,
    /// It has payment methods the caller can see.
    pub payment_methods: bool,
}

impl Kept {
    /// A household that keeps subscriptions and the payment methods they are paid with, and no
    /// accounts: what the guide counts a set's tools for.
    pub const SUBSCRIPTIONS: Kept = Kept { accounts: false, payment_methods: true };
}

/// Whether a client of this tool set lists the op (callable or not is `crate::policy`), for a
/// household that keeps `kept`. Only the subscriptions set follows what is kept.
pub fn offered(set: ToolSet, kept: Kept, info: &OpInfo) -> bool {
    let name = info.name;
    let found_or_in = |sets: &[&[&str]]| {
        name == FindTools::INFO.name || sets.iter().any(|set| set.contains(&name))
    };
    match set {
        ToolSet::Full => true,
        ToolSet::Subscriptions => {
            let listed = found_or_in(&[COMPACT, SUBSCRIPTIONS])
                && (kept.payment_methods || !PAYMENT_METHOD_CHANGES.contains(&name));
            if kept.accounts {
                (listed
                    && !LEFT_FOR_LEDGER.contains(&name)
                    && !LEFT_FOR_LEDGER_WRITES.contains(&name))
                    || LEDGER_READS.contains(&name)
                    || LEDGER_WRITES.contains(&name)
            } else {
                listed
            }
        }
        ToolSet::Compact => found_or_in(&[COMPACT]),
    }
}

/// An op's input schema as a model is shown it: compact ([`compact`]), without the Rust type's
/// title or an empty object's "No input.", and without what the briefing and the server's
/// instructions say once for every tool ([`say_once`]). MCP adds `dry_run` to writes; the
/// assistant does not.
pub fn model_input_schema(meta: &OpMeta) -> Value {
    let mut input = meta.input_schema();
    if let Value::Object(root) = &mut input {
        root.remove("title");
        if root.get("properties").is_none() {
            root.remove("description");
        }
    }
    compact(&mut input);
    say_once(&mut input);
    leave_out_long_enums(&mut input);
    input
}

/// The most values of a closed set a model is shown; a longer set (every op that writes, for
/// the activity's filter: 2 KB) is left to its description, and the server still refuses a
/// value outside it, saying which it takes.
pub const MODEL_ENUM_VALUES: usize = 40;

/// Leaves out of a model's schema every closed set longer than [`MODEL_ENUM_VALUES`].
fn leave_out_long_enums(schema: &mut Value) {
    match schema {
        Value::Array(items) => items.iter_mut().for_each(leave_out_long_enums),
        Value::Object(map) => {
            map.values_mut().for_each(leave_out_long_enums);
            if map
                .get("enum")
                .and_then(Value::as_array)
                .is_some_and(|values| values.len() > MODEL_ENUM_VALUES)
            {
                map.remove("enum");
            }
        }
        _ => {}
    }
}

/// Leaves out of a compact schema what a model is told once, in the briefing and the server's
/// instructions, instead of in every field: that an id also takes a name ("Id or name."), that
/// a date also takes words ([`crate::resolve::DATE_FORMS`]), what an amount is, an
/// id-or-name's bounds (at least 1, a name of 1 to 100 characters), and the patterns of names,
/// notes, amounts and base64 (which the instructions say in a sentence each, instead of 60 to
/// 400 characters a field). It accepts more than the op: the server still refuses what is out of bounds,
/// saying why.
pub fn say_once(schema: &mut Value) {
    match schema {
        Value::Array(items) => items.iter_mut().for_each(say_once),
        Value::Object(map) => {
            map.values_mut().for_each(say_once);
            if let Some(Value::String(description)) = map.get_mut("description") {
                // (An amount's, as the doc comment of an amount field writes it.)
                let amount = "Decimal string in major units, e.g. \"12.99\".";
                for said in ["Id or name.", crate::resolve::DATE_FORMS, amount] {
                    if let Some(own) = description.strip_suffix(said) {
                        *description = own.trim_end().to_owned();
                    }
                }
                if description.is_empty() {
                    map.remove("description");
                }
            }
            let kinds: Vec<&str> = match map.get("type") {
                Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            if kinds.contains(&"integer") && kinds.contains(&"string") {
                for bound in ["minimum", "minLength", "maxLength"] {
                    map.remove(bound);
                }
            }
            let said_patterns = [
                domain::validate::LINE_PATTERN,
                domain::validate::OPTIONAL_LINE_PATTERN,
                domain::validate::MULTILINE_PATTERN,
                crate::common::AMOUNT_PATTERN,
                crate::common::SIGNED_AMOUNT_PATTERN,
                // A rate's, which its field's description says in words.
                crate::common::RATE_PATTERN,
                // The server's instructions show a currency beside every amount ("EUR").
                crate::common::CURRENCY_PATTERN,
                crate::import::BASE64_PATTERN,
            ];
            if map
                .get("pattern")
                .and_then(Value::as_str)
                .is_some_and(|p| said_patterns.contains(&p))
            {
                map.remove("pattern");
            }
        }
        _ => {}
    }
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
pub fn compact(schema: &mut Value) {
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
fn merge_typed_branches(branches: &Value) -> Option<Map<String, Value>> {
    let branches = branches.as_array()?;
    let mut types: Vec<&str> = Vec::new();
    let mut merged = Map::new();
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

/// For a model (MCP, the assistant) a list page holds at most this many items, whatever `limit` asks (ops allow
/// 500): more would not fit in a tool result, and computing rows only to cut them away
/// would waste the server.
pub const MAX_PAGE_FOR_MODELS: u64 = 50;

/// Caps a list tool's `limit` at [`MAX_PAGE_FOR_MODELS`]. A `limit` that is not a positive
/// number is left for the op to refuse with its own message. Lists are the ops that page
/// (a `cursor`); `find_tools` has a `limit` of its own.
pub fn cap_page(meta: &OpMeta, arguments: &mut Map<String, Value>) {
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

/// Whether a list op's cursors name a position (see [`crate::common::PositionCursor`]) rather
/// than an offset, read off its input schema.
pub fn pages_by_position(meta: &OpMeta) -> bool {
    meta.schemas().0["properties"]["cursor"]["pattern"] == crate::common::POSITION_CURSOR_PATTERN
}

/// Most tools one `find_tools` call returns.
pub const MAX_FOUND: u32 = 8;
/// Tools one `find_tools` call returns when its `limit` is left out.
pub const DEFAULT_FOUND: u32 = 5;
/// The longest `find_tools` query, in characters.
pub const MAX_QUERY: usize = 200;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindToolsInput {
    /// What to do, in a few words ("price history"), in English or Spanish.
    #[schemars(length(min = 1, max = MAX_QUERY))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub query: String,
    /// Default 5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = MAX_FOUND))]
    pub limit: Option<u32>,
}

/// A tool as a client lists it: call it by `name` with arguments that fit `input_schema`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolDefinition {
    pub name: String,
    pub title: String,
    pub description: String,
    pub input_schema: Value,
    pub read_only: bool,
    pub destructive: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FoundTools {
    /// Best match first; empty when nothing matched.
    pub tools: Vec<ToolDefinition>,
}

pub struct FindTools;
impl Op for FindTools {
    const INFO: OpInfo = OpInfo::read(
        "find_tools",
        "Find the tool for a task among all of Exhale's tools",
        "Those not listed too (accounts, transactions, budgets, rules, settings): describe the task in a few words, get the best matches with their input schemas, call one by name or through call_tool.",
    );
    type Input = FindToolsInput;
    type Output = FoundTools;
}

/// `call_tool`: how a model calls a tool its client does not list. Not an op: the MCP server
/// calls the op it names, as if called directly (the same scope check, preview, confirmation
/// and audit), because many clients hand their model only the tools they listed first and
/// ignore a changed list. Listed with every set but the full one ([`lists_call_tool`]).
pub const CALL_TOOL: OpInfo = OpInfo {
    hints: Hints::destructive(false),
    ..OpInfo::read(
        "call_tool",
        "Call a tool that is not listed",
        "For a tool find_tools found that you were not given: its name, and its arguments as its schema says. It runs as if called directly.",
    )
};

#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallToolInput {
    /// As find_tools returned it.
    #[schemars(regex(pattern = r"^[a-z][a-z0-9_]{0,47}$"))]
    pub name: String,
    #[serde(default)]
    #[schemars(with = "AnyObject")]
    pub arguments: Map<String, Value>,
}

// Any object: the named tool's schema is the one that checks it.
#[derive(JsonSchema)]
struct AnyObject {}

/// Whether a client of this tool set lists `call_tool`: every set that leaves tools out.
pub fn lists_call_tool(set: ToolSet) -> bool {
    set != ToolSet::Full
}

/// The op a `tools/call` of the tool `name` runs, for what reads a call before it is parsed
/// (a request's size limit, a connected app's step-up): `name`, or for `call_tool` the name in
/// its arguments (`named_in_arguments`).
pub fn called_name<'a>(name: &'a str, named_in_arguments: Option<&'a str>) -> Option<&'a str> {
    if name == CALL_TOOL.name { named_in_arguments } else { Some(name) }
}

/// `call_tool`'s input schema as a model is shown it.
pub fn call_tool_input_schema() -> Value {
    let mut input = crate::schema::schema_of::<CallToolInput>();
    if let Value::Object(root) = &mut input {
        root.remove("title");
    }
    // Omitted is no arguments, which `{}` says without a default.
    if let Some(Value::Object(arguments)) = input.pointer_mut("/properties/arguments") {
        arguments.remove("default");
    }
    compact(&mut input);
    input
}

/// `call_tool`'s hints for a caller: a read-only token reaches only reads through it.
pub fn call_tool_hints(scope: crate::Scope) -> Hints {
    match scope {
        crate::Scope::Read => Hints::READ,
        _ => CALL_TOOL.hints,
    }
}

/// The op a `call_tool` call names, among `ops`, and the arguments to call it with; who may
/// call it is still the invoker's to decide.
pub fn called_by_name(
    ops: &[OpMeta],
    arguments: Map<String, Value>,
) -> Result<(&OpMeta, Map<String, Value>), OpError> {
    let input = call_tool_input(arguments)?;
    let op = ops.iter().find(|meta| meta.name() == input.name).ok_or_else(|| {
        OpError::invalid(
            "/name",
            Text::new("No tool is named {name}. Call find_tools with what you want to do, and use a name it returns.")
                .with("name", &input.name),
        )
    })?;
    Ok((op, input.arguments))
}

/// A `call_tool` call's own arguments read: the name of the op it calls and that op's arguments.
pub fn call_tool_input(arguments: Map<String, Value>) -> Result<CallToolInput, OpError> {
    serde_json::from_value(Value::Object(arguments)).map_err(|err| {
        OpError::invalid(
            "",
            Text::new(
                "call_tool takes {\"name\": a tool's name, \"arguments\": an object}: {error}",
            )
            .with("error", err.to_string()),
        )
    })
}

/// Words too common to tell tools apart.
const STOPWORDS: &[&str] = &[
    "a", "an", "the", "to", "of", "for", "in", "on", "my", "i", "me", "and", "or", "with", "all",
    "is", "it", "do", "how", "what", "which", "by", "we", "our", "us", "you", "your", "are", "be",
    "does", "can", "this", "that", "there", "much", "many", "please", "per", "from", "at", "el",
    "la", "los", "las", "de", "del", "un", "una", "y", "o", "mi", "mis", "por", "para", "con",
    "que", "en", "nuestro", "nuestra", "nuestros", "nuestras", "cuanto", "cuanta", "cual", "hi",
    "hello", "hey", "who", "thanks", "thank", "hola", "quien", "eres", "gracias",
];

/// Everyday words for what the catalog says, as people ask a small model ("Netflix went up",
/// "what's coming", "remove the gym"). A word may stand for several.
const EVERYDAY: &[(&str, &str)] = &[
    ("up", "price"),
    ("up", "change"),
    ("raise", "change"),
    ("raised", "change"),
    ("increase", "change"),
    ("increased", "change"),
    ("raise", "price"),
    ("raised", "price"),
    ("rise", "price"),
    ("increase", "price"),
    ("increased", "price"),
    ("expensive", "price"),
    ("cheapest", "price"),
    ("cost", "spending"),
    ("costs", "spending"),
    ("spend", "spending"),
    ("spent", "spending"),
    ("total", "spending"),
    ("next", "upcoming"),
    ("coming", "upcoming"),
    ("soon", "upcoming"),
    ("due", "upcoming"),
    ("week", "upcoming"),
    ("will", "upcoming"),
    ("going", "upcoming"),
    ("changed", "activity"),
    ("happened", "activity"),
    ("made", "activity"),
    ("always", "rule"),
    ("always", "create"),
    ("automatically", "rule"),
    ("automatically", "create"),
    ("put", "categorise"),
    ("shop", "transaction"),
    ("revert", "undo"),
    ("add", "create"),
    ("new", "create"),
    ("remove", "delete"),
    ("stop", "cancel"),
    ("rename", "update"),
    ("move", "update"),
    ("balance", "account"),
    ("balances", "account"),
    ("bought", "transaction"),
    ("paid", "transaction"),
    ("purchase", "transaction"),
    ("purchases", "transaction"),
    ("card", "payment"),
    ("save", "savings"),
    ("sube", "price"),
    ("sube", "change"),
    ("subio", "price"),
    ("subio", "change"),
    ("cuesta", "spending"),
    ("cuestan", "spending"),
    ("saldo", "account"),
    ("cuenta", "account"),
    ("cuentas", "account"),
    ("presupuesto", "budget"),
    ("presupuestos", "budget"),
    ("siempre", "rule"),
    ("siempre", "create"),
    ("pon", "categorise"),
    ("poner", "categorise"),
    ("gastamos", "spending"),
    ("gastado", "spending"),
    ("queda", "budget"),
    ("regla", "rule"),
    ("reglas", "rule"),
    ("movimientos", "transaction"),
];

/// Spanish words for what the catalog says in English.
const SPANISH: &[(&str, &str)] = &[
    ("suscripcion", "subscription"),
    ("suscripciones", "subscription"),
    ("cargo", "charge"),
    ("cargos", "charge"),
    ("cobro", "charge"),
    ("cobros", "charge"),
    ("gasto", "spending"),
    ("gastos", "spending"),
    ("gastar", "spending"),
    ("categoria", "category"),
    ("categorias", "category"),
    ("pago", "payment"),
    ("tarjeta", "payment"),
    ("deshacer", "undo"),
    ("precio", "price"),
    ("precios", "price"),
    ("pausar", "pause"),
    ("cancelar", "cancel"),
    ("reanudar", "resume"),
    ("borrar", "delete"),
    ("eliminar", "delete"),
    ("crear", "create"),
    ("anadir", "add"),
    ("proximos", "upcoming"),
    ("proximas", "upcoming"),
    ("ahorrar", "savings"),
    ("ahorro", "savings"),
    ("importar", "import"),
    ("extracto", "statement"),
    ("etiqueta", "tag"),
    ("etiquetas", "tag"),
    ("miembro", "member"),
    ("miembros", "member"),
    ("actividad", "activity"),
    ("historial", "history"),
    ("fusionar", "merge"),
    ("renombrar", "rename"),
    ("confirmar", "confirm"),
];

/// The words of a text, folded (case and accents ignored).
pub fn words(text: &str) -> Vec<String> {
    fold(text)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Whether a query word means a text word: the text word starts with it, or with its first
/// five letters ("spend" finds "spending", "categories" finds "category").
fn means(query: &str, word: &str) -> bool {
    if word.starts_with(query) {
        return true;
    }
    let stem: String = query.chars().take(5).collect();
    stem.chars().count() == 5 && word.starts_with(&stem)
}

/// The words of a query as the catalog says them: common words left out, Spanish and everyday
/// words read as the catalog's ("went up" is about a price), any other word as it is.
pub fn query_words(query: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in words(query) {
        if STOPWORDS.contains(&word.as_str()) {
            continue;
        }
        let meant: Vec<&str> = SPANISH
            .iter()
            .chain(EVERYDAY)
            .filter(|(said, _)| *said == word)
            .map(|(_, catalog)| *catalog)
            .collect();
        if meant.is_empty() {
            out.push(word);
        } else {
            out.extend(meant.into_iter().map(str::to_owned));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The ops among `candidates` that best fit the words of `query`, best first, at most `limit`.
pub fn find<'a>(
    query: &str,
    candidates: impl IntoIterator<Item = &'a OpMeta>,
    limit: usize,
) -> Vec<&'a OpMeta> {
    scored(query, candidates).into_iter().take(limit).map(|(_, meta)| meta).collect()
}

/// The ops among `candidates` that fit the words of `query` at all, best first, with how well.
/// A word in the name counts most, then in the summary, then in the description; among equals,
/// reads come first.
pub fn scored<'a>(
    query: &str,
    candidates: impl IntoIterator<Item = &'a OpMeta>,
) -> Vec<(u32, &'a OpMeta)> {
    let query = query_words(query);
    let mut scored: Vec<(u32, usize, &'a OpMeta)> = candidates
        .into_iter()
        .enumerate()
        .filter(|(_, meta)| meta.name() != FindTools::INFO.name)
        .map(|(order, meta)| {
            let name = words(&meta.name().replace('_', " "));
            let summary = words(meta.info.summary);
            let description = words(meta.info.description);
            let score = query
                .iter()
                .map(|q| {
                    let hit = |text: &[String]| text.iter().any(|w| means(q, w));
                    if hit(&name) {
                        4
                    } else if hit(&summary) {
                        2
                    } else if hit(&description) {
                        1
                    } else {
                        0
                    }
                })
                .sum::<u32>();
            (score, order, meta)
        })
        .filter(|(score, _, _)| *score > 0)
        .collect();
    // Among equals, reads first: a question that names no change is most often a question.
    scored.sort_by(|a, b| {
        b.0.cmp(&a.0).then(a.2.info.is_write().cmp(&b.2.info.is_write())).then(a.1.cmp(&b.1))
    });
    scored.into_iter().map(|(score, _, meta)| (score, meta)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_activity_limit_s_description_says_the_default_the_handler_uses() {
        let schema = crate::find("list_activity").unwrap().input_schema();
        let said = schema.pointer("/properties/limit/description").and_then(Value::as_str);
        let default = format!("Default {};", crate::limits::ACTIVITY_PAGE);
        assert!(said.is_some_and(|said| said.starts_with(&default)), "{said:?}");
    }

    #[test]
    fn a_model_is_told_the_activity_filters_op_in_words_and_rest_keeps_every_name() {
        let meta = crate::find("list_activity").unwrap();
        let rest = meta.input_schema();
        let names = rest.pointer("/properties/op/enum").and_then(Value::as_array).unwrap();
        assert!(names.len() > MODEL_ENUM_VALUES, "{} write ops", names.len());
        assert!(names.iter().any(|name| name == "update_subscription"));
        let model = model_input_schema(meta);
        assert_eq!(model.pointer("/properties/op/enum"), None, "{model}");
        assert_eq!(
            model.pointer("/properties/op/description").and_then(Value::as_str),
            Some("An op that writes, e.g. update_subscription.")
        );
        // A short closed set stays for the model.
        assert!(model.pointer("/properties/actor_kind/enum").is_some(), "{model}");
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

    #[test]
    fn what_the_briefing_says_once_is_not_in_every_field() {
        let mut schema = json!({"properties": {
            "id": {"type": ["integer", "string"], "minimum": 1, "minLength": 1, "maxLength": 100, "description": "Id or name."},
            "owner": {"type": ["integer", "string", "null"], "minimum": 1, "description": "Default: the caller. Id or name."},
            "on": {"type": "string", "format": "date", "description": crate::resolve::DATE_FORMS},
            "until": {"type": "string", "format": "date", "description": format!("No charges after it. {}", crate::resolve::DATE_FORMS)},
            "limit": {"type": "integer", "minimum": 1, "maximum": 500},
            "amount": {"type": "string", "description": "Decimal string in major units, e.g. \"12.99\"."},
        }});
        say_once(&mut schema);
        assert_eq!(
            schema,
            json!({"properties": {
                "id": {"type": ["integer", "string"]},
                "owner": {"type": ["integer", "string", "null"], "description": "Default: the caller."},
                "on": {"type": "string", "format": "date"},
                "until": {"type": "string", "format": "date", "description": "No charges after it."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 500},
                "amount": {"type": "string"},
            }})
        );
    }

    /// The first five, as `find_tools` returns by default.
    fn top(query: &str) -> Vec<&'static str> {
        find(query, crate::all(), 5).into_iter().map(OpMeta::name).collect()
    }

    #[test]
    fn the_right_tool_comes_first() {
        // A search proposes; the model picks among the first few.
        assert!(top("price history").contains(&"list_price_changes"));
        assert!(top("price history").contains(&"get_subscription"));
        assert_eq!(top("merge two categories")[0], "merge_categories");
        // Two tools take a statement: one finds subscriptions in it, one loads its transactions.
        let statement = top("import a bank statement");
        assert!(
            statement[..2].contains(&"parse_statement")
                && statement[..2].contains(&"import_transactions"),
            "{statement:?}"
        );
        assert_eq!(top("how much do I spend")[0], "get_spending_summary");
        assert!(top("how much do I spend per month").contains(&"get_spending_summary"));
        assert_eq!(top("resume the gym")[0], "resume_subscription");
        assert_eq!(top("reanudar la suscripción")[0], "resume_subscription");
        assert_eq!(top("fusionar categorías")[0], "merge_categories");
        assert!(top("payment methods").contains(&"list_payment_methods"));
        assert!(top("zzz qqq").is_empty());
        assert!(top("the").is_empty());
    }

    #[test]
    fn the_compact_set_names_real_ops_and_find_tools() {
        for name in COMPACT {
            assert!(crate::find(name).is_some(), "{name} is not an op");
        }
        let compact: Vec<&str> = crate::all()
            .iter()
            .filter(|meta| offered(ToolSet::Compact, Kept::default(), meta.info))
            .map(OpMeta::name)
            .collect();
        assert_eq!(compact.len(), COMPACT.len() + 1);
        assert!(compact.contains(&"find_tools"));
        assert!(crate::all().iter().all(|meta| offered(ToolSet::Full, Kept::default(), meta.info)));
    }

    #[test]
    fn call_tool_takes_a_name_and_an_object_and_names_the_op_it_calls() {
        let schema = call_tool_input_schema();
        assert_eq!(schema["required"], json!(["name"]));
        assert_eq!(schema["properties"]["arguments"], json!({"type": "object"}));
        assert!(schema.get("title").is_none() && schema.get("description").is_none());
        let arguments = |value: Value| match value {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        let (op, given) =
            called_by_name(crate::all(), arguments(json!({"name": "list_tags"}))).unwrap();
        assert_eq!((op.name(), given.len()), ("list_tags", 0));
        for (wrong, pointer) in [
            (json!({"name": "call_tool"}), "/name"),
            (json!({"name": "no_such_tool"}), "/name"),
            (json!({"arguments": {}}), ""),
            (json!({"name": "list_tags", "arguments": 7}), ""),
            (json!({"name": "list_tags", "more": 1}), ""),
        ] {
            match called_by_name(crate::all(), arguments(wrong.clone())) {
                Err(OpError::InvalidInput { pointer: at, .. }) => {
                    assert_eq!(at, pointer, "{wrong}")
                }
                other => panic!("{wrong}: {:?}", other.map(|(op, _)| op.name())),
            }
        }
        assert_eq!(called_name("list_tags", Some("x")), Some("list_tags"));
        assert_eq!(called_name("call_tool", Some("list_tags")), Some("list_tags"));
        assert_eq!(called_name("call_tool", None), None);
        assert_eq!(call_tool_hints(crate::Scope::Read), Hints::READ);
        assert!(call_tool_hints(crate::Scope::Write).destructive);
        assert!(lists_call_tool(ToolSet::DEFAULT) && !lists_call_tool(ToolSet::Full));
    }

    #[test]
    fn the_subscriptions_set_names_real_ops_beyond_the_compact_set() {
        for name in SUBSCRIPTIONS {
            assert!(crate::find(name).is_some(), "{name} is not an op");
            assert!(!COMPACT.contains(name), "{name} is already in the compact set");
        }
        let listed = crate::all()
            .iter()
            .filter(|meta| offered(ToolSet::Subscriptions, Kept::SUBSCRIPTIONS, meta.info))
            .count();
        assert_eq!(listed, COMPACT.len() + SUBSCRIPTIONS.len() + 1);
    }

    #[test]
    fn the_subscriptions_set_follows_what_a_household_keeps() {
        let listed = |kept: Kept| -> Vec<&str> {
            crate::all()
                .iter()
                .filter(|meta| offered(ToolSet::Subscriptions, kept, meta.info))
                .map(OpMeta::name)
                .collect()
        };
        let op = |name: &str| crate::find(name).unwrap_or_else(|| panic!("{name} is not an op"));
        let without = listed(Kept::SUBSCRIPTIONS);
        let with = listed(Kept { accounts: true, payment_methods: true });
        for name in LEDGER_READS.iter().chain(LEDGER_WRITES) {
            assert!(!without.contains(name) && with.contains(name), "{name}");
        }
        for name in LEFT_FOR_LEDGER.iter().chain(LEFT_FOR_LEDGER_WRITES) {
            assert!(without.contains(name) && !with.contains(name), "{name}");
        }
        for name in LEDGER_READS.iter().chain(LEFT_FOR_LEDGER) {
            assert!(!op(name).info.is_write(), "{name} writes");
        }
        for name in LEDGER_WRITES.iter().chain(PAYMENT_METHOD_CHANGES) {
            assert!(op(name).info.is_write(), "{name} only reads");
        }
        // Without payment methods there is nothing to change or delete, with accounts or not;
        // the first one can still be added.
        for accounts in [false, true] {
            let none = listed(Kept { accounts, payment_methods: false });
            let some = listed(Kept { accounts, payment_methods: true });
            for name in PAYMENT_METHOD_CHANGES {
                assert!(some.contains(name) && !none.contains(name), "{name}");
            }
            assert!(none.contains(&"create_payment_method"));
            assert_eq!(none.len() + PAYMENT_METHOD_CHANGES.len(), some.len());
        }
        // The other sets do not change.
        for set in [ToolSet::Full, ToolSet::Compact] {
            let count = |kept| crate::all().iter().filter(|m| offered(set, kept, m.info)).count();
            let everything = Kept { accounts: true, payment_methods: true };
            assert_eq!(count(Kept::default()), count(everything));
        }
    }
}
