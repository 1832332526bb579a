//! The invoker: the one path every call takes, whatever the adapter.
//!
//! Find the op, refuse what the caller may not do (`ops::policy`), decide whether a person
//! must confirm first (`confirmations.rs`), run the handler in a read transaction (read-only
//! connection) or a write transaction, record audit entries in that transaction, commit or
//! roll back (dry run), then publish change events.

use std::sync::Arc;

use domain::Text;
use ops::{
    Actor, Caller, Mode, OpError, OpInfo,
    common::{Change, Receipt},
};
use serde_json::{Value, json};
use tracing::Instrument;

use crate::{
    App,
    ctx::Ctx,
    handlers::{Encoded, Encoding, Handler, Route},
    transactions::{self, StoreExt},
};

/// What a write returns: its output with the fields of its [`Receipt`] added.
fn with_receipt(
    mut output: Value,
    batch_id: Option<&str>,
    mut changes: Vec<Change>,
    dry_run: bool,
) -> Result<Value, OpError> {
    if dry_run {
        // A dry run wrote no audit entries.
        changes.iter_mut().for_each(|change| change.audit_id = None);
    }
    let receipt = Receipt {
        batch_id: batch_id.map(str::to_owned),
        audit_ids: changes.iter().filter_map(|change| change.audit_id).collect(),
        dry_run,
        changes,
    };
    if !output.is_object() {
        output = json!({ "result": output });
    }
    let Value::Object(receipt) = serde_json::to_value(receipt).map_err(|_| OpError::Internal)?
    else {
        return Err(OpError::Internal);
    };
    if let Value::Object(map) = &mut output {
        map.extend(receipt);
    }
    Ok(output)
}

impl App {
    pub(crate) async fn invoke(
        &self,
        caller: &Caller,
        op: &str,
        input: Value,
        mode: Mode,
        encoding: Encoding,
    ) -> Result<Encoded, OpError> {
        // The op is found once: its contract and its handler.
        let Some((info, route)) = self.handlers.resolve(op) else {
            return Err(OpError::not_found(
                Text::new("No op named {op}. The op list (MCP tools/list, GET /api/v1/openapi.json or `exhale ops list`) has every name.")
                    .with("op", op),
            ));
        };
        let span = tracing::info_span!(
            "op",
            name = info.name,
            via = caller.via.as_str(),
            member = caller.member_id,
            dry_run = mode == Mode::DryRun
        );
        async move {
            if let Some(refusal) = ops::policy::refusal(caller, info) {
                return Err(refusal);
            }
            self.limiter.check(&self.paces, caller, self.clock.now()).await?;
            let result = match route {
                Route::Confirmation => {
                    self.run_confirmation(caller, input, mode).await.map(Encoded::Value)
                }
                Route::Handler(handler) if info.hints.read_only => {
                    self.run_read(caller, info, handler, input, encoding).await
                }
                Route::Handler(handler)
                    if mode == Mode::Apply && ops::policy::needs_confirmation(caller, info) =>
                {
                    self.ask_confirmation(caller, info, handler, input).await.map(Encoded::Value)
                }
                Route::Handler(handler) => self
                    .run_write(caller, info, handler, input, mode, None)
                    .await
                    .map(|written| Encoded::Value(written.output)),
            };
            if let Err(err) = &result {
                tracing::info!(code = err.code(), "op refused");
            }
            result
        }
        .instrument(span)
        .await
    }

    async fn run_read(
        &self,
        caller: &Caller,
        info: &'static OpInfo,
        handler: Arc<Handler>,
        input: Value,
        encoding: Encoding,
    ) -> Result<Encoded, OpError> {
        let store = self.store.clone();
        let caller = caller.clone();
        let now = self.clock.now();
        let assistant_env = self.assistant_environment();
        let pdf = crate::statements::PdfReading::before(self.pdf_reader(), info, &input).await;
        let bank = self.ask_a_bank(&caller, info, &input, false, now).await?;
        transactions::blocking(move || {
            transactions::read_in(&store, caller.household_id, |db| {
                let mut ctx = Ctx::open(db, store.clone(), &caller, now, info.name, String::new())?;
                ctx.assistant_env = assistant_env;
                ctx.pdf = pdf;
                ctx.bank = bank;
                (handler)(&mut ctx, input, encoding)
            })
        })
        .await
    }

