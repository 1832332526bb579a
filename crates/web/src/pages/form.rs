//! Form fields into typed op inputs. Fields left empty are left out, so the op's defaults
//! apply; what a person typed that does not fit its type (a date, a choice) is refused with
//! the message the op itself would give, pointing at the field, so the page shows it at the
//! form.

use std::{fmt::Display, str::FromStr};

use ops::{OpError, Text, common::CycleInput};

/// The trimmed text, or `None` when the field is empty.
pub(crate) fn text(value: &str) -> Option<String> {
    let value = value.trim();
    (!value.is_empty()).then(|| value.to_owned())
}

/// An id chosen from a list; `None` when none was chosen.
/// An amount as typed, read with the reader's decimal mark ("12,50" in Spanish) into the
/// decimal an op takes ("12.50"); what is not a decimal goes to the op as typed, for it to
/// refuse with its own message.
pub(crate) fn amount(value: &str) -> String {
    i18n::format::typed_decimal(crate::reader::reader(), value)
        .unwrap_or_else(|| value.trim().to_owned())
}

pub(crate) fn id<T: From<i64>>(value: &str) -> Option<T> {
    value.trim().parse::<i64>().ok().map(T::from)
}

/// A typed value (a date, one of a closed set), or `None` when the field is empty.
pub(crate) fn parsed<T>(pointer: &str, value: &str) -> Result<Option<T>, OpError>
where
    T: FromStr,
    T::Err: Display,
{
    text(value)
        .map(|value| {
            value.parse().map_err(|err: T::Err| {
                OpError::invalid(pointer, Text::new("{error}.").with("error", err))
            })
        })
        .transpose()
}

/// A typed value the op requires: an empty field is refused like any other wrong value, with
/// what to write.
pub(crate) fn required<T>(pointer: &str, value: &str) -> Result<T, OpError>
where
    T: FromStr,
    T::Err: Display,
{
    value
        .trim()
        .parse()
        .map_err(|err: T::Err| OpError::invalid(pointer, Text::new("{error}.").with("error", err)))
}

/// Tags written with commas between them.
pub(crate) fn tags(value: &str) -> Vec<String> {
    value.split(',').map(str::trim).filter(|tag| !tag.is_empty()).map(str::to_owned).collect()
}

/// A cycle from the form's select (a preset, or "custom" with every and unit); `None` when the
/// form chose none.
pub(crate) fn cycle(cycle: &str, every: &str, unit: &str) -> Result<Option<CycleInput>, OpError> {
    match cycle.trim() {
        "" => Ok(None),
        "custom" => {
            let unit = parsed("/cycle/unit", unit)?.ok_or_else(|| {
                OpError::invalid("/cycle/unit", Text::new("Choose the unit of the cycle."))
            })?;
            // A count that is not a number is refused by the op, with the range it takes.
            Ok(Some(CycleInput::Custom { every: every.trim().parse().unwrap_or(0), unit }))
        }
        preset => Ok(parsed("/cycle", preset)?.map(CycleInput::Preset)),
    }
}
