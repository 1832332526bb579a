//! Limits on the injected clock: the per-token rate limit (a token bucket per API token, so one
//! runaway agent cannot monopolise a small machine; people are not limited by it) and the
//! sign-in limit (failed passwords per email).
//!
//! Both fail closed: a lock poisoned by a panic elsewhere keeps its counts and keeps limiting.

use std::{
    collections::HashMap,
    sync::{Mutex, MutexGuard, PoisonError},
};

use jiff::{SignedDuration, Timestamp};
use ops::{Actor, Caller, OpError, Text};

/// The lock's data, also after a panic while it was held: the counts are still right.
fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Calls per second a token may make on average, and how many it may make at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimit {
    pub per_second: u32,
    pub burst: u32,
}

impl Default for RateLimit {
    /// Generous for any agent (a model makes a few calls a second), small enough that a loop
    /// gone wrong is stopped.
    fn default() -> Self {
        Self { per_second: 20, burst: 120 }
    }
}

struct Bucket {
    tokens: f64,
    at: Timestamp,
}

pub(crate) struct Limiter {
    limit: Mutex<Option<RateLimit>>,
    buckets: Mutex<HashMap<i64, Bucket>>,
}

impl Limiter {
    pub(crate) fn new(limit: Option<RateLimit>) -> Self {
        Self { limit: Mutex::new(limit), buckets: Mutex::new(HashMap::new()) }
    }

    pub(crate) fn set(&self, limit: Option<RateLimit>) {
        *locked(&self.limit) = limit;
    }

    /// Takes one call from the caller's bucket, or says when to try again.
    pub(crate) fn check(&self, caller: &Caller, now: Timestamp) -> Result<(), OpError> {
        let Actor::Token { token_id, .. } = caller.actor else { return Ok(()) };
        let Some(limit) = *locked(&self.limit) else { return Ok(()) };
        let mut buckets = locked(&self.buckets);
        let bucket =
            buckets.entry(token_id).or_insert(Bucket { tokens: f64::from(limit.burst), at: now });
        let elapsed = now.duration_since(bucket.at).as_secs_f64().max(0.0);
        bucket.tokens =
            (bucket.tokens + elapsed * f64::from(limit.per_second)).min(f64::from(limit.burst));
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            return Ok(());
        }
        let wait = ((1.0 - bucket.tokens) / f64::from(limit.per_second.max(1))).ceil().max(1.0);
        Err(OpError::RateLimited {
            retry_after_secs: wait as u64,
            message: Text::new("Too many calls with this token: at most {rate} a second. Wait {wait} s and try again.")
                .with("rate", limit.per_second)
                .with("wait", wait),
        })
    }
}

/// Failed sign-ins that lock an email.
const MAX_FAILURES: u32 = 5;
/// How long the failures of an email count, from the first.
const FAILURE_WINDOW: SignedDuration = SignedDuration::from_mins(15);

struct Failures {
    count: u32,
    since: Timestamp,
}

/// Failed sign-ins per email: after [`MAX_FAILURES`] within [`FAILURE_WINDOW`] of the first, the
/// email is refused until the window has passed, whatever the password.
#[derive(Default)]
pub(crate) struct SignInLimiter(Mutex<HashMap<String, Failures>>);

impl SignInLimiter {
    /// Refuses a locked email, saying when to try again.
    pub(crate) fn check(&self, email: &str, now: Timestamp) -> Result<(), OpError> {
        let mut failures = locked(&self.0);
        failures.retain(|_, f| now.duration_since(f.since) < FAILURE_WINDOW);
        match failures.get(email) {
            Some(f) if f.count >= MAX_FAILURES => {
                let wait = (FAILURE_WINDOW - now.duration_since(f.since)).as_secs().max(1);
                let wait = wait.unsigned_abs();
                let minutes = wait.div_ceil(60);
                Err(OpError::RateLimited {
                    retry_after_secs: wait,
                    message: Text::new(
                        "Too many failed attempts for this email. Try again in {minutes} min.",
                    )
                    .with("minutes", minutes),
                })
            }
            _ => Ok(()),
        }
    }

    pub(crate) fn failed(&self, email: &str, now: Timestamp) {
        let mut failures = locked(&self.0);
        failures.entry(email.to_owned()).or_insert(Failures { count: 0, since: now }).count += 1;
    }

    pub(crate) fn succeeded(&self, email: &str) {
        locked(&self.0).remove(email);
    }
}
