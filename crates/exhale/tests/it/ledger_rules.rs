//! Transaction rules through the catalog and MCP: a preview by default with a count and a
//! sample, applying as one undoable batch, imports getting the rules on the way in, rules that
//! could never match refused, and what another member's private account keeps to itself.

use serde_json::{Value, json};

use crate::fixtures::{World, id};

async fn spend(w: &World, on: &str, amount: &str, payee: &str) -> i64 {
    let input = json!({"account_id": w.joint, "on": on, "amount": amount, "payee": payee});
    id(&w.env.call(&w.ana, "create_transaction", input).await.unwrap())
}

fn categories(page: &Value) -> Vec<Value> {
    page["items"].as_array().unwrap().iter().map(|t| t["category"]["name"].clone()).collect()
}

#[tokio::test]
async fn a_rule_previews_by_default_and_applies_as_one_undoable_batch() {
    let w = World::new().await;
    spend(&w, "2026-11-02", "-3.20", "Corner Cafe").await;
    spend(&w, "2026-11-03", "-3.20", "CORNER CAFE").await;
    spend(&w, "2026-10-03", "-12.00", "Cafe Central").await;
    spend(&w, "2026-11-04", "-12.99", "Netflix").await;
    w.env.call(&w.ana, "create_category", json!({"name": "Eating out"})).await.unwrap();
    w.env.call(&w.ana, "create_label", json!({"name": "Coffee"})).await.unwrap();
    let rule = w
        .env
        .call(
            &w.ana,
            "create_rule",
            json!({"name": "Cafes", "payee_contains": "cafe", "max_amount": "-1",
                   "set_category_id": "Eating out", "add_label_ids": ["coffee"]}),
        )
        .await
        .unwrap();
    assert_eq!(rule["max_amount"], "-1");
    assert_eq!(rule["set_category"]["name"], "Eating out");

    let preview = w.env.call(&w.ana, "apply_rule", json!({"id": "cafes"})).await.unwrap();
    assert_eq!(
        (preview["matched"].as_u64(), preview["affected"].as_u64()),
        (Some(3), Some(3)),
        "{preview}"
    );
    assert_eq!(preview["applied"], false);
    assert_eq!(preview["sample"].as_array().unwrap().len(), 3);
    let search = json!({"category_id": "Eating out"});
    assert_eq!(
        w.env.call(&w.ana, "search_transactions", search.clone()).await.unwrap()["total"],
        0
    );

    let applied =
        w.env.call(&w.ana, "apply_rule", json!({"id": id(&rule), "apply": true})).await.unwrap();
    assert_eq!(applied["applied"], true);
    let found = w.env.call(&w.ana, "search_transactions", search.clone()).await.unwrap();
    assert_eq!(categories(&found), vec![json!("Eating out"); 3], "{found}");
    assert_eq!(found["items"][0]["labels"][0]["name"], "Coffee");
    // Nothing is left to change; an undo of the batch puts all three back.
    let again = w.env.call(&w.ana, "apply_rule", json!({"id": "Cafes"})).await.unwrap();
    assert_eq!((again["matched"].as_u64(), again["affected"].as_u64()), (Some(3), Some(0)));
    w.env.call(&w.ana, "undo", json!({"batch_id": applied["batch_id"]})).await.unwrap();
    assert_eq!(w.env.call(&w.ana, "search_transactions", search).await.unwrap()["total"], 0);

    // Over MCP with a write token, the preview is the same.
    let server = w.env.serve().await;
    let (token, _) = w.env.token(&w.ana, "write").await;
    let client = crate::mcp::http_client(server.url("/mcp"), &token, "rules test").await;
    let result = crate::mcp::call(&client, "apply_rule", json!({"id": "Cafes"})).await;
    assert_eq!(result.structured_content.unwrap()["affected"], 3);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_import_gets_the_rules_and_its_undo_takes_them_away() {
    let w = World::new().await;
    w.env.call(&w.ana, "create_category", json!({"name": "Salary"})).await.unwrap();
    w.env
        .call(
            &w.ana,
            "create_rule",
            json!({"name": "Pay", "description_contains": "payroll", "min_amount": "0",
                   "account_id": "Joint checking", "set_category_id": "Salary", "add_label_ids": ["holiday"]}),
        )
        .await
        .unwrap();
    let imported = w
        .env
        .call(
            &w.ana,
            "import_transactions",
            json!({"account_id": "Joint checking",
                   "content": "Date,Description,Amount\n2026-11-02,CORNER CAFE,-3.20\n2026-11-10,ACME PAYROLL NOV,2500.00\n"}),
        )
        .await
        .unwrap();
    assert_eq!(imported["imported"], 2);
    let pay =
        w.env.call(&w.ana, "search_transactions", json!({"category_id": "Salary"})).await.unwrap();
    assert_eq!(pay["total"], 1, "{pay}");
    assert_eq!(pay["items"][0]["amount"]["amount"], "2500.00");
    assert_eq!(pay["items"][0]["labels"][0]["name"], "holiday");
    w.env.call(&w.ana, "undo", json!({"batch_id": imported["batch_id"]})).await.unwrap();
    let pay =
        w.env.call(&w.ana, "search_transactions", json!({"category_id": "Salary"})).await.unwrap();
    assert_eq!(pay["total"], 0);
    // The account a rule matches on is kept while the rule is.
    let wallet_rule = w
        .env
        .call(
            &w.ana,
            "create_rule",
            json!({"name": "Cash", "account_id": w.wallet, "add_label_ids": ["holiday"]}),
        )
        .await
        .unwrap();
    let err = w.env.call(&w.ana, "delete_account", json!({"id": w.wallet})).await.unwrap_err();
    assert_eq!(err.code(), "conflict");
    assert!(err.to_string().contains("Cash"), "{err}");
    w.env.call(&w.ana, "delete_rule", json!({"id": id(&wallet_rule)})).await.unwrap();
    w.env.call(&w.ana, "delete_account", json!({"id": w.wallet})).await.unwrap();
}

#[tokio::test]
async fn a_rule_that_could_never_match_or_does_nothing_is_refused() {
    let w = World::new().await;
    for (input, pointer, says) in [
        (
            json!({"name": "R", "set_category_id": "Music"}),
            "/payee_contains",
            "at least one condition",
        ),
        (json!({"name": "R", "payee_contains": "x"}), "/set_category_id", "something to do"),
        (
            json!({"name": "R", "min_amount": "-10", "max_amount": "-20", "set_category_id": "Music"}),
            "/max_amount",
            "could never match",
        ),
        (
            json!({"name": "R", "payee_contains": "  ", "set_category_id": "Music"}),
            "/payee_contains",
            "matches everything",
        ),
        (
            json!({"name": "R", "payee_contains": "x", "add_label_ids": [9_999_999]}),
            "/add_label_ids/0",
            "The ones you can see: holiday (id ",
        ),
        (
            json!({"name": "R", "account_id": w.other_household_account, "set_category_id": "Music"}),
            "/account_id",
            "The ones you can see: Joint checking (id ",
        ),
        (
            json!({"name": "R", "account_id": w.bobs_savings, "set_category_id": "Music"}),
            "/account_id",
            "The ones you can see: Joint checking (id ",
        ),
    ] {
        let err = w.env.call(&w.ana, "create_rule", input.clone()).await.unwrap_err();
        let at = match &err {
            ops::OpError::InvalidInput { pointer, .. } => pointer.as_str(),
            _ => "",
        };
        assert_eq!(at, pointer, "{input}: {err:?}");
        assert!(err.to_string().contains(says), "{input}: {err}");
    }
    w.env
        .call(
            &w.ana,
            "create_rule",
            json!({"name": "R", "payee_contains": "x", "set_category_id": "Music"}),
        )
        .await
        .unwrap();
    let twice = w
        .env
        .call(
            &w.ana,
            "create_rule",
            json!({"name": "r", "payee_contains": "y", "set_category_id": "Music"}),
        )
        .await
        .unwrap_err();
    assert_eq!(twice.code(), "conflict");

    // Bob's rule on his private account is his; Ana's rules never reach his transactions.
    w.env
        .call(
            &w.bob,
            "create_rule",
            json!({"name": "Savings", "account_id": w.bobs_savings, "set_category_id": "Music"}),
        )
        .await
        .unwrap();
    let anas = w.env.call(&w.ana, "list_rules", json!({})).await.unwrap();
    assert!(!anas.to_string().contains("Savings"), "{anas}");
    let err = w.env.call(&w.ana, "apply_rule", json!({"id": "Savings"})).await.unwrap_err();
    assert_eq!(err.code(), "not_found", "{err}");
    let bonus = w
        .env
        .call(
            &w.ana,
            "create_rule",
            json!({"name": "Bonus", "payee_contains": "bonus", "set_category_id": "Music"}),
        )
        .await
        .unwrap();
    let run =
        w.env.call(&w.ana, "apply_rule", json!({"id": id(&bonus), "apply": true})).await.unwrap();
    assert_eq!(run["matched"], 0, "{run}");
    let bobs = w.env.call(&w.bob, "apply_rule", json!({"id": id(&bonus)})).await.unwrap();
    assert_eq!(bobs["matched"], 1, "{bobs}");
    // And another household sees none of them.
    assert_eq!(w.env.call(&w.cai, "list_rules", json!({})).await.unwrap()["items"], json!([]));
}
