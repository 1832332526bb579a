//! Enable Banking (Europe, PSD2), its API without the household's state: what to send and
//! what an answer means.
//!
//! A household registers an application of its own (restricted mode: only the accounts it
//! linked in Enable Banking's Control Panel) and gives Exhale the application's id and private
//! key. Every request carries a JWT signed with that key (RS256, an hour's life). A person
//! chooses their bank from the list for their country ([`banks`]), is sent to it with
//! [`start_authorization`], comes back with a code that [`authorize_session`] turns into a
//! session, whose accounts [`fetch`] reads: each account's balances and its transactions page
//! by page (`continuation_key`). Accounts are known across sessions by their
//! `identification_hash`, transactions by their `entry_reference`.

use std::fmt;

use base64::Engine as _;
use jiff::{Timestamp, civil::Date};
use ops::{
    banks::{Balance, Failure, Fetched, Problem, RemoteAccount, RemoteTransaction, bounded},
    common::CurrencyCode,
};
use ring::{rand::SystemRandom, rsa::KeyPair, signature::RSA_PKCS1_SHA256};
use serde::Deserialize;
use serde_json::{Value, json};
use url::Url;

use crate::{
    amounts::minor,
    http::{Answer, Http, Outgoing, Reach},
};

/// Where Enable Banking's API is.
pub const API_ROOT: &str = "https://api.enablebanking.com";
/// How long a request's token lives (the API refuses more than a day).
const TOKEN_SECS: i64 = 3600;
/// The most pages of one account's transactions a read follows.
const MAX_PAGES: usize = 100;
/// How many days back a read of transactions reaches when the bank refuses the window asked
/// for as too long and suggests no start of its own, tried in turn (a bank gives more than
/// 90 days only in the minutes after the person consented, and some less).
const SHORTER_WINDOWS_DAYS: [i64; 3] = [89, 60, 30];

/// The household's application: its id and its private key.
pub struct Application {
    id: String,
    key: KeyPair,
    root: Url,
}

impl fmt::Debug for Application {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Application").field("id", &self.id).finish_non_exhaustive()
    }
}

fn config(detail: impl Into<String>) -> Failure {
    Failure::Config { detail: detail.into() }
}

fn unreadable(detail: impl Into<String>) -> Failure {
    Failure::Protocol { detail: detail.into() }
}

impl Application {
    /// The application `id` with its private key, as Enable Banking's Control Panel gives it
    /// (PEM, PKCS#8 or PKCS#1), on the API at `root`.
    pub fn new(id: &str, private_key_pem: &str, root: Url) -> Result<Self, Failure> {
        let id = id.trim();
        if id.is_empty() || id.len() > 100 || id.chars().any(|c| c.is_whitespace()) {
            return Err(config(
                "the application id is the one line Enable Banking shows for the application",
            ));
        }
        let pem = private_key_pem.trim();
        let (pkcs8, body) = if let Some(body) = between(pem, "PRIVATE KEY") {
            (true, body)
        } else if let Some(body) = between(pem, "RSA PRIVATE KEY") {
            (false, body)
        } else {
            return Err(config(
                "the private key is the .pem file Enable Banking gave for the application (it starts with -----BEGIN PRIVATE KEY-----)",
            ));
        };
        let compact: String = body.chars().filter(|c| !c.is_whitespace()).collect();
        let der = base64::engine::general_purpose::STANDARD
            .decode(compact)
            .map_err(|_| config("the private key's PEM is damaged"))?;
        let key = if pkcs8 { KeyPair::from_pkcs8(&der) } else { KeyPair::from_der(&der) }
            .map_err(|_| config("the private key is not an RSA key of 2048 to 4096 bits"))?;
        Ok(Self { id: id.to_owned(), key, root })
    }

    /// A token for the requests made at `now` (epoch seconds): RS256, the application id as
    /// its key id, an hour's life.
    pub fn token(&self, now: i64) -> Result<String, Failure> {
        let part = |value: &Value| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string())
        };
        let header = json!({"typ": "JWT", "alg": "RS256", "kid": self.id});
        let claims = json!({"iss": "enablebanking.com", "aud": "api.enablebanking.com",
            "iat": now, "exp": now + TOKEN_SECS});
        let signed = format!("{}.{}", part(&header), part(&claims));
        let mut signature = vec![0; self.key.public().modulus_len()];
        self.key
            .sign(&RSA_PKCS1_SHA256, &SystemRandom::new(), signed.as_bytes(), &mut signature)
            .map_err(|_| config("the private key cannot sign"))?;
        Ok(format!(
            "{signed}.{}",
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(signature)
        ))
    }
}

