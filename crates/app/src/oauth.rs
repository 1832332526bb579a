//! The OAuth 2.1 authorization server (`ops::oauth::OAuthServer`): registering clients,
//! checking authorization requests, the person's decision, codes with PKCE, access tokens
//! for an hour and refresh tokens rotated on every use, revocation, and the access tokens'
//! callers. A grant is a row of `tokens` of kind `oauth`, so an OAuth client acts through the
//! invoker, the audit log and the limits exactly as an API token does. The pure rules
//! (redirect URIs, resources, scopes, PKCE) are in `rules`; the wire format is the `oauth`
//! crate's.

mod rules;

use std::{collections::HashMap, net::IpAddr, sync::Arc};

use jiff::{SignedDuration, Timestamp};
use ops::{
    Actor, Caller, OpError, Scope, Text, Via,
    oauth::{
        AuthorizationRequest, AuthorizeRefusal, ClientCredentials, ConsentRequest, Decision,
        ErrorCode, IssuedTokens, MetadataDocuments, OAuthError, PublicOrigin, RegisteredClient,
        Registration, TokenRequest,
    },
};

use crate::{
    App,
    clock::timestamp_text,
    credentials::{hash_token, new_secret},
    limits::{PerNetwork, locked},
    transactions,
};

/// How long a checked authorization request waits for the person.
const REQUEST_LIFETIME: SignedDuration = SignedDuration::from_mins(10);
/// How long a code may wait to be exchanged.
const CODE_LIFETIME: SignedDuration = SignedDuration::from_secs(60);
/// A refresh token unused this long expires.
const REFRESH_IDLE: SignedDuration = SignedDuration::from_hours(30 * 24);
/// No refresh outlives its grant by more than this: the person consents again.
const REFRESH_ABSOLUTE: SignedDuration = SignedDuration::from_hours(180 * 24);
/// Authorization requests one person may have waiting; older ones are forgotten.
const PENDING_REQUESTS: u32 = 20;
/// How long tokens and codes are kept after they expire.
const PRUNE_AFTER: SignedDuration = SignedDuration::from_hours(24);
/// A refresh token presented again within this window gets the pair it was exchanged for (the
/// client's first answer was lost); after it, the whole family is revoked.
const REFRESH_RETRY: SignedDuration = SignedDuration::from_secs(60);
/// Registrations one client network (an address, or an IPv6 /64) may make.
const REGISTRATIONS: PerNetwork =
    PerNetwork { kind: "oauth_registration", limit: 20, window: SignedDuration::from_hours(1) };
/// Refused `/token` requests one client network may make before it must wait: codes and secrets
/// cannot be guessed, but each try costs a lookup.
const TOKEN_FAILURES: PerNetwork =
    PerNetwork { kind: "oauth_token_refused", limit: 30, window: SignedDuration::from_mins(15) };
/// Revocations one client network may ask for.
const REVOCATIONS: PerNetwork =
    PerNetwork { kind: "oauth_revocation", limit: 50, window: SignedDuration::from_mins(15) };
/// Registered clients kept at most. Past it, a new registration takes the place of a client
/// never granted anything (`displaced_client`: from the network that registered most such
/// clients, so a flood displaces itself); it never evicts a client someone uses, is deciding
/// on, or just registered.
const MAX_CLIENTS: i64 = 1000;
/// A registered client nobody granted anything is deleted after this.
const UNUSED_CLIENT_LIFETIME: SignedDuration = SignedDuration::from_hours(24);
/// A newly registered client is displaced only after older ones of as large a flood: the
/// person it opened the browser for may be signing in.
const NEW_CLIENT_GRACE: SignedDuration = SignedDuration::from_mins(10);
const MAX_CLIENT_NAME_CHARS: usize = 100;
/// How long a metadata document is kept, whatever its server says (the draft lets an
/// authorization server clamp it).
const DOCUMENT_KEPT_AT_LEAST: u64 = 5 * 60;
const DOCUMENT_KEPT_AT_MOST: u64 = 24 * 60 * 60;
/// Documents kept at once.
const MAX_DESCRIBED_CLIENTS: usize = 1000;
/// Access tokens start with this (and an underscore), so a bearer is read as one without a
/// second lookup.
const ACCESS_TOKEN_PREFIX: &str = "exha";
const CLIENT_ID_PREFIX: &str = "exhclient";

fn invalid(code: ErrorCode, description: impl Into<String>) -> OAuthError {
    OAuthError::new(code, description)
}

/// Store and internal failures, as the protocol says them.
fn server_error(err: OpError) -> OAuthError {
    match err {
        OpError::RateLimited { .. } => {
            invalid(ErrorCode::SlowDown, "Too many requests; wait a minute and try again.")
        }
        _ => OAuthError::server_error(),
    }
}

/// An address past one of the endpoints' limits.
fn slow_down(wait_secs: u64) -> OAuthError {
    invalid(
        ErrorCode::SlowDown,
        format!("Too many requests from this address; try again in {wait_secs} s."),
    )
}

fn json_list(values: &[String]) -> String {
    serde_json::to_string(values).unwrap_or_else(|_| "[]".into())
}

fn parse_list(text: &str) -> Vec<String> {
    serde_json::from_str(text).unwrap_or_default()
}

