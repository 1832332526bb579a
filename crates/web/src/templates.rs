//! The templates, embedded in the binary, and the environment that renders them with the
//! reader's words, dates and amounts.

use axum::{
    http::StatusCode,
    response::{Html, IntoResponse, Response},
};
use minijinja::Environment;
use ops::Text;
use serde_json::{Value, json};

use crate::reader::{reader, say, written_date, written_money};

/// Every template, by name.
const TEMPLATES: &[(&str, &str)] = &[
    ("base.html", include_str!("../templates/base.html")),
    ("setup.html", include_str!("../templates/setup.html")),
    ("sign_in.html", include_str!("../templates/sign_in.html")),
    ("overview.html", include_str!("../templates/overview.html")),
    ("subscriptions.html", include_str!("../templates/subscriptions.html")),
    ("subscription.html", include_str!("../templates/subscription.html")),
    ("subscription_form.html", include_str!("../templates/subscription_form.html")),
    ("subscription_edit.html", include_str!("../templates/subscription_edit.html")),
    ("_subscription_details.html", include_str!("../templates/_subscription_details.html")),
    ("confirm.html", include_str!("../templates/confirm.html")),
    ("activity.html", include_str!("../templates/activity.html")),
    ("assistant.html", include_str!("../templates/assistant.html")),
    // Pieces other templates include or the assistant draws; `.html`, so they are escaped too.
    ("_proposal_card.html", include_str!("../templates/_proposal_card.html")),
    ("_screen.html", include_str!("../templates/_screen.html")),
    ("message.html", include_str!("../templates/message.html")),
    ("tokens.html", include_str!("../templates/tokens.html")),
    ("connect.html", include_str!("../templates/connect.html")),
    ("export.html", include_str!("../templates/export.html")),
    ("import.html", include_str!("../templates/import.html")),
    ("import_review.html", include_str!("../templates/import_review.html")),
    ("organise.html", include_str!("../templates/organise.html")),
    ("reminders.html", include_str!("../templates/reminders.html")),
    ("backups.html", include_str!("../templates/backups.html")),
    ("banks.html", include_str!("../templates/banks.html")),
    ("offline.html", include_str!("../templates/offline.html")),
    ("settings.html", include_str!("../templates/settings.html")),
    ("invitation.html", include_str!("../templates/invitation.html")),
    ("consent.html", include_str!("../templates/consent.html")),
    ("money.html", include_str!("../templates/money.html")),
    ("transactions.html", include_str!("../templates/transactions.html")),
];

pub(crate) struct Templates {
    env: Environment<'static>,
}

impl Templates {
    pub(crate) fn load() -> Result<Self, String> {
        let mut env = Environment::new();
        // A field a template prints that the data lacks (an op's output changed) fails the
        // page, and the tests, instead of rendering as nothing; `if` and `default` still test
        // for optional fields.
        env.set_undefined_behavior(minijinja::UndefinedBehavior::SemiStrict);
        for (name, source) in TEMPLATES {
            env.add_template(name, source).map_err(|err| format!("template {name}: {err}"))?;
        }
        // Strings in templates go through `t`, and sentences built in handlers are `Text`s
        // rendered by `say`: each is looked up by its English in the reader's catalogue.
        env.add_function("t", |text: String| i18n::format_in(reader(), &text).to_owned());
        env.add_global("version", ops::VERSION);
        // Dates and amounts as the reader's language writes them (`3 dic 2026`, `12,99 €`),
        // from the values ops return, never from their English `display`.
        env.add_filter("date", |value: minijinja::Value| written_date(&value));
        env.add_filter("money", |value: minijinja::Value| written_money(&value));
        // A word of a closed set (a status, a kind, a role) as the reader's language says it.
        env.add_filter("word", |value: String| i18n::word(reader(), &value));
        env.add_filter("cycle", |value: String| i18n::cycle(reader(), &value));
        Ok(Self { env })
    }

    /// Names of every template, for the test that renders them all.
    #[cfg(test)]
    pub(crate) fn names() -> impl Iterator<Item = &'static str> {
        TEMPLATES.iter().map(|(name, _)| *name).filter(|name| *name != "base.html")
    }

    /// Renders `name` with `data`, or a plain 500 if a template is broken.
    pub(crate) fn render(&self, name: &str, data: &Value) -> Result<String, String> {
        self.env
            .get_template(name)
            .and_then(|template| template.render(data))
            .map_err(|err| format!("rendering {name}: {err:#}"))
    }

    pub(crate) fn html(&self, status: StatusCode, name: &str, data: &Value) -> Response {
        match self.render(name, data) {
            Ok(html) => (status, Html(html)).into_response(),
            Err(err) => {
                tracing::error!(error = %err, "a page failed to render");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "This page failed to render; the details were logged.",
                )
                    .into_response()
            }
        }
    }

    /// A page that only says something, with a way back.
    pub(crate) fn refusal(&self, status: StatusCode, message: &Text) -> Response {
        let data = json!({"title": say(&Text::new("Not possible")), "message": say(message)});
        self.html(status, "message.html", &data)
    }
}
