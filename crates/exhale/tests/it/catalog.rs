//! Catalog-wide tests through the invoker: every write op's dry run leaves the database
//! byte-for-byte unchanged, and apply then undo returns it to where it was.

use ops::{Caller, Catalog as _, Mode};
use serde_json::{Value, json};

use crate::fixtures::{World, id};

type Input = Box<dyn Fn(&World, &[Value]) -> Value>;

/// One write op with a valid input in the seeded world, and calls to make first.
struct Case {
    op: &'static str,
    setup: Vec<(&'static str, Input)>,
    input: Input,
}

fn case(op: &'static str, input: impl Fn(&World) -> Value + 'static) -> Case {
    Case { op, setup: Vec::new(), input: Box::new(move |w, _| input(w)) }
}

fn cases() -> Vec<Case> {
    vec![
        case(
            "update_household",
            |_| json!({"name": "New home", "currency": "USD", "time_zone": "America/New_York"}),
        ),
        case(
            "update_member",
            |w| json!({"id": w.bob.member_id, "name": "Robert", "role": "owner"}),
        ),
        case("invite_member", |_| json!({"name": "Dee", "email": "dee@a.test"})),
        case("remove_member", |w| json!({"id": w.eve.member_id})),
        case("create_subscription", |w| {
            json!({"name": "Gym", "amount": "30.00", "cycle": {"every": 4, "unit": "week"}, "next_charge_on": "2026-01-05",
                   "category_id": w.streaming, "tags": ["health"], "url": "https://gym.example", "notes": "Front desk"})
        }),
        case(
            "update_subscription",
            |w| json!({"id": w.netflix, "name": "Netflix 4K", "tags": ["tv"], "category_id": null, "notes": "shared"}),
        ),
        case(
            "reschedule_subscription",
            |w| json!({"id": w.netflix, "cycle": "quarterly", "next_charge_on": "2026-12-15", "ends_on": "2027-12-31"}),
        ),
        case(
            "change_price",
            |w| json!({"id": w.netflix, "amount": "15.99", "effective_on": "2026-12-01"}),
        ),
        case("pause_subscription", |w| json!({"id": w.netflix, "until": "2027-02-01"})),
        Case {
            op: "resume_subscription",
            setup: vec![(
                "pause_subscription",
                Box::new(|w, _| json!({"id": w.netflix, "from": "2026-11-01"})),
            )],
            input: Box::new(|w, _| json!({"id": w.netflix})),
        },
        case("cancel_subscription", |w| json!({"id": w.netflix, "ends_on": "2026-12-31"})),
        case("delete_subscription", |w| json!({"id": w.netflix})),
        case("import_subscriptions", |w| {
            json!({"items": [
                {"name": "Gympower", "amount": "31.90", "cycle": "monthly", "category_id": w.streaming,
                 "charges": [{"date": "2026-08-03", "amount": "29.90"}, {"date": "2026-09-03", "amount": "29.90"},
                             {"date": "2026-10-03", "amount": "31.90"}]},
                {"name": "Netflix", "amount": "12.99", "cycle": "monthly", "charges": [{"date": "2026-10-15", "amount": "12.99"}]},
            ]})
        }),
        case(
            "bulk_update_subscriptions",
            |w| json!({"ids": [w.netflix, w.spotify], "action": "delete"}),
        ),
        case(
            "update_charge",
            |w| json!({"id": w.charge, "status": "refunded", "amount": "10.00", "note": "partial refund"}),
        ),
        case("create_category", |_| json!({"name": "Pets", "emoji": "🐶", "colour": "#aa5500"})),
        case(
            "create_account",
            |_| json!({"name": "Cash box", "kind": "cash", "currency": "USD", "balance": "40"}),
        ),
        case(
            "update_account",
            |w| json!({"id": w.joint, "name": "Joint", "kind": "savings", "archived": true}),
        ),
        Case {
            op: "delete_account",
            setup: vec![(
                "create_account",
                Box::new(
                    |_, _| json!({"name": "Old card", "kind": "credit_card", "balance": "-10"}),
                ),
            )],
            input: Box::new(|_, outputs| json!({"id": id(&outputs[0])})),
        },
        case(
            "record_balance",
            |w| json!({"account_id": w.joint, "balance": "-3.10", "on": "2026-10-31"}),
        ),
        case("create_transaction", |w| {
            json!({"account_id": w.joint, "on": "2026-11-28", "amount": "-20", "payee": "Market",
                   "category_id": w.streaming, "label_ids": [w.holiday], "notes": "veg"})
        }),
        case(
            "update_transaction",
            |w| json!({"id": w.groceries, "amount": "-60", "payee": "Market", "notes": "x", "category_id": w.music, "label_ids": []}),
        ),
        case(
            "categorise_transactions",
            |w| json!({"ids": [w.groceries], "category_id": w.music, "remove_label_ids": [w.holiday]}),
        ),
        case("delete_transaction", |w| json!({"id": w.groceries})),
        case(
            "split_transaction",
            |w| json!({"id": w.groceries, "parts": [{"amount": "-50", "category_id": w.music, "note": "food"}, {"amount": "-4.30"}]}),
        ),
        case("match_charge", |w| json!({"transaction_id": w.groceries, "charge_id": w.charge})),
        Case {
            op: "pair_transfer",
            setup: vec![(
                "create_transaction",
                Box::new(
                    |w, _| json!({"account_id": w.wallet, "on": "2026-11-20", "amount": "54.30", "payee": "Cash out"}),
                ),
            )],
            input: Box::new(|w, outputs| json!({"id": w.groceries, "other_id": id(&outputs[0])})),
        },
        case("create_label", |_| json!({"name": "Work", "colour": "#aa5500"})),
        case(
            "import_transactions",
            |w| json!({"account_id": w.joint, "content": "Date,Description,Amount\n2026-11-02,CORNER CAFE,-3.20\n2026-11-03,ACME PAYROLL,2500\n"}),
        ),
        case("update_label", |w| json!({"id": w.holiday, "name": "Trip", "colour": "#112233"})),
        case("delete_label", |w| json!({"id": w.holiday})),
        case("create_budget", |w| {
            json!({"name": "Music", "amount": "20", "period": "fortnightly", "start_day": 5,
                       "starts_on": "2026-10-01", "category_ids": [w.music], "rollover": true})
        }),
        case("update_budget", |w| json!({"id": w.budget, "name": "Daily", "amount": "120"})),
        case("delete_budget", |w| json!({"id": w.budget})),
        case("create_rule", |w| {
            json!({"name": "Cafes", "payee_contains": "cafe", "description_contains": "madrid",
                       "min_amount": "-50", "max_amount": "-1", "account_id": w.joint,
                       "set_category_id": w.music, "add_label_ids": [w.holiday]})
        }),
        case(
            "update_rule",
            |w| json!({"id": w.rule, "name": "Food", "rule": {"payee_contains": "market", "set_category_id": w.music}}),
        ),
        case("delete_rule", |w| json!({"id": w.rule})),
        case("apply_rule", |w| json!({"id": w.rule, "apply": true})),
        case(
            "update_category",
            |w| json!({"id": w.streaming, "name": "Video", "colour": "#112233"}),
        ),
        case("delete_category", |w| json!({"id": w.streaming, "move_to_id": w.music})),
        case("merge_categories", |w| json!({"source_ids": [w.streaming], "target_id": w.music})),
        case(
            "create_payment_method",
            |_| json!({"name": "Amex", "last4": "0005", "expires": "2029-08"}),
        ),
        case("update_payment_method", |w| json!({"id": w.card, "last4": "1111", "expires": null})),
        case("delete_payment_method", |w| json!({"id": w.card})),
        case("rename_tag", |_| json!({"from": "family", "to": "home"})),
        case("delete_tag", |_| json!({"name": "family"})),
        case(
            "create_token",
            |_| json!({"name": "laptop", "scope": "write", "expires_in_days": 30}),
        ),
        Case {
            op: "revoke_token",
            setup: vec![("create_token", Box::new(|_, _| json!({"name": "old", "scope": "read"})))],
            input: Box::new(|_, setup| json!({"id": id(&setup[0])})),
        },
        Case {
            op: "set_token_tools",
            setup: vec![("create_token", Box::new(|_, _| json!({"name": "cli", "scope": "read"})))],
            input: Box::new(|_, setup| json!({"id": id(&setup[0]), "tools": "full"})),
        },
        Case {
            op: "set_token_tools",
            setup: vec![(CONNECT_AN_APP, Box::new(|_, _| json!({})))],
            input: Box::new(|_, setup| json!({"id": id(&setup[0]), "tools": "compact"})),
        },
        Case {
            op: "revoke_connected_app",
            setup: vec![(CONNECT_AN_APP, Box::new(|_, _| json!({})))],
            input: Box::new(|_, setup| json!({"id": id(&setup[0])})),
        },
        case("allow_trusted_apps", |_| json!({"allowed": true})),
        // The key is left out: it is a secret, which no audit entry holds, so Undo keeps it.
        case(
            "set_assistant_settings",
            |_| json!({"provider": "ollama", "model": "qwen2.5:7b", "prices": [{"model": "qwen2.5:7b", "input": "0.1", "output": "0.4"}]}),
        ),
        case(
            "update_settings",
            |_| json!({"exchange_rates": {"USD": "0.92", "GBP": "1.17"}, "reminder_days_before": 5}),
        ),
        case(
            "update_reminder_settings",
            |_| json!({"days_before": [7, 1], "time_of_day": "18:30", "covers": "household", "weekly_digest": "sunday"}),
        ),
        case(
            "add_destination",
            |_| json!({"kind": "webhook", "address": "https://hooks.example.net/x", "secret": "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"}),
        ),
        Case {
            op: "remove_destination",
            setup: vec![(
                "add_destination",
                Box::new(|_, _| json!({"kind": "ntfy", "address": "https://ntfy.example.net/ana"})),
            )],
            input: Box::new(|_, setup| json!({"destination": id(&setup[0])})),
        },
        // The password is left out, as the assistant's key above.
        case(
            "set_channel_settings",
            |_| json!({"mail_server": {"host": "smtp.example.net", "port": 587, "security": "starttls", "username": "exhale", "from": "Exhale <exhale@example.net>"}}),
        ),
        Case {
            op: "undo",
            setup: vec![("delete_subscription", Box::new(|w, _| json!({"id": w.netflix})))],
            input: Box::new(|_, setup| json!({"batch_id": setup[0]["batch_id"]})),
        },
    ]
}

/// Tables that are the household's data; audit, outbox and confirmations record the calls
/// themselves and grow with every write.
fn data_tables(dump: &str) -> String {
    let mut out = String::new();
    let mut keep = true;
    for line in dump.lines() {
        if let Some(table) = line.strip_prefix("## ") {
            keep = !matches!(table, "audit" | "outbox" | "confirmations" | "sqlite_sequence");
        }
        if keep {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// A setup step that is not an op: a person connects an app with OAuth, as the consent page
/// does; its output is the grant, as `list_connected_apps` lists it.
const CONNECT_AN_APP: &str = "(connect an app)";

async fn connect_an_app(w: &World, caller: &Caller) -> Value {
    use ops::oauth::{AuthorizationRequest, Decision, OAuthServer as _, Registration};
    let app = &w.env.app;
    app.set_public_origin(Some(ops::oauth::PublicOrigin { origin: "https://exhale.test".into() }));
    let client = app
        .register(
            Registration {
                redirect_uris: vec!["https://app.test/cb".into()],
                ..Default::default()
            },
            None,
        )
        .await
        .unwrap();
    let request = AuthorizationRequest {
        client_id: Some(client.client_id),
        response_type: Some("code".into()),
        code_challenge: Some("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".into()),
        code_challenge_method: Some("S256".into()),
        ..Default::default()
    };
    let consent = app.authorize(caller, request).await.unwrap();
    app.decide(caller, &consent.request_id, Decision::Approve(ops::Scope::Write)).await.unwrap();
    let apps = w.env.call(caller, "list_connected_apps", json!({})).await.unwrap();
    apps["items"][0].clone()
}

async fn run_setup(w: &World, caller: &Caller, case: &Case) -> Vec<Value> {
    let mut outputs = Vec::new();
    for (op, input) in &case.setup {
        if *op == CONNECT_AN_APP {
            outputs.push(connect_an_app(w, caller).await);
            continue;
        }
        let input = input(w, &outputs);
        outputs.push(
            w.env
                .call(caller, op, input)
                .await
                .unwrap_or_else(|e| panic!("setup {op} for {}: {e}", case.op)),
        );
    }
    outputs
}

/// Writes without a case here, with why; each is tested where it is used.
const WITHOUT_A_CASE: &[(&str, &str)] = &[
    (
        "send_test_message",
        "it sends a message, which no undo takes back, and changes no entity (tests/it/channels.rs)",
    ),
    (
        "create_calendar_feed",
        "its address is a credential, which no undo may bring back (tests/it/channels.rs)",
    ),
    (
        "revoke_calendar_feed",
        "its address is a credential, which no undo may bring back (tests/it/channels.rs)",
    ),
    (
        "create_chat_link",
        "it makes a one-time code; the link it makes when used is audited and undoable (tests/it/telegram.rs)",
    ),
    (
        "sync_bank_connection",
        "it asks a bank, and the request counts against the provider's daily limit even in a dry run; its undo is tested with a bank of the test's own (tests/it/bank_sync.rs)",
    ),
    (
        "link_simplefin",
        "it claims a bank credential once and keeps it as a secret, which no undo may bring back (tests/it/bank_sync.rs)",
    ),
    (
        "set_bank_account_target",
        "it sets where a bank connection's account goes, a setting of the connection beside its credential (tests/it/bank_sync.rs)",
    ),
    (
        "dismiss_recurring_proposal",
        "it hides a suggestion a bank sync made, which is not an entity of the activity (tests/it/bank_sync.rs)",
    ),
    (
        "set_enable_banking",
        "it keeps the household's application key, a secret no undo may bring back (tests/it/bank_sync.rs)",
    ),
    ("start_bank_consent", "it starts a consent at a bank, outside Exhale (tests/it/bank_sync.rs)"),
    (
        "complete_bank_consent",
        "it keeps a bank session, a secret no undo may bring back (tests/it/bank_sync.rs)",
    ),
    (
        "remove_bank_connection",
        "it deletes a bank credential, which no undo may bring back (tests/it/bank_sync.rs)",
    ),
];

#[tokio::test]
async fn every_write_op_has_a_case() {
    let covered: Vec<&str> = cases().iter().map(|c| c.op).collect();
    for meta in ops::all() {
        let outside = WITHOUT_A_CASE.iter().any(|(op, _)| *op == meta.name());
        if meta.info.is_write() && meta.name() != "confirm_change" && !outside {
            assert!(
                covered.contains(&meta.name()),
                "{} has no case in tests/it/catalog.rs",
                meta.name()
            );
        }
    }
}

#[tokio::test]
async fn dry_run_changes_nothing_and_apply_then_undo_round_trips() {
    for case in cases() {
        let w = World::new().await;
        let caller = w.ana.clone();
        let setup = run_setup(&w, &caller, &case).await;
        let input = (case.input)(&w, &setup);

        let before = w.env.dump().await;
        let preview = w.env.app.call_json(&caller, case.op, input.clone(), Mode::DryRun).await;
        let preview = preview.unwrap_or_else(|e| panic!("dry run of {}: {e}", case.op));
        assert_eq!(preview["dry_run"], json!(true), "{}", case.op);
        assert_eq!(preview["audit_ids"], json!([]), "{}: a dry run reports no audit ids", case.op);
        assert!(
            !preview["changes"].as_array().unwrap().is_empty(),
            "{}: the preview lists the changes",
            case.op
        );
        assert_eq!(before, w.env.dump().await, "{}: a dry run changed the database", case.op);

        let applied = w
            .env
            .call(&caller, case.op, input)
            .await
            .unwrap_or_else(|e| panic!("apply {}: {e}", case.op));
        assert_eq!(applied["dry_run"], json!(false));
        assert_eq!(
            applied["changes"].as_array().unwrap().len(),
            preview["changes"].as_array().unwrap().len(),
            "{}: the preview promised what the call did",
            case.op
        );
        assert_ne!(
            data_tables(&before),
            data_tables(&w.env.dump().await),
            "{}: applying changed nothing",
            case.op
        );
        let batch = applied["batch_id"]
            .as_str()
            .unwrap_or_else(|| panic!("{}: no batch_id in {applied}", case.op));
        let audit_ids = applied["audit_ids"].as_array().unwrap();
        assert!(!audit_ids.is_empty(), "{}", case.op);

        let undone = w.env.call(&caller, "undo", json!({"batch_id": batch})).await;
        let undone = undone.unwrap_or_else(|e| panic!("undo of {}: {e}", case.op));
        assert_eq!(undone["reverted"].as_array().unwrap().len(), audit_ids.len(), "{}", case.op);
        assert_eq!(
            data_tables(&before),
            data_tables(&w.env.dump().await),
            "{}: undo did not restore the data",
            case.op
        );

        let again = w.env.call(&caller, "undo", json!({"batch_id": batch})).await;
        assert_eq!(test_support::code(&again), "conflict", "{}: a second undo is refused", case.op);
    }
}

#[tokio::test]
async fn confirm_change_dry_run_changes_nothing_and_applies_once() {
    let w = World::new().await;
    let (_, agent) = w.env.token(&w.ana, "write").await;
    let asked = w.env.call(&agent, "delete_subscription", json!({"id": w.netflix})).await;
    let Err(ops::OpError::ConfirmationRequired { confirmation_id, preview, .. }) = asked else {
        panic!("expected confirmation_required, got {asked:?}")
    };
    assert_eq!(preview["changes"][0]["action"], "deleted");
    let before = w.env.dump().await;
    let dry = w
        .env
        .dry_run(&agent, "confirm_change", json!({"confirmation_id": confirmation_id}))
        .await
        .unwrap();
    assert_eq!(dry["dry_run"], json!(true));
    assert_eq!(before, w.env.dump().await, "a dry run of confirm_change changed the database");
    let applied = w
        .env
        .call(&agent, "confirm_change", json!({"confirmation_id": confirmation_id}))
        .await
        .unwrap();
    assert_eq!(applied["name"], "Netflix");
    let again =
        w.env.call(&agent, "confirm_change", json!({"confirmation_id": confirmation_id})).await;
    assert_eq!(test_support::code(&again), "conflict");
    let undone = crate::fixtures::confirmed(
        &w.env,
        &agent,
        "undo",
        json!({"audit_ids": applied["audit_ids"]}),
    )
    .await;
    assert_eq!(undone["reverted"].as_array().unwrap().len(), 1);
    assert_eq!(
        w.env.call(&w.ana, "get_subscription", json!({"id": w.netflix})).await.unwrap()["name"],
        "Netflix"
    );
}

#[tokio::test]
async fn every_op_has_a_handler_and_the_catalog_is_the_contract() {
    let env = test_support::TestEnv::new();
    let mut names: Vec<&str> = ops::all().iter().map(|m| m.name()).collect();
    names.sort_unstable();
    assert_eq!(env.app.handled_ops(), names);
    assert_eq!(env.app.ops().len(), ops::all().len());
}
