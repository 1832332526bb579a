//! Names where ids are and dates relative to today, through the invoker and over MCP.
//!
//! Every input that takes an id also takes the name, and does exactly what the id does; an
//! ambiguous name lists the candidates with their ids; another member's private item and
//! another household's are never matched nor suggested; phrases are read in the household's
//! time zone (month ends, leap days, DST changes); a date in the past where only the future
//! makes sense says what today is; a confirmation applies what its preview read.

use std::collections::BTreeSet;

use jiff::SignedDuration;
use ops::OpError;
use serde_json::{Value, json};

use crate::{
    fixtures::{World, id},
    mcp::{call, client_without_token, text},
};

/// Every input property whose schema takes an id or a name, as `op` and JSON pointer (array
/// items as `/0`).
fn id_or_name_inputs() -> BTreeSet<(String, String)> {
    fn walk(op: &str, path: &str, schema: &Value, out: &mut BTreeSet<(String, String)>) {
        let takes_a_name = schema.get("oneOf").and_then(Value::as_array).is_some_and(|branches| {
            branches.iter().any(|b| b["type"] == "integer")
                && branches.iter().any(|b| b["type"] == "string")
        });
        if takes_a_name {
            out.insert((op.to_owned(), path.to_owned()));
        }
        if let Some(Value::Object(properties)) = schema.get("properties") {
            for (name, property) in properties {
                walk(op, &format!("{path}/{name}"), property, out);
            }
        }
        if let Some(items) = schema.get("items") {
            walk(op, &format!("{path}/0"), items, out);
        }
    }
    let mut out = BTreeSet::new();
    for meta in ops::all() {
        walk(meta.name(), "", &meta.input_schema(), &mut out);
    }
    out
}

fn without_resolved(result: &Result<Value, OpError>) -> Result<Value, String> {
    match result {
        Ok(Value::Object(map)) => {
            let mut map = map.clone();
            map.remove("resolved");
            Ok(Value::Object(map))
        }
        Ok(other) => Ok(other.clone()),
        Err(err) => Err(format!("{} {}", err.code(), err.text().render())),
    }
}

