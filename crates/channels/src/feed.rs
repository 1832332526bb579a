//! `GET /cal/<secret>.ics`: a member's expected charges for the next year as iCalendar, read
//! through the catalog as that member (`list_upcoming_charges`), so the feed shows exactly what
//! they may see. The secret is the address; an unknown or revoked one is a plain 404. An `ETag`
//! lets calendar apps poll cheaply.

use std::sync::Arc;

use axum::{
    Router,
    extract::{Path, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
    routing::get,
};
use ops::{
    Catalog, Mode,
    channels::CalendarFeeds,
    charges::{ListUpcomingCharges, ListUpcomingInput},
};
use sha2::{Digest as _, Sha256};

use crate::ics;

#[derive(Clone)]
struct FeedState {
    catalog: Arc<dyn Catalog>,
    feeds: Arc<dyn CalendarFeeds>,
}

/// Paths whose rest is a secret (a calendar feed's address): a log shows the path up to here
/// and never the rest.
pub const SECRET_PATHS: &[&str] = &["/cal/"];

/// The calendar feed's route.
pub fn router(catalog: Arc<dyn Catalog>, feeds: Arc<dyn CalendarFeeds>) -> Router {
    Router::new().route("/cal/{file}", get(feed)).with_state(FeedState { catalog, feeds })
}

fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        "No calendar feed at this address; create a new one in Exhale's Settings.\n",
    )
        .into_response()
}

async fn feed(
    State(state): State<FeedState>,
    Path(file): Path<String>,
    headers: HeaderMap,
) -> Response {
    let Some(secret) = file.strip_suffix(".ics").filter(|s| !s.is_empty() && s.len() <= 128) else {
        return not_found();
    };
    let reader = match state.feeds.feed_reader(secret).await {
        Ok(Some(reader)) => reader,
        Ok(None) => return not_found(),
        Err(err) => {
            tracing::warn!(code = err.code(), "reading a calendar feed failed");
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        }
    };
    let input = ListUpcomingInput { days: Some(ops::limits::UPCOMING_DAYS), ..Default::default() };
    let upcoming = match ops::call::<ListUpcomingCharges>(
        &*state.catalog,
        &reader.caller,
        &input,
        Mode::Apply,
    )
    .await
    {
        Ok(upcoming) => upcoming,
        Err(err) => {
            tracing::warn!(code = err.code(), "listing a calendar feed's charges failed");
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        }
    };
    // The person reads the events in their calendar, in their language.
    let language = reader.caller.language;
    let say = |text: ops::Text| i18n::say(language, &text);
    let events: Vec<ics::Event> = upcoming
        .items
        .iter()
        .map(|item| {
            let summary = if reader.show_amounts {
                let amount = i18n::format::amount(
                    language,
                    item.amount.amount,
                    item.amount.currency.currency(),
                );
                format!("{} {amount}", item.subscription.name)
            } else {
                item.subscription.name.clone()
            };
            let description = match &item.payment_method {
                Some(method) => {
                    say(ops::Text::new("Charged to {method}.").with("method", &method.name))
                }
                None => say(ops::Text::new("An expected charge, from Exhale.")),
            };
            ics::Event {
                uid: format!("charge-{}-{}@exhale", item.subscription.id, item.charge_on),
                date: item.charge_on.to_string(),
                summary,
                description,
            }
        })
        .collect();
    let name = say(ops::Text::new("Exhale – {name}'s charges").with("name", &reader.member_name));
    let stamp = format!("{}T000000Z", upcoming.from.to_string().replace('-', ""));
    let body = ics::calendar(&name, &stamp, &events);
    let digest = Sha256::digest(body.as_bytes());
    let etag =
        format!("\"{}\"", digest.iter().take(12).map(|b| format!("{b:02x}")).collect::<String>());
    let matches = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|tags| tags.split(',').any(|tag| tag.trim() == etag));
    let mut response = if matches {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        ([(header::CONTENT_TYPE, "text/calendar; charset=utf-8")], body).into_response()
    };
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&etag) {
        headers.insert(header::ETAG, value);
    }
    // The address is a secret: shared caches must not keep it.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("private, max-age=3600"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}
