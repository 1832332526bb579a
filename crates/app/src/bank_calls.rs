//! Asking a bank before the transaction: `link_simplefin` claims its token and fetches the
//! accounts, `sync_bank_connection` fetches what is new, both before the op's write begins (a
//! bank may take a minute, which no transaction should wait for), and the handler writes what
//! came (`handlers/banks.rs`).
//!
//! A sync takes its connection for [`LEASE_SECS`] in the database, so two instances (or a
//! person and the schedule) never ask the bank for one connection at once, and counts the
//! request against the provider's daily limit before it is sent. A fetch that fails is
//! recorded on the connection at once, in a write of its own, with what to do.

use std::sync::Arc;

use domain::{Date, Text};
use jiff::{SignedDuration, Timestamp, tz::TimeZone};
use ops::{
    Actor, Caller, Op as _, OpError, OpInfo,
    banks::{
        BankChoice, BankFeeds, BankProvider, CompleteBankConsent, CompleteBankConsentInput,
        ConnectionStatus, ConsentGiven, ConsentStarted, Credentials, EnableBankingApp, Failure,
        Fetched, LinkSimplefin, LinkSimplefinInput, ListBanks, ListBanksInput,
        RemoveBankConnection, RemoveBankConnectionInput, SetEnableBanking, SetEnableBankingInput,
        StartBankConsent, StartBankConsentInput, SyncBankConnection, SyncBankConnectionInput,
    },
};
use serde_json::Value;

use crate::{clock, transactions};

/// How long a sync may hold its connection before another may take it (a process that
/// stopped mid-sync).
const LEASE_SECS: i64 = 5 * 60;

/// The longest a sync's read may take: well inside its lease, which the write that follows
/// needs too.
const FETCH_LIMIT: std::time::Duration = std::time::Duration::from_secs(LEASE_SECS as u64 - 90);

/// How far back a sync reaches when nothing was synced before (the link's own read failed):
/// what every provider gives at any time; only a read right after the consent gets more.
const UNSYNCED_DAYS: i64 = 89;

/// How many days before the last day synced a later sync starts again: a transaction booked
/// late, or a pending one posted, is seen again.
pub(crate) const OVERLAP_DAYS: i64 = 10;

/// What the bank gave before the transaction began.
pub(crate) enum Prefetched {
    /// A link: the claimed credentials, and the first fetch with them (whose failure is kept
    /// on the new connection: the token is spent either way).
    Link { secret: String, fetched: Result<Fetched, Failure>, today_utc: Date },
    /// A dry run of a link: the token was checked, not claimed.
    LinkChecked,
    /// A sync of a connection the caller sees, under its lease, and when its consent ends.
    Sync { connection_id: i64, fetched: Fetched, today_utc: Date, consent_until: Option<Timestamp> },
    /// An Enable Banking application whose key reads.
    ApplicationChecked,
    /// A consent started at a bank, under `state`.
    ConsentStarted { state: String, bank: String, started: ConsentStarted },
    /// A consent the person gave, for the consent they started.
    ConsentGiven { consent: store::banks::ConsentRow, given: ConsentGiven, today_utc: Date },
    /// The banks of a country, by name.
    Banks(Vec<BankChoice>),
}

/// How long a person has to consent at their bank and come back.
pub(crate) const CONSENT_MINS: i64 = 30;

/// Where a bank sends the person back to, under Exhale's public address.
pub(crate) const CONSENT_RETURN: &str = "/settings/banks/return";

/// The first day a connection's first read asks for.
fn first_day(provider: BankProvider, today_utc: Date) -> Date {
    today_utc.saturating_sub(jiff::Span::new().days(provider.first_sync_days()))
}

/// The UTC day of `now`, as providers count their days and limits.
pub(crate) fn utc_day(now: Timestamp) -> Date {
    now.to_zoned(TimeZone::UTC).date()
}

