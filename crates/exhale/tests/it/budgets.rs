//! Budgets through the catalog, REST and MCP: spending counted from history at once, rollover,
//! amounts that change from the period in progress, the catch-all, refusals with what to do,
//! undo (also of deleting a category or label a budget tracks), and what another member's
//! private account or another household never adds.

use serde_json::{Value, json};

use crate::fixtures::{World, id};

async fn spend(w: &World, account: i64, on: &str, amount: &str, category: Option<i64>) -> i64 {
    let mut input = json!({"account_id": account, "on": on, "amount": amount, "payee": "Shop"});
    if let Some(category) = category {
        input["category_id"] = json!(category);
    }
    id(&w.env.call(&w.ana, "create_transaction", input).await.unwrap())
}

fn money(value: &Value) -> &str {
    value["amount"].as_str().unwrap()
}

#[tokio::test]
async fn a_budget_counts_history_at_once_with_rollover_and_a_new_limit_from_now() {
    let w = World::new().await;
    let food = id(&w.env.call(&w.ana, "create_category", json!({"name": "Food"})).await.unwrap());
    spend(&w, w.joint, "2026-09-30", "-70.00", Some(food)).await; // before the first period
    spend(&w, w.joint, "2026-10-05", "-100.00", Some(food)).await;
    spend(&w, w.joint, "2026-10-20", "10.00", Some(food)).await; // a refund
    spend(&w, w.joint, "2026-11-03", "-200.00", Some(food)).await;
    spend(&w, w.joint, "2026-11-04", "2500.00", None).await; // income, not tracked
    let usd = w.usd_card().await;
    spend(&w, usd, "2026-11-10", "-20.00", Some(food)).await;

    // Food and the holiday label: the world's groceries (-54.30 on 20 November) count through
    // the label; Bob's private bonus carries it too, and only Bob's own view counts it.
    let budget = w
        .env
        .call(
            &w.ana,
            "create_budget",
            json!({"name": "Food", "amount": "300", "period": "monthly", "category_ids": ["Food"],
                   "label_ids": ["holiday"], "starts_on": "2026-10-15", "rollover": true}),
        )
        .await
        .unwrap();
    assert_eq!(budget["starts_on"], "2026-10-01", "history is whole periods: {budget}");
    assert_eq!(budget["start_day"], 1);
    let current = &budget["current"];
    assert_eq!(
        (current["first_day"].as_str(), current["last_day"].as_str()),
        (Some("2026-11-01"), Some("2026-11-30"))
    );
    assert_eq!(money(&current["allocated"]), "300.00");
    assert_eq!(money(&current["spent"]), "254.30", "{current}");
    // October: 300 less 90 (100 out, 10 back) carried; remaining is against the allocation.
    assert_eq!(money(&current["carried_over"]), "210.00");
    assert_eq!(money(&current["remaining"]), "45.70");
    assert_eq!(
        current["unconverted"],
        json!([{"amount": "20.00", "currency": "USD", "display": "$20.00"}])
    );

    let bobs = w.env.call(&w.bob, "get_budget", json!({"id": "Food"})).await.unwrap();
    assert_eq!(money(&bobs["budget"]["current"]["spent"]), "-245.70", "{bobs}");

    // A new limit applies to the period in progress and later; October keeps 300.
    let updated =
        w.env.call(&w.ana, "update_budget", json!({"id": "food", "amount": "400"})).await.unwrap();
    assert_eq!(money(&updated["current"]["allocated"]), "400.00");
    let history = w.env.call(&w.ana, "get_budget", json!({"id": id(&budget)})).await.unwrap();
    let periods = history["periods"].as_array().unwrap();
    assert_eq!(periods.len(), 2, "{history}");
    assert_eq!(periods[0]["first_day"], "2026-11-01");
    assert_eq!(money(&periods[0]["allocated"]), "400.00");
    assert_eq!(periods[1]["first_day"], "2026-10-01");
    assert_eq!(money(&periods[1]["allocated"]), "300.00");
    assert_eq!(money(&periods[1]["spent"]), "90.00");
    assert_eq!(money(&periods[1]["carried_over"]), "0.00");

    // The budget keeps the currency it was made in when the household's changes.
    w.env.call(&w.ana, "update_household", json!({"currency": "USD"})).await.unwrap();
    let kept = w.env.call(&w.ana, "get_budget", json!({"id": "Food"})).await.unwrap();
    assert_eq!(kept["budget"]["current"]["allocated"]["currency"], "EUR", "{kept}");
    assert_eq!(money(&kept["budget"]["current"]["spent"]), "254.30");

    // Changing anything else is refused with what to do instead.
    let err = w
        .env
        .call(&w.ana, "update_budget", json!({"id": "Food", "period": "weekly"}))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "invalid_input", "{err}");
    // The other household sees no such budget.
    let err = w.env.call(&w.cai, "get_budget", json!({"id": id(&budget)})).await.unwrap_err();
    assert_eq!(err.code(), "not_found", "{err}");
    assert_eq!(w.env.call(&w.cai, "list_budgets", json!({})).await.unwrap()["items"], json!([]));
}

