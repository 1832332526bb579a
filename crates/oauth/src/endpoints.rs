//! The handlers: metadata documents, registration, token and revocation, and the headers
//! every OAuth answer carries (CORS for browser-based clients, `no-store`).

use std::sync::Arc;

use axum::{
    Json,
    body::Bytes,
    extract::{FromRequest, Request, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use base64::Engine as _;
use ops::oauth::{
    ClientCredentials, ErrorCode, OAuthError, OAuthServer, PublicOrigin, Registration, TokenRequest,
};
use serde::Deserialize;
use serde_json::{Value, json};

type Server = State<Arc<dyn OAuthServer>>;

/// An OAuth error as JSON (RFC 6749 section 5.2), with the status its code calls for.
fn error_response(err: &OAuthError) -> Response {
    let status = match err.code {
        ErrorCode::InvalidClient => StatusCode::UNAUTHORIZED,
        ErrorCode::SlowDown => StatusCode::TOO_MANY_REQUESTS,
        ErrorCode::ServerError => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::BAD_REQUEST,
    };
    (status, Json(json!({"error": err.code.as_str(), "error_description": err.description})))
        .into_response()
}

fn refusal(code: ErrorCode, description: &str) -> Response {
    error_response(&OAuthError::new(code, description))
}

/// OAuth is off while Exhale has no public origin: nothing to describe.
fn off() -> Response {
    let mut response = refusal(
        ErrorCode::InvalidRequest,
        "OAuth is off: this Exhale has no public origin. An owner sets public_origin in the configuration.",
    );
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

pub(crate) async fn resource_metadata(State(server): Server) -> Response {
    let Some(origin) = server.origin() else { return off() };
    Json(resource_document(&origin)).into_response()
}

fn resource_document(origin: &PublicOrigin) -> Value {
    json!({
        "resource": origin.resource(),
        "authorization_servers": [origin.origin],
        "scopes_supported": ops::oauth::SCOPES_SUPPORTED.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        "bearer_methods_supported": ["header"],
        "resource_name": "Exhale",
    })
}

pub(crate) async fn server_metadata(State(server): Server) -> Response {
    let Some(origin) = server.origin() else { return off() };
    let mut scopes: Vec<&str> = ops::oauth::SCOPES_SUPPORTED.iter().map(|s| s.as_str()).collect();
    // Advertised so clients that gate refresh on it use refresh tokens; refresh tokens come
    // with every grant whether it is asked for or not.
    scopes.push("offline_access");
    let methods = ["none", "client_secret_post", "client_secret_basic"];
    Json(json!({
        "issuer": origin.origin,
        "authorization_endpoint": origin.url("/authorize"),
        "token_endpoint": origin.url("/token"),
        "registration_endpoint": origin.url("/register"),
        "revocation_endpoint": origin.url("/revoke"),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": methods,
        "revocation_endpoint_auth_methods_supported": methods,
        "scopes_supported": scopes,
        "authorization_response_iss_parameter_supported": true,
        "client_id_metadata_document_supported": server.metadata_documents_supported(),
    }))
    .into_response()
}

/// The fields of a registration Exhale reads; the rest are ignored (RFC 7591 section 2).
#[derive(Deserialize)]
struct RegistrationBody {
    #[serde(default)]
    redirect_uris: Option<Vec<String>>,
    #[serde(default)]
    client_name: Option<String>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
    #[serde(default)]
    grant_types: Option<Vec<String>>,
    #[serde(default)]
    response_types: Option<Vec<String>>,
    #[serde(default)]
    application_type: Option<String>,
}

pub(crate) async fn register(
    State(server): Server,
    client: Option<axum::Extension<http::ClientAddress>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if server.origin().is_none() {
        return off();
    }
    if !is_content_type(&headers, "application/json") {
        return refusal(
            ErrorCode::InvalidClientMetadata,
            "Send the registration as JSON (Content-Type: application/json).",
        );
    }
    let body: RegistrationBody = match serde_json::from_slice(&body) {
        Ok(body) => body,
        Err(err) => {
            return refusal(
                ErrorCode::InvalidClientMetadata,
                &format!("The registration is not a JSON object of client metadata: {err}."),
            );
        }
    };
    let registration = Registration {
        redirect_uris: body.redirect_uris.unwrap_or_default(),
        client_name: body.client_name,
        token_endpoint_auth_method: body.token_endpoint_auth_method,
        grant_types: body.grant_types,
        response_types: body.response_types,
        application_type: body.application_type,
    };
    match server.register(registration, client.map(|c| c.0.0)).await {
        Ok(client) => {
            let mut document = json!({
                "client_id": client.client_id,
                "client_id_issued_at": client.client_id_issued_at,
                "client_name": client.client_name,
                "redirect_uris": client.redirect_uris,
                "token_endpoint_auth_method": client.token_endpoint_auth_method,
                "grant_types": client.grant_types,
                "response_types": client.response_types,
            });
            if let Some(kind) = client.application_type {
                document["application_type"] = kind.into();
            }
            if let Some(secret) = client.client_secret {
                document["client_secret"] = secret.into();
                document["client_secret_expires_at"] = 0.into();
            }
            (StatusCode::CREATED, Json(document)).into_response()
        }
        Err(err) => error_response(&err),
    }
}

fn is_content_type(headers: &HeaderMap, expected: &str) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case(expected))
}

/// A form body's fields; `Err` names a field sent twice (RFC 6749 section 3.2).
fn form_fields(
    headers: &HeaderMap,
    body: &[u8],
) -> Result<std::collections::HashMap<String, String>, OAuthError> {
    if !is_content_type(headers, "application/x-www-form-urlencoded") {
        return Err(OAuthError::new(
            ErrorCode::InvalidRequest,
            "Send the request as a form (Content-Type: application/x-www-form-urlencoded).",
        ));
    }
    let pairs: Vec<(String, String)> = serde_urlencoded::from_bytes(body)
        .map_err(|_| OAuthError::new(ErrorCode::InvalidRequest, "The form cannot be read."))?;
    let mut fields = std::collections::HashMap::new();
    for (key, value) in pairs {
        if fields.insert(key.clone(), value).is_some() {
            return Err(OAuthError::new(
                ErrorCode::InvalidRequest,
                format!("{key} is sent more than once."),
            ));
        }
    }
    Ok(fields)
}

/// The client's credentials, from `Authorization: Basic` or the form, never both.
fn client_credentials(
    headers: &HeaderMap,
    fields: &mut std::collections::HashMap<String, String>,
) -> Result<ClientCredentials, OAuthError> {
    let form_id = fields.remove("client_id").filter(|id| !id.is_empty());
    let form_secret = fields.remove("client_secret");
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Ok(ClientCredentials {
            client_id: form_id,
            client_secret: form_secret,
            basic: false,
            from: None,
        });
    };
    let unreadable =
        || OAuthError::new(ErrorCode::InvalidClient, "The Basic credentials cannot be read.");
    let encoded = value
        .to_str()
        .ok()
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("basic"))
        .map(|(_, rest)| rest.trim())
        .ok_or_else(unreadable)?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or_else(unreadable)?;
    let (id, secret) = decoded.split_once(':').ok_or_else(unreadable)?;
    // Both halves are form-encoded before base64 (RFC 6749 section 2.3.1).
    let unescape = |text: &str| -> Option<String> {
        let pairs: Vec<(String, String)> = serde_urlencoded::from_str(&format!("v={text}")).ok()?;
        pairs.into_iter().next().map(|(_, v)| v)
    };
    let id = unescape(id).ok_or_else(unreadable)?;
    let secret = unescape(secret).ok_or_else(unreadable)?;
    if form_secret.is_some() || form_id.as_ref().is_some_and(|form| *form != id) {
        return Err(OAuthError::new(
            ErrorCode::InvalidRequest,
            "Send the client's credentials one way: the Authorization header or the form.",
        ));
    }
    Ok(ClientCredentials {
        client_id: Some(id),
        client_secret: Some(secret),
        basic: true,
        from: None,
    })
}

