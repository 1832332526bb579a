//! Rows to transactions: find the header and the columns (by their names in several
//! languages, else by what the values look like), decide the date format from the whole
//! column, read amounts with either decimal mark and thousands separators, from one signed
//! column or from separate debit and credit columns.

use domain::money::{Currency, Money};
use jiff::civil::Date;

use crate::{Problem, Statement, StatementError, Transaction, csv::Rows};

const DATE_NAMES: &[&str] = &[
    "date",
    "datum",
    "fecha",
    "data",
    "buchungstag",
    "booking",
    "posted",
    "transaction date",
    "valuta",
    "wertstellung",
];
const AMOUNT_NAMES: &[&str] =
    &["amount", "betrag", "importe", "montant", "value", "umsatz", "sum", "bedrag"];
const DEBIT_NAMES: &[&str] =
    &["debit", "withdrawal", "paid out", "money out", "soll", "ausgang", "cargo", "débit", "out"];
const CREDIT_NAMES: &[&str] =
    &["credit", "deposit", "paid in", "money in", "haben", "eingang", "abono", "crédit", "in"];
const TEXT_NAMES: &[&str] = &[
    "description",
    "payee",
    "merchant",
    "name",
    "details",
    "memo",
    "narrative",
    "verwendungszweck",
    "beschreibung",
    "empfänger",
    "auftraggeber",
    "concepto",
    "libellé",
    "libelle",
    "reference",
    "text",
    "counterparty",
    "beneficiary",
];
const CURRENCY_NAMES: &[&str] = &["currency", "währung", "waehrung", "moneda", "devise", "ccy"];

/// Date formats tried on a whole column: (format, name shown to the person).
const DATE_FORMATS: &[(&str, &str)] = &[
    ("%Y-%m-%d", "yyyy-mm-dd"),
    ("%d.%m.%Y", "dd.mm.yyyy"),
    ("%d/%m/%Y", "dd/mm/yyyy"),
    ("%m/%d/%Y", "mm/dd/yyyy"),
    ("%d-%m-%Y", "dd-mm-yyyy"),
    ("%Y/%m/%d", "yyyy/mm/dd"),
    ("%d.%m.%y", "dd.mm.yy"),
    ("%d/%m/%y", "dd/mm/yy"),
    ("%m/%d/%y", "mm/dd/yy"),
    ("%Y%m%d", "yyyymmdd"),
];

fn parse_date(text: &str, format: &str) -> Option<Date> {
    // Some exports add a time: keep the date part.
    let text = text.split(['T', ' ']).next().unwrap_or(text);
    Date::strptime(format, text).ok()
}

/// The format under which the most values of a column are dates; ties go to the earlier
/// format in the list (day before month when every day is 12 or less).
fn date_format(values: &[&str]) -> Option<(&'static str, &'static str, usize)> {
    DATE_FORMATS
        .iter()
        .map(|&(format, name)| {
            (format, name, values.iter().filter(|v| parse_date(v, format).is_some()).count())
        })
        .filter(|&(.., count)| count > 0)
        .max_by(|a, b| a.2.cmp(&b.2).then(std::cmp::Ordering::Greater))
}

/// The decimal mark a column uses: the separator that most often has one or two digits after
/// it at the end of a value.
fn decimal_mark(values: &[&str]) -> char {
    let mut commas = 0;
    let mut points = 0;
    for value in values {
        let digits: String =
            value.chars().filter(|c| c.is_ascii_digit() || matches!(c, ',' | '.')).collect();
        if let Some(position) = digits.rfind([',', '.']) {
            let after = digits.len() - position - 1;
            if (1..=2).contains(&after) {
                if digits.as_bytes()[position] == b',' { commas += 1 } else { points += 1 }
            }
        }
    }
    if commas > points { ',' } else { '.' }
}

