//! The PDF file checked before lopdf loads it. Loading already expands and parses: lopdf
//! decodes the cross-reference streams and the object streams, parses every object the
//! cross-reference tables point at (and again for each stream whose `/Length` refers to
//! another object), and recurses once a level of nesting. So before it runs, this reads the
//! file as lopdf will and bounds that work:
//!
//! - every object a header (`N G obj`) starts is read with nesting bounded
//!   (`syntax::MAX_NESTING`), and all of them together within `MAX_OBJECT_TOKENS` tokens and
//!   within twice the file's bytes of reading, so objects hidden inside each other cannot make
//!   the work grow with the square of the file;
//! - the cross-reference streams (found where `startxref`, `/Prev` and `/XRefStm` point) and the
//!   object streams expand within `MAX_STREAM_BYTES` each (decrypted first when the file is
//!   encrypted), their field widths are sane, and every object an object stream holds is read
//!   as above;
//! - no two object numbers the cross-reference tables list lead to one object that was read,
//!   and a `/Length` that refers to another object refers to a number, so no object is parsed
//!   again and again and no chain of lengths recurses.
//!
//! It reads the file as lopdf does where that is cheap to do exactly; where lopdf could read
//! more (an object hidden where no header was looked for, say), the process that reads the
//! PDF is bounded anyway (`exhale read-pdf`).

use std::collections::{HashMap, HashSet};

use pdf_extract::{Dictionary as LoDictionary, Document, Object, Stream, StringFormat};

use super::{
    filters::{self, Decoded, Filters},
    limits::{MAX_OBJECT_TOKENS, MAX_STREAM_BYTES},
    syntax::{self, Dictionary, Lexer, SyntaxError, Token, Value},
};
use crate::StatementError;

/// An object as a header starts it.
struct Indirect {
    id: (u32, u16),
    /// Where its header starts.
    at: usize,
    /// Where its value starts, after `obj`.
    body: usize,
    value: Value,
    /// Where a stream's data starts, if it is a stream.
    data: Option<usize>,
    /// Where its value's bytes end.
    end: usize,
}

/// The most whitespace and comments between the parts of a header (`N`, `G`, `obj`), or
/// after `startxref`: one space in every file written, and looking further at every digit of
/// a file would make reading it grow with its square.
const MAX_GAP: usize = 1024;

/// The file's reading so far, within the bounds.
#[derive(Default)]
struct Reading {
    tokens: usize,
    bytes_read: usize,
    budget: usize,
}

impl Reading {
    /// Reads one value at `at`, within the bounds: a value nested too deeply, or reading past
    /// the token or byte budget, refuses the file.
    fn value(&mut self, buf: &[u8], at: usize) -> Result<Option<(Value, usize)>, StatementError> {
        let mut lexer = Lexer::new(buf, at);
        let result = syntax::value(&mut lexer, &mut self.tokens);
        self.bytes_read += lexer.at - at;
        if self.tokens > MAX_OBJECT_TOKENS || self.bytes_read > self.budget {
            return Err(StatementError::PdfTooComplex);
        }
        match result {
            Ok(value) => Ok(Some((value, lexer.at))),
            Err(SyntaxError::TooDeep) => Err(StatementError::PdfUnreadable),
            Err(SyntaxError::Malformed) => Ok(None),
        }
    }
}

