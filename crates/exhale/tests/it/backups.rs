//! Automatic backups with the real `exhale serve` and `exhale restore`: the restore drill
//! (backups written under write load from two households, restored into new directories,
//! every household's `export_data` compared), sealed backups opened by another age
//! implementation (pyrage, of the rage project) and the other way round, a wrong passphrase
//! and a damaged file refused with nothing replaced, a half-written backup never counted, a
//! missing directory shown in Settings while the server serves on, and who may see and
//! download a backup, a full or read-only disk, and a real `kill -9` during a sealed backup.
//! Backups are of the SQLite file (PostgreSQL has pg_dump), so these run
//! on SQLite in both passes; a PostgreSQL database with a backup directory is refused.

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use reqwest::StatusCode;
use serde_json::Value;
use test_support::DataDir;

use crate::{
    cli::{exhale, exhale_with_env, listening_url, owner_with_token, spawn_serve_with, stdout},
    serving::spawn_writer,
    web::{Visitor, invite_dana},
};

const PASSPHRASE: &str = "correct horse battery staple";
/// The password `owner_with_token` gives Ana.
const ANA_PASSWORD: &str = "a long enough password";

/// A served process, killed when dropped (also when a test fails).
struct Stopped(std::process::Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The backups in `dir` by name, oldest first (a name says its time, so names sort by it).
fn backups(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| {
            name.starts_with("exhale-") && (name.ends_with(".db") || name.ends_with(".db.age"))
        })
        .collect();
    names.sort();
    names
}

