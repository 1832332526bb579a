//! SimpleFIN, the protocol of SimpleFIN Bridge (US and Canada), without its transport: what
//! to send and what an answer means.
//!
//! A person pastes a setup token: base64 of a claim URL, which is claimed once with an empty
//! POST and answers an Access URL with credentials in it. That Access URL is the connection's
//! secret. `GET {access}/accounts` answers an Account Set, in the protocol's first shape
//! (`errors`, `org`) or its second (`errlist`, `connections`, `conn_id`), which this module
//! reads into the provider's accounts and transactions. The Bridge serves at most 90 days a
//! request and about 24 requests a day ([`MAX_WINDOW_DAYS`], [`DAILY_REQUESTS`]).

use std::fmt;

use base64::Engine as _;
use jiff::{Timestamp, civil::Date, tz::TimeZone};
use ops::common::CurrencyCode;
use serde::Deserialize;
use url::Url;

use ops::banks::{
    Balance, Failure, Fetched, MAX_TEXT, Problem, RemoteAccount, RemoteTransaction, bounded,
};

use crate::{
    amounts::minor,
    http::{Http, Outgoing, Reach},
};

/// The most days one request may cover: the Bridge caps a longer window.
pub const MAX_WINDOW_DAYS: i64 = 90;

/// The most requests Exhale makes for one Access URL in a day: under the Bridge's 24, which
/// it answers with warnings and then by disabling the token.
pub const DAILY_REQUESTS: u32 = 20;

/// Why a setup token or an Access URL cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    #[error(
        "this is not a SimpleFIN setup token; copy the whole token from the Bridge's page (it is one long line of letters and digits)"
    )]
    NotAToken,
    #[error(
        "the token names an address that is not https ({0}); SimpleFIN is only used over https"
    )]
    NotHttps(String),
    #[error(
        "the Bridge's answer is not an Access URL with its credentials; link again with a new token"
    )]
    NotAnAccessUrl,
}

