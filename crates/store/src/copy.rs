//! Copying an SQLite database into an empty PostgreSQL database (`exhale migrate`): the
//! schema and every row with its id, audit entries included, in one transaction, so a
//! failure leaves the target as empty as it was.
//!
//! The source is read in one read transaction (one snapshot). References are checked once, at
//! the end (PostgreSQL's are deferrable), so rows that refer to each other, such as the two
//! sides of a transfer, go in whatever their order. Each id sequence starts after the highest
//! id SQLite ever gave (`sqlite_sequence`), so no id of a deleted row is given again and undo
//! can bring it back. SQLite's text index is not copied: PostgreSQL has its own.

use rusqlite::types::ValueRef;

use crate::{
    Result, StoreError, migrations, postgres, postgres_session, sqlite,
    value::{Kind, Param, SqlValue},
};

/// Values one statement binds at most (PostgreSQL takes 65,535).
const MOST_VALUES: usize = 60_000;

/// What was copied: each table with its rows, in the order copied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Copied {
    pub tables: Vec<(String, u64)>,
}

/// Copies `source` into the empty PostgreSQL database at `url`, while no other Exhale has
/// `source` open (what it wrote after the copy began would not be in it).
pub(crate) fn sqlite_to_postgres(source: &sqlite::SqliteStore, url: &str) -> Result<Copied> {
    source.alone(|| {
        // The synchronous client may not run on an async worker thread: a thread of its own.
        std::thread::scope(|scope| {
            scope
                .spawn(|| copy(source, url))
                .join()
                .unwrap_or_else(|_| Err(StoreError::Corrupt("the copy panicked".into())))
        })
    })
}

fn copy(source: &sqlite::SqliteStore, url: &str) -> Result<Copied> {
    let mut client = postgres::connect_alone(url)?;
    let existing: i64 = client
        .query_one(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()",
            &[],
        )?
        .get(0);
    if existing > 0 {
        return Err(StoreError::Config(format!(
            "the PostgreSQL database is not empty ({existing} tables); exhale migrate copies into an empty one: create it with CREATE DATABASE, or drop what is in it"
        )));
    }
    let mut reader = source.open_reader()?;
    let snapshot = reader.transaction()?;
    let tables = parents_first(&snapshot)?;
    let mut tx = client.transaction()?;
    migrations::create_postgres_schema(&mut tx)?;
    tx.batch_execute("SET CONSTRAINTS ALL DEFERRED")?;
    // Every household's rows, past row-level security.
    tx.batch_execute(&postgres_session::Rows::Every.setting())?;
    let mut copied = Vec::with_capacity(tables.len());
    for table in &tables {
        let rows = copy_table(&snapshot, &mut tx, table).map_err(|err| match err {
            err @ StoreError::Config(_) => err,
            other => StoreError::Corrupt(format!("copying {table}: {other}")),
        })?;
        copied.push((table.clone(), rows));
    }
    // The references, all checked now: a failure rolls everything back.
    tx.batch_execute("SET CONSTRAINTS ALL IMMEDIATE")?;
    tx.commit()?;
    Ok(Copied { tables: copied })
}

