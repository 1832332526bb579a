//! PDF syntax as Exhale reads it for the checks made before lopdf or pdf-extract parse
//! anything (`file.rs`, `pages.rs`): tokens, values whose nesting is bounded, and what a text
//! stream (a page's content, a CMap, a Type 1 font's program) holds that costs work later: how
//! deeply its brackets and strings nest, how often each name appears, and how many codes its
//! CMap ranges cover.
//!
//! It reads as lopdf reads wherever that decides a bound (where a string, a comment or an
//! inline image's data ends), and counts a name wherever a slash could start one, strings
//! included. It is a copy of another program's reading, checked against lopdf's own by a fuzz
//! test, not a proof: what it misses costs the process that reads the PDF (`exhale read-pdf`,
//! with bounded memory and time), never the server.

use std::collections::HashMap;

/// The deepest arrays, dictionaries and procedures may nest. lopdf, the CMap and Type 1
/// parsers recurse once a level, so a file of nested brackets would overflow the stack;
/// statements nest two or three levels.
pub(super) const MAX_NESTING: usize = 64;

pub(super) fn is_whitespace(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\0' | 0x0C)
}

fn is_delimiter(c: u8) -> bool {
    matches!(c, b'(' | b')' | b'<' | b'>' | b'[' | b']' | b'{' | b'}' | b'/' | b'%')
}

fn is_regular(c: u8) -> bool {
    !is_whitespace(c) && !is_delimiter(c)
}

/// The pair of brackets a token opens or closes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Bracket {
    Array,
    Dictionary,
    Procedure,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Token<'a> {
    Open(Bracket),
    Close(Bracket),
    /// A name with its `#xx` escapes undone, without the slash.
    Name(Vec<u8>),
    /// A literal or hexadecimal string, decoded.
    String(Vec<u8>),
    /// A number, a keyword or an operator; also a stray `)` or `>`.
    Word(&'a [u8]),
}

/// Tokens of PDF syntax from a position in a buffer.
#[derive(Clone)]
pub(super) struct Lexer<'a> {
    bytes: &'a [u8],
    pub(super) at: usize,
    /// The deepest parentheses nested in a literal string read so far (a CMap's and a Type 1
    /// program's parsers recurse once a level).
    pub(super) deepest_string: usize,
}

impl<'a> Lexer<'a> {
    pub(super) fn new(bytes: &'a [u8], at: usize) -> Self {
        Self { bytes, at, deepest_string: 0 }
    }

    /// Moves past whitespace and comments, but not beyond `most` bytes: `None` when there is
    /// more (a header of an object is never spread that far).
    pub(super) fn skip_space_within(&mut self, most: usize) -> Option<()> {
        let limit = self.at.saturating_add(most).min(self.bytes.len());
        let mut within = Lexer::new(&self.bytes[..limit], self.at);
        within.skip_space();
        if within.at == limit && limit < self.bytes.len() {
            return None;
        }
        self.at = within.at;
        Some(())
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    /// Moves past whitespace and comments.
    pub(super) fn skip_space(&mut self) {
        while let Some(c) = self.peek() {
            if is_whitespace(c) {
                self.at += 1;
            } else if c == b'%' {
                while self.peek().is_some_and(|c| c != b'\r' && c != b'\n') {
                    self.at += 1;
                }
            } else {
                break;
            }
        }
    }

    /// The next token, or `None` at the end.
    pub(super) fn next_token(&mut self) -> Option<Token<'a>> {
        self.skip_space();
        let c = self.peek()?;
        let next = self.bytes.get(self.at + 1).copied();
        Some(match c {
            b'[' => self.punct(1, Token::Open(Bracket::Array)),
            b']' => self.punct(1, Token::Close(Bracket::Array)),
            b'{' => self.punct(1, Token::Open(Bracket::Procedure)),
            b'}' => self.punct(1, Token::Close(Bracket::Procedure)),
            b'<' if next == Some(b'<') => self.punct(2, Token::Open(Bracket::Dictionary)),
            b'>' if next == Some(b'>') => self.punct(2, Token::Close(Bracket::Dictionary)),
            b'<' => Token::String(self.hex_string()),
            b'(' => Token::String(self.literal_string()),
            b'/' => Token::Name(self.name()),
            b')' | b'>' => {
                self.at += 1;
                Token::Word(&self.bytes[self.at - 1..self.at])
            }
            _ => {
                let start = self.at;
                while self.peek().is_some_and(is_regular) {
                    self.at += 1;
                }
                Token::Word(&self.bytes[start..self.at])
            }
        })
    }

