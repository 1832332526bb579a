//! Subscription handlers.

use domain::{
    Date, Text,
    entities::{EntityKind, SubscriptionStatus},
};
use ops::{
    OpError,
    common::{IdInput, Page, Patch},
    household::Removed,
    resolve::{
        CategoryId, FutureDate, IsoDate, MemberId, NearDate, PaymentMethodId, SubscriptionId,
    },
    subscriptions::*,
};
use store::subscriptions::{self as subs, SubscriptionRow};

use crate::{
    ctx::Ctx, input, refs::check_category, series::SeriesParts, subscription_rules,
    transactions::StoreExt, views,
};

pub(crate) fn list(
    ctx: &mut Ctx<'_>,
    input: ListSubscriptionsInput,
) -> Result<Page<SubscriptionSummary>, OpError> {
    let (limit, offset) = input::page_window(input.limit, input.cursor.as_deref())?;
    let sort = input.sort.unwrap_or(SubscriptionSort::Name);
    if let Some(order) = page_in_sql(&input, sort) {
        // Only the page is read: what it is filtered and ordered by is in the rows as stored.
        let filter = subs::PageFilter {
            category_id: input.category_id.map(|id| id.get()),
            uncategorised: input.uncategorised == Some(true),
            payment_method_id: input.payment_method_id.map(|id| id.get()),
            owner_id: input.owner_id.map(|id| id.get()),
            visibility: input.visibility,
        };
        let (rows, total) = subs::list_page(
            ctx.db,
            ctx.household_id(),
            Some(ctx.me()),
            &filter,
            order,
            limit,
            offset,
        )
        .or_internal()?;
        let items: Vec<SubscriptionSummary> =
            rows.iter().map(|row| views::subscription_summary(row, ctx.today)).collect();
        let next_cursor = ops::common::next_cursor(offset, items.len(), total);
        return Ok(Page { items, total, next_cursor });
    }
    let text = input.text.as_deref().map(str::to_lowercase);
    let tag = input.tag.as_deref().map(str::to_lowercase);
    let rows = ctx.visible_subscriptions()?;
    // Views are built for the page only: a list request holds rows, not a view of each, so
    // its memory does not grow with the household's size times the view's.
    let needs_next = input.due_before.is_some() || sort == SubscriptionSort::NextCharge;
    let mut items: Vec<(&SubscriptionRow, Option<Date>)> = Vec::new();
    for row in rows.iter() {
        if input.category_id.is_some_and(|id| row.category_id != Some(id.get()))
            || (input.uncategorised == Some(true) && row.category_id.is_some())
            // A hidden card (another member's private one) matches no filter, so ids cannot be probed.
            || input.payment_method_id.is_some_and(|id| row.payment_method_id != Some(id.get()) || row.payment_method_name.is_none())
            || input.owner_id.is_some_and(|id| row.owner_id != id.get())
            || input.visibility.is_some_and(|v| row.visibility != v)
            || tag.as_ref().is_some_and(|tag| !row.tags.iter().any(|t| t.to_lowercase() == *tag))
            || text.as_ref().is_some_and(|text| {
                !(row.name.to_lowercase().contains(text)
                    || row.notes.as_deref().is_some_and(|n| n.to_lowercase().contains(text))
                    || row.url.as_deref().is_some_and(|u| u.to_lowercase().contains(text)))
            })
        {
            continue;
        }
        if !input.status.is_empty()
            && !input.status.contains(&views::effective_status(row, ctx.today))
        {
            continue;
        }
        let next =
            if needs_next { views::next_charge(row, ctx.today).map(|o| o.date) } else { None };
        if let Some(due) = input.due_before
            && next.is_none_or(|next| next > due.date())
        {
            continue;
        }
        items.push((row, next));
    }
    match sort {
        // The store lists by name already.
        SubscriptionSort::Name => {}
        SubscriptionSort::NextCharge => {
            items.sort_by(|a, b| (a.1.is_none(), &a.1, a.0.id).cmp(&(b.1.is_none(), &b.1, b.0.id)))
        }
        SubscriptionSort::Price => items.sort_by_key(|(row, _)| {
            let price = views::current_price(row, ctx.today);
            (std::cmp::Reverse(row.cycle.monthly_minor(price)), row.id)
        }),
        SubscriptionSort::Created => items.sort_by_key(|(row, _)| row.id),
    }
    let total = items.len() as u64;
    let page: Vec<SubscriptionSummary> = items
        .into_iter()
        .skip(offset as usize)
        .take(limit as usize)
        .map(|(row, _)| views::subscription_summary(row, ctx.today))
        .collect();
    let next_cursor = ops::common::next_cursor(offset, page.len(), total);
    Ok(Page { items: page, total, next_cursor })
}