/// The claim URL a setup token names. Spaces and line breaks a paste adds are left out, and
/// missing `=` padding is put back.
pub fn claim_url(token: &str, allow_http: bool) -> Result<Url, LinkError> {
    let mut compact: String = token.chars().filter(|c| !c.is_whitespace()).collect();
    while !compact.len().is_multiple_of(4) {
        compact.push('=');
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(compact.as_bytes())
        .or_else(|_| base64::engine::general_purpose::URL_SAFE.decode(compact.as_bytes()))
        .map_err(|_| LinkError::NotAToken)?;
    let text = String::from_utf8(decoded).map_err(|_| LinkError::NotAToken)?;
    // Read as every address Exhale connects to is read (`ops::network::read_url`).
    let url = ops::network::read_url(text.trim()).ok_or(LinkError::NotAToken)?;
    checked_scheme(url, allow_http)
}

/// `url` when it is https (or http where the owner allowed it, for a bridge on this machine
/// or a test); its address is the caller's to check against the network rules.
fn checked_scheme(url: Url, allow_http: bool) -> Result<Url, LinkError> {
    match url.scheme() {
        "https" => Ok(url),
        "http" if allow_http => Ok(url),
        _ => Err(LinkError::NotHttps(url.origin().ascii_serialization())),
    }
}

/// An Access URL, split into the address requests go to and the credentials they carry in a
/// Basic authorization header. Its `Debug` never shows the credentials.
#[derive(Clone, PartialEq, Eq)]
pub struct AccessUrl {
    root: Url,
    user: String,
    password: String,
}

impl AccessUrl {
    /// Reads the Bridge's answer to a claim (the Access URL, perhaps quoted or with spaces).
    pub fn parse(answer: &str, allow_http: bool) -> Result<Self, LinkError> {
        let text = answer.trim().trim_matches('"');
        let mut root = ops::network::read_url(text).ok_or(LinkError::NotAnAccessUrl)?;
        let decode = |part: &str| {
            percent_encoding::percent_decode_str(part)
                .decode_utf8()
                .ok()
                .map(|text| text.into_owned())
        };
        let user = decode(root.username()).filter(|user| !user.is_empty());
        let password = root.password().and_then(decode);
        let (Some(user), Some(password)) = (user, password) else {
            return Err(LinkError::NotAnAccessUrl);
        };
        root.set_username("").map_err(|_| LinkError::NotAnAccessUrl)?;
        root.set_password(None).map_err(|_| LinkError::NotAnAccessUrl)?;
        let root = checked_scheme(root, allow_http)?;
        Ok(Self { root, user, password })
    }

    /// Where requests go, without the credentials.
    pub fn root(&self) -> &Url {
        &self.root
    }

    /// The `Authorization` header's value.
    pub fn authorization(&self) -> String {
        let pair = format!("{}:{}", self.user, self.password);
        format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair))
    }

    /// The Access URL again, as the secret to keep.
    pub fn secret(&self) -> String {
        let mut url = self.root.clone();
        // Both set on a URL that had them when it was read.
        let _ = url.set_username(&self.user);
        let _ = url.set_password(Some(&self.password));
        url.to_string()
    }

    /// `GET /accounts` for `window`, with pending transactions and the protocol's second
    /// shape (a server that knows only the first answers with it).
    pub fn accounts(&self, window: Window) -> Url {
        let mut url = self.root.clone();
        let path = format!("{}/accounts", url.path().trim_end_matches('/'));
        url.set_path(&path);
        let at_midnight = |day: Date| {
            day.to_zoned(TimeZone::UTC).map(|zoned| zoned.timestamp().as_second()).unwrap_or(0)
        };
        {
            let mut query = url.query_pairs_mut();
            query.clear();
            query.append_pair("start-date", &at_midnight(window.start).to_string());
            if let Some(end) = window.end {
                query.append_pair("end-date", &at_midnight(end).to_string());
            }
            // Servers test for the parameter's presence: it is left out to leave pending out.
            query.append_pair("pending", "1");
            query.append_pair("version", "2");
        }
        url
    }
}

impl fmt::Debug for AccessUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AccessUrl").field("root", &self.root.as_str()).finish_non_exhaustive()
    }
}

/// The days one request asks for: from `start`, and before `end` (to today when `None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub start: Date,
    pub end: Option<Date>,
}

/// The requests that cover `from` up to `today_utc` (today's date in UTC, as the Bridge counts
/// its windows), newest first, each within the Bridge's 90 days: the first sync walks back
/// window by window, a later one needs one. The caller decides how far back to go.
pub fn windows(from: Date, today_utc: Date) -> Vec<Window> {
    let days = |n: i64| jiff::Span::new().days(n);
    // The newest ends now, so it starts a day less than the most far back.
    let newest = today_utc.saturating_sub(days(MAX_WINDOW_DAYS - 1)).max(from);
    let mut windows = vec![Window { start: newest, end: None }];
    while let Some(end) = windows.last().map(|window| window.start).filter(|start| *start > from) {
        let start = end.saturating_sub(days(MAX_WINDOW_DAYS)).max(from);
        windows.push(Window { start, end: Some(end) });
    }
    windows
}

/// What an HTTP status of `/accounts` (or of a claim) means, when it is not a success.
pub fn status_failure(status: u16, retry_after_secs: Option<u64>) -> Option<Failure> {
    match status {
        200..=299 => None,
        402 => Some(Failure::Relink {
            reason: "the SimpleFIN Bridge subscription is unpaid; renew it at the Bridge".into(),
        }),
        403 => Some(Failure::Relink {
            reason:
                "SimpleFIN refused the access; make a new setup token at the Bridge and link again"
                    .into(),
        }),
        429 => Some(Failure::RateLimited { retry_after_secs }),
        500..=599 => Some(Failure::TryLater { detail: format!("the Bridge answered {status}") }),
        _ => Some(Failure::Protocol { detail: format!("the Bridge answered {status}") }),
    }
}

