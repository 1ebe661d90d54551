//! Stats and directory listings for guests, in fewer system calls than
//! wasmtime-wasi makes for them: a fast path of `wasi:filesystem` with one
//! backend per OS family, chosen at compile time. Linux has one (`linux`,
//! described below); elsewhere (`portable`) wasmtime-wasi's own
//! implementation answers, so the answers are the same everywhere, and the
//! tests of the Linux backend compare it with wasmtime-wasi's on every kind
//! of path.
//!
//! A guest built on wasi-libc (Rust's std is one) asks twice for every path
//! it stats: `metadata-hash-at` for `st_ino`, then `stat-at`. wasmtime-wasi
//! answers each of the two, for a path below the descriptor, with an
//! `openat2` of the whole path beneath it, an `fstat` and a `close`; and its
//! `read-directory` stats every entry it lists. A status of a 10,000-file
//! work tree made about 61,000 system calls that way. [`add_to_linker`]
//! replaces three calls of `wasi:filesystem/types`:
//! - `stat-at` of `dir/name`, not following a final symlink, opens `dir` once
//!   per call (a few are kept, see [`Lookups`]) and stats `name` relative to
//!   it: one `statx`.
//! - `metadata-hash-at` and `stat-at` of the same path, one right after the
//!   other (wasi-libc's `stat` makes the pair), share one `statx`: the second
//!   is answered from the first's, if no other host call came between them
//!   (the store's call hook counts them, see [`Lookups::count_call`]).
//! - `read-directory` takes each entry's type from the listing
//!   (`getdents64`), and stats only entries whose type the file system does
//!   not give. wasi-libc asks `metadata-hash-at` for each entry it reads, to
//!   fill `d_ino`; asked right after the entry was read, the answer is made
//!   from the listing's inode number and the directory's device, as `d_ino`
//!   is on Linux itself (for a mount point, that is the inode under it).
//!   The entries are read as the guest asks for them, a `getdents64` buffer
//!   at a time, never the whole directory at once: wasmtime-wasi's own
//!   `read-directory` (the portable backend's) reads a whole listing into
//!   host memory, outside the plugin's `memory_mb`.
//!
//! Path resolution stays cap-primitives', the library wasmtime-wasi's own
//! was taken from: a parent is opened beneath the descriptor (`openat2` with
//! `RESOLVE_BENEATH`, symlinks followed only while they stay beneath), and
//! what is statted relative to it is one normal name, never followed. Any
//! other path (one name, `..`, `.`, an empty or trailing component, a final
//! symlink to follow) is statted from the descriptor as wasmtime-wasi does.
//! A descriptor that is a file gets `not-directory`, as from wasmtime-wasi. The answers
//! (types, sizes, times, error codes, hashes) are wasmtime-wasi's; the tests
//! compare them on every kind of path.
//!
//! A parent kept open is a directory descriptor held for the rest of the
//! call, as a guest may hold one itself with `open-at`; like that one, it
//! still names the same directory if the directory is moved.

use wasmtime_wasi::WasiView;

use crate::runtime::call::CallContext;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub use linux::{Listing, Lookups, add_to_linker};

#[cfg(not(target_os = "linux"))]
mod portable;
#[cfg(not(target_os = "linux"))]
pub use portable::{Lookups, add_to_linker};

/// A store's data that holds [`Lookups`].
pub trait LookupView: WasiView {
    /// This call's lookups.
    fn lookups(&mut self) -> &mut Lookups;
    /// The call the lookups work for: host functions that loop stop when it
    /// is over ([`CallContext::is_over`]).
    fn call(&self) -> &CallContext;
    /// How many `pending-stats` (`toolcell:files`) the call holds.
    fn pending_stats(&mut self) -> &mut usize;
}

/// A mount with every kind of path the sandbox must get right, and
/// wasmtime-wasi's own answers, for the tests of the host's filesystem calls.
#[cfg(all(test, unix))]
#[allow(clippy::expect_used)] // a fixture that cannot be made fails the test
pub(crate) mod fixture {
    use std::path::Path;

