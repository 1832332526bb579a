//! Confirmations: a write that must wait for a person (`ops::policy::needs_confirmation`) is
//! run as a dry run, stored with its exact input, and answered `confirmation_required`; the op
//! `confirm_change` applies the stored call once, for the member and token that asked, within
//! ten minutes, re-validating it as it runs.
//!
//! A write of the built-in assistant is stored the same way, as a proposal: it lasts 30
//! minutes and only the person applies it, with a tap on the card (`assistant.rs`), never
//! through `confirm_change`.

use std::sync::Arc;

use domain::Text;
use jiff::SignedDuration;
use ops::{Actor, Caller, Mode, OpError, OpInfo};
use serde_json::Value;

use crate::{
    App,
    clock::timestamp_text,
    handlers::Handler,
    transactions::{self, StoreExt},
};

/// How long a confirmation stays valid.
const CONFIRMATION_TTL: SignedDuration = SignedDuration::from_mins(ops::limits::CONFIRMATION_MINS);
/// How long a proposal of the assistant stays valid.
const PROPOSAL_TTL: SignedDuration = SignedDuration::from_mins(ops::limits::assistant::MEMORY_MINS);

impl App {
    /// Runs the write as a dry run, stores a confirmation and answers `confirmation_required`.
    pub(crate) async fn ask_confirmation(
        &self,
        caller: &Caller,
        info: &'static OpInfo,
        handler: Arc<Handler>,
        input: Value,
    ) -> Result<Value, OpError> {
        let written =
            self.run_write(caller, info, handler, input.clone(), Mode::DryRun, None).await?;
        // The input as read, so a name or "tomorrow" means at confirmation what it meant in
        // the preview.
        let input = written.resolved_input.unwrap_or(input);
        let preview = written.output;
        let now = self.clock.now();
        let by_assistant = caller.actor == Actor::Assistant;
        let ttl = if by_assistant { PROPOSAL_TTL } else { CONFIRMATION_TTL };
        let expires = now.checked_add(ttl).map_err(|_| OpError::Internal)?;
        let id = format!("cf_{}", crate::random::random_hex(16)?);
        let token_id = caller.token_id();
        let row = store::access::ConfirmationRow {
            id: id.clone(),
            household_id: caller.household_id,
            member_id: caller.member_id,
            token_id,
            op: info.name.into(),
            input: input.to_string(),
            created_at: timestamp_text(now),
            expires_at: timestamp_text(expires),
            used_at: None,
            by_assistant,
        };
        let store = self.store.clone();
        let pruned_before = timestamp_text(now);
        transactions::blocking_write(store, move |db| {
            store::access::prune_confirmations(db, &pruned_before).or_internal()?;
            store::access::insert_confirmation(db, &row).or_internal()
        })
        .await?;
        let summaries: Vec<String> = preview
            .get("changes")
            .and_then(Value::as_array)
            .map(|changes| {
                changes
                    .iter()
                    .filter_map(|c| c.get("summary")?.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let what =
            if summaries.is_empty() { info.summary.to_owned() } else { summaries.join("; ") };
        let message = if by_assistant {
            Text::new("Prepared for the person to confirm: {what}. It applies only when they tap Confirm on the card Exhale shows them; tell them what it does.")
                .with("what", what)
        } else {
            // Words to repeat: a small model told what to say said it, where told only that
            // the change waits it still answered "You have successfully paused…".
            Text::new("Not done yet: waiting for the person to confirm. Say to them: \"Nothing has changed yet. This waits for your confirmation: {what}. Shall I go ahead?\" If they agree, call confirm_change with the confirmation_id within 10 minutes.")
                .with("what", what)
        };
        Err(OpError::ConfirmationRequired {
            confirmation_id: id,
            expires_at: timestamp_text(expires),
            preview: Box::new(preview),
            message,
        })
    }

    pub(crate) async fn run_confirmation(
        &self,
        caller: &Caller,
        input: Value,
        mode: Mode,
    ) -> Result<Value, OpError> {
        let input: ops::access::ConfirmChangeInput = crate::handlers::parse_input(input)?;
        let store = self.store.clone();
        let id = input.confirmation_id.clone();
        let row = transactions::blocking(move || {
            transactions::read(&store, |db| store::access::get_confirmation(db, &id).or_internal())
        })
        .await?;
        let not_found = || {
            OpError::not_found(Text::new(
                "No pending confirmation with this id for you. It may have expired (10 minutes) or been used; call the op again to get a new one.",
            ))
        };
        let row = row.ok_or_else(not_found)?;
        let token_id = caller.token_id();
        // The assistant's proposals are the person's to tap, not an op's to confirm.
        if row.by_assistant
            || row.household_id != caller.household_id
            || row.member_id != caller.member_id
            || row.token_id != token_id
        {
            return Err(not_found());
        }
        if row.used_at.is_some() {
            return Err(already_used());
        }
        if row.expires_at < timestamp_text(self.clock.now()) {
            return Err(expired());
        }
        let Some((info, handler)) = self.handlers.handled(&row.op) else {
            return Err(not_found());
        };
        if let Some(refusal) = ops::policy::refusal(caller, info) {
            return Err(refusal);
        }
        let input: Value = serde_json::from_str(&row.input).map_err(|_| OpError::Internal)?;
        // A dry run previews the confirmed change and leaves the confirmation unused.
        let confirmation = (mode == Mode::Apply).then_some(row.id);
        self.run_write(caller, info, handler, input, mode, confirmation)
            .await
            .map(|written| written.output)
    }
}

pub(crate) fn already_used() -> OpError {
    OpError::conflict(Text::new(
        "This confirmation was already used or has expired; the change was applied at most once. Check list_activity, or call the op again for a new preview.",
    ))
}

fn expired() -> OpError {
    OpError::conflict(Text::new(
        "This confirmation expired (they last 10 minutes). Call the op again to get a new preview.",
    ))
}
