//! Charge handlers: recorded charges, projections, corrections.

use domain::{Money, Text, entities::ChargeStatus};
use ops::{
    OpError,
    charges::*,
    common::{Amount, Page, Patch, Ref},
};
use store::charges::{self as store_charges, ChargeFilter, ChargeRow};

use crate::{
    ctx::{Ctx, invalid},
    handlers::page_window,
    invoke::StoreExt,
    views::{self, SeriesParts, amount},
};

pub(crate) const MAX_UPCOMING_DAYS: u32 = 366;

pub(crate) fn charge_view(row: &ChargeRow) -> Charge {
    Charge {
        id: row.id,
        subscription: Ref { id: row.subscription_id, name: row.subscription_name.clone() },
        charged_on: row.charged_on.to_string(),
        amount: amount(row.amount_minor, row.currency),
        status: row.status.as_str().to_owned(),
        note: row.note.clone(),
    }
}

fn parse_status(pointer: &str, text: &str) -> Result<ChargeStatus, OpError> {
    ChargeStatus::parse(text).ok_or_else(|| {
        invalid(
            pointer,
            Text::new("{value} is not a charge status; use paid, skipped, failed or refunded.")
                .with("value", text),
        )
    })
}

pub(crate) fn list(ctx: &mut Ctx<'_>, input: ListChargesInput) -> Result<Page<Charge>, OpError> {
    let (limit, offset) = page_window(input.limit, input.cursor.as_deref())?;
    let filter = ChargeFilter {
        subscription_id: input.subscription_id,
        from: views::parse_opt_date("/from", input.from.as_deref())?,
        to: views::parse_opt_date("/to", input.to.as_deref())?,
        status: input.status.as_deref().map(|s| parse_status("/status", s)).transpose()?,
    };
    let (rows, total) =
        store_charges::list(ctx.db, ctx.household_id(), Some(ctx.me()), &filter, limit, offset)
            .or_internal()?;
    let items: Vec<Charge> = rows.iter().map(charge_view).collect();
    let next_cursor = ops::common::next_cursor(offset, items.len(), total);
    Ok(Page { items, total, next_cursor })
}

/// Projected charges from `from` to `to` (inclusive) of every visible subscription, by date.
pub(crate) fn project(
    ctx: &Ctx<'_>,
    from: domain::Date,
    to: domain::Date,
    only: Option<i64>,
) -> Result<Vec<ProjectedCharge>, OpError> {
    let rows = ctx.visible_subscriptions()?;
    let mut items = Vec::new();
    for row in rows.iter().filter(|r| only.is_none_or(|id| r.id == id)) {
        let parts = SeriesParts::of(row);
        for occurrence in parts.series(row).occurrences_between(from, to) {
            items.push((occurrence.date, row.id, views::projected_charge(row, occurrence)));
        }
    }
    items.sort_by_key(|(date, id, _)| (*date, *id));
    Ok(items.into_iter().map(|(_, _, item)| item).collect())
}

pub(crate) fn upcoming(ctx: &mut Ctx<'_>, input: ListUpcomingInput) -> Result<Upcoming, OpError> {
    let days = input.days.unwrap_or(30);
    if days == 0 || days > MAX_UPCOMING_DAYS {
        return Err(invalid(
            "/days",
            Text::new("days must be between 1 and {max}.").with("max", MAX_UPCOMING_DAYS),
        ));
    }
    if let Some(id) = input.subscription_id {
        store::subscriptions::get(ctx.db, ctx.household_id(), Some(ctx.me()), id)
            .or_not_found(|| views::not_found_subscription(id))?;
    }
    let from = ctx.today;
    let to = from
        .checked_add(jiff::Span::new().days(i64::from(days) - 1))
        .map_err(|_| OpError::Internal)?;
    let items = project(ctx, from, to, input.subscription_id)?;
    Ok(Upcoming { from: from.to_string(), to: to.to_string(), totals: totals(&items), items })
}

/// Sums per currency, in currency order.
pub(crate) fn totals(items: &[ProjectedCharge]) -> Vec<Amount> {
    let mut sums: std::collections::BTreeMap<String, i64> = Default::default();
    for item in items {
        if let Ok(money) = domain::Currency::parse(&item.amount.currency)
            .and_then(|c| Money::parse(&item.amount.amount, c))
        {
            let sum = sums.entry(item.amount.currency.to_string()).or_default();
            *sum = sum.saturating_add(money.minor());
        }
    }
    sums.into_iter()
        .filter_map(|(code, minor)| domain::Currency::parse(&code).ok().map(|c| amount(minor, c)))
        .collect()
}

pub(crate) fn get(ctx: &mut Ctx<'_>, input: ops::household::IdInput) -> Result<Charge, OpError> {
    let row = store_charges::get(ctx.db, ctx.household_id(), Some(ctx.me()), input.id)
        .or_not_found(|| {
            Text::new("No charge with id {id}. Call list_charges to find ids.").with("id", input.id)
        })?;
    Ok(charge_view(&row))
}

pub(crate) fn update(ctx: &mut Ctx<'_>, input: UpdateChargeInput) -> Result<Charge, OpError> {
    let mut row = store_charges::get(ctx.db, ctx.household_id(), Some(ctx.me()), input.id)
        .or_not_found(|| {
            Text::new("No charge with id {id}. Call list_charges to find ids.").with("id", input.id)
        })?;
    let before = ctx.snapshot("charge", row.id)?;
    if let Some(status) = &input.status {
        row.status = parse_status("/status", status)?;
    }
    if let Some(text) = &input.amount {
        row.amount_minor = views::parse_amount("/amount", text, row.currency)?;
    }
    match &input.note {
        Patch::Keep => {}
        Patch::Clear => row.note = None,
        Patch::Set(note) => {
            row.note = Some(views::clean_notes("/note", note)?).filter(|n| !n.is_empty())
        }
    }
    store_charges::update(ctx.db, &row).or_internal()?;
    let summary = Text::new("Charge of {name} on {date}: {amount}, {status}")
        .with("name", &row.subscription_name)
        .with("date", row.charged_on)
        .with("amount", amount(row.amount_minor, row.currency).display)
        .with("status", row.status.as_str());
    ctx.record("charge", row.id, before, summary)?;
    Ok(charge_view(&row))
}