    use wasmtime::component::{Resource, ResourceTable};
    use wasmtime_wasi::filesystem::{Descriptor, WasiFilesystemView};
    use wasmtime_wasi::p2::bindings::filesystem::preopens::Host as _;
    use wasmtime_wasi::p2::bindings::filesystem::types::{HostDescriptor, PathFlags};
    use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxView, WasiView};

    use super::{LookupView, Lookups};
    use crate::runtime::call::CallContext;

    pub(crate) struct State {
        ctx: WasiCtx,
        table: ResourceTable,
        pub(crate) lookups: Lookups,
        pub(crate) cx: CallContext,
        pub(crate) pending_stats: usize,
    }

    impl WasiView for State {
        fn ctx(&mut self) -> WasiCtxView<'_> {
            WasiCtxView {
                ctx: &mut self.ctx,
                table: &mut self.table,
            }
        }
    }

    impl LookupView for State {
        fn lookups(&mut self) -> &mut Lookups {
            &mut self.lookups
        }

        fn call(&self) -> &CallContext {
            &self.cx
        }

        fn pending_stats(&mut self) -> &mut usize {
            &mut self.pending_stats
        }
    }

    /// Adds `big` to the mount [`mount`] made in `dir`: 200,000 bytes, not
    /// all alike, past the 64 KiB a WASI `read` returns at most.
    pub(crate) fn big_file(dir: &Path) {
        let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(dir.join("root/big"), big).expect("a file");
    }

    /// A mount with files, directories, symlinks in and out, a FIFO, and
    /// siblings outside it; a state with the mount preopened, and the
    /// preopen's handle.
    pub(crate) fn mount(dir: &Path) -> (State, u32) {
        let root = dir.join("root");
        let outside = dir.join("outside");
        for path in [root.join("dir/sub"), outside.clone(), dir.join("root-evil")] {
            std::fs::create_dir_all(path).expect("no trap");
        }
        for (path, text) in [
            (root.join("file"), "hello"),
            (root.join("dir/file"), "in dir"),
            (root.join("dir/sub/file"), "in sub"),
            (root.join("dir/ünï cødé"), "non-ASCII"),
            (outside.join("secret"), "secret"),
            (dir.join("root-evil/x"), "evil"),
        ] {
            std::fs::write(path, text).expect("a file");
        }
        let links: [(&Path, &Path); 6] = [
            (Path::new("file"), &root.join("link-file")),
            (Path::new("dir"), &root.join("link-dir")),
            (&outside, &root.join("link-out")),
            (Path::new("../dir"), &root.join("dir/link-up")),
            (Path::new("../../outside"), &root.join("dir/link-escape")),
            (Path::new("nowhere"), &root.join("dangling")),
        ];
        for (target, link) in links {
            std::os::unix::fs::symlink(target, link).expect("a symlink");
        }
        let fifo = std::process::Command::new("mkfifo")
            .arg(root.join("fifo"))
            .status();
        assert!(fifo.is_ok_and(|status| status.success()), "mkfifo failed");
        let mut builder = WasiCtx::builder();
        builder.allow_blocking_current_thread(true);
        builder
            .preopened_dir(&root, "/mount", FsPerms::ReadOnly)
            .expect("a preopen");
        let mut state = State {
            ctx: builder.build(),
            table: ResourceTable::new(),
            lookups: Lookups::default(),
            cx: CallContext::default(),
            pending_stats: 0,
        };
        let preopens = state.filesystem().get_directories().expect("the preopens");
        let rep = preopens[0].0.rep();
        (state, rep)
    }

    pub(crate) const PATHS: &[&str] = &[
        "file",
        "dir",
        "dir/file",
        "dir/sub/file",
        "dir/ünï cødé",
        "dir/../file",
        "./file",
        "dir/./file",
        "dir//file",
        "dir/file/",
        "dir/",
        ".",
        "..",
        "",
        "/etc/passwd",
        "../outside/secret",
        "../root-evil/x",
        "link-file",
        "link-dir",
        "link-dir/file",
        "link-dir/sub/file",
        "link-out",
        "link-out/secret",
        "dir/link-up",
        "dir/link-up/file",
        "dir/link-up/link-up/sub/file",
        "dir/link-escape",
        "dir/link-escape/secret",
        "dangling",
        "dangling/x",
        "fifo",
        "missing",
        "missing/file",
        "dir/missing",
        "file/x",
    ];

    pub(crate) fn borrow(rep: u32) -> Resource<Descriptor> {
        Resource::new_borrow(rep)
    }

    /// wasmtime-wasi's own answer to `stat-at`.
    pub(crate) async fn wasmtime_stat(
        state: &mut State,
        rep: u32,
        flags: PathFlags,
        path: &str,
    ) -> String {
        let answer = HostDescriptor::stat_at(
            &mut state.filesystem(),
            borrow(rep),
            flags,
            path.to_string(),
        )
        .await
        .map_err(|error| error.downcast().expect("an error code"));
        format!("{answer:?}")
    }
}
