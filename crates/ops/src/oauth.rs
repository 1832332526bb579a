//! The OAuth 2.1 authorization server as its adapters see it: client registration (RFC 7591),
//! authorization requests and the person's decision, the token endpoint (codes with PKCE,
//! rotating refresh tokens) and revocation (RFC 7009). The `oauth` crate speaks the protocol's
//! wire format and the `web` crate shows the consent page; `app` implements [`OAuthServer`]
//! and decides everything (which redirect URIs, scopes and resources are acceptable, what a
//! token is worth). Connected apps, as a person manages them, are ordinary ops
//! (`list_connected_apps`, `revoke_connected_app`).

use crate::{BoxFuture, Caller, Scope, Text};

/// Where Exhale is reached from outside; OAuth needs it because every URL in its metadata and
/// every token's audience is absolute.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicOrigin {
    /// The issuer: scheme, host and port, no path and no trailing slash, e.g.
    /// `https://exhale.example.net`.
    pub origin: String,
}

impl PublicOrigin {
    /// The one protected resource: the MCP endpoint.
    pub fn resource(&self) -> String {
        format!("{}/mcp", self.origin)
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.origin)
    }

    /// Whether the origin is this computer's own: only programs on it can reach it.
    pub fn is_loopback(&self) -> bool {
        let host = self.origin.split_once("://").map_or("", |(_, host)| host);
        ["127.0.0.1", "localhost", "[::1]"]
            .iter()
            .any(|h| host == *h || host.strip_prefix(h).is_some_and(|rest| rest.starts_with(':')))
    }
}

/// Scopes a client may ask for, in the order clients request them.
pub const SCOPES_SUPPORTED: &[Scope] = &[Scope::Read, Scope::Write];

/// The scopes the consent page offers for a request of `requested`: up to what the client
/// asked for, and `trusted` too when the household's owners allow trusted apps and the client
/// asked to make changes. That is the one widening: clients ask for what the `/mcp` challenge
/// names (`read write`), and `trusted` is the person's own choice, never preselected.
pub fn offered_scopes(requested: Scope, trusted_apps: bool) -> Vec<Scope> {
    let mut offered: Vec<Scope> = SCOPES_SUPPORTED
        .iter()
        .copied()
        .filter(|s| requested.min(Scope::Write).allows(*s))
        .collect();
    if trusted_apps && requested >= Scope::Write {
        offered.push(Scope::Trusted);
    }
    offered
}

/// The scope a connected app acts with: its grant's, but never more than `write` while the
/// household's owners do not allow trusted apps (turning the setting off takes `trusted` from
/// every app at once; turning it back on, or undoing, gives it back).
pub fn app_scope(granted: Scope, trusted_apps: bool) -> Scope {
    if trusted_apps { granted } else { granted.min(Scope::Write) }
}

/// A scope as OAuth writes it: every scope it includes, e.g. `read write`.
pub fn scope_words(scope: Scope) -> String {
    Scope::ALL
        .iter()
        .filter(|s| scope.allows(**s))
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The scope every token carries unless the client asks for less: what the 401 challenge names.
pub const DEFAULT_SCOPE: &str = "read write";

/// Seconds an access token lives.
pub const ACCESS_TOKEN_SECONDS: i64 = 3600;

domain::named_enum! {
    /// The error codes of RFC 6749, 7591 and 8707 that Exhale answers with.
    pub enum ErrorCode("OAuth error") {
        InvalidRequest => "invalid_request",
        InvalidClient => "invalid_client",
        InvalidGrant => "invalid_grant",
        UnauthorizedClient => "unauthorized_client",
        UnsupportedGrantType => "unsupported_grant_type",
        UnsupportedResponseType => "unsupported_response_type",
        InvalidScope => "invalid_scope",
        InvalidTarget => "invalid_target",
        AccessDenied => "access_denied",
        InvalidRedirectUri => "invalid_redirect_uri",
        InvalidClientMetadata => "invalid_client_metadata",
        SlowDown => "slow_down",
        ServerError => "server_error",
    }
}

/// A refusal in the protocol's terms: the code and a sentence saying what to do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {description}")]
pub struct OAuthError {
    pub code: ErrorCode,
    pub description: String,
}

impl OAuthError {
    pub fn new(code: ErrorCode, description: impl Into<String>) -> Self {
        Self { code, description: description.into() }
    }

    pub fn server_error() -> Self {
        Self::new(ErrorCode::ServerError, "Exhale could not answer; try again later.")
    }
}

/// A registration request (RFC 7591 section 2), as sent; unknown fields are ignored.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Registration {
    pub redirect_uris: Vec<String>,
    pub client_name: Option<String>,
    pub token_endpoint_auth_method: Option<String>,
    pub grant_types: Option<Vec<String>>,
    pub response_types: Option<Vec<String>>,
    pub application_type: Option<String>,
}

/// A registered client, as the registration response describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisteredClient {
    pub client_id: String,
    /// Only when the client asked for a secret method; shown once.
    pub client_secret: Option<String>,
    pub client_id_issued_at: i64,
    pub client_name: String,
    pub redirect_uris: Vec<String>,
    pub token_endpoint_auth_method: String,
    pub grant_types: Vec<String>,
    pub response_types: Vec<String>,
    pub application_type: Option<String>,
}

