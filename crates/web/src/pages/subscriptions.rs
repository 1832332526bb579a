//! Subscriptions: the list with search, filters and sort; the detail page; creating one; and
//! deleting one through a confirmation page built from the dry run.

use axum::{
    Form,
    extract::{Path, Query, State},
    http::{HeaderMap, StatusCode},
    response::Response,
};
use ops::Mode;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::{
    Web,
    chart::{self, Bar},
    pages::{Confirm, apply_and_go, call, confirm_page, live_page},
    render::{op_error, page_with_status, redirect_with_notice},
    session,
};

/// The cycles offered in the form; "custom" shows every/unit.
pub(crate) const CYCLES: &[(&str, &str)] = &[
    ("weekly", "Weekly"),
    ("every_two_weeks", "Every two weeks"),
    ("monthly", "Monthly"),
    ("every_two_months", "Every two months"),
    ("quarterly", "Quarterly"),
    ("every_six_months", "Every six months"),
    ("yearly", "Yearly"),
    ("custom", "Custom…"),
];

#[derive(Deserialize, Default)]
pub(crate) struct ListQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    sort: String,
    #[serde(default)]
    category: String,
    #[serde(default)]
    tag: String,
    cursor: Option<String>,
}

pub(crate) async fn list(
    State(web): State<Web>,
    headers: HeaderMap,
    Query(query): Query<ListQuery>,
) -> Response {
    let person = match session::person(&web, &headers, "/subscriptions").await {
        Ok(person) => person,
        Err(to_sign_in) => return to_sign_in,
    };
    let mut input = json!({"limit": 100});
    if !query.q.trim().is_empty() {
        input["text"] = json!(query.q.trim());
    }
    if !query.status.is_empty() {
        input["status"] = json!([query.status]);
    }
    if !query.sort.is_empty() {
        input["sort"] = json!(query.sort);
    }
    match query.category.as_str() {
        "" => {}
        "none" => input["uncategorised"] = json!(true),
        id => input["category_id"] = json!(id.parse::<i64>().unwrap_or(-1)),
    }
    if !query.tag.trim().is_empty() {
        input["tag"] = json!(query.tag.trim());
    }
    if let Some(cursor) = &query.cursor {
        input["cursor"] = json!(cursor);
    }
    let (list, categories) = tokio::join!(
        call(&web, &person, "list_subscriptions", input, Mode::Apply),
        call(&web, &person, "list_categories", json!({}), Mode::Apply),
    );
    match list.and_then(|list| Ok((list, categories?))) {
        Ok((list, categories)) => live_page(
            &web,
            &headers,
            &person,
            "subscriptions.html",
            json!({"nav": "subscriptions", "list": list, "categories": categories["items"], "q": query.q, "status": query.status, "sort": query.sort, "category": query.category, "tag": query.tag}),
        )
        .await,
        Err(err) => op_error(&web, &headers, &person, &err),
    }
}

pub(crate) async fn detail(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(id): Path<i64>,
) -> Response {
    let person = match session::person(&web, &headers, &format!("/subscriptions/{id}")).await {
        Ok(person) => person,
        Err(to_sign_in) => return to_sign_in,
    };
    detail_page(&web, &headers, &person, id, StatusCode::OK, json!({})).await
}

/// The detail page; `errors` maps a form on it ("pause", "price", …) to what went wrong.
pub(crate) async fn detail_page(
    web: &Web,
    headers: &HeaderMap,
    person: &ops::accounts::SessionCaller,
    id: i64,
    status: StatusCode,
    errors: Value,
) -> Response {
    match call(web, person, "get_subscription", json!({"id": id}), Mode::Apply).await {
        Ok(detail) => {
            let prices: Vec<Bar> = detail["price_history"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|point| Bar {
                    label: point["effective_on"].as_str().unwrap_or_default().to_owned(),
                    value: point["price"]["amount"]
                        .as_str()
                        .and_then(|a| a.parse().ok())
                        .unwrap_or(0.0),
                    shown: point["price"]["display"].as_str().unwrap_or_default().to_owned(),
                })
                .collect();
            let price_chart = chart::bars("Price since each date", &prices);
            let cycles: Vec<Value> = CYCLES
                .iter()
                .map(|(value, label)| json!({"value": value, "label": label}))
                .collect();
            let mut response = live_page(
                web,
                headers,
                person,
                "subscription.html",
                json!({"nav": "subscriptions", "s": detail, "errors": errors, "cycles": cycles, "price_chart": price_chart}),
            )
            .await;
            if response.status() == StatusCode::OK {
                *response.status_mut() = status;
            }
            response
        }
        Err(err) => op_error(web, headers, person, &err),
    }
}

