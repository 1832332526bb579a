//! Bearer authentication: `Authorization: Bearer <token>` to an `ops::Caller`.
//!
//! The catalog checks the token ([`ops::Catalog::authenticate_token`]); this module only reads
//! the header and answers 401 with a `WWW-Authenticate` challenge (RFC 6750) when there is no
//! usable token. [`Bearer`] is the REST extractor; other adapters call
//! [`authenticate_bearer`] with their own [`Via`] (MCP adds its OAuth metadata to the
//! challenge).

use std::fmt;

use axum::{
    extract::{FromRef, FromRequestParts},
    http::{HeaderMap, HeaderValue, header, request::Parts},
    response::{IntoResponse, Response},
};
use ops::Text;
use ops::{Caller, Catalog, OpError, Via};

use crate::{problem::problem_response, state::AppState};

/// The challenge when a token was sent but refused (RFC 6750 section 3.1).
const INVALID_TOKEN: &str = "Bearer realm=\"exhale\", error=\"invalid_token\"";

/// The challenge of a resource that OAuth clients may connect to (RFC 9728 section 5.1): where
/// its metadata is and which scope to ask for, and `error="invalid_token"` only when a token
/// was sent. A client that sent none is being invited, not refused (RFC 6750 section 3.1);
/// some clients give up on an `error` there.
pub fn oauth_challenge(origin: &ops::oauth::PublicOrigin, token_sent: bool) -> String {
    let mut value = format!(
        "Bearer resource_metadata=\"{}\", scope=\"{}\"",
        origin.url("/.well-known/oauth-protected-resource/mcp"),
        ops::oauth::DEFAULT_SCOPE
    );
    if token_sent {
        value.push_str(", error=\"invalid_token\"");
    }
    value
}

/// The challenge of a 403 to a connected app whose grant lacks the scope a call needs (RFC 6750
/// section 3.1, MCP's step-up): the scope to ask the person for, where the metadata is, and a
/// sentence for the person, since some clients show `error_description` and nothing else.
pub fn insufficient_scope_challenge(
    origin: &ops::oauth::PublicOrigin,
    needed: ops::Scope,
    description: &str,
) -> String {
    // A quoted-string takes no `"` or `\` unescaped, and a header value only visible ASCII.
    let description: String = description
        .chars()
        .filter(|c| c.is_ascii_graphic() || *c == ' ')
        .map(|c| if c == '"' || c == '\\' { '\'' } else { c })
        .collect();
    format!(
        "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{}\", error_description=\"{description}\"",
        needed.as_str(),
        origin.url("/.well-known/oauth-protected-resource/mcp"),
    )
}

/// Why a request has no caller.
#[derive(Debug, Clone)]
pub enum BearerRejection {
    /// No `Authorization` header.
    Missing,
    /// An `Authorization` header that is not `Bearer <token>`.
    Malformed,
    /// The catalog refused the token (usually `unauthenticated`; it may also be
    /// `rate_limited` or `internal`).
    Refused(OpError),
}

impl BearerRejection {
    /// The error as the catalog's vocabulary, with a message saying what to do.
    pub fn to_op_error(&self) -> OpError {
        match self {
            Self::Missing => OpError::Unauthenticated {
                message: Text::new(
                    "This endpoint needs an API token: send the header \"Authorization: Bearer\" followed by the token. A person in the household can create one in Exhale.",
                ),
            },
            Self::Malformed => OpError::Unauthenticated {
                message: Text::new(
                    "The Authorization header must be \"Bearer\", one space and the token, with nothing else.",
                ),
            },
            Self::Refused(err) => err.clone(),
        }
    }
}

impl fmt::Display for BearerRejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.to_op_error().fmt(f)
    }
}

impl std::error::Error for BearerRejection {}

impl IntoResponse for BearerRejection {
    fn into_response(self) -> Response {
        let mut response = problem_response(&self.to_op_error());
        // Only a refused token is an `invalid_token`: a missing header is an invitation to
        // authenticate, not an error in the token (RFC 6750 section 3.1).
        if let Self::Refused(OpError::Unauthenticated { .. }) = self {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(INVALID_TOKEN));
        }
        response
    }
}

/// The token of an `Authorization: Bearer <token>` header. The scheme is case-insensitive
/// (RFC 9110 section 11.1); the token is everything after one space and must have no spaces.
pub fn parse_bearer(headers: &HeaderMap) -> Result<&str, BearerRejection> {
    let value = headers.get(header::AUTHORIZATION).ok_or(BearerRejection::Missing)?;
    let value = value.to_str().map_err(|_| BearerRejection::Malformed)?;
    let (scheme, token) = value.split_once(' ').ok_or(BearerRejection::Malformed)?;
    if !scheme.eq_ignore_ascii_case("bearer")
        || token.is_empty()
        || token.contains(|c: char| c.is_ascii_whitespace())
    {
        return Err(BearerRejection::Malformed);
    }
    Ok(token)
}

/// Reads the bearer token from `headers` and asks the catalog who it belongs to.
pub async fn authenticate_bearer(
    headers: &HeaderMap,
    catalog: &dyn Catalog,
    via: Via,
) -> Result<Caller, BearerRejection> {
    let token = parse_bearer(headers)?;
    catalog.authenticate_token(token, via).await.map_err(|err| {
        tracing::debug!(via = via.as_str(), code = err.code(), "bearer token refused");
        BearerRejection::Refused(err)
    })
}

/// The caller of a REST request, from its bearer token (`Via::Rest`).
#[derive(Debug, Clone)]
pub struct Bearer(pub Caller);

impl<S> FromRequestParts<S> for Bearer
where
    AppState: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = BearerRejection;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let state = AppState::from_ref(state);
        authenticate_bearer(&parts.headers, &*state.catalog, Via::Rest).await.map(Self)
    }
}

#[cfg(test)]
mod tests;
