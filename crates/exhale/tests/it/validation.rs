//! Bad input, class by class: each gets a clear `invalid_input` with a pointer (or the right
//! code), and nothing is written.

use serde_json::{Value, json};

use crate::fixtures::World;

fn create(overrides: Value) -> Value {
    let mut input = json!({"name": "Hulu", "amount": "7.99", "cycle": "monthly", "next_charge_on": "2026-12-03"});
    for (key, value) in overrides.as_object().unwrap() {
        if value.is_null() {
            input.as_object_mut().unwrap().remove(key);
        } else {
            input[key] = value.clone();
        }
    }
    input
}

#[tokio::test]
async fn bad_input_is_refused_with_a_pointer_and_writes_nothing() {
    let w = World::new().await;
    let cases = [
        (create(json!({"amount": "1000000000.01"})), "/amount", "out of range"),
        (create(json!({"amount": "-5"})), "/amount", "negative"),
        (create(json!({"amount": "12,99"})), "/amount", "12.99"),
        (create(json!({"amount": "12.999"})), "/amount", "decimal"),
        (create(json!({"amount": "500.5", "currency": "JPY"})), "/amount", "JPY"),
        (create(json!({"amount": "abc"})), "/amount", "amount"),
        (create(json!({"currency": "EURO"})), "/currency", "ISO 4217"),
        (create(json!({"currency": "XYZ"})), "/currency", "ISO 4217"),
        (create(json!({"next_charge_on": "2026-02-30"})), "/next_charge_on", "not a date"),
        (create(json!({"next_charge_on": "30/01/2026"})), "/next_charge_on", "YYYY-MM-DD"),
        (create(json!({"next_charge_on": null})), "/next_charge_on", "next_charge_on"),
        (create(json!({"cycle": {"every": 0, "unit": "month"}})), "/cycle/every", "1 to 366"),
        (create(json!({"cycle": {"every": 367, "unit": "day"}})), "/cycle/every", "1 to 366"),
        (
            create(json!({"cycle": {"every": 2, "unit": "fortnight"}})),
            "/cycle/unit",
            "day, week, month or year",
        ),
        (create(json!({"cycle": "sometimes"})), "/cycle", "preset"),
        (create(json!({"name": ""})), "/name", "empty"),
        (create(json!({"name": "   "})), "/name", "empty"),
        (create(json!({"name": "x".repeat(101)})), "/name", "100"),
        (create(json!({"name": "Net\u{0}flix"})), "/name", "control"),
        (create(json!({"name": "Net\nflix"})), "/name", "control"),
        (create(json!({"name": "Net\u{202e}flix"})), "/name", "control"),
        (create(json!({"url": "javascript:alert(1)"})), "/url", "URL"),
        (create(json!({"colour": "red"})), "/colour", "unknown field"),
        (create(json!({"amount": 7.99})), "/amount", "string"),
        (create(json!({"category_id": 999_999})), "/category_id", "list_categories"),
        (create(json!({"owner_id": 999_999})), "/owner_id", "The ones you can see: Bob (id "),
        (create(json!({"tags": ["ok", "bad\ttag"]})), "/tags/1", "control"),
        (create(json!({"ends_on": "2026-01-01"})), "/ends_on", "before"),
    ];
    let before = w.env.dump().await;
    for (input, pointer, needle) in cases {
        let result = w.env.call(&w.ana, "create_subscription", input.clone()).await;
        let Err(ops::OpError::InvalidInput { pointer: got, message }) = &result else {
            panic!("{input} should be refused, got {result:?}")
        };
        assert_eq!(got, pointer, "pointer for {input}");
        let message = message.render();
        assert!(
            message.to_lowercase().contains(&needle.to_lowercase()),
            "{input}: message {message:?} should mention {needle:?}"
        );
    }
    assert_eq!(before, w.env.dump().await, "refused input wrote something");
}

