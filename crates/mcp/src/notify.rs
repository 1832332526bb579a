//! Change notifications driven by the catalog's event bus: `resources/updated` for the
//! resources a client watches (the 2025 `resources/subscribe`, and the 2026
//! `subscriptions/listen`), and `resources/list_changed` when subscriptions come or go.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use ops::{Caller, Catalog, ChangeEvent};
use rmcp::{
    Peer, RoleServer, model::ResourceUpdatedNotificationParam, service::SubscriptionContext,
};
use tokio::{
    sync::broadcast::{Receiver, error::RecvError},
    task::AbortHandle,
};

use crate::resources::CONTEXT;

/// Whether the caller may hear about this change at all.
fn visible(event: &ChangeEvent, caller: &Caller) -> bool {
    event.household_id == caller.household_id
        && event.private_to.is_none_or(|member| member == caller.member_id)
}

/// The resources a change touches: the briefing always, and the entity's own resource.
fn touched(event: &ChangeEvent) -> Vec<String> {
    let mut uris = vec![CONTEXT.to_owned()];
    let kind = match event.entity.as_str() {
        "subscription" => Some("subscriptions"),
        "charge" => Some("charges"),
        "category" => Some("categories"),
        "payment_method" => Some("payment-methods"),
        _ => None,
    };
    if let Some(kind) = kind {
        uris.push(format!("exhale://{kind}/{}", event.entity_id));
    }
    uris
}

/// Legacy `resources/subscribe` watches, one task per (session, uri).
#[derive(Clone, Default)]
pub(crate) struct Watches(Arc<Mutex<HashMap<String, AbortHandle>>>);

impl Watches {
    /// Starts sending `resources/updated` for `uri` to `peer` until unsubscribed or the peer
    /// goes away.
    pub(crate) fn watch(
        &self,
        catalog: &dyn Catalog,
        caller: Caller,
        uri: String,
        peer: Peer<RoleServer>,
    ) {
        let mut events = catalog.subscribe();
        let watched = uri.clone();
        let task = tokio::spawn(async move {
            loop {
                match events.recv().await {
                    Ok(event) if visible(&event, &caller) && touched(&event).contains(&watched) => {
                        if peer
                            .notify_resource_updated(ResourceUpdatedNotificationParam::new(
                                watched.clone(),
                            ))
                            .await
                            .is_err()
                        {
                            return;
                        }
                    }
                    Ok(_) | Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => return,
                }
            }
        });
        if let Ok(mut watches) = self.0.lock()
            && let Some(previous) = watches.insert(uri, task.abort_handle())
        {
            previous.abort();
        }
    }

    pub(crate) fn unwatch(&self, uri: &str) {
        if let Ok(mut watches) = self.0.lock()
            && let Some(task) = watches.remove(uri)
        {
            task.abort();
        }
    }
}

/// The event-bus receiver of a `subscriptions/listen` between its acceptance and its stream.
#[derive(Clone, Default)]
pub(crate) struct PendingListen(Arc<Mutex<Option<Receiver<ChangeEvent>>>>);

impl PendingListen {
    /// Subscribes now, before the acknowledgement goes out.
    pub(crate) fn prepare(&self, catalog: &dyn Catalog) {
        if let Ok(mut pending) = self.0.lock() {
            *pending = Some(catalog.subscribe());
        }
    }

    /// The receiver `prepare` made; a fresh one if two listens on one stdio session raced.
    pub(crate) fn take(&self, catalog: &dyn Catalog) -> Receiver<ChangeEvent> {
        self.0
            .lock()
            .ok()
            .and_then(|mut pending| pending.take())
            .unwrap_or_else(|| catalog.subscribe())
    }
}

/// Serves one 2026 `subscriptions/listen` stream until the client cancels it.
pub(crate) async fn listen(
    mut events: Receiver<ChangeEvent>,
    caller: Caller,
    context: SubscriptionContext,
) {
    let accepted = context.accepted().clone();
    let watched = accepted.resource_subscriptions.clone().unwrap_or_default();
    let list_changes = accepted.resources_list_changed == Some(true);
    loop {
        let event = tokio::select! {
            () = context.cancelled() => return,
            event = events.recv() => event,
        };
        let event = match event {
            Ok(event) => event,
            Err(RecvError::Lagged(_)) => continue,
            Err(RecvError::Closed) => return,
        };
        if !visible(&event, &caller) {
            continue;
        }
        for uri in touched(&event).into_iter().filter(|uri| watched.contains(uri)) {
            if context.sink().notify_resource_updated(uri).await.is_err() {
                return;
            }
        }
        if list_changes
            && event.entity == "subscription"
            && context.sink().notify_resource_list_changed().await.is_err()
        {
            return;
        }
    }
}
