//! "Ask Exhale": the conversation page (which works without JavaScript: a question is a form,
//! a card's buttons are forms), the streamed answer the Ctrl/Cmd+K panel reads
//! (`/assistant/stream`, one JSON event per line), and what the person does with a card.
//!
//! Everything goes through `ops::assistant::Ask`; this module only translates. The cards are
//! Exhale's (title, lines, destructive); the model's text is shown as text, never as markup.

use std::convert::Infallible;

use axum::{
    body::{Body, Bytes},
    extract::{Path, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Redirect, Response},
};
use futures_util::stream;
use ops::{
    OpError, Text,
    accounts::SessionCaller,
    assistant::{Answer, Card, ProposalAction, Screen},
};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{
    chart,
    reader::say,
    render::{op_error, page_with_extra},
    session::{Posted, SignedIn},
    state::Web,
};

#[derive(Deserialize)]
pub(crate) struct AskForm {
    message: String,
}

#[derive(Deserialize)]
pub(crate) struct ActForm {
    action: String,
}

/// An answer as the page and the panel show it: its notice in the reader's words, and each
/// screen and card drawn here, with the web's own pieces, from the records Exhale read.
fn answer_view(web: &Web, person: &SessionCaller, answer: &Answer) -> Value {
    json!({
        "text": answer.text,
        "cards": answer.cards.iter().map(|card| card_html(web, person, card)).collect::<Vec<_>>(),
        "screens": answer.screens.iter().map(|screen| screen_html(web, screen)).collect::<Vec<_>>(),
        "notice": answer.notice.as_ref().map(say),
    })
}

/// A card as the conversation page draws it, for the panel to show and to replace after
/// Confirm, Discard or Undo: one drawing, in the reader's language, whoever shows it.
fn card_html(web: &Web, person: &SessionCaller, card: &Card) -> String {
    let data = json!({"card": card, "csrf": person.csrf});
    web.templates.render("_proposal_card.html", &data).unwrap_or_else(|err| {
        tracing::error!(error = %err, "a card failed to render");
        String::new()
    })
}

fn screen_html(web: &Web, screen: &Screen) -> String {
    let chart = match screen {
        Screen::Total { summary } => {
            chart::by_category(summary, &say(&Text::new("Monthly cost by category")))
        }
        Screen::Charges { items, .. } => chart::charges(items, &say(&Text::new("Charges"))),
        Screen::Subscriptions { .. } => String::new(),
    };
    web.templates.render("_screen.html", &json!({"screen": screen, "chart": chart})).unwrap_or_else(
        |err| {
            tracing::error!(error = %err, "a screen failed to render");
            String::new()
        },
    )
}

/// A refusal as the panel shows it.
fn error_view(err: &OpError) -> Value {
    json!({"event": "error", "code": err.code(), "message": say(&err.text())})
}

async fn conversation_page(
    web: &Web,
    headers: &HeaderMap,
    person: &SessionCaller,
    status: StatusCode,
    extra: Value,
) -> Response {
    let (on, conversation) = tokio::join!(
        web.assistant.is_on(&person.caller),
        web.assistant.conversation(&person.caller)
    );
    let (on, conversation) = match (on, conversation) {
        (Ok(on), Ok(conversation)) => (on, conversation),
        (Err(err), _) | (_, Err(err)) => return op_error(web, headers, person, &err),
    };
    let data = json!({
        "nav": "assistant",
        "on": on,
        "turns": conversation.turns,
        "cards": conversation.cards,
    });
    page_with_extra(web, headers, person, status, "assistant.html", data, extra)
}

pub(crate) async fn show(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
) -> Response {
    conversation_page(&web, &headers, &person, StatusCode::OK, json!({})).await
}

/// How long a question from the page's form is waited for before the page goes without its
/// answer, which then follows in the same page as it is ready: well within the server's
/// request limit (a response must start within 30 s), however slow the model (a local one may
/// take longer for its first word; the assistant's own limit is 150 s a question).
const ANSWER_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// How often the page sent before its answer says something (a line break) while it waits.
const KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(15);