/// A provider's failure as the caller reads it, with what to do.
pub(crate) fn failure_error(failure: &Failure) -> OpError {
    match failure {
        Failure::Relink { reason } => OpError::conflict(
            Text::new("The bank connection needs a person: {reason}. Link it again in Settings → Banks.")
                .with("reason", reason),
        ),
        Failure::TryLater { detail } => OpError::Unavailable {
            retry_after_secs: 15 * 60,
            message: Text::new("The bank did not answer ({detail}); nothing was changed. The next sync tries again.")
                .with("detail", detail),
        },
        Failure::RateLimited { retry_after_secs } => OpError::RateLimited {
            retry_after_secs: retry_after_secs.unwrap_or(60 * 60),
            message: Text::new("The bank's limit of requests is reached; nothing was changed. The next sync waits for it."),
        },
        Failure::Config { detail } => OpError::conflict(
            Text::new("The bank connection is set up wrongly: {detail}.").with("detail", detail),
        ),
        Failure::Protocol { detail } => OpError::Unavailable {
            retry_after_secs: 60 * 60,
            message: Text::new("The bank's answer could not be read ({detail}); nothing was changed. The next sync tries again.")
                .with("detail", detail),
        },
    }
}

/// What `failure` says on the connection, in words.
pub(crate) fn failure_words(failure: &Failure) -> String {
    i18n::say(domain::Language::English, &failure_error(failure).text())
}

/// When a connection is synced next after `failures` failed syncs in a row: every
/// `sync_every_hours` when they go well, and backing off (15 minutes, an hour, six hours,
/// then daily) when they fail; a limit's own wait when the provider named one, else the next
/// UTC day, when providers' daily counts start again.
pub(crate) fn next_sync(
    provider: BankProvider,
    now: Timestamp,
    failure: Option<&Failure>,
    failures: i64,
) -> Timestamp {
    let wait = match failure {
        None => SignedDuration::from_hours(provider.sync_every_hours()),
        Some(Failure::RateLimited { retry_after_secs: Some(secs) }) => {
            SignedDuration::from_secs((*secs).min(86_400) as i64)
        }
        Some(Failure::RateLimited { retry_after_secs: None }) => {
            now.duration_until(next_utc_day(now))
        }
        Some(_) => match failures {
            ..=1 => SignedDuration::from_mins(15),
            2 => SignedDuration::from_hours(1),
            3 => SignedDuration::from_hours(6),
            _ => SignedDuration::from_hours(24),
        },
    };
    now.saturating_add(wait).unwrap_or(now)
}

/// The next UTC midnight after `now`, when a provider's daily count starts again.
fn next_utc_day(now: Timestamp) -> Timestamp {
    utc_day(now)
        .tomorrow()
        .ok()
        .and_then(|day| day.to_zoned(TimeZone::UTC).ok())
        .map_or(now, |zoned| zoned.timestamp())
}

/// The ops that ask a bank before their transaction: every other op skips [`before`], and
/// the app's feeds and public address are not even looked at for it.
const ASK_A_BANK: [&str; 7] = [
    LinkSimplefin::INFO.name,
    SyncBankConnection::INFO.name,
    SetEnableBanking::INFO.name,
    ListBanks::INFO.name,
    StartBankConsent::INFO.name,
    CompleteBankConsent::INFO.name,
    RemoveBankConnection::INFO.name,
];

/// Whether `op` asks a bank before its transaction.
pub(crate) fn asks_a_bank(op: &OpInfo) -> bool {
    ASK_A_BANK.contains(&op.name)
}

