//! Schemathesis, from PyPI (installed by `scripts/test`), against `openapi.json` of the real
//! server, with every check and a bounded budget: no server error, no response outside its
//! schema, no invalid request accepted, and every valid-by-schema request the server refuses is
//! refused for a reason JSON Schema cannot state. Those reasons are few and named
//! (`tests/schemathesis/refusals.json`): a refusal is allowed only at an op's field listed
//! there with its kind, read from the problem the server answered (`invalid_input` and its
//! pointer), so a new rule the schema could state fails this test until the schema states it.
//! `SCHEMATHESIS_EXAMPLES` raises the budget (the default keeps the run near a minute).

use std::{collections::BTreeMap, path::PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::fixtures::World;

/// The refusals JSON Schema cannot prevent, by op and field, each with its kind.
#[derive(Deserialize)]
struct Refusals {
    /// Why each kind cannot be a schema keyword.
    kinds: BTreeMap<String, String>,
    refusals: Vec<Refusal>,
}

#[derive(Deserialize)]
struct Refusal {
    op: String,
    /// The field's JSON pointer, `*` for any array index or map key.
    pointer: String,
    kind: String,
}

/// One check schemathesis did not pass.
#[derive(Debug)]
struct Finding {
    check: String,
    op: String,
    status: u64,
    body: Value,
    request: String,
}

impl Finding {
    /// The pointer of an `invalid_input` problem with every index or key a `*`.
    fn pointer(&self) -> Option<String> {
        if self.body["code"] != "invalid_input" {
            return None;
        }
        let pointer = self.body["pointer"].as_str()?;
        let mut general = String::new();
        let mut in_map = false;
        for segment in pointer.split('/').skip(1) {
            let any = in_map || segment.bytes().all(|b| b.is_ascii_digit());
            general.push('/');
            general.push_str(if any { "*" } else { segment });
            // Maps keyed by what a client chooses (a currency's rate) list their keys as `*`.
            in_map = segment == "exchange_rates";
        }
        Some(general)
    }
}

/// Every check that did not pass, from schemathesis' event stream (`--report ndjson`).
fn findings(events: &str) -> Result<Vec<Finding>, serde_json::Error> {
    let decode = |field: &Value| -> String {
        field["$base64"]
            .as_str()
            .and_then(statement::decode_base64)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default()
    };
    let mut found = Vec::new();
    for line in events.lines() {
        let event: Value = serde_json::from_str(line)?;
        let finished = &event["ScenarioFinished"];
        let recorder = &finished["recorder"];
        if finished["status"] == "error" {
            found.push(Finding {
                check: "error".into(),
                op: recorder["label"].as_str().unwrap_or_default().to_owned(),
                status: 0,
                body: finished.clone(),
                request: String::new(),
            });
        }
        let Some(checks) = recorder["checks"].as_object() else { continue };
        for (case, checks) in checks {
            for check in checks.as_array().into_iter().flatten() {
                if check["status"] == "success" {
                    continue;
                }
                let interaction = &recorder["interactions"][case];
                let uri = interaction["request"]["uri"].as_str().unwrap_or_default();
                let path = uri.split('?').next().unwrap_or_default();
                let body = decode(&interaction["response"]["content"]);
                found.push(Finding {
                    check: check["name"].as_str().unwrap_or_default().to_owned(),
                    op: path.rsplit('/').next().unwrap_or_default().to_owned(),
                    status: interaction["response"]["status_code"].as_u64().unwrap_or_default(),
                    body: serde_json::from_str(&body).unwrap_or(Value::String(body)),
                    request: format!("{uri} {}", decode(&interaction["request"]["body"])),
                });
            }
        }
    }
    Ok(found)
}

#[tokio::test]
#[expect(
    clippy::disallowed_methods,
    reason = "the budget is the test's own knob, not configuration"
)]
async fn schemathesis_finds_no_server_error_and_the_schema_states_every_rule_it_can() {
    let w = World::new().await;
    // An agent that may write without asking, so writes run; no rate limit, so all of them do.
    let (token, _) = w.env.token(&w.ana, "trusted").await;
    w.env.app.set_token_rate_limit(None);
    let server = w.env.serve().await;
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/schemathesis"));
    let events = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("schemathesis-events.ndjson");
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
        .args(["--continue-on-failure", "--report", "ndjson", "--report-ndjson-path"])
        .arg(&events)
        .env("SCHEMATHESIS_HOOKS", "")
        .current_dir(env!("CARGO_TARGET_TMPDIR"));
    let output = command.output().await.expect("python3 runs (scripts/test installs schemathesis)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let summary = stdout.rsplit_once("SUMMARY").map_or(stdout.as_ref(), |(_, s)| s);
    println!("{summary}");
    let events = std::fs::read_to_string(&events).unwrap_or_else(|err| {
        panic!(
            "schemathesis wrote no events ({err}):\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    });

    let known: Refusals =
        serde_json::from_str(&std::fs::read_to_string(dir.join("refusals.json")).unwrap())
            .expect("refusals.json reads");
    for refusal in &known.refusals {
        assert!(
            known.kinds.contains_key(&refusal.kind),
            "no kind {:?} in refusals.json",
            refusal.kind
        );
    }
    let mut by_kind: BTreeMap<&str, usize> = BTreeMap::new();
    let mut unexplained = Vec::new();
    let findings = findings(&events).expect("schemathesis writes JSON lines");
    for finding in &findings {
        let refusal = (finding.check == "positive_data_acceptance" && finding.status == 400)
            .then(|| finding.pointer())
            .flatten()
            .and_then(|pointer| {
                known.refusals.iter().find(|r| r.op == finding.op && r.pointer == pointer)
            });
        match refusal {
            Some(refusal) => *by_kind.entry(&refusal.kind).or_default() += 1,
            None => unexplained.push(finding),
        }
    }
    println!(
        "{} refusals of valid-by-schema requests, all of a kind a schema cannot state:",
        findings.len() - unexplained.len()
    );
    for (kind, count) in &by_kind {
        println!("  {count:>5}  {kind}");
    }
    assert!(
        unexplained.is_empty(),
        "schemathesis found {} failures that are not refusals refusals.json explains \
         (state the rule in the schema, or fix the server):\n{}",
        unexplained.len(),
        unexplained
            .iter()
            .take(40)
            .map(|f| format!(
                "- {} on {} ({}): {} <- {}",
                f.check,
                f.op,
                f.status,
                f.body,
                domain::validate::shorten(&f.request, 300)
            ))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        output.status.success() || !findings.is_empty(),
        "schemathesis failed without a finding:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
