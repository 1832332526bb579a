//! OAuth 2.1 end to end on the real server: discovery from the `/mcp` challenge, registration,
//! the consent page driven through its real form, the code exchange with PKCE, MCP and REST
//! calls with the access token, refresh with rotation, revocation; and the checklist of what
//! must be refused (oauth.md section 12): code reuse, PKCE downgrade, redirect mismatch, state,
//! CSRF on consent, refresh replay, another household's data, registration abuse, step-up,
//! trusted only where an owner allows it, and no secret of the flow in the server's log.

use reqwest::{StatusCode, redirect::Policy};
use serde_json::{Value, json};
use test_support::TestServer;

use crate::{
    fixtures::World,
    mcp::{call, http_client, text},
    web::{PASSWORD, Visitor},
};

/// RFC 7636 appendix B.
pub(crate) const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
pub(crate) const REDIRECT: &str = "http://127.0.0.1:9999/callback";

/// A running Exhale: the in-process test server, or a spawned `exhale serve` at its URL.
pub(crate) trait Served {
    fn url(&self, path: &str) -> String;
}

impl Served for TestServer {
    fn url(&self, path: &str) -> String {
        TestServer::url(self, path)
    }
}

impl Served for String {
    fn url(&self, path: &str) -> String {
        format!("{self}{path}")
    }
}

fn http() -> reqwest::Client {
    reqwest::Client::builder().redirect(Policy::none()).build().unwrap()
}

fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn query(pairs: &[(&str, &str)]) -> String {
    pairs.iter().map(|(k, v)| format!("{k}={}", encode(v))).collect::<Vec<_>>().join("&")
}

/// The value of `name` in a URL's query, decoded.
pub(crate) fn param(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query).ok()?;
    pairs.into_iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

