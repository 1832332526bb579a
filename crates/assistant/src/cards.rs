//! The card a person confirms, written by Exhale from the op and the dry run's result: the
//! op's summary as the title, one line per change the dry run reported (Exhale's own
//! summaries, with the names as stored), and whether it deletes or ends something. The
//! model's sentence is kept beside it, never in it.

use ops::{
    OpInfo,
    assistant::{Card, ProposalStatus},
};
use serde_json::Value;

/// The longest model sentence kept beside a card.
const SAID_CHARS: usize = 500;

/// The summary of each change a dry run reported, in the words of the caller it ran for.
pub(crate) fn lines(preview: &Value) -> Vec<String> {
    preview
        .get("changes")
        .and_then(Value::as_array)
        .map(|changes| {
            changes
                .iter()
                .filter_map(|change| change.get("summary")?.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

pub(crate) fn card(
    info: &OpInfo,
    id: String,
    expires_at: String,
    preview: &Value,
    said: &str,
) -> Card {
    let lines = lines(preview);
    let said = said.trim();
    Card {
        id,
        op: info.name.to_owned(),
        title: info.summary.to_owned(),
        lines,
        destructive: info.hints.destructive,
        said: (!said.is_empty()).then(|| said.chars().take(SAID_CHARS).collect()),
        status: ProposalStatus::Pending,
        expires_at,
        audit_ids: Vec::new(),
    }
}
