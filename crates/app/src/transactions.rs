//! Running work on the store: read and write transactions on tokio's blocking pool, and store
//! errors mapped to `OpError` at the boundary. The invoker, the handlers' context, accounts and
//! jobs all use these; nothing here knows about ops or callers.

use domain::Text;
use ops::OpError;
use store::StoreError;

/// Maps store errors at the boundary: "not found" becomes `not_found` with the caller's text,
/// a busy or unreachable database something to try again, everything else is logged and
/// becomes `internal`.
pub(crate) trait StoreExt<T> {
    fn or_internal(self) -> Result<T, OpError>;
    fn or_not_found(self, message: impl FnOnce() -> Text) -> Result<T, OpError>;
}

impl<T> StoreExt<T> for Result<T, StoreError> {
    fn or_internal(self) -> Result<T, OpError> {
        self.map_err(internal)
    }

    fn or_not_found(self, message: impl FnOnce() -> Text) -> Result<T, OpError> {
        match self {
            Err(StoreError::NotFound) => Err(OpError::not_found(message())),
            other => other.map_err(internal),
        }
    }
}

pub(crate) fn internal(err: StoreError) -> OpError {
    match err {
        StoreError::Busy => {
            OpError::conflict(Text::new("The database is busy; try again in a moment."))
        }
        // The connection was lost or the server is restarting: the transaction did not
        // commit (or, lost during its COMMIT, may have), and the pool connects again.
        StoreError::Unavailable(detail) => {
            tracing::warn!(%detail, "database unavailable");
            OpError::Unavailable {
                retry_after_secs: 1,
                message: Text::new(
                    "The database cannot be reached just now; try again in a moment. A change asked for just now is in list_activity if it was made.",
                ),
            }
        }
        StoreError::Constraint(detail) => {
            tracing::warn!(%detail, "constraint violated");
            OpError::conflict(Text::new(
                "This change conflicts with other data (a duplicate name, or something it refers to is gone). Reload and try again.",
            ))
        }
        err => {
            tracing::error!(error = %err, "store error");
            OpError::Internal
        }
    }
}

/// A read transaction seeing every household's rows (work that spans them: sign-in, tokens,
/// OAuth, jobs), whose store failures become `OpError`s.
pub(crate) fn read<T>(
    store: &store::Store,
    f: impl FnOnce(&store::Db<'_>) -> Result<T, OpError>,
) -> Result<T, OpError> {
    store.read(f).map_err(internal)?
}

/// [`read`] seeing only `household`'s rows: an op's own reads (on PostgreSQL row-level
/// security then holds every other household's rows back, whatever a query asks).
pub(crate) fn read_in<T>(
    store: &store::Store,
    household: i64,
    f: impl FnOnce(&store::Db<'_>) -> Result<T, OpError>,
) -> Result<T, OpError> {
    store.read_in(household, f).map_err(internal)?
}

/// [`write`] seeing and writing only `household`'s rows: an op's own writes, beside other
/// households' unless it is a dry run (`store::Writing`).
pub(crate) fn write_in<T>(
    store: &store::Store,
    household: i64,
    writing: store::Writing,
    commit: impl FnOnce(&Result<T, OpError>) -> bool,
    f: impl FnOnce(&store::Db<'_>) -> Result<T, OpError>,
) -> Result<T, OpError> {
    store.write_in(household, writing, commit, f).map_err(internal)?
}

/// A write transaction, committed when `commit` approves; store failures become `OpError`s.
pub(crate) fn write<T>(
    store: &store::Store,
    commit: impl FnOnce(&Result<T, OpError>) -> bool,
    f: impl FnOnce(&store::Db<'_>) -> Result<T, OpError>,
) -> Result<T, OpError> {
    store.write(commit, f).map_err(internal)?
}

/// Runs blocking work (SQLite) on tokio's blocking pool.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, OpError> + Send + 'static,
) -> Result<T, OpError> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|err| {
        tracing::error!(error = %err, "a blocking task failed");
        Err(OpError::Internal)
    })
}

/// [`write`] on tokio's blocking pool, committing what `f` wrote whatever it returns: the work
/// outside ops (sign-in, tokens, OAuth, the assistant's and the chats' records) that no dry
/// run or refusal rolls back.
pub(crate) async fn blocking_write<T: Send + 'static>(
    store: std::sync::Arc<store::Store>,
    f: impl FnOnce(&store::Db<'_>) -> Result<T, OpError> + Send + 'static,
) -> Result<T, OpError> {
    blocking(move || write(&store, |_| true, f)).await
}
