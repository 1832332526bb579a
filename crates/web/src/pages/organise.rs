//! Categories, payment methods and tags: create, rename, merge and delete. Each form names one
//! op; the destructive ones (delete, merge) first show a confirmation page built from the
//! op's dry run, which posts the same fields back with `confirmed`.

use axum::{
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
    response::Response,
};
use ops::{
    Mode, Op, OpError, Text, accounts::SessionCaller, common::Patch, entities::PaymentMethodKind,
    household::Empty, organise::*,
};
use serde_json::{Map, Value, json};

use crate::{
    pages::{Confirm, confirmation, confirmed, form},
    render::{op_error, page_with_status, redirect_with_notice},
    session::{Posted, SignedIn},
    state::Web,
};

async fn organise_page(
    web: &Web,
    headers: &HeaderMap,
    person: &SessionCaller,
    status: StatusCode,
    error: Option<String>,
) -> Response {
    let (categories, methods, tags) = tokio::join!(
        web.call::<ListCategories>(person, Empty {}),
        web.call::<ListPaymentMethods>(person, Empty {}),
        web.call::<ListTags>(person, Empty {}),
    );
    let (categories, methods, tags) = match (categories, methods, tags) {
        (Ok(c), Ok(m), Ok(t)) => (c, m, t),
        (Err(err), ..) | (_, Err(err), _) | (.., Err(err)) => {
            return op_error(web, headers, person, &err);
        }
    };
    let mut data = json!({
        "nav": "organise",
        "categories": categories.items,
        "payment_methods": methods.items,
        "tags": tags.items,
        "error": error,
    });
    page_with_status(web, headers, Some(person), status, "organise.html", &mut data)
}

pub(crate) async fn show(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
) -> Response {
    organise_page(&web, &headers, &person, StatusCode::OK, None).await
}

/// A field of the posted form, trimmed.
fn text<'a>(form: &'a Map<String, Value>, key: &str) -> &'a str {
    form.get(key).and_then(Value::as_str).map(str::trim).unwrap_or_default()
}

pub(crate) async fn act(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(op): Path<String>,
    Posted { person, form: fields }: Posted<Map<String, Value>>,
) -> Response {
    let id = || form::id::<i64>(text(&fields, "id")).unwrap_or_default();
    let name = || text(&fields, "name").to_owned();
    let on = Page { web: &web, headers: &headers, person: &person, fields: &fields, op: &op };
    match op.as_str() {
        "create_category" => {
            let input = CreateCategoryInput {
                name: name(),
                emoji: form::text(text(&fields, "emoji")),
                colour: None,
            };
            on.run::<CreateCategory>(Ok(input), Text::new("Added the category.")).await
        }
        "update_category" => {
            let input = UpdateCategoryInput {
                id: id().into(),
                name: Some(name()),
                emoji: None,
                colour: None,
            };
            on.run::<UpdateCategory>(Ok(input), Text::new("Renamed the category.")).await
        }
        "delete_category" => {
            let input = DeleteCategoryInput { id: id().into(), move_to_id: None };
            on.run::<DeleteCategory>(Ok(input), Text::new("Deleted the category.")).await
        }
        "merge_categories" => {
            let input = MergeCategoriesInput {
                source_ids: form::id(text(&fields, "source_id")).into_iter().collect(),
                target_id: form::id(text(&fields, "target_id")).unwrap_or_default(),
            };
            on.run::<MergeCategories>(Ok(input), Text::new("Merged the categories.")).await
        }
        "create_payment_method" => {
            let input =
                form::parsed::<PaymentMethodKind>("/kind", text(&fields, "kind")).map(|kind| {
                    CreatePaymentMethodInput {
                        name: name(),
                        kind,
                        last4: form::text(text(&fields, "last4")),
                        expires: form::text(text(&fields, "expires")),
                        visibility: None,
                    }
                });
            on.run::<CreatePaymentMethod>(input, Text::new("Added the payment method.")).await
        }
        "update_payment_method" => {
            let input = UpdatePaymentMethodInput {
                id: id().into(),
                name: Some(name()),
                kind: None,
                last4: Patch::Keep,
                expires: Patch::Keep,
                visibility: None,
            };
            on.run::<UpdatePaymentMethod>(Ok(input), Text::new("Renamed the payment method.")).await
        }
        "delete_payment_method" => {
            let input = ops::common::IdInput { id: id().into() };
            on.run::<DeletePaymentMethod>(Ok(input), Text::new("Deleted the payment method.")).await
        }
        "rename_tag" => {
            let input = RenameTagInput {
                from: text(&fields, "from").to_owned(),
                to: text(&fields, "to").to_owned(),
            };
            on.run::<RenameTag>(Ok(input), Text::new("Renamed the tag.")).await
        }
        "delete_tag" => {
            on.run::<DeleteTag>(Ok(DeleteTagInput { name: name() }), Text::new("Deleted the tag."))
                .await
        }
        _ => web.templates.refusal(StatusCode::NOT_FOUND, &Text::new("There is no such action.")),
    }
}

/// One posted form of the page and what it needs to answer.
struct Page<'a> {
    web: &'a Web,
    headers: &'a HeaderMap,
    person: &'a SessionCaller,
    fields: &'a Map<String, Value>,
    op: &'a str,
}

impl Page<'_> {
    /// Applies `O` and comes back with `done`; a destructive op (the catalog says which) first
    /// shows what would change, from its dry run, with the same fields to post back confirmed.
    async fn run<O: Op>(&self, input: Result<O::Input, OpError>, done: Text) -> Response {
        let input = match input {
            Ok(input) => input,
            Err(err) => return self.refused(err).await,
        };
        if O::INFO.hints.destructive && text(self.fields, "confirmed") != "yes" {
            return match self.web.write::<O>(self.person, input, Mode::DryRun).await {
                Ok(preview) => {
                    let fields = self.fields.iter().map(|(name, value)| {
                        (name.clone(), value.as_str().unwrap_or_default().to_owned())
                    });
                    let confirm = Confirm {
                        nav: "organise",
                        title: Text::new("Are you sure?"),
                        explanation: Text::new(
                            "Subscriptions keep everything else. You can undo this from Activity.",
                        ),
                        action: format!("/organise/do/{}", self.op),
                        confirm_label: Text::new("Yes, do it"),
                        cancel: "/organise".into(),
                        hidden: confirmed(fields),
                    };
                    confirmation(
                        self.web,
                        self.headers,
                        self.person,
                        confirm,
                        &preview.receipt.changes,
                    )
                }
                Err(err) => self.refused(err).await,
            };
        }
        match self.web.call::<O>(self.person, input).await {
            Ok(_) => redirect_with_notice(self.web, "/organise", &done),
            Err(err) => self.refused(err).await,
        }
    }

    /// The page again with the op's message, or the error page for what is not the form's
    /// fault.
    async fn refused(&self, err: OpError) -> Response {
        match err {
            OpError::InvalidInput { .. } | OpError::Conflict { .. } => {
                organise_page(
                    self.web,
                    self.headers,
                    self.person,
                    StatusCode::UNPROCESSABLE_ENTITY,
                    Some(crate::reader::say(&err.text())),
                )
                .await
            }
            err => op_error(self.web, self.headers, self.person, &err),
        }
    }
}
