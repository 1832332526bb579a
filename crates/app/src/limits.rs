//! Limits: how large one household may grow (`HouseholdCaps`, so memory stays bounded on a
//! small machine whatever a household or a runaway agent does), and, on the injected clock,
//! paces (the per-token rate limit, so one runaway agent cannot monopolise a small machine,
//! people not limited by it; and the assistant's messages per member), the sign-in limit
//! (failed passwords per email and client address), and counts per client address for the
//! OAuth endpoints.
//!
//! The sign-in limit and the per-network counts are kept in the database, so every instance
//! on it counts alike; so are paces on PostgreSQL ([`Paces`]). What is kept in memory fails
//! closed: a lock poisoned by a panic elsewhere keeps its counts and keeps limiting.

use std::{
    collections::HashMap,
    net::IpAddr,
    sync::{Arc, Mutex, MutexGuard, PoisonError},
};

use jiff::{SignedDuration, Timestamp};
use ops::{Actor, Caller, OpError, Text};
use store::{Db, Store, limits::Pace};

use crate::{clock::timestamp_text, transactions::StoreExt};

/// The lock's data, also after a panic while it was held: the counts are still right.
pub(crate) fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The most a household may have of each thing. Generous for any household (a busy one has a
/// few hundred subscriptions); the server's configuration can raise or lower them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HouseholdCaps {
    pub subscriptions: u32,
    pub categories: u32,
    pub payment_methods: u32,
    pub members: u32,
    pub tokens: u32,
    pub accounts: u32,
    pub labels: u32,
    pub transactions: u32,
    pub budgets: u32,
    pub rules: u32,
}

impl Default for HouseholdCaps {
    fn default() -> Self {
        Self {
            subscriptions: 2_000,
            categories: 200,
            payment_methods: 100,
            members: 50,
            tokens: 100,
            accounts: 200,
            labels: 500,
            transactions: 1_000_000,
            budgets: 100,
            rules: 200,
        }
    }
}

impl HouseholdCaps {
    fn of(&self, what: store::households::Counted) -> (u32, &'static str, &'static str) {
        use store::households::Counted;
        match what {
            Counted::Subscriptions => (self.subscriptions, "subscriptions", "max_subscriptions"),
            Counted::Categories => (self.categories, "categories", "max_categories"),
            Counted::PaymentMethods => {
                (self.payment_methods, "payment methods", "max_payment_methods")
            }
            Counted::Members => (self.members, "members", "max_members"),
            Counted::Tokens => (self.tokens, "active tokens", "max_tokens"),
            Counted::Accounts => (self.accounts, "accounts", "max_accounts"),
            Counted::Labels => (self.labels, "labels", "max_labels"),
            Counted::Transactions => (self.transactions, "transactions", "max_transactions"),
            Counted::Budgets => (self.budgets, "budgets", "max_budgets"),
            Counted::Rules => (self.rules, "rules", "max_rules"),
        }
    }

