//! Activity (audit log) listing and undo.

use domain::{
    Language, Text,
    entities::{ActorKind, EntityKind},
};
use ops::{OpError, activity::*, common::Ref, registry::ListActivityInput, resolve::IsoDate};
use serde_json::Value;
use store::{audit::AuditRow, snapshot};

use crate::{ctx::Ctx, input, transactions::StoreExt, views};

fn actor_view(row: &AuditRow, language: Language) -> ActorView {
    let member = row.member_id.map(|id| Ref {
        id,
        name: row
            .member_name
            .clone()
            .unwrap_or_else(|| i18n::say(language, &Text::new("a former member"))),
    });
    let who = member
        .as_ref()
        .map(|m| m.name.clone())
        .unwrap_or_else(|| i18n::say(language, &Text::new("someone")));
    // A person is named by their name; the others by a sentence about whom they act for.
    let label = match row.actor_kind {
        ActorKind::Agent => {
            let agent = row
                .client_name
                .clone()
                .unwrap_or_else(|| i18n::say(language, &Text::new("An agent")));
            // A connected app's grant is named after the app: no token name to add.
            let label = match &row.token_name {
                Some(token) if row.client_name.as_ref() != Some(token) => {
                    Text::new("{agent} (token {token}) for {who}").with("token", token)
                }
                _ => Text::new("{agent} for {who}"),
            }
            .with("agent", agent)
            .with("who", who);
            i18n::say(language, &label)
        }
        ActorKind::Assistant => {
            i18n::say(language, &Text::new("Exhale assistant for {who}").with("who", who))
        }
        ActorKind::System => i18n::say(language, &Text::new("Exhale")),
        ActorKind::Person => who,
    };
    ActorView { kind: row.actor_kind, member, label }
}

/// An activity entry as `language` reads it (English for agents and for the refusals of undo,
/// which name an entry to a model).
fn entry_view(row: &AuditRow, language: Language) -> Result<ActivityEntry, OpError> {
    let summary = serde_json::from_str::<Text>(&row.summary)
        .map(|t| i18n::say(language, &t))
        .unwrap_or_else(|_| row.summary.clone());
    Ok(ActivityEntry {
        id: row.id,
        at: views::timestamp(&row.at)?,
        actor: actor_view(row, language),
        op: row.op.clone(),
        entity: row.entity,
        entity_id: row.entity_id,
        action: row.action,
        summary,
        batch_id: row.batch_id.clone(),
        undone_by: row.undone_by,
    })
}

/// The UTC instant a local date starts at in the household's zone.
fn day_start(ctx: &Ctx<'_>, date: domain::Date) -> Result<String, OpError> {
    let zone = jiff::tz::TimeZone::get(&ctx.household.time_zone).unwrap_or(jiff::tz::TimeZone::UTC);
    let start = date.to_zoned(zone).map_err(|_| OpError::Internal)?;
    Ok(crate::clock::timestamp_text(start.timestamp()))
}

/// A range that can hold no activity (starting after today, or ending before the household's
/// records begin) is most likely a wrong year: it is refused with today's date and the date
/// most likely meant, rather than answered with an empty page a model would take as "nothing".
fn check_range(
    ctx: &Ctx<'_>,
    from: Option<domain::Date>,
    to: Option<domain::Date>,
) -> Result<(), OpError> {
    let today = ctx.today;
    if let Some(from) = from.filter(|from| *from > today) {
        return Err(OpError::invalid(
            "/from",
            Text::new("{date} is in the future; today is {today}, and activity is what has already happened. Did you mean {likely}?")
                .with("date", from)
                .with("today", today)
                .with("likely", domain::relative::same_day_until(from, today)),
        ));
    }
    let founded = ops::common::Timestamp::parse(&ctx.household.created_at)
        .map(|at| crate::clock::today_in(&ctx.household, at.0))
        .ok_or(OpError::Internal)?;
    if let Some(to) = to.filter(|to| *to < founded) {
        return Err(OpError::invalid(
            "/to",
            Text::new("{date} is before this household's records begin ({founded}), so nothing can be found; today is {today}. Did you mean {likely}?")
                .with("date", to)
                .with("founded", founded)
                .with("today", today)
                .with("likely", domain::relative::same_day_from(to, founded).min(today)),
        ));
    }
    Ok(())
}

