//! Categories, payment methods and tags.

use crate::{db::Row, value::params};
use domain::entities::{PaymentMethodKind, Visibility};

use crate::{Db, Result, sql::parsed};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CategoryRow {
    pub id: i64,
    pub household_id: i64,
    pub name: String,
    pub emoji: String,
    pub colour: String,
    /// Subscriptions in it that the viewer can see.
    pub subscription_count: u64,
}

fn category_from_row(row: &Row<'_>) -> Result<CategoryRow> {
    Ok(CategoryRow {
        id: row.get("id")?,
        household_id: row.get("household_id")?,
        name: row.get("name")?,
        emoji: row.get("emoji")?,
        colour: row.get("colour")?,
        subscription_count: row.get::<i64>("subscription_count")? as u64,
    })
}

const CATEGORY_SELECT: &str = "SELECT c.*, (SELECT count(*) FROM subscriptions s WHERE s.category_id = c.id
    AND (?2 IS NULL OR s.visibility = 'household' OR s.owner_id = ?2)) AS subscription_count FROM categories c";

pub fn list_categories(
    db: &Db<'_>,
    household_id: i64,
    viewer: Option<i64>,
) -> Result<Vec<CategoryRow>> {
    let sql =
        format!("{CATEGORY_SELECT} WHERE c.household_id = ?1 ORDER BY c.name COLLATE NOCASE, c.id");
    let rows = db.query_map(&sql, params![household_id, viewer], category_from_row)?;
    Ok(rows)
}

pub fn get_category(
    db: &Db<'_>,
    household_id: i64,
    viewer: Option<i64>,
    id: i64,
) -> Result<CategoryRow> {
    let sql = format!("{CATEGORY_SELECT} WHERE c.household_id = ?1 AND c.id = ?3");
    db.query_row(&sql, params![household_id, viewer, id], category_from_row)
}

/// The id of the category with this name, ignoring case.
pub fn find_category(db: &Db<'_>, household_id: i64, name: &str) -> Result<Option<i64>> {
    db.query_opt(
        "SELECT id FROM categories WHERE household_id = ?1 AND nocase(name) = nocase(?2)",
        params![household_id, name],
        |r| r.get(0),
    )
}

pub fn insert_category(
    db: &Db<'_>,
    household_id: i64,
    name: &str,
    emoji: &str,
    colour: &str,
    now: &str,
) -> Result<i64> {
    let id: i64 = db.query_row(
        "INSERT INTO categories (household_id, name, emoji, colour, created_at) VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id",
        params![household_id, name, emoji, colour, now],
        |row| row.get(0),
    )?;
    Ok(id)
}

pub fn update_category(db: &Db<'_>, row: &CategoryRow) -> Result<()> {
    db.execute_one(
        "UPDATE categories SET name = ?3, emoji = ?4, colour = ?5 WHERE household_id = ?1 AND id = ?2",
        params![row.household_id, row.id, row.name, row.emoji, row.colour],
    )
}

pub fn delete_category(db: &Db<'_>, household_id: i64, id: i64) -> Result<()> {
    db.execute(
        "DELETE FROM categories WHERE household_id = ?1 AND id = ?2",
        params![household_id, id],
    )?;
    Ok(())
}

/// Ids of every subscription (visible or not) in a category.
pub fn subscriptions_in_category(db: &Db<'_>, category_id: i64) -> Result<Vec<i64>> {
    let ids = db.query_map(
        "SELECT id FROM subscriptions WHERE category_id = ?1 ORDER BY id",
        params![category_id],
        |r| r.get(0),
    )?;
    Ok(ids)
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PaymentMethodRow {
    pub id: i64,
    pub household_id: i64,
    pub owner_id: i64,
    pub owner_name: String,
    pub name: String,
    pub kind: PaymentMethodKind,
    pub last4: Option<String>,
    /// "YYYY-MM".
    pub expires: Option<String>,
    pub visibility: Visibility,
    pub subscription_count: u64,
}

const PAYMENT_SELECT: &str = "SELECT p.*, m.name AS owner_name, (SELECT count(*) FROM subscriptions s
    WHERE s.payment_method_id = p.id AND (?2 IS NULL OR s.visibility = 'household' OR s.owner_id = ?2))
    AS subscription_count FROM payment_methods p JOIN members m ON m.id = p.owner_id";
const PAYMENT_VISIBLE: &str =
    "p.household_id = ?1 AND (?2 IS NULL OR p.visibility = 'household' OR p.owner_id = ?2)";

fn payment_from_row(row: &Row<'_>) -> Result<PaymentMethodRow> {
    Ok(PaymentMethodRow {
        id: row.get("id")?,
        household_id: row.get("household_id")?,
        owner_id: row.get("owner_id")?,
        owner_name: row.get("owner_name")?,
        name: row.get("name")?,
        kind: parsed(row, "kind", PaymentMethodKind::parse)?,
        last4: row.get("last4")?,
        expires: row.get("expires")?,
        visibility: parsed(row, "visibility", Visibility::parse)?,
        subscription_count: row.get::<i64>("subscription_count")? as u64,
    })
}

