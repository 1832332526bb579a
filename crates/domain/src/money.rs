//! Money as an integer count of a currency's minor units, and ISO 4217 currencies.
//!
//! Amounts cross every API as a decimal string in major units ("12.99") with the currency
//! beside it. Parsing never rounds: more decimals than the currency has is an error.
//! Conversions between currencies use integer rates in millionths and `i128` math.

use std::fmt;

use crate::validate::shorten;

/// The largest absolute amount accepted, in major units of any currency.
pub const MAX_MAJOR: i64 = 1_000_000_000;

/// Rates are integers of millionths: 1.08 is `1_080_000`.
const RATE_SCALE: i64 = 1_000_000;

/// The largest rate accepted by [`parse_rate`] (exclusive), in whole units.
const MAX_RATE_UNITS: i64 = 1_000_000;

/// Active ISO 4217 codes with their minor-unit exponents, sorted by code.
///
/// Precious metals and other codes without minor units (XAU, XDR, XXX, …) are left out:
/// nobody pays a subscription in them.
const CURRENCIES: &[(&str, u8)] = &[
    ("AED", 2),
    ("AFN", 2),
    ("ALL", 2),
    ("AMD", 2),
    ("ANG", 2),
    ("AOA", 2),
    ("ARS", 2),
    ("AUD", 2),
    ("AWG", 2),
    ("AZN", 2),
    ("BAM", 2),
    ("BBD", 2),
    ("BDT", 2),
    ("BGN", 2),
    ("BHD", 3),
    ("BIF", 0),
    ("BMD", 2),
    ("BND", 2),
    ("BOB", 2),
    ("BOV", 2),
    ("BRL", 2),
    ("BSD", 2),
    ("BTN", 2),
    ("BWP", 2),
    ("BYN", 2),
    ("BZD", 2),
    ("CAD", 2),
    ("CDF", 2),
    ("CHE", 2),
    ("CHF", 2),
    ("CHW", 2),
    ("CLF", 4),
    ("CLP", 0),
    ("CNY", 2),
    ("COP", 2),
    ("COU", 2),
    ("CRC", 2),
    ("CUC", 2),
    ("CUP", 2),
    ("CVE", 2),
    ("CZK", 2),
    ("DJF", 0),
    ("DKK", 2),
    ("DOP", 2),
    ("DZD", 2),
    ("EGP", 2),
    ("ERN", 2),
    ("ETB", 2),
    ("EUR", 2),
    ("FJD", 2),
    ("FKP", 2),
    ("GBP", 2),
    ("GEL", 2),
    ("GHS", 2),
    ("GIP", 2),
    ("GMD", 2),
    ("GNF", 0),
    ("GTQ", 2),
    ("GYD", 2),
    ("HKD", 2),
    ("HNL", 2),
    ("HTG", 2),
    ("HUF", 2),
    ("IDR", 2),
    ("ILS", 2),
    ("INR", 2),
    ("IQD", 3),
    ("IRR", 2),
    ("ISK", 0),
    ("JMD", 2),
    ("JOD", 3),
    ("JPY", 0),
    ("KES", 2),
    ("KGS", 2),
    ("KHR", 2),
    ("KMF", 0),
    ("KPW", 2),
    ("KRW", 0),
    ("KWD", 3),
    ("KYD", 2),
    ("KZT", 2),
    ("LAK", 2),
    ("LBP", 2),
    ("LKR", 2),
    ("LRD", 2),
    ("LSL", 2),
    ("LYD", 3),
    ("MAD", 2),
    ("MDL", 2),
    ("MGA", 2),
    ("MKD", 2),
    ("MMK", 2),
    ("MNT", 2),
    ("MOP", 2),
    ("MRU", 2),
    ("MUR", 2),
    ("MVR", 2),
    ("MWK", 2),
    ("MXN", 2),
    ("MXV", 2),
    ("MYR", 2),
    ("MZN", 2),
    ("NAD", 2),
    ("NGN", 2),
    ("NIO", 2),
    ("NOK", 2),
    ("NPR", 2),
    ("NZD", 2),
    ("OMR", 3),
    ("PAB", 2),
    ("PEN", 2),
    ("PGK", 2),
    ("PHP", 2),
    ("PKR", 2),
    ("PLN", 2),
    ("PYG", 0),
    ("QAR", 2),
    ("RON", 2),
    ("RSD", 2),
    ("RUB", 2),
    ("RWF", 0),
    ("SAR", 2),
    ("SBD", 2),
    ("SCR", 2),
    ("SDG", 2),
    ("SEK", 2),
    ("SGD", 2),
    ("SHP", 2),
    ("SLE", 2),
    ("SOS", 2),
    ("SRD", 2),
    ("SSP", 2),
    ("STN", 2),
    ("SVC", 2),
    ("SYP", 2),
    ("SZL", 2),
    ("THB", 2),
    ("TJS", 2),
    ("TMT", 2),
    ("TND", 3),
    ("TOP", 2),
    ("TRY", 2),
    ("TTD", 2),
    ("TWD", 2),
    ("TZS", 2),
    ("UAH", 2),
    ("UGX", 0),
    ("USD", 2),
    ("USN", 2),
    ("UYI", 0),
    ("UYU", 2),
    ("UYW", 4),
    ("UZS", 2),
    ("VED", 2),
    ("VES", 2),
    ("VND", 0),
    ("VUV", 0),
    ("WST", 2),
    ("XAF", 0),
    ("XCD", 2),
    ("XCG", 2),
    ("XOF", 0),
    ("XPF", 0),
    ("YER", 2),
    ("ZAR", 2),
    ("ZMW", 2),
    ("ZWG", 2),
];

