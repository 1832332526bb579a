//! The OpenAPI 3.1 document of the REST API, built at run time from the catalog's ops.
//!
//! One literal path per op (`/api/v1/ops/list_subscriptions`), so that every operation has
//! its own request and response schemas. The op schemas are JSON Schema 2020-12 with
//! subschemas inlined, which OpenAPI 3.1 takes as they are; the few `$defs` a recursive type
//! would still need are moved into `components.schemas` so that their `$ref`s resolve from
//! the document's root.

use ops::{Exposure, OpMeta};
use serde_json::{Map, Value, json};

/// The OpenAPI document for `ops`.
pub fn openapi_document(ops: &[OpMeta]) -> Value {
    let mut schemas = Map::new();
    schemas.insert("Problem".into(), problem_schema());
    let mut paths = Map::new();
    for meta in ops {
        let name = meta.name();
        let mut input = meta.input_schema();
        hoist_defs(&mut input, &format!("{name}.input"), &mut schemas);
        let mut output = meta.output_schema();
        hoist_defs(&mut output, &format!("{name}.output"), &mut schemas);
        let mut item = Map::new();
        item.insert("post".into(), post_operation(meta, &input, &output));
        if !meta.info.is_write() {
            item.insert("get".into(), get_operation(meta, &input, &output));
        }
        paths.insert(format!("/api/v1/ops/{name}"), Value::Object(item));
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Exhale API",
            "version": ops::VERSION,
            "description": API_DESCRIPTION,
            "license": {"name": "AGPL-3.0-or-later", "identifier": "AGPL-3.0-or-later"},
        },
        "servers": [{"url": "/"}],
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "An Exhale API token, created by a person in the household.",
                },
            },
            "schemas": schemas,
        },
    })
}

const API_DESCRIPTION: &str = "Every operation of Exhale, a household's subscriptions and their charges. \
Call an op with POST and its input as a JSON object; read-only ops also answer GET with the input in the query string. \
Amounts are decimal strings in major units beside their currency (\"12.99\", \"EUR\"); dates are YYYY-MM-DD in the household's time zone. \
Any write accepts \"dry_run\": true and then returns a preview without changing anything. \
Financial or destructive writes by a token may answer 428 confirmation_required with a preview: show it to the person, then call confirm_change with the confirmation_id. \
Writes return a batch_id and audit_ids; undo reverts them. \
Errors are problem JSON (RFC 9457) with a stable code.";

fn post_operation(meta: &OpMeta, input: &Value, output: &Value) -> Value {
    let mut body_schema = input.clone();
    if meta.info.is_write() {
        add_dry_run(&mut body_schema);
    }
    let body_required = input
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|required| !required.is_empty());
    let mut operation = operation_common(meta, meta.name(), output);
    operation.insert(
        "requestBody".into(),
        json!({
            "required": body_required,
            "content": {"application/json": {"schema": body_schema}},
        }),
    );
    Value::Object(operation)
}

fn get_operation(meta: &OpMeta, input: &Value, output: &Value) -> Value {
    let required: Vec<&str> = input
        .get("required")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let properties = input.get("properties").and_then(Value::as_object);
    let parameters: Vec<Value> = properties
        .into_iter()
        .flatten()
        .map(|(key, schema)| {
            let mut parameter = Map::new();
            parameter.insert("name".into(), json!(key));
            parameter.insert("in".into(), json!("query"));
            parameter.insert("required".into(), json!(required.contains(&key.as_str())));
            if let Some(description) = schema.get("description") {
                parameter.insert("description".into(), description.clone());
            }
            parameter.insert("schema".into(), schema.clone());
            if is_array(schema) {
                // Repeated keys: ?status=active&status=trial (comma-separated values work too).
                parameter.insert("style".into(), json!("form"));
                parameter.insert("explode".into(), json!(true));
            }
            Value::Object(parameter)
        })
        .collect();
    let mut operation = operation_common(meta, &format!("{}_get", meta.name()), output);
    operation.insert("parameters".into(), Value::Array(parameters));
    Value::Object(operation)
}

