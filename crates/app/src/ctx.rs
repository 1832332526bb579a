//! `Ctx`: what a handler gets. The transaction, the caller, the time, the household, and the
//! recorder that writes an audit entry for every entity a write changes.

use domain::{
    Date, Text,
    entities::{ActorKind, ChangeAction, EntityKind, Visibility},
};
use jiff::Timestamp;
use ops::{Actor, Caller, ChangeEvent, OpError, common::Change};
use serde_json::Value;
use store::{Db, households::HouseholdRow, snapshot};

use crate::transactions::StoreExt;

pub(crate) struct Ctx<'a> {
    pub(crate) db: &'a Db<'a>,
    /// The store itself, only for [`Ctx::directory`]: names in the input are read on a
    /// connection of their own while it is deserialised.
    store: std::sync::Arc<store::Store>,
    pub(crate) caller: &'a Caller,
    pub(crate) now: Timestamp,
    pub(crate) today: Date,
    pub(crate) household: HouseholdRow,
    pub(crate) op: &'static str,
    pub(crate) batch_id: String,
    pub(crate) changes: Vec<Change>,
    pub(crate) events: Vec<ChangeEvent>,
    /// The input as it was read, names as ids and phrases as dates, when it held any: a
    /// confirmation stores this, so applying it does exactly what the preview showed.
    pub(crate) resolved_input: Option<Value>,
    /// Set by undo: the entry being reverted, recorded as `undo_of`.
    pub(crate) undo_of: Option<i64>,
    /// How large the household may grow (from the server's configuration).
    pub(crate) caps: crate::limits::HouseholdCaps,
    /// The assistant's provider fields the server's environment sets.
    pub(crate) assistant_env: ops::assistant::ProviderFields,
    /// What reads a statement's PDF, and the PDF of this call's input already read by it,
    /// before the transaction began (`invoke.rs`): a PDF may take seconds, which no
    /// transaction should wait for.
    pub(crate) pdf: crate::statements::PdfReading,
    /// What the bank gave a link or a sync before the transaction began (`bank_calls.rs`).
    pub(crate) bank: Option<crate::bank_calls::Prefetched>,
    /// The caller's visible subscriptions, loaded once per call by the reports that all need
    /// them; dropped whenever the call records a change.
    pub(crate) visible:
        std::cell::RefCell<Option<std::sync::Arc<Vec<store::subscriptions::SubscriptionRow>>>>,
}

impl<'a> Ctx<'a> {
    /// A sentence of this call's output, in the language its caller reads it in (English
    /// for agents).
    pub(crate) fn say(&self, text: &Text) -> String {
        i18n::say(self.caller.language, text)
    }

    /// A sentence the database keeps as a [`Text`] in JSON (a bank connection's problem), in
    /// this call's language; anything else as it is.
    pub(crate) fn say_stored(&self, stored: &str) -> String {
        match serde_json::from_str::<Text>(stored) {
            Ok(text) => self.say(&text),
            Err(_) => stored.to_owned(),
        }
    }

    /// An op's amount as this call's caller writes it (`€12.99`, `12,99 €`).
    pub(crate) fn money(&self, amount: &ops::common::Amount) -> String {
        i18n::format::amount(self.caller.language, amount.amount, amount.currency.currency())
    }

    /// The context of `op` called by `caller` in a transaction on `db`, with the caller's
    /// household read from it.
    pub(crate) fn open(
        db: &'a Db<'a>,
        store: std::sync::Arc<store::Store>,
        caller: &'a Caller,
        now: Timestamp,
        op: &'static str,
        batch_id: String,
    ) -> Result<Self, OpError> {
        let household = store::households::get_household(db, caller.household_id).or_internal()?;
        Ok(Self {
            db,
            store,
            caller,
            now,
            today: crate::clock::today_in(&household, now),
            household,
            op,
            batch_id,
            changes: Vec::new(),
            events: Vec::new(),
            resolved_input: None,
            undo_of: None,
            visible: Default::default(),
            caps: crate::limits::HouseholdCaps::default(),
            assistant_env: ops::assistant::ProviderFields::default(),
            pdf: crate::statements::PdfReading::default(),
            bank: None,
        })
    }

