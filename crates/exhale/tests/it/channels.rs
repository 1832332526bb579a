//! Reminders and messages, end to end: the real app on SQLite with a fixed clock, the real
//! delivery worker, and local services speaking the real protocols (an ntfy server, a webhook
//! receiver that checks signatures itself, an SMTP sink); the calendar feed read back by the
//! Python `icalendar` package.

use channels::{Channels, ChannelsConfig};
use jiff::{SignedDuration, Timestamp};
use reqwest::StatusCode;
use serde_json::{Value, json};
use test_support::{TestEnv, channels as fakes, code};

use crate::{
    fixtures::{World, id},
    web::Visitor,
};

const WEBHOOK_SECRET: &str = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";

fn worker(env: &TestEnv) -> Channels {
    Channels::new(env.app.clone(), ChannelsConfig::default()).unwrap()
}

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

/// A webhook receiver added as `caller`'s destination: the server, what it received, and the
/// destination's id.
async fn webhook_destination(
    env: &TestEnv,
    caller: &ops::Caller,
) -> (test_support::TestServer, fakes::Fake, i64) {
    let (hook, fake) = fakes::webhook(WEBHOOK_SECRET).await;
    let destination =
        json!({"kind": "webhook", "address": hook.url("/hook"), "secret": WEBHOOK_SECRET});
    (hook, fake, add_destination(env, caller, destination).await)
}

/// Adds `destination` as `caller`'s and returns its id.
async fn add_destination(env: &TestEnv, caller: &ops::Caller, destination: Value) -> i64 {
    id(&env.call(caller, "add_destination", destination).await.unwrap())
}

/// The text of `body` from just after the first `start` up to the next `end`.
fn between<'a>(body: &'a str, start: &str, end: char) -> &'a str {
    body.split(start).nth(1).unwrap().split(end).next().unwrap()
}

async fn settings(env: &TestEnv, caller: &ops::Caller) -> Value {
    env.call(caller, "get_settings", json!({})).await.unwrap()["reminders"].clone()
}

#[tokio::test]
async fn a_reminder_goes_out_once_at_nine_local_across_a_restart_and_a_dst_change() {
    let env = TestEnv::new();
    let ana = env.household("Home", "ana@a.test").await;
    let (ntfy_server, fake) = fakes::ntfy(Some("tk_ana")).await;
    env.call(
        &ana,
        "create_subscription",
        json!({"name": "Gym", "amount": "30", "cycle": "monthly", "next_charge_on": "2026-12-05"}),
    )
    .await
    .unwrap();
    env.call(&ana, "create_subscription", json!({"name": "Insurance", "amount": "120", "cycle": "yearly", "next_charge_on": "2027-03-31"}))
        .await
        .unwrap();
    let address = format!("{}/ana-alerts", ntfy_server.url(""));
    add_destination(&env, &ana, json!({"kind": "ntfy", "address": address, "secret": "tk_ana"}))
        .await;
    let planned = settings(&env, &ana).await;
    // Three days before 5 December, at 09:00 in Madrid (UTC+1).
    assert_eq!(planned["upcoming"][0]["due_at"], "2026-12-02T08:00:00Z", "{planned}");
    assert_eq!(planned["upcoming"][0]["subscription"]["name"], "Gym");

    let delivery = worker(&env);
    env.clock.set(at("2026-12-02T07:59:59Z"));
    assert_eq!(delivery.deliver_due().await.unwrap(), 0, "not a second early");
    env.clock.set(at("2026-12-02T08:00:00Z"));
    assert_eq!(delivery.deliver_due().await.unwrap(), 1);
    let received = fake.received().await;
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].body["topic"], "ana-alerts");
    assert_eq!(received[0].body["title"], "Gym charges €30.00 in 3 days");
    assert_eq!(received[0].headers["authorization"], "Bearer tk_ana");

    // Restarted on the same file: nothing is sent twice.
    drop(delivery);
    let reopened = env.reopen();
    let delivery = Channels::new(reopened.clone(), ChannelsConfig::default()).unwrap();
    assert_eq!(delivery.deliver_due().await.unwrap(), 0);
    env.clock.advance(SignedDuration::from_hours(1));
    assert_eq!(delivery.deliver_due().await.unwrap(), 0);
    assert_eq!(fake.received().await.len(), 1, "one reminder, once");

    // Madrid moves to UTC+2 on 28 March 2027: the reminder three days before the 31st is still
    // at 09:00 on the wall. The charges in between were planned while Exhale ran, so the one
    // whose charge passed while the clock jumped is marked missed, not sent late.
    env.clock.set(at("2027-03-28T06:59:59Z"));
    delivery.deliver_due().await.unwrap();
    assert!(
        fake.received()
            .await
            .iter()
            .all(|r| r.body["title"] != "Insurance charges €120.00 in 3 days"),
        "not before 09:00 CEST"
    );
    env.clock.set(at("2027-03-28T07:00:00Z"));
    delivery.deliver_due().await.unwrap();
    let titles: Vec<Value> =
        fake.received().await.iter().map(|r| r.body["title"].clone()).collect();
    assert_eq!(titles.last().unwrap(), "Insurance charges €120.00 in 3 days", "{titles:?}");
    assert_eq!(
        titles.len(),
        2,
        "the January reminder passed unsent while the clock jumped: {titles:?}"
    );
}