pub(crate) fn list(ctx: &mut Ctx<'_>, input: ListActivityInput) -> Result<ActivityPage, OpError> {
    let limit = input.limit.or(Some(ops::limits::ACTIVITY_PAGE));
    let (limit, offset) = input::page_window(limit, input.cursor.as_deref())?;
    let filters = filters_named(&input)?;
    let from = input.from.map(IsoDate::date);
    let to = input.to.map(IsoDate::date);
    check_range(ctx, from, to)?;
    let until = match to {
        Some(to) => Some(day_start(ctx, to.tomorrow().map_err(|_| OpError::Internal)?)?),
        None => None,
    };
    let filter = store::audit::AuditFilter {
        actor_kind: input.actor_kind,
        member_id: input.member_id.map(ops::resolve::MemberId::get),
        op: input.op.map(|op| op.as_str().to_owned()),
        entity: input.entity,
        entity_id: input.entity_id.map(i64::from),
        batch_id: input.batch_id,
        from: from.map(|d| day_start(ctx, d)).transpose()?,
        until,
    };
    let (rows, total) =
        store::audit::list(ctx.db, ctx.household_id(), ctx.me(), &filter, limit, offset)
            .or_internal()?;
    let language = ctx.caller.language;
    let items = rows.iter().map(|row| entry_view(row, language)).collect::<Result<Vec<_>, _>>()?;
    let next_cursor = ops::common::next_cursor(offset, items.len(), total);
    let note = match (items.is_empty() && offset == 0, filters) {
        (true, Some(filters)) => Some(nothing_matched(ctx, &filters)?),
        _ => None,
    };
    Ok(ActivityPage { note, items, total, next_cursor })
}

/// The filters of a listing as a model wrote them (`entity "transaction", entity_id 12345`),
/// or `None` when it has none: paging is not a filter.
fn filters_named(input: &ListActivityInput) -> Result<Option<String>, OpError> {
    let Value::Object(fields) = serde_json::to_value(input).map_err(|_| OpError::Internal)? else {
        return Err(OpError::Internal);
    };
    let named: Vec<String> = fields
        .iter()
        .filter(|(name, value)| !matches!(name.as_str(), "limit" | "cursor") && !value.is_null())
        .map(|(name, value)| format!("{name} {value}"))
        .collect();
    Ok((!named.is_empty()).then(|| named.join(", ")))
}

/// What filters that matched nothing say (a small model asked for "the last change" with an
/// entity and an id it made up, and told the person nothing had changed): the latest change
/// first, as the answer a model most likely wanted (told first that nothing matched, one
/// answered "no changes were made"), then which filters matched nothing and the latest changes
/// without them.
fn nothing_matched(ctx: &Ctx<'_>, filters: &str) -> Result<String, OpError> {
    let Some((_, latest)) = latest_changes(ctx, |row| row.undone_by.is_none())? else {
        return Ok(format!("Nothing matched {filters}, and nothing has been changed yet."));
    };
    let newest = latest.lines().next().unwrap_or_default().trim_start_matches("- ");
    Ok(format!(
        "The latest change you can see is {newest}. Nothing matched {filters}; without filters, the latest changes, newest first:\n{latest}\nCall list_activity again with fewer filters, or none, to read more."
    ))
}

fn parse_state(text: Option<&str>) -> Result<Option<Value>, OpError> {
    text.map(serde_json::from_str).transpose().map_err(|_| OpError::Internal)
}

/// What an undo of a bank change may not do: bring back a removed connection (its access
/// was forgotten), remove one the caller could not remove themselves, or send an account's
/// transactions into an account the caller can no longer choose (another member's private
/// one, or one of another currency).
fn bank_undo_allowed(
    ctx: &Ctx<'_>,
    entry: &store::audit::AuditRow,
    before: Option<&Value>,
    current: Option<&Value>,
) -> Result<(), OpError> {
    let column = |state: Option<&Value>, name: &str| {
        state.and_then(|s| s.pointer(&format!("/row/{name}"))).cloned().unwrap_or(Value::Null)
    };
    match entry.entity {
        EntityKind::BankConnection if current.is_none() && before.is_some() => {
            Err(OpError::conflict(Text::new(
                "A removed bank connection cannot come back: Exhale forgot its access when it was removed. Link the bank again in Settings → Banks; nothing was changed.",
            )))
        }
        EntityKind::BankConnection
            if before.is_none()
                && !column(current, "member_id")
                    .as_i64()
                    .is_some_and(|linked_by| ops::banks::may_remove(ctx.caller, linked_by)) =>
        {
            Err(OpError::forbidden(Text::new(
                "Only the member who linked this bank connection, or an owner, can undo linking it: that removes it.",
            )))
        }
        EntityKind::BankAccount => {
            let Some(target) = column(before, "account_id").as_i64() else { return Ok(()) };
            let chosen = store::ledger::account_ref(ctx.db, ctx.household_id(), ctx.me(), target)
                .ok()
                .filter(|account| {
                    column(before, "currency").as_str() == Some(account.currency.code())
                });
            match chosen {
                Some(_) => Ok(()),
                None => Err(OpError::conflict(Text::new(
                    "The account these transactions went into before is not one you can choose now (another member's private account, or gone); choose where they go in Settings → Banks. Nothing was changed.",
                ))),
            }
        }
        _ => Ok(()),
    }
}

