//! The invoker: the one path every call takes, whatever the adapter.
//!
//! Find the op, refuse what the caller may not do (exposure, scope, owner-only), decide
//! whether a person must confirm first, run the handler in a read transaction (read-only
//! connection) or a write transaction, record audit entries in that transaction, commit or
//! roll back (dry run), then publish change events. `confirm_change` is served here too,
//! because it runs another op.

use domain::Text;
use jiff::{SignedDuration, tz::TimeZone};
use ops::{Actor, Caller, Mode, Op as _, OpError, OpInfo, common::Change};
use serde_json::{Value, json};
use store::StoreError;
use tracing::Instrument;

use crate::{
    App,
    ctx::Ctx,
    handlers::{Encoded, Encoding},
};

/// How long a confirmation stays valid.
const CONFIRMATION_TTL: SignedDuration = SignedDuration::from_mins(10);

/// Maps store errors at the boundary: "not found" becomes `not_found` with the caller's text,
/// everything else is logged and becomes `internal`.
pub(crate) trait StoreExt<T> {
    fn or_internal(self) -> Result<T, OpError>;
    fn or_not_found(self, message: impl FnOnce() -> Text) -> Result<T, OpError>;
}

impl<T> StoreExt<T> for Result<T, StoreError> {
    fn or_internal(self) -> Result<T, OpError> {
        self.map_err(internal)
    }

    fn or_not_found(self, message: impl FnOnce() -> Text) -> Result<T, OpError> {
        match self {
            Err(StoreError::NotFound) => Err(OpError::not_found(message())),
            other => other.map_err(internal),
        }
    }
}

pub(crate) fn internal(err: StoreError) -> OpError {
    match err {
        StoreError::Busy => {
            OpError::conflict(Text::new("The database is busy; try again in a moment."))
        }
        StoreError::Constraint(detail) => {
            tracing::warn!(%detail, "constraint violated");
            OpError::conflict(Text::new(
                "This change conflicts with other data (a duplicate name, or something it refers to is gone). Reload and try again.",
            ))
        }
        err => {
            tracing::error!(error = %err, "store error");
            OpError::Internal
        }
    }
}

/// A read transaction whose store failures become `OpError`s.
pub(crate) fn read<T>(
    store: &store::Store,
    f: impl FnOnce(&store::Db<'_>) -> Result<T, OpError>,
) -> Result<T, OpError> {
    store.read(f).map_err(internal)?
}

/// A write transaction, committed when `commit` approves; store failures become `OpError`s.
pub(crate) fn write<T>(
    store: &store::Store,
    commit: impl FnOnce(&Result<T, OpError>) -> bool,
    f: impl FnOnce(&store::Db<'_>) -> Result<T, OpError>,
) -> Result<T, OpError> {
    store.write(commit, f).map_err(internal)?
}

/// Runs blocking work (SQLite) on tokio's blocking pool.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, OpError> + Send + 'static,
) -> Result<T, OpError> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|err| {
        tracing::error!(error = %err, "a blocking task failed");
        Err(OpError::Internal)
    })
}

fn random_id(bytes: usize) -> Result<String, OpError> {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer).map_err(|_| OpError::Internal)?;
    Ok(buffer.iter().map(|b| format!("{b:02x}")).collect())
}

