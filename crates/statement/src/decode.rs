//! Bytes to text: UTF-8 (with or without a byte-order mark), UTF-16 in either byte order
//! (with a mark, or recognised by its zero bytes), and otherwise one of the Windows code pages
//! banks' "ANSI" exports use: 1252 (Western, a superset of Latin-1), 1250 (Central European)
//! or 1257 (Baltic). A file's own declaration (OFX `CHARSET:`, XML `encoding=`) is believed
//! when the bytes are not UTF-8; otherwise the code page whose letters make words of one
//! language wins. A UTF-8 file with some lines in a code page is read line by line. Trailing
//! NUL bytes (QuickBooks files end with one) are dropped; other binary files are refused.

use crate::StatementError;

/// The characters of a Windows code page for the bytes 0x80..=0xFF.
struct CodePage {
    name: &'static str,
    high: &'static str,
}

const CP1252: CodePage = CodePage {
    name: "Windows-1252",
    high: "€\u{81}‚ƒ„…†‡ˆ‰Š‹Œ\u{8d}Ž\u{8f}\u{90}‘’“”•–—˜™š›œ\u{9d}žŸ\u{a0}¡¢£¤¥¦§¨©ª«¬\u{ad}®¯°±²³´µ¶·¸¹º»¼½¾¿ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖ×ØÙÚÛÜÝÞßàáâãäåæçèéêëìíîïðñòóôõö÷øùúûüýþÿ",
};
const CP1250: CodePage = CodePage {
    name: "Windows-1250",
    high: "€\u{81}‚\u{83}„…†‡\u{88}‰Š‹ŚŤŽŹ\u{90}‘’“”•–—\u{98}™š›śťžź\u{a0}ˇ˘Ł¤Ą¦§¨©Ş«¬\u{ad}®Ż°±˛ł´µ¶·¸ąş»Ľ˝ľżŔÁÂĂÄĹĆÇČÉĘËĚÍÎĎĐŃŇÓÔŐÖ×ŘŮÚŰÜÝŢßŕáâăäĺćçčéęëěíîďđńňóôőö÷řůúűüýţ˙",
};
const CP1257: CodePage = CodePage {
    name: "Windows-1257",
    high: "€\u{81}‚\u{83}„…†‡\u{88}‰\u{8a}‹\u{8c}¨ˇ¸\u{90}‘’“”•–—\u{98}™\u{9a}›\u{9c}¯˛\u{9f}\u{a0}\u{a1}¢£¤\u{a5}¦§Ø©Ŗ«¬\u{ad}®Æ°±²³´µ¶·ø¹ŗ»¼½¾æĄĮĀĆÄÅĘĒČÉŹĖĢĶĪĻŠŃŅÓŌÕÖ×ŲŁŚŪÜŻŽßąįāćäåęēčéźėģķīļšńņóōõö÷ųłśūüżž˙",
};
/// In the order ties are broken: Western first.
const CODE_PAGES: [&CodePage; 3] = [&CP1252, &CP1250, &CP1257];

/// The non-ASCII letters of the languages whose banks export in these code pages (lower
/// case). A decoding is plausible when one language has all its letters.
const ALPHABETS: &[&str] = &[
    "äöüß",              // German
    "éèêëàâîïôûùçœÿæ",   // French
    "áéíóúñü",           // Spanish
    "áâãàçéêíóôõú",      // Portuguese
    "àèéìíîòóùú",        // Italian
    "éëïöüèáó",          // Dutch
    "æøåé",              // Danish, Norwegian
    "åäöé",              // Swedish, Finnish
    "áðéíóúýþæö",        // Icelandic
    "ąćęłńóśźż",         // Polish
    "áčďéěíňóřšťúůýž",   // Czech
    "áäčďéíĺľňóôŕšťúýž", // Slovak
    "áéíóöőúüű",         // Hungarian
    "ăâîșşțţ",           // Romanian
    "čćđšž",             // Croatian, Slovenian
    "ąčęėįšųūž",         // Lithuanian
    "āčēģīķļņšūž",       // Latvian
    "äöõüšž",            // Estonian
];

fn decode_with(bytes: &[u8], page: &CodePage) -> String {
    let high: Vec<char> = page.high.chars().collect();
    bytes
        .iter()
        .map(|&b| if b < 0x80 { char::from(b) } else { high[usize::from(b - 0x80)] })
        .collect()
}

