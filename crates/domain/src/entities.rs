//! Plain entity enums shared by every crate, with their stable lower-case names (declared with
//! [`named_enum!`](crate::named_enum)): what the database stores and what every API shows.

use crate::named_enum;

named_enum! {
    /// A member's role in a household.
    pub enum Role("role") {
        /// Manages the household, its members and channels.
        Owner => "owner",
        /// Uses the household.
        Member => "member",
    }
}

named_enum! {
    /// Where a subscription stands.
    pub enum SubscriptionStatus("subscription status") {
        /// In a free trial; the first charge is the trial's end date.
        Trial => "trial",
        /// Charging normally.
        Active => "active",
        /// Paused: no charges while paused.
        Paused => "paused",
        /// Cancelled: no charges after the end date.
        Cancelled => "cancelled" | "canceled",
    }
}

named_enum! {
    /// Who can see a subscription or payment method.
    pub enum Visibility("visibility") {
        /// Everyone in the household.
        Household => "household",
        /// Only its owner; "not found" for everyone else.
        Private => "private",
    }
}

named_enum! {
    /// What happened to a past charge.
    pub enum ChargeStatus("charge status") {
        /// Paid (the default).
        Paid => "paid",
        /// Skipped: no money left.
        Skipped => "skipped",
        /// The payment failed.
        Failed => "failed",
        /// Paid, then refunded.
        Refunded => "refunded",
    }
}

named_enum! {
    /// Who made a change, as recorded in the audit log.
    pub enum ActorKind("kind of actor") {
        /// A person, through the web, CLI or a chat channel.
        Person => "person",
        /// An external agent using a token (MCP or REST).
        Agent => "agent",
        /// The built-in assistant.
        Assistant => "assistant",
        /// The app itself (background jobs).
        System => "system",
    }
}

named_enum! {
    /// What an account is.
    pub enum AccountKind("kind of account") {
        /// A current account for everyday money.
        Checking => "checking" | "current",
        /// A savings account.
        Savings => "savings",
        /// A credit card: what it shows is owed.
        CreditCard => "credit_card" | "card",
        /// Notes and coins.
        Cash => "cash",
        /// Shares, funds, a pension.
        Investment => "investment",
        /// A loan or mortgage: what it shows is owed.
        Loan => "loan" | "mortgage",
        /// A home, a car: what it is worth.
        Property => "property",
    }
}

named_enum! {
    /// What a payment method is.
    pub enum PaymentMethodKind("kind of payment method") {
        /// A debit or credit card.
        Card => "card",
        /// A bank account (direct debit).
        BankAccount => "bank_account",
        /// A PayPal account.
        Paypal => "paypal",
        /// A wallet such as Apple Pay or Google Pay.
        Wallet => "wallet",
        /// Anything else.
        Other => "other",
    }
}

named_enum! {
    /// The first day of the household's week.
    pub enum WeekStart("week start") {
        /// Monday.
        Monday => "monday",
        /// Sunday.
        Sunday => "sunday",
    }
}

named_enum! {
    /// The kinds of entity a change can touch, as audit entries and change events name them.
    pub enum EntityKind("kind of entity") {
        /// A subscription, with its tags, prices and pauses.
        Subscription => "subscription",
        /// A recorded charge.
        Charge => "charge",
        /// A category.
        Category => "category",
        /// A payment method.
        PaymentMethod => "payment_method",
        /// A member of the household.
        Member => "member",
        /// The household and its settings.
        Household => "household",
        /// An API token.
        Token => "token",
        /// A place a member's reminders and messages go.
        Destination => "destination",
        /// A bank, card, cash or other account, with its balances.
        Account => "account",
        /// A transaction on an account, with its labels and splits.
        Transaction => "transaction",
        /// A label on transactions.
        Label => "label",
        /// A statement loaded into an account, with the transactions it added.
        Import => "import",
        /// A budget, with what it tracks and its amounts.
        Budget => "budget",
        /// A rule for categorising and labelling transactions.
        Rule => "rule",
        /// A bank connection, never its credentials.
        BankConnection => "bank_connection",
        /// An account a bank connection brings, and the Exhale account it goes into.
        BankAccount => "bank_account",
        /// A recurring charge a bank sync noticed, and whether it was dismissed.
        RecurringProposal => "recurring_proposal",
    }
}

named_enum! {
    /// What a change did to its entity.
    pub enum ChangeAction("change action") {
        /// It did not exist before.
        Created => "created",
        /// It changed.
        Updated => "updated",
        /// It is gone.
        Deleted => "deleted",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for v in Role::ALL {
            assert_eq!(Role::parse(v.as_str()), Some(*v));
        }
        for v in SubscriptionStatus::ALL {
            assert_eq!(SubscriptionStatus::parse(v.as_str()), Some(*v));
        }
        for v in Visibility::ALL {
            assert_eq!(Visibility::parse(v.as_str()), Some(*v));
        }
        for v in ChargeStatus::ALL {
            assert_eq!(ChargeStatus::parse(v.as_str()), Some(*v));
        }
        for v in ActorKind::ALL {
            assert_eq!(ActorKind::parse(v.as_str()), Some(*v));
        }
    }

    #[test]
    fn names() {
        assert_eq!(Role::Owner.as_str(), "owner");
        assert_eq!(SubscriptionStatus::Cancelled.to_string(), "cancelled");
        assert_eq!(Visibility::Private.as_str(), "private");
        assert_eq!(ChargeStatus::Refunded.as_str(), "refunded");
        assert_eq!(ActorKind::Assistant.as_str(), "assistant");
        assert_eq!(ActorKind::parse(" System "), Some(ActorKind::System));
        assert_eq!(ChargeStatus::parse("PAID"), Some(ChargeStatus::Paid));
        assert_eq!(Role::parse("admin"), None);
        assert_eq!(SubscriptionStatus::parse(""), None);
        assert_eq!(SubscriptionStatus::ALL.len(), 4);
        assert_eq!(PaymentMethodKind::parse("Bank account"), Some(PaymentMethodKind::BankAccount));
        assert_eq!(SubscriptionStatus::parse("canceled"), Some(SubscriptionStatus::Cancelled));
    }

    #[test]
    fn wire_form_names_the_allowed_values() {
        let status: SubscriptionStatus = serde_json::from_str("\"Paused\"").unwrap();
        assert_eq!(status, SubscriptionStatus::Paused);
        assert_eq!(serde_json::to_string(&status).unwrap(), "\"paused\"");
        let err = serde_json::from_str::<SubscriptionStatus>("\"asleep\"").unwrap_err();
        assert!(
            err.to_string().starts_with(
                "\"asleep\" is not a subscription status; use trial, active, paused or cancelled"
            ),
            "{err}"
        );
        let err = serde_json::from_str::<Visibility>("3").unwrap_err();
        assert!(err.to_string().contains("expected a visibility: household or private"), "{err}");
        let schema = schemars::schema_for!(ChargeStatus);
        assert_eq!(
            schema.get("enum").unwrap(),
            &serde_json::json!(["paid", "skipped", "failed", "refunded"])
        );
    }
}
