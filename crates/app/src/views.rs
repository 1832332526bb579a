//! Turning rows into the catalog's output types: subscriptions with their series, charges
//! recorded and projected, the household, members, categories and payment methods. Shared by
//! every handler, so that one never calls another to show something. Inputs are checked in
//! `input.rs`.

use domain::{Currency, Cycle, Date, Money, entities::SubscriptionStatus};
use ops::{
    OpError,
    charges::{Charge, ProjectedCharge},
    common::{Amount, CycleOutput, Ref, Timestamp},
    household::{Household, Member},
    organise::{Category, PaymentMethod, Tag},
    resolve::IsoDate,
    subscriptions::{
        Pause, PricePoint as PricePointView, Subscription, SubscriptionDetail, SubscriptionSummary,
    },
};
use store::{
    charges::ChargeRow,
    households::MemberRow,
    organise::{CategoryRow, PaymentMethodRow},
    subscriptions::SubscriptionRow,
};

use crate::{ctx::Ctx, series::SeriesParts, transactions::StoreExt};

pub(crate) fn amount(minor: i64, currency: Currency) -> Amount {
    let money = Money::new(minor, currency);
    Amount { amount: money.into(), currency: currency.into(), display: money.display() }
}

pub(crate) fn cycle_output(cycle: Cycle) -> CycleOutput {
    CycleOutput {
        every: i64::from(cycle.every()),
        unit: cycle.unit(),
        preset: cycle.as_preset(),
        description: cycle.describe(),
    }
}

/// The status a person would expect today: a trial that has ended is active, a pause that
/// has ended is over.
pub(crate) fn effective_status(row: &SubscriptionRow, today: Date) -> SubscriptionStatus {
    match row.status {
        SubscriptionStatus::Trial if row.trial_ends_on.is_some_and(|end| end <= today) => {
            SubscriptionStatus::Active
        }
        SubscriptionStatus::Paused
            if !row.pauses.iter().any(|p| p.from <= today && p.until.is_none_or(|u| u > today)) =>
        {
            if row.pauses.iter().any(|p| p.from > today) {
                SubscriptionStatus::Paused
            } else {
                SubscriptionStatus::Active
            }
        }
        status => status,
    }
}

/// The price that applies today (or, before the first charge, the first price).
pub(crate) fn current_price(row: &SubscriptionRow, today: Date) -> i64 {
    let parts = SeriesParts::of(row);
    parts.series(row).amount_on(today.max(row.anchor_on))
}

/// The next charge from `today` on; none for a cancelled subscription without an end date.
pub(crate) fn next_charge(
    row: &SubscriptionRow,
    today: Date,
) -> Option<domain::series::Occurrence> {
    if row.status == SubscriptionStatus::Cancelled && row.ends_on.is_none() {
        return None;
    }
    SeriesParts::of(row).series(row).next_on_or_after(today)
}

pub(crate) fn subscription_view(row: &SubscriptionRow, today: Date) -> Subscription {
    let parts = SeriesParts::of(row);
    let series = parts.series(row);
    let price = series.amount_on(today.max(row.anchor_on));
    let next = next_charge(row, today);
    let paused_until = row
        .pauses
        .iter()
        .filter(|p| p.until.is_none_or(|u| u > today))
        .find(|p| p.from <= today)
        .and_then(|p| p.until);
    Subscription {
        id: row.id,
        name: row.name.clone(),
        url: row.url.clone(),
        notes: row.notes.clone(),
        price: amount(price, row.currency),
        cycle: cycle_output(row.cycle),
        status: effective_status(row, today),
        anchor_on: row.anchor_on.into(),
        next_charge_on: next.map(|o| o.date.into()),
        next_charge_amount: next.map(|o| amount(o.minor, row.currency)),
        trial_ends_on: row.trial_ends_on.map(IsoDate),
        ends_on: row.ends_on.map(IsoDate),
        paused_until: paused_until.map(IsoDate),
        category: row.category_id.zip(row.category_name.clone()).map(|(id, name)| Ref { id, name }),
        payment_method: payment_method_ref(row),
        tags: row.tags.clone(),
        owner: Ref { id: row.owner_id, name: row.owner_name.clone() },
        visibility: row.visibility,
        monthly: amount(row.cycle.monthly_minor(price), row.currency),
        yearly: amount(row.cycle.yearly_minor(price), row.currency),
    }
}

