//! One loaded plugin: its compiled component, its tools, and per-call stores.
//!
//! [`Plugin::load`] compiles (or loads from cache) a component, links WASI and
//! the `host` interface, keeps an `InstancePre`, and asks the component for
//! its tools once, in an instance of its own. Each [`ToolSpec`] holds a
//! validated descriptor, the MCP form of it and the argument validator
//! (compiled on first use, then kept), so nothing is parsed again per call.
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
//! the thread that runs the call, which the server makes a blocking-pool
//! thread of the call's own: should one block in the kernel, the server
//! answers at the deadline without it (see `Server::call`).

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use rmcp::model::{CallToolResult, JsonObject, Tool, ToolAnnotations};
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use wasmtime::component::{
    HasSelf, Instance, InstancePre, Linker, ResourceTable, ResourceTableError,
};
use wasmtime::{CallHook, ResourceLimiter, Store, UpdateDeadline};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use crate::config::{Limits, Mount, ToolOverride};
use crate::runtime::engine::{Engine, TickGuard};
use crate::runtime::files;
use crate::runtime::lookups::{self, LookupView, Lookups};
use crate::runtime::sandbox::{self, Grants, NetworkPolicy};

pub use crate::runtime::contract::host::LogLevel;
use crate::runtime::contract::{self, Exports, client, tools as wit, v1 as wit_types, v2};
use crate::runtime::features::{self, Failure, Offerings, content_block, serialized_len};

/// How many bytes of guest stdout/stderr one call may log.
const GUEST_OUTPUT_LOG_CAP: usize = 256 * 1024;

/// Receives what a running call reports: progress and log lines.
pub trait CallObserver: Send + Sync {
    /// A progress report; `progress` has already been checked to increase.
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>);
    /// A log line from the plugin (it is also sent to `tracing`).
    fn log(&self, level: LogLevel, message: &str);
}

/// Asks the MCP client on a run's behalf: contract 0.2.0's `client`
/// interface. The server implements it for each request: by asking a
/// 2025-11-25 session's client, or from the answers a 2026-07-28 request
/// carries.
#[async_trait::async_trait]
pub trait ClientAsk: Send + Sync {
    /// What the client declared it can answer.
    fn capabilities(&self) -> client::ClientCapabilities;
    /// Answers `questions` (keys and questions), in order; or stops the run
    /// ([`Interruption`]) when the answers must come from a retry.
    async fn ask(
        &self,
        questions: Vec<(String, client::Question)>,
    ) -> Result<Result<Vec<client::Reply>, client::ClientError>, Interruption>;
}

/// Why a run stopped to wait for the client.
#[derive(Debug, thiserror::Error)]
pub enum Interruption {
    /// It asked questions (2026-07-28) its request carries no answers to:
    /// the client is to answer them and send the request again.
    #[error("the run needs {} answer(s) from the client", .0.len())]
    Input(rmcp::model::InputRequests),
    /// It asked for something the client did not declare (2026-07-28).
    #[error("the client did not declare the `{0}` capability this needs")]
    MissingCapability(&'static str),
}

/// What a call gets besides its arguments.
#[derive(Clone, Default)]
pub struct CallContext {
    /// The call stops as soon as any of these is cancelled: the client's
    /// cancellation of the request, the server's shutdown.
    pub cancel: Vec<CancellationToken>,
    /// When the call must have ended; default: its `timeout_ms` from when it
    /// starts. The server sets it when it accepts the call, so time spent
    /// waiting for a free slot counts too.
    pub deadline: Option<Instant>,
    /// The directories the call sees instead of its tool's configured
    /// mounts (the client's roots, for the embedded default).
    pub mounts: Option<Arc<[Mount]>>,
    /// Where progress and log lines go, if anywhere.
    pub observer: Option<Arc<dyn CallObserver>>,
    /// Who answers the plugin's questions to the client, if anyone.
    pub client: Option<Arc<dyn ClientAsk>>,
}

impl CallContext {
    /// Whether any of the tokens has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.iter().any(CancellationToken::is_cancelled)
    }

    /// Resolves once any of the tokens is cancelled; never if there are none.
    pub async fn cancelled(&self) {
        if self.cancel.is_empty() {
            return std::future::pending().await;
        }
        let waits = self.cancel.iter().map(|token| Box::pin(token.cancelled()));
        futures_util::future::select_all(waits).await;
    }
}