/// Where the page sent before the answer ends, and where the page with the answer takes over
/// (`assistant.html`).
const BEFORE_THE_ANSWER: &str = "<!--exhale:answer-->";
const WITH_THE_ANSWER: &str = "<!--exhale:main-->";

/// A question from the page's form, which works without JavaScript: answered in one page,
/// sent at once when the answer comes quickly, and otherwise sent in two parts, the question
/// with a note that the answer is coming, then the conversation with it, which the browser
/// shows as it arrives.
pub(crate) async fn ask(
    State(web): State<Web>,
    headers: HeaderMap,
    Posted { person, form }: Posted<AskForm>,
) -> Response {
    let (done, mut answered) = tokio::sync::oneshot::channel();
    let assistant = web.assistant.clone();
    let (caller, message) = (person.caller.clone(), form.message.clone());
    // The answer runs to its end even if the browser goes away: its cards are kept, and the
    // conversation page shows them.
    tokio::spawn(crate::reader::written_in(crate::reader::reader(), async move {
        let _ = done.send(assistant.ask(&caller, &message, &mut |_| {}).await);
    }));
    tokio::select! {
        result = &mut answered => {
            let result = result.unwrap_or(Err(OpError::Internal));
            return answer_page(&web, &headers, &person, &form.message, result).await;
        }
        () = tokio::time::sleep(ANSWER_WAIT) => {}
    }
    let extra = json!({"answering": form.message});
    let waiting = conversation_page(&web, &headers, &person, StatusCode::OK, extra).await;
    let (parts, body) = waiting.into_parts();
    let Ok(page) = axum::body::to_bytes(body, usize::MAX).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let page = String::from_utf8_lossy(&page);
    let Some(end) = page.find(BEFORE_THE_ANSWER) else {
        // Not the waiting page (an error page): it goes as it is.
        return Response::from_parts(parts, Body::from(page.into_owned()));
    };
    let first = page[..end].to_owned();
    let language = crate::reader::reader();
    let (chunks, arriving) = tokio::sync::mpsc::channel::<Bytes>(4);
    // The rest of the page, with a line break every `KEEP_ALIVE` until the answer is ready, so
    // a proxy in front (nginx gives up on a silent answer after a minute) keeps it open.
    tokio::spawn(crate::reader::written_in(language, async move {
        let _ = chunks.send(Bytes::from(first)).await;
        let mut ticks = tokio::time::interval(KEEP_ALIVE);
        ticks.tick().await;
        let result = loop {
            tokio::select! {
                result = &mut answered => break result.unwrap_or(Err(OpError::Internal)),
                _ = ticks.tick() => {
                    if chunks.send(Bytes::from_static(b"\n")).await.is_err() {
                        return;
                    }
                }
            }
        };
        // The page already said 200: whatever went wrong is said within it.
        let extra = match result {
            Ok(answer) => json!({"answer": answer_view(&web, &person, &answer)}),
            Err(err) => json!({"error": say(&err.text()), "message": form.message}),
        };
        let whole = conversation_page(&web, &headers, &person, StatusCode::OK, extra).await;
        let whole = axum::body::to_bytes(whole.into_body(), usize::MAX).await.unwrap_or_default();
        let whole = String::from_utf8_lossy(&whole);
        if let Some(start) = whole.find(WITH_THE_ANSWER) {
            let _ = chunks.send(Bytes::from(whole[start..].to_owned())).await;
        }
    }));
    let body = stream::unfold(arriving, |mut arriving| async move {
        let chunk = arriving.recv().await?;
        Some((Ok::<_, Infallible>(chunk), arriving))
    });
    Response::from_parts(parts, Body::from_stream(body))
}

