//! Accounts, their balances, labels, and the transactions on the accounts: the household's
//! money beyond subscriptions. Budgets, rules and reports over transactions are elsewhere.

use domain::entities::{AccountKind, Visibility};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    common::{Amount, IdInput, Patch, RecordId, Ref},
    household::Removed,
    op::{Hints, Op, OpInfo},
    resolve::{AccountId, CategoryId, IsoDate, LabelId},
};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Account {
    pub id: i64,
    pub name: String,
    pub kind: AccountKind,
    /// ISO 4217 code of everything on it.
    pub currency: crate::common::CurrencyCode,
    pub owner: Ref,
    pub visibility: Visibility,
    /// Archived accounts keep their transactions and are left out of lists by default.
    pub archived: bool,
    /// The latest recorded balance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub balance: Option<Amount>,
    /// The day of that balance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub balance_on: Option<IsoDate>,
    pub transaction_count: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AccountList {
    pub items: Vec<Account>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListAccountsInput {
    /// Also archived accounts. Default: false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_archived: Option<bool>,
}

pub struct ListAccounts;
impl Op for ListAccounts {
    const INFO: OpInfo = OpInfo::read(
        "list_accounts",
        "List accounts with their latest balances",
        "Checking, savings, cards, cash, investments, loans and property. Use an id as account_id in search_transactions and create_transaction.",
    );
    type Input = ListAccountsInput;
    type Output = AccountList;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateAccountInput {
    #[schemars(length(min = 1, max = crate::limits::SHORT_NAME))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub name: String,
    pub kind: AccountKind,
    /// ISO 4217 code; default: the household's currency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = "^[A-Za-z]{3}$"))]
    pub currency: Option<crate::common::CurrencyCode>,
    /// Default: household.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Visibility>,
    /// What it holds now, a decimal string; negative for money owed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub balance: Option<crate::common::SignedAmount>,
}

pub struct CreateAccount;
impl Op for CreateAccount {
    const INFO: OpInfo = OpInfo::write(
        "create_account",
        "Add an account",
        "With its kind, currency and optionally today's balance.",
        Hints::write(false),
    );
    type Input = CreateAccountInput;
    type Output = Account;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateAccountInput {
    pub id: AccountId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = crate::limits::SHORT_NAME))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<AccountKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Visibility>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived: Option<bool>,
}

pub struct UpdateAccount;
impl Op for UpdateAccount {
    const INFO: OpInfo = OpInfo::write(
        "update_account",
        "Rename, re-kind, share or archive an account",
        "The currency stays. Only its owner may make it private.",
        Hints::write(true),
    );
    type Input = UpdateAccountInput;
    type Output = Account;
}

pub struct DeleteAccount;
impl Op for DeleteAccount {
    const INFO: OpInfo = OpInfo::write(
        "delete_account",
        "Delete an account that has no transactions",
        "One with transactions is archived with update_account instead. Undo restores it.",
        Hints::destructive(true),
    );
    type Input = IdInput<AccountId>;
    type Output = Removed;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordBalanceInput {
    pub account_id: AccountId,
    /// What it held then, a decimal string; negative for money owed.
    pub balance: crate::common::SignedAmount,
    /// Default: today.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on: Option<IsoDate>,
}

pub struct RecordBalance;
impl Op for RecordBalance {
    const INFO: OpInfo = OpInfo::write(
        "record_balance",
        "Record what an account held on a day",
        "Replaces a balance of the same day. Net worth is drawn from these.",
        Hints::write(true),
    );
    type Input = RecordBalanceInput;
    type Output = Account;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Label {
    pub id: i64,
    pub name: String,
    /// "#rrggbb".
    pub colour: String,
    /// How many transactions the caller can see carry it.
    pub transaction_count: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LabelList {
    pub items: Vec<Label>,
}

pub struct ListLabels;
impl Op for ListLabels {
    const INFO: OpInfo = OpInfo::read(
        "list_labels",
        "List the household's labels for transactions",
        "Labels cut across categories (\"holiday 2026\", \"work\"). Use ids as label_ids.",
    );
    type Input = crate::household::Empty;
    type Output = LabelList;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateLabelInput {
    /// Unique in the household, ignoring case.
    #[schemars(length(min = 1, max = crate::limits::SHORT_NAME))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub name: String,
    /// "#rrggbb".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = crate::common::COLOUR_PATTERN))]
    pub colour: Option<String>,
}

pub struct CreateLabel;
impl Op for CreateLabel {
    const INFO: OpInfo = OpInfo::write(
        "create_label",
        "Add a label for transactions",
        "Names are unique ignoring case.",
        Hints::write(false),
    );
    type Input = CreateLabelInput;
    type Output = Label;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateLabelInput {
    pub id: LabelId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = crate::limits::SHORT_NAME))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = crate::common::COLOUR_PATTERN))]
    pub colour: Option<String>,
}

pub struct UpdateLabel;
impl Op for UpdateLabel {
    const INFO: OpInfo = OpInfo::write(
        "update_label",
        "Rename a label or change its colour",
        "Every transaction carrying it shows the new name.",
        Hints::write(true),
    );
    type Input = UpdateLabelInput;
    type Output = Label;
}

pub struct DeleteLabel;
impl Op for DeleteLabel {
    const INFO: OpInfo = OpInfo::write(
        "delete_label",
        "Delete a label, taking it off every transaction",
        "The transactions stay. Undo restores the label and where it was.",
        Hints::destructive(true),
    );
    type Input = IdInput<LabelId>;
    type Output = Removed;
}

domain::named_enum! {
    /// Where a transaction came from.
    pub enum TransactionSource("transaction source") {
        /// Written by a person or an agent.
        Manual => "manual",
        /// Read from a bank statement, or brought by a bank connection.
        Import => "import",
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Transaction {
    pub id: i64,
    pub on: IsoDate,
    /// Signed: money out is negative.
    pub amount: Amount,
    pub account: Ref,
    pub payee: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<Ref>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<Ref>,
    /// The other side, when this is a transfer between two accounts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer_id: Option<i64>,
    pub source: TransactionSource,
    /// The bank shows it as not yet booked: its date and amount may still change, and it
    /// becomes the booked transaction when the bank books it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pending: bool,
    /// Its parts in categories, when split; they add up to `amount`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub splits: Vec<TransactionSplit>,
    /// The subscription charge it paid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charge_id: Option<i64>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TransactionSplit {
    pub amount: Amount,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<Ref>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchTransactionsInput {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<AccountId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category_id: Option<CategoryId>,
    /// Only transactions without a category.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncategorised: Option<bool>,
    /// Transactions carrying any of these labels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = crate::limits::BULK))]
    pub label_ids: Vec<LabelId>,
    /// On or after this day.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<IsoDate>,
    /// On or before this day.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<IsoDate>,
    /// Signed decimal in each transaction's currency: "-50" keeps 50 or more out and all in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_amount: Option<crate::common::SignedAmount>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_amount: Option<crate::common::SignedAmount>,
    /// Case-insensitive, in payee, description and notes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::limits::SHORT_NAME))]
    #[schemars(regex(pattern = domain::validate::OPTIONAL_LINE_PATTERN))]
    pub text: Option<String>,
    /// Default 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = crate::common::MAX_PAGE))]
    pub limit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = crate::common::POSITION_CURSOR_PATTERN))]
    pub cursor: Option<String>,
}

pub struct SearchTransactions;
impl Op for SearchTransactions {
    const INFO: OpInfo = OpInfo::read(
        "search_transactions",
        "Search transactions, newest first, filtered and paginated",
        "Filters combine with AND; label_ids match any. Amounts are signed: money out is negative.",
    );
    type Input = SearchTransactionsInput;
    type Output = TransactionPage;
}

/// One page of a transaction search.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TransactionPage {
    /// When the filters matched nothing: the newest that match fewer of them, and which.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub items: Vec<Transaction>,
    /// How many match over all pages, counted up to 1,000 past this page's start.
    pub total: u64,
    /// True when the count stopped: more than `total` match.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub total_is_lower_bound: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTransactionInput {
    pub account_id: AccountId,
    pub on: IsoDate,
    /// Signed decimal string in the account's currency: "-12.50" for money out.
    pub amount: crate::common::SignedAmount,
    /// Who was paid or who paid.
    #[schemars(length(min = 1, max = crate::limits::NAME))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub payee: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::limits::NOTES))]
    #[schemars(regex(pattern = domain::validate::OPTIONAL_LINE_PATTERN))]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::limits::NOTES))]
    #[schemars(regex(pattern = domain::validate::MULTILINE_PATTERN))]
    pub notes: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category_id: Option<CategoryId>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = crate::limits::TAGS))]
    pub label_ids: Vec<LabelId>,
}

