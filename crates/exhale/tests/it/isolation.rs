//! Nothing crosses households, and a private item exists only for its owner: every read op,
//! and writes aimed at someone else's ids, answer as if it did not exist.

use serde_json::{Value, json};

use crate::fixtures::World;

/// An input for every read op (most take none).
fn read_input(op: &str, w: &World) -> Value {
    match op {
        "get_subscription" => json!({"id": w.netflix}),
        "get_charge" => json!({"id": w.charge}),
        "get_budget" => json!({"id": w.budget}),
        "list_upcoming_charges" => json!({"days": 366}),
        "get_spending_history" => json!({"months": 60}),
        "list_price_changes" => json!({"since": "2000-01-01"}),
        "find_tools" => json!({"query": "subscriptions payment methods members"}),
        "list_banks" => json!({"country": "FI"}),
        // Matching with private subscriptions is checked in import.rs (the statement would
        // name them itself).
        "parse_statement" => json!({"content": (1..=4)
            .map(|m| format!("2026-0{m}-01,GYMPOWER 12{m}4,-30.00\n"))
            .collect::<String>()}),
        _ => json!({}),
    }
}

#[tokio::test]
async fn no_read_op_shows_another_household_or_a_private_item() {
    let w = World::new().await;
    w.env
        .call(
            &w.ana,
            "change_price",
            json!({"id": w.netflix, "amount": "13.99", "effective_on": "2026-11-20"}),
        )
        .await
        .unwrap();
    w.env
        .call(
            &w.bob,
            "change_price",
            json!({"id": w.bobs_gym, "amount": "35", "effective_on": "2026-11-20"}),
        )
        .await
        .unwrap();
    let reads: Vec<&str> =
        ops::all().iter().filter(|m| m.info.hints.read_only).map(|m| m.name()).collect();
    for op in reads {
        // The banks of a country are Enable Banking's, asked with nothing of the household;
        // this server has no bank feeds, so it says so (bank_sync.rs asks a fake).
        if op == "list_banks" {
            let refused = w.env.call(&w.cai, op, read_input(op, &w)).await;
            assert_eq!(test_support::code(&refused), "conflict", "{refused:?}");
            continue;
        }
        // Household B sees none of household A.
        let theirs = w.env.call(&w.cai, op, read_input(op, &w)).await;
        if matches!(op, "get_subscription" | "get_charge" | "get_budget") {
            assert_eq!(test_support::code(&theirs), "not_found");
        } else {
            let text = theirs.unwrap_or_else(|e| panic!("{op}: {e}")).to_string();
            for secret in ["Spotify", "Bob", "Visa", "ana@a.test", "family"] {
                assert!(
                    !text.contains(secret),
                    "{op} shows household A's {secret} to household B: {text}"
                );
            }
        }
        // Ana sees none of Bob's private subscription or card.
        let anas = w
            .env
            .call(&w.ana, op, read_input(op, &w))
            .await
            .unwrap_or_else(|e| panic!("{op}: {e}"))
            .to_string();
        for secret in ["Bob's gym", "Bob's card", "Bob's savings", "Bob's bonus"] {
            assert!(!anas.contains(secret), "{op} shows Bob's private {secret} to Ana");
        }
    }
}