#[tokio::test]
async fn a_weekly_catch_all_counts_every_payment_out_and_undo_restores_what_it_tracked() {
    let w = World::new().await;
    // 29 November 2026 is a Sunday: with weeks from Monday the period is 23 to 29 November.
    spend(&w, w.joint, "2026-11-23", "-15.00", None).await;
    spend(&w, w.joint, "2026-11-24", "1000.00", None).await;
    spend(&w, w.joint, "2026-11-22", "-99.00", None).await;
    let all = w
        .env
        .call(
            &w.ana,
            "create_budget",
            json!({"name": "Everything", "amount": "250", "period": "weekly", "catch_all": true}),
        )
        .await
        .unwrap();
    assert_eq!(all["current"]["first_day"], "2026-11-23", "{all}");
    assert_eq!(all["current"]["last_day"], "2026-11-29");
    assert_eq!(money(&all["current"]["spent"]), "15.00");
    let again = w
        .env
        .call(
            &w.ana,
            "create_budget",
            json!({"name": "All again", "amount": "1", "period": "monthly", "catch_all": true}),
        )
        .await
        .unwrap_err();
    assert_eq!(again.code(), "conflict");
    assert!(again.to_string().contains("Everything"), "{again}");

    // Deleting a tracked category or label takes it off the budget; undo puts it back.
    let travel =
        id(&w.env.call(&w.ana, "create_category", json!({"name": "Travel"})).await.unwrap());
    let trip = w
        .env
        .call(&w.ana, "create_budget", json!({"name": "Trip", "amount": "500", "period": "yearly", "category_ids": [travel], "label_ids": [w.holiday]}))
        .await
        .unwrap();
    assert_eq!(trip["current"]["first_day"], "2026-01-01");
    let deleted = w.env.call(&w.ana, "delete_category", json!({"id": travel})).await.unwrap();
    let trip_now = w.env.call(&w.ana, "get_budget", json!({"id": "Trip"})).await.unwrap();
    assert!(trip_now["budget"].get("categories").is_none(), "{trip_now}");
    w.env
        .call(&w.ana, "undo", json!({"batch_id": deleted["batch_id"]}))
        .await
        .unwrap_or_else(|e| panic!("{e} {deleted}"));
    let trip_back = w.env.call(&w.ana, "get_budget", json!({"id": "Trip"})).await.unwrap();
    assert_eq!(trip_back["budget"]["categories"][0]["name"], "Travel", "{trip_back}");

    let removed = w.env.call(&w.ana, "delete_label", json!({"id": w.holiday})).await.unwrap();
    let trip_now = w.env.call(&w.ana, "get_budget", json!({"id": "Trip"})).await.unwrap();
    assert!(trip_now["budget"].get("labels").is_none(), "{trip_now}");
    w.env.call(&w.ana, "undo", json!({"batch_id": removed["batch_id"]})).await.unwrap();
    let trip_back = w.env.call(&w.ana, "get_budget", json!({"id": "Trip"})).await.unwrap();
    assert_eq!(trip_back["budget"]["labels"][0]["name"], "holiday");

    // Deleting a budget leaves its transactions; undo brings it back whole.
    let gone = w.env.call(&w.ana, "delete_budget", json!({"id": "Everything"})).await.unwrap();
    assert_eq!(w.env.call(&w.ana, "search_transactions", json!({})).await.unwrap()["total"], 4);
    w.env.call(&w.ana, "undo", json!({"batch_id": gone["batch_id"]})).await.unwrap();
    let back = w.env.call(&w.ana, "get_budget", json!({"id": "Everything"})).await.unwrap();
    assert_eq!(money(&back["budget"]["current"]["spent"]), "15.00");
    assert_eq!(back["budget"]["catch_all"], true);
}

#[tokio::test]
async fn a_budget_named_after_a_category_and_tracking_nothing_tracks_that_category() {
    let w = World::new().await;
    // "A monthly budget of 20 for music", as a model sends it: the name and nothing tracked.
    let made = w
        .env
        .call(
            &w.ana,
            "create_budget",
            json!({"name": "MUSIC", "amount": "20", "period": "monthly"}),
        )
        .await
        .unwrap();
    assert_eq!(made["catch_all"], false, "{made}");
    assert_eq!(made["categories"].as_array().unwrap().len(), 1, "{made}");
    assert_eq!(made["categories"][0]["id"], w.music, "{made}");
    assert_eq!(made["categories"][0]["name"], "Music", "{made}");
    // A name that is no category's still needs what to track.
    let err = w
        .env
        .call(&w.ana, "create_budget", json!({"name": "Fun", "amount": "20", "period": "monthly"}))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "invalid_input");
    assert!(err.to_string().contains("catch_all"), "{err}");
    // Each household's own category of that name: never another household's.
    let theirs = w
        .env
        .call(
            &w.cai,
            "create_budget",
            json!({"name": "music", "amount": "20", "period": "monthly"}),
        )
        .await
        .unwrap();
    let their_music = crate::fixtures::category(&w.env, &w.cai, "Music").await;
    assert_ne!(their_music, w.music);
    assert_eq!(theirs["categories"][0]["id"], their_music, "{theirs}");
}

