//! Export: everything the person can see, as one JSON document (`export_data`), and the
//! subscriptions and charges as CSV for a spreadsheet.

use axum::{extract::State, http::HeaderMap, response::Response};
use ops::{access::ExportData, charges::Charge, household::Empty, subscriptions::Subscription};
use serde_json::json;

use crate::{
    render::{attachment, op_error, page},
    session::SignedIn,
    state::Web,
};

pub(crate) async fn show(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
) -> Response {
    page(&web, &headers, Some(&person), "export.html", json!({"nav": "export"}))
}

pub(crate) async fn json_file(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
) -> Response {
    match web.call::<ExportData>(&person, Empty {}).await {
        Ok(export) => attachment(
            "exhale-export.json",
            "application/json",
            serde_json::to_string_pretty(&export).unwrap_or_default(),
        ),
        Err(err) => op_error(&web, &headers, &person, &err),
    }
}

/// One CSV field: quoted when it holds a separator, a quote or a line break; a leading
/// `=`, `+`, `-` or `@` is neutralised so a spreadsheet does not run it as a formula.
fn field(text: &str) -> String {
    let text = if text.starts_with(['=', '+', '-', '@']) && text.parse::<f64>().is_err() {
        format!("'{text}")
    } else {
        text.to_owned()
    };
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

/// A CSV column: its header, and what it shows of a row.
type Column<T> = (&'static str, fn(&T) -> String);

/// A CSV with one column per [`Column`].
fn csv<T>(columns: &[Column<T>], rows: &[T]) -> String {
    let mut out = columns.iter().map(|(name, _)| *name).collect::<Vec<_>>().join(",");
    out.push_str("\r\n");
    for row in rows {
        let fields = columns.iter().map(|(_, value)| field(&value(row)));
        out.push_str(&fields.collect::<Vec<_>>().join(","));
        out.push_str("\r\n");
    }
    out
}

/// Every field of every subscription the person can see. From `export_data`, like the
/// charges: its subscriptions are whole (list rows carry only what a list shows).
pub(crate) async fn subscriptions_csv(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
) -> Response {
    let export = match web.call::<ExportData>(&person, Empty {}).await {
        Ok(export) => export,
        Err(err) => return op_error(&web, &headers, &person, &err),
    };
    let rows: Vec<Subscription> =
        export.subscriptions.into_iter().map(|detail| detail.subscription).collect();
    let columns: [Column<Subscription>; 13] = [
        ("id", |s| s.id.to_string()),
        ("name", |s| s.name.clone()),
        ("status", |s| s.status.to_string()),
        ("amount", |s| s.price.amount.to_string()),
        ("currency", |s| s.price.currency.to_string()),
        ("cycle", |s| s.cycle.description.clone()),
        ("next_charge_on", |s| s.next_charge_on.map(|d| d.to_string()).unwrap_or_default()),
        ("monthly", |s| s.monthly.amount.to_string()),
        ("yearly", |s| s.yearly.amount.to_string()),
        ("category", |s| s.category.as_ref().map(|c| c.name.clone()).unwrap_or_default()),
        ("payment_method", |s| {
            s.payment_method.as_ref().map(|m| m.name.clone()).unwrap_or_default()
        }),
        ("tags", |s| s.tags.join("; ")),
        ("owner", |s| s.owner.name.clone()),
    ];
    attachment("exhale-subscriptions.csv", "text/csv; charset=utf-8", csv(&columns, &rows))
}

pub(crate) async fn charges_csv(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
) -> Response {
    let rows = match web.call::<ExportData>(&person, Empty {}).await {
        Ok(export) => export.charges,
        Err(err) => return op_error(&web, &headers, &person, &err),
    };
    let columns: [Column<Charge>; 7] = [
        ("id", |c| c.id.to_string()),
        ("subscription", |c| c.subscription.name.clone()),
        ("charged_on", |c| c.charged_on.to_string()),
        ("amount", |c| c.amount.amount.to_string()),
        ("currency", |c| c.amount.currency.to_string()),
        ("status", |c| c.status.to_string()),
        ("note", |c| c.note.clone().unwrap_or_default()),
    ];
    attachment("exhale-charges.csv", "text/csv; charset=utf-8", csv(&columns, &rows))
}

#[cfg(test)]
mod tests {
    use super::field;

    #[test]
    fn csv_fields_are_quoted_and_formulas_neutralised() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field("a, b"), "\"a, b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(field("-12.50"), "-12.50", "a negative number stays a number");
        assert_eq!(field("family; music"), "family; music");
        assert_eq!(field(""), "");
    }
}
