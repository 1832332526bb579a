//! Checking op inputs into domain values, with errors that point at the field (a JSON pointer)
//! and say what to write instead: amounts, currencies, cycles, dates, names, notes, URLs, tags, colours,
//! time zones, languages and list pages. Shared by every handler; no IO.

use domain::{Currency, Cycle, Money, MoneyError, Text, validate};
use ops::{
    OpError,
    common::{CycleInput, SignedAmount},
    limits,
};

/// An amount bound in thousandths of a major unit: what a search compares in every currency.
pub(crate) fn milli_bound(pointer: &str, bound: SignedAmount) -> Result<i64, OpError> {
    // A currency with three decimals reads the bound at the finest scale any currency has.
    let kwd = Currency::parse("KWD").map_err(|_| OpError::Internal)?;
    bound.money(kwd).map(|m| m.minor()).map_err(|err| {
        OpError::invalid(
            pointer,
            Text::new("{error}. Write a signed decimal such as \"-50\" or \"12.99\".")
                .with("error", err),
        )
    })
}

/// A bound in thousandths written back as the decimal it was read from ("-50", "-12.5").
pub(crate) fn milli_text(milli: i64) -> String {
    let sign = if milli < 0 { "-" } else { "" };
    let (whole, fraction) = (milli.unsigned_abs() / 1000, milli.unsigned_abs() % 1000);
    if fraction == 0 {
        format!("{sign}{whole}")
    } else {
        let digits = format!("{fraction:03}");
        format!("{sign}{whole}.{}", digits.trim_end_matches('0'))
    }
}

/// The cycle a `CycleInput` names; a custom one must repeat every 1 to 366 units.
pub(crate) fn parse_cycle(pointer: &str, input: CycleInput) -> Result<Cycle, OpError> {
    match input {
        CycleInput::Preset(preset) => Ok(preset.cycle()),
        CycleInput::Custom { every, unit } => Cycle::new(every, unit).map_err(|err| {
            OpError::invalid(format!("{pointer}/every"), Text::new("{error}.").with("error", err))
        }),
    }
}

pub(crate) fn parse_currency(pointer: &str, code: &str) -> Result<Currency, OpError> {
    Currency::parse(code)
        .map_err(|err| OpError::invalid(pointer, Text::new("{error}.").with("error", err)))
}

/// An amount's minor units in the currency it is in, or the refusal at its field (more
/// decimals than the currency has).
pub(crate) fn minor_units(pointer: &str, money: Result<Money, MoneyError>) -> Result<i64, OpError> {
    money
        .map(|money| money.minor())
        .map_err(|err| OpError::invalid(pointer, Text::new("{error}.").with("error", err)))
}

pub(crate) fn clean_name(pointer: &str, text: &str, max: usize) -> Result<String, OpError> {
    validate::clean_line(text, max)
        .map_err(|err| OpError::invalid(pointer, Text::new("{error}.").with("error", err)))
}

/// A text that may be left blank: `None` for white space alone.
pub(crate) fn clean_optional_name(
    pointer: &str,
    text: &str,
    max: usize,
) -> Result<Option<String>, OpError> {
    validate::clean_optional_line(text, max)
        .map_err(|err| OpError::invalid(pointer, Text::new("{error}.").with("error", err)))
}

pub(crate) fn clean_notes(pointer: &str, text: &str) -> Result<String, OpError> {
    validate::clean_multiline(text, limits::NOTES)
        .map_err(|err| OpError::invalid(pointer, Text::new("{error}.").with("error", err)))
}

pub(crate) fn clean_url(pointer: &str, text: &str) -> Result<String, OpError> {
    validate::clean_url(text)
        .map_err(|err| OpError::invalid(pointer, Text::new("{error}.").with("error", err)))
}

/// Tags cleaned, de-duplicated ignoring case, and sorted.
pub(crate) fn clean_tags(pointer: &str, tags: &[String]) -> Result<Vec<String>, OpError> {
    if tags.len() > limits::TAGS {
        return Err(OpError::invalid(
            pointer,
            Text::new("At most {max} tags per subscription.").with("max", limits::TAGS),
        ));
    }
    let mut out: Vec<String> = Vec::with_capacity(tags.len());
    for (i, tag) in tags.iter().enumerate() {
        let tag = clean_name(&format!("{pointer}/{i}"), tag, limits::TAG)?;
        if !out.iter().any(|t| t.to_lowercase() == tag.to_lowercase()) {
            out.push(tag);
        }
    }
    out.sort_by_key(|t| t.to_lowercase());
    Ok(out)
}

