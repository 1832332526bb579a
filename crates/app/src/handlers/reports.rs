//! Reports: spending, history, price changes, savings, attention items and the briefing.

use std::collections::BTreeMap;

use domain::{
    Currency, Text,
    entities::{EntityKind, SubscriptionStatus},
    validate,
};
use ops::{OpError, common::Ref, household::Empty, reports::*, resolve::IsoDate};
use store::subscriptions::SubscriptionRow;

use crate::{
    converter::Converter,
    ctx::Ctx,
    series::SeriesParts,
    transactions::StoreExt,
    views::{self, amount, effective_status},
};

fn counted(row: &SubscriptionRow, today: domain::Date) -> bool {
    matches!(effective_status(row, today), SubscriptionStatus::Active | SubscriptionStatus::Trial)
}

/// Sums in i128 so that no household's totals can overflow; shown clamped to i64.
#[derive(Default)]
struct Sum {
    count: u64,
    monthly: i128,
    yearly: i128,
}

fn clamp(sum: i128) -> i64 {
    i64::try_from(sum).unwrap_or(if sum < 0 { i64::MIN } else { i64::MAX })
}

pub(crate) fn spending_summary(
    ctx: &mut Ctx<'_>,
    input: SpendingSummaryInput,
) -> Result<SpendingSummary, OpError> {
    let group_by = input.group_by.unwrap_or(SpendingGroupBy::Category);
    let converter = Converter::load(ctx)?;
    let rows = ctx.visible_subscriptions()?;
    let mut total = Sum::default();
    let mut groups: BTreeMap<(Option<i64>, String), Sum> = BTreeMap::new();
    let mut unconverted: BTreeMap<Currency, (Currency, Sum)> = BTreeMap::new();
    // (yearly, monthly, id, name) in the main currency, of every subscription counted.
    let mut costs: Vec<(i64, i64, i64, &str)> = Vec::new();
    for row in rows.iter().filter(|r| counted(r, ctx.today)) {
        let price = views::current_price(row, ctx.today);
        let (monthly, yearly) = (row.cycle.monthly_minor(price), row.cycle.yearly_minor(price));
        let (Some(monthly), Some(yearly)) =
            (converter.to_main(monthly, row.currency), converter.to_main(yearly, row.currency))
        else {
            let entry =
                unconverted.entry(row.currency).or_insert_with(|| (row.currency, Sum::default()));
            entry.1.count += 1;
            entry.1.monthly += i128::from(monthly);
            entry.1.yearly += i128::from(yearly);
            continue;
        };
        total.count += 1;
        total.monthly += i128::from(monthly);
        total.yearly += i128::from(yearly);
        costs.push((yearly, monthly, row.id, &row.name));
        let keys: Vec<(Option<i64>, String)> = match group_by {
            SpendingGroupBy::Category => vec![(
                row.category_id,
                row.category_name.clone().unwrap_or_else(|| "Uncategorised".into()),
            )],
            SpendingGroupBy::Member => vec![(Some(row.owner_id), row.owner_name.clone())],
            SpendingGroupBy::PaymentMethod => vec![match &row.payment_method_name {
                Some(name) => (row.payment_method_id, name.clone()),
                None => (None, "No payment method you can see".into()),
            }],
            SpendingGroupBy::Tag if row.tags.is_empty() => vec![(None, "Untagged".into())],
            SpendingGroupBy::Tag => row.tags.iter().map(|t| (None, t.clone())).collect(),
            SpendingGroupBy::None => vec![(None, "All".into())],
        };
        for key in keys {
            let sum = groups.entry(key).or_default();
            sum.count += 1;
            sum.monthly += i128::from(monthly);
            sum.yearly += i128::from(yearly);
        }
    }
    let main = converter.main;
    let mut groups: Vec<((Option<i64>, String), Sum)> = groups.into_iter().collect();
    // Largest first, by the exact sums.
    groups.sort_by(|(a, a_sum), (b, b_sum)| {
        b_sum.yearly.cmp(&a_sum.yearly).then_with(|| a.1.cmp(&b.1))
    });
    let groups: Vec<SpendingGroup> = groups
        .into_iter()
        .map(|((id, label), sum)| SpendingGroup {
            id,
            label,
            subscription_count: sum.count,
            monthly: amount(clamp(sum.monthly), main),
            yearly: amount(clamp(sum.yearly), main),
        })
        .collect();
    // Most first; among equal costs by name, then id, so the order never rests on the store's.
    costs.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.3.cmp(b.3)).then_with(|| a.2.cmp(&b.2)));
    let most_expensive = costs
        .into_iter()
        .take(ops::limits::MOST_EXPENSIVE)
        .map(|(yearly, monthly, id, name)| {
            let (monthly, yearly) = (amount(monthly, main), amount(yearly, main));
            SubscriptionCost {
                id,
                name: name.to_owned(),
                cost: format!("{} a month, {} a year", monthly.display, yearly.display),
                monthly,
                yearly,
            }
        })
        .collect();
    // A small model answered "what is left of the groceries budget" and "the savings balance"
    // from the subscriptions' totals; where accounts are kept, this says what it is not.
    let has_accounts = !store::ledger::list_accounts(ctx.db, ctx.household_id(), ctx.me())
        .or_internal()?
        .is_empty();
    let note = has_accounts.then(|| {
        "These are subscriptions' costs only, not transactions, budgets or balances: spending_by_category reads what the accounts spent, list_budgets what is left of each budget, list_accounts the balances.".to_owned()
    });
    Ok(SpendingSummary {
        note,
        currency: main.code().to_owned(),
        subscription_count: total.count,
        monthly: amount(clamp(total.monthly), main),
        yearly: amount(clamp(total.yearly), main),
        most_expensive,
        group_by,
        groups,
        unconverted: unconverted
            .into_values()
            .map(|(currency, sum)| Unconverted {
                currency: currency.code().to_owned(),
                subscription_count: sum.count,
                monthly: amount(clamp(sum.monthly), currency),
                yearly: amount(clamp(sum.yearly), currency),
            })
            .collect(),
    })
}

