//! A subscription row's series of charges: its pauses and prices owned beside the row, so a
//! `domain::Series` can borrow them. Below every module that projects charges (views, the
//! directory's charges on a day, reminders, reports).

use domain::{PauseSpan, PricePoint, Series};
use store::subscriptions::SubscriptionRow;

/// Owned pauses and prices of a subscription, to build its `Series`.
pub(crate) struct SeriesParts {
    pauses: Vec<PauseSpan>,
    prices: Vec<PricePoint>,
}

impl SeriesParts {
    pub(crate) fn of(row: &SubscriptionRow) -> Self {
        Self {
            pauses: row.pauses.iter().map(|p| PauseSpan { from: p.from, until: p.until }).collect(),
            prices: row
                .prices
                .iter()
                .map(|&(effective_on, minor)| PricePoint { effective_on, minor })
                .collect(),
        }
    }

    pub(crate) fn series<'a>(&'a self, row: &SubscriptionRow) -> Series<'a> {
        Series {
            anchor: row.anchor_on,
            cycle: row.cycle,
            end_on: row.ends_on,
            pauses: &self.pauses,
            prices: &self.prices,
        }
    }
}
