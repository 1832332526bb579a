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
        parse_date(value.as_str()?)
            .map(SqlDate)
            .ok_or_else(|| FromSqlError::Other("not a YYYY-MM-DD date".into()))
    }
}

/// Parses the 'YYYY-MM-DD' this crate writes, without the generic parser's cost.
pub(crate) fn parse_date(text: &str) -> Option<Date> {
    let bytes = text.as_bytes();
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return None;
    }
    let number = |range: std::ops::Range<usize>| -> Option<i16> {
        bytes[range]
            .iter()
            .try_fold(0i16, |n, b| b.is_ascii_digit().then(|| n * 10 + i16::from(b - b'0')))
    };
    Date::new(number(0..4)?, i8::try_from(number(5..7)?).ok()?, i8::try_from(number(8..10)?).ok()?)
        .ok()
}

pub(crate) fn date<I: rusqlite::RowIndex>(row: &Row<'_>, column: I) -> rusqlite::Result<Date> {
    Ok(row.get::<_, SqlDate>(column)?.0)
}

pub(crate) fn opt_date<I: rusqlite::RowIndex>(
    row: &Row<'_>,
    column: I,
) -> rusqlite::Result<Option<Date>> {
    Ok(row.get::<_, Option<SqlDate>>(column)?.map(|d| d.0))
}

/// Parses a stored enum-like text column with `parse`, failing on unknown values.
pub(crate) fn parsed<T, I: rusqlite::RowIndex + std::fmt::Debug + Copy>(
    row: &Row<'_>,
    column: I,
    parse: impl FnOnce(&str) -> Option<T>,
) -> rusqlite::Result<T> {
    let value = row.get_ref(column)?;
    let text = value.as_str().map_err(|err| {
        rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(err))
    })?;
    parse(text).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            0,
            rusqlite::types::Type::Text,
            format!("unexpected value {text:?} in column {column:?}").into(),
        )
    })
}

pub(crate) fn date_text(date: Date) -> String {
    date.to_string()
}

pub(crate) fn opt_date_text(date: Option<Date>) -> Option<String> {
    date.map(date_text)
}
