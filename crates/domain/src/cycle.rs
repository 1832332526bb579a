//! Billing cycles: every N days, weeks, months or years, and their date arithmetic.
//!
//! The n-th date of a cycle is always computed from the anchor (never by repeated
//! stepping), so a monthly cycle anchored on 31 January gives 28/29 February, 31 March and
//! 30 April: it never drifts.

use jiff::civil::Date;

use crate::money::div_round;

/// The largest number of units in one cycle.
pub const MAX_EVERY: i64 = 366;

crate::named_enum! {
    /// The unit a cycle counts in.
    pub enum CycleUnit("cycle unit") {
        /// Calendar days.
        Day => "day" | "days",
        /// Seven days.
        Week => "week" | "weeks",
        /// Calendar months (the day of month clamps to the month's end).
        Month => "month" | "months",
        /// Calendar years (29 February clamps to 28 February in common years).
        Year => "year" | "years",
    }
}

crate::named_enum! {
    /// The named cycles, from shortest to longest.
    pub enum CyclePreset("cycle preset") {
        /// Every week.
        Weekly => "weekly",
        /// Every two weeks.
        EveryTwoWeeks => "every_two_weeks" | "biweekly" | "fortnightly",
        /// Every month.
        Monthly => "monthly",
        /// Every two months.
        EveryTwoMonths => "every_two_months" | "bimonthly",
        /// Every three months.
        Quarterly => "quarterly",
        /// Every six months.
        EverySixMonths => "every_six_months" | "semiannually" | "half_yearly",
        /// Every year.
        Yearly => "yearly" | "annually" | "annual",
    }
}

impl CyclePreset {
    /// The cycle this preset names.
    pub fn cycle(self) -> Cycle {
        let (every, unit) = match self {
            CyclePreset::Weekly => (1, CycleUnit::Week),
            CyclePreset::EveryTwoWeeks => (2, CycleUnit::Week),
            CyclePreset::Monthly => (1, CycleUnit::Month),
            CyclePreset::EveryTwoMonths => (2, CycleUnit::Month),
            CyclePreset::Quarterly => (3, CycleUnit::Month),
            CyclePreset::EverySixMonths => (6, CycleUnit::Month),
            CyclePreset::Yearly => (1, CycleUnit::Year),
        };
        Cycle { every, unit }
    }
}

/// Why a cycle was refused.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
pub enum CycleError {
    /// `every` is outside 1..=366.
    #[error("a cycle must repeat every 1 to 366 units; got {every}")]
    OutOfRange {
        /// The refused count.
        every: i64,
    },
}

/// A billing cycle: every `every` (1 to 366) `unit`s.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Cycle {
    every: u16,
    unit: CycleUnit,
}

impl Cycle {
    /// Monthly, the most common cycle.
    pub const MONTHLY: Cycle = Cycle { every: 1, unit: CycleUnit::Month };
    /// Yearly.
    pub const YEARLY: Cycle = Cycle { every: 1, unit: CycleUnit::Year };
    /// Weekly.
    pub const WEEKLY: Cycle = Cycle { every: 1, unit: CycleUnit::Week };

    /// A cycle of `every` units; `every` must be 1 to 366.
    pub fn new(every: i64, unit: CycleUnit) -> Result<Cycle, CycleError> {
        match u16::try_from(every) {
            Ok(e) if (1..=MAX_EVERY).contains(&every) => Ok(Cycle { every: e, unit }),
            _ => Err(CycleError::OutOfRange { every }),
        }
    }

    /// How many units one cycle spans.
    pub fn every(&self) -> u16 {
        self.every
    }

    /// The unit.
    pub fn unit(&self) -> CycleUnit {
        self.unit
    }

    /// A named preset, by name or alias ("biweekly", "annually"), in any case; spaces and
    /// hyphens count as underscores.
    pub fn preset(name: &str) -> Option<Cycle> {
        CyclePreset::parse(name).map(CyclePreset::cycle)
    }

    /// The preset this cycle is, if it is one.
    pub fn as_preset(&self) -> Option<CyclePreset> {
        CyclePreset::ALL.iter().copied().find(|preset| preset.cycle() == *self)
    }

