//! `Text`: a sentence shown to a person, as an English format and its named arguments.
//!
//! The English format (with `{name}` placeholders) is the key of its translations; the
//! edges render it in the reader's language. Nothing user-facing is built by concatenation.

use std::fmt;

/// An English format with `{name}` placeholders and the values of its arguments.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Text {
    /// The English format, also the key of its translations.
    pub key: String,
    /// Named arguments, in the order they were added; names are unique.
    pub args: Vec<(String, String)>,
}

impl Text {
    /// A text without arguments (yet).
    pub fn new(key: &str) -> Text {
        Text { key: key.to_owned(), args: Vec::new() }
    }

    /// Sets the argument `name` (replacing an earlier value of the same name).
    #[must_use]
    pub fn with(mut self, name: &str, value: impl fmt::Display) -> Text {
        let value = value.to_string();
        match self.args.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = value,
            None => self.args.push((name.to_owned(), value)),
        }
        self
    }

    /// The value of argument `name`, if set.
    pub fn arg(&self, name: &str) -> Option<&str> {
        self.args.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The English sentence: `{name}` replaced by its argument; unknown placeholders stay.
    pub fn render(&self) -> String {
        render_format(&self.key, &self.args)
    }
}

/// Substitutes `{name}` placeholders (names of letters, digits and `_`) in `format`.
///
/// Used by [`Text::render`]; translators can call it with a translated format.
pub fn render_format(format: &str, args: &[(String, String)]) -> String {
    let mut out = String::with_capacity(format.len());
    let mut rest = format;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let name_len =
            after.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(after.len());
        let name = &after[..name_len];
        let closed = after[name_len..].starts_with('}');
        match args.iter().find(|(n, _)| n == name) {
            Some((_, value)) if closed && !name.is_empty() => {
                out.push_str(value);
                rest = &after[name_len + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_named_arguments() {
        let t = Text::new("{name} renews on {date} for {amount}.")
            .with("name", "Netflix")
            .with("date", "2026-03-01")
            .with("amount", "€12.99");
        assert_eq!(t.render(), "Netflix renews on 2026-03-01 for €12.99.");
        assert_eq!(t.to_string(), t.render());
        assert_eq!(t.key, "{name} renews on {date} for {amount}.");
        assert_eq!(t.arg("name"), Some("Netflix"));
    }

    #[test]
    fn unknown_and_odd_placeholders_stay() {
        let t = Text::new("{a} {b} {} {a {a}} }{ {x y} {").with("a", 1);
        assert_eq!(t.render(), "1 {b} {} {a 1} }{ {x y} {");
    }

    #[test]
    fn values_are_not_reinterpreted() {
        let t = Text::new("{a}{b}").with("a", "{b}").with("b", "é");
        assert_eq!(t.render(), "{b}é");
    }

    #[test]
    fn with_replaces_and_keeps_order() {
        let t = Text::new("{n}").with("n", 1).with("m", 2).with("n", 3);
        assert_eq!(
            t.args,
            vec![("n".to_owned(), "3".to_owned()), ("m".to_owned(), "2".to_owned())]
        );
        assert_eq!(t.render(), "3");
    }

    #[test]
    fn multibyte_format() {
        let t = Text::new("«{nom}» — ¿{ñ}?").with("nom", "Café").with("ñ", "sí");
        assert_eq!(t.render(), "«Café» — ¿sí?");
    }
}
