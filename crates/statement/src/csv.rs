//! Delimited text to rows: the delimiter (comma, semicolon, tab or pipe) is the one that
//! splits the lines most consistently, whatever the file is called; fields may be quoted, with
//! doubled quotes and line breaks inside, and a stray quote inside a quoted field is kept as
//! text, as the banks that write them mean.

/// Rows with the line each starts on (1-based); empty lines are skipped.
/// Rows of cells, each with the line of the file it came from (1-based).
pub type Rows = Vec<(usize, Vec<String>)>;

fn parse(text: &str, delimiter: u8) -> Rows {
    let bytes = text.as_bytes();
    // Fields are cut at ASCII bytes only, so each is whole UTF-8.
    let field_text = |field: &[u8]| String::from_utf8_lossy(field).trim().to_owned();
    let ends_field = |at: usize| match bytes.get(at) {
        None => true,
        Some(&b) => b == delimiter || b == b'\n' || b == b'\r',
    };
    let mut rows = Vec::new();
    let mut row: Vec<String> = Vec::new();
    let mut field: Vec<u8> = Vec::new();
    let mut quoted = false;
    // Whether the quoted field holds a quote that was not doubled.
    let mut stray = false;
    let mut line = 1;
    let mut row_line = 1;
    let mut at = 0;
    while at < bytes.len() {
        let b = bytes[at];
        at += 1;
        match b {
            b'"' if quoted => {
                // A doubled quote is one quote; a quote before the end of the field closes
                // it; any other quote inside is the text's own ("UAB "Naktida""). In a field
                // with such a stray quote (a writer that does not escape), a doubled quote
                // just before a delimiter is the text's quote and the close.
                let next = at;
                while bytes.get(at) == Some(&b' ') {
                    at += 1;
                }
                if ends_field(at) {
                    quoted = false;
                } else if bytes.get(next) == Some(&b'"') {
                    field.push(b'"');
                    at = next + 1;
                    if stray && bytes.get(at) == Some(&delimiter) {
                        quoted = false;
                    }
                } else {
                    at = next;
                    field.push(b'"');
                    stray = true;
                }
            }
            b'"' if field.iter().all(u8::is_ascii_whitespace) => {
                field.clear();
                quoted = true;
                stray = false;
            }
            b'\n' if quoted => {
                field.push(b'\n');
                line += 1;
            }
            b'\r' if !quoted => {}
            b'\n' => {
                row.push(field_text(&std::mem::take(&mut field)));
                if row.iter().any(|f| !f.is_empty()) {
                    rows.push((row_line, std::mem::take(&mut row)));
                } else {
                    row.clear();
                }
                line += 1;
                row_line = line;
            }
            b if b == delimiter && !quoted => row.push(field_text(&std::mem::take(&mut field))),
            b => field.push(b),
        }
    }
    row.push(field_text(&field));
    if row.iter().any(|f| !f.is_empty()) {
        rows.push((row_line, row));
    }
    rows
}

/// The rows, and the delimiter's name.
pub(crate) fn split(text: &str) -> (Rows, &'static str) {
    let candidates = [
        (b',', "comma-separated"),
        (b';', "semicolon-separated"),
        (b'\t', "tab-separated"),
        (b'|', "pipe-separated"),
    ];
    let score = |rows: &Rows| {
        // The most common field count above one, and how many rows have it: all rows, so
        // that a long preamble does not decide.
        let mut counts: std::collections::BTreeMap<usize, usize> =
            std::collections::BTreeMap::new();
        for (_, row) in rows {
            if row.len() > 1 {
                *counts.entry(row.len()).or_default() += 1;
            }
        }
        counts.into_iter().map(|(width, count)| (count, width)).max().unwrap_or((0, 0))
    };
    // Scored over the first lines (a preamble is a few of them), then the whole parsed once
    // with the winner: a statement of 100,000 rows is not parsed four times.
    let sample = text.match_indices('\n').nth(SCORED_LINES).map_or(text, |(at, _)| &text[..=at]);
    let best = candidates
        .iter()
        .map(|&(delimiter, name)| {
            let rows = parse(sample, delimiter);
            (score(&rows), rows, delimiter, name)
        })
        // The best score; on a tie, the delimiter first in the list (comma).
        .rev()
        .max_by_key(|(score, ..)| *score);
    match best {
        Some((_, rows, _, name)) if sample.len() == text.len() => (rows, name),
        Some((_, _, delimiter, name)) => (parse(text, delimiter), name),
        None => Default::default(),
    }
}