pub(crate) fn check_time_zone(pointer: &str, name: &str) -> Result<String, OpError> {
    jiff::tz::TimeZone::get(name).map(|_| name.to_owned()).map_err(|_| {
        OpError::invalid(pointer, Text::new("{zone} is not an IANA time zone; use a name such as Europe/Madrid or America/New_York.").with("zone", name))
    })
}

pub(crate) fn check_language(pointer: &str, tag: &str) -> Result<String, OpError> {
    let ok =
        (2..=12).contains(&tag.len()) && tag.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    if !ok {
        return Err(OpError::invalid(
            pointer,
            Text::new("{tag} is not a language tag; use one such as en or es.").with("tag", tag),
        ));
    }
    Ok(tag.to_owned())
}

/// Pagination: (limit, offset) from an op's `limit` and `cursor`.
pub(crate) fn page_window(limit: Option<u32>, cursor: Option<&str>) -> Result<(u32, u64), OpError> {
    let limit = page_limit(limit)?;
    let offset = ops::common::cursor_offset(cursor).ok_or_else(unknown_cursor)?;
    Ok((limit, offset))
}

/// A page's `limit`, the default when absent.
pub(crate) fn page_limit(limit: Option<u32>) -> Result<u32, OpError> {
    let limit = limit.unwrap_or(ops::common::DEFAULT_PAGE);
    if limit == 0 || limit > ops::common::MAX_PAGE {
        return Err(OpError::invalid(
            "/limit",
            Text::new("limit must be between 1 and {max}.").with("max", ops::common::MAX_PAGE),
        ));
    }
    Ok(limit)
}

/// The refusal of a `cursor` Exhale did not give out.
pub(crate) fn unknown_cursor() -> OpError {
    OpError::invalid(
        "/cursor",
        Text::new(
            "This cursor is not one Exhale gave out; pass next_cursor from the previous page, or leave it out to start over.",
        ),
    )
}

/// A colour as stored: "#rrggbb", lower case.
pub(crate) fn clean_colour(pointer: &str, colour: &str) -> Result<String, OpError> {
    let ok = colour.len() == 7
        && colour.starts_with('#')
        && colour[1..].chars().all(|c| c.is_ascii_hexdigit());
    if !ok {
        return Err(OpError::invalid(
            pointer,
            Text::new("{colour} is not a colour; write it as #rrggbb, for example #3b82f6.")
                .with("colour", colour),
        ));
    }
    Ok(colour.to_lowercase())
}

/// A statement's bytes from its text or its base64, within the size Exhale reads.
pub(crate) fn statement_bytes(
    content: Option<String>,
    content_base64: Option<String>,
) -> Result<Vec<u8>, OpError> {
    let bytes = match (content, content_base64) {
        (Some(text), None) => text.into_bytes(),
        (None, Some(encoded)) => statement::decode_base64(&encoded).ok_or_else(|| {
            OpError::invalid(
                "/content_base64",
                Text::new("This is not base64, so nothing was read. Call again with the statement's text as content and no content_base64; only a file's bytes (a PDF) go base64-encoded as content_base64."),
            )
        })?,
        (Some(_), Some(_)) => {
            return Err(OpError::invalid("/content", Text::new("Give content or content_base64, not both.")));
        }
        (None, None) => {
            return Err(OpError::invalid(
                "/content",
                Text::new("Give the statement's text as content, or the file's bytes as content_base64."),
            ));
        }
    };
    if bytes.len() > ops::import::MAX_STATEMENT_BYTES {
        return Err(OpError::invalid(
            "/content",
            Text::new("The statement is {size} bytes; statements up to {max} bytes are read. Export a shorter period.")
                .with("size", bytes.len())
                .with("max", ops::import::MAX_STATEMENT_BYTES),
        ));
    }
    Ok(bytes)
}