#[tokio::test]
async fn foreign_and_private_ids_are_not_found_for_every_id_op() {
    let w = World::new().await;
    let attempts = [
        ("get_subscription", json!({"id": w.other_household_sub})),
        ("get_subscription", json!({"id": w.bobs_gym})),
        ("get_charge", json!({"id": w.bobs_charge})),
        ("update_subscription", json!({"id": w.bobs_gym, "name": "Mine"})),
        ("delete_subscription", json!({"id": w.other_household_sub})),
        ("delete_subscription", json!({"id": w.bobs_gym})),
        ("change_price", json!({"id": w.bobs_gym, "amount": "1"})),
        ("pause_subscription", json!({"id": w.other_household_sub})),
        ("update_charge", json!({"id": w.bobs_charge, "status": "failed"})),
        ("update_payment_method", json!({"id": w.bobs_card, "name": "Mine"})),
        ("delete_payment_method", json!({"id": w.bobs_card})),
        ("update_member", json!({"id": w.cai.member_id, "name": "X"})),
        ("update_account", json!({"id": w.bobs_savings, "name": "Mine"})),
        ("update_account", json!({"id": w.other_household_account, "name": "Mine"})),
        ("delete_account", json!({"id": w.bobs_savings})),
        ("record_balance", json!({"account_id": w.bobs_savings, "balance": "1"})),
        ("update_transaction", json!({"id": w.bobs_bonus, "payee": "Mine"})),
        ("update_transaction", json!({"id": w.other_household_transaction, "payee": "Mine"})),
        ("delete_transaction", json!({"id": w.bobs_bonus})),
        ("delete_transaction", json!({"id": w.other_household_transaction})),
        ("update_label", json!({"id": 999_999, "name": "X"})),
    ];
    for (op, input) in attempts {
        let result = w.env.call(&w.ana, op, input.clone()).await;
        assert_eq!(test_support::code(&result), "not_found", "{op} {input}");
    }
    // Ids of another household used as references are refused the same way.
    let cai_category = crate::fixtures::category(&w.env, &w.cai, "Streaming").await;
    let result = w
        .env
        .call(&w.ana, "update_subscription", json!({"id": w.netflix, "category_id": cai_category}))
        .await;
    assert_eq!(test_support::code(&result), "invalid_input");
    let result = w
        .env
        .call(
            &w.ana,
            "update_subscription",
            json!({"id": w.netflix, "payment_method_id": w.bobs_card}),
        )
        .await;
    assert_eq!(test_support::code(&result), "invalid_input");
    // Tag changes touch only what the caller can see: Bob's private gym keeps "family".
    w.env.call(&w.ana, "rename_tag", json!({"from": "family", "to": "home"})).await.unwrap();
    let gym = w.env.call(&w.bob, "get_subscription", json!({"id": w.bobs_gym})).await.unwrap();
    assert_eq!(gym["tags"], json!(["family"]));
    // Activity about Bob's private items stays Bob's.
    let activity =
        w.env.call(&w.ana, "list_activity", json!({"limit": 500})).await.unwrap().to_string();
    assert!(!activity.contains("Bob's gym"));
    assert!(
        w.env
            .call(&w.bob, "list_activity", json!({"limit": 500}))
            .await
            .unwrap()
            .to_string()
            .contains("Bob's gym")
    );
}

#[tokio::test]
async fn another_members_private_card_stays_hidden_when_linked_to_a_shared_subscription() {
    let w = World::new().await;
    w.env
        .call(
            &w.bob,
            "update_subscription",
            json!({"id": w.spotify, "payment_method_id": w.bobs_card}),
        )
        .await
        .unwrap();
    for (op, input) in [
        ("get_subscription", json!({"id": w.spotify})),
        ("list_subscriptions", json!({})),
        ("list_upcoming_charges", json!({"days": 366})),
        ("get_context", json!({})),
        ("get_spending_summary", json!({"group_by": "payment_method"})),
        ("export_data", json!({})),
    ] {
        let text = w.env.call(&w.ana, op, input).await.unwrap().to_string();
        assert!(!text.contains("Bob's card"), "{op} shows Bob's private card to Ana");
    }
    let spotify = w.env.call(&w.ana, "get_subscription", json!({"id": w.spotify})).await.unwrap();
    assert!(spotify.get("payment_method").is_none(), "Ana sees no card on Spotify: {spotify}");
    let probe = w
        .env
        .call(&w.ana, "list_subscriptions", json!({"payment_method_id": w.bobs_card}))
        .await
        .unwrap();
    assert_eq!(probe["total"], 0, "filtering by a hidden card finds nothing");
    // Ana's edits keep Bob's link.
    w.env
        .call(&w.ana, "update_subscription", json!({"id": w.spotify, "name": "Spotify Duo"}))
        .await
        .unwrap();
    let bobs_view = w.env.call(&w.bob, "get_subscription", json!({"id": w.spotify})).await.unwrap();
    assert_eq!(bobs_view["payment_method"]["name"], "Bob's card");
}

#[tokio::test]
async fn history_of_an_item_made_private_becomes_private_and_cannot_be_undone_by_others() {
    let w = World::new().await;
    let refund = w
        .env
        .call(&w.ana, "update_charge", json!({"id": w.charge, "status": "refunded"}))
        .await
        .unwrap();
    w.env
        .call(&w.ana, "update_subscription", json!({"id": w.netflix, "visibility": "private"}))
        .await
        .unwrap();
    let bobs =
        w.env.call(&w.bob, "list_activity", json!({"limit": 500})).await.unwrap().to_string();
    assert!(!bobs.contains("Netflix"), "Bob still sees the history of Ana's now private Netflix");
    let undo = w.env.call(&w.bob, "undo", json!({"audit_ids": refund["audit_ids"]})).await;
    assert_eq!(test_support::code(&undo), "invalid_input", "the entry does not exist for Bob");
    // The latest changes the refusal offers instead are only Bob's to see.
    let offered = undo.unwrap_err().text().render();
    assert!(!offered.contains("Netflix"), "{offered}");
    let charge = w
        .env
        .call(&w.ana, "list_charges", json!({"subscription_id": w.netflix, "limit": 1}))
        .await
        .unwrap();
    assert_eq!(charge["items"][0]["status"], "refunded");
}