/// Symbols for common currencies, used as a prefix by [`Money::display`].
const SYMBOLS: &[(&str, &str)] = &[
    ("AUD", "A$"),
    ("BRL", "R$"),
    ("CAD", "CA$"),
    ("CHF", "CHF"),
    ("CNY", "CN¥"),
    ("EUR", "€"),
    ("GBP", "£"),
    ("HKD", "HK$"),
    ("ILS", "₪"),
    ("INR", "₹"),
    ("JPY", "¥"),
    ("KRW", "₩"),
    ("MXN", "MX$"),
    ("NGN", "₦"),
    ("NZD", "NZ$"),
    ("PHP", "₱"),
    ("RUB", "₽"),
    ("THB", "฿"),
    ("TRY", "₺"),
    ("UAH", "₴"),
    ("USD", "$"),
    ("VND", "₫"),
];

/// An active ISO 4217 currency, such as EUR (2 decimals), JPY (0) or KWD (3).
///
/// Only obtainable from the built-in table, so every value is a known currency.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Currency {
    code: &'static str,
    exponent: u8,
}

impl Currency {
    /// The euro.
    pub const EUR: Currency = Currency { code: "EUR", exponent: 2 };
    /// The US dollar.
    pub const USD: Currency = Currency { code: "USD", exponent: 2 };
    /// The pound sterling.
    pub const GBP: Currency = Currency { code: "GBP", exponent: 2 };
    /// The Japanese yen.
    pub const JPY: Currency = Currency { code: "JPY", exponent: 0 };

    /// Parses a currency code: surrounding whitespace is ignored and any case is accepted.
    pub fn parse(code: &str) -> Result<Currency, MoneyError> {
        let upper = code.trim().to_ascii_uppercase();
        CURRENCIES
            .binary_search_by(|(c, _)| (*c).cmp(upper.as_str()))
            .ok()
            .and_then(|i| CURRENCIES.get(i))
            .map(|&(code, exponent)| Currency { code, exponent })
            .ok_or_else(|| MoneyError::UnknownCurrency(shorten(code.trim(), 24)))
    }

    /// The upper-case three-letter code, such as "EUR".
    pub fn code(&self) -> &'static str {
        self.code
    }

    /// How many decimals the currency has (its minor-unit exponent).
    pub fn exponent(&self) -> u8 {
        self.exponent
    }

    /// The symbol of a common currency ("€", "$", "¥"), if it has a well-known one.
    pub fn symbol(&self) -> Option<&'static str> {
        SYMBOLS.iter().find(|(code, _)| *code == self.code).map(|&(_, symbol)| symbol)
    }

    /// Every supported currency, sorted by code.
    pub fn all() -> impl Iterator<Item = Currency> {
        CURRENCIES.iter().map(|&(code, exponent)| Currency { code, exponent })
    }

    /// One major unit in minor units: 10 to the power of the exponent.
    pub fn minor_per_major(&self) -> i64 {
        10_i64.pow(u32::from(self.exponent))
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code)
    }
}

