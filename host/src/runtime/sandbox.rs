//! The WASI context of one call, built from a plugin's grants.
//!
//! [`Grants`] is what `plugins.toml` gives a plugin: mounts, environment
//! variables (their values read once, at load time). [`wasi_ctx`] turns a
//! tool's share of them into a fresh `WasiCtx` for one call: each mount is a preopen
//! at the same guest path as its canonical host path, read-only unless the
//! mount is `rw` and the tool is not read-only; nothing else is reachable
//! (wasmtime-wasi denies sockets and name lookups by default, stdin is
//! closed). Guest stdout and stderr go to [`LogStream`], which turns them into
//! log lines and never touches the process's stdout, which belongs to MCP.
//! [`refuse_special_files`] replaces WASI's `open-at` with one that never
//! blocks and hands out nothing but files and directories: a FIFO, socket or
//! device, where `open(2)` or a read could block forever, is refused.

use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use anyhow::{Context as _, Result};
use bytes::Bytes;
use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::filesystem::{Descriptor, Dir, File as WasiFile, OpenMode};
use wasmtime_wasi::p2::bindings::filesystem::types::{
    DescriptorFlags, ErrorCode, OpenFlags, PathFlags,
};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiView};

use crate::config::Mount;
use crate::limits::GUEST_LOG_LINE_BYTES;

/// The capabilities `plugins.toml` grants one plugin.
#[derive(Clone, Debug, Default)]
pub struct Grants {
    /// Directories, in configuration order; the first is where relative
    /// paths resolve.
    pub mounts: Vec<Mount>,
    /// Environment variables passed through, with the values they had when
    /// the plugin was loaded. Variables that were unset are left out.
    pub env: Vec<(String, String)>,
    /// Hosts the plugin may reach over HTTP(S): `host` or `host:port`.
    pub network: Arc<[String]>,
}

/// Decides which outgoing HTTP requests a call may make: only to the hosts
/// its plugin's `network` grant names. A name without a port allows the
/// scheme's default port (80 for http, 443 for https); with a port, exactly
/// that port. Everything else is refused before any connection is made.
pub struct NetworkPolicy {
    plugin: Arc<str>,
    allowed: Arc<[String]>,
}

impl NetworkPolicy {
    /// The policy for one call of `plugin`.
    pub fn new(plugin: Arc<str>, allowed: Arc<[String]>) -> NetworkPolicy {
        NetworkPolicy { plugin, allowed }
    }

    /// Whether a request to `host` on `port` (with the scheme's default
    /// port `default_port`) is granted.
    pub fn allows(&self, host: &str, port: u16, default_port: u16) -> bool {
        let host = host.to_ascii_lowercase();
        self.allowed.iter().any(|entry| {
            let (granted, granted_port) = crate::config::split_host_port(entry);
            let granted = granted.trim_start_matches('[').trim_end_matches(']');
            let host = host.trim_start_matches('[').trim_end_matches(']');
            granted == host
                && match granted_port {
                    Some(p) => p.parse::<u16>().ok() == Some(port),
                    None => port == default_port,
                }
        })
    }
}

type BoxedSend = Box<
    dyn std::future::Future<
            Output = Result<
                (
                    http::Response<wasmtime_wasi_http::WasiBody>,
                    Box<
                        dyn std::future::Future<Output = Result<(), wasmtime_wasi_http::Error>>
                            + Send,
                    >,
                ),
                wasmtime_wasi_http::Error,
            >,
        > + Send,
>;

