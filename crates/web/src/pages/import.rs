//! Import a bank statement: upload the export, review what `parse_statement` found (tick,
//! rename, pick the category, change the amount or cycle), see exactly what would be created
//! (the dry run of `import_subscriptions`), and confirm.

use axum::{
    Form,
    extract::{Multipart, State},
    http::{HeaderMap, StatusCode},
    response::Response,
};
use ops::{Mode, OpError, accounts::SessionCaller, import::MAX_STATEMENT_BYTES};
use serde_json::{Value, json};

use crate::{
    Web,
    pages::{call, subscriptions::CYCLES},
    render::{op_error, page, page_with_status, redirect_with_notice},
    session,
};

fn upload_page(
    web: &Web,
    headers: &HeaderMap,
    person: &SessionCaller,
    status: StatusCode,
    error: Option<String>,
) -> Response {
    let mut data =
        json!({"nav": "import", "error": error, "max_mb": MAX_STATEMENT_BYTES / 1024 / 1024});
    page_with_status(web, headers, Some(person), status, "import.html", &mut data)
}

pub(crate) async fn show(State(web): State<Web>, headers: HeaderMap) -> Response {
    let person = match session::person(&web, &headers, "/import").await {
        Ok(person) => person,
        Err(to_sign_in) => return to_sign_in,
    };
    upload_page(&web, &headers, &person, StatusCode::OK, None)
}

/// The uploaded file and the form's CSRF token.
async fn read_upload(mut form: Multipart) -> Result<(String, Vec<u8>), String> {
    let (mut csrf, mut file) = (String::new(), None);
    while let Some(field) =
        form.next_field().await.map_err(|err| format!("The upload broke off: {err}"))?
    {
        match field.name() {
            Some("csrf") => csrf = field.text().await.map_err(|err| err.to_string())?,
            Some("statement") => {
                file = Some(
                    field
                        .bytes()
                        .await
                        .map_err(|_| "The file is too large or the upload broke off.".to_owned())?,
                )
            }
            _ => {}
        }
    }
    let file = file.filter(|f| !f.is_empty()).ok_or("Choose the export file first.")?;
    Ok((csrf, file.to_vec()))
}

pub(crate) async fn upload(
    State(web): State<Web>,
    headers: HeaderMap,
    form: Multipart,
) -> Response {
    let person = match session::person(&web, &headers, "/import").await {
        Ok(person) => person,
        Err(to_sign_in) => return to_sign_in,
    };
    let (csrf, bytes) = match read_upload(form).await {
        Ok(upload) => upload,
        Err(message) => {
            return upload_page(
                &web,
                &headers,
                &person,
                StatusCode::UNPROCESSABLE_ENTITY,
                Some(message),
            );
        }
    };
    if let Err(refused) = session::check_csrf(&web, &person, &csrf) {
        return refused;
    }
    let parsed = match call(
        &web,
        &person,
        "parse_statement",
        json!({"content_base64": ops::import::encode_base64(&bytes)}),
        Mode::Apply,
    )
    .await
    {
        Ok(parsed) => parsed,
        Err(err @ OpError::InvalidInput { .. }) => {
            return upload_page(
                &web,
                &headers,
                &person,
                StatusCode::UNPROCESSABLE_ENTITY,
                Some(err.text().render()),
            );
        }
        Err(err) => return op_error(&web, &headers, &person, &err),
    };
    let categories = match call(&web, &person, "list_categories", json!({}), Mode::Apply).await {
        Ok(categories) => categories["items"].clone(),
        Err(err) => return op_error(&web, &headers, &person, &err),
    };
    // Each candidate's charges travel with the form, as JSON in a hidden field.
    let candidates: Vec<Value> = parsed["candidates"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let mut row = c.clone();
            row["charges_json"] = json!(
                c["charges"]
                    .as_array()
                    .map(|charges| {
                        charges
                            .iter()
                            .map(|ch| json!({"date": ch["date"], "amount": ch["amount"]["amount"]}))
                            .collect::<Vec<_>>()
                    })
                    .map(|charges| Value::Array(charges).to_string())
            );
            row
        })
        .collect();
    let cycles: Vec<Value> = CYCLES
        .iter()
        .filter(|(v, _)| *v != "custom")
        .map(|(value, label)| json!({"value": value, "label": label}))
        .collect();
    page(
        &web,
        &headers,
        Some(&person),
        "import_review.html",
        json!({"nav": "import", "parsed": parsed, "candidates": candidates, "categories": categories, "cycles": cycles}),
    )
}

