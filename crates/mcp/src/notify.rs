//! Change notifications driven by the catalog's event bus: `resources/updated` for the
//! resources a client watches (the 2025 `resources/subscribe`, and the 2026
//! `subscriptions/listen`), and `resources/list_changed` when subscriptions come or go.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use ops::{Caller, Catalog, ChangeEvent, ChangeFeed, Heard, UnboundFeed, entities::EntityKind};
use rmcp::{
    Peer, RoleServer, model::ResourceUpdatedNotificationParam, service::SubscriptionContext,
};
use tokio::task::AbortHandle;

use crate::resources::CONTEXT;

/// The resources a change touches: the briefing always, and the entity's own resource.
fn touched(event: &ChangeEvent) -> Vec<String> {
    let mut uris = vec![CONTEXT.to_owned()];
    let kind = match event.entity {
        EntityKind::Subscription => Some("subscriptions"),
        EntityKind::Charge => Some("charges"),
        EntityKind::Category => Some("categories"),
        EntityKind::PaymentMethod => Some("payment-methods"),
        EntityKind::Member
        | EntityKind::Account
        | EntityKind::Transaction
        | EntityKind::Label
        | EntityKind::Budget
        | EntityKind::Rule
        | EntityKind::Import
        | EntityKind::Household
        | EntityKind::Token
        | EntityKind::Destination
        | EntityKind::BankConnection
        | EntityKind::BankAccount
        | EntityKind::RecurringProposal => None,
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
        let mut feed = catalog.subscribe(&caller);
        let watched = uri.clone();
        let task = tokio::spawn(async move {
            while let Some(heard) = feed.next().await {
                let concerns_it = match &heard {
                    Heard::Change(event) => touched(event).contains(&watched),
                    Heard::Missed => true,
                };
                if concerns_it
                    && peer
                        .notify_resource_updated(ResourceUpdatedNotificationParam::new(
                            watched.clone(),
                        ))
                        .await
                        .is_err()
                {
                    return;
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

/// The feed of a `subscriptions/listen` between its acceptance and its stream: the SDK asks
/// what to accept before it hands over the request, so the feed is opened then and bound to
/// the caller when the stream starts.
#[derive(Clone, Default)]
pub(crate) struct PendingListen(Arc<Mutex<Option<UnboundFeed>>>);

impl PendingListen {
    /// Subscribes now, before the acknowledgement goes out.
    pub(crate) fn prepare(&self, catalog: &dyn Catalog) {
        if let Ok(mut pending) = self.0.lock() {
            *pending = Some(catalog.subscribe_unbound());
        }
    }

    /// The feed `prepare` opened, for `caller`; a fresh one if two listens on one stdio
    /// session raced.
    pub(crate) fn take(&self, catalog: &dyn Catalog, caller: &Caller) -> ChangeFeed {
        match self.0.lock().ok().and_then(|mut pending| pending.take()) {
            Some(feed) => feed.bind(caller.clone()),
            None => catalog.subscribe(caller),
        }
    }
}

/// Serves one 2026 `subscriptions/listen` stream until the client cancels it.
pub(crate) async fn listen(mut feed: ChangeFeed, context: SubscriptionContext) {
    let accepted = context.accepted().clone();
    let watched = accepted.resource_subscriptions.clone().unwrap_or_default();
    let list_changes = accepted.resources_list_changed == Some(true);
    loop {
        let heard = tokio::select! {
            () = context.cancelled() => return,
            heard = feed.next() => heard,
        };
        let (uris, list_changed) = match heard {
            Some(Heard::Change(event)) => {
                let list_changed = event.entity == EntityKind::Subscription;
                (touched(&event), list_changed)
            }
            // Some events were dropped: whatever is watched may have changed.
            Some(Heard::Missed) => (watched.clone(), true),
            None => return,
        };
        for uri in uris.into_iter().filter(|uri| watched.contains(uri)) {
            if context.sink().notify_resource_updated(uri).await.is_err() {
                return;
            }
        }
        if list_changes
            && list_changed
            && context.sink().notify_resource_list_changed().await.is_err()
        {
            return;
        }
    }
}