/// Waits until `ready` gives something, for at most a minute.
async fn until<T>(what: &str, mut ready: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(value) = ready() {
            return value;
        }
        assert!(Instant::now() < deadline, "{what} did not happen within a minute");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `email`'s `export_data` in the database of `dir`, without the moment it was made.
fn export(dir: &DataDir, email: &str) -> Value {
    let text = stdout(&exhale(dir, &["op", "export_data", "--as", email], ""));
    let mut export: Value = serde_json::from_str(&text).unwrap();
    export.as_object_mut().unwrap().remove("exported_at");
    export
}

fn subscription_names(export: &Value) -> BTreeSet<String> {
    export["subscriptions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect()
}

/// A second household, Cai's, with a trusted token (a new subscription waits for nobody);
/// returns the token.
fn second_household(dir: &DataDir) -> String {
    stdout(&exhale(
        dir,
        &[
            "member",
            "create-owner",
            "--email",
            "cai@c.test",
            "--name",
            "Cai",
            "--household",
            "Cai's",
            "--password-stdin",
        ],
        "cai's long password\n",
    ));
    let token = stdout(&exhale(
        dir,
        &["token", "create", "--member", "cai@c.test", "--scope", "trusted", "--name", "t"],
        "",
    ));
    token.lines().last().unwrap().to_owned()
}

/// Runs `exhale restore` into `dir` with `env` and what `stdin` gives.
fn restore(
    dir: &DataDir,
    backup: &Path,
    extra: &[&str],
    stdin: &str,
    env: &[(&str, &str)],
) -> std::process::Output {
    let path = backup.to_str().unwrap();
    exhale_with_env(dir, &[&["restore", path], extra].concat(), stdin, env)
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs Python with the pyrage package (rage's age, not Exhale's) on `script`.
fn pyrage(script: &str, args: &[&Path]) {
    let output = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .env("PASSPHRASE", PASSPHRASE)
        .output()
        .unwrap();
    assert!(output.status.success(), "pyrage: {}", stderr(&output));
}

#[tokio::test]
async fn backups_written_under_load_restore_every_households_data() {
    let dir = DataDir::sqlite();
    let ana = owner_with_token(&dir, "trusted");
    let cai = second_household(&dir);
    let kept = dir.path().join("backups");
    std::fs::create_dir(&kept).unwrap();
    // What a run killed mid-write leaves, and a file of the operator's own.
    let half_written = kept.join("exhale-20200101T000000Z.db.age.partial");
    std::fs::write(&half_written, b"age-encryption.org/v1\n-> scrypt").unwrap();
    std::fs::write(kept.join("notes.txt"), b"mine").unwrap();
    let mut server = spawn_serve_with(
        &dir,
        &[
            ("EXHALE_BACKUP_DIR", kept.to_str().unwrap()),
            ("EXHALE_BACKUP_EVERY", "1s"),
            ("EXHALE_BACKUP_KEEP", "3"),
            ("EXHALE_BACKUP_PASSPHRASE", PASSPHRASE),
            ("EXHALE_TOKEN_RATE_PER_SECOND", "0"),
            ("EXHALE_MAX_SUBSCRIPTIONS", "1000000"),
        ],
    );
    let url = listening_url(&mut server);
    let server = Stopped(server);

    // Both households write while backups come and go.
    let (acks, mut acked) = tokio::sync::mpsc::unbounded_channel();
    let client = reqwest::Client::new();
    let writers = [
        spawn_writer(
            client.clone(),
            url.clone(),
            ana,
            0..1_000_000,
            |n| format!("A{n}"),
            acks.clone(),
        ),
        spawn_writer(client, url.clone(), cai, 0..1_000_000, |n| format!("C{n}"), acks),
    ];
    let mut seen = BTreeSet::new();
    until("four backups under load", || {
        seen.extend(backups(&kept));
        (seen.len() >= 4).then_some(())
    })
    .await;
    for writer in &writers {
        writer.abort();
    }
    let mut acknowledged = 0;
    while acked.try_recv().is_ok() {
        acknowledged += 1;
    }
    assert!(acknowledged > 10, "only {acknowledged} writes were acknowledged");
    // Kept aside: the schedule removes it soon.
    let under_load = dir.path().join("under-load.db.age");
    until("a copy of a backup made under load", || {
        let name = backups(&kept).into_iter().next()?;
        std::fs::copy(kept.join(name), &under_load).ok()
    })
    .await;

    // A backup begun after the last write holds all of it.
    #[expect(clippy::disallowed_methods, reason = "a real server names backups by the wall clock")]
    let after = (jiff::Timestamp::now() + jiff::SignedDuration::from_secs(2))
        .strftime("exhale-%Y%m%dT%H%M%SZ")
        .to_string();
    let last = until("a backup after the writes", || {
        let names = backups(&kept);
        (names.len() == 3 && names[2] >= after).then(|| names[2].clone())
    })
    .await;
    drop(server);
    assert!(!half_written.exists(), "the half-written file was left");
    assert!(kept.join("notes.txt").exists(), "a file that is not a backup was removed");
    assert!(backups(&kept).len() <= 3, "{:?}", backups(&kept));
    let last = kept.join(last);
    let ana_live = export(&dir, "ana@a.test");
    let cai_live = export(&dir, "cai@c.test");
    assert!(subscription_names(&ana_live).len() > 5 && subscription_names(&cai_live).len() > 5);

    // The drill: restored into a new directory, every household reads as it did.
    let drill = DataDir::sqlite();
    let sealed_env = [("EXHALE_BACKUP_PASSPHRASE", PASSPHRASE)];
    stdout(&restore(&drill, &last, &[], "", &sealed_env));
    assert_eq!(export(&drill, "ana@a.test"), ana_live);
    assert_eq!(export(&drill, "cai@c.test"), cai_live);

    // Without the passphrase, with a wrong one, or damaged: refused, nothing replaced.
    let refused = restore(&drill, &last, &[], "", &[]);
    assert!(!refused.status.success());
    assert!(stderr(&refused).contains("EXHALE_BACKUP_PASSPHRASE"), "{}", stderr(&refused));
    let wrong = restore(&drill, &last, &["--passphrase-stdin"], "not it\n", &[]);
    assert!(stderr(&wrong).contains("passphrase does not open"), "{}", stderr(&wrong));
    let mut bytes = std::fs::read(&last).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    let damaged = drill.path().join("damaged.db.age");
    std::fs::write(&damaged, &bytes).unwrap();
    let refused = restore(&drill, &damaged, &[], "", &sealed_env);
    assert!(stderr(&refused).contains("damaged"), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("nothing was changed"), "{}", stderr(&refused));
    assert_eq!(export(&drill, "ana@a.test"), ana_live);

    // One written mid-load is a sound database too.
    let earlier = DataDir::sqlite();
    stdout(&restore(&earlier, &under_load, &[], "", &sealed_env));
    assert!(stdout(&exhale(&earlier, &["check"], "")).contains("is sound"));

    // Another age implementation opens Exhale's backup, and Exhale opens what it seals.
    let opened = drill.path().join("opened.db");
    pyrage(
        "import os, sys, pyrage\nopen(sys.argv[2], 'wb').write(pyrage.passphrase.decrypt(open(sys.argv[1], 'rb').read(), os.environ['PASSPHRASE']))",
        &[&last, &opened],
    );
    let plain = DataDir::sqlite();
    stdout(&restore(&plain, &opened, &[], "", &[]));
    assert_eq!(export(&plain, "cai@c.test"), cai_live);
    let copy = drill.path().join("copy.db");
    stdout(&exhale(&dir, &["backup", copy.to_str().unwrap()], ""));
    let sealed_by_rage = drill.path().join("copy.db.age");
    pyrage(
        "import os, sys, pyrage\nopen(sys.argv[2], 'wb').write(pyrage.passphrase.encrypt(open(sys.argv[1], 'rb').read(), os.environ['PASSPHRASE']))",
        &[&copy, &sealed_by_rage],
    );
    let from_rage = DataDir::sqlite();
    stdout(&restore(
        &from_rage,
        &sealed_by_rage,
        &["--passphrase-stdin"],
        &format!("{PASSPHRASE}\n"),
        &[],
    ));
    assert_eq!(export(&from_rage, "ana@a.test"), ana_live);
}

/// `exhale serve` writing plain backups into `kept` every second, keeping two, and Ana
/// signed in to it.
async fn serve_backing_up(dir: &DataDir, kept: &Path) -> (Stopped, String, Visitor) {
    let mut server = spawn_serve_with(
        dir,
        &[
            ("EXHALE_BACKUP_DIR", kept.to_str().unwrap()),
            ("EXHALE_BACKUP_EVERY", "1s"),
            ("EXHALE_BACKUP_KEEP", "2"),
        ],
    );
    let url = listening_url(&mut server);
    let mut ana = Visitor::at(&url);
    ana.sign_in("ana@a.test", ANA_PASSWORD).await;
    (Stopped(server), url, ana)
}

/// The raw answer to a GET as `visitor`'s session, bytes and all.
async fn download(
    visitor: &mut Visitor,
    url: &str,
    path: &str,
) -> (StatusCode, Option<String>, Vec<u8>) {
    let cookie = visitor.cookie_header();
    let response = reqwest::Client::new()
        .get(format!("{url}{path}"))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    let kind = response.headers().get("content-type").map(|v| v.to_str().unwrap().to_owned());
    (response.status(), kind, response.bytes().await.unwrap().to_vec())
}

#[tokio::test]
async fn a_missing_directory_is_shown_to_owners_and_only_a_sole_households_owner_downloads() {
    let dir = DataDir::sqlite();
    owner_with_token(&dir, "read");
    let kept: PathBuf = dir.path().join("not-mounted");
    let (_server, url, mut ana) = serve_backing_up(&dir, &kept).await;
    assert!(ana.get("/settings").await.body.contains("/settings/backups"));

    // The directory is missing: said in Settings, nothing created in its place, and the
    // server serves on.
    let failure =
        backups_page(&mut ana, "the missing directory", |page| page.contains("backup-failure"))
            .await;
    assert!(failure.contains("does not exist"), "{failure}");
    assert!(!kept.exists());
    assert_eq!(ana.get("/subscriptions").await.status, StatusCode::OK);

    // Once it is there, the next try writes a backup and the failure goes.
    std::fs::create_dir(&kept).unwrap();
    let page =
        backups_page(&mut ana, "a backup", |page| page.contains("data-testid=\"backup-file\""))
            .await;
    assert!(!page.contains("backup-failure"), "{page}");
    let name = backups(&kept)[0].clone();
    assert!(name.ends_with(".db"), "{name}");

    // Ana's is the only household: she downloads the file as it is on disk.
    let on_disk = std::fs::read(kept.join(&name)).unwrap();
    let (status, kind, body) = download(&mut ana, &url, &format!("/settings/backups/{name}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(kind.as_deref(), Some("application/vnd.sqlite3"));
    assert!(body.starts_with(b"SQLite format 3\0"));
    assert_eq!(body.len(), on_disk.len());
    for other in ["..%2Fexhale.db", "exhale.db", "notes.txt"] {
        let (status, _, _) = download(&mut ana, &url, &format!("/settings/backups/{other}")).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{other}");
    }

    // A member who is not an owner sees no backups and downloads none; and since a backup
    // holds her private items too, Ana downloads none either once Dana has joined.
    let link = invite_dana(&mut ana).await;
    let mut dana = Visitor::at(&url);
    let form = dana.get(&link).await;
    let token = Visitor::hidden(&form, "form_token");
    dana.post(&link, &[("form_token", &token), ("password", "dana's long password")]).await;
    assert!(!dana.get("/settings").await.body.contains("/settings/backups"));
    assert_eq!(dana.get("/settings/backups").await.status, StatusCode::FORBIDDEN);
    let (status, _, body) = download(&mut dana, &url, &format!("/settings/backups/{name}")).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(!body.starts_with(b"SQLite"));
    let page = ana.get("/settings/backups").await.body;
    assert!(page.contains("only its operator"), "{page}");
    let (status, _, body) = download(&mut ana, &url, &format!("/settings/backups/{name}")).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(!body.starts_with(b"SQLite"));
}

#[test]
fn a_postgresql_database_with_a_backup_directory_is_refused_at_start() {
    let dir = DataDir::sqlite();
    let output = exhale_with_env(
        &dir,
        &["serve", "--listen", "127.0.0.1:0"],
        "",
        &[
            ("EXHALE_DATABASE_URL", "postgres://exhale@127.0.0.1:9/exhale"),
            ("EXHALE_BACKUP_DIR", dir.path().to_str().unwrap()),
        ],
    );
    assert!(!output.status.success());
    assert!(stderr(&output).contains("pg_dump"), "{}", stderr(&output));
    let bad = exhale_with_env(&dir, &["config", "show"], "", &[("EXHALE_BACKUP_EVERY", "1w")]);
    assert!(stderr(&bad).contains("30s, 15m, 6h or 1d"), "{}", stderr(&bad));
    let shown = stdout(&exhale_with_env(
        &dir,
        &["config", "show"],
        "",
        &[("EXHALE_BACKUP_PASSPHRASE", PASSPHRASE), ("EXHALE_BACKUP_EVERY", "6h")],
    ));
    assert!(!shown.contains(PASSPHRASE) && shown.contains("6h"), "{shown}");
}

/// A small disk of its own (tmpfs) mounted at a directory while it lives: the test runs as
/// root, as the suite does.
struct Disk(PathBuf);

impl Disk {
    fn mount(at: &Path, size: &str) -> Self {
        std::fs::create_dir_all(at).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .status()
            .unwrap();
        assert!(mounted.success(), "mount a tmpfs for the backups (the test runs as root)");
        Self(at.to_owned())
    }

    fn remount(&self, options: &str) {
        let done = std::process::Command::new("mount")
            .args(["-o", &format!("remount,{options}")])
            .arg(&self.0)
            .status()
            .unwrap();
        assert!(done.success(), "remount {options}");
    }
}

impl Drop for Disk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// Fills the disk at `dir` with one file, to the last byte; returns the file.
fn fill(dir: &Path) -> PathBuf {
    use std::io::Write as _;
    let filler = dir.join("filler");
    let mut file = std::fs::File::create(&filler).unwrap();
    let mut chunk = vec![0u8; 1 << 20];
    while !chunk.is_empty() {
        if file.write_all(&chunk).is_err() {
            chunk.truncate(chunk.len() / 2);
        }
    }
    filler
}

/// The backups page as Ana sees it, once `ready` holds of it.
async fn backups_page(ana: &mut Visitor, what: &str, ready: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let page = ana.get("/settings/backups").await.body;
        if ready(&page) {
            return page;
        }
        assert!(Instant::now() < deadline, "{what} did not show within a minute:\n{page}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_full_or_read_only_disk_keeps_the_earlier_backups_and_the_server_serving() {
    let dir = DataDir::sqlite();
    owner_with_token(&dir, "read");
    let kept = dir.path().join("disk");
    let disk = Disk::mount(&kept, "32m");
    let (_server, url, mut ana) = serve_backing_up(&dir, &kept).await;
    let first = until("a first backup", || backups(&kept).into_iter().next()).await;

    // Full: the next copy fails, its half is removed, the earlier ones stay.
    let filler = fill(&kept);
    let page =
        backups_page(&mut ana, "the full disk", |page| page.contains("backup-failure")).await;
    assert!(page.contains("full") || page.contains("No space left"), "{page}");
    let partials = || {
        std::fs::read_dir(&kept)
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().contains(".partial"))
            .count()
    };
    assert_eq!(partials(), 0, "a half-written backup was left on the full disk");
    let names = backups(&kept);
    assert!(!names.is_empty() && names.len() <= 2, "{names:?}");
    assert_eq!(ana.get("/subscriptions").await.status, StatusCode::OK);

    // Room again: the next try writes one, and the failure goes.
    std::fs::remove_file(&filler).unwrap();
    backups_page(&mut ana, "a backup after the disk was freed", |page| {
        !page.contains("backup-failure")
    })
    .await;
    assert!(backups(&kept).iter().any(|name| *name > first), "{:?}", backups(&kept));

    // Read-only: the same, and nothing is removed from it.
    disk.remount("ro");
    let before = backups(&kept);
    let page =
        backups_page(&mut ana, "the read-only disk", |page| page.contains("backup-failure")).await;
    assert!(page.contains("Read-only file system"), "{page}");
    assert_eq!(backups(&kept), before);
    disk.remount("rw");

    // Ana alone downloads; once a second household is on the server a backup holds it too,
    // and nobody downloads one from the web.
    let name = before[0].clone();
    let (status, _, _) = download(&mut ana, &url, &format!("/settings/backups/{name}")).await;
    assert_eq!(status, StatusCode::OK);
    second_household(&dir);
    let (status, _, body) = download(&mut ana, &url, &format!("/settings/backups/{name}")).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(!body.starts_with(b"SQLite"));
}

#[tokio::test]
async fn a_backup_cut_short_by_kill_9_is_never_counted_and_goes_at_the_next_run() {
    let dir = DataDir::sqlite();
    owner_with_token(&dir, "read");
    let kept = dir.path().join("backups");
    std::fs::create_dir(&kept).unwrap();
    let env = [
        ("EXHALE_BACKUP_DIR", kept.to_str().unwrap()),
        ("EXHALE_BACKUP_EVERY", "1s"),
        ("EXHALE_BACKUP_KEEP", "3"),
        ("EXHALE_BACKUP_PASSPHRASE", PASSPHRASE),
    ];
    let partial = || {
        std::fs::read_dir(&kept)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .find(|name| name.ends_with(".partial"))
    };
    // Killed while a sealed backup is being written (it takes its passphrase's second).
    let mut server = spawn_serve_with(&dir, &env);
    listening_url(&mut server);
    until("a first backup", || backups(&kept).into_iter().next()).await;
    let cut = until("a backup being written", partial).await;
    server.kill().unwrap();
    server.wait().unwrap();
    // Whatever the kill left, every file counted as a backup restores whole.
    for name in backups(&kept) {
        let restored = DataDir::sqlite();
        let path = kept.join(&name);
        stdout(&restore(&restored, &path, &[], "", &[("EXHALE_BACKUP_PASSPHRASE", PASSPHRASE)]));
    }
    // The next run removes what was cut short.
    let server = spawn_serve_with(&dir, &env);
    let _server = Stopped(server);
    let first_after = backups(&kept).last().cloned().unwrap_or_default();
    until("a backup after the restart", || {
        backups(&kept).last().filter(|name| **name > first_after).map(|_| ())
    })
    .await;
    assert!(!kept.join(&cut).exists(), "{cut} is still there");
}