    fn punct(&mut self, width: usize, token: Token<'a>) -> Token<'a> {
        self.at += width;
        token
    }

    /// A name after its slash: regular characters and `#xx` escapes. A `#` without two hex
    /// digits ends it, as in lopdf.
    fn name(&mut self) -> Vec<u8> {
        self.at += 1;
        let mut name = Vec::new();
        while let Some(c) = self.peek() {
            if c == b'#' {
                match self.bytes.get(self.at + 1..self.at + 3).and_then(hex_byte) {
                    Some(byte) => {
                        name.push(byte);
                        self.at += 3;
                    }
                    None => break,
                }
            } else if is_regular(c) {
                name.push(c);
                self.at += 1;
            } else {
                break;
            }
        }
        name
    }

    /// A literal string, escapes undone; nested parentheses are part of it. An unclosed one
    /// runs to the end.
    fn literal_string(&mut self) -> Vec<u8> {
        self.at += 1;
        let mut out = Vec::new();
        let mut open = 1usize;
        while let Some(c) = self.peek() {
            self.at += 1;
            match c {
                b'\\' => self.escape(&mut out),
                b'(' => {
                    open += 1;
                    self.deepest_string = self.deepest_string.max(open);
                    out.push(c);
                }
                b')' => {
                    open -= 1;
                    if open == 0 {
                        break;
                    }
                    out.push(c);
                }
                _ => out.push(c),
            }
        }
        out
    }

    /// What follows a backslash in a literal string.
    fn escape(&mut self, out: &mut Vec<u8>) {
        let Some(c) = self.peek() else { return };
        self.at += 1;
        match c {
            b'0'..=b'7' => {
                let mut value = u16::from(c - b'0');
                for _ in 0..2 {
                    match self.peek() {
                        Some(d @ b'0'..=b'7') => {
                            value = value * 8 + u16::from(d - b'0');
                            self.at += 1;
                        }
                        _ => break,
                    }
                }
                // The specification says overflow is ignored.
                out.push(value as u8);
            }
            b'\r' => {
                if self.peek() == Some(b'\n') {
                    self.at += 1;
                }
            }
            b'\n' => {}
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'b' => out.push(0x08),
            b'f' => out.push(0x0C),
            other => out.push(other),
        }
    }

    /// A hexadecimal string: digits in pairs, whitespace ignored, an odd last digit followed
    /// by zero. It ends at `>` (or the end).
    fn hex_string(&mut self) -> Vec<u8> {
        self.at += 1;
        let mut out = Vec::new();
        let mut high: Option<u8> = None;
        while let Some(c) = self.peek() {
            self.at += 1;
            if c == b'>' {
                break;
            }
            let Some(digit) = (c as char).to_digit(16) else { continue };
            let digit = digit as u8;
            match high.take() {
                Some(h) => out.push(h << 4 | digit),
                None => high = Some(digit),
            }
        }
        if let Some(h) = high {
            out.push(h << 4);
        }
        out
    }
}

fn hex_byte(pair: &[u8]) -> Option<u8> {
    let text = std::str::from_utf8(pair).ok()?;
    u8::from_str_radix(text, 16).ok().filter(|_| pair.iter().all(u8::is_ascii_hexdigit))
}

/// A value of PDF syntax, as much of it as the checks need.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Value {
    Integer(i64),
    /// Any other word: a real, a boolean, `null`, a keyword.
    Word(Vec<u8>),
    Name(Vec<u8>),
    String(Vec<u8>),
    Array(Vec<Value>),
    Dictionary(Dictionary),
    Reference(u32, u16),
}

/// A dictionary's entries in the order written; a key written twice means its last value,
/// as in lopdf.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Dictionary(pub(super) Vec<(Vec<u8>, Value)>);

impl Dictionary {
    pub(super) fn get(&self, key: &[u8]) -> Option<&Value> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub(super) fn name(&self, key: &[u8]) -> Option<&[u8]> {
        match self.get(key)? {
            Value::Name(name) => Some(name),
            _ => None,
        }
    }

    pub(super) fn integer(&self, key: &[u8]) -> Option<i64> {
        match self.get(key)? {
            Value::Integer(n) => Some(*n),
            _ => None,
        }
    }
}

