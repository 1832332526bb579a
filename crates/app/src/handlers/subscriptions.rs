//! Subscription handlers.

use domain::{
    Date, Text,
    entities::{SubscriptionStatus, Visibility},
};
use ops::{
    OpError,
    common::{Page, Patch},
    household::{IdInput, Removed},
    subscriptions::*,
};
use store::subscriptions::{self as subs, SubscriptionRow};

use crate::{
    ctx::{Ctx, invalid},
    handlers::{charges::charge_view, page_window},
    invoke::StoreExt,
    jobs,
    views::{self, SeriesParts, amount, not_found_subscription, subscription_view},
};

pub(crate) const MAX_BULK: usize = 500;

fn load(ctx: &Ctx<'_>, id: i64) -> Result<SubscriptionRow, OpError> {
    subs::get(ctx.db, ctx.household_id(), Some(ctx.me()), id)
        .or_not_found(|| not_found_subscription(id))
}

fn reload_view(ctx: &Ctx<'_>, id: i64) -> Result<Subscription, OpError> {
    Ok(subscription_view(&load(ctx, id)?, ctx.today))
}

pub(crate) fn list(
    ctx: &mut Ctx<'_>,
    input: ListSubscriptionsInput,
) -> Result<Page<Subscription>, OpError> {
    let (limit, offset) = page_window(input.limit, input.cursor.as_deref())?;
    let mut statuses = Vec::new();
    for (i, status) in input.status.iter().enumerate() {
        statuses.push(SubscriptionStatus::parse(status).ok_or_else(|| {
            invalid(
                &format!("/status/{i}"),
                Text::new("{value} is not a status; use trial, active, paused or cancelled.")
                    .with("value", status),
            )
        })?);
    }
    let visibility = input
        .visibility
        .as_deref()
        .map(|v| views::parse_visibility("/visibility", v))
        .transpose()?;
    let due_before =
        views::parse_opt_date("/due_before", input.due_before.as_deref())?.map(views::date_text);
    let text = input.text.as_deref().map(str::to_lowercase);
    let tag = input.tag.as_deref().map(str::to_lowercase);
    let rows = ctx.visible_subscriptions()?;
    let mut items: Vec<(&SubscriptionRow, Subscription)> = Vec::new();
    for row in rows.iter() {
        if input.category_id.is_some_and(|id| row.category_id != Some(id))
            || (input.uncategorised == Some(true) && row.category_id.is_some())
            // A hidden card (another member's private one) matches no filter, so ids cannot be probed.
            || input.payment_method_id.is_some_and(|id| row.payment_method_id != Some(id) || row.payment_method_name.is_none())
            || input.owner_id.is_some_and(|id| row.owner_id != id)
            || visibility.is_some_and(|v| row.visibility != v)
            || tag.as_ref().is_some_and(|tag| !row.tags.iter().any(|t| t.to_lowercase() == *tag))
            || text.as_ref().is_some_and(|text| {
                !(row.name.to_lowercase().contains(text)
                    || row.notes.as_deref().is_some_and(|n| n.to_lowercase().contains(text))
                    || row.url.as_deref().is_some_and(|u| u.to_lowercase().contains(text)))
            })
        {
            continue;
        }
        if !statuses.is_empty() && !statuses.contains(&views::effective_status(row, ctx.today)) {
            continue;
        }
        let view = subscription_view(row, ctx.today);
        if let Some(due) = &due_before
            && view.next_charge_on.as_deref().is_none_or(|next| next > due.as_str())
        {
            continue;
        }
        items.push((row, view));
    }
    match input.sort.as_deref() {
        None | Some("name") => {}
        Some("next_charge") => items.sort_by(|a, b| {
            (a.1.next_charge_on.is_none(), &a.1.next_charge_on, a.0.id).cmp(&(
                b.1.next_charge_on.is_none(),
                &b.1.next_charge_on,
                b.0.id,
            ))
        }),
        Some("price") => items.sort_by_key(|(row, _)| {
            let price = views::current_price(row, ctx.today);
            (std::cmp::Reverse(row.cycle.monthly_minor(price)), row.id)
        }),
        Some("created") => items.sort_by_key(|(row, _)| row.id),
        Some(other) => {
            return Err(invalid(
                "/sort",
                Text::new("{value} is not a sort order; use name, next_charge, price or created.")
                    .with("value", other),
            ));
        }
    }
    let total = items.len() as u64;
    let page: Vec<Subscription> =
        items.into_iter().skip(offset as usize).take(limit as usize).map(|(_, v)| v).collect();
    let next_cursor = ops::common::next_cursor(offset, page.len(), total);
    Ok(Page { items: page, total, next_cursor })
}