/// The fields of a token or revocation request and the client's credentials, with the
/// address the request came from.
fn read_form(
    headers: &HeaderMap,
    body: &[u8],
    from: Option<http::ClientAddress>,
) -> Result<(std::collections::HashMap<String, String>, ClientCredentials), OAuthError> {
    let mut fields = form_fields(headers, body)?;
    let client = client_credentials(headers, &mut fields)?;
    let from = from.map(|http::ClientAddress(ip)| ip);
    Ok((fields, ClientCredentials { from, ..client }))
}

/// An error of the token or revocation endpoint: `invalid_client` after Basic credentials
/// asks for them again (RFC 6749 section 5.2).
fn endpoint_error(err: &OAuthError, basic: bool) -> Response {
    let mut response = error_response(err);
    if basic && err.code == ErrorCode::InvalidClient {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Basic realm=\"exhale\""));
    }
    response
}

/// The start of `/token` and `/revoke`: OAuth is on, and the form and the client's credentials
/// (with the address the request came from) are readable; otherwise the answer to send.
pub(crate) struct ClientForm {
    fields: std::collections::HashMap<String, String>,
    client: ClientCredentials,
}

impl FromRequest<Arc<dyn OAuthServer>> for ClientForm {
    type Rejection = Response;

    async fn from_request(
        request: Request,
        server: &Arc<dyn OAuthServer>,
    ) -> Result<Self, Response> {
        let headers = request.headers().clone();
        let from = request.extensions().get::<http::ClientAddress>().copied();
        let body =
            Bytes::from_request(request, server).await.map_err(IntoResponse::into_response)?;
        if server.origin().is_none() {
            return Err(off());
        }
        let (fields, client) = read_form(&headers, &body, from)
            .map_err(|err| endpoint_error(&err, headers.contains_key(header::AUTHORIZATION)))?;
        Ok(Self { fields, client })
    }
}