#[tokio::test]
async fn input_that_does_not_fit_an_op_is_told_the_op_s_fields() {
    let w = World::new().await;
    // What a model sent through call_tool, never having seen create_rule's schema.
    let unfit = json!({"category_ids": ["Streaming"], "description_contains": "Lidl"});
    let refused = w.env.call(&w.ana, "create_rule", unfit).await.unwrap_err();
    let ops::OpError::InvalidInput { message, .. } = &refused else { panic!("{refused:?}") };
    let said = message.render();
    assert!(said.starts_with("The input does not fit this op: "), "{said}");
    assert!(
        said.ends_with(
            "create_rule takes: account_id, add_label_ids, description_contains, max_amount, min_amount, name (required), payee_contains, set_category_id."
        ),
        "{said}"
    );
    // A field's own refusal stays as it is.
    let named = w.env.call(&w.ana, "create_rule", json!({"name": "x", "set_category_id": "Nope"}));
    let said = named.await.unwrap_err().text().render();
    assert!(!said.contains("takes:"), "{said}");
    let rules = w.env.call(&w.ana, "list_rules", json!({})).await.unwrap();
    assert_eq!(rules["items"].as_array().unwrap().len(), 1, "nothing was added: {rules}");
}

#[tokio::test]
async fn other_ops_refuse_their_worst_input() {
    let w = World::new().await;
    let before = w.env.dump().await;
    let cases = [
        ("list_subscriptions", json!({"limit": 0}), "/limit"),
        ("list_subscriptions", json!({"limit": 501}), "/limit"),
        ("list_subscriptions", json!({"cursor": "garbage"}), "/cursor"),
        ("list_subscriptions", json!({"status": ["asleep"]}), "/status/0"),
        ("list_subscriptions", json!({"due_before": "2026-13-01"}), "/due_before"),
        ("list_upcoming_charges", json!({"days": 367}), "/days"),
        ("list_upcoming_charges", json!({"days": 0}), "/days"),
        ("change_price", json!({"id": w.netflix, "amount": "5", "currency": "USD"}), "/currency"),
        (
            "pause_subscription",
            json!({"id": w.netflix, "from": "2026-12-10", "until": "2026-12-01"}),
            "/until",
        ),
        ("update_charge", json!({"id": w.charge, "status": "lost"}), "/status"),
        ("create_category", json!({"name": "\u{200B}\u{200B}"}), "/name"),
        (
            "create_subscription",
            json!({"name": "\u{FEFF}\u{2060}", "amount": "1", "cycle": "monthly", "next_charge_on": "2026-12-01"}),
            "/name",
        ),
        ("create_category", json!({"name": "Pets", "colour": "#12345"}), "/colour"),
        ("create_payment_method", json!({"name": "Card", "last4": "4242424242424242"}), "/last4"),
        ("create_payment_method", json!({"name": "Card", "expires": "2027-13"}), "/expires"),
        ("create_payment_method", json!({"name": "Card", "expires": "2027-+1"}), "/expires"),
        ("bulk_update_subscriptions", json!({"ids": [], "action": "delete"}), "/ids"),
        (
            "bulk_update_subscriptions",
            json!({"ids": (1..=501).collect::<Vec<i64>>(), "action": "delete"}),
            "/ids",
        ),
        (
            "bulk_update_subscriptions",
            json!({"ids": [w.netflix, w.netflix], "action": "delete"}),
            "/ids/1",
        ),
        ("bulk_update_subscriptions", json!({"ids": [w.netflix], "action": "explode"}), "/action"),
        ("update_settings", json!({"exchange_rates": {"USD": "-1"}}), "/exchange_rates/USD"),
        ("update_settings", json!({"exchange_rates": {"EUR": "1"}}), "/exchange_rates/EUR"),
        ("update_household", json!({"time_zone": "Mars/Olympus"}), "/time_zone"),
        ("undo", json!({"audit_ids": [999_999]}), "/audit_ids/0"),
        ("get_subscription", json!({"id": 4.5}), "/id"),
        ("get_subscription", json!({"id": true}), "/id"),
        ("get_subscription", json!({"id": 0}), "/id"),
        ("get_subscription", json!([1, 2]), ""),
        ("list_categories", json!({"surprise": true}), "/surprise"),
        ("get_spending_history", json!({"months": 0}), "/months"),
        (
            "create_token",
            json!({"name": "t", "scope": "read", "expires_in_days": 0}),
            "/expires_in_days",
        ),
        ("undo", json!({"audit_ids": (1..=501).collect::<Vec<i64>>()}), "/audit_ids"),
        ("get_charge", json!({"id": 0}), "/id"),
        ("get_charge", json!({"id": 9_007_199_254_740_992_i64}), "/id"),
        (
            "merge_categories",
            json!({"target_id": w.streaming, "source_ids": (1..=501).collect::<Vec<i64>>()}),
            "/source_ids",
        ),
    ];
    for (op, input, pointer) in cases {
        let result = w.env.call(&w.ana, op, input.clone()).await;
        let Err(ops::OpError::InvalidInput { pointer: got, .. }) = &result else {
            panic!("{op} {input}: {result:?}")
        };
        assert_eq!(got, pointer, "{op} {input}");
    }
    // A name another category has is a conflict with what is stored, not a malformed input.
    let taken = w.env.call(&w.ana, "create_category", json!({"name": "streaming"})).await;
    assert_eq!(test_support::code(&taken), "conflict", "{taken:?}");
    assert_eq!(before, w.env.dump().await);
}

