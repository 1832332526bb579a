//! Telegram end to end: the real app and the real bot code against a local Bot API that speaks
//! Telegram's JSON (`test_support::channels::telegram`), the model behind the assistant a local
//! OpenAI-compatible server. Each poll is one `getUpdates` without waiting, so nothing sleeps.

use std::sync::Arc;

use channels::{Channels, ChannelsConfig};
use ops::{Catalog as _, assistant::ProviderFields};
use serde_json::json;
use test_support::{TestEnv, channels as fakes};

const TOKEN: &str = "123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11";
const OTHER_TOKEN: &str = "654321:ZYX-DEF1234ghIkl-zyx57W2v1u123ew11";
const ANA: i64 = 7001;
const STRANGER: i64 = 7002;

struct Chat {
    env: TestEnv,
    ana: ops::Caller,
    fake: fakes::TelegramFake,
    api: test_support::TestServer,
    channels: Arc<Channels>,
}

impl Chat {
    async fn new() -> Self {
        let env = TestEnv::new();
        let ana = env.household("Home", "ana@a.test").await;
        let (api, fake) = fakes::telegram(&[TOKEN, OTHER_TOKEN]).await;
        env.call(&ana, "set_channel_settings", json!({"telegram_bot_token": TOKEN})).await.unwrap();
        let config = ChannelsConfig { telegram_api: api.url(""), ..ChannelsConfig::default() };
        let channels = Arc::new(Channels::new(env.app.clone(), config).unwrap());
        Self { env, ana, fake, api, channels }
    }

    /// The household's bot, as the chat supervisor would start it.
    async fn bot(&self, household_id: i64) -> channels::telegram::Bot {
        use ops::channels::Chats as _;
        let bot = self
            .env
            .app
            .chat_bots()
            .await
            .unwrap()
            .into_iter()
            .find(|b| b.household_id == household_id)
            .unwrap();
        let bot = self.channels.telegram_bot(bot, crate::fixtures::chat_services(&self.env));
        bot.start().await.unwrap();
        bot
    }

    /// What the bot sent to `chat`, oldest first.
    async fn texts_to(&self, chat: i64) -> Vec<String> {
        self.fake
            .calls()
            .await
            .into_iter()
            .filter(|c| {
                matches!(c.method.as_str(), "sendMessage" | "editMessageText")
                    && c.body["chat_id"] == chat
            })
            .map(|c| c.body["text"].as_str().unwrap().to_owned())
            .collect()
    }

    async fn last_to(&self, chat: i64) -> String {
        self.texts_to(chat).await.pop().unwrap_or_default()
    }

    /// Asserts that the last message to `chat` says `expected`.
    async fn assert_last_says(&self, chat: i64, expected: &str) {
        let last = self.last_to(chat).await;
        assert!(last.contains(expected), "{last}");
    }

    /// Ana's categories as JSON text, to look a name up in.
    async fn categories(&self) -> String {
        self.env.call(&self.ana, "list_categories", json!({})).await.unwrap().to_string()
    }

    async fn link(&self, bot: &mut channels::telegram::Bot) {
        let link = self
            .env
            .call(&self.ana, "create_chat_link", json!({"kind": "telegram"}))
            .await
            .unwrap();
        let code = link["code"].as_str().unwrap();
        assert_eq!(link["url"], format!("https://t.me/exhale_test_bot?start={code}"));
        self.fake.message(TOKEN, ANA, &format!("/start {code}")).await;
        bot.poll_once(0).await.unwrap();
        assert!(
            self.last_to(ANA).await.starts_with("Linked to Exhale as Home owner"),
            "{}",
            self.last_to(ANA).await
        );
    }
}

