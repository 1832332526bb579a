//! Household and member ops.

use domain::entities::{Role, WeekStart};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    common::{IdInput, Patch, Timestamp},
    op::{Hints, Op, OpInfo},
    resolve::{IsoDate, MemberId},
};

/// No input.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Empty {}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Household {
    pub id: i64,
    pub name: String,
    /// Main currency (ISO 4217): totals are shown in it.
    pub currency: String,
    /// IANA time zone; dates are calendar dates in it.
    pub time_zone: String,
    /// BCP 47 language tag, e.g. "en".
    pub language: String,
    pub week_start: WeekStart,
    /// Today's date in the household's time zone.
    pub today: IsoDate,
}

pub struct GetHousehold;
impl Op for GetHousehold {
    const INFO: OpInfo = OpInfo::read(
        "get_household",
        "Get the household: name, main currency, time zone, language and today's date",
        "Totals are converted to the main currency; dates are calendar dates in the time zone. get_context has the fuller briefing.",
    );
    type Input = Empty;
    type Output = Household;
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateHouseholdInput {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = crate::limits::NAME))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<crate::common::CurrencyCode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = crate::common::LANGUAGE_PATTERN))]
    pub language: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub week_start: Option<WeekStart>,
}

pub struct UpdateHousehold;
impl Op for UpdateHousehold {
    const INFO: OpInfo = OpInfo::write(
        "update_household",
        "Change the household's name, main currency, time zone, language or week start",
        "Owners only. After changing the main currency, set exchange rates for the other currencies with update_settings.",
        Hints::write(true),
    )
    .owner_only();
    type Input = UpdateHouseholdInput;
    type Output = Household;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Member {
    pub id: i64,
    pub name: String,
    pub role: Role,
    /// The language they read Exhale in; `null` while they follow the household's.
    pub language: Option<String>,
    /// True for the caller.
    pub is_you: bool,
    /// Shown to people only; never handed to agents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// False while an invited member has not set a password.
    pub active: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MemberList {
    pub items: Vec<Member>,
}

pub struct ListMembers;
impl Op for ListMembers {
    const INFO: OpInfo = OpInfo::read(
        "list_members",
        "List the household's members with their ids, names and roles",
        "Use a member's id to filter subscriptions by owner or to assign a subscription to them.",
    );
    type Input = Empty;
    type Output = MemberList;
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateMemberInput {
    pub id: MemberId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = crate::limits::NAME))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub name: Option<String>,
    /// `null` follows the household's.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    #[schemars(regex(pattern = crate::common::LANGUAGE_PATTERN))]
    pub language: Patch<String>,
    /// Owners only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
}

pub struct UpdateMember;
impl Op for UpdateMember {
    const INFO: OpInfo = OpInfo::write(
        "update_member",
        "Change a member's name, language or role",
        "Members may change their own name and language; owners may change anyone's and set roles. A household always keeps at least one owner.",
        Hints::write(true),
    );
    type Input = UpdateMemberInput;
    type Output = Member;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InviteMemberInput {
    #[schemars(length(min = 1, max = crate::limits::NAME))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub name: String,
    pub email: String,
    /// Default: member.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Invitation {
    pub member: Member,
    /// One-time code the invited person uses to set a password. Shown once.
    pub invite_code: String,
    pub expires_at: Timestamp,
}

pub struct InviteMember;
impl Op for InviteMember {
    const INFO: OpInfo = OpInfo::write(
        "invite_member",
        "Invite a person into the household",
        "Owners only. Creates the member and a one-time invite code valid for 7 days.",
        Hints::write(false),
    )
    .owner_only()
    .excluded(
        "it creates a credential and adds a person; only people decide who joins a household",
    );
    type Input = InviteMemberInput;
    type Output = Invitation;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Removed {
    pub id: i64,
    pub name: String,
}

pub struct RemoveMember;
impl Op for RemoveMember {
    const INFO: OpInfo = OpInfo::write(
        "remove_member",
        "Remove a member from the household",
        "Owners only. Their shared subscriptions and payment methods move to you and their tokens are revoked. Refused while they own private subscriptions or are the last owner.",
        Hints::destructive(true),
    )
    .owner_only()
    .excluded("removing a person from a household is for people to decide");
    type Input = IdInput<MemberId>;
    type Output = Removed;
}
