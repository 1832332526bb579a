//! The languages Exhale speaks to people, and how each picks a plural form (CLDR's plural
//! rules for cardinal numbers). Catalogues and date and amount formats live in the `i18n`
//! crate; this is what `Text` needs to render in a language.

use std::fmt;

/// A language a person may read Exhale in. English is also what agents and logs read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Language {
    #[default]
    English,
    Spanish,
}

impl Language {
    pub const ALL: &[Language] = &[Language::English, Language::Spanish];

    /// The BCP 47 language subtag: "en", "es".
    pub fn code(self) -> &'static str {
        match self {
            Self::English => "en",
            Self::Spanish => "es",
        }
    }

    /// The language's name in itself, as a list of languages to choose from shows it.
    pub fn endonym(self) -> &'static str {
        match self {
            Self::English => "English",
            Self::Spanish => "Español",
        }
    }

    /// A BCP 47 tag's language ("es", "es-ES", "es_419", "EN-gb"); `None` for one Exhale
    /// does not speak.
    pub fn parse(tag: &str) -> Option<Self> {
        let primary = tag.trim().split(['-', '_']).next().unwrap_or_default();
        Self::ALL.iter().copied().find(|language| primary.eq_ignore_ascii_case(language.code()))
    }

    /// Which plural form a number takes, from its decimal text as shown ("1", "1.50", "-3",
    /// "1000000"): the visible fraction digits matter ("1" is one in English, "1.0" other).
    /// Text that is not a number is `Other`.
    pub fn plural(self, number: &str) -> Plural {
        let Some(operands) = Operands::parse(number) else {
            return Plural::Other;
        };
        match self {
            // one: i = 1 and v = 0
            Self::English if operands.i == 1 && operands.v == 0 => Plural::One,
            Self::English => Plural::Other,
            // one: n = 1; many: e = 0 and i != 0 and i % 1000000 = 0 and v = 0
            Self::Spanish if operands.i == 1 && operands.f == 0 => Plural::One,
            Self::Spanish if operands.i != 0 && operands.i % 1_000_000 == 0 && operands.v == 0 => {
                Plural::Many
            }
            Self::Spanish => Plural::Other,
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// CLDR's plural categories; each language uses some of them, and always `Other`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plural {
    Zero,
    One,
    Two,
    Few,
    Many,
    Other,
}

impl Plural {
    /// Its name in a message's plural branches: "one", "other".
    pub fn keyword(self) -> &'static str {
        match self {
            Self::Zero => "zero",
            Self::One => "one",
            Self::Two => "two",
            Self::Few => "few",
            Self::Many => "many",
            Self::Other => "other",
        }
    }
}

/// CLDR's operands of a decimal number: `i` its integer digits, `v` how many fraction digits
/// it shows, `f` those digits as a number (`n`, the absolute value, is `i` when `f` is 0).
struct Operands {
    i: u64,
    v: usize,
    f: u64,
}

impl Operands {
    fn parse(number: &str) -> Option<Self> {
        let digits = number.trim().trim_start_matches(['-', '+']);
        let (integer, fraction) = digits.split_once('.').unwrap_or((digits, ""));
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if integer.is_empty() || !all_digits(integer) || !all_digits(fraction) {
            return None;
        }
        let i = integer.parse().unwrap_or(u64::MAX);
        let f = if fraction.is_empty() { 0 } else { fraction.parse().unwrap_or(u64::MAX) };
        Some(Self { i, v: fraction.len(), f })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_and_spanish_follow_cldr() {
        use Plural::{Many, One, Other};
        for (number, english, spanish) in [
            ("1", One, One),
            ("-1", One, One),
            ("0", Other, Other),
            ("2", Other, Other),
            ("1.0", Other, One),
            ("1.50", Other, Other),
            ("21", Other, Other),
            ("1000000", Other, Many),
            ("2000000", Other, Many),
            ("1000000.5", Other, Other),
            ("1000001", Other, Other),
            ("many", Other, Other),
            ("", Other, Other),
        ] {
            assert_eq!(Language::English.plural(number), english, "{number}");
            assert_eq!(Language::Spanish.plural(number), spanish, "{number}");
        }
    }

    #[test]
    fn tags_name_their_language() {
        assert_eq!(Language::parse("es-ES"), Some(Language::Spanish));
        assert_eq!(Language::parse("ES_419"), Some(Language::Spanish));
        assert_eq!(Language::parse(" en "), Some(Language::English));
        assert_eq!(Language::parse("fr"), None);
        assert_eq!(Language::parse(""), None);
        assert_eq!(Language::parse("est"), None);
    }
}
