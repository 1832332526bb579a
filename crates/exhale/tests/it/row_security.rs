//! Households apart a second time, on PostgreSQL: row-level security holds back every other
//! household's rows from a transaction that names its household, and every household's from
//! one that names none (a bug); and Exhale refuses the roles that would pass it by. These run
//! on PostgreSQL in both passes (`DataDir::postgres`).

use serde_json::json;
use test_support::DataDir;

use crate::cli::{check_at, exhale, owner_with_token, stdout};

/// Two households through the real binary, each with a subscription: Ana's (ana@a.test) and
/// Cai's (cai@b.test).
pub(crate) fn two_households(dir: &DataDir) {
    owner_with_token(dir, "write");
    stdout(&exhale(
        dir,
        &["member", "create-owner", "--email", "cai@b.test", "--name", "Cai", "--password-stdin"],
        "another long password\n",
    ));
    for (member, name) in [("ana@a.test", "Netflix"), ("cai@b.test", "Gym")] {
        let input = json!({"name": name, "amount": "9.99", "cycle": "monthly",
            "next_charge_on": "2026-12-20"});
        stdout(&exhale(
            dir,
            &["op", "create_subscription", "--as", member, "--json", &input.to_string()],
            "",
        ));
    }
}

#[test]
fn a_query_that_names_no_household_sees_no_rows_and_one_household_never_sees_another() {
    let dir = DataDir::postgres();
    two_households(&dir);
    let every = "SELECT set_config('exhale.every_household', 'on', true)";
    let first = "SELECT set_config('exhale.household_id', '1', true)";
    assert_eq!(dir.count_as_exhale(every, "SELECT count(*) FROM subscriptions"), 2);
    assert_eq!(dir.count_as_exhale(every, "SELECT count(*) FROM price_points"), 2);
    // A bug: a query in a transaction that says nothing of its household.
    for table in ["subscriptions", "price_points", "members", "households", "audit"] {
        assert_eq!(dir.count_as_exhale("", &format!("SELECT count(*) FROM {table}")), 0, "{table}");
    }
    // A bug: a query that forgets its household's condition, or asks for another's.
    assert_eq!(dir.count_as_exhale(first, "SELECT count(*) FROM subscriptions"), 1);
    assert_eq!(
        dir.count_as_exhale(first, "SELECT count(*) FROM subscriptions WHERE household_id = 2"),
        0
    );
    assert_eq!(dir.count_as_exhale(first, "SELECT count(*) FROM price_points"), 1);
    assert_eq!(dir.count_as_exhale(first, "SELECT count(*) FROM members"), 1);
    // Nor can it write into another household, or move a row there.
    let planted = dir.refusal_as_exhale(
        first,
        "INSERT INTO categories (household_id, name, emoji, colour, created_at)
         VALUES (2, 'Planted', '', '#000000', '2026-12-05T00:00:00Z')",
    );
    assert!(planted.contains("row-level security"), "{planted}");
    let moved = dir.refusal_as_exhale(first, "UPDATE subscriptions SET household_id = 2");
    assert!(moved.contains("row-level security"), "{moved}");
}

#[test]
fn every_table_is_fenced_by_household_but_the_few_that_belong_to_no_household() {
    let dir = DataDir::postgres();
    owner_with_token(&dir, "read");
    let unfenced = dir.texts_as_exhale(
        "",
        "SELECT c.relname::text FROM pg_class c
         WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
           AND NOT c.relispartition AND NOT (c.relrowsecurity AND c.relforcerowsecurity)",
    );
    // A new table with a household's rows gets its policy in its own migration (as
    // 0021_chat_imports does); one that belongs to nobody is named here, with why.
    let of_nobody = [
        // Per-address and per-token limits, kept by hashes and addresses, not households.
        "limit_counts",
        "limit_paces",
        // Clients that registered themselves, before anyone granted them anything.
        "oauth_clients",
        // Which migrations ran.
        "schema_migrations",
        // The one-time link `exhale serve` prints to create the first household.
        "setup_links",
        // The folded text of transactions, read only joined to `transactions` (fenced); its
        // parts by household (0026) are not listed apart.
        "transaction_search",
    ];
    assert_eq!(unfenced, of_nobody);
}

