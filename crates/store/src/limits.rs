//! What limits count, by kind and key: a count since the start of its window and the last
//! time it grew (`limit_counts`), and paces, when a key's next call is due (`limit_paces`).
//! The rules (which kinds, windows, rates and thresholds) are `app`'s.

use crate::{Db, Result, value::params};

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

/// A steady rate with a burst: one call each `interval_us`, and up to `tolerance_us` of calls
/// ahead of it at once (the generic cell rate algorithm).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pace {
    pub interval_us: i64,
    /// How far ahead of now a key's next due time may be when a call is let through:
    /// `interval_us` times the burst less one.
    pub tolerance_us: i64,
}

impl Pace {
    /// When the next call after one at `now_us` is due, given when it was due (`None`: never
    /// counted); or, when the call is refused, the microseconds to wait.
    pub fn next(self, due: Option<i64>, now_us: i64) -> std::result::Result<i64, i64> {
        let from = due.map_or(now_us, |due| due.max(now_us));
        let ahead = from - now_us;
        if ahead > self.tolerance_us {
            Err(ahead - self.tolerance_us)
        } else {
            Ok(from + self.interval_us)
        }
    }
}

/// Takes one call of `kind` for `key` at `now_us` (microseconds since 1970): `None` when it
/// is let through, else the microseconds to wait. One statement, atomic by itself, so two
/// instances taking calls at once count both: [`Pace::next`], written in SQL.
pub fn take_pace(
    db: &Db<'_>,
    kind: &str,
    key: &str,
    pace: Pace,
    now_us: i64,
) -> Result<Option<i64>> {
    let taken = db.query_opt(
        "INSERT INTO limit_paces (kind, key, due) VALUES (?1, ?2, CAST(?3 AS BIGINT) + CAST(?4 AS BIGINT))
         ON CONFLICT (kind, key) DO UPDATE
         SET due = CASE WHEN limit_paces.due > CAST(?3 AS BIGINT) THEN limit_paces.due ELSE CAST(?3 AS BIGINT) END
                   + CAST(?4 AS BIGINT)
         WHERE CASE WHEN limit_paces.due > CAST(?3 AS BIGINT) THEN limit_paces.due ELSE CAST(?3 AS BIGINT) END
               - CAST(?3 AS BIGINT) <= CAST(?5 AS BIGINT)
         RETURNING due",
        params![kind, key, now_us, pace.interval_us, pace.tolerance_us],
        |row| row.get::<i64>(0),
    )?;
    if taken.is_some() {
        return Ok(None);
    }
    let due = db.query_opt(
        "SELECT due FROM limit_paces WHERE kind = ?1 AND key = ?2",
        params![kind, key],
        |row| row.get::<i64>(0),
    )?;
    // Refused: how long until it would not be (at least a microsecond, should another
    // instance have moved it meanwhile).
    Ok(Some(pace.next(due, now_us).err().unwrap_or(1)))
}

#[cfg(test)]
mod tests {
    use super::Pace;

    #[test]
    fn a_pace_lets_a_burst_through_then_one_each_interval() {
        // One a second, three at once.
        let pace = Pace { interval_us: 1_000_000, tolerance_us: 2_000_000 };
        let mut due = None;
        for _ in 0..3 {
            due = Some(pace.next(due, 0).unwrap());
        }
        assert_eq!(due, Some(3_000_000));
        assert_eq!(pace.next(due, 0), Err(1_000_000));
        assert_eq!(pace.next(due, 400_000), Err(600_000));
        assert_eq!(pace.next(due, 1_000_000), Ok(4_000_000));
        // Long idle: the burst again, never more.
        assert_eq!(pace.next(Some(4_000_000), 60_000_000), Ok(61_000_000));
    }
}
