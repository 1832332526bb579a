//! The compact and subscriptions tool sets, over MCP with rmcp's client: a token set to one
//! (or a client asking `/mcp?tools=compact`, or `exhale mcp --tools compact`) lists its tools
//! and `find_tools`; the rest stay callable by name and are found by words, never beyond what
//! the caller may call, and a tool found in a session joins its list (`tools/list_changed`) or,
//! for a client that does not follow a changed list, is called through `call_tool`.

use serde_json::{Value, json};

use crate::{
    fixtures::World,
    mcp::{call, http_client, text},
};

fn names(tools: &[rmcp::model::Tool]) -> Vec<String> {
    let mut names: Vec<String> = tools.iter().map(|tool| tool.name.to_string()).collect();
    names.sort();
    names
}

/// The compact set the catalog declares, as a caller allowed to call all of it sees it, with
/// `call_tool` for the rest.
fn compact_names() -> Vec<String> {
    let mut names: Vec<String> = ops::tools::COMPACT.iter().map(|name| name.to_string()).collect();
    names.extend(["find_tools".into(), "call_tool".into()]);
    names.sort();
    names
}

/// The subscriptions set with `call_tool`, for a household that keeps accounts the caller sees
/// or not (then the ledger's everyday reads and writes take the place of reads other tools
/// answer and rarer writes), and payment methods or not (then changing them is left out).
fn subscriptions_names(accounts: bool, payment_methods: bool) -> Vec<String> {
    use ops::tools::{
        LEDGER_READS, LEDGER_WRITES, LEFT_FOR_LEDGER, LEFT_FOR_LEDGER_WRITES,
        PAYMENT_METHOD_CHANGES,
    };
    let mut names: Vec<String> = ops::tools::COMPACT
        .iter()
        .chain(ops::tools::SUBSCRIPTIONS)
        .filter(|name| payment_methods || !PAYMENT_METHOD_CHANGES.contains(name))
        .filter(|name| {
            !accounts || !(LEFT_FOR_LEDGER.contains(name) || LEFT_FOR_LEDGER_WRITES.contains(name))
        })
        .chain(LEDGER_READS.iter().chain(LEDGER_WRITES).filter(|_| accounts))
        .map(|name| name.to_string())
        .chain(["find_tools".to_owned(), "call_tool".to_owned()])
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn a_compact_token_lists_the_most_used_tools_and_finds_the_rest() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let created = w
        .env
        .call(&w.ana, "create_token", json!({"name": "Qwen", "scope": "write", "tools": "compact"}))
        .await
        .unwrap();
    assert_eq!(created["tools"], "compact");
    let secret = created["secret"].as_str().unwrap();
    let client = http_client(server.url("/mcp"), secret, "llama.cpp").await;
    let listed = client.list_all_tools().await.unwrap();
    assert_eq!(names(&listed), compact_names());
    // A tool left out of the list is still there by name.
    let categories = call(&client, "list_categories", json!({})).await;
    assert_eq!(categories.is_error, Some(false), "{}", text(&categories));
    // find_tools returns what to call next, with its input schema.
    let found = call(&client, "find_tools", json!({"query": "merge two categories"})).await;
    assert_eq!(found.is_error, Some(false), "{}", text(&found));
    let found = found.structured_content.unwrap();
    let first = &found["tools"][0];
    assert_eq!(first["name"], "merge_categories", "{found}");
    assert!(first["input_schema"]["properties"]["source_ids"].is_object(), "{first}");
    assert_eq!(first["read_only"], false);
    let spanish = call(&client, "find_tools", json!({"query": "fusionar categorías"})).await;
    assert_eq!(spanish.structured_content.unwrap()["tools"][0]["name"], "merge_categories");
    let nothing = call(&client, "find_tools", json!({"query": "   "})).await;
    assert_eq!(nothing.is_error, Some(true), "an empty query is refused: {}", text(&nothing));
    client.cancel().await.unwrap();
    // The client's own hint wins over the token's setting.
    let everything = http_client(server.url("/mcp?tools=full"), secret, "llama.cpp").await;
    let all = everything.list_all_tools().await.unwrap();
    assert!(all.len() > listed.len() + 20, "{} tools", all.len());
    everything.cancel().await.unwrap();
}