pub fn list_payment_methods(
    db: &Db<'_>,
    household_id: i64,
    viewer: Option<i64>,
) -> Result<Vec<PaymentMethodRow>> {
    let sql =
        format!("{PAYMENT_SELECT} WHERE {PAYMENT_VISIBLE} ORDER BY p.name COLLATE NOCASE, p.id");
    let rows = db.query_map(&sql, params![household_id, viewer], payment_from_row)?;
    Ok(rows)
}

pub fn get_payment_method(
    db: &Db<'_>,
    household_id: i64,
    viewer: Option<i64>,
    id: i64,
) -> Result<PaymentMethodRow> {
    let sql = format!("{PAYMENT_SELECT} WHERE {PAYMENT_VISIBLE} AND p.id = ?3");
    db.query_row(&sql, params![household_id, viewer, id], payment_from_row)
}

pub fn insert_payment_method(db: &Db<'_>, row: &PaymentMethodRow, now: &str) -> Result<i64> {
    let id: i64 = db.query_row(
        "INSERT INTO payment_methods (household_id, owner_id, name, kind, last4, expires, visibility, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id",
        params![row.household_id, row.owner_id, row.name, row.kind.as_str(), row.last4, row.expires, row.visibility.as_str(), now],
        |row| row.get(0),
    )?;
    Ok(id)
}

pub fn update_payment_method(db: &Db<'_>, row: &PaymentMethodRow) -> Result<()> {
    db.execute_one(
        "UPDATE payment_methods SET owner_id = ?3, name = ?4, kind = ?5, last4 = ?6, expires = ?7, visibility = ?8
         WHERE household_id = ?1 AND id = ?2",
        params![
            row.household_id,
            row.id,
            row.owner_id,
            row.name,
            row.kind.as_str(),
            row.last4,
            row.expires,
            row.visibility.as_str()
        ],
    )
}

pub fn delete_payment_method(db: &Db<'_>, household_id: i64, id: i64) -> Result<()> {
    db.execute(
        "DELETE FROM payment_methods WHERE household_id = ?1 AND id = ?2",
        params![household_id, id],
    )?;
    Ok(())
}

/// Ids of every subscription (visible or not) paid with a payment method.
pub fn subscriptions_with_payment_method(db: &Db<'_>, payment_method_id: i64) -> Result<Vec<i64>> {
    let ids = db.query_map(
        "SELECT id FROM subscriptions WHERE payment_method_id = ?1 ORDER BY id",
        params![payment_method_id],
        |r| r.get(0),
    )?;
    Ok(ids)
}

/// Ids of payment methods owned by a member.
pub fn payment_methods_of(db: &Db<'_>, household_id: i64, member_id: i64) -> Result<Vec<i64>> {
    let ids = db.query_map(
        "SELECT id FROM payment_methods WHERE household_id = ?1 AND owner_id = ?2 ORDER BY id",
        params![household_id, member_id],
        |r| r.get(0),
    )?;
    Ok(ids)
}

/// Tags on subscriptions the viewer can see, with counts, ordered by name ignoring case.
pub fn list_tags(
    db: &Db<'_>,
    household_id: i64,
    viewer: Option<i64>,
) -> Result<Vec<(String, u64)>> {
    let rows = db.query_map(
        "SELECT min(t.tag COLLATE BINARY), count(*) FROM subscription_tags t JOIN subscriptions s ON s.id = t.subscription_id
         WHERE s.household_id = ?1 AND (?2 IS NULL OR s.visibility = 'household' OR s.owner_id = ?2)
         GROUP BY t.tag COLLATE NOCASE ORDER BY t.tag COLLATE NOCASE",
        params![household_id, viewer],
        |r| Ok((r.get(0)?, r.get::<i64>(1)? as u64)),
    )?;
    Ok(rows)
}

/// Ids of subscriptions the viewer can see that carry a tag (ignoring case).
pub fn subscriptions_with_tag(
    db: &Db<'_>,
    household_id: i64,
    viewer: Option<i64>,
    tag: &str,
) -> Result<Vec<i64>> {
    let ids = db.query_map(
        "SELECT s.id FROM subscription_tags t JOIN subscriptions s ON s.id = t.subscription_id
         WHERE s.household_id = ?1 AND (?2 IS NULL OR s.visibility = 'household' OR s.owner_id = ?2)
         AND nocase(t.tag) = nocase(?3) ORDER BY s.id",
        params![household_id, viewer, tag],
        |r| r.get(0),
    )?;
    Ok(ids)
}
