//! Moving Exhale from its SQLite file to PostgreSQL (`exhale migrate --to`). A file with
//! problems (`exhale check`) is refused before anything is copied. The store copies
//! the schema and every row in one transaction (`store::copy`), checking each table's count;
//! then every member's `export_data` is read from both databases and compared. A difference
//! empties the target again, so it is either a whole copy or nothing.

use std::sync::Arc;

use ops::{Caller, Catalog as _, Mode, OpError, Via};
use serde_json::{Value, json};

use crate::{App, transactions};

/// What was moved and checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Migrated {
    /// Each table with its rows.
    pub tables: Vec<(String, u64)>,
    /// The members whose exports were compared.
    pub members_checked: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    #[error(
        "{} is open in another Exhale (exhale serve, or exhale mcp for an agent): stop it, then migrate again. Nothing was copied.", path.display()
    )]
    InUse { path: std::path::PathBuf },
    #[error(
        "the SQLite database has {} problem(s), the first: {}; `exhale check` lists them. Restore a backup with `exhale restore`, then migrate again. Nothing was copied.", .0.len(), .0.first().map_or("", String::as_str)
    )]
    Unsound(Vec<String>),
    #[error(transparent)]
    Store(store::StoreError),
    #[error("{0}")]
    Op(String),
    #[error(
        "the copy differs from the original in {part} of member {member}'s export; the PostgreSQL database was emptied again. Report it, with the Exhale version"
    )]
    Differs { member: i64, part: String },
}

impl From<store::StoreError> for MigrateError {
    fn from(err: store::StoreError) -> Self {
        match err {
            store::StoreError::InUse { path } => Self::InUse { path },
            other => Self::Store(other),
        }
    }
}

impl From<OpError> for MigrateError {
    fn from(err: OpError) -> Self {
        Self::Op(err.text().render())
    }
}

impl App {
    /// Copies this app's SQLite database into the empty PostgreSQL database at `url` and
    /// checks the copy; see the module's comment.
    pub async fn migrate_to_postgres(&self, url: &str) -> Result<Migrated, MigrateError> {
        let problems = self.check().await?;
        if !problems.is_empty() {
            return Err(MigrateError::Unsound(problems));
        }
        let store = self.store.clone();
        let target_url = url.to_owned();
        let copied = tokio::task::spawn_blocking(move || store.copy_to_postgres(&target_url))
            .await
            .map_err(|_| MigrateError::Op("the copy stopped".into()))??;
        let location = store::Location::Postgres { url: url.to_owned(), max_connections: 2 };
        let target = App::open_at(&location, self.clock.clone()).map_err(|err| match err {
            crate::OpenError::Store(err) => MigrateError::Store(err),
            other => MigrateError::Op(other.to_string()),
        })?;
        let members = self.every_member().await?;
        for caller in &members {
            if let Err(part) = same_export(self, &target, caller).await? {
                let emptied = target.store.clone();
                tokio::task::spawn_blocking(move || emptied.empty_postgres())
                    .await
                    .map_err(|_| MigrateError::Op("emptying the copy stopped".into()))??;
                return Err(MigrateError::Differs { member: caller.member_id, part });
            }
        }
        Ok(Migrated { tables: copied.tables, members_checked: members.len() })
    }

    /// Every member of every household, each as a person at the terminal.
    async fn every_member(&self) -> Result<Vec<Caller>, OpError> {
        let store = self.store.clone();
        transactions::blocking(move || {
            transactions::read(&store, |db| {
                let mut callers = Vec::new();
                for household in
                    store::households::household_ids(db).map_err(transactions::internal)?
                {
                    for member in store::households::list_members(db, household)
                        .map_err(transactions::internal)?
                    {
                        callers.push(Caller::person(household, member.id, member.role, Via::Cli));
                    }
                }
                Ok(callers)
            })
        })
        .await
    }
}

/// Whether `caller`'s export reads the same from both apps; otherwise the first part (a key
/// of the export) that differs.
async fn same_export(
    source: &App,
    target: &Arc<App>,
    caller: &Caller,
) -> Result<Result<(), String>, OpError> {
    let (before, after) = (export(source, caller).await?, export(target, caller).await?);
    if before == after {
        return Ok(Ok(()));
    }
    let part = match (&before, &after) {
        (Value::Object(a), Value::Object(b)) => {
            a.iter().find(|(key, value)| b.get(*key) != Some(*value)).map(|(key, _)| key.clone())
        }
        _ => None,
    };
    Ok(Err(part.unwrap_or_else(|| "the whole".into())))
}

/// `caller`'s export from `app`, without when it was read.
async fn export(app: &App, caller: &Caller) -> Result<Value, OpError> {
    let mut export = app.call_json(caller, "export_data", json!({}), Mode::Apply).await?;
    if let Value::Object(parts) = &mut export {
        parts.remove("exported_at");
    }
    Ok(export)
}
