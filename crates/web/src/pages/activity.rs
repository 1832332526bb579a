//! Activity: every change with who made it, and Undo for one change or its whole batch,
//! through a confirmation page built from the undo's dry run.

use axum::{
    Form,
    extract::{Path, Query, State},
    http::HeaderMap,
    response::Response,
};
use ops::Mode;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{
    Web,
    pages::{Confirm, apply_and_go, call, confirm_page, live_page},
    render::op_error,
    session,
};

#[derive(Deserialize, Default)]
pub(crate) struct ActivityQuery {
    cursor: Option<String>,
    /// "person", "agent", "assistant" or "system".
    #[serde(default)]
    actor: String,
}

pub(crate) async fn list(
    State(web): State<Web>,
    headers: HeaderMap,
    Query(query): Query<ActivityQuery>,
) -> Response {
    let person = match session::person(&web, &headers, "/activity").await {
        Ok(person) => person,
        Err(to_sign_in) => return to_sign_in,
    };
    let mut input = json!({"limit": 50});
    if let Some(cursor) = &query.cursor {
        input["cursor"] = json!(cursor);
    }
    if !query.actor.is_empty() {
        input["actor_kind"] = json!(query.actor);
    }
    match call(&web, &person, "list_activity", input, Mode::Apply).await {
        Ok(activity) => {
            live_page(
                &web,
                &headers,
                &person,
                "activity.html",
                json!({"nav": "activity", "activity": activity, "actor": query.actor}),
            )
            .await
        }
        Err(err) => op_error(&web, &headers, &person, &err),
    }
}

#[derive(Deserialize, Default)]
pub(crate) struct UndoQuery {
    /// Undo every change of the entry's call, not only this entry.
    #[serde(default)]
    batch: Option<String>,
}

fn undo_input(id: i64, batch: Option<&str>) -> Value {
    match batch {
        Some(batch) if !batch.is_empty() => json!({"batch_id": batch}),
        _ => json!({"audit_ids": [id]}),
    }
}

pub(crate) async fn confirm_undo(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(id): Path<i64>,
    Query(query): Query<UndoQuery>,
) -> Response {
    let person = match session::person(&web, &headers, "/activity").await {
        Ok(person) => person,
        Err(to_sign_in) => return to_sign_in,
    };
    let batch = query.batch.as_deref().filter(|b| !b.is_empty());
    let confirm = Confirm {
        nav: "activity",
        title: if batch.is_some() { "Undo these changes?" } else { "Undo this change?" },
        explanation: "Exhale puts things back as they were before. The undo itself shows up in Activity and can be undone too.",
        action: format!("/activity/{id}/undo"),
        confirm_label: "Undo",
        cancel: "/activity".into(),
        hidden: batch.map_or(json!({}), |batch| json!({"batch": batch})),
    };
    confirm_page(&web, &headers, &person, "undo", undo_input(id, batch), confirm).await
}

#[derive(Deserialize)]
pub(crate) struct UndoForm {
    csrf: String,
    #[serde(default)]
    batch: Option<String>,
}

pub(crate) async fn undo(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(id): Path<i64>,
    Form(form): Form<UndoForm>,
) -> Response {
    let person = match session::checked(&web, &headers, "/activity", &form.csrf).await {
        Ok(person) => person,
        Err(refused) => return refused,
    };
    let input = undo_input(id, form.batch.as_deref());
    apply_and_go(&web, &headers, &person, "undo", input, "/activity", "Undone.").await
}
