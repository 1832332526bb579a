//! `ExhaleMcp`: the rmcp `ServerHandler` over the catalog.

use std::{collections::BTreeSet, sync::Arc};

use ops::{
    Caller, Catalog, Mode, OpError, Text,
    access::{ConfirmChange, ConfirmChangeInput},
    subscriptions::{ListSubscriptions, ListSubscriptionsInput},
};
use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams,
        CompleteResult, CompletionInfo, GetPromptRequestParams, GetPromptResponse, Implementation,
        ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
        PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
        ReadResourceResult, Reference, ServerCapabilities, ServerConfig,
    },
    service::RequestContext,
};

use crate::{
    apps,
    confirm::{self, Answer, Asking},
    notify, prompts, resources, results, tools,
};

/// How to work with Exhale, for the model (the briefing has the rest; `/llms.txt` says the same).
const INSTRUCTIONS: &str = ops::docs::AGENT_INSTRUCTIONS;

/// One MCP session's view of the catalog. Cheap to clone: the HTTP transport builds one per
/// request.
#[derive(Clone)]
pub struct ExhaleMcp {
    catalog: Arc<dyn Catalog>,
    /// The caller for stdio, fixed by the token in the environment; on HTTP each request
    /// carries its own, put in the request's extensions by the bearer middleware.
    fixed_caller: Option<Caller>,
    watches: notify::Watches,
    /// The event-bus subscription of a `subscriptions/listen` being set up: taken before the
    /// acknowledgement is sent, so a change made right after it is not missed.
    pending_listen: notify::PendingListen,
    /// Seals the `requestState` of 2026 confirmation questions.
    codec: Arc<rmcp::model::RequestStateCodec>,
    /// Whether a client that renders MCP Apps views gets them: over HTTP, not over stdio,
    /// where Claude Desktop hands a view neither the structured content nor `_meta` of a
    /// result, so a card could never learn what to confirm.
    offers_views: bool,
    /// The tools `find_tools` found in this session beyond its tool set.
    found: tools::Found,
}

impl ExhaleMcp {
    /// The server for one caller over stdio, which offers no views.
    pub fn new(
        catalog: Arc<dyn Catalog>,
        fixed_caller: Option<Caller>,
    ) -> Result<Self, std::io::Error> {
        let server = Self::with_codec(catalog, fixed_caller, Arc::new(confirm::codec()?));
        Ok(Self { offers_views: false, ..server })
    }

    /// One codec for every per-request instance of an HTTP endpoint, so a retry verifies.
    pub(crate) fn with_codec(
        catalog: Arc<dyn Catalog>,
        fixed_caller: Option<Caller>,
        codec: Arc<rmcp::model::RequestStateCodec>,
    ) -> Self {
        Self {
            catalog,
            fixed_caller,
            watches: notify::Watches::default(),
            pending_listen: notify::PendingListen::default(),
            codec,
            offers_views: true,
            found: tools::Found::default(),
        }
    }

    /// Whether this request's client gets Exhale's views ([`apps`]).
    fn views(&self, cx: &RequestContext<RoleServer>) -> bool {
        self.offers_views && apps::hosts_views(cx)
    }

    /// Today's date in the caller's household, YYYY-MM-DD (prompt defaults, completions).
    async fn today(&self, caller: &Caller) -> Result<ops::resolve::IsoDate, McpError> {
        let household = ops::call::<ops::household::GetHousehold>(
            self.catalog.as_ref(),
            caller,
            &ops::household::Empty {},
            Mode::Apply,
        )
        .await
        .map_err(|_| results::internal())?;
        Ok(household.today)
    }

