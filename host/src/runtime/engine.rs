//! The one wasmtime [`Engine`] and its epoch ticker.
//!
//! [`Engine`] owns the wasmtime engine every plugin shares. Calls enter the
//! `Ticker` while they run, which advances the engine's epoch so that a
//! store's epoch callback can stop a guest that overran its deadline or was
//! cancelled; soon after the last call ends, the ticker thread sleeps. It
//! compiles through the compile cache ([`super::cache`]), so a restart
//! does not recompile anything. Within one process, a component is compiled
//! (or loaded) once however many plugins use the same bytes.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::thread;
use std::time::Duration;

use anyhow::{Context, Result};
use wasmtime::component::Component;

use super::cache::CompileCache;
use super::component_file::{Identity, Wasm};
use crate::limits::{self, MAX_HANDLES_PER_CALL, MIN_HANDLES_PER_CALL, RESERVED_DESCRIPTORS};

/// How often the epoch advances while a call runs: the resolution of time
/// limits and cancellation.
pub const TICK: Duration = Duration::from_millis(5);

/// The shared wasmtime engine with its ticker and optional compile cache.
pub struct Engine {
    /// Runs components; it cannot compile, so that a start-up that finds
    /// everything in the cache never builds (or maps in) a code generator.
    inner: wasmtime::Engine,
    /// The same configuration with Cranelift, made on the first cache miss.
    compiler: OnceLock<Result<wasmtime::Engine, String>>,
    config: wasmtime::Config,
    ticker: Ticker,
    handles_per_call: usize,
    cache: Option<CompileCache>,
    /// Components of this process by SHA-256; a slot is filled by the first
    /// plugin that needs it while later ones with the same bytes wait.
    compiled: Mutex<HashMap<[u8; 32], Arc<CompileSlot>>>,
}

type CompileSlot = OnceLock<Result<Component, String>>;

/// How many instances may exist at once, how big their memories may grow
/// (the size of the engine's pool of instance slots), and how many handles
/// each call may hold.
#[derive(Clone, Copy, Debug)]
pub struct Capacity {
    /// Component instances alive at once: calls running, plus plugins
    /// listing their tools while they load.
    pub instances: u32,
    /// The largest linear memory any plugin may grow to, in bytes.
    pub memory_bytes: u64,
    /// WASI handles (open files, directories, directory listings, streams,
    /// HTTP requests) one call may hold at once; see [`handles_per_call`].
    pub handles_per_call: usize,
}

impl Default for Capacity {
    /// 64 instances of up to the default `memory_mb`, each holding up to
    /// [`MAX_HANDLES_PER_CALL`] handles.
    fn default() -> Capacity {
        Capacity {
            instances: 64,
            memory_bytes: crate::limits::DEFAULT_MEMORY_MB << 20,
            handles_per_call: MAX_HANDLES_PER_CALL,
        }
    }
}

/// How many handles each of `calls` concurrent calls may hold so that,
/// together, they cannot use up the process's `descriptor_limit` (its soft
/// `RLIMIT_NOFILE`) and make another call fail to open a file.
pub fn handles_per_call(descriptor_limit: Option<u64>, calls: usize) -> usize {
    let Some(limit) = descriptor_limit else {
        return MAX_HANDLES_PER_CALL;
    };
    let share = limit.saturating_sub(RESERVED_DESCRIPTORS) / calls.max(1) as u64;
    usize::try_from(share)
        .unwrap_or(usize::MAX)
        .clamp(MIN_HANDLES_PER_CALL, MAX_HANDLES_PER_CALL)
}

