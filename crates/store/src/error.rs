//! What a store call can fail with (`StoreError`) and the `Result` every module returns: the
//! lowest layer of the crate, which every other module uses.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("not found")]
    NotFound,
    /// A uniqueness or foreign-key rule was broken.
    #[error("constraint violated: {0}")]
    Constraint(String),
    #[error("the database is busy")]
    Busy,
    #[error("a stored value is not valid: {0}")]
    Corrupt(String),
    #[error("database error: {0}")]
    Sqlite(#[source] rusqlite::Error),
    #[error("database error: {message}")]
    Postgres {
        message: String,
        #[source]
        source: ::postgres::Error,
    },
    /// The database cannot be reached now; the same request may work in a moment.
    #[error("{0}")]
    Unavailable(String),
    /// The configuration names a database Exhale cannot use.
    #[error("{0}")]
    Config(String),
    /// What this database cannot do, and what to do instead.
    #[error("{0}")]
    Unsupported(String),
    #[error(
        "the database was written by a newer Exhale (schema version {found}; this one knows {known}); upgrade Exhale, or restore a backup"
    )]
    NewerSchema { found: usize, known: usize },
    #[error(
        "migration {name} would leave rows of {table} referring to rows that are gone; nothing was changed. Restore a backup and report it"
    )]
    Migration { name: &'static str, table: String },
    #[error("cannot open the database at {path}: {source}")]
    Open { path: PathBuf, source: rusqlite::Error },
    #[error("{path} is open in another Exhale (exhale serve, or exhale mcp for an agent)")]
    InUse { path: PathBuf },
    #[error("cannot lock {path} ({source}); check that this user may read it")]
    Lock { path: PathBuf, source: std::io::Error },
}

impl From<rusqlite::Error> for StoreError {
    fn from(err: rusqlite::Error) -> Self {
        match &err {
            rusqlite::Error::QueryReturnedNoRows => Self::NotFound,
            rusqlite::Error::SqliteFailure(code, message) => match code.code {
                rusqlite::ErrorCode::ConstraintViolation => {
                    Self::Constraint(message.clone().unwrap_or_else(|| code.to_string()))
                }
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked => {
                    Self::Busy
                }
                _ => Self::Sqlite(err),
            },
            _ => Self::Sqlite(err),
        }
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;