#[tokio::test]
async fn a_read_token_asking_for_compact_tools_sees_and_finds_only_reads() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let (secret, reader) = w.env.token(&w.ana, "read").await;
    let client = http_client(server.url("/mcp?tools=compact"), &secret, "llama.cpp").await;
    let listed = client.list_all_tools().await.unwrap();
    let reads: Vec<String> = compact_names()
        .into_iter()
        .filter(|name| name == "call_tool" || ops::find(name).unwrap().info.hints.read_only)
        .collect();
    assert_eq!(names(&listed), reads);
    // The instructions' "which tool" names only tools this client lists: the compact set has
    // no ledger reads, though the household keeps accounts.
    let instructions = client.peer_info().unwrap().instructions.clone().unwrap();
    assert!(instructions.contains(" Which tool: "), "{instructions}");
    for route in instructions.split(" Which tool: ").nth(1).unwrap().split("; ") {
        let how = route.rsplit(": ").next().unwrap();
        let tool = how.split([' ', '.']).next().unwrap();
        assert!(reads.iter().any(|read| read == tool), "{tool} is not listed: {instructions}");
    }
    assert!(!instructions.contains("list_accounts"), "{instructions}");
    for query in ["delete a subscription", "create a token", "cancel", "undo a change"] {
        let found = call(&client, "find_tools", json!({"query": query})).await;
        let found = found.structured_content.unwrap();
        for tool in found["tools"].as_array().unwrap() {
            assert_eq!(tool["read_only"], true, "{query}: {tool}");
            let op = ops::find(tool["name"].as_str().unwrap()).unwrap();
            assert!(ops::policy::may_call(&reader, op.info), "{query}: {tool}");
        }
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn stdio_lists_the_compact_set_when_asked() {
    let dir = test_support::DataDir::new();
    let token = crate::cli::owner_with_token(&dir, "write");
    let info = rmcp::model::ClientConfig::new(
        rmcp::model::ClientCapabilities::default(),
        rmcp::model::Implementation::new("LM Studio", "1.0"),
    );
    let client = crate::mcp::stdio_client(&dir, &token, &["--tools", "compact"], info).await;
    let listed = client.list_all_tools().await.unwrap();
    assert_eq!(names(&listed), compact_names());
    let found = call(&client, "find_tools", json!({"query": "payment methods", "limit": 2})).await;
    let found: Value = found.structured_content.unwrap();
    assert_eq!(found["tools"].as_array().unwrap().len(), 2, "{found}");
    client.cancel().await.unwrap();
}

/// A client that says when the server's tool list changed.
struct ListWatcher(tokio::sync::mpsc::UnboundedSender<()>);

impl rmcp::ClientHandler for ListWatcher {
    async fn on_tool_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        let _ = self.0.send(());
    }
}

/// A session whose tool list changes are sent to the returned receiver.
async fn watching_client(
    url: String,
    token: &str,
) -> (
    rmcp::service::RunningService<rmcp::RoleClient, ListWatcher>,
    tokio::sync::mpsc::UnboundedReceiver<()>,
) {
    use rmcp::ServiceExt;
    let (sender, changes) = tokio::sync::mpsc::unbounded_channel();
    let transport = crate::mcp::http_transport(url, token);
    (ListWatcher(sender).serve(transport).await.unwrap(), changes)
}

/// Waits for the next `tools/list_changed`; a minute without one fails the test.
async fn next_change(changes: &mut tokio::sync::mpsc::UnboundedReceiver<()>) {
    match tokio::time::timeout(std::time::Duration::from_secs(60), changes.recv()).await {
        Ok(Some(())) => {}
        Ok(None) => panic!("the client stopped"),
        Err(_) => panic!("no tools/list_changed within a minute"),
    }
}

