//! What the chat task needs of the store (`ops::channels::Chats` for `App`): the households'
//! bots with their tokens, their state, linking a chat with a one-time code, and the member a
//! linked chat belongs to. The chat task then calls the catalog as that member, so what they
//! may see and do is decided where it always is.

use ops::{
    BoxFuture, Caller, OpError, Via,
    channels::{BotWebhook, ChatBot, ChatKind, Chats, Secret, telegram_webhook_path},
    import::ImportItem,
};
use store::channels::{self as rows, NewDestination};

use crate::{App, clock, credentials, ctx::Ctx, transactions};

/// The name a linked chat gets among the member's destinations.
fn chat_name(kind: ChatKind) -> String {
    match kind {
        ChatKind::Telegram => domain::Text::new("Telegram").render(),
        ChatKind::Slack => domain::Text::new("Slack").render(),
    }
}

impl Chats for App {
    fn chat_bots(&self) -> BoxFuture<'_, Result<Vec<ChatBot>, OpError>> {
        let store = self.store.clone();
        let origin = self.webhook_origin();
        Box::pin(transactions::blocking(move || {
            transactions::read(&store, |db| {
                let mut bots = Vec::new();
                for row in rows::bots(db).map_err(transactions::internal)? {
                    bots.extend(chat_bot(db, row, origin.as_deref())?);
                }
                Ok(bots)
            })
        }))
    }

    fn chat_bot(
        &self,
        household_id: i64,
        kind: ChatKind,
    ) -> BoxFuture<'_, Result<Option<ChatBot>, OpError>> {
        let store = self.store.clone();
        let origin = self.webhook_origin();
        Box::pin(transactions::blocking(move || {
            transactions::read(&store, |db| {
                match rows::bot(db, household_id, kind.as_str()).map_err(transactions::internal)? {
                    Some(row) => chat_bot(db, row, origin.as_deref()),
                    None => Ok(None),
                }
            })
        }))
    }

    fn hold_import<'a>(
        &'a self,
        caller: &'a Caller,
        items: &'a [ImportItem],
    ) -> BoxFuture<'a, Result<String, OpError>> {
        Box::pin(async move {
            let key = crate::random::random_hex(16)?;
            self.keep_import(caller, key.clone(), items).await?;
            Ok(key)
        })
    }

    fn put_back_import<'a>(
        &'a self,
        caller: &'a Caller,
        key: &'a str,
        items: &'a [ImportItem],
    ) -> BoxFuture<'a, Result<(), OpError>> {
        Box::pin(self.keep_import(caller, key.to_owned(), items))
    }

    fn take_import<'a>(
        &'a self,
        caller: &'a Caller,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<Vec<ImportItem>>, OpError>> {
        let store = self.store.clone();
        let now = clock::timestamp_text(self.clock.now());
        let (household_id, member_id, key) =
            (caller.household_id, caller.member_id, key.to_owned());
        Box::pin(async move {
            let taken = in_household_turn(store, household_id, move |db| {
                rows::take_chat_import(db, &key, household_id, member_id, &now)
            })
            .await?;
            taken
                .map(|items| serde_json::from_str(&items).map_err(|_| OpError::Internal))
                .transpose()
        })
    }

    fn bot_status(
        &self,
        household_id: i64,
        kind: ChatKind,
        username: Option<String>,
        error: Option<String>,
    ) -> BoxFuture<'_, Result<(), OpError>> {
        let store = self.store.clone();
        let now = clock::timestamp_text(self.clock.now());
        Box::pin(transactions::blocking_write(store, move |db| {
            rows::set_bot_status(
                db,
                household_id,
                kind.as_str(),
                username.as_deref(),
                error.as_deref(),
                &now,
            )
            .map_err(transactions::internal)
        }))
    }

    fn save_offset(
        &self,
        household_id: i64,
        kind: ChatKind,
        offset: i64,
    ) -> BoxFuture<'_, Result<(), OpError>> {
        let store = self.store.clone();
        Box::pin(transactions::blocking_write(store, move |db| {
            rows::set_bot_offset(db, household_id, kind.as_str(), offset)
                .map_err(transactions::internal)
        }))
    }

    fn link_chat<'a>(
        &'a self,
        household_id: i64,
        kind: ChatKind,
        code: &'a str,
        address: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, OpError>> {
        let store = self.store.clone();
        let now = self.clock.now();
        let hash = credentials::hash_token(code.trim());
        let address = address.to_owned();
        Box::pin(async move {
            let batch_id = crate::random::random_hex(12)?;
            let linked = transactions::blocking(move || {
                transactions::write(
                    &store,
                    |result: &Result<_, OpError>| result.is_ok(),
                    |db| {
                        let now_text = clock::timestamp_text(now);
                        let Some(member_id) =
                            rows::take_link_code(db, &hash, household_id, kind.as_str(), &now_text)
                                .map_err(transactions::internal)?
                        else {
                            return Ok(None);
                        };
                        let member = store::households::get_member(db, household_id, member_id)
                            .map_err(transactions::internal)?;
                        let caller =
                            Caller::person(household_id, member_id, member.role, Via::Chat);
                        let mut ctx =
                            Ctx::open(db, store.clone(), &caller, now, "link_chat", batch_id)?;
                        // A chat is one person's: linked to someone else before, it is theirs no more.
                        if let Some(previous) =
                            rows::chat_destination(db, household_id, kind.as_str(), &address)
                                .map_err(transactions::internal)?
                                .filter(|d| d.member_id != member_id)
                        {
                            let before = ctx
                                .snapshot(domain::entities::EntityKind::Destination, previous.id)?;
                            rows::delete_destination(db, household_id, previous.id)
                                .map_err(transactions::internal)?;
                            ctx.record(
                                domain::entities::EntityKind::Destination,
                                previous.id,
                                before,
                                domain::Text::new("Unlinked a chat now linked to {name}")
                                    .with("name", &member.name),
                            )?;
                        }
                        let name = chat_name(kind);
                        let new = NewDestination {
                            household_id,
                            member_id,
                            kind: kind.as_str(),
                            name: &name,
                            address: &address,
                            reminders: true,
                            agent_changes: true,
                            allow_lan: false,
                        };
                        if let Some(id) = rows::insert_destination(db, &new, &now_text)
                            .map_err(transactions::internal)?
                        {
                            ctx.record(
                                domain::entities::EntityKind::Destination,
                                id,
                                None,
                                domain::Text::new("Linked a {service} chat").with("service", &name),
                            )?;
                        } else if let Some(existing) = rows::destinations(db, member_id)
                            .map_err(transactions::internal)?
                            .into_iter()
                            .find(|d| d.kind == kind.as_str() && d.address == address)
                        {
                            // Linked again after the service said it was gone (the bot was
                            // blocked, then unblocked): it takes messages again.
                            rows::clear_health(db, existing.id).map_err(transactions::internal)?;
                        }
                        Ok(Some(member.name))
                    },
                )
            })
            .await?;
            Ok(linked)
        })
    }

    fn chat_caller<'a>(
        &'a self,
        household_id: i64,
        kind: ChatKind,
        address: &'a str,
        client_language: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Option<Caller>, OpError>> {
        let store = self.store.clone();
        let address = address.to_owned();
        let asked = client_language.map(str::to_owned);
        Box::pin(transactions::blocking(move || {
            transactions::read(&store, |db| {
                let Some(destination) =
                    rows::chat_destination(db, household_id, kind.as_str(), &address)
                        .map_err(transactions::internal)?
                else {
                    return Ok(None);
                };
                let member = store::households::get_member(db, household_id, destination.member_id)
                    .map_err(transactions::internal)?;
                let language =
                    crate::views::reads_in(db, &member).map_err(transactions::internal)?;
                let language =
                    language.unwrap_or_else(|| i18n::choose(None, None, asked.as_deref()));
                let caller = Caller::person(household_id, member.id, member.role, Via::Chat);
                Ok(Some(caller.reading(language)))
            })
        }))
    }
}

