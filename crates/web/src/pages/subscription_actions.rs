//! Changing one subscription from its pages: edit its details, and the small forms of the
//! detail page (pause, resume, cancel, change the price, reschedule) and of its charges.
//! Each form maps to one op; a refusal shows the detail page again with the op's message at
//! the form.

use axum::{
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
    response::Response,
};
use ops::{
    Mode, OpError, Text,
    accounts::SessionCaller,
    charges::{UpdateCharge, UpdateChargeInput},
    common::{IdInput, Patch, RecordId},
    entities::{ChargeStatus, Visibility},
    household::Empty,
    organise::{ListCategories, ListPaymentMethods},
    resolve::SubscriptionId,
    subscriptions::*,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{
    pages::{Confirm, asks_first, confirmation, confirmed, form, subscriptions::detail_page},
    render::{op_error, page_with_status, redirect_with_notice},
    session::{Posted, SignedIn},
    state::Web,
};

/// The fields of the detail page's small forms; each form sends the ones it has.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(crate) struct ActionForm {
    from: String,
    until: String,
    on: String,
    ends_on: String,
    amount: String,
    effective_on: String,
    next_charge_on: String,
    cycle: String,
    every: String,
    unit: String,
}

/// Applies the detail page's form `action` (pause, resume, cancel, price, schedule) and says
/// what to show afterwards; `None` for a form that does not exist.
async fn apply_action(
    web: &Web,
    person: &SessionCaller,
    id: i64,
    action: &str,
    f: &ActionForm,
) -> Result<Option<Text>, OpError> {
    let id = SubscriptionId(id);
    let done = match action {
        "pause" => {
            let from = form::parsed("/from", &f.from)?;
            let until = form::parsed("/until", &f.until)?;
            web.call::<PauseSubscription>(person, PauseSubscriptionInput { id, from, until })
                .await?;
            Text::new("Paused.")
        }
        "resume" => {
            let on = form::parsed("/on", &f.on)?;
            web.call::<ResumeSubscription>(person, ResumeSubscriptionInput { id, on }).await?;
            Text::new("Resumed.")
        }
        "cancel" => {
            let ends_on = form::parsed("/ends_on", &f.ends_on)?;
            web.call::<CancelSubscription>(person, CancelSubscriptionInput { id, ends_on }).await?;
            Text::new("Cancelled. Activity has Undo if that was a mistake.")
        }
        "price" => {
            let effective_on = form::parsed("/effective_on", &f.effective_on)?;
            let amount = form::amount("/amount", &f.amount)?;
            let input = ChangePriceInput { id, amount, currency: None, effective_on };
            web.call::<ChangePrice>(person, input).await?;
            Text::new("Changed the price.")
        }
        "schedule" => {
            let input = RescheduleSubscriptionInput {
                id,
                cycle: form::cycle(&f.cycle, &f.every, &f.unit)?,
                next_charge_on: form::parsed("/next_charge_on", &f.next_charge_on)?,
                ..Default::default()
            };
            web.call::<RescheduleSubscription>(person, input).await?;
            Text::new("Changed the schedule.")
        }
        _ => return Ok(None),
    };
    Ok(Some(done))
}

