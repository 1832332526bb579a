//! Household and member handlers.

use domain::{
    Text,
    entities::{EntityKind, Role},
};
use ops::{
    OpError,
    common::{IdInput, Patch, Timestamp},
    household::*,
    resolve::MemberId,
};
use store::households::{self as hh, MemberRow};

use crate::{credentials, ctx::Ctx, input, transactions::StoreExt, views};

pub(crate) fn get_household(ctx: &mut Ctx<'_>, _: Empty) -> Result<Household, OpError> {
    Ok(views::household_view(ctx))
}

pub(crate) fn update_household(
    ctx: &mut Ctx<'_>,
    input: UpdateHouseholdInput,
) -> Result<Household, OpError> {
    let before = ctx.snapshot(EntityKind::Household, ctx.household_id())?;
    let mut row = ctx.household.clone();
    if let Some(name) = &input.name {
        row.name = input::clean_name("/name", name, ops::limits::NAME)?;
    }
    if let Some(code) = &input.currency {
        row.currency = code.currency();
    }
    if let Some(zone) = &input.time_zone {
        row.time_zone = input::check_time_zone("/time_zone", zone)?;
    }
    if let Some(language) = &input.language {
        row.language = input::check_language("/language", language)?;
    }
    if let Some(week_start) = input.week_start {
        row.week_start = week_start;
    }
    let zone_changed = row.time_zone != ctx.household.time_zone;
    hh::update_household(ctx.db, &row).or_internal()?;
    ctx.household = row;
    if zone_changed {
        // Reminders are at a member's time of day in the household's zone.
        crate::reminders::replan_household(ctx.db, &ctx.household, ctx.now).or_internal()?;
    }
    ctx.record(
        EntityKind::Household,
        ctx.household_id(),
        before,
        Text::new("Updated the household settings"),
    )?;
    Ok(views::household_view(ctx))
}

pub(crate) fn list_members(ctx: &mut Ctx<'_>, _: Empty) -> Result<MemberList, OpError> {
    Ok(MemberList { items: views::members(ctx)? })
}

fn load_member(ctx: &Ctx<'_>, id: i64) -> Result<MemberRow, OpError> {
    hh::get_member(ctx.db, ctx.household_id(), id)
        .or_not_found(|| ctx.unknown(EntityKind::Member, id))
}

pub(crate) fn update_member(
    ctx: &mut Ctx<'_>,
    input: UpdateMemberInput,
) -> Result<Member, OpError> {
    let mut row = load_member(ctx, input.id.get())?;
    if row.id != ctx.me() && !ctx.caller.is_owner() {
        return Err(OpError::forbidden(Text::new("Only an owner can change another member.")));
    }
    let before = ctx.snapshot(EntityKind::Member, row.id)?;
    if let Some(name) = &input.name {
        row.name = input::clean_name("/name", name, ops::limits::NAME)?;
    }
    match &input.language {
        Patch::Keep => {}
        // An empty setting follows the household's language.
        Patch::Clear => row.language = String::new(),
        Patch::Set(language) => row.language = input::check_language("/language", language)?,
    }
    if let Some(role) = input.role
        && role != row.role
    {
        if !ctx.caller.is_owner() || !matches!(ctx.caller.actor, ops::Actor::Person) {
            return Err(OpError::forbidden(Text::new(
                "Only an owner, in person, can change roles; agents cannot.",
            )));
        }
        if row.role == Role::Owner
            && hh::count_owners(ctx.db, ctx.household_id()).or_internal()? <= 1
        {
            return Err(OpError::conflict(
                Text::new("{name} is the last owner; make someone else an owner first.")
                    .with("name", &row.name),
            ));
        }
        row.role = role;
    }
    hh::update_member(ctx.db, &row).or_internal()?;
    ctx.record(
        EntityKind::Member,
        row.id,
        before,
        Text::new("Updated member {name}").with("name", &row.name),
    )?;
    Ok(views::member_view(ctx, &row))
}

pub(crate) fn invite_member(
    ctx: &mut Ctx<'_>,
    input: InviteMemberInput,
) -> Result<Invitation, OpError> {
    ctx.check_cap(hh::Counted::Members, 1)?;
    let name = input::clean_name("/name", &input.name, ops::limits::NAME)?;
    let email = credentials::clean_email("/email", &input.email)?;
    let role = input.role.unwrap_or(Role::Member);
    if hh::email_taken(ctx.db, &email).or_internal()? {
        return Err(OpError::conflict(Text::new(
            "Someone with this email already has an Exhale account; invite another address.",
        )));
    }
    let code = credentials::new_secret("inv")?;
    let expires = ctx
        .now
        .checked_add(jiff::SignedDuration::from_hours(24 * 7))
        .map_err(|_| OpError::Internal)?;
    let expires_at = crate::clock::timestamp_text(expires);
    let id = hh::insert_member(
        ctx.db,
        &hh::NewMember {
            household_id: ctx.household_id(),
            name: &name,
            email: &email,
            role,
            // An invited person reads the household's language until they choose their own.
            language: "",
            password_hash: None,
            invite_hash: Some(&credentials::hash_token(&code)),
            invite_expires_at: Some(&expires_at),
        },
        &ctx.now_text(),
    )
    .or_internal()?;
    ctx.record(EntityKind::Member, id, None, Text::new("Invited {name}").with("name", &name))?;
    let row = load_member(ctx, id)?;
    Ok(Invitation {
        member: views::member_view(ctx, &row),
        invite_code: code,
        expires_at: Timestamp(expires),
    })
}

