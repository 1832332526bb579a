//! Behaviour through the catalog: confirmation paths and scopes, the charge series, the job
//! that records charges, undo conflicts, pagination, reports and the briefing.

use jiff::SignedDuration;
use ops::{Caller, Catalog as _, Heard, OpError, Via};
use serde_json::json;
use test_support::code;

use crate::fixtures::{World, id};

#[tokio::test]
async fn write_tokens_confirm_financial_and_destructive_writes() {
    let w = World::new().await;
    let (_, write) = w.env.token(&w.ana, "write").await;
    let new = json!({"name": "Hulu", "amount": "7.99", "currency": "USD", "cycle": "monthly", "next_charge_on": "2026-12-03"});
    let before = w.env.dump().await;
    let asked = w.env.call(&write, "create_subscription", new.clone()).await;
    let Err(OpError::ConfirmationRequired { confirmation_id, preview, message, .. }) = asked else {
        panic!("{asked:?}")
    };
    assert!(
        message.render().contains("Added Hulu"),
        "the person sees what Exhale wrote: {}",
        message.render()
    );
    assert_eq!(preview["name"], "Hulu");
    // Asking stored only the confirmation.
    let list = w.env.call(&w.ana, "list_subscriptions", json!({"text": "hulu"})).await.unwrap();
    assert_eq!(list["total"], 0);
    assert_ne!(before, w.env.dump().await);

    // Another token of the same member cannot use it, nor can another member.
    let (_, other_token) = w.env.token(&w.ana, "write").await;
    let stolen = w
        .env
        .call(&other_token, "confirm_change", json!({"confirmation_id": confirmation_id}))
        .await;
    assert_eq!(code(&stolen), "not_found");
    let (_, bobs_token) = w.env.token(&w.bob, "write").await;
    assert_eq!(
        code(
            &w.env
                .call(&bobs_token, "confirm_change", json!({"confirmation_id": confirmation_id}))
                .await
        ),
        "not_found"
    );

    let applied = w
        .env
        .call(&write, "confirm_change", json!({"confirmation_id": confirmation_id}))
        .await
        .unwrap();
    assert_eq!(applied["name"], "Hulu");
    assert_eq!(applied["price"]["display"], "$7.99");
    assert!(applied["batch_id"].is_string());

    // A non-financial, non-destructive write goes straight through.
    let renamed = w.env.call(&write, "create_category", json!({"name": "Kids"})).await;
    assert_eq!(code(&renamed), "ok");
    // dry_run works for every caller and needs no confirmation.
    let dry = w.env.dry_run(&write, "delete_subscription", json!({"id": w.netflix})).await.unwrap();
    assert_eq!(dry["dry_run"], true);
}

#[tokio::test]
async fn confirmations_expire_after_ten_minutes() {
    let w = World::new().await;
    let (_, write) = w.env.token(&w.ana, "write").await;
    let Err(OpError::ConfirmationRequired { confirmation_id, .. }) =
        w.env.call(&write, "delete_subscription", json!({"id": w.netflix})).await
    else {
        panic!("expected a confirmation")
    };
    w.env.clock.advance(SignedDuration::from_mins(11));
    let late =
        w.env.call(&write, "confirm_change", json!({"confirmation_id": confirmation_id})).await;
    assert_eq!(code(&late), "conflict");
    assert_eq!(code(&w.env.call(&w.ana, "get_subscription", json!({"id": w.netflix})).await), "ok");
}

#[tokio::test]
async fn confirmation_revalidates_when_applied() {
    let w = World::new().await;
    let (_, write) = w.env.token(&w.ana, "write").await;
    let Err(OpError::ConfirmationRequired { confirmation_id, .. }) =
        w.env.call(&write, "change_price", json!({"id": w.netflix, "amount": "14.99"})).await
    else {
        panic!("expected a confirmation")
    };
    w.env.call(&w.ana, "delete_subscription", json!({"id": w.netflix})).await.unwrap();
    let applied =
        w.env.call(&write, "confirm_change", json!({"confirmation_id": confirmation_id})).await;
    assert_eq!(code(&applied), "not_found");
}

#[tokio::test]
async fn trusted_tokens_skip_confirmation_except_for_destructive_writes() {
    let w = World::new().await;
    let (_, trusted) = w.env.token(&w.ana, "trusted").await;
    let created = w
        .env
        .call(&trusted, "create_subscription", json!({"name": "Hulu", "amount": "7.99", "cycle": "monthly", "next_charge_on": "2026-12-03"}))
        .await;
    assert_eq!(code(&created), "ok");
    let deleted =
        w.env.call(&trusted, "delete_subscription", json!({"id": id(&created.unwrap())})).await;
    assert_eq!(code(&deleted), "confirmation_required");
}