/// Which client a registration past `MAX_CLIENTS` displaces, of those never granted anything
/// (oldest first): never one someone signed in is deciding on; of the rest, one whose network
/// registered the most, counted at each width (`limits::Network::around`, so a flood from many
/// /64s of one /48 displaces itself), registered before `recent` (`NEW_CLIENT_GRACE`: the
/// person a new client opened the browser for may be signing in) when there is one, the
/// oldest.
fn displaced_client(unused: &[store::oauth::UngrantedClient], recent: &str) -> Option<String> {
    let networks = |client: &store::oauth::UngrantedClient| {
        crate::limits::Network::around(
            client.registered_from.as_deref().and_then(|ip| ip.parse().ok()),
        )
    };
    let mut counts: HashMap<(u8, Option<IpAddr>), usize> = HashMap::new();
    for client in unused {
        for network in networks(client) {
            *counts.entry(network).or_default() += 1;
        }
    }
    let priority = |client: &store::oauth::UngrantedClient| {
        let weight = networks(client).iter().map(|network| counts[network]).max().unwrap_or(0);
        (weight, client.created_at.as_str() < recent)
    };
    let candidates = unused.iter().filter(|client| !client.asked);
    let highest = candidates.clone().map(priority).max()?;
    candidates.into_iter().find(|client| priority(client) == highest).map(|c| c.id.clone())
}

/// A client's name as a consent page may show it: control characters removed, trimmed, at
/// most [`MAX_CLIENT_NAME_CHARS`] characters.
fn clean_client_name(name: Option<&str>, redirect_uris: &[String]) -> String {
    let stripped: String = name.unwrap_or_default().chars().filter(|c| !c.is_control()).collect();
    let shortened = domain::validate::shorten(&stripped, MAX_CLIENT_NAME_CHARS);
    match domain::validate::clean_line(&shortened, MAX_CLIENT_NAME_CHARS) {
        Ok(name) => name,
        // Unnamed clients, and names that hide or reorder text, are named by where they send
        // people.
        Err(_) => redirect_uris
            .first()
            .map(|uri| rules::redirect_host(uri))
            .unwrap_or_else(|| "An app".into()),
    }
}

impl App {
    /// Sets the public origin OAuth works under; `None` turns OAuth off.
    pub fn set_public_origin(&self, origin: Option<PublicOrigin>) {
        if let Ok(mut current) = self.oauth.origin.write() {
            *current = origin;
        }
    }

    /// Sets who fetches client metadata documents; `None` turns them off, so an HTTPS
    /// `client_id` is an unknown client.
    pub fn set_metadata_documents(&self, documents: Option<Arc<dyn MetadataDocuments>>) {
        if let Ok(mut current) = self.oauth.documents.write() {
            *current = documents;
        }
    }

    fn metadata_documents(&self) -> Option<Arc<dyn MetadataDocuments>> {
        self.oauth.documents.read().ok().and_then(|documents| documents.clone())
    }

    /// The client a metadata document describes, from the cache or fetched now; errors are
    /// never kept, so a fixed document works on the next try.
    async fn described_client(&self, url: &str) -> Result<store::oauth::ClientRow, Text> {
        let refused = |why: &str| {
            Text::new(
                "This app describes itself at {url}, which Exhale cannot use: {why}. Tell the app's makers, or connect it another way.",
            )
            .with("url", url)
            .with("why", why)
        };
        if let Some(why) = rules::refuse_document_url(url) {
            return Err(refused(&why));
        }
        let now = self.clock.now();
        if let Some((row, until)) = locked(&self.oauth.described).get(url)
            && now < *until
        {
            return Ok(row.clone());
        }
        let documents = self.metadata_documents().ok_or_else(|| refused("documents are off"))?;
        let live = match documents.fetch(url).await {
            Ok(fetched) => rules::read_client_document(url, &fetched.body)
                .map(|document| (document, fetched.max_age_secs)),
            Err(why) => Err(why),
        };
        let (document, max_age_secs) = match live {
            Ok(read) => read,
            // Kept briefly, so the live document is tried again soon.
            Err(why) => match rules::known_client_document(url) {
                Some(document) => {
                    tracing::info!(url, why, "a well-known client's document, from Exhale's table");
                    (document, Some(DOCUMENT_KEPT_AT_LEAST))
                }
                None => return Err(refused(&why)),
            },
        };
        let row = store::oauth::ClientRow {
            id: url.to_owned(),
            kind: "metadata_document".into(),
            // A document without a name is named by its host.
            name: clean_client_name(document.name.as_deref(), &[url.to_owned()]),
            redirect_uris: json_list(&document.redirect_uris),
            auth_method: "none".into(),
            secret_hash: None,
            grant_types: json_list(&document.grant_types),
            application_type: document.application_type,
            registered_from: None,
            created_at: timestamp_text(now),
        };
        let store = self.store.clone();
        let stored = row.clone();
        transactions::blocking_write(store, move |db| {
            store::oauth::upsert_client(db, &stored).map_err(transactions::internal)
        })
        .await
        .map_err(|_| refused("Exhale could not keep it"))?;
        let kept = max_age_secs
            .unwrap_or(DOCUMENT_KEPT_AT_LEAST)
            .clamp(DOCUMENT_KEPT_AT_LEAST, DOCUMENT_KEPT_AT_MOST);
        let mut described = locked(&self.oauth.described);
        described.retain(|_, (_, until)| now < *until);
        if described.len() < MAX_DESCRIBED_CLIENTS {
            let until = now + SignedDuration::from_secs(i64::try_from(kept).unwrap_or(i64::MAX));
            described.insert(url.to_owned(), (row.clone(), until));
        }
        Ok(row)
    }

    pub(crate) fn public_origin(&self) -> Option<PublicOrigin> {
        self.oauth.origin.read().ok().and_then(|origin| origin.clone())
    }

    fn iss_redirect(&self, redirect_uri: &str, params: &[(&str, &str)]) -> String {
        let issuer = self.public_origin().map(|o| o.origin).unwrap_or_default();
        let mut params = params.to_vec();
        params.push(("iss", &issuer));
        let query = serde_urlencoded::to_string(&params).unwrap_or_default();
        let separator = if redirect_uri.contains('?') { '&' } else { '?' };
        format!("{redirect_uri}{separator}{query}")
    }