/// Why a value could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SyntaxError {
    /// Nested more deeply than `MAX_NESTING`.
    TooDeep,
    /// Not PDF syntax: an unclosed or unmatched bracket, a dictionary key that is not a name.
    Malformed,
}

/// Reads one value; `tokens` counts every token read, so a caller can bound the work of many
/// values together.
pub(super) fn value(lexer: &mut Lexer<'_>, tokens: &mut usize) -> Result<Value, SyntaxError> {
    value_at(lexer, tokens, 0)
}

fn value_at(lexer: &mut Lexer<'_>, tokens: &mut usize, depth: usize) -> Result<Value, SyntaxError> {
    let token = lexer.next_token().ok_or(SyntaxError::Malformed)?;
    *tokens += 1;
    Ok(match token {
        Token::Open(bracket) => {
            if depth >= MAX_NESTING {
                return Err(SyntaxError::TooDeep);
            }
            let mut items = Vec::new();
            loop {
                let mut ahead = lexer.clone();
                match ahead.next_token() {
                    Some(Token::Close(closing)) if closing == bracket => {
                        *lexer = ahead;
                        break;
                    }
                    Some(Token::Close(_)) | None => return Err(SyntaxError::Malformed),
                    Some(_) => items.push(value_at(lexer, tokens, depth + 1)?),
                }
            }
            match bracket {
                Bracket::Array | Bracket::Procedure => Value::Array(items),
                Bracket::Dictionary => {
                    if items.len() % 2 != 0 {
                        return Err(SyntaxError::Malformed);
                    }
                    let mut entries = Vec::with_capacity(items.len() / 2);
                    let mut items = items.into_iter();
                    while let (Some(key), Some(value)) = (items.next(), items.next()) {
                        let Value::Name(key) = key else { return Err(SyntaxError::Malformed) };
                        entries.push((key, value));
                    }
                    Value::Dictionary(Dictionary(entries))
                }
            }
        }
        Token::Close(_) => return Err(SyntaxError::Malformed),
        Token::Name(name) => Value::Name(name),
        Token::String(bytes) => Value::String(bytes),
        Token::Word(word) => match unsigned(word) {
            Some(number) => {
                // `N G R` is a reference.
                let mut ahead = lexer.clone();
                let generation = ahead.next_token();
                let r = ahead.next_token();
                match (generation, r) {
                    (Some(Token::Word(g)), Some(Token::Word(b"R"))) if unsigned(g).is_some() => {
                        *lexer = ahead;
                        *tokens += 2;
                        let generation = unsigned(g).unwrap_or(0);
                        Value::Reference(
                            u32::try_from(number).unwrap_or(u32::MAX),
                            u16::try_from(generation).unwrap_or(u16::MAX),
                        )
                    }
                    _ => Value::Integer(number),
                }
            }
            None => match std::str::from_utf8(word).ok().and_then(|w| w.parse::<i64>().ok()) {
                Some(signed) => Value::Integer(signed),
                None => Value::Word(word.to_vec()),
            },
        },
    })
}

/// A number of digits only.
pub(super) fn unsigned(word: &[u8]) -> Option<i64> {
    if word.is_empty() || !word.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(word).ok()?.parse().ok()
}

/// What a text stream holds that costs work when it is parsed.
#[derive(Debug, Default)]
pub(super) struct TextScan {
    /// The deepest its arrays, dictionaries and procedures nest.
    pub(super) depth: usize,
    /// How often each name appears, strings and inline images included: at least as often as
    /// a parser can use it.
    pub(super) names: HashMap<Vec<u8>, usize>,
    /// How many codes its `beginbfrange` sections cover (a CMap parser makes an entry for each).
    pub(super) range_codes: u64,
}

