//! Tests for the charge series: property tests against a naive model, plus examples.

use jiff::civil::{Date, date};
use proptest::prelude::*;

use super::*;
use crate::cycle::{CycleUnit, from_epoch_day, tests::MONTHLY_FROM_31_JANUARY_2025};

fn add_days(d: Date, days: i64) -> Date {
    from_epoch_day(epoch_day(d) + days).unwrap()
}

fn days_in(year: i16, month: i8) -> i8 {
    date(year, month, 1).days_in_month()
}

fn any_date() -> impl Strategy<Value = Date> {
    (1970_i16..=2100, 1_i8..=12, 1_i8..=31).prop_map(|(y, m, d)| date(y, m, d.min(days_in(y, m))))
}

fn any_unit() -> impl Strategy<Value = CycleUnit> {
    prop_oneof![
        Just(CycleUnit::Day),
        Just(CycleUnit::Week),
        Just(CycleUnit::Month),
        Just(CycleUnit::Year)
    ]
}

fn any_cycle() -> impl Strategy<Value = Cycle> {
    (1_i64..=36, any_unit()).prop_map(|(every, unit)| Cycle::new(every, unit).unwrap())
}

/// Pauses as day offsets from the anchor: (start offset, optional length).
fn any_pauses() -> impl Strategy<Value = Vec<(i64, Option<i64>)>> {
    proptest::collection::vec((-100_i64..4000, proptest::option::weighted(0.8, 1_i64..400)), 0..3)
}

fn to_pauses(anchor: Date, raw: &[(i64, Option<i64>)]) -> Vec<PauseSpan> {
    raw.iter()
        .map(|&(start, len)| {
            let from = add_days(anchor, start);
            PauseSpan { from, until: len.map(|l| add_days(from, l)) }
        })
        .collect()
}