    async fn oauth_register(
        &self,
        registration: Registration,
        from: Option<IpAddr>,
    ) -> Result<RegisteredClient, OAuthError> {
        let metadata = |text: String| invalid(ErrorCode::InvalidClientMetadata, text);
        if registration.redirect_uris.is_empty() {
            return Err(invalid(
                ErrorCode::InvalidRedirectUri,
                "redirect_uris is required: list the URIs Exhale may send the browser back to.",
            ));
        }
        if registration.redirect_uris.len() > rules::MAX_REDIRECT_URIS {
            return Err(invalid(
                ErrorCode::InvalidRedirectUri,
                format!("At most {} redirect_uris may be registered.", rules::MAX_REDIRECT_URIS),
            ));
        }
        for uri in &registration.redirect_uris {
            if let Some(why) = rules::refuse_redirect_uri(uri) {
                return Err(invalid(ErrorCode::InvalidRedirectUri, format!("{why}.")));
            }
        }
        // Most MCP clients leave the method out and expect a public client.
        let auth_method = registration.token_endpoint_auth_method.as_deref().unwrap_or("none");
        if !["none", "client_secret_post", "client_secret_basic"].contains(&auth_method) {
            return Err(metadata(format!(
                "token_endpoint_auth_method {auth_method} is not supported; use none (with PKCE), client_secret_post or client_secret_basic."
            )));
        }
        let grant_types = registration
            .grant_types
            .clone()
            .unwrap_or_else(|| vec!["authorization_code".into(), "refresh_token".into()]);
        if grant_types.is_empty()
            || grant_types.iter().any(|g| g != "authorization_code" && g != "refresh_token")
        {
            return Err(metadata(
                "grant_types may only be authorization_code and refresh_token.".into(),
            ));
        }
        let response_types =
            registration.response_types.clone().unwrap_or_else(|| vec!["code".into()]);
        if response_types.iter().any(|r| r != "code") {
            return Err(metadata("response_types may only be code.".into()));
        }
        if let Some(kind) = &registration.application_type
            && kind != "web"
            && kind != "native"
        {
            return Err(metadata("application_type is web or native.".into()));
        }
        let now = self.clock.now();
        if self
            .limited(move |db| REGISTRATIONS.admit(db, from, now))
            .await
            .map_err(server_error)?
            .is_err()
        {
            return Err(invalid(
                ErrorCode::SlowDown,
                "Too many registrations from this address; try again in an hour.",
            ));
        }
        let name =
            clean_client_name(registration.client_name.as_deref(), &registration.redirect_uris);
        // Generated ids never start with https://, which would name a metadata document.
        let client_id = new_secret(CLIENT_ID_PREFIX).map_err(server_error)?;
        let secret = match auth_method {
            "none" => None,
            _ => Some(new_secret("exhsecret").map_err(server_error)?),
        };
        let row = store::oauth::ClientRow {
            id: client_id.clone(),
            kind: "registered".into(),
            name: name.clone(),
            redirect_uris: json_list(&registration.redirect_uris),
            auth_method: auth_method.into(),
            secret_hash: secret.as_deref().map(hash_token),
            grant_types: json_list(&grant_types),
            application_type: registration.application_type.clone(),
            registered_from: from.map(|ip| ip.to_string()),
            created_at: timestamp_text(now),
        };
        let store = self.store.clone();
        let unused_before = timestamp_text(now - UNUSED_CLIENT_LIFETIME);
        let recent = timestamp_text(now - NEW_CLIENT_GRACE);
        let full = transactions::blocking_write(store, move |db| {
            store::oauth::delete_unused_clients(db, &unused_before)
                .map_err(transactions::internal)?;
            if store::oauth::count_clients(db).map_err(transactions::internal)? >= MAX_CLIENTS {
                let unused = store::oauth::ungranted_clients(db).map_err(transactions::internal)?;
                let Some(displaced) = displaced_client(&unused, &recent) else {
                    return Ok(true);
                };
                store::oauth::delete_ungranted_client(db, &displaced)
                    .map_err(transactions::internal)?;
            }
            store::oauth::insert_client(db, &row).map_err(transactions::internal)?;
            Ok(false)
        })
        .await
        .map_err(server_error)?;
        if full {
            return Err(invalid(
                ErrorCode::InvalidClientMetadata,
                "Exhale has as many registered clients as it keeps, and every one is in use; an owner can revoke connected apps that are no longer used.",
            ));
        }
        Ok(RegisteredClient {
            client_id,
            client_secret: secret,
            client_id_issued_at: now.as_second(),
            client_name: name,
            redirect_uris: registration.redirect_uris,
            token_endpoint_auth_method: auth_method.into(),
            grant_types,
            response_types,
            application_type: registration.application_type,
        })
    }

    async fn client(&self, id: &str) -> Result<Option<store::oauth::ClientRow>, OpError> {
        let store = self.store.clone();
        let id = id.to_owned();
        transactions::blocking(move || {
            transactions::read(&store, |db| {
                store::oauth::get_client(db, &id).map_err(transactions::internal)
            })
        })
        .await
    }

