//! `parse_statement`: a bank export read by the `statement` crate, its recurring charges
//! proposed as subscriptions, each matched with the household's categories and with the
//! subscriptions it already has (so a second import proposes no duplicates).
//! `import_subscriptions`: the reviewed ones created with their price history, skipping what
//! exists, so running an import twice creates nothing twice.

use domain::{Currency, Text};
use ops::{
    OpError,
    common::Ref,
    import::{
        ChargeSeen, DEFAULT_MIN_CONFIDENCE, ImportResult, ImportSubscriptionsInput,
        ParseStatementInput, ParsedStatement, PriceChangeSeen, RecurringCandidate, SkippedItem,
        StatementProblem, StatementTransaction,
    },
    subscriptions::CreateSubscriptionInput,
};

use crate::{ctx::Ctx, input, subscription_rules, transactions::StoreExt, views::amount};

/// How many transactions the result shows, for a look; the candidates carry their own.
const SHOWN_TRANSACTIONS: usize = 100;

pub(crate) fn parse_statement(
    ctx: &mut Ctx<'_>,
    input: ParseStatementInput,
) -> Result<ParsedStatement, OpError> {
    let min_confidence = input.min_confidence.unwrap_or(DEFAULT_MIN_CONFIDENCE);
    if !(0.0..=1.0).contains(&min_confidence) {
        return Err(OpError::invalid(
            "/min_confidence",
            Text::new("min_confidence is between 0 and 1; leave it out for {default}.")
                .with("default", DEFAULT_MIN_CONFIDENCE),
        ));
    }
    let bytes = input::statement_bytes(input.content, input.content_base64)?;
    let read = ctx.pdf.read(&bytes, ctx.household.currency).map_err(|err| {
        OpError::invalid(
            "/content",
            Text::new("The statement cannot be read: {reason}").with("reason", err.to_string()),
        )
    })?;
    let found = statement::recurring::detect(&read.transactions);
    let subscriptions = ctx.visible_subscriptions()?;
    let categories = store::organise::list_categories(ctx.db, ctx.household_id(), Some(ctx.me()))
        .or_internal()?;
    let shown = |minor: i64, currency: Currency| amount(minor, currency);
    let candidates = found
        .into_iter()
        .map(|candidate| {
            let existing = subscriptions
                .iter()
                .find(|s| {
                    statement::merchant::key(&s.name) == candidate.merchant
                        && s.currency == candidate.currency
                })
                .map(|s| Ref { id: s.id, name: s.name.clone() });
            let category = candidate.category.and_then(|name| {
                categories
                    .iter()
                    .find(|c| c.name == name)
                    .map(|c| Ref { id: c.id, name: c.name.clone() })
            });
            let proposed =
                candidate.active && existing.is_none() && candidate.confidence >= min_confidence;
            RecurringCandidate {
                name: candidate.name,
                merchant: candidate.merchant,
                category,
                amount: shown(candidate.amount_minor, candidate.currency),
                cycle: candidate.cycle,
                next_expected_on: candidate.next_expected.into(),
                confidence: candidate.confidence,
                active: candidate.active,
                proposed,
                charges: candidate
                    .charges
                    .iter()
                    .map(|c| ChargeSeen {
                        date: c.date.into(),
                        amount: shown(c.amount_minor, candidate.currency),
                    })
                    .collect(),
                price_changes: candidate
                    .price_changes
                    .iter()
                    .map(|p| PriceChangeSeen {
                        on: p.on.into(),
                        from: shown(p.from_minor, candidate.currency),
                        to: shown(p.to_minor, candidate.currency),
                    })
                    .collect(),
                amount_varies: candidate.amount_varies,
                existing,
            }
        })
        .collect();
    Ok(ParsedStatement {
        transaction_count: read.transactions.len() as u64,
        transactions: read
            .transactions
            .iter()
            .take(SHOWN_TRANSACTIONS)
            .map(|t| StatementTransaction {
                line: t.line as u64,
                date: t.date.into(),
                amount: shown(t.amount_minor, t.currency),
                description: t.description.clone(),
            })
            .collect(),
        problems: read
            .problems
            .into_iter()
            .map(|p| StatementProblem { line: p.line as u64, message: p.message })
            .collect(),
        notes: read.notes,
        candidates,
    })
}

