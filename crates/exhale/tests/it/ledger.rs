//! Accounts, balances, labels and transactions through the catalog, REST and MCP: searching
//! with every filter and stable pages, categorising and labelling, undo, the scopes of tokens,
//! and what another member or household never sees.

use serde_json::{Value, json};

use crate::fixtures::{World, confirmed, id};

fn payees(page: &Value) -> Vec<String> {
    page["items"].as_array().unwrap().iter().map(|t| t["payee"].as_str().unwrap().into()).collect()
}

/// Ana's joint account with a month of transactions on top of the world's.
async fn with_month(w: &World) -> Vec<i64> {
    let eating_out =
        w.env.call(&w.ana, "create_category", json!({"name": "Eating out"})).await.unwrap();
    let work = w.env.call(&w.ana, "create_label", json!({"name": "Work"})).await.unwrap();
    let mut ids = Vec::new();
    for (on, amount, payee, category, labels) in [
        ("2026-11-01", "-12.00", "Corner Cafe", Some(id(&eating_out)), vec![id(&work)]),
        ("2026-11-03", "2500.00", "Employer payroll", None, vec![]),
        ("2026-11-03", "-80.00", "Pizza 100% Napoli", Some(id(&eating_out)), vec![w.holiday]),
        ("2026-11-15", "-35.00", "Corner Cafe", Some(id(&eating_out)), vec![]),
        ("2026-11-30", "-1.99", "App store", None, vec![]),
    ] {
        let mut input = json!({"account_id": w.joint, "on": on, "amount": amount, "payee": payee, "label_ids": labels});
        if let Some(category) = category {
            input["category_id"] = json!(category);
        }
        ids.push(id(&w.env.call(&w.ana, "create_transaction", input).await.unwrap()));
    }
    ids
}

#[tokio::test]
async fn search_filters_combine_and_labels_match_any() {
    let w = World::new().await;
    with_month(&w).await;
    let search = |input: Value| w.env.call(&w.ana, "search_transactions", input);
    let all = search(json!({})).await.unwrap();
    assert_eq!(all["total"], 6, "{all}");
    // Newest first; on one day the later one first.
    assert_eq!(
        payees(&all),
        [
            "App store",
            "Spotify family groceries",
            "Corner Cafe",
            "Pizza 100% Napoli",
            "Employer payroll",
            "Corner Cafe"
        ]
    );
    let first = &all["items"][1];
    assert_eq!(first["amount"]["amount"], "-54.30");
    assert_eq!(first["amount"]["currency"], "EUR");
    assert_eq!(first["labels"][0]["name"], "holiday");
    assert_eq!(first["account"]["name"], "Joint checking");

    let cases = [
        (
            json!({"category_id": "Eating out"}),
            vec!["Corner Cafe", "Pizza 100% Napoli", "Corner Cafe"],
        ),
        (
            json!({"uncategorised": true}),
            vec!["App store", "Spotify family groceries", "Employer payroll"],
        ),
        // Any of the labels.
        (
            json!({"label_ids": ["holiday", "work"]}),
            vec!["Spotify family groceries", "Pizza 100% Napoli", "Corner Cafe"],
        ),
        // With AND between filters.
        (json!({"label_ids": ["holiday"], "category_id": "Eating out"}), vec!["Pizza 100% Napoli"]),
        (
            json!({"from": "2026-11-03", "to": "2026-11-15"}),
            vec!["Corner Cafe", "Pizza 100% Napoli", "Employer payroll"],
        ),
        // Money out of 20 to 60.
        (
            json!({"min_amount": "-60", "max_amount": "-20"}),
            vec!["Spotify family groceries", "Corner Cafe"],
        ),
        (json!({"min_amount": "0"}), vec!["Employer payroll"]),
        (json!({"text": "corner"}), vec!["Corner Cafe", "Corner Cafe"]),
        // LIKE's wildcards are plain text.
        (json!({"text": "100%"}), vec!["Pizza 100% Napoli"]),
        (json!({"text": "0%"}), vec!["Pizza 100% Napoli"]),
        (json!({"text": "_"}), vec![]),
        (
            json!({"account_id": "Joint checking", "max_amount": "-50"}),
            vec!["Spotify family groceries", "Pizza 100% Napoli"],
        ),
    ];
    for (filter, expected) in cases {
        let page = search(filter.clone()).await.unwrap();
        assert_eq!(payees(&page), expected, "{filter}");
        assert_eq!(page["total"], expected.len(), "{filter}");
        // A page shorter than the matches counts them apart.
        let mut first = filter.clone();
        first["limit"] = json!(1);
        let page = search(first).await.unwrap();
        assert_eq!(page["total"], expected.len(), "{filter}, one a page");
    }
}

