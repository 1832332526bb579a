//! Resources: the live briefing (`exhale://context`) and one resource per entity, read through
//! the same catalog ops as the tools.

use ops::{
    Caller, Catalog, Mode, OpError, Text,
    charges::GetCharge,
    common::{IdInput, RecordId},
    household::Empty,
    organise::{ListCategories, ListPaymentMethods},
    reports::GetContext,
    resolve::SubscriptionId,
    subscriptions::{GetSubscription, ListSubscriptions, ListSubscriptionsInput},
};
use rmcp::{
    ErrorData as McpError,
    model::{Resource, ResourceContents, ResourceTemplate},
};
use serde_json::{Value, json};

pub(crate) const CONTEXT: &str = "exhale://context";

/// The entity templates; `{id}` is the entity's id from the list ops.
pub(crate) fn templates() -> Vec<ResourceTemplate> {
    [
        (
            "exhale://subscriptions/{id}",
            "subscription",
            "A subscription with its price history, recent charges and next charges",
        ),
        ("exhale://charges/{id}", "charge", "A recorded charge"),
        (
            "exhale://categories/{id}",
            "category",
            "A category with how many subscriptions are in it",
        ),
        (
            "exhale://payment-methods/{id}",
            "payment_method",
            "A payment method (never a full card number)",
        ),
    ]
    .into_iter()
    .map(|(uri, name, description)| {
        ResourceTemplate::new(uri, name)
            .with_description(description)
            .with_mime_type("application/json")
    })
    .collect()
}

/// The briefing and one resource per subscription the caller can see, a page at a time.
pub(crate) async fn list(
    catalog: &dyn Catalog,
    caller: &Caller,
    cursor: Option<String>,
) -> Result<(Vec<Resource>, Option<String>), OpError> {
    let mut resources = Vec::new();
    if cursor.is_none() {
        resources.push(
            Resource::new(CONTEXT, "context")
                .with_title("Household briefing")
                .with_description("Read first: household, today, members, subscriptions, upcoming charges, attention items and how Exhale works")
                .with_mime_type("text/markdown"),
        );
    }
    let input = ListSubscriptionsInput { limit: Some(100), cursor, ..Default::default() };
    let page = ops::call::<ListSubscriptions>(catalog, caller, &input, Mode::Apply).await?;
    for item in &page.items {
        let id = item.id;
        resources.push(
            Resource::new(format!("exhale://subscriptions/{id}"), format!("subscription {id}"))
                .with_title(&item.name)
                .with_mime_type("application/json"),
        );
    }
    Ok((resources, page.next_cursor))
}

fn not_found(uri: &str) -> McpError {
    McpError::resource_not_found(
        Text::new(
            "No resource {uri}. resources/list and resources/templates/list show what exists.",
        )
        .with("uri", uri)
        .render(),
        Some(json!({"uri": uri})),
    )
}

/// Reads one resource as the caller.
pub(crate) async fn read(
    catalog: &dyn Catalog,
    caller: &Caller,
    uri: &str,
) -> Result<ResourceContents, McpError> {
    if crate::apps::is_view(uri) {
        let language = crate::apps::reader(catalog, caller).await;
        return crate::apps::read(uri, language).ok_or_else(|| not_found(uri));
    }
    if uri == CONTEXT {
        let context = ops::call::<GetContext>(catalog, caller, &Empty {}, Mode::Apply)
            .await
            .map_err(|err| op_error(uri, &err))?;
        return Ok(ResourceContents::text(context.markdown, uri).with_mime_type("text/markdown"));
    }
    let (kind, id) = uri
        .strip_prefix("exhale://")
        .and_then(|rest| rest.split_once('/'))
        .and_then(|(kind, id)| Some((kind, id.parse::<i64>().ok()?)))
        .ok_or_else(|| not_found(uri))?;
    let value = match kind {
        "subscriptions" => {
            let input = IdInput { id: SubscriptionId(id) };
            ops::call_value::<GetSubscription>(catalog, caller, &input, Mode::Apply).await
        }
        "charges" => {
            let id = RecordId::new(id).ok_or_else(|| not_found(uri))?;
            ops::call_value::<GetCharge>(catalog, caller, &IdInput { id }, Mode::Apply).await
        }
        "categories" => {
            let list = ops::call::<ListCategories>(catalog, caller, &Empty {}, Mode::Apply).await;
            list.and_then(|list| found(list.items.into_iter().find(|item| item.id == id)))
        }
        "payment-methods" => {
            let list =
                ops::call::<ListPaymentMethods>(catalog, caller, &Empty {}, Mode::Apply).await;
            list.and_then(|list| found(list.items.into_iter().find(|item| item.id == id)))
        }
        _ => return Err(not_found(uri)),
    }
    .map_err(|err| op_error(uri, &err))?;
    let text = serde_json::to_string_pretty(&value)
        .map_err(|_| McpError::internal_error("could not write the resource", None))?;
    Ok(ResourceContents::text(text, uri).with_mime_type("application/json"))
}

/// An item of a list as JSON, or not found.
fn found<T: serde::Serialize>(item: Option<T>) -> Result<Value, OpError> {
    let item = item.ok_or_else(|| OpError::not_found(Text::new("Not found.")))?;
    serde_json::to_value(item).map_err(|_| OpError::Internal)
}

fn op_error(uri: &str, err: &OpError) -> McpError {
    match err {
        OpError::NotFound { .. } => not_found(uri),
        OpError::Internal => crate::results::internal(),
        other => crate::results::protocol_error(other),
    }
}
