//! Payments and the subscription charges they paid: what an import or a bank sync proposes,
//! and a match made (the charge paid at the real amount).

use domain::{Money, Text, entities::EntityKind};
use ops::{OpError, common::Ref, resolve::IsoDate};
use store::ledger::{self as db, TransactionFilter, TransactionRow};

use crate::{ctx::Ctx, transactions::StoreExt, views};

/// How far apart a payment and the charge it paid may be, in days.
pub(crate) const MATCH_DAYS: i64 = 10;
/// How far apart an import proposes a match, in days.
const PROPOSE_DAYS: i64 = 3;

/// How many matches one import or sync proposes at most.
const MOST_PROPOSED: usize = 100;

pub(crate) fn days_apart(a: domain::Date, b: domain::Date) -> i64 {
    a.until(b).map_or(i64::MAX, |span| i64::from(span.get_days()).abs())
}

/// The subscription charges an import's new payments look like they paid: the same merchant
/// and currency, within a few days, not matched yet; the nearest for each payment.
pub(crate) fn propose(
    ctx: &Ctx<'_>,
    import_id: i64,
    from: domain::Date,
    to: domain::Date,
) -> Result<Vec<ops::import::ProposedMatch>, OpError> {
    let margin = jiff::Span::new().days(PROPOSE_DAYS);
    let filter = store::charges::ChargeFilter {
        from: Some(from.saturating_sub(margin)),
        to: Some(to.saturating_add(margin)),
        ..Default::default()
    };
    let (charges, _) =
        store::charges::list(ctx.db, ctx.household_id(), Some(ctx.me()), &filter, 10_000, 0)
            .or_internal()?;
    if charges.is_empty() {
        return Ok(Vec::new());
    }
    let keyed: Vec<(String, &store::charges::ChargeRow)> =
        charges.iter().map(|c| (statement::merchant::key(&c.subscription_name), c)).collect();
    let payments =
        TransactionFilter { import_id: Some(import_id), max_milli: Some(-1), ..Default::default() };
    let rows =
        db::search_transactions(ctx.db, ctx.household_id(), ctx.me(), &payments, 10_000, None)
            .or_internal()?;
    let mut taken: Vec<i64> = Vec::new();
    let mut proposed = Vec::new();
    for row in rows {
        let key = statement::merchant::key(&row.description);
        let best = keyed
            .iter()
            .filter(|(k, c)| *k == key && c.currency == row.currency && !taken.contains(&c.id))
            .filter(|(_, c)| days_apart(row.on_date, c.charged_on) <= PROPOSE_DAYS)
            .min_by_key(|(_, c)| days_apart(row.on_date, c.charged_on))
            .map(|(_, c)| *c);
        let Some(charge) = best else { continue };
        if db::transaction_for_charge(ctx.db, charge.id).or_internal()?.is_some() {
            continue;
        }
        taken.push(charge.id);
        proposed.push(ops::import::ProposedMatch {
            transaction_id: row.id,
            charge_id: charge.id,
            subscription: Ref {
                id: charge.subscription_id,
                name: charge.subscription_name.clone(),
            },
            charged_on: IsoDate(charge.charged_on),
            paid_on: IsoDate(row.on_date),
            amount: views::amount(row.amount_minor, row.currency),
        });
        if proposed.len() == MOST_PROPOSED {
            break;
        }
    }
    Ok(proposed)
}

/// Marks `charge` paid by the transaction `row`, at what left the account when it is in the
/// same currency; both changes recorded.
pub(crate) fn pay(
    ctx: &mut Ctx<'_>,
    row: &TransactionRow,
    mut charge: store::charges::ChargeRow,
) -> Result<(), OpError> {
    let before = ctx.snapshot(EntityKind::Transaction, row.id)?;
    db::set_charge(ctx.db, row.id, Some(charge.id)).or_internal()?;
    ctx.record(
        EntityKind::Transaction,
        row.id,
        before,
        Text::new("The transaction with {payee} paid the charge of {name}")
            .with("payee", &row.payee)
            .with("name", &charge.subscription_name),
    )?;
    // The charge is confirmed paid, at what left the account when it is in the same currency.
    let before = ctx.snapshot(EntityKind::Charge, charge.id)?;
    charge.status = domain::entities::ChargeStatus::Paid;
    if charge.currency == row.currency {
        charge.amount_minor = -row.amount_minor;
    }
    store::charges::update(ctx.db, &charge).or_internal()?;
    ctx.record(
        EntityKind::Charge,
        charge.id,
        before,
        Text::new("Charge of {name} on {date} paid: {amount}")
            .with("name", &charge.subscription_name)
            .with("date", IsoDate(charge.charged_on))
            .with_money("amount", Money::new(charge.amount_minor, charge.currency)),
    )?;
    Ok(())
}