/// Checks a PDF's bytes before lopdf loads them; `Ok` means loading is bounded.
pub(super) fn check(pdf: &[u8]) -> Result<(), StatementError> {
    // lopdf reads from the header on, and its offsets count from there.
    let start = find(pdf, b"%PDF-", 0).unwrap_or(0);
    let buf = &pdf[start..];
    let mut reading = Reading { budget: 2 * buf.len() + 4096, ..Reading::default() };
    let objects = objects(buf, &mut reading)?;
    let mut dictionaries: Vec<&Dictionary> = objects
        .iter()
        .filter(|o| o.data.is_some())
        .filter_map(|o| as_dictionary(&o.value))
        .collect();
    let trailers = trailers(buf, &mut reading)?;
    dictionaries.extend(trailers.iter());

    let encryption = Encryption::of(&objects, &dictionaries);
    lengths_refer_to_numbers(&objects)?;
    every_object_ends(buf, &objects, &reading)?;

    let mut entries = classic_entries(buf, &mut reading)?;
    let starts = xref_starts(buf, &dictionaries);
    let mut expanded = 0usize;
    for object in &objects {
        let Some(data) = object.data else { continue };
        let Some(dict) = as_dictionary(&object.value) else { continue };
        let written = &buf[object.body..object.end];
        let is_xref = starts.contains(&object.at);
        let is_object_stream = dict.name(b"Type") == Some(b"ObjStm")
            || find(written, b"ObjStm", 0).is_some()
            || written.contains(&b'#');
        if !is_xref && !is_object_stream {
            continue;
        }
        let filters = filters_of(dict);
        let data = stream_data(buf, data, dict, &objects);
        let bytes = if is_object_stream && encryption.is_some() {
            // lopdf decrypts an object stream before it expands it; without a key, lopdf
            // cannot read it either.
            let Some(encryption) = &encryption else { continue };
            let Some(plain) = encryption.decrypt(object.id, dict, data) else { continue };
            expand(&plain, &filters)?.map(std::borrow::Cow::into_owned).map(std::borrow::Cow::Owned)
        } else {
            expand(data, &filters)?
        };
        let Some(bytes) = bytes else { continue };
        expanded += bytes.len();
        if expanded > 2 * MAX_STREAM_BYTES {
            return Err(StatementError::PdfTooLarge { max: 2 * MAX_STREAM_BYTES });
        }
        if is_xref {
            entries.extend(stream_entries(dict, &bytes)?);
        }
        if is_object_stream {
            read_object_stream(dict, &bytes, &mut reading)?;
        }
    }
    no_shared_bodies(buf, &objects, &entries)
}

/// A stream's bytes expanded within `MAX_STREAM_BYTES` (`None` when lopdf keeps them as they
/// are).
fn expand<'a>(
    data: &'a [u8],
    filters: &Option<Filters>,
) -> Result<Option<std::borrow::Cow<'a, [u8]>>, StatementError> {
    let Some(filters) = filters else { return Ok(Some(std::borrow::Cow::Borrowed(data))) };
    match filters::decode(data, filters, MAX_STREAM_BYTES) {
        Ok(Decoded::Bytes(bytes)) => Ok(Some(std::borrow::Cow::Owned(bytes))),
        Ok(Decoded::AsIs) => Ok(None),
        Err(filters::TooLarge) => Err(StatementError::PdfTooLarge { max: MAX_STREAM_BYTES }),
    }
}

fn as_dictionary(value: &Value) -> Option<&Dictionary> {
    match value {
        Value::Dictionary(d) => Some(d),
        _ => None,
    }
}

/// The first place `pattern` appears at or after `from`.
pub(super) fn find(haystack: &[u8], pattern: &[u8], from: usize) -> Option<usize> {
    haystack.get(from..)?.windows(pattern.len()).position(|w| w == pattern).map(|at| at + from)
}

/// Every object a header starts, read within the bounds. A header is a number, space, a
/// number, space and `obj`, where space may hold comments, as lopdf reads one; it is looked
/// for where a run of digits starts.
fn objects(buf: &[u8], reading: &mut Reading) -> Result<Vec<Indirect>, StatementError> {
    let mut objects: Vec<Indirect> = Vec::new();
    for at in 0..buf.len() {
        if at > 0 && buf[at - 1].is_ascii_digit() {
            continue;
        }
        let Some((id, body)) = header(buf, at) else { continue };
        let Some((value, end)) = reading.value(buf, body)? else { continue };
        let data = matches!(value, Value::Dictionary(_)).then(|| stream_start(buf, end)).flatten();
        objects.push(Indirect { id, at, body, value, data, end });
    }
    Ok(objects)
}

