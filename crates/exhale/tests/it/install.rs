//! The install guides' files, checked by the tools that read them: the systemd unit of
//! `docs/install/systemd.md` by `systemd-analyze` (`scripts/test` installs Debian's systemd
//! where it is missing), with the real binary as its command; and the container image of the
//! `Containerfile`, built by Debian's podman from the binary the tests built, then run from
//! its own file system with `chroot` as the image's user (no base image can be pulled here).

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

/// `podman` on an image store of the test's own, removed with it, so that nothing of the
/// machine's own images is touched.
struct Podman {
    dir: std::path::PathBuf,
}

impl Podman {
    fn run(&self, args: &[&str]) -> String {
        let output = Command::new("podman")
            .arg("--root")
            .arg(self.dir.join("storage"))
            .arg("--runroot")
            .arg(self.dir.join("run"))
            .args(args)
            .output()
            .unwrap_or_else(|err| panic!("podman runs (scripts/test installs it): {err}"));
        assert!(
            output.status.success(),
            "podman {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    }
}

impl Drop for Podman {
    fn drop(&mut self) {
        let _ = Command::new("podman")
            .arg("--root")
            .arg(self.dir.join("storage"))
            .arg("--runroot")
            .arg(self.dir.join("run"))
            .args(["system", "reset", "--force"])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `/proc` mounted in a file system while it lives, as a container runtime would: the
/// server finds its own program there, to read a PDF in a process of its own.
struct Proc(std::path::PathBuf);

impl Proc {
    fn mount(root: &std::path::Path) -> Self {
        let at = root.join("proc");
        std::fs::create_dir_all(&at).unwrap();
        let mounted = Command::new("mount").args(["-t", "proc", "proc"]).arg(&at).status().unwrap();
        assert!(
            mounted.success(),
            "mount /proc in the image's file system (the test runs as root)"
        );
        Self(at)
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// `exhale ARGS` inside `root` as the image's user, with only the image's environment and
/// `extra`.
fn in_image(
    root: &std::path::Path,
    env: &[String],
    extra: &[(&str, &str)],
    args: &[&str],
) -> Command {
    let mut command = Command::new("/usr/sbin/chroot");
    command
        .arg("--userspec=10001:10001")
        .arg(root)
        .arg("/usr/local/bin/exhale")
        .args(args)
        .env_clear()
        .envs(env.iter().filter_map(|pair| pair.split_once('=')))
        .envs(extra.iter().copied());
    command
}

#[tokio::test]
async fn the_container_image_holds_only_exhale_and_serves_from_its_own_file_system() {
    use std::{io::BufRead as _, os::unix::fs::MetadataExt as _};
    let dir = test_support::DataDir::sqlite();
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let context = dir.path().join("context");
    let laid_out = Command::new(repo.join("scripts/container-rootfs"))
        .arg(context.join("rootfs"))
        .arg(env!("CARGO_BIN_EXE_exhale"))
        .status()
        .unwrap();
    assert!(laid_out.success());

    // The Containerfile's own image, from the binary the tests built: no base image to pull.
    // podman wants its run directory's path under 50 characters.
    let podman =
        Podman { dir: std::env::temp_dir().join(format!("exhale-podman-{}", std::process::id())) };
    let image = format!("localhost/exhale-check:{}", std::process::id());
    let containerfile = repo.join("Containerfile");
    podman.run(&[
        "build",
        "--format",
        "docker",
        "--build-arg",
        "ROOTFS=context",
        "-f",
        containerfile.to_str().unwrap(),
        "-t",
        &image,
        context.to_str().unwrap(),
    ]);
    let inspected: serde_json::Value =
        serde_json::from_str(&podman.run(&["image", "inspect", "--format", "json", &image]))
            .unwrap();
    let config = &inspected[0]["Config"];
    assert_eq!(config["User"], "10001:10001", "{config}");
    assert!(config["ExposedPorts"]["8080/tcp"].is_object(), "{config}");
    assert!(config["Volumes"]["/data"].is_object(), "{config}");
    assert_eq!(config["Entrypoint"], serde_json::json!(["/usr/local/bin/exhale"]));
    assert_eq!(config["Cmd"], serde_json::json!(["serve"]));
    let env: Vec<String> = config["Env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pair| pair.as_str().unwrap().to_owned())
        .collect();
    for wanted in ["EXHALE_DATA_DIR=/data", "EXHALE_LISTEN=0.0.0.0:8080"] {
        assert!(env.iter().any(|pair| pair == wanted), "{env:?}");
    }
    let health = &inspected[0]["Healthcheck"]["Test"];
    assert_eq!(health, &serde_json::json!(["CMD", "/usr/local/bin/exhale", "healthcheck"]));

    // Its file system, as the image holds it: Exhale, the libraries it links, three files of
    // /etc, and the data directory the server's user owns. No shell.
    let mounted = podman.run(&["image", "mount", &image]);
    let root = dir.path().join("image");
    let copied = Command::new("cp").arg("-a").arg(mounted.trim()).arg(&root).status().unwrap();
    assert!(copied.success());
    podman.run(&["image", "unmount", &image]);
    let files: Vec<String> = walk(&root)
        .into_iter()
        .map(|path| path.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    assert!(files.contains(&"usr/local/bin/exhale".to_owned()), "{files:?}");
    for file in &files {
        let allowed = file == "usr/local/bin/exhale"
            || file.starts_with("lib")
            || ["etc/passwd", "etc/group", "etc/nsswitch.conf"].contains(&file.as_str());
        assert!(allowed, "the image holds {file}: {files:?}");
    }
    assert!(files.len() <= 10, "{files:?}");
    assert_eq!(std::fs::metadata(root.join("data")).unwrap().uid(), 10001);

    // Run as the image runs it (its user, its environment), on a free port of this machine.
    let _proc = Proc::mount(&root);
    let mut server = in_image(&root, &env, &[("EXHALE_LISTEN", "127.0.0.1:0")], &["serve"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(server.stdout.take().unwrap()).lines();
    let mut said = Vec::new();
    while said.len() < 4 {
        said.push(lines.next().unwrap().unwrap());
    }
    std::thread::spawn(move || lines.for_each(drop));
    let url = said[0].strip_prefix("Exhale is listening on ").unwrap_or_else(|| panic!("{said:?}"));
    assert_eq!(said[1], "Data: /data/exhale.db");
    let setup = said[3].trim();
    let client = reqwest::Client::new();
    let healthz: serde_json::Value =
        client.get(format!("{url}/healthz")).send().await.unwrap().json().await.unwrap();
    assert_eq!(healthz, serde_json::json!({"status": "ok", "version": env!("CARGO_PKG_VERSION")}));
    let page = client.get(setup).send().await.unwrap();
    assert_eq!(page.status(), 200, "{setup}");
    assert!(page.text().await.unwrap().contains("<form"), "the setup page renders");
    assert_eq!(std::fs::metadata(root.join("data/exhale.db")).unwrap().uid(), 10001);

    // The image's health check, with no curl in it: up, then down.
    let address = url.strip_prefix("http://").unwrap();
    let check = |root: &std::path::Path| {
        in_image(root, &env, &[("EXHALE_LISTEN", address)], &["healthcheck"]).output().unwrap()
    };
    assert!(check(&root).status.success(), "{:?}", check(&root));
    server.kill().unwrap();
    server.wait().unwrap();
    let down = check(&root);
    assert_eq!(down.status.code(), Some(1), "{down:?}");
}

/// Every file (not directory) under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() && !path.is_symlink() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}