pub(crate) fn spending_history(
    ctx: &mut Ctx<'_>,
    input: SpendingHistoryInput,
) -> Result<SpendingHistory, OpError> {
    let months = input.months.unwrap_or(12);
    if months == 0 || months > ops::limits::HISTORY_MONTHS {
        return Err(OpError::invalid(
            "/months",
            Text::new("months must be between 1 and {max}.")
                .with("max", ops::limits::HISTORY_MONTHS),
        ));
    }
    let converter = Converter::load(ctx)?;
    let this_month = ctx.today.first_of_month();
    let first = this_month
        .checked_sub(jiff::Span::new().months(i64::from(months) - 1))
        .map_err(|_| OpError::Internal)?;
    let filter = store::charges::ChargeFilter {
        from: Some(first),
        to: Some(ctx.today),
        status: Some(domain::entities::ChargeStatus::Paid),
        ..Default::default()
    };
    let (charges, _) =
        store::charges::list(ctx.db, ctx.household_id(), Some(ctx.me()), &filter, u32::MAX, 0)
            .or_internal()?;
    let mut out = Vec::new();
    let mut month = first;
    while month <= this_month {
        let mut total: i128 = 0;
        let mut count = 0;
        let mut apart: BTreeMap<Currency, (Currency, i128)> = BTreeMap::new();
        for charge in charges.iter().filter(|c| c.charged_on.first_of_month() == month) {
            count += 1;
            match converter.to_main(charge.amount_minor, charge.currency) {
                Some(minor) => total += i128::from(minor),
                None => {
                    apart.entry(charge.currency).or_insert((charge.currency, 0)).1 +=
                        i128::from(charge.amount_minor)
                }
            }
        }
        out.push(MonthSpending {
            month: month.strftime("%Y-%m").to_string(),
            total: amount(clamp(total), converter.main),
            charge_count: count,
            unconverted: apart.into_values().map(|(c, minor)| amount(clamp(minor), c)).collect(),
        });
        month = month.checked_add(jiff::Span::new().months(1)).map_err(|_| OpError::Internal)?;
    }
    Ok(SpendingHistory { currency: converter.main.code().to_owned(), months: out })
}

