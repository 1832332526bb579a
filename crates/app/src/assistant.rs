//! What the built-in assistant keeps (`ops::assistant::AssistantStore`): where a household's
//! questions go (the server's environment winning field by field over what an owner saved),
//! a member's conversation and proposal cards, and usage; and applying a proposal, once, as
//! the assistant acting for the member who taps it.
//!
//! The loop itself is the `assistant` crate; proposals are stored by `confirmations.rs`.

use jiff::SignedDuration;
use ops::limits::assistant as limits;
use ops::{
    BoxFuture, Caller, Mode, OpError, Text,
    assistant::{
        AssistantStore, Card, Conversation, ModelPrice, ProposalStatus, Provider, ProviderFields,
        ProviderSettings, Secret, Turn, Usage,
    },
};
use serde_json::Value;

use crate::{
    App,
    clock::timestamp_text,
    transactions::{self, StoreExt},
};

/// How long usage rows are kept.
const USAGE_DAYS: i64 = 400;

const TURN: &str = "turn";
const PROPOSAL: &str = "proposal";

impl App {
    /// Sets the provider fields the server's environment gives (`EXHALE_ASSISTANT_*`), which
    /// win over what an owner saved.
    pub fn set_assistant_environment(&self, fields: ProviderFields) {
        *crate::limits::locked(&self.assistant_env) = fields;
    }

    pub(crate) fn assistant_environment(&self) -> ProviderFields {
        crate::limits::locked(&self.assistant_env).clone()
    }

    fn memory_expiry(&self, duration: SignedDuration) -> Result<String, OpError> {
        let at = self.clock.now().checked_add(duration).map_err(|_| OpError::Internal)?;
        Ok(timestamp_text(at))
    }
}

fn proposal_not_found() -> OpError {
    OpError::not_found(Text::new(
        "No proposal with this id for you. It may have expired (30 minutes) or been made for someone else; ask the assistant again.",
    ))
}

fn parse_card(body: &str) -> Result<Card, OpError> {
    serde_json::from_str(body).map_err(|_| OpError::Internal)
}

/// What the assistant's messages are paced under, per member.
const ASSISTANT_MESSAGES: &str = "assistant_messages";

