//! The catalogues against the sources: every sentence a person reads (each `Text::new("...")`
//! in a crate's code, each `t("...")` in a template) has its Spanish, every Spanish entry has
//! its English in the sources, and a translation names the placeholders its English does.
//! The sources are read as text, as `architecture.rs` reads the manifests.

use std::{
    collections::{BTreeMap, BTreeSet},
    fs,
    path::{Path, PathBuf},
};

use i18n::Language;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn files_under(dir: &Path, extension: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, extension, out);
        } else if path.extension().is_some_and(|e| e == extension) {
            out.push(path);
        }
    }
}

/// A Rust string literal starting at `text` (after its opening quote): its value, or `None`
/// for one this reader does not follow (a raw string is read by the caller).
fn string_literal(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                '"' => out.push('"'),
                '\'' => out.push('\''),
                '\\' => out.push('\\'),
                '\n' => {
                    // A continued line: the next line's leading whitespace is not part of it.
                    let rest: String = chars.clone().collect();
                    let skipped = rest.len() - rest.trim_start().len();
                    for _ in 0..rest[..skipped].chars().count() {
                        chars.next();
                    }
                }
                'u' => {
                    let rest: String = chars.clone().collect();
                    let close = rest.find('}')?;
                    let code = u32::from_str_radix(rest.get(1..close)?, 16).ok()?;
                    out.push(char::from_u32(code)?);
                    for _ in 0..=close {
                        chars.next();
                    }
                }
                _ => return None,
            },
            c => out.push(c),
        }
    }
    None
}

/// Every English format in the sources, with a file it is in.
fn sources() -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    let mut rust = Vec::new();
    files_under(&root().join("crates"), "rs", &mut rust);
    for path in rust {
        let shown = path.strip_prefix(root()).unwrap_or(&path).display().to_string();
        // A crate's own code: not its tests, whose sentences nobody reads.
        if !shown.contains("/src/") || path.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (at, _) in code.match_indices("Text::new(") {
            let rest = code[at + "Text::new(".len()..].trim_start();
            let literal = if let Some(raw) = rest.strip_prefix("r#\"") {
                raw.split("\"#").next().map(str::to_owned)
            } else {
                rest.strip_prefix('"').and_then(string_literal)
            };
            if let Some(format) = literal {
                found.entry(format).or_insert_with(|| shown.clone());
            }
        }
    }
    let mut templates = Vec::new();
    files_under(&root().join("crates/web/templates"), "html", &mut templates);
    for path in templates {
        let shown = path.strip_prefix(root()).unwrap_or(&path).display().to_string();
        let text = fs::read_to_string(&path).unwrap();
        for (at, _) in text.match_indices("t(\"").chain(text.match_indices("t('")) {
            // `t(` itself, not the end of another name (`set(`, `format(`).
            let before = text[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.') {
                continue;
            }
            let literal = match &text[at + 2..at + 3] {
                // A template's single-quoted string has no escapes here.
                "'" => text[at + 3..].split('\'').next().map(str::to_owned),
                _ => string_literal(&text[at + 3..]),
            };
            if let Some(format) = literal {
                found.entry(format).or_insert_with(|| shown.clone());
            }
        }
    }
    found
}

/// Words of closed sets a schema lists that are names, the same in every language: the AI
/// providers, the services a reminder goes through, and the mail server's encryption.
const PROPER_NAMES: &[&str] = &[
    "anthropic",
    "gemini",
    "lm_studio",
    "mistral",
    "ollama",
    "openai",
    "openai_compatible",
    "openrouter",
    "xai",
    "ntfy",
    "slack",
    "telegram",
    "webhook",
    "tls",
    "starttls",
    "paypal",
];