/// The base64 between a PEM block's BEGIN and END lines labelled `label`.
fn between<'a>(pem: &'a str, label: &str) -> Option<&'a str> {
    let begin = format!("-----BEGIN {label}-----");
    let end = format!("-----END {label}-----");
    let start = pem.find(&begin)? + begin.len();
    let stop = pem[start..].find(&end)? + start;
    Some(&pem[start..stop])
}

/// What Enable Banking's answer of `status` with `body` means, when it is not a success: by
/// its `error` code first, since a status alone is ambiguous (401 is both a wrong key and an
/// expired session).
pub fn failure(status: u16, body: &[u8], retry_after_secs: Option<u64>) -> Failure {
    let error: Option<String> = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|value| value.get("error").and_then(Value::as_str).map(str::to_owned));
    let said = |what: &str| format!("Enable Banking answered {status} {what}");
    match error.as_deref() {
        Some(
            "EXPIRED_SESSION" | "REVOKED_SESSION" | "CLOSED_SESSION" | "SESSION_DOES_NOT_EXIST",
        ) => Failure::Relink {
            reason: "the bank's consent has ended; connect the bank again to renew it".into(),
        },
        Some("ASPSP_PSU_ACTION_REQUIRED") => Failure::Relink {
            reason: "the bank asks you to act in its own app or site, then connect it again".into(),
        },
        Some(
            "UNAUTHORIZED_ACCESS"
            | "ACCESS_DENIED"
            | "AUTHORIZATION_NOT_PROVIDED"
            | "UNAUTHORIZED_IP"
            | "INVALID_HOST",
        ) => config(
            "Enable Banking refused the application: check its id and private key, and that it is active",
        ),
        Some("NO_ACCOUNTS_ADDED") => config(
            "the application has no accounts: link them in Enable Banking's Control Panel first",
        ),
        Some("REDIRECT_URI_NOT_ALLOWED") => config(
            "Exhale's return address is not allowed: add it to the application's redirect URLs in the Control Panel",
        ),
        Some("ASPSP_RATE_LIMIT_EXCEEDED") => Failure::RateLimited { retry_after_secs },
        Some("ASPSP_ERROR" | "ASPSP_TIMEOUT") => Failure::TryLater { detail: said("(the bank)") },
        Some(other) if status < 500 && status != 408 && status != 429 => {
            unreadable(said(&format!("({})", bounded(other))))
        }
        _ => match status {
            429 => Failure::RateLimited { retry_after_secs },
            401 | 403 => config(
                "Enable Banking refused the application: check its id and private key, and that it is active",
            ),
            408 | 500..=599 => Failure::TryLater { detail: said("") },
            _ => unreadable(said("")),
        },
    }
}

/// One request to the API, signed with a token made at `now`.
fn request(
    app: &Application,
    method: hyper::Method,
    path: &str,
    body: Option<Value>,
    now: i64,
) -> Result<Outgoing, Failure> {
    let url = app.root.join(path).map_err(|_| unreadable(format!("{path} is not a path")))?;
    Ok(Outgoing {
        method,
        url,
        authorization: Some(format!("Bearer {}", app.token(now)?)),
        body: body.map(|body| body.to_string().into_bytes()).unwrap_or_default(),
    })
}

/// A successful answer's JSON, or what a refusal means.
fn json_of(answer: &Answer, path: &str) -> Result<Value, Failure> {
    if !answer.status.is_success() {
        return Err(failure(answer.status.as_u16(), &answer.body, answer.retry_after()));
    }
    serde_json::from_slice(&answer.body).map_err(|_| Failure::TryLater {
        detail: format!("Enable Banking's answer to {path} is not JSON"),
    })
}

/// One request to the API: its JSON answer, or what its refusal means.
async fn call(
    http: &Http,
    app: &Application,
    method: hyper::Method,
    path: &str,
    body: Option<Value>,
    now: i64,
    reach: Reach,
) -> Result<Value, Failure> {
    json_of(&http.send(request(app, method, path, body, now)?, reach).await?, path)
}

fn read<T: serde::de::DeserializeOwned>(value: Value, what: &str) -> Result<T, Failure> {
    serde_json::from_value(value).map_err(|err| unreadable(format!("{what}: {err}")))
}