impl wasmtime_wasi_http::WasiHttpHooks for NetworkPolicy {
    fn send_request(
        &mut self,
        request: http::Request<wasmtime_wasi_http::WasiBody>,
        options: Option<wasmtime_wasi_http::RequestOptions>,
        fut: Box<dyn std::future::Future<Output = Result<(), wasmtime_wasi_http::Error>> + Send>,
    ) -> BoxedSend {
        let uri = request.uri();
        let https = uri.scheme() == Some(&http::uri::Scheme::HTTPS);
        let default_port = if https { 443 } else { 80 };
        let host = uri.host().unwrap_or_default().to_string();
        let port = uri.port_u16().unwrap_or(default_port);
        if !self.allows(&host, port, default_port) {
            tracing::warn!(
                plugin = &*self.plugin,
                "refused an HTTP request to {host}:{port}: not in the plugin's `network` grant"
            );
            return Box::new(async { Err(wasmtime_wasi_http::Error::HttpRequestDenied) });
        }
        tracing::debug!(plugin = &*self.plugin, "HTTP request to {host}:{port}");
        _ = fut;
        Box::new(async move {
            use http_body_util::BodyExt;
            let (response, io) = wasmtime_wasi_http::default_send_request(request, options).await?;
            Ok((
                response.map(BodyExt::boxed_unsync),
                Box::new(io) as Box<dyn std::future::Future<Output = _> + Send>,
            ))
        })
    }
}

/// The WASI context for one call.
///
/// `mounts` are the tool's mounts (its override, or its plugin's);
/// `read_only` mounts every one read-only, whatever was granted: it is set
/// for tools whose descriptor says read-only. `stdout_cap` is how many bytes
/// of guest output are logged before the rest is dropped.
pub fn wasi_ctx(
    plugin: &Arc<str>,
    mounts: &[Mount],
    env: &[(String, String)],
    read_only: bool,
    stdout_cap: usize,
    stdio: Option<&CommandStdio>,
) -> Result<WasiCtx> {
    // File operations are done in place, on the thread that runs the guest:
    // a thread of the call's own (see `protocol::server::slots`), never a
    // runtime worker, so one that blocks in the kernel holds up no other
    // call. Done in place they cost a fraction of a trip to another thread
    // and back for each one. (`refuse_special_files` makes the descriptors
    // it opens the same way.)
    let mut builder = WasiCtxBuilder::new();
    builder.allow_blocking_current_thread(true);
    for mount in mounts {
        let guest = guest_path(&mount.host)?;
        let perms = if mount.writable && !read_only {
            FsPerms::ReadWrite
        } else {
            FsPerms::ReadOnly
        };
        builder
            .preopened_dir(&mount.host, &guest, perms)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("cannot open mount {}", mount.host.display()))?;
    }
    for (key, value) in env {
        builder.env(key, value);
    }
    match stdio {
        Some(stdio) => {
            builder.args(&stdio.argv);
            builder.stdin(wasmtime_wasi::p2::pipe::MemoryInputPipe::new(
                stdio.stdin.clone(),
            ));
            builder.stdout(stdio.stdout.clone());
            builder.stderr(stdio.stderr.clone());
        }
        None => {
            let output = OutputBudget::new(stdout_cap);
            builder.stdout(LogStream::new(plugin.clone(), "stdout", output.clone()));
            builder.stderr(LogStream::new(plugin.clone(), "stderr", output));
        }
    }
    Ok(builder.build())
}

/// A WASI command's standard streams for one run: its arguments, its
/// stdin, and its stdout and stderr kept in memory for the result.
pub struct CommandStdio {
    /// `argv`, its name first.
    pub argv: Vec<String>,
    /// What it reads from stdin, then end of file.
    pub stdin: Bytes,
    /// What it writes to stdout.
    pub stdout: Captured,
    /// What it writes to stderr.
    pub stderr: Captured,
}

/// An output stream kept in memory up to a cap; writes past it always
/// succeed (a chatty command never fails for it) and are dropped, and the
/// stream remembers that it was cut.
#[derive(Clone)]
pub struct Captured(Arc<Mutex<(Vec<u8>, usize, bool)>>);

impl Captured {
    /// A stream that keeps up to `cap` bytes.
    pub fn new(cap: usize) -> Captured {
        Captured(Arc::new(Mutex::new((Vec::new(), cap, false))))
    }

