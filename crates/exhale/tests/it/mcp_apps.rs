//! MCP Apps through rmcp's client declaring `io.modelcontextprotocol/ui`: the card on every
//! write, `confirm_change` for views only, a confirmation id only a view receives, and a
//! confirmation that applies once, for its own token, before it expires.

use rmcp::{
    ServiceExt,
    model::{ClientCapabilities, ClientConfig, Implementation, ReadResourceRequestParams},
};
use serde_json::{Value, json};

use crate::{
    fixtures::World,
    mcp::{Client, call, http_client, text},
};

const CARD: &str = "ui://exhale/confirmation-card";

/// What a host that renders views declares in `initialize`.
fn renders_views() -> ClientConfig {
    let capabilities: ClientCapabilities = serde_json::from_value(json!({
        "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
    }))
    .unwrap();
    ClientConfig::new(capabilities, Implementation::new("a host with views", "1.0"))
}

/// A 2025-11-25 host that renders views, over HTTP.
pub(crate) async fn host_with_views(url: String, token: &str) -> Client {
    renders_views().serve(crate::mcp::http_transport(url, token)).await.unwrap()
}

async fn tools(client: &Client) -> Vec<Value> {
    let listed = client.list_all_tools().await.unwrap();
    listed.into_iter().map(|tool| serde_json::to_value(tool).unwrap()).collect()
}

