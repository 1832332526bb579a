//! Automatic backups while `exhale serve` runs (SQLite only: PostgreSQL has `pg_dump`): one
//! as soon as the newest in the directory is `every` old, again after a failure (at most five
//! minutes later), each written whole by `backup_files.rs`; how they stand for an owner's
//! Settings (`ops::backups::Backups`); and a restore from any of them, sealed or not.
//!
//! When the next one is due is read from the directory, not kept in memory, so a restart or a
//! second instance keeps the schedule. A failure is logged and shown in Settings until a
//! backup succeeds; the server serves on, and the backups already made stay.

use std::{path::Path, sync::Arc, time::Duration};

use domain::Text;
use jiff::{SignedDuration, Timestamp};
use ops::{
    Caller, OpError,
    backups::{BackupDownload, BackupFailure, BackupFile, BackupOverview, Backups},
};

use crate::{
    App,
    backup_files::{self, BackupError, BackupPlan, Passphrase},
    limits::locked,
    transactions,
};

/// The longest wait before trying again after a failure (or `every`, when shorter).
const RETRY: Duration = Duration::from_secs(300);

/// Why a backup could not be restored. Nothing was replaced.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    #[error(
        "{0} is sealed with a passphrase: give it in EXHALE_BACKUP_PASSPHRASE (or backup_passphrase in the configuration), or with --passphrase-stdin"
    )]
    NeedsPassphrase(String),
    #[error("{path}: {source}")]
    Unseal { path: String, source: crate::age::SealError },
    #[error("{0}")]
    Refused(OpError),
    #[error("cannot read {path}: {source}")]
    Io { path: String, source: std::io::Error },
}

impl App {
    /// Sets the automatic backups `exhale serve` makes while it leads the background work.
    pub fn set_backup_plan(&self, plan: Option<BackupPlan>) {
        *locked(&self.backup_plan) = plan;
    }

    fn backup_plan(&self) -> Option<BackupPlan> {
        locked(&self.backup_plan).clone()
    }

    /// Makes backups as the plan says, for as long as it runs (`jobs.rs` runs it while this
    /// instance leads); nothing without a plan.
    pub(crate) async fn run_backups(self: Arc<Self>) {
        let Some(plan) = self.backup_plan() else { return };
        tracing::info!(dir = %plan.dir.display(), every = %plan.every, keep = plan.keep, sealed = plan.passphrase.is_some(), "automatic backups");
        loop {
            let now = self.clock.now();
            let wait = self.next_backup_at(&plan).map_or(Duration::ZERO, |next| {
                Duration::try_from(next.duration_since(now)).unwrap_or(Duration::ZERO)
            });
            tokio::time::sleep(wait).await;
            if let Some(Err(_)) = self.back_up_now().await
                && locked(&self.backup_state).failure.is_none()
            {
                // Another process is writing one into the directory: look again a little later,
                // not at once.
                tokio::time::sleep(RETRY.min(plan.every.duration())).await;
            }
        }
    }

    /// Writes one backup now, as the plan says, and records how it went; `None` without a plan.
    pub async fn back_up_now(&self) -> Option<Result<BackupFile, String>> {
        let plan = self.backup_plan()?;
        let scratch = self.store.path().map(|path| {
            let mut name = path.as_os_str().to_owned();
            name.push(".backup.partial");
            std::path::PathBuf::from(name)
        })?;
        locked(&self.backup_state).writing = true;
        let store = self.store.clone();
        let now = self.clock.now();
        let dir = plan.dir.clone();
        let written = {
            tokio::task::spawn_blocking(move || backup_files::write(&store, &plan, &scratch, now))
                .await
                .unwrap_or_else(|err| {
                    Err(BackupError::Io {
                        what: "finish",
                        path: dir,
                        source: std::io::Error::other(err.to_string()),
                    })
                })
        };
        let mut state = locked(&self.backup_state);
        state.writing = false;
        Some(match written {
            Ok(file) => {
                tracing::info!(file = %file.name, bytes = file.bytes, "backup written");
                state.failure = None;
                Ok(file)
            }
            // Another instance is writing one into the same directory: theirs counts.
            Err(BackupError::Busy(dir)) => {
                Err(format!("another Exhale is writing a backup into {} now", dir.display()))
            }
            Err(err) => {
                let message = err.to_string();
                tracing::error!(error = %message, "automatic backup failed; the earlier backups are kept");
                state.failure = Some(BackupFailure {
                    at: ops::common::Timestamp(now),
                    message: message.clone(),
                });
                Err(message)
            }
        })
    }

    /// When the next backup is due: `every` after the newest in the directory, and after a
    /// failure not before a short wait; `None` when one is due now.
    fn next_backup_at(&self, plan: &BackupPlan) -> Option<Timestamp> {
        let every = SignedDuration::try_from(plan.every.duration()).unwrap_or(SignedDuration::MAX);
        let scheduled = backup_files::list(&plan.dir)
            .ok()
            .and_then(|files| files.into_iter().next())
            .and_then(|newest| newest.made_at.0.checked_add(every).ok());
        let retry = locked(&self.backup_state).failure.as_ref().and_then(|failure| {
            let wait = SignedDuration::try_from(RETRY).unwrap_or(SignedDuration::MAX).min(every);
            failure.at.0.checked_add(wait).ok()
        });
        scheduled.max(retry)
    }

