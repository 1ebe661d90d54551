//! The `search` plugin: `glob`, `grep` and `concat_files`.
//!
//! All three are in category `search` and read-only, so the host mounts every
//! directory read-only for them. Paths and patterns are absolute or relative
//! to the first mount, and `path` defaults to the first mount; the sandbox,
//! not this code, keeps them inside the mounts.
//!
//! The tools (in `tools.rs`, compiled for wasm32-wasip2 only) are thin: they
//! decode arguments, pick the root and call the engines, which are plain
//! functions over the [`vfs::Fs`] trait so that they also compile natively
//! (the benchmark in `tests/bench` runs them as its baseline):
//! - [`walk`]: the sorted, ripgrep-rules directory walk;
//! - [`grep`]: content search with `grep-searcher` and `grep-regex`;
//! - [`literal`]: the literal every match holds, and a fast scan for it;
//! - [`glob`]: paths by pattern with `globset`;
//! - [`concat`](mod@concat): several files in one result;
//! - [`output`]: the byte budget that keeps results under the host's cap;
//! - [`progress`]: the counter behind the progress reports of long searches;
//! - [`vfs`]: `std::fs` natively, raw WASI 0.2 calls in the sandbox.
//!
//! Configuration (`[plugin.config]` in `plugins.toml`):
//! - `max_output_bytes`: the size a result (text and structured content
//!   together) stays under; default 921600 (900 KiB), under the host's
//!   default `max_output_bytes` limit of 1 MiB. Keep it below the host limit
//!   when lowering that.

pub mod concat;
pub mod glob;
pub mod grep;
pub mod literal;
pub mod output;
pub mod progress;
pub mod vfs;
pub mod walk;

// Only the component exports the tools: a native cdylib cannot carry the
// component model's export names, and natively this crate is a library.
#[cfg(all(target_os = "wasi", target_env = "p2"))]
mod tools;

#[cfg(all(test, unix))]
mod test_support {
    //! For the unit tests that put special files in a tree.
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::path::Path;
    use std::time::Duration;

    /// Makes a named pipe at `path` with `mkfifo`.
    pub(crate) fn mkfifo(path: &Path) {
        let status = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap();
        assert!(status.success(), "mkfifo {} failed", path.display());
    }

    /// Runs `work` on a thread of its own and returns what it returns, failing
    /// after ten seconds: opening a named pipe blocks, so a regression hangs.
    pub(crate) fn bounded<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || sender.send(work()));
        receiver
            .recv_timeout(Duration::from_secs(10))
            .expect("still running after 10 s: did it open a named pipe?")
    }
}
