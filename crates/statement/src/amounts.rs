//! Amounts as statements write them: either decimal mark (decided for a whole column by
//! `decimal_mark`), thousands separators (`,` `.` `'` and spaces), signs before or after,
//! parentheses for negatives, `CR`/`DR`, and currency symbols or codes glued on either side
//! ("£12.00", "-€5,00", "12,00 €", "+ $73.01", "USD 9.99"). More decimals than the currency
//! has are rounded half away from zero; a leading mark is a zero ("-.46").

use domain::money::{Currency, Money};

/// Currency words that are not ISO codes but stand beside amounts ("kr", "zł", the "R" of
/// "R$").
const SYMBOL_WORDS: &[&str] = &[
    "KR", "ZŁ", "KČ", "FT", "LEI", "R", "RS", "US", "CA", "A", "NZ", "HK", "S", "FR", "SFR", "TL",
];

/// The decimal mark a column uses: the separator that most often has one or two digits after
/// it at the end of a value.
pub(crate) fn decimal_mark(values: &[&str]) -> char {
    let mut commas = 0;
    let mut points = 0;
    for value in values {
        let digits: String =
            value.chars().filter(|c| c.is_ascii_digit() || matches!(c, ',' | '.')).collect();
        if let Some(position) = digits.rfind([',', '.']) {
            let after = digits.len() - position - 1;
            if (1..=2).contains(&after) {
                if digits.as_bytes()[position] == b',' { commas += 1 } else { points += 1 }
            }
        }
    }
    if commas > points { ',' } else { '.' }
}

/// Rounds a decimal (digits before and after the mark) to `exponent` decimals, half away from
/// zero, as a string `Money::parse` reads.
fn rounded(whole: &str, fraction: &str, exponent: usize) -> Option<String> {
    let whole = whole.trim_start_matches('0');
    let whole = if whole.is_empty() { "0" } else { whole };
    let mut digits: Vec<u8> = whole.bytes().chain(fraction.bytes().take(exponent)).collect();
    digits.resize(whole.len() + exponent, b'0');
    if fraction.as_bytes().get(exponent).is_some_and(|&d| d >= b'5') {
        // Carry the one from the right.
        let mut at = digits.len();
        loop {
            if at == 0 {
                digits.insert(0, b'1');
                break;
            }
            at -= 1;
            if digits[at] == b'9' {
                digits[at] = b'0';
            } else {
                digits[at] += 1;
                break;
            }
        }
    }
    if digits.len() > 30 {
        return None;
    }
    let text = String::from_utf8(digits).ok()?;
    let split = text.len() - exponent;
    Some(if exponent == 0 { text } else { format!("{}.{}", &text[..split], &text[split..]) })
}

/// Reads one amount in minor units (negative for money going out), `None` when the cell is
/// empty.
pub(crate) fn parse(text: &str, mark: char, currency: Currency) -> Result<Option<i64>, String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Ok(None);
    }
    let not_an_amount = || format!("“{trimmed}” is not an amount");
    let mut negative = trimmed.starts_with('(') && trimmed.ends_with(')');
    let mut body = String::new();
    let mut letters = String::new();
    // A sign stands before the digits or after them, never between ("2024-01-02").
    let mut sign_after_digits = false;
    for c in trimmed.chars() {
        match c {
            '0'..='9' if sign_after_digits => return Err(not_an_amount()),
            '0'..='9' => body.push(c),
            '-' | '−' | '–' => {
                negative = true;
                sign_after_digits = !body.is_empty();
            }
            '+' | '(' | ')' | ' ' | '\u{a0}' | '\u{202f}' | '\'' | '’' | '€' | '$' | '£' | '¥'
            | '₹' | '₽' | '₩' | '₺' | '₴' | '₪' | '₫' | '₱' | '฿' => {}
            c if c == mark => body.push('.'),
            ',' | '.' => {} // the thousands separator
            c if c.is_alphabetic() => letters.push(c),
            _ => return Err(not_an_amount()),
        }
    }
    let letters = letters.to_uppercase();
    let letters_ok = letters.is_empty()
        || Currency::parse(&letters).is_ok()
        || SYMBOL_WORDS.contains(&letters.as_str())
        || matches!(letters.as_str(), "CR" | "DR");
    if !letters_ok || !body.chars().any(|c| c.is_ascii_digit()) || body.matches('.').count() > 1 {
        return Err(not_an_amount());
    }
    if letters == "DR" {
        negative = true;
    }
    let (whole, fraction) = body.split_once('.').unwrap_or((&body, ""));
    let decimal =
        rounded(whole, fraction, usize::from(currency.exponent())).ok_or_else(not_an_amount)?;
    let money = Money::parse(&decimal, currency).map_err(|err| format!("“{trimmed}”: {err}"))?;
    Ok(Some(if negative { -money.minor() } else { money.minor() }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eur() -> Currency {
        Currency::parse("EUR").unwrap()
    }

    #[test]
    fn amounts_in_every_common_shape() {
        let eur = eur();
        for (text, mark, minor) in [
            ("-12.99", '.', -1299),
            ("1,234.50", '.', 123_450),
            ("-1.234,50", ',', -123_450),
            ("12,99-", ',', -1299),
            ("(7.50)", '.', -750),
            ("€ 9,99", ',', 999),
            ("9.99 EUR", '.', 999),
            ("5", '.', 500),
            ("£12.00", '.', 1200),
            ("-€5,00", ',', -500),
            ("12,00 €", ',', 1200),
            ("+ $73.01", '.', 7301),
            ("- $12.01", '.', -1201),
            ("11'373.94", '.', 1_137_394),
            ("1 234,50 kr", ',', 123_450),
            ("R$ 10,00", ',', 1000),
            ("-.46", '.', -46),
            ("12.00 DR", '.', -1200),
            ("-00000000001500.0000", '.', -150_000),
            ("+00000000000115.8331", '.', 11583),
            ("0.005", '.', 1),
            ("9.995", '.', 1000),
        ] {
            assert_eq!(parse(text, mark, eur), Ok(Some(minor)), "{text}");
        }
        assert_eq!(parse("", '.', eur), Ok(None));
        for text in ["12abc", "=SUM(A1)", "-", "1.2.3", "€", "EUR", "2024-01-02", "866-579"] {
            assert!(parse(text, '.', eur).unwrap_err().contains("not an amount"), "{text}");
        }
        let jpy = Currency::parse("JPY").unwrap();
        assert_eq!(parse("-1500", '.', jpy), Ok(Some(-1500)));
        assert_eq!(parse("1500.50", '.', jpy), Ok(Some(1501)));
    }

    #[test]
    fn huge_numbers_are_refused_not_wrapped() {
        let eur = eur();
        assert!(parse("99999999999999999999999999999999999", '.', eur).is_err());
        assert!(parse("9999999999999", '.', eur).is_err());
    }
}