pub(crate) fn get(ctx: &mut Ctx<'_>, input: IdInput) -> Result<SubscriptionDetail, OpError> {
    let row = load(ctx, input.id)?;
    let parts = SeriesParts::of(&row);
    let series = parts.series(&row);
    let filter =
        store::charges::ChargeFilter { subscription_id: Some(row.id), ..Default::default() };
    let (charges, _) =
        store::charges::list(ctx.db, ctx.household_id(), Some(ctx.me()), &filter, 12, 0)
            .or_internal()?;
    let next_charges = series
        .upcoming(ctx.today, 3)
        .into_iter()
        .map(|o| views::projected_charge(&row, o))
        .collect();
    Ok(SubscriptionDetail {
        subscription: subscription_view(&row, ctx.today),
        price_history: row
            .prices
            .iter()
            .map(|&(date, minor)| PricePoint {
                effective_on: date.to_string(),
                price: amount(minor, row.currency),
            })
            .collect(),
        pauses: row
            .pauses
            .iter()
            .map(|p| Pause { from: p.from.to_string(), until: p.until.map(|d| d.to_string()) })
            .collect(),
        recent_charges: charges.iter().map(charge_view).collect(),
        next_charges,
    })
}

/// Checks a category id belongs to the household.
pub(crate) fn check_category(ctx: &Ctx<'_>, pointer: &str, id: i64) -> Result<(), OpError> {
    store::organise::get_category(ctx.db, ctx.household_id(), Some(ctx.me()), id)
        .or_not_found(|| {
            Text::new("No category with id {id}. Call list_categories to find ids.").with("id", id)
        })
        .map_err(|err| match err {
            OpError::NotFound { message } => invalid(pointer, message),
            other => other,
        })?;
    Ok(())
}

/// Checks the caller can see a payment method.
pub(crate) fn check_payment_method(ctx: &Ctx<'_>, pointer: &str, id: i64) -> Result<(), OpError> {
    store::organise::get_payment_method(ctx.db, ctx.household_id(), Some(ctx.me()), id)
        .or_not_found(|| {
            Text::new("No payment method with id {id}. Call list_payment_methods to find ids.")
                .with("id", id)
        })
        .map_err(|err| match err {
            OpError::NotFound { message } => invalid(pointer, message),
            other => other,
        })?;
    Ok(())
}

fn check_member(ctx: &Ctx<'_>, pointer: &str, id: i64) -> Result<String, OpError> {
    match store::households::get_member(ctx.db, ctx.household_id(), id) {
        Ok(member) => Ok(member.name),
        Err(store::StoreError::NotFound) => Err(invalid(
            pointer,
            Text::new("No member with id {id}. Call list_members to find ids.").with("id", id),
        )),
        Err(err) => Err(crate::invoke::internal(err)),
    }
}

fn check_private_owner(ctx: &Ctx<'_>, row: &SubscriptionRow) -> Result<(), OpError> {
    if row.visibility == Visibility::Private && row.owner_id != ctx.me() {
        return Err(invalid(
            "/visibility",
            Text::new(
                "A private subscription is seen only by its owner, so only you can own your private subscriptions. Make it household-visible to give it to someone else.",
            ),
        ));
    }
    Ok(())
}

/// How far back a series may start: past charges are recorded from the first charge on, and a
/// series decades old is a typo more often than a history.
const MAX_YEARS_BACK: i16 = 10;

