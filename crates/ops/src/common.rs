//! Shapes shared by many ops: amounts, references, pages, cycles, receipts and patches.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Value, json};

// Fixed vocabulary (codes, units, statuses) is borrowed, not allocated: a 500-row list builds
// thousands of these.

/// An amount as every API writes it: a decimal string in major units beside its currency.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Amount {
    /// Decimal string in major units, e.g. "12.99".
    pub amount: String,
    /// ISO 4217 code, e.g. "EUR".
    pub currency: Cow<'static, str>,
    /// Formatted for people, e.g. "€12.99".
    pub display: String,
}

/// A reference to another entity by id, with its name for reading.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Ref {
    pub id: i64,
    pub name: String,
}

/// One page of a list. Lists have a stable order; pass `next_cursor` as `cursor` for more.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Page<T> {
    pub items: Vec<T>,
    /// How many items match the filters, over all pages.
    pub total: u64,
    /// Present when there are more items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// A billing cycle: a preset name or a custom every-N-units cycle.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum CycleInput {
    /// One of "weekly", "every_two_weeks", "monthly", "every_two_months", "quarterly",
    /// "every_six_months", "yearly".
    Preset(String),
    /// Every `every` (1 to 366) `unit`s ("day", "week", "month" or "year").
    Custom { every: i64, unit: String },
}

/// A billing cycle as outputs write it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CycleOutput {
    pub every: i64,
    /// "day", "week", "month" or "year".
    pub unit: Cow<'static, str>,
    /// The preset name when the cycle is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<Cow<'static, str>>,
    /// For reading, e.g. "monthly" or "every 3 weeks".
    pub description: String,
}

/// One entity a write changed, as previews and receipts list it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Change {
    /// The audit entry (absent in a dry run, which writes nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_id: Option<i64>,
    pub entity: String,
    pub entity_id: i64,
    /// "created", "updated" or "deleted".
    pub action: String,
    pub summary: String,
}

/// Adds the fields every write reports to an output schema.
pub(crate) fn add_receipt_to_schema(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    let properties = map.entry("properties").or_insert_with(|| json!({}));
    if let Value::Object(properties) = properties {
        properties.insert(
            "batch_id".into(),
            json!({"type": ["string", "null"], "description": "Pass to undo to revert this whole call."}),
        );
        properties.insert(
            "audit_ids".into(),
            json!({"type": "array", "items": {"type": "integer"}, "description": "Pass to undo to revert these changes."}),
        );
        properties.insert(
            "dry_run".into(),
            json!({"type": "boolean", "description": "True when nothing was changed (a preview)."}),
        );
        properties.insert(
            "changes".into(),
            json!({"type": "array", "items": {
                "type": "object",
                "properties": {
                    "audit_id": {"type": "integer"},
                    "entity": {"type": "string"},
                    "entity_id": {"type": "integer"},
                    "action": {"type": "string"},
                    "summary": {"type": "string"}
                },
                "required": ["entity", "entity_id", "action", "summary"]
            }}),
        );
    }
}

/// A field of an update: absent (keep), `null` (clear) or a value (set).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Patch<T> {
    #[default]
    Keep,
    Clear,
    Set(T),
}

impl<T> Patch<T> {
    pub fn is_keep(&self) -> bool {
        matches!(self, Self::Keep)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Patch<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match Option::<T>::deserialize(deserializer)? {
            Some(value) => Self::Set(value),
            None => Self::Clear,
        })
    }
}

impl<T: JsonSchema> JsonSchema for Patch<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("Nullable_{}", T::schema_name()).into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <Option<T>>::json_schema(generator)
    }

    fn inline_schema() -> bool {
        true
    }
}

/// Pagination fields shared by list inputs.
pub const MAX_PAGE: u32 = 500;
pub const DEFAULT_PAGE: u32 = 100;

/// Far beyond any real list, and well inside SQLite's integers.
const MAX_OFFSET: u64 = 1 << 40;

/// The position a list `cursor` names: an offset into the list's stable order, written
/// `o<offset>`; no cursor is the start. `None` for a cursor Exhale never gave out.
///
/// Public so an adapter that hands out a shorter page than the op produced (MCP, to fit a
/// model's context) can give the cursor of the first item it left out.
pub fn cursor_offset(cursor: Option<&str>) -> Option<u64> {
    match cursor {
        None => Some(0),
        Some(cursor) => cursor
            .strip_prefix('o')
            .and_then(|offset| offset.parse().ok())
            .filter(|&offset: &u64| offset <= MAX_OFFSET),
    }
}

/// The cursor after `returned` items starting at `offset`, when the list has more.
pub fn next_cursor(offset: u64, returned: usize, total: u64) -> Option<String> {
    let next = offset + returned as u64;
    (next < total).then(|| format!("o{next}"))
}