    /// What a bank gave the op before its transaction (`bank_calls.rs`); `None` for an op that
    /// asks no bank.
    async fn ask_a_bank(
        &self,
        caller: &Caller,
        info: &'static OpInfo,
        input: &Value,
        dry_run: bool,
        now: jiff::Timestamp,
    ) -> Result<Option<crate::bank_calls::Prefetched>, OpError> {
        if !crate::bank_calls::asks_a_bank(info) {
            return Ok(None);
        }
        let origin = self.public_origin().map(|origin| origin.origin);
        crate::bank_calls::before(
            &self.store,
            self.bank_feeds(),
            origin,
            caller,
            info,
            input,
            dry_run,
            now,
        )
        .await
    }

    /// Runs a write. `confirmation` is the confirmation being applied, marked used in the same
    /// transaction.
    pub(crate) async fn run_write(
        &self,
        caller: &Caller,
        info: &'static OpInfo,
        handler: Arc<Handler>,
        input: Value,
        mode: Mode,
        confirmation: Option<String>,
    ) -> Result<Written, OpError> {
        let store = self.store.clone();
        let caller = caller.clone();
        let now = self.clock.now();
        let batch_id = crate::random::random_hex(12)?;
        let dry_run = mode == Mode::DryRun;
        let caps = self.household_caps();
        let assistant_env = self.assistant_environment();
        let pdf = crate::statements::PdfReading::before(self.pdf_reader(), info, &input).await;
        let bank = self.ask_a_bank(&caller, info, &input, dry_run, now).await?;
        let leased = match &bank {
            Some(crate::bank_calls::Prefetched::Sync { connection_id, .. }) => Some(*connection_id),
            _ => None,
        };
        let household = caller.household_id;
        let instance = self.instance.clone();
        let written = transactions::blocking(move || {
            let writing = if dry_run { store::Writing::DryRun } else { store::Writing::Change };
            transactions::write_in(
                &store,
                caller.household_id,
                writing,
                |result: &Result<_, OpError>| !dry_run && result.is_ok(),
                |db| {
                    let mut ctx =
                        Ctx::open(db, store.clone(), &caller, now, info.name, batch_id.clone())?;
                    ctx.caps = caps;
                    ctx.assistant_env = assistant_env;
                    ctx.pdf = pdf;
                    ctx.bank = bank;
                    // Checked again inside the write transaction, so two concurrent confirms
                    // cannot both apply.
                    if let Some(id) = &confirmation
                        && !store::access::use_confirmation(db, id, &ctx.now_text())
                            .or_internal()?
                    {
                        return Err(crate::confirmations::already_used());
                    }
                    let output = (handler)(&mut ctx, input, Encoding::Value)?.into_value()?;
                    if !ctx.changes.is_empty()
                        && !matches!(caller.actor, Actor::Person | Actor::System)
                    {
                        // The member hears about every change an agent made, with Undo
                        // (delivered by the outbox worker after commit).
                        crate::outbox::announce_change(db, &caller, &batch_id, &ctx.changes, now)
                            .or_internal()?;
                    }
                    // Told when this commits; a dry run's rollback tells nobody.
                    crate::instances::tell(db, &instance, &ctx.events).or_internal()?;
                    let batch = (!dry_run && !ctx.changes.is_empty()).then_some(batch_id.as_str());
                    let output =
                        with_receipt(output, batch, std::mem::take(&mut ctx.changes), dry_run)?;
                    Ok((output, std::mem::take(&mut ctx.events), ctx.resolved_input.take()))
                },
            )
        })
        .await;
        crate::bank_calls::after(&self.store, household, leased).await;
        let (output, events, resolved_input) = written?;
        if !dry_run {
            self.after_changes(events);
        }
        Ok(Written { output, resolved_input })
    }
}

/// What a write returned, and its input as it was read when it held names or relative dates
/// (`Ctx::resolved_input`), for a confirmation to store.
pub(crate) struct Written {
    pub(crate) output: Value,
    pub(crate) resolved_input: Option<Value>,
}
