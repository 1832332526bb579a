//! Charge ops: recorded charges, projected upcoming charges, and corrections.

use domain::entities::ChargeStatus;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    common::{Amount, Page, Patch, Ref},
    op::{Hints, Op, OpInfo},
    resolve::{IsoDate, SubscriptionId},
};

/// A charge that happened (recorded once its date came).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Charge {
    pub id: i64,
    pub subscription: Ref,
    pub charged_on: IsoDate,
    pub amount: Amount,
    pub status: ChargeStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A charge expected in the future, projected from the subscription's series.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProjectedCharge {
    pub subscription: Ref,
    pub charge_on: IsoDate,
    pub amount: Amount,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_method: Option<Ref>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListChargesInput {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscription_id: Option<SubscriptionId>,
    /// From this date, inclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<IsoDate>,
    /// Until this date, inclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<IsoDate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ChargeStatus>,
    /// Default 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = crate::common::MAX_PAGE))]
    pub limit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = crate::common::CURSOR_PATTERN))]
    pub cursor: Option<String>,
}

pub struct ListCharges;
impl Op for ListCharges {
    const INFO: OpInfo = OpInfo::read(
        "list_charges",
        "List recorded charges, newest first",
        "Charges are recorded once their date has come. Filter by subscription, date range or status. For future charges use list_upcoming_charges.",
    );
    type Input = ListChargesInput;
    type Output = Page<Charge>;
}

pub struct GetCharge;
impl Op for GetCharge {
    const INFO: OpInfo = OpInfo::read(
        "get_charge",
        "Get one recorded charge",
        "Takes the id from list_charges or get_subscription. A charge of another member's private subscription is not found.",
    );
    type Input = crate::common::IdInput;
    type Output = Charge;
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListUpcomingInput {
    /// How many days ahead; default 30.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = crate::limits::UPCOMING_DAYS))]
    pub days: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscription_id: Option<SubscriptionId>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Upcoming {
    pub from: IsoDate,
    pub to: IsoDate,
    pub items: Vec<ProjectedCharge>,
    /// The sum per currency.
    pub totals: Vec<Amount>,
    /// When nothing falls in the window: what was read, and how to read further (the
    /// subscription's next charge, when one was asked about).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

pub struct ListUpcomingCharges;
impl Op for ListUpcomingCharges {
    const INFO: OpInfo = OpInfo::read(
        "list_upcoming_charges",
        "List the charges expected in the next days",
        "Projected from each subscription's cycle, price, pauses and end date; nothing here is stored. Up to 366 days ahead.",
    );
    type Input = ListUpcomingInput;
    type Output = Upcoming;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateChargeInput {
    pub id: crate::common::RecordId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ChargeStatus>,
    /// Decimal string in the charge's currency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<crate::common::UnsignedAmount>,
    /// null clears it.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    #[schemars(length(max = crate::limits::NOTES))]
    #[schemars(regex(pattern = domain::validate::MULTILINE_PATTERN))]
    pub note: Patch<String>,
}

pub struct UpdateCharge;
impl Op for UpdateCharge {
    const INFO: OpInfo = OpInfo::write(
        "update_charge",
        "Correct a recorded charge: its status, amount or note",
        "Use list_charges to find the id.",
        Hints::write(true),
    )
    .financial();
    type Input = UpdateChargeInput;
    type Output = Charge;
}
