//! `Text`: a sentence shown to a person, as an English format and its named arguments, and
//! how a format is rendered.
//!
//! The English format is the key of its translations; the edges render it in the reader's
//! language (the catalogues are in the `i18n` crate). A format has `{name}` placeholders and
//! plural choices, `{count, plural, one {# charge} other {# charges}}`, as ICU's message format
//! writes them: `=2 {...}` for an exact value, CLDR's categories for the rest, `#` the number.
//! Nothing user-facing is built by concatenation.

use std::fmt;

use crate::{
    Cycle, CycleUnit, Date, Money,
    language::{Language, Plural},
    money::Currency,
};

/// Starts the value of a typed argument (an amount, a day, a cycle, a sentence), which each
/// language writes its own way: kept as data in the argument, written out when the text is
/// rendered.
const TYPED: char = '\u{1}';

/// The value of a typed argument, read back from a text's arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Typed {
    Money(Money),
    Date(Date),
    Cycle(Cycle),
    /// A sentence inside another ("Undid: {summary}"), written in the reader's language too.
    Text(Box<Text>),
}

impl Typed {
    /// The value of a typed argument; `None` for a plain one.
    pub fn read(value: &str) -> Option<Typed> {
        let typed = value.strip_prefix(TYPED)?;
        if let Some(json) = typed.strip_prefix("text ") {
            return serde_json::from_str(json).ok().map(|text| Typed::Text(Box::new(text)));
        }
        let mut parts = typed.split(' ');
        let typed = match parts.next()? {
            "money" => {
                let amount = parts.next()?;
                Typed::Money(Money::parse(amount, Currency::parse(parts.next()?).ok()?).ok()?)
            }
            "date" => Typed::Date(parts.next()?.parse().ok()?),
            "cycle" => {
                let every = parts.next()?.parse().ok()?;
                Typed::Cycle(Cycle::new(every, CycleUnit::parse(parts.next()?)?).ok()?)
            }
            _ => return None,
        };
        parts.next().is_none().then_some(typed)
    }

    /// As agents read it, in English: `€12.99`, `2026-12-03`, `every 3 weeks`.
    pub fn english(&self) -> String {
        match self {
            Typed::Money(money) => money.display(),
            Typed::Date(date) => date.to_string(),
            Typed::Cycle(cycle) => cycle.describe(),
            Typed::Text(text) => text.render(),
        }
    }
}

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

    /// Sets the argument `name` to an amount, which each language writes its own way
    /// (`€12.99`, `12,99 €`).
    #[must_use]
    pub fn with_money(self, name: &str, money: Money) -> Text {
        let (amount, code) = (money.to_decimal_string(), money.currency().code());
        self.with(name, format_args!("{TYPED}money {amount} {code}"))
    }

    /// Sets the argument `name` to a day (`2026-12-03` for agents, `3 dic 2026` in Spanish).
    #[must_use]
    pub fn with_date(self, name: &str, date: Date) -> Text {
        self.with(name, format_args!("{TYPED}date {date}"))
    }

    /// Sets the argument `name` to a cycle in words (`every 3 weeks`, `cada 3 semanas`).
    #[must_use]
    pub fn with_cycle(self, name: &str, cycle: Cycle) -> Text {
        let (every, unit) = (cycle.every(), cycle.unit().as_str());
        self.with(name, format_args!("{TYPED}cycle {every} {unit}"))
    }

    /// Sets the argument `name` to another text, which is written in the same language as this
    /// one.
    #[must_use]
    pub fn with_text(self, name: &str, text: &Text) -> Text {
        match serde_json::to_string(text) {
            Ok(json) => self.with(name, format_args!("{TYPED}text {json}")),
            Err(_) => self.with(name, text.render()),
        }
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

/// Renders an English `format` with `args` (see the module's doc).
pub fn render_format(format: &str, args: &[(String, String)]) -> String {
    render_in(Language::English, format, args)
}

/// Renders `format` (English, or its translation) with `args` in `language`, whose plural
/// rules choose between a plural's branches. An unknown placeholder, or one that is not
/// well formed, stays as written.
pub fn render_in(language: Language, format: &str, args: &[(String, String)]) -> String {
    let mut out = String::with_capacity(format.len());
    write_message(&mut out, language, format, args, None);
    out
}

/// Writes `format`; inside a plural branch, `number` is what `#` stands for.
fn write_message(
    out: &mut String,
    language: Language,
    format: &str,
    args: &[(String, String)],
    number: Option<&str>,
) {
    let mut rest = format;
    loop {
        let next = rest.find(|c| c == '{' || (number.is_some() && c == '#'));
        let Some(at) = next else { break };
        out.push_str(&rest[..at]);
        if let (Some(number), "#") = (number, &rest[at..at + 1]) {
            out.push_str(number);
            rest = &rest[at + 1..];
            continue;
        }
        let after = &rest[at + 1..];
        let name_len =
            after.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(after.len());
        let name = &after[..name_len];
        let value = args.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
        match value.filter(|_| !name.is_empty()) {
            Some(value) if after[name_len..].starts_with('}') => {
                match Typed::read(value) {
                    // An edge writing another language has written its typed values already.
                    Some(typed) => out.push_str(&typed.english()),
                    None => out.push_str(value),
                }
                rest = &after[name_len + 1..];
            }
            Some(value) => match plural(&after[name_len..]) {
                Some((branches, used)) => {
                    let chosen = choose(language, &branches, value);
                    write_message(out, language, chosen, args, Some(value));
                    rest = &after[name_len + used..];
                }
                None => {
                    out.push('{');
                    rest = after;
                }
            },
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
}

/// The branch of a plural for `value`: an exact `=value` first, then its plural category,
/// then `other` (every plural has one).
fn choose<'a>(language: Language, branches: &[(&str, &'a str)], value: &str) -> &'a str {
    let exact = branches.iter().find(|(selector, _)| selector.strip_prefix('=') == Some(value));
    let keyword = language.plural(value).keyword();
    exact
        .or_else(|| branches.iter().find(|(selector, _)| *selector == keyword))
        .or_else(|| branches.iter().find(|(selector, _)| *selector == Plural::Other.keyword()))
        .map(|(_, text)| *text)
        .unwrap_or_default()
}