#[tokio::test]
async fn read_tokens_and_agents_are_refused_what_they_may_not_do() {
    let w = World::new().await;
    let (_, read) = w.env.token(&w.ana, "read").await;
    assert_eq!(code(&w.env.call(&read, "list_subscriptions", json!({})).await), "ok");
    let refused = w.env.call(&read, "create_category", json!({"name": "Pets"})).await;
    let Err(OpError::Forbidden { needed, .. }) = &refused else { panic!("{refused:?}") };
    assert_eq!(*needed, Some(ops::Scope::Write));
    assert_eq!(
        code(&w.env.dry_run(&read, "delete_subscription", json!({"id": w.netflix})).await),
        "forbidden"
    );

    let (_, trusted) = w.env.token(&w.ana, "trusted").await;
    for (op, input) in [
        ("create_token", json!({"name": "mine", "scope": "trusted"})),
        ("invite_member", json!({"name": "Mallory", "email": "m@a.test"})),
        ("remove_member", json!({"id": w.eve.member_id})),
    ] {
        let refused = w.env.call(&trusted, op, input).await;
        assert_eq!(code(&refused), "forbidden", "{op} must be excluded from agents");
        assert!(refused.unwrap_err().text().render().contains("not available to agents"));
    }
    // Owner-only ops refuse members, whatever the scope.
    let (_, bobs) = w.env.token(&w.bob, "trusted").await;
    assert_eq!(
        code(&w.env.call(&bobs, "update_settings", json!({"reminder_days_before": 1})).await),
        "forbidden"
    );
    assert_eq!(
        code(&w.env.call(&w.bob, "update_household", json!({"name": "Mine"})).await),
        "forbidden"
    );
}

#[tokio::test]
async fn revoked_and_expired_tokens_stop_working() {
    let w = World::new().await;
    let (secret, _) = w.env.token(&w.ana, "read").await;
    let list = w.env.call(&w.ana, "list_tokens", json!({})).await.unwrap();
    let token_id = id(&list["items"][0]);
    assert!(list.to_string().find(&secret).is_none(), "list_tokens never returns secrets");
    w.env.call(&w.ana, "revoke_token", json!({"id": token_id})).await.unwrap();
    let refused = w.env.app.authenticate_token(&secret, ops::Via::Rest).await;
    assert_eq!(code(&refused), "unauthenticated");

    let created = w
        .env
        .call(
            &w.ana,
            "create_token",
            json!({"name": "short", "scope": "read", "expires_in_days": 1}),
        )
        .await
        .unwrap();
    let secret = created["secret"].as_str().unwrap();
    assert_eq!(code(&w.env.app.authenticate_token(secret, ops::Via::Rest).await), "ok");
    w.env.clock.advance(SignedDuration::from_hours(25));
    assert_eq!(
        code(&w.env.app.authenticate_token(secret, ops::Via::Rest).await),
        "unauthenticated"
    );
}

#[tokio::test]
async fn agent_changes_name_the_agent_in_activity() {
    let w = World::new().await;
    let (_, write) = w.env.token(&w.ana, "write").await;
    let agent = write.clone().with_client_name(Some("Claude Desktop".into()));
    let Err(OpError::ConfirmationRequired { confirmation_id, .. }) =
        w.env.call(&agent, "delete_subscription", json!({"id": w.netflix})).await
    else {
        panic!("expected a confirmation")
    };
    w.env
        .call(&agent, "confirm_change", json!({"confirmation_id": confirmation_id}))
        .await
        .unwrap();
    let activity =
        w.env.call(&w.ana, "list_activity", json!({"actor_kind": "agent"})).await.unwrap();
    let entry = &activity["items"][0];
    assert_eq!(entry["summary"], "Deleted Netflix");
    assert_eq!(entry["actor"]["label"], "Claude Desktop (token write token) for Home owner");
    assert_eq!(entry["op"], "delete_subscription");
}

#[tokio::test]
async fn monthly_series_never_drift_and_prices_apply_from_their_date() {
    let w = World::new().await;
    let created = w
        .env
        .call(&w.ana, "create_subscription", json!({"name": "Month end", "amount": "10", "cycle": "monthly", "next_charge_on": "2027-01-31"}))
        .await
        .unwrap();
    let sub = id(&created);
    w.env
        .call(
            &w.ana,
            "change_price",
            json!({"id": sub, "amount": "12.50", "effective_on": "2027-03-01"}),
        )
        .await
        .unwrap();
    let upcoming = w
        .env
        .call(&w.ana, "list_upcoming_charges", json!({"days": 366, "subscription_id": sub}))
        .await
        .unwrap();
    let dates: Vec<(&str, &str)> = upcoming["items"]
        .as_array()
        .unwrap()
        .iter()
        .take(4)
        .map(|c| (c["charge_on"].as_str().unwrap(), c["amount"]["amount"].as_str().unwrap()))
        .collect();
    assert_eq!(
        dates,
        [
            ("2027-01-31", "10.00"),
            ("2027-02-28", "10.00"),
            ("2027-03-31", "12.50"),
            ("2027-04-30", "12.50")
        ]
    );
}

