//! Architecture and tidy checks: the dependency rules of ARCHITECTURE.md, read from every
//! `crates/*/Cargo.toml`, and conventions every source file follows.
//!
//! The manifests are read with a small line-based parser (section headers and keys), enough
//! for the way this workspace writes them. Each failure names the file or the edge and the rule.

use std::{
    collections::{BTreeMap, BTreeSet},
    fs,
    path::{Path, PathBuf},
};

/// Which section of a manifest a dependency is declared in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// `[dependencies]`, `[build-dependencies]` and their `[target.*]` forms.
    Normal,
    /// `[dev-dependencies]` and its `[target.*]` form.
    Dev,
}

#[derive(Debug, Default)]
struct Manifest {
    /// The package name (also the folder name in this workspace).
    name: String,
    /// Dependency package names by section kind.
    deps: BTreeMap<String, BTreeSet<Kind>>,
}

impl Manifest {
    fn has(&self, dep: &str, kind: Kind) -> bool {
        self.deps.get(dep).is_some_and(|kinds| kinds.contains(&kind))
    }

    fn edges(&self) -> impl Iterator<Item = (&str, Kind)> {
        self.deps
            .iter()
            .flat_map(|(dep, kinds)| kinds.iter().map(move |kind| (dep.as_str(), *kind)))
    }
}

fn section_of(header: &str) -> Option<Kind> {
    // `[dependencies]`, `[target.'cfg(unix)'.dev-dependencies]`; `[dependencies.foo]` is
    // handled by the caller.
    let header = header.trim_start_matches('[').trim_end_matches(']').trim();
    let last = header.rsplit('.').next().unwrap_or(header);
    match last {
        "dependencies" | "build-dependencies" => Some(Kind::Normal),
        "dev-dependencies" => Some(Kind::Dev),
        _ => None,
    }
}

/// `[dependencies.foo]` style headers: the kind and the key.
fn dotted_dependency(header: &str) -> Option<(Kind, String)> {
    let inner = header.trim_start_matches('[').trim_end_matches(']').trim();
    for (prefix, kind) in [
        ("dependencies.", Kind::Normal),
        ("build-dependencies.", Kind::Normal),
        ("dev-dependencies.", Kind::Dev),
    ] {
        if let Some(key) = inner.strip_prefix(prefix) {
            return Some((kind, key.trim().trim_matches('"').to_owned()));
        }
    }
    None
}

/// The key of a `key = value` or `key.workspace = true` line, if the line is one.
fn key_of(line: &str) -> Option<&str> {
    let (left, _) = line.split_once('=')?;
    let key = left.trim().split('.').next()?.trim().trim_matches('"');
    let valid =
        !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    valid.then_some(key)
}

/// The `package = "real-name"` of an inline table, when a dependency is renamed.
fn renamed_package(line: &str) -> Option<String> {
    let (_, value) = line.split_once('=')?;
    let at = value.find("package")?;
    let rest = value[at + "package".len()..].trim_start().strip_prefix('=')?.trim_start();
    let rest = rest.strip_prefix('"')?;
    Some(rest.split('"').next()?.to_owned())
}