pub struct CreateTransaction;
impl Op for CreateTransaction {
    const INFO: OpInfo = OpInfo::write(
        "create_transaction",
        "Record a transaction on an account",
        "For money that moved outside an imported statement, such as cash. Money out is negative: a 12.50 expense is \"-12.50\".",
        Hints::write(false),
    )
    .financial();
    type Input = CreateTransactionInput;
    type Output = Transaction;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateTransactionInput {
    pub id: RecordId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on: Option<IsoDate>,
    /// Signed decimal string in the account's currency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<crate::common::SignedAmount>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = crate::limits::NAME))]
    #[schemars(regex(pattern = domain::validate::LINE_PATTERN))]
    pub payee: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::limits::NOTES))]
    #[schemars(regex(pattern = domain::validate::OPTIONAL_LINE_PATTERN))]
    pub description: Option<String>,
    /// null clears them.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    #[schemars(length(max = crate::limits::NOTES))]
    #[schemars(regex(pattern = domain::validate::MULTILINE_PATTERN))]
    pub notes: Patch<String>,
    /// null leaves it uncategorised.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    pub category_id: Patch<CategoryId>,
    /// Replaces its labels; [] removes them all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::limits::TAGS))]
    pub label_ids: Option<Vec<LabelId>>,
}

pub struct UpdateTransaction;
impl Op for UpdateTransaction {
    const INFO: OpInfo = OpInfo::write(
        "update_transaction",
        "Change a transaction's date, amount, payee, notes, category or labels",
        "To only categorise or label, use categorise_transactions.",
        Hints::write(true),
    )
    .financial();
    type Input = UpdateTransactionInput;
    type Output = Transaction;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CategoriseTransactionsInput {
    #[schemars(length(min = 1, max = crate::limits::BULK))]
    pub ids: Vec<RecordId>,
    /// The category for all of them; null leaves them uncategorised. Absent: unchanged.
    #[serde(default, skip_serializing_if = "Patch::is_keep")]
    pub category_id: Patch<CategoryId>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = crate::limits::TAGS))]
    pub add_label_ids: Vec<LabelId>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = crate::limits::TAGS))]
    pub remove_label_ids: Vec<LabelId>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TransactionsChanged {
    pub transactions_changed: u64,
}

