//! Validation of what people and models type: dates, names, notes, URLs, look-alike keys.
//!
//! Every error message says what to write instead.

use jiff::civil::Date;

/// The earliest year accepted by [`parse_date`].
pub const MIN_YEAR: i16 = 1900;
/// The latest year accepted by [`parse_date`].
pub const MAX_YEAR: i16 = 2200;
/// The longest URL accepted by [`clean_url`], in characters.
pub const MAX_URL_CHARS: usize = 2000;

/// Why a date was refused.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
pub enum DateError {
    /// Not shaped like `YYYY-MM-DD`.
    #[error("\"{0}\" is not a date; write it as YYYY-MM-DD, for example 2026-03-01")]
    Malformed(String),
    /// Shaped like a date but not on the calendar (30 February, month 13).
    #[error("{0} is not a date on the calendar")]
    NotADate(String),
    /// The year is outside 1900 to 2200.
    #[error("{0} is out of range; use a date between 1900-01-01 and 2200-12-31")]
    OutOfRange(String),
}

/// Why a name, note or URL was refused.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
pub enum TextError {
    /// Nothing but whitespace.
    #[error("this can't be empty; write at least one visible character")]
    Empty,
    /// Longer than allowed.
    #[error("this is too long; shorten it to at most {max} characters")]
    TooLong {
        /// The most characters allowed.
        max: usize,
    },
    /// A control or text-direction character.
    #[error(
        "this contains an invisible control character (such as a line break, tab or \
         text-direction mark) that isn't allowed here; remove it"
    )]
    ControlCharacter,
    /// Not an http(s) URL.
    #[error(
        "this is not a web address; write a full URL starting with https:// or http://, \
         without spaces, at most 2000 characters"
    )]
    NotAUrl,
}

/// Parses a strict `YYYY-MM-DD` date with a year from 1900 to 2200.
pub fn parse_date(s: &str) -> Result<Date, DateError> {
    let bytes = s.as_bytes();
    let shaped = bytes.len() == 10
        && bytes
            .iter()
            .enumerate()
            .all(|(i, b)| if i == 4 || i == 7 { *b == b'-' } else { b.is_ascii_digit() });
    if !shaped {
        return Err(DateError::Malformed(shorten(s, 40)));
    }
    let number = |range: std::ops::Range<usize>| -> i16 {
        bytes[range].iter().fold(0_i16, |acc, b| acc * 10 + i16::from(b - b'0'))
    };
    let (year, month, day) = (number(0..4), number(5..7), number(8..10));
    if !(MIN_YEAR..=MAX_YEAR).contains(&year) {
        return Err(DateError::OutOfRange(s.to_owned()));
    }
    let (Ok(month), Ok(day)) = (i8::try_from(month), i8::try_from(day)) else {
        return Err(DateError::NotADate(s.to_owned()));
    };
    Date::new(year, month, day).map_err(|_| DateError::NotADate(s.to_owned()))
}

/// The first `max` characters of `s`, with "…" when cut, so errors never echo huge input.
pub fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let mut out: String = s.chars().take(max).collect();
        out.push('…');
        out
    }
}

// The characters the text rules below treat specially, as ranges of code points, each written
// once as a regular-expression class (for the patterns an input schema states) beside the
// function that tests a character. `tests::classes_and_functions_agree` checks every code
// point of the Basic Multilingual Plane against both; none of the sets reaches past it, so
// the patterns need no escape that JSON Schema's, Python's and Rust's regexes read apart.

/// White space as Unicode's `White_Space` property has it, which is what `str::trim` removes.
macro_rules! white_space_class {
    () => {
        "\\t-\\r \\u0085\\u00A0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000"
    };
}

/// Characters refused in any text: C0 and C1 controls and DEL, bidirectional embeddings,
/// overrides and isolates, and the line and paragraph separators.
macro_rules! forbidden_class {
    () => {
        "\\u0000-\\u001F\\u007F-\\u009F\\u2028-\\u202E\\u2066-\\u2069"
    };
}

/// Characters that show nothing on their own, besides white space: the soft hyphen, the
/// generic combining marks (diacritics for any letter, the ones stacked into "zalgo" text),
/// Hangul fillers, the Mongolian vowel separator, zero-width spaces, joiners and direction
/// marks, the word joiner and invisible operators, variation selectors and the byte-order
/// mark. Combining marks of one script (Devanagari's vowel signs, say) show, so they count.
macro_rules! invisible_class {
    () => {
        "\\u00AD\\u0300-\\u036F\\u115F\\u1160\\u180E\\u1AB0-\\u1AFF\\u1DC0-\\u1DFF\\u200B-\\u200F\\u20D0-\\u20FF\\u2060-\\u2064\\u3164\\uFE00-\\uFE0F\\uFE20-\\uFE2F\\uFEFF\\uFFA0"
    };
}

