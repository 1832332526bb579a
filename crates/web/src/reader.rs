//! The reader's language: the language the request being answered is written in (the
//! browser's until the person is known, then theirs), and sentences, dates and amounts as that
//! language writes them. The lowest layer of the crate.

use std::cell::Cell;

use axum::{
    extract::Request,
    http::{HeaderMap, header},
    middleware::Next,
    response::Response,
};
use i18n::Language;
use ops::{Text, accounts::SessionCaller};

tokio::task_local! {
    /// The language the request being answered is written in.
    static READER: Cell<Language>;
}

/// Answers a request in its reader's language: the one their browser asks for
/// (`Accept-Language`) until the person is known, then theirs (`read_in`, when the session is
/// read). Every `say` and template `t` while answering reads it.
pub(crate) async fn in_readers_language(request: Request, next: Next) -> Response {
    let asked = request.headers().get(header::ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok());
    let language = i18n::choose(None, None, asked);
    READER.scope(Cell::new(language), next.run(request)).await
}

/// The rest of this request is written in the signed-in person's language: their setting,
/// else what their browser asks for.
pub(crate) fn read_by(person: &SessionCaller, headers: &HeaderMap) {
    let asked = headers.get(header::ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok());
    let language = i18n::choose(Some(&person.language), None, asked);
    // Outside a request (a test rendering a template) there is nobody to write for.
    let _ = READER.try_with(|reader| reader.set(language));
}

/// Runs `work` (a task spawned while answering a request) in `language`.
pub(crate) async fn written_in<F: Future>(language: Language, work: F) -> F::Output {
    READER.scope(Cell::new(language), work).await
}

/// The language of the request being answered; English outside one.
pub(crate) fn reader() -> Language {
    READER.try_with(Cell::get).unwrap_or_default()
}

/// A date (`2026-12-03`) or an instant (`2026-12-03T10:00:00Z`, its UTC day) as the reader's
/// language writes the day; anything else as it is.
pub(crate) fn written_date(value: &minijinja::Value) -> String {
    let text = value.as_str().map(str::to_owned).unwrap_or_else(|| value.to_string());
    match text.get(..10).and_then(|day| day.parse::<ops::resolve::IsoDate>().ok()) {
        Some(day) => i18n::format::date(reader(), day.date()),
        None => text,
    }
}

/// An amount as ops return it (`{"amount": "-12.99", "currency": "EUR", ...}`) as the reader's
/// language writes it; anything else as it is.
pub(crate) fn written_money(value: &minijinja::Value) -> String {
    let field = |name: &str| value.get_attr(name).ok().filter(|v| !v.is_undefined());
    match (field("amount"), field("currency")) {
        (Some(amount), Some(currency)) => match (amount.as_str(), currency.as_str()) {
            (Some(amount), Some(currency)) => money(amount, currency),
            _ => value.to_string(),
        },
        _ => value.to_string(),
    }
}

/// An amount, from its decimal and its currency's code, as the reader writes it.
fn money(decimal: &str, currency: &str) -> String {
    i18n::format::money(reader(), decimal, currency)
}

/// An op's amount as the reader writes it.
pub(crate) fn amount(amount: &ops::common::Amount) -> String {
    money(&amount.amount.to_string(), amount.currency.code())
}

/// A day as the reader writes it.
pub(crate) fn day(on: ops::resolve::IsoDate) -> String {
    i18n::format::date(reader(), on.date())
}

/// A sentence as the reader reads it.
pub(crate) fn say(text: &Text) -> String {
    i18n::say(reader(), text)
}