/// Asks the bank what `op` needs before its transaction; `None` for every other op (and for
/// an input the handler will refuse as it reads it).
#[expect(clippy::too_many_arguments, reason = "the call, and what the app knows around it")]
pub(crate) async fn before(
    store: &Arc<store::Store>,
    feeds: Option<Arc<dyn BankFeeds>>,
    origin: Option<String>,
    caller: &Caller,
    op: &OpInfo,
    input: &Value,
    dry_run: bool,
    now: Timestamp,
) -> Result<Option<Prefetched>, OpError> {
    /// The op's input as its type; `None` for one the handler will refuse as it reads it.
    fn typed<I: serde::de::DeserializeOwned>(input: &Value) -> Option<I> {
        serde_json::from_value(input.clone()).ok()
    }
    let name = op.name;
    if name == SetEnableBanking::INFO.name {
        let Some(input) = typed::<SetEnableBankingInput>(input) else { return Ok(None) };
        return check_application(feeds, input);
    }
    if name == ListBanks::INFO.name {
        let Some(input) = typed::<ListBanksInput>(input) else { return Ok(None) };
        return list_banks(store, feeds, caller, input.country.as_str(), now).await.map(Some);
    }
    if name == RemoveBankConnection::INFO.name {
        if let Some(input) = typed::<RemoveBankConnectionInput>(input).filter(|_| !dry_run) {
            close_session(store, feeds, caller, input.connection_id.get(), now).await;
        }
        return Ok(None);
    }
    if name == StartBankConsent::INFO.name {
        let Some(input) = typed::<StartBankConsentInput>(input) else { return Ok(None) };
        return start_consent(store, feeds, origin, caller, input, now).await.map(Some);
    }
    if name == CompleteBankConsent::INFO.name {
        let Some(input) = typed::<CompleteBankConsentInput>(input) else { return Ok(None) };
        return complete_consent(store, feeds, caller, input, now).await.map(Some);
    }
    if name == LinkSimplefin::INFO.name {
        let Some(input) = typed::<LinkSimplefinInput>(input) else { return Ok(None) };
        return link(store, feeds, caller, input, dry_run, now).await.map(Some);
    }
    if name == SyncBankConnection::INFO.name {
        let Some(input) = typed::<SyncBankConnectionInput>(input) else { return Ok(None) };
        return sync(store, feeds, caller, input.connection_id.get(), now).await.map(Some);
    }
    Ok(None)
}

/// An Enable Banking application's key, read without a request; nothing to check when both
/// fields are empty (the application is being removed).
fn check_application(
    feeds: Option<Arc<dyn BankFeeds>>,
    input: SetEnableBankingInput,
) -> Result<Option<Prefetched>, OpError> {
    if input.application_id.trim().is_empty() && input.private_key.trim().is_empty() {
        return Ok(None);
    }
    let feeds = feeds.ok_or_else(unavailable)?;
    let application = EnableBankingApp { id: input.application_id, private_key: input.private_key };
    feeds.check_enable_banking(&application).map_err(|failure| match failure {
        Failure::Config { detail } => OpError::invalid(
            "/private_key",
            Text::new("The application cannot be used: {detail}.").with("detail", detail),
        ),
        other => failure_error(&other),
    })?;
    Ok(Some(Prefetched::ApplicationChecked))
}

fn unavailable() -> OpError {
    OpError::conflict(Text::new(
        "Bank connections are not available on this server (it was started without them).",
    ))
}

/// The connection `id` as `caller` sees it, or "not found".
async fn visible(
    store: &Arc<store::Store>,
    caller: &Caller,
    id: i64,
) -> Result<store::banks::ConnectionRow, OpError> {
    let (store, household, member) = (store.clone(), caller.household_id, caller.member_id);
    transactions::blocking(move || {
        transactions::read_in(&store, household, |db| {
            store::banks::connection(db, household, member, id).map_err(transactions::internal)
        })
    })
    .await?
    .ok_or_else(|| not_found(id))
}

pub(crate) fn not_found(id: i64) -> OpError {
    OpError::not_found(
        Text::new("No bank connection with id {id}. Call list_bank_connections to find ids.")
            .with("id", id),
    )
}

/// The household's Enable Banking application, when an owner set one.
fn stored_application(
    db: &store::Db<'_>,
    household: i64,
) -> Result<Option<EnableBankingApp>, OpError> {
    Ok(store::banks::enable_banking(db, household)
        .map_err(transactions::internal)?
        .map(|(id, private_key)| EnableBankingApp { id, private_key }))
}

/// The household's Enable Banking application, or what to do without one.
fn application_of(db: &store::Db<'_>, household: i64) -> Result<EnableBankingApp, OpError> {
    match stored_application(db, household)? {
        Some(application) => Ok(application),
        None => Err(OpError::conflict(Text::new(
            "The household has no Enable Banking application yet: an owner sets its id and private key in Settings → Banks first.",
        ))),
    }
}

