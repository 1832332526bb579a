//! The files of automatic backups: what a plan says (where, how often, how many, sealed or
//! not), their names, and writing one whole: a consistent copy of the database under a name
//! no reader takes for a backup, checked as a restore would check it, sealed with the
//! passphrase when there is one (and read back), made durable, renamed into place, and only
//! then the oldest beyond the number kept removed. A backup cut short (a full disk, `kill -9`)
//! stays a `.partial` file, which the next run removes and no listing counts.

use std::{
    fs::File,
    io::{BufReader, BufWriter, Write},
    path::{Path, PathBuf},
};

use jiff::Timestamp;
use ops::backups::BackupFile;
use sha2::{Digest, Sha256};

use crate::age;

/// How often backups are made: a whole number of seconds, minutes, hours or days, written as
/// `30s`, `15m`, `6h` or `1d`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BackupInterval {
    count: u64,
    unit: char,
}

impl BackupInterval {
    /// Once a day, the default.
    pub const DAILY: Self = Self { count: 1, unit: 'd' };

    pub fn duration(self) -> std::time::Duration {
        let seconds = match self.unit {
            'm' => 60,
            'h' => 3_600,
            'd' => 86_400,
            _ => 1,
        };
        std::time::Duration::from_secs(self.count.saturating_mul(seconds))
    }
}

impl std::fmt::Display for BackupInterval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.count, self.unit)
    }
}

/// Why a backup interval was refused.
#[derive(Debug, thiserror::Error)]
#[error("{0:?} is not an interval: a whole number and s, m, h or d, such as 30s, 15m, 6h or 1d")]
pub struct BadInterval(String);

impl std::str::FromStr for BackupInterval {
    type Err = BadInterval;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || BadInterval(text.to_owned());
        let unit = text.chars().last().filter(|u| matches!(u, 's' | 'm' | 'h' | 'd'));
        let unit = unit.ok_or_else(bad)?;
        let digits = &text[..text.len() - 1];
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let count: u64 = digits.parse().map_err(|_| bad())?;
        // At most a year: beyond, a plan is a mistake, and a day's seconds would overflow.
        let interval = Self { count, unit };
        if count == 0 || interval.duration() > std::time::Duration::from_secs(366 * 86_400) {
            return Err(bad());
        }
        Ok(interval)
    }
}

/// A passphrase backups are sealed with. Never shown: its `Debug` hides it.
#[derive(Clone)]
pub struct Passphrase(String);

impl Passphrase {
    pub fn new(passphrase: String) -> Self {
        Self(passphrase)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn reveal(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Passphrase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Passphrase(***)")
    }
}

/// Automatic backups as configured.
#[derive(Clone, Debug)]
pub struct BackupPlan {
    pub dir: PathBuf,
    pub every: BackupInterval,
    /// How many backups are kept (at least one).
    pub keep: usize,
    /// Seal each backup with this passphrase (age format), when set.
    pub passphrase: Option<Passphrase>,
}

/// How automatic backups are going, as this instance saw them.
#[derive(Clone, Debug, Default)]
pub(crate) struct BackupState {
    /// A backup is being written now.
    pub(crate) writing: bool,
    /// The last try's failure, until one succeeds.
    pub(crate) failure: Option<ops::backups::BackupFailure>,
}

/// Why a backup was not made; what was there before is kept whatever happened.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BackupError {
    #[error(
        "the backup directory {0} does not exist or is not a directory: create it (or mount the disk it is on)"
    )]
    NoDirectory(PathBuf),
    #[error("cannot {what} {path}: {source}")]
    Io { what: &'static str, path: PathBuf, source: std::io::Error },
    #[error("the copy did not pass its check, so it was not kept: {0}")]
    Check(store::StoreError),
    #[error("the copy could not be sealed: {0}")]
    Seal(age::SealError),
    #[error("the sealed copy did not read back as the database, so it was not kept")]
    ReadBack,
    #[error("another Exhale is writing a backup into {0} now")]
    Busy(PathBuf),
}

/// `path` with an IO failure, said as what was being done.
fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> BackupError + use<> {
    let path = path.to_owned();
    move |source| BackupError::Io { what, path, source }
}

/// What every backup's name starts with.
const PREFIX: &str = "exhale-";
/// The end of a plain backup's name, and of a sealed one's.
const PLAIN: &str = ".db";
const SEALED: &str = ".db.age";
/// A file being written: never a backup until renamed.
const PARTIAL: &str = ".partial";
/// The time in a backup's name, UTC.
const NAME_TIME: &str = "%Y%m%dT%H%M%SZ";

