//! The values the store binds and reads, alike on both engines: [`Value`] (and [`SqlValue`],
//! one that owns its text), what may be bound ([`Param`], with `params!`) and read
//! ([`Column`]), and whether a statement stays prepared ([`Cache`]). The lowest layer with
//! `error.rs`: the connection (`db.rs`) and both engines use it.

use domain::Date;

/// Whether a statement is kept prepared for the next time. Statements whose text depends on
/// their input (a list of placeholders as long as a list) are not: they would push out the
/// ones used on every request.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cache {
    Keep,
    Once,
}

/// A value on its way into a statement, or out of a row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Value<'v> {
    Null,
    /// A NULL of a known kind (an `Option` that is `None`): PostgreSQL needs to be told the
    /// type of a placeholder whose only use is `?N IS NULL`.
    NullOf(Kind),
    Int(i64),
    Real(f64),
    Text(&'v str),
    Bool(bool),
    /// A calendar date: 'YYYY-MM-DD' text on SQLite, `date` on PostgreSQL.
    Date(Date),
    Blob(&'v [u8]),
    /// A list of ids: a JSON array on SQLite (for `json_each`), `bigint[]` on PostgreSQL.
    Ints(&'v [i64]),
}

/// What can be bound to a placeholder.
pub(crate) trait Param {
    fn value(&self) -> Value<'_>;
}

/// The kinds of value a placeholder takes. Flags are integers on both databases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Int,
    Real,
    Text,
    Date,
    Ints,
}

/// A parameter type whose `None` still has a kind.
pub(crate) trait Typed {
    const KIND: Kind;
}

macro_rules! typed {
    ($kind:ident: $($t:ty),*) => {$(
        impl Typed for $t {
            const KIND: Kind = Kind::$kind;
        }
    )*};
}
typed!(Int: i64, i32, u32, u16, u8, u64, usize, bool);
typed!(Real: f64);
typed!(Text: str, String);
typed!(Date: Date);
typed!(Ints: Vec<i64>, [i64]);

impl<T: Typed + ?Sized> Typed for &T {
    const KIND: Kind = T::KIND;
}

/// Binds a list of values: `params![household_id, name]`.
macro_rules! params {
    () => {
        &[] as &[&dyn $crate::value::Param]
    };
    ($($param:expr),+ $(,)?) => {
        &[$(&$param as &dyn $crate::value::Param),+] as &[&dyn $crate::value::Param]
    };
}
pub(crate) use params;

/// Runs `write` with `columns` bound as `?1` on and `keys` after them: an insert and an update
/// of one row bind the row's columns from one list this way, each adding its own keys.
pub(crate) fn columns_then<T>(
    columns: &[&dyn Param],
    keys: &[&dyn Param],
    write: impl FnOnce(&[&dyn Param]) -> T,
) -> T {
    let params: Vec<&dyn Param> = columns.iter().chain(keys).copied().collect();
    write(&params)
}

impl Param for i64 {
    fn value(&self) -> Value<'_> {
        Value::Int(*self)
    }
}

macro_rules! small_int_param {
    ($($t:ty),*) => {$(
        impl Param for $t {
            fn value(&self) -> Value<'_> {
                Value::Int(i64::from(*self))
            }
        }
    )*};
}
small_int_param!(i32, u32, u16, u8);

/// Counts and offsets: one past `i64::MAX` is as far as any row.
impl Param for u64 {
    fn value(&self) -> Value<'_> {
        Value::Int(i64::try_from(*self).unwrap_or(i64::MAX))
    }
}

impl Param for usize {
    fn value(&self) -> Value<'_> {
        Value::Int(i64::try_from(*self).unwrap_or(i64::MAX))
    }
}

impl Param for bool {
    fn value(&self) -> Value<'_> {
        Value::Bool(*self)
    }
}

impl Param for f64 {
    fn value(&self) -> Value<'_> {
        Value::Real(*self)
    }
}

impl Param for str {
    fn value(&self) -> Value<'_> {
        Value::Text(self)
    }
}

impl Param for String {
    fn value(&self) -> Value<'_> {
        Value::Text(self)
    }
}

impl Param for Date {
    fn value(&self) -> Value<'_> {
        Value::Date(*self)
    }
}

impl Param for [i64] {
    fn value(&self) -> Value<'_> {
        Value::Ints(self)
    }
}

impl Param for Vec<i64> {
    fn value(&self) -> Value<'_> {
        Value::Ints(self)
    }
}

impl<T: Param + ?Sized> Param for &T {
    fn value(&self) -> Value<'_> {
        (**self).value()
    }
}

impl<T: Param + Typed> Param for Option<T> {
    fn value(&self) -> Value<'_> {
        self.as_ref().map_or(Value::NullOf(T::KIND), Param::value)
    }
}

impl Param for Value<'_> {
    fn value(&self) -> Value<'_> {
        *self
    }
}