/// The parameters of `/authorize`, as sent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuthorizationRequest {
    pub client_id: Option<String>,
    pub redirect_uri: Option<String>,
    pub response_type: Option<String>,
    pub code_challenge: Option<String>,
    pub code_challenge_method: Option<String>,
    pub state: Option<String>,
    pub scope: Option<String>,
    pub resource: Option<String>,
}

/// Why an authorization request goes no further.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthorizeRefusal {
    /// The client or its redirect URI cannot be trusted with a redirect: shown as a page.
    Page(Text),
    /// The client is known and the redirect URI registered: the error goes back to it
    /// (`error`, `state` and `iss` in the query).
    Redirect(String),
}

/// What the consent page shows and posts back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsentRequest {
    /// Posted back with the decision; the only handle on the checked request.
    pub request_id: String,
    /// As the client calls itself; not verified.
    pub client_name: String,
    pub client_id: String,
    /// The host of the client's metadata document, for a client named by one: who vouches for
    /// its name and redirect URIs.
    pub described_at: Option<String>,
    /// Where the browser goes afterwards, and its host, which the page shows.
    pub redirect_uri: String,
    pub redirect_host: String,
    /// Where the page's form may send the browser (a CSP `form-action` source): the redirect
    /// URI's origin, or its scheme for an app's own.
    pub redirect_source: String,
    /// The redirect goes to a program on the person's own computer.
    pub redirect_is_loopback: bool,
    /// The scopes the page offers, with those the client asked for checked.
    pub offered: Vec<Scope>,
    pub requested: Scope,
}

/// The person's answer on the consent page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Approve(Scope),
    Deny,
}

/// A `/token` request: the form's fields and the client's credentials, wherever they came
/// from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TokenRequest {
    pub grant_type: Option<String>,
    pub code: Option<String>,
    pub redirect_uri: Option<String>,
    pub code_verifier: Option<String>,
    pub refresh_token: Option<String>,
    pub scope: Option<String>,
    pub resource: Option<String>,
    pub client: ClientCredentials,
}

/// How a client identified itself at `/token` or `/revoke`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientCredentials {
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    /// The credentials came in an `Authorization: Basic` header.
    pub basic: bool,
    /// The address the request came from, for the endpoints' limits.
    pub from: Option<std::net::IpAddr>,
}

/// A successful token response (RFC 6749 section 5.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IssuedTokens {
    pub access_token: String,
    pub expires_in: i64,
    pub refresh_token: String,
    pub scope: Scope,
}

/// A client metadata document as fetched: its bytes and how long it may be kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchedDocument {
    pub body: Vec<u8>,
    /// `Cache-Control: max-age`, when the server sent one.
    pub max_age_secs: Option<u64>,
}

/// Fetches the document at a client id that is an HTTPS URL (a Client ID Metadata
/// Document), for the authorization server, which decides what it must say. The `oauth` crate
/// implements it: it is the one outbound call, guarded against reaching private addresses.
pub trait MetadataDocuments: Send + Sync {
    /// The document's bytes, or why it cannot be had, in words that follow "because".
    fn fetch<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<FetchedDocument, String>>;
}

/// The authorization server, implemented by `app`.
pub trait OAuthServer: Send + Sync {
    /// Where Exhale is reached from outside; `None` when OAuth is off (no public origin, and
    /// not on loopback).
    fn origin(&self) -> Option<PublicOrigin>;

    /// Whether a client may be named by the URL of its metadata document.
    fn metadata_documents_supported(&self) -> bool;

    /// Registers a client (RFC 7591); `from` is the address the request came from, for the
    /// registration limit.
    fn register(
        &self,
        registration: Registration,
        from: Option<std::net::IpAddr>,
    ) -> BoxFuture<'_, Result<RegisteredClient, OAuthError>>;

    /// Checks an authorization request for the signed-in `person` and keeps it for their
    /// decision.
    fn authorize<'a>(
        &'a self,
        person: &'a Caller,
        request: AuthorizationRequest,
    ) -> BoxFuture<'a, Result<ConsentRequest, AuthorizeRefusal>>;

    /// Takes the person's decision on a request they were shown, once; the answer is the URL
    /// the browser goes to (the client's redirect URI with a code, or with `access_denied`).
    fn decide<'a>(
        &'a self,
        person: &'a Caller,
        request_id: &'a str,
        decision: Decision,
    ) -> BoxFuture<'a, Result<String, Text>>;

    /// The token endpoint: `authorization_code` and `refresh_token` grants.
    fn token(&self, request: TokenRequest) -> BoxFuture<'_, Result<IssuedTokens, OAuthError>>;

    /// Revokes an access or refresh token of the client (RFC 7009); unknown tokens are not
    /// an error.
    fn revoke(
        &self,
        token: String,
        client: ClientCredentials,
    ) -> BoxFuture<'_, Result<(), OAuthError>>;
}