/// A bank a person may connect.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Bank {
    pub name: String,
    pub country: String,
    /// The longest consent the bank gives, in seconds.
    #[serde(default)]
    pub maximum_consent_validity: Option<i64>,
}

/// The banks of `country` (ISO 3166 alpha-2) that give account information.
pub async fn banks(
    http: &Http,
    app: &Application,
    country: &str,
    now: i64,
    reach: Reach,
) -> Result<Vec<Bank>, Failure> {
    #[derive(Deserialize)]
    struct Banks {
        aspsps: Vec<Bank>,
    }
    let country: String = country.trim().to_ascii_uppercase().chars().take(2).collect();
    let path = format!("aspsps?country={country}&service=AIS");
    let answer = call(http, app, hyper::Method::GET, &path, None, now, reach).await?;
    Ok(read::<Banks>(answer, "the list of banks")?.aspsps)
}

/// How long a consent is asked for: 180 days, or less when the bank allows less, an hour
/// under its limit (a consent asked for at exactly the limit was refused).
pub fn consent_until(bank: &Bank, now: Timestamp) -> Timestamp {
    let days_180 = 180 * 86_400;
    let seconds = bank.maximum_consent_validity.map_or(days_180, |most| most.min(days_180)) - 3600;
    now.saturating_add(jiff::SignedDuration::from_secs(seconds.max(3600))).unwrap_or(now)
}

/// Starts a person's consent at `bank`: the address to send them to. They come back to
/// `redirect_url` with `state` and a code.
#[expect(clippy::too_many_arguments, reason = "each is one field of the request")]
pub async fn start_authorization(
    http: &Http,
    app: &Application,
    bank: &Bank,
    valid_until: Timestamp,
    state: &str,
    redirect_url: &str,
    now: i64,
    reach: Reach,
) -> Result<Url, Failure> {
    #[derive(Deserialize)]
    struct Started {
        url: String,
    }
    let body = json!({
        "access": {"valid_until": valid_until.to_string(), "balances": true, "transactions": true},
        "aspsp": {"name": bank.name, "country": bank.country},
        "state": state,
        "redirect_url": redirect_url,
        "psu_type": "personal",
    });
    let answer = call(http, app, hyper::Method::POST, "auth", Some(body), now, reach).await?;
    let started: Started = read(answer, "the start of the consent")?;
    ops::network::read_url(&started.url)
        .filter(|url| url.scheme() == "https")
        .ok_or_else(|| unreadable("the bank's address is not an https URL"))
}

/// Ends a session: Enable Banking closes the consent at the bank where the bank allows.
pub async fn close_session(
    http: &Http,
    app: &Application,
    session_id: &str,
    now: i64,
    reach: Reach,
) -> Result<(), Failure> {
    let path = format!("sessions/{}", escaped(session_id));
    call(http, app, hyper::Method::DELETE, &path, None, now, reach).await.map(|_| ())
}

/// A consented session: its id and when the consent ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Session {
    pub id: String,
    pub valid_until: Option<Timestamp>,
}

#[derive(Deserialize)]
struct Access {
    #[serde(default)]
    valid_until: Option<String>,
}

/// Turns the code a person came back with into a session.
pub async fn authorize_session(
    http: &Http,
    app: &Application,
    code: &str,
    now: i64,
    reach: Reach,
) -> Result<Session, Failure> {
    #[derive(Deserialize)]
    struct Authorized {
        session_id: String,
        #[serde(default)]
        access: Option<Access>,
    }
    let body = json!({"code": code});
    let answer = call(http, app, hyper::Method::POST, "sessions", Some(body), now, reach).await?;
    let authorized: Authorized = read(answer, "the session")?;
    Ok(Session {
        id: authorized.session_id,
        valid_until: authorized
            .access
            .and_then(|access| access.valid_until)
            .and_then(|at| at.parse().ok()),
    })
}

#[derive(Deserialize)]
struct SessionState {
    status: String,
    #[serde(default)]
    accounts_data: Vec<AccountData>,
    #[serde(default)]
    access: Option<Access>,
}

#[derive(Deserialize)]
struct AccountData {
    uid: String,
    #[serde(default)]
    identification_hash: Option<String>,
}

#[derive(Deserialize)]
struct Details {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    product: Option<String>,
    currency: String,
}