    /// Refuses a write that would take the household past its cap on `what`.
    pub(crate) fn check_cap(
        &self,
        what: store::households::Counted,
        adding: usize,
    ) -> Result<(), OpError> {
        let has = store::households::count(self.db, self.household_id(), what)
            .map_err(crate::transactions::internal)?;
        self.caps.check(what, has, adding)
    }

    /// What the caller can see and today's date, for reading names and relative dates in the
    /// input (`ops::resolve`) of an op that changes something or only reads.
    pub(crate) fn directory(&self, for_a_change: bool) -> Box<dyn ops::resolve::Directory> {
        Box::new(crate::directory::CallerDirectory {
            store: self.store.clone(),
            household_id: self.household_id(),
            viewer: self.me(),
            today: self.today,
            for_a_change,
        })
    }

    /// The refusal of an id of `kind` this caller cannot see, with the names they can
    /// (`ops::resolve::unknown_id`). One that cannot read the names still refuses.
    pub(crate) fn unknown(&self, kind: EntityKind, id: i64) -> Text {
        let visible = store::names::visible(self.db, self.household_id(), self.me(), kind)
            .unwrap_or_default();
        ops::resolve::unknown_id(kind, id, &visible)
    }

    pub(crate) fn household_id(&self) -> i64 {
        self.caller.household_id
    }

    pub(crate) fn me(&self) -> i64 {
        self.caller.member_id
    }

    /// RFC 3339 UTC timestamp of this call, as stored.
    pub(crate) fn now_text(&self) -> String {
        crate::clock::timestamp_text(self.now)
    }

    /// Every subscription the caller can see, with tags, prices and pauses.
    pub(crate) fn visible_subscriptions(
        &self,
    ) -> Result<std::sync::Arc<Vec<store::subscriptions::SubscriptionRow>>, OpError> {
        if let Some(rows) = self.visible.borrow().as_ref() {
            return Ok(rows.clone());
        }
        let rows = std::sync::Arc::new(
            store::subscriptions::list(self.db, self.household_id(), Some(self.me()))
                .or_internal()?,
        );
        *self.visible.borrow_mut() = Some(rows.clone());
        Ok(rows)
    }

    /// The entity's current state, for `record` later.
    pub(crate) fn snapshot(&self, entity: EntityKind, id: i64) -> Result<Option<Value>, OpError> {
        snapshot::snapshot(self.db, self.household_id(), entity.as_str(), id).or_internal()
    }