fn parse_manifest(text: &str) -> Manifest {
    let mut manifest = Manifest::default();
    let mut section: Option<Kind> = None;
    let mut in_package = false;
    let mut dotted: Option<(Kind, String)> = None;
    for raw in text.lines() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with('[') {
            in_package = line == "[package]";
            dotted = dotted_dependency(line);
            section = if dotted.is_some() { None } else { section_of(line) };
            if let Some((kind, key)) = &dotted {
                manifest.deps.entry(key.clone()).or_default().insert(*kind);
            }
            continue;
        }
        if in_package && key_of(line) == Some("name") {
            if let Some((_, value)) = line.split_once('=') {
                manifest.name = value.trim().trim_matches('"').to_owned();
            }
            continue;
        }
        if let Some((kind, key)) = &dotted {
            // `package = "real-name"` inside `[dependencies.key]`.
            if key_of(line) == Some("package")
                && let Some((_, value)) = line.split_once('=')
            {
                let real = value.trim().trim_matches('"').to_owned();
                manifest.deps.remove(key);
                manifest.deps.entry(real).or_default().insert(*kind);
            }
            continue;
        }
        let Some(kind) = section else { continue };
        let Some(key) = key_of(line) else { continue };
        let name = renamed_package(line).unwrap_or_else(|| key.to_owned());
        manifest.deps.entry(name).or_default().insert(kind);
    }
    manifest
}

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every crate's manifest, by folder name.
fn manifests() -> BTreeMap<String, Manifest> {
    let dir = crates_dir();
    let entries =
        fs::read_dir(&dir).unwrap_or_else(|err| panic!("cannot list {}: {err}", dir.display()));
    let mut out = BTreeMap::new();
    for entry in entries {
        let entry = entry.unwrap_or_else(|err| panic!("cannot list {}: {err}", dir.display()));
        let path = entry.path().join("Cargo.toml");
        if !path.is_file() {
            continue;
        }
        let folder = entry.file_name().to_string_lossy().into_owned();
        let text = fs::read_to_string(&path)
            .unwrap_or_else(|err| panic!("cannot read crates/{folder}/Cargo.toml: {err}"));
        let manifest = parse_manifest(&text);
        assert_eq!(
            manifest.name, folder,
            "crates/{folder}/Cargo.toml: the package name must equal the folder name (see ARCHITECTURE.md)"
        );
        out.insert(folder, manifest);
    }
    out
}

/// Adapters: they translate a wire format and call the catalog.
const ADAPTERS: &[&str] = &["api", "http", "mcp", "web", "oauth", "assistant", "channels"];

/// The workspace crates each crate may depend on; `None` means any.
fn allowed_workspace_deps(krate: &str) -> Option<Option<&'static [&'static str]>> {
    let allowed: Option<&'static [&'static str]> = match krate {
        "domain" => Some(&[]),
        "store" => Some(&["domain"]),
        "ops" => Some(&["domain"]),
        "statement" => Some(&["domain"]),
        "i18n" => Some(&["domain"]),
        "app" => Some(&["ops", "domain", "store", "statement", "i18n"]),
        "http" => Some(&["ops"]),
        "web" => Some(&["ops", "http", "i18n"]),
        "api" | "oauth" => Some(&["ops", "http"]),
        "mcp" => Some(&["ops", "http", "i18n"]),
        "assistant" => Some(&["ops"]),
        "channels" => Some(&["ops", "i18n"]),
        "fuzz" => Some(&[]),
        "exhale" | "test-support" => None,
        _ => return None,
    };
    Some(allowed)
}

fn rule_text(krate: &str) -> &'static str {
    match krate {
        "domain" => "domain depends on no workspace crate",
        "store" => "store depends only on domain among workspace crates",
        "ops" => "ops depends only on domain",
        "statement" => "statement depends only on domain: reading statements is pure logic",
        "i18n" => "i18n depends only on domain: translating is pure logic over its catalogues",
        "web" => {
            "the web adapter depends only on ops, http and i18n, never on domain, app, store or another adapter"
        }
        "app" => "app depends only on ops, domain, store, statement and i18n",
        "http" => "http depends only on ops",
        "fuzz" => "fuzz depends on no workspace crate: it is test tooling for any of them",
        "api" | "oauth" => {
            "an HTTP adapter depends only on ops and http, never on domain, app, store or another adapter"
        }
        "mcp" => {
            "mcp depends only on ops, http and i18n (its views in the person's language), never on domain, app, store or another adapter"
        }
        "channels" => {
            "channels depends only on ops and i18n (chat in the member's language), never on domain, app, store or another adapter"
        }
        "assistant" => {
            "an adapter depends only on ops, never on domain, app, store or another adapter"
        }
        _ => "",
    }
}

const DOMAIN_FORBIDDEN: &[&str] = &["tokio", "rusqlite", "postgres", "axum", "reqwest", "hyper"];