/// The create form, with `values` to refill it and `error` after a refusal.
async fn form_page(
    web: &Web,
    headers: &HeaderMap,
    person: &ops::accounts::SessionCaller,
    status: StatusCode,
    values: Value,
    error: Option<String>,
) -> Response {
    let (categories, methods) = tokio::join!(
        call(web, person, "list_categories", json!({}), Mode::Apply),
        call(web, person, "list_payment_methods", json!({}), Mode::Apply),
    );
    let (categories, methods) = match (categories, methods) {
        (Ok(c), Ok(m)) => (c, m),
        (Err(err), _) | (_, Err(err)) => return op_error(web, headers, person, &err),
    };
    let cycles: Vec<Value> =
        CYCLES.iter().map(|(value, label)| json!({"value": value, "label": label})).collect();
    let mut data = json!({
        "nav": "subscriptions",
        "values": values,
        "error": error,
        "categories": categories["items"],
        "payment_methods": methods["items"],
        "cycles": cycles,
    });
    page_with_status(web, headers, Some(person), status, "subscription_form.html", &mut data)
}

pub(crate) async fn new_form(State(web): State<Web>, headers: HeaderMap) -> Response {
    let person = match session::person(&web, &headers, "/subscriptions/new").await {
        Ok(person) => person,
        Err(to_sign_in) => return to_sign_in,
    };
    form_page(&web, &headers, &person, StatusCode::OK, json!({"cycle": "monthly"}), None).await
}

#[derive(Deserialize, serde::Serialize)]
pub(crate) struct SubscriptionForm {
    #[serde(default, skip_serializing)]
    csrf: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    amount: String,
    #[serde(default)]
    currency: String,
    #[serde(default)]
    cycle: String,
    #[serde(default)]
    every: String,
    #[serde(default)]
    unit: String,
    #[serde(default)]
    next_charge_on: String,
    #[serde(default)]
    category_id: String,
    #[serde(default)]
    payment_method_id: String,
    #[serde(default)]
    tags: String,
    #[serde(default)]
    url: String,
    #[serde(default)]
    notes: String,
}

impl SubscriptionForm {
    /// The op input: empty fields are left out, so the op's defaults and messages apply.
    fn input(&self) -> Value {
        let mut input = Map::new();
        let mut text = |key: &str, value: &str| {
            if !value.trim().is_empty() {
                input.insert(key.into(), json!(value.trim()));
            }
        };
        text("currency", &self.currency);
        text("next_charge_on", &self.next_charge_on);
        text("url", &self.url);
        text("notes", &self.notes);
        input.insert("name".into(), json!(self.name.trim()));
        input.insert("amount".into(), json!(self.amount.trim()));
        let cycle = if self.cycle == "custom" {
            json!({"every": self.every.trim().parse::<i64>().unwrap_or(0), "unit": self.unit})
        } else {
            json!(self.cycle)
        };
        input.insert("cycle".into(), cycle);
        for (key, value) in
            [("category_id", &self.category_id), ("payment_method_id", &self.payment_method_id)]
        {
            if let Ok(id) = value.parse::<i64>() {
                input.insert(key.into(), json!(id));
            }
        }
        let tags: Vec<&str> =
            self.tags.split(',').map(str::trim).filter(|tag| !tag.is_empty()).collect();
        if !tags.is_empty() {
            input.insert("tags".into(), json!(tags));
        }
        Value::Object(input)
    }
}

pub(crate) async fn create(
    State(web): State<Web>,
    headers: HeaderMap,
    Form(form): Form<SubscriptionForm>,
) -> Response {
    let person = match session::checked(&web, &headers, "/subscriptions/new", &form.csrf).await {
        Ok(person) => person,
        Err(refused) => return refused,
    };
    match call(&web, &person, "create_subscription", form.input(), Mode::Apply).await {
        Ok(created) => {
            let id = created["id"].as_i64().unwrap_or_default();
            redirect_with_notice(
                &web,
                &format!("/subscriptions/{id}"),
                &format!("Added {}.", form.name.trim()),
            )
        }
        Err(err @ ops::OpError::InvalidInput { .. }) => {
            let values = serde_json::to_value(&form).unwrap_or_default();
            form_page(
                &web,
                &headers,
                &person,
                StatusCode::UNPROCESSABLE_ENTITY,
                values,
                Some(err.text().render()),
            )
            .await
        }
        Err(err) => op_error(&web, &headers, &person, &err),
    }
}

pub(crate) async fn confirm_delete(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(id): Path<i64>,
) -> Response {
    let person = match session::person(&web, &headers, &format!("/subscriptions/{id}/delete")).await
    {
        Ok(person) => person,
        Err(to_sign_in) => return to_sign_in,
    };
    let confirm = Confirm {
        nav: "subscriptions",
        title: "Delete {name}?",
        explanation: "The subscription, its price history and its charges are removed. You can undo this from Activity.",
        action: format!("/subscriptions/{id}/delete"),
        confirm_label: "Delete",
        cancel: format!("/subscriptions/{id}"),
        hidden: json!({}),
    };
    confirm_page(&web, &headers, &person, "delete_subscription", json!({"id": id}), confirm).await
}

pub(crate) async fn delete(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(id): Path<i64>,
    Form(form): Form<session::CsrfForm>,
) -> Response {
    let here = format!("/subscriptions/{id}/delete");
    let person = match session::checked(&web, &headers, &here, &form.csrf).await {
        Ok(person) => person,
        Err(refused) => return refused,
    };
    let notice = "Deleted. Activity has Undo if that was a mistake.";
    apply_and_go(
        &web,
        &headers,
        &person,
        "delete_subscription",
        json!({"id": id}),
        "/subscriptions",
        notice,
    )
    .await
}
