//! The database a test runs on: a fresh SQLite file, or, when `EXHALE_TEST_PG` names a
//! PostgreSQL cluster (`scripts/test` starts one and sets it for the PostgreSQL pass), a fresh
//! database cloned from a migrated template, dropped when the test ends.
//!
//! The template is made once per schema by whichever test process comes first, under an
//! advisory lock; each test's database is then a copy of it (tens of milliseconds), not a
//! migration. PostgreSQL's synchronous client may not run on an async worker thread, so every
//! step here runs on a thread of its own.

use std::{
    path::Path,
    sync::atomic::{AtomicU64, Ordering},
};

use store::{Location, Store};

/// What a new PostgreSQL database holds.
#[derive(Clone, Copy)]
enum Schema {
    /// Exhale's tables, migrated.
    Migrated,
    /// Nothing: what `exhale migrate` copies into.
    None,
}

/// The role Exhale connects as in the tests: the databases' owner, neither a superuser nor
/// one that bypasses row-level security, as `docs/install/postgres.md` sets Exhale up.
pub const ROLE: &str = "exhale_test";

/// Creates [`ROLE`] unless the cluster has it (under the template's lock).
fn create_role(client: &mut postgres::Client) {
    client
        .batch_execute(&format!(
            "DO $$ BEGIN
                 IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{ROLE}') THEN
                     CREATE ROLE {ROLE} LOGIN;
                 END IF;
             EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
             END $$"
        ))
        .expect("create the test role");
}

/// The variable naming the cluster, as a connection string for its superuser.
pub const TEST_PG: &str = "EXHALE_TEST_PG";

/// A test's database, removed when dropped.
pub struct TestDatabase {
    location: Location,
    /// On PostgreSQL: the cluster's superuser connection string and the database's name.
    postgres: Option<(String, String)>,
}

impl TestDatabase {
    /// A fresh database: `exhale.db` in `dir`, or a PostgreSQL database when the tests run on
    /// PostgreSQL.
    pub fn new(dir: &Path) -> Self {
        match cluster() {
            None => Self::sqlite(dir),
            Some(admin) => Self::postgres_in(admin, Schema::Migrated),
        }
    }

    /// A fresh PostgreSQL database in the cluster `admin` names.
    fn postgres_in(admin: String, schema: Schema) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name =
            format!("exhale_test_{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        on_own_thread(|| match schema {
            Schema::Migrated => create_from_template(&admin, &name),
            Schema::None => {
                let mut client = admin_client(&admin);
                create_role(&mut client);
                client
                    .batch_execute(&format!("CREATE DATABASE {name} OWNER {ROLE}"))
                    .expect("create an empty database");
            }
        });
        let url = format!("{admin} dbname={name} user={ROLE}");
        Self {
            location: Location::Postgres { url, max_connections: 8 },
            postgres: Some((admin, name)),
        }
    }

    /// `exhale.db` in `dir`, whichever pass this is: for what only an SQLite file does
    /// (backup, restore, the file's own checks).
    pub fn sqlite(dir: &Path) -> Self {
        Self { location: Location::Sqlite(dir.join("exhale.db")), postgres: None }
    }

    pub fn location(&self) -> &Location {
        &self.location
    }

    /// Whether this is PostgreSQL.
    pub fn is_postgres(&self) -> bool {
        self.postgres.is_some()
    }

    /// What a child `exhale` process needs to use this database: with `EXHALE_DATA_DIR` set
    /// to the test's directory, nothing for SQLite; `EXHALE_DATABASE_URL` for PostgreSQL.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        match &self.location {
            Location::Sqlite(_) => Vec::new(),
            Location::Postgres { url, .. } => vec![("EXHALE_DATABASE_URL", url.clone())],
        }
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        if let Some((admin, name)) = self.postgres.take() {
            on_own_thread(move || {
                // FORCE ends connections a test left open (a killed `exhale serve`).
                let _ = admin_client(&admin)
                    .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
            });
        }
    }
}

/// The cluster the tests run on, if they run on PostgreSQL.
#[expect(clippy::disallowed_methods, reason = "the tests' own setting, not Exhale's configuration")]
pub fn cluster() -> Option<String> {
    std::env::var(TEST_PG).ok().filter(|value| !value.is_empty())
}

