//! Subscription ops: list, get, create, update, reschedule, price changes, pause, resume,
//! cancel, delete and bulk updates.

use domain::entities::{SubscriptionStatus, Visibility};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    charges::{Charge, ProjectedCharge},
    common::{Amount, CycleInput, CycleOutput, IdInput, Page, Patch, Ref},
    op::{Hints, Op, OpInfo},
    resolve::{
        CategoryId, FutureDate, IsoDate, MemberId, NearDate, PaymentMethodId, SubscriptionId,
    },
};

domain::named_enum! {
    /// The orders `list_subscriptions` can sort by.
    pub enum SubscriptionSort("sort order") {
        /// By name, ignoring case (the default).
        Name => "name",
        /// Soonest next charge first; those without one last.
        NextCharge => "next_charge",
        /// Highest monthly cost first.
        Price => "price",
        /// Oldest first.
        Created => "created",
    }
}

domain::named_enum! {
    /// What `bulk_update_subscriptions` does to every subscription it is given.
    pub enum BulkAction("bulk action") {
        /// Set the category, payment method or tags given.
        Update => "update",
        /// Pause from today.
        Pause => "pause",
        /// Resume from today.
        Resume => "resume",
        /// Cancel from today.
        Cancel => "cancel",
        /// Delete, with price history and charges.
        Delete => "delete",
    }
}

impl BulkAction {
    /// Whether the action removes something (deleting); the others change what can be
    /// changed back.
    pub fn is_destructive(self) -> bool {
        self == Self::Delete
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Subscription {
    pub id: i64,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// The current price per cycle.
    pub price: Amount,
    pub cycle: CycleOutput,
    pub status: SubscriptionStatus,
    /// The date the series is computed from: the n-th charge is anchor + n cycles.
    pub anchor_on: IsoDate,
    /// The next charge from today, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_charge_on: Option<IsoDate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_charge_amount: Option<Amount>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial_ends_on: Option<IsoDate>,
    /// No charges after this date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ends_on: Option<IsoDate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_until: Option<IsoDate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<Ref>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_method: Option<Ref>,
    pub tags: Vec<String>,
    pub owner: Ref,
    /// Household: everyone sees it; private: only its owner.
    pub visibility: Visibility,
    /// Monthly equivalent in the subscription's currency.
    pub monthly: Amount,
    /// Yearly equivalent in the subscription's currency.
    pub yearly: Amount,
}

/// A subscription as a list shows it: what it takes to choose one and to show it in a row.
/// `get_subscription` has the rest (notes, URL, dates, payment method, tags, equivalents).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SubscriptionSummary {
    pub id: i64,
    pub name: String,
    /// The current price per cycle.
    pub price: Amount,
    /// The cycle in words, such as monthly or every 3 weeks.
    pub cycle: String,
    pub status: SubscriptionStatus,
    /// The next charge from today, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_charge_on: Option<IsoDate>,
    /// Only when the next charge is not the price (a price change takes effect first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_charge_amount: Option<Amount>,
    /// The category's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// The owner's name.
    pub owner: String,
    pub visibility: Visibility,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListSubscriptionsInput {
    /// Only these statuses. Default: all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub status: Vec<SubscriptionStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category_id: Option<CategoryId>,
    /// Only subscriptions without a category.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncategorised: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_method_id: Option<PaymentMethodId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// Only subscriptions owned by this member.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_id: Option<MemberId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Visibility>,
    /// Case-insensitive search in names, notes and URLs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Only subscriptions whose next charge falls on or before this date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due_before: Option<IsoDate>,
    /// Default: name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort: Option<SubscriptionSort>,
    /// Default 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = crate::common::MAX_PAGE))]
    pub limit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = crate::common::CURSOR_PATTERN))]
    pub cursor: Option<String>,
}