/// Whether a person calls, rather than an agent or the assistant for one.
fn by_a_person(ctx: &Ctx<'_>) -> bool {
    matches!(ctx.caller.actor, ops::Actor::Person)
}

/// Why only a person may undo a change to this kind of entity, when only a person may: an
/// agent must not restore credentials, membership, a bank's access or where messages go.
fn only_a_person_undoes(entity: EntityKind) -> Option<Text> {
    Some(match entity {
        EntityKind::Token | EntityKind::Member => Text::new(
            "Changes to tokens and members can only be undone by a person, in the web app or the CLI: an agent must not restore credentials or membership.",
        ),
        EntityKind::BankConnection | EntityKind::BankAccount => Text::new(
            "Changes to a bank connection or where its accounts go can only be undone by a person, in Exhale's Activity page: a connection holds a credential.",
        ),
        EntityKind::Destination => Text::new(
            "Where messages go is a person's to change: undo this in Exhale's Activity page.",
        ),
        _ => return None,
    })
}

/// A change that "undo" with no ids takes, and that its refusals offer: not undone yet, and not
/// an undo itself (undoing one redoes what it undid: a second "undo the last change" means the
/// change before, as in an editor).
fn undoable(row: &AuditRow) -> bool {
    row.undone_by.is_none() && row.undo_of.is_none()
}

/// What the caller may undo of what they see: for an agent never a change only a person may
/// undo (the token it was just given is most often the latest).
fn undoable_by(ctx: &Ctx<'_>) -> impl Fn(&AuditRow) -> bool + use<> {
    let person = by_a_person(ctx);
    move |row| undoable(row) && (person || only_a_person_undoes(row.entity).is_none())
}

/// Up to `wanted` of the latest changes the caller can see that `keep` keeps, newest first,
/// read a page at a time (most are kept: few changes are undone).
fn latest_rows(
    ctx: &Ctx<'_>,
    wanted: usize,
    keep: impl Fn(&AuditRow) -> bool,
) -> Result<Vec<AuditRow>, OpError> {
    const PAGE: u32 = 50;
    let filter = store::audit::AuditFilter::default();
    let mut kept = Vec::with_capacity(wanted);
    let mut offset = 0;
    while kept.len() < wanted {
        let (rows, total) =
            store::audit::list(ctx.db, ctx.household_id(), ctx.me(), &filter, PAGE, offset)
                .or_internal()?;
        offset += rows.len() as u64;
        let exhausted = rows.is_empty() || offset >= total;
        kept.extend(rows.into_iter().filter(|row| keep(row)));
        if exhausted {
            break;
        }
    }
    kept.truncate(wanted);
    Ok(kept)
}

/// The latest changes that `keep` keeps, newest first, one line each with its id, for a note
/// or a refusal that names what the caller most likely wanted: the id of the latest and the
/// lines; `None` when the caller sees no such change.
fn latest_changes(
    ctx: &Ctx<'_>,
    keep: impl Fn(&AuditRow) -> bool,
) -> Result<Option<(i64, String)>, OpError> {
    let rows = latest_rows(ctx, ops::limits::LATEST_CHANGES as usize, keep)?;
    let mut lines = Vec::with_capacity(rows.len());
    for row in &rows {
        let entry = entry_view(row, Language::English)?;
        lines.push(format!(
            "- id {}: {} ({}, {})",
            entry.id, entry.summary, entry.at, entry.actor.label
        ));
    }
    Ok(rows.first().map(|first| (first.id, lines.join("\n"))))
}