/// The banks of `country` Enable Banking connects, by name.
async fn list_banks(
    store: &Arc<store::Store>,
    feeds: Option<Arc<dyn BankFeeds>>,
    caller: &Caller,
    country: &str,
    now: Timestamp,
) -> Result<Prefetched, OpError> {
    let feeds = feeds.ok_or_else(unavailable)?;
    let (db_store, household) = (store.clone(), caller.household_id);
    let application = transactions::blocking(move || {
        transactions::read_in(&db_store, household, |db| application_of(db, household))
    })
    .await?;
    let mut banks =
        feeds.list_banks(&application, country, now).await.map_err(|f| failure_error(&f))?;
    banks.sort_by_cached_key(|bank| (bank.name.to_lowercase(), bank.name.clone()));
    Ok(Prefetched::Banks(banks))
}

/// Before an Enable Banking connection is removed, ends its session, so the bank's consent
/// closes too where the bank allows. Only for a removal the handler will make (the member who
/// linked it, or an owner); a bank that does not answer does not keep the connection: the
/// person is told to revoke the access at the bank as well.
async fn close_session(
    store: &Arc<store::Store>,
    feeds: Option<Arc<dyn BankFeeds>>,
    caller: &Caller,
    id: i64,
    now: Timestamp,
) {
    let Some(feeds) = feeds else { return };
    let (store, household, member) = (store.clone(), caller.household_id, caller.member_id);
    let caller = caller.clone();
    let session = transactions::blocking(move || {
        transactions::read_in(&store, household, |db| {
            let Some(connection) = store::banks::connection(db, household, member, id)
                .map_err(transactions::internal)?
                .filter(|c| c.provider == BankProvider::EnableBanking.as_str())
                .filter(|c| ops::banks::may_remove(&caller, c.member_id))
            else {
                return Ok(None);
            };
            let secret = store::banks::credentials(db, household, connection.id)
                .map_err(transactions::internal)?;
            Ok(secret.zip(stored_application(db, household)?))
        })
    })
    .await;
    let Ok(Some((session, application))) = session else { return };
    if let Err(failure) = feeds.close_session(&application, &session, now).await {
        tracing::info!(
            connection = id,
            status = failure.status().as_str(),
            "closing a bank session failed"
        );
    }
}

async fn start_consent(
    store: &Arc<store::Store>,
    feeds: Option<Arc<dyn BankFeeds>>,
    origin: Option<String>,
    caller: &Caller,
    input: StartBankConsentInput,
    now: Timestamp,
) -> Result<Prefetched, OpError> {
    let feeds = feeds.ok_or_else(unavailable)?;
    let origin = origin.ok_or_else(|| {
        OpError::conflict(Text::new(
            "Exhale needs its public address (public_origin) for the bank to send you back to it.",
        ))
    })?;
    if let Some(id) = input.connection_id {
        visible(store, caller, id.get()).await?;
    }
    let (db_store, household) = (store.clone(), caller.household_id);
    let application = transactions::blocking(move || {
        transactions::read_in(&db_store, household, |db| application_of(db, household))
    })
    .await?;
    let state = crate::random::random_hex(16)?;
    let redirect_url = format!("{}{CONSENT_RETURN}", origin.trim_end_matches('/'));
    let started = feeds
        .start_consent(
            &application,
            input.country.as_str(),
            &input.bank,
            &state,
            &redirect_url,
            now,
        )
        .await
        .map_err(|failure| match failure {
            Failure::Config { detail } => OpError::invalid(
                "/bank",
                Text::new("The bank cannot be connected: {detail}.").with("detail", detail),
            ),
            other => failure_error(&other),
        })?;
    Ok(Prefetched::ConsentStarted { state, bank: started.bank.clone(), started })
}

async fn complete_consent(
    store: &Arc<store::Store>,
    feeds: Option<Arc<dyn BankFeeds>>,
    caller: &Caller,
    input: CompleteBankConsentInput,
    now: Timestamp,
) -> Result<Prefetched, OpError> {
    let feeds = feeds.ok_or_else(unavailable)?;
    let (db_store, household, member) = (store.clone(), caller.household_id, caller.member_id);
    let state = input.state.clone();
    let now_text = clock::timestamp_text(now);
    let (consent, application) = transactions::blocking(move || {
        transactions::read_in(&db_store, household, |db| {
            let consent = store::banks::consent(db, household, member, &state, &now_text)
                .map_err(transactions::internal)?;
            Ok((consent, application_of(db, household)?))
        })
    })
    .await?;
    let consent = consent.ok_or_else(|| {
        OpError::not_found(Text::new(
            "This return from the bank is not one of yours, was used already, or came after 30 minutes: start connecting the bank again.",
        ))
    })?;
    let today_utc = utc_day(now);
    let from = first_day(BankProvider::EnableBanking, today_utc);
    let given = feeds
        .complete_consent(&application, &input.code, from, now)
        .await
        .map_err(|failure| failure_error(&failure))?;
    Ok(Prefetched::ConsentGiven { consent, given, today_utc })
}

