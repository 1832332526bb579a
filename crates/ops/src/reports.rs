//! Reports: spending summary and history, price changes, savings, attention items and the
//! briefing (`get_context`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    charges::ProjectedCharge,
    common::{Amount, Ref},
    household::{Empty, Household},
    op::{Op, OpInfo},
    resolve::IsoDate,
};

domain::named_enum! {
    /// How `get_spending_summary` groups subscriptions.
    pub enum SpendingGroupBy("grouping") {
        /// By category (the default).
        Category => "category",
        /// By owner.
        Member => "member",
        /// By payment method.
        PaymentMethod => "payment_method",
        /// By tag: a subscription counts under each of its tags.
        Tag => "tag",
        /// One total.
        None => "none",
    }
}

domain::named_enum! {
    /// Why `find_savings` suggests a look.
    pub enum SavingKind("kind of saving") {
        /// Two subscriptions that look like the same service.
        Duplicate => "duplicate",
        /// The price went up recently.
        PriceIncrease => "price_increase",
        /// Several services in one category.
        OverlappingCategory => "overlapping_category",
        /// Paused for a long time.
        LongPaused => "long_paused",
        /// Charges that failed.
        FailedCharges => "failed_charges",
    }
}

domain::named_enum! {
    /// What an attention item is about.
    pub enum AttentionKind("kind of attention item") {
        /// A trial ends within 7 days.
        TrialEnding => "trial_ending",
        /// A charge within 7 days is on a payment method that expires before it.
        CardExpiring => "card_expiring",
        /// A price went up in the last 30 days.
        PriceIncrease => "price_increase",
        /// A subscription has no category.
        Uncategorised => "uncategorised",
        /// Two subscriptions look alike.
        LooksAlike => "looks_alike",
        /// A currency in use has no exchange rate.
        MissingRate => "missing_rate",
        /// A bank connection needs a person, or has not synced for a while.
        BankConnection => "bank_connection",
        /// A bank sync noticed a recurring charge that is not a subscription yet.
        NewRecurring => "new_recurring",
        /// A pending bank payment may be one the bank has booked since.
        PossibleDuplicate => "possible_duplicate",
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpendingSummaryInput {
    /// Default: category.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_by: Option<SpendingGroupBy>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SpendingGroup {
    /// The group's id when it has one (category, member, payment method).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    pub label: String,
    pub subscription_count: u64,
    pub monthly: Amount,
    pub yearly: Amount,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Unconverted {
    pub currency: String,
    pub subscription_count: u64,
    pub monthly: Amount,
    pub yearly: Amount,
}

/// One subscription's cost in the main currency.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SubscriptionCost {
    pub id: i64,
    pub name: String,
    /// Both amounts with their period in words ("€7.49 a month, €89.90 a year"): asked what
    /// Amazon Prime costs a year, a small model answered with the monthly amount 4 times in 6,
    /// and 1 in 6 with this beside it. Empty in what was kept before it came.
    #[serde(default)]
    pub cost: String,
    pub monthly: Amount,
    pub yearly: Amount,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SpendingSummary {
    /// For a household with accounts: these are subscriptions' costs, and where transactions,
    /// budgets and balances are read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The main currency every total is in.
    pub currency: String,
    /// Trial and active subscriptions counted.
    pub subscription_count: u64,
    pub monthly: Amount,
    pub yearly: Amount,
    /// The subscriptions that cost the most a year, most first (at most ten): which one costs
    /// the most, and what one of them costs, is read here, never from a group. Before the
    /// groups, as a small model answered "which single subscription costs the most" and "what
    /// is Amazon Prime a year" with the largest group.
    #[serde(default)]
    pub most_expensive: Vec<SubscriptionCost>,
    pub group_by: SpendingGroupBy,
    /// Largest first. With group_by "tag" a subscription counts under each of its tags.
    pub groups: Vec<SpendingGroup>,
    /// Amounts in currencies without an exchange rate: never guessed, shown apart.
    pub unconverted: Vec<Unconverted>,
}

pub struct GetSpendingSummary;
impl Op for GetSpendingSummary {
    const INFO: OpInfo = OpInfo::read(
        "get_spending_summary",
        "Subscriptions' monthly and yearly cost by category, member, payment method or tag, and the ten that cost most",
        "In the main currency at the household's rates; a currency without one is listed apart. Trials count at their coming price.",
    );
    type Input = SpendingSummaryInput;
    type Output = SpendingSummary;
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpendingHistoryInput {
    /// How many months back including this one, 1 to 60; default 12.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = crate::limits::HISTORY_MONTHS))]
    pub months: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MonthSpending {
    /// "YYYY-MM".
    pub month: String,
    /// Paid charges converted to the main currency.
    pub total: Amount,
    pub charge_count: u64,
    /// Paid charges in currencies without a rate, per currency.
    pub unconverted: Vec<Amount>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SpendingHistory {
    pub currency: String,
    /// Oldest first.
    pub months: Vec<MonthSpending>,
}

pub struct GetSpendingHistory;
impl Op for GetSpendingHistory {
    const INFO: OpInfo = OpInfo::read(
        "get_spending_history",
        "What subscriptions actually charged per month",
        "Sums recorded charges with status paid, per calendar month, in the main currency.",
    );
    type Input = SpendingHistoryInput;
    type Output = SpendingHistory;
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListPriceChangesInput {
    /// Only changes effective on or after this date; default: a year ago.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<IsoDate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscription_id: Option<crate::resolve::SubscriptionId>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PriceChange {
    pub subscription: Ref,
    pub effective_on: IsoDate,
    pub old_price: Amount,
    pub new_price: Amount,
    /// Signed percentage with one decimal, e.g. "+12.5".
    pub change_percent: String,
    /// The change in the yearly cost.
    pub yearly_difference: Amount,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PriceChangeList {
    /// Newest first.
    pub items: Vec<PriceChange>,
    /// When the window is empty: what was read, and the latest change before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

pub struct ListPriceChanges;
impl Op for ListPriceChanges {
    const INFO: OpInfo = OpInfo::read(
        "list_price_changes",
        "Price changes of subscriptions, newest first",
        "Old and new price, the percentage and the yearly difference.",
    );
    type Input = ListPriceChangesInput;
    type Output = PriceChangeList;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SavingCandidate {
    pub kind: SavingKind,
    pub subscriptions: Vec<Ref>,
    pub title: String,
    /// The facts behind the suggestion.
    pub evidence: String,
    /// What stopping it would save per year, in the main currency when a rate is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub yearly_saving: Option<Amount>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Savings {
    pub items: Vec<SavingCandidate>,
}

pub struct FindSavings;
impl Op for FindSavings {
    const INFO: OpInfo = OpInfo::read(
        "find_savings",
        "Find subscriptions worth reviewing, with the evidence",
        "Look-alike duplicates, price rises, overlapping services, long pauses, failed charges. Suggestions only: ask the person before cancelling.",
    );
    type Input = Empty;
    type Output = Savings;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AttentionItem {
    pub kind: AttentionKind,
    pub message: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subscriptions: Vec<Ref>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due_on: Option<IsoDate>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AttentionList {
    pub items: Vec<AttentionItem>,
}

pub struct ListAttentionItems;
impl Op for ListAttentionItems {
    const INFO: OpInfo = OpInfo::read(
        "list_attention_items",
        "List what needs attention",
        "Trials and cards ending in 7 days, price rises in 30, uncategorised or look-alike subscriptions, missing rates, banks needing you, new recurring charges.",
    );
    type Input = Empty;
    type Output = AttentionList;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Context {
    pub household: Household,
    /// Member names and ids (never emails).
    pub members: Vec<Ref>,
    pub you: Ref,
    pub monthly_total: Amount,
    pub yearly_total: Amount,
    pub unconverted: Vec<Unconverted>,
    /// Trial, active and paused subscriptions.
    pub subscriptions: Vec<crate::subscriptions::SubscriptionSummary>,
    /// How many subscriptions were left out of `subscriptions` for size.
    pub subscriptions_omitted: u64,
    /// The next 14 days, soonest first.
    pub upcoming: Vec<ProjectedCharge>,
    /// How many upcoming charges were left out of `upcoming` for size.
    pub upcoming_omitted: u64,
    /// The first of what needs attention (`list_attention_items` has them all).
    pub attention: Vec<AttentionItem>,
    /// How many attention items were left out of `attention` for size.
    pub attention_omitted: u64,
    /// The bank connections the caller sees, and the accounts they bring.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bank_connections: Vec<BankConnectionBrief>,
    /// The accounts the caller sees (not archived), with their latest balances.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accounts: Vec<AccountBrief>,
    /// How many accounts were left out of `accounts` for size.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub accounts_omitted: u64,
    /// The whole briefing as Markdown, for a model to read first.
    pub markdown: String,
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}

/// An account as the briefing names it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AccountBrief {
    pub id: i64,
    pub name: String,
    pub kind: domain::entities::AccountKind,
    /// The latest recorded balance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub balance: Option<Amount>,
    /// The day of that balance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub balance_on: Option<crate::resolve::IsoDate>,
}

/// A bank connection as the briefing names it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BankConnectionBrief {
    pub id: i64,
    pub name: String,
    pub status: crate::banks::ConnectionStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_success_at: Option<crate::common::Timestamp>,
    /// The Exhale accounts it brings transactions into.
    pub accounts: Vec<Ref>,
}

pub struct GetContext;
impl Op for GetContext {
    const INFO: OpInfo = OpInfo::read(
        "get_context",
        "The briefing: household, today, members, subscriptions, totals, upcoming charges, accounts and what needs attention",
        "It also explains amounts, dates, charge series and which changes a person confirms.",
    );
    type Input = Empty;
    type Output = Context;
}
