//! Pages: a template with the chrome every page shares (who is signed in, the CSRF token, a
//! one-time notice, the language), redirects with a notice, and error pages. The templates
//! are `templates.rs`, the reader's language `reader.rs`.

#[cfg(test)]
mod tests;

use axum::{
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Redirect, Response},
};
use ops::{OpError, Text, accounts::SessionCaller};
use serde_json::{Value, json};

use crate::{
    reader::{reader, say},
    session::{self, NOTICE_COOKIE},
    state::Web,
};

/// What `caller` may do, as the policy says, by op (`may.update_household`): templates show
/// an owner's forms by asking it, never by reading a role.
pub(crate) fn may(caller: &ops::Caller) -> Value {
    let may: serde_json::Map<String, Value> = ops::all()
        .iter()
        .filter(|meta| ops::policy::may_call(caller, meta.info))
        .map(|meta| (meta.name().to_owned(), Value::Bool(true)))
        .collect();
    Value::Object(may)
}

/// A file to download, named `filename`, never kept in a cache.
pub(crate) fn attachment(
    filename: &str,
    content_type: &'static str,
    body: impl IntoResponse,
) -> Response {
    let disposition =
        header::HeaderValue::from_str(&format!("attachment; filename=\"{filename}\""))
            .unwrap_or_else(|_| header::HeaderValue::from_static("attachment"));
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, header::HeaderValue::from_static(content_type));
    headers.insert(header::CONTENT_DISPOSITION, disposition);
    headers.insert(header::CACHE_CONTROL, header::HeaderValue::from_static("no-store"));
    response
}

/// Renders a page for `session` (or nobody): the data plus the chrome, and the one-time
/// notice from the previous request, which is then cleared.
pub(crate) fn page(
    web: &Web,
    headers: &HeaderMap,
    session: Option<&SessionCaller>,
    name: &str,
    mut data: Value,
) -> Response {
    page_with_status(web, headers, session, StatusCode::OK, name, &mut data)
}

pub(crate) fn page_with_status(
    web: &Web,
    headers: &HeaderMap,
    session: Option<&SessionCaller>,
    status: StatusCode,
    name: &str,
    data: &mut Value,
) -> Response {
    let notice = session::cookie(web, headers, NOTICE_COOKIE)
        .and_then(|cookie| serde_json::from_str::<Text>(&session::decode(cookie)).ok())
        .map(|notice| say(&notice));
    if let Some(fields) = data.as_object_mut() {
        // Forms take the catalog's limits, so a field refuses what the op would.
        fields.insert("limits".into(), json!(ops::limits::FORMS));
        fields.insert("lang".into(), json!(reader().code()));
        if let Some(session) = session {
            fields.insert("me".into(), json!({"name": session.name}));
            fields.insert("may".into(), may(&session.caller));
            fields.insert("csrf".into(), json!(session.csrf));
        }
        if let Some(notice) = &notice {
            fields.insert("notice".into(), json!(notice));
        }
    }
    let mut response = web.templates.html(status, name, data);
    if notice.is_some() {
        response
            .headers_mut()
            .append(header::SET_COOKIE, session::set_cookie(web, NOTICE_COOKIE, "", Some(0)));
    }
    response
}

/// Renders a page whose data is `data` with `extra` added (a refused form's errors, or nothing
/// when the page is first shown), with `status`.
pub(crate) fn page_with_extra(
    web: &Web,
    headers: &HeaderMap,
    person: &SessionCaller,
    status: StatusCode,
    name: &str,
    mut data: Value,
    extra: Value,
) -> Response {
    if let (Some(data), Value::Object(extra)) = (data.as_object_mut(), extra) {
        data.extend(extra);
    }
    page_with_status(web, headers, Some(person), status, name, &mut data)
}

/// Redirects (303) to `to`, leaving `notice` for the page there.
pub(crate) fn redirect_with_notice(web: &Web, to: &str, notice: &Text) -> Response {
    let mut response = Redirect::to(to).into_response();
    add_notice(web, &mut response, notice);
    response
}

/// Leaves `notice` for the next page this browser shows, which says it in its reader's words.
pub(crate) fn add_notice(web: &Web, response: &mut Response, notice: &Text) {
    let stored = serde_json::to_string(notice).unwrap_or_default();
    response.headers_mut().append(
        header::SET_COOKIE,
        session::set_cookie(web, NOTICE_COOKIE, &session::encode(&stored), None),
    );
}

/// An op's refusal as a page: what went wrong and what to do, with the fitting status.
pub(crate) fn op_error(
    web: &Web,
    headers: &HeaderMap,
    session: &SessionCaller,
    err: &OpError,
) -> Response {
    let status = match err {
        OpError::NotFound { .. } => StatusCode::NOT_FOUND,
        OpError::Forbidden { .. } => StatusCode::FORBIDDEN,
        OpError::Conflict { .. } => StatusCode::CONFLICT,
        OpError::Unauthenticated { .. } => return Redirect::to("/sign-in").into_response(),
        OpError::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::UNPROCESSABLE_ENTITY,
    };
    let title = match status {
        StatusCode::NOT_FOUND => Text::new("Not found"),
        StatusCode::CONFLICT => Text::new("Something changed in the meantime"),
        StatusCode::INTERNAL_SERVER_ERROR => Text::new("Exhale failed"),
        _ => Text::new("Not possible"),
    };
    let mut data = json!({"title": say(&title), "message": say(&err.text())});
    page_with_status(web, headers, Some(session), status, "message.html", &mut data)
}