/// What a write returns: its output with the receipt fields added.
fn with_receipt(
    mut output: Value,
    batch_id: Option<&str>,
    changes: Vec<Change>,
    dry_run: bool,
) -> Value {
    let audit_ids: Vec<i64> =
        if dry_run { Vec::new() } else { changes.iter().filter_map(|c| c.audit_id).collect() };
    if !output.is_object() {
        output = json!({ "result": output });
    }
    if let Value::Object(map) = &mut output {
        map.insert("batch_id".into(), json!(batch_id));
        map.insert("audit_ids".into(), json!(audit_ids));
        map.insert("dry_run".into(), json!(dry_run));
        let changes: Vec<Value> = changes
            .into_iter()
            .map(|mut c| {
                if dry_run {
                    c.audit_id = None;
                }
                serde_json::to_value(c).unwrap_or(Value::Null)
            })
            .collect();
        map.insert("changes".into(), Value::Array(changes));
    }
    output
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
        let Some(meta) = ops::find(op) else {
            return Err(OpError::not_found(
                Text::new("No op named {op}. The op list (MCP tools/list, GET /api/v1/openapi.json or `exhale ops list`) has every name.")
                    .with("op", op),
            ));
        };
        let info = meta.info;
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
            self.limiter.check(caller, self.clock.now())?;
            let result = if info.hints.read_only {
                self.run_read(caller, info, input, encoding).await
            } else if info.name == ops::access::ConfirmChange::INFO.name {
                self.run_confirmation(caller, input, mode).await.map(Encoded::Value)
            } else if mode == Mode::Apply && ops::policy::needs_confirmation(caller, info) {
                self.ask_confirmation(caller, info, input).await.map(Encoded::Value)
            } else {
                self.run_write(caller, info, input, mode, None).await.map(Encoded::Value)
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
        input: Value,
        encoding: Encoding,
    ) -> Result<Encoded, OpError> {
        let store = self.store.clone();
        let handler = self.handlers.get(info.name)?;
        let caller = caller.clone();
        let now = self.clock.now();
        blocking(move || {
            crate::invoke::read(&store, |db| {
                let household =
                    store::households::get_household(db, caller.household_id).or_internal()?;
                let mut ctx = Ctx::new(db, &caller, now, household, info.name, String::new());
                (handler)(&mut ctx, input, encoding)
            })
        })
        .await
    }

    /// Runs a write. `confirmation` is the confirmation being applied, marked used in the same
    /// transaction.
    async fn run_write(
        &self,
        caller: &Caller,
        info: &'static OpInfo,
        input: Value,
        mode: Mode,
        confirmation: Option<String>,
    ) -> Result<Value, OpError> {
        let store = self.store.clone();
        let handler = self.handlers.get(info.name)?;
        let caller = caller.clone();
        let now = self.clock.now();
        let batch_id = random_id(12)?;
        let dry_run = mode == Mode::DryRun;
        let (output, events) = blocking(move || {
            crate::invoke::write(&store,
                |result: &Result<_, OpError>| !dry_run && result.is_ok(),
                |db| {
                        let household = store::households::get_household(db, caller.household_id).or_internal()?;
                        let mut ctx = Ctx::new(db, &caller, now, household, info.name, batch_id.clone());
                        // Checked again inside the write transaction, so two concurrent confirms
                        // cannot both apply.
                        if let Some(id) = &confirmation
                            && !store::access::use_confirmation(db, id, &ctx.now_text()).or_internal()?
                        {
                            return Err(already_used());
                        }
                        let output = (handler)(&mut ctx, input, Encoding::Value)?.into_value()?;
                        if !ctx.changes.is_empty() && !matches!(caller.actor, Actor::Person | Actor::System) {
                            // The member hears about every change an agent made, with Undo
                            // (delivered by the outbox worker after commit).
                            let payload = json!({
                                "member_id": caller.member_id,
                                "batch_id": batch_id,
                                "summaries": ctx.changes.iter().map(|c| c.summary.clone()).collect::<Vec<_>>(),
                            });
                            store::audit::enqueue(db, caller.household_id, "agent_change", &payload.to_string(), &ctx.now_text())
                                .or_internal()?;
                        }
                        let batch = (!dry_run && !ctx.changes.is_empty()).then_some(batch_id.as_str());
                        let output = with_receipt(output, batch, std::mem::take(&mut ctx.changes), dry_run);
                        Ok((output, std::mem::take(&mut ctx.events)))
                },
            )
        })
        .await?;
        if !dry_run {
            if events.iter().any(|e| e.entity == "token" || e.entity == "member") {
                self.tokens.clear();
            }
            for event in events {
                let _ = self.events.send(event);
            }
            self.outbox_wake.notify_one();
        }
        Ok(output)
    }

    /// Runs the write as a dry run, stores a confirmation and answers `confirmation_required`.
    async fn ask_confirmation(
        &self,
        caller: &Caller,
        info: &'static OpInfo,
        input: Value,
    ) -> Result<Value, OpError> {
        let preview = self.run_write(caller, info, input.clone(), Mode::DryRun, None).await?;
        let now = self.clock.now();
        let expires = now.checked_add(CONFIRMATION_TTL).map_err(|_| OpError::Internal)?;
        let id = format!("cf_{}", random_id(16)?);
        let token_id = match caller.actor {
            Actor::Token { token_id, .. } => Some(token_id),
            _ => None,
        };
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
        };
        let store = self.store.clone();
        let pruned_before = timestamp_text(now);
        blocking(move || {
            crate::invoke::write(
                &store,
                |_| true,
                |db| {
                    store::access::prune_confirmations(db, &pruned_before).or_internal()?;
                    store::access::insert_confirmation(db, &row).or_internal()
                },
            )
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
        Err(OpError::ConfirmationRequired {
            confirmation_id: id,
            expires_at: timestamp_text(expires),
            preview: Box::new(preview),
            message: Text::new("This change needs the person's confirmation: {what}. Show them the preview; if they agree, call confirm_change with the confirmation_id within 10 minutes.")
                .with("what", what),
        })
    }

    async fn run_confirmation(
        &self,
        caller: &Caller,
        input: Value,
        mode: Mode,
    ) -> Result<Value, OpError> {
        let input: ops::access::ConfirmChangeInput = crate::handlers::parse_input(input)?;
        let store = self.store.clone();
        let id = input.confirmation_id.clone();
        let row = blocking(move || {
            read(&store, |db| store::access::get_confirmation(db, &id).or_internal())
        })
        .await?;
        let not_found = || {
            OpError::not_found(Text::new(
                "No pending confirmation with this id for you. It may have expired (10 minutes) or been used; call the op again to get a new one.",
            ))
        };
        let row = row.ok_or_else(not_found)?;
        let token_id = match caller.actor {
            Actor::Token { token_id, .. } => Some(token_id),
            _ => None,
        };
        if row.household_id != caller.household_id
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
        let Some(meta) = ops::find(&row.op) else { return Err(not_found()) };
        if let Some(refusal) = ops::policy::refusal(caller, meta.info) {
            return Err(refusal);
        }
        let input: Value = serde_json::from_str(&row.input).map_err(|_| OpError::Internal)?;
        // A dry run previews the confirmed change and leaves the confirmation unused.
        let confirmation = (mode == Mode::Apply).then_some(row.id);
        self.run_write(caller, meta.info, input, mode, confirmation).await
    }
}

fn already_used() -> OpError {
    OpError::conflict(Text::new(
        "This confirmation was already used or has expired; the change was applied at most once. Check list_activity, or call the op again for a new preview.",
    ))
}

fn expired() -> OpError {
    OpError::conflict(Text::new(
        "This confirmation expired (they last 10 minutes). Call the op again to get a new preview.",
    ))
}

pub(crate) fn timestamp_text(at: jiff::Timestamp) -> String {
    at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Today's date in the household's time zone.
pub(crate) fn today_in(
    household: &store::households::HouseholdRow,
    now: jiff::Timestamp,
) -> domain::Date {
    let zone = TimeZone::get(&household.time_zone).unwrap_or(TimeZone::UTC);
    now.to_zoned(zone).date()
}
