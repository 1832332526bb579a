//! What reading a statement gives: its transactions, the rows that could not be read, and
//! why a whole file could not be (`StatementError`). The lowest layer: every reader uses it,
//! and it uses none of them.

use domain::money::Currency;
use jiff::civil::Date;

/// The largest file read: bigger ones are refused before reading, never cut.
pub const MAX_BYTES: usize = 20 * 1024 * 1024;

/// One transaction from a statement. `amount_minor` is negative for money going out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transaction {
    /// The line of the file it came from (1-based).
    pub line: usize,
    pub date: Date,
    pub amount_minor: i64,
    pub currency: Currency,
    pub description: String,
}

/// A row that could not be read, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub line: usize,
    pub message: String,
}

/// What a file held.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Statement {
    pub transactions: Vec<Transaction>,
    pub problems: Vec<Problem>,
    /// How the file was read, for the person to check ("semicolon-separated, dates
    /// dd.mm.yyyy, decimal comma").
    pub notes: Vec<String>,
}

/// Rows left out because they are not transactions (one rule for every format), for the
/// notes.
#[derive(Debug, Default)]
pub(crate) struct LeftOut {
    pub(crate) zero: usize,
    pub(crate) pending: usize,
    pub(crate) balance: usize,
}

impl Statement {
    /// Adds the transaction a reader read at `line`: what every format gives.
    pub(crate) fn add(
        &mut self,
        line: usize,
        date: Date,
        amount_minor: i64,
        currency: Currency,
        description: String,
    ) {
        self.transactions.push(Transaction { line, date, amount_minor, currency, description });
    }

    /// The statement with a note of what was left out, or, when it has no transactions, why:
    /// its first problem, else `empty`.
    pub(crate) fn finish(
        mut self,
        left_out: &LeftOut,
        empty: &str,
    ) -> Result<Self, StatementError> {
        let parts: Vec<String> = [
            (left_out.zero, "with a zero amount"),
            (left_out.pending, "pending or declined"),
            (left_out.balance, "balance or total lines"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        if !parts.is_empty() {
            self.notes.push(format!("left out as not transactions: {}", parts.join(", ")));
        }
        if self.transactions.is_empty() {
            let why = self
                .problems
                .first()
                .map_or(empty.to_owned(), |p| format!("line {}: {}", p.line, p.message));
            return Err(StatementError::NoTable(why));
        }
        Ok(self)
    }
}

#[cfg(test)]
impl Statement {
    /// Each transaction as (date, amount in minor units, currency, description), for a test to
    /// compare with what the file says.
    pub(crate) fn as_tuples(&self) -> Vec<(String, i64, &str, &str)> {
        self.transactions
            .iter()
            .map(|t| {
                (t.date.to_string(), t.amount_minor, t.currency.code(), t.description.as_str())
            })
            .collect()
    }
}

/// Why a file could not be read at all.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum StatementError {
    #[error("the file is empty")]
    Empty,
    #[error(
        "the file is {size} bytes; statements up to {max} bytes are read. Export a shorter period."
    )]
    TooLarge { size: usize, max: usize },
    #[error("this is not a text file (CSV or OFX); export the statement as CSV or OFX")]
    NotText,
    #[error("this PDF has no text (a scan?); export the statement as CSV or OFX from your bank")]
    Pdf,
    #[error(
        "this PDF cannot be opened (damaged, or protected by a password); download the statement again, or export it as CSV or OFX"
    )]
    PdfUnreadable,
    #[error(
        "the PDF has {pages} pages; statements up to {max} pages are read. Export a shorter period."
    )]
    TooManyPages { pages: usize, max: usize },
    #[error(
        "the PDF holds more than {max} characters of text, more than a statement; export a shorter period"
    )]
    PdfTooMuchText { max: usize },
    #[error(
        "the PDF unpacks to more than {} MB, more than a statement; export the statement as CSV or OFX, or a shorter period", max / (1024 * 1024)
    )]
    PdfTooLarge { max: usize },
    #[error(
        "the PDF takes more work to read than a statement (it draws the same things over and over, or holds more objects than a statement does); export the statement as CSV or OFX"
    )]
    PdfTooComplex,
    #[error("no transactions found: {0}")]
    NoTable(String),
}