#[tokio::test]
async fn paused_and_cancelled_subscriptions_have_no_charges_in_the_gap() {
    let w = World::new().await;
    w.env
        .call(
            &w.ana,
            "pause_subscription",
            json!({"id": w.netflix, "from": "2026-12-01", "until": "2027-02-01"}),
        )
        .await
        .unwrap();
    let upcoming = w
        .env
        .call(&w.ana, "list_upcoming_charges", json!({"days": 120, "subscription_id": w.netflix}))
        .await
        .unwrap();
    let dates: Vec<&str> = upcoming["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["charge_on"].as_str().unwrap())
        .collect();
    assert_eq!(dates, ["2027-02-15", "2027-03-15"]);
    w.env
        .call(&w.ana, "cancel_subscription", json!({"id": w.spotify, "ends_on": "2026-12-09"}))
        .await
        .unwrap();
    let upcoming = w
        .env
        .call(&w.ana, "list_upcoming_charges", json!({"days": 366, "subscription_id": w.spotify}))
        .await
        .unwrap();
    assert_eq!(upcoming["items"], json!([]));
}

#[tokio::test]
async fn the_job_records_charges_as_days_pass() {
    let w = World::new().await;
    async fn count(w: &World) -> u64 {
        let charges = w
            .env
            .call(&w.ana, "list_charges", json!({"subscription_id": w.netflix}))
            .await
            .unwrap();
        charges["total"].as_u64().unwrap()
    }
    // June to November 2026: six charges were recorded at creation.
    assert_eq!(count(&w).await, 6);
    w.env.clock.advance(SignedDuration::from_hours(24 * 17));
    assert!(w.env.app.materialise_due_charges().await.unwrap() >= 1);
    assert_eq!(count(&w).await, 7);
    // Running again records nothing twice.
    assert_eq!(w.env.app.materialise_due_charges().await.unwrap(), 0);
    let charges = w
        .env
        .call(&w.ana, "list_charges", json!({"subscription_id": w.netflix, "limit": 1}))
        .await
        .unwrap();
    assert_eq!(charges["items"][0]["charged_on"], "2026-12-15");
}

#[tokio::test]
async fn undo_refuses_when_the_entity_changed_since() {
    let w = World::new().await;
    let renamed = w
        .env
        .call(&w.ana, "update_subscription", json!({"id": w.netflix, "name": "Netflix A"}))
        .await
        .unwrap();
    w.env
        .call(&w.ana, "update_subscription", json!({"id": w.netflix, "name": "Netflix B"}))
        .await
        .unwrap();
    let refused = w.env.call(&w.ana, "undo", json!({"audit_ids": renamed["audit_ids"]})).await;
    assert_eq!(code(&refused), "conflict");
    assert!(refused.unwrap_err().text().render().contains("changed after"));
    let current = w.env.call(&w.ana, "get_subscription", json!({"id": w.netflix})).await.unwrap();
    assert_eq!(current["name"], "Netflix B");
}

#[tokio::test]
async fn bulk_updates_are_all_or_nothing() {
    let w = World::new().await;
    let before = w.env.dump().await;
    let refused = w
        .env
        .call(
            &w.ana,
            "bulk_update_subscriptions",
            json!({"ids": [w.netflix, w.bobs_gym], "action": "cancel"}),
        )
        .await;
    let Err(OpError::InvalidInput { pointer, .. }) = &refused else { panic!("{refused:?}") };
    assert_eq!(pointer, "/ids/1");
    assert_eq!(before, w.env.dump().await);
    let done = w
        .env
        .call(
            &w.ana,
            "bulk_update_subscriptions",
            json!({"ids": [w.netflix, w.spotify], "action": "update", "category_id": w.music}),
        )
        .await
        .unwrap();
    assert_eq!(done["items"][0]["changed"], true);
    assert_eq!(done["items"][1]["changed"], false, "Spotify was already in Music");
    assert_eq!(done["audit_ids"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn pagination_is_stable_and_complete() {
    let w = World::new().await;
    for i in 0..7 {
        w.env
            .call(&w.ana, "create_subscription", json!({"name": format!("Service {i}"), "amount": "1", "cycle": "monthly", "next_charge_on": "2026-12-01"}))
            .await
            .unwrap();
    }
    let mut names = Vec::new();
    let mut cursor = None;
    loop {
        let mut input = json!({"limit": 3});
        if let Some(cursor) = &cursor {
            input["cursor"] = json!(cursor);
        }
        let page = w.env.call(&w.ana, "list_subscriptions", input).await.unwrap();
        assert_eq!(page["total"], 9);
        names.extend(
            page["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["name"].as_str().unwrap().to_owned()),
        );
        match page.get("next_cursor").and_then(|c| c.as_str()) {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(names.len(), 9);
    let mut sorted = names.clone();
    sorted.sort_by_key(|n| n.to_lowercase());
    assert_eq!(names, sorted);
}

#[tokio::test]
async fn spending_summary_converts_with_rates_and_keeps_the_rest_apart() {
    let w = World::new().await;
    w.env
        .call(&w.ana, "create_subscription", json!({"name": "Copilot", "amount": "10.00", "currency": "USD", "cycle": "monthly", "next_charge_on": "2026-12-02"}))
        .await
        .unwrap();
    let summary = w.env.call(&w.ana, "get_spending_summary", json!({})).await.unwrap();
    // Netflix 12.99 + Spotify 99/12 = 8.25; Bob's private gym is not Ana's to see.
    assert_eq!(summary["monthly"]["amount"], "21.24");
    assert_eq!(summary["unconverted"][0]["currency"], "USD");
    // Which costs the most: Netflix (155.88 a year) over Spotify (99); not Bob's private gym,
    // and not Copilot, whose dollars have no rate yet.
    let most: Vec<(&str, &str)> = summary["most_expensive"]
        .as_array()
        .unwrap()
        .iter()
        .map(|cost| (cost["name"].as_str().unwrap(), cost["yearly"]["amount"].as_str().unwrap()))
        .collect();
    assert_eq!(most, [("Netflix", "155.88"), ("Spotify", "99.00")]);
    assert_eq!(summary["most_expensive"][0]["id"], w.netflix);
    // Each amount with its period beside it, so the yearly one is not read as the monthly.
    assert_eq!(summary["most_expensive"][0]["cost"], "€12.99 a month, €155.88 a year");
    w.env
        .call(&w.ana, "update_settings", json!({"exchange_rates": {"USD": "0.90"}}))
        .await
        .unwrap();
    let summary =
        w.env.call(&w.ana, "get_spending_summary", json!({"group_by": "tag"})).await.unwrap();
    assert_eq!(summary["monthly"]["amount"], "30.24");
    assert_eq!(summary["unconverted"], json!([]));
    assert_eq!(summary["groups"][0]["label"], "family");
    // Copilot counts now: 10 dollars a month are 108.00 euros a year, between the two.
    let names: Vec<&str> = summary["most_expensive"]
        .as_array()
        .unwrap()
        .iter()
        .map(|cost| cost["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Netflix", "Copilot", "Spotify"]);
}

#[tokio::test]
async fn the_briefing_has_what_a_model_needs() {
    let w = World::new().await;
    let context = w.env.call(&w.bob, "get_context", json!({})).await.unwrap();
    let markdown = context["markdown"].as_str().unwrap();
    for needle in [
        "2026-11-29",
        "Europe/Madrid",
        "Netflix",
        "Bob's gym",
        "confirm_change",
        "YYYY-MM-DD",
        "undo",
    ] {
        assert!(markdown.contains(needle), "the briefing lacks {needle}:\n{markdown}");
    }
    assert!(!context.to_string().contains("@a.test"), "no email reaches a model");
    let anas = w.env.call(&w.ana, "get_context", json!({})).await.unwrap();
    assert!(!anas.to_string().contains("Bob's gym"));
}

#[tokio::test]
async fn attention_items_point_at_what_needs_a_look() {
    let w = World::new().await;
    w.env
        .call(&w.ana, "update_payment_method", json!({"id": w.card, "expires": "2026-11"}))
        .await
        .unwrap();
    w.env
        .call(&w.ana, "create_subscription", json!({"name": "Phone", "amount": "20", "cycle": "monthly", "next_charge_on": "2026-12-03", "payment_method_id": w.card, "category_id": w.music}))
        .await
        .unwrap();
    w.env
        .call(&w.ana, "create_subscription", json!({"name": "Photo app", "amount": "5", "cycle": "monthly", "trial_ends_on": "2026-12-02"}))
        .await
        .unwrap();
    w.env
        .call(&w.ana, "create_subscription", json!({"name": "Copilot", "amount": "10", "currency": "USD", "cycle": "monthly", "next_charge_on": "2026-12-20", "category_id": w.music}))
        .await
        .unwrap();
    w.env
        .call(
            &w.ana,
            "change_price",
            json!({"id": w.netflix, "amount": "15.99", "effective_on": "2026-11-20"}),
        )
        .await
        .unwrap();
    let attention = w.env.call(&w.ana, "list_attention_items", json!({})).await.unwrap();
    let kinds: Vec<&str> = attention["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["kind"].as_str().unwrap())
        .collect();
    for kind in ["card_expiring", "trial_ending", "uncategorised", "price_increase", "missing_rate"]
    {
        assert!(kinds.contains(&kind), "no {kind} in {attention}");
    }
    let savings = w.env.call(&w.ana, "find_savings", json!({})).await.unwrap();
    assert_eq!(savings["items"][0]["kind"], "price_increase");
    assert!(savings["items"][0]["evidence"].as_str().unwrap().contains("€12.99 → €15.99"));
}

#[tokio::test]
async fn committed_writes_publish_change_events_and_dry_runs_do_not() {
    let w = World::new().await;
    let mut anas = w.env.app.subscribe(&w.ana);
    let mut bobs = w.env.app.subscribe(&w.bob);
    let mut cais = w.env.app.subscribe(&w.cai);
    w.env.dry_run(&w.ana, "delete_subscription", json!({"id": w.netflix})).await.unwrap();
    w.env
        .call(&w.ana, "update_subscription", json!({"id": w.netflix, "name": "Netflix HD"}))
        .await
        .unwrap();
    for feed in [&mut anas, &mut bobs] {
        let Some(Heard::Change(event)) = feed.try_next() else { panic!("no event") };
        assert_eq!(
            (event.entity.as_str(), event.entity_id, event.op),
            ("subscription", w.netflix, "update_subscription")
        );
        assert_eq!(feed.try_next(), None, "the dry run published nothing");
    }
    // A private item's change reaches its owner only, and nothing crosses households.
    w.env
        .call(&w.bob, "update_subscription", json!({"id": w.bobs_gym, "notes": "6am"}))
        .await
        .unwrap();
    let Some(Heard::Change(event)) = bobs.try_next() else { panic!("Bob hears of his gym") };
    assert_eq!((event.entity_id, event.private_to), (w.bobs_gym, Some(w.bob.member_id)));
    assert_eq!(anas.try_next(), None, "Ana does not hear of Bob's private subscription");
    assert_eq!(cais.try_next(), None, "another household hears nothing");
}

#[tokio::test]
async fn agent_changes_leave_a_message_with_undo_for_the_member_in_the_outbox() {
    let w = World::new().await;
    let topic = json!({"kind": "ntfy", "address": "https://ntfy.example.net/ana-alerts"});
    w.env.call(&w.ana, "add_destination", topic).await.unwrap();
    let (_, trusted) = w.env.token(&w.ana, "trusted").await;
    w.env.call(&trusted, "create_category", json!({"name": "Pets"})).await.unwrap();
    w.env.call(&w.ana, "create_category", json!({"name": "Garden"})).await.unwrap();
    let due = w.env.app.due_messages(10).await.unwrap();
    assert_eq!(due.len(), 1, "only the agent's change is announced: {due:?}");
    let message = &due[0].message;
    assert!(message.title.contains("Added category Pets"), "{}", message.title);
    let undo = message.undo.as_ref().expect("an agent's change comes with Undo");
    assert!(undo.url.contains("/undo?batch="), "{}", undo.url);
    let sent = ops::channels::Outcome::Sent { external_id: None };
    w.env.app.finish_message(due[0].id, sent).await.unwrap();
    assert!(
        w.env.app.due_messages(10).await.unwrap().is_empty(),
        "a sent message is not sent again"
    );
}

#[tokio::test]
async fn agents_cannot_undo_changes_to_tokens_or_members_and_undo_needs_confirmation() {
    let w = World::new().await;
    let (old_secret, _) = w.env.token(&w.ana, "read").await;
    let tokens = w.env.call(&w.ana, "list_tokens", json!({})).await.unwrap();
    let revoked =
        w.env.call(&w.ana, "revoke_token", json!({"id": id(&tokens["items"][0])})).await.unwrap();
    let (_, trusted) = w.env.token(&w.ana, "trusted").await;
    let undo = w.env.call(&trusted, "undo", json!({"audit_ids": revoked["audit_ids"]})).await;
    assert_eq!(code(&undo), "forbidden", "an agent cannot bring a revoked token back");
    assert_eq!(
        code(&w.env.app.authenticate_token(&old_secret, ops::Via::Rest).await),
        "unauthenticated"
    );
    // Undo is destructive: even a trusted token confirms it.
    let renamed = w
        .env
        .call(&w.ana, "update_subscription", json!({"id": w.netflix, "name": "N"}))
        .await
        .unwrap();
    let undo = w.env.call(&trusted, "undo", json!({"audit_ids": renamed["audit_ids"]})).await;
    assert_eq!(code(&undo), "confirmation_required");
    // A person may.
    w.env.call(&w.ana, "undo", json!({"audit_ids": revoked["audit_ids"]})).await.unwrap();
    assert_eq!(code(&w.env.app.authenticate_token(&old_secret, ops::Via::Rest).await), "ok");
}

#[tokio::test]
async fn concurrent_confirmations_apply_once() {
    let w = World::new().await;
    let (_, write) = w.env.token(&w.ana, "write").await;
    let Err(OpError::ConfirmationRequired { confirmation_id, .. }) = w
        .env
        .call(
            &write,
            "change_price",
            json!({"id": w.netflix, "amount": "14.99", "effective_on": "2026-12-01"}),
        )
        .await
    else {
        panic!("expected a confirmation")
    };
    let input = json!({"confirmation_id": confirmation_id});
    let (a, b) = tokio::join!(
        w.env.call(&write, "confirm_change", input.clone()),
        w.env.call(&write, "confirm_change", input)
    );
    let mut codes = [code(&a), code(&b)];
    codes.sort_unstable();
    assert_eq!(codes, ["conflict", "ok"]);
    let activity =
        w.env.call(&w.ana, "list_activity", json!({"op": "change_price"})).await.unwrap();
    assert_eq!(activity["total"], 1);
}

#[tokio::test]
async fn undo_explains_what_blocks_it_and_an_undone_undo_can_be_undone_again() {
    let w = World::new().await;
    let deleted =
        w.env.call(&w.ana, "delete_subscription", json!({"id": w.spotify})).await.unwrap();
    w.env.call(&w.ana, "delete_category", json!({"id": w.music})).await.unwrap();
    let blocked = w.env.call(&w.ana, "undo", json!({"batch_id": deleted["batch_id"]})).await;
    assert_eq!(code(&blocked), "conflict");
    assert!(blocked.unwrap_err().text().render().contains("Undo that deletion first"));

    let renamed = w
        .env
        .call(&w.ana, "update_subscription", json!({"id": w.netflix, "name": "Netflix 4K"}))
        .await
        .unwrap();
    let undone =
        w.env.call(&w.ana, "undo", json!({"batch_id": renamed["batch_id"]})).await.unwrap();
    w.env.call(&w.ana, "undo", json!({"batch_id": undone["batch_id"]})).await.unwrap();
    assert_eq!(
        w.env.call(&w.ana, "get_subscription", json!({"id": w.netflix})).await.unwrap()["name"],
        "Netflix 4K"
    );
    w.env.call(&w.ana, "undo", json!({"batch_id": renamed["batch_id"]})).await.unwrap();
    assert_eq!(
        w.env.call(&w.ana, "get_subscription", json!({"id": w.netflix})).await.unwrap()["name"],
        "Netflix"
    );
}

#[tokio::test]
async fn the_assistant_may_not_export_or_confirm_its_own_proposals() {
    let w = World::new().await;
    let assistant = ops::Caller {
        actor: ops::Actor::Assistant,
        scope: ops::Scope::Write,
        via: ops::Via::Assistant,
        ..w.ana.clone()
    };
    assert_eq!(code(&w.env.call(&assistant, "export_data", json!({})).await), "forbidden");
    let Err(OpError::ConfirmationRequired { confirmation_id, .. }) =
        w.env.call(&assistant, "create_category", json!({"name": "Pets"})).await
    else {
        panic!("the assistant confirms every write")
    };
    let own =
        w.env.call(&assistant, "confirm_change", json!({"confirmation_id": confirmation_id})).await;
    assert_eq!(code(&own), "forbidden");
}

#[tokio::test]
async fn membership_edge_cases_are_refused_clearly() {
    let w = World::new().await;
    let myself = w.env.call(&w.ana, "remove_member", json!({"id": w.ana.member_id})).await;
    assert_eq!(code(&myself), "conflict");
    let bob = w.env.call(&w.ana, "remove_member", json!({"id": w.bob.member_id})).await;
    assert_eq!(code(&bob), "conflict", "Bob still has private items");
    assert_eq!(
        code(
            &w.env
                .call(&w.ana, "list_subscriptions", json!({"cursor": "o99999999999999999999"}))
                .await
        ),
        "invalid_input"
    );
}

#[tokio::test]
async fn a_token_that_calls_too_fast_is_slowed_down_and_people_are_not() {
    let w = World::new().await;
    w.env.app.set_token_rate_limit(Some(app::RateLimit { per_second: 2, burst: 3 }));
    let (_, agent) = w.env.token(&w.ana, "read").await;
    for _ in 0..3 {
        assert_eq!(code(&w.env.call(&agent, "get_household", json!({})).await), "ok");
    }
    let limited = w.env.call(&agent, "get_household", json!({})).await;
    let Err(OpError::RateLimited { retry_after_secs, .. }) = limited else { panic!("{limited:?}") };
    assert_eq!(retry_after_secs, 1);
    for _ in 0..10 {
        assert_eq!(
            code(&w.env.call(&w.ana, "get_household", json!({})).await),
            "ok",
            "people are not rate limited"
        );
    }
    w.env.clock.advance(SignedDuration::from_secs(1));
    assert_eq!(code(&w.env.call(&agent, "get_household", json!({})).await), "ok");
}

#[tokio::test]
async fn sign_in_locks_an_email_after_five_failures_until_fifteen_minutes_pass() {
    let w = World::new().await;
    let sign_in = |email: &'static str, password: &'static str| {
        let app = w.env.app.clone();
        async move { app.sign_in(email, password, None, Via::Web).await }
    };
    for _ in 0..5 {
        assert_eq!(code(&sign_in("ana@a.test", "guess").await), "unauthenticated");
    }
    let locked = sign_in("ana@a.test", test_support::PASSWORD).await;
    let Err(OpError::RateLimited { retry_after_secs, message }) = &locked else {
        panic!("the right password is refused while locked: {locked:?}")
    };
    assert_eq!(*retry_after_secs, 15 * 60);
    assert!(message.render().contains("in 15 min"), "{}", message.render());
    // The same email however it is written; another person is not locked out.
    assert_eq!(code(&sign_in(" ANA@a.test ", test_support::PASSWORD).await), "rate_limited");
    assert_eq!(code(&sign_in("cai@b.test", test_support::PASSWORD).await), "ok");
    // On the injected clock: a minute short of the window, still locked; then open again.
    w.env.clock.advance(SignedDuration::from_mins(14));
    assert_eq!(code(&sign_in("ana@a.test", test_support::PASSWORD).await), "rate_limited");
    w.env.clock.advance(SignedDuration::from_mins(1));
    assert_eq!(code(&sign_in("ana@a.test", test_support::PASSWORD).await), "ok");
}

#[tokio::test]
async fn guessing_from_many_addresses_slows_an_email_without_locking_its_owner_out() {
    let w = World::new().await;
    let sign_in = |password: &'static str, address: &str| {
        let app = w.env.app.clone();
        let client = Some(address.parse().unwrap());
        async move { app.sign_in("ana@a.test", password, client, Via::Web).await }
    };
    let wait_of = |result: &Result<Caller, OpError>| match result {
        Err(OpError::RateLimited { retry_after_secs, .. }) => *retry_after_secs,
        other => panic!("not rate limited: {other:?}"),
    };
    // Five guesses from one address lock that address out for the window.
    for _ in 0..5 {
        assert_eq!(code(&sign_in("guess", "203.0.113.1").await), "unauthenticated");
    }
    assert_eq!(wait_of(&sign_in(test_support::PASSWORD, "203.0.113.1").await), 15 * 60);
    // Each further guess, from anywhere, waits twice as long after the last failure: 1, 2,
    // 4, 8… seconds, never more than a minute.
    let mut expected = 1;
    for guesser in 2..=12 {
        let address = format!("203.0.113.{guesser}");
        assert_eq!(wait_of(&sign_in("guess", &address).await), expected, "guess {guesser}");
        w.env.clock.advance(SignedDuration::from_secs(expected.cast_signed()));
        assert_eq!(code(&sign_in("guess", &address).await), "unauthenticated");
        expected = (expected * 2).min(60);
    }
    // Ana, at home, waits at most a minute, then signs in; her success clears the delay.
    assert_eq!(wait_of(&sign_in(test_support::PASSWORD, "198.51.100.5").await), 60);
    w.env.clock.advance(SignedDuration::from_secs(60));
    assert_eq!(code(&sign_in(test_support::PASSWORD, "198.51.100.5").await), "ok");
    assert_eq!(code(&sign_in("guess", "203.0.113.99").await), "unauthenticated");
    // The first guesser is still locked out.
    assert_eq!(code(&sign_in(test_support::PASSWORD, "203.0.113.1").await), "rate_limited");
}

#[tokio::test]
async fn a_household_at_its_cap_is_told_so_and_nothing_changes() {
    let w = World::new().await;
    let count = |result: &serde_json::Value| result["total"].as_u64().unwrap() as u32;
    let ana_has = count(&w.env.call(&w.ana, "list_subscriptions", json!({})).await.unwrap());
    // Bob's private gym counts too: the cap is on what the household stores.
    let stored = ana_has + 1;
    w.env.app.set_household_caps(app::HouseholdCaps {
        subscriptions: stored,
        categories: 2,
        // The world has one budget and one rule.
        budgets: 1,
        rules: 1,
        ..Default::default()
    });
    let before = w.env.dump().await;
    let new = json!({"name": "Hulu", "amount": "7.99", "cycle": "monthly", "next_charge_on": "2026-12-03"});
    let refused = w.env.call(&w.ana, "create_subscription", new.clone()).await;
    let Err(OpError::Conflict { message }) = &refused else { panic!("{refused:?}") };
    let message = message.render();
    assert!(
        message.contains(&format!("has {stored} subscriptions"))
            && message.contains("max_subscriptions")
            && message.contains("Nothing was changed"),
        "{message}"
    );
    let category = w.env.call(&w.ana, "create_category", json!({"name": "Pets"})).await;
    assert_eq!(code(&category), "conflict", "{category:?}");
    for (op, input, key) in [
        (
            "create_budget",
            json!({"name": "B", "amount": "5", "period": "monthly", "catch_all": true}),
            "max_budgets",
        ),
        (
            "create_rule",
            json!({"name": "R", "payee_contains": "x", "set_category_id": w.music}),
            "max_rules",
        ),
    ] {
        let refused = w.env.call(&w.ana, op, input).await;
        let Err(OpError::Conflict { message }) = &refused else { panic!("{op}: {refused:?}") };
        assert!(message.render().contains(key), "{op}: {}", message.render());
    }
    assert_eq!(before, w.env.dump().await);
    // The other household is not at its cap.
    assert_eq!(code(&w.env.call(&w.cai, "create_subscription", new.clone()).await), "ok");
    // Deleting one makes room.
    w.env.call(&w.ana, "delete_subscription", json!({"id": w.spotify})).await.unwrap();
    assert_eq!(code(&w.env.call(&w.ana, "create_subscription", new).await), "ok");
}

#[tokio::test]
async fn the_activity_log_gives_ten_entries_newest_first_unless_asked_for_more() {
    let w = World::new().await;
    let renamed = json!({"id": w.netflix, "name": "Netflix HD"});
    w.env.call(&w.ana, "update_subscription", renamed).await.unwrap();
    let page = w.env.call(&w.ana, "list_activity", json!({})).await.unwrap();
    let ids = |page: &serde_json::Value| -> Vec<i64> {
        page["items"].as_array().unwrap().iter().map(|item| item["id"].as_i64().unwrap()).collect()
    };
    let first = ids(&page);
    let page_size = ops::limits::ACTIVITY_PAGE as usize;
    assert_eq!(first.len(), page_size, "{page}");
    // The latest change leads the page, which a small model reads as the answer.
    assert_eq!(page["items"][0]["summary"], "Updated Netflix HD");
    let total = page["total"].as_u64().unwrap() as usize;
    assert!(total > page_size, "the world has more than a page of changes: {total}");
    let cursor = page["next_cursor"].as_str().expect("a cursor to the next page");
    let next = w.env.call(&w.ana, "list_activity", json!({"cursor": cursor})).await.unwrap();
    let second = ids(&next);
    assert!(!second.is_empty() && second.iter().all(|id| !first.contains(id)), "{next}");
    // A limit still gives as many as asked for, from the same start.
    let more = w.env.call(&w.ana, "list_activity", json!({"limit": 100})).await.unwrap();
    let all = ids(&more);
    assert_eq!(all.len(), total.min(100));
    assert_eq!(all[..page_size], first[..]);
}

#[tokio::test]
async fn an_undo_naming_no_change_takes_the_latest_call_and_its_confirmation_keeps_to_it() {
    let w = World::new().await;
    let name = |caller: &Caller, id: i64| {
        let (env, caller) = (&w.env, caller.clone());
        async move {
            let got = env.call(&caller, "get_subscription", json!({"id": id})).await.unwrap();
            (got["name"].clone(), got["notes"].clone())
        }
    };
    // Ana's latest change before this test's: the world's last that she can see.
    let seen = w.env.call(&w.ana, "list_activity", json!({"limit": 1})).await.unwrap();
    let before_these = seen["items"][0]["id"].as_i64().unwrap();
    let renamed = w
        .env
        .call(&w.ana, "update_subscription", json!({"id": w.netflix, "name": "N"}))
        .await
        .unwrap();
    // Later changes Ana cannot see: Bob's private gym, and another household's.
    let bobs = json!({"id": w.bobs_gym, "notes": "Bob's own"});
    w.env.call(&w.bob, "update_subscription", bobs).await.unwrap();
    let theirs = json!({"id": w.other_household_sub, "notes": "Cai's own"});
    w.env.call(&w.cai, "update_subscription", theirs).await.unwrap();

    // An agent's "undo the last change" is proposed as the rename, for the person to confirm:
    // not the token it was given since, which only a person may undo.
    let (_, trusted) = w.env.token(&w.ana, "trusted").await;
    let asked = w.env.call(&trusted, "undo", json!({})).await;
    let Err(OpError::ConfirmationRequired { confirmation_id, preview, .. }) = asked else {
        panic!("{asked:?}")
    };
    assert_eq!(preview["reverted"], renamed["audit_ids"], "{preview}");
    assert_eq!(name(&w.ana, w.netflix).await.0, "N", "nothing is undone before the yes");
    // A change made while it waits is not what the yes undoes.
    let noted = json!({"id": w.spotify, "notes": "later"});
    w.env.call(&w.ana, "update_subscription", noted).await.unwrap();
    let undone = w
        .env
        .call(&trusted, "confirm_change", json!({"confirmation_id": confirmation_id}))
        .await
        .unwrap();
    assert_eq!(undone["reverted"], renamed["audit_ids"], "{undone}");
    assert_eq!(name(&w.ana, w.netflix).await.0, "Netflix");
    assert_eq!(name(&w.ana, w.spotify).await.1, "later");
    assert_eq!(name(&w.bob, w.bobs_gym).await.1, "Bob's own");
    assert_eq!(name(&w.cai, w.other_household_sub).await.1, "Cai's own");

    // Again, as in an editor: the change before, never the undo just made (which would redo).
    let again = crate::fixtures::confirmed(&w.env, &trusted, "undo", json!({})).await;
    assert_eq!(name(&w.ana, w.spotify).await.1, serde_json::Value::Null, "{again}");
    assert_eq!(name(&w.ana, w.netflix).await.0, "Netflix");
    let third = crate::fixtures::confirmed(&w.env, &trusted, "undo", json!({})).await;
    assert_eq!(third["reverted"], json!([before_these]), "Bob's private change is skipped");
    assert_eq!(name(&w.bob, w.bobs_gym).await.1, "Bob's own");
    assert_eq!(name(&w.cai, w.other_household_sub).await.1, "Cai's own");
    // A person's own "undo" may take the token (only a person may): it is the latest left.
    let token = w.env.call(&w.ana, "undo", json!({})).await.unwrap();
    let tokens = w.env.call(&w.ana, "list_activity", json!({"entity": "token"})).await.unwrap();
    assert_eq!(token["reverted"], json!([tokens["items"][1]["id"]]), "{tokens}");
}