/// Raises the soft `RLIMIT_NOFILE` towards the hard one (desktops often
/// start programs with a soft limit of 1,024), and returns the soft limit
/// now in force, or `None` where there is none to read.
pub fn raise_descriptor_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        use crate::limits::DESCRIPTOR_TARGET;
        use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
        let limit = getrlimit(Resource::Nofile);
        let soft = limit.current?;
        let target = limit
            .maximum
            .map_or(DESCRIPTOR_TARGET, |hard| hard.min(DESCRIPTOR_TARGET));
        if target > soft {
            let raised = Rlimit {
                current: Some(target),
                maximum: limit.maximum,
            };
            if setrlimit(Resource::Nofile, raised).is_ok() {
                return Some(target);
            }
        }
        Some(soft)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Linear memory kept mapped in a free slot and reset in place, so the next
/// call into the same plugin takes no page faults and the host unmaps
/// nothing per call.
const KEEP_RESIDENT: usize = 2 << 20;

impl Engine {
    /// Creates the engine. `cache_dir`, when given, holds compiled
    /// components; it is created if missing, and a cache that cannot be used
    /// only costs compile time.
    ///
    /// Instances come from a pool sized by `capacity`: a call then reuses a
    /// slot, its memory reset in place, instead of mapping and unmapping
    /// gigabytes of address space, which on a multi-core machine also
    /// interrupts every core to flush its TLB.
    pub fn new(cache_dir: Option<PathBuf>, capacity: Capacity) -> Result<Engine> {
        let mut config = wasmtime::Config::new();
        super::codegen::configure(&mut config);
        // The stack a call's fiber runs on holds the guest's wasm stack and
        // the host functions it calls: 2 MiB more than the wasm stack, as in
        // wasmtime's defaults (512 KiB in 2 MiB).
        config.max_wasm_stack(limits::MAX_WASM_STACK_BYTES);
        config.async_stack_size(limits::MAX_WASM_STACK_BYTES + (2 << 20));
        config.allocation_strategy(pool(capacity));
        // For `perf`: name the compiled guest functions (docs/performance.md).
        if std::env::var_os("TOOLCELL_PERFMAP").is_some() {
            config.profiler(wasmtime::ProfilingStrategy::PerfMap);
        }
        // The runtime engine: the same configuration without a compiler.
        let runtime = |config: &wasmtime::Config| {
            let mut runtime = config.clone();
            runtime.enable_compiler(false);
            wasmtime::Engine::new(&runtime)
        };
        let inner = match runtime(&config) {
            Ok(engine) => engine,
            Err(error) => {
                // The pool reserves address space up front (a few GiB per
                // slot); under a tight `ulimit -v` that fails, and mapping
                // memory per call still works.
                tracing::warn!("instance pool unavailable, allocating per call instead: {error:#}");
                config.allocation_strategy(wasmtime::InstanceAllocationStrategy::OnDemand);
                runtime(&config)
                    .map_err(anyhow::Error::from)
                    .context("failed to create the wasmtime engine")?
            }
        };
        let cache = cache_dir.and_then(|dir| match CompileCache::open(dir.clone(), &inner) {
            Ok(cache) => Some(cache),
            Err(error) => {
                tracing::warn!(
                    dir = %dir.display(),
                    "compile cache disabled: {error:#}"
                );
                None
            }
        });
        let ticker = Ticker::start(inner.clone());
        Ok(Engine {
            inner,
            compiler: OnceLock::new(),
            config,
            ticker,
            handles_per_call: capacity.handles_per_call,
            cache,
            compiled: Mutex::new(HashMap::new()),
        })
    }

    /// The wasmtime engine.
    pub fn wasmtime(&self) -> &wasmtime::Engine {
        &self.inner
    }

    /// How many handles one call may hold at once.
    pub fn handles_per_call(&self) -> usize {
        self.handles_per_call
    }

    /// Keeps the epoch advancing until the guard is dropped.
    pub fn tick(&self) -> TickGuard {
        self.ticker.enter()
    }

