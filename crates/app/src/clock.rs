//! The injected clock (the system clock in production, a fixed one in tests), and the two ways
//! Exhale writes time: timestamps as stored, and today's date in a household's time zone.

use std::sync::Mutex;

use jiff::{SignedDuration, Timestamp, tz::TimeZone};

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

/// A timestamp as Exhale stores and shows it: RFC 3339 in UTC, to the second.
pub(crate) fn timestamp_text(at: Timestamp) -> String {
    ops::common::Timestamp(at).text()
}

/// Today's date in the household's time zone.
pub(crate) fn today_in(
    household: &store::households::HouseholdRow,
    now: Timestamp,
) -> domain::Date {
    let zone = TimeZone::get(&household.time_zone).unwrap_or(TimeZone::UTC);
    now.to_zoned(zone).date()
}
