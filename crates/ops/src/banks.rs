//! Bank connections: money that arrives by itself, through SimpleFIN Bridge (US and Canada)
//! and, later, Enable Banking (Europe).
//!
//! Two halves. What every provider gives Exhale, whichever it is ([`RemoteAccount`],
//! [`RemoteTransaction`], [`Fetched`], and every failure in one of five classes by who must
//! act, [`Failure`]), and [`BankFeeds`], the provider calls `app` makes outside any database
//! transaction: the `banks` crate implements it and the server sets it at start-up. Then the
//! ops: agents list connections and ask for a sync; linking, choosing where an account's
//! transactions go and removing a connection are people's, because they write or delete a
//! credential.

use domain::{Date, entities::Visibility};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    common::{Amount, CurrencyCode, IdInput, RecordId, Ref, Timestamp},
    household::{Empty, Removed},
    op::{BoxFuture, Hints, Op, OpInfo},
    resolve::IsoDate,
};

// ---------------------------------------------------------------------------------------------
// What a provider gives

/// An account as a provider names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteAccount {
    /// What identifies the account at the provider from one sync to the next.
    pub key: String,
    pub name: String,
    /// The bank or login it belongs to, when the provider says.
    pub institution: Option<String>,
    /// `None` for a currency Exhale does not know (a custom one, a ticker): nothing of the
    /// account is imported, and the person is told why.
    pub currency: Option<CurrencyCode>,
    pub balance: Option<Balance>,
}

/// What an account held on a day.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Balance {
    pub on: Date,
    /// Booked, in minor units; negative for money owed.
    pub booked_minor: i64,
    /// Available to spend, when the provider gives it apart.
    pub available_minor: Option<i64>,
}

/// A transaction as a provider gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteTransaction {
    /// The [`RemoteAccount::key`] of its account.
    pub account_key: String,
    /// The provider's id for it, unique within its account (a pending one and the booked one it
    /// becomes may have different ids).
    pub key: String,
    pub pending: bool,
    /// When it was booked; for a pending one, when it happened.
    pub on: Date,
    /// In the account's currency's minor units; positive for money coming in.
    pub amount_minor: i64,
    /// Who was paid or paid, when the provider tells apart from the description.
    pub payee: Option<String>,
    pub description: String,
}

/// What one fetch brought: everything that could be read, and why the rest could not.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fetched {
    pub accounts: Vec<RemoteAccount>,
    pub transactions: Vec<RemoteTransaction>,
    /// What went wrong for one account, one login or one transaction while the rest came.
    pub problems: Vec<Problem>,
    /// What the provider asks to be shown to the person: its own words, kept as data.
    pub messages: Vec<String>,
    /// The first day the fetch covered.
    pub from: Option<Date>,
}

/// Part of a fetch that failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The account it concerns; `None` for a login or the connection as a whole.
    pub account_key: Option<String>,
    /// The login at the provider it concerns (every account of it), when the provider says.
    pub login: Option<String>,
    pub failure: Failure,
}

/// Why a provider call, or part of it, did not give what was asked, by who must act.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    /// The person must act: link again (a new token, a new consent) or fix the login at the
    /// provider. Nothing is retried until they do.
    #[error("the bank connection needs you: {reason}")]
    Relink { reason: String },
    /// Nobody needs to act: worth another try later.
    #[error("the bank did not answer this time: {detail}")]
    TryLater { detail: String },
    /// The provider's limit is reached; not again for as long as it said, when it said.
    #[error("the bank's limit of requests is reached")]
    RateLimited { retry_after_secs: Option<u64> },
    /// Something the person set is wrong, and says what.
    #[error("the bank connection is set up wrongly: {detail}")]
    Config { detail: String },
    /// The provider answered what Exhale cannot read: ours to look at.
    #[error("the bank's answer could not be read: {detail}")]
    Protocol { detail: String },
}

impl Failure {
    /// The status a connection takes when a whole sync fails so.
    pub fn status(&self) -> ConnectionStatus {
        match self {
            Self::Relink { .. } => ConnectionStatus::NeedsRelink,
            Self::TryLater { .. } => ConnectionStatus::TryLater,
            Self::RateLimited { .. } => ConnectionStatus::RateLimited,
            Self::Config { .. } => ConnectionStatus::Misconfigured,
            Self::Protocol { .. } => ConnectionStatus::Unreadable,
        }
    }
}