/// Why a call produced no result from the plugin.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The run stopped to wait for the client (2026-07-28).
    #[error("`{tool}` stopped: {interruption}")]
    Interrupted {
        /// The tool.
        tool: String,
        /// Why.
        interruption: Interruption,
    },
    /// The call ran past its deadline.
    #[error("`{tool}` timed out after {ms} ms and was stopped")]
    Timeout {
        /// The tool.
        tool: String,
        /// The limit.
        ms: u64,
    },
    /// Every call slot stayed busy until the deadline.
    #[error(
        "`{tool}` did not start within its limit of {ms} ms: all {slots} call slots \
         (max_concurrent_calls) stayed busy; try again later"
    )]
    Busy {
        /// The tool.
        tool: String,
        /// The limit.
        ms: u64,
        /// How many calls may run at once.
        slots: usize,
    },
    /// The client cancelled the call.
    #[error("`{tool}` was cancelled")]
    Cancelled {
        /// The tool.
        tool: String,
    },
    /// The guest held more handles (files, directories, streams) at once
    /// than a call may.
    #[error(
        "`{tool}` was stopped: it held more than {max} open handles (files, directories, \
         streams) at once, the limit per call; work on fewer files at a time"
    )]
    TooManyHandles {
        /// The tool.
        tool: String,
        /// The limit.
        max: usize,
    },
    /// The guest tried to grow its memory past the limit.
    #[error("`{tool}` ran out of memory: it tried to use more than its limit of {mb} MiB")]
    OutOfMemory {
        /// The tool.
        tool: String,
        /// The limit.
        mb: u64,
    },
    /// The guest trapped (a panic, a stack overflow, an invalid operation).
    #[error("`{tool}` crashed ({reason}); see the server log for details")]
    Trap {
        /// The tool.
        tool: String,
        /// A short reason.
        reason: String,
    },
    /// The plugin returned something the host cannot pass on.
    #[error("`{tool}` returned an invalid result: {reason}")]
    InvalidResult {
        /// The tool.
        tool: String,
        /// What was wrong.
        reason: String,
    },
    /// The sandbox could not be set up.
    #[error("`{tool}` could not be started: {reason}")]
    Setup {
        /// The tool.
        tool: String,
        /// What went wrong.
        reason: String,
    },
}

/// A tool as the host knows it.
pub struct ToolSpec {
    /// The tool's name.
    pub name: String,
    /// The category's name (`read`, `search`, ...).
    pub category: String,
    /// Whether the tool is read-only; if so, every mount is read-only for it.
    pub read_only: bool,
    /// The MCP description of the tool, for `tools/list`.
    pub mcp: Tool,
    /// The directories this tool sees: its override, or its plugin's.
    pub mounts: Vec<Mount>,
    /// Its limits: server, then plugin, then tool.
    pub limits: Limits,
    /// The input schema compiled, on first use: compiling every tool's
    /// schema at start-up would cost milliseconds for tools never called.
    validator: OnceLock<Result<jsonschema::Validator, String>>,
}

impl ToolSpec {
    /// Checks that the input schema is a valid JSON Schema (compiling it,
    /// if that has not happened yet).
    pub fn check_schema(&self) -> Result<&jsonschema::Validator, String> {
        self.validator
            .get_or_init(|| {
                jsonschema::validator_for(&Value::Object((*self.mcp.input_schema).clone()))
                    .map_err(|error| error.to_string())
            })
            .as_ref()
            .map_err(|error| {
                format!(
                    "the input schema of `{}` is not a valid JSON Schema: {error}",
                    self.name
                )
            })
    }

    /// Checks `arguments` against the input schema; the error names each
    /// offending field. Many clients send `null` for an optional argument
    /// they mean to leave out: where the schema has no use for that null,
    /// the argument is dropped rather than refused.
    pub fn validate(&self, arguments: &mut Value) -> Result<(), String> {
        let validator = self.check_schema().map_err(|error| {
            tracing::error!("{error}");
            format!("{error}; the plugin needs fixing before this tool can be called")
        })?;
        if validator.is_valid(arguments) {
            return Ok(());
        }
        if let Some(stripped) = self.without_optional_nulls(arguments)
            && validator.is_valid(&stripped)
        {
            *arguments = stripped;
            return Ok(());
        }
        let problems: Vec<String> = validator
            .iter_errors(arguments)
            .take(5)
            .map(|error| {
                let path = error.instance_path().to_string();
                if path.is_empty() {
                    error.to_string()
                } else {
                    format!(
                        "`{}`: {error}",
                        path.trim_start_matches('/').replace('/', ".")
                    )
                }
            })
            .collect();
        Err(format!(
            "invalid arguments for `{}`: {}",
            self.name,
            problems.join("; ")
        ))
    }

    /// `arguments` without the top-level `null`s of properties the schema
    /// does not require, if there are any.
    fn without_optional_nulls(&self, arguments: &Value) -> Option<Value> {
        let object = arguments.as_object()?;
        let required = self
            .mcp
            .input_schema
            .get("required")
            .and_then(Value::as_array);
        let optional_null = |(name, value): &(&String, &Value)| {
            value.is_null() && !required.is_some_and(|required| required.iter().any(|r| r == *name))
        };
        if !object.iter().any(|entry| optional_null(&entry)) {
            return None;
        }
        let kept = object
            .iter()
            .filter(|entry| !optional_null(entry))
            .map(|(name, value)| (name.clone(), value.clone()));
        Some(Value::Object(kept.collect()))
    }
}

