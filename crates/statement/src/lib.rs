//! Bank statements, read without a model: a file's bytes become transactions (`read`), and
//! the transactions become recurring-charge candidates (`recurring::detect`).
//!
//! Here: decoding text (`decode.rs`); the formats with a structure of their own: OFX, QFX and
//! QBO (`ofx.rs`), ISO 20022 camt (`camt.rs`), MT940 (`mt940.rs`), QIF (`qif.rs`) and the text
//! of PDF statements (`pdf.rs`); splitting delimited text into rows (`csv.rs`) and finding
//! the columns (`table.rs`); reading dates (`dates.rs`) and amounts (`amounts.rs`);
//! normalising merchant names (`merchant.rs`) and the detection itself (`recurring.rs`).
//! Not here: storing anything, or matching candidates with existing subscriptions (the app
//! does that).

mod amounts;
mod camt;
mod csv;
mod dates;
mod decode;
#[cfg(test)]
mod fuzz;
pub mod merchant;
mod model;
pub(crate) use model::LeftOut;
pub use model::{MAX_BYTES, Problem, Statement, StatementError, Transaction};
mod mt940;
mod ofx;
mod pdf;
pub use csv::Rows;
pub use pdf::{MAX_EXPANDED_BYTES, MAX_STREAM_BYTES};
mod qif;
pub mod recurring;
mod table;
#[cfg(any(test, feature = "test-pdfs"))]
pub mod test_pdfs;

use domain::money::Currency;

/// What reads a PDF's text into rows: `InProcess` (`pdf_rows` in this process), or a reader
/// that runs it in a process of its own with bounded memory and time, as the server does
/// (`exhale read-pdf`): PDF readers are large and were never written for hostile files, so
/// whatever the checks before them miss costs that process, never the server.
pub trait PdfReader: Send + Sync {
    fn rows(&self, pdf: &[u8]) -> Result<Rows, StatementError>;
}

/// Reads PDFs in this process.
pub struct InProcess;

impl PdfReader for InProcess {
    fn rows(&self, pdf: &[u8]) -> Result<Rows, StatementError> {
        pdf_rows(pdf)
    }
}

/// Whether the bytes are a PDF, read by a `PdfReader`.
pub fn is_pdf(bytes: &[u8]) -> bool {
    bytes.starts_with(b"%PDF")
}

/// A PDF's statement lines as rows under a date, description and amount header, read in this
/// process within the limits of `pdf.rs`.
pub fn pdf_rows(pdf: &[u8]) -> Result<Rows, StatementError> {
    if pdf.len() > MAX_BYTES {
        return Err(StatementError::TooLarge { size: pdf.len(), max: MAX_BYTES });
    }
    pdf::rows(pdf)
}

/// Reads a bank export (CSV in any common dialect and encoding, OFX/QFX/QBO, camt.053, MT940,
/// QIF, or a PDF with text) into transactions; amounts without a currency of their own are in
/// `default_currency`. Rows with a zero amount, pending rows and balance lines are not
/// transactions: they are left out and counted in the notes.
pub fn read(bytes: &[u8], default_currency: Currency) -> Result<Statement, StatementError> {
    read_with(bytes, default_currency, &InProcess)
}

/// [`read`], with PDFs read by `pdf`.
pub fn read_with(
    bytes: &[u8],
    default_currency: Currency,
    pdf: &dyn PdfReader,
) -> Result<Statement, StatementError> {
    if bytes.len() > MAX_BYTES {
        return Err(StatementError::TooLarge { size: bytes.len(), max: MAX_BYTES });
    }
    if is_pdf(bytes) {
        statement_of_pdf_rows(pdf.rows(bytes)?, default_currency)
    } else {
        read_text(bytes, default_currency)
    }
}

/// A statement from a PDF's rows (however they were read).
pub fn statement_of_pdf_rows(
    rows: Rows,
    default_currency: Currency,
) -> Result<Statement, StatementError> {
    let mut statement = table::read(&rows, default_currency)?;
    statement.notes.insert(0, "PDF text".into());
    Ok(statement)
}

fn read_text(bytes: &[u8], default_currency: Currency) -> Result<Statement, StatementError> {
    let (text, encoding) = decode::decode(bytes)?;
    if text.trim().is_empty() {
        return Err(StatementError::Empty);
    }
    if ofx::is_ofx(&text) {
        return ofx::read(&text, default_currency);
    }
    if camt::is_camt(&text) {
        return camt::read(&text, default_currency);
    }
    if mt940::is_mt940(&text) {
        return mt940::read(&text, default_currency);
    }
    if qif::is_qif(&text) {
        return qif::read(&text, default_currency);
    }
    let (rows, delimiter) = csv::split(&text);
    let mut statement = table::read(&rows, default_currency)?;
    statement.notes.insert(0, format!("{encoding}, {delimiter}"));
    Ok(statement)
}

/// Decodes standard base64 (with or without padding, line breaks ignored); `None` when it is
/// not base64.
pub fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' | b'-' => Some(62),
        b'/' | b'_' => Some(63),
        _ => None,
    };
    let symbols: Vec<u8> = text.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
    let symbols =
        symbols.strip_suffix(b"==").or_else(|| symbols.strip_suffix(b"=")).unwrap_or(&symbols);
    if symbols.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(symbols.len() * 3 / 4);
    for chunk in symbols.chunks(4) {
        let values: Vec<u8> = chunk.iter().map(|&c| value(c)).collect::<Option<_>>()?;
        let n =
            values.iter().enumerate().fold(0u32, |n, (i, &v)| n | (u32::from(v) << (18 - 6 * i)));
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..values.len()]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_both_alphabets_and_without_padding() {
        assert_eq!(decode_base64("SGVsbG8sIHdvcmxkIQ==").unwrap(), b"Hello, world!");
        assert_eq!(decode_base64("SGVsbG8sIHdvcmxkIQ").unwrap(), b"Hello, world!");
        assert_eq!(decode_base64("//79\n").unwrap(), vec![0xFF, 0xFE, 0xFD]);
        assert_eq!(decode_base64("__79").unwrap(), vec![0xFF, 0xFE, 0xFD]);
        assert_eq!(decode_base64("not base64!"), None);
    }

    #[test]
    fn a_pdf_statement_is_read_like_a_csv() {
        let eur = Currency::parse("EUR").unwrap();
        let lines: Vec<String> = (1..=4)
            .map(|m| format!("0{m}.0{m}.2026 SPOTIFY AB {m}{m}2 -10,99 1.2{m}4,00"))
            .chain(std::iter::once("Kontostand am 30.04.2026 1.250,00".to_owned()))
            .collect();
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let statement = read(&pdf::tests::pdf_with_lines(&refs), eur).unwrap();
        assert_eq!(statement.transactions.len(), 4, "{statement:?}");
        assert_eq!(statement.transactions[0].amount_minor, -1099);
        assert!(
            statement.notes[0] == "PDF text" && statement.notes[1].contains("dd.mm.yyyy"),
            "{:?}",
            statement.notes
        );
        assert_eq!(recurring::detect(&statement.transactions)[0].name, "Spotify");
    }

    #[test]
    fn huge_files_are_refused_before_reading() {
        let eur = Currency::parse("EUR").unwrap();
        let big = vec![b'a'; MAX_BYTES + 1];
        assert_eq!(
            read(&big, eur),
            Err(StatementError::TooLarge { size: MAX_BYTES + 1, max: MAX_BYTES })
        );
    }
}
