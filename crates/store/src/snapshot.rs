//! Entity snapshots for audit and undo, generic over the tables.
//!
//! A snapshot is the entity's row with its owned child rows as JSON:
//! `{"row": {...}, "children": {"table": [...]}, "kept": {"table": [...]}}`. `children` are
//! part of the entity's state (tags, prices, pauses); `kept` rows (a subscription's charges)
//! are restored when a deleted entity comes back but are not compared, because the
//! background job adds them without it being a change by anyone.

use serde_json::{Map, Value, json};

use crate::{
    Db, Dialect, Result, StoreError,
    value::{Kind, SqlValue, Value as SqlRef, as_params, params},
};

struct Spec {
    entity: &'static str,
    table: &'static str,
    /// Column holding the household id ("id" for households themselves).
    household_column: &'static str,
    children: &'static [(&'static str, &'static str)],
    kept: &'static [(&'static str, &'static str)],
    /// Columns the system changes on its own; neither compared nor restored.
    volatile: &'static [&'static str],
}

const SPECS: &[Spec] = &[
    Spec {
        entity: "subscription",
        table: "subscriptions",
        household_column: "household_id",
        children: &[
            ("subscription_tags", "subscription_id"),
            ("price_points", "subscription_id"),
            ("pauses", "subscription_id"),
        ],
        kept: &[("charges", "subscription_id")],
        volatile: &["charged_through"],
    },
    Spec {
        entity: "charge",
        table: "charges",
        household_column: "household_id",
        children: &[],
        kept: &[],
        volatile: &[],
    },
    Spec {
        entity: "category",
        table: "categories",
        household_column: "household_id",
        children: &[],
        kept: &[],
        volatile: &[],
    },
    Spec {
        entity: "payment_method",
        table: "payment_methods",
        household_column: "household_id",
        children: &[],
        kept: &[],
        volatile: &[],
    },
    Spec {
        entity: "member",
        table: "members",
        household_column: "household_id",
        // Not calendar_feeds: an address is a credential, and an Undo must never bring an old one
        // back.
        children: &[("reminder_preferences", "member_id")],
        kept: &[],
        volatile: &[],
    },
    Spec {
        entity: "household",
        table: "households",
        household_column: "id",
        children: &[
            ("exchange_rates", "household_id"),
            ("assistant_settings", "household_id"),
            ("mail_servers", "household_id"),
        ],
        kept: &[],
        volatile: &[],
    },
    Spec {
        entity: "destination",
        table: "destinations",
        household_column: "household_id",
        children: &[],
        kept: &[],
        volatile: &[],
    },
    Spec {
        entity: "account",
        table: "accounts",
        household_column: "household_id",
        children: &[("account_balances", "account_id")],
        kept: &[],
        volatile: &[],
    },
    Spec {
        entity: "transaction",
        table: "transactions",
        household_column: "household_id",
        children: &[
            ("transaction_labels", "transaction_id"),
            ("transaction_splits", "transaction_id"),
        ],
        kept: &[],
        // Written with every change; an undo that restores the row restores the fields.
        volatile: &["updated_at"],
    },
    Spec {
        entity: "import",
        table: "imports",
        household_column: "household_id",
        children: &[],
        // Its transactions go with it; stored only in the entry that deletes it, so an import of
        // 100,000 rows does not write them into its own audit entry.
        kept: &[("transactions", "import_id")],
        volatile: &[],
    },
    Spec {
        entity: "label",
        table: "labels",
        household_column: "household_id",
        children: &[],
        kept: &[],
        volatile: &[],
    },
    Spec {
        entity: "budget",
        table: "budgets",
        household_column: "household_id",
        children: &[
            ("budget_categories", "budget_id"),
            ("budget_labels", "budget_id"),
            ("budget_amounts", "budget_id"),
        ],
        kept: &[],
        volatile: &[],
    },
    Spec {
        entity: "rule",
        table: "rules",
        household_column: "household_id",
        children: &[("rule_labels", "rule_id")],
        kept: &[],
        volatile: &[],
    },
    // Never its credentials (the secret `bank:<id>`), nor its accounts (their own entity, so
    // an undo never deletes them and the provider ids they hold); what its syncs change is
    // the schedule's, not a person's change.
    Spec {
        entity: "bank_connection",
        table: "bank_connections",
        household_column: "household_id",
        children: &[],
        kept: &[],
        volatile: &[
            "status",
            "status_detail",
            "failures",
            "synced_through",
            "last_attempt_at",
            "last_success_at",
            "next_sync_at",
            "consent_until",
            "leased_until",
            "country",
        ],
    },
    // Where its transactions go is a person's choice; what the bank calls it, and its
    // balance and problem, each sync writes.
    Spec {
        entity: "bank_account",
        table: "bank_accounts",
        household_column: "household_id",
        children: &[],
        kept: &[],
        volatile: &["name", "institution", "currency", "available_minor", "problem"],
    },
    // Whether it was dismissed is a person's; its amount and dates each sync renews.
    Spec {
        entity: "recurring_proposal",
        table: "recurring_proposals",
        household_column: "household_id",
        children: &[],
        kept: &[],
        volatile: &["name", "amount_minor", "cycle", "amount_varies", "next_expected"],
    },
    Spec {
        entity: "token",
        table: "tokens",
        household_column: "household_id",
        children: &[],
        kept: &[],
        volatile: &["last_used_at"],
    },
];