fn admin_client(admin: &str) -> postgres::Client {
    postgres::Client::connect(admin, postgres::NoTls)
        .unwrap_or_else(|err| panic!("connect to the test cluster ({TEST_PG}={admin}): {err}"))
}

fn on_own_thread<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| scope.spawn(work).join().expect("a database step panicked"))
}

/// Creates `name` as a copy of the template for the current schema, making the template
/// first if no test has.
fn create_from_template(admin: &str, name: &str) {
    let template = format!("exhale_template_{}", store::postgres_schema_fingerprint());
    let mut client = admin_client(admin);
    // One process makes the template; the others wait for it.
    client.batch_execute("SELECT pg_advisory_lock(4242)").expect("lock the template");
    let exists = client
        .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&template])
        .expect("look for the template")
        .is_some();
    if !exists {
        let building = format!("{template}_building");
        // One statement a call: a list of them would run as one transaction, which neither
        // statement may be in.
        client
            .batch_execute(&format!("DROP DATABASE IF EXISTS {building}"))
            .expect("remove a template left half made");
        create_role(&mut client);
        client
            .batch_execute(&format!("CREATE DATABASE {building} OWNER {ROLE}"))
            .expect("create the template");
        let url = format!("{admin} dbname={building} user={ROLE}");
        Store::open_at(&Location::Postgres { url, max_connections: 1 })
            .expect("migrate the template")
            .close();
        client
            .batch_execute(&format!("ALTER DATABASE {building} RENAME TO {template}"))
            .expect("name the template");
    }
    client.batch_execute("SELECT pg_advisory_unlock(4242)").expect("unlock the template");
    client
        .batch_execute(&format!("CREATE DATABASE {name} TEMPLATE {template} OWNER {ROLE}"))
        .expect("copy the template");
}

/// A data directory for the `exhale` binary, with the test's database: `exhale.db` in it, or
/// a PostgreSQL database its commands are pointed at ([`DataDir::env`]).
pub struct DataDir {
    pub database: TestDatabase,
    /// A cluster of this test's own, stopped once its database is dropped.
    cluster: Option<PrivateCluster>,
    dir: crate::TempDir,
}

impl DataDir {
    pub fn new() -> Self {
        let dir = crate::TempDir::new();
        Self { database: TestDatabase::new(dir.path()), cluster: None, dir }
    }

    /// A data directory whose database is its SQLite file in either pass.
    pub fn sqlite() -> Self {
        let dir = crate::TempDir::new();
        Self { database: TestDatabase::sqlite(dir.path()), cluster: None, dir }
    }

    /// A data directory on PostgreSQL in either pass, for what only PostgreSQL does (several
    /// instances on one database): the PostgreSQL pass's cluster, or outside it a throwaway
    /// cluster of this test's own (`scripts/postgres-cluster`).
    pub fn postgres() -> Self {
        Self::postgres_with(Schema::Migrated)
    }

    /// [`DataDir::postgres`] with an empty database, not even Exhale's tables: what
    /// `exhale migrate` copies into.
    pub fn empty_postgres() -> Self {
        Self::postgres_with(Schema::None)
    }

    fn postgres_with(schema: Schema) -> Self {
        let dir = crate::TempDir::new();
        let (admin, cluster) = match cluster() {
            Some(admin) => (admin, None),
            None => {
                let own = PrivateCluster::start(&[]);
                (own.admin.clone(), Some(own))
            }
        };
        Self { database: TestDatabase::postgres_in(admin, schema), cluster, dir }
    }

    /// A data directory on a PostgreSQL cluster of this test's own in either pass, which the
    /// test may crash and restart ([`DataDir::restart_database`]) without disturbing others;
    /// durable, so the crash loses no commit that was acknowledged.
    pub fn postgres_to_restart() -> Self {
        let dir = crate::TempDir::new();
        let own = PrivateCluster::start(&["--durable"]);
        let database = TestDatabase::postgres_in(own.admin.clone(), Schema::Migrated);
        Self { database, cluster: Some(own), dir }
    }