/// The longest a provider's text is kept (a description, a payee, a message).
pub const MAX_TEXT: usize = 300;

/// A provider's text as Exhale keeps it: one line, without control characters, at most
/// [`MAX_TEXT`] characters. It stays data, whatever it says.
pub fn bounded(text: &str) -> String {
    let line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    line.chars().take(MAX_TEXT).collect()
}

domain::named_enum! {
    /// Which service a bank connection goes through.
    pub enum BankProvider("bank provider") {
        /// SimpleFIN Bridge: banks in the US and Canada, linked with a setup token.
        SimpleFin => "simplefin",
        /// Enable Banking: banks in Europe (PSD2), linked by consent at the bank.
        EnableBanking => "enable_banking",
    }
}

impl BankProvider {
    /// The most requests Exhale makes for one connection in a UTC day: SimpleFIN Bridge
    /// warns from 24 and then disables the token; Enable Banking's banks allow four unattended
    /// reads an account.
    pub fn daily_requests(self) -> i64 {
        match self {
            Self::SimpleFin => 20,
            Self::EnableBanking => 4,
        }
    }

    /// How many days back a connection's first read asks for: one SimpleFIN request reaches
    /// 90 days; Enable Banking's banks give up to two years in the minutes after the person
    /// consented (less where a bank refuses: `banks::enable_banking` asks again for less).
    pub fn first_sync_days(self) -> i64 {
        match self {
            Self::SimpleFin => 89,
            Self::EnableBanking => 730,
        }
    }

    /// How often `serve` syncs a connection on its own.
    pub fn sync_every_hours(self) -> i64 {
        match self {
            Self::SimpleFin => 6,
            Self::EnableBanking => 6,
        }
    }
}

domain::named_enum! {
    /// How a bank connection's last sync went, by who must act.
    pub enum ConnectionStatus("bank connection status") {
        /// Synced; an account may still have a problem of its own.
        Ok => "ok",
        /// The person must link again (a new setup token, a new consent) or fix the login at
        /// the provider.
        NeedsRelink => "needs_relink",
        /// The bank or provider did not answer; the next sync tries again.
        TryLater => "try_later",
        /// The provider's limit of requests is reached; the next sync waits for it.
        RateLimited => "rate_limited",
        /// Something set for the connection is wrong.
        Misconfigured => "misconfigured",
        /// The provider answered what Exhale cannot read.
        Unreadable => "unreadable",
    }
}

/// The household's Enable Banking application: its id and private key (PEM). Its `Debug`
/// shows the id alone.
#[derive(Clone, PartialEq, Eq)]
pub struct EnableBankingApp {
    pub id: String,
    pub private_key: String,
}

impl std::fmt::Debug for EnableBankingApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnableBankingApp").field("id", &self.id).finish_non_exhaustive()
    }
}

/// What a connection is read with: its own secret (SimpleFIN's Access URL, Enable Banking's
/// session id) and, for Enable Banking, the household's application.
#[derive(Clone, Debug)]
pub struct Credentials {
    pub secret: String,
    pub application: Option<EnableBankingApp>,
}

/// A consent started at a bank: where to send the person, and until when it is asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsentStarted {
    /// The bank, as the provider names it.
    pub bank: String,
    pub url: String,
    pub valid_until: domain::Timestamp,
}

/// A consent the person gave: the session to keep as the connection's secret, when it ends,
/// and the first read of its accounts.
#[derive(Clone, Debug)]
pub struct ConsentGiven {
    pub session_id: String,
    pub valid_until: Option<domain::Timestamp>,
    pub fetched: Result<Fetched, Failure>,
}

/// The calls to bank providers, made outside any database transaction. Implemented by the
/// `banks` crate; set at start-up.
pub trait BankFeeds: Send + Sync {
    /// Checks a SimpleFIN setup token without claiming it (a dry run): `Err` says why it
    /// cannot be used. `local`: an owner may aim at this machine or the local network.
    fn check_simplefin_token(&self, token: &str, local: bool) -> Result<(), Failure>;