    async fn oauth_authorize(
        &self,
        person: &Caller,
        request: AuthorizationRequest,
    ) -> Result<ConsentRequest, AuthorizeRefusal> {
        let page = |text: &'static str| AuthorizeRefusal::Page(Text::new(text));
        let Some(origin) = self.public_origin() else {
            return Err(page(
                "Connecting apps is off: this Exhale has no public HTTPS address. An owner sets public_origin in the configuration.",
            ));
        };
        // Until the client and its redirect URI are known good, nothing redirects.
        let Some(client_id) = request.client_id.as_deref().filter(|id| !id.is_empty()) else {
            return Err(page("The app sent no client_id. Connect it again from the app."));
        };
        let described = client_id.starts_with("https://") && self.metadata_documents().is_some();
        let client = if described {
            self.described_client(client_id).await.map_err(AuthorizeRefusal::Page)?
        } else {
            self.client(client_id)
                .await
                .map_err(|_| page("Exhale could not look the app up; try again."))?
                .ok_or_else(|| {
                    page("This app is not registered with Exhale (or was removed). Connect it again from the app.")
                })?
        };
        let registered = parse_list(&client.redirect_uris);
        let redirect_uri = match request.redirect_uri.as_deref() {
            Some(uri) => registered
                .iter()
                .any(|r| rules::redirect_matches(r, uri))
                .then(|| uri.to_owned())
                .ok_or_else(|| {
                    page("The app asked to send you to an address it did not register, so Exhale stopped here.")
                })?,
            None => match registered.as_slice() {
                [only] => only.clone(),
                _ => return Err(page("The app did not say where to send you back (redirect_uri).")),
            },
        };
        let state = request.state.as_deref();
        let redirect_error = |code: ErrorCode, description: &str| {
            let mut params = vec![("error", code.as_str()), ("error_description", description)];
            if let Some(state) = state {
                params.push(("state", state));
            }
            AuthorizeRefusal::Redirect(self.iss_redirect(&redirect_uri, &params))
        };
        if request.response_type.as_deref() != Some("code") {
            return Err(redirect_error(
                ErrorCode::UnsupportedResponseType,
                "Exhale answers response_type=code only.",
            ));
        }
        let challenge = request.code_challenge.as_deref().unwrap_or_default();
        if request.code_challenge_method.as_deref() != Some("S256")
            || !rules::valid_challenge(challenge)
        {
            return Err(redirect_error(
                ErrorCode::InvalidRequest,
                "PKCE is required: send code_challenge (43 characters of base64url) with code_challenge_method=S256.",
            ));
        }
        let canonical = origin.resource();
        if let Some(resource) = request.resource.as_deref()
            && !rules::names_resource(resource, &canonical)
        {
            return Err(redirect_error(
                ErrorCode::InvalidTarget,
                &format!("Exhale grants access to {canonical} only."),
            ));
        }
        let requested = rules::requested_scope(request.scope.as_deref());
        let now = self.clock.now();
        let request_id =
            new_secret("exhreq").map_err(|_| page("Exhale could not continue; try again."))?;
        let row = store::oauth::RequestRow {
            id_hash: hash_token(&request_id),
            client_id: client.id.clone(),
            member_id: person.member_id,
            redirect_uri: redirect_uri.clone(),
            redirect_explicit: request.redirect_uri.is_some(),
            state: request.state.clone(),
            code_challenge: challenge.to_owned(),
            scope: requested.as_str().into(),
            resource: canonical,
            expires_at: timestamp_text(now + REQUEST_LIFETIME),
        };
        let store = self.store.clone();
        let now_text = timestamp_text(now);
        let household = person.household_id;
        let trusted_apps = transactions::blocking_write(store, move |db| {
            store::oauth::prune_requests(db, &now_text).map_err(transactions::internal)?;
            store::oauth::insert_request(db, &row).map_err(transactions::internal)?;
            store::oauth::keep_newest_requests(db, row.member_id, PENDING_REQUESTS)
                .map_err(transactions::internal)?;
            store::households::get_household(db, household)
                .map(|household| household.trusted_apps)
                .map_err(transactions::internal)
        })
        .await
        .map_err(|_| page("Exhale could not continue; try again."))?;
        Ok(ConsentRequest {
            request_id,
            client_name: client.name,
            described_at: described.then(|| rules::redirect_host(&client.id)),
            client_id: client.id,
            redirect_host: rules::redirect_host(&redirect_uri),
            redirect_source: rules::redirect_source(&redirect_uri),
            redirect_is_loopback: rules::is_loopback_redirect(&redirect_uri),
            redirect_uri,
            offered: ops::oauth::offered_scopes(requested, trusted_apps),
            requested,
        })
    }

    async fn oauth_decide(
        &self,
        person: &Caller,
        request_id: &str,
        decision: Decision,
    ) -> Result<String, Text> {
        let gone = || {
            Text::new(
                "This request has expired or was already answered. Start connecting again from the app.",
            )
        };
        let now = self.clock.now();
        let now_text = timestamp_text(now);
        let store = self.store.clone();
        let id_hash = hash_token(request_id);
        let member = person.member_id;
        let household = person.household_id;
        let code = new_secret("exhcode").map_err(|_| gone())?;
        let code_hash = hash_token(&code);
        let decided = transactions::blocking(move || {
            transactions::write(
                &store,
                |result| result.as_ref().is_ok_and(Option::is_some),
                |db| {
                    let Some(request) =
                        store::oauth::take_request(db, &id_hash).map_err(transactions::internal)?
                    else {
                        return Ok(None);
                    };
                    // Another person's request, or an old one: as if it did not exist.
                    if request.member_id != member || request.expires_at <= now_text {
                        return Ok(None);
                    }
                    let Decision::Approve(chosen) = decision else {
                        return Ok(Some((request, None)));
                    };
                    let requested = Scope::parse(&request.scope).unwrap_or(Scope::Read);
                    // Only what the page offers now can be chosen (it narrows the request, and
                    // widens it to `trusted` only where the owners allow it); anything else
                    // reads as the widest offered scope below it.
                    let trusted_apps = store::households::get_household(db, household)
                        .map_err(transactions::internal)?
                        .trusted_apps;
                    let scope = ops::oauth::offered_scopes(requested, trusted_apps)
                        .into_iter()
                        .filter(|offered| *offered <= chosen)
                        .max()
                        .unwrap_or(Scope::Read);
                    let client = store::oauth::get_client(db, &request.client_id)
                        .map_err(transactions::internal)?
                        .ok_or(OpError::Internal)?;
                    // Connecting again (for more scope, say) keeps the tools the person chose.
                    let tools = store::oauth::list_grants(db, household, member)
                        .map_err(transactions::internal)?
                        .into_iter()
                        .find(|grant| grant.client_id == client.id)
                        .map_or(ops::ToolSet::DEFAULT.as_str().to_owned(), |grant| grant.tools);
                    let grant = store::oauth::insert_grant(
                        db,
                        &store::oauth::NewGrant {
                            household_id: household,
                            member_id: member,
                            client_id: &client.id,
                            name: &client.name,
                            scope: scope.as_str(),
                            resource: &request.resource,
                            tools: &tools,
                        },
                        &now_text,
                    )
                    .map_err(transactions::internal)?;
                    store::oauth::insert_code(
                        db,
                        &store::oauth::CodeRow {
                            hash: code_hash.clone(),
                            grant_id: grant,
                            redirect_uri: request.redirect_uri.clone(),
                            redirect_explicit: request.redirect_explicit,
                            code_challenge: request.code_challenge.clone(),
                            expires_at: timestamp_text(now + CODE_LIFETIME),
                            consumed_at: None,
                        },
                    )
                    .map_err(transactions::internal)?;
                    Ok(Some((request, Some(scope))))
                },
            )
        })
        .await
        .map_err(|_| gone())?;
        let Some((request, granted)) = decided else { return Err(gone()) };
        let mut params = match granted {
            Some(_) => vec![("code", code.as_str())],
            None => vec![
                ("error", ErrorCode::AccessDenied.as_str()),
                ("error_description", "The person declined."),
            ],
        };
        if let Some(state) = request.state.as_deref() {
            params.push(("state", state));
        }
        Ok(self.iss_redirect(&request.redirect_uri, &params))
    }

