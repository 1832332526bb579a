//! A PostgreSQL transaction on a pooled connection ([`Session`]), the pool it comes from, the
//! translation of the store's SQL into PostgreSQL's, and values in and out. Below the
//! connection every query runs on (`db.rs`), which holds a session; `postgres.rs` opens the
//! pool and begins and ends the sessions.
//!
//! The synchronous client runs a small runtime of its own per connection, so a connection must
//! never be used on an async worker thread, nor dropped on one ([`close`]).

use std::{
    collections::HashMap,
    error::Error as StdError,
    sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError},
    time::{Duration, Instant},
};

use bytes::{BufMut, BytesMut};
use postgres::{
    Client, Statement,
    error::SqlState,
    types::{FromSql, IsNull, ToSql, Type, to_sql_checked},
};

use crate::{
    Result, StoreError,
    endpoint::Endpoint,
    value::{Cache, Kind, Param, Value, parse_date},
};

/// How long a request waits for a connection, or for another write's lock, before it is
/// told the database is busy.
pub(crate) const WAIT: Duration = Duration::from_secs(5);
/// The oldest server Exhale runs on (`server_version_num`).
const OLDEST_SERVER: i64 = 150_000;

pub(crate) struct Pool {
    state: Mutex<PoolState>,
    returned: Condvar,
    max_connections: usize,
}

struct PoolState<C = Connection> {
    idle: Vec<C>,
    /// Connections open, idle or lent.
    open: usize,
    /// Connections lent to a thread that held none: at most the pool's size, so that each
    /// can still have the one nested transaction it may open (see [`LEASES_HERE`]).
    outer: usize,
}

/// What a lease gets now.
enum Place<C> {
    Idle(C),
    /// A new connection, counted as open already.
    New,
    Wait,
}

/// A pooled connection that the server may have closed meanwhile.
trait Pooled {
    fn is_closed(&self) -> bool;
}

impl Pooled for Connection {
    fn is_closed(&self) -> bool {
        self.client.is_closed()
    }
}

impl<C: Pooled> PoolState<C> {
    /// Lends an idle connection, or a place for a new one while there is room, to an `outer`
    /// lease or a nested one in a pool of `size` connections.
    ///
    /// A transaction nested in one its thread holds may take the pool past its size (by as much
    /// again at most) rather than wait. Outer transactions stay within the size even when such
    /// extra connections lie idle: were all of them outer, each would wait for a nested
    /// connection that no one gives back.
    fn place(&mut self, outer: bool, size: usize) -> Place<C> {
        if outer && self.outer >= size {
            return Place::Wait;
        }
        let place = loop {
            match self.idle.pop() {
                Some(conn) if conn.is_closed() => self.open -= 1,
                Some(conn) => break Place::Idle(conn),
                None if self.open < size * 2 => {
                    self.open += 1;
                    break Place::New;
                }
                None => return Place::Wait,
            }
        };
        if outer {
            self.outer += 1;
        }
        place
    }
}

impl Pool {
    /// A new pool of at most `max_connections` (nested transactions may take it past that).
    pub(crate) fn new(max_connections: usize) -> Self {
        Self {
            state: Mutex::new(PoolState { idle: Vec::new(), open: 0, outer: 0 }),
            returned: Condvar::new(),
            max_connections: max_connections.max(1),
        }
    }

