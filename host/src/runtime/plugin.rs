//! One loaded plugin: its compiled component, its tools, and per-call stores.
//!
//! [`Plugin::load`] compiles (or loads from cache) a component, links it
//! against the sandbox's imports (`link`), keeps an `InstancePre`, and tells
//! its kind by what it exports: the Toolcell contract (asked for its tools
//! once, in an instance of its own), else a WASI command (one tool,
//! `runtime::command`), else a plain component (each exported function a
//! tool, `runtime::plain`, read from its types without an instance). A
//! builtin whose listing the compile cache remembers is served from it and
//! linked afterwards, so that a warm start waits for no code; a run waits
//! for the link within its own deadline. A tool is served by its own
//! name, or its `rename`, or with the plugin's `prefix`; the guest is
//! always called by its own. Each [`ToolSpec`] holds a
//! validated descriptor and the argument validator (compiled on first use,
//! then kept), so nothing is parsed again per call.
//! [`Plugin::call`] then runs one call in a fresh `Store` (a new instance, a
//! new WASI context), with the plugin's time, memory and handle limits; every
//! way a call can fail becomes a [`CallError`] whose message the model can
//! read.
//!
//! A call ends by its deadline whatever the guest is doing. Running wasm
//! yields at every epoch tick, and clocks, sockets and HTTP bodies are
//! futures, so the timer and the cancellation tokens that race the call in
//! [`Plugin::call`] get to fire; when one does, the call's future is dropped
//! with its store, instance and handles. File operations are done in place on
//! the thread that runs the call, which the server makes a thread of the
//! call's own (its awake call thread or a blocking-pool thread): should one
//! block in the kernel, the server answers at the deadline without it (see
//! `protocol::server::slots`).
//!
//! What a run returns is the contract's data; `protocol::mcp` turns it into
//! MCP within the output cap.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use tokio::sync::SetOnce;
use tokio::time::Instant;
use wasmtime::component::{Instance, ResourceTableError};
use wasmtime::{CallHook, Store, UpdateDeadline};

use crate::config::{Limits, Mount, PluginConfig};
use crate::limits::{GUEST_OUTPUT_LOG_BYTES, MAX_LISTED};
use crate::runtime::call::{CallContext, CallError, Interruption};
use crate::runtime::command;
use crate::runtime::component_file::Wasm;
use crate::runtime::contract::{Exports, tools as wit, v1, v2};
use crate::runtime::engine::{Engine, TickGuard};
use crate::runtime::host::{CallSetup, CallState, LazyImports};
use crate::runtime::offerings::{self, Failure, Offerings};
use crate::runtime::plain;
use crate::runtime::sandbox::{self, CommandStdio, Grants, NetworkPolicy};
use crate::runtime::spec::{ToolSpec, check_listing_size};

mod link;

use link::{Kind, Linked, PendingLink, Shape, link};

/// A compiled, linked plugin.
pub struct Plugin {
    name: Arc<str>,
    engine: Arc<Engine>,
    /// Its code, linked: at load, or later for a builtin whose listing the
    /// compile cache remembers (see [`Plugin::link_now`]).
    linked: Arc<SetOnce<Result<Linked, String>>>,
    /// The link still to do, for a plugin loaded before it was linked.
    pending: Mutex<Option<PendingLink>>,
    shape: Shape,
    /// Whether it exports `completions` (known before it is linked).
    completions: bool,
    refused: Vec<plain::Refused>,
    offerings: Offerings,
    grants: Grants,
    config: Arc<BTreeMap<String, String>>,
    limits: Limits,
    /// Its own cap on calls running at once (`max_concurrent_calls` in its `limits`), if any.
    gate: Option<Gate>,
    tools: Vec<Arc<ToolSpec>>,
}

/// A plugin's own cap on calls running at once.
#[derive(Clone, Debug)]
pub struct Gate {
    /// One permit per call that may run.
    pub permits: Arc<tokio::sync::Semaphore>,
    /// How many there are.
    pub size: usize,
    /// The plugin's name, for saying whose cap a call waited for.
    pub plugin: Arc<str>,
}

