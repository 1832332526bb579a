//! The connection every query runs on, inside a transaction, on either database.
//!
//! The other modules write SQL once, in SQLite's spelling with numbered `?N` placeholders, and
//! run it through [`Db`]'s few methods: they bind [`Param`]s and read [`Row`]s the same way on
//! SQLite and on PostgreSQL. What PostgreSQL spells differently is translated once per
//! statement (see `postgres_session::translate`); what cannot be translated is written twice and
//! chosen with [`Db::pick`].

use std::cell::RefCell;

use crate::{
    Result, StoreError,
    postgres_session::Session,
    value::{Cache, Column, Param, Value, params},
};

/// The database engine under a [`Db`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// A connection inside a transaction, handed to the closures of `Store::read` and
/// `Store::write`. Only this crate can see the connection.
pub struct Db<'a> {
    pub(crate) conn: Conn<'a>,
}

pub(crate) enum Conn<'a> {
    Sqlite(&'a rusqlite::Connection),
    Postgres(Box<RefCell<Session>>),
}

impl<'a> Db<'a> {
    pub fn dialect(&self) -> Dialect {
        match self.conn {
            Conn::Sqlite(_) => Dialect::Sqlite,
            Conn::Postgres(_) => Dialect::Postgres,
        }
    }

    /// The statement written for this database, where the two cannot share one.
    pub(crate) fn pick<'s>(&self, sqlite: &'s str, postgres: &'s str) -> &'s str {
        match self.dialect() {
            Dialect::Sqlite => sqlite,
            Dialect::Postgres => postgres,
        }
    }

    /// `IN` the list of ids bound at `?{n}` (a [`Value::Ints`]), as each database reads one.
    pub(crate) fn in_ids(&self, n: usize) -> String {
        match self.dialect() {
            Dialect::Sqlite => format!("IN (SELECT value FROM json_each(?{n}))"),
            Dialect::Postgres => format!("= ANY(?{n})"),
        }
    }

    /// Asks for the tables a transaction search in `household_id` reads to be vacuumed and
    /// their statistics renewed once this write commits (PostgreSQL; SQLite needs neither).
    pub(crate) fn tidy_after_commit(&self, household_id: i64) {
        if let Conn::Postgres(session) = &self.conn {
            session.borrow_mut().tidy_after = Some(household_id);
        }
    }

    /// Sends `payload` on `channel` to every instance's listeners (`Store::listen`) when this
    /// write commits; nothing when it rolls back. SQLite has no other instance to tell.
    pub fn notify(&self, channel: &str, payload: &str) -> Result<()> {
        match self.dialect() {
            Dialect::Sqlite => Ok(()),
            Dialect::Postgres => {
                self.execute("SELECT pg_notify(?1, ?2)", params![channel, payload]).map(drop)
            }
        }
    }

    /// Runs a statement that returns no rows; how many rows it changed.
    pub(crate) fn execute(&self, sql: &str, params: &[&dyn Param]) -> Result<usize> {
        self.execute_with(Cache::Keep, sql, params)
    }

    /// Runs a statement that changes the one row it names: [`StoreError::NotFound`] when it
    /// changed none (no such row in the household).
    pub(crate) fn execute_one(&self, sql: &str, params: &[&dyn Param]) -> Result<()> {
        match self.execute(sql, params)? {
            0 => Err(StoreError::NotFound),
            _ => Ok(()),
        }
    }

    fn execute_with(&self, cache: Cache, sql: &str, params: &[&dyn Param]) -> Result<usize> {
        match &self.conn {
            Conn::Sqlite(conn) => {
                let values = sqlite_values(params);
                let changed = match cache {
                    Cache::Keep => conn.prepare_cached(sql)?.execute(values)?,
                    Cache::Once => conn.prepare(sql)?.execute(values)?,
                };
                Ok(changed)
            }
            Conn::Postgres(session) => session.borrow_mut().execute(cache, sql, params),
        }
    }

    /// The first row's value, or [`StoreError::NotFound`] when there is none.
    pub(crate) fn query_row<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        f: impl FnOnce(&Row<'_>) -> Result<T>,
    ) -> Result<T> {
        self.query_opt(sql, params, f)?.ok_or(StoreError::NotFound)
    }

    /// The first row's value, if there is a row.
    pub(crate) fn query_opt<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        f: impl FnOnce(&Row<'_>) -> Result<T>,
    ) -> Result<Option<T>> {
        let mut f = Some(f);
        let mut value = None;
        self.each(Cache::Keep, sql, params, &mut |row| {
            if let Some(f) = f.take() {
                value = Some(f(row)?);
            }
            Ok(Flow::Stop)
        })?;
        Ok(value)
    }

    /// Whether the statement returns any row.
    pub(crate) fn exists(&self, sql: &str, params: &[&dyn Param]) -> Result<bool> {
        Ok(self.query_opt(sql, params, |_| Ok(()))?.is_some())
    }

    /// Every row's value, in the statement's order.
    pub(crate) fn query_map<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        f: impl FnMut(&Row<'_>) -> Result<T>,
    ) -> Result<Vec<T>> {
        self.query_map_with(Cache::Keep, sql, params, f)
    }

    /// [`Db::query_map`] for a statement whose text is made for this call.
    pub(crate) fn query_map_once<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        f: impl FnMut(&Row<'_>) -> Result<T>,
    ) -> Result<Vec<T>> {
        self.query_map_with(Cache::Once, sql, params, f)
    }

