//! Tests of the problem JSON every `OpError` turns into.

use axum::http::{StatusCode, header};
use ops::Text;
use ops::{OpError, Scope};
use serde_json::json;

use super::{invalid_json_body, problem_body, problem_response, problem_response_with_status};

fn every_error() -> Vec<(OpError, StatusCode)> {
    let text = || Text::new("Something for {who}.").with("who", "you");
    vec![
        (OpError::invalid("/limit", text()), StatusCode::BAD_REQUEST),
        (OpError::not_found(text()), StatusCode::NOT_FOUND),
        (OpError::conflict(text()), StatusCode::CONFLICT),
        (OpError::Forbidden { message: text(), needed: Some(Scope::Write) }, StatusCode::FORBIDDEN),
        (
            OpError::ConfirmationRequired {
                confirmation_id: "c1".into(),
                expires_at: "2026-01-01T00:10:00Z".into(),
                preview: Box::new(json!({"dry_run": true})),
                message: text(),
            },
            StatusCode::PRECONDITION_REQUIRED,
        ),
        (OpError::Unauthenticated { message: text() }, StatusCode::UNAUTHORIZED),
        (
            OpError::RateLimited { retry_after_secs: 7, message: text() },
            StatusCode::TOO_MANY_REQUESTS,
        ),
        (
            OpError::Unavailable { retry_after_secs: 1, message: text() },
            StatusCode::SERVICE_UNAVAILABLE,
        ),
        (OpError::Internal, StatusCode::INTERNAL_SERVER_ERROR),
    ]
}

#[test]
fn every_code_has_its_status_title_and_content_type() {
    for (err, status) in every_error() {
        let response = problem_response(&err);
        assert_eq!(response.status(), status, "{}", err.code());
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/problem+json");
        let body = problem_body(&err, status);
        assert_eq!(body["type"], "about:blank");
        assert_eq!(body["status"], status.as_u16());
        assert_eq!(body["code"], err.code());
        assert!(!body["title"].as_str().unwrap().is_empty());
        assert_eq!(body["detail"], err.text().render());
    }
}

#[test]
fn each_code_carries_what_the_client_needs_to_act() {
    let [invalid, _, _, forbidden, confirmation, unauthenticated, limited, unavailable, internal] =
        <[_; 9]>::try_from(every_error()).unwrap();
    let body = |(err, status): &(OpError, StatusCode)| problem_body(err, *status);
    assert_eq!(body(&invalid)["pointer"], "/limit");
    assert_eq!(body(&invalid)["detail"], "Something for you.");
    assert_eq!(body(&forbidden)["needed_scope"], "write");
    let confirmation_body = body(&confirmation);
    assert_eq!(confirmation_body["confirmation_id"], "c1");
    assert_eq!(confirmation_body["expires_at"], "2026-01-01T00:10:00Z");
    assert_eq!(confirmation_body["preview"], json!({"dry_run": true}));
    assert_eq!(body(&limited)["retry_after"], 7);
    assert_eq!(body(&unavailable)["retry_after"], 1);
    assert_eq!(problem_response(&unavailable.0).headers()[header::RETRY_AFTER], "1");
    assert!(body(&internal)["detail"].as_str().unwrap().contains("logged"));

    let response = problem_response(&unauthenticated.0);
    assert_eq!(response.headers()[header::WWW_AUTHENTICATE], "Bearer realm=\"exhale\"");
    let response = problem_response(&limited.0);
    assert_eq!(response.headers()[header::RETRY_AFTER], "7");
}

#[test]
fn another_status_is_reported_in_the_body_too() {
    let err = OpError::invalid("", Text::new("Use POST."));
    let response = problem_response_with_status(&err, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(problem_body(&err, StatusCode::METHOD_NOT_ALLOWED)["status"], 405);
}

#[test]
fn bad_json_is_invalid_input_for_the_whole_body() {
    let err = serde_json::from_str::<serde_json::Value>("{nope").unwrap_err();
    let OpError::InvalidInput { pointer, message } = invalid_json_body(&err) else {
        panic!("expected invalid_input");
    };
    assert_eq!(pointer, "");
    assert!(
        message.render().starts_with("The request body is not valid JSON: key must be a string")
    );
}