/// Everything a plugin needs to load.
pub struct PluginSetup<'a> {
    /// Its `[[plugin]]`: name, grants, config, limits and per-tool overrides.
    pub config: &'a PluginConfig,
    /// The component's bytes, read only if needed.
    pub wasm: Wasm,
    /// Their SHA-256, the compile cache's key.
    pub sha256: [u8; 32],
    /// The granted environment variables that are set, with their values.
    pub env: Vec<(String, String)>,
    /// Whether it may be linked after it is loaded, when the compile cache
    /// remembers its listing: a builtin's, whose bytes are in the binary and
    /// so cannot change in between.
    pub link_later: bool,
}

impl Plugin {
    /// Compiles and links the component and reads its tool descriptors.
    ///
    /// A builtin whose listing the compile cache remembers is served from
    /// that listing and linked later: by [`Plugin::link_now`] (the toolbox
    /// does it in the background once loaded), or by its first call, which
    /// waits for it within its deadline. A warm start so waits for no code.
    pub fn load(
        engine: Arc<Engine>,
        imports: &Arc<LazyImports>,
        mut setup: PluginSetup,
    ) -> Result<Plugin> {
        let config = setup.config;
        let name: Arc<str> = Arc::from(config.name.as_str());
        let mut plugin = Plugin {
            name: Arc::clone(&name),
            engine,
            linked: Arc::new(SetOnce::new()),
            pending: Mutex::new(None),
            shape: Shape::Contract,
            completions: false,
            refused: Vec::new(),
            offerings: Offerings::default(),
            grants: Grants {
                mounts: config.mounts.clone(),
                env: std::mem::take(&mut setup.env),
                network: config.network.clone().into(),
            },
            config: Arc::new(config.config.clone()),
            limits: config.limits,
            gate: config.max_concurrent_calls.map(|n| Gate {
                permits: Arc::new(tokio::sync::Semaphore::new(n.max(1))),
                size: n.max(1),
                plugin: Arc::clone(&name),
            }),
            tools: Vec::new(),
        };
        let remembered = if setup.link_later {
            remembered_listing(&plugin, &setup.sha256)
        } else {
            None
        };
        let descriptors = if let Some(listing) = remembered {
            plugin.completions = listing.completions;
            plugin.pending = Mutex::new(Some(PendingLink {
                imports: Arc::clone(imports),
                wasm: setup.wasm,
                sha256: setup.sha256,
            }));
            plugin.accept_listing(listing)?
        } else {
            let (linked, refused) = link(
                &plugin.engine,
                imports.get()?,
                &name,
                &mut setup.wasm,
                &setup.sha256,
            )?;
            drop(setup.wasm);
            plugin.shape = linked.kind.shape();
            plugin.completions = linked.contract().is_some_and(|e| e.completions.is_some());
            plugin.refused = refused;
            let descriptors = match &linked.kind {
                Kind::Contract(_) => None,
                Kind::Command(_) => {
                    Some(vec![by_grants(command::descriptor(&plugin.name), config)])
                }
                Kind::Plain(functions) => Some(
                    functions
                        .iter()
                        .map(|f| by_grants(f.descriptor.clone(), config))
                        .collect(),
                ),
            };
            let _ = plugin.linked.set(Ok(linked));
            match descriptors {
                Some(descriptors) => descriptors,
                None => {
                    let listing = listing(&plugin, &setup.sha256).with_context(|| {
                        format!("plugin `{}` failed to list its tools", plugin.name)
                    })?;
                    plugin.accept_listing(listing)?
                }
            }
        };
        check_listing_size(&descriptors)
            .with_context(|| format!("plugin `{}` is refused", plugin.name))?;
        let mut tools = Vec::with_capacity(descriptors.len());
        for descriptor in descriptors {
            let tool_name = descriptor.name.clone();
            let mounts = config.mounts_for(&tool_name).to_vec();
            let limits = config.limits_for(&tool_name);
            let served = config.served_name(&tool_name);
            let spec = ToolSpec::new(descriptor, mounts, limits)
                .and_then(|spec| spec.serve_as(served))
                .with_context(|| {
                    format!("plugin `{}` has an invalid tool `{tool_name}`", plugin.name)
                })?;
            if tools.iter().any(|t: &Arc<ToolSpec>| t.name == spec.name) {
                bail!("plugin `{}` lists tool `{}` twice", plugin.name, spec.name);
            }
            tools.push(Arc::new(spec));
        }
        plugin.tools = tools;
        Ok(plugin)
    }

