//! The categories seeded into a new household.

/// A category every new household starts with (names are unique ignoring case).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DefaultCategory {
    /// The category name, in English.
    pub name: &'static str,
    /// One emoji.
    pub emoji: &'static str,
    /// A colour as "#rrggbb".
    pub colour: &'static str,
}

const fn cat(name: &'static str, emoji: &'static str, colour: &'static str) -> DefaultCategory {
    DefaultCategory { name, emoji, colour }
}

/// The default categories, in display order; "Other" comes last.
pub const DEFAULT_CATEGORIES: &[DefaultCategory] = &[
    cat("Streaming", "📺", "#e50914"),
    cat("Music", "🎵", "#1db954"),
    cat("Software", "💻", "#4f46e5"),
    cat("Cloud & storage", "☁️", "#0ea5e9"),
    cat("News & magazines", "📰", "#64748b"),
    cat("Phone & internet", "📱", "#14b8a6"),
    cat("Utilities", "💡", "#f59e0b"),
    cat("Insurance", "🛡️", "#0f766e"),
    cat("Fitness & health", "💪", "#ef4444"),
    cat("Gaming", "🎮", "#8b5cf6"),
    cat("Education", "🎓", "#2563eb"),
    cat("Shopping & memberships", "🛍️", "#ec4899"),
    cat("Other", "📦", "#78716c"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::normalise_key;

    #[test]
    fn well_formed() {
        assert!(DEFAULT_CATEGORIES.len() >= 12);
        let mut keys: Vec<String> =
            DEFAULT_CATEGORIES.iter().map(|c| normalise_key(c.name)).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), DEFAULT_CATEGORIES.len(), "names must be unique ignoring case");
        for c in DEFAULT_CATEGORIES {
            assert_eq!(crate::validate::clean_line(c.name, 60).as_deref(), Ok(c.name));
            assert!(!c.emoji.is_empty());
            assert_eq!(c.colour.len(), 7, "{}", c.name);
            assert!(c.colour.starts_with('#'));
            assert!(
                c.colour[1..].bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
                "{}",
                c.name
            );
        }
        assert_eq!(DEFAULT_CATEGORIES.last().map(|c| c.name), Some("Other"));
    }
}