    fn query_map_with<T>(
        &self,
        cache: Cache,
        sql: &str,
        params: &[&dyn Param],
        mut f: impl FnMut(&Row<'_>) -> Result<T>,
    ) -> Result<Vec<T>> {
        let mut values = Vec::new();
        self.each(cache, sql, params, &mut |row| {
            values.push(f(row)?);
            Ok(Flow::Continue)
        })?;
        Ok(values)
    }

    /// Calls `f` with each row, for as long as it says to go on.
    pub(crate) fn each(
        &self,
        cache: Cache,
        sql: &str,
        params: &[&dyn Param],
        f: &mut dyn FnMut(&Row<'_>) -> Result<Flow>,
    ) -> Result<()> {
        match &self.conn {
            Conn::Sqlite(conn) => {
                let values = sqlite_values(params);
                let mut cached;
                let mut once;
                let statement: &mut rusqlite::Statement<'_> = match cache {
                    Cache::Keep => {
                        cached = conn.prepare_cached(sql)?;
                        &mut cached
                    }
                    Cache::Once => {
                        once = conn.prepare(sql)?;
                        &mut once
                    }
                };
                let mut rows = statement.query(values)?;
                while let Some(row) = rows.next()? {
                    if f(&Row::Sqlite(row))? == Flow::Stop {
                        break;
                    }
                }
                Ok(())
            }
            Conn::Postgres(session) => {
                // The rows are read whole before `f` sees them, so `f` may query again.
                let rows = session.borrow_mut().query(cache, sql, params)?;
                for row in &rows {
                    if f(&Row::Postgres(row))? == Flow::Stop {
                        break;
                    }
                }
                Ok(())
            }
        }
    }
}

/// Whether [`Db::each`] reads on.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    Stop,
}

fn sqlite_values<'p>(
    params: &'p [&dyn Param],
) -> rusqlite::ParamsFromIter<impl Iterator<Item = Value<'p>>> {
    rusqlite::params_from_iter(params.iter().map(|param| param.value()))
}

/// One row of a result.
pub(crate) enum Row<'r> {
    Sqlite(&'r rusqlite::Row<'r>),
    Postgres(&'r postgres::Row),
}

impl Row<'_> {
    /// The column's value as `T`; a column is named by position or by name.
    pub(crate) fn get<T: Column>(&self, column: impl ColumnIndex) -> Result<T> {
        let index = column.index(self)?;
        let value = self.value(index)?;
        T::from_value(value).ok_or_else(|| {
            StoreError::Corrupt(format!(
                "column {} holds {value:?}, not a {}",
                self.name(index),
                std::any::type_name::<T>()
            ))
        })
    }

    pub(crate) fn column_count(&self) -> usize {
        match self {
            Self::Sqlite(row) => row.as_ref().column_count(),
            Self::Postgres(row) => row.len(),
        }
    }

    pub(crate) fn name(&self, index: usize) -> &str {
        match self {
            Self::Sqlite(row) => row.as_ref().column_name(index).unwrap_or("?"),
            Self::Postgres(row) => row.columns().get(index).map_or("?", |c| c.name()),
        }
    }

    /// The column's value as the database holds it.
    pub(crate) fn value(&self, index: usize) -> Result<Value<'_>> {
        match self {
            Self::Sqlite(row) => {
                use rusqlite::types::ValueRef;
                Ok(match row.get_ref(index)? {
                    ValueRef::Null => Value::Null,
                    ValueRef::Integer(i) => Value::Int(i),
                    ValueRef::Real(f) => Value::Real(f),
                    ValueRef::Text(t) => Value::Text(std::str::from_utf8(t).map_err(|_| {
                        StoreError::Corrupt(format!("column {} is not UTF-8", self.name(index)))
                    })?),
                    ValueRef::Blob(b) => Value::Blob(b),
                })
            }
            Self::Postgres(row) => crate::postgres_session::value(row, index),
        }
    }
}

/// How a column is named: by position (`usize`) or by name (`&str`).
pub(crate) trait ColumnIndex {
    fn index(&self, row: &Row<'_>) -> Result<usize>;
}

impl ColumnIndex for usize {
    fn index(&self, _: &Row<'_>) -> Result<usize> {
        Ok(*self)
    }
}

impl ColumnIndex for &str {
    fn index(&self, row: &Row<'_>) -> Result<usize> {
        let found = match row {
            Row::Sqlite(row) => row.as_ref().column_index(self).ok(),
            Row::Postgres(row) => row.columns().iter().position(|c| c.name() == *self),
        };
        found.ok_or_else(|| StoreError::Corrupt(format!("no column named {self}")))
    }
}

impl Db<'_> {
    /// Every row of every table, in a stable order, for comparing database content
    /// (dry-run tests). Timestamps of token use are included: a dry run must not touch them.
    /// A token's pace (`limit_paces`) is not: every call counts against its rate, a dry run
    /// too, whatever becomes of the call.
    pub fn logical_dump(&self) -> Result<String> {
        let tables = self.query_map(
            self.pick(
                // Ordinary tables only: a full-text index's own tables hold how it is stored,
                // not what it holds, which its content table already shows.
                "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'limit_paces' ORDER BY name",
                // A partitioned table's rows once, under its own name, not again in its parts.
                "SELECT c.relname::text FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition AND c.relname <> 'limit_paces' ORDER BY 1",
            ),
            params![],
            |row| row.get::<String>(0),
        )?;
        let mut out = String::new();
        for name in tables {
            out.push_str(&format!("## {name}\n"));
            self.each(
                Cache::Once,
                &format!("SELECT * FROM \"{name}\" ORDER BY 1, 2"),
                params![],
                &mut |row| {
                    let values: Vec<String> = (0..row.column_count())
                        .map(|i| row.value(i).map(|value| value.dump()))
                        .collect::<Result<_>>()?;
                    out.push_str(&values.join(" | "));
                    out.push('\n');
                    Ok(Flow::Continue)
                },
            )?;
        }
        Ok(out)
    }
}