/// What POST and GET of one op share: names, texts, responses and the `x-exhale-*` facts.
fn operation_common(meta: &OpMeta, operation_id: &str, output: &Value) -> Map<String, Value> {
    let info = meta.info;
    let mut description = info.description.to_owned();
    if let Exposure::Excluded { reason } = info.exposure {
        description.push_str("\n\nNot available to agents: ");
        description.push_str(reason);
        description.push('.');
    }
    let success = if info.is_write() {
        "The result, with batch_id and audit_ids to undo it; with dry_run, a preview that changed nothing."
    } else {
        "The result."
    };
    let mut operation = Map::new();
    operation.insert("operationId".into(), json!(operation_id));
    operation.insert("summary".into(), json!(info.summary));
    operation.insert("description".into(), json!(description));
    operation.insert(
        "responses".into(),
        json!({
            "200": {
                "description": success,
                "content": {"application/json": {"schema": output}},
            },
            "default": {
                "description": "A problem: the code says what went wrong and the detail what to do.",
                "content": {
                    "application/problem+json": {
                        "schema": {"$ref": "#/components/schemas/Problem"},
                    },
                },
            },
        }),
    );
    operation.insert("x-exhale-scope".into(), json!(info.scope.as_str()));
    operation.insert("x-exhale-read-only".into(), json!(info.hints.read_only));
    operation.insert("x-exhale-destructive".into(), json!(info.hints.destructive));
    operation.insert("x-exhale-idempotent".into(), json!(info.hints.idempotent));
    operation.insert("x-exhale-financial".into(), json!(info.financial));
    operation.insert("x-exhale-owner-only".into(), json!(info.owner_only));
    if let Exposure::Excluded { reason } = info.exposure {
        operation.insert("x-exhale-excluded-from-agents".into(), json!(reason));
    }
    operation
}

/// Adds the adapter's `dry_run` flag to a write's input schema.
fn add_dry_run(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    let properties = map.entry("properties").or_insert_with(|| json!({}));
    if let Value::Object(properties) = properties {
        properties.insert(
            "dry_run".into(),
            json!({
                "type": "boolean",
                "default": false,
                "description": "Preview only: run the write, report what it would change, and change nothing.",
            }),
        );
    }
}

fn is_array(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(single)) => single == "array",
        Some(Value::Array(list)) => list.iter().any(|t| t == "array"),
        _ => false,
    }
}

/// Moves a schema's `$defs` into `components.schemas` under `prefix.Name` and points its
/// `$ref`s there: inside an OpenAPI document, `#/$defs/...` would resolve against the
/// document's root, not the schema's.
fn hoist_defs(schema: &mut Value, prefix: &str, components: &mut Map<String, Value>) {
    let Some(Value::Object(defs)) = schema.as_object_mut().and_then(|map| map.remove("$defs"))
    else {
        return;
    };
    let rename = |name: &str| format!("{prefix}.{name}");
    let mut defs: Vec<(String, Value)> = defs.into_iter().collect();
    rewrite_refs(schema, prefix);
    for (_, def) in &mut defs {
        rewrite_refs(def, prefix);
    }
    for (name, def) in defs {
        components.insert(rename(&name), def);
    }
}

fn rewrite_refs(value: &mut Value, prefix: &str) {
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                if key == "$ref"
                    && let Value::String(target) = child
                    && let Some(name) = target.strip_prefix("#/$defs/")
                {
                    *target = format!("#/components/schemas/{prefix}.{name}");
                } else {
                    rewrite_refs(child, prefix);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| rewrite_refs(item, prefix)),
        _ => {}
    }
}

fn problem_schema() -> Value {
    json!({
        "type": "object",
        "description": "An error as RFC 9457 problem details, with Exhale's stable code and what the client needs to act on it.",
        "properties": {
            "type": {"type": "string", "description": "Always about:blank: the code says what happened."},
            "title": {"type": "string"},
            "status": {"type": "integer"},
            "detail": {"type": "string", "description": "What went wrong and what to do next, for a person or a model."},
            "code": {
                "type": "string",
                "enum": [
                    "invalid_input", "not_found", "conflict", "forbidden",
                    "confirmation_required", "unauthenticated", "rate_limited", "internal",
                ],
            },
            "pointer": {"type": "string", "description": "invalid_input: JSON pointer to the offending input field, empty for the whole input."},
            "needed_scope": {"type": "string", "enum": ["read", "write", "trusted"], "description": "forbidden: the token scope the op needs."},
            "confirmation_id": {"type": "string", "description": "confirmation_required: pass to confirm_change once the person agreed."},
            "expires_at": {"type": "string", "description": "confirmation_required: when the confirmation lapses (RFC 3339)."},
            "preview": {"description": "confirmation_required: the dry-run result of the call, to show the person."},
            "retry_after": {"type": "integer", "description": "rate_limited: seconds to wait, as in the Retry-After header."},
        },
        "required": ["type", "title", "status", "detail", "code"],
    })
}

#[cfg(test)]
mod tests;