/// Reads one amount: signs before or after, parentheses for negatives, a currency symbol or
/// code around it, spaces, thousands separators.
fn parse_amount(text: &str, mark: char, currency: Currency) -> Result<Option<i64>, String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Ok(None);
    }
    let mut negative = trimmed.starts_with('(') && trimmed.ends_with(')');
    let mut body = String::new();
    let mut letters = String::new();
    for c in trimmed.chars() {
        match c {
            '0'..='9' => body.push(c),
            '-' | '−' => negative = true,
            '+' | '(' | ')' | ' ' | '\u{a0}' | '\'' | '€' | '$' | '£' | '¥' | '₹' | '₽' | '₩' =>
                {}
            c if c == mark => body.push('.'),
            ',' | '.' => {} // the thousands separator
            c if c.is_alphabetic() => letters.push(c),
            _ => return Err(format!("“{trimmed}” is not an amount")),
        }
    }
    let letters_ok = letters.is_empty()
        || Currency::parse(&letters.to_uppercase()).is_ok()
        || matches!(letters.to_uppercase().as_str(), "CR" | "DR");
    if !letters_ok || body.is_empty() || body.matches('.').count() > 1 {
        return Err(format!("“{trimmed}” is not an amount"));
    }
    if letters.eq_ignore_ascii_case("DR") {
        negative = true;
    }
    // Banks give two decimals even for currencies with none or three: round to the currency.
    let exponent = usize::from(currency.exponent());
    let (whole, fraction) = body.split_once('.').unwrap_or((&body, ""));
    let fraction: String = fraction.chars().chain(std::iter::repeat('0')).take(exponent).collect();
    let money = Money::parse(format!("{whole}.{fraction}").trim_end_matches('.'), currency)
        .map_err(|err| format!("“{trimmed}”: {err}"))?;
    Ok(Some(if negative { -money.minor() } else { money.minor() }))
}

struct Columns {
    date: usize,
    amount: Option<usize>,
    debit: Option<usize>,
    credit: Option<usize>,
    text: Vec<usize>,
    currency: Option<usize>,
}

fn find(header: &[String], names: &[&str], taken: &[usize]) -> Option<usize> {
    let lower: Vec<String> = header.iter().map(|h| h.to_lowercase()).collect();
    // An exact name first, then a header containing the name.
    names
        .iter()
        .find_map(|name| lower.iter().position(|h| h == name).filter(|i| !taken.contains(i)))
        .or_else(|| {
            names.iter().find_map(|name| {
                lower
                    .iter()
                    .enumerate()
                    .position(|(i, h)| !taken.contains(&i) && name.len() > 2 && h.contains(name))
            })
        })
}

/// Columns by header names; `None` when the first row is not a header.
fn by_names(header: &[String]) -> Option<Columns> {
    let date = find(header, DATE_NAMES, &[])?;
    let amount = find(header, AMOUNT_NAMES, &[date]);
    let taken: Vec<usize> = [Some(date), amount].into_iter().flatten().collect();
    let debit = if amount.is_none() { find(header, DEBIT_NAMES, &taken) } else { None };
    let credit = if amount.is_none() { find(header, CREDIT_NAMES, &taken) } else { None };
    if amount.is_none() && debit.is_none() && credit.is_none() {
        return None;
    }
    let taken: Vec<usize> = [Some(date), amount, debit, credit].into_iter().flatten().collect();
    let currency = find(header, CURRENCY_NAMES, &taken);
    let lower: Vec<String> = header.iter().map(|h| h.to_lowercase()).collect();
    let mut text: Vec<usize> = TEXT_NAMES
        .iter()
        .filter_map(|name| lower.iter().position(|h| h.contains(name)))
        .filter(|i| !taken.contains(i) && Some(*i) != currency)
        .collect();
    // In the file's order: the payee usually comes before the purpose.
    text.sort_unstable();
    text.dedup();
    Some(Columns { date, amount, debit, credit, text, currency })
}

/// Columns by what the values look like, for files without a header.
fn by_values(rows: &[&Vec<String>], currency: Currency) -> Option<Columns> {
    let width = rows.iter().map(|r| r.len()).max()?;
    let column = |i: usize| -> Vec<&str> {
        rows.iter().filter_map(|r| r.get(i).map(String::as_str)).collect()
    };
    let date = (0..width).max_by_key(|&i| date_format(&column(i)).map_or(0, |f| f.2))?;
    date_format(&column(date))?;
    let numeric = |i: usize| {
        let values = column(i);
        let mark = decimal_mark(&values);
        values.iter().filter(|v| matches!(parse_amount(v, mark, currency), Ok(Some(_)))).count()
    };
    let amount = (0..width).filter(|&i| i != date).max_by_key(|&i| numeric(i))?;
    let text = (0..width)
        .filter(|&i| i != date && i != amount)
        .max_by_key(|&i| {
            column(i).iter().map(|v| v.chars().filter(|c| c.is_alphabetic()).count()).sum::<usize>()
        })
        .into_iter()
        .collect();
    Some(Columns { date, amount: Some(amount), debit: None, credit: None, text, currency: None })
}

