//! The charge series of a subscription: which dates money leaves and how much.
//!
//! Pure and deterministic. The n-th charge falls on `anchor + n × cycle` (see
//! [`Cycle::nth`]); charges inside a pause span or after the end date are dropped; a price
//! change applies from the first charge on or after its effective date. Far ranges are
//! found by estimating the first index from the day distance, never by walking from n = 0.

use jiff::civil::Date;

use crate::cycle::{Cycle, epoch_day};

/// How many charges [`Series::next_on_or_after`] looks at before giving up.
const SEARCH_LIMIT: usize = 2000;

/// A pause: no charge on dates in `from..until`.
///
/// `from` is inclusive; `until` is the resume date (exclusive); `None` means still paused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PauseSpan {
    /// The first paused date.
    pub from: Date,
    /// The resume date (charges on it happen), or `None` while paused indefinitely.
    pub until: Option<Date>,
}

impl PauseSpan {
    /// Whether `date` falls inside the pause.
    pub fn contains(&self, date: Date) -> bool {
        self.from <= date && self.until.is_none_or(|until| date < until)
    }
}

/// A price taking effect on a date, in the subscription's minor units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PricePoint {
    /// The first date the price applies to.
    pub effective_on: Date,
    /// The amount per charge in minor units.
    pub minor: i64,
}

/// One charge of a series: its index `n`, its date and its amount in minor units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Occurrence {
    /// `n` in `anchor + n × cycle`.
    pub index: u32,
    /// The charge date.
    pub date: Date,
    /// The amount in minor units.
    pub minor: i64,
}

/// The rule that produces a subscription's charges.
#[derive(Clone, Copy, Debug)]
pub struct Series<'a> {
    /// The date of charge 0.
    pub anchor: Date,
    /// The billing cycle.
    pub cycle: Cycle,
    /// The last date a charge can fall on (a charge on it is kept).
    pub end_on: Option<Date>,
    /// Spans without charges.
    pub pauses: &'a [PauseSpan],
    /// The price history, in any order.
    pub prices: &'a [PricePoint],
}

impl Series<'_> {
    /// The amount of a charge on `date`: the price with the latest `effective_on` on or
    /// before it, else the earliest price; 0 if there are no prices.
    pub fn amount_on(&self, date: Date) -> i64 {
        self.prices
            .iter()
            .filter(|p| p.effective_on <= date)
            .max_by_key(|p| p.effective_on)
            .or_else(|| self.prices.iter().min_by_key(|p| p.effective_on))
            .map_or(0, |p| p.minor)
    }

    /// Whether `date` falls in a pause span.
    pub fn is_paused(&self, date: Date) -> bool {
        self.pauses.iter().any(|p| p.contains(date))
    }

    /// Whether `date` is after the end date.
    fn is_past_end(&self, date: Date) -> bool {
        self.end_on.is_some_and(|end| date > end)
    }

    /// The date of charge `n`, before pauses and the end date are applied.
    pub fn nth(&self, n: u32) -> Option<Date> {
        self.cycle.nth(self.anchor, n)
    }

    fn occurrence(&self, index: u32, date: Date) -> Occurrence {
        Occurrence { index, date, minor: self.amount_on(date) }
    }

    /// The smallest `n` whose date is on or after `date`; `None` if that is past year 9999.
    pub fn first_index_on_or_after(&self, date: Date) -> Option<u32> {
        if date <= self.anchor {
            return Some(0);
        }
        let mut n = self.cycle.estimate_index(epoch_day(date) - epoch_day(self.anchor));
        // Step back while the previous charge is still on or after `date` (or overflows).
        while n > 0 {
            match self.nth(n - 1) {
                Some(d) if d < date => break,
                _ => n -= 1,
            }
        }
        // Step forward until the charge is on or after `date`.
        loop {
            match self.nth(n)? {
                d if d < date => n = n.checked_add(1)?,
                _ => return Some(n),
            }
        }
    }

    /// Every charge with `from <= date <= to`, ascending, skipping paused dates and dates
    /// after the end date, each with its amount. Never before the anchor.
    pub fn occurrences_between(&self, from: Date, to: Date) -> Vec<Occurrence> {
        let mut out = Vec::new();
        let last = match self.end_on {
            Some(end) if end < to => end,
            _ => to,
        };
        if from > last {
            return out;
        }
        let Some(mut n) = self.first_index_on_or_after(from) else {
            return out;
        };
        while let Some(date) = self.nth(n) {
            if date > last {
                break;
            }
            if !self.is_paused(date) {
                out.push(self.occurrence(n, date));
            }
            match n.checked_add(1) {
                Some(next) => n = next,
                None => break,
            }
        }
        out
    }

    /// The first charge on or after `date` that is not paused and not past the end date.
    ///
    /// `None` if the series has ended, is paused indefinitely, or nothing is found within a
    /// bounded search.
    pub fn next_on_or_after(&self, date: Date) -> Option<Occurrence> {
        let n = self.first_index_on_or_after(date)?;
        self.next_from_index(n)
    }

    /// The first unpaused charge with index `n` or later, within the end date.
    fn next_from_index(&self, mut n: u32) -> Option<Occurrence> {
        for _ in 0..SEARCH_LIMIT + self.pauses.len() {
            let date = self.nth(n)?;
            if self.is_past_end(date) {
                return None;
            }
            match self.pauses.iter().find(|p| p.contains(date)) {
                None => return Some(self.occurrence(n, date)),
                // Still paused: nothing ever comes again.
                Some(PauseSpan { until: None, .. }) => return None,
                // Jump to the first charge on or after the resume date.
                Some(PauseSpan { until: Some(until), .. }) => {
                    let next = self.first_index_on_or_after(*until)?;
                    n = next.max(n.checked_add(1)?);
                }
            }
        }
        None
    }

    /// Up to `count` charges on or after `from`, ascending.
    pub fn upcoming(&self, from: Date, count: usize) -> Vec<Occurrence> {
        let mut out = Vec::with_capacity(count.min(SEARCH_LIMIT));
        if count == 0 {
            return out;
        }
        let mut next = self.first_index_on_or_after(from).and_then(|n| self.next_from_index(n));
        while let Some(occurrence) = next {
            out.push(occurrence);
            if out.len() >= count {
                break;
            }
            next = occurrence.index.checked_add(1).and_then(|n| self.next_from_index(n));
        }
        out
    }
}

#[cfg(test)]
mod tests;
