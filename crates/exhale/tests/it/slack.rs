//! Slack end to end: the real app and the real Socket Mode code against a local Slack (its Web
//! API's JSON and a WebSocket of envelopes, `test_support::channels::slack`). Each step pushes
//! one envelope and handles it with `App::next`, so nothing sleeps.

use std::sync::Arc;

use channels::{Channels, ChannelsConfig};
use ops::assistant::ProviderFields;
use serde_json::json;
use test_support::{TestEnv, channels as fakes};

const APP_TOKEN: &str = "xapp-1-A1234-5678-abcdefabcdef";
const BOT_TOKEN: &str = "xoxb-1234-5678-abcdefabcdef";
const ANA: &str = "U061F7AUR";
const STRANGER: &str = "U0STRANGER";

struct Workspace {
    env: TestEnv,
    ana: ops::Caller,
    fake: fakes::SlackFake,
    _api: test_support::TestServer,
    channels: Channels,
}

impl Workspace {
    async fn new() -> Self {
        let env = TestEnv::new();
        let ana = env.household("Home", "ana@a.test").await;
        let (api, fake) = fakes::slack(APP_TOKEN, BOT_TOKEN).await;
        let tokens = json!({"slack": {"app_token": APP_TOKEN, "bot_token": BOT_TOKEN}});
        env.call(&ana, "set_channel_settings", tokens).await.unwrap();
        let config = ChannelsConfig { slack_api: api.url("/api"), ..ChannelsConfig::default() };
        let channels = Channels::new(env.app.clone(), config).unwrap();
        Self { env, ana, fake, _api: api, channels }
    }

    /// A workspace with its app connected and Ana's direct message linked.
    async fn linked() -> (Self, channels::slack::App, channels::slack::Socket) {
        let slack = Self::new().await;
        let mut app = slack.app().await;
        let mut socket = app.connect().await.unwrap();
        slack.link(&mut app, &mut socket).await;
        (slack, app, socket)
    }

    async fn app(&self) -> channels::slack::App {
        use ops::channels::Chats as _;
        let bot = self.env.app.chat_bots().await.unwrap().into_iter().next().unwrap();
        let mut app = self.channels.slack_app(bot, crate::fixtures::chat_services(&self.env));
        app.start().await.unwrap();
        app
    }

    /// Posts and updates in the direct message with `user`, oldest first.
    async fn said_to(&self, user: &str) -> Vec<fakes::SlackCall> {
        let channel = format!("D{user}");
        self.fake
            .calls()
            .await
            .into_iter()
            .filter(|c| c.method.starts_with("chat.") && c.body["channel"] == channel)
            .collect()
    }

    async fn last_text(&self, user: &str) -> String {
        self.said_to(user)
            .await
            .last()
            .map(|c| c.body["text"].as_str().unwrap().to_owned())
            .unwrap_or_default()
    }

    /// The categories `caller` sees, as JSON text to look a name up in.
    async fn categories(&self, caller: &ops::Caller) -> String {
        self.env.call(caller, "list_categories", json!({})).await.unwrap().to_string()
    }

    async fn link(&self, app: &mut channels::slack::App, socket: &mut channels::slack::Socket) {
        let link =
            self.env.call(&self.ana, "create_chat_link", json!({"kind": "slack"})).await.unwrap();
        assert!(link.get("url").is_none(), "Slack has no deep link: {link}");
        let id = self.fake.dm(ANA, &format!("link {}", link["code"].as_str().unwrap())).await;
        assert!(app.next(socket).await.unwrap());
        self.fake.acknowledged(&id).await;
        assert!(
            self.last_text(ANA).await.starts_with("Linked to Exhale as Home owner"),
            "{}",
            self.last_text(ANA).await
        );
    }
}

