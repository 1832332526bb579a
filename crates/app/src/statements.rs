//! Reading a statement an op was given (`parse_statement`, `import_transactions`): through
//! `statement`, with a PDF read by the reader the server set (`App::set_pdf_reader`: a process
//! of its own with bounded memory and time, `exhale read-pdf`), and read before the call's
//! transaction begins, so the database never waits for a PDF.

use std::sync::Arc;

use ops::{Op as _, OpInfo};
use serde_json::Value;
use sha2::{Digest, Sha256};
use statement::{PdfReader, Rows, Statement, StatementError};

/// The ops whose input is a statement (`content` or `content_base64`).
const READ_A_STATEMENT: [&str; 2] =
    [ops::import::ParseStatement::INFO.name, ops::import::ImportTransactions::INFO.name];

/// The reader of PDFs, and what it read of this call's PDF before the transaction.
#[derive(Clone)]
pub(crate) struct PdfReading {
    reader: Arc<dyn PdfReader>,
    /// The PDF's digest and what reading it gave.
    read: Option<([u8; 32], Result<Rows, StatementError>)>,
}

impl Default for PdfReading {
    fn default() -> Self {
        Self { reader: Arc::new(statement::InProcess), read: None }
    }
}

impl PdfReading {
    /// Reads the PDF of `input`, when `op` takes a statement and the statement is a PDF, on the
    /// blocking pool (the reader may wait for a process); otherwise nothing is read yet.
    pub(crate) async fn before(reader: Arc<dyn PdfReader>, op: &OpInfo, input: &Value) -> Self {
        let none = Self { reader: reader.clone(), read: None };
        if !READ_A_STATEMENT.contains(&op.name) {
            return none;
        }
        let text = |key: &str| input.get(key).and_then(Value::as_str).map(str::to_owned);
        let Ok(bytes) = crate::input::statement_bytes(text("content"), text("content_base64"))
        else {
            return none;
        };
        if !statement::is_pdf(&bytes) {
            return none;
        }
        let digest: [u8; 32] = Sha256::digest(&bytes).into();
        let reading = reader.clone();
        let rows = crate::transactions::blocking(move || Ok(reading.rows(&bytes))).await;
        match rows {
            Ok(rows) => Self { reader, read: Some((digest, rows)) },
            Err(_) => none,
        }
    }

    /// The statement in `bytes`: a PDF's rows as read before the transaction, or read now.
    pub(crate) fn read(
        &self,
        bytes: &[u8],
        currency: domain::money::Currency,
    ) -> Result<Statement, StatementError> {
        if let Some((digest, rows)) = &self.read
            && statement::is_pdf(bytes)
            && <[u8; 32]>::from(Sha256::digest(bytes)) == *digest
        {
            return statement::statement_of_pdf_rows(rows.clone()?, currency);
        }
        statement::read_with(bytes, currency, self.reader.as_ref())
    }
}
