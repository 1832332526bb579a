//! `exhale migrate --to`: a household's SQLite file copied into an empty PostgreSQL database
//! through the real binary, every row with its id and its history, checked, and either whole
//! or not at all. These run on PostgreSQL in both passes (`DataDir::empty_postgres`).

use std::process::Output;

use serde_json::{Value, json};
use test_support::DataDir;

use crate::cli::{create_owner, exhale, spawn_serve, stdout};

/// `op` as `member`, its output as JSON.
fn op(dir: &DataDir, member: &str, name: &str, input: Value) -> Value {
    let output =
        stdout(&exhale(dir, &["op", name, "--as", member, "--json", &input.to_string()], ""));
    serde_json::from_str(&output).unwrap()
}

/// The target's URL, as `exhale serve` there would be given it.
fn url_of(target: &DataDir) -> String {
    target
        .env()
        .into_iter()
        .find_map(|(name, value)| (name == "EXHALE_DATABASE_URL").then_some(value))
        .unwrap()
}

fn migrate(source: &DataDir, target: &DataDir) -> Output {
    exhale(source, &["migrate", "--to", &url_of(target)], "")
}

/// What a run that must have failed said.
fn refusal(output: &Output) -> String {
    assert!(!output.status.success(), "succeeded: {}", String::from_utf8_lossy(&output.stdout));
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `member`'s whole export, without when it was read.
fn export(dir: &DataDir, member: &str) -> Value {
    let mut export = op(dir, member, "export_data", json!({}));
    export.as_object_mut().unwrap().remove("exported_at");
    export
}

fn ids(list: &Value) -> Vec<i64> {
    let mut ids: Vec<i64> =
        list["items"].as_array().unwrap().iter().map(|item| item["id"].as_i64().unwrap()).collect();
    ids.sort_unstable();
    ids
}

#[test]
fn two_households_move_to_postgresql_with_their_history_and_undo_still_works() {
    let source = DataDir::sqlite();
    stdout(&exhale(&source, &["demo", "--email", "demo@a.test"], ""));
    create_owner(&source, "a long enough password");
    let ana = "ana@a.test";
    // A transfer: two transactions that point at each other.
    let current =
        op(&source, ana, "create_account", json!({"name": "Current", "kind": "checking"}));
    let savings = op(&source, ana, "create_account", json!({"name": "Savings", "kind": "savings"}));
    let out = op(
        &source,
        ana,
        "create_transaction",
        json!({"account_id": current["id"], "on": "2026-11-02", "amount": "-200.00", "payee": "To savings"}),
    );
    let into = op(
        &source,
        ana,
        "create_transaction",
        json!({"account_id": savings["id"], "on": "2026-11-02", "amount": "200.00", "payee": "From current"}),
    );
    op(&source, ana, "pair_transfer", json!({"id": out["id"], "other_id": into["id"]}));
    // A subscription made and deleted: the newest id, gone but for the history.
    let gym = op(
        &source,
        ana,
        "create_subscription",
        json!({"name": "Gym", "amount": "30.00", "cycle": "monthly", "next_charge_on": "2026-12-20"}),
    );
    op(&source, ana, "delete_subscription", json!({"id": gym["id"]}));
    let deleted = op(&source, ana, "list_activity", json!({"limit": 1}))["items"][0].clone();
    assert_eq!(deleted["entity_id"], gym["id"]);

    let target = DataDir::empty_postgres();
    let said = stdout(&migrate(&source, &target));
    assert!(said.contains("the exports of 2 members read the same from both"), "{said}");
    assert!(!said.contains("password="), "the URL's password was printed: {said}");

    // Each household reads the same from PostgreSQL, as the test reads it itself.
    for member in ["demo@a.test", ana] {
        assert_eq!(export(&target, member), export(&source, member), "{member}");
    }
    let found = op(&target, ana, "search_transactions", json!({"account_id": current["id"]}));
    let transfer =
        found["items"].as_array().unwrap().iter().find(|t| t["id"] == out["id"]).unwrap();
    assert_eq!(transfer["transfer_id"], into["id"]);

    // The history came too: the deletion is undone there, and the subscription is back with
    // its id; a new one is given an id no row ever had.
    op(&target, ana, "undo", json!({"audit_ids": [deleted["id"]]}));
    let back = op(&target, ana, "get_subscription", json!({"id": gym["id"]}));
    assert_eq!(back["name"], "Gym");
    let newer = op(
        &target,
        ana,
        "create_subscription",
        json!({"name": "Pool", "amount": "12.00", "cycle": "monthly", "next_charge_on": "2026-12-21"}),
    );
    assert!(newer["id"].as_i64() > gym["id"].as_i64(), "{newer} after {gym}");

    // The target is not empty now: a second copy is refused and changes nothing.
    let before = ids(&op(&target, ana, "list_subscriptions", json!({})));
    let again = refusal(&migrate(&source, &target));
    assert!(again.contains("is not empty"), "{again}");
    assert_eq!(ids(&op(&target, ana, "list_subscriptions", json!({}))), before);
}

#[test]
fn a_copy_that_fails_leaves_the_target_empty_and_a_running_server_stops_it_first() {
    let source = DataDir::sqlite();
    create_owner(&source, "a long enough password");
    let ana = "ana@a.test";
    let account =
        op(&source, ana, "create_account", json!({"name": "Current", "kind": "checking"}));
    let netflix = op(
        &source,
        ana,
        "create_subscription",
        json!({"name": "Netflix", "amount": "13.99", "cycle": "monthly", "next_charge_on": "2026-12-20"}),
    );
    let target = DataDir::empty_postgres();

    // While `exhale serve` has the file open, nothing is copied: what it wrote meanwhile
    // would be lost.
    let mut server = spawn_serve(&source);
    crate::cli::listening_url(&mut server);
    let busy = refusal(&migrate(&source, &target));
    server.kill().unwrap();
    server.wait().unwrap();
    assert!(busy.contains("stop it, then migrate again"), "{busy}");

    // A value PostgreSQL cannot hold, in a table copied after others (written past Exhale,
    // as an older version or another tool might have): the copy stops there and is rolled
    // back whole, so the next copy finds the target empty.
    source.write_past_exhale(&format!(
        "UPDATE subscriptions SET notes = 'one' || char(0) || 'two' WHERE id = {}",
        netflix["id"]
    ));
    let failed = refusal(&migrate(&source, &target));
    assert!(failed.contains("in subscriptions"), "{failed}");
    assert!(failed.contains("correct it in the SQLite file"), "{failed}");

    source.write_past_exhale("UPDATE subscriptions SET notes = NULL");
    stdout(&migrate(&source, &target));
    let accounts = op(&target, ana, "list_accounts", json!({}));
    let there = accounts["items"].as_array().unwrap().iter().find(|a| a["id"] == account["id"]);
    assert_eq!(there.unwrap()["name"], "Current");
}

#[test]
fn migrate_says_what_is_missing_or_wrong_before_it_copies() {
    let empty = DataDir::sqlite();
    let nothing =
        refusal(&exhale(&empty, &["migrate", "--to", "postgres://ana@127.0.0.1:1/exhale"], ""));
    assert!(nothing.contains("there is no SQLite database"), "{nothing}");
    assert!(nothing.contains("--data-dir"), "{nothing}");

    let source = DataDir::sqlite();
    create_owner(&source, "a long enough password");
    let nowhere = refusal(&exhale(&source, &["migrate"], ""));
    assert!(nowhere.contains("--to postgres://"), "{nowhere}");
    let malformed =
        refusal(&exhale(&source, &["migrate", "--to", "postgres://ana:secret@host:port/x"], ""));
    assert!(malformed.contains("not a PostgreSQL URL"), "{malformed}");
    assert!(!malformed.contains("secret"), "the password was shown: {malformed}");
    let unreachable = refusal(&exhale(
        &source,
        &["migrate", "--to", "postgres://ana:secret@127.0.0.1:1/exhale"],
        "",
    ));
    assert!(!unreachable.contains("secret"), "the password was shown: {unreachable}");
    assert!(unreachable.contains("127.0.0.1"), "{unreachable}");
}