#[tokio::test]
async fn a_search_that_matches_nothing_names_the_newest_matches_of_fewer_filters() {
    let w = World::new().await;
    let ids = with_month(&w).await;
    let search = async |caller: &ops::Caller, input: Value| {
        w.env.call(caller, "search_transactions", input).await
    };
    // Its text alone matches: the newest of those, and the call that reads them.
    let page = search(&w.ana, json!({"text": "corner", "uncategorised": true})).await.unwrap();
    assert_eq!(page["items"], json!([]), "{page}");
    assert_eq!(
        page["note"],
        format!(
            "Nothing matched all these filters. With text \"corner\" alone, the newest is 2026-11-15 Corner Cafe -€35.00 (Joint checking, Eating out, id {}); before it: 2026-11-01 Corner Cafe -€12.00 (Joint checking, Eating out, id {}). Call search_transactions again with only that text to read them all.",
            ids[3], ids[0]
        ),
        "{page}"
    );
    // With no text, the other filters without the dates; three at most.
    let october = json!({"category_id": "Eating out", "from": "2026-10-01", "to": "2026-10-31"});
    let page = search(&w.ana, october).await.unwrap();
    assert_eq!(
        page["note"],
        format!(
            "Nothing matched from 2026-10-01 to 2026-10-31. Without the dates, the newest match is 2026-11-15 Corner Cafe -€35.00 (Joint checking, Eating out, id {}); before it: 2026-11-03 Pizza 100% Napoli -€80.00 (Joint checking, Eating out, id {}); 2026-11-01 Corner Cafe -€12.00 (Joint checking, Eating out, id {}). Call search_transactions again with wider dates, or none, to read them all.",
            ids[3], ids[2], ids[0]
        ),
        "{page}"
    );
    // Another member's private transaction and another household's never show; with nothing
    // wider to name, there is no note.
    for text in ["Bob's bonus", "Netflix"] {
        let page = search(&w.ana, json!({"text": text, "uncategorised": true})).await.unwrap();
        assert_eq!(page["items"], json!([]), "{page}");
        assert!(page.get("note").is_none(), "{text}: {page}");
    }
    let bobs = search(&w.bob, json!({"text": "Bob's bonus", "account_id": w.joint})).await.unwrap();
    assert!(bobs["note"].as_str().unwrap().contains("Bob's bonus"), "his own: {bobs}");
    // No note where something matched, or for text alone.
    let found = search(&w.ana, json!({"text": "corner"})).await.unwrap();
    assert!(found.get("note").is_none(), "{found}");
    let alone = search(&w.ana, json!({"text": "nowhere"})).await.unwrap();
    assert!(alone.get("note").is_none(), "{alone}");
}

#[tokio::test]
async fn pages_are_stable_and_bad_filters_say_what_to_send() {
    let w = World::new().await;
    with_month(&w).await;
    let all = w.env.call(&w.ana, "search_transactions", json!({})).await.unwrap();
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut input = json!({"limit": 4});
        if let Some(cursor) = &cursor {
            input["cursor"] = json!(cursor);
        }
        let page = w.env.call(&w.ana, "search_transactions", input).await.unwrap();
        assert_eq!(page["total"], 6);
        seen.extend(page["items"].as_array().unwrap().iter().map(id));
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.into()),
            None => break,
        }
    }
    assert_eq!(seen, all["items"].as_array().unwrap().iter().map(id).collect::<Vec<_>>());

    // A cursor is a position: a transaction added above it, or one on the first page deleted,
    // moves nothing on the next page (an offset would repeat or skip a row).
    let first = w.env.call(&w.ana, "search_transactions", json!({"limit": 2})).await.unwrap();
    let cursor = first["next_cursor"].as_str().unwrap().to_owned();
    assert!(!cursor.starts_with('o'), "{cursor}");
    w.env
        .call(
            &w.ana,
            "create_transaction",
            json!({"account_id": w.joint, "on": "2026-12-01", "amount": "-3.00", "payee": "Newer"}),
        )
        .await
        .unwrap();
    w.env.call(&w.ana, "delete_transaction", json!({"id": id(&first["items"][0])})).await.unwrap();
    let second = w
        .env
        .call(&w.ana, "search_transactions", json!({"limit": 2, "cursor": cursor}))
        .await
        .unwrap();
    let expected: Vec<i64> = all["items"].as_array().unwrap()[2..4].iter().map(id).collect();
    assert_eq!(second["items"].as_array().unwrap().iter().map(id).collect::<Vec<_>>(), expected);
    // Counted from the start as it was shown: two before, four from here on.
    assert_eq!(second["total"], 6, "{second}");
    // The offset form every list takes (what MCP hands out when it cuts a page) lands on the
    // same rows as the position after them; past the end, an empty page.
    let now = w.env.call(&w.ana, "search_transactions", json!({})).await.unwrap();
    let by_offset = w
        .env
        .call(&w.ana, "search_transactions", json!({"limit": 2, "cursor": "o3"}))
        .await
        .unwrap();
    let from_now: Vec<i64> = now["items"].as_array().unwrap()[3..5].iter().map(id).collect();
    assert_eq!(by_offset["items"].as_array().unwrap().iter().map(id).collect::<Vec<_>>(), from_now);
    assert_eq!(by_offset["total"], 6);
    let beyond = w.env.call(&w.ana, "search_transactions", json!({"cursor": "o40"})).await.unwrap();
    assert_eq!(beyond["items"], json!([]));
    assert_eq!(beyond["total"], 6);
    assert!(beyond.get("next_cursor").is_none(), "{beyond}");

    for (input, pointer, says) in [
        (json!({"label_ids": ["nope"]}), "/label_ids/0", "The ones you can see: holiday (id "),
        (json!({"label_ids": [999_999]}), "/label_ids/0", "The ones you can see: holiday (id "),
        (
            json!({"account_id": 999_999}),
            "/account_id",
            "The ones you can see: Joint checking (id ",
        ),
        (json!({"category_id": 999_999}), "/category_id", "list_categories"),
        (json!({"from": "2026-11-20", "to": "2026-11-01"}), "/to", "swap"),
        (json!({"min_amount": "-20", "max_amount": "-60"}), "/max_amount", "signed"),
        (json!({"min_amount": "twelve"}), "/min_amount", "signed decimal"),
        (json!({"min_amount": "1.0001"}), "/min_amount", "decimals"),
        (json!({"cursor": "k12"}), "/cursor", "next_cursor"),
        (json!({"cursor": "2026-02-30.5.10"}), "/cursor", "next_cursor"),
        (json!({"cursor": "2026-02-03.0.10"}), "/cursor", "next_cursor"),
    ] {
        let result = w.env.call(&w.ana, "search_transactions", input.clone()).await;
        let err = result.expect_err(&input.to_string());
        let text = err.text().render();
        assert!(
            matches!(&err, ops::OpError::InvalidInput { pointer: p, .. } if p == pointer)
                || err.code() == "not_found",
            "{input}: {text}"
        );
        assert!(text.contains(says), "{input}: {text}");
    }
}

