//! `exhale demo`: a household with realistic subscriptions and a year of charges, created
//! through the catalog like any other client, so a newcomer sees a living app at once.

use std::sync::Arc;

use anyhow::anyhow;
use ops::{Caller, Catalog as _, Mode};
use serde_json::{Value, json};

async fn call(app: &app::App, caller: &Caller, op: &str, input: Value) -> anyhow::Result<Value> {
    app.call_json(caller, op, input, Mode::Apply)
        .await
        .map_err(|err| anyhow!("{op}: {}", err.text().render()))
}

fn id_of(value: &Value) -> anyhow::Result<i64> {
    value.get("id").and_then(Value::as_i64).ok_or_else(|| anyhow!("no id in {value}"))
}

/// Name, amount, currency, cycle, how many months ago the first charge fell, category, tags.
type DemoSubscription = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    i64,
    &'static str,
    &'static [&'static str],
);

const SUBSCRIPTIONS: &[DemoSubscription] = &[
    ("Netflix", "13.99", "EUR", "monthly", 14, "Streaming", &["family"]),
    ("Spotify Family", "17.99", "EUR", "monthly", 20, "Music", &["family"]),
    ("Disney+", "8.99", "EUR", "monthly", 7, "Streaming", &["kids"]),
    ("iCloud+ 200 GB", "2.99", "EUR", "monthly", 30, "Cloud & storage", &[]),
    ("Mobile phone", "25.00", "EUR", "monthly", 26, "Phone & internet", &[]),
    ("Fibre internet", "39.90", "EUR", "monthly", 40, "Phone & internet", &["home"]),
    ("Gym membership", "34.50", "EUR", "monthly", 9, "Fitness & health", &[]),
    ("Home insurance", "216.00", "EUR", "yearly", 18, "Insurance", &["home"]),
    ("Car insurance", "98.40", "EUR", "quarterly", 15, "Insurance", &[]),
    ("Domain example.org", "14.00", "USD", "yearly", 23, "Software", &["work"]),
    ("GitHub Copilot", "10.00", "USD", "monthly", 11, "Software", &["work"]),
    ("The Guardian", "11.00", "EUR", "monthly", 5, "News & magazines", &[]),
    ("Duolingo", "83.99", "EUR", "yearly", 10, "Education", &["kids"]),
    ("Meal kit", "59.00", "EUR", "every_two_weeks", 4, "Shopping & memberships", &[]),
];

pub(crate) async fn create(app: &Arc<app::App>, email: &str) -> anyhow::Result<()> {
    let mut secret = [0u8; 9];
    getrandom::fill(&mut secret).map_err(|err| anyhow!("no randomness: {err}"))?;
    let password: String = secret.iter().map(|b| format!("{b:02x}")).collect();
    let owner = app
        .create_household(app::NewHousehold {
            household_name: "Demo household".into(),
            currency: "EUR".into(),
            time_zone: "Europe/Madrid".into(),
            language: "en".into(),
            owner_name: "Alex".into(),
            email: email.into(),
            password: password.clone(),
        })
        .await
        .map_err(|err| anyhow!("{}", err.text().render()))?;
    let household = call(app, &owner, "get_household", json!({})).await?;
    let today: jiff::civil::Date = household["today"].as_str().unwrap_or("2026-01-01").parse()?;
    let categories = call(app, &owner, "list_categories", json!({})).await?;
    let category_id = |name: &str| {
        categories["items"]
            .as_array()
            .and_then(|items| items.iter().find(|c| c["name"] == name))
            .and_then(|c| c["id"].as_i64())
    };
    let card = id_of(&call(app, &owner, "create_payment_method", json!({"name": "Visa", "kind": "card", "last4": "4242", "expires": today.checked_add(jiff::Span::new().months(1))?.strftime("%Y-%m").to_string()})).await?)?;
    let bank = id_of(
        &call(
            app,
            &owner,
            "create_payment_method",
            json!({"name": "Joint account", "kind": "bank_account"}),
        )
        .await?,
    )?;
    call(app, &owner, "update_settings", json!({"exchange_rates": {"USD": "0.92"}})).await?;
    let mut ids = Vec::new();
    for (i, (name, amount, currency, cycle, months_ago, category, tags)) in
        SUBSCRIPTIONS.iter().enumerate()
    {
        let first = today.checked_sub(jiff::Span::new().months(*months_ago).days(i as i64 % 9))?;
        let created = call(
            app,
            &owner,
            "create_subscription",
            json!({
                "name": name, "amount": amount, "currency": currency, "cycle": cycle,
                "next_charge_on": first.to_string(), "category_id": category_id(category),
                "payment_method_id": if i % 3 == 0 { bank } else { card }, "tags": tags,
            }),
        )
        .await?;
        ids.push(id_of(&created)?);
    }
    // A price rise, a pause, a cancellation and a free trial, so every screen has something.
    let rise = today.checked_sub(jiff::Span::new().days(12))?;
    call(
        app,
        &owner,
        "change_price",
        json!({"id": ids[0], "amount": "15.99", "effective_on": rise.to_string()}),
    )
    .await?;
    call(
        app,
        &owner,
        "pause_subscription",
        json!({"id": ids[6], "from": today.checked_sub(jiff::Span::new().months(1))?.to_string()}),
    )
    .await?;
    call(app, &owner, "cancel_subscription", json!({"id": ids[11], "ends_on": today.checked_sub(jiff::Span::new().days(20))?.to_string()})).await?;
    call(
        app,
        &owner,
        "create_subscription",
        json!({"name": "Photo editor Pro", "amount": "7.99", "cycle": "monthly", "trial_ends_on": today.checked_add(jiff::Span::new().days(5))?.to_string(), "category_id": category_id("Software")}),
    )
    .await?;
    let charges = call(app, &owner, "list_charges", json!({"limit": 1})).await?;
    println!(
        "Created the demo household: {} subscriptions, {} recorded charges.",
        ids.len() + 1,
        charges["total"]
    );
    println!("Owner: {email}");
    println!("Password (shown once): {password}");
    Ok(())
}
