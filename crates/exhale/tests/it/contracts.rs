//! Typed contracts, as clients see them in `tools/list`: every property that holds a date says
//! `"format": "date"`, and every property with a closed set of values lists them in `enum`,
//! in input and output schemas alike; free text in inputs says its `maxLength`.

use serde_json::{Map, Value};

use crate::{fixtures::World, mcp::client_without_token};

/// Names of string properties that hold a closed set of values.
const CLOSED_SETS: &[&str] = &[
    "status",
    "visibility",
    "sort",
    "kind",
    "unit",
    "preset",
    "action",
    "role",
    "group_by",
    "actor_kind",
    "entity",
    "week_start",
    "scope",
];

fn is_string(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(kind)) => kind == "string",
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "string"),
        _ => false,
    }
}

/// The schema and, for arrays and unions, the schemas it is made of.
fn branches(schema: &Value) -> Vec<&Value> {
    let mut out = vec![schema];
    if let Some(items) = schema.get("items") {
        out.extend(branches(items));
    }
    for key in ["anyOf", "oneOf"] {
        for branch in schema.get(key).and_then(Value::as_array).into_iter().flatten() {
            out.extend(branches(branch));
        }
    }
    out
}

fn holds_a_date(name: &str, property: &Value) -> bool {
    let description =
        property.get("description").and_then(Value::as_str).unwrap_or_default().to_lowercase();
    let words: Vec<&str> = description.split(|c: char| !c.is_alphanumeric() && c != '-').collect();
    name.ends_with("_on")
        || name.ends_with("_before")
        || ["on", "date", "today", "until", "since"].contains(&name)
        || words.iter().any(|word| ["date", "day", "yyyy-mm-dd"].contains(word))
}

/// Walks every `properties` map under `schema`, collecting what breaks the rules.
fn check(path: &str, schema: &Value, output: bool, problems: &mut Vec<String>) {
    if let Some(Value::Object(properties)) = schema.get("properties") {
        for (name, property) in properties {
            check_property(&format!("{path}/{name}"), name, property, output, problems);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(inner) = schema.get(key).filter(|inner| inner.is_object()) {
            check(path, inner, output, problems);
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for branch in schema.get(key).and_then(Value::as_array).into_iter().flatten() {
            check(path, branch, output, problems);
        }
    }
}

fn check_property(
    path: &str,
    name: &str,
    property: &Value,
    output: bool,
    problems: &mut Vec<String>,
) {
    let strings: Vec<&Value> = branches(property).into_iter().filter(|b| is_string(b)).collect();
    if !strings.is_empty() {
        let has = |key: &str, value: Option<&str>| {
            strings.iter().any(|b| match (b.get(key), value) {
                (Some(Value::String(found)), Some(value)) => found == value,
                (Some(_), None) => true,
                _ => false,
            })
        };
        if holds_a_date(name, property)
            && !has("format", Some("date"))
            && !has("format", Some("date-time"))
        {
            problems.push(format!("{path} holds a date but its schema lacks \"format\": \"date\""));
        }
        // An activity entry names the op of its time, which a later version may have renamed.
        let historical_op = output && name == "op";
        let closed = CLOSED_SETS.contains(&name) || (name == "op" && !historical_op);
        if closed && !has("enum", None) {
            problems.push(format!("{path} is a closed set but its schema lacks \"enum\""));
        }
        // Free text a person or model writes is bounded, and the schema says by how much.
        let free_text = ["name", "notes", "note", "url", "emoji", "from", "to"].contains(&name);
        if !output && free_text && !holds_a_date(name, property) && !has("maxLength", None) {
            problems.push(format!("{path} is free text but its schema lacks \"maxLength\""));
        }
    }
    // Values listed by hand in a description belong in an enum.
    let description = property.get("description").and_then(Value::as_str).unwrap_or_default();
    if description.contains("\" or \"") {
        problems.push(format!("{path} lists its values in the description: {description:?}"));
    }
    check(path, property, output, problems);
}

#[tokio::test]
async fn every_date_says_format_date_and_every_closed_set_says_enum() {
    let w = World::new().await;
    // A person who owns the household sees every op.
    let server = w.env.serve_mcp_as(w.ana.clone()).await;
    let client = client_without_token(server.url("/mcp"), "Contract check").await;
    let tools = client.list_all_tools().await.unwrap();
    // export_data's schema names its parts by hand (each has its op's shape): the document
    // has exactly those parts.
    let export = client
        .call_tool(rmcp::model::CallToolRequestParams::new("export_data"))
        .await
        .unwrap()
        .structured_content
        .unwrap();
    let schema = tools.iter().find(|tool| tool.name == "export_data").unwrap();
    let parts = |value: &Value| -> Vec<String> {
        let mut keys: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        keys
    };
    let declared = Value::Object(Map::clone(schema.output_schema.as_ref().unwrap()));
    assert_eq!(
        parts(&export),
        parts(&declared["properties"]),
        "export_data's schema names its parts"
    );
    client.cancel().await.unwrap();
    assert_eq!(tools.len(), ops::all().len(), "an owner in person gets every op");
    let mut problems = Vec::new();
    let mut checked = 0;
    for tool in &tools {
        let input = Value::Object(Map::clone(&tool.input_schema));
        check(&format!("{} input", tool.name), &input, false, &mut problems);
        let output = Value::Object(Map::clone(tool.output_schema.as_ref().unwrap()));
        check(&format!("{} output", tool.name), &output, true, &mut problems);
        checked += 1;
    }
    assert_eq!(checked, ops::all().len());
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn the_checks_catch_an_untyped_date_and_an_untyped_closed_set() {
    let schema = serde_json::json!({"type": "object", "properties": {
        "ends_on": {"type": "string"},
        "status": {"type": ["string", "null"]},
        "group": {"type": "string", "description": "\"a\" or \"b\"."},
        "starts_on": {"type": "string", "format": "date"},
        "role": {"type": "string", "enum": ["owner", "member"]},
        "items": {"type": "array", "items": {"type": "object", "properties": {"due_on": {"type": "string"}}}}
    }});
    let mut problems = Vec::new();
    check("t", &schema, false, &mut problems);
    assert_eq!(problems.len(), 4, "{problems:#?}");
    let unbounded =
        serde_json::json!({"type": "object", "properties": {"name": {"type": "string"}}});
    let mut problems = Vec::new();
    check("t", &unbounded, false, &mut problems);
    assert_eq!(problems.len(), 1, "{problems:#?}");
}
