//! Dates as statements write them: numbers in any order with any separators ("12.01.2024",
//! "2024:01:12", "20240112", "1/12/24"), or with a month name or its abbreviation in English,
//! German, French, Spanish, Italian, Dutch, Portuguese or a Nordic language ("12-Jan-2024",
//! "12. Januar 2024", "Jan 12, 2024", "12 de enero de 2024"), with or without a weekday before
//! and a time after. Whether the day or the month comes first is decided for a whole column
//! (`decide`), never per value.

use jiff::civil::Date;

/// Where the day, month and year stand in an all-numeric date.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Order {
    DayMonthYear,
    MonthDayYear,
    YearMonthDay,
}

/// In the order ties are broken: day before month when every day is 12 or less.
const ORDERS: [Order; 3] = [Order::DayMonthYear, Order::MonthDayYear, Order::YearMonthDay];

/// Month names, by month (lower case); a word is a month when it is one of these or an
/// abbreviation (three letters or more) of names of one month only.
const MONTHS: [&[&str]; 12] = [
    &["january", "januar", "jänner", "janvier", "enero", "gennaio", "januari", "janeiro"],
    &["february", "februar", "février", "febrero", "febbraio", "februari", "fevereiro"],
    &["march", "märz", "mrz", "mars", "marzo", "maart", "mrt", "março", "marts"],
    &["april", "avril", "abril", "aprile"],
    &["may", "mai", "mayo", "maggio", "mei", "maio", "maj"],
    &["june", "juni", "juin", "junio", "giugno", "junho"],
    &["july", "juli", "juillet", "julio", "luglio", "julho"],
    &["august", "août", "agosto", "augustus", "augusti"],
    &["september", "septembre", "septiembre", "setiembre", "settembre", "setembro"],
    &["october", "oktober", "octobre", "octubre", "ottobre", "outubro"],
    &["november", "novembre", "noviembre", "novembro"],
    &["december", "dezember", "décembre", "diciembre", "dicembre", "dezembro", "desember"],
];

/// Words that may stand between the parts of a date ("12 de enero de 2024", "1st of May").
const FILLERS: &[&str] = &["de", "del", "of", "st", "nd", "rd", "th", "der", "den"];

/// The month a word names, 1 to 12.
pub(crate) fn month(word: &str) -> Option<i8> {
    let word = word.to_lowercase();
    let word = word.trim_end_matches('.');
    if word.chars().count() < 3 {
        return None;
    }
    let mut found = None;
    for (index, names) in MONTHS.iter().enumerate() {
        if names.iter().any(|name| name.starts_with(word)) {
            if found.is_some() {
                return None; // "jui": juin or juillet
            }
            found = Some(index as i8 + 1);
        }
    }
    found
}

#[derive(Clone, Copy, Debug)]
enum Part<'a> {
    Number(&'a str),
    Month(i8),
}

/// The end of the run of characters like the one at `start`, taken from `chars`.
fn run_end(
    chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>,
    start: usize,
    like: fn(&char) -> bool,
) -> usize {
    let mut end = start;
    while let Some((i, c)) = chars.next_if(|(_, c)| like(c)) {
        end = i + c.len_utf8();
    }
    end
}

/// The date's three parts with where each starts and ends, or `None` when the text does not
/// start with a date. What follows the third part (a time) is ignored.
fn parts(text: &str) -> Option<Vec<(Part<'_>, usize, usize)>> {
    let mut parts = Vec::with_capacity(3);
    let mut chars = text.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        if parts.len() == 3 {
            break;
        }
        if c.is_ascii_digit() {
            let end = run_end(&mut chars, start, char::is_ascii_digit);
            parts.push((Part::Number(&text[start..end]), start, end));
        } else if c.is_alphabetic() {
            let end = run_end(&mut chars, start, |c| c.is_alphabetic());
            let word = &text[start..end];
            match month(word) {
                Some(month) if !parts.iter().any(|(p, ..)| matches!(p, Part::Month(_))) => {
                    parts.push((Part::Month(month), start, end));
                }
                // A weekday that looked like a month ("mar. 12 janv. 2024": French Tuesday):
                // the first word was not the month, this one is.
                Some(month) if matches!(parts.first(), Some((Part::Month(_), ..))) => {
                    parts.remove(0);
                    parts.push((Part::Month(month), start, end));
                }
                _ if FILLERS.contains(&word.to_lowercase().as_str()) && !parts.is_empty() => {}
                // A weekday or other word before the date ("Mon, 12 Jan 2024").
                _ if parts.is_empty() && word.chars().count() <= 10 => {}
                _ => return None,
            }
        } else {
            chars.next();
        }
    }
    // "20240112": one number of eight digits.
    if let Some(&(Part::Number(digits), start, _)) = parts.first()
        && digits.len() == 8
    {
        return Some(vec![
            (Part::Number(&digits[..4]), start, start + 4),
            (Part::Number(&digits[4..6]), start + 4, start + 6),
            (Part::Number(&digits[6..]), start + 6, start + 8),
        ]);
    }
    (parts.len() == 3).then_some(parts)
}

