//! The MCP server: a hand-written rmcp `ServerHandler` over the
//! [`Toolbox`], which dispatches each request to the concern that serves it.
//!
//! [`Server`] lists the enabled tools and routes each `tools/call` to its
//! plugin: it validates the arguments against the tool's input schema, then
//! runs the call in one of `max_concurrent_calls` slots by a deadline set
//! when the call was accepted (`slots`), with the request's cancellation
//! token and its progress token wired to the sandbox (`notify`). A tool that
//! fails is a result with `isError: true`; an unknown or disabled tool is
//! JSON-RPC error -32602, and a method of a capability the server does not
//! declare is -32601 naming the capability.
//!
//! One `Server` value serves one MCP session ([`Server::session`] makes the
//! next). A session's [`MountPolicy`] says whether its calls see the
//! client's MCP roots instead of the configured mounts (`roots`). Resources
//! can be followed (`subscriptions`), and a plugin may ask the client
//! questions during a run (`asker`).

// MCP logging (`logging/setLevel`, `notifications/message`) and roots are
// part of the 2025-11-25 revision this server implements; rmcp marks them
// deprecated because a later revision drops them.
#![allow(deprecated)]

mod asker;
mod awake;
mod lists;
mod notify;
mod prompts;
mod resources;
mod roots;
mod slots;
mod subscriptions;
mod tools;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, CustomRequest,
    CustomResult, DiscoverResult, ErrorCode, GetPromptRequestParams, GetPromptResponse,
    Implementation, InitializeRequestParams, InitializeResult, JsonObject, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    PromptsCapability, ReadResourceRequestParams, ReadResourceResponse, ResourcesCapability,
    ServerCapabilities, ServerConfig, SetLevelRequestParams, SubscribeRequestParams,
    SubscriptionFilter, Tool, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tokio::sync::{Semaphore, watch};
use tokio_util::sync::CancellationToken;

use crate::config::MountPolicy;
use crate::limits::CAPABILITIES_WAIT;
use crate::protocol::mcp::Catalog;
use crate::protocol::relay::StateKey;
use crate::runtime::toolbox::Toolbox;

use roots::Roots;

/// What a server serves once its plugins have loaded: the toolbox, and its
/// MCP form.
struct Served {
    toolbox: Arc<Toolbox>,
    catalog: Catalog,
    /// What each list a client may be told changed holds, to tell it only
    /// when one did.
    lists: lists::Lists,
}

impl Served {
    fn new(toolbox: Arc<Toolbox>) -> Arc<Served> {
        let catalog = Catalog::of(&toolbox);
        let lists = lists::Lists::of(&catalog);
        Arc::new(Served {
            toolbox,
            catalog,
            lists,
        })
    }
}

/// The MCP server over a loaded [`Toolbox`].
#[derive(Clone)]
pub struct Server {
    /// What is served; `None` while the plugins are still loading.
    served: watch::Receiver<Option<Arc<Served>>>,
    calls: Arc<Semaphore>,
    /// How many calls may run at once.
    slots: usize,
    /// Calls running now, across sessions.
    in_flight: Arc<AtomicUsize>,
    /// The call thread that stays awake between calls.
    awake: Arc<awake::Awake>,
    /// Fired on shutdown: running calls are interrupted, new ones refused.
    stopping: CancellationToken,
    /// The lowest level sent as `notifications/message` (a
    /// [`notify::rank`]); 0 means the client has not asked for log messages.
    log_level: Arc<AtomicU8>,
    policy: Arc<MountPolicy>,
    /// This session's view of the client's roots.
    roots: Arc<watch::Sender<Roots>>,
    /// Seals the `requestState` of 2026-07-28 `input_required` results.
    state_key: Arc<StateKey>,
    /// The resources followed across sessions, each read by one task.
    watcher: Arc<subscriptions::Watcher>,
    /// This session's scope in the watcher: its reads see its own client
    /// roots, when the policy follows them.
    scope: u64,
    /// How many resources this session follows, its subscriptions and its
    /// `subscriptions/listen` streams together.
    follows: Arc<AtomicUsize>,
    /// This session's subscribed resources (`resources/subscribe`).
    watched: Arc<Mutex<HashMap<String, subscriptions::Subscribed>>>,
    /// What is served may be replaced while serving ([`Loading::replace`]):
    /// `listChanged` is declared and clients are told of each change.
    reloading: bool,
    /// This session was told the capabilities before the plugins loaded
    /// (every one a plugin could offer): what a loaded plugin does not offer
    /// then answers empty rather than -32601.
    declared_while_loading: Arc<AtomicBool>,
}

