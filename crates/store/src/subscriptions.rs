//! Subscriptions with their tags, price points and pauses.
//!
//! Visibility is enforced here in every query that takes a `viewer`: a private subscription
//! exists only for its owner.

use std::collections::HashMap;

use domain::{
    Currency, Cycle, CycleUnit, Date,
    entities::{SubscriptionStatus, Visibility},
};
use rusqlite::params;

use crate::{
    Db, Result, StoreError,
    sql::{date, date_text, opt_date, opt_date_text, parsed},
};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PauseRow {
    pub id: i64,
    pub from: Date,
    pub until: Option<Date>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubscriptionRow {
    pub id: i64,
    pub household_id: i64,
    pub owner_id: i64,
    pub owner_name: String,
    pub name: String,
    pub url: Option<String>,
    pub notes: Option<String>,
    pub currency: Currency,
    pub cycle: Cycle,
    pub anchor_on: Date,
    pub status: SubscriptionStatus,
    pub trial_ends_on: Option<Date>,
    pub ends_on: Option<Date>,
    pub category_id: Option<i64>,
    pub category_name: Option<String>,
    /// Kept even when the viewer may not see the payment method, so writes preserve it.
    pub payment_method_id: Option<i64>,
    /// None when the viewer may not see the payment method (another member's private card).
    pub payment_method_name: Option<String>,
    pub visibility: Visibility,
    pub charged_through: Option<Date>,
    pub created_at: String,
    pub updated_at: String,
    /// Sorted case-insensitively.
    pub tags: Vec<String>,
    /// (effective_on, amount in minor units), oldest first.
    pub prices: Vec<(Date, i64)>,
    /// Oldest first.
    pub pauses: Vec<PauseRow>,
}

// Columns by position: reading by name costs a search per value, which showed in profiles.
const SELECT: &str = "SELECT s.id, s.household_id, s.owner_id, m.name, s.name, s.url, s.notes, s.currency,
    s.cycle_every, s.cycle_unit, s.anchor_on, s.status, s.trial_ends_on, s.ends_on, s.category_id, c.name,
    s.payment_method_id, p.name, s.visibility, s.charged_through, s.created_at, s.updated_at
    FROM subscriptions s
    JOIN members m ON m.id = s.owner_id
    LEFT JOIN categories c ON c.id = s.category_id
    LEFT JOIN payment_methods p ON p.id = s.payment_method_id
        AND (?2 IS NULL OR p.visibility = 'household' OR p.owner_id = ?2)";

fn from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<SubscriptionRow> {
    let every: i64 = row.get(8)?;
    let unit = parsed(row, 9, CycleUnit::parse)?;
    Ok(SubscriptionRow {
        id: row.get(0)?,
        household_id: row.get(1)?,
        owner_id: row.get(2)?,
        owner_name: row.get(3)?,
        name: row.get(4)?,
        url: row.get(5)?,
        notes: row.get(6)?,
        currency: parsed(row, 7, |s| Currency::parse(s).ok())?,
        cycle: Cycle::new(every, unit).map_err(|err| {
            rusqlite::Error::FromSqlConversionFailure(
                8,
                rusqlite::types::Type::Integer,
                Box::new(err),
            )
        })?,
        anchor_on: date(row, 10)?,
        status: parsed(row, 11, SubscriptionStatus::parse)?,
        trial_ends_on: opt_date(row, 12)?,
        ends_on: opt_date(row, 13)?,
        category_id: row.get(14)?,
        category_name: row.get(15)?,
        payment_method_id: row.get(16)?,
        payment_method_name: row.get(17)?,
        visibility: parsed(row, 18, Visibility::parse)?,
        charged_through: opt_date(row, 19)?,
        created_at: row.get(20)?,
        updated_at: row.get(21)?,
        tags: Vec::new(),
        prices: Vec::new(),
        pauses: Vec::new(),
    })
}

/// Every subscription the viewer can see (all of them when `viewer` is None: the system).
pub fn list(db: &Db<'_>, household_id: i64, viewer: Option<i64>) -> Result<Vec<SubscriptionRow>> {
    let sql = format!(
        "{SELECT} WHERE s.household_id = ?1 AND (?2 IS NULL OR s.visibility = 'household' OR s.owner_id = ?2)
         ORDER BY s.name COLLATE NOCASE, s.id"
    );
    let mut stmt = db.conn.prepare_cached(&sql)?;
    let mut rows: Vec<SubscriptionRow> =
        stmt.query_map(params![household_id, viewer], from_row)?.collect::<Result<_, _>>()?;
    attach_children(db, household_id, &mut rows)?;
    Ok(rows)
}

/// One subscription, if the viewer can see it.
pub fn get(
    db: &Db<'_>,
    household_id: i64,
    viewer: Option<i64>,
    id: i64,
) -> Result<SubscriptionRow> {
    let sql = format!(
        "{SELECT} WHERE s.household_id = ?1 AND s.id = ?3
         AND (?2 IS NULL OR s.visibility = 'household' OR s.owner_id = ?2)"
    );
    let mut row =
        db.conn.prepare_cached(&sql)?.query_row(params![household_id, viewer, id], from_row)?;
    load_children(db, &mut row)?;
    Ok(row)
}

fn load_children(db: &Db<'_>, row: &mut SubscriptionRow) -> Result<()> {
    let mut stmt = db.conn.prepare_cached(
        "SELECT tag FROM subscription_tags WHERE subscription_id = ?1 ORDER BY tag COLLATE NOCASE",
    )?;
    row.tags = stmt.query_map([row.id], |r| r.get(0))?.collect::<Result<_, _>>()?;
    let mut stmt = db.conn.prepare_cached(
        "SELECT effective_on, amount_minor FROM price_points WHERE subscription_id = ?1 ORDER BY effective_on",
    )?;
    row.prices =
        stmt.query_map([row.id], |r| Ok((date(r, 0)?, r.get(1)?)))?.collect::<Result<_, _>>()?;
    let mut stmt = db.conn.prepare_cached(
        "SELECT id, from_on, until_on FROM pauses WHERE subscription_id = ?1 ORDER BY from_on, id",
    )?;
    row.pauses = stmt
        .query_map([row.id], |r| {
            Ok(PauseRow {
                id: r.get(0)?,
                from: date(r, "from_on")?,
                until: opt_date(r, "until_on")?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(())
}

/// Loads tags, prices and pauses of many subscriptions with three queries.
fn attach_children(db: &Db<'_>, household_id: i64, rows: &mut [SubscriptionRow]) -> Result<()> {
    let index: HashMap<i64, usize> = rows.iter().enumerate().map(|(i, row)| (row.id, i)).collect();
    let mut stmt = db.conn.prepare_cached(
        "SELECT t.subscription_id, t.tag FROM subscription_tags t JOIN subscriptions s ON s.id = t.subscription_id
         WHERE s.household_id = ?1 ORDER BY t.tag COLLATE NOCASE",
    )?;
    let mut result = stmt.query([household_id])?;
    while let Some(r) = result.next()? {
        if let Some(&i) = index.get(&r.get::<_, i64>(0)?) {
            rows[i].tags.push(r.get(1)?);
        }
    }
    let mut stmt = db.conn.prepare_cached(
        "SELECT p.subscription_id, p.effective_on, p.amount_minor FROM price_points p
         JOIN subscriptions s ON s.id = p.subscription_id WHERE s.household_id = ?1 ORDER BY p.effective_on",
    )?;
    let mut result = stmt.query([household_id])?;
    while let Some(r) = result.next()? {
        if let Some(&i) = index.get(&r.get::<_, i64>(0)?) {
            rows[i].prices.push((date(r, 1)?, r.get(2)?));
        }
    }
    let mut stmt = db.conn.prepare_cached(
        "SELECT p.subscription_id, p.id, p.from_on, p.until_on FROM pauses p
         JOIN subscriptions s ON s.id = p.subscription_id WHERE s.household_id = ?1 ORDER BY p.from_on, p.id",
    )?;
    let mut result = stmt.query([household_id])?;
    while let Some(r) = result.next()? {
        if let Some(&i) = index.get(&r.get::<_, i64>(0)?) {
            rows[i].pauses.push(PauseRow {
                id: r.get(1)?,
                from: date(r, "from_on")?,
                until: opt_date(r, "until_on")?,
            });
        }
    }
    Ok(())
}

/// Inserts the main row from `row` (its id, owner_name, category_name, payment_method_name,
/// charged_through and children are ignored) and returns the new id.
pub fn insert(db: &Db<'_>, row: &SubscriptionRow) -> Result<i64> {
    db.conn.execute(
        "INSERT INTO subscriptions (household_id, owner_id, name, url, notes, currency, cycle_every, cycle_unit,
         anchor_on, status, trial_ends_on, ends_on, category_id, payment_method_id, visibility, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
        params![
            row.household_id,
            row.owner_id,
            row.name,
            row.url,
            row.notes,
            row.currency.code(),
            row.cycle.every(),
            row.cycle.unit().as_str(),
            date_text(row.anchor_on),
            row.status.as_str(),
            opt_date_text(row.trial_ends_on),
            opt_date_text(row.ends_on),
            row.category_id,
            row.payment_method_id,
            row.visibility.as_str(),
            row.created_at,
            row.updated_at,
        ],
    )?;
    Ok(db.conn.last_insert_rowid())
}

/// Writes the main row's editable columns.
pub fn update(db: &Db<'_>, row: &SubscriptionRow) -> Result<()> {
    let changed = db.conn.execute(
        "UPDATE subscriptions SET owner_id = ?3, name = ?4, url = ?5, notes = ?6, currency = ?7, cycle_every = ?8,
         cycle_unit = ?9, anchor_on = ?10, status = ?11, trial_ends_on = ?12, ends_on = ?13, category_id = ?14,
         payment_method_id = ?15, visibility = ?16, updated_at = ?17
         WHERE household_id = ?1 AND id = ?2",
        params![
            row.household_id,
            row.id,
            row.owner_id,
            row.name,
            row.url,
            row.notes,
            row.currency.code(),
            row.cycle.every(),
            row.cycle.unit().as_str(),
            date_text(row.anchor_on),
            row.status.as_str(),
            opt_date_text(row.trial_ends_on),
            opt_date_text(row.ends_on),
            row.category_id,
            row.payment_method_id,
            row.visibility.as_str(),
            row.updated_at,
        ],
    )?;
    if changed == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

pub fn set_tags(db: &Db<'_>, id: i64, tags: &[String]) -> Result<()> {
    db.conn.execute("DELETE FROM subscription_tags WHERE subscription_id = ?1", [id])?;
    let mut stmt = db.conn.prepare_cached(
        "INSERT OR IGNORE INTO subscription_tags (subscription_id, tag) VALUES (?1, ?2)",
    )?;
    for tag in tags {
        stmt.execute(params![id, tag])?;
    }
    Ok(())
}

/// Sets the price from a date (replacing a price point on the same date).
pub fn set_price(db: &Db<'_>, id: i64, effective_on: Date, amount_minor: i64) -> Result<()> {
    db.conn.execute(
        "INSERT INTO price_points (subscription_id, effective_on, amount_minor) VALUES (?1, ?2, ?3)
         ON CONFLICT (subscription_id, effective_on) DO UPDATE SET amount_minor = excluded.amount_minor",
        params![id, date_text(effective_on), amount_minor],
    )?;
    Ok(())
}

pub fn add_pause(db: &Db<'_>, id: i64, from: Date, until: Option<Date>) -> Result<()> {
    db.conn.execute(
        "INSERT INTO pauses (subscription_id, from_on, until_on) VALUES (?1, ?2, ?3)",
        params![id, date_text(from), opt_date_text(until)],
    )?;
    Ok(())
}

pub fn set_pause_until(db: &Db<'_>, pause_id: i64, until: Option<Date>) -> Result<()> {
    db.conn.execute(
        "UPDATE pauses SET until_on = ?2 WHERE id = ?1",
        params![pause_id, opt_date_text(until)],
    )?;
    Ok(())
}

pub fn delete_pause(db: &Db<'_>, pause_id: i64) -> Result<()> {
    db.conn.execute("DELETE FROM pauses WHERE id = ?1", [pause_id])?;
    Ok(())
}

pub fn delete(db: &Db<'_>, household_id: i64, id: i64) -> Result<()> {
    db.conn.execute(
        "DELETE FROM subscriptions WHERE household_id = ?1 AND id = ?2",
        params![household_id, id],
    )?;
    Ok(())
}

pub fn set_charged_through(db: &Db<'_>, id: i64, through: Date) -> Result<()> {
    db.conn.execute(
        "UPDATE subscriptions SET charged_through = ?2 WHERE id = ?1",
        params![id, date_text(through)],
    )?;
    Ok(())
}

/// Moves every subscription of `from_member` to `to_member` (member removal).
pub fn count_private_of(db: &Db<'_>, household_id: i64, member_id: i64) -> Result<i64> {
    Ok(db
        .conn
        .prepare_cached(
            "SELECT count(*) FROM subscriptions WHERE household_id = ?1 AND owner_id = ?2 AND visibility = 'private'",
        )?
        .query_row([household_id, member_id], |r| r.get(0))?)
}
