//! `OpError`: the one error type every op returns, with stable codes.
//!
//! Messages are written for whoever must act on them, a person or a model, and say what to do
//! next. Internal details never appear here: the invoker logs them and returns `Internal`.

use domain::Text;
use serde_json::Value;

use crate::caller::Scope;

#[derive(Debug, Clone, thiserror::Error)]
pub enum OpError {
    /// The input is wrong; `pointer` is a JSON pointer to the offending field ("" for the whole).
    #[error("{message}")]
    InvalidInput { pointer: String, message: Text },
    #[error("{message}")]
    NotFound { message: Text },
    #[error("{message}")]
    Conflict { message: Text },
    #[error("{message}")]
    Forbidden { message: Text, needed: Option<Scope> },
    /// The write needs a person's confirmation; `preview` is the dry-run result.
    #[error("{message}")]
    ConfirmationRequired {
        confirmation_id: String,
        expires_at: String,
        preview: Box<Value>,
        message: Text,
    },
    #[error("{message}")]
    Unauthenticated { message: Text },
    #[error("{message}")]
    RateLimited { retry_after_secs: u64, message: Text },
    /// The server is too busy or the request took too long: nothing was done; try again.
    #[error("{message}")]
    Unavailable { retry_after_secs: u64, message: Text },
    /// Something broke on our side. The details were logged.
    #[error("internal error; the details were logged on the server")]
    Internal,
}

impl OpError {
    /// The stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidInput { .. } => "invalid_input",
            Self::NotFound { .. } => "not_found",
            Self::Conflict { .. } => "conflict",
            Self::Forbidden { .. } => "forbidden",
            Self::ConfirmationRequired { .. } => "confirmation_required",
            Self::Unauthenticated { .. } => "unauthenticated",
            Self::RateLimited { .. } => "rate_limited",
            Self::Unavailable { .. } => "unavailable",
            Self::Internal => "internal",
        }
    }

    /// The message as a translatable text.
    pub fn text(&self) -> Text {
        match self {
            Self::InvalidInput { message, .. }
            | Self::NotFound { message }
            | Self::Conflict { message }
            | Self::Forbidden { message, .. }
            | Self::ConfirmationRequired { message, .. }
            | Self::Unauthenticated { message }
            | Self::RateLimited { message, .. }
            | Self::Unavailable { message, .. } => message.clone(),
            Self::Internal => Text::new(
                "Something went wrong on the server; the details were logged. Try again, and report it if it keeps happening.",
            ),
        }
    }

    pub fn invalid(pointer: impl Into<String>, message: Text) -> Self {
        Self::InvalidInput { pointer: pointer.into(), message }
    }

    /// The same error for an input nested under `prefix` (a JSON pointer): `call_tool`'s
    /// arguments, say, whose fields are at `/arguments/...` of what the model sent.
    pub fn within(self, prefix: &str) -> Self {
        match self {
            Self::InvalidInput { pointer, message } => {
                Self::InvalidInput { pointer: format!("{prefix}{pointer}"), message }
            }
            other => other,
        }
    }

    pub fn not_found(message: Text) -> Self {
        Self::NotFound { message }
    }

    pub fn conflict(message: Text) -> Self {
        Self::Conflict { message }
    }

    pub fn forbidden(message: Text) -> Self {
        Self::Forbidden { message, needed: None }
    }
}
