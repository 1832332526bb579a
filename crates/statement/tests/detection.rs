//! Detection on the generated exports (five bank styles, several households): precision and
//! recall must both stay at 0.95 or better. `cargo run -p statement --example eval` prints
//! the figures and what was missed or invented.

#![expect(clippy::unwrap_used, reason = "tests fail by panicking")]

mod fixtures;

#[test]
fn detection_finds_the_subscriptions_in_every_bank_style() {
    let (hits, reported, expected) = fixtures::evaluate(4);
    let precision = hits as f64 / reported.max(1) as f64;
    let recall = hits as f64 / expected as f64;
    assert!(
        precision >= 0.95 && recall >= 0.95,
        "precision {precision:.3} ({hits}/{reported}), recall {recall:.3} ({hits}/{expected})"
    );
}