/// How many lines decide the delimiter.
const SCORED_LINES: usize = 2000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_file_is_read_whole_with_the_delimiter_its_first_lines_use() {
        let mut text = String::from("Account;Main\nDate;Payee;Amount\n");
        for i in 0..(SCORED_LINES * 2) {
            text.push_str(&format!("01.02.2026;\"Shop, {i}\";-1,{:02}\n", i % 100));
        }
        let (rows, name) = split(&text);
        assert_eq!(name, "semicolon-separated");
        assert_eq!(rows.len(), SCORED_LINES * 2 + 2);
        let last = SCORED_LINES * 2 - 1;
        assert_eq!(
            rows.last().unwrap().1,
            vec!["01.02.2026".to_owned(), format!("Shop, {last}"), format!("-1,{:02}", last % 100)]
        );
    }

    #[test]
    fn picks_the_delimiter_and_keeps_quoted_fields_whole() {
        let (rows, name) = split(
            "Date;Payee;Amount\n01.02.2026;\"Netflix; Inc\";-12,99\n\n02.02.2026;Rewe;-3,10\n",
        );
        assert_eq!(name, "semicolon-separated");
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[1], (2, vec!["01.02.2026".into(), "Netflix; Inc".into(), "-12,99".into()]));
        assert_eq!(rows[2].0, 4, "line numbers count empty lines");

        let (rows, name) = split(
            "date,description,amount\r\n2026-01-05,\"Say \"\"hi\"\"\nsecond line\",\"-1,234.50\"\r\n",
        );
        assert_eq!(name, "comma-separated");
        assert_eq!(
            rows[1].1,
            vec!["2026-01-05".to_owned(), "Say \"hi\"\nsecond line".into(), "-1,234.50".into()]
        );

        let (_, name) = split("Date\tAmount\tText\n2026-01-01\t-5.00\tA, B and C\n");
        assert_eq!(name, "tab-separated");
        let (rows, name) = split(
            "Date\tAmount\tText\n2026-01-01\t-5.00\tA, B, C\n2026-01-02\t-1.00\tD, E\n2026-01-03\t-2.00\tF\n",
        );
        assert_eq!((name, rows[1].1[2].as_str()), ("tab-separated", "A, B, C"));
    }

    #[test]
    fn stray_quotes_inside_a_quoted_field_are_text() {
        let (rows, _) =
            split("\"a\",\"UAB \"Naktida\"\",\"1.00\"\n\"b\",\"Say \"hi\" now\",\"2.00\"\n");
        assert_eq!(rows[0].1, vec!["a".to_owned(), "UAB \"Naktida\"".into(), "1.00".into()]);
        assert_eq!(rows[1].1[1], "Say \"hi\" now");
        let (rows, _) = split("\"x\",\"a \"\"b\"\"\"\n\"y\",\"z\"\n");
        assert_eq!(rows[0].1[1], "a \"b\"");
        // Escaped as it should be, a quote before a delimiter inside the field stays inside.
        let (rows, _) =
            split("\"TV 24\"\", black\",\"-99.00\"\n\"TV 32\"\", white\",\"-129.00\"\n");
        assert_eq!(rows[0].1, vec!["TV 24\", black".to_owned(), "-99.00".into()]);
    }
}
