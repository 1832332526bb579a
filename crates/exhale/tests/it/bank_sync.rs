//! Bank connections end to end: a SimpleFIN Bridge of the test's own over TLS, linked and
//! synced through the catalog's invoker (as every adapter calls it), on both stores. Each
//! transaction is recorded once across syncs, pending payments become the booked ones under new
//! ids, a statement import and the feed meet without doubles, an undo removes what a sync added,
//! payments pay their charges, failures leave a status with what to do, the schedule syncs what
//! is due, and agents, other members and other households get only what is theirs.

use banks::Feeds;
use serde_json::{Value, json};
use test_support::{TestEnv, banks::SimpleFinBridge, code};

/// Noon UTC of `day`, in epoch seconds, as SimpleFIN writes times.
fn at(day: &str) -> i64 {
    format!("{day}T12:00:00Z").parse::<jiff::Timestamp>().unwrap().as_second()
}

fn checking(transactions: Value) -> Value {
    json!({
        "conn_id": "CON-1", "id": "ACT-7", "name": "Checking", "currency": "USD",
        "balance": "1520.07", "available-balance": "1495.07", "balance-date": at("2026-11-29"),
        "transactions": transactions
    })
}

/// The month's feed: a booked payment, a pending one.
fn november() -> Value {
    json!([
        {"id": "TRN-1", "posted": at("2026-11-27"), "amount": "-12.99", "description": "NETFLIX.COM", "payee": "Netflix"},
        {"id": "TRN-2", "posted": 0, "pending": true, "transacted_at": at("2026-11-28"), "amount": "-40.00", "description": "SHELL OIL 123"}
    ])
}

struct Bank {
    env: TestEnv,
    bridge: SimpleFinBridge,
    owner: ops::Caller,
}

async fn bank() -> Bank {
    let env = TestEnv::new();
    let bridge = SimpleFinBridge::start().await;
    bridge.add_account(checking(november()));
    env.app.set_bank_feeds(std::sync::Arc::new(
        Feeds::new(std::slice::from_ref(&bridge.authority)).unwrap(),
    ));
    let owner = env.household("Home", "ana@a.test").await;
    Bank { env, bridge, owner }
}

impl Bank {
    async fn link(&self) -> Value {
        let token = self.bridge.setup_token(&format!("CODE-{}", self.bridge.requests().len()));
        self.env.call(&self.owner, "link_simplefin", json!({"setup_token": token})).await.unwrap()
    }

    async fn sync(&self, id: i64) -> Result<Value, ops::OpError> {
        self.env.call(&self.owner, "sync_bank_connection", json!({"connection_id": id})).await
    }

    async fn transactions(&self) -> Vec<(String, String, String, bool, i64)> {
        let page = self.env.call(&self.owner, "search_transactions", json!({})).await.unwrap();
        let mut rows: Vec<(String, String, String, bool, i64)> = page["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["on"].as_str().unwrap().to_owned(),
                    t["amount"]["amount"].as_str().unwrap().to_owned(),
                    t["payee"].as_str().unwrap().to_owned(),
                    t["pending"].as_bool().unwrap_or(false),
                    t["id"].as_i64().unwrap(),
                )
            })
            .collect();
        rows.sort();
        rows
    }

    /// Links a connection only the owner sees: its id.
    async fn link_private(&self) -> i64 {
        let token = self.bridge.setup_token("PRIVATE");
        let input = json!({"setup_token": token, "visibility": "private"});
        let private = self.env.call(&self.owner, "link_simplefin", input).await.unwrap();
        private["connection"]["id"].as_i64().unwrap()
    }

    /// Imports a statement (CSV text) into the account named `account`.
    async fn import(&self, account: &str, statement: &str) -> Value {
        let input = json!({"account_id": account, "content": statement});
        self.env.call(&self.owner, "import_transactions", input).await.unwrap()
    }

    /// The recurring charges proposed in what needs attention: each suggestion's id (its
    /// message ends with it) and message.
    async fn proposals(&self) -> Vec<(i64, String)> {
        let attention =
            self.env.call(&self.owner, "list_attention_items", json!({})).await.unwrap();
        attention["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|item| item["kind"] == "new_recurring")
            .map(|item| {
                let message = item["message"].as_str().unwrap().to_owned();
                let id = message.rsplit(' ').next().unwrap().trim_end_matches('.').parse().unwrap();
                (id, message)
            })
            .collect()
    }

    fn next_day(&self) {
        self.env.clock.advance(jiff::SignedDuration::from_hours(24));
    }
}

fn shown(rows: &[(String, String, String, bool, i64)]) -> Vec<(&str, &str, &str, bool)> {
    rows.iter()
        .map(|(on, amount, payee, pending, _)| {
            (on.as_str(), amount.as_str(), payee.as_str(), *pending)
        })
        .collect()
}

#[tokio::test]
async fn a_linked_bridge_brings_its_accounts_once_and_a_pending_payment_becomes_the_booked_one() {
    let b = bank().await;
    let linked = b.link().await;
    assert_eq!(
        (linked["sync"]["added"].as_u64(), linked["sync"]["updated"].as_u64()),
        (Some(2), Some(0)),
        "{linked}"
    );
    let connection = &linked["connection"];
    assert_eq!(connection["status"], "ok", "{connection}");
    assert_eq!(connection["name"], "CON-1 Bank");
    let account = &connection["accounts"][0];
    assert_eq!(account["account"]["name"], "Checking", "{account}");
    assert_eq!(account["balance"]["amount"], "1520.07");
    assert_eq!(account["balance_on"], "2026-11-29");
    let id = connection["id"].as_i64().unwrap();
    let rows = b.transactions().await;
    assert_eq!(
        shown(&rows),
        [("2026-11-27", "-12.99", "Netflix", false), ("2026-11-28", "-40.00", "Shell", true)]
    );
    let shell = rows[1].4;
    // An agent's briefing says which accounts sync, and when they last did.
    let context = b.env.call(&b.owner, "get_context", json!({})).await.unwrap();
    let markdown = context["markdown"].as_str().unwrap();
    assert!(
        markdown.contains("- #1 CON-1 Bank: ok, last synced 2026-11-29T10:00:00Z; into Checking"),
        "{markdown}"
    );

    // The same window again adds nothing.
    let again = b.sync(id).await.unwrap();
    assert_eq!((again["added"].as_u64(), again["updated"].as_u64()), (Some(0), Some(0)), "{again}");

    // The bank books the pending payment under a new id, a day later, and a new one comes.
    b.bridge.edit_accounts(|accounts| {
        accounts[0] = checking(json!([
            {"id": "TRN-1", "posted": at("2026-11-27"), "amount": "-12.99", "description": "NETFLIX.COM", "payee": "Netflix"},
            {"id": "TRN-9", "posted": at("2026-11-29"), "amount": "-40.00", "description": "SHELL OIL 123"},
            {"id": "TRN-10", "posted": at("2026-11-30"), "amount": "2500.00", "description": "PAYROLL ACME"}
        ]));
    });
    b.next_day();
    let posted = b.sync(id).await.unwrap();
    assert_eq!(
        (posted["added"].as_u64(), posted["updated"].as_u64()),
        (Some(1), Some(1)),
        "{posted}"
    );
    let rows = b.transactions().await;
    assert_eq!(
        shown(&rows),
        [
            ("2026-11-27", "-12.99", "Netflix", false),
            ("2026-11-29", "-40.00", "Shell", false),
            ("2026-11-30", "2500.00", "Payroll", false)
        ]
    );
    assert_eq!(rows[1].4, shell, "the booked payment is the pending one, not a second");

    // A bank that keeps serving the stale pending row beside the booked one changes nothing.
    b.bridge.post(json!({"id": "TRN-2", "posted": 0, "pending": true, "transacted_at": at("2026-11-28"), "amount": "-40.00", "description": "SHELL OIL 123"}));
    let stale = b.sync(id).await.unwrap();
    assert_eq!((stale["added"].as_u64(), stale["updated"].as_u64()), (Some(0), Some(0)), "{stale}");
    assert_eq!(b.transactions().await.len(), 3);
}

