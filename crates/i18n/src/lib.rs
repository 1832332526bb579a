//! Exhale in the reader's language: the catalogue of each language Exhale speaks besides
//! English (`locales/<code>.json`, built into the binary), which language a reader gets
//! ([`choose`]), and sentences ([`say`]), dates and amounts ([`format`]) in it.
//!
//! A catalogue maps an English format, exactly as the code writes it (a `Text`'s key or a
//! template's `t("...")`), to its translation, which has the same placeholders and its own
//! plural branches. A format missing from a catalogue is said in English; the catalogue test
//! (`crates/exhale/tests/it/translations.rs`) keeps that from happening.
//!
//! Agents, logs and error `Display`s keep English: only the edges a person reads call this.

pub mod format;

use std::{collections::HashMap, sync::LazyLock};

pub use domain::Language;
use domain::{
    Text,
    text::{Typed, render_in},
};

/// Spanish, by English format.
static SPANISH: LazyLock<HashMap<String, String>> =
    LazyLock::new(|| parse(include_str!("../locales/es.json")));

/// A catalogue's entries; an unreadable catalogue is empty (the catalogue test reads each one,
/// so it cannot ship unreadable).
fn parse(json: &str) -> HashMap<String, String> {
    serde_json::from_str(json).unwrap_or_default()
}

/// Every entry of `language`'s catalogue, English format first (empty for English).
pub fn catalogue(language: Language) -> Vec<(&'static str, &'static str)> {
    match language {
        Language::English => Vec::new(),
        Language::Spanish => {
            SPANISH.iter().map(|(key, value)| (key.as_str(), value.as_str())).collect()
        }
    }
}

/// The format to render for the English `format` in `language`: its translation, or the
/// English when the catalogue has none.
pub fn format_in(language: Language, format: &str) -> &str {
    let translated = match language {
        Language::English => None,
        Language::Spanish => SPANISH.get(format),
    };
    translated.map_or(format, String::as_str)
}

/// A word of a closed set as an op writes it (a status, a kind, a role: `credit_card`) as
/// `language` writes it: its translation, else the word with spaces for underscores.
pub fn word(language: Language, word: &str) -> String {
    match format_in(language, word) {
        said if said != word => said.to_owned(),
        _ => word.replace('_', " "),
    }
}

/// A cycle as an op writes it in English ("monthly", "every 3 weeks") as `language` says it;
/// other text as it is.
pub fn cycle(language: Language, words: &str) -> String {
    domain::Cycle::from_description(words)
        .map_or_else(|| words.to_owned(), |cycle| say(language, &cycle.words()))
}

/// `text` in `language`, its amounts, days and cycles written as `language` writes them.
pub fn say(language: Language, text: &Text) -> String {
    let args: Vec<(String, String)> = text
        .args
        .iter()
        .map(|(name, value)| {
            let written = match Typed::read(value) {
                Some(Typed::Money(money)) => {
                    format::money(language, &money.to_decimal_string(), money.currency().code())
                }
                Some(Typed::Date(date)) => format::date(language, date),
                Some(Typed::Cycle(cycle)) => say(language, &cycle.words()),
                Some(Typed::Text(text)) => say(language, &text),
                None => value.clone(),
            };
            (name.clone(), written)
        })
        .collect();
    render_in(language, format_in(language, &text.key), &args)
}

/// The language a person reads in: their own setting, else their household's, else the first
/// their browser or chat client asks for that Exhale speaks (an `Accept-Language` header, or a
/// bare code such as Telegram's "es"), else English. A setting Exhale does not speak is
/// passed over.
pub fn choose(member: Option<&str>, household: Option<&str>, asked: Option<&str>) -> Language {
    member
        .and_then(Language::parse)
        .or_else(|| household.and_then(Language::parse))
        .or_else(|| asked.and_then(accepted))
        .unwrap_or_default()
}

/// The language of an `Accept-Language` header Exhale speaks with the highest weight (the
/// first of equals); `None` when it names none of them or refuses them (`q=0`).
fn accepted(header: &str) -> Option<Language> {
    let mut best: Option<(Language, u32)> = None;
    for part in header.split(',') {
        let mut pieces = part.split(';');
        let Some(language) = pieces.next().and_then(Language::parse) else { continue };
        let weight = pieces.find_map(|p| p.trim().strip_prefix("q=")).map_or(1000, |q| {
            (q.trim().parse::<f32>().unwrap_or(0.0).clamp(0.0, 1.0) * 1000.0) as u32
        });
        if weight > 0 && best.is_none_or(|(_, w)| weight > w) {
            best = Some((language, weight));
        }
    }
    best.map(|(language, _)| language)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_gets_their_setting_then_the_households_then_the_browsers() {
        use Language::{English, Spanish};
        assert_eq!(choose(Some("es"), Some("en"), Some("en")), Spanish);
        assert_eq!(choose(Some("fr"), Some("es-ES"), None), Spanish);
        assert_eq!(choose(None, None, Some("fr-FR,fr;q=0.9,es;q=0.8,en;q=0.7")), Spanish);
        assert_eq!(choose(None, None, Some("en-GB,en;q=0.9,es;q=0.8")), English);
        assert_eq!(choose(None, None, Some("es;q=0, en;q=0.1")), English);
        assert_eq!(choose(None, None, Some("es;q=0")), English);
        assert_eq!(choose(None, None, Some("es_419")), Spanish);
        assert_eq!(choose(None, None, Some("")), English);
        assert_eq!(choose(None, None, None), English);
    }

    #[test]
    fn a_sentence_is_said_from_its_translation_with_its_arguments() {
        let text = Text::new("Deleted the rule.");
        assert_eq!(say(Language::English, &text), "Deleted the rule.");
        assert_eq!(say(Language::Spanish, &text), "Regla eliminada.");
        let unknown = Text::new("A sentence no catalogue has: {x}").with("x", 1);
        let recorded = Text::new("Recorded {amount} with {payee} on {account}")
            .with_money(
                "amount",
                domain::Money::parse("-54.30", domain::Currency::parse("EUR").unwrap()).unwrap(),
            )
            .with("payee", "Tasca")
            .with("account", "Joint");
        assert_eq!(recorded.render(), "Recorded -€54.30 with Tasca on Joint");
        assert_eq!(say(Language::English, &recorded), "Recorded -€54.30 with Tasca on Joint");
        assert_eq!(
            say(Language::Spanish, &recorded),
            "Movimiento de -54,30\u{a0}€ con Tasca registrado en Joint"
        );
        let paused =
            Text::new("on {date}").with_date("date", domain::Date::new(2026, 12, 3).unwrap());
        assert_eq!(
            (paused.render(), say(Language::Spanish, &paused)),
            ("on 2026-12-03".into(), "el 3 dic 2026".into())
        );
        assert_eq!(word(Language::Spanish, "credit_card"), "tarjeta de crédito");
        assert_eq!(word(Language::English, "credit_card"), "credit card");
        assert_eq!(word(Language::Spanish, "no_such_word"), "no such word");
        assert_eq!(cycle(Language::Spanish, "every 3 weeks"), "cada 3 semanas");
        assert_eq!(cycle(Language::Spanish, "monthly"), "mensual");
        assert_eq!(cycle(Language::English, "every 3 weeks"), "every 3 weeks");
        assert_eq!(say(Language::Spanish, &unknown), "A sentence no catalogue has: 1");
    }
}
