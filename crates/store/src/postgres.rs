//! PostgreSQL: the store on a pool of connections, transactions as the store's callers expect
//! them, listening for changes and leading the background work. The sessions, the pool, the
//! SQL's translation and values in and out are `postgres_session.rs`.
//!
//! Writes run at READ COMMITTED after taking a transaction-scoped advisory lock, so they
//! follow one another as SQLite's single writer does, and a read-check-write (undo's "changed
//! since?") never loses a concurrent edit. Reads run at REPEATABLE READ READ ONLY: one
//! snapshot, like a read transaction on SQLite's WAL.
//!
//! The synchronous client runs a small runtime of its own per connection, so a connection must
//! never be used on an async worker thread: the store is only used from blocking threads. It
//! must not be opened or dropped on one either, so those happen on threads of their own
//! ([`PgStore::connect`], `postgres_session::close`).

use std::{
    cell::RefCell,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use fallible_iterator::FallibleIterator as _;
use postgres::Client;

use crate::{
    Result, StoreError,
    db::{Conn, Db},
    endpoint::Endpoint,
    postgres_session::{Pool, Rows, Session, WAIT, check_server, close},
};

/// The advisory lock every write takes first: shared by the writes of one household each,
/// which then take their household's lock ([`HOUSEHOLD_LOCKS`]); alone by a write that spans
/// households or is a dry run, which so has the database to itself, as SQLite's one writer.
const WRITE_LOCK: i64 = 0x4578_6861_6c65_0001;
/// A household's writes take the lock `HOUSEHOLD_LOCKS + household id` in turn, so they follow
/// one another as before while other households' writes go on beside them.
const HOUSEHOLD_LOCKS: i64 = 0x4578_0000_0000_0000;
/// The advisory lock migrations run under, so two instances starting at once take turns.
const MIGRATION_LOCK: i64 = 0x4578_6861_6c65_0002;
/// The advisory lock the instance that runs the background work holds.
const LEAD_LOCK: i64 = 0x4578_6861_6c65_0003;
/// How often a listener checks that it should go on, and a standby instance tries to lead.
const POLL: Duration = Duration::from_secs(1);

/// Connections one instance keeps by default: enough for its blocking threads' concurrent
/// reads; writes take turns whatever the number.
pub const DEFAULT_MAX_CONNECTIONS: usize = 10;

/// The statements a change of `household` takes its turn with, in its transaction: the write
/// lock shared, then the household's own. Public so that a test can stand in for such a write.
pub fn household_turn(household: i64) -> String {
    format!(
        "SELECT pg_advisory_xact_lock_shared({WRITE_LOCK}); SELECT pg_advisory_xact_lock({})",
        HOUSEHOLD_LOCKS.wrapping_add(household)
    )
}

/// What a household's write is for: a change takes its turn among its household's writes,
/// beside other households'; a dry run waits until no other write runs and gives back the ids
/// it took, so its preview shows the ids the change will get.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writing {
    Change,
    DryRun,
}

/// Connections to one PostgreSQL database.
pub(crate) struct PgStore {
    endpoint: Endpoint,
    pool: Arc<Pool>,
}

impl Drop for PgStore {
    fn drop(&mut self) {
        close(self.pool.take_idle());
    }
}

impl PgStore {
    /// Connects, checks the server and applies pending migrations, on a thread of its own (the
    /// caller may be an async task).
    pub(crate) fn connect(url: &str, max_connections: usize) -> Result<Self> {
        std::thread::scope(|scope| {
            scope.spawn(|| Self::connect_here(url, max_connections)).join().unwrap_or_else(|_| {
                Err(StoreError::Corrupt("connecting to PostgreSQL panicked".into()))
            })
        })
    }

    fn connect_here(url: &str, max_connections: usize) -> Result<Self> {
        let endpoint = Endpoint::parse(url)?;
        if let Some(warning) = endpoint.unchecked_remote_server() {
            tracing::warn!("{warning}");
        }
        let store = Self { endpoint, pool: Arc::new(Pool::new(max_connections)) };
        let mut lease = store.pool.lease(&store.endpoint)?;
        let conn = lease.conn()?;
        check_server(&mut conn.client)?;
        crate::migrations::apply_postgres(&mut conn.client, MIGRATION_LOCK)?;
        Ok(store)
    }