#[derive(Deserialize)]
struct Money {
    amount: String,
    currency: String,
}

#[derive(Deserialize)]
struct BalanceResource {
    balance_amount: Money,
    balance_type: String,
    #[serde(default)]
    reference_date: Option<String>,
    #[serde(default)]
    last_change_date_time: Option<String>,
}

#[derive(Deserialize)]
struct Party {
    #[serde(default)]
    name: Option<String>,
}

#[derive(Deserialize)]
struct Transaction {
    #[serde(default)]
    entry_reference: Option<String>,
    transaction_amount: Money,
    credit_debit_indicator: String,
    status: String,
    #[serde(default)]
    booking_date: Option<String>,
    #[serde(default)]
    value_date: Option<String>,
    #[serde(default)]
    transaction_date: Option<String>,
    #[serde(default)]
    creditor: Option<Party>,
    #[serde(default)]
    debtor: Option<Party>,
    #[serde(default)]
    remittance_information: Vec<String>,
}

#[derive(Deserialize)]
struct Page {
    #[serde(default)]
    transactions: Vec<Transaction>,
    #[serde(default)]
    continuation_key: Option<String>,
}

/// Reads every account of the session, with its balance and the transactions from `from` (or
/// as far back as the bank allows) to `today`, and when the consent ends. A session the bank no longer honours needs the person;
/// what fails for one account is that account's problem, and the others come.
pub async fn fetch(
    http: &Http,
    app: &Application,
    session_id: &str,
    from: Date,
    today: Date,
    now: i64,
    reach: Reach,
) -> Result<(Fetched, Option<Timestamp>), Failure> {
    let path = format!("sessions/{}", escaped(session_id));
    let state: SessionState =
        read(call(http, app, hyper::Method::GET, &path, None, now, reach).await?, "the session")?;
    if state.status != "AUTHORIZED" {
        return Err(Failure::Relink {
            reason: format!(
                "the bank's consent is {}; connect the bank again",
                bounded(&state.status.to_lowercase())
            ),
        });
    }
    let valid_until =
        state.access.and_then(|access| access.valid_until).and_then(|at| at.parse().ok());
    let mut fetched = Fetched { from: Some(from), ..Fetched::default() };
    for account in state.accounts_data {
        let key = account.identification_hash.clone().unwrap_or_else(|| account.uid.clone());
        match read_account(http, app, &account.uid, &key, from, today, now, reach).await {
            Ok((remote, transactions, read_from)) => {
                fetched.accounts.push(remote);
                fetched.transactions.extend(transactions);
                // A bank that gave less than was asked: what it did not show is not gone.
                fetched.from = fetched.from.max(Some(read_from));
            }
            // The whole connection: relink or a limit stops the read.
            Err(failure @ Failure::RateLimited { .. }) => return Err(failure),
            Err(failure) => {
                fetched.problems.push(Problem { account_key: Some(key), login: None, failure })
            }
        }
    }
    Ok((fetched, valid_until))
}

/// What is escaped of an id put in a path or a query: all but RFC 3986's unreserved.
const ESCAPED: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// An id as it is put in a path or a query.
fn escaped(id: &str) -> String {
    percent_encoding::utf8_percent_encode(id, ESCAPED).to_string()
}