    /// Keeps what a contract plugin listed besides its tools, once checked,
    /// and returns the tools.
    fn accept_listing(&mut self, listing: Listing) -> Result<Vec<v1::ToolDescriptor>> {
        self.offerings = offerings::check(listing.resources, listing.templates, listing.prompts)
            .with_context(|| format!("plugin `{}` is refused", self.name))?;
        Ok(listing.tools)
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Every tool the plugin offers.
    pub fn tools(&self) -> &[Arc<ToolSpec>] {
        &self.tools
    }

    /// The plugin's grants.
    pub fn grants(&self) -> &Grants {
        &self.grants
    }

    /// What kind of component it is: `contract`, `command` or `plain`.
    pub fn kind(&self) -> &'static str {
        match self.shape {
            Shape::Contract => "contract",
            Shape::Command => "command",
            Shape::Plain => "plain",
        }
    }

    /// The exported functions of a plain component that are not served.
    pub fn refused(&self) -> &[plain::Refused] {
        &self.refused
    }

    /// Runs one call in a fresh instance.
    ///
    /// The guest runs on a fiber within the calling task and yields to the
    /// runtime at every epoch tick, so a long call does not hold a worker.
    /// The call ends by its deadline, or when it is cancelled, whatever the
    /// guest is doing (see the module docs).
    pub async fn call(
        &self,
        tool: &ToolSpec,
        arguments: String,
        cx: &CallContext,
    ) -> Result<v1::ToolResult, CallError> {
        let stdio = (self.shape == Shape::Command)
            .then(|| command::stdio(&self.name, &arguments, tool.limits.max_output_bytes));
        let scope = ToolScope {
            name: &tool.name,
            mounts: cx.mounts.as_deref().unwrap_or(&tool.mounts),
            env: &self.grants.env,
            network: &self.grants.network,
            read_only: tool.read_only(),
            limits: tool.limits,
            stdio: stdio.as_ref(),
        };
        let run = async {
            let linked = self.linked(scope.name).await?;
            let mut run = self.start(linked, &scope, cx).await?;
            let (store, instance) = (&mut run.store, &run.instance);
            let result = match &linked.kind {
                Kind::Contract(exports) => {
                    let call = wit::Call {
                        tool: tool.guest.clone(),
                        arguments,
                    };
                    match exports.tools.load(&mut *store, instance) {
                        Ok(tools) => tools.call_call_tool(&mut *store, &call).await,
                        Err(error) => Err(error),
                    }
                }
                Kind::Plain(functions) => {
                    match functions.iter().find(|f| f.descriptor.name == tool.guest) {
                        Some(function) => plain::call(store, instance, function, &arguments).await,
                        None => Err(wasmtime::format_err!("no function for `{}`", tool.guest)),
                    }
                }
                Kind::Command(indices) => match &stdio {
                    Some(stdio) => command::run(store, instance, indices, stdio).await,
                    None => Err(wasmtime::format_err!("a command run without its streams")),
                },
            };
            result.map_err(|error| self.failure(&run.store, &scope, error))
        };
        bounded(run, &scope, cx).await
    }

