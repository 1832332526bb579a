//! Dates and amounts as each language writes them, from CLDR's data (version 46) for English
//! and Spanish: the medium date (`Dec 3, 2026`, `3 dic 2026`), the decimal and grouping marks
//! with Spanish's minimum of two grouping digits (`1234,56` but `12.345,67`), and the currency
//! pattern and symbols (`€12.99`, `12,99 €`). A template or a message asks for these; none
//! writes a format of its own.

use domain::{Date, Language};

/// What CLDR says about one language.
struct Locale {
    /// Abbreviated month names, January first (format context).
    months: [&'static str; 12],
    /// The medium date: `true` for month before day ("MMM d, y"), `false` for "d MMM y".
    month_first: bool,
    decimal: char,
    group: char,
    /// A number is grouped only when its integer part has at least this many digits past
    /// the first group ("minimumGroupingDigits").
    minimum_grouping: usize,
    /// The currency symbol after the number, with a no-break space before it.
    symbol_after: bool,
    /// Symbols that differ from the currency's code, by code; `None` for English, whose are
    /// `domain`'s (`Currency::symbol`, which agents read too).
    symbols: Option<&'static [(&'static str, &'static str)]>,
}

const ENGLISH: Locale = Locale {
    months: ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"],
    month_first: true,
    decimal: '.',
    group: ',',
    minimum_grouping: 1,
    symbol_after: false,
    symbols: None,
};

const SPANISH: Locale = Locale {
    months: ["ene", "feb", "mar", "abr", "may", "jun", "jul", "ago", "sept", "oct", "nov", "dic"],
    month_first: false,
    decimal: ',',
    group: '.',
    minimum_grouping: 2,
    symbol_after: true,
    // CLDR gives most currencies no symbol in Spanish: their code is written.
    symbols: Some(&[("EUR", "€"), ("USD", "US$")]),
};

fn locale(language: Language) -> &'static Locale {
    match language {
        Language::English => &ENGLISH,
        Language::Spanish => &SPANISH,
    }
}

/// The medium date: `Dec 3, 2026`, `3 dic 2026`.
pub fn date(language: Language, on: Date) -> String {
    let locale = locale(language);
    let month = usize::try_from(on.month() - 1).ok().and_then(|m| locale.months.get(m));
    let month = month.copied().unwrap_or_default();
    if locale.month_first {
        format!("{month} {}, {}", on.day(), on.year())
    } else {
        format!("{} {month} {}", on.day(), on.year())
    }
}

/// A month of a year (CLDR's "yMMM"): `Dec 2026`, `dic 2026`.
pub fn month(language: Language, on: Date) -> String {
    let month = usize::try_from(on.month() - 1).ok().and_then(|m| locale(language).months.get(m));
    format!("{} {}", month.copied().unwrap_or_default(), on.year())
}

/// A decimal written as Exhale writes them for agents ("-1234.5", "12"), with the language's
/// marks: `-1,234.5`, `-1234,5`. Text that is not such a decimal comes back as it was.
pub fn number(language: Language, decimal: &str) -> String {
    let locale = locale(language);
    let (sign, digits) = match decimal.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", decimal),
    };
    let (integer, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let well_formed = !integer.is_empty()
        && integer.bytes().all(|b| b.is_ascii_digit())
        && fraction.bytes().all(|b| b.is_ascii_digit());
    if !well_formed {
        return decimal.to_owned();
    }
    let mut out = String::from(sign);
    let grouped = integer.len() >= 3 + locale.minimum_grouping;
    for (i, digit) in integer.chars().enumerate() {
        if grouped && i > 0 && (integer.len() - i) % 3 == 0 {
            out.push(locale.group);
        }
        out.push(digit);
    }
    if !fraction.is_empty() {
        out.push(locale.decimal);
        out.push_str(fraction);
    }
    out
}

/// An amount, from its decimal ("-12.99", as an op's output holds it) and its currency's code:
/// `-€12.99`, `-12,99 €`, `SEK 12.99`, `12,99 SEK`.
pub fn money(language: Language, decimal: &str, currency: &str) -> String {
    let locale = locale(language);
    let (sign, digits) = match decimal.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", decimal),
    };
    let digits = number(language, digits);
    let symbol = match locale.symbols {
        Some(symbols) => symbols.iter().find(|(code, _)| *code == currency).map(|(_, s)| *s),
        None => domain::Currency::parse(currency).ok().and_then(|c| c.symbol()),
    };
    match symbol {
        Some(symbol) if !locale.symbol_after && !symbol.chars().all(char::is_alphabetic) => {
            format!("{sign}{symbol}{digits}")
        }
        Some(symbol) if !locale.symbol_after => format!("{sign}{symbol}\u{a0}{digits}"),
        Some(symbol) => format!("{sign}{digits}\u{a0}{symbol}"),
        None if locale.symbol_after => format!("{sign}{digits}\u{a0}{currency}"),
        None => format!("{sign}{currency}\u{a0}{digits}"),
    }
}

