//! Plugins from OCI registries (`path = "oci://REGISTRY/REPO:TAG@sha256:DIGEST"`): pulled at
//! load, never on the call path, into a content-addressed cache, and served from it offline
//! once there.
//!
//! - [`component`]: the bytes of a `[[plugin]]`'s component, from the cache or pulled.
//! - [`pull`]: `toolcell pull`; [`local_path`]: `toolcell inspect oci://...`.
//! - `http`: the distribution API client (auth, redirects, caps, timeouts); `auth`: where
//!   credentials come from; `manifest`: which layer is the component; `cosign`: signatures;
//!   `store`: the cache.
//!
//! The manifest and every blob are checked against their SHA-256 digests as they arrive, and
//! nothing is cached unless it matched.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{Context, Result, bail};

use crate::config::{OciReference, OciSource};
use crate::limits::OCI_MAX_MANIFEST_BYTES;
use crate::runtime::cache;

mod auth;
mod cosign;
mod http;
mod manifest;
mod store;

use cosign::PublicKey;
use http::{Failure, Registry};
use manifest::Manifest;
use store::{Store, digest_of};

/// A component pulled from (or found in the cache for) a registry.
pub struct Pulled {
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// Their SHA-256 (the compile cache's key).
    pub sha256: [u8; 32],
    /// The manifest's digest, `sha256:HEX`.
    pub manifest_digest: String,
    /// The cached component file.
    pub path: PathBuf,
    /// Whether the network was used.
    pub pulled: bool,
}

static CACHE_DIR: OnceLock<PathBuf> = OnceLock::new();

/// Keeps the pull cache at `root` (`CACHE_DIR/oci`) within `max_bytes`; run by the compile
/// cache's daily sweep. See [`store::sweep`].
pub(super) fn sweep(root: &Path, max_bytes: u64, now: std::time::SystemTime) {
    store::sweep(root, max_bytes, now);
}

/// Sets the cache directory pulled artifacts go under (its `oci` folder), once per process;
/// without it, [`cache::default_cache_dir`].
pub fn set_cache_dir(dir: PathBuf) {
    let _ = CACHE_DIR.set(dir);
}

fn store(cache_dir: Option<&Path>) -> Result<Store> {
    let base = cache_dir
        .map(Path::to_path_buf)
        .or_else(|| CACHE_DIR.get().cloned())
        .or_else(cache::default_cache_dir)
        .context(
            "there is no cache directory for plugins from registries: set TOOLCELL_CACHE_DIR or \
             pass --cache-dir",
        )?;
    Ok(Store::new(base.join("oci")))
}

/// Whether a tag without a digest may be used.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Unpinned {
    /// Refused, with the digest to pin (a `[[plugin]]` without `allow_unpinned`).
    Refuse,
    /// Allowed with a warning naming the digest it resolved to.
    Warn,
    /// Allowed: the point is to learn the digest (`toolcell pull`).
    Quiet,
}

/// The component of a `[[plugin]]` from a registry: from the cache when its manifest, its
/// component (and, with `verify`, its signature) are there, else pulled; at most `max_bytes`.
pub fn component(source: &OciSource, max_bytes: u64) -> Result<Pulled> {
    let unpinned = if source.allow_unpinned {
        Unpinned::Warn
    } else {
        Unpinned::Refuse
    };
    let store = store(None)?;
    block_on(fetch(source, &store, max_bytes, unpinned))
}

/// `toolcell pull`: fetches `source` into the cache under `cache_dir` (a tag is resolved).
pub fn pull(source: &OciSource, cache_dir: Option<&Path>, max_bytes: u64) -> Result<Pulled> {
    let store = store(cache_dir)?;
    block_on(fetch(source, &store, max_bytes, Unpinned::Quiet))
}

/// For `toolcell inspect`: `file` itself, or, when it is an `oci://` reference, the cached
/// component it names, pulled first if needed (a tag without a digest is allowed, with a
/// warning).
pub fn local_path<'a>(
    file: &'a Path,
    cache_dir: Option<&Path>,
    max_bytes: u64,
) -> Result<Cow<'a, Path>> {
    let Some(text) = file
        .to_str()
        .filter(|text| OciReference::is_reference(text))
    else {
        return Ok(Cow::Borrowed(file));
    };
    let reference = OciReference::parse(text).map_err(|reason| anyhow::anyhow!(reason))?;
    let source = OciSource {
        reference,
        allow_unpinned: true,
        verify_key: None,
        insecure: false,
        auth: None,
    };
    let store = store(cache_dir)?;
    let pulled = block_on(fetch(&source, &store, max_bytes, Unpinned::Warn))?;
    Ok(Cow::Owned(pulled.path))
}

