//! Settings → Banks: link SimpleFIN Bridge with a setup token, or choose a European bank by its
//! country and consent at it (Enable Banking); see each connection's accounts and where they
//! go, its last sync and what went wrong with what to do, sync now, link again or renew the
//! consent, and remove it. A token or key typed here goes to the op once and is never shown
//! again.

use axum::{
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
    response::{IntoResponse as _, Response},
};
use ops::{
    OpError, Text,
    accounts::SessionCaller,
    banks::{
        CompleteBankConsent, CompleteBankConsentInput, CountryCode, LinkSimplefin,
        LinkSimplefinInput, ListBankConnections, ListBanks, ListBanksInput, RemoveBankConnection,
        RemoveBankConnectionInput, SetBankAccountTarget, SetBankAccountTargetInput,
        SetEnableBanking, SetEnableBankingInput, StartBankConsent, StartBankConsentInput,
        SyncBankConnection, SyncBankConnectionInput,
    },
    common::RecordId,
    entities::Visibility,
    household::Empty,
    ledger::{ListAccounts, ListAccountsInput},
};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{
    pages::{Confirm, apply_and_go, apply_form, confirm_page, refused_form},
    render::{op_error, page_with_extra, redirect_with_notice},
    session::{NoFields, Posted, SignedIn},
    state::Web,
};

const PAGE: &str = "/settings/banks";

async fn banks_page(
    web: &Web,
    headers: &HeaderMap,
    person: &SessionCaller,
    status: StatusCode,
    extra: Value,
) -> Response {
    let (connections, accounts) = tokio::join!(
        web.call::<ListBankConnections>(person, Empty {}),
        web.call::<ListAccounts>(person, ListAccountsInput { include_archived: None }),
    );
    let (connections, accounts) = match (connections, accounts) {
        (Ok(connections), Ok(accounts)) => (connections, accounts),
        (Err(err), _) | (_, Err(err)) => return op_error(web, headers, person, &err),
    };
    let countries: Vec<Value> =
        COUNTRIES.iter().map(|(code, name)| json!({"code": code, "name": name})).collect();
    let data = json!({
        "nav": "settings",
        "connections": connections.items,
        "accounts": accounts.items,
        "countries": countries,
    });
    page_with_extra(web, headers, person, status, "banks.html", data, extra)
}

/// The countries whose banks Enable Banking connects, each in its own language (so no name
/// needs translating).
const COUNTRIES: [(&str, &str); 30] = [
    ("AT", "Österreich"),
    ("BE", "België / Belgique"),
    ("BG", "България"),
    ("HR", "Hrvatska"),
    ("CY", "Κύπρος"),
    ("CZ", "Česko"),
    ("DK", "Danmark"),
    ("EE", "Eesti"),
    ("FI", "Suomi / Finland"),
    ("FR", "France"),
    ("DE", "Deutschland"),
    ("GR", "Ελλάδα"),
    ("HU", "Magyarország"),
    ("IS", "Ísland"),
    ("IE", "Ireland"),
    ("IT", "Italia"),
    ("LV", "Latvija"),
    ("LT", "Lietuva"),
    ("LU", "Luxembourg"),
    ("MT", "Malta"),
    ("NL", "Nederland"),
    ("NO", "Norge"),
    ("PL", "Polska"),
    ("PT", "Portugal"),
    ("RO", "România"),
    ("SK", "Slovensko"),
    ("SI", "Slovenija"),
    ("ES", "España"),
    ("SE", "Sverige"),
    ("GB", "United Kingdom"),
];

#[derive(Default, Deserialize)]
#[serde(default)]
pub(crate) struct ShowQuery {
    /// A country whose banks to list, for the person to choose theirs.
    country: String,
}

pub(crate) async fn show(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
    axum::extract::Query(query): axum::extract::Query<ShowQuery>,
) -> Response {
    let mut extra = json!({});
    if !query.country.trim().is_empty() {
        let listed = match country(&query.country) {
            Ok(country) => {
                extra["country"] = json!(country);
                web.call::<ListBanks>(&person, ListBanksInput { country }).await
            }
            Err(err) => Err(err),
        };
        match listed {
            Ok(banks) => extra["banks"] = json!(banks.items),
            Err(err) => {
                let again = |status, errors: Value| {
                    let mut extra = extra.clone();
                    extra["errors"] = errors["errors"].clone();
                    banks_page(&web, &headers, &person, status, extra)
                };
                return refused_form(&web, &headers, &person, &err, "consent", again).await;
            }
        }
    }
    banks_page(&web, &headers, &person, StatusCode::OK, extra).await
}