/// An amount an op gave (its decimal and currency) as `language` writes it.
pub fn amount(
    language: Language,
    decimal: domain::money::Decimal,
    currency: domain::Currency,
) -> String {
    money(language, &decimal.to_string(), currency.code())
}

/// A decimal typed by a person in `language` ("12,50", "1.234,50" in Spanish; "1,234.50" in
/// English) as Exhale reads decimals ("1234.50"); `None` when it is not one. Either mark is
/// taken as the decimal one when it is the only mark and not followed by exactly three
/// digits, so "12.50" typed in Spanish still means twelve and a half.
pub fn typed_decimal(language: Language, typed: &str) -> Option<String> {
    let locale = locale(language);
    let text: String =
        typed.trim().chars().filter(|c| !matches!(c, ' ' | '\u{a0}' | '\u{202f}')).collect();
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text.as_str()),
    };
    let marks: Vec<(usize, char)> =
        digits.char_indices().filter(|(_, c)| matches!(c, '.' | ',')).collect();
    let decimal_at = match marks.as_slice() {
        [] => None,
        [(at, mark)] => {
            let after = digits.len() - at - 1;
            (*mark == locale.decimal || after != 3).then_some(*at)
        }
        [.., (at, mark)] if *mark == locale.decimal => Some(*at),
        _ => None,
    };
    let (integer, fraction) = match decimal_at {
        Some(at) => (&digits[..at], &digits[at + 1..]),
        None => (digits, ""),
    };
    let integer: String = integer
        .chars()
        .filter(|c| *c != locale.group && !(decimal_at.is_none() && matches!(c, '.' | ',')))
        .collect();
    let valid = !integer.is_empty()
        && integer.bytes().all(|b| b.is_ascii_digit())
        && fraction.bytes().all(|b| b.is_ascii_digit())
        && !(decimal_at.is_some() && fraction.is_empty());
    valid.then(|| {
        if fraction.is_empty() {
            format!("{sign}{integer}")
        } else {
            format!("{sign}{integer}.{fraction}")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use Language::{English, Spanish};

    #[test]
    fn dates_are_the_medium_date_of_each_language() {
        let on = domain::Date::new(2026, 12, 3).unwrap();
        assert_eq!(date(English, on), "Dec 3, 2026");
        assert_eq!(date(Spanish, on), "3 dic 2026");
        let september = domain::Date::new(2027, 9, 30).unwrap();
        assert_eq!(date(Spanish, september), "30 sept 2027");
        assert_eq!(
            (month(English, on), month(Spanish, september)),
            ("Dec 2026".into(), "sept 2027".into())
        );
    }

    #[test]
    fn amounts_take_each_languages_marks_pattern_and_symbol() {
        for (decimal, currency, english, spanish) in [
            ("12.99", "EUR", "€12.99", "12,99\u{a0}€"),
            ("-12.99", "EUR", "-€12.99", "-12,99\u{a0}€"),
            ("1234.56", "EUR", "€1,234.56", "1234,56\u{a0}€"),
            ("12345.67", "USD", "$12,345.67", "12.345,67\u{a0}US$"),
            ("1234567", "JPY", "¥1,234,567", "1.234.567\u{a0}JPY"),
            ("5.00", "SEK", "SEK\u{a0}5.00", "5,00\u{a0}SEK"),
            ("-0.5", "CHF", "-CHF\u{a0}0.5", "-0,5\u{a0}CHF"),
        ] {
            assert_eq!(money(English, decimal, currency), english, "{decimal} {currency}");
            assert_eq!(money(Spanish, decimal, currency), spanish, "{decimal} {currency}");
        }
        assert_eq!(number(Spanish, "lots"), "lots");
    }

    #[test]
    fn a_typed_decimal_is_read_with_the_readers_mark() {
        for (language, typed, read) in [
            (Spanish, "12,50", Some("12.50")),
            (Spanish, "1.234,50", Some("1234.50")),
            (Spanish, "-1.234", Some("-1234")),
            (Spanish, "12.50", Some("12.50")),
            (Spanish, "12,5 ", Some("12.5")),
            (English, "1,234.50", Some("1234.50")),
            (English, "12,50", Some("12.50")),
            (English, "1,234", Some("1234")),
            (English, "400", Some("400")),
            (English, "1.2.3", None),
            (English, "12,", None),
            (Spanish, "", None),
            (Spanish, "lots", None),
        ] {
            assert_eq!(typed_decimal(language, typed).as_deref(), read, "{language} {typed:?}");
        }
    }
}