fn price_change_list(
    ctx: &Ctx<'_>,
    since: domain::Date,
    only: Option<i64>,
) -> Result<Vec<PriceChange>, OpError> {
    let rows = ctx.visible_subscriptions()?;
    let mut items = Vec::new();
    for row in rows.iter().filter(|r| only.is_none_or(|id| r.id == id)) {
        for pair in row.prices.windows(2) {
            let ((_, old), (date, new)) = (pair[0], pair[1]);
            if date < since || old == new {
                continue;
            }
            let percent = if old == 0 { 0.0 } else { (new - old) as f64 * 100.0 / old as f64 };
            items.push((
                date,
                PriceChange {
                    subscription: Ref { id: row.id, name: row.name.clone() },
                    effective_on: date.into(),
                    old_price: amount(old, row.currency),
                    new_price: amount(new, row.currency),
                    change_percent: format!("{percent:+.1}"),
                    yearly_difference: amount(
                        row.cycle.yearly_minor(new) - row.cycle.yearly_minor(old),
                        row.currency,
                    ),
                },
            ));
        }
    }
    items.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.subscription.id.cmp(&b.1.subscription.id)));
    Ok(items.into_iter().map(|(_, item)| item).collect())
}

pub(crate) fn price_changes(
    ctx: &mut Ctx<'_>,
    input: ListPriceChangesInput,
) -> Result<PriceChangeList, OpError> {
    let since = match input.since.map(IsoDate::date) {
        Some(date) => date,
        None => ctx.today.checked_sub(jiff::Span::new().years(1)).map_err(|_| OpError::Internal)?,
    };
    let subscription_id = input.subscription_id.map(ops::resolve::SubscriptionId::get);
    if let Some(id) = subscription_id {
        store::subscriptions::get(ctx.db, ctx.household_id(), Some(ctx.me()), id)
            .or_not_found(|| ctx.unknown(EntityKind::Subscription, id))?;
    }
    let items = price_change_list(ctx, since, subscription_id)?;
    let note =
        if items.is_empty() { Some(nothing_since(ctx, since, subscription_id)?) } else { None };
    Ok(PriceChangeList { items, note })
}

/// What an empty window of price changes says (a small model asked "what went up this year"
/// for the changes since today, and answered "none"): the window read, and the latest change
/// before it, with the `since` that lists it.
fn nothing_since(ctx: &Ctx<'_>, since: domain::Date, only: Option<i64>) -> Result<String, OpError> {
    let read = format!("No price changes from {} to today.", IsoDate(since));
    let earlier = price_change_list(ctx, domain::Date::MIN, only)?;
    Ok(match earlier.first() {
        Some(latest) => format!(
            "{read} The latest before that: {} from {}, {} to {}. Pass since {} to list from it.",
            latest.subscription.name,
            latest.effective_on,
            latest.old_price.display,
            latest.new_price.display,
            latest.effective_on,
        ),
        None => format!("{read} None before that either."),
    })
}

fn sref(row: &SubscriptionRow) -> Ref {
    Ref { id: row.id, name: row.name.clone() }
}

