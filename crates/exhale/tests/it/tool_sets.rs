//! The compact and subscriptions tool sets, over MCP with rmcp's client: a token set to one
//! (or a client asking `/mcp?tools=compact`, or `exhale mcp --tools compact`) lists its tools
//! and `find_tools`; the rest stay callable by name and are found by words, never beyond what
//! the caller may call, and a tool found in a session joins its list (`tools/list_changed`).

use serde_json::{Value, json};
use test_support::TempDir;

use crate::{
    fixtures::World,
    mcp::{call, http_client, text},
};

fn names(tools: &[rmcp::model::Tool]) -> Vec<String> {
    let mut names: Vec<String> = tools.iter().map(|tool| tool.name.to_string()).collect();
    names.sort();
    names
}

/// The compact set the catalog declares, as a caller allowed to call all of it sees it.
fn compact_names() -> Vec<String> {
    let mut names: Vec<String> = ops::tools::COMPACT.iter().map(|name| name.to_string()).collect();
    names.push("find_tools".into());
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
        .filter(|name| ops::find(name).unwrap().info.hints.read_only)
        .collect();
    assert_eq!(names(&listed), reads);
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
    let dir = TempDir::new();
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
    let mut expected: Vec<String> = ops::tools::COMPACT
        .iter()
        .chain(ops::tools::SUBSCRIPTIONS)
        .map(|name| name.to_string())
        .chain(["find_tools".to_owned()])
        .collect();
    expected.sort();
    assert_eq!(listed, expected);
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
    for tool in &after {
        let op = ops::find(&tool.name).unwrap();
        assert!(op.info.hints.read_only, "a read token lists {}", tool.name);
        assert!(ops::policy::may_call(&reader, op.info), "{}", tool.name);
    }
    client.cancel().await.unwrap();
}
