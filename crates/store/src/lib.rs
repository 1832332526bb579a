//! Storage on embedded SQLite or on PostgreSQL: the only crate that knows SQL.
//!
//! [`Store`] is one database: a SQLite file (one writer, a few read-only readers, WAL mode) or
//! a PostgreSQL database (a pool of connections). Callers run closures over a [`Db`] inside a
//! transaction: [`Store::read`] over one snapshot, [`Store::write`] one writer at a time,
//! committed or rolled back as the caller decides (that is how dry runs work). The modules hold
//! the queries per aggregate and map rows to plain structs; business rules live in `app`, not
//! here.
//!
//! Layers, lowest first: `error` (`StoreError`), `sql` (value helpers), `db` (the connection and its values),
//! `sqlite` and `postgres` (the two engines), `migrations`, `copy` (SQLite into PostgreSQL),
//! then the modules per aggregate.

mod copy;
mod db;
mod endpoint;
mod error;
mod migrations;
mod postgres;
mod postgres_session;
mod sql;
mod sqlite;
#[cfg(test)]
mod upgrade_tests;
mod value;

pub mod access;
pub mod assistant;
pub mod audit;
pub mod banks;
pub mod budgets;
pub mod channels;
pub mod charges;
pub mod households;
pub mod ledger;
pub mod ledger_reports;
pub mod limits;
pub mod names;
pub mod oauth;
pub mod organise;
pub mod rules;
pub mod snapshot;
pub mod subscriptions;

use std::path::{Path, PathBuf};

pub use copy::Copied;
pub use db::{Db, Dialect};
pub use error::{Result, StoreError};
pub use migrations::{postgres_schema_fingerprint, schema_snapshot};
pub use postgres::{Background, DEFAULT_MAX_CONNECTIONS, Writing, household_turn};
pub use postgres_session::Rows;
pub use sqlite::BackupFacts;

/// Where the database is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// An SQLite file, created if missing.
    Sqlite(PathBuf),
    /// A PostgreSQL database (`postgres://…`), with at most this many connections.
    Postgres { url: String, max_connections: usize },
}

/// One database, on either engine.
pub struct Store {
    engine: Engine,
}

enum Engine {
    Sqlite(sqlite::SqliteStore),
    Postgres(postgres::PgStore),
}

impl Store {
    /// Opens (creating if needed) an SQLite database file and applies pending migrations.
    pub fn open(path: &Path) -> Result<Self> {
        Ok(Self { engine: Engine::Sqlite(sqlite::SqliteStore::open(path)?) })
    }

    /// Opens the database at `location` and applies pending migrations.
    pub fn open_at(location: &Location) -> Result<Self> {
        match location {
            Location::Sqlite(path) => Self::open(path),
            Location::Postgres { url, max_connections } => Ok(Self {
                engine: Engine::Postgres(postgres::PgStore::connect(url, *max_connections)?),
            }),
        }
    }

    pub fn dialect(&self) -> Dialect {
        match self.engine {
            Engine::Sqlite(_) => Dialect::Sqlite,
            Engine::Postgres(_) => Dialect::Postgres,
        }
    }

    /// The database file, for SQLite.
    pub fn path(&self) -> Option<&Path> {
        match &self.engine {
            Engine::Sqlite(store) => Some(store.path()),
            Engine::Postgres(_) => None,
        }
    }

