//! PDF statements that contain text (not scans): every character of every page with its
//! position, put back into lines by where it stands (so a statement whose text is written
//! column by column reads line by line), then each line that starts with a date and ends with
//! amounts becomes a row of date, description and amount, read like a CSV with those three
//! columns. When most such lines end with two amounts, the last is the running balance and the
//! one before it the transaction's. A PDF without text is told apart from one that cannot be
//! opened.
//!
//! The PDF reader (pdf-extract on lopdf) is never let at a file whose cost is not bounded
//! first: `file.rs` checks the file before lopdf loads it, `pages.rs` the document before
//! pdf-extract reads its pages, both in the limits of `limits.rs`, so a small file that would unpack
//! to gigabytes, nest without end or draw the same thing a million times is refused in
//! milliseconds; `syntax.rs` and `filters.rs` are the reading those checks share.

mod file;
mod filters;
pub(crate) mod limits;
mod pages;
mod syntax;

pub(crate) use limits::MAX_CHARACTERS;
pub use limits::{MAX_EXPANDED_BYTES, MAX_STREAM_BYTES};

use pdf_extract::{Document, MediaBox, OutputDev, OutputError, Transform};

use crate::{
    StatementError,
    csv::Rows,
    dates::{self, Order},
};

/// Whether a token is an amount as statements print them ("-12.99", "1,234.50", "12,99-",
/// "(7.50)", "€9.99").
fn is_amount(token: &str) -> bool {
    let core = token.trim_matches(|c: char| matches!(c, '(' | ')' | '+' | '-' | '€' | '$' | '£'));
    let digits = core.chars().filter(char::is_ascii_digit).count();
    digits > 0
        && core.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | ',' | '\''))
        && core.rfind(['.', ',']).is_some_and(|at| core.len() - at - 1 == 2)
}

/// How many of the first tokens make a date ("15/01/2026", "2026-01-15", "15 Jan 2026").
fn date_tokens(tokens: &[&str]) -> usize {
    // The line starts with the date: a number or a month's name.
    let starts_a_date = tokens.first().is_some_and(|first| {
        first.starts_with(|c: char| c.is_ascii_digit()) || dates::month(first).is_some()
    });
    if !starts_a_date {
        return 0;
    }
    // The fewest tokens that read as a date: what follows is the description. A date of
    // several tokens has a month's name ("15 Jan 2026"); numbers alone are one token, so that
    // "01/12 01/13" (two dates without a year) is not read as 12 January 2001.
    (1..=3.min(tokens.len()))
        .find(|&n| {
            if n > 1 && !tokens[..n].iter().any(|t| dates::month(t.trim_matches('.')).is_some()) {
                return false;
            }
            let text = tokens[..n].join(" ");
            [Order::DayMonthYear, Order::MonthDayYear, Order::YearMonthDay]
                .iter()
                .any(|&order| dates::parse(&text, order).is_some())
        })
        .unwrap_or(0)
}

/// A day and month without a year at the start of a line ("01.02.", "01/12"), and whether
/// its separator is a dot.
fn day_and_month(token: &str) -> Option<(i8, i8, bool)> {
    let dotted = token.contains('.');
    let trimmed = token.trim_end_matches('.');
    let (a, b) = trimmed.split_once(['.', '/', '-'])?;
    let number = |part: &str| -> Option<i8> {
        (!part.is_empty() && part.len() <= 2 && part.bytes().all(|b| b.is_ascii_digit()))
            .then(|| part.parse().ok())
            .flatten()
    };
    Some((number(a)?, number(b)?, dotted))
}

/// Dates printed without a year, as German statements ("01.02. 03.02. Lastschrift") and US
/// card statements ("01/12 01/13 NETFLIX.COM") print them: given the years of the full dates
/// elsewhere in the text (the statement's period), each takes the year that puts it within
/// that period, give or take six weeks. Day or month first is decided for the whole text.
struct YearlessDates {
    first: jiff::civil::Date,
    last: jiff::civil::Date,
    day_first: bool,
}