fn is_forbidden(c: char) -> bool {
    matches!(c, '\0'..='\u{1F}' | '\u{7F}'..='\u{9F}' | '\u{2028}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

fn is_invisible(c: char) -> bool {
    c.is_whitespace()
        || matches!(c,
            '\u{00AD}' | '\u{0300}'..='\u{036F}' | '\u{115F}' | '\u{1160}' | '\u{180E}'
            | '\u{1AB0}'..='\u{1AFF}' | '\u{1DC0}'..='\u{1DFF}' | '\u{200B}'..='\u{200F}'
            | '\u{20D0}'..='\u{20FF}' | '\u{2060}'..='\u{2064}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}'
            | '\u{FE20}'..='\u{FE2F}' | '\u{FEFF}' | '\u{FFA0}')
}

/// Characters refused in a note: the forbidden ones but tabs and line breaks.
macro_rules! forbidden_in_notes_class {
    () => {
        "\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F\\u2028-\\u202E\\u2066-\\u2069"
    };
}

// Each pattern reads a text as `trim` leaves it between white space at the ends: the ends may
// hold white space that is forbidden inside (a line break), because trimming takes it away.

/// A text without forbidden characters that holds a character that shows, then white space.
macro_rules! shown_text {
    () => {
        concat!(
            "[^",
            forbidden_class!(),
            "]*",
            "[^",
            forbidden_class!(),
            invisible_class!(),
            white_space_class!(),
            "]",
            "[^",
            forbidden_class!(),
            "]*[",
            white_space_class!(),
            "]*"
        )
    };
}

/// What [`clean_line`] accepts, as a JSON Schema `pattern` (its length aside): white space at
/// either end, then a text without forbidden characters that holds a character that shows.
pub const LINE_PATTERN: &str = concat!("^[", white_space_class!(), "]*", shown_text!(), "$");

/// What [`clean_optional_line`] accepts: [`LINE_PATTERN`], or white space alone.
pub const OPTIONAL_LINE_PATTERN: &str =
    concat!("^[", white_space_class!(), "]*(?:", shown_text!(), ")?$");

/// What [`clean_multiline`] accepts, as a JSON Schema `pattern` (its length aside): white
/// space at either end, and no forbidden character but tabs and line breaks between.
pub const MULTILINE_PATTERN: &str = concat!(
    "^[",
    white_space_class!(),
    "]*[^",
    forbidden_in_notes_class!(),
    "]*[",
    white_space_class!(),
    "]*$"
);

/// Cleans a one-line name: trims whitespace; refuses empty or only invisible characters
/// (a name of zero-width spaces), longer than `max_chars` characters, or any control
/// character (including line breaks and tabs). The length counts the text as given, white
/// space at the ends too, as a schema's `maxLength` counts it.
pub fn clean_line(s: &str, max_chars: usize) -> Result<String, TextError> {
    let trimmed = s.trim();
    if trimmed.chars().all(is_invisible) {
        return Err(TextError::Empty);
    }
    if trimmed.chars().any(is_forbidden) {
        return Err(TextError::ControlCharacter);
    }
    if s.chars().count() > max_chars {
        return Err(TextError::TooLong { max: max_chars });
    }
    Ok(trimmed.to_owned())
}

/// Cleans a text that may be left blank: `None` when it is white space alone (within the
/// length), otherwise as [`clean_line`].
pub fn clean_optional_line(s: &str, max_chars: usize) -> Result<Option<String>, TextError> {
    if s.trim().is_empty() && s.chars().count() <= max_chars {
        return Ok(None);
    }
    clean_line(s, max_chars).map(Some)
}

/// Cleans a note: like [`clean_line`] but line breaks and tabs are allowed (CR LF and lone
/// CR become LF) and empty is fine (returns ""). The length counts the text as given.
pub fn clean_multiline(s: &str, max_chars: usize) -> Result<String, TextError> {
    let normalised = s.replace("\r\n", "\n").replace('\r', "\n");
    let trimmed = normalised.trim();
    if trimmed.chars().any(|c| c != '\n' && c != '\t' && is_forbidden(c)) {
        return Err(TextError::ControlCharacter);
    }
    if s.chars().count() > max_chars {
        return Err(TextError::TooLong { max: max_chars });
    }
    Ok(trimmed.to_owned())
}

/// Cleans a URL: trims whitespace; must be `http://` or `https://` with a host, at most
/// 2000 characters, with no whitespace or control characters.
pub fn clean_url(s: &str) -> Result<String, TextError> {
    let trimmed = s.trim();
    if trimmed.chars().count() > MAX_URL_CHARS
        || trimmed.chars().any(|c| c.is_whitespace() || is_forbidden(c))
    {
        return Err(TextError::NotAUrl);
    }
    let lower = trimmed.get(..8).unwrap_or(trimmed).to_ascii_lowercase();
    let rest = if lower.starts_with("https://") {
        &trimmed[8..]
    } else if lower.starts_with("http://") {
        &trimmed[7..]
    } else {
        return Err(TextError::NotAUrl);
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if host_port.starts_with('[') {
        host_port.split_once(']').map_or("", |(h, _)| h.trim_start_matches('['))
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    let host_ok = !host.is_empty()
        && host.chars().all(|c| c.is_alphanumeric() || matches!(c, '-' | '.' | '_' | ':' | '%'))
        && !host.starts_with('.');
    if !host_ok {
        return Err(TextError::NotAUrl);
    }
    Ok(trimmed.to_owned())
}

/// Lower case, letters and digits only: the key for "unique ignoring case" and
/// "looks alike" comparisons ("Disney+" and "disney " give "disney").
pub fn normalise_key(s: &str) -> String {
    s.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect()
}

/// Whether two names probably mean the same thing: equal keys, or one key is a prefix of
/// the other and at least 4 characters long ("Netflix" and "Netflix Premium").
pub fn looks_alike(a: &str, b: &str) -> bool {
    let (ka, kb) = (normalise_key(a), normalise_key(b));
    if ka.is_empty() || kb.is_empty() {
        return false;
    }
    let (short, long) = if ka.len() <= kb.len() { (&ka, &kb) } else { (&kb, &ka) };
    short == long || (short.chars().count() >= 4 && long.starts_with(short.as_str()))
}

/// Every pair of names (by index, lower first, sorted) that [`looks_alike`], without
/// comparing every name with every other: in sorted order, the keys that start with a key
/// follow it in one run.
pub fn look_alike_pairs(names: &[&str]) -> Vec<(usize, usize)> {
    let mut keys: Vec<(String, usize)> = names
        .iter()
        .enumerate()
        .map(|(i, name)| (normalise_key(name), i))
        .filter(|(key, _)| !key.is_empty())
        .collect();
    keys.sort();
    let mut pairs = Vec::new();
    for (a, (short, first)) in keys.iter().enumerate() {
        for (long, second) in &keys[a + 1..] {
            if !long.starts_with(short.as_str()) {
                break;
            }
            if short == long || short.chars().count() >= 4 {
                pairs.push(((*first).min(*second), (*first).max(*second)));
            }
        }
    }
    pairs.sort_unstable();
    pairs
}

#[cfg(test)]
mod tests {

    #[test]
    fn look_alike_pairs_agree_with_looks_alike() {
        let names = [
            "Netflix",
            "Netflix Premium",
            "NETFLIX",
            "Net",
            "Netf",
            "Spotify",
            "Spotify Family",
            "Disney+",
            "Disney",
            "Dis",
            "",
            "!!",
            "Service 001",
            "Service 0010",
            "Service 002",
            "Gym",
            "Gymnasium",
            "iCloud",
            "icloud+ 200GB",
        ];
        let mut naive = Vec::new();
        for a in 0..names.len() {
            for b in a + 1..names.len() {
                if super::looks_alike(names[a], names[b]) {
                    naive.push((a, b));
                }
            }
        }
        assert_eq!(super::look_alike_pairs(&names), naive);
        assert!(!naive.is_empty());
    }
    use super::*;
    use jiff::civil::date;

    #[test]
    fn dates() {
        assert_eq!(parse_date("2026-03-01"), Ok(date(2026, 3, 1)));
        assert_eq!(parse_date("2024-02-29"), Ok(date(2024, 2, 29)));
        assert_eq!(parse_date("1900-01-01"), Ok(date(1900, 1, 1)));
        assert_eq!(parse_date("2200-12-31"), Ok(date(2200, 12, 31)));
        let err = parse_date("2026-02-30").unwrap_err();
        assert_eq!(err, DateError::NotADate("2026-02-30".into()));
        assert_eq!(err.to_string(), "2026-02-30 is not a date on the calendar");
        assert!(matches!(parse_date("2026-13-01"), Err(DateError::NotADate(_))));
        assert!(matches!(parse_date("2026-00-10"), Err(DateError::NotADate(_))));
        assert!(matches!(parse_date("2025-02-29"), Err(DateError::NotADate(_))));
        for bad in [
            "",
            "2026-3-01",
            "2026/03/01",
            " 2026-03-01",
            "2026-03-01T00:00",
            "26-03-01",
            "2026-03-0a",
            "２０２６-03-01",
        ] {
            let err = parse_date(bad).unwrap_err();
            assert!(matches!(err, DateError::Malformed(_)), "{bad:?}");
            assert!(
                err.to_string()
                    .ends_with("is not a date; write it as YYYY-MM-DD, for example 2026-03-01")
            );
        }
        assert_eq!(parse_date("1899-12-31"), Err(DateError::OutOfRange("1899-12-31".into())));
        assert!(matches!(parse_date("2201-01-01"), Err(DateError::OutOfRange(_))));
        assert!(matches!(parse_date("0000-01-01"), Err(DateError::OutOfRange(_))));
    }

    #[test]
    fn lines() {
        assert_eq!(clean_line("  Netflix  ", 11), Ok("Netflix".into()));
        // White space at the ends counts towards the length, as a schema's maxLength counts it.
        assert_eq!(clean_line("  Netflix  ", 10), Err(TextError::TooLong { max: 10 }));
        assert_eq!(clean_line("Café ☕", 6), Ok("Café ☕".into()));
        assert_eq!(clean_line("   ", 10), Err(TextError::Empty));
        assert_eq!(clean_line("", 10), Err(TextError::Empty));
        assert_eq!(clean_line("abcdefghijk", 10), Err(TextError::TooLong { max: 10 }));
        assert_eq!(clean_line("abcdéfghij", 10), Ok("abcdéfghij".into()));
        for bad in [
            "a\nb",
            "a\tb",
            "a\u{0}b",
            "a\u{7f}b",
            "a\u{85}b",
            "a\u{9f}b",
            "a\u{202E}b",
            "a\u{2066}b",
            "a\u{2069}b",
            "a\u{2028}b",
        ] {
            assert_eq!(clean_line(bad, 100), Err(TextError::ControlCharacter), "{bad:?}");
        }
        assert_eq!(clean_line("\nNetflix\t", 10), Ok("Netflix".into()));
        assert_eq!(clean_line("\nNetflix\t", 8), Err(TextError::TooLong { max: 8 }));
        // A name must show something.
        for invisible in [
            "\u{200B}\u{200B}",
            "\u{FEFF}",
            " \u{200D} \u{2060} ",
            "\u{0301}\u{FE0F}",
            "\u{3164}",
            "\u{00AD}",
        ] {
            assert_eq!(clean_line(invisible, 10), Err(TextError::Empty), "{invisible:?}");
        }
        assert_eq!(clean_line("\u{200B}A", 10), Ok("\u{200B}A".into()));
        assert_eq!(clean_line("e\u{0301}", 10), Ok("e\u{0301}".into()));
        assert_eq!(clean_line("👍🏽", 10), Ok("👍🏽".into()));
    }

    /// The character sets, as their patterns' classes write them and as the functions test
    /// them, are the same sets; none has a character past U+FFFF.
    #[test]
    fn classes_and_functions_agree() {
        let class = |ranges: &str| regex::Regex::new(&format!("^[{ranges}]$")).unwrap();
        let (white, forbidden, invisible) =
            (class(white_space_class!()), class(forbidden_class!()), class(invisible_class!()));
        let forbidden_in_notes = class(forbidden_in_notes_class!());
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            let text = c.to_string();
            assert_eq!(white.is_match(&text), c.is_whitespace(), "{c:?}");
            assert_eq!(forbidden.is_match(&text), is_forbidden(c), "{c:?}");
            let in_notes = is_forbidden(c) && !matches!(c, '\t' | '\n' | '\r');
            assert_eq!(forbidden_in_notes.is_match(&text), in_notes, "{c:?}");
            assert_eq!(invisible.is_match(&text) || c.is_whitespace(), is_invisible(c), "{c:?}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1000))]
        /// The patterns accept exactly what the functions do (lengths aside), over texts
        /// made of the characters the rules single out and a few that show.
        #[test]
        fn the_patterns_accept_what_the_rules_accept(
            text in "[ a\\u{e9}\\t\\n\\r\\u{0}\\u{1f}\\u{7f}\\u{85}\\u{9f}\\u{a0}\\u{ad}\\u{301}\\u{915}\\u{93f}\\u{200b}\\u{200d}\\u{2028}\\u{202e}\\u{2066}\\u{3000}\\u{fe0f}\\u{feff}\\u{1f44d}]{0,6}"
        ) {
            let line = regex::Regex::new(LINE_PATTERN).unwrap();
            let multiline = regex::Regex::new(MULTILINE_PATTERN).unwrap();
            let optional = regex::Regex::new(OPTIONAL_LINE_PATTERN).unwrap();
            proptest::prop_assert_eq!(
                optional.is_match(&text),
                clean_optional_line(&text, 100).is_ok(),
                "{:?}",
                text
            );
            proptest::prop_assert_eq!(line.is_match(&text), clean_line(&text, 100).is_ok(), "{:?}", text);
            proptest::prop_assert_eq!(
                multiline.is_match(&text),
                clean_multiline(&text, 100).is_ok(),
                "{:?}",
                text
            );
        }
    }

    #[test]
    fn multiline() {
        assert_eq!(clean_multiline("  ", 10), Ok(String::new()));
        assert_eq!(clean_multiline("", 10), Ok(String::new()));
        assert_eq!(clean_multiline(" line 1\r\n\tline 2\n ", 100), Ok("line 1\n\tline 2".into()));
        assert_eq!(clean_multiline("a\rb", 100), Ok("a\nb".into()));
        assert_eq!(clean_multiline("a\u{1b}[31m", 100), Err(TextError::ControlCharacter));
        assert_eq!(clean_multiline("a\u{202D}b", 100), Err(TextError::ControlCharacter));
        assert_eq!(clean_multiline("abc\ndef", 6), Err(TextError::TooLong { max: 6 }));
        assert_eq!(clean_multiline("abc\ndef", 7), Ok("abc\ndef".into()));
    }

    #[test]
    fn urls() {
        for good in [
            "https://www.netflix.com",
            "http://example.com/a?b=c#d",
            "HTTPS://Example.com:8443/path",
            "https://user:pw@host.example/x",
            "https://[::1]:8080/",
            "https://bücher.de",
            "https://localhost",
        ] {
            assert_eq!(clean_url(good).as_deref(), Ok(good), "{good}");
        }
        assert_eq!(clean_url("  https://x.io  "), Ok("https://x.io".into()));
        for bad in [
            "",
            "netflix.com",
            "ftp://x.io",
            "javascript:alert(1)",
            "https://",
            "https:///path",
            "https://a b.com",
            "https://x.io/\u{202E}",
            "https://x.io/a\nb",
            "http:/x.io",
            "https://.x.io",
        ] {
            assert_eq!(clean_url(bad), Err(TextError::NotAUrl), "{bad:?}");
        }
        let long = format!("https://x.io/{}", "a".repeat(1990));
        assert_eq!(clean_url(&long), Err(TextError::NotAUrl));
        let ok = format!("https://x.io/{}", "a".repeat(1987));
        assert_eq!(ok.len(), 2000);
        assert!(clean_url(&ok).is_ok());
    }

    #[test]
    fn keys_and_look_alikes() {
        assert_eq!(normalise_key("Disney+ "), "disney");
        assert_eq!(normalise_key("Cloud & Storage"), "cloudstorage");
        assert_eq!(normalise_key("ÉLAN 2"), "élan2");
        assert!(looks_alike("Netflix", "netflix"));
        assert!(looks_alike("Netflix", "Netflix Premium"));
        assert!(looks_alike("Netflix Premium", "NETFLIX"));
        assert!(looks_alike("Disney+", "Disney Plus"));
        assert!(!looks_alike("Apple Music", "Apple TV+"));
        assert!(!looks_alike("HBO", "HBO Max"));
        assert!(looks_alike("HBO", "h.b.o"));
        assert!(!looks_alike("Spotify", "Netflix"));
        assert!(!looks_alike("", ""));
        assert!(!looks_alike("++", "--"));
    }
}
