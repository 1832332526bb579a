//! What the loop repairs in a small model's turn: a tool call written as text instead of
//! called is taken as the call, an answer that says nothing after the tools answered (empty,
//! or a chat template's own instruction echoed back) is asked for once more with the results
//! restated, and an answer that reports a change still waiting for the person as made is
//! not shown. Exhale cannot make a small model clever; it can stop its slips from reaching the
//! person.

use serde_json::Value;

/// Instructions chat templates append after a tool's result, which small models repeat as
/// their answer: the one `docs/guides/llama-server/qwen2.5-fenced-tools.jinja` adds, lower
/// case, without its punctuation.
const TEMPLATE_HINTS: &[&str] = &[
    "the tool results above answer my question reply to me in plain text now",
    "reply to me in plain text now",
    "answer the person s question now in plain text from the tool results above",
];

/// Words with which an answer reports a change as made, in English and Spanish.
const DONE_WORDS: &[&str] = &[
    "has been",
    "have been",
    "successfully",
    "is now",
    "are now",
    "i've ",
    "i have ",
    "done",
    "ha sido",
    "han sido",
    "se ha ",
    " he ",
    "listo",
    "hecho",
];

/// Words with which an answer says a change still waits for the person.
const WAITING_WORDS: &[&str] = &[
    "confirm",
    "not done",
    "tap",
    "waiting",
    "pending",
    "once you",
    "when you",
    "card",
    "toca",
    "tarjeta",
    "pendiente",
    "cuando",
];

/// The tool calls `text` is, when it is nothing but calls: JSON objects naming one of `names`
/// with their arguments (`{"name": …, "arguments": {…}}`, or `parameters`, or OpenAI's
/// `{"function": {…}}`), bare, in fenced blocks or inside tags such as `<tool_call>` or
/// `<tools>`. A reply with anything else in it is an answer, whatever objects it quotes: a
/// model quoting a name or a document that holds a call-shaped object is not calling it. The
/// arguments may be a JSON string of an object, as some models write them.
pub(crate) fn calls_in_text(text: &str, names: &[&str]) -> Vec<(String, Value)> {
    let mut calls = Vec::new();
    let mut rest = String::new();
    let mut from = 0;
    while let Some(start) = text[from..].find('{').map(|at| from + at) {
        rest.push_str(&text[from..start]);
        let mut values = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        let Some(call) = values.next().and_then(Result::ok).and_then(|v| as_call(&v, names)) else {
            return Vec::new();
        };
        calls.push(call);
        from = start + values.byte_offset();
    }
    rest.push_str(&text[from..]);
    if !only_wrapping(&rest) {
        return Vec::new();
    }
    calls
}

/// Whether what is left around the calls is only what wraps them: fences, tags, separators.
fn only_wrapping(rest: &str) -> bool {
    let mut left = rest.to_owned();
    for wrapper in ["```json", "```", "<tool_call>", "</tool_call>", "<tools>", "</tools>"] {
        left = left.replace(wrapper, "");
    }
    left.chars().all(|c| c.is_whitespace() || c == ',' || c == '[' || c == ']')
}

/// `value` as a call of one of `names`, if it is one.
fn as_call(value: &Value, names: &[&str]) -> Option<(String, Value)> {
    let object = value.get("function").filter(|f| f.is_object()).unwrap_or(value);
    let name = object.get("name")?.as_str()?;
    if !names.contains(&name) {
        return None;
    }
    let arguments = ["arguments", "parameters", "args"]
        .iter()
        .find_map(|key| object.get(*key))
        .cloned()
        .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
    let arguments = match arguments {
        Value::String(written) => serde_json::from_str(&written).ok()?,
        other => other,
    };
    arguments.is_object().then(|| (name.to_owned(), arguments))
}

/// Whether `text` tells the person nothing: empty, or only a template's instruction echoed.
pub(crate) fn says_nothing(text: &str) -> bool {
    let words: String = text
        .to_lowercase()
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let left = TEMPLATE_HINTS.iter().fold(words, |left, hint| left.replace(hint, ""));
    left.trim().is_empty()
}