#[tokio::test]
async fn a_paused_or_cancelled_subscription_gets_no_reminder() {
    let env = TestEnv::new();
    let ana = env.household("Home", "ana@a.test").await;
    let (ntfy_server, fake) = fakes::ntfy(None).await;
    let gym = id(&env
        .call(&ana, "create_subscription", json!({"name": "Gym", "amount": "30", "cycle": "monthly", "next_charge_on": "2026-12-05"}))
        .await
        .unwrap());
    let address = format!("{}/ana", ntfy_server.url(""));
    add_destination(&env, &ana, json!({"kind": "ntfy", "address": address})).await;
    assert_eq!(settings(&env, &ana).await["upcoming"][0]["subscription"]["name"], "Gym");
    // Paused after the reminder was planned: the planned message finds no charge and is dropped.
    env.call(&ana, "pause_subscription", json!({"id": gym})).await.unwrap();
    env.clock.set(at("2026-12-02T08:00:00Z"));
    let delivery = worker(&env);
    delivery.deliver_due().await.unwrap();
    assert!(fake.received().await.is_empty(), "{:?}", fake.received().await);
    env.call(&ana, "resume_subscription", json!({"id": gym})).await.unwrap();
    env.call(&ana, "cancel_subscription", json!({"id": gym})).await.unwrap();
    env.clock.set(at("2027-01-02T08:00:00Z"));
    delivery.deliver_due().await.unwrap();
    assert!(fake.received().await.is_empty(), "{:?}", fake.received().await);
}

#[tokio::test]
async fn a_failed_delivery_is_retried_with_backoff_then_reported_in_settings() {
    let env = TestEnv::new();
    let ana = env.household("Home", "ana@a.test").await;
    let (_hook, fake, destination) = webhook_destination(&env, &ana).await;
    let delivery = worker(&env);
    let test = json!({"destination": destination});
    let before = env.dump().await;
    let preview = env.dry_run(&ana, "send_test_message", test.clone()).await.unwrap();
    assert_eq!(
        (preview["dry_run"].clone(), before),
        (json!(true), env.dump().await),
        "a dry run sends nothing"
    );
    assert_eq!(delivery.deliver_due().await.unwrap(), 0);

    fake.answer_next(503, Some(60)).await;
    env.call(&ana, "send_test_message", test.clone()).await.unwrap();
    assert_eq!(delivery.deliver_due().await.unwrap(), 1);
    let shown = settings(&env, &ana).await["destinations"][0].clone();
    assert!(shown["last_error"].as_str().unwrap().contains("503"), "{shown}");
    assert_eq!(delivery.deliver_due().await.unwrap(), 0, "not before the service's Retry-After");
    env.clock.advance(SignedDuration::from_secs(61));
    assert_eq!(delivery.deliver_due().await.unwrap(), 1);
    let shown = settings(&env, &ana).await["destinations"][0].clone();
    assert!(shown.get("last_error").is_none() && shown["last_sent_at"].is_string(), "{shown}");
    let received = fake.received().await;
    assert_eq!(received.len(), 2);
    assert_eq!(
        received[0].headers["webhook-id"], received[1].headers["webhook-id"],
        "a retry keeps its id"
    );
    assert_eq!(received[1].body["type"], "test");

    // A refusal that retrying cannot change is shown and not retried.
    fake.answer_next(400, None).await;
    env.call(&ana, "send_test_message", test.clone()).await.unwrap();
    delivery.deliver_due().await.unwrap();
    env.clock.advance(SignedDuration::from_hours(24));
    assert_eq!(delivery.deliver_due().await.unwrap(), 0);
    let shown = settings(&env, &ana).await["destinations"][0].clone();
    assert!(shown["last_error"].as_str().unwrap().contains("400"), "{shown}");
    assert_eq!(fake.received().await.len(), 3);

    // 410 means the endpoint is gone: nothing more is sent there.
    fake.answer_next(410, None).await;
    env.call(&ana, "send_test_message", test.clone()).await.unwrap();
    delivery.deliver_due().await.unwrap();
    assert_eq!(settings(&env, &ana).await["destinations"][0]["disabled"], true);
    let refused = env.call(&ana, "send_test_message", test).await;
    assert_eq!(code(&refused), "conflict", "{refused:?}");
}