    /// The plugin's limits (a tool's own may differ).
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Its own cap on calls running at once, when its configuration sets one: a call takes a
    /// permit of it before a server-wide slot, so calls waiting for it hold no slot.
    pub fn gate(&self) -> Option<&Gate> {
        self.gate.as_ref()
    }

    /// Whether the plugin exports `completions`.
    pub fn exports_completions(&self) -> bool {
        self.completions
    }

    /// What the plugin offers besides tools, as listed at load time.
    pub fn offerings(&self) -> &Offerings {
        &self.offerings
    }

    /// Lists tools, and resources, templates and prompts where exported.
    async fn list_in(&self, exports: &Exports, run: &mut Run) -> wasmtime::Result<Listing> {
        let (store, instance) = (&mut run.store, &run.instance);
        let tools = exports.tools.load(&mut *store, instance)?;
        let mut listing = Listing {
            tools: tools.call_list_tools(&mut *store).await?,
            resources: Vec::new(),
            templates: Vec::new(),
            prompts: Vec::new(),
            completions: exports.completions.is_some(),
        };
        if let Some(resources) = &exports.resources {
            let resources = resources.load(&mut *store, instance)?;
            listing.resources = resources.call_list_resources(&mut *store).await?;
            listing.templates = resources.call_list_templates(&mut *store).await?;
        }
        if let Some(prompts) = &exports.prompts {
            let prompts = prompts.load(&mut *store, instance)?;
            listing.prompts = prompts.call_list_prompts(&mut *store).await?;
        }
        Ok(listing)
    }