impl Server {
    /// A server for `toolbox` that runs at most `max_concurrent_calls` calls at once.
    pub fn new(
        toolbox: Arc<Toolbox>,
        max_concurrent_calls: usize,
        policy: MountPolicy,
        state_key: StateKey,
    ) -> Server {
        let (_, served) = watch::channel(Some(Served::new(toolbox)));
        Server::with(served, max_concurrent_calls, policy, state_key)
    }

    /// A server whose tools are still loading: it answers `initialize` at
    /// once (over stdio and HTTP alike), and requests that need the tools
    /// wait until [`Loading::ready`] is called. If the [`Loading`] is
    /// dropped instead, they fail.
    pub fn loading(
        max_concurrent_calls: usize,
        policy: MountPolicy,
        state_key: StateKey,
    ) -> (Server, Loading) {
        let (tx, rx) = watch::channel(None);
        let server = Server::with(rx, max_concurrent_calls, policy, state_key);
        (server, Loading(tx))
    }

    fn with(
        served: watch::Receiver<Option<Arc<Served>>>,
        max_concurrent_calls: usize,
        policy: MountPolicy,
        state_key: StateKey,
    ) -> Server {
        let slots = max_concurrent_calls.max(1);
        let watcher = subscriptions::Watcher::new(policy.subscriptions);
        let scope = watcher.scope();
        let in_flight = Arc::new(AtomicUsize::new(0));
        Server {
            served,
            calls: Arc::new(Semaphore::new(slots)),
            slots,
            in_flight: in_flight.clone(),
            awake: Arc::new(awake::Awake::new(in_flight)),
            stopping: CancellationToken::new(),
            log_level: Arc::new(AtomicU8::new(0)),
            policy: Arc::new(policy),
            roots: Arc::new(watch::Sender::new(Roots::Known(None))),
            state_key: Arc::new(state_key),
            watcher: Arc::new(watcher),
            scope,
            follows: Arc::default(),
            watched: Arc::default(),
            reloading: false,
            declared_while_loading: Arc::default(),
        }
    }

    /// This server, declaring `listChanged` for tools, resources and prompts
    /// and telling clients when they change, for a [`Loading`] whose
    /// [`replace`](Loading::replace) will be called while serving.
    pub fn reloading(mut self) -> Server {
        self.reloading = true;
        self
    }

    /// A server for a new session: the same tools, call slots and shutdown
    /// as this one, with its own log level and client roots.
    pub fn session(&self) -> Server {
        Server {
            log_level: Arc::new(AtomicU8::new(0)),
            roots: Arc::new(watch::Sender::new(Roots::Known(None))),
            scope: self.watcher.scope(),
            follows: Arc::default(),
            watched: Arc::default(),
            declared_while_loading: Arc::default(),
            ..self.clone()
        }
    }

    /// Waits (up to [`CAPABILITIES_WAIT`]) for the plugins to load, so
    /// that the capabilities declared say what they offer. A first start
    /// that compiles every plugin can take longer: its first session is then
    /// declared every capability a plugin could offer (never fewer than
    /// will be served; requests wait for the plugins anyway).
    async fn wait_for_capabilities(&self) {
        let mut served = self.served.clone();
        let loaded = tokio::time::timeout(CAPABILITIES_WAIT, served.wait_for(Option::is_some));
        if loaded.await.is_err() {
            tracing::info!(
                "the plugins are still loading: declaring to this client every capability a \
                 plugin could offer"
            );
        }
    }

    /// What is served, once loaded.
    async fn served(&self) -> Result<Arc<Served>, ErrorData> {
        let mut served = self.served.clone();
        // Fails only when loading ended without tools (the sender is gone).
        let loaded = served.wait_for(Option::is_some).await.ok();
        loaded
            .and_then(|served| served.clone())
            .ok_or_else(|| ErrorData::internal_error("the plugins failed to load", None))
    }

    /// The tools, once loaded.
    async fn toolbox(&self) -> Result<Arc<Toolbox>, ErrorData> {
        Ok(self.served().await?.toolbox.clone())
    }

    /// What is served, when a loaded plugin offers `capability` (`offers`
    /// says); else -32601 for `method`, as for a capability not declared.
    async fn offering(
        &self,
        method: &str,
        capability: &str,
        offers: impl FnOnce(&Toolbox) -> bool,
    ) -> Result<Arc<Served>, ErrorData> {
        let served = self.served().await?;
        // While reloading, resources and prompts are declared whatever is
        // loaded now: their lists may be empty.
        let declared = (self.reloading && capability != "completions")
            || self.declared_while_loading.load(Ordering::Relaxed);
        if declared || offers(&served.toolbox) {
            Ok(served)
        } else {
            Err(not_offered(method, capability))
        }
    }
}

