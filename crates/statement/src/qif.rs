//! QIF (Quicken Interchange Format) exports: records of lines, each starting with a letter
//! (`D` the date, `T` or `U` the amount, `P` the payee, `M` the memo), ended by `^`, under a
//! `!Type:` header. The date order and the decimal mark are decided for the whole file, as
//! in a CSV. Investment sections (`!Type:Invst`) are not bank transactions and are skipped.

use domain::money::Currency;

use crate::{LeftOut, Problem, Statement, StatementError, amounts, dates};

/// Whether the text is a QIF file: its first line is a `!Type:`, `!Account` or `!Option`.
pub(crate) fn is_qif(text: &str) -> bool {
    let first = text.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or("");
    ["!TYPE:", "!ACCOUNT", "!OPTION"].iter().any(|p| first.to_uppercase().starts_with(p))
}

/// One record as the file gives it.
#[derive(Default)]
struct Record<'a> {
    line: usize,
    date: Option<&'a str>,
    amount: Option<&'a str>,
    text: Vec<&'a str>,
}

pub(crate) fn read(text: &str, default_currency: Currency) -> Result<Statement, StatementError> {
    let mut records: Vec<Record<'_>> = Vec::new();
    let mut current = Record::default();
    let mut investments = false;
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(header) = line.strip_prefix('!') {
            let header = header.to_uppercase();
            if header.starts_with("TYPE:") {
                investments = header.contains("INVST");
            }
            continue;
        }
        if investments {
            continue;
        }
        if current.line == 0 {
            current.line = index + 1;
        }
        let (code, value) = line.split_at(line.chars().next().map_or(0, char::len_utf8));
        let value = value.trim();
        match code {
            "^" => records.push(std::mem::take(&mut current)),
            "D" => current.date = Some(value),
            "T" | "U" if current.amount.is_none() => current.amount = Some(value),
            "P" | "M" if !value.is_empty() => current.text.push(value),
            _ => {}
        }
    }
    if current.date.is_some() || current.amount.is_some() {
        records.push(current);
    }
    let date_values: Vec<&str> = records.iter().filter_map(|r| r.date).collect();
    let Some((order, _)) = dates::decide(&date_values) else {
        return Err(StatementError::NoTable(
            "the QIF file holds no dated transactions (D lines)".into(),
        ));
    };
    let amount_values: Vec<&str> = records.iter().filter_map(|r| r.amount).collect();
    let mark = amounts::decimal_mark(&amount_values);
    let pattern = date_values.first().map_or(String::new(), |v| dates::pattern(v, order));
    let mut statement = Statement {
        notes: vec![format!(
            "QIF, dates {pattern}, decimal {}",
            if mark == ',' { "comma" } else { "point" }
        )],
        ..Statement::default()
    };
    let mut zero = 0;
    for record in records {
        let line = record.line;
        let Some(date) = record.date.and_then(|d| dates::parse(d, order)) else {
            let message = match record.date {
                Some(d) => format!("“{d}” is not a date ({pattern})"),
                None => "a transaction without a date (D line)".to_owned(),
            };
            statement.problems.push(Problem { line, message });
            continue;
        };
        let amount_minor = match record.amount.map(|a| amounts::parse(a, mark, default_currency)) {
            Some(Ok(Some(0))) => {
                zero += 1;
                continue;
            }
            Some(Ok(Some(amount))) => amount,
            Some(Err(message)) => {
                statement.problems.push(Problem { line, message });
                continue;
            }
            Some(Ok(None)) | None => {
                statement.problems.push(Problem { line, message: "no amount (T line)".into() });
                continue;
            }
        };
        statement.add(line, date, amount_minor, default_currency, record.text.join(" "));
    }
    statement.finish(&LeftOut { zero, ..LeftOut::default() }, "the QIF file holds no transactions")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eur() -> Currency {
        Currency::parse("EUR").unwrap()
    }

    #[test]
    fn records_with_the_date_order_of_the_whole_file() {
        let text = "!Type:Bank\nD01/15'24\nT-12.50\nPNETFLIX.COM\nMSubscription\n^\nD02/15'24\nT-12.50\nPNETFLIX.COM\n^\nD02/20'24\nT1,500.00\nPSALARY\n^\nD02/21'24\nT0.00\nPHOLD\n^\n";
        assert!(is_qif(text));
        let statement = read(text, eur()).unwrap();
        assert_eq!(
            statement.as_tuples(),
            vec![
                ("2024-01-15".into(), -1250, "EUR", "NETFLIX.COM Subscription"),
                ("2024-02-15".into(), -1250, "EUR", "NETFLIX.COM"),
                ("2024-02-20".into(), 150_000, "EUR", "SALARY"),
            ]
        );
        assert_eq!(statement.notes[1], "left out as not transactions: 1 with a zero amount");
    }

    #[test]
    fn broken_records_are_reported_and_investments_skipped() {
        let text = "!Type:Bank\nD15.01.2024\nT-12,50\nPA\n^\nT-3,00\nPno date\n^\nD31.02.2024\nT-1,00\n^\nD16.01.2024\nPno amount\n^\n!Type:Invst\nD17.01.2024\nNBuy\nT-1000,00\n^\n!Type:Bank\nD18.01.2024\nT-2,00\nPlast, unterminated";
        let statement = read(text, eur()).unwrap();
        let amounts: Vec<i64> = statement.transactions.iter().map(|t| t.amount_minor).collect();
        assert_eq!(amounts, vec![-1250, -200]);
        let lines: Vec<usize> = statement.problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, vec![6, 9, 12], "{:?}", statement.problems);
        assert!(read("!Type:Bank\nPnothing\n^\n", eur()).is_err());
        assert!(!is_qif("Date,Amount\n"));
    }
}
