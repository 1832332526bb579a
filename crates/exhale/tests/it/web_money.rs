//! The money pages over HTTP: accounts, budgets with their bars, cashflow and net worth
//! charts, and the transactions list with its filters and pages, never showing another
//! member's private account or another household.

use reqwest::StatusCode;
use serde_json::json;

use crate::{
    fixtures::World,
    web::{PASSWORD, Visitor, unescape},
};

#[tokio::test]
async fn the_money_page_and_the_transactions_list_show_what_ana_may_see() {
    let w = World::new().await;
    for (on, amount, payee) in [
        ("2026-11-02", "-3.20", "Corner Cafe"),
        ("2026-11-10", "2500", "Employer payroll"),
        ("2026-10-05", "-80", "Pizza <b>Napoli</b>"),
    ] {
        let input = json!({"account_id": w.joint, "on": on, "amount": amount, "payee": payee});
        w.env.call(&w.ana, "create_transaction", input).await.unwrap();
    }
    let server = w.env.serve().await;
    let mut ana = Visitor::new(&server);
    ana.sign_in("ana@a.test", PASSWORD).await;

    let money = ana.get("/money").await;
    assert_eq!(money.status, StatusCode::OK);
    for shown in
        ["Joint checking", "€1,200.50", "Everyday", "<progress", "<svg class=\"chart", "Net worth"]
    {
        assert!(money.body.contains(shown), "/money lacks {shown}");
    }
    // The world's budget: 54.30 of 100 spent this month (the holiday groceries).
    assert!(money.body.contains("€54.30") && money.body.contains("€45.70"), "{}", money.body);
    assert!(!unescape(&money.body).contains("Bob's savings"));
    assert!(!money.body.contains("Other bank"));

    let all = ana.get("/transactions").await;
    assert_eq!(all.status, StatusCode::OK);
    assert!(all.body.contains("4 transactions"), "{}", all.body);
    // A payee is text, never markup.
    assert!(all.body.contains("Pizza &lt;b&gt;Napoli") && !all.body.contains("<b>Napoli"));
    assert!(!unescape(&all.body).contains("Bob's bonus"));
    let cafe = ana.get("/transactions?q=cafe").await;
    assert!(cafe.body.contains("Corner Cafe") && !cafe.body.contains("Employer payroll"));
    let november = ana.get("/transactions?from=2026-11-01&to=2026-11-30&label=").await;
    assert!(november.body.contains("3 transactions"), "{}", november.body);
    let holiday = ana.get(&format!("/transactions?label={}", w.holiday)).await;
    assert!(
        holiday.body.contains("Spotify family groceries") && !holiday.body.contains("Corner Cafe")
    );
    // Bob's private account is not one Ana may filter by: it finds nothing.
    let bobs = ana.get(&format!("/transactions?account={}", w.bobs_savings)).await;
    assert!(!unescape(&bobs.body).contains("Bob's bonus"));
    // A date that is not one is refused at the form, with what to write.
    let wrong = ana.get("/transactions?from=yesterday-ish").await;
    assert_eq!(wrong.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", wrong.body);

    // Another household sees its own and nothing of Ana's.
    let mut cai = Visitor::new(&server);
    cai.sign_in("cai@b.test", PASSWORD).await;
    let theirs = cai.get("/transactions").await;
    assert!(theirs.body.contains("1 transaction<"), "{}", theirs.body);
    assert!(!theirs.body.contains("Corner Cafe") && !theirs.body.contains("Spotify family"));
    let money = cai.get("/money").await;
    assert!(!money.body.contains("Joint checking") && !money.body.contains("Everyday"));
}

#[tokio::test]
async fn the_transactions_list_pages_through_many() {
    let w = World::new().await;
    let mut statement = String::from("Date,Description,Amount\n");
    for i in 0..250 {
        statement.push_str(&format!("2026-10-{:02},SHOP {i},-1.00\n", 1 + i % 28));
    }
    w.env
        .call(&w.ana, "import_transactions", json!({"account_id": w.joint, "content": statement}))
        .await
        .unwrap();
    let server = w.env.serve().await;
    let mut ana = Visitor::new(&server);
    ana.sign_in("ana@a.test", PASSWORD).await;
    let first = ana.get(&format!("/transactions?account={}", w.joint)).await;
    assert!(first.body.contains("251 transactions"), "{}", first.body);
    assert_eq!(first.body.matches("<tr><td>").count(), 100);
    let next = first
        .body
        .split("href=\"/transactions?")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .replace("&amp;", "&");
    assert!(
        next.contains("cursor=o100") && next.contains(&format!("account={}", w.joint)),
        "{next}"
    );
    let second = ana.get(&format!("/transactions?{next}")).await;
    assert_eq!(second.body.matches("<tr><td>").count(), 100);
}
