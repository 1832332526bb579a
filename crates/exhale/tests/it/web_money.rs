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
    assert!(next.contains(".100") && next.contains(&format!("account={}", w.joint)), "{next}");
    let second = ana.get(&format!("/transactions?{next}")).await;
    assert_eq!(second.body.matches("<tr><td>").count(), 100);
}

#[tokio::test]
async fn money_forms_write_through_the_catalog_and_refuse_what_is_not_the_persons() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let mut ana = Visitor::new(&server);
    ana.sign_in("ana@a.test", PASSWORD).await;
    let csrf = Visitor::hidden(&ana.get("/money").await, "csrf");
    let post = |path: &'static str, fields: Vec<(&'static str, String)>| {
        let mut form = vec![("csrf", csrf.clone())];
        form.extend(fields);
        (path, form)
    };
    let send = async |visitor: &mut Visitor, (path, form): (&str, Vec<(&str, String)>)| {
        let fields: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
        visitor.post(path, &fields).await
    };

    // An account, with today's balance; then today's balance recorded again, replacing it.
    let added = send(
        &mut ana,
        post(
            "/money/do/create_account",
            vec![
                ("name", "Holiday fund".into()),
                ("kind", "savings".into()),
                ("visibility", "private".into()),
                ("balance", "500".into()),
            ],
        ),
    )
    .await;
    assert_eq!(added.status, StatusCode::SEE_OTHER, "{}", added.body);
    assert_eq!(added.location.as_deref(), Some("/money"));
    let accounts = w.env.call(&w.ana, "list_accounts", json!({})).await.unwrap();
    let fund = accounts["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "Holiday fund")
        .unwrap()
        .clone();
    assert_eq!(fund["visibility"], "private");
    let fund_id = fund["id"].as_i64().unwrap().to_string();
    let recorded = send(
        &mut ana,
        post(
            "/money/do/record_balance",
            vec![("id", fund_id.clone()), ("balance", "650.25".into())],
        ),
    )
    .await;
    assert_eq!(recorded.status, StatusCode::SEE_OTHER, "{}", recorded.body);
    let money = ana.get("/money").await;
    assert!(money.body.contains("€650.25"), "{}", money.body);

    // A form the op refuses comes back with its message at the form, and nothing is written.
    let wrong = send(
        &mut ana,
        post(
            "/money/do/create_budget",
            vec![("name", "Food".into()), ("amount", "lots".into()), ("period", "monthly".into())],
        ),
    )
    .await;
    assert_eq!(wrong.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", wrong.body);
    assert!(
        wrong.body.contains("role=\"alert\"") && wrong.body.contains("data-testid=\"add-budget\"")
    );
    let food_added = send(
        &mut ana,
        post(
            "/money/do/create_budget",
            vec![
                ("name", "Food".into()),
                ("amount", "150".into()),
                ("period", "monthly".into()),
                ("start_day", "15".into()),
                ("category_ids", w.streaming.to_string()),
                ("label_ids", w.holiday.to_string()),
                ("rollover", "yes".into()),
            ],
        ),
    )
    .await;
    assert_eq!(food_added.status, StatusCode::SEE_OTHER, "{}", food_added.body);
    let budgets = w.env.call(&w.ana, "list_budgets", json!({})).await.unwrap();
    let food =
        budgets["items"].as_array().unwrap().iter().find(|b| b["name"] == "Food").unwrap().clone();
    assert_eq!(food["rollover"], true);
    assert_eq!(food["categories"][0]["name"], "Streaming");
    assert_eq!(food["labels"][0]["name"], "holiday");

    // A transaction, then categorised and labelled with the bulk form of the list.
    let tx = send(
        &mut ana,
        post(
            "/money/do/create_transaction",
            vec![
                ("back", "transactions".into()),
                ("account_id", fund_id.clone()),
                ("on", "2026-11-20".into()),
                ("amount", "-42.10".into()),
                ("payee", "Tasca do Chico".into()),
            ],
        ),
    )
    .await;
    assert_eq!(tx.location.as_deref(), Some("/transactions"), "{}", tx.body);
    let found = w.env.call(&w.ana, "search_transactions", json!({"text": "Tasca"})).await.unwrap();
    let tx_id = found["items"][0]["id"].as_i64().unwrap();
    let label = w.env.call(&w.ana, "create_label", json!({"name": "Porto"})).await.unwrap();
    let changed = send(
        &mut ana,
        post(
            "/money/do/categorise_transactions",
            vec![
                ("back", "transactions".into()),
                ("view", "q=Tasca".into()),
                ("ids", tx_id.to_string()),
                ("ids", w.bobs_bonus.to_string()),
                ("category_id", w.streaming.to_string()),
                ("add_label_id", label["id"].to_string()),
            ],
        ),
    )
    .await;
    // Bob's private transaction is not one Ana may tick: the whole change is refused, and the
    // list comes back as it was, filtered, with her box still ticked.
    assert_ne!(changed.status, StatusCode::SEE_OTHER, "{}", changed.body);
    assert!(changed.body.contains("name=\"q\" value=\"Tasca\""), "{}", changed.body);
    assert!(
        changed.body.contains(&format!("value=\"{tx_id}\" form=\"bulk\" checked")),
        "{}",
        changed.body
    );
    assert!(changed.body.contains("name=\"view\" value=\"q=Tasca\""), "{}", changed.body);
    let still = w.env.call(&w.ana, "search_transactions", json!({"text": "Tasca"})).await.unwrap();
    assert!(still["items"][0].get("category").is_none_or(|c| c.is_null()), "{still}");
    let changed = send(
        &mut ana,
        post(
            "/money/do/categorise_transactions",
            vec![
                ("back", "transactions".into()),
                ("view", "q=Tasca".into()),
                ("ids", tx_id.to_string()),
                ("category_id", w.streaming.to_string()),
                ("add_label_id", label["id"].to_string()),
            ],
        ),
    )
    .await;
    assert_eq!(changed.status, StatusCode::SEE_OTHER, "{}", changed.body);
    // Back to the list as it was; what was posted is read, never echoed into the redirect.
    assert_eq!(changed.location.as_deref(), Some("/transactions?q=Tasca"));
    let odd = send(
        &mut ana,
        post(
            "/money/do/categorise_transactions",
            vec![
                ("back", "transactions".into()),
                ("view", "q=Tasca\r\nSet-Cookie: x=1".into()),
                ("ids", tx_id.to_string()),
                ("category_id", w.streaming.to_string()),
            ],
        ),
    )
    .await;
    assert_eq!(
        odd.location.as_deref(),
        Some("/transactions"),
        "an unreadable view is the first page"
    );
    let now = w.env.call(&w.ana, "search_transactions", json!({"text": "Tasca"})).await.unwrap();
    assert_eq!(now["items"][0]["category"]["name"], "Streaming");
    assert_eq!(now["items"][0]["labels"][0]["name"], "Porto");

    // Deleting asks first, from the dry run; only the confirmed post deletes.
    let food_id = food["id"].as_i64().unwrap().to_string();
    let asked =
        send(&mut ana, post("/money/do/delete_budget", vec![("id", food_id.clone())])).await;
    assert_eq!(asked.status, StatusCode::OK);
    assert!(
        asked.body.contains("Delete this budget?") && asked.body.contains("name=\"confirmed\"")
    );
    assert_eq!(
        w.env.call(&w.ana, "list_budgets", json!({})).await.unwrap()["items"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let deleted = send(
        &mut ana,
        post("/money/do/delete_budget", vec![("id", food_id.clone()), ("confirmed", "yes".into())]),
    )
    .await;
    assert_eq!(deleted.status, StatusCode::SEE_OTHER, "{}", deleted.body);
    assert_eq!(
        w.env.call(&w.ana, "list_budgets", json!({})).await.unwrap()["items"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // Bob's private account is not Ana's to archive, delete or record on; Cai's household
    // cannot touch Ana's.
    for (path, fields) in [
        (
            "/money/do/update_account",
            vec![("id", w.bobs_savings.to_string()), ("archived", "true".into())],
        ),
        (
            "/money/do/record_balance",
            vec![("id", w.bobs_savings.to_string()), ("balance", "1".into())],
        ),
        (
            "/money/do/delete_account",
            vec![("id", w.bobs_savings.to_string()), ("confirmed", "yes".into())],
        ),
    ] {
        let refused = send(&mut ana, post(path, fields)).await;
        assert_ne!(refused.status, StatusCode::SEE_OTHER, "{path}: {}", refused.body);
    }
    let mut cai = Visitor::new(&server);
    cai.sign_in("cai@b.test", PASSWORD).await;
    let cai_csrf = Visitor::hidden(&cai.get("/money").await, "csrf");
    for (path, fields) in [
        (
            "/money/do/delete_account",
            vec![("id", fund_id.clone()), ("confirmed", "yes".to_owned())],
        ),
        (
            "/money/do/categorise_transactions",
            vec![("ids", tx_id.to_string()), ("category_id", "none".to_owned())],
        ),
    ] {
        let mut form = vec![("csrf", cai_csrf.clone())];
        form.extend(fields);
        let refused = send(&mut cai, (path, form)).await;
        assert_ne!(refused.status, StatusCode::SEE_OTHER, "{path}: {}", refused.body);
    }
    let after = w.env.call(&w.ana, "search_transactions", json!({"text": "Tasca"})).await.unwrap();
    assert_eq!(after["items"][0]["category"]["name"], "Streaming");
    let bobs = w.env.call(&w.bob, "list_accounts", json!({})).await.unwrap();
    assert!(
        bobs.to_string().contains("Bob's savings")
            && !bobs.to_string().contains("\"archived\":true")
    );
    // Without the session's CSRF token nothing is read or written.
    let forged =
        ana.post("/money/do/create_label", &[("csrf", "forged"), ("name", "Forged")]).await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    let labels = w.env.call(&w.ana, "list_labels", json!({})).await.unwrap();
    assert!(!labels.to_string().contains("Forged"));
}

#[tokio::test]
async fn rules_are_added_previewed_run_and_deleted_from_the_money_page() {
    let w = World::new().await;
    for (account, payee, caller) in [
        (w.joint, "Corner cafe", &w.ana),
        (w.joint, "Cafe Central", &w.ana),
        (w.bobs_savings, "Bob's cafe", &w.bob),
    ] {
        let input =
            json!({"account_id": account, "on": "2026-11-10", "amount": "-3", "payee": payee});
        w.env.call(caller, "create_transaction", input).await.unwrap();
    }
    let server = w.env.serve().await;
    let mut ana = Visitor::new(&server);
    ana.sign_in("ana@a.test", PASSWORD).await;
    let money = ana.get("/money").await;
    let body = unescape(&money.body);
    assert!(
        body.contains("data-testid=\"rule\"")
            && body.contains("When payee contains “groceries”: sets the category Streaming"),
        "{body}"
    );
    let csrf = Visitor::hidden(&money, "csrf");
    let post = async |visitor: &mut Visitor, path: &str, fields: &[(&str, &str)]| {
        let mut form = vec![("csrf", csrf.as_str())];
        form.extend_from_slice(fields);
        visitor.post(path, &form).await
    };
    let (streaming, holiday) = (w.streaming.to_string(), w.holiday.to_string());

    // A rule with no action is refused at its form, and nothing is written.
    let refused =
        post(&mut ana, "/money/do/create_rule", &[("name", "Cafe"), ("payee_contains", "cafe")])
            .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", refused.body);
    assert!(
        refused.body.contains("role=\"alert\"")
            && refused.body.contains("data-testid=\"add-rule\"")
    );
    let fields = [
        ("name", "Cafe"),
        ("payee_contains", "cafe"),
        ("max_amount", "-1"),
        ("account_id", ""),
        ("set_category_id", streaming.as_str()),
        ("add_label_ids", holiday.as_str()),
    ];
    let added = post(&mut ana, "/money/do/create_rule", &fields).await;
    assert_eq!(added.status, StatusCode::SEE_OTHER, "{}", added.body);
    let rules = w.env.call(&w.ana, "list_rules", json!({})).await.unwrap();
    let cafe =
        rules["items"].as_array().unwrap().iter().find(|r| r["name"] == "Cafe").unwrap().clone();
    assert_eq!(
        (cafe["set_category"]["name"].as_str(), cafe["add_labels"][0]["name"].as_str()),
        (Some("Streaming"), Some("holiday"))
    );
    assert_eq!(cafe["max_amount"], "-1");
    let cafe_id = cafe["id"].to_string();

    // Running it over past transactions shows what it would change first, and changes nothing
    // until confirmed. Bob's private cafe is not Ana's to count or change.
    let preview = post(&mut ana, "/money/do/apply_rule", &[("id", cafe_id.as_str())]).await;
    assert_eq!(preview.status, StatusCode::OK, "{}", preview.body);
    let page = unescape(&preview.body);
    assert!(page.contains("Run the rule Cafe over past transactions?"), "{page}");
    assert!(page.contains("It matches 2 of your transactions and changes 2."), "{page}");
    assert!(
        page.contains("Nov 10, 2026 · Corner cafe · -€3.00") && !page.contains("Bob"),
        "{page}"
    );
    assert!(page.contains("name=\"confirmed\"") && page.contains("Yes, run it"), "{page}");
    let untouched =
        w.env.call(&w.ana, "search_transactions", json!({"text": "cafe"})).await.unwrap();
    assert!(
        untouched["items"].as_array().unwrap().iter().all(|t| t.get("category").is_none()),
        "{untouched}"
    );
    let run =
        post(&mut ana, "/money/do/apply_rule", &[("id", cafe_id.as_str()), ("confirmed", "yes")])
            .await;
    assert_eq!(
        (run.status, run.location.as_deref()),
        (StatusCode::SEE_OTHER, Some("/money")),
        "{}",
        run.body
    );
    let told = unescape(&ana.get("/money").await.body);
    assert!(
        told.contains("The rule changed 2 transactions. You can undo this from Activity."),
        "{told}"
    );
    let changed = w.env.call(&w.ana, "search_transactions", json!({"text": "cafe"})).await.unwrap();
    for t in changed["items"].as_array().unwrap() {
        assert_eq!(
            (t["category"]["name"].as_str(), t["labels"][0]["name"].as_str()),
            (Some("Streaming"), Some("holiday")),
            "{t}"
        );
    }
    let bobs =
        w.env.call(&w.bob, "search_transactions", json!({"text": "Bob's cafe"})).await.unwrap();
    assert!(bobs["items"][0].get("category").is_none(), "{bobs}");
    // Run again, nothing would change: it says so and goes back.
    let again = post(&mut ana, "/money/do/apply_rule", &[("id", cafe_id.as_str())]).await;
    assert_eq!(again.status, StatusCode::SEE_OTHER, "{}", again.body);
    let told = unescape(&ana.get("/money").await.body);
    assert!(
        told.contains(
            "The rule Cafe matches 2 of your transactions and would change none of them."
        ),
        "{told}"
    );

    // Cai's household cannot run or delete Ana's rule.
    let mut cai = Visitor::new(&server);
    cai.sign_in("cai@b.test", PASSWORD).await;
    let cai_csrf = Visitor::hidden(&cai.get("/money").await, "csrf");
    for (path, confirmed) in [("/money/do/apply_rule", "yes"), ("/money/do/delete_rule", "yes")] {
        let refused = cai
            .post(
                path,
                &[("csrf", cai_csrf.as_str()), ("id", cafe_id.as_str()), ("confirmed", confirmed)],
            )
            .await;
        assert_ne!(refused.status, StatusCode::SEE_OTHER, "{path}: {}", refused.body);
        assert!(!refused.body.contains("Cafe"), "{path}: {}", refused.body);
    }

    // Deleting asks first; the confirmed post deletes.
    let asked = post(&mut ana, "/money/do/delete_rule", &[("id", cafe_id.as_str())]).await;
    assert!(
        asked.status == StatusCode::OK && asked.body.contains("Delete this rule?"),
        "{}",
        asked.body
    );
    assert_eq!(
        w.env.call(&w.ana, "list_rules", json!({})).await.unwrap()["items"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let deleted =
        post(&mut ana, "/money/do/delete_rule", &[("id", cafe_id.as_str()), ("confirmed", "yes")])
            .await;
    assert_eq!(deleted.status, StatusCode::SEE_OTHER, "{}", deleted.body);
    let left = w.env.call(&w.ana, "list_rules", json!({})).await.unwrap();
    assert!(!left.to_string().contains("Cafe"), "{left}");
}