/// Scans a content stream, a CMap or a Type 1 font program.
pub(super) fn scan_text(bytes: &[u8]) -> TextScan {
    let mut scan = TextScan { names: names(bytes), ..TextScan::default() };
    let mut lexer = Lexer::new(bytes, 0);
    let mut depth = 0usize;
    // lopdf starts an inline image only where an operation starts: first, or after an
    // operator.
    let mut operation_starts = true;
    loop {
        if operation_starts && starts_inline_image(&mut lexer) {
            skip_inline_image(&mut lexer);
            continue;
        }
        let Some(token) = lexer.next_token() else { break };
        operation_starts = false;
        match token {
            Token::Open(_) => {
                depth += 1;
                scan.depth = scan.depth.max(depth);
            }
            Token::Close(_) => depth = depth.saturating_sub(1),
            // A CMap parser reads `1beginbfrange` as a number and the operator.
            Token::Word(word) if word.ends_with(b"beginbfrange") => {
                scan.range_codes += range_codes(&mut lexer);
            }
            Token::Word(word) => {
                operation_starts = depth == 0
                    && word.first().is_some_and(|c| c.is_ascii_alphabetic() || b"*'\"".contains(c));
            }
            _ => {}
        }
    }
    scan.depth = scan.depth.max(lexer.deepest_string);
    scan
}

/// Whether an inline image starts here (`BI` where an operation starts, as lopdf's parser
/// tries it first there), moving past `BI` when it does.
fn starts_inline_image(lexer: &mut Lexer<'_>) -> bool {
    lexer.skip_space();
    let starts = lexer.bytes.get(lexer.at..).is_some_and(|rest| rest.starts_with(b"BI"));
    if starts {
        lexer.at += 2;
    }
    starts
}

/// Every name in the bytes, wherever a slash starts one: in strings and image data too, so
/// the count is never less than a parser's.
fn names(bytes: &[u8]) -> HashMap<Vec<u8>, usize> {
    let mut names: HashMap<Vec<u8>, usize> = HashMap::new();
    for (at, _) in bytes.iter().enumerate().filter(|(_, c)| **c == b'/') {
        let name = Lexer::new(bytes, at).name();
        *names.entry(name).or_default() += 1;
    }
    names
}

/// After `BI`: the inline image's dictionary up to `ID` (the two bytes, whatever follows
/// them, as lopdf matches them), then its data, whose length lopdf works out from the width,
/// height, bits and colour space and takes whole. When lopdf cannot work it out it stops
/// reading the content there, so reading on, as this then does, only counts more.
fn skip_inline_image(lexer: &mut Lexer<'_>) {
    let mut entries: Vec<(Vec<u8>, Value)> = Vec::new();
    let mut tokens = 0;
    loop {
        lexer.skip_space();
        if lexer.bytes.get(lexer.at..).is_some_and(|rest| rest.starts_with(b"ID")) {
            lexer.at += 2;
            break;
        }
        let mut ahead = lexer.clone();
        match ahead.next_token() {
            Some(Token::Name(key)) => {
                *lexer = ahead;
                match value(lexer, &mut tokens) {
                    Ok(value) => entries.push((key, value)),
                    Err(_) => return,
                }
            }
            _ => return,
        }
    }
    let Some(length) = inline_image_length(&Dictionary(entries)) else { return };
    // lopdf's `content_space` after `ID`: spaces, tabs and line ends only.
    while lexer.peek().is_some_and(|c| matches!(c, b' ' | b'\t' | b'\r' | b'\n')) {
        lexer.at += 1;
    }
    lexer.at = lexer.at.saturating_add(length).min(lexer.bytes.len());
}

/// The length of an inline image's data as lopdf computes it (with its wrapping arithmetic),
/// or `None` where lopdf refuses the image.
fn inline_image_length(dict: &Dictionary) -> Option<usize> {
    let either = |short: &[u8], long: &[u8]| dict.get(short).or_else(|| dict.get(long));
    let integer = |short: &[u8], long: &[u8]| match either(short, long)? {
        Value::Integer(n) => Some(*n as usize),
        _ => None,
    };
    let width = integer(b"W", b"Width")?;
    let height = integer(b"H", b"Height")?;
    let bits = integer(b"BPC", b"BitsPerComponent")?;
    let mask = matches!(either(b"IM", b"ImageMask"), Some(Value::Word(w)) if w == b"true");
    let colours: usize = if mask {
        1
    } else {
        match either(b"CS", b"ColorSpace")? {
            Value::Name(name) => match name.as_slice() {
                b"DeviceGray" | b"Gray" => 1,
                b"DeviceRGB" | b"RGB" => 3,
                b"DeviceRGBA" | b"RGBA" | b"DeviceCMYK" | b"CMYK" => 4,
                _ => return None,
            },
            _ => return None,
        }
    };
    if either(b"F", b"Filter").is_some() {
        return None;
    }
    let stride = width.wrapping_mul(colours.wrapping_mul(bits)).div_ceil(8);
    Some(height.wrapping_mul(stride))
}

