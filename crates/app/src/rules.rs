//! Rules as transaction searches: the filter a rule's conditions make, and applying every
//! rule to what one import added. The rule ops themselves are in `handlers::rules`.

use store::{ledger::TransactionFilter, rules::RuleRow};

use crate::{ctx::Ctx, transactions::StoreExt};

/// The search that finds what a rule matches.
pub(crate) fn filter_of(rule: &RuleRow) -> TransactionFilter {
    TransactionFilter {
        account_id: rule.account.as_ref().map(|(id, _)| *id),
        min_milli: rule.min_milli,
        max_milli: rule.max_milli,
        payee_contains: rule.payee_contains.clone(),
        description_contains: rule.description_contains.clone(),
        ..TransactionFilter::default()
    }
}

/// Applies the rules the caller can see, in name order, to the transactions of one import:
/// part of the import, so undoing it takes the changes with it, and nothing else is recorded.
/// A later rule's category wins over an earlier one's; labels add up.
pub(crate) fn apply_to_import(ctx: &Ctx<'_>, import_id: i64) -> Result<(), ops::OpError> {
    for rule in store::rules::list_rules(ctx.db, ctx.household_id(), ctx.me()).or_internal()? {
        let filter = TransactionFilter { import_id: Some(import_id), ..filter_of(&rule) };
        let labels: Vec<i64> = rule.labels.iter().map(|(id, _)| *id).collect();
        store::ledger::apply_to_matching(
            ctx.db,
            ctx.household_id(),
            ctx.me(),
            &filter,
            rule.set_category.as_ref().map(|(id, _)| *id),
            &labels,
        )
        .or_internal()?;
    }
    Ok(())
}
