//! The install guides' files, checked by the tools that read them: the systemd unit of
//! `docs/install/systemd.md` by `systemd-analyze` (`scripts/test` installs Debian's systemd
//! where it is missing), with the real binary as its command.

use std::process::Command;

/// The unit as the guide gives it, with `ExecStart` at the binary the tests built.
fn systemd_unit() -> String {
    let guide = include_str!("../../../../docs/install/systemd.md");
    let unit = guide.split("```ini\n").nth(1).unwrap().split("```").next().unwrap();
    assert!(unit.contains("ExecStart=/usr/local/bin/exhale serve\n"), "{unit}");
    unit.replace("/usr/local/bin/exhale", env!("CARGO_BIN_EXE_exhale"))
}

fn systemd_analyze(args: &[&str]) -> (bool, String, String) {
    let output = Command::new("systemd-analyze")
        .args(args)
        .output()
        .unwrap_or_else(|err| panic!("systemd-analyze runs (scripts/test installs it): {err}"));
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (output.status.success(), text(&output.stdout), text(&output.stderr))
}

#[test]
fn the_systemd_unit_of_the_guide_verifies_and_keeps_its_sandbox() {
    let dir = test_support::DataDir::sqlite();
    let path = dir.path().join("exhale.service");
    std::fs::write(&path, systemd_unit()).unwrap();
    let path = path.to_str().unwrap();

    // Every directive known and well formed (an unknown key is only a warning: none here).
    let (verified, _, warnings) = systemd_analyze(&["verify", "--man=no", path]);
    assert!(verified && warnings.trim().is_empty(), "{warnings}");

    // systemd's own measure of what the service may reach: at most 2.0 of 10 ("OK").
    let (kept, review, _) =
        systemd_analyze(&["security", "--offline=true", "--threshold=20", path]);
    let level = review
        .lines()
        .find_map(|line| line.split("Overall exposure level for exhale.service: ").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|level| level.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("{review}"));
    assert!(kept && level <= 2.0, "exposure {level}:\n{review}");
}