/// A subscription as a list row shows it (`list_subscriptions`).
pub(crate) fn subscription_summary(row: &SubscriptionRow, today: Date) -> SubscriptionSummary {
    let parts = SeriesParts::of(row);
    let series = parts.series(row);
    let price = series.amount_on(today.max(row.anchor_on));
    let ended = row.status == SubscriptionStatus::Cancelled && row.ends_on.is_none();
    let next = if ended { None } else { series.next_on_or_after(today) };
    SubscriptionSummary {
        id: row.id,
        name: row.name.clone(),
        price: amount(price, row.currency),
        cycle: row.cycle.describe(),
        status: effective_status(row, today),
        next_charge_on: next.map(|o| o.date.into()),
        next_charge_amount: next
            .filter(|o| o.minor != price)
            .map(|o| amount(o.minor, row.currency)),
        category: row.category_id.and(row.category_name.clone()),
        owner: row.owner_name.clone(),
        visibility: row.visibility,
    }
}

/// The payment method as the viewer may see it (None for another member's private card).
pub(crate) fn payment_method_ref(row: &SubscriptionRow) -> Option<Ref> {
    row.payment_method_id.zip(row.payment_method_name.clone()).map(|(id, name)| Ref { id, name })
}

/// A charge expected from a subscription's series.
pub(crate) fn projected_charge(
    row: &SubscriptionRow,
    occurrence: domain::Occurrence,
) -> ops::charges::ProjectedCharge {
    ops::charges::ProjectedCharge {
        subscription: Ref { id: row.id, name: row.name.clone() },
        charge_on: occurrence.date.into(),
        amount: amount(occurrence.minor, row.currency),
        payment_method: payment_method_ref(row),
    }
}

pub(crate) fn charge_view(row: &ChargeRow) -> Charge {
    Charge {
        id: row.id,
        subscription: Ref { id: row.subscription_id, name: row.subscription_name.clone() },
        charged_on: row.charged_on.into(),
        amount: amount(row.amount_minor, row.currency),
        status: row.status,
        note: row.note.clone(),
    }
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
            items.push((occurrence.date, row.id, projected_charge(row, occurrence)));
        }
    }
    items.sort_by_key(|(date, id, _)| (*date, *id));
    Ok(items.into_iter().map(|(_, _, item)| item).collect())
}

/// Sums per currency, in currency order.
pub(crate) fn totals(items: &[ProjectedCharge]) -> Vec<Amount> {
    let mut sums: std::collections::BTreeMap<String, i64> = Default::default();
    for item in items {
        if let Ok(money) = item.amount.amount.in_currency(item.amount.currency.currency()) {
            let sum = sums.entry(item.amount.currency.to_string()).or_default();
            *sum = sum.saturating_add(money.minor());
        }
    }
    sums.into_iter()
        .filter_map(|(code, minor)| domain::Currency::parse(&code).ok().map(|c| amount(minor, c)))
        .collect()
}

pub(crate) fn household_view(ctx: &Ctx<'_>) -> Household {
    let h = &ctx.household;
    Household {
        id: h.id,
        name: h.name.clone(),
        currency: h.currency.code().to_owned(),
        time_zone: h.time_zone.clone(),
        language: h.language.clone(),
        week_start: h.week_start,
        today: ctx.today.into(),
    }
}

/// The language a member reads Exhale in: their own, else their household's; `None` when
/// Exhale speaks neither (a household in French), for the reader's client to decide.
pub(crate) fn reads_in(
    db: &store::Db<'_>,
    member: &MemberRow,
) -> Result<Option<domain::Language>, store::StoreError> {
    let household = store::households::get_household(db, member.household_id)?;
    Ok(domain::Language::parse(&member.language)
        .or_else(|| domain::Language::parse(&household.language)))
}

