//! References carry their household, on both stores: the database itself refuses a row that
//! points at another household's row, whatever writes it (here SQL past Exhale, as a bug in
//! Exhale would), on SQLite by triggers and on PostgreSQL by references of (household_id,
//! column) and triggers (migration `0024_household_references`).

use serde_json::{Value, json};
use test_support::DataDir;

use crate::{
    cli::{exhale, stdout},
    row_security::two_households,
};

/// The id `op` gives back, called as `member`.
fn created(dir: &DataDir, member: &str, op: &str, input: Value) -> i64 {
    let output =
        stdout(&exhale(dir, &["op", op, "--as", member, "--json", &input.to_string()], ""));
    serde_json::from_str::<Value>(&output).unwrap()["id"].as_i64().unwrap()
}

/// A household's account, label, category and a transaction in the account.
struct Rows {
    account: i64,
    label: i64,
    category: i64,
    transaction: i64,
    subscription: i64,
}

fn rows_of(dir: &DataDir, member: &str) -> Rows {
    let account =
        created(dir, member, "create_account", json!({"name": "Current", "kind": "checking"}));
    let transaction = created(
        dir,
        member,
        "create_transaction",
        json!({"account_id": account, "on": "2026-11-20", "amount": "-4.50", "payee": "Cafe"}),
    );
    let listed = stdout(&exhale(dir, &["op", "list_subscriptions", "--as", member], ""));
    let subscription =
        serde_json::from_str::<Value>(&listed).unwrap()["items"][0]["id"].as_i64().unwrap();
    Rows {
        account,
        label: created(dir, member, "create_label", json!({"name": "holiday"})),
        category: created(dir, member, "create_category", json!({"name": "Treats"})),
        transaction,
        subscription,
    }
}

#[test]
fn the_database_refuses_a_row_that_points_at_another_households_row() {
    let dir = DataDir::new();
    two_households(&dir);
    let ana = rows_of(&dir, "ana@a.test");
    let cai = rows_of(&dir, "cai@b.test");

    // What one household may write among its own rows, the database takes.
    let own = format!(
        "INSERT INTO transaction_labels (transaction_id, label_id) VALUES ({}, {})",
        ana.transaction, ana.label
    );
    assert_eq!(dir.try_past_exhale(&own), Ok(()));

    // Pointing at the other household's rows, it refuses, whichever the column.
    for planted in [
        format!("UPDATE transactions SET account_id = {} WHERE id = {}", cai.account, ana.transaction),
        format!("UPDATE transactions SET category_id = {} WHERE id = {}", cai.category, ana.transaction),
        format!("UPDATE transactions SET transfer_id = {} WHERE id = {}", cai.transaction, ana.transaction),
        format!("UPDATE subscriptions SET category_id = {} WHERE id = {}", ana.category, cai.subscription),
        format!(
            "INSERT INTO transaction_labels (transaction_id, label_id) VALUES ({}, {})",
            ana.transaction, cai.label
        ),
        format!(
            "INSERT INTO transaction_splits (transaction_id, amount_minor, category_id) VALUES ({}, -450, {})",
            cai.transaction, ana.category
        ),
        format!(
            "INSERT INTO transactions (household_id, account_id, on_date, amount_minor, currency, payee, description, source, created_at, updated_at)
             SELECT household_id, {}, on_date, amount_minor, currency, payee, description, source, created_at, updated_at FROM transactions WHERE id = {}",
            ana.account, cai.transaction
        ),
    ] {
        let refused = dir.try_past_exhale(&planted).expect_err(&planted);
        assert!(
            refused.contains("FOREIGN KEY")
                || refused.contains("foreign key")
                || refused.contains("refers to another household")
                || refused.contains("refers to two households"),
            "{planted}: {refused}"
        );
    }
}
