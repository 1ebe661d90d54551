//! The content-addressed cache of pulled artifacts, under `CACHE_DIR/oci/`:
//!
//! - `blobs/sha256/HEX`: manifests, components and signature payloads, each named by the SHA-256
//!   of its bytes, checked again whenever it is read;
//! - `signatures/sha256-HEX.json`: the cosign signature verified for manifest `sha256:HEX`, so
//!   that an offline start checks it again against the configured key.
//!
//! Everything is written to a temporary file in its directory and renamed into place, and only
//! after it was verified, so a reader never sees half an entry and a mismatch caches nothing.
//! Entries are never rewritten. The compile cache's daily sweep keeps the blobs within
//! `OCI_CACHE_MAX_MB` ([`sweep`]); deleting the `oci` directory clears it all (see
//! docs/configuration.md).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};

use crate::runtime::cache;

/// The cache of pulled artifacts rooted at one directory.
pub(super) struct Store {
    root: PathBuf,
}

/// `sha256:HEX` of `bytes`.
pub(super) fn digest_of(bytes: &[u8]) -> String {
    format!("sha256:{}", hex(&Sha256::digest(bytes)))
}

pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The hex of a `sha256:HEX` digest, checked (64 lowercase hex digits), so that it is safe as a
/// file name.
pub(super) fn digest_hex(digest: &str) -> Result<&str> {
    digest
        .strip_prefix("sha256:")
        .filter(|hex| {
            hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        })
        .with_context(|| format!("{digest:?} is not a sha256 digest"))
}

impl Store {
    /// The store at `root` (created when first written).
    pub(super) fn new(root: PathBuf) -> Store {
        Store { root }
    }

    /// Where the blob `digest` is (or would be) kept.
    pub(super) fn blob_path(&self, digest: &str) -> Result<PathBuf> {
        Ok(self
            .root
            .join("blobs")
            .join("sha256")
            .join(digest_hex(digest)?))
    }

    fn signature_path(&self, manifest_digest: &str) -> Result<PathBuf> {
        Ok(self
            .root
            .join("signatures")
            .join(format!("sha256-{}.json", digest_hex(manifest_digest)?)))
    }

    /// The blob `digest` if it is cached and its bytes still match; at most `cap` bytes.
    pub(super) fn read_blob(&self, digest: &str, cap: u64) -> Result<Option<Vec<u8>>> {
        let path = self.blob_path(digest)?;
        let Some(bytes) = read_capped(&path, cap)? else {
            return Ok(None);
        };
        if digest_of(&bytes) != digest {
            tracing::warn!(
                "the cached blob {} does not match its digest; pulling it again",
                path.display()
            );
            return Ok(None);
        }
        Ok(Some(bytes))
    }

    /// Keeps `bytes`, already verified to be `digest`.
    pub(super) fn write_blob(&self, digest: &str, bytes: &[u8]) -> Result<PathBuf> {
        let path = self.blob_path(digest)?;
        write_atomically(&path, bytes)?;
        Ok(path)
    }

    /// The signature record kept for `manifest_digest`: the payload's digest and the signature.
    pub(super) fn read_signature(&self, manifest_digest: &str) -> Result<Option<(String, String)>> {
        let path = self.signature_path(manifest_digest)?;
        let Some(bytes) = read_capped(&path, 64 * 1024)? else {
            return Ok(None);
        };
        let json: serde_json::Value = match serde_json::from_slice(&bytes) {
            Ok(json) => json,
            Err(_) => return Ok(None),
        };
        match (json["payload"].as_str(), json["signature"].as_str()) {
            (Some(payload), Some(signature)) => {
                Ok(Some((payload.to_owned(), signature.to_owned())))
            }
            _ => Ok(None),
        }
    }

    /// Keeps the signature verified for `manifest_digest`.
    pub(super) fn write_signature(
        &self,
        manifest_digest: &str,
        payload_digest: &str,
        signature: &str,
    ) -> Result<()> {
        let record = serde_json::json!({ "payload": payload_digest, "signature": signature });
        write_atomically(
            &self.signature_path(manifest_digest)?,
            record.to_string().as_bytes(),
        )
    }
}