impl AssistantStore for App {
    fn take_message<'a>(
        &'a self,
        caller: &'a Caller,
    ) -> BoxFuture<'a, Result<Result<(), u64>, OpError>> {
        use ops::limits::assistant::{BURST, REFILL_SECS};
        Box::pin(async move {
            let key = format!("{}:{}", caller.household_id, caller.member_id);
            let pace = crate::limits::pace(std::time::Duration::from_secs(REFILL_SECS), BURST);
            self.paces.take(ASSISTANT_MESSAGES, key, pace, self.clock.now()).await
        })
    }

    fn provider(
        &self,
        household_id: i64,
    ) -> BoxFuture<'_, Result<Option<ProviderSettings>, OpError>> {
        Box::pin(async move {
            let store = self.store.clone();
            let (row, key) = transactions::blocking(move || {
                transactions::read(&store, |db| {
                    let row = store::assistant::get_settings(db, household_id).or_internal()?;
                    let key = store::assistant::api_key(db, household_id).or_internal()?;
                    Ok((row, key))
                })
            })
            .await?;
            let row = row.unwrap_or_default();
            let saved = ProviderFields {
                provider: row.provider.as_deref().and_then(Provider::parse),
                model: row.model,
                base_url: row.base_url,
                api_key: key.map(Secret::new),
            };
            let prices: Vec<ModelPrice> = if row.prices.is_empty() {
                Vec::new()
            } else {
                serde_json::from_str(&row.prices).map_err(|_| OpError::Internal)?
            };
            Ok(self.assistant_environment().over(saved).settings(prices))
        })
    }

    fn conversation<'a>(
        &'a self,
        caller: &'a Caller,
    ) -> BoxFuture<'a, Result<Conversation, OpError>> {
        Box::pin(async move {
            let store = self.store.clone();
            let (household, member) = (caller.household_id, caller.member_id);
            let now = timestamp_text(self.clock.now());
            let rows = transactions::blocking_write(store, move |db| {
                store::assistant::prune_memory(db, household, &now).or_internal()?;
                store::assistant::memory(db, household, member).or_internal()
            })
            .await?;
            let mut conversation = Conversation::default();
            for row in rows {
                match row.kind.as_str() {
                    TURN => conversation.turns.push(
                        serde_json::from_str::<Turn>(&row.body).map_err(|_| OpError::Internal)?,
                    ),
                    _ => conversation.cards.push(parse_card(&row.body)?),
                }
            }
            let skip = conversation.turns.len().saturating_sub(limits::REMEMBERED_TURNS);
            conversation.turns.drain(..skip);
            Ok(conversation)
        })
    }

    fn remember<'a>(
        &'a self,
        caller: &'a Caller,
        turn: Turn,
        cards: &'a [Card],
    ) -> BoxFuture<'a, Result<(), OpError>> {
        Box::pin(async move {
            let turn_expires =
                self.memory_expiry(SignedDuration::from_mins(limits::MEMORY_MINS))?;
            let mut rows = vec![store::assistant::MemoryRow {
                kind: TURN.into(),
                proposal_id: None,
                body: serde_json::to_string(&turn).map_err(|_| OpError::Internal)?,
                expires_at: turn_expires,
            }];
            for card in cards {
                rows.push(store::assistant::MemoryRow {
                    kind: PROPOSAL.into(),
                    proposal_id: Some(card.id.clone()),
                    body: serde_json::to_string(card).map_err(|_| OpError::Internal)?,
                    expires_at: card.expires_at.clone(),
                });
            }
            let store = self.store.clone();
            let (household, member) = (caller.household_id, caller.member_id);
            let now = timestamp_text(self.clock.now());
            transactions::blocking_write(store, move |db| {
                for row in &rows {
                    store::assistant::insert_memory(db, household, member, row, &now)
                        .or_internal()?;
                }
                store::assistant::trim_turns(db, household, member, limits::REMEMBERED_TURNS)
                    .or_internal()
            })
            .await
        })
    }

    fn update_card<'a>(
        &'a self,
        caller: &'a Caller,
        card: &'a Card,
    ) -> BoxFuture<'a, Result<(), OpError>> {
        Box::pin(async move {
            // An applied change is remembered as long as its Undo; any other outcome for the
            // rest of the conversation.
            let kept = match card.status {
                ProposalStatus::Applied => SignedDuration::from_hours(limits::APPLIED_HOURS),
                _ => SignedDuration::from_mins(limits::MEMORY_MINS),
            };
            let expires = if card.status == ProposalStatus::Pending {
                card.expires_at.clone()
            } else {
                self.memory_expiry(kept)?
            };
            let body = serde_json::to_string(card).map_err(|_| OpError::Internal)?;
            let store = self.store.clone();
            let (household, member, id) = (caller.household_id, caller.member_id, card.id.clone());
            let found = transactions::blocking_write(store, move |db| {
                store::assistant::update_proposal(db, household, member, &id, &body, &expires)
                    .or_internal()
            })
            .await?;
            if found { Ok(()) } else { Err(proposal_not_found()) }
        })
    }

    fn apply_proposal<'a>(
        &'a self,
        caller: &'a Caller,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Value, OpError>> {
        Box::pin(async move {
            let row = self.open_proposal(caller, id).await?;
            let Some((info, handler)) = self.handlers.handled(&row.op) else {
                return Err(proposal_not_found());
            };
            let assistant = Caller::assistant_for(caller);
            if let Some(refusal) = ops::policy::refusal(&assistant, info) {
                return Err(refusal);
            }
            let input: Value = serde_json::from_str(&row.input).map_err(|_| OpError::Internal)?;
            self.run_write(&assistant, info, handler, input, Mode::Apply, Some(row.id))
                .await
                .map(|written| written.output)
        })
    }

    fn discard_proposal<'a>(
        &'a self,
        caller: &'a Caller,
        id: &'a str,
    ) -> BoxFuture<'a, Result<(), OpError>> {
        Box::pin(async move {
            let row = self.open_proposal(caller, id).await?;
            let store = self.store.clone();
            let now = timestamp_text(self.clock.now());
            let closed = transactions::blocking_write(store, move |db| {
                store::access::use_confirmation(db, &row.id, &now).or_internal()
            })
            .await?;
            if closed { Ok(()) } else { Err(crate::confirmations::already_used()) }
        })
    }

    fn record_usage<'a>(
        &'a self,
        caller: &'a Caller,
        usage: Usage,
    ) -> BoxFuture<'a, Result<(), OpError>> {
        Box::pin(async move {
            let now = self.clock.now();
            let kept_since = now
                .checked_sub(SignedDuration::from_hours(24 * USAGE_DAYS))
                .map_err(|_| OpError::Internal)?;
            let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
            let row = store::assistant::UsageRow {
                household_id: caller.household_id,
                member_id: Some(caller.member_id),
                at: timestamp_text(now),
                via: caller.via.as_str().into(),
                purpose: usage.purpose.as_str().into(),
                provider: usage.provider.as_str().into(),
                model: usage.model,
                calls: i64::from(usage.calls),
                input_tokens: count(usage.input_tokens),
                output_tokens: count(usage.output_tokens),
                cost_micro_usd: usage.cost_micro_usd.map(count),
                repairs: i64::from(usage.repairs),
            };
            let kept_since = timestamp_text(kept_since);
            let store = self.store.clone();
            transactions::blocking_write(store, move |db| {
                store::assistant::insert_usage(db, &row, &kept_since).or_internal()
            })
            .await
        })
    }
}

impl App {
    /// The assistant's proposal `id` if it is `caller`'s and still open.
    async fn open_proposal(
        &self,
        caller: &Caller,
        id: &str,
    ) -> Result<store::access::ConfirmationRow, OpError> {
        let store = self.store.clone();
        let wanted = id.to_owned();
        let row = transactions::blocking(move || {
            transactions::read(&store, |db| {
                store::access::get_confirmation(db, &wanted).or_internal()
            })
        })
        .await?
        .filter(|row| {
            row.by_assistant
                && row.household_id == caller.household_id
                && row.member_id == caller.member_id
        })
        .ok_or_else(proposal_not_found)?;
        if row.used_at.is_some() {
            return Err(crate::confirmations::already_used());
        }
        if row.expires_at < timestamp_text(self.clock.now()) {
            return Err(OpError::conflict(Text::new(
                "This proposal expired (they last 30 minutes). Ask the assistant again for a new one.",
            )));
        }
        Ok(row)
    }
}
