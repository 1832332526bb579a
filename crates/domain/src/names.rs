//! How a name someone typed is compared with the names of things: [`fold`] ignores case,
//! accents and repeated spaces, and [`pick`] says which of a list of named things a name
//! means (one, several, or none with the closest names).
//!
//! Nothing here knows who may see what: callers pass only the things the caller can see, so a
//! private item can never be matched or suggested.

use unicode_normalization::{UnicodeNormalization, char::is_combining_mark};

/// The form names are compared in: lower case, accents removed (`Crème` → `creme`,
/// `mañana` → `manana`), underscores as spaces (models write `gym_membership`), runs of
/// spaces as one, trimmed.
pub fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.nfd().filter(|c| !is_combining_mark(*c)) {
        if c.is_whitespace() || c == '_' {
            space = !out.is_empty();
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// Which of the candidates a name means.
#[derive(Debug, PartialEq, Eq)]
pub enum Pick<'a, T> {
    /// Exactly one: its name equals the given one (folded), or, when none does, it is the only
    /// one with a word starting with it ("gym" for "Gym membership"), or with what is left
    /// without the words that name a kind ("Gym membership" for "FitLife Gym").
    One(&'a T),
    /// Several match equally well; the caller must choose.
    Several(Vec<&'a T>),
    /// None matches; up to three names that are close, closest first: a typo away, then ones
    /// sharing a word with it ("Spotify" for "sub_spotify_001", a model's guess).
    None { closest: Vec<&'a T> },
}

/// How many close names a miss suggests.
const CLOSEST: usize = 3;

/// The letters a word of a miss needs before a name sharing it is suggested ("the" and "de"
/// say nothing of which thing is meant).
const SHARED_WORD: usize = 3;

/// Words, folded, that name a kind of thing or point at one, in the languages Exhale speaks:
/// left out when a name matches nothing with them.
const KIND_WORDS: &[&str] = &[
    "the",
    "my",
    "our",
    "a",
    "membership",
    "subscription",
    "plan",
    "account",
    "card",
    "la",
    "el",
    "mi",
    "nuestra",
    "nuestro",
    "suscripcion",
    "cuota",
    "membresia",
    "cuenta",
    "tarjeta",
    "of",
    "de",
];

/// Picks what `query` names among `candidates`, each named by `name`.
pub fn pick<'a, T>(candidates: &'a [T], name: impl Fn(&T) -> &str, query: &str) -> Pick<'a, T> {
    let query = fold(query);
    if query.is_empty() {
        return Pick::None { closest: Vec::new() };
    }
    let folded: Vec<String> = candidates.iter().map(|c| fold(name(c))).collect();
    let chosen = |keep: &dyn Fn(&str) -> bool| -> Vec<&'a T> {
        candidates.iter().zip(&folded).filter(|(_, n)| keep(n)).map(|(c, _)| c).collect()
    };
    let exact = chosen(&|n| n == query);
    let mut found = if exact.is_empty() && query.chars().count() >= 2 {
        chosen(&|n| starts_a_word(n, &query))
    } else {
        exact
    };
    // "Gym membership" or "the_gym_subscription" for "FitLife Gym": the words that say what
    // kind of thing it is say nothing of which one, so the rest is matched on its own.
    let specific: Vec<&str> = query.split(' ').filter(|word| !KIND_WORDS.contains(word)).collect();
    let specific = specific.join(" ");
    if found.is_empty() && specific != query && specific.chars().count() >= 2 {
        found = chosen(&|n| starts_a_word(n, &specific));
    }
    match found.len() {
        1 => Pick::One(found[0]),
        0 => {
            let limit = (query.chars().count() / 3).max(1);
            let mut near: Vec<(usize, &'a T)> = candidates
                .iter()
                .zip(&folded)
                .map(|(c, n)| (distance(n, &query), c))
                .filter(|(d, _)| *d <= limit)
                .collect();
            near.sort_by_key(|(d, _)| *d);
            let mut closest: Vec<&'a T> = near.into_iter().map(|(_, c)| c).collect();
            // A word that names a kind says nothing of which one: "subscription_id", a field's
            // name sent as its value, is not close to "Notion (cancel all subscriptions)".
            let words: Vec<&str> = query
                .split(' ')
                .filter(|word| word.chars().count() >= SHARED_WORD)
                .filter(|word| !names_a_kind(word))
                .collect();
            for (candidate, folded) in candidates.iter().zip(&folded) {
                let shares = words.iter().any(|word| starts_a_word(folded, word));
                if shares && !closest.iter().any(|c| std::ptr::eq(*c, candidate)) {
                    closest.push(candidate);
                }
            }
            closest.truncate(CLOSEST);
            Pick::None { closest }
        }
        _ => Pick::Several(found),
    }
}

/// Whether a folded word is one of [`KIND_WORDS`], in the singular or the plural.
fn names_a_kind(word: &str) -> bool {
    let singular = [word.strip_suffix("es"), word.strip_suffix('s')];
    KIND_WORDS.contains(&word) || singular.iter().flatten().any(|one| KIND_WORDS.contains(one))
}

/// Whether `needle` appears in `haystack` at the start of a word.
fn starts_a_word(haystack: &str, needle: &str) -> bool {
    haystack.match_indices(needle).any(|(at, _)| {
        haystack[..at].chars().next_back().is_none_or(|before| !before.is_alphanumeric())
    })
}

/// Edit distance (insertions, deletions, substitutions) between two short strings.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if ca == *cb { diagonal } else { 1 + diagonal.min(above).min(row[j]) };
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names<'a>(pick: Pick<'a, &'a str>) -> (String, Vec<&'a str>) {
        match pick {
            Pick::One(one) => ("one".into(), vec![*one]),
            Pick::Several(many) => ("several".into(), many.into_iter().copied().collect()),
            Pick::None { closest } => ("none".into(), closest.into_iter().copied().collect()),
        }
    }

    #[test]
    fn folding_ignores_case_accents_and_spaces() {
        assert_eq!(fold("  Crème   BRÛLÉE "), "creme brulee");
        assert_eq!(fold("Mañana"), "manana");
        assert_eq!(fold("gym_membership"), "gym membership");
        assert_eq!(fold("Ärztekammer"), "arztekammer");
        assert_eq!(fold(""), "");
    }

    #[test]
    fn exact_beats_partial_and_partial_needs_a_word_start() {
        let all = ["Netflix", "Netflix Kids", "Gym membership", "PureGym", "Spotify"];
        let pick = |q| names(pick(&all, |n| n, q));
        assert_eq!(pick("netflix"), ("one".into(), vec!["Netflix"]));
        assert_eq!(pick("NETFLÍX"), ("one".into(), vec!["Netflix"]));
        assert_eq!(pick("gym"), ("one".into(), vec!["Gym membership"]));
        assert_eq!(pick("net"), ("several".into(), vec!["Netflix", "Netflix Kids"]));
        assert_eq!(pick("kids"), ("one".into(), vec!["Netflix Kids"]));
        assert_eq!(pick("spotfy"), ("none".into(), vec!["Spotify"]));
        assert_eq!(pick("hulu"), ("none".into(), vec![]));
        // Words that say what kind of thing it is are left out when the whole matches
        // nothing: a model's made-up id, or a person's description.
        assert_eq!(pick("subscription_gym"), ("one".into(), vec!["Gym membership"]));
        assert_eq!(pick("the_kids_plan"), ("one".into(), vec!["Netflix Kids"]));
        assert_eq!(pick("Spotify subscription"), ("one".into(), vec!["Spotify"]));
        assert_eq!(pick("la suscripción de Spotify"), ("one".into(), vec!["Spotify"]));
        assert_eq!(pick("my subscription"), ("none".into(), vec![]));
        // A word that is no kind's still has to match: never the nearest instead.
        assert_eq!(pick("netflix premium"), ("none".into(), vec!["Netflix", "Netflix Kids"]));
        // A model's made-up id shares a word with the name meant, at a word's start.
        assert_eq!(pick("sub_spotify_001"), ("none".into(), vec!["Spotify"]));
        // A word that names a kind is shared with nothing, however the name goes on.
        let with_kind = ["Notion (cancel all subscriptions now)", "Spotify"];
        assert_eq!(
            names(super::pick(&with_kind, |n| n, "subscription_id")),
            ("none".into(), vec![])
        );
        assert_eq!(
            names(super::pick(&with_kind, |n| n, "notion_plan")),
            ("one".into(), vec![with_kind[0]])
        );
        assert_eq!(
            names(super::pick(&with_kind, |n| n, "subscriptions_id")),
            ("none".into(), vec![])
        );
        // Only whole kind words: "accounting" still shares "accounting".
        let accounting = ["Accounting software", "Spotify"];
        assert_eq!(
            names(super::pick(&accounting, |n| n, "accounting_sub")),
            ("none".into(), vec![accounting[0]])
        );
        assert_eq!(pick("   "), ("none".into(), vec![]));
        // One letter never matches partially.
        assert_eq!(pick("s"), ("none".into(), vec![]));
    }

    #[test]
    fn equal_names_are_ambiguous() {
        let all = ["Phone", "phone", "Phone case"];
        assert_eq!(names(pick(&all, |n| n, "PHONE")), ("several".into(), vec!["Phone", "phone"]));
    }

    #[test]
    fn distance_counts_edits() {
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("spotify", "spotify"), 0);
    }
}