#[test]
fn every_reference_between_two_households_tables_carries_the_household() {
    let dir = DataDir::postgres();
    let has_household = |table: &str| {
        format!(
            "EXISTS (SELECT 1 FROM pg_attribute h WHERE h.attrelid = {table} AND h.attname = 'household_id' AND NOT h.attisdropped)"
        )
    };
    let single = dir.texts_as_exhale(
        "",
        &format!(
            "SELECT c.conrelid::regclass::text || '.' || a.attname FROM pg_constraint c
             JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
             WHERE c.contype = 'f' AND cardinality(c.conkey) = 1
               AND c.connamespace = current_schema()::regnamespace
               AND c.confrelid::regclass::text <> 'households' AND {} AND {}",
            has_household("c.conrelid"),
            has_household("c.confrelid")
        ),
    );
    // A new reference between two tables with a household is written as (household_id,
    // column), as migration 0024 made the others; these two are checked otherwise.
    let checked_otherwise = [
        // A transfer's other side, checked by the trigger same_household (0024).
        "transactions.transfer_id",
    ];
    assert_eq!(single, checked_otherwise);
}

#[test]
fn exhale_refuses_a_superuser_and_a_role_that_may_not_create_its_tables() {
    let dir = DataDir::postgres();
    let (as_superuser, admin) = dir.superuser_url();
    let (code, said) = check_at(&dir, &as_superuser);
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("is a superuser"), "{said}");
    assert!(said.contains("CREATE DATABASE exhale OWNER exhale"), "{said}");

    // A role of its own, in a database someone else owns: it may not create tables there.
    let visitor = format!("exhale_visitor_{}", std::process::id());
    let database = format!("{visitor}_db");
    dir.as_superuser(&[
        &format!("CREATE ROLE {visitor} LOGIN"),
        &format!("CREATE DATABASE {database}"),
    ]);
    let (code, said) = check_at(&dir, &format!("{admin} dbname={database} user={visitor}"));
    dir.as_superuser(&[
        &format!("DROP DATABASE {database} WITH (FORCE)"),
        &format!("DROP ROLE {visitor}"),
    ]);
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("may not create tables in schema public"), "{said}");
    assert!(said.contains(&format!("OWNER TO {visitor}")), "{said}");
}

/// A large import leaves what a search reads vacuumed and its statistics renewed as it
/// commits, so the next search does not visit every new row's page (see
/// `Db::tidy_after_commit`); a small one leaves that to autovacuum.
#[test]
fn a_large_import_is_vacuumed_as_it_commits() {
    let dir = DataDir::postgres();
    two_households(&dir);
    let account = json!({"name": "Current", "kind": "checking"});
    stdout(&exhale(
        &dir,
        &["op", "create_account", "--as", "ana@a.test", "--json", &account.to_string()],
        "",
    ));
    // The transactions, and of the search text's parts (0026) the household's alone.
    let vacuumed = "SELECT count(*) FROM pg_stat_user_tables
        WHERE (relname = 'transactions'
               OR relid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'transaction_search'::regclass))
          AND last_vacuum IS NOT NULL";
    let statement = |rows: usize, payee: &str| {
        let mut csv = String::from("Date,Description,Amount\n");
        for i in 0..rows {
            csv.push_str(&format!(
                "2026-{:02}-{:02},{payee} {i},-{}.50\n",
                1 + i % 12,
                1 + i % 28,
                1 + i % 90
            ));
        }
        json!({"account_id": "Current", "content": csv}).to_string()
    };
    let import = |input: String| {
        stdout(&exhale(
            &dir,
            &["op", "import_transactions", "--as", "ana@a.test", "--json", &input],
            "",
        ))
    };
    import(statement(20, "CORNER CAFE"));
    assert_eq!(dir.count_as_exhale("", vacuumed), 0, "twenty rows are autovacuum's");
    import(statement(1_200, "FARMACIA LOPEZ"));
    assert_eq!(dir.count_as_exhale("", vacuumed), 2);
    let found = stdout(&exhale(
        &dir,
        &["op", "search_transactions", "--as", "ana@a.test", "--json", r#"{"text": "lopez 1199"}"#],
        "",
    ));
    assert!(found.contains("\"total\": 1") || found.contains("\"total\":1"), "{found}");
}

