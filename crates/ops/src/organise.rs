//! Categories, payment methods and tags.

use domain::entities::{PaymentMethodKind, Visibility};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    common::{IdInput, Patch, Ref},
    household::{Empty, Removed},
    op::{Hints, Op, OpInfo},
    resolve::{CategoryId, PaymentMethodId},
};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Category {
    pub id: i64,
    pub name: String,
    pub emoji: String,
    /// "#rrggbb".
    pub colour: String,
    /// How many subscriptions the caller can see in it.
    pub subscription_count: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CategoryList {
    pub items: Vec<Category>,
}

pub struct ListCategories;
impl Op for ListCategories {
    const INFO: OpInfo = OpInfo::read(
        "list_categories",
        "List the household's categories",
        "Categories are shared by the household. Use an id as category_id when creating or updating subscriptions.",
    );
    type Input = Empty;
    type Output = CategoryList;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateCategoryInput {
    /// Unique in the household, ignoring case.
    #[schemars(length(min = 1, max = crate::limits::SHORT_NAME))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::limits::EMOJI))]
    pub emoji: Option<String>,
    /// "#rrggbb".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = crate::common::COLOUR_PATTERN))]
    pub colour: Option<String>,
}

pub struct CreateCategory;
impl Op for CreateCategory {
    const INFO: OpInfo = OpInfo::write(
        "create_category",
        "Add a category",
        "Names are unique ignoring case.",
        Hints::write(false),
    );
    type Input = CreateCategoryInput;
    type Output = Category;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateCategoryInput {
    pub id: CategoryId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = crate::limits::SHORT_NAME))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::limits::EMOJI))]
    pub emoji: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = crate::common::COLOUR_PATTERN))]
    pub colour: Option<String>,
}

pub struct UpdateCategory;
impl Op for UpdateCategory {
    const INFO: OpInfo = OpInfo::write(
        "update_category",
        "Rename a category or change its emoji or colour",
        "To fold one category into another use merge_categories.",
        Hints::write(true),
    );
    type Input = UpdateCategoryInput;
    type Output = Category;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteCategoryInput {
    pub id: CategoryId,
    /// Where its subscriptions go; default: they become uncategorised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub move_to_id: Option<CategoryId>,
}

pub struct DeleteCategory;
impl Op for DeleteCategory {
    const INFO: OpInfo = OpInfo::write(
        "delete_category",
        "Delete a category, moving its subscriptions to another one or to none",
        "Undo restores the category and its subscriptions' assignments.",
        Hints::destructive(true),
    );
    type Input = DeleteCategoryInput;
    type Output = Removed;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MergeCategoriesInput {
    /// The categories to fold in and delete.
    #[schemars(length(min = 1, max = crate::limits::BULK))]
    pub source_ids: Vec<CategoryId>,
    /// The category that remains.
    pub target_id: CategoryId,
}

pub struct MergeCategories;
impl Op for MergeCategories {
    const INFO: OpInfo = OpInfo::write(
        "merge_categories",
        "Merge categories into one: their subscriptions move and they are deleted",
        "Undo restores the categories and the assignments.",
        Hints::destructive(true),
    );
    type Input = MergeCategoriesInput;
    type Output = Category;
}

/// A card's expiry month, `YYYY-MM`, years 1900 to 2200: what the handler takes, exactly.
pub const EXPIRY_PATTERN: &str = "^(19[0-9]{2}|2[01][0-9]{2}|2200)-(0[1-9]|1[0-2])$";

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PaymentMethod {
    pub id: i64,
    pub name: String,
    pub kind: PaymentMethodKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last4: Option<String>,
    /// Expiry month of a card, "YYYY-MM".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
    pub owner: Ref,
    pub visibility: Visibility,
    pub subscription_count: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PaymentMethodList {
    pub items: Vec<PaymentMethod>,
}

pub struct ListPaymentMethods;
impl Op for ListPaymentMethods {
    const INFO: OpInfo = OpInfo::read(
        "list_payment_methods",
        "List payment methods: cards, bank accounts and wallets",
        "Only names, kinds, last four digits and expiry months are stored, never full card numbers.",
    );
    type Input = Empty;
    type Output = PaymentMethodList;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreatePaymentMethodInput {
    #[schemars(length(min = 1, max = crate::limits::SHORT_NAME))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub name: String,
    /// Default: card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<PaymentMethodKind>,
    /// Exactly four digits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[0-9]{4}$"))]
    pub last4: Option<String>,
    /// "YYYY-MM".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = crate::organise::EXPIRY_PATTERN))]
    pub expires: Option<String>,
    /// Default: household.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Visibility>,
}

pub struct CreatePaymentMethod;
impl Op for CreatePaymentMethod {
    const INFO: OpInfo = OpInfo::write(
        "create_payment_method",
        "Add a payment method",
        "Never send a full card number: only the last four digits.",
        Hints::write(false),
    );
    type Input = CreatePaymentMethodInput;
    type Output = PaymentMethod;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdatePaymentMethodInput {
    pub id: PaymentMethodId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = crate::limits::SHORT_NAME))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<PaymentMethodKind>,
    /// null clears it.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    #[schemars(regex(pattern = r"^[0-9]{4}$"))]
    pub last4: Patch<String>,
    /// null clears it.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    #[schemars(regex(pattern = crate::organise::EXPIRY_PATTERN))]
    pub expires: Patch<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Visibility>,
}

pub struct UpdatePaymentMethod;
impl Op for UpdatePaymentMethod {
    const INFO: OpInfo = OpInfo::write(
        "update_payment_method",
        "Change a payment method's name, kind, last four digits, expiry or visibility",
        "Only its owner may change a private payment method.",
        Hints::write(true),
    );
    type Input = UpdatePaymentMethodInput;
    type Output = PaymentMethod;
}

pub struct DeletePaymentMethod;
impl Op for DeletePaymentMethod {
    const INFO: OpInfo = OpInfo::write(
        "delete_payment_method",
        "Delete a payment method; its subscriptions keep going without one",
        "Undo restores it and its assignments.",
        Hints::destructive(true),
    );
    type Input = IdInput<PaymentMethodId>;
    type Output = Removed;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Tag {
    pub name: String,
    pub subscription_count: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TagList {
    pub items: Vec<Tag>,
}

pub struct ListTags;
impl Op for ListTags {
    const INFO: OpInfo = OpInfo::read(
        "list_tags",
        "List tags in use with how many subscriptions carry each",
        "Tags are free text on subscriptions, unique ignoring case. Set them with update_subscription.",
    );
    type Input = Empty;
    type Output = TagList;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenameTagInput {
    #[schemars(length(min = 1, max = crate::limits::TAG))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub from: String,
    #[schemars(length(min = 1, max = crate::limits::TAG))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub to: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TagChange {
    pub subscriptions_changed: u64,
}

pub struct RenameTag;
impl Op for RenameTag {
    const INFO: OpInfo = OpInfo::write(
        "rename_tag",
        "Rename a tag on every subscription you can see",
        "Renaming to an existing tag merges them. Another member's private subscriptions keep their tags.",
        Hints::write(true),
    );
    type Input = RenameTagInput;
    type Output = TagChange;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteTagInput {
    #[schemars(length(min = 1, max = crate::limits::TAG))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub name: String,
}

pub struct DeleteTag;
impl Op for DeleteTag {
    const INFO: OpInfo = OpInfo::write(
        "delete_tag",
        "Remove a tag from every subscription you can see",
        "Another member's private subscriptions keep it. Undo restores it.",
        Hints::destructive(true),
    );
    type Input = DeleteTagInput;
    type Output = TagChange;
}