fn check_first_charge(pointer: &str, anchor: Date, today: Date) -> Result<(), OpError> {
    if anchor.year() < today.year() - MAX_YEARS_BACK {
        return Err(invalid(
            pointer,
            Text::new("{date} is more than {years} years ago; give the next charge date, or a first charge within the last {years} years.")
                .with("date", anchor)
                .with("years", MAX_YEARS_BACK),
        ));
    }
    Ok(())
}

pub(crate) fn create(
    ctx: &mut Ctx<'_>,
    input: CreateSubscriptionInput,
) -> Result<Subscription, OpError> {
    create_with_prices(ctx, input, &[])
}

/// [`create`], with price changes after the first charge (an import's history) set before
/// past charges are recorded and the change is audited.
pub(crate) fn create_with_prices(
    ctx: &mut Ctx<'_>,
    input: CreateSubscriptionInput,
    later_prices: &[(Date, i64)],
) -> Result<Subscription, OpError> {
    let name = views::clean_name("/name", &input.name, views::MAX_NAME)?;
    let currency = match &input.currency {
        Some(code) => views::parse_currency("/currency", code)?,
        None => ctx.household.currency,
    };
    let price = views::parse_amount("/amount", &input.amount, currency)?;
    let cycle = views::parse_cycle("/cycle", &input.cycle)?;
    let trial_ends_on = views::parse_opt_date("/trial_ends_on", input.trial_ends_on.as_deref())?;
    let next_charge_on = views::parse_opt_date("/next_charge_on", input.next_charge_on.as_deref())?;
    let Some(anchor_on) = next_charge_on.or(trial_ends_on) else {
        return Err(invalid(
            "/next_charge_on",
            Text::new(
                "Give next_charge_on (YYYY-MM-DD), the date of the next or first charge, or trial_ends_on for a free trial.",
            ),
        ));
    };
    if let (Some(next), Some(trial_end)) = (next_charge_on, trial_ends_on)
        && next < trial_end
    {
        return Err(invalid(
            "/next_charge_on",
            Text::new("The first charge ({next}) falls inside the free trial, which ends on {end}; leave next_charge_on out or set it on or after the trial's end.")
                .with("next", next)
                .with("end", trial_end),
        ));
    }
    check_first_charge("/next_charge_on", anchor_on, ctx.today)?;
    let ends_on = views::parse_opt_date("/ends_on", input.ends_on.as_deref())?;
    if let Some(end) = ends_on
        && end < anchor_on
    {
        return Err(invalid(
            "/ends_on",
            Text::new("ends_on ({end}) is before the first charge ({first}).")
                .with("end", end)
                .with("first", anchor_on),
        ));
    }
    let url = input.url.as_deref().map(|u| views::clean_url("/url", u)).transpose()?;
    let notes = input
        .notes
        .as_deref()
        .map(|n| views::clean_notes("/notes", n))
        .transpose()?
        .filter(|n| !n.is_empty());
    if let Some(id) = input.category_id {
        check_category(ctx, "/category_id", id)?;
    }
    if let Some(id) = input.payment_method_id {
        check_payment_method(ctx, "/payment_method_id", id)?;
    }
    let tags = views::clean_tags("/tags", &input.tags)?;
    let owner_id = input.owner_id.unwrap_or(ctx.me());
    let owner_name = check_member(ctx, "/owner_id", owner_id)?;
    let visibility = input
        .visibility
        .as_deref()
        .map(|v| views::parse_visibility("/visibility", v))
        .transpose()?
        .unwrap_or(Visibility::Household);
    let status = if trial_ends_on.is_some_and(|end| end > ctx.today) {
        SubscriptionStatus::Trial
    } else {
        SubscriptionStatus::Active
    };
    let now = ctx.now_text();
    let mut row = SubscriptionRow {
        id: 0,
        household_id: ctx.household_id(),
        owner_id,
        owner_name,
        name,
        url,
        notes,
        currency,
        cycle,
        anchor_on,
        status,
        trial_ends_on,
        ends_on,
        category_id: input.category_id,
        category_name: None,
        payment_method_id: input.payment_method_id,
        payment_method_name: None,
        visibility,
        charged_through: None,
        created_at: now.clone(),
        updated_at: now,
        tags: Vec::new(),
        prices: Vec::new(),
        pauses: Vec::new(),
    };
    check_private_owner(ctx, &row)?;
    let id = subs::insert(ctx.db, &row).or_internal()?;
    row.id = id;
    subs::set_tags(ctx.db, id, &tags).or_internal()?;
    subs::set_price(ctx.db, id, anchor_on, price).or_internal()?;
    for &(on, minor) in later_prices.iter().filter(|(on, _)| *on > anchor_on) {
        subs::set_price(ctx.db, id, on, minor).or_internal()?;
    }
    let row = load(ctx, id)?;
    jobs::materialise_subscription(ctx.db, &row, ctx.today).or_internal()?;
    let summary = Text::new("Added {name}: {price} {cycle}")
        .with("name", &row.name)
        .with("price", amount(price, currency).display)
        .with("cycle", cycle.describe());
    ctx.record("subscription", id, None, summary)?;
    reload_view(ctx, id)
}