impl YearlessDates {
    fn of(lines: &[String]) -> Option<Self> {
        let mut full: Vec<jiff::civil::Date> = Vec::new();
        let mut pairs: Vec<(i8, i8, bool)> = Vec::new();
        for line in lines {
            let tokens: Vec<&str> = line.split_whitespace().collect();
            if date_tokens(&tokens) == 0 {
                pairs.extend(tokens.first().and_then(|t| day_and_month(t)));
            }
            for token in &tokens {
                let token = token.trim_matches(|c: char| !c.is_ascii_digit());
                if token.len() >= 8 {
                    full.extend(
                        [Order::DayMonthYear, Order::MonthDayYear, Order::YearMonthDay]
                            .iter()
                            .find_map(|&order| dates::parse(token, order)),
                    );
                }
            }
        }
        if pairs.is_empty() {
            return None;
        }
        let day_first = pairs.iter().any(|p| p.0 > 12)
            || !pairs.iter().any(|p| p.1 > 12)
                && pairs.iter().filter(|p| p.2).count() * 2 >= pairs.len();
        Some(Self { first: *full.iter().min()?, last: *full.iter().max()?, day_first })
    }

    /// The date the line starts with, and how many tokens it takes (a second year-less date
    /// after the first, the day it was booked, is left out of the description).
    fn date_of(&self, tokens: &[&str]) -> Option<(jiff::civil::Date, usize)> {
        let (a, b, _) = day_and_month(tokens.first()?)?;
        let (day, month) = if self.day_first { (a, b) } else { (b, a) };
        let slack = jiff::Span::new().days(45);
        let (from, to) = (self.first.checked_sub(slack).ok()?, self.last.checked_add(slack).ok()?);
        let date = (from.year()..=to.year())
            .filter_map(|year| jiff::civil::Date::new(year, month, day).ok())
            .find(|date| (from..=to).contains(date))?;
        let used = if tokens.get(1).and_then(|t| day_and_month(t)).is_some() { 2 } else { 1 };
        Some((date, used))
    }
}

/// One character where the page puts it (28 bytes: a statement has hundreds of thousands).
#[derive(Clone, Copy)]
struct Glyph {
    page: u32,
    x: f32,
    y: f32,
    end: f32,
    size: f32,
    /// Where its text is in `Positions::text` (usually one character, sometimes a ligature's
    /// two or three).
    start: u32,
    length: u32,
}

impl Glyph {
    fn text(self, all: &str) -> &str {
        all.get(self.start as usize..(self.start + self.length) as usize).unwrap_or_default()
    }
}

/// Collects every character with its position.
#[derive(Default)]
struct Positions {
    page: u32,
    glyphs: Vec<Glyph>,
    /// Every glyph's text, one after the other.
    text: String,
}

