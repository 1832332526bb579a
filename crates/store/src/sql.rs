//! Small helpers for mapping stored values to domain values.

use domain::Date;

use crate::{
    Result, StoreError,
    db::{ColumnIndex, Row},
    value::Value,
};

pub(crate) fn date(row: &Row<'_>, column: impl ColumnIndex) -> Result<Date> {
    row.get(column)
}

pub(crate) fn opt_date(row: &Row<'_>, column: impl ColumnIndex) -> Result<Option<Date>> {
    row.get(column)
}

/// Parses a stored enum-like text column with `parse`, failing on unknown values.
pub(crate) fn parsed<T>(
    row: &Row<'_>,
    column: impl ColumnIndex,
    parse: impl FnOnce(&str) -> Option<T>,
) -> Result<T> {
    let index = column.index(row)?;
    match row.value(index)? {
        Value::Text(text) => parse(text).ok_or_else(|| {
            StoreError::Corrupt(format!("unexpected value {text:?} in column {}", row.name(index)))
        }),
        other => Err(StoreError::Corrupt(format!(
            "column {} holds {other:?}, not text",
            row.name(index)
        ))),
    }
}

pub(crate) fn date_text(date: Date) -> String {
    date.to_string()
}

pub(crate) fn opt_date_text(date: Option<Date>) -> Option<String> {
    date.map(date_text)
}
