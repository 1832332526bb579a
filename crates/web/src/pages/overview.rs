//! The overview: monthly and yearly totals with a chart by category, the next 30 days of
//! charges, what needs attention, and recent activity.

use axum::{extract::State, http::HeaderMap, response::Response};
use ops::{
    Text,
    charges::{ListUpcomingCharges, ListUpcomingInput},
    household::Empty,
    registry::{ListActivity, ListActivityInput},
    reports::{GetSpendingSummary, ListAttentionItems, SpendingSummary},
};
use serde_json::json;

use crate::{
    chart, pages::live_page, reader::say, render::op_error, session::SignedIn, state::Web,
};

pub(crate) async fn show(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
) -> Response {
    let (summary, upcoming, attention, activity) = tokio::join!(
        web.call::<GetSpendingSummary>(&person, Default::default()),
        web.call::<ListUpcomingCharges>(
            &person,
            ListUpcomingInput { days: Some(30), ..Default::default() }
        ),
        web.call::<ListAttentionItems>(&person, Empty {}),
        web.call::<ListActivity>(
            &person,
            ListActivityInput { limit: Some(8), ..Default::default() }
        ),
    );
    let (summary, upcoming, attention, activity) = match (summary, upcoming, attention, activity) {
        (Ok(a), Ok(b), Ok(c), Ok(d)) => (a, b, c, d),
        (Err(err), ..) | (_, Err(err), ..) | (_, _, Err(err), _) | (.., Err(err)) => {
            return op_error(&web, &headers, &person, &err);
        }
    };
    let chart = by_category_chart(&summary);
    live_page(
        &web,
        &headers,
        &person,
        "overview.html",
        json!({
            "nav": "overview",
            "summary": summary,
            "chart": chart,
            "upcoming": upcoming,
            "attention": attention.items,
            "activity": activity.items,
        }),
    )
    .await
}

fn by_category_chart(summary: &SpendingSummary) -> String {
    chart::by_category(summary, &say(&Text::new("Monthly cost by category")))
}
