//! An Enable Banking of a test's own: its API over TLS on 127.0.0.1, checking every request's
//! token as the real one does (RS256 by the application's key, its id as `kid`, the fixed
//! issuer and audience, at most a day's life), with a bank list by country, a consent the test
//! approves in the person's place, sessions a client may close (`DELETE`), and accounts whose
//! transactions come two to a page with a `continuation_key`. A test expires sessions, answers
//! the next request with 429 and `Retry-After`, and reads back every request.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, PoisonError},
};

use base64::Engine as _;
use serde_json::{Value, json};

use crate::{TestAuthority, http_reply};

/// The private key of the tests' application (PKCS#8 PEM; 2048 bits, made for the tests).
pub const APPLICATION_KEY: &str = include_str!("../fixtures/enable-banking-test-key.pem");
/// The tests' application id.
pub const APPLICATION_ID: &str = "0b1d2c3e-test-application";

/// A request the fake received.
#[derive(Clone, Debug)]
pub struct ApiRequest {
    pub method: String,
    pub path: String,
    pub query: HashMap<String, String>,
    pub body: Value,
}

#[derive(Default)]
struct State {
    /// The consents started, by their `state`, and whether the test approved them.
    consents: HashMap<String, bool>,
    /// Session ids by the codes the approvals gave.
    codes: HashMap<String, String>,
    /// Sessions: their status.
    sessions: HashMap<String, String>,
    /// Accounts by uid: their identification hash, details, balances and transactions.
    accounts: Vec<(String, Value)>,
    next_status: Option<(u16, &'static str, Option<u64>)>,
    /// The longest window of transactions a read may ask for, in days.
    history_days: Option<i64>,
    requests: Vec<ApiRequest>,
}

pub struct EnableBankingFake {
    port: u16,
    /// The authority to trust (DER).
    pub authority: Vec<u8>,
    state: Arc<Mutex<State>>,
    _task: tokio::task::JoinHandle<()>,
}

impl EnableBankingFake {
    pub async fn start() -> Self {
        let authority = TestAuthority::for_localhost();
        let state: Arc<Mutex<State>> = Arc::default();
        let shared = state.clone();
        let public_key = public_key();
        let (port, task) = authority
            .serve(move |request| {
                let (state, public_key) = (shared.clone(), public_key.clone());
                async move {
                    let (status, headers, body) = answer(&state, &public_key, &request);
                    let headers: Vec<(&str, &str)> =
                        headers.iter().map(|(name, value)| (*name, value.as_str())).collect();
                    Some(http_reply(status, &headers, &body))
                }
            })
            .await;
        Self { port, authority: authority.der, state, _task: task }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The API's root on the fake.
    pub fn root(&self) -> String {
        format!("https://localhost:{}/", self.port)
    }

    /// Adds an account to every session: `transactions` as the API writes them.
    pub fn add_account(&self, uid: &str, hash: &str, name: &str, transactions: Value) {
        let account = json!({
            "identification_hash": hash,
            "details": {"name": name, "currency": "EUR", "cash_account_type": "CACC"},
            "balances": [
                {"balance_amount": {"amount": "1520.07", "currency": "EUR"}, "balance_type": "ITAV", "reference_date": "2026-11-29"},
                {"balance_amount": {"amount": "1320.07", "currency": "EUR"}, "balance_type": "CLBD", "reference_date": "2026-11-28"}
            ],
            "transactions": transactions,
        });
        self.state().accounts.push((uid.to_owned(), account));
    }

    /// The person consents at their bank: the code the redirect back to Exhale carries.
    pub fn approve(&self, consent_state: &str) -> Option<String> {
        let mut state = self.state();
        let approved = state.consents.get_mut(consent_state)?;
        *approved = true;
        let code = format!("code-{}", state.codes.len() + 1);
        let session = format!("session-{}", state.sessions.len() + 1);
        state.sessions.insert(session.clone(), "AUTHORIZED".into());
        state.codes.insert(code.clone(), session);
        Some(code)
    }

    /// Every session's consent ends, as when a bank or the person revokes it.
    pub fn expire_sessions(&self) {
        for status in self.state().sessions.values_mut() {
            *status = "EXPIRED".into();
        }
    }

    /// Answers the next request with `status`, the error code `error` and, for 429, `Retry-After`.
    pub fn refuse_next(&self, status: u16, error: &'static str, retry_after: Option<u64>) {
        self.state().next_status = Some((status, error, retry_after));
    }

    /// Banks refuse a read of transactions over more than `days` days with
    /// `WRONG_TRANSACTIONS_PERIOD`, suggesting the start they allow.
    pub fn limit_history(&self, days: i64) {
        self.state().history_days = Some(days);
    }

    /// Every request received, oldest first.
    pub fn requests(&self) -> Vec<ApiRequest> {
        self.state().requests.clone()
    }
}

/// The tests' application's public key (DER), from its private key.
fn public_key() -> Arc<Vec<u8>> {
    let body: String = APPLICATION_KEY.lines().filter(|line| !line.starts_with("-----")).collect();
    let der = base64::engine::general_purpose::STANDARD.decode(body).expect("the test key's PEM");
    let key = ring::rsa::KeyPair::from_pkcs8(&der).expect("the test key");
    Arc::new(ring::signature::KeyPair::public_key(&key).as_ref().to_vec())
}

/// Why the token is not one the API takes, or `None` when it is.
fn token_problem(authorization: Option<&str>, public_key: &[u8]) -> Option<&'static str> {
    let token = authorization?.strip_prefix("Bearer ")?;
    let parts: Vec<&str> = token.split('.').collect();
    let [header, claims, signature] = parts.as_slice() else { return Some("not a JWT") };
    let decode = |part: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(part).ok();
    let json = |part: &str| serde_json::from_slice::<Value>(&decode(part)?).ok();
    let (Some(header), Some(claims), Some(signature)) =
        (json(header), json(claims), decode(signature))
    else {
        return Some("unreadable");
    };
    if header["alg"] != "RS256" || header["typ"] != "JWT" || header["kid"] != APPLICATION_ID {
        return Some("wrong header");
    }
    if claims["iss"] != "enablebanking.com" || claims["aud"] != "api.enablebanking.com" {
        return Some("wrong claims");
    }
    let life = claims["exp"].as_i64().unwrap_or(0) - claims["iat"].as_i64().unwrap_or(i64::MAX);
    if !(1..=86_400).contains(&life) {
        return Some("wrong life");
    }
    let signed = format!("{}.{}", parts[0], parts[1]);
    ring::signature::UnparsedPublicKey::new(
        &ring::signature::RSA_PKCS1_2048_8192_SHA256,
        public_key,
    )
    .verify(signed.as_bytes(), &signature)
    .err()
    .map(|_| "bad signature")
}

type Answer = (u16, Vec<(&'static str, String)>, String);

fn refusal(status: u16, error: &str) -> Answer {
    let body = json!({"code": status, "message": error, "error": error});
    (status, vec![("Content-Type", "application/json".into())], body.to_string())
}

fn ok(body: Value) -> Answer {
    (200, vec![("Content-Type", "application/json".into())], body.to_string())
}

fn answer(state: &Mutex<State>, public_key: &[u8], request: &str) -> Answer {
    let (head, body) = request.split_once("\r\n\r\n").unwrap_or((request, ""));
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or_default().split(' ');
    let method = first.next().unwrap_or_default().to_owned();
    let target = first.next().unwrap_or_default();
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let authorization = lines.find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim().eq_ignore_ascii_case("authorization").then(|| value.trim().to_owned())
    });
    let query: HashMap<String, String> = query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(key, value)| (key.to_owned(), value.to_owned()))
        .collect();
    let body: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
    state.requests.push(ApiRequest {
        method: method.clone(),
        path: path.to_owned(),
        query: query.clone(),
        body: body.clone(),
    });
    if token_problem(authorization.as_deref(), public_key).is_some() {
        return refusal(401, "UNAUTHORIZED_ACCESS");
    }
    if let Some((status, error, retry_after)) = state.next_status.take() {
        let mut refused = refusal(status, error);
        if let Some(seconds) = retry_after {
            refused.1.push(("Retry-After", seconds.to_string()));
        }
        return refused;
    }
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    match (method.as_str(), segments.as_slice()) {
        ("GET", ["aspsps"]) => {
            let banks = json!([
                {"name": "OP", "country": "FI", "psu_types": ["personal"]},
                {"name": "Nordea", "country": "FI", "maximum_consent_validity": 7_776_000, "psu_types": ["personal"]},
                {"name": "Swedbank", "country": "SE", "maximum_consent_validity": 15_552_000, "psu_types": ["personal"]}
            ]);
            let country = query.get("country").map(String::as_str);
            let listed: Vec<&Value> = banks
                .as_array()
                .into_iter()
                .flatten()
                .filter(|bank| country.is_none_or(|country| bank["country"] == country))
                .collect();
            ok(json!({"aspsps": listed}))
        }
        ("POST", ["auth"]) => {
            let Some(consent) = body["state"].as_str() else {
                return refusal(422, "WRONG_REQUEST_PARAMETERS");
            };
            state.consents.insert(consent.to_owned(), false);
            ok(json!({"url": format!("https://bank.example/consent?state={consent}"),
                "authorization_id": format!("auth-{}", state.consents.len())}))
        }
        ("POST", ["sessions"]) => {
            let code = body["code"].as_str().unwrap_or_default();
            match state.codes.remove(code) {
                Some(session) => ok(json!({"session_id": session,
                    "access": {"valid_until": "2027-02-27T10:00:00Z"}})),
                None => refusal(400, "WRONG_AUTHORIZATION_CODE"),
            }
        }
        ("DELETE", ["sessions", id]) => match state.sessions.get_mut(*id) {
            Some(status) => {
                *status = "CLOSED".into();
                ok(json!({"message": "OK"}))
            }
            None => refusal(404, "SESSION_DOES_NOT_EXIST"),
        },
        ("GET", ["sessions", id]) => match state.sessions.get(*id) {
            Some(status) => ok(json!({
                "status": status,
                "access": {"valid_until": "2027-02-27T10:00:00Z"},
                "accounts_data": state.accounts.iter().map(|(uid, account)| json!({
                    "uid": uid, "identification_hash": account["identification_hash"]
                })).collect::<Vec<_>>(),
            })),
            None => refusal(404, "SESSION_DOES_NOT_EXIST"),
        },
        ("GET", ["accounts", uid, what]) => {
            if state.sessions.values().all(|status| status != "AUTHORIZED") {
                return refusal(401, "EXPIRED_SESSION");
            }
            let Some((_, account)) = state.accounts.iter().find(|(id, _)| id == uid) else {
                return refusal(404, "ACCOUNT_DOES_NOT_EXIST");
            };
            match *what {
                "details" => ok(account["details"].clone()),
                "balances" => ok(json!({"balances": account["balances"]})),
                "transactions" => {
                    let day = |key: &str| {
                        query.get(key).and_then(|d| d.parse::<jiff::civil::Date>().ok())
                    };
                    let (from, to) = (day("date_from"), day("date_to"));
                    if let (Some(days), Some(from), Some(to)) = (state.history_days, from, to)
                        && i64::from((to - from).get_days()) > days
                    {
                        let allowed = to.saturating_sub(jiff::Span::new().days(days - 1));
                        let body = json!({"code": 422, "message": "Wrong transactions period",
                            "error": "WRONG_TRANSACTIONS_PERIOD",
                            "detail": {"date_from": allowed.to_string()}});
                        return (
                            422,
                            vec![("Content-Type", "application/json".into())],
                            body.to_string(),
                        );
                    }
                    let on = |t: &Value| {
                        let date = t["booking_date"].as_str().or(t["transaction_date"].as_str());
                        date.and_then(|d| d.parse::<jiff::civil::Date>().ok())
                    };
                    let all: Vec<Value> = account["transactions"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default()
                        .into_iter()
                        .filter(|t| from.is_none_or(|from| on(t).is_none_or(|on| on >= from)))
                        .collect();
                    let page: usize = query
                        .get("continuation_key")
                        .and_then(|key| key.strip_prefix("page-")?.parse().ok())
                        .unwrap_or(0);
                    let shown: Vec<Value> = all.iter().skip(page * 2).take(2).cloned().collect();
                    let next = (all.len() > (page + 1) * 2).then(|| format!("page-{}", page + 1));
                    ok(json!({"transactions": shown, "continuation_key": next}))
                }
                _ => refusal(404, "NOT_FOUND"),
            }
        }
        _ => refusal(404, "NOT_FOUND"),
    }
}
