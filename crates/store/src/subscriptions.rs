//! Subscriptions with their tags, price points and pauses.
//!
//! Visibility is enforced here in every query that takes a `viewer`: a private subscription
//! exists only for its owner.

use std::collections::HashMap;

use crate::{
    db::{Flow, Row},
    value::{Cache, Param, columns_then, params},
};
use domain::{
    Currency, Cycle, CycleUnit, Date,
    entities::{SubscriptionStatus, Visibility},
};

use crate::{
    Db, Result,
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

fn from_row(row: &Row<'_>) -> Result<SubscriptionRow> {
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
    let mut rows: Vec<SubscriptionRow> =
        db.query_map(&sql, params![household_id, viewer], from_row)?;
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
    let mut row = db.query_row(&sql, params![household_id, viewer, id], from_row)?;
    load_children(db, &mut row)?;
    Ok(row)
}

fn load_children(db: &Db<'_>, row: &mut SubscriptionRow) -> Result<()> {
    row.tags = db.query_map(
        "SELECT tag FROM subscription_tags WHERE subscription_id = ?1 ORDER BY tag COLLATE NOCASE",
        params![row.id],
        |r| r.get(0),
    )?;
    row.prices =
        db.query_map(
            "SELECT effective_on, amount_minor FROM price_points WHERE subscription_id = ?1 ORDER BY effective_on",
            params![row.id],
            |r| Ok((date(r, 0)?, r.get(1)?)),
        )?;
    row.pauses = db.query_map(
        "SELECT id, from_on, until_on FROM pauses WHERE subscription_id = ?1 ORDER BY from_on, id",
        params![row.id],
        |r| {
            Ok(PauseRow {
                id: r.get(0)?,
                from: date(r, "from_on")?,
                until: opt_date(r, "until_on")?,
            })
        },
    )?;
    Ok(())
}

/// What a page of subscriptions can be filtered by in SQL (see [`list_page`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageFilter {
    pub category_id: Option<i64>,
    /// Only subscriptions without a category.
    pub uncategorised: bool,
    /// Only those with this payment method, when the viewer may see it: another member's
    /// private card matches no filter, so its id cannot be probed.
    pub payment_method_id: Option<i64>,
    pub owner_id: Option<i64>,
    pub visibility: Option<Visibility>,
}

/// The orders [`list_page`] can page in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageOrder {
    /// By name ignoring case, then id: as [`list`] returns them.
    Name,
    /// By id, oldest first.
    Created,
}

/// One page of the subscriptions the viewer can see that match `filter`, and how many match
/// in all. Only the page's rows and their children are read, so a page costs the same in a
/// household of any size.
pub fn list_page(
    db: &Db<'_>,
    household_id: i64,
    viewer: Option<i64>,
    filter: &PageFilter,
    order: PageOrder,
    limit: u32,
    offset: u64,
) -> Result<(Vec<SubscriptionRow>, u64)> {
    const MATCHING: &str =
        "s.household_id = ?1 AND (?2 IS NULL OR s.visibility = 'household' OR s.owner_id = ?2)
        AND (?3 IS NULL OR s.category_id = ?3) AND (?4 = 0 OR s.category_id IS NULL)
        AND (?5 IS NULL OR (s.payment_method_id = ?5 AND p.id IS NOT NULL))
        AND (?6 IS NULL OR s.owner_id = ?6) AND (?7 IS NULL OR s.visibility = ?7)";
    let order_by = match order {
        PageOrder::Name => "s.name COLLATE NOCASE, s.id",
        PageOrder::Created => "s.id",
    };
    let visibility = filter.visibility.map(|v| v.as_str());
    let matching = params![
        household_id,
        viewer,
        filter.category_id,
        filter.uncategorised,
        filter.payment_method_id,
        filter.owner_id,
        visibility,
    ];
    let total: u64 = db.query_row(&format!(
            "SELECT count(*) FROM subscriptions s LEFT JOIN payment_methods p ON p.id = s.payment_method_id
             AND (?2 IS NULL OR p.visibility = 'household' OR p.owner_id = ?2) WHERE {MATCHING}"
        ), matching, |r| r.get(0))?;
    let offset = i64::try_from(offset).unwrap_or(i64::MAX);
    let page: Vec<&dyn Param> = matching.iter().chain(params![limit, offset]).copied().collect();
    let sql = format!("{SELECT} WHERE {MATCHING} ORDER BY {order_by} LIMIT ?8 OFFSET ?9");
    let mut rows: Vec<SubscriptionRow> = db.query_map(&sql, &page, from_row)?;
    let ids: Vec<i64> = rows.iter().map(|row| row.id).collect();
    attach(db, &mut rows, &format!("WHERE x.subscription_id {}", db.in_ids(1)), &ids)?;
    Ok((rows, total))
}