/// A backup's name for the time it was made.
pub(crate) fn file_name(at: Timestamp, sealed: bool) -> String {
    let end = if sealed { SEALED } else { PLAIN };
    format!("{PREFIX}{}{end}", at.strftime(NAME_TIME))
}

/// When the backup named `name` was made; `None` for any other file.
fn made_at(name: &str) -> Option<Timestamp> {
    let rest = name.strip_prefix(PREFIX)?;
    let time = rest.strip_suffix(SEALED).or_else(|| rest.strip_suffix(PLAIN))?;
    let civil = jiff::civil::DateTime::strptime("%Y%m%dT%H%M%S", time.strip_suffix('Z')?).ok()?;
    Some(civil.to_zoned(jiff::tz::TimeZone::UTC).ok()?.timestamp())
}

/// The backups in `dir`, newest first.
pub(crate) fn list(dir: &Path) -> Result<Vec<BackupFile>, BackupError> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io("read", dir))? {
        let entry = entry.map_err(io("read", dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(made_at) = made_at(&name) else { continue };
        let metadata = entry.metadata().map_err(io("read", &entry.path()))?;
        if metadata.is_file() {
            files.push(BackupFile {
                name,
                made_at: ops::common::Timestamp(made_at),
                bytes: metadata.len(),
            });
        }
    }
    files.sort_by(|a, b| b.made_at.cmp(&a.made_at).then_with(|| b.name.cmp(&a.name)));
    Ok(files)
}

/// Writes one backup of `store` as `plan` says, made at `now`, and then removes the oldest
/// beyond the number kept. `scratch` is where a sealed backup's plain copy is made first:
/// beside the database, never in the backup directory.
pub(crate) fn write(
    store: &store::Store,
    plan: &BackupPlan,
    scratch: &Path,
    now: Timestamp,
) -> Result<BackupFile, BackupError> {
    let dir = &plan.dir;
    if !dir.is_dir() {
        return Err(BackupError::NoDirectory(dir.clone()));
    }
    // Two instances on one database may both lead their schedule (SQLite has no election):
    // the directory's lock lets one write at a time.
    let lock_path = dir.join(".exhale-backup.lock");
    let lock = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(io("write in", dir))?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Err(BackupError::Busy(dir.clone())),
        Err(std::fs::TryLockError::Error(source)) => {
            return Err(BackupError::Io { what: "lock", path: lock_path, source });
        }
    }
    remove_partials(dir)?;
    let name = file_name(now, plan.passphrase.is_some());
    let target = dir.join(&name);
    let partial = dir.join(format!("{name}{PARTIAL}"));
    let written = match &plan.passphrase {
        None => write_plain(store, &partial),
        Some(passphrase) => write_sealed(store, passphrase, scratch, &partial),
    };
    if let Err(err) = written {
        let _ = std::fs::remove_file(&partial);
        return Err(err);
    }
    std::fs::rename(&partial, &target).map_err(io("rename", &partial))?;
    // The backup is made: what fails from here on is said, and does not make the schedule
    // write another at once (which, with old ones never removed, would fill the disk).
    if let Err(err) = File::open(dir).and_then(|d| d.sync_all()) {
        tracing::warn!(dir = %dir.display(), error = %err, "cannot sync the backup directory");
    }
    let bytes = std::fs::metadata(&target).map(|m| m.len()).unwrap_or_default();
    match list(dir) {
        Ok(files) => {
            for old in files.into_iter().skip(plan.keep.max(1)) {
                let path = dir.join(&old.name);
                if let Err(err) = std::fs::remove_file(&path) {
                    tracing::warn!(file = %path.display(), error = %err, "cannot remove an old backup");
                }
            }
        }
        Err(err) => tracing::warn!(error = %err, "cannot list the backups to remove old ones"),
    }
    Ok(BackupFile { name, made_at: ops::common::Timestamp(now), bytes })
}

