//! Headers that keep responses with personal data out of caches and content sniffing: every
//! answer of the API, `/mcp` and the web app has them.

use axum::{
    http::{HeaderMap, HeaderValue, header},
    response::Response,
};

/// `nosniff`, and `no-store` unless the response chose its own caching (a static asset).
pub fn mark_private_headers(headers: &mut HeaderMap) {
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
}

/// [`mark_private_headers`] as a response mapper, for `axum::middleware::map_response`.
pub async fn mark_private(mut response: Response) -> Response {
    mark_private_headers(response.headers_mut());
    response
}