/// The obvious implementation: walk every index from 0.
fn naive(series: &Series<'_>, from: Date, to: Date) -> Vec<Occurrence> {
    let mut out = Vec::new();
    let mut n = 0;
    while let Some(d) = series.nth(n) {
        if d > to {
            break;
        }
        let paused = series.pauses.iter().any(|p| p.from <= d && p.until.is_none_or(|u| d < u));
        let ended = series.end_on.is_some_and(|e| d > e);
        if d >= from && !paused && !ended {
            out.push(Occurrence { index: n, date: d, minor: series.amount_on(d) });
        }
        n += 1;
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn dates_never_drift(anchor in any_date(), cycle in any_cycle(), n in 0_u32..3000) {
        let every = i64::from(cycle.every());
        let steps = i64::from(n) * every;
        let got = cycle.nth(anchor, n);
        match cycle.unit() {
            CycleUnit::Day | CycleUnit::Week => {
                let per = if cycle.unit() == CycleUnit::Day { 1 } else { 7 };
                let got = got.unwrap();
                prop_assert_eq!(epoch_day(got) - epoch_day(anchor), steps * per);
                let jiff = anchor.checked_add(jiff::Span::new().days(steps * per)).unwrap();
                prop_assert_eq!(got, jiff);
            }
            CycleUnit::Month => {
                let months = i64::from(anchor.year()) * 12 + i64::from(anchor.month()) - 1 + steps;
                let year = months / 12;
                if year > 9999 {
                    prop_assert_eq!(got, None);
                } else {
                    let got = got.unwrap();
                    prop_assert_eq!(i64::from(got.year()), year);
                    prop_assert_eq!(i64::from(got.month()), months % 12 + 1);
                    prop_assert_eq!(got.day(), anchor.day().min(got.days_in_month()));
                }
            }
            CycleUnit::Year => {
                let year = i64::from(anchor.year()) + steps;
                if year > 9999 {
                    prop_assert_eq!(got, None);
                } else {
                    let got = got.unwrap();
                    prop_assert_eq!(i64::from(got.year()), year);
                    prop_assert_eq!(got.month(), anchor.month());
                    prop_assert_eq!(got.day(), anchor.day().min(got.days_in_month()));
                }
            }
        }
    }

    #[test]
    fn series_strictly_increasing(anchor in any_date(), cycle in any_cycle(), start in 0_u32..200) {
        let mut prev = cycle.nth(anchor, start).unwrap();
        prop_assert!(prev >= anchor);
        for n in start + 1..start + 60 {
            let Some(d) = cycle.nth(anchor, n) else { break };
            prop_assert!(d > prev, "{} then {}", prev, d);
            prev = d;
        }
    }

    #[test]
    fn between_agrees_with_naive(
        anchor in any_date(),
        cycle in any_cycle(),
        from_off in -400_i64..6000,
        len in 0_i64..2000,
        raw_pauses in any_pauses(),
        end_off in proptest::option::of(-50_i64..5000),
    ) {
        let pauses = to_pauses(anchor, &raw_pauses);
        let prices = [PricePoint { effective_on: anchor, minor: 999 }];
        let series = Series {
            end_on: end_off.map(|o| add_days(anchor, o)),
            ..open_series(anchor, cycle, &pauses, &prices)
        };
        let from = add_days(anchor, from_off);
        let to = add_days(from, len);
        let fast = series.occurrences_between(from, to);
        prop_assert_eq!(&fast, &naive(&series, from, to));
        for o in &fast {
            prop_assert!(o.date >= anchor && o.date >= from && o.date <= to);
            prop_assert!(!pauses.iter().any(|p| p.contains(o.date)));
            prop_assert!(series.end_on.is_none_or(|e| o.date <= e));
            prop_assert_eq!(Some(o.date), cycle.nth(anchor, o.index));
        }
        prop_assert!(fast.windows(2).all(|w| w[0].date < w[1].date && w[0].index < w[1].index));
    }

    #[test]
    fn next_and_upcoming_agree_with_naive(
        anchor in any_date(),
        cycle in any_cycle(),
        from_off in -400_i64..6000,
        raw_pauses in any_pauses(),
        end_off in proptest::option::of(-50_i64..8000),
        count in 0_usize..8,
    ) {
        let pauses = to_pauses(anchor, &raw_pauses);
        let prices = [PricePoint { effective_on: anchor, minor: 500 }];
        let series = Series {
            end_on: end_off.map(|o| add_days(anchor, o)),
            ..open_series(anchor, cycle, &pauses, &prices)
        };
        let from = add_days(anchor, from_off);
        // Far enough to hold `count` charges of the longest cycle after every pause.
        let horizon = add_days(from, 36 * 366 * 10 + 5000);
        let expected = naive(&series, from, horizon);
        prop_assert_eq!(series.next_on_or_after(from), expected.first().copied());
        let upcoming = series.upcoming(from, count);
        prop_assert_eq!(&upcoming[..], &expected[..count.min(expected.len())]);
    }

    #[test]
    fn price_change_applies_from_effective_date(
        anchor in any_date(),
        cycle in any_cycle(),
        change_off in -100_i64..3000,
        old in 1_i64..100_000,
        new in 1_i64..100_000,
    ) {
        let effective_on = add_days(anchor, change_off);
        // Out of order on purpose.
        let prices = [
            PricePoint { effective_on, minor: new },
            PricePoint { effective_on: add_days(anchor, -200), minor: old },
        ];
        let series = open_series(anchor, cycle, &[], &prices);
        let all = series.occurrences_between(anchor, add_days(anchor, 4000));
        prop_assert!(!all.is_empty());
        for o in &all {
            let want = if o.date >= effective_on { new } else { old };
            prop_assert_eq!(o.minor, want, "charge on {}, change on {}", o.date, effective_on);
        }
    }
}

/// A series without an end.
fn open_series<'a>(
    anchor: Date,
    cycle: Cycle,
    pauses: &'a [PauseSpan],
    prices: &'a [PricePoint],
) -> Series<'a> {
    Series { anchor, cycle, end_on: None, pauses, prices }
}

fn monthly_series<'a>(
    anchor: Date,
    pauses: &'a [PauseSpan],
    prices: &'a [PricePoint],
) -> Series<'a> {
    open_series(anchor, Cycle::MONTHLY, pauses, prices)
}

fn dates(occurrences: &[Occurrence]) -> Vec<Date> {
    occurrences.iter().map(|o| o.date).collect()
}

