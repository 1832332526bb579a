//! A provider's amount in minor units: what every provider's reader shares.

use ops::common::{CurrencyCode, SignedAmount};

/// `text` in `currency`'s minor units, or why not (never rounded).
/// A provider writes values exactly: "12.990" is 12.99, while "12.999" in USD is refused.
pub(crate) fn minor(text: &str, currency: CurrencyCode) -> Result<i64, String> {
    let amount: SignedAmount = text.parse().map_err(|err| format!("{err}"))?;
    amount
        .decimal()
        .without_trailing_zeros()
        .in_currency(currency.currency())
        .map(|money| money.minor())
        .map_err(|err| format!("{err}"))
}