#[tokio::test]
async fn a_subscriptions_token_lists_half_the_catalog_and_a_tool_found_joins_its_list() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let created = w
        .env
        .call(
            &w.ana,
            "create_token",
            json!({"name": "Cursor", "scope": "write", "tools": "subscriptions"}),
        )
        .await
        .unwrap();
    assert_eq!(created["tools"], "subscriptions");
    let secret = created["secret"].as_str().unwrap();
    let (client, mut changes) = watching_client(server.url("/mcp"), secret).await;
    assert!(
        client.peer_info().unwrap().capabilities.tools.as_ref().unwrap().list_changed == Some(true),
        "the server says its tool list may change"
    );
    let listed = names(&client.list_all_tools().await.unwrap());
    // Ana's household keeps accounts and cards.
    assert_eq!(listed, subscriptions_names(true, true));
    assert!(!listed.contains(&"create_account".to_owned()));

    // The ledger is found by words; what was found is listed from then on, and the client is
    // told, so its model may call it.
    let found = call(&client, "find_tools", json!({"query": "open a bank account"})).await;
    let found: Vec<String> = found.structured_content.unwrap()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(found.contains(&"create_account".to_owned()), "{found:?}");
    next_change(&mut changes).await;
    let now = names(&client.list_all_tools().await.unwrap());
    let mut grown = listed.clone();
    grown.extend(found.iter().filter(|name| !listed.contains(name)).cloned());
    grown.sort();
    grown.dedup();
    assert_eq!(now, grown);
    let account = call(
        &client,
        "create_account",
        json!({"name": "Joint", "kind": "checking", "currency": "EUR", "dry_run": true}),
    )
    .await;
    assert_eq!(account.is_error, Some(false), "{}", text(&account));
    client.cancel().await.unwrap();

    // Another session starts from the token's set again.
    let (fresh, _) = watching_client(server.url("/mcp"), secret).await;
    assert_eq!(names(&fresh.list_all_tools().await.unwrap()), listed);
    fresh.cancel().await.unwrap();
    // A stateless 2026 client has no session for a found tool to join: no change is promised.
    let modern = crate::mcp::modern_http_client(server.url("/mcp"), secret, "Modern").await;
    let tools = modern.peer_info().unwrap().capabilities.tools.clone().unwrap();
    assert_eq!(tools.list_changed, None);
    modern.cancel().await.unwrap();
}

#[tokio::test]
async fn a_read_token_finds_and_lists_only_reads_beyond_its_set() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let (secret, reader) = w.env.token(&w.ana, "read").await;
    let (client, mut changes) =
        watching_client(server.url("/mcp?tools=subscriptions"), &secret).await;
    let before = names(&client.list_all_tools().await.unwrap());
    let found = call(&client, "find_tools", json!({"query": "accounts and transactions"})).await;
    assert_eq!(found.is_error, Some(false), "{}", text(&found));
    next_change(&mut changes).await;
    let after = client.list_all_tools().await.unwrap();
    assert!(after.len() > before.len(), "{before:?}");
    for tool in after.iter().filter(|tool| tool.name != "call_tool") {
        let op = ops::find(&tool.name).unwrap();
        assert!(op.info.hints.read_only, "a read token lists {}", tool.name);
        assert!(ops::policy::may_call(&reader, op.info), "{}", tool.name);
    }
    client.cancel().await.unwrap();
}