    /// Compiles a component, or loads it from the cache when an entry for
    /// these exact bytes and this engine exists and is intact. `sha256` is
    /// the digest of the bytes (the builtins' are computed at build time, a
    /// file's may be remembered: [`Engine::remembered_digest`]).
    /// The bytes are read from `wasm` only if they must be compiled.
    pub fn compile(&self, name: &str, wasm: &mut Wasm, sha256: &[u8; 32]) -> Result<Component> {
        let slot = {
            let mut compiled = self.compiled.lock().unwrap_or_else(PoisonError::into_inner);
            Arc::clone(compiled.entry(*sha256).or_default())
        };
        slot.get_or_init(|| {
            self.compile_uncached(name, wasm, sha256)
                .map_err(|error| format!("{error:#}"))
        })
        .clone()
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("failed to compile plugin `{name}`"))
    }

    /// The SHA-256 of the component file version `identity`, whose sample is
    /// `sample`, if the compile cache remembers it: a warm start then need
    /// not read and hash the whole file (a Python or JavaScript component is
    /// 15 to 25 MB).
    pub fn remembered_digest(&self, identity: &Identity, sample: u128) -> Option<[u8; 32]> {
        self.cache.as_ref()?.remembered_digest(identity, sample)
    }

    /// Remembers `sha256` as the digest of the file version `identity`,
    /// whose sample is `sample`. Failing to is only logged: the next start
    /// hashes the file again.
    pub fn remember_digest(&self, identity: &Identity, sample: u128, sha256: &[u8; 32]) {
        if let Some(cache) = &self.cache
            && let Err(error) = cache.remember_digest(identity, sample, sha256)
        {
            tracing::debug!("could not remember a component's digest: {error:#}");
        }
    }

    /// What the component `sha256` listed under `inputs` (its configuration
    /// and limits), as the JSON [`Engine::remember_listing`] was given, if
    /// the compile cache holds it intact.
    pub fn remembered_listing(&self, sha256: &[u8; 32], inputs: &[u8]) -> Option<Vec<u8>> {
        let cache = self.cache.as_ref()?;
        cache.listing(&CompileCache::listing_key(sha256, inputs))
    }

    /// Remembers what the component `sha256` listed under `inputs`. Failing
    /// to is only logged: the next start lists again.
    pub fn remember_listing(&self, sha256: &[u8; 32], inputs: &[u8], json: &[u8]) {
        if let Some(cache) = &self.cache
            && let Err(error) =
                cache.store_listing(&CompileCache::listing_key(sha256, inputs), json)
        {
            tracing::debug!("could not remember a plugin's listing: {error:#}");
        }
    }

    /// Compiles `bytes` to what `Component::deserialize` loads.
    fn precompile(&self, bytes: &[u8]) -> Result<Vec<u8>> {
        let compiler = self
            .compiler
            .get_or_init(|| {
                wasmtime::Engine::new(&self.config).map_err(|error| format!("{error:#}"))
            })
            .as_ref()
            .map_err(|error| anyhow::anyhow!("cannot create the compiler: {error}"))?;
        Ok(compiler.precompile_component(bytes)?)
    }

    fn compile_uncached(
        &self,
        name: &str,
        wasm: &mut Wasm,
        sha256: &[u8; 32],
    ) -> Result<Component> {
        let cached = self.cache.as_ref().map(|cache| (cache, cache.key(sha256)));
        if let Some((cache, key)) = &cached {
            match cache.load(&self.inner, key) {
                Ok(Some(component)) => {
                    tracing::debug!(plugin = name, "loaded compiled component from cache");
                    return Ok(component);
                }
                Ok(None) => {}
                Err(error) => {
                    tracing::warn!(
                        plugin = name,
                        "ignoring a bad compile-cache entry: {error:#}"
                    );
                }
            }
        }
        if let Some(compiled) = wasm.compiled() {
            match self.load_compiled(cached.as_ref(), compiled) {
                Ok(component) => {
                    tracing::debug!(plugin = name, "loaded the code compiled at build time");
                    return Ok(component);
                }
                // Another CPU (one without a feature the code uses) or a
                // build whose engine settings drifted: compile for this one.
                Err(error) => tracing::info!(
                    plugin = name,
                    "compiling: the code compiled at build time does not fit: {error:#}"
                ),
            }
        }
        let serialized = self.precompile(wasm.get()?)?;
        if let Some((cache, key)) = &cached
            && let Err(error) = cache.store(key, &serialized)
        {
            tracing::warn!(
                plugin = name,
                "could not write the compile cache: {error:#}"
            );
        }
        // SAFETY: these bytes are what `precompile_component` just returned
        // for this engine's configuration.
        #[allow(unsafe_code)]
        Ok(unsafe { Component::deserialize(&self.inner, &serialized) }?)
    }

    /// Whether this engine made its code generator (to compile anything).
    #[cfg(test)]
    pub(super) fn made_compiler(&self) -> bool {
        self.compiler.get().is_some()
    }

    /// Loads `compiled`, a component compiled ahead of time. With a cache,
    /// through it (stored under `key`, then mapped from the file as any
    /// entry is, so only the code that runs becomes resident; a later start
    /// finds it there); without, from memory.
    fn load_compiled(
        &self,
        cached: Option<&(&CompileCache, String)>,
        compiled: &'static [u8],
    ) -> Result<Component> {
        if let Some((cache, key)) = cached {
            match cache.store(key, compiled) {
                Ok(()) => return cache.load(&self.inner, key)?.context("the entry vanished"),
                Err(error) => tracing::warn!("could not write the compile cache: {error:#}"),
            }
        }
        // SAFETY: `compiled` is what `precompile_component` produced at build
        // time (embedded by `build.rs`); wasmtime checks that its settings
        // and CPU features fit this engine and machine before using it.
        #[allow(unsafe_code)]
        Ok(unsafe { Component::deserialize(&self.inner, compiled) }?)
    }
}

