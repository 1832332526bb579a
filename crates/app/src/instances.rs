//! Instances of Exhale on one database: what they tell each other, and which of them runs the
//! background work.
//!
//! A write's change events go to this instance's listeners at once and, through the database
//! (`store::Db::notify`, delivered when the write commits), to every other instance's: a
//! page, an MCP subscription or the assistant served by another instance hears of the change
//! too, and a token revoked on one is forgotten by the others' caches. On SQLite there is one
//! instance and nothing to tell.

use std::sync::{Arc, Weak};

use domain::entities::EntityKind;
use ops::ChangeEvent;
use serde::{Deserialize, Serialize};
use store::{Db, StoreError};

use crate::App;

/// The channel change events travel on between instances.
const CHANNEL: &str = "exhale_changes";

/// The most a notification carries: PostgreSQL refuses payloads of 8000 bytes and more, so
/// a write's events are sent in parts below that.
const MOST_BYTES: usize = 7_000;

/// What one notification says: which instance wrote, and some of the write's events.
#[derive(Serialize, Deserialize)]
struct Told {
    from: String,
    events: Vec<Event>,
}

/// A change event as it travels.
#[derive(Serialize, Deserialize)]
struct Event {
    household_id: i64,
    entity: EntityKind,
    entity_id: i64,
    op: String,
    audit_id: Option<i64>,
    private_to: Option<i64>,
}

impl From<&ChangeEvent> for Event {
    fn from(event: &ChangeEvent) -> Self {
        Self {
            household_id: event.household_id,
            entity: event.entity,
            entity_id: event.entity_id,
            op: event.op.to_owned(),
            audit_id: event.audit_id,
            private_to: event.private_to,
        }
    }
}

/// Tells the other instances of `events` when the write they come from commits.
pub(crate) fn tell(db: &Db<'_>, from: &str, events: &[ChangeEvent]) -> Result<(), StoreError> {
    let corrupt = |err: serde_json::Error| StoreError::Corrupt(err.to_string());
    let mut part = Told { from: from.to_owned(), events: Vec::new() };
    let mut bytes = 0;
    for event in events {
        let event = Event::from(event);
        let size = serde_json::to_string(&event).map_err(corrupt)?.len() + 1;
        if bytes + size > MOST_BYTES && !part.events.is_empty() {
            db.notify(CHANNEL, &serde_json::to_string(&part).map_err(corrupt)?)?;
            part.events.clear();
            bytes = 0;
        }
        part.events.push(event);
        bytes += size;
    }
    if !part.events.is_empty() {
        db.notify(CHANNEL, &serde_json::to_string(&part).map_err(corrupt)?)?;
    }
    Ok(())
}

/// The events another instance told of; none for this instance's own, which its listeners
/// heard at once, nor for an op this instance does not know (a newer one's, mid-upgrade).
fn heard(payload: &str, this: &str) -> Vec<ChangeEvent> {
    let Ok(told) = serde_json::from_str::<Told>(payload) else {
        tracing::warn!("another instance told of changes in a form this one does not read");
        return Vec::new();
    };
    if told.from == this {
        return Vec::new();
    }
    told.events
        .into_iter()
        .filter_map(|event| {
            Some(ChangeEvent {
                household_id: event.household_id,
                entity: event.entity,
                entity_id: event.entity_id,
                op: ops::find(&event.op)?.name(),
                audit_id: event.audit_id,
                private_to: event.private_to,
            })
        })
        .collect()
}

impl App {
    /// Passes the changes other instances make to this one's listeners, until the handle is
    /// dropped.
    pub fn hear_other_instances(self: &Arc<Self>) -> store::Background {
        let app: Weak<Self> = Arc::downgrade(self);
        self.store.listen(CHANNEL, move |payload| {
            let Some(app) = app.upgrade() else { return };
            let events = heard(&payload, &app.instance);
            if events.is_empty() {
                return;
            }
            app.after_changes(events);
        })
    }

    /// Whether this instance leads the background work (due charges, reminders and their
    /// delivery, chat bots), as it changes: one instance on a database leads, and another
    /// takes over when it stops. Until the handle is dropped.
    pub fn lead(&self) -> (store::Background, tokio::sync::watch::Receiver<bool>) {
        let (leading, watch) = tokio::sync::watch::channel(false);
        let background = self.store.lead(move |now| {
            tracing::info!(leading = now, "background work");
            leading.send_replace(now);
        });
        (background, watch)
    }

    /// What follows a change, whichever instance made it: listeners hear of it, credentials it
    /// touched are read again, and the outbox looks for what it planned.
    pub(crate) fn after_changes(&self, events: Vec<ChangeEvent>) {
        if events.iter().any(|e| matches!(e.entity, EntityKind::Token | EntityKind::Member)) {
            self.tokens.clear();
        }
        for event in events {
            let _ = self.events.send(event);
        }
        self.outbox_wake.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(id: i64) -> ChangeEvent {
        ChangeEvent {
            household_id: 1,
            entity: EntityKind::Subscription,
            entity_id: id,
            op: "update_subscription",
            audit_id: Some(id),
            private_to: None,
        }
    }

    #[test]
    fn what_is_told_is_heard_by_the_others_and_not_by_the_teller() {
        let told = Told { from: "a".into(), events: vec![Event::from(&event(7))] };
        let payload = serde_json::to_string(&told).unwrap();
        let heard_by_b = heard(&payload, "b");
        assert_eq!(heard_by_b.len(), 1);
        assert_eq!((heard_by_b[0].entity_id, heard_by_b[0].op), (7, "update_subscription"));
        assert!(heard(&payload, "a").is_empty());
        assert!(heard("not json", "b").is_empty());
    }
}
