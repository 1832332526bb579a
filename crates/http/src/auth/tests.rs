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
