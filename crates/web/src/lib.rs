//! The web app: server-rendered pages (minijinja) over the catalog, for people.
//!
//! Every page works without JavaScript; `static/app.js` only adds live updates. Every action
//! goes through the catalog as the signed-in person; a destructive one first shows a
//! confirmation page built from its dry run. Sign-in, sessions and the first-run setup go
//! through `ops::accounts::Accounts`.
//!
//! Here, lowest layer first: the reader's language (`reader.rs`), the templates
//! (`templates.rs`), the shared state (`state.rs`), sessions and CSRF (`session.rs`), pages
//! with their chrome and error pages (`render.rs`), SVG charts (`chart.rs`), security headers
//! (`headers.rs`), one module per area under `pages/`, and routing (this file). Not here: business rules (the catalog) and the REST or MCP adapters.

#![allow(
    clippy::result_large_err,
    reason = "handlers return a ready page as the error: a refusal is a response, built once"
)]

mod chart;
mod headers;
mod pages;
mod reader;
mod render;
mod session;
mod state;
mod templates;

pub use state::WebConfig;

use std::sync::Arc;

use axum::{
    Router,
    routing::{get, post},
};
use ops::{Catalog, accounts::Accounts, oauth::OAuthServer};

/// Paths whose rest is a secret (the first owner's setup link, an invitation): a log shows the
/// path up to here and never the rest.
pub const SECRET_PATHS: &[&str] = &["/setup/", "/invite/"];