/// The names a `find_tools` result returns.
fn found_names(result: &rmcp::model::CallToolResult) -> Vec<String> {
    let Some(found) = &result.structured_content else { panic!("{}", text(result)) };
    found["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(|tool| tool["name"].as_str()).map(str::to_owned))
        .map(Iterator::collect)
        .unwrap_or_default()
}

#[tokio::test]
async fn a_new_token_lists_the_subscriptions_set_and_calls_the_rest_through_call_tool() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let created = w
        .env
        .call(&w.ana, "create_token", json!({"name": "Claude", "scope": "write"}))
        .await
        .unwrap();
    assert_eq!(created["tools"], ops::ToolSet::DEFAULT.as_str());
    assert_eq!(created["tools"], "subscriptions");
    let secret = created["secret"].as_str().unwrap();
    // A stateless 2026 client: its list never grows, so what it finds it calls through
    // call_tool, as a client that ignores tools/list_changed does.
    let client = crate::mcp::modern_http_client(server.url("/mcp"), secret, "Claude").await;
    let listed = client.list_all_tools().await.unwrap();
    let names = names(&listed);
    assert!(names.contains(&"call_tool".to_owned()) && names.contains(&"find_tools".to_owned()));
    assert!(!names.contains(&"delete_account".to_owned()), "{names:?}");
    let Some(call_tool) = listed.iter().find(|tool| tool.name == "call_tool") else {
        panic!("no call_tool in {names:?}")
    };
    let hints = call_tool.annotations.clone().unwrap_or_default();
    assert_eq!(
        (hints.read_only_hint, hints.destructive_hint, hints.open_world_hint),
        (Some(false), Some(true), Some(false)),
        "a write token's call_tool may reach a destructive write"
    );

    let found = call(&client, "find_tools", json!({"query": "delete an account"})).await;
    assert!(found_names(&found).contains(&"delete_account".to_owned()), "{}", text(&found));
    // A found write through call_tool: the same preview, confirmation and audit as if listed.
    let through = |name: &str, arguments: Value| json!({"name": name, "arguments": arguments});
    let preview = call(
        &client,
        "call_tool",
        through("delete_account", json!({"id": w.wallet, "dry_run": true})),
    )
    .await;
    assert_eq!(preview.is_error, Some(false), "{}", text(&preview));
    assert_eq!(preview.structured_content.unwrap()["dry_run"], true);
    let asked =
        call(&client, "call_tool", through("delete_account", json!({"id": w.wallet}))).await;
    assert!(text(&asked).starts_with("confirmation_required"), "{}", text(&asked));
    let confirmation = crate::mcp::confirmation_id(&asked);
    let accounts = w.env.call(&w.ana, "list_accounts", json!({})).await.unwrap();
    let wallet_listed = |accounts: &Value| {
        accounts["items"].as_array().unwrap().iter().any(|account| account["id"] == w.wallet)
    };
    assert!(wallet_listed(&accounts), "nothing changed before the confirmation");
    // (Without views, confirm_change goes through call_tool too.)
    let confirmed = call(
        &client,
        "call_tool",
        through("confirm_change", json!({"confirmation_id": confirmation})),
    )
    .await;
    assert_eq!(confirmed.is_error, Some(false), "{}", text(&confirmed));
    let accounts = w.env.call(&w.ana, "list_accounts", json!({})).await.unwrap();
    assert!(!wallet_listed(&accounts), "{accounts}");
    let activity = w.env.call(&w.ana, "list_activity", json!({})).await.unwrap();
    assert_eq!(activity["items"][0]["op"], "delete_account", "the audit names the op: {activity}");

    // Cross-household and private items stay out of reach through call_tool too.
    for id in [w.other_household_sub, w.bobs_gym] {
        let hidden =
            call(&client, "call_tool", through("get_subscription", json!({"id": id}))).await;
        assert_eq!(hidden.is_error, Some(true), "{}", text(&hidden));
        assert!(text(&hidden).starts_with("not_found"), "{}", text(&hidden));
    }
    // Bad input: what to call next, and nothing lost.
    let unknown = call(&client, "call_tool", through("open_vault", json!({}))).await;
    assert_eq!(unknown.is_error, Some(true));
    assert!(text(&unknown).contains("find_tools"), "{}", text(&unknown));
    let itself = call(&client, "call_tool", through("call_tool", json!({}))).await;
    assert_eq!(itself.is_error, Some(true), "{}", text(&itself));
    let nameless = call(&client, "call_tool", json!({"arguments": {}})).await;
    assert_eq!(nameless.is_error, Some(true));
    assert!(text(&nameless).contains("name"), "{}", text(&nameless));
    let not_an_object =
        call(&client, "call_tool", json!({"name": "list_accounts", "arguments": 7})).await;
    assert_eq!(not_an_object.is_error, Some(true), "{}", text(&not_an_object));
    let wrong_field = call(
        &client,
        "call_tool",
        through("create_account", json!({"name": "Joint 2", "colour": 1})),
    )
    .await;
    assert_eq!(wrong_field.is_error, Some(true));
    let wrong_field = text(&wrong_field);
    assert!(wrong_field.contains("colour") && wrong_field.contains("/arguments"), "{wrong_field}");
    client.cancel().await.unwrap();

    // The same over a 2025 session.
    let session = http_client(server.url("/mcp"), secret, "Claude Desktop").await;
    let made = call(
        &session,
        "call_tool",
        through("create_account", json!({"name": "Savings", "kind": "savings", "currency": "EUR"})),
    )
    .await;
    assert_eq!(made.is_error, Some(false), "{}", text(&made));
    assert_eq!(made.structured_content.unwrap()["name"], "Savings");
    session.cancel().await.unwrap();
}