    /// Replaces the database's content with a backup (`exhale restore`), sealed or not: a
    /// sealed one is opened with `passphrase` into a file beside the database first, and
    /// either is checked before anything is replaced.
    pub async fn restore_backup(
        &self,
        backup: &Path,
        passphrase: Option<Passphrase>,
    ) -> Result<(), RestoreError> {
        let shown = backup.display().to_string();
        let sealed = backup_files::is_sealed(backup)
            .map_err(|source| RestoreError::Io { path: shown.clone(), source })?;
        if !sealed {
            return self.restore(backup).await.map_err(RestoreError::Refused);
        }
        let passphrase = passphrase.ok_or_else(|| RestoreError::NeedsPassphrase(shown.clone()))?;
        let Some(database) = self.store.path() else {
            return self.restore(backup).await.map_err(RestoreError::Refused);
        };
        let mut plain = database.as_os_str().to_owned();
        plain.push(".restore.partial");
        let plain = std::path::PathBuf::from(plain);
        let (from, to) = (backup.to_owned(), plain.clone());
        tokio::task::spawn_blocking(move || backup_files::unseal(&from, passphrase.reveal(), &to))
            .await
            .map_err(|_| RestoreError::Refused(OpError::Internal))?
            .map_err(|source| RestoreError::Unseal { path: shown.clone(), source })?;
        let restored = self.restore(&plain).await.map_err(RestoreError::Refused);
        let _ = std::fs::remove_file(&plain);
        restored
    }

    /// Refuses anyone but an owner.
    fn owner_only(caller: &Caller) -> Result<(), OpError> {
        if caller.is_owner() {
            return Ok(());
        }
        Err(OpError::forbidden(Text::new("Only an owner of the household sees its backups.")))
    }

    /// Whether everything in the database is `caller`'s: their household is the only one and
    /// they are its only member. A backup is the whole file: other households, and other
    /// members' private accounts and subscriptions and their password hashes, which the app
    /// never shows them.
    async fn holds_only(&self, caller: &Caller) -> Result<bool, OpError> {
        let store = self.store.clone();
        let (household, member) = (caller.household_id, caller.member_id);
        transactions::blocking(move || {
            transactions::read(&store, |db| {
                let households =
                    store::households::household_ids(db).map_err(transactions::internal)?;
                let members = store::households::list_members(db, household)
                    .map_err(transactions::internal)?;
                Ok(households == [household] && members.iter().all(|m| m.id == member))
            })
        })
        .await
    }
}

impl Backups for App {
    fn backup_overview<'a>(
        &'a self,
        caller: &'a Caller,
    ) -> ops::BoxFuture<'a, Result<Option<BackupOverview>, OpError>> {
        Box::pin(async move {
            Self::owner_only(caller)?;
            let Some(plan) = self.backup_plan() else { return Ok(None) };
            let downloadable = self.holds_only(caller).await?;
            let dir = plan.dir.clone();
            let files = tokio::task::spawn_blocking(move || backup_files::list(&dir))
                .await
                .map_err(|_| OpError::Internal)?;
            let state = locked(&self.backup_state).clone();
            // A backup made after the failed try answers it, though the writer may not have
            // cleared the failure yet (it does once the file is in place).
            let newest =
                files.as_ref().ok().and_then(|files| files.iter().map(|f| f.made_at).max());
            let failure =
                state.failure.filter(|failure| newest.is_none_or(|made| made <= failure.at));
            let listing_failure = files.as_ref().err().map(|err| BackupFailure {
                at: ops::common::Timestamp(self.clock.now()),
                message: err.to_string(),
            });
            Ok(Some(BackupOverview {
                dir: plan.dir.display().to_string(),
                every: plan.every.to_string(),
                keep: plan.keep,
                sealed: plan.passphrase.is_some(),
                files: files.unwrap_or_default(),
                next_at: if state.writing {
                    None
                } else {
                    Some(ops::common::Timestamp(
                        self.next_backup_at(&plan).unwrap_or_else(|| self.clock.now()),
                    ))
                },
                last_failure: failure.or(listing_failure),
                downloadable,
            }))
        })
    }

    fn download_backup<'a>(
        &'a self,
        caller: &'a Caller,
        name: &'a str,
    ) -> ops::BoxFuture<'a, Result<BackupDownload, OpError>> {
        Box::pin(async move {
            Self::owner_only(caller)?;
            let not_found = || {
                OpError::not_found(
                    Text::new("There is no backup {name}; Settings, Backups lists them.")
                        .with("name", name),
                )
            };
            let plan = self.backup_plan().ok_or_else(not_found)?;
            if !self.holds_only(caller).await? {
                return Err(OpError::forbidden(Text::new(
                    "A backup holds everything on this server, other people's private items too, so only its operator can take one from the backup directory.",
                )));
            }
            let dir = plan.dir.clone();
            let wanted = name.to_owned();
            tokio::task::spawn_blocking(move || {
                let files = backup_files::list(&dir).map_err(|_| OpError::Internal)?;
                // Only a name the listing gives, so no other file can be asked for.
                let Some(file) = files.into_iter().find(|file| file.name == wanted) else {
                    return Ok(None);
                };
                let content = std::fs::read(dir.join(&file.name)).map_err(|err| {
                    tracing::warn!(error = %err, file = %file.name, "cannot read a backup");
                    OpError::Internal
                })?;
                Ok(Some(BackupDownload { name: file.name, content }))
            })
            .await
            .map_err(|_| OpError::Internal)??
            .ok_or_else(not_found)
        })
    }
}