pub(crate) fn member_view(ctx: &Ctx<'_>, row: &MemberRow) -> Member {
    let is_person = matches!(ctx.caller.actor, ops::Actor::Person);
    Member {
        id: row.id,
        name: row.name.clone(),
        role: row.role,
        language: (!row.language.is_empty()).then(|| row.language.clone()),
        is_you: row.id == ctx.me(),
        // A member's email is never handed to a model or an agent.
        email: is_person.then(|| row.email.clone()),
        active: row.has_password,
    }
}

pub(crate) fn category_view(row: &CategoryRow) -> Category {
    Category {
        id: row.id,
        name: row.name.clone(),
        emoji: row.emoji.clone(),
        colour: row.colour.clone(),
        subscription_count: row.subscription_count,
    }
}

pub(crate) fn payment_method_view(row: &PaymentMethodRow) -> PaymentMethod {
    PaymentMethod {
        id: row.id,
        name: row.name.clone(),
        kind: row.kind,
        last4: row.last4.clone(),
        expires: row.expires.clone(),
        owner: Ref { id: row.owner_id, name: row.owner_name.clone() },
        visibility: row.visibility,
        subscription_count: row.subscription_count,
    }
}

/// A subscription with its price history, pauses, last 12 charges and next three charges.
pub(crate) fn subscription_detail(
    ctx: &Ctx<'_>,
    row: &SubscriptionRow,
) -> Result<SubscriptionDetail, OpError> {
    let parts = SeriesParts::of(row);
    let series = parts.series(row);
    let filter =
        store::charges::ChargeFilter { subscription_id: Some(row.id), ..Default::default() };
    let (charges, _) =
        store::charges::list(ctx.db, ctx.household_id(), Some(ctx.me()), &filter, 12, 0)
            .or_internal()?;
    let next_charges =
        series.upcoming(ctx.today, 3).into_iter().map(|o| projected_charge(row, o)).collect();
    Ok(SubscriptionDetail {
        subscription: subscription_view(row, ctx.today),
        price_history: row
            .prices
            .iter()
            .map(|&(date, minor)| PricePointView {
                effective_on: date.into(),
                price: amount(minor, row.currency),
            })
            .collect(),
        pauses: row
            .pauses
            .iter()
            .map(|p| Pause { from: p.from.into(), until: p.until.map(IsoDate) })
            .collect(),
        recent_charges: charges.iter().map(charge_view).collect(),
        next_charges,
    })
}

/// Every member, with emails for people only.
pub(crate) fn members(ctx: &Ctx<'_>) -> Result<Vec<Member>, OpError> {
    let rows = store::households::list_members(ctx.db, ctx.household_id()).or_internal()?;
    Ok(rows.iter().map(|row| member_view(ctx, row)).collect())
}

/// The household's categories, counting the subscriptions the caller can see.
pub(crate) fn categories(ctx: &Ctx<'_>) -> Result<Vec<Category>, OpError> {
    let rows = store::organise::list_categories(ctx.db, ctx.household_id(), Some(ctx.me()))
        .or_internal()?;
    Ok(rows.iter().map(category_view).collect())
}

/// The payment methods the caller can see.
pub(crate) fn payment_methods(ctx: &Ctx<'_>) -> Result<Vec<PaymentMethod>, OpError> {
    let rows = store::organise::list_payment_methods(ctx.db, ctx.household_id(), Some(ctx.me()))
        .or_internal()?;
    Ok(rows.iter().map(payment_method_view).collect())
}

/// The tags on subscriptions the caller can see, with how many carry each.
pub(crate) fn tags(ctx: &Ctx<'_>) -> Result<Vec<Tag>, OpError> {
    let rows =
        store::organise::list_tags(ctx.db, ctx.household_id(), Some(ctx.me())).or_internal()?;
    Ok(rows
        .into_iter()
        .map(|(name, subscription_count)| Tag { name, subscription_count })
        .collect())
}

/// A timestamp as the store keeps it (RFC 3339), as outputs write it.
pub(crate) fn timestamp(stored: &str) -> Result<Timestamp, OpError> {
    Timestamp::parse(stored).ok_or_else(|| {
        tracing::error!(stored, "a stored timestamp is not RFC 3339");
        OpError::Internal
    })
}