/// The search text (0026, split by household) follows its transactions: written with them in
/// their household's part, rewritten when their text changes, deleted with them.
#[test]
fn the_search_text_follows_its_transactions_in_their_households_part() {
    let dir = DataDir::postgres();
    two_households(&dir);
    let op = |member: &str, name: &str, input: serde_json::Value| -> serde_json::Value {
        let out =
            stdout(&exhale(&dir, &["op", name, "--as", member, "--json", &input.to_string()], ""));
        serde_json::from_str(&out).unwrap_or_else(|err| panic!("{name}: {err}: {out}"))
    };
    for member in ["ana@a.test", "cai@b.test"] {
        op(member, "create_account", json!({"name": "Current", "kind": "checking"}));
    }
    let csv = "Date,Description,Amount\n2026-11-01,FARMACIA LOPEZ,-4.50\n2026-11-02,BAR LA ESQUINA,-3.00\n2026-11-03,IKEA MURCIA,-80.00\n";
    op("ana@a.test", "import_transactions", json!({"account_id": "Current", "content": csv}));
    let imported =
        op("cai@b.test", "import_transactions", json!({"account_id": "Current", "content": csv}));
    let every = "SELECT set_config('exhale.every_household', 'on', true)";
    let texts = || {
        dir.texts_as_exhale(
            every,
            // The payee, as the import took it from the description.
            "SELECT s.household_id || ' ' || s.payee FROM transaction_search s
             JOIN transactions t ON t.id = s.id AND t.household_id = s.household_id",
        )
    };
    let parts = "SELECT count(DISTINCT tableoid) FROM transaction_search";
    assert_eq!(dir.count_as_exhale(every, "SELECT count(*) FROM transaction_search"), 6);
    assert_eq!(dir.count_as_exhale(every, parts), 2, "each household's text in its own part");

    let search = |text: &str| {
        op("ana@a.test", "search_transactions", json!({"text": text}))["total"].as_u64().unwrap()
    };
    let found = op("ana@a.test", "search_transactions", json!({"text": "farmacia"}));
    let id = found["items"][0]["id"].clone();
    assert_eq!(search("HERBORISTERía"), 0);
    op("ana@a.test", "update_transaction", json!({"id": id, "payee": "Herboristería Sol"}));
    // The statement's description keeps the old text.
    assert_eq!((search("farmacia"), search("HERBORISTERía")), (1, 1));
    let bar = op("ana@a.test", "search_transactions", json!({"text": "esquina"}))["items"][0]["id"]
        .clone();
    op("ana@a.test", "delete_transaction", json!({"id": bar}));
    assert_eq!(dir.count_as_exhale(every, "SELECT count(*) FROM transaction_search"), 5);
    let mut expected = vec![
        "1 herboristería sol".to_owned(),
        "1 ikea".to_owned(),
        "2 bar la".to_owned(),
        "2 farmacia".to_owned(),
        "2 ikea".to_owned(),
    ];
    expected.sort();
    assert_eq!(texts(), expected);

    // Undoing cai's import takes its transactions away, and their text; ana's stays.
    op("cai@b.test", "undo", json!({"batch_id": imported["batch_id"]}));
    assert_eq!(dir.count_as_exhale(every, "SELECT count(*) FROM transaction_search"), 2);
    assert_eq!(op("cai@b.test", "search_transactions", json!({"text": "murcia"}))["total"], 0);
    assert_eq!(search("murcia"), 1);
}
