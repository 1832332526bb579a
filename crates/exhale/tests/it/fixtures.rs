//! A seeded world shared by the tests: two households, an owner and a member in the first,
//! shared and private subscriptions, a payment method, charges, shared and private accounts
//! with transactions and a label.

use ops::Caller;
use serde_json::{Value, json};
use test_support::TestEnv;

pub(crate) struct World {
    pub(crate) env: TestEnv,
    /// Owner of household A.
    pub(crate) ana: Caller,
    /// Member of household A.
    pub(crate) bob: Caller,
    /// Member of household A with nothing of their own.
    pub(crate) eve: Caller,
    /// Owner of household B.
    pub(crate) cai: Caller,
    pub(crate) netflix: i64,
    pub(crate) spotify: i64,
    /// Bob's private subscription.
    pub(crate) bobs_gym: i64,
    /// Household B's subscription.
    pub(crate) other_household_sub: i64,
    pub(crate) streaming: i64,
    pub(crate) music: i64,
    pub(crate) card: i64,
    pub(crate) bobs_card: i64,
    pub(crate) charge: i64,
    pub(crate) bobs_charge: i64,
    /// Ana's account, shared with the household.
    pub(crate) joint: i64,
    /// Ana's cash, with no transactions.
    pub(crate) wallet: i64,
    /// Bob's private account.
    pub(crate) bobs_savings: i64,
    /// Household B's account.
    pub(crate) other_household_account: i64,
    /// A transaction on the joint account, labelled `holiday`.
    pub(crate) groceries: i64,
    /// A transaction on Bob's private account.
    pub(crate) bobs_bonus: i64,
    /// Household B's transaction.
    pub(crate) other_household_transaction: i64,
    pub(crate) holiday: i64,
    /// Household A's monthly budget over Streaming and the holiday label.
    pub(crate) budget: i64,
    /// Household A's rule: payees with "groceries" go in Streaming (the world's groceries have
    /// no category).
    pub(crate) rule: i64,
}

pub(crate) fn id(value: &Value) -> i64 {
    value["id"].as_i64().unwrap_or_else(|| panic!("no id in {value}"))
}

pub(crate) async fn category(env: &TestEnv, caller: &Caller, name: &str) -> i64 {
    let list = env.call(caller, "list_categories", json!({})).await.unwrap();
    list["items"].as_array().unwrap().iter().find(|c| c["name"] == name).map(id).unwrap()
}

