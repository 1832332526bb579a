//! Report handlers over transactions and balances: spending by category, cashflow and net
//! worth, converted to the main currency; what has no rate is listed apart.

use std::collections::BTreeMap;

use domain::{
    Currency, Date, Text,
    budget::{BudgetPeriod, Period, PeriodRule},
    entities::{AccountKind, WeekStart},
};
use ops::{
    OpError,
    common::{Amount, Ref},
    ledger_reports::*,
    resolve::IsoDate,
};
use store::ledger_reports as db;

use crate::{
    converter::Converter,
    ctx::Ctx,
    refs::{check_account, check_category},
    transactions::StoreExt,
    views,
};

/// The most periods one report shows (ten years of weeks).
const MAX_PERIODS: usize = 520;

fn check_range(from: Date, to: Date) -> Result<(), OpError> {
    if from > to {
        return Err(OpError::invalid(
            "/to",
            Text::new("to ({to}) is before from ({from}); swap them.")
                .with("from", IsoDate(from))
                .with("to", IsoDate(to)),
        ));
    }
    Ok(())
}

/// Amounts per currency without a rate, as a list by currency.
fn unconverted(sums: BTreeMap<Currency, i64>) -> Vec<Amount> {
    sums.into_iter()
        .filter(|(_, minor)| *minor != 0)
        .map(|(currency, minor)| views::amount(minor, currency))
        .collect()
}

/// A category (None: without one), what was spent in it in the main currency, and in how many
/// transactions.
type CategorySpent = (Option<Ref>, i64, u64);

/// Spending in a currency without a rate, per category and currency.
type Unrated = BTreeMap<(Option<i64>, Currency), i64>;

/// What the accounts spent per category from `from` to `to` (on one account if given), most
/// spent first, and what has no rate, per category and currency. A category whose money in
/// outweighs its money out (a salary category) is not spending.
fn spent_per_category(
    ctx: &Ctx<'_>,
    converter: &Converter,
    from: Date,
    to: Date,
    account: Option<i64>,
) -> Result<(Vec<CategorySpent>, Unrated), OpError> {
    let totals = db::category_totals(ctx.db, ctx.household_id(), ctx.me(), from, to, account)
        .or_internal()?;
    let mut by_category: BTreeMap<Option<i64>, (Option<String>, i64, u64)> = BTreeMap::new();
    // Unrated currencies per category too, so a category that brings money in on balance
    // (a salary in dollars) is left out of them as it is of the rest.
    let mut apart_by_category: Unrated = BTreeMap::new();
    for total in totals {
        let (id, name) = total.category.map_or((None, None), |(id, name)| (Some(id), Some(name)));
        match converter.to_main(-total.sum, total.currency) {
            Some(spent) => {
                let entry = by_category.entry(id).or_insert((name, 0, 0));
                entry.1 += spent;
                entry.2 += total.transactions;
            }
            None => *apart_by_category.entry((id, total.currency)).or_default() -= total.sum,
        }
    }
    let mut categories: Vec<CategorySpent> = by_category
        .into_iter()
        .filter(|(_, (_, spent, _))| *spent > 0)
        .map(|(id, (name, spent, count))| {
            (id.map(|id| Ref { id, name: name.unwrap_or_default() }), spent, count)
        })
        .collect();
    categories.sort_by(|a, b| {
        b.1.cmp(&a.1).then_with(|| a.0.as_ref().map(|r| r.id).cmp(&b.0.as_ref().map(|r| r.id)))
    });
    Ok((categories, apart_by_category))
}

