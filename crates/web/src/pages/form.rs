//! Form fields into typed op inputs. Fields left empty are left out, so the op's defaults
//! apply; what a person typed that does not fit its type (a date, a choice) is refused with
//! the message the op itself would give, pointing at the field, so the page shows it at the
//! form. A page's form that runs an op is an [`Action`]: one route and one typed form each.

use std::{fmt::Display, str::FromStr};

use ops::{Op, OpError, Text, common::CycleInput};
use serde::{Deserialize, Deserializer, de::DeserializeOwned};
use serde_json::{Map, Value};

/// A form a page posts to run one op, at `/{page}/do/{op}`: its fields, typed as the form has
/// them (text, and a list where a name is posted once per ticked box), and `TryFrom` into the
/// op's input, which reads what was typed (a date, a choice, an amount) and refuses what does
/// not fit with the field's pointer.
pub(crate) trait Action: DeserializeOwned + Send + 'static {
    type Op: Op<Input = Self::Input>;
    type Input: TryFrom<Self, Error = OpError> + Send + Sync;

    /// The notice once it is done.
    fn done() -> Text;

    /// What the confirmation page of a destructive op asks (`pages::asks_first` decides).
    fn asking() -> Asking {
        Asking {
            title: Text::new("Are you sure?"),
            explanation: Text::new("You can undo this from Activity."),
            confirm_label: Text::new("Yes, do it"),
        }
    }
}

/// The words of a confirmation page.
pub(crate) struct Asking {
    pub(crate) title: Text,
    pub(crate) explanation: Text,
    pub(crate) confirm_label: Text,
}

/// A posted form's fields (trimmed) as `F`: a name posted more than once is a list, which a
/// field reads with [`many`]; a name posted once is text.
pub(crate) fn read<F: DeserializeOwned>(pairs: &[(String, String)]) -> Result<F, OpError> {
    let mut fields = Map::new();
    for (name, value) in pairs {
        let value = Value::String(value.trim().to_owned());
        match fields.get_mut(name) {
            Some(Value::Array(values)) => values.push(value),
            Some(first) => *first = Value::Array(vec![first.take(), value]),
            None => {
                fields.insert(name.clone(), value);
            }
        }
    }
    serde_json::from_value(Value::Object(fields)).map_err(|_| {
        OpError::invalid(
            "",
            Text::new("This form is incomplete. Go back, reload the page and try again."),
        )
    })
}

/// A field posted once per ticked box or chosen option: every value, none when absent.
pub(crate) fn many<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(deserializer)? {
        OneOrMany::One(value) => vec![value],
        OneOrMany::Many(values) => values,
    })
}

/// The ids among `values` (ticked boxes); what is not one is left out.
pub(crate) fn ids<T: From<i64>>(values: &[String]) -> Vec<T> {
    values.iter().filter_map(|value| id(value)).collect()
}

/// The trimmed text, or `None` when the field is empty.
pub(crate) fn text(value: &str) -> Option<String> {
    let value = value.trim();
    (!value.is_empty()).then(|| value.to_owned())
}

/// An amount as typed, read with the reader's decimal mark ("12,50" in Spanish) into the
/// type the op takes; an empty or wrong one is refused at the field with what to write.
pub(crate) fn amount<T>(pointer: &str, value: &str) -> Result<T, OpError>
where
    T: FromStr,
    T::Err: Display,
{
    match i18n::format::typed_decimal(crate::reader::reader(), value) {
        Some(decimal) => required(pointer, &decimal),
        None => required(pointer, value),
    }
}

/// [`amount`] for a field that may be left blank.
pub(crate) fn optional_amount<T>(pointer: &str, value: &str) -> Result<Option<T>, OpError>
where
    T: FromStr,
    T::Err: Display,
{
    text(value).map(|value| amount(pointer, &value)).transpose()
}

/// An id chosen from a list; `None` when none was chosen.
pub(crate) fn id<T: From<i64>>(value: &str) -> Option<T> {
    value.trim().parse::<i64>().ok().map(T::from)
}

/// The id a form names, for an op that requires one: 0 (which nothing has) when it names
/// none, so the op refuses it as it refuses any id it cannot find.
pub(crate) fn id_or_zero<T: From<i64>>(value: &str) -> T {
    T::from(id::<i64>(value).unwrap_or_default())
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