    /// The scope of a resource read, prompt or completion: the plugin's
    /// mounts (or the call's), read-only, with the plugin's limits.
    fn feature_scope<'a>(&'a self, what: &'a str, cx: &'a CallContext) -> ToolScope<'a> {
        ToolScope {
            name: what,
            mounts: cx.mounts.as_deref().unwrap_or(&self.grants.mounts),
            env: &self.grants.env,
            network: &self.grants.network,
            read_only: true,
            limits: self.limits,
            stdio: None,
        }
    }

    /// Runs `work` on a fresh instance in `scope`, bounded like a call, with
    /// the export of the contract that `pick` chooses; `None` if the plugin
    /// does not export it.
    async fn run_feature<I, R>(
        &self,
        scope: &ToolScope<'_>,
        cx: &CallContext,
        pick: impl FnOnce(&Exports) -> Option<&I>,
        work: impl AsyncFnOnce(&mut Store<CallState>, &Instance, &I) -> wasmtime::Result<R>,
    ) -> Result<Option<R>, CallError> {
        let run = async {
            let linked = self.linked(scope.name).await?;
            let Some(indices) = linked.contract().and_then(pick) else {
                return Ok(None);
            };
            let mut run = self.start(linked, scope, cx).await?;
            let result = work(&mut run.store, &run.instance, indices).await;
            result
                .map(Some)
                .map_err(|error| self.failure(&run.store, scope, error))
        };
        bounded(run, scope, cx).await
    }

    /// The plugin's fixed resources, listed now with its mounts; empty if it
    /// does not export `resources`.
    pub async fn list_resources(
        &self,
        cx: &CallContext,
    ) -> Result<Vec<v2::ResourceDescriptor>, CallError> {
        let scope = self.feature_scope("resources/list", cx);
        let listed = self
            .run_feature(
                &scope,
                cx,
                |e| e.resources.as_ref(),
                async |store, instance, indices| {
                    let guest = indices.load(&mut *store, instance)?;
                    guest.call_list_resources(&mut *store).await
                },
            )
            .await?
            .unwrap_or_default();
        let invalid = |reason: String| CallError::InvalidResult {
            tool: scope.name.to_string(),
            reason,
        };
        let mut resources = Vec::with_capacity(listed.len());
        for descriptor in listed.into_iter().take(MAX_LISTED) {
            offerings::check_resource(&descriptor).map_err(|e| invalid(format!("{e:#}")))?;
            resources.push(descriptor);
        }
        Ok(resources)
    }

    /// Reads one resource.
    pub async fn read_resource(
        &self,
        uri: &str,
        cx: &CallContext,
    ) -> Result<Result<Vec<v2::ResourceContents>, Failure>, CallError> {
        let what = format!("resources/read {uri}");
        let scope = self.feature_scope(&what, cx);
        let read = self
            .run_feature(
                &scope,
                cx,
                |e| e.resources.as_ref(),
                async |store, instance, indices| {
                    let guest = indices.load(&mut *store, instance)?;
                    guest.call_read_resource(&mut *store, uri).await
                },
            )
            .await?;
        Ok(match read {
            Some(read) => read.map_err(Failure::from),
            None => Err(Failure::NotFound(format!("no resource `{uri}`"))),
        })
    }

    /// Fills in one prompt.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Vec<(String, String)>,
        cx: &CallContext,
    ) -> Result<Result<v2::Prompt, Failure>, CallError> {
        let what = format!("prompts/get {name}");
        let scope = self.feature_scope(&what, cx);
        let got = self
            .run_feature(
                &scope,
                cx,
                |e| e.prompts.as_ref(),
                async |store, instance, indices| {
                    let guest = indices.load(&mut *store, instance)?;
                    guest.call_get_prompt(&mut *store, name, &arguments).await
                },
            )
            .await?;
        Ok(match got {
            Some(got) => got.map_err(Failure::from),
            None => Err(Failure::NotFound(format!("no prompt `{name}`"))),
        })
    }

    /// Values for an argument of a prompt or a variable of a template; none
    /// if the plugin does not export `completions`.
    pub async fn complete(
        &self,
        request: v2::CompletionRequest,
        cx: &CallContext,
    ) -> Result<Result<v2::Completion, Failure>, CallError> {
        if !self.completions {
            return Ok(Ok(no_completion()));
        }
        let scope = self.feature_scope("completion/complete", cx);
        let completed = self
            .run_feature(
                &scope,
                cx,
                |e| e.completions.as_ref(),
                async |store, instance, indices| {
                    let guest = indices.load(&mut *store, instance)?;
                    guest.call_complete(&mut *store, &request).await
                },
            )
            .await?;
        Ok(match completed {
            Some(completed) => completed.map_err(Failure::from),
            None => Ok(no_completion()),
        })
    }

    /// A fresh store and instance for one run, with the scope's limits.
    async fn start(
        &self,
        linked: &Linked,
        scope: &ToolScope<'_>,
        cx: &CallContext,
    ) -> Result<Run, CallError> {
        let what = scope.name;
        let limits = scope.limits;
        let wasi = sandbox::wasi_ctx(
            &self.name,
            scope.mounts,
            scope.env,
            scope.read_only,
            GUEST_OUTPUT_LOG_BYTES,
            scope.stdio,
        )
        .map_err(|error| CallError::Setup {
            tool: what.to_string(),
            reason: format!("{error:#}"),
        })?;
        let memory_bytes =
            usize::try_from(limits.memory_mb.saturating_mul(1024 * 1024)).unwrap_or(usize::MAX);
        let state = CallState::new(CallSetup {
            wasi,
            network: NetworkPolicy::new(self.name.clone(), scope.network.clone()),
            plugin: self.name.clone(),
            tool: Arc::from(what),
            config: self.config.clone(),
            cx: cx.clone(),
            memory_bytes,
            handles: self.engine.handles_per_call(),
        });
        let mut store = Store::new(self.engine.wasmtime(), state);
        store.limiter(CallState::limiter);
        store.call_hook(|mut store, hook| {
            if matches!(hook, CallHook::CallingHost) {
                store.data_mut().count_host_call();
            }
            Ok(())
        });
        // The guest yields at every tick so that the timer and the
        // cancellation racing it in `bounded` get their turn; they, not this
        // callback, decide when the call ends.
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(|_| Ok(UpdateDeadline::Yield(1)));
        let ticking = self.engine.tick();
        match linked.pre.instantiate_async(&mut store).await {
            Ok(instance) => Ok(Run {
                store,
                instance,
                _ticking: ticking,
            }),
            Err(error) => Err(self.failure(&store, scope, error)),
        }
    }

    /// Turns what stopped a run into the error the model reads.
    fn failure(
        &self,
        store: &Store<CallState>,
        scope: &ToolScope<'_>,
        error: wasmtime::Error,
    ) -> CallError {
        let tool = scope.name.to_string();
        let limits = scope.limits;
        let error = match error.downcast::<Interruption>() {
            Ok(interruption) => return CallError::Interrupted { tool, interruption },
            Err(error) => error,
        };
        if store.data().memory_limit_hit() {
            return CallError::OutOfMemory {
                tool,
                mb: limits.memory_mb,
            };
        }
        let table_full = error.chain().any(|cause| {
            matches!(
                cause.downcast_ref::<ResourceTableError>(),
                Some(ResourceTableError::Full)
            )
        });
        if table_full {
            tracing::info!(plugin = &*self.name, tool = %tool, "call stopped at the handle limit");
            return CallError::TooManyHandles {
                tool,
                max: store.data().max_handles(),
            };
        }
        tracing::warn!(plugin = &*self.name, tool = %tool, "plugin trapped: {error:?}");
        let reason = match error.downcast_ref::<wasmtime::Trap>() {
            Some(wasmtime::Trap::StackOverflow) => "stack overflow".to_string(),
            Some(wasmtime::Trap::UnreachableCodeReached) => "it panicked or aborted".to_string(),
            Some(trap) => trap.to_string(),
            // A host function's refusal: its own words, not wasmtime's
            // "error while executing at wasm backtrace" around them.
            None => error.root_cause().to_string(),
        };
        CallError::Trap { tool, reason }
    }
}