pub(crate) fn find_savings(ctx: &mut Ctx<'_>, _: Empty) -> Result<Savings, OpError> {
    let converter = Converter::load(ctx)?;
    let rows = ctx.visible_subscriptions()?;
    let live: Vec<&SubscriptionRow> = rows.iter().filter(|r| counted(r, ctx.today)).collect();
    let yearly_main = |row: &SubscriptionRow| {
        let price = views::current_price(row, ctx.today);
        converter
            .to_main(row.cycle.yearly_minor(price), row.currency)
            .map(|m| amount(m, converter.main))
    };
    let mut items = Vec::new();
    let names: Vec<&str> = live.iter().map(|r| r.name.as_str()).collect();
    for (i, j) in validate::look_alike_pairs(&names) {
        let (a, b) = (live[i], live[j]);
        items.push(SavingCandidate {
            kind: SavingKind::Duplicate,
            subscriptions: vec![sref(a), sref(b)],
            title: ctx.say(
                &Text::new("{a} and {b} look like the same service")
                    .with("a", &a.name)
                    .with("b", &b.name),
            ),
            evidence: ctx.say(
                &Text::new("Both are active: {a} costs {pa} {ca}, {b} costs {pb} {cb}.")
                    .with("a", &a.name)
                    .with("pa", ctx.money(&amount(views::current_price(a, ctx.today), a.currency)))
                    .with("ca", ctx.say(&a.cycle.words()))
                    .with("b", &b.name)
                    .with("pb", ctx.money(&amount(views::current_price(b, ctx.today), b.currency)))
                    .with("cb", ctx.say(&b.cycle.words())),
            ),
            yearly_saving: yearly_main(b),
        });
    }
    let since = ctx.today.checked_sub(jiff::Span::new().days(90)).map_err(|_| OpError::Internal)?;
    for change in price_change_list(ctx, since, None)? {
        if change.change_percent.starts_with('+')
            && let Some(row) = live.iter().find(|r| r.id == change.subscription.id)
        {
            items.push(SavingCandidate {
                kind: SavingKind::PriceIncrease,
                subscriptions: vec![sref(row)],
                title: ctx.say(&Text::new("{name} got more expensive").with("name", &row.name)),
                evidence: ctx.say(
                    &Text::new("From {date}: {old} → {new} ({percent}%), {diff} more a year.")
                        .with_date("date", change.effective_on.date())
                        .with("old", ctx.money(&change.old_price))
                        .with("new", ctx.money(&change.new_price))
                        .with("percent", &change.change_percent)
                        .with("diff", ctx.money(&change.yearly_difference)),
                ),
                yearly_saving: yearly_main(row),
            });
        }
    }
    let mut by_category: BTreeMap<(i64, String), Vec<&SubscriptionRow>> = BTreeMap::new();
    for row in &live {
        if let (Some(id), Some(name)) = (row.category_id, &row.category_name) {
            by_category.entry((id, name.clone())).or_default().push(row);
        }
    }
    for ((_, category), members) in by_category {
        if members.len() >= 3 {
            items.push(SavingCandidate {
                kind: SavingKind::OverlappingCategory,
                subscriptions: members.iter().map(|r| sref(r)).collect(),
                title: ctx.say(
                    &Text::new("{count} subscriptions in {category}")
                        .with("count", members.len())
                        .with("category", &category),
                ),
                evidence: ctx.say(
                    &Text::new("{names} are all active in {category}; one or two may be enough.")
                        .with(
                            "names",
                            members.iter().map(|r| r.name.as_str()).collect::<Vec<_>>().join(", "),
                        )
                        .with("category", &category),
                ),
                yearly_saving: None,
            });
        }
    }
    let long_ago =
        ctx.today.checked_sub(jiff::Span::new().days(90)).map_err(|_| OpError::Internal)?;
    for row in rows.iter() {
        if let Some(pause) = row.pauses.iter().find(|p| p.until.is_none() && p.from <= long_ago) {
            items.push(SavingCandidate {
                kind: SavingKind::LongPaused,
                subscriptions: vec![sref(row)],
                title: ctx.say(
                    &Text::new("{name} has been paused since {from}")
                        .with("name", &row.name)
                        .with("from", pause.from),
                ),
                evidence: ctx.say(&Text::new(
                    "Paused for more than 90 days; cancel it if it is no longer needed.",
                )),
                yearly_saving: None,
            });
        }
    }
    Ok(Savings { items })
}

