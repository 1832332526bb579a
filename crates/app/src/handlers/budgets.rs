//! Budget handlers: creating, renaming, re-limiting and deleting budgets, and reading their
//! periods with what was spent in each.
//!
//! Spending is counted from the transactions on the accounts the caller can see, so another
//! member's private account never shows through a budget's totals.

use domain::{
    Text,
    budget::{BudgetPeriod, PeriodRule},
    entities::{EntityKind, WeekStart},
};
use ops::{
    OpError,
    budgets::*,
    common::IdInput,
    household::{Empty, Removed},
    resolve::IsoDate,
};
use store::budgets::{self as db, BudgetRow};

use crate::{
    budget_periods::{HISTORY_YEARS, budget_view, budget_with, period_of, periods, rule},
    ctx::Ctx,
    input,
    refs::{check_category, check_labels},
    transactions::StoreExt,
};

fn load_budget(ctx: &Ctx<'_>, id: i64) -> Result<BudgetRow, OpError> {
    db::get_budget(ctx.db, ctx.household_id(), id)
        .or_not_found(|| ctx.unknown(EntityKind::Budget, id))
}

pub(crate) fn list_budgets(ctx: &mut Ctx<'_>, _: Empty) -> Result<BudgetList, OpError> {
    let rows = db::list_budgets(ctx.db, ctx.household_id()).or_internal()?;
    let items = rows.iter().map(|row| budget_view(ctx, row)).collect::<Result<_, _>>()?;
    Ok(BudgetList { items })
}

pub(crate) fn get_budget(
    ctx: &mut Ctx<'_>,
    input: GetBudgetInput,
) -> Result<BudgetHistory, OpError> {
    let row = load_budget(ctx, input.id.get())?;
    let wanted = input.periods.unwrap_or(12);
    if !(1..=ops::limits::BUDGET_PERIODS).contains(&wanted) {
        return Err(OpError::invalid(
            "/periods",
            Text::new("periods is 1 to {max}.").with("max", ops::limits::BUDGET_PERIODS),
        ));
    }
    let mut periods = periods(ctx, &row, false)?;
    periods.reverse();
    periods.truncate(wanted as usize);
    let current = periods.first().cloned().ok_or(OpError::Internal)?;
    Ok(BudgetHistory { budget: budget_with(&row, current), periods })
}

fn check_unique_name(ctx: &Ctx<'_>, name: &str, except: Option<i64>) -> Result<(), OpError> {
    match db::find_budget(ctx.db, ctx.household_id(), name).or_internal()? {
        Some(id) if Some(id) != except => Err(OpError::conflict(
            Text::new("A budget named {name} exists (id {id}). Choose another name, or change that one with update_budget.")
                .with("name", name)
                .with("id", id),
        )),
        _ => Ok(()),
    }
}

/// The start day a period takes by default: the household's week start, or the first.
fn default_start_day(ctx: &Ctx<'_>, period: BudgetPeriod) -> i64 {
    match (period, ctx.household.week_start) {
        (BudgetPeriod::Weekly | BudgetPeriod::Fortnightly, WeekStart::Sunday) => 7,
        _ => 1,
    }
}