/// The last message sent to `chat` and the callback data of its first button.
async fn first_button(fake: &fakes::TelegramFake, chat: i64) -> (i64, String) {
    let sent = fake.calls_of("sendMessage").await;
    let last = sent.iter().rfind(|c| c.body["chat_id"] == chat).unwrap();
    let data = last.body["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
        .as_str()
        .unwrap_or_else(|| panic!("no button in {:?}", last.body));
    (last.message_id.unwrap(), data.to_owned())
}

#[tokio::test]
async fn a_chat_is_linked_once_with_its_code_and_strangers_get_nothing() {
    let chat = Chat::new().await;
    let mut bot = chat.bot(chat.ana.household_id).await;
    let settings = chat.env.call(&chat.ana, "get_settings", json!({})).await.unwrap();
    assert_eq!(settings["reminders"]["telegram"]["username"], "exhale_test_bot", "{settings}");
    assert!(!settings.to_string().contains(TOKEN), "the token is never shown");
    chat.env.call(&chat.ana, "create_subscription", json!({"name": "Gym", "amount": "30", "cycle": "monthly", "next_charge_on": "2026-12-05"})).await.unwrap();

    // An unlinked chat is told how to link, and nothing else.
    chat.fake.message(TOKEN, STRANGER, "/upcoming").await;
    bot.poll_once(0).await.unwrap();
    let said = chat.texts_to(STRANGER).await;
    assert_eq!(said.len(), 1);
    assert!(said[0].contains("not linked") && !said[0].contains("Gym"), "{said:?}");

    chat.link(&mut bot).await;
    // The code worked once: sent again from another chat, it links nothing.
    let link =
        chat.env.call(&chat.ana, "create_chat_link", json!({"kind": "telegram"})).await.unwrap();
    let code = link["code"].as_str().unwrap().to_owned();
    chat.fake.message(TOKEN, ANA, &format!("/start {code}")).await;
    bot.poll_once(0).await.unwrap();
    chat.fake.message(TOKEN, STRANGER, &format!("/start {code}")).await;
    bot.poll_once(0).await.unwrap();
    chat.assert_last_says(STRANGER, "That link did not work").await;

    chat.fake.message(TOKEN, ANA, "/upcoming").await;
    bot.poll_once(0).await.unwrap();
    let upcoming = chat.last_to(ANA).await;
    assert!(upcoming.contains("Dec 5, 2026 · Gym · €30.00"), "{upcoming}");

    // The same chat writing to another household's bot is a stranger there.
    let cai = chat.env.household("Other", "cai@b.test").await;
    chat.env
        .call(&cai, "set_channel_settings", json!({"telegram_bot_token": OTHER_TOKEN}))
        .await
        .unwrap();
    let mut other = chat.bot(cai.household_id).await;
    chat.fake.message(OTHER_TOKEN, ANA, "/subscriptions").await;
    other.poll_once(0).await.unwrap();
    let replies: Vec<_> = chat
        .fake
        .calls_of("sendMessage")
        .await
        .into_iter()
        .filter(|c| c.token == OTHER_TOKEN)
        .collect();
    assert_eq!(replies.len(), 1);
    assert!(replies[0].body["text"].as_str().unwrap().contains("not linked"), "{:?}", replies[0]);

    // A Telegram set to Spanish is answered in Spanish before the chat is linked; once linked,
    // the member's own language wins over the client's.
    chat.fake.message_in(TOKEN, STRANGER, "/upcoming", "es-419").await;
    bot.poll_once(0).await.unwrap();
    assert!(chat.last_to(STRANGER).await.starts_with("Este chat no está vinculado"));
    chat.env
        .call(&chat.ana, "update_member", json!({"id": chat.ana.member_id, "language": "es"}))
        .await
        .unwrap();
    chat.fake.message_in(TOKEN, ANA, "/upcoming", "en").await;
    bot.poll_once(0).await.unwrap();
    let upcoming = chat.last_to(ANA).await;
    assert!(
        upcoming.contains("Las próximas dos semanas")
            && upcoming.contains("5 dic 2026 · Gym · 30,00\u{a0}€"),
        "{upcoming}"
    );
    let menus = chat.fake.calls_of("setMyCommands").await;
    assert!(
        menus.iter().any(|c| c.body["language_code"] == "es"
            && c.body["commands"][0]["description"] == "Cargos en las próximas dos semanas"),
        "{menus:?}"
    );
    // A member following a household language Exhale does not speak reads their client's.
    chat.env
        .call(&chat.ana, "update_member", json!({"id": chat.ana.member_id, "language": null}))
        .await
        .unwrap();
    chat.env.call(&chat.ana, "update_household", json!({"language": "fr"})).await.unwrap();
    chat.fake.message_in(TOKEN, ANA, "/upcoming", "es").await;
    bot.poll_once(0).await.unwrap();
    let upcoming = chat.last_to(ANA).await;
    assert!(upcoming.contains("Las próximas dos semanas"), "{upcoming}");
    chat.fake.message_in(TOKEN, ANA, "/upcoming", "en").await;
    bot.poll_once(0).await.unwrap();
    let upcoming = chat.last_to(ANA).await;
    assert!(upcoming.contains("Dec 5, 2026 · Gym · €30.00"), "{upcoming}");

    // The offset was kept: a restarted bot does not handle old updates again.
    let before = chat.fake.calls().await.len();
    let mut restarted = chat.bot(chat.ana.household_id).await;
    assert_eq!(restarted.poll_once(0).await.unwrap(), 0);
    let after: Vec<_> = chat
        .fake
        .calls()
        .await
        .into_iter()
        .skip(before)
        .filter(|c| c.method == "sendMessage")
        .collect();
    assert!(after.is_empty(), "{after:?}");
}

#[tokio::test]
async fn an_agents_change_arrives_with_an_undo_button_that_works_and_forged_buttons_do_nothing() {
    let chat = Chat::new().await;
    let mut bot = chat.bot(chat.ana.household_id).await;
    chat.link(&mut bot).await;
    let (_, agent) = chat.env.token(&chat.ana, "trusted").await;
    chat.env.call(&agent, "create_category", json!({"name": "Pets"})).await.unwrap();

    // Telegram asks to slow down once: the message waits its retry_after, then goes.
    chat.fake.flood_next(2).await;
    assert_eq!(chat.channels.deliver_due().await.unwrap(), 1);
    let reminders =
        chat.env.call(&chat.ana, "get_settings", json!({})).await.unwrap()["reminders"].clone();
    let telegram = reminders["destinations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["kind"] == "telegram")
        .unwrap()
        .clone();
    assert!(telegram["last_error"].as_str().unwrap().contains("Too Many Requests"), "{telegram}");
    chat.env.clock.advance(jiff::SignedDuration::from_secs(30));
    assert_eq!(chat.channels.deliver_due().await.unwrap(), 1);
    let message = chat.last_to(ANA).await;
    assert_eq!(message, "<b>trusted token: Added category Pets</b>");
    let (message_id, data) = first_button(&chat.fake, ANA).await;
    assert!(data.starts_with("u:"), "{data}");

    // A button of another household's change, and a press from a chat linked to nobody, undo
    // nothing.
    let cai = chat.env.household("Other", "cai@b.test").await;
    let theirs = chat.env.call(&cai, "create_category", json!({"name": "Boats"})).await.unwrap();
    let forged = format!("u:{}", theirs["batch_id"].as_str().unwrap());
    chat.fake.press(TOKEN, ANA, message_id, &forged).await;
    chat.fake.press(TOKEN, STRANGER, message_id, &data).await;
    chat.fake.press(TOKEN, ANA, message_id, "x:not-a-proposal-of-yours").await;
    bot.poll_once(0).await.unwrap();
    let answers = chat.fake.calls_of("answerCallbackQuery").await;
    assert_eq!(answers.len(), 3, "every press is answered: {answers:?}");
    assert!(answers[1].body["text"].as_str().unwrap().contains("not linked"), "{answers:?}");
    let boats = chat.env.call(&cai, "list_categories", json!({})).await.unwrap();
    assert!(boats.to_string().contains("Boats"), "another household's change stays");
    assert!(chat.categories().await.contains("Pets"));

    chat.fake.press(TOKEN, ANA, message_id, &data).await;
    bot.poll_once(0).await.unwrap();
    assert_eq!(chat.fake.calls_of("answerCallbackQuery").await.len(), 4);
    assert_eq!(chat.last_to(ANA).await, "Undone.");
    let categories = chat.categories().await;
    assert!(!categories.contains("Pets"), "{categories}");
}

#[tokio::test]
async fn a_conversation_in_telegram_goes_from_free_text_to_a_confirmed_change_and_its_undo() {
    use test_support::provider::{fake, openai_text, openai_tool_call};
    let chat = Chat::new().await;
    let mut bot = chat.bot(chat.ana.household_id).await;
    chat.link(&mut bot).await;

    // Off: free text gets the commands, and no model is asked.
    chat.fake.message(TOKEN, ANA, "add a category for the cat").await;
    bot.poll_once(0).await.unwrap();
    chat.assert_last_says(ANA, "The assistant is off").await;

    let model = fake(vec![
        openai_tool_call("create_category", &json!({"name": "Pets"})),
        openai_text(&["I prepared ", "a Pets category."]),
    ])
    .await;
    chat.env.app.set_assistant_environment(ProviderFields {
        provider: Some(ops::assistant::Provider::OpenAiCompatible),
        model: Some("helper".into()),
        base_url: Some(model.url.clone()),
        api_key: None,
    });
    chat.fake.message(TOKEN, ANA, "add a category for the cat").await;
    bot.poll_once(0).await.unwrap();
    assert!(
        !chat.fake.calls_of("sendChatAction").await.is_empty(),
        "typing… while the model works"
    );
    let texts = chat.texts_to(ANA).await;
    assert!(texts.iter().any(|t| t.contains("I prepared a Pets category.")), "{texts:?}");
    let card = texts.last().unwrap();
    assert!(card.contains("Confirm?"), "{card}");
    let (message_id, confirm) = first_button(&chat.fake, ANA).await;
    assert!(confirm.starts_with("c:"), "{confirm}");
    assert!(!chat.categories().await.contains("Pets"), "nothing before the tap");

    chat.fake.press(TOKEN, ANA, message_id, &confirm).await;
    bot.poll_once(0).await.unwrap();
    assert!(chat.categories().await.contains("Pets"));
    let edits = chat.fake.calls_of("editMessageText").await;
    let done = edits.last().unwrap();
    assert!(done.body["text"].as_str().unwrap().contains("Done."), "{done:?}");
    let undo = done.body["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(undo.starts_with("x:"), "{undo}");

    chat.fake.press(TOKEN, ANA, message_id, &undo).await;
    bot.poll_once(0).await.unwrap();
    assert!(!chat.categories().await.contains("Pets"));
    chat.assert_last_says(ANA, "Undone.").await;
    let activity = chat
        .env
        .app
        .call_json(&chat.ana, "list_activity", json!({}), ops::Mode::Apply)
        .await
        .unwrap();
    assert!(
        activity.to_string().contains("assistant"),
        "the change was the assistant's: {activity}"
    );
}

#[tokio::test]
async fn a_bank_export_sent_to_the_bot_is_offered_for_import_and_imported_with_a_tap() {
    let chat = Chat::new().await;
    let mut bot = chat.bot(chat.ana.household_id).await;
    chat.link(&mut bot).await;
    let export = crate::import::uk_export();
    chat.fake.file(TOKEN, ANA, "export.csv", export.as_bytes(), false).await;
    bot.poll_once(0).await.unwrap();
    let offer = chat.last_to(ANA).await;
    assert!(offer.starts_with("<b>Found "), "{offer}");
    let (_, data) = first_button(&chat.fake, ANA).await;
    assert!(data.starts_with("i:") && data.len() <= 64, "{data}");
    assert_eq!(
        chat.env.call(&chat.ana, "list_subscriptions", json!({})).await.unwrap()["total"],
        0,
        "nothing before the tap"
    );

    // Someone else's press of it imports nothing; the member's does, once.
    chat.fake.press(TOKEN, STRANGER, 1, &data).await;
    bot.poll_once(0).await.unwrap();
    assert_eq!(
        chat.env.call(&chat.ana, "list_subscriptions", json!({})).await.unwrap()["total"],
        0
    );
    chat.fake.press(TOKEN, ANA, 1, &data).await;
    bot.poll_once(0).await.unwrap();
    let listed = chat.env.call(&chat.ana, "list_subscriptions", json!({})).await.unwrap();
    assert!(listed["total"].as_u64().unwrap() > 0, "{listed}");
    assert!(chat.last_to(ANA).await.starts_with("Imported "), "{}", chat.last_to(ANA).await);
    chat.fake.press(TOKEN, ANA, 1, &data).await;
    bot.poll_once(0).await.unwrap();
    let answers = chat.fake.calls_of("answerCallbackQuery").await;
    assert!(
        answers.last().unwrap().body["text"].as_str().unwrap().contains("no longer waiting"),
        "{answers:?}"
    );

    // A photo needs the assistant, which is off: the member is told what to do instead.
    let png = [b"\x89PNG\r\n\x1a\n".as_slice(), &[7u8; 32]].concat();
    chat.fake.file(TOKEN, ANA, "shot.png", &png, true).await;
    bot.poll_once(0).await.unwrap();
    chat.assert_last_says(ANA, "A picture is read by the built-in assistant, which is off").await;
}

/// An instance of the whole server on `app`, as `exhale serve` runs it behind the public
/// origin, its channels talking to the fake Bot API: nothing from the instance that started
/// the bot.
async fn instance(chat: &Chat, app: Arc<app::App>, origin: &str) -> test_support::TestServer {
    let config = ChannelsConfig { telegram_api: chat.api.url(""), ..ChannelsConfig::default() };
    let origin = ops::oauth::PublicOrigin { origin: origin.into() };
    test_support::serve_instance(&app, origin, config).await
}

#[tokio::test]
async fn in_webhook_mode_updates_arrive_at_any_instance_with_the_secret_header_and_anything_else_is_refused()
 {
    let chat = Chat::new().await;
    let origin = "https://exhale.example.net";
    let public = || Some(ops::oauth::PublicOrigin { origin: origin.into() });
    chat.env.app.set_public_origin(public());
    chat.env
        .call(&chat.ana, "set_channel_settings", json!({"telegram_webhook": true}))
        .await
        .unwrap();
    let bot = chat.bot(chat.ana.household_id).await;
    assert!(bot.by_webhook());
    let set = chat.fake.calls_of("setWebhook").await;
    let household = chat.ana.household_id;
    assert_eq!(set[0].body["url"], format!("{origin}/telegram/{household}/updates"));
    let secret = set[0].body["secret_token"].as_str().unwrap().to_owned();
    assert!(secret.len() >= 32, "{secret}");
    assert!(
        !chat
            .env
            .call(&chat.ana, "get_settings", json!({}))
            .await
            .unwrap()
            .to_string()
            .contains(&secret)
    );
    // Two instances behind one public origin; neither is running the bot.
    drop(bot);
    let first = instance(&chat, chat.env.app.clone(), origin).await;
    let second = instance(&chat, chat.env.reopen(), origin).await;
    let client = reqwest::Client::new();
    let post = |server: &test_support::TestServer,
                path: &str,
                secret: Option<&str>,
                update: &serde_json::Value| {
        let mut request = client.post(server.url(path)).json(update);
        if let Some(secret) = secret {
            request = request.header("x-telegram-bot-api-secret-token", secret);
        }
        request.send()
    };
    let path = format!("/telegram/{household}/updates");

    let link =
        chat.env.call(&chat.ana, "create_chat_link", json!({"kind": "telegram"})).await.unwrap();
    chat.fake.message(TOKEN, ANA, &format!("/start {}", link["code"].as_str().unwrap())).await;
    let [update] = <[serde_json::Value; 1]>::try_from(chat.fake.take_updates(TOKEN).await).unwrap();
    for server in [&first, &second] {
        assert_eq!(post(server, &path, None, &update).await.unwrap().status(), 403);
        assert_eq!(
            post(server, &path, Some("not-the-secret"), &update).await.unwrap().status(),
            403
        );
        let elsewhere = format!("/telegram/{}/updates", household + 1);
        assert_eq!(post(server, &elsewhere, Some(&secret), &update).await.unwrap().status(), 404);
    }
    assert!(chat.fake.calls_of("sendMessage").await.is_empty(), "nothing was handled");
    assert_eq!(post(&first, &path, Some(&secret), &update).await.unwrap().status(), 200);
    chat.fake.until(|calls| calls.iter().any(|c| c.method == "sendMessage")).await;
    assert!(
        chat.last_to(ANA).await.starts_with("Linked to Exhale as Home owner"),
        "{}",
        chat.last_to(ANA).await
    );

    // A bank export arrives at the second instance; its Import button is pressed at the
    // first, which never saw the file: what waits for the press is in the database.
    chat.fake.file(TOKEN, ANA, "export.csv", crate::import::uk_export().as_bytes(), false).await;
    for update in chat.fake.take_updates(TOKEN).await {
        assert_eq!(post(&second, &path, Some(&secret), &update).await.unwrap().status(), 200);
    }
    chat.fake
        .until(|calls| {
            calls.iter().any(|c| {
                c.method == "sendMessage"
                    && c.body["text"].as_str().is_some_and(|t| t.starts_with("<b>Found "))
            })
        })
        .await;
    let (message_id, data) = first_button(&chat.fake, ANA).await;
    assert!(data.starts_with("i:"), "{data}");
    chat.fake.press(TOKEN, ANA, message_id, &data).await;
    for update in chat.fake.take_updates(TOKEN).await {
        assert_eq!(post(&first, &path, Some(&secret), &update).await.unwrap().status(), 200);
    }
    chat.fake.until(|calls| calls.iter().any(|c| c.method == "answerCallbackQuery")).await;
    let listed = chat.env.call(&chat.ana, "list_subscriptions", json!({})).await.unwrap();
    assert!(listed["total"].as_u64().unwrap() > 0, "imported through the other instance: {listed}");
}
