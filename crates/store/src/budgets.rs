//! Budgets: their definitions, what they track, their amounts over time, and the spending
//! they count, read from the transactions a member can see.
//!
//! The periods themselves are arithmetic (`domain::budget`); the rules for what may be written
//! live in `app`.

use crate::{
    db::Row,
    value::{SqlValue, as_params, params},
};
use domain::{Currency, Date, budget::BudgetPeriod};

use crate::{
    Db, Result,
    sql::{date, parsed},
};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetRow {
    pub id: i64,
    pub household_id: i64,
    pub name: String,
    pub period: BudgetPeriod,
    pub start_day: i64,
    pub starts_on: Date,
    pub rollover: bool,
    pub catch_all: bool,
    pub currency: Currency,
    /// (id, name), by name.
    pub categories: Vec<(i64, String)>,
    pub labels: Vec<(i64, String)>,
    /// The amount from the period starting on each date on, oldest first.
    pub amounts: Vec<(Date, i64)>,
}

impl BudgetRow {
    /// The amount of the period starting on `first`: the latest set on or before it (the
    /// first one for periods before the budget began).
    pub fn amount_for(&self, first: Date) -> i64 {
        self.amounts
            .iter()
            .rev()
            .find(|(from, _)| *from <= first)
            .or(self.amounts.first())
            .map_or(0, |(_, minor)| *minor)
    }
}

fn budget_from_row(row: &Row<'_>) -> Result<BudgetRow> {
    Ok(BudgetRow {
        id: row.get("id")?,
        household_id: row.get("household_id")?,
        name: row.get("name")?,
        period: parsed(row, "period", BudgetPeriod::parse)?,
        start_day: row.get("start_day")?,
        starts_on: date(row, "starts_on")?,
        rollover: row.get("rollover")?,
        catch_all: row.get("catch_all")?,
        currency: parsed(row, "currency", |code| Currency::parse(code).ok())?,
        categories: Vec::new(),
        labels: Vec::new(),
        amounts: Vec::new(),
    })
}

