//! Settings → Backups, for owners: where automatic backups go and how often, the ones kept
//! with their size, the next one and the last failure, and a download of any of them when
//! the database holds only the owner's household (a backup holds every household on it).

use axum::{
    extract::{Path, State},
    http::HeaderMap,
    response::Response,
};
use ops::backups::{BackupFile, BackupOverview};
use serde_json::{Value, json};

use crate::{
    render::{attachment, op_error, page},
    session::SignedIn,
    state::Web,
};

pub(crate) async fn show(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
) -> Response {
    match web.backups.backup_overview(&person.caller).await {
        Ok(overview) => {
            let data = json!({"nav": "settings", "backups": overview.as_ref().map(shown)});
            page(&web, &headers, Some(&person), "backups.html", data)
        }
        Err(err) => op_error(&web, &headers, &person, &err),
    }
}

/// The overview as the page shows it: times as written elsewhere on the settings pages, sizes
/// in whole kilobytes.
fn shown(overview: &BackupOverview) -> Value {
    let file = |file: &BackupFile| {
        json!({
            "name": file.name,
            "made_at": file.made_at.text(),
            "kilobytes": file.bytes.div_ceil(1000),
        })
    };
    json!({
        "dir": overview.dir,
        "every": overview.every,
        "keep": overview.keep,
        "sealed": overview.sealed,
        "files": overview.files.iter().map(file).collect::<Vec<_>>(),
        "next_at": overview.next_at.map(|at| at.text()),
        "last_failure": overview.last_failure.as_ref().map(|failure| json!({
            "at": failure.at.text(),
            "message": failure.message,
        })),
        "downloadable": overview.downloadable,
    })
}

pub(crate) async fn download(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
    Path(name): Path<String>,
) -> Response {
    match web.backups.download_backup(&person.caller, &name).await {
        Ok(backup) => {
            let content_type = if backup.name.ends_with(".age") {
                "application/octet-stream"
            } else {
                "application/vnd.sqlite3"
            };
            attachment(&backup.name, content_type, backup.content)
        }
        Err(err) => op_error(&web, &headers, &person, &err),
    }
}