/// The web app's routes, for merging into the server's router.
pub fn router(
    catalog: Arc<dyn Catalog>,
    accounts: Arc<dyn Accounts>,
    oauth: Arc<dyn OAuthServer>,
    assistant: Arc<dyn ops::assistant::Ask>,
    backups: Arc<dyn ops::backups::Backups>,
    config: WebConfig,
) -> Result<Router, String> {
    let max_request_bytes = config.max_request_bytes;
    let web = state::Web {
        catalog,
        accounts,
        oauth,
        assistant,
        backups,
        config: Arc::new(config),
        templates: Arc::new(templates::Templates::load()?),
    };
    Ok(Router::new()
        .route("/", get(pages::overview::show))
        .route("/setup/{secret}", get(pages::account::setup_form).post(pages::account::set_up))
        .route("/sign-in", get(pages::account::sign_in_form).post(pages::account::sign_in))
        .route("/sign-out", post(pages::account::sign_out))
        .route("/authorize", get(pages::authorize::show).post(pages::authorize::decide))
        .route("/subscriptions", get(pages::subscriptions::list))
        .route(
            "/subscriptions/new",
            get(pages::subscriptions::new_form).post(pages::subscriptions::create),
        )
        .route("/subscriptions/bulk", post(pages::subscription_actions::bulk))
        .route("/subscriptions/{id}", get(pages::subscriptions::detail))
        .route(
            "/subscriptions/{id}/edit",
            get(pages::subscription_actions::edit_form).post(pages::subscription_actions::edit),
        )
        .route("/subscriptions/{id}/do/{action}", post(pages::subscription_actions::act))
        .route("/charges/{id}", post(pages::subscription_actions::charge))
        .route(
            "/subscriptions/{id}/delete",
            get(pages::subscriptions::confirm_delete).post(pages::subscriptions::delete),
        )
        .route("/money", get(pages::money::show))
        .route("/transactions", get(pages::money::transactions))
        .merge(pages::money_actions::routes())
        .route("/organise", get(pages::organise::show))
        .merge(pages::organise::routes())
        .route("/assistant", get(pages::assistant::show).post(pages::assistant::ask))
        .route("/assistant/stream", post(pages::assistant::stream_answer))
        .route("/assistant/proposals/{id}", post(pages::assistant::act))
        .route("/settings/assistant", post(pages::settings::assistant))
        .route("/settings/reminders", get(pages::reminders::show).post(pages::reminders::timing))
        .route("/settings/reminders/destinations", post(pages::reminders::add))
        .route("/settings/reminders/destinations/{id}/test", post(pages::reminders::test))
        .route(
            "/settings/reminders/destinations/{id}/remove",
            get(pages::reminders::confirm_remove).post(pages::reminders::remove),
        )
        .route("/settings/reminders/feed", post(pages::reminders::create_feed))
        .route(
            "/settings/reminders/feed/revoke",
            get(pages::reminders::confirm_revoke_feed).post(pages::reminders::revoke_feed),
        )
        .route("/settings/reminders/mail", post(pages::reminders::mail))
        .route("/settings/reminders/chat-link", post(pages::reminders::chat_link))
        .route("/settings/reminders/telegram", post(pages::reminders::telegram_bot))
        .route("/settings/reminders/slack", post(pages::reminders::slack_app))
        .route("/settings/backups", get(pages::backups::show))
        .route("/settings/backups/{name}", get(pages::backups::download))
        .route("/settings/banks", get(pages::banks::show))
        .route("/settings/banks/link", post(pages::banks::link))
        .route("/settings/banks/application", post(pages::banks::application))
        .route("/settings/banks/consent", post(pages::banks::consent))
        .route("/settings/banks/return", get(pages::banks::consent_return))
        .route("/settings/banks/{id}/sync", post(pages::banks::sync))
        .route(
            "/settings/banks/{id}/remove",
            get(pages::banks::confirm_remove).post(pages::banks::remove),
        )
        .route("/settings/banks/accounts/{id}/target", post(pages::banks::target))
        .route("/activity", get(pages::activity::list))
        .route(
            "/activity/{id}/undo",
            get(pages::activity::confirm_undo).post(pages::activity::undo),
        )
        .route("/settings/tokens", get(pages::tokens::list).post(pages::tokens::create))
        .route(
            "/settings/tokens/{id}/revoke",
            get(pages::tokens::confirm_revoke).post(pages::tokens::revoke),
        )
        .route("/settings/tokens/{id}/tools", post(pages::tokens::set_tools))
        .route("/settings/apps/trusted", post(pages::tokens::trusted_apps))
        .route(
            "/settings/apps/{id}/revoke",
            get(pages::tokens::confirm_disconnect).post(pages::tokens::disconnect),
        )
        .route("/connect", get(pages::tokens::connect))
        .route("/settings", get(pages::settings::show))
        .route("/settings/household", post(pages::settings::household))
        .route("/settings/rates", post(pages::settings::rates))
        .route("/settings/profile", post(pages::settings::profile))
        .route("/settings/password", post(pages::settings::password))
        .route("/settings/members", post(pages::settings::invite))
        .route("/settings/members/{id}/role", post(pages::settings::role))
        .route(
            "/settings/members/{id}/remove",
            get(pages::settings::confirm_remove).post(pages::settings::remove),
        )
        .route("/invite/{code}", get(pages::settings::invitation).post(pages::settings::accept))
        .route(
            "/import",
            get(pages::import::show)
                .post(pages::import::upload)
                // A statement may be larger than other requests (a year of a busy account).
                .layer(axum::extract::DefaultBodyLimit::max(
                    ops::import::MAX_STATEMENT_BYTES + 64 * 1024,
                )),
        )
        .route("/import/apply", post(pages::import::apply))
        .route("/export", get(pages::export::show))
        .route("/export/exhale-export.json", get(pages::export::json_file))
        .route("/export/exhale-subscriptions.csv", get(pages::export::subscriptions_csv))
        .route("/export/exhale-charges.csv", get(pages::export::charges_csv))
        .route("/events", get(pages::live::events))
        .route("/static/app.css", get(pages::assets::css))
        .route("/static/app.js", get(pages::assets::js))
        .route("/static/icon.svg", get(pages::assets::icon))
        .route("/static/icon-180.png", get(pages::assets::icon_180))
        .route("/static/icon-192.png", get(pages::assets::icon_192))
        .route("/static/icon-512.png", get(pages::assets::icon_512))
        .route("/static/icon-maskable-512.png", get(pages::assets::icon_maskable_512))
        .route("/manifest.webmanifest", get(pages::assets::manifest))
        .route("/sw.js", get(pages::assets::service_worker))
        .route("/offline", get(pages::assets::offline))
        // Every route but /import, whose own limit is set on it and wins.
        .layer(axum::extract::DefaultBodyLimit::max(max_request_bytes))
        .layer(axum::middleware::map_response(headers::add))
        .layer(axum::middleware::from_fn(reader::in_readers_language))
        .with_state(web))
}
