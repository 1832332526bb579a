//! Category, payment method and tag handlers.

use domain::{
    Text,
    entities::{EntityKind, PaymentMethodKind, Visibility},
};
use ops::{
    OpError,
    common::{IdInput, Patch},
    household::{Empty, Removed},
    organise::*,
    resolve::{CategoryId, PaymentMethodId},
};
use store::organise::{self as org, CategoryRow, PaymentMethodRow};

use crate::{ctx::Ctx, input, transactions::StoreExt, views};

fn load_category(ctx: &Ctx<'_>, id: i64) -> Result<CategoryRow, OpError> {
    org::get_category(ctx.db, ctx.household_id(), Some(ctx.me()), id)
        .or_not_found(|| ctx.unknown(EntityKind::Category, id))
}

fn clean_emoji(pointer: &str, emoji: &str) -> Result<String, OpError> {
    let emoji = emoji.trim();
    if emoji.chars().count() > ops::limits::EMOJI
        || emoji.chars().any(|c| c.is_control() || c.is_ascii_alphanumeric())
    {
        return Err(OpError::invalid(pointer, Text::new("emoji takes one emoji, such as 🎬.")));
    }
    Ok(emoji.to_owned())
}

fn check_unique_category(ctx: &Ctx<'_>, name: &str, except: Option<i64>) -> Result<(), OpError> {
    if let Some(existing) = org::find_category(ctx.db, ctx.household_id(), name).or_internal()?
        && Some(existing) != except
    {
        // A conflict with what is stored, not a malformed input: the same name is fine in
        // another household.
        return Err(OpError::conflict(
            Text::new(
                "A category named {name} exists already (id {id}). Use it, or choose another name.",
            )
            .with("name", name)
            .with("id", existing),
        ));
    }
    Ok(())
}

pub(crate) fn list_categories(ctx: &mut Ctx<'_>, _: Empty) -> Result<CategoryList, OpError> {
    Ok(CategoryList { items: views::categories(ctx)? })
}

pub(crate) fn create_category(
    ctx: &mut Ctx<'_>,
    input: CreateCategoryInput,
) -> Result<Category, OpError> {
    ctx.check_cap(store::households::Counted::Categories, 1)?;
    let name = input::clean_name("/name", &input.name, ops::limits::SHORT_NAME)?;
    check_unique_category(ctx, &name, None)?;
    let emoji =
        input.emoji.as_deref().map(|e| clean_emoji("/emoji", e)).transpose()?.unwrap_or_default();
    let colour = input
        .colour
        .as_deref()
        .map(|c| input::clean_colour("/colour", c))
        .transpose()?
        .unwrap_or_else(|| "#8a8f98".into());
    let id =
        org::insert_category(ctx.db, ctx.household_id(), &name, &emoji, &colour, &ctx.now_text())
            .or_internal()?;
    ctx.record(
        EntityKind::Category,
        id,
        None,
        Text::new("Added category {name}").with("name", &name),
    )?;
    Ok(views::category_view(&load_category(ctx, id)?))
}

pub(crate) fn update_category(
    ctx: &mut Ctx<'_>,
    input: UpdateCategoryInput,
) -> Result<Category, OpError> {
    let mut row = load_category(ctx, input.id.get())?;
    let before = ctx.snapshot(EntityKind::Category, row.id)?;
    if let Some(name) = &input.name {
        let name = input::clean_name("/name", name, ops::limits::SHORT_NAME)?;
        check_unique_category(ctx, &name, Some(row.id))?;
        row.name = name;
    }
    if let Some(emoji) = &input.emoji {
        row.emoji = clean_emoji("/emoji", emoji)?;
    }
    if let Some(colour) = &input.colour {
        row.colour = input::clean_colour("/colour", colour)?;
    }
    org::update_category(ctx.db, &row).or_internal()?;
    ctx.record(
        EntityKind::Category,
        row.id,
        before,
        Text::new("Updated category {name}").with("name", &row.name),
    )?;
    Ok(views::category_view(&load_category(ctx, row.id)?))
}