/// The instance pool for `capacity`. A component built from Rust has a few
/// core instances (the program and the adapter's shims), one memory and a
/// few tables; the per-component counts leave room for bigger ones.
fn pool(capacity: Capacity) -> wasmtime::InstanceAllocationStrategy {
    let instances = capacity.instances.max(1);
    let mut pool = wasmtime::PoolingAllocationConfig::new();
    pool.total_component_instances(instances)
        .total_core_instances(instances.saturating_mul(8))
        .total_memories(instances.saturating_mul(2))
        .total_tables(instances.saturating_mul(8))
        .total_stacks(instances)
        .max_memory_size(usize::try_from(capacity.memory_bytes).unwrap_or(usize::MAX))
        .table_elements(100_000)
        .max_unused_warm_slots(instances)
        .linear_memory_keep_resident(KEEP_RESIDENT)
        .table_keep_resident(64 << 10)
        .pagemap_scan(wasmtime::Enabled::Auto);
    wasmtime::InstanceAllocationStrategy::Pooling(pool)
}

/// Advances the engine's epoch every [`TICK`] while calls run, and for
/// [`LINGER`] after the last one, so that a steady stream of short calls does
/// not wake the thread for each one.
struct Ticker {
    active: Arc<AtomicUsize>,
    parked: Arc<AtomicBool>,
    thread: thread::Thread,
}

/// How long the ticker keeps going with no call running before it sleeps.
const LINGER: Duration = Duration::from_millis(500);