pub(crate) fn attention_list(ctx: &Ctx<'_>) -> Result<Vec<AttentionItem>, OpError> {
    let rows = ctx.visible_subscriptions()?;
    let methods = store::organise::list_payment_methods(ctx.db, ctx.household_id(), Some(ctx.me()))
        .or_internal()?;
    let converter = Converter::load(ctx)?;
    let week = ctx.today.checked_add(jiff::Span::new().days(7)).map_err(|_| OpError::Internal)?;
    let month_ago =
        ctx.today.checked_sub(jiff::Span::new().days(30)).map_err(|_| OpError::Internal)?;
    let mut items = Vec::new();
    let mut missing_rates: BTreeMap<Currency, Vec<Ref>> = BTreeMap::new();
    for row in rows.iter() {
        let status = effective_status(row, ctx.today);
        let live = matches!(status, SubscriptionStatus::Active | SubscriptionStatus::Trial);
        if status == SubscriptionStatus::Trial
            && let Some(end) = row.trial_ends_on
            && end <= week
        {
            items.push(AttentionItem {
                kind: AttentionKind::TrialEnding,
                message: ctx.say(
                    &Text::new(
                        "The free trial of {name} ends on {date}; the first charge follows.",
                    )
                    .with("name", &row.name)
                    .with("date", end),
                ),
                subscriptions: vec![sref(row)],
                due_on: Some(end.into()),
            });
        }
        if live
            && let Some(method) =
                row.payment_method_id.and_then(|id| methods.iter().find(|m| m.id == id))
            && let Some(expires) = &method.expires
        {
            let parts = SeriesParts::of(row);
            if let Some(next) = parts.series(row).next_on_or_after(ctx.today)
                && next.date <= week
                && expires.as_str() < next.date.strftime("%Y-%m").to_string().as_str()
            {
                items.push(AttentionItem {
                    kind: AttentionKind::CardExpiring,
                    message: ctx.say(
                        &Text::new("{name} charges {method} on {date}, but it expires {expires}.")
                            .with("name", &row.name)
                            .with("method", &method.name)
                            .with_date("date", next.date)
                            .with("expires", expires),
                    ),
                    subscriptions: vec![sref(row)],
                    due_on: Some(next.date.into()),
                });
            }
        }
        for pair in row.prices.windows(2) {
            let ((_, old), (date, new)) = (pair[0], pair[1]);
            if new > old && date >= month_ago && date <= ctx.today {
                items.push(AttentionItem {
                    kind: AttentionKind::PriceIncrease,
                    message: ctx.say(
                        &Text::new("{name} went up from {old} to {new} on {date}.")
                            .with("name", &row.name)
                            .with_money("old", domain::Money::new(old, row.currency))
                            .with_money("new", domain::Money::new(new, row.currency))
                            .with_date("date", date),
                    ),
                    subscriptions: vec![sref(row)],
                    due_on: None,
                });
            }
        }
        if live && row.category_id.is_none() {
            items.push(AttentionItem {
                kind: AttentionKind::Uncategorised,
                message: ctx.say(&Text::new("{name} has no category.").with("name", &row.name)),
                subscriptions: vec![sref(row)],
                due_on: None,
            });
        }
        if live && converter.to_main(1, row.currency).is_none() {
            missing_rates.entry(row.currency).or_default().push(sref(row));
        }
    }
    let live: Vec<&SubscriptionRow> = rows.iter().filter(|r| counted(r, ctx.today)).collect();
    let names: Vec<&str> = live.iter().map(|r| r.name.as_str()).collect();
    for (i, j) in validate::look_alike_pairs(&names) {
        let (a, b) = (live[i], live[j]);
        items.push(AttentionItem {
            kind: AttentionKind::LooksAlike,
            message: ctx.say(
                &Text::new("{a} and {b} look alike; is one a duplicate?")
                    .with("a", &a.name)
                    .with("b", &b.name),
            ),
            subscriptions: vec![sref(a), sref(b)],
            due_on: None,
        });
    }
    bank_attention(ctx, &mut items)?;
    recurring_attention(ctx, &rows, &mut items)?;
    duplicate_attention(ctx, &mut items)?;
    for (code, subscriptions) in missing_rates {
        items.push(AttentionItem {
            kind: AttentionKind::MissingRate,
            message: ctx.say(&Text::new("No exchange rate for {code}: its amounts are left out of totals. Set one in settings.").with("code", code)),
            subscriptions,
            due_on: None,
        });
    }
    Ok(items)
}