/// The conversation page after a question: with the answer, or with why there is none.
async fn answer_page(
    web: &Web,
    headers: &HeaderMap,
    person: &SessionCaller,
    message: &str,
    result: Result<Answer, OpError>,
) -> Response {
    match result {
        Ok(answer) => {
            let extra = json!({"answer": answer_view(web, person, &answer)});
            conversation_page(web, headers, person, StatusCode::OK, extra).await
        }
        Err(
            err @ (OpError::InvalidInput { .. }
            | OpError::RateLimited { .. }
            | OpError::Conflict { .. }),
        ) => {
            let status = match err {
                OpError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
                OpError::Conflict { .. } => StatusCode::CONFLICT,
                _ => StatusCode::UNPROCESSABLE_ENTITY,
            };
            let extra = json!({"error": say(&err.text()), "message": message});
            conversation_page(web, headers, person, status, extra).await
        }
        Err(err) => op_error(web, headers, person, &err),
    }
}

/// A question from the panel: the answer's text as it is written, then the finished answer,
/// as JSON lines (`delta`, `restart`, then `answer` or `error`).
pub(crate) async fn stream_answer(
    State(web): State<Web>,
    Posted { person, form }: Posted<AskForm>,
) -> Response {
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel::<Value>();
    let assistant = web.assistant.clone();
    let language = crate::reader::reader();
    // The answer runs to its end even if the browser goes away: its cards are kept, and the
    // conversation page shows them.
    tokio::spawn(crate::reader::written_in(language, async move {
        let pieces = sender.clone();
        let mut said = move |piece| {
            let _ = pieces.send(serde_json::to_value(piece).unwrap_or(Value::Null));
        };
        let last = match assistant.ask(&person.caller, &form.message, &mut said).await {
            Ok(answer) => json!({"event": "answer", "answer": answer_view(&web, &person, &answer)}),
            Err(err) => error_view(&err),
        };
        let _ = sender.send(last);
    }));
    let lines = stream::unfold(receiver, |mut receiver| async move {
        let event = receiver.recv().await?;
        let mut line = event.to_string();
        line.push('\n');
        Some((Ok::<_, Infallible>(Bytes::from(line)), receiver))
    });
    let mut response = Body::from_stream(lines).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/x-ndjson"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// Confirm, Discard or Undo on a card: the card as it now stands for the panel, or back to the
/// conversation for a form.
pub(crate) async fn act(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Posted { person, form }: Posted<ActForm>,
) -> Response {
    let wants_json = headers
        .get(header::ACCEPT)
        .and_then(|accept| accept.to_str().ok())
        .is_some_and(|accept| accept.contains("application/json"));
    let Some(action) = ProposalAction::parse(&form.action) else {
        let err =
            OpError::invalid("/action", Text::new("A card's action is confirm, discard or undo."));
        return refuse(&web, &headers, &person, wants_json, &err).await;
    };
    match web.assistant.act(&person.caller, &id, action).await {
        Ok(card) if wants_json => axum::Json(card_view(&web, &person, &card)).into_response(),
        Ok(_) => Redirect::to("/assistant").into_response(),
        Err(err) => refuse(&web, &headers, &person, wants_json, &err).await,
    }
}

fn card_view(web: &Web, person: &SessionCaller, card: &Card) -> Value {
    json!({"html": card_html(web, person, card)})
}

async fn refuse(
    web: &Web,
    headers: &HeaderMap,
    person: &SessionCaller,
    wants_json: bool,
    err: &OpError,
) -> Response {
    let status = match err {
        OpError::NotFound { .. } => StatusCode::NOT_FOUND,
        OpError::Conflict { .. } => StatusCode::CONFLICT,
        _ => StatusCode::UNPROCESSABLE_ENTITY,
    };
    if wants_json {
        return (status, axum::Json(error_view(err))).into_response();
    }
    conversation_page(web, headers, person, status, json!({"error": say(&err.text())})).await
}