/// `N G obj` at `at`: the object's number and generation, and where its value starts.
fn header(buf: &[u8], at: usize) -> Option<((u32, u16), usize)> {
    let (object, object_end) = number(buf, at)?;
    let mut lexer = Lexer::new(buf, object_end);
    lexer.skip_space_within(MAX_GAP)?;
    let (generation, generation_end) = number(buf, lexer.at)?;
    let mut lexer = Lexer::new(buf, generation_end);
    lexer.skip_space_within(MAX_GAP)?;
    let object = u32::try_from(object).ok()?;
    let generation = u16::try_from(generation).ok()?;
    buf.get(lexer.at..)?.starts_with(b"obj").then_some(((object, generation), lexer.at + 3))
}

/// The run of digits at `at` as lopdf reads a number (leading zeros and all), and where it
/// ends; `None` when there is none or it is too large for any object number.
fn number(buf: &[u8], at: usize) -> Option<(u64, usize)> {
    let run = buf.get(at..)?.iter().take_while(|c| c.is_ascii_digit()).count();
    let digits = &buf[at..at + run];
    let significant = &digits[digits.iter().take_while(|&&c| c == b'0').count()..];
    if run == 0 || significant.len() > 10 {
        return None;
    }
    let value = std::str::from_utf8(significant).ok()?.parse().unwrap_or(0);
    Some((value, at + run))
}

/// Where a stream's data starts after its dictionary ends at `end`: space, `stream`, spaces
/// or tabs, a line end, as lopdf requires.
fn stream_start(buf: &[u8], end: usize) -> Option<usize> {
    let mut lexer = Lexer::new(buf, end);
    lexer.skip_space();
    let mut at = lexer.at;
    if !buf.get(at..)?.starts_with(b"stream") {
        return None;
    }
    at += b"stream".len();
    while matches!(buf.get(at), Some(b' ' | b'\t')) {
        at += 1;
    }
    match buf.get(at..)? {
        [b'\r', b'\n', ..] => Some(at + 2),
        [b'\r' | b'\n', ..] => Some(at + 1),
        _ => None,
    }
}

/// The dictionary after each `trailer` keyword.
fn trailers(buf: &[u8], reading: &mut Reading) -> Result<Vec<Dictionary>, StatementError> {
    let mut trailers = Vec::new();
    let mut from = 0;
    while let Some(at) = find(buf, b"trailer", from) {
        from = at + 1;
        if let Some((Value::Dictionary(dict), _)) = reading.value(buf, at + b"trailer".len())? {
            trailers.push(dict);
        }
    }
    Ok(trailers)
}

/// Every offset lopdf may read a cross-reference section at: each number after `startxref`,
/// and each `/Prev` and `/XRefStm`; moved past space to where an object's header would
/// start.
fn xref_starts(buf: &[u8], dictionaries: &[&Dictionary]) -> HashSet<usize> {
    let mut offsets: Vec<i64> = Vec::new();
    let mut from = 0;
    while let Some(at) = find(buf, b"startxref", from) {
        from = at + 1;
        // lopdf reads a signed integer there.
        let mut lexer = Lexer::new(buf, at + b"startxref".len());
        if lexer.skip_space_within(MAX_GAP).is_some() {
            let sign = usize::from(matches!(buf.get(lexer.at), Some(b'+' | b'-')));
            if sign == 0 || buf.get(lexer.at) == Some(&b'+') {
                offsets.extend(number(buf, lexer.at + sign).map(|(n, _)| n as i64));
            }
        }
    }
    for dict in dictionaries {
        offsets.extend(dict.integer(b"Prev"));
        offsets.extend(dict.integer(b"XRefStm"));
    }
    offsets
        .into_iter()
        .filter_map(|offset| usize::try_from(offset).ok())
        .filter(|&offset| offset < buf.len())
        .filter_map(|offset| {
            let mut lexer = Lexer::new(buf, offset);
            lexer.skip_space_within(MAX_GAP)?;
            Some(lexer.at)
        })
        .collect()
}