    /// Claims a SimpleFIN setup token, once: the credentials to keep as the connection's
    /// secret.
    fn claim_simplefin<'a>(
        &'a self,
        token: &'a str,
        local: bool,
    ) -> BoxFuture<'a, Result<String, Failure>>;

    /// Every account of the connection read with `credentials` at `now`, with the
    /// transactions from `from` (at most as far back as one request reaches: a provider's
    /// window) to today, and when its consent ends, for providers that have one.
    fn fetch<'a>(
        &'a self,
        provider: BankProvider,
        credentials: &'a Credentials,
        from: Date,
        now: domain::Timestamp,
        local: bool,
    ) -> BoxFuture<'a, Result<(Fetched, Option<domain::Timestamp>), Failure>>;

    /// The banks of `country` that Enable Banking connects for account information.
    fn list_banks<'a>(
        &'a self,
        application: &'a EnableBankingApp,
        country: &'a str,
        now: domain::Timestamp,
    ) -> BoxFuture<'a, Result<Vec<BankChoice>, Failure>>;

    /// Ends an Enable Banking session, closing its consent at the bank where the bank allows.
    fn close_session<'a>(
        &'a self,
        application: &'a EnableBankingApp,
        session_id: &'a str,
        now: domain::Timestamp,
    ) -> BoxFuture<'a, Result<(), Failure>>;

    /// Checks an Enable Banking application's id and private key without a request.
    fn check_enable_banking(&self, application: &EnableBankingApp) -> Result<(), Failure>;

    /// Starts a consent at `bank` of `country`: the person comes back to `redirect_url` with
    /// `state` and a code.
    fn start_consent<'a>(
        &'a self,
        application: &'a EnableBankingApp,
        country: &'a str,
        bank: &'a str,
        state: &'a str,
        redirect_url: &'a str,
        now: domain::Timestamp,
    ) -> BoxFuture<'a, Result<ConsentStarted, Failure>>;

    /// Turns the code a person came back with into a session, and reads its accounts from
    /// `from`.
    fn complete_consent<'a>(
        &'a self,
        application: &'a EnableBankingApp,
        code: &'a str,
        from: Date,
        now: domain::Timestamp,
    ) -> BoxFuture<'a, Result<ConsentGiven, Failure>>;
}

// ---------------------------------------------------------------------------------------------
// The ops

/// One account a bank connection brings, and where its transactions go.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BankAccount {
    pub id: i64,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub institution: Option<String>,
    /// Absent for a currency Exhale does not know.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<CurrencyCode>,
    /// Where its transactions go; absent: not recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<Ref>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub balance: Option<Amount>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub balance_on: Option<IsoDate>,
    /// What went wrong for this account alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// A bank connection; never its credentials.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BankConnection {
    pub id: i64,
    pub provider: BankProvider,
    pub name: String,
    pub visibility: Visibility,
    pub linked_by: Ref,
    pub status: ConnectionStatus,
    /// What went wrong at the last sync, and what to do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_sync_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_success_at: Option<Timestamp>,
    pub next_sync_at: Timestamp,
    /// When the bank's consent ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consent_expires_at: Option<Timestamp>,
    /// The bank's country, two letters (ISO 3166), where the provider asks for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
    pub accounts: Vec<BankAccount>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BankConnections {
    pub items: Vec<BankConnection>,
}

pub struct ListBankConnections;
impl Op for ListBankConnections {
    const INFO: OpInfo = OpInfo::read(
        "list_bank_connections",
        "List bank connections: their accounts, last sync and problems",
        "With the next sync and what to do about a problem; never a credential.",
    );
    type Input = Empty;
    type Output = BankConnections;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SyncBankConnectionInput {
    /// From list_bank_connections.
    pub connection_id: RecordId,
}

/// What a sync did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BankSync {
    /// The connection, as list_bank_connections shows it.
    pub connection_id: i64,
    pub status: ConnectionStatus,
    /// What went wrong, and what to do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    pub added: u64,
    /// Recorded ones the bank changed: a pending one booked, even under a new id.
    pub updated: u64,
    /// Recorded from a statement before; not added again.
    pub from_statements: u64,
    /// Pending ones the bank no longer shows, removed.
    pub pending_dropped: u64,
    /// Payments matched to the charges they paid (now paid at the real amount).
    pub matched: u64,
}

