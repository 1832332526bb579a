//! Per member, a burst of messages and then one every few seconds (`ops::assistant::limits`),
//! kept in memory. Each member has a theoretical arrival time (the cell rate algorithm): every
//! message pushes it one interval later, and a message is refused while it is more than the
//! burst ahead of now.

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

use ops::assistant::limits::{BURST, REFILL_SECS};

#[derive(Debug, Default)]
pub(crate) struct MessageLimiter {
    due: Mutex<HashMap<(i64, i64), Instant>>,
}

impl MessageLimiter {
    /// Counts one message of the member at `now`, or says in how many seconds one is allowed.
    pub(crate) fn take(&self, household: i64, member: i64, now: Instant) -> Result<(), u64> {
        let interval = Duration::from_secs(REFILL_SECS);
        let burst = interval * (BURST - 1);
        let mut due = self.due.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let at = due.get(&(household, member)).copied().unwrap_or(now).max(now);
        let ahead = at - now;
        if ahead > burst {
            let wait = ahead - burst;
            return Err(wait.as_secs() + u64::from(wait.subsec_nanos() > 0));
        }
        due.insert((household, member), at + interval);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_then_one_every_fifteen_seconds_per_member() {
        let limiter = MessageLimiter::default();
        let start = Instant::now();
        for _ in 0..BURST {
            assert_eq!(limiter.take(1, 1, start), Ok(()));
        }
        assert_eq!(limiter.take(1, 1, start), Err(15));
        assert_eq!(limiter.take(1, 2, start), Ok(()), "another member has their own");
        assert_eq!(limiter.take(1, 1, start + Duration::from_secs(10)), Err(5));
        assert_eq!(limiter.take(1, 1, start + Duration::from_secs(15)), Ok(()));
        assert_eq!(limiter.take(1, 1, start + Duration::from_secs(16)), Err(14));
    }
}