/// The filters a stream's dictionary names, as lopdf reads them (`None`: no `/Filter`, or one
/// lopdf cannot read, and it keeps the bytes as they are).
pub(super) fn filters_of(dict: &Dictionary) -> Option<Filters> {
    let names = match dict.get(b"Filter")? {
        Value::Name(name) => vec![name.clone()],
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::Name(name) => Some(name.clone()),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()?,
        _ => return None,
    };
    let params = match dict.get(b"DecodeParms") {
        Some(Value::Dictionary(params)) => Some(params),
        _ => None,
    };
    let number = |key: &[u8]| params.and_then(|p| p.integer(key));
    Some(Filters::new(names, params.map(|_| &number as filters::Parameter<'_>)))
}

/// A stream's `/Length`, direct or through the number object it refers to.
fn length(dict: &Dictionary, objects: &[Indirect]) -> Option<usize> {
    let length = match dict.get(b"Length")? {
        Value::Integer(n) => *n,
        Value::Reference(number, generation) => {
            objects.iter().rev().find(|o| o.id == (*number, *generation)).and_then(|o| {
                match o.value {
                    Value::Integer(n) => Some(n),
                    _ => None,
                }
            })?
        }
        _ => return None,
    };
    usize::try_from(length).ok()
}

/// A stream's data as lopdf takes it: `/Length` bytes when that can be worked out (and fits),
/// else up to `endstream`.
fn stream_data<'a>(
    buf: &'a [u8],
    data: usize,
    dict: &Dictionary,
    objects: &[Indirect],
) -> &'a [u8] {
    let end = length(dict, objects)
        .and_then(|length| data.checked_add(length))
        .filter(|&end| end <= buf.len())
        .or_else(|| find(buf, b"endstream", data))
        .unwrap_or(buf.len());
    &buf[data..end]
}

/// lopdf resolves a `/Length` that refers to another object by parsing that object, for every
/// stream, and recursively when it is a stream too: a length must refer to a number.
fn lengths_refer_to_numbers(objects: &[Indirect]) -> Result<(), StatementError> {
    let kinds: HashMap<(u32, u16), bool> = objects.iter().fold(HashMap::new(), |mut kinds, o| {
        let is_number = matches!(o.value, Value::Integer(_));
        *kinds.entry(o.id).or_insert(true) &= is_number;
        kinds
    });
    for object in objects.iter().filter(|o| o.data.is_some()) {
        let Some(dict) = as_dictionary(&object.value) else { continue };
        if let Some(Value::Reference(number, generation)) = dict.get(b"Length")
            && kinds.get(&(*number, *generation)) == Some(&false)
        {
            return Err(StatementError::PdfUnreadable);
        }
    }
    Ok(())
}

/// An encrypted file's loader copies each object from its header to the next `endobj`; those
/// copies together stay within the budget.
fn every_object_ends(
    buf: &[u8],
    objects: &[Indirect],
    reading: &Reading,
) -> Result<(), StatementError> {
    let ends: Vec<usize> = {
        let mut ends = Vec::new();
        let mut from = 0;
        while let Some(at) = find(buf, b"endobj", from) {
            ends.push(at);
            from = at + 1;
        }
        ends
    };
    let mut bodies = HashSet::new();
    let copied: usize = objects
        .iter()
        .filter(|o| bodies.insert(o.body))
        .map(|o| {
            let next = ends.partition_point(|&end| end < o.at);
            ends.get(next).copied().unwrap_or(buf.len()) - o.at
        })
        .sum();
    if copied > reading.budget {
        return Err(StatementError::PdfTooComplex);
    }
    Ok(())
}

/// The in-use entries of the classic cross-reference tables: each `xref` keyword, then
/// sections of a first number and a count, each followed by entries of an offset, a
/// generation and `n` or `f` for as long as they come (lopdf reads them whatever the count
/// says), within the budget of reading.
fn classic_entries(buf: &[u8], reading: &mut Reading) -> Result<Vec<(u32, usize)>, StatementError> {
    let mut entries = Vec::new();
    let mut from = 0;
    while let Some(at) = find(buf, b"xref", from) {
        from = at + 1;
        if buf[..at].ends_with(b"start") {
            continue;
        }
        let mut lexer = Lexer::new(buf, at + 4);
        let mut words = 0usize;
        let mut word = |lexer: &mut Lexer<'_>| {
            words += 1;
            match lexer.next_token() {
                Some(Token::Word(word)) => Some(word.to_vec()),
                _ => None,
            }
        };
        while let (Some(first), Some(_count)) = (word(&mut lexer), word(&mut lexer)) {
            let Some(first) = syntax::unsigned(&first) else { break };
            let mut index = 0;
            loop {
                let mut ahead = lexer.clone();
                let (Some(offset), Some(_), Some(kind)) =
                    (word(&mut ahead), word(&mut ahead), word(&mut ahead))
                else {
                    break;
                };
                if kind != b"n" && kind != b"f" {
                    break;
                }
                lexer = ahead;
                if kind == b"n"
                    && let Some(offset) = syntax::unsigned(&offset)
                {
                    entries.push(((first + index) as u32, offset as usize));
                }
                index += 1;
            }
        }
        reading.bytes_read += lexer.at - at;
        if reading.bytes_read > reading.budget || words > reading.budget {
            return Err(StatementError::PdfTooComplex);
        }
    }
    Ok(entries)
}

