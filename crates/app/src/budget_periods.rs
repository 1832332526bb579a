//! A budget's periods from its first to the one in progress, with what was allocated,
//! carried over, spent and left in each, and the budget as every op shows it. Shared by the
//! budget handlers and the export; what may be written is in `handlers::budgets`.

use domain::{
    Currency, Date,
    budget::{Period, PeriodRule},
};
use ops::{
    OpError,
    budgets::{Budget, BudgetPeriodView},
    common::Ref,
    resolve::IsoDate,
};
use store::budgets::{self as db, BudgetRow};

use crate::{ctx::Ctx, transactions::StoreExt, views};

/// How far back a budget's history may start.
pub(crate) const HISTORY_YEARS: i16 = 10;

pub(crate) fn rule(row: &BudgetRow) -> PeriodRule {
    PeriodRule::from_stored(row.period, row.start_day, row.starts_on)
}

pub(crate) fn period_of(rule: &PeriodRule, day: Date) -> Result<Period, OpError> {
    rule.containing(day).ok_or(OpError::Internal)
}

/// The budget's periods from its first to the one in progress, oldest first; with `only_current`
/// (a budget without rollover needs nothing earlier), just the one in progress.
pub(crate) fn periods(
    ctx: &Ctx<'_>,
    row: &BudgetRow,
    only_current: bool,
) -> Result<Vec<BudgetPeriodView>, OpError> {
    let rule = rule(row);
    let current = period_of(&rule, ctx.today)?;
    // A stored start further back than a budget may begin (a row written by hand) is read
    // from there, so a history is at most some hundreds of periods.
    let earliest = ctx.today.saturating_sub(jiff::Span::new().years(HISTORY_YEARS));
    let first = if only_current {
        current
    } else {
        period_of(&rule, row.starts_on.max(earliest))?.min(current)
    };
    let spending =
        db::spending_by_day(ctx.db, ctx.me(), row, first.first, current.last).or_internal()?;
    let main = row.currency;
    let mut days = spending.iter().peekable();
    let mut views = Vec::new();
    let mut carried = 0i64;
    let mut period = first;
    loop {
        let mut spent = 0i64;
        let mut unconverted: Vec<(Currency, i64)> = Vec::new();
        while let Some((_, currency, sum)) = days.next_if(|(day, _, _)| *day <= period.last) {
            if *currency == main {
                spent -= sum;
            } else if let Some(entry) = unconverted.iter_mut().find(|(c, _)| c == currency) {
                entry.1 -= sum;
            } else {
                unconverted.push((*currency, -sum));
            }
        }
        let allocated = row.amount_for(period.first);
        let carried_over = if row.rollover { carried } else { 0 };
        views.push(BudgetPeriodView {
            first_day: IsoDate(period.first),
            last_day: IsoDate(period.last),
            allocated: views::amount(allocated, main),
            carried_over: views::amount(carried_over, main),
            spent: views::amount(spent, main),
            remaining: views::amount(allocated - spent, main),
            unconverted: unconverted
                .into_iter()
                .map(|(currency, minor)| views::amount(minor, currency))
                .collect(),
        });
        carried = (allocated + carried_over - spent).max(0);
        if period.last >= current.last {
            break;
        }
        period = rule.after(period).ok_or(OpError::Internal)?;
    }
    Ok(views)
}

pub(crate) fn budget_view(ctx: &Ctx<'_>, row: &BudgetRow) -> Result<Budget, OpError> {
    let mut periods = periods(ctx, row, !row.rollover)?;
    let current = periods.pop().ok_or(OpError::Internal)?;
    Ok(budget_with(row, current))
}

pub(crate) fn budget_with(row: &BudgetRow, current: BudgetPeriodView) -> Budget {
    let refs = |items: &[(i64, String)]| {
        items.iter().map(|(id, name)| Ref { id: *id, name: name.clone() }).collect()
    };
    Budget {
        id: row.id,
        name: row.name.clone(),
        period: row.period,
        start_day: rule(row).start_day(),
        starts_on: IsoDate(row.starts_on),
        rollover: row.rollover,
        catch_all: row.catch_all,
        categories: refs(&row.categories),
        labels: refs(&row.labels),
        current,
    }
}
