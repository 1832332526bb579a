//! Turning a request into an op's JSON input: the POST body, the `dry_run` flag, and query
//! parameters coerced by the op's input schema.
//!
//! The adapter only shapes the JSON; the op validates it (unknown fields, ranges, formats)
//! and answers with its own `invalid_input`.

use std::collections::BTreeMap;

use ops::OpError;
use ops::Text;
use serde_json::{Map, Value};

/// The input object of a POST body; an empty body is `{}`. Whitespace alone is not empty but
/// not JSON either, and is refused as such: the schema says so.
pub(crate) fn json_body_input(body: &[u8]) -> Result<Map<String, Value>, OpError> {
    if body.is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(input)) => Ok(input),
        Ok(other) => Err(OpError::invalid(
            "",
            Text::new(
                "The request body must be a JSON object with the op's input fields, not {kind}.",
            )
            .with("kind", kind_of(&other)),
        )),
        Err(err) => Err(http::invalid_json_body(&err)),
    }
}

/// Removes the adapter's `dry_run` flag from `input`: whether the call is a preview.
pub(crate) fn take_dry_run(input: &mut Map<String, Value>) -> Result<bool, OpError> {
    match input.remove("dry_run") {
        None | Some(Value::Bool(false)) => Ok(false),
        Some(Value::Bool(true)) => Ok(true),
        Some(other) => Err(OpError::invalid(
            "/dry_run",
            Text::new("dry_run must be true or false, not {kind}.").with("kind", kind_of(&other)),
        )),
    }
}

/// The input object for query parameters `pairs`, typed by the op's input `schema`: integers,
/// numbers and booleans are parsed; an array takes repeated keys and comma-separated values.
/// Keys the schema does not know stay strings, for the op to refuse by name.
pub(crate) fn query_input(
    schema: &Value,
    pairs: Vec<(String, String)>,
) -> Result<Map<String, Value>, OpError> {
    let properties = schema.get("properties").and_then(Value::as_object);
    let mut grouped: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (key, value) in pairs {
        grouped.entry(key).or_default().push(value);
    }
    let mut input = Map::new();
    for (key, values) in grouped {
        let property = properties.and_then(|properties| properties.get(&key));
        // GET serves read-only ops only, and a read changes nothing: a preview flag means nothing.
        if key == "dry_run" && property.is_none() {
            continue;
        }
        let pointer = format!("/{}", escape_pointer(&key));
        let value = match (property.map(shape_of), values.as_slice()) {
            (Some(Shape::Array(item_type)), _) => {
                let items = values
                    .iter()
                    .flat_map(|value| value.split(','))
                    .filter(|item| !item.is_empty())
                    .enumerate()
                    .map(|(index, raw)| coerce(&key, &format!("{pointer}/{index}"), raw, item_type))
                    .collect::<Result<Vec<_>, _>>()?;
                Value::Array(items)
            }
            (Some(Shape::Scalar(scalar)), [raw]) => coerce(&key, &pointer, raw, scalar)?,
            (Some(Shape::Scalar(_)), _) => {
                return Err(OpError::invalid(
                    pointer,
                    Text::new("{field} was given {count} times; give it once.")
                        .with("field", &key)
                        .with("count", values.len()),
                ));
            }
            (None, [raw]) => Value::String(raw.clone()),
            (None, _) => Value::Array(values.into_iter().map(Value::String).collect()),
        };
        input.insert(key, value);
    }
    Ok(input)
}

/// A JSON type a query value can be parsed into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scalar {
    Integer,
    /// An id that may also be written as a name: a positive whole number is the id, anything
    /// else the name (as the schema's string branch allows "0").
    IdOrName,
    Number,
    Boolean,
    String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    Scalar(Scalar),
    Array(Scalar),
}

fn shape_of(schema: &Value) -> Shape {
    let types = types_of(schema);
    if types.contains(&"array") {
        let item = schema.get("items").map_or(Scalar::String, |items| scalar_of(&types_of(items)));
        Shape::Array(item)
    } else {
        Shape::Scalar(scalar_of(&types))
    }
}

fn scalar_of(types: &[&str]) -> Scalar {
    if types.contains(&"integer") && types.contains(&"string") {
        Scalar::IdOrName
    } else if types.contains(&"integer") {
        Scalar::Integer
    } else if types.contains(&"number") {
        Scalar::Number
    } else if types.contains(&"boolean") {
        Scalar::Boolean
    } else {
        Scalar::String
    }
}

/// The JSON types a schema allows: `type` as a string or a list (`["integer", "null"]`), or,
/// for a schema written as `anyOf`/`oneOf`, those of its alternatives (an id or a name is
/// `oneOf` an integer and a string).
fn types_of(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(single)) => vec![single.as_str()],
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
        _ => ["anyOf", "oneOf"]
            .iter()
            .filter_map(|key| schema.get(key).and_then(Value::as_array))
            .flatten()
            .flat_map(types_of)
            .collect(),
    }
}

fn coerce(field: &str, pointer: &str, raw: &str, scalar: Scalar) -> Result<Value, OpError> {
    let refuse = |format: &str| {
        OpError::invalid(pointer, Text::new(format).with("field", field).with("value", raw))
    };
    match scalar {
        Scalar::String => Ok(Value::String(raw.to_owned())),
        Scalar::IdOrName => Ok(raw
            .parse::<i64>()
            .ok()
            .filter(|id| *id >= 1)
            .map_or_else(|| Value::String(raw.to_owned()), Value::from)),
        Scalar::Integer => raw
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| refuse("{field} must be a whole number, not \"{value}\".")),
        Scalar::Number => raw
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| refuse("{field} must be a number, not \"{value}\".")),
        Scalar::Boolean => match raw {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => Err(refuse("{field} must be true or false, not \"{value}\".")),
        },
    }
}

/// A key as a JSON pointer segment (RFC 6901): `~` and `/` escaped.
fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// How a message names the JSON type of a value.
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests;