/// Why an amount, currency or rate was refused.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
pub enum MoneyError {
    /// The code is not in the ISO 4217 table.
    #[error("{0} is not an ISO 4217 currency code; use a code such as EUR, USD or GBP")]
    UnknownCurrency(String),
    /// The amount (or rate) is not a plain decimal string.
    #[error(
        "\"{0}\" is not an amount; write a decimal string in major units such as \"12.99\" \
         (no spaces, signs other than a leading -, thousands separators or exponents)"
    )]
    Malformed(String),
    /// More decimals than the currency has; never rounded.
    #[error("{currency} has {max} decimal places; write the amount with at most {max} decimals")]
    TooManyDecimals {
        /// The currency of the amount.
        currency: Currency,
        /// Its number of decimals.
        max: u8,
    },
    /// A price, limit or balance that must not be below zero.
    #[error("the amount cannot be negative; write it as a positive decimal such as \"12.99\"")]
    Negative,
    /// More decimals than any currency has, before the currency is known.
    #[error("write the amount with at most 4 decimals")]
    TooPrecise,
    /// The amount or rate is too large (or a rate is not positive).
    #[error(
        "the number is out of range; amounts must be at most 1,000,000,000 in major units, \
         and exchange rates above 0 and below 1,000,000"
    )]
    OutOfRange,
    /// Two amounts in different currencies were combined.
    #[error("the amounts are in different currencies; convert one of them first")]
    CurrencyMismatch,
}

/// An amount: an integer count of minor units (cents) and its currency.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Money {
    minor: i64,
    currency: Currency,
}

impl Money {
    /// An amount of `minor` minor units (1299 EUR is €12.99).
    pub fn new(minor: i64, currency: Currency) -> Money {
        Money { minor, currency }
    }

    /// The amount in minor units.
    pub fn minor(&self) -> i64 {
        self.minor
    }

    /// The currency.
    pub fn currency(&self) -> Currency {
        self.currency
    }

    /// Parses a decimal string in major units ("12.99", "-3.5", "500").
    ///
    /// Strict: an optional leading `-`, digits, and an optional `.` followed by 1 to
    /// exponent digits. More decimals than the currency has is an error, never a rounding.
    pub fn parse(amount: &str, currency: Currency) -> Result<Money, MoneyError> {
        Decimal::parse(amount)
            .map_err(|err| match err {
                MoneyError::TooPrecise => {
                    MoneyError::TooManyDecimals { currency, max: currency.exponent() }
                }
                other => other,
            })?
            .in_currency(currency)
    }

    /// The amount as a decimal string in major units with exactly the currency's number
    /// of decimals: "12.99", "-3.50", "500" (JPY), "1.250" (KWD).
    pub fn to_decimal_string(&self) -> String {
        let mut out = String::with_capacity(12);
        if self.minor < 0 {
            out.push('-');
        }
        self.write_digits(&mut out, false);
        out
    }

    /// The amount for people: "€12.99", "-€3.50", "¥500", "€1,234.56", "12.99 SEK".
    pub fn display(&self) -> String {
        let mut out = String::with_capacity(16);
        if self.minor < 0 {
            out.push('-');
        }
        match self.currency.symbol() {
            Some(symbol) if symbol.chars().all(|c| c.is_ascii_alphabetic()) => {
                out.push_str(symbol);
                out.push(' ');
                self.write_digits(&mut out, true);
            }
            Some(symbol) => {
                out.push_str(symbol);
                self.write_digits(&mut out, true);
            }
            None => {
                self.write_digits(&mut out, true);
                out.push(' ');
                out.push_str(self.currency.code());
            }
        }
        out
    }

    /// The sum, or `None` if the currencies differ or the sum overflows.
    pub fn checked_add(self, other: Money) -> Option<Money> {
        if self.currency != other.currency {
            return None;
        }
        Some(Money { minor: self.minor.checked_add(other.minor)?, currency: self.currency })
    }

    /// The difference, or `None` if the currencies differ or it overflows.
    pub fn checked_sub(self, other: Money) -> Option<Money> {
        if self.currency != other.currency {
            return None;
        }
        Some(Money { minor: self.minor.checked_sub(other.minor)?, currency: self.currency })
    }

