//! Shapes shared by many ops: amounts, references, pages, timestamps, cycles, receipts and
//! patches. Dates are `resolve::IsoDate`, as an input may give one as a phrase.

use std::{borrow::Cow, fmt};

use domain::{
    CyclePreset, CycleUnit,
    entities::{ChangeAction, EntityKind},
    money::{Currency, Decimal, Money, MoneyError},
    validate,
};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer, de};

use crate::resolve::IsoDate;

// Fixed vocabulary (codes, units, statuses) is borrowed, not allocated: a 500-row list builds
// thousands of these.

/// An amount as every API writes it: a decimal string in major units beside its currency.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Amount {
    /// Decimal string in major units, e.g. "12.99".
    pub amount: Decimal,
    /// ISO 4217 code, e.g. "EUR".
    pub currency: CurrencyCode,
    /// Formatted for people, e.g. "€12.99".
    pub display: String,
}

/// An ISO 4217 currency code as an input gives it ("EUR"; any case, surrounding spaces
/// ignored), read into a known currency: an unknown code is refused where it stands, with what
/// to write. Written back as its upper-case code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CurrencyCode(pub Currency);

impl CurrencyCode {
    pub fn currency(self) -> Currency {
        self.0
    }

    /// The upper-case code, such as "EUR".
    pub fn code(self) -> &'static str {
        self.0.code()
    }
}

impl From<Currency> for CurrencyCode {
    fn from(currency: Currency) -> Self {
        Self(currency)
    }
}

impl std::str::FromStr for CurrencyCode {
    type Err = domain::money::MoneyError;

    fn from_str(code: &str) -> Result<Self, Self::Err> {
        Currency::parse(code).map(Self)
    }
}

impl fmt::Display for CurrencyCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.code())
    }
}

as_text!(CurrencyCode, "CurrencyCode", CURRENCY_PATTERN);

/// An amount an input gives in major units, "-12.50" for money out: a decimal of at most
/// 1,000,000,000 and four decimals, refused where it is read. Whether it has more decimals
/// than its currency, [`SignedAmount::money`] decides: the currency is another field's or the
/// account's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SignedAmount(Decimal);

/// An amount that cannot be below zero, such as a price or a limit ("-0" is zero).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnsignedAmount(Decimal);

impl SignedAmount {
    /// The decimal as written.
    pub fn decimal(self) -> Decimal {
        self.0
    }

    /// The amount in `currency`: an error if it has more decimals than the currency.
    pub fn money(self, currency: Currency) -> Result<Money, MoneyError> {
        self.0.in_currency(currency)
    }
}

impl UnsignedAmount {
    /// The decimal as written.
    pub fn decimal(self) -> Decimal {
        self.0
    }

    /// The size of an amount an output gave, whichever its sign (a charge read from a
    /// statement as money out).
    pub fn size_of(amount: Decimal) -> Self {
        Self(amount.abs())
    }

    /// The amount in `currency`: an error if it has more decimals than the currency.
    pub fn money(self, currency: Currency) -> Result<Money, MoneyError> {
        self.0.in_currency(currency)
    }
}

impl std::str::FromStr for SignedAmount {
    type Err = MoneyError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Decimal::parse(text.trim()).map(Self)
    }
}

impl std::str::FromStr for UnsignedAmount {
    type Err = MoneyError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let decimal = Decimal::parse(text.trim())?;
        if decimal.is_negative() {
            return Err(MoneyError::Negative);
        }
        Ok(Self(decimal))
    }
}

/// Serde and JSON Schema for a value written as text: written with `Display`, read with
/// `FromStr` (whose refusal, with `hint` after it, is the deserialisation's), a string with
/// `pattern` in a schema, inline where a field holds it.
macro_rules! as_text {
    ($type:ty, $name:literal, $pattern:expr) => {
        $crate::common::as_text!($type, $name, $pattern, "");
    };
    ($type:ty, $name:literal, $pattern:expr, $hint:literal) => {
        impl ::serde::Serialize for $type {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(self)
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $type {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                ::std::borrow::Cow::<str>::deserialize(deserializer)?
                    .parse::<$type>()
                    .map_err(|err| ::serde::de::Error::custom(format_args!("{err}{}", $hint)))
            }
        }

        impl ::schemars::JsonSchema for $type {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                $name.into()
            }

            fn inline_schema() -> bool {
                true
            }

            fn json_schema(_: &mut ::schemars::SchemaGenerator) -> ::schemars::Schema {
                ::schemars::json_schema!({"type": "string", "pattern": $pattern})
            }
        }
    };
}
pub(crate) use as_text;

