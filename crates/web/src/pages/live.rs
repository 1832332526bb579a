//! Live updates: `/events` streams a `change` event (server-sent events) whenever something
//! the signed-in person may see changes, from any adapter (an agent over MCP, REST, another
//! person). `static/app.js` then refreshes the page's live parts; without JavaScript nothing
//! is lost but the automatic refresh.

use std::{convert::Infallible, time::Duration};

use axum::{
    extract::{Query, State},
    response::{
        IntoResponse, Response,
        sse::{Event, KeepAlive, Sse},
    },
};
use futures_util::{StreamExt as _, stream};
use ops::{
    Heard,
    accounts::SessionCaller,
    registry::{ListActivity, ListActivityInput},
};
use serde::Deserialize;
use serde_json::json;

use crate::{session::SignedIn, state::Web};

/// The newest activity entry the person can see: pages carry it, so `/events` can tell them
/// about a change made between rendering the page and opening the stream.
pub(crate) async fn newest_change(web: &Web, person: &SessionCaller) -> i64 {
    let input = ListActivityInput { limit: Some(1), ..Default::default() };
    web.call::<ListActivity>(person, input)
        .await
        .ok()
        .and_then(|activity| activity.items.first().map(|entry| entry.id))
        .unwrap_or(0)
}

#[derive(Deserialize)]
pub(crate) struct Since {
    since: Option<i64>,
}

pub(crate) async fn events(
    State(web): State<Web>,
    SignedIn(person): SignedIn,
    Query(since): Query<Since>,
) -> Response {
    // Subscribe first, then look back: a change lands in one or the other, never in neither.
    let feed = web.catalog.subscribe(&person.caller);
    let missed = match since.since {
        Some(since) => newest_change(&web, &person).await > since,
        None => false,
    };
    let mut first = vec![Ok::<_, Infallible>(Event::default().event("ready").data("{}"))];
    if missed {
        first.push(Ok(Event::default().event("change").data(json!({"missed": true}).to_string())));
    }
    let changes = stream::unfold(feed, |mut feed| async move {
        let data = match feed.next().await? {
            Heard::Change(event) => json!({"entity": event.entity, "op": event.op}),
            // A lagging browser missed some events; one refresh covers them all.
            Heard::Missed => json!({"missed": true}),
        };
        Some((Ok::<_, Infallible>(Event::default().event("change").data(data.to_string())), feed))
    });
    Sse::new(stream::iter(first).chain(changes))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(20)))
        .into_response()
}
