//! Background work: recording charges whose date has come, at start and after each local
//! midnight. Messages are planned and delivered through `outbox.rs`.

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
        let app = self.clone();
        tokio::spawn(async move {
            loop {
                match app.materialise_due_charges().await {
                    Ok(count) if count > 0 => tracing::info!(count, "recorded due charges"),
                    Ok(_) => {}
                    Err(err) => tracing::warn!(code = err.code(), "recording due charges failed"),
                }
                tokio::time::sleep(until_next_hour(app.clock.now())).await;
            }
        })
    }
}

/// Time until the next full hour: every zone's midnight falls on one (or a half or quarter
/// hour, caught at the next run a few minutes later at most an hour late).
fn until_next_hour(now: jiff::Timestamp) -> std::time::Duration {
    let zoned = now.to_zoned(TimeZone::UTC);
    let into_hour =
        SignedDuration::from_secs(i64::from(zoned.minute()) * 60 + i64::from(zoned.second()));
    let wait = SignedDuration::from_hours(1) - into_hour + SignedDuration::from_secs(1);
    std::time::Duration::try_from(wait).unwrap_or(std::time::Duration::from_secs(3600))
}
