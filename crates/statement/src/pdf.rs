//! PDF statements that contain text (not scans): the text of every page, then each line that
//! starts with a date and ends with amounts becomes a row of date, description and amount,
//! read like a CSV with those three columns. When most such lines end with two amounts, the
//! last is the running balance and the one before it the transaction's.

use crate::{StatementError, csv::Rows};

/// Whether a token is an amount as statements print them ("-12.99", "1,234.50", "12,99-",
/// "(7.50)", "€9.99").
fn is_amount(token: &str) -> bool {
    let core = token.trim_matches(|c: char| matches!(c, '(' | ')' | '+' | '-' | '€' | '$' | '£'));
    let digits = core.chars().filter(char::is_ascii_digit).count();
    digits > 0
        && core.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | ',' | '\''))
        && core.rfind(['.', ',']).is_some_and(|at| core.len() - at - 1 == 2)
}

/// Whether a token could be a date ("15/01/2026", "2026-01-15", "15.01.26").
fn is_date(token: &str) -> bool {
    let digits = token.chars().filter(char::is_ascii_digit).count();
    (6..=8).contains(&digits)
        && token.chars().all(|c| c.is_ascii_digit() || matches!(c, '/' | '.' | '-'))
}

/// The text of a PDF, or why there is none.
fn text(bytes: &[u8]) -> Result<String, StatementError> {
    // The extractor may panic on a malformed file; that is the file's fault, reported as such.
    let extracted = std::panic::catch_unwind(|| pdf_extract::extract_text_from_mem(bytes));
    match extracted {
        Ok(Ok(text)) if text.chars().any(char::is_alphanumeric) => Ok(text),
        Ok(Ok(_)) => Err(StatementError::Pdf),
        Ok(Err(_)) | Err(_) => {
            Err(StatementError::NoTable("the PDF is damaged or encrypted".into()))
        }
    }
}

/// The statement lines of a PDF as rows under a date, description and amount header.
pub(crate) fn rows(bytes: &[u8]) -> Result<Rows, StatementError> {
    let text = text(bytes)?;
    let mut found: Vec<(usize, String, String, Vec<String>)> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let Some((first, rest)) = tokens.split_first() else { continue };
        if !is_date(first) {
            continue;
        }
        let amounts: Vec<String> =
            rest.iter().rev().take_while(|t| is_amount(t)).map(|t| (*t).to_owned()).collect();
        if amounts.is_empty() {
            continue;
        }
        let description = rest[..rest.len() - amounts.len()].join(" ");
        found.push((index + 1, (*first).to_owned(), description, amounts));
    }
    if found.is_empty() {
        return Err(StatementError::NoTable(
            "no line of the PDF starts with a date and ends with an amount".into(),
        ));
    }
    let with_balance =
        found.iter().filter(|(.., amounts)| amounts.len() >= 2).count() * 2 > found.len();
    let mut rows: Rows = vec![(0, vec!["Date".into(), "Description".into(), "Amount".into()])];
    for (line, date, description, amounts) in found {
        // `amounts` is last first: the balance, then the transaction's amount.
        let amount = if with_balance && amounts.len() >= 2 { &amounts[1] } else { &amounts[0] };
        rows.push((line, vec![date, description, amount.clone()]));
    }
    Ok(rows)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A one-page PDF with these lines in Helvetica, as a statement printer makes them.
    pub(crate) fn pdf_with_lines(lines: &[&str]) -> Vec<u8> {
        let mut content = String::from("BT /F1 10 Tf 50 760 Td 14 TL\n");
        for line in lines {
            let escaped = line.replace('\\', "\\\\").replace('(', "\\(").replace(')', "\\)");
            content.push_str(&format!("({escaped}) Tj T*\n"));
        }
        content.push_str("ET");
        let objects = [
            "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
            "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>".to_owned(),
            format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len()),
            "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_owned(),
        ];
        let mut pdf = b"%PDF-1.4\n".to_vec();
        let mut offsets = Vec::new();
        for (i, object) in objects.iter().enumerate() {
            offsets.push(pdf.len());
            pdf.extend_from_slice(format!("{} 0 obj\n{object}\nendobj\n", i + 1).as_bytes());
        }
        let xref = pdf.len();
        pdf.extend_from_slice(
            format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
        );
        for offset in offsets {
            pdf.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
        }
        pdf.extend_from_slice(
            format!(
                "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
                objects.len() + 1
            )
            .as_bytes(),
        );
        pdf
    }

    #[test]
    fn statement_lines_become_rows_and_the_balance_is_left_out() {
        let pdf = pdf_with_lines(&[
            "Example Bank - Current account statement",
            "Date Description Amount Balance",
            "15/01/2026 NETFLIX.COM 866-579 -12.99 1,187.01",
            "17/01/2026 TESCO STORES 4411 -45.20 1,141.81",
            "25/01/2026 SALARY ACME 2,500.00 3,641.81",
            "Page 1 of 1",
        ]);
        let rows = rows(&pdf).unwrap();
        assert_eq!(rows.len(), 4, "{rows:?}");
        assert_eq!(
            rows[1].1,
            vec!["15/01/2026".to_owned(), "NETFLIX.COM 866-579".into(), "-12.99".into()]
        );
        assert_eq!(rows[3].1[2], "2,500.00");
    }

    #[test]
    fn damaged_and_textless_pdfs_are_refused_with_a_reason() {
        assert!(matches!(rows(b"%PDF-1.4\nnot really a pdf"), Err(StatementError::NoTable(_))));
        let words_only = pdf_with_lines(&["Thank you for banking with us"]);
        assert!(matches!(rows(&words_only), Err(StatementError::NoTable(_))));
    }
}
