//! Closed sets of names: [`named_enum!`](crate::named_enum) declares a fieldless enum with
//! its stable lower-case names, which the database stores and every API shows.
//!
//! Each enum gets `ALL`, `as_str`, `parse` (any case, spaces and hyphens as underscores, and
//! the aliases it lists), `Display`, and its wire form: it serialises as its name, a wrong
//! value is refused with a message that lists the allowed ones, and its JSON Schema says
//! `"enum"`, so clients and models are told the values. The `ops` crate declares its own
//! closed sets (sort orders, report kinds) with the same macro.

use std::fmt;

// Re-exported for the macro's expansion in other crates.
#[doc(hidden)]
pub use schemars;
#[doc(hidden)]
pub use serde;

/// Declares a closed set of names. `noun` names one value in error messages ("status").
///
/// ```text
/// named_enum! {
///     /// Where a subscription stands.
///     pub enum SubscriptionStatus("subscription status") {
///         /// In a free trial.
///         Trial => "trial",
///         Cancelled => "cancelled" | "canceled",
///     }
/// }
/// ```
#[macro_export]
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident ($noun:literal) {
            $( $(#[$vmeta:meta])* $variant:ident => $text:literal $(| $alias:literal)* ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        $vis enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// Every name, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            /// The stable lower-case name.
            pub fn as_str(&self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// Parses a name or an alias, in any case, ignoring surrounding whitespace, with
            /// spaces and hyphens read as underscores.
            pub fn parse(s: &str) -> Option<$name> {
                $crate::named::find(s, &[$(($name::$variant, &[$text $(, $alias)*])),+])
            }
        }

        impl ::core::fmt::Display for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::core::str::FromStr for $name {
            type Err = $crate::named::UnknownName;

            fn from_str(text: &str) -> ::core::result::Result<Self, Self::Err> {
                $name::parse(text).ok_or_else(|| $crate::named::UnknownName::new(text, $noun, $name::NAMES))
            }
        }

        impl $crate::named::serde::Serialize for $name {
            fn serialize<S: $crate::named::serde::Serializer>(
                &self,
                serializer: S,
            ) -> ::core::result::Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> $crate::named::serde::Deserialize<'de> for $name {
            fn deserialize<D: $crate::named::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::core::result::Result<Self, D::Error> {
                deserializer.deserialize_str($crate::named::NameVisitor {
                    noun: $noun,
                    names: $name::NAMES,
                    parse: $name::parse,
                })
            }
        }

        impl $crate::named::schemars::JsonSchema for $name {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }

            fn inline_schema() -> bool {
                true
            }

            fn json_schema(
                _: &mut $crate::named::schemars::SchemaGenerator,
            ) -> $crate::named::schemars::Schema {
                $crate::named::schema($name::NAMES)
            }
        }
    };
}

/// The value whose names include `text`, read loosely (see `parse` above). Without allocating:
/// the store reads every row's statuses and kinds through here.
#[doc(hidden)]
pub fn find<T: Copy>(text: &str, values: &[(T, &[&str])]) -> Option<T> {
    let text = text.trim();
    let loose = |name: &&str| {
        name.len() == text.len()
            && name.bytes().zip(text.bytes()).all(|(n, t)| match t {
                b' ' | b'-' => n == b'_',
                t => n == t.to_ascii_lowercase(),
            })
    };
    values.iter().find(|(_, names)| names.iter().any(loose)).map(|(value, _)| *value)
}

/// "a, b or c".
pub fn list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// The JSON Schema of a closed set: a string, one of `names`.
#[doc(hidden)]
pub fn schema(names: &[&str]) -> schemars::Schema {
    schemars::json_schema!({"type": "string", "enum": names})
}

/// A name that is not one of the set's, with the set's names for the message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("\"{text}\" is not a {noun}; use {}", list(.names))]
pub struct UnknownName {
    text: String,
    noun: &'static str,
    names: &'static [&'static str],
}

impl UnknownName {
    #[doc(hidden)]
    pub fn new(text: &str, noun: &'static str, names: &'static [&'static str]) -> Self {
        Self { text: crate::validate::shorten(text, 40), noun, names }
    }
}

/// Reads a name, refusing anything else with the list of allowed values.
#[doc(hidden)]
pub struct NameVisitor<T: 'static> {
    pub noun: &'static str,
    pub names: &'static [&'static str],
    pub parse: fn(&str) -> Option<T>,
}

impl<T> serde::de::Visitor<'_> for NameVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a {}: {}", self.noun, list(self.names))
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<T, E> {
        (self.parse)(text).ok_or_else(|| E::custom(UnknownName::new(text, self.noun, self.names)))
    }
}
