//! What every bank provider gives Exhale, whichever it is: accounts with their balance,
//! transactions in minor units with the provider's identity for each, and every failure in one
//! of five classes that say who must act (the person, at the bank or in Exhale; nobody, later;
//! or us). A provider that disappears costs its own module, never this shape.

use jiff::civil::Date;
use ops::common::CurrencyCode;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_providers_text_is_one_bounded_line() {
        assert_eq!(bounded("  NETFLIX.COM\n\t866 \u{7}CA "), "NETFLIX.COM 866 CA");
        assert_eq!(bounded(&"x".repeat(1000)).chars().count(), MAX_TEXT);
    }
}