/// Moves every subscription of a category (visible or not: the category is the household's)
/// to `target`, recording each.
fn move_subscriptions(
    ctx: &mut Ctx<'_>,
    from: &CategoryRow,
    target: Option<&CategoryRow>,
) -> Result<(), OpError> {
    for id in org::subscriptions_in_category(ctx.db, from.id).or_internal()? {
        let before = ctx.snapshot(EntityKind::Subscription, id)?;
        let mut row =
            store::subscriptions::get(ctx.db, ctx.household_id(), None, id).or_internal()?;
        row.category_id = target.map(|t| t.id);
        store::subscriptions::update(ctx.db, &row).or_internal()?;
        let summary = match target {
            Some(target) => Text::new("{name} moved from {from} to {to}").with("to", &target.name),
            None => Text::new("{name} no longer in {from}"),
        }
        .with("name", &row.name)
        .with("from", &from.name);
        ctx.record(EntityKind::Subscription, id, before, summary)?;
    }
    // Transactions too, so an undo of the deletion puts them back in it.
    for id in store::ledger::transactions_in_category(ctx.db, from.id).or_internal()? {
        let before = ctx.snapshot(EntityKind::Transaction, id)?;
        store::ledger::move_to_category(ctx.db, id, from.id, target.map(|t| t.id)).or_internal()?;
        let summary = match target {
            Some(target) => {
                Text::new("A transaction moved from {from} to {to}").with("to", &target.name)
            }
            None => Text::new("A transaction no longer in {from}"),
        }
        .with("from", &from.name);
        ctx.record(EntityKind::Transaction, id, before, summary)?;
    }
    // And budgets: one tracking it tracks the target instead.
    for id in store::budgets::budgets_tracking_category(ctx.db, from.id).or_internal()? {
        let before = ctx.snapshot(EntityKind::Budget, id)?;
        store::budgets::move_tracked_category(ctx.db, id, from.id, target.map(|t| t.id))
            .or_internal()?;
        let summary = match target {
            Some(target) => {
                Text::new("A budget tracks {to} instead of {from}").with("to", &target.name)
            }
            None => Text::new("A budget no longer tracks {from}"),
        }
        .with("from", &from.name);
        ctx.record(EntityKind::Budget, id, before, summary)?;
    }
    // And rules that set it.
    for id in store::rules::rules_setting_category(ctx.db, from.id).or_internal()? {
        let before = ctx.snapshot(EntityKind::Rule, id)?;
        store::rules::move_set_category(ctx.db, id, target.map(|t| t.id)).or_internal()?;
        let summary = match target {
            Some(target) => {
                Text::new("A rule sets {to} instead of {from}").with("to", &target.name)
            }
            None => Text::new("A rule no longer sets {from}"),
        }
        .with("from", &from.name);
        ctx.record(EntityKind::Rule, id, before, summary)?;
    }
    Ok(())
}

pub(crate) fn delete_category(
    ctx: &mut Ctx<'_>,
    input: DeleteCategoryInput,
) -> Result<Removed, OpError> {
    let row = load_category(ctx, input.id.get())?;
    let target = match input.move_to_id.map(CategoryId::get) {
        Some(id) if id == row.id => {
            return Err(OpError::invalid(
                "/move_to_id",
                Text::new("move_to_id must be another category."),
            ));
        }
        Some(id) => Some(load_category(ctx, id).map_err(|err| match err {
            OpError::NotFound { message } => OpError::invalid("/move_to_id", message),
            other => other,
        })?),
        None => None,
    };
    move_subscriptions(ctx, &row, target.as_ref())?;
    let before = ctx.snapshot(EntityKind::Category, row.id)?;
    org::delete_category(ctx.db, ctx.household_id(), row.id).or_internal()?;
    ctx.record(
        EntityKind::Category,
        row.id,
        before,
        Text::new("Deleted category {name}").with("name", &row.name),
    )?;
    Ok(Removed { id: row.id, name: row.name })
}

pub(crate) fn merge_categories(
    ctx: &mut Ctx<'_>,
    input: MergeCategoriesInput,
) -> Result<Category, OpError> {
    if input.source_ids.is_empty() || input.source_ids.len() > ops::limits::BULK {
        return Err(OpError::invalid(
            "/source_ids",
            Text::new("Give 1 to {max} categories to merge into the target.")
                .with("max", ops::limits::BULK),
        ));
    }
    let target = load_category(ctx, input.target_id.get())?;
    let mut sources = Vec::new();
    for (i, id) in input.source_ids.iter().enumerate() {
        if id.get() == target.id {
            return Err(OpError::invalid(
                format!("/source_ids/{i}"),
                Text::new("The target cannot also be a source."),
            ));
        }
        sources.push(load_category(ctx, id.get()).map_err(|err| match err {
            OpError::NotFound { message } => OpError::invalid(format!("/source_ids/{i}"), message),
            other => other,
        })?);
    }
    for source in &sources {
        move_subscriptions(ctx, source, Some(&target))?;
        let before = ctx.snapshot(EntityKind::Category, source.id)?;
        org::delete_category(ctx.db, ctx.household_id(), source.id).or_internal()?;
        ctx.record(
            EntityKind::Category,
            source.id,
            before,
            Text::new("Merged category {name} into {target}")
                .with("name", &source.name)
                .with("target", &target.name),
        )?;
    }
    Ok(views::category_view(&load_category(ctx, target.id)?))
}

