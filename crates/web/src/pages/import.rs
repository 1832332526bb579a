//! Import a bank statement: upload the export, review what `parse_statement` found (tick,
//! rename, pick the category, change the amount or cycle), see exactly what would be created
//! (the dry run of `import_subscriptions`), and confirm. With the built-in assistant on, a
//! picture, pasted text, or a statement Exhale cannot read by itself is read by the model into
//! the same review list, and a CSV's merchant names are tidied by it.

use axum::{
    extract::{Multipart, State},
    http::{HeaderMap, StatusCode},
    response::Response,
};
use ops::{
    Mode, OpError, Text,
    accounts::SessionCaller,
    assistant::{DocumentReading, Reading},
    household::Empty,
    import::{
        ImportCharge, ImportItem, ImportSubscriptions, ImportSubscriptionsInput,
        MAX_STATEMENT_BYTES,
    },
    organise::ListCategories,
};
use serde_json::{Value, json};

use crate::{
    pages::{Confirm, confirmation, confirmed, form, subscriptions::cycle_options},
    reader::say,
    render::{op_error, page, page_with_status, redirect_with_notice},
    session::{self, Posted, SignedIn},
    state::Web,
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

pub(crate) async fn show(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
) -> Response {
    upload_page(&web, &headers, &person, StatusCode::OK, None)
}

/// The uploaded file, or the pasted text when there is some, and the form's CSRF token.
async fn read_upload(mut form: Multipart) -> Result<(String, Vec<u8>), Text> {
    let (mut csrf, mut file, mut pasted) = (String::new(), None, String::new());
    let broke_off = || Text::new("The file is too large or the upload broke off.");
    while let Some(field) = form.next_field().await.map_err(|_| broke_off())? {
        match field.name() {
            Some("csrf") => csrf = field.text().await.map_err(|_| broke_off())?,
            Some("statement") => file = Some(field.bytes().await.map_err(|_| broke_off())?),
            Some("pasted") => pasted = field.text().await.map_err(|_| broke_off())?,
            _ => {}
        }
    }
    if !pasted.trim().is_empty() {
        return Ok((csrf, pasted.into_bytes()));
    }
    let file = file
        .filter(|f| !f.is_empty())
        .ok_or_else(|| Text::new("Choose the export file first, or paste the statement's text."))?;
    Ok((csrf, file.to_vec()))
}

/// The review page for what the model read: the same list as a bank export's, each row marked
/// as read by the model, with the items Exhale's checks left out.
fn model_review(
    web: &Web,
    headers: &HeaderMap,
    person: &SessionCaller,
    reading: &DocumentReading,
    categories: &[ops::organise::Category],
) -> Response {
    let candidates: Vec<Value> = reading
        .items
        .iter()
        .map(|item| {
            let charges = item.import_item().charges;
            json!({
                "name": item.name, "merchant": item.name, "proposed": true, "active": true,
                "amount": {"amount": item.amount, "currency": item.currency},
                "cycle": item.cycle, "price_changes": [],
                "charges": [{"date": item.charged_on, "amount": {"amount": item.amount, "currency": item.currency}}],
                "charges_json": serde_json::to_string(&charges).unwrap_or_default(),
            })
        })
        .collect();
    let problems: Vec<Value> =
        reading.left_out.iter().map(|why| json!({"line": 0, "message": why})).collect();
    let mut cycles = cycle_options();
    cycles.retain(|cycle| cycle["value"] != "custom");
    page(
        web,
        headers,
        Some(person),
        "import_review.html",
        json!({"nav": "import", "read_by": reading.model,
               "parsed": {"transaction_count": 0, "notes": [], "problems": problems},
               "candidates": candidates, "categories": categories, "cycles": cycles}),
    )
}

pub(crate) async fn upload(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
    form: Multipart,
) -> Response {
    let (csrf, bytes) = match read_upload(form).await {
        Ok(upload) => upload,
        Err(message) => {
            return upload_page(
                &web,
                &headers,
                &person,
                StatusCode::UNPROCESSABLE_ENTITY,
                Some(say(&message)),
            );
        }
    };
    if let Err(refused) = session::check_csrf(&web, &person, &csrf) {
        return refused;
    }
    let categories = match web.call::<ListCategories>(&person, Empty {}).await {
        Ok(categories) => categories.items,
        Err(err) => return op_error(&web, &headers, &person, &err),
    };
    let parsed = match web.assistant.read_document(&person.caller, bytes).await {
        Ok(Reading::Statement(parsed)) => parsed,
        Ok(Reading::Model(reading)) => {
            return model_review(&web, &headers, &person, &reading, &categories);
        }
        Err(
            err @ (OpError::InvalidInput { .. }
            | OpError::Conflict { .. }
            | OpError::RateLimited { .. }),
        ) => {
            return upload_page(
                &web,
                &headers,
                &person,
                StatusCode::UNPROCESSABLE_ENTITY,
                Some(crate::reader::say(&err.text())),
            );
        }
        Err(err) => return op_error(&web, &headers, &person, &err),
    };
    // Each candidate's charges travel with the form, as JSON in a hidden field.
    let candidates: Vec<Value> = parsed
        .candidates
        .iter()
        .map(|candidate| {
            let mut row = json!(candidate);
            row["charges_json"] =
                json!(serde_json::to_string(&candidate.import_item().charges).unwrap_or_default());
            row
        })
        .collect();
    let mut cycles = cycle_options();
    cycles.retain(|cycle| cycle["value"] != "custom");
    page(
        &web,
        &headers,
        Some(&person),
        "import_review.html",
        json!({"nav": "import", "parsed": parsed, "candidates": candidates, "categories": categories, "cycles": cycles}),
    )
}

/// The ticked rows of the review form as `import_subscriptions` items.
fn items(pairs: &[(String, String)]) -> Result<Vec<ImportItem>, OpError> {
    let value = |key: String| {
        pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| v.trim()).unwrap_or_default()
    };
    pairs
        .iter()
        .filter_map(|(key, _)| key.strip_prefix("pick_"))
        .map(|i| {
            let cycle = form::cycle(value(format!("cycle_{i}")), "", "")?.ok_or_else(|| {
                OpError::invalid("/cycle", Text::new("Choose how often it is charged."))
            })?;
            // The charges the review page was given; anything else is refused by the op.
            let charges: Vec<ImportCharge> =
                serde_json::from_str(value(format!("charges_{i}"))).unwrap_or_default();
            Ok(ImportItem {
                name: value(format!("name_{i}")).to_owned(),
                amount: form::amount("/amount", value(format!("amount_{i}")))?,
                currency: form::parsed("/currency", value(format!("currency_{i}")))?,
                cycle,
                category_id: form::id(value(format!("category_{i}"))),
                payment_method_id: None,
                charges,
            })
        })
        .collect()
}

