//! Small helpers for mapping SQLite values to domain values.

use domain::Date;
use rusqlite::{
    Row,
    types::{FromSql, FromSqlError, FromSqlResult, ValueRef},
};

/// A calendar date stored as 'YYYY-MM-DD'.
pub(crate) struct SqlDate(pub(crate) Date);

impl FromSql for SqlDate {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        let text = value.as_str()?;
        text.parse::<Date>().map(SqlDate).map_err(|err| FromSqlError::Other(Box::new(err)))
    }
}

pub(crate) fn date(row: &Row<'_>, column: &str) -> rusqlite::Result<Date> {
    Ok(row.get::<_, SqlDate>(column)?.0)
}

pub(crate) fn opt_date(row: &Row<'_>, column: &str) -> rusqlite::Result<Option<Date>> {
    Ok(row.get::<_, Option<SqlDate>>(column)?.map(|d| d.0))
}

/// Parses a stored enum-like text column with `parse`, failing on unknown values.
pub(crate) fn parsed<T>(
    row: &Row<'_>,
    column: &str,
    parse: impl FnOnce(&str) -> Option<T>,
) -> rusqlite::Result<T> {
    let text: String = row.get(column)?;
    parse(&text).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            0,
            rusqlite::types::Type::Text,
            format!("unexpected value {text:?} in column {column}").into(),
        )
    })
}

pub(crate) fn date_text(date: Date) -> String {
    date.to_string()
}

pub(crate) fn opt_date_text(date: Option<Date>) -> Option<String> {
    date.map(date_text)
}
