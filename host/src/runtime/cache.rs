//! The compile cache: compiled components on disk, keyed by the
//! component's SHA-256 and the engine's configuration. An entry is mapped
//! into memory, not read, so only the code a call runs becomes resident;
//! the records beside the entries let a warm start skip reading whole files
//! (see `CompileCache`) and instantiating plugins to list them (`listings`).

use std::fs::{self, File};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};
use wasmtime::component::Component;
use xxhash_rust::xxh3::{Xxh3, xxh3_128};

use super::component_file::{IDENTITY_LEN, Identity};
use super::oci;
use crate::limits::{
    CACHE_KEEP_UNUSED, CACHE_MAX_DIGESTS, CACHE_MAX_LISTINGS, CACHE_MAX_MB, OCI_CACHE_MAX_MB,
};

mod listings;

/// Compiled components on disk.
///
/// An entry is `<component sha256>-<engine hash>.cwasm`: the bytes
/// `precompile_component` produced, then a trailer of the XXH3-128 of those
/// bytes and [`TRAILER_MAGIC`]. Loading hashes the file through a small
/// buffer, refuses it on any mismatch (it is then recompiled and rewritten),
/// and only then lets wasmtime map it, which also checks that the engine
/// matches. (The engine hash covers wasmtime's version and settings; the
/// runtime engine has no code generator, so it leaves out the CPU features,
/// which wasmtime checks against this machine's when it loads an entry: an
/// entry from another CPU is recompiled.) Entries are written to a temporary
/// file and renamed into place, so a reader never sees half an entry and a
/// mapped entry is never rewritten in place.
///
/// The checksum catches truncation, bit rot and stray writes, not an
/// attacker: whoever can write the user's cache directory can already change
/// what the user runs.
///
/// Where the OS gives a file an [`Identity`] (device, inode, size,
/// modification and change times; Unix), an entry is checksummed once: its
/// identity is then recorded under `checked/`, and a later load that finds
/// the same identity maps the entry without reading it through (a Python
/// component's entry is 47 MB, and reading it for the checksum was half of
/// a warm start). Any write to the entry, a truncation or a replacement
/// changes its identity, since every write moves the change time, which no
/// call can set back; so the only damage this no longer catches on later
/// loads is the disk's own, below the file system, which nothing checks in
/// the executables the OS maps either. Elsewhere every load checks.
pub(super) struct CompileCache {
    dir: PathBuf,
    engine_hash: String,
}

/// The end of every cache entry; a file without it is not one of ours.
const TRAILER_MAGIC: &[u8; 8] = b"tcache01";
/// The checksum then the magic.
const TRAILER_LEN: u64 = 16 + TRAILER_MAGIC.len() as u64;
/// A remembered digest: the identity, the sample, the SHA-256, the magic.
const DIGEST_RECORD_LEN: usize = IDENTITY_LEN + 16 + 32 + TRAILER_MAGIC.len();
/// A checked entry's record: its identity, the magic.
const CHECKED_RECORD_LEN: usize = IDENTITY_LEN + TRAILER_MAGIC.len();

impl CompileCache {
    pub(super) fn open(dir: PathBuf, engine: &wasmtime::Engine) -> Result<CompileCache> {
        fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let mut hasher = DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        env!("CARGO_PKG_VERSION").hash(&mut hasher);
        let cache = CompileCache {
            dir,
            engine_hash: format!("{:016x}", hasher.finish()),
        };
        cache.sweep_when_due();
        Ok(cache)
    }

    /// Starts a [`sweep`] on a thread of its own if none has started in the
    /// last [`SWEEP_EVERY`] (the `swept` file's modification time says when
    /// one did), so a start-up pays one `stat` for it.
    fn sweep_when_due(&self) {
        let marker = self.dir.join("swept");
        let due = fs::metadata(&marker)
            .and_then(|meta| meta.modified())
            .map_or(true, |at| age(at, SystemTime::now()) >= SWEEP_EVERY);
        // Written first, so that servers starting together sweep once.
        if !due || fs::write(&marker, b"").is_err() {
            return;
        }
        let dir = self.dir.clone();
        let spawned = std::thread::Builder::new()
            .name("toolcell-cache-sweep".into())
            .spawn(move || sweep(&dir, &Bounds::default(), SystemTime::now()));
        if let Err(error) = spawned {
            tracing::debug!("cannot start the compile cache's sweep: {error}");
        }
    }