/// A connection's or an account's id from a form or a path: a refusal says where it was.
fn record_id(pointer: &str, id: i64) -> Result<RecordId, OpError> {
    RecordId::new(id).ok_or_else(|| {
        OpError::invalid(pointer, Text::new("Choose one of the connections on this page."))
    })
}

/// A country a form or a link names.
fn country(text: &str) -> Result<CountryCode, OpError> {
    text.parse().map_err(|_| {
        OpError::invalid("/country", Text::new("Choose your bank's country from the list."))
    })
}

/// Who sees a connection a form links, and the connection it links again, if any.
fn linking(
    private: &Option<String>,
    connection_id: Option<i64>,
) -> Result<(Visibility, Option<RecordId>), OpError> {
    let visibility = if private.is_some() { Visibility::Private } else { Visibility::Household };
    let connection_id = connection_id.map(|id| record_id("/connection_id", id)).transpose()?;
    Ok((visibility, connection_id))
}

#[derive(Default, Deserialize)]
#[serde(default)]
pub(crate) struct LinkForm {
    setup_token: String,
    private: Option<String>,
    /// A connection to link again.
    connection_id: Option<i64>,
}

pub(crate) async fn link(
    State(web): State<Web>,
    headers: HeaderMap,
    Posted { person, form }: Posted<LinkForm>,
) -> Response {
    let input = linking(&form.private, form.connection_id).map(|(visibility, connection_id)| {
        LinkSimplefinInput {
            setup_token: form.setup_token.trim().to_owned(),
            visibility: Some(visibility),
            connection_id,
        }
    });
    let form_name = if form.connection_id.is_some() { "relink" } else { "link" };
    let done = Text::new("Linked. The last 90 days are in; Exhale syncs every six hours.");
    let again = |status, errors| banks_page(&web, &headers, &person, status, errors);
    apply_form::<LinkSimplefin, _, _>(&web, &headers, &person, input, PAGE, form_name, done, again)
        .await
}

pub(crate) async fn sync(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(id): Path<i64>,
    Posted { person, .. }: Posted<NoFields>,
) -> Response {
    let input = record_id("/connection_id", id)
        .map(|connection_id| SyncBankConnectionInput { connection_id });
    let done = Text::new("Synced.");
    let again = |status, errors| banks_page(&web, &headers, &person, status, errors);
    apply_form::<SyncBankConnection, _, _>(
        &web, &headers, &person, input, PAGE, "sync", done, again,
    )
    .await
}

#[derive(Default, Deserialize)]
#[serde(default)]
pub(crate) struct ApplicationForm {
    application_id: String,
    private_key: String,
}

pub(crate) async fn application(
    State(web): State<Web>,
    headers: HeaderMap,
    Posted { person, form }: Posted<ApplicationForm>,
) -> Response {
    let input = SetEnableBankingInput {
        application_id: form.application_id,
        private_key: form.private_key,
    };
    let done = Text::new("Saved the Enable Banking application; its key is never shown again.");
    let again = |status, errors| banks_page(&web, &headers, &person, status, errors);
    apply_form::<SetEnableBanking, _, _>(
        &web,
        &headers,
        &person,
        Ok(input),
        PAGE,
        "application",
        done,
        again,
    )
    .await
}

#[derive(Default, Deserialize)]
#[serde(default)]
pub(crate) struct ConsentForm {
    country: String,
    bank: String,
    private: Option<String>,
    /// A connection whose consent is renewed.
    connection_id: Option<i64>,
}