/// The answer to a claim that refused the token.
pub fn claim_refused() -> Failure {
    Failure::Relink {
        reason: "this setup token was already claimed or does not exist: make a new one at the Bridge, and disable the old one there, as someone else may have claimed it".into(),
    }
}

/// Claims a setup token, once: the Access URL to keep as the connection's secret. Only an
/// owner may `reach` a bridge on this machine or the local network (and then over http).
pub async fn claim(http: &Http, token: &str, reach: Reach) -> Result<AccessUrl, Failure> {
    let allow_http = reach == Reach::AlsoLocal;
    let url =
        claim_url(token, allow_http).map_err(|err| Failure::Config { detail: err.to_string() })?;
    let outgoing =
        Outgoing { method: hyper::Method::POST, url, authorization: None, body: Vec::new() };
    let answer = http.send(outgoing, reach).await?;
    if answer.status == hyper::StatusCode::FORBIDDEN {
        return Err(claim_refused());
    }
    if let Some(failure) = status_failure(answer.status.as_u16(), None) {
        return Err(failure);
    }
    let text = std::str::from_utf8(&answer.body)
        .map_err(|_| Failure::Protocol { detail: "the claim's answer is not text".into() })?;
    AccessUrl::parse(text, allow_http).map_err(|err| Failure::Protocol { detail: err.to_string() })
}

/// Fetches every account of an Access URL, with the transactions of `window`: one request.
pub async fn fetch(
    http: &Http,
    access: &AccessUrl,
    window: Window,
    reach: Reach,
) -> Result<Fetched, Failure> {
    let outgoing = Outgoing {
        method: hyper::Method::GET,
        url: access.accounts(window),
        authorization: Some(access.authorization()),
        body: Vec::new(),
    };
    let answer = http.send(outgoing, reach).await?;
    let retry_after = answer
        .headers
        .get(hyper::header::RETRY_AFTER)
        .and_then(|value| value.to_str().ok()?.trim().parse::<u64>().ok());
    if let Some(failure) = status_failure(answer.status.as_u16(), retry_after) {
        return Err(failure);
    }
    let mut fetched = read_account_set(&answer.body)?;
    fetched.from = Some(window.start);
    Ok(fetched)
}

#[derive(Deserialize)]
struct AccountSet {
    #[serde(default)]
    errors: Vec<String>,
    #[serde(default)]
    errlist: Vec<ErrorEntry>,
    #[serde(default)]
    connections: Vec<Connection>,
    accounts: Vec<Account>,
    #[serde(default, rename = "x-api-message")]
    api_messages: Vec<String>,
}

#[derive(Deserialize)]
struct ErrorEntry {
    code: String,
    #[serde(default, alias = "message")]
    msg: Option<String>,
    #[serde(default)]
    conn_id: Option<String>,
    #[serde(default)]
    account_id: Option<String>,
}

#[derive(Deserialize)]
struct Connection {
    conn_id: String,
    #[serde(default)]
    name: Option<String>,
}

#[derive(Deserialize)]
struct Organisation {
    #[serde(default)]
    domain: Option<String>,
    #[serde(default)]
    name: Option<String>,
}

#[derive(Deserialize)]
struct Account {
    id: String,
    name: String,
    currency: String,
    balance: String,
    #[serde(default, rename = "available-balance")]
    available_balance: Option<String>,
    #[serde(rename = "balance-date")]
    balance_date: i64,
    #[serde(default)]
    transactions: Vec<Transaction>,
    #[serde(default)]
    org: Option<Organisation>,
    #[serde(default)]
    conn_id: Option<String>,
}

#[derive(Deserialize)]
struct Transaction {
    id: String,
    posted: i64,
    amount: String,
    description: String,
    #[serde(default)]
    transacted_at: Option<i64>,
    #[serde(default)]
    pending: Option<bool>,
    #[serde(default)]
    payee: Option<String>,
}