#[tokio::test]
async fn a_read_token_s_call_tool_reads_and_never_writes() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let (secret, _) = w.env.token(&w.ana, "read").await;
    let client = http_client(server.url("/mcp"), &secret, "Reader").await;
    let listed = client.list_all_tools().await.unwrap();
    let Some(call_tool) = listed.iter().find(|tool| tool.name == "call_tool") else {
        panic!("no call_tool in {:?}", names(&listed))
    };
    let hints = call_tool.annotations.clone().unwrap_or_default();
    assert_eq!((hints.read_only_hint, hints.destructive_hint), (Some(true), Some(false)));
    let read = call(&client, "call_tool", json!({"name": "list_accounts"})).await;
    assert_eq!(read.is_error, Some(false), "{}", text(&read));
    let before = w.env.dump().await;
    let refused = call(
        &client,
        "call_tool",
        json!({"name": "create_account", "arguments": {"name": "X", "kind": "cash", "currency": "EUR"}}),
    )
    .await;
    assert_eq!(refused.is_error, Some(true));
    assert!(text(&refused).starts_with("forbidden"), "{}", text(&refused));
    assert_eq!(w.env.dump().await, before, "nothing written");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn in_a_host_with_views_call_tool_shows_the_card_and_cannot_confirm() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let (secret, _) = w.env.token(&w.ana, "write").await;
    let host = crate::mcp_apps::host_with_views(server.url("/mcp"), &secret).await;
    let listed = host.list_all_tools().await.unwrap();
    let Some(call_tool) = listed.iter().find(|tool| tool.name == "call_tool") else {
        panic!("no call_tool in {:?}", names(&listed))
    };
    let meta = serde_json::to_value(&call_tool.meta).unwrap();
    assert_eq!(meta["ui"]["resourceUri"], "ui://exhale/confirmation-card", "{meta}");
    let asked =
        call(&host, "call_tool", json!({"name": "delete_account", "arguments": {"id": w.wallet}}))
            .await;
    let card = serde_json::to_value(&asked.meta).unwrap();
    let waiting = &card["exhale/confirmation"];
    let Some(confirmation) = waiting["confirmation_id"].as_str() else {
        panic!("no card: {}", text(&asked))
    };
    assert!(!text(&asked).contains(confirmation), "the id is never in the model's text");
    // The model cannot press the card's button through call_tool.
    let pressed = call(
        &host,
        "call_tool",
        json!({"name": "confirm_change", "arguments": {"confirmation_id": confirmation}}),
    )
    .await;
    assert_eq!(pressed.is_error, Some(true));
    assert!(text(&pressed).contains("card"), "{}", text(&pressed));
    let accounts = w.env.call(&w.ana, "list_accounts", json!({})).await.unwrap();
    assert!(
        accounts["items"].as_array().unwrap().iter().any(|account| account["id"] == w.wallet),
        "still there: {accounts}"
    );
    host.cancel().await.unwrap();
    // A read token's call_tool reaches no write: no card.
    let (reader, _) = w.env.token(&w.ana, "read").await;
    let host = crate::mcp_apps::host_with_views(server.url("/mcp"), &reader).await;
    let listed = host.list_all_tools().await.unwrap();
    let call_tool = listed.iter().find(|tool| tool.name == "call_tool");
    assert!(call_tool.is_some_and(|tool| tool.meta.is_none()), "{call_tool:?}");
    host.cancel().await.unwrap();
}