    /// A directory whose PostgreSQL database is in a cluster of its own that takes
    /// connections on localhost only over TLS, with a certificate for `localhost` that
    /// `authority` signed (its PEM files, `ca.pem` among them, written into the directory);
    /// and the database's address there, without TLS parameters.
    pub fn postgres_over_tls(authority: &crate::TestAuthority) -> (Self, String) {
        let dir = crate::TempDir::new();
        authority.write_pem_files(dir.path());
        // A port free a moment ago; PostgreSQL cannot be asked to choose one.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let certificates = dir.path().display().to_string();
        let own = PrivateCluster::start(&["--tls", &certificates, &port.to_string()]);
        let database = TestDatabase::postgres_in(own.admin.clone(), Schema::Migrated);
        let (_, name) = database.postgres.clone().expect("a PostgreSQL database");
        let url = format!("host=localhost port={port} dbname={name} user={ROLE}");
        (Self { database, cluster: Some(own), dir }, url)
    }

    /// Crashes this directory's own PostgreSQL server (an immediate shutdown, as when it is
    /// killed) and starts it again; returns once it accepts connections.
    pub fn restart_database(&self) {
        let cluster = self.cluster.as_ref().expect("a cluster of the test's own");
        let status = std::process::Command::new(PrivateCluster::script())
            .args(["restart", &cluster.dir])
            .status()
            .expect("run scripts/postgres-cluster");
        assert!(status.success(), "scripts/postgres-cluster could not restart the cluster");
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// This directory's PostgreSQL database as the cluster's superuser would reach it, and the
    /// superuser's connection string: for what Exhale must refuse, and for setting up roles.
    pub fn superuser_url(&self) -> (String, String) {
        let (admin, name) = self.database.postgres.clone().expect("a PostgreSQL data directory");
        (format!("{admin} dbname={name}"), admin)
    }

    /// Runs `setup`, then `sql`, a query of one number, in one transaction on a connection of
    /// the test's own as Exhale's role: what the database itself lets that role see.
    pub fn count_as_exhale(&self, setup: &str, sql: &str) -> i64 {
        self.as_exhale(setup, |tx| {
            tx.query_one(sql, &[]).unwrap_or_else(|err| panic!("{sql}: {err}")).get(0)
        })
    }

    /// The first column of every row `sql` gives after `setup`, as Exhale's role, sorted.
    pub fn texts_as_exhale(&self, setup: &str, sql: &str) -> Vec<String> {
        let mut texts: Vec<String> = self.as_exhale(setup, |tx| {
            let rows = tx.query(sql, &[]).unwrap_or_else(|err| panic!("{sql}: {err}"));
            rows.iter().map(|row| row.get(0)).collect()
        });
        texts.sort();
        texts
    }

    /// The server's refusal of `sql` after `setup`, as Exhale's role, in its words.
    pub fn refusal_as_exhale(&self, setup: &str, sql: &str) -> String {
        self.as_exhale(setup, |tx| {
            let err = tx.batch_execute(sql).expect_err("the server should have refused it");
            err.as_db_error().map_or_else(|| err.to_string(), |db| db.message().to_owned())
        })
    }

    /// Runs `sql` after `setup` as Exhale's role, and commits it: what time would have left
    /// in the database (a sync that has come due).
    pub fn commit_as_exhale(&self, setup: &str, sql: &str) {
        let url = self.exhale_url();
        on_own_thread(|| {
            let mut client = postgres::Client::connect(&url, postgres::NoTls).expect("connect");
            let mut tx = client.transaction().expect("begin");
            tx.batch_execute(setup).expect("the setup");
            tx.batch_execute(sql).unwrap_or_else(|err| panic!("{sql}: {err}"));
            tx.commit().expect("commit");
        });
    }

    /// `f` after `setup`, in a transaction on a connection of the test's own as Exhale's role.
    fn as_exhale<T: Send>(
        &self,
        setup: &str,
        f: impl FnOnce(&mut postgres::Transaction<'_>) -> T + Send,
    ) -> T {
        let url = self.exhale_url();
        on_own_thread(|| {
            let mut client = postgres::Client::connect(&url, postgres::NoTls).expect("connect");
            let mut tx = client.transaction().expect("begin");
            tx.batch_execute(setup).expect("the setup");
            f(&mut tx)
        })
    }

    /// Runs `f` while a change of `household` is under way on PostgreSQL: a transaction of the
    /// test's own, as Exhale's role, holding that write's turn (`store::household_turn`) until
    /// `f` returns.
    pub fn during_a_write_of<T: Send>(&self, household: i64, f: impl FnOnce() -> T + Send) -> T {
        self.as_exhale(&store::household_turn(household), |_| f())
    }

    /// Runs each statement, one at a time, as the cluster's superuser (roles, databases).
    pub fn as_superuser(&self, statements: &[&str]) {
        let (_, admin) = self.superuser_url();
        on_own_thread(|| {
            let mut client = admin_client(&admin);
            for statement in statements {
                client.batch_execute(statement).unwrap_or_else(|err| panic!("{statement}: {err}"));
            }
        });
    }

    fn exhale_url(&self) -> String {
        match self.database.location() {
            Location::Postgres { url, .. } => url.clone(),
            Location::Sqlite(_) => panic!("a PostgreSQL data directory"),
        }
    }

    /// Runs `sql` on this directory's SQLite file past Exhale, as an older version or another
    /// program might have written it: what Exhale itself refuses to write.
    pub fn write_past_exhale(&self, sql: &str) {
        rusqlite::Connection::open(self.dir.path().join("exhale.db"))
            .and_then(|file| file.execute_batch(sql))
            .unwrap_or_else(|err| panic!("{sql}: {err}"));
    }

    /// Runs `sql` on this directory's database past Exhale, whichever the store (on
    /// PostgreSQL as Exhale's role, seeing every household), as a bug in Exhale might write
    /// it: committed when the database accepts it, else the database's refusal in its words.
    pub fn try_past_exhale(&self, sql: &str) -> Result<(), String> {
        if !self.database.is_postgres() {
            let file = rusqlite::Connection::open(self.dir.path().join("exhale.db"))
                .expect("open the SQLite file");
            file.execute_batch("PRAGMA foreign_keys = ON").expect("references checked");
            return file.execute_batch(sql).map_err(|err| err.to_string());
        }
        let url = self.exhale_url();
        on_own_thread(|| {
            let mut client = postgres::Client::connect(&url, postgres::NoTls).expect("connect");
            let mut tx = client.transaction().expect("begin");
            tx.batch_execute("SELECT set_config('exhale.every_household', 'on', true)")
                .expect("every household");
            let written = tx.batch_execute(sql).and_then(|()| tx.commit());
            written.map_err(|err| {
                err.as_db_error().map_or_else(|| err.to_string(), |db| db.message().to_owned())
            })
        })
    }

    /// The environment a child `exhale` needs besides `--data-dir`.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        self.database.env()
    }
}

impl Drop for DataDir {
    fn drop(&mut self) {
        // The database goes before its cluster.
        drop(std::mem::replace(&mut self.database, TestDatabase::sqlite(self.dir.path())));
        drop(self.cluster.take());
    }
}

/// A throwaway cluster started by `scripts/postgres-cluster` for one test.
struct PrivateCluster {
    dir: String,
    admin: String,
}

impl PrivateCluster {
    fn script() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/postgres-cluster")
    }

    fn start(options: &[&str]) -> Self {
        let output = std::process::Command::new(Self::script())
            .arg("start")
            .args(options)
            .output()
            .expect("run scripts/postgres-cluster");
        let printed = String::from_utf8_lossy(&output.stdout).into_owned();
        let mut lines = printed.lines();
        match (output.status.success(), lines.next(), lines.next()) {
            (true, Some(dir), Some(admin)) => Self { dir: dir.to_owned(), admin: admin.to_owned() },
            _ => panic!(
                "scripts/postgres-cluster could not start a cluster: {}",
                String::from_utf8_lossy(&output.stderr)
            ),
        }
    }
}

impl Drop for PrivateCluster {
    fn drop(&mut self) {
        let _ = std::process::Command::new(Self::script()).args(["stop", &self.dir]).status();
    }
}

impl Default for DataDir {
    fn default() -> Self {
        Self::new()
    }
}
