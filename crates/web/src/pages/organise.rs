//! Categories, payment methods and tags: create, rename, merge and delete. Each form names one
//! op; the destructive ones (delete, merge) first show a confirmation page built from the
//! op's dry run, which posts the same fields back with `confirmed`.

use axum::{
    Form,
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
    response::Response,
};
use ops::{Mode, OpError, accounts::SessionCaller};
use serde_json::{Map, Value, json};

use crate::{
    Web,
    pages::call,
    render::{op_error, page, page_with_status, redirect_with_notice},
    session,
};

/// How a form field becomes an op input field.
#[derive(Clone, Copy)]
enum Field {
    /// Text, left out when empty.
    Text(&'static str),
    /// A whole number, left out when empty.
    Id(&'static str),
    /// One id from the form as a one-element list under another name.
    IdList(&'static str, &'static str),
}

struct Action {
    op: &'static str,
    fields: &'static [Field],
    done: &'static str,
}

const ACTIONS: &[Action] = &[
    Action {
        op: "create_category",
        fields: &[Field::Text("name"), Field::Text("emoji")],
        done: "Added the category.",
    },
    Action {
        op: "update_category",
        fields: &[Field::Id("id"), Field::Text("name")],
        done: "Renamed the category.",
    },
    Action { op: "delete_category", fields: &[Field::Id("id")], done: "Deleted the category." },
    Action {
        op: "merge_categories",
        fields: &[Field::IdList("source_id", "source_ids"), Field::Id("target_id")],
        done: "Merged the categories.",
    },
    Action {
        op: "create_payment_method",
        fields: &[
            Field::Text("name"),
            Field::Text("kind"),
            Field::Text("last4"),
            Field::Text("expires"),
        ],
        done: "Added the payment method.",
    },
    Action {
        op: "update_payment_method",
        fields: &[Field::Id("id"), Field::Text("name")],
        done: "Renamed the payment method.",
    },
    Action {
        op: "delete_payment_method",
        fields: &[Field::Id("id")],
        done: "Deleted the payment method.",
    },
    Action {
        op: "rename_tag",
        fields: &[Field::Text("from"), Field::Text("to")],
        done: "Renamed the tag.",
    },
    Action { op: "delete_tag", fields: &[Field::Text("name")], done: "Deleted the tag." },
];

async fn organise_page(
    web: &Web,
    headers: &HeaderMap,
    person: &SessionCaller,
    status: StatusCode,
    error: Option<String>,
) -> Response {
    let (categories, methods, tags) = tokio::join!(
        call(web, person, "list_categories", json!({}), Mode::Apply),
        call(web, person, "list_payment_methods", json!({}), Mode::Apply),
        call(web, person, "list_tags", json!({}), Mode::Apply),
    );
    let (categories, methods, tags) = match (categories, methods, tags) {
        (Ok(c), Ok(m), Ok(t)) => (c, m, t),
        (Err(err), ..) | (_, Err(err), _) | (.., Err(err)) => {
            return op_error(web, headers, person, &err);
        }
    };
    let mut data = json!({
        "nav": "organise",
        "categories": categories["items"],
        "payment_methods": methods["items"],
        "tags": tags["items"],
        "error": error,
    });
    page_with_status(web, headers, Some(person), status, "organise.html", &mut data)
}

pub(crate) async fn show(State(web): State<Web>, headers: HeaderMap) -> Response {
    let person = match session::person(&web, &headers, "/organise").await {
        Ok(person) => person,
        Err(to_sign_in) => return to_sign_in,
    };
    organise_page(&web, &headers, &person, StatusCode::OK, None).await
}

fn text<'a>(form: &'a Map<String, Value>, key: &str) -> &'a str {
    form.get(key).and_then(Value::as_str).map(str::trim).unwrap_or_default()
}

fn input(action: &Action, form: &Map<String, Value>) -> Value {
    let mut input = Map::new();
    for field in action.fields {
        match *field {
            Field::Text(key) if !text(form, key).is_empty() => {
                input.insert(key.into(), json!(text(form, key)));
            }
            Field::Id(key) => {
                if let Ok(id) = text(form, key).parse::<i64>() {
                    input.insert(key.into(), json!(id));
                }
            }
            Field::IdList(key, into) => {
                if let Ok(id) = text(form, key).parse::<i64>() {
                    input.insert(into.into(), json!([id]));
                }
            }
            Field::Text(_) => {}
        }
    }
    Value::Object(input)
}

pub(crate) async fn act(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(op): Path<String>,
    Form(form): Form<Map<String, Value>>,
) -> Response {
    let person = match session::checked(&web, &headers, "/organise", text(&form, "csrf")).await {
        Ok(person) => person,
        Err(refused) => return refused,
    };
    let Some(action) = ACTIONS.iter().find(|action| action.op == op) else {
        return web.templates.refusal(StatusCode::NOT_FOUND, "There is no such action.");
    };
    let input = input(action, &form);
    // Destructive ops (the catalog says which) are confirmed first, from their dry run.
    let destructive = ops::find(action.op).is_some_and(|meta| meta.info.hints.destructive);
    if destructive && text(&form, "confirmed") != "yes" {
        return match call(&web, &person, action.op, input, Mode::DryRun).await {
            Ok(preview) => {
                let mut hidden: Map<String, Value> = form
                    .iter()
                    .filter(|(key, _)| key.as_str() != "csrf")
                    .map(|(key, value)| (key.clone(), value.clone()))
                    .collect();
                hidden.insert("confirmed".into(), json!("yes"));
                page(
                    &web,
                    &headers,
                    Some(&person),
                    "confirm.html",
                    json!({
                        "nav": "organise",
                        "title": "Are you sure?",
                        "explanation": "Subscriptions keep everything else. You can undo this from Activity.",
                        "changes": preview["changes"],
                        "action": format!("/organise/do/{op}"),
                        "hidden": hidden,
                        "confirm_label": "Yes, do it",
                        "cancel": "/organise",
                    }),
                )
            }
            Err(err) => refused(&web, &headers, &person, err).await,
        };
    }
    match call(&web, &person, action.op, input, Mode::Apply).await {
        Ok(_) => redirect_with_notice(&web, "/organise", action.done),
        Err(err) => refused(&web, &headers, &person, err).await,
    }
}

/// The page again with the op's message, or the error page for what is not the form's fault.
async fn refused(web: &Web, headers: &HeaderMap, person: &SessionCaller, err: OpError) -> Response {
    match err {
        OpError::InvalidInput { .. } | OpError::Conflict { .. } => {
            organise_page(
                web,
                headers,
                person,
                StatusCode::UNPROCESSABLE_ENTITY,
                Some(err.text().render()),
            )
            .await
        }
        err => op_error(web, headers, person, &err),
    }
}
