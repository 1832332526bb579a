//! `exhale demo`: a household with realistic subscriptions and a year of charges, and a year
//! of money around them (accounts, transactions that pay those charges, transfers, a refund,
//! income, labels, rules and budgets), created through the catalog like any other client, so
//! a newcomer sees every page living at once.

#![expect(
    clippy::inconsistent_digit_grouping,
    reason = "amounts in cents are written as euros and cents: 2_850_00 is €2,850.00"
)]

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
    let mut paid_from = Vec::new();
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
        paid_from.push(Paid {
            subscription: id_of(&created)?,
            name,
            category,
            from_bank: i % 3 == 0,
        });
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
    let ledger = create_ledger(app, &owner, today, &paid_from).await?;
    let charges = call(app, &owner, "list_charges", json!({"limit": 1})).await?;
    println!(
        "Created the demo household: {} subscriptions, {} recorded charges.",
        ids.len() + 1,
        charges["total"]
    );
    println!(
        "And {} accounts, {} transactions ({} paying a subscription's charge, {} transfers), {} rules and {} budgets.",
        ledger.accounts,
        ledger.transactions,
        ledger.matched,
        ledger.transfers,
        ledger.rules,
        ledger.budgets
    );
    println!("Owner: {email}");
    println!("Password (shown once): {password}");
    Ok(())
}

/// A subscription as the demo's statements pay it: from the joint account or the card, and
/// the category its payments get.
struct Paid {
    subscription: i64,
    name: &'static str,
    category: &'static str,
    from_bank: bool,
}

/// What the demo's money side made, for the summary it prints.
struct Ledger {
    accounts: usize,
    transactions: u64,
    matched: usize,
    transfers: usize,
    rules: usize,
    budgets: usize,
}

/// A small deterministic generator, so every demo household looks alike (and its tests can
/// count on it) without a dependency.
struct Dice(u64);

impl Dice {
    /// A number from `low` to `high`, both included.
    fn between(&mut self, low: i64, high: i64) -> i64 {
        self.0 =
            self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        low + ((self.0 >> 33) as i64).rem_euclid(high - low + 1)
    }
}

/// A decimal string in cents: "15.99" is 1599; `None` for more than two decimals.
fn to_cents(text: &str) -> Option<i64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if fraction.len() > 2 {
        return None;
    }
    let sign = if whole.starts_with('-') { -1 } else { 1 };
    let whole: i64 = whole.trim_start_matches('-').parse().ok()?;
    let fraction: i64 = format!("{fraction:0<2}").parse().ok()?;
    Some(sign * (whole * 100 + fraction))
}

/// An amount in cents as a decimal string: -8430 is "-84.30".
fn cents(amount: i64) -> String {
    let sign = if amount < 0 { "-" } else { "" };
    format!("{sign}{}.{:02}", amount.abs() / 100, amount.abs() % 100)
}

/// A statement's lines for one account, as a bank's CSV export writes them.
#[derive(Default)]
struct Statement(Vec<(jiff::civil::Date, String, i64)>);

impl Statement {
    fn add(&mut self, on: jiff::civil::Date, payee: &str, amount: i64) {
        self.0.push((on, payee.to_owned(), amount));
    }

    fn csv(&self) -> String {
        let mut text = String::from("Date,Description,Amount\n");
        for (on, payee, amount) in &self.0 {
            text.push_str(&format!("{on},{payee},{}\n", cents(*amount)));
        }
        text
    }

    fn total(&self, from: jiff::civil::Date, until: jiff::civil::Date) -> i64 {
        self.0.iter().filter(|(on, _, _)| *on >= from && *on < until).map(|(_, _, a)| a).sum()
    }
}

