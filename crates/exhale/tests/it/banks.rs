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

mod enable_banking {
    //! Enable Banking's client against a fake that checks every token's signature.

    use banks::{
        enable_banking::{self, Application},
        http::{Http, Reach},
    };
    use ops::banks::Failure;
    use serde_json::json;
    use test_support::enable_banking::{APPLICATION_ID, APPLICATION_KEY, EnableBankingFake};

    /// 2026-11-29 10:00 UTC, in epoch seconds.
    const NOW: i64 = 1_795_946_400;

    fn day(text: &str) -> jiff::civil::Date {
        text.parse().unwrap()
    }

    async fn fake_with_checking() -> (EnableBankingFake, Http, Application) {
        let fake = EnableBankingFake::start().await;
        fake.add_account(
            "uid-1",
            "HASH-A",
            "Cuenta",
            json!([
                {"entry_reference": "E1", "transaction_amount": {"amount": "12.99", "currency": "EUR"},
                 "credit_debit_indicator": "DBIT", "status": "BOOK", "booking_date": "2026-11-27",
                 "creditor": {"name": "Netflix"}, "remittance_information": ["NETFLIX.COM", "1234"]},
                {"entry_reference": "E2", "transaction_amount": {"amount": "2500.00", "currency": "EUR"},
                 "credit_debit_indicator": "CRDT", "status": "BOOK", "booking_date": "2026-11-25",
                 "debtor": {"name": "ACME"}, "remittance_information": []},
                {"entry_reference": "E3", "transaction_amount": {"amount": "40.00", "currency": "EUR"},
                 "credit_debit_indicator": "DBIT", "status": "PDNG", "transaction_date": "2026-11-28",
                 "remittance_information": ["SHELL 123"]},
                {"entry_reference": "E4", "transaction_amount": {"amount": "5.00", "currency": "EUR"},
                 "credit_debit_indicator": "DBIT", "status": "CNCL", "booking_date": "2026-11-26"},
                {"transaction_amount": {"amount": "3.10", "currency": "EUR"},
                 "credit_debit_indicator": "DBIT", "status": "BOOK", "value_date": "2026-11-24",
                 "remittance_information": ["BAKERY"]}
            ]),
        );
        let http = Http::new(std::slice::from_ref(&fake.authority)).unwrap();
        let app = Application::new(APPLICATION_ID, APPLICATION_KEY, fake.root().parse().unwrap())
            .unwrap();
        (fake, http, app)
    }

    #[tokio::test]
    async fn a_consent_becomes_a_session_whose_accounts_are_read_page_by_page() {
        let (fake, http, app) = fake_with_checking().await;
        assert!(!format!("{app:?}").contains("PRIVATE"), "{app:?}");
        let found = enable_banking::banks(&http, &app, "fi", NOW, Reach::AlsoLocal).await.unwrap();
        let nordea = found.iter().find(|bank| bank.name == "Nordea").unwrap();
        let until =
            enable_banking::consent_until(nordea, jiff::Timestamp::from_second(NOW).unwrap());
        let url = enable_banking::start_authorization(
            &http,
            &app,
            nordea,
            until,
            "state-1",
            "https://exhale.example/banks/return",
            NOW,
            Reach::AlsoLocal,
        )
        .await
        .unwrap();
        assert_eq!(url.host_str(), Some("bank.example"));
        let started = &fake.requests()[1];
        assert_eq!(
            started.body["access"]["valid_until"], "2027-02-27T09:00:00Z",
            "{:?}",
            started.body
        );
        assert_eq!(started.body["redirect_url"], "https://exhale.example/banks/return");

        let code = fake.approve("state-1").unwrap();
        let session = enable_banking::authorize_session(&http, &app, &code, NOW, Reach::AlsoLocal)
            .await
            .unwrap();
        assert_eq!(session.id, "session-1");
        let (fetched, valid_until) = enable_banking::fetch(
            &http,
            &app,
            &session.id,
            day("2026-09-01"),
            day("2026-11-29"),
            NOW,
            Reach::AlsoLocal,
        )
        .await
        .unwrap();
        assert_eq!(valid_until.map(|at| at.to_string()).as_deref(), Some("2027-02-27T10:00:00Z"));
        let account = &fetched.accounts[0];
        assert_eq!((account.key.as_str(), account.name.as_str()), ("HASH-A", "Cuenta"));
        let balance = account.balance.unwrap();
        assert_eq!(
            (balance.on, balance.booked_minor, balance.available_minor),
            (day("2026-11-28"), 132_007, Some(152_007))
        );
        let read: Vec<(&str, bool, i64, Option<&str>, &str)> = fetched
            .transactions
            .iter()
            .map(|t| {
                (
                    t.key.as_str(),
                    t.pending,
                    t.amount_minor,
                    t.payee.as_deref(),
                    t.description.as_str(),
                )
            })
            .collect();
        assert_eq!(
            read[..3],
            [
                ("E1", false, -1299, Some("Netflix"), "NETFLIX.COM 1234"),
                ("E2", false, 250_000, Some("ACME"), "ACME"),
                ("E3", true, -4000, None, "SHELL 123"),
            ]
        );
        // The cancelled one is left out; one without a reference is keyed by what it says.
        assert_eq!(read.len(), 4, "{read:?}");
        assert!(read[3].0.starts_with("content:") && read[3].2 == -310, "{read:?}");
        let pages: Vec<Option<String>> = fake
            .requests()
            .into_iter()
            .filter(|r| r.path.ends_with("/transactions"))
            .map(|r| r.query.get("continuation_key").cloned())
            .collect();
        assert_eq!(
            pages,
            [None, Some("page-1".into()), Some("page-2".into())],
            "five transactions, two a page"
        );
    }