impl OutputDev for Positions {
    fn begin_page(
        &mut self,
        page: u32,
        _: &MediaBox,
        _: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        self.page = page;
        Ok(())
    }
    fn end_page(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        _spacing: f64,
        font_size: f64,
        text: &str,
    ) -> Result<(), OutputError> {
        // The size of the font on the page: the text matrix scales it.
        let size = ((font_size * (trm.m11 + trm.m21)).abs()
            * (font_size * (trm.m12 + trm.m22)).abs())
        .sqrt()
        .max(1.0);
        if self.glyphs.len() >= MAX_CHARACTERS {
            return Err(OutputError::FormatError(std::fmt::Error));
        }
        let start = self.text.len() as u32;
        self.text.push_str(text);
        self.glyphs.push(Glyph {
            page: self.page,
            x: trm.m31 as f32,
            y: trm.m32 as f32,
            end: (trm.m31 + width * size) as f32,
            size: size as f32,
            start,
            length: text.len() as u32,
        });
        Ok(())
    }
    fn begin_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
    fn end_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
    fn end_line(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
}

/// A word of a line, where it starts and ends on the page.
#[derive(Clone, Debug)]
struct Word {
    text: String,
    x: f32,
    end: f32,
}

impl Word {
    fn middle(&self) -> f32 {
        (self.x + self.end) / 2.0
    }
}

/// The glyphs as lines of words: page by page, top to bottom, each line's characters left to
/// right, a word ending at a space or a gap.
fn lines(mut glyphs: Vec<Glyph>, text: &str) -> Vec<Vec<Word>> {
    glyphs.sort_by(|a, b| a.page.cmp(&b.page).then(b.y.total_cmp(&a.y)).then(a.x.total_cmp(&b.x)));
    let mut lines: Vec<Vec<Glyph>> = Vec::new();
    for glyph in glyphs {
        match lines.last_mut() {
            Some(line)
                if line[0].page == glyph.page
                    && (line[0].y - glyph.y).abs() <= line[0].size * 0.5 =>
            {
                line.push(glyph)
            }
            _ => lines.push(vec![glyph]),
        }
    }
    lines
        .into_iter()
        .map(|mut line| {
            line.sort_by(|a, b| a.x.total_cmp(&b.x));
            let mut words: Vec<Word> = Vec::new();
            let mut last_end: Option<f32> = None;
            for glyph in &line {
                let gap = last_end.is_some_and(|end| glyph.x > end + glyph.size * 0.15);
                last_end = Some(glyph.end);
                let characters = glyph.text(text);
                if characters.trim().is_empty() {
                    words.push(Word { text: String::new(), x: glyph.end, end: glyph.end });
                    continue;
                }
                match words.last_mut() {
                    Some(word) if !gap && !word.text.is_empty() => {
                        word.text.push_str(characters);
                        word.end = glyph.end;
                    }
                    _ => {
                        words.push(Word { text: characters.to_owned(), x: glyph.x, end: glyph.end })
                    }
                }
            }
            words.retain(|word| !word.text.is_empty());
            words
        })
        .filter(|words| !words.is_empty())
        .collect()
}

/// Column headings of money going out and coming in, and of the balance.
const OUT_HEADINGS: &[&str] = &[
    "paid out",
    "money out",
    "withdrawals",
    "withdrawal",
    "debits",
    "debit",
    "payments",
    "soll",
    "ausgang",
    "débit",
    "cargo",
    "af",
];
const IN_HEADINGS: &[&str] = &[
    "paid in", "money in", "deposits", "deposit", "credits", "credit", "receipts", "haben",
    "eingang", "crédit", "abono", "bij",
];
const BALANCE_HEADINGS: &[&str] = &["balance", "saldo", "kontostand", "solde"];

/// Where the money columns stand, from a heading line that names both directions: the middle
/// of each heading.
#[derive(Clone, Copy, Debug)]
struct MoneyColumns {
    out: f32,
    into: f32,
    balance: Option<f32>,
}

impl MoneyColumns {
    fn of(words: &[Word]) -> Option<Self> {
        let lower: Vec<String> = words.iter().map(|w| w.text.to_lowercase()).collect();
        let find = |headings: &[&str]| {
            headings.iter().find_map(|heading| {
                let parts: Vec<&str> = heading.split(' ').collect();
                (0..lower.len()).find_map(|at| {
                    let end = at + parts.len();
                    (end <= lower.len() && lower[at..end].iter().zip(&parts).all(|(w, p)| w == p))
                        .then(|| (words[at].x + words[end - 1].end) / 2.0)
                })
            })
        };
        Some(Self {
            out: find(OUT_HEADINGS)?,
            into: find(IN_HEADINGS)?,
            balance: find(BALANCE_HEADINGS),
        })
    }