/// The ticked rows of the review form as `import_subscriptions` items.
fn items(pairs: &[(String, String)]) -> Vec<Value> {
    let value = |key: String| {
        pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| v.trim().to_owned()).unwrap_or_default()
    };
    pairs
        .iter()
        .filter_map(|(key, _)| key.strip_prefix("pick_"))
        .map(|i| {
            let mut item = json!({
                "name": value(format!("name_{i}")),
                "amount": value(format!("amount_{i}")),
                "currency": value(format!("currency_{i}")),
                "cycle": value(format!("cycle_{i}")),
                "charges": serde_json::from_str::<Value>(&value(format!("charges_{i}"))).unwrap_or(json!([])),
            });
            if let Ok(id) = value(format!("category_{i}")).parse::<i64>() {
                item["category_id"] = json!(id);
            }
            item
        })
        .collect()
}

pub(crate) async fn apply(
    State(web): State<Web>,
    headers: HeaderMap,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Response {
    let field = |key: &str| {
        pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str()).unwrap_or_default()
    };
    let person = match session::checked(&web, &headers, "/import", field("csrf")).await {
        Ok(person) => person,
        Err(refused) => return refused,
    };
    let items = items(&pairs);
    if items.is_empty() {
        return redirect_with_notice(
            &web,
            "/import",
            "Nothing was ticked, so nothing was imported.",
        );
    }
    let input = json!({"items": items});
    if field("confirmed") != "yes" {
        return match call(&web, &person, "import_subscriptions", input, Mode::DryRun).await {
            Ok(preview) => {
                let mut hidden: Vec<Value> = pairs
                    .iter()
                    .filter(|(k, _)| k != "csrf")
                    .map(|(name, value)| json!({"name": name, "value": value}))
                    .collect();
                hidden.push(json!({"name": "confirmed", "value": "yes"}));
                page(
                    &web,
                    &headers,
                    Some(&person),
                    "confirm.html",
                    json!({
                        "nav": "import",
                        "title": "Import these subscriptions?",
                        "explanation": "Each starts at its first charge in the statement, with the prices it showed. Activity has Undo for the whole import.",
                        "changes": preview["changes"],
                        "action": "/import/apply",
                        "hidden_list": hidden,
                        "confirm_label": "Import",
                        "cancel": "/import",
                    }),
                )
            }
            Err(err) => refused(&web, &headers, &person, err),
        };
    }
    match call(&web, &person, "import_subscriptions", input, Mode::Apply).await {
        Ok(result) => {
            let created = result["created"].as_array().map_or(0, Vec::len);
            let skipped = result["skipped"].as_array().map_or(0, Vec::len);
            let notice = if skipped > 0 {
                format!(
                    "Imported {created}; {skipped} already existed. Activity has Undo for the whole import."
                )
            } else {
                format!("Imported {created}. Activity has Undo for the whole import.")
            };
            redirect_with_notice(&web, "/subscriptions", &notice)
        }
        Err(err) => refused(&web, &headers, &person, err),
    }
}

/// The upload page with the op's message, for what the person can fix.
fn refused(web: &Web, headers: &HeaderMap, person: &SessionCaller, err: OpError) -> Response {
    match err {
        OpError::InvalidInput { .. } => upload_page(
            web,
            headers,
            person,
            StatusCode::UNPROCESSABLE_ENTITY,
            Some(err.text().render()),
        ),
        err => op_error(web, headers, person, &err),
    }
}