/// The UTC day of epoch seconds, as SimpleFIN dates are read.
fn day_of(seconds: i64) -> Option<Date> {
    Timestamp::from_second(seconds).ok().map(|at| at.to_zoned(TimeZone::UTC).date())
}

/// Reads an Account Set, either shape. A failure of the whole request is `Err`; what failed for
/// one login, account or transaction is a [`Problem`] beside what came.
pub fn read_account_set(body: &[u8]) -> Result<Fetched, Failure> {
    let set: AccountSet = serde_json::from_slice(body)
        // The parser's message quotes the body: only where it went wrong is kept.
        .map_err(|err| Failure::Protocol {
            detail: format!(
                "not an Account Set ({:?} at line {}, column {})",
                err.classify(),
                err.line(),
                err.column()
            ),
        })?;
    let mut fetched = Fetched::default();
    for entry in &set.errlist {
        let text = bounded(entry.msg.as_deref().unwrap_or(&entry.code));
        let failure = match entry.code.split('.').next().unwrap_or_default() {
            "gen" if entry.code == "gen.auth" => {
                return Err(Failure::Relink {
                    reason: format!(
                        "SimpleFIN refused the access ({text}); link again with a new setup token"
                    ),
                });
            }
            // The Bridge's quota warning: fewer requests, or it disables the access.
            "gen" if says_limit(&text) => {
                fetched.problems.push(Problem {
                    account_key: None,
                    login: None,
                    failure: Failure::RateLimited { retry_after_secs: None },
                });
                fetched.messages.push(text);
                continue;
            }
            // A developer's error (a window capped): ours to avoid, not for the person.
            "gen" => {
                fetched.problems.push(Problem {
                    account_key: None,
                    login: None,
                    failure: Failure::Protocol { detail: text },
                });
                continue;
            }
            "con" => Failure::Relink {
                reason: format!("fix this bank login at the SimpleFIN Bridge: {text}"),
            },
            _ => Failure::TryLater { detail: text.clone() },
        };
        let account_key = entry.account_id.as_ref().map(|id| match &entry.conn_id {
            Some(connection) => key_of(Some(connection), id),
            None => set
                .accounts
                .iter()
                .find(|account| &account.id == id)
                .map_or_else(|| key_of(None, id), account_key),
        });
        let login = entry.conn_id.clone();
        fetched.problems.push(Problem { account_key, login, failure });
        fetched.messages.push(text);
    }
    for message in set.errors.iter().chain(&set.api_messages) {
        let text = bounded(message);
        let lower = text.to_lowercase();
        if lower.contains("reauthenticate") || lower.contains("need attention") {
            fetched.problems.push(Problem {
                account_key: None,
                login: None,
                failure: Failure::Relink {
                    reason: format!("fix this bank login at the SimpleFIN Bridge: {text}"),
                },
            });
        } else if says_limit(&text) {
            fetched.problems.push(Problem {
                account_key: None,
                login: None,
                failure: Failure::RateLimited { retry_after_secs: None },
            });
        }
        fetched.messages.push(text);
    }
    if set.accounts.is_empty()
        && fetched.problems.iter().any(|p| matches!(p.failure, Failure::Relink { .. }))
    {
        let reason = fetched.messages.join("; ");
        return Err(Failure::Relink { reason });
    }
    for account in &set.accounts {
        read_account(&set, account, &mut fetched);
    }
    Ok(fetched)
}

/// What identifies an account across syncs: its login (or, in the first shape, its bank) and
/// its id, which is unique only there.
fn account_key(account: &Account) -> String {
    let owner = account.conn_id.clone().or_else(|| {
        let org = account.org.as_ref()?;
        org.domain.clone().or_else(|| org.name.clone())
    });
    key_of(owner.as_deref(), &account.id)
}

/// Whether the Bridge's text says its quota of requests is reached or near ("make fewer
/// requests", "only refreshed once every 24 hours").
fn says_limit(text: &str) -> bool {
    let lower = text.to_lowercase();
    lower.contains("fewer requests") || lower.contains("once every 24 hours")
}