/// An undo's refusal when it names no change that is one: what was wrong, then the call that
/// undoes the latest change ("undo the last change" is what a model most often guesses an id
/// or a batch for: one made up `"batch_id": "o12345"` six times when told to list the
/// activity), then the latest changes; `otherwise` when nothing has changed yet.
fn undo_the_latest(ctx: &Ctx<'_>, wrong: Text, otherwise: Text) -> Result<Text, OpError> {
    Ok(match latest_changes(ctx, undoable_by(ctx))? {
        Some((first, latest)) => Text::new(
            "{wrong} The latest change is id {first}: to undo it, call undo with audit_ids [{first}]. The latest changes, newest first:\n{latest}\nFor another one, call undo with its id.",
        )
        .with_text("wrong", &wrong)
        .with("first", first)
        .with("latest", latest),
        None => otherwise,
    })
}

fn unknown_entry(ctx: &Ctx<'_>, id: i64) -> Result<Text, OpError> {
    undo_the_latest(
        ctx,
        Text::new("No activity entry with id {id}.").with("id", id),
        Text::new("No activity entry with id {id}. Call list_activity to find ids.").with("id", id),
    )
}

fn unknown_batch(ctx: &Ctx<'_>, batch: &str) -> Result<Text, OpError> {
    undo_the_latest(
        ctx,
        Text::new("No changes with batch id {batch}.").with("batch", batch),
        Text::new("No changes with batch id {batch}, and nothing has been changed yet.")
            .with("batch", batch),
    )
}

/// "Undo the last change": the whole call that made the latest change the caller could undo,
/// read as that call's batch id so a confirmation undoes this change and not one made while it
/// waited. A small model asked to undo the last change called `undo {}` up to six times when
/// told to name it.
fn the_latest_call(ctx: &mut Ctx<'_>) -> Result<Vec<AuditRow>, OpError> {
    let Some(latest) = latest_rows(ctx, 1, undoable_by(ctx))?.pop() else {
        return Err(OpError::invalid(
            "",
            Text::new("Nothing has been changed yet, so there is nothing to undo."),
        ));
    };
    ctx.resolved_input = Some(serde_json::json!({ "batch_id": latest.batch_id }));
    store::audit::batch(ctx.db, ctx.household_id(), ctx.me(), &latest.batch_id).or_internal()
}