/// The in-use entries of a cross-reference stream, as lopdf reads them; field widths lopdf
/// would allocate without bound, or that read nothing and so loop without end, refuse the
/// file.
fn stream_entries(dict: &Dictionary, bytes: &[u8]) -> Result<Vec<(u32, usize)>, StatementError> {
    let integers = |key: &[u8]| match dict.get(key) {
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::Integer(n) => Some(*n),
                _ => None,
            })
            .collect::<Option<Vec<i64>>>(),
        _ => None,
    };
    let Some(widths) = integers(b"W") else { return Ok(Vec::new()) };
    if widths.len() < 3 {
        return Ok(Vec::new());
    }
    let widths = &widths[..3];
    if widths.iter().any(|w| !(0..=8).contains(w)) || widths.iter().sum::<i64>() == 0 {
        return Err(StatementError::PdfUnreadable);
    }
    let size = dict.integer(b"Size").unwrap_or(0);
    let sections = integers(b"Index").unwrap_or_else(|| vec![0, size]);
    // lopdf reads a field into 32 bits, the higher bytes falling off.
    let field = |row: &[u8], from: usize, width: i64| -> u32 {
        row[from..from + width as usize]
            .iter()
            .fold(0u32, |n, &b| (n << 8).wrapping_add(u32::from(b)))
    };
    let row_width = widths.iter().sum::<i64>() as usize;
    let mut rows = bytes.chunks_exact(row_width);
    let mut entries = Vec::new();
    for section in sections.chunks_exact(2) {
        for number in 0..section[1].max(0) {
            let Some(row) = rows.next() else { return Ok(entries) };
            let kind = if widths[0] == 0 { 1 } else { field(row, 0, widths[0]) };
            if kind == 1 {
                let offset = field(row, widths[0] as usize, widths[1]);
                entries.push(((section[0] + number) as u32, offset as usize));
            }
        }
    }
    Ok(entries)
}

/// lopdf parses the object at each entry's offset: two objects whose entries lead to one body
/// would parse the same bytes again and again, which no writer makes.
fn no_shared_bodies(
    buf: &[u8],
    objects: &[Indirect],
    entries: &[(u32, usize)],
) -> Result<(), StatementError> {
    let bodies: HashMap<usize, usize> = objects.iter().map(|o| (o.at, o.body)).collect();
    let mut owners: HashMap<usize, u32> = HashMap::new();
    for &(number, offset) in entries {
        if offset >= buf.len() {
            continue;
        }
        let mut lexer = Lexer::new(buf, offset);
        if lexer.skip_space_within(MAX_GAP).is_none() {
            continue;
        }
        let Some(&body) = bodies.get(&lexer.at) else { continue };
        if *owners.entry(body).or_insert(number) != number {
            return Err(StatementError::PdfTooComplex);
        }
    }
    Ok(())
}

