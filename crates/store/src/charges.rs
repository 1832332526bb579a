//! Recorded charges. A charge is visible when its subscription is.

use crate::{
    db::Row,
    value::{SqlValue, as_params, params},
};
use domain::{
    Currency, Date,
    entities::{ChargeStatus, Visibility},
};

use crate::{
    Db, Result,
    sql::{date, date_text, parsed},
};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChargeRow {
    pub id: i64,
    pub household_id: i64,
    pub subscription_id: i64,
    pub subscription_name: String,
    pub subscription_owner_id: i64,
    pub subscription_visibility: Visibility,
    pub charged_on: Date,
    pub amount_minor: i64,
    pub currency: Currency,
    pub status: ChargeStatus,
    pub note: Option<String>,
}

const SELECT: &str = "SELECT c.*, s.name AS subscription_name, s.owner_id AS subscription_owner_id,
    s.visibility AS subscription_visibility
    FROM charges c JOIN subscriptions s ON s.id = c.subscription_id";

const VISIBLE: &str =
    "c.household_id = ?1 AND (?2 IS NULL OR s.visibility = 'household' OR s.owner_id = ?2)";

fn from_row(row: &Row<'_>) -> Result<ChargeRow> {
    Ok(ChargeRow {
        id: row.get("id")?,
        household_id: row.get("household_id")?,
        subscription_id: row.get("subscription_id")?,
        subscription_name: row.get("subscription_name")?,
        subscription_owner_id: row.get("subscription_owner_id")?,
        subscription_visibility: parsed(row, "subscription_visibility", Visibility::parse)?,
        charged_on: date(row, "charged_on")?,
        amount_minor: row.get("amount_minor")?,
        currency: parsed(row, "currency", |s| Currency::parse(s).ok())?,
        status: parsed(row, "status", ChargeStatus::parse)?,
        note: row.get("note")?,
    })
}

/// Records a charge unless one exists for that subscription and date. Returns the new id.
pub fn insert_if_absent(
    db: &Db<'_>,
    household_id: i64,
    subscription_id: i64,
    charged_on: Date,
    amount_minor: i64,
    currency: Currency,
) -> Result<Option<i64>> {
    db.query_opt(
        "INSERT INTO charges (household_id, subscription_id, charged_on, amount_minor, currency, status)
         VALUES (?1, ?2, ?3, ?4, ?5, 'paid') ON CONFLICT DO NOTHING RETURNING id",
        params![household_id, subscription_id, date_text(charged_on), amount_minor, currency.code()],
        |row| row.get(0),
    )
}

#[derive(Clone, Debug, Default)]
pub struct ChargeFilter {
    pub subscription_id: Option<i64>,
    pub from: Option<Date>,
    pub to: Option<Date>,
    pub status: Option<ChargeStatus>,
}

/// A page of visible charges, newest first, and the total count.
pub fn list(
    db: &Db<'_>,
    household_id: i64,
    viewer: Option<i64>,
    filter: &ChargeFilter,
    limit: u32,
    offset: u64,
) -> Result<(Vec<ChargeRow>, u64)> {
    // Only the filters given go into the SQL, so SQLite can use the (subscription, date)
    // index instead of scanning every charge of the household.
    // With a subscription given, the unary plus keeps SQLite from picking the household index
    // over the far more selective (subscription, date) one.
    let mut condition = if filter.subscription_id.is_some() {
        VISIBLE.replacen("c.household_id", "+c.household_id", 1)
    } else {
        VISIBLE.to_owned()
    };
    let mut args: Vec<SqlValue> = vec![household_id.into(), viewer.into()];
    let mut add = |sql: &str, value: SqlValue| {
        args.push(value);
        condition.push_str(&format!(" AND {sql} ?{}", args.len()));
    };
    if let Some(id) = filter.subscription_id {
        add("c.subscription_id =", id.into());
    }

    if let Some(from) = filter.from {
        add("c.charged_on >=", from.into());
    }
    if let Some(to) = filter.to {
        add("c.charged_on <=", to.into());
    }
    if let Some(status) = filter.status {
        add("c.status =", status.as_str().into());
    }
    let total: i64 = db.query_row(
        &format!("SELECT count(*) FROM charges c JOIN subscriptions s ON s.id = c.subscription_id WHERE {condition}"),
        &as_params(&args),
        |r| r.get(0),
    )?;
    let sql = format!(
        "{SELECT} WHERE {condition} ORDER BY c.charged_on DESC, c.id DESC LIMIT {limit} OFFSET {offset}"
    );
    let rows = db.query_map(&sql, &as_params(&args), from_row)?;
    Ok((rows, total as u64))
}

pub fn get(db: &Db<'_>, household_id: i64, viewer: Option<i64>, id: i64) -> Result<ChargeRow> {
    let sql = format!("{SELECT} WHERE {VISIBLE} AND c.id = ?3");
    db.query_row(&sql, params![household_id, viewer, id], from_row)
}

pub fn update(db: &Db<'_>, row: &ChargeRow) -> Result<()> {
    db.execute_one(
        "UPDATE charges SET amount_minor = ?3, status = ?4, note = ?5 WHERE household_id = ?1 AND id = ?2",
        params![row.household_id, row.id, row.amount_minor, row.status.as_str(), row.note],
    )
}
