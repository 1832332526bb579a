//! Sessions of the 2025-11-25 wire belong to the caller that opened them.
//!
//! rmcp's session manager knows session ids, not who holds them: with another household's
//! token and a session id, a GET stream heard the first household's notifications and a
//! DELETE ended its session. This middleware records the owner (household, member, token)
//! of every session it sees opened, and answers a request naming a session that is not the
//! caller's exactly as rmcp answers an unknown one: 404. The stateless 2026 wire has no
//! sessions and passes through. A session a client ends (`DELETE`) is answered `204 No
//! Content`, which clients expect, where rmcp answers `202` (the official Python client logs
//! "Session termination failed: 202").

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use axum::{
    extract::{Request, State},
    http::{Method, StatusCode, header::HeaderName},
    middleware::Next,
    response::{IntoResponse, Response},
};
use ops::Caller;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");

/// Who opened a session.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Owner {
    household_id: i64,
    member_id: i64,
    token_id: Option<i64>,
}

impl Owner {
    fn of(caller: &Caller) -> Self {
        Self {
            household_id: caller.household_id,
            member_id: caller.member_id,
            token_id: caller.token_id(),
        }
    }
}

/// The owner of every open session, beside rmcp's session manager (which says which are
/// still open, so closed and expired ones are forgotten).
#[derive(Clone)]
pub(crate) struct Owners {
    owners: Arc<Mutex<HashMap<String, Owner>>>,
    manager: Arc<LocalSessionManager>,
}

impl Owners {
    pub(crate) fn new(manager: Arc<LocalSessionManager>) -> Self {
        Self { owners: Arc::default(), manager }
    }

    fn owner(&self, session: &str) -> Option<Owner> {
        self.owners.lock().ok()?.get(session).cloned()
    }

    async fn opened(&self, session: String, owner: Owner) {
        let open: Vec<String> =
            self.manager.sessions.read().await.keys().map(ToString::to_string).collect();
        if let Ok(mut owners) = self.owners.lock() {
            owners.retain(|id, _| open.contains(id));
            owners.insert(session, owner);
        }
    }

    fn closed(&self, session: &str) {
        if let Ok(mut owners) = self.owners.lock() {
            owners.remove(session);
        }
    }
}

/// What rmcp answers for a session it does not know; the same for one that is not yours, so
/// a stranger cannot tell the two apart.
fn unknown_session() -> Response {
    (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response()
}

/// Binds sessions to their owner. Without an authenticated caller (the conformance fixture's
/// endpoint) requests pass through.
pub(crate) async fn bind(State(owners): State<Owners>, request: Request, next: Next) -> Response {
    let Some(owner) = request.extensions().get::<Caller>().map(Owner::of) else {
        let closing = request.method() == Method::DELETE;
        return ended(closing, next.run(request).await);
    };
    let session = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    if let Some(session) = &session
        && owners.owner(session).as_ref() != Some(&owner)
    {
        return unknown_session();
    }
    let closing = request.method() == Method::DELETE;
    let response = next.run(request).await;
    match (&session, response.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok())) {
        (None, Some(opened)) if response.status().is_success() => {
            owners.opened(opened.to_owned(), owner).await;
        }
        (Some(session), _) if closing && response.status().is_success() => owners.closed(session),
        _ => {}
    }
    ended(closing, response)
}

/// A session ended by its client: `204 No Content` rather than rmcp's `202 Accepted`
/// (the session is gone when the answer comes, nothing is left to accept).
fn ended(closing: bool, response: Response) -> Response {
    if closing && response.status() == StatusCode::ACCEPTED {
        let (mut parts, _) = response.into_parts();
        parts.status = StatusCode::NO_CONTENT;
        parts.headers.remove(axum::http::header::CONTENT_LENGTH);
        parts.headers.remove(axum::http::header::CONTENT_TYPE);
        return Response::from_parts(parts, axum::body::Body::empty());
    }
    response
}
