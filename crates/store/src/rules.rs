//! Rules: conditions a transaction may meet and what to do with one that does. Matching is a
//! transaction search (`ledger::TransactionFilter`), so a rule finds exactly what a search
//! with the same conditions finds; what a rule may hold is checked in `app`.

use crate::{
    db::Row,
    value::{Param, columns_then, params},
};

use crate::{Db, Result};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuleRow {
    pub id: i64,
    pub household_id: i64,
    pub name: String,
    pub payee_contains: Option<String>,
    pub description_contains: Option<String>,
    pub min_milli: Option<i64>,
    pub max_milli: Option<i64>,
    /// (id, name).
    pub account: Option<(i64, String)>,
    pub set_category: Option<(i64, String)>,
    /// (id, name), by name.
    pub labels: Vec<(i64, String)>,
}

const RULE_SELECT: &str = "SELECT r.*, a.name AS account_name, c.name AS category_name
    FROM rules r LEFT JOIN accounts a ON a.id = r.account_id
    LEFT JOIN categories c ON c.id = r.set_category_id";

fn rule_from_row(row: &Row<'_>) -> Result<RuleRow> {
    let named = |id: Option<i64>, name: Option<String>| id.map(|id| (id, name.unwrap_or_default()));
    Ok(RuleRow {
        id: row.get("id")?,
        household_id: row.get("household_id")?,
        name: row.get("name")?,
        payee_contains: row.get("payee_contains")?,
        description_contains: row.get("description_contains")?,
        min_milli: row.get("min_milli")?,
        max_milli: row.get("max_milli")?,
        account: named(row.get("account_id")?, row.get("account_name")?),
        set_category: named(row.get("set_category_id")?, row.get("category_name")?),
        labels: Vec::new(),
    })
}