async fn link(
    store: &Arc<store::Store>,
    feeds: Option<Arc<dyn BankFeeds>>,
    caller: &Caller,
    input: LinkSimplefinInput,
    dry_run: bool,
    now: Timestamp,
) -> Result<Prefetched, OpError> {
    let feeds = feeds.ok_or_else(unavailable)?;
    if let Some(id) = input.connection_id {
        let connection = visible(store, caller, id.get()).await?;
        if connection.provider != BankProvider::SimpleFin.as_str() {
            return Err(OpError::invalid(
                "/connection_id",
                Text::new("{name} is not a SimpleFIN connection.").with("name", &connection.name),
            ));
        }
    }
    // Only an owner may aim Exhale at this machine or the local network (a bridge of their
    // own, a test).
    let local = caller.is_owner();
    let token_error = |failure: Failure| match failure {
        Failure::Config { detail } => OpError::invalid(
            "/setup_token",
            Text::new("The setup token cannot be used: {detail}.").with("detail", detail),
        ),
        other => failure_error(&other),
    };
    if dry_run {
        feeds.check_simplefin_token(&input.setup_token, local).map_err(token_error)?;
        return Ok(Prefetched::LinkChecked);
    }
    let secret = feeds.claim_simplefin(&input.setup_token, local).await.map_err(token_error)?;
    let today_utc = utc_day(now);
    let from = first_day(BankProvider::SimpleFin, today_utc);
    let credentials = Credentials { secret, application: None };
    let fetched = feeds
        .fetch(BankProvider::SimpleFin, &credentials, from, now, local)
        .await
        .map(|(fetched, _)| fetched);
    let Credentials { secret, .. } = credentials;
    Ok(Prefetched::Link { secret, fetched, today_utc })
}