fn attach(db: &Db<'_>, row: &mut BudgetRow) -> Result<()> {
    let named = |sql: &str| -> Result<Vec<(i64, String)>> {
        let rows = db.query_map(sql, params![row.id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows)
    };
    row.categories = named(
        "SELECT c.id, c.name FROM budget_categories b JOIN categories c ON c.id = b.category_id
         WHERE b.budget_id = ?1 ORDER BY c.name COLLATE NOCASE, c.id",
    )?;
    row.labels = named(
        "SELECT l.id, l.name FROM budget_labels b JOIN labels l ON l.id = b.label_id
         WHERE b.budget_id = ?1 ORDER BY l.name COLLATE NOCASE, l.id",
    )?;
    row.amounts = db.query_map(
        "SELECT from_date, amount_minor FROM budget_amounts WHERE budget_id = ?1 ORDER BY from_date",
        params![row.id],
        |r| Ok((date(r, 0)?, r.get(1)?)),
    )?;
    Ok(())
}

/// The household's budgets, by name.
pub fn list_budgets(db: &Db<'_>, household_id: i64) -> Result<Vec<BudgetRow>> {
    let mut rows: Vec<BudgetRow> = db.query_map(
        "SELECT * FROM budgets WHERE household_id = ?1 ORDER BY name COLLATE NOCASE, id",
        params![household_id],
        budget_from_row,
    )?;
    for row in &mut rows {
        attach(db, row)?;
    }
    Ok(rows)
}

pub fn get_budget(db: &Db<'_>, household_id: i64, id: i64) -> Result<BudgetRow> {
    let mut row = db.query_row(
        "SELECT * FROM budgets WHERE household_id = ?1 AND id = ?2",
        params![household_id, id],
        budget_from_row,
    )?;
    attach(db, &mut row)?;
    Ok(row)
}

/// The id of the budget with this name, ignoring case.
pub fn find_budget(db: &Db<'_>, household_id: i64, name: &str) -> Result<Option<i64>> {
    db.query_opt(
        "SELECT id FROM budgets WHERE household_id = ?1 AND nocase(name) = nocase(?2)",
        params![household_id, name],
        |r| r.get(0),
    )
}

/// The household's catch-all budget, when it has one.
pub fn catch_all_budget(db: &Db<'_>, household_id: i64) -> Result<Option<(i64, String)>> {
    db.query_opt(
        "SELECT id, name FROM budgets WHERE household_id = ?1 AND catch_all = 1",
        params![household_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// Writes a new budget with what it tracks and its first amount.
pub fn insert_budget(db: &Db<'_>, row: &BudgetRow, now: &str) -> Result<i64> {
    let id: i64 = db.query_row(
        "INSERT INTO budgets (household_id, name, period, start_day, starts_on, rollover, catch_all, currency, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING id",
        params![
            row.household_id,
            row.name,
            row.period.as_str(),
            row.start_day,
            row.starts_on.to_string(),
            row.rollover,
            row.catch_all,
            row.currency.code(),
            now
        ],
        |row| row.get(0),
    )?;
    for (category, _) in &row.categories {
        db.execute(
            "INSERT INTO budget_categories (budget_id, category_id) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
            params![id, category],
        )?;
    }
    for (label, _) in &row.labels {
        db.execute(
            "INSERT INTO budget_labels (budget_id, label_id) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
            params![id, label],
        )?;
    }
    for (from, minor) in &row.amounts {
        set_amount(db, id, *from, *minor)?;
    }
    Ok(id)
}

pub fn rename_budget(db: &Db<'_>, household_id: i64, id: i64, name: &str) -> Result<()> {
    db.execute_one(
        "UPDATE budgets SET name = ?3 WHERE household_id = ?1 AND id = ?2",
        params![household_id, id, name],
    )
}

/// Sets the amount from the period starting `from` on, dropping later changes it overrides.
pub fn set_amount(db: &Db<'_>, budget_id: i64, from: Date, minor: i64) -> Result<()> {
    db.execute(
        "DELETE FROM budget_amounts WHERE budget_id = ?1 AND from_date > ?2",
        params![budget_id, from.to_string()],
    )?;
    db.execute(
        "INSERT INTO budget_amounts (budget_id, from_date, amount_minor) VALUES (?1, ?2, ?3)
         ON CONFLICT (budget_id, from_date) DO UPDATE SET amount_minor = excluded.amount_minor",
        params![budget_id, from.to_string(), minor],
    )?;
    Ok(())
}

pub fn delete_budget(db: &Db<'_>, household_id: i64, id: i64) -> Result<()> {
    db.execute(
        "DELETE FROM budgets WHERE household_id = ?1 AND id = ?2",
        params![household_id, id],
    )?;
    Ok(())
}

/// Ids of the budgets tracking a category (deleting it changes them).
pub fn budgets_tracking_category(db: &Db<'_>, category_id: i64) -> Result<Vec<i64>> {
    ids(
        db,
        "SELECT budget_id FROM budget_categories WHERE category_id = ?1 ORDER BY 1",
        category_id,
    )
}

/// Ids of the budgets tracking a label.
pub fn budgets_tracking_label(db: &Db<'_>, label_id: i64) -> Result<Vec<i64>> {
    ids(db, "SELECT budget_id FROM budget_labels WHERE label_id = ?1 ORDER BY 1", label_id)
}

fn ids(db: &Db<'_>, sql: &str, id: i64) -> Result<Vec<i64>> {
    let ids = db.query_map(sql, params![id], |r| r.get(0))?;
    Ok(ids)
}

/// What a budget counts on each day from `from` to `to`, signed as transactions are (money
/// out negative), per currency, over the transactions `viewer` can see. Transfers between the
/// household's accounts are never counted. A category budget counts what its categories and
/// labels hold, refunds included (a transaction once, however many it matches; of a split
/// transaction, the parts in its categories); the catch-all counts every payment out.
pub fn spending_by_day(
    db: &Db<'_>,
    viewer: i64,
    budget: &BudgetRow,
    from: Date,
    to: Date,
) -> Result<Vec<(Date, Currency, i64)>> {
    // Ids are integers the budget holds; written in, like a search's labels.
    let list = |ids: &[(i64, String)]| {
        if ids.is_empty() {
            "NULL".to_owned()
        } else {
            ids.iter().map(|(id, _)| id.to_string()).collect::<Vec<_>>().join(", ")
        }
    };
    let (categories, labels) = (list(&budget.categories), list(&budget.labels));
    let counted = if budget.catch_all {
        "t.amount_minor".to_owned()
    } else {
        format!(
            "CASE WHEN EXISTS (SELECT 1 FROM transaction_labels tl WHERE tl.transaction_id = t.id AND tl.label_id IN ({labels}))
                THEN t.amount_minor
             WHEN EXISTS (SELECT 1 FROM transaction_splits s WHERE s.transaction_id = t.id)
                THEN (SELECT coalesce(sum(s.amount_minor), 0) FROM transaction_splits s
                      WHERE s.transaction_id = t.id AND s.category_id IN ({categories}))
             WHEN t.category_id IN ({categories}) THEN t.amount_minor
             ELSE 0 END"
        )
    };
    let tracked = if budget.catch_all {
        "t.amount_minor < 0".to_owned()
    } else {
        format!(
            "(t.category_id IN ({categories})
              OR t.id IN (SELECT s.transaction_id FROM transaction_splits s WHERE s.category_id IN ({categories}))
              OR t.id IN (SELECT tl.transaction_id FROM transaction_labels tl WHERE tl.label_id IN ({labels})))"
        )
    };
    let sql = format!(
        "SELECT t.on_date, t.currency, sum({counted}) FROM transactions t
         WHERE t.household_id = ?1 AND t.on_date >= ?3 AND t.on_date <= ?4 AND t.transfer_id IS NULL
           AND t.account_id IN (SELECT v.id FROM accounts v
               WHERE v.household_id = ?1 AND (v.visibility = 'household' OR v.owner_id = ?2))
           AND {tracked}
         GROUP BY t.on_date, t.currency ORDER BY t.on_date"
    );
    let values: Vec<SqlValue> = vec![
        budget.household_id.into(),
        viewer.into(),
        from.to_string().into(),
        to.to_string().into(),
    ];
    let rows = db.query_map_once(&sql, &as_params(&values), |row| {
        Ok((date(row, 0)?, parsed(row, 1, |code| Currency::parse(code).ok())?, row.get::<i64>(2)?))
    })?;
    Ok(rows.into_iter().filter(|(_, _, sum)| *sum != 0).collect())
}

/// Moves what a budget tracks from one category to another (None: stops tracking it).
pub fn move_tracked_category(
    db: &Db<'_>,
    budget_id: i64,
    from: i64,
    to: Option<i64>,
) -> Result<()> {
    db.execute(
        "DELETE FROM budget_categories WHERE budget_id = ?1 AND category_id = ?2",
        params![budget_id, from],
    )?;
    if let Some(to) = to {
        db.execute(
            "INSERT INTO budget_categories (budget_id, category_id) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
            params![budget_id, to],
        )?;
    }
    Ok(())
}

/// Stops a budget tracking a label.
pub fn untrack_label(db: &Db<'_>, budget_id: i64, label_id: i64) -> Result<()> {
    db.execute(
        "DELETE FROM budget_labels WHERE budget_id = ?1 AND label_id = ?2",
        params![budget_id, label_id],
    )?;
    Ok(())
}