pub struct CategoriseTransactions;
impl Op for CategoriseTransactions {
    const INFO: OpInfo = OpInfo::write(
        "categorise_transactions",
        "Set the category of transactions, or add and remove labels on them",
        "Up to 500 ids from search_transactions at once; amounts and dates stay.",
        Hints::write(true),
    );
    type Input = CategoriseTransactionsInput;
    type Output = TransactionsChanged;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SplitPart {
    /// Signed like the transaction.
    pub amount: crate::common::SignedAmount,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category_id: Option<CategoryId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::limits::SHORT_NAME))]
    pub note: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SplitTransactionInput {
    pub id: RecordId,
    /// Two or more adding up to its amount; none: whole again.
    #[schemars(length(max = crate::limits::SPLIT_PARTS))]
    pub parts: Vec<SplitPart>,
}

pub struct SplitTransaction;
impl Op for SplitTransaction {
    const INFO: OpInfo = OpInfo::write(
        "split_transaction",
        "Split a transaction into parts in different categories",
        "Reports count each part in its category.",
        Hints::write(true),
    );
    type Input = SplitTransactionInput;
    type Output = Transaction;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PairTransferInput {
    pub id: RecordId,
    /// On another account; null unpairs.
    pub other_id: Option<RecordId>,
}

pub struct PairTransfer;
impl Op for PairTransfer {
    const INFO: OpInfo = OpInfo::write(
        "pair_transfer",
        "Mark two transactions as one transfer between accounts",
        "Then neither income nor spending.",
        Hints::write(true),
    );
    type Input = PairTransferInput;
    type Output = Transaction;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MatchChargeInput {
    pub transaction_id: RecordId,
    /// From list_charges or an import's proposed_matches; null unmatches.
    pub charge_id: Option<RecordId>,
}

pub struct MatchCharge;
impl Op for MatchCharge {
    const INFO: OpInfo = OpInfo::write(
        "match_charge",
        "Match a payment to the subscription charge it paid",
        "The charge becomes paid, at the transaction's amount.",
        Hints::write(true),
    )
    .financial();
    type Input = MatchChargeInput;
    type Output = Transaction;
}

pub struct DeleteTransaction;
impl Op for DeleteTransaction {
    const INFO: OpInfo = OpInfo::write(
        "delete_transaction",
        "Delete a transaction",
        "Undo restores it with its labels.",
        Hints::destructive(true),
    );
    type Input = IdInput<RecordId>;
    type Output = Removed;
}