    /// Writes the amount as digits with `.fraction` (none for exponent 0), optionally with
    /// thousands grouped by commas, without the sign. Hot in list views: no allocation.
    fn write_digits(&self, out: &mut String, grouped: bool) {
        let abs = self.minor.unsigned_abs();
        let exponent = u32::from(self.currency.exponent());
        let scale = 10_u64.pow(exponent);
        let mut digits = [0u8; 20];
        let mut int = abs / scale;
        let mut len = 0;
        loop {
            digits[len] = b'0' + (int % 10) as u8;
            len += 1;
            int /= 10;
            if int == 0 {
                break;
            }
        }
        for i in (0..len).rev() {
            out.push(char::from(digits[i]));
            if grouped && i > 0 && i % 3 == 0 {
                out.push(',');
            }
        }
        if exponent > 0 {
            out.push('.');
            let frac = abs % scale;
            for position in (0..exponent).rev() {
                out.push(char::from(b'0' + ((frac / 10_u64.pow(position)) % 10) as u8));
            }
        }
    }
}

/// The most decimals any currency has (CLF and UYW have four).
pub const MAX_DECIMALS: u8 = 4;

/// Ten-thousandths per major unit: the scale a [`Decimal`] counts in.
const DECIMAL_SCALE: i64 = 10_i64.pow(MAX_DECIMALS as u32);

/// A decimal in major units before its currency is known, as an input writes it ("-12.50"):
/// a count of ten-thousandths and how many decimals were written, so it is written back as
/// it was read (less leading zeros). Which currency it is in, and so whether it has too many
/// decimals, is decided by [`Decimal::in_currency`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Decimal {
    ten_thousandths: i64,
    decimals: u8,
}

impl Decimal {
    /// Reads a decimal strictly: an optional leading `-`, digits, and an optional `.` followed
    /// by 1 to 4 digits. Larger than any amount ([`MAX_MAJOR`]) is out of range.
    pub fn parse(text: &str) -> Result<Decimal, MoneyError> {
        Self::parse_up_to(text, MAX_MAJOR)
    }

    /// [`Decimal::parse`] with another largest absolute value, in major units.
    fn parse_up_to(text: &str, max_major: i64) -> Result<Decimal, MoneyError> {
        let malformed = || MoneyError::Malformed(shorten(text, 40));
        let (negative, body) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (int_part, frac_part) = match body.split_once('.') {
            Some((i, f)) => (i, Some(f)),
            None => (body, None),
        };
        let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !all_digits(int_part) || frac_part.is_some_and(|f| !all_digits(f)) {
            return Err(malformed());
        }
        let frac = frac_part.unwrap_or("");
        if frac.len() > usize::from(MAX_DECIMALS) {
            return Err(MoneyError::TooPrecise);
        }
        let int_digits = int_part.trim_start_matches('0');
        let major: i64 = if int_digits.is_empty() {
            0
        } else {
            int_digits.parse().map_err(|_| MoneyError::OutOfRange)?
        };
        let mut fraction: i64 =
            if frac.is_empty() { 0 } else { frac.parse().map_err(|_| malformed())? };
        for _ in frac.len()..usize::from(MAX_DECIMALS) {
            fraction *= 10;
        }
        let abs = major
            .checked_mul(DECIMAL_SCALE)
            .and_then(|whole| whole.checked_add(fraction))
            .filter(|abs| *abs <= max_major.saturating_mul(DECIMAL_SCALE))
            .ok_or(MoneyError::OutOfRange)?;
        // `frac.len()` is at most MAX_DECIMALS, checked above.
        let decimals = frac.len() as u8;
        Ok(Decimal { ten_thousandths: if negative { -abs } else { abs }, decimals })
    }

    /// The amount in `currency`; more decimals than it has is an error, never a rounding.
    pub fn in_currency(self, currency: Currency) -> Result<Money, MoneyError> {
        let exponent = currency.exponent();
        if self.decimals > exponent {
            return Err(MoneyError::TooManyDecimals { currency, max: exponent });
        }
        if self.ten_thousandths.unsigned_abs() > (MAX_MAJOR * DECIMAL_SCALE).unsigned_abs() {
            return Err(MoneyError::OutOfRange);
        }
        let per_minor = 10_i64.pow(u32::from(MAX_DECIMALS - exponent));
        Ok(Money::new(self.ten_thousandths / per_minor, currency))
    }

    /// The same amount with the zeros at the end of its decimals left out ("12.990" is
    /// "12.99"): for a value another program wrote exactly, never for what a person typed.
    pub fn without_trailing_zeros(self) -> Decimal {
        let mut decimals = self.decimals;
        while decimals > 0
            && (self.ten_thousandths / 10_i64.pow(u32::from(MAX_DECIMALS - decimals))) % 10 == 0
        {
            decimals -= 1;
        }
        Decimal { decimals, ..self }
    }

