//! The overview: monthly and yearly totals with a chart by category, the next 30 days of
//! charges, what needs attention, and recent activity.

use axum::{extract::State, http::HeaderMap, response::Response};
use ops::Mode;
use serde_json::{Value, json};

use crate::{
    Web,
    chart::{self, Bar},
    pages::{call, live_page},
    render::op_error,
    session,
};

pub(crate) async fn show(State(web): State<Web>, headers: HeaderMap) -> Response {
    let person = match session::person(&web, &headers, "/").await {
        Ok(person) => person,
        Err(to_sign_in) => return to_sign_in,
    };
    let (summary, upcoming, attention, activity) = tokio::join!(
        call(&web, &person, "get_spending_summary", json!({}), Mode::Apply),
        call(&web, &person, "list_upcoming_charges", json!({"days": 30}), Mode::Apply),
        call(&web, &person, "list_attention_items", json!({}), Mode::Apply),
        call(&web, &person, "list_activity", json!({"limit": 8}), Mode::Apply),
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
            "attention": attention["items"],
            "activity": activity["items"],
        }),
    )
    .await
}

fn by_category_chart(summary: &Value) -> String {
    let bars: Vec<Bar> = summary["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|group| Bar {
            label: group["label"].as_str().unwrap_or("Uncategorised").to_owned(),
            value: group["monthly"]["amount"].as_str().and_then(|a| a.parse().ok()).unwrap_or(0.0),
            shown: group["monthly"]["display"].as_str().unwrap_or_default().to_owned(),
        })
        .collect();
    chart::bars("Monthly cost by category", &bars)
}