/// The order to page in SQL, when nothing the list asks for is computed: a status today, the
/// next charge, the price, or text and tags matched ignoring case as Rust folds it (SQLite
/// folds only ASCII).
fn page_in_sql(input: &ListSubscriptionsInput, sort: SubscriptionSort) -> Option<subs::PageOrder> {
    if !input.status.is_empty()
        || input.due_before.is_some()
        || input.text.is_some()
        || input.tag.is_some()
    {
        return None;
    }
    match sort {
        SubscriptionSort::Name => Some(subs::PageOrder::Name),
        SubscriptionSort::Created => Some(subs::PageOrder::Created),
        SubscriptionSort::NextCharge | SubscriptionSort::Price => None,
    }
}

pub(crate) fn get(
    ctx: &mut Ctx<'_>,
    input: IdInput<SubscriptionId>,
) -> Result<SubscriptionDetail, OpError> {
    views::subscription_detail(ctx, &subscription_rules::load(ctx, input.id.get())?)
}

pub(crate) fn create(
    ctx: &mut Ctx<'_>,
    input: CreateSubscriptionInput,
) -> Result<Subscription, OpError> {
    refuse_a_second(ctx, &input.name, None)?;
    subscription_rules::create(ctx, input, &[])
}

/// Refuses a subscription named, when added or renamed, as another the caller sees and has not
/// cancelled: most likely the same one added again (a small model "paused" FitLife Gym by
/// adding a second FitLife Gym, and "raised" Spotify's price the same way), so the refusal
/// names what changes the one there is. A cancelled one may be subscribed to again (and a
/// cancelled one renamed freely); an import skips what it already has by merchant, and a name
/// one cannot see is no refusal (it would tell that it exists).
fn refuse_a_second(ctx: &Ctx<'_>, name: &str, renamed: Option<i64>) -> Result<(), OpError> {
    let folded = domain::names::fold(name.trim());
    let kept = ctx.visible_subscriptions()?;
    let Some(row) = kept.iter().find(|row| {
        Some(row.id) != renamed
            && row.status != SubscriptionStatus::Cancelled
            && domain::names::fold(&row.name) == folded
    }) else {
        return Ok(());
    };
    Err(OpError::conflict(
        Text::new("You already have {name} (id {id}). To change it, call update_subscription, change_price, reschedule_subscription, pause_subscription or cancel_subscription with id {id}; to add another, give it a name of its own.")
            .with("name", &row.name)
            .with("id", row.id),
    ))
}