pub(crate) fn spending_by_category(
    ctx: &mut Ctx<'_>,
    input: SpendingByCategoryInput,
) -> Result<CategorySpendingReport, OpError> {
    let to = input.to.map(IsoDate::date).unwrap_or(ctx.today);
    let from = input.from.map(IsoDate::date).unwrap_or_else(|| to.first_of_month());
    check_range(from, to)?;
    let account = input
        .account_id
        .map(|id| check_account(ctx, "/account_id", id).map(|a| a.id))
        .transpose()?;
    let only = input.category_id.map(|id| check_category(ctx, "/category_id", id)).transpose()?;
    let converter = Converter::load(ctx)?;
    let (mut categories, apart_by_category) =
        spent_per_category(ctx, &converter, from, to, account)?;
    let mut apart: BTreeMap<Currency, i64> = BTreeMap::new();
    let asked = |id: &Option<i64>| only.is_none() || *id == only;
    for ((_, currency), spent) in
        apart_by_category.into_iter().filter(|((id, _), spent)| *spent > 0 && asked(id))
    {
        *apart.entry(currency).or_default() += spent;
    }
    // Shares are of everything spent in the window, also when one category is asked for.
    let spent_in_all: i64 = categories.iter().map(|(_, spent, _)| spent).sum();
    let in_window = categories.clone();
    categories.retain(|(category, _, _)| asked(&category.as_ref().map(|r| r.id)));
    let total: i64 = categories.iter().map(|(_, spent, _)| spent).sum();
    let main = converter.main;
    let note = match (categories.is_empty() && apart.is_empty(), only, account) {
        (false, _, _) | (true, None, None) => None,
        (true, _, Some(_)) => {
            let everywhere = spent_per_category(ctx, &converter, from, to, None)?.0;
            Some(nothing_with_filters(from, to, &everywhere, main))
        }
        (true, Some(_), None) => Some(nothing_with_filters(from, to, &in_window, main)),
    };
    Ok(CategorySpendingReport {
        from: IsoDate(from),
        to: IsoDate(to),
        categories: categories
            .into_iter()
            .map(|(category, spent, transactions)| CategorySpending {
                category,
                spent: views::amount(spent, main),
                percent: if spent_in_all > 0 {
                    let all = i128::from(spent_in_all);
                    ((i128::from(spent) * 100 + all / 2) / all) as u32
                } else {
                    0
                },
                transactions,
            })
            .collect(),
        total: views::amount(total, main),
        unconverted: unconverted(apart),
        note,
    })
}

/// How many categories the note of an empty filtered report names.
const NOTE_CATEGORIES: usize = 5;

/// What a report whose category or account matched nothing says: what it read and what the
/// window holds without them. A small model passed a made-up `category_id` and `account_id`
/// for "groceries in October" and answered "nothing" from the empty list.
fn nothing_with_filters(
    from: Date,
    to: Date,
    everywhere: &[CategorySpent],
    main: Currency,
) -> String {
    let nothing = "Nothing was spent in the category and account asked for";
    if everywhere.is_empty() {
        return format!("{nothing}, nor on any account, from {from} to {to}.");
    }
    let spent: Vec<String> = everywhere
        .iter()
        .take(NOTE_CATEGORIES)
        .map(|(category, spent, _)| {
            let name = category.as_ref().map_or("without a category", |c| c.name.as_str());
            format!("{name} {}", views::amount(*spent, main).display)
        })
        .collect();
    // The figures first: a small model repeated the first sentence ("nothing was spent").
    format!(
        "From {from} to {to} all accounts spent: {}. {nothing}; to read one of these, call again with its category_id and no account_id.",
        spent.join(", ")
    )
}

/// The periods of a report from `from` to `to` (the last cut at `to`), oldest first.
fn report_periods(
    ctx: &Ctx<'_>,
    input: &PeriodReportInput,
) -> Result<(Vec<Period>, Date, Date), OpError> {
    let interval = input.interval.unwrap_or(ReportInterval::Month);
    let (period, start_day) = match interval {
        ReportInterval::Week => (
            BudgetPeriod::Weekly,
            if ctx.household.week_start == WeekStart::Sunday { 7 } else { 1 },
        ),
        ReportInterval::Month => (BudgetPeriod::Monthly, 1),
        ReportInterval::Year => (BudgetPeriod::Yearly, 1),
    };
    let rule = PeriodRule::new(period, start_day, ctx.today).map_err(|_| OpError::Internal)?;
    let to = input.to.map(IsoDate::date).unwrap_or(ctx.today);
    let from = match input.from {
        Some(from) => from.date(),
        None => {
            let mut first = rule.containing(to).ok_or(OpError::Internal)?;
            for _ in 0..11 {
                let before = first.first.yesterday().map_err(|_| OpError::Internal)?;
                first = rule.containing(before).ok_or(OpError::Internal)?;
            }
            first.first
        }
    };
    check_range(from, to)?;
    let mut periods = Vec::new();
    let mut period = rule.containing(from).ok_or(OpError::Internal)?;
    loop {
        if periods.len() == MAX_PERIODS {
            return Err(OpError::invalid(
                "/from",
                Text::new(
                    "That is more than {max} periods; choose a longer interval or a later from.",
                )
                .with("max", MAX_PERIODS),
            ));
        }
        periods.push(Period { first: period.first.max(from), last: period.last.min(to) });
        if period.last >= to {
            break;
        }
        period = rule.after(period).ok_or(OpError::Internal)?;
    }
    Ok((periods, from, to))
}

