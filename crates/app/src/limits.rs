//! The per-token rate limit: a token bucket per API token, on the injected clock, so one
//! runaway agent cannot monopolise a small machine. People (web, CLI) are not limited here.

use std::{collections::HashMap, sync::Mutex};

use jiff::Timestamp;
use ops::{Actor, Caller, OpError, Text};

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
        if let Ok(mut current) = self.limit.lock() {
            *current = limit;
        }
    }

    /// Takes one call from the caller's bucket, or says when to try again.
    pub(crate) fn check(&self, caller: &Caller, now: Timestamp) -> Result<(), OpError> {
        let Actor::Token { token_id, .. } = caller.actor else { return Ok(()) };
        let Some(limit) = self.limit.lock().ok().and_then(|l| *l) else { return Ok(()) };
        let Ok(mut buckets) = self.buckets.lock() else { return Ok(()) };
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
