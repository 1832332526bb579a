//! The injected clock: the system clock in production, a fixed one in tests.

use std::sync::Mutex;

use jiff::{SignedDuration, Timestamp};

pub trait Clock: Send + Sync {
    fn now(&self) -> Timestamp;
}

/// The real time.
pub struct SystemClock;

impl Clock for SystemClock {
    #[expect(
        clippy::disallowed_methods,
        reason = "this is the one place that reads the system clock"
    )]
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that stands still until moved; for tests.
pub struct FixedClock(Mutex<Timestamp>);

impl FixedClock {
    pub fn new(at: Timestamp) -> Self {
        Self(Mutex::new(at))
    }

    pub fn set(&self, at: Timestamp) {
        if let Ok(mut now) = self.0.lock() {
            *now = at;
        }
    }

    pub fn advance(&self, by: SignedDuration) {
        if let Ok(mut now) = self.0.lock() {
            *now = now.checked_add(by).unwrap_or(*now);
        }
    }
}

impl Clock for FixedClock {
    fn now(&self) -> Timestamp {
        self.0.lock().map(|now| *now).unwrap_or(Timestamp::UNIX_EPOCH)
    }
}
