//! Household and member handlers.

use domain::{Text, entities::Role};
use ops::{OpError, household::*};
use store::households::{self as hh, MemberRow};

use crate::{
    auth,
    ctx::{Ctx, invalid},
    invoke::StoreExt,
    views,
};

pub(crate) fn household_view(ctx: &Ctx<'_>) -> Household {
    let h = &ctx.household;
    Household {
        id: h.id,
        name: h.name.clone(),
        currency: h.currency.code().to_owned(),
        time_zone: h.time_zone.clone(),
        language: h.language.clone(),
        week_start: h.week_start.clone(),
        today: ctx.today.to_string(),
    }
}

pub(crate) fn get_household(ctx: &mut Ctx<'_>, _: Empty) -> Result<Household, OpError> {
    Ok(household_view(ctx))
}

pub(crate) fn check_time_zone(pointer: &str, name: &str) -> Result<String, OpError> {
    jiff::tz::TimeZone::get(name).map(|_| name.to_owned()).map_err(|_| {
        invalid(pointer, Text::new("{zone} is not an IANA time zone; use a name such as Europe/Madrid or America/New_York.").with("zone", name))
    })
}

pub(crate) fn check_language(pointer: &str, tag: &str) -> Result<String, OpError> {
    let ok =
        (2..=12).contains(&tag.len()) && tag.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    if !ok {
        return Err(invalid(
            pointer,
            Text::new("{tag} is not a language tag; use one such as en or es.").with("tag", tag),
        ));
    }
    Ok(tag.to_owned())
}

pub(crate) fn update_household(
    ctx: &mut Ctx<'_>,
    input: UpdateHouseholdInput,
) -> Result<Household, OpError> {
    let before = ctx.snapshot("household", ctx.household_id())?;
    let mut row = ctx.household.clone();
    if let Some(name) = &input.name {
        row.name = views::clean_name("/name", name, views::MAX_NAME)?;
    }
    if let Some(code) = &input.currency {
        row.currency = views::parse_currency("/currency", code)?;
    }
    if let Some(zone) = &input.time_zone {
        row.time_zone = check_time_zone("/time_zone", zone)?;
    }
    if let Some(language) = &input.language {
        row.language = check_language("/language", language)?;
    }
    if let Some(week_start) = &input.week_start {
        if week_start != "monday" && week_start != "sunday" {
            return Err(invalid("/week_start", Text::new("week_start is monday or sunday.")));
        }
        row.week_start = week_start.clone();
    }
    hh::update_household(ctx.db, &row).or_internal()?;
    ctx.household = row;
    ctx.record(
        "household",
        ctx.household_id(),
        before,
        Text::new("Updated the household settings"),
    )?;
    Ok(household_view(ctx))
}

pub(crate) fn member_view(ctx: &Ctx<'_>, row: &MemberRow) -> Member {
    let is_person = matches!(ctx.caller.actor, ops::Actor::Person);
    Member {
        id: row.id,
        name: row.name.clone(),
        role: row.role.as_str().to_owned(),
        language: row.language.clone(),
        is_you: row.id == ctx.me(),
        // A member's email is never handed to a model or an agent.
        email: is_person.then(|| row.email.clone()),
        active: row.has_password,
    }
}

pub(crate) fn list_members(ctx: &mut Ctx<'_>, _: Empty) -> Result<MemberList, OpError> {
    let rows = hh::list_members(ctx.db, ctx.household_id()).or_internal()?;
    Ok(MemberList { items: rows.iter().map(|r| member_view(ctx, r)).collect() })
}

fn load_member(ctx: &Ctx<'_>, id: i64) -> Result<MemberRow, OpError> {
    hh::get_member(ctx.db, ctx.household_id(), id).or_not_found(|| {
        Text::new("No member with id {id}. Call list_members to find ids.").with("id", id)
    })
}