    /// Drops every table in the schema, and Exhale's functions.
    pub(crate) fn empty(&self) -> Result<()> {
        let mut lease = self.pool.lease(&self.endpoint)?;
        lease.conn()?.client.batch_execute(
            "DO $$ DECLARE t record; BEGIN
                 FOR t IN SELECT tablename FROM pg_tables WHERE schemaname = current_schema() LOOP
                     EXECUTE format('DROP TABLE IF EXISTS %I CASCADE', t.tablename);
                 END LOOP;
             END $$;
             DROP FUNCTION IF EXISTS nocase(text);
             DROP FUNCTION IF EXISTS destination_secret_removed();
             DROP FUNCTION IF EXISTS exhale_household();
             DROP FUNCTION IF EXISTS exhale_every_household();
             DROP FUNCTION IF EXISTS transaction_search_kept();
             DROP FUNCTION IF EXISTS transaction_search_removed();
             DROP FUNCTION IF EXISTS budget_categories_same_household();
             DROP FUNCTION IF EXISTS budget_labels_same_household();
             DROP FUNCTION IF EXISTS rule_labels_same_household();
             DROP FUNCTION IF EXISTS transaction_labels_same_household();
             DROP FUNCTION IF EXISTS transaction_splits_same_household();
             DROP FUNCTION IF EXISTS transactions_same_household();
             DROP FUNCTION IF EXISTS bank_keys_same_household();",
        )?;
        Ok(())
    }

    /// Closes the idle connections on this thread.
    pub(crate) fn close(self) {
        let idle = self.pool.take_idle();
        drop(idle);
    }

    /// The session a [`Db`] of this store holds, back from it.
    fn session_of(db: Db<'_>) -> Result<Session> {
        match db.conn {
            Conn::Postgres(session) => Ok(session.into_inner()),
            Conn::Sqlite(_) => {
                Err(StoreError::Corrupt("a SQLite connection in a PostgreSQL store".into()))
            }
        }
    }

