//! Remembered listings: what a contract plugin listed at load (its tools,
//! resources, templates and prompts), kept beside the compiled components so
//! that a warm start need not instantiate every plugin to ask again.
//!
//! A plugin lists in an instance that reaches nothing: no mounts, no
//! environment, no network, no client (`ToolScope::listing`). What it can
//! see there is its own code, its `config` table, its limits, and the host
//! that answers it; so a listing is remembered under the component's SHA-256,
//! those inputs, and Toolcell's version. A component whose listing also
//! depends on the clock or on random numbers keeps the first one while
//! those stay the same: the contract asks for a listing that depends on its
//! configuration alone (`docs/authoring.md`). A listing that failed is not
//! remembered, so it fails again at the next start.
//!
//! A record is `listings/<key>`: the listing as JSON, then the XXH3-128 of
//! the JSON and [`TRAILER_MAGIC`]. A record that is missing, larger than
//! [`CACHE_MAX_LISTING_BYTES`], damaged or unreadable is no record: the
//! plugin lists afresh and the record is written again. What a record holds
//! goes through the same checks as a fresh listing. As with the compiled
//! entries, the checksum catches damage, not an attacker: whoever can write
//! the cache can already change what the user runs.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Context, Result};
use xxhash_rust::xxh3::{Xxh3, xxh3_128};

use super::{
    CompileCache, RECENT, TRAILER_LEN, TRAILER_MAGIC, age, files, hex, is_temporary, verify,
};
use crate::limits::CACHE_MAX_LISTING_BYTES;

/// The version of what a record holds: records of another are not looked
/// up, so a start lists afresh and writes the record in this one. 2: with
/// whether the plugin exports `completions`.
const RECORD_FORMAT: u8 = 2;

impl CompileCache {
    /// The key of the listing of the component `sha256` given `inputs` (its
    /// configuration and limits, as bytes that differ whenever they do).
    pub(in crate::runtime) fn listing_key(sha256: &[u8; 32], inputs: &[u8]) -> String {
        let mut hasher = Xxh3::new();
        hasher.update(env!("CARGO_PKG_VERSION").as_bytes());
        hasher.update(&[0, RECORD_FORMAT]);
        hasher.update(inputs);
        format!("{}-{:032x}", hex(sha256), hasher.digest128())
    }

    fn listing_path(&self, key: &str) -> PathBuf {
        self.dir.join("listings").join(key)
    }

    /// The remembered listing `key`, as the JSON it was stored as.
    pub(in crate::runtime) fn listing(&self, key: &str) -> Option<Vec<u8>> {
        let path = self.listing_path(key);
        let file = File::open(&path).ok()?;
        let len = file.metadata().ok()?.len();
        if len > CACHE_MAX_LISTING_BYTES + TRAILER_LEN {
            return None;
        }
        let mut bytes = Vec::with_capacity(usize::try_from(len).ok()?);
        file.take(CACHE_MAX_LISTING_BYTES + TRAILER_LEN)
            .read_to_end(&mut bytes)
            .ok()?;
        let payload = payload(bytes);
        if payload.is_none() {
            tracing::debug!("{} is not intact; listing afresh", path.display());
        }
        payload
    }

    /// Remembers `json` as listing `key`. Written to a temporary file renamed
    /// into place, so a reader sees all of a record or none; not synced to
    /// the disk, since a record a crash damaged fails its checksum.
    pub(in crate::runtime) fn store_listing(&self, key: &str, json: &[u8]) -> Result<()> {
        if json.len() as u64 > CACHE_MAX_LISTING_BYTES {
            return Ok(());
        }
        let path = self.listing_path(key);
        let dir = path.parent().context("a listing's path has a directory")?;
        fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let mut file = tempfile::NamedTempFile::new_in(dir)?;
        file.write_all(json)?;
        file.write_all(&xxh3_128(json).to_le_bytes())?;
        file.write_all(TRAILER_MAGIC)?;
        file.persist(&path)?;
        Ok(())
    }
}