#[tokio::test]
async fn an_agents_change_is_announced_with_an_undo_that_works() {
    let env = TestEnv::new();
    let ana = env.household("Home", "ana@a.test").await;
    let server = env.serve().await;
    let (hook, fake) = fakes::webhook(WEBHOOK_SECRET).await;
    add_destination(
        &env,
        &ana,
        json!({"kind": "webhook", "address": hook.url("/hook"), "secret": WEBHOOK_SECRET}),
    )
    .await;
    let (_, agent) = env.token(&ana, "trusted").await;
    env.call(&agent, "create_category", json!({"name": "Pets"})).await.unwrap();
    env.call(&ana, "create_category", json!({"name": "Garden"})).await.unwrap();
    worker(&env).deliver_due().await.unwrap();
    let received = fake.received().await;
    assert_eq!(received.len(), 1, "only the agent's change is announced: {received:?}");
    let data = &received[0].body["data"];
    assert_eq!(received[0].body["type"], "agent.change");
    assert_eq!(data["title"], "trusted token: Added category Pets");
    let undo = data["undo_url"].as_str().unwrap();
    let path = undo.strip_prefix(&server.url("")).unwrap_or_else(|| panic!("{undo}"));

    // The person follows the link, signs in, and confirms.
    let mut visitor = Visitor::new(&server);
    visitor.sign_in("ana@a.test", test_support::PASSWORD).await;
    let page = visitor.get(path).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let csrf = Visitor::hidden(&page, "csrf");
    let batch = Visitor::hidden(&page, "batch");
    let action = path.split('?').next().unwrap();
    let done = visitor.post(action, &[("csrf", &csrf), ("batch", &batch)]).await;
    assert!(done.status.is_redirection(), "{}", done.body);
    let categories = env.call(&ana, "list_categories", json!({})).await.unwrap();
    let names: Vec<&str> = categories["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(!names.contains(&"Pets") && names.contains(&"Garden"), "{names:?}");
}

#[tokio::test]
async fn a_member_reads_messages_in_her_language_and_an_agent_still_reads_english() {
    let env = TestEnv::new();
    let ana = env.household("Home", "ana@a.test").await;
    env.call(&ana, "update_member", json!({"id": ana.member_id, "language": "es"})).await.unwrap();
    let (_hook, fake, destination) = webhook_destination(&env, &ana).await;
    let (_, agent) = env.token(&ana, "trusted").await;
    let created = env.call(&agent, "create_category", json!({"name": "Pets"})).await.unwrap();
    assert_eq!(created["changes"][0]["summary"], "Added category Pets", "the agent reads English");
    env.call(&ana, "send_test_message", json!({"destination": destination})).await.unwrap();
    worker(&env).deliver_due().await.unwrap();
    let titles: Vec<Value> =
        fake.received().await.iter().map(|r| r.body["data"]["title"].clone()).collect();
    assert_eq!(
        titles,
        [
            json!("trusted token: Se ha añadido la categoría Pets"),
            json!("Mensaje de prueba de Exhale")
        ],
    );
}

#[tokio::test]
async fn email_goes_through_the_households_mail_server() {
    let env = TestEnv::new();
    let ana = env.household("Home", "ana@a.test").await;
    let refused =
        env.call(&ana, "add_destination", json!({"kind": "email", "address": "ana@a.test"})).await;
    assert_eq!(code(&refused), "conflict", "no mail server yet: {refused:?}");
    let sink = fakes::smtp_sink(false).await;
    let server = json!({"mail_server": {"host": "127.0.0.1", "port": sink.port, "security": "none", "from": "Exhale <exhale@home.test>", "username": "exhale", "password": "hunter2-smtp"}});
    let shown = env.call(&ana, "set_channel_settings", server).await.unwrap();
    assert_eq!(shown["mail_server"]["password_saved"], true);
    assert!(!shown.to_string().contains("hunter2"), "the password is never returned: {shown}");
    let destination =
        add_destination(&env, &ana, json!({"kind": "email", "address": "Ana@A.test"})).await;
    env.call(&ana, "send_test_message", json!({"destination": destination})).await.unwrap();
    worker(&env).deliver_due().await.unwrap();
    let messages = sink.messages.lock().await.clone();
    assert_eq!(messages.len(), 1, "{}", settings(&env, &ana).await);
    let mail = &messages[0];
    for expected in [
        "Subject: Test message from Exhale",
        "To: ana@a.test",
        "Message-ID: <rem-",
        "Auto-Submitted: auto-generated",
        "multipart/alternative",
        "text/html",
    ] {
        assert!(mail.contains(expected), "{expected} in\n{mail}");
    }
    assert_eq!(*sink.logins.lock().await, ["\0exhale\0hunter2-smtp"], "it signs in to the server");
}

#[tokio::test]
async fn a_mail_server_that_refuses_the_recipient_is_reported() {
    let env = TestEnv::new();
    let ana = env.household("Home", "ana@a.test").await;
    let sink = fakes::smtp_sink(true).await;
    env.call(&ana, "set_channel_settings", json!({"mail_server": {"host": "127.0.0.1", "port": sink.port, "security": "none", "from": "exhale@home.test"}}))
        .await
        .unwrap();
    let destination =
        add_destination(&env, &ana, json!({"kind": "email", "address": "ana@a.test"})).await;
    env.call(&ana, "send_test_message", json!({"destination": destination})).await.unwrap();
    worker(&env).deliver_due().await.unwrap();
    let shown = settings(&env, &ana).await["destinations"][0].clone();
    assert!(shown["last_error"].as_str().unwrap().contains("refused"), "{shown}");
}

/// The feed read by Python's icalendar: each event's summary and start date.
async fn parse_ics(body: &str) -> Vec<(String, String)> {
    let script = "import sys, json, icalendar\n\
        cal = icalendar.Calendar.from_ical(sys.stdin.read())\n\
        print(json.dumps([[str(e['SUMMARY']), e.decoded('DTSTART').isoformat()] for e in cal.walk('VEVENT')]))";
    let mut child = tokio::process::Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| panic!("python3 runs (scripts/test installs icalendar): {err}"));
    use tokio::io::AsyncWriteExt as _;
    child.stdin.take().unwrap().write_all(body.as_bytes()).await.unwrap();
    let output = child.wait_with_output().await.unwrap();
    assert!(
        output.status.success(),
        "icalendar could not read the feed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

#[tokio::test]
async fn the_calendar_feed_shows_what_its_member_may_see_and_stops_when_revoked() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let client = reqwest::Client::new();
    let created = w.env.call(&w.ana, "create_calendar_feed", json!({})).await.unwrap();
    let path = created["path"].as_str().unwrap().to_owned();
    let feed = client.get(server.url(&path)).send().await.unwrap();
    assert_eq!(feed.status(), StatusCode::OK);
    assert_eq!(feed.headers()["content-type"], "text/calendar; charset=utf-8");
    let etag = feed.headers()["etag"].clone();
    let events = parse_ics(&feed.text().await.unwrap()).await;
    assert!(events.contains(&("Netflix €12.99".into(), "2026-12-15".into())), "{events:?}");
    assert!(events.contains(&("Spotify €99.00".into(), "2026-12-10".into())), "{events:?}");
    assert!(
        !events.iter().any(|(summary, _)| summary.contains("gym")),
        "Bob's private gym is his: {events:?}"
    );
    assert!(
        !events.iter().any(|(summary, _)| summary.contains("9.99")),
        "another household's: {events:?}"
    );

    // Bob's feed, without amounts, has his private gym.
    let bobs =
        w.env.call(&w.bob, "create_calendar_feed", json!({"show_amounts": false})).await.unwrap();
    let bobs = client.get(server.url(bobs["path"].as_str().unwrap())).send().await.unwrap();
    let events = parse_ics(&bobs.text().await.unwrap()).await;
    assert!(events.contains(&("Bob's gym".into(), "2026-12-01".into())), "{events:?}");
    assert!(!events.iter().any(|(summary, _)| summary.contains('€')), "{events:?}");

    let again = client.get(server.url(&path)).header("if-none-match", etag).send().await.unwrap();
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    let forged = client
        .get(server.url("/cal/0123456789abcdef0123456789abcdef0123456789abcdef.ics"))
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), StatusCode::NOT_FOUND);
    w.env.call(&w.ana, "revoke_calendar_feed", json!({})).await.unwrap();
    let revoked = client.get(server.url(&path)).send().await.unwrap();
    assert_eq!(revoked.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn destinations_are_their_members_own_and_agents_cannot_set_them() {
    let w = World::new().await;
    // A member may not point messages at this machine or plain http; an owner may (Home
    // Assistant on the local network).
    for address in [
        "http://127.0.0.1:8123/api/webhook/x",
        "https://127.0.0.1/hook",
        "https://homeassistant.local/hook",
        // This machine and the cloud's metadata address as the outside test wrote them: each
        // is read as the sender will read it, so refused now rather than when sent.
        "https://0177.0.0.1/hook",
        "https://127.1/hook",
        "https://0x7f.1/hook",
        "https://127.000.000.001/hook",
        "https://127.0.0.1%2e/hook",
        "https://\u{FF11}\u{FF12}\u{FF17}.0.0.1/hook",
        "https://0251.0376.0251.0376/hook",
        "https://[::ffff:0:7f00:1]/hook",
    ] {
        let refused = w
            .env
            .call(
                &w.bob,
                "add_destination",
                json!({"kind": "webhook", "address": address, "secret": WEBHOOK_SECRET}),
            )
            .await;
        assert_eq!(code(&refused), "invalid_input", "{address}: {refused:?}");
        let said = refused.unwrap_err().text().render();
        assert!(
            said.contains("is on this machine or the local network") || said.contains("plain http"),
            "{address}: {said}"
        );
    }
    let bobs = add_destination(&w.env, &w.bob, json!({"kind": "webhook", "address": "https://hooks.example.net/bob", "secret": WEBHOOK_SECRET})).await;
    let weak = w.env.call(&w.bob, "add_destination", json!({"kind": "webhook", "address": "https://hooks.example.net/b2", "secret": "whsec_c2hvcnQ="})).await;
    assert_eq!(code(&weak), "invalid_input", "{weak:?}");
    // Nobody else reaches Bob's destination, in his household or another.
    for other in [&w.ana, &w.eve, &w.cai] {
        for op in ["send_test_message", "remove_destination"] {
            let result = w.env.call(other, op, json!({"destination": bobs})).await;
            assert_eq!(code(&result), "not_found", "{op}: {result:?}");
        }
    }
    let anas = settings(&w.env, &w.ana).await;
    assert!(anas["destinations"].as_array().unwrap().is_empty(), "{anas}");
    let shown = settings(&w.env, &w.bob).await;
    assert_eq!(
        shown["destinations"][0]["address"], "https://hooks.example.net/…",
        "the path may be a key: {shown}"
    );
    assert!(!shown.to_string().contains("whsec_"), "{shown}");

    // Agents set timing, never where messages go; a read token changes nothing.
    let (_, agent) = w.env.token(&w.ana, "trusted").await;
    for (op, input) in [
        ("add_destination", json!({"kind": "ntfy", "address": "https://ntfy.sh/x"})),
        ("remove_destination", json!({"destination": bobs})),
        ("create_calendar_feed", json!({})),
        ("set_channel_settings", json!({"mail_server": null})),
    ] {
        let refused = w.env.call(&agent, op, input).await;
        assert_eq!(code(&refused), "forbidden", "{op}: {refused:?}");
    }
    let timing = json!({"days_before": [7, 1], "time_of_day": "18:30"});
    let changed = w.env.call(&agent, "update_reminder_settings", timing.clone()).await.unwrap();
    assert_eq!(
        (changed["days_before"].clone(), changed["time_of_day"].clone()),
        (json!([7, 1]), json!("18:30"))
    );
    let (_, reader) = w.env.token(&w.ana, "read").await;
    let refused = w.env.call(&reader, "update_reminder_settings", timing).await;
    assert_eq!(code(&refused), "forbidden", "{refused:?}");
    let wrong = w.env.call(&w.ana, "update_reminder_settings", json!({"time_of_day": "9am"})).await;
    assert_eq!(code(&wrong), "invalid_input", "{wrong:?}");
}

#[tokio::test]
async fn reminders_of_the_household_leave_out_another_members_private_subscription() {
    let w = World::new().await;
    w.env.clock.set(at("2026-12-10T10:00:00Z"));
    w.env
        .call(&w.bob, "create_subscription", json!({"name": "Phone", "amount": "15", "cycle": "monthly", "next_charge_on": "2027-01-03"}))
        .await
        .unwrap();
    add_destination(
        &w.env,
        &w.ana,
        json!({"kind": "ntfy", "address": "https://ntfy.example.net/ana"}),
    )
    .await;
    let names = |settings: &Value| -> Vec<String> {
        settings["upcoming"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p["subscription"]["name"].as_str().map(str::to_owned))
            .collect()
    };
    // Bob's gym charges on 1 January, his phone on the 3rd: twenty days before both falls in
    // the coming week.
    let household = json!({"covers": "household", "days_before": [20]});
    let planned = w.env.call(&w.ana, "update_reminder_settings", household).await.unwrap();
    assert_eq!(names(&planned), ["Phone"], "Bob's private gym is his alone: {planned}");
    let mine =
        w.env.call(&w.ana, "update_reminder_settings", json!({"covers": "mine"})).await.unwrap();
    assert!(names(&mine).is_empty(), "{mine}");
    add_destination(
        &w.env,
        &w.bob,
        json!({"kind": "ntfy", "address": "https://ntfy.example.net/bob"}),
    )
    .await;
    let bobs =
        w.env.call(&w.bob, "update_reminder_settings", json!({"days_before": [20]})).await.unwrap();
    assert_eq!(names(&bobs), ["Bob's gym", "Phone"], "{bobs}");
}

#[tokio::test]
async fn the_reminders_page_adds_tests_and_removes_a_destination() {
    let env = TestEnv::new();
    env.household("Home", "ana@a.test").await;
    let server = env.serve().await;
    let (hook, fake) = fakes::webhook(WEBHOOK_SECRET).await;
    let mut visitor = Visitor::new(&server);
    visitor.sign_in("ana@a.test", test_support::PASSWORD).await;
    let page = visitor.get("/settings/reminders").await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let suggested = between(&page.body, r#"data-testid="webhook-secret">"#, '<').to_owned();
    assert!(suggested.starts_with("whsec_") && suggested.len() > 40, "{suggested}");
    let csrf = Visitor::hidden(&page, "csrf");

    // A webhook without its secret is explained beside the form, and nothing is added.
    let address = hook.url("/hook");
    let form = |secret: &str| {
        vec![
            ("csrf", csrf.clone()),
            ("kind", "webhook".into()),
            ("address", address.clone()),
            ("secret", secret.into()),
            ("reminders", "1".into()),
            ("agent_changes", "1".into()),
        ]
    };
    let pairs = |fields: &[(&'static str, String)]| {
        fields.iter().map(|(k, v)| (*k, v.clone())).collect::<Vec<_>>()
    };
    let posted = pairs(&form(""));
    let refused = visitor
        .post(
            "/settings/reminders/destinations",
            &posted.iter().map(|(k, v)| (*k, v.as_str())).collect::<Vec<_>>(),
        )
        .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        crate::web::unescape(&refused.body).contains("A webhook needs a signing secret"),
        "{}",
        refused.body
    );

    let posted = pairs(&form(WEBHOOK_SECRET));
    let added = visitor
        .post(
            "/settings/reminders/destinations",
            &posted.iter().map(|(k, v)| (*k, v.as_str())).collect::<Vec<_>>(),
        )
        .await;
    assert!(added.status.is_redirection(), "{}", added.body);
    let page = visitor.get("/settings/reminders").await;
    assert!(!page.body.contains(WEBHOOK_SECRET), "a saved secret is never shown again");
    let id = between(&page.body, "/settings/reminders/destinations/", '/').to_owned();
    let tested = visitor
        .post(&format!("/settings/reminders/destinations/{id}/test"), &[("csrf", &csrf)])
        .await;
    assert!(tested.status.is_redirection(), "{}", tested.body);
    worker(&env).deliver_due().await.unwrap();
    assert_eq!(fake.received().await.len(), 1);
    let page = visitor.get("/settings/reminders").await;
    assert!(page.body.contains("Last sent"), "{}", page.body);

    let confirm = visitor.get(&format!("/settings/reminders/destinations/{id}/remove")).await;
    assert!(confirm.body.contains("Stop sending here?"), "{}", confirm.body);
    let removed = visitor
        .post(&format!("/settings/reminders/destinations/{id}/remove"), &[("csrf", &csrf)])
        .await;
    assert!(removed.status.is_redirection(), "{}", removed.body);
    let page = visitor.get("/settings/reminders").await;
    assert!(page.body.contains("Nowhere yet"), "{}", page.body);

    // The feed's address is shown once and works.
    let created =
        visitor.post("/settings/reminders/feed", &[("csrf", &csrf), ("show_amounts", "1")]).await;
    let url = between(&created.body, r#"<code class="token-secret">"#, '<');
    let url = crate::web::unescape(url);
    let feed = reqwest::get(&url).await.unwrap();
    assert_eq!(feed.status(), StatusCode::OK, "{url}");
}

#[tokio::test]
async fn a_message_whose_worker_stopped_mid_send_is_sent_again_with_the_same_key() {
    let env = TestEnv::new();
    let ana = env.household("Home", "ana@a.test").await;
    let (_hook, fake, destination) = webhook_destination(&env, &ana).await;
    env.call(&ana, "send_test_message", json!({"destination": destination})).await.unwrap();
    // A worker leases the message and stops before sending (or before recording that it
    // sent): while the lease lasts, nobody else takes it.
    let leased = env.app.due_messages(10).await.unwrap();
    assert_eq!(leased.len(), 1);
    let delivery = worker(&env);
    assert_eq!(delivery.deliver_due().await.unwrap(), 0, "leased to the stopped worker");
    env.clock.advance(SignedDuration::from_secs(121));
    assert_eq!(delivery.deliver_due().await.unwrap(), 1, "taken again when the lease ends");
    let received = fake.received().await;
    assert_eq!(received.len(), 1);
    assert_eq!(
        received[0].headers["webhook-id"],
        leased[0].key.as_str(),
        "the receiver sees the key it would drop a repeat by"
    );
}

#[tokio::test]
async fn a_message_that_keeps_failing_is_given_up_after_eight_attempts() {
    let env = TestEnv::new();
    let ana = env.household("Home", "ana@a.test").await;
    let (_hook, fake, destination) = webhook_destination(&env, &ana).await;
    env.call(&ana, "send_test_message", json!({"destination": destination})).await.unwrap();
    let delivery = worker(&env);
    for _ in 0..10 {
        fake.answer_next(502, None).await;
        delivery.deliver_due().await.unwrap();
        env.clock.advance(SignedDuration::from_hours(13));
    }
    assert_eq!(fake.received().await.len(), 8, "eight attempts, then given up");
    let shown = settings(&env, &ana).await["destinations"][0].clone();
    assert!(shown["last_error"].as_str().unwrap().contains("502"), "{shown}");
    assert_eq!(shown["disabled"], false, "a failing message does not switch the destination off");
}

#[tokio::test]
async fn email_goes_over_starttls_and_implicit_tls_to_a_server_it_trusts() {
    for (security, tls) in [
        ("starttls", fakes::SinkTls::StartTls(test_support::TestAuthority::for_localhost())),
        ("tls", fakes::SinkTls::Implicit(test_support::TestAuthority::for_localhost())),
    ] {
        let env = TestEnv::new();
        let ana = env.household("Home", "ana@a.test").await;
        let authority = match &tls {
            fakes::SinkTls::StartTls(a) | fakes::SinkTls::Implicit(a) => a.der.clone(),
            fakes::SinkTls::None => unreachable!(),
        };
        let sink = fakes::smtp_sink_with(false, tls).await;
        let server = json!({"mail_server": {"host": "localhost", "port": sink.port, "security": security, "from": "exhale@home.test", "username": "exhale", "password": "s3cret-smtp"}});
        env.call(&ana, "set_channel_settings", server).await.unwrap();
        let destination =
            add_destination(&env, &ana, json!({"kind": "email", "address": "ana@a.test"})).await;
        env.call(&ana, "send_test_message", json!({"destination": destination})).await.unwrap();

        // Without the authority the server's certificate is not trusted, and nothing is sent.
        worker(&env).deliver_due().await.unwrap();
        assert!(sink.messages.lock().await.is_empty(), "{security}");
        let shown = settings(&env, &ana).await["destinations"][0].clone();
        assert!(shown["last_error"].is_string(), "{security}: {shown}");

        env.clock.advance(SignedDuration::from_secs(31));
        let trusting = Channels::new(
            env.app.clone(),
            ChannelsConfig { extra_roots: vec![authority], ..ChannelsConfig::default() },
        )
        .unwrap();
        assert_eq!(trusting.deliver_due().await.unwrap(), 1, "{security}");
        assert_eq!(sink.messages.lock().await.len(), 1, "{security}");
        assert_eq!(
            *sink.logins.lock().await,
            ["\0exhale\0s3cret-smtp"],
            "{security}: signed in over TLS"
        );
    }
}

#[tokio::test]
async fn price_rises_short_trials_and_the_digest_are_planned_and_worded() {
    let env = TestEnv::new();
    let ana = env.household("Home", "ana@a.test").await;
    let (ntfy_server, fake) = fakes::ntfy(None).await;
    // Charged on the 5th; the price goes up from 1 December, so the 5 December charge is higher.
    let gym = id(&env
        .call(&ana, "create_subscription", json!({"name": "Gym", "amount": "10", "cycle": "monthly", "next_charge_on": "2026-11-05"}))
        .await
        .unwrap());
    env.call(
        &ana,
        "change_price",
        json!({"id": gym, "amount": "12", "effective_on": "2026-12-01"}),
    )
    .await
    .unwrap();
    // A trial that ends in two days: the reminder a week before has passed, the day before has not.
    env.call(&ana, "create_subscription", json!({"name": "Film club", "amount": "8", "cycle": "monthly", "trial_ends_on": "2026-12-01"}))
        .await
        .unwrap();
    add_destination(
        &env,
        &ana,
        json!({"kind": "ntfy", "address": format!("{}/ana", ntfy_server.url(""))}),
    )
    .await;
    let planned = env
        .call(
            &ana,
            "update_reminder_settings",
            json!({"days_before": [7, 1], "weekly_digest": "monday"}),
        )
        .await
        .unwrap();
    let kinds: Vec<(&str, &str)> = planned["upcoming"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["kind"].as_str().unwrap(), p["due_at"].as_str().unwrap()))
        .collect();
    assert!(kinds.contains(&("trial_ending", "2026-11-30T08:00:00Z")), "{kinds:?}");
    assert!(kinds.contains(&("weekly_digest", "2026-11-30T08:00:00Z")), "{kinds:?}");
    // A week before has passed: the warning goes at the next offset still ahead, once.
    assert!(kinds.contains(&("price_rise", "2026-12-04T08:00:00Z")), "{kinds:?}");

    let delivery = worker(&env);
    delivery.deliver_due().await.unwrap();
    env.clock.set(at("2026-11-30T08:00:00Z"));
    delivery.deliver_due().await.unwrap();
    env.clock.set(at("2026-12-04T08:00:00Z"));
    delivery.deliver_due().await.unwrap();
    let titles: Vec<String> = fake
        .received()
        .await
        .iter()
        .map(|r| r.body["title"].as_str().unwrap().to_owned())
        .collect();
    assert!(titles.contains(&"Gym goes up to €12.00 tomorrow".to_owned()), "{titles:?}");
    assert!(titles.contains(&"Film club's free trial ends tomorrow".to_owned()), "{titles:?}");
    assert!(titles.iter().any(|t| t.starts_with("This week: ")), "{titles:?}");
}

#[tokio::test]
async fn test_messages_are_limited_to_five_an_hour() {
    let env = TestEnv::new();
    let ana = env.household("Home", "ana@a.test").await;
    let destination = add_destination(
        &env,
        &ana,
        json!({"kind": "ntfy", "address": "https://ntfy.example.net/ana"}),
    )
    .await;
    for _ in 0..5 {
        env.call(&ana, "send_test_message", json!({"destination": destination})).await.unwrap();
    }
    let refused = env.call(&ana, "send_test_message", json!({"destination": destination})).await;
    assert_eq!(code(&refused), "rate_limited", "{refused:?}");
    env.clock.advance(SignedDuration::from_mins(61));
    env.call(&ana, "send_test_message", json!({"destination": destination})).await.unwrap();
}

#[tokio::test]
async fn an_owners_local_destination_stops_reaching_the_network_once_they_are_a_member() {
    let env = TestEnv::new();
    let ana = env.household("Home", "ana@a.test").await;
    let bob = env.member(&ana, "Bob", "bob@a.test").await;
    env.call(&ana, "update_member", json!({"id": bob.member_id, "role": "owner"})).await.unwrap();
    let (_hook, fake, destination) = webhook_destination(&env, &ana).await;
    env.call(&ana, "send_test_message", json!({"destination": destination})).await.unwrap();
    worker(&env).deliver_due().await.unwrap();
    assert_eq!(fake.received().await.len(), 1, "an owner may reach this machine");

    let bob_as_owner = ops::Caller { role: ops::Role::Owner, ..bob };
    env.call(&bob_as_owner, "update_member", json!({"id": ana.member_id, "role": "member"}))
        .await
        .unwrap();
    let ana = ops::Caller { role: ops::Role::Member, ..ana };
    env.call(&ana, "send_test_message", json!({"destination": destination})).await.unwrap();
    worker(&env).deliver_due().await.unwrap();
    assert_eq!(fake.received().await.len(), 1, "not once she is a member");
    let shown = settings(&env, &ana).await["destinations"][0].clone();
    assert!(shown["last_error"].as_str().unwrap().contains("local network"), "{shown}");
}