    /// Which column a word stands under: `Some(true)` money in, `Some(false)` out, `None` the
    /// balance.
    fn direction(&self, word: &Word) -> Option<bool> {
        let x = word.middle();
        let mut nearest = [(self.out, Some(false)), (self.into, Some(true))].to_vec();
        nearest.extend(self.balance.map(|b| (b, None)));
        nearest
            .into_iter()
            .min_by(|a, b| (a.0 - x).abs().total_cmp(&(b.0 - x).abs()))
            .and_then(|(_, direction)| direction)
    }
}

/// The lines of a PDF's text as positioned words, or why there are none.
fn text_lines(bytes: &[u8]) -> Result<Vec<Vec<Word>>, StatementError> {
    // The reader may panic on a malformed file; that is the file's fault, reported as such.
    let read = std::panic::catch_unwind(|| -> Result<Positions, StatementError> {
        file::check(bytes)?;
        let mut doc = Document::load_mem(bytes).map_err(|_| StatementError::PdfUnreadable)?;
        // lopdf decrypts while it loads, with the empty password when that opens the file;
        // decrypting again would undo it (and expand object streams without a bound).
        if doc.is_encrypted() && doc.encryption_state.is_none() {
            return Err(StatementError::PdfUnreadable);
        }
        pages::prepare(&mut doc)?;
        let mut positions = Positions::default();
        let read = pdf_extract::output_doc(&doc, &mut positions);
        if positions.glyphs.len() >= MAX_CHARACTERS {
            return Err(StatementError::PdfTooMuchText { max: MAX_CHARACTERS });
        }
        read.map_err(|_| StatementError::PdfUnreadable)?;
        Ok(positions)
    });
    let positions = match read {
        Ok(result) => result?,
        Err(_) => return Err(StatementError::PdfUnreadable),
    };
    if !positions.text.chars().any(char::is_alphanumeric) {
        return Err(StatementError::Pdf);
    }
    Ok(lines(positions.glyphs, &positions.text))
}

/// How deeply a content stream's brackets nest, as the checks count it (for the fuzz test that
/// compares it with lopdf's parse).
#[cfg(test)]
pub(crate) fn nesting(content: &[u8]) -> usize {
    syntax::scan_text(content).depth
}

/// The statement lines of a PDF as rows under a date, description and amount header.
pub(crate) fn rows(bytes: &[u8]) -> Result<Rows, StatementError> {
    let lines = text_lines(bytes)?;
    let texts: Vec<String> = lines
        .iter()
        .map(|words| words.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" "))
        .collect();
    let years = YearlessDates::of(&texts);
    // Unsigned amounts under "Paid out" and "Paid in" headings take their sign from the
    // column they stand in; the headings may repeat on every page.
    let mut columns: Option<MoneyColumns> = None;
    let mut found: Vec<(usize, String, String, Vec<String>)> = Vec::new();
    for (index, words) in lines.iter().enumerate() {
        let tokens: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
        // A heading has neither a date nor an amount ("Direct debit credit card 12.00" is a
        // transaction's line).
        if date_tokens(&tokens) == 0
            && !tokens.iter().any(|t| is_amount(t))
            && let Some(heading) = MoneyColumns::of(words)
        {
            columns = Some(heading);
            continue;
        }
        let in_date = date_tokens(&tokens);
        let (first, rest) = if in_date > 0 {
            let (date, rest) = tokens.split_at(in_date);
            (date.join(" "), rest)
        } else if let Some((date, used)) = years.as_ref().and_then(|y| y.date_of(&tokens)) {
            (date.to_string(), &tokens[used..])
        } else {
            continue;
        };
        let amounts: Vec<String> =
            rest.iter().rev().take_while(|t| is_amount(t)).map(|t| (*t).to_owned()).collect();
        if amounts.is_empty() {
            continue;
        }
        let description = rest[..rest.len() - amounts.len()].join(" ");
        if let Some(columns) = columns {
            // The amount is the one under "out" or "in", signed by it; the balance is left.
            let at = words.len() - amounts.len();
            let signed = words[at..].iter().find_map(|word| {
                columns.direction(word).map(|into| {
                    let bare = word.text.trim_start_matches(['-', '+']);
                    if into { bare.to_owned() } else { format!("-{bare}") }
                })
            });
            if let Some(amount) = signed {
                found.push((index + 1, first, description, vec![amount]));
                continue;
            }
        }
        found.push((index + 1, first, description, amounts));
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
    use super::limits::MAX_PAGES;
    use super::*;

    /// A one-page PDF with these lines in Helvetica, as a statement printer makes them.
    pub(crate) fn pdf_with_lines(lines: &[&str]) -> Vec<u8> {
        let mut content = String::from("BT /F1 10 Tf 50 760 Td 14 TL\n");
        for line in lines {
            content.push_str(&format!("({}) Tj T*\n", escape(line)));
        }
        content.push_str("ET");
        pdf_with_pages(&[content])
    }

    fn escape(text: &str) -> String {
        text.replace('\\', "\\\\").replace('(', "\\(").replace(')', "\\)")
    }

    /// A PDF whose pages have these content streams, with Helvetica as /F1 and a one-pixel
    /// image as /Im1.
    pub(crate) fn pdf_with_pages(contents: &[String]) -> Vec<u8> {
        let pages = contents.len();
        // 1 catalog, 2 pages, 3 font, 4 image, then a page and its content per page.
        let kids: Vec<String> = (0..pages).map(|i| format!("{} 0 R", 5 + 2 * i)).collect();
        let mut objects = vec![
            "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
            format!("<< /Type /Pages /Kids [{}] /Count {pages} >>", kids.join(" ")),
            "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_owned(),
            "<< /Type /XObject /Subtype /Image /Width 1 /Height 1 /ColorSpace /DeviceGray /BitsPerComponent 8 /Length 1 >>\nstream\n\u{7f}\nendstream".to_owned(),
        ];
        for (i, content) in contents.iter().enumerate() {
            objects.push(format!(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {} 0 R /Resources << /Font << /F1 3 0 R >> /XObject << /Im1 4 0 R >> >> >>",
                6 + 2 * i
            ));
            objects.push(format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len()));
        }
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
        assert_three_statement_lines(&pdf, "15/01/2026");
    }