pub(crate) async fn apply(
    State(web): State<Web>,
    headers: HeaderMap,
    Posted { person, form: pairs }: Posted<Vec<(String, String)>>,
) -> Response {
    let field = |key: &str| {
        pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str()).unwrap_or_default()
    };
    let items = match items(&pairs) {
        Ok(items) => items,
        Err(err) => return refused(&web, &headers, &person, err),
    };
    if items.is_empty() {
        return redirect_with_notice(
            &web,
            "/import",
            &Text::new("Nothing was ticked, so nothing was imported."),
        );
    }
    let input = ImportSubscriptionsInput { items };
    if field("confirmed") != "yes" {
        return match web.write::<ImportSubscriptions>(&person, input, Mode::DryRun).await {
            Ok(preview) => {
                let confirm = Confirm {
                    nav: "import",
                    title: Text::new("Import these subscriptions?"),
                    explanation: Text::new(
                        "Each starts at its first charge in the statement, with the prices it showed. Activity has Undo for the whole import.",
                    ),
                    action: "/import/apply".into(),
                    confirm_label: Text::new("Import"),
                    cancel: "/import".into(),
                    hidden: confirmed(pairs.iter().cloned()),
                };
                confirmation(&web, &headers, &person, confirm, &preview.receipt.changes)
            }
            Err(err) => refused(&web, &headers, &person, err),
        };
    }
    match web.call::<ImportSubscriptions>(&person, input).await {
        Ok(result) => {
            let notice = if result.skipped.is_empty() {
                Text::new("Imported {created}. Activity has Undo for the whole import.")
            } else {
                Text::new(
                    "Imported {created}; {skipped} already existed. Activity has Undo for the whole import.",
                )
                .with("skipped", result.skipped.len())
            }
            .with("created", result.created.len());
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
            Some(crate::reader::say(&err.text())),
        ),
        err => op_error(web, headers, person, &err),
    }
}
