//! Tests of the OpenAPI document over the whole catalog.

use std::collections::HashSet;

use ops::OpMeta;
use serde_json::{Map, Value, json};

use super::{hoist_defs, openapi_document};

fn document() -> Value {
    openapi_document(ops::all())
}

fn operations(doc: &Value) -> impl Iterator<Item = (&String, &Value)> {
    doc["paths"].as_object().unwrap().iter().flat_map(|(path, item)| {
        item.as_object().unwrap().values().map(move |operation| (path, operation))
    })
}

fn path_of(meta: &OpMeta) -> String {
    format!("/api/v1/ops/{}", meta.name())
}

#[test]
fn header_security_and_components() {
    let doc = document();
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["info"]["title"], "Exhale API");
    assert_eq!(doc["info"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(doc["servers"], json!([{"url": "/"}]));
    assert_eq!(doc["security"], json!([{"bearer": []}]));
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["type"], "http",
        "{}",
        doc["components"]["securitySchemes"]
    );
    assert_eq!(doc["components"]["securitySchemes"]["bearer"]["scheme"], "bearer");
    assert_eq!(doc["components"]["schemas"]["Problem"]["type"], "object");
}

#[test]
fn every_op_has_a_path_posts_and_reads_also_get() {
    let doc = document();
    let paths = doc["paths"].as_object().unwrap();
    assert_eq!(paths.len(), ops::all().len());
    for meta in ops::all() {
        let item = &paths[&path_of(meta)];
        assert_eq!(item["post"]["operationId"], meta.name());
        assert_eq!(item["post"]["summary"], meta.info.summary);
        if meta.info.is_write() {
            assert!(item.get("get").is_none(), "{}", meta.name());
        } else {
            assert_eq!(item["get"]["operationId"], format!("{}_get", meta.name()));
        }
    }
}

#[test]
fn operation_ids_are_unique() {
    let doc = document();
    let mut seen = HashSet::new();
    for (path, operation) in operations(&doc) {
        let id = operation["operationId"].as_str().unwrap();
        assert!(seen.insert(id.to_owned()), "{id} twice ({path})");
    }
}

#[test]
fn every_operation_carries_the_ops_facts() {
    let doc = document();
    for meta in ops::all() {
        let item = &doc["paths"][&path_of(meta)];
        for operation in item.as_object().unwrap().values() {
            assert_eq!(operation["x-exhale-scope"], meta.info.scope.as_str());
            assert_eq!(operation["x-exhale-financial"], meta.info.financial);
            assert_eq!(operation["x-exhale-destructive"], meta.info.hints.destructive);
            match meta.info.exposure {
                ops::Exposure::Agents | ops::Exposure::NotAssistant { .. } => {
                    assert!(operation.get("x-exhale-excluded-from-agents").is_none());
                }
                ops::Exposure::Excluded { reason } => {
                    assert_eq!(operation["x-exhale-excluded-from-agents"], reason);
                }
            }
            let responses = &operation["responses"];
            assert!(responses["200"]["content"]["application/json"]["schema"].is_object());
            assert_eq!(
                responses["default"]["content"]["application/problem+json"]["schema"]["$ref"],
                "#/components/schemas/Problem"
            );
        }
    }
}

#[test]
fn request_bodies_are_objects_and_writes_take_dry_run() {
    let doc = document();
    for meta in ops::all() {
        let schema = &doc["paths"][&path_of(meta)]["post"]["requestBody"]["content"]["application/json"]
            ["schema"];
        assert_eq!(schema["type"], "object", "{}: {schema}", meta.name());
        let dry_run = &schema["properties"]["dry_run"];
        if meta.info.is_write() {
            assert_eq!(dry_run["type"], "boolean", "{}", meta.name());
        } else {
            assert!(dry_run.is_null(), "{}", meta.name());
        }
    }
}

/// `dry_run` belongs to the adapters; an op declaring it would lose it to them.
#[test]
fn no_op_declares_dry_run_itself() {
    for meta in ops::all() {
        assert!(meta.input_schema()["properties"].get("dry_run").is_none(), "{}", meta.name());
    }
}

#[test]
fn get_parameters_follow_the_input_schema() {
    let doc = document();
    for meta in ops::all().iter().filter(|meta| !meta.info.is_write()) {
        let input = meta.input_schema();
        let properties = input["properties"].as_object().cloned().unwrap_or_default();
        let required = input["required"].as_array().cloned().unwrap_or_default();
        let parameters = doc["paths"][&path_of(meta)]["get"]["parameters"].as_array().unwrap();
        assert_eq!(parameters.len(), properties.len(), "{}", meta.name());
        for parameter in parameters {
            let name = parameter["name"].as_str().unwrap();
            assert_eq!(parameter["in"], "query");
            assert_eq!(parameter["schema"], properties[name]);
            assert_eq!(parameter["required"], required.contains(&json!(name)));
        }
    }
    let list = &doc["paths"]["/api/v1/ops/list_subscriptions"]["get"]["parameters"];
    let status = list.as_array().unwrap().iter().find(|p| p["name"] == "status").unwrap();
    assert_eq!(status["style"], "form");
    assert_eq!(status["explode"], true);
    assert_eq!(status["schema"]["type"], "array");
    let get = &doc["paths"]["/api/v1/ops/get_subscription"]["get"]["parameters"];
    assert_eq!(get[0]["name"], "id");
    assert_eq!(get[0]["required"], true);
}

fn collect_refs<'a>(value: &'a Value, refs: &mut Vec<&'a str>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                match (key.as_str(), child) {
                    ("$ref", Value::String(target)) => refs.push(target),
                    _ => collect_refs(child, refs),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_refs(item, refs)),
        _ => {}
    }
}

fn assert_refs_resolve(doc: &Value) -> usize {
    let mut refs = Vec::new();
    collect_refs(doc, &mut refs);
    for target in &refs {
        let pointer = target.strip_prefix('#').unwrap_or_else(|| panic!("external $ref {target}"));
        assert!(!pointer.is_empty(), "$ref to the document root");
        assert!(doc.pointer(pointer).is_some(), "unresolved $ref {target}");
    }
    refs.len()
}

#[test]
fn every_ref_resolves() {
    let doc = document();
    // At least the Problem reference of every POST.
    assert!(assert_refs_resolve(&doc) >= ops::all().len());
}

#[test]
fn defs_are_moved_into_components_with_their_refs() {
    let mut schema = json!({
        "type": "object",
        "properties": {"node": {"$ref": "#/$defs/Node"}},
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
            },
        },
    });
    let mut components = Map::new();
    hoist_defs(&mut schema, "tree.input", &mut components);
    assert!(schema.get("$defs").is_none());
    assert_eq!(schema["properties"]["node"]["$ref"], "#/components/schemas/tree.input.Node");
    let node = &components["tree.input.Node"];
    assert_eq!(
        node["properties"]["children"]["items"]["$ref"],
        "#/components/schemas/tree.input.Node"
    );

    let doc = json!({"schema": schema, "components": {"schemas": components}});
    assert_eq!(assert_refs_resolve(&doc), 2);
}