/// Runs `work` until it ends, the deadline passes or the call is cancelled,
/// whichever comes first. Dropping `work` drops the run's store with it.
async fn bounded<T>(
    work: impl Future<Output = Result<T, CallError>>,
    scope: &ToolScope<'_>,
    cx: &CallContext,
) -> Result<T, CallError> {
    let ms = scope.limits.timeout_ms;
    let deadline = cx
        .deadline
        .unwrap_or_else(|| Instant::now() + Duration::from_millis(ms));
    let tool = || scope.name.to_string();
    tokio::select! {
        biased;
        result = work => result,
        () = cx.cancelled() => Err(CallError::Cancelled { tool: tool() }),
        () = tokio::time::sleep_until(deadline) => Err(CallError::Timeout { tool: tool(), ms }),
    }
}

/// What a contract plugin lists at load time, as it listed it, and whether
/// it exports `completions` (what serving it needs to know before it is
/// linked).
#[derive(serde::Serialize, serde::Deserialize)]
struct Listing {
    tools: Vec<v1::ToolDescriptor>,
    resources: Vec<v2::ResourceDescriptor>,
    templates: Vec<v2::ResourceTemplate>,
    prompts: Vec<v2::PromptDescriptor>,
    completions: bool,
}

/// No values.
fn no_completion() -> v2::Completion {
    v2::Completion {
        values: Vec::new(),
        total: None,
        has_more: false,
    }
}

/// The inputs a plugin's listing may depend on besides its code: its
/// configuration and limits.
fn listing_inputs(plugin: &Plugin) -> String {
    let limits = plugin.limits;
    serde_json::json!({
        "config": &*plugin.config,
        "limits": [limits.timeout_ms, limits.memory_mb, limits.max_output_bytes],
    })
    .to_string()
}

