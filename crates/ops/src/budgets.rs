//! Budget ops: a limit per period over categories and/or labels, or the one catch-all budget
//! over every payment out; each period's allocated, carried-over, spent and remaining amounts.
//!
//! Spending is counted when read, over all of history from the budget's first period, so a
//! budget created today shows last month's spending at once: there is no backfill to wait for.

pub use domain::budget::BudgetPeriod;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    common::{Amount, IdInput, Ref},
    household::Removed,
    op::{Hints, Op, OpInfo},
    resolve::{BudgetId, CategoryId, IsoDate, LabelId},
};

/// One period of a budget, with what was spent in it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BudgetPeriodView {
    pub first_day: IsoDate,
    pub last_day: IsoDate,
    /// The period's own limit.
    pub allocated: Amount,
    /// Left over from earlier periods, for a rollover budget; zero otherwise.
    pub carried_over: Amount,
    /// In the budget's currency; net of refunds and other money in, except for the catch-all,
    /// which counts payments out only.
    pub spent: Amount,
    /// allocated minus spent (carried_over is apart); negative when over.
    pub remaining: Amount,
    /// Spending in other currencies than the budget's, not converted and not in `spent`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unconverted: Vec<Amount>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Budget {
    pub id: i64,
    pub name: String,
    pub period: BudgetPeriod,
    /// A weekday (1 Monday), a day of the month, or a month (yearly), as `period` reads it.
    pub start_day: u8,
    pub starts_on: IsoDate,
    /// A positive remainder is carried into the next period.
    pub rollover: bool,
    /// Tracks every payment out, whatever its category.
    pub catch_all: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<Ref>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<Ref>,
    /// The period today falls in.
    pub current: BudgetPeriodView,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BudgetList {
    pub items: Vec<Budget>,
}

pub struct ListBudgets;
impl Op for ListBudgets {
    const INFO: OpInfo = OpInfo::read(
        "list_budgets",
        "List budgets with what is spent and left this period",
        "Allocated, carried over, spent and remaining for each, over the transactions you can see.",
    );
    type Input = crate::household::Empty;
    type Output = BudgetList;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetBudgetInput {
    pub id: BudgetId,
    /// How many periods back from the one in progress; default 12.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = crate::limits::BUDGET_PERIODS))]
    pub periods: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BudgetHistory {
    pub budget: Budget,
    /// Newest first, from the period in progress back to the budget's first.
    pub periods: Vec<BudgetPeriodView>,
}

pub struct GetBudget;
impl Op for GetBudget {
    const INFO: OpInfo = OpInfo::read(
        "get_budget",
        "Show a budget's periods, newest first",
        "Each with allocated, carried over, spent and remaining.",
    );
    type Input = GetBudgetInput;
    type Output = BudgetHistory;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateBudgetInput {
    /// Unique in the household, ignoring case.
    #[schemars(length(min = 1, max = crate::limits::SHORT_NAME))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub name: String,
    /// Per period, in the household's currency.
    pub amount: crate::common::UnsignedAmount,
    pub period: BudgetPeriod,
    /// Weekly, fortnightly: weekday 1 (Mon) to 7; monthly: day 1 to 31; yearly: month 1 to 12.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 31))]
    pub start_day: Option<i64>,
    /// A day in the first period; default today.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starts_on: Option<IsoDate>,
    /// Default: the category named like the budget.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = crate::limits::BUDGET_TRACKS))]
    pub category_ids: Vec<CategoryId>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = crate::limits::BUDGET_TRACKS))]
    pub label_ids: Vec<LabelId>,
    /// Track every payment out instead; one per household.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catch_all: Option<bool>,
    /// Carry a positive remainder forward.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollover: Option<bool>,
}

pub struct CreateBudget;
impl Op for CreateBudget {
    const INFO: OpInfo = OpInfo::write(
        "create_budget",
        "Add a budget over categories and/or labels, or the catch-all",
        "History counts at once from the period holding starts_on. Only name and amount change later.",
        Hints::write(false),
    );
    type Input = CreateBudgetInput;
    type Output = Budget;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateBudgetInput {
    pub id: BudgetId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = crate::limits::SHORT_NAME))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub name: Option<String>,
    /// The new limit, from the period in progress on; closed periods keep theirs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<crate::common::UnsignedAmount>,
}

pub struct UpdateBudget;
impl Op for UpdateBudget {
    const INFO: OpInfo = OpInfo::write(
        "update_budget",
        "Rename a budget or change its limit",
        "Only these: a new period or tracking would count transactions twice; delete and create instead.",
        Hints::write(true),
    );
    type Input = UpdateBudgetInput;
    type Output = Budget;
}

pub struct DeleteBudget;
impl Op for DeleteBudget {
    const INFO: OpInfo = OpInfo::write(
        "delete_budget",
        "Delete a budget",
        "The transactions it watched stay. Undo restores it.",
        Hints::destructive(true),
    );
    type Input = IdInput<BudgetId>;
    type Output = Removed;
}
