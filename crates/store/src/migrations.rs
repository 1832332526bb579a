//! Embedded migrations: SQLite's in order with `PRAGMA user_version` as the marker,
//! PostgreSQL's by name in a `schema_migrations` table.
//!
//! PostgreSQL starts at [`POSTGRES`]' first entry, the whole schema SQLite had reached by then;
//! every later migration is a pair of files under one name, `sqlite/` and `postgres/`.
//! Never edit a migration once it has landed: add a new file and a new entry.

use rusqlite::{Connection, OptionalExtension, functions::FunctionFlags};

use crate::{Result, StoreError};

/// SQLite's migrations, in order.
pub(crate) const MIGRATIONS: &[(&str, &str)] = &[
    ("0001_init", include_str!("../migrations/sqlite/0001_init.sql")),
    ("0002_sessions", include_str!("../migrations/sqlite/0002_sessions.sql")),
    ("0003_token_tools", include_str!("../migrations/sqlite/0003_token_tools.sql")),
    ("0004_oauth", include_str!("../migrations/sqlite/0004_oauth.sql")),
    ("0005_assistant", include_str!("../migrations/sqlite/0005_assistant.sql")),
    ("0006_channels", include_str!("../migrations/sqlite/0006_channels.sql")),
    ("0007_ledger", include_str!("../migrations/sqlite/0007_ledger.sql")),
    ("0008_transaction_search", include_str!("../migrations/sqlite/0008_transaction_search.sql")),
    ("0009_budgets", include_str!("../migrations/sqlite/0009_budgets.sql")),
    ("0010_rules", include_str!("../migrations/sqlite/0010_rules.sql")),
    (
        "0011_transaction_search_cover",
        include_str!("../migrations/sqlite/0011_transaction_search_cover.sql"),
    ),
    ("0012_transaction_text", include_str!("../migrations/sqlite/0012_transaction_text.sql")),
    (
        "0013_transaction_transfer_index",
        include_str!("../migrations/sqlite/0013_transaction_transfer_index.sql"),
    ),
    (
        "0014_member_language_follows_household",
        include_str!("../migrations/sqlite/0014_member_language_follows_household.sql"),
    ),
    ("0015_token_tool_sets", include_str!("../migrations/sqlite/0015_token_tool_sets.sql")),
    ("0016_shared_limits", include_str!("../migrations/sqlite/0016_shared_limits.sql")),
    (
        "0017_deferrable_references",
        include_str!("../migrations/sqlite/0017_deferrable_references.sql"),
    ),
    ("0018_limit_paces", include_str!("../migrations/sqlite/0018_limit_paces.sql")),
    ("0019_row_level_security", include_str!("../migrations/sqlite/0019_row_level_security.sql")),
    ("0020_transaction_search", include_str!("../migrations/sqlite/0020_transaction_search.sql")),
    ("0021_chat_imports", include_str!("../migrations/sqlite/0021_chat_imports.sql")),
    ("0022_oauth_row_security", include_str!("../migrations/sqlite/0022_oauth_row_security.sql")),
    (
        "0023_transaction_labels_through_labels",
        include_str!("../migrations/sqlite/0023_transaction_labels_through_labels.sql"),
    ),
    (
        "0024_household_references",
        include_str!("../migrations/sqlite/0024_household_references.sql"),
    ),
    (
        "0025_search_text_kept_when_changed",
        include_str!("../migrations/sqlite/0025_search_text_kept_when_changed.sql"),
    ),
    (
        "0026_transaction_search_by_household",
        include_str!("../migrations/sqlite/0026_transaction_search_by_household.sql"),
    ),
    (
        "0027_account_counts_from_the_index",
        include_str!("../migrations/sqlite/0027_account_counts_from_the_index.sql"),
    ),
    ("0028_bank_connections", include_str!("../migrations/sqlite/0028_bank_connections.sql")),
    ("0029_recurring_proposals", include_str!("../migrations/sqlite/0029_recurring_proposals.sql")),
    ("0030_bank_consents", include_str!("../migrations/sqlite/0030_bank_consents.sql")),
    ("0031_bank_reminders", include_str!("../migrations/sqlite/0031_bank_reminders.sql")),
    ("0032_assistant_repairs", include_str!("../migrations/sqlite/0032_assistant_repairs.sql")),
];