/// The listing the compile cache remembers from an earlier load of the
/// component `sha256` with `plugin`'s configuration and limits (see
/// `cache::listings` for why that is the same answer), if it holds one.
fn remembered_listing(plugin: &Plugin, sha256: &[u8; 32]) -> Option<Listing> {
    let json = plugin
        .engine
        .remembered_listing(sha256, listing_inputs(plugin).as_bytes())?;
    match serde_json::from_slice(&json) {
        Ok(listing) => {
            tracing::debug!(plugin = &*plugin.name, "listed from the compile cache");
            Some(listing)
        }
        Err(error) => {
            tracing::debug!(
                plugin = &*plugin.name,
                "a remembered listing does not parse ({error}); listing afresh"
            );
            None
        }
    }
}

/// The listing of `plugin`, whose component is `sha256`: the one the compile
/// cache remembers, or else a fresh one, then remembered.
fn listing(plugin: &Plugin, sha256: &[u8; 32]) -> Result<Listing> {
    if let Some(listing) = remembered_listing(plugin, sha256) {
        return Ok(listing);
    }
    let listing = list(plugin)?;
    match serde_json::to_vec(&listing) {
        Ok(json) => {
            plugin
                .engine
                .remember_listing(sha256, listing_inputs(plugin).as_bytes(), &json)
        }
        Err(error) => tracing::debug!(plugin = &*plugin.name, "cannot remember a listing: {error}"),
    }
    Ok(listing)
}

/// Asks a freshly linked contract plugin for its tools, and for its
/// resources, templates and prompts if it exports them, in one instance that
/// can reach nothing. Loading runs on plain threads, so this drives the run
/// with a small runtime of its own.
fn list(plugin: &Plugin) -> Result<Listing> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start a runtime to list the tools")?;
    let scope = ToolScope::listing(plugin.limits);
    let cx = CallContext::default();
    let listed = runtime.block_on(bounded(
        async {
            let linked = plugin.linked(scope.name).await?;
            let exports = linked.contract().ok_or_else(|| CallError::Setup {
                tool: scope.name.to_string(),
                reason: "not a contract plugin".to_string(),
            })?;
            let mut run = plugin.start(linked, &scope, &cx).await?;
            let listed = plugin.list_in(exports, &mut run).await;
            listed.map_err(|error| plugin.failure(&run.store, &scope, error))
        },
        &scope,
        &cx,
    ));
    listed.map_err(|error| anyhow!("{error}"))
}

/// One instance, ready to run; the epoch advances while it exists.
struct Run {
    store: Store<CallState>,
    instance: Instance,
    _ticking: TickGuard,
}

/// What one run of the component may reach.
struct ToolScope<'a> {
    name: &'a str,
    mounts: &'a [Mount],
    env: &'a [(String, String)],
    network: &'a Arc<[String]>,
    read_only: bool,
    limits: Limits,
    /// A command's streams; `None` sends guest output to the log.
    stdio: Option<&'a CommandStdio>,
}

impl ToolScope<'static> {
    /// Listing tools needs nothing: no mounts, no environment.
    fn listing(limits: Limits) -> ToolScope<'static> {
        static NONE: std::sync::LazyLock<Arc<[String]>> =
            std::sync::LazyLock::new(|| Arc::from(Vec::new()));
        ToolScope {
            name: "list-tools",
            mounts: &[],
            env: &[],
            network: &NONE,
            read_only: true,
            limits,
            stdio: None,
        }
    }
}

/// `descriptor` (of a plain component or a command, which say nothing of
/// what they do) with the category and annotations its grants imply:
/// `write` if a mount it sees is writable, else `network` if it may reach
/// a host, else `read`.
fn by_grants(mut descriptor: v1::ToolDescriptor, config: &PluginConfig) -> v1::ToolDescriptor {
    let writes = config
        .mounts_for(&descriptor.name)
        .iter()
        .any(|m| m.writable);
    let network = !config.network.is_empty();
    descriptor.category = if writes {
        v1::Category::Write
    } else if network {
        v1::Category::Network
    } else {
        v1::Category::Read
    };
    descriptor.annotations = v1::Annotations {
        read_only: !writes,
        destructive: writes,
        idempotent: false,
        open_world: network,
    };
    descriptor
}
