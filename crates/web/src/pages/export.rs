//! Export: everything the person can see, as one JSON document (`export_data`), and the
//! subscriptions and charges as CSV for a spreadsheet.

use axum::{
    extract::State,
    http::{HeaderMap, HeaderValue, header},
    response::{IntoResponse, Response},
};
use ops::{Mode, OpError, accounts::SessionCaller};
use serde_json::{Value, json};

use crate::{
    Web,
    pages::call,
    render::{op_error, page},
    session,
};

pub(crate) async fn show(State(web): State<Web>, headers: HeaderMap) -> Response {
    let person = match session::person(&web, &headers, "/export").await {
        Ok(person) => person,
        Err(to_sign_in) => return to_sign_in,
    };
    page(&web, &headers, Some(&person), "export.html", json!({"nav": "export"}))
}

fn download(filename: &str, content_type: &'static str, body: String) -> Response {
    let disposition = HeaderValue::from_str(&format!("attachment; filename=\"{filename}\""))
        .unwrap_or_else(|_| HeaderValue::from_static("attachment"));
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CONTENT_DISPOSITION, disposition);
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

pub(crate) async fn json_file(State(web): State<Web>, headers: HeaderMap) -> Response {
    let person = match session::person(&web, &headers, "/export").await {
        Ok(person) => person,
        Err(to_sign_in) => return to_sign_in,
    };
    match call(&web, &person, "export_data", json!({}), Mode::Apply).await {
        Ok(export) => download(
            "exhale-export.json",
            "application/json",
            serde_json::to_string_pretty(&export).unwrap_or_default(),
        ),
        Err(err) => op_error(&web, &headers, &person, &err),
    }
}

/// Every item of a paginated list op.
async fn all_items(web: &Web, person: &SessionCaller, op: &str) -> Result<Vec<Value>, OpError> {
    let mut items = Vec::new();
    let mut input = json!({"limit": ops::common::MAX_PAGE});
    loop {
        let page = call(web, person, op, input.clone(), Mode::Apply).await?;
        items.extend(page["items"].as_array().cloned().unwrap_or_default());
        match page["next_cursor"].as_str() {
            Some(cursor) => input["cursor"] = json!(cursor),
            None => return Ok(items),
        }
    }
}

/// One CSV field: quoted when it holds a separator, a quote or a line break; a leading
/// `=`, `+`, `-` or `@` is neutralised so a spreadsheet does not run it as a formula.
fn field(value: &Value) -> String {
    let text = match value {
        Value::Null => String::new(),
        Value::String(text) => text.clone(),
        Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().map_or(i.to_string(), str::to_owned))
            .collect::<Vec<_>>()
            .join("; "),
        other => other.to_string(),
    };
    let text = if text.starts_with(['=', '+', '-', '@']) && text.parse::<f64>().is_err() {
        format!("'{text}")
    } else {
        text
    };
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

/// A CSV with one column per (header, JSON pointer into each row).
fn csv(columns: &[(&str, &str)], rows: &[Value]) -> String {
    let mut out = columns.iter().map(|(name, _)| *name).collect::<Vec<_>>().join(",");
    out.push_str("\r\n");
    for row in rows {
        let fields =
            columns.iter().map(|(_, pointer)| field(row.pointer(pointer).unwrap_or(&Value::Null)));
        out.push_str(&fields.collect::<Vec<_>>().join(","));
        out.push_str("\r\n");
    }
    out
}

pub(crate) async fn subscriptions_csv(State(web): State<Web>, headers: HeaderMap) -> Response {
    let person = match session::person(&web, &headers, "/export").await {
        Ok(person) => person,
        Err(to_sign_in) => return to_sign_in,
    };
    let rows = match all_items(&web, &person, "list_subscriptions").await {
        Ok(rows) => rows,
        Err(err) => return op_error(&web, &headers, &person, &err),
    };
    let columns = [
        ("id", "/id"),
        ("name", "/name"),
        ("status", "/status"),
        ("amount", "/price/amount"),
        ("currency", "/price/currency"),
        ("cycle", "/cycle/description"),
        ("next_charge_on", "/next_charge_on"),
        ("monthly", "/monthly/amount"),
        ("yearly", "/yearly/amount"),
        ("category", "/category/name"),
        ("payment_method", "/payment_method/name"),
        ("tags", "/tags"),
        ("owner", "/owner/name"),
    ];
    download("exhale-subscriptions.csv", "text/csv; charset=utf-8", csv(&columns, &rows))
}

pub(crate) async fn charges_csv(State(web): State<Web>, headers: HeaderMap) -> Response {
    let person = match session::person(&web, &headers, "/export").await {
        Ok(person) => person,
        Err(to_sign_in) => return to_sign_in,
    };
    let rows = match all_items(&web, &person, "list_charges").await {
        Ok(rows) => rows,
        Err(err) => return op_error(&web, &headers, &person, &err),
    };
    let columns = [
        ("id", "/id"),
        ("subscription", "/subscription/name"),
        ("charged_on", "/charged_on"),
        ("amount", "/amount/amount"),
        ("currency", "/amount/currency"),
        ("status", "/status"),
        ("note", "/note"),
    ];
    download("exhale-charges.csv", "text/csv; charset=utf-8", csv(&columns, &rows))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::field;

    #[test]
    fn csv_fields_are_quoted_and_formulas_neutralised() {
        assert_eq!(field(&json!("plain")), "plain");
        assert_eq!(field(&json!("a, b")), "\"a, b\"");
        assert_eq!(field(&json!("say \"hi\"")), "\"say \"\"hi\"\"\"");
        assert_eq!(field(&json!("=HYPERLINK(\"x\")")), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(field(&json!("-12.50")), "-12.50", "a negative number stays a number");
        assert_eq!(field(&json!(["family", "music"])), "family; music");
        assert_eq!(field(&json!(null)), "");
    }
}
