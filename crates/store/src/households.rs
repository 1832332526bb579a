//! Households, their exchange rates, and members.

use crate::{db::Row, value::params};
use domain::{
    Currency,
    entities::{Role, WeekStart},
};

use crate::{Db, Result, sql::parsed};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HouseholdRow {
    pub id: i64,
    pub name: String,
    pub currency: Currency,
    pub time_zone: String,
    pub language: String,
    pub week_start: WeekStart,
    pub reminder_days_before: i64,
    /// Whether connected apps may be given the `trusted` scope (an owner's setting).
    pub trusted_apps: bool,
    /// RFC 3339 UTC: when the household was set up, and its records begin.
    pub created_at: String,
}

fn household_from_row(row: &Row<'_>) -> Result<HouseholdRow> {
    Ok(HouseholdRow {
        id: row.get("id")?,
        name: row.get("name")?,
        currency: parsed(row, "currency", |s| Currency::parse(s).ok())?,
        time_zone: row.get("time_zone")?,
        language: row.get("language")?,
        week_start: parsed(row, "week_start", WeekStart::parse)?,
        reminder_days_before: row.get("reminder_days_before")?,
        trusted_apps: row.get("trusted_apps")?,
        created_at: row.get("created_at")?,
    })
}

pub fn insert_household(
    db: &Db<'_>,
    name: &str,
    currency: Currency,
    time_zone: &str,
    language: &str,
    now: &str,
) -> Result<i64> {
    let id: i64 = db.query_row(
        "INSERT INTO households (name, currency, time_zone, language, created_at) VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id",
        params![name, currency.code(), time_zone, language, now],
        |row| row.get(0),
    )?;
    Ok(id)
}

pub fn get_household(db: &Db<'_>, id: i64) -> Result<HouseholdRow> {
    db.query_row("SELECT * FROM households WHERE id = ?1", params![id], household_from_row)
}

pub fn household_ids(db: &Db<'_>) -> Result<Vec<i64>> {
    let ids = db.query_map("SELECT id FROM households ORDER BY id", params![], |row| row.get(0))?;
    Ok(ids)
}

pub fn update_household(db: &Db<'_>, row: &HouseholdRow) -> Result<()> {
    db.execute(
        "UPDATE households SET name = ?2, currency = ?3, time_zone = ?4, language = ?5, week_start = ?6,
         reminder_days_before = ?7, trusted_apps = ?8 WHERE id = ?1",
        params![
            row.id,
            row.name,
            row.currency.code(),
            row.time_zone,
            row.language,
            row.week_start.as_str(),
            row.reminder_days_before,
            row.trusted_apps
        ],
    )?;
    Ok(())
}

/// Exchange rates as (currency, millionths of the main currency per unit), by currency.
pub fn exchange_rates(db: &Db<'_>, household_id: i64) -> Result<Vec<(Currency, i64)>> {
    let rows = db.query_map(
        "SELECT currency, rate_micros FROM exchange_rates WHERE household_id = ?1 ORDER BY currency",
        params![household_id],
        |row| {
            Ok((parsed(row, "currency", |s| Currency::parse(s).ok())?, row.get(1)?))
        },
    )?;
    Ok(rows)
}

pub fn set_exchange_rate(
    db: &Db<'_>,
    household_id: i64,
    currency: Currency,
    rate_micros: Option<i64>,
) -> Result<()> {
    match rate_micros {
        Some(rate) => db.execute(
            "INSERT INTO exchange_rates (household_id, currency, rate_micros) VALUES (?1, ?2, ?3)
             ON CONFLICT (household_id, currency) DO UPDATE SET rate_micros = excluded.rate_micros",
            params![household_id, currency.code(), rate],
        )?,
        None => db.execute(
            "DELETE FROM exchange_rates WHERE household_id = ?1 AND currency = ?2",
            params![household_id, currency.code()],
        )?,
    };
    Ok(())
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberRow {
    pub id: i64,
    pub household_id: i64,
    pub name: String,
    pub email: String,
    pub role: Role,
    /// Their own language, or empty while they follow the household's.
    pub language: String,
    /// False while an invited member has not set a password.
    pub has_password: bool,
}

fn member_from_row(row: &Row<'_>) -> Result<MemberRow> {
    Ok(MemberRow {
        id: row.get("id")?,
        household_id: row.get("household_id")?,
        name: row.get("name")?,
        email: row.get("email")?,
        role: parsed(row, "role", Role::parse)?,
        language: row.get("language")?,
        has_password: row.get::<Option<String>>("password_hash")?.is_some(),
    })
}

pub struct NewMember<'a> {
    pub household_id: i64,
    pub name: &'a str,
    pub email: &'a str,
    pub role: Role,
    pub language: &'a str,
    pub password_hash: Option<&'a str>,
    pub invite_hash: Option<&'a str>,
    pub invite_expires_at: Option<&'a str>,
}

pub fn insert_member(db: &Db<'_>, member: &NewMember<'_>, now: &str) -> Result<i64> {
    let id: i64 = db.query_row(
        "INSERT INTO members (household_id, name, email, role, language, password_hash, invite_hash,
         invite_expires_at, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING id",
        params![
            member.household_id,
            member.name,
            member.email,
            member.role.as_str(),
            member.language,
            member.password_hash,
            member.invite_hash,
            member.invite_expires_at,
            now
        ],
        |row| row.get(0),
    )?;
    Ok(id)
}

