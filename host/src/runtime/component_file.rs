//! Reading a component file with bounds: whatever path a configuration or a
//! command line names (`/dev/zero`, a FIFO, a file of gigabytes), loading
//! it neither hangs nor grows without limit. The file is opened without
//! blocking (a FIFO with no writer would block a plain open forever), its
//! type is checked on the descriptor that is then read (so it cannot be
//! swapped between the check and the read), and at most the cap is read.
//!
//! A start with a warm compile cache need not read the file at all: the
//! cache is keyed by the component's SHA-256, and the cache remembers the
//! digest of each version of a file it has seen, by the file's [`Identity`]
//! and a [`ComponentFile::sample`] of its contents (see
//! `Engine::remembered_digest`). [`Wasm`] then reads the bytes only if
//! something needs them: a compile, or a plain component's docs.

use std::borrow::Cow;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

/// The bytes of the component file at `path`: a regular file of at most
/// `max_bytes`; anything else is an error that says what it is.
pub fn read(path: &Path, max_bytes: u64) -> Result<Vec<u8>> {
    ComponentFile::open(path, max_bytes)?.read()
}

/// A component file opened and checked (a regular file within the cap),
/// not read yet.
pub struct ComponentFile {
    file: File,
    path: PathBuf,
    len: u64,
    max_bytes: u64,
    identity: Option<Identity>,
}

/// What tells one version of a file from another without reading it: on
/// Unix its device and inode (a file replaced by a rename is another
/// file), its size, and its modification and status-change times to the
/// nanosecond. Every write to a file sets its change time to the current
/// time, and no call can set it back, so a rewrite that restores the size
/// and the modification time is still a new identity. Elsewhere there is
/// none (`std` gives Windows no change time), and the file is read and
/// hashed as before: the portable path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity(pub [u8; IDENTITY_LEN]);

/// The bytes of an [`Identity`]: device, inode, size, then seconds and
/// nanoseconds of the modification and change times.
pub const IDENTITY_LEN: usize = 8 * 7;

/// How much of each end of a file [`ComponentFile::sample`] reads.
const SAMPLE_BYTES: u64 = 64 * 1024;

impl ComponentFile {
    /// Opens the component file at `path`, which must be a regular file of
    /// at most `max_bytes`.
    pub fn open(path: &Path, max_bytes: u64) -> Result<ComponentFile> {
        let shown = path.display();
        let file = open(path).with_context(|| format!("cannot open {shown}"))?;
        let meta = file
            .metadata()
            .with_context(|| format!("cannot read {shown}"))?;
        if !meta.is_file() {
            let what = if meta.is_dir() {
                "a directory"
            } else {
                "not a regular file (a named pipe, a socket or a device)"
            };
            bail!("{shown} is {what}: a component is a regular `.wasm` file");
        }
        let component = ComponentFile {
            identity: Identity::of(&meta),
            file,
            path: path.to_path_buf(),
            len: meta.len(),
            max_bytes,
        };
        if component.len > max_bytes {
            return Err(component.too_big(component.len));
        }
        Ok(component)
    }

    /// Its identity, where the OS gives one.
    pub fn identity(&self) -> Option<&Identity> {
        self.identity.as_ref()
    }

    /// The XXH3-128 of its first and last 64 KiB (of all of it, if smaller),
    /// and of its size: checked with the identity, for file systems whose
    /// times are coarse.
    pub fn sample(&mut self) -> Result<u128> {
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        hasher.update(&self.len.to_le_bytes());
        let mut buffer = vec![0u8; usize::try_from(SAMPLE_BYTES.min(self.len)).unwrap_or(0)];
        let mut take = |from: u64, buffer: &mut [u8]| -> std::io::Result<()> {
            self.file.seek(SeekFrom::Start(from))?;
            self.file.read_exact(buffer)?;
            hasher.update(buffer);
            Ok(())
        };
        take(0, &mut buffer)
            .and_then(|()| take(self.len.saturating_sub(SAMPLE_BYTES), &mut buffer))
            .with_context(|| format!("cannot read {}", self.path.display()))?;
        self.file
            .seek(SeekFrom::Start(0))
            .with_context(|| format!("cannot read {}", self.path.display()))?;
        Ok(hasher.digest128())
    }

