//! Bytes to text: UTF-8 (with or without a byte-order mark), UTF-16 in either byte order
//! (with a mark, or recognised by its zero bytes), and otherwise Windows-1252, the superset
//! of Latin-1 that banks' "ANSI" exports use. Binary files are refused.

use crate::StatementError;

/// Windows-1252's characters for 0x80..=0x9F (Latin-1 has control codes there).
const CP1252_HIGH: [char; 32] = [
    '€', '\u{81}', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u{8d}', 'Ž', '\u{8f}',
    '\u{90}', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\u{9d}', 'ž', 'Ÿ',
];

fn utf16(bytes: &[u8], little_endian: bool) -> Result<String, StatementError> {
    let units: Vec<u16> = bytes
        .chunks_exact(2)
        .map(|pair| {
            if little_endian {
                u16::from_le_bytes([pair[0], pair[1]])
            } else {
                u16::from_be_bytes([pair[0], pair[1]])
            }
        })
        .collect();
    String::from_utf16(&units).map_err(|_| StatementError::NotText)
}

/// The text and the name of the encoding it was in.
pub(crate) fn decode(bytes: &[u8]) -> Result<(String, &'static str), StatementError> {
    if bytes.is_empty() {
        return Err(StatementError::Empty);
    }
    let text = if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        (String::from_utf8(rest.to_vec()).map_err(|_| StatementError::NotText)?, "UTF-8")
    } else if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        (utf16(rest, true)?, "UTF-16")
    } else if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        (utf16(rest, false)?, "UTF-16")
    } else if bytes.len() >= 4 && bytes[1] == 0 && bytes[3] == 0 && bytes[0] != 0 {
        (utf16(bytes, true)?, "UTF-16")
    } else if bytes.len() >= 4 && bytes[0] == 0 && bytes[2] == 0 && bytes[1] != 0 {
        (utf16(bytes, false)?, "UTF-16")
    } else if let Ok(text) = std::str::from_utf8(bytes) {
        (text.to_owned(), "UTF-8")
    } else {
        let text = bytes
            .iter()
            .map(|&b| match b {
                0x80..=0x9F => CP1252_HIGH[usize::from(b - 0x80)],
                _ => char::from(b),
            })
            .collect();
        (text, "Windows-1252")
    };
    // Text files have no NUL bytes and few control characters besides line breaks and tabs.
    let controls =
        text.0.chars().filter(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t')).count();
    if text.0.contains('\0') || controls * 20 > text.0.chars().count().max(1) {
        return Err(StatementError::NotText);
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_encodings_banks_export() {
        assert_eq!(decode("Date;Amount".as_bytes()).unwrap(), ("Date;Amount".into(), "UTF-8"));
        assert_eq!(decode(b"\xEF\xBB\xBFDatum").unwrap(), ("Datum".into(), "UTF-8"));
        let utf16le: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("Müller".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        assert_eq!(decode(&utf16le).unwrap(), ("Müller".into(), "UTF-16"));
        let utf16be: Vec<u8> = "Date,€".encode_utf16().flat_map(u16::to_be_bytes).collect();
        assert_eq!(decode(&utf16be).unwrap(), ("Date,€".into(), "UTF-16"));
        // "Café 5€" in Windows-1252.
        assert_eq!(decode(b"Caf\xE9 5\x80").unwrap(), ("Café 5€".into(), "Windows-1252"));
    }

    #[test]
    fn refuses_binary_and_empty_files() {
        assert_eq!(decode(b""), Err(StatementError::Empty));
        assert_eq!(
            decode(b"%PDF\x00\x01\x02\x03\x04\x05\x06\x07binary"),
            Err(StatementError::NotText)
        );
        let junk: Vec<u8> = (0..200u8).map(|i| i.wrapping_mul(37) % 32).collect();
        assert_eq!(decode(&junk), Err(StatementError::NotText));
    }
}