    /// The rows read from a page with a header and three statement lines, the first of them
    /// NETFLIX.COM on `first_date` and the last the salary.
    fn assert_three_statement_lines(pdf: &[u8], first_date: &str) {
        let rows = rows(pdf).unwrap();
        assert_eq!(rows.len(), 4, "{rows:?}");
        assert_eq!(
            rows[1].1,
            vec![first_date.to_owned(), "NETFLIX.COM 866-579".into(), "-12.99".into()]
        );
        assert_eq!(rows[3].1[2], "2,500.00");
    }

    #[test]
    fn damaged_and_textless_pdfs_are_refused_with_a_reason() {
        assert_eq!(rows(b"%PDF-1.4\nnot really a pdf"), Err(StatementError::PdfUnreadable));
        let mut cut = pdf_with_lines(&["15/01/2026 NETFLIX.COM -12.99"]);
        cut.truncate(cut.len() / 2);
        assert_eq!(rows(&cut), Err(StatementError::PdfUnreadable));
        // A scan: a page with an image and no text.
        let scan = pdf_with_pages(&["q 600 0 0 780 6 6 cm /Im1 Do Q".to_owned()]);
        assert_eq!(rows(&scan), Err(StatementError::Pdf));
        let words_only = pdf_with_lines(&["Thank you for banking with us"]);
        assert!(matches!(rows(&words_only), Err(StatementError::NoTable(_))));
    }

    #[test]
    fn text_written_column_by_column_is_read_line_by_line() {
        // The printer wrote every date, then every description, then every amount, each
        // placed on its line.
        let rows_on_page = [
            ("15 Jan 2026", "NETFLIX.COM 866-579", "-12.99"),
            ("17 Jan 2026", "TESCO STORES 4411", "-45.20"),
            ("25 Jan 2026", "SALARY ACME", "2,500.00"),
        ];
        let mut content = String::from("BT /F1 10 Tf\n");
        for (column, x) in [(0, 50), (1, 150), (2, 400)] {
            for (row, cells) in rows_on_page.iter().enumerate() {
                let cell = [cells.0, cells.1, cells.2][column];
                let y = 700 - 14 * row;
                content.push_str(&format!("1 0 0 1 {x} {y} Tm ({}) Tj\n", escape(cell)));
            }
        }
        content.push_str("ET");
        assert_three_statement_lines(&pdf_with_pages(&[content]), "15 Jan 2026");
    }