impl Ticker {
    fn start(engine: wasmtime::Engine) -> Ticker {
        let active = Arc::new(AtomicUsize::new(0));
        let parked = Arc::new(AtomicBool::new(false));
        let (counter, asleep) = (Arc::clone(&active), Arc::clone(&parked));
        let handle = thread::Builder::new()
            .name("toolcell-epoch".into())
            .spawn(move || {
                let mut idle = Duration::ZERO;
                loop {
                    if counter.load(Ordering::SeqCst) > 0 {
                        idle = Duration::ZERO;
                    } else if idle >= LINGER {
                        asleep.store(true, Ordering::SeqCst);
                        // `enter` clears the flag after counting itself, and
                        // unparks if it was set: no wake-up is lost.
                        if counter.load(Ordering::SeqCst) == 0 {
                            thread::park();
                        }
                        asleep.store(false, Ordering::SeqCst);
                        idle = Duration::ZERO;
                        continue;
                    } else {
                        idle += TICK;
                    }
                    thread::sleep(TICK);
                    engine.increment_epoch();
                }
            });
        let thread = match handle {
            Ok(handle) => handle.thread().clone(),
            // Without the thread, deadlines fall back to the callback check
            // done at every epoch tick, which then never comes: log it loudly.
            Err(error) => {
                tracing::error!("cannot start the epoch thread; time limits are off: {error}");
                thread::current()
            }
        };
        Ticker {
            active,
            parked,
            thread,
        }
    }

    fn enter(&self) -> TickGuard {
        self.active.fetch_add(1, Ordering::SeqCst);
        if self.parked.swap(false, Ordering::SeqCst) {
            self.thread.unpark();
        }
        TickGuard {
            active: Arc::clone(&self.active),
        }
    }
}

/// Returned by [`Engine::tick`]; the ticker may sleep once every guard is gone.
pub struct TickGuard {
    active: Arc<AtomicUsize>,
}

impl Drop for TickGuard {
    fn drop(&mut self) {
        self.active.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    #[test]
    fn same_bytes_compile_once() {
        let wasm = empty_component();
        let sha = sha256(&wasm);
        let engine = Engine::new(None, Capacity::default()).unwrap();
        compile(&engine, "a", &wasm, &sha).unwrap();
        compile(&engine, "b", &wasm, &sha).unwrap();
        assert_eq!(engine.compiled.lock().unwrap().len(), 1);

        // A failure is remembered too, and named for each plugin.
        let bad = b"not wasm".to_vec();
        let bad_sha = sha256(&bad);
        let first = compile(&engine, "c", &bad, &bad_sha).unwrap_err();
        let second = compile(&engine, "d", &bad, &bad_sha).unwrap_err();
        assert!(format!("{first:#}").contains("plugin `c`"), "{first:#}");
        assert!(format!("{second:#}").contains("plugin `d`"), "{second:#}");
    }

    #[test]
    fn code_compiled_ahead_that_does_not_fit_is_compiled_again() {
        let wasm = empty_component();
        let sha = sha256(&wasm);
        let cache = tempfile::tempdir().unwrap();
        let engine = Engine::new(Some(cache.path().to_owned()), Capacity::default()).unwrap();
        let mut bad = Wasm::bytes(std::borrow::Cow::Owned(wasm.clone()))
            .with_compiled(Some(b"not code for this engine"));
        engine.compile("a", &mut bad, &sha).unwrap();
        assert!(engine.made_compiler(), "the component was compiled");

        // What the cache now holds is the compiled component, not the bad code.
        let again = Engine::new(Some(cache.path().to_owned()), Capacity::default()).unwrap();
        compile(&again, "a", &wasm, &sha).unwrap();
        assert!(!again.made_compiler(), "the cache answered");
    }

    pub(in crate::runtime) fn compile(
        engine: &Engine,
        name: &str,
        bytes: &[u8],
        sha: &[u8; 32],
    ) -> Result<Component> {
        let mut wasm = Wasm::bytes(std::borrow::Cow::Owned(bytes.to_vec()));
        engine.compile(name, &mut wasm, sha)
    }

    pub(in crate::runtime) fn sha256(bytes: &[u8]) -> [u8; 32] {
        use sha2::Digest;
        sha2::Sha256::digest(bytes).into()
    }

    /// The smallest valid component, in binary form.
    pub(in crate::runtime) fn empty_component() -> Vec<u8> {
        // magic, component-model version 0x0d, layer 1
        vec![0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00]
    }
}