/// Every forbidden edge in these manifests, as messages.
fn violations(manifests: &BTreeMap<String, Manifest>) -> Vec<String> {
    let workspace: BTreeSet<&str> = manifests.keys().map(String::as_str).collect();
    let mut problems = Vec::new();
    for (krate, manifest) in manifests {
        let file = format!("crates/{krate}/Cargo.toml");
        let Some(allowed) = allowed_workspace_deps(krate) else {
            problems.push(format!(
                "{file}: crate {krate} has no dependency rule; add one to crates/exhale/tests/it/architecture.rs and a section to ARCHITECTURE.md"
            ));
            continue;
        };
        for (dep, kind) in manifest.edges() {
            let section = match kind {
                Kind::Normal => "[dependencies]",
                Kind::Dev => "[dev-dependencies]",
            };
            let edge = format!("{file}: {krate} -> {dep} in {section}");
            if dep == "test-support" || dep == "fuzz" {
                if kind == Kind::Normal {
                    problems.push(format!("{edge}: {dep} is only ever a dev-dependency"));
                }
                continue;
            }
            if dep == "app" && krate != "exhale" && krate != "test-support" {
                problems.push(format!(
                    "{edge}: only exhale and test-support may depend on app; adapters hold an Arc<dyn ops::Catalog>"
                ));
                continue;
            }
            // test-support also writes past Exhale into an SQLite file, as an older version
            // or another program might have (`DataDir::write_past_exhale`).
            if dep == "rusqlite" && krate != "store" && krate != "test-support" {
                problems.push(format!(
                    "{edge}: store is the only crate that knows SQL and the only one with rusqlite"
                ));
                continue;
            }
            // test-support makes the PostgreSQL pass's databases (an admin's work, no query).
            if dep == "postgres" && krate != "store" && krate != "test-support" {
                problems.push(format!(
                    "{edge}: store is the only crate that knows SQL and the only one with postgres"
                ));
                continue;
            }
            if krate == "domain" && kind == Kind::Normal && DOMAIN_FORBIDDEN.contains(&dep) {
                problems.push(format!(
                    "{edge}: domain does no IO and has none of {}",
                    DOMAIN_FORBIDDEN.join(", ")
                ));
                continue;
            }
            if ADAPTERS.contains(&krate.as_str())
                && (dep == "store" || (ADAPTERS.contains(&dep) && dep != "http"))
            {
                problems.push(format!(
                    "{edge}: adapters never depend on app, store or each other (except http, the shared HTTP glue)"
                ));
                continue;
            }
            if let Some(allowed) = allowed
                && workspace.contains(dep)
                && !allowed.contains(&dep)
            {
                problems.push(format!("{edge}: {}", rule_text(krate)));
            }
        }
    }
    problems
}

#[test]
fn manifest_parser_reads_sections_keys_and_renames() {
    let manifest = parse_manifest(
        r#"
[package]
name = "sample"
version.workspace = true

[lib]
doctest = false

[dependencies]
# A comment = not a key.
domain.workspace = true
serde = { version = "1", features = [
    "derive",
] }
db = { package = "rusqlite", version = "0.37" }

[dev-dependencies]
test-support.workspace = true

[target.'cfg(unix)'.build-dependencies]
cc = "1"

[dependencies.tokio]
version = "1"

[dependencies.sql]
package = "store"
path = "../store"

[lints]
workspace = true
"#,
    );
    assert_eq!(manifest.name, "sample");
    let normal: BTreeSet<&str> =
        manifest.edges().filter(|(_, kind)| *kind == Kind::Normal).map(|(dep, _)| dep).collect();
    let dev: BTreeSet<&str> =
        manifest.edges().filter(|(_, kind)| *kind == Kind::Dev).map(|(dep, _)| dep).collect();
    assert_eq!(normal, BTreeSet::from(["cc", "domain", "rusqlite", "serde", "store", "tokio"]));
    assert_eq!(dev, BTreeSet::from(["test-support"]));
}