pub(crate) fn update(
    ctx: &mut Ctx<'_>,
    input: UpdateSubscriptionInput,
) -> Result<Subscription, OpError> {
    let mut row = load(ctx, input.id)?;
    let before = ctx.snapshot("subscription", row.id)?;
    if let Some(name) = &input.name {
        row.name = views::clean_name("/name", name, views::MAX_NAME)?;
    }
    match &input.url {
        Patch::Keep => {}
        Patch::Clear => row.url = None,
        Patch::Set(url) => row.url = Some(views::clean_url("/url", url)?),
    }
    match &input.notes {
        Patch::Keep => {}
        Patch::Clear => row.notes = None,
        Patch::Set(notes) => {
            row.notes = Some(views::clean_notes("/notes", notes)?).filter(|n| !n.is_empty())
        }
    }
    apply_assignments(
        ctx,
        &mut row,
        &input.category_id,
        &input.payment_method_id,
        input.tags.as_deref(),
    )?;
    let moves_ownership = input.owner_id.is_some_and(|id| id != row.owner_id)
        || input.visibility.as_deref().is_some_and(|v| v != row.visibility.as_str());
    if moves_ownership && row.owner_id != ctx.me() && !ctx.caller.is_owner() {
        return Err(OpError::forbidden(
            Text::new("Only {owner}, who owns {name}, or a household owner can change who owns it or who sees it.")
                .with("owner", &row.owner_name)
                .with("name", &row.name),
        ));
    }
    if let Some(owner_id) = input.owner_id {
        row.owner_name = check_member(ctx, "/owner_id", owner_id)?;
        row.owner_id = owner_id;
    }
    if let Some(visibility) = &input.visibility {
        row.visibility = views::parse_visibility("/visibility", visibility)?;
    }
    check_private_owner(ctx, &row)?;
    save(ctx, &mut row)?;
    let summary = Text::new("Updated {name}").with("name", &row.name);
    ctx.record("subscription", row.id, before, summary)?;
    reload_view(ctx, row.id)
}

/// Sets category, payment method and tags (shared by update and bulk update).
fn apply_assignments(
    ctx: &Ctx<'_>,
    row: &mut SubscriptionRow,
    category: &Patch<i64>,
    payment_method: &Patch<i64>,
    tags: Option<&[String]>,
) -> Result<(), OpError> {
    match category {
        Patch::Keep => {}
        Patch::Clear => row.category_id = None,
        Patch::Set(id) => {
            check_category(ctx, "/category_id", *id)?;
            row.category_id = Some(*id);
        }
    }
    match payment_method {
        Patch::Keep => {}
        Patch::Clear => row.payment_method_id = None,
        Patch::Set(id) => {
            check_payment_method(ctx, "/payment_method_id", *id)?;
            row.payment_method_id = Some(*id);
        }
    }
    if let Some(tags) = tags {
        row.tags = views::clean_tags("/tags", tags)?;
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
    let mut row = load(ctx, input.id)?;
    let before = ctx.snapshot("subscription", row.id)?;
    if let Some(cycle) = &input.cycle {
        row.cycle = views::parse_cycle("/cycle", cycle)?;
    }
    if let Some(next) = &input.next_charge_on {
        let anchor = views::parse_date("/next_charge_on", next)?;
        check_first_charge("/next_charge_on", anchor, ctx.today)?;
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
            let end = views::parse_date("/trial_ends_on", date)?;
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
            let end = views::parse_date("/ends_on", date)?;
            if end < row.anchor_on {
                return Err(invalid(
                    "/ends_on",
                    Text::new("ends_on ({end}) is before the first charge ({first}).")
                        .with("end", end)
                        .with("first", row.anchor_on),
                ));
            }
            row.ends_on = Some(end);
        }
    }
    save(ctx, &mut row)?;
    let summary = Text::new("Rescheduled {name}: {cycle} from {anchor}")
        .with("name", &row.name)
        .with("cycle", row.cycle.describe())
        .with("anchor", row.anchor_on);
    ctx.record("subscription", row.id, before, summary)?;
    reload_view(ctx, row.id)
}