#[tokio::test]
async fn every_input_that_takes_an_id_takes_the_name_and_does_the_same() {
    let w = World::new().await;
    let (ana, bob, eve) = (w.ana.member_id, w.bob.member_id, w.eve.member_id);
    let paused = id(&w
        .env
        .call(&w.ana, "create_subscription", json!({"name": "Gym pass", "amount": "20", "cycle": "monthly", "next_charge_on": "2026-12-05"}))
        .await
        .unwrap());
    w.env.call(&w.ana, "pause_subscription", json!({"id": paused})).await.unwrap();
    let new_sub =
        json!({"name": "Hulu", "amount": "5", "cycle": "monthly", "next_charge_on": "2026-12-20"});
    let with = |base: &Value, field: &str, value: Value| {
        let mut input = base.clone();
        input[field] = value;
        input
    };
    let import = |field: &str, value: i64| {
        json!({"items": [{"name": "Hulu", "amount": "5", "cycle": "monthly", field: value,
                          "charges": [{"date": "2026-11-20", "amount": "5"}]}]})
    };
    // (op, input written with ids, the pointer to name, the name as a person would type it)
    let cases: Vec<(&str, Value, &str, &str)> = vec![
        ("get_subscription", json!({"id": w.netflix}), "/id", "netflix"),
        ("update_subscription", json!({"id": w.netflix, "notes": "x"}), "/id", "NETFLIX"),
        (
            "update_subscription",
            json!({"id": w.netflix, "category_id": w.music}),
            "/category_id",
            "músic",
        ),
        (
            "update_subscription",
            json!({"id": w.netflix, "payment_method_id": w.card}),
            "/payment_method_id",
            "visa",
        ),
        ("update_subscription", json!({"id": w.netflix, "owner_id": bob}), "/owner_id", "bob"),
        ("reschedule_subscription", json!({"id": w.netflix, "cycle": "yearly"}), "/id", "Netflix"),
        ("change_price", json!({"id": w.netflix, "amount": "13.99"}), "/id", "netflix"),
        ("pause_subscription", json!({"id": w.netflix}), "/id", "netflix"),
        ("resume_subscription", json!({"id": paused}), "/id", "gym pass"),
        ("cancel_subscription", json!({"id": w.spotify}), "/id", "spotify"),
        ("delete_subscription", json!({"id": w.spotify}), "/id", "Spotify"),
        (
            "bulk_update_subscriptions",
            json!({"ids": [w.netflix], "action": "pause"}),
            "/ids/0",
            "netflix",
        ),
        (
            "bulk_update_subscriptions",
            json!({"ids": [w.netflix], "action": "update", "category_id": w.music}),
            "/category_id",
            "music",
        ),
        (
            "bulk_update_subscriptions",
            json!({"ids": [w.spotify], "action": "update", "payment_method_id": w.card}),
            "/payment_method_id",
            "Visa",
        ),
        ("list_subscriptions", json!({"category_id": w.streaming}), "/category_id", "streaming"),
        ("list_subscriptions", json!({"payment_method_id": w.card}), "/payment_method_id", "visa"),
        ("list_subscriptions", json!({"owner_id": ana}), "/owner_id", "home owner"),
        (
            "create_subscription",
            with(&new_sub, "category_id", json!(w.streaming)),
            "/category_id",
            "Streaming",
        ),
        (
            "create_subscription",
            with(&new_sub, "payment_method_id", json!(w.card)),
            "/payment_method_id",
            "visa",
        ),
        ("create_subscription", with(&new_sub, "owner_id", json!(eve)), "/owner_id", "eve"),
        ("list_charges", json!({"subscription_id": w.netflix}), "/subscription_id", "netflix"),
        (
            "list_upcoming_charges",
            json!({"subscription_id": w.spotify}),
            "/subscription_id",
            "spotify",
        ),
        (
            "list_price_changes",
            json!({"subscription_id": w.netflix}),
            "/subscription_id",
            "netflix",
        ),
        ("update_category", json!({"id": w.streaming, "emoji": "📺"}), "/id", "streaming"),
        ("delete_category", json!({"id": w.music}), "/id", "music"),
        (
            "delete_category",
            json!({"id": w.music, "move_to_id": w.streaming}),
            "/move_to_id",
            "streaming",
        ),
        (
            "merge_categories",
            json!({"source_ids": [w.music], "target_id": w.streaming}),
            "/source_ids/0",
            "music",
        ),
        (
            "merge_categories",
            json!({"source_ids": [w.music], "target_id": w.streaming}),
            "/target_id",
            "streaming",
        ),
        ("update_payment_method", json!({"id": w.card, "name": "Visa 2"}), "/id", "visa"),
        ("delete_payment_method", json!({"id": w.card}), "/id", "VISA"),
        ("update_member", json!({"id": bob, "name": "Robert"}), "/id", "bob"),
        ("remove_member", json!({"id": eve}), "/id", "Eve"),
        (
            "import_subscriptions",
            import("category_id", w.streaming),
            "/items/0/category_id",
            "streaming",
        ),
        (
            "import_subscriptions",
            import("payment_method_id", w.card),
            "/items/0/payment_method_id",
            "visa",
        ),
        ("list_activity", json!({"member_id": ana}), "/member_id", "Home owner"),
        ("update_account", json!({"id": w.joint, "name": "Joint"}), "/id", "joint checking"),
        ("delete_account", json!({"id": w.wallet}), "/id", "WALLET"),
        (
            "record_balance",
            json!({"account_id": w.joint, "balance": "1"}),
            "/account_id",
            "joint checking",
        ),
        ("search_transactions", json!({"account_id": w.joint}), "/account_id", "joint checking"),
        ("search_transactions", json!({"category_id": w.music}), "/category_id", "music"),
        ("search_transactions", json!({"label_ids": [w.holiday]}), "/label_ids/0", "Holiday"),
        (
            "create_transaction",
            json!({"account_id": w.joint, "on": "2026-11-28", "amount": "-1", "payee": "X"}),
            "/account_id",
            "joint checking",
        ),
        (
            "create_transaction",
            json!({"account_id": w.joint, "on": "2026-11-28", "amount": "-1", "payee": "X", "category_id": w.music}),
            "/category_id",
            "music",
        ),
        (
            "create_transaction",
            json!({"account_id": w.joint, "on": "2026-11-28", "amount": "-1", "payee": "X", "label_ids": [w.holiday]}),
            "/label_ids/0",
            "holiday",
        ),
        (
            "update_transaction",
            json!({"id": w.groceries, "category_id": w.music}),
            "/category_id",
            "music",
        ),
        (
            "update_transaction",
            json!({"id": w.groceries, "label_ids": [w.holiday]}),
            "/label_ids/0",
            "HOLIDAY",
        ),
        (
            "categorise_transactions",
            json!({"ids": [w.groceries], "category_id": w.music}),
            "/category_id",
            "music",
        ),
        (
            "categorise_transactions",
            json!({"ids": [w.groceries], "add_label_ids": [w.holiday]}),
            "/add_label_ids/0",
            "holiday",
        ),
        (
            "categorise_transactions",
            json!({"ids": [w.groceries], "remove_label_ids": [w.holiday]}),
            "/remove_label_ids/0",
            "holiday",
        ),
        ("update_label", json!({"id": w.holiday, "colour": "#123456"}), "/id", "holiday"),
        ("delete_label", json!({"id": w.holiday}), "/id", "Holiday"),
        ("get_budget", json!({"id": w.budget}), "/id", "everyday"),
        (
            "split_transaction",
            json!({"id": w.groceries, "parts": [{"amount": "-50", "category_id": w.music}, {"amount": "-4.30"}]}),
            "/parts/0/category_id",
            "music",
        ),
        ("apply_rule", json!({"id": w.rule}), "/id", "groceries"),
        ("delete_rule", json!({"id": w.rule}), "/id", "GROCERIES"),
        ("update_rule", json!({"id": w.rule, "name": "G"}), "/id", "Groceries"),
        (
            "update_rule",
            json!({"id": w.rule, "rule": {"account_id": w.joint, "set_category_id": w.music}}),
            "/rule/account_id",
            "Joint checking",
        ),
        (
            "update_rule",
            json!({"id": w.rule, "rule": {"payee_contains": "x", "set_category_id": w.music}}),
            "/rule/set_category_id",
            "MUSIC",
        ),
        (
            "update_rule",
            json!({"id": w.rule, "rule": {"payee_contains": "x", "add_label_ids": [w.holiday]}}),
            "/rule/add_label_ids/0",
            "holiday",
        ),
        (
            "create_rule",
            json!({"name": "R", "account_id": w.joint, "set_category_id": w.music}),
            "/account_id",
            "joint checking",
        ),
        (
            "create_rule",
            json!({"name": "R", "payee_contains": "x", "set_category_id": w.music}),
            "/set_category_id",
            "music",
        ),
        (
            "create_rule",
            json!({"name": "R", "payee_contains": "x", "add_label_ids": [w.holiday]}),
            "/add_label_ids/0",
            "holiday",
        ),
        ("spending_by_category", json!({"account_id": w.joint}), "/account_id", "Joint checking"),
        ("spending_by_category", json!({"category_id": w.music}), "/category_id", "MUSIC"),
        ("update_budget", json!({"id": w.budget, "amount": "5"}), "/id", "EVERYDAY"),
        ("delete_budget", json!({"id": w.budget}), "/id", "Everyday"),
        (
            "create_budget",
            json!({"name": "B", "amount": "5", "period": "monthly", "category_ids": [w.music]}),
            "/category_ids/0",
            "music",
        ),
        (
            "create_budget",
            json!({"name": "B", "amount": "5", "period": "monthly", "label_ids": [w.holiday]}),
            "/label_ids/0",
            "holiday",
        ),
        (
            "import_transactions",
            json!({"account_id": w.joint, "content": "Date,Description,Amount\n2026-11-02,CAFE,-3.20\n"}),
            "/account_id",
            "joint checking",
        ),
    ];
    let covered: BTreeSet<(String, String)> =
        cases.iter().map(|(op, _, pointer, _)| (op.to_string(), pointer.to_string())).collect();
    assert_eq!(covered, id_or_name_inputs(), "every id-or-name input has a case, and only those");
    let before = w.env.dump().await;
    for (op, by_id, pointer, name) in cases {
        let expected_id = by_id.pointer(pointer).and_then(Value::as_i64).unwrap();
        let mut by_name = by_id.clone();
        *by_name.pointer_mut(pointer).unwrap() = json!(name);
        let meta = ops::find(op).unwrap();
        let run = |input: Value| async {
            if meta.info.hints.read_only {
                w.env.call(&w.ana, op, input).await
            } else {
                w.env.dry_run(&w.ana, op, input).await
            }
        };
        let (with_id, with_name) = (run(by_id.clone()).await, run(by_name.clone()).await);
        assert!(with_id.is_ok(), "{op} {by_id}: {with_id:?}");
        assert_eq!(without_resolved(&with_name), without_resolved(&with_id), "{op} {by_name}");
        let resolved = &with_name.as_ref().unwrap()["resolved"];
        assert_eq!(resolved[0]["given"], name, "{op} {by_name}: {resolved}");
        assert_eq!(resolved[0]["id"], expected_id, "{op} {by_name}: {resolved}");
        let output_schema = meta.output_schema();
        assert!(
            output_schema["properties"].get("resolved").is_some(),
            "{op}'s output schema declares resolved"
        );
    }
    assert_eq!(before, w.env.dump().await, "dry runs and reads changed nothing");
}

