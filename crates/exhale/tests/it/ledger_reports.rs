//! Spending by category, cashflow and net worth through the catalog and MCP: refunds, income,
//! currencies with and without a rate, balances carried forward and back by transactions, and
//! another member's private account never counted for anyone else.

use serde_json::{Value, json};

use crate::fixtures::{World, id};

async fn record(w: &World, account: i64, on: &str, amount: &str, category: Option<&str>) {
    let mut input = json!({"account_id": account, "on": on, "amount": amount, "payee": "Shop"});
    if let Some(category) = category {
        input["category_id"] = json!(category);
    }
    w.env.call(&w.ana, "create_transaction", input).await.unwrap();
}

fn money(value: &Value) -> &str {
    value["amount"].as_str().unwrap()
}

/// A month on the joint account (beside the world's -54.30 of groceries on 20 November) and a
/// card in dollars.
async fn november(w: &World) -> i64 {
    for name in ["Food", "Salary"] {
        w.env.call(&w.ana, "create_category", json!({"name": name})).await.unwrap();
    }
    record(w, w.joint, "2026-11-01", "2500.00", Some("Salary")).await;
    record(w, w.joint, "2026-11-05", "-100.00", Some("Food")).await;
    record(w, w.joint, "2026-11-06", "10.00", Some("Food")).await; // a refund
    record(w, w.joint, "2026-11-07", "50.00", None).await; // money in, not a refund
    record(w, w.joint, "2026-10-15", "-40.00", Some("Food")).await;
    let usd = w.usd_card().await;
    record(w, usd, "2026-11-10", "-20.00", Some("Food")).await;
    // Dollars in that are income, not spending, on any report.
    record(w, usd, "2026-11-11", "100.00", Some("Salary")).await;
    usd
}

