//! The stylesheet, the script and the icon, embedded in the binary and cached by browsers for a day.

use axum::{
    http::header,
    response::{IntoResponse, Response},
};

const CSS: &str = include_str!("../../static/app.css");
const JS: &str = include_str!("../../static/app.js");
const ICON: &str = include_str!("../../static/icon.svg");

pub(crate) async fn css() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "max-age=86400"),
        ],
        CSS,
    )
        .into_response()
}

pub(crate) async fn js() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "max-age=86400"),
        ],
        JS,
    )
        .into_response()
}

pub(crate) async fn icon() -> Response {
    ([(header::CONTENT_TYPE, "image/svg+xml"), (header::CACHE_CONTROL, "max-age=86400")], ICON)
        .into_response()
}