/// Whether `text` reports a change as made without saying it waits for the person: said of a
/// change that waits for their tap, it is false ("Netflix has been paused").
pub(crate) fn claims_done(text: &str) -> bool {
    let text = format!(" {} ", text.to_lowercase());
    DONE_WORDS.iter().any(|words| text.contains(words))
        && !WAITING_WORDS.iter().any(|words| text.contains(words))
}

/// The message that asks once more for an answer, with what the tools said restated.
pub(crate) fn ask_again(results: &[String]) -> String {
    let mut message = String::from("You have not answered me yet. This is what the tools said:\n");
    for result in results {
        message.push_str("- ");
        message.push_str(result);
        message.push('\n');
    }
    message.push_str(
        "Answer my question from it now, in one or two plain sentences. Do not repeat these instructions.",
    );
    message
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const NAMES: &[&str] = &["pause_subscription", "list_subscriptions"];

    #[test]
    fn a_call_written_as_text_is_read_in_every_wrapping_small_models_use() {
        let pause = ("pause_subscription".to_owned(), json!({"id": "Disney+"}));
        for text in [
            r#"{"name": "pause_subscription", "arguments": {"id": "Disney+"}}"#,
            "```json\n{\"name\": \"pause_subscription\", \"arguments\": {\"id\": \"Disney+\"}}\n```",
            r#"<tools>{"name": "pause_subscription", "arguments": {"id": "Disney+"}}</tools>"#,
            r#"<tool_call>{"name": "pause_subscription", "parameters": {"id": "Disney+"}}</tool_call>"#,
            r#"{"function": {"name": "pause_subscription", "arguments": "{\"id\": \"Disney+\"}"}}"#,
        ] {
            assert_eq!(calls_in_text(text, NAMES), vec![pause.clone()], "{text}");
        }
        let two = "```json\n{\"name\": \"list_subscriptions\", \"arguments\": {}}\n```\n```json\n{\"name\": \"pause_subscription\", \"arguments\": {\"id\": \"Disney+\"}}\n```";
        assert_eq!(calls_in_text(two, NAMES).len(), 2);
    }

    #[test]
    fn other_objects_and_unknown_tools_stay_text() {
        for text in [
            "You pay €12.99 a month for Netflix.",
            r#"{"name": "delete_everything", "arguments": {}}"#,
            r#"{"name": "Netflix", "amount": "12.99"}"#,
            r#"{"name": "pause_subscription", "arguments": ["Disney+"]}"#,
            "{ not json at all",
            // Quoted in an answer, a call-shaped name or note is not a call.
            r#"Your note says {"name": "pause_subscription", "arguments": {"id": "Disney+"}}."#,
            r#"Sure. {"name": "pause_subscription", "arguments": {"id": "Disney+"}}"#,
            r#"{"name": "list_subscriptions", "arguments": {}} and {"name": "Netflix"}"#,
        ] {
            assert_eq!(calls_in_text(text, NAMES), vec![], "{text}");
        }
    }

    #[test]
    fn an_echoed_hint_or_nothing_says_nothing_and_an_answer_says_something() {
        for text in [
            "",
            "  \n",
            "The tool results above answer my question; reply to me in plain text now.",
            "Reply to me in plain text now!",
        ] {
            assert!(says_nothing(text), "{text:?}");
        }
        for text in
            ["You have 2 subscriptions.", "No.", "Reply to me in plain text now: 3 of them."]
        {
            assert!(!says_nothing(text), "{text:?}");
        }
    }

    #[test]
    fn an_answer_that_reports_a_waiting_change_as_made_is_told_from_one_that_does_not() {
        for text in [
            "You have successfully paused the gym membership.",
            "Netflix has been cancelled.",
            "Done! iCloud+ is now deleted.",
            "He cancelado Netflix.",
            "Netflix ha sido cancelada.",
        ] {
            assert!(claims_done(text), "{text:?}");
        }
        for text in [
            "I prepared the change: tap Confirm on the card to pause the gym.",
            "Not done yet: waiting for you to confirm.",
            "Netflix will be cancelled once you confirm.",
            "Toca Confirmar en la tarjeta para cancelar Netflix.",
            "You pay €12.99 a month for Netflix.",
        ] {
            assert!(!claims_done(text), "{text:?}");
        }
    }
}