/// PostgreSQL's migrations, in order; each name is also one of [`MIGRATIONS`].
const POSTGRES: &[(&str, &str)] = &[
    ("0015_token_tool_sets", include_str!("../migrations/postgres/0015_token_tool_sets.sql")),
    ("0016_shared_limits", include_str!("../migrations/postgres/0016_shared_limits.sql")),
    (
        "0017_deferrable_references",
        include_str!("../migrations/postgres/0017_deferrable_references.sql"),
    ),
    ("0018_limit_paces", include_str!("../migrations/postgres/0018_limit_paces.sql")),
    ("0019_row_level_security", include_str!("../migrations/postgres/0019_row_level_security.sql")),
    ("0020_transaction_search", include_str!("../migrations/postgres/0020_transaction_search.sql")),
    ("0021_chat_imports", include_str!("../migrations/postgres/0021_chat_imports.sql")),
    ("0022_oauth_row_security", include_str!("../migrations/postgres/0022_oauth_row_security.sql")),
    (
        "0023_transaction_labels_through_labels",
        include_str!("../migrations/postgres/0023_transaction_labels_through_labels.sql"),
    ),
    (
        "0024_household_references",
        include_str!("../migrations/postgres/0024_household_references.sql"),
    ),
    (
        "0025_search_text_kept_when_changed",
        include_str!("../migrations/postgres/0025_search_text_kept_when_changed.sql"),
    ),
    (
        "0026_transaction_search_by_household",
        include_str!("../migrations/postgres/0026_transaction_search_by_household.sql"),
    ),
    (
        "0027_account_counts_from_the_index",
        include_str!("../migrations/postgres/0027_account_counts_from_the_index.sql"),
    ),
    ("0028_bank_connections", include_str!("../migrations/postgres/0028_bank_connections.sql")),
    (
        "0029_recurring_proposals",
        include_str!("../migrations/postgres/0029_recurring_proposals.sql"),
    ),
    ("0030_bank_consents", include_str!("../migrations/postgres/0030_bank_consents.sql")),
    ("0031_bank_reminders", include_str!("../migrations/postgres/0031_bank_reminders.sql")),
    ("0032_assistant_repairs", include_str!("../migrations/postgres/0032_assistant_repairs.sql")),
];

/// A name for the PostgreSQL schema the migrations make, different whenever they change (a
/// template database made by tests is kept per schema).
pub fn postgres_schema_fingerprint() -> String {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    POSTGRES.hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

/// Applies the PostgreSQL migrations the database has not had, each in a transaction of its
/// own, under an advisory lock so that instances starting together take turns.
pub(crate) fn apply_postgres(client: &mut postgres::Client, lock: i64) -> Result<()> {
    client.batch_execute(&format!("SELECT pg_advisory_lock({lock})"))?;
    let applied = apply_postgres_locked(client);
    let unlocked = client.batch_execute(&format!("SELECT pg_advisory_unlock({lock})"));
    applied?;
    Ok(unlocked?)
}

fn apply_postgres_locked(client: &mut postgres::Client) -> Result<()> {
    let recorded: bool =
        client.query_one("SELECT to_regclass('schema_migrations') IS NOT NULL", &[])?.get(0);
    if !recorded {
        may_create_tables(client)?;
    }
    client.batch_execute(MIGRATIONS_TABLE)?;
    let done: Vec<String> = client
        .query("SELECT name FROM schema_migrations", &[])?
        .iter()
        .map(|row| row.get(0))
        .collect();
    if done.iter().any(|name| !POSTGRES.iter().any(|(known, _)| known == name)) {
        return Err(StoreError::NewerSchema { found: done.len(), known: POSTGRES.len() });
    }
    if recorded && POSTGRES.iter().any(|(name, _)| !done.iter().any(|applied| applied == name)) {
        may_create_tables(client)?;
    }
    for (name, sql) in POSTGRES {
        if done.iter().any(|applied| applied == name) {
            continue;
        }
        let mut tx = client.transaction()?;
        apply_one(&mut tx, name, sql)?;
        tx.commit()?;
    }
    Ok(())
}

/// Refuses, with the fix, a role that may not create what the migrations make.
fn may_create_tables(client: &mut postgres::Client) -> Result<()> {
    let row = client.query_one(
        "SELECT current_user::text, current_schema()::text, has_schema_privilege(current_schema(), 'CREATE')",
        &[],
    )?;
    let (role, schema, may): (String, String, bool) = (row.get(0), row.get(1), row.get(2));
    if !may {
        return Err(StoreError::Config(format!(
            "the PostgreSQL role {role} may not create tables in schema {schema}, where Exhale keeps its own: make the role the database's owner (ALTER DATABASE … OWNER TO {role}) or GRANT CREATE ON SCHEMA {schema} TO {role}"
        )));
    }
    Ok(())
}

/// Where PostgreSQL's migrations are recorded.
const MIGRATIONS_TABLE: &str = "CREATE TABLE IF NOT EXISTS schema_migrations (
    name TEXT COLLATE \"C\" PRIMARY KEY,
    applied_at TEXT COLLATE \"C\" NOT NULL
)";

