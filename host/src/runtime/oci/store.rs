//! The content-addressed cache of pulled artifacts, under `CACHE_DIR/oci/`:
//!
//! - `blobs/sha256/HEX`: manifests, components and signature payloads, each named by the SHA-256
//!   of its bytes, checked again whenever it is read;
//! - `signatures/sha256-HEX.json`: the cosign signature verified for manifest `sha256:HEX`, so
//!   that an offline start checks it again against the configured key.
//!
//! Everything is written to a temporary file in its directory and renamed into place, and only
//! after it was verified, so a reader never sees half an entry and a mismatch caches nothing.
//! Entries are never rewritten; the cache grows by what is pulled and is cleared by deleting
//! the `oci` directory (see docs/configuration.md).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};

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
}