/// An object stream's objects, each read where its index says it starts, within the bounds.
fn read_object_stream(
    dict: &Dictionary,
    bytes: &[u8],
    reading: &mut Reading,
) -> Result<(), StatementError> {
    let Some(first) = dict.integer(b"First").and_then(|f| usize::try_from(f).ok()) else {
        return Ok(());
    };
    let Some(index) = bytes.get(..first).and_then(|i| std::str::from_utf8(i).ok()) else {
        return Ok(());
    };
    let numbers: Vec<Option<u32>> = index.split_whitespace().map(|n| n.parse().ok()).collect();
    for pair in numbers.chunks_exact(2) {
        let Some(offset) = pair[1] else { continue };
        let at = first.saturating_add(offset as usize);
        if pair[0].is_some() && at < bytes.len() {
            reading.value(bytes, at)?;
        }
    }
    Ok(())
}

/// An encrypted file's key and what the loader needs to decrypt an object stream, through
/// lopdf's own decryption.
struct Encryption {
    state: pdf_extract::encryption::EncryptionState,
}

impl Encryption {
    /// The key for the empty password (the only one a statement is read with), when the file
    /// is encrypted and it can be worked out from the last trailer that names one; `None`
    /// otherwise (lopdf may still read such a file, and the process reading it is bounded).
    fn of(objects: &[Indirect], dictionaries: &[&Dictionary]) -> Option<Self> {
        let trailer = dictionaries.iter().rev().find(|d| d.get(b"Encrypt").is_some())?;
        let Some(Value::Reference(number, generation)) = trailer.get(b"Encrypt") else {
            return None;
        };
        let id = (*number, *generation);
        let encrypt = objects.iter().rev().find(|o| o.id == id && o.data.is_none())?;
        let mut document = Document::new();
        document.trailer = to_lopdf_dictionary(trailer);
        document.objects.insert(id, to_lopdf(&encrypt.value));
        let state = pdf_extract::encryption::EncryptionState::decode(&document, "").ok()?;
        Some(Self { state })
    }

    fn decrypt(&self, id: (u32, u16), dict: &Dictionary, cipher: &[u8]) -> Option<Vec<u8>> {
        let mut object = Object::Stream(Stream::new(to_lopdf_dictionary(dict), cipher.to_vec()));
        pdf_extract::encryption::decrypt_object(&self.state, id, &mut object).ok()?;
        match object {
            Object::Stream(stream) => Some(stream.content),
            _ => None,
        }
    }
}

fn to_lopdf(value: &Value) -> Object {
    match value {
        Value::Integer(n) => Object::Integer(*n),
        Value::Word(word) => match word.as_slice() {
            b"true" => Object::Boolean(true),
            b"false" => Object::Boolean(false),
            other => std::str::from_utf8(other)
                .ok()
                .and_then(|w| w.parse::<f32>().ok())
                .map_or(Object::Null, Object::Real),
        },
        Value::Name(name) => Object::Name(name.clone()),
        Value::String(bytes) => Object::String(bytes.clone(), StringFormat::Literal),
        Value::Array(items) => Object::Array(items.iter().map(to_lopdf).collect()),
        Value::Dictionary(dict) => Object::Dictionary(to_lopdf_dictionary(dict)),
        Value::Reference(number, generation) => Object::Reference((*number, *generation)),
    }
}

fn to_lopdf_dictionary(dict: &Dictionary) -> LoDictionary {
    let mut out = LoDictionary::new();
    for (key, value) in &dict.0 {
        out.set(key.clone(), to_lopdf(value));
    }
    out
}