#[tokio::test]
async fn a_wrong_value_of_a_closed_set_or_a_date_says_what_to_write_at_its_pointer() {
    let w = World::new().await;
    let cases = [
        (
            "update_charge",
            json!({"id": w.charge, "status": "lost"}),
            "/status",
            "paid, skipped, failed or refunded",
        ),
        (
            "list_subscriptions",
            json!({"sort": "cheapest"}),
            "/sort",
            "name, next_charge, price or created",
        ),
        ("list_subscriptions", json!({"visibility": 3}), "/visibility", "household or private"),
        ("list_activity", json!({"op": "drop_database"}), "/op", "leave it out for every change"),
        ("list_activity", json!({"entity": "planet"}), "/entity", "subscription, charge, category"),
        (
            "get_spending_summary",
            json!({"group_by": "colour"}),
            "/group_by",
            "category, member, payment_method, tag or none",
        ),
        (
            "create_payment_method",
            json!({"name": "Card", "kind": "cash"}),
            "/kind",
            "card, bank_account, paypal, wallet or other",
        ),
        ("update_household", json!({"week_start": "friday"}), "/week_start", "monday or sunday"),
        (
            "bulk_update_subscriptions",
            json!({"ids": [w.netflix], "action": "explode"}),
            "/action",
            "update, pause, resume, cancel or delete",
        ),
        ("list_charges", json!({"from": "next blursday"}), "/from", "YYYY-MM-DD"),
        ("list_charges", json!({"from": "soon"}), "/from", "in 10 days"),
        (
            "pause_subscription",
            json!({"id": w.netflix, "until": "2026-02-30"}),
            "/until",
            "not a date on the calendar",
        ),
    ];
    let before = w.env.dump().await;
    for (op, input, pointer, allowed) in cases {
        let result = w.env.call(&w.ana, op, input.clone()).await;
        let Err(ops::OpError::InvalidInput { pointer: got, message }) = &result else {
            panic!("{op} {input}: {result:?}")
        };
        assert_eq!(got, pointer, "{op} {input}");
        assert!(message.render().contains(allowed), "{op} {input}: {}", message.render());
    }
    // Names are read loosely: any case, spaces for underscores, common aliases.
    let loose = w
        .env
        .call(&w.ana, "list_subscriptions", json!({"status": ["Active"], "sort": "next charge"}))
        .await;
    assert_eq!(test_support::code(&loose), "ok", "{loose:?}");
    assert_eq!(before, w.env.dump().await);
}

#[tokio::test]
async fn unknown_ops_and_ids_are_not_found_with_a_next_step() {
    let w = World::new().await;
    let unknown = w.env.call(&w.ana, "drop_database", json!({})).await;
    assert_eq!(test_support::code(&unknown), "not_found");
    let missing = w.env.call(&w.ana, "get_subscription", json!({"id": 424_242})).await;
    let said = missing.unwrap_err().text().render();
    assert!(said.contains(&format!("Netflix (id {})", w.netflix)), "{said}");
    assert!(said.contains("Call this tool again with one of these"), "{said}");
}

#[tokio::test]
async fn whole_numbers_written_as_floats_are_integers_everywhere() {
    let w = World::new().await;
    let netflix = w.netflix as f64;
    let as_int = w.env.call(&w.ana, "list_upcoming_charges", json!({"days": 30})).await.unwrap();
    let as_float =
        w.env.call(&w.ana, "list_upcoming_charges", json!({"days": 30.0})).await.unwrap();
    assert_eq!(as_int, as_float);
    let history =
        w.env.call(&w.ana, "list_price_changes", json!({"subscription_id": netflix})).await;
    assert_eq!(test_support::code(&history), "ok", "{history:?}");
    let page = w.env.call(&w.ana, "list_subscriptions", json!({"limit": 2.0})).await.unwrap();
    assert_eq!(page["items"].as_array().unwrap().len(), 2);
    // A fraction is still not a whole number.
    let half = w.env.call(&w.ana, "list_upcoming_charges", json!({"days": 30.5})).await;
    assert_eq!(test_support::code(&half), "invalid_input");
}

