//! API tokens and "Connect an agent": create a token (its secret shown once, with ready-to-paste
//! configurations for each client, a QR code and a live test of `/mcp`), see when each token
//! was last used, and revoke one through a confirmation page; the apps connected with OAuth,
//! disconnected the same way, which tools each token or app lists, and whether an owner lets
//! apps be trusted.

use axum::{
    extract::{Path, State},
    http::{HeaderMap, StatusCode, header},
    response::Response,
};
use ops::{
    OpError, Scope, Text, ToolSet,
    access::{
        AllowTrustedApps, AllowTrustedAppsInput, CreateToken, CreateTokenInput, GetSettings,
        ListConnectedApps, ListTokens, RevokeConnectedApp, RevokeToken, SetTokenTools,
        SetTokenToolsInput, Token,
    },
    accounts::SessionCaller,
    common::{IdInput, RecordId},
    household::Empty,
};
use qrcode::{QrCode, render::svg};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{
    pages::{Confirm, apply_and_go, confirm_page, form},
    render::{op_error, page, page_with_status},
    session::{NoFields, Posted, SignedIn},
    state::Web,
};

/// Where agents reach this Exhale: the host the browser used, so the configs work from the
/// same network.
fn mcp_url(web: &Web, headers: &HeaderMap) -> String {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("127.0.0.1:8080");
    let scheme = if web.config.secure_cookies { "https" } else { "http" };
    format!("{scheme}://{host}/mcp")
}

/// The token as a QR code, for pasting into an agent on a phone.
fn qr_svg(secret: &str) -> String {
    QrCode::new(secret.as_bytes())
        .map(|code| {
            code.render::<svg::Color<'_>>()
                .min_dimensions(180, 180)
                .dark_color(svg::Color("#000000"))
                .light_color(svg::Color("#ffffff"))
                .build()
        })
        .unwrap_or_default()
}

/// Everything the connect page shows; `secret` is a placeholder when no token was just made.
fn connect_data(
    web: &Web,
    headers: &HeaderMap,
    secret: Option<&str>,
    token: Option<&Token>,
) -> Value {
    let shown = secret.unwrap_or("exh_…");
    let (command, args) = match &web.config.mcp_command {
        Some((command, args)) => (command.clone(), args.clone()),
        None => ("exhale".to_owned(), vec!["mcp".to_owned()]),
    };
    let stdio = json!({"command": command, "args": args, "env": {"EXHALE_TOKEN": shown}});
    let url = mcp_url(web, headers);
    let http = json!({"url": url, "headers": {"Authorization": format!("Bearer {shown}")}});
    let pretty = |value: &Value| serde_json::to_string_pretty(value).unwrap_or_default();
    let args_text = args.iter().map(|a| shell_word(a)).collect::<Vec<_>>().join(" ");
    // Cloud assistants connect with OAuth at the public origin; on loopback only programs on
    // this computer can.
    let remote = web
        .oauth
        .origin()
        .map(|origin| json!({"url": origin.resource(), "public": !origin.is_loopback()}));
    json!({
        "nav": "connect",
        "remote": remote,
        "secret": secret,
        "token": token,
        "url": url,
        "qr": secret.map(qr_svg),
        "configs": [
            {"client": "Claude Desktop", "file": "claude_desktop_config.json (Settings → Developer → Edit Config)",
             "text": pretty(&json!({"mcpServers": {"exhale": stdio}}))},
            {"client": "Claude Code", "file": "a terminal",
             "text": format!("claude mcp add exhale --env EXHALE_TOKEN={shown} -- {} {args_text}\n# or over HTTP:\nclaude mcp add --transport http exhale {url} --header \"Authorization: Bearer {shown}\"", shell_word(&command))},
            {"client": "Cursor", "file": "~/.cursor/mcp.json", "text": pretty(&json!({"mcpServers": {"exhale": stdio}}))},
            {"client": "VS Code", "file": ".vscode/mcp.json",
             "text": pretty(&json!({"servers": {"exhale": {"type": "stdio", "command": stdio["command"], "args": stdio["args"], "env": stdio["env"]}}}))},
            {"client": "LM Studio", "file": "mcp.json (Program → Install → Edit mcp.json)", "text": pretty(&json!({"mcpServers": {"exhale": stdio}}))},
            {"client": "Any client, stdio", "file": "its MCP server settings", "text": pretty(&stdio)},
            {"client": "Any client, HTTP", "file": "its MCP server settings", "text": pretty(&http)},
        ],
    })
}

