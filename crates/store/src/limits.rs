//! What limits count, by kind and key (`limit_counts`): a count since the start of its window
//! and the last time it grew. The rules (which kinds, windows and thresholds) are `app`'s.

use crate::{Db, Result, db::params};

/// One key's count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CountRow {
    pub count: u32,
    /// When the count started (RFC 3339).
    pub since: String,
    /// When it last grew, or what a kind keeps there (RFC 3339).
    pub last: String,
}

pub fn get(db: &Db<'_>, kind: &str, key: &str) -> Result<Option<CountRow>> {
    db.query_opt(
        "SELECT count, since, last FROM limit_counts WHERE kind = ?1 AND key = ?2",
        params![kind, key],
        |row| Ok(CountRow { count: row.get(0)?, since: row.get(1)?, last: row.get(2)? }),
    )
}

pub fn set(db: &Db<'_>, kind: &str, key: &str, row: &CountRow) -> Result<()> {
    db.execute(
        "INSERT INTO limit_counts (kind, key, count, since, last) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (kind, key) DO UPDATE SET count = ?3, since = ?4, last = ?5",
        params![kind, key, row.count, row.since, row.last],
    )?;
    Ok(())
}

pub fn remove(db: &Db<'_>, kind: &str, key: &str) -> Result<()> {
    db.execute("DELETE FROM limit_counts WHERE kind = ?1 AND key = ?2", params![kind, key])?;
    Ok(())
}

/// Forgets the counts of a kind that started before `before`.
pub fn forget_before(db: &Db<'_>, kind: &str, before: &str) -> Result<()> {
    db.execute("DELETE FROM limit_counts WHERE kind = ?1 AND since < ?2", params![kind, before])?;
    Ok(())
}