    /// Refuses adding `adding` more of `what` to a household that has `has`.
    pub(crate) fn check(
        &self,
        what: store::households::Counted,
        has: i64,
        adding: usize,
    ) -> Result<(), OpError> {
        let (cap, noun, key) = self.of(what);
        let after = has.saturating_add(i64::try_from(adding).unwrap_or(i64::MAX));
        if after <= i64::from(cap) {
            return Ok(());
        }
        Err(OpError::conflict(
            Text::new(
                "This household has {has} {noun}; this server takes at most {cap} ({key} in its configuration). Delete some you no longer need, or ask whoever runs Exhale to raise it. Nothing was changed.",
            )
            .with("has", has)
            .with("noun", noun)
            .with("cap", cap)
            .with("key", key),
        ))
    }
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

/// Where paces are kept (`store::limits::Pace`: when a key's next call is due). On PostgreSQL
/// in the database, so a token's calls through every instance count together; on SQLite, which
/// one process serves, in this process's memory, sparing every call a write.
pub(crate) enum Paces {
    Memory(Mutex<HashMap<(&'static str, String), i64>>),
    Database(Arc<Store>),
}

impl Paces {
    pub(crate) fn for_store(store: &Arc<Store>) -> Self {
        match store.dialect() {
            store::Dialect::Sqlite => Self::Memory(Mutex::default()),
            store::Dialect::Postgres => Self::Database(store.clone()),
        }
    }

    /// Takes one call of `kind` for `key` at `now`, or says in how many whole seconds (at
    /// least one) one is let through.
    pub(crate) async fn take(
        &self,
        kind: &'static str,
        key: String,
        pace: Pace,
        now: Timestamp,
    ) -> Result<Result<(), u64>, OpError> {
        let now_us = now.as_microsecond();
        let waiting = match self {
            Self::Memory(paces) => {
                let mut paces = locked(paces);
                let due = paces.get(&(kind, key.clone())).copied();
                match pace.next(due, now_us) {
                    Ok(next) => {
                        paces.insert((kind, key), next);
                        None
                    }
                    Err(wait) => Some(wait),
                }
            }
            Self::Database(store) => {
                let store = store.clone();
                crate::transactions::blocking(move || {
                    store.take_pace(kind, &key, pace, now_us).or_internal()
                })
                .await?
            }
        };
        Ok(match waiting {
            None => Ok(()),
            Some(wait_us) => Err(u64::try_from(wait_us).unwrap_or(1).div_ceil(1_000_000).max(1)),
        })
    }
}

/// A pace of one call each `interval`, `burst` at once.
pub(crate) fn pace(interval: std::time::Duration, burst: u32) -> Pace {
    let interval_us = i64::try_from(interval.as_micros()).unwrap_or(i64::MAX).max(1);
    Pace { interval_us, tolerance_us: interval_us.saturating_mul(i64::from(burst.max(1) - 1)) }
}

/// The per-token rate limit, over [`Paces`].
pub(crate) struct Limiter {
    limit: Mutex<Option<RateLimit>>,
}

/// What a token's calls are paced under.
const TOKEN_CALLS: &str = "token_calls";

impl Limiter {
    pub(crate) fn new(limit: Option<RateLimit>) -> Self {
        Self { limit: Mutex::new(limit) }
    }

    pub(crate) fn set(&self, limit: Option<RateLimit>) {
        *locked(&self.limit) = limit;
    }

    /// Takes one call of the caller's token, or says when to try again.
    pub(crate) async fn check(
        &self,
        paces: &Paces,
        caller: &Caller,
        now: Timestamp,
    ) -> Result<(), OpError> {
        let Actor::Token { token_id, .. } = caller.actor else { return Ok(()) };
        let Some(limit) = *locked(&self.limit) else { return Ok(()) };
        let every = std::time::Duration::from_secs(1) / limit.per_second.max(1);
        let taken =
            paces.take(TOKEN_CALLS, token_id.to_string(), pace(every, limit.burst), now).await?;
        taken.map_err(|wait| OpError::RateLimited {
            retry_after_secs: wait,
            message: Text::new("Too many calls with this token: at most {rate} a second. Wait {wait} s and try again.")
                .with("rate", limit.per_second)
                .with("wait", wait),
        })
    }
}

/// Failed sign-ins for one email from one address before that address is refused for it.
const MAX_FAILURES_FROM_ONE_ADDRESS: u32 = 5;
/// Failed sign-ins for one email, from anywhere, before each further try must wait.
const FREE_FAILURES: u32 = 5;
/// The longest wait between tries for an email: the owner of an email under attack from many
/// addresses still signs in within a minute.
const MAX_DELAY_SECS: u64 = 60;
/// How long failures count, from the first.
const FAILURE_WINDOW: SignedDuration = SignedDuration::from_mins(15);

/// What a per-address limit counts as one client: an IPv4 address, or an IPv6 address's /64
/// (a household's line or a rented server is given a whole /64, so counting each of its 2^64
/// addresses apart would let one client count as many). An IPv4 address written in IPv6 is the
/// IPv4 address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Network(Option<IpAddr>);

impl Network {
    pub(crate) fn of(address: Option<IpAddr>) -> Self {
        Self(address.map(|address| match address {
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => {
                    let mut segments = v6.segments();
                    segments[4..].fill(0);
                    IpAddr::V6(segments.into())
                }
            },
            v4 => v4,
        }))
    }
}

impl Network {
    /// The networks around an address, narrowest first, by which a flood is told apart from
    /// a household: an IPv4 address and its /24; an IPv6 /64, /56 and /48 (what providers hand
    /// a line, a customer and a site).
    pub(crate) fn around(address: Option<IpAddr>) -> Vec<(u8, Option<IpAddr>)> {
        let Network(network) = Network::of(address);
        let masked = |bits: u8| -> Option<IpAddr> {
            Some(match network? {
                IpAddr::V4(v4) => IpAddr::V4((u32::from(v4) & (u32::MAX << (32 - bits))).into()),
                IpAddr::V6(v6) => IpAddr::V6((u128::from(v6) & (u128::MAX << (128 - bits))).into()),
            })
        };
        match network {
            Some(IpAddr::V4(_)) => vec![(32, masked(32)), (24, masked(24))],
            Some(IpAddr::V6(_)) => vec![(64, masked(64)), (56, masked(56)), (48, masked(48))],
            None => vec![(0, None)],
        }
    }
}

/// The kinds of count the sign-in limit keeps (`store::limits`).
const FAILED_FROM_ADDRESS: &str = "sign_in_address";
const FAILED_FOR_EMAIL: &str = "sign_in_email";

/// A stored count as times.
struct Count {
    count: u32,
    since: Timestamp,
    last: Timestamp,
}

impl Count {
    fn read(db: &Db<'_>, kind: &str, key: &str) -> Result<Option<Self>, OpError> {
        let Some(row) = store::limits::get(db, kind, key).or_internal()? else { return Ok(None) };
        let time = |text: &str| text.parse::<Timestamp>().map_err(|_| OpError::Internal);
        Ok(Some(Self { count: row.count, since: time(&row.since)?, last: time(&row.last)? }))
    }

