//! Precision and recall of recurring-charge detection on the generated bank exports, and
//! what was missed or invented, per style. `--write DIR` also writes the files out.
//!
//! Run: `cargo run -p statement --example eval [-- --households N] [--show N] [--write DIR]`.

#![expect(clippy::print_stdout, clippy::unwrap_used, reason = "a command-line report")]

#[path = "../tests/fixtures/mod.rs"]
mod fixtures;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| args.iter().skip_while(|a| *a != flag).nth(1).cloned();
    let households: u64 = value("--households").and_then(|n| n.parse().ok()).unwrap_or(10);
    if let Some(dir) = value("--write") {
        std::fs::create_dir_all(&dir).unwrap();
        let (rows, truth) = fixtures::household(1);
        for style in fixtures::STYLES {
            std::fs::write(format!("{dir}/statement-{style}.csv"), fixtures::export(style, &rows))
                .unwrap();
        }
        let truth: Vec<String> = truth
            .iter()
            .map(|t| format!("{}\t{}\t{}", t.merchant, t.cycle, t.amount_minor))
            .collect();
        std::fs::write(format!("{dir}/truth.tsv"), truth.join("\n") + "\n").unwrap();
        println!("wrote {} files and truth.tsv to {dir}", fixtures::STYLES.len());
    }
    let eur = domain::money::Currency::parse("EUR").unwrap();
    let show: u64 = value("--show").and_then(|n| n.parse().ok()).unwrap_or(1);
    for (seed, style) in
        (1..=show).flat_map(|seed| fixtures::STYLES.iter().map(move |style| (seed, style)))
    {
        let (rows, truth) = fixtures::household(seed);
        let statement = statement::read(&fixtures::export(style, &rows), eur).unwrap();
        let found: Vec<_> = statement::recurring::detect(&statement.transactions)
            .into_iter()
            .filter(|c| c.active)
            .collect();
        let keys: Vec<String> = truth
            .iter()
            .map(|t| {
                format!("{} {} {}", statement::merchant::key(t.merchant), t.cycle, t.amount_minor)
            })
            .collect();
        let got: Vec<String> = found
            .iter()
            .map(|c| format!("{} {} {}", c.merchant, c.cycle, c.amount_minor))
            .collect();
        let missed: Vec<&String> = keys.iter().filter(|k| !got.contains(k)).collect();
        let invented: Vec<&String> = got.iter().filter(|g| !keys.contains(g)).collect();
        println!(
            "household {seed} {style:<14} {} transactions, {} problems; missed {missed:?}; invented {invented:?}",
            statement.transactions.len(),
            statement.problems.len()
        );
    }
    let (hits, reported, expected) = fixtures::evaluate(households);
    println!(
        "\n{households} households x {} styles: precision {:.3} ({hits}/{reported}), recall {:.3} ({hits}/{expected})",
        fixtures::STYLES.len(),
        hits as f64 / reported.max(1) as f64,
        hits as f64 / expected as f64
    );
}