fn spec(entity: &str) -> Result<&'static Spec> {
    SPECS
        .iter()
        .find(|s| s.entity == entity)
        .ok_or_else(|| StoreError::Corrupt(format!("unknown entity kind {entity}")))
}

/// Whether undo knows this entity kind.
pub fn is_known(entity: &str) -> bool {
    SPECS.iter().any(|s| s.entity == entity)
}

/// A stored value as JSON, the same on both databases: flags are the integers SQLite holds,
/// dates their 'YYYY-MM-DD' text.
fn to_json(value: SqlRef<'_>) -> Value {
    match value {
        SqlRef::Null | SqlRef::NullOf(_) => Value::Null,
        SqlRef::Int(i) => json!(i),
        SqlRef::Bool(b) => json!(i64::from(b)),
        SqlRef::Real(f) => json!(f),
        SqlRef::Text(t) => Value::String(t.to_owned()),
        SqlRef::Date(d) => Value::String(d.to_string()),
        SqlRef::Blob(b) => Value::String(b.iter().map(|byte| format!("{byte:02x}")).collect()),
        SqlRef::Ints(ids) => json!(ids),
    }
}

fn rows(db: &Db<'_>, sql: &str, id: i64) -> Result<Vec<Value>> {
    db.query_map(sql, params![id], |row| {
        let mut map = Map::new();
        for i in 0..row.column_count() {
            map.insert(row.name(i).to_owned(), to_json(row.value(i)?));
        }
        Ok(Value::Object(map))
    })
}

/// The entity's current state, or None when it does not exist in this household.
pub fn snapshot(db: &Db<'_>, household_id: i64, entity: &str, id: i64) -> Result<Option<Value>> {
    read(db, household_id, entity, id, true)
}

/// [`snapshot`] without the rows kept for undoing a deletion: the state after a change that
/// left the entity in place, whose entry never stores them (an import's 100,000
/// transactions are not read to be thrown away).
pub fn snapshot_in_place(
    db: &Db<'_>,
    household_id: i64,
    entity: &str,
    id: i64,
) -> Result<Option<Value>> {
    read(db, household_id, entity, id, false)
}

fn read(
    db: &Db<'_>,
    household_id: i64,
    entity: &str,
    id: i64,
    with_kept: bool,
) -> Result<Option<Value>> {
    let spec = spec(entity)?;
    let mut main = rows(db, &format!("SELECT * FROM {} WHERE id = ?1", spec.table), id)?;
    let Some(row) = main.pop() else { return Ok(None) };
    if row.get(spec.household_column).and_then(Value::as_i64) != Some(household_id) {
        return Ok(None);
    }
    let children = child_rows(db, spec.children, id)?;
    let kept = if with_kept { child_rows(db, spec.kept, id)? } else { Map::new() };
    Ok(Some(json!({"row": row, "children": children, "kept": kept})))
}