pub struct ListSubscriptions;
impl Op for ListSubscriptions {
    const INFO: OpInfo = OpInfo::read(
        "list_subscriptions",
        "List subscriptions, filtered and paginated",
        "Rows to choose from: name, price, cycle, status, next charge, category, owner; sort \"price\" puts the most expensive first. get_subscription has the rest (notes, tags, history, charges).",
    );
    type Input = ListSubscriptionsInput;
    type Output = Page<SubscriptionSummary>;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PricePoint {
    pub effective_on: IsoDate,
    pub price: Amount,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Pause {
    pub from: IsoDate,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<IsoDate>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SubscriptionDetail {
    #[serde(flatten)]
    pub subscription: Subscription,
    /// Every price the subscription has had, oldest first.
    pub price_history: Vec<PricePoint>,
    pub pauses: Vec<Pause>,
    /// The last 12 charges, newest first.
    pub recent_charges: Vec<Charge>,
    /// The next three projected charges.
    pub next_charges: Vec<ProjectedCharge>,
}

pub struct GetSubscription;
impl Op for GetSubscription {
    const INFO: OpInfo = OpInfo::read(
        "get_subscription",
        "Get one subscription with its price history, recent charges and next three charges",
        "A private subscription of another member is not found.",
    );
    type Input = IdInput<SubscriptionId>;
    type Output = SubscriptionDetail;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateSubscriptionInput {
    #[schemars(length(min = 1, max = crate::limits::NAME))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub name: String,
    /// Decimal string in major units, e.g. "12.99".
    pub amount: crate::common::UnsignedAmount,
    /// ISO 4217 code; default: the household's currency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<crate::common::CurrencyCode>,
    pub cycle: CycleInput,
    /// The next (or first) charge date; it anchors the series. May be in the past: past
    /// charges are then recorded. Defaults to `trial_ends_on` for a trial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_charge_on: Option<IsoDate>,
    /// For a free trial: the day it ends and the first charge falls; today or later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial_ends_on: Option<FutureDate>,
    /// No charges after this date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ends_on: Option<NearDate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::limits::URL))]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::limits::NOTES))]
    #[schemars(regex(pattern = domain::validate::MULTILINE_PATTERN))]
    pub notes: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category_id: Option<CategoryId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_method_id: Option<PaymentMethodId>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = crate::limits::TAGS), inner(length(min = 1, max = crate::limits::TAG)))]
    #[schemars(inner(regex(pattern = domain::validate::LINE_PATTERN)))]
    pub tags: Vec<String>,
    /// Default: the caller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_id: Option<MemberId>,
    /// Default: household.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Visibility>,
}

pub struct CreateSubscription;
impl Op for CreateSubscription {
    const INFO: OpInfo = OpInfo::write(
        "create_subscription",
        "Add a subscription",
        "From a name, an amount with its currency, a cycle and the next charge date.",
        Hints::write(false),
    )
    .financial();
    type Input = CreateSubscriptionInput;
    type Output = Subscription;
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateSubscriptionInput {
    pub id: SubscriptionId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = crate::limits::NAME))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub name: Option<String>,
    /// null clears it.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    #[schemars(length(max = crate::limits::URL))]
    pub url: Patch<String>,
    /// null clears it.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    #[schemars(length(max = crate::limits::NOTES))]
    #[schemars(regex(pattern = domain::validate::MULTILINE_PATTERN))]
    pub notes: Patch<String>,
    /// null clears it.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    pub category_id: Patch<CategoryId>,
    /// null clears it.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    pub payment_method_id: Patch<PaymentMethodId>,
    /// Replaces all tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::limits::TAGS), inner(length(min = 1, max = crate::limits::TAG)))]
    #[schemars(inner(regex(pattern = domain::validate::LINE_PATTERN)))]
    pub tags: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_id: Option<MemberId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Visibility>,
}

