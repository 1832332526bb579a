//! Merchant names from transaction descriptions: what stays the same from one charge to the
//! next ("NETFLIX.COM 866-579 CA" and "Netflix.com Amsterdam" are both Netflix).
//!
//! Dropped: payment-processor and bank prefixes, card numbers, dates, reference codes, store
//! numbers, web-domain endings, legal suffixes and trailing place names or country codes.

/// Prefixes banks and payment processors put before the merchant.
const PREFIXES: &[&str] = &[
    "CARD PAYMENT TO ",
    "CARD PURCHASE ",
    "DEBIT CARD PURCHASE ",
    "PURCHASE AUTHORIZED ON ",
    "POS PURCHASE ",
    "DIRECT DEBIT ",
    "DD ",
    "SEPA-LASTSCHRIFT ",
    "SEPA LASTSCHRIFT ",
    "LASTSCHRIFT ",
    "KARTENZAHLUNG ",
    "RECIBO ",
    "PAGO ",
    "PRLV SEPA ",
    "CB ",
    "POS ",
    "VISA ",
    "MC ",
    "PAYPAL *",
    "PAYPAL ",
    "PP*",
    "SQ *",
    "SQ*",
    "SUMUP *",
    "ZETTLE_*",
    "IZ *",
    "STRIPE *",
    "TST* ",
    "SP * ",
    "SP ",
];

/// Whether `word` alone is one of the [`PREFIXES`] ("SP", "PAYPAL", "SQ").
fn is_prefix_word(word: &str) -> bool {
    PREFIXES.iter().any(|prefix| prefix.trim_end_matches([' ', '*', '_']) == word)
}

/// Words that are never the merchant on their own.
const LEGAL: &[&str] = &[
    "LTD", "LIMITED", "GMBH", "AG", "INC", "LLC", "SA", "SAS", "SL", "SARL", "BV", "NV", "PLC",
    "CO", "CORP", "KG", "SPA", "SRL", "AB", "AS", "OY", "PTY",
];

fn is_reference(word: &str) -> bool {
    let digits = word.chars().filter(char::is_ascii_digit).count();
    let letters = word.chars().filter(|c| c.is_alphabetic()).count();
    // Card and account numbers, long codes, dates, amounts, store numbers.
    digits >= 3
        || (digits > 0 && letters > 0 && word.len() >= 6)
        || word.starts_with('#')
        || word.contains('*') && digits > 0
}

fn clean_word(word: &str) -> String {
    let edge = |c: char| !c.is_alphanumeric() && c != '&' && c != '+';
    let word = word.trim_matches(edge);
    // Web domains: the name, not the ending.
    let word = word.strip_prefix("WWW.").unwrap_or(word);
    let word = [
        ".COM", ".CO.UK", ".CO", ".NET", ".ORG", ".IO", ".DE", ".FR", ".ES", ".IT", ".NL", ".EU",
        ".TV", ".APP",
    ]
    .iter()
    .find_map(|ending| word.strip_suffix(ending))
    .unwrap_or(word);
    // Trimmed again: what was before a dot or slash may end in punctuation or an invisible
    // mark, which a display name would lose, so the name would not find its merchant again.
    word.split(['/', '.']).next().unwrap_or(word).trim_matches(edge).to_owned()
}

/// The merchant's words, upper case, most significant first.
fn words(description: &str) -> Vec<String> {
    let mut text = description.to_uppercase();
    loop {
        let before = text.len();
        for prefix in PREFIXES {
            if let Some(rest) = text.trim_start().strip_prefix(prefix) {
                text = rest.to_owned();
            }
        }
        if text.len() == before {
            break;
        }
    }
    let mut words: Vec<String> = text
        .split(|c: char| c.is_whitespace() || c == '*' || c == ',' || c == ';')
        .filter(|word| !word.is_empty() && !is_reference(word))
        .map(clean_word)
        .filter(|word| word.chars().any(char::is_alphabetic) && !LEGAL.contains(&word.as_str()))
        .collect();
    // A prefix can also come first once references before it are left out ("4411 SP SHOP");
    // left in, the key would differ from the key of the display name made from it.
    while words.len() > 1 && is_prefix_word(&words[0]) {
        words.remove(0);
    }
    words
}

/// The key a merchant's charges are grouped by: the first one or two significant words.
pub fn key(description: &str) -> String {
    let words = words(description);
    match words.as_slice() {
        [] => description.trim().to_uppercase(),
        // Short first words ("THE", "LA", "EL", "MY") do not name a merchant alone.
        [first, second, ..] if first.len() <= 3 => format!("{first} {second}"),
        [first, ..] => first.clone(),
    }
}

/// A readable name for the merchant: the key's words in title case ("Netflix", "The Times").
pub fn display_name(description: &str) -> String {
    key(description)
        .split(' ')
        .map(|word| {
            let mut chars = word.chars();
            match chars.next() {
                Some(first) => {
                    first.to_uppercase().chain(chars.flat_map(char::to_lowercase)).collect()
                }
                None => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_display_name_finds_its_merchant_again() {
        // Found by the fuzz target: a mark before a domain ending, and a prefix after a
        // reference, gave a key the display name did not have.
        for description in
            ["NETFLIX\u{FFFD}.COM 866", "AY\u{200F}/SHOP", "4411 SP SPOTIFY", "99 MC SHOP X"]
        {
            let name = display_name(description);
            assert_eq!(key(&name), key(description), "{description:?} named {name:?}");
        }
        assert_eq!(key("4411 SP SPOTIFY"), "SPOTIFY");
    }

    #[test]
    fn the_same_merchant_from_different_descriptions() {
        for description in [
            "NETFLIX.COM 866-579-7172 CA",
            "Netflix.com Amsterdam NL",
            "CARD PAYMENT TO NETFLIX.COM ON 03-04",
            "SEPA-LASTSCHRIFT Netflix International B.V. REF 8812AB77",
            "PAYPAL *NETFLIX 4029357733",
        ] {
            assert_eq!(key(description), "NETFLIX", "{description}");
        }
        assert_eq!(key("SPOTIFY P1A2B3C4D5 STOCKHOLM"), "SPOTIFY");
        assert_eq!(key("The Times Digital 123456"), "THE TIMES");
        assert_eq!(key("VISA 4921XXXXXXXX1234 GYMPOWER LTD #0042"), "GYMPOWER");
        assert_eq!(display_name("WWW.DROPBOX.COM 12/03"), "Dropbox");
    }

    #[test]
    fn different_merchants_stay_apart() {
        assert_ne!(key("APPLE.COM/BILL"), key("AMAZON PRIME"));
        assert_ne!(key("Vodafone"), key("Vattenfall"));
    }
}