/// The tables, each after the tables it refers to (by name among equals), so a row's
/// parent is there before it: row-level security lets a row without a household column in
/// only when its parent is visible. A table referring to itself, or tables referring to
/// each other, rely on the references being checked at the end.
fn parents_first(source: &rusqlite::Transaction<'_>) -> Result<Vec<String>> {
    let mut left: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> =
        std::collections::BTreeMap::new();
    let names: Vec<String> = source
        .prepare(
            "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )?
        .query_map([], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    for name in &names {
        let parents: std::collections::BTreeSet<String> = source
            .prepare("SELECT DISTINCT \"table\" FROM pragma_foreign_key_list(?1)")?
            .query_map([name], |row| row.get::<_, String>(0))?
            .collect::<Result<_, _>>()?;
        left.insert(
            name.clone(),
            parents.into_iter().filter(|parent| parent != name && names.contains(parent)).collect(),
        );
    }
    let mut ordered = Vec::with_capacity(names.len());
    while !left.is_empty() {
        // The first table whose parents are all placed; in a circle, the first left.
        let next = left
            .iter()
            .find(|(_, parents)| parents.iter().all(|parent| !left.contains_key(parent)))
            .or_else(|| left.iter().next())
            .map(|(name, _)| name.clone())
            .ok_or_else(|| StoreError::Corrupt("no table left to order".into()))?;
        left.remove(&next);
        ordered.push(next);
    }
    Ok(ordered)
}

/// Copies one table's rows, sets its id sequence after SQLite's, and checks the count.
fn copy_table(
    source: &rusqlite::Transaction<'_>,
    target: &mut ::postgres::Transaction<'_>,
    table: &str,
) -> Result<u64> {
    let mut statement = source.prepare(&format!("SELECT * FROM \"{table}\" ORDER BY rowid"))?;
    let columns: Vec<String> = statement.column_names().into_iter().map(str::to_owned).collect();
    let per_statement = (MOST_VALUES / columns.len().max(1)).max(1);
    let mut batch: Vec<SqlValue> = Vec::new();
    let mut copied = 0u64;
    let mut rows = statement.query([])?;
    while let Some(row) = rows.next()? {
        for (index, column) in columns.iter().enumerate() {
            batch.push(match row.get_ref(index)? {
                ValueRef::Null => SqlValue::Null(Kind::Text),
                ValueRef::Integer(i) => SqlValue::Int(i),
                ValueRef::Real(f) => SqlValue::Real(f),
                ValueRef::Text(text) => match String::from_utf8(text.to_vec()) {
                    Ok(text) if !text.contains('\0') => SqlValue::Text(text),
                    // PostgreSQL's text holds neither; nothing Exhale writes has them.
                    _ => return Err(unstorable(table, column, row.get_ref(0)?)),
                },
                ValueRef::Blob(_) => {
                    return Err(unstorable(table, column, row.get_ref(0)?));
                }
            });
        }
        copied += 1;
        if batch.len() >= per_statement * columns.len() {
            insert(target, table, &columns, &batch)?;
            batch.clear();
        }
    }
    if !batch.is_empty() {
        insert(target, table, &columns, &batch)?;
    }
    let sequence: Option<String> = target
        .query_opt(
            "SELECT pg_get_serial_sequence(quote_ident(table_name), 'id')
             FROM information_schema.columns
             WHERE table_schema = current_schema() AND table_name = $1 AND column_name = 'id'",
            &[&table],
        )?
        .and_then(|row| row.get(0));
    if let Some(sequence) = sequence {
        let highest: i64 = source.query_row(
            &format!(
                "SELECT max(coalesce((SELECT max(id) FROM \"{table}\"), 0),
                            coalesce((SELECT seq FROM sqlite_sequence WHERE name = ?1), 0))"
            ),
            [table],
            |row| row.get(0),
        )?;
        if highest > 0 {
            target.execute("SELECT setval($1::text::regclass, $2)", &[&sequence, &highest])?;
        }
    }
    let there: i64 = target.query_one(&format!("SELECT count(*) FROM \"{table}\""), &[])?.get(0);
    if u64::try_from(there).ok() != Some(copied) {
        return Err(StoreError::Corrupt(format!("{copied} rows read, {there} in PostgreSQL")));
    }
    Ok(copied)
}

/// The refusal of a value PostgreSQL cannot store (not UTF-8, with a NUL character, or bytes
/// where Exhale keeps text), naming the row by its first column (its id, in most tables).
fn unstorable(table: &str, column: &str, first: ValueRef<'_>) -> StoreError {
    let row = match first {
        ValueRef::Integer(id) => id.to_string(),
        ValueRef::Text(text) => String::from_utf8_lossy(text).into_owned(),
        _ => "?".into(),
    };
    StoreError::Config(format!(
        "{column} of the row {row} in {table} is not text PostgreSQL can store (it is not UTF-8, holds a NUL character, or is bytes); correct it in the SQLite file and migrate again. Nothing was copied."
    ))
}

/// One statement inserting the rows of `values` (a row's values after another's).
fn insert(
    target: &mut ::postgres::Transaction<'_>,
    table: &str,
    columns: &[String],
    values: &[SqlValue],
) -> Result<()> {
    let quoted: Vec<String> = columns.iter().map(|c| format!("\"{c}\"")).collect();
    let rows: Vec<String> = (0..values.len() / columns.len())
        .map(|row| {
            let placeholders: Vec<String> = (1..=columns.len())
                .map(|column| format!("${}", row * columns.len() + column))
                .collect();
            format!("({})", placeholders.join(", "))
        })
        .collect();
    let sql = format!("INSERT INTO \"{table}\" ({}) VALUES {}", quoted.join(", "), rows.join(", "));
    let bound: Vec<crate::value::Value<'_>> = values.iter().map(Param::value).collect();
    let params: Vec<&(dyn ::postgres::types::ToSql + Sync)> =
        bound.iter().map(|value| value as &(dyn ::postgres::types::ToSql + Sync)).collect();
    target.execute(sql.as_str(), &params)?;
    Ok(())
}
