//! The host side of a call: [`CallState`], the data of a call's store,
//! and [`Imports`], the linker of everything a plugin may import. Each
//! interface the host implements itself has a file of its own:
//! - `log`: the contract's `host` interface (log, progress, cancellation,
//!   config);
//! - `client`: the contract's `client` interface (questions to the MCP
//!   client);
//! - `fs_lookups`: `wasi:filesystem` stats and listings answered in fewer
//!   system calls than wasmtime-wasi makes;
//! - `fs_read`: `wasi:filesystem` reads without zeroing the buffer first;
//! - `stat_paths`: `toolcell:files` 0.1.0 and 0.2.0, many stats in one call;
//! - `contents`: `toolcell:files` 0.3.0, a file's contents in one call.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, OnceLock};

use anyhow::Result;
use wasmtime::ResourceLimiter;
use wasmtime::component::{HasSelf, Linker, ResourceTable};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use crate::limits::{LOOKUP_PARENTS, MAX_TABLE_ELEMENTS};
use crate::runtime::call::CallContext;
use crate::runtime::contract;
use crate::runtime::engine::Engine;
use crate::runtime::sandbox::{self, NetworkPolicy};

mod client;
mod contents;
pub mod fs_lookups;
mod fs_read;
mod log;
mod stat;
pub mod stat_paths;

use fs_lookups::{LookupView, Lookups};

/// What every plugin is linked against: WASI, `wasi:http`, the contract's
/// `host` and `client` interfaces and `toolcell:files`. One serves every
/// plugin of an engine.
pub struct Imports(Linker<CallState>);

impl Imports {
    /// Links the sandbox's imports for `engine`.
    pub fn new(engine: &Engine) -> Result<Imports> {
        let mut linker = Linker::<CallState>::new(engine.wasmtime());
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
        sandbox::refuse_special_files(&mut linker)?;
        fs_lookups::add_to_linker(&mut linker)?;
        fs_read::add_to_linker(&mut linker)?;
        stat_paths::add_to_linker(&mut linker)?;
        contents::add_to_linker(&mut linker)?;
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
        contract::host::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state)?;
        contract::client::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state)?;
        Ok(Imports(linker))
    }

    /// The linker.
    pub fn linker(&self) -> &Linker<CallState> {
        &self.0
    }
}

/// The [`Imports`] of an engine, made when a plugin is first linked: a start
/// whose every plugin links later (a builtin whose listing the compile cache
/// remembers) does not wait for them.
pub struct LazyImports {
    engine: Arc<Engine>,
    imports: OnceLock<Result<Imports, String>>,
}

impl LazyImports {
    /// The imports of `engine`, not made yet.
    pub fn new(engine: Arc<Engine>) -> LazyImports {
        LazyImports {
            engine,
            imports: OnceLock::new(),
        }
    }

    /// The imports, made now if they were not yet.
    pub fn get(&self) -> Result<&Imports> {
        self.imports
            .get_or_init(|| Imports::new(&self.engine).map_err(|error| format!("{error:#}")))
            .as_ref()
            .map_err(|error| anyhow::anyhow!("cannot link the sandbox's imports: {error}"))
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
    asked: HashSet<String>,
    lookups: Lookups,
    /// How many `pending-stats` (`toolcell:files`) the call holds.
    pending_stats: usize,
}

/// What a [`CallState`] is made of.
pub struct CallSetup {
    /// The call's WASI context: its mounts, environment and output.
    pub wasi: WasiCtx,
    /// The hosts it may reach.
    pub network: NetworkPolicy,
    /// The plugin's name, for logs.
    pub plugin: Arc<str>,
    /// What runs: the tool, or the feature (`resources/list`, ...), for logs.
    pub tool: Arc<str>,
    /// The plugin's `config` table.
    pub config: Arc<BTreeMap<String, String>>,
    /// What the call gets besides its arguments.
    pub cx: CallContext,
    /// The most linear memory the instance may grow to, in bytes.
    pub memory_bytes: usize,
    /// The most handles the call may hold at once, the lookups' included.
    pub handles: usize,
}

impl CallState {
    /// The store data of a call made of `setup`.
    pub fn new(setup: CallSetup) -> CallState {
        let mut table = ResourceTable::new();
        // The lookups' open parent directories are the call's too.
        table.set_max_capacity(setup.handles - LOOKUP_PARENTS);
        CallState {
            wasi: setup.wasi,
            http: WasiHttpCtx::new(),
            network: setup.network,
            table,
            limiter: MemoryLimiter {
                max_bytes: setup.memory_bytes,
                hit: false,
            },
            plugin: setup.plugin,
            tool: setup.tool,
            config: setup.config,
            cx: setup.cx,
            last_progress: None,
            questions: 0,
            asked: HashSet::new(),
            lookups: Lookups::default(),
            pending_stats: 0,
        }
    }

    /// The store's limiter, which caps linear memory and tables.
    pub fn limiter(&mut self) -> &mut dyn ResourceLimiter {
        &mut self.limiter
    }

    /// Whether the guest tried to grow its memory past the limit.
    pub fn memory_limit_hit(&self) -> bool {
        self.limiter.hit
    }

    /// The most handles the guest may hold at once.
    pub fn max_handles(&self) -> usize {
        self.table.max_capacity()
    }

    /// Counts a call from the guest into the host (see [`Lookups::count_call`]).
    pub fn count_host_call(&mut self) {
        self.lookups.count_call();
    }
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

    fn call(&self) -> &CallContext {
        &self.cx
    }

    fn pending_stats(&mut self) -> &mut usize {
        &mut self.pending_stats
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
        // Tables hold function references; the cap is far past any real
        // plugin and keeps a runaway one from eating host memory.
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }
}