pub struct UpdateSubscription;
impl Op for UpdateSubscription {
    const INFO: OpInfo = OpInfo::write(
        "update_subscription",
        "Change a subscription's descriptive fields",
        "change_price for the amount, reschedule_subscription for dates and cycle, pause, resume or cancel for the status.",
        Hints::write(true),
    );
    type Input = UpdateSubscriptionInput;
    type Output = Subscription;
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RescheduleSubscriptionInput {
    pub id: SubscriptionId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycle: Option<CycleInput>,
    /// The next charge date, today or later; it becomes the new anchor of the series.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_charge_on: Option<FutureDate>,
    /// The trial's end, today or later; null clears it.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    pub trial_ends_on: Patch<FutureDate>,
    /// null clears it.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    pub ends_on: Patch<NearDate>,
}

pub struct RescheduleSubscription;
impl Op for RescheduleSubscription {
    const INFO: OpInfo = OpInfo::write(
        "reschedule_subscription",
        "Change a subscription's cycle, next charge date, trial end or end date",
        "Future charges are projected from the new schedule; charges already recorded stay.",
        Hints::write(true),
    )
    .financial();
    type Input = RescheduleSubscriptionInput;
    type Output = Subscription;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangePriceInput {
    pub id: SubscriptionId,
    /// The new price, decimal string in the subscription's currency.
    pub amount: crate::common::UnsignedAmount,
    /// If given, must be the subscription's currency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<crate::common::CurrencyCode>,
    /// From which date the new price applies; default today. Charges before it keep their
    /// amount.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effective_on: Option<IsoDate>,
}

pub struct ChangePrice;
impl Op for ChangePrice {
    const INFO: OpInfo = OpInfo::write(
        "change_price",
        "Record a new price for a subscription from a date",
        "Adds to the price history; the first charge on or after effective_on uses the new price.",
        Hints::write(false),
    )
    .financial();
    type Input = ChangePriceInput;
    type Output = Subscription;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PauseSubscriptionInput {
    pub id: SubscriptionId,
    /// First paused day; default today.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<NearDate>,
    /// The day charges resume, today or later; default: paused until resumed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<FutureDate>,
}

pub struct PauseSubscription;
impl Op for PauseSubscription {
    const INFO: OpInfo = OpInfo::write(
        "pause_subscription",
        "Pause a subscription: no charges from a date until it is resumed",
        "Recorded charges stay (mark one skipped or refunded with update_charge).",
        Hints::write(false),
    )
    .financial();
    type Input = PauseSubscriptionInput;
    type Output = Subscription;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResumeSubscriptionInput {
    pub id: SubscriptionId,
    /// The day charges resume, today or later; default today.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on: Option<FutureDate>,
}

pub struct ResumeSubscription;
impl Op for ResumeSubscription {
    const INFO: OpInfo = OpInfo::write(
        "resume_subscription",
        "Resume a paused or cancelled subscription",
        "Charges are expected again from the resume date on the original series.",
        Hints::write(false),
    )
    .financial();
    type Input = ResumeSubscriptionInput;
    type Output = Subscription;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelSubscriptionInput {
    pub id: SubscriptionId,
    /// The last day a charge may fall: the date the person gives ("cancel from 31 December"
    /// is that day); default today.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ends_on: Option<NearDate>,
}

pub struct CancelSubscription;
impl Op for CancelSubscription {
    const INFO: OpInfo = OpInfo::write(
        "cancel_subscription",
        "Mark a subscription cancelled: no charges after its end date",
        "Records a cancellation made with the provider (it does not contact them) and keeps the history. Recorded charges stay: correct one with update_charge.",
        Hints::write(false),
    )
    .financial();
    type Input = CancelSubscriptionInput;
    type Output = Subscription;
}

pub struct DeleteSubscription;
impl Op for DeleteSubscription {
    const INFO: OpInfo = OpInfo::write(
        "delete_subscription",
        "Delete a subscription with its price history and charges",
        "Prefer cancel_subscription to keep the history. Undo restores it.",
        Hints::destructive(true),
    )
    .financial();
    type Input = IdInput<SubscriptionId>;
    type Output = crate::household::Removed;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkUpdateInput {
    /// One unknown or invisible id fails the whole call.
    #[schemars(length(min = 1, max = crate::limits::BULK))]
    #[schemars(extend("uniqueItems" = true))]
    pub ids: Vec<SubscriptionId>,
    pub action: BulkAction,
    /// For update: null clears the category.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    pub category_id: Patch<CategoryId>,
    /// For update: null clears the payment method.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    pub payment_method_id: Patch<PaymentMethodId>,
    /// For update: replaces all tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::limits::TAGS), inner(length(min = 1, max = crate::limits::TAG)))]
    #[schemars(inner(regex(pattern = domain::validate::LINE_PATTERN)))]
    pub tags: Option<Vec<String>>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BulkItem {
    pub id: i64,
    pub name: String,
    /// False when the subscription was already as asked.
    pub changed: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BulkResult {
    pub items: Vec<BulkItem>,
}

pub struct BulkUpdateSubscriptions;
impl Op for BulkUpdateSubscriptions {
    const INFO: OpInfo = OpInfo::write(
        "bulk_update_subscriptions",
        "Change up to 500 subscriptions at once, all or nothing",
        "Set category, payment method or tags (action update), or pause, resume, cancel or delete. Undo the whole call with its batch_id.",
        Hints::destructive(false),
    )
    .financial();
    type Input = BulkUpdateInput;
    type Output = BulkResult;

    fn destroys(input: &BulkUpdateInput) -> bool {
        input.action.is_destructive()
    }
}