/// The JSON of a record, if its trailer matches it ([`verify`], as for an
/// entry read into memory).
fn payload(mut bytes: Vec<u8>) -> Option<Vec<u8>> {
    let len = bytes.len() as u64;
    verify(std::io::Cursor::new(&bytes), len).ok()?;
    bytes.truncate(bytes.len() - TRAILER_LEN as usize);
    Some(bytes)
}

/// Keeps the `max` most recently used records in `dir` (`listings/`), never
/// removing one used within [`RECENT`], and removes the temporary files a
/// crash left there more than a day ago.
pub(super) fn sweep(dir: &Path, max: usize, now: SystemTime) {
    let mut records: Vec<(SystemTime, PathBuf)> = Vec::new();
    for (path, meta) in files(dir) {
        if is_temporary(&path) {
            if age(meta.modified().unwrap_or(now), now) >= RECENT {
                let _ = fs::remove_file(&path);
            }
        } else {
            records.push((super::last_used(&meta), path));
        }
    }
    if records.len() <= max {
        return;
    }
    records.sort();
    let excess = records.len() - max;
    for (used, path) in &records[..excess] {
        if age(*used, now) >= RECENT {
            let _ = fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn cache(dir: &Path) -> CompileCache {
        let engine = wasmtime::Engine::default();
        CompileCache::open(dir.to_path_buf(), &engine).unwrap()
    }

    #[test]
    fn a_stored_listing_is_read_back_and_a_damaged_one_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let cache = cache(dir.path());
        let key = CompileCache::listing_key(&[7; 32], b"inputs");
        assert_eq!(cache.listing(&key), None, "nothing stored yet");
        cache.store_listing(&key, br#"{"tools":[]}"#).unwrap();
        assert_eq!(
            cache.listing(&key).as_deref(),
            Some(&br#"{"tools":[]}"#[..])
        );

        let path = cache.listing_path(&key);
        let mut bytes = fs::read(&path).unwrap();
        bytes[3] ^= 1;
        fs::write(&path, &bytes).unwrap();
        assert_eq!(
            cache.listing(&key),
            None,
            "a flipped bit fails the checksum"
        );
        fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
        assert_eq!(cache.listing(&key), None, "a truncated record");
        fs::write(&path, b"").unwrap();
        assert_eq!(cache.listing(&key), None, "an empty record");
    }

    #[test]
    fn the_key_follows_the_component_and_the_inputs() {
        let key = CompileCache::listing_key(&[1; 32], b"a");
        assert_eq!(key, CompileCache::listing_key(&[1; 32], b"a"));
        assert_ne!(key, CompileCache::listing_key(&[2; 32], b"a"));
        assert_ne!(key, CompileCache::listing_key(&[1; 32], b"b"));
        assert!(key.starts_with(&hex(&[1; 32])));
    }

    #[test]
    fn a_listing_over_the_cap_is_not_stored() {
        let dir = tempfile::tempdir().unwrap();
        let cache = cache(dir.path());
        let key = CompileCache::listing_key(&[3; 32], b"");
        let big = vec![b' '; CACHE_MAX_LISTING_BYTES as usize + 1];
        cache.store_listing(&key, &big).unwrap();
        assert_eq!(cache.listing(&key), None);
        assert!(!cache.listing_path(&key).exists());
    }

    #[test]
    fn the_sweep_keeps_the_most_recently_used_records() {
        let dir = tempfile::tempdir().unwrap();
        let listings = dir.path().join("listings");
        fs::create_dir_all(&listings).unwrap();
        let now = SystemTime::now();
        let old = now - RECENT - Duration::from_secs(3600);
        for (name, used) in [("a", old), ("b", old - Duration::from_secs(60)), ("c", now)] {
            let path = listings.join(name);
            fs::write(&path, b"x").unwrap();
            let file = File::options().write(true).open(&path).unwrap();
            file.set_times(fs::FileTimes::new().set_accessed(used).set_modified(used))
                .unwrap();
        }
        sweep(&listings, 1, now);
        let mut left: Vec<String> = files(&listings)
            .map(|(path, _)| path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["c"], "the two unused for over a day go");

        for name in ["d", "e"] {
            fs::write(listings.join(name), b"x").unwrap();
        }
        sweep(&listings, 1, SystemTime::now());
        assert_eq!(files(&listings).count(), 3, "none used within a day goes");
    }
}