pub(crate) fn update(
    ctx: &mut Ctx<'_>,
    input: UpdateSubscriptionInput,
) -> Result<Subscription, OpError> {
    let mut row = subscription_rules::load(ctx, input.id.get())?;
    let before = ctx.snapshot(EntityKind::Subscription, row.id)?;
    if let Some(name) = &input.name {
        row.name = input::clean_name("/name", name, ops::limits::NAME)?;
        if row.status != SubscriptionStatus::Cancelled {
            refuse_a_second(ctx, &row.name, Some(row.id))?;
        }
    }
    match &input.url {
        Patch::Keep => {}
        Patch::Clear => row.url = None,
        Patch::Set(url) => row.url = Some(input::clean_url("/url", url)?),
    }
    match &input.notes {
        Patch::Keep => {}
        Patch::Clear => row.notes = None,
        Patch::Set(notes) => {
            row.notes = Some(input::clean_notes("/notes", notes)?).filter(|n| !n.is_empty())
        }
    }
    apply_assignments(
        ctx,
        &mut row,
        &input.category_id,
        &input.payment_method_id,
        input.tags.as_deref(),
    )?;
    let moves_ownership = input.owner_id.is_some_and(|id| id.get() != row.owner_id)
        || input.visibility.is_some_and(|v| v != row.visibility);
    if moves_ownership && row.owner_id != ctx.me() && !ctx.caller.is_owner() {
        return Err(OpError::forbidden(
            Text::new("Only {owner}, who owns {name}, or a household owner can change who owns it or who sees it.")
                .with("owner", &row.owner_name)
                .with("name", &row.name),
        ));
    }
    if let Some(MemberId(owner_id)) = input.owner_id {
        row.owner_name = subscription_rules::check_member(ctx, "/owner_id", owner_id)?;
        row.owner_id = owner_id;
    }
    if let Some(visibility) = input.visibility {
        row.visibility = visibility;
    }
    subscription_rules::check_private_owner(ctx, &row)?;
    save(ctx, &mut row)?;
    let summary = Text::new("Updated {name}").with("name", &row.name);
    ctx.record(EntityKind::Subscription, row.id, before, summary)?;
    subscription_rules::reload_view(ctx, row.id)
}

/// Sets category, payment method and tags (shared by update and bulk update).
fn apply_assignments(
    ctx: &Ctx<'_>,
    row: &mut SubscriptionRow,
    category: &Patch<CategoryId>,
    payment_method: &Patch<PaymentMethodId>,
    tags: Option<&[String]>,
) -> Result<(), OpError> {
    match category {
        Patch::Keep => {}
        Patch::Clear => row.category_id = None,
        Patch::Set(id) => row.category_id = Some(check_category(ctx, "/category_id", *id)?),
    }
    match payment_method {
        Patch::Keep => {}
        Patch::Clear => row.payment_method_id = None,
        Patch::Set(PaymentMethodId(id)) => {
            subscription_rules::check_payment_method(ctx, "/payment_method_id", *id)?;
            row.payment_method_id = Some(*id);
        }
    }
    if let Some(tags) = tags {
        row.tags = input::clean_tags("/tags", tags)?;
    }
    Ok(())
}

fn save(ctx: &Ctx<'_>, row: &mut SubscriptionRow) -> Result<(), OpError> {
    row.updated_at = ctx.now_text();
    subs::update(ctx.db, row).or_internal()?;
    subs::set_tags(ctx.db, row.id, &row.tags).or_internal()?;
    Ok(())
}