fn year(digits: &str) -> Option<i16> {
    let value: i16 = digits.parse().ok()?;
    match digits.len() {
        // Two-digit years: 00 to 69 are this century.
        2 => Some(if value < 70 { 2000 + value } else { 1900 + value }),
        4 if (1900..=2100).contains(&value) => Some(value),
        _ => None,
    }
}

fn small(digits: &str) -> Option<i8> {
    if digits.len() > 2 { None } else { digits.parse().ok() }
}

/// The date at the start of `text`, with day and month in `order` when both are numbers.
pub(crate) fn parse(text: &str, order: Order) -> Option<Date> {
    let parts = parts(text.trim())?;
    let (y, m, d) = match (parts[0].0, parts[1].0, parts[2].0) {
        (Part::Month(m), Part::Number(d), Part::Number(y)) => (year(y)?, m, small(d)?),
        (Part::Number(a), Part::Month(m), Part::Number(b)) if a.len() == 4 => {
            (year(a)?, m, small(b)?)
        }
        (Part::Number(d), Part::Month(m), Part::Number(y)) => (year(y)?, m, small(d)?),
        (Part::Number(a), Part::Number(b), Part::Number(c)) => match order {
            Order::YearMonthDay if a.len() == 4 => (year(a)?, small(b)?, small(c)?),
            Order::DayMonthYear if a.len() <= 2 => (year(c)?, small(b)?, small(a)?),
            Order::MonthDayYear if a.len() <= 2 => (year(c)?, small(a)?, small(b)?),
            _ => return None,
        },
        _ => return None,
    };
    Date::new(y, m, d).ok()
}

/// The shape of a date as the person would write it ("dd.mm.yyyy", "dd mmm yyyy"), for the
/// notes on how a file was read.
pub(crate) fn pattern(text: &str, order: Order) -> String {
    let text = text.trim();
    let Some(parts) = parts(text) else { return String::new() };
    let numbers: Vec<&str> = match order {
        Order::DayMonthYear => vec!["dd", "mm", "yyyy"],
        Order::MonthDayYear => vec!["mm", "dd", "yyyy"],
        Order::YearMonthDay => vec!["yyyy", "mm", "dd"],
    };
    let has_month_name = parts.iter().any(|(p, ..)| matches!(p, Part::Month(_)));
    let mut out = String::new();
    let mut previous_end = parts[0].1;
    for (index, (part, start, end)) in parts.iter().enumerate() {
        out.push_str(&text[previous_end..*start]);
        previous_end = *end;
        out.push_str(&match part {
            Part::Month(_) => "mmm".to_owned(),
            Part::Number(digits) if digits.len() == 4 => "yyyy".to_owned(),
            Part::Number(digits) if has_month_name && digits.len() == 2 && index == 2 => {
                "yy".to_owned()
            }
            Part::Number(_) if has_month_name => "dd".to_owned(),
            Part::Number(digits) => {
                let role = numbers[index];
                if role == "yyyy" && digits.len() == 2 { "yy".to_owned() } else { role.to_owned() }
            }
        });
    }
    out
}

/// The order under which the most values of a column are dates; between orders that read
/// as many, the one that keeps the statement in date order (as statements are), then the
/// earlier in `ORDERS`. `None` when no value is a date.
pub(crate) fn decide(values: &[&str]) -> Option<(Order, usize)> {
    let mut best: Option<(Order, (usize, usize))> = None;
    for order in ORDERS {
        let dates: Vec<Date> = values.iter().filter_map(|v| parse(v, order)).collect();
        let rising = dates.windows(2).filter(|pair| pair[0] <= pair[1]).count();
        let falling = dates.windows(2).filter(|pair| pair[0] >= pair[1]).count();
        let score = (dates.len(), rising.max(falling));
        if score.0 > 0 && best.is_none_or(|(_, best)| score > best) {
            best = Some((order, score));
        }
    }
    best.map(|(order, (count, _))| (order, count))
}