/// A compiled, linked plugin.
pub struct Plugin {
    name: Arc<str>,
    engine: Arc<Engine>,
    pre: InstancePre<CallState>,
    exports: Exports,
    offerings: Offerings,
    grants: Grants,
    config: Arc<BTreeMap<String, String>>,
    limits: Limits,
    tools: Vec<Arc<ToolSpec>>,
}

/// Everything a plugin needs to load.
pub struct PluginSetup {
    /// The plugin's name from `plugins.toml`.
    pub name: String,
    /// The component's bytes.
    pub wasm: std::borrow::Cow<'static, [u8]>,
    /// Their SHA-256, the compile cache's key.
    pub sha256: [u8; 32],
    /// Mounts and environment.
    pub grants: Grants,
    /// The `config` table.
    pub config: BTreeMap<String, String>,
    /// Time, memory and output limits.
    pub limits: Limits,
    /// Per-tool mounts and limits, by tool name.
    pub overrides: BTreeMap<String, ToolOverride>,
}

/// What every plugin is linked against: WASI, `wasi:http` and the `host`
/// interface. One serves every plugin of an engine.
pub struct Imports(Linker<CallState>);

impl Imports {
    /// Links the sandbox's imports for `engine`.
    pub fn new(engine: &Engine) -> Result<Imports> {
        let mut linker = Linker::<CallState>::new(engine.wasmtime());
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
        sandbox::refuse_special_files(&mut linker)?;
        lookups::add_to_linker(&mut linker)?;
        files::add_to_linker(&mut linker)?;
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
        contract::host::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state)?;
        client::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state)?;
        Ok(Imports(linker))
    }
}