pub(crate) async fn act(
    State(web): State<Web>,
    headers: HeaderMap,
    Path((id, action)): Path<(i64, String)>,
    Posted { person, form }: Posted<ActionForm>,
) -> Response {
    match apply_action(&web, &person, id, &action, &form).await {
        Ok(None) => {
            web.templates.refusal(StatusCode::NOT_FOUND, &Text::new("There is no such action."))
        }
        Ok(Some(done)) => redirect_with_notice(&web, &format!("/subscriptions/{id}"), &done),
        Err(err @ (OpError::InvalidInput { .. } | OpError::Conflict { .. })) => {
            let errors = json!({action: crate::reader::say(&err.text())});
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
        web.call::<GetSubscription>(person, IdInput { id: id.into() }),
        web.call::<ListCategories>(person, Empty {}),
        web.call::<ListPaymentMethods>(person, Empty {}),
    );
    let (detail, categories, methods) = match (detail, categories, methods) {
        (Ok(d), Ok(c), Ok(m)) => (d, c, m),
        (Err(err), ..) | (_, Err(err), _) | (.., Err(err)) => {
            return op_error(web, headers, person, &err);
        }
    };
    let values = values.unwrap_or_else(|| {
        let s = &detail.subscription;
        json!(EditForm {
            name: s.name.clone(),
            url: s.url.clone().unwrap_or_default(),
            notes: s.notes.clone().unwrap_or_default(),
            category_id: s.category.as_ref().map(|c| c.id.to_string()).unwrap_or_default(),
            payment_method_id: s
                .payment_method
                .as_ref()
                .map(|m| m.id.to_string())
                .unwrap_or_default(),
            tags: s.tags.join(", "),
            visibility: s.visibility.to_string(),
        })
    });
    let mut data = json!({
        "nav": "subscriptions",
        "s": detail,
        "values": values,
        "error": error,
        "categories": categories.items,
        "payment_methods": methods.items,
    });
    page_with_status(web, headers, Some(person), status, "subscription_edit.html", &mut data)
}

pub(crate) async fn edit_form(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
    Path(id): Path<i64>,
) -> Response {
    edit_page(&web, &headers, &person, id, StatusCode::OK, None, None).await
}

/// The edit form as typed, to refill it after a refusal.
#[derive(Default, Deserialize, Serialize)]
#[serde(default)]
pub(crate) struct EditForm {
    name: String,
    url: String,
    notes: String,
    category_id: String,
    payment_method_id: String,
    tags: String,
    visibility: String,
}

impl EditForm {
    /// Every field is sent: an emptied field clears it, as the person sees it.
    fn input(&self, id: i64) -> Result<UpdateSubscriptionInput, OpError> {
        let patch = |value: Option<String>| value.map_or(Patch::Clear, Patch::Set);
        Ok(UpdateSubscriptionInput {
            id: id.into(),
            name: Some(self.name.trim().to_owned()),
            url: patch(form::text(&self.url)),
            notes: patch(form::text(&self.notes)),
            category_id: form::id(&self.category_id).map_or(Patch::Clear, Patch::Set),
            payment_method_id: form::id(&self.payment_method_id).map_or(Patch::Clear, Patch::Set),
            tags: Some(form::tags(&self.tags)),
            owner_id: None,
            visibility: form::parsed::<Visibility>("/visibility", &self.visibility)?,
        })
    }
}

pub(crate) async fn edit(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(id): Path<i64>,
    Posted { person, form }: Posted<EditForm>,
) -> Response {
    let result = match form.input(id) {
        Ok(input) => web.call::<UpdateSubscription>(&person, input).await,
        Err(err) => Err(err),
    };
    match result {
        Ok(_) => redirect_with_notice(&web, &format!("/subscriptions/{id}"), &Text::new("Saved.")),
        Err(err @ OpError::InvalidInput { .. }) => {
            let values = serde_json::to_value(&form).ok();
            edit_page(
                &web,
                &headers,
                &person,
                id,
                StatusCode::UNPROCESSABLE_ENTITY,
                values,
                Some(crate::reader::say(&err.text())),
            )
            .await
        }
        Err(err) => op_error(&web, &headers, &person, &err),
    }
}

#[derive(Deserialize)]
pub(crate) struct ChargeForm {
    subscription_id: i64,
    status: String,
}

pub(crate) async fn charge(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(id): Path<RecordId>,
    Posted { person, form }: Posted<ChargeForm>,
) -> Response {
    let back = format!("/subscriptions/{}", form.subscription_id);
    let result = match form::required::<ChargeStatus>("/status", &form.status) {
        Ok(status) => {
            let status = Some(status);
            let input = UpdateChargeInput { id, status, amount: None, note: Patch::Keep };
            web.call::<UpdateCharge>(&person, input).await.map(|_| ())
        }
        Err(err) => Err(err),
    };
    match result {
        Ok(()) => redirect_with_notice(&web, &back, &Text::new("Saved the charge.")),
        Err(err @ OpError::InvalidInput { .. }) => {
            let errors = json!({"charges": crate::reader::say(&err.text())});
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
/// A destructive action (deleting) asks first, through a confirmation page built from the dry
/// run.
pub(crate) async fn bulk(
    State(web): State<Web>,
    headers: HeaderMap,
    Posted { person, form: pairs }: Posted<Vec<(String, String)>>,
) -> Response {
    let value = |key: &str| {
        pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str()).unwrap_or_default()
    };
    let ids: Vec<i64> =
        pairs.iter().filter(|(k, _)| k == "ids").filter_map(|(_, v)| v.parse().ok()).collect();
    if ids.is_empty() {
        return redirect_with_notice(
            &web,
            "/subscriptions",
            &Text::new("Tick the subscriptions to change first."),
        );
    }
    // "categorise" is an update that sets only the category (none clears it).
    let (action, category_id) = match value("action") {
        "categorise" => (
            Ok(Some(BulkAction::Update)),
            form::id(value("category_id")).map_or(Patch::Clear, Patch::Set),
        ),
        action => (form::parsed::<BulkAction>("/action", action), Patch::Keep),
    };
    let action = match action {
        Ok(Some(action)) => action,
        Ok(None) => {
            let notice = Text::new("Choose what to do with the ticked subscriptions.");
            return redirect_with_notice(&web, "/subscriptions", &notice);
        }
        Err(err) => return redirect_with_notice(&web, "/subscriptions", &err.text()),
    };
    let input = BulkUpdateInput {
        ids: ids.iter().copied().map(SubscriptionId).collect(),
        action,
        category_id,
        payment_method_id: Patch::Keep,
        tags: None,
    };
    if asks_first::<BulkUpdateSubscriptions>(&input, value("confirmed") == "yes") {
        return match web.write::<BulkUpdateSubscriptions>(&person, input, Mode::DryRun).await {
            Ok(preview) => {
                let confirm = Confirm {
                    nav: "subscriptions",
                    title: Text::new("Delete {count} subscriptions?").with("count", ids.len()),
                    explanation: Text::new(
                        "They are removed with their price history and charges. You can undo this from Activity, all at once.",
                    ),
                    action: "/subscriptions/bulk".into(),
                    confirm_label: Text::new("Delete them"),
                    cancel: "/subscriptions".into(),
                    hidden: confirmed(pairs.iter().cloned()),
                };
                confirmation(&web, &headers, &person, confirm, &preview.receipt.changes)
            }
            Err(err) => op_error(&web, &headers, &person, &err),
        };
    }
    match web.call::<BulkUpdateSubscriptions>(&person, input).await {
        Ok(result) => {
            let changed = result.items.iter().filter(|item| item.changed).count();
            let notice =
                Text::new("Changed {changed} of {count}. Activity has Undo for the whole batch.")
                    .with("changed", changed)
                    .with("count", ids.len());
            redirect_with_notice(&web, "/subscriptions", &notice)
        }
        Err(err @ (OpError::InvalidInput { .. } | OpError::Conflict { .. })) => {
            redirect_with_notice(&web, "/subscriptions", &err.text())
        }
        Err(err) => op_error(&web, &headers, &person, &err),
    }
}
