//! The stylesheet, the script and the icons, embedded in the binary and cached by browsers for
//! a day; and what installing Exhale on a phone takes: the web app manifest, the service
//! worker and the page it shows offline.

use axum::{
    extract::State,
    http::{HeaderMap, header},
    response::{IntoResponse, Response},
};

use crate::{render::page, state::Web};

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

const ICON_180: &[u8] = include_bytes!("../../static/icon-180.png");
const ICON_192: &[u8] = include_bytes!("../../static/icon-192.png");
const ICON_512: &[u8] = include_bytes!("../../static/icon-512.png");
const ICON_MASKABLE_512: &[u8] = include_bytes!("../../static/icon-maskable-512.png");

fn png(bytes: &'static [u8]) -> Response {
    ([(header::CONTENT_TYPE, "image/png"), (header::CACHE_CONTROL, "max-age=86400")], bytes)
        .into_response()
}

/// The icon a phone puts on its home screen (Apple's size).
pub(crate) async fn icon_180() -> Response {
    png(ICON_180)
}

pub(crate) async fn icon_192() -> Response {
    png(ICON_192)
}

pub(crate) async fn icon_512() -> Response {
    png(ICON_512)
}

/// The icon with room around it for a launcher's mask (its own shape, cut from the middle).
pub(crate) async fn icon_maskable_512() -> Response {
    png(ICON_MASKABLE_512)
}

/// The web app manifest: what a phone or a desktop browser needs to install Exhale as an app
/// of its own (its name, icons, colours, and that it opens standalone at the Overview).
pub(crate) async fn manifest() -> Response {
    let manifest = serde_json::json!({
        "id": "/",
        "name": "Exhale",
        "short_name": "Exhale",
        "description": "Your household's subscriptions, accounts and budgets.",
        "start_url": "/",
        "scope": "/",
        "display": "standalone",
        "theme_color": THEME_COLOUR,
        "background_color": "#f6f7f9",
        "icons": [
            {"src": "/static/icon-192.png", "sizes": "192x192", "type": "image/png"},
            {"src": "/static/icon-512.png", "sizes": "512x512", "type": "image/png"},
            {"src": "/static/icon-maskable-512.png", "sizes": "512x512", "type": "image/png", "purpose": "maskable"},
            {"src": "/static/icon.svg", "sizes": "any", "type": "image/svg+xml"},
        ],
    });
    (
        [
            (header::CONTENT_TYPE, "application/manifest+json"),
            (header::CACHE_CONTROL, "max-age=86400"),
        ],
        manifest.to_string(),
    )
        .into_response()
}

/// The colour of the app's bar on a phone: the icon's blue, as `base.html` says it too.
const THEME_COLOUR: &str = "#0b6bcb";

const SERVICE_WORKER: &str = include_str!("../../static/sw.js");

/// The service worker, at the root so that it may answer for every page: asked again on every
/// visit (`no-cache`), so a new Exhale's reaches browsers at once.
pub(crate) async fn service_worker() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        SERVICE_WORKER.replace("{version}", ops::VERSION),
    )
        .into_response()
}

/// What the service worker shows when the server cannot be reached: the same for everyone,
/// with nobody's data, in the language of the browser that installed it.
pub(crate) async fn offline(State(web): State<Web>, headers: HeaderMap) -> Response {
    page(&web, &headers, None, "offline.html", serde_json::json!({}))
}
