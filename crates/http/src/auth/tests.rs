//! Tests of the `Authorization` header parsing and the 401 challenges.

use axum::{
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::IntoResponse,
};
use ops::OpError;
use ops::Text;

use super::{BearerRejection, parse_bearer};

fn headers(authorization: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(header::AUTHORIZATION, HeaderValue::from_str(authorization).unwrap());
    headers
}

#[test]
fn reads_the_token_with_any_case_of_scheme() {
    assert_eq!(parse_bearer(&headers("Bearer abc.123")).unwrap(), "abc.123");
    assert_eq!(parse_bearer(&headers("bearer abc")).unwrap(), "abc");
    assert_eq!(parse_bearer(&headers("BEARER abc")).unwrap(), "abc");
}

#[test]
fn missing_and_malformed_headers_are_told_apart() {
    assert!(matches!(parse_bearer(&HeaderMap::new()), Err(BearerRejection::Missing)));
    for bad in ["Bearer", "Bearer ", "Basic abc", "Bearer  abc", "Bearer a b", "Token abc", "abc"] {
        assert!(
            matches!(parse_bearer(&headers(bad)), Err(BearerRejection::Malformed)),
            "{bad:?} should be malformed"
        );
    }
}

#[test]
fn challenges_say_invalid_token_only_for_a_refused_token() {
    let challenge = |rejection: BearerRejection| {
        let response = rejection.into_response();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        response.headers()[header::WWW_AUTHENTICATE].to_str().unwrap().to_owned()
    };
    assert_eq!(challenge(BearerRejection::Missing), "Bearer realm=\"exhale\"");
    assert_eq!(challenge(BearerRejection::Malformed), "Bearer realm=\"exhale\"");
    let refused = OpError::Unauthenticated { message: Text::new("Unknown token.") };
    assert_eq!(
        challenge(BearerRejection::Refused(refused)),
        "Bearer realm=\"exhale\", error=\"invalid_token\""
    );
}

#[test]
fn a_failure_while_checking_the_token_keeps_its_own_status() {
    let response = BearerRejection::Refused(OpError::Internal).into_response();
    assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
    assert!(response.headers().get(header::WWW_AUTHENTICATE).is_none());
}

/// Fuzz target: whatever the description, the step-up challenge is one valid header value
/// whose quoted strings stay closed (the description cannot add or end a parameter).
#[test]
fn fuzz_insufficient_scope_challenges() {
    let origin = ops::oauth::PublicOrigin { origin: "https://exhale.example".into() };
    let seeds = vec![b"create_category needs more than this connection was allowed.".to_vec()];
    let crashes =
        std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/fuzz-crashes"));
    fuzz::check(
        "insufficient_scope_challenges",
        &seeds,
        &[b"\"", b"\\", b",", b"\n"],
        &crashes,
        |bytes| {
            let description = String::from_utf8_lossy(bytes);
            let challenge =
                crate::insufficient_scope_challenge(&origin, ops::Scope::Write, &description);
            assert!(axum::http::HeaderValue::from_str(&challenge).is_ok(), "{challenge:?}");
            assert_eq!(challenge.matches('"').count(), 8, "{challenge}");
            assert!(challenge.ends_with('"'));
        },
    );
}