pub(crate) fn import_subscriptions(
    ctx: &mut Ctx<'_>,
    input: ImportSubscriptionsInput,
) -> Result<ImportResult, OpError> {
    if input.items.is_empty() || input.items.len() > ops::limits::IMPORT_ITEMS {
        return Err(OpError::invalid(
            "/items",
            Text::new("Give 1 to {max} items, from parse_statement's candidates.")
                .with("max", ops::limits::IMPORT_ITEMS),
        ));
    }
    // What exists, by merchant and currency; items created here join it, so the same item
    // twice in one import is created once.
    let mut existing: Vec<(String, Currency, Ref)> = ctx
        .visible_subscriptions()?
        .iter()
        .map(|s| {
            (statement::merchant::key(&s.name), s.currency, Ref { id: s.id, name: s.name.clone() })
        })
        .collect();
    let mut result = ImportResult { created: Vec::new(), skipped: Vec::new() };
    for (index, item) in input.items.into_iter().enumerate() {
        let at = |field: &str| format!("/items/{index}/{field}");
        let currency = match &item.currency {
            Some(code) => code.currency(),
            None => ctx.household.currency,
        };
        let key = statement::merchant::key(&item.name);
        if let Some((_, _, found)) = existing.iter().find(|(k, c, _)| *k == key && *c == currency) {
            result.skipped.push(SkippedItem {
                name: item.name,
                reason: "A subscription for this merchant exists already.".into(),
                existing: Some(found.clone()),
            });
            continue;
        }
        if item.charges.len() > ops::limits::IMPORT_CHARGES {
            return Err(OpError::invalid(
                at("charges"),
                Text::new("At most {max} charges per subscription; give the most recent ones.")
                    .with("max", ops::limits::IMPORT_CHARGES),
            ));
        }
        let mut charges = Vec::with_capacity(item.charges.len());
        for (n, charge) in item.charges.iter().enumerate() {
            let date = charge.date.date();
            let minor = input::minor_units(
                &at(&format!("charges/{n}/amount")),
                charge.amount.money(currency),
            )?;
            charges.push((date, minor));
        }
        charges.sort_unstable();
        let Some(&(first, first_price)) = charges.first() else {
            return Err(OpError::invalid(
                at("charges"),
                Text::new(
                    "Give the charges the statement showed (at least one); parse_statement lists them with each candidate.",
                ),
            ));
        };
        // The price history: the first charge's amount, then every change, ending at the price
        // the person confirmed. A bill whose amount follows use has no price history: its
        // amount is the estimate the person confirmed, from the first charge on.
        let current = input::minor_units(&at("amount"), item.amount.money(currency))?;
        let amounts: Vec<i64> = charges.iter().map(|&(_, minor)| minor).collect();
        let varies = statement::recurring::amounts_follow_use(&amounts);
        let mut prices: Vec<(jiff::civil::Date, i64)> = Vec::new();
        let mut last = first_price;
        for &(on, minor) in charges[1..].iter().filter(|_| !varies) {
            if minor != last {
                prices.push((on, minor));
                last = minor;
            }
        }
        if !varies && current != last {
            let on = charges.last().map_or(first, |&(on, _)| on);
            prices.retain(|(date, _)| *date != on);
            prices.push((on, current));
        }
        let (amount, notes) = if varies {
            (
                current,
                "Imported from a bank statement. The amount follows use: it is an estimate from the last charges.",
            )
        } else {
            (first_price, "Imported from a bank statement.")
        };
        let created = subscription_rules::create(
            ctx,
            CreateSubscriptionInput {
                name: item.name,
                amount: ops::common::UnsignedAmount::size_of(
                    domain::Money::new(amount, currency).into(),
                ),
                currency: Some(currency.into()),
                cycle: item.cycle,
                next_charge_on: Some(first.into()),
                trial_ends_on: None,
                ends_on: None,
                url: None,
                notes: Some(notes.to_owned()),
                category_id: item.category_id,
                payment_method_id: item.payment_method_id,
                tags: Vec::new(),
                owner_id: None,
                visibility: None,
            },
            &prices,
        )
        .map_err(|err| match err {
            OpError::InvalidInput { pointer, message } => {
                OpError::InvalidInput { pointer: format!("/items/{index}{pointer}"), message }
            }
            other => other,
        })?;
        let reference = Ref { id: created.id, name: created.name.clone() };
        existing.push((key, currency, reference.clone()));
        result.created.push(reference);
    }
    Ok(result)
}