/// Hands a [`Server::loading`] server its tools.
pub struct Loading(watch::Sender<Option<Arc<Served>>>);

impl Loading {
    /// The tools are loaded: requests waiting for them go on.
    pub fn ready(self, toolbox: Arc<Toolbox>) {
        self.replace(toolbox);
    }

    /// Serves `toolbox` from now on: requests waiting for the tools go on,
    /// new requests get it, and calls already running finish on the plugin
    /// they started with (each holds its own `Arc`). The sessions of a
    /// [`Server::reloading`] server tell their clients which lists changed.
    pub fn replace(&self, toolbox: Arc<Toolbox>) {
        self.0.send_replace(Some(Served::new(toolbox)));
    }
}

/// The capabilities to declare: tools and logging always, and resources,
/// prompts and completions when a loaded plugin offers them. While the
/// plugins are still loading (`toolbox` is `None`), every capability a
/// plugin could offer, so that a client never sees fewer than will be
/// served (its requests wait for the plugins). When `reloading`,
/// tools, resources and prompts are declared with `listChanged`, since a
/// reload may bring them.
fn capabilities(toolbox: Option<&Toolbox>, reloading: bool) -> ServerCapabilities {
    let mut capabilities = ServerCapabilities::builder()
        .enable_tools()
        .enable_logging()
        .build();
    if reloading {
        if let Some(tools) = capabilities.tools.as_mut() {
            tools.list_changed = Some(true);
        }
        let mut resources = ResourcesCapability::default();
        resources.subscribe = Some(true);
        resources.list_changed = Some(true);
        capabilities.resources = Some(resources);
        let mut prompts = PromptsCapability::default();
        prompts.list_changed = Some(true);
        capabilities.prompts = Some(prompts);
        if toolbox.is_some_and(Toolbox::completes) {
            capabilities.completions = Some(JsonObject::new());
        }
        return capabilities;
    }
    let Some(toolbox) = toolbox else {
        let mut resources = ResourcesCapability::default();
        resources.subscribe = Some(true);
        capabilities.resources = Some(resources);
        capabilities.prompts = Some(PromptsCapability::default());
        capabilities.completions = Some(JsonObject::new());
        return capabilities;
    };
    if toolbox.serves_resources() {
        let mut resources = ResourcesCapability::default();
        resources.subscribe = Some(true);
        capabilities.resources = Some(resources);
    }
    if !toolbox.prompts().is_empty() {
        capabilities.prompts = Some(PromptsCapability::default());
    }
    if toolbox.completes() {
        capabilities.completions = Some(JsonObject::new());
    }
    capabilities
}