/// `owner/id`, each part with `%` and `/` escaped, so no two accounts share a key.
fn key_of(owner: Option<&str>, id: &str) -> String {
    let part = |text: &str| text.replace('%', "%25").replace('/', "%2F");
    match owner {
        Some(owner) => format!("{}/{}", part(owner), part(id)),
        None => part(id),
    }
}

fn read_account(set: &AccountSet, account: &Account, fetched: &mut Fetched) {
    let key = account_key(account);
    let institution = match &account.conn_id {
        Some(id) => set.connections.iter().find(|c| &c.conn_id == id).and_then(|c| c.name.clone()),
        None => {
            account.org.as_ref().and_then(|org| org.name.clone().or_else(|| org.domain.clone()))
        }
    };
    // A custom currency is a URL, a brokerage's may be a ticker: neither is read.
    let currency: Option<CurrencyCode> = account.currency.trim().parse().ok();
    let name = bounded(&account.name);
    let Some(currency) = currency else {
        fetched.problems.push(Problem {
            account_key: Some(key.clone()),
            login: account.conn_id.clone(),
            failure: Failure::Config {
                detail: format!(
                    "{name} is in a currency Exhale does not know ({}); nothing of it is imported",
                    bounded(&account.currency)
                ),
            },
        });
        fetched.accounts.push(RemoteAccount {
            key,
            name,
            institution: institution.map(|i| bounded(&i)),
            currency: None,
            balance: None,
        });
        return;
    };
    let mut refuse = |detail: String| {
        fetched.problems.push(Problem {
            account_key: Some(key.clone()),
            login: account.conn_id.clone(),
            failure: Failure::Protocol { detail },
        });
    };
    let balance_day = Some(account.balance_date).filter(|&seconds| seconds > 0).and_then(day_of);
    let balance = match (minor(&account.balance, currency), balance_day) {
        (Ok(booked_minor), Some(on)) => {
            let available_minor =
                match account.available_balance.as_deref().map(|text| minor(text, currency)) {
                    Some(Err(err)) => {
                        refuse(format!("{name}: its available balance cannot be read: {err}"));
                        None
                    }
                    Some(Ok(available)) => Some(available),
                    None => None,
                };
            Some(Balance { on, booked_minor, available_minor })
        }
        (Err(err), _) => {
            refuse(format!("{name}: its balance cannot be read: {err}"));
            None
        }
        (_, None) => None,
    };
    let mut transactions = Vec::with_capacity(account.transactions.len());
    for transaction in &account.transactions {
        let pending = transaction.pending.unwrap_or(false) || transaction.posted == 0;
        let when = if pending {
            transaction.transacted_at.or(Some(transaction.posted))
        } else {
            Some(transaction.posted)
        };
        // The id is kept exactly as sent: two ids alike but for a space are two transactions.
        if transaction.id.is_empty()
            || transaction.id.chars().count() > MAX_TEXT
            || transaction.id.chars().any(char::is_control)
        {
            refuse(format!(
                "{name}: a transaction's id cannot be kept ({})",
                bounded(&transaction.id)
            ));
            continue;
        }
        let Some(on) = when.filter(|&seconds| seconds > 0).and_then(day_of) else {
            refuse(format!("{name}: transaction {} has no date", bounded(&transaction.id)));
            continue;
        };
        match minor(&transaction.amount, currency) {
            Ok(amount_minor) => transactions.push(RemoteTransaction {
                account_key: key.clone(),
                key: transaction.id.clone(),
                pending,
                on,
                amount_minor,
                payee: transaction.payee.as_deref().map(bounded).filter(|payee| !payee.is_empty()),
                description: bounded(&transaction.description),
            }),
            Err(err) => refuse(format!(
                "{name}: transaction {} has an amount that cannot be read: {err}",
                bounded(&transaction.id)
            )),
        }
    }
    fetched.transactions.extend(transactions);
    fetched.accounts.push(RemoteAccount {
        key,
        name,
        institution: institution.map(|i| bounded(&i)),
        currency: Some(currency),
        balance,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(url: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(url)
    }

    fn day(text: &str) -> Date {
        text.parse().unwrap()
    }

    #[test]
    fn a_pasted_token_is_read_whatever_the_paste_did_to_it() {
        let claim = "https://bridge.example/simplefin/claim/ABC123";
        let encoded = token(claim);
        let broken = format!(" {}\n{} ", &encoded[..10], encoded[10..].trim_end_matches('='));
        assert_eq!(claim_url(&broken, false).unwrap().as_str(), claim);
        assert_eq!(claim_url("not a token!", false), Err(LinkError::NotAToken));
        assert_eq!(claim_url(&token("just words"), false), Err(LinkError::NotAToken));
        let plain = token("http://127.0.0.1:8080/simplefin/claim/X");
        assert!(matches!(claim_url(&plain, false), Err(LinkError::NotHttps(_))));
        assert!(claim_url(&plain, true).is_ok(), "an owner may allow http for a bridge here");
    }

    #[test]
    fn an_access_url_keeps_its_credentials_out_of_sight() {
        let access =
            AccessUrl::parse(" https://user%2B1:p%40ss+w&x@bridge.example/simplefin\n", false)
                .unwrap();
        assert_eq!(access.root().as_str(), "https://bridge.example/simplefin");
        let expected = base64::engine::general_purpose::STANDARD.encode("user+1:p@ss+w&x");
        assert_eq!(access.authorization(), format!("Basic {expected}"));
        let debug = format!("{access:?}");
        assert!(!debug.contains("p@ss") && !debug.contains("user"), "{debug}");
        assert_eq!(AccessUrl::parse(&access.secret(), false).unwrap(), access);
        let url =
            access.accounts(Window { start: day("2026-09-06"), end: Some(day("2026-12-05")) });
        assert_eq!(
            url.as_str(),
            "https://bridge.example/simplefin/accounts?start-date=1788652800&end-date=1796428800&pending=1&version=2"
        );
        assert!(url.username().is_empty() && url.password().is_none());
        assert_eq!(
            AccessUrl::parse("https://bridge.example/simplefin", false),
            Err(LinkError::NotAnAccessUrl)
        );
        assert!(matches!(
            AccessUrl::parse("http://u:p@bridge.example/s", false),
            Err(LinkError::NotHttps(_))
        ));
    }

    #[test]
    fn a_first_sync_walks_back_in_windows_of_ninety_days_and_a_later_one_needs_one() {
        let today = day("2026-12-06");
        let later = windows(day("2026-11-20"), today);
        assert_eq!(later, [Window { start: day("2026-11-20"), end: None }]);
        let first = windows(day("2026-06-06"), today);
        assert_eq!(first.len(), 3, "{first:?}");
        assert_eq!(first[0], Window { start: day("2026-09-08"), end: None });
        for window in &first[1..] {
            let end = window.end.unwrap();
            assert!((end - window.start).get_days() <= MAX_WINDOW_DAYS as i32, "{window:?}");
        }
        for pair in first.windows(2) {
            assert_eq!(pair[1].end, Some(pair[0].start), "each window ends where the next began");
        }
        assert_eq!(first.last().unwrap().start, day("2026-06-06"));
    }

    /// The same accounts in the protocol's first shape and its second.
    const FIRST_SHAPE: &str = r#"{"errors": [], "accounts": [{
        "org": {"domain": "mybank.example", "name": "My Bank", "sfin-url": "https://sfin.example"},
        "id": "ACT-7", "name": "Checking", "currency": "USD", "balance": "1520.07",
        "available-balance": "1495.07", "balance-date": 1796342400,
        "transactions": [
          {"id": "TRN-1", "posted": 1796256000, "amount": "-12.99", "description": "NETFLIX.COM", "payee": "Netflix", "transacted_at": 1796169600},
          {"id": "TRN-2", "posted": 0, "amount": "-40.00", "description": "SHELL 123", "pending": true, "transacted_at": 1796300000}
        ]}]}"#;

    const SECOND_SHAPE: &str = r#"{"errlist": [], "connections": [{"conn_id": "CON-1", "name": "My Bank", "org_id": "ORG-9", "sfin_url": "https://sfin.example"}],
        "accounts": [{
        "conn_id": "CON-1", "id": "ACT-7", "name": "Checking", "currency": "USD", "balance": "1520.07",
        "available-balance": "1495.07", "balance-date": 1796342400,
        "transactions": [
          {"id": "TRN-1", "posted": 1796256000, "amount": "-12.99", "description": "NETFLIX.COM", "payee": "Netflix", "transacted_at": 1796169600},
          {"id": "TRN-2", "posted": 0, "amount": "-40.00", "description": "SHELL 123", "pending": true, "transacted_at": 1796300000}
        ]}]}"#;

    #[test]
    fn both_shapes_of_an_account_set_read_the_same() {
        let first = read_account_set(FIRST_SHAPE.as_bytes()).unwrap();
        let second = read_account_set(SECOND_SHAPE.as_bytes()).unwrap();
        for fetched in [&first, &second] {
            assert!(fetched.problems.is_empty(), "{:?}", fetched.problems);
            let account = &fetched.accounts[0];
            assert_eq!(
                (account.name.as_str(), account.institution.as_deref()),
                ("Checking", Some("My Bank"))
            );
            assert_eq!(account.currency.map(CurrencyCode::code), Some("USD"));
            assert_eq!(
                account.balance,
                Some(Balance {
                    on: day("2026-12-04"),
                    booked_minor: 152_007,
                    available_minor: Some(149_507)
                })
            );
            let read: Vec<(&str, bool, Date, i64, Option<&str>)> = fetched
                .transactions
                .iter()
                .map(|t| (t.key.as_str(), t.pending, t.on, t.amount_minor, t.payee.as_deref()))
                .collect();
            assert_eq!(
                read,
                [
                    ("TRN-1", false, day("2026-12-03"), -1299, Some("Netflix")),
                    ("TRN-2", true, day("2026-12-03"), -4000, None),
                ]
            );
        }
        // The login (second shape) or the bank (first) tells one bank's ACT-7 from another's.
        assert_eq!(first.accounts[0].key, "mybank.example/ACT-7");
        assert_eq!(second.accounts[0].key, "CON-1/ACT-7");
        assert!(second.transactions.iter().all(|t| t.account_key == "CON-1/ACT-7"));
    }

    #[test]
    fn what_cannot_be_read_is_said_and_the_rest_comes() {
        let body = r#"{"errlist": [
            {"code": "con.auth", "msg": "Authentication failed for Other Bank", "conn_id": "CON-2"},
            {"code": "act.failed", "message": "Try again later", "conn_id": "CON-1", "account_id": "ACT-8"},
            {"code": "gen.api", "msg": "Requested date range exceeds limit of 90 days and was capped"}
          ],
          "connections": [{"conn_id": "CON-1", "name": "My Bank"}],
          "accounts": [
            {"conn_id": "CON-1", "id": "ACT-7", "name": "Checking", "currency": "USD", "balance": "10.00", "balance-date": 1796342400,
             "transactions": [
               {"id": "T1", "posted": 1796256000, "amount": "-12.999", "description": "THREE DECIMALS"},
               {"id": "T2", "posted": 1796256000, "amount": "1e3", "description": "NOT A DECIMAL"},
               {"id": "T3", "posted": 1796256000, "amount": "-5.000", "description": "COFFEE\n<script>alert(1)</script>"},
               {"id": "T 4", "posted": 1796256000, "amount": "-1.00", "description": "AN ID WITH A SPACE"},
               {"id": "T\t4", "posted": 1796256000, "amount": "-1.00", "description": "AN ID WITH A TAB"}
             ]},
            {"conn_id": "CON-1", "id": "MILES", "name": "Miles", "currency": "https://bank.example/currency/miles", "balance": "100", "balance-date": 1796342400}
          ]}"#;
        let fetched = read_account_set(body.as_bytes()).unwrap();
        let kept: Vec<(&str, i64, &str)> = fetched
            .transactions
            .iter()
            .map(|t| (t.key.as_str(), t.amount_minor, t.description.as_str()))
            .collect();
        assert_eq!(
            kept,
            [("T3", -500, "COFFEE <script>alert(1)</script>"), ("T 4", -100, "AN ID WITH A SPACE")],
            "text kept as data on one line, an exact amount read, an id kept as sent"
        );
        let problems: Vec<(Option<&str>, &str)> = fetched
            .problems
            .iter()
            .map(|p| {
                let class = match p.failure {
                    Failure::Relink { .. } => "relink",
                    Failure::TryLater { .. } => "later",
                    Failure::RateLimited { .. } => "rate",
                    Failure::Config { .. } => "config",
                    Failure::Protocol { .. } => "protocol",
                };
                (p.account_key.as_deref(), class)
            })
            .collect();
        assert_eq!(
            problems,
            [
                (None, "relink"),
                (Some("CON-1/ACT-8"), "later"),
                (None, "protocol"),
                (Some("CON-1/ACT-7"), "protocol"),
                (Some("CON-1/ACT-7"), "protocol"),
                (Some("CON-1/ACT-7"), "protocol"),
                (Some("CON-1/MILES"), "config"),
            ]
        );
        assert!(fetched.accounts.iter().any(|a| a.key == "CON-1/MILES" && a.currency.is_none()));
        assert!(fetched.messages.iter().any(|m| m.contains("Other Bank")));
        assert_eq!(fetched.problems[0].login.as_deref(), Some("CON-2"), "the login to fix");
        assert!(
            !fetched.messages.iter().any(|m| m.contains("capped")),
            "a developer's error is not shown"
        );
    }

    #[test]
    fn a_refused_access_is_a_relink_and_a_busy_bridge_a_later_try() {
        let revoked = r#"{"errlist": [{"code": "gen.auth", "msg": "Authentication failed"}], "accounts": []}"#;
        assert!(matches!(read_account_set(revoked.as_bytes()), Err(Failure::Relink { .. })));
        let first_shape = r#"{"errors": ["You must reauthenticate with My Bank"], "accounts": []}"#;
        assert!(matches!(read_account_set(first_shape.as_bytes()), Err(Failure::Relink { .. })));
        assert!(matches!(read_account_set(b"<html>"), Err(Failure::Protocol { .. })));
        assert!(matches!(status_failure(403, None), Some(Failure::Relink { .. })));
        assert!(matches!(status_failure(402, None), Some(Failure::Relink { .. })));
        assert!(matches!(status_failure(503, None), Some(Failure::TryLater { .. })));
        assert!(matches!(status_failure(429, None), Some(Failure::RateLimited { .. })));
        assert_eq!(status_failure(200, None), None);
    }

    #[test]
    fn a_quota_warning_in_either_shape_is_the_bridges_limit_and_the_accounts_still_come() {
        let warning = "You have made many requests today. Please make fewer requests.";
        let second = format!(
            r#"{{"errlist": [{{"code": "gen.api", "msg": "{warning}"}}], "accounts": []}}"#
        );
        let first = format!(r#"{{"errors": ["{warning}"], "accounts": []}}"#);
        for body in [second, first] {
            let fetched = read_account_set(body.as_bytes()).unwrap();
            assert!(
                matches!(
                    fetched.problems.as_slice(),
                    [Problem { account_key: None, failure: Failure::RateLimited { .. }, .. }]
                ),
                "{fetched:?}"
            );
            assert_eq!(fetched.messages, [warning]);
        }
    }
}