impl fmt::Display for SignedAmount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Display for UnsignedAmount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

as_text!(
    SignedAmount,
    "SignedAmount",
    SIGNED_AMOUNT_PATTERN,
    "; it is a signed decimal such as \"-50\" (money out) or \"12.99\""
);
as_text!(
    UnsignedAmount,
    "UnsignedAmount",
    AMOUNT_PATTERN,
    "; it is a decimal of zero or more such as \"12.99\""
);

/// How much one unit of a currency is worth in the household's main currency ("0.92"): above
/// 0 and below 1,000,000, with at most six decimals, refused where it is read. Written back
/// without trailing zeros.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExchangeRate(i64);

impl ExchangeRate {
    /// The rate in millionths (0.92 is 920,000).
    pub fn micros(self) -> i64 {
        self.0
    }

    /// A rate as the store keeps it, in millionths.
    pub fn from_micros(micros: i64) -> Self {
        Self(micros)
    }
}

impl std::str::FromStr for ExchangeRate {
    type Err = MoneyError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        domain::money::parse_rate(text).map(Self)
    }
}

impl fmt::Display for ExchangeRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&domain::money::format_rate(self.0))
    }
}

as_text!(ExchangeRate, "ExchangeRate", RATE_PATTERN);

/// What a rate looks like: above 0 and below 1,000,000, at most six decimals (the second
/// branch is a rate below 1, whose six decimals are not all zeros).
pub const RATE_PATTERN: &str = "^0*([1-9][0-9]{0,5}([.][0-9]{1,6})?|0[.]([1-9][0-9]{0,5}|0[1-9][0-9]{0,4}|00[1-9][0-9]{0,3}|000[1-9][0-9]{0,2}|0000[1-9][0-9]?|00000[1-9]))$";

/// Three letters: an ISO 4217 code such as EUR (which ones exist, the op says).
pub const CURRENCY_PATTERN: &str = "^[A-Za-z]{3}$";

/// A reference to another entity by id, with its name for reading.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Ref {
    pub id: i64,
    pub name: String,
}

/// The id of a record that has no name to give instead (a charge, a token, an activity entry):
/// a whole number from 1 to [`crate::limits::MAX_ID`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct RecordId(i64);

impl RecordId {
    pub fn new(id: i64) -> Option<Self> {
        (1..=crate::limits::MAX_ID).contains(&id).then_some(Self(id))
    }

    pub fn get(self) -> i64 {
        self.0
    }
}

impl fmt::Display for RecordId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl From<RecordId> for i64 {
    fn from(id: RecordId) -> i64 {
        id.0
    }
}

impl<'de> Deserialize<'de> for RecordId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let id = i64::deserialize(deserializer)?;
        Self::new(id).ok_or_else(|| {
            de::Error::custom(format_args!(
                "{id} is not an id; ids are whole numbers from 1 to {}",
                crate::limits::MAX_ID
            ))
        })
    }
}

impl JsonSchema for RecordId {
    fn schema_name() -> Cow<'static, str> {
        "RecordId".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "integer", "minimum": 1, "maximum": crate::limits::MAX_ID})
    }
}

// The input of an op that acts on one thing: its id (for subscriptions, categories, payment
// methods and members, the id or the name; see `crate::resolve`). A plain comment, not a doc
// comment, so the schema carries no description of its own.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdInput<T = RecordId> {
    pub id: T,
}

/// One page of a list. Lists have a stable order; pass `next_cursor` as `cursor` for more.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Page<T> {
    pub items: Vec<T>,
    /// How many items match the filters, over all pages.
    pub total: u64,
    /// Present when there are more items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// An instant, written in RFC 3339 in UTC to the second (`2026-11-29T10:00:00Z`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub domain::Timestamp);

impl Timestamp {
    /// As Exhale stores and shows it; the one place that says how.
    pub fn text(&self) -> String {
        self.0.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
    }

