//! Background work: recording charges whose date has come, at start and after each local
//! midnight, syncing the bank connections whose time has come, and automatic backups
//! (`backups.rs`). Messages are planned and
//! delivered through `outbox.rs`.

use std::sync::Arc;

use jiff::{SignedDuration, tz::TimeZone};
use ops::OpError;

use crate::{App, clock, subscription_rules, transactions};

impl App {
    /// Records due charges in every household; returns how many were recorded.
    pub async fn materialise_due_charges(&self) -> Result<usize, OpError> {
        let store = self.store.clone();
        let now = self.clock.now();
        transactions::blocking(move || {
            let households = transactions::read(&store, |db| {
                store::households::household_ids(db).map_err(transactions::internal)
            })?;
            // One household at a time, each in its own turn: the others' changes go on
            // meanwhile, on PostgreSQL, where a job over every household in one write held
            // them all back for as long as it ran.
            let mut count = 0;
            for household_id in households {
                count += transactions::write_in(
                    &store,
                    household_id,
                    store::Writing::Change,
                    |_| true,
                    |db| {
                        let household = store::households::get_household(db, household_id)
                            .map_err(transactions::internal)?;
                        let today = clock::today_in(&household, now);
                        let mut count = 0;
                        for row in store::subscriptions::list(db, household_id, None)
                            .map_err(transactions::internal)?
                        {
                            count += subscription_rules::materialise_subscription(db, &row, today)
                                .map_err(transactions::internal)?;
                        }
                        Ok::<_, OpError>(count)
                    },
                )?;
            }
            Ok(count)
        })
        .await
    }

    /// Runs the charge job now and after every midnight (UTC and the households' own
    /// midnights are covered by running hourly and letting the job find what is due). The
    /// outbox is delivered by the `channels` crate's worker.
    pub fn spawn_jobs(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let (charges, banks, backups) = (self.clone(), self.clone(), self.clone());
        let charges = async move {
            loop {
                match charges.materialise_due_charges().await {
                    Ok(count) if count > 0 => tracing::info!(count, "recorded due charges"),
                    Ok(_) => {}
                    Err(err) => tracing::warn!(code = err.code(), "recording due charges failed"),
                }
                tokio::time::sleep(until_next_hour(charges.clock.now())).await;
            }
        };
        let banks = async move {
            loop {
                let synced = banks.sync_due_bank_connections().await;
                if synced > 0 {
                    tracing::info!(synced, "synced bank connections");
                }
                tokio::time::sleep(BANK_SYNC_CHECK).await;
            }
        };
        tokio::spawn(async move {
            tokio::join!(charges, banks, backups.run_backups());
        })
    }

    /// Syncs every bank connection whose time has come, each as the member who linked it
    /// (`Actor::System`, so the activity says the schedule did it); returns how many synced.
    /// A connection another instance or a person is syncing is left to them (its lease).
    pub async fn sync_due_bank_connections(&self) -> usize {
        let store = self.store.clone();
        let now = clock::timestamp_text(self.clock.now());
        let due = transactions::blocking(move || {
            transactions::read(&store, |db| {
                let mut due = Vec::new();
                for (household, id, member) in
                    store::banks::due(db, &now).map_err(transactions::internal)?
                {
                    let member = store::households::get_member(db, household, member)
                        .map_err(transactions::internal)?;
                    due.push((id, member));
                }
                Ok(due)
            })
        })
        .await;
        let due = match due {
            Ok(due) => due,
            Err(err) => {
                tracing::warn!(code = err.code(), "listing due bank syncs failed");
                return 0;
            }
        };
        let mut synced = 0;
        for (id, member) in due {
            let caller = ops::Caller {
                household_id: member.household_id,
                member_id: member.id,
                role: member.role,
                scope: ops::Scope::Write,
                actor: ops::Actor::System,
                via: ops::Via::System,
                language: domain::Language::English,
            };
            let Some(connection_id) = ops::common::RecordId::new(id) else { continue };
            let input = ops::banks::SyncBankConnectionInput { connection_id };
            match ops::call::<ops::banks::SyncBankConnection>(
                self,
                &caller,
                &input,
                ops::Mode::Apply,
            )
            .await
            {
                Ok(_) => synced += 1,
                Err(err) => {
                    tracing::info!(connection = id, code = err.code(), "bank sync did not run")
                }
            }
        }
        synced
    }
}

/// How often the schedule looks for bank connections due a sync.
const BANK_SYNC_CHECK: std::time::Duration = std::time::Duration::from_secs(5 * 60);

/// Time until the next full hour: every zone's midnight falls on one (or a half or quarter
/// hour, caught at the next run a few minutes later at most an hour late).
fn until_next_hour(now: jiff::Timestamp) -> std::time::Duration {
    let zoned = now.to_zoned(TimeZone::UTC);
    let into_hour =
        SignedDuration::from_secs(i64::from(zoned.minute()) * 60 + i64::from(zoned.second()));
    let wait = SignedDuration::from_hours(1) - into_hour + SignedDuration::from_secs(1);
    std::time::Duration::try_from(wait).unwrap_or(std::time::Duration::from_secs(3600))
}
