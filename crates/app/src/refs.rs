//! The entities an op's input refers to, checked to be ones the caller can see: a reference
//! that does not resolve is the input's fault, so it is `invalid_input` at the field, with
//! which list to call. Shared by the handlers; what they do with the ids stays there.

use domain::entities::EntityKind;
use ops::{
    OpError,
    resolve::{AccountId, CategoryId, LabelId},
};

use crate::{ctx::Ctx, transactions::StoreExt};

/// A reference the input makes to something that must exist: "not found" there is the input's
/// fault, so it is `invalid_input` at the field.
pub(crate) fn referenced<T>(pointer: String, found: Result<T, OpError>) -> Result<T, OpError> {
    found.map_err(|err| match err {
        OpError::NotFound { message } => OpError::invalid(pointer, message),
        other => other,
    })
}

/// The label ids, each checked to be one of the household's, without repeats.
pub(crate) fn check_labels(
    ctx: &Ctx<'_>,
    pointer: &str,
    ids: &[LabelId],
) -> Result<Vec<i64>, OpError> {
    let mut checked = Vec::with_capacity(ids.len());
    for (i, id) in ids.iter().enumerate() {
        if !store::ledger::label_exists(ctx.db, ctx.household_id(), id.get()).or_internal()? {
            return Err(OpError::invalid(
                format!("{pointer}/{i}"),
                ctx.unknown(EntityKind::Label, id.get()),
            ));
        }
        if !checked.contains(&id.get()) {
            checked.push(id.get());
        }
    }
    Ok(checked)
}

pub(crate) fn check_category(ctx: &Ctx<'_>, pointer: &str, id: CategoryId) -> Result<i64, OpError> {
    let found = store::organise::get_category(ctx.db, ctx.household_id(), Some(ctx.me()), id.get())
        .or_not_found(|| ctx.unknown(EntityKind::Category, id.get()));
    Ok(referenced(pointer.into(), found)?.id)
}

/// An account the caller can see, named in the input at `pointer`.
pub(crate) fn check_account(
    ctx: &Ctx<'_>,
    pointer: &str,
    id: AccountId,
) -> Result<store::ledger::AccountRef, OpError> {
    let found = store::ledger::account_ref(ctx.db, ctx.household_id(), ctx.me(), id.get())
        .or_not_found(|| ctx.unknown(EntityKind::Account, id.get()));
    referenced(pointer.into(), found)
}