#[tokio::test]
async fn ambiguous_names_list_candidates_and_unknown_ones_the_closest() {
    let w = World::new().await;
    let kids = id(&w
        .env
        .call(&w.ana, "create_subscription", json!({"name": "Netflix Kids", "amount": "4", "cycle": "monthly", "next_charge_on": "2026-12-20"}))
        .await
        .unwrap());
    // The exact name wins over a longer one.
    let exact = w.env.call(&w.ana, "get_subscription", json!({"id": "netflix"})).await.unwrap();
    assert_eq!(exact["id"], w.netflix);
    let Err(OpError::InvalidInput { pointer, message }) =
        w.env.call(&w.ana, "get_subscription", json!({"id": "netf"})).await
    else {
        panic!("a partial name of two subscriptions is ambiguous")
    };
    assert_eq!(pointer, "/id");
    assert_eq!(
        message.render(),
        format!(
            "\"netf\" matches 2 subscriptions: Netflix (id {}), Netflix Kids (id {kids}). Nothing was done: do not choose one yourself. Say to them: \"Which one do you mean: Netflix or Netflix Kids?\" Then call this tool again with the id of the one they name.",
            w.netflix
        )
    );
    // One word start picks one.
    let kids_by_word = w.env.call(&w.ana, "get_subscription", json!({"id": "kids"})).await.unwrap();
    assert_eq!(kids_by_word["id"], kids);
    let typo = w.env.call(&w.ana, "get_subscription", json!({"id": "Spotfy"})).await.unwrap_err();
    assert_eq!(typo.code(), "not_found");
    assert_eq!(
        typo.text().render(),
        format!(
            "No subscription you can see is named \"Spotfy\". Closest: Spotify (id {}). Call this tool again with one of these ids or names; if the person did not say which one, ask them.",
            w.spotify
        )
    );
    // Nothing close, or an id nobody can see (a model's guess): the names instead, each with
    // its id, so the next call can pass one.
    let categories = w.env.call(&w.ana, "list_categories", json!({})).await.unwrap();
    let mut categories: Vec<(String, String)> = categories["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let name = c["name"].as_str().unwrap();
            (name.to_lowercase(), format!("{name} (id {})", c["id"]))
        })
        .collect();
    categories.sort();
    assert!(categories.len() > 10, "more than a refusal lists");
    for (given, said) in [(json!("Zzz"), "is named \"Zzz\""), (json!(987654), "has id 987654")] {
        let nothing =
            w.env.call(&w.ana, "update_category", json!({"id": given, "emoji": "x"})).await;
        let err = nothing.unwrap_err();
        assert_eq!(err.code(), "not_found");
        let message = err.text().render();
        assert!(
            message.starts_with(&format!("No category you can see {said}. Some you can see: ")),
            "{message}"
        );
        // The first ten as a person reads them, and how to find the others.
        for (_, category) in &categories[..10] {
            assert!(message.contains(category.as_str()), "{category} in {message}");
        }
        assert!(!message.contains(categories[10].1.as_str()), "{message}");
        assert!(
            message.ends_with(&format!(
                "and {} more. Call this tool again with one of these, or list_categories for the others; if the person did not say which one, ask them.",
                categories.len() - 10
            )),
            "{message}"
        );
    }
    let guessed = w.env.call(&w.ana, "pause_subscription", json!({"id": "gym_membership"})).await;
    let message = guessed.unwrap_err().text().render();
    assert!(message.contains("The ones you can see: "), "{message}");
    assert!(message.contains(&format!("Netflix (id {})", w.netflix)), "{message}");
}