#[tokio::test]
async fn a_pending_payment_the_bank_drops_goes_and_an_undone_sync_takes_back_what_it_added() {
    let b = bank().await;
    let linked = b.link().await;
    let id = linked["connection"]["id"].as_i64().unwrap();
    b.bridge.edit_accounts(|accounts| {
        accounts[0] = checking(json!([
            {"id": "TRN-1", "posted": at("2026-11-27"), "amount": "-12.99", "description": "NETFLIX.COM", "payee": "Netflix"},
            {"id": "TRN-3", "posted": at("2026-11-29"), "amount": "-7.50", "description": "CORNER CAFE"},
            {"id": "TRN-4", "posted": at("2026-11-29"), "amount": "-7.50", "description": "CORNER CAFE"}
        ]));
    });
    let synced = b.sync(id).await.unwrap();
    assert_eq!(synced["pending_dropped"], 1, "{synced}");
    assert_eq!(synced["added"], 2, "two coffees of one price on one day are two: {synced}");
    let rows = b.transactions().await;
    assert_eq!(
        shown(&rows),
        [
            ("2026-11-27", "-12.99", "Netflix", false),
            ("2026-11-29", "-7.50", "Corner", false),
            ("2026-11-29", "-7.50", "Corner", false)
        ]
    );

    let undone =
        b.env.call(&b.owner, "undo", json!({"batch_id": synced["batch_id"]})).await.unwrap();
    assert!(!undone["reverted"].as_array().unwrap().is_empty(), "{undone}");
    let rows = b.transactions().await;
    assert_eq!(
        shown(&rows),
        [("2026-11-27", "-12.99", "Netflix", false), ("2026-11-28", "-40.00", "Shell", true)],
        "the coffees are gone and the pending payment is back"
    );
    // What a person took back does not come back with the next sync.
    let later = b.sync(id).await.unwrap();
    assert_eq!(later["added"], 0, "{later}");
    assert_eq!(b.transactions().await.len(), 1, "the pending one the bank no longer shows went");
}