/// One account: what it is, its transactions, and the day they were read from (later than
/// `from` when the bank refused so long a window).
#[expect(clippy::too_many_arguments, reason = "the account, its window and the request's context")]
async fn read_account(
    http: &Http,
    app: &Application,
    uid: &str,
    key: &str,
    from: Date,
    today: Date,
    now: i64,
    reach: Reach,
) -> Result<(RemoteAccount, Vec<RemoteTransaction>, Date), Failure> {
    let base = format!("accounts/{}", escaped(uid));
    let get = |path: String| async move {
        call(http, app, hyper::Method::GET, &path, None, now, reach).await
    };
    let details: Details = read(get(format!("{base}/details")).await?, "an account")?;
    let currency: Option<CurrencyCode> = details.currency.parse().ok();
    let name = details.name.or(details.product).unwrap_or_else(|| "Account".into());
    let balances: Vec<BalanceResource> =
        read::<Value>(get(format!("{base}/balances")).await?, "balances").and_then(|value| {
            read(value.get("balances").cloned().unwrap_or(Value::Null), "balances")
        })?;
    let balance = currency.and_then(|currency| pick_balance(&balances, currency, today));
    // The first page, from as far back as the bank allows.
    let mut from = from;
    let mut page = loop {
        let path = format!("{base}/transactions?date_from={from}&date_to={today}");
        let answer = http.send(request(app, hyper::Method::GET, &path, None, now)?, reach).await?;
        match too_long(&answer) {
            Some(suggested) => {
                from = shorter_window(from, today, suggested).ok_or_else(|| {
                    unreadable("the bank refused every window of transactions down to 30 days")
                })?;
            }
            None => break read::<Page>(json_of(&answer, &path)?, "transactions")?,
        }
    };
    let mut transactions = Vec::new();
    for _ in 0..MAX_PAGES {
        if let Some(currency) = currency {
            transactions.extend(
                page.transactions
                    .iter()
                    .filter_map(|t| remote_transaction(t, key, currency))
                    .filter(|t| t.on >= from),
            );
        }
        let Some(next) = page.continuation_key.filter(|next| !next.is_empty()) else { break };
        let path = format!(
            "{base}/transactions?date_from={from}&date_to={today}&continuation_key={}",
            escaped(&next)
        );
        page = read(get(path).await?, "transactions")?;
    }
    let account = RemoteAccount {
        key: key.to_owned(),
        name: bounded(&name),
        institution: None,
        currency,
        balance,
    };
    Ok((account, transactions, from))
}

/// When `answer` refuses a read of transactions because its window is too long: the start
/// the bank suggests, if it does (`WRONG_TRANSACTIONS_PERIOD` with `detail.date_from`, or a
/// bank's own `PERIOD_INVALID`).
fn too_long(answer: &Answer) -> Option<Option<Date>> {
    if answer.status.as_u16() != 422 && answer.status.as_u16() != 400 {
        return None;
    }
    let body: Value = serde_json::from_slice(&answer.body).ok()?;
    let said = |field: &str| body.get(field).and_then(Value::as_str);
    if said("error") != Some("WRONG_TRANSACTIONS_PERIOD") && said("code") != Some("PERIOD_INVALID")
    {
        return None;
    }
    let suggested = body.pointer("/detail/date_from").and_then(Value::as_str);
    Some(suggested.and_then(|day| day.parse().ok()))
}

/// The next, later start of a read whose window from `from` was refused: the bank's
/// suggestion, then [`SHORTER_WINDOWS_DAYS`]; `None` when none is later than `from`.
fn shorter_window(from: Date, today: Date, suggested: Option<Date>) -> Option<Date> {
    let ladder =
        SHORTER_WINDOWS_DAYS.map(|days| today.saturating_sub(jiff::Span::new().days(days)));
    suggested.filter(|day| *day <= today).into_iter().chain(ladder).find(|day| *day > from)
}

/// The booked balance and the available one, by the order of preference of their codes.
fn pick_balance(
    balances: &[BalanceResource],
    currency: CurrencyCode,
    today: Date,
) -> Option<Balance> {
    let first = |codes: &[&str]| {
        codes.iter().find_map(|code| {
            balances.iter().find(|b| {
                b.balance_type == *code && b.balance_amount.currency == currency.currency().code()
            })
        })
    };
    let booked = first(&["CLBD", "ITBD", "XPCD", "OPBD"])?;
    let available = first(&["CLAV", "ITAV", "OPAV"]);
    let on = day(&booked.reference_date)
        .or_else(|| {
            booked.last_change_date_time.as_deref().and_then(|at| {
                at.parse::<Timestamp>().ok().map(|at| at.to_zoned(jiff::tz::TimeZone::UTC).date())
            })
        })
        .unwrap_or(today);
    Some(Balance {
        on,
        booked_minor: minor(&booked.balance_amount.amount, currency).ok()?,
        available_minor: available.and_then(|b| minor(&b.balance_amount.amount, currency).ok()),
    })
}

