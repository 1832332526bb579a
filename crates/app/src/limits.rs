//! Limits: how large one household may grow (`HouseholdCaps`, so memory stays bounded on a
//! small machine whatever a household or a runaway agent does), and, on the injected clock,
//! the per-token rate limit (a token bucket per API token, so one
//! runaway agent cannot monopolise a small machine; people are not limited by it) and the
//! sign-in limit (failed passwords per email and client address), and counts per client
//! address for the OAuth endpoints.
//!
//! Both fail closed: a lock poisoned by a panic elsewhere keeps its counts and keeps limiting.

use std::{
    collections::HashMap,
    net::IpAddr,
    sync::{Mutex, MutexGuard, PoisonError},
};

use jiff::{SignedDuration, Timestamp};
use ops::{Actor, Caller, OpError, Text};

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

/// Failed sign-ins for one email from one address before that address is refused for it.
const MAX_FAILURES_FROM_ONE_ADDRESS: u32 = 5;
/// Failed sign-ins for one email, from anywhere, before each further try must wait.
const FREE_FAILURES: u32 = 5;
/// The longest wait between tries for an email: the owner of an email under attack from many
/// addresses still signs in within a minute.
const MAX_DELAY_SECS: u64 = 60;
/// How long failures count, from the first.
const FAILURE_WINDOW: SignedDuration = SignedDuration::from_mins(15);
/// Entries kept at most; past it, entries below the thresholds are forgotten first.
const MAX_ENTRIES: usize = 50_000;

#[derive(Clone, Copy)]
struct Failures {
    count: u32,
    since: Timestamp,
    last: Timestamp,
}

impl Failures {
    fn add(entry: Option<&mut Self>, now: Timestamp) -> Option<Self> {
        match entry {
            Some(failures) => {
                failures.count += 1;
                failures.last = now;
                None
            }
            None => Some(Self { count: 1, since: now, last: now }),
        }
    }
}

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

#[derive(Default)]
struct FailureTables {
    /// By email and client network: a guesser at one address is stopped for the window.
    by_address: HashMap<(String, Network), Failures>,
    /// By email alone: guessers at many addresses are slowed, with a growing delay, without
    /// locking the owner out.
    by_email: HashMap<String, Failures>,
}

/// Failed sign-ins. An address that failed [`MAX_FAILURES_FROM_ONE_ADDRESS`] times for an
/// email within [`FAILURE_WINDOW`] is refused for that email until the window has passed,
/// whatever the password. Past [`FREE_FAILURES`] for an email from anywhere, each try must
/// wait 1, 2, 4… seconds (at most [`MAX_DELAY_SECS`]) after the last failure. Emails are
/// compared as given: the caller normalises them.
#[derive(Default)]
pub(crate) struct SignInLimiter(Mutex<FailureTables>);

impl SignInLimiter {
    /// Refuses a try that comes too soon, saying when to try again.
    pub(crate) fn check(
        &self,
        email: &str,
        client: Option<IpAddr>,
        now: Timestamp,
    ) -> Result<(), OpError> {
        let mut tables = locked(&self.0);
        let current = |f: &Failures| now.duration_since(f.since) < FAILURE_WINDOW;
        tables.by_address.retain(|_, f| current(f));
        tables.by_email.retain(|_, f| current(f));
        if let Some(f) = tables.by_address.get(&(email.to_owned(), Network::of(client)))
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
        if let Some(f) = tables.by_email.get(email)
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

    pub(crate) fn failed(&self, email: &str, client: Option<IpAddr>, now: Timestamp) {
        let mut tables = locked(&self.0);
        if tables.by_address.len() + tables.by_email.len() > MAX_ENTRIES {
            tables.by_address.retain(|_, f| f.count >= MAX_FAILURES_FROM_ONE_ADDRESS);
            tables.by_email.retain(|_, f| f.count >= FREE_FAILURES);
        }
        let pair = (email.to_owned(), Network::of(client));
        if let Some(new) = Failures::add(tables.by_address.get_mut(&pair), now) {
            tables.by_address.insert(pair, new);
        }
        if let Some(new) = Failures::add(tables.by_email.get_mut(email), now) {
            tables.by_email.insert(email.to_owned(), new);
        }
    }

    pub(crate) fn succeeded(&self, email: &str, client: Option<IpAddr>) {
        let mut tables = locked(&self.0);
        tables.by_address.remove(&(email.to_owned(), Network::of(client)));
        tables.by_email.remove(email);
    }
}

/// How many requests of one kind one client network (`Network`) may make in a window.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PerNetwork {
    pub(crate) limit: u32,
    pub(crate) window: SignedDuration,
}

/// Requests of one kind counted per client network (`Network`), each network's count starting
/// over a window after its first (the OAuth endpoints' limits). Networks whose window has
/// passed are forgotten once the table is large.
#[derive(Default)]
pub(crate) struct NetworkLimiter(Mutex<HashMap<Network, (u32, Timestamp)>>);

impl NetworkLimiter {
    /// The seconds `from` must wait, when it is at the limit; counts nothing.
    pub(crate) fn wait(
        &self,
        limit: PerNetwork,
        from: Option<IpAddr>,
        now: Timestamp,
    ) -> Option<u64> {
        let table = locked(&self.0);
        let (count, since) = *table.get(&Network::of(from))?;
        (count >= limit.limit && now.duration_since(since) < limit.window)
            .then(|| seconds_until(since + limit.window, now))
    }

    /// Counts one request from `from`.
    pub(crate) fn count(&self, limit: PerNetwork, from: Option<IpAddr>, now: Timestamp) {
        let mut table = locked(&self.0);
        if table.len() > MAX_ENTRIES {
            table.retain(|_, (_, since)| now.duration_since(*since) < limit.window);
        }
        let entry = table.entry(Network::of(from)).or_insert((0, now));
        if now.duration_since(entry.1) >= limit.window {
            *entry = (0, now);
        }
        entry.0 += 1;
    }

    /// Counts one request from `from` if it is within the limit; otherwise the seconds to wait.
    pub(crate) fn admit(
        &self,
        limit: PerNetwork,
        from: Option<IpAddr>,
        now: Timestamp,
    ) -> Result<(), u64> {
        match self.wait(limit, from, now) {
            Some(wait) => Err(wait),
            None => {
                self.count(limit, from, now);
                Ok(())
            }
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
