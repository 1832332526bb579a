//! Dates said relative to today, in English and Spanish: `tomorrow`, `in 10 days`,
//! `next friday`, `end of next month`, `mañana`, `el mes que viene`, `fin de mes`.
//!
//! [`resolve`] turns a phrase into a calendar date given today's date (which the caller
//! computes in the household's time zone), so a model never has to know what day it is.
//! Months are added the way the charge series adds them: 31 January plus one month is the last
//! day of February. ISO dates are not read here (`validate::parse_date` does that), and
//! nothing here knows which dates an op accepts.

use jiff::civil::{Date, Weekday};

use crate::names::fold;

/// The accepted forms, for schema descriptions and error messages.
pub const FORMS: &str = "today, tomorrow, yesterday, in 10 days, in 2 weeks, 3 days ago, next month, end of month, end of next month, start of next month, next year, friday, next friday, last friday; in Spanish: hoy, mañana, pasado mañana, ayer, en 10 días, dentro de 2 semanas, hace 3 días, el mes que viene, fin de mes, fin del mes que viene, el próximo viernes";

/// The date a phrase names, counted from `today`; `None` when it is not one of the forms in
/// [`FORMS`] (or the result falls off the calendar).
pub fn resolve(phrase: &str, today: Date) -> Option<Date> {
    let folded = fold(phrase);
    let words: Vec<&str> = folded
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '.' | '!' | '?'))
        .filter(|word| !word.is_empty())
        .collect();
    let words = strip_lead(&words);
    read(words, today)
}

/// Words that introduce a date without changing it: "until friday", "hasta el lunes".
fn strip_lead<'a, 'b>(mut words: &'b [&'a str]) -> &'b [&'a str] {
    const LEADS: &[&str] =
        &["until", "till", "by", "on", "hasta", "para", "el", "la", "this", "este", "esta"];
    while let [first, rest @ ..] = words {
        let keeps_meaning = match *first {
            // "a" opens "a week from today"; it only leads Spanish "a fin de mes".
            "a" => rest
                .first()
                .is_some_and(|w| matches!(*w, "fin" | "final" | "finales" | "principios")),
            "this" | "este" | "esta" => rest.len() == 1 && weekday(rest[0]).is_some(),
            word => LEADS.contains(&word),
        };
        if !keeps_meaning || rest.is_empty() {
            break;
        }
        words = rest;
    }
    words
}

fn read(words: &[&str], today: Date) -> Option<Date> {
    use Unit::*;
    let shifted = |amount: i64, unit: Unit| unit.add(today, amount);
    match words {
        ["today" | "now" | "tonight" | "hoy"] => Some(today),
        ["tomorrow" | "manana"] => shifted(1, Day),
        ["yesterday" | "ayer"] => shifted(-1, Day),
        ["day", "after", "tomorrow"]
        | ["the", "day", "after", "tomorrow"]
        | ["pasado", "manana"] => shifted(2, Day),
        ["day", "before", "yesterday"]
        | ["the", "day", "before", "yesterday"]
        | ["anteayer"]
        | ["antes", "de", "ayer"] => shifted(-2, Day),
        // in 10 days, in a week, en 3 meses, dentro de 2 semanas
        ["in" | "en", count, unit] | ["dentro", "de", count, unit] => {
            shifted(number(count)?, Unit::parse(unit)?)
        }
        // 10 days from now, a week from today
        [count, unit, "from", "now" | "today"] => shifted(number(count)?, Unit::parse(unit)?),
        // 3 days ago, hace 3 días
        [count, unit, "ago"] | ["hace", count, unit] => {
            shifted(-number(count)?, Unit::parse(unit)?)
        }
        ["next" | "proximo" | "proxima", unit]
        | [unit, "que", "viene"]
        | [unit, "proximo" | "proxima"]
            if Unit::parse(unit).is_some() =>
        {
            shifted(1, Unit::parse(unit)?)
        }
        ["last" | "pasado" | "pasada", unit] | [unit, "pasado" | "pasada"]
            if Unit::parse(unit).is_some() =>
        {
            shifted(-1, Unit::parse(unit)?)
        }
        [edge @ ("end" | "start" | "beginning" | "first"), "of", rest @ ..] => {
            let edge = if *edge == "end" { Edge::End } else { Edge::Start };
            period_edge(edge, rest, today)
        }
        [unit, "end"] if Unit::parse(unit) == Some(Month) => Edge::End.of(Month, today),
        [
            edge @ ("fin" | "final" | "finales" | "principios" | "inicio" | "comienzo" | "primero"),
            rest @ ..,
        ] => {
            let edge =
                if matches!(*edge, "fin" | "final" | "finales") { Edge::End } else { Edge::Start };
            let ["de" | "del", rest @ ..] = rest else { return None };
            period_edge(edge, rest, today)
        }
        [day] => weekday(day).map(|day| on_or_after(today, day)),
        ["next" | "proximo", day] | [day, "que", "viene"] | [day, "proximo"] => {
            weekday(day).map(|day| after(today, day))
        }
        ["last", day] | [day, "pasado"] => weekday(day).map(|day| before(today, day)),
        _ => None,
    }
}

