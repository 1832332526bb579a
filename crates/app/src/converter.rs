//! Converting amounts to the household's main currency at its exchange rates, for reports.

use std::collections::BTreeMap;

use domain::Currency;
use ops::OpError;

use crate::{ctx::Ctx, transactions::StoreExt};

/// Converts amounts to the household's main currency with its rates; None without a rate.
pub(crate) struct Converter {
    pub(crate) main: Currency,
    rates: BTreeMap<Currency, i64>,
}

impl Converter {
    pub(crate) fn load(ctx: &Ctx<'_>) -> Result<Self, OpError> {
        let rates = store::households::exchange_rates(ctx.db, ctx.household_id()).or_internal()?;
        Ok(Self { main: ctx.household.currency, rates: rates.into_iter().collect() })
    }

    pub(crate) fn to_main(&self, minor: i64, currency: Currency) -> Option<i64> {
        if currency == self.main {
            return Some(minor);
        }
        let rate = *self.rates.get(&currency)?;
        domain::money::convert(minor, currency, self.main, rate)
    }
}
