//! The closed list of every op, in the order adapters present them.

use std::sync::LazyLock;

use crate::{
    access, activity, charges, household, import, op::OpMeta, organise, reports, subscriptions,
};

/// Expands to the list of op types; used by [`all`] and, through `for_each_op!`, by the
/// implementation to check that every op has a handler.
macro_rules! op_list {
    ($callback:ident) => {
        $callback! {
            reports::GetContext,
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
            reports::GetSpendingSummary,
            reports::GetSpendingHistory,
            reports::ListPriceChanges,
            reports::FindSavings,
            import::ParseStatement,
            import::ImportSubscriptions,
            reports::ListAttentionItems,
            activity::ListActivity,
            activity::Undo,
            access::ListTokens,
            access::CreateToken,
            access::RevokeToken,
            access::GetSettings,
            access::UpdateSettings,
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

/// The op with this name.
pub fn find(name: &str) -> Option<&'static OpMeta> {
    ALL.iter().find(|meta| meta.name() == name)
}