#[test]
fn the_rules_catch_forbidden_edges() {
    let sample = |name: &str, text: &str| {
        (name.to_owned(), parse_manifest(&format!("[package]\nname = \"{name}\"\n{text}")))
    };
    let manifests: BTreeMap<String, Manifest> = [
        sample("domain", "[dependencies]\ntokio.workspace = true\nops.workspace = true\n"),
        sample("ops", "[dependencies]\ndomain.workspace = true\ntest-support.workspace = true\n"),
        sample("api", "[dependencies]\nops.workspace = true\nhttp.workspace = true\napp.workspace = true\nstore.workspace = true\nmcp.workspace = true\n"),
        sample("http", "[dependencies]\nops.workspace = true\n"),
        sample("mcp", "[dependencies]\nops.workspace = true\nhttp.workspace = true\n"),
        sample("store", "[dependencies]\ndomain.workspace = true\nrusqlite.workspace = true\n"),
        sample("app", "[dependencies]\nstore.workspace = true\npostgres.workspace = true\n"),
        sample("test-support", "[dependencies]\napp.workspace = true\n"),
        sample("exhale", "[dependencies]\napp.workspace = true\n[dev-dependencies]\ntest-support.workspace = true\nrusqlite = \"0.37\"\n"),
        sample("gadget", "[dependencies]\nops.workspace = true\n"),
    ]
    .into_iter()
    .collect();
    let problems = violations(&manifests);
    let expected = [
        "crates/domain/Cargo.toml: domain -> tokio",
        "crates/domain/Cargo.toml: domain -> ops",
        "crates/ops/Cargo.toml: ops -> test-support",
        "crates/api/Cargo.toml: api -> app",
        "crates/api/Cargo.toml: api -> store",
        "crates/api/Cargo.toml: api -> mcp",
        "crates/exhale/Cargo.toml: exhale -> rusqlite",
        "crates/app/Cargo.toml: app -> postgres",
        "crates/gadget/Cargo.toml: crate gadget has no dependency rule",
    ];
    for edge in expected {
        assert!(
            problems.iter().any(|p| p.starts_with(edge)),
            "expected a violation starting with {edge:?}; got {problems:#?}"
        );
    }
    assert_eq!(problems.len(), expected.len(), "unexpected violations: {problems:#?}");
}

#[test]
fn crate_dependencies_follow_the_architecture() {
    let manifests = manifests();
    // The parser must see the real manifests, or every rule below would pass vacuously.
    for krate in ["domain", "store", "ops", "app", "exhale", "test-support"] {
        assert!(
            manifests.contains_key(krate),
            "crates/{krate}/Cargo.toml was not found from {}",
            crates_dir().display()
        );
    }
    assert!(
        manifests["store"].has("rusqlite", Kind::Normal),
        "the manifest parser did not find rusqlite in crates/store/Cargo.toml [dependencies]"
    );
    assert!(
        manifests["app"].has("ops", Kind::Normal) && manifests["app"].has("store", Kind::Normal),
        "the manifest parser did not find ops and store in crates/app/Cargo.toml [dependencies]"
    );
    let problems = violations(&manifests);
    assert!(
        problems.is_empty(),
        "forbidden dependency edges (rules in ARCHITECTURE.md, checked by crates/exhale/tests/it/architecture.rs):\n{}",
        problems.join("\n")
    );
}