    /// A connection from the pool, a new one while the pool has room, or the first one
    /// returned within [`WAIT`] (see [`PoolState::place`]).
    pub(crate) fn lease(self: &Arc<Self>, endpoint: &Endpoint) -> Result<Lease> {
        let deadline = Instant::now() + WAIT;
        let outer = LEASES_HERE.with(std::cell::Cell::get) == 0;
        let mut state = self.locked();
        loop {
            match state.place(outer, self.max_connections) {
                Place::Idle(conn) => return Ok(self.lent(outer, Some(conn))),
                Place::New => {
                    drop(state);
                    // Counted before it is open; a failure gives the place back as the lease
                    // drops.
                    let mut lease = self.lent(outer, None);
                    let client = endpoint.connect().map_err(|err| endpoint.unreachable(&err))?;
                    lease.conn = Some(Connection {
                        client,
                        statements: HashMap::new(),
                        sequences: HashMap::new(),
                    });
                    return Ok(lease);
                }
                Place::Wait => {}
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(StoreError::Busy);
            }
            state = self
                .returned
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    fn lent(self: &Arc<Self>, outer: bool, conn: Option<Connection>) -> Lease {
        LEASES_HERE.with(|held| held.set(held.get() + 1));
        Lease { conn, pool: self.clone(), in_transaction: false, outer }
    }

    /// The idle connections, out of the pool (to be closed).
    pub(crate) fn take_idle(&self) -> Vec<Connection> {
        std::mem::take(&mut self.locked().idle)
    }

    fn locked(&self) -> MutexGuard<'_, PoolState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Which rows a transaction sees on PostgreSQL, where row-level security holds each
/// household's rows apart (migration `0019_row_level_security`): one household's, or every
/// household's, for the work that spans them (sign-in, tokens, OAuth, the background jobs,
/// migrations). A transaction that says neither sees no household's rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rows {
    Household(i64),
    Every,
}

impl Rows {
    /// The statement that tells the server, for this transaction only.
    pub(crate) fn setting(self) -> String {
        match self {
            Self::Household(id) => {
                format!("SELECT set_config('exhale.household_id', '{id}', true)")
            }
            Self::Every => "SELECT set_config('exhale.every_household', 'on', true)".into(),
        }
    }
}

/// A connection with the statements prepared on it.
pub(crate) struct Connection {
    pub(crate) client: Client,
    statements: HashMap<String, Statement>,
    /// Each table's id sequence, once asked for (`None`: it has none).
    sequences: HashMap<String, Option<String>>,
}

/// A connection lent from the pool. Dropped, it goes back, unless a transaction on it never
/// ended (a panic): then it is closed, which ends the transaction on the server.
pub(crate) struct Lease {
    conn: Option<Connection>,
    pool: Arc<Pool>,
    in_transaction: bool,
    /// Lent to a thread that held no other.
    outer: bool,
}

impl Lease {
    pub(crate) fn conn(&mut self) -> Result<&mut Connection> {
        self.conn.as_mut().ok_or(StoreError::Busy)
    }
}

thread_local! {
    /// Connections this thread holds now. A transaction opened while another is open on the
    /// same thread (the names an op's input holds, read while the op's transaction is open)
    /// must not wait for a connection: with every connection held by such an outer
    /// transaction, each would wait for the others until it gave up.
    static LEASES_HERE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Drop for Lease {
    fn drop(&mut self) {
        LEASES_HERE.with(|held| held.set(held.get().saturating_sub(1)));
        let mut state = self.pool.locked();
        if self.outer {
            state.outer -= 1;
        }
        match self.conn.take() {
            Some(conn) if !self.in_transaction && !conn.client.is_closed() => {
                state.idle.push(conn);
            }
            gone => {
                state.open -= 1;
                close(gone);
            }
        }
        drop(state);
        // Outer and nested leases wait for different things: wake both kinds.
        self.pool.returned.notify_all();
    }
}

/// Drops connections on a thread of their own: each owns a small runtime, which may not be
/// dropped on an async worker thread, where the last handle to a store may go.
pub(crate) fn close<T: Send + 'static>(connections: T) {
    // If no thread can be had, they are dropped here, as they would be anyway.
    let _ = std::thread::Builder::new().name("exhale-pg-close".into()).spawn(move || {
        drop(connections);
    });
}

/// Refuses servers older than [`OLDEST_SERVER`].
pub(crate) fn check_server(client: &mut Client) -> Result<()> {
    let row = client.query_one("SELECT current_setting('server_version_num')::bigint", &[])?;
    let version: i64 = row.get(0);
    if version < OLDEST_SERVER {
        return Err(StoreError::Config(format!(
            "the PostgreSQL server is version {}.{}; Exhale needs 15 or later. Upgrade the server, or leave EXHALE_DATABASE_URL unset to use SQLite",
            version / 10_000,
            version % 10_000
        )));
    }
    // Row-level security holds households apart a second time; these roles pass it by.
    let row = client.query_one(
        "SELECT current_user::text, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user",
        &[],
    )?;
    let (role, superuser, bypasses): (String, bool, bool) = (row.get(0), row.get(1), row.get(2));
    if superuser || bypasses {
        return Err(StoreError::Config(format!(
            "the PostgreSQL role {role} is {}, which row-level security (what keeps households apart a second time) does not hold back; connect as a role of Exhale's own that owns its database: CREATE ROLE exhale LOGIN PASSWORD '…'; CREATE DATABASE exhale OWNER exhale (docs/install/postgres.md)",
            if superuser {
                "a superuser"
            } else {
                "allowed to bypass row-level security (BYPASSRLS)"
            }
        )));
    }
    Ok(())
}

/// A transaction on a leased connection.
pub(crate) struct Session {
    lease: Lease,
    /// A statement failed: PostgreSQL refuses everything after it in this transaction.
    pub(crate) failed: bool,
    /// In a write: the tables it inserted into, with where their id sequences stood before.
    inserted: Option<Vec<Inserted>>,
    /// The write added many transactions to this household: once it commits, the tables a
    /// search there reads are vacuumed (see [`Session::commit`]).
    pub(crate) tidy_after: Option<i64>,
}

/// A table a write inserted into.
struct Inserted {
    table: String,
    /// Its id sequence, if it has one, and the sequence's value before the write's first
    /// insert (`None`: never used).
    sequence: Option<(String, Option<i64>)>,
}

impl Session {
    /// Begins a transaction; one that `gives_ids_back` notes where each sequence it uses
    /// stood, for [`Session::roll_back`].
    pub(crate) fn begin(mut lease: Lease, begin: &str, gives_ids_back: bool) -> Result<Self> {
        lease.in_transaction = true;
        lease.conn()?.client.batch_execute(begin)?;
        Ok(Self { lease, failed: false, inserted: gives_ids_back.then(Vec::new), tidy_after: None })
    }

    /// Rolls a write back with its ids: a sequence is not rolled back with a transaction, so
    /// after a dry run the ids it showed would go to nobody and the real change would get
    /// others. Each sequence it used is set back while this write still holds the write lock
    /// alone, so no other write has taken one since. (A write that ran beside others, or
    /// failed, keeps the gap: it showed no id.)
    pub(crate) fn roll_back(mut self) -> Result<()> {
        let mut batch = String::new();
        if !self.failed {
            for inserted in self.inserted.take().unwrap_or_default() {
                let Some((sequence, before)) = inserted.sequence else { continue };
                let sequence = sequence.replace('\'', "''");
                batch.push_str(&match before {
                    Some(value) => format!("SELECT setval('{sequence}', {value}, true); "),
                    None => format!("SELECT setval('{sequence}', 1, false); "),
                });
            }
        }
        batch.push_str("ROLLBACK");
        self.end(&batch)
    }

    /// Before a write's first insert into a table, notes where the table's id sequence stands.
    fn note_insert(&mut self, sql: &str) -> Result<()> {
        let Some(inserted) = &self.inserted else { return Ok(()) };
        let Some(table) = sql
            .trim_start()
            .strip_prefix("INSERT INTO ")
            .and_then(|rest| rest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next())
        else {
            return Ok(());
        };
        if inserted.iter().any(|noted| noted.table == table) {
            return Ok(());
        }
        let conn = self.lease.conn()?;
        let name = match conn.sequences.get(table) {
            Some(name) => name.clone(),
            None => {
                let name: Option<String> = conn
                    .client
                    .query_opt(
                        "SELECT pg_get_serial_sequence(quote_ident(table_name), 'id')
                         FROM information_schema.columns
                         WHERE table_schema = current_schema() AND table_name = $1
                           AND column_name = 'id'",
                        &[&table],
                    )?
                    .and_then(|row| row.get(0));
                conn.sequences.insert(table.to_owned(), name.clone());
                name
            }
        };
        let sequence = match name {
            Some(name) => {
                let before: Option<i64> = conn
                    .client
                    .query_one("SELECT pg_sequence_last_value($1::text::regclass)", &[&name])?
                    .get(0);
                Some((name, before))
            }
            None => None,
        };
        if let Some(inserted) = &mut self.inserted {
            inserted.push(Inserted { table: table.to_owned(), sequence });
        }
        Ok(())
    }

    /// Commits; after a write that added many transactions, vacuums what a search reads, on
    /// the same connection, before it goes back to the pool.
    ///
    /// Autovacuum would, a minute or so later. Until then a search read every new row's page
    /// to learn whether it is visible (the visibility map is set by a vacuum), and the text
    /// index's pending list, where new entries wait to be merged, three times: 25 to 30 ms
    /// where 2 to 4 do, over 100,000. The statistics are renewed in the same pass. It takes
    /// no lock a write waits for, and passes over a table another vacuum holds (autovacuum's,
    /// or another instance's); a failure is only logged, as the write has committed.
    pub(crate) fn commit(mut self) -> Result<()> {
        let tidy = self.tidy_after;
        self.lease.conn()?.client.batch_execute("COMMIT")?;
        self.lease.in_transaction = false;
        if let Some(household) = tidy
            && let Err(err) = tidy_for_search(&mut self.lease.conn()?.client, household)
        {
            tracing::warn!("vacuuming after a large import: {err}");
        }
        Ok(())
    }

    /// Ends the transaction with `COMMIT` or `ROLLBACK`; the connection goes back to the pool.
    pub(crate) fn end(mut self, how: &str) -> Result<()> {
        self.lease.conn()?.client.batch_execute(how)?;
        self.lease.in_transaction = false;
        Ok(())
    }

    pub(crate) fn query(
        &mut self,
        cache: Cache,
        sql: &str,
        params: &[&dyn Param],
    ) -> Result<Vec<postgres::Row>> {
        self.run(cache, sql, params, |client, statement, bound| client.query(statement, bound))
    }

    pub(crate) fn execute(
        &mut self,
        cache: Cache,
        sql: &str,
        params: &[&dyn Param],
    ) -> Result<usize> {
        let changed = self
            .run(cache, sql, params, |client, statement, bound| client.execute(statement, bound))?;
        Ok(usize::try_from(changed).unwrap_or(usize::MAX))
    }

    /// Runs the statement for `sql` with `params` bound; a failure is remembered, because
    /// PostgreSQL refuses the rest of the transaction after it.
    fn run<T>(
        &mut self,
        cache: Cache,
        sql: &str,
        params: &[&dyn Param],
        run: impl FnOnce(
            &mut Client,
            &Statement,
            &[&(dyn ToSql + Sync)],
        ) -> std::result::Result<T, postgres::Error>,
    ) -> Result<T> {
        let values: Vec<Value<'_>> = params.iter().map(|param| param.value()).collect();
        let bound: Vec<&(dyn ToSql + Sync)> =
            values.iter().map(|value| value as &(dyn ToSql + Sync)).collect();
        let result = self
            .note_insert(sql)
            .and_then(|()| self.statement(cache, sql, &values))
            .and_then(|statement| Ok(run(&mut self.lease.conn()?.client, &statement, &bound)?));
        self.failed |= result.is_err();
        // The statement (never its values) goes with a failure into the log.
        result.map_err(|err| match err {
            StoreError::Postgres { message, source } => {
                let statement: String = sql.split_whitespace().collect::<Vec<_>>().join(" ");
                StoreError::Postgres { message: format!("{message}, in: {statement}"), source }
            }
            other => other,
        })
    }

    /// The prepared statement for `sql`: kept on the connection for next time, or not.
    fn statement(&mut self, cache: Cache, sql: &str, values: &[Value<'_>]) -> Result<Statement> {
        let conn = self.lease.conn()?;
        if let Some(statement) = conn.statements.get(sql) {
            return Ok(statement.clone());
        }
        let translated = translate(sql);
        // PostgreSQL infers each placeholder's type from where it stands, except where it
        // stands alone (`$2 IS NULL OR owner_id = $2` fails on the first `$2`): those are
        // given the type of the value bound this time.
        let types: Vec<Type> = (1..=values.len())
            .map(|n| match values.get(n - 1) {
                Some(value) if null_checked(&translated, n) => declared_type(*value),
                _ => unspecified(),
            })
            .collect();
        let statement = conn.client.prepare_typed(&translated, &types)?;
        if cache == Cache::Keep {
            conn.statements.insert(sql.to_owned(), statement.clone());
        }
        Ok(statement)
    }
}

/// Vacuums and analyses what a search in `household` reads: the transactions, the part of
/// the search text that holds the household's (migration 0026; the other parts are left
/// alone), and the small tables a search joins.
fn tidy_for_search(
    client: &mut Client,
    household: i64,
) -> std::result::Result<(), postgres::Error> {
    let part: Option<String> = client
        .query_opt(
            "SELECT tableoid::regclass::text FROM transaction_search WHERE household_id = $1 LIMIT 1",
            &[&household],
        )?
        .map(|row| row.get(0));
    let part = part.map(|part| format!("{part}, ")).unwrap_or_default();
    client.batch_execute(&format!(
        "VACUUM (ANALYZE, SKIP_LOCKED) transactions, {part}transaction_labels, accounts, categories, labels"
    ))
}

/// The store's SQL in PostgreSQL's spelling: placeholders `?N` (and bare `?`, numbered in
/// order) become `$N`, and `x COLLATE NOCASE` becomes `nocase(x)`, the migration's function
/// that folds ASCII letters as SQLite's NOCASE does, so both sort alike. (Only orders are
/// written with COLLATE NOCASE: a comparison is written `nocase(a) = nocase(b)` on both,
/// where SQLite's `nocase` is the store's own function.)
pub(crate) fn translate(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut chars = sql.chars().peekable();
    let mut next_bare = 0;
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                out.push(c);
                for inner in chars.by_ref() {
                    out.push(inner);
                    if inner == c {
                        break;
                    }
                }
            }
            '-' if chars.peek() == Some(&'-') => {
                out.push(c);
                for inner in chars.by_ref() {
                    out.push(inner);
                    if inner == '\n' {
                        break;
                    }
                }
            }
            '?' => {
                out.push('$');
                let mut digits = false;
                while let Some(d) = chars.peek().copied().filter(char::is_ascii_digit) {
                    out.push(d);
                    chars.next();
                    digits = true;
                }
                if !digits {
                    next_bare += 1;
                    out.push_str(&next_bare.to_string());
                }
            }
            c => out.push(c),
        }
    }
    fold_nocase(&out)
}