#[tokio::test]
async fn transactions_are_changed_categorised_and_undone() {
    let w = World::new().await;
    let ids = with_month(&w).await;
    let cafe = ids[0];
    let changed = w
        .env
        .call(
            &w.ana,
            "update_transaction",
            json!({"id": cafe, "amount": "-13.50", "notes": "with Eve", "label_ids": []}),
        )
        .await
        .unwrap();
    assert_eq!(changed["amount"]["display"], "-€13.50");
    assert_eq!(changed["notes"], "with Eve");
    assert!(changed.get("labels").is_none(), "{changed}");
    let undo = w.env.call(&w.ana, "undo", json!({"audit_ids": changed["audit_ids"]})).await;
    assert_eq!(test_support::code(&undo), "ok", "{undo:?}");
    let back = w.env.call(&w.ana, "search_transactions", json!({"text": "corner"})).await.unwrap();
    let restored = back["items"].as_array().unwrap().iter().find(|t| id(t) == cafe).unwrap();
    assert_eq!(restored["amount"]["amount"], "-12.00");
    assert_eq!(restored["labels"][0]["name"], "Work");
    assert!(restored.get("notes").is_none());

    let groceries_category =
        id(&w.env.call(&w.ana, "create_category", json!({"name": "Food shop"})).await.unwrap());
    let bulk = w
        .env
        .call(
            &w.ana,
            "categorise_transactions",
            json!({"ids": [ids[4], w.groceries], "category_id": groceries_category, "add_label_ids": ["Work"], "remove_label_ids": ["holiday"]}),
        )
        .await
        .unwrap();
    assert_eq!(bulk["transactions_changed"], 2);
    let page = w
        .env
        .call(&w.ana, "search_transactions", json!({"category_id": groceries_category}))
        .await
        .unwrap();
    assert_eq!(payees(&page), ["App store", "Spotify family groceries"]);
    assert!(
        page["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["labels"] == json!([{"id": t["labels"][0]["id"], "name": "Work"}]))
    );
    // Nothing to change is refused, saying what to send.
    let nothing = w.env.call(&w.ana, "categorise_transactions", json!({"ids": [cafe]})).await;
    assert_eq!(test_support::code(&nothing), "invalid_input");

    // Deleting a label takes it off its transactions; undo puts it back where it was.
    let deleted = w.env.call(&w.ana, "delete_label", json!({"id": "Work"})).await.unwrap();
    let page = w
        .env
        .call(&w.ana, "search_transactions", json!({"category_id": groceries_category}))
        .await
        .unwrap();
    assert!(page["items"].as_array().unwrap().iter().all(|t| t.get("labels").is_none()), "{page}");
    w.env.call(&w.ana, "undo", json!({"audit_ids": deleted["audit_ids"]})).await.unwrap();
    let page =
        w.env.call(&w.ana, "search_transactions", json!({"label_ids": ["Work"]})).await.unwrap();
    assert_eq!(page["total"], 3, "{page}");

    // Deleting a category leaves its transactions uncategorised; undo puts them back.
    let eating_out = crate::fixtures::category(&w.env, &w.ana, "Eating out").await;
    let deleted = w.env.call(&w.ana, "delete_category", json!({"id": eating_out})).await.unwrap();
    let page =
        w.env.call(&w.ana, "search_transactions", json!({"uncategorised": true})).await.unwrap();
    assert_eq!(page["total"], 4, "{page}");
    w.env.call(&w.ana, "undo", json!({"audit_ids": deleted["audit_ids"]})).await.unwrap();
    let page = w
        .env
        .call(&w.ana, "search_transactions", json!({"category_id": eating_out}))
        .await
        .unwrap();
    assert_eq!(page["total"], 3, "{page}");

    // A deleted transaction comes back with its labels.
    let gone = w.env.call(&w.ana, "delete_transaction", json!({"id": w.groceries})).await.unwrap();
    assert_eq!(gone["name"], "Spotify family groceries");
    w.env.call(&w.ana, "undo", json!({"audit_ids": gone["audit_ids"]})).await.unwrap();
    let page =
        w.env.call(&w.ana, "search_transactions", json!({"text": "groceries"})).await.unwrap();
    assert_eq!(page["items"][0]["labels"][0]["name"], "Work");
}

#[tokio::test]
async fn accounts_keep_their_history_and_their_balances() {
    let w = World::new().await;
    let accounts = w.env.call(&w.ana, "list_accounts", json!({})).await.unwrap();
    let joint = &accounts["items"][0];
    assert_eq!(joint["name"], "Joint checking");
    assert_eq!(joint["balance"]["amount"], "1200.50");
    assert_eq!(joint["transaction_count"], 1);
    assert_eq!(accounts["items"][1]["name"], "Wallet");
    assert_eq!(accounts["items"].as_array().unwrap().len(), 2, "Bob's private one is not Ana's");

    let refused = w.env.call(&w.ana, "delete_account", json!({"id": w.joint})).await;
    assert_eq!(test_support::code(&refused), "conflict");
    assert!(refused.unwrap_err().text().render().contains("archived: true"));
    w.env.call(&w.ana, "update_account", json!({"id": w.joint, "archived": true})).await.unwrap();
    let listed = w.env.call(&w.ana, "list_accounts", json!({})).await.unwrap();
    assert_eq!(listed["items"].as_array().unwrap().len(), 1, "{listed}");
    let listed =
        w.env.call(&w.ana, "list_accounts", json!({"include_archived": true})).await.unwrap();
    assert_eq!(listed["items"][0]["archived"], true);
    let archived = w
        .env
        .call(
            &w.ana,
            "create_transaction",
            json!({"account_id": w.joint, "on": "2026-11-25", "amount": "-1", "payee": "X"}),
        )
        .await;
    assert_eq!(test_support::code(&archived), "conflict");
    // Its transactions stay searchable.
    let page =
        w.env.call(&w.ana, "search_transactions", json!({"account_id": w.joint})).await.unwrap();
    assert_eq!(page["total"], 1);

    let card = w
        .env
        .call(
            &w.ana,
            "create_account",
            json!({"name": "Amex", "kind": "credit card", "currency": "usd"}),
        )
        .await
        .unwrap();
    assert_eq!(card["kind"], "credit_card");
    assert_eq!(card["currency"], "USD");
    let owed = w
        .env
        .call(
            &w.ana,
            "record_balance",
            json!({"account_id": "Amex", "balance": "-420.10", "on": "2026-11-28"}),
        )
        .await
        .unwrap();
    assert_eq!(owed["balance"]["display"], "-$420.10");
    assert_eq!(owed["balance_on"], "2026-11-28");
    for (input, pointer) in [
        (json!({"account_id": "Amex", "balance": "1.001"}), "/balance"),
        (json!({"account_id": "Amex", "balance": "1", "on": "2099-01-01"}), "/on"),
    ] {
        match w.env.call(&w.ana, "record_balance", input.clone()).await {
            Err(ops::OpError::InvalidInput { pointer: p, .. }) => {
                assert!(p.starts_with(pointer), "{input}: {p}")
            }
            other => panic!("{input}: {other:?}"),
        }
    }
    // An account without transactions can go, and undo brings it back with its balance.
    let gone = w.env.call(&w.ana, "delete_account", json!({"id": id(&card)})).await.unwrap();
    w.env.call(&w.ana, "undo", json!({"audit_ids": gone["audit_ids"]})).await.unwrap();
    let listed = w.env.call(&w.ana, "list_accounts", json!({})).await.unwrap();
    assert_eq!(listed["items"][0]["name"], "Amex", "{listed}");
    assert_eq!(listed["items"][0]["balance"]["amount"], "-420.10", "{listed}");
}

#[tokio::test]
async fn another_members_private_account_and_another_household_stay_out_of_sight() {
    let w = World::new().await;
    // Bob sees his savings and the joint account; Ana only the joint one.
    let bobs = w.env.call(&w.bob, "search_transactions", json!({})).await.unwrap();
    assert_eq!(payees(&bobs), ["Bob's bonus", "Spotify family groceries"]);
    let anas = w.env.call(&w.ana, "search_transactions", json!({})).await.unwrap();
    assert_eq!(payees(&anas), ["Spotify family groceries"]);
    let cais = w.env.call(&w.cai, "search_transactions", json!({})).await.unwrap();
    assert_eq!(payees(&cais), ["Netflix"]);
    // A label counts only what the reader can see.
    let labels = w.env.call(&w.ana, "list_labels", json!({})).await.unwrap();
    assert_eq!(labels["items"][0]["transaction_count"], 1);
    let labels = w.env.call(&w.bob, "list_labels", json!({})).await.unwrap();
    assert_eq!(labels["items"][0]["transaction_count"], 2);
    assert_eq!(w.env.call(&w.cai, "list_labels", json!({})).await.unwrap()["items"], json!([]));

    // Naming what one cannot see is refused as if it did not exist.
    for (caller, input) in [
        (&w.ana, json!({"account_id": w.bobs_savings})),
        (&w.ana, json!({"account_id": "Bob's savings"})),
        (&w.ana, json!({"account_id": w.other_household_account})),
        (&w.cai, json!({"label_ids": [w.holiday]})),
    ] {
        let result = w.env.call(caller, "search_transactions", input.clone()).await;
        assert!(
            matches!(test_support::code(&result), "invalid_input" | "not_found"),
            "{input}: {result:?}"
        );
        let text = format!("{result:?}");
        assert!(
            !text.contains("Bob's savings") || input["account_id"] == "Bob's savings",
            "{text}"
        );
    }
    let onto_hidden = w
        .env
        .call(
            &w.ana,
            "create_transaction",
            json!({"account_id": w.bobs_savings, "on": "2026-11-25", "amount": "1", "payee": "X"}),
        )
        .await;
    assert_eq!(test_support::code(&onto_hidden), "invalid_input");
    let foreign_label = w
        .env
        .call(&w.cai, "create_transaction", json!({"account_id": w.other_household_account, "on": "2026-11-25", "amount": "1", "payee": "X", "label_ids": [w.holiday]}))
        .await;
    assert_eq!(test_support::code(&foreign_label), "invalid_input");
    let categorise = w
        .env
        .call(
            &w.ana,
            "categorise_transactions",
            json!({"ids": [w.groceries, w.bobs_bonus], "add_label_ids": [w.holiday]}),
        )
        .await;
    assert_eq!(test_support::code(&categorise), "invalid_input", "one hidden id refuses the call");
    // Ana cannot take the joint account private... unless it is hers: it is, so Bob cannot.
    let taken =
        w.env.call(&w.bob, "update_account", json!({"id": w.joint, "visibility": "private"})).await;
    assert_eq!(test_support::code(&taken), "invalid_input");

    // Deleting a label also takes it off Bob's private transaction, and Ana's undo restores it,
    // while Ana's activity never shows Bob's transaction.
    let deleted = w.env.call(&w.ana, "delete_label", json!({"id": w.holiday})).await.unwrap();
    let activity =
        w.env.call(&w.ana, "list_activity", json!({"limit": 500})).await.unwrap().to_string();
    assert!(!activity.contains("Bob's bonus"), "{activity}");
    // Its result counts Bob's transaction without saying what it is (and the world's budget,
    // which no longer tracks the label).
    assert_eq!(deleted["changes"].as_array().map(Vec::len), Some(4), "{deleted}");
    assert!(!deleted.to_string().contains("Bob"), "{deleted}");
    w.env.call(&w.ana, "undo", json!({"batch_id": deleted["batch_id"]})).await.unwrap();
    let bobs =
        w.env.call(&w.bob, "search_transactions", json!({"label_ids": ["holiday"]})).await.unwrap();
    assert_eq!(bobs["total"], 2, "{bobs}");
}

#[tokio::test]
async fn tokens_read_with_read_and_confirm_money_with_write() {
    let w = World::new().await;
    let (_, reader) = w.env.token(&w.ana, "read").await;
    let page = w.env.call(&reader, "search_transactions", json!({})).await.unwrap();
    assert_eq!(page["total"], 1);
    for (op, input) in [
        (
            "create_transaction",
            json!({"account_id": w.joint, "on": "2026-11-25", "amount": "-1", "payee": "X"}),
        ),
        ("create_label", json!({"name": "X"})),
        ("categorise_transactions", json!({"ids": [w.groceries], "category_id": null})),
    ] {
        let result = w.env.call(&reader, op, input).await;
        assert_eq!(test_support::code(&result), "forbidden", "{op}");
    }
    let (_, writer) = w.env.token(&w.ana, "write").await;
    // Labelling is not financial; recording money is, and is confirmed first.
    let labelled = w
        .env
        .call(
            &writer,
            "categorise_transactions",
            json!({"ids": [w.groceries], "category_id": null}),
        )
        .await;
    assert_eq!(test_support::code(&labelled), "ok", "{labelled:?}");
    let created = confirmed(
        &w.env,
        &writer,
        "create_transaction",
        json!({"account_id": w.joint, "on": "2026-11-25", "amount": "-3.20", "payee": "Bakery"}),
    )
    .await;
    assert_eq!(created["payee"], "Bakery");
    let deleted = w.env.call(&writer, "delete_transaction", json!({"id": id(&created)})).await;
    assert_eq!(test_support::code(&deleted), "confirmation_required");
}

#[tokio::test]
async fn transactions_over_rest_and_mcp() {
    let w = World::new().await;
    with_month(&w).await;
    let server = w.env.serve().await;
    let (token, _) = w.env.token(&w.ana, "read").await;
    let http = reqwest::Client::new();
    let response = http
        .get(server.url("/api/v1/ops/search_transactions?label_ids=holiday&label_ids=Work"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let page: Value = response.json().await.unwrap();
    assert_eq!(page["total"], 3, "{page}");

    let client = crate::mcp::http_client(server.url("/mcp"), &token, "ledger test").await;
    let result = crate::mcp::call(
        &client,
        "search_transactions",
        json!({"category_id": "Eating out", "min_amount": "-50"}),
    )
    .await;
    let page = result.structured_content.unwrap();
    assert_eq!(payees(&page), ["Corner Cafe", "Corner Cafe"]);
    client.cancel().await.unwrap();
}

const STATEMENT: &str = "Date,Description,Amount
2026-11-02,CORNER CAFE 1234 MADRID,-3.20
2026-11-02,CORNER CAFE 1234 MADRID,-3.20
2026-11-05,NETFLIX.COM 866-579,-12.99
2026-11-10,ACME PAYROLL NOV,2500.00
";

#[tokio::test]
async fn a_statement_is_imported_into_an_account_once_and_undone_whole() {
    let w = World::new().await;
    let import = |content: &str| {
        w.env.call(
            &w.ana,
            "import_transactions",
            json!({"account_id": "Joint checking", "content": content}),
        )
    };
    let first = import(STATEMENT).await.unwrap();
    // Two coffees of the same price on one day are two transactions.
    assert_eq!(first["imported"], 4, "{first}");
    assert_eq!(first["already_imported"], 0);
    assert_eq!(
        (first["from"].as_str(), first["to"].as_str()),
        (Some("2026-11-02"), Some("2026-11-10"))
    );
    let page = w.env.call(&w.ana, "search_transactions", json!({"text": "corner"})).await.unwrap();
    assert_eq!(page["total"], 2, "{page}");
    // The payee is the merchant as import groups it.
    assert_eq!(page["items"][0]["payee"], "Corner");
    assert_eq!(page["items"][0]["description"], "CORNER CAFE 1234 MADRID");
    assert_eq!(page["items"][0]["source"], "import");
    // The same statement again, and a longer one that overlaps it, add only what is new.
    let again = import(STATEMENT).await.unwrap();
    assert_eq!(
        (again["imported"].as_u64(), again["already_imported"].as_u64()),
        (Some(0), Some(4))
    );
    let longer = format!("{STATEMENT}2026-11-12,CORNER CAFE 1234 MADRID,-3.20\n");
    let more = import(&longer).await.unwrap();
    assert_eq!((more["imported"].as_u64(), more["already_imported"].as_u64()), (Some(1), Some(4)));
    let all =
        w.env.call(&w.ana, "search_transactions", json!({"account_id": w.joint})).await.unwrap();
    assert_eq!(all["total"], 6, "the world's one and five imported");
    // Undo takes the first import's four away and leaves the later one.
    w.env.call(&w.ana, "undo", json!({"batch_id": first["batch_id"]})).await.unwrap();
    let all =
        w.env.call(&w.ana, "search_transactions", json!({"account_id": w.joint})).await.unwrap();
    assert_eq!(payees(&all), ["Spotify family groceries", "Corner"], "{all}");

    // A statement in another currency, another member's private account, an unreadable file.
    let usd = w.usd_card().await;
    let wrong = w
        .env
        .call(&w.ana, "import_transactions", json!({"account_id": usd, "content": "Date,Description,Amount,Currency\n2026-11-02,CAFE,-3.20,EUR\n"}))
        .await;
    match wrong {
        Err(ops::OpError::InvalidInput { pointer, message }) => {
            assert_eq!(pointer, "/account_id");
            assert!(message.render().contains("EUR"), "{}", message.render());
        }
        other => panic!("{other:?}"),
    }
    let hidden = w
        .env
        .call(
            &w.ana,
            "import_transactions",
            json!({"account_id": w.bobs_savings, "content": STATEMENT}),
        )
        .await;
    assert_eq!(test_support::code(&hidden), "invalid_input");
    let unreadable = w
        .env
        .call(&w.ana, "import_transactions", json!({"account_id": w.joint, "content": "hello"}))
        .await;
    assert_eq!(test_support::code(&unreadable), "invalid_input");
    // An agent with a write token confirms it first: it adds money to the household's records.
    let (_, writer) = w.env.token(&w.ana, "write").await;
    let confirmed_import = confirmed(
        &w.env,
        &writer,
        "import_transactions",
        json!({"account_id": "Wallet", "content": STATEMENT}),
    )
    .await;
    assert_eq!(confirmed_import["imported"], 4);
}

#[tokio::test]
async fn an_import_proposes_the_charges_its_payments_paid_and_match_charge_confirms_one() {
    let w = World::new().await;
    let charge_before = w.env.call(&w.ana, "get_charge", json!({"id": w.charge})).await.unwrap();
    assert_eq!(charge_before["charged_on"], "2026-11-15", "{charge_before}");
    let imported = w
        .env
        .call(
            &w.ana,
            "import_transactions",
            json!({"account_id": w.joint, "content": "Date,Description,Amount\n2026-11-16,NETFLIX.COM 866-579,-13.49\n2026-11-17,CORNER CAFE,-3.20\n2026-11-18,NETFLIX REFUND,13.49\n"}),
        )
        .await
        .unwrap();
    let proposed = imported["proposed_matches"].as_array().unwrap();
    assert_eq!(proposed.len(), 1, "{imported}");
    assert_eq!(proposed[0]["charge_id"], w.charge);
    assert_eq!(proposed[0]["subscription"]["name"], "Netflix");
    assert_eq!(proposed[0]["paid_on"], "2026-11-16");
    let payment = proposed[0]["transaction_id"].as_i64().unwrap();

    // An agent with a write token confirms it first: it changes a charge's amount.
    let (_, writer) = w.env.token(&w.ana, "write").await;
    let asked = w
        .env
        .call(&writer, "match_charge", json!({"transaction_id": payment, "charge_id": w.charge}))
        .await;
    assert_eq!(test_support::code(&asked), "confirmation_required");
    let matched = w
        .env
        .call(&w.ana, "match_charge", json!({"transaction_id": payment, "charge_id": w.charge}))
        .await
        .unwrap();
    assert_eq!(matched["charge_id"], w.charge);
    let charge = w.env.call(&w.ana, "get_charge", json!({"id": w.charge})).await.unwrap();
    assert_eq!(
        (charge["status"].as_str(), charge["amount"]["amount"].as_str()),
        (Some("paid"), Some("13.49")),
        "{charge}"
    );

    // One charge, one payment; a payment far from the charge, money in, or Bob's private
    // charge are refused with what to do.
    let other =
        json!({"account_id": w.joint, "on": "2026-11-15", "amount": "-12.99", "payee": "Netflix"});
    let other = id(&w.env.call(&w.ana, "create_transaction", other).await.unwrap());
    let taken = w
        .env
        .call(&w.ana, "match_charge", json!({"transaction_id": other, "charge_id": w.charge}))
        .await
        .unwrap_err();
    assert_eq!(taken.code(), "conflict", "{taken}");
    let charges =
        w.env.call(&w.ana, "list_charges", json!({"subscription_id": w.netflix})).await.unwrap();
    let october = &charges["items"][1];
    assert_eq!(october["charged_on"], "2026-10-15");
    for (input, pointer) in [
        (json!({"transaction_id": w.groceries, "charge_id": id(october)}), "/charge_id"),
        (json!({"transaction_id": other, "charge_id": w.bobs_charge}), "/charge_id"),
    ] {
        let err = w.env.call(&w.ana, "match_charge", input.clone()).await.unwrap_err();
        assert!(
            matches!(&err, ops::OpError::InvalidInput { pointer: p, .. } if p == pointer),
            "{input}: {err:?}"
        );
    }
    let refund =
        w.env.call(&w.ana, "search_transactions", json!({"text": "refund"})).await.unwrap();
    let refund = id(&refund["items"][0]);
    let err = w
        .env
        .call(&w.ana, "match_charge", json!({"transaction_id": refund, "charge_id": w.charge}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("money out"), "{err}");

    // Undo puts the charge back as it was.
    w.env.call(&w.ana, "undo", json!({"batch_id": matched["batch_id"]})).await.unwrap();
    let charge = w.env.call(&w.ana, "get_charge", json!({"id": w.charge})).await.unwrap();
    assert_eq!(charge["amount"], charge_before["amount"]);
    assert_eq!(charge["status"], charge_before["status"]);
}

/// The texts of every page of a search for `text`, following its cursors.
async fn all_with_text(w: &World, caller: &ops::Caller, text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut input = json!({"text": text, "limit": 500});
    loop {
        let page = w.env.call(caller, "search_transactions", input.clone()).await.unwrap();
        found.extend(payees(&page));
        match page["next_cursor"].as_str() {
            Some(cursor) => input["cursor"] = json!(cursor),
            None => return found,
        }
    }
}

#[tokio::test]
async fn text_is_found_through_its_index_whatever_changed_the_rows() {
    let w = World::new().await;
    let search = |text: &str| w.env.call(&w.ana, "search_transactions", json!({"text": text}));
    let created = w
        .env
        .call(
            &w.ana,
            "create_transaction",
            json!({"account_id": w.joint, "on": "2026-11-20", "amount": "-4", "payee": "Bonus points shop"}),
        )
        .await
        .unwrap();
    // Bob's private "Bob's bonus" and household B's transactions are never Ana's.
    assert_eq!(payees(&search("BONUS").await.unwrap()), ["Bonus points shop"]);
    assert_eq!(payees(&search("netflix").await.unwrap()), Vec::<String>::new());
    let bobs = w.env.call(&w.bob, "search_transactions", json!({"text": "bonus"})).await.unwrap();
    assert_eq!(payees(&bobs), ["Bob's bonus", "Bonus points shop"]);

    // The text is searched for as written: quotes and the index's query words are plain text.
    let odd = r#"Bar "El Sol" OR NEAR(x*)"#;
    w.env
        .call(
            &w.ana,
            "create_transaction",
            json!({"account_id": w.joint, "on": "2026-11-21", "amount": "-9", "payee": odd}),
        )
        .await
        .unwrap();
    for (text, found) in [
        (r#""el sol""#, vec![odd]),
        ("or near(x*)", vec![odd]),
        (r#"sol" OR "bonus"#, vec![]),
        ("NEAR", vec![odd]),
        ("x*", vec![odd]),
        ("l s", vec![odd]),
        ("los", vec![]),
    ] {
        assert_eq!(payees(&search(text).await.unwrap()), found, "{text}");
    }

    // An update, its undo, a deletion and its undo each keep the index in step.
    let updated = w
        .env
        .call(&w.ana, "update_transaction", json!({"id": id(&created), "payee": "Loyalty shop"}))
        .await
        .unwrap();
    assert_eq!(search("bonus points").await.unwrap()["total"], 0);
    assert_eq!(payees(&search("loyalty").await.unwrap()), ["Loyalty shop"]);
    w.env.call(&w.ana, "undo", json!({"audit_ids": updated["audit_ids"]})).await.unwrap();
    assert_eq!(search("loyalty").await.unwrap()["total"], 0);
    assert_eq!(payees(&search("bonus points").await.unwrap()), ["Bonus points shop"]);
    let deleted =
        w.env.call(&w.ana, "delete_transaction", json!({"id": id(&created)})).await.unwrap();
    assert_eq!(search("bonus points").await.unwrap()["total"], 0);
    w.env.call(&w.ana, "undo", json!({"audit_ids": deleted["audit_ids"]})).await.unwrap();
    assert_eq!(payees(&search("bonus points").await.unwrap()), ["Bonus points shop"]);

    // More matches than a page reads whole: the search walks the dates instead, and finds
    // the same rows. An import's undo, and the undo of that, keep the index in step too.
    let mut statement = String::from("Date,Description,Amount\n");
    for i in 0..1200 {
        statement.push_str(&format!(
            "2026-{:02}-{:02},FARMACIA CENTRAL {i},-{}.50\n",
            1 + i % 10,
            1 + i % 28,
            1 + i % 40
        ));
    }
    statement.push_str("2026-11-02,FARMACIA RARA,-3.00\n");
    let import = w
        .env
        .call(&w.ana, "import_transactions", json!({"account_id": w.joint, "content": statement}))
        .await
        .unwrap();
    assert_eq!(import["imported"], 1201, "{import}");
    let bobs_private = json!({"account_id": w.bobs_savings, "on": "2026-11-03", "amount": "-2", "payee": "Farmacia privada"});
    w.env.call(&w.bob, "create_transaction", bobs_private).await.unwrap();
    let first = search("farmacia").await.unwrap();
    assert_eq!(
        (first["total"].as_u64(), first["total_is_lower_bound"].as_bool()),
        (Some(1000), Some(true)),
        "counted up to 1,000"
    );
    let found = all_with_text(&w, &w.ana, "farmacia").await;
    assert_eq!(found.len(), 1201);
    // The import names its merchant; Bob's private one is not Ana's.
    assert!(found.iter().all(|payee| payee == "Farmacia"), "{found:?}");
    let rare = search("rara").await.unwrap();
    assert_eq!(
        (rare["total"].as_u64(), rare["items"][0]["description"].as_str()),
        (Some(1), Some("FARMACIA RARA"))
    );
    assert_eq!(all_with_text(&w, &w.bob, "privada").await, ["Farmacia privada"]);
    assert_eq!(all_with_text(&w, &w.ana, "privada").await, Vec::<String>::new());

    let undone = w.env.call(&w.ana, "undo", json!({"batch_id": import["batch_id"]})).await.unwrap();
    assert_eq!(search("farmacia").await.unwrap()["total"], 0);
    w.env.call(&w.ana, "undo", json!({"audit_ids": undone["audit_ids"]})).await.unwrap();
    assert_eq!(all_with_text(&w, &w.ana, "farmacia").await.len(), 1201);
    assert_eq!(search("rara").await.unwrap()["total"], 1);
}