    pub(super) fn key(&self, sha256: &[u8; 32]) -> String {
        format!("{}-{}", hex(sha256), self.engine_hash)
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.cwasm"))
    }

    pub(super) fn load(&self, engine: &wasmtime::Engine, key: &str) -> Result<Option<Component>> {
        let path = self.path(key);
        let file = match File::open(&path) {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => {
                return Err(error).with_context(|| format!("cannot open {}", path.display()));
            }
        };
        let meta = file
            .metadata()
            .with_context(|| format!("cannot read {}", path.display()))?;
        let identity = Identity::of(&meta);
        let checked = identity
            .as_ref()
            .is_some_and(|identity| self.was_checked(key, identity));
        if !checked {
            verify(file, meta.len())
                .with_context(|| format!("{} is not intact", path.display()))?;
            if let Some(identity) = &identity
                && let Err(error) = self.record_checked(key, identity)
            {
                tracing::debug!("could not record a checked cache entry: {error:#}");
            }
        }
        // SAFETY: the entry holds what `precompile_component` produced for
        // this engine configuration (its checksum matched just now, or at an
        // earlier load with no write to it since, and wasmtime checks the
        // configuration again); entries are replaced by rename, never
        // rewritten, so the mapping stays as checked.
        #[allow(unsafe_code)]
        let component = match unsafe { Component::deserialize_file(engine, &path) } {
            Ok(component) => component,
            // Under wine, mapping the entry fails (its `MapViewOfFile` gives
            // wasmtime a view without copy-on-write, so the `VirtualProtect`
            // to `PAGE_WRITECOPY` that follows is refused); read it instead.
            Err(error) if cfg!(windows) => load_read(engine, &path, &error)?,
            Err(error) => {
                return Err(anyhow::Error::from(error))
                    .with_context(|| format!("{} does not load", path.display()));
            }
        };
        Ok(Some(component))
    }

    /// Where the identity of entry `key` is recorded once its checksum
    /// matched: `checked/<key>`.
    fn checked_path(&self, key: &str) -> PathBuf {
        self.dir.join("checked").join(key)
    }

    /// Whether entry `key`, now `identity`, is the file whose checksum
    /// matched before: no write has reached it since (see
    /// [`CompileCache`] for why that is enough).
    fn was_checked(&self, key: &str, identity: &Identity) -> bool {
        read_record::<CHECKED_RECORD_LEN>(&self.checked_path(key))
            .is_some_and(|record| record[..IDENTITY_LEN] == identity.0)
    }

    fn record_checked(&self, key: &str, identity: &Identity) -> Result<()> {
        write_record(&self.checked_path(key), &[&identity.0])
    }

    /// Where the digest of the file version `identity` is remembered:
    /// `digests/<XXH3-128 of the identity>`, holding the identity, the
    /// sample, the SHA-256 and [`TRAILER_MAGIC`].
    fn digest_path(&self, identity: &Identity) -> PathBuf {
        self.dir
            .join("digests")
            .join(format!("{:032x}", xxh3_128(&identity.0)))
    }

    pub(super) fn remembered_digest(&self, identity: &Identity, sample: u128) -> Option<[u8; 32]> {
        let record = read_record::<DIGEST_RECORD_LEN>(&self.digest_path(identity))?;
        let (id, rest) = record.split_at(IDENTITY_LEN);
        let (kept_sample, rest) = rest.split_at(16);
        let sha256 = &rest[..32];
        (id == identity.0 && kept_sample == sample.to_le_bytes())
            .then(|| sha256.try_into().ok())
            .flatten()
    }

    pub(super) fn remember_digest(
        &self,
        identity: &Identity,
        sample: u128,
        sha256: &[u8; 32],
    ) -> Result<()> {
        write_record(
            &self.digest_path(identity),
            &[&identity.0, &sample.to_le_bytes(), sha256],
        )
    }

    pub(super) fn store(&self, key: &str, payload: &[u8]) -> Result<()> {
        let mut file = tempfile::NamedTempFile::new_in(&self.dir)?;
        file.write_all(payload)?;
        file.write_all(&xxh3_128(payload).to_le_bytes())?;
        file.write_all(TRAILER_MAGIC)?;
        file.as_file().sync_all()?;
        file.persist(self.path(key))?;
        Ok(())
    }
}