#[tokio::test]
async fn what_cannot_work_is_refused_with_what_to_send() {
    let w = World::new().await;
    let other_households =
        id(&w.env.call(&w.cai, "create_category", json!({"name": "Theirs"})).await.unwrap());
    let create = |input: Value| w.env.call(&w.ana, "create_budget", input);
    for (input, code, pointer, says) in [
        // The seed's start day that hung period generation.
        (
            json!({"name": "W", "amount": "10", "period": "weekly", "start_day": 15, "category_ids": ["Streaming"]}),
            "invalid_input",
            "/start_day",
            "1 Monday to 7 Sunday",
        ),
        (
            json!({"name": "Y", "amount": "10", "period": "yearly", "start_day": 13, "category_ids": ["Streaming"]}),
            "invalid_input",
            "/start_day",
            "month",
        ),
        (
            json!({"name": "N", "amount": "10", "period": "monthly"}),
            "invalid_input",
            "/category_ids",
            "catch_all",
        ),
        (
            json!({"name": "C", "amount": "10", "period": "monthly", "catch_all": true, "category_ids": ["Streaming"]}),
            "invalid_input",
            "/catch_all",
            "no categories",
        ),
        (
            json!({"name": "X", "amount": "10", "period": "monthly", "category_ids": [other_households]}),
            "invalid_input",
            "/category_ids/0",
            "list_categories",
        ),
        (
            json!({"name": "X", "amount": "10", "period": "monthly", "label_ids": [9_999_999]}),
            "invalid_input",
            "/label_ids/0",
            "The ones you can see: holiday (id ",
        ),
        (
            json!({"name": "F", "amount": "10", "period": "monthly", "starts_on": "2027-01-01", "category_ids": ["Streaming"]}),
            "invalid_input",
            "/starts_on",
            "has not come yet",
        ),
        (
            json!({"name": "M", "amount": "-10", "period": "monthly", "category_ids": ["Streaming"]}),
            "invalid_input",
            "/amount",
            "",
        ),
    ] {
        let err = create(input.clone()).await.unwrap_err();
        assert_eq!(err.code(), code, "{input}: {err}");
        let at = match &err {
            ops::OpError::InvalidInput { pointer, .. } => pointer.as_str(),
            _ => "",
        };
        assert_eq!(at, pointer, "{input}: {err:?}");
        assert!(err.to_string().contains(says), "{input}: {err}");
    }
    create(json!({"name": "Streaming", "amount": "30", "period": "monthly", "category_ids": ["Streaming"]})).await.unwrap();
    let twice = create(json!({"name": "streaming", "amount": "30", "period": "monthly", "category_ids": ["Streaming"]})).await.unwrap_err();
    assert_eq!(twice.code(), "conflict");
    // A read token reads budgets and may not write them.
    let (_, reader) = w.env.token(&w.ana, "read").await;
    let list = w.env.call(&reader, "list_budgets", json!({})).await.unwrap();
    assert_eq!(list["items"][1]["name"], "Streaming", "{list}");
    let result = w.env.call(&reader, "delete_budget", json!({"id": "Streaming"})).await;
    assert_eq!(test_support::code(&result), "forbidden");
}

#[tokio::test]
async fn budgets_over_rest_and_mcp() {
    let w = World::new().await;
    w.env
        .call(&w.ana, "create_budget", json!({"name": "Holiday", "amount": "100", "period": "monthly", "label_ids": ["holiday"]}))
        .await
        .unwrap();
    let server = w.env.serve().await;
    let (token, _) = w.env.token(&w.ana, "read").await;
    let response = reqwest::Client::new()
        .get(server.url("/api/v1/ops/list_budgets"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let list: Value = response.json().await.unwrap();
    let holiday =
        list["items"].as_array().unwrap().iter().find(|b| b["name"] == "Holiday").unwrap();
    assert_eq!(money(&holiday["current"]["spent"]), "54.30", "{list}");

    let client = crate::mcp::http_client(server.url("/mcp"), &token, "budget test").await;
    let result =
        crate::mcp::call(&client, "get_budget", json!({"id": "holiday", "periods": 1})).await;
    let history = result.structured_content.unwrap();
    assert_eq!(money(&history["periods"][0]["remaining"]), "45.70", "{history}");
    client.cancel().await.unwrap();
}