/// Loads tags, prices and pauses of many subscriptions with three queries.
fn attach_children(db: &Db<'_>, household_id: i64, rows: &mut [SubscriptionRow]) -> Result<()> {
    attach(
        db,
        rows,
        "JOIN subscriptions s ON s.id = x.subscription_id WHERE s.household_id = ?1",
        &household_id,
    )
}

/// Adds to `rows` the tags, prices and pauses that `which` (a join or condition on the child
/// table `x`, with `param` as `?1`) selects.
fn attach(db: &Db<'_>, rows: &mut [SubscriptionRow], which: &str, param: &dyn Param) -> Result<()> {
    let index: HashMap<i64, usize> = rows.iter().enumerate().map(|(i, row)| (row.id, i)).collect();
    let sql = format!(
        "SELECT x.subscription_id, x.tag FROM subscription_tags x {which} ORDER BY x.tag COLLATE NOCASE"
    );
    db.each(Cache::Keep, &sql, params![param], &mut |r| {
        if let Some(&i) = index.get(&r.get::<i64>(0)?) {
            rows[i].tags.push(r.get(1)?);
        }
        Ok(Flow::Continue)
    })?;
    let sql = format!(
        "SELECT x.subscription_id, x.effective_on, x.amount_minor FROM price_points x {which} ORDER BY x.effective_on"
    );
    db.each(Cache::Keep, &sql, params![param], &mut |r| {
        if let Some(&i) = index.get(&r.get::<i64>(0)?) {
            rows[i].prices.push((date(r, 1)?, r.get(2)?));
        }
        Ok(Flow::Continue)
    })?;
    let sql = format!(
        "SELECT x.subscription_id, x.id, x.from_on, x.until_on FROM pauses x {which} ORDER BY x.from_on, x.id"
    );
    db.each(Cache::Keep, &sql, params![param], &mut |r| {
        if let Some(&i) = index.get(&r.get::<i64>(0)?) {
            rows[i].pauses.push(PauseRow {
                id: r.get(1)?,
                from: date(r, 2)?,
                until: opt_date(r, 3)?,
            });
        }
        Ok(Flow::Continue)
    })?;
    Ok(())
}

/// Runs `write` with the main row's own columns bound as `?1` to `?14` (owner_id to
/// visibility, as `insert` and `update` name them) and `keys` after them, so both writes bind
/// one list.
fn with_columns<T>(
    row: &SubscriptionRow,
    keys: &[&dyn Param],
    write: impl FnOnce(&[&dyn Param]) -> Result<T>,
) -> Result<T> {
    columns_then(
        &[
            &row.owner_id,
            &row.name,
            &row.url,
            &row.notes,
            &row.currency.code(),
            &row.cycle.every(),
            &row.cycle.unit().as_str(),
            &date_text(row.anchor_on),
            &row.status.as_str(),
            &opt_date_text(row.trial_ends_on),
            &opt_date_text(row.ends_on),
            &row.category_id,
            &row.payment_method_id,
            &row.visibility.as_str(),
        ],
        keys,
        write,
    )
}