/// Field `i` of a row, or "" when the row is short or there is no such column.
fn value(row: &[String], i: Option<usize>) -> &str {
    i.and_then(|i| row.get(i)).map(String::as_str).unwrap_or("")
}

pub(crate) fn read(rows: &Rows, default_currency: Currency) -> Result<Statement, StatementError> {
    // The header is the first row that names a date column and an amount; banks put account
    // details above it.
    let header_at = rows.iter().take(30).position(|(_, row)| by_names(row).is_some());
    let (columns, data): (Columns, Vec<&(usize, Vec<String>)>) = match header_at {
        Some(at) => (
            by_names(&rows[at].1).ok_or_else(|| StatementError::NoTable("no header".into()))?,
            rows[at + 1..].iter().collect(),
        ),
        None => {
            let data: Vec<&(usize, Vec<String>)> = rows.iter().collect();
            let values: Vec<&Vec<String>> = data.iter().map(|(_, r)| r).collect();
            let columns = by_values(&values, default_currency).ok_or_else(|| {
                StatementError::NoTable("no column of dates and amounts. Export the statement as CSV with a date and an amount per row.".into())
            })?;
            (columns, data)
        }
    };
    let dates: Vec<&str> = data.iter().map(|(_, row)| value(row, Some(columns.date))).collect();
    let Some((format, format_name, _)) = date_format(&dates) else {
        return Err(StatementError::NoTable(
            "the date column holds no dates Exhale can read".into(),
        ));
    };
    let money_columns: Vec<usize> =
        [columns.amount, columns.debit, columns.credit].into_iter().flatten().collect();
    let amounts: Vec<&str> = data
        .iter()
        .flat_map(|(_, row)| money_columns.iter().map(|&i| value(row, Some(i))))
        .collect();
    let mark = decimal_mark(&amounts);
    let mut statement = Statement::default();
    statement.notes.push(format!(
        "dates {format_name}, decimal {}{}",
        if mark == ',' { "comma" } else { "point" },
        if columns.amount.is_none() { ", separate debit and credit columns" } else { "" }
    ));
    for (line, row) in data {
        let date_text = value(row, Some(columns.date));
        let Some(date) = parse_date(date_text, format) else {
            statement.problems.push(Problem {
                line: *line,
                message: format!("“{date_text}” is not a date ({format_name})"),
            });
            continue;
        };
        let currency = match value(row, columns.currency) {
            "" => default_currency,
            code => match Currency::parse(&code.to_uppercase()) {
                Ok(currency) => currency,
                Err(_) => {
                    statement.problems.push(Problem {
                        line: *line,
                        message: format!("“{code}” is not a currency code"),
                    });
                    continue;
                }
            },
        };
        let amount = match columns.amount {
            Some(i) => parse_amount(value(row, Some(i)), mark, currency),
            None => {
                let debit = parse_amount(value(row, columns.debit), mark, currency);
                let credit = parse_amount(value(row, columns.credit), mark, currency);
                match (debit, credit) {
                    (Ok(debit), Ok(credit)) => Ok(match (debit, credit) {
                        (None, None) => None,
                        (d, c) => Some(c.unwrap_or(0).abs() - d.unwrap_or(0).abs()),
                    }),
                    (Err(err), _) | (_, Err(err)) => Err(err),
                }
            }
        };
        let amount_minor = match amount {
            Ok(Some(amount)) => amount,
            Ok(None) => {
                statement.problems.push(Problem { line: *line, message: "no amount".into() });
                continue;
            }
            Err(message) => {
                statement.problems.push(Problem { line: *line, message });
                continue;
            }
        };
        let description = columns
            .text
            .iter()
            .map(|&i| value(row, Some(i)))
            .filter(|text| !text.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        statement.transactions.push(Transaction {
            line: *line,
            date,
            amount_minor,
            currency,
            description,
        });
    }
    if statement.transactions.is_empty() {
        let why = statement
            .problems
            .first()
            .map_or("the file has a header but no rows".to_owned(), |p| {
                format!("line {}: {}", p.line, p.message)
            });
        return Err(StatementError::NoTable(why));
    }
    Ok(statement)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csv::split;

    fn eur() -> Currency {
        Currency::parse("EUR").unwrap()
    }

    fn read_text(text: &str) -> Statement {
        read(&split(text).0, eur()).unwrap()
    }

    #[test]
    fn amounts_in_every_common_shape() {
        let eur = eur();
        assert_eq!(parse_amount("-12.99", '.', eur), Ok(Some(-1299)));
        assert_eq!(parse_amount("1,234.50", '.', eur), Ok(Some(123_450)));
        assert_eq!(parse_amount("-1.234,50", ',', eur), Ok(Some(-123_450)));
        assert_eq!(parse_amount("12,99-", ',', eur), Ok(Some(-1299)));
        assert_eq!(parse_amount("(7.50)", '.', eur), Ok(Some(-750)));
        assert_eq!(parse_amount("€ 9,99", ',', eur), Ok(Some(999)));
        assert_eq!(parse_amount("9.99 EUR", '.', eur), Ok(Some(999)));
        assert_eq!(parse_amount("5", '.', eur), Ok(Some(500)));
        assert_eq!(parse_amount("", '.', eur), Ok(None));
        assert!(parse_amount("12abc", '.', eur).unwrap_err().contains("not an amount"));
        assert!(parse_amount("=SUM(A1)", '.', eur).is_err());
        let jpy = Currency::parse("JPY").unwrap();
        assert_eq!(parse_amount("-1500", '.', jpy), Ok(Some(-1500)));
    }

    #[test]
    fn the_date_format_is_decided_by_the_whole_column() {
        let text = "Date,Description,Amount\n03/04/2026,A,-1\n13/04/2026,B,-2\n";
        let statement = read_text(text);
        assert_eq!(statement.transactions[0].date, jiff::civil::date(2026, 4, 3));
        let text = "Date,Description,Amount\n03/04/2026,A,-1\n04/13/2026,B,-2\n";
        assert_eq!(read_text(text).transactions[0].date, jiff::civil::date(2026, 3, 4));
    }

    #[test]
    fn a_german_export_with_account_lines_above_the_header() {
        let text = "Kontonummer;DE12 3456\nZeitraum;01.01.2026 - 31.03.2026\n\nBuchungstag;Wertstellung;Auftraggeber / Empfänger;Verwendungszweck;Betrag;Währung\n02.01.2026;02.01.2026;NETFLIX.COM;Abo 123;-13,99;EUR\n05.01.2026;05.01.2026;Arbeitgeber GmbH;Gehalt;2.500,00;EUR\n31.02.2026;31.02.2026;Broken;x;-1,00;EUR\n";
        let statement = read_text(text);
        assert_eq!(statement.transactions.len(), 2);
        assert_eq!(statement.transactions[0].amount_minor, -1399);
        assert_eq!(statement.transactions[0].description, "NETFLIX.COM Abo 123");
        assert_eq!(statement.transactions[1].amount_minor, 250_000);
        assert_eq!(statement.problems.len(), 1, "31 February does not exist");
        assert_eq!(statement.problems[0].line, 7);
        assert!(statement.notes[0].contains("dd.mm.yyyy") && statement.notes[0].contains("comma"));
    }

    #[test]
    fn separate_debit_and_credit_columns_and_a_currency_column() {
        let text = "Date,Details,Money out,Money in,Currency\n2026-01-03,Spotify,9.99,,GBP\n2026-01-04,Refund,,4.00,GBP\n2026-01-05,Odd,12x,,GBP\n";
        let statement = read_text(text);
        assert_eq!(statement.transactions[0].amount_minor, -999);
        assert_eq!(statement.transactions[0].currency.code(), "GBP");
        assert_eq!(statement.transactions[1].amount_minor, 400);
        assert_eq!(statement.problems.len(), 1);
    }

    #[test]
    fn files_without_a_header_are_read_by_their_values() {
        let statement = read_text("2026-01-02,AMAZON PRIME,-8.99\n2026-02-02,AMAZON PRIME,-8.99\n");
        assert_eq!(statement.transactions.len(), 2);
        assert_eq!(statement.transactions[1].description, "AMAZON PRIME");
    }

    #[test]
    fn ragged_rows_are_reported_and_the_rest_still_read() {
        let text = "Date,Description,Amount\n2026-01-02,Netflix,-12.99\n2026-01-03\n2026-01-04,Only two\n2026-01-05,Spotify,-9.99,extra,fields\n";
        let statement = read_text(text);
        assert_eq!(statement.transactions.len(), 2, "{statement:?}");
        let lines: Vec<usize> = statement.problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, vec![3, 4]);
        assert!(statement.problems.iter().all(|p| p.message == "no amount"));
    }

    #[test]
    fn a_table_without_dates_or_amounts_is_refused_with_a_reason() {
        let err = read(&split("name,colour\nx,red\n").0, eur()).unwrap_err();
        assert!(matches!(err, StatementError::NoTable(_)), "{err:?}");
    }
}