    /// The same amount without its sign.
    pub fn abs(self) -> Decimal {
        Decimal { ten_thousandths: self.ten_thousandths.saturating_abs(), ..self }
    }

    /// The amount as a float, for drawing a chart (never for sums).
    pub fn to_f64(self) -> f64 {
        self.ten_thousandths as f64 / DECIMAL_SCALE as f64
    }

    /// Below zero ("-0" is not).
    pub fn is_negative(self) -> bool {
        self.ten_thousandths < 0
    }
}

impl From<Money> for Decimal {
    /// The amount with exactly its currency's decimals, as [`Money::to_decimal_string`] writes.
    fn from(money: Money) -> Self {
        let exponent = money.currency.exponent().min(MAX_DECIMALS);
        let per_minor = 10_i64.pow(u32::from(MAX_DECIMALS - exponent));
        Decimal { ten_thousandths: money.minor.saturating_mul(per_minor), decimals: exponent }
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let abs = self.ten_thousandths.unsigned_abs();
        let scale = DECIMAL_SCALE.unsigned_abs();
        if self.ten_thousandths < 0 {
            f.write_str("-")?;
        }
        write!(f, "{}", abs / scale)?;
        if self.decimals > 0 {
            let digits = format!("{:04}", abs % scale);
            write!(f, ".{}", &digits[..usize::from(self.decimals)])?;
        }
        Ok(())
    }
}

impl serde::Serialize for Decimal {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Decimal {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // An output's sum may pass what an input may say; it still fits the count.
        let text = std::borrow::Cow::<str>::deserialize(deserializer)?;
        Decimal::parse_up_to(text.trim(), i64::MAX).map_err(serde::de::Error::custom)
    }
}

impl schemars::JsonSchema for Decimal {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Decimal".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string"})
    }
}

/// Divides rounding half away from zero; `den` must be positive.
pub(crate) fn div_round(num: i128, den: i128) -> i128 {
    let q = num / den;
    let r = num % den;
    if r.abs() * 2 >= den { q + num.signum() } else { q }
}

/// Converts `minor` units of `from` into minor units of `to`.
///
/// `rate_micros` is how many units of `to` one unit of `from` is worth, in millionths
/// (1.08 is `1_080_000`). Differing exponents are handled; the result is rounded half away
/// from zero. `None` if the rate is not positive or the result does not fit in `i64`.
pub fn convert(minor: i64, from: Currency, to: Currency, rate_micros: i64) -> Option<i64> {
    if rate_micros <= 0 {
        return None;
    }
    let num = i128::from(minor)
        .checked_mul(i128::from(rate_micros))?
        .checked_mul(i128::from(to.minor_per_major()))?;
    let den = i128::from(from.minor_per_major()) * i128::from(RATE_SCALE);
    i64::try_from(div_round(num, den)).ok()
}

/// Parses an exchange rate such as "1.08" into millionths (`1_080_000`).
///
/// A positive decimal string with at most 6 decimals, above 0 and below 1,000,000.
pub fn parse_rate(s: &str) -> Result<i64, MoneyError> {
    let trimmed = s.trim();
    let malformed = || MoneyError::Malformed(shorten(s, 40));
    let (int_part, frac) = match trimmed.split_once('.') {
        Some((i, f)) => (i, f),
        None => (trimmed, ""),
    };
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int_part.is_empty()
        || !all_digits(int_part)
        || !all_digits(frac)
        || (trimmed.contains('.') && frac.is_empty())
        || frac.len() > 6
    {
        return Err(malformed());
    }
    let int_digits = int_part.trim_start_matches('0');
    if int_digits.len() > 7 {
        return Err(MoneyError::OutOfRange);
    }
    let int: i64 =
        if int_digits.is_empty() { 0 } else { int_digits.parse().map_err(|_| malformed())? };
    let mut frac_micros: i64 =
        if frac.is_empty() { 0 } else { frac.parse().map_err(|_| malformed())? };
    for _ in frac.len()..6 {
        frac_micros *= 10;
    }
    let micros = int * RATE_SCALE + frac_micros;
    if micros <= 0 || micros >= MAX_RATE_UNITS * RATE_SCALE {
        return Err(MoneyError::OutOfRange);
    }
    Ok(micros)
}

