//! Schemathesis, from PyPI (installed by `scripts/test`), against `openapi.json` of the real
//! server, with every check and a bounded budget: no server error, no response outside its
//! schema, and the schema and the handlers agree on what is valid. The disagreements left are
//! listed, each with its reason, in `tests/schemathesis/baseline.json`; anything new fails.
//! `SCHEMATHESIS_EXAMPLES` raises the budget (the default keeps the run under a minute);
//! `SCHEMATHESIS_BASELINE_UPDATE=1` merges this run's failures into the baseline, for review.

use std::path::PathBuf;

use crate::fixtures::World;

#[tokio::test]
#[expect(
    clippy::disallowed_methods,
    reason = "the budget is the test's own knob, not configuration"
)]
async fn schemathesis_finds_no_server_error_and_no_new_disagreement() {
    let w = World::new().await;
    // An agent that may write without asking, so writes run; no rate limit, so all of them do.
    let (token, _) = w.env.token(&w.ana, "trusted").await;
    w.env.app.set_token_rate_limit(None);
    let server = w.env.serve().await;
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/schemathesis"));
    let examples = std::env::var("SCHEMATHESIS_EXAMPLES").unwrap_or_else(|_| "25".into());
    let mut command = tokio::process::Command::new("python3");
    command
        .args([
            "-c",
            "import sys; from schemathesis.cli import schemathesis; sys.exit(schemathesis())",
        ])
        .arg("--config-file")
        .arg(dir.join("schemathesis.toml"))
        .arg("run")
        .arg(server.url("/api/v1/openapi.json"))
        .args(["--header", &format!("Authorization: Bearer {token}")])
        .args(["--checks", "all", "--max-examples", &examples, "--seed", "1"])
        .args(["--workers", "1", "--no-color", "--generation-database", "none"])
        .arg("--baseline")
        .arg(dir.join("baseline.json"))
        .args(std::env::var_os("SCHEMATHESIS_BASELINE_UPDATE").map(|_| "--baseline-update"))
        .env("SCHEMATHESIS_HOOKS", "")
        .current_dir(env!("CARGO_TARGET_TMPDIR"));
    let output = command.output().await.expect("python3 runs (scripts/test installs schemathesis)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let summary = stdout.rsplit_once("SUMMARY").map_or(stdout.as_ref(), |(_, s)| s);
    println!("{summary}");
    assert!(
        output.status.success(),
        "schemathesis found failures not in the baseline:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