/// Every `.rs` file under `dir`, recursively, skipping build output.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries =
        fs::read_dir(dir).unwrap_or_else(|err| panic!("cannot list {}: {err}", dir.display()));
    for entry in entries {
        let path =
            entry.unwrap_or_else(|err| panic!("cannot list {}: {err}", dir.display())).path();
        if path.is_dir() {
            if path
                .file_name()
                .is_some_and(|name| name == "target" || name.to_string_lossy().starts_with('.'))
            {
                continue;
            }
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// `path` as `crates/...`, for messages.
fn shown(path: &Path) -> String {
    let crates = crates_dir();
    match path.strip_prefix(&crates) {
        Ok(rest) => format!("crates/{}", rest.display()),
        Err(_) => path.display().to_string(),
    }
}

#[test]
fn every_source_file_starts_with_a_module_doc() {
    let mut files = Vec::new();
    for (krate, _) in manifests() {
        let src = crates_dir().join(&krate).join("src");
        if src.is_dir() {
            rust_files(&src, &mut files);
        }
    }
    assert!(!files.is_empty(), "no .rs files found under crates/*/src");
    let mut problems = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file)
            .unwrap_or_else(|err| panic!("cannot read {}: {err}", shown(file)));
        let first = text.lines().find(|line| !line.trim().is_empty()).unwrap_or("");
        if !first.starts_with("//!") {
            problems.push(format!(
                "{}: the first line must be a `//!` doc comment saying what the file holds",
                shown(file)
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "every .rs file starts with a //! line (ARCHITECTURE.md, Testing):\n{}",
        problems.join("\n")
    );
}

#[test]
fn no_ignored_or_should_panic_tests() {
    // Built with concat! so this file does not match itself.
    let forbidden = [
        (concat!("#[", "ignore"), "a test that never runs cannot fail; fix it or delete it"),
        (concat!("#[", "should_panic"), "test the error value instead of a panic"),
    ];
    let mut files = Vec::new();
    rust_files(&crates_dir(), &mut files);
    assert!(!files.is_empty(), "no .rs files found under crates/");
    let mut problems = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file)
            .unwrap_or_else(|err| panic!("cannot read {}: {err}", shown(file)));
        for (number, line) in text.lines().enumerate() {
            for (needle, why) in forbidden {
                if line.trim_start().starts_with(needle) {
                    problems.push(format!(
                        "{}:{}: {needle}] is not allowed: {why}",
                        shown(file),
                        number + 1
                    ));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "forbidden test attributes under crates/:\n{}",
        problems.join("\n")
    );
}

/// The top-level modules of `crate::` paths in `text`: `crate::views::x` and
/// `use crate::{ctx::Ctx, views}` name `views` and `ctx`.
fn crate_paths(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // The first name of each item at the top level of the braces.
            let mut depth = 0;
            let mut item_start = true;
            let mut name = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && (c.is_alphanumeric() || c == '_') => name.push(c),
                    _ if item_start && !name.is_empty() => {
                        names.insert(std::mem::take(&mut name));
                        item_start = false;
                    }
                    _ => {}
                }
            }
            if !name.is_empty() {
                names.insert(name);
            }
        } else {
            let name: String =
                rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            names.insert(name);
        }
    }
    names
}

#[test]
fn app_modules_depend_on_each_other_without_a_circle() {
    let src = crates_dir().join("app/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    // A module is a file's path without `.rs` (`invoke`, `handlers/import`); `handlers/mod.rs`
    // is `handlers`, the registry; `lib.rs` is the crate root, which names every module.
    let module_of = |path: &Path| {
        let rest = path.strip_prefix(&src).unwrap().with_extension("");
        let name = rest.to_string_lossy().replace('\\', "/");
        name.strip_suffix("/mod").map(str::to_owned).unwrap_or(name)
    };
    let modules: BTreeSet<String> = files.iter().map(|file| module_of(file)).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut problems = Vec::new();
    for file in &files {
        let module = module_of(file);
        if module == "lib" {
            continue;
        }
        let text = fs::read_to_string(file).unwrap();
        let mut uses: BTreeSet<String> =
            crate_paths(&text).into_iter().filter(|name| modules.contains(name)).collect();
        if module == "handlers" {
            // The registry names every handler module.
            uses.extend(
                modules.iter().filter(|m| m.starts_with("handlers/")).map(ToOwned::to_owned),
            );
        } else if module.starts_with("handlers/")
            && (uses.contains("handlers") || text.contains("super::"))
        {
            problems.push(format!(
                "{module} uses another handler module; share the code through views, input or a rules module instead"
            ));
        }
        uses.remove(&module);
        edges.insert(module, uses);
    }
    // Depth-first search for a circle.
    fn visit(
        module: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
        problems: &mut Vec<String>,
    ) {
        if let Some(start) = path.iter().position(|m| m == module) {
            problems.push(format!("import circle: {} -> {module}", path[start..].join(" -> ")));
            return;
        }
        if !done.insert(module.to_owned()) {
            return;
        }
        path.push(module.to_owned());
        for next in edges.get(module).into_iter().flatten() {
            visit(next, edges, path, done, problems);
        }
        path.pop();
    }
    let mut done = BTreeSet::new();
    for module in edges.keys() {
        visit(module, &edges, &mut Vec::new(), &mut done, &mut problems);
    }
    assert!(edges.contains_key("invoke") && edges["invoke"].contains("transactions"));
    assert!(problems.is_empty(), "crates/app/src (ARCHITECTURE.md, app):\n{}", problems.join("\n"));
}