#[tokio::test]
async fn series_dates_that_make_no_sense_are_refused() {
    let w = World::new().await;
    let inside_trial = w
        .env
        .call(&w.ana, "create_subscription", json!({"name": "App", "amount": "5", "cycle": "monthly", "trial_ends_on": "2026-12-20", "next_charge_on": "2026-12-10"}))
        .await;
    assert_eq!(test_support::code(&inside_trial), "invalid_input");
    let ancient = w
        .env
        .call(&w.ana, "create_subscription", create(json!({"next_charge_on": "1901-01-01"})))
        .await;
    let Err(ops::OpError::InvalidInput { pointer, .. }) = &ancient else { panic!("{ancient:?}") };
    assert_eq!(pointer, "/next_charge_on");
    let end_first = w
        .env
        .call(&w.ana, "reschedule_subscription", json!({"id": w.netflix, "ends_on": "2026-01-01"}))
        .await;
    assert_eq!(test_support::code(&end_first), "invalid_input");
}

/// Ana notes Netflix: the latest change of the world, whose activity entry id this returns.
async fn note_netflix(w: &World) -> i64 {
    let noted = w
        .env
        .call(&w.ana, "update_subscription", json!({"id": w.netflix, "notes": "family plan"}))
        .await
        .unwrap();
    noted["audit_ids"][0].as_i64().unwrap()
}

#[tokio::test]
async fn an_undo_of_an_unknown_entry_offers_the_latest_changes_instead() {
    let w = World::new().await;
    let entry = note_netflix(&w).await;
    let offered = |refused: Result<serde_json::Value, ops::OpError>| {
        let refused = refused.unwrap_err();
        assert_eq!(refused.code(), "invalid_input");
        let message = refused.text().render();
        let lines: Vec<String> =
            message.lines().filter(|line| line.starts_with("- id ")).map(str::to_owned).collect();
        assert!(lines.len() <= ops::limits::LATEST_CHANGES as usize, "{message}");
        (message, lines)
    };
    let (message, lines) =
        offered(w.env.call(&w.ana, "undo", json!({"audit_ids": [999_999]})).await);
    assert!(message.starts_with("No activity entry with id 999999."), "{message}");
    assert!(lines[0].starts_with(&format!("- id {entry}: ")), "newest first: {message}");
    assert!(lines[0].contains("Netflix"), "{message}");
    assert!(
        message.contains(&format!(
            "The latest change is id {entry}: to undo it, call undo with audit_ids [{entry}]."
        )),
        "the call that undoes the latest comes first: {message}"
    );
    assert!(message.ends_with("For another one, call undo with its id."), "{message}");
    // A change undone is not offered again, nor is the undo (undoing it would redo).
    let undid = w.env.call(&w.ana, "undo", json!({"audit_ids": [entry]})).await.unwrap();
    let (message, lines) =
        offered(w.env.call(&w.ana, "undo", json!({"audit_ids": [999_999]})).await);
    for offered_not in [entry, undid["audit_ids"][0].as_i64().unwrap()] {
        let line = format!("- id {offered_not}: ");
        assert!(!lines.iter().any(|l| l.starts_with(&line)), "{offered_not}: {message}");
    }
    // A made-up batch is refused with the same call first and the same list.
    let batch = w.env.call(&w.ana, "undo", json!({"batch_id": "o12345"})).await.unwrap_err();
    assert_eq!(batch.code(), "not_found");
    let said = batch.text().render();
    assert!(
        said.starts_with("No changes with batch id o12345. The latest change is id "),
        "{said}"
    );
    let listed: Vec<&str> = said.lines().filter(|line| line.starts_with("- id ")).collect();
    assert_eq!(listed, lines.iter().map(String::as_str).collect::<Vec<_>>(), "{said}");
    // A household with no change to undo is told so, whether it names one or not.
    let fresh = w.env.household("Empty", "zoe@empty.test").await;
    let refused = w.env.call(&fresh, "undo", json!({})).await.unwrap_err();
    assert_eq!(
        refused.text().render(),
        "Nothing has been changed yet, so there is nothing to undo.",
        "{refused:?}"
    );
    let batch = w.env.call(&fresh, "undo", json!({"batch_id": "o12345"})).await.unwrap_err();
    assert_eq!(
        batch.text().render(),
        "No changes with batch id o12345, and nothing has been changed yet."
    );
}