    /// The `n`-th date of the cycle: `anchor + n × cycle`, computed from the anchor.
    ///
    /// Months and years clamp the day to the month's end (31 January monthly gives 28 or 29
    /// February, then 31 March). `None` if the date would be after year 9999.
    pub fn nth(&self, anchor: Date, n: u32) -> Option<Date> {
        let steps = i64::from(n) * i64::from(self.every);
        match self.unit {
            CycleUnit::Day => from_epoch_day(epoch_day(anchor).checked_add(steps)?),
            CycleUnit::Week => from_epoch_day(epoch_day(anchor).checked_add(steps * 7)?),
            CycleUnit::Month => {
                let months = i64::from(anchor.year()) * 12 + i64::from(anchor.month()) - 1 + steps;
                clamped_date(months.div_euclid(12), months.rem_euclid(12) + 1, anchor.day())
            }
            CycleUnit::Year => clamped_date(
                i64::from(anchor.year()) + steps,
                i64::from(anchor.month()),
                anchor.day(),
            ),
        }
    }

    /// `(numerator, denominator)` of cycles per year: a day is 1/365.25 of a year.
    fn per_year(&self) -> (i128, i128) {
        let every = i128::from(self.every);
        match self.unit {
            CycleUnit::Day => (36_525, 100 * every),
            CycleUnit::Week => (36_525, 700 * every),
            CycleUnit::Month => (12, every),
            CycleUnit::Year => (1, every),
        }
    }

    /// What `minor` per cycle comes to per year, rounded half away from zero
    /// (12.99 monthly is 155.88 yearly; 10.00 weekly is 521.79).
    pub fn yearly_minor(&self, minor: i64) -> i64 {
        let (num, den) = self.per_year();
        saturate(div_round(i128::from(minor) * num, den))
    }

    /// What `minor` per cycle comes to per month (a twelfth of the exact yearly amount),
    /// rounded half away from zero.
    pub fn monthly_minor(&self, minor: i64) -> i64 {
        let (num, den) = self.per_year();
        saturate(div_round(i128::from(minor) * num, den * 12))
    }

    /// An index `n` whose date is near `days` days after the anchor (exact average lengths,
    /// so the error stays within a few cycles however far the date is).
    pub(crate) fn estimate_index(&self, days: i64) -> u32 {
        if days <= 0 {
            return 0;
        }
        let (num, den) = self.per_year();
        // n ≈ days × cycles-per-year / 365.25
        let n = i128::from(days) * num * 100 / (den * 36_525);
        u32::try_from(n).unwrap_or(u32::MAX)
    }
}