#[tokio::test]
async fn a_booked_payment_several_pending_ones_could_be_is_added_and_each_is_a_possible_duplicate()
{
    let b = bank().await;
    b.bridge.post(json!({"id": "TRN-4", "posted": 0, "pending": true, "transacted_at": at("2026-11-28"), "amount": "-40.00", "description": "SHELL OIL 124"}));
    let id = b.link().await["connection"]["id"].as_i64().unwrap();
    let duplicates = || async {
        let attention = b.env.call(&b.owner, "list_attention_items", json!({})).await.unwrap();
        attention["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|item| item["kind"] == "possible_duplicate")
            .map(|item| item["message"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(duplicates().await, Vec::<String>::new(), "two pending payments are not doubles");

    // Booked under a new id while both pending ones are still shown: either could be it.
    b.next_day();
    b.bridge.post(json!({"id": "TRN-5", "posted": at("2026-11-29"), "amount": "-40.00", "description": "SHELL OIL 123"}));
    let synced = b.sync(id).await.unwrap();
    assert_eq!(
        (synced["added"].as_u64(), synced["updated"].as_u64()),
        (Some(1), Some(0)),
        "{synced}"
    );
    let found = duplicates().await;
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0].starts_with("Checking: the pending -$40.00 of Nov 28, 2026 (SHELL OIL 123) may be the payment booked on Nov 29, 2026. If it is, delete transaction "),
        "{found:?}"
    );

    // The person deletes the one it was; the other stays until the bank stops showing it.
    let pending: i64 = found[0]
        .split("delete transaction ")
        .nth(1)
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    b.env.call(&b.owner, "delete_transaction", json!({"id": pending})).await.unwrap();
    assert_eq!(duplicates().await.len(), 1);
    b.bridge.edit_accounts(|accounts| {
        let transactions = accounts[0]["transactions"].as_array_mut().unwrap();
        transactions.retain(|t| !t["pending"].as_bool().unwrap_or(false));
    });
    b.sync(id).await.unwrap();
    assert_eq!(duplicates().await, Vec::<String>::new());
}

#[tokio::test]
async fn a_statement_import_and_the_bank_feed_record_each_payment_once_whichever_comes_first() {
    // The statement first, into the account the feed then goes into.
    let b = bank().await;
    b.env
        .call(
            &b.owner,
            "create_account",
            json!({"name": "checking", "kind": "checking", "currency": "USD"}),
        )
        .await
        .unwrap();
    let statement = "Date,Description,Amount,Currency\n2026-11-26,NETFLIX.COM 866-579,-12.99,USD\n2026-11-20,GROCER,-30.10,USD\n";
    let imported = b.import("checking", statement).await;
    assert_eq!(imported["imported"], 2);
    let linked = b.link().await;
    assert_eq!(linked["sync"]["from_statements"], 1, "{linked}");
    assert_eq!(linked["sync"]["added"], 1, "only the pending one is new: {linked}");
    assert_eq!(linked["connection"]["accounts"][0]["account"]["name"], "checking");
    assert_eq!(b.transactions().await.len(), 3);

    // The feed first, then a statement of the same days.
    let b = bank().await;
    b.link().await;
    let statement = "Date,Description,Amount,Currency\n2026-11-28,NETFLIX.COM 866-579,-12.99,USD\n2026-11-21,BAKERY,-4.20,USD\n";
    let imported = b.import("Checking", statement).await;
    assert_eq!(
        (imported["imported"].as_u64(), imported["already_imported"].as_u64()),
        (Some(1), Some(1)),
        "{imported}"
    );
    assert_eq!(b.transactions().await.len(), 3);
    // Imported again, still nothing twice.
    let again = b.import("Checking", statement).await;
    assert_eq!(again["imported"], 0, "{again}");
}

#[tokio::test]
async fn a_synced_payment_pays_its_subscription_charge_at_the_real_amount() {
    let b = bank().await;
    b.env
        .call(
            &b.owner,
            "create_subscription",
            json!({"name": "Netflix", "amount": "11.99", "currency": "USD", "cycle": "monthly",
                "next_charge_on": "2026-11-26"}),
        )
        .await
        .unwrap();
    b.env.app.materialise_due_charges().await.unwrap();
    let linked = b.link().await;
    assert_eq!(linked["sync"]["matched"], 1, "{linked}");
    let charges = b.env.call(&b.owner, "list_charges", json!({})).await.unwrap();
    let charge = &charges["items"][0];
    assert_eq!(
        (charge["status"].as_str(), charge["amount"]["amount"].as_str()),
        (Some("paid"), Some("12.99")),
        "{charge}"
    );
}

#[tokio::test]
async fn a_bridge_that_refuses_or_fails_leaves_a_status_with_what_to_do_and_nothing_half_written() {
    let b = bank().await;
    let id = b.link().await["connection"]["id"].as_i64().unwrap();
    let before = b.transactions().await;

    b.bridge.answer_next(500);
    b.bridge.edit_accounts(|accounts| accounts[0] = checking(json!([])));
    let failed = b.sync(id).await.unwrap_err();
    assert_eq!(code(&Err::<(), _>(failed.clone())), "unavailable", "{failed:?}");
    let listed = b.env.call(&b.owner, "list_bank_connections", json!({})).await.unwrap();
    let connection = &listed["items"][0];
    assert_eq!(connection["status"], "try_later", "{connection}");
    assert!(connection["problem"].as_str().unwrap().contains("500"), "{connection}");
    assert_eq!(connection["next_sync_at"], "2026-11-29T10:15:00Z", "{connection}");
    assert_eq!(b.transactions().await, before);

    b.bridge.revoke();
    let refused = b.sync(id).await.unwrap_err();
    assert!(refused.text().render().contains("Link it again"), "{refused:?}");
    let listed = b.env.call(&b.owner, "list_bank_connections", json!({})).await.unwrap();
    assert_eq!(listed["items"][0]["status"], "needs_relink", "{listed}");
    let attention = b.env.call(&b.owner, "list_attention_items", json!({})).await.unwrap();
    let item = attention["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["kind"] == "bank_connection")
        .unwrap_or_else(|| panic!("{attention}"));
    assert!(item["message"].as_str().unwrap().contains("CON-1 Bank needs you"), "{item}");
    // The schedule leaves it to a person.
    b.env.clock.advance(jiff::SignedDuration::from_hours(48));
    assert_eq!(b.env.app.sync_due_bank_connections().await, 0);
    assert_eq!(b.transactions().await, before);
}

#[tokio::test]
async fn a_bridge_that_warns_of_its_quota_keeps_what_came_and_is_asked_nothing_more_that_day() {
    let b = bank().await;
    // The link's request is within the quota; the next is warned about; one more would
    // disable the access.
    b.bridge.quota(1, 2);
    let id = b.link().await["connection"]["id"].as_i64().unwrap();
    b.bridge.post(json!({"id": "TRN-3", "posted": at("2026-11-29"), "amount": "-3.10", "description": "BAKERY"}));
    let synced = b.sync(id).await.unwrap();
    assert_eq!(
        (synced["added"].as_u64(), synced["status"].as_str()),
        (Some(1), Some("rate_limited")),
        "{synced}"
    );
    let listed = b.env.call(&b.owner, "list_bank_connections", json!({})).await.unwrap();
    let connection = &listed["items"][0];
    assert_eq!(connection["next_sync_at"], "2026-11-30T00:00:00Z", "{connection}");
    assert!(
        connection["problem"].as_str().unwrap().contains("make fewer requests"),
        "{connection}"
    );

    // Neither a person nor the schedule asks again before midnight UTC.
    let refused = b.sync(id).await;
    assert_eq!(code(&refused), "rate_limited");
    assert!(format!("{refused:?}").contains("2026-11-30 00:00"), "{refused:?}");
    b.env.clock.set("2026-11-29T23:59:00Z".parse().unwrap());
    assert_eq!(b.env.app.sync_due_bank_connections().await, 0);
    let asked = b.bridge.requests().iter().filter(|r| r.path.ends_with("/accounts")).count();
    assert_eq!(asked, 2, "the access was never disabled");
}

#[tokio::test]
async fn the_schedule_syncs_what_is_due_once_and_a_connection_stops_at_its_daily_limit() {
    let b = bank().await;
    let id = b.link().await["connection"]["id"].as_i64().unwrap();
    assert_eq!(b.env.app.sync_due_bank_connections().await, 0, "linked just now");
    b.env.clock.advance(jiff::SignedDuration::from_hours(6));
    assert_eq!(b.env.app.sync_due_bank_connections().await, 1);
    assert_eq!(b.env.app.sync_due_bank_connections().await, 0, "not due again yet");

    // The link and the scheduled sync made 2 requests today; the Bridge's day allows 20.
    for _ in 2..20 {
        b.sync(id).await.unwrap();
    }
    let limited = b.sync(id).await.unwrap_err();
    assert_eq!(code(&Err::<(), _>(limited.clone())), "rate_limited", "{limited:?}");
    let accounts_requests =
        b.bridge.requests().iter().filter(|r| r.path.ends_with("/accounts")).count();
    assert_eq!(accounts_requests, 20);
}

#[tokio::test]
async fn a_member_cannot_aim_exhale_at_this_machine_and_agents_cannot_link_or_see_a_credential() {
    let b = bank().await;
    let member = b.env.member(&b.owner, "Bo", "bo@a.test").await;
    let token = b.bridge.setup_token("MEMBER");
    let refused =
        b.env.call(&member, "link_simplefin", json!({"setup_token": token})).await.unwrap_err();
    match &refused {
        ops::OpError::InvalidInput { pointer, message } => {
            assert_eq!(pointer, "/setup_token");
            assert!(message.render().contains("local network"), "{}", message.render());
        }
        other => panic!("{other:?}"),
    }
    // Nothing was claimed, nothing kept.
    assert!(b.bridge.requests().is_empty());
    let listed = b.env.call(&member, "list_bank_connections", json!({})).await.unwrap();
    assert_eq!(listed["items"], json!([]));

    let linked = b.link().await;
    let (_, agent) = b.env.token(&b.owner, "write").await;
    let forbidden = b
        .env
        .call(&agent, "link_simplefin", json!({"setup_token": b.bridge.setup_token("AGENT")}))
        .await
        .unwrap_err();
    assert_eq!(code(&Err::<(), _>(forbidden)), "forbidden");
    let id = linked["connection"]["id"].as_i64().unwrap();
    let removed = b
        .env
        .call(&agent, "remove_bank_connection", json!({"connection_id": id}))
        .await
        .unwrap_err();
    assert_eq!(code(&Err::<(), _>(removed)), "forbidden");
    // An agent lists and syncs; never a credential, in a list, a sync or an export.
    let listed = b.env.call(&agent, "list_bank_connections", json!({})).await.unwrap();
    let synced =
        b.env.call(&agent, "sync_bank_connection", json!({"connection_id": id})).await.unwrap();
    let export = b.env.call(&b.owner, "export_data", json!({})).await.unwrap();
    for text in [listed.to_string(), synced.to_string(), export.to_string()] {
        assert!(!text.contains("p@ss") && !text.contains("p%40ss"), "a credential leaked");
    }
}

#[tokio::test]
async fn another_members_private_connection_and_another_households_are_not_found() {
    let b = bank().await;
    let member = b.env.member(&b.owner, "Bo", "bo@a.test").await;
    let id = b.link_private().await;
    let other = b.env.household("Other", "cai@b.test").await;
    for caller in [&member, &other] {
        let listed = b.env.call(caller, "list_bank_connections", json!({})).await.unwrap();
        assert_eq!(listed["items"], json!([]), "{listed}");
        let sync = b.env.call(caller, "sync_bank_connection", json!({"connection_id": id})).await;
        assert_eq!(code(&sync), "not_found");
        let remove =
            b.env.call(caller, "remove_bank_connection", json!({"connection_id": id})).await;
        assert_eq!(code(&remove), "not_found");
        let search = b.env.call(caller, "search_transactions", json!({})).await.unwrap();
        assert_eq!(search["total"], 0, "{search}");
    }
    // Its owner removes it: its transactions stay, nothing more arrives.
    let removed =
        b.env.call(&b.owner, "remove_bank_connection", json!({"connection_id": id})).await.unwrap();
    assert_eq!(removed["id"], id);
    assert_eq!(b.transactions().await.len(), 2);
    let listed = b.env.call(&b.owner, "list_bank_connections", json!({})).await.unwrap();
    assert_eq!(listed["items"], json!([]));
    let dump = b.env.dump().await;
    assert!(!dump.contains("p@ss") && !dump.contains("p%40ss"), "the credential is forgotten");
}

#[tokio::test]
async fn two_instances_asked_to_sync_one_connection_at_once_ask_the_bank_once() {
    let b = bank().await;
    let id = b.link().await["connection"]["id"].as_i64().unwrap();
    let other = b.env.reopen();
    other.set_bank_feeds(std::sync::Arc::new(
        Feeds::new(std::slice::from_ref(&b.bridge.authority)).unwrap(),
    ));
    let held = b.bridge.hold_accounts();
    let first = {
        let (app, owner) = (b.env.app.clone(), b.owner.clone());
        tokio::spawn(async move {
            use ops::Catalog as _;
            app.call_json(
                &owner,
                "sync_bank_connection",
                json!({"connection_id": id}),
                ops::Mode::Apply,
            )
            .await
        })
    };
    held.arrived().await;
    use ops::Catalog as _;
    let second = other
        .call_json(&b.owner, "sync_bank_connection", json!({"connection_id": id}), ops::Mode::Apply)
        .await;
    assert_eq!(code(&second), "conflict", "{second:?}");
    held.release();
    let first = first.await.unwrap().unwrap();
    assert_eq!(first["status"], "ok", "{first}");
    let asked = b.bridge.requests().iter().filter(|r| r.path.ends_with("/accounts")).count();
    assert_eq!(asked, 2, "the link's and one sync's");
}

#[tokio::test]
async fn a_person_chooses_where_a_bank_account_goes_and_a_dry_run_sync_writes_nothing() {
    let b = bank().await;
    let linked = b.link().await;
    let id = linked["connection"]["id"].as_i64().unwrap();
    let bank_account = linked["connection"]["accounts"][0]["id"].as_i64().unwrap();
    let target = |input: Value| b.env.call(&b.owner, "set_bank_account_target", input);
    let euros = b
        .env
        .call(&b.owner, "create_account", json!({"name": "Euros", "kind": "savings"}))
        .await
        .unwrap();
    let wrong = target(json!({"bank_account_id": bank_account, "account_id": euros["id"]})).await;
    assert_eq!(code(&wrong), "invalid_input", "{wrong:?}");
    let moved =
        target(json!({"bank_account_id": bank_account, "create_account": true})).await.unwrap();
    let account = &moved["accounts"][0]["account"];
    assert_eq!(account["name"], "Checking", "{moved}");
    let new_account = account["id"].as_i64().unwrap();
    assert_ne!(Some(new_account), linked["connection"]["accounts"][0]["account"]["id"].as_i64());

    b.bridge.post(json!({"id": "TRN-5", "posted": at("2026-11-29"), "amount": "-3.10", "description": "BAKERY"}));
    let before = b.env.dump().await;
    let preview = b
        .env
        .dry_run(&b.owner, "sync_bank_connection", json!({"connection_id": id}))
        .await
        .unwrap();
    assert_eq!(
        (preview["dry_run"].as_bool(), preview["added"].as_u64()),
        (Some(true), Some(1)),
        "{preview}"
    );
    // The rows of the transactions table, as the dump lists them under "## transactions".
    let transactions_of = |dump: &str| {
        dump.split("\n## ")
            .find_map(|table| table.strip_prefix("transactions\n"))
            .map(str::to_owned)
            .unwrap_or_default()
    };
    assert_eq!(transactions_of(&before).lines().count(), 2, "{before}");
    assert_eq!(
        transactions_of(&before),
        transactions_of(&b.env.dump().await),
        "a dry run added nothing"
    );

    let synced = b.sync(id).await.unwrap();
    assert_eq!(synced["added"], 1, "{synced}");
    let search = b
        .env
        .call(&b.owner, "search_transactions", json!({"account_id": new_account}))
        .await
        .unwrap();
    assert_eq!(search["total"], 1, "only what came after the move: {search}");

    // Not recorded at all.
    let stopped = target(json!({"bank_account_id": bank_account})).await.unwrap();
    assert!(stopped["accounts"][0].get("account").is_none(), "{stopped}");
    b.bridge.post(json!({"id": "TRN-6", "posted": at("2026-11-29"), "amount": "-1.10", "description": "KIOSK"}));
    assert_eq!(b.sync(id).await.unwrap()["added"], 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_person_links_a_bridge_at_the_terminal_with_the_token_on_stdin_and_syncs_it() {
    use crate::cli::{create_owner, exhale_with_env, stdout};
    let bridge = SimpleFinBridge::start().await;
    bridge.add_account(checking(november()));
    let dir = test_support::DataDir::new();
    let authority = bridge.write_authority(dir.path()).to_str().unwrap().to_owned();
    let token = bridge.setup_token("TERMINAL");
    let (said, listed, synced) = tokio::task::spawn_blocking(move || {
        create_owner(&dir, "a long enough password");
        let env = [("EXHALE_BANK_CA_FILE", authority.as_str())];
        let run = |args: &[&str], stdin: &str| exhale_with_env(&dir, args, stdin, &env);
        let linked = run(&["bank", "link", "simplefin"], &format!("{token}\n"));
        let said = String::from_utf8_lossy(&linked.stderr).into_owned();
        stdout(&linked);
        let listed = stdout(&run(&["bank", "list"], ""));
        let synced = stdout(&run(&["bank", "sync", "1"], ""));
        (said, listed, synced)
    })
    .await
    .unwrap();
    assert!(said.contains("Linked CON-1 Bank: 1 accounts, 2 transactions added."), "{said}");
    let listed: Value = serde_json::from_str(&listed).unwrap();
    assert_eq!(listed["items"][0]["accounts"][0]["account"]["name"], "Checking", "{listed}");
    assert!(!listed.to_string().contains("p%40ss"), "no credential in a listing");
    let synced: Value = serde_json::from_str(&synced).unwrap();
    assert_eq!(
        (synced["added"].as_u64(), synced["status"].as_str()),
        (Some(0), Some("ok")),
        "{synced}"
    );
}

/// Posts a form that changes something, and reads the page it goes back to.
async fn done(visitor: &mut crate::web::Visitor, path: &str, form: &[(&str, &str)]) -> String {
    let posted = visitor.post(path, form).await;
    assert_eq!(posted.status, reqwest::StatusCode::SEE_OTHER, "{}", posted.body);
    let back = visitor.get(posted.location.as_deref().unwrap()).await;
    crate::web::unescape(&back.body)
}

#[tokio::test]
async fn a_person_links_a_bridge_on_the_web_sees_where_its_accounts_go_syncs_and_removes_it() {
    use crate::web::{PASSWORD, Visitor, unescape};
    let b = bank().await;
    let server = b.env.serve().await;
    let mut ana = Visitor::new(&server);
    ana.sign_in("ana@a.test", PASSWORD).await;
    let page = ana.get("/settings/banks").await;
    assert_eq!(page.status, reqwest::StatusCode::OK);
    let csrf = Visitor::hidden(&page, "csrf");

    // A token that is not one is refused beside the form, and nothing is asked of the Bridge.
    let wrong =
        ana.post("/settings/banks/link", &[("csrf", &csrf), ("setup_token", "hello")]).await;
    assert_eq!(wrong.status, reqwest::StatusCode::UNPROCESSABLE_ENTITY, "{}", wrong.body);
    assert!(unescape(&wrong.body).contains("not a SimpleFIN setup token"), "{}", wrong.body);
    assert!(b.bridge.requests().is_empty());

    let token = b.bridge.setup_token("WEB");
    let shown =
        done(&mut ana, "/settings/banks/link", &[("csrf", &csrf), ("setup_token", &token)]).await;
    for text in ["Linked.", "CON-1 Bank", "Checking", "$1,520.07", "Goes into"] {
        assert!(shown.contains(text), "the page lacks {text}: {shown}");
    }
    assert!(!shown.contains("p%40ss") && !shown.contains("user-1"), "no credential on the page");

    let synced = done(&mut ana, "/settings/banks/1/sync", &[("csrf", &csrf)]).await;
    assert!(synced.contains("Synced."), "{synced}");
    let money = ana.get("/money").await;
    assert!(money.body.contains("data-testid=\"bank-health\""), "{}", money.body);

    // Where an account goes: a new account.
    let moved =
        done(&mut ana, "/settings/banks/accounts/1/target", &[("csrf", &csrf), ("target", "new")])
            .await;
    assert!(moved.contains("The next sync goes there."), "{moved}");
    let accounts = b.env.call(&b.owner, "list_accounts", json!({})).await.unwrap();
    assert_eq!(accounts["items"].as_array().unwrap().len(), 2, "{accounts}");

    let asked = ana.get("/settings/banks/1/remove").await;
    assert!(unescape(&asked.body).contains("Remove this bank connection?"), "{}", asked.body);
    let removed = done(&mut ana, "/settings/banks/1/remove", &[("csrf", &csrf)]).await;
    assert!(removed.contains("Removed."), "{removed}");
    let listed = b.env.call(&b.owner, "list_bank_connections", json!({})).await.unwrap();
    assert_eq!(listed["items"], json!([]));
}

#[tokio::test]
async fn another_members_agent_finds_no_private_connection_over_rest_or_mcp() {
    let b = bank().await;
    let id = b.link_private().await;
    let member = b.env.member(&b.owner, "Bo", "bo@a.test").await;
    let created = b
        .env
        .call(
            &member,
            "create_token",
            json!({"name": "Bo's agent", "scope": "write", "tools": "full"}),
        )
        .await
        .unwrap();
    let secret = created["secret"].as_str().unwrap().to_owned();
    let server = b.env.serve().await;

    let client = reqwest::Client::new();
    let listed: Value = client
        .get(server.url("/api/v1/ops/list_bank_connections"))
        .bearer_auth(&secret)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed["items"], json!([]), "{listed}");
    let sync = client
        .post(server.url("/api/v1/ops/sync_bank_connection"))
        .bearer_auth(&secret)
        .json(&json!({"connection_id": id}))
        .send()
        .await
        .unwrap();
    assert_eq!(sync.status(), reqwest::StatusCode::NOT_FOUND);

    let mcp = crate::mcp::http_client(server.url("/mcp"), &secret, "bank-test").await;
    let result = crate::mcp::call(&mcp, "sync_bank_connection", json!({"connection_id": id})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(crate::mcp::text(&result).contains("No bank connection with id"), "{result:?}");
    let linking =
        crate::mcp::call(&mcp, "link_simplefin", json!({"setup_token": b.bridge.setup_token("X")}))
            .await;
    assert_eq!(linking.is_error, Some(true), "an agent cannot link: {linking:?}");
    mcp.cancel().await.unwrap();
    assert_eq!(b.bridge.requests().iter().filter(|r| r.path.ends_with("/accounts")).count(), 1);
}

/// Netflix, monthly, on the 27th of the three months before the tests' day.
fn netflix_three_months() -> Vec<Value> {
    ["09", "10", "11"]
        .map(|month| {
            let day = format!("2026-{month}-27");
            json!({"id": format!("N-{month}"), "posted": at(&day), "amount": "-12.99", "description": "NETFLIX.COM"})
        })
        .into()
}

#[tokio::test]
async fn a_recurring_charge_the_feed_shows_is_proposed_until_a_person_adds_or_dismisses_it() {
    let b = bank().await;
    b.bridge.edit_accounts(|accounts| {
        let mut rows = netflix_three_months();
        rows.push(json!({"id": "G-1", "posted": at("2026-11-03"), "amount": "-54.10", "description": "GROCER"}));
        accounts[0] = checking(Value::Array(rows));
    });
    b.link().await;
    let found = b.proposals().await;
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].1.starts_with(
            "Netflix looks like a new recurring charge on Checking: $12.99, monthly, next about"
        ),
        "{found:?}"
    );
    // Nothing was created behind the person's back.
    let subscriptions = b.env.call(&b.owner, "list_subscriptions", json!({})).await.unwrap();
    assert_eq!(subscriptions["total"], 0, "{subscriptions}");

    // Dismissed, it stays dismissed however often the feed shows it.
    let (_, agent) = b.env.token(&b.owner, "write").await;
    b.env.call(&agent, "dismiss_recurring_proposal", json!({"id": found[0].0})).await.unwrap();
    let connection = b.env.call(&b.owner, "list_bank_connections", json!({})).await.unwrap();
    let connection_id = connection["items"][0]["id"].as_i64().unwrap();
    b.bridge.post(
        json!({"id": "X-1", "posted": at("2026-11-28"), "amount": "-1.00", "description": "KIOSK"}),
    );
    b.sync(connection_id).await.unwrap();
    assert_eq!(b.proposals().await, []);
    let again = b.env.call(&b.owner, "dismiss_recurring_proposal", json!({"id": 999})).await;
    assert_eq!(code(&again), "not_found");
}

#[tokio::test(flavor = "multi_thread")]
async fn two_serve_processes_sync_a_due_connection_once_and_a_person_waits_for_it() {
    use crate::{
        cli::{exhale_with_env, owner_with_token, stdout},
        several_instances::{Pair, within},
        web::{Visitor, read_events},
    };
    let bridge = SimpleFinBridge::start().await;
    bridge.add_account(checking(november()));
    let dir = test_support::DataDir::postgres();
    let authority = bridge.write_authority(dir.path()).to_str().unwrap().to_owned();
    let token = bridge.setup_token("PAIR");
    let ca = authority.clone();
    let (dir, api_token) = tokio::task::spawn_blocking(move || {
        let api_token = owner_with_token(&dir, "write");
        let env = [("EXHALE_BANK_CA_FILE", ca.as_str())];
        let linked = exhale_with_env(&dir, &["bank", "link", "simplefin"], &token, &env);
        stdout(&linked);
        // Its time has come (the schedule syncs every six hours).
        dir.commit_as_exhale(
            "SELECT set_config('exhale.every_household', 'on', true)",
            "UPDATE bank_connections SET next_sync_at = '2000-01-01T00:00:00Z'",
        );
        (dir, api_token)
    })
    .await
    .unwrap();
    bridge.post(json!({"id": "TRN-3", "posted": at("2026-11-29"), "amount": "-3.10", "description": "BAKERY"}));
    let held = bridge.hold_accounts();
    let env = [("EXHALE_BANK_CA_FILE", authority.as_str()), ("EXHALE_TOKEN_RATE_PER_SECOND", "0")];
    let pair = Pair::start_with(&dir, &env);
    let [first, second] = &pair.urls;
    let mut ana = Visitor::at(second);
    ana.sign_in("ana@a.test", "a long enough password").await;
    let mut stream = ana.events("/events").await;
    assert_eq!(read_events(&mut stream, 1).await[0].0, "ready");

    // The instance that leads asks the Bridge; while it waits, a person's sync through either
    // instance is told it is under way, and asks nothing.
    within(held.arrived()).await;
    let sync_through = |url: &str| {
        reqwest::Client::new()
            .post(format!("{url}/api/v1/ops/sync_bank_connection"))
            .bearer_auth(&api_token)
            .json(&json!({"connection_id": 1}))
            .send()
    };
    for url in [first, second] {
        let refused = sync_through(url).await.unwrap();
        assert_eq!(refused.status(), reqwest::StatusCode::CONFLICT);
    }
    held.release();
    let events = within(read_events(&mut stream, 1)).await;
    assert!(events[0].1.contains("sync_bank_connection"), "{events:?}");
    let asked = bridge.requests().iter().filter(|r| r.path.ends_with("/accounts")).count();
    assert_eq!(asked, 2, "the link's request and the schedule's, once across both");

    // Done, the lease is free again: a person syncs through the other instance.
    held.release();
    let synced = sync_through(second).await.unwrap();
    assert_eq!(synced.status(), reqwest::StatusCode::OK);
    let synced: Value = synced.json().await.unwrap();
    assert_eq!(
        (synced["added"].as_u64(), synced["status"].as_str()),
        (Some(0), Some("ok")),
        "{synced}"
    );
}

#[tokio::test]
async fn a_person_connects_a_european_bank_through_enable_banking_on_the_web_and_it_syncs() {
    use crate::web::{PASSWORD, Visitor, unescape};
    use test_support::enable_banking::{APPLICATION_ID, APPLICATION_KEY};
    let env = TestEnv::new();
    let fake = enable_banking(&env).await;
    fake.add_account(
        "uid-1",
        "HASH-A",
        "Cuenta",
        json!([
            {"entry_reference": "E1", "transaction_amount": {"amount": "12.99", "currency": "EUR"},
             "credit_debit_indicator": "DBIT", "status": "BOOK", "booking_date": "2026-11-27",
             "creditor": {"name": "Netflix"}, "remittance_information": ["NETFLIX.COM"]},
            {"entry_reference": "E2", "transaction_amount": {"amount": "40.00", "currency": "EUR"},
             "credit_debit_indicator": "DBIT", "status": "PDNG", "transaction_date": "2026-11-28",
             "remittance_information": ["SHELL 123"]},
            {"entry_reference": "E3", "transaction_amount": {"amount": "2500.00", "currency": "EUR"},
             "credit_debit_indicator": "CRDT", "status": "BOOK", "booking_date": "2026-11-25",
             "debtor": {"name": "ACME"}}
        ]),
    );
    let owner = env.household("Home", "ana@a.test").await;
    let member = env.member(&owner, "Bo", "bo@a.test").await;
    let server = env.serve().await;
    let mut ana = Visitor::new(&server);
    ana.sign_in("ana@a.test", PASSWORD).await;
    let page = ana.get("/settings/banks").await;
    let csrf = Visitor::hidden(&page, "csrf");

    // The household's application: a key that is not one is refused, and never shown again.
    let wrong = ana
        .post(
            "/settings/banks/application",
            &[("csrf", &csrf), ("application_id", APPLICATION_ID), ("private_key", "hello")],
        )
        .await;
    assert_eq!(wrong.status, reqwest::StatusCode::UNPROCESSABLE_ENTITY, "{}", wrong.body);
    let saved = done(
        &mut ana,
        "/settings/banks/application",
        &[("csrf", &csrf), ("application_id", APPLICATION_ID), ("private_key", APPLICATION_KEY)],
    )
    .await;
    assert!(saved.contains("Saved the Enable Banking application"), "{saved}");
    assert!(!saved.contains("PRIVATE KEY"), "the key is not shown");
    let (_, agent) = env.token(&owner, "write").await;
    let forbidden = env
        .call(&agent, "set_enable_banking", json!({"application_id": "x", "private_key": "y"}))
        .await;
    assert_eq!(code(&forbidden), "forbidden");

    // The banks of a country, to choose from; then to the bank, and back.
    let finnish = unescape(&ana.get("/settings/banks?country=fi").await.body);
    let choices = finnish.split("data-testid=\"bank-choices\"").nth(1).unwrap();
    let choices = choices.split("</select>").next().unwrap();
    assert!(choices.contains(">Nordea<") && choices.contains(">OP<"), "{choices}");
    assert!(!choices.contains("Swedbank"), "only Finland's banks: {choices}");
    assert_eq!(Visitor::hidden(&ana.get("/settings/banks?country=fi").await, "country"), "FI");
    let sent = ana
        .post("/settings/banks/consent", &[("csrf", &csrf), ("country", "FI"), ("bank", "Nordea")])
        .await;
    assert_eq!(sent.status, reqwest::StatusCode::SEE_OTHER, "{}", sent.body);
    let at_the_bank = sent.location.unwrap();
    assert!(at_the_bank.starts_with("https://bank.example/consent?state="), "{at_the_bank}");
    let state = at_the_bank.rsplit('=').next().unwrap().to_owned();
    let asked = fake.requests().into_iter().find(|r| r.path == "/auth").unwrap();
    assert_eq!(asked.body["redirect_url"], server.url("/settings/banks/return"));
    let code = fake.approve(&state).unwrap();
    let back = format!("/settings/banks/return?state={state}&code={code}");
    // Another member cannot complete Ana's consent.
    let stolen =
        env.call(&member, "complete_bank_consent", json!({"state": state, "code": code})).await;
    assert_eq!(test_support::code(&stolen), "not_found");
    let returned = ana.get(&back).await;
    assert_eq!(returned.status, reqwest::StatusCode::SEE_OTHER, "{}", returned.body);
    let connected = unescape(&ana.get(returned.location.as_deref().unwrap()).await.body);
    for text in ["Connected.", "Nordea", "Cuenta", "€1,320.07"] {
        assert!(connected.contains(text), "the page lacks {text}: {connected}");
    }
    let again = ana.get(&back).await;
    assert!(unescape(&again.body).contains("used already"), "{}", again.body);
    let search = env.call(&owner, "search_transactions", json!({})).await.unwrap();
    assert_eq!(search["total"], 3, "{search}");

    // A bank's limit, then an ended consent: a status with what to do.
    let listed = env.call(&owner, "list_bank_connections", json!({})).await.unwrap();
    let id = listed["items"][0]["id"].as_i64().unwrap();
    assert_eq!(listed["items"][0]["consent_expires_at"], "2027-02-27T10:00:00Z", "{listed}");
    // A week before the consent ends, it needs attention.
    let warned = |attention: Value| {
        attention["items"].as_array().unwrap().iter().any(|item| {
            item["message"]
                .as_str()
                .unwrap()
                .contains("The bank's consent for Nordea ends on Feb 27, 2027")
        })
    };
    let attention = env.call(&owner, "list_attention_items", json!({})).await.unwrap();
    assert!(!warned(attention), "not yet");
    env.clock.set("2027-02-21T10:00:00Z".parse().unwrap());
    let attention = env.call(&owner, "list_attention_items", json!({})).await.unwrap();
    assert!(warned(attention.clone()), "{attention}");
    env.clock.set(test_support::START.parse().unwrap());
    fake.refuse_next(429, "ASPSP_RATE_LIMIT_EXCEEDED", Some(120));
    let limited = env.call(&owner, "sync_bank_connection", json!({"connection_id": id})).await;
    assert_eq!(test_support::code(&limited), "rate_limited");
    // Until the bank's two minutes pass, nobody asks it again.
    let asked = fake.requests().len();
    let again = env.call(&owner, "sync_bank_connection", json!({"connection_id": id})).await;
    assert_eq!(test_support::code(&again), "rate_limited");
    assert_eq!(fake.requests().len(), asked);
    env.clock.advance(jiff::SignedDuration::from_secs(120));
    fake.expire_sessions();
    let ended = env.call(&owner, "sync_bank_connection", json!({"connection_id": id})).await;
    assert_eq!(test_support::code(&ended), "conflict", "{ended:?}");
    let listed = env.call(&owner, "list_bank_connections", json!({})).await.unwrap();
    assert_eq!(listed["items"][0]["status"], "needs_relink", "{listed}");

    // Renewed at the bank, the same connection syncs again: its country is known.
    let page = ana.get("/settings/banks").await;
    assert_eq!(Visitor::hidden(&page, "country"), "FI", "{}", page.body);
    assert_eq!(listed["items"][0]["country"], "FI", "{listed}");
    let renew = ana
        .post(
            "/settings/banks/consent",
            &[
                ("csrf", &csrf),
                ("country", "FI"),
                ("bank", "Nordea"),
                ("connection_id", &id.to_string()),
            ],
        )
        .await;
    assert_eq!(renew.status, reqwest::StatusCode::SEE_OTHER, "{}", renew.body);
    let state = renew.location.unwrap().rsplit('=').next().unwrap().to_owned();
    let code = fake.approve(&state).unwrap();
    let returned = ana.get(&format!("/settings/banks/return?state={state}&code={code}")).await;
    assert_eq!(returned.status, reqwest::StatusCode::SEE_OTHER, "{}", returned.body);
    let listed = env.call(&owner, "list_bank_connections", json!({})).await.unwrap();
    let items = listed["items"].as_array().unwrap();
    assert_eq!(
        (items.len(), items[0]["id"].as_i64(), items[0]["status"].as_str()),
        (1, Some(id), Some("ok")),
        "{listed}"
    );
    let search = env.call(&owner, "search_transactions", json!({})).await.unwrap();
    assert_eq!(search["total"], 3, "nothing twice: {search}");
}

/// A delivery worker over the test's app, as `serve` runs one.
fn messages(env: &TestEnv) -> channels::Channels {
    channels::Channels::new(env.app.clone(), channels::ChannelsConfig::default()).unwrap()
}

/// Adds an ntfy topic on `server` as `caller`'s destination.
async fn ntfy_destination(env: &TestEnv, caller: &ops::Caller, server: &test_support::TestServer) {
    let address = format!("{}/{}", server.url(""), caller.member_id);
    env.call(caller, "add_destination", json!({"kind": "ntfy", "address": address})).await.unwrap();
}

/// The kinds and times of the messages `caller` has planned.
async fn planned(env: &TestEnv, caller: &ops::Caller) -> Vec<(String, String)> {
    let settings = env.call(caller, "get_settings", json!({})).await.unwrap();
    settings["reminders"]["upcoming"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["kind"].as_str().unwrap().to_owned(), p["due_at"].as_str().unwrap().to_owned()))
        .collect()
}

/// `owner` sets the household's Enable Banking application and connects Nordea, consenting at
/// `fake` as the person would: what `complete_bank_consent` answered.
async fn connect_nordea(
    env: &TestEnv,
    owner: &ops::Caller,
    fake: &test_support::enable_banking::EnableBankingFake,
) -> Value {
    use test_support::enable_banking::{APPLICATION_ID, APPLICATION_KEY};
    let application = json!({"application_id": APPLICATION_ID, "private_key": APPLICATION_KEY});
    env.call(owner, "set_enable_banking", application).await.unwrap();
    let started = env
        .call(owner, "start_bank_consent", json!({"country": "FI", "bank": "Nordea"}))
        .await
        .unwrap();
    let state = started["url"].as_str().unwrap().rsplit('=').next().unwrap().to_owned();
    let code_given = fake.approve(&state).unwrap();
    env.call(owner, "complete_bank_consent", json!({"state": state, "code": code_given}))
        .await
        .unwrap()
}

/// An Enable Banking of the test's own, and a test app whose feeds ask it.
async fn enable_banking(env: &TestEnv) -> test_support::enable_banking::EnableBankingFake {
    let fake = test_support::enable_banking::EnableBankingFake::start().await;
    let feeds = Feeds::new(std::slice::from_ref(&fake.authority))
        .unwrap()
        .with_enable_banking_root(fake.root().parse().unwrap());
    env.app.set_bank_feeds(std::sync::Arc::new(feeds));
    fake
}

#[tokio::test]
async fn a_new_consent_brings_two_years_where_the_bank_gives_them_and_less_where_it_refuses() {
    let env = TestEnv::new();
    let fake = enable_banking(&env).await;
    let booked = |reference: &str, on: &str| {
        json!({"entry_reference": reference, "transaction_amount": {"amount": "9.00", "currency": "EUR"},
               "credit_debit_indicator": "DBIT", "status": "BOOK", "booking_date": on,
               "remittance_information": [format!("SHOP {reference}")]})
    };
    fake.add_account(
        "uid-1",
        "HASH-A",
        "Cuenta",
        json!([
            booked("OLD", "2025-01-10"),
            booked("MID", "2026-07-01"),
            booked("NEW", "2026-11-27")
        ]),
    );
    let ana = env.household("Home", "ana@a.test").await;
    let cai = env.household("Other", "cai@c.test").await;
    let _server = env.serve().await;
    let reads = || -> Vec<String> {
        fake.requests()
            .into_iter()
            // (First pages: the rest of a read follow its continuation_key.)
            .filter(|r| {
                r.path.ends_with("/transactions") && !r.query.contains_key("continuation_key")
            })
            .map(|r| r.query["date_from"].clone())
            .collect()
    };
    let found = |caller: &ops::Caller| {
        let caller = caller.clone();
        let env = &env;
        async move {
            let page = env.call(&caller, "search_transactions", json!({})).await.unwrap();
            let mut on: Vec<String> = page["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["on"].as_str().unwrap().to_owned())
                .collect();
            on.sort();
            on
        }
    };

    // Right after the consent, two years back (the tests' day is 29 November 2026).
    connect_nordea(&env, &ana, &fake).await;
    assert_eq!(reads(), ["2024-11-29"]);
    assert_eq!(found(&ana).await, ["2025-01-10", "2026-07-01", "2026-11-27"]);

    // A bank that gives 90 days says where it starts; Exhale asks again from there.
    fake.limit_history(90);
    connect_nordea(&env, &cai, &fake).await;
    assert_eq!(reads()[1..], ["2024-11-29", "2026-09-01"]);
    assert_eq!(found(&cai).await, ["2026-11-27"]);
}

#[tokio::test]
async fn a_consent_ending_is_a_reminder_a_week_before_and_removing_the_connection_closes_it() {
    let env = TestEnv::new();
    let fake = enable_banking(&env).await;
    fake.add_account("uid-1", "HASH-A", "Cuenta", json!([]));
    let owner = env.household("Home", "ana@a.test").await;
    let _server = env.serve().await;
    let (_, agent) = env.token(&owner, "read").await;

    // Without the household's application, the list says what to do first.
    let none = env.call(&agent, "list_banks", json!({"country": "SE"})).await;
    assert_eq!(code(&none), "conflict");
    assert!(format!("{none:?}").contains("an owner sets its id and private key"), "{none:?}");
    let linked = connect_nordea(&env, &owner, &fake).await;
    // An agent can tell which banks of a country Exhale connects.
    let swedish = env.call(&agent, "list_banks", json!({"country": "se"})).await.unwrap();
    assert_eq!(
        swedish,
        json!({"items": [{"name": "Swedbank", "country": "SE", "consent_days": 180}]})
    );
    let wrong = env.call(&agent, "list_banks", json!({"country": "Sweden"})).await;
    assert_eq!(code(&wrong), "invalid_input");

    let id = linked["connection"]["id"].as_i64().unwrap();
    assert_eq!(linked["connection"]["consent_expires_at"], "2027-02-27T10:00:00Z");

    // The consent ends on 27 February: the reminder goes a week before, at 09:00 in Madrid.
    let (ntfy, received) = test_support::channels::ntfy(None).await;
    ntfy_destination(&env, &owner, &ntfy).await;
    let worker = messages(&env);
    env.clock.set("2027-02-19T12:00:00Z".parse().unwrap());
    assert_eq!(worker.deliver_due().await.unwrap(), 0);
    let kinds = planned(&env, &owner).await;
    assert!(
        kinds.contains(&("bank_consent_ending".into(), "2027-02-20T08:00:00Z".into())),
        "{kinds:?}"
    );
    env.clock.set("2027-02-20T08:00:00Z".parse().unwrap());
    assert_eq!(worker.deliver_due().await.unwrap(), 1);
    let sent = received.received().await;
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].body["title"], "The bank's consent for Nordea ends on Feb 27, 2027");
    assert!(sent[0].body["message"].as_str().unwrap().contains("Settings → Banks"), "{sent:?}");
    env.clock.set("2027-02-21T08:00:00Z".parse().unwrap());
    worker.deliver_due().await.unwrap();
    assert_eq!(received.received().await.len(), 1, "once");

    // Removed, its session at Enable Banking is closed too, so the bank's consent ends.
    env.call(&owner, "remove_bank_connection", json!({"connection_id": id})).await.unwrap();
    let closed: Vec<_> =
        fake.requests().into_iter().filter(|r| r.method == "DELETE").map(|r| r.path).collect();
    assert_eq!(closed, ["/sessions/session-1"]);
}

#[tokio::test]
async fn a_member_who_asks_is_told_of_a_new_recurring_charge_once_unless_it_was_dismissed() {
    let b = bank().await;
    b.bridge.edit_accounts(|accounts| {
        let mut rows = netflix_three_months();
        rows.extend(["09", "10", "11"].map(|month| {
            let day = format!("2026-{month}-12");
            json!({"id": format!("S-{month}"), "posted": at(&day), "amount": "-9.99", "description": format!("SPOTIFY P12{month}")})
        }));
        accounts[0] = checking(Value::Array(rows));
    });
    let (ntfy, received) = test_support::channels::ntfy(None).await;
    ntfy_destination(&b.env, &b.owner, &ntfy).await;
    b.link().await;
    let worker = messages(&b.env);
    worker.deliver_due().await.unwrap();
    let not_asked = planned(&b.env, &b.owner).await;
    assert!(not_asked.iter().all(|(kind, _)| kind != "new_recurring"), "{not_asked:?}");

    // Asked for (an agent may set it), each proposal the sync made today is planned for 09:00
    // in Madrid tomorrow: it was noticed after today's.
    let (_, agent) = b.env.token(&b.owner, "write").await;
    let settings = b
        .env
        .call(&agent, "update_reminder_settings", json!({"new_recurring": true}))
        .await
        .unwrap();
    assert_eq!(settings["new_recurring"], true);
    let asked = planned(&b.env, &b.owner).await;
    let recurring: Vec<_> = asked.iter().filter(|(kind, _)| kind == "new_recurring").collect();
    assert_eq!(recurring.len(), 2, "{asked:?}");
    assert!(recurring.iter().all(|(_, at)| at == "2026-11-30T08:00:00Z"), "{asked:?}");

    // Dismissed before its time, one is not sent.
    let proposals = b.proposals().await;
    let (spotify, _) = proposals
        .iter()
        .find(|(_, message)| message.starts_with("Spotify"))
        .unwrap_or_else(|| panic!("{proposals:?}"));
    b.env.call(&agent, "dismiss_recurring_proposal", json!({"id": spotify})).await.unwrap();
    b.env.clock.set("2026-11-30T08:00:00Z".parse().unwrap());
    worker.deliver_due().await.unwrap();
    // (Besides the messages announcing the agent's changes, with Undo.)
    let proposals = |sent: Vec<test_support::channels::Received>| -> Vec<(String, String)> {
        sent.iter()
            .filter(|m| m.body["title"].as_str().unwrap().contains("new recurring charge"))
            .map(|m| (m.body["title"].to_string(), m.body["message"].to_string()))
            .collect()
    };
    let told = proposals(received.received().await);
    assert_eq!(
        told,
        [(
            "\"Netflix looks like a new recurring charge on Checking\"".to_owned(),
            "\"$12.99, monthly. Add it as a subscription, or dismiss it, in Exhale.\"".to_owned()
        )]
    );
    b.env.clock.advance(jiff::SignedDuration::from_hours(24));
    worker.deliver_due().await.unwrap();
    assert_eq!(proposals(received.received().await), told, "once");
}

/// The activity's entries for `caller`: (id, op, summary, batch), newest first.
async fn activity(env: &TestEnv, caller: &ops::Caller) -> Vec<(i64, String, String, String)> {
    let page = env.call(caller, "list_activity", json!({})).await.unwrap();
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let text = |field: &str| e[field].as_str().unwrap().to_owned();
            (e["id"].as_i64().unwrap(), text("op"), text("summary"), text("batch_id"))
        })
        .collect()
}