pub(crate) fn reschedule(
    ctx: &mut Ctx<'_>,
    input: RescheduleSubscriptionInput,
) -> Result<Subscription, OpError> {
    let mut row = subscription_rules::load(ctx, input.id.get())?;
    let before = ctx.snapshot(EntityKind::Subscription, row.id)?;
    if let Some(cycle) = &input.cycle {
        row.cycle = input::parse_cycle("/cycle", *cycle)?;
    }
    if let Some(next) = input.next_charge_on {
        let anchor = next.date();
        subscription_rules::check_first_charge("/next_charge_on", anchor, ctx.today)?;
        // Keep the price history meaningful: the first price must apply from the new anchor.
        if let Some(&(first, minor)) = row.prices.first()
            && anchor < first
        {
            subs::set_price(ctx.db, row.id, anchor, minor).or_internal()?;
        }
        row.anchor_on = anchor;
    }
    match &input.trial_ends_on {
        Patch::Keep => {}
        Patch::Clear => {
            row.trial_ends_on = None;
            if row.status == SubscriptionStatus::Trial {
                row.status = SubscriptionStatus::Active;
            }
        }
        Patch::Set(date) => {
            let end = date.date();
            row.trial_ends_on = Some(end);
            if row.status == SubscriptionStatus::Active && end > ctx.today {
                row.status = SubscriptionStatus::Trial;
            }
        }
    }
    match &input.ends_on {
        Patch::Keep => {}
        Patch::Clear => row.ends_on = None,
        Patch::Set(date) => {
            let end = date.date();
            if end < row.anchor_on {
                return Err(OpError::invalid(
                    "/ends_on",
                    Text::new("ends_on ({end}) is before the first charge ({first}).")
                        .with("end", end)
                        .with_date("first", row.anchor_on),
                ));
            }
            row.ends_on = Some(end);
        }
    }
    save(ctx, &mut row)?;
    let summary = Text::new("Rescheduled {name}: {cycle} from {anchor}")
        .with("name", &row.name)
        .with_cycle("cycle", row.cycle)
        .with_date("anchor", row.anchor_on);
    ctx.record(EntityKind::Subscription, row.id, before, summary)?;
    subscription_rules::reload_view(ctx, row.id)
}

pub(crate) fn change_price(
    ctx: &mut Ctx<'_>,
    input: ChangePriceInput,
) -> Result<Subscription, OpError> {
    let row = subscription_rules::load(ctx, input.id.get())?;
    if let Some(code) = &input.currency {
        let currency = code.currency();
        if currency != row.currency {
            return Err(OpError::invalid(
                "/currency",
                Text::new("{name} is billed in {currency}; give the new price in {currency}.")
                    .with("name", &row.name)
                    .with("currency", row.currency),
            ));
        }
    }
    let new_price = input::minor_units("/amount", input.amount.money(row.currency))?;
    let effective_on = input.effective_on.map(IsoDate::date).unwrap_or(ctx.today);
    let old_price = SeriesParts::of(&row).series(&row).amount_on(effective_on.max(row.anchor_on));
    let before = ctx.snapshot(EntityKind::Subscription, row.id)?;
    subs::set_price(ctx.db, row.id, effective_on, new_price).or_internal()?;
    let summary = Text::new("Price of {name} from {date}: {old} → {new}")
        .with("name", &row.name)
        .with_date("date", effective_on)
        .with_money("old", domain::Money::new(old_price, row.currency))
        .with_money("new", domain::Money::new(new_price, row.currency));
    ctx.record(EntityKind::Subscription, row.id, before, summary)?;
    subscription_rules::reload_view(ctx, row.id)
}

/// Pauses from `from` until `until`; false when it was already paused then.
fn apply_pause(
    ctx: &Ctx<'_>,
    row: &mut SubscriptionRow,
    from: Date,
    until: Option<Date>,
) -> Result<bool, OpError> {
    if let Some(until) = until
        && until <= from
    {
        return Err(OpError::invalid(
            "/until",
            Text::new("until ({until}) must be after from ({from}).")
                .with("until", until)
                .with("from", from),
        ));
    }
    if row.pauses.iter().any(|p| p.from <= from && p.until.is_none_or(|u| u > from)) {
        return Ok(false);
    }
    if row.status == SubscriptionStatus::Cancelled {
        return Err(OpError::conflict(
            Text::new("{name} is cancelled; resume it before pausing.").with("name", &row.name),
        ));
    }
    subs::add_pause(ctx.db, row.id, from, until).or_internal()?;
    row.status = SubscriptionStatus::Paused;
    save(ctx, row)?;
    Ok(true)
}