#[tokio::test]
async fn private_items_and_other_households_are_never_matched_nor_suggested() {
    let w = World::new().await;
    w.env
        .call(&w.cai, "create_subscription", json!({"name": "Disney Plus", "amount": "8", "cycle": "monthly", "next_charge_on": "2026-12-20"}))
        .await
        .unwrap();
    // Bob's private gym and card, and household B's subscriptions, do not exist for Ana:
    // neither by their exact names nor as a close name.
    let probes = [
        ("get_subscription", json!({"id": "Bob's gym"})),
        ("get_subscription", json!({"id": "bobs gym"})),
        ("get_subscription", json!({"id": "gym"})),
        ("get_subscription", json!({"id": "the gym membership"})),
        ("get_subscription", json!({"id": "Disney Plus"})),
        ("get_subscription", json!({"id": "disney"})),
        ("list_charges", json!({"subscription_id": "Bob's gym"})),
        ("update_subscription", json!({"id": w.netflix, "payment_method_id": "Bob's card"})),
        ("update_subscription", json!({"id": w.netflix, "payment_method_id": "bobs card"})),
        ("list_subscriptions", json!({"payment_method_id": "Bob's card"})),
        // Their ids too: refused like a guessed id, with only what Ana can see.
        ("get_subscription", json!({"id": w.bobs_gym})),
        ("get_subscription", json!({"id": w.other_household_sub.to_string()})),
    ];
    for (op, input) in &probes {
        let err = w.env.call(&w.ana, op, input.clone()).await.unwrap_err();
        assert_eq!(err.code(), "not_found", "{op} {input}");
        let message = err.text().render();
        assert!(!message.contains("Closest"), "{op} {input}: {message}");
        // What the refusal lists instead is only what Ana can see.
        for hidden in ["Bob's gym (id", "Bob's card (id", "Disney Plus (id"] {
            assert!(!message.contains(hidden), "{op} {input}: {message}");
        }
        if message.starts_with("No subscription") {
            let theirs = format!("(id {})", w.other_household_sub);
            assert!(!message.contains(&theirs), "{op} {input}: {message}");
        }
    }
    // A hidden card referenced by id is the input's fault, and offers only Ana's cards.
    let referenced = w
        .env
        .call(
            &w.ana,
            "update_subscription",
            json!({"id": w.netflix, "payment_method_id": w.bobs_card}),
        )
        .await
        .unwrap_err();
    assert_eq!(referenced.code(), "invalid_input");
    let message = referenced.text().render();
    assert!(message.starts_with("No payment method you can see has id"), "{message}");
    assert!(!message.contains("Bob's card"), "{message}");
    // Their owners find them by name; household B's "Netflix" is its own.
    let bobs = w.env.call(&w.bob, "get_subscription", json!({"id": "bob's GYM"})).await.unwrap();
    assert_eq!(bobs["id"], w.bobs_gym);
    // Described as a person would, without the words that name a kind of thing.
    let bobs =
        w.env.call(&w.bob, "get_subscription", json!({"id": "the gym membership"})).await.unwrap();
    assert_eq!(bobs["id"], w.bobs_gym);
    let hint = w.env.call(&w.bob, "get_subscription", json!({"id": "bobs gym"})).await.unwrap_err();
    assert!(hint.text().render().contains(&format!("Bob's gym (id {})", w.bobs_gym)));
    let theirs = w.env.call(&w.cai, "get_subscription", json!({"id": "netflix"})).await.unwrap();
    assert_eq!(theirs["id"], w.other_household_sub);
    // A member's email is never a name.
    let by_email =
        w.env.call(&w.ana, "update_member", json!({"id": "bob@a.test", "name": "B"})).await;
    assert_eq!(by_email.unwrap_err().code(), "not_found");
}