pub(crate) fn update_member(
    ctx: &mut Ctx<'_>,
    input: UpdateMemberInput,
) -> Result<Member, OpError> {
    let mut row = load_member(ctx, input.id)?;
    if row.id != ctx.me() && !ctx.caller.is_owner() {
        return Err(OpError::forbidden(Text::new("Only an owner can change another member.")));
    }
    let before = ctx.snapshot("member", row.id)?;
    if let Some(name) = &input.name {
        row.name = views::clean_name("/name", name, views::MAX_NAME)?;
    }
    if let Some(language) = &input.language {
        row.language = check_language("/language", language)?;
    }
    if let Some(role) = &input.role {
        let role = Role::parse(role)
            .ok_or_else(|| invalid("/role", Text::new("role is owner or member.")))?;
        if role != row.role {
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
    }
    hh::update_member(ctx.db, &row).or_internal()?;
    ctx.record(
        "member",
        row.id,
        before,
        Text::new("Updated member {name}").with("name", &row.name),
    )?;
    Ok(member_view(ctx, &row))
}

pub(crate) fn invite_member(
    ctx: &mut Ctx<'_>,
    input: InviteMemberInput,
) -> Result<Invitation, OpError> {
    let name = views::clean_name("/name", &input.name, views::MAX_NAME)?;
    let email = auth::clean_email("/email", &input.email)?;
    let role = match input.role.as_deref() {
        None => Role::Member,
        Some(role) => Role::parse(role)
            .ok_or_else(|| invalid("/role", Text::new("role is owner or member.")))?,
    };
    if hh::email_taken(ctx.db, &email).or_internal()? {
        return Err(invalid(
            "/email",
            Text::new("Someone with this email already has an Exhale account."),
        ));
    }
    let code = auth::new_secret("inv")?;
    let expires = ctx
        .now
        .checked_add(jiff::SignedDuration::from_hours(24 * 7))
        .map_err(|_| OpError::Internal)?;
    let expires_at = crate::invoke::timestamp_text(expires);
    let id = hh::insert_member(
        ctx.db,
        &hh::NewMember {
            household_id: ctx.household_id(),
            name: &name,
            email: &email,
            role,
            language: &ctx.household.language.clone(),
            password_hash: None,
            invite_hash: Some(&auth::hash_token(&code)),
            invite_expires_at: Some(&expires_at),
        },
        &ctx.now_text(),
    )
    .or_internal()?;
    ctx.record("member", id, None, Text::new("Invited {name}").with("name", &name))?;
    let row = load_member(ctx, id)?;
    Ok(Invitation { member: member_view(ctx, &row), invite_code: code, expires_at })
}

pub(crate) fn remove_member(ctx: &mut Ctx<'_>, input: IdInput) -> Result<Removed, OpError> {
    let row = load_member(ctx, input.id)?;
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
    // Their shared subscriptions and payment methods move to the owner removing them.
    for subscription in
        store::subscriptions::list(ctx.db, ctx.household_id(), None).or_internal()?
    {
        if subscription.owner_id == row.id {
            let before = ctx.snapshot("subscription", subscription.id)?;
            let mut moved = subscription.clone();
            moved.owner_id = ctx.me();
            store::subscriptions::update(ctx.db, &moved).or_internal()?;
            ctx.record(
                "subscription",
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
        let before = ctx.snapshot("payment_method", id)?;
        method.owner_id = ctx.me();
        method.visibility = domain::entities::Visibility::Household;
        store::organise::update_payment_method(ctx.db, &method).or_internal()?;
        ctx.record(
            "payment_method",
            id,
            before,
            Text::new("{name} moved to you").with("name", &method.name),
        )?;
    }
    let before = ctx.snapshot("member", row.id)?;
    store::access::revoke_tokens_of(ctx.db, ctx.household_id(), row.id, &ctx.now_text())
        .or_internal()?;
    hh::delete_member(ctx.db, ctx.household_id(), row.id).or_internal()?;
    ctx.record(
        "member",
        row.id,
        before,
        Text::new("Removed {name} from the household").with("name", &row.name),
    )?;
    Ok(Removed { id: row.id, name: row.name })
}
