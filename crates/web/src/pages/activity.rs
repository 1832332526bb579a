//! Activity: every change with who made it, and Undo for one change or its whole batch,
//! through a confirmation page built from the undo's dry run; and the built-in assistant's
//! recent use (an owner sees everyone's questions, a member their own).

use axum::{
    extract::{Path, Query, State},
    http::HeaderMap,
    response::Response,
};
use ops::{
    Text,
    activity::{Undo, UndoInput},
    assistant::ListAssistantUsage,
    common::RecordId,
    entities::ActorKind,
    registry::{ListActivity, ListActivityInput},
};
use serde::Deserialize;
use serde_json::json;

use crate::{
    pages::{Confirm, apply_and_go, confirm_page, form, live_page},
    render::op_error,
    session::{Posted, SignedIn},
    state::Web,
};

#[derive(Deserialize, Default)]
pub(crate) struct ActivityQuery {
    cursor: Option<String>,
    /// Only changes by this kind of actor; empty for all.
    #[serde(default)]
    actor: String,
}

pub(crate) async fn list(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
    Query(query): Query<ActivityQuery>,
) -> Response {
    let actor_kind = match form::parsed::<ActorKind>("/actor_kind", &query.actor) {
        Ok(kind) => kind,
        Err(err) => return op_error(&web, &headers, &person, &err),
    };
    let input = ListActivityInput {
        limit: Some(50),
        cursor: query.cursor,
        actor_kind,
        ..Default::default()
    };
    let (activity, usage) = tokio::join!(
        web.call::<ListActivity>(&person, input),
        web.call::<ListAssistantUsage>(&person, ops::household::Empty {})
    );
    match (activity, usage) {
        (Ok(activity), Ok(usage)) => {
            live_page(
                &web,
                &headers,
                &person,
                "activity.html",
                json!({"nav": "activity", "activity": activity, "actor": query.actor, "usage": usage.items}),
            )
            .await
        }
        (Err(err), _) | (_, Err(err)) => op_error(&web, &headers, &person, &err),
    }
}

#[derive(Deserialize, Default)]
pub(crate) struct UndoQuery {
    /// Undo every change of the entry's call, not only this entry.
    #[serde(default)]
    batch: Option<String>,
}

fn undo_input(id: RecordId, batch: Option<&str>) -> UndoInput {
    match batch.filter(|batch| !batch.is_empty()) {
        Some(batch) => UndoInput { batch_id: Some(batch.to_owned()), ..Default::default() },
        None => UndoInput { audit_ids: vec![id], ..Default::default() },
    }
}

pub(crate) async fn confirm_undo(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
    Path(id): Path<RecordId>,
    Query(query): Query<UndoQuery>,
) -> Response {
    let batch = query.batch.filter(|b| !b.is_empty());
    let input = undo_input(id, batch.as_deref());
    confirm_page::<Undo>(&web, &headers, &person, input, |_| Confirm {
        nav: "activity",
        title: if batch.is_some() {
            Text::new("Undo these changes?")
        } else {
            Text::new("Undo this change?")
        },
        explanation: Text::new(
            "Exhale puts things back as they were before. The undo itself shows up in Activity and can be undone too.",
        ),
        action: format!("/activity/{id}/undo"),
        confirm_label: Text::new("Undo"),
        cancel: "/activity".into(),
        hidden: batch.iter().map(|batch| ("batch".to_owned(), batch.clone())).collect(),
    })
    .await
}

#[derive(Deserialize)]
pub(crate) struct UndoForm {
    #[serde(default)]
    batch: Option<String>,
}

pub(crate) async fn undo(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(id): Path<RecordId>,
    Posted { person, form }: Posted<UndoForm>,
) -> Response {
    let input = undo_input(id, form.batch.as_deref());
    apply_and_go::<Undo>(&web, &headers, &person, input, "/activity", Text::new("Undone.")).await
}
