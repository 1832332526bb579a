//! Subscriptions: the list with search, filters and sort; the detail page; creating one; and
//! deleting one through a confirmation page built from the dry run.

use axum::{
    extract::{Path, Query, State},
    http::{HeaderMap, StatusCode},
    response::Response,
};
use ops::{
    OpError, Text,
    accounts::SessionCaller,
    common::IdInput,
    entities::SubscriptionStatus,
    household::Empty,
    organise::{ListCategories, ListPaymentMethods},
    subscriptions::{
        CreateSubscription, CreateSubscriptionInput, DeleteSubscription, GetSubscription,
        ListSubscriptions, ListSubscriptionsInput, SubscriptionSort,
    },
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{
    chart::{self, Bar},
    pages::{Confirm, apply_and_go, confirm_page, form, live_page},
    reader::say,
    render::{op_error, page_with_status, redirect_with_notice},
    session::{NoFields, Posted, SignedIn},
    state::Web,
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

/// The cycles for a template's select.
pub(crate) fn cycle_options() -> Vec<Value> {
    CYCLES.iter().map(|(value, label)| json!({"value": value, "label": label})).collect()
}

#[derive(Deserialize, Default)]
pub(crate) struct ListQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    sort: String,
    /// A category id, or "none" for subscriptions without one.
    #[serde(default)]
    category: String,
    #[serde(default)]
    tag: String,
    cursor: Option<String>,
}

impl ListQuery {
    fn input(&self) -> Result<ListSubscriptionsInput, OpError> {
        Ok(ListSubscriptionsInput {
            limit: Some(100),
            text: form::text(&self.q),
            status: form::parsed::<SubscriptionStatus>("/status/0", &self.status)?
                .into_iter()
                .collect(),
            sort: form::parsed::<SubscriptionSort>("/sort", &self.sort)?,
            uncategorised: (self.category == "none").then_some(true),
            // A category that is not a number matches nothing, as an unknown id does.
            category_id: match self.category.as_str() {
                "" | "none" => None,
                id => Some(form::id(id).unwrap_or(ops::resolve::CategoryId(i64::MAX))),
            },
            tag: form::text(&self.tag),
            cursor: self.cursor.clone(),
            ..Default::default()
        })
    }
}

pub(crate) async fn list(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
    Query(query): Query<ListQuery>,
) -> Response {
    let input = match query.input() {
        Ok(input) => input,
        Err(err) => return op_error(&web, &headers, &person, &err),
    };
    let (list, categories) = tokio::join!(
        web.call::<ListSubscriptions>(&person, input),
        web.call::<ListCategories>(&person, Empty {}),
    );
    match list.and_then(|list| Ok((list, categories?))) {
        Ok((list, categories)) => live_page(
            &web,
            &headers,
            &person,
            "subscriptions.html",
            json!({"nav": "subscriptions", "list": list, "categories": categories.items, "q": query.q, "status": query.status, "sort": query.sort, "category": query.category, "tag": query.tag}),
        )
        .await,
        Err(err) => op_error(&web, &headers, &person, &err),
    }
}

pub(crate) async fn detail(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
    Path(id): Path<i64>,
) -> Response {
    detail_page(&web, &headers, &person, id, StatusCode::OK, json!({})).await
}

/// The detail page; `errors` maps a form on it ("pause", "price", …) to what went wrong.
pub(crate) async fn detail_page(
    web: &Web,
    headers: &HeaderMap,
    person: &SessionCaller,
    id: i64,
    status: StatusCode,
    errors: Value,
) -> Response {
    match web.call::<GetSubscription>(person, IdInput { id: id.into() }).await {
        Ok(detail) => {
            let prices: Vec<Bar> = detail
                .price_history
                .iter()
                .map(|point| Bar {
                    label: crate::reader::day(point.effective_on),
                    value: point.price.amount.to_f64(),
                    shown: crate::reader::amount(&point.price),
                })
                .collect();
            let price_chart = chart::bars(&say(&Text::new("Price since each date")), &prices);
            let mut response = live_page(
                web,
                headers,
                person,
                "subscription.html",
                json!({"nav": "subscriptions", "s": detail, "errors": errors, "cycles": cycle_options(), "price_chart": price_chart}),
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
    person: &SessionCaller,
    status: StatusCode,
    values: Value,
    error: Option<String>,
) -> Response {
    let (categories, methods) = tokio::join!(
        web.call::<ListCategories>(person, Empty {}),
        web.call::<ListPaymentMethods>(person, Empty {}),
    );
    let (categories, methods) = match (categories, methods) {
        (Ok(c), Ok(m)) => (c, m),
        (Err(err), _) | (_, Err(err)) => return op_error(web, headers, person, &err),
    };
    let mut data = json!({
        "nav": "subscriptions",
        "values": values,
        "error": error,
        "categories": categories.items,
        "payment_methods": methods.items,
        "cycles": cycle_options(),
    });
    page_with_status(web, headers, Some(person), status, "subscription_form.html", &mut data)
}

pub(crate) async fn new_form(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
) -> Response {
    form_page(&web, &headers, &person, StatusCode::OK, json!({"cycle": "monthly"}), None).await
}

/// The create form as typed, to refill it after a refusal.
#[derive(Default, Deserialize, Serialize)]
#[serde(default)]
pub(crate) struct SubscriptionForm {
    name: String,
    amount: String,
    currency: String,
    cycle: String,
    every: String,
    unit: String,
    next_charge_on: String,
    category_id: String,
    payment_method_id: String,
    tags: String,
    url: String,
    notes: String,
}

impl SubscriptionForm {
    /// The op input: empty fields are left out, so the op's defaults and messages apply.
    fn input(&self) -> Result<CreateSubscriptionInput, OpError> {
        let cycle = form::cycle(&self.cycle, &self.every, &self.unit)?.ok_or_else(|| {
            OpError::invalid("/cycle", Text::new("Choose how often it is charged."))
        })?;
        Ok(CreateSubscriptionInput {
            name: self.name.trim().to_owned(),
            amount: form::amount("/amount", &self.amount)?,
            currency: form::parsed("/currency", &self.currency)?,
            cycle,
            next_charge_on: form::parsed("/next_charge_on", &self.next_charge_on)?,
            trial_ends_on: None,
            ends_on: None,
            url: form::text(&self.url),
            notes: form::text(&self.notes),
            category_id: form::id(&self.category_id),
            payment_method_id: form::id(&self.payment_method_id),
            tags: form::tags(&self.tags),
            owner_id: None,
            visibility: None,
        })
    }
}

pub(crate) async fn create(
    State(web): State<Web>,
    headers: HeaderMap,
    Posted { person, form }: Posted<SubscriptionForm>,
) -> Response {
    let created = match form.input() {
        Ok(input) => web.call::<CreateSubscription>(&person, input).await,
        Err(err) => Err(err),
    };
    match created {
        Ok(created) => redirect_with_notice(
            &web,
            &format!("/subscriptions/{}", created.id),
            &Text::new("Added {name}.").with("name", &created.name),
        ),
        Err(err @ OpError::InvalidInput { .. }) => {
            let values = serde_json::to_value(&form).unwrap_or_default();
            form_page(
                &web,
                &headers,
                &person,
                StatusCode::UNPROCESSABLE_ENTITY,
                values,
                Some(crate::reader::say(&err.text())),
            )
            .await
        }
        Err(err) => op_error(&web, &headers, &person, &err),
    }
}

pub(crate) async fn confirm_delete(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
    Path(id): Path<i64>,
) -> Response {
    confirm_page::<DeleteSubscription>(&web, &headers, &person, IdInput { id: id.into() }, |removed| Confirm {
        nav: "subscriptions",
        title: Text::new("Delete {name}?").with("name", &removed.name),
        explanation: Text::new(
            "The subscription, its price history and its charges are removed. You can undo this from Activity.",
        ),
        action: format!("/subscriptions/{id}/delete"),
        confirm_label: Text::new("Delete"),
        cancel: format!("/subscriptions/{id}"),
        hidden: Vec::new(),
    })
    .await
}

pub(crate) async fn delete(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(id): Path<i64>,
    Posted { person, .. }: Posted<NoFields>,
) -> Response {
    let notice = Text::new("Deleted. Activity has Undo if that was a mistake.");
    apply_and_go::<DeleteSubscription>(
        &web,
        &headers,
        &person,
        IdInput { id: id.into() },
        "/subscriptions",
        notice,
    )
    .await
}