/// The other order the column's dates read as just as well (day and month both 12 or less
/// everywhere), when there is one: the person should check.
pub(crate) fn ambiguous(values: &[&str], chosen: Order) -> Option<Order> {
    let other = match chosen {
        Order::DayMonthYear => Order::MonthDayYear,
        Order::MonthDayYear => Order::DayMonthYear,
        Order::YearMonthDay => return None,
    };
    let count = |order| values.iter().filter(|v| parse(v, order).is_some()).count();
    let differ = values.iter().any(|v| parse(v, chosen) != parse(v, other));
    (differ && count(other) == count(chosen)).then_some(other)
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    #[test]
    fn numbers_in_every_order_and_with_any_separator() {
        let day = date(2024, 1, 12);
        assert_eq!(parse("12.01.2024", Order::DayMonthYear), Some(day));
        assert_eq!(parse("01/12/2024", Order::MonthDayYear), Some(day));
        assert_eq!(parse("2024-01-12", Order::YearMonthDay), Some(day));
        assert_eq!(parse("2024:01:12", Order::YearMonthDay), Some(day));
        assert_eq!(parse("20240112", Order::YearMonthDay), Some(day));
        assert_eq!(parse("1/12/24", Order::MonthDayYear), Some(day));
        assert_eq!(parse("2024-01-12T10:00:00Z", Order::YearMonthDay), Some(day));
        assert_eq!(parse("2024-01-12 6:11:59", Order::YearMonthDay), Some(day));
        assert_eq!(parse("12.01.2024", Order::YearMonthDay), None);
        assert_eq!(parse("31.02.2024", Order::DayMonthYear), None);
        assert_eq!(parse("12.01.1024", Order::DayMonthYear), None);
    }

    #[test]
    fn month_names_in_the_languages_banks_write() {
        let day = date(2024, 1, 12);
        for text in [
            "12-Jan-2024",
            "12 Jan 24",
            "12. Januar 2024",
            "12 janv. 2024",
            "12 de enero de 2024",
            "Jan 12, 2024",
            "Fri, 12 Jan 2024",
            "2024 Jan 12",
            "12 gennaio 2024",
            "12 JANEIRO 2024",
            "mar. 12 janv. 2024",
        ] {
            assert_eq!(parse(text, Order::MonthDayYear), Some(day), "{text}");
        }
        assert_eq!(parse("3 Mär 2024", Order::DayMonthYear), Some(date(2024, 3, 3)));
        assert_eq!(parse("3 août 2024", Order::DayMonthYear), Some(date(2024, 8, 3)));
        assert_eq!(parse("3 dez 2024", Order::DayMonthYear), Some(date(2024, 12, 3)));
        assert_eq!(parse("1st of May 2024", Order::DayMonthYear), Some(date(2024, 5, 1)));
    }

    #[test]
    fn words_that_are_not_months_are_not_dates() {
        assert_eq!(month("jui"), None, "juin or juillet");
        assert_eq!(month("ma"), None);
        assert_eq!(parse("12-Foo-2024", Order::DayMonthYear), None);
        assert_eq!(parse("12 Januarius 2024", Order::DayMonthYear), None);
        assert_eq!(parse("Netflix 12 2024", Order::DayMonthYear), None);
        assert_eq!(parse("Invoice 2024", Order::DayMonthYear), None);
        assert_eq!(parse("", Order::DayMonthYear), None);
    }

    #[test]
    fn patterns_for_the_notes() {
        assert_eq!(pattern("12.01.2024", Order::DayMonthYear), "dd.mm.yyyy");
        assert_eq!(pattern("2012:03:01", Order::YearMonthDay), "yyyy:mm:dd");
        assert_eq!(pattern("12. Januar 2024", Order::DayMonthYear), "dd. mmm yyyy");
        assert_eq!(pattern("12 Jan 24", Order::DayMonthYear), "dd mmm yy");
        assert_eq!(pattern("1/2/24 10:00", Order::MonthDayYear), "mm/dd/yy");
    }

    #[test]
    fn the_order_is_decided_by_the_whole_column_and_its_date_order() {
        assert_eq!(decide(&["03/04/2026", "13/04/2026"]), Some((Order::DayMonthYear, 2)));
        assert_eq!(decide(&["03/04/2026", "04/13/2026"]), Some((Order::MonthDayYear, 2)));
        // Every day is 12 or less: the order that keeps the dates in sequence.
        assert_eq!(
            decide(&["01/02/2026", "01/05/2026", "02/03/2026", "03/01/2026"]),
            Some((Order::MonthDayYear, 4))
        );
        assert_eq!(decide(&["05/03/2021", "05/03/2021"]), Some((Order::DayMonthYear, 2)));
        assert_eq!(decide(&["nope", ""]), None);
        assert_eq!(ambiguous(&["05/03/2021"], Order::DayMonthYear), Some(Order::MonthDayYear));
        assert_eq!(ambiguous(&["05/03/2021", "13/03/2021"], Order::DayMonthYear), None);
        assert_eq!(ambiguous(&["05/05/2021"], Order::DayMonthYear), None);
        assert_eq!(ambiguous(&["12 Jan 2021"], Order::DayMonthYear), None);
    }
}