    fn write(&self, db: &Db<'_>, kind: &str, key: &str) -> Result<(), OpError> {
        let row = store::limits::CountRow {
            count: self.count,
            since: timestamp_text(self.since),
            last: timestamp_text(self.last),
        };
        store::limits::set(db, kind, key, &row).or_internal()
    }

    /// One more at `now`, within `window` of the first, or a new count.
    fn one_more(
        db: &Db<'_>,
        kind: &str,
        key: &str,
        window: SignedDuration,
        now: Timestamp,
    ) -> Result<(), OpError> {
        store::limits::forget_before(db, kind, &timestamp_text(now - window)).or_internal()?;
        let count = match Self::read(db, kind, key)? {
            Some(current) if now.duration_since(current.since) < window => {
                Self { count: current.count + 1, since: current.since, last: now }
            }
            _ => Self { count: 1, since: now, last: now },
        };
        count.write(db, kind, key)
    }
}

/// What a per-address count is kept under: the client's network.
fn network_key(client: Option<IpAddr>) -> String {
    match Network::of(client).0 {
        Some(address) => address.to_string(),
        None => "unknown".into(),
    }
}

/// Failed sign-ins, counted in the database, so every instance on it counts alike. An address
/// that failed [`MAX_FAILURES_FROM_ONE_ADDRESS`] times for an email within [`FAILURE_WINDOW`]
/// is refused for that email until the window has passed, whatever the password. Past
/// [`FREE_FAILURES`] for an email from anywhere, each try must wait 1, 2, 4… seconds (at most
/// [`MAX_DELAY_SECS`]) after the last failure. Emails are compared as given: the caller
/// normalises them.
pub(crate) mod sign_in {
    use super::*;

    fn address_key(email: &str, client: Option<IpAddr>) -> String {
        format!("{email} {}", network_key(client))
    }

    /// Refuses a try that comes too soon, saying when to try again.
    pub(crate) fn check(
        db: &Db<'_>,
        email: &str,
        client: Option<IpAddr>,
        now: Timestamp,
    ) -> Result<(), OpError> {
        let current = |f: &Count| now.duration_since(f.since) < FAILURE_WINDOW;
        if let Some(f) = Count::read(db, FAILED_FROM_ADDRESS, &address_key(email, client))?
            && current(&f)
            && f.count >= MAX_FAILURES_FROM_ONE_ADDRESS
        {
            let wait = seconds_until(f.since + FAILURE_WINDOW, now);
            return Err(OpError::RateLimited {
                retry_after_secs: wait,
                message: Text::new(
                    "Too many failed attempts for this email. Try again in {minutes} min.",
                )
                .with("minutes", wait.div_ceil(60)),
            });
        }
        if let Some(f) = Count::read(db, FAILED_FOR_EMAIL, email)?
            && current(&f)
            && f.count >= FREE_FAILURES
        {
            let delay = 1u64
                .checked_shl(f.count - FREE_FAILURES)
                .unwrap_or(MAX_DELAY_SECS)
                .min(MAX_DELAY_SECS);
            let next = f.last + SignedDuration::from_secs(delay.cast_signed());
            if now < next {
                let wait = seconds_until(next, now);
                return Err(OpError::RateLimited {
                    retry_after_secs: wait,
                    message: Text::new(
                        "Too many failed attempts for this email. Wait {seconds} s and try again.",
                    )
                    .with("seconds", wait),
                });
            }
        }
        Ok(())
    }

