//! The security headers on every response of the web app. Pages load only their own script,
//! stylesheet and images (no inline script or style anywhere), cannot be framed, do not send
//! their address to other sites, and are never stored by a browser or proxy cache, as every
//! page but the sign-in form shows someone's money. Static assets keep their own caching.

use axum::{
    http::{HeaderName, HeaderValue, header},
    response::Response,
};

/// `app.js` is the only script and `app.css` the only stylesheet; the QR code is an inline
/// SVG element, which `img-src` does not govern.
pub(crate) const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; manifest-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

pub(crate) async fn add(mut response: Response) -> Response {
    let headers = response.headers_mut();
    let set = |headers: &mut axum::http::HeaderMap, name: HeaderName, value: &'static str| {
        headers.insert(name, HeaderValue::from_static(value));
    };
    // A page may set its own, stricter or with one more form target (the consent page).
    if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        set(headers, header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY);
    }
    set(headers, header::X_FRAME_OPTIONS, "DENY");
    // Same-origin, not no-referrer: form posts keep their Origin header.
    set(headers, header::REFERRER_POLICY, "same-origin");
    http::mark_private_headers(headers);
    response
}
