//! Delimited text to rows: the delimiter (comma, semicolon, tab or pipe) is the one that
//! splits the lines most consistently; fields may be quoted, with doubled quotes and line
//! breaks inside.

/// Rows with the line each starts on (1-based); empty lines are skipped.
pub(crate) type Rows = Vec<(usize, Vec<String>)>;

fn parse(text: &str, delimiter: char) -> Rows {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut line = 1;
    let mut row_line = 1;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            '"' if quoted => quoted = false,
            '"' if field.trim().is_empty() => {
                field.clear();
                quoted = true;
            }
            '\n' if quoted => {
                field.push('\n');
                line += 1;
            }
            '\r' if !quoted => {}
            '\n' => {
                row.push(std::mem::take(&mut field));
                if row.iter().any(|f: &String| !f.trim().is_empty()) {
                    rows.push((row_line, std::mem::take(&mut row)));
                } else {
                    row.clear();
                }
                line += 1;
                row_line = line;
            }
            c if c == delimiter && !quoted => row.push(std::mem::take(&mut field)),
            c => field.push(c),
        }
    }
    row.push(field);
    if row.iter().any(|f| !f.trim().is_empty()) {
        rows.push((row_line, row));
    }
    for (_, row) in &mut rows {
        for field in row.iter_mut() {
            *field = field.trim().to_owned();
        }
    }
    rows
}

/// The rows, and the delimiter's name.
pub(crate) fn split(text: &str) -> (Rows, &'static str) {
    let candidates = [
        (',', "comma-separated"),
        (';', "semicolon-separated"),
        ('\t', "tab-separated"),
        ('|', "pipe-separated"),
    ];
    let score = |rows: &Rows| {
        // The most common field count above one, and how many of the first rows have it.
        let sample: Vec<usize> = rows.iter().take(50).map(|(_, r)| r.len()).collect();
        let mut best = (0, 0);
        for &width in &sample {
            if width > 1 {
                let count = sample.iter().filter(|&&w| w == width).count();
                best = best.max((count, width));
            }
        }
        best
    };
    candidates
        .iter()
        .map(|&(delimiter, name)| {
            let rows = parse(text, delimiter);
            (score(&rows), rows, name)
        })
        .max_by_key(|(score, ..)| *score)
        .map(|(_, rows, name)| (rows, name))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