#[tokio::test]
async fn members_cannot_take_someone_elses_subscription_private() {
    let w = World::new().await;
    let taken = w
        .env
        .call(
            &w.bob,
            "update_subscription",
            json!({"id": w.netflix, "owner_id": w.bob.member_id, "visibility": "private"}),
        )
        .await;
    assert_eq!(test_support::code(&taken), "forbidden");
    let given = w
        .env
        .call(&w.bob, "update_subscription", json!({"id": w.netflix, "owner_id": w.bob.member_id}))
        .await;
    assert_eq!(test_support::code(&given), "forbidden");
    // The household owner may reassign.
    let reassigned = w
        .env
        .call(&w.ana, "update_subscription", json!({"id": w.netflix, "owner_id": w.bob.member_id}))
        .await;
    assert_eq!(test_support::code(&reassigned), "ok");
}

/// A page of subscriptions read in SQL (`store::subscriptions::list_page`) is the page the
/// full path computes: the same rows, order, totals and cursors for every filter it takes,
/// and nothing private or foreign. Asking for every status sends the same request down the
/// full path.
#[tokio::test]
async fn a_page_read_in_sql_is_the_page_the_full_path_computes() {
    let w = World::new().await;
    let more = [
        (
            &w.ana,
            json!({"name": "alpha", "amount": "1", "next_charge_on": "2026-12-05", "cycle": "monthly", "category_id": w.music}),
        ),
        (
            &w.ana,
            json!({"name": "Beta", "amount": "2", "next_charge_on": "2026-12-05", "cycle": "weekly"}),
        ),
        (
            &w.ana,
            json!({"name": "zeta", "amount": "3", "next_charge_on": "2026-12-05", "cycle": "yearly", "payment_method_id": w.card}),
        ),
        (
            &w.bob,
            json!({"name": "Bob's music", "amount": "4", "next_charge_on": "2026-12-05", "cycle": "monthly", "category_id": w.music, "payment_method_id": w.bobs_card}),
        ),
    ];
    for (who, input) in more {
        w.env.call(who, "create_subscription", input).await.unwrap();
    }
    let filters = [
        json!({}),
        json!({"category_id": w.streaming}),
        json!({"category_id": w.music}),
        json!({"uncategorised": true}),
        json!({"uncategorised": false}),
        json!({"payment_method_id": w.card}),
        json!({"payment_method_id": w.bobs_card}),
        json!({"owner_id": w.bob.member_id}),
        json!({"visibility": "private"}),
        json!({"visibility": "household"}),
    ];
    let windows = [
        json!({}),
        json!({"limit": 2}),
        json!({"limit": 2, "cursor": "o1"}),
        json!({"limit": 1, "cursor": "o4"}),
    ];
    for caller in [&w.ana, &w.bob, &w.cai] {
        for filter in &filters {
            for sort in ["name", "created"] {
                for window in &windows {
                    let mut input = filter.clone();
                    input["sort"] = json!(sort);
                    input.as_object_mut().unwrap().extend(window.as_object().unwrap().clone());
                    let in_sql = w.env.call(caller, "list_subscriptions", input.clone()).await;
                    input["status"] = json!(["trial", "active", "paused", "cancelled"]);
                    let full = w.env.call(caller, "list_subscriptions", input.clone()).await;
                    let in_sql = match (in_sql, full) {
                        (Ok(in_sql), Ok(full)) => {
                            assert_eq!(in_sql, full, "{input}");
                            in_sql
                        }
                        // Another household's category or card is refused the same way.
                        (Err(in_sql), Err(full)) => {
                            assert_eq!(in_sql.code(), full.code(), "{input}");
                            continue;
                        }
                        (in_sql, full) => panic!("{input}: {in_sql:?} but {full:?}"),
                    };
                    for item in in_sql["items"].as_array().unwrap() {
                        let mine = caller.member_id == w.bob.member_id;
                        assert!(mine || item["name"] != "Bob's gym", "{input}: {item}");
                        let home = caller.household_id == w.ana.household_id;
                        assert!(home || item["name"] == "Netflix", "{input}: {item}");
                        if filter.get("owner_id").is_some() {
                            assert_eq!(item["owner"], "Bob", "{input}");
                        }
                    }
                }
            }
        }
    }
    // Another member's private card matches no filter, for a subscription the caller sees.
    let by_card = w
        .env
        .call(&w.ana, "list_subscriptions", json!({"payment_method_id": w.bobs_card}))
        .await
        .unwrap();
    assert_eq!(by_card["total"], 0, "{by_card}");
    let by_card = w
        .env
        .call(&w.bob, "list_subscriptions", json!({"payment_method_id": w.bobs_card}))
        .await
        .unwrap();
    assert_eq!(by_card["total"], 2, "{by_card}");
}