/// How many failed syncs in a row make a connection that needs nobody worth a person's look.
const BANK_FAILURES_TO_SHOW: i64 = 4;

/// The bank connections that need a person (link again, a setting to fix), or that have
/// failed to sync for a while.
fn bank_attention(ctx: &Ctx<'_>, items: &mut Vec<AttentionItem>) -> Result<(), OpError> {
    for connection in
        store::banks::connections(ctx.db, ctx.household_id(), ctx.me()).or_internal()?
    {
        let needs_a_person = matches!(connection.status.as_str(), "needs_relink" | "misconfigured");
        let consent_ends = connection
            .consent_until
            .as_deref()
            .and_then(ops::common::Timestamp::parse)
            .map(|until| until.0);
        if !needs_a_person
            && let Some(until) = consent_ends
            && until
                <= ctx.now
                    + jiff::SignedDuration::from_hours(24 * ops::limits::BANK_CONSENT_WARNING_DAYS)
        {
            let day = crate::clock::today_in(&ctx.household, until);
            items.push(AttentionItem {
                kind: AttentionKind::BankConnection,
                message: ctx.say(
                    &Text::new("The bank's consent for {name} ends on {date}: connect the bank again before then to keep it syncing.")
                        .with("name", &connection.name)
                        .with_date("date", day),
                ),
                subscriptions: Vec::new(),
                due_on: Some(day.into()),
            });
            continue;
        }
        if !needs_a_person && connection.failures < BANK_FAILURES_TO_SHOW {
            continue;
        }
        let problem =
            connection.status_detail.as_deref().map(|s| ctx.say_stored(s)).unwrap_or_default();
        let text = if needs_a_person {
            Text::new("The bank connection {name} needs you: {problem}")
        } else {
            Text::new("The bank connection {name} has not synced for a while: {problem}")
        };
        items.push(AttentionItem {
            kind: AttentionKind::BankConnection,
            message: ctx.say(&text.with("name", &connection.name).with("problem", problem)),
            subscriptions: Vec::new(),
            due_on: None,
        });
    }
    Ok(())
}

/// The recurring charges a bank sync noticed that are still not a subscription of the
/// household, and nobody dismissed.
fn recurring_attention(
    ctx: &Ctx<'_>,
    subscriptions: &[SubscriptionRow],
    items: &mut Vec<AttentionItem>,
) -> Result<(), OpError> {
    for proposal in
        store::banks::open_proposals(ctx.db, ctx.household_id(), ctx.me()).or_internal()?
    {
        let (Ok(currency), Some(cycle)) = (Currency::parse(&proposal.currency), proposal.cycle())
        else {
            continue;
        };
        if views::proposal_is_a_subscription(&proposal, subscriptions) {
            continue;
        }
        let text = Text::new("{name} looks like a new recurring charge on {account}: {amount}, {cycle}, next about {date}. Add it as a subscription, or dismiss suggestion {id}.")
            .with("name", &proposal.name)
            .with("account", &proposal.account_name)
            .with_money("amount", domain::Money::new(proposal.amount_minor, currency))
            .with_date("date", proposal.next_expected)
            .with_cycle("cycle", cycle)
            .with("id", proposal.id);
        items.push(AttentionItem {
            kind: AttentionKind::NewRecurring,
            message: ctx.say(&text),
            subscriptions: Vec::new(),
            due_on: Some(proposal.next_expected.into()),
        });
    }
    Ok(())
}

