//! A SimpleFIN Bridge of a test's own: the protocol over TLS on 127.0.0.1, with a test
//! authority the client is told to trust. A setup token claims once (`403` after), `/accounts`
//! wants the Access URL's credentials as Basic authorization (`403` without them, or once
//! revoked), reads `start-date` (inclusive), `end-date` (exclusive), `pending` (by its
//! presence) and `version`, and answers in the protocol's second shape when asked for it and
//! in its first otherwise. A test adds accounts, sets the next answer's status or a redirect,
//! sets a daily quota the Bridge warns about and then disables the access for, and reads back
//! every request the client made.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, PoisonError},
};

use base64::Engine as _;
use serde_json::{Value, json};

use crate::{TestAuthority, http_reply};

/// A request the fake received, as the client sent it.
#[derive(Clone, Debug)]
pub struct BridgeRequest {
    pub method: String,
    pub path: String,
    pub query: HashMap<String, String>,
    pub authorization: Option<String>,
    pub content_length: Option<String>,
}

#[derive(Default)]
struct Bridge {
    /// Setup token codes, and whether each was claimed.
    codes: HashMap<String, bool>,
    /// The accounts, in the second shape: `conn_id`, and transactions with `posted`.
    accounts: Vec<Value>,
    revoked: bool,
    /// The status of the next `/accounts` answer, instead of the accounts.
    next_status: Option<u16>,
    /// Where the next `/accounts` request is sent instead.
    next_redirect: Option<String>,
    /// After how many `/accounts` requests the Bridge warns, and after how many it disables
    /// the access.
    quota: Option<(usize, usize)>,
    /// `/accounts` requests wait here until the test lets them go.
    held: Option<Held>,
    requests: Vec<BridgeRequest>,
}

/// `/accounts` requests held by [`SimpleFinBridge::hold_accounts`]: the test hears each arrive
/// and lets them go on.
#[derive(Clone)]
pub struct Held {
    arrived: Arc<tokio::sync::Notify>,
    release: Arc<tokio::sync::Notify>,
}

impl Held {
    /// Waits until a held request has arrived.
    pub async fn arrived(&self) {
        self.arrived.notified().await;
    }

    /// Lets the held request, or the next one, go on.
    pub fn release(&self) {
        self.release.notify_one();
    }
}

/// The user and password of every Access URL the fake gives out.
const USER: &str = "user-1";
const PASSWORD: &str = "p@ss:w0rd";

pub struct SimpleFinBridge {
    port: u16,
    /// The authority to trust (DER).
    pub authority: Vec<u8>,
    state: Arc<Mutex<Bridge>>,
    _task: tokio::task::JoinHandle<()>,
}

impl SimpleFinBridge {
    pub async fn start() -> Self {
        let authority = TestAuthority::for_localhost();
        let state: Arc<Mutex<Bridge>> = Arc::default();
        let shared = state.clone();
        let port = Arc::new(std::sync::OnceLock::<u16>::new());
        let known = port.clone();
        let (bound, task) = authority
            .serve(move |head| {
                let (state, port) = (shared.clone(), known.get().copied().unwrap_or_default());
                async move {
                    let request = read_request(&head);
                    let held = state
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .held
                        .clone()
                        .filter(|_| request.path.ends_with("/accounts"));
                    if let Some(held) = held {
                        held.arrived.notify_one();
                        held.release.notified().await;
                    }
                    let (status, headers, body) = answer(&state, port, request);
                    let headers: Vec<(&str, &str)> =
                        headers.iter().map(|(name, value)| (*name, value.as_str())).collect();
                    Some(http_reply(status, &headers, &body))
                }
            })
            .await;
        let _ = port.set(bound);
        Self { port: bound, authority: authority.der, state, _task: task }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Bridge> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes the authority to trust as a PEM file in `dir` (for `bank_ca_file`); its path.
    pub fn write_authority(&self, dir: &std::path::Path) -> std::path::PathBuf {
        let path = dir.join("bank-ca.pem");
        std::fs::write(&path, crate::tls::pem("CERTIFICATE", &self.authority))
            .expect("write the authority");
        path
    }

    /// An address on the fake.
    pub fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{path}", self.port)
    }

    /// A setup token for a new claim code, as the Bridge's page shows it.
    pub fn setup_token(&self, code: &str) -> String {
        self.state().codes.insert(code.to_owned(), false);
        base64::engine::general_purpose::STANDARD
            .encode(self.url(&format!("/simplefin/claim/{code}")))
    }

    /// Adds an account in the protocol's second shape (`conn_id`, `transactions` with
    /// `posted`, `pending` and `transacted_at`).
    pub fn add_account(&self, account: Value) {
        self.state().accounts.push(account);
    }

    /// Changes the accounts (in the second shape) the Bridge serves from now on: a pending
    /// transaction booked under a new id, a new one, a balance.
    pub fn edit_accounts(&self, edit: impl FnOnce(&mut Vec<Value>)) {
        edit(&mut self.state().accounts);
    }

    /// Holds every `/accounts` request from now on until the test releases it.
    pub fn hold_accounts(&self) -> Held {
        let held = Held { arrived: Arc::default(), release: Arc::default() };
        self.state().held = Some(held.clone());
        held
    }

    /// The first account shows one more transaction, `transaction` as the protocol writes it.
    pub fn post(&self, transaction: Value) {
        self.edit_accounts(|accounts| {
            if let Some(transactions) = accounts[0]["transactions"].as_array_mut() {
                transactions.push(transaction);
            }
        });
    }

    /// Disables every Access URL, as a person does at the Bridge.
    pub fn revoke(&self) {
        self.state().revoked = true;
    }

