//! `show_screen`: the one tool that is not a catalog op. The model picks a kind (some
//! subscriptions, charges over a period, the totals) and the records; Exhale reads every name,
//! date and amount through the catalog as the person asking and draws it, so nothing the model
//! writes reaches a screen. Every bad call is explained to the model in one line.

use ops::limits::assistant as limits;
use ops::{
    Caller, Catalog, Mode, Op as _, OpError,
    assistant::Screen,
    charges::{ListCharges, ListChargesInput},
    reports::{GetSpendingSummary, SpendingSummaryInput},
    resolve::{IsoDate, SubscriptionId},
    subscriptions::{GetSubscription, ListSubscriptions, ListSubscriptionsInput},
};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::llm::ToolDef;

pub(crate) const NAME: &str = "show_screen";

/// The tool's definition: a fixed schema, as compact as the catalog's.
pub(crate) fn definition() -> ToolDef {
    ToolDef {
        name: NAME.to_owned(),
        description: format!(
            "Show the person a screen Exhale draws from its data: subscriptions (ids), charges (from, to, optional ids) or the total. At most {} per answer.",
            limits::SCREENS
        ),
        parameters: json!({
            "type": "object",
            "properties": {
                "kind": {"enum": ["subscriptions", "charges", "total"]},
                "subscription_ids": {
                    "type": "array",
                    "items": {"type": ["integer", "string"]},
                    "maxItems": limits::SCREEN_SUBSCRIPTIONS,
                    "description": "Ids or names."
                },
                "from": {"type": "string", "format": "date"},
                "to": {"type": "string", "format": "date"}
            },
            "required": ["kind"],
            "additionalProperties": false
        }),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Call {
    kind: String,
    #[serde(default)]
    subscription_ids: Vec<Value>,
    #[serde(default)]
    from: Option<String>,
    #[serde(default)]
    to: Option<String>,
}

/// The screen a call asks for, or the one line that tells the model what to fix.
pub(crate) async fn build(
    catalog: &dyn Catalog,
    assistant: &Caller,
    arguments: Value,
) -> Result<Screen, String> {
    let call: Call = serde_json::from_value(arguments).map_err(|err| {
        format!("invalid_input: {err}. show_screen takes kind, subscription_ids, from and to.")
    })?;
    let ids = subscription_ids(catalog, assistant, &call.subscription_ids).await?;
    match call.kind.as_str() {
        "subscriptions" => subscriptions(catalog, assistant, &ids).await,
        "charges" => charges(catalog, assistant, &ids, call.from, call.to).await,
        "total" => {
            let summary = ops::call::<GetSpendingSummary>(
                catalog,
                assistant,
                &SpendingSummaryInput::default(),
                Mode::Apply,
            )
            .await
            .map_err(|err| refused(&err))?;
            Ok(Screen::Total { summary: Box::new(summary) })
        }
        other => {
            Err(format!("invalid_input: kind {other} is not one of subscriptions, charges, total."))
        }
    }
}

fn refused(err: &OpError) -> String {
    format!("{}: {}", err.code(), err.text().render())
}

/// The ids of the subscriptions named, each one the person can see, none twice.
async fn subscription_ids(
    catalog: &dyn Catalog,
    assistant: &Caller,
    given: &[Value],
) -> Result<Vec<i64>, String> {
    if given.len() > limits::SCREEN_SUBSCRIPTIONS {
        return Err(format!(
            "invalid_input: at most {} subscriptions on one screen.",
            limits::SCREEN_SUBSCRIPTIONS
        ));
    }
    let mut ids = Vec::with_capacity(given.len());
    for value in given {
        // Read by the catalog, which takes a name as well as an id.
        let found = catalog
            .call_json(assistant, GetSubscription::INFO.name, json!({"id": value}), Mode::Apply)
            .await
            .map_err(|err| refused(&err))?;
        let id = found.get("id").and_then(Value::as_i64).ok_or("internal: no id")?;
        if ids.contains(&id) {
            return Err(format!("invalid_input: subscription {id} is listed twice."));
        }
        ids.push(id);
    }
    Ok(ids)
}

async fn subscriptions(
    catalog: &dyn Catalog,
    assistant: &Caller,
    ids: &[i64],
) -> Result<Screen, String> {
    if ids.is_empty() {
        return Err("invalid_input: a subscriptions screen needs subscription_ids.".into());
    }
    let input = ListSubscriptionsInput { limit: Some(ops::common::MAX_PAGE), ..Default::default() };
    let mut listed: Vec<_> = Vec::new();
    let mut page = ops::call::<ListSubscriptions>(catalog, assistant, &input, Mode::Apply)
        .await
        .map_err(|err| refused(&err))?;
    loop {
        listed.extend(page.items.drain(..).filter(|row| ids.contains(&row.id)));
        let Some(cursor) = page.next_cursor.take() else { break };
        let next = ListSubscriptionsInput { cursor: Some(cursor), ..input.clone() };
        page = ops::call::<ListSubscriptions>(catalog, assistant, &next, Mode::Apply)
            .await
            .map_err(|err| refused(&err))?;
    }
    let items =
        ids.iter().filter_map(|id| listed.iter().find(|row| row.id == *id).cloned()).collect();
    Ok(Screen::Subscriptions { items })
}

fn date(field: &str, text: Option<String>) -> Result<IsoDate, String> {
    let text = text.ok_or_else(|| {
        format!("invalid_input: a charges screen needs {field}, a date such as 2026-01-31.")
    })?;
    text.parse()
        .map_err(|_| format!("invalid_input: {field} {text} is not a date such as 2026-01-31."))
}

async fn charges(
    catalog: &dyn Catalog,
    assistant: &Caller,
    ids: &[i64],
    from: Option<String>,
    to: Option<String>,
) -> Result<Screen, String> {
    let (from, to) = (date("from", from)?, date("to", to)?);
    let days = from.date().until(to.date()).map(|span| span.get_days()).unwrap_or(i32::MAX);
    if days < 0 {
        return Err("invalid_input: from comes after to.".into());
    }
    if days > limits::SCREEN_DAYS {
        return Err(format!(
            "invalid_input: a charges screen covers at most {} days; show a shorter period.",
            limits::SCREEN_DAYS
        ));
    }
    let limit = u32::try_from(limits::SCREEN_CHARGES).unwrap_or(50);
    let filters: Vec<Option<SubscriptionId>> = if ids.is_empty() {
        vec![None]
    } else {
        ids.iter().map(|id| Some(SubscriptionId(*id))).collect()
    };
    let mut items = Vec::new();
    for subscription_id in filters {
        let input = ListChargesInput {
            subscription_id,
            from: Some(from),
            to: Some(to),
            limit: Some(limit),
            ..Default::default()
        };
        let page = ops::call::<ListCharges>(catalog, assistant, &input, Mode::Apply)
            .await
            .map_err(|err| refused(&err))?;
        items.extend(page.items);
    }
    items.sort_by(|a, b| b.charged_on.cmp(&a.charged_on).then(b.id.cmp(&a.id)));
    items.truncate(limits::SCREEN_CHARGES);
    Ok(Screen::Charges { from, to, items })
}

/// What a screen shows, for the model: its kind and how many rows.
pub(crate) fn described(screen: &Screen) -> String {
    match screen {
        Screen::Subscriptions { items } => format!("{} subscriptions", items.len()),
        Screen::Charges { from, to, items } => {
            format!("{} charges from {from} to {to}", items.len())
        }
        Screen::Total { summary } => {
            format!(
                "the total, {} a month and {} a year",
                summary.monthly.display, summary.yearly.display
            )
        }
    }
}