async fn register(server: &impl Served, body: Value) -> (StatusCode, Value) {
    let response = http().post(server.url("/register")).json(&body).send().await.unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn public_client(server: &impl Served, name: &str) -> String {
    public_client_to(server, name, REDIRECT).await
}

/// Registers a public client as native apps do, sending people back to `redirect`; its id.
pub(crate) async fn public_client_to(server: &impl Served, name: &str, redirect: &str) -> String {
    let (status, client) = register(
        server,
        json!({"client_name": name, "redirect_uris": [redirect], "token_endpoint_auth_method": "none",
               "grant_types": ["authorization_code", "refresh_token"], "application_type": "native"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{client}");
    client["client_id"].as_str().unwrap().to_owned()
}

/// The authorization URL a client builds, with `extra` replacing or adding parameters.
pub(crate) fn authorize_path(client_id: &str, extra: &[(&str, &str)]) -> String {
    let mut pairs = vec![
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", REDIRECT),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
        ("state", "xyz"),
        ("scope", "read write"),
    ];
    for (key, value) in extra {
        pairs.retain(|(k, _)| k != key);
        if !value.is_empty() {
            pairs.push((key, value));
        }
    }
    format!("/authorize?{}", query(&pairs))
}

/// Signs in (if needed), opens the consent page and answers it; the `Location` the browser is
/// sent to.
pub(crate) async fn consent(
    visitor: &mut Visitor,
    path: &str,
    scope: &str,
    decision: &str,
) -> String {
    let page = visitor.get(path).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let answered = visitor
        .post(
            "/authorize",
            &[
                ("csrf", &Visitor::hidden(&page, "csrf")),
                ("request_id", &Visitor::hidden(&page, "request_id")),
                ("scope", scope),
                ("decision", decision),
            ],
        )
        .await;
    assert_eq!(answered.status, StatusCode::SEE_OTHER, "{}", answered.body);
    answered.location.unwrap()
}

pub(crate) async fn token(server: &impl Served, form: &[(&str, &str)]) -> (StatusCode, Value) {
    let response = http()
        .post(server.url("/token"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(query(form))
        .send()
        .await
        .unwrap();
    let status = response.status();
    if status == StatusCode::OK {
        assert_eq!(response.headers()["cache-control"], "no-store");
    }
    (status, response.json().await.unwrap())
}

async fn exchange(server: &impl Served, client_id: &str, code: &str) -> (StatusCode, Value) {
    token(
        server,
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", REDIRECT),
            ("code_verifier", VERIFIER),
            ("client_id", client_id),
            ("resource", &server.url("/mcp")),
        ],
    )
    .await
}

pub(crate) async fn refresh(
    server: &impl Served,
    client_id: &str,
    refresh_token: &str,
) -> (StatusCode, Value) {
    token(
        server,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("client_id", client_id),
        ],
    )
    .await
}

/// A REST call with a bearer token: its status and body.
async fn rest(server: &impl Served, token: &str, op: &str, input: Value) -> (StatusCode, Value) {
    let response = http()
        .post(server.url(&format!("/api/v1/ops/{op}")))
        .bearer_auth(token)
        .json(&input)
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// An MCP `initialize` request, with or without a bearer token.
async fn initialize(server: &impl Served, token: Option<&str>) -> reqwest::Response {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    let mut request = http()
        .post(server.url("/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request.send().await.unwrap()
}

/// Ana signs in, connects `client_id` with `scope` and gets its tokens.
async fn connected(server: &impl Served, client_id: &str, scope: &str) -> Value {
    let mut ana = Visitor::at(&server.url(""));
    ana.sign_in("ana@a.test", PASSWORD).await;
    let location = consent(&mut ana, &authorize_path(client_id, &[]), scope, "approve").await;
    let code = param(&location, "code").unwrap();
    let (status, tokens) = exchange(server, client_id, &code).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    tokens
}

#[tokio::test]
async fn an_app_is_discovered_registered_consented_calls_mcp_refreshes_and_is_revoked() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let origin = server.url("");

    // Discovery starts at /mcp's challenge, which names the resource metadata and no error.
    let anonymous = initialize(&server, None).await;
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    let challenge = anonymous.headers()["www-authenticate"].to_str().unwrap().to_owned();
    let metadata_url = format!("{origin}/.well-known/oauth-protected-resource/mcp");
    assert_eq!(
        challenge,
        format!("Bearer resource_metadata=\"{metadata_url}\", scope=\"read write\"")
    );
    for path in
        ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]
    {
        let document: Value =
            http().get(server.url(path)).send().await.unwrap().json().await.unwrap();
        assert_eq!(document["resource"], format!("{origin}/mcp"), "{path}");
        assert_eq!(document["authorization_servers"], json!([origin]), "{path}");
        assert_eq!(document["scopes_supported"], json!(["read", "write"]));
    }
    let metadata: Value = http()
        .get(server.url("/.well-known/oauth-authorization-server"))
        .header("host", "evil.example")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(metadata["issuer"], origin, "the issuer is configured, never the Host header");
    assert_eq!(metadata["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(metadata["authorization_response_iss_parameter_supported"], true);
    assert_eq!(metadata["token_endpoint"], format!("{origin}/token"));
    let oidc = http().get(server.url("/.well-known/openid-configuration")).send().await.unwrap();
    assert_eq!(oidc.status(), StatusCode::NOT_FOUND, "Exhale is not an OpenID provider");

    // Registration, then the browser: sign in first, then the consent page.
    let client_id = public_client(&server, "Claude").await;
    assert!(!client_id.starts_with("https://"));
    let mut ana = Visitor::new(&server);
    let path = authorize_path(&client_id, &[("resource", &format!("{origin}/mcp"))]);
    let bounced = ana.get(&path).await;
    assert_eq!(bounced.status, StatusCode::SEE_OTHER);
    assert!(bounced.location.as_deref().unwrap().starts_with("/sign-in?next="));
    ana.sign_in("ana@a.test", PASSWORD).await;
    let page = ana.get(&path).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("Claude") && page.body.contains("not verified"));
    assert!(page.body.contains("127.0.0.1"), "the redirect host is shown");
    assert!(page.body.contains("on your own computer"), "a loopback redirect is warned about");
    let policy = page.headers["content-security-policy"].to_str().unwrap();
    assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
    assert!(policy.contains("form-action 'self' http://127.0.0.1:9999"), "{policy}");
    assert_eq!(page.headers["x-frame-options"], "DENY");
    assert!(page.headers["cache-control"].to_str().unwrap().contains("no-store"));
    let answered = ana
        .post(
            "/authorize",
            &[
                ("csrf", &Visitor::hidden(&page, "csrf")),
                ("request_id", &Visitor::hidden(&page, "request_id")),
                ("scope", "write"),
                ("decision", "approve"),
            ],
        )
        .await;
    assert_eq!(answered.status, StatusCode::SEE_OTHER, "303, never 307");
    let location = answered.location.unwrap();
    assert!(location.starts_with(&format!("{REDIRECT}?code=exhcode_")), "{location}");
    assert_eq!(param(&location, "state").as_deref(), Some("xyz"));
    assert_eq!(param(&location, "iss").as_deref(), Some(origin.as_str()));

    // The code buys an access token for an hour and a refresh token.
    let code = param(&location, "code").unwrap();
    let (status, tokens) = exchange(&server, &client_id, &code).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    assert_eq!(tokens["token_type"], "Bearer");
    assert_eq!(tokens["expires_in"], 3600);
    assert_eq!(tokens["scope"], "read write");
    let access = tokens["access_token"].as_str().unwrap().to_owned();
    let refresh_token = tokens["refresh_token"].as_str().unwrap().to_owned();

    // A real MCP client with the access token; the change it makes is audited as the app's.
    let mcp = http_client(server.url("/mcp"), &access, "Claude").await;
    let listed = text(&call(&mcp, "list_subscriptions", json!({})).await);
    assert!(listed.contains("Netflix") && !listed.contains("Bob's gym"), "{listed}");
    let created = call(&mcp, "create_category", json!({"name": "Board games"})).await;
    assert_ne!(created.is_error, Some(true), "{}", text(&created));
    drop(mcp);
    let activity = w.env.call(&w.ana, "list_activity", json!({})).await.unwrap();
    let entry = &activity["items"][0];
    assert_eq!(entry["actor"]["kind"], "agent");
    assert_eq!(entry["actor"]["label"], "Claude for Home owner", "{entry}");

    // The same token works over REST; in a URL's query it works nowhere.
    let (status, _) = rest(&server, &access, "list_categories", json!({})).await;
    assert_eq!(status, StatusCode::OK);
    let in_query = http()
        .post(server.url(&format!("/mcp?access_token={access}")))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(in_query.status(), StatusCode::UNAUTHORIZED);

    // Refresh rotates; a retry within a minute gets the same pair.
    let (status, renewed) = refresh(&server, &client_id, &refresh_token).await;
    assert_eq!(status, StatusCode::OK, "{renewed}");
    assert_ne!(renewed["refresh_token"], refresh_token.as_str());
    let (_, retried) = refresh(&server, &client_id, &refresh_token).await;
    assert_eq!(retried, renewed, "a lost answer is answered again");
    // Two refreshes of one token at once: one new pair, which both are given. (Rounds, as the
    // race between them is won either way.)
    let mut renewed = renewed;
    for _ in 0..10 {
        let next = renewed["refresh_token"].as_str().unwrap();
        let (first, second) =
            tokio::join!(refresh(&server, &client_id, next), refresh(&server, &client_id, next));
        assert_eq!(first.0, StatusCode::OK, "{}", first.1);
        assert_eq!(first, second, "no second pair is issued");
        renewed = first.1;
    }
    let new_access = renewed["access_token"].as_str().unwrap().to_owned();
    let (status, _) = rest(&server, &new_access, "list_categories", json!({})).await;
    assert_eq!(status, StatusCode::OK);

    // The connection shows on the person's side, and revoking the refresh token ends it.
    let revoked = http()
        .post(server.url("/revoke"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(query(&[
            ("token", renewed["refresh_token"].as_str().unwrap()),
            ("client_id", &client_id),
        ]))
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), StatusCode::OK);
    let (status, _) = rest(&server, &new_access, "list_categories", json!({})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "the family's access tokens go with it");
    let refused = initialize(&server, Some(&new_access)).await;
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    let challenge = refused.headers()["www-authenticate"].to_str().unwrap();
    assert!(challenge.ends_with("error=\"invalid_token\""), "{challenge}");
}

#[tokio::test]
async fn a_code_works_once_with_its_verifier_and_a_replay_withdraws_what_it_gave() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let client_id = public_client(&server, "Replayer").await;
    let mut ana = Visitor::new(&server);
    ana.sign_in("ana@a.test", PASSWORD).await;

    // A wrong verifier spends the code: the right one cannot follow.
    let location = consent(&mut ana, &authorize_path(&client_id, &[]), "write", "approve").await;
    let code = param(&location, "code").unwrap();
    for verifier in ["", "short", &"a".repeat(43)] {
        let (status, error) = token(
            &server,
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", REDIRECT),
                ("code_verifier", verifier),
                ("client_id", &client_id),
            ],
        )
        .await;
        assert_eq!(
            (status, error["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("invalid_grant"))
        );
    }
    let (status, _) = exchange(&server, &client_id, &code).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "the code was spent by the failed attempt");

    // Used twice: the second use revokes the tokens of the first.
    let location = consent(&mut ana, &authorize_path(&client_id, &[]), "write", "approve").await;
    let code = param(&location, "code").unwrap();
    let (status, tokens) = exchange(&server, &client_id, &code).await;
    assert_eq!(status, StatusCode::OK);
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(rest(&server, access, "list_categories", json!({})).await.0, StatusCode::OK);
    let (status, error) = exchange(&server, &client_id, &code).await;
    assert_eq!((status, error["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_grant")));
    assert_eq!(
        rest(&server, access, "list_categories", json!({})).await.0,
        StatusCode::UNAUTHORIZED
    );
    let (status, _) = refresh(&server, &client_id, tokens["refresh_token"].as_str().unwrap()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    // Another client, another redirect URI, or an old code: refused.
    let other = public_client(&server, "Other").await;
    let location = consent(&mut ana, &authorize_path(&client_id, &[]), "write", "approve").await;
    let (status, _) = exchange(&server, &other, &param(&location, "code").unwrap()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "a code is its client's");
    let location = consent(&mut ana, &authorize_path(&client_id, &[]), "write", "approve").await;
    let (status, _) = token(
        &server,
        &[
            ("grant_type", "authorization_code"),
            ("code", &param(&location, "code").unwrap()),
            ("redirect_uri", "http://127.0.0.1:9999/other"),
            ("code_verifier", VERIFIER),
            ("client_id", &client_id),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "the redirect URI must be the one authorized");
    let location = consent(&mut ana, &authorize_path(&client_id, &[]), "write", "approve").await;
    w.env.clock.advance(jiff::SignedDuration::from_secs(61));
    let (status, _) = exchange(&server, &client_id, &param(&location, "code").unwrap()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "a code lives a minute");
}

#[tokio::test]
async fn authorization_requests_that_cannot_be_trusted_stop_or_go_back_with_the_error() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let origin = server.url("");
    let client_id = public_client(&server, "Client").await;
    let mut ana = Visitor::new(&server);
    ana.sign_in("ana@a.test", PASSWORD).await;

    // Unknown client, unregistered redirect URI: a page, and no redirect anywhere.
    for path in [
        authorize_path("exhclient_unknown", &[]),
        authorize_path(&client_id, &[("redirect_uri", "https://evil.example/callback")]),
        authorize_path(&client_id, &[("redirect_uri", "http://127.0.0.1:9999/callback/")]),
    ] {
        let page = ana.get(&path).await;
        assert_eq!(page.status, StatusCode::BAD_REQUEST, "{path}");
        assert!(page.location.is_none());
    }
    // A loopback redirect URI matches on any port.
    let page = ana
        .get(&authorize_path(&client_id, &[("redirect_uri", "http://127.0.0.1:5555/callback")]))
        .await;
    assert_eq!(page.status, StatusCode::OK);
    // What a browser reads as another host never matches one registered as this computer,
    // however it is written (the outside test's code went to evil.example).
    let v6 = public_client_to(&server, "IPv6 app", "http://[::1]/cb").await;
    for presented in [
        "http://[::1]@evil.example/cb",
        "http://[::1]:80@evil.example/cb",
        "http://[::1]%40evil.example/cb",
        "http://[::1].evil.example/cb",
    ] {
        let page = ana.get(&authorize_path(&v6, &[("redirect_uri", presented)])).await;
        assert_eq!(page.status, StatusCode::BAD_REQUEST, "{presented}");
        assert!(page.location.is_none(), "{presented}");
    }
    let page = ana.get(&authorize_path(&v6, &[("redirect_uri", "http://[::1]:4242/cb")])).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("<code>[::1]</code>"), "the consent page names the host");

    // Once the client and redirect are known: the error goes back, with state and iss.
    let weird_state = "a+b%c ñ".repeat(100);
    for (extra, error) in [
        (vec![("code_challenge", "")], "invalid_request"),
        (vec![("code_challenge_method", "plain")], "invalid_request"),
        (vec![("code_challenge_method", "")], "invalid_request"),
        (vec![("response_type", "token")], "unsupported_response_type"),
        (vec![("resource", "https://evil.example/mcp")], "invalid_target"),
        (vec![("state", weird_state.as_str()), ("code_challenge", "short")], "invalid_request"),
    ] {
        let page = ana.get(&authorize_path(&client_id, &extra)).await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{extra:?}");
        let location = page.location.unwrap();
        assert!(location.starts_with(REDIRECT));
        assert_eq!(param(&location, "error").as_deref(), Some(error), "{extra:?}");
        assert_eq!(param(&location, "iss").as_deref(), Some(origin.as_str()));
        let state = extra.iter().find(|(k, _)| *k == "state").map_or("xyz", |(_, v)| v);
        assert_eq!(param(&location, "state").as_deref(), Some(state), "state comes back exactly");
    }
    // Resource aliases real clients send are the same resource.
    for alias in [format!("{origin}/mcp/"), origin.clone(), format!("{origin}/")] {
        let page = ana.get(&authorize_path(&client_id, &[("resource", &alias)])).await;
        assert_eq!(page.status, StatusCode::OK, "{alias}");
    }

    // Deny goes back with access_denied; no state when none was sent.
    let location =
        consent(&mut ana, &authorize_path(&client_id, &[("state", "")]), "write", "deny").await;
    assert_eq!(param(&location, "error").as_deref(), Some("access_denied"));
    assert_eq!(param(&location, "state"), None);
    assert_eq!(param(&location, "iss").as_deref(), Some(origin.as_str()));

    // The consent form: the session's CSRF token, the person's own request, once.
    let page = ana.get(&authorize_path(&client_id, &[])).await;
    let request_id = Visitor::hidden(&page, "request_id");
    let forged = ana
        .post(
            "/authorize",
            &[
                ("csrf", "forged"),
                ("request_id", &request_id),
                ("scope", "write"),
                ("decision", "approve"),
            ],
        )
        .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    assert!(forged.location.is_none());
    let mut cai = Visitor::new(&server);
    cai.sign_in("cai@b.test", PASSWORD).await;
    let cais_page = cai.get("/settings").await;
    let stolen = cai
        .post(
            "/authorize",
            &[
                ("csrf", &Visitor::hidden(&cais_page, "csrf")),
                ("request_id", &request_id),
                ("scope", "write"),
                ("decision", "approve"),
            ],
        )
        .await;
    assert_eq!(stolen.status, StatusCode::BAD_REQUEST, "another person's request is not theirs");
    assert!(stolen.location.is_none());
    let csrf = Visitor::hidden(&page, "csrf");
    let once = [
        ("csrf", csrf.as_str()),
        ("request_id", request_id.as_str()),
        ("scope", "read"),
        ("decision", "approve"),
    ];
    let first = ana.post("/authorize", &once).await;
    assert_eq!(first.status, StatusCode::SEE_OTHER, "Cai's try did not use Ana's request up");
    let again = ana.post("/authorize", &once).await;
    assert_eq!(again.status, StatusCode::BAD_REQUEST, "a request is answered once");

    // Narrowed on the page: a read-only grant, whatever the app asked for.
    let (_, tokens) =
        exchange(&server, &client_id, &param(&first.location.unwrap(), "code").unwrap()).await;
    assert_eq!(tokens["scope"], "read");
    let access = tokens["access_token"].as_str().unwrap();
    let (status, refused) = rest(&server, access, "create_category", json!({"name": "X"})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
    let (status, widened) = token(
        &server,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
            ("client_id", &client_id),
            ("scope", "read write"),
        ],
    )
    .await;
    assert_eq!(
        (status, widened["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_scope"))
    );
}

#[tokio::test]
async fn a_refresh_token_replayed_at_another_instance_after_its_minute_ends_the_family_on_both() {
    let w = World::new().await;
    let first = w.env.serve().await;
    let second = w.env.serve_another_instance(&first).await;
    let client_id = public_client(&first, "Leaky").await;
    let tokens = connected(&first, &client_id, "write").await;
    let stolen = tokens["refresh_token"].as_str().unwrap();
    let (status, rotated) = refresh(&first, &client_id, stolen).await;
    assert_eq!(status, StatusCode::OK, "{rotated}");
    let access = rotated["access_token"].as_str().unwrap();
    for server in [&first, &second] {
        assert_eq!(rest(server, access, "list_categories", json!({})).await.0, StatusCode::OK);
    }
    w.env.clock.advance(jiff::SignedDuration::from_secs(61));
    let (status, error) = refresh(&second, &client_id, stolen).await;
    assert_eq!((status, error["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_grant")));
    // The replay, seen by one instance, ends what the family gave on both.
    for server in [&first, &second] {
        assert_eq!(
            rest(server, access, "list_categories", json!({})).await.0,
            StatusCode::UNAUTHORIZED
        );
        let successor = rotated["refresh_token"].as_str().unwrap();
        let (status, _) = refresh(server, &client_id, successor).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "the successor went with the family");
    }
}

#[tokio::test]
async fn a_refresh_token_used_again_after_a_minute_ends_its_whole_family() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let client_id = public_client(&server, "Leaky").await;
    let tokens = connected(&server, &client_id, "write").await;
    let first = tokens["refresh_token"].as_str().unwrap();
    let (_, second) = refresh(&server, &client_id, first).await;
    let other = public_client(&server, "Thief").await;
    let (status, error) = refresh(&server, &other, second["refresh_token"].as_str().unwrap()).await;
    assert_eq!((status, error["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_grant")));
    // Within the retry window, the rotated token's pair goes to its own client only: neither
    // another public client nor a confidential one with its own secret gets it.
    let (status, error) = refresh(&server, &other, first).await;
    assert_eq!(
        (status, error["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant")),
        "{error}"
    );
    let (_, confidential) = register(
        &server,
        json!({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "client_secret_post"}),
    )
    .await;
    let (status, error) = token(
        &server,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", first),
            ("client_id", confidential["client_id"].as_str().unwrap()),
            ("client_secret", confidential["client_secret"].as_str().unwrap()),
        ],
    )
    .await;
    assert_eq!((status, error["error"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_grant")));
    let (status, retried) = refresh(&server, &client_id, first).await;
    assert_eq!((status, &retried), (StatusCode::OK, &second), "its own client's retry still works");
    w.env.clock.advance(jiff::SignedDuration::from_secs(61));
    let (status, _) = refresh(&server, &client_id, first).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "replayed after the retry window");
    let access = second["access_token"].as_str().unwrap();
    assert_eq!(
        rest(&server, access, "list_categories", json!({})).await.0,
        StatusCode::UNAUTHORIZED
    );
    let (status, _) = refresh(&server, &client_id, second["refresh_token"].as_str().unwrap()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "the successor went with the family");

    // An access token lives an hour.
    let tokens = connected(&server, &client_id, "write").await;
    let access = tokens["access_token"].as_str().unwrap();
    w.env.clock.advance(jiff::SignedDuration::from_secs(3601));
    assert_eq!(
        rest(&server, access, "list_categories", json!({})).await.0,
        StatusCode::UNAUTHORIZED
    );
    let (status, _) = refresh(&server, &client_id, tokens["refresh_token"].as_str().unwrap()).await;
    assert_eq!(status, StatusCode::OK, "and is renewed by its refresh token");

    // What expired more than a day ago is deleted as new tokens are issued: after 32 days
    // only the newest pair and its code are left.
    w.env.clock.advance(jiff::SignedDuration::from_hours(32 * 24));
    connected(&server, &client_id, "read").await;
    let dump = w.env.dump().await;
    let rows = |table: &str| {
        let section = dump.split(&format!("## {table}\n")).nth(1).unwrap();
        section.lines().take_while(|line| !line.starts_with("## ")).count()
    };
    assert_eq!((rows("oauth_tokens"), rows("oauth_codes")), (2, 1), "{dump}");
}

#[tokio::test]
async fn an_apps_token_sees_what_its_person_sees_and_nothing_of_another_household() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let client_id = public_client(&server, "Reader").await;
    let tokens = connected(&server, &client_id, "read").await;
    let access = tokens["access_token"].as_str().unwrap();
    for id in [w.bobs_gym, w.other_household_sub] {
        let (status, body) = rest(&server, access, "get_subscription", json!({"id": id})).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    }
    let (_, listed) = rest(&server, access, "list_subscriptions", json!({})).await;
    let names: Vec<&str> =
        listed["items"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"Netflix") && !names.contains(&"Bob's gym"), "{names:?}");
    // A read grant cannot create tokens or see the household's other credentials.
    let (status, _) =
        rest(&server, access, "create_token", json!({"name": "x", "scope": "read"})).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn a_read_only_app_is_told_which_scope_to_ask_for_and_an_api_token_is_told_in_the_result() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let origin = server.url("");
    let client_id = public_client(&server, "Reader").await;
    let tokens = connected(&server, &client_id, "read").await;
    let access = tokens["access_token"].as_str().unwrap();

    // The app lists only what it may call.
    let mcp = http_client(server.url("/mcp"), access, "Reader").await;
    let tools = mcp.list_all_tools().await.unwrap();
    assert!(!tools.is_empty());
    // A connected app lists the default set: its reads, and call_tool for the rest.
    assert!(tools.iter().any(|t| t.name == "call_tool"));
    assert!(!tools.iter().any(|t| t.name == "list_rules"), "list_rules is found, not listed");
    let through = call(&mcp, "call_tool", json!({"name": "list_rules"})).await;
    assert_ne!(through.is_error, Some(true), "{}", text(&through));
    assert!(
        tools.iter().filter(|t| t.name != "call_tool").all(|t| ops::find(&t.name)
            .unwrap()
            .info
            .hints
            .read_only)
    );
    let read = call(&mcp, "list_categories", json!({})).await;
    assert_ne!(read.is_error, Some(true), "{}", text(&read));
    // No consent could open an op agents may never call: that stays a tool result, as every
    // refusal is for an API token.
    let excluded = call(&mcp, "create_token", json!({"name": "mine", "scope": "read"})).await;
    assert_eq!(excluded.is_error, Some(true));
    assert!(text(&excluded).starts_with("forbidden"), "{}", text(&excluded));
    // Calling a write anyway: 403 with the scope to ask the person for (step-up), which the
    // real client reads as such.
    let Value::Object(arguments) = json!({"name": "Pets"}) else { unreachable!() };
    let refused = mcp
        .call_tool(
            rmcp::model::CallToolRequestParams::new("create_category").with_arguments(arguments),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.ends_with("error: Insufficient scope"), "{refused}");
    drop(mcp);

    let raw = |body: Value| {
        http()
            .post(server.url("/mcp"))
            .bearer_auth(access)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .body(body.to_string())
            .send()
    };
    let write = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "create_category", "arguments": {"name": "Pets"}}});
    let answer = raw(write).await.unwrap();
    assert_eq!(answer.status(), StatusCode::FORBIDDEN);
    let challenge = answer.headers()["www-authenticate"].to_str().unwrap().to_owned();
    assert_eq!(
        challenge,
        format!(
            "Bearer error=\"insufficient_scope\", scope=\"write\", resource_metadata=\"{origin}/.well-known/oauth-protected-resource/mcp\", error_description=\"create_category needs more than this connection was allowed. To use it, reconnect the app and choose 'Read and make changes' on Exhale's consent page.\""
        )
    );
    assert_eq!(answer.headers()["access-control-expose-headers"], "WWW-Authenticate");
    let body: Value = answer.json().await.unwrap();
    assert_eq!(body["id"], 7, "{body}");
    assert_eq!(body["error"]["data"], json!({"code": "forbidden", "needed_scope": "write"}));
    // The same write through call_tool gets the same challenge.
    let through = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
        "params": {"name": "call_tool", "arguments": {"name": "create_category", "arguments": {"name": "Pets"}}}});
    let answer = raw(through).await.unwrap();
    assert_eq!(answer.status(), StatusCode::FORBIDDEN);
    assert_eq!(answer.headers()["www-authenticate"].to_str().unwrap(), challenge);
    let (_, categories) = rest(&server, access, "list_categories", json!({})).await;
    assert!(!categories.to_string().contains("Pets"), "nothing was created: {categories}");

    let (api_token, _) = w.env.token(&w.ana, "read").await;
    let agent = http_client(server.url("/mcp"), &api_token, "Laptop").await;
    let told = call(&agent, "create_category", json!({"name": "Pets"})).await;
    assert_eq!(told.is_error, Some(true));
    assert!(text(&told).starts_with("forbidden"), "{}", text(&told));
}

