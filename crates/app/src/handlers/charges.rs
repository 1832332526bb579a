//! Charge handlers: recorded charges, projections, corrections.

use domain::{Text, entities::EntityKind};
use ops::{
    OpError,
    charges::*,
    common::{Page, Patch},
    resolve::{IsoDate, SubscriptionId},
};
use store::charges::{self as store_charges, ChargeFilter};

use crate::{ctx::Ctx, input, transactions::StoreExt, views};

pub(crate) fn list(ctx: &mut Ctx<'_>, input: ListChargesInput) -> Result<Page<Charge>, OpError> {
    let (limit, offset) = input::page_window(input.limit, input.cursor.as_deref())?;
    let filter = ChargeFilter {
        subscription_id: input.subscription_id.map(SubscriptionId::get),
        from: input.from.map(IsoDate::date),
        to: input.to.map(IsoDate::date),
        status: input.status,
    };
    let (rows, total) =
        store_charges::list(ctx.db, ctx.household_id(), Some(ctx.me()), &filter, limit, offset)
            .or_internal()?;
    let items: Vec<Charge> = rows.iter().map(views::charge_view).collect();
    let next_cursor = ops::common::next_cursor(offset, items.len(), total);
    Ok(Page { items, total, next_cursor })
}

pub(crate) fn upcoming(ctx: &mut Ctx<'_>, input: ListUpcomingInput) -> Result<Upcoming, OpError> {
    let days = input.days.unwrap_or(30);
    if days == 0 || days > ops::limits::UPCOMING_DAYS {
        return Err(OpError::invalid(
            "/days",
            Text::new("days must be between 1 and {max}.").with("max", ops::limits::UPCOMING_DAYS),
        ));
    }
    let subscription_id = input.subscription_id.map(SubscriptionId::get);
    let asked = match subscription_id {
        Some(id) => Some(
            store::subscriptions::get(ctx.db, ctx.household_id(), Some(ctx.me()), id)
                .or_not_found(|| ctx.unknown(EntityKind::Subscription, id))?,
        ),
        None => None,
    };
    let from = ctx.today;
    let to = from
        .checked_add(jiff::Span::new().days(i64::from(days) - 1))
        .map_err(|_| OpError::Internal)?;
    let items = views::project(ctx, from, to, subscription_id)?;
    let note = match (items.is_empty(), &asked) {
        (false, _) => None,
        (true, Some(row)) => Some(empty_window(from, to, Some(row))),
        (true, None) => Some(match first_after(ctx, from, to)? {
            Some(next) => next,
            None => empty_window(from, to, None),
        }),
    };
    Ok(Upcoming { from: from.into(), to: to.into(), totals: views::totals(&items), items, note })
}

/// An empty window of the whole household, answered with the first day after it that has
/// charges, within the longest window the op reads. A small model asked for one day to answer
/// "what is charged on 1 December" two days ahead, and read only the empty window's dates.
fn first_after(
    ctx: &Ctx<'_>,
    from: jiff::civil::Date,
    to: jiff::civil::Date,
) -> Result<Option<String>, OpError> {
    let (Ok(start), Ok(end)) = (
        to.checked_add(jiff::Span::new().days(1)),
        from.checked_add(jiff::Span::new().days(i64::from(ops::limits::UPCOMING_DAYS) - 1)),
    ) else {
        return Ok(None);
    };
    if start > end {
        return Ok(None);
    }
    let later = views::project(ctx, start, end, None)?;
    let Some(first) = later.first().map(|charge| charge.charge_on) else { return Ok(None) };
    let on_that_day: Vec<String> = later
        .iter()
        .filter(|charge| charge.charge_on == first)
        .map(|charge| format!("{} {}", charge.subscription.name, charge.amount.display))
        .collect();
    let days = i64::from((first.date() - from).get_days()) + 1;
    Ok(Some(format!(
        "Nothing falls due from {from} to {to}. The next charges after that are on {first}: {}. Pass days {days} to list them.",
        on_that_day.join(", ")
    )))
}

/// What an empty window says to whoever asked (a model, mostly, which otherwise answers with
/// the window's own dates): what was read, and how to read further.
fn empty_window(
    from: jiff::civil::Date,
    to: jiff::civil::Date,
    asked: Option<&store::subscriptions::SubscriptionRow>,
) -> String {
    let read = format!("Nothing falls due from {from} to {to}.");
    let Some(row) = asked else {
        return format!(
            "{read} Pass days (up to {}) to look further ahead.",
            ops::limits::UPCOMING_DAYS
        );
    };
    match views::next_charge(row, from) {
        Some(next) => {
            let days = i64::from((next.date - from).get_days()) + 1;
            let how = if days <= i64::from(ops::limits::UPCOMING_DAYS) {
                format!("pass days {days} to list it")
            } else {
                "get_subscription shows it".to_owned()
            };
            format!("{read} The next charge of {} is on {}: {how}.", row.name, next.date)
        }
        None => format!("{read} {} has no next charge: it is {}.", row.name, row.status.as_str()),
    }
}

pub(crate) fn get(ctx: &mut Ctx<'_>, input: ops::common::IdInput) -> Result<Charge, OpError> {
    let row = store_charges::get(ctx.db, ctx.household_id(), Some(ctx.me()), input.id.get())
        .or_not_found(|| {
            Text::new("No charge with id {id}. Call list_charges to find ids.").with("id", input.id)
        })?;
    Ok(views::charge_view(&row))
}

pub(crate) fn update(ctx: &mut Ctx<'_>, input: UpdateChargeInput) -> Result<Charge, OpError> {
    let mut row = store_charges::get(ctx.db, ctx.household_id(), Some(ctx.me()), input.id.get())
        .or_not_found(|| {
            Text::new("No charge with id {id}. Call list_charges to find ids.").with("id", input.id)
        })?;
    let before = ctx.snapshot(EntityKind::Charge, row.id)?;
    if let Some(status) = input.status {
        row.status = status;
    }
    if let Some(amount) = input.amount {
        row.amount_minor = input::minor_units("/amount", amount.money(row.currency))?;
    }
    match &input.note {
        Patch::Keep => {}
        Patch::Clear => row.note = None,
        Patch::Set(note) => {
            row.note = Some(input::clean_notes("/note", note)?).filter(|n| !n.is_empty())
        }
    }
    store_charges::update(ctx.db, &row).or_internal()?;
    let summary = Text::new("Charge of {name} on {date}: {amount}, {status}")
        .with("name", &row.subscription_name)
        .with_date("date", row.charged_on)
        .with_money("amount", domain::Money::new(row.amount_minor, row.currency))
        .with("status", row.status.as_str());
    ctx.record(EntityKind::Charge, row.id, before, summary)?;
    Ok(views::charge_view(&row))
}