/// Removes what earlier runs left half-written (`kill -9`, a full disk).
fn remove_partials(dir: &Path) -> Result<(), BackupError> {
    for entry in std::fs::read_dir(dir).map_err(io("read", dir))? {
        let entry = entry.map_err(io("read", dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(PREFIX) && name.contains(PARTIAL) {
            std::fs::remove_file(entry.path()).map_err(io("remove", &entry.path()))?;
        }
    }
    Ok(())
}

fn write_plain(store: &store::Store, partial: &Path) -> Result<(), BackupError> {
    store.backup(partial).map_err(|err| copy_failed(err, partial))?;
    store::check_backup(partial).map_err(BackupError::Check)?;
    File::open(partial).and_then(|f| f.sync_all()).map_err(io("sync", partial))
}

fn write_sealed(
    store: &store::Store,
    passphrase: &Passphrase,
    scratch: &Path,
    partial: &Path,
) -> Result<(), BackupError> {
    let _ = std::fs::remove_file(scratch);
    let sealed = (|| {
        store.backup(scratch).map_err(|err| copy_failed(err, scratch))?;
        store::check_backup(scratch).map_err(BackupError::Check)?;
        let mut plain = BufReader::new(File::open(scratch).map_err(io("read", scratch))?);
        let mut out = BufWriter::new(File::create(partial).map_err(io("write", partial))?);
        let key =
            age::seal(passphrase.reveal(), &mut plain, &mut out).map_err(|err| match err {
                age::SealError::Io(source) => {
                    BackupError::Io { what: "write", path: partial.to_owned(), source }
                }
                other => BackupError::Seal(other),
            })?;
        let file = out.into_inner().map_err(|err| io("write", partial)(err.into_error()))?;
        file.sync_all().map_err(io("sync", partial))?;
        // Read back what was written, every chunk, and compare it with the copy it sealed.
        let mut expected = Sha256::new();
        std::io::copy(&mut File::open(scratch).map_err(io("read", scratch))?, &mut expected)
            .map_err(io("read", scratch))?;
        let mut opened = Sha256::new();
        let mut sealed = BufReader::new(File::open(partial).map_err(io("read", partial))?);
        age::open_with_key(&key, &mut sealed, &mut opened).map_err(|_| BackupError::ReadBack)?;
        if opened.finalize() != expected.finalize() {
            return Err(BackupError::ReadBack);
        }
        Ok(())
    })();
    let _ = std::fs::remove_file(scratch);
    sealed
}

/// A copy that failed: a disk's refusal says so as an IO failure, anything else as the
/// store's.
fn copy_failed(err: store::StoreError, path: &Path) -> BackupError {
    BackupError::Io { what: "write", path: path.to_owned(), source: std::io::Error::other(err) }
}

/// Opens a sealed backup with `passphrase` into a plain database file at `plain`, which is
/// removed again on failure.
pub(crate) fn unseal(backup: &Path, passphrase: &str, plain: &Path) -> Result<(), age::SealError> {
    let opened = (|| {
        let mut sealed = BufReader::new(File::open(backup)?);
        let mut out = BufWriter::new(File::create(plain)?);
        age::open(passphrase, &mut sealed, &mut out)?;
        out.flush()?;
        Ok(())
    })();
    if opened.is_err() {
        let _ = std::fs::remove_file(plain);
    }
    opened
}

/// Whether the file at `path` is a sealed backup (it starts as an age file does).
pub(crate) fn is_sealed(path: &Path) -> std::io::Result<bool> {
    let mut head = [0u8; 32];
    let read = std::io::Read::read(&mut File::open(path)?, &mut head)?;
    Ok(age::is_sealed(&head[..read]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_is_a_whole_number_and_a_unit() {
        for (text, seconds) in [("30s", 30), ("15m", 900), ("6h", 21_600), ("1d", 86_400)] {
            let interval: BackupInterval = text.parse().unwrap();
            assert_eq!(interval.duration().as_secs(), seconds);
            assert_eq!(interval.to_string(), text);
        }
        for bad in ["", "d", "0h", "1.5h", "-1d", "6", "6 h", "1w", "400d", "99999999999999999999d"]
        {
            let err = bad.parse::<BackupInterval>().unwrap_err().to_string();
            assert!(err.contains("30s, 15m, 6h or 1d"), "{bad}: {err}");
        }
    }

    #[test]
    fn a_name_says_when_and_only_backups_are_named_so() {
        let at: Timestamp = "2026-12-06T16:30:05Z".parse().unwrap();
        assert_eq!(file_name(at, false), "exhale-20261206T163005Z.db");
        assert_eq!(file_name(at, true), "exhale-20261206T163005Z.db.age");
        assert_eq!(made_at("exhale-20261206T163005Z.db.age"), Some(at));
        for other in [
            "exhale-20261206T163005Z.db.partial",
            "exhale-20261206T163005Z.db.age.partial",
            "exhale.db",
            "exhale-2026.db",
            ".exhale-backup.lock",
        ] {
            assert_eq!(made_at(other), None, "{other}");
        }
    }

    #[test]
    fn a_passphrase_is_never_shown() {
        let plan = BackupPlan {
            dir: "/b".into(),
            every: "1d".parse().unwrap(),
            keep: 3,
            passphrase: Some(Passphrase::new("hunter2".into())),
        };
        assert!(!format!("{plan:?}").contains("hunter2"));
    }
}
