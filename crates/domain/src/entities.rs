//! Plain entity enums shared by every crate, with their stable lower-case names.
//!
//! The names are what the database stores and what every API shows; `parse` accepts them
//! in any case, ignoring surrounding whitespace.

use std::fmt;

/// Generates `ALL`, `as_str`, `parse` and `Display` for a fieldless enum.
macro_rules! named_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The stable lower-case name.
            pub fn as_str(&self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// Parses the name, in any case, ignoring surrounding whitespace.
            pub fn parse(s: &str) -> Option<$name> {
                let s = s.trim();
                $name::ALL.iter().copied().find(|v| v.as_str().eq_ignore_ascii_case(s))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

named_enum! {
    /// A member's role in a household.
    Role {
        /// Manages the household, its members and channels.
        Owner => "owner",
        /// Uses the household.
        Member => "member",
    }
}

named_enum! {
    /// Where a subscription stands.
    SubscriptionStatus {
        /// In a free trial; the first charge is the trial's end date.
        Trial => "trial",
        /// Charging normally.
        Active => "active",
        /// Paused: no charges while paused.
        Paused => "paused",
        /// Cancelled: no charges after the end date.
        Cancelled => "cancelled",
    }
}

named_enum! {
    /// Who can see a subscription or payment method.
    Visibility {
        /// Everyone in the household.
        Household => "household",
        /// Only its owner; "not found" for everyone else.
        Private => "private",
    }
}

named_enum! {
    /// What happened to a past charge.
    ChargeStatus {
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
    ActorKind {
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
    }
}
