//! The one policy, checked across the catalog: for every op and every kind of caller, what MCP
//! `tools/list` offers is exactly what the invoker accepts; and a change to a private item
//! reaches no other member through any adapter.

use std::collections::BTreeSet;

use ops::{Actor, Caller, Catalog as _, Mode, Scope, Via, entities::EntityKind};
use serde_json::json;

use crate::{
    fixtures::World,
    mcp::{Client, client_without_token, http_client, modern_http_client},
    web::{PASSWORD, Visitor, read_events},
};

/// The ops the invoker does not refuse as forbidden. Each is called as a dry run with an empty
/// input: the access check comes before the input is read, so a refusal is `forbidden` and
/// anything else (a result, `invalid_input`, `not_found`) means the call got through.
async fn accepted(w: &World, caller: &Caller) -> BTreeSet<&'static str> {
    let mut accepted = BTreeSet::new();
    for meta in ops::all() {
        let result = w.env.app.call_json(caller, meta.name(), json!({}), Mode::DryRun).await;
        if !matches!(result, Err(ops::OpError::Forbidden { .. })) {
            accepted.insert(meta.name());
        }
    }
    accepted
}

async fn offered(client: &Client) -> BTreeSet<String> {
    let tools = client.list_all_tools().await.unwrap();
    tools.into_iter().map(|tool| tool.name.to_string()).collect()
}

fn assert_same(offered: &BTreeSet<String>, accepted: &BTreeSet<&str>, who: &str) {
    let accepted: BTreeSet<String> = accepted.iter().map(|name| (*name).to_owned()).collect();
    assert_eq!(
        offered.symmetric_difference(&accepted).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "{who}: tools/list and the invoker disagree on these ops"
    );
}

#[tokio::test]
async fn tools_list_offers_exactly_what_the_invoker_accepts_for_every_kind_of_caller() {
    let w = World::new().await;
    // Agents make many calls here; the rate limit is not what this test is about.
    w.env.app.set_token_rate_limit(None);
    let server = w.env.serve().await;

    // Agents holding tokens of an owner and of a member, in every scope, over bearer auth.
    for (person, who) in [(&w.ana, "owner"), (&w.bob, "member")] {
        for scope in ["read", "write", "trusted"] {
            let (secret, caller) = w.env.token(person, scope).await;
            // Every tool listed: the full set.
            let client = http_client(server.url("/mcp?tools=full"), &secret, "Policy check").await;
            let everything = offered(&client).await;
            client.cancel().await.unwrap();
            let accepted = accepted(&w, &caller).await;
            assert_same(&everything, &accepted, &format!("{scope} token of an {who}"));
            // The token's own (smaller) set lists only what it may call, and call_tool.
            let client = http_client(server.url("/mcp"), &secret, "Policy check").await;
            let mut listed = offered(&client).await;
            client.cancel().await.unwrap();
            assert!(listed.remove("call_tool"), "{scope} token of an {who}: {listed:?}");
            assert!(listed.len() < everything.len(), "{listed:?}");
            assert!(listed.is_subset(&everything), "{scope} token of an {who}: {listed:?}");
            assert!(!accepted.contains("create_token"), "no agent mints its own token");
        }
    }

    // People and the built-in assistant, served as themselves.
    let assistant = |person: &Caller| Caller {
        scope: Scope::Trusted,
        actor: Actor::Assistant,
        via: Via::Assistant,
        ..person.clone()
    };
    for (caller, who) in [
        (w.ana.clone(), "owner in person"),
        (w.bob.clone(), "member in person"),
        (assistant(&w.ana), "the assistant for an owner"),
        (assistant(&w.bob), "the assistant for a member"),
    ] {
        let as_caller = w.env.serve_mcp_as(caller.clone()).await;
        let client = client_without_token(as_caller.url("/mcp"), "Policy check").await;
        let offered = offered(&client).await;
        client.cancel().await.unwrap();
        let accepted = accepted(&w, &caller).await;
        assert_same(&offered, &accepted, who);
        if caller.actor == Actor::Assistant {
            for never in ["confirm_change", "export_data", "create_token", "invite_member"] {
                assert!(!accepted.contains(never), "{who} may not call {never}");
            }
        }
    }
}

#[tokio::test]
async fn a_change_to_a_private_item_reaches_only_its_owner_through_every_adapter() {
    use rmcp::model::{ServerNotification, SubscriptionFilter};
    let w = World::new().await;
    let server = w.env.serve().await;
    let gym = format!("exhale://subscriptions/{}", w.bobs_gym);
    let netflix = format!("exhale://subscriptions/{}", w.netflix);

    // Ana listens through the catalog's feed, an MCP agent watching both subscriptions, and
    // the web app's live stream.
    let (token, _) = w.env.token(&w.ana, "read").await;
    let mut feed = w.env.app.subscribe(&w.ana);
    let agent = modern_http_client(server.url("/mcp"), &token, "Ana's agent").await;
    let filter = SubscriptionFilter::builder()
        .resource_subscription(gym.clone())
        .resource_subscription(netflix.clone())
        .build();
    let mut listening = agent.listen(filter).await.unwrap();
    let mut browser = Visitor::new(&server);
    browser.sign_in("ana@a.test", PASSWORD).await;
    let mut stream = browser.events("/events").await;
    assert_eq!(read_events(&mut stream, 1).await[0].0, "ready");

    // Bob pauses his private gym and another household changes its own; then Ana renames
    // Netflix. Events arrive in order, so the first Ana hears anywhere must be her own.
    w.env.call(&w.bob, "pause_subscription", json!({"id": w.bobs_gym})).await.unwrap();
    w.env
        .call(&w.cai, "update_subscription", json!({"id": w.other_household_sub, "notes": "x"}))
        .await
        .unwrap();
    w.env
        .call(&w.ana, "update_subscription", json!({"id": w.netflix, "name": "Netflix HD"}))
        .await
        .unwrap();

    let Some(ops::Heard::Change(first)) = feed.try_next() else { panic!("the feed heard nothing") };
    assert_eq!((first.entity, first.entity_id), (EntityKind::Subscription, w.netflix), "the feed");
    assert_eq!(feed.try_next(), None);
    let notification = listening.next().await.unwrap().unwrap();
    let ServerNotification::ResourceUpdatedNotification(updated) = notification else {
        panic!("{notification:?}")
    };
    assert_eq!(updated.params.uri, netflix, "MCP subscriptions/listen");
    let events = read_events(&mut stream, 1).await;
    assert!(events[0].1.contains("update_subscription"), "the web's live stream: {events:?}");
    agent.cancel().await.unwrap();
}