pub(crate) async fn token(
    State(server): Server,
    ClientForm { mut fields, client }: ClientForm,
) -> Response {
    let basic = client.basic;
    let request = TokenRequest {
        grant_type: fields.remove("grant_type"),
        code: fields.remove("code"),
        redirect_uri: fields.remove("redirect_uri"),
        code_verifier: fields.remove("code_verifier"),
        refresh_token: fields.remove("refresh_token"),
        scope: fields.remove("scope"),
        resource: fields.remove("resource"),
        client,
    };
    match server.token(request).await {
        Ok(issued) => Json(json!({
            "access_token": issued.access_token,
            "token_type": "Bearer",
            "expires_in": issued.expires_in,
            "refresh_token": issued.refresh_token,
            "scope": ops::oauth::scope_words(issued.scope),
        }))
        .into_response(),
        Err(err) => endpoint_error(&err, basic),
    }
}

pub(crate) async fn revoke(
    State(server): Server,
    ClientForm { mut fields, client }: ClientForm,
) -> Response {
    let Some(token) = fields.remove("token").filter(|t| !t.is_empty()) else {
        return refusal(ErrorCode::InvalidRequest, "token is required: the token to revoke.");
    };
    let basic = client.basic;
    match server.revoke(token, client).await {
        Ok(()) => StatusCode::OK.into_response(),
        Err(err) => endpoint_error(&err, basic),
    }
}

/// A CORS preflight: every OAuth endpoint may be called from a browser-based client.
pub(crate) async fn preflight() -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, OPTIONS"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("Authorization, Content-Type, MCP-Protocol-Version"),
    );
    headers.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
    response
}

/// Every answer may be read from any origin (the endpoints need no cookie, so CORS adds no
/// risk) and none is cached: they carry secrets, or describe a configuration that may change.
pub(crate) async fn cors_and_no_store(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fuzz target: a token or revocation request, its `Authorization` header on the first line
    /// and its form after. Whatever it is, reading it never panics, and what is read names the
    /// client once: its credentials are never also left among the form's fields.
    #[test]
    fn fuzz_token_requests() {
        let seeds: Vec<Vec<u8>> = [
            "\ngrant_type=authorization_code&code=exhcode_x&code_verifier=abc&client_id=exhclient_y",
            "Basic ZXhoY2xpZW50X3k6ZXhoc2VjcmV0X3o=\ngrant_type=refresh_token&refresh_token=exhrefresh_r",
            "Basic ZXhoY2xpZW50JTNBeTp6\ntoken=exha_t&token_type_hint=access_token",
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
        let tokens: &[&[u8]] =
            &[b"&", b"=", b"%", b"+", b"%3A", b"client_id=", b"client_secret=", b"Basic "];
        let crashes = std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../target/fuzz-crashes"
        ));
        fuzz::check("token_requests", &seeds, tokens, &crashes, |bytes| {
            let text = String::from_utf8_lossy(bytes);
            let (authorization, body) = text.split_once('\n').unwrap_or(("", &text));
            let mut headers = HeaderMap::new();
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/x-www-form-urlencoded"),
            );
            if let Ok(value) = HeaderValue::from_str(authorization)
                && !authorization.is_empty()
            {
                headers.insert(header::AUTHORIZATION, value);
            }
            if let Ok((fields, client)) = read_form(&headers, body.as_bytes(), None) {
                assert!(!fields.contains_key("client_id") && !fields.contains_key("client_secret"));
                if client.basic {
                    assert!(client.client_id.is_some() && client.client_secret.is_some());
                }
            }
        });
    }
}
