//! Budget periods: the stretch of days a budget's period covers, worked out directly from the
//! budget's definition and a day. Nothing walks day by day looking for a start, so no start
//! day, valid or doctored, can make period generation loop. What a budget tracks and how
//! its spending is added up live in `app` and `store`.

use jiff::civil::Date;

use crate::{
    cycle::{epoch_day, from_epoch_day},
    named_enum,
};

named_enum! {
    /// How long one period of a budget is.
    pub enum BudgetPeriod("budget period") {
        /// Seven days from a weekday.
        Weekly => "weekly" | "week",
        /// Fourteen days from a weekday.
        Fortnightly => "fortnightly" | "biweekly" | "every_two_weeks",
        /// A month from a day of the month.
        Monthly => "monthly" | "month",
        /// A year from the first of a month.
        Yearly => "yearly" | "annual" | "year",
    }
}

impl BudgetPeriod {
    /// The start days this period accepts, and what the number means.
    pub fn start_days(self) -> (u8, u8, &'static str) {
        match self {
            Self::Weekly | Self::Fortnightly => (1, 7, "a weekday, 1 Monday to 7 Sunday"),
            Self::Monthly => (1, 31, "a day of the month; past a month's end means its last day"),
            Self::Yearly => (1, 12, "the month the year starts, 1 January to 12 December"),
        }
    }
}

/// A start day outside what the period accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("start_day {day} does not fit a {period} budget: it takes {meaning} ({min} to {max})", period = period.as_str(), min = period.start_days().0, max = period.start_days().1, meaning = period.start_days().2)]
pub struct StartDayError {
    pub period: BudgetPeriod,
    pub day: i64,
}

/// When a budget's periods begin: the period length, its start day, and (for fortnightly
/// budgets) a day in its first period, which fixes which weeks pair up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeriodRule {
    period: BudgetPeriod,
    start_day: u8,
    anchor: Date,
}

/// One period: its first and last day, both included.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Period {
    pub first: Date,
    pub last: Date,
}

impl PeriodRule {
    /// A rule from what a person or a model asked for; a start day out of range is refused.
    pub fn new(period: BudgetPeriod, start_day: i64, anchor: Date) -> Result<Self, StartDayError> {
        let (min, max, _) = period.start_days();
        if !(i64::from(min)..=i64::from(max)).contains(&start_day) {
            return Err(StartDayError { period, day: start_day });
        }
        Ok(Self { period, start_day: start_day as u8, anchor })
    }

    /// A rule from a stored row, whatever it holds: a start day out of range is brought into
    /// it (weekdays modulo 7, months modulo 12, days of the month to 1..=31), so a row written
    /// by an older version or by hand still gives periods instead of stopping the job.
    pub fn from_stored(period: BudgetPeriod, start_day: i64, anchor: Date) -> Self {
        let (min, max, _) = period.start_days();
        let start_day = match period {
            BudgetPeriod::Monthly => start_day.clamp(i64::from(min), i64::from(max)),
            _ => {
                let max = i64::from(max);
                (start_day.rem_euclid(max) + max - 1) % max + 1
            }
        };
        Self { period, start_day: start_day as u8, anchor }
    }

    pub fn period(&self) -> BudgetPeriod {
        self.period
    }

    pub fn start_day(&self) -> u8 {
        self.start_day
    }

    /// The period `day` falls in. `None` only at the ends of the calendar jiff can represent.
    pub fn containing(&self, day: Date) -> Option<Period> {
        let first = self.first_day_of(day)?;
        let last = from_epoch_day(epoch_day(self.first_day_of_next(first)?) - 1)?;
        Some(Period { first, last })
    }

    /// The period after `period`.
    pub fn after(&self, period: Period) -> Option<Period> {
        self.containing(period.last.tomorrow().ok()?)
    }

    /// The first day of the period `day` falls in.
    fn first_day_of(&self, day: Date) -> Option<Date> {
        match self.period {
            BudgetPeriod::Weekly => week_start(day, self.start_day),
            BudgetPeriod::Fortnightly => {
                let origin = week_start(self.anchor, self.start_day)?;
                let this_week = week_start(day, self.start_day)?;
                let weeks = (epoch_day(this_week) - epoch_day(origin)) / 7;
                let back = if weeks.rem_euclid(2) == 0 { 0 } else { 7 };
                from_epoch_day(epoch_day(this_week) - back)
            }
            BudgetPeriod::Monthly => {
                let this_month = month_day(day.year(), day.month(), self.start_day)?;
                if day >= this_month {
                    Some(this_month)
                } else {
                    let previous = day.first_of_month().yesterday().ok()?;
                    month_day(previous.year(), previous.month(), self.start_day)
                }
            }
            BudgetPeriod::Yearly => {
                let this_year = Date::new(day.year(), self.start_day as i8, 1).ok()?;
                if day >= this_year {
                    Some(this_year)
                } else {
                    Date::new(day.year() - 1, self.start_day as i8, 1).ok()
                }
            }
        }
    }

    /// The first day of the period after the one starting on `first`.
    fn first_day_of_next(&self, first: Date) -> Option<Date> {
        match self.period {
            BudgetPeriod::Weekly => from_epoch_day(epoch_day(first) + 7),
            BudgetPeriod::Fortnightly => from_epoch_day(epoch_day(first) + 14),
            BudgetPeriod::Monthly => {
                let (year, month) = if first.month() == 12 {
                    (first.year() + 1, 1)
                } else {
                    (first.year(), first.month() + 1)
                };
                month_day(year, month, self.start_day)
            }
            BudgetPeriod::Yearly => Date::new(first.year() + 1, first.month(), 1).ok(),
        }
    }
}

/// The last `weekday` (1 Monday to 7 Sunday) on or before `day`.
fn week_start(day: Date, weekday: u8) -> Option<Date> {
    let back = (i64::from(day.weekday().to_monday_one_offset()) - i64::from(weekday)).rem_euclid(7);
    from_epoch_day(epoch_day(day) - back)
}

/// The given day of a month, or the month's last day when it is shorter.
fn month_day(year: i16, month: i8, day: u8) -> Option<Date> {
    let first = Date::new(year, month, 1).ok()?;
    Date::new(year, month, (day as i8).min(first.days_in_month())).ok()
}

#[cfg(test)]
mod tests;