/// Whether placeholder `$n` stands in an `IS NULL` or `IS NOT NULL` test in `sql`.
fn null_checked(sql: &str, n: usize) -> bool {
    let placeholder = format!("${n} IS ");
    sql.match_indices(&placeholder).any(|(at, found)| {
        let before_is_digit = sql[..at].ends_with(|c: char| c.is_ascii_digit());
        let rest = &sql[at + found.len()..];
        !before_is_digit && (rest.starts_with("NULL") || rest.starts_with("NOT NULL"))
    })
}

/// The type PostgreSQL is told a placeholder has, from the value bound to it.
fn declared_type(value: Value<'_>) -> Type {
    let kind = match value {
        Value::Null => return unspecified(),
        Value::NullOf(kind) => kind,
        Value::Int(_) | Value::Bool(_) => Kind::Int,
        Value::Real(_) => Kind::Real,
        Value::Text(_) => Kind::Text,
        Value::Date(_) => Kind::Date,
        Value::Blob(_) => return Type::BYTEA,
        Value::Ints(_) => Kind::Ints,
    };
    match kind {
        Kind::Int => Type::INT8,
        Kind::Real => Type::FLOAT8,
        Kind::Text => Type::TEXT,
        Kind::Date => Type::DATE,
        Kind::Ints => Type::INT8_ARRAY,
    }
}