/// Resumes on `on` a paused or cancelled subscription; false when it was neither.
fn apply_resume(ctx: &Ctx<'_>, row: &mut SubscriptionRow, on: Date) -> Result<bool, OpError> {
    let mut changed = false;
    for pause in &row.pauses {
        if pause.until.is_none_or(|u| u > on) {
            if pause.from >= on {
                subs::delete_pause(ctx.db, pause.id).or_internal()?;
            } else {
                subs::set_pause_until(ctx.db, pause.id, Some(on)).or_internal()?;
            }
            changed = true;
        }
    }
    if row.status == SubscriptionStatus::Cancelled || row.status == SubscriptionStatus::Paused {
        row.ends_on = if row.status == SubscriptionStatus::Cancelled { None } else { row.ends_on };
        row.status = if row.trial_ends_on.is_some_and(|end| end > ctx.today) {
            SubscriptionStatus::Trial
        } else {
            SubscriptionStatus::Active
        };
        changed = true;
    }
    if changed {
        save(ctx, row)?;
    }
    Ok(changed)
}

/// Cancels with the last possible charge on `ends_on`; false when already so.
fn apply_cancel(ctx: &Ctx<'_>, row: &mut SubscriptionRow, ends_on: Date) -> Result<bool, OpError> {
    if row.status == SubscriptionStatus::Cancelled && row.ends_on == Some(ends_on) {
        return Ok(false);
    }
    row.status = SubscriptionStatus::Cancelled;
    row.ends_on = Some(ends_on);
    save(ctx, row)?;
    Ok(true)
}