/// The pending bank payments that a booked one of the same amount, up to
/// `ops::limits::PENDING_BOOKED_DAYS` later, may be: the bank gave it a new id and several
/// pending ones could be it, or its pending one lingers. A person tells them apart.
fn duplicate_attention(ctx: &Ctx<'_>, items: &mut Vec<AttentionItem>) -> Result<(), OpError> {
    let pending = store::banks::pending_rows(ctx.db, ctx.household_id(), ctx.me()).or_internal()?;
    let mut booked: BTreeMap<i64, Vec<store::banks::KnownRow>> = BTreeMap::new();
    for row in &pending {
        let Ok(currency) = Currency::parse(&row.currency) else { continue };
        let known = match booked.entry(row.account_id) {
            std::collections::btree_map::Entry::Occupied(rows) => rows.into_mut(),
            // Oldest first: the account's first pending row is its earliest.
            std::collections::btree_map::Entry::Vacant(rows) => {
                let known = store::banks::known_rows(
                    ctx.db,
                    ctx.household_id(),
                    row.account_id,
                    row.on_date,
                )
                .or_internal()?;
                rows.insert(known.into_iter().filter(|k| !k.pending).collect())
            }
        };
        let window = jiff::Span::new().days(ops::limits::PENDING_BOOKED_DAYS);
        let latest = row.on_date.saturating_add(window);
        let Some(twin) = known.iter().find(|k| {
            k.amount_minor == row.amount_minor && k.on_date >= row.on_date && k.on_date <= latest
        }) else {
            continue;
        };
        let text = Text::new("{account}: the pending {amount} of {date} ({description}) may be the payment booked on {booked}. If it is, delete transaction {id}; if not, it goes when the bank stops showing it.")
            .with("account", &row.account_name)
            .with_money("amount", domain::Money::new(row.amount_minor, currency))
            .with_date("date", row.on_date)
            .with("description", &row.description)
            .with_date("booked", twin.on_date)
            .with("id", row.id);
        items.push(AttentionItem {
            kind: AttentionKind::PossibleDuplicate,
            message: ctx.say(&text),
            subscriptions: Vec::new(),
            due_on: None,
        });
    }
    Ok(())
}

/// The bank connections the briefing names, with the accounts they bring.
fn bank_briefs(ctx: &Ctx<'_>) -> Result<Vec<ops::reports::BankConnectionBrief>, OpError> {
    let rows = store::banks::connections(ctx.db, ctx.household_id(), ctx.me()).or_internal()?;
    let ids: Vec<i64> = rows.iter().map(|row| row.id).collect();
    let accounts = store::banks::bank_accounts(ctx.db, ctx.household_id(), &ids).or_internal()?;
    rows.iter()
        .map(|row| {
            Ok(ops::reports::BankConnectionBrief {
                id: row.id,
                name: row.name.clone(),
                status: ops::banks::ConnectionStatus::parse(&row.status)
                    .ok_or(OpError::Internal)?,
                last_success_at: row
                    .last_success_at
                    .as_deref()
                    .and_then(ops::common::Timestamp::parse),
                accounts: accounts
                    .iter()
                    .filter(|a| a.connection_id == row.id)
                    .filter_map(|a| a.account.clone())
                    .map(|(id, name)| Ref { id, name })
                    .collect(),
            })
        })
        .collect()
}

pub(crate) fn attention_items(ctx: &mut Ctx<'_>, _: Empty) -> Result<AttentionList, OpError> {
    Ok(AttentionList { items: attention_list(ctx)? })
}

// What the briefing lists before summarising the rest: with the Markdown that repeats them,
// a household of any size gets a briefing under the 30 KB a tool result may take.

/// How many subscriptions the briefing lists by name.
const CONTEXT_SUBSCRIPTIONS: usize = 60;

/// How many upcoming charges the briefing lists.
const CONTEXT_UPCOMING: usize = 30;

/// How many attention items the briefing lists.
const CONTEXT_ATTENTION: usize = 20;

/// How many accounts the briefing lists.
const CONTEXT_ACCOUNTS: usize = 30;