    /// Applies a confirmed change, or says nothing changed.
    async fn apply(&self, caller: &Caller, answer: Answer) -> Result<CallToolResponse, McpError> {
        let Answer::Yes(confirmation_id) = answer else {
            let declined = Text::new("declined: the person said no; nothing was changed.");
            return Ok(CallToolResult::error(vec![rmcp::model::ContentBlock::text(
                declined.render(),
            )])
            .into());
        };
        let input = ConfirmChangeInput { confirmation_id };
        let confirmed =
            ops::call_text::<ConfirmChange>(self.catalog.as_ref(), caller, &input, Mode::Apply);
        Ok(match confirmed.await {
            // A confirmed change is never a list page.
            Ok(output) => results::success(output)?,
            Err(OpError::Internal) => return Err(results::internal()),
            Err(err) => results::failure(&err),
        }
        .into())
    }

    /// The server instructions for this caller: [`INSTRUCTIONS`] with today's date in their
    /// household and which of the tools they are listed answers each everyday question, or
    /// without them where no caller is known yet.
    async fn instructions(&self, cx: &RequestContext<RoleServer>) -> String {
        let Ok(caller) = self.caller(cx) else { return INSTRUCTIONS.to_owned() };
        let Ok(today) = self.today(&caller).await else { return INSTRUCTIONS.to_owned() };
        let uri = cx.extensions.get::<axum::http::request::Parts>().map(|parts| &parts.uri);
        let kept = tools::kept(self.catalog.as_ref(), &caller, uri).await;
        let offered = tools::offered(self.catalog.as_ref(), &caller, uri, kept, &BTreeSet::new());
        ops::docs::agent_instructions(today, |name| {
            offered.iter().any(|meta| meta.info.name == name)
        })
    }

    /// What a stateless 2026 client is told: its tool list never changes (it has no session
    /// for found tools to join), so no `tools/list_changed` is promised on its listen streams.
    fn stateless_info(&self) -> ServerConfig {
        let mut info = self.get_info();
        if let Some(tools) = info.capabilities.tools.as_mut() {
            tools.list_changed = None;
        }
        info
    }

    /// Lists from now on the tools a `find_tools` result names beyond the session's tool set,
    /// and tells the client its list changed, so it hands them to its model. Only within a
    /// session (2025 wire, stdio): a stateless 2026 request has no list to add to.
    async fn list_found(&self, cx: &RequestContext<RoleServer>, caller: &Caller, output: &str) {
        let stateless =
            cx.protocol_version().is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
        if stateless {
            return;
        }
        let uri = cx.extensions.get::<axum::http::request::Parts>().map(|parts| &parts.uri);
        let kept = tools::kept(self.catalog.as_ref(), caller, uri).await;
        let listed = tools::offered(self.catalog.as_ref(), caller, uri, kept, &self.found.names());
        if self.found.add(self.catalog.ops(), &listed, output)
            // A client gone or one that ignores the notice loses nothing: the tools stay
            // callable by name.
            && cx.peer.notify_tool_list_changed().await.is_err()
        {
            tracing::debug!("tools/list_changed not delivered");
        }
    }

    fn caller(&self, cx: &RequestContext<RoleServer>) -> Result<Caller, McpError> {
        let caller = match &self.fixed_caller {
            Some(caller) => caller.clone(),
            None => cx
                .extensions
                .get::<axum::http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<Caller>())
                .cloned()
                .ok_or_else(|| {
                    McpError::internal_error("no authenticated caller on this request", None)
                })?,
        };
        // The audit log names the agent as the client named itself.
        Ok(caller.with_client_name(cx.client_info().map(|info| info.name)))
    }
}