async fn sync(
    store: &Arc<store::Store>,
    feeds: Option<Arc<dyn BankFeeds>>,
    caller: &Caller,
    id: i64,
    now: Timestamp,
) -> Result<Prefetched, OpError> {
    let feeds = feeds.ok_or_else(unavailable)?;
    let connection = visible(store, caller, id).await?;
    let provider = BankProvider::parse(&connection.provider).ok_or(OpError::Internal)?;
    let status = ConnectionStatus::parse(&connection.status).ok_or(OpError::Internal)?;
    // A person may try again after fixing the login at the provider; nobody else asks a bank
    // that said it needs a person.
    if matches!(status, ConnectionStatus::NeedsRelink | ConnectionStatus::Misconfigured)
        && caller.actor != Actor::Person
    {
        return Err(OpError::conflict(
            Text::new("{name} needs a person first: {problem} Ask them to link it again in Settings → Banks.")
                .with("name", &connection.name)
                .with("problem", connection.status_detail.as_deref().unwrap_or_default()),
        ));
    }
    // A provider that asked for fewer requests is asked nothing, by anyone, before it allows:
    // SimpleFIN disables an access that goes on.
    if status == ConnectionStatus::RateLimited
        && let Ok(next) = connection.next_sync_at.parse::<Timestamp>()
        && next > now
    {
        return Err(OpError::RateLimited {
            retry_after_secs: now.duration_until(next).as_secs().max(1).unsigned_abs(),
            message: Text::new(
                "{name}'s provider asked for fewer requests; Exhale asks it again at {at} (UTC).",
            )
            .with("name", &connection.name)
            .with("at", next.strftime("%Y-%m-%d %H:%M")),
        });
    }
    let today_utc = utc_day(now);
    let now_text = clock::timestamp_text(now);
    let lease_until = clock::timestamp_text(now + SignedDuration::from_secs(LEASE_SECS));
    let household = caller.household_id;
    let (credentials, taken) = transactions::blocking_write(store.clone(), move |db| {
        let made = store::banks::requests_on(db, id, today_utc).map_err(transactions::internal)?;
        if made >= provider.daily_requests() {
            return Ok((None, Err(made)));
        }
        if !store::banks::lease(db, household, id, &now_text, &lease_until)
            .map_err(transactions::internal)?
        {
            return Ok((None, Ok(false)));
        }
        store::banks::count_request(db, id, today_utc).map_err(transactions::internal)?;
        let secret =
            store::banks::credentials(db, household, id).map_err(transactions::internal)?;
        let application = match provider {
            BankProvider::EnableBanking => stored_application(db, household)?,
            BankProvider::SimpleFin => None,
        };
        Ok((secret.map(|secret| Credentials { secret, application }), Ok(true)))
    })
    .await?;
    match taken {
        Err(made) => {
            return Err(OpError::RateLimited {
                retry_after_secs: now.duration_until(next_utc_day(now)).as_secs().max(1) as u64,
                message: Text::new("{name} has made its {count} requests to the bank for today, the provider's limit; it syncs again after midnight UTC.")
                    .with("name", &connection.name)
                    .with("count", made),
            });
        }
        Ok(false) => {
            return Err(OpError::conflict(
                Text::new(
                    "{name} is syncing now; list_bank_connections shows how it went in a minute.",
                )
                .with("name", &connection.name),
            ));
        }
        Ok(true) => {}
    }
    let fetched = match &credentials {
        Some(credentials) => {
            let from = connection
                .synced_through
                .map(|day| day.saturating_sub(jiff::Span::new().days(OVERLAP_DAYS)))
                .unwrap_or_else(|| today_utc.saturating_sub(jiff::Span::new().days(UNSYNCED_DAYS)));
            // The read ends well before the lease does, so no other sync can start while this
            // one may still write.
            let fetch = feeds.fetch(provider, credentials, from, now, connection.reach_local);
            match tokio::time::timeout(FETCH_LIMIT, fetch).await {
                Ok(fetched) => fetched,
                Err(_) => Err(Failure::TryLater {
                    detail: format!("the bank took more than {} s", FETCH_LIMIT.as_secs()),
                }),
            }
        }
        None => Err(Failure::Relink { reason: "its credentials are missing".into() }),
    };
    match fetched {
        Ok((fetched, consent_until)) => {
            Ok(Prefetched::Sync { connection_id: id, fetched, today_utc, consent_until })
        }
        Err(failure) => {
            record_failure(store, &connection, provider, &failure, now).await?;
            Err(failure_error(&failure))
        }
    }
}

/// Records a failed sync on its connection, in a write of its own, and ends its lease.
async fn record_failure(
    store: &Arc<store::Store>,
    connection: &store::banks::ConnectionRow,
    provider: BankProvider,
    failure: &Failure,
    now: Timestamp,
) -> Result<(), OpError> {
    let failures = connection.failures + 1;
    let status = failure.status().as_str();
    let detail = failure_words(failure);
    let attempt_at = clock::timestamp_text(now);
    let next = clock::timestamp_text(next_sync(provider, now, Some(failure), failures));
    let (household, id) = (connection.household_id, connection.id);
    tracing::info!(connection = id, status, "bank sync failed");
    transactions::blocking_write(store.clone(), move |db| {
        let outcome = store::banks::Outcome {
            status,
            detail: Some(&detail),
            failures,
            synced_through: None,
            attempt_at: &attempt_at,
            success_at: None,
            next_sync_at: &next,
        };
        store::banks::record_outcome(db, household, id, &outcome).map_err(transactions::internal)
    })
    .await
}

/// Ends the lease a sync took, whatever became of its transaction (a dry run's outcome is
/// rolled back with the rest).
pub(crate) async fn after(store: &Arc<store::Store>, household: i64, prefetched: Option<i64>) {
    let Some(id) = prefetched else { return };
    let result = transactions::blocking_write(store.clone(), move |db| {
        store::banks::release(db, household, id).map_err(transactions::internal)
    })
    .await;
    if let Err(err) = result {
        tracing::warn!(code = err.code(), "ending a bank sync's lease failed");
    }
}