/// A transaction as Exhale keeps it: booked or pending (cancelled and rejected ones are
/// left out), signed by its indicator, dated as the bank books it, keyed by its
/// `entry_reference` or else by what it says.
fn remote_transaction(
    t: &Transaction,
    account_key: &str,
    currency: CurrencyCode,
) -> Option<RemoteTransaction> {
    let pending = match t.status.as_str() {
        "BOOK" => false,
        "PDNG" | "HOLD" => true,
        _ => return None,
    };
    if t.transaction_amount.currency != currency.currency().code() {
        return None;
    }
    let amount = minor(&t.transaction_amount.amount, currency).ok()?.abs();
    let amount_minor = if t.credit_debit_indicator == "DBIT" { -amount } else { amount };
    let (transacted, valued, booked) =
        (day(&t.transaction_date), day(&t.value_date), day(&t.booking_date));
    let on =
        if pending { transacted.or(valued).or(booked) } else { booked.or(valued).or(transacted) }?;
    let party = if amount_minor < 0 { &t.creditor } else { &t.debtor };
    let payee = party.as_ref().and_then(|p| p.name.as_deref()).map(bounded);
    let remittance = bounded(&t.remittance_information.join(" "));
    let description =
        if remittance.is_empty() { payee.clone().unwrap_or_default() } else { remittance };
    let key = match t.entry_reference.as_deref().map(str::trim) {
        Some(reference) if !reference.is_empty() => bounded(reference),
        _ => content_key(on, amount_minor, payee.as_deref(), &description),
    };
    Some(RemoteTransaction {
        account_key: account_key.to_owned(),
        key,
        pending,
        on,
        amount_minor,
        payee,
        description,
    })
}

/// A day as the API writes it (`2026-11-28`); `None` for anything else.
fn day(text: &Option<String>) -> Option<Date> {
    text.as_deref().and_then(|text| text.get(..10)?.parse().ok())
}

/// A key for a transaction the bank gave no reference: what it says, hashed.
fn content_key(on: Date, amount_minor: i64, payee: Option<&str>, description: &str) -> String {
    let text = format!("{on}|{amount_minor}|{}|{description}", payee.unwrap_or_default());
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    let hex: String = digest.as_ref().iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("content:{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_is_read_by_its_error_code_before_its_status() {
        let body =
            |error: &str| format!("{{\"message\": \"x\", \"code\": 401, \"error\": \"{error}\"}}");
        assert!(matches!(
            failure(401, body("EXPIRED_SESSION").as_bytes(), None),
            Failure::Relink { .. }
        ));
        assert!(matches!(
            failure(401, body("UNAUTHORIZED_ACCESS").as_bytes(), None),
            Failure::Config { .. }
        ));
        assert!(matches!(
            failure(429, body("ASPSP_RATE_LIMIT_EXCEEDED").as_bytes(), Some(60)),
            Failure::RateLimited { retry_after_secs: Some(60) }
        ));
        assert!(matches!(
            failure(422, body("WRONG_REQUEST_PARAMETERS").as_bytes(), None),
            Failure::Protocol { .. }
        ));
        assert!(matches!(
            failure(502, b"<html>bad gateway</html>", None),
            Failure::TryLater { .. }
        ));
    }

    #[test]
    fn a_window_refused_as_too_long_starts_where_the_bank_says_then_ever_later() {
        let day = |text: &str| text.parse::<Date>().unwrap();
        let today = day("2026-11-29");
        let two_years = day("2024-11-29");
        // The bank's suggestion first, then 89, 60 and 30 days, each later than the last.
        assert_eq!(
            shorter_window(two_years, today, Some(day("2026-06-01"))),
            Some(day("2026-06-01"))
        );
        assert_eq!(shorter_window(two_years, today, None), Some(day("2026-09-01")));
        assert_eq!(shorter_window(day("2026-09-01"), today, None), Some(day("2026-09-30")));
        assert_eq!(shorter_window(day("2026-10-30"), today, None), None);
        // A suggestion in the future, or no later than what was refused, is passed over.
        assert_eq!(
            shorter_window(two_years, today, Some(day("2027-01-01"))),
            Some(day("2026-09-01"))
        );
        assert_eq!(
            shorter_window(day("2026-09-01"), today, Some(day("2026-08-01"))),
            Some(day("2026-09-30"))
        );
    }

    #[test]
    fn a_consent_is_asked_for_an_hour_under_the_banks_limit_and_at_most_180_days() {
        let now: Timestamp = "2026-12-01T00:00:00Z".parse().unwrap();
        let bank = |most: Option<i64>| Bank {
            name: "B".into(),
            country: "FI".into(),
            maximum_consent_validity: most,
        };
        assert_eq!(consent_until(&bank(Some(7_776_000)), now).to_string(), "2027-02-28T23:00:00Z");
        assert_eq!(consent_until(&bank(None), now).to_string(), "2027-05-29T23:00:00Z");
    }
}