/// An owned value, for statements whose values are gathered as they are written.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum SqlValue {
    Null(Kind),
    Int(i64),
    Real(f64),
    Text(String),
    Date(Date),
}

impl Param for SqlValue {
    fn value(&self) -> Value<'_> {
        match self {
            Self::Null(kind) => Value::NullOf(*kind),
            Self::Int(i) => Value::Int(*i),
            Self::Real(f) => Value::Real(*f),
            Self::Text(s) => Value::Text(s),
            Self::Date(d) => Value::Date(*d),
        }
    }
}

impl From<i64> for SqlValue {
    fn from(value: i64) -> Self {
        Self::Int(value)
    }
}

impl From<String> for SqlValue {
    fn from(value: String) -> Self {
        Self::Text(value)
    }
}

impl From<&str> for SqlValue {
    fn from(value: &str) -> Self {
        Self::Text(value.to_owned())
    }
}

impl From<Date> for SqlValue {
    fn from(value: Date) -> Self {
        Self::Date(value)
    }
}

impl<T: Into<SqlValue> + Typed> From<Option<T>> for SqlValue {
    fn from(value: Option<T>) -> Self {
        value.map_or(Self::Null(T::KIND), Into::into)
    }
}

/// A list of owned values as parameters.
pub(crate) fn as_params(values: &[SqlValue]) -> Vec<&dyn Param> {
    values.iter().map(|value| value as &dyn Param).collect()
}

impl rusqlite::ToSql for Value<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, Value as Owned, ValueRef};
        Ok(match *self {
            Value::Null | Value::NullOf(_) => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(i) => ToSqlOutput::Borrowed(ValueRef::Integer(i)),
            Value::Real(f) => ToSqlOutput::Borrowed(ValueRef::Real(f)),
            Value::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
            Value::Bool(b) => ToSqlOutput::Borrowed(ValueRef::Integer(i64::from(b))),
            Value::Date(d) => ToSqlOutput::Owned(Owned::Text(d.to_string())),
            Value::Blob(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
            Value::Ints(ids) => ToSqlOutput::Owned(Owned::Text(
                serde_json::to_string(ids)
                    .map_err(|err| rusqlite::Error::ToSqlConversionFailure(Box::new(err)))?,
            )),
        })
    }
}

/// What a column can be read as.
pub(crate) trait Column: Sized {
    /// `None` when the value is not of this type.
    fn from_value(value: Value<'_>) -> Option<Self>;
}

impl Column for i64 {
    fn from_value(value: Value<'_>) -> Option<Self> {
        match value {
            Value::Int(i) => Some(i),
            Value::Bool(b) => Some(i64::from(b)),
            _ => None,
        }
    }
}

impl Column for u16 {
    fn from_value(value: Value<'_>) -> Option<Self> {
        i64::from_value(value).and_then(|i| u16::try_from(i).ok())
    }
}

impl Column for u32 {
    fn from_value(value: Value<'_>) -> Option<Self> {
        i64::from_value(value).and_then(|i| u32::try_from(i).ok())
    }
}

impl Column for u64 {
    fn from_value(value: Value<'_>) -> Option<Self> {
        i64::from_value(value).and_then(|i| u64::try_from(i).ok())
    }
}

impl Column for bool {
    fn from_value(value: Value<'_>) -> Option<Self> {
        match value {
            Value::Bool(b) => Some(b),
            Value::Int(i) => Some(i != 0),
            _ => None,
        }
    }
}

impl Column for f64 {
    fn from_value(value: Value<'_>) -> Option<Self> {
        match value {
            Value::Real(f) => Some(f),
            #[allow(clippy::cast_precision_loss)]
            Value::Int(i) => Some(i as f64),
            _ => None,
        }
    }
}

impl Column for String {
    fn from_value(value: Value<'_>) -> Option<Self> {
        match value {
            Value::Text(s) => Some(s.to_owned()),
            Value::Date(d) => Some(d.to_string()),
            _ => None,
        }
    }
}

impl Column for Date {
    fn from_value(value: Value<'_>) -> Option<Self> {
        match value {
            Value::Date(d) => Some(d),
            Value::Text(s) => parse_date(s),
            _ => None,
        }
    }
}

impl<T: Column> Column for Option<T> {
    fn from_value(value: Value<'_>) -> Option<Self> {
        match value {
            Value::Null => Some(None),
            value => T::from_value(value).map(Some),
        }
    }
}

impl Value<'_> {
    /// The value as [`Db::logical_dump`] writes it.
    pub(crate) fn dump(&self) -> String {
        match *self {
            Self::Null | Self::NullOf(_) => "NULL".to_owned(),
            Self::Int(i) => i.to_string(),
            Self::Real(f) => f.to_string(),
            Self::Text(t) => format!("{t:?}"),
            Self::Bool(b) => i64::from(b).to_string(),
            Self::Date(d) => format!("{:?}", d.to_string()),
            Self::Blob(b) => format!("blob {b:?}"),
            Self::Ints(ids) => format!("{ids:?}"),
        }
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
