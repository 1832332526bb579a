//! `exhale import FILE`: read a bank export with `parse_statement`, show the review list in
//! the terminal, and with `--apply` import the proposed ones with `import_subscriptions`.

use std::{path::Path, process::ExitCode};

use anyhow::Context as _;
use ops::{Caller, Catalog as _, Mode, import::MAX_STATEMENT_BYTES};
use serde_json::{Value, json};

/// Whether a candidate is proposed for import: active, new, and confident enough.
fn proposed(candidate: &Value, min_confidence: f64) -> bool {
    candidate["active"] == true
        && candidate["existing"].is_null()
        && candidate["confidence"].as_f64().unwrap_or(0.0) >= min_confidence
}

pub(crate) async fn run(
    app: &app::App,
    caller: &Caller,
    path: &Path,
    apply: bool,
    min_confidence: f64,
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
    let input = match String::from_utf8(bytes) {
        Ok(text) => json!({"content": text}),
        Err(err) => json!({"content_base64": ops::import::encode_base64(err.as_bytes())}),
    };
    let parsed = match app.call_json(caller, "parse_statement", input, Mode::Apply).await {
        Ok(parsed) => parsed,
        Err(err) => {
            eprintln!("{}: {}", err.code(), err.text().render());
            return Ok(ExitCode::from(1));
        }
    };
    let notes: Vec<&str> =
        parsed["notes"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    println!("Read {} transactions ({}).", parsed["transaction_count"], notes.join("; "));
    for problem in parsed["problems"].as_array().into_iter().flatten() {
        println!("  line {}: {}", problem["line"], problem["message"].as_str().unwrap_or_default());
    }
    let candidates = parsed["candidates"].as_array().cloned().unwrap_or_default();
    println!("\n{} recurring charges ( + will be imported):", candidates.len());
    for candidate in &candidates {
        let mark = if proposed(candidate, min_confidence) { "+" } else { " " };
        let why = if !candidate["existing"].is_null() {
            format!("  already: {}", candidate["existing"]["name"].as_str().unwrap_or_default())
        } else if candidate["active"] != true {
            "  stopped".to_owned()
        } else {
            String::new()
        };
        println!(
            " {mark} {:<28} {:>10} {:<16} next {}  confidence {:.2}{why}",
            candidate["name"].as_str().unwrap_or_default(),
            candidate["amount"]["display"].as_str().unwrap_or_default(),
            candidate["cycle"].as_str().unwrap_or_default(),
            candidate["next_expected_on"].as_str().unwrap_or_default(),
            candidate["confidence"].as_f64().unwrap_or_default(),
        );
    }
    let items: Vec<Value> = candidates
        .iter()
        .filter(|c| proposed(c, min_confidence))
        .map(|c| {
            json!({
                "name": c["name"],
                "amount": c["amount"]["amount"],
                "currency": c["amount"]["currency"],
                "cycle": c["cycle"],
                "category_id": c["category"]["id"],
                "charges": c["charges"].as_array().into_iter().flatten()
                    .map(|charge| json!({"date": charge["date"], "amount": charge["amount"]["amount"]}))
                    .collect::<Vec<_>>(),
            })
        })
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
    match app.call_json(caller, "import_subscriptions", json!({"items": items}), Mode::Apply).await
    {
        Ok(result) => {
            let created: Vec<&str> = result["created"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["name"].as_str())
                .collect();
            println!(
                "\nImported {}: {}. `exhale op undo --json '{{\"batch_id\": \"{}\"}}'` takes them all back.",
                created.len(),
                created.join(", "),
                result["batch_id"].as_str().unwrap_or_default()
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(err) => {
            eprintln!("{}: {}", err.code(), err.text().render());
            Ok(ExitCode::from(1))
        }
    }
}