    #[tokio::test]
    async fn a_window_the_bank_refuses_is_read_from_where_it_allows_and_the_fetch_says_so() {
        let (fake, http, app) = fake_with_checking().await;
        let op = enable_banking::Bank {
            name: "OP".into(),
            country: "FI".into(),
            maximum_consent_validity: None,
        };
        let until = jiff::Timestamp::from_second(NOW + 86_400).unwrap();
        let back = "https://exhale.example/banks/return";
        enable_banking::start_authorization(
            &http,
            &app,
            &op,
            until,
            "state-9",
            back,
            NOW,
            Reach::AlsoLocal,
        )
        .await
        .unwrap();
        fake.limit_history(30);
        let code = fake.approve("state-9").unwrap();
        let session = enable_banking::authorize_session(&http, &app, &code, NOW, Reach::AlsoLocal)
            .await
            .unwrap();
        let (fetched, _) = enable_banking::fetch(
            &http,
            &app,
            &session.id,
            day("2024-11-29"),
            day("2026-11-29"),
            NOW,
            Reach::AlsoLocal,
        )
        .await
        .unwrap();
        // The bank allows 30 days and says from when: what it did not show is not gone.
        assert_eq!(fetched.from, Some(day("2026-10-31")));
        let starts: Vec<String> = fake
            .requests()
            .into_iter()
            .filter(|r| {
                r.path.ends_with("/transactions") && !r.query.contains_key("continuation_key")
            })
            .map(|r| r.query["date_from"].clone())
            .collect();
        assert_eq!(starts, ["2024-11-29", "2026-10-31"]);
        assert_eq!(fetched.transactions.len(), 4, "{:?}", fetched.transactions);
    }

    #[tokio::test]
    async fn a_wrong_key_an_ended_consent_and_a_banks_limit_say_who_must_act() {
        let (fake, http, _) = fake_with_checking().await;
        let other_key =
            Application::new("another-application", APPLICATION_KEY, fake.root().parse().unwrap())
                .unwrap();
        let refused = enable_banking::banks(&http, &other_key, "FI", NOW, Reach::AlsoLocal)
            .await
            .unwrap_err();
        assert!(
            matches!(&refused, Failure::Config { detail } if detail.contains("private key")),
            "{refused}"
        );
        assert!(matches!(
            Application::new(APPLICATION_ID, "not a key", fake.root().parse().unwrap()),
            Err(Failure::Config { .. })
        ));

        let app = Application::new(APPLICATION_ID, APPLICATION_KEY, fake.root().parse().unwrap())
            .unwrap();
        fake.refuse_next(429, "ASPSP_RATE_LIMIT_EXCEEDED", Some(120));
        let limited =
            enable_banking::banks(&http, &app, "FI", NOW, Reach::AlsoLocal).await.unwrap_err();
        assert_eq!(limited, Failure::RateLimited { retry_after_secs: Some(120) });

        enable_banking::start_authorization(
            &http,
            &app,
            &enable_banking::Bank {
                name: "OP".into(),
                country: "FI".into(),
                maximum_consent_validity: None,
            },
            jiff::Timestamp::from_second(NOW + 86_400).unwrap(),
            "state-2",
            "https://exhale.example/r",
            NOW,
            Reach::AlsoLocal,
        )
        .await
        .unwrap();
        let code = fake.approve("state-2").unwrap();
        let session = enable_banking::authorize_session(&http, &app, &code, NOW, Reach::AlsoLocal)
            .await
            .unwrap();
        fake.expire_sessions();
        let ended = enable_banking::fetch(
            &http,
            &app,
            &session.id,
            day("2026-11-01"),
            day("2026-11-29"),
            NOW,
            Reach::AlsoLocal,
        )
        .await
        .unwrap_err();
        assert!(matches!(ended, Failure::Relink { .. }), "{ended}");
        // A code used once is not a session again.
        let again = enable_banking::authorize_session(&http, &app, &code, NOW, Reach::AlsoLocal)
            .await
            .unwrap_err();
        assert!(matches!(again, Failure::Protocol { .. }), "{again}");
    }
}