#[tokio::test]
async fn activity_filters_that_match_nothing_name_the_latest_changes_without_them() {
    let w = World::new().await;
    let entry = note_netflix(&w).await;
    // Bob's private change comes last: Ana is never told of it.
    w.env
        .call(&w.bob, "update_subscription", json!({"id": w.bobs_gym, "notes": "climbing"}))
        .await
        .unwrap();
    let list =
        async |caller: &ops::Caller, input: Value| w.env.call(caller, "list_activity", input).await;
    // An op filter that names no op ("the last change" read as one, or "all") says to leave
    // it out, with the fields.
    for made_up in ["last_change", "all"] {
        let refused = list(&w.ana, json!({"op": made_up, "limit": 1})).await.unwrap_err();
        let said = refused.text().render();
        assert!(
            said.contains(&format!("there is no op named \"{made_up}\"; op keeps the changes one op that writes made, such as update_subscription: leave it out for every change, newest first (limit 1 is the latest)")),
            "{said}"
        );
        assert!(said.contains("list_activity takes: "), "{said}");
    }
    let page = list(&w.ana, json!({"entity": "transaction", "entity_id": 12345})).await.unwrap();
    assert_eq!(page["items"], json!([]), "{page}");
    let note = page["note"].as_str().unwrap();
    let (lead, changes) = note.split_once('\n').unwrap();
    assert!(lead.starts_with(&format!("The latest change you can see is id {entry}: ")), "{note}");
    assert!(lead.contains("Netflix"), "{note}");
    assert!(
        lead.ends_with(
            ". Nothing matched entity \"transaction\", entity_id 12345; without filters, the latest changes, newest first:"
        ),
        "{note}"
    );
    assert!(changes.starts_with(&format!("- id {entry}: ")), "{note}");
    assert!(!note.contains("gym"), "Bob's private change: {note}");
    assert!(note.ends_with("Call list_activity again with fewer filters, or none, to read more."));
    // Bob is told of his own.
    let bobs = list(&w.bob, json!({"entity": "transaction", "entity_id": 12345})).await.unwrap();
    assert!(bobs["note"].as_str().unwrap().contains("Bob's gym"), "{bobs}");
    // No note where something matched, where nothing filters, or past the first page.
    let matched = list(&w.ana, json!({"entity": "subscription"})).await.unwrap();
    assert!(matched.get("note").is_none(), "{matched}");
    let all = list(&w.ana, json!({"limit": 1})).await.unwrap();
    assert!(all.get("note").is_none(), "{all}");
    let cursor = all["next_cursor"].as_str().unwrap();
    let past = list(&w.ana, json!({"entity": "charge", "cursor": cursor})).await.unwrap();
    assert!(past.get("note").is_none(), "{past}");
    // Another household's changes stay out of its note, which says none were made.
    let fresh = w.env.household("Empty", "zoe@empty.test").await;
    let none = list(&fresh, json!({"entity": "subscription"})).await.unwrap();
    assert_eq!(
        none["note"], "Nothing matched entity \"subscription\", and nothing has been changed yet.",
        "{none}"
    );
}

#[tokio::test]
async fn a_second_subscription_under_a_kept_name_is_refused_with_what_changes_the_first() {
    let w = World::new().await;
    let add = |name: &str| json!({"name": name, "amount": "19.99", "cycle": "monthly", "next_charge_on": "2026-12-12"});
    let before = w.env.dump().await;
    let refused = w.env.call(&w.ana, "create_subscription", add(" NETFLIX ")).await.unwrap_err();
    assert_eq!(refused.code(), "conflict");
    let said = refused.text().render();
    assert!(said.starts_with(&format!("You already have Netflix (id {}).", w.netflix)), "{said}");
    assert!(said.contains("change_price") && said.contains("a name of its own"), "{said}");
    assert!(before == w.env.dump().await, "nothing was added");
    // Another household's Netflix and Bob's private gym are not Ana's to see: no refusal
    // tells her they exist.
    let cais = w.env.call(&w.cai, "list_subscriptions", json!({})).await.unwrap();
    assert!(cais.to_string().contains("Netflix"), "{cais}");
    w.env.call(&w.ana, "create_subscription", add("Bob's gym")).await.unwrap();
    // A cancelled one may be subscribed to again.
    w.env.call(&w.ana, "cancel_subscription", json!({"id": w.spotify})).await.unwrap();
    w.env.call(&w.ana, "create_subscription", add("Spotify")).await.unwrap();
}