#[tokio::test]
async fn trusted_is_offered_only_once_an_owner_allows_it_and_taken_back_when_they_stop() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let client_id = public_client(&server, "Helper").await;
    let path = authorize_path(&client_id, &[]);
    let mut ana = Visitor::new(&server);
    ana.sign_in("ana@a.test", PASSWORD).await;

    // Off by default: not offered, and a forged choice gets read and write at most.
    let page = ana.get(&path).await;
    assert!(!page.body.contains("value=\"trusted\""), "{}", page.body);
    let location = consent(&mut ana, &path, "trusted", "approve").await;
    let (_, tokens) = exchange(&server, &client_id, &param(&location, "code").unwrap()).await;
    assert_eq!(tokens["scope"], "read write", "{tokens}");

    // Only an owner turns it on, on the web; no member, no agent.
    let by_member = w.env.call(&w.bob, "allow_trusted_apps", json!({"allowed": true})).await;
    assert_eq!(by_member.unwrap_err().code(), "forbidden");
    let (agent_token, _) = w.env.token(&w.ana, "write").await;
    let (status, body) =
        rest(&server, &agent_token, "allow_trusted_apps", json!({"allowed": true})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let agents = ana.get("/settings/tokens").await;
    let allowed = ana
        .post(
            "/settings/apps/trusted",
            &[("csrf", &Visitor::hidden(&agents, "csrf")), ("allowed", "true")],
        )
        .await;
    assert_eq!(allowed.status, StatusCode::SEE_OTHER, "{}", allowed.body);
    let settings = w.env.call(&w.ana, "get_settings", json!({})).await.unwrap();
    assert_eq!(settings["trusted_apps"], true);

    // Now offered, never preselected, with a warning; chosen, the app's writes apply unasked.
    let page = ana.get(&path).await;
    assert!(page.body.contains("<input type=\"radio\" name=\"scope\" value=\"trusted\">"));
    assert!(page.body.contains("value=\"write\" checked"), "the request's own scope is checked");
    assert!(page.body.contains("Choose Trusted only for an app you know well"));
    let location = consent(&mut ana, &path, "trusted", "approve").await;
    let (_, tokens) = exchange(&server, &client_id, &param(&location, "code").unwrap()).await;
    assert_eq!(tokens["scope"], "read write trusted", "{tokens}");
    let access = tokens["access_token"].as_str().unwrap();
    let price = json!({"id": w.netflix, "amount": "17.99"});
    let (status, body) = rest(&server, access, "change_price", price.clone()).await;
    assert_eq!(status, StatusCode::OK, "a trusted app's financial write applies: {body}");

    // Stopped: the same token acts as read and write at once, asking before money changes.
    let stopped = w.env.call(&w.ana, "allow_trusted_apps", json!({"allowed": false})).await;
    assert_eq!(stopped.unwrap()["trusted_apps"], false);
    let (status, body) = rest(&server, access, "change_price", price.clone()).await;
    assert_eq!(status, StatusCode::PRECONDITION_REQUIRED, "{body}");
    assert_eq!(body["code"], "confirmation_required", "{body}");
    let apps = w.env.call(&w.ana, "list_connected_apps", json!({})).await.unwrap();
    assert!(
        apps["items"].as_array().unwrap().iter().all(|app| app["scope"] != "trusted"),
        "{apps}"
    );
    let page = ana.get(&path).await;
    assert!(!page.body.contains("value=\"trusted\""));

    // Undoing the change gives the app its trust back.
    let activity = w.env.call(&w.ana, "list_activity", json!({})).await.unwrap();
    let batch = activity["items"][0]["batch_id"].clone();
    w.env.call(&w.ana, "undo", json!({"batch_id": &batch})).await.unwrap();
    let (status, body) = rest(&server, access, "change_price", price).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test]
