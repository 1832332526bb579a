//! The bank providers' clients against local fakes speaking the real protocol over TLS:
//! SimpleFIN's claim of a setup token and its `/accounts`, with what the network rules, the
//! Bridge's refusals and its redirects make of them.

use banks::{
    http::{Http, Reach},
    simplefin::{self, Window},
};
use ops::banks::Failure;
use serde_json::json;
use test_support::banks::SimpleFinBridge;

fn day(text: &str) -> jiff::civil::Date {
    text.parse().unwrap()
}

/// 2026-12-03 at noon, UTC, in epoch seconds.
const DEC_3_NOON: i64 = 1_796_299_200;
const DAY: i64 = 86_400;

async fn bridge_with_checking() -> (SimpleFinBridge, Http) {
    let bridge = SimpleFinBridge::start().await;
    bridge.add_account(json!({
        "conn_id": "CON-1", "id": "ACT-7", "name": "Checking", "currency": "USD",
        "balance": "1520.07", "available-balance": "1495.07", "balance-date": DEC_3_NOON,
        "transactions": [
            {"id": "OLD", "posted": DEC_3_NOON - 200 * DAY, "amount": "-9.99", "description": "LONG AGO"},
            {"id": "TRN-1", "posted": DEC_3_NOON - DAY, "amount": "-12.99", "description": "NETFLIX.COM", "payee": "Netflix"},
            {"id": "TRN-2", "posted": 0, "pending": true, "transacted_at": DEC_3_NOON, "amount": "-40.00", "description": "SHELL 123"}
        ]
    }));
    let http = Http::new(std::slice::from_ref(&bridge.authority)).unwrap();
    (bridge, http)
}

/// The bridge, linked by an owner (who may reach a bridge on this machine).
async fn linked() -> (SimpleFinBridge, Http, simplefin::AccessUrl) {
    let (bridge, http) = bridge_with_checking().await;
    let access = simplefin::claim(&http, &bridge.setup_token("C"), Reach::AlsoLocal).await.unwrap();
    (bridge, http, access)
}

#[tokio::test]
async fn a_setup_token_is_claimed_once_and_its_access_reads_the_accounts_of_a_window() {
    let (bridge, http) = bridge_with_checking().await;
    let token = bridge.setup_token("CODE-1");
    // Pasted with a line break in it and its padding lost.
    let pasted = format!("{}\n{}", &token[..20], token[20..].trim_end_matches('='));
    let access = simplefin::claim(&http, &pasted, Reach::AlsoLocal).await.unwrap();
    assert!(!format!("{access:?}").contains("p@ss"), "{access:?}");
    let claim = &bridge.requests()[0];
    assert_eq!((claim.method.as_str(), claim.content_length.as_deref()), ("POST", Some("0")));

    let window = Window { start: day("2026-09-05"), end: None };
    let fetched = simplefin::fetch(&http, &access, window, Reach::AlsoLocal).await.unwrap();
    let read: Vec<(&str, bool, i64)> =
        fetched.transactions.iter().map(|t| (t.key.as_str(), t.pending, t.amount_minor)).collect();
    assert_eq!(
        read,
        [("TRN-1", false, -1299), ("TRN-2", true, -4000)],
        "the window leaves OLD out"
    );
    assert_eq!(fetched.accounts[0].key, "CON-1/ACT-7");
    assert_eq!(fetched.accounts[0].institution.as_deref(), Some("CON-1 Bank"));
    let asked = &bridge.requests()[1];
    assert!(asked.authorization.as_deref().is_some_and(|a| a.starts_with("Basic ")));
    assert_eq!(asked.query.get("start-date").map(String::as_str), Some("1788566400"));
    assert_eq!(asked.query.get("version").map(String::as_str), Some("2"));
    assert!(asked.query.contains_key("pending") && !asked.query.contains_key("end-date"));

    // A token claims once: the second claim is refused, with what to do.
    let again = simplefin::claim(&http, &token, Reach::AlsoLocal).await.unwrap_err();
    assert!(
        matches!(&again, Failure::Relink { reason } if reason.contains("already claimed")),
        "{again}"
    );
}

#[tokio::test]
async fn a_member_cannot_aim_exhale_at_this_machine_and_nothing_is_sent() {
    let (bridge, http) = bridge_with_checking().await;
    let token = bridge.setup_token("CODE-2");
    let refused = simplefin::claim(&http, &token, Reach::Internet).await.unwrap_err();
    assert!(
        matches!(&refused, Failure::Config { detail } if detail.contains("only an owner")),
        "{refused}"
    );
    assert!(bridge.requests().is_empty(), "refused before any request");
}

#[tokio::test]
async fn a_revoked_access_an_unpaid_bridge_and_a_busy_one_say_who_must_act() {
    let (bridge, http, access) = linked().await;
    let window = Window { start: day("2026-11-01"), end: None };
    bridge.answer_next(503);
    let busy = simplefin::fetch(&http, &access, window, Reach::AlsoLocal).await.unwrap_err();
    assert!(matches!(busy, Failure::TryLater { .. }), "{busy}");
    bridge.answer_next(402);
    let unpaid = simplefin::fetch(&http, &access, window, Reach::AlsoLocal).await.unwrap_err();
    assert!(matches!(&unpaid, Failure::Relink { reason } if reason.contains("unpaid")), "{unpaid}");
    bridge.revoke();
    let revoked = simplefin::fetch(&http, &access, window, Reach::AlsoLocal).await.unwrap_err();
    assert!(
        matches!(&revoked, Failure::Relink { reason } if reason.contains("new setup token")),
        "{revoked}"
    );
}

#[tokio::test]
async fn a_redirect_is_followed_within_the_rules_and_never_to_a_local_address_over_http() {
    let (bridge, http, access) = linked().await;
    let window = Window { start: day("2026-11-01"), end: None };
    // To the same host: followed, with the credentials.
    let query = "start-date=1788566400&pending=1&version=2";
    bridge.redirect_next(&bridge.url(&format!("/simplefin/accounts?{query}")));
    let fetched = simplefin::fetch(&http, &access, window, Reach::AlsoLocal).await.unwrap();
    assert_eq!(fetched.accounts.len(), 1);
    let followed = bridge.requests().last().cloned().unwrap();
    assert!(followed.authorization.is_some(), "the same host keeps the credentials");
    // From https to http: refused, whatever the address.
    bridge.redirect_next("http://[ff02::1]/accounts");
    let refused = simplefin::fetch(&http, &access, window, Reach::AlsoLocal).await.unwrap_err();
    assert!(
        matches!(&refused, Failure::Config { detail } if detail.contains("without https")),
        "{refused}"
    );
}