/// Starts a consent and sends the person to their bank.
pub(crate) async fn consent(
    State(web): State<Web>,
    headers: HeaderMap,
    Posted { person, form }: Posted<ConsentForm>,
) -> Response {
    let input =
        linking(&form.private, form.connection_id).and_then(|(visibility, connection_id)| {
            Ok(StartBankConsentInput {
                country: country(&form.country)?,
                bank: form.bank.trim().to_owned(),
                visibility: Some(visibility),
                connection_id,
            })
        });
    let started = match input {
        Ok(input) => web.call::<StartBankConsent>(&person, input).await,
        Err(err) => Err(err),
    };
    match started {
        Ok(started) => axum::response::Redirect::to(&started.url).into_response(),
        Err(err) => {
            let again = |status, errors| banks_page(&web, &headers, &person, status, errors);
            refused_form(&web, &headers, &person, &err, "consent", again).await
        }
    }
}

#[derive(Default, Deserialize)]
#[serde(default)]
pub(crate) struct ReturnQuery {
    state: String,
    code: String,
    error: String,
    error_description: String,
}

/// Where the bank sends the person back: the consent is completed, or what the bank said.
pub(crate) async fn consent_return(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
    axum::extract::Query(query): axum::extract::Query<ReturnQuery>,
) -> Response {
    if !query.error.is_empty() || query.code.is_empty() {
        let said = ops::banks::bounded(&format!("{} {}", query.error, query.error_description));
        let message =
            Text::new("The bank did not give its consent ({said}); nothing was connected.")
                .with("said", said);
        let errors = json!({"errors": {"consent": crate::reader::say(&message)}});
        return banks_page(&web, &headers, &person, StatusCode::OK, errors).await;
    }
    let input = CompleteBankConsentInput { state: query.state, code: query.code };
    match web.call::<CompleteBankConsent>(&person, input).await {
        Ok(_) => redirect_with_notice(
            &web,
            PAGE,
            &Text::new("Connected. As much of the last two years as the bank gives is in."),
        ),
        Err(err) => {
            let again = |status, errors| banks_page(&web, &headers, &person, status, errors);
            refused_form(&web, &headers, &person, &err, "consent", again).await
        }
    }
}

#[derive(Default, Deserialize)]
#[serde(default)]
pub(crate) struct TargetForm {
    /// An account's id, "new" for a new account, or empty for none.
    target: String,
}

pub(crate) async fn target(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(id): Path<i64>,
    Posted { person, form }: Posted<TargetForm>,
) -> Response {
    let target = form.target.trim();
    let input = record_id("/bank_account_id", id).and_then(|bank_account_id| {
        let account_id = match target {
            "" | "new" => None,
            id => Some(id.parse().ok().and_then(RecordId::new).ok_or_else(|| {
                OpError::invalid("/account_id", Text::new("Choose an account from the list."))
            })?),
        };
        Ok(SetBankAccountTargetInput {
            bank_account_id,
            account_id,
            create_account: Some(target == "new"),
        })
    });
    let done = Text::new("Saved. The next sync goes there.");
    let again = |status, errors| banks_page(&web, &headers, &person, status, errors);
    apply_form::<SetBankAccountTarget, _, _>(
        &web, &headers, &person, input, PAGE, "target", done, again,
    )
    .await
}

/// The removal of the connection a path names.
fn removal(id: i64) -> Result<RemoveBankConnectionInput, OpError> {
    record_id("/connection_id", id).map(|connection_id| RemoveBankConnectionInput { connection_id })
}

pub(crate) async fn confirm_remove(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
    Path(id): Path<i64>,
) -> Response {
    let input = match removal(id) {
        Ok(input) => input,
        Err(err) => return op_error(&web, &headers, &person, &err),
    };
    confirm_page::<RemoveBankConnection>(&web, &headers, &person, input, |_| Confirm {
        nav: "settings",
        title: Text::new("Remove this bank connection?"),
        explanation: Text::new("Exhale forgets its access at once and nothing more arrives from it. Its transactions and balances stay in their accounts. Disable the access at the provider too."),
        action: format!("{PAGE}/{id}/remove"),
        confirm_label: Text::new("Remove"),
        cancel: PAGE.into(),
        hidden: Vec::new(),
    })
    .await
}

pub(crate) async fn remove(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(id): Path<i64>,
    Posted { person, .. }: Posted<NoFields>,
) -> Response {
    let input = match removal(id) {
        Ok(input) => input,
        Err(err) => return op_error(&web, &headers, &person, &err),
    };
    apply_and_go::<RemoveBankConnection>(
        &web,
        &headers,
        &person,
        input,
        PAGE,
        Text::new("Removed."),
    )
    .await
}
