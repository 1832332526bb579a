//! What a call cost, estimated from its [`Usage`] and a model's prices, in whole millionths of
//! a US dollar (llm.md section 5).
//!
//! Prices are per million tokens, in millionths of a dollar, one per kind of token (uncached
//! input, cache reads, cache writes, output), so an integer holds every list price exactly. A
//! provider that reports the cost itself (OpenRouter, in dollars) is believed over the table. A
//! model with no price has tokens and no cost: a cost is never invented. Where the prices come
//! from (a table the owner can override per model) is the settings' business.

pub use ops::assistant::ModelPrice as Price;

use super::Usage;

/// The call's cost in millionths of a dollar, or `None` when neither the provider nor a price
/// says. Fractions of a millionth are rounded up per call, so a total never under-counts.
pub fn estimate(usage: &Usage, price: Option<&Price>) -> Option<u64> {
    if let Some(dollars) = usage.reported_cost.filter(|d| d.is_finite() && *d >= 0.0) {
        // The provider's own figure, to the nearest millionth.
        return Some((dollars * 1_000_000.0).round() as u64);
    }
    let price = price?;
    let pairs = [
        (usage.input, price.input),
        (usage.cache_read, price.cache_read),
        (usage.cache_write, price.cache_write),
        (usage.output, price.output),
    ];
    let tokens_times_price = pairs.iter().try_fold(0u128, |sum, (tokens, per_million)| {
        sum.checked_add(u128::from(*tokens) * u128::from(*per_million))
    })?;
    u64::try_from(tokens_times_price.div_ceil(1_000_000)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, cache_read: u64, cache_write: u64, output: u64) -> Usage {
        Usage { input, cache_read, cache_write, output, ..Usage::default() }
    }

    #[test]
    fn each_kind_of_token_is_priced_and_fractions_round_up() {
        // $3 in, $0.30 cache reads, $3.75 cache writes, $15 out, per million tokens.
        let price = Price {
            model: "m".into(),
            input: 3_000_000,
            cache_read: 300_000,
            cache_write: 3_750_000,
            output: 15_000_000,
        };
        assert_eq!(estimate(&usage(1_000_000, 0, 0, 0), Some(&price)), Some(3_000_000));
        // 900 × 3 + 100 × 0.3 + 20 × 3.75 + 57 × 15 = 2,700 + 30 + 75 + 855 millionths.
        assert_eq!(estimate(&usage(900, 100, 20, 57), Some(&price)), Some(3_660));
        // One input token at $3 per million is three millionths; at $0.10, a tenth rounds up.
        let cheap =
            Price { model: "m".into(), input: 100_000, cache_read: 0, cache_write: 0, output: 0 };
        assert_eq!(estimate(&usage(1, 0, 0, 0), Some(&cheap)), Some(1));
        assert_eq!(estimate(&usage(0, 0, 0, 0), Some(&cheap)), Some(0));
    }

    #[test]
    fn the_providers_figure_wins_and_no_price_means_no_cost() {
        let price =
            Price { model: "m".into(), input: 3_000_000, cache_read: 0, cache_write: 0, output: 0 };
        let reported = Usage { reported_cost: Some(0.0012), ..usage(1_000_000, 0, 0, 0) };
        assert_eq!(estimate(&reported, Some(&price)), Some(1_200));
        assert_eq!(estimate(&usage(5_000, 0, 0, 200), None), None);
        let nonsense = Usage { reported_cost: Some(f64::NAN), ..usage(10, 0, 0, 0) };
        assert_eq!(estimate(&nonsense, None), None);
        let huge = usage(u64::MAX, u64::MAX, u64::MAX, u64::MAX);
        let dear = Price {
            model: "m".into(),
            input: u64::MAX,
            cache_read: u64::MAX,
            cache_write: u64::MAX,
            output: u64::MAX,
        };
        assert_eq!(
            estimate(&huge, Some(&dear)),
            None,
            "too large for a u64 is no figure, not a wrap"
        );
    }
}