    #[test]
    fn dates_without_a_year_take_the_year_of_the_statement_period() {
        let german = pdf_with_lines(&[
            "Kontoauszug vom 01.12.2025 bis 31.01.2026",
            "29.12. 30.12. Lastschrift NETFLIX -12,99",
            "02.01. 02.01. Kartenzahlung REWE -45,20",
            "Kontostand am 31.01.2026 1.234,56",
        ]);
        let read = rows(&german).unwrap();
        assert_eq!(read.len(), 3, "{read:?}");
        assert_eq!(
            read[1].1,
            vec!["2025-12-29".to_owned(), "Lastschrift NETFLIX".into(), "-12,99".into()]
        );
        assert_eq!(read[2].1[0], "2026-01-02");
        let us_card = pdf_with_lines(&[
            "Statement closing date 02/14/2026",
            "01/12 01/13 NETFLIX.COM 15.49",
            "01/20 01/21 SHELL OIL 40.00",
        ]);
        let read = rows(&us_card).unwrap();
        assert_eq!(read[1].1, vec!["2026-01-12".to_owned(), "NETFLIX.COM".into(), "15.49".into()]);
        // Without a full date anywhere, such lines are not read at all, rather than misread.
        let no_year = pdf_with_lines(&["01.02. Lastschrift NETFLIX -12,99"]);
        assert!(matches!(rows(&no_year), Err(StatementError::NoTable(_))));
    }

    #[test]
    fn unsigned_amounts_take_the_sign_of_their_column() {
        // A UK statement: Paid out and Paid in columns, then the balance, no signs.
        let place =
            |x: u32, y: u32, text: &str| format!("1 0 0 1 {x} {y} Tm ({}) Tj\n", escape(text));
        let mut content = String::from("BT /F1 10 Tf\n");
        for (x, heading) in [
            (50, "Date"),
            (130, "Description"),
            (330, "Paid out"),
            (410, "Paid in"),
            (490, "Balance"),
        ] {
            content.push_str(&place(x, 700, heading));
        }
        let rows_on_page = [
            ("15 Jan 2026", "NETFLIX.COM", Some("12.99"), None, "1,187.01"),
            ("25 Jan 2026", "SALARY ACME", None, Some("2,500.00"), "3,687.01"),
            ("26 Jan 2026", "Direct debit credit card", Some("40.00"), None, "3,647.01"),
        ];
        for (row, (date, text, out, into, balance)) in rows_on_page.iter().enumerate() {
            let y = 680 - 14 * row as u32;
            content.push_str(&place(50, y, date));
            content.push_str(&place(130, y, text));
            if let Some(out) = out {
                content.push_str(&place(335, y, out));
            }
            if let Some(into) = into {
                content.push_str(&place(410, y, into));
            }
            content.push_str(&place(490, y, balance));
        }
        content.push_str("ET");
        let read = rows(&pdf_with_pages(&[content])).unwrap();
        let amounts: Vec<&str> = read[1..].iter().map(|(_, row)| row[2].as_str()).collect();
        assert_eq!(amounts, vec!["-12.99", "2,500.00", "-40.00"], "{read:?}");
        assert_eq!(read[3].1[1], "Direct debit credit card");
    }

    #[test]
    fn a_pdf_of_thousands_of_pages_is_refused_before_it_is_read() {
        let page = "BT /F1 10 Tf 50 700 Td (15/01/2026 NETFLIX.COM -12.99) Tj ET".to_owned();
        let pages = vec![page; 5000];
        assert_eq!(
            rows(&pdf_with_pages(&pages)),
            Err(StatementError::TooManyPages { pages: 5000, max: MAX_PAGES })
        );
        let pages = vec![pages[0].clone(); MAX_PAGES];
        assert_eq!(rows(&pdf_with_pages(&pages)).unwrap().len(), MAX_PAGES + 1);
        // Pages whose text would never end.
        let endless = format!(
            "BT /F1 1 Tf {} ET",
            "(aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa) Tj ".repeat(MAX_CHARACTERS / 160 + 1)
        );
        assert_eq!(
            rows(&pdf_with_pages(&vec![endless; 4])),
            Err(StatementError::PdfTooMuchText { max: MAX_CHARACTERS })
        );
    }

    #[test]
    fn every_hostile_pdf_is_refused_with_its_reason() {
        for hostile in crate::test_pdfs::hostile() {
            let pdf = (hostile.pdf)();
            assert!(pdf.len() < 4 << 20, "{}: {} bytes", hostile.name, pdf.len());
            let refused = rows(&pdf).map(|_| ()).map_err(|e| e.to_string());
            assert!(
                refused.as_ref().is_err_and(|e| e.starts_with(hostile.refused)),
                "{}: {refused:?}",
                hostile.name
            );
        }
    }