/// Loads subscription `id`, lets `change` change it and say what it did, and records that
/// against the subscription as it was before: what pause, resume and cancel share.
fn change_recorded(
    ctx: &mut Ctx<'_>,
    id: i64,
    change: impl FnOnce(&mut Ctx<'_>, &mut SubscriptionRow) -> Result<Text, OpError>,
) -> Result<Subscription, OpError> {
    let mut row = subscription_rules::load(ctx, id)?;
    let before = ctx.snapshot(EntityKind::Subscription, row.id)?;
    let summary = change(ctx, &mut row)?;
    ctx.record(EntityKind::Subscription, row.id, before, summary)?;
    subscription_rules::reload_view(ctx, row.id)
}

pub(crate) fn pause(
    ctx: &mut Ctx<'_>,
    input: PauseSubscriptionInput,
) -> Result<Subscription, OpError> {
    change_recorded(ctx, input.id.get(), |ctx, row| {
        let from = input.from.map(NearDate::date).unwrap_or(ctx.today);
        let until = input.until.map(FutureDate::date);
        if !apply_pause(ctx, row, from, until)? {
            return Err(OpError::conflict(Text::new("{name} is already paused on {from}. Call resume_subscription first to change the pause.").with("name", &row.name).with("from", from)));
        }
        let summary = match until {
            Some(until) => {
                Text::new("Paused {name} from {from} until {until}").with("until", until)
            }
            None => Text::new("Paused {name} from {from}"),
        };
        Ok(summary.with("name", &row.name).with("from", from))
    })
}

pub(crate) fn resume(
    ctx: &mut Ctx<'_>,
    input: ResumeSubscriptionInput,
) -> Result<Subscription, OpError> {
    change_recorded(ctx, input.id.get(), |ctx, row| {
        let on = input.on.map(FutureDate::date).unwrap_or(ctx.today);
        if !apply_resume(ctx, row, on)? {
            return Err(OpError::conflict(
                Text::new("{name} is not paused or cancelled; nothing to resume.")
                    .with("name", &row.name),
            ));
        }
        Ok(Text::new("Resumed {name} on {on}").with("name", &row.name).with_date("on", on))
    })
}

pub(crate) fn cancel(
    ctx: &mut Ctx<'_>,
    input: CancelSubscriptionInput,
) -> Result<Subscription, OpError> {
    change_recorded(ctx, input.id.get(), |ctx, row| {
        let ends_on = input.ends_on.map(NearDate::date).unwrap_or(ctx.today);
        apply_cancel(ctx, row, ends_on)?;
        Ok(Text::new("Cancelled {name}, ending {end}")
            .with("name", &row.name)
            .with_date("end", ends_on))
    })
}

fn apply_delete(ctx: &mut Ctx<'_>, row: &SubscriptionRow) -> Result<(), OpError> {
    let before = ctx.snapshot(EntityKind::Subscription, row.id)?;
    subs::delete(ctx.db, ctx.household_id(), row.id).or_internal()?;
    ctx.record(
        EntityKind::Subscription,
        row.id,
        before,
        Text::new("Deleted {name}").with("name", &row.name),
    )
}

pub(crate) fn delete(
    ctx: &mut Ctx<'_>,
    input: IdInput<SubscriptionId>,
) -> Result<Removed, OpError> {
    let row = subscription_rules::load(ctx, input.id.get())?;
    apply_delete(ctx, &row)?;
    Ok(Removed { id: row.id, name: row.name })
}

pub(crate) fn bulk_update(
    ctx: &mut Ctx<'_>,
    input: BulkUpdateInput,
) -> Result<BulkResult, OpError> {
    if input.ids.is_empty() || input.ids.len() > ops::limits::BULK {
        return Err(OpError::invalid(
            "/ids",
            Text::new("Give 1 to {max} subscription ids.").with("max", ops::limits::BULK),
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for (i, id) in input.ids.iter().enumerate() {
        if !seen.insert(*id) {
            return Err(OpError::invalid(
                format!("/ids/{i}"),
                Text::new("Subscription {id} is listed twice.").with("id", id),
            ));
        }
    }
    if input.action != BulkAction::Update
        && (!input.category_id.is_keep()
            || !input.payment_method_id.is_keep()
            || input.tags.is_some())
    {
        return Err(OpError::invalid(
            "/action",
            Text::new("category_id, payment_method_id and tags go with action \"update\" only."),
        ));
    }
    // Load everything first: one unknown or invisible id fails the whole call.
    let mut rows = Vec::with_capacity(input.ids.len());
    for (i, id) in input.ids.iter().enumerate() {
        match subs::get(ctx.db, ctx.household_id(), Some(ctx.me()), id.get()) {
            Ok(row) => rows.push(row),
            Err(store::StoreError::NotFound) => {
                return Err(OpError::invalid(
                    format!("/ids/{i}"),
                    ctx.unknown(EntityKind::Subscription, id.get()),
                ));
            }
            Err(err) => return Err(crate::transactions::internal(err)),
        }
    }
    let mut items = Vec::with_capacity(rows.len());
    for mut row in rows {
        let before = ctx.snapshot(EntityKind::Subscription, row.id)?;
        let (changed, summary) = match input.action {
            BulkAction::Update => {
                apply_assignments(
                    ctx,
                    &mut row,
                    &input.category_id,
                    &input.payment_method_id,
                    input.tags.as_deref(),
                )?;
                save(ctx, &mut row)?;
                (true, Text::new("Updated {name}"))
            }
            BulkAction::Pause => {
                (apply_pause(ctx, &mut row, ctx.today, None)?, Text::new("Paused {name}"))
            }
            BulkAction::Resume => {
                (apply_resume(ctx, &mut row, ctx.today)?, Text::new("Resumed {name}"))
            }
            BulkAction::Cancel => {
                (apply_cancel(ctx, &mut row, ctx.today)?, Text::new("Cancelled {name}"))
            }
            BulkAction::Delete => {
                apply_delete(ctx, &row)?;
                items.push(BulkItem { id: row.id, name: row.name.clone(), changed: true });
                continue;
            }
        };
        let recorded_before = ctx.changes.len();
        if changed {
            ctx.record(EntityKind::Subscription, row.id, before, summary.with("name", &row.name))?;
        }
        items.push(BulkItem {
            id: row.id,
            name: row.name.clone(),
            changed: ctx.changes.len() > recorded_before,
        });
    }
    Ok(BulkResult { items })
}