/// Runs a pull on a runtime of its own, on a thread of its own, so that it can be called from
/// any thread, inside an async runtime or not.
fn block_on<T: Send>(future: impl Future<Output = Result<T>> + Send) -> Result<T> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .context("cannot start the runtime for a pull")?
                    .block_on(future)
            })
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the pull panicked")))
    })
}

async fn fetch(
    source: &OciSource,
    store: &Store,
    max_bytes: u64,
    unpinned: Unpinned,
) -> Result<Pulled> {
    let reference = &source.reference;
    let key = match &source.verify_key {
        Some(path) => Some(PublicKey::read(path)?),
        None => None,
    };
    if let Some(digest) = &reference.digest
        && let Some(cached) = from_cache(store, digest, key.as_ref(), max_bytes)?
    {
        tracing::debug!(reference = %reference, "served from the cache, offline");
        return Ok(cached);
    }

    let found = auth::lookup(&reference.registry, source.auth.as_ref())?;
    let mut registry = Registry::new(
        &reference.registry,
        source.insecure,
        found.credentials,
        found.note,
    )?;
    let repository = &reference.repository;
    let wanted = reference
        .digest
        .as_deref()
        .or(reference.tag.as_deref())
        .context("a reference with neither tag nor digest")?;
    let url = registry.url(&format!("/v2/{repository}/manifests/{wanted}"))?;
    let (manifest_bytes, received) = registry
        .get_manifest(url)
        .await
        .map_err(|failure| failure.into_error(&format!("oci://{reference}")))
        .with_context(|| format!("cannot pull oci://{reference}"))?;
    let manifest_digest = digest_of(&manifest_bytes);
    tracing::info!(
        reference = %reference,
        digest = %manifest_digest,
        bytes = manifest_bytes.len(),
        "pulled the manifest"
    );
    match &reference.digest {
        Some(pinned) if *pinned != manifest_digest => bail!(
            "the manifest of oci://{reference} does not match its digest: the reference pins \
             {pinned} but the registry served {manifest_digest}; refused, nothing cached"
        ),
        Some(_) => {}
        None => match unpinned {
            Unpinned::Refuse => bail!(
                "oci://{reference} is a tag without a digest, so what it loads can change \
                 under you; it now resolves to {manifest_digest}. Pin it: path = \"{}\" (`toolcell \
                 pull oci://{reference}` prints the same line), or set allow_unpinned = true in \
                 this plugin's table",
                reference.pinned(&manifest_digest)
            ),
            Unpinned::Warn => tracing::warn!(
                reference = %reference,
                "allow_unpinned: the tag resolved to {manifest_digest}; pin it with path = \"{}\"",
                reference.pinned(&manifest_digest)
            ),
            Unpinned::Quiet => {}
        },
    }
    let manifest = Manifest::parse(&manifest_bytes, received.content_type.as_deref())
        .with_context(|| format!("oci://{reference}"))?;
    let layer = manifest
        .wasm_layer()
        .with_context(|| format!("oci://{reference}"))?;
    if layer.size > max_bytes {
        bail!(
            "the component of oci://{reference} is {} bytes, over the limit of {max_bytes} bytes \
             (max_component_mb): refused",
            layer.size
        );
    }

    let bytes = match store.read_blob(&layer.digest, max_bytes)? {
        Some(bytes) => bytes,
        None => {
            fetch_blob(
                &mut registry,
                repository,
                &layer.digest,
                layer.size,
                &format!("oci://{reference}"),
            )
            .await?
        }
    };

    if let Some(key) = &key {
        let (payload_digest, signature) =
            fetch_signature(&mut registry, store, reference, &manifest_digest, key).await?;
        store.write_signature(&manifest_digest, &payload_digest, &signature)?;
    }
    // The manifest last: its presence says the rest is there.
    let path = store.write_blob(&layer.digest, &bytes)?;
    store.write_blob(&manifest_digest, &manifest_bytes)?;
    Ok(Pulled {
        sha256: sha256_of(&bytes),
        bytes,
        manifest_digest,
        path,
        pulled: true,
    })
}

/// The component of manifest `digest` from the cache, with its signature checked again when a
/// key is configured; `None` when anything is missing.
fn from_cache(
    store: &Store,
    digest: &str,
    key: Option<&PublicKey>,
    max_bytes: u64,
) -> Result<Option<Pulled>> {
    let Some(manifest_bytes) = store.read_blob(digest, OCI_MAX_MANIFEST_BYTES)? else {
        return Ok(None);
    };
    let manifest = Manifest::parse(&manifest_bytes, None)?;
    let layer = manifest.wasm_layer()?;
    if layer.size > max_bytes {
        bail!(
            "the cached component is {} bytes, over the limit of {max_bytes} bytes \
             (max_component_mb): refused",
            layer.size
        );
    }
    if let Some(key) = key {
        let Some((payload_digest, signature)) = store.read_signature(digest)? else {
            return Ok(None);
        };
        let Some(payload) = store.read_blob(&payload_digest, OCI_MAX_MANIFEST_BYTES)? else {
            return Ok(None);
        };
        // A signature by another key (the configured one changed): look in the registry.
        if key.verify(&payload, &signature, digest).is_err() {
            return Ok(None);
        }
    }
    let Some(bytes) = store.read_blob(&layer.digest, max_bytes)? else {
        return Ok(None);
    };
    Ok(Some(Pulled {
        sha256: sha256_of(&bytes),
        bytes,
        manifest_digest: digest.to_owned(),
        path: store.blob_path(&layer.digest)?,
        pulled: false,
    }))
}