fn load_payment_method(ctx: &Ctx<'_>, id: i64) -> Result<PaymentMethodRow, OpError> {
    org::get_payment_method(ctx.db, ctx.household_id(), Some(ctx.me()), id)
        .or_not_found(|| ctx.unknown(EntityKind::PaymentMethod, id))
}

fn check_last4(last4: &str) -> Result<String, OpError> {
    if last4.len() != 4 || !last4.chars().all(|c| c.is_ascii_digit()) {
        return Err(OpError::invalid(
            "/last4",
            Text::new("last4 is exactly four digits; never send a full card number."),
        ));
    }
    Ok(last4.to_owned())
}

fn check_expires(expires: &str) -> Result<String, OpError> {
    // Digits only: Rust's integer parsing would also take "+1" for a month.
    let bytes = expires.as_bytes();
    let valid = bytes.len() == 7
        && bytes
            .iter()
            .enumerate()
            .all(|(i, b)| if i == 4 { *b == b'-' } else { b.is_ascii_digit() })
        && expires[..4].parse::<u16>().is_ok_and(|y| (1900..=2200).contains(&y))
        && expires[5..].parse::<u8>().is_ok_and(|m| (1..=12).contains(&m));
    if !valid {
        return Err(OpError::invalid(
            "/expires",
            Text::new("{value} is not an expiry month; write YYYY-MM, for example 2028-04.")
                .with("value", expires),
        ));
    }
    Ok(expires.to_owned())
}

pub(crate) fn list_payment_methods(
    ctx: &mut Ctx<'_>,
    _: Empty,
) -> Result<PaymentMethodList, OpError> {
    Ok(PaymentMethodList { items: views::payment_methods(ctx)? })
}

pub(crate) fn create_payment_method(
    ctx: &mut Ctx<'_>,
    input: CreatePaymentMethodInput,
) -> Result<PaymentMethod, OpError> {
    ctx.check_cap(store::households::Counted::PaymentMethods, 1)?;
    let row = PaymentMethodRow {
        id: 0,
        household_id: ctx.household_id(),
        owner_id: ctx.me(),
        owner_name: String::new(),
        name: input::clean_name("/name", &input.name, ops::limits::SHORT_NAME)?,
        kind: input.kind.unwrap_or(PaymentMethodKind::Card),
        last4: input.last4.as_deref().map(check_last4).transpose()?,
        expires: input.expires.as_deref().map(check_expires).transpose()?,
        visibility: input.visibility.unwrap_or(Visibility::Household),
        subscription_count: 0,
    };
    let id = org::insert_payment_method(ctx.db, &row, &ctx.now_text()).or_internal()?;
    ctx.record(
        EntityKind::PaymentMethod,
        id,
        None,
        Text::new("Added payment method {name}").with("name", &row.name),
    )?;
    Ok(views::payment_method_view(&load_payment_method(ctx, id)?))
}

pub(crate) fn update_payment_method(
    ctx: &mut Ctx<'_>,
    input: UpdatePaymentMethodInput,
) -> Result<PaymentMethod, OpError> {
    let mut row = load_payment_method(ctx, input.id.get())?;
    let before = ctx.snapshot(EntityKind::PaymentMethod, row.id)?;
    if let Some(name) = &input.name {
        row.name = input::clean_name("/name", name, ops::limits::SHORT_NAME)?;
    }
    if let Some(kind) = input.kind {
        row.kind = kind;
    }
    match &input.last4 {
        Patch::Keep => {}
        Patch::Clear => row.last4 = None,
        Patch::Set(last4) => row.last4 = Some(check_last4(last4)?),
    }
    match &input.expires {
        Patch::Keep => {}
        Patch::Clear => row.expires = None,
        Patch::Set(expires) => row.expires = Some(check_expires(expires)?),
    }
    if let Some(visibility) = input.visibility {
        if visibility == Visibility::Private && row.owner_id != ctx.me() {
            return Err(OpError::invalid(
                "/visibility",
                Text::new("Only its owner can make a payment method private."),
            ));
        }
        row.visibility = visibility;
    }
    org::update_payment_method(ctx.db, &row).or_internal()?;
    ctx.record(
        EntityKind::PaymentMethod,
        row.id,
        before,
        Text::new("Updated payment method {name}").with("name", &row.name),
    )?;
    Ok(views::payment_method_view(&load_payment_method(ctx, row.id)?))
}