pub(crate) fn change_price(
    ctx: &mut Ctx<'_>,
    input: ChangePriceInput,
) -> Result<Subscription, OpError> {
    let row = load(ctx, input.id)?;
    if let Some(code) = &input.currency {
        let currency = views::parse_currency("/currency", code)?;
        if currency != row.currency {
            return Err(invalid(
                "/currency",
                Text::new("{name} is billed in {currency}; give the new price in {currency}.")
                    .with("name", &row.name)
                    .with("currency", row.currency),
            ));
        }
    }
    let new_price = views::parse_amount("/amount", &input.amount, row.currency)?;
    let effective_on =
        views::parse_opt_date("/effective_on", input.effective_on.as_deref())?.unwrap_or(ctx.today);
    let old_price = SeriesParts::of(&row).series(&row).amount_on(effective_on.max(row.anchor_on));
    let before = ctx.snapshot("subscription", row.id)?;
    subs::set_price(ctx.db, row.id, effective_on, new_price).or_internal()?;
    let summary = Text::new("Price of {name} from {date}: {old} → {new}")
        .with("name", &row.name)
        .with("date", effective_on)
        .with("old", amount(old_price, row.currency).display)
        .with("new", amount(new_price, row.currency).display);
    ctx.record("subscription", row.id, before, summary)?;
    reload_view(ctx, row.id)
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
        return Err(invalid(
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

pub(crate) fn pause(
    ctx: &mut Ctx<'_>,
    input: PauseSubscriptionInput,
) -> Result<Subscription, OpError> {
    let mut row = load(ctx, input.id)?;
    let from = views::parse_opt_date("/from", input.from.as_deref())?.unwrap_or(ctx.today);
    let until = views::parse_opt_date("/until", input.until.as_deref())?;
    let before = ctx.snapshot("subscription", row.id)?;
    if !apply_pause(ctx, &mut row, from, until)? {
        return Err(OpError::conflict(Text::new("{name} is already paused on {from}. Call resume_subscription first to change the pause.").with("name", &row.name).with("from", from)));
    }
    let summary = match until {
        Some(until) => Text::new("Paused {name} from {from} until {until}").with("until", until),
        None => Text::new("Paused {name} from {from}"),
    }
    .with("name", &row.name)
    .with("from", from);
    ctx.record("subscription", row.id, before, summary)?;
    reload_view(ctx, row.id)
}

pub(crate) fn resume(
    ctx: &mut Ctx<'_>,
    input: ResumeSubscriptionInput,
) -> Result<Subscription, OpError> {
    let mut row = load(ctx, input.id)?;
    let on = views::parse_opt_date("/on", input.on.as_deref())?.unwrap_or(ctx.today);
    let before = ctx.snapshot("subscription", row.id)?;
    if !apply_resume(ctx, &mut row, on)? {
        return Err(OpError::conflict(
            Text::new("{name} is not paused or cancelled; nothing to resume.")
                .with("name", &row.name),
        ));
    }
    ctx.record(
        "subscription",
        row.id,
        before,
        Text::new("Resumed {name} on {on}").with("name", &row.name).with("on", on),
    )?;
    reload_view(ctx, row.id)
}

pub(crate) fn cancel(
    ctx: &mut Ctx<'_>,
    input: CancelSubscriptionInput,
) -> Result<Subscription, OpError> {
    let mut row = load(ctx, input.id)?;
    let ends_on = views::parse_opt_date("/ends_on", input.ends_on.as_deref())?.unwrap_or(ctx.today);
    let before = ctx.snapshot("subscription", row.id)?;
    apply_cancel(ctx, &mut row, ends_on)?;
    ctx.record(
        "subscription",
        row.id,
        before,
        Text::new("Cancelled {name}, ending {end}").with("name", &row.name).with("end", ends_on),
    )?;
    reload_view(ctx, row.id)
}

fn apply_delete(ctx: &mut Ctx<'_>, row: &SubscriptionRow) -> Result<(), OpError> {
    let before = ctx.snapshot("subscription", row.id)?;
    subs::delete(ctx.db, ctx.household_id(), row.id).or_internal()?;
    ctx.record("subscription", row.id, before, Text::new("Deleted {name}").with("name", &row.name))
}

pub(crate) fn delete(ctx: &mut Ctx<'_>, input: IdInput) -> Result<Removed, OpError> {
    let row = load(ctx, input.id)?;
    apply_delete(ctx, &row)?;
    Ok(Removed { id: row.id, name: row.name })
}

pub(crate) fn bulk_update(
    ctx: &mut Ctx<'_>,
    input: BulkUpdateInput,
) -> Result<BulkResult, OpError> {
    if input.ids.is_empty() || input.ids.len() > MAX_BULK {
        return Err(invalid(
            "/ids",
            Text::new("Give 1 to {max} subscription ids.").with("max", MAX_BULK),
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for (i, id) in input.ids.iter().enumerate() {
        if !seen.insert(*id) {
            return Err(invalid(
                &format!("/ids/{i}"),
                Text::new("Subscription {id} is listed twice.").with("id", id),
            ));
        }
    }
    let is_update = input.action == "update";
    if !is_update
        && (!input.category_id.is_keep()
            || !input.payment_method_id.is_keep()
            || input.tags.is_some())
    {
        return Err(invalid(
            "/action",
            Text::new("category_id, payment_method_id and tags go with action \"update\" only."),
        ));
    }
    if !["update", "pause", "resume", "cancel", "delete"].contains(&input.action.as_str()) {
        return Err(invalid(
            "/action",
            Text::new(
                "{action} is not a bulk action; use update, pause, resume, cancel or delete.",
            )
            .with("action", &input.action),
        ));
    }
    // Load everything first: one unknown or invisible id fails the whole call.
    let mut rows = Vec::with_capacity(input.ids.len());
    for (i, id) in input.ids.iter().enumerate() {
        match subs::get(ctx.db, ctx.household_id(), Some(ctx.me()), *id) {
            Ok(row) => rows.push(row),
            Err(store::StoreError::NotFound) => {
                return Err(invalid(
                    &format!("/ids/{i}"),
                    Text::new("No subscription with id {id}; nothing was changed. Call list_subscriptions to find ids.").with("id", id),
                ));
            }
            Err(err) => return Err(crate::invoke::internal(err)),
        }
    }
    let mut items = Vec::with_capacity(rows.len());
    for mut row in rows {
        let before = ctx.snapshot("subscription", row.id)?;
        let (changed, summary) = match input.action.as_str() {
            "update" => {
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
            "pause" => (apply_pause(ctx, &mut row, ctx.today, None)?, Text::new("Paused {name}")),
            "resume" => (apply_resume(ctx, &mut row, ctx.today)?, Text::new("Resumed {name}")),
            "cancel" => (apply_cancel(ctx, &mut row, ctx.today)?, Text::new("Cancelled {name}")),
            _ => {
                apply_delete(ctx, &row)?;
                items.push(BulkItem { id: row.id, name: row.name.clone(), changed: true });
                continue;
            }
        };
        let recorded_before = ctx.changes.len();
        if changed {
            ctx.record("subscription", row.id, before, summary.with("name", &row.name))?;
        }
        items.push(BulkItem {
            id: row.id,
            name: row.name.clone(),
            changed: ctx.changes.len() > recorded_before,
        });
    }
    Ok(BulkResult { items })
}