/// How often the cache is swept.
const SWEEP_EVERY: Duration = Duration::from_secs(24 * 3600);

/// An entry used this recently is never removed to make room.
pub(super) const RECENT: Duration = Duration::from_secs(24 * 3600);

/// What a sweep keeps the cache within.
struct Bounds {
    keep_unused: Duration,
    max_bytes: u64,
    max_digests: usize,
    /// Remembered listings (`listings/`).
    max_listings: usize,
    /// What the pull cache's blobs (`oci/`) may add up to.
    max_pulled_bytes: u64,
}

impl Default for Bounds {
    fn default() -> Bounds {
        Bounds {
            keep_unused: CACHE_KEEP_UNUSED,
            max_bytes: CACHE_MAX_MB.saturating_mul(1024 * 1024),
            max_digests: CACHE_MAX_DIGESTS,
            max_listings: CACHE_MAX_LISTINGS,
            max_pulled_bytes: OCI_CACHE_MAX_MB.saturating_mul(1024 * 1024),
        }
    }
}

/// Brings the cache in `dir` within `bounds`: entries unused for
/// `keep_unused` go, then the least recently used while the rest add up to
/// more than `max_bytes` (never one used within [`RECENT`]); a removed
/// entry's `checked/` record goes with it, as does any record whose entry is
/// gone; the oldest remembered digests past `max_digests` go; temporary
/// files a crash left behind go after a day. An entry is last used when it
/// was last read or mapped (its access time), or else written. Every failure
/// is skipped: an entry that cannot be removed (mapped on Windows) stays
/// until a later sweep. A server that loses an entry this way compiles it
/// again; nothing else depends on one. The remembered listings
/// ([`listings::sweep`]) and the pull cache beside it (`oci/`,
/// [`oci::sweep`]) are swept too.
fn sweep(dir: &Path, bounds: &Bounds, now: SystemTime) {
    let mut entries: Vec<(SystemTime, u64, PathBuf)> = files(dir)
        .filter(|(path, _)| path.extension().is_some_and(|ext| ext == "cwasm"))
        .map(|(path, meta)| (last_used(&meta), meta.len(), path))
        .collect();
    entries.sort();
    let mut total: u64 = entries.iter().map(|(_, len, _)| len).sum();
    let (mut removed, mut freed) = (0usize, 0u64);
    for (used, len, path) in &entries {
        let unused = age(*used, now);
        if unused < bounds.keep_unused && (total <= bounds.max_bytes || unused < RECENT) {
            continue;
        }
        if fs::remove_file(path).is_ok() {
            total -= len;
            removed += 1;
            freed += len;
        }
    }
    let checked = dir.join("checked");
    for (path, _) in files(&checked) {
        let Some(key) = path.file_name().and_then(|name| name.to_str()) else {
            continue;
        };
        if !is_temporary(&path) && !dir.join(format!("{key}.cwasm")).exists() {
            let _ = fs::remove_file(&path);
        }
    }
    let mut digests: Vec<(SystemTime, PathBuf)> = files(&dir.join("digests"))
        .map(|(path, meta)| (meta.modified().unwrap_or(SystemTime::UNIX_EPOCH), path))
        .collect();
    if digests.len() > bounds.max_digests {
        digests.sort();
        let excess = digests.len() - bounds.max_digests;
        for (_, path) in &digests[..excess] {
            let _ = fs::remove_file(path);
        }
    }
    for folder in [dir.to_path_buf(), checked, dir.join("digests")] {
        for (path, meta) in files(&folder) {
            let written = meta.modified().unwrap_or(now);
            if is_temporary(&path) && age(written, now) >= RECENT {
                let _ = fs::remove_file(&path);
            }
        }
    }
    listings::sweep(&dir.join("listings"), bounds.max_listings, now);
    oci::sweep(&dir.join("oci"), bounds.max_pulled_bytes, now);
    if removed > 0 {
        tracing::info!(
            dir = %dir.display(),
            "compile cache: removed {removed} compiled components ({} MiB) unused for {} days \
             or past the cache's {} MiB",
            freed / (1024 * 1024),
            bounds.keep_unused.as_secs() / 86_400,
            bounds.max_bytes / (1024 * 1024),
        );
    }
}

