//! Budget period arithmetic: property tests over every period type, start day and day from
//! 1900 to 2200 (month ends, leap years), plus the examples a person would check by hand.

use jiff::civil::{Date, date};
use proptest::prelude::*;

use super::*;
use crate::cycle::{epoch_day, from_epoch_day};

fn any_date() -> impl Strategy<Value = Date> {
    (epoch_day(date(1900, 3, 1))..=epoch_day(date(2200, 10, 31)))
        .prop_map(|day| from_epoch_day(day).unwrap())
}

fn any_period() -> impl Strategy<Value = BudgetPeriod> {
    prop_oneof![
        Just(BudgetPeriod::Weekly),
        Just(BudgetPeriod::Fortnightly),
        Just(BudgetPeriod::Monthly),
        Just(BudgetPeriod::Yearly)
    ]
}

fn any_rule() -> impl Strategy<Value = PeriodRule> {
    (any_period(), 1_i64..=31, any_date()).prop_map(|(period, day, anchor)| {
        let (min, max, _) = period.start_days();
        let day = (day - 1) % i64::from(max - min + 1) + i64::from(min);
        PeriodRule::new(period, day, anchor).unwrap()
    })
}

fn length(period: Period) -> i64 {
    epoch_day(period.last) - epoch_day(period.first) + 1
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn a_day_lies_in_its_period_and_the_period_has_the_right_shape(rule in any_rule(), day in any_date()) {
        let period = rule.containing(day).unwrap();
        prop_assert!(period.first <= day && day <= period.last, "{period:?} {day}");
        prop_assert_eq!(rule.containing(period.first), Some(period));
        prop_assert_eq!(rule.containing(period.last), Some(period));
        let days = length(period);
        match rule.period() {
            BudgetPeriod::Weekly => {
                prop_assert_eq!(days, 7);
                prop_assert_eq!(period.first.weekday().to_monday_one_offset(), rule.start_day() as i8);
            }
            BudgetPeriod::Fortnightly => {
                prop_assert_eq!(days, 14);
                prop_assert_eq!(period.first.weekday().to_monday_one_offset(), rule.start_day() as i8);
                // The anchor's period is one of them: fortnights pair weeks from it.
                let anchored = rule.containing(rule.anchor).unwrap();
                prop_assert_eq!((epoch_day(period.first) - epoch_day(anchored.first)).rem_euclid(14), 0);
            }
            BudgetPeriod::Monthly => {
                prop_assert!((28..=31).contains(&days), "{period:?}");
                let wanted = (rule.start_day() as i8).min(period.first.days_in_month());
                prop_assert_eq!(period.first.day(), wanted);
            }
            BudgetPeriod::Yearly => {
                prop_assert!(days == 365 || days == 366, "{period:?}");
                prop_assert_eq!((period.first.month(), period.first.day()), (rule.start_day() as i8, 1));
            }
        }
    }

    #[test]
    fn every_day_is_counted_in_exactly_one_period(rule in any_rule(), start in any_date(), span in 0_i64..800) {
        // Walking the periods from the first as the budget's history does covers each day
        // once: no gap, no overlap, so no transaction is counted twice or missed.
        let end = from_epoch_day((epoch_day(start) + span).min(epoch_day(date(2200, 12, 31)) - 400)).unwrap();
        let mut period = rule.containing(start).unwrap();
        let mut next_day = period.first;
        let mut periods = 0;
        loop {
            prop_assert_eq!(period.first, next_day);
            next_day = period.last.tomorrow().unwrap();
            periods += 1;
            if period.last >= end {
                break;
            }
            period = rule.after(period).unwrap();
        }
        prop_assert!(periods <= span / 7 + 2);
    }

    #[test]
    fn a_stored_start_day_of_any_value_gives_periods(period in any_period(), day in any::<i64>(), anchor in any_date(), on in any_date()) {
        let rule = PeriodRule::from_stored(period, day, anchor);
        let (min, max, _) = period.start_days();
        prop_assert!((min..=max).contains(&rule.start_day()));
        let found = rule.containing(on).unwrap();
        prop_assert!(found.first <= on && on <= found.last);
    }

    #[test]
    fn a_start_day_out_of_range_is_refused(period in any_period(), day in any::<i64>(), anchor in any_date()) {
        let (min, max, _) = period.start_days();
        let fits = (i64::from(min)..=i64::from(max)).contains(&day);
        prop_assert_eq!(PeriodRule::new(period, day, anchor).is_ok(), fits);
    }
}

#[test]
fn examples() {
    let anchor = date(2026, 1, 7);
    let monthly = PeriodRule::new(BudgetPeriod::Monthly, 31, anchor).unwrap();
    let feb = monthly.containing(date(2028, 2, 29)).unwrap();
    assert_eq!((feb.first, feb.last), (date(2028, 2, 29), date(2028, 3, 30)));
    let jan = monthly.containing(date(2028, 2, 28)).unwrap();
    assert_eq!((jan.first, jan.last), (date(2028, 1, 31), date(2028, 2, 28)));

    let payday = PeriodRule::new(BudgetPeriod::Monthly, 25, anchor).unwrap();
    let december = payday.containing(date(2026, 1, 3)).unwrap();
    assert_eq!((december.first, december.last), (date(2025, 12, 25), date(2026, 1, 24)));

    // 2026-12-02 is a Wednesday; a week from Monday.
    let weekly = PeriodRule::new(BudgetPeriod::Weekly, 1, anchor).unwrap();
    let week = weekly.containing(date(2026, 12, 2)).unwrap();
    assert_eq!((week.first, week.last), (date(2026, 11, 30), date(2026, 12, 6)));

    let fortnightly = PeriodRule::new(BudgetPeriod::Fortnightly, 1, date(2026, 11, 23)).unwrap();
    let fortnight = fortnightly.containing(date(2026, 12, 2)).unwrap();
    assert_eq!((fortnight.first, fortnight.last), (date(2026, 11, 23), date(2026, 12, 6)));
    let next = fortnightly.after(fortnight).unwrap();
    assert_eq!((next.first, next.last), (date(2026, 12, 7), date(2026, 12, 20)));

    let tax_year = PeriodRule::new(BudgetPeriod::Yearly, 4, anchor).unwrap();
    let year = tax_year.containing(date(2026, 3, 31)).unwrap();
    assert_eq!((year.first, year.last), (date(2025, 4, 1), date(2026, 3, 31)));

    // The seed's doctored row: weekly with 15 is a normal week (15 is Monday again, modulo 7).
    let doctored = PeriodRule::from_stored(BudgetPeriod::Weekly, 15, anchor);
    assert_eq!(doctored.start_day(), 1);
    assert_eq!(doctored.containing(date(2026, 12, 2)), Some(week));
    for day in [i64::MIN, i64::MAX, 0, -1] {
        for period in [BudgetPeriod::Weekly, BudgetPeriod::Monthly, BudgetPeriod::Yearly] {
            let rule = PeriodRule::from_stored(period, day, anchor);
            assert!(rule.containing(date(2026, 12, 2)).is_some(), "{period:?} {day}");
        }
    }
    assert_eq!(PeriodRule::from_stored(BudgetPeriod::Weekly, 0, anchor).start_day(), 7);
    assert_eq!(PeriodRule::from_stored(BudgetPeriod::Yearly, 13, anchor).start_day(), 1);

    let refused = PeriodRule::new(BudgetPeriod::Weekly, 15, anchor).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "start_day 15 does not fit a weekly budget: it takes a weekday, 1 Monday to 7 Sunday (1 to 7)"
    );
}
