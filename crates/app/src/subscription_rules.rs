//! What every write to a subscription shares: loading one the caller can see, the references
//! it may hold (a category, a payment method the caller can see, a member), who may own a
//! private one, how far back a series may start, and creating one with its price history and
//! past charges (`create_subscription` and `import_subscriptions`).

use domain::{
    Date, Text,
    entities::{EntityKind, SubscriptionStatus, Visibility},
};
use ops::{
    OpError,
    resolve::{IsoDate, MemberId, PaymentMethodId},
    subscriptions::{CreateSubscriptionInput, Subscription},
};
use store::{
    Db, StoreError,
    subscriptions::{self as subs, SubscriptionRow},
};

use crate::{
    ctx::Ctx,
    input,
    refs::{check_category, referenced},
    series::SeriesParts,
    transactions::StoreExt,
    views::subscription_view,
};

pub(crate) fn load(ctx: &Ctx<'_>, id: i64) -> Result<SubscriptionRow, OpError> {
    subs::get(ctx.db, ctx.household_id(), Some(ctx.me()), id)
        .or_not_found(|| ctx.unknown(EntityKind::Subscription, id))
}

pub(crate) fn reload_view(ctx: &Ctx<'_>, id: i64) -> Result<Subscription, OpError> {
    Ok(subscription_view(&load(ctx, id)?, ctx.today))
}

/// Checks the caller can see a payment method.
pub(crate) fn check_payment_method(ctx: &Ctx<'_>, pointer: &str, id: i64) -> Result<(), OpError> {
    let found = store::organise::get_payment_method(ctx.db, ctx.household_id(), Some(ctx.me()), id)
        .or_not_found(|| ctx.unknown(EntityKind::PaymentMethod, id));
    referenced(pointer.into(), found)?;
    Ok(())
}

pub(crate) fn check_member(ctx: &Ctx<'_>, pointer: &str, id: i64) -> Result<String, OpError> {
    match store::households::get_member(ctx.db, ctx.household_id(), id) {
        Ok(member) => Ok(member.name),
        Err(store::StoreError::NotFound) => {
            Err(OpError::invalid(pointer, ctx.unknown(EntityKind::Member, id)))
        }
        Err(err) => Err(crate::transactions::internal(err)),
    }
}

pub(crate) fn check_private_owner(ctx: &Ctx<'_>, row: &SubscriptionRow) -> Result<(), OpError> {
    if row.visibility == Visibility::Private && row.owner_id != ctx.me() {
        return Err(OpError::invalid(
            "/visibility",
            Text::new(
                "A private subscription is seen only by its owner, so only you can own your private subscriptions. Make it household-visible to give it to someone else.",
            ),
        ));
    }
    Ok(())
}

/// How far back a series may start: past charges are recorded from the first charge on, and a
/// series decades old is a typo more often than a history.
const MAX_YEARS_BACK: i16 = 10;

pub(crate) fn check_first_charge(pointer: &str, anchor: Date, today: Date) -> Result<(), OpError> {
    if anchor.year() < today.year() - MAX_YEARS_BACK {
        return Err(OpError::invalid(
            pointer,
            Text::new("{date} is more than {years} years ago; give the next charge date, or a first charge within the last {years} years.")
                .with("date", anchor)
                .with("years", MAX_YEARS_BACK),
        ));
    }
    Ok(())
}