fn saturate(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

/// A date in `year`/`month` with the day clamped to the month's length; `None` past 9999.
fn clamped_date(year: i64, month: i64, day: i8) -> Option<Date> {
    if !(-9999..=9999).contains(&year) {
        return None;
    }
    let year = i16::try_from(year).ok()?;
    let month = i8::try_from(month).ok()?;
    let first = Date::new(year, month, 1).ok()?;
    Date::new(year, month, day.min(first.days_in_month())).ok()
}

/// Days since 1970-01-01 (negative before).
pub(crate) fn epoch_day(date: Date) -> i64 {
    // Howard Hinnant's days_from_civil.
    let (y, m, d) = (i64::from(date.year()), i64::from(date.month()), i64::from(date.day()));
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date `days` days after 1970-01-01; `None` outside jiff's range (years ±9999).
pub(crate) fn from_epoch_day(days: i64) -> Option<Date> {
    // Howard Hinnant's civil_from_days.
    let z = days.checked_add(719_468)?;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    if !(-9999..=9999).contains(&y) {
        return None;
    }
    Date::new(i16::try_from(y).ok()?, i8::try_from(m).ok()?, i8::try_from(d).ok()?).ok()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use jiff::civil::date;

    /// A monthly charge from 31 January 2025: the last day of each shorter month and the 31st
    /// again after it, never drifting to the 28th.
    pub(crate) const MONTHLY_FROM_31_JANUARY_2025: [Date; 5] = [
        date(2025, 1, 31),
        date(2025, 2, 28),
        date(2025, 3, 31),
        date(2025, 4, 30),
        date(2025, 5, 31),
    ];

    fn c(every: i64, unit: CycleUnit) -> Cycle {
        Cycle::new(every, unit).unwrap()
    }

    #[test]
    fn units() {
        assert_eq!(CycleUnit::parse("Months"), Some(CycleUnit::Month));
        assert_eq!(CycleUnit::parse(" DAY "), Some(CycleUnit::Day));
        assert_eq!(CycleUnit::parse("weeks"), Some(CycleUnit::Week));
        assert_eq!(CycleUnit::parse("year"), Some(CycleUnit::Year));
        assert_eq!(CycleUnit::parse("fortnight"), None);
        assert_eq!(CycleUnit::parse("s"), None);
        assert_eq!(CycleUnit::parse("monthss"), None);
        for u in CycleUnit::ALL {
            assert_eq!(CycleUnit::parse(u.as_str()), Some(*u));
        }
    }

    #[test]
    fn new_checks_range() {
        assert!(Cycle::new(1, CycleUnit::Day).is_ok());
        assert!(Cycle::new(366, CycleUnit::Day).is_ok());
        let err = Cycle::new(0, CycleUnit::Month).unwrap_err();
        assert_eq!(err, CycleError::OutOfRange { every: 0 });
        assert_eq!(err.to_string(), "a cycle must repeat every 1 to 366 units; got 0");
        assert!(Cycle::new(367, CycleUnit::Month).is_err());
        assert!(Cycle::new(-1, CycleUnit::Month).is_err());
        assert!(Cycle::new(70_000, CycleUnit::Month).is_err());
    }

    #[test]
    fn presets() {
        for preset in CyclePreset::ALL {
            let cycle = Cycle::preset(preset.as_str()).unwrap();
            assert_eq!(cycle.as_preset(), Some(*preset));
        }
        assert_eq!(Cycle::preset("biweekly"), Some(c(2, CycleUnit::Week)));
        assert_eq!(Cycle::preset("Bimonthly"), Some(c(2, CycleUnit::Month)));
        assert_eq!(Cycle::preset("quarterly"), Some(c(3, CycleUnit::Month)));
        assert_eq!(Cycle::preset("semiannually"), Some(c(6, CycleUnit::Month)));
        assert_eq!(Cycle::preset("half-yearly"), Some(c(6, CycleUnit::Month)));
        assert_eq!(Cycle::preset("annually"), Some(Cycle::YEARLY));
        assert_eq!(Cycle::preset("annual"), Some(Cycle::YEARLY));
        assert_eq!(Cycle::preset("every two weeks"), Some(c(2, CycleUnit::Week)));
        assert_eq!(Cycle::preset("fortnightly"), Some(c(2, CycleUnit::Week)));
        assert_eq!(Cycle::preset("hourly"), None);
        assert_eq!(c(12, CycleUnit::Month).as_preset(), None);
    }

    #[test]
    fn describe() {
        assert_eq!(Cycle::MONTHLY.describe(), "monthly");
        assert_eq!(c(3, CycleUnit::Week).describe(), "every 3 weeks");
        assert_eq!(c(10, CycleUnit::Day).describe(), "every 10 days");
        assert_eq!(c(1, CycleUnit::Day).describe(), "daily");
        assert_eq!(c(3, CycleUnit::Month).describe(), "quarterly");
        assert_eq!(c(2, CycleUnit::Year).to_string(), "every 2 years");
        for cycle in [c(1, CycleUnit::Month), c(3, CycleUnit::Month), c(2, CycleUnit::Week)] {
            assert_eq!(Cycle::from_description(&cycle.describe()), Some(cycle));
        }
        assert_eq!(Cycle::from_description("every 02 weeks"), None);
        assert_eq!(Cycle::from_description("fortnightly"), None);
    }

    #[test]
    fn month_end_clamps_without_drift() {
        let anchor = date(2025, 1, 31);
        let m = Cycle::MONTHLY;
        let got: Vec<Date> = (0..5).map(|n| m.nth(anchor, n).unwrap()).collect();
        assert_eq!(got, MONTHLY_FROM_31_JANUARY_2025);
        assert_eq!(m.nth(date(2024, 1, 31), 1), Some(date(2024, 2, 29)));
        assert_eq!(m.nth(anchor, 12), Some(date(2026, 1, 31)));
    }

    #[test]
    fn leap_day_yearly() {
        let anchor = date(2024, 2, 29);
        let y = Cycle::YEARLY;
        assert_eq!(y.nth(anchor, 1), Some(date(2025, 2, 28)));
        assert_eq!(y.nth(anchor, 3), Some(date(2027, 2, 28)));
        assert_eq!(y.nth(anchor, 4), Some(date(2028, 2, 29)));
        assert_eq!(y.nth(anchor, 76), Some(date(2100, 2, 28)));
        assert_eq!(c(12, CycleUnit::Month).nth(anchor, 4), Some(date(2028, 2, 29)));
    }

    #[test]
    fn quarterly_and_days() {
        let q = Cycle::preset("quarterly").unwrap();
        let anchor = date(2025, 11, 30);
        assert_eq!(q.nth(anchor, 1), Some(date(2026, 2, 28)));
        assert_eq!(q.nth(anchor, 2), Some(date(2026, 5, 30)));
        assert_eq!(q.nth(anchor, 4), Some(date(2026, 11, 30)));
        assert_eq!(Cycle::WEEKLY.nth(date(2025, 12, 29), 1), Some(date(2026, 1, 5)));
        assert_eq!(c(10, CycleUnit::Day).nth(date(2024, 2, 25), 1), Some(date(2024, 3, 6)));
    }

    #[test]
    fn overflow_is_none() {
        assert_eq!(Cycle::YEARLY.nth(date(9999, 1, 1), 1), None);
        assert_eq!(Cycle::MONTHLY.nth(date(9999, 12, 1), 1), None);
        assert_eq!(Cycle::MONTHLY.nth(date(9999, 11, 30), 1), Some(date(9999, 12, 30)));
        assert_eq!(c(1, CycleUnit::Day).nth(date(9999, 12, 31), 1), None);
        assert_eq!(c(366, CycleUnit::Year).nth(date(2000, 1, 1), u32::MAX), None);
        assert_eq!(c(366, CycleUnit::Day).nth(date(2000, 1, 1), u32::MAX), None);
    }

    #[test]
    fn epoch_days_roundtrip() {
        assert_eq!(epoch_day(date(1970, 1, 1)), 0);
        assert_eq!(epoch_day(date(2000, 3, 1)), 11_017);
        for d in [
            date(-9999, 1, 1),
            date(1, 1, 1),
            date(1600, 2, 29),
            date(9999, 12, 31),
            date(2024, 12, 31),
        ] {
            assert_eq!(from_epoch_day(epoch_day(d)), Some(d));
            let jiff_days = d.since(date(1970, 1, 1)).unwrap().get_days();
            assert_eq!(epoch_day(d), i64::from(jiff_days));
        }
        assert_eq!(from_epoch_day(epoch_day(date(9999, 12, 31)) + 1), None);
        assert_eq!(from_epoch_day(i64::MAX), None);
    }

    #[test]
    fn equivalents() {
        assert_eq!(Cycle::MONTHLY.yearly_minor(1299), 15_588);
        assert_eq!(Cycle::MONTHLY.monthly_minor(1299), 1299);
        assert_eq!(Cycle::WEEKLY.yearly_minor(1000), 52_179);
        // 52178.57 / 12 = 4348.21, computed from the exact yearly amount.
        assert_eq!(Cycle::WEEKLY.monthly_minor(1000), 4348);
        assert_eq!(Cycle::YEARLY.monthly_minor(11_999), 1000); // 999.92
        assert_eq!(Cycle::YEARLY.yearly_minor(11_999), 11_999);
        assert_eq!(c(2, CycleUnit::Year).yearly_minor(3), 2); // 1.5 rounds away from zero
        assert_eq!(c(2, CycleUnit::Year).yearly_minor(-3), -2);
        assert_eq!(c(1, CycleUnit::Day).yearly_minor(100), 36_525);
        assert_eq!(Cycle::preset("quarterly").unwrap().yearly_minor(1000), 4000);
        assert_eq!(Cycle::preset("quarterly").unwrap().monthly_minor(1000), 333);
        assert_eq!(c(1, CycleUnit::Day).yearly_minor(i64::MAX), i64::MAX);
    }
}
