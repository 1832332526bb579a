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
        "api" => Some(&["ops", "http"]),
        "oauth" => Some(&["ops", "http", "outbound"]),
        "mcp" => Some(&["ops", "http", "i18n"]),
        "assistant" | "banks" => Some(&["ops", "outbound"]),
        "channels" => Some(&["ops", "i18n", "outbound"]),
        "fuzz" | "outbound" => Some(&[]),
        "server" => Some(&["app", "ops", "http", "api", "mcp", "web", "oauth", "channels"]),
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
        "outbound" => {
            "outbound depends on no workspace crate: it is the TLS client every outbound call shares"
        }
        "api" => {
            "an HTTP adapter depends only on ops and http, never on domain, app, store or another adapter"
        }
        "oauth" => {
            "oauth depends only on ops, http and outbound (its metadata fetcher's TLS), never on domain, app, store or another adapter"
        }
        "mcp" => {
            "mcp depends only on ops, http and i18n (its views in the person's language), never on domain, app, store or another adapter"
        }
        "channels" => {
            "channels depends only on ops, i18n (chat in the member's language) and outbound (the shared TLS client), never on domain, app, store or another adapter"
        }
        "assistant" | "banks" => {
            "an adapter depends only on ops and outbound (the shared TLS client), never on domain, app, store or another adapter"
        }
        "server" => {
            "server puts the adapters together over app: it depends on them, app, ops and http, never on store or domain"
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
            if dep == "app" && !["exhale", "server", "test-support"].contains(&krate.as_str()) {
                problems.push(format!(
                    "{edge}: only the wiring (exhale, server) and test-support may depend on app; adapters hold an Arc<dyn ops::Catalog>"
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

#[test]
fn app_handler_modules_do_not_use_each_other() {
    let src = crates_dir().join("app/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let handlers = src.join("handlers");
    let mut problems = Vec::new();
    for file in files.iter().filter(|file| file.starts_with(&handlers) && !file.ends_with("mod.rs"))
    {
        let module = module_path(&src, file);
        let code = code_of(&fs::read_to_string(file).unwrap());
        let uses = crate_references(&module, &code, &BTreeSet::new());
        if uses.iter().any(|path| path.first().is_some_and(|first| first == "handlers")) {
            problems.push(format!(
                "{} uses another handler module; share the code through views, input or a rules module instead",
                shown(file)
            ));
        }
    }
    assert!(
        files.iter().any(|file| file.starts_with(&handlers)),
        "no handlers under {}",
        shown(&handlers)
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---- Layers inside each crate ----------------------------------------------------------------

/// A module's path inside its crate: `lib.rs` and `main.rs` are `[]`, `auth.rs` and
/// `auth/mod.rs` are `["auth"]`, `auth/session.rs` is `["auth", "session"]`.
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rest = file.strip_prefix(src).unwrap().with_extension("");
    let mut path: Vec<String> =
        rest.components().map(|part| part.as_os_str().to_string_lossy().into_owned()).collect();
    if path.last().is_some_and(|last| last == "mod") {
        path.pop();
    }
    if path.len() == 1 && (path[0] == "lib" || path[0] == "main") {
        path.clear();
    }
    path
}

/// The code a module's layer is read from: comments and inline modules of tests
/// (`#[cfg(test)] mod tests { … }`) left out, as neither is a dependency of the module.
fn code_of(text: &str) -> String {
    let text: String = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut code = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        code.push_str(&rest[..at]);
        let after = rest[at + "#[cfg(test)]".len()..].trim_start();
        let after_visibility = after
            .strip_prefix("pub(crate) ")
            .or_else(|| after.strip_prefix("pub "))
            .unwrap_or(after);
        let module = after_visibility.strip_prefix("mod ").filter(|module| {
            module.find(['{', ';']).is_some_and(|end| module.as_bytes()[end] == b'{')
        });
        rest = match module {
            Some(module) => {
                let mut depth = 0;
                let mut close = module.len();
                for (i, c) in module.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                close = i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                &module[close..]
            }
            None => after,
        };
    }
    code.push_str(rest);
    code
}

fn is_name_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// The paths of the use tree at the start of `text`, after `prefix`: `a::b::{c, d::e}` gives
/// `prefix::a::b::c` and `prefix::a::b::d::e`. Returns how many bytes the tree took.
fn use_tree(text: &str, prefix: &[String], paths: &mut Vec<Vec<String>>) -> usize {
    let bytes = text.as_bytes();
    let mut path = prefix.to_vec();
    let mut at = 0;
    loop {
        let start = at;
        while at < bytes.len() && is_name_byte(bytes[at]) {
            at += 1;
        }
        if at > start {
            path.push(text[start..at].to_owned());
        }
        let group = if text[at..].starts_with("::{") {
            Some(at + 3)
        } else if at == 0 && text.starts_with('{') {
            Some(1)
        } else {
            None
        };
        if let Some(inside) = group {
            at = inside;
            loop {
                while at < bytes.len() && (bytes[at].is_ascii_whitespace() || bytes[at] == b',') {
                    at += 1;
                }
                if at >= bytes.len() || bytes[at] == b'}' {
                    return at + 1;
                }
                at += use_tree(&text[at..], &path, paths).max(1);
            }
        }
        if text[at..].starts_with("::") {
            at += 2;
            continue;
        }
        paths.push(path);
        // `as name` and `*` stay in the member; `,`, `}` and `;` end it.
        while at < bytes.len()
            && (is_name_byte(bytes[at]) || bytes[at] == b' ' || bytes[at] == b'*')
        {
            at += 1;
        }
        return at;
    }
}

/// Every path in `code` to something of this crate, made absolute: `crate::a::b`, `super::b`
/// from `[a, c]` (which is `a::b`), and in a module with children, `child::x`.
fn crate_references(
    module: &[String],
    code: &str,
    children: &BTreeSet<String>,
) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let bytes = code.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        // `$crate::` is a macro's own crate; `x::crate::` does not occur.
        let starts_a_path = at == 0
            || !(is_name_byte(bytes[at - 1]) || bytes[at - 1] == b'$' || bytes[at - 1] == b':');
        if !starts_a_path || !code.is_char_boundary(at) {
            at += 1;
            continue;
        }
        let rest = &code[at..];
        let base = if rest.starts_with("crate::") {
            Some((Vec::new(), "crate::".len()))
        } else if rest.starts_with("super::*") {
            // In an inline module (`mod sign_in { use super::*; }`), its own file: no use.
            None
        } else if rest.starts_with("super::") {
            let mut up = module.to_vec();
            let mut skip = 0;
            while rest[skip..].starts_with("super::") {
                up.pop();
                skip += "super::".len();
            }
            Some((up, skip))
        } else {
            let name_end = rest.bytes().position(|b| !is_name_byte(b)).unwrap_or(rest.len());
            (children.contains(&rest[..name_end]) && rest[name_end..].starts_with("::"))
                .then(|| (module.to_vec(), 0))
        };
        match base {
            Some((prefix, skip)) => {
                at += skip + use_tree(&rest[skip..], &prefix, &mut paths).max(1)
            }
            None => at += 1,
        }
    }
    paths
}

/// The `pub use` and `pub(crate) use` statements of `code`, and the rest of it.
fn split_reexports(code: &str) -> (Vec<&str>, String) {
    let mut reexports = Vec::new();
    let mut rest = String::new();
    let mut remaining = code;
    loop {
        let found = ["\npub use ", "\npub(crate) use "]
            .iter()
            .filter_map(|start| remaining.find(start).map(|at| (at, start.len())))
            .min();
        let Some((at, len)) = found else { break };
        rest.push_str(&remaining[..at]);
        let statement = &remaining[at + len..];
        let end = statement.find(';').unwrap_or(statement.len());
        reexports.push(&statement[..end]);
        remaining = &statement[end..];
    }
    rest.push_str(remaining);
    (reexports, rest)
}

/// The uses between the modules of one crate, at each level: for the crate and for each folder,
/// its root (`""`: `lib.rs`, or the folder's own file) and each child (with everything under it)
/// are the nodes. Each edge keeps the first path that made it, for the message.
type Levels = BTreeMap<Vec<String>, BTreeMap<String, BTreeMap<String, String>>>;

/// The levels of the crate whose source is `src`. A module of tests is in no layer. A path to
/// an item a root re-exports counts as a use of the module the item comes from, and a root's
/// re-exports are not uses of its own.
fn module_levels(src: &Path) -> Levels {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeMap<Vec<String>, String> = files
        .iter()
        .map(|file| (module_path(src, file), code_of(&fs::read_to_string(file).unwrap())))
        .filter(|(path, _)| path.last().is_none_or(|name| name != "tests"))
        .collect();
    let children_of = |parent: &[String]| -> BTreeSet<String> {
        modules
            .keys()
            .filter(|path| path.len() == parent.len() + 1 && path.starts_with(parent))
            .map(|path| path[parent.len()].clone())
            .collect()
    };
    let roots: BTreeSet<Vec<String>> = modules
        .keys()
        .filter(|module| module.is_empty() || !children_of(module).is_empty())
        .cloned()
        .collect();
    // The name each re-export gives, and the path it stands for.
    let mut reexported: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
    for root in &roots {
        let (reexports, _) = split_reexports(&modules[root]);
        for tree in reexports {
            let (prefix, tree) = match tree.strip_prefix("crate::") {
                Some(tree) => (Vec::new(), tree),
                None => (root.clone(), tree),
            };
            let mut paths = Vec::new();
            use_tree(tree, &prefix, &mut paths);
            for path in paths {
                let mut given = root.clone();
                given.extend(path.last().cloned());
                reexported.insert(given, path);
            }
        }
    }
    let resolve = |mut path: Vec<String>| -> Vec<String> {
        // A re-export of a re-export, a few deep at most.
        for _ in 0..4 {
            let Some(len) =
                (1..=path.len()).rev().find(|len| reexported.contains_key(&path[..*len]))
            else {
                break;
            };
            let mut next = reexported[&path[..len]].clone();
            next.extend_from_slice(&path[len..]);
            if next == path {
                break;
            }
            path = next;
        }
        // The module the path lands in: its longest prefix that is a module.
        (0..=path.len())
            .rev()
            .map(|len| path[..len].to_vec())
            .find(|prefix| modules.contains_key(prefix))
            .unwrap_or_default()
    };
    let mut levels = Levels::new();
    for parent in &roots {
        let node_of = |module: &[String]| -> Option<String> {
            if module == parent.as_slice() {
                Some(String::new())
            } else if module.len() > parent.len() && module.starts_with(parent) {
                Some(module[parent.len()].clone())
            } else {
                None
            }
        };
        let level = levels.entry(parent.clone()).or_default();
        for (module, code) in &modules {
            let Some(from) = node_of(module) else { continue };
            let children = children_of(module);
            let code = if roots.contains(module) { split_reexports(code).1 } else { code.clone() };
            let uses = level.entry(from.clone()).or_default();
            for path in crate_references(module, &code, &children) {
                let shown = path.join("::");
                if let Some(to) = node_of(&resolve(path))
                    && to != from
                {
                    uses.entry(to).or_insert_with(|| format!("{}: {shown}", module.join("::")));
                }
            }
        }
    }
    levels
}

/// The circles of one level, each as its nodes, the first repeated at the end.
fn circles(level: &BTreeMap<String, BTreeMap<String, String>>) -> Vec<Vec<String>> {
    fn visit(
        node: &str,
        level: &BTreeMap<String, BTreeMap<String, String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
        found: &mut Vec<Vec<String>>,
    ) {
        if let Some(start) = path.iter().position(|m| m == node) {
            let mut circle = path[start..].to_vec();
            circle.push(node.to_owned());
            found.push(circle);
            return;
        }
        if done.contains(node) {
            return;
        }
        path.push(node.to_owned());
        for next in level.get(node).into_iter().flat_map(BTreeMap::keys) {
            visit(next, level, path, done, found);
        }
        path.pop();
        done.insert(node.to_owned());
    }
    let (mut done, mut found) = (BTreeSet::new(), Vec::new());
    for node in level.keys() {
        visit(node, level, &mut Vec::new(), &mut done, &mut found);
    }
    found
}

/// A node of a level by its module's path: `a::b`, and `""` for the crate root.
fn node_name(parent: &[String], node: &str) -> String {
    let mut path = parent.to_vec();
    path.extend((!node.is_empty()).then(|| node.to_owned()));
    path.join("::")
}

/// The import circles of the crate whose source is `src`, each with the paths that make it.
fn import_circles(src: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    for (parent, level) in module_levels(src) {
        let name = |node: &str| node_name(&parent, node);
        for circle in circles(&level) {
            let shown: Vec<String> = circle
                .iter()
                .map(|node| {
                    if node.is_empty() && parent.is_empty() {
                        "(lib.rs)".to_owned()
                    } else if node.is_empty() {
                        format!("{} (its own file)", name(node))
                    } else {
                        name(node)
                    }
                })
                .collect();
            let why: Vec<&str> =
                circle.windows(2).map(|pair| level[&pair[0]][&pair[1]].as_str()).collect();
            problems.push(format!("{} (uses: {})", shown.join(" -> "), why.join("; ")));
        }
    }
    problems
}

#[test]
fn the_modules_of_every_crate_use_each_other_without_a_circle() {
    let mut problems = Vec::new();
    let mut crates = 0;
    for krate in manifests().keys() {
        let src = crates_dir().join(krate).join("src");
        if !src.is_dir() {
            continue;
        }
        crates += 1;
        problems.extend(
            import_circles(&src).into_iter().map(|circle| format!("crates/{krate}: {circle}")),
        );
    }
    assert!(crates >= 10, "only {crates} crates with a src/ found");
    assert!(
        problems.is_empty(),
        "import circles (a module uses only modules below it; ARCHITECTURE.md, Layers):\n{}",
        problems.join("\n")
    );
}

#[test]
fn a_planted_import_circle_is_found() {
    let root = test_support::TempDir::new();
    let src = root.path().join("src");
    fs::create_dir_all(src.join("folder")).unwrap();
    let files = [
        // A circle of three at the top: a -> b -> c -> a, one use through a re-export.
        ("lib.rs", "mod a;\nmod b;\nmod c;\nmod folder;\npub use c::C;\npub struct Top;\n"),
        ("a.rs", "use crate::{b::{self, B}};\npub struct A;\n"),
        (
            "b.rs",
            "pub struct B(crate::C);\n#[cfg(test)]\nmod tests {\n    use crate::folder::x;\n}\n",
        ),
        ("c.rs", "// crate::folder in a comment is no use\npub struct C(super::a::A);\n"),
        // A circle inside a folder, through its own file: x -> y -> folder -> x.
        ("folder.rs", "mod x;\nmod y;\nconst N: usize = x::M;\npub(crate) struct Shared;\n"),
        ("folder/x.rs", "pub(super) const M: usize = 1;\nfn f(_: super::y::Y) {}\n"),
        ("folder/y.rs", "pub(super) struct Y(super::Shared);\nfn g(_: crate::Top) {}\n"),
    ];
    for (name, text) in files {
        fs::write(src.join(name), text).unwrap();
    }
    let found = import_circles(&src);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found[0] == "a -> b -> c -> a (uses: a: b::self; b: C; c: a::A)", "{found:#?}");
    assert!(
        found[1]
            == "folder (its own file) -> folder::x -> folder::y -> folder (its own file) (uses: \
                folder: folder::x::M; folder::x: folder::y::Y; folder::y: folder::Shared)",
        "{found:#?}"
    );
    // Without the uses that close them, no circle: the layers are c, b, a and x, y, folder.
    fs::write(src.join("c.rs"), "pub struct C;\n").unwrap();
    fs::write(src.join("folder/y.rs"), "pub(super) struct Y;\nfn g(_: crate::Top) {}\n").unwrap();
    let layered = import_circles(&src);
    assert!(layered.is_empty(), "{layered:#?}");
}

/// String literals in adapters that are an op's name but name something else: the file, the
/// literal and what it is.
const NOT_OP_NAMES: &[(&str, &str, &str)] = &[
    ("mcp/src/prompts.rs", "find_savings", "the prompt of that name, which asks for the op"),
    ("channels/src/chat.rs", "undo", "the chat command a member types"),
    ("channels/src/telegram.rs", "undo", "the chat command in Telegram's menu"),
];

/// Every string literal of letters and underscores in `code` (`"list_subscriptions"`).
fn word_literals(code: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let mut rest = code;
    while let Some(open) = rest.find('"') {
        let after = &rest[open + 1..];
        let end =
            after.find(|c: char| !(c.is_ascii_lowercase() || c == '_')).unwrap_or(after.len());
        if end > 0 && after[end..].starts_with('"') {
            words.push(&after[..end]);
            rest = &after[end + 1..];
        } else {
            rest = after;
        }
    }
    words
}

#[test]
fn adapters_call_ops_by_type_never_by_a_name_in_a_string() {
    let names: BTreeSet<&str> = ops::all().iter().map(|meta| meta.name()).collect();
    let mut problems = Vec::new();
    let mut allowed_seen = BTreeSet::new();
    for krate in ["api", "http", "mcp", "web", "oauth", "assistant", "channels"] {
        let mut files = Vec::new();
        rust_files(&crates_dir().join(krate).join("src"), &mut files);
        for file in files.iter().filter(|file| !file.ends_with("tests.rs")) {
            let code = code_of(&fs::read_to_string(file).unwrap());
            let path = shown(file);
            for word in word_literals(&code).into_iter().filter(|word| names.contains(word)) {
                let allowed =
                    NOT_OP_NAMES.iter().find(|(at, name, _)| path.ends_with(at) && *name == word);
                match allowed {
                    Some(entry) => {
                        allowed_seen.insert(entry.0);
                    }
                    None => problems.push(format!(
                        "{path}: \"{word}\" names an op; call it by its type (ops::call::<O>, ops::call_text::<O>, O::INFO.name)"
                    )),
                }
            }
        }
    }
    for (at, name, _) in NOT_OP_NAMES {
        if !allowed_seen.contains(at) {
            problems.push(format!("{at} no longer says \"{name}\": take it off NOT_OP_NAMES"));
        }
    }
    assert!(names.len() > 50, "only {} ops", names.len());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn word_literals_are_read_as_a_string_each() {
    let code = r#"call("undo", x); let a = "two words"; match op { "get_context" => 1 } "#;
    assert_eq!(word_literals(code), ["undo", "get_context"]);
}