/// A new subscription, with price changes after the first charge (an import's history) set
/// before past charges are recorded and the change is audited.
pub(crate) fn create(
    ctx: &mut Ctx<'_>,
    input: CreateSubscriptionInput,
    later_prices: &[(Date, i64)],
) -> Result<Subscription, OpError> {
    ctx.check_cap(store::households::Counted::Subscriptions, 1)?;
    let name = input::clean_name("/name", &input.name, ops::limits::NAME)?;
    let currency = match &input.currency {
        Some(code) => code.currency(),
        None => ctx.household.currency,
    };
    let price = input::minor_units("/amount", input.amount.money(currency))?;
    let cycle = input::parse_cycle("/cycle", input.cycle)?;
    let trial_ends_on = input.trial_ends_on.map(ops::resolve::FutureDate::date);
    let next_charge_on = input.next_charge_on.map(IsoDate::date);
    let Some(anchor_on) = next_charge_on.or(trial_ends_on) else {
        return Err(OpError::invalid(
            "/next_charge_on",
            Text::new(
                "Give next_charge_on (YYYY-MM-DD), the date of the next or first charge, or trial_ends_on for a free trial.",
            ),
        ));
    };
    if let (Some(next), Some(trial_end)) = (next_charge_on, trial_ends_on)
        && next < trial_end
    {
        return Err(OpError::invalid(
            "/next_charge_on",
            Text::new("The first charge ({next}) falls inside the free trial, which ends on {end}; leave next_charge_on out or set it on or after the trial's end.")
                .with("next", next)
                .with("end", trial_end),
        ));
    }
    check_first_charge("/next_charge_on", anchor_on, ctx.today)?;
    let ends_on = input.ends_on.map(ops::resolve::NearDate::date);
    if let Some(end) = ends_on
        && end < anchor_on
    {
        return Err(OpError::invalid(
            "/ends_on",
            Text::new("ends_on ({end}) is before the first charge ({first}).")
                .with("end", end)
                .with_date("first", anchor_on),
        ));
    }
    let url = input.url.as_deref().map(|u| input::clean_url("/url", u)).transpose()?;
    let notes = input
        .notes
        .as_deref()
        .map(|n| input::clean_notes("/notes", n))
        .transpose()?
        .filter(|n| !n.is_empty());
    let category_id =
        input.category_id.map(|id| check_category(ctx, "/category_id", id)).transpose()?;
    let payment_method_id = input.payment_method_id.map(PaymentMethodId::get);
    if let Some(id) = payment_method_id {
        check_payment_method(ctx, "/payment_method_id", id)?;
    }
    let tags = input::clean_tags("/tags", &input.tags)?;
    let owner_id = input.owner_id.map_or(ctx.me(), MemberId::get);
    let owner_name = check_member(ctx, "/owner_id", owner_id)?;
    let visibility = input.visibility.unwrap_or(Visibility::Household);
    let status = if trial_ends_on.is_some_and(|end| end > ctx.today) {
        SubscriptionStatus::Trial
    } else {
        SubscriptionStatus::Active
    };
    let now = ctx.now_text();
    let mut row = SubscriptionRow {
        id: 0,
        household_id: ctx.household_id(),
        owner_id,
        owner_name,
        name,
        url,
        notes,
        currency,
        cycle,
        anchor_on,
        status,
        trial_ends_on,
        ends_on,
        category_id,
        category_name: None,
        payment_method_id,
        payment_method_name: None,
        visibility,
        charged_through: None,
        created_at: now.clone(),
        updated_at: now,
        tags: Vec::new(),
        prices: Vec::new(),
        pauses: Vec::new(),
    };
    check_private_owner(ctx, &row)?;
    let id = subs::insert(ctx.db, &row).or_internal()?;
    row.id = id;
    subs::set_tags(ctx.db, id, &tags).or_internal()?;
    subs::set_price(ctx.db, id, anchor_on, price).or_internal()?;
    for &(on, minor) in later_prices.iter().filter(|(on, _)| *on > anchor_on) {
        subs::set_price(ctx.db, id, on, minor).or_internal()?;
    }
    let row = load(ctx, id)?;
    materialise_subscription(ctx.db, &row, ctx.today).or_internal()?;
    let summary = Text::new("Added {name}: {price} {cycle}")
        .with("name", &row.name)
        .with_money("price", domain::Money::new(price, currency))
        .with_cycle("cycle", cycle);
    ctx.record(EntityKind::Subscription, id, None, summary)?;
    reload_view(ctx, id)
}

/// Records every charge of one subscription from where the job last stopped up to `today`.
pub(crate) fn materialise_subscription(
    db: &Db<'_>,
    row: &SubscriptionRow,
    today: Date,
) -> Result<usize, StoreError> {
    let from = match row.charged_through {
        Some(through) => match through.tomorrow() {
            Ok(next) => next,
            Err(_) => return Ok(0),
        },
        None => row.anchor_on,
    };
    if from > today {
        return Ok(0);
    }
    let parts = SeriesParts::of(row);
    let mut count = 0;
    for occurrence in parts.series(row).occurrences_between(from, today) {
        if store::charges::insert_if_absent(
            db,
            row.household_id,
            row.id,
            occurrence.date,
            occurrence.minor,
            row.currency,
        )?
        .is_some()
        {
            count += 1;
        }
    }
    store::subscriptions::set_charged_through(db, row.id, today)?;
    Ok(count)
}
