//! Client ID Metadata Documents end to end: an app whose `client_id` is the HTTPS URL of its
//! document, served by a local HTTPS server with its own test authority (`DocumentHost`). The
//! good document is allowed through the consent page and its code exchanged; every bad one
//! (a redirect, too large, not JSON, lying about its `client_id`, carrying a secret, a slow
//! server, a private address) stops on a page, with nothing granted.

use std::{collections::HashMap, sync::Arc, time::Duration};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::{
    fixtures::World,
    web::{PASSWORD, Visitor},
};

const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const REDIRECT: &str = "https://app.example/callback";

/// What the host answers for a path: status, extra headers, body; `None` never answers.
pub(crate) type Answer = Option<(u16, Vec<(&'static str, String)>, String)>;

/// An HTTPS server on 127.0.0.1 for `localhost`, whose certificate a test authority signed.
pub(crate) struct DocumentHost {
    port: u16,
    /// The authority's certificate (DER), for the fetcher to trust.
    authority: Vec<u8>,
    hits: Arc<std::sync::Mutex<Vec<String>>>,
    /// Told of every request, for a test waiting on requests in flight.
    hit: Arc<tokio::sync::Notify>,
    _task: tokio::task::JoinHandle<()>,
}

impl DocumentHost {
    /// Starts the host; `answers` gets the URL of a path on it, as the documents name
    /// themselves.
    pub(crate) async fn start(
        make_answers: impl FnOnce(&dyn Fn(&str) -> String) -> HashMap<&'static str, Answer>,
    ) -> Self {
        let authority = test_support::TestAuthority::for_localhost();
        let hits = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = hits.clone();
        let hit = Arc::new(tokio::sync::Notify::new());
        let told = hit.clone();
        // The documents name the host's own addresses, known once it listens.
        let answers = Arc::new(std::sync::OnceLock::new());
        let known = answers.clone();
        let (port, task) = authority
            .serve(move |head| {
                let (answers, seen, told) = (known.clone(), seen.clone(), told.clone());
                async move {
                    let path = head.split(' ').nth(1).unwrap_or_default().to_owned();
                    seen.lock().unwrap().push(path.clone());
                    told.notify_one();
                    // An unknown path never answers: the fetcher's time limit must end it.
                    let answers: &HashMap<&'static str, Answer> = answers.get()?;
                    let (status, headers, body) = answers.get(path.as_str())?.as_ref()?;
                    let mut headers: Vec<(&str, &str)> =
                        headers.iter().map(|(name, value)| (*name, value.as_str())).collect();
                    headers.push(("Content-Type", "application/json"));
                    Some(test_support::http_reply(*status, &headers, body))
                }
            })
            .await;
        let _ = answers.set(make_answers(&|path| format!("https://localhost:{port}{path}")));
        Self { port, authority: authority.der, hits, hit, _task: task }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{path}", self.port)
    }

    /// Returns once the host has received `count` requests in all.
    async fn received(&self, count: usize) {
        while self.hits.lock().unwrap().len() < count {
            self.hit.notified().await;
        }
    }

    pub(crate) fn hits(&self, path: &str) -> usize {
        self.hits.lock().unwrap().iter().filter(|p| *p == path).count()
    }
}

fn authorize_path(client_id: &str) -> String {
    authorize_path_to(client_id, REDIRECT)
}

fn authorize_path_to(client_id: &str, redirect_uri: &str) -> String {
    let query: String = serde_urlencoded::to_string([
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", redirect_uri),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
        ("state", "s"),
    ])
    .unwrap();
    format!("/authorize?{query}")
}

/// Allows the request on the consent `page` with write; the code the browser is sent back with.
async fn approve(ana: &mut Visitor, page: &crate::web::Page) -> String {
    let decided = ana
        .post(
            "/authorize",
            &[
                ("csrf", &Visitor::hidden(page, "csrf")),
                ("request_id", &Visitor::hidden(page, "request_id")),
                ("scope", "write"),
                ("decision", "approve"),
            ],
        )
        .await;
    let location = decided.location.unwrap();
    location.split("code=").nth(1).unwrap().split('&').next().unwrap().to_owned()
}

/// The code exchanged by the public client `client_id`: the status and the answer.
async fn exchange(
    server: &test_support::TestServer,
    client_id: &str,
    redirect_uri: &str,
    code: &str,
) -> (StatusCode, Value) {
    let form = serde_urlencoded::to_string([
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", redirect_uri),
        ("code_verifier", VERIFIER),
        ("client_id", client_id),
    ])
    .unwrap();
    let exchanged = reqwest::Client::new()
        .post(server.url("/token"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await
        .unwrap();
    (exchanged.status(), exchanged.json().await.unwrap())
}

fn document(client_id: &str, extra: Value) -> String {
    let mut document = json!({"client_id": client_id, "client_name": "Documented app", "redirect_uris": [REDIRECT]});
    document.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    document.to_string()
}

pub(crate) fn ok(body: String) -> Answer {
    Some((200, vec![("Cache-Control", "max-age=600".to_owned())], body))
}

/// The app is served with the fetcher trusting the host's authority, on loopback only
/// because Exhale itself is (the carve-out of the draft's section 6.5).
pub(crate) fn trust(w: &World, host: &DocumentHost, allow_loopback: bool) {
    let documents = oauth::Documents::new(oauth::DocumentsConfig {
        allow_loopback,
        extra_roots: vec![host.authority.clone()],
        timeout: Duration::from_millis(1500),
    })
    .unwrap();
    w.env.app.set_metadata_documents(Some(Arc::new(documents)));
}

#[tokio::test]
async fn an_app_named_by_its_metadata_document_connects_and_bad_documents_stop_on_a_page() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let host = DocumentHost::start(|url| {
        HashMap::from([
            ("/client.json", ok(document(&url("/client.json"), json!({})))),
            ("/redirect.json", Some((302, vec![("Location", url("/client.json"))], String::new()))),
            (
                "/large.json",
                ok(document(&url("/large.json"), json!({"logo_uri": "x".repeat(6000)}))),
            ),
            ("/html.json", ok("<html>hello</html>".to_owned())),
            ("/lying.json", ok(document(&url("/lying.json/"), json!({})))),
            ("/secret.json", ok(document(&url("/secret.json"), json!({"client_secret": "s"})))),
            (
                "/basic.json",
                ok(document(
                    &url("/basic.json"),
                    json!({"token_endpoint_auth_method": "client_secret_basic"}),
                )),
            ),
            ("/gone.json", Some((404, Vec::new(), "{}".to_owned()))),
            ("/slow.json", None),
            (
                "/chatgpt.json",
                ok(document(
                    &url("/chatgpt.json"),
                    json!({"token_endpoint_auth_method": "private_key_jwt",
                "token_endpoint_auth_methods_supported": ["none", "private_key_jwt"]}),
                )),
            ),
        ])
    })
    .await;
    trust(&w, &host, true);
    let metadata: Value = reqwest::get(server.url("/.well-known/oauth-authorization-server"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(metadata["client_id_metadata_document_supported"], true);

    let mut ana = Visitor::new(&server);
    ana.sign_in("ana@a.test", PASSWORD).await;
    let client_id = host.url("/client.json");
    let page = ana.get(&authorize_path(&client_id)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(
        page.body.contains("Documented app") && page.body.contains("data-testid=\"described-at\"")
    );
    assert!(page.body.contains("app.example"), "the redirect host is shown");
    let code = approve(&mut ana, &page).await;
    let (status, tokens) = exchange(&server, &client_id, REDIRECT, &code).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    // Kept for its max-age: a second authorization does not fetch it again.
    assert_eq!(ana.get(&authorize_path(&client_id)).await.status, StatusCode::OK);
    assert_eq!(host.hits("/client.json"), 1);

    // A document that stands as ChatGPT's does (private_key_jwt, but none listed) is public.
    assert_eq!(ana.get(&authorize_path(&host.url("/chatgpt.json"))).await.status, StatusCode::OK);

    for (path, why) in [
        ("/redirect.json", "a redirect, which Exhale does not follow"),
        ("/large.json", "larger than 5120 bytes"),
        ("/html.json", "not JSON"),
        ("/lying.json", "its client_id is not"),
        ("/secret.json", "client secret"),
        ("/basic.json", "client_secret_basic"),
        ("/gone.json", "404"),
        ("/slow.json", "did not answer in time"),
    ] {
        let page = ana.get(&authorize_path(&host.url(path))).await;
        assert_eq!(page.status, StatusCode::BAD_REQUEST, "{path}");
        assert!(page.location.is_none(), "{path}: no redirect to an app that is not known");
        assert!(
            crate::web::unescape(&page.body).contains(why),
            "{path} should say {why}:\n{}",
            page.body
        );
    }
    // Errors are not kept: the same bad URL is fetched again next time.
    ana.get(&authorize_path(&host.url("/html.json"))).await;
    assert_eq!(host.hits("/html.json"), 2);
    let apps = w.env.call(&w.ana, "list_connected_apps", json!({})).await.unwrap();
    assert_eq!(apps["items"].as_array().unwrap().len(), 1, "only the good document was granted");
}

#[tokio::test]
async fn a_document_on_a_private_address_is_never_fetched() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let host = DocumentHost::start(|url| {
        HashMap::from([("/client.json", ok(document(&url("/client.json"), json!({}))))])
    })
    .await;
    // Exhale on a public origin: loopback is as private as any other address.
    trust(&w, &host, false);
    let mut ana = Visitor::new(&server);
    ana.sign_in("ana@a.test", PASSWORD).await;
    let private = "private or special-use address";
    for (client_id, why) in [
        (host.url("/client.json"), private),
        (format!("https://127.0.0.1:{}/client.json", host.port), private),
        ("https://10.0.0.1/client.json".to_owned(), private),
        // 127.0.0.1 in disguise: IPv4-mapped, and SIIT's IPv4-translated (::ffff:0:0:0/96),
        // each written as a browser writes it.
        ("https://[::ffff:7f00:1]/client.json".to_owned(), private),
        ("https://[::ffff:0:7f00:1]/client.json".to_owned(), private),
        // Other spellings of an address are not the one a browser writes: a client id is
        // compared as written, so it must be written plainly (and 127.0.0.1 is refused above).
        (
            "https://[::ffff:127.0.0.1]/client.json".to_owned(),
            "https://[::ffff:7f00:1]/client.json",
        ),
        ("https://2130706433/client.json".to_owned(), "https://127.0.0.1/client.json"),
        ("https://app.example/".to_owned(), "no path"),
        // Not https: not a document, so an unknown client.
        ("http://app.example/client.json".to_owned(), "not registered"),
    ] {
        let page = ana.get(&authorize_path(&client_id)).await;
        assert_eq!(page.status, StatusCode::BAD_REQUEST, "{client_id}");
        assert!(page.location.is_none());
        let text = crate::web::unescape(&page.body);
        assert!(text.contains(why), "{client_id} should say {why}: {text}");
    }
    assert_eq!(host.hits("/client.json"), 0, "nothing reached the private host");
}

/// claude.ai as a rented server's fetch meets it: a bot challenge instead of the document.
/// (The real fetcher's handling of a 403 is tested against `DocumentHost` above; claude.ai
/// cannot run here.)
struct BotWall(std::sync::Mutex<Vec<String>>);

impl ops::oauth::MetadataDocuments for BotWall {
    fn fetch<'a>(
        &'a self,
        url: &'a str,
    ) -> ops::BoxFuture<'a, Result<ops::oauth::FetchedDocument, String>> {
        self.0.lock().unwrap().push(url.to_owned());
        Box::pin(async { Err("it answered 403 Forbidden".to_owned()) })
    }
}

#[tokio::test]
async fn a_well_known_app_whose_host_refuses_the_fetch_connects_from_exhales_table() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let wall = Arc::new(BotWall(std::sync::Mutex::default()));
    w.env.app.set_metadata_documents(Some(wall.clone()));
    let claude = "https://claude.ai/oauth/mcp-oauth-client-metadata";
    let callback = "https://claude.ai/api/mcp/auth_callback";
    let mut ana = Visitor::new(&server);
    ana.sign_in("ana@a.test", PASSWORD).await;

    // The vendor's redirect URIs only: the table vouches for nothing else.
    let elsewhere = ana.get(&authorize_path_to(claude, "https://evil.example/callback")).await;
    assert_eq!(elsewhere.status, StatusCode::BAD_REQUEST, "{}", elsewhere.body);
    assert!(elsewhere.location.is_none());
    // An app Exhale does not know stops on the fetch's own reason.
    let unknown =
        ana.get(&authorize_path_to("https://unknown.example/client.json", callback)).await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST);
    assert!(unknown.body.contains("it answered 403 Forbidden"), "{}", unknown.body);

    let page = ana.get(&authorize_path_to(claude, callback)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(page.body.contains("data-testid=\"client-name\">Claude<"), "{}", page.body);
    assert!(page.body.contains("<code>claude.ai</code>"), "{}", page.body);
    let code = approve(&mut ana, &page).await;
    let (status, tokens) = exchange(&server, claude, callback, &code).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    assert_eq!(tokens["scope"], "read write", "{tokens}");
    // The live document was asked for each time it was not kept: a success would have won.
    assert!(wall.0.lock().unwrap().iter().any(|url| url == claude));
}

#[tokio::test]
async fn at_most_four_documents_are_fetched_at_once_and_a_fifth_is_told_to_wait() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let slow = ["/slow-1.json", "/slow-2.json", "/slow-3.json", "/slow-4.json", "/slow-5.json"];
    let host = DocumentHost::start(|_| slow.iter().map(|path| (*path, None)).collect()).await;
    trust(&w, &host, true);
    let mut people = Vec::new();
    for _ in 0..5 {
        let mut ana = Visitor::new(&server);
        ana.sign_in("ana@a.test", PASSWORD).await;
        people.push(ana);
    }
    let [mut first, mut second, mut third, mut fourth, mut fifth] = people.try_into().ok().unwrap();
    let paths: Vec<String> = slow.iter().map(|path| authorize_path(&host.url(path))).collect();
    let (one, two, three, four, five) = tokio::join!(
        first.get(&paths[0]),
        second.get(&paths[1]),
        third.get(&paths[2]),
        fourth.get(&paths[3]),
        async {
            host.received(4).await;
            fifth.get(&paths[4]).await
        },
    );
    let text = crate::web::unescape(&five.body);
    assert_eq!(five.status, StatusCode::BAD_REQUEST);
    assert!(text.contains("already fetching 4 app descriptions"), "{text}");
    for page in [one, two, three, four] {
        assert!(
            crate::web::unescape(&page.body).contains("did not answer in time"),
            "{}",
            page.body
        );
    }
    assert_eq!(host.hits(slow[4]), 0, "the fifth was never fetched");
}