pub(crate) fn create_budget(
    ctx: &mut Ctx<'_>,
    input: CreateBudgetInput,
) -> Result<Budget, OpError> {
    ctx.check_cap(store::households::Counted::Budgets, 1)?;
    let name = input::clean_name("/name", &input.name, ops::limits::SHORT_NAME)?;
    check_unique_name(ctx, &name, None)?;
    let currency = ctx.household.currency;
    let amount = input::minor_units("/amount", input.amount.money(currency))?;
    let start_day = input.start_day.unwrap_or_else(|| default_start_day(ctx, input.period));
    let starts_on = input.starts_on.map(IsoDate::date).unwrap_or(ctx.today);
    if starts_on > ctx.today {
        return Err(OpError::invalid(
            "/starts_on",
            Text::new("{date} has not come yet; today is {today}. A budget starts in the period in progress or an earlier one: leave starts_on out for now.")
                .with("date", IsoDate(starts_on))
                .with("today", IsoDate(ctx.today)),
        ));
    }
    let earliest = ctx.today.saturating_sub(jiff::Span::new().years(HISTORY_YEARS));
    if starts_on < earliest {
        return Err(OpError::invalid(
            "/starts_on",
            Text::new("A budget's history goes back at most {years} years, to {earliest}.")
                .with("years", HISTORY_YEARS)
                .with("earliest", IsoDate(earliest)),
        ));
    }
    let rule = PeriodRule::new(input.period, start_day, starts_on).map_err(|err| {
        OpError::invalid("/start_day", Text::new("{error}.").with("error", err.to_string()))
    })?;
    let catch_all = input.catch_all.unwrap_or(false);
    for (pointer, count) in
        [("/category_ids", input.category_ids.len()), ("/label_ids", input.label_ids.len())]
    {
        if count > ops::limits::BUDGET_TRACKS {
            return Err(OpError::invalid(
                pointer,
                Text::new(
                    "At most {max}; a budget over more is likely the catch-all (catch_all: true).",
                )
                .with("max", ops::limits::BUDGET_TRACKS),
            ));
        }
    }
    let mut categories = Vec::new();
    for (i, id) in input.category_ids.iter().enumerate() {
        let id = check_category(ctx, &format!("/category_ids/{i}"), *id)?;
        if !categories.iter().any(|(seen, _)| *seen == id) {
            let found = store::organise::get_category(ctx.db, ctx.household_id(), None, id)
                .or_internal()?;
            categories.push((id, found.name));
        }
    }
    let labels = check_labels(ctx, "/label_ids", &input.label_ids)?
        .into_iter()
        .map(|id| (id, String::new()))
        .collect::<Vec<_>>();
    if catch_all && !(categories.is_empty() && labels.is_empty()) {
        return Err(OpError::invalid(
            "/catch_all",
            Text::new(
                "The catch-all budget tracks every payment out, so it takes no categories or labels. Leave out category_ids and label_ids, or catch_all.",
            ),
        ));
    }
    if !catch_all && categories.is_empty() && labels.is_empty() {
        // "A budget of 150 for Restaurants" arrives named after the category it is for, and
        // tracks it (a model left category_ids out, or passed them to catch_all).
        let namesake =
            store::organise::find_category(ctx.db, ctx.household_id(), &name).or_internal()?;
        let Some(id) = namesake else {
            return Err(OpError::invalid(
                "/category_ids",
                Text::new(
                    "A budget tracks at least one category or label (list_categories, list_labels), or is the catch-all over every payment out (catch_all: true).",
                ),
            ));
        };
        let found =
            store::organise::get_category(ctx.db, ctx.household_id(), None, id).or_internal()?;
        categories.push((id, found.name));
    }
    if catch_all
        && let Some((id, other)) = db::catch_all_budget(ctx.db, ctx.household_id()).or_internal()?
    {
        return Err(OpError::conflict(
            Text::new("{other} (id {id}) is the household's catch-all budget already; there is one. Change its limit with update_budget, or track categories here.")
                .with("other", other)
                .with("id", id),
        ));
    }
    // History is whole periods: the first starts where the period holding starts_on does.
    let first = period_of(&rule, starts_on)?.first;
    let row = BudgetRow {
        id: 0,
        household_id: ctx.household_id(),
        name: name.clone(),
        period: input.period,
        start_day: i64::from(rule.start_day()),
        starts_on: first,
        rollover: input.rollover.unwrap_or(false),
        catch_all,
        currency,
        categories,
        labels,
        amounts: vec![(first, amount)],
    };
    let id = db::insert_budget(ctx.db, &row, &ctx.now_text()).or_internal()?;
    // The card and the activity say what the budget allows, not only its name.
    let summary = match input.period {
        BudgetPeriod::Weekly => Text::new("Added budget {name}: {amount} a week"),
        BudgetPeriod::Fortnightly => Text::new("Added budget {name}: {amount} every two weeks"),
        BudgetPeriod::Monthly => Text::new("Added budget {name}: {amount} a month"),
        BudgetPeriod::Yearly => Text::new("Added budget {name}: {amount} a year"),
    };
    let summary =
        summary.with("name", &name).with_money("amount", domain::Money::new(amount, currency));
    ctx.record(EntityKind::Budget, id, None, summary)?;
    budget_view(ctx, &load_budget(ctx, id)?)
}

pub(crate) fn update_budget(
    ctx: &mut Ctx<'_>,
    input: UpdateBudgetInput,
) -> Result<Budget, OpError> {
    let row = load_budget(ctx, input.id.get())?;
    let before = ctx.snapshot(EntityKind::Budget, row.id)?;
    if let Some(name) = &input.name {
        let name = input::clean_name("/name", name, ops::limits::SHORT_NAME)?;
        check_unique_name(ctx, &name, Some(row.id))?;
        db::rename_budget(ctx.db, ctx.household_id(), row.id, &name).or_internal()?;
    }
    if let Some(amount) = &input.amount {
        let minor = input::minor_units("/amount", amount.money(row.currency))?;
        // The period in progress and later ones; closed periods keep what they had.
        let current = period_of(&rule(&row), ctx.today)?.first.max(row.starts_on);
        db::set_amount(ctx.db, row.id, current, minor).or_internal()?;
    }
    let row = load_budget(ctx, row.id)?;
    ctx.record(
        EntityKind::Budget,
        row.id,
        before,
        Text::new("Updated budget {name}").with("name", &row.name),
    )?;
    budget_view(ctx, &row)
}

pub(crate) fn delete_budget(
    ctx: &mut Ctx<'_>,
    input: IdInput<ops::resolve::BudgetId>,
) -> Result<Removed, OpError> {
    let row = load_budget(ctx, input.id.get())?;
    let before = ctx.snapshot(EntityKind::Budget, row.id)?;
    db::delete_budget(ctx.db, ctx.household_id(), row.id).or_internal()?;
    ctx.record(
        EntityKind::Budget,
        row.id,
        before,
        Text::new("Deleted budget {name}").with("name", &row.name),
    )?;
    Ok(Removed { id: row.id, name: row.name })
}