    #[test]
    fn lengths_kept_in_objects_of_their_own_are_read_as_writers_write_them() {
        // LibreOffice, Ghostscript and cairo write each stream's length as an object of its
        // own after the stream; with a dozen objects, the number of one (13) ends with the
        // number of another (3).
        use crate::test_pdfs::{HELVETICA, Pdf, text_lines};
        let content =
            text_lines(&["01/02/2026 SPOTIFY AB -10.99", "02/02/2026 NETFLIX.COM -12.99"]);
        let mut pdf = Pdf::new();
        let catalog = pdf.reserve();
        let pages = pdf.reserve();
        let length = pdf.add(content.len().to_string());
        for _ in 0..9 {
            pdf.add("<< /Filler true >>");
        }
        let font = pdf.add(HELVETICA);
        assert_eq!((length, font), (3, 13));
        let mut stream = format!("<< /Length {length} 0 R >>\nstream\n").into_bytes();
        stream.extend_from_slice(&content);
        stream.extend_from_slice(b"\nendstream");
        let contents = pdf.add(stream);
        let page = pdf.add(format!(
            "<< /Type /Page /Parent {pages} 0 R /MediaBox [0 0 612 792] /Contents {contents} 0 R /Resources << /Font << /F1 {font} 0 R >> >> >>"
        ));
        pdf.set(catalog, format!("<< /Type /Catalog /Pages {pages} 0 R >>"));
        pdf.set(pages, format!("<< /Type /Pages /Kids [{page} 0 R] /Count 1 >>"));
        let read = rows(&pdf.finish(catalog)).unwrap();
        assert_eq!(read.len(), 3, "{read:?}");
    }

    #[test]
    fn statements_drawn_the_ways_writers_draw_them_are_read() {
        use crate::test_pdfs::{HELVETICA, Pdf, flate, stream, text_lines};
        let lines = text_lines(&["01/02/2026 SPOTIFY AB -10.99", "02/02/2026 NETFLIX.COM -12.99"]);
        // A compressed content stream, a logo drawn as an image, a heading drawn by a form
        // three times (within a form), fonts with a ToUnicode map, an ICC colour space.
        let mut pdf = Pdf::new();
        let catalog = pdf.reserve();
        let pages = pdf.reserve();
        let font = pdf.add(HELVETICA);
        let logo = pdf.add(stream(
            "/Type /XObject /Subtype /Image /Width 2 /Height 1 /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode",
            &flate(&[0, 255]),
        ));
        let icc = pdf.add(stream("/N 1 /Filter /FlateDecode", &flate(&[7; 3000])));
        let inner =
            pdf.add(stream("/Type /XObject /Subtype /Form /BBox [0 0 100 10]", b"0 0 m 100 0 l S"));
        let heading = pdf.add(stream(
            &format!("/Type /XObject /Subtype /Form /BBox [0 0 100 10] /Resources << /XObject << /Rule {inner} 0 R >> >>"),
            b"/Rule Do /Rule Do /Rule Do",
        ));
        let mut content =
            b"q /CS0 cs 1 0 0 1 10 10 cm /Logo Do Q /Head Do /Head Do /Head Do\n".to_vec();
        content.extend_from_slice(&lines);
        let contents = pdf.add(stream("/Filter /FlateDecode", &flate(&content)));
        let page = pdf.add(format!(
            "<< /Type /Page /Parent {pages} 0 R /MediaBox [0 0 612 792] /Contents {contents} 0 R /Resources << /Font << /F1 {font} 0 R >> /XObject << /Logo {logo} 0 R /Head {heading} 0 R >> /ColorSpace << /CS0 [/ICCBased {icc} 0 R] >> >> >>"
        ));
        pdf.set(catalog, format!("<< /Type /Catalog /Pages {pages} 0 R >>"));
        pdf.set(pages, format!("<< /Type /Pages /Kids [{page} 0 R] /Count 1 >>"));
        let read = rows(&pdf.finish(catalog)).unwrap();
        assert_eq!(read.len(), 3, "{read:?}");
        assert_eq!(read[2].1, vec!["02/02/2026", "NETFLIX.COM", "-12.99"]);
    }
}
