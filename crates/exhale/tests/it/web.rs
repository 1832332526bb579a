//! The web app over HTTP, as a browser without JavaScript uses it: first-run setup, sign-in,
//! sessions and their expiry, CSRF, the sign-in limit, pages that must not show someone
//! else's private items, and create → delete through the confirmation page → undo.
//! `browser.rs` drives the same flows in headless Chromium.

use std::collections::HashMap;

use reqwest::{StatusCode, redirect::Policy};
use serde_json::json;
use test_support::{TestEnv, TestServer};

use crate::fixtures::World;

pub(crate) use test_support::PASSWORD;

/// An HTTP client that keeps cookies and does not follow redirects, so each step is seen.
pub(crate) struct Visitor {
    client: reqwest::Client,
    base: String,
    cookies: HashMap<String, String>,
}

pub(crate) struct Page {
    pub(crate) status: StatusCode,
    pub(crate) location: Option<String>,
    pub(crate) body: String,
    pub(crate) headers: reqwest::header::HeaderMap,
}

impl Visitor {
    pub(crate) fn new(server: &TestServer) -> Self {
        Self::at(&server.url(""))
    }

    /// A visitor of the server at `base`, e.g. a spawned `exhale serve`.
    pub(crate) fn at(base: &str) -> Self {
        Self {
            client: reqwest::Client::builder().redirect(Policy::none()).build().unwrap(),
            base: base.to_owned(),
            cookies: HashMap::new(),
        }
    }

    /// A visitor whose browser asks for pages in `languages` (an `Accept-Language` value).
    pub(crate) fn speaking(server: &TestServer, languages: &str) -> Self {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert("accept-language", languages.parse().unwrap());
        let client =
            reqwest::Client::builder().redirect(Policy::none()).default_headers(headers).build();
        Self { client: client.unwrap(), base: server.url(""), cookies: HashMap::new() }
    }

    /// Opens the live stream at `path` with this visitor's cookies.
    pub(crate) async fn events(&self, path: &str) -> reqwest::Response {
        let url = format!("{}{path}", self.base);
        self.client.get(url).header("cookie", self.cookie_header()).send().await.unwrap()
    }

    pub(crate) fn cookie_header(&self) -> String {
        self.cookies.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; ")
    }

    async fn finish(&mut self, response: reqwest::Response) -> Page {
        for value in response.headers().get_all("set-cookie") {
            let cookie = value.to_str().unwrap();
            let (pair, attributes) = cookie.split_once(';').unwrap_or((cookie, ""));
            let (name, value) = pair.split_once('=').unwrap();
            if attributes.contains("Max-Age=0") {
                self.cookies.remove(name);
            } else {
                self.cookies.insert(name.to_owned(), value.to_owned());
            }
        }
        let status = response.status();
        let location = response.headers().get("location").map(|l| l.to_str().unwrap().to_owned());
        let headers = response.headers().clone();
        Page { status, location, headers, body: response.text().await.unwrap() }
    }

    pub(crate) async fn get(&mut self, path: &str) -> Page {
        let request =
            self.client.get(format!("{}{path}", self.base)).header("cookie", self.cookie_header());
        let response = request.send().await.unwrap();
        self.finish(response).await
    }

    pub(crate) async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> Page {
        let response = self.post_unread(path, form).await;
        self.finish(response).await
    }

    /// Posts a form as a browser does and hands back the response before its body is read,
    /// to read a page as it arrives.
    pub(crate) async fn post_unread(&self, path: &str, form: &[(&str, &str)]) -> reqwest::Response {
        let body: String = form
            .iter()
            .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
            .collect::<Vec<_>>()
            .join("&");
        self.client
            .post(format!("{}{path}", self.base))
            .header("cookie", self.cookie_header())
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .unwrap()
    }

    /// Posts a multipart form with text fields and one file, as a browser uploads.
    pub(crate) async fn upload(
        &mut self,
        path: &str,
        fields: &[(&str, &str)],
        file: (&str, &[u8]),
    ) -> Page {
        let boundary = "exhale-test-boundary-7MA4YWxkTrZu0gW";
        let mut body = Vec::new();
        for (name, value) in fields {
            body.extend_from_slice(format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n").as_bytes());
        }
        body.extend_from_slice(
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{}\"; filename=\"export.csv\"\r\nContent-Type: text/csv\r\n\r\n", file.0).as_bytes(),
        );
        body.extend_from_slice(file.1);
        body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
        let response = self
            .client
            .post(format!("{}{path}", self.base))
            .header("cookie", self.cookie_header())
            .header("content-type", format!("multipart/form-data; boundary={boundary}"))
            .body(body)
            .send()
            .await
            .unwrap();
        self.finish(response).await
    }