#[tokio::test]
async fn spending_by_category_counts_money_out_less_refunds_and_keeps_unrated_currencies_apart() {
    let w = World::new().await;
    november(&w).await;
    let report = w.env.call(&w.ana, "spending_by_category", json!({})).await.unwrap();
    assert_eq!(report["from"], "2026-11-01");
    assert_eq!(report["to"], "2026-11-29");
    let rows: Vec<(Value, &str, u64)> = report["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (c["category"]["name"].clone(), money(&c["spent"]), c["percent"].as_u64().unwrap())
        })
        .collect();
    // Food: 100 out, 10 back; the groceries have no category; Salary brings money in.
    assert_eq!(rows, [(json!("Food"), "90.00", 62), (Value::Null, "54.30", 38)], "{report}");
    assert_eq!(money(&report["total"]), "144.30");
    assert_eq!(
        report["unconverted"],
        json!([{"amount": "20.00", "currency": "USD", "display": "$20.00"}])
    );

    // One category asked for: its spending is the total, its share still of everything; the
    // dollars spent on food stay apart, the uncategorised groceries are left out.
    let food =
        w.env.call(&w.ana, "spending_by_category", json!({"category_id": "Food"})).await.unwrap();
    let rows: Vec<(&Value, &str, &Value)> = food["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (&c["category"]["name"], money(&c["spent"]), &c["percent"]))
        .collect();
    assert_eq!(rows, [(&json!("Food"), "90.00", &json!(62))], "{food}");
    assert_eq!(money(&food["total"]), "90.00");
    assert_eq!(food["unconverted"], report["unconverted"]);
    let salary =
        w.env.call(&w.ana, "spending_by_category", json!({"category_id": "Salary"})).await.unwrap();
    assert_eq!((&salary["categories"], money(&salary["total"])), (&json!([]), "0.00"));
    assert!(salary.get("unconverted").is_none(), "{salary}");
    // A category that spent nothing says what the window held without it, so a model that
    // passed the wrong one does not answer "nothing".
    let nothing_spent = "From 2026-11-01 to 2026-11-29 all accounts spent: Food €90.00, without a category €54.30. Nothing was spent in the category and account asked for; to read one of these, call again with its category_id and no account_id.";
    assert_eq!(salary["note"], nothing_spent, "{salary}");
    assert!(report.get("note").is_none(), "{report}");
    assert!(food.get("note").is_none(), "{food}");
    // An account with nothing spent: the same, read on every account the caller sees.
    let wallet =
        w.env.call(&w.ana, "spending_by_category", json!({"account_id": w.wallet})).await.unwrap();
    assert_eq!(wallet["categories"], json!([]), "{wallet}");
    assert_eq!(wallet["note"], nothing_spent, "{wallet}");
    let january = json!({"account_id": w.wallet, "from": "2026-01-01", "to": "2026-01-31"});
    let empty_window = w.env.call(&w.ana, "spending_by_category", january).await.unwrap();
    assert_eq!(
        empty_window["note"],
        "Nothing was spent in the category and account asked for, nor on any account, from 2026-01-01 to 2026-01-31.",
        "{empty_window}"
    );
    let unknown =
        w.env.call(&w.ana, "spending_by_category", json!({"category_id": "Travel"})).await;
    assert_eq!(test_support::code(&unknown), "not_found", "{unknown:?}");

    // With a rate the dollars count in euros, in their category.
    w.env
        .call(&w.ana, "update_settings", json!({"exchange_rates": {"USD": "0.90"}}))
        .await
        .unwrap();
    let report =
        w.env.call(&w.ana, "spending_by_category", json!({"account_id": "US card"})).await.unwrap();
    assert_eq!(money(&report["categories"][0]["spent"]), "18.00", "{report}");
    assert!(report.get("unconverted").is_none());

    // October alone (from defaults to the first of to's month); and a range the wrong way
    // round says what to do.
    let october =
        w.env.call(&w.ana, "spending_by_category", json!({"to": "2026-10-31"})).await.unwrap();
    assert_eq!(october["from"], "2026-10-01");
    assert_eq!(money(&october["total"]), "40.00");
    let err = w
        .env
        .call(&w.ana, "spending_by_category", json!({"from": "2026-11-10", "to": "2026-11-01"}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("swap them"), "{err}");
}

#[tokio::test]
async fn cashflow_per_month_and_net_worth_from_balances_and_transactions() {
    let w = World::new().await;
    november(&w).await;
    let flow = w
        .env
        .call(&w.ana, "get_cashflow", json!({"from": "2026-10-01", "interval": "month"}))
        .await
        .unwrap();
    let periods = flow["periods"].as_array().unwrap();
    assert_eq!(periods.len(), 2, "{flow}");
    assert_eq!(money(&periods[0]["expenses"]), "40.00");
    assert_eq!(money(&periods[0]["income"]), "0.00");
    // November: 2500 + 10 + 50 in; 100 + 54.30 out (the dollars have no rate).
    assert_eq!(periods[1]["last_day"], "2026-11-29");
    assert_eq!(money(&periods[1]["income"]), "2560.00");
    assert_eq!(money(&periods[1]["expenses"]), "154.30");
    assert_eq!(money(&flow["net"]), "2365.70");
    // Dollars without a rate, net over the range: 100 in, 20 out.
    assert_eq!(flow["unconverted"][0]["amount"], "80.00");
    // Bob's private bonus is his alone.
    let bobs = w.env.call(&w.bob, "get_cashflow", json!({"from": "2026-11-01"})).await.unwrap();
    assert_eq!(money(&bobs["income"]), "3060.00", "{bobs}");

    // The joint account held 1,000 on 1 November (recorded); the rest follows its transactions.
    w.env
        .call(
            &w.ana,
            "record_balance",
            json!({"account_id": w.joint, "balance": "1000", "on": "2026-11-01"}),
        )
        .await
        .unwrap();
    let worth = w
        .env
        .call(&w.ana, "get_net_worth", json!({"from": "2026-10-01", "to": "2026-11-28"}))
        .await
        .unwrap();
    let points = worth["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{worth}");
    // End of October: 1,000 less what came in on 1 November (2,500) = -1,500.
    assert_eq!(points[0]["on"], "2026-10-31");
    assert_eq!(money(&points[0]["total"]), "-1500.00");
    // Yesterday: 1,000 - 100 + 10 + 50 - 54.30 = 905.70 on the joint account; the card's
    // dollars have no rate and stand apart.
    assert_eq!(points[1]["on"], "2026-11-28");
    assert_eq!(money(&points[1]["total"]), "905.70", "{worth}");
    let kinds: Vec<(&str, &str)> = points[1]["by_kind"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| (k["kind"].as_str().unwrap(), money(&k["amount"])))
        .collect();
    assert_eq!(kinds, [("cash", "0.00"), ("checking", "905.70")], "{worth}");
    assert_eq!(points[1]["unconverted"][0]["amount"], "80.00");
    // A day before the first record is worked back from it, whatever `to` is.
    let october = w
        .env
        .call(&w.ana, "get_net_worth", json!({"from": "2026-10-01", "to": "2026-10-31"}))
        .await
        .unwrap();
    assert_eq!(money(&october["points"][0]["total"]), "-1500.00", "{october}");
    assert!(!worth.to_string().contains("Bob's savings"), "{worth}");
    let bobs = w.env.call(&w.bob, "get_net_worth", json!({})).await.unwrap();
    assert_eq!(bobs["points"].as_array().unwrap().len(), 12);
    assert!(bobs.to_string().contains("Bob's savings"));

    // Over MCP with a read token.
    let server = w.env.serve().await;
    let (token, _) = w.env.token(&w.ana, "read").await;
    let client = crate::mcp::http_client(server.url("/mcp"), &token, "reports test").await;
    let result = crate::mcp::call(&client, "get_net_worth", json!({"from": "2026-11-01"})).await;
    let over_mcp = result.structured_content.unwrap();
    // Today the balance recorded when the world made the account wins over what came before.
    assert_eq!(over_mcp["points"][0]["on"], "2026-11-29");
    assert_eq!(money(&over_mcp["points"][0]["total"]), "1200.50", "{over_mcp}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn split_parts_count_in_their_categories_and_a_paired_transfer_is_neither_income_nor_spending()
 {
    let w = World::new().await;
    for name in ["Food", "Home"] {
        w.env.call(&w.ana, "create_category", json!({"name": name})).await.unwrap();
    }
    let shop =
        json!({"account_id": w.joint, "on": "2026-11-25", "amount": "-50", "payee": "Supermarket"});
    let shop = id(&w.env.call(&w.ana, "create_transaction", shop).await.unwrap());
    let split =
        |parts: Value| w.env.call(&w.ana, "split_transaction", json!({"id": shop, "parts": parts}));
    for (parts, pointer) in [
        (json!([{"amount": "-30", "category_id": "Food"}, {"amount": "-10"}]), "/parts"),
        (json!([{"amount": "-50", "category_id": "Food"}]), "/parts"),
        (json!([{"amount": "-60", "category_id": "Food"}, {"amount": "10"}]), "/parts/1/amount"),
        (
            json!([{"amount": "-30", "category_id": 9_999_999}, {"amount": "-20"}]),
            "/parts/0/category_id",
        ),
    ] {
        let err = split(parts.clone()).await.unwrap_err();
        let at = match &err {
            ops::OpError::InvalidInput { pointer, .. } => pointer.as_str(),
            _ => "",
        };
        assert_eq!(at, pointer, "{parts}: {err:?}");
    }
    let done = split(json!([{"amount": "-30", "category_id": "Food", "note": "veg"}, {"amount": "-20", "category_id": "Home"}]))
        .await
        .unwrap();
    assert_eq!(done["splits"][0]["category"]["name"], "Food", "{done}");
    assert_eq!(done["splits"][1]["amount"]["amount"], "-20.00");
    let err = w.env.call(&w.ana, "update_transaction", json!({"id": shop, "amount": "-55"})).await;
    assert!(
        matches!(&err, Err(ops::OpError::InvalidInput { pointer, .. }) if pointer == "/amount"),
        "{err:?}"
    );

    // 200 from the joint account into the wallet, paired.
    let out =
        json!({"account_id": w.joint, "on": "2026-11-26", "amount": "-200", "payee": "To cash"});
    let out = id(&w.env.call(&w.ana, "create_transaction", out).await.unwrap());
    let into =
        json!({"account_id": w.wallet, "on": "2026-11-26", "amount": "200", "payee": "From joint"});
    let into = id(&w.env.call(&w.ana, "create_transaction", into).await.unwrap());
    let pair = |input: Value| w.env.call(&w.ana, "pair_transfer", input);
    for input in [
        json!({"id": out, "other_id": shop}),
        json!({"id": out, "other_id": out}),
        json!({"id": out, "other_id": w.bobs_bonus}),
        json!({"id": out, "other_id": w.other_household_transaction}),
    ] {
        let err = pair(input.clone()).await.unwrap_err();
        assert_eq!(err.code(), "invalid_input", "{input}: {err}");
    }
    let paired = pair(json!({"id": out, "other_id": into})).await.unwrap();
    assert_eq!(paired["transfer_id"], into);

    let report =
        w.env.call(&w.ana, "spending_by_category", json!({"from": "2026-11-25"})).await.unwrap();
    let rows: Vec<(Value, &str)> = report["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["category"]["name"].clone(), money(&c["spent"])))
        .collect();
    assert_eq!(rows, [(json!("Food"), "30.00"), (json!("Home"), "20.00")], "{report}");
    let flow = w.env.call(&w.ana, "get_cashflow", json!({"from": "2026-11-25"})).await.unwrap();
    assert_eq!((money(&flow["income"]), money(&flow["expenses"])), ("0.00", "50.00"), "{flow}");
    let budget = w
        .env
        .call(
            &w.ana,
            "create_budget",
            json!({"name": "Food", "amount": "100", "period": "monthly", "category_ids": ["Food"]}),
        )
        .await
        .unwrap();
    assert_eq!(money(&budget["current"]["spent"]), "30.00");

    // Deleting one side unpairs the other; undo pairs them again.
    let deleted = w.env.call(&w.ana, "delete_transaction", json!({"id": into})).await.unwrap();
    let flow = w.env.call(&w.ana, "get_cashflow", json!({"from": "2026-11-25"})).await.unwrap();
    assert_eq!(money(&flow["expenses"]), "250.00", "{flow}");
    w.env.call(&w.ana, "undo", json!({"batch_id": deleted["batch_id"]})).await.unwrap();
    let back =
        w.env.call(&w.ana, "search_transactions", json!({"from": "2026-11-26"})).await.unwrap();
    let sides: Vec<(i64, Value)> = back["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (id(t), t["transfer_id"].clone()))
        .collect();
    assert!(sides.contains(&(into, json!(out))) && sides.contains(&(out, json!(into))), "{back}");
}

#[tokio::test]
async fn the_subscriptions_summary_of_a_household_with_accounts_says_where_the_ledger_is_read() {
    let w = World::new().await;
    let summary = w.env.call(&w.ana, "get_spending_summary", json!({})).await.unwrap();
    let note = summary["note"].as_str().unwrap_or_default();
    for read in ["spending_by_category", "list_budgets", "list_accounts"] {
        assert!(note.contains(read), "{summary}");
    }
    // A household that keeps only subscriptions is not sent to a ledger it does not keep.
    let fresh = w.env.household("Subscriptions only", "zoe@only.test").await;
    w.env
        .call(
            &fresh,
            "create_subscription",
            json!({"name": "Netflix", "amount": "9.99", "cycle": "monthly", "next_charge_on": "2026-12-01"}),
        )
        .await
        .unwrap();
    let summary = w.env.call(&fresh, "get_spending_summary", json!({})).await.unwrap();
    assert!(summary.get("note").is_none(), "{summary}");
}
