//! The closed list of every op, in the order adapters present them, and [`WriteOpName`], the
//! name of an op that writes, as an input field. `list_activity`, whose filter is one, is here
//! too: it takes the list, and the list takes it, so it lives with the list; the rest of the
//! activity (its entries, `undo`) is `activity.rs`.

use std::{borrow::Cow, collections::HashMap, fmt, sync::LazyLock};

use domain::entities::{ActorKind, EntityKind};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer, de};

use crate::{
    access,
    activity::{self, ActivityPage},
    assistant, banks, budgets, channels, charges, household, import, ledger, ledger_reports,
    op::{Op, OpInfo, OpMeta},
    organise, reports,
    resolve::{IsoDate, MemberId},
    rules, subscriptions, tools,
};

/// Expands to the list of op types; used by [`all`] and, through `for_each_op!`, by the
/// implementation to check that every op has a handler.
macro_rules! op_list {
    ($callback:ident) => {
        $callback! {
            reports::GetContext,
            tools::FindTools,
            household::GetHousehold,
            household::UpdateHousehold,
            household::ListMembers,
            household::UpdateMember,
            household::InviteMember,
            household::RemoveMember,
            subscriptions::ListSubscriptions,
            subscriptions::GetSubscription,
            subscriptions::CreateSubscription,
            subscriptions::UpdateSubscription,
            subscriptions::RescheduleSubscription,
            subscriptions::ChangePrice,
            subscriptions::PauseSubscription,
            subscriptions::ResumeSubscription,
            subscriptions::CancelSubscription,
            subscriptions::DeleteSubscription,
            subscriptions::BulkUpdateSubscriptions,
            charges::ListCharges,
            charges::GetCharge,
            charges::ListUpcomingCharges,
            charges::UpdateCharge,
            organise::ListCategories,
            organise::CreateCategory,
            organise::UpdateCategory,
            organise::DeleteCategory,
            organise::MergeCategories,
            organise::ListPaymentMethods,
            organise::CreatePaymentMethod,
            organise::UpdatePaymentMethod,
            organise::DeletePaymentMethod,
            organise::ListTags,
            organise::RenameTag,
            organise::DeleteTag,
            ledger::ListAccounts,
            ledger::CreateAccount,
            ledger::UpdateAccount,
            ledger::DeleteAccount,
            ledger::RecordBalance,
            ledger::SearchTransactions,
            ledger::CreateTransaction,
            ledger::UpdateTransaction,
            ledger::CategoriseTransactions,
            ledger::SplitTransaction,
            ledger::PairTransfer,
            ledger::MatchCharge,
            ledger::DeleteTransaction,
            ledger::ListLabels,
            ledger::CreateLabel,
            ledger::UpdateLabel,
            ledger::DeleteLabel,
            rules::ListRules,
            rules::CreateRule,
            rules::UpdateRule,
            rules::DeleteRule,
            rules::ApplyRule,
            budgets::ListBudgets,
            budgets::GetBudget,
            budgets::CreateBudget,
            budgets::UpdateBudget,
            budgets::DeleteBudget,
            reports::GetSpendingSummary,
            reports::GetSpendingHistory,
            ledger_reports::SpendingByCategory,
            ledger_reports::GetCashflow,
            ledger_reports::GetNetWorth,
            reports::ListPriceChanges,
            reports::FindSavings,
            import::ParseStatement,
            import::ImportSubscriptions,
            import::ImportTransactions,
            banks::ListBankConnections,
            banks::SyncBankConnection,
            banks::LinkSimplefin,
            banks::SetBankAccountTarget,
            banks::RemoveBankConnection,
            banks::SetEnableBanking,
            banks::ListBanks,
            banks::StartBankConsent,
            banks::CompleteBankConsent,
            banks::DismissRecurringProposal,
            reports::ListAttentionItems,
            ListActivity,
            activity::Undo,
            access::ListTokens,
            access::CreateToken,
            access::RevokeToken,
            access::ListConnectedApps,
            access::RevokeConnectedApp,
            access::SetTokenTools,
            access::GetSettings,
            access::UpdateSettings,
            access::AllowTrustedApps,
            assistant::GetAssistantSettings,
            assistant::SetAssistantSettings,
            assistant::ListAssistantUsage,
            channels::UpdateReminderSettings,
            channels::AddDestination,
            channels::RemoveDestination,
            channels::SendTestMessage,
            channels::CreateCalendarFeed,
            channels::RevokeCalendarFeed,
            channels::CreateChatLink,
            channels::SetChannelSettings,
            access::ExportData,
            access::ConfirmChange,
        }
    };
}