    pub(crate) fn failed(
        db: &Db<'_>,
        email: &str,
        client: Option<IpAddr>,
        now: Timestamp,
    ) -> Result<(), OpError> {
        let by_address = address_key(email, client);
        Count::one_more(db, FAILED_FROM_ADDRESS, &by_address, FAILURE_WINDOW, now)?;
        Count::one_more(db, FAILED_FOR_EMAIL, email, FAILURE_WINDOW, now)
    }

    pub(crate) fn succeeded(
        db: &Db<'_>,
        email: &str,
        client: Option<IpAddr>,
    ) -> Result<(), OpError> {
        store::limits::remove(db, FAILED_FROM_ADDRESS, &address_key(email, client))
            .or_internal()?;
        store::limits::remove(db, FAILED_FOR_EMAIL, email).or_internal()
    }
}

/// How many requests of one kind one client network (`Network`) may make in a window, each
/// network's count starting over a window after its first (the OAuth endpoints' limits),
/// counted in the database.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PerNetwork {
    /// What the counts are kept under (`store::limits`).
    pub(crate) kind: &'static str,
    pub(crate) limit: u32,
    pub(crate) window: SignedDuration,
}

impl PerNetwork {
    /// The seconds `from` must wait, when it is at the limit; counts nothing.
    pub(crate) fn wait(
        self,
        db: &Db<'_>,
        from: Option<IpAddr>,
        now: Timestamp,
    ) -> Result<Option<u64>, OpError> {
        let Some(count) = Count::read(db, self.kind, &network_key(from))? else { return Ok(None) };
        Ok((count.count >= self.limit && now.duration_since(count.since) < self.window)
            .then(|| seconds_until(count.since + self.window, now)))
    }

    /// Counts one request from `from`.
    pub(crate) fn count(
        self,
        db: &Db<'_>,
        from: Option<IpAddr>,
        now: Timestamp,
    ) -> Result<(), OpError> {
        Count::one_more(db, self.kind, &network_key(from), self.window, now)
    }

    /// Counts one request from `from` if it is within the limit; otherwise the seconds to wait.
    pub(crate) fn admit(
        self,
        db: &Db<'_>,
        from: Option<IpAddr>,
        now: Timestamp,
    ) -> Result<Result<(), u64>, OpError> {
        match self.wait(db, from, now)? {
            Some(wait) => Ok(Err(wait)),
            None => self.count(db, from, now).map(Ok),
        }
    }
}

/// Whole seconds from `now` to `then`, at least one.
fn seconds_until(then: Timestamp, now: Timestamp) -> u64 {
    then.duration_since(now).as_secs().max(1).unsigned_abs()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_network_is_an_ipv4_address_or_an_ipv6_64() {
        let of = |text: &str| Network::of(Some(text.parse().unwrap()));
        assert_eq!(of("2001:db8:1:2:aaaa::1"), of("2001:db8:1:2:ffff:1:2:3"));
        assert_ne!(of("2001:db8:1:2::1"), of("2001:db8:1:3::1"));
        assert_eq!(of("::ffff:203.0.113.9"), of("203.0.113.9"));
        assert_ne!(of("203.0.113.9"), of("203.0.113.10"));
        assert_eq!(Network::of(None), Network::of(None));
        let around = |text: &str| Network::around(Some(text.parse().unwrap()));
        assert_eq!(around("2001:db8:1:2::9")[2], around("2001:db8:1:ff::1")[2], "one /48");
        assert_ne!(around("2001:db8:1:2::9")[1], around("2001:db8:1:100::1")[1], "two /56s");
        assert_eq!(around("203.0.113.9")[1], around("203.0.113.200")[1], "one /24");
    }
}