pub(crate) fn remove_member(
    ctx: &mut Ctx<'_>,
    input: IdInput<MemberId>,
) -> Result<Removed, OpError> {
    let row = load_member(ctx, input.id.get())?;
    if row.id == ctx.me() {
        return Err(OpError::conflict(Text::new(
            "You cannot remove yourself; another owner can remove you, or make someone else an owner first.",
        )));
    }
    let private_cards = store::organise::payment_methods_of(ctx.db, ctx.household_id(), row.id)
        .or_internal()?
        .into_iter()
        .filter_map(|id| {
            store::organise::get_payment_method(ctx.db, ctx.household_id(), None, id).ok()
        })
        .filter(|method| method.visibility == domain::entities::Visibility::Private)
        .count();
    if private_cards > 0 {
        return Err(OpError::conflict(
            Text::new("{name} still has {count} private payment methods. They must delete them or make them household-visible first.")
                .with("name", &row.name)
                .with("count", private_cards),
        ));
    }
    let accounts = store::ledger::accounts_of(ctx.db, ctx.household_id(), row.id).or_internal()?;
    let private_accounts =
        accounts.iter().filter(|(_, v)| *v == domain::entities::Visibility::Private).count();
    if private_accounts > 0 {
        return Err(OpError::conflict(
            Text::new("{name} still has {count} private accounts. They must delete them or make them household-visible first.")
                .with("name", &row.name)
                .with("count", private_accounts),
        ));
    }
    if row.role == Role::Owner && hh::count_owners(ctx.db, ctx.household_id()).or_internal()? <= 1 {
        return Err(OpError::conflict(
            Text::new("{name} is the last owner and cannot be removed.").with("name", &row.name),
        ));
    }
    let private =
        store::subscriptions::count_private_of(ctx.db, ctx.household_id(), row.id).or_internal()?;
    if private > 0 {
        return Err(OpError::conflict(
            Text::new("{name} still owns {count} private subscriptions. They must delete them or make them household-visible first.")
                .with("name", &row.name)
                .with("count", private),
        ));
    }
    // Their shared subscriptions, payment methods and accounts move to the owner removing them.
    for (id, _) in accounts {
        let before = ctx.snapshot(EntityKind::Account, id)?;
        store::ledger::set_account_owner(ctx.db, ctx.household_id(), id, ctx.me()).or_internal()?;
        ctx.record(
            EntityKind::Account,
            id,
            before,
            Text::new("An account of {name} moved to you").with("name", &row.name),
        )?;
    }
    for subscription in
        store::subscriptions::list(ctx.db, ctx.household_id(), None).or_internal()?
    {
        if subscription.owner_id == row.id {
            let before = ctx.snapshot(EntityKind::Subscription, subscription.id)?;
            let mut moved = subscription.clone();
            moved.owner_id = ctx.me();
            store::subscriptions::update(ctx.db, &moved).or_internal()?;
            ctx.record(
                EntityKind::Subscription,
                moved.id,
                before,
                Text::new("{name} moved to you").with("name", &moved.name),
            )?;
        }
    }
    for id in
        store::organise::payment_methods_of(ctx.db, ctx.household_id(), row.id).or_internal()?
    {
        let mut method = store::organise::get_payment_method(ctx.db, ctx.household_id(), None, id)
            .or_internal()?;
        let before = ctx.snapshot(EntityKind::PaymentMethod, id)?;
        method.owner_id = ctx.me();
        method.visibility = domain::entities::Visibility::Household;
        store::organise::update_payment_method(ctx.db, &method).or_internal()?;
        ctx.record(
            EntityKind::PaymentMethod,
            id,
            before,
            Text::new("{name} moved to you").with("name", &method.name),
        )?;
    }
    let before = ctx.snapshot(EntityKind::Member, row.id)?;
    store::access::revoke_tokens_of(ctx.db, ctx.household_id(), row.id, &ctx.now_text())
        .or_internal()?;
    hh::delete_member(ctx.db, ctx.household_id(), row.id).or_internal()?;
    ctx.record(
        EntityKind::Member,
        row.id,
        before,
        Text::new("Removed {name} from the household").with("name", &row.name),
    )?;
    Ok(Removed { id: row.id, name: row.name })
}