    /// Its bytes, from the start: at most the cap (it may have grown since
    /// it was opened).
    pub fn read(mut self) -> Result<Vec<u8>> {
        let shown = self.path.display();
        self.file
            .seek(SeekFrom::Start(0))
            .with_context(|| format!("cannot read {shown}"))?;
        let mut bytes = Vec::with_capacity(usize::try_from(self.len).unwrap_or(0));
        (&self.file)
            .take(self.max_bytes.saturating_add(1))
            .read_to_end(&mut bytes)
            .with_context(|| format!("cannot read {shown}"))?;
        if bytes.len() as u64 > self.max_bytes {
            return Err(self.too_big(bytes.len() as u64));
        }
        Ok(bytes)
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn too_big(&self, size: u64) -> anyhow::Error {
        anyhow::anyhow!(
            "{} is {size} bytes, over the limit of {} bytes for a component ([limits] \
             max_component_mb)",
            self.path.display(),
            self.max_bytes
        )
    }
}

impl Identity {
    /// The identity of the file `meta` describes, where the OS gives one and
    /// it can be trusted: its last change is at least [`SETTLED`] old. File
    /// times come from a clock that moves in ticks of a few milliseconds, so
    /// a second write in the same tick as the one before could leave the
    /// change time as it was; a write after a settled identity was taken
    /// always moves it.
    pub fn of(meta: &std::fs::Metadata) -> Option<Identity> {
        let changed = meta.modified().ok()?.max(changed(meta)?);
        let age = std::time::SystemTime::now().duration_since(changed).ok()?;
        (age >= SETTLED).then(|| identity(meta)).flatten()
    }
}

/// How old a file's last change must be for its [`Identity`] to be used.
pub const SETTLED: std::time::Duration = std::time::Duration::from_secs(2);

#[cfg(unix)]
fn changed(meta: &std::fs::Metadata) -> Option<std::time::SystemTime> {
    use std::os::unix::fs::MetadataExt;
    let seconds = u64::try_from(meta.ctime()).ok()?;
    let nanos = u32::try_from(meta.ctime_nsec()).ok()?;
    std::time::UNIX_EPOCH.checked_add(std::time::Duration::new(seconds, nanos))
}

#[cfg(not(unix))]
fn changed(_meta: &std::fs::Metadata) -> Option<std::time::SystemTime> {
    None
}

#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> Option<Identity> {
    use std::os::unix::fs::MetadataExt;
    let fields = [
        meta.dev(),
        meta.ino(),
        meta.size(),
        meta.mtime() as u64,
        meta.mtime_nsec() as u64,
        meta.ctime() as u64,
        meta.ctime_nsec() as u64,
    ];
    let mut bytes = [0u8; IDENTITY_LEN];
    for (chunk, field) in bytes.chunks_exact_mut(8).zip(fields) {
        chunk.copy_from_slice(&field.to_le_bytes());
    }
    Some(Identity(bytes))
}

#[cfg(not(unix))]
fn identity(_meta: &std::fs::Metadata) -> Option<Identity> {
    None
}

/// A component's bytes, read only when something needs them.
pub struct Wasm {
    bytes: Option<Cow<'static, [u8]>>,
    /// The file to read them from, and the SHA-256 it had when it was
    /// looked at.
    unread: Option<(ComponentFile, [u8; 32])>,
    /// The component compiled ahead of time (a builtin's; see
    /// [`Wasm::with_compiled`]).
    compiled: Option<&'static [u8]>,
}

impl Wasm {
    /// Bytes already in memory.
    pub fn bytes(bytes: Cow<'static, [u8]>) -> Wasm {
        Wasm {
            bytes: Some(bytes),
            unread: None,
            compiled: None,
        }
    }

    /// The contents of `file`, whose SHA-256 is `sha256`, not read yet.
    pub fn unread(file: ComponentFile, sha256: [u8; 32]) -> Wasm {
        Wasm {
            bytes: None,
            unread: Some((file, sha256)),
            compiled: None,
        }
    }

    /// The same component, with `compiled`: its code as
    /// `precompile_component` gave it for this engine's settings, loaded in
    /// place of compiling where it fits the engine and the CPU. It is run as
    /// native code, so it must come from this build (a builtin's, embedded
    /// by `build.rs`), never from a file or the network.
    pub(crate) fn with_compiled(mut self, compiled: Option<&'static [u8]>) -> Wasm {
        self.compiled = compiled;
        self
    }

    /// The component's code compiled ahead of time, if it came with any.
    pub fn compiled(&self) -> Option<&'static [u8]> {
        self.compiled
    }

    /// The bytes, read now if they were not yet. A file whose contents no
    /// longer have the digest it was loaded by is an error: it changed while
    /// the plugin was loading.
    pub fn get(&mut self) -> Result<&[u8]> {
        if self.bytes.is_none()
            && let Some((file, sha256)) = self.unread.take()
        {
            let path = file.path().to_path_buf();
            let bytes = file.read()?;
            let found: [u8; 32] = Sha256::digest(&bytes).into();
            if found != sha256 {
                bail!(
                    "{} changed while the plugin was loading: load it again",
                    path.display()
                );
            }
            self.bytes = Some(Cow::Owned(bytes));
        }
        Ok(self.bytes.as_deref().unwrap_or_default())
    }

    /// Whether the bytes were read (for the tests).
    pub fn was_read(&self) -> bool {
        self.bytes.is_some()
    }
}

/// Opens `path` for reading without blocking on a FIFO: on Unix with
/// `O_NONBLOCK` (which a regular file ignores), elsewhere as usual (Windows
/// has no FIFOs in its file namespace).
#[cfg(unix)]
fn open(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
}

#[cfg(not(unix))]
fn open(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_within_the_cap_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.wasm");
        std::fs::write(&file, b"0123456789").unwrap();
        assert_eq!(read(&file, 10).unwrap(), b"0123456789");
        let error = read(&file, 9).unwrap_err().to_string();
        assert!(error.contains("10 bytes, over the limit of 9"), "{error}");
        let error = read(dir.path(), 10).unwrap_err().to_string();
        assert!(error.contains("a directory"), "{error}");
        // A device that never ends, and a FIFO with no writer: refused at once.
        let error = read(Path::new("/dev/zero"), 10).unwrap_err().to_string();
        assert!(error.contains("not a regular file"), "{error}");
        let fifo = dir.path().join("pipe.wasm");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|status| status.success()));
        let error = read(&fifo, 10).unwrap_err().to_string();
        assert!(error.contains("not a regular file"), "{error}");
    }
}