/// The tools a host hands its model: every one whose visibility includes the model.
fn model_visible(tools: &[Value]) -> Vec<String> {
    tools
        .iter()
        .filter(|tool| {
            tool["_meta"]["ui"]["visibility"]
                .as_array()
                .is_none_or(|seen_by| seen_by.iter().any(|who| who == "model"))
        })
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The database as a dump, less the offers waiting for a press (each ask stores one).
async fn records(w: &World) -> String {
    let dump = w.env.dump().await;
    let mut kept = Vec::new();
    let mut in_offers = false;
    for line in dump.lines() {
        if line.starts_with("## ") {
            in_offers = line == "## confirmations";
        }
        if !in_offers {
            kept.push(line);
        }
    }
    kept.join("\n")
}

fn waiting(result: &rmcp::model::CallToolResult) -> Value {
    let meta = serde_json::to_value(&result.meta).unwrap();
    meta["exhale/confirmation"].clone()
}

#[tokio::test]
async fn a_host_with_views_shows_the_card_and_only_the_card_confirms() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let (write, _) = w.env.token(&w.ana, "write").await;
    let url = server.url("/mcp");

    // A client without the extension sees today's tools, confirm_change among them.
    let plain = http_client(url.clone(), &write, "no views").await;
    let plain_tools = tools(&plain).await;
    assert!(plain_tools.iter().all(|tool| tool.get("_meta").is_none()), "no view is named");
    assert!(model_visible(&plain_tools).contains(&"confirm_change".to_owned()));

    // A host with views: every write names the card, and confirm_change is for views only.
    let host = host_with_views(url.clone(), &write).await;
    let listed = tools(&host).await;
    let app_only: Vec<&str> = listed
        .iter()
        .filter(|tool| tool["_meta"]["ui"]["visibility"] == json!(["app"]))
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(app_only, ["confirm_change"]);
    assert!(!model_visible(&listed).contains(&"confirm_change".to_owned()));
    for tool in &listed {
        let writes = tool["annotations"]["readOnlyHint"] == false;
        // A write may answer with the card's data instead of its output: it states no output
        // schema to such a host (clients check structured content against it).
        assert_eq!(tool.get("outputSchema").is_none(), writes, "{}", tool["name"]);
        let names_card = tool["_meta"]["ui"]["resourceUri"] == CARD;
        assert_eq!(
            writes && tool["name"] != "confirm_change",
            names_card,
            "{}: the card goes with every write",
            tool["name"]
        );
    }

    // The card: one HTML document that denies all network.
    let read = host.read_resource(ReadResourceRequestParams::new(CARD)).await.unwrap();
    let contents = serde_json::to_value(&read.contents[0]).unwrap();
    assert_eq!(contents["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(contents["_meta"]["ui"]["csp"]["connectDomains"], json!([]));
    let html = contents["text"].as_str().unwrap();
    assert!(html.contains("content=\"default-src 'none';"), "{html}");

    // The model's delete waits for the person: the model reads what it changes, not the id.
    let (other, _) = w.env.token(&w.ana, "write").await;
    let before = records(&w).await;
    let asked = call(&host, "delete_subscription", json!({"id": w.netflix})).await;
    let said = text(&asked);
    assert_eq!(asked.is_error, Some(true));
    assert!(said.starts_with("confirmation_required: ") && said.contains("Netflix"), "{said}");
    assert!(!said.contains("cf_"), "the model never reads the confirmation id: {said}");
    let card = waiting(&asked);
    let id = card["confirmation_id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("cf_"), "{card}");
    // The same for hosts that hand views only the structured content.
    let structured = asked.structured_content.clone().unwrap();
    assert_eq!(structured["confirmation"], card);
    assert!(card["changes"][0]["summary"].as_str().unwrap().contains("Netflix"), "{card}");
    assert!(before == records(&w).await, "nothing changed before the press");

    // Another token, even the same person's, cannot apply it.
    let stranger = host_with_views(url.clone(), &other).await;
    let replayed = call(&stranger, "confirm_change", json!({"confirmation_id": id})).await;
    assert_eq!(replayed.is_error, Some(true), "{}", text(&replayed));
    assert!(before == records(&w).await, "a replay from another token applied nothing");

    // The card's press (a tools/call the view sends through its host) applies it once.
    let pressed = call(&host, "confirm_change", json!({"confirmation_id": id})).await;
    assert_ne!(pressed.is_error, Some(true), "{}", text(&pressed));
    let done = pressed.structured_content.clone().unwrap();
    assert!(done["batch_id"].is_string(), "the card offers Undo with it: {done}");
    let gone = w.env.call(&w.ana, "get_subscription", json!({"id": w.netflix})).await;
    assert!(gone.is_err(), "deleted");
    let after = records(&w).await;
    let again = call(&host, "confirm_change", json!({"confirmation_id": id})).await;
    assert_eq!(again.is_error, Some(true), "{}", text(&again));
    assert!(after == records(&w).await, "a second press applied nothing");

    // A press after the offer ended applies nothing.
    let asked = call(&host, "delete_subscription", json!({"id": w.spotify})).await;
    let late = waiting(&asked)["confirmation_id"].as_str().unwrap().to_owned();
    w.env.clock.advance(jiff::SignedDuration::from_mins(11));
    let expired = call(&host, "confirm_change", json!({"confirmation_id": late})).await;
    assert_eq!(expired.is_error, Some(true), "{}", text(&expired));
    // (The clock moved: a token's last use is recorded again, so the records are compared by
    // what the press would have changed.)
    let spotify = w.env.call(&w.ana, "get_subscription", json!({"id": w.spotify})).await;
    assert!(spotify.is_ok(), "a late press applied nothing");
    let activity = w.env.call(&w.ana, "list_activity", json!({"limit": 1})).await.unwrap();
    assert!(activity["items"][0]["summary"].as_str().unwrap().contains("Netflix"), "{activity}");

    // Undo from the card: an agent's undo waits for the person too, and the card confirms it.
    let undone = call(&host, "undo", json!({"batch_id": done["batch_id"]})).await;
    let undo_id = waiting(&undone)["confirmation_id"].as_str().unwrap().to_owned();
    let confirmed = call(&host, "confirm_change", json!({"confirmation_id": undo_id})).await;
    assert_ne!(confirmed.is_error, Some(true), "{}", text(&confirmed));
    let back = w.env.call(&w.ana, "get_subscription", json!({"id": w.netflix})).await.unwrap();
    assert_eq!(back["name"], "Netflix");
}

#[tokio::test]
async fn a_write_called_by_a_name_not_listed_points_at_the_card_never_at_the_id() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let (write, _) = w.env.token(&w.ana, "write").await;
    let host = host_with_views(server.url("/mcp"), &write).await;
    let listed = tools(&host).await;
    assert!(!listed.iter().any(|tool| tool["name"] == "delete_account"), "not in the default set");
    let before = records(&w).await;

    // Called by its name, which find_tools gives: the host would show no card for a tool it
    // was not listed, so the model is told how to show one, and given no id to confirm with.
    let asked = call(&host, "delete_account", json!({"id": w.wallet})).await;
    assert_eq!(asked.is_error, Some(true));
    let said = text(&asked);
    assert!(!said.contains("cf_") && !said.contains("confirm_change"), "{said}");
    assert!(said.contains("call_tool with name delete_account"), "{said}");
    assert!(waiting(&asked).is_null(), "no card data either");

    // As told: through call_tool the card shows, with the id for the view only.
    let shown =
        call(&host, "call_tool", json!({"name": "delete_account", "arguments": {"id": w.wallet}}))
            .await;
    assert!(!text(&shown).contains("cf_"), "{}", text(&shown));
    assert!(waiting(&shown)["confirmation_id"].as_str().unwrap().starts_with("cf_"));
    assert!(before == records(&w).await, "nothing changed before the press");

    // What the household keeps decides which writes the default set lists, and so which show
    // the card when called by name: Ana's household keeps accounts, so a cash payment is
    // listed and shows it, and deleting a category (left to find_tools) does not.
    let names: Vec<&str> = listed.iter().filter_map(|tool| tool["name"].as_str()).collect();
    assert!(names.contains(&"create_transaction"), "{names:?}");
    assert!(!names.contains(&"delete_category"), "{names:?}");
    let cash = json!({"account_id": w.wallet, "on": "2026-11-29", "amount": "-12.50", "payee": "Sol bakery"});
    let shown = call(&host, "create_transaction", cash).await;
    assert!(!text(&shown).contains("cf_"), "{}", text(&shown));
    assert!(waiting(&shown)["confirmation_id"].as_str().unwrap().starts_with("cf_"));
    let asked = call(&host, "delete_category", json!({"id": w.music})).await;
    assert!(text(&asked).contains("call_tool with name delete_category"), "{}", text(&asked));
    assert!(waiting(&asked).is_null(), "no card data");
    assert!(before == records(&w).await, "nothing changed before a press");
}

#[tokio::test]
async fn a_view_reads_only_what_its_caller_may_and_the_card_keeps_a_private_name_private() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let url = server.url("/mcp");
    // Ana's token cannot see Bob's private gym, on a host with views as anywhere.
    let (write, _) = w.env.token(&w.ana, "write").await;
    let host = host_with_views(url.clone(), &write).await;
    let refused = call(&host, "delete_subscription", json!({"id": w.bobs_gym})).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(waiting(&refused).is_null(), "no card for what she cannot see");
    assert!(!text(&refused).contains("gym"), "{}", text(&refused));
    // Nor another household's subscription.
    let theirs = call(&host, "delete_subscription", json!({"id": w.other_household_sub})).await;
    assert_eq!(theirs.is_error, Some(true));
    assert!(waiting(&theirs).is_null());
    // A read token gets no card and no confirm_change at all.
    let (read, _) = w.env.token(&w.ana, "read").await;
    let reader = host_with_views(url, &read).await;
    let names: Vec<String> =
        tools(&reader).await.iter().map(|tool| tool["name"].as_str().unwrap().to_owned()).collect();
    assert!(!names.contains(&"confirm_change".to_owned()), "{names:?}");
    let refused = call(&reader, "delete_subscription", json!({"id": w.netflix})).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(waiting(&refused).is_null());
}

/// Over stdio Claude Desktop hands a view neither the structured content nor the `_meta` of a
/// result, so a card could not learn what to confirm: stdio offers no views, and the
/// `confirm_change` path stays, even to a client that declares the extension.
#[tokio::test]
async fn stdio_offers_no_views_and_keeps_confirm_change() {
    let dir = test_support::DataDir::new();
    let token = crate::cli::owner_with_token(&dir, "write");
    let client = crate::mcp::stdio_client(&dir, &token, &[], renders_views()).await;
    let listed = tools(&client).await;
    assert!(listed.iter().all(|tool| tool.get("_meta").is_none()), "no view over stdio");
    assert!(model_visible(&listed).contains(&"confirm_change".to_owned()));
    client.cancel().await.unwrap();
}
