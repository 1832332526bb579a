//! Rule ops: conditions on a transaction's payee, description, amount and account, and what to
//! do with one that matches (set a category, add labels). New imports get the rules on the way
//! in; `apply_rule` runs one over history, as a preview unless told to apply.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    common::{IdInput, Ref},
    household::Removed,
    ledger::Transaction,
    op::{Hints, Op, OpInfo},
    resolve::{AccountId, CategoryId, LabelId, RuleId},
};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Rule {
    pub id: i64,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payee_contains: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description_contains: Option<String>,
    /// Signed decimal: money out is negative.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_amount: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_amount: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<Ref>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_category: Option<Ref>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub add_labels: Vec<Ref>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RuleList {
    pub items: Vec<Rule>,
}

pub struct ListRules;
impl Op for ListRules {
    const INFO: OpInfo = OpInfo::read(
        "list_rules",
        "List the rules that categorise and label transactions",
        "Imports apply them; apply_rule runs one over history.",
    );
    type Input = crate::household::Empty;
    type Output = RuleList;
}

/// A rule's conditions (all must hold) and actions (at least one).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuleFields {
    /// Part of the payee, A-Z in any case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = crate::limits::SHORT_NAME))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub payee_contains: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = crate::limits::SHORT_NAME))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub description_contains: Option<String>,
    /// Signed: money out is negative.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_amount: Option<crate::common::SignedAmount>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_amount: Option<crate::common::SignedAmount>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<AccountId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_category_id: Option<CategoryId>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = crate::limits::TAGS))]
    pub add_label_ids: Vec<LabelId>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateRuleInput {
    /// Unique in the household, ignoring case.
    #[schemars(length(min = 1, max = crate::limits::SHORT_NAME))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub name: String,
    #[serde(flatten)]
    pub fields: RuleFields,
}

pub struct CreateRule;
impl Op for CreateRule {
    const INFO: OpInfo = OpInfo::write(
        "create_rule",
        "Add a rule that categorises or labels matching transactions",
        "All conditions must hold; preview with apply_rule.",
        Hints::write(false),
    );
    type Input = CreateRuleInput;
    type Output = Rule;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateRuleInput {
    pub id: RuleId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = crate::limits::SHORT_NAME))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub name: Option<String>,
    /// Replaces conditions and actions whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<RuleFields>,
}

pub struct UpdateRule;
impl Op for UpdateRule {
    const INFO: OpInfo = OpInfo::write(
        "update_rule",
        "Rename a rule or replace its conditions and actions",
        "What it changed stays.",
        Hints::write(true),
    );
    type Input = UpdateRuleInput;
    type Output = Rule;
}

pub struct DeleteRule;
impl Op for DeleteRule {
    const INFO: OpInfo = OpInfo::write(
        "delete_rule",
        "Delete a rule",
        "Transactions it changed stay as they are. Undo restores it.",
        Hints::destructive(true),
    );
    type Input = IdInput<RuleId>;
    type Output = Removed;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyRuleInput {
    pub id: RuleId,
    /// Change the transactions; default false, a preview.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RuleRun {
    pub rule: Ref,
    /// Transactions you can see that meet the conditions.
    pub matched: u64,
    /// Of those, the ones it changes (or would): a different category or a missing label.
    pub affected: u64,
    /// Whether they were changed; false for a preview.
    pub applied: bool,
    /// Left for another call: one call changes at most 5,000.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub remaining: u64,
    /// Up to ten of the transactions it changes, as they are before the change.
    pub sample: Vec<Transaction>,
}

pub struct ApplyRule;
impl Op for ApplyRule {
    const INFO: OpInfo = OpInfo::write(
        "apply_rule",
        "Run a rule over past transactions: a preview unless apply is true",
        "How many match and change, with a sample; applied, undoable as one batch.",
        Hints::write(true),
    );
    type Input = ApplyRuleInput;
    type Output = RuleRun;
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
