//! Sums over the transactions and balances a member can see, for reports: spending per
//! category, money in and out per day, and what each account held. Transfers between the
//! household's accounts are left out of spending and cashflow; converting currencies and
//! grouping days into periods happen in `app`.

use crate::value::{SqlValue, as_params, params};
use domain::{Currency, Date, entities::AccountKind};

use crate::{
    Db, Result,
    sql::{date, parsed},
};

/// The transactions (not transfers) `viewer` sees between two days, on one account or all.
const IN_RANGE: &str = "t.household_id = ?1 AND t.on_date >= ?3 AND t.on_date <= ?4
    AND t.transfer_id IS NULL
    AND t.account_id IN (SELECT v.id FROM accounts v
        WHERE v.household_id = ?1 AND (v.visibility = 'household' OR v.owner_id = ?2))
    AND (?5 IS NULL OR t.account_id = ?5)";

fn range_values(
    household_id: i64,
    viewer: i64,
    from: Date,
    to: Date,
    account: Option<i64>,
) -> Vec<SqlValue> {
    vec![
        household_id.into(),
        viewer.into(),
        from.to_string().into(),
        to.to_string().into(),
        account.into(),
    ]
}

/// One category's spending in one currency.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CategoryTotal {
    pub category: Option<(i64, String)>,
    pub currency: Currency,
    /// Signed sum: money out is negative.
    pub sum: i64,
    pub transactions: u64,
}

/// Per category and currency: money out and refunds into a category (a split transaction by
/// its parts); money in without a category is income and left out.
pub fn category_totals(
    db: &Db<'_>,
    household_id: i64,
    viewer: i64,
    from: Date,
    to: Date,
    account: Option<i64>,
) -> Result<Vec<CategoryTotal>> {
    let sql = format!(
        "SELECT p.category_id, c.name, p.currency, sum(p.amount), count(DISTINCT p.id) FROM (
           SELECT t.id, t.category_id, t.currency, t.amount_minor AS amount FROM transactions t
           WHERE {IN_RANGE} AND NOT EXISTS (SELECT 1 FROM transaction_splits s WHERE s.transaction_id = t.id)
           UNION ALL
           SELECT t.id, s.category_id, t.currency, s.amount_minor FROM transaction_splits s
           JOIN transactions t ON t.id = s.transaction_id WHERE {IN_RANGE}
         ) p LEFT JOIN categories c ON c.id = p.category_id
         WHERE p.amount < 0 OR p.category_id IS NOT NULL
         GROUP BY p.category_id, c.name, p.currency"
    );
    let rows = db.query_map(
        &sql,
        &as_params(&range_values(household_id, viewer, from, to, account)),
        |row| {
            let category = match row.get::<Option<i64>>(0)? {
                Some(id) => Some((id, row.get::<Option<String>>(1)?.unwrap_or_default())),
                None => None,
            };
            Ok(CategoryTotal {
                category,
                currency: parsed(row, 2, |code| Currency::parse(code).ok())?,
                sum: row.get(3)?,
                transactions: row.get::<i64>(4)? as u64,
            })
        },
    )?;
    Ok(rows)
}

/// Money in and money out (negative) per day and currency.
pub fn daily_flows(
    db: &Db<'_>,
    household_id: i64,
    viewer: i64,
    from: Date,
    to: Date,
) -> Result<Vec<(Date, Currency, i64, i64)>> {
    let sql = format!(
        "SELECT t.on_date, t.currency,
           sum(CASE WHEN t.amount_minor > 0 THEN t.amount_minor ELSE 0 END),
           sum(CASE WHEN t.amount_minor < 0 THEN t.amount_minor ELSE 0 END)
         FROM transactions t WHERE {IN_RANGE}
         GROUP BY t.on_date, t.currency ORDER BY t.on_date"
    );
    let rows = db.query_map(
        &sql,
        &as_params(&range_values(household_id, viewer, from, to, None)),
        |row| {
            Ok((
                date(row, 0)?,
                parsed(row, 1, |code| Currency::parse(code).ok())?,
                row.get(2)?,
                row.get(3)?,
            ))
        },
    )?;
    Ok(rows)
}

/// An account as net worth reads it: its recorded balances and its transactions per day,
/// transfers included (they move money between accounts), both oldest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountHistory {
    pub id: i64,
    pub name: String,
    pub kind: AccountKind,
    pub currency: Currency,
    pub balances: Vec<(Date, i64)>,
    pub daily: Vec<(Date, i64)>,
}

/// Every account `viewer` sees, archived ones too, with its whole history (a day before a
/// balance recorded later is worked back from it).
pub fn account_histories(
    db: &Db<'_>,
    household_id: i64,
    viewer: i64,
) -> Result<Vec<AccountHistory>> {
    let mut accounts: Vec<AccountHistory> = db.query_map(
        "SELECT id, name, kind, currency FROM accounts
         WHERE household_id = ?1 AND (visibility = 'household' OR owner_id = ?2)
         ORDER BY name COLLATE NOCASE, id",
        params![household_id, viewer],
        |row| {
            Ok(AccountHistory {
                id: row.get(0)?,
                name: row.get(1)?,
                kind: parsed(row, 2, AccountKind::parse)?,
                currency: parsed(row, 3, |code| Currency::parse(code).ok())?,
                balances: Vec::new(),
                daily: Vec::new(),
            })
        },
    )?;
    for account in &mut accounts {
        account.balances = db.query_map(
            "SELECT on_date, amount_minor FROM account_balances WHERE account_id = ?1 ORDER BY on_date",
            params![account.id],
            |row| Ok((date(row, 0)?, row.get(1)?)),
        )?;
        account.daily = db.query_map(
            "SELECT on_date, sum(amount_minor) FROM transactions WHERE account_id = ?1
         GROUP BY on_date ORDER BY on_date",
            params![account.id],
            |row| Ok((date(row, 0)?, row.get(1)?)),
        )?;
    }
    Ok(accounts)
}

impl AccountHistory {
    /// What the account held at the end of `day`: the latest balance recorded on or before it
    /// with the transactions since; before the first record, that record less the transactions
    /// between; with no record at all, its transactions from nothing.
    pub fn balance_on(&self, day: Date) -> i64 {
        let moved = |after: Option<Date>, through: Date| -> i64 {
            self.daily
                .iter()
                .filter(|(on, _)| after.is_none_or(|a| *on > a) && *on <= through)
                .map(|(_, sum)| *sum)
                .sum()
        };
        if let Some((on, amount)) = self.balances.iter().rev().find(|(on, _)| *on <= day) {
            return amount + moved(Some(*on), day);
        }
        if let Some((on, amount)) = self.balances.first() {
            return amount - moved(Some(day), *on);
        }
        moved(None, day)
    }
}