impl World {
    pub(crate) async fn new() -> Self {
        let env = TestEnv::new();
        let ana = env.household("Home", "ana@a.test").await;
        let bob = env.member(&ana, "Bob", "bob@a.test").await;
        let eve = env.member(&ana, "Eve", "eve@a.test").await;
        let cai = env.household("Other", "cai@b.test").await;
        let streaming = category(&env, &ana, "Streaming").await;
        let music = category(&env, &ana, "Music").await;
        let card = id(&env
            .call(
                &ana,
                "create_payment_method",
                json!({"name": "Visa", "last4": "4242", "expires": "2027-01"}),
            )
            .await
            .unwrap());
        let bobs_card = id(&env
            .call(
                &bob,
                "create_payment_method",
                json!({"name": "Bob's card", "visibility": "private"}),
            )
            .await
            .unwrap());
        let netflix = id(&env
            .call(
                &ana,
                "create_subscription",
                json!({"name": "Netflix", "amount": "12.99", "cycle": "monthly", "next_charge_on": "2026-06-15",
                       "category_id": streaming, "payment_method_id": card, "tags": ["family"]}),
            )
            .await
            .unwrap());
        let spotify = id(&env
            .call(
                &ana,
                "create_subscription",
                json!({"name": "Spotify", "amount": "99.00", "cycle": "yearly", "next_charge_on": "2026-12-10",
                       "category_id": music, "tags": ["family", "music"]}),
            )
            .await
            .unwrap());
        let bobs_gym = id(&env
            .call(
                &bob,
                "create_subscription",
                json!({"name": "Bob's gym", "amount": "30", "cycle": "monthly", "next_charge_on": "2026-10-01",
                       "visibility": "private", "payment_method_id": bobs_card, "tags": ["family"]}),
            )
            .await
            .unwrap());
        let other_household_sub = id(&env
            .call(&cai, "create_subscription", json!({"name": "Netflix", "amount": "9.99", "cycle": "monthly", "next_charge_on": "2026-11-01"}))
            .await
            .unwrap());
        let charges =
            env.call(&ana, "list_charges", json!({"subscription_id": netflix})).await.unwrap();
        let charge = id(&charges["items"][0]);
        let bobs =
            env.call(&bob, "list_charges", json!({"subscription_id": bobs_gym})).await.unwrap();
        let bobs_charge = id(&bobs["items"][0]);
        let joint = id(&env
            .call(
                &ana,
                "create_account",
                json!({"name": "Joint checking", "kind": "checking", "balance": "1200.50"}),
            )
            .await
            .unwrap());
        let wallet = id(&env
            .call(&ana, "create_account", json!({"name": "Wallet", "kind": "cash"}))
            .await
            .unwrap());
        let bobs_savings = id(&env
            .call(
                &bob,
                "create_account",
                json!({"name": "Bob's savings", "kind": "savings", "visibility": "private"}),
            )
            .await
            .unwrap());
        let other_household_account = id(&env
            .call(&cai, "create_account", json!({"name": "Other bank", "kind": "checking"}))
            .await
            .unwrap());
        let holiday =
            id(&env.call(&ana, "create_label", json!({"name": "holiday"})).await.unwrap());
        let groceries = id(&env
            .call(
                &ana,
                "create_transaction",
                json!({"account_id": joint, "on": "2026-11-20", "amount": "-54.30",
                   "payee": "Spotify family groceries", "label_ids": [holiday]}),
            )
            .await
            .unwrap());
        let bobs_bonus = id(&env
            .call(
                &bob,
                "create_transaction",
                json!({"account_id": bobs_savings, "on": "2026-11-21", "amount": "500",
                   "payee": "Bob's bonus", "label_ids": [holiday]}),
            )
            .await
            .unwrap());
        let other_household_transaction = id(&env
            .call(
                &cai,
                "create_transaction",
                json!({"account_id": other_household_account, "on": "2026-11-22",
                   "amount": "-9.99", "payee": "Netflix"}),
            )
            .await
            .unwrap());
        let budget = id(&env
            .call(
                &ana,
                "create_budget",
                json!({"name": "Everyday", "amount": "100", "period": "monthly",
                   "category_ids": [streaming], "label_ids": [holiday]}),
            )
            .await
            .unwrap());
        let rule = id(&env
            .call(
                &ana,
                "create_rule",
                json!({"name": "Groceries", "payee_contains": "groceries", "set_category_id": streaming}),
            )
            .await
            .unwrap());
        Self {
            env,
            ana,
            bob,
            eve,
            cai,
            netflix,
            spotify,
            bobs_gym,
            other_household_sub,
            streaming,
            music,
            card,
            bobs_card,
            charge,
            bobs_charge,
            joint,
            wallet,
            bobs_savings,
            other_household_account,
            groceries,
            bobs_bonus,
            other_household_transaction,
            holiday,
            budget,
            rule,
        }
    }

    /// Ana's "US card", a credit card in dollars, for what another currency changes.
    pub(crate) async fn usd_card(&self) -> i64 {
        let input = json!({"name": "US card", "kind": "credit_card", "currency": "USD"});
        id(&self.env.call(&self.ana, "create_account", input).await.unwrap())
    }
}

/// Calls a write that needs confirmation, checks it asked, and confirms it.
pub(crate) async fn confirmed(env: &TestEnv, caller: &Caller, op: &str, input: Value) -> Value {
    match env.call(caller, op, input).await {
        Err(ops::OpError::ConfirmationRequired { confirmation_id, .. }) => env
            .call(caller, "confirm_change", json!({"confirmation_id": confirmation_id}))
            .await
            .unwrap_or_else(|e| panic!("confirming {op}: {e}")),
        other => panic!("{op} should ask for confirmation, got {other:?}"),
    }
}

/// What a chat bot reaches in `env`: its chats and catalog, and the assistant with no model
/// set up (a household's own settings choose one).
pub(crate) fn chat_services(env: &TestEnv) -> channels::ChatServices {
    let assistant = assistant::Assistant::new(
        env.app.clone(),
        env.app.clone(),
        std::sync::Arc::new(assistant::Providers::default()),
    )
    .unwrap_or_else(|err| panic!("the assistant starts: {err}"));
    channels::ChatServices::new(env.app.clone(), env.app.clone(), std::sync::Arc::new(assistant))
}
