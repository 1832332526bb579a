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
    let usd = w
        .env
        .call(
            &w.ana,
            "create_account",
            json!({"name": "US card", "kind": "credit_card", "currency": "USD"}),
        )
        .await
        .unwrap();
    record(w, id(&usd), "2026-11-10", "-20.00", Some("Food")).await;
    id(&usd)
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

    // With a rate the dollars count in euros, in their category.
    w.env
        .call(&w.ana, "update_settings", json!({"exchange_rates": {"USD": "0.90"}}))
        .await
        .unwrap();
    let report =
        w.env.call(&w.ana, "spending_by_category", json!({"account_id": "US card"})).await.unwrap();
    assert_eq!(money(&report["categories"][0]["spent"]), "18.00", "{report}");
    assert!(report.get("unconverted").is_none());

    // October alone; and a range the wrong way round says what to do.
    let october = w
        .env
        .call(&w.ana, "spending_by_category", json!({"from": "2026-10-01", "to": "2026-10-31"}))
        .await
        .unwrap();
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
    assert_eq!(flow["unconverted"][0]["amount"], "-20.00");
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
    assert_eq!(points[1]["unconverted"][0]["amount"], "-20.00");
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