#[tokio::test]
async fn linking_moving_dismissing_and_removing_are_in_the_activity_and_undone_as_is_safe() {
    let b = bank().await;
    b.bridge.edit_accounts(|accounts| accounts[0] = checking(Value::Array(netflix_three_months())));
    let linked = b.link().await;
    let id = linked["connection"]["id"].as_i64().unwrap();
    let first_account = linked["connection"]["accounts"][0]["account"]["id"].clone();
    let entries = activity(&b.env, &b.owner).await;
    let link_entry = entries
        .iter()
        .find(|(_, op, summary, _)| {
            op == "link_simplefin" && summary == "Linked the bank connection CON-1 Bank"
        })
        .unwrap_or_else(|| panic!("{entries:?}"))
        .clone();

    // Where an account goes, undone: it goes where it went before.
    let bank_account = linked["connection"]["accounts"][0]["id"].as_i64().unwrap();
    let moved = b
        .env
        .call(
            &b.owner,
            "set_bank_account_target",
            json!({"bank_account_id": bank_account, "create_account": true}),
        )
        .await
        .unwrap();
    assert_ne!(moved["accounts"][0]["account"]["id"], first_account);
    let entries = activity(&b.env, &b.owner).await;
    assert!(
        entries.iter().any(|(_, _, summary, _)| summary
            == "Transactions of the bank account Checking now go into Checking"),
        "{entries:?}"
    );
    let (_, agent) = b.env.token(&b.owner, "write").await;
    let by_agent = b.env.call(&agent, "undo", json!({"batch_id": moved["batch_id"]})).await;
    assert_eq!(code(&by_agent), "forbidden", "where a feed goes is a person's: {by_agent:?}");
    b.env.call(&b.owner, "undo", json!({"batch_id": moved["batch_id"]})).await.unwrap();
    let listed = b.env.call(&b.owner, "list_bank_connections", json!({})).await.unwrap();
    assert_eq!(listed["items"][0]["accounts"][0]["account"]["id"], first_account, "{listed}");

    // Another member's undo never sends the feed into an account that is now Ana's alone,
    // nor removes a connection Ana linked.
    let bo = b.env.member(&b.owner, "Bo", "bo@a.test").await;
    b.env
        .call(&b.owner, "update_account", json!({"id": first_account, "visibility": "private"}))
        .await
        .unwrap();
    let moved_by_bo = b
        .env
        .call(
            &bo,
            "set_bank_account_target",
            json!({"bank_account_id": bank_account, "create_account": true}),
        )
        .await
        .unwrap();
    let back = b.env.call(&bo, "undo", json!({"batch_id": moved_by_bo["batch_id"]})).await;
    assert_eq!(code(&back), "conflict", "{back:?}");
    assert!(format!("{back:?}").contains("not one you can choose"), "{back:?}");
    let unlinked = b.env.call(&bo, "undo", json!({"audit_ids": [link_entry.0]})).await;
    assert_eq!(code(&unlinked), "forbidden", "{unlinked:?}");

    // An agent's dismissal is in the activity, and its undo brings the suggestion back.
    let found = b.proposals().await;
    let proposal = found[0].0;
    let dismissed =
        b.env.call(&agent, "dismiss_recurring_proposal", json!({"id": proposal})).await.unwrap();
    let entries = activity(&b.env, &b.owner).await;
    assert!(
        entries.iter().any(|(_, op, summary, _)| op == "dismiss_recurring_proposal"
            && summary == "Stopped suggesting Netflix as a recurring charge"),
        "{entries:?}"
    );
    b.env.call(&b.owner, "undo", json!({"batch_id": dismissed["batch_id"]})).await.unwrap();
    assert_eq!(b.proposals().await, found);

    // An agent cannot undo a link: it would delete a credential.
    let refused = b.env.call(&agent, "undo", json!({"audit_ids": [link_entry.0]})).await;
    assert_eq!(code(&refused), "forbidden", "{refused:?}");

    // A removal is in the activity, and cannot be undone: the access is forgotten.
    let removed =
        b.env.call(&b.owner, "remove_bank_connection", json!({"connection_id": id})).await.unwrap();
    let back = b.env.call(&b.owner, "undo", json!({"batch_id": removed["batch_id"]})).await;
    assert_eq!(code(&back), "conflict");
    assert!(format!("{back:?}").contains("Link the bank again"), "{back:?}");

    // Undoing a link removes the connection and what its first sync brought.
    let relinked = b.link().await;
    let second = relinked["connection"]["id"].as_i64().unwrap();
    assert_ne!(second, id);
    b.env.call(&b.owner, "undo", json!({"batch_id": relinked["batch_id"]})).await.unwrap();
    let listed = b.env.call(&b.owner, "list_bank_connections", json!({})).await.unwrap();
    assert_eq!(listed["items"], json!([]), "{listed}");
    let gone = b.sync(second).await;
    assert_eq!(code(&gone), "not_found");
}
