//! The one wasmtime [`Engine`], its epoch ticker and the compile cache.
//!
//! [`Engine`] owns the wasmtime engine every plugin shares. Calls enter the
//! `Ticker` while they run, which advances the engine's epoch so that a
//! store's epoch callback can stop a guest that overran its deadline or was
//! cancelled; with no call running, the ticker thread sleeps. The
//! `CompileCache` keeps compiled components on disk, keyed by the
//! component's SHA-256 and the engine's configuration, so a restart does not
//! recompile anything.

use std::fs;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use wasmtime::component::Component;

/// How often the epoch advances while a call runs: the resolution of time
/// limits and cancellation.
pub const TICK: Duration = Duration::from_millis(5);

/// The shared wasmtime engine with its ticker and optional compile cache.
pub struct Engine {
    inner: wasmtime::Engine,
    ticker: Ticker,
    cache: Option<CompileCache>,
}

impl Engine {
    /// Creates the engine. `cache_dir`, when given, holds compiled
    /// components; it is created if missing, and a cache that cannot be used
    /// only costs compile time.
    pub fn new(cache_dir: Option<PathBuf>) -> Result<Engine> {
        let mut config = wasmtime::Config::new();
        config.wasm_component_model(true);
        config.epoch_interruption(true);
        let inner = wasmtime::Engine::new(&config)
            .map_err(anyhow::Error::from)
            .context("failed to create the wasmtime engine")?;
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
            ticker,
            cache,
        })
    }

    /// The wasmtime engine.
    pub fn wasmtime(&self) -> &wasmtime::Engine {
        &self.inner
    }

    /// Keeps the epoch advancing until the guard is dropped.
    pub fn tick(&self) -> TickGuard {
        self.ticker.enter()
    }

    /// Compiles a component, or loads it from the cache when an entry for
    /// these exact bytes and this engine exists and is intact.
    pub fn compile(&self, name: &str, bytes: &[u8]) -> Result<Component> {
        let Some(cache) = &self.cache else {
            return Component::new(&self.inner, bytes)
                .map_err(anyhow::Error::from)
                .with_context(|| format!("failed to compile plugin `{name}`"));
        };
        let key = cache.key(bytes);
        match cache.load(&self.inner, &key) {
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
        let serialized = self
            .inner
            .precompile_component(bytes)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("failed to compile plugin `{name}`"))?;
        if let Err(error) = cache.store(&key, &serialized) {
            tracing::warn!(
                plugin = name,
                "could not write the compile cache: {error:#}"
            );
        }
        CompileCache::deserialize(&self.inner, &serialized)
            .with_context(|| format!("failed to load compiled plugin `{name}`"))
    }
}

/// Advances the engine's epoch every [`TICK`] while at least one call runs.
struct Ticker {
    active: Arc<AtomicUsize>,
    thread: thread::Thread,
}

impl Ticker {
    fn start(engine: wasmtime::Engine) -> Ticker {
        let active = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&active);
        let handle = thread::Builder::new()
            .name("toolcell-epoch".into())
            .spawn(move || {
                loop {
                    if counter.load(Ordering::Acquire) == 0 {
                        // Woken by `enter`; a spurious wake-up just loops.
                        thread::park();
                    } else {
                        thread::sleep(TICK);
                        engine.increment_epoch();
                    }
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
        Ticker { active, thread }
    }

    fn enter(&self) -> TickGuard {
        if self.active.fetch_add(1, Ordering::AcqRel) == 0 {
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

/// Compiled components on disk.
///
/// An entry is `<component sha256>-<engine hash>.cwasm` and holds the SHA-256
/// of its payload followed by the payload, so a truncated or altered file is
/// detected and recompiled instead of being handed to wasmtime. Entries are
/// written to a temporary file and renamed into place.
struct CompileCache {
    dir: PathBuf,
    engine_hash: String,
}

impl CompileCache {
    fn open(dir: PathBuf, engine: &wasmtime::Engine) -> Result<CompileCache> {
        fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let mut hasher = DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        env!("CARGO_PKG_VERSION").hash(&mut hasher);
        Ok(CompileCache {
            dir,
            engine_hash: format!("{:016x}", hasher.finish()),
        })
    }

    fn key(&self, bytes: &[u8]) -> String {
        let digest = Sha256::digest(bytes);
        format!("{}-{}", hex(&digest), self.engine_hash)
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.cwasm"))
    }

    fn load(&self, engine: &wasmtime::Engine, key: &str) -> Result<Option<Component>> {
        let path = self.path(key);
        let data = match fs::read(&path) {
            Ok(data) => data,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => {
                return Err(error).with_context(|| format!("cannot read {}", path.display()));
            }
        };
        let Some((digest, payload)) = data.split_at_checked(32) else {
            anyhow::bail!("{} is truncated", path.display());
        };
        if Sha256::digest(payload).as_slice() != digest {
            anyhow::bail!("{} is corrupt (checksum mismatch)", path.display());
        }
        Self::deserialize(engine, payload)
            .map(Some)
            .with_context(|| format!("{} does not load", path.display()))
    }

    fn store(&self, key: &str, payload: &[u8]) -> Result<()> {
        let mut file = tempfile::NamedTempFile::new_in(&self.dir)?;
        file.write_all(&Sha256::digest(payload))?;
        file.write_all(payload)?;
        file.as_file().sync_all()?;
        file.persist(self.path(key))?;
        Ok(())
    }

    /// Loads bytes produced by `precompile_component`.
    #[allow(unsafe_code)]
    fn deserialize(engine: &wasmtime::Engine, payload: &[u8]) -> Result<Component> {
        // SAFETY: `payload` is either what this engine's
        // `precompile_component` just returned, or a cache entry whose
        // SHA-256 matches the one written with it, in a directory only this
        // user writes; wasmtime itself checks the engine compatibility.
        Ok(unsafe { Component::deserialize(engine, payload) }?)
    }
}

/// The default cache directory: `$TOOLCELL_CACHE_DIR`, else the user's cache
/// directory plus `toolcell`.
pub fn default_cache_dir() -> Option<PathBuf> {
    std::env::var_os("TOOLCELL_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| dirs::cache_dir().map(|dir| dir.join("toolcell")))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_round_trip_and_corruption_recompiles() {
        let dir = tempfile::tempdir().unwrap();
        let wasm = empty_component();
        let engine = Engine::new(Some(dir.path().to_path_buf())).unwrap();
        engine.compile("empty", &wasm).unwrap();
        let entries: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(entries.len(), 1, "one cache entry written");
        let entry = entries[0].as_ref().unwrap().path();

        // A second engine finds the entry.
        let cache = engine.cache.as_ref().unwrap();
        let key = cache.key(&wasm);
        assert!(cache.load(engine.wasmtime(), &key).unwrap().is_some());

        // Flip a byte: the entry is refused, and compile still succeeds and
        // rewrites it.
        let mut data = fs::read(&entry).unwrap();
        let last = data.len() - 1;
        data[last] ^= 0xff;
        fs::write(&entry, &data).unwrap();
        assert!(cache.load(engine.wasmtime(), &key).is_err());
        engine.compile("empty", &wasm).unwrap();
        assert!(cache.load(engine.wasmtime(), &key).unwrap().is_some());

        // A truncated entry too.
        fs::write(&entry, b"short").unwrap();
        assert!(cache.load(engine.wasmtime(), &key).is_err());
    }

    /// The smallest valid component, in binary form.
    fn empty_component() -> Vec<u8> {
        // magic, component-model version 0x0d, layer 1
        vec![0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00]
    }
}
