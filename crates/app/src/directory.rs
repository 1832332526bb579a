//! What `ops::resolve` reads while an input is deserialised: the names the caller can see (for
//! a name where an id is expected), the payees of their latest transactions (for a name that
//! is one), the subscriptions charging on a day (for a date where a subscription is expected)
//! and today's date in the household's time zone (for "tomorrow"). Matching and messages live
//! in `ops::resolve` and `domain::names`.

use std::sync::Arc;

use domain::{Date, entities::EntityKind};
use ops::{
    OpError,
    resolve::{Directory, Payee},
};
use store::Store;

use crate::{series::SeriesParts, transactions};

/// One caller's view, for one call. Names are read on a read connection of their own, only
/// when the input holds a name.
pub(crate) struct CallerDirectory {
    pub(crate) store: Arc<Store>,
    pub(crate) household_id: i64,
    pub(crate) viewer: i64,
    pub(crate) today: Date,
    /// The op reading the input changes something.
    pub(crate) for_a_change: bool,
}

impl Directory for CallerDirectory {
    fn today(&self) -> Date {
        self.today
    }

    fn visible(&self, kind: EntityKind) -> Result<Vec<(i64, String)>, OpError> {
        transactions::read(&self.store, |db| {
            store::names::visible(db, self.household_id, self.viewer, kind)
                .map_err(transactions::internal)
        })
    }

    fn for_a_change(&self) -> bool {
        self.for_a_change
    }

    fn charging_on(&self, date: Date) -> Result<Vec<(i64, String)>, OpError> {
        let rows = transactions::read(&self.store, |db| {
            store::subscriptions::list(db, self.household_id, Some(self.viewer))
                .map_err(transactions::internal)
        })?;
        Ok(rows
            .iter()
            .filter(|row| {
                let parts = SeriesParts::of(row);
                !parts.series(row).occurrences_between(date, date).is_empty()
            })
            .map(|row| (row.id, row.name.clone()))
            .collect())
    }

    fn payees(&self) -> Result<Vec<Payee>, OpError> {
        transactions::read(&self.store, |db| {
            let limit = ops::limits::PAYEES_READ;
            let payees = store::names::recent_payees(db, self.household_id, self.viewer, limit)
                .map_err(transactions::internal)?;
            Ok(payees
                .into_iter()
                .map(|(name, transaction_ids)| Payee { name, transaction_ids })
                .collect())
        })
    }
}
