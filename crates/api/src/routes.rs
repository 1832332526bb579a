//! The handlers behind [`crate::router`]: calling ops by POST and GET, health, OpenAPI and
//! `/llms.txt`.

use axum::{
    Extension, Json,
    body::Bytes,
    extract::{
        OriginalUri, Path, Query, State,
        rejection::{BytesRejection, PathRejection, QueryRejection},
    },
    http::{HeaderValue, Method, StatusCode, header},
    response::{IntoResponse, Response},
};
use http::{AppState, Bearer, problem_response, problem_response_with_status};
use ops::Text;
use ops::{Caller, Catalog, Mode, OpError, OpMeta};
use serde_json::{Value, json};

use crate::{
    input::{json_body_input, query_input, take_dry_run},
    openapi::openapi_document,
};

/// `GET /healthz`: alive, and which version (an upgrade can be checked from outside).
pub(crate) async fn healthz() -> Json<Value> {
    Json(json!({"status": "ok", "version": ops::VERSION}))
}

/// `GET /llms.txt`: what an agent, or its developer, reads before connecting (the
/// llms.txt convention), from the catalog. Public, as the OpenAPI document is.
pub(crate) async fn llms_txt() -> Response {
    let headers = [(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"))];
    (headers, ops::docs::agent_guide()).into_response()
}

/// `GET /api/v1/openapi.json`. Public: it describes the ops, not the household's data, and
/// clients import it before they hold a token.
pub(crate) async fn openapi_json(State(state): State<AppState>) -> Json<Value> {
    Json(openapi_document(state.catalog.ops()))
}

/// The server's `max_request_bytes`: the limit of every op without one of its own.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RequestLimit(pub(crate) usize);

/// The refusal of a body larger than the op takes.
fn too_large(op: &str, max: usize) -> OpError {
    OpError::invalid(
        "",
        Text::new(
            "The request body is larger than {op} takes here ({max} bytes; the server's max_request_bytes, or the op's own limit). Send fewer items at once.",
        )
        .with("op", op)
        .with("max", max),
    )
}

/// The answer while `http::MAX_LARGE_REQUESTS` large requests are being read.
pub(crate) fn busy() -> Response {
    let err = OpError::RateLimited {
        retry_after_secs: 5,
        message: Text::new(
            "Other large requests are being read; send this one again in a few seconds.",
        ),
    };
    let mut response = problem_response_with_status(&err, StatusCode::SERVICE_UNAVAILABLE);
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    response
}

/// `POST /api/v1/ops/{name}`.
pub(crate) async fn post_op(
    State(state): State<AppState>,
    Extension(RequestLimit(max_request_bytes)): Extension<RequestLimit>,
    Bearer(caller): Bearer,
    name: Result<Path<String>, PathRejection>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let meta = match op_from_path(&*state.catalog, name) {
        Ok(meta) => meta,
        Err(err) => return problem_response(&err),
    };
    let body = match body {
        Ok(body) => body,
        Err(rejection) => {
            // Too large or cut off: keep the status axum chose (413, 400), in our format.
            let err = if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                too_large(meta.name(), meta.info.request_limit(max_request_bytes))
            } else {
                OpError::invalid(
                    "",
                    Text::new("The request body could not be read: {error}.")
                        .with("error", rejection.body_text()),
                )
            };
            return problem_response_with_status(&err, rejection.status());
        }
    };
    let prepared = json_body_input(&body).and_then(|mut input| {
        let dry_run = take_dry_run(&mut input)?;
        // A read changes nothing, so a preview of it is the read itself.
        let mode = if dry_run && meta.info.is_write() { Mode::DryRun } else { Mode::Apply };
        Ok((input, mode))
    });
    match prepared {
        Ok((input, mode)) => call(&*state.catalog, &caller, meta, Value::Object(input), mode).await,
        Err(err) => problem_response(&err),
    }
}

/// `GET /api/v1/ops/{name}`: read-only ops, input from the query string.
pub(crate) async fn get_op(
    State(state): State<AppState>,
    Bearer(caller): Bearer,
    name: Result<Path<String>, PathRejection>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Response {
    let meta = match op_from_path(&*state.catalog, name) {
        Ok(meta) => meta,
        Err(err) => return problem_response(&err),
    };
    if meta.info.is_write() {
        // GET must be safe: proxies, crawlers and prefetchers may send it on their own.
        let err = OpError::invalid(
            "",
            Text::new("{name} changes data: call it with POST.").with("name", meta.name()),
        );
        return method_not_allowed(&err, "POST");
    }
    let input = query
        .map_err(|rejection| {
            OpError::invalid(
                "",
                Text::new("The query string could not be read: {error}.")
                    .with("error", rejection.body_text()),
            )
        })
        .and_then(|Query(pairs)| query_input(&meta.schemas().0, pairs));
    match input {
        Ok(input) => call(&*state.catalog, &caller, meta, Value::Object(input), Mode::Apply).await,
        Err(err) => problem_response(&err),
    }
}

/// Any other method on `/api/v1/ops/{name}`.
pub(crate) async fn wrong_method(
    State(state): State<AppState>,
    method: Method,
    name: Result<Path<String>, PathRejection>,
) -> Response {
    let meta = match op_from_path(&*state.catalog, name) {
        Ok(meta) => meta,
        Err(err) => return problem_response(&err),
    };
    let (text, allow) = if meta.info.is_write() {
        (Text::new("{method} is not supported: call {name} with POST."), "POST")
    } else {
        (Text::new("{method} is not supported: call {name} with GET or POST."), "GET, HEAD, POST")
    };
    let err = OpError::invalid("", text.with("method", method).with("name", meta.name()));
    method_not_allowed(&err, allow)
}

/// Any other path under `/api/v1`.
pub(crate) async fn no_such_endpoint(OriginalUri(uri): OriginalUri) -> Response {
    problem_response(&OpError::not_found(
        Text::new(
            "No endpoint at {path}. Ops are at /api/v1/ops/NAME; GET /api/v1/openapi.json lists them.",
        )
        .with("path", uri.path()),
    ))
}

/// The op named in the path, or a `not_found` saying where the list is.
fn op_from_path(
    catalog: &dyn Catalog,
    name: Result<Path<String>, PathRejection>,
) -> Result<&OpMeta, OpError> {
    let Path(name) = name.map_err(|rejection| {
        OpError::invalid(
            "",
            Text::new("The op name in the path could not be read: {error}.")
                .with("error", rejection.body_text()),
        )
    })?;
    catalog.ops().iter().find(|meta| meta.name() == name).ok_or_else(|| {
        OpError::not_found(
            Text::new("No op named {name}. GET /api/v1/openapi.json lists them.")
                .with("name", name),
        )
    })
}

async fn call(
    catalog: &dyn Catalog,
    caller: &Caller,
    meta: &OpMeta,
    input: Value,
    mode: Mode,
) -> Response {
    match catalog.call_json_text(caller, meta.name(), input, mode).await {
        // Results are the household's data: no shared cache may keep them.
        Ok(output) => (
            [(header::CACHE_CONTROL, "no-store"), (header::CONTENT_TYPE, "application/json")],
            output,
        )
            .into_response(),
        Err(err) => problem_response(&err),
    }
}

fn method_not_allowed(err: &OpError, allow: &'static str) -> Response {
    let mut response = problem_response_with_status(err, StatusCode::METHOD_NOT_ALLOWED);
    response.headers_mut().insert(header::ALLOW, HeaderValue::from_static(allow));
    response
}
