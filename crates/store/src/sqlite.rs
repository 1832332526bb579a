//! SQLite: one writer connection and a few read-only readers on one database file in WAL
//! mode, and what only a file can do (a backup while running, SQLite's own checks, a restore).

use std::{
    fs::{File, OpenOptions},
    path::{Path, PathBuf},
    sync::Mutex,
    time::Duration,
};

use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use crate::{
    Result, StoreError,
    db::{Conn, Db},
    migrations,
};

/// The database: one writer and a pool of read-only readers.
pub(crate) struct SqliteStore {
    path: PathBuf,
    writer: Mutex<Connection>,
    readers: Mutex<Vec<Connection>>,
    /// A shared lock on the database's lock file (`<database>.lock`) for as long as the store
    /// is open, in every process (`serve`, `mcp`, the other commands): [`Store::restore`]
    /// takes it alone, so it never replaces a database another Exhale has open.
    in_use: File,
}

/// Read connections kept open between reads. Enough for a busy server's concurrent reads
/// (16 agents at once in the benchmark): a connection closed and reopened loses its prepared
/// statements, which showed as 4% of an MCP read under that load. Each costs well under 1 MB.
const MAX_IDLE_READERS: usize = 16;

impl SqliteStore {
    /// Opens (creating if needed) the database file and applies pending migrations.
    pub(crate) fn open(path: &Path) -> Result<Self> {
        let lock_path = lock_file(path);
        let locked = |source| StoreError::Lock { path: lock_path.clone(), source };
        // A lock needs the file only open, not writable: one another user created (a backup
        // run as root, say) still locks for the server's own user.
        let in_use = match File::open(&lock_path) {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                OpenOptions::new().create(true).truncate(false).write(true).open(&lock_path)
            }
            opened => opened,
        }
        .map_err(locked)?;
        // Waits while a restore runs; never while other Exhales only use the database.
        in_use.lock_shared().map_err(locked)?;
        let mut writer = Connection::open(path)
            .map_err(|source| StoreError::Open { path: path.to_owned(), source })?;
        configure(&writer)?;
        writer.pragma_update(None, "journal_mode", "WAL")?;
        // One writer, so its page cache can be larger than a reader's: an import of 100,000
        // transactions touches every index, and a smaller cache spills them mid-transaction.
        writer.pragma_update(None, "cache_size", -WRITER_CACHE_KIB)?;
        if let Some(version) = migrations::older_schema(&writer)? {
            keep_before_upgrade(&writer, path, version)?;
        }
        migrations::apply(&mut writer)?;
        Ok(Self {
            path: path.to_owned(),
            writer: Mutex::new(writer),
            readers: Mutex::new(Vec::new()),
            in_use,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f` in a read transaction on a read-only connection. The outer result is the
    /// store's own failure; the inner one is `f`'s.
    pub(crate) fn read<T, E>(
        &self,
        f: impl FnOnce(&Db<'_>) -> Result<T, E>,
    ) -> Result<Result<T, E>> {
        let conn = match self.readers.lock().map_err(|_| StoreError::Busy)?.pop() {
            Some(conn) => conn,
            None => self.open_reader()?,
        };
        let result = (|| {
            let tx = conn.unchecked_transaction()?;
            let value = f(&Db { conn: Conn::Sqlite(&tx) });
            tx.rollback()?;
            Ok(value)
        })();
        if let Ok(mut readers) = self.readers.lock()
            && readers.len() < MAX_IDLE_READERS
        {
            readers.push(conn);
        }
        result
    }

    /// Runs `f` in a write transaction; commits when `commit` approves its result, rolls back
    /// otherwise (dry runs, failures).
    pub(crate) fn write<T, E>(
        &self,
        commit: impl FnOnce(&Result<T, E>) -> bool,
        f: impl FnOnce(&Db<'_>) -> Result<T, E>,
    ) -> Result<Result<T, E>> {
        // A panic in an earlier write dropped (rolled back) its transaction, so the connection
        // is fine to reuse.
        let mut conn = self.writer.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let value = f(&Db { conn: Conn::Sqlite(&tx) });
        if commit(&value) {
            tx.commit()?;
        } else {
            tx.rollback()?;
        }
        Ok(value)
    }

    /// Writes a consistent copy of the database to `target`, while the app keeps running.
    pub(crate) fn backup(&self, target: &Path) -> Result<()> {
        let source = self.open_reader()?;
        let mut destination = Connection::open(target)
            .map_err(|source| StoreError::Open { path: target.to_owned(), source })?;
        let backup = rusqlite::backup::Backup::new(&source, &mut destination)?;
        backup.run_to_completion(256, Duration::from_millis(0), None)?;
        Ok(())
    }

    /// SQLite's own checks of the file (`integrity_check`) and of every reference
    /// (`foreign_key_check`): what they found, empty when the database is sound.
    pub(crate) fn check(&self) -> Result<Vec<String>> {
        problems(&self.open_reader()?)
    }

    /// Replaces the database's content with a backup made by [`Store::backup`], then applies
    /// any migrations the backup predates. Refuses files that are not Exhale databases, and
    /// refuses while another Exhale has the database open (a running server would carry on
    /// with what it had, and rows written after the backup would vanish under it).
    pub(crate) fn restore(&self, source: &Path) -> Result<()> {
        self.alone(|| self.restore_alone(source))
    }

    /// Runs `f` while no other process has the database open (`StoreError::InUse` if one
    /// has): this store's own shared lock is let go, so the exclusive one is taken only when
    /// no other process holds one; the shared one comes back whatever happens.
    pub(crate) fn alone<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let locked = |source| StoreError::Lock { path: lock_file(&self.path), source };
        self.in_use.unlock().map_err(locked)?;
        let alone = match self.in_use.try_lock() {
            Ok(()) => Ok(()),
            Err(std::fs::TryLockError::WouldBlock) => {
                Err(StoreError::InUse { path: self.path.clone() })
            }
            Err(std::fs::TryLockError::Error(err)) => Err(locked(err)),
        };
        let done = alone.and_then(|()| f());
        self.in_use.unlock().map_err(locked)?;
        self.in_use.lock_shared().map_err(locked)?;
        done
    }

    fn restore_alone(&self, source: &Path) -> Result<()> {
        let backup = open_backup(source)?;
        let mut writer = self.writer.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        rusqlite::backup::Backup::new(&backup, &mut writer)?.run_to_completion(
            256,
            Duration::from_millis(0),
            None,
        )?;
        migrations::apply(&mut writer)?;
        if let Ok(mut readers) = self.readers.lock() {
            readers.clear();
        }
        Ok(())
    }

    pub(crate) fn open_reader(&self) -> Result<Connection> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
                | OpenFlags::SQLITE_OPEN_URI,
        )
        .map_err(|source| StoreError::Open { path: self.path.clone(), source })?;
        configure(&conn)?;
        Ok(conn)
    }
}

/// What [`check_backup`] found in a sound backup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BackupFacts {
    /// The schema version the backup was written at.
    pub schema_version: usize,
    /// How many households it holds.
    pub households: u64,
}

/// Opens a backup to read from, once it is known to be a sound database of an Exhale no newer
/// than this one: an Exhale database at all, SQLite's integrity and reference checks clean,
/// and its households readable. Whatever fails, the error says what, and nothing was changed.
fn open_backup(source: &Path) -> Result<Connection> {
    let not_backup =
        || StoreError::Corrupt(format!("{} is not an Exhale backup", source.display()));
    let backup = Connection::open_with_flags(source, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|err| StoreError::Open { path: source.to_owned(), source: err })?;
    // A file that is not SQLite at all fails on its first read.
    let version: usize = backup
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .map_err(|_| not_backup())?;
    let is_exhale: bool = backup
        .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'households'")
        .and_then(|mut query| query.exists([]))
        .map_err(|_| not_backup())?;
    if !is_exhale || version == 0 {
        return Err(not_backup());
    }
    if version > migrations::MIGRATIONS.len() {
        return Err(StoreError::NewerSchema {
            found: version,
            known: migrations::MIGRATIONS.len(),
        });
    }
    let found = problems(&backup)
        .map_err(|err| StoreError::Corrupt(format!("{} is damaged: {err}", source.display())))?;
    if !found.is_empty() {
        return Err(StoreError::Corrupt(format!(
            "{} is damaged: {}",
            source.display(),
            found.join("; ")
        )));
    }
    Ok(backup)
}

/// Checks a backup file as a restore would before it replaces anything (see `open_backup`),
/// and reads what it holds.
pub(crate) fn check_backup(source: &Path) -> Result<BackupFacts> {
    let backup = open_backup(source)?;
    let schema_version: usize =
        backup.pragma_query_value(None, "user_version", |row| row.get(0))?;
    let households: i64 =
        backup.query_row("SELECT count(*) FROM households", [], |row| row.get(0))?;
    Ok(BackupFacts { schema_version, households: households.try_into().unwrap_or_default() })
}

fn problems(reader: &Connection) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    let mut integrity = reader.prepare("PRAGMA integrity_check")?;
    for row in integrity.query_map([], |row| row.get::<_, String>(0))? {
        let row = row?;
        if row != "ok" {
            problems.push(row);
        }
    }
    let mut references = reader.prepare("PRAGMA foreign_key_check")?;
    let dangling = references.query_map([], |row| {
        Ok(format!(
            "{} row {} refers to a missing {}",
            row.get::<_, String>(0)?,
            row.get::<_, Option<i64>>(1)?.unwrap_or_default(),
            row.get::<_, String>(2)?
        ))
    })?;
    for row in dangling {
        problems.push(row?);
    }
    Ok(problems)
}

/// Before a database an older Exhale wrote is migrated, a copy of it as it is, beside it:
/// `exhale.db.schema-30.bak` for schema version 30, so a person can go back to the version
/// they ran with their data whatever the new one does. Written under another name and then
/// renamed, so a copy cut short is never taken for one; a copy that cannot be written stops
/// the upgrade, and the database is left as it was.
fn keep_before_upgrade(writer: &Connection, database: &Path, version: usize) -> Result<()> {
    let target = beside(database, &format!(".schema-{version}.bak"));
    let partial = beside(database, &format!(".schema-{version}.bak.partial"));
    let copy = || -> Result<()> {
        let _ = std::fs::remove_file(&partial);
        let mut destination = Connection::open(&partial)
            .map_err(|source| StoreError::Open { path: partial.clone(), source })?;
        rusqlite::backup::Backup::new(writer, &mut destination)?.run_to_completion(
            256,
            Duration::from_millis(0),
            None,
        )?;
        drop(destination);
        std::fs::rename(&partial, &target).map_err(|err| {
            StoreError::Config(format!(
                "could not keep a copy of the database before upgrading it ({}: {err}); nothing was changed",
                target.display()
            ))
        })
    };
    copy().inspect_err(|_| {
        let _ = std::fs::remove_file(&partial);
    })
}

/// A file beside `database`, named after it with `suffix`.
fn beside(database: &Path, suffix: &str) -> PathBuf {
    let mut name = database.file_name().unwrap_or_default().to_owned();
    name.push(suffix);
    database.with_file_name(name)
}

/// The lock file beside a database: `exhale.db.lock` for `exhale.db`.
fn lock_file(database: &Path) -> PathBuf {
    beside(database, ".lock")
}

/// The writer's page cache, in KiB.
const WRITER_CACHE_KIB: i64 = 32 * 1024;

/// How much of the file connections read through a memory map: every reader then shares the
/// operating system's cache of the file instead of copying pages into its own small cache
/// with a system call each (measured: most of a search over 100,000 transactions went there).
const MMAP_BYTES: i64 = 256 * 1024 * 1024;

fn configure(conn: &Connection) -> Result<()> {
    conn.busy_timeout(Duration::from_secs(5))?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    // The pragma answers with the size it took, or nothing where maps are not built in.
    conn.prepare(&format!("PRAGMA mmap_size = {MMAP_BYTES}"))?.query([])?.next()?;
    conn.set_prepared_statement_cache_capacity(64);
    migrations::add_functions(conn)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A database file of the tests' own, in a directory removed afterwards.
    pub(crate) struct Scratch(pub(crate) PathBuf);

    impl Scratch {
        pub(crate) fn new(name: &str) -> Self {
            let dir =
                std::env::temp_dir().join(format!("exhale-store-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Self(dir)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn version_and_households(path: &Path) -> (usize, i64) {
        let conn = Connection::open(path).unwrap();
        let version = conn.pragma_query_value(None, "user_version", |row| row.get(0)).unwrap();
        let count =
            conn.query_row("SELECT COUNT(*) FROM households", [], |row| row.get(0)).unwrap();
        (version, count)
    }

    #[test]
    fn a_database_an_older_exhale_wrote_is_copied_before_it_is_migrated_and_only_then() {
        let scratch = Scratch::new("upgrade");
        let path = scratch.0.join("exhale.db");
        let older = migrations::MIGRATIONS.len() - 1;
        {
            let mut conn = Connection::open(&path).unwrap();
            migrations::apply_first(&mut conn, older).unwrap();
            conn.execute_batch(
                "INSERT INTO households (id, name, currency, time_zone, created_at) VALUES (1, 'Home', 'EUR', 'UTC', 'now');",
            )
            .unwrap();
        }
        let store = SqliteStore::open(&path).unwrap();
        let copy = scratch.0.join(format!("exhale.db.schema-{older}.bak"));
        assert_eq!(version_and_households(&copy), (older, 1), "the copy is the database as it was");
        assert!(!scratch.0.join(format!("exhale.db.schema-{older}.bak.partial")).exists());
        drop(store);
        assert_eq!(version_and_households(&path), (migrations::MIGRATIONS.len(), 1));

        // Current, or new: nothing to copy.
        std::fs::remove_file(&copy).unwrap();
        drop(SqliteStore::open(&path).unwrap());
        drop(SqliteStore::open(&scratch.0.join("new.db")).unwrap());
        let copies = std::fs::read_dir(&scratch.0)
            .unwrap()
            .filter(|entry| entry.as_ref().unwrap().file_name().to_string_lossy().contains(".bak"))
            .count();
        assert_eq!(copies, 0);
    }

    #[test]
    fn a_damaged_or_foreign_backup_is_refused_and_nothing_is_replaced() {
        let scratch = Scratch::new("damaged");
        let store = SqliteStore::open(&scratch.0.join("exhale.db")).unwrap();
        store
            .write(
                |_: &Result<(), StoreError>| true,
                |db| {
                    for id in 1..=2_000 {
                        db.execute(
                            "INSERT INTO households (id, name, currency, time_zone, created_at) VALUES (?1, 'Home', 'EUR', 'UTC', 'now')",
                            &[&id],
                        )?;
                    }
                    Ok(())
                },
            )
            .unwrap()
            .unwrap();
        let good = scratch.0.join("good.db");
        store.backup(&good).unwrap();
        let facts = check_backup(&good).unwrap();
        assert_eq!(facts.households, 2_000);
        assert_eq!(facts.schema_version, migrations::MIGRATIONS.len());

        let other = SqliteStore::open(&scratch.0.join("other.db")).unwrap();
        let bytes = std::fs::read(&good).unwrap();
        let page = 4096;
        let mut garbled = bytes.clone();
        let middle = (bytes.len() / page / 2) * page;
        garbled[middle..middle + page].fill(0xA5);
        let not_sqlite = b"age-encryption.org/v1\n".repeat(300);
        for (name, content) in [
            ("cut.db", &bytes[..bytes.len() / 2]),
            ("garbled.db", &garbled[..]),
            ("not-sqlite.db", &not_sqlite[..]),
        ] {
            let path = scratch.0.join(name);
            std::fs::write(&path, content).unwrap();
            let err = check_backup(&path).unwrap_err();
            assert!(matches!(err, StoreError::Corrupt(_)), "{name}: {err}");
            let err = other.restore(&path).unwrap_err();
            assert!(matches!(err, StoreError::Corrupt(_)), "{name}: {err}");
        }
        drop(other);
        assert_eq!(version_and_households(&scratch.0.join("other.db")).1, 0, "nothing replaced");
        drop(store);
    }
}