async fn an_address_that_keeps_failing_at_the_token_endpoint_is_slowed_down() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let client_id = public_client(&server, "Guesser").await;
    let tokens = connected(&server, &client_id, "read").await;
    let refresh_token = tokens["refresh_token"].as_str().unwrap();
    for _ in 0..30 {
        let (status, error) = exchange(&server, &client_id, "exhcode_guessed").await;
        assert_eq!(
            (status, error["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("invalid_grant"))
        );
    }
    // Past the limit even a good request waits, and is told for how long.
    let (status, error) = refresh(&server, &client_id, refresh_token).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{error}");
    assert_eq!(error["error"], "slow_down");
    assert!(error["error_description"].as_str().unwrap().contains("try again in 900 s"), "{error}");
    w.env.clock.advance(jiff::SignedDuration::from_mins(15));
    let (status, renewed) = refresh(&server, &client_id, refresh_token).await;
    assert_eq!(status, StatusCode::OK, "the window has passed: {renewed}");

    // Revocation answers 200 for any token (RFC 7009), so it is limited by count.
    let revoke = || {
        http()
            .post(server.url("/revoke"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(query(&[("token", "exhrefresh_unknown"), ("client_id", &client_id)]))
            .send()
    };
    for _ in 0..50 {
        assert_eq!(revoke().await.unwrap().status(), StatusCode::OK);
    }
    assert_eq!(revoke().await.unwrap().status(), StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn registration_takes_what_real_clients_send_and_refuses_the_dangerous() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let accepted = [
        json!([
            "cursor://anysphere.cursor-mcp/oauth/callback",
            "https://www.cursor.com/agents/mcp/oauth/callback",
            "http://localhost:8787/callback"
        ]),
        json!([
            "https://insiders.vscode.dev/redirect",
            "https://vscode.dev/redirect",
            "http://127.0.0.1/",
            "http://127.0.0.1:33418/"
        ]),
        json!([
            "https://grok.com/connectors-oauth-exchange-code/",
            "https://console.x.ai/connectors-oauth-exchange-code/"
        ]),
        json!([
            "https://claude.ai/api/mcp/auth_callback",
            "https://claude.com/api/mcp/auth_callback"
        ]),
        json!(["https://chatgpt.com/connector_platform_oauth_redirect"]),
    ];
    for uris in accepted {
        let (status, client) =
            register(&server, json!({"client_name": "App", "redirect_uris": uris})).await;
        assert_eq!(status, StatusCode::CREATED, "{client}");
        assert_eq!(client["token_endpoint_auth_method"], "none", "public by default");
        assert!(client.get("client_secret").is_none());
    }
    for uri in [
        "javascript:alert(1)",
        "data:text/html,x",
        "file:///etc/passwd",
        "http://evil.example/cb",
        "https://a.example/cb#x",
        // Neither is this computer to a browser.
        "http://[::1].evil.example/cb",
        "http://[::1]@evil.example/cb",
    ] {
        let (status, error) =
            register(&server, json!({"redirect_uris": ["https://ok.example/cb", uri]})).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{uri}");
        assert_eq!(error["error"], "invalid_redirect_uri");
    }
    let (status, error) = register(&server, json!({"client_name": "x"})).await;
    assert_eq!(
        (status, error["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_redirect_uri"))
    );
    let (status, error) = register(
        &server,
        json!({"redirect_uris": ["https://ok.example/cb"], "grant_types": ["password"]}),
    )
    .await;
    assert_eq!(
        (status, error["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_client_metadata"))
    );
    let large = http()
        .post(server.url("/register"))
        .json(
            &json!({"redirect_uris": ["https://ok.example/cb"], "client_name": "x".repeat(20_000)}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(large.status(), StatusCode::PAYLOAD_TOO_LARGE);

    // A client that asks for a secret gets one, and must use it as it said.
    let (_, confidential) = register(
        &server,
        json!({"client_name": "<b>Claude</b>\u{202e}", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "client_secret_post"}),
    )
    .await;
    let secret = confidential["client_secret"].as_str().unwrap();
    assert_eq!(confidential["client_secret_expires_at"], 0);
    assert_eq!(confidential["client_name"], "127.0.0.1", "a name that reorders text is not shown");
    let client_id = confidential["client_id"].as_str().unwrap();
    let mut ana = Visitor::new(&server);
    ana.sign_in("ana@a.test", PASSWORD).await;
    // Markup in a name is shown as text.
    let marked_up = public_client(&server, "<script>alert(1)</script> Helper").await;
    let page = ana.get(&authorize_path(&marked_up, &[])).await;
    assert!(!page.body.contains("<script>alert"), "{}", page.body);
    assert!(
        page.body.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt; Helper"),
        "{}",
        page.body
    );
    let location = consent(&mut ana, &authorize_path(client_id, &[]), "write", "approve").await;
    let code = param(&location, "code").unwrap();
    let (status, error) = exchange(&server, client_id, &code).await;
    assert_eq!(
        (status, error["error"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("invalid_client"))
    );
    let location = consent(&mut ana, &authorize_path(client_id, &[]), "write", "approve").await;
    let (status, _) = token(
        &server,
        &[
            ("grant_type", "authorization_code"),
            ("code", &param(&location, "code").unwrap()),
            ("redirect_uri", REDIRECT),
            ("code_verifier", VERIFIER),
            ("client_id", client_id),
            ("client_secret", secret),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::OK);

    // A flood of registrations from one address is slowed down.
    let mut statuses = Vec::new();
    for _ in 0..25 {
        statuses.push(register(&server, json!({"redirect_uris": [REDIRECT]})).await.0);
    }
    assert!(statuses.contains(&StatusCode::TOO_MANY_REQUESTS), "{statuses:?}");
}

/// A registration as if from `from`, through a proxy Exhale trusts.
async fn register_from(server: &TestServer, from: &str, name: &str) -> StatusCode {
    http()
        .post(server.url("/register"))
        .header("x-forwarded-for", from)
        .json(&json!({"client_name": name, "redirect_uris": [REDIRECT]}))
        .send()
        .await
        .unwrap()
        .status()
}

#[tokio::test]
async fn registration_floods_are_counted_by_network_and_displace_only_unused_clients() {
    let w = World::new().await;
    let server = w.env.serve_behind_proxy().await;
    let used = public_client(&server, "In use").await;
    let tokens = connected(&server, &used, "write").await;

    // One IPv6 /64 is one client, whichever of its addresses it writes from.
    let mut statuses = Vec::new();
    for host in 1..=21 {
        statuses.push(register_from(&server, &format!("2001:db8:1:1::{host:x}"), "Flood").await);
    }
    assert_eq!(statuses[..20], [StatusCode::CREATED; 20]);
    assert_eq!(statuses[20], StatusCode::TOO_MANY_REQUESTS);

    // A person has an app's consent page open when the flood starts.
    let early = public_client(&server, "Early").await;
    let mut ana = Visitor::at(&server.url(""));
    ana.sign_in("ana@a.test", PASSWORD).await;
    let path = authorize_path(&early, &[]);
    let deciding = ana.get(&path).await;
    assert_eq!(deciding.status, StatusCode::OK);

    // The outside test's flood, past the 1,000 kept: 20 an hour from each of 55 networks of
    // one /48, and then one from each of 200 more. Each new registration takes the place of
    // an unused client of the widest network that registered most, so none is refused and
    // the flood displaces itself.
    let flood = |network: u32, host: u32| format!("2001:db8:2:{network:x}::{host:x}");
    for network in 0..55 {
        for host in 1..=20 {
            let from = flood(network, host);
            assert_eq!(register_from(&server, &from, "Flood").await, StatusCode::CREATED, "{from}");
        }
    }
    let late = public_client(&server, "Claude").await;
    for network in 100..300 {
        let from = flood(network, 1);
        assert_eq!(register_from(&server, &from, "Flood").await, StatusCode::CREATED, "{from}");
    }
    let page = ana.get(&authorize_path(&late, &[])).await;
    assert_eq!(page.status, StatusCode::OK, "a client registered amid the flood can connect");
    let location = consent(&mut ana, &path, "write", "approve").await;
    assert!(param(&location, "code").is_some(), "the page open before the flood still works");
    let (status, _) = refresh(&server, &used, tokens["refresh_token"].as_str().unwrap()).await;
    assert_eq!(status, StatusCode::OK, "a client in use is never displaced");
    let dump = w.env.dump().await;
    let clients = dump.split("## oauth_clients\n").nth(1).unwrap();
    let kept = clients.lines().take_while(|line| !line.starts_with("## ")).count();
    assert!(kept <= 1000, "{kept} clients kept");
}

#[tokio::test]
async fn a_connected_app_is_listed_disconnected_after_confirmation_and_brought_back_by_undo() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let client_id = public_client(&server, "ChatGPT").await;
    let tokens = connected(&server, &client_id, "write").await;
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(rest(&server, access, "list_categories", json!({})).await.0, StatusCode::OK);

    let apps = w.env.call(&w.ana, "list_connected_apps", json!({})).await.unwrap();
    let app = &apps["items"][0];
    assert_eq!((app["name"].as_str(), app["scope"].as_str()), (Some("ChatGPT"), Some("write")));
    assert!(app["last_used_at"].is_string(), "{app}");
    let id = app["id"].as_i64().unwrap();
    let tokens_list = w.env.call(&w.ana, "list_tokens", json!({})).await.unwrap();
    assert_eq!(tokens_list["items"], json!([]), "a connected app is not an API token");
    for other in [&w.bob, &w.cai] {
        let theirs = w.env.call(other, "list_connected_apps", json!({})).await.unwrap();
        assert_eq!(theirs["items"], json!([]));
        let refused = w.env.call(other, "revoke_connected_app", json!({"id": id})).await;
        assert_eq!(test_support::code(&refused), "not_found");
    }

    let mut ana = Visitor::new(&server);
    ana.sign_in("ana@a.test", PASSWORD).await;
    let page = ana.get("/settings/tokens").await;
    assert!(page.body.contains("data-testid=\"connected-apps\"") && page.body.contains("ChatGPT"));
    let confirm = ana.get(&format!("/settings/apps/{id}/revoke")).await;
    assert!(confirm.body.contains("Disconnect ChatGPT?"), "{}", confirm.body);
    assert_eq!(
        rest(&server, access, "list_categories", json!({})).await.0,
        StatusCode::OK,
        "a confirmation page changes nothing"
    );
    let done = ana
        .post(
            &format!("/settings/apps/{id}/revoke"),
            &[("csrf", &Visitor::hidden(&confirm, "csrf"))],
        )
        .await;
    assert_eq!(done.status, StatusCode::SEE_OTHER);
    assert_eq!(
        rest(&server, access, "list_categories", json!({})).await.0,
        StatusCode::UNAUTHORIZED
    );
    let (status, _) = refresh(&server, &client_id, tokens["refresh_token"].as_str().unwrap()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "its refresh token goes with it");
    let apps = w.env.call(&w.ana, "list_connected_apps", json!({})).await.unwrap();
    assert_eq!(apps["items"], json!([]));

    let activity = w.env.call(&w.ana, "list_activity", json!({})).await.unwrap();
    let entry = &activity["items"][0];
    assert!(entry["summary"].as_str().unwrap().contains("Disconnected the app ChatGPT"), "{entry}");
    w.env.call(&w.ana, "undo", json!({"audit_ids": [entry["id"]]})).await.unwrap();
    assert_eq!(
        rest(&server, access, "list_categories", json!({})).await.0,
        StatusCode::OK,
        "undo reconnects it"
    );
}

/// Runs the official Python SDK's OAuth client (`tests/mcp_clients/python_oauth.py`) against
/// `server`, naming itself by `metadata_url` when given, and checks it left no connection.
async fn python_oauth_client(w: &World, server: &TestServer, metadata_url: Option<&str>) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/mcp_clients/python_oauth.py");
    let mut command = tokio::process::Command::new("python3");
    command
        .arg(script)
        .env("EXHALE_MCP_URL", server.url("/mcp"))
        .env("EXHALE_ORIGIN", server.url(""))
        .env("EXHALE_EMAIL", "ana@a.test")
        .env("EXHALE_PASSWORD", PASSWORD);
    if let Some(url) = metadata_url {
        command.env("EXHALE_CLIENT_METADATA_URL", url);
    }
    let output = command.output().await.unwrap_or_else(|err| panic!("python3 does not run: {err}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.trim_end().ends_with("ok"),
        "the Python OAuth client failed (scripts/test installs it):\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        w.env.dump().await.contains("Python OAuth test"),
        "the client was known by its name and granted"
    );
    let apps = w.env.call(&w.ana, "list_connected_apps", json!({})).await.unwrap();
    assert_eq!(apps["items"], json!([]), "revoking its refresh token disconnected it");
}

#[tokio::test]
async fn the_official_python_client_connects_on_its_own_refreshes_and_is_revoked() {
    let w = World::new().await;
    let server = w.env.serve().await;
    python_oauth_client(&w, &server, None).await;
}

#[tokio::test]
async fn the_official_python_client_named_by_its_metadata_document_connects_the_same_way() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let host = crate::oauth_documents::DocumentHost::start(|url| {
        let document = json!({
            "client_id": url("/python-client.json"),
            "client_name": "Python OAuth test",
            "redirect_uris": ["http://127.0.0.1:43117/callback"],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        });
        std::collections::HashMap::from([(
            "/python-client.json",
            crate::oauth_documents::ok(document.to_string()),
        )])
    })
    .await;
    // Exhale on loopback may fetch a document from loopback (the draft's section 6.5).
    crate::oauth_documents::trust(&w, &host, true);
    let url = host.url("/python-client.json");
    python_oauth_client(&w, &server, Some(&url)).await;
    assert_eq!(host.hits("/python-client.json"), 1, "fetched once, then kept");
    assert!(!w.env.dump().await.contains("exhclient_"), "nothing registered");
}

#[tokio::test]
async fn no_token_code_or_secret_of_the_flow_reaches_the_log() {
    let dir = test_support::DataDir::new();
    crate::cli::create_owner(&dir, PASSWORD);
    let log_path = dir.path().join("serve.log");
    let log = std::fs::File::create(&log_path).unwrap();
    // Everything our libraries log too, at the most talkative level but trace.
    let mut child = crate::cli::spawn_serve_logging(&dir, &[("RUST_LOG", "debug")], log);
    let url = crate::cli::listening_url(&mut child);

    // A confidential client, so a client secret is in the flow, through every endpoint.
    let (status, client) = register(
        &url,
        json!({"client_name": "Logged", "redirect_uris": [REDIRECT],
               "token_endpoint_auth_method": "client_secret_post"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{client}");
    let client_id = client["client_id"].as_str().unwrap();
    let client_secret = client["client_secret"].as_str().unwrap();
    let mut ana = Visitor::at(&url);
    ana.sign_in("ana@a.test", PASSWORD).await;
    let location = consent(&mut ana, &authorize_path(client_id, &[]), "write", "approve").await;
    let code = param(&location, "code").unwrap();
    let confidential = async |form: &[(&str, &str)]| {
        let credentials = [("client_id", client_id), ("client_secret", client_secret)];
        token(&url, &[form, &credentials].concat()).await
    };
    let exchange = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", REDIRECT),
        ("code_verifier", VERIFIER),
    ];
    let (status, tokens) = confidential(&exchange).await;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let access = tokens["access_token"].as_str().unwrap().to_owned();
    assert_eq!(initialize(&url, Some(&access)).await.status(), StatusCode::OK);
    assert_eq!(rest(&url, &access, "list_categories", json!({})).await.0, StatusCode::OK);
    let refresh_token = tokens["refresh_token"].as_str().unwrap().to_owned();
    let (status, renewed) =
        confidential(&[("grant_type", "refresh_token"), ("refresh_token", &refresh_token)]).await;
    assert_eq!(status, StatusCode::OK, "{renewed}");
    // The code again: refused, and what it gave is withdrawn.
    assert_eq!(confidential(&exchange).await.0, StatusCode::BAD_REQUEST);
    let refused = initialize(&url, Some(renewed["access_token"].as_str().unwrap())).await;
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);

    std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(log.contains("uri=/token") && log.contains("uri=/mcp"), "the flow was logged: {log}");
    let secrets = [
        client_secret,
        &code,
        &access,
        &refresh_token,
        renewed["access_token"].as_str().unwrap(),
        renewed["refresh_token"].as_str().unwrap(),
    ];
    for secret in secrets {
        assert!(!log.contains(secret), "{secret} is in the log");
    }
    for prefix in ["exha_", "exhrefresh_", "exhcode_", "exhsecret_", "exhreq_", "Bearer "] {
        assert!(!log.contains(prefix), "{prefix} is in the log");
    }
}

#[tokio::test]
async fn a_person_has_at_most_twenty_requests_waiting() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let client_id = public_client(&server, "Pushy").await;
    let mut ana = Visitor::new(&server);
    ana.sign_in("ana@a.test", PASSWORD).await;
    let path = authorize_path(&client_id, &[]);
    let mut pages = Vec::new();
    for _ in 0..21 {
        pages.push(ana.get(&path).await);
    }
    let answer = |page: &crate::web::Page| {
        [
            ("csrf", Visitor::hidden(page, "csrf")),
            ("request_id", Visitor::hidden(page, "request_id")),
            ("scope", "read".to_owned()),
            ("decision", "approve".to_owned()),
        ]
    };
    let oldest = answer(&pages[0]);
    let fields: Vec<(&str, &str)> = oldest.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let forgotten = ana.post("/authorize", &fields).await;
    assert_eq!(forgotten.status, StatusCode::BAD_REQUEST, "the oldest of 21 was forgotten");
    let second = answer(&pages[1]);
    let fields: Vec<(&str, &str)> = second.iter().map(|(k, v)| (*k, v.as_str())).collect();
    assert_eq!(ana.post("/authorize", &fields).await.status, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn a_person_lists_every_tool_for_a_connected_app_and_no_one_else_can() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let client_id = public_client(&server, "Claude").await;
    let tokens = connected(&server, &client_id, "write").await;
    let access = tokens["access_token"].as_str().unwrap();
    let mcp = http_client(server.url("/mcp"), access, "Claude").await;
    let listed = |tools: &[rmcp::model::Tool]| -> Vec<String> {
        tools.iter().map(|tool| tool.name.to_string()).collect()
    };
    let before = listed(&mcp.list_all_tools().await.unwrap());
    assert!(before.contains(&"call_tool".to_owned()), "the default set: {before:?}");
    let apps = w.env.call(&w.ana, "list_connected_apps", json!({})).await.unwrap();
    assert_eq!(apps["items"][0]["tools"], "subscriptions", "{apps}");
    let id = apps["items"][0]["id"].as_i64().unwrap();

    // Another member and another household cannot change it, nor learn that it exists.
    for other in [&w.bob, &w.cai] {
        let refused =
            w.env.call(other, "set_token_tools", json!({"id": id, "tools": "full"})).await;
        assert!(matches!(refused, Err(ops::OpError::NotFound { .. })), "{refused:?}");
    }

    // Ana chooses All on the web; the app's next tools/list has every tool.
    let mut ana = Visitor::at(&server.url(""));
    ana.sign_in("ana@a.test", PASSWORD).await;
    let page = ana.get("/settings/tokens").await;
    assert!(page.body.contains(&format!("data-testid=\"tools-{id}\"")), "{}", page.body);
    let csrf = Visitor::hidden(&page, "csrf");
    let bad = ana
        .post(&format!("/settings/tokens/{id}/tools"), &[("csrf", &csrf), ("tools", "most")])
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.body);
    let done = ana
        .post(&format!("/settings/tokens/{id}/tools"), &[("csrf", &csrf), ("tools", "full")])
        .await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.body);
    let after = listed(&mcp.list_all_tools().await.unwrap());
    assert!(!after.contains(&"call_tool".to_owned()), "{after:?}");
    assert!(after.contains(&"create_account".to_owned()) && after.len() > before.len() + 30);
    let apps = w.env.call(&w.ana, "list_connected_apps", json!({})).await.unwrap();
    assert_eq!(apps["items"][0]["tools"], "full", "{apps}");
    let activity = w.env.call(&w.ana, "list_activity", json!({})).await.unwrap();
    assert_eq!(activity["items"][0]["op"], "set_token_tools", "{activity}");
    let batch = activity["items"][0]["batch_id"].as_str().unwrap().to_owned();
    // Connecting the app again (for more scope, say) keeps the choice.
    connected(&server, &client_id, "write").await;
    let apps = w.env.call(&w.ana, "list_connected_apps", json!({})).await.unwrap();
    assert_ne!(apps["items"][0]["id"], id, "{apps}");
    assert_eq!(apps["items"][0]["tools"], "full", "{apps}");
    // Undone from Activity, the first connection lists the set again.
    w.env.call(&w.ana, "undo", json!({"batch_id": batch})).await.unwrap();
    assert_eq!(listed(&mcp.list_all_tools().await.unwrap()), before);
    mcp.cancel().await.unwrap();
}