#[tokio::test]
async fn a_slack_user_links_with_a_code_and_strangers_repeats_and_the_app_itself_get_nothing() {
    let slack = Workspace::new().await;
    let mut app = slack.app().await;
    let settings = slack.env.call(&slack.ana, "get_settings", json!({})).await.unwrap();
    assert_eq!(settings["reminders"]["slack"]["username"], "UBOT", "{settings}");
    assert!(!settings.to_string().contains("xoxb-") && !settings.to_string().contains("xapp-"));
    slack.env.call(&slack.ana, "create_subscription", json!({"name": "Gym", "amount": "30", "cycle": "monthly", "next_charge_on": "2026-12-05"})).await.unwrap();
    let mut socket = app.connect().await.unwrap();

    let id = slack.fake.dm(STRANGER, "upcoming").await;
    assert!(app.next(&mut socket).await.unwrap());
    slack.fake.acknowledged(&id).await;
    let said = slack.said_to(STRANGER).await;
    assert_eq!(said.len(), 1);
    let text = said[0].body["text"].as_str().unwrap();
    assert!(text.contains("not linked") && !text.contains("Gym"), "{text}");

    slack.link(&mut app, &mut socket).await;
    slack.fake.dm(ANA, "upcoming").await;
    app.next(&mut socket).await.unwrap();
    let upcoming = slack.said_to(ANA).await.last().unwrap().body.clone();
    assert!(
        upcoming["blocks"][0]["text"]["text"]
            .as_str()
            .unwrap()
            .contains("Dec 5, 2026 · Gym · €30.00"),
        "{upcoming}"
    );

    // A re-delivery of that event and the app's own message are not answered.
    let before = slack.fake.calls().await.len();
    slack.fake.redeliver_last_dm(ANA, "upcoming").await;
    app.next(&mut socket).await.unwrap();
    slack.fake.dm("UBOT", "upcoming").await;
    app.next(&mut socket).await.unwrap();
    assert_eq!(slack.fake.calls().await.len(), before, "{:?}", slack.fake.calls().await);

    slack.fake.disconnect();
    assert!(!app.next(&mut socket).await.unwrap(), "Slack asked for a new socket");
}

#[tokio::test]
async fn an_agents_change_arrives_in_slack_with_an_undo_button_that_works() {
    let (slack, mut app, mut socket) = Workspace::linked().await;
    let (_, agent) = slack.env.token(&slack.ana, "trusted").await;
    slack.env.call(&agent, "create_category", json!({"name": "Pets"})).await.unwrap();

    slack.fake.limit_next(3).await;
    assert_eq!(slack.channels.deliver_due().await.unwrap(), 1);
    slack.env.clock.advance(jiff::SignedDuration::from_secs(30));
    assert_eq!(slack.channels.deliver_due().await.unwrap(), 1, "sent after Slack's Retry-After");
    let message = slack.said_to(ANA).await.last().unwrap().clone();
    assert_eq!(message.body["text"], "trusted token: Added category Pets");
    let undo = message.body["blocks"][1]["elements"][0]["value"].as_str().unwrap().to_owned();
    assert!(undo.starts_with("u:"), "{undo}");
    let ts = message.ts.unwrap();

    // Pressed by someone not linked, or with another household's batch: nothing is undone.
    let cai = slack.env.household("Other", "cai@b.test").await;
    let theirs = slack.env.call(&cai, "create_category", json!({"name": "Boats"})).await.unwrap();
    slack.fake.press(STRANGER, &ts, &undo).await;
    app.next(&mut socket).await.unwrap();
    slack.fake.press(ANA, &ts, &format!("u:{}", theirs["batch_id"].as_str().unwrap())).await;
    app.next(&mut socket).await.unwrap();
    assert!(slack.categories(&slack.ana).await.contains("Pets"));
    assert!(slack.categories(&cai).await.contains("Boats"));

    slack.fake.press(ANA, &ts, &undo).await;
    app.next(&mut socket).await.unwrap();
    let update = slack.said_to(ANA).await.last().unwrap().clone();
    assert_eq!(
        (update.method.as_str(), update.body["ts"].as_str()),
        ("chat.update", Some(ts.as_str()))
    );
    assert_eq!(update.body["text"], "Undone.");
    assert!(!slack.categories(&slack.ana).await.contains("Pets"));
}