fn apply_one(tx: &mut postgres::Transaction<'_>, name: &str, sql: &str) -> Result<()> {
    // A migration's own statements see and change every household's rows.
    tx.batch_execute(&crate::postgres_session::Rows::Every.setting())?;
    tx.batch_execute(sql)?;
    tx.execute(
        "INSERT INTO schema_migrations (name, applied_at)
         VALUES ($1, to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'))",
        &[&name],
    )?;
    Ok(())
}

/// Makes the whole PostgreSQL schema inside `tx`, in an empty database (`exhale migrate`,
/// which copies into it in the same transaction).
pub(crate) fn create_postgres_schema(tx: &mut postgres::Transaction<'_>) -> Result<()> {
    tx.batch_execute(MIGRATIONS_TABLE)?;
    for (name, sql) in POSTGRES {
        apply_one(tx, name, sql)?;
    }
    Ok(())
}

/// Applies the migrations the database has not had. Foreign keys are off meanwhile (SQLite's
/// way to rebuild a table others refer to: dropping it would otherwise delete their rows), and
/// each migration commits only when every reference still holds.
pub(crate) fn apply(conn: &mut Connection) -> Result<()> {
    apply_first(conn, MIGRATIONS.len())
}

/// The schema version of a database an older Exhale wrote, which [`apply`] would migrate;
/// `None` for a new one (version 0) or one already current.
pub(crate) fn older_schema(conn: &Connection) -> Result<Option<usize>> {
    let current: usize = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
    Ok((current > 0 && current < MIGRATIONS.len()).then_some(current))
}

/// [`apply`], up to the first `count` migrations.
pub(crate) fn apply_first(conn: &mut Connection, count: usize) -> Result<()> {
    let current: usize = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
    if current > MIGRATIONS.len() {
        return Err(StoreError::NewerSchema { found: current, known: MIGRATIONS.len() });
    }
    let enforced: bool = conn.pragma_query_value(None, "foreign_keys", |row| row.get(0))?;
    conn.pragma_update(None, "foreign_keys", "OFF")?;
    let applied = (|| {
        for (index, (name, sql)) in MIGRATIONS.iter().enumerate().take(count).skip(current) {
            let tx = conn.transaction()?;
            tx.execute_batch(sql)?;
            let broken: Option<String> = tx
                .query_row("SELECT \"table\" FROM pragma_foreign_key_check LIMIT 1", [], |row| {
                    row.get(0)
                })
                .optional()?;
            if let Some(table) = broken {
                return Err(StoreError::Migration { name, table });
            }
            tx.pragma_update(None, "user_version", index + 1)?;
            tx.commit()?;
        }
        Ok(())
    })();
    conn.pragma_update(None, "foreign_keys", if enforced { "ON" } else { "OFF" })?;
    applied
}

/// The schema after all migrations, as `sqlite_master` holds it: the snapshot test compares
/// this with `crates/store/schema.sql`.
pub fn schema_snapshot() -> Result<String> {
    let mut conn = Connection::open_in_memory()?;
    add_functions(&conn)?;
    apply(&mut conn)?;
    let mut stmt = conn.prepare(
        "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY type DESC, name",
    )?;
    let statements: Vec<String> =
        stmt.query_map([], |row| row.get(0))?.collect::<Result<_, _>>()?;
    Ok(statements.iter().map(|s| format!("{s};\n")).collect())
}

/// `nocase(text)`: the text with ASCII letters in lower case, as the NOCASE collation compares
/// it. Written as a function, a comparison reads the same on PostgreSQL, whose migration
/// defines one alike.
pub(crate) fn add_functions(conn: &Connection) -> Result<()> {
    conn.create_scalar_function(
        "nocase",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            Ok(match ctx.get_raw(0) {
                rusqlite::types::ValueRef::Text(text) => {
                    rusqlite::types::Value::Text(String::from_utf8_lossy(text).to_ascii_lowercase())
                }
                rusqlite::types::ValueRef::Null => rusqlite::types::Value::Null,
                other => rusqlite::types::Value::from(other),
            })
        },
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn schema_matches_the_snapshot() {
        let actual = super::schema_snapshot().unwrap();
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema.sql");
        if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
            std::fs::write(path, &actual).unwrap();
        }
        let expected = std::fs::read_to_string(path).unwrap_or_default();
        assert_eq!(
            expected, actual,
            "the schema changed; review it and run UPDATE_SNAPSHOTS=1 cargo test -p store to update schema.sql"
        );
    }

    #[test]
    fn rebuilding_tokens_keeps_the_rows_that_refer_to_them_and_never_reuses_an_id() {
        let mut conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "foreign_keys", "ON").unwrap();
        super::apply_first(&mut conn, 14).unwrap();
        conn.execute_batch(
            "INSERT INTO households (id, name, currency, time_zone, created_at) VALUES (1, 'H', 'EUR', 'UTC', 'now');
             INSERT INTO members (id, household_id, name, email, role, created_at) VALUES (1, 1, 'Ana', 'a@a.test', 'owner', 'now');
             INSERT INTO oauth_clients (id, kind, name, redirect_uris, auth_method, grant_types, created_at)
                 VALUES ('c', 'registered', 'Claude', '[]', 'none', '[]', 'now');
             INSERT INTO tokens (household_id, member_id, kind, name, prefix, hash, scope, created_at, tools)
                 VALUES (1, 1, 'api', 'Laptop', 'exh_1', 'h1', 'write', 'now', 'compact');
             INSERT INTO tokens (household_id, member_id, kind, name, prefix, scope, created_at, client_id, resource)
                 VALUES (1, 1, 'oauth', 'Claude', 'g', 'write', 'now', 'c', 'https://x/mcp');
             INSERT INTO tokens (household_id, member_id, kind, name, prefix, hash, scope, created_at)
                 VALUES (1, 1, 'api', 'Gone', 'exh_3', 'h3', 'read', 'now');
             DELETE FROM tokens WHERE name = 'Gone';
             INSERT INTO oauth_tokens (hash, kind, grant_id, family, scope, created_at, expires_at)
                 VALUES ('r', 'refresh', 2, 'f', 'write', 'now', 'later');",
        )
        .unwrap();
        super::apply(&mut conn).unwrap();
        let count = |sql: &str| conn.query_row(sql, [], |row| row.get::<_, i64>(0)).unwrap();
        assert_eq!(count("SELECT COUNT(*) FROM oauth_tokens WHERE grant_id = 2"), 1);
        assert_eq!(count("SELECT COUNT(*) FROM tokens WHERE tools = 'compact'"), 1);
        conn.execute(
            "INSERT INTO tokens (household_id, member_id, kind, name, prefix, hash, scope, created_at, tools)
                 VALUES (1, 1, 'api', 'Cursor', 'exh_4', 'h4', 'write', 'now', 'subscriptions')",
            [],
        )
        .unwrap();
        assert_eq!(count("SELECT MAX(id) FROM tokens"), 4, "id 3 was a deleted token's");
        let enforced = count("PRAGMA foreign_keys");
        assert_eq!(enforced, 1, "foreign keys are enforced again after migrating");
        // Deleting a grant still takes its tokens with it.
        conn.execute("DELETE FROM tokens WHERE id = 2", []).unwrap();
        assert_eq!(count("SELECT COUNT(*) FROM oauth_tokens"), 0);
    }

    #[test]
    fn postgres_migrations_pair_with_sqlite_ones_from_the_first_on() {
        let names: Vec<&str> = super::MIGRATIONS.iter().map(|(name, _)| *name).collect();
        let first = names.iter().position(|name| *name == super::POSTGRES[0].0).unwrap();
        let postgres: Vec<&str> = super::POSTGRES.iter().map(|(name, _)| *name).collect();
        assert_eq!(
            postgres,
            names[first..],
            "every migration from {} on has both files",
            names[first]
        );
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/postgres");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| {
                entry.unwrap().file_name().to_string_lossy().trim_end_matches(".sql").to_owned()
            })
            .collect();
        files.sort();
        assert_eq!(files, postgres, "every file in migrations/postgres is listed");
    }

    #[test]
    fn a_database_from_a_newer_exhale_is_refused() {
        let mut conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
        let err = super::apply(&mut conn).unwrap_err();
        assert!(err.to_string().contains("newer"), "{err}");
    }

    #[test]
    fn migrations_apply_twice_without_change() {
        let mut conn = rusqlite::Connection::open_in_memory().unwrap();
        super::apply(&mut conn).unwrap();
        super::apply(&mut conn).unwrap();
        let version: usize =
            conn.pragma_query_value(None, "user_version", |row| row.get(0)).unwrap();
        assert_eq!(version, super::MIGRATIONS.len());
    }
}
