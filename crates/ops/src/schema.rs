//! The JSON Schemas ops publish: an input's (every date also takes words, an optional
//! id-or-name is one choice), and an output's (what every write reports, and how names and
//! dates in the input were read). Below `op.rs`, above the values they describe.

use schemars::JsonSchema;
use serde_json::Value;

use crate::{
    common::Receipt,
    resolve::{DATE_FORMS, RESOLVED, Resolution},
};

/// The schema of `T`, its subschemas inline, without `$schema`.
pub(crate) fn schema_of<T: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.inline_subschemas = true;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Value::Object(map) = &mut schema {
        map.remove("$schema");
    }
    schema
}

/// An input's schema, with every date saying it also takes phrases relative to today.
pub(crate) fn input_schema_of<T: JsonSchema>() -> Value {
    let mut schema = schema_of::<T>();
    describe_dates(&mut schema);
    flatten_nullable_choices(&mut schema);
    schema
}

/// `anyOf: [{oneOf: [a, b]}, {type: null}]` (how an optional id-or-name comes out) as
/// `oneOf: [a, b, {type: null}]`: the same values, one level and fewer tokens for a model.
fn flatten_nullable_choices(schema: &mut Value) {
    let Value::Object(map) = schema else {
        if let Value::Array(items) = schema {
            items.iter_mut().for_each(flatten_nullable_choices);
        }
        return;
    };
    let nullable_choice = match map.get("anyOf").and_then(Value::as_array) {
        Some(branches) if branches.len() == 2 => {
            branches[1] == serde_json::json!({"type": "null"}) && branches[0].get("oneOf").is_some()
        }
        _ => false,
    };
    if nullable_choice
        && let Some(Value::Array(mut branches)) = map.remove("anyOf")
        && let Value::Object(mut choice) = branches.remove(0)
    {
        if let Some(Value::Array(options)) = choice.get_mut("oneOf") {
            options.push(serde_json::json!({"type": "null"}));
        }
        let description = [map.remove("description"), choice.remove("description")]
            .into_iter()
            .flatten()
            .filter_map(|d| d.as_str().map(str::to_owned))
            .collect::<Vec<_>>()
            .join(" ");
        map.extend(choice);
        if !description.is_empty() {
            map.insert("description".into(), Value::String(description));
        }
    }
    map.values_mut().for_each(flatten_nullable_choices);
}

/// An output's schema (`output`, from its type) as published: always an object, with what
/// every write reports when the op writes, and `resolved` when its input reads names or dates.
pub(crate) fn output_schema(output: Value, input: &Value, is_write: bool) -> Value {
    let mut schema = output;
    // `serde_json::Value` outputs come out as `true` or `{"title": "AnyValue"}`: any JSON.
    // Every output is an object, so say so (MCP structured content must be one).
    let any_value = match &schema {
        Value::Bool(true) => true,
        Value::Object(map) => map.keys().all(|key| key == "title" || key == "description"),
        _ => false,
    };
    if any_value {
        schema = serde_json::json!({"type": "object", "additionalProperties": true});
    }
    if is_write {
        add_receipt_to_schema(&mut schema);
    }
    if !any_value && reads_names_or_dates(input) {
        add_resolved_to_schema(&mut schema);
    }
    schema
}

/// Adds [`DATE_FORMS`] to the description of every date in an input schema.
pub(crate) fn describe_dates(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            if map.get("format").and_then(Value::as_str) == Some("date") {
                let description = match map.get("description").and_then(Value::as_str) {
                    Some(own) => format!("{own} {DATE_FORMS}"),
                    None => DATE_FORMS.to_owned(),
                };
                map.insert("description".into(), Value::String(description));
            }
            map.values_mut().for_each(describe_dates);
        }
        Value::Array(items) => items.iter_mut().for_each(describe_dates),
        _ => {}
    }
}

/// Whether an input schema has a date or an id that takes a name, so its output may echo them.
pub(crate) fn reads_names_or_dates(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => {
            let date = map.get("format").and_then(Value::as_str) == Some("date");
            let id_or_name = map.get("oneOf").and_then(Value::as_array).is_some_and(|branches| {
                let has =
                    |kind: &str| branches.iter().any(|b| b.get("type").is_some_and(|t| t == kind));
                has("integer") && has("string")
            });
            date || id_or_name || map.values().any(reads_names_or_dates)
        }
        Value::Array(items) => items.iter().any(reads_names_or_dates),
        _ => false,
    }
}

/// Adds `resolved` (how names and phrases in the input were read) to an output schema.
pub(crate) fn add_resolved_to_schema(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    let mut resolved = schema_of::<Vec<Resolution>>();
    if let Value::Object(resolved) = &mut resolved {
        resolved.insert(
            "description".into(),
            Value::String("How names and relative dates in the input were read; present when the input had any. Show them to the person before confirming.".into()),
        );
    }
    if let Value::Object(properties) =
        map.entry("properties").or_insert_with(|| Value::Object(Default::default()))
    {
        properties.insert(RESOLVED.into(), resolved);
    }
}

/// Adds the fields every write reports ([`Receipt`]) to an output schema.
pub(crate) fn add_receipt_to_schema(schema: &mut Value) {
    let receipt = schema_of::<Receipt>();
    let (Value::Object(map), Some(Value::Object(fields))) = (schema, receipt.get("properties"))
    else {
        return;
    };
    if let Value::Object(properties) =
        map.entry("properties").or_insert_with(|| Value::Object(Default::default()))
    {
        for (name, field) in fields {
            properties.insert(name.clone(), field.clone());
        }
    }
}