    /// Writes an audit entry for an entity whose state was `before` and is now whatever the
    /// database holds. Nothing is recorded when nothing changed.
    pub(crate) fn record(
        &mut self,
        entity: EntityKind,
        id: i64,
        before: Option<Value>,
        summary: Text,
    ) -> Result<(), OpError> {
        self.visible.borrow_mut().take();
        // Still there afterwards, so what a deletion keeps is not stored (`stored_state`).
        let after = snapshot::snapshot_in_place(self.db, self.household_id(), entity.as_str(), id)
            .or_internal()?;
        let unchanged = match (&before, &after) {
            (Some(b), Some(a)) => {
                snapshot::comparable(entity.as_str(), b).or_internal()?
                    == snapshot::comparable(entity.as_str(), a).or_internal()?
            }
            (None, None) => true,
            _ => false,
        };
        if unchanged {
            return Ok(());
        }
        let action = match (&before, &after) {
            (None, _) => ChangeAction::Created,
            (_, None) => ChangeAction::Deleted,
            _ => ChangeAction::Updated,
        };
        let private_to =
            self.private_to(entity, before.as_ref()).or(self.private_to(entity, after.as_ref()));
        let deleted = after.is_none();
        if let Some(owner) = self.private_to(entity, after.as_ref())
            && self.private_to(entity, before.as_ref()).is_none()
            && before.is_some()
        {
            // What was shared is now private: its history becomes its owner's alone too.
            store::audit::make_private(self.db, self.household_id(), entity.as_str(), id, owner)
                .or_internal()?;
        }
        let (actor_kind, token_id, token_name, client_name) = match &self.caller.actor {
            Actor::Person => (ActorKind::Person, None, None, None),
            Actor::Token { token_id, token_name, client_name, .. } => {
                (ActorKind::Agent, Some(*token_id), Some(token_name.clone()), client_name.clone())
            }
            Actor::Assistant => (ActorKind::Assistant, None, None, None),
            Actor::System => (ActorKind::System, None, None, None),
        };
        let row = store::audit::AuditRow {
            id: 0,
            household_id: self.household_id(),
            at: self.now_text(),
            actor_kind,
            member_id: Some(self.me()),
            member_name: None,
            token_id,
            token_name,
            client_name,
            via: self.caller.via.as_str().into(),
            op: self.op.into(),
            entity,
            entity_id: id,
            action,
            summary: serde_json::to_string(&summary).map_err(|_| OpError::Internal)?,
            before_state: before.map(|v| stored_state(v, deleted)),
            after_state: after.map(|v| stored_state(v, deleted)),
            batch_id: self.batch_id.clone(),
            private_to,
            undone_by: None,
            undo_of: self.undo_of,
        };
        let audit_id = store::audit::insert(self.db, &row).or_internal()?;
        self.changes.push(Change {
            audit_id: Some(audit_id),
            entity,
            entity_id: id,
            action,
            summary: self.say(&summary),
        });
        self.events.push(ChangeEvent {
            household_id: self.household_id(),
            entity,
            entity_id: id,
            op: self.op,
            audit_id: Some(audit_id),
            private_to,
        });
        Ok(())
    }

    /// Only this member may see changes to a private subscription or payment method, or to
    /// their own tokens.
    pub(crate) fn private_to(&self, entity: EntityKind, state: Option<&Value>) -> Option<i64> {
        let row = state?.get("row")?;
        match entity {
            EntityKind::Subscription | EntityKind::PaymentMethod => {
                (row.get("visibility")?.as_str()? == Visibility::Private.as_str())
                    .then(|| row.get("owner_id")?.as_i64())
                    .flatten()
            }
            EntityKind::Token | EntityKind::Destination => row.get("member_id")?.as_i64(),
            EntityKind::Charge => {
                let subscription = row.get("subscription_id")?.as_i64()?;
                let state = self.snapshot(EntityKind::Subscription, subscription).ok()??;
                self.private_to(EntityKind::Subscription, Some(&state))
            }
            EntityKind::Account => (row.get("visibility")?.as_str()?
                == Visibility::Private.as_str())
            .then(|| row.get("owner_id")?.as_i64())
            .flatten(),
            EntityKind::BankConnection => (row.get("visibility")?.as_str()?
                == Visibility::Private.as_str())
            .then(|| row.get("member_id")?.as_i64())
            .flatten(),
            EntityKind::BankAccount => {
                let connection = row.get("connection_id")?.as_i64()?;
                let state = self.snapshot(EntityKind::BankConnection, connection).ok()??;
                self.private_to(EntityKind::BankConnection, Some(&state))
            }
            EntityKind::Transaction
            | EntityKind::Import
            | EntityKind::Rule
            | EntityKind::RecurringProposal => {
                let account = row.get("account_id")?.as_i64()?;
                let state = self.snapshot(EntityKind::Account, account).ok()??;
                self.private_to(EntityKind::Account, Some(&state))
            }
            EntityKind::Category
            | EntityKind::Label
            | EntityKind::Budget
            | EntityKind::Member
            | EntityKind::Household => None,
        }
    }
}

/// A snapshot as the audit table keeps it: the rows an undo needs to bring back only when the
/// entity was deleted (a subscription's charges), so entries of everyday edits stay small.
fn stored_state(mut state: Value, deleted: bool) -> String {
    if !deleted && let Value::Object(map) = &mut state {
        map.remove("kept");
    }
    state.to_string()
}
