//! Live updates: `/events` streams a `change` event (server-sent events) whenever something
//! the signed-in person may see changes, from any adapter (an agent over MCP, REST, another
//! person). `static/app.js` then refreshes the page's live parts; without JavaScript nothing
//! is lost but the automatic refresh.

use std::{convert::Infallible, time::Duration};

use axum::{
    extract::{Query, State},
    http::HeaderMap,
    response::{
        IntoResponse, Response,
        sse::{Event, KeepAlive, Sse},
    },
};
use ops::{Mode, accounts::SessionCaller};
use serde::Deserialize;
use serde_json::json;
use tokio_stream::{StreamExt, wrappers::BroadcastStream};

use crate::{Web, pages::call, session};

/// The newest activity entry the person can see: pages carry it, so `/events` can tell them
/// about a change made between rendering the page and opening the stream.
pub(crate) async fn newest_change(web: &Web, person: &SessionCaller) -> i64 {
    call(web, person, "list_activity", json!({"limit": 1}), Mode::Apply)
        .await
        .ok()
        .and_then(|activity| activity["items"][0]["id"].as_i64())
        .unwrap_or(0)
}

#[derive(Deserialize)]
pub(crate) struct Since {
    since: Option<i64>,
}

pub(crate) async fn events(
    State(web): State<Web>,
    headers: HeaderMap,
    Query(since): Query<Since>,
) -> Response {
    let person = match session::person(&web, &headers, "/").await {
        Ok(person) => person,
        Err(to_sign_in) => return to_sign_in,
    };
    let (household, me) = (person.caller.household_id, person.caller.member_id);
    // Subscribe first, then look back: a change lands in one or the other, never in neither.
    let bus = web.catalog.subscribe();
    let missed = match since.since {
        Some(since) => newest_change(&web, &person).await > since,
        None => false,
    };
    let mut first = vec![Ok::<_, Infallible>(Event::default().event("ready").data("{}"))];
    if missed {
        first.push(Ok(Event::default().event("change").data(json!({"missed": true}).to_string())));
    }
    let changes = BroadcastStream::new(bus).filter_map(move |event| {
        // A lagging browser missed some events; one refresh covers them all.
        let event = event.ok()?;
        let visible = event.household_id == household && event.private_to.is_none_or(|m| m == me);
        visible.then(|| {
            Ok::<_, Infallible>(
                Event::default()
                    .event("change")
                    .data(json!({"entity": event.entity, "op": event.op}).to_string()),
            )
        })
    });
    Sse::new(tokio_stream::iter(first).chain(changes))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(20)))
        .into_response()
}
