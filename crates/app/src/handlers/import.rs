//! `parse_statement`: a bank export read by the `statement` crate, its recurring charges
//! proposed as subscriptions, each matched with the household's categories and with the
//! subscriptions it already has (so a second import proposes no duplicates).

use domain::{Currency, Text};
use ops::{
    OpError,
    common::Ref,
    import::{
        ChargeSeen, MAX_STATEMENT_BYTES, ParseStatementInput, ParsedStatement, PriceChangeSeen,
        RecurringCandidate, StatementProblem, StatementTransaction,
    },
};

use crate::{
    ctx::{Ctx, invalid},
    invoke::StoreExt,
    views::amount,
};

/// How many transactions the result shows, for a look; the candidates carry their own.
const SHOWN_TRANSACTIONS: usize = 100;

fn bytes(input: ParseStatementInput) -> Result<Vec<u8>, OpError> {
    let bytes = match (input.content, input.content_base64) {
        (Some(text), None) => text.into_bytes(),
        (None, Some(encoded)) => statement::decode_base64(&encoded).ok_or_else(|| {
            invalid(
                "/content_base64",
                Text::new("This is not base64. Send the file's bytes base64-encoded, or its text as content."),
            )
        })?,
        (Some(_), Some(_)) => {
            return Err(invalid("/content", Text::new("Give content or content_base64, not both.")));
        }
        (None, None) => {
            return Err(invalid(
                "/content",
                Text::new("Give the statement's text as content, or the file's bytes as content_base64."),
            ));
        }
    };
    if bytes.len() > MAX_STATEMENT_BYTES {
        return Err(invalid(
            "/content",
            Text::new("The statement is {size} bytes; statements up to {max} bytes are read. Export a shorter period.")
                .with("size", bytes.len())
                .with("max", MAX_STATEMENT_BYTES),
        ));
    }
    Ok(bytes)
}

pub(crate) fn parse_statement(
    ctx: &mut Ctx<'_>,
    input: ParseStatementInput,
) -> Result<ParsedStatement, OpError> {
    let bytes = bytes(input)?;
    let read = statement::read(&bytes, ctx.household.currency).map_err(|err| {
        invalid(
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
            RecurringCandidate {
                name: candidate.name,
                merchant: candidate.merchant,
                category,
                amount: shown(candidate.amount_minor, candidate.currency),
                cycle: candidate.cycle.to_owned(),
                next_expected_on: candidate.next_expected.to_string(),
                confidence: candidate.confidence,
                active: candidate.active,
                charges: candidate
                    .charges
                    .iter()
                    .map(|c| ChargeSeen {
                        date: c.date.to_string(),
                        amount: shown(c.amount_minor, candidate.currency),
                    })
                    .collect(),
                price_changes: candidate
                    .price_changes
                    .iter()
                    .map(|p| PriceChangeSeen {
                        on: p.on.to_string(),
                        from: shown(p.from_minor, candidate.currency),
                        to: shown(p.to_minor, candidate.currency),
                    })
                    .collect(),
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
                date: t.date.to_string(),
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