    /// The client a `/token` or `/revoke` request comes from, its credentials checked.
    async fn authenticated_client(
        &self,
        credentials: &ClientCredentials,
    ) -> Result<store::oauth::ClientRow, OAuthError> {
        let refused = |why: &str| invalid(ErrorCode::InvalidClient, why);
        let Some(id) = credentials.client_id.as_deref().filter(|id| !id.is_empty()) else {
            return Err(refused("client_id is required."));
        };
        let client = self
            .client(id)
            .await
            .map_err(server_error)?
            .ok_or_else(|| refused("This client is not registered; register it again."))?;
        match (client.auth_method.as_str(), credentials.client_secret.as_deref()) {
            ("none", None) => Ok(client),
            ("none", Some(_)) => Err(refused("This client is public: send no client_secret.")),
            (method, Some(secret)) => {
                let basic_expected = method == "client_secret_basic";
                let stored = client.secret_hash.as_deref().unwrap_or_default();
                // Both sides are SHA-256 hex of random secrets: comparing hashes leaks nothing
                // about the secret.
                if basic_expected == credentials.basic && hash_token(secret) == stored {
                    Ok(client)
                } else {
                    Err(refused("The client's credentials are wrong."))
                }
            }
            (_, None) => Err(refused("This client must authenticate with its client_secret.")),
        }
    }

    /// The token endpoint, for an address within its limit of refused requests.
    async fn limited_token(&self, request: TokenRequest) -> Result<IssuedTokens, OAuthError> {
        let from = request.client.from;
        let now = self.clock.now();
        let wait = self.limited(move |db| TOKEN_FAILURES.wait(db, from, now)).await;
        if let Some(wait) = wait.map_err(server_error)? {
            return Err(slow_down(wait));
        }
        let answer = self.oauth_token(request).await;
        if answer.as_ref().is_err_and(|err| err.code != ErrorCode::ServerError) {
            let now = self.clock.now();
            self.limited(move |db| TOKEN_FAILURES.count(db, from, now))
                .await
                .map_err(server_error)?;
        }
        answer
    }

    async fn oauth_token(&self, request: TokenRequest) -> Result<IssuedTokens, OAuthError> {
        let client = self.authenticated_client(&request.client).await?;
        let origin = self.public_origin().ok_or_else(OAuthError::server_error)?;
        if let Some(resource) = request.resource.as_deref()
            && !rules::names_resource(resource, &origin.resource())
        {
            return Err(invalid(
                ErrorCode::InvalidTarget,
                format!("Exhale grants access to {} only.", origin.resource()),
            ));
        }
        let grant_types = parse_list(&client.grant_types);
        match request.grant_type.as_deref() {
            Some("authorization_code") => self.exchange_code(&client, request).await,
            Some("refresh_token") if grant_types.iter().any(|g| g == "refresh_token") => {
                self.refresh(&client, request).await
            }
            Some("refresh_token") => Err(invalid(
                ErrorCode::UnauthorizedClient,
                "This client did not register for refresh tokens.",
            )),
            Some(other) => Err(invalid(
                ErrorCode::UnsupportedGrantType,
                format!(
                    "grant_type {other} is not supported; use authorization_code or refresh_token."
                ),
            )),
            None => Err(invalid(ErrorCode::InvalidRequest, "grant_type is required.")),
        }
    }

