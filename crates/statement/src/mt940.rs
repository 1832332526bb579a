//! SWIFT MT940 statements (and the MT942 interim reports banks export alike): each `:61:`
//! line is a transaction (value date `YYMMDD`, an optional booking date, `C` or `D` with `RC`
//! and `RD` for reversals, the amount with a decimal comma), described by the `:86:` field
//! that follows it, over as many lines as it takes. German banks structure `:86:` in `?NN`
//! subfields: the purpose (`?20`–`?29`, `?60`–`?63`) and the counterparty's name (`?32`,
//! `?33`) are kept, codes and account numbers left out. The currency is the opening
//! balance's (`:60F:`).

use domain::money::Currency;

use crate::{LeftOut, Problem, Statement, StatementError, amounts};

/// Whether the text is an MT940 statement: it has `:20:` and `:61:` fields.
pub(crate) fn is_mt940(text: &str) -> bool {
    let head: String = text.chars().take(20_000).collect();
    head.lines().any(|l| l.trim_start().starts_with(":20:"))
        && head.lines().any(|l| l.trim_start().starts_with(":61:"))
}

/// A `:61:` line read: date, signed amount.
fn statement_line(value: &str, currency: Currency) -> Result<(jiff::civil::Date, i64), String> {
    let not_readable = || format!("“{value}” is not an MT940 statement line");
    let digits = |text: &str| text.len() >= 6 && text.bytes().take(6).all(|b| b.is_ascii_digit());
    if !digits(value) {
        return Err(not_readable());
    }
    let (yy, mm, dd) = (&value[..2], &value[2..4], &value[4..6]);
    let year: i16 = yy.parse().map_err(|_| not_readable())?;
    let date = jiff::civil::Date::new(
        if year < 70 { 2000 + year } else { 1900 + year },
        mm.parse().map_err(|_| not_readable())?,
        dd.parse().map_err(|_| not_readable())?,
    )
    .map_err(|_| not_readable())?;
    let mut rest = &value[6..];
    // The booking date, MMDD, when given.
    if rest.len() >= 4 && rest.bytes().take(4).all(|b| b.is_ascii_digit()) {
        rest = &rest[4..];
    }
    let (credit, rest) = if let Some(r) = rest.strip_prefix("RC") {
        (false, r)
    } else if let Some(r) = rest.strip_prefix("RD") {
        (true, r)
    } else if let Some(r) = rest.strip_prefix('C') {
        (true, r)
    } else if let Some(r) = rest.strip_prefix('D') {
        (false, r)
    } else {
        return Err(not_readable());
    };
    // The third letter of the currency code may stand before the amount.
    let rest = match rest.as_bytes() {
        [letter, digit, ..] if letter.is_ascii_alphabetic() && digit.is_ascii_digit() => &rest[1..],
        _ => rest,
    };
    let end = rest.find(|c: char| !c.is_ascii_digit() && c != ',').unwrap_or(rest.len());
    let amount = amounts::parse(&rest[..end], ',', currency)?.ok_or_else(not_readable)?;
    Ok((date, if credit { amount.abs() } else { -amount.abs() }))
}