/// A year of money around the subscriptions: four accounts with their opening balances, a
/// salary, groceries, meals out, fuel, a refund, the subscriptions' real payments (matched to
/// their charges), transfers to savings, to the card and to cash, labels, rules that sorted
/// the statements as they came in, and two budgets, one over and one under.
async fn create_ledger(
    app: &app::App,
    owner: &Caller,
    today: jiff::civil::Date,
    subscriptions: &[Paid],
) -> anyhow::Result<Ledger> {
    let year_ago = today.checked_sub(jiff::Span::new().years(1))?;
    let mut category = std::collections::HashMap::new();
    for name in ["Groceries", "Eating out", "Transport", "Salary", "Clothes", "Rent"] {
        let created = call(app, owner, "create_category", json!({"name": name})).await?;
        category.insert(name, id_of(&created)?);
    }
    let holiday = id_of(
        &call(app, owner, "create_label", json!({"name": "holiday", "colour": "#2a9d8f"})).await?,
    )?;
    call(app, owner, "create_label", json!({"name": "reimbursable", "colour": "#e76f51"})).await?;
    let rules = [
        json!({"name": "Supermarkets", "payee_contains": "MERCADONA", "set_category_id": category["Groceries"]}),
        json!({"name": "Discounters", "payee_contains": "LIDL", "set_category_id": category["Groceries"]}),
        json!({"name": "Restaurants", "payee_contains": "RESTAURANTE", "set_category_id": category["Eating out"]}),
        json!({"name": "Pizza", "payee_contains": "PIZZERIA", "set_category_id": category["Eating out"]}),
        json!({"name": "Fuel", "payee_contains": "REPSOL", "set_category_id": category["Transport"]}),
        json!({"name": "Salary", "payee_contains": "NOMINA", "set_category_id": category["Salary"]}),
        json!({"name": "Rent", "payee_contains": "ALQUILER", "set_category_id": category["Rent"]}),
        json!({"name": "Electricity", "payee_contains": "IBERDROLA", "set_category_id": "Utilities"}),
        json!({"name": "Clothes", "payee_contains": "ZALANDO", "set_category_id": category["Clothes"]}),
        json!({"name": "Holidays", "payee_contains": "AIRBNB", "add_label_ids": [holiday]}),
    ];
    for rule in &rules {
        call(app, owner, "create_rule", rule.clone()).await?;
    }
    let accounts = [
        ("Joint checking", "checking", 2_400_00),
        ("Savings", "savings", 6_000_00),
        ("Visa", "credit_card", 0),
        ("Cash", "cash", 60_00),
    ];
    let mut account = std::collections::HashMap::new();
    for (name, kind, opening) in accounts {
        let id =
            id_of(&call(app, owner, "create_account", json!({"name": name, "kind": kind})).await?)?;
        let before = year_ago.checked_sub(jiff::Span::new().days(1))?;
        call(
            app,
            owner,
            "record_balance",
            json!({"account_id": id, "balance": cents(opening), "on": before.to_string()}),
        )
        .await?;
        account.insert(name, id);
    }

    let (mut checking, mut card) = (Statement::default(), Statement::default());
    let mut dice = Dice(2026);
    let mut day = year_ago;
    while day <= today {
        match day.day() {
            1 => checking.add(day, "ALQUILER PISO RUZAFA", -950_00),
            5 => checking.add(day, "IBERDROLA CLIENTES", -dice.between(48_00, 95_00)),
            28 => checking.add(day, "ACME SL NOMINA", 2_850_00),
            12 => card.add(day, "REPSOL ESTACION 4471", -dice.between(45_00, 70_00)),
            _ => {}
        }
        if day.weekday() == jiff::civil::Weekday::Saturday {
            let shop = if dice.between(0, 2) == 0 { "LIDL VALENCIA" } else { "MERCADONA RUZAFA" };
            checking.add(day, shop, -dice.between(60_00, 110_00));
        }
        if day.weekday() == jiff::civil::Weekday::Friday && dice.between(0, 3) > 0 {
            let place = if dice.between(0, 1) == 0 {
                "RESTAURANTE CASA ROBERTO"
            } else {
                "PIZZERIA NAPOLI"
            };
            card.add(day, place, -dice.between(25_00, 55_00));
        }
        day = day.checked_add(jiff::Span::new().days(1))?;
    }
    // A parcel sent back, and a week away.
    let returned = today.checked_sub(jiff::Span::new().days(40))?;
    card.add(returned.checked_sub(jiff::Span::new().days(9))?, "ZALANDO SE", -79_95);
    card.add(returned, "ZALANDO SE", 79_95);
    card.add(today.checked_sub(jiff::Span::new().months(4))?, "AIRBNB * HM4Q2", -412_00);
    // A birthday dinner on the month's first day: the eating-out budget is over this month.
    card.add(today.first_of_month(), "RESTAURANTE EL CELLER", -96_00);

    // Every charge a subscription recorded, paid from where it is paid from.
    let charges = call(app, owner, "list_charges", json!({"limit": 500})).await?;
    for charge in charges["items"].as_array().into_iter().flatten() {
        let on: jiff::civil::Date = charge["charged_on"].as_str().unwrap_or_default().parse()?;
        let Some(paid) = subscriptions
            .iter()
            .find(|paid| Some(paid.subscription) == charge["subscription"]["id"].as_i64())
        else {
            continue;
        };
        if charge["amount"]["currency"] != "EUR" || on < year_ago || on > today {
            continue;
        }
        let Some(amount) = charge["amount"]["amount"].as_str().and_then(to_cents) else { continue };
        let statement = if paid.from_bank { &mut checking } else { &mut card };
        statement.add(on, &paid.name.to_uppercase(), -amount);
    }

    let mut transactions = 0;
    let mut matched = 0;
    for (name, statement) in [("Joint checking", &checking), ("Visa", &card)] {
        let imported = call(
            app,
            owner,
            "import_transactions",
            json!({"account_id": account[name], "content": statement.csv()}),
        )
        .await?;
        transactions += imported["imported"].as_u64().unwrap_or(0);
        let mut paid = std::collections::HashSet::new();
        let mut by_category: std::collections::BTreeMap<&str, Vec<i64>> = Default::default();
        for proposed in imported["proposed_matches"].as_array().into_iter().flatten() {
            // One payment per charge, however many the import saw as candidates.
            if !paid.insert(proposed["charge_id"].as_i64()) {
                continue;
            }
            call(app, owner, "match_charge", json!({"transaction_id": proposed["transaction_id"], "charge_id": proposed["charge_id"]})).await?;
            matched += 1;
            let subscription = proposed["subscription"]["id"].as_i64();
            if let (Some(found), Some(transaction)) = (
                subscriptions.iter().find(|paid| Some(paid.subscription) == subscription),
                proposed["transaction_id"].as_i64(),
            ) {
                by_category.entry(found.category).or_default().push(transaction);
            }
        }
        // A subscription's payments are in its category, as a person would sort them.
        for (category, ids) in by_category {
            call(
                app,
                owner,
                "categorise_transactions",
                json!({"ids": ids, "category_id": category}),
            )
            .await?;
        }
    }

    // Each month: savings, the card's bill and some cash, each a transfer of two sides.
    let mut transfers = 0;
    let mut month = year_ago.first_of_month().checked_add(jiff::Span::new().months(1))?;
    while month <= today {
        let bill = -card.total(month.checked_sub(jiff::Span::new().months(1))?, month);
        let moves = [
            (
                month.checked_add(jiff::Span::new().days(1))?,
                "Savings",
                300_00,
                "To savings",
                "From checking",
            ),
            (
                month.checked_add(jiff::Span::new().days(4))?,
                "Visa",
                bill,
                "Visa bill",
                "Payment, thank you",
            ),
            (
                month.checked_add(jiff::Span::new().days(9))?,
                "Cash",
                100_00,
                "Cash machine",
                "From checking",
            ),
        ];
        for (on, to, amount, out_payee, in_payee) in moves {
            if on > today || amount <= 0 {
                continue;
            }
            let out = call(app, owner, "create_transaction", json!({"account_id": account["Joint checking"], "on": on.to_string(), "amount": cents(-amount), "payee": out_payee})).await?;
            let into = call(app, owner, "create_transaction", json!({"account_id": account[to], "on": on.to_string(), "amount": cents(amount), "payee": in_payee})).await?;
            call(
                app,
                owner,
                "pair_transfer",
                json!({"id": id_of(&out)?, "other_id": id_of(&into)?}),
            )
            .await?;
            transactions += 2;
            transfers += 1;
        }
        month = month.checked_add(jiff::Span::new().months(1))?;
    }

    let six_months_ago = today.checked_sub(jiff::Span::new().months(6))?.to_string();
    call(app, owner, "create_budget", json!({"name": "Groceries", "amount": "450.00", "period": "monthly", "start_day": 1, "starts_on": six_months_ago, "category_ids": [category["Groceries"]]})).await?;
    call(app, owner, "create_budget", json!({"name": "Eating out", "amount": "90.00", "period": "monthly", "start_day": 1, "starts_on": six_months_ago, "category_ids": [category["Eating out"]]})).await?;
    Ok(Ledger {
        accounts: accounts.len(),
        transactions,
        matched,
        transfers,
        rules: rules.len(),
        budgets: 2,
    })
}