pub(crate) fn undo(ctx: &mut Ctx<'_>, input: UndoInput) -> Result<UndoResult, OpError> {
    if input.audit_ids.len() > ops::limits::BULK {
        return Err(OpError::invalid(
            "/audit_ids",
            Text::new("Undo at most {max} entries at once; pass batch_id to undo a whole call.")
                .with("max", ops::limits::BULK),
        ));
    }
    let mut entries = match (&input.batch_id, input.audit_ids.is_empty()) {
        (Some(_), false) => {
            return Err(OpError::invalid("", Text::new("Give audit_ids or batch_id, not both.")));
        }
        (None, true) => the_latest_call(ctx)?,
        (Some(batch), true) => {
            let rows =
                store::audit::batch(ctx.db, ctx.household_id(), ctx.me(), batch).or_internal()?;
            if rows.is_empty() {
                return Err(OpError::not_found(unknown_batch(ctx, batch)?));
            }
            rows
        }
        (None, false) => {
            let ids: Vec<i64> = input.audit_ids.iter().map(|id| id.get()).collect();
            let rows =
                store::audit::get_many(ctx.db, ctx.household_id(), ctx.me(), &ids).or_internal()?;
            for (i, id) in input.audit_ids.iter().enumerate() {
                if !rows.iter().any(|r| r.id == id.get()) {
                    return Err(OpError::invalid(
                        format!("/audit_ids/{i}"),
                        unknown_entry(ctx, id.get())?,
                    ));
                }
            }
            rows
        }
    };
    entries.sort_by_key(|e| std::cmp::Reverse(e.id));
    entries.dedup_by_key(|e| e.id);
    let mut reverted = Vec::with_capacity(entries.len());
    let mut restored_members = false;
    for entry in entries {
        let mine = entry.member_id == Some(ctx.me());
        let hidden = entry.private_to.is_some_and(|member| member != ctx.me());
        if !by_a_person(ctx)
            && let Some(why) = only_a_person_undoes(entry.entity)
        {
            return Err(OpError::forbidden(why));
        }
        if let Some(by) = entry.undone_by {
            if hidden {
                return Err(OpError::conflict(Text::new(
                    "Part of this change was already undone; nothing was changed.",
                )));
            }
            return Err(OpError::conflict(
                Text::new("Change {id} ({summary}) was already undone by entry {by}; nothing was changed.")
                    .with("id", entry.id)
                    .with("summary", entry_view(&entry, Language::English)?.summary)
                    .with("by", by),
            ));
        }
        if !snapshot::is_known(entry.entity.as_str())
            || (entry.before_state.is_none() && entry.after_state.is_none())
        {
            return Err(OpError::conflict(
                Text::new("Change {id} cannot be undone.").with("id", entry.id),
            ));
        }
        if matches!(entry.entity, EntityKind::Household | EntityKind::Member)
            && !ctx.caller.is_owner()
        {
            return Err(OpError::forbidden(Text::new(
                "Only an owner can undo changes to the household or its members.",
            )));
        }
        let before = parse_state(entry.before_state.as_deref())?;
        let after = parse_state(entry.after_state.as_deref())?;
        let current = ctx.snapshot(entry.entity, entry.entity_id)?;
        bank_undo_allowed(ctx, &entry, before.as_ref(), current.as_ref())?;
        // An item that has become someone else's private item since is theirs to undo; a change
        // the caller made themselves (a batch touching hidden items) stays theirs to revert.
        let private_now = [&current, &before, &after]
            .into_iter()
            .filter_map(|state| ctx.private_to(entry.entity, state.as_ref()))
            .any(|member| member != ctx.me());
        if private_now && !mine {
            return Err(OpError::not_found(
                Text::new("No activity entry with id {id} that you can undo. Call list_activity to find ids.")
                    .with("id", entry.id),
            ));
        }
        let comparable = |state: &Option<Value>| -> Result<Option<Value>, OpError> {
            state
                .as_ref()
                .map(|s| snapshot::comparable(entry.entity.as_str(), s))
                .transpose()
                .or_internal()
        };
        if comparable(&current)? != comparable(&after)? {
            if hidden {
                return Err(OpError::conflict(Text::new(
                    "Something this change touched was changed since by someone else; nothing was changed.",
                )));
            }
            let view = entry_view(&entry, Language::English)?;
            return Err(OpError::conflict(
                Text::new("{entity} {entity_id} changed after \"{summary}\" (entry {id}); undo the later changes first, or edit it directly. Nothing was changed.")
                    .with("entity", entry.entity)
                    .with("entity_id", entry.entity_id)
                    .with("summary", view.summary)
                    .with("id", entry.id),
            ));
        }
        snapshot::restore(ctx.db, ctx.household_id(), entry.entity.as_str(), entry.entity_id, before.as_ref())
            .map_err(|err| match err {
                store::StoreError::Constraint(_) => OpError::conflict(
                    Text::new("Cannot bring back {entity} {entity_id}: something it refers to (a category, payment method or member) was deleted since. Undo that deletion first; list_activity shows it. Nothing was changed.")
                        .with("entity", entry.entity)
                        .with("entity_id", entry.entity_id),
                ),
                other => crate::transactions::internal(other),
            })?;
        if entry.entity == EntityKind::BankConnection && before.is_none() {
            // The link undone: its access goes with it.
            store::banks::forget_credentials(ctx.db, ctx.household_id(), entry.entity_id)
                .or_internal()?;
        }
        restored_members |= entry.entity == EntityKind::Member;
        // Undoing an undo brings the original change back, which can then be undone again.
        if let Some(original) = entry.undo_of {
            store::audit::clear_undone(ctx.db, original).or_internal()?;
        }
        // The change's own summary, written in the reader's language with the line around it.
        let line = Text::new("Undid: {summary}");
        let line = match serde_json::from_str::<Text>(&entry.summary) {
            Ok(summary) => line.with_text("summary", &summary),
            Err(_) => line.with("summary", &entry.summary),
        };
        ctx.undo_of = Some(entry.id);
        let recorded = ctx.changes.len();
        ctx.record(entry.entity, entry.entity_id, current, line)?;
        ctx.undo_of = None;
        if let Some(change) = ctx.changes.get(recorded)
            && let Some(audit_id) = change.audit_id
        {
            store::audit::mark_undone(ctx.db, entry.id, audit_id).or_internal()?;
        }
        reverted.push(entry.id);
    }
    if restored_members
        && store::households::count_owners(ctx.db, ctx.household_id()).or_internal()? == 0
    {
        return Err(OpError::conflict(Text::new(
            "Undoing this would leave the household without an owner; make someone an owner first. Nothing was changed.",
        )));
    }
    Ok(UndoResult { reverted })
}