#[tokio::test]
async fn a_name_of_another_kind_or_a_payee_says_what_it_is_and_never_what_is_hidden() {
    let w = World::new().await;
    let refusal = |caller: &ops::Caller, input: Value| {
        let caller = caller.clone();
        let env = &w.env;
        async move {
            let err = env.call(&caller, "get_subscription", input).await.unwrap_err();
            assert_eq!(err.code(), "not_found");
            err.text().render()
        }
    };
    // A label's name passed as a subscription: what it is, and where its kind is listed.
    assert_eq!(
        refusal(&w.ana, json!({"id": "HOLIDAY"})).await,
        format!(
            "\"HOLIDAY\" is not a subscription: it is the label holiday (id {}). Use a tool that takes a label (list_labels shows them), or ask the person what they meant.",
            w.holiday
        )
    );
    // A payee: the search that reads its transactions, and the ids that categorise them,
    // only of the transactions the caller sees.
    let found = w
        .env
        .call(&w.ana, "search_transactions", json!({"text": "Spotify family groceries"}))
        .await
        .unwrap();
    let ids: Vec<String> = found["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["id"].as_i64().unwrap().to_string())
        .collect();
    assert!(!ids.is_empty());
    let ids = ids.join(", ");
    assert_eq!(
        refusal(&w.ana, json!({"id": "spotify family groceries"})).await,
        format!(
            "\"spotify family groceries\" is not a subscription: it is a payee of your transactions (latest ids: {ids}). Call search_transactions with text \"Spotify family groceries\" and no subscription to read them; categorise_transactions with ids [{ids}] and a category_id sets their category; create_rule files the ones to come."
        )
    );
    // Passed to a write ("put the Spotify family groceries payment under Music"), the writes
    // that fit come first.
    let err = w
        .env
        .call(
            &w.ana,
            "update_subscription",
            json!({"id": "spotify family groceries", "category_id": "Music"}),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), "not_found");
    assert_eq!(
        err.text().render(),
        format!(
            "\"spotify family groceries\" is not a subscription: it is a payee of your transactions (latest ids: {ids}). To set their category, call categorise_transactions with ids [{ids}] and the category_id; to file the ones to come, call create_rule; search_transactions with text \"Spotify family groceries\" reads them."
        )
    );
    // Bob's private account and its payee exist only for Bob.
    for hidden in ["Bob's bonus", "Bob's savings"] {
        let to_ana = refusal(&w.ana, json!({"id": hidden})).await;
        assert!(to_ana.starts_with("No subscription you can see is named"), "{to_ana}");
        let to_bob = refusal(&w.bob, json!({"id": hidden})).await;
        assert!(to_bob.contains("is not a subscription: it is"), "{to_bob}");
    }
}