/// Whether a base URL names this computer.
pub(crate) fn is_loopback_url(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = host.rsplit_once('@').map_or(host, |(_, host)| host);
    ["localhost", "127.0.0.1", "[::1]"]
        .iter()
        .any(|h| host == *h || host.strip_prefix(h).is_some_and(|port| port.starts_with(':')))
}

/// A transaction as every op shows it.
pub(crate) fn transaction_view(row: &store::ledger::TransactionRow) -> ops::ledger::Transaction {
    ops::ledger::Transaction {
        id: row.id,
        on: IsoDate(row.on_date),
        amount: amount(row.amount_minor, row.currency),
        account: Ref { id: row.account_id, name: row.account_name.clone() },
        payee: row.payee.clone(),
        description: row.description.clone(),
        notes: row.notes.clone(),
        category: row.category_id.zip(row.category_name.clone()).map(|(id, name)| Ref { id, name }),
        labels: row.labels.iter().map(|(id, name)| Ref { id: *id, name: name.clone() }).collect(),
        transfer_id: row.transfer_id,
        charge_id: row.charge_id,
        source: match row.source {
            store::ledger::Source::Manual => ops::ledger::TransactionSource::Manual,
            store::ledger::Source::Import => ops::ledger::TransactionSource::Import,
        },
        pending: row.pending,
        splits: row
            .splits
            .iter()
            .map(|part| ops::ledger::TransactionSplit {
                amount: amount(part.amount_minor, row.currency),
                category: part
                    .category
                    .as_ref()
                    .map(|(id, name)| Ref { id: *id, name: name.clone() }),
                note: part.note.clone(),
            })
            .collect(),
    }
}

/// An account as every op shows it.
pub(crate) fn account_view(row: &store::ledger::AccountRow) -> ops::ledger::Account {
    ops::ledger::Account {
        id: row.id,
        name: row.name.clone(),
        kind: row.kind,
        currency: row.currency.into(),
        owner: Ref { id: row.owner_id, name: row.owner_name.clone() },
        visibility: row.visibility,
        archived: row.archived,
        balance: row.balance.map(|(_, minor)| amount(minor, row.currency)),
        balance_on: row.balance.map(|(on, _)| IsoDate(on)),
        transaction_count: row.transaction_count,
    }
}

/// A label as every op shows it.
pub(crate) fn label_view(row: &store::ledger::LabelRow) -> ops::ledger::Label {
    ops::ledger::Label {
        id: row.id,
        name: row.name.clone(),
        colour: row.colour.clone(),
        transaction_count: row.transaction_count,
    }
}

/// A rule as every op shows it.
pub(crate) fn rule_view(row: &store::rules::RuleRow) -> ops::rules::Rule {
    let reference = |item: &Option<(i64, String)>| {
        item.as_ref().map(|(id, name)| Ref { id: *id, name: name.clone() })
    };
    ops::rules::Rule {
        id: row.id,
        name: row.name.clone(),
        payee_contains: row.payee_contains.clone(),
        description_contains: row.description_contains.clone(),
        min_amount: row.min_milli.map(crate::input::milli_text),
        max_amount: row.max_milli.map(crate::input::milli_text),
        account: reference(&row.account),
        set_category: reference(&row.set_category),
        add_labels: row
            .labels
            .iter()
            .map(|(id, name)| Ref { id: *id, name: name.clone() })
            .collect(),
    }
}

/// Whether a recurring charge a bank sync noticed is already one of these subscriptions (by
/// its merchant and currency): then nobody is asked about it again.
pub(crate) fn proposal_is_a_subscription(
    proposal: &store::banks::ProposalRow,
    subscriptions: &[SubscriptionRow],
) -> bool {
    subscriptions.iter().any(|s| {
        statement::merchant::key(&s.name) == proposal.merchant
            && s.currency.code() == proposal.currency
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_addresses_are_local() {
        assert!(is_loopback_url("http://127.0.0.1:11434/v1"));
        assert!(is_loopback_url("http://localhost:1234/v1"));
        assert!(!is_loopback_url("http://localhost.evil.test/v1"));
        assert!(!is_loopback_url("https://api.openai.com/v1"));
    }
}