    /// The value of the hidden field `name` on `page`.
    pub(crate) fn hidden(page: &Page, name: &str) -> String {
        let marker = format!(r#"name="{name}" value=""#);
        let start = page.body.find(&marker).unwrap_or_else(|| panic!("no {name} in {}", page.body))
            + marker.len();
        page.body[start..].split('"').next().unwrap().to_owned()
    }

    pub(crate) async fn sign_in(&mut self, email: &str, password: &str) -> Page {
        let form = self.get("/sign-in").await;
        let token = Self::hidden(&form, "form_token");
        self.post(
            "/sign-in",
            &[("form_token", &token), ("email", email), ("password", password), ("next", "/")],
        )
        .await
    }
}

/// Text as a browser shows it: the entities the templates escape, decoded.
/// Dana invited as a member by `owner` on the Settings page; the path of her one-time link.
pub(crate) async fn invite_dana(owner: &mut Visitor) -> String {
    let settings = owner.get("/settings").await;
    let csrf = Visitor::hidden(&settings, "csrf");
    let invited = owner
        .post(
            "/settings/members",
            &[("csrf", &csrf), ("name", "Dana"), ("email", "dana@a.test"), ("role", "member")],
        )
        .await;
    assert_eq!(invited.status, StatusCode::OK, "{}", invited.body);
    let body = unescape(&invited.body);
    let start = body.find("/invite/").unwrap_or_else(|| panic!("no link in {body}"));
    body[start..].chars().take_while(|c| !c.is_whitespace() && *c != '<').collect()
}

pub(crate) fn unescape(html: &str) -> String {
    html.replace("&#x2f;", "/")
        .replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[tokio::test]
async fn first_run_setup_creates_the_owner_once_and_signs_them_in() {
    let env = TestEnv::new();
    let server = env.serve_with_setup(Some("one-time-secret")).await;
    let mut visitor = Visitor::new(&server);
    assert_eq!(visitor.get("/setup/guessed").await.status, StatusCode::NOT_FOUND);
    let signin = visitor.get("/sign-in").await;
    assert!(signin.body.contains("not set up yet"), "{}", signin.body);

    let form = visitor.get("/setup/one-time-secret").await;
    assert_eq!(form.status, StatusCode::OK);
    let token = Visitor::hidden(&form, "form_token");
    let fields = |token: &str, password: &str| -> Vec<(&'static str, String)> {
        vec![
            ("form_token", token.to_owned()),
            ("household_name", "The Millers".to_owned()),
            ("currency", "GBP".to_owned()),
            ("time_zone", "Europe/London".to_owned()),
            ("language", "en".to_owned()),
            ("owner_name", "Sam Miller".to_owned()),
            ("email", "sam@millers.test".to_owned()),
            ("password", password.to_owned()),
        ]
    };
    async fn post(visitor: &mut Visitor, fields: Vec<(&'static str, String)>) -> Page {
        let pairs: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
        visitor.post("/setup/one-time-secret", &pairs).await
    }

    // A form that did not come from the page is refused; a short password is explained.
    let forged = post(&mut visitor, fields("forged", PASSWORD)).await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    let short = post(&mut visitor, fields(&token, "short")).await;
    assert_eq!(short.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        short.body.contains("10 to 256 characters") && short.body.contains("The Millers"),
        "{}",
        short.body
    );
    assert!(!env.app.has_members().await.unwrap(), "nothing was created");

    let token = Visitor::hidden(&short, "form_token");
    let done = post(&mut visitor, fields(&token, PASSWORD)).await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.body);
    assert_eq!(done.location.as_deref(), Some("/"));
    let overview = visitor.get("/").await;
    assert_eq!(overview.status, StatusCode::OK);
    assert!(
        overview.body.contains("Sam Miller") && overview.body.contains("£0.00"),
        "{}",
        overview.body
    );

    // The link is spent.
    let mut stranger = Visitor::new(&server);
    assert_eq!(stranger.get("/setup/one-time-secret").await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn every_page_needs_a_session_and_sessions_end() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let mut visitor = Visitor::new(&server);
    for path in [
        "/",
        "/subscriptions",
        "/subscriptions/new",
        &format!("/subscriptions/{}", w.netflix),
        "/activity",
    ] {
        let page = visitor.get(path).await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{path}");
        assert!(page.location.as_deref().unwrap().starts_with("/sign-in"), "{path}");
    }
    let refused = visitor.post("/subscriptions/new", &[("csrf", "x"), ("name", "Sneaky")]).await;
    assert_eq!(refused.status, StatusCode::SEE_OTHER);

    let wrong = visitor.sign_in("ana@a.test", "not the password").await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    assert!(wrong.body.contains("Wrong email or password"));
    let signed_in = visitor.sign_in("ana@a.test", PASSWORD).await;
    assert_eq!(signed_in.status, StatusCode::SEE_OTHER);
    assert!(visitor.cookies.contains_key("exhale_session"));
    assert_eq!(visitor.get("/").await.status, StatusCode::OK);

    // Fourteen days later the session is over.
    w.env.clock.advance(jiff::SignedDuration::from_hours(15 * 24));
    let expired = visitor.get("/").await;
    assert_eq!(expired.status, StatusCode::SEE_OTHER);

    // Signing out ends a session at once.
    visitor.sign_in("ana@a.test", PASSWORD).await;
    let overview = visitor.get("/").await;
    let csrf = Visitor::hidden(&overview, "csrf");
    let session = visitor.cookies["exhale_session"].clone();
    assert_eq!(visitor.post("/sign-out", &[("csrf", &csrf)]).await.status, StatusCode::SEE_OTHER);
    visitor.cookies.insert("exhale_session".into(), session);
    assert_eq!(
        visitor.get("/").await.status,
        StatusCode::SEE_OTHER,
        "a signed-out session is dead"
    );
}

#[tokio::test]
async fn forms_without_the_sessions_csrf_token_change_nothing() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let mut visitor = Visitor::new(&server);
    visitor.sign_in("ana@a.test", PASSWORD).await;
    let before = w.env.dump().await;
    let create = visitor
        .post(
            "/subscriptions/new",
            &[
                ("csrf", "forged"),
                ("name", "Sneaky"),
                ("amount", "1"),
                ("cycle", "monthly"),
                ("next_charge_on", "2026-12-01"),
            ],
        )
        .await;
    assert_eq!(create.status, StatusCode::FORBIDDEN);
    let delete =
        visitor.post(&format!("/subscriptions/{}/delete", w.netflix), &[("csrf", "")]).await;
    assert_eq!(delete.status, StatusCode::FORBIDDEN);
    assert_eq!(w.env.dump().await, before);
}

#[tokio::test]
async fn every_page_forbids_inline_script_framing_and_caching() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let mut visitor = Visitor::new(&server);
    let header = |page: &Page, name: &str| {
        page.headers.get(name).map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default()
    };
    let sign_in = visitor.get("/sign-in").await;
    visitor.sign_in("ana@a.test", PASSWORD).await;
    let mut pages = vec![sign_in];
    for path in [
        "/",
        "/subscriptions",
        &format!("/subscriptions/{}", w.netflix),
        "/activity",
        "/settings",
        "/settings/tokens",
        "/connect",
        "/export/exhale-export.json",
        "/no-such-page-but-signed-in",
    ] {
        pages.push(visitor.get(path).await);
    }
    for page in &pages {
        let policy = header(page, "content-security-policy");
        assert!(
            policy.contains("script-src 'self'")
                && policy.contains("frame-ancestors 'none'")
                && !policy.contains("unsafe-inline"),
            "{policy}"
        );
        assert_eq!(header(page, "x-content-type-options"), "nosniff");
        assert_eq!(header(page, "x-frame-options"), "DENY");
        assert_eq!(header(page, "referrer-policy"), "same-origin");
        assert_eq!(header(page, "cache-control"), "no-store");
        assert!(!page.body.contains("<script>") && !page.body.contains(" style="), "{}", page.body);
    }
    // The stylesheet keeps its day of caching; the API is not stored either.
    assert_eq!(header(&visitor.get("/static/app.css").await, "cache-control"), "max-age=86400");
    let (token, _) = w.env.token(&w.ana, "read").await;
    let api = reqwest::Client::new()
        .post(server.url("/api/v1/ops/get_household"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(api.headers()["cache-control"], "no-store");
    assert_eq!(api.headers()["x-content-type-options"], "nosniff");
}

#[tokio::test]
async fn sign_in_is_refused_after_five_failures_even_with_the_right_password() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let mut visitor = Visitor::new(&server);
    for _ in 0..5 {
        assert_eq!(
            visitor.sign_in("ana@a.test", "guess guess guess").await.status,
            StatusCode::UNAUTHORIZED
        );
    }
    let blocked = visitor.sign_in("ana@a.test", PASSWORD).await;
    assert_eq!(blocked.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(blocked.body.contains("Try again in 15 min"), "{}", blocked.body);
    // Another person is not affected.
    assert_eq!(visitor.sign_in("cai@b.test", PASSWORD).await.status, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn no_page_shows_another_members_private_subscription_or_another_household() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let mut ana = Visitor::new(&server);
    ana.sign_in("ana@a.test", PASSWORD).await;
    let gym = w.env.call(&w.bob, "get_subscription", json!({"id": w.bobs_gym})).await.unwrap();
    let gym_name = gym["name"].as_str().unwrap().to_owned();
    for path in ["/", "/subscriptions", "/subscriptions?status=active", "/activity"] {
        let page = ana.get(path).await;
        assert_eq!(page.status, StatusCode::OK, "{path}");
        assert!(
            page.body.contains(&format!("/subscriptions/{}", w.netflix)) || path == "/activity",
            "{path}"
        );
        assert!(!page.body.contains(&gym_name), "{path} shows Bob's private {gym_name}");
        for id in [w.bobs_gym, w.other_household_sub] {
            assert!(!page.body.contains(&format!("/subscriptions/{id}\"")), "{path} links to {id}");
        }
    }
    // Filters narrow the list.
    let music = ana.get(&format!("/subscriptions?category={}", w.music)).await;
    assert!(
        music.body.contains(&format!("/subscriptions/{}\"", w.spotify))
            && !music.body.contains(&format!("/subscriptions/{}\"", w.netflix))
    );
    let tagged = ana.get("/subscriptions?tag=music").await;
    assert!(
        tagged.body.contains(&format!("/subscriptions/{}\"", w.spotify))
            && !tagged.body.contains(&format!("/subscriptions/{}\"", w.netflix))
    );
    let searched = ana.get("/subscriptions?q=netf").await;
    assert!(
        searched.body.contains(&format!("/subscriptions/{}\"", w.netflix))
            && !searched.body.contains(&format!("/subscriptions/{}\"", w.spotify))
    );
    for id in [w.bobs_gym, w.other_household_sub] {
        assert_eq!(ana.get(&format!("/subscriptions/{id}")).await.status, StatusCode::NOT_FOUND);
        assert_eq!(
            ana.get(&format!("/subscriptions/{id}/delete")).await.status,
            StatusCode::NOT_FOUND
        );
    }
}

#[tokio::test]
async fn a_subscription_is_created_deleted_after_confirmation_and_brought_back_by_undo() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let mut visitor = Visitor::new(&server);
    visitor.sign_in("ana@a.test", PASSWORD).await;
    let form = visitor.get("/subscriptions/new").await;
    let csrf = Visitor::hidden(&form, "csrf");

    let refused = visitor
        .post(
            "/subscriptions/new",
            &[
                ("csrf", &csrf),
                ("name", "Gym"),
                ("amount", "twelve"),
                ("cycle", "monthly"),
                ("next_charge_on", "2026-12-01"),
            ],
        )
        .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(refused.body.contains(r#"value="Gym""#), "the form keeps what was typed");

    let created = visitor
        .post(
            "/subscriptions/new",
            &[
                ("csrf", &csrf),
                ("name", "Gym"),
                ("amount", "29.90"),
                ("cycle", "custom"),
                ("every", "4"),
                ("unit", "week"),
                ("next_charge_on", "2026-12-01"),
                ("tags", "health, me"),
            ],
        )
        .await;
    assert_eq!(created.status, StatusCode::SEE_OTHER, "{}", created.body);
    let detail_path = created.location.unwrap();
    let detail = visitor.get(&detail_path).await;
    assert!(
        detail.body.contains("Added Gym.")
            && detail.body.contains("€29.90")
            && detail.body.contains("every 4 weeks"),
        "{}",
        detail.body
    );
    // The schedule form keeps the custom cycle rather than offering the first preset.
    assert!(detail.body.contains(r#"<option value="custom" selected>"#), "{}", detail.body);
    let id: i64 = detail_path.rsplit('/').next().unwrap().parse().unwrap();

    let confirm = visitor.get(&format!("/subscriptions/{id}/delete")).await;
    assert!(
        confirm.body.contains("Delete Gym?") && confirm.body.contains("Deleted Gym"),
        "{}",
        confirm.body
    );
    assert!(
        w.env.call(&w.ana, "get_subscription", json!({"id": id})).await.is_ok(),
        "showing the confirmation changes nothing"
    );
    let deleted = visitor.post(&format!("/subscriptions/{id}/delete"), &[("csrf", &csrf)]).await;
    assert_eq!(deleted.location.as_deref(), Some("/subscriptions"));
    assert!(w.env.call(&w.ana, "get_subscription", json!({"id": id})).await.is_err());

    let activity = visitor.get("/activity").await;
    let audit_id = w.env.call(&w.ana, "list_activity", json!({"limit": 1})).await.unwrap()["items"]
        [0]["id"]
        .as_i64()
        .unwrap();
    assert!(
        activity.body.contains("Deleted Gym")
            && activity.body.contains(&format!("/activity/{audit_id}/undo")),
        "{}",
        activity.body
    );
    let undo = visitor.get(&format!("/activity/{audit_id}/undo")).await;
    assert!(undo.body.contains("Undo this change?"), "{}", undo.body);
    let undone = visitor.post(&format!("/activity/{audit_id}/undo"), &[("csrf", &csrf)]).await;
    assert_eq!(undone.location.as_deref(), Some("/activity"), "{}", undone.body);
    let back = w.env.call(&w.ana, "get_subscription", json!({"id": id})).await.unwrap();
    assert_eq!(back["name"], "Gym");

    // Undoing it again is refused with a clear message, and changes nothing.
    let again = visitor.post(&format!("/activity/{audit_id}/undo"), &[("csrf", &csrf)]).await;
    assert_eq!(again.status, StatusCode::CONFLICT, "{}", again.body);
}

/// Reads server-sent events until `count` have arrived; returns (event, data) pairs.
pub(crate) async fn read_events(
    response: &mut reqwest::Response,
    count: usize,
) -> Vec<(String, String)> {
    let mut buffer = String::new();
    let mut events = Vec::new();
    while events.len() < count {
        let chunk = response
            .chunk()
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("the stream ended after {events:?}"));
        buffer.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            let field = |name: &str| {
                block.lines().find_map(|l| l.strip_prefix(name)).map(|v| v.trim().to_owned())
            };
            if let Some(event) = field("event:") {
                events.push((event, field("data:").unwrap_or_default()));
            }
        }
    }
    events
}

#[tokio::test]
async fn live_events_carry_only_what_the_person_may_see() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let mut ana = Visitor::new(&server);
    ana.sign_in("ana@a.test", PASSWORD).await;
    let newest = w.env.call(&w.ana, "list_activity", json!({"limit": 1})).await.unwrap()["items"]
        [0]["id"]
        .as_i64()
        .unwrap();
    let mut stream = ana
        .client
        .get(server.url(&format!("/events?since={newest}")))
        .header("cookie", ana.cookie_header())
        .send()
        .await
        .unwrap();
    assert_eq!(stream.headers()["content-type"], "text/event-stream");
    assert_eq!(
        read_events(&mut stream, 1).await[0].0,
        "ready",
        "nothing was missed since the page"
    );

    // Bob's private subscription and another household's change are not Ana's business; the
    // household's next change is, and it is the first event she gets.
    w.env
        .call(&w.bob, "create_subscription", json!({"name": "Bob's secret", "amount": "5", "cycle": "monthly", "next_charge_on": "2026-12-01", "visibility": "private"}))
        .await
        .unwrap();
    w.env
        .call(&w.cai, "create_subscription", json!({"name": "Elsewhere", "amount": "5", "cycle": "monthly", "next_charge_on": "2026-12-01"}))
        .await
        .unwrap();
    w.env
        .call(&w.ana, "update_subscription", json!({"id": w.netflix, "notes": "shared"}))
        .await
        .unwrap();
    let events = read_events(&mut stream, 1).await;
    assert_eq!(events[0].0, "change");
    assert!(events[0].1.contains("update_subscription"), "{events:?}");

    // A page rendered before a change learns about it when it connects.
    let mut late = ana
        .client
        .get(server.url(&format!("/events?since={newest}")))
        .header("cookie", ana.cookie_header())
        .send()
        .await
        .unwrap();
    let events = read_events(&mut late, 2).await;
    assert_eq!((events[0].0.as_str(), events[1].0.as_str()), ("ready", "change"), "{events:?}");

    // Without a session there is no stream.
    let anonymous = reqwest::Client::builder().redirect(Policy::none()).build().unwrap();
    let refused = anonymous.get(server.url("/events")).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn a_token_made_on_the_web_is_shown_once_works_and_is_revoked_after_confirmation() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let mut ana = Visitor::new(&server);
    ana.sign_in("ana@a.test", PASSWORD).await;
    let list = ana.get("/settings/tokens").await;
    assert!(list.body.contains(r#"value="subscriptions" checked"#), "the default set is chosen");
    let csrf = Visitor::hidden(&list, "csrf");
    let empty_name =
        ana.post("/settings/tokens", &[("csrf", &csrf), ("name", ""), ("scope", "write")]).await;
    assert_eq!(empty_name.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", empty_name.body);

    let created = ana
        .post(
            "/settings/tokens",
            &[
                ("csrf", &csrf),
                ("name", "Kitchen tablet"),
                ("scope", "read"),
                ("tools", "subscriptions"),
                ("expires_in_days", "30"),
            ],
        )
        .await;
    assert_eq!(created.status, StatusCode::OK);
    let start = created.body.find("exh_").unwrap();
    let secret: String = created.body[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    assert_eq!(secret.len(), 68, "{secret}");
    assert!(created.body.matches(&secret).count() >= 8, "every configuration carries the token");
    assert!(created.body.contains("<svg"), "the QR code is drawn");

    // It works for an agent, with the scope chosen, and the page never shows it again.
    let agent = reqwest::Client::new();
    let ask = |op: &'static str, body: serde_json::Value| {
        agent.post(server.url(&format!("/api/v1/ops/{op}"))).bearer_auth(&secret).json(&body).send()
    };
    assert_eq!(ask("list_subscriptions", json!({})).await.unwrap().status(), 200);
    assert_eq!(
        ask("create_subscription", json!({"name": "X", "amount": "1", "cycle": "monthly"}))
            .await
            .unwrap()
            .status(),
        403
    );
    let list = ana.get("/settings/tokens").await;
    assert!(list.body.contains("Kitchen tablet") && !list.body.contains(&secret), "{}", list.body);
    assert!(list.body.contains("last used"), "{}", list.body);
    assert!(list.body.contains("subscription tools"), "the tool set chosen shows: {}", list.body);

    let tokens = w.env.call(&w.ana, "list_tokens", json!({})).await.unwrap();
    let id =
        tokens["items"].as_array().unwrap().iter().find(|t| t["name"] == "Kitchen tablet").unwrap()
            ["id"]
            .as_i64()
            .unwrap();
    let confirm = ana.get(&format!("/settings/tokens/{id}/revoke")).await;
    assert!(confirm.body.contains("Revoke the token Kitchen tablet?"), "{}", confirm.body);
    assert_eq!(
        ask("list_subscriptions", json!({})).await.unwrap().status(),
        200,
        "showing the confirmation changes nothing"
    );
    let revoked = ana.post(&format!("/settings/tokens/{id}/revoke"), &[("csrf", &csrf)]).await;
    assert_eq!(revoked.location.as_deref(), Some("/settings/tokens"));
    assert_eq!(ask("list_subscriptions", json!({})).await.unwrap().status(), 401);

    // Someone else's token cannot be revoked from here.
    let (_, bobs) = w.env.token(&w.bob, "read").await;
    let ops::Actor::Token { token_id: bobs_id, .. } = bobs.actor else { panic!("a token caller") };
    let foreign = ana.post(&format!("/settings/tokens/{bobs_id}/revoke"), &[("csrf", &csrf)]).await;
    assert_eq!(foreign.status, StatusCode::NOT_FOUND, "{}", foreign.body);
}

#[tokio::test]
async fn exports_hold_what_the_person_can_see_and_nothing_else() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let mut ana = Visitor::new(&server);
    ana.sign_in("ana@a.test", PASSWORD).await;
    assert_eq!(ana.get("/export").await.status, StatusCode::OK);
    let gym = w.env.call(&w.bob, "get_subscription", json!({"id": w.bobs_gym})).await.unwrap();
    let gym_name = gym["name"].as_str().unwrap();

    let json_file = ana.get("/export/exhale-export.json").await;
    assert_eq!(json_file.status, StatusCode::OK);
    let export: serde_json::Value = serde_json::from_str(&json_file.body).unwrap();
    assert!(json_file.body.contains("Netflix") && !json_file.body.contains(gym_name));
    assert!(export.is_object());
    // The ledger too: Ana's and the household's accounts, never Bob's private one or what is
    // on it.
    let names = |part: &str| -> Vec<String> {
        export[part]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["name"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    assert_eq!(names("accounts"), ["Joint checking", "Wallet"], "{export}");
    assert_eq!(export["balances"][0]["balance"]["amount"], "1200.50");
    let payees: Vec<&str> = export["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["payee"].as_str().unwrap())
        .collect();
    assert_eq!(payees, ["Spotify family groceries"]);
    assert!(!json_file.body.contains("Bob's savings") && !json_file.body.contains("Bob's bonus"));
    assert_eq!(names("labels"), ["holiday"]);
    assert_eq!(names("budgets"), ["Everyday"]);
    assert_eq!(names("rules"), ["Groceries"]);

    let csv = ana.get("/export/exhale-subscriptions.csv").await;
    let mut lines = csv.body.lines();
    assert_eq!(
        lines.next().unwrap(),
        "id,name,status,amount,currency,cycle,next_charge_on,monthly,yearly,category,payment_method,tags,owner"
    );
    let rows: Vec<&str> = lines.collect();
    let visible = w.env.call(&w.ana, "list_subscriptions", json!({"limit": 500})).await.unwrap();
    assert_eq!(rows.len() as u64, visible["total"].as_u64().unwrap());
    let netflix = rows.iter().find(|r| r.contains(",Netflix,")).unwrap();
    assert!(netflix.contains(",12.99,EUR,monthly,") && netflix.contains("family"), "{netflix}");
    assert!(!csv.body.contains(gym_name));

    let charges = ana.get("/export/exhale-charges.csv").await;
    assert!(charges.body.starts_with("id,subscription,charged_on,amount,currency,status,note\r\n"));
    let anonymous = Visitor::new(&server).get("/export/exhale-export.json").await;
    assert_eq!(anonymous.status, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn an_owner_invites_someone_who_sets_a_password_from_the_link_once() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let mut ana = Visitor::new(&server);
    ana.sign_in("ana@a.test", PASSWORD).await;
    let path = invite_dana(&mut ana).await;

    let mut dana = Visitor::new(&server);
    let form = dana.get(&path).await;
    assert!(form.body.contains("Welcome,") && form.body.contains("Dana"), "{}", form.body);
    let token = Visitor::hidden(&form, "form_token");
    let short = dana.post(&path, &[("form_token", &token), ("password", "short")]).await;
    assert_eq!(short.status, StatusCode::UNPROCESSABLE_ENTITY);
    let token = Visitor::hidden(&short, "form_token");
    let accepted =
        dana.post(&path, &[("form_token", &token), ("password", "dana's long password")]).await;
    assert_eq!(accepted.location.as_deref(), Some("/"), "{}", accepted.body);
    assert!(dana.get("/").await.body.contains("Dana"));

    // The link is spent; Dana signs in with her password from now on.
    assert_eq!(Visitor::new(&server).get(&path).await.status, StatusCode::NOT_FOUND);
    assert_eq!(
        Visitor::new(&server).sign_in("dana@a.test", "dana's long password").await.status,
        StatusCode::SEE_OTHER
    );

    // A member, not an owner: no invitations, no household changes.
    let page = dana.get("/settings").await;
    let dana_csrf = Visitor::hidden(&page, "csrf");
    assert!(!page.body.contains("Create invitation link"));
    let refused = dana
        .post(
            "/settings/members",
            &[("csrf", &dana_csrf), ("name", "Eve2"), ("email", "eve2@a.test")],
        )
        .await;
    assert_ne!(refused.status, StatusCode::OK);
    let before = w.env.call(&w.ana, "get_household", json!({})).await.unwrap();
    let household = dana
        .post(
            "/settings/household",
            &[
                ("csrf", &dana_csrf),
                ("name", "Dana's"),
                ("currency", "EUR"),
                ("time_zone", "Europe/Madrid"),
                ("language", "en"),
            ],
        )
        .await;
    assert_eq!(household.status, StatusCode::FORBIDDEN, "{}", household.body);
    assert_eq!(w.env.call(&w.ana, "get_household", json!({})).await.unwrap(), before);
}

#[tokio::test]
async fn changing_the_password_needs_the_current_one_and_signs_out_other_devices() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let mut laptop = Visitor::new(&server);
    let mut phone = Visitor::new(&server);
    laptop.sign_in("ana@a.test", PASSWORD).await;
    phone.sign_in("ana@a.test", PASSWORD).await;
    let csrf = Visitor::hidden(&laptop.get("/settings").await, "csrf");
    let wrong = laptop
        .post(
            "/settings/password",
            &[
                ("csrf", &csrf),
                ("current_password", "not it at all"),
                ("new_password", "a brand new passphrase"),
            ],
        )
        .await;
    assert_eq!(wrong.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(wrong.body.contains("not your current password"));
    assert_eq!(phone.get("/").await.status, StatusCode::OK, "nothing changed");

    let changed = laptop
        .post(
            "/settings/password",
            &[
                ("csrf", &csrf),
                ("current_password", PASSWORD),
                ("new_password", "a brand new passphrase"),
            ],
        )
        .await;
    assert_eq!(changed.location.as_deref(), Some("/settings"), "{}", changed.body);
    assert_eq!(
        laptop.get("/settings").await.status,
        StatusCode::OK,
        "this browser stays signed in"
    );
    assert_eq!(
        phone.get("/").await.status,
        StatusCode::SEE_OTHER,
        "the other device is signed out"
    );
    assert_eq!(
        Visitor::new(&server).sign_in("ana@a.test", PASSWORD).await.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        Visitor::new(&server).sign_in("ana@a.test", "a brand new passphrase").await.status,
        StatusCode::SEE_OTHER
    );
}

#[tokio::test]
async fn owners_change_the_household_and_its_exchange_rates() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let mut ana = Visitor::new(&server);
    ana.sign_in("ana@a.test", PASSWORD).await;
    let csrf = Visitor::hidden(&ana.get("/settings").await, "csrf");
    let bad = ana
        .post(
            "/settings/household",
            &[
                ("csrf", &csrf),
                ("name", "Home"),
                ("currency", "EUR"),
                ("time_zone", "Mars/Olympus"),
                ("language", "en"),
            ],
        )
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    let saved = ana
        .post(
            "/settings/household",
            &[
                ("csrf", &csrf),
                ("name", "Home sweet home"),
                ("currency", "EUR"),
                ("time_zone", "Europe/Lisbon"),
                ("language", "en"),
            ],
        )
        .await;
    assert_eq!(saved.location.as_deref(), Some("/settings"), "{}", saved.body);
    let household = w.env.call(&w.ana, "get_household", json!({})).await.unwrap();
    assert_eq!(
        (household["name"].as_str(), household["time_zone"].as_str()),
        (Some("Home sweet home"), Some("Europe/Lisbon"))
    );

    let rates =
        ana.post("/settings/rates", &[("csrf", &csrf), ("rates", "usd 0.92\nGBP 1.17")]).await;
    assert_eq!(rates.location.as_deref(), Some("/settings"), "{}", rates.body);
    let settings = w.env.call(&w.ana, "get_settings", json!({})).await.unwrap();
    assert_eq!(settings["exchange_rates"], json!({"GBP": "1.17", "USD": "0.92"}));
    ana.post("/settings/rates", &[("csrf", &csrf), ("rates", "GBP 1.18")]).await;
    let settings = w.env.call(&w.ana, "get_settings", json!({})).await.unwrap();
    assert_eq!(
        settings["exchange_rates"],
        json!({"GBP": "1.18"}),
        "a rate left out of the form is removed"
    );
    ana.post(
        "/settings/rates",
        &[("csrf", &csrf), ("rates", "GBP 1.18"), ("reminder_days_before", "5")],
    )
    .await;
    assert_eq!(
        w.env.call(&w.ana, "get_settings", json!({})).await.unwrap()["reminder_days_before"],
        5
    );

    // Roles: an owner makes Bob an owner too.
    let bob = w.bob.member_id.to_string();
    let promoted = ana
        .post(&format!("/settings/members/{bob}/role"), &[("csrf", &csrf), ("role", "owner")])
        .await;
    assert_eq!(promoted.location.as_deref(), Some("/settings"), "{}", promoted.body);
    let members = w.env.call(&w.ana, "list_members", json!({})).await.unwrap();
    let bob_role = members["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == w.bob.member_id)
        .unwrap()["role"]
        .clone();
    assert_eq!(bob_role, "owner");
}

#[tokio::test]
async fn a_subscription_is_edited_repriced_paused_resumed_and_cancelled_from_its_page() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let mut ana = Visitor::new(&server);
    ana.sign_in("ana@a.test", PASSWORD).await;
    let path = format!("/subscriptions/{}", w.netflix);
    let detail = ana.get(&path).await;
    let csrf = Visitor::hidden(&detail, "csrf");
    let get = || async {
        w.env.call(&w.ana, "get_subscription", json!({"id": w.netflix})).await.unwrap()
    };

    let edit = ana.get(&format!("{path}/edit")).await;
    assert!(
        edit.body.contains(r#"value="Netflix""#) && edit.body.contains(r#"value="family""#),
        "{}",
        edit.body
    );
    let saved = ana
        .post(
            &format!("{path}/edit"),
            &[
                ("csrf", &csrf),
                ("name", "Netflix Premium"),
                ("url", ""),
                ("notes", "4 screens"),
                ("category_id", ""),
                ("payment_method_id", ""),
                ("tags", "family, tv"),
                ("visibility", "household"),
            ],
        )
        .await;
    assert_eq!(saved.location.as_deref(), Some(path.as_str()), "{}", saved.body);
    let s = get().await;
    assert_eq!(
        (s["name"].as_str(), s["notes"].as_str()),
        (Some("Netflix Premium"), Some("4 screens"))
    );
    assert!(
        s["category"].is_null() && s["payment_method"].is_null(),
        "emptied fields are cleared: {s}"
    );
    assert_eq!(s["tags"], json!(["family", "tv"]));

    let bad_price =
        ana.post(&format!("{path}/do/price"), &[("csrf", &csrf), ("amount", "lots")]).await;
    assert_eq!(bad_price.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(bad_price.body.contains("role=\"alert\""), "the message is shown at the form");
    let repriced = ana
        .post(
            &format!("{path}/do/price"),
            &[("csrf", &csrf), ("amount", "17.99"), ("effective_on", "")],
        )
        .await;
    assert_eq!(repriced.location.as_deref(), Some(path.as_str()), "{}", repriced.body);
    assert_eq!(get().await["price"]["amount"], "17.99");

    ana.post(&format!("{path}/do/pause"), &[("csrf", &csrf), ("from", ""), ("until", "")]).await;
    assert_eq!(get().await["status"], "paused");
    assert!(ana.get(&path).await.body.contains(">Resume<"));
    ana.post(&format!("{path}/do/resume"), &[("csrf", &csrf), ("on", "")]).await;
    assert_eq!(get().await["status"], "active");
    let rescheduled = ana
        .post(
            &format!("{path}/do/schedule"),
            &[
                ("csrf", &csrf),
                ("cycle", "custom"),
                ("every", "3"),
                ("unit", "month"),
                ("next_charge_on", "2026-12-24"),
            ],
        )
        .await;
    assert_eq!(rescheduled.location.as_deref(), Some(path.as_str()), "{}", rescheduled.body);
    let s = get().await;
    assert_eq!(
        (s["cycle"]["every"].as_i64(), s["next_charge_on"].as_str()),
        (Some(3), Some("2026-12-24"))
    );
    ana.post(&format!("{path}/do/cancel"), &[("csrf", &csrf), ("ends_on", "")]).await;
    assert_eq!(get().await["status"], "cancelled");

    // A charge's status, from the same page.
    let charge = w.env.call(&w.ana, "get_charge", json!({"id": w.charge})).await.unwrap();
    let subscription_id = charge["subscription"]["id"].as_i64().unwrap().to_string();
    let updated = ana
        .post(
            &format!("/charges/{}", w.charge),
            &[("csrf", &csrf), ("subscription_id", &subscription_id), ("status", "refunded")],
        )
        .await;
    assert_eq!(updated.status, StatusCode::SEE_OTHER, "{}", updated.body);
    assert_eq!(
        w.env.call(&w.ana, "get_charge", json!({"id": w.charge})).await.unwrap()["status"],
        "refunded"
    );

    // Nothing here reaches another member's private subscription or a charge of theirs.
    for (url, form) in [
        (format!("/subscriptions/{}/do/pause", w.bobs_gym), vec![("csrf", csrf.as_str())]),
        (
            format!("/subscriptions/{}/edit", w.bobs_gym),
            vec![("csrf", csrf.as_str()), ("name", "Mine now")],
        ),
        (
            format!("/charges/{}", w.bobs_charge),
            vec![("csrf", csrf.as_str()), ("subscription_id", "1"), ("status", "failed")],
        ),
    ] {
        assert_eq!(ana.post(&url, &form).await.status, StatusCode::NOT_FOUND, "{url}");
    }
}

#[tokio::test]
async fn categories_payment_methods_and_tags_are_managed_and_deletes_are_confirmed_first() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let mut ana = Visitor::new(&server);
    ana.sign_in("ana@a.test", PASSWORD).await;
    let page = ana.get("/organise").await;
    assert!(
        page.body.contains("Streaming")
            && page.body.contains("Visa")
            && page.body.contains("family"),
        "{}",
        page.body
    );
    assert!(
        !page.body.contains("Bob&#x27;s card") && !page.body.contains("Bob's card"),
        "Bob's private card is not Ana's"
    );
    let csrf = Visitor::hidden(&page, "csrf");
    let categories = || async {
        w.env.call(&w.ana, "list_categories", json!({})).await.unwrap()["items"].clone()
    };
    let named = |items: &serde_json::Value, name: &str| {
        items.as_array().unwrap().iter().find(|c| c["name"] == name).cloned()
    };

    let added = ana
        .post(
            "/organise/do/create_category",
            &[("csrf", &csrf), ("name", "Board games"), ("emoji", "🎲")],
        )
        .await;
    assert_eq!(added.location.as_deref(), Some("/organise"), "{}", added.body);
    let gaming =
        named(&categories().await, "Board games").unwrap()["id"].as_i64().unwrap().to_string();
    let taken =
        ana.post("/organise/do/create_category", &[("csrf", &csrf), ("name", "Board games")]).await;
    assert_eq!(taken.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", taken.body);
    ana.post(
        "/organise/do/update_category",
        &[("csrf", &csrf), ("id", &gaming), ("name", "Tabletop")],
    )
    .await;
    assert!(named(&categories().await, "Tabletop").is_some());

    // Merging Streaming into Tabletop asks first, then moves Netflix.
    let streaming = w.streaming.to_string();
    let confirm = ana
        .post(
            "/organise/do/merge_categories",
            &[("csrf", &csrf), ("source_id", &streaming), ("target_id", &gaming)],
        )
        .await;
    assert_eq!(confirm.status, StatusCode::OK);
    assert!(
        confirm.body.contains("Are you sure?")
            && confirm.body.contains(r#"name="confirmed" value="yes""#),
        "{}",
        confirm.body
    );
    assert!(
        named(&categories().await, "Streaming").is_some(),
        "the confirmation page changes nothing"
    );
    let merged = ana
        .post(
            "/organise/do/merge_categories",
            &[
                ("csrf", &csrf),
                ("source_id", &streaming),
                ("target_id", &gaming),
                ("confirmed", "yes"),
            ],
        )
        .await;
    assert_eq!(merged.location.as_deref(), Some("/organise"), "{}", merged.body);
    assert!(named(&categories().await, "Streaming").is_none());
    let netflix = w.env.call(&w.ana, "get_subscription", json!({"id": w.netflix})).await.unwrap();
    assert_eq!(netflix["category"]["name"], "Tabletop");

    ana.post(
        "/organise/do/create_payment_method",
        &[
            ("csrf", &csrf),
            ("name", "Amex"),
            ("kind", "card"),
            ("last4", "0005"),
            ("expires", "2029-03"),
        ],
    )
    .await;
    let methods = w.env.call(&w.ana, "list_payment_methods", json!({})).await.unwrap();
    assert!(named(&methods["items"], "Amex").is_some());
    ana.post(
        "/organise/do/rename_tag",
        &[("csrf", &csrf), ("from", "family"), ("to", "household")],
    )
    .await;
    let tags = w.env.call(&w.ana, "list_tags", json!({})).await.unwrap();
    assert!(
        named(&tags["items"], "household").is_some() && named(&tags["items"], "family").is_none()
    );
    ana.post(
        "/organise/do/delete_tag",
        &[("csrf", &csrf), ("name", "household"), ("confirmed", "yes")],
    )
    .await;
    assert!(
        named(&w.env.call(&w.ana, "list_tags", json!({})).await.unwrap()["items"], "household")
            .is_none()
    );

    // Another member's private card cannot be deleted from here; a forged form changes nothing.
    let bobs = w.bobs_card.to_string();
    let foreign = ana
        .post(
            "/organise/do/delete_payment_method",
            &[("csrf", &csrf), ("id", &bobs), ("confirmed", "yes")],
        )
        .await;
    assert_eq!(foreign.status, StatusCode::NOT_FOUND, "{}", foreign.body);
    let forged =
        ana.post("/organise/do/create_category", &[("csrf", "forged"), ("name", "Forged")]).await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn ticked_subscriptions_change_together_and_a_bulk_delete_is_confirmed_first() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let mut ana = Visitor::new(&server);
    ana.sign_in("ana@a.test", PASSWORD).await;
    let list = ana.get("/subscriptions").await;
    let csrf = Visitor::hidden(&list, "csrf");
    let (netflix, spotify) = (w.netflix.to_string(), w.spotify.to_string());
    let w = &w;
    let status = |id: i64| async move {
        w.env.call(&w.ana, "get_subscription", json!({"id": id})).await.unwrap()["status"].clone()
    };

    let paused = ana
        .post(
            "/subscriptions/bulk",
            &[("csrf", &csrf), ("ids", &netflix), ("ids", &spotify), ("action", "pause")],
        )
        .await;
    assert_eq!(paused.location.as_deref(), Some("/subscriptions"), "{}", paused.body);
    assert_eq!(
        (status(w.netflix).await, status(w.spotify).await),
        (json!("paused"), json!("paused"))
    );
    assert!(ana.get("/subscriptions").await.body.contains("Changed 2 of 2"));

    let music = w.music.to_string();
    ana.post(
        "/subscriptions/bulk",
        &[("csrf", &csrf), ("ids", &netflix), ("action", "categorise"), ("category_id", &music)],
    )
    .await;
    let s = w.env.call(&w.ana, "get_subscription", json!({"id": w.netflix})).await.unwrap();
    assert_eq!(s["category"]["id"], w.music);

    let confirm = ana
        .post(
            "/subscriptions/bulk",
            &[("csrf", &csrf), ("ids", &netflix), ("ids", &spotify), ("action", "delete")],
        )
        .await;
    assert!(confirm.body.contains("Delete 2 subscriptions?"), "{}", confirm.body);
    assert_eq!(status(w.netflix).await, json!("paused"), "asking changes nothing");
    let deleted = ana
        .post(
            "/subscriptions/bulk",
            &[
                ("csrf", &csrf),
                ("ids", &netflix),
                ("ids", &spotify),
                ("action", "delete"),
                ("confirmed", "yes"),
            ],
        )
        .await;
    assert_eq!(deleted.location.as_deref(), Some("/subscriptions"));
    assert!(w.env.call(&w.ana, "get_subscription", json!({"id": w.netflix})).await.is_err());

    // One of someone else's ids fails the whole call and changes nothing.
    let before = w.env.dump().await;
    let gym = w.bobs_gym.to_string();
    let mixed = ana
        .post("/subscriptions/bulk", &[("csrf", &csrf), ("ids", &gym), ("action", "pause")])
        .await;
    assert_ne!(mixed.status, StatusCode::OK);
    assert_eq!(w.env.dump().await, before);
}

#[tokio::test]
async fn a_statement_is_uploaded_reviewed_confirmed_and_imported_once() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let mut ana = Visitor::new(&server);
    ana.sign_in("ana@a.test", PASSWORD).await;
    let csrf = Visitor::hidden(&ana.get("/import").await, "csrf");

    let empty = ana.upload("/import", &[("csrf", &csrf)], ("statement", b"")).await;
    assert_eq!(empty.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(empty.body.contains("Choose the export file first"), "{}", empty.body);
    let junk = ana
        .upload("/import", &[("csrf", &csrf)], ("statement", &[0, 159, 146, 150, 0, 1, 2, 3]))
        .await;
    assert!(junk.body.contains("not a text file"), "{}", junk.body);
    let forged = ana
        .upload(
            "/import",
            &[("csrf", "forged")],
            ("statement", crate::import::uk_export().as_bytes()),
        )
        .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);

    let review = ana
        .upload("/import", &[("csrf", &csrf)], ("statement", crate::import::uk_export().as_bytes()))
        .await;
    assert_eq!(review.status, StatusCode::OK, "{}", review.body);
    assert!(
        review.body.contains("16 transactions read") && review.body.contains("already:"),
        "{}",
        review.body
    );
    // The form as the browser would send it: every row's fields, the ticked ones picked.
    let body = unescape(&review.body);
    let rows = body.matches("name=\"charges_").count();
    let mut form: Vec<(String, String)> = vec![("csrf".into(), csrf.clone())];
    for i in 0..rows {
        for field in ["name", "amount", "currency", "charges"] {
            let marker = format!(r#"name="{field}_{i}" value=""#);
            let start = body.find(&marker).unwrap() + marker.len();
            let value = if field == "charges" {
                body[start..].split("\"></td>").next().unwrap().to_owned()
            } else {
                body[start..].split('"').next().unwrap().to_owned()
            };
            form.push((format!("{field}_{i}"), value));
        }
        form.push((format!("cycle_{i}"), "monthly".into()));
        if body.contains(&format!(r#"name="pick_{i}" value="1" checked"#)) {
            form.push((format!("pick_{i}"), "1".into()));
        }
    }
    let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let confirm = ana.post("/import/apply", &pairs).await;
    assert!(
        confirm.body.contains("Import these subscriptions?") && confirm.body.contains("Gympower"),
        "{}",
        confirm.body
    );
    assert!(!confirm.body.contains("Added Netflix"), "Netflix exists already and was not ticked");
    let mut confirmed = pairs.clone();
    confirmed.push(("confirmed", "yes"));
    let done = ana.post("/import/apply", &confirmed).await;
    assert_eq!(done.location.as_deref(), Some("/subscriptions"), "{}", done.body);
    assert!(ana.get("/subscriptions").await.body.contains("Imported 1."));
    let list = w.env.call(&w.ana, "list_subscriptions", json!({"text": "gympower"})).await.unwrap();
    assert_eq!(list["total"], 1);

    // The same upload again proposes nothing new.
    let again = ana
        .upload("/import", &[("csrf", &csrf)], ("statement", crate::import::uk_export().as_bytes()))
        .await;
    assert!(!again.body.contains(r#"value="1" checked"#), "{}", again.body);
}

#[tokio::test]
async fn a_form_over_the_request_limit_is_refused_and_a_statement_may_be_larger() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let mut visitor = Visitor::new(&server);
    visitor.sign_in("ana@a.test", PASSWORD).await;
    let form = visitor.get("/subscriptions/new").await;
    let csrf = Visitor::hidden(&form, "csrf");
    let before = w.env.dump().await;
    // 1.5 MiB of notes: over the configured 1 MiB, under axum's own default of 2 MiB.
    let notes = "n".repeat(1536 * 1024);
    let fields = [
        ("csrf", csrf.as_str()),
        ("name", "Huge"),
        ("amount", "1"),
        ("cycle", "monthly"),
        ("next_charge_on", "2026-12-01"),
        ("notes", notes.as_str()),
    ];
    let refused = visitor.post("/subscriptions/new", &fields).await;
    assert_eq!(refused.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(w.env.dump().await, before);
    // A statement has the catalog's own, larger limit: 1.1 MiB is read.
    let import = visitor.get("/import").await;
    let csrf = Visitor::hidden(&import, "csrf");
    let statement = "2026-01-01,SHOP,-1.00\n".repeat(1100 * 1024 / 22);
    let read =
        visitor.upload("/import", &[("csrf", &csrf)], ("statement", statement.as_bytes())).await;
    assert_ne!(read.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(read.status.is_success(), "{}", read.status);
}

#[tokio::test]
async fn behind_https_the_cookies_are_secure_and_for_this_host_alone() {
    let dir = test_support::DataDir::new();
    crate::cli::create_owner(&dir, PASSWORD);
    let mut child = crate::cli::spawn_serve_with(&dir, &[("EXHALE_SECURE_COOKIES", "true")]);
    let url = crate::cli::listening_url(&mut child);
    let mut ana = Visitor::at(&url);
    let form = ana.get("/sign-in").await;
    let set = form.headers["set-cookie"].to_str().unwrap().to_owned();
    assert!(set.starts_with("__Host-exhale_form="), "{set}");
    let signed_in = ana.sign_in("ana@a.test", PASSWORD).await;
    assert_eq!(signed_in.status, StatusCode::SEE_OTHER, "{}", signed_in.body);
    let session = signed_in
        .headers
        .get_all("set-cookie")
        .iter()
        .map(|value| value.to_str().unwrap())
        .find(|value| value.starts_with("__Host-exhale_session="))
        .unwrap_or_else(|| panic!("{:?}", signed_in.headers))
        .to_owned();
    for attribute in ["; Path=/", "; HttpOnly", "; SameSite=Lax", "; Secure"] {
        assert!(session.contains(attribute), "{session}");
    }
    assert!(!session.contains("Domain"), "{session}");
    assert!(ana.get("/").await.body.contains("Ana"), "the prefixed cookie is read back");
    // The unprefixed name, as a sibling subdomain or a plain-HTTP page could set it, is not.
    let session_value = ana.cookies.remove("__Host-exhale_session").unwrap();
    ana.cookies.insert("exhale_session".into(), session_value);
    assert_eq!(ana.get("/").await.status, StatusCode::SEE_OTHER);
    std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[tokio::test]
async fn signing_in_goes_back_only_to_a_page_of_this_site() {
    let w = World::new().await;
    let server = w.env.serve().await;
    let consent = "/authorize?client_id=exhclient_x&state=a%2Bb";
    for (next, expected) in [
        (consent, consent),
        ("//evil.example/x", "/"),
        ("https://evil.example/", "/"),
        ("/\\evil.example", "/"),
        // Browsers drop tabs and newlines from a URL: this would be //evil.example.
        ("/\t/evil.example", "/"),
        ("/\n/evil.example", "/"),
        ("", "/"),
    ] {
        let mut visitor = Visitor::new(&server);
        let form = visitor.get("/sign-in").await;
        let token = Visitor::hidden(&form, "form_token");
        let fields = [
            ("form_token", token.as_str()),
            ("email", "ana@a.test"),
            ("password", PASSWORD),
            ("next", next),
        ];
        let signed_in = visitor.post("/sign-in", &fields).await;
        assert_eq!(signed_in.status, StatusCode::SEE_OTHER, "{}", signed_in.body);
        assert_eq!(signed_in.location.as_deref(), Some(expected), "{next}");
    }
}

#[tokio::test]
async fn a_member_reads_the_households_language_until_she_chooses_her_own() {
    use i18n::{Language::Spanish, format_in};
    let w = World::new().await;
    let server = w.env.serve().await;
    let members = w.env.call(&w.ana, "list_members", json!({})).await.unwrap();
    assert!(
        members["items"].as_array().unwrap().iter().all(|m| m["language"].is_null()),
        "everyone follows the household: {members}"
    );

    // The owner makes the household Spanish: Ana, who never chose, now reads Spanish.
    let mut ana = Visitor::speaking(&server, "en");
    ana.sign_in("ana@a.test", PASSWORD).await;
    let settings = ana.get("/settings").await;
    assert!(settings.body.contains("<html lang=\"en\">"), "{}", settings.body);
    let csrf = Visitor::hidden(&settings, "csrf");
    let household = [
        ("csrf", csrf.as_str()),
        ("name", "Home"),
        ("currency", "EUR"),
        ("time_zone", "Europe/Madrid"),
        ("language", "es"),
    ];
    let saved = ana.post("/settings/household", &household).await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.body);
    let settings = unescape(&ana.get("/settings").await.body);
    assert!(settings.contains("<html lang=\"es\">"), "{settings}");
    assert!(settings.contains(format_in(Spanish, "Your language")), "{settings}");
    assert!(settings.contains("<option value=\"es\" selected>Español</option>"), "{settings}");
    assert!(
        settings.contains(&format!(
            "<option value=\"\" selected>{}</option>",
            format_in(Spanish, "The household's")
        )),
        "her own setting follows the household: {settings}"
    );

    // Her own choice wins over the household's, on every page, and empty follows it again.
    let profile = |language: &'static str| {
        let csrf = csrf.clone();
        move || vec![("csrf", csrf), ("name", "Ana".to_owned()), ("language", language.to_owned())]
    };
    for (language, html, reads) in [("en", "en", "Settings"), ("", "es", "Ajustes")] {
        let fields = profile(language)();
        let pairs: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let saved = ana.post("/settings/profile", &pairs).await;
        assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.body);
        let page = unescape(&ana.get("/settings").await.body);
        assert!(page.contains(&format!("<html lang=\"{html}\">")), "{language}: {page}");
        assert!(page.contains(reads), "{language}: {page}");
        let listed = w.env.call(&w.ana, "list_members", json!({})).await.unwrap();
        let mine =
            listed["items"].as_array().unwrap().iter().find(|m| m["is_you"] == true).cloned();
        let expected = if language.is_empty() { serde_json::Value::Null } else { json!(language) };
        assert_eq!(mine.unwrap()["language"], expected, "{listed}");
    }

    // An agent clears a language with null; what is not a language tag is refused.
    w.env
        .call(&w.ana, "update_member", json!({"id": w.bob.member_id, "language": "en"}))
        .await
        .unwrap();
    w.env
        .call(&w.ana, "update_member", json!({"id": w.bob.member_id, "language": null}))
        .await
        .unwrap();
    let refused = w
        .env
        .call(&w.ana, "update_member", json!({"id": w.bob.member_id, "language": "English please"}))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), "invalid_input", "{refused}");
    let listed = w.env.call(&w.ana, "list_members", json!({})).await.unwrap();
    let bob = listed["items"].as_array().unwrap().iter().find(|m| m["name"] == "Bob").unwrap();
    assert!(bob["language"].is_null(), "{bob}");
}

#[tokio::test]
async fn pages_are_written_in_the_readers_language_and_agents_keep_english() {
    use i18n::{Language::Spanish, format_in};
    let w = World::new().await;
    let server = w.env.serve().await;
    // Signed out, the browser's language: Spanish is asked for after a language Exhale lacks.
    let mut visitor = Visitor::speaking(&server, "fr-FR,fr;q=0.9,es;q=0.8,en;q=0.5");
    let sign_in = visitor.get("/sign-in").await;
    assert!(sign_in.body.contains("<html lang=\"es\">"), "{}", sign_in.body);
    assert!(
        sign_in.body.contains(format_in(Spanish, "Sign in"))
            && format_in(Spanish, "Sign in") != "Sign in"
    );

    // Signed in, the person's own setting wins over the browser's.
    let mut ana = Visitor::speaking(&server, "es");
    ana.sign_in("ana@a.test", PASSWORD).await;
    let money = ana.get("/money").await;
    assert!(
        money.body.contains("<html lang=\"en\">") && money.body.contains(">Money<"),
        "Ana's setting is English"
    );
    w.env
        .call(&w.ana, "update_member", json!({"id": w.ana.member_id, "language": "es"}))
        .await
        .unwrap();
    let mut ana = Visitor::speaking(&server, "en-GB");
    ana.sign_in("ana@a.test", PASSWORD).await;
    let money = ana.get("/money").await;
    let body = unescape(&money.body);
    assert!(body.contains("<html lang=\"es\">"), "{body}");
    for english in ["Money", "Add a rule", "Rules", "Accounts"] {
        assert!(body.contains(format_in(Spanish, english)), "{english} in Spanish: {body}");
    }
    assert!(!body.contains(">Add a rule<"), "{body}");

    // A refusal beside its form, and the notice after a change, are said in Spanish; the
    // catalog, which agents read, still says them in English.
    let csrf = Visitor::hidden(&money, "csrf");
    let refused = ana
        .post(
            "/money/do/create_rule",
            &[("csrf", &csrf), ("name", "Cafe"), ("payee_contains", "cafe")],
        )
        .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    let agent = w
        .env
        .call(&w.ana, "create_rule", json!({"name": "Cafe", "payee_contains": "cafe"}))
        .await
        .unwrap_err();
    let (said, english) = (unescape(&refused.body), agent.text().render());
    assert!(!said.contains(&english), "{english} is said in Spanish: {said}");
    assert!(said.contains(&i18n::say(Spanish, &agent.text())), "{said}");
    let added = ana
        .post(
            "/money/do/create_rule",
            &[
                ("csrf", &csrf),
                ("name", "Cafe"),
                ("payee_contains", "cafe"),
                ("set_category_id", &w.streaming.to_string()),
            ],
        )
        .await;
    assert_eq!(added.status, StatusCode::SEE_OTHER, "{}", added.body);
    let after = unescape(&ana.get("/money").await.body);
    assert!(
        after.contains(format_in(Spanish, "Added the rule. Imports run it from now on.")),
        "{after}"
    );
    assert!(
        after.contains("Cuando el beneficiario contiene «cafe»: pone la categoría Streaming"),
        "{after}"
    );

    // What the catalog writes of a change is in her language on her pages, and in English
    // for an agent reading the same activity.
    let activity = unescape(&ana.get("/activity").await.body);
    assert!(activity.contains("Se ha añadido la regla Cafe"), "{activity}");
    let agents = w.env.call(&w.ana, "list_activity", json!({"limit": 5})).await.unwrap();
    assert!(agents.to_string().contains("Added rule Cafe"), "{agents}");

    // An amount is typed with the reader's marks: "-1.234,50" is -1234.50 in Spanish.
    let joint = w.joint.to_string();
    let typed = [
        ("csrf", csrf.as_str()),
        ("back", "transactions"),
        ("account_id", joint.as_str()),
        ("on", "2026-11-25"),
        ("amount", "-1.234,50"),
        ("payee", "Muebles"),
    ];
    let added = ana.post("/money/do/create_transaction", &typed).await;
    assert_eq!(added.status, StatusCode::SEE_OTHER, "{}", added.body);
    let found =
        w.env.call(&w.ana, "search_transactions", json!({"text": "Muebles"})).await.unwrap();
    assert_eq!(found["items"][0]["amount"]["amount"], "-1234.50", "{found}");

    // Dates and amounts are written as Spanish writes them, where agents read ISO and "€".
    let listed = unescape(&ana.get("/transactions?q=Muebles").await.body);
    assert!(listed.contains("25 nov 2026") && listed.contains("-1234,50\u{a0}€"), "{listed}");
    assert!(!listed.contains(">2026-11-25<") && !listed.contains("-€1,234.50"), "{listed}");
    assert_eq!(found["items"][0]["on"], "2026-11-25", "{found}");
    assert_eq!(found["items"][0]["amount"]["display"], "-€1,234.50", "{found}");
}
