//! Changing one subscription from its pages: edit its details, and the small forms of the
//! detail page (pause, resume, cancel, change the price, reschedule) and of its charges.
//! Each form maps to one op; a refusal shows the detail page again with the op's message at
//! the form.

use axum::{
    Form,
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
    response::Response,
};
use ops::{Mode, OpError, accounts::SessionCaller};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::{
    Web,
    pages::{call, subscriptions::detail_page},
    render::{op_error, page_with_status, redirect_with_notice},
    session,
};

/// The forms of the detail page: (form, op, the fields it takes, the notice after it).
const ACTIONS: &[(&str, &str, &[&str], &str)] = &[
    ("pause", "pause_subscription", &["from", "until"], "Paused."),
    ("resume", "resume_subscription", &["on"], "Resumed."),
    (
        "cancel",
        "cancel_subscription",
        &["ends_on"],
        "Cancelled. Activity has Undo if that was a mistake.",
    ),
    ("price", "change_price", &["amount", "effective_on"], "Changed the price."),
    ("schedule", "reschedule_subscription", &["next_charge_on"], "Changed the schedule."),
];

/// The cycle the form chose: a preset name, or every/unit for "custom"; `None` when the form
/// has no cycle field.
fn cycle(form: &Map<String, Value>) -> Option<Value> {
    let text =
        |key: &str| form.get(key).and_then(Value::as_str).unwrap_or_default().trim().to_owned();
    match text("cycle").as_str() {
        "" => None,
        "custom" => {
            Some(json!({"every": text("every").parse::<i64>().unwrap_or(0), "unit": text("unit")}))
        }
        preset => Some(json!(preset)),
    }
}

pub(crate) async fn act(
    State(web): State<Web>,
    headers: HeaderMap,
    Path((id, action)): Path<(i64, String)>,
    Form(form): Form<Map<String, Value>>,
) -> Response {
    let csrf = form.get("csrf").and_then(Value::as_str).unwrap_or_default();
    let person = match session::checked(&web, &headers, &format!("/subscriptions/{id}"), csrf).await
    {
        Ok(person) => person,
        Err(refused) => return refused,
    };
    let Some((form_name, op, fields, done)) = ACTIONS.iter().find(|(name, ..)| *name == action)
    else {
        return web.templates.refusal(StatusCode::NOT_FOUND, "There is no such action.");
    };
    let mut input = Map::new();
    input.insert("id".into(), json!(id));
    for field in *fields {
        if let Some(value) =
            form.get(*field).and_then(Value::as_str).map(str::trim).filter(|v| !v.is_empty())
        {
            input.insert((*field).into(), json!(value));
        }
    }
    if *form_name == "schedule"
        && let Some(cycle) = cycle(&form)
    {
        input.insert("cycle".into(), cycle);
    }
    match call(&web, &person, op, Value::Object(input), Mode::Apply).await {
        Ok(_) => redirect_with_notice(&web, &format!("/subscriptions/{id}"), done),
        Err(err @ (OpError::InvalidInput { .. } | OpError::Conflict { .. })) => {
            let errors = json!({*form_name: err.text().render()});
            detail_page(&web, &headers, &person, id, StatusCode::UNPROCESSABLE_ENTITY, errors).await
        }
        Err(err) => op_error(&web, &headers, &person, &err),
    }
}

async fn edit_page(
    web: &Web,
    headers: &HeaderMap,
    person: &SessionCaller,
    id: i64,
    status: StatusCode,
    values: Option<Value>,
    error: Option<String>,
) -> Response {
    let (detail, categories, methods) = tokio::join!(
        call(web, person, "get_subscription", json!({"id": id}), Mode::Apply),
        call(web, person, "list_categories", json!({}), Mode::Apply),
        call(web, person, "list_payment_methods", json!({}), Mode::Apply),
    );
    let (detail, categories, methods) = match (detail, categories, methods) {
        (Ok(d), Ok(c), Ok(m)) => (d, c, m),
        (Err(err), ..) | (_, Err(err), _) | (.., Err(err)) => {
            return op_error(web, headers, person, &err);
        }
    };
    let values = values.unwrap_or_else(|| {
        json!({
            "name": detail["name"],
            "url": detail["url"].as_str().unwrap_or_default(),
            "notes": detail["notes"].as_str().unwrap_or_default(),
            "category_id": detail["category"]["id"].as_i64().map(|id| id.to_string()).unwrap_or_default(),
            "payment_method_id": detail["payment_method"]["id"].as_i64().map(|id| id.to_string()).unwrap_or_default(),
            "tags": detail["tags"].as_array().map(|tags| tags.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", ")).unwrap_or_default(),
            "visibility": detail["visibility"],
        })
    });
    let mut data = json!({
        "nav": "subscriptions",
        "s": detail,
        "values": values,
        "error": error,
        "categories": categories["items"],
        "payment_methods": methods["items"],
    });
    page_with_status(web, headers, Some(person), status, "subscription_edit.html", &mut data)
}

pub(crate) async fn edit_form(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(id): Path<i64>,
) -> Response {
    let person = match session::person(&web, &headers, &format!("/subscriptions/{id}/edit")).await {
        Ok(person) => person,
        Err(to_sign_in) => return to_sign_in,
    };
    edit_page(&web, &headers, &person, id, StatusCode::OK, None, None).await
}

#[derive(Deserialize, serde::Serialize)]
pub(crate) struct EditForm {
    #[serde(default, skip_serializing)]
    csrf: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    url: String,
    #[serde(default)]
    notes: String,
    #[serde(default)]
    category_id: String,
    #[serde(default)]
    payment_method_id: String,
    #[serde(default)]
    tags: String,
    #[serde(default)]
    visibility: String,
}