/// Downloads blob `digest` of `size` bytes, checking its digest as it streams.
async fn fetch_blob(
    registry: &mut Registry,
    repository: &str,
    digest: &str,
    size: u64,
    what: &str,
) -> Result<Vec<u8>> {
    use sha2::Digest as _;
    tracing::info!(digest, bytes = size, "pulling {what}");
    let url = registry.url(&format!("/v2/{repository}/blobs/{digest}"))?;
    let mut hasher = sha2::Sha256::new();
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0).min(64 << 20));
    registry
        .get(url, "application/octet-stream", size, true, &mut |chunk| {
            hasher.update(chunk);
            bytes.extend_from_slice(chunk);
            Ok(())
        })
        .await
        .map_err(|failure| failure.into_error(&format!("blob {digest} of {what}")))
        .with_context(|| format!("cannot pull {what}"))?;
    let got = format!("sha256:{}", store::hex(&hasher.finalize()));
    if got != digest {
        bail!(
            "a blob of {what} does not match its digest: the manifest names {digest} but the \
             registry served {got}; refused, nothing cached"
        );
    }
    tracing::info!(
        digest,
        bytes = bytes.len(),
        "pulled and verified a blob of {what}"
    );
    Ok(bytes)
}

/// Finds a signature of `manifest_digest` by `key` under the `sha256-HEX.sig` tag; returns the
/// payload's digest (the payload is cached) and the signature.
async fn fetch_signature(
    registry: &mut Registry,
    store: &Store,
    reference: &OciReference,
    manifest_digest: &str,
    key: &PublicKey,
) -> Result<(String, String)> {
    let tag = format!("sha256-{}.sig", store::digest_hex(manifest_digest)?);
    let url = registry.url(&format!("/v2/{}/manifests/{tag}", reference.repository))?;
    let (bytes, received) = match registry.get_manifest(url).await {
        Ok(fetched) => fetched,
        Err(Failure::NotFound) => bail!(
            "oci://{reference} has no cosign signature (no tag {tag} in {}/{}), and this plugin \
             requires one (verify): refused. Sign it with `cosign sign --key cosign.key`",
            reference.registry,
            reference.repository
        ),
        Err(Failure::Other(error)) => {
            return Err(error.context(format!("cannot fetch the signature of oci://{reference}")));
        }
    };
    let manifest = Manifest::parse(&bytes, received.content_type.as_deref())
        .context("the signature manifest")?;
    let mut reasons = Vec::new();
    for layer in &manifest.layers {
        if layer.media_type != cosign::PAYLOAD_MEDIA_TYPE {
            continue;
        }
        let Some(signature) = layer
            .annotations
            .get(cosign::SIGNATURE_ANNOTATION)
            .and_then(|v| v.as_str())
        else {
            reasons.push(format!(
                "layer {} has no signature annotation",
                layer.digest
            ));
            continue;
        };
        if layer.size > OCI_MAX_MANIFEST_BYTES {
            reasons.push(format!("layer {} is too large for a payload", layer.digest));
            continue;
        }
        let payload = match store.read_blob(&layer.digest, OCI_MAX_MANIFEST_BYTES)? {
            Some(payload) => payload,
            None => {
                fetch_blob(
                    registry,
                    &reference.repository,
                    &layer.digest,
                    layer.size,
                    &format!("the signature of oci://{reference}"),
                )
                .await?
            }
        };
        match key.verify(&payload, signature, manifest_digest) {
            Ok(()) => {
                store.write_blob(&layer.digest, &payload)?;
                tracing::info!(reference = %reference, "cosign signature verified");
                return Ok((layer.digest.clone(), signature.to_owned()));
            }
            Err(error) => reasons.push(format!("{error:#}")),
        }
    }
    if reasons.is_empty() {
        reasons.push(format!(
            "no layer of media type {} under {tag}",
            cosign::PAYLOAD_MEDIA_TYPE
        ));
    }
    bail!(
        "oci://{reference} has no valid cosign signature by the configured key: {}; refused",
        reasons.join("; ")
    )
}

fn sha256_of(bytes: &[u8]) -> [u8; 32] {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes).into()
}