/// "Infer it": the type a statement is prepared with for a placeholder PostgreSQL types
/// itself (object id 0).
fn unspecified() -> Type {
    Type::new("unspecified".into(), 0, postgres::types::Kind::Pseudo, "pg_catalog".into())
}

/// Rewrites each `operand COLLATE NOCASE` as `nocase(operand)`; the operand is a name, a
/// placeholder or a parenthesised call.
fn fold_nocase(sql: &str) -> String {
    const MARK: &str = " COLLATE NOCASE";
    // Every text column compares bytes already, as BINARY does.
    let mut out = sql.replace(" COLLATE BINARY", "");
    while let Some(at) = out.find(MARK) {
        let before = &out[..at];
        let start = operand_start(before);
        let operand = before[start..].to_owned();
        out.replace_range(start..at + MARK.len(), &format!("nocase({operand})"));
    }
    out
}

fn operand_start(before: &str) -> usize {
    let bytes = before.as_bytes();
    let mut i = bytes.len();
    if i > 0 && bytes[i - 1] == b')' {
        let mut depth = 0;
        while i > 0 {
            i -= 1;
            match bytes[i] {
                b')' => depth += 1,
                b'(' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    while i > 0
        && (bytes[i - 1].is_ascii_alphanumeric() || matches!(bytes[i - 1], b'_' | b'.' | b'$'))
    {
        i -= 1;
    }
    i
}

/// A column of a PostgreSQL row as a [`Value`].
pub(crate) fn value(row: &postgres::Row, index: usize) -> Result<Value<'_>> {
    let column = row
        .columns()
        .get(index)
        .ok_or_else(|| StoreError::Corrupt(format!("no column {index}")))?;
    let value = match *column.type_() {
        Type::INT8 => row.try_get::<_, Option<i64>>(index)?.map(Value::Int),
        Type::INT4 => row.try_get::<_, Option<i32>>(index)?.map(|i| Value::Int(i.into())),
        Type::INT2 => row.try_get::<_, Option<i16>>(index)?.map(|i| Value::Int(i.into())),
        Type::BOOL => row.try_get::<_, Option<bool>>(index)?.map(Value::Bool),
        Type::FLOAT8 => row.try_get::<_, Option<f64>>(index)?.map(Value::Real),
        Type::FLOAT4 => row.try_get::<_, Option<f32>>(index)?.map(|f| Value::Real(f.into())),
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME => {
            row.try_get::<_, Option<&str>>(index)?.map(Value::Text)
        }
        Type::DATE => row.try_get::<_, Option<domain::Date>>(index)?.map(Value::Date),
        Type::BYTEA => row.try_get::<_, Option<&[u8]>>(index)?.map(Value::Blob),
        Type::NUMERIC => row.try_get::<_, Option<WholeNumber>>(index)?.map(|n| Value::Int(n.0)),
        ref other => {
            return Err(StoreError::Corrupt(format!(
                "column {} is of type {other}, which the store does not read (cast it in the query)",
                column.name()
            )));
        }
    };
    Ok(value.unwrap_or(Value::Null))
}

type BoxError = Box<dyn StdError + Sync + Send>;

/// A whole number PostgreSQL computed as `numeric`: the `sum` of `bigint`s is one, where
/// SQLite's is an integer.
struct WholeNumber(i64);

impl<'a> FromSql<'a> for WholeNumber {
    fn from_sql(_: &Type, raw: &'a [u8]) -> std::result::Result<Self, BoxError> {
        // The binary form: digit count, weight, sign, display scale, then base-10000 digits,
        // the first worth 10000^weight.
        let word = |i: usize| -> std::result::Result<u16, BoxError> {
            let bytes = raw.get(2 * i..2 * i + 2).ok_or("a numeric value is cut short")?;
            Ok(u16::from_be_bytes([bytes[0], bytes[1]]))
        };
        let count = usize::from(word(0)?);
        let weight = i64::from(word(1)?.cast_signed());
        let sign = word(2)?;
        let mut value: i128 = 0;
        for i in 0..count {
            let digit = i128::from(word(4 + i)?);
            let power = weight - i64::try_from(i)?;
            if power < 0 {
                if digit != 0 {
                    return Err("a numeric value is not a whole number".into());
                }
                continue;
            }
            let scale = 10_000i128.checked_pow(u32::try_from(power)?).ok_or("too large")?;
            value =
                digit.checked_mul(scale).and_then(|d| value.checked_add(d)).ok_or("too large")?;
        }
        let value = match sign {
            0x0000 => value,
            0x4000 => -value,
            _ => return Err("a numeric value is not a number".into()),
        };
        Ok(Self(i64::try_from(value)?))
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::NUMERIC
    }
}

/// Values bind to what the statement's placeholder is, as SQLite binds them to anything:
/// an integer to any integer type (range checked), a flag to a boolean or an integer, a date
/// to a date or text, text to text, JSON or a date.
impl ToSql for Value<'_> {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> std::result::Result<IsNull, BoxError> {
        match (*self, ty) {
            (Value::Null | Value::NullOf(_), _) => Ok(IsNull::Yes),
            (Value::Int(i), &Type::INT8) => i.to_sql(ty, out),
            (Value::Int(i), &Type::INT4) => i32::try_from(i)?.to_sql(ty, out),
            (Value::Int(i), &Type::INT2) => i16::try_from(i)?.to_sql(ty, out),
            #[allow(clippy::cast_precision_loss)]
            (Value::Int(i), &Type::FLOAT8) => (i as f64).to_sql(ty, out),
            (Value::Int(i), &Type::BOOL) => (i != 0).to_sql(ty, out),
            (Value::Bool(b), &Type::BOOL) => b.to_sql(ty, out),
            (Value::Bool(b), &Type::INT8 | &Type::INT4 | &Type::INT2) => {
                Value::Int(i64::from(b)).to_sql(ty, out)
            }
            (Value::Real(f), &Type::FLOAT8) => f.to_sql(ty, out),
            (Value::Text(s), &Type::TEXT | &Type::VARCHAR | &Type::BPCHAR | &Type::NAME)
            | (Value::Text(s), &Type::UNKNOWN | &Type::JSON) => {
                out.put_slice(s.as_bytes());
                Ok(IsNull::No)
            }
            (Value::Text(s), &Type::JSONB) => {
                out.put_u8(1);
                out.put_slice(s.as_bytes());
                Ok(IsNull::No)
            }
            (Value::Text(s), &Type::DATE) => {
                parse_date(s).ok_or_else(|| format!("{s:?} is not a date"))?.to_sql(ty, out)
            }
            (Value::Date(d), &Type::DATE) => d.to_sql(ty, out),
            (Value::Date(d), &Type::TEXT | &Type::VARCHAR | &Type::UNKNOWN) => {
                out.put_slice(d.to_string().as_bytes());
                Ok(IsNull::No)
            }
            (Value::Blob(b), &Type::BYTEA) => b.to_sql(ty, out),
            (Value::Ints(ids), &Type::INT8_ARRAY) => ids.to_sql(ty, out),
            (value, ty) => Err(format!("cannot bind {value:?} to a parameter of type {ty}").into()),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

impl From<postgres::Error> for StoreError {
    fn from(err: postgres::Error) -> Self {
        if err.is_closed() {
            return Self::Unavailable(format!("the connection to PostgreSQL was lost ({err})"));
        }
        let Some(db) = err.as_db_error() else {
            // A socket broken by the server going away (a reset, a broken pipe): the same as
            // a connection lost, to be tried again once the pool has connected anew.
            if let Some(io) = err.source().and_then(|cause| cause.downcast_ref::<std::io::Error>())
            {
                return Self::Unavailable(format!("the connection to PostgreSQL was lost ({io})"));
            }
            // "error serializing parameter 2" says which; its source says why.
            let message = match err.source() {
                Some(cause) => format!("{err}: {cause}"),
                None => err.to_string(),
            };
            return Self::Postgres { message, source: err };
        };
        let state = db.code();
        if *state == SqlState::UNIQUE_VIOLATION
            || *state == SqlState::FOREIGN_KEY_VIOLATION
            || *state == SqlState::CHECK_VIOLATION
            || *state == SqlState::NOT_NULL_VIOLATION
            || *state == SqlState::EXCLUSION_VIOLATION
        {
            return Self::Constraint(db.message().to_owned());
        }
        if *state == SqlState::T_R_SERIALIZATION_FAILURE
            || *state == SqlState::T_R_DEADLOCK_DETECTED
            || *state == SqlState::LOCK_NOT_AVAILABLE
        {
            return Self::Busy;
        }
        if *state == SqlState::ADMIN_SHUTDOWN
            || *state == SqlState::CRASH_SHUTDOWN
            || *state == SqlState::CANNOT_CONNECT_NOW
        {
            return Self::Unavailable(db.message().to_owned());
        }
        // The server's own words: "db error" alone says nothing in a log.
        let mut message = format!("{} ({})", db.message(), state.code());
        if let Some(detail) = db.detail() {
            message.push_str(&format!("; {detail}"));
        }
        if let Some(hint) = db.hint() {
            message.push_str(&format!("; {hint}"));
        }
        Self::Postgres { message, source: err }
    }
}

#[cfg(test)]
mod tests {
    use super::{Place, PoolState, Pooled, translate};

    struct Open;

    impl Pooled for Open {
        fn is_closed(&self) -> bool {
            false
        }
    }

    /// What a lease gets, as a word, keeping the idle connection it takes.
    fn place(state: &mut PoolState<Open>, outer: bool) -> &'static str {
        match state.place(outer, 1) {
            Place::Idle(_) => "idle",
            Place::New => "new",
            Place::Wait => "wait",
        }
    }

    /// The pool deadlock CI once hit: connections opened for nested transactions lay idle, outer
    /// transactions took every one of them, and each then waited for a nested connection.
    #[test]
    fn outer_leases_leave_room_for_the_nested_ones_they_open() {
        let mut state = PoolState::<Open> { idle: Vec::new(), open: 0, outer: 0 };
        assert_eq!(place(&mut state, true), "new");
        assert_eq!(place(&mut state, false), "new");
        assert_eq!(place(&mut state, false), "wait", "twice the size at most");
        // Both go back: two idle connections in a pool of one.
        state.outer = 0;
        state.idle = vec![Open, Open];
        assert_eq!(place(&mut state, true), "idle");
        assert_eq!(place(&mut state, true), "wait", "a second outer lease would hold the last");
        assert_eq!(place(&mut state, false), "idle");
        assert_eq!((state.open, state.outer), (2, 1));
    }

    #[test]
    fn placeholders_tested_for_null_are_found() {
        let sql = "WHERE ($2 IS NULL OR x = $2) AND $13 IS NOT NULL AND $3 = 1";
        assert!(super::null_checked(sql, 2));
        assert!(super::null_checked(sql, 13));
        assert!(!super::null_checked(sql, 3));
        assert!(!super::null_checked(sql, 1));
    }

    #[test]
    fn placeholders_and_nocase_are_translated_outside_quotes() {
        assert_eq!(
            translate("SELECT ?1, '?2', \"a?\" FROM t WHERE x = ?12 -- ?3\n AND y IN (?, ?)"),
            "SELECT $1, '?2', \"a?\" FROM t WHERE x = $12 -- ?3\n AND y IN ($1, $2)"
        );
        assert_eq!(
            translate("ORDER BY s.name COLLATE NOCASE, s.id"),
            "ORDER BY nocase(s.name), s.id"
        );
        assert_eq!(
            translate("GROUP BY t.tag COLLATE NOCASE ORDER BY min(t.tag) COLLATE NOCASE"),
            "GROUP BY nocase(t.tag) ORDER BY nocase(min(t.tag))"
        );
    }
}