    async fn exchange_code(
        &self,
        client: &store::oauth::ClientRow,
        request: TokenRequest,
    ) -> Result<IssuedTokens, OAuthError> {
        let bad_code = || {
            invalid(
                ErrorCode::InvalidGrant,
                "The code is not valid: it may be used, expired or for another client. Start the authorization again.",
            )
        };
        let code = request.code.as_deref().ok_or_else(bad_code)?;
        let now = self.clock.now();
        let now_text = timestamp_text(now);
        let store = self.store.clone();
        let code_hash = hash_token(code);
        let client_id = client.id.clone();
        let tokens = NewPair::generate().map_err(server_error)?;
        let issued = tokens.issued(Scope::Read);
        // The code is spent whatever happens next: a failed verifier cannot be retried.
        let result = transactions::blocking_write(store, move |db| {
            let Some(code) = store::oauth::consume_code(db, &code_hash, &now_text)
                .map_err(transactions::internal)?
            else {
                return Ok(Err("unknown"));
            };
            if code.consumed_at.is_some() {
                // A code used twice was stolen or replayed: what it gave is withdrawn.
                store::oauth::revoke_grant(db, code.grant_id, &now_text)
                    .map_err(transactions::internal)?;
                return Ok(Err("reused"));
            }
            let Some(grant) =
                store::oauth::get_grant(db, code.grant_id).map_err(transactions::internal)?
            else {
                return Ok(Err("unknown"));
            };
            let redirect_ok = match request.redirect_uri.as_deref() {
                Some(uri) => uri == code.redirect_uri,
                None => !code.redirect_explicit,
            };
            let verified = request
                .code_verifier
                .as_deref()
                .is_some_and(|v| rules::verifier_matches(v, &code.code_challenge));
            if code.expires_at <= now_text
                || grant.client_id != client_id
                || grant.revoked_at.is_some()
                || !redirect_ok
                || !verified
            {
                return Ok(Err("mismatch"));
            }
            let scope = Scope::parse(&grant.scope).ok_or(OpError::Internal)?;
            tokens.store(db, &grant, scope, &tokens.family, now)?;
            Ok(Ok(scope))
        })
        .await
        .map_err(server_error)?;
        match result {
            Ok(scope) => Ok(IssuedTokens { scope, ..issued }),
            Err(why) => {
                tracing::info!(why, "OAuth code refused");
                Err(bad_code())
            }
        }
    }

    async fn refresh(
        &self,
        client: &store::oauth::ClientRow,
        request: TokenRequest,
    ) -> Result<IssuedTokens, OAuthError> {
        let bad = || {
            invalid(
                ErrorCode::InvalidGrant,
                "The refresh token is not valid: it may be revoked, expired, used already or for another client. Authorize again.",
            )
        };
        let presented = request.refresh_token.clone().ok_or_else(bad)?;
        let hash = hash_token(&presented);
        let now = self.clock.now();
        let now_text = timestamp_text(now);
        let store = self.store.clone();
        let client_id = client.id.clone();
        let tokens = NewPair::generate().map_err(server_error)?;
        let scope_asked = request.scope.clone();
        let retry_window = timestamp_text(now - REFRESH_RETRY);
        // Two refreshes of one token at once, on any instances, take turns in the database:
        // the second finds the token rotated and gets the first one's pair.
        let outcome = transactions::blocking_write(store, move |db| {
            let Some((token, grant)) =
                store::oauth::find_token(db, &hash).map_err(transactions::internal)?
            else {
                return Ok(Refreshed::Refused("unknown"));
            };
            if token.kind != "refresh" || grant.client_id != client_id {
                return Ok(Refreshed::Refused("not this client's refresh token"));
            }
            if let Some(rotated) = &token.rotated_at {
                if *rotated > retry_window {
                    let sealed =
                        store::oauth::retry_pair(db, &hash).map_err(transactions::internal)?;
                    return Ok(Refreshed::Retry(sealed));
                }
                // Used again after the retry window: it leaked; the line of tokens ends.
                store::oauth::revoke_family(db, &token.family, &now_text)
                    .map_err(transactions::internal)?;
                return Ok(Refreshed::Refused("replayed"));
            }
            if token.revoked_at.is_some()
                || grant.revoked_at.is_some()
                || token.expires_at <= now_text
            {
                return Ok(Refreshed::Refused("revoked or expired"));
            }
            let held = Scope::parse(&token.scope).ok_or(OpError::Internal)?;
            let scope = match scope_asked.as_deref() {
                None | Some("") => held,
                Some(asked) => match rules::narrowed_scope(asked, held) {
                    Some(scope) => scope,
                    None => return Ok(Refreshed::Wider),
                },
            };
            let successor = hash_token(&tokens.refresh);
            if !store::oauth::rotate_refresh_token(db, &hash, &successor, &now_text)
                .map_err(transactions::internal)?
            {
                return Ok(Refreshed::Refused("rotated or revoked meanwhile"));
            }
            tokens.store(db, &grant, scope, &token.family, now)?;
            let issued = tokens.issued(scope);
            let sealed = retry::seal(&presented, &issued)?;
            store::oauth::set_retry_pair(db, &hash, &sealed).map_err(transactions::internal)?;
            Ok(Refreshed::Issued(issued))
        })
        .await
        .map_err(server_error)?;
        let presented = request.refresh_token.as_deref().unwrap_or_default();
        match outcome {
            Refreshed::Issued(issued) => Ok(issued),
            // Rotated within the window: the pair it was exchanged for, opened with the token.
            Refreshed::Retry(sealed) => {
                sealed.and_then(|sealed| retry::open(presented, &sealed)).ok_or_else(bad)
            }
            Refreshed::Wider => Err(invalid(
                ErrorCode::InvalidScope,
                "A refresh can keep or narrow the granted scope, never widen it; authorize again for more.",
            )),
            Refreshed::Refused(why) => {
                tracing::info!(why, "OAuth refresh token refused");
                Err(bad())
            }
        }
    }

    async fn oauth_revoke(
        &self,
        token: String,
        client: ClientCredentials,
    ) -> Result<(), OAuthError> {
        let (from, now) = (client.from, self.clock.now());
        if let Err(wait) =
            self.limited(move |db| REVOCATIONS.admit(db, from, now)).await.map_err(server_error)?
        {
            return Err(slow_down(wait));
        }
        let client = self.authenticated_client(&client).await?;
        let store = self.store.clone();
        let hash = hash_token(&token);
        let now_text = timestamp_text(self.clock.now());
        transactions::blocking_write(store, move |db| {
            // Only the client's own tokens; others are ignored, as unknown ones are.
            if let Some((_, grant)) =
                store::oauth::find_token(db, &hash).map_err(transactions::internal)?
                && grant.client_id == client.id
            {
                store::oauth::revoke_token(db, &hash, &now_text).map_err(transactions::internal)?;
            }
            Ok(())
        })
        .await
        .map_err(server_error)?;
        Ok(())
    }