#[test]
fn thirty_first_of_january_monthly() {
    let prices = [PricePoint { effective_on: date(2025, 1, 31), minor: 1299 }];
    let series = monthly_series(date(2025, 1, 31), &[], &prices);
    let got = series.occurrences_between(date(2025, 1, 1), date(2025, 6, 1));
    assert_eq!(dates(&got), MONTHLY_FROM_31_JANUARY_2025);
    assert!(got.iter().all(|o| o.minor == 1299));
    assert_eq!(got.iter().map(|o| o.index).collect::<Vec<_>>(), vec![0, 1, 2, 3, 4]);
    let leap = monthly_series(date(2024, 1, 31), &[], &prices);
    assert_eq!(leap.next_on_or_after(date(2024, 2, 1)).unwrap().date, date(2024, 2, 29));
}

#[test]
fn leap_day_yearly_series() {
    let prices = [PricePoint { effective_on: date(2024, 2, 29), minor: 9900 }];
    let series = open_series(date(2024, 2, 29), Cycle::YEARLY, &[], &prices);
    let got = series.occurrences_between(date(2024, 1, 1), date(2029, 1, 1));
    assert_eq!(
        dates(&got),
        vec![
            date(2024, 2, 29),
            date(2025, 2, 28),
            date(2026, 2, 28),
            date(2027, 2, 28),
            date(2028, 2, 29)
        ]
    );
}

#[test]
fn quarterly_series() {
    let prices = [PricePoint { effective_on: date(2025, 11, 30), minor: 3000 }];
    let series = open_series(date(2025, 11, 30), Cycle::preset("quarterly").unwrap(), &[], &prices);
    assert_eq!(
        dates(&series.upcoming(date(2025, 12, 1), 4)),
        vec![date(2026, 2, 28), date(2026, 5, 30), date(2026, 8, 30), date(2026, 11, 30)]
    );
}

#[test]
fn yearly_and_monthly_equivalents() {
    assert_eq!(Cycle::MONTHLY.yearly_minor(1299), 15_588);
    assert_eq!(Cycle::WEEKLY.yearly_minor(1000), 52_179);
    assert_eq!(Cycle::YEARLY.monthly_minor(15_588), 1299);
}

#[test]
fn nothing_before_the_anchor() {
    let prices = [PricePoint { effective_on: date(2025, 3, 10), minor: 100 }];
    let series = monthly_series(date(2025, 3, 10), &[], &prices);
    assert!(series.occurrences_between(date(2020, 1, 1), date(2025, 3, 9)).is_empty());
    assert_eq!(series.next_on_or_after(date(2000, 1, 1)).unwrap().date, date(2025, 3, 10));
    assert!(series.occurrences_between(date(2025, 5, 1), date(2025, 4, 1)).is_empty());
}

#[test]
fn end_date_keeps_a_charge_on_it() {
    let prices = [PricePoint { effective_on: date(2025, 1, 15), minor: 100 }];
    let mut series = monthly_series(date(2025, 1, 15), &[], &prices);
    series.end_on = Some(date(2025, 3, 15));
    assert_eq!(
        dates(&series.occurrences_between(date(2025, 1, 1), date(2026, 1, 1))),
        vec![date(2025, 1, 15), date(2025, 2, 15), date(2025, 3, 15)]
    );
    assert_eq!(series.next_on_or_after(date(2025, 3, 16)), None);
    assert_eq!(series.upcoming(date(2025, 2, 1), 10).len(), 2);
    series.end_on = Some(date(2024, 12, 1));
    assert!(series.occurrences_between(date(2020, 1, 1), date(2030, 1, 1)).is_empty());
    assert_eq!(series.next_on_or_after(date(2020, 1, 1)), None);
}