/// How much of the text's non-ASCII letters one language explains, 0 to 1 (1 when there are
/// none).
fn plausibility(text: &str) -> f64 {
    let letters: Vec<char> = text
        .chars()
        .filter(|c| !c.is_ascii() && c.is_alphabetic())
        .flat_map(char::to_lowercase)
        .collect();
    if letters.is_empty() {
        return 1.0;
    }
    let best = ALPHABETS
        .iter()
        .map(|alphabet| letters.iter().filter(|c| alphabet.contains(**c)).count())
        .max()
        .unwrap_or(0);
    best as f64 / letters.len() as f64
}

/// The code page a file declares for itself (OFX 1.x `CHARSET:1252`, XML
/// `encoding="windows-1250"`), when it is one of ours.
fn declared(bytes: &[u8]) -> Option<&'static CodePage> {
    let head: String =
        bytes.iter().take(1000).map(|&b| char::from(b).to_ascii_uppercase()).collect();
    let value = ["CHARSET:", "ENCODING=\"", "ENCODING='"].iter().find_map(|key| {
        let start = head.find(key)? + key.len();
        Some(head[start..].split(['"', '\'', '\r', '\n', ' ', '?']).next().unwrap_or(""))
    })?;
    let value = value.trim_start_matches("WINDOWS-").trim_start_matches("CP");
    match value {
        "1252" | "ISO-8859-1" | "ISO-8859-15" | "LATIN1" | "8859-1" => Some(&CP1252),
        "1250" => Some(&CP1250),
        "1257" => Some(&CP1257),
        _ => None,
    }
}

/// The code page for bytes that are not UTF-8: the declared one, else the most plausible.
fn code_page(bytes: &[u8], declared: Option<&'static CodePage>) -> &'static CodePage {
    declared.unwrap_or_else(|| {
        let mut best = (&CP1252, plausibility(&decode_with(bytes, &CP1252)));
        for page in &CODE_PAGES[1..] {
            let score = plausibility(&decode_with(bytes, page));
            if score > best.1 + 1e-9 {
                best = (page, score);
            }
        }
        best.0
    })
}

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

/// A file that is mostly UTF-8 but has lines in a code page: each line in what it is.
fn mixed(bytes: &[u8], declared: Option<&'static CodePage>) -> Option<(String, String)> {
    let lines: Vec<&[u8]> = bytes.split_inclusive(|&b| b == b'\n').collect();
    let is_utf8 = |line: &[u8]| std::str::from_utf8(line).is_ok();
    let utf8_non_ascii = lines.iter().filter(|l| !l.is_ascii() && is_utf8(l)).count();
    if utf8_non_ascii == 0 {
        return None;
    }
    let other: Vec<u8> =
        lines.iter().filter(|l| !is_utf8(l)).flat_map(|l| l.iter().copied()).collect();
    let page = code_page(&other, declared);
    let mut text = String::with_capacity(bytes.len());
    let mut in_page = 0;
    for line in &lines {
        match std::str::from_utf8(line) {
            Ok(line) => text.push_str(line),
            Err(_) => {
                in_page += 1;
                text.push_str(&decode_with(line, page));
            }
        }
    }
    Some((text, format!("UTF-8 with {in_page} lines in {}", page.name)))
}

/// UTF-8 or a code page, for files that are not UTF-16.
fn single_byte(bytes: &[u8]) -> Result<(String, String), StatementError> {
    let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |last| last + 1);
    let bytes = &bytes[..end];
    if bytes.is_empty() {
        return Err(StatementError::NotText);
    }
    let bytes = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(bytes);
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Ok((text.to_owned(), "UTF-8".into()));
    }
    let declared = declared(bytes);
    Ok(match mixed(bytes, declared) {
        Some(found) => found,
        None => {
            let page = code_page(bytes, declared);
            (decode_with(bytes, page), page.name.to_owned())
        }
    })
}