    /// Runs `f` in a read-only transaction over one snapshot, seeing `rows`.
    pub(crate) fn read<T>(&self, rows: Rows, f: impl FnOnce(&Db<'_>) -> T) -> Result<T> {
        let begin = format!("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; {}", rows.setting());
        let session = Session::begin(self.pool.lease(&self.endpoint)?, &begin, false)?;
        let db = Db { conn: Conn::Postgres(Box::new(RefCell::new(session))) };
        let value = f(&db);
        Self::session_of(db)?.end("ROLLBACK")?;
        Ok(value)
    }

    /// Runs `f` in a write transaction, after the earlier writes of its household have ended
    /// (with `alone`, or seeing every household: after every earlier write, and before any
    /// later one starts); commits when `commit` approves its result.
    pub(crate) fn write<T>(
        &self,
        rows: Rows,
        alone: bool,
        commit: impl FnOnce(&T) -> bool,
        f: impl FnOnce(&Db<'_>) -> T,
    ) -> Result<T> {
        let turn = match rows {
            Rows::Household(id) if !alone => household_turn(id),
            _ => format!("SELECT pg_advisory_xact_lock({WRITE_LOCK})"),
        };
        let alone = alone || rows == Rows::Every;
        let begin = format!(
            "BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL lock_timeout = '{}s'; {turn}; {}",
            WAIT.as_secs(),
            rows.setting()
        );
        let session = Session::begin(self.pool.lease(&self.endpoint)?, &begin, alone)?;
        let db = Db { conn: Conn::Postgres(Box::new(RefCell::new(session))) };
        let value = f(&db);
        let session = Self::session_of(db)?;
        if !commit(&value) {
            session.roll_back()?;
        } else if session.failed {
            // PostgreSQL would answer COMMIT with a rollback: say so instead of reporting a
            // write that did not happen.
            session.roll_back()?;
            return Err(StoreError::Corrupt(
                "a statement failed inside a write that was then to be committed".into(),
            ));
        } else {
            session.commit()?;
        }
        Ok(value)
    }
}

impl PgStore {
    /// Runs `f`, whose statements are each atomic by themselves (a counter's upsert), in a
    /// transaction that does not wait for the writes before it: a limit checked on every call
    /// must not queue behind every household's changes.
    pub(crate) fn write_apart<T>(&self, f: impl FnOnce(&Db<'_>) -> Result<T>) -> Result<T> {
        let begin = format!("BEGIN ISOLATION LEVEL READ COMMITTED; {}", Rows::Every.setting());
        let session = Session::begin(self.pool.lease(&self.endpoint)?, &begin, false)?;
        let db = Db { conn: Conn::Postgres(Box::new(RefCell::new(session))) };
        let value = f(&db);
        let session = Self::session_of(db)?;
        match value {
            Ok(value) if !session.failed => {
                session.end("COMMIT")?;
                Ok(value)
            }
            Ok(_) => {
                session.end("ROLLBACK")?;
                Err(StoreError::Corrupt("a statement failed inside a counter's write".into()))
            }
            Err(err) => {
                session.end("ROLLBACK")?;
                Err(err)
            }
        }
    }

    /// Calls `deliver` with the payload of every notification on `channel`, from any
    /// instance, on a thread of its own with a connection of its own, reconnecting after a
    /// failure, until the returned handle is dropped.
    pub(crate) fn listen(
        &self,
        channel: &'static str,
        deliver: impl Fn(String) + Send + 'static,
    ) -> Background {
        let endpoint = self.endpoint.clone();
        Background::start("exhale-pg-listen", move |running| {
            while running.load(Ordering::Relaxed) {
                let listened = (|| -> std::result::Result<(), postgres::Error> {
                    let mut client = endpoint.connect()?;
                    client.batch_execute(&format!("LISTEN {channel}"))?;
                    while running.load(Ordering::Relaxed) {
                        let mut notifications = client.notifications();
                        let mut waiting = notifications.timeout_iter(POLL);
                        while let Some(notification) = waiting.next()? {
                            deliver(notification.payload().to_owned());
                        }
                    }
                    Ok(())
                })();
                if let Err(err) = listened {
                    tracing::warn!(error = %StoreError::from(err), "listening for changes failed; trying again");
                    std::thread::sleep(POLL);
                }
            }
        })
    }

    /// Tells `lead` whether this instance leads the background work: the one that holds a
    /// session-level advisory lock on a connection of its own. When that instance stops or
    /// its connection breaks, the server lets the lock go and another takes it within
    /// [`POLL`]. Stops when the returned handle is dropped.
    pub(crate) fn lead(&self, lead: impl Fn(bool) + Send + 'static) -> Background {
        let endpoint = self.endpoint.clone();
        Background::start("exhale-pg-lead", move |running| {
            let mut leading = false;
            while running.load(Ordering::Relaxed) {
                let held = (|| -> std::result::Result<(), postgres::Error> {
                    let mut client = endpoint.connect()?;
                    while running.load(Ordering::Relaxed) {
                        let now = if leading {
                            // Still connected is still leading: the lock is the session's.
                            client.batch_execute("SELECT 1").map(|()| true)?
                        } else {
                            client
                                .query_one("SELECT pg_try_advisory_lock($1)", &[&LEAD_LOCK])?
                                .get(0)
                        };
                        if now != leading {
                            leading = now;
                            lead(leading);
                        }
                        std::thread::sleep(POLL);
                    }
                    Ok(())
                })();
                if leading {
                    leading = false;
                    lead(false);
                }
                if let Err(err) = held {
                    tracing::warn!(error = %StoreError::from(err), "leading background work failed; trying again");
                    std::thread::sleep(POLL);
                }
            }
        })
    }
}

/// A thread of the store's own, stopped (within [`POLL`]) when this is dropped; or, where
/// there is nothing to run, what must live as long as this does.
pub struct Background {
    running: Option<Arc<AtomicBool>>,
    /// Kept until this is dropped: SQLite's leader callback, whose channel closing would say
    /// that leading stopped.
    _kept: Option<Box<dyn std::any::Any + Send>>,
}

impl Background {
    fn start(name: &str, work: impl FnOnce(Arc<AtomicBool>) + Send + 'static) -> Self {
        let running = Arc::new(AtomicBool::new(true));
        let flag = running.clone();
        if let Err(err) = std::thread::Builder::new().name(name.into()).spawn(move || work(flag)) {
            tracing::error!(error = %err, "cannot start a thread for the database");
        }
        Self { running: Some(running), _kept: None }
    }

    /// Nothing to run; `kept` lives until this is dropped.
    pub(crate) fn keeping(kept: impl std::any::Any + Send) -> Self {
        Self { running: None, _kept: Some(Box::new(kept)) }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if let Some(running) = &self.running {
            running.store(false, Ordering::Relaxed);
        }
    }
}

/// One connection to the database at `url`, alone, after the checks a store's first one has:
/// for `exhale migrate`, which makes the schema and copies into it in one transaction.
pub(crate) fn connect_alone(url: &str) -> Result<Client> {
    let endpoint = Endpoint::parse(url)?;
    let mut client = endpoint.connect().map_err(|err| endpoint.unreachable(&err))?;
    check_server(&mut client)?;
    Ok(client)
}