#[test]
fn pauses() {
    let prices = [PricePoint { effective_on: date(2025, 1, 5), minor: 100 }];
    let spans = [PauseSpan { from: date(2025, 2, 1), until: Some(date(2025, 4, 5)) }];
    let series = monthly_series(date(2025, 1, 5), &spans, &prices);
    // The resume date itself is charged.
    assert_eq!(
        dates(&series.occurrences_between(date(2025, 1, 1), date(2025, 5, 31))),
        vec![date(2025, 1, 5), date(2025, 4, 5), date(2025, 5, 5)]
    );
    assert_eq!(series.next_on_or_after(date(2025, 1, 6)).unwrap().date, date(2025, 4, 5));
    assert_eq!(series.next_on_or_after(date(2025, 1, 6)).unwrap().index, 3);

    let forever = [PauseSpan { from: date(2025, 2, 1), until: None }];
    let series = monthly_series(date(2025, 1, 5), &forever, &prices);
    assert_eq!(series.next_on_or_after(date(2025, 1, 6)), None);
    assert_eq!(series.upcoming(date(2025, 1, 1), 5).len(), 1);
    assert_eq!(series.occurrences_between(date(2025, 1, 1), date(2035, 1, 1)).len(), 1);
}

#[test]
fn long_pause_on_a_daily_series_is_skipped_quickly() {
    let prices = [PricePoint { effective_on: date(2000, 1, 1), minor: 1 }];
    let spans = [PauseSpan { from: date(2000, 1, 2), until: Some(date(2040, 1, 1)) }];
    let series =
        open_series(date(2000, 1, 1), Cycle::new(1, CycleUnit::Day).unwrap(), &spans, &prices);
    assert_eq!(series.next_on_or_after(date(2000, 1, 2)).unwrap().date, date(2040, 1, 1));
    assert_eq!(
        dates(&series.upcoming(date(2000, 1, 1), 3)),
        vec![date(2000, 1, 1), date(2040, 1, 1), date(2040, 1, 2)]
    );
}

#[test]
fn far_ranges_use_the_right_index() {
    let prices = [PricePoint { effective_on: date(1990, 1, 1), minor: 5 }];
    let daily = open_series(date(1990, 1, 1), Cycle::new(1, CycleUnit::Day).unwrap(), &[], &prices);
    let got = daily.occurrences_between(date(2020, 1, 1), date(2020, 1, 3));
    assert_eq!(dates(&got), vec![date(2020, 1, 1), date(2020, 1, 2), date(2020, 1, 3)]);
    assert_eq!(got[0].index, 10_957);
    let ancient = Series { anchor: date(1, 1, 1), ..daily };
    let near_end = ancient.occurrences_between(date(9999, 12, 30), date(9999, 12, 31));
    assert_eq!(near_end.len(), 2);
    assert_eq!(ancient.next_on_or_after(date(9999, 12, 31)).unwrap().date, date(9999, 12, 31));
    let monthly = Series { anchor: date(1, 1, 31), cycle: Cycle::MONTHLY, ..daily };
    assert_eq!(
        dates(&monthly.occurrences_between(date(9999, 1, 1), date(9999, 3, 31))),
        vec![date(9999, 1, 31), date(9999, 2, 28), date(9999, 3, 31)]
    );
    assert_eq!(monthly.upcoming(date(9999, 12, 1), 5).len(), 1);
}

#[test]
fn amounts() {
    let empty = monthly_series(date(2025, 1, 1), &[], &[]);
    assert_eq!(empty.amount_on(date(2025, 1, 1)), 0);
    let prices = [
        PricePoint { effective_on: date(2025, 6, 1), minor: 1499 },
        PricePoint { effective_on: date(2025, 1, 1), minor: 1299 },
        PricePoint { effective_on: date(2026, 1, 1), minor: 1599 },
    ];
    let series = monthly_series(date(2025, 1, 1), &[], &prices);
    assert_eq!(series.amount_on(date(2024, 1, 1)), 1299);
    assert_eq!(series.amount_on(date(2025, 5, 31)), 1299);
    assert_eq!(series.amount_on(date(2025, 6, 1)), 1499);
    assert_eq!(series.amount_on(date(2030, 1, 1)), 1599);
    let got = series.occurrences_between(date(2025, 5, 1), date(2026, 1, 1));
    assert_eq!(got.first().unwrap().minor, 1299);
    assert_eq!(got[1].minor, 1499);
    assert_eq!(got.last().unwrap().minor, 1599);
}