/// Brings the pull cache at `root` within `max_bytes`: while its blobs add up to more, the least
/// recently used go (read, or else written; never one used within a day), and a signature record
/// goes with its manifest; temporary files a crash left go after a day. Nothing goes for age
/// alone: a pinned plugin started rarely still starts offline. A start that finds a blob gone
/// pulls it again. Failures are skipped (a later sweep tries again).
pub(super) fn sweep(root: &Path, max_bytes: u64, now: SystemTime) {
    let blobs_dir = root.join("blobs").join("sha256");
    let (temporary, blobs): (Vec<_>, Vec<_>) =
        cache::files(&blobs_dir).partition(|(path, _)| cache::is_temporary(path));
    let mut blobs: Vec<(SystemTime, u64, PathBuf)> = blobs
        .into_iter()
        .map(|(path, meta)| (cache::last_used(&meta), meta.len(), path))
        .collect();
    blobs.sort();
    let mut total: u64 = blobs.iter().map(|(_, len, _)| len).sum();
    let (mut removed, mut freed) = (0usize, 0u64);
    for (used, len, path) in &blobs {
        if total <= max_bytes {
            break;
        }
        if cache::age(*used, now) >= cache::RECENT && std::fs::remove_file(path).is_ok() {
            total -= len;
            removed += 1;
            freed += len;
        }
    }
    let signatures_dir = root.join("signatures");
    for (path, meta) in temporary.into_iter().chain(cache::files(&signatures_dir)) {
        let name = path
            .file_name()
            .and_then(|name| name.to_str())
            .unwrap_or_default();
        let gone = if cache::is_temporary(&path) {
            meta.modified()
                .is_ok_and(|at| cache::age(at, now) >= cache::RECENT)
        } else {
            let manifest = name
                .strip_prefix("sha256-")
                .and_then(|n| n.strip_suffix(".json"));
            manifest.is_some_and(|hex| !blobs_dir.join(hex).exists())
        };
        if gone {
            let _ = std::fs::remove_file(&path);
        }
    }
    if removed > 0 {
        tracing::info!(
            dir = %root.display(),
            "pull cache: removed {removed} blobs ({} MiB), the least recently used past its {} MiB",
            freed / (1024 * 1024),
            max_bytes / (1024 * 1024),
        );
    }
}

/// The file's bytes, `None` if it does not exist; a file over `cap` is treated as absent.
fn read_capped(path: &Path, cap: u64) -> Result<Option<Vec<u8>>> {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() || meta.len() > cap => Ok(None),
        Ok(_) => match std::fs::read(path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error).with_context(|| format!("cannot read {}", path.display())),
        },
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error).with_context(|| format!("cannot read {}", path.display())),
    }
}

fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().context("a cache path without a directory")?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut file = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    file.write_all(bytes)
        .and_then(|()| file.as_file().sync_all())
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    file.persist(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_round_trip_and_a_changed_one_is_not_served() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().join("oci"));
        let digest = digest_of(b"component");
        assert!(store.read_blob(&digest, 100).unwrap().is_none());
        let path = store.write_blob(&digest, b"component").unwrap();
        assert_eq!(
            store.read_blob(&digest, 100).unwrap().unwrap(),
            b"component"
        );
        assert!(
            store.read_blob(&digest, 3).unwrap().is_none(),
            "over the cap"
        );
        std::fs::write(&path, b"tampered!").unwrap();
        assert!(store.read_blob(&digest, 100).unwrap().is_none());
        assert!(store.blob_path("sha256:../../etc").is_err());
    }

    #[test]
    fn a_sweep_keeps_the_pulled_blobs_within_the_cap_least_recently_used_first() {
        use crate::runtime::cache::tests::aged;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let hex = |n: u8| format!("{n:064x}");
        let blob = |n: u8, len, days| aged(root, &format!("blobs/sha256/{}", hex(n)), len, days);
        let signature = |n: u8| aged(root, &format!("signatures/sha256-{}.json", hex(n)), 10, 9);
        // 4,000 bytes against a cap of 2,500: the two least recently used go.
        let (oldest, old) = (blob(1, 1000, 400), blob(2, 1000, 40));
        let (recent, today) = (blob(3, 1000, 2), blob(4, 1000, 0));
        let (gone_signature, kept_signature) = (signature(1), signature(3));
        let crashed = aged(root, "blobs/sha256/.tmpAbc", 10, 2);
        let writing = aged(root, "signatures/.tmpDef", 10, 0);

        sweep(root, 2500, SystemTime::now());

        let exists = |path: &PathBuf| path.exists();
        assert!(
            !exists(&oldest) && !exists(&old),
            "the least recently used past the cap"
        );
        assert!(
            exists(&recent) && exists(&today),
            "within the cap once two went"
        );
        assert!(
            !exists(&gone_signature),
            "the record of a manifest that went"
        );
        assert!(exists(&kept_signature));
        assert!(
            !exists(&crashed) && exists(&writing),
            "temporary files a day old"
        );

        // Within the cap nothing goes, however old; past it, nothing used today.
        let ancient = blob(5, 10, 3000);
        sweep(root, 1 << 20, SystemTime::now());
        assert!(exists(&ancient), "age alone removes nothing");
        sweep(root, 10, SystemTime::now());
        assert!(exists(&today), "used today");
        assert!(!exists(&recent) && !exists(&ancient));
    }
}