/// JSON-RPC -32601 for a method of a capability this server does not declare.
fn not_offered(method: &str, capability: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!(
            "{method}: this server does not offer {capability}: none of its plugins does (see \
             the capabilities it declares)"
        ),
        None,
    )
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let served = self.served.borrow().clone();
        let toolbox = served.as_deref().map(|s| &*s.toolbox);
        if toolbox.is_none() {
            self.declared_while_loading.store(true, Ordering::Relaxed);
        }
        ServerConfig::new(capabilities(toolbox, self.reloading))
            .with_server_info(
                Implementation::new("toolcell", env!("CARGO_PKG_VERSION")).with_title("Toolcell"),
            )
            .with_instructions(
                "Tools run in sandboxes that can reach only the directories, environment \
                 variables and hosts this server's configuration grants. Paths are absolute, or \
                 relative to the first granted directory.",
            )
    }

    async fn discover(&self, _cx: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        self.wait_for_capabilities().await;
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info(),
        ))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        if self.policy.client_roots && request.capabilities.roots.is_some() {
            // Calls wait for the list, which is asked for once the client
            // says it is initialized.
            self.roots.send_replace(Roots::Waiting);
        }
        cx.peer.set_peer_info(request.clone());
        self.wait_for_capabilities().await;
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, cx: NotificationContext<RoleServer>) {
        tracing::debug!("client initialized");
        if self.reloading {
            self.tell_list_changes(cx.peer.clone());
        }
        if matches!(*self.roots.borrow(), Roots::Waiting) {
            self.refresh_roots(&cx.peer).await;
        }
    }

    async fn on_roots_list_changed(&self, cx: NotificationContext<RoleServer>) {
        if self.policy.client_roots {
            tracing::info!("the client's roots changed");
            self.refresh_roots(&cx.peer).await;
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let served = self.served().await?;
        // The client has what it waited for at the start: the builtins
        // served from remembered listings link now, while it decides.
        served.toolbox.link_in_background();
        Ok(ListToolsResult::with_all_items(
            served.catalog.tools.clone(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let served = self.served.borrow();
        let served = served.as_ref()?;
        let index = served.toolbox.position(name)?;
        served.catalog.tools.get(index).cloned()
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.log_level
            .store(notify::rank(request.level), Ordering::Relaxed);
        Ok(())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call_tool_now(request, cx).await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let served = self
            .offering("prompts/list", "prompts", |toolbox| {
                !toolbox.prompts().is_empty()
            })
            .await?;
        Ok(ListPromptsResult::with_all_items(
            served.catalog.prompts.clone(),
        ))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.prompt(request, cx).await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.resources_now(cx).await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let served = self
            .offering(
                "resources/templates/list",
                "resources",
                Toolbox::serves_resources,
            )
            .await?;
        Ok(ListResourceTemplatesResult::with_all_items(
            served.catalog.templates.clone(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.read_now(request, cx).await
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.offering(
            "resources/subscribe",
            "resources",
            Toolbox::serves_resources,
        )
        .await?;
        self.follow(request.uri, cx).await
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(subscriptions::accepted(
            requested,
            self.policy.subscriptions.per_connection,
            self.reloading,
        ))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        self.follow_stream(context).await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.unfollow(&request.uri);
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.completion(request, cx).await
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _cx: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        if let Some(problem) = invalid_params(&request.method, request.params) {
            tracing::debug!(method = %request.method, "refused invalid parameters: {problem}");
            return Err(ErrorData::invalid_params(
                format!("invalid parameters for `{}`: {problem}", request.method),
                None,
            ));
        }
        tracing::debug!(method = %request.method, "refused an unknown method");
        Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!(
                "unknown method `{}`; this server offers tools (tools/list, tools/call), \
                 logging (logging/setLevel), and the resources, prompts and completions its \
                 capabilities declare",
                request.method
            ),
            None,
        ))
    }
}

/// Why `params` do not fit `method`, when `method` is one this server
/// serves: rmcp takes a request whose parameters do not parse (a
/// `requestState` that is not a string, say) for an unknown method, which
/// would tell the client the wrong thing. `None` for a method it does not
/// know, and for the methods 2026-07-28 removed (`initialize`, `ping`,
/// `logging/setLevel`, `resources/subscribe` and `resources/unsubscribe`):
/// rmcp hands those to this handler on a 2026-07-28 request, which must get
/// -32601 (the conformance suite's `server-stateless` checks it).
fn invalid_params(method: &str, params: Option<serde_json::Value>) -> Option<String> {
    use rmcp::model::{
        CallToolRequest, CompleteRequest, GetPromptRequest, ListPromptsRequest,
        ListResourceTemplatesRequest, ListResourcesRequest, ListToolsRequest, ReadResourceRequest,
        SubscriptionsListenRequest,
    };

    /// The parse error of the request as `R`; `None` when it parses (rmcp
    /// had another reason not to route it: the method is not in the
    /// request's revision, say).
    fn parse<R: serde::de::DeserializeOwned>(
        method: &str,
        params: Option<serde_json::Value>,
    ) -> Option<String> {
        let mut request = serde_json::Map::new();
        request.insert("method".into(), method.into());
        if let Some(params) = params {
            request.insert("params".into(), params);
        }
        serde_json::from_value::<R>(serde_json::Value::Object(request))
            .err()
            .map(|error| error.to_string())
    }

    match method {
        "tools/list" => parse::<ListToolsRequest>(method, params),
        "tools/call" => parse::<CallToolRequest>(method, params),
        "prompts/list" => parse::<ListPromptsRequest>(method, params),
        "prompts/get" => parse::<GetPromptRequest>(method, params),
        "resources/list" => parse::<ListResourcesRequest>(method, params),
        "resources/templates/list" => parse::<ListResourceTemplatesRequest>(method, params),
        "resources/read" => parse::<ReadResourceRequest>(method, params),
        "subscriptions/listen" => parse::<SubscriptionsListenRequest>(method, params),
        "completion/complete" => parse::<CompleteRequest>(method, params),
        _ => None,
    }
}