    /// Runs `f` in a read transaction over one snapshot, seeing every household's rows (work
    /// that spans households; an op's reads use [`Store::read_in`]). The outer result is the
    /// store's own failure; the inner one is `f`'s.
    pub fn read<T, E>(&self, f: impl FnOnce(&Db<'_>) -> Result<T, E>) -> Result<Result<T, E>> {
        self.read_rows(Rows::Every, f)
    }

    /// [`Store::read`] seeing only `household`'s rows on PostgreSQL, where row-level security
    /// holds the others back whatever a query asks (on SQLite every query's own condition
    /// does).
    pub fn read_in<T, E>(
        &self,
        household: i64,
        f: impl FnOnce(&Db<'_>) -> Result<T, E>,
    ) -> Result<Result<T, E>> {
        self.read_rows(Rows::Household(household), f)
    }

    fn read_rows<T, E>(
        &self,
        rows: Rows,
        f: impl FnOnce(&Db<'_>) -> Result<T, E>,
    ) -> Result<Result<T, E>> {
        match &self.engine {
            Engine::Sqlite(store) => store.read(f),
            Engine::Postgres(store) => store.read(rows, f),
        }
    }

    /// Runs `f` in a write transaction seeing every household's rows; commits when `commit`
    /// approves its result, rolls back otherwise (dry runs, failures).
    pub fn write<T, E>(
        &self,
        commit: impl FnOnce(&Result<T, E>) -> bool,
        f: impl FnOnce(&Db<'_>) -> Result<T, E>,
    ) -> Result<Result<T, E>> {
        self.write_rows(Rows::Every, true, commit, f)
    }

    /// [`Store::write`] seeing and writing only `household`'s rows on PostgreSQL, where it
    /// waits only for the household's other writes unless it is a dry run ([`Writing`]).
    pub fn write_in<T, E>(
        &self,
        household: i64,
        writing: Writing,
        commit: impl FnOnce(&Result<T, E>) -> bool,
        f: impl FnOnce(&Db<'_>) -> Result<T, E>,
    ) -> Result<Result<T, E>> {
        let alone = writing == Writing::DryRun;
        self.write_rows(Rows::Household(household), alone, commit, f)
    }

    fn write_rows<T, E>(
        &self,
        rows: Rows,
        alone: bool,
        commit: impl FnOnce(&Result<T, E>) -> bool,
        f: impl FnOnce(&Db<'_>) -> Result<T, E>,
    ) -> Result<Result<T, E>> {
        match &self.engine {
            Engine::Sqlite(store) => store.write(commit, f),
            Engine::Postgres(store) => store.write(rows, alone, commit, f),
        }
    }

    /// Takes one call of `kind` for `key` at its pace (see [`limits::take_pace`]), on every
    /// instance alike: on PostgreSQL in a write of its own that does not wait for the others.
    pub fn take_pace(
        &self,
        kind: &str,
        key: &str,
        pace: limits::Pace,
        now_us: i64,
    ) -> Result<Option<i64>> {
        self.write_apart(|db| limits::take_pace(db, kind, key, pace, now_us))
    }

    /// Runs `f`, whose statements are each atomic by themselves (a counter's upsert, a token's
    /// last use), in a write that waits for no other: on PostgreSQL beside every write, seeing
    /// every household. Something checked or noted on every call must not queue behind
    /// changes, nor behind the background work that spans households.
    pub fn write_apart<T>(&self, f: impl FnOnce(&Db<'_>) -> Result<T>) -> Result<T> {
        match &self.engine {
            Engine::Sqlite(store) => store.write(|_| true, f)?,
            Engine::Postgres(store) => store.write_apart(f),
        }
    }

    /// Calls `deliver` with the payload of every [`Db::notify`] on `channel` that commits, made
    /// by any instance (this one included), until the handle is dropped. SQLite has one
    /// instance, which hears its own changes without this: nothing is delivered there.
    pub fn listen(
        &self,
        channel: &'static str,
        deliver: impl Fn(String) + Send + 'static,
    ) -> Background {
        match &self.engine {
            Engine::Sqlite(_) => Background::keeping(()),
            Engine::Postgres(store) => store.listen(channel, deliver),
        }
    }

    /// Tells `lead` whenever this instance starts or stops leading the background work, which
    /// one instance runs at a time on a database. On SQLite, the one instance leads from now.
    /// Until the handle is dropped.
    pub fn lead(&self, lead: impl Fn(bool) + Send + 'static) -> Background {
        match &self.engine {
            // One instance on a file: it leads for as long as the handle lives. The callback
            // is kept with the handle, since dropping it would tell the leader it stopped.
            Engine::Sqlite(_) => {
                lead(true);
                Background::keeping(lead)
            }
            Engine::Postgres(store) => store.lead(lead),
        }
    }

    /// Copies this SQLite database, schema and every row, into the empty PostgreSQL
    /// database at `url`, in one transaction (see `copy.rs`).
    pub fn copy_to_postgres(&self, url: &str) -> Result<Copied> {
        match &self.engine {
            Engine::Sqlite(store) => copy::sqlite_to_postgres(store, url),
            Engine::Postgres(_) => Err(StoreError::Unsupported(
                "exhale migrate copies an SQLite database; this one is PostgreSQL already".into(),
            )),
        }
    }

    /// Empties a PostgreSQL database of what Exhale made in it (a copy found wrong after it
    /// was committed): every table in its schema, and Exhale's functions.
    pub fn empty_postgres(&self) -> Result<()> {
        match &self.engine {
            Engine::Sqlite(_) => Err(StoreError::Unsupported("this is an SQLite database".into())),
            Engine::Postgres(store) => store.empty(),
        }
    }

    /// Writes a consistent copy of the database to `target`, while the app keeps running.
    pub fn backup(&self, target: &Path) -> Result<()> {
        match &self.engine {
            Engine::Sqlite(store) => store.backup(target),
            Engine::Postgres(_) => Err(postgres_tool("back up", "pg_dump")),
        }
    }

    /// SQLite's own checks of the file and of every reference: what they found, empty when
    /// the database is sound.
    pub fn check(&self) -> Result<Vec<String>> {
        match &self.engine {
            Engine::Sqlite(store) => store.check(),
            // The server checks references as it writes; there is no file to check.
            Engine::Postgres(_) => Ok(Vec::new()),
        }
    }

    /// Closes the store's connections now, on this thread (which must not be an async worker
    /// thread), rather than on threads of their own as dropping it does.
    pub fn close(self) {
        if let Engine::Postgres(store) = self.engine {
            store.close();
        }
    }

    /// Replaces the database's content with a backup made by [`Store::backup`]; see
    /// `SqliteStore::restore`.
    pub fn restore(&self, source: &Path) -> Result<()> {
        match &self.engine {
            Engine::Sqlite(store) => store.restore(source),
            Engine::Postgres(_) => Err(postgres_tool("restore", "pg_restore")),
        }
    }
}

/// Checks an SQLite backup file as a restore would before replacing anything (an Exhale
/// database no newer than this one, SQLite's integrity and reference checks clean, its
/// households readable), and says what it holds.
pub fn check_backup(path: &Path) -> Result<BackupFacts> {
    sqlite::check_backup(path)
}

fn postgres_tool(what: &str, tool: &str) -> StoreError {
    StoreError::Unsupported(format!(
        "Exhale does not {what} a PostgreSQL database itself; use {tool} (see docs/install/postgres.md)"
    ))
}
