//! Tests of body parsing and query coercion against hand-written schemas.

use serde_json::{Value, json};

use super::{json_body_input, query_input, take_dry_run};

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(key, value)| ((*key).to_owned(), (*value).to_owned())).collect()
}

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "limit": {"type": ["integer", "null"], "format": "uint32", "minimum": 0},
            "ratio": {"type": "number"},
            "flag": {"type": ["boolean", "null"]},
            "ids": {"type": "array", "items": {"type": "integer"}},
            "tags": {"type": ["array", "null"], "items": {"type": "string"}},
            "scope": {"anyOf": [{"type": "null"}, {"type": "integer"}]},
            "name": {"type": "string"},
            "any": {},
        },
    })
}

#[test]
fn scalars_follow_their_schema_type() {
    let input = query_input(
        &schema(),
        pairs(&[
            ("id", "-3"),
            ("limit", "10"),
            ("ratio", "1.5"),
            ("flag", "false"),
            ("scope", "2"),
            ("name", "12"),
            ("any", "true"),
        ]),
    )
    .unwrap();
    assert_eq!(
        Value::Object(input),
        json!({
            "id": -3, "limit": 10, "ratio": 1.5, "flag": false, "scope": 2,
            "name": "12", "any": "true",
        })
    );
}

#[test]
fn arrays_take_repeated_keys_and_commas_and_type_their_items() {
    let input = query_input(
        &schema(),
        pairs(&[("ids", "1,2"), ("ids", "3"), ("tags", "a,,b"), ("tags", "")]),
    )
    .unwrap();
    assert_eq!(Value::Object(input), json!({"ids": [1, 2, 3], "tags": ["a", "b"]}));
}

#[test]
fn a_bad_array_item_points_at_its_index() {
    let err = query_input(&schema(), pairs(&[("ids", "1,x")])).unwrap_err();
    assert_eq!(err.code(), "invalid_input");
    let ops::OpError::InvalidInput { pointer, .. } = err else { unreachable!() };
    assert_eq!(pointer, "/ids/1");
}

#[test]
fn numbers_must_be_finite_and_pointers_are_escaped() {
    let err = query_input(&schema(), pairs(&[("ratio", "NaN")])).unwrap_err();
    assert_eq!(err.text().render(), "ratio must be a number, not \"NaN\".");
    let schema = json!({"properties": {"a/b~c": {"type": "integer"}}});
    let ops::OpError::InvalidInput { pointer, .. } =
        query_input(&schema, pairs(&[("a/b~c", "x")])).unwrap_err()
    else {
        unreachable!()
    };
    assert_eq!(pointer, "/a~1b~0c");
}

#[test]
fn dry_run_is_dropped_from_a_query_unless_the_op_declares_it() {
    let input = query_input(&schema(), pairs(&[("dry_run", "true")])).unwrap();
    assert!(input.is_empty());
    let schema = json!({"properties": {"dry_run": {"type": "boolean"}}});
    let input = query_input(&schema, pairs(&[("dry_run", "true")])).unwrap();
    assert_eq!(input["dry_run"], true);
}

#[test]
fn bodies_are_objects_or_empty() {
    assert!(json_body_input(b"").unwrap().is_empty());
    assert_eq!(json_body_input(br#"{"a": 1}"#).unwrap()["a"], 1);
    assert_eq!(
        json_body_input(b"null").unwrap_err().text().render(),
        "The request body must be a JSON object with the op's input fields, not null."
    );
    assert_eq!(json_body_input(b"{").unwrap_err().code(), "invalid_input");
}

#[test]
fn dry_run_is_taken_out_of_a_body() {
    let mut input = json_body_input(br#"{"id": 1, "dry_run": true}"#).unwrap();
    assert!(take_dry_run(&mut input).unwrap());
    assert_eq!(Value::Object(input), json!({"id": 1}));
    let mut input = json_body_input(br#"{"dry_run": null}"#).unwrap();
    assert_eq!(
        take_dry_run(&mut input).unwrap_err().text().render(),
        "dry_run must be true or false, not null."
    );
}