/// The regular files directly in `dir`, with their metadata (none if `dir`
/// cannot be read).
pub(super) fn files(dir: &Path) -> impl Iterator<Item = (PathBuf, fs::Metadata)> {
    fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let meta = entry.metadata().ok()?;
            meta.is_file().then(|| (entry.path(), meta))
        })
}

/// Whether `path` is one of `tempfile`'s files, written but not yet renamed
/// into place (or left by a crash).
pub(super) fn is_temporary(path: &Path) -> bool {
    path.file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| name.starts_with(".tmp"))
}

/// When an entry was last read or mapped, or else written.
pub(super) fn last_used(meta: &fs::Metadata) -> SystemTime {
    let written = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
    meta.accessed().map_or(written, |read| read.max(written))
}

/// How long before `now` `then` was; zero if it is later.
pub(super) fn age(then: SystemTime, now: SystemTime) -> Duration {
    now.duration_since(then).unwrap_or_default()
}

/// Writes `parts` then [`TRAILER_MAGIC`] as the record at `path`, through a
/// temporary file renamed into place, so a reader sees all of a record or
/// none of it.
fn write_record(path: &Path, parts: &[&[u8]]) -> Result<()> {
    let dir = path.parent().context("a record's path has a directory")?;
    fs::create_dir_all(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    for part in parts {
        file.write_all(part)?;
    }
    file.write_all(TRAILER_MAGIC)?;
    file.persist(path)?;
    Ok(())
}

/// The record at `path` if its first `N` bytes end with [`TRAILER_MAGIC`];
/// anything else (missing, short, damaged) is no record.
fn read_record<const N: usize>(path: &Path) -> Option<[u8; N]> {
    let mut record = [0u8; N];
    File::open(path)
        .and_then(|mut file| file.read_exact(&mut record))
        .ok()?;
    record.ends_with(TRAILER_MAGIC).then_some(record)
}

/// Loads the entry at `path` by reading it into memory rather than mapping
/// it: the fallback when mapping fails with `mapping_error` (on Windows,
/// under wine). The first fallback in a process logs one warning.
fn load_read(
    engine: &wasmtime::Engine,
    path: &std::path::Path,
    mapping_error: &wasmtime::Error,
) -> Result<Component> {
    static WARNED: AtomicBool = AtomicBool::new(false);
    if !WARNED.swap(true, Ordering::Relaxed) {
        tracing::warn!(
            "compile cache: cannot map {} ({}), as under wine; reading cached components into \
             memory instead",
            path.display(),
            mapping_error.root_cause()
        );
    }
    let mut bytes = fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    // The entry may have been replaced since it was checked: check these bytes.
    verify(std::io::Cursor::new(&bytes), bytes.len() as u64)
        .with_context(|| format!("{} is not intact", path.display()))?;
    bytes.truncate(bytes.len() - TRAILER_LEN as usize);
    // SAFETY: as in `CompileCache::load`: these bytes passed the checksum
    // just now, and wasmtime checks the engine configuration.
    #[allow(unsafe_code)]
    let component = unsafe { Component::deserialize(engine, &bytes) }
        .map_err(anyhow::Error::from)
        .with_context(|| format!("{} does not load", path.display()))?;
    Ok(component)
}

/// Checks an entry's trailer against its contents, reading through a
/// buffer so the file's pages are not mapped into this process.
fn verify(mut file: impl Read, len: u64) -> Result<()> {
    let Some(payload_len) = len.checked_sub(TRAILER_LEN).filter(|&n| n > 0) else {
        anyhow::bail!("truncated ({len} bytes)");
    };
    let mut hasher = Xxh3::new();
    // Sized to the payload when it is smaller (a listing: a few kilobytes).
    let mut buffer =
        vec![0u8; usize::try_from(payload_len).map_or(256 * 1024, |n| n.min(256 * 1024))];
    let mut left = payload_len;
    while left > 0 {
        let want = usize::try_from(left)
            .unwrap_or(usize::MAX)
            .min(buffer.len());
        file.read_exact(&mut buffer[..want])?;
        hasher.update(&buffer[..want]);
        left -= want as u64;
    }
    let mut trailer = [0u8; TRAILER_LEN as usize];
    file.read_exact(&mut trailer)?;
    let (sum, magic) = trailer.split_at(16);
    if magic != TRAILER_MAGIC {
        anyhow::bail!("not a toolcell cache entry");
    }
    if sum != hasher.digest128().to_le_bytes() {
        anyhow::bail!("checksum mismatch");
    }
    Ok(())
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
pub(super) mod tests {
    use std::time::Duration;

    use super::*;
    use crate::runtime::engine::tests::{compile, empty_component, sha256};
    use crate::runtime::engine::{Capacity, Engine};

    /// An engine caching in `dir`, and a handle on the same cache.
    fn engine_and_cache(dir: &Path) -> (Engine, CompileCache) {
        let engine = Engine::new(Some(dir.to_path_buf()), Capacity::default()).unwrap();
        let cache = CompileCache::open(dir.to_path_buf(), engine.wasmtime()).unwrap();
        (engine, cache)
    }

    #[test]
    fn cache_round_trip_and_corruption_recompiles() {
        let dir = tempfile::tempdir().unwrap();
        let wasm = empty_component();
        let sha = sha256(&wasm);
        let (engine, cache) = engine_and_cache(dir.path());
        compile(&engine, "empty", &wasm, &sha).unwrap();
        let entries: Vec<_> = files(dir.path())
            .filter(|(path, _)| path.extension().is_some_and(|ext| ext == "cwasm"))
            .collect();
        assert_eq!(entries.len(), 1, "one cache entry written");
        let entry = entries[0].0.clone();

        // A second engine finds the entry.
        let key = cache.key(&sha);
        assert!(cache.load(engine.wasmtime(), &key).unwrap().is_some());

        // Flip a byte: the entry is refused, and compile still succeeds and
        // rewrites it.
        let mut data = fs::read(&entry).unwrap();
        let middle = (data.len() - TRAILER_LEN as usize) / 2;
        data[middle] ^= 0xff;
        fs::write(&entry, &data).unwrap();
        assert!(cache.load(engine.wasmtime(), &key).is_err());
        let again = Engine::new(Some(dir.path().to_path_buf()), Capacity::default()).unwrap();
        compile(&again, "empty", &wasm, &sha).unwrap();
        assert!(cache.load(engine.wasmtime(), &key).unwrap().is_some());

        // A truncated entry too, and one cut just before its trailer.
        fs::write(&entry, b"short").unwrap();
        assert!(cache.load(engine.wasmtime(), &key).is_err());
        fs::write(&entry, &data[..data.len() - TRAILER_LEN as usize]).unwrap();
        assert!(cache.load(engine.wasmtime(), &key).is_err());
    }

    /// An entry whose checksum matched is not read through again while its identity stays; a
    /// write to it changes its identity, and the next load checks it again.
    #[cfg(unix)]
    #[test]
    fn a_checked_entry_is_checked_again_only_after_a_write() {
        let dir = tempfile::tempdir().unwrap();
        let wasm = empty_component();
        let sha = sha256(&wasm);
        let (engine, cache) = engine_and_cache(dir.path());
        compile(&engine, "empty", &wasm, &sha).unwrap();
        let key = cache.key(&sha);
        assert!(cache.load(engine.wasmtime(), &key).unwrap().is_some());
        assert!(
            !cache.checked_path(&key).exists(),
            "a fresh entry is checked every time"
        );
        std::thread::sleep(crate::runtime::component_file::SETTLED + Duration::from_millis(100));
        assert!(cache.load(engine.wasmtime(), &key).unwrap().is_some());
        assert!(
            cache.checked_path(&key).exists(),
            "a settled entry's check is recorded"
        );
        assert!(cache.load(engine.wasmtime(), &key).unwrap().is_some());

        let entry = cache.path(&key);
        let mut data = fs::read(&entry).unwrap();
        let middle = (data.len() - TRAILER_LEN as usize) / 2;
        data[middle] ^= 0xff;
        fs::write(&entry, &data).unwrap();
        assert!(
            cache.load(engine.wasmtime(), &key).is_err(),
            "a written entry is checked"
        );
    }

    /// A remembered digest answers only for the same identity and sample.
    #[test]
    fn digests_are_remembered_by_identity_and_sample() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::new(Some(dir.path().to_path_buf()), Capacity::default()).unwrap();
        let identity = Identity([7; IDENTITY_LEN]);
        let sha = sha256(b"component");
        assert_eq!(engine.remembered_digest(&identity, 1), None);
        engine.remember_digest(&identity, 1, &sha);
        assert_eq!(engine.remembered_digest(&identity, 1), Some(sha));
        assert_eq!(
            engine.remembered_digest(&identity, 2),
            None,
            "another sample"
        );
        let mut other = identity.clone();
        other.0[0] = 8;
        assert_eq!(
            engine.remembered_digest(&other, 1),
            None,
            "another identity"
        );
        // A damaged record is no record.
        let path = CompileCache::open(dir.path().to_path_buf(), engine.wasmtime())
            .unwrap()
            .digest_path(&identity);
        fs::write(&path, b"short").unwrap();
        assert_eq!(engine.remembered_digest(&identity, 1), None);
        // Without a cache nothing is remembered.
        let uncached = Engine::new(None, Capacity::default()).unwrap();
        uncached.remember_digest(&identity, 1, &sha);
        assert_eq!(uncached.remembered_digest(&identity, 1), None);
    }

    /// Writes `len` bytes at `dir/name`, last read and written `days_ago`.
    pub(in crate::runtime) fn aged(dir: &Path, name: &str, len: usize, days_ago: u64) -> PathBuf {
        let path = dir.join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, vec![0u8; len]).unwrap();
        let at = SystemTime::now() - Duration::from_secs(days_ago * 86_400 + 60);
        let times = fs::FileTimes::new().set_accessed(at).set_modified(at);
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_times(times)
            .unwrap();
        path
    }

    #[test]
    fn a_sweep_removes_unused_entries_then_the_least_recently_used_past_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        let bounds = Bounds {
            keep_unused: Duration::from_secs(30 * 86_400),
            max_bytes: 2500,
            max_digests: 2,
            max_listings: 16,
            max_pulled_bytes: 1 << 30,
        };
        let stale = aged(dir, "stale.cwasm", 10, 31);
        let stale_checked = aged(dir, "checked/stale", 10, 31);
        // 4,000 bytes in use: the two least recently used go to bring them
        // under 2,500.
        let old = aged(dir, "old.cwasm", 1000, 5);
        let older = aged(dir, "older.cwasm", 1000, 6);
        let recent = aged(dir, "recent.cwasm", 1000, 2);
        let today = aged(dir, "today.cwasm", 1000, 0);
        let kept_checked = aged(dir, "checked/today", 10, 0);
        let orphan = aged(dir, "checked/gone", 10, 0);
        let digests: Vec<PathBuf> = (0..4)
            .map(|n| aged(dir, &format!("digests/{n}"), 10, 10 - n))
            .collect();
        let crashed = aged(dir, ".tmpAbc", 10, 2);
        let writing = aged(dir, "checked/.tmpDef", 10, 0);
        let other = aged(dir, "oci/blob", 10, 365);

        sweep(dir, &bounds, SystemTime::now());

        let exists = |path: &PathBuf| path.exists();
        assert!(
            !exists(&stale) && !exists(&stale_checked),
            "unused for 31 days"
        );
        assert!(
            !exists(&older) && !exists(&old),
            "the least recently used past the cap"
        );
        assert!(exists(&recent), "within the cap once the older two went");
        assert!(exists(&today) && exists(&kept_checked));
        assert!(!exists(&orphan), "a record whose entry is gone");
        let kept: Vec<bool> = digests.iter().map(exists).collect();
        assert_eq!(kept, [false, false, true, true], "the newest two digests");
        assert!(
            !exists(&crashed) && exists(&writing),
            "temporary files a day old"
        );
        assert!(exists(&other), "nothing outside the cache's own files");

        // Past the cap with nothing but entries used today: all stay.
        let busy = Bounds {
            max_bytes: 10,
            ..bounds
        };
        sweep(dir, &busy, SystemTime::now());
        assert!(exists(&today));
    }

    #[test]
    fn a_sweep_starts_at_most_once_a_day() {
        let dir = tempfile::tempdir().unwrap();
        let stale = aged(dir.path(), "stale.cwasm", 10, 400);
        let (_engine, cache) = engine_and_cache(dir.path());
        let marker = dir.path().join("swept");
        assert!(marker.exists(), "the first open sweeps");
        // The sweep runs on its own thread.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while stale.exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(!stale.exists(), "swept");
        let again = aged(dir.path(), "again.cwasm", 10, 400);
        cache.sweep_when_due();
        std::thread::sleep(Duration::from_millis(200));
        assert!(again.exists(), "no second sweep within a day");
    }
}