impl EditForm {
    /// Every field is sent: an emptied field clears it (null), as the person sees it.
    fn input(&self, id: i64) -> Value {
        let text_or_null =
            |value: &str| if value.trim().is_empty() { Value::Null } else { json!(value.trim()) };
        let id_or_null = |value: &str| value.parse::<i64>().map_or(Value::Null, |id| json!(id));
        let tags: Vec<&str> =
            self.tags.split(',').map(str::trim).filter(|t| !t.is_empty()).collect();
        let mut input = json!({
            "id": id,
            "name": self.name.trim(),
            "url": text_or_null(&self.url),
            "notes": text_or_null(&self.notes),
            "category_id": id_or_null(&self.category_id),
            "payment_method_id": id_or_null(&self.payment_method_id),
            "tags": tags,
        });
        if !self.visibility.is_empty() {
            input["visibility"] = json!(self.visibility);
        }
        input
    }
}

pub(crate) async fn edit(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(id): Path<i64>,
    Form(form): Form<EditForm>,
) -> Response {
    let person =
        match session::checked(&web, &headers, &format!("/subscriptions/{id}/edit"), &form.csrf)
            .await
        {
            Ok(person) => person,
            Err(refused) => return refused,
        };
    match call(&web, &person, "update_subscription", form.input(id), Mode::Apply).await {
        Ok(_) => redirect_with_notice(&web, &format!("/subscriptions/{id}"), "Saved."),
        Err(err @ OpError::InvalidInput { .. }) => {
            let values = serde_json::to_value(&form).ok();
            edit_page(
                &web,
                &headers,
                &person,
                id,
                StatusCode::UNPROCESSABLE_ENTITY,
                values,
                Some(err.text().render()),
            )
            .await
        }
        Err(err) => op_error(&web, &headers, &person, &err),
    }
}

#[derive(Deserialize)]
pub(crate) struct ChargeForm {
    csrf: String,
    subscription_id: i64,
    status: String,
}

pub(crate) async fn charge(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(id): Path<i64>,
    Form(form): Form<ChargeForm>,
) -> Response {
    let back = format!("/subscriptions/{}", form.subscription_id);
    let person = match session::checked(&web, &headers, &back, &form.csrf).await {
        Ok(person) => person,
        Err(refused) => return refused,
    };
    match call(
        &web,
        &person,
        "update_charge",
        json!({"id": id, "status": form.status}),
        Mode::Apply,
    )
    .await
    {
        Ok(_) => redirect_with_notice(&web, &back, "Saved the charge."),
        Err(err @ OpError::InvalidInput { .. }) => {
            let errors = json!({"charges": err.text().render()});
            detail_page(
                &web,
                &headers,
                &person,
                form.subscription_id,
                StatusCode::UNPROCESSABLE_ENTITY,
                errors,
            )
            .await
        }
        Err(err) => op_error(&web, &headers, &person, &err),
    }
}

/// The bulk form of the list: the ticked `ids`, an `action`, and a category for "categorise".
/// Deleting asks first, through a confirmation page built from the dry run.
pub(crate) async fn bulk(
    State(web): State<Web>,
    headers: HeaderMap,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Response {
    let value = |key: &str| {
        pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str()).unwrap_or_default()
    };
    let person = match session::checked(&web, &headers, "/subscriptions", value("csrf")).await {
        Ok(person) => person,
        Err(refused) => return refused,
    };
    let ids: Vec<i64> =
        pairs.iter().filter(|(k, _)| k == "ids").filter_map(|(_, v)| v.parse().ok()).collect();
    if ids.is_empty() {
        return redirect_with_notice(
            &web,
            "/subscriptions",
            "Tick the subscriptions to change first.",
        );
    }
    let mut input = json!({"ids": ids, "action": value("action")});
    if value("action") == "categorise" {
        input["action"] = json!("update");
        input["category_id"] =
            value("category_id").parse::<i64>().map_or(Value::Null, |id| json!(id));
    }
    if value("action") == "delete" && value("confirmed") != "yes" {
        return match call(&web, &person, "bulk_update_subscriptions", input, Mode::DryRun).await {
            Ok(preview) => {
                let mut hidden: Vec<Value> =
                    ids.iter().map(|id| json!({"name": "ids", "value": id})).collect();
                hidden.push(json!({"name": "action", "value": "delete"}));
                hidden.push(json!({"name": "confirmed", "value": "yes"}));
                crate::render::page(
                    &web,
                    &headers,
                    Some(&person),
                    "confirm.html",
                    json!({
                        "nav": "subscriptions",
                        "title": format!("Delete {} subscriptions?", ids.len()),
                        "explanation": "They are removed with their price history and charges. You can undo this from Activity, all at once.",
                        "changes": preview["changes"],
                        "action": "/subscriptions/bulk",
                        "hidden_list": hidden,
                        "confirm_label": "Delete them",
                        "cancel": "/subscriptions",
                    }),
                )
            }
            Err(err) => op_error(&web, &headers, &person, &err),
        };
    }
    match call(&web, &person, "bulk_update_subscriptions", input, Mode::Apply).await {
        Ok(result) => {
            let changed = result["items"]
                .as_array()
                .map_or(0, |items| items.iter().filter(|i| i["changed"] == true).count());
            redirect_with_notice(
                &web,
                "/subscriptions",
                &format!(
                    "Changed {changed} of {}. Activity has Undo for the whole batch.",
                    ids.len()
                ),
            )
        }
        Err(err @ (OpError::InvalidInput { .. } | OpError::Conflict { .. })) => {
            redirect_with_notice(&web, "/subscriptions", &err.text().render())
        }
        Err(err) => op_error(&web, &headers, &person, &err),
    }
}