impl ServerHandler for ExhaleMcp {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_prompts()
            .enable_completions()
            .build();
        if self.offers_views {
            capabilities.extensions = Some(apps::server_extensions());
        }
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("exhale", ops::VERSION).with_title("Exhale"))
            .with_instructions(INSTRUCTIONS)
    }

    async fn initialize(
        &self,
        request: rmcp::model::InitializeRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::InitializeResult, McpError> {
        cx.peer.set_peer_info(request.clone());
        let mut result = self.negotiate_initialize(&request)?;
        result.instructions = Some(self.instructions(&cx).await);
        Ok(result)
    }

    /// The 2026 wire's capabilities: those of [`Self::stateless_info`].
    async fn discover(
        &self,
        cx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::DiscoverResult, McpError> {
        let mut result = rmcp::model::DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.stateless_info(),
        );
        result.instructions = Some(self.instructions(&cx).await);
        Ok(result)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let caller = self.caller(&cx)?;
        let uri = cx.extensions.get::<axum::http::request::Parts>().map(|parts| &parts.uri);
        let kept = tools::kept(self.catalog.as_ref(), &caller, uri).await;
        let tools = tools::listed(
            self.catalog.as_ref(),
            &caller,
            uri,
            kept,
            &self.found.names(),
            self.views(&cx),
        );
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let caller = self.caller(&cx)?;
        if let Some(state) = &request.request_state {
            // A 2026 retry carrying the person's answer to our question.
            let answer = confirm::answer_from_retry(
                &self.codec,
                &caller,
                state,
                request.input_responses.as_ref(),
            )?;
            return self.apply(&caller, answer).await;
        }
        let views = self.views(&cx);
        let arguments = request.arguments.unwrap_or_default();
        let mut called = match tools::called(self.catalog.as_ref(), &request.name, arguments, views)
        {
            Ok(Some(called)) => called,
            Ok(None) => {
                let unknown = Text::new(
                    "Unknown tool {name}: tools/list has the tools listed, and find_tools finds the rest.",
                );
                let message = unknown.with("name", &request.name).render();
                return Err(McpError::invalid_params(message, None));
            }
            Err(err) => return Ok(results::failure(&err).into()),
        };
        let meta = called.meta;
        let prepared = match tools::prepare(meta, std::mem::take(&mut called.arguments)) {
            Ok(prepared) => prepared,
            Err(err) => return Ok(called.failure(err).into()),
        };
        // A write the host shows with the card: one it listed to this client, or one called
        // through call_tool, which shows the card (not one called by a name found with
        // find_tools on a stateless request). The card is written from the same input, read by
        // the person.
        let uri = cx.extensions.get::<axum::http::request::Parts>().map(|parts| &parts.uri);
        let card = meta.info.is_write()
            && views
            && (called.through_call_tool || {
                // What the household keeps changes which writes are listed
                // (`ops::tools::LEDGER_WRITES`), so it is read again, as for the list.
                let household = tools::kept(self.catalog.as_ref(), &caller, uri).await;
                tools::offered(self.catalog.as_ref(), &caller, uri, household, &self.found.names())
                    .iter()
                    .any(|offered| offered.name() == meta.name())
            });
        let kept = card.then(|| prepared.input.clone());
        let result: CallToolResult = match self
            .catalog
            .call_json_text(&caller, meta.name(), prepared.input, prepared.mode)
            .await
        {
            Ok(output) => {
                if meta.name() == <ops::tools::FindTools as ops::Op>::INFO.name {
                    self.list_found(&cx, &caller, &output).await;
                }
                let output = tools::fit(output, prepared.page);
                if prepared.mode == Mode::DryRun && meta.info.is_write() {
                    results::preview(output)?
                } else {
                    results::success(output)?
                }
            }
            Err(OpError::Internal) => return Err(results::internal()),
            // A host with views shows the card: the person confirms there, not the model.
            Err(err @ OpError::ConfirmationRequired { .. }) if card => {
                let input = kept.unwrap_or_default();
                apps::waiting_for_the_card(self.catalog.as_ref(), &caller, meta, input, &err)
                    .await?
            }
            Err(OpError::ConfirmationRequired {
                confirmation_id,
                message,
                preview,
                expires_at,
            }) => {
                match confirm::ask(&self.codec, &cx, &caller, &confirmation_id, &message.render())
                    .await?
                {
                    Asking::InputRequired(response) => return Ok(response),
                    Asking::Answered(answer) => return self.apply(&caller, answer).await,
                    // A host with views: the card, never the id, confirms (see README).
                    Asking::CannotAsk if views => apps::shown_only_on_the_card(meta),
                    Asking::CannotAsk => results::failure(&OpError::ConfirmationRequired {
                        confirmation_id,
                        message,
                        preview,
                        expires_at,
                    }),
                }
            }
            Err(err) => called.failure(err),
        };
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let caller = self.caller(&cx)?;
        let cursor = request.and_then(|r| r.cursor);
        let (items, next_cursor) = resources::list(self.catalog.as_ref(), &caller, cursor)
            .await
            .map_err(|err| results::protocol_error(&err))?;
        let mut result = ListResourcesResult::with_all_items(items);
        result.next_cursor = next_cursor;
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(resources::templates()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let caller = self.caller(&cx)?;
        let contents = resources::read(self.catalog.as_ref(), &caller, &request.uri).await?;
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let caller = self.caller(&cx)?;
        // Only what the caller can read may be watched, refused as resources/read refuses it:
        // another household's or another member's private entity looks like one that does not
        // exist, so the answer tells nothing.
        resources::read(self.catalog.as_ref(), &caller, &request.uri).await?;
        self.watches.watch(self.catalog.as_ref(), caller, request.uri, cx.peer);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.watches.unwatch(&request.uri);
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        self.pending_listen.prepare(self.catalog.as_ref());
        Some(requested.supported_by(&self.stateless_info().capabilities))
    }

    async fn listen(&self, context: rmcp::service::SubscriptionContext) -> Result<(), McpError> {
        let caller = self.caller(context.request_context())?;
        let feed = self.pending_listen.take(self.catalog.as_ref(), &caller);
        notify::listen(feed, context).await;
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(prompts::list()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let caller = self.caller(&cx)?;
        let today = self.today(&caller).await?.to_string();
        Ok(prompts::get(&request.name, &request.arguments.unwrap_or_default(), &today)?.into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let caller = self.caller(&cx)?;
        let typed = request.argument.value.to_lowercase();
        let values: Vec<String> = match &request.r#ref {
            Reference::Resource(template)
                if template.uri.starts_with("exhale://subscriptions/") =>
            {
                let input = ListSubscriptionsInput { limit: Some(500), ..Default::default() };
                let page = ops::call::<ListSubscriptions>(
                    self.catalog.as_ref(),
                    &caller,
                    &input,
                    Mode::Apply,
                )
                .await
                .map_err(|_| results::internal())?;
                page.items
                    .iter()
                    .map(|item| item.id.to_string())
                    .filter(|id| id.starts_with(&typed))
                    .collect()
            }
            Reference::Prompt(prompt)
                if request.argument.name == "month"
                    && prompts::argument_names(&prompt.name).contains(&"month") =>
            {
                recent_months(&self.today(&caller).await?.to_string())
                    .into_iter()
                    .filter(|m| m.starts_with(&typed))
                    .collect()
            }
            _ => Vec::new(),
        };
        let total = values.len();
        let values: Vec<String> = values.into_iter().take(100).collect();
        let mut info =
            CompletionInfo::new(values).map_err(|err| McpError::internal_error(err, None))?;
        info.total = u32::try_from(total).ok();
        info.has_more = Some(total > 100);
        Ok(CompleteResult::new(info))
    }
}

/// The twelve months up to the one `today` falls in, newest first, as YYYY-MM.
fn recent_months(today: &str) -> Vec<String> {
    let (Some(year), Some(month)) = (
        today.get(..4).and_then(|y| y.parse::<i32>().ok()),
        today.get(5..7).and_then(|m| m.parse::<i32>().ok()),
    ) else {
        return Vec::new();
    };
    (0..12)
        .map(|back| {
            let index = year * 12 + (month - 1) - back;
            format!("{:04}-{:02}", index / 12, index % 12 + 1)
        })
        .collect()
}