pub(crate) fn get_cashflow(
    ctx: &mut Ctx<'_>,
    input: PeriodReportInput,
) -> Result<Cashflow, OpError> {
    let (periods, from, to) = report_periods(ctx, &input)?;
    let converter = Converter::load(ctx)?;
    let main = converter.main;
    let flows = db::daily_flows(ctx.db, ctx.household_id(), ctx.me(), from, to).or_internal()?;
    let mut days = flows.iter().peekable();
    let mut apart: BTreeMap<Currency, i64> = BTreeMap::new();
    let (mut income_total, mut expenses_total) = (0i64, 0i64);
    let mut out = Vec::with_capacity(periods.len());
    for period in periods {
        let (mut income, mut expenses) = (0i64, 0i64);
        while let Some((_, currency, money_in, money_out)) =
            days.next_if(|(day, ..)| *day <= period.last)
        {
            match (
                converter.to_main(*money_in, *currency),
                converter.to_main(-money_out, *currency),
            ) {
                (Some(i), Some(e)) => {
                    income += i;
                    expenses += e;
                }
                _ => *apart.entry(*currency).or_default() += money_in + money_out,
            }
        }
        income_total += income;
        expenses_total += expenses;
        out.push(CashflowPeriod {
            first_day: IsoDate(period.first),
            last_day: IsoDate(period.last),
            income: views::amount(income, main),
            expenses: views::amount(expenses, main),
            net: views::amount(income - expenses, main),
        });
    }
    Ok(Cashflow {
        periods: out,
        income: views::amount(income_total, main),
        expenses: views::amount(expenses_total, main),
        net: views::amount(income_total - expenses_total, main),
        unconverted: unconverted(apart),
    })
}

pub(crate) fn get_net_worth(
    ctx: &mut Ctx<'_>,
    input: PeriodReportInput,
) -> Result<NetWorth, OpError> {
    let (periods, _, _) = report_periods(ctx, &input)?;
    let converter = Converter::load(ctx)?;
    let main = converter.main;
    let accounts = db::account_histories(ctx.db, ctx.household_id(), ctx.me()).or_internal()?;
    let points = periods
        .iter()
        .map(|period| {
            let on = period.last;
            let mut total = 0i64;
            let mut by_kind: BTreeMap<&'static str, (AccountKind, i64)> = BTreeMap::new();
            let mut apart: BTreeMap<Currency, i64> = BTreeMap::new();
            for account in &accounts {
                let held = account.balance_on(on);
                match converter.to_main(held, account.currency) {
                    Some(value) => {
                        total += value;
                        by_kind.entry(account.kind.as_str()).or_insert((account.kind, 0)).1 +=
                            value;
                    }
                    None => *apart.entry(account.currency).or_default() += held,
                }
            }
            NetWorthPoint {
                on: IsoDate(on),
                total: views::amount(total, main),
                by_kind: by_kind
                    .into_values()
                    .map(|(kind, minor)| KindWorth { kind, amount: views::amount(minor, main) })
                    .collect(),
                unconverted: unconverted(apart),
            }
        })
        .collect();
    Ok(NetWorth {
        points,
        accounts: accounts.iter().map(|a| Ref { id: a.id, name: a.name.clone() }).collect(),
    })
}
