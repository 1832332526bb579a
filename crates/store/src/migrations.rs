//! Embedded migrations, applied in order with `PRAGMA user_version` as the marker.
//!
//! Never edit a migration once it has landed: add a new file and a new entry.

use rusqlite::Connection;

use crate::{Result, StoreError};

const MIGRATIONS: &[(&str, &str)] = &[
    ("0001_init", include_str!("../migrations/0001_init.sql")),
    ("0002_sessions", include_str!("../migrations/0002_sessions.sql")),
    ("0003_token_tools", include_str!("../migrations/0003_token_tools.sql")),
    ("0004_oauth", include_str!("../migrations/0004_oauth.sql")),
    ("0005_assistant", include_str!("../migrations/0005_assistant.sql")),
    ("0006_channels", include_str!("../migrations/0006_channels.sql")),
    ("0007_ledger", include_str!("../migrations/0007_ledger.sql")),
    ("0008_transaction_search", include_str!("../migrations/0008_transaction_search.sql")),
    ("0009_budgets", include_str!("../migrations/0009_budgets.sql")),
    ("0010_rules", include_str!("../migrations/0010_rules.sql")),
    (
        "0011_transaction_search_cover",
        include_str!("../migrations/0011_transaction_search_cover.sql"),
    ),
    ("0012_transaction_text", include_str!("../migrations/0012_transaction_text.sql")),
    (
        "0013_transaction_transfer_index",
        include_str!("../migrations/0013_transaction_transfer_index.sql"),
    ),
    (
        "0014_member_language_follows_household",
        include_str!("../migrations/0014_member_language_follows_household.sql"),
    ),
];

pub(crate) fn apply(conn: &mut Connection) -> Result<()> {
    let current: usize = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
    if current > MIGRATIONS.len() {
        return Err(StoreError::NewerSchema { found: current, known: MIGRATIONS.len() });
    }
    for (index, (_name, sql)) in MIGRATIONS.iter().enumerate().skip(current) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", index + 1)?;
        tx.commit()?;
    }
    Ok(())
}

/// The schema after all migrations, as `sqlite_master` holds it: the snapshot test compares
/// this with `crates/store/schema.sql`.
pub fn schema_snapshot() -> Result<String> {
    let mut conn = Connection::open_in_memory()?;
    apply(&mut conn)?;
    let mut stmt = conn.prepare(
        "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY type DESC, name",
    )?;
    let statements: Vec<String> =
        stmt.query_map([], |row| row.get(0))?.collect::<Result<_, _>>()?;
    Ok(statements.iter().map(|s| format!("{s};\n")).collect())
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
