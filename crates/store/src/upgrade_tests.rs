//! Upgrades keep every row: a database of every earlier schema version, migrated by this
//! Exhale, still holds each row it held, with every value of every column that is still
//! there.
//!
//! The kept fixtures (`crates/store/fixtures/schema-N.db.gz`, see the README there) are real
//! databases, each written by the Exhale of its version: each is migrated as it is. For the
//! versions with none kept (older than this repository's history, or with no commit that
//! builds), a database is
//! made at that version (its migrations, never edited once landed, make exactly its schema)
//! and filled with the newest fixture's rows, as far as that version's tables and columns hold
//! them, then migrated the same way. The newest fixture must be of the current version, so that each
//! new migration is tested against a real database of the version before it.

use std::{
    collections::BTreeMap,
    io::Read,
    path::{Path, PathBuf},
};

use rusqlite::{Connection, types::Value};

use crate::{
    migrations,
    sqlite::{SqliteStore, tests::Scratch},
};

/// Every table's rows, each as the values of its columns by name, sorted, so two snapshots
/// compare without a row order.
type Snapshot = BTreeMap<String, (Vec<String>, Vec<Vec<Value>>)>;

fn fixtures() -> Vec<(usize, PathBuf)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut kept: Vec<(usize, PathBuf)> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name()?.to_str()?.to_owned();
            let version = name.strip_prefix("schema-")?.strip_suffix(".db.gz")?.parse().ok()?;
            Some((version, path))
        })
        .collect();
    kept.sort();
    kept
}

fn unpack(fixture: &Path, into: &Path) {
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(fixture).unwrap())
        .read_to_end(&mut plain)
        .unwrap();
    std::fs::write(into, plain).unwrap();
}

