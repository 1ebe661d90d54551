//! The MCP server: a hand-written rmcp `ServerHandler` over the [`Toolbox`].
//!
//! [`Server`] lists the enabled tools and routes each `tools/call` to its
//! plugin: it validates the arguments against the tool's input schema, waits
//! for one of `max_concurrent_calls` slots, then runs the call on a
//! blocking-pool thread of its own with a deadline set when the call was
//! accepted, the request's cancellation token, and its progress token wired
//! to the sandbox; it answers by the deadline even if that thread is stuck in
//! the kernel. A tool
//! that fails is a result with `isError: true`; an unknown or disabled tool
//! is JSON-RPC error -32602, and a method of a capability the server does not
//! declare is -32601 naming the capability.
//!
//! One `Server` value serves one MCP session ([`Server::session`] makes the
//! next). A session's [`MountPolicy`] says whether its calls see the
//! client's MCP roots instead of the configured mounts: the embedded default
//! follows the roots a client offers (`roots/list`, again on
//! `notifications/roots/list_changed`).

// MCP logging (`logging/setLevel`, `notifications/message`) and roots are
// part of the 2025-11-25 revision this server implements; rmcp marks them
// deprecated because a later revision drops them.
#![allow(deprecated)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    ContentBlock, CustomRequest, CustomResult, DiscoverResult, ErrorCode, GetPromptRequestParams,
    GetPromptResponse, Implementation, InitializeRequestParams, InitializeResult,
    InputRequiredResult, JsonObject, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, LoggingLevel, LoggingMessageNotificationParam,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, Prompt, PromptsCapability,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, Reference, Resource,
    ResourceUpdatedNotificationParam, ResourcesCapability, ServerCapabilities, ServerConfig,
    SetLevelRequestParams, SubscribeRequestParams, SubscriptionFilter, Tool,
    UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::sync::{Semaphore, mpsc, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::config::Mount;
use crate::protocol::relay::{self, PeerClient, StateKey, StatelessClient};
use crate::runtime::contract::v2;
use crate::runtime::features::Failure;
use crate::runtime::plugin::{
    CallContext, CallError, CallObserver, ClientAsk, Interruption, LogLevel, Plugin,
};
use crate::runtime::toolbox::Toolbox;

/// Where a session's calls get their directories when the configuration
/// leaves that to the client (the embedded default).
#[derive(Clone, Debug, Default)]
pub struct MountPolicy {
    /// Calls see the client's MCP roots, read-only, when it offers any;
    /// otherwise their configured mounts.
    pub client_roots: bool,
    /// Why nothing is mounted when the client offers no roots (for
    /// example, the server was started in `/`); said to the model, with how
    /// to grant a folder, when a call finds no directory.
    pub unmounted_reason: Option<String>,
    /// The categories enabled, for saying how to enable a disabled tool.
    pub categories: Vec<String>,
}

/// The MCP server over a loaded [`Toolbox`].
#[derive(Clone)]
pub struct Server {
    /// The tools; `None` while the plugins are still loading.
    toolbox: watch::Receiver<Option<Arc<Toolbox>>>,
    calls: Arc<Semaphore>,
    /// How many calls may run at once.
    slots: usize,
    /// Calls running now, across sessions.
    in_flight: Arc<AtomicUsize>,
    /// Fired on shutdown: running calls are interrupted, new ones refused.
    stopping: CancellationToken,
    /// The lowest level sent as `notifications/message` (a [`rank`]); 0
    /// means the client has not asked for log messages.
    log_level: Arc<AtomicU8>,
    policy: Arc<MountPolicy>,
    /// This session's view of the client's roots.
    roots: Arc<watch::Sender<Roots>>,
    /// Seals the `requestState` of 2026-07-28 `input_required` results.
    state_key: Arc<StateKey>,
    /// This session's subscribed resources, each followed by a task.
    watched: Arc<Mutex<HashMap<String, tokio::task::AbortHandle>>>,
}

/// What the server knows of a session's client roots.
#[derive(Clone, Debug)]
enum Roots {
    /// The client said it has roots; the list has not arrived yet.
    Waiting,
    /// The directories the client's roots name; `None` when it offers none
    /// (or the server does not follow them).
    Known(Option<Arc<[Mount]>>),
}

/// How often a subscribed resource is read again to see whether it changed.
const WATCH_INTERVAL: Duration = Duration::from_secs(2);

/// The most resources one session may subscribe to.
const MAX_SUBSCRIPTIONS: usize = 64;

/// How long `initialize` and `server/discover` wait for the plugins to
/// load before declaring capabilities without them.
const CAPABILITIES_WAIT: Duration = Duration::from_secs(3);

/// How long a call waits for a client's first `roots/list` answer before it
/// runs with the configured mounts.
const ROOTS_WAIT: Duration = Duration::from_secs(5);

impl Server {
    /// A server for `toolbox` that runs at most `max_concurrent_calls` calls at once.
    pub fn new(
        toolbox: Arc<Toolbox>,
        max_concurrent_calls: usize,
        policy: MountPolicy,
        state_key: StateKey,
    ) -> Server {
        let (_, toolbox) = watch::channel(Some(toolbox));
        Server::with(toolbox, max_concurrent_calls, policy, state_key)
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
        toolbox: watch::Receiver<Option<Arc<Toolbox>>>,
        max_concurrent_calls: usize,
        policy: MountPolicy,
        state_key: StateKey,
    ) -> Server {
        let slots = max_concurrent_calls.max(1);
        Server {
            toolbox,
            calls: Arc::new(Semaphore::new(slots)),
            slots,
            in_flight: Arc::new(AtomicUsize::new(0)),
            stopping: CancellationToken::new(),
            log_level: Arc::new(AtomicU8::new(0)),
            policy: Arc::new(policy),
            roots: Arc::new(watch::Sender::new(Roots::Known(None))),
            state_key: Arc::new(state_key),
            watched: Arc::default(),
        }
    }

    /// A server for a new session: the same tools, call slots and shutdown
    /// as this one, with its own log level and client roots.
    pub fn session(&self) -> Server {
        Server {
            log_level: Arc::new(AtomicU8::new(0)),
            roots: Arc::new(watch::Sender::new(Roots::Known(None))),
            watched: Arc::default(),
            ..self.clone()
        }
    }

    /// Shuts down calls: refuses new ones, lets running ones finish for up
    /// to `grace`, then interrupts the rest and waits (briefly) for them.
    pub async fn drain(&self, grace: Duration) {
        let started = Instant::now();
        let running = self.in_flight.load(Ordering::Acquire);
        if running > 0 {
            tracing::info!(running, "waiting for running calls to finish");
        }
        while self.in_flight.load(Ordering::Acquire) > 0 && started.elapsed() < grace {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.stopping.cancel();
        // An interrupted call ends at once: its future is dropped.
        let cutoff = Instant::now() + Duration::from_secs(2);
        while self.in_flight.load(Ordering::Acquire) > 0 && Instant::now() < cutoff {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Waits (up to [`CAPABILITIES_WAIT`]) for the plugins to load, so
    /// that the capabilities declared say what they offer. A first start
    /// that compiles every plugin can take longer: its first session then
    /// declares tools and logging only.
    async fn wait_for_capabilities(&self) {
        let mut toolbox = self.toolbox.clone();
        let loaded = tokio::time::timeout(CAPABILITIES_WAIT, toolbox.wait_for(Option::is_some));
        if loaded.await.is_err() {
            tracing::info!(
                "the plugins are still loading: declaring tools and logging only to this client"
            );
        }
    }

    /// The tools, once loaded.
    async fn toolbox(&self) -> Result<Arc<Toolbox>, ErrorData> {
        let mut toolbox = self.toolbox.clone();
        // Fails only when loading ended without tools (the sender is gone).
        let loaded = toolbox.wait_for(Option::is_some).await.ok();
        loaded
            .and_then(|toolbox| toolbox.clone())
            .ok_or_else(|| ErrorData::internal_error("the plugins failed to load", None))
    }

    /// Runs one call: validation, a slot, the sandbox, the result. Used by
    /// `toolcell call`; `tools/call` goes through `Server::run_call`. The
    /// call's deadline starts now, so time spent waiting for a slot counts
    /// against its `timeout_ms`.
    pub async fn call(
        &self,
        name: &str,
        arguments: Option<serde_json::Map<String, Value>>,
        cx: CallContext,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(match self.run_call(name, arguments, cx).await? {
            Ok(result) => result,
            Err(interruption) => error_result(format!("`{name}` stopped: {interruption}")),
        })
    }

    /// [`Server::call`], or why the run stopped to wait for the client.
    async fn run_call(
        &self,
        name: &str,
        arguments: Option<serde_json::Map<String, Value>>,
        mut cx: CallContext,
    ) -> Result<Result<CallToolResult, Interruption>, ErrorData> {
        let accepted = Instant::now();
        let toolbox = self.toolbox().await?;
        let Some(route) = toolbox.get(name).cloned() else {
            let message = toolbox
                .why_disabled(&self.policy.categories, name)
                .unwrap_or_else(|| {
                    format!("unknown tool `{name}`; tools/list shows the tools this server offers")
                });
            tracing::debug!(tool = name, "refused a call: {message}");
            return Err(ErrorData::invalid_params(message, None));
        };
        if self.stopping.is_cancelled() {
            return Ok(Ok(error_result("the server is shutting down".to_string())));
        }
        let mut arguments = Value::Object(arguments.unwrap_or_default());
        if let Err(message) = route.spec.validate(&mut arguments) {
            tracing::debug!(tool = name, "refused a call: {message}");
            return Ok(Ok(error_result(message)));
        }
        if self.policy.client_roots {
            cx.mounts = self.client_roots().await;
            let mounts = cx.mounts.as_deref().unwrap_or(&route.spec.mounts);
            if mounts.is_empty() {
                return Ok(Ok(error_result(self.no_folder(name))));
            }
        }
        let text = arguments.to_string();
        let plugin = route.plugin.clone();
        let spec = route.spec.clone();
        let work = move |cx: CallContext| async move { plugin.call(&spec, text, &cx).await };
        let timeout_ms = route.spec.limits.timeout_ms;
        Ok(
            match self.in_slot(name, timeout_ms, accepted, cx, work).await {
                Ok(result) => Ok(result),
                Err(CallError::Interrupted { interruption, .. }) => Err(interruption),
                Err(error) => {
                    tracing::debug!(tool = name, "call failed: {error}");
                    Ok(error_result(error.to_string()))
                }
            },
        )
    }

    /// Runs `work` in one of the call slots, on a blocking-pool thread of
    /// its own, by a deadline of `timeout_ms` from `accepted` (unless `cx`
    /// has an earlier one). Tool calls, resource reads, prompts and
    /// completions all run this way, so they share the slots and limits.
    async fn in_slot<R, F>(
        &self,
        what: &str,
        timeout_ms: u64,
        accepted: Instant,
        mut cx: CallContext,
        work: impl FnOnce(CallContext) -> F + Send + 'static,
    ) -> Result<R, CallError>
    where
        R: Send + 'static,
        F: Future<Output = Result<R, CallError>>,
    {
        let tool = || what.to_string();
        let deadline = *cx
            .deadline
            .get_or_insert(accepted + Duration::from_millis(timeout_ms));
        cx.cancel.push(self.stopping.clone());
        let permit = tokio::select! {
            biased;
            permit = Arc::clone(&self.calls).acquire_owned() => permit
                .map_err(|_| CallError::Cancelled { tool: tool() })?,
            () = cx.cancelled() => return Err(CallError::Cancelled { tool: tool() }),
            () = tokio::time::sleep_until(deadline) => return Err(CallError::Busy {
                tool: tool(),
                ms: timeout_ms,
                slots: self.slots,
            }),
        };
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        let _in_flight = InFlight(self.in_flight.clone());
        let _slot = permit;
        // The guest runs on a blocking-pool thread of its own, where its file
        // operations are done in place: fast, and harmless to the runtime's
        // workers if one blocks in the kernel (a hung disk; FIFOs are never
        // opened). The thread ends the call by its deadline or cancellation
        // (see `Plugin::call`); should it be stuck in a system call, this side
        // answers anyway a moment later, gives the slot back, and tells the
        // thread to stop when the kernel lets it go.
        let stop = CancellationToken::new();
        let _stop = stop.clone().drop_guard();
        cx.cancel.push(stop);
        let watched = cx.clone();
        let runtime = tokio::runtime::Handle::current();
        let mut task = tokio::task::spawn_blocking(move || runtime.block_on(work(cx)));
        tokio::select! {
            biased;
            joined = &mut task => joined.unwrap_or_else(|join| {
                tracing::error!(what, "call task failed: {join}");
                Err(CallError::Trap {
                    tool: tool(),
                    reason: "its task failed inside the server".to_string(),
                })
            }),
            () = watched.cancelled() => Err(CallError::Cancelled { tool: tool() }),
            () = tokio::time::sleep_until(deadline + STRAGGLE) => {
                tracing::warn!(what, "a call is stuck in a system call past its deadline");
                Err(CallError::Timeout { tool: tool(), ms: timeout_ms })
            }
        }
    }

    /// Runs `work` for a resource listing or read, a prompt or a
    /// completion on `plugin`: in a call slot, with the plugin's limits,
    /// `client` to ask, and (for the embedded default) the client's roots as
    /// its mounts. A run that fails (a trap, the time limit) is a JSON-RPC
    /// internal error saying so: these requests have no `isError` result.
    async fn feature<R, F>(
        &self,
        plugin: &Arc<Plugin>,
        what: &str,
        ct: CancellationToken,
        client: Option<Arc<dyn ClientAsk>>,
        work: impl FnOnce(Arc<Plugin>, CallContext) -> F + Send + 'static,
    ) -> Result<Result<R, Interruption>, ErrorData>
    where
        R: Send + 'static,
        F: Future<Output = Result<R, CallError>>,
    {
        let accepted = Instant::now();
        if self.stopping.is_cancelled() {
            return Err(ErrorData::internal_error(
                "the server is shutting down",
                None,
            ));
        }
        let mut cx = CallContext {
            cancel: vec![ct],
            client,
            ..CallContext::default()
        };
        if self.policy.client_roots {
            cx.mounts = self.client_roots().await;
        }
        let timeout_ms = plugin.limits().timeout_ms;
        let plugin = plugin.clone();
        match self
            .in_slot(what, timeout_ms, accepted, cx, move |cx| work(plugin, cx))
            .await
        {
            Ok(result) => Ok(Ok(result)),
            Err(CallError::Interrupted { interruption, .. }) => Ok(Err(interruption)),
            Err(error) => {
                tracing::debug!(what, "failed: {error}");
                Err(ErrorData::internal_error(error.to_string(), None))
            }
        }
    }

    /// A digest of the contents of `uri`, read as `resources/read` reads it;
    /// `None` when no plugin serves it.
    async fn digest_of(
        &self,
        uri: &str,
        ct: CancellationToken,
    ) -> Result<Option<[u8; 32]>, ErrorData> {
        let toolbox = self.toolbox().await?;
        for plugin in toolbox.readers(uri) {
            let asked = uri.to_string();
            let what = format!("resource `{uri}`");
            let read = self
                .feature(&plugin, &what, ct.clone(), None, async move |plugin, cx| {
                    plugin.read_resource(&asked, &cx).await
                })
                .await?;
            match read {
                Ok(Ok(result)) => {
                    let json = serde_json::to_vec(&result.contents).unwrap_or_default();
                    return Ok(Some(Sha256::digest(json).into()));
                }
                Ok(Err(Failure::NotFound(_))) => continue,
                Ok(Err(failure)) => return Err(failure_error(failure, None)),
                Err(interruption) => {
                    return Err(ErrorData::internal_error(
                        format!("a followed resource cannot ask the client: {interruption}"),
                        None,
                    ));
                }
            }
        }
        Ok(None)
    }

    /// Who answers a plugin's questions during the request of `cx`: a
    /// 2025-11-25 session's client, or (2026-07-28) the answers the request
    /// carries, checked against the binding of `method`, `name` and the
    /// `arguments` (made only for a 2026-07-28 request).
    fn asker(
        &self,
        cx: &RequestContext<RoleServer>,
        (method, name): (&str, &str),
        arguments: impl FnOnce() -> Value,
        state: Option<&str>,
        responses: Option<rmcp::model::InputResponses>,
    ) -> Result<Asker, ErrorData> {
        let stateless = cx
            .protocol_version()
            .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
        Ok(if stateless {
            let binding = relay::binding(method, name, &arguments());
            let client = StatelessClient::of(cx, &self.state_key, &binding, state, responses)?;
            Asker::Stateless(Arc::new(client), binding)
        } else {
            Asker::Session(Arc::new(PeerClient::of(cx)))
        })
    }

    /// The toolbox, when a loaded plugin offers `capability` (`offers`
    /// says); else -32601 for `method`, as for a capability not declared.
    async fn offering(
        &self,
        method: &str,
        capability: &str,
        offers: impl FnOnce(&Toolbox) -> bool,
    ) -> Result<Arc<Toolbox>, ErrorData> {
        let toolbox = self.toolbox().await?;
        if offers(&toolbox) {
            Ok(toolbox)
        } else {
            Err(not_offered(method, capability))
        }
    }

    /// The directories this session's calls see instead of the configured
    /// ones: the client's roots once known, waiting a little for the first
    /// answer.
    async fn client_roots(&self) -> Option<Arc<[Mount]>> {
        let mut roots = self.roots.subscribe();
        let known = tokio::time::timeout(
            ROOTS_WAIT,
            roots.wait_for(|roots| matches!(roots, Roots::Known(_))),
        )
        .await;
        match known {
            Ok(Ok(roots)) => match &*roots {
                Roots::Known(mounts) => mounts.clone(),
                Roots::Waiting => None,
            },
            _ => {
                tracing::info!(
                    "the client has not answered roots/list; using the configured directories"
                );
                None
            }
        }
    }

    fn no_folder(&self, tool: &str) -> String {
        let reason = self
            .policy
            .unmounted_reason
            .as_deref()
            .unwrap_or("the configuration grants no directory");
        format!(
            "`{tool}` has no folder to work in: {reason}, and the client offers no MCP roots. \
             Grant a folder by starting Toolcell with `--mount DIR` (read-only; `--mount DIR:rw` \
             also allows writes), or with `--config FILE` naming a plugins.toml whose mounts list \
             the folders."
        )
    }

    /// Asks the client for its roots and makes them this session's mounts.
    async fn refresh_roots(&self, peer: &Peer<RoleServer>) {
        let listed = tokio::time::timeout(ROOTS_WAIT, peer.list_roots()).await;
        let mounts = match listed {
            Ok(Ok(listed)) => {
                let mounts: Vec<Mount> = listed
                    .roots
                    .iter()
                    .filter_map(|root| root_mount(&root.uri))
                    .collect();
                if mounts.is_empty() {
                    tracing::info!("the client offers no usable roots");
                    None
                } else {
                    let shown: Vec<String> = mounts
                        .iter()
                        .map(|m| m.host.display().to_string())
                        .collect();
                    tracing::info!("mounted the client's roots read-only: {}", shown.join(", "));
                    Some(Arc::from(mounts))
                }
            }
            Ok(Err(error)) => {
                tracing::info!("roots/list failed ({error}); using the configured directories");
                None
            }
            Err(_) => {
                tracing::info!(
                    "the client did not answer roots/list; using the configured directories"
                );
                None
            }
        };
        self.roots.send_replace(Roots::Known(mounts));
    }
}

/// The directory a root's `file://` URI names, if it is one.
fn root_mount(uri: &str) -> Option<Mount> {
    let path: Option<PathBuf> = url::Url::parse(uri)
        .ok()
        .filter(|url| url.scheme() == "file")
        .and_then(|url| url.to_file_path().ok());
    let Some(path) = path else {
        tracing::info!("ignoring root {uri:?}: not a file:// URI");
        return None;
    };
    match std::fs::canonicalize(&path) {
        Ok(host) if host.is_dir() => Some(Mount {
            host,
            writable: false,
        }),
        Ok(_) => {
            tracing::info!("ignoring root {uri:?}: not a directory");
            None
        }
        Err(error) => {
            tracing::info!("ignoring root {uri:?}: {error}");
            None
        }
    }
}

/// Hands a [`Server::loading`] server its tools.
pub struct Loading(watch::Sender<Option<Arc<Toolbox>>>);

impl Loading {
    /// The tools are loaded: requests waiting for them go on.
    pub fn ready(self, toolbox: Arc<Toolbox>) {
        self.0.send_replace(Some(toolbox));
    }
}

/// Counts a call as running until dropped.
struct InFlight(Arc<AtomicUsize>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// How long after its deadline a call's thread may take to report that it
/// stopped before the server answers without it.
const STRAGGLE: Duration = Duration::from_millis(250);

fn error_result(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// At most one progress notification per call goes out in this interval;
/// the last report is always sent, before the result.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(250);

/// Log messages a call may have queued for the client; more are dropped.
const QUEUED_REPORTS: usize = 256;

/// What a running call reports, on its way to the client.
enum Report {
    /// A new progress value is in [`Reporter::latest`].
    Progress,
    Log(LogLevel, String),
}

/// A progress report: progress, total, message.
type Progress = (f64, Option<f64>, Option<String>);

/// Queues a call's reports for the task that sends them as notifications.
/// Only the latest progress is kept, so a plugin that reports in a tight
/// loop costs a slot, not a queue.
struct Reporter {
    tx: mpsc::Sender<Report>,
    latest: Arc<Mutex<Option<Progress>>>,
    wants_progress: bool,
    log_level: Arc<AtomicU8>,
}

impl CallObserver for Reporter {
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        if self.wants_progress {
            let mut latest = self.latest.lock().unwrap_or_else(PoisonError::into_inner);
            let wake = latest.is_none();
            *latest = Some((progress, total, message));
            if wake {
                // Full or closed: the sender finds the value anyway.
                let _ = self.tx.try_send(Report::Progress);
            }
        }
    }

    fn log(&self, level: LogLevel, message: &str) {
        let wanted = self.log_level.load(Ordering::Relaxed);
        if wanted != 0 && rank(mcp_level(level)) >= wanted {
            let _ = self.tx.try_send(Report::Log(level, message.to_string()));
        }
    }
}

fn mcp_level(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Trace | LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
    }
}

/// MCP log levels in increasing severity, from 1.
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 1,
        LoggingLevel::Info => 2,
        LoggingLevel::Notice => 3,
        LoggingLevel::Warning => 4,
        LoggingLevel::Error => 5,
        LoggingLevel::Critical => 6,
        LoggingLevel::Alert => 7,
        LoggingLevel::Emergency => 8,
    }
}

/// Sends a call's reports as notifications until the call ends: log
/// messages as they come, progress at most once per [`PROGRESS_INTERVAL`],
/// and the last progress report at the end.
async fn notify(
    mut reports: mpsc::Receiver<Report>,
    latest: Arc<Mutex<Option<Progress>>>,
    peer: Peer<RoleServer>,
    progress_token: Option<ProgressToken>,
    tool: String,
) {
    let send_progress = async |peer: &Peer<RoleServer>| {
        let taken = latest.lock().unwrap_or_else(PoisonError::into_inner).take();
        let (Some((progress, total, message)), Some(token)) = (taken, progress_token.clone())
        else {
            return;
        };
        let mut param = ProgressNotificationParam::new(token, progress);
        param.total = total;
        param.message = message;
        if let Err(error) = peer.notify_progress(param).await {
            tracing::debug!("cannot send a progress notification: {error}");
        }
    };
    let mut next_progress = Instant::now();
    let mut held = false;
    loop {
        let report = if held {
            tokio::select! {
                report = reports.recv() => report,
                () = tokio::time::sleep_until(next_progress) => {
                    send_progress(&peer).await;
                    next_progress = Instant::now() + PROGRESS_INTERVAL;
                    held = false;
                    continue;
                }
            }
        } else {
            reports.recv().await
        };
        match report {
            None => break,
            Some(Report::Progress) if Instant::now() >= next_progress => {
                send_progress(&peer).await;
                next_progress = Instant::now() + PROGRESS_INTERVAL;
            }
            Some(Report::Progress) => held = true,
            Some(Report::Log(level, message)) => {
                let mut param = LoggingMessageNotificationParam::new(
                    mcp_level(level),
                    serde_json::json!({ "tool": tool, "message": message }),
                );
                param.logger = Some("toolcell".to_string());
                if let Err(error) = peer.notify_logging_message(param).await {
                    tracing::debug!("cannot send a log notification: {error}");
                }
            }
        }
    }
    send_progress(&peer).await;
}

/// The capabilities to declare: tools and logging always, and resources,
/// prompts and completions when a loaded plugin offers them. While the
/// plugins are still loading, only tools and logging.
fn capabilities(toolbox: Option<&Toolbox>) -> ServerCapabilities {
    let mut capabilities = ServerCapabilities::builder()
        .enable_tools()
        .enable_logging()
        .build();
    if let Some(toolbox) = toolbox {
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

/// Follows a subscribed resource for a session: reads it every
/// [`WATCH_INTERVAL`] and sends `notifications/resources/updated` when its
/// contents change (or it goes), until the session ends, the client
/// unsubscribes (which aborts this task) or the server stops. `last` is the
/// digest of the contents when the client subscribed.
async fn follow(server: Server, peer: Peer<RoleServer>, uri: String, last: [u8; 32]) {
    let mut last = Some(last);
    loop {
        tokio::time::sleep(WATCH_INTERVAL).await;
        if peer.is_transport_closed() || server.stopping.is_cancelled() {
            break;
        }
        let now = match server.digest_of(&uri, CancellationToken::new()).await {
            Ok(now) => now,
            Err(error) => {
                tracing::debug!(uri, "cannot read a followed resource: {}", error.message);
                continue;
            }
        };
        if now == last {
            continue;
        }
        last = now;
        let updated = ResourceUpdatedNotificationParam::new(uri.clone());
        if peer.notify_resource_updated(updated).await.is_err() {
            break;
        }
    }
}

/// Who answers a plugin's questions during one request.
enum Asker {
    /// A 2025-11-25 session's client, asked directly.
    Session(Arc<PeerClient>),
    /// A 2026-07-28 request's answers, and the request's binding.
    Stateless(Arc<StatelessClient>, Vec<u8>),
}

impl Asker {
    fn client(&self) -> Arc<dyn ClientAsk> {
        match self {
            Asker::Session(client) => client.clone(),
            Asker::Stateless(client, _) => client.clone(),
        }
    }

    /// What the client is sent when the run stopped for `interruption`.
    fn answer(
        &self,
        key: &StateKey,
        interruption: Interruption,
    ) -> Result<InputRequiredResult, ErrorData> {
        match self {
            Asker::Stateless(client, binding) => client.answer(key, binding, interruption),
            // A session's client is asked directly: nothing stops a run.
            Asker::Session(_) => Err(ErrorData::internal_error(
                format!("the run stopped: {interruption}"),
                None,
            )),
        }
    }
}

/// A prompt's arguments as name and value pairs, checked against its
/// descriptor: every required one given, none unknown, all strings.
fn prompt_arguments(
    prompt: &Prompt,
    given: Option<serde_json::Map<String, Value>>,
) -> Result<Vec<(String, String)>, ErrorData> {
    let declared = prompt.arguments.as_deref().unwrap_or_default();
    let invalid = |message: String| ErrorData::invalid_params(message, None);
    let mut arguments = Vec::new();
    for (key, value) in given.unwrap_or_default() {
        if !declared.iter().any(|argument| argument.name == key) {
            return Err(invalid(format!(
                "prompt `{}` has no argument `{key}`",
                prompt.name
            )));
        }
        let Value::String(value) = value else {
            return Err(invalid(format!(
                "argument `{key}` of prompt `{}` must be a string",
                prompt.name
            )));
        };
        arguments.push((key, value));
    }
    for argument in declared {
        let given = arguments.iter().any(|(key, _)| *key == argument.name);
        if argument.required == Some(true) && !given {
            return Err(invalid(format!(
                "prompt `{}` needs argument `{}`",
                prompt.name, argument.name
            )));
        }
    }
    Ok(arguments)
}

/// The JSON-RPC error for a plugin's [`Failure`]. A resource that is not
/// found is -32602 with `data.uri` from revision 2026-07-28 on, and -32002
/// (with the same data) before it, as each revision asks.
fn failure_error(
    failure: Failure,
    resource: Option<(&str, &Option<ProtocolVersion>)>,
) -> ErrorData {
    match failure {
        Failure::NotFound(message) => match resource {
            Some((uri, version)) => {
                let data = Some(serde_json::json!({ "uri": uri }));
                let current = version
                    .as_ref()
                    .is_none_or(|version| *version >= ProtocolVersion::V_2026_07_28);
                if current {
                    ErrorData::invalid_params(message, data)
                } else {
                    ErrorData::resource_not_found(message, data)
                }
            }
            None => ErrorData::invalid_params(message, None),
        },
        Failure::Invalid(message) => ErrorData::invalid_params(message, None),
        Failure::Failed(message) => ErrorData::internal_error(message, None),
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let toolbox = self.toolbox.borrow().clone();
        ServerConfig::new(capabilities(toolbox.as_deref()))
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
        let tools: Vec<Tool> = self
            .toolbox()
            .await?
            .routes()
            .iter()
            .map(|route| route.spec.mcp.clone())
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let toolbox = self.toolbox.borrow();
        let route = toolbox.as_ref()?.get(name)?;
        Some(route.spec.mcp.clone())
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.log_level.store(rank(request.level), Ordering::Relaxed);
        Ok(())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let progress_token = cx.meta.get_progress_token();
        let asker = self.asker(
            &cx,
            ("tools/call", &name),
            || Value::Object(request.arguments.clone().unwrap_or_default()),
            request.request_state.as_deref(),
            request.input_responses,
        )?;
        let mut call = CallContext {
            cancel: vec![cx.ct.clone()],
            client: Some(asker.client()),
            ..CallContext::default()
        };
        // Reports become notifications in a task of their own, as the call
        // runs; none is started when the client asked for neither progress
        // nor log messages. (Over Streamable HTTP, rmcp puts progress on the
        // request's stream and log messages on the session's GET stream.)
        let reporter = (progress_token.is_some() || self.log_level.load(Ordering::Relaxed) != 0)
            .then(|| {
                let (tx, rx) = mpsc::channel(QUEUED_REPORTS);
                let latest = Arc::new(Mutex::new(None));
                call.observer = Some(Arc::new(Reporter {
                    tx,
                    latest: Arc::clone(&latest),
                    wants_progress: progress_token.is_some(),
                    log_level: self.log_level.clone(),
                }));
                tokio::spawn(notify(
                    rx,
                    latest,
                    cx.peer.clone(),
                    progress_token,
                    name.clone(),
                ))
            });
        let result = self.run_call(&name, request.arguments, call).await;
        // The call's end closed the channel: once the task has sent what was
        // queued, the response may follow. (A cancelled request's response
        // is dropped by rmcp, as MCP asks.)
        if let Some(reporter) = reporter {
            let _ = reporter.await;
        }
        match result? {
            Ok(result) => Ok(CallToolResponse::from(result)),
            Err(interruption) => asker
                .answer(&self.state_key, interruption)
                .map(CallToolResponse::from),
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let toolbox = self
            .offering("prompts/list", "prompts", |toolbox| {
                !toolbox.prompts().is_empty()
            })
            .await?;
        let prompts = toolbox.prompts().iter().map(|p| p.item.clone()).collect();
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let toolbox = self
            .offering("prompts/get", "prompts", |toolbox| {
                !toolbox.prompts().is_empty()
            })
            .await?;
        let name = request.name;
        let Some(offered) = toolbox.prompt(&name).cloned() else {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown prompt `{name}`; prompts/list shows the prompts this server offers"
                ),
                None,
            ));
        };
        let asker = self.asker(
            &cx,
            ("prompts/get", &name),
            || Value::Object(request.arguments.clone().unwrap_or_default()),
            request.request_state.as_deref(),
            request.input_responses,
        )?;
        let arguments = prompt_arguments(&offered.item, request.arguments)?;
        let what = format!("prompt `{name}`");
        let got = self
            .feature(
                &offered.plugin,
                &what,
                cx.ct.clone(),
                Some(asker.client()),
                async move |plugin, cx| plugin.get_prompt(&name, arguments, &cx).await,
            )
            .await?;
        match got {
            Ok(got) => got
                .map(GetPromptResponse::from)
                .map_err(|failure| failure_error(failure, None)),
            Err(interruption) => asker
                .answer(&self.state_key, interruption)
                .map(GetPromptResponse::from),
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let toolbox = self
            .offering("resources/list", "resources", Toolbox::serves_resources)
            .await?;
        let plugins = toolbox.resource_plugins();
        // Each plugin lists its resources now, with its mounts; one that
        // fails is logged and left out, and the others are listed.
        let lists = plugins.iter().map(|plugin| {
            let what = format!("resources of plugin `{}`", plugin.name());
            let ct = cx.ct.clone();
            async move {
                let listed = self
                    .feature(plugin, &what, ct, None, async |plugin, cx| {
                        plugin.list_resources(&cx).await
                    })
                    .await;
                let why = match listed {
                    Ok(Ok(listed)) => return listed,
                    Ok(Err(interruption)) => interruption.to_string(),
                    Err(error) => error.message.into_owned(),
                };
                tracing::warn!(plugin = plugin.name(), "cannot list resources: {why}");
                Vec::new()
            }
        });
        let mut resources: Vec<Resource> = Vec::new();
        for listed in futures_util::future::join_all(lists).await {
            for resource in listed {
                if !resources.iter().any(|r| r.uri == resource.uri) {
                    resources.push(resource);
                }
            }
        }
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let toolbox = self
            .offering(
                "resources/templates/list",
                "resources",
                Toolbox::serves_resources,
            )
            .await?;
        let templates = toolbox.templates().iter().map(|t| t.item.clone()).collect();
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let toolbox = self
            .offering("resources/read", "resources", Toolbox::serves_resources)
            .await?;
        let uri = request.uri;
        let version = cx.protocol_version();
        let asker = self.asker(
            &cx,
            ("resources/read", &uri),
            || Value::Null,
            request.request_state.as_deref(),
            request.input_responses,
        )?;
        for plugin in toolbox.readers(&uri) {
            let what = format!("resource `{uri}`");
            let asked = uri.clone();
            let read = self
                .feature(
                    &plugin,
                    &what,
                    cx.ct.clone(),
                    Some(asker.client()),
                    async move |plugin, cx| plugin.read_resource(&asked, &cx).await,
                )
                .await?;
            match read {
                Ok(Ok(result)) => return Ok(ReadResourceResponse::from(result)),
                Ok(Err(Failure::NotFound(_))) => continue,
                Ok(Err(failure)) => {
                    return Err(failure_error(failure, Some((&uri, &version))));
                }
                Err(interruption) => {
                    let answer = asker.answer(&self.state_key, interruption);
                    return answer.map(ReadResourceResponse::from);
                }
            }
        }
        let message = format!(
            "no resource `{uri}`; resources/list and resources/templates/list show what this server offers"
        );
        Err(failure_error(
            Failure::NotFound(message),
            Some((&uri, &version)),
        ))
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
        let uri = request.uri;
        let version = cx.protocol_version();
        let Some(first) = self.digest_of(&uri, cx.ct.clone()).await? else {
            let message = format!("no resource `{uri}` to subscribe to");
            return Err(failure_error(
                Failure::NotFound(message),
                Some((&uri, &version)),
            ));
        };
        {
            let watched = self.watched.lock().unwrap_or_else(PoisonError::into_inner);
            if !watched.contains_key(&uri) && watched.len() >= MAX_SUBSCRIPTIONS {
                return Err(ErrorData::invalid_params(
                    format!(
                        "this session already follows {MAX_SUBSCRIPTIONS} resources, the most \
                         it may; unsubscribe from one first"
                    ),
                    None,
                ));
            }
        }
        let task = tokio::spawn(follow(self.clone(), cx.peer.clone(), uri.clone(), first));
        let replaced = self
            .watched
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(uri, task.abort_handle());
        if let Some(replaced) = replaced {
            replaced.abort();
        }
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // Resources only: the lists of tools, prompts and templates do not
        // change while the server runs. rmcp keeps what `get_info`
        // declares, so while the plugins are still loading (nothing
        // declared yet) the acknowledgment lists no resources, and the
        // client sees that.
        let mut accepted = SubscriptionFilter::default();
        accepted.resource_subscriptions = requested
            .resource_subscriptions
            .as_ref()
            .map(|uris| uris.iter().take(MAX_SUBSCRIPTIONS).cloned().collect());
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let uris = context
            .accepted()
            .resource_subscriptions
            .clone()
            .unwrap_or_default();
        let sink = context.sink().clone();
        // Each resource is followed as `resources/subscribe` follows one,
        // until the client cancels the stream or the server stops.
        let follow = async {
            let mut last = Vec::with_capacity(uris.len());
            for uri in &uris {
                last.push(
                    self.digest_of(uri, CancellationToken::new())
                        .await
                        .ok()
                        .flatten(),
                );
            }
            loop {
                tokio::time::sleep(WATCH_INTERVAL).await;
                for (uri, last) in uris.iter().zip(last.iter_mut()) {
                    let Ok(now) = self.digest_of(uri, CancellationToken::new()).await else {
                        continue;
                    };
                    if now != *last {
                        *last = now;
                        if sink.notify_resource_updated(uri.clone()).await.is_err() {
                            return;
                        }
                    }
                }
            }
        };
        tokio::select! {
            () = context.cancelled() => {}
            () = self.stopping.cancelled() => {}
            () = follow => {}
        }
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let removed = self
            .watched
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&request.uri);
        if let Some(removed) = removed {
            removed.abort();
        }
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let toolbox = self
            .offering("completion/complete", "completions", Toolbox::completes)
            .await?;
        let (target, plugin) = match &request.r#ref {
            Reference::Prompt(reference) => {
                let offered = toolbox.prompt(&reference.name).ok_or_else(|| {
                    ErrorData::invalid_params(format!("unknown prompt `{}`", reference.name), None)
                })?;
                (
                    v2::CompletionTarget::Prompt(reference.name.clone()),
                    offered.plugin.clone(),
                )
            }
            Reference::Resource(reference) => {
                let offered = toolbox.template(&reference.uri).ok_or_else(|| {
                    ErrorData::invalid_params(
                        format!("unknown resource template `{}`", reference.uri),
                        None,
                    )
                })?;
                (
                    v2::CompletionTarget::ResourceTemplate(reference.uri.clone()),
                    offered.plugin.clone(),
                )
            }
            other => {
                return Err(ErrorData::invalid_params(
                    format!("cannot complete for {other:?}: only prompts and resource templates"),
                    None,
                ));
            }
        };
        let mut context: Vec<(String, String)> = request
            .context
            .and_then(|context| context.arguments)
            .unwrap_or_default()
            .into_iter()
            .collect();
        context.sort();
        let asked = v2::CompletionRequest {
            target,
            argument: request.argument.name,
            value: request.argument.value,
            context,
        };
        let completed = self
            .feature(
                &plugin,
                "completion",
                cx.ct,
                None,
                async move |plugin, cx| plugin.complete(asked, &cx).await,
            )
            .await?;
        match completed {
            Ok(completed) => completed
                .map(CompleteResult::new)
                .map_err(|failure| failure_error(failure, None)),
            Err(interruption) => Err(ErrorData::internal_error(
                format!("a completion cannot ask the client: {interruption}"),
                None,
            )),
        }
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _cx: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
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