fn attach_labels(db: &Db<'_>, row: &mut RuleRow) -> Result<()> {
    row.labels = db.query_map(
        "SELECT l.id, l.name FROM rule_labels r JOIN labels l ON l.id = r.label_id
         WHERE r.rule_id = ?1 ORDER BY l.name COLLATE NOCASE, l.id",
        params![row.id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(())
}

/// The household's rules, by name. A rule on another member's private account is the
/// owner's: `viewer` sees only rules on accounts it can see, or on none.
pub fn list_rules(db: &Db<'_>, household_id: i64, viewer: i64) -> Result<Vec<RuleRow>> {
    let sql = format!(
        "{RULE_SELECT} WHERE r.household_id = ?1
         AND (r.account_id IS NULL OR a.visibility = 'household' OR a.owner_id = ?2)
         ORDER BY r.name COLLATE NOCASE, r.id"
    );
    let mut rows: Vec<RuleRow> =
        db.query_map(&sql, params![household_id, viewer], rule_from_row)?;
    for row in &mut rows {
        attach_labels(db, row)?;
    }
    Ok(rows)
}

pub fn get_rule(db: &Db<'_>, household_id: i64, viewer: i64, id: i64) -> Result<RuleRow> {
    let sql = format!(
        "{RULE_SELECT} WHERE r.household_id = ?1 AND r.id = ?3
         AND (r.account_id IS NULL OR a.visibility = 'household' OR a.owner_id = ?2)"
    );
    let mut row = db.query_row(&sql, params![household_id, viewer, id], rule_from_row)?;
    attach_labels(db, &mut row)?;
    Ok(row)
}

/// The id of the rule with this name, ignoring case.
pub fn find_rule(db: &Db<'_>, household_id: i64, name: &str) -> Result<Option<i64>> {
    db.query_opt(
        "SELECT id FROM rules WHERE household_id = ?1 AND nocase(name) = nocase(?2)",
        params![household_id, name],
        |r| r.get(0),
    )
}

fn write_labels(db: &Db<'_>, rule_id: i64, labels: &[(i64, String)]) -> Result<()> {
    db.execute("DELETE FROM rule_labels WHERE rule_id = ?1", params![rule_id])?;
    for (label, _) in labels {
        db.execute(
            "INSERT INTO rule_labels (rule_id, label_id) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
            params![rule_id, label],
        )?;
    }
    Ok(())
}

/// Runs `write` with a rule's own columns bound as `?1` to `?7` (name to set_category_id, as
/// `insert_rule` and `update_rule` name them) and `keys` after them, so both writes bind one
/// list.
fn with_columns<T>(
    row: &RuleRow,
    keys: &[&dyn Param],
    write: impl FnOnce(&[&dyn Param]) -> Result<T>,
) -> Result<T> {
    columns_then(
        &[
            &row.name,
            &row.payee_contains,
            &row.description_contains,
            &row.min_milli,
            &row.max_milli,
            &row.account.as_ref().map(|(id, _)| id),
            &row.set_category.as_ref().map(|(id, _)| id),
        ],
        keys,
        write,
    )
}

pub fn insert_rule(db: &Db<'_>, row: &RuleRow, now: &str) -> Result<i64> {
    let id: i64 = with_columns(row, params![row.household_id, now], |params| {
        db.query_row(
            "INSERT INTO rules (name, payee_contains, description_contains, min_milli, max_milli,
               account_id, set_category_id, household_id, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING id",
            params,
            |row| row.get(0),
        )
    })?;
    write_labels(db, id, &row.labels)?;
    Ok(id)
}

pub fn update_rule(db: &Db<'_>, row: &RuleRow) -> Result<()> {
    with_columns(row, params![row.household_id, row.id], |params| {
        db.execute_one(
            "UPDATE rules SET name = ?1, payee_contains = ?2, description_contains = ?3, min_milli = ?4,
               max_milli = ?5, account_id = ?6, set_category_id = ?7
             WHERE household_id = ?8 AND id = ?9",
            params,
        )
    })?;
    write_labels(db, row.id, &row.labels)
}

pub fn delete_rule(db: &Db<'_>, household_id: i64, id: i64) -> Result<()> {
    db.execute("DELETE FROM rules WHERE household_id = ?1 AND id = ?2", params![household_id, id])?;
    Ok(())
}

fn ids(db: &Db<'_>, sql: &str, id: i64) -> Result<Vec<i64>> {
    let ids = db.query_map(sql, params![id], |r| r.get(0))?;
    Ok(ids)
}

/// Ids of the rules that set a category (deleting it changes them).
pub fn rules_setting_category(db: &Db<'_>, category_id: i64) -> Result<Vec<i64>> {
    ids(db, "SELECT id FROM rules WHERE set_category_id = ?1 ORDER BY id", category_id)
}

/// Ids of the rules that add a label.
pub fn rules_adding_label(db: &Db<'_>, label_id: i64) -> Result<Vec<i64>> {
    ids(db, "SELECT rule_id FROM rule_labels WHERE label_id = ?1 ORDER BY 1", label_id)
}

/// Names of the rules whose condition is an account (it cannot be deleted while they are).
pub fn rules_on_account(db: &Db<'_>, account_id: i64) -> Result<Vec<String>> {
    let names = db.query_map(
        "SELECT name FROM rules WHERE account_id = ?1 ORDER BY name COLLATE NOCASE",
        params![account_id],
        |r| r.get(0),
    )?;
    Ok(names)
}

/// Points a rule that sets one category at another (None: it sets none).
pub fn move_set_category(db: &Db<'_>, rule_id: i64, to: Option<i64>) -> Result<()> {
    db.execute("UPDATE rules SET set_category_id = ?2 WHERE id = ?1", params![rule_id, to])?;
    Ok(())
}

/// Stops a rule adding a label.
pub fn drop_label(db: &Db<'_>, rule_id: i64, label_id: i64) -> Result<()> {
    db.execute(
        "DELETE FROM rule_labels WHERE rule_id = ?1 AND label_id = ?2",
        params![rule_id, label_id],
    )?;
    Ok(())
}