/// The rows of each (table, foreign key) in `tables` that belong to entity `id`, by table name.
fn child_rows(db: &Db<'_>, tables: &[(&str, &str)], id: i64) -> Result<Map<String, Value>> {
    let mut by_table = Map::new();
    for (table, fk) in tables {
        by_table.insert(
            (*table).into(),
            Value::Array(rows(
                db,
                &format!("SELECT * FROM {table} WHERE {fk} = ?1 ORDER BY {}", row_order(table, fk)),
                id,
            )?),
        );
    }
    Ok(by_table)
}

/// The order a child table's rows are read in: by id where rows have one.
fn row_order<'a>(table: &str, fk: &'a str) -> &'a str {
    match table {
        "subscription_tags" => "tag",
        "exchange_rates" => "currency",
        // One row per parent.
        "reminder_preferences" | "assistant_settings" | "mail_servers" => fk,
        _ => "id",
    }
}

/// The part of a snapshot that counts as the entity's state (for conflict checks).
pub fn comparable(entity: &str, snapshot: &Value) -> Result<Value> {
    let spec = spec(entity)?;
    let mut row = snapshot.get("row").cloned().unwrap_or(Value::Null);
    if let Value::Object(map) = &mut row {
        for column in spec.volatile {
            map.remove(*column);
        }
    }
    // A child table with no rows counts as absent, so a snapshot taken before the table
    // existed compares equal to one taken after with nothing in it.
    let mut children = snapshot.get("children").cloned().unwrap_or(Value::Null);
    if let Value::Object(map) = &mut children {
        map.retain(|_, rows| rows.as_array().is_none_or(|rows| !rows.is_empty()));
        // Rows in any order are the same state: a snapshot read by SQLite's row order compares
        // equal to one read by id or name.
        for rows in map.values_mut() {
            if let Value::Array(rows) = rows {
                rows.sort_by_cached_key(Value::to_string);
            }
        }
    }
    Ok(json!({"row": row, "children": children}))
}

fn check_column(name: &str) -> Result<()> {
    if name.is_empty()
        || !name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    {
        return Err(StoreError::Corrupt(format!("bad column name {name:?} in a snapshot")));
    }
    Ok(())
}