impl Plugin {
    /// Compiles and links the component and reads its tool descriptors.
    pub fn load(engine: Arc<Engine>, imports: &Imports, setup: PluginSetup) -> Result<Plugin> {
        let name: Arc<str> = Arc::from(setup.name.as_str());
        let component = engine.compile(&name, &setup.wasm, &setup.sha256)?;
        drop(setup.wasm);
        let instance_pre = imports
            .0
            .instantiate_pre(&component)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("plugin `{name}` needs imports the sandbox does not offer"))?;
        let exports =
            Exports::find(&instance_pre).with_context(|| format!("plugin `{name}` is refused"))?;
        let mut plugin = Plugin {
            name,
            engine,
            pre: instance_pre,
            exports,
            offerings: Offerings::default(),
            grants: setup.grants,
            config: Arc::new(setup.config),
            limits: setup.limits,
            tools: Vec::new(),
        };
        let listing = list(&plugin)
            .with_context(|| format!("plugin `{}` failed to list its tools", plugin.name))?;
        plugin.offerings =
            features::offerings(listing.resources, listing.templates, listing.prompts)
                .with_context(|| format!("plugin `{}` is refused", plugin.name))?;
        let descriptors = listing.tools;
        check_listing_size(&descriptors)
            .with_context(|| format!("plugin `{}` is refused", plugin.name))?;
        let mut tools = Vec::with_capacity(descriptors.len());
        for descriptor in descriptors {
            let tool_name = descriptor.name.clone();
            let (mounts, limits) = match setup.overrides.get(&tool_name) {
                Some(o) => (
                    o.mounts
                        .clone()
                        .unwrap_or_else(|| plugin.grants.mounts.clone()),
                    o.limits,
                ),
                None => (plugin.grants.mounts.clone(), plugin.limits),
            };
            let spec = tool_spec(descriptor, mounts, limits).with_context(|| {
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

    /// Runs one call in a fresh instance and converts its result for MCP.
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
    ) -> Result<CallToolResult, CallError> {
        let call = wit::Call {
            tool: tool.name.clone(),
            arguments,
        };
        let scope = ToolScope {
            name: &tool.name,
            mounts: cx.mounts.as_deref().unwrap_or(&tool.mounts),
            env: &self.grants.env,
            network: &self.grants.network,
            read_only: tool.read_only,
            limits: tool.limits,
        };
        let run = async {
            let mut run = self.start(&scope, cx).await?;
            let tools = self.exports.tools.load(&mut run.store, &run.instance);
            let result = match tools {
                Ok(tools) => tools.call_call_tool(&mut run.store, &call).await,
                Err(error) => Err(error),
            };
            result.map_err(|error| self.failure(&run.store, &scope, error))
        };
        let result = bounded(run, &scope, cx).await?;
        to_mcp(result, tool.limits.max_output_bytes).map_err(|reason| CallError::InvalidResult {
            tool: tool.name.clone(),
            reason,
        })
    }

    /// The plugin's limits (a tool's own may differ).
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Whether the plugin exports `completions`.
    pub fn exports_completions(&self) -> bool {
        self.exports.completions.is_some()
    }

    /// What the plugin offers besides tools, as listed at load time.
    pub fn offerings(&self) -> &Offerings {
        &self.offerings
    }

    /// Lists tools, and resources, templates and prompts where exported.
    async fn list_in(&self, run: &mut Run) -> wasmtime::Result<Listing> {
        let (store, instance) = (&mut run.store, &run.instance);
        let tools = self.exports.tools.load(&mut *store, instance)?;
        let mut listing = Listing {
            tools: tools.call_list_tools(&mut *store).await?,
            resources: Vec::new(),
            templates: Vec::new(),
            prompts: Vec::new(),
        };
        if let Some(resources) = &self.exports.resources {
            let resources = resources.load(&mut *store, instance)?;
            listing.resources = resources.call_list_resources(&mut *store).await?;
            listing.templates = resources.call_list_templates(&mut *store).await?;
        }
        if let Some(prompts) = &self.exports.prompts {
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
        }
    }

    /// Runs `work` on a fresh instance in `scope`, bounded like a call.
    async fn run_feature<R>(
        &self,
        scope: &ToolScope<'_>,
        cx: &CallContext,
        work: impl AsyncFnOnce(&mut Store<CallState>, &Instance) -> wasmtime::Result<R>,
    ) -> Result<R, CallError> {
        let run = async {
            let mut run = self.start(scope, cx).await?;
            let result = work(&mut run.store, &run.instance).await;
            result.map_err(|error| self.failure(&run.store, scope, error))
        };
        bounded(run, scope, cx).await
    }

    /// The plugin's fixed resources, listed now with its mounts; empty if it
    /// does not export `resources`.
    pub async fn list_resources(
        &self,
        cx: &CallContext,
    ) -> Result<Vec<rmcp::model::Resource>, CallError> {
        let Some(indices) = &self.exports.resources else {
            return Ok(Vec::new());
        };
        let scope = self.feature_scope("resources/list", cx);
        let listed = self
            .run_feature(&scope, cx, async |store, instance| {
                let guest = indices.load(&mut *store, instance)?;
                guest.call_list_resources(&mut *store).await
            })
            .await?;
        let invalid = |reason: String| CallError::InvalidResult {
            tool: scope.name.to_string(),
            reason,
        };
        let mut resources = Vec::with_capacity(listed.len());
        for descriptor in listed.into_iter().take(features::MAX_LISTED) {
            resources.push(features::resource(descriptor).map_err(|e| invalid(format!("{e:#}")))?);
        }
        Ok(resources)
    }

    /// Reads one resource.
    pub async fn read_resource(
        &self,
        uri: &str,
        cx: &CallContext,
    ) -> Result<Result<rmcp::model::ReadResourceResult, Failure>, CallError> {
        let Some(indices) = &self.exports.resources else {
            return Ok(Err(Failure::NotFound(format!("no resource `{uri}`"))));
        };
        let what = format!("resources/read {uri}");
        let scope = self.feature_scope(&what, cx);
        let read = self
            .run_feature(&scope, cx, async |store, instance| {
                let guest = indices.load(&mut *store, instance)?;
                guest.call_read_resource(&mut *store, uri).await
            })
            .await?;
        match read {
            Ok(contents) => features::contents(contents, self.limits.max_output_bytes)
                .map(Ok)
                .map_err(|reason| CallError::InvalidResult { tool: what, reason }),
            Err(failure) => Ok(Err(failure.into())),
        }
    }

    /// Fills in one prompt.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Vec<(String, String)>,
        cx: &CallContext,
    ) -> Result<Result<rmcp::model::GetPromptResult, Failure>, CallError> {
        let Some(indices) = &self.exports.prompts else {
            return Ok(Err(Failure::NotFound(format!("no prompt `{name}`"))));
        };
        let what = format!("prompts/get {name}");
        let scope = self.feature_scope(&what, cx);
        let got = self
            .run_feature(&scope, cx, async |store, instance| {
                let guest = indices.load(&mut *store, instance)?;
                guest.call_get_prompt(&mut *store, name, &arguments).await
            })
            .await?;
        match got {
            Ok(prompt) => features::prompt_result(prompt, self.limits.max_output_bytes)
                .map(Ok)
                .map_err(|reason| CallError::InvalidResult { tool: what, reason }),
            Err(failure) => Ok(Err(failure.into())),
        }
    }

    /// Values for an argument of a prompt or a variable of a template; none
    /// if the plugin does not export `completions`.
    pub async fn complete(
        &self,
        request: v2::CompletionRequest,
        cx: &CallContext,
    ) -> Result<Result<rmcp::model::CompletionInfo, Failure>, CallError> {
        let Some(indices) = &self.exports.completions else {
            return Ok(Ok(features::completion(v2::Completion {
                values: Vec::new(),
                total: None,
                has_more: false,
            })));
        };
        let scope = self.feature_scope("completion/complete", cx);
        let completed = self
            .run_feature(&scope, cx, async |store, instance| {
                let guest = indices.load(&mut *store, instance)?;
                guest.call_complete(&mut *store, &request).await
            })
            .await?;
        Ok(completed.map(features::completion).map_err(Failure::from))
    }

    /// A fresh store and instance for one run, with the scope's limits.
    async fn start(&self, scope: &ToolScope<'_>, cx: &CallContext) -> Result<Run, CallError> {
        let what = scope.name;
        let limits = scope.limits;
        let wasi = sandbox::wasi_ctx(
            &self.name,
            scope.mounts,
            scope.env,
            scope.read_only,
            GUEST_OUTPUT_LOG_CAP,
        )
        .map_err(|error| CallError::Setup {
            tool: what.to_string(),
            reason: format!("{error:#}"),
        })?;
        let memory_bytes =
            usize::try_from(limits.memory_mb.saturating_mul(1024 * 1024)).unwrap_or(usize::MAX);
        let mut table = ResourceTable::new();
        // The lookups' open parent directories are the call's too.
        table.set_max_capacity(self.engine.handles_per_call() - lookups::PARENTS);
        let state = CallState {
            wasi,
            http: WasiHttpCtx::new(),
            network: NetworkPolicy::new(self.name.clone(), scope.network.clone()),
            table,
            limiter: MemoryLimiter {
                max_bytes: memory_bytes,
                hit: false,
            },
            plugin: self.name.clone(),
            tool: Arc::from(what),
            config: self.config.clone(),
            cx: cx.clone(),
            last_progress: None,
            questions: 0,
            asked: std::collections::HashSet::new(),
            lookups: Lookups::default(),
        };
        let mut store = Store::new(self.engine.wasmtime(), state);
        store.limiter(|state| &mut state.limiter);
        store.call_hook(|mut store, hook| {
            if matches!(hook, CallHook::CallingHost) {
                store.data_mut().lookups.count_call();
            }
            Ok(())
        });
        // The guest yields at every tick so that the timer and the
        // cancellation racing it in `bounded` get their turn; they, not this
        // callback, decide when the call ends.
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(|_| Ok(UpdateDeadline::Yield(1)));
        let ticking = self.engine.tick();
        match self.pre.instantiate_async(&mut store).await {
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
        if store.data().limiter.hit {
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
                max: store.data().table.max_capacity(),
            };
        }
        tracing::warn!(plugin = &*self.name, tool = %tool, "plugin trapped: {error:?}");
        let reason = match error.downcast_ref::<wasmtime::Trap>() {
            Some(wasmtime::Trap::StackOverflow) => "stack overflow".to_string(),
            Some(wasmtime::Trap::UnreachableCodeReached) => "it panicked or aborted".to_string(),
            Some(trap) => trap.to_string(),
            None => format!("{error}"),
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

/// What a plugin lists at load time, as it listed it.
struct Listing {
    tools: Vec<wit_types::ToolDescriptor>,
    resources: Vec<v2::ResourceDescriptor>,
    templates: Vec<v2::ResourceTemplate>,
    prompts: Vec<v2::PromptDescriptor>,
}

/// Asks a freshly loaded plugin for its tools, and for its resources,
/// templates and prompts if it exports them, in one instance that can reach
/// nothing. Loading runs on plain threads, so this drives the run with a
/// small runtime of its own.
fn list(plugin: &Plugin) -> Result<Listing> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start a runtime to list the tools")?;
    let scope = ToolScope::listing(plugin.limits);
    let cx = CallContext::default();
    let listed = runtime.block_on(bounded(
        async {
            let mut run = plugin.start(&scope, &cx).await?;
            let listed = plugin.list_in(&mut run).await;
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
        }
    }
}

/// The store data of one call.
pub struct CallState {
    wasi: WasiCtx,
    http: WasiHttpCtx,
    network: NetworkPolicy,
    table: ResourceTable,
    limiter: MemoryLimiter,
    plugin: Arc<str>,
    tool: Arc<str>,
    config: Arc<BTreeMap<String, String>>,
    cx: CallContext,
    last_progress: Option<f64>,
    /// How many questions `elicit`, `sample` and `list-roots` have asked.
    questions: u32,
    /// The keys asked so far in this run.
    asked: std::collections::HashSet<String>,
    lookups: Lookups,
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl LookupView for CallState {
    fn lookups(&mut self) -> &mut Lookups {
        &mut self.lookups
    }
}

impl WasiHttpView for CallState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.network,
        }
    }
}

impl contract::host::Host for CallState {
    fn log(&mut self, level: LogLevel, message: String) {
        let (plugin, tool) = (&*self.plugin, &*self.tool);
        match level {
            LogLevel::Trace => tracing::trace!(plugin, tool, "{message}"),
            LogLevel::Debug => tracing::debug!(plugin, tool, "{message}"),
            LogLevel::Info => tracing::info!(plugin, tool, "{message}"),
            LogLevel::Warning => tracing::warn!(plugin, tool, "{message}"),
            LogLevel::Error => tracing::error!(plugin, tool, "{message}"),
        }
        if let Some(observer) = &self.cx.observer {
            observer.log(level, &message);
        }
    }

    fn report_progress(&mut self, progress: f64, total: Option<f64>, message: Option<String>) {
        // MCP requires progress to increase with each notification; drop
        // reports that do not, and any that are not finite.
        if !progress.is_finite() || self.last_progress.is_some_and(|last| progress <= last) {
            return;
        }
        self.last_progress = Some(progress);
        if let Some(observer) = &self.cx.observer {
            observer.progress(progress, total.filter(|t| t.is_finite()), message);
        }
    }

    fn is_cancelled(&mut self) -> bool {
        self.cx.is_cancelled()
    }

    fn get_config(&mut self, key: String) -> Option<String> {
        self.config.get(&key).cloned()
    }

    fn config_entries(&mut self) -> Vec<(String, String)> {
        self.config
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

impl wit_types::Host for CallState {}
impl v2::Host for CallState {}

/// Asking the client goes through the run's [`ClientAsk`]; a run without
/// one (a `toolcell call`, a listing) answers `unsupported`. An
/// [`Interruption`] traps the guest: the run is over, and the caller turns
/// it into what the client is sent.
impl client::Host for CallState {
    async fn elicit(
        &mut self,
        message: String,
        schema: String,
    ) -> wasmtime::Result<Result<client::ElicitAnswer, client::ClientError>> {
        let key = self.next_key("elicit");
        let reply = self.ask_one(key, client::Question::Elicit((message, schema)));
        Ok(reply.await?.and_then(|reply| match reply {
            client::Reply::Elicit(answer) => Ok(answer),
            _ => Err(mismatched()),
        }))
    }

    async fn sample(
        &mut self,
        request: client::SamplingRequest,
    ) -> wasmtime::Result<Result<client::SamplingResult, client::ClientError>> {
        let key = self.next_key("sample");
        let reply = self.ask_one(key, client::Question::Sample(request));
        Ok(reply.await?.and_then(|reply| match reply {
            client::Reply::Sample(result) => Ok(result),
            _ => Err(mismatched()),
        }))
    }

    async fn list_roots(
        &mut self,
    ) -> wasmtime::Result<Result<Vec<client::Root>, client::ClientError>> {
        let key = self.next_key("list-roots");
        let reply = self.ask_one(key, client::Question::ListRoots);
        Ok(reply.await?.and_then(|reply| match reply {
            client::Reply::ListRoots(roots) => Ok(roots),
            _ => Err(mismatched()),
        }))
    }

    fn capabilities(&mut self) -> client::ClientCapabilities {
        match &self.cx.client {
            Some(client) => client.capabilities(),
            None => client::ClientCapabilities {
                elicitation: false,
                sampling: false,
                roots: false,
            },
        }
    }

    async fn ask(
        &mut self,
        questions: Vec<(String, client::Question)>,
    ) -> wasmtime::Result<Result<Vec<client::Reply>, client::ClientError>> {
        let mut seen = std::collections::HashSet::new();
        if let Some((key, _)) = questions.iter().find(|(key, _)| !seen.insert(key.clone())) {
            return Ok(Err(client::ClientError::Failed(format!(
                "the key `{key}` is asked twice; keys must be unique within a run"
            ))));
        }
        if let Some((key, _)) = questions.iter().find(|(key, _)| self.asked.contains(key)) {
            return Ok(Err(client::ClientError::Failed(format!(
                "the key `{key}` was already asked in this run; keys must be unique within a run"
            ))));
        }
        self.asked
            .extend(questions.iter().map(|(key, _)| key.clone()));
        let Some(client) = self.cx.client.clone() else {
            return Ok(Err(client::ClientError::Unsupported(
                "there is no MCP client to ask in this run".to_string(),
            )));
        };
        Ok(client.ask(questions).await?)
    }
}

impl CallState {
    /// The key of the `n`th question a convenience function asks: `elicit-1`, ...
    fn next_key(&mut self, what: &str) -> String {
        self.questions += 1;
        format!("{what}-{}", self.questions)
    }

    async fn ask_one(
        &mut self,
        key: String,
        question: client::Question,
    ) -> wasmtime::Result<Result<client::Reply, client::ClientError>> {
        let replies = client::Host::ask(self, vec![(key, question)]).await?;
        Ok(replies.and_then(|mut replies| replies.pop().ok_or_else(mismatched)))
    }
}

fn mismatched() -> client::ClientError {
    client::ClientError::Failed("the client's answer does not match the question".to_string())
}

/// Caps linear memory; remembers whether the cap was hit so a resulting trap
/// can be reported as what it is.
struct MemoryLimiter {
    max_bytes: usize,
    hit: bool,
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.max_bytes {
            self.hit = true;
            return Ok(false);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        // Tables hold function references; a million is far past any real
        // plugin and keeps a runaway one from eating host memory.
        Ok(desired <= 1_000_000)
    }
}

/// The most tools one plugin may offer.
pub const MAX_TOOLS_PER_PLUGIN: usize = 256;
/// The longest tool title, in bytes.
pub const MAX_TITLE_BYTES: usize = 256;
/// The longest tool description, in bytes.
pub const MAX_DESCRIPTION_BYTES: usize = 16 * 1024;
/// The largest input or output schema, in bytes of JSON.
pub const MAX_SCHEMA_BYTES: usize = 64 * 1024;
/// The most one plugin's descriptors may add up to, in bytes.
pub const MAX_LISTING_BYTES: usize = 1024 * 1024;

/// Refuses a listing over the load-time caps, naming the cap: a plugin
/// cannot make `tools/list` unbounded.
fn check_listing_size(descriptors: &[wit_types::ToolDescriptor]) -> Result<()> {
    if descriptors.len() > MAX_TOOLS_PER_PLUGIN {
        bail!(
            "it lists {} tools, over the limit of {MAX_TOOLS_PER_PLUGIN} per plugin",
            descriptors.len()
        );
    }
    let mut total = 0;
    for d in descriptors {
        let name: String = d.name.chars().take(64).collect();
        let fields = [
            ("title", d.title.len(), MAX_TITLE_BYTES),
            ("description", d.description.len(), MAX_DESCRIPTION_BYTES),
            ("input schema", d.input_schema.len(), MAX_SCHEMA_BYTES),
            (
                "output schema",
                d.output_schema.as_ref().map_or(0, String::len),
                MAX_SCHEMA_BYTES,
            ),
        ];
        for (what, len, max) in fields {
            if len > max {
                bail!("the {what} of tool `{name}` is {len} bytes, over the limit of {max} bytes");
            }
            total += len;
        }
        total += d.name.len();
    }
    if total > MAX_LISTING_BYTES {
        bail!(
            "its tool descriptors add up to {total} bytes, over the limit of \
             {MAX_LISTING_BYTES} bytes per plugin"
        );
    }
    Ok(())
}

/// Tool names as MCP (2025-11-25) recommends them.
fn valid_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

fn category_name(category: wit_types::Category) -> Result<String> {
    use wit_types::Category as C;
    Ok(match category {
        C::Read => "read".into(),
        C::Search => "search".into(),
        C::Write => "write".into(),
        C::Execute => "execute".into(),
        C::Vcs => "vcs".into(),
        C::Network => "network".into(),
        C::Other(name) => {
            let ok = (1..=32).contains(&name.len())
                && name.starts_with(|c: char| c.is_ascii_lowercase())
                && name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
            if !ok {
                bail!("category `{name}` is not lowercase letters, digits and `-`");
            }
            name
        }
    })
}

fn schema_object(text: &str, what: &str) -> Result<JsonObject> {
    let value: Value =
        serde_json::from_str(text).with_context(|| format!("{what} is not valid JSON"))?;
    let Value::Object(object) = value else {
        bail!("{what} is not a JSON object");
    };
    if object.get("type").and_then(Value::as_str) != Some("object") {
        bail!("{what} must have \"type\": \"object\"");
    }
    Ok(object)
}

fn tool_spec(
    descriptor: wit_types::ToolDescriptor,
    mounts: Vec<Mount>,
    limits: Limits,
) -> Result<ToolSpec> {
    if !valid_tool_name(&descriptor.name) {
        bail!("names are 1-128 characters of A-Z, a-z, 0-9, `_`, `-` and `.`");
    }
    let input_schema = schema_object(&descriptor.input_schema, "the input schema")?;
    let output_schema = descriptor
        .output_schema
        .as_deref()
        .map(|text| schema_object(text, "the output schema"))
        .transpose()?;
    let category = category_name(descriptor.category)?;
    let a = descriptor.annotations;
    let annotations = ToolAnnotations::new()
        .read_only(a.read_only)
        .destructive(a.destructive)
        .idempotent(a.idempotent)
        .open_world(a.open_world);
    let mut mcp = Tool::new(
        descriptor.name.clone(),
        descriptor.description,
        Arc::new(input_schema),
    )
    .annotate(annotations);
    mcp.title = Some(descriptor.title);
    mcp.output_schema = output_schema.map(Arc::new);
    Ok(ToolSpec {
        name: descriptor.name,
        category,
        read_only: a.read_only,
        mcp,
        mounts,
        limits,
        validator: OnceLock::new(),
    })
}

/// The most content blocks one result may have.
const MAX_CONTENT_BLOCKS: usize = 1000;

/// Converts a plugin's result to MCP, refusing one of more than
/// [`MAX_CONTENT_BLOCKS`] blocks or whose JSON form is over `max_bytes`.
fn to_mcp(result: wit_types::ToolResult, max_bytes: u64) -> Result<CallToolResult, String> {
    let blocks = result.content.len();
    if blocks > MAX_CONTENT_BLOCKS {
        return Err(format!(
            "the result has {blocks} content blocks, over the limit of {MAX_CONTENT_BLOCKS}; \
             return fewer, larger blocks"
        ));
    }
    let too_big = |size: u64| {
        format!(
            "the result is {size} bytes, over the limit of {max_bytes} bytes; ask for less \
             (a smaller range, fewer files)"
        )
    };
    // Serialised, every byte of every string is at least one byte and binary
    // data four thirds: a result this big is refused before it is converted.
    let text = |text: &Option<String>| text.as_ref().map_or(0, String::len);
    let at_least: usize = result
        .content
        .iter()
        .map(|block| match block {
            wit_types::Content::Text(text) => text.len(),
            wit_types::Content::Image(media) | wit_types::Content::Audio(media) => {
                media.data.len() / 3 * 4 + media.mime_type.len()
            }
            wit_types::Content::ResourceLink(link) => {
                link.uri.len()
                    + link.name.len()
                    + text(&link.title)
                    + text(&link.description)
                    + text(&link.mime_type)
            }
            wit_types::Content::EmbeddedResource(resource) => {
                let body = match &resource.body {
                    wit_types::ResourceBody::Text(text) => text.len(),
                    wit_types::ResourceBody::Blob(data) => data.len() / 3 * 4,
                };
                body + resource.uri.len() + text(&resource.mime_type)
            }
        })
        .sum::<usize>()
        + text(&result.structured_content);
    if at_least as u64 > max_bytes {
        return Err(too_big(at_least as u64));
    }
    let structured = result
        .structured_content
        .map(|text| {
            serde_json::from_str::<Value>(&text)
                .map_err(|e| format!("its structured content is not valid JSON: {e}"))
        })
        .transpose()?;
    let content = result
        .content
        .into_iter()
        .map(content_block)
        .collect::<Result<Vec<_>, _>>()?;
    let mut mcp = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    mcp.structured_content = structured;
    // Escaping makes JSON text at most six times as long (`\u0001`), and
    // each block adds a few dozen bytes of framing: most results are far
    // enough under the cap that measuring them exactly would be wasted work.
    let at_most = (at_least as u64)
        .saturating_mul(6)
        .saturating_add(64 * (blocks as u64 + 1));
    if at_most > max_bytes {
        let size = serialized_len(&mcp);
        if size > max_bytes {
            return Err(too_big(size));
        }
    }
    Ok(mcp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names() {
        assert!(valid_tool_name("read_file"));
        assert!(valid_tool_name("a.b-c"));
        assert!(!valid_tool_name(""));
        assert!(!valid_tool_name("no spaces"));
        assert!(!valid_tool_name(&"x".repeat(129)));
    }

    #[test]
    fn schemas_must_be_objects() {
        assert!(schema_object(r#"{"type":"object"}"#, "s").is_ok());
        assert!(schema_object(r#"{"type":"string"}"#, "s").is_err());
        assert!(schema_object("[]", "s").is_err());
        assert!(schema_object("{", "s").is_err());
    }

    #[test]
    fn oversized_result_is_refused() {
        let result = wit_types::ToolResult {
            content: vec![wit_types::Content::Text("x".repeat(100))],
            structured_content: None,
            is_error: false,
        };
        let error = to_mcp(result, 10).unwrap_err();
        assert!(error.contains("100 bytes"), "{error}");
    }

    #[test]
    fn invalid_structured_content_is_refused() {
        let result = wit_types::ToolResult {
            content: vec![],
            structured_content: Some("{nope".into()),
            is_error: false,
        };
        assert!(to_mcp(result, 1000).unwrap_err().contains("not valid JSON"));
    }

    #[test]
    fn every_content_kind_converts() {
        let blocks = vec![
            wit_types::Content::Text("hi".into()),
            wit_types::Content::Image(wit_types::Media {
                data: vec![1, 2, 3],
                mime_type: "image/png".into(),
            }),
            wit_types::Content::Audio(wit_types::Media {
                data: vec![4],
                mime_type: "audio/wav".into(),
            }),
            wit_types::Content::ResourceLink(wit_types::ResourceLink {
                uri: "file:///a".into(),
                name: "a".into(),
                title: Some("A".into()),
                description: None,
                mime_type: Some("text/plain".into()),
                size: Some(3),
            }),
            wit_types::Content::EmbeddedResource(wit_types::EmbeddedResource {
                uri: "file:///b".into(),
                mime_type: None,
                body: wit_types::ResourceBody::Blob(vec![0xff]),
            }),
        ];
        let result = to_mcp(
            wit_types::ToolResult {
                content: blocks,
                structured_content: Some(r#"{"n":1}"#.into()),
                is_error: true,
            },
            1000,
        )
        .unwrap();
        let json = serde_json::to_value(&result).unwrap();
        assert_eq!(json["isError"], true);
        assert_eq!(json["structuredContent"]["n"], 1);
        let content = json["content"].as_array().unwrap();
        assert_eq!(content[1]["data"], "AQID");
        assert_eq!(content[2]["mimeType"], "audio/wav");
        assert_eq!(content[3]["type"], "resource_link");
        assert_eq!(content[3]["size"], 3);
        assert_eq!(content[4]["resource"]["blob"], "/w==");
    }
}