/// The same day `years` later (or earlier); 29 February becomes the 28th in a common year.
pub fn add_years(date: Date, years: i64) -> Option<Date> {
    Unit::Year.add(date, years)
}

/// The same day and month in the first year that puts it on or after `today`: a model that
/// wrote 2023-04-01 in December 2026 most likely meant 2027-04-01. 29 February becomes the
/// 28th in a common year.
pub fn same_day_from(date: Date, today: Date) -> Date {
    same_day_in(date, today.year()..=today.year().saturating_add(1))
        .find(|candidate| *candidate >= today)
        .unwrap_or(today)
}

/// The same day and month in the last year that puts it on or before `today` (for what has
/// already happened: 2023-11-26 in December 2026 most likely meant 2026-11-26).
pub fn same_day_until(date: Date, today: Date) -> Date {
    same_day_in(date, (today.year().saturating_sub(1)..=today.year()).rev())
        .find(|candidate| *candidate <= today)
        .unwrap_or(today)
}

/// The same day and month in the year that puts it nearest to `today`, before or after
/// (a cancellation dated 2023-12-31 in December 2026 most likely meant 2026-12-31).
pub fn same_day_nearest(date: Date, today: Date) -> Date {
    let distance = |candidate: &Date| (today - *candidate).get_days().abs();
    same_day_in(date, today.year().saturating_sub(1)..=today.year().saturating_add(1))
        .min_by_key(distance)
        .unwrap_or(today)
}

fn same_day_in(date: Date, years: impl Iterator<Item = i16>) -> impl Iterator<Item = Date> {
    years.filter_map(move |year| {
        Date::new(year, date.month(), date.day())
            .or_else(|_| Date::new(year, date.month(), date.day() - 1))
            .ok()
    })
}

/// "month", "next month", "the year", "mes que viene", "este mes" after "end of"/"fin de".
fn period_edge(edge: Edge, words: &[&str], today: Date) -> Option<Date> {
    let words = match words {
        ["the" | "this" | "este" | "el", rest @ ..] => rest,
        _ => words,
    };
    let (unit, offset) = match words {
        [unit] => (Unit::parse(unit)?, 0),
        ["next" | "proximo", unit] | [unit, "que", "viene"] | [unit, "proximo"] => {
            (Unit::parse(unit)?, 1)
        }
        ["last" | "pasado", unit] | [unit, "pasado"] => (Unit::parse(unit)?, -1),
        _ => return None,
    };
    let base = unit.add(today, offset)?;
    edge.of(unit, base)
}

#[derive(Clone, Copy)]
enum Edge {
    Start,
    End,
}