/// The tables that hold rows of their own: not SQLite's, and not a full-text index (a virtual
/// table and its shadow tables, which follow the rows they index).
fn tables(conn: &Connection) -> Vec<String> {
    let mut statement = conn
        .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        .unwrap();
    let all: Vec<(String, String)> = statement
        .query_map([], |row| {
            Ok((row.get(0)?, row.get::<_, Option<String>>(1)?.unwrap_or_default()))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let virtual_tables: Vec<&String> = all
        .iter()
        .filter(|(_, sql)| sql.to_uppercase().starts_with("CREATE VIRTUAL TABLE"))
        .map(|(name, _)| name)
        .collect();
    all.iter()
        .filter(|(name, _)| {
            !virtual_tables.iter().any(|v| *name == **v || name.starts_with(&format!("{v}_")))
        })
        .map(|(name, _)| name.clone())
        .collect()
}

fn columns(conn: &Connection, table: &str) -> Vec<String> {
    let mut statement =
        conn.prepare(&format!("SELECT name FROM pragma_table_info('{table}')")).unwrap();
    statement.query_map([], |row| row.get(0)).unwrap().map(Result::unwrap).collect()
}

fn snapshot(path: &Path) -> Snapshot {
    let conn = Connection::open(path).unwrap();
    let mut snapshot = Snapshot::new();
    for table in tables(&conn) {
        let columns = columns(&conn, &table);
        let list = columns.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(", ");
        let mut statement = conn.prepare(&format!("SELECT {list} FROM \"{table}\"")).unwrap();
        let mut rows: Vec<Vec<Value>> = statement
            .query_map([], |row| (0..columns.len()).map(|i| row.get(i)).collect())
            .unwrap()
            .map(Result::unwrap)
            .collect();
        rows.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
        snapshot.insert(table, (columns, rows));
    }
    snapshot
}

/// Each row of `before` is in `after`, with the same value in every column still there.
fn every_row_kept(version: usize, before: &Snapshot, after: &Snapshot) -> usize {
    let mut compared = 0;
    for (table, (old_columns, old_rows)) in before {
        let (new_columns, new_rows) = after.get(table).unwrap_or_else(|| {
            panic!("schema {version}: the table {table} is gone after migrating")
        });
        let kept: Vec<(usize, usize)> = old_columns
            .iter()
            .enumerate()
            .filter_map(|(old, name)| {
                new_columns.iter().position(|n| n == name).map(|new| (old, new))
            })
            .collect();
        let project = |rows: &Vec<Vec<Value>>, side: fn(&(usize, usize)) -> usize| {
            let mut projected: Vec<String> = rows
                .iter()
                .map(|row| {
                    format!("{:?}", kept.iter().map(|pair| &row[side(pair)]).collect::<Vec<_>>())
                })
                .collect();
            projected.sort();
            projected
        };
        let (old, new) = (project(old_rows, |p| p.0), project(new_rows, |p| p.1));
        assert_eq!(
            old.len(),
            new.len(),
            "schema {version}: {table} had {} rows, has {}",
            old.len(),
            new.len()
        );
        for (was, is) in old.iter().zip(&new) {
            assert_eq!(was, is, "schema {version}: a row of {table} changed");
        }
        compared += old.len();
    }
    compared
}

/// Migrates the database at `path` as Exhale does when it opens one, and checks every row.
fn migrate_and_check(version: usize, path: &Path) -> usize {
    let before = snapshot(path);
    drop(SqliteStore::open(path).unwrap_or_else(|err| panic!("schema {version}: {err}")));
    let after = snapshot(path);
    let conn = Connection::open(path).unwrap();
    let now: usize = conn.pragma_query_value(None, "user_version", |row| row.get(0)).unwrap();
    assert_eq!(now, migrations::MIGRATIONS.len(), "schema {version} was migrated to the end");
    every_row_kept(version, &before, &after)
}

/// The tables, each after those it refers to: the triggers that hold a household's references
/// (schema 24 on) look for the row referred to as each row goes in.
fn parents_first(conn: &Connection) -> Vec<String> {
    let all = tables(conn);
    let parents = |table: &str| -> Vec<String> {
        let mut statement = conn
            .prepare(&format!("SELECT \"table\" FROM pragma_foreign_key_list('{table}')"))
            .unwrap();
        statement.query_map([], |row| row.get(0)).unwrap().map(Result::unwrap).collect()
    };
    let mut ordered: Vec<String> = Vec::new();
    while ordered.len() < all.len() {
        let before = ordered.len();
        for table in &all {
            if !ordered.contains(table)
                && parents(table)
                    .iter()
                    .all(|p| p == table || ordered.contains(p) || !all.contains(p))
            {
                ordered.push(table.clone());
            }
        }
        assert!(ordered.len() > before, "the tables refer to each other in a circle");
    }
    ordered
}

/// A database at `version`, filled with `source`'s rows as far as that version holds them:
/// the columns it has, the rows its checks take, and no row pointing at one left out.
fn made_at(version: usize, source: &Path, path: &Path) -> usize {
    let mut conn = Connection::open(path).unwrap();
    migrations::apply_first(&mut conn, version).unwrap();
    conn.pragma_update(None, "foreign_keys", "OFF").unwrap();
    conn.execute("ATTACH DATABASE ?1 AS source", [source.to_str().unwrap()]).unwrap();
    let source_tables = {
        let mut statement =
            conn.prepare("SELECT name FROM source.sqlite_master WHERE type = 'table'").unwrap();
        statement
            .query_map([], |row| row.get::<_, String>(0))
            .unwrap()
            .map(Result::unwrap)
            .collect::<Vec<_>>()
    };
    let mut filled = 0;
    for table in parents_first(&conn) {
        if !source_tables.contains(&table) {
            continue;
        }
        let source_columns = {
            let mut statement = conn
                .prepare(&format!("SELECT name FROM source.pragma_table_info('{table}')"))
                .unwrap();
            statement
                .query_map([], |row| row.get::<_, String>(0))
                .unwrap()
                .map(Result::unwrap)
                .collect::<Vec<_>>()
        };
        let shared: Vec<String> =
            columns(&conn, &table).into_iter().filter(|c| source_columns.contains(c)).collect();
        let list = shared.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(", ");
        // A row referring to another of its table (a transfer's other side) goes in without
        // it, and gets it once every row is in, as the triggers want the row referred to.
        let own: Vec<String> = {
            let mut statement = conn
                .prepare(&format!("SELECT \"from\" FROM pragma_foreign_key_list('{table}') WHERE \"table\" = '{table}'"))
                .unwrap();
            statement.query_map([], |row| row.get(0)).unwrap().map(Result::unwrap).collect()
        };
        let values = shared
            .iter()
            .map(|c| if own.contains(c) { "NULL".to_owned() } else { format!("\"{c}\"") })
            .collect::<Vec<_>>()
            .join(", ");
        // A row this version's checks refuse (a kind it did not know yet) is left out.
        filled += conn
            .execute(
                &format!("INSERT OR IGNORE INTO main.\"{table}\" ({list}) SELECT {values} FROM source.\"{table}\""),
                [],
            )
            .unwrap_or_else(|err| panic!("schema {version}: filling {table}: {err}"));
        for column in own.iter().filter(|c| shared.contains(c)) {
            conn.execute(
                &format!("UPDATE main.\"{table}\" SET \"{column}\" = (SELECT s.\"{column}\" FROM source.\"{table}\" s WHERE s.rowid = main.\"{table}\".rowid)"),
                [],
            )
            .unwrap_or_else(|err| panic!("schema {version}: {table}.{column}: {err}"));
        }
    }
    conn.execute("DETACH DATABASE source", []).unwrap();
    // Rows pointing at one left out go too, until nothing points nowhere.
    loop {
        let dangling: Vec<(String, i64)> = {
            let mut statement =
                conn.prepare("SELECT \"table\", rowid FROM pragma_foreign_key_check").unwrap();
            statement
                .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
                .unwrap()
                .map(Result::unwrap)
                .collect()
        };
        if dangling.is_empty() {
            break;
        }
        for (table, rowid) in dangling {
            conn.execute(&format!("DELETE FROM \"{table}\" WHERE rowid = ?1"), [rowid]).unwrap();
        }
    }
    filled
}

#[test]
fn every_earlier_schema_migrates_with_every_row_intact() {
    let kept = fixtures();
    let current = migrations::MIGRATIONS.len();
    let (newest, newest_path) = kept.last().cloned().expect("a kept fixture");
    assert_eq!(
        newest, current,
        "no database of schema {current} is kept: run scripts/keep-upgrade-fixture, so the next migration is tested against one"
    );
    let scratch = Scratch::new("every");
    let source = scratch.0.join("source.db");
    unpack(&newest_path, &source);

    // The kept ones, as their Exhale wrote them.
    for (version, fixture) in &kept {
        let path = scratch.0.join(format!("kept-{version}.db"));
        unpack(fixture, &path);
        let compared = migrate_and_check(*version, &path);
        assert!(compared > 300, "schema {version}: only {compared} rows");
    }

    // Every version with none kept, filled from the newest.
    for version in (1..current).filter(|v| !kept.iter().any(|(k, _)| k == v)) {
        let path = scratch.0.join(format!("made-{version}.db"));
        let filled = made_at(version, &source, &path);
        assert!(filled > 0, "schema {version}: nothing to migrate");
        let compared = migrate_and_check(version, &path);
        assert!(compared > 0, "schema {version}");
    }
}

#[test]
fn a_changed_value_or_a_lost_row_is_seen() {
    let scratch = Scratch::new("seen");
    let path = scratch.0.join("db.db");
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO t VALUES (1, 'a'), (2, 'b');")
        .unwrap();
    let before = snapshot(&path);
    conn.execute("UPDATE t SET name = 'c' WHERE id = 2", []).unwrap();
    let changed = snapshot(&path);
    assert!(std::panic::catch_unwind(|| every_row_kept(1, &before, &changed)).is_err());
    conn.execute("DELETE FROM t WHERE id = 2", []).unwrap();
    let lost = snapshot(&path);
    assert!(std::panic::catch_unwind(|| every_row_kept(1, &before, &lost)).is_err());
    conn.execute_batch(
        "INSERT INTO t VALUES (2, 'b'); ALTER TABLE t ADD COLUMN extra TEXT DEFAULT 'x';",
    )
    .unwrap();
    assert_eq!(every_row_kept(1, &before, &snapshot(&path)), 2, "a new column is no change");
}