    /// Reads RFC 3339 (as stored); `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        text.parse().ok().map(Self)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text())
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = Cow::<str>::deserialize(deserializer)?;
        Self::parse(&text).ok_or_else(|| {
            de::Error::custom(format_args!(
                "\"{text}\" is not a timestamp; write it as RFC 3339, for example 2026-11-29T10:00:00Z"
            ))
        })
    }
}

impl JsonSchema for Timestamp {
    fn schema_name() -> Cow<'static, str> {
        "Timestamp".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "format": "date-time"})
    }
}

/// A preset, or every `every` `unit`s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(deny_unknown_fields)]
pub enum CycleInput {
    Preset(CyclePreset),
    Custom {
        #[schemars(range(min = 1, max = 366))]
        every: i64,
        unit: CycleUnit,
    },
}

// By hand rather than `untagged`: a wrong preset or unit is refused with the allowed values and
// a pointer to the field, instead of "data did not match any variant".
impl<'de> Deserialize<'de> for CycleInput {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> de::Visitor<'de> for Visitor {
            type Value = CycleInput;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a cycle preset such as \"monthly\", or {\"every\": 3, \"unit\": \"month\"}",
                )
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<CycleInput, E> {
                CyclePreset::parse(text).map(CycleInput::Preset).ok_or_else(|| {
                    E::custom(format_args!(
                        "\"{text}\" is not a cycle preset; use {}, or {{\"every\": 3, \"unit\": \"month\"}}",
                        domain::named::list(CyclePreset::NAMES)
                    ))
                })
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<CycleInput, A::Error> {
                #[derive(Deserialize)]
                #[serde(field_identifier, rename_all = "snake_case")]
                enum Field {
                    Every,
                    Unit,
                }
                let (mut every, mut unit) = (None, None);
                while let Some(field) = map.next_key()? {
                    match field {
                        Field::Every => every = Some(map.next_value()?),
                        Field::Unit => unit = Some(map.next_value()?),
                    }
                }
                match (every, unit) {
                    (Some(every), Some(unit)) => Ok(CycleInput::Custom { every, unit }),
                    (None, _) => Err(de::Error::missing_field("every")),
                    (_, None) => Err(de::Error::missing_field("unit")),
                }
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// A billing cycle as outputs write it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CycleOutput {
    pub every: i64,
    pub unit: CycleUnit,
    /// The preset name when the cycle is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<CyclePreset>,
    /// For reading, such as monthly or every 3 weeks.
    pub description: String,
}

/// One entity a write changed, as previews and receipts list it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Change {
    /// The audit entry (absent in a dry run, which writes nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_id: Option<i64>,
    pub entity: EntityKind,
    pub entity_id: i64,
    pub action: ChangeAction,
    pub summary: String,
}

/// The fields every write adds to its output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Receipt {
    /// Pass to undo to revert this whole call.
    pub batch_id: Option<String>,
    /// Pass to undo to revert these changes.
    pub audit_ids: Vec<i64>,
    /// True when nothing was changed (a preview).
    pub dry_run: bool,
    pub changes: Vec<Change>,
}

/// A field of an update: absent (keep), `null` (clear) or a value (set).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Patch<T> {
    #[default]
    Keep,
    Clear,
    Set(T),
}

impl<T> Patch<T> {
    pub fn is_keep(&self) -> bool {
        matches!(self, Self::Keep)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Patch<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match Option::<T>::deserialize(deserializer)? {
            Some(value) => Self::Set(value),
            None => Self::Clear,
        })
    }
}

impl<T: JsonSchema> JsonSchema for Patch<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("Nullable_{}", T::schema_name()).into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <Option<T>>::json_schema(generator)
    }

    fn inline_schema() -> bool {
        true
    }
}

/// Pagination fields shared by list inputs.
pub const MAX_PAGE: u32 = 500;
pub const DEFAULT_PAGE: u32 = 100;

/// Far beyond any real list, and well inside SQLite's integers.
const MAX_OFFSET: u64 = 999_999_999_999;

/// What a signed amount looks like: a decimal string in major units, "-12.50", of at most
/// 1,000,000,000 and four decimals (the currency's own number of decimals is checked by the
/// handler: it depends on the currency, which another field or the account names).
pub const SIGNED_AMOUNT_PATTERN: &str = "^-?0*([0-9]{1,9}([.][0-9]{1,4})?|1000000000([.]0{1,4})?)$";