    /// What was kept, and whether more was written and dropped.
    pub fn take(&self) -> (Vec<u8>, bool) {
        let mut inner = match self.0.lock() {
            Ok(inner) => inner,
            Err(poisoned) => poisoned.into_inner(),
        };
        (std::mem::take(&mut inner.0), inner.2)
    }

    fn write_bytes(&self, bytes: &[u8]) {
        let mut inner = match self.0.lock() {
            Ok(inner) => inner,
            Err(poisoned) => poisoned.into_inner(),
        };
        let room = inner.1.saturating_sub(inner.0.len());
        let kept = bytes.len().min(room);
        inner.0.extend_from_slice(&bytes[..kept]);
        if kept < bytes.len() {
            inner.2 = true;
        }
    }
}

/// The stream traits wasmtime-wasi asks of a guest's stdout or stderr, for a
/// cloneable type whose `write_bytes(&self, &[u8])` takes every write (never
/// blocking, never failing).
macro_rules! output_stream {
    ($stream:ty) => {
        impl IsTerminal for $stream {
            fn is_terminal(&self) -> bool {
                false
            }
        }

        impl StdoutStream for $stream {
            fn p2_stream(&self) -> Box<dyn OutputStream> {
                Box::new(self.clone())
            }

            fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
                Box::new(self.clone())
            }
        }

        #[async_trait::async_trait]
        impl OutputStream for $stream {
            fn write(&mut self, bytes: Bytes) -> Result<(), StreamError> {
                self.write_bytes(&bytes);
                Ok(())
            }

            fn flush(&mut self) -> Result<(), StreamError> {
                Ok(())
            }

            fn check_write(&mut self) -> Result<usize, StreamError> {
                Ok(64 * 1024)
            }
        }

        #[async_trait::async_trait]
        impl Pollable for $stream {
            async fn ready(&mut self) {}
        }

        impl tokio::io::AsyncWrite for $stream {
            fn poll_write(
                self: Pin<&mut Self>,
                _: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<std::io::Result<usize>> {
                self.write_bytes(buf);
                Poll::Ready(Ok(buf.len()))
            }

            fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
                Poll::Ready(Ok(()))
            }

            fn poll_shutdown(
                self: Pin<&mut Self>,
                _: &mut Context<'_>,
            ) -> Poll<std::io::Result<()>> {
                Poll::Ready(Ok(()))
            }
        }
    };
}

output_stream!(Captured);

/// The name a mount has inside the sandbox, where the guest's libc (wasi-libc)
/// resolves absolute paths by the preopen with the longest matching name,
/// case-sensitively, with `/` as the only separator. On Linux and macOS it is
/// the host path itself, so absolute paths the model sees are real ones. On
/// Windows it is the host path in POSIX form, `C:\Users\me\proj` as
/// `/C:/Users/me/proj`: the SDKs translate `C:\...` and `C:/...` to it
/// (ignoring case, as Windows does) and show it back as `C:\...` (see
/// docs/authoring.md, "Paths"). This is the one place the mapping is made.
pub fn guest_path(host: &Path) -> Result<String> {
    let text = host
        .to_str()
        .with_context(|| format!("mount {} is not valid UTF-8", host.display()))?;
    Ok(if cfg!(windows) {
        windows_guest_path(text)
    } else {
        text.to_owned()
    })
}