#[tokio::test]
async fn a_date_where_a_subscription_is_expected_names_what_charges_that_day_to_the_caller() {
    let w = World::new().await;
    let refusal = |caller: &ops::Caller, id: &str| {
        let caller = caller.clone();
        let env = &w.env;
        let input = json!({"id": id});
        async move {
            let err = env.call(&caller, "cancel_subscription", input).await.unwrap_err();
            assert_eq!(err.code(), "not_found");
            err.text().render()
        }
    };
    // "Cancel whatever charges us on 15 December": Netflix, monthly from 15 June.
    assert_eq!(
        refusal(&w.ana, "2026-12-15").await,
        format!(
            "\"2026-12-15\" is a date, not a subscription. Charged on 2026-12-15: Netflix (id {}). Call this tool again with the id of the one the person means, once for each if they meant all.",
            w.netflix
        )
    );
    // Bob's private gym charges on 1 December, for Bob only; another household's Netflix too.
    assert_eq!(
        refusal(&w.ana, "2026-12-01").await,
        "\"2026-12-01\" is a date, not a subscription, and nothing you can see is charged on 2026-12-01. list_upcoming_charges shows what is charged when."
    );
    assert!(
        refusal(&w.bob, "2026-12-01").await.contains(&format!("Bob's gym (id {})", w.bobs_gym)),
    );
    let to_cai = refusal(&w.cai, "2026-12-01").await;
    assert!(to_cai.contains(&format!("Netflix (id {})", w.other_household_sub)), "{to_cai}");
    // A phrase is a date too; nothing was cancelled by any of these.
    assert!(refusal(&w.ana, "tomorrow").await.contains("is a date, not a subscription"));
    let netflix = w.env.call(&w.ana, "get_subscription", json!({"id": w.netflix})).await.unwrap();
    assert_eq!(netflix["status"], "active", "{netflix}");
}

