//! Automatic backups as an owner sees them on the web: where they go, how often, the ones
//! kept, the next one and the last failure, and a backup to download. Not an op: backups are
//! the server's, written by whichever `exhale serve` runs them, and no agent needs a copy of
//! the whole database.

use crate::{BoxFuture, Caller, OpError, common::Timestamp};

/// One backup kept in the backup directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackupFile {
    /// Its file name, e.g. `exhale-20261206T163000Z.db` (`.db.age` when sealed).
    pub name: String,
    pub made_at: Timestamp,
    pub bytes: u64,
}

/// What went wrong with the last try, when it failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackupFailure {
    pub at: Timestamp,
    /// What failed, in English, for an owner or operator to act on (a log line says the same).
    pub message: String,
}

/// Automatic backups, as they stand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackupOverview {
    /// The directory, as the configuration names it.
    pub dir: String,
    /// How often, as the configuration writes it (`6h`).
    pub every: String,
    /// How many are kept.
    pub keep: usize,
    /// Whether they are sealed with a passphrase (age format).
    pub sealed: bool,
    /// The backups kept, newest first.
    pub files: Vec<BackupFile>,
    /// When the next one is due; `None` while one is being written.
    pub next_at: Option<Timestamp>,
    /// The last try's failure, until a backup succeeds.
    pub last_failure: Option<BackupFailure>,
    /// Whether the caller may download one: a backup holds everything in the database, so only
    /// when their household is the only one and they are its only member.
    pub downloadable: bool,
}

/// A backup's content, to download.
pub struct BackupDownload {
    pub name: String,
    pub content: Vec<u8>,
}

/// Automatic backups, as the web adapter sees them. Owners only.
pub trait Backups: Send + Sync {
    /// The backups and their schedule; `None` when automatic backups are off.
    fn backup_overview<'a>(
        &'a self,
        caller: &'a Caller,
    ) -> BoxFuture<'a, Result<Option<BackupOverview>, OpError>>;

    /// One of the backups kept, by its name (as [`BackupOverview::files`] gives it).
    fn download_backup<'a>(
        &'a self,
        caller: &'a Caller,
        name: &'a str,
    ) -> BoxFuture<'a, Result<BackupDownload, OpError>>;
}