macro_rules! metas {
    ($($op:ty),* $(,)?) => {
        vec![$(OpMeta::of::<$op>()),*]
    };
}

static ALL: LazyLock<Vec<OpMeta>> = LazyLock::new(|| op_list!(metas));

/// Every op, in catalog order.
pub fn all() -> &'static [OpMeta] {
    &ALL
}

/// The largest request any op's input may come in, given the server's limit for the others:
/// what an adapter reads before it knows the op.
pub fn largest_request(max_request_bytes: usize) -> usize {
    all()
        .iter()
        .map(|meta| meta.info.request_limit(max_request_bytes))
        .max()
        .unwrap_or(max_request_bytes)
}

/// Every op by name, for [`find`]: one lookup on every call instead of a walk of the list.
static BY_NAME: LazyLock<HashMap<&'static str, &'static OpMeta>> =
    LazyLock::new(|| ALL.iter().map(|meta| (meta.name(), meta)).collect());

/// The op with this name.
pub fn find(name: &str) -> Option<&'static OpMeta> {
    BY_NAME.get(name).copied()
}

/// The name of an op that writes, as an input field (filtering the activity by op: only writes
/// are recorded there). Its JSON Schema lists those names; any other is refused, saying why.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WriteOpName(&'static str);

impl WriteOpName {
    pub fn as_str(&self) -> &'static str {
        self.0
    }

    /// The write op with this exact name.
    pub fn of(name: &str) -> Option<Self> {
        find(name).filter(|meta| meta.info.is_write()).map(|meta| Self(meta.name()))
    }
}

impl fmt::Display for WriteOpName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl Serialize for WriteOpName {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for WriteOpName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = Cow::<str>::deserialize(deserializer)?;
        Self::of(&name).ok_or_else(|| match find(&name) {
            Some(_) => de::Error::custom(format_args!(
                "{name} only reads, so the activity never shows it; filter by an op that writes"
            )),
            // A small model asked for "the last change" with op "last_change" five times when
            // told only where the names are.
            None => de::Error::custom(format_args!(
                "there is no op named \"{name}\"; op keeps the changes one op that writes made, such as update_subscription: leave it out for every change, newest first (limit 1 is the latest)"
            )),
        })
    }
}

impl schemars::JsonSchema for WriteOpName {
    fn schema_name() -> Cow<'static, str> {
        "WriteOpName".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> =
            all().iter().filter(|meta| meta.info.is_write()).map(OpMeta::name).collect();
        schemars::json_schema!({
            "type": "string",
            "enum": names,
            "description": "An op that writes, e.g. update_subscription."
        })
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListActivityInput {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor_kind: Option<ActorKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member_id: Option<MemberId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<WriteOpName>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entity: Option<EntityKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entity_id: Option<crate::common::RecordId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_id: Option<String>,
    /// From this date, inclusive, in the household's time zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<IsoDate>,
    /// Until this date, inclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<IsoDate>,
    /// Default 10; next_cursor gives the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = crate::common::MAX_PAGE))]
    pub limit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = crate::common::CURSOR_PATTERN))]
    pub cursor: Option<String>,
}

pub struct ListActivity;
impl Op for ListActivity {
    const INFO: OpInfo = OpInfo::read(
        "list_activity",
        "Who changed what and when, newest first",
        "Pass entry ids or a batch_id to undo.",
    );
    type Input = ListActivityInput;
    type Output = ActivityPage;
}