pub(crate) fn delete_payment_method(
    ctx: &mut Ctx<'_>,
    input: IdInput<PaymentMethodId>,
) -> Result<Removed, OpError> {
    let row = load_payment_method(ctx, input.id.get())?;
    for id in org::subscriptions_with_payment_method(ctx.db, row.id).or_internal()? {
        let before = ctx.snapshot(EntityKind::Subscription, id)?;
        let mut subscription =
            store::subscriptions::get(ctx.db, ctx.household_id(), None, id).or_internal()?;
        subscription.payment_method_id = None;
        store::subscriptions::update(ctx.db, &subscription).or_internal()?;
        ctx.record(
            EntityKind::Subscription,
            id,
            before,
            Text::new("{name} no longer paid with {method}")
                .with("name", &subscription.name)
                .with("method", &row.name),
        )?;
    }
    let before = ctx.snapshot(EntityKind::PaymentMethod, row.id)?;
    org::delete_payment_method(ctx.db, ctx.household_id(), row.id).or_internal()?;
    ctx.record(
        EntityKind::PaymentMethod,
        row.id,
        before,
        Text::new("Deleted payment method {name}").with("name", &row.name),
    )?;
    Ok(Removed { id: row.id, name: row.name })
}

pub(crate) fn list_tags(ctx: &mut Ctx<'_>, _: Empty) -> Result<TagList, OpError> {
    Ok(TagList { items: views::tags(ctx)? })
}

/// Replaces tag `from` by `to` (None removes it) on every subscription the caller can see.
fn retag(ctx: &mut Ctx<'_>, from: &str, to: Option<&str>) -> Result<u64, OpError> {
    let ids = org::subscriptions_with_tag(ctx.db, ctx.household_id(), Some(ctx.me()), from)
        .or_internal()?;
    if ids.is_empty() {
        return Err(OpError::not_found(
            Text::new("No subscription you can see has the tag {tag}. Call list_tags.")
                .with("tag", from),
        ));
    }
    let from_key = from.to_lowercase();
    for id in &ids {
        let before = ctx.snapshot(EntityKind::Subscription, *id)?;
        let row = store::subscriptions::get(ctx.db, ctx.household_id(), Some(ctx.me()), *id)
            .or_internal()?;
        let mut tags: Vec<String> =
            row.tags.iter().filter(|t| t.to_lowercase() != from_key).cloned().collect();
        if let Some(to) = to {
            tags.push(to.to_owned());
        }
        let tags = input::clean_tags("/to", &tags)?;
        store::subscriptions::set_tags(ctx.db, *id, &tags).or_internal()?;
        let summary = match to {
            Some(to) => Text::new("Tag {from} renamed to {to} on {name}").with("to", to),
            None => Text::new("Tag {from} removed from {name}"),
        }
        .with("from", from)
        .with("name", &row.name);
        ctx.record(EntityKind::Subscription, *id, before, summary)?;
    }
    Ok(ids.len() as u64)
}

pub(crate) fn rename_tag(ctx: &mut Ctx<'_>, input: RenameTagInput) -> Result<TagChange, OpError> {
    let from = input::clean_name("/from", &input.from, ops::limits::TAG)?;
    let to = input::clean_name("/to", &input.to, ops::limits::TAG)?;
    Ok(TagChange { subscriptions_changed: retag(ctx, &from, Some(&to))? })
}

pub(crate) fn delete_tag(ctx: &mut Ctx<'_>, input: DeleteTagInput) -> Result<TagChange, OpError> {
    let name = input::clean_name("/name", &input.name, ops::limits::TAG)?;
    Ok(TagChange { subscriptions_changed: retag(ctx, &name, None)? })
}
