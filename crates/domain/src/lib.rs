//! Exhale's domain: the types and rules every other crate shares.
//!
//! Money and currencies ([`Money`], [`Currency`]), billing cycles ([`Cycle`]), the charge
//! series of a subscription ([`Series`]), user-facing sentences ([`Text`]) and the languages
//! they are read in ([`Language`], with plural rules), input
//! validation ([`validate`]), budget periods ([`budget`]), the plain entity enums ([`entities`]), the default
//! categories ([`categories`]), how typed names are compared ([`names`]) and dates said
//! relative to today ([`relative`]). Nothing here does IO; everything is deterministic.

// Tests may unwrap; the library itself may not.

pub mod budget;
pub mod categories;
pub mod cycle;
pub mod entities;
pub mod language;
pub mod money;
pub mod named;
pub mod names;
pub mod relative;
pub mod series;
pub mod text;
pub mod validate;

pub use cycle::{Cycle, CycleError, CyclePreset, CycleUnit};
pub use jiff::{Timestamp, civil::Date};
pub use language::{Language, Plural};
pub use money::{Currency, Money, MoneyError};
pub use series::{Occurrence, PauseSpan, PricePoint, Series};
pub use text::Text;