/// An amount that cannot be negative, such as a price or a limit (minus zero is zero).
pub const AMOUNT_PATTERN: &str =
    "^(0*([0-9]{1,9}([.][0-9]{1,4})?|1000000000([.]0{1,4})?)|-0+([.]0{1,4})?)$";

/// A language tag as a member's or the household's setting takes it ("en", "es-MX").
pub const LANGUAGE_PATTERN: &str = "^[A-Za-z0-9-]{2,12}$";

/// A colour, "#rrggbb".
pub const COLOUR_PATTERN: &str = "^#[0-9a-fA-F]{6}$";

/// What a cursor looks like (`o` and the offset), so a schema tells a made-up one apart.
pub const CURSOR_PATTERN: &str = "^o[0-9]{1,12}$";

/// The position a list `cursor` names: an offset into the list's stable order, written
/// `o<offset>`; no cursor is the start. `None` for a cursor Exhale never gave out.
///
/// Public so an adapter that hands out a shorter page than the op produced (MCP, to fit a
/// model's context) can give the cursor of the first item it left out.
pub fn cursor_offset(cursor: Option<&str>) -> Option<u64> {
    match cursor {
        None => Some(0),
        Some(cursor) => cursor
            .strip_prefix('o')
            .and_then(|offset| offset.parse().ok())
            .filter(|&offset: &u64| offset <= MAX_OFFSET),
    }
}

/// What a `search_transactions` cursor looks like: an offset as every list takes, or the
/// position after a transaction (its date and id) and how many items came before it.
pub const POSITION_CURSOR_PATTERN: &str = "^(o[0-9]{1,12}|(19[0-9]{2}|2[01][0-9]{2}|2200)-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[.]0*[1-9][0-9]{0,15}[.][0-9]{1,12})$";

/// A cursor naming a position in a list ordered by date and then id, newest first: the page
/// starts after the item with this date and id. Written `<date>.<id>.<before>`, where `before`
/// counts the items on earlier pages, so totals stay counted from the start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PositionCursor {
    pub on: domain::Date,
    pub id: i64,
    pub before: u64,
}

impl PositionCursor {
    /// `None` for text that is not a position cursor.
    pub fn parse(text: &str) -> Option<Self> {
        let mut parts = text.split('.');
        let on = validate::parse_date(parts.next()?).ok()?;
        let id =
            parts.next()?.parse().ok().filter(|id| (1..=crate::limits::MAX_ID).contains(id))?;
        let before = parts.next()?.parse().ok().filter(|&n: &u64| n <= MAX_OFFSET)?;
        parts.next().is_none().then_some(Self { on, id, before })
    }
}

impl fmt::Display for PositionCursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", IsoDate(self.on), self.id, self.before)
    }
}

/// How many items come before the page `cursor` starts, for either form of cursor; 0 for no
/// cursor or one Exhale never gave out (the op refuses that one itself).
pub fn items_before(cursor: Option<&str>) -> u64 {
    cursor_offset(cursor)
        .or_else(|| cursor.and_then(PositionCursor::parse).map(|position| position.before))
        .unwrap_or(0)
}

/// The cursor after `returned` items starting at `offset`, when the list has more.
pub fn next_cursor(offset: u64, returned: usize, total: u64) -> Option<String> {
    let next = offset + returned as u64;
    (next < total).then(|| format!("o{next}"))
}

/// The cursor for the rest of a page an adapter cut short after `kept` of its items (MCP, to
/// fit a tool result), when the list has more. A list that pages by position (its cursor's
/// pattern is [`POSITION_CURSOR_PATTERN`]) gets the position after the last item kept, read
/// off that item's `on` and `id` (its JSON), so the rest stays where it was as rows are added
/// before it; any other list gets an offset.
pub fn cut_cursor(
    by_position: bool,
    offset: u64,
    kept: usize,
    last_kept: Option<&str>,
    total: u64,
) -> Option<String> {
    #[derive(Deserialize)]
    struct Position {
        on: IsoDate,
        id: i64,
    }
    let next = offset + kept as u64;
    if next >= total {
        return None;
    }
    let position = last_kept
        .filter(|_| by_position)
        .and_then(|item| serde_json::from_str::<Position>(item).ok());
    Some(match position {
        Some(Position { on, id }) => PositionCursor { on: on.0, id, before: next }.to_string(),
        None => format!("o{next}"),
    })
}