/// Every word of a closed set an op's input or output lists (`enum`): statuses, kinds, roles,
/// periods, weekdays, which pages show with the `word` filter. Op names (an activity filter's
/// values) are the catalog's names for agents, and are left out, as are [`PROPER_NAMES`].
fn closed_set_words() -> BTreeSet<String> {
    fn walk(schema: &serde_json::Value, out: &mut BTreeSet<String>) {
        match schema {
            serde_json::Value::Object(map) => {
                if let Some(serde_json::Value::Array(values)) = map.get("enum") {
                    out.extend(values.iter().filter_map(|v| v.as_str()).map(str::to_owned));
                }
                map.values().for_each(|v| walk(v, out));
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut words = BTreeSet::new();
    for meta in ops::all() {
        walk(&meta.input_schema(), &mut words);
        walk(&meta.output_schema(), &mut words);
    }
    for meta in ops::all() {
        words.remove(meta.name());
    }
    words.retain(|word| !PROPER_NAMES.contains(&word.as_str()));
    words
}

/// The argument names a format uses: `{name}` and a plural's `{name, plural, ...}`.
fn placeholders(format: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (at, _) in format.match_indices('{') {
        let after = &format[at + 1..];
        let len = after.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(after.len());
        if len > 0 && (after[len..].starts_with('}') || after[len..].starts_with(',')) {
            names.insert(after[..len].to_owned());
        }
    }
    names
}

#[test]
fn every_sentence_a_person_reads_has_its_spanish_and_every_spanish_its_english() {
    let mut sources = sources();
    assert!(sources.len() > 900, "the sources were read: {} formats", sources.len());
    let words = closed_set_words();
    assert!(words.contains("credit_card") && words.len() > 60, "the schemas were read: {words:?}");
    for word in words {
        sources.entry(word).or_insert_with(|| "a closed set of the catalog".into());
    }
    // What the MCP Apps views say.
    for sentence in mcp::view_sentences() {
        sources.entry(sentence.to_owned()).or_insert_with(|| "crates/mcp/views".into());
    }
    // A write's summary titles the assistant's card of it.
    for meta in ops::all().iter().filter(|meta| meta.info.is_write()) {
        sources.entry(meta.info.summary.to_owned()).or_insert_with(|| "a write's summary".into());
    }
    let from = |what: &str| sources.values().filter(|file| file.ends_with(what)).count();
    println!(
        "{} sentences a person reads: {} Text formats, {} template strings, {} closed-set words, {} write summaries",
        sources.len(),
        from(".rs"),
        from(".html"),
        from("a closed set of the catalog"),
        from("a write's summary"),
    );
    let spanish: BTreeMap<&str, &str> = i18n::catalogue(Language::Spanish).into_iter().collect();
    let missing: Vec<String> = sources
        .iter()
        .filter(|(format, _)| !format.is_empty() && !spanish.contains_key(format.as_str()))
        .map(|(format, file)| format!("{file}: {format:?}"))
        .collect();
    assert!(
        missing.is_empty(),
        "{} without Spanish in crates/i18n/locales/es.json:\n{}",
        missing.len(),
        missing.join("\n")
    );
    let orphans: Vec<&&str> =
        spanish.keys().filter(|format| !sources.contains_key(**format)).collect();
    assert!(
        orphans.is_empty(),
        "Spanish entries whose English is in no source (remove or update them): {orphans:#?}"
    );
    let mismatched: Vec<String> = spanish
        .iter()
        .filter(|(english, translated)| placeholders(english) != placeholders(translated))
        .map(|(english, translated)| format!("{english:?} -> {translated:?}"))
        .collect();
    assert!(
        mismatched.is_empty(),
        "translations naming other placeholders than their English:\n{}",
        mismatched.join("\n")
    );
}

#[test]
fn the_reader_of_the_sources_reads_what_the_code_writes() {
    assert_eq!(string_literal(r#"a \"b\" \u{e9}\n c" rest"#).as_deref(), Some("a \"b\" é\n c"));
    assert_eq!(string_literal("one \\\n        two\""), Some("one two".to_owned()));
    assert_eq!(
        placeholders("{a} {b, plural, one {# {c}} other {#}} {d e} {}"),
        BTreeSet::from(["a".into(), "b".into(), "c".into()])
    );
}

/// An undo's line holds the change's own summary, and both are written in the reader's
/// language: not an English summary inside a Spanish sentence.
#[tokio::test]
async fn an_undo_line_is_written_in_one_language() {
    let w = crate::fixtures::World::new().await;
    w.env.call(&w.ana, "pause_subscription", serde_json::json!({"id": w.netflix})).await.unwrap();
    let activity = w.env.call(&w.ana, "list_activity", serde_json::json!({})).await.unwrap();
    let batch = activity["items"][0]["batch_id"].clone();
    w.env.call(&w.ana, "undo", serde_json::json!({"batch_id": batch})).await.unwrap();
    let in_english = w.env.call(&w.ana, "list_activity", serde_json::json!({})).await.unwrap();
    let line = in_english["items"][0]["summary"].as_str().unwrap_or_default().to_owned();
    assert!(line.starts_with("Undid: Paused Netflix"), "{line}");
    let spanish = ops::Caller { language: Language::Spanish, ..w.ana.clone() };
    let in_spanish = w.env.call(&spanish, "list_activity", serde_json::json!({})).await.unwrap();
    let line = in_spanish["items"][0]["summary"].as_str().unwrap_or_default().to_owned();
    assert!(line.starts_with("Deshecho: Netflix en pausa"), "{line}");
}