/// Quotes a word for a POSIX shell when it needs it.
fn shell_word(word: &str) -> String {
    if word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:@".contains(c)) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

async fn list_page(
    web: &Web,
    headers: &HeaderMap,
    person: &SessionCaller,
    status: StatusCode,
    error: Option<String>,
) -> Response {
    let listed = async {
        let tokens = web.call::<ListTokens>(person, Empty {}).await?;
        let apps = web.call::<ListConnectedApps>(person, Empty {}).await?;
        let settings = web.call::<GetSettings>(person, Empty {}).await?;
        Ok::<_, OpError>((tokens, apps, settings))
    };
    match listed.await {
        Ok((tokens, apps, settings)) => {
            let mut data = json!({"nav": "connect", "tokens": tokens.items, "apps": apps.items,
                "trusted_apps": settings.trusted_apps, "error": error,
                "default_tools": ToolSet::DEFAULT.as_str()});
            page_with_status(web, headers, Some(person), status, "tokens.html", &mut data)
        }
        Err(err) => op_error(web, headers, person, &err),
    }
}

pub(crate) async fn list(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
) -> Response {
    list_page(&web, &headers, &person, StatusCode::OK, None).await
}

/// "Connect an agent" without a new token: the configurations with a placeholder.
pub(crate) async fn connect(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
) -> Response {
    page(&web, &headers, Some(&person), "connect.html", connect_data(&web, &headers, None, None))
}

#[derive(Deserialize)]
pub(crate) struct NewTokenForm {
    name: String,
    scope: String,
    #[serde(default)]
    tools: String,
    #[serde(default)]
    expires_in_days: String,
}

pub(crate) async fn create(
    State(web): State<Web>,
    headers: HeaderMap,
    Posted { person, form }: Posted<NewTokenForm>,
) -> Response {
    let chosen = form::required::<Scope>("/scope", &form.scope)
        .and_then(|scope| Ok((scope, form::parsed::<ToolSet>("/tools", &form.tools)?)));
    let created = match chosen {
        Ok((scope, tools)) => {
            let input = CreateTokenInput {
                name: form.name,
                scope,
                tools,
                expires_in_days: form.expires_in_days.trim().parse().ok(),
            };
            web.call::<CreateToken>(&person, input).await
        }
        Err(err) => Err(err),
    };
    match created {
        Ok(created) => {
            let mut response = page(
                &web,
                &headers,
                Some(&person),
                "connect.html",
                connect_data(&web, &headers, Some(&created.secret), Some(&created.token)),
            );
            // The secret is on this page only: never keep it in a cache.
            response
                .headers_mut()
                .insert(header::CACHE_CONTROL, header::HeaderValue::from_static("no-store"));
            response
        }
        Err(err @ OpError::InvalidInput { .. }) => {
            list_page(
                &web,
                &headers,
                &person,
                StatusCode::UNPROCESSABLE_ENTITY,
                Some(crate::reader::say(&err.text())),
            )
            .await
        }
        Err(err) => op_error(&web, &headers, &person, &err),
    }
}

pub(crate) async fn confirm_revoke(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
    Path(id): Path<RecordId>,
) -> Response {
    confirm_page::<RevokeToken>(&web, &headers, &person, IdInput { id }, |token| Confirm {
        nav: "connect",
        title: Text::new("Revoke the token {name}?").with("name", &token.name),
        explanation: Text::new(
            "Agents using it lose access at once. You can undo this from Activity.",
        ),
        action: format!("/settings/tokens/{id}/revoke"),
        confirm_label: Text::new("Revoke"),
        cancel: "/settings/tokens".into(),
        hidden: Vec::new(),
    })
    .await
}

pub(crate) async fn revoke(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(id): Path<RecordId>,
    Posted { person, .. }: Posted<NoFields>,
) -> Response {
    let notice = Text::new("Revoked. Agents using that token are disconnected.");
    apply_and_go::<RevokeToken>(&web, &headers, &person, IdInput { id }, "/settings/tokens", notice)
        .await
}

pub(crate) async fn confirm_disconnect(
    State(web): State<Web>,
    headers: HeaderMap,
    SignedIn(person): SignedIn,
    Path(id): Path<RecordId>,
) -> Response {
    confirm_page::<RevokeConnectedApp>(&web, &headers, &person, IdInput { id }, |app| Confirm {
        nav: "connect",
        title: Text::new("Disconnect {name}?").with("name", &app.name),
        explanation: Text::new(
            "It loses access at once; to use it again, connect it again from the app. You can undo this from Activity.",
        ),
        action: format!("/settings/apps/{id}/revoke"),
        confirm_label: Text::new("Disconnect"),
        cancel: "/settings/tokens".into(),
        hidden: Vec::new(),
    })
    .await
}

pub(crate) async fn disconnect(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(id): Path<RecordId>,
    Posted { person, .. }: Posted<NoFields>,
) -> Response {
    let notice = Text::new("Disconnected. The app can no longer act as you.");
    apply_and_go::<RevokeConnectedApp>(
        &web,
        &headers,
        &person,
        IdInput { id },
        "/settings/tokens",
        notice,
    )
    .await
}

#[derive(Deserialize)]
pub(crate) struct TrustedAppsForm {
    #[serde(default)]
    allowed: String,
}

/// An owner lets connected apps be trusted, or stops them.
pub(crate) async fn trusted_apps(
    State(web): State<Web>,
    headers: HeaderMap,
    Posted { person, form }: Posted<TrustedAppsForm>,
) -> Response {
    let allowed = match form::required::<bool>("/allowed", &form.allowed) {
        Ok(allowed) => allowed,
        Err(err) => return op_error(&web, &headers, &person, &err),
    };
    let notice = if allowed {
        Text::new("Apps you connect from now on may be offered Trusted.")
    } else {
        Text::new("Connected apps are no longer trusted; those that were now ask before changes.")
    };
    let input = AllowTrustedAppsInput { allowed };
    apply_and_go::<AllowTrustedApps>(&web, &headers, &person, input, "/settings/tokens", notice)
        .await
}

#[derive(Deserialize)]
pub(crate) struct ToolsForm {
    #[serde(default)]
    tools: String,
}

/// A token or a connected app (one sequence of ids) lists another tool set.
pub(crate) async fn set_tools(
    State(web): State<Web>,
    headers: HeaderMap,
    Path(id): Path<RecordId>,
    Posted { person, form }: Posted<ToolsForm>,
) -> Response {
    let tools = match form::required::<ToolSet>("/tools", &form.tools) {
        Ok(tools) => tools,
        Err(err) => return op_error(&web, &headers, &person, &err),
    };
    let notice = Text::new("Saved. Its client gets the new list the next time it asks for tools.");
    let input = SetTokenToolsInput { id, tools };
    apply_and_go::<SetTokenTools>(&web, &headers, &person, input, "/settings/tokens", notice).await
}
