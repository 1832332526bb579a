//! Reports over transactions and balances: spending by category, cashflow per period and net
//! worth over time. All in the household's main currency at its exchange rates, with amounts
//! in a currency without a rate listed apart; transfers between the household's accounts are
//! never income or spending. Subscription reports are in `reports`.

use domain::entities::AccountKind;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    common::{Amount, Ref},
    op::{Op, OpInfo},
    resolve::{AccountId, CategoryId, IsoDate},
};

domain::named_enum! {
    /// How long each period of a report is.
    pub enum ReportInterval("interval") {
        /// Weeks from the household's week start.
        Week => "week" | "weekly",
        /// Calendar months (the default).
        Month => "month" | "monthly",
        /// Calendar years.
        Year => "year" | "yearly",
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpendingByCategoryInput {
    /// The first day; default the first of the month `to` is in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<IsoDate>,
    /// The last day; default today.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<IsoDate>,
    /// Only this account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<AccountId>,
    /// Only this category.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category_id: Option<CategoryId>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CategorySpending {
    /// None: transactions without a category.
    pub category: Option<Ref>,
    pub spent: Amount,
    /// Share of all spending in the window, in percent.
    pub percent: u32,
    pub transactions: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CategorySpendingReport {
    pub from: IsoDate,
    pub to: IsoDate,
    /// Most spent first.
    pub categories: Vec<CategorySpending>,
    pub total: Amount,
    /// Spending in currencies without an exchange rate, by currency.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unconverted: Vec<Amount>,
    /// When the category or account asked for spent nothing: what was read, and what was spent
    /// in the window without them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

pub struct SpendingByCategory;
impl Op for SpendingByCategory {
    const INFO: OpInfo = OpInfo::read(
        "spending_by_category",
        "What the accounts' transactions spent per category between two days",
        "Money out less refunds into the same category; uncategorised money in is income. Transfers never count. What subscriptions cost: get_spending_summary.",
    );
    type Input = SpendingByCategoryInput;
    type Output = CategorySpendingReport;
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PeriodReportInput {
    /// The first day; default twelve intervals back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<IsoDate>,
    /// The last day; default today.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<IsoDate>,
    /// Default: month.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<ReportInterval>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CashflowPeriod {
    pub first_day: IsoDate,
    pub last_day: IsoDate,
    pub income: Amount,
    pub expenses: Amount,
    /// income minus expenses.
    pub net: Amount,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Cashflow {
    /// Oldest first.
    pub periods: Vec<CashflowPeriod>,
    pub income: Amount,
    pub expenses: Amount,
    pub net: Amount,
    /// Net flow in currencies without an exchange rate, by currency, over the whole range.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unconverted: Vec<Amount>,
}

pub struct GetCashflow;
impl Op for GetCashflow {
    const INFO: OpInfo = OpInfo::read(
        "get_cashflow",
        "Income and expenses per week, month or year",
        "Transfers between accounts are neither.",
    );
    type Input = PeriodReportInput;
    type Output = Cashflow;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct KindWorth {
    pub kind: AccountKind,
    pub amount: Amount,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NetWorthPoint {
    /// At the end of this day.
    pub on: IsoDate,
    pub total: Amount,
    pub by_kind: Vec<KindWorth>,
    /// Accounts in currencies without an exchange rate, by currency.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unconverted: Vec<Amount>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NetWorth {
    /// Oldest first: the end of each interval, and `to`.
    pub points: Vec<NetWorthPoint>,
    /// Accounts counted, archived ones included.
    pub accounts: Vec<Ref>,
}

pub struct GetNetWorth;
impl Op for GetNetWorth {
    const INFO: OpInfo = OpInfo::read(
        "get_net_worth",
        "Net worth over time, per kind of account",
        "From recorded balances and the transactions between; loans and cards count negative. One account's balance: list_accounts.",
    );
    type Input = PeriodReportInput;
    type Output = NetWorth;
}