    /// Answers the next `/accounts` request with `status` and no accounts.
    pub fn answer_next(&self, status: u16) {
        self.state().next_status = Some(status);
    }

    /// The Bridge's quota: past `warn_after` `/accounts` requests it warns in its errors
    /// ("make fewer requests"), and past `disable_after` it disables the access.
    pub fn quota(&self, warn_after: usize, disable_after: usize) {
        self.state().quota = Some((warn_after, disable_after));
    }

    /// Sends the next `/accounts` request to `location`.
    pub fn redirect_next(&self, location: &str) {
        self.state().next_redirect = Some(location.to_owned());
    }

    /// Every request received, oldest first.
    pub fn requests(&self) -> Vec<BridgeRequest> {
        self.state().requests.clone()
    }
}

fn read_request(head: &str) -> BridgeRequest {
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or_default().split(' ');
    let method = first.next().unwrap_or_default().to_owned();
    let target = first.next().unwrap_or_default();
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let header = |name: &str| {
        head.split("\r\n").skip(1).find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim().eq_ignore_ascii_case(name).then(|| value.trim().to_owned())
        })
    };
    BridgeRequest {
        method,
        path: path.to_owned(),
        query: query
            .split('&')
            .filter_map(|pair| pair.split_once('=').or(Some((pair, ""))))
            .filter(|(key, _)| !key.is_empty())
            .map(|(key, value)| (key.to_owned(), value.to_owned()))
            .collect(),
        authorization: header("authorization"),
        content_length: header("content-length"),
    }
}

type Answer = (u16, Vec<(&'static str, String)>, String);

/// What the Bridge says past its warning level.
const QUOTA_WARNING: &str =
    "You have made many requests today. Please make fewer requests to avoid being disabled.";

fn answer(state: &Mutex<Bridge>, port: u16, request: BridgeRequest) -> Answer {
    let mut bridge = state.lock().unwrap_or_else(PoisonError::into_inner);
    bridge.requests.push(request.clone());
    let text = |status: u16, body: &str| {
        (status, vec![("Content-Type", "text/plain".to_owned())], body.to_owned())
    };
    if let Some(code) = request.path.strip_prefix("/simplefin/claim/") {
        return match bridge.codes.get_mut(code) {
            Some(claimed) if !*claimed && request.method == "POST" => {
                *claimed = true;
                let user = USER;
                let password = PASSWORD.replace('@', "%40").replace(':', "%3A");
                text(200, &format!("https://{user}:{password}@localhost:{port}/simplefin"))
            }
            _ => text(403, "Forbidden"),
        };
    }
    if request.path != "/simplefin/accounts" || request.method != "GET" {
        return text(404, "Not found");
    }
    let expected = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{USER}:{PASSWORD}"))
    );
    if bridge.revoked || request.authorization.as_deref() != Some(expected.as_str()) {
        return text(403, "Forbidden");
    }
    let made = bridge.requests.iter().filter(|r| r.path == "/simplefin/accounts").count();
    let warned = match bridge.quota {
        Some((_, disable_after)) if made > disable_after => {
            bridge.revoked = true;
            return text(403, "Forbidden");
        }
        Some((warn_after, _)) => made > warn_after,
        None => false,
    };
    if let Some(location) = bridge.next_redirect.take() {
        return (302, vec![("Location", location)], String::new());
    }
    if let Some(status) = bridge.next_status.take() {
        return text(status, "Try again later");
    }
    let seconds = |name: &str| request.query.get(name).and_then(|value| value.parse::<i64>().ok());
    let (start, end) =
        (seconds("start-date").unwrap_or(0), seconds("end-date").unwrap_or(i64::MAX));
    let pending = request.query.contains_key("pending");
    let second_shape = request.query.get("version").is_some_and(|version| version == "2");
    let accounts: Vec<Value> = bridge
        .accounts
        .iter()
        .map(|account| {
            let mut account = account.clone();
            let transactions: Vec<Value> = account["transactions"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter(|t| {
                    let is_pending = t["pending"].as_bool().unwrap_or(false);
                    let when = if is_pending { t["transacted_at"].as_i64() } else { t["posted"].as_i64() };
                    (pending || !is_pending) && when.is_some_and(|at| start <= at && at < end)
                })
                .collect();
            account["transactions"] = Value::Array(transactions);
            if !second_shape {
                let login = account["conn_id"].as_str().unwrap_or_default().to_owned();
                if let Some(fields) = account.as_object_mut() {
                    fields.remove("conn_id");
                }
                account["org"] = json!({"domain": format!("{}.example", login.to_lowercase()), "name": login, "sfin-url": "https://sfin.example"});
            }
            account
        })
        .collect();
    let body = if second_shape {
        let mut logins: Vec<&str> =
            bridge.accounts.iter().filter_map(|account| account["conn_id"].as_str()).collect();
        logins.sort_unstable();
        logins.dedup();
        let connections: Vec<Value> = logins
            .iter()
            .map(|login| json!({"conn_id": login, "name": format!("{login} Bank"), "org_id": "ORG", "sfin_url": "https://sfin.example"}))
            .collect();
        let errlist: Vec<Value> =
            warned.then(|| json!({"code": "gen.api", "msg": QUOTA_WARNING})).into_iter().collect();
        json!({"errlist": errlist, "connections": connections, "accounts": accounts})
    } else {
        let errors: Vec<&str> = warned.then_some(QUOTA_WARNING).into_iter().collect();
        json!({"errors": errors, "accounts": accounts})
    };
    (200, vec![("Content-Type", "application/json".to_owned())], body.to_string())
}