    /// Whether a bearer is an OAuth access token rather than an API token.
    pub(crate) fn is_access_token(token: &str) -> bool {
        token.strip_prefix(ACCESS_TOKEN_PREFIX).is_some_and(|rest| rest.starts_with('_'))
    }

    /// The caller behind an OAuth access token, when it is live and for this resource. Access
    /// tokens are not cached: each is checked against its grant, which a person may revoke at
    /// any moment.
    pub(crate) async fn authenticate_access_token(
        &self,
        token: &str,
        via: Via,
    ) -> Result<Caller, OpError> {
        let origin = self.public_origin().ok_or_else(crate::credentials::refused)?;
        let store = self.store.clone();
        let hash = hash_token(token.trim());
        let found = transactions::blocking(move || {
            transactions::read(&store, |db| {
                let Some((token, grant)) =
                    store::oauth::find_token(db, &hash).map_err(transactions::internal)?
                else {
                    return Ok(None);
                };
                let member = store::households::get_member(db, grant.household_id, grant.member_id)
                    .map_err(transactions::internal)?;
                let household = store::households::get_household(db, grant.household_id)
                    .map_err(transactions::internal)?;
                Ok(Some((token, grant, member, household.trusted_apps)))
            })
        })
        .await?;
        let (token, grant, member, trusted_apps) = found.ok_or_else(crate::credentials::refused)?;
        let now = self.clock.now();
        let now_text = timestamp_text(now);
        let live = token.kind == "access"
            && token.revoked_at.is_none()
            && grant.revoked_at.is_none()
            && token.expires_at > now_text
            // The audience: a token issued under another public origin is not for this server.
            && grant.resource == origin.resource();
        if !live {
            return Err(crate::credentials::refused());
        }
        self.record_use(grant.id, grant.last_used_at.as_deref(), now).await?;
        Ok(Caller {
            household_id: grant.household_id,
            member_id: grant.member_id,
            role: member.role,
            scope: ops::oauth::app_scope(
                Scope::parse(&token.scope).ok_or(OpError::Internal)?,
                trusted_apps,
            ),
            actor: Actor::Token {
                token_id: grant.id,
                client_name: Some(grant.name.clone()),
                token_name: grant.name,
                tools: ops::ToolSet::parse(&grant.tools).ok_or(OpError::Internal)?,
                credential: ops::Credential::ConnectedApp,
            },
            via,
            language: domain::Language::English,
        })
    }
}

/// What one refresh came to.
enum Refreshed {
    Issued(IssuedTokens),
    /// The token was just exchanged: the answer is the pair it was exchanged for, sealed.
    Retry(Option<String>),
    Wider,
    Refused(&'static str),
}

/// The pair a refresh issued, sealed for the database with a key only the refresh token it
/// replaced gives: a retry of that refresh within the window, on any instance, presents the
/// token and gets the same pair, while the database alone cannot open it.
mod retry {
    use base64::Engine as _;
    use ops::{OpError, oauth::IssuedTokens};
    use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, Nonce, UnboundKey};
    use serde::{Deserialize, Serialize};
    use sha2::{Digest, Sha256};

    #[derive(Serialize, Deserialize)]
    struct Pair {
        access_token: String,
        refresh_token: String,
        expires_in: i64,
        scope: String,
    }

    /// The key for the pair that replaced `presented`. Each refresh token is exchanged once,
    /// so each key seals one message, and its nonce can be fixed.
    fn key(presented: &str) -> Option<LessSafeKey> {
        let digest = Sha256::new().chain_update(b"exhale refresh retry\0").chain_update(presented);
        Some(LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, &digest.finalize()).ok()?))
    }

    pub(super) fn seal(presented: &str, issued: &IssuedTokens) -> Result<String, OpError> {
        let pair = Pair {
            access_token: issued.access_token.clone(),
            refresh_token: issued.refresh_token.clone(),
            expires_in: issued.expires_in,
            scope: issued.scope.as_str().to_owned(),
        };
        let mut bytes = serde_json::to_vec(&pair).map_err(|_| OpError::Internal)?;
        key(presented)
            .ok_or(OpError::Internal)?
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key([0; 12]),
                Aad::empty(),
                &mut bytes,
            )
            .map_err(|_| OpError::Internal)?;
        Ok(base64::engine::general_purpose::STANDARD_NO_PAD.encode(bytes))
    }

    /// The pair, when `sealed` was sealed for `presented` and is intact.
    pub(super) fn open(presented: &str, sealed: &str) -> Option<IssuedTokens> {
        let mut bytes = base64::engine::general_purpose::STANDARD_NO_PAD.decode(sealed).ok()?;
        let plain = key(presented)?
            .open_in_place(Nonce::assume_unique_for_key([0; 12]), Aad::empty(), &mut bytes)
            .ok()?;
        let pair: Pair = serde_json::from_slice(plain).ok()?;
        Some(IssuedTokens {
            access_token: pair.access_token,
            expires_in: pair.expires_in,
            refresh_token: pair.refresh_token,
            scope: ops::Scope::parse(&pair.scope)?,
        })
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn only_the_replaced_token_opens_its_pair() {
            let issued = ops::oauth::IssuedTokens {
                access_token: "exha_new".into(),
                expires_in: 3600,
                refresh_token: "exhrefresh_new".into(),
                scope: ops::Scope::Write,
            };
            let sealed = super::seal("exhrefresh_old", &issued).unwrap();
            assert!(!sealed.contains("exha_new") && !sealed.contains("exhrefresh_new"));
            let opened = super::open("exhrefresh_old", &sealed).unwrap();
            assert_eq!(opened.refresh_token, "exhrefresh_new");
            assert_eq!(opened.access_token, "exha_new");
            assert!(super::open("exhrefresh_other", &sealed).is_none());
            let mut tampered = sealed.clone();
            tampered.replace_range(0..1, if sealed.starts_with('A') { "B" } else { "A" });
            assert!(super::open("exhrefresh_old", &tampered).is_none());
        }
    }
}

