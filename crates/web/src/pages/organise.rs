//! Categories, payment methods and tags: create, rename, merge and delete. Each form is an
//! `Action` with a route of its own, `/organise/do/{op}`; the destructive ones (delete, merge)
//! first show a confirmation page built from the op's dry run, which posts the same fields
//! back with `confirmed`.

use axum::{
    Router,
    extract::State,
    http::{HeaderMap, StatusCode},
    response::Response,
    routing::post,
};
use ops::{
    Mode, Op, OpError, Text,
    accounts::SessionCaller,
    common::{IdInput, Patch},
    entities::PaymentMethodKind,
    household::Empty,
    organise::*,
    resolve::PaymentMethodId,
};
use serde::Deserialize;
use serde_json::json;

use crate::{
    pages::{
        Confirm, asks_first, confirmation, confirmed as confirmed_fields,
        form::{self, Action, Asking},
    },
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

/// The organise page's routes: one per form, each the op its form runs.
pub(crate) fn routes() -> Router<Web> {
    fn action<A: Action>(router: Router<Web>) -> Router<Web> {
        router.route(&format!("/organise/do/{}", A::Op::INFO.name), post(act::<A>))
    }
    [
        action::<CreateCategoryForm>,
        action::<RenameCategoryForm>,
        action::<DeleteCategoryForm>,
        action::<MergeCategoriesForm>,
        action::<CreatePaymentMethodForm>,
        action::<RenamePaymentMethodForm>,
        action::<DeletePaymentMethodForm>,
        action::<RenameTagForm>,
        action::<DeleteTagForm>,
    ]
    .into_iter()
    .fold(Router::new(), |router, add| add(router))
}

/// Runs the op of form `A` and comes back; a destructive op first shows what would change,
/// from its dry run, with the same fields to post back confirmed.
async fn act<A: Action>(
    State(web): State<Web>,
    headers: HeaderMap,
    Posted { person, form: pairs }: Posted<Vec<(String, String)>>,
) -> Response {
    let on = Page { web: &web, headers: &headers, person: &person };
    let input = match form::read::<A>(&pairs).and_then(A::Input::try_from) {
        Ok(input) => input,
        Err(err) => return on.refused(err).await,
    };
    let confirmed = pairs.iter().any(|(name, value)| name == "confirmed" && value == "yes");
    if asks_first::<A::Op>(&input, confirmed) {
        return match web.write::<A::Op>(&person, input, Mode::DryRun).await {
            Ok(preview) => {
                let asking = A::asking();
                let confirm = Confirm {
                    nav: "organise",
                    title: asking.title,
                    explanation: asking.explanation,
                    action: format!("/organise/do/{}", A::Op::INFO.name),
                    confirm_label: asking.confirm_label,
                    cancel: "/organise".into(),
                    hidden: confirmed_fields(pairs),
                };
                confirmation(&web, &headers, &person, confirm, &preview.receipt.changes)
            }
            Err(err) => on.refused(err).await,
        };
    }
    match web.call::<A::Op>(&person, input).await {
        Ok(_) => redirect_with_notice(&web, "/organise", &A::done()),
        Err(err) => on.refused(err).await,
    }
}

/// What deleting or merging asks first.
fn organise_asking() -> Asking {
    Asking {
        title: Text::new("Are you sure?"),
        explanation: Text::new(
            "Subscriptions keep everything else. You can undo this from Activity.",
        ),
        confirm_label: Text::new("Yes, do it"),
    }
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct CreateCategoryForm {
    name: String,
    emoji: String,
}

impl TryFrom<CreateCategoryForm> for CreateCategoryInput {
    type Error = OpError;
    fn try_from(form: CreateCategoryForm) -> Result<Self, OpError> {
        Ok(Self { name: form.name, emoji: form::text(&form.emoji), colour: None })
    }
}

impl Action for CreateCategoryForm {
    type Op = CreateCategory;
    type Input = CreateCategoryInput;
    fn done() -> Text {
        Text::new("Added the category.")
    }
}

/// A form that names a thing by id and gives it a new name.
#[derive(Default, Deserialize)]
#[serde(default)]
struct RenameCategoryForm {
    id: String,
    name: String,
}

impl TryFrom<RenameCategoryForm> for UpdateCategoryInput {
    type Error = OpError;
    fn try_from(form: RenameCategoryForm) -> Result<Self, OpError> {
        Ok(Self {
            id: form::id_or_zero(&form.id),
            name: Some(form.name),
            emoji: None,
            colour: None,
        })
    }
}

impl Action for RenameCategoryForm {
    type Op = UpdateCategory;
    type Input = UpdateCategoryInput;
    fn done() -> Text {
        Text::new("Renamed the category.")
    }
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct DeleteCategoryForm {
    id: String,
}

impl TryFrom<DeleteCategoryForm> for DeleteCategoryInput {
    type Error = OpError;
    fn try_from(form: DeleteCategoryForm) -> Result<Self, OpError> {
        Ok(Self { id: form::id_or_zero(&form.id), move_to_id: None })
    }
}

impl Action for DeleteCategoryForm {
    type Op = DeleteCategory;
    type Input = DeleteCategoryInput;
    fn done() -> Text {
        Text::new("Deleted the category.")
    }
    fn asking() -> Asking {
        organise_asking()
    }
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct MergeCategoriesForm {
    source_id: String,
    target_id: String,
}

impl TryFrom<MergeCategoriesForm> for MergeCategoriesInput {
    type Error = OpError;
    fn try_from(form: MergeCategoriesForm) -> Result<Self, OpError> {
        Ok(Self {
            source_ids: form::id(&form.source_id).into_iter().collect(),
            target_id: form::id_or_zero(&form.target_id),
        })
    }
}

impl Action for MergeCategoriesForm {
    type Op = MergeCategories;
    type Input = MergeCategoriesInput;
    fn done() -> Text {
        Text::new("Merged the categories.")
    }
    fn asking() -> Asking {
        organise_asking()
    }
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct CreatePaymentMethodForm {
    name: String,
    kind: String,
    last4: String,
    expires: String,
}

impl TryFrom<CreatePaymentMethodForm> for CreatePaymentMethodInput {
    type Error = OpError;
    fn try_from(form: CreatePaymentMethodForm) -> Result<Self, OpError> {
        Ok(Self {
            name: form.name,
            kind: form::parsed::<PaymentMethodKind>("/kind", &form.kind)?,
            last4: form::text(&form.last4),
            expires: form::text(&form.expires),
            visibility: None,
        })
    }
}

impl Action for CreatePaymentMethodForm {
    type Op = CreatePaymentMethod;
    type Input = CreatePaymentMethodInput;
    fn done() -> Text {
        Text::new("Added the payment method.")
    }
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct RenamePaymentMethodForm {
    id: String,
    name: String,
}

impl TryFrom<RenamePaymentMethodForm> for UpdatePaymentMethodInput {
    type Error = OpError;
    fn try_from(form: RenamePaymentMethodForm) -> Result<Self, OpError> {
        Ok(Self {
            id: form::id_or_zero(&form.id),
            name: Some(form.name),
            kind: None,
            last4: Patch::Keep,
            expires: Patch::Keep,
            visibility: None,
        })
    }
}

impl Action for RenamePaymentMethodForm {
    type Op = UpdatePaymentMethod;
    type Input = UpdatePaymentMethodInput;
    fn done() -> Text {
        Text::new("Renamed the payment method.")
    }
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct DeletePaymentMethodForm {
    id: String,
}

impl TryFrom<DeletePaymentMethodForm> for IdInput<PaymentMethodId> {
    type Error = OpError;
    fn try_from(form: DeletePaymentMethodForm) -> Result<Self, OpError> {
        Ok(Self { id: form::id_or_zero(&form.id) })
    }
}

impl Action for DeletePaymentMethodForm {
    type Op = DeletePaymentMethod;
    type Input = IdInput<PaymentMethodId>;
    fn done() -> Text {
        Text::new("Deleted the payment method.")
    }
    fn asking() -> Asking {
        organise_asking()
    }
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct RenameTagForm {
    from: String,
    to: String,
}

impl TryFrom<RenameTagForm> for RenameTagInput {
    type Error = OpError;
    fn try_from(form: RenameTagForm) -> Result<Self, OpError> {
        Ok(Self { from: form.from, to: form.to })
    }
}

impl Action for RenameTagForm {
    type Op = RenameTag;
    type Input = RenameTagInput;
    fn done() -> Text {
        Text::new("Renamed the tag.")
    }
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct DeleteTagForm {
    name: String,
}

impl TryFrom<DeleteTagForm> for DeleteTagInput {
    type Error = OpError;
    fn try_from(form: DeleteTagForm) -> Result<Self, OpError> {
        Ok(Self { name: form.name })
    }
}

impl Action for DeleteTagForm {
    type Op = DeleteTag;
    type Input = DeleteTagInput;
    fn done() -> Text {
        Text::new("Deleted the tag.")
    }
    fn asking() -> Asking {
        organise_asking()
    }
}

/// What answering a form of the page needs.
struct Page<'a> {
    web: &'a Web,
    headers: &'a HeaderMap,
    person: &'a SessionCaller,
}

impl Page<'_> {
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
