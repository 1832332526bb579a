//! The names of what a member can see, by kind, for reading a name where an id is expected
//! (`ops::resolve`). Only ids and names: matching happens in `domain::names`.

use domain::entities::EntityKind;

use crate::{Db, Result, value::params};

/// The names in a table whose rows are their owner's alone unless shared with the household.
macro_rules! owned {
    ($table:literal) => {
        concat!(
            "SELECT id, name FROM ",
            $table,
            " WHERE household_id = ?1
             AND (visibility = 'household' OR owner_id = ?2) ORDER BY name COLLATE NOCASE, id"
        )
    };
}

/// The names in a table every member sees.
macro_rules! shared {
    ($table:literal) => {
        concat!(
            "SELECT id, name FROM ",
            $table,
            " WHERE household_id = ?1 AND ?2 IS NOT NULL
             ORDER BY name COLLATE NOCASE, id"
        )
    };
}

/// The payees of the latest `limit` transactions on accounts `viewer` can see, newest first,
/// each once with the ids of its transactions among them, newest first: where a name that is
/// nothing else may be one ("Mercadona"), and what to pass to categorise it.
pub fn recent_payees(
    db: &Db<'_>,
    household_id: i64,
    viewer: i64,
    limit: u32,
) -> Result<Vec<(String, Vec<i64>)>> {
    let rows: Vec<(String, i64)> = db.query_map(
        "SELECT t.payee, t.id FROM transactions t JOIN accounts a ON a.id = t.account_id
         WHERE t.household_id = ?1 AND (a.visibility = 'household' OR a.owner_id = ?2)
         ORDER BY t.on_date DESC, t.id DESC LIMIT ?3",
        params![household_id, viewer, i64::from(limit)],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?;
    let mut payees: Vec<(String, Vec<i64>)> = Vec::new();
    for (payee, id) in rows {
        match payees.iter_mut().find(|(seen, _)| *seen == payee) {
            Some((_, ids)) => ids.push(id),
            None => payees.push((payee, vec![id])),
        }
    }
    Ok(payees)
}

/// Every (id, name) of this kind in the household that `viewer` can see: another member's
/// private subscriptions and payment methods are left out. Kinds without names give none.
pub fn visible(
    db: &Db<'_>,
    household_id: i64,
    viewer: i64,
    kind: EntityKind,
) -> Result<Vec<(i64, String)>> {
    // Every statement binds the viewer, used or not (`?2 IS NOT NULL` where it is not).
    let sql = match kind {
        EntityKind::Subscription => owned!("subscriptions"),
        EntityKind::Category => shared!("categories"),
        EntityKind::PaymentMethod => owned!("payment_methods"),
        EntityKind::Member => {
            "SELECT id, name FROM members WHERE household_id = ?1 AND ?2 IS NOT NULL ORDER BY id"
        }
        EntityKind::Account => owned!("accounts"),
        EntityKind::Label => shared!("labels"),
        EntityKind::Rule => {
            "SELECT r.id, r.name FROM rules r LEFT JOIN accounts a ON a.id = r.account_id
             WHERE r.household_id = ?1
             AND (r.account_id IS NULL OR a.visibility = 'household' OR a.owner_id = ?2)
             ORDER BY r.name COLLATE NOCASE, r.id"
        }
        EntityKind::Budget => shared!("budgets"),
        EntityKind::Charge
        | EntityKind::Transaction
        | EntityKind::Import
        | EntityKind::Household
        | EntityKind::Token
        | EntityKind::Destination
        | EntityKind::BankConnection
        | EntityKind::BankAccount
        | EntityKind::RecurringProposal => return Ok(Vec::new()),
    };
    let rows =
        db.query_map(sql, params![household_id, viewer], |row| Ok((row.get(0)?, row.get(1)?)))?;
    Ok(rows)
}