/// The codes a `beginbfrange` section's entries cover: each is a low and a high code and
/// what they map to (a string or an array), read as the CMap parser reads them.
fn range_codes(lexer: &mut Lexer<'_>) -> u64 {
    let mut codes = 0u64;
    let mut tokens = 0;
    loop {
        let mut ahead = lexer.clone();
        let (Some(Token::String(low)), Some(Token::String(high))) =
            (ahead.next_token(), ahead.next_token())
        else {
            return codes;
        };
        if value(&mut ahead, &mut tokens).is_err() {
            return codes;
        }
        *lexer = ahead;
        let (low, high) = (code(&low), code(&high));
        if high >= low {
            codes += u64::from(high - low) + 1;
        }
    }
}

/// A CMap code: its bytes, big-endian, in 32 bits (higher bytes fall off, as in the parser).
fn code(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0u32, |code, &b| code << 8 | u32::from(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(text: &str) -> Result<Value, SyntaxError> {
        value(&mut Lexer::new(text.as_bytes(), 0), &mut 0)
    }

    #[test]
    fn values_are_read_with_references_escapes_and_the_last_of_a_repeated_key() {
        let Value::Dictionary(dict) =
            values("<< /Type /Ob#6aStm /N 3 0 R /S (a\\(b\\)\\101\\\n) /H <41 4> /N 2 >>").unwrap()
        else {
            panic!("a dictionary");
        };
        assert_eq!(dict.name(b"Type"), Some(&b"ObjStm"[..]));
        assert_eq!(dict.integer(b"N"), Some(2));
        assert_eq!(dict.get(b"S"), Some(&Value::String(b"a(b)A".to_vec())));
        assert_eq!(dict.get(b"H"), Some(&Value::String(vec![0x41, 0x40])));
        assert_eq!(
            values("[1 0 R -2 /x]").unwrap(),
            Value::Array(vec![
                Value::Reference(1, 0),
                Value::Integer(-2),
                Value::Name(b"x".to_vec())
            ])
        );
    }

    #[test]
    fn nesting_beyond_the_limit_and_broken_syntax_are_refused() {
        let deep = format!("{}{}", "[".repeat(MAX_NESTING + 1), "]".repeat(MAX_NESTING + 1));
        assert_eq!(values(&deep), Err(SyntaxError::TooDeep));
        let fine = format!("{}{}", "[".repeat(MAX_NESTING), "]".repeat(MAX_NESTING));
        assert!(values(&fine).is_ok());
        assert_eq!(values("[1 2"), Err(SyntaxError::Malformed));
        assert_eq!(values("<< 1 2 >>"), Err(SyntaxError::Malformed));
        assert_eq!(values("[ >> ]"), Err(SyntaxError::Malformed));
    }

    #[test]
    fn a_text_scan_counts_depth_names_and_range_codes_but_not_what_strings_hide() {
        let scan = scan_text(b"q [(a[[[[) 1 (b)] TJ /F1 12 Tf /Fm0 Do /Fm0 Do (/Fm0) Tj Q");
        assert_eq!(scan.depth, 1);
        assert_eq!(scan.names.get(&b"Fm0"[..]), Some(&3), "strings count too");
        let cmap =
            scan_text(b"2 beginbfrange <0000> <00FF> <0041> <1000> <1001> [<41> <42>] endbfrange");
        assert_eq!(cmap.range_codes, 256 + 2);
        let everything = scan_text(b"1 beginbfrange <00000000> <FFFFFFFF> <0041> endbfrange");
        assert_eq!(everything.range_codes, 1 << 32);
    }

    #[test]
    fn an_inline_image_s_data_is_skipped_by_the_length_lopdf_computes() {
        // Four bytes of data that look like brackets; after them, one real array.
        let scan = scan_text(b"BI /W 2 /H 2 /BPC 8 /CS /Gray ID [[[[ EI [1] TJ");
        assert_eq!(scan.depth, 1);
        // A filtered image stops lopdf; reading on counts the data's brackets.
        let scan = scan_text(b"BI /W 2 /H 2 /BPC 8 /CS /Gray /F /AHx ID [[[[ EI");
        assert_eq!(scan.depth, 4);
    }
}
