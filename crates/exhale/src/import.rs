//! `exhale import FILE`: read a bank export with `parse_statement`, show the review list in
//! the terminal, and with `--apply` import the proposed ones with `import_subscriptions`.

use std::{path::Path, process::ExitCode};

use anyhow::Context as _;
use ops::{
    Caller, Mode,
    import::{
        ImportSubscriptions, ImportSubscriptionsInput, MAX_STATEMENT_BYTES, ParseStatement,
        ParseStatementInput,
    },
};

pub(crate) async fn run(
    app: &app::App,
    caller: &Caller,
    path: &Path,
    apply: bool,
    min_confidence: Option<f64>,
) -> anyhow::Result<ExitCode> {
    let size =
        std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?.len();
    if size > MAX_STATEMENT_BYTES as u64 {
        eprintln!(
            "{} is {size} bytes; statements up to {MAX_STATEMENT_BYTES} bytes are read. Export a shorter period.",
            path.display()
        );
        return Ok(ExitCode::from(1));
    }
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut input = ParseStatementInput { min_confidence, ..Default::default() };
    match String::from_utf8(bytes) {
        Ok(text) => input.content = Some(text),
        Err(err) => input.content_base64 = Some(ops::import::encode_base64(err.as_bytes())),
    }
    let parsed = match ops::call::<ParseStatement>(app, caller, &input, Mode::Apply).await {
        Ok(parsed) => parsed,
        Err(err) => {
            eprintln!("{}: {}", err.code(), err.text().render());
            return Ok(ExitCode::from(1));
        }
    };
    println!("Read {} transactions ({}).", parsed.transaction_count, parsed.notes.join("; "));
    for problem in &parsed.problems {
        println!("  line {}: {}", problem.line, problem.message);
    }
    println!("\n{} recurring charges ( + will be imported):", parsed.candidates.len());
    for candidate in &parsed.candidates {
        let mark = if candidate.proposed { "+" } else { " " };
        let mut why = match (&candidate.existing, candidate.active) {
            (Some(existing), _) => format!("  already: {}", existing.name),
            (None, false) => "  stopped".to_owned(),
            (None, true) => String::new(),
        };
        if candidate.amount_varies {
            why.push_str("  amount varies (median of the last three)");
        }
        println!(
            " {mark} {:<28} {:>10} {:<16} next {}  confidence {:.2}{why}",
            candidate.name,
            candidate.amount.display,
            candidate.cycle,
            candidate.next_expected_on,
            candidate.confidence,
        );
    }
    let items: Vec<_> = parsed
        .candidates
        .iter()
        .filter(|candidate| candidate.proposed)
        .map(|candidate| candidate.import_item())
        .collect();
    if items.is_empty() {
        println!("\nNothing new to import.");
        return Ok(ExitCode::SUCCESS);
    }
    if !apply {
        println!(
            "\nNothing was imported. Run again with --apply to import the {} marked +.",
            items.len()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let input = ImportSubscriptionsInput { items };
    match ops::call_write::<ImportSubscriptions>(app, caller, &input, Mode::Apply).await {
        Ok(result) => {
            let created: Vec<&str> =
                result.output.created.iter().map(|c| c.name.as_str()).collect();
            println!(
                "\nImported {}: {}. `exhale op undo --json '{{\"batch_id\": \"{}\"}}'` takes them all back.",
                created.len(),
                created.join(", "),
                result.receipt.batch_id.unwrap_or_default()
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(err) => {
            eprintln!("{}: {}", err.code(), err.text().render());
            Ok(ExitCode::from(1))
        }
    }
}