/// The words of a `:86:` field: the counterparty's name (`?32` and `?33`, one name split in
/// two) then the purpose when it is structured in `?NN` subfields, else all of it.
fn purpose(field: &str) -> String {
    let joined: String = field.lines().map(str::trim_end).collect::<Vec<_>>().join("");
    let text = if joined.contains("?2") || joined.contains("?3") {
        let (mut name, mut purpose) = (String::new(), Vec::new());
        for sub in joined.split('?').skip(1) {
            match sub.get(..2).and_then(|code| code.parse::<u8>().ok()) {
                Some(32 | 33) => name.push_str(&sub[2..]),
                Some(20..=29 | 60..=63) => purpose.push(&sub[2..]),
                _ => {}
            }
        }
        std::iter::once(name.as_str()).chain(purpose).collect::<Vec<_>>().join(" ")
    } else {
        field.lines().map(str::trim).collect::<Vec<_>>().join(" ")
    };
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub(crate) fn read(text: &str, default_currency: Currency) -> Result<Statement, StatementError> {
    // Fields start with `:NN:` or `:NNA:` at the start of a line; other lines continue one.
    let mut fields: Vec<(usize, &str, String)> = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim_end_matches('\r');
        let tag = line
            .strip_prefix(':')
            .and_then(|rest| rest.find(':').map(|end| (&rest[..end], &rest[end + 1..])))
            .filter(|(tag, _)| (2..=3).contains(&tag.len()) && tag.as_bytes()[0].is_ascii_digit());
        match (tag, fields.last_mut()) {
            (Some((tag, value)), _) => fields.push((index + 1, tag, value.to_owned())),
            (None, Some((_, _, value))) if !line.trim().is_empty() && line.trim() != "-" => {
                value.push('\n');
                value.push_str(line);
            }
            _ => {}
        }
    }
    let currency = fields
        .iter()
        .find(|(_, tag, _)| tag.starts_with("60"))
        .and_then(|(_, _, value)| value.get(7..10))
        .and_then(|code| Currency::parse(code).ok())
        .unwrap_or(default_currency);
    let mut statement = Statement {
        notes: vec![format!("MT940, currency {}", currency.code())],
        ..Statement::default()
    };
    let mut zero = 0;
    for (at, (line, tag, value)) in fields.iter().enumerate() {
        if *tag != "61" {
            continue;
        }
        match statement_line(value.lines().next().unwrap_or(""), currency) {
            Ok((_, 0)) => zero += 1,
            Ok((date, amount_minor)) => {
                let description = fields
                    .get(at + 1)
                    .filter(|(_, tag, _)| *tag == "86")
                    .map_or_else(String::new, |(_, _, value)| purpose(value));
                statement.add(*line, date, amount_minor, currency, description);
            }
            Err(message) => statement.problems.push(Problem { line: *line, message }),
        }
    }
    statement.finish(
        &LeftOut { zero, ..LeftOut::default() },
        "the MT940 file holds no transactions (:61:)",
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) const STATEMENT: &str = ":20:STARTUMS\r\n:25:12345678/0001234567\r\n:28C:00001/001\r\n:60F:C240101EUR1234,56\r\n:61:2401150115DR12,99NDDTNONREF//A1\r\n:86:105?00SEPA-LASTSCHRIFT?100599?20EREF+4411\r\n?21Netflix Abo?22Januar?30DEUTDEFF?31DE12500105170648489890?32NETFLIX INTERNATIONAL B\r\n?33.V.?34992\r\n:61:240125C2500,NTRFNONREF\r\n:86:Gehalt Januar ACME GmbH\r\n:61:240126RC5,00NMSCNONREF\r\n:61:240127D0,00NMSCNONREF\r\n:61:2402XXD1,00NMSC\r\n:62F:C240131EUR3716,57\r\n-\r\n";

    #[test]
    fn statement_lines_with_their_purpose() {
        assert!(is_mt940(STATEMENT));
        let statement = read(STATEMENT, Currency::parse("USD").unwrap()).unwrap();
        assert_eq!(
            statement.as_tuples(),
            vec![
                (
                    "2024-01-15".into(),
                    -1299,
                    "EUR",
                    "NETFLIX INTERNATIONAL B.V. EREF+4411 Netflix Abo Januar"
                ),
                ("2024-01-25".into(), 250_000, "EUR", "Gehalt Januar ACME GmbH"),
                ("2024-01-26".into(), -500, "EUR", ""),
            ]
        );
        assert_eq!(statement.problems.len(), 1, "{:?}", statement.problems);
        assert_eq!(statement.problems[0].line, 13);
        assert_eq!(statement.notes[1], "left out as not transactions: 1 with a zero amount");
    }

    #[test]
    fn text_that_is_not_mt940() {
        assert!(!is_mt940("Date,Amount\n:61: in a note\n"));
        assert!(read(":20:X\n:61:garbage\n", Currency::parse("EUR").unwrap()).is_err());
    }
}