/// Reads `, plural, one {...} other {...}}` (what follows a plural's name): its branches and
/// how many bytes it took; `None` when it is not a well-formed plural with an `other`.
fn plural(text: &str) -> Option<(Vec<(&str, &str)>, usize)> {
    let rest = text.strip_prefix(',')?.trim_start();
    let rest = rest.strip_prefix("plural")?.trim_start();
    let mut rest = rest.strip_prefix(',')?.trim_start();
    let mut branches = Vec::new();
    loop {
        if let Some(after) = rest.strip_prefix('}') {
            let has_other = branches.iter().any(|(selector, _)| *selector == "other");
            return has_other.then(|| (branches, text.len() - after.len()));
        }
        let selector_len = rest.find(|c: char| c.is_whitespace() || c == '{')?;
        let (selector, after) = rest.split_at(selector_len);
        let after = after.trim_start().strip_prefix('{')?;
        // The branch runs to its matching brace; placeholders nest inside it.
        let mut depth = 0usize;
        let end = after.char_indices().find_map(|(i, c)| match c {
            '{' => {
                depth += 1;
                None
            }
            '}' if depth == 0 => Some(i),
            '}' => {
                depth -= 1;
                None
            }
            _ => None,
        })?;
        branches.push((selector, &after[..end]));
        rest = after[end + 1..].trim_start();
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

/// A cycle in words is a `Text` (and a `Text` may hold a cycle), so its words live here, above
/// `cycle.rs`'s arithmetic.
impl Cycle {
    /// The cycle in words for people, as a sentence a reader's language says: "daily",
    /// "weekly", "monthly", "yearly", "quarterly", "every 3 weeks", "every 10 days".
    pub fn words(&self) -> Text {
        let every = u64::from(self.every());
        match (self.every(), self.unit()) {
            (1, CycleUnit::Day) => Text::new("daily"),
            (1, CycleUnit::Week) => Text::new("weekly"),
            (1, CycleUnit::Month) => Text::new("monthly"),
            (1, CycleUnit::Year) => Text::new("yearly"),
            (3, CycleUnit::Month) => Text::new("quarterly"),
            (_, CycleUnit::Day) => {
                Text::new("{n, plural, one {every # day} other {every # days}}").with("n", every)
            }
            (_, CycleUnit::Week) => {
                Text::new("{n, plural, one {every # week} other {every # weeks}}").with("n", every)
            }
            (_, CycleUnit::Month) => {
                Text::new("{n, plural, one {every # month} other {every # months}}")
                    .with("n", every)
            }
            (_, CycleUnit::Year) => {
                Text::new("{n, plural, one {every # year} other {every # years}}").with("n", every)
            }
        }
    }

    /// [`Cycle::words`] in English, as agents read it.
    pub fn describe(&self) -> String {
        self.words().render()
    }

    /// The cycle an English [`Cycle::describe`] names, for an edge that shows an op's words
    /// in another language; `None` for other text.
    pub fn from_description(words: &str) -> Option<Cycle> {
        let named = match words {
            "daily" => Cycle::new(1, CycleUnit::Day).ok(),
            "weekly" => Cycle::new(1, CycleUnit::Week).ok(),
            "monthly" => Cycle::new(1, CycleUnit::Month).ok(),
            "yearly" => Cycle::new(1, CycleUnit::Year).ok(),
            "quarterly" => Cycle::new(3, CycleUnit::Month).ok(),
            _ => None,
        };
        named.or_else(|| {
            let (every, unit) = words.strip_prefix("every ")?.split_once(' ')?;
            let cycle = Cycle::new(every.parse().ok()?, CycleUnit::parse(unit)?).ok()?;
            (cycle.describe() == words).then_some(cycle)
        })
    }
}

impl fmt::Display for Cycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
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
    fn a_text_inside_another_is_kept_whole_and_written_in_english_for_agents() {
        let inner = Text::new("Paused {name}").with("name", "Net {flix}");
        let line = Text::new("Undid: {summary}").with_text("summary", &inner);
        assert_eq!(line.render(), "Undid: Paused Net {flix}");
        let stored: Text = serde_json::from_str(&serde_json::to_string(&line).unwrap()).unwrap();
        assert_eq!(Typed::read(stored.arg("summary").unwrap()), Some(Typed::Text(Box::new(inner))));
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
    fn plurals_choose_by_the_languages_rules() {
        let format = "{count, plural, =0 {No charges} one {# charge of {name}} other {# charges of {name}}} left.";
        let at = |language, count: &str| {
            render_in(
                language,
                format,
                &[("count".into(), count.into()), ("name".into(), "#{x}".into())],
            )
        };
        assert_eq!(at(Language::English, "0"), "No charges left.");
        assert_eq!(at(Language::English, "1"), "1 charge of #{x} left.");
        assert_eq!(at(Language::English, "1.0"), "1.0 charges of #{x} left.");
        assert_eq!(at(Language::Spanish, "1.0"), "1.0 charge of #{x} left.");
        assert_eq!(at(Language::English, "3"), "3 charges of #{x} left.");
        let many = "{n, plural, one {# cargo} many {# de cargos} other {# cargos}}";
        let spanish = |n: &str| render_in(Language::Spanish, many, &[("n".into(), n.into())]);
        assert_eq!(spanish("1000000"), "1000000 de cargos");
        assert_eq!(spanish("7"), "7 cargos");
        // Outside a plural, # is itself.
        assert_eq!(render_format("# {n}", &[("n".into(), "1".into())]), "# 1");
    }

    #[test]
    fn a_plural_that_is_not_well_formed_stays_as_written() {
        let args = [("n".to_owned(), "2".to_owned())];
        for format in [
            "{n, plural, one {a}}",
            "{n, plural, other {a}",
            "{n, plural, other a}",
            "{n, select, other {a}}",
            "{n, plural, other {a {b}}",
        ] {
            assert_eq!(render_format(format, &args), format, "{format}");
        }
        assert_eq!(render_format("{m, plural, other {a}}", &args), "{m, plural, other {a}}");
    }

    #[test]
    fn multibyte_format() {
        let t = Text::new("«{nom}» — ¿{ñ}?").with("nom", "Café").with("ñ", "sí");
        assert_eq!(t.render(), "«Café» — ¿sí?");
    }
}