fn sql_value(value: &Value) -> SqlValue {
    match value {
        // A column's type is the table's: PostgreSQL reads it from there.
        Value::Null => SqlValue::Null(Kind::Text),
        Value::Bool(b) => SqlValue::Int(i64::from(*b)),
        Value::Number(n) => match n.as_i64() {
            Some(i) => SqlValue::Int(i),
            None => SqlValue::Real(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => SqlValue::Text(s.clone()),
        other => SqlValue::Text(other.to_string()),
    }
}

fn insert_row(db: &Db<'_>, table: &str, row: &Value) -> Result<()> {
    let Value::Object(map) = row else {
        return Err(StoreError::Corrupt("snapshot row is not an object".into()));
    };
    let mut columns = Vec::with_capacity(map.len());
    let mut values = Vec::with_capacity(map.len());
    for (name, value) in map {
        check_column(name)?;
        columns.push(name.as_str());
        values.push(sql_value(value));
    }
    let placeholders: Vec<String> = (1..=columns.len()).map(|i| format!("?{i}")).collect();
    let sql = format!(
        "INSERT INTO {table} ({}) VALUES ({})",
        columns.join(", "),
        placeholders.join(", ")
    );
    db.execute(&sql, &as_params(&values))?;
    Ok(())
}

/// Inserts snapshot rows of one table in one statement, as `insert_row` would one by one. One
/// statement matters for transactions: the triggers that keep their text index flush it once a
/// statement, and a statement a row made restoring an import of 100,000 take many seconds.
/// Rows whose columns differ from the first's go in one by one.
fn insert_rows(db: &Db<'_>, table: &str, rows: &[Value]) -> Result<()> {
    let Some(Value::Object(first)) = rows.first() else {
        return rows.iter().try_for_each(|row| insert_row(db, table, row));
    };
    let columns: Vec<&str> = first.keys().map(String::as_str).collect();
    let alike = rows.iter().all(|row| {
        row.as_object().is_some_and(|map| {
            map.len() == columns.len() && columns.iter().all(|name| map.contains_key(*name))
        })
    });
    if !alike {
        return rows.iter().try_for_each(|row| insert_row(db, table, row));
    }
    for name in &columns {
        check_column(name)?;
    }
    let sql = match db.dialect() {
        // `->>` reads a JSON value as SQL the way `sql_value` turns it into one.
        Dialect::Sqlite => {
            let values: Vec<String> =
                columns.iter().map(|name| format!("r.value ->> '$.{name}'")).collect();
            format!(
                "INSERT INTO {table} ({}) SELECT {} FROM json_each(?1) r ORDER BY r.key",
                columns.join(", "),
                values.join(", ")
            )
        }
        // Each value is read as its column's type reads text ('1' as a flag, '2026-01-31' as
        // a date).
        Dialect::Postgres => format!(
            "INSERT INTO {table} ({0}) SELECT {0} FROM jsonb_populate_recordset(NULL::{table}, ?1::jsonb) WITH ORDINALITY r ORDER BY r.ordinality",
            columns.join(", ")
        ),
    };
    let json = serde_json::to_string(rows).map_err(|err| StoreError::Corrupt(err.to_string()))?;
    db.execute(&sql, params![json])?;
    Ok(())
}

fn rows_of<'v>(snapshot: &'v Value, part: &str, table: &str) -> &'v [Value] {
    snapshot
        .get(part)
        .and_then(|p| p.get(table))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Brings the entity to `target` (None deletes it): the mechanism behind undo.
pub fn restore(
    db: &Db<'_>,
    household_id: i64,
    entity: &str,
    id: i64,
    target: Option<&Value>,
) -> Result<()> {
    let spec = spec(entity)?;
    let exists = snapshot_in_place(db, household_id, entity, id)?.is_some();
    let Some(target) = target else {
        if exists {
            db.execute(&format!("DELETE FROM {} WHERE id = ?1", spec.table), params![id])?;
        }
        return Ok(());
    };
    let row =
        target.get("row").ok_or_else(|| StoreError::Corrupt("snapshot without a row".into()))?;
    if row.get("id").and_then(Value::as_i64) != Some(id)
        || row.get(spec.household_column).and_then(Value::as_i64) != Some(household_id)
    {
        return Err(StoreError::Corrupt("snapshot of another entity".into()));
    }
    if exists {
        let Value::Object(map) = row else {
            return Err(StoreError::Corrupt("snapshot row is not an object".into()));
        };
        let mut sets = Vec::new();
        let mut values = Vec::new();
        for (name, value) in map {
            if name == "id" || spec.volatile.contains(&name.as_str()) {
                continue;
            }
            check_column(name)?;
            values.push(sql_value(value));
            sets.push(format!("{name} = ?{}", values.len()));
        }
        values.push(SqlValue::Int(id));
        let sql =
            format!("UPDATE {} SET {} WHERE id = ?{}", spec.table, sets.join(", "), values.len());
        db.execute(&sql, &as_params(&values))?;
    } else {
        insert_row(db, spec.table, row)?;
        for (table, _) in spec.kept {
            insert_rows(db, table, rows_of(target, "kept", table))?;
        }
    }
    for (table, fk) in spec.children {
        // A snapshot taken before this table existed says nothing about its rows.
        if target.get("children").and_then(|c| c.get(table)).is_none() {
            continue;
        }
        db.execute(&format!("DELETE FROM {table} WHERE {fk} = ?1"), params![id])?;
        insert_rows(db, table, rows_of(target, "children", table))?;
    }
    Ok(())
}