pub fn get_member(db: &Db<'_>, household_id: i64, id: i64) -> Result<MemberRow> {
    db.query_row(
        "SELECT * FROM members WHERE household_id = ?1 AND id = ?2",
        params![household_id, id],
        member_from_row,
    )
}

pub fn list_members(db: &Db<'_>, household_id: i64) -> Result<Vec<MemberRow>> {
    let rows = db.query_map(
        "SELECT * FROM members WHERE household_id = ?1 ORDER BY id",
        params![household_id],
        member_from_row,
    )?;
    Ok(rows)
}

/// The member with this email and their password hash, in any household (sign-in).
pub fn find_member_by_email(
    db: &Db<'_>,
    email: &str,
) -> Result<Option<(MemberRow, Option<String>)>> {
    db.query_opt(
        db.pick(
            "SELECT * FROM members WHERE email = ?1",
            "SELECT * FROM members WHERE nocase(email) = nocase(?1)",
        ),
        params![email],
        |row| Ok((member_from_row(row)?, row.get("password_hash")?)),
    )
}

pub fn email_taken(db: &Db<'_>, email: &str) -> Result<bool> {
    db.exists(
        db.pick(
            "SELECT 1 FROM members WHERE email = ?1",
            "SELECT 1 FROM members WHERE nocase(email) = nocase(?1)",
        ),
        params![email],
    )
}

pub fn update_member(db: &Db<'_>, row: &MemberRow) -> Result<()> {
    db.execute_one(
        "UPDATE members SET name = ?3, role = ?4, language = ?5 WHERE household_id = ?1 AND id = ?2",
        params![row.household_id, row.id, row.name, row.role.as_str(), row.language],
    )
}

/// Sets a member's password and spends any invitation they had.
pub fn set_password(db: &Db<'_>, member_id: i64, password_hash: &str) -> Result<()> {
    db.execute(
        "UPDATE members SET password_hash = ?2, invite_hash = NULL, invite_expires_at = NULL WHERE id = ?1",
        params![member_id, password_hash],
    )?;
    Ok(())
}

pub fn delete_member(db: &Db<'_>, household_id: i64, id: i64) -> Result<()> {
    db.execute(
        "DELETE FROM members WHERE household_id = ?1 AND id = ?2",
        params![household_id, id],
    )?;
    Ok(())
}

/// What a household has a cap on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counted {
    Subscriptions,
    Categories,
    PaymentMethods,
    Members,
    /// Tokens not revoked.
    Tokens,
    Accounts,
    Labels,
    Transactions,
    Budgets,
    Rules,
}

/// How many of `what` the household has.
pub fn count(db: &Db<'_>, household_id: i64, what: Counted) -> Result<i64> {
    let sql = match what {
        Counted::Subscriptions => "SELECT count(*) FROM subscriptions WHERE household_id = ?1",
        Counted::Categories => "SELECT count(*) FROM categories WHERE household_id = ?1",
        Counted::PaymentMethods => "SELECT count(*) FROM payment_methods WHERE household_id = ?1",
        Counted::Members => "SELECT count(*) FROM members WHERE household_id = ?1",
        Counted::Accounts => "SELECT count(*) FROM accounts WHERE household_id = ?1",
        Counted::Labels => "SELECT count(*) FROM labels WHERE household_id = ?1",
        Counted::Budgets => "SELECT count(*) FROM budgets WHERE household_id = ?1",
        Counted::Rules => "SELECT count(*) FROM rules WHERE household_id = ?1",
        Counted::Transactions => "SELECT count(*) FROM transactions WHERE household_id = ?1",
        Counted::Tokens => {
            "SELECT count(*) FROM tokens WHERE household_id = ?1 AND kind = 'api' AND revoked_at IS NULL"
        }
    };
    db.query_row(sql, params![household_id], |row| row.get(0))
}

pub fn count_owners(db: &Db<'_>, household_id: i64) -> Result<i64> {
    db.query_row(
        "SELECT count(*) FROM members WHERE household_id = ?1 AND role = 'owner'",
        params![household_id],
        |row| row.get(0),
    )
}

/// Whether any member exists at all (the CLI and `serve` explain setup when none does).
pub fn any_member(db: &Db<'_>) -> Result<bool> {
    db.exists("SELECT 1 FROM members LIMIT 1", params![])
}

/// Every owner in the instance (the CLI acts as the sole owner when there is one).
pub fn owners(db: &Db<'_>) -> Result<Vec<MemberRow>> {
    let rows = db.query_map(
        "SELECT * FROM members WHERE role = 'owner' ORDER BY id",
        params![],
        member_from_row,
    )?;
    Ok(rows)
}

/// The invited member whose one-time code hashes to `invite_hash`, unless it expired by `now`.
pub fn find_member_by_invite(
    db: &Db<'_>,
    invite_hash: &str,
    now: &str,
) -> Result<Option<MemberRow>> {
    db.query_opt(
        "SELECT * FROM members WHERE invite_hash = ?1 AND (invite_expires_at IS NULL OR invite_expires_at > ?2)",
        params![invite_hash, now],
        member_from_row,
    )
}

/// The member's password hash, if they have set a password.
pub fn password_hash(db: &Db<'_>, member_id: i64) -> Result<Option<String>> {
    Ok(db
        .query_opt("SELECT password_hash FROM members WHERE id = ?1", params![member_id], |row| {
            row.get(0)
        })?
        .flatten())
}