/// A bot as the chat task runs it, from its row: `None` when its token is gone.
fn chat_bot(
    db: &store::Db<'_>,
    row: rows::BotRow,
    webhook_origin: Option<&str>,
) -> Result<Option<ChatBot>, OpError> {
    let Some(kind) = ChatKind::parse(&row.kind) else { return Ok(None) };
    let token = rows::bot_token(db, row.household_id, &row.kind).map_err(transactions::internal)?;
    let app_token = match kind {
        ChatKind::Slack => rows::slack_app_token(db, row.household_id)
            .map_err(transactions::internal)?
            .map(Secret::new),
        ChatKind::Telegram => None,
    };
    let webhook = match (webhook_origin, row.webhook) {
        (Some(origin), true) => rows::bot_webhook_secret(db, row.household_id)
            .map_err(transactions::internal)?
            .map(|secret| BotWebhook {
                url: format!("{origin}{}", telegram_webhook_path(row.household_id)),
                secret: Secret::new(secret),
            }),
        _ => None,
    };
    Ok(token.map(|token| ChatBot {
        household_id: row.household_id,
        kind,
        token: Secret::new(token),
        app_token,
        offset: row.update_offset,
        webhook,
    }))
}

impl App {
    /// Where Telegram can post updates: the public origin, when it is https.
    fn webhook_origin(&self) -> Option<String> {
        self.public_origin().map(|o| o.origin).filter(|o| o.starts_with("https://"))
    }

    /// Keeps a chat's import under `key` for `ops::channels::CHAT_IMPORT_MINUTES`.
    async fn keep_import(
        &self,
        caller: &Caller,
        key: String,
        items: &[ImportItem],
    ) -> Result<(), OpError> {
        let store = self.store.clone();
        let now = self.clock.now();
        let expires = now
            .checked_add(jiff::SignedDuration::from_mins(ops::channels::CHAT_IMPORT_MINUTES))
            .map_err(|_| OpError::Internal)?;
        let (now, expires) = (clock::timestamp_text(now), clock::timestamp_text(expires));
        let items = serde_json::to_string(items).map_err(|_| OpError::Internal)?;
        let (household_id, member_id) = (caller.household_id, caller.member_id);
        in_household_turn(store, household_id, move |db| {
            rows::hold_chat_import(db, &key, household_id, member_id, &items, &expires, &now)
        })
        .await
    }
}

/// Runs a chat import's store work as a change of `household_id`'s rows, in its turn, on the
/// blocking pool.
async fn in_household_turn<T: Send + 'static>(
    store: std::sync::Arc<store::Store>,
    household_id: i64,
    work: impl FnOnce(&store::Db<'_>) -> Result<T, store::StoreError> + Send + 'static,
) -> Result<T, OpError> {
    transactions::blocking(move || {
        transactions::write_in(
            &store,
            household_id,
            store::Writing::Change,
            |_| true,
            |db| work(db).map_err(transactions::internal),
        )
    })
    .await
}