#[tokio::test]
async fn a_conversation_in_slack_goes_from_free_text_to_a_confirmed_change_and_its_undo() {
    use test_support::provider::{fake, openai_text, openai_tool_call};
    let (slack, mut app, mut socket) = Workspace::linked().await;
    let model = fake(vec![
        openai_tool_call("create_category", &json!({"name": "Pets"})),
        openai_text(&["I prepared ", "a Pets category."]),
    ])
    .await;
    slack.env.app.set_assistant_environment(ProviderFields {
        provider: Some(ops::assistant::Provider::OpenAiCompatible),
        model: Some("helper".into()),
        base_url: Some(model.url.clone()),
        api_key: None,
    });
    slack.fake.dm(ANA, "add a category for the cat").await;
    app.next(&mut socket).await.unwrap();
    let said = slack.said_to(ANA).await;
    assert!(
        said.iter()
            .any(|c| c.body["text"].as_str().unwrap().contains("I prepared a Pets category.")),
        "{said:?}"
    );
    let card = said.last().unwrap().clone();
    let confirm = card.body["blocks"][1]["elements"][0]["value"].as_str().unwrap().to_owned();
    assert!(confirm.starts_with("c:"), "{:?}", card.body);
    let ts = card.ts.unwrap();

    slack.fake.press(ANA, &ts, &confirm).await;
    app.next(&mut socket).await.unwrap();
    assert!(slack.categories(&slack.ana).await.contains("Pets"));
    let done = slack.said_to(ANA).await.last().unwrap().clone();
    assert!(done.body["text"].as_str().unwrap().contains("Done."), "{:?}", done.body);
    let undo = done.body["blocks"][1]["elements"][0]["value"].as_str().unwrap().to_owned();
    assert!(undo.starts_with("x:"), "{undo}");

    slack.fake.press(ANA, &ts, &undo).await;
    app.next(&mut socket).await.unwrap();
    assert!(!slack.categories(&slack.ana).await.contains("Pets"));
    assert!(slack.last_text(ANA).await.contains("Undone."), "{}", slack.last_text(ANA).await);
}

#[tokio::test]
async fn the_chat_supervisor_runs_every_households_telegram_bot_and_slack_app() {
    let env = TestEnv::new();
    let ana = env.household("Home", "ana@a.test").await;
    let (slack_api, slack) = fakes::slack(APP_TOKEN, BOT_TOKEN).await;
    let telegram_token = "123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11";
    let (telegram_api, telegram) = fakes::telegram(&[telegram_token]).await;
    let tokens = json!({"slack": {"app_token": APP_TOKEN, "bot_token": BOT_TOKEN}, "telegram_bot_token": telegram_token});
    env.call(&ana, "set_channel_settings", tokens).await.unwrap();
    let config = ChannelsConfig {
        slack_api: slack_api.url("/api"),
        telegram_api: telegram_api.url(""),
        ..ChannelsConfig::default()
    };
    let channels = Arc::new(Channels::new(env.app.clone(), config).unwrap());
    let supervisor = channels.spawn_chats(crate::fixtures::chat_services(&env));

    // Both start on their own: the Slack app opens its socket, the Telegram bot polls.
    slack.until(|calls| calls.iter().any(|c| c.method == "apps.connections.open")).await;
    let code = env.call(&ana, "create_chat_link", json!({"kind": "slack"})).await.unwrap()["code"]
        .as_str()
        .unwrap()
        .to_owned();
    slack.dm(ANA, &format!("link {code}")).await;
    slack.until(|calls| calls.iter().any(|c| c.method == "chat.postMessage")).await;
    let code =
        env.call(&ana, "create_chat_link", json!({"kind": "telegram"})).await.unwrap()["code"]
            .as_str()
            .unwrap()
            .to_owned();
    telegram.message(telegram_token, 7001, &format!("/start {code}")).await;
    telegram.until(|calls| calls.iter().any(|c| c.method == "sendMessage")).await;
    let settings = env.call(&ana, "get_settings", json!({})).await.unwrap();
    let kinds: Vec<&str> = settings["reminders"]["destinations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["slack", "telegram"], "{settings}");
    supervisor.abort();
}