impl Edge {
    fn of(self, unit: Unit, date: Date) -> Option<Date> {
        match (self, unit) {
            (Edge::Start, Unit::Month) => Some(date.first_of_month()),
            (Edge::End, Unit::Month) => Some(date.last_of_month()),
            (Edge::Start, Unit::Year) => Date::new(date.year(), 1, 1).ok(),
            (Edge::End, Unit::Year) => Date::new(date.year(), 12, 31).ok(),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Unit {
    Day,
    Week,
    Fortnight,
    Month,
    Year,
}

impl Unit {
    fn parse(word: &str) -> Option<Self> {
        Some(match word {
            "day" | "days" | "dia" | "dias" => Self::Day,
            "week" | "weeks" | "semana" | "semanas" => Self::Week,
            "fortnight" | "fortnights" | "quincena" | "quincenas" => Self::Fortnight,
            "month" | "months" | "mes" | "meses" => Self::Month,
            // "año" folds to "ano".
            "year" | "years" | "ano" | "anos" => Self::Year,
            _ => return None,
        })
    }

    fn add(self, date: Date, amount: i64) -> Option<Date> {
        let span = jiff::Span::new();
        let span = match self {
            Self::Day => span.try_days(amount),
            Self::Week => span.try_weeks(amount),
            Self::Fortnight => span.try_weeks(amount.checked_mul(2)?),
            Self::Month => span.try_months(amount),
            Self::Year => span.try_years(amount),
        };
        date.checked_add(span.ok()?).ok()
    }
}

/// A count written in digits (up to 9999) or as a small number word.
fn number(word: &str) -> Option<i64> {
    if let Ok(n) = word.parse::<i64>() {
        return (0..=9999).contains(&n).then_some(n);
    }
    Some(match word {
        "a" | "an" | "one" | "un" | "una" | "uno" => 1,
        "two" | "dos" => 2,
        "three" | "tres" => 3,
        "four" | "cuatro" => 4,
        "five" | "cinco" => 5,
        "six" | "seis" => 6,
        "seven" | "siete" => 7,
        "eight" | "ocho" => 8,
        "nine" | "nueve" => 9,
        "ten" | "diez" => 10,
        "eleven" | "once" => 11,
        "twelve" | "doce" => 12,
        "fifteen" | "quince" => 15,
        "twenty" | "veinte" => 20,
        "thirty" | "treinta" => 30,
        _ => return None,
    })
}

fn weekday(word: &str) -> Option<Weekday> {
    use Weekday::*;
    Some(match word {
        "monday" | "mon" | "lunes" => Monday,
        "tuesday" | "tue" | "tues" | "martes" => Tuesday,
        "wednesday" | "wed" | "miercoles" => Wednesday,
        "thursday" | "thu" | "thur" | "thurs" | "jueves" => Thursday,
        "friday" | "fri" | "viernes" => Friday,
        "saturday" | "sat" | "sabado" => Saturday,
        "sunday" | "sun" | "domingo" => Sunday,
        _ => return None,
    })
}

/// Days from `from`'s weekday forward to `to` (0 to 6).
fn days_until(from: Weekday, to: Weekday) -> i64 {
    i64::from((to.to_monday_zero_offset() - from.to_monday_zero_offset()).rem_euclid(7))
}

/// Today when it is that weekday, else the next one.
fn on_or_after(today: Date, day: Weekday) -> Date {
    Unit::Day.add(today, days_until(today.weekday(), day)).unwrap_or(today)
}

/// The first such weekday strictly after today.
fn after(today: Date, day: Weekday) -> Date {
    let ahead = match days_until(today.weekday(), day) {
        0 => 7,
        n => n,
    };
    Unit::Day.add(today, ahead).unwrap_or(today)
}

/// The last such weekday strictly before today.
fn before(today: Date, day: Weekday) -> Date {
    let back = match days_until(day, today.weekday()) {
        0 => 7,
        n => n,
    };
    Unit::Day.add(today, -back).unwrap_or(today)
}

#[cfg(test)]
mod tests {
    use jiff::{ToSpan, civil::date};
    use proptest::prelude::*;

    use super::*;

    fn at(today: Date, phrase: &str) -> Option<Date> {
        resolve(phrase, today)
    }

    #[test]
    fn english_forms_from_a_tuesday() {
        let today = date(2026, 12, 1); // a Tuesday
        let cases = [
            ("today", date(2026, 12, 1)),
            ("Tomorrow", date(2026, 12, 2)),
            ("yesterday", date(2026, 11, 30)),
            ("the day after tomorrow", date(2026, 12, 3)),
            ("in 10 days", date(2026, 12, 11)),
            ("in a week", date(2026, 12, 8)),
            ("in two weeks", date(2026, 12, 15)),
            ("in 3 months", date(2027, 3, 1)),
            ("10 days from now", date(2026, 12, 11)),
            ("3 days ago", date(2026, 11, 28)),
            ("next week", date(2026, 12, 8)),
            ("next month", date(2027, 1, 1)),
            ("last month", date(2026, 11, 1)),
            ("next year", date(2027, 12, 1)),
            ("end of month", date(2026, 12, 31)),
            ("end of the month", date(2026, 12, 31)),
            ("month end", date(2026, 12, 31)),
            ("end of next month", date(2027, 1, 31)),
            ("start of next month", date(2027, 1, 1)),
            ("end of the year", date(2026, 12, 31)),
            ("friday", date(2026, 12, 4)),
            ("this friday", date(2026, 12, 4)),
            ("tuesday", date(2026, 12, 1)),
            ("next tuesday", date(2026, 12, 8)),
            ("next friday", date(2026, 12, 4)),
            ("last friday", date(2026, 11, 27)),
            ("last tuesday", date(2026, 11, 24)),
            ("until next friday", date(2026, 12, 4)),
            ("  In 10 Days. ", date(2026, 12, 11)),
        ];
        for (phrase, want) in cases {
            assert_eq!(at(today, phrase), Some(want), "{phrase}");
        }
    }

    #[test]
    fn spanish_forms_from_a_tuesday() {
        let today = date(2026, 12, 1);
        let cases = [
            ("hoy", date(2026, 12, 1)),
            ("mañana", date(2026, 12, 2)),
            ("Mañana", date(2026, 12, 2)),
            ("manana", date(2026, 12, 2)),
            ("pasado mañana", date(2026, 12, 3)),
            ("ayer", date(2026, 11, 30)),
            ("anteayer", date(2026, 11, 29)),
            ("en 10 días", date(2026, 12, 11)),
            ("dentro de dos semanas", date(2026, 12, 15)),
            ("hace 3 días", date(2026, 11, 28)),
            ("el mes que viene", date(2027, 1, 1)),
            ("el próximo mes", date(2027, 1, 1)),
            ("la semana que viene", date(2026, 12, 8)),
            ("el año que viene", date(2027, 12, 1)),
            ("fin de mes", date(2026, 12, 31)),
            ("a fin de mes", date(2026, 12, 31)),
            ("final de mes", date(2026, 12, 31)),
            ("fin del mes que viene", date(2027, 1, 31)),
            ("principios del mes que viene", date(2027, 1, 1)),
            ("fin de año", date(2026, 12, 31)),
            ("el viernes", date(2026, 12, 4)),
            ("el próximo viernes", date(2026, 12, 4)),
            ("el viernes que viene", date(2026, 12, 4)),
            ("el martes que viene", date(2026, 12, 8)),
            ("el miércoles", date(2026, 12, 2)),
            ("hasta el sábado", date(2026, 12, 5)),
        ];
        for (phrase, want) in cases {
            assert_eq!(at(today, phrase), Some(want), "{phrase}");
        }
    }

    #[test]
    fn month_ends_and_leap_days() {
        // Adding months keeps the day when it exists and takes the month's last day otherwise.
        assert_eq!(at(date(2026, 1, 31), "next month"), Some(date(2026, 2, 28)));
        assert_eq!(at(date(2028, 1, 31), "next month"), Some(date(2028, 2, 29)));
        assert_eq!(at(date(2026, 1, 31), "end of next month"), Some(date(2026, 2, 28)));
        assert_eq!(at(date(2028, 1, 15), "fin del mes que viene"), Some(date(2028, 2, 29)));
        assert_eq!(at(date(2028, 2, 29), "next year"), Some(date(2029, 2, 28)));
        assert_eq!(at(date(2028, 2, 29), "in 1 year"), Some(date(2029, 2, 28)));
        assert_eq!(at(date(2028, 2, 28), "tomorrow"), Some(date(2028, 2, 29)));
        assert_eq!(at(date(2026, 2, 28), "tomorrow"), Some(date(2026, 3, 1)));
        assert_eq!(at(date(2026, 12, 31), "tomorrow"), Some(date(2027, 1, 1)));
        assert_eq!(at(date(2026, 12, 31), "end of month"), Some(date(2026, 12, 31)));
        assert_eq!(at(date(2026, 12, 31), "end of next month"), Some(date(2027, 1, 31)));
        assert_eq!(at(date(2026, 3, 31), "in 1 month"), Some(date(2026, 4, 30)));
        assert_eq!(at(date(2026, 3, 1), "a month ago"), Some(date(2026, 2, 1)));
        assert_eq!(at(date(2026, 3, 31), "el mes pasado"), Some(date(2026, 2, 28)));
    }

    #[test]
    fn the_same_day_in_the_likely_year() {
        let today = date(2026, 12, 1);
        assert_eq!(same_day_from(date(2023, 4, 1), today), date(2027, 4, 1));
        assert_eq!(same_day_from(date(2023, 12, 25), today), date(2026, 12, 25));
        assert_eq!(same_day_from(date(2024, 2, 29), today), date(2027, 2, 28));
        assert_eq!(same_day_from(date(2020, 2, 29), date(2027, 12, 1)), date(2028, 2, 29));
        assert_eq!(same_day_until(date(2023, 11, 26), today), date(2026, 11, 26));
        assert_eq!(same_day_until(date(2023, 12, 25), today), date(2025, 12, 25));
        assert_eq!(same_day_until(date(2031, 12, 1), today), date(2026, 12, 1));
        assert_eq!(same_day_until(date(2024, 2, 29), date(2026, 3, 1)), date(2026, 2, 28));
        assert_eq!(same_day_nearest(date(2023, 12, 31), today), date(2026, 12, 31));
        assert_eq!(same_day_nearest(date(2023, 4, 1), today), date(2027, 4, 1));
        assert_eq!(same_day_nearest(date(2023, 9, 1), today), date(2026, 9, 1));
    }

    #[test]
    fn other_words_are_not_dates() {
        let today = date(2026, 12, 1);
        for phrase in [
            "",
            "soon",
            "next",
            "in days",
            "in -3 days",
            "in 10000 days",
            "2026-13-01",
            "end of week",
            "friday 13",
            "a",
            "fin",
            "next blursday",
        ] {
            assert_eq!(at(today, phrase), None, "{phrase:?}");
        }
    }

    proptest! {
        #[test]
        fn weekdays_fall_within_a_week(offset in 0_i64..3000, day in 0_i8..7) {
            let today = date(2024, 1, 1).checked_add(offset.days()).unwrap();
            let day = Weekday::from_monday_zero_offset(day).unwrap();
            let on = on_or_after(today, day);
            let next = after(today, day);
            let last = before(today, day);
            prop_assert_eq!(on.weekday(), day);
            prop_assert_eq!(next.weekday(), day);
            prop_assert_eq!(last.weekday(), day);
            prop_assert!(on >= today && on < today.checked_add(7.days()).unwrap());
            prop_assert!(next > today && next <= today.checked_add(7.days()).unwrap());
            prop_assert!(last < today && last >= today.checked_sub(7.days()).unwrap());
        }

        #[test]
        fn in_n_days_and_n_days_ago_are_inverse(offset in 0_i64..3000, n in 0_i64..400) {
            let today = date(2024, 1, 1).checked_add(offset.days()).unwrap();
            let ahead = at(today, &format!("in {n} days")).unwrap();
            prop_assert_eq!(at(ahead, &format!("{n} days ago")), Some(today));
        }

        #[test]
        fn end_of_month_is_the_last_day(offset in 0_i64..3000) {
            let today = date(2024, 1, 1).checked_add(offset.days()).unwrap();
            let end = at(today, "end of month").unwrap();
            prop_assert_eq!(end.month(), today.month());
            prop_assert_eq!(end.tomorrow().unwrap().day(), 1);
            let next_end = at(today, "end of next month").unwrap();
            prop_assert_eq!(next_end, at(end.tomorrow().unwrap(), "end of month").unwrap());
        }
    }
}