/// Inserts the main row from `row` (its id, owner_name, category_name, payment_method_name,
/// charged_through and children are ignored) and returns the new id.
pub fn insert(db: &Db<'_>, row: &SubscriptionRow) -> Result<i64> {
    with_columns(row, params![row.household_id, row.created_at, row.updated_at], |params| {
        db.query_row(
            "INSERT INTO subscriptions (owner_id, name, url, notes, currency, cycle_every, cycle_unit,
             anchor_on, status, trial_ends_on, ends_on, category_id, payment_method_id, visibility,
             household_id, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17) RETURNING id",
            params,
            |row| row.get(0),
        )
    })
}

/// Writes the main row's editable columns.
pub fn update(db: &Db<'_>, row: &SubscriptionRow) -> Result<()> {
    with_columns(row, params![row.updated_at, row.household_id, row.id], |params| {
        db.execute_one(
            "UPDATE subscriptions SET owner_id = ?1, name = ?2, url = ?3, notes = ?4, currency = ?5,
             cycle_every = ?6, cycle_unit = ?7, anchor_on = ?8, status = ?9, trial_ends_on = ?10,
             ends_on = ?11, category_id = ?12, payment_method_id = ?13, visibility = ?14,
             updated_at = ?15
             WHERE household_id = ?16 AND id = ?17",
            params,
        )
    })
}

pub fn set_tags(db: &Db<'_>, id: i64, tags: &[String]) -> Result<()> {
    db.execute("DELETE FROM subscription_tags WHERE subscription_id = ?1", params![id])?;
    for tag in tags {
        db.execute(
            "INSERT INTO subscription_tags (subscription_id, tag) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
            params![id, tag],
        )?;
    }
    Ok(())
}

/// Sets the price from a date (replacing a price point on the same date).
pub fn set_price(db: &Db<'_>, id: i64, effective_on: Date, amount_minor: i64) -> Result<()> {
    db.execute(
        "INSERT INTO price_points (subscription_id, effective_on, amount_minor) VALUES (?1, ?2, ?3)
         ON CONFLICT (subscription_id, effective_on) DO UPDATE SET amount_minor = excluded.amount_minor",
        params![id, date_text(effective_on), amount_minor],
    )?;
    Ok(())
}

pub fn add_pause(db: &Db<'_>, id: i64, from: Date, until: Option<Date>) -> Result<()> {
    db.execute(
        "INSERT INTO pauses (subscription_id, from_on, until_on) VALUES (?1, ?2, ?3)",
        params![id, date_text(from), opt_date_text(until)],
    )?;
    Ok(())
}

pub fn set_pause_until(db: &Db<'_>, pause_id: i64, until: Option<Date>) -> Result<()> {
    db.execute(
        "UPDATE pauses SET until_on = ?2 WHERE id = ?1",
        params![pause_id, opt_date_text(until)],
    )?;
    Ok(())
}

pub fn delete_pause(db: &Db<'_>, pause_id: i64) -> Result<()> {
    db.execute("DELETE FROM pauses WHERE id = ?1", params![pause_id])?;
    Ok(())
}

pub fn delete(db: &Db<'_>, household_id: i64, id: i64) -> Result<()> {
    db.execute(
        "DELETE FROM subscriptions WHERE household_id = ?1 AND id = ?2",
        params![household_id, id],
    )?;
    Ok(())
}

pub fn set_charged_through(db: &Db<'_>, id: i64, through: Date) -> Result<()> {
    db.execute(
        "UPDATE subscriptions SET charged_through = ?2 WHERE id = ?1",
        params![id, date_text(through)],
    )?;
    Ok(())
}

/// Moves every subscription of `from_member` to `to_member` (member removal).
pub fn count_private_of(db: &Db<'_>, household_id: i64, member_id: i64) -> Result<i64> {
    db.query_row(
        "SELECT count(*) FROM subscriptions WHERE household_id = ?1 AND owner_id = ?2 AND visibility = 'private'",
        params![household_id, member_id],
        |r| r.get(0),
    )
}