/// A new access and refresh token, before they are stored.
struct NewPair {
    access: String,
    refresh: String,
    /// The family of a new line of refreshes; a refresh keeps its token's family.
    family: String,
}

impl NewPair {
    fn generate() -> Result<Self, OpError> {
        Ok(Self {
            access: new_secret(ACCESS_TOKEN_PREFIX)?,
            refresh: new_secret("exhrefresh")?,
            family: crate::random::random_hex(16)?,
        })
    }

    fn issued(&self, scope: Scope) -> IssuedTokens {
        IssuedTokens {
            access_token: self.access.clone(),
            expires_in: ops::oauth::ACCESS_TOKEN_SECONDS,
            refresh_token: self.refresh.clone(),
            scope,
        }
    }

    fn store(
        &self,
        db: &store::Db<'_>,
        grant: &store::oauth::GrantRow,
        scope: Scope,
        family: &str,
        now: Timestamp,
    ) -> Result<(), OpError> {
        // Tokens and codes long expired go as new ones come: a replayed one is refused as
        // unknown rather than as expired, and the table holds live tokens and a day of history.
        store::oauth::prune_tokens(db, &timestamp_text(now - PRUNE_AFTER))
            .map_err(transactions::internal)?;
        let granted_at: Timestamp = grant.created_at.parse().map_err(|_| OpError::Internal)?;
        let refresh_expires = (now + REFRESH_IDLE).min(granted_at + REFRESH_ABSOLUTE);
        for (secret, kind, expires) in [
            (
                &self.access,
                "access",
                now + SignedDuration::from_secs(ops::oauth::ACCESS_TOKEN_SECONDS),
            ),
            (&self.refresh, "refresh", refresh_expires),
        ] {
            store::oauth::insert_token(
                db,
                &store::oauth::TokenRow {
                    hash: hash_token(secret),
                    kind: kind.into(),
                    grant_id: grant.id,
                    family: family.into(),
                    scope: scope.as_str().into(),
                    created_at: timestamp_text(now),
                    expires_at: timestamp_text(expires),
                    rotated_at: None,
                    successor: None,
                    revoked_at: None,
                },
            )
            .map_err(transactions::internal)?;
        }
        Ok(())
    }
}

impl ops::oauth::OAuthServer for App {
    fn origin(&self) -> Option<PublicOrigin> {
        self.public_origin()
    }

    fn metadata_documents_supported(&self) -> bool {
        self.metadata_documents().is_some()
    }

    fn register(
        &self,
        registration: Registration,
        from: Option<IpAddr>,
    ) -> ops::BoxFuture<'_, Result<RegisteredClient, OAuthError>> {
        Box::pin(self.oauth_register(registration, from))
    }

    fn authorize<'a>(
        &'a self,
        person: &'a Caller,
        request: AuthorizationRequest,
    ) -> ops::BoxFuture<'a, Result<ConsentRequest, AuthorizeRefusal>> {
        Box::pin(self.oauth_authorize(person, request))
    }

    fn decide<'a>(
        &'a self,
        person: &'a Caller,
        request_id: &'a str,
        decision: Decision,
    ) -> ops::BoxFuture<'a, Result<String, Text>> {
        Box::pin(self.oauth_decide(person, request_id, decision))
    }

    fn token(&self, request: TokenRequest) -> ops::BoxFuture<'_, Result<IssuedTokens, OAuthError>> {
        Box::pin(self.limited_token(request))
    }

    fn revoke(
        &self,
        token: String,
        client: ClientCredentials,
    ) -> ops::BoxFuture<'_, Result<(), OAuthError>> {
        Box::pin(self.oauth_revoke(token, client))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(
        id: &str,
        from: &str,
        created_at: &str,
        asked: bool,
    ) -> store::oauth::UngrantedClient {
        store::oauth::UngrantedClient {
            id: id.into(),
            registered_from: Some(from.into()),
            created_at: created_at.into(),
            asked,
        }
    }

    #[test]
    fn a_flood_displaces_itself_and_never_a_client_being_connected() {
        let old = "2026-12-01T00:00:00Z";
        let new = "2026-12-04T10:00:00Z";
        let recent = "2026-12-04T09:50:00Z";
        // One flood from many /64s of one /48, a household's app, one a person is deciding on.
        let mut unused = vec![
            client("household", "203.0.113.9", old, false),
            client("deciding", "198.51.100.1", old, true),
        ];
        unused.extend(
            (0..5).map(|n| client(&format!("flood{n}"), &format!("2001:db8:2:{n}::1"), new, false)),
        );
        assert_eq!(displaced_client(&unused, recent).as_deref(), Some("flood0"));
        // With no flood, the oldest goes, unless it is being decided on; a new one goes last.
        let quiet = vec![
            client("deciding", "198.51.100.1", old, true),
            client("older", "203.0.113.9", old, false),
            client("newer", "192.0.2.1", new, false),
        ];
        assert_eq!(displaced_client(&quiet, recent).as_deref(), Some("older"));
        let fresh = vec![
            client("deciding", "198.51.100.1", old, true),
            client("newer", "192.0.2.1", new, false),
        ];
        assert_eq!(displaced_client(&fresh, recent).as_deref(), Some("newer"));
        assert_eq!(displaced_client(&fresh[..1], recent), None, "only clients in use: full");
    }
}