/// The text and the name of the encoding it was in.
pub(crate) fn decode(bytes: &[u8]) -> Result<(String, String), StatementError> {
    if bytes.is_empty() {
        return Err(StatementError::Empty);
    }
    let utf16_le = bytes.len() >= 4 && bytes[1] == 0 && bytes[3] == 0 && bytes[0] != 0;
    let utf16_be = bytes.len() >= 4 && bytes[0] == 0 && bytes[2] == 0 && bytes[1] != 0;
    let (text, encoding) = if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        (utf16(rest, true)?, "UTF-16".into())
    } else if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        (utf16(rest, false)?, "UTF-16".into())
    } else if utf16_le {
        (utf16(bytes, true)?, "UTF-16".into())
    } else if utf16_be {
        (utf16(bytes, false)?, "UTF-16".into())
    } else {
        single_byte(bytes)?
    };

    // Text files have no NUL bytes and few control characters besides line breaks and tabs.
    let controls =
        text.chars().filter(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t')).count();
    if text.contains('\0') || controls * 20 > text.chars().count().max(1) {
        return Err(StatementError::NotText);
    }
    Ok((text, encoding))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(bytes: &[u8]) -> (String, String) {
        decode(bytes).unwrap()
    }

    #[test]
    fn the_code_pages_have_a_character_for_every_byte() {
        for page in CODE_PAGES {
            assert_eq!(page.high.chars().count(), 128, "{}", page.name);
        }
    }

    #[test]
    fn reads_the_encodings_banks_export() {
        assert_eq!(decoded("Date;Amount".as_bytes()), ("Date;Amount".into(), "UTF-8".into()));
        assert_eq!(decoded(b"\xEF\xBB\xBFDatum"), ("Datum".into(), "UTF-8".into()));
        let utf16le: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("Müller".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        assert_eq!(decoded(&utf16le), ("Müller".into(), "UTF-16".into()));
        let utf16be: Vec<u8> = "Date,€".encode_utf16().flat_map(u16::to_be_bytes).collect();
        assert_eq!(decoded(&utf16be), ("Date,€".into(), "UTF-16".into()));
        // "Café 5€" in Windows-1252.
        assert_eq!(decoded(b"Caf\xE9 5\x80"), ("Café 5€".into(), "Windows-1252".into()));
    }

    #[test]
    fn the_code_page_whose_letters_make_one_language() {
        // Lithuanian in Windows-1257: "Paslaugų ir komisinių pajamos už".
        let lithuanian = b"Paslaug\xF8 ir komisini\xF8 pajamos u\xFE l\xEB\xF0\xF8";
        assert_eq!(
            decoded(lithuanian),
            ("Paslaugų ir komisinių pajamos už lėšų".into(), "Windows-1257".into())
        );
        // Polish in Windows-1250: "Opłata za kartę, Łódź".
        let polish = b"Op\xB3ata za kart\xEA, \xA3\xF3d\x9F";
        assert_eq!(decoded(polish), ("Opłata za kartę, Łódź".into(), "Windows-1250".into()));
        // German and French stay Western, although 1250 and 1257 share ä, ö, ü, ß and é.
        assert_eq!(decoded(b"Geb\xFChr M\xE4rz Stra\xDFe").1, "Windows-1252");
        assert_eq!(decoded(b"Pr\xE9l\xE8vement \xE0 la caisse").1, "Windows-1252");
    }

    #[test]
    fn a_declared_code_page_is_believed_only_when_the_bytes_are_not_utf8() {
        let declared = b"OFXHEADER:100\nCHARSET:1257\n\n<NAME>u\xFE";
        assert!(decoded(declared).0.ends_with("už"));
        // Declares 1252 but is UTF-8: the bytes win.
        let contradicted = "OFXHEADER:100\nCHARSET:1252\n\n<NAME>Café".as_bytes();
        assert_eq!(
            decoded(contradicted),
            (String::from_utf8_lossy(contradicted).into(), "UTF-8".into())
        );
    }

    #[test]
    fn utf8_with_some_lines_in_a_code_page_is_read_line_by_line() {
        let bytes = b"Date;Text\n2026-01-01;Caf\xC3\xA9 Noir\n2026-01-02;Geb\xFChr\n";
        let (text, encoding) = decoded(bytes);
        assert_eq!(text, "Date;Text\n2026-01-01;Café Noir\n2026-01-02;Gebühr\n");
        assert_eq!(encoding, "UTF-8 with 1 lines in Windows-1252");
    }

    #[test]
    fn trailing_nul_bytes_are_dropped_but_binary_files_refused() {
        assert_eq!(decoded(b"<OFX></OFX>\r\n\0\0").0, "<OFX></OFX>\r\n");
        assert_eq!(decode(b""), Err(StatementError::Empty));
        assert_eq!(decode(b"\0\0\0"), Err(StatementError::NotText));
        assert_eq!(
            decode(b"%PDF\x00\x01\x02\x03\x04\x05\x06\x07binary"),
            Err(StatementError::NotText)
        );
        let junk: Vec<u8> = (0..200u8).map(|i| i.wrapping_mul(37) % 32).collect();
        assert_eq!(decode(&junk), Err(StatementError::NotText));
    }
}