pub struct SyncBankConnection;
impl Op for SyncBankConnection {
    const INFO: OpInfo = OpInfo::write(
        "sync_bank_connection",
        "Bring a bank connection's new transactions and balances now",
        "Within the provider's daily limit. New transactions get rules and are matched to the charges they paid; undo removes them. A dry run asks the bank, records nothing.",
        Hints { read_only: false, destructive: false, idempotent: false, open_world: true },
    );
    type Input = SyncBankConnectionInput;
    type Output = BankSync;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkSimplefinInput {
    /// The setup token from the SimpleFIN Bridge's page: one long line of letters and digits.
    #[schemars(length(min = 1, max = 2000))]
    pub setup_token: String,
    /// Default: household.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Visibility>,
    /// A connection to link again (its token stopped working); default: a new connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection_id: Option<RecordId>,
}

/// A linked connection, and what its first sync did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LinkedBank {
    pub connection: BankConnection,
    pub sync: BankSync,
}

pub struct LinkSimplefin;
impl Op for LinkSimplefin {
    const INFO: OpInfo = OpInfo::write(
        "link_simplefin",
        "Link banks through SimpleFIN Bridge with a setup token",
        "Claims the token (once; a claimed token cannot be used again), keeps its credentials as a secret, and syncs the last 90 days: each bank account goes into an Exhale account of the same name and currency, or a new one.",
        Hints::write(false),
    )
    .excluded("it claims a bank credential and keeps it as a secret");
    type Input = LinkSimplefinInput;
    type Output = LinkedBank;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetBankAccountTargetInput {
    /// The bank account's id, from list_bank_connections.
    pub bank_account_id: RecordId,
    /// The Exhale account its transactions go into (one in its currency). Leave out, with
    /// `create_account` false, to stop recording it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<RecordId>,
    /// Create a new Exhale account for it. Default: false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create_account: Option<bool>,
}

pub struct SetBankAccountTarget;
impl Op for SetBankAccountTarget {
    const INFO: OpInfo = OpInfo::write(
        "set_bank_account_target",
        "Choose the Exhale account a bank account's transactions go into",
        "An existing account (the one statements were imported into: what is already there is not added twice), a new one, or none. Takes effect at the next sync.",
        Hints::write(true),
    )
    .excluded("it changes a bank connection, which holds a credential; a person sets where its accounts go");
    type Input = SetBankAccountTargetInput;
    type Output = BankConnection;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveBankConnectionInput {
    pub connection_id: RecordId,
}

/// Whether `caller` may remove a connection `linked_by` linked (or undo its link, which
/// removes it): that member, or an owner.
pub fn may_remove(caller: &crate::Caller, linked_by: i64) -> bool {
    caller.member_id == linked_by || caller.is_owner()
}

pub struct RemoveBankConnection;
impl Op for RemoveBankConnection {
    const INFO: OpInfo = OpInfo::write(
        "remove_bank_connection",
        "Remove a bank connection and forget its credentials",
        "Its transactions and balances stay in their accounts; nothing more arrives. Revoke the access at the provider too.",
        Hints::destructive(true),
    )
    .excluded("it deletes a bank credential");
    type Input = RemoveBankConnectionInput;
    type Output = Removed;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetEnableBankingInput {
    /// The application's id, as Enable Banking's Control Panel shows it. Empty, with an empty
    /// key, removes the application.
    #[schemars(length(max = 100))]
    pub application_id: String,
    /// The application's private key: the .pem file's whole text.
    #[schemars(length(max = 20000))]
    pub private_key: String,
}

/// The household's Enable Banking application; never its key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EnableBankingSettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub application_id: Option<String>,
}

pub struct SetEnableBanking;
impl Op for SetEnableBanking {
    const INFO: OpInfo = OpInfo::write(
        "set_enable_banking",
        "Set the household's Enable Banking application",
        "Its id and private key, from Enable Banking's Control Panel; the key is never shown again.",
        Hints::write(true),
    )
    .owner_only()
    .excluded("it keeps the household's application key, a secret");
    type Input = SetEnableBankingInput;
    type Output = EnableBankingSettings;
}

/// A country as two letters (ISO 3166), e.g. "FI".
pub const COUNTRY_PATTERN: &str = "^[A-Za-z]{2}$";

/// A country as an input gives it: two letters (ISO 3166-1), any case and surrounding spaces
/// ignored ("fi"), refused where it stands otherwise. Written back in capitals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CountryCode([u8; 2]);

impl CountryCode {
    /// The two capital letters, such as "FI".
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl std::str::FromStr for CountryCode {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().as_bytes() {
            [a, b] if a.is_ascii_alphabetic() && b.is_ascii_alphabetic() => {
                Ok(Self([a.to_ascii_uppercase(), b.to_ascii_uppercase()]))
            }
            _ => Err(format!(
                "\"{}\" is not a country's two letters (ISO 3166), such as FI or ES",
                bounded(text)
            )),
        }
    }
}

impl std::fmt::Display for CountryCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

crate::common::as_text!(CountryCode, "CountryCode", COUNTRY_PATTERN);

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListBanksInput {
    /// The banks' country, two letters (ISO 3166), e.g. "FI".
    pub country: CountryCode,
}

/// A bank a person may connect through Enable Banking.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BankChoice {
    /// As Enable Banking names it: what start_bank_consent takes.
    pub name: String,
    /// Two capital letters (ISO 3166).
    pub country: String,
    /// The longest consent the bank gives, in days, when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consent_days: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BankChoices {
    /// By name.
    pub items: Vec<BankChoice>,
}

pub struct ListBanks;
impl Op for ListBanks {
    const INFO: OpInfo = OpInfo::read(
        "list_banks",
        "List the European banks of a country that Exhale can connect",
        "Through Enable Banking; a person connects one in Settings → Banks.",
    )
    .open_world();
    type Input = ListBanksInput;
    type Output = BankChoices;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartBankConsentInput {
    /// The bank's country, two letters (ISO 3166), e.g. "FI".
    pub country: CountryCode,
    /// The bank's name as Enable Banking lists it.
    #[schemars(length(min = 1, max = 100))]
    pub bank: String,
    /// Default: household.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Visibility>,
    /// A connection whose consent is renewed; default: a new connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection_id: Option<RecordId>,
}

/// Where to send the person to consent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BankConsent {
    /// The bank's page; the person comes back to Exhale from it.
    pub url: String,
    /// Until when this consent start may be completed.
    pub expires_at: Timestamp,
}

pub struct StartBankConsent;
impl Op for StartBankConsent {
    const INFO: OpInfo = OpInfo::write(
        "start_bank_consent",
        "Start connecting a European bank through Enable Banking",
        "The person consents at their bank, then comes back to Exhale, which completes it.",
        Hints::write(false),
    )
    .excluded("the person consents at their bank, in their own browser");
    type Input = StartBankConsentInput;
    type Output = BankConsent;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompleteBankConsentInput {
    /// The `state` the bank sent the person back with.
    #[schemars(length(min = 1, max = 100))]
    pub state: String,
    /// The `code` the bank sent the person back with.
    #[schemars(length(min = 1, max = 2000))]
    pub code: String,
}

pub struct CompleteBankConsent;
impl Op for CompleteBankConsent {
    const INFO: OpInfo = OpInfo::write(
        "complete_bank_consent",
        "Finish connecting a bank with what it sent the person back with",
        "Keeps the session as a secret and syncs as much of the last two years as the bank gives.",
        Hints::write(false),
    )
    .excluded("it keeps a bank session, a secret, for the person who consented");
    type Input = CompleteBankConsentInput;
    type Output = LinkedBank;
}

pub struct DismissRecurringProposal;
impl Op for DismissRecurringProposal {
    const INFO: OpInfo = OpInfo::write(
        "dismiss_recurring_proposal",
        "Stop suggesting a recurring charge a bank sync noticed",
        "Its id is in the new_recurring attention item. To keep it instead, create_subscription.",
        Hints::write(true),
    );
    type Input = IdInput<RecordId>;
    type Output = Removed;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_providers_text_is_one_bounded_line() {
        assert_eq!(bounded("  NETFLIX.COM\n\t866 \u{7}CA "), "NETFLIX.COM 866 CA");
        assert_eq!(bounded(&"x".repeat(1000)).chars().count(), MAX_TEXT);
    }
}