/// The date `phrase` means for `caller` at `instant`, as the echo of a read says.
async fn read_date(w: &World, caller: &ops::Caller, instant: &str, phrase: &str) -> String {
    w.env.clock.set(instant.parse().unwrap());
    let read = w.env.call(caller, "list_charges", json!({"from": phrase})).await.unwrap();
    assert_eq!(read["resolved"][0]["given"], phrase);
    read["resolved"][0]["date"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn phrases_are_read_in_the_household_zone_across_month_ends_leap_days_and_dst() {
    let w = World::new().await;
    w.env.call(&w.cai, "update_household", json!({"time_zone": "America/New_York"})).await.unwrap();
    let cases = [
        // Madrid, the night spring forward (02:00 becomes 03:00 on 29 March): 00:30 local is
        // still the 28th in UTC.
        (&w.ana, "2026-03-28T23:30:00Z", "today", "2026-03-29"),
        (&w.ana, "2026-03-28T23:30:00Z", "tomorrow", "2026-03-30"),
        (&w.ana, "2026-03-29T01:30:00Z", "today", "2026-03-29"),
        // Madrid, the night fall back (25 October): 00:30 local on the 25th.
        (&w.ana, "2026-10-24T22:30:00Z", "today", "2026-10-25"),
        (&w.ana, "2026-10-24T22:30:00Z", "yesterday", "2026-10-24"),
        (&w.ana, "2026-10-24T22:30:00Z", "in 7 days", "2026-11-01"),
        // New York, the night fall back (1 November): 23:30 on 31 October there, while it is
        // already 1 November in Madrid.
        (&w.cai, "2026-11-01T03:30:00Z", "today", "2026-10-31"),
        (&w.ana, "2026-11-01T03:30:00Z", "today", "2026-11-01"),
        (&w.cai, "2026-11-01T03:30:00Z", "end of month", "2026-10-31"),
        (&w.cai, "2026-11-01T03:30:00Z", "next month", "2026-11-30"),
        // Month ends and leap days.
        (&w.ana, "2026-01-31T12:00:00Z", "next month", "2026-02-28"),
        (&w.ana, "2026-01-31T12:00:00Z", "fin del mes que viene", "2026-02-28"),
        (&w.ana, "2026-12-31T12:00:00Z", "mañana", "2027-01-01"),
        (&w.ana, "2028-02-28T23:30:00Z", "today", "2028-02-29"),
        (&w.ana, "2028-02-28T23:30:00Z", "in 1 year", "2029-02-28"),
        (&w.ana, "2028-02-28T23:30:00Z", "tomorrow", "2028-03-01"),
        (&w.ana, "2028-01-31T12:00:00Z", "end of next month", "2028-02-29"),
        (&w.ana, "2026-11-29T10:00:00Z", "next friday", "2026-12-04"),
        (&w.ana, "2026-11-29T10:00:00Z", "el próximo viernes", "2026-12-04"),
    ];
    for (caller, instant, phrase, want) in cases {
        assert_eq!(read_date(&w, caller, instant, phrase).await, want, "{phrase} at {instant}");
    }
}

#[tokio::test]
async fn a_past_date_where_only_the_future_makes_sense_says_what_today_is_over_mcp() {
    let w = World::new().await;
    let server = w.env.serve_mcp_as(w.ana.clone()).await;
    let client = client_without_token(server.url("/mcp"), "Small model").await;
    let past =
        call(&client, "pause_subscription", json!({"id": "netflix", "until": "2023-04-01"})).await;
    assert_eq!(past.is_error, Some(true));
    assert!(
        text(&past)
            .contains("2023-04-01 is in the past; today is 2026-11-29. Did you mean 2027-04-01?"),
        "{}",
        text(&past)
    );
    let far =
        call(&client, "resume_subscription", json!({"id": "netflix", "on": "2036-01-10"})).await;
    assert!(
        text(&far)
            .contains("more than 5 years away; today is 2026-11-29. Did you mean 2027-01-10?"),
        "{}",
        text(&far)
    );
    let old_end =
        call(&client, "cancel_subscription", json!({"id": "netflix", "ends_on": "2023-12-31"}))
            .await;
    assert!(
        text(&old_end).contains(
            "2023-12-31 is more than 1 year ago; today is 2026-11-29. Did you mean 2026-12-31?"
        ),
        "{}",
        text(&old_end)
    );
    let gibberish = call(&client, "list_charges", json!({"from": "whenever"})).await;
    assert!(text(&gibberish).contains("today is 2026-11-29"), "{}", text(&gibberish));
    // The name and the phrase resolve, and the result says how they were read.
    let paused =
        call(&client, "pause_subscription", json!({"id": "Netflix", "until": "in 10 days"})).await;
    assert_eq!(paused.is_error, Some(false), "{}", text(&paused));
    let structured = paused.structured_content.unwrap();
    assert_eq!(
        structured["resolved"],
        json!([
            {"given": "Netflix", "kind": "subscription", "id": w.netflix, "name": "Netflix"},
            {"given": "in 10 days", "date": "2026-12-09"},
        ])
    );
    assert_eq!(structured["paused_until"], "2026-12-09");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_activity_range_that_can_hold_nothing_says_what_today_is() {
    let w = World::new().await;
    // The household began on 2026-11-29, today.
    let future = w.env.call(&w.ana, "list_activity", json!({"from": "2027-11-26"})).await;
    let Err(OpError::InvalidInput { pointer, message }) = future else { panic!("{future:?}") };
    assert_eq!(pointer, "/from");
    assert_eq!(
        message.render(),
        "2027-11-26 is in the future; today is 2026-11-29, and activity is what has already happened. Did you mean 2026-11-26?"
    );
    let old = w
        .env
        .call(&w.ana, "list_activity", json!({"from": "2023-11-26", "to": "2023-12-01"}))
        .await;
    let Err(OpError::InvalidInput { pointer, message }) = old else { panic!("{old:?}") };
    assert_eq!(pointer, "/to");
    assert_eq!(
        message.render(),
        "2023-12-01 is before this household's records begin (2026-11-29), so nothing can be found; today is 2026-11-29. Did you mean 2026-11-29?"
    );
    // A range that reaches into the records is answered, whenever it starts.
    for from in ["2023-11-26", "3 days ago", "today"] {
        let page = w.env.call(&w.ana, "list_activity", json!({"from": from})).await.unwrap();
        assert!(page["total"].as_u64().unwrap() > 0, "{from}: {page}");
    }
}

#[tokio::test]
async fn a_confirmation_applies_the_date_and_the_entity_its_preview_read() {
    let w = World::new().await;
    let (_, agent) = w.env.token(&w.ana, "write").await;
    // 23:55 in Madrid: "in 3 days" is 2 December.
    w.env.clock.set("2026-11-29T22:55:00Z".parse().unwrap());
    let asked = w
        .env
        .call(&agent, "pause_subscription", json!({"id": "netflix", "until": "in 3 days"}))
        .await;
    let Err(OpError::ConfirmationRequired { confirmation_id, preview, .. }) = asked else {
        panic!("a write token's pause needs confirmation: {asked:?}")
    };
    assert_eq!(preview["resolved"][1]["date"], "2026-12-02", "{preview}");
    assert_eq!(preview["paused_until"], "2026-12-02");
    // Confirmed after midnight, when "in 3 days" would be 3 December, and after the name now
    // also fits another subscription (a cancelled one: a second Netflix not cancelled is
    // refused).
    w.env.clock.advance(SignedDuration::from_mins(10));
    let kids = w
        .env
        .call(&w.ana, "create_subscription", json!({"name": "Netflix Kids", "amount": "1", "cycle": "monthly", "next_charge_on": "2026-12-20"}))
        .await
        .unwrap();
    let renamed = json!({"id": kids["id"], "name": "netflix"});
    let refused = w.env.call(&w.ana, "update_subscription", renamed.clone()).await.unwrap_err();
    assert_eq!(refused.code(), "conflict", "{refused:?}");
    w.env.call(&w.ana, "cancel_subscription", json!({"id": kids["id"]})).await.unwrap();
    w.env.call(&w.ana, "update_subscription", renamed).await.unwrap();
    let applied = w
        .env
        .call(&agent, "confirm_change", json!({"confirmation_id": confirmation_id}))
        .await
        .unwrap();
    assert_eq!(applied["id"], w.netflix);
    assert_eq!(applied["paused_until"], "2026-12-02");
}

/// Names are read in a transaction of their own while the op's is open. Many such calls at
/// once, more than the database has connections for (8 in the tests), each still gets its
/// second connection instead of waiting for the others' (which waited five seconds, then
/// answered that the database was busy).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_calls_at_once_that_name_things_do_not_wait_for_each_others_connections() {
    use ops::Catalog as _;
    let env = test_support::TestEnv::new();
    let ana = env.household("Home", "ana@a.test").await;
    let netflix = json!({"name": "Netflix", "amount": "9.99", "cycle": "monthly", "next_charge_on": "2026-12-20"});
    env.call(&ana, "create_subscription", netflix).await.unwrap();
    let calls: Vec<_> = (0..32)
        .map(|_| {
            let (app, ana) = (env.app.clone(), ana.clone());
            tokio::spawn(async move {
                let input = json!({"id": "Netflix"});
                app.call_json(&ana, "get_subscription", input, ops::Mode::Apply).await
            })
        })
        .collect();
    for call in calls {
        let found = call.await.unwrap().unwrap();
        assert_eq!(found["name"], "Netflix");
    }
}

#[tokio::test]
async fn an_empty_window_of_upcoming_charges_says_what_it_read_and_how_to_read_further() {
    let w = World::new().await;
    // Spotify's next charge is on 2026-12-10; today is 2026-11-29.
    let asked = json!({"subscription_id": "Spotify", "days": 1});
    let empty = w.env.call(&w.ana, "list_upcoming_charges", asked).await.unwrap();
    assert_eq!(empty["items"], json!([]));
    assert_eq!(
        empty["note"],
        "Nothing falls due from 2026-11-29 to 2026-11-29. The next charge of Spotify is on 2026-12-10: pass days 12 to list it."
    );
    // What it says works, and a window with something in it says nothing more.
    let asked = json!({"subscription_id": "Spotify", "days": 12});
    let found = w.env.call(&w.ana, "list_upcoming_charges", asked).await.unwrap();
    assert_eq!(
        found["items"][0]["charge_on"].as_str().or(found["items"][0]["on"].as_str()),
        Some("2026-12-10"),
        "{found}"
    );
    assert!(found.get("note").is_none(), "{found}");
    // The whole household's empty window names the first day after it with charges, and the
    // days it says list exactly up to that day.
    let household = w.env.call(&w.ana, "list_upcoming_charges", json!({"days": 1})).await.unwrap();
    let note = household["note"].as_str().unwrap_or_else(|| panic!("{household}"));
    let rest = note
        .strip_prefix(
            "Nothing falls due from 2026-11-29 to 2026-11-29. The next charges after that are on ",
        )
        .unwrap_or_else(|| panic!("{note}"));
    let (day, rest) = rest.split_once(": ").unwrap_or_else(|| panic!("{note}"));
    let (named, how) = rest.split_once(". Pass days ").unwrap_or_else(|| panic!("{note}"));
    let days: u32 = how
        .strip_suffix(" to list them.")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{note}"));
    let listed = w.env.call(&w.ana, "list_upcoming_charges", json!({"days": days})).await.unwrap();
    assert_eq!(listed["to"], day, "{listed}");
    let items = listed["items"].as_array().unwrap_or_else(|| panic!("{listed}"));
    assert!(items.iter().all(|c| c["charge_on"] == day), "{listed}");
    let on_that_day: Vec<String> = items
        .iter()
        .map(|c| {
            format!(
                "{} {}",
                c["subscription"]["name"].as_str().unwrap(),
                c["amount"]["display"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(named, on_that_day.join(", "));
}

#[tokio::test]
async fn an_empty_window_of_price_changes_names_the_latest_change_before_it() {
    let w = World::new().await;
    let none = w.env.call(&w.ana, "list_price_changes", json!({"since": "2026-11-29"})).await;
    let none = none.unwrap();
    assert_eq!(
        none["note"], "No price changes from 2026-11-29 to today. None before that either.",
        "{none}"
    );
    let rise = json!({"id": "Netflix", "amount": "15.99", "effective_on": "2026-09-15"});
    w.env.call(&w.ana, "change_price", rise).await.unwrap();
    let empty = w.env.call(&w.ana, "list_price_changes", json!({"since": "2026-11-29"})).await;
    let empty = empty.unwrap();
    assert_eq!(empty["items"], json!([]));
    let note = empty["note"].as_str().unwrap_or_else(|| panic!("{empty}"));
    let since = note
        .strip_prefix("No price changes from 2026-11-29 to today. The latest before that: Netflix from 2026-09-15, €12.99 to €15.99. Pass since ")
        .and_then(|since| since.strip_suffix(" to list from it."))
        .unwrap_or_else(|| panic!("{note}"));
    // What it says lists that change, and a window with something in it says nothing more.
    let listed = w.env.call(&w.ana, "list_price_changes", json!({"since": since})).await.unwrap();
    assert_eq!(listed["items"][0]["subscription"]["name"], "Netflix", "{listed}");
    assert_eq!(listed["items"][0]["new_price"]["amount"], "15.99", "{listed}");
    assert!(listed.get("note").is_none(), "{listed}");
}