/// `C:\Users\me` (or `\\?\C:\Users\me`) as `/C:/Users/me`.
fn windows_guest_path(host: &str) -> String {
    let host = host.strip_prefix(r"\\?\").unwrap_or(host);
    format!("/{}", host.replace('\\', "/").trim_end_matches('/'))
}

/// The WASI interface whose `open-at` [`refuse_special_files`] replaces (and
/// whose stats and listings `lookups` replaces), as wasmtime-wasi names it
/// (guests importing any 0.2.x resolve to it).
pub const FILESYSTEM_TYPES: &str = "wasi:filesystem/types@0.2.12";

/// Replaces `descriptor.open-at` in `linker` (which already has WASI) with
/// one that opens by descriptor and never blocks: the path is opened as
/// wasmtime-wasi opens it (cap-primitives' resolution beneath the
/// directory: `openat2` with `RESOLVE_BENEATH` on Linux, a component at a
/// time elsewhere; a final symlink followed only if asked), but with
/// `O_NONBLOCK`, and what was opened is then looked at through its own
/// descriptor: a directory or a regular file is handed to the guest (a
/// file with `O_NONBLOCK` cleared again), anything else (a FIFO, a socket,
/// a device) is closed unread and refused with `unsupported`.
///
/// Without it, opening a FIFO blocks in the kernel until a writer comes,
/// and reading one, a socket or a terminal may never end: the call would
/// still be answered by its deadline, but its thread would stay stuck, and
/// a hostile plugin (or a file swapped for a FIFO by someone else) could
/// pile them up. Since the type is checked on the descriptor that was
/// opened, there is no window between a look and the open for a swap to
/// slip through. A socket cannot be opened at all (`ENXIO`), nor a FIFO for
/// writing with no reader; both are refused with `unsupported` too.
///
/// On Windows there is nothing to block on: named pipes live in their own
/// namespace (`\\.\pipe\`), which no path beneath a mount reaches (reparse
/// points are not followed out of it, device names are refused), so the
/// open is the same without the flag, and the type check on the handle
/// still refuses anything that is neither a file nor a directory.
///
/// The answers are otherwise wasmtime-wasi's 48 `open-at`'s, checks and
/// error codes in the same order. Descriptors are made to do their file
/// operations in place, as [`wasi_ctx`] makes every call's.
pub fn refuse_special_files<T: WasiView + 'static>(linker: &mut Linker<T>) -> Result<()> {
    type Args = (
        Resource<Descriptor>,
        PathFlags,
        String,
        OpenFlags,
        DescriptorFlags,
    );
    linker.allow_shadowing(true);
    linker.instance(FILESYSTEM_TYPES)?.func_wrap(
        "[method]descriptor.open-at",
        |mut store: StoreContextMut<'_, T>, (dir, path_flags, path, open_flags, flags): Args| {
            let table = store.data_mut().ctx().table;
            let dir = match table.get(&dir)? {
                Descriptor::Dir(dir) => dir.clone(),
                Descriptor::File(_) => return Ok((Err(ErrorCode::NotDirectory),)),
            };
            match open_at(&dir, path_flags, &path, open_flags, flags) {
                Ok(descriptor) => Ok((Ok(table.push(descriptor)?),)),
                Err(code) => {
                    if code == ErrorCode::Unsupported {
                        tracing::debug!(path, "refused to open a special file");
                    }
                    Ok((Err(code),))
                }
            }
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

/// `open-at` of `path` beneath `dir`, as wasmtime-wasi opens it, except
/// that it does not block and opens nothing but files and directories.
fn open_at(
    dir: &Dir,
    path_flags: PathFlags,
    path: &str,
    open_flags: OpenFlags,
    flags: DescriptorFlags,
) -> Result<Descriptor, ErrorCode> {
    let (descriptor, _) = open_sized(dir, path_flags, path, open_flags, flags)?;
    if let Descriptor::File(file) = &descriptor {
        make_blocking(&file.file).map_err(ErrorCode::from)?;
    }
    Ok(descriptor)
}

/// Makes reads of `file`, opened with `O_NONBLOCK`, block again, as a guest
/// expects: regular files ignore the flag, but some file systems (FUSE)
/// pass it on. Of the flags `F_SETFL` changes (append, async, direct,
/// noatime, nonblock), [`open_sized`] sets none but nonblock, so clearing
/// them all needs no `F_GETFL` first: one system call, not two.
pub(crate) fn make_blocking(file: &std::fs::File) -> std::io::Result<()> {
    #[cfg(unix)]
    rustix::fs::fcntl_setfl(file, rustix::fs::OFlags::empty())?;
    #[cfg(not(unix))]
    let _ = file;
    Ok(())
}

/// [`open_at`] but that a file is left non-blocking (see [`make_blocking`]),
/// and the size of what was opened, from the same `fstat` that checked its
/// type.
pub(crate) fn open_sized(
    dir: &Dir,
    path_flags: PathFlags,
    path: &str,
    open_flags: OpenFlags,
    flags: DescriptorFlags,
) -> Result<(Descriptor, u64), ErrorCode> {
    use cap_primitives::fs::{FollowSymlinks, OpenOptions};

    let mut create = false;
    let mut mode = OpenMode::empty();
    let mut options = OpenOptions::new();
    options._cap_fs_ext_maybe_dir(true);
    if open_flags.contains(OpenFlags::CREATE) {
        if open_flags.contains(OpenFlags::EXCLUSIVE) {
            options.create_new(true);
        } else {
            options.create(true);
        }
        create = true;
        options.write(true);
        mode |= OpenMode::WRITE;
    }
    if open_flags.contains(OpenFlags::TRUNCATE) {
        options.truncate(true).write(true);
        mode |= OpenMode::WRITE;
    }
    if flags.contains(DescriptorFlags::READ) {
        options.read(true);
        mode |= OpenMode::READ;
    }
    if flags.contains(DescriptorFlags::WRITE) {
        options.write(true);
        mode |= OpenMode::WRITE;
    } else {
        // Opened for reading, so the OS lets it open; the permissions
        // refuse writes later.
        options.read(true);
        mode |= OpenMode::READ;
    }
    let follow = FollowSymlinks::follow(path_flags.contains(PathFlags::SYMLINK_FOLLOW));
    options._cap_fs_ext_follow(follow);
    if flags.intersects(
        DescriptorFlags::FILE_INTEGRITY_SYNC
            | DescriptorFlags::DATA_INTEGRITY_SYNC
            | DescriptorFlags::REQUESTED_WRITE_SYNC,
    ) {
        return Err(ErrorCode::Unsupported);
    }
    if open_flags.contains(OpenFlags::DIRECTORY)
        && open_flags.intersects(OpenFlags::CREATE | OpenFlags::EXCLUSIVE | OpenFlags::TRUNCATE)
    {
        return Err(ErrorCode::Invalid);
    }
    if dir.perms.write_not_permitted() && (create || mode.contains(OpenMode::WRITE)) {
        return Err(ErrorCode::NotPermitted);
    }
    #[cfg(unix)]
    {
        use cap_primitives::fs::OpenOptionsExt;
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    let file = cap_primitives::fs::open(&dir.dir, Path::new(path), &options)
        .map_err(|error| open_error(&dir.dir, path, follow, error))?;
    let metadata = file.metadata().map_err(ErrorCode::from)?;
    let (kind, size) = (metadata.file_type(), metadata.len());
    if kind.is_dir() {
        // As wasmtime-wasi, where Windows would open a directory for
        // writing and POSIX says `EISDIR`.
        if cfg!(windows) && flags.contains(DescriptorFlags::WRITE) {
            return Err(ErrorCode::IsDirectory);
        }
        return Ok((Descriptor::Dir(Dir::new(file, dir.perms, mode, true)), size));
    }
    if open_flags.contains(OpenFlags::DIRECTORY) {
        return Err(ErrorCode::NotDirectory);
    }
    if !kind.is_file() {
        return Err(ErrorCode::Unsupported);
    }
    let file = WasiFile::new(file, dir.perms, mode, true);
    Ok((Descriptor::File(file), size))
}

/// The error code for an open that failed. A socket cannot be opened, nor a
/// FIFO for writing while nothing reads it (`ENXIO`): if that is why, the
/// path is a special file, refused like the others.
fn open_error(
    dir: &std::fs::File,
    path: &str,
    follow: cap_primitives::fs::FollowSymlinks,
    error: std::io::Error,
) -> ErrorCode {
    #[cfg(unix)]
    if error.raw_os_error() == Some(rustix::io::Errno::NXIO.raw_os_error())
        && let Ok(meta) = cap_primitives::fs::stat(dir, Path::new(path), follow)
        && !meta.is_file()
        && !meta.is_dir()
    {
        return ErrorCode::Unsupported;
    }
    let _ = (dir, path, follow);
    ErrorCode::from(error)
}

/// How many bytes of stdout and stderr together one call may still log.
#[derive(Clone)]
struct OutputBudget(Arc<Mutex<usize>>);

impl OutputBudget {
    fn new(bytes: usize) -> OutputBudget {
        OutputBudget(Arc::new(Mutex::new(bytes)))
    }

    /// Takes up to `wanted` bytes; returns how many were granted and whether
    /// this call exhausted the budget (so the caller logs one notice).
    fn take(&self, wanted: usize) -> (usize, bool) {
        let mut left = match self.0.lock() {
            Ok(left) => left,
            Err(poisoned) => poisoned.into_inner(),
        };
        if *left == 0 {
            return (0, false);
        }
        let granted = wanted.min(*left);
        *left -= granted;
        (granted, *left == 0)
    }
}

/// A guest's stdout or stderr: complete lines become `tracing` events tagged
/// with the plugin and stream. Writes always succeed, so a chatty guest never
/// fails; past the budget, output is dropped after one notice.
#[derive(Clone)]
pub struct LogStream {
    plugin: Arc<str>,
    stream: &'static str,
    budget: OutputBudget,
    line: Arc<Mutex<Vec<u8>>>,
}

impl LogStream {
    fn new(plugin: Arc<str>, stream: &'static str, budget: OutputBudget) -> LogStream {
        LogStream {
            plugin,
            stream,
            budget,
            line: Arc::new(Mutex::new(Vec::new())),
        }
    }

    fn write_bytes(&self, bytes: &[u8]) {
        let (granted, exhausted) = self.budget.take(bytes.len());
        let mut line = match self.line.lock() {
            Ok(line) => line,
            Err(poisoned) => poisoned.into_inner(),
        };
        for &byte in &bytes[..granted] {
            if byte == b'\n' {
                self.emit(&line);
                line.clear();
            } else {
                line.push(byte);
                if line.len() >= GUEST_LOG_LINE_BYTES {
                    self.emit(&line);
                    line.clear();
                }
            }
        }
        if exhausted {
            if !line.is_empty() {
                self.emit(&line);
                line.clear();
            }
            tracing::warn!(
                plugin = &*self.plugin,
                stream = self.stream,
                "plugin output limit reached; further output of this call is dropped"
            );
        }
    }

    fn emit(&self, line: &[u8]) {
        tracing::info!(
            target: "toolcell::plugin_output",
            plugin = &*self.plugin,
            stream = self.stream,
            "{}",
            String::from_utf8_lossy(line)
        );
    }
}

impl Drop for LogStream {
    fn drop(&mut self) {
        // The last clone flushes an unterminated final line.
        if Arc::strong_count(&self.line) == 1 {
            let line = match self.line.lock() {
                Ok(line) => line,
                Err(poisoned) => poisoned.into_inner(),
            };
            if !line.is_empty() {
                self.emit(&line);
            }
        }
    }
}

output_stream!(LogStream);

#[cfg(test)]
mod tests {
    use super::*;

    /// Our `open-at` answers as wasmtime-wasi's for every kind of path,
    /// except that a FIFO is refused instead of blocking.
    #[cfg(unix)]
    #[tokio::test]
    async fn opens_answer_as_wasmtimes_and_refuse_a_fifo() {
        use wasmtime_wasi::filesystem::WasiFilesystemView;
        use wasmtime_wasi::p2::bindings::filesystem::types::HostDescriptor;

        use crate::runtime::host::fs_lookups::fixture::{PATHS, borrow, mount};

        let dir = tempfile::tempdir().expect("a temporary directory");
        let (mut state, rep) = mount(dir.path());
        let root = match state.ctx().table.get(&borrow(rep)).expect("the preopen") {
            Descriptor::Dir(root) => root.clone(),
            Descriptor::File(_) => panic!("the preopen is a directory"),
        };
        let kind = |descriptor: &Descriptor| match descriptor {
            Descriptor::Dir(_) => "dir",
            Descriptor::File(_) => "file",
        };
        for path in PATHS {
            for follow in [PathFlags::empty(), PathFlags::SYMLINK_FOLLOW] {
                for open_flags in [OpenFlags::empty(), OpenFlags::DIRECTORY, OpenFlags::CREATE] {
                    for flags in [DescriptorFlags::READ, DescriptorFlags::WRITE] {
                        let ours = open_at(&root, follow, path, open_flags, flags)
                            .map(|descriptor| kind(&descriptor));
                        let fifo = *path == "fifo" && !open_flags.contains(OpenFlags::CREATE);
                        if fifo && flags == DescriptorFlags::READ {
                            let expected = if open_flags.contains(OpenFlags::DIRECTORY) {
                                ErrorCode::NotDirectory
                            } else {
                                ErrorCode::Unsupported
                            };
                            assert_eq!(ours, Err(expected), "{path} {open_flags:?}");
                            continue;
                        }
                        let theirs = HostDescriptor::open_at(
                            &mut state.filesystem(),
                            borrow(rep),
                            follow,
                            path.to_string(),
                            open_flags,
                            flags,
                        )
                        .await
                        .map_err(|error| error.downcast().expect("an error code"));
                        let theirs = match theirs {
                            Ok(opened) => {
                                let table = state.ctx().table;
                                let answer = kind(table.get(&opened).expect("opened"));
                                table.delete(opened).expect("closed");
                                Ok(answer)
                            }
                            Err(code) => Err(code),
                        };
                        assert_eq!(
                            format!("{ours:?}"),
                            format!("{theirs:?}"),
                            "{path} {follow:?} {open_flags:?} {flags:?}"
                        );
                    }
                }
            }
        }
    }

    /// A file is opened without `O_NONBLOCK` left on, and read-only when
    /// asked to read.
    #[cfg(unix)]
    #[test]
    fn opened_files_block_and_keep_their_mode() {
        use rustix::fs::{OFlags, fcntl_getfl};

        use crate::runtime::host::fs_lookups::fixture::{borrow, mount};

        let dir = tempfile::tempdir().expect("a temporary directory");
        let (mut state, rep) = mount(dir.path());
        let Descriptor::Dir(root) = state.ctx().table.get(&borrow(rep)).expect("the preopen")
        else {
            panic!("the preopen is a directory");
        };
        let opened = open_at(
            root,
            PathFlags::empty(),
            "file",
            OpenFlags::empty(),
            DescriptorFlags::READ,
        );
        let Ok(Descriptor::File(file)) = opened else {
            panic!("the file opens");
        };
        let flags = fcntl_getfl(&*file.file).expect("the flags");
        assert!(!flags.contains(OFlags::NONBLOCK), "{flags:?}");
        assert_eq!(flags & OFlags::ACCMODE, OFlags::RDONLY, "{flags:?}");
    }

    #[test]
    fn windows_mounts_get_posix_names() {
        assert_eq!(windows_guest_path(r"C:\Users\me\proj"), "/C:/Users/me/proj");
        assert_eq!(windows_guest_path(r"\\?\D:\data"), "/D:/data");
        assert_eq!(windows_guest_path(r"C:\"), "/C:");
    }
}