#[tokio::test]
async fn a_token_s_tools_change_at_its_client_s_next_list_and_a_revoked_one_s_do_not() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let (secret, _) = w.env.token(&w.ana, "write").await;
    let tokens = w.env.call(&w.ana, "list_tokens", json!({})).await.unwrap();
    let id = tokens["items"][0]["id"].as_i64().unwrap();
    assert_eq!(tokens["items"][0]["tools"], "subscriptions");
    let client = http_client(server.url("/mcp"), &secret, "Cursor").await;
    let before = names(&client.list_all_tools().await.unwrap());
    let changed =
        w.env.call(&w.ana, "set_token_tools", json!({"id": id, "tools": "compact"})).await.unwrap();
    assert_eq!(changed["tools"], "compact", "{changed}");
    assert_eq!(names(&client.list_all_tools().await.unwrap()), compact_names());
    // The same set again changes nothing and records nothing.
    let activity = w.env.call(&w.ana, "list_activity", json!({})).await.unwrap();
    w.env.call(&w.ana, "set_token_tools", json!({"id": id, "tools": "compact"})).await.unwrap();
    assert_eq!(w.env.call(&w.ana, "list_activity", json!({})).await.unwrap(), activity);
    w.env
        .call(&w.ana, "undo", json!({"batch_id": activity["items"][0]["batch_id"]}))
        .await
        .unwrap();
    assert_eq!(names(&client.list_all_tools().await.unwrap()), before);
    client.cancel().await.unwrap();

    w.env.call(&w.ana, "revoke_token", json!({"id": id})).await.unwrap();
    let revoked = w.env.call(&w.ana, "set_token_tools", json!({"id": id, "tools": "full"})).await;
    assert!(matches!(revoked, Err(ops::OpError::Conflict { .. })), "{revoked:?}");
    let unknown = w.env.call(&w.ana, "set_token_tools", json!({"id": 9999, "tools": "full"})).await;
    let Err(err) = unknown else { panic!("{unknown:?}") };
    assert!(err.text().render().contains("list_tokens"), "{err:?}");
}

#[tokio::test]
async fn the_default_set_follows_the_accounts_and_cards_the_caller_sees() {
    let env = test_support::TestEnv::new();
    let ana = env.household("Flat", "ana@flat.test").await;
    let bob = env.member(&ana, "Bob", "bob@flat.test").await;
    let server = env.serve().await;
    let (ana_secret, _) = env.token(&ana, "write").await;
    let (bob_secret, _) = env.token(&bob, "read").await;
    // Every way a client lists: a session on the 2025 wire, and stateless on the 2026 one.
    let lists = |secret: String| {
        let url = server.url("/mcp");
        async move {
            let session = http_client(url.clone(), &secret, "Claude").await;
            let in_session = names(&session.list_all_tools().await.unwrap());
            session.cancel().await.unwrap();
            let modern = crate::mcp::modern_http_client(url, &secret, "Claude").await;
            let stateless = names(&modern.list_all_tools().await.unwrap());
            modern.cancel().await.unwrap();
            assert_eq!(in_session, stateless);
            in_session
        }
    };
    let plain = subscriptions_names(false, false);
    assert_eq!(lists(ana_secret.clone()).await, plain, "no accounts or cards yet");

    // Bob's private account is his: his list changes, Ana's does not.
    env.call(
        &bob,
        "create_account",
        json!({"name": "Bob's savings", "kind": "savings", "visibility": "private"}),
    )
    .await
    .unwrap();
    assert_eq!(lists(ana_secret.clone()).await, plain, "she sees no account");
    let bobs = lists(bob_secret).await;
    for name in ops::tools::LEDGER_READS {
        assert!(bobs.contains(&name.to_string()), "{name}: {bobs:?}");
    }
    assert!(!bobs.contains(&"create_account".to_owned()), "a read token lists no write");
    assert!(!bobs.contains(&"create_transaction".to_owned()), "a read token lists no write");

    // A shared account: Ana's next list has the ledger's reads and writes, within the set's
    // budget; a card of Bob's own is not hers to change, a shared one is.
    env.call(&ana, "create_account", json!({"name": "Joint", "kind": "checking"})).await.unwrap();
    assert_eq!(lists(ana_secret.clone()).await, subscriptions_names(true, false));
    env.call(&bob, "create_payment_method", json!({"name": "Bob's Visa", "visibility": "private"}))
        .await
        .unwrap();
    assert_eq!(lists(ana_secret.clone()).await, subscriptions_names(true, false), "Bob's card");
    env.call(&ana, "create_payment_method", json!({"name": "Shared Visa"})).await.unwrap();
    assert_eq!(lists(ana_secret.clone()).await, subscriptions_names(true, true));
    // A set the token or client chose stays as it was.
    let compact = http_client(server.url("/mcp?tools=compact"), &ana_secret, "llama.cpp").await;
    assert_eq!(names(&compact.list_all_tools().await.unwrap()), compact_names());
    compact.cancel().await.unwrap();
}