/// Formats a rate in millionths with trailing zeros trimmed: "1.08", "150", "0.000001".
pub fn format_rate(micros: i64) -> String {
    let sign = if micros < 0 { "-" } else { "" };
    let abs = micros.unsigned_abs();
    let scale = RATE_SCALE.unsigned_abs();
    let int = abs / scale;
    let frac = format!("{:06}", abs % scale);
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() { format!("{sign}{int}") } else { format!("{sign}{int}.{frac}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cur(code: &str) -> Currency {
        Currency::parse(code).unwrap()
    }

    #[test]
    fn table_is_sorted_unique_and_complete() {
        assert!(CURRENCIES.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(CURRENCIES.len() >= 165, "{}", CURRENCIES.len());
        assert!(
            CURRENCIES
                .iter()
                .all(|(c, _)| c.len() == 3 && c.bytes().all(|b| b.is_ascii_uppercase()))
        );
        assert!(SYMBOLS.iter().all(|(c, _)| Currency::parse(c).is_ok()));
        assert_eq!(Currency::all().count(), CURRENCIES.len());
    }

    #[test]
    fn exponents() {
        for code in [
            "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI",
            "VND", "VUV", "XAF", "XOF", "XPF",
        ] {
            assert_eq!(cur(code).exponent(), 0, "{code}");
        }
        for code in ["BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"] {
            assert_eq!(cur(code).exponent(), 3, "{code}");
        }
        for code in ["CLF", "UYW"] {
            assert_eq!(cur(code).exponent(), 4, "{code}");
        }
        let zero_or_odd = Currency::all().filter(|c| c.exponent() != 2).count();
        assert_eq!(zero_or_odd, 17 + 7 + 2);
        assert_eq!(Currency::EUR, cur("EUR"));
        assert_eq!(Currency::USD, cur("USD"));
        assert_eq!(Currency::GBP, cur("GBP"));
        assert_eq!(Currency::JPY, cur("JPY"));
    }

    #[test]
    fn currency_parse() {
        assert_eq!(cur(" eur ").code(), "EUR");
        assert_eq!(cur("Usd").to_string(), "USD");
        let err = Currency::parse("USDX").unwrap_err();
        assert_eq!(err, MoneyError::UnknownCurrency("USDX".into()));
        assert_eq!(
            err.to_string(),
            "USDX is not an ISO 4217 currency code; use a code such as EUR, USD or GBP"
        );
        assert!(Currency::parse("").is_err());
        assert!(Currency::parse("XAU").is_err());
        assert!(Currency::parse("HRK").is_err());
        assert_eq!(cur("eur").symbol(), Some("€"));
        assert_eq!(cur("SEK").symbol(), None);
    }

    #[test]
    fn money_parse_ok() {
        let eur = Currency::EUR;
        assert_eq!(Money::parse("12.99", eur).unwrap().minor(), 1299);
        assert_eq!(Money::parse("12.9", eur).unwrap().minor(), 1290);
        assert_eq!(Money::parse("12", eur).unwrap().minor(), 1200);
        assert_eq!(Money::parse("-3.5", eur).unwrap().minor(), -350);
        assert_eq!(Money::parse("0.01", eur).unwrap().minor(), 1);
        assert_eq!(Money::parse("-0", eur).unwrap().minor(), 0);
        assert_eq!(Money::parse("007.10", eur).unwrap().minor(), 710);
        assert_eq!(Money::parse("500", Currency::JPY).unwrap().minor(), 500);
        assert_eq!(Money::parse("1.25", cur("KWD")).unwrap().minor(), 1250);
        assert_eq!(Money::parse("1.2345", cur("CLF")).unwrap().minor(), 12345);
        assert_eq!(Money::parse("1000000000", eur).unwrap().minor(), 100_000_000_000);
        assert_eq!(Money::parse("-1000000000.00", eur).unwrap().minor(), -100_000_000_000);
        assert_eq!(Money::parse("0000000000001", eur).unwrap().minor(), 100);
    }

    #[test]
    fn money_parse_errors() {
        let eur = Currency::EUR;
        for bad in [
            "", "-", ".", "12.", ".5", "-.5", "12,99", "1,299.00", " 12", "12 ", "+12", "1e3",
            "--1", "1.2.3", "abc", "١٢", "12.-1",
        ] {
            assert!(matches!(Money::parse(bad, eur), Err(MoneyError::Malformed(_))), "{bad:?}");
        }
        assert_eq!(
            Money::parse("12,99", eur).unwrap_err().to_string(),
            "\"12,99\" is not an amount; write a decimal string in major units such as \"12.99\" \
             (no spaces, signs other than a leading -, thousands separators or exponents)"
        );
        assert_eq!(
            Money::parse("12.999", eur),
            Err(MoneyError::TooManyDecimals { currency: eur, max: 2 })
        );
        assert_eq!(
            Money::parse("12.990", eur),
            Err(MoneyError::TooManyDecimals { currency: eur, max: 2 })
        );
        let jpy = Currency::JPY;
        let err = Money::parse("500.0", jpy).unwrap_err();
        assert_eq!(err, MoneyError::TooManyDecimals { currency: jpy, max: 0 });
        assert_eq!(
            err.to_string(),
            "JPY has 0 decimal places; write the amount with at most 0 decimals"
        );
        assert!(matches!(Money::parse("500.", jpy), Err(MoneyError::Malformed(_))));
        assert_eq!(Money::parse("1000000000.01", eur), Err(MoneyError::OutOfRange));
        assert_eq!(Money::parse("1000000001", jpy), Err(MoneyError::OutOfRange));
        assert_eq!(Money::parse("-99999999999999999999999", eur), Err(MoneyError::OutOfRange));
    }

    #[test]
    fn money_format() {
        let eur = Currency::EUR;
        assert_eq!(Money::new(1299, eur).to_decimal_string(), "12.99");
        assert_eq!(Money::new(-350, eur).to_decimal_string(), "-3.50");
        assert_eq!(Money::new(5, eur).to_decimal_string(), "0.05");
        assert_eq!(Money::new(-5, eur).to_decimal_string(), "-0.05");
        assert_eq!(Money::new(500, Currency::JPY).to_decimal_string(), "500");
        assert_eq!(Money::new(1250, cur("KWD")).to_decimal_string(), "1.250");
        assert_eq!(Money::new(i64::MIN, eur).to_decimal_string(), "-92233720368547758.08");
        assert_eq!(Money::new(1299, eur).display(), "€12.99");
        assert_eq!(Money::new(-350, eur).display(), "-€3.50");
        assert_eq!(Money::new(500, Currency::JPY).display(), "¥500");
        assert_eq!(Money::new(123_456, eur).display(), "€1,234.56");
        assert_eq!(Money::new(100_000_000_000, Currency::USD).display(), "$1,000,000,000.00");
        assert_eq!(Money::new(1299, cur("SEK")).display(), "12.99 SEK");
        assert_eq!(Money::new(-123_456_700, cur("SEK")).display(), "-1,234,567.00 SEK");
        assert_eq!(Money::new(1299, cur("CHF")).display(), "CHF 12.99");
        assert_eq!(Money::new(0, eur).display(), "€0.00");
    }

    #[test]
    fn money_roundtrip() {
        for code in ["EUR", "JPY", "KWD", "CLF"] {
            let c = cur(code);
            for minor in [0, 1, -1, 9, 10, 99, 100, 12345, -987_654_321] {
                let m = Money::new(minor, c);
                assert_eq!(Money::parse(&m.to_decimal_string(), c).unwrap(), m);
            }
        }
    }

    #[test]
    fn money_arithmetic() {
        let a = Money::new(100, Currency::EUR);
        assert_eq!(a.checked_add(a), Some(Money::new(200, Currency::EUR)));
        assert_eq!(
            a.checked_sub(Money::new(300, Currency::EUR)),
            Some(Money::new(-200, Currency::EUR))
        );
        assert_eq!(a.checked_add(Money::new(1, Currency::USD)), None);
        assert_eq!(a.checked_sub(Money::new(1, Currency::USD)), None);
        assert_eq!(Money::new(i64::MAX, Currency::EUR).checked_add(a), None);
    }

    #[test]
    fn conversion() {
        let (eur, usd, jpy, kwd) = (Currency::EUR, Currency::USD, Currency::JPY, cur("KWD"));
        assert_eq!(convert(1000, eur, usd, 1_080_000), Some(1080));
        assert_eq!(convert(1299, eur, usd, 1_080_000), Some(1403)); // 14.0292
        assert_eq!(convert(-1299, eur, usd, 1_080_000), Some(-1403));
        assert_eq!(convert(1000, eur, jpy, 160_000_000), Some(1600));
        assert_eq!(convert(1600, jpy, eur, 6_250), Some(1000));
        assert_eq!(convert(1000, usd, kwd, 307_000), Some(3070));
        // Half away from zero: 0.5 cent.
        assert_eq!(convert(1, eur, usd, 500_000), Some(1));
        assert_eq!(convert(-1, eur, usd, 500_000), Some(-1));
        assert_eq!(convert(1, eur, usd, 499_999), Some(0));
        assert_eq!(convert(1, eur, usd, 0), None);
        assert_eq!(convert(1, eur, usd, -5), None);
        assert_eq!(convert(i64::MAX, eur, jpy, i64::MAX), None);
        assert_eq!(convert(123, eur, eur, 1_000_000), Some(123));
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("1.08"), Ok(1_080_000));
        assert_eq!(parse_rate("150"), Ok(150_000_000));
        assert_eq!(parse_rate("0.000001"), Ok(1));
        assert_eq!(parse_rate(" 2.5 "), Ok(2_500_000));
        assert_eq!(parse_rate("999999.999999"), Ok(999_999_999_999));
        assert_eq!(parse_rate("0"), Err(MoneyError::OutOfRange));
        assert_eq!(parse_rate("0.000000"), Err(MoneyError::OutOfRange));
        assert_eq!(parse_rate("1000000"), Err(MoneyError::OutOfRange));
        assert_eq!(parse_rate("123456789012"), Err(MoneyError::OutOfRange));
        for bad in ["", "-1", "+1", "1.", ".5", "1.0000001", "1,08", "abc", "1e3"] {
            assert!(matches!(parse_rate(bad), Err(MoneyError::Malformed(_))), "{bad:?}");
        }
        assert_eq!(format_rate(1_080_000), "1.08");
        assert_eq!(format_rate(150_000_000), "150");
        assert_eq!(format_rate(1), "0.000001");
        assert_eq!(format_rate(-2_500_000), "-2.5");
        for r in [1, 7, 1_080_000, 150_000_000, 999_999_999_999, 123_456] {
            assert_eq!(parse_rate(&format_rate(r)), Ok(r));
        }
    }

    #[test]
    fn long_input_is_shortened_in_errors() {
        let long = "x".repeat(500);
        let MoneyError::Malformed(s) = Money::parse(&long, Currency::EUR).unwrap_err() else {
            panic!()
        };
        assert_eq!(s.chars().count(), 41);
    }

    #[test]
    fn a_decimal_is_written_back_as_read_and_checked_in_its_currency() {
        for text in ["12.99", "-3.5", "500", "0.0001", "1000000000", "12.50"] {
            assert_eq!(Decimal::parse(text).unwrap().to_string(), text);
        }
        assert_eq!(Decimal::parse("007.10").unwrap().to_string(), "7.10");
        assert_eq!(Decimal::parse("12.50").unwrap().in_currency(cur("EUR")).unwrap().minor(), 1250);
        assert_eq!(
            Decimal::parse("-1.250").unwrap().in_currency(cur("KWD")).unwrap().minor(),
            -1250
        );
        assert_eq!(
            Decimal::parse("1.2345").unwrap().in_currency(cur("CLF")).unwrap().minor(),
            12345
        );
        assert_eq!(
            Decimal::parse("1.5").unwrap().in_currency(cur("JPY")),
            Err(MoneyError::TooManyDecimals { currency: cur("JPY"), max: 0 })
        );
        assert_eq!(Decimal::parse("1.23456"), Err(MoneyError::TooPrecise));
        assert_eq!(Decimal::parse("1000000000.0001"), Err(MoneyError::OutOfRange));
        for bad in ["", "-", "1.", ".5", "1,000", "+1", "1e3", " 1", "--1"] {
            assert!(matches!(Decimal::parse(bad), Err(MoneyError::Malformed(_))), "{bad}");
        }
        assert!(Decimal::parse("-0.01").unwrap().is_negative());
        let exact = Decimal::parse("12.990").unwrap().without_trailing_zeros();
        assert_eq!(
            (exact.to_string(), exact.in_currency(cur("USD")).unwrap().minor()),
            ("12.99".into(), 1299)
        );
        assert_eq!(Decimal::parse("7.000").unwrap().without_trailing_zeros().to_string(), "7");
        assert_eq!(
            Decimal::parse("0.0105").unwrap().without_trailing_zeros().to_string(),
            "0.0105"
        );
        assert!(!Decimal::parse("-0").unwrap().is_negative());
        let money = Money::new(-1250, cur("KWD"));
        assert_eq!(Decimal::from(money).to_string(), money.to_decimal_string());
        assert_eq!(Decimal::from(Money::new(500, cur("JPY"))).to_string(), "500");
    }
}