pub(crate) fn get_context(ctx: &mut Ctx<'_>, _: Empty) -> Result<Context, OpError> {
    let household = views::household_view(ctx);
    let members = store::households::list_members(ctx.db, ctx.household_id()).or_internal()?;
    let you = members
        .iter()
        .find(|m| m.id == ctx.me())
        .map(|m| Ref { id: m.id, name: m.name.clone() })
        .ok_or(OpError::Internal)?;
    let summary =
        spending_summary(ctx, SpendingSummaryInput { group_by: Some(SpendingGroupBy::None) })?;
    let rows = ctx.visible_subscriptions()?;
    // Rows as list_subscriptions shows them, built only for those the briefing lists.
    let shown: Vec<_> = rows
        .iter()
        .filter(|r| effective_status(r, ctx.today) != SubscriptionStatus::Cancelled)
        .collect();
    let omitted = shown.len().saturating_sub(CONTEXT_SUBSCRIPTIONS) as u64;
    let subscriptions = shown
        .into_iter()
        .take(CONTEXT_SUBSCRIPTIONS)
        .map(|row| views::subscription_summary(row, ctx.today))
        .collect();
    let to = ctx.today.checked_add(jiff::Span::new().days(13)).map_err(|_| OpError::Internal)?;
    let mut upcoming = views::project(ctx, ctx.today, to, None)?;
    let upcoming_omitted = upcoming.len().saturating_sub(CONTEXT_UPCOMING) as u64;
    upcoming.truncate(CONTEXT_UPCOMING);
    let mut attention = attention_list(ctx)?;
    let attention_omitted = attention.len().saturating_sub(CONTEXT_ATTENTION) as u64;
    attention.truncate(CONTEXT_ATTENTION);
    let members: Vec<Ref> =
        members.iter().map(|m| Ref { id: m.id, name: m.name.clone() }).collect();
    let accounts: Vec<ops::reports::AccountBrief> =
        store::ledger::list_accounts(ctx.db, ctx.household_id(), ctx.me())
            .or_internal()?
            .iter()
            .filter(|row| !row.archived)
            .map(views::account_view)
            .map(|account| ops::reports::AccountBrief {
                id: account.id,
                name: account.name,
                kind: account.kind,
                balance: account.balance,
                balance_on: account.balance_on,
            })
            .collect();
    let accounts_omitted = accounts.len().saturating_sub(CONTEXT_ACCOUNTS) as u64;
    let accounts = accounts.into_iter().take(CONTEXT_ACCOUNTS).collect();
    let mut context = Context {
        household,
        members,
        you,
        monthly_total: summary.monthly,
        yearly_total: summary.yearly,
        unconverted: summary.unconverted,
        subscriptions,
        subscriptions_omitted: omitted,
        upcoming,
        upcoming_omitted,
        attention,
        attention_omitted,
        bank_connections: bank_briefs(ctx)?,
        accounts,
        accounts_omitted,
        markdown: String::new(),
    };
    let reader = if ctx.caller.actor == ops::Actor::Assistant {
        crate::briefing::Reader::Assistant
    } else {
        crate::briefing::Reader::Agent
    };
    fit_in_a_tool_result(&mut context, reader)?;
    Ok(context)
}

/// Writes the Markdown, listing less until the whole briefing fits in a tool result: the
/// longest of the subscriptions, upcoming charges and attention items loses a quarter, and its
/// omitted count says how many are left out.
fn fit_in_a_tool_result(
    context: &mut Context,
    reader: crate::briefing::Reader,
) -> Result<(), OpError> {
    loop {
        context.markdown = crate::briefing::markdown(context, reader);
        let size = serde_json::to_vec(&*context).map_err(|_| OpError::Internal)?.len();
        let lengths =
            [context.subscriptions.len(), context.upcoming.len(), context.attention.len()];
        let longest = (0..3).max_by_key(|&i| lengths[i]).unwrap_or(0);
        if size <= ops::limits::MODEL_RESULT_BYTES || lengths[longest] == 0 {
            return Ok(());
        }
        let keep = lengths[longest] - lengths[longest].div_ceil(4);
        let dropped = (lengths[longest] - keep) as u64;
        match longest {
            0 => {
                context.subscriptions.truncate(keep);
                context.subscriptions_omitted += dropped;
            }
            1 => {
                context.upcoming.truncate(keep);
                context.upcoming_omitted += dropped;
            }
            _ => {
                context.attention.truncate(keep);
                context.attention_omitted += dropped;
            }
        }
    }
}
