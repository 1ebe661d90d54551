//! `toolcell:files/contents`, the host's extension for plugins that read
//! many files: a file's contents in one call (`wit/deps/files-0.3.0.wit` is
//! the contract).
//!
//! Through `wasi:filesystem`, reading a small file whole is three host calls
//! at least (`open-at`, `read`, the descriptor's drop), each lifted, lowered
//! and looked up in the call's resource table, and an `fcntl` to make the
//! descriptor blocking again. `grep` reads thousands of files a search;
//! `read-file` is one host call per file, and on Unix four system calls for
//! a small one (`openat2`, `statx`, `pread`, `close`), as few as ripgrep
//! makes.
//!
//! The file is opened by [`open_sized`], the host's `open-at` (beneath the
//! directory, the final name never followed, nothing but a regular file
//! read), so the answers are those of `open-at`, `read` and the drop. The
//! bytes are read into the buffer's spare capacity, sized from the `fstat`
//! that checked the file's type, and never zeroed (Unix); elsewhere with
//! `std`'s `read_to_end`, with the same answers. The tests compare them
//! with wasmtime-wasi's `open-at` and `read`.

use std::fs::File;

use anyhow::Result;
use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::WasiView;
use wasmtime_wasi::filesystem::{Descriptor, Dir};
use wasmtime_wasi::p2::bindings::filesystem::types::{
    DescriptorFlags, ErrorCode, OpenFlags, PathFlags,
};

use crate::limits::READ_FILE_MAX_BYTES;
use crate::runtime::sandbox::open_sized;

/// The interface, as plugins import it.
pub const CONTENTS: &str = "toolcell:files/contents@0.3.0";

/// What `read-file` answers: the bytes, and whether the end was reached.
type Contents = Result<(Vec<u8>, bool), ErrorCode>;

/// Adds `toolcell:files/contents` 0.3.0 to `linker`.
pub fn add_to_linker<T: WasiView + 'static>(linker: &mut Linker<T>) -> Result<()> {
    type Args = (Resource<Descriptor>, String, u64);
    linker.instance(CONTENTS)?.func_wrap(
        "read-file",
        |mut store: StoreContextMut<'_, T>, (dir, name, max_bytes): Args| {
            let answer = match store.data_mut().ctx().table.get(&dir)? {
                Descriptor::Dir(dir) => read_file(dir, &name, max_bytes),
                // Relative to a file, as `open-at` answers.
                Descriptor::File(_) => Err(ErrorCode::NotDirectory),
            };
            Ok((answer,))
        },
    )?;
    Ok(())
}

/// `read-file(dir, name, max-bytes)`.
fn read_file(dir: &Dir, name: &str, max_bytes: u64) -> Contents {
    let separator = name.contains('/') || (cfg!(windows) && name.contains('\\'));
    if name.is_empty() || name == "." || name == ".." || separator {
        return Err(ErrorCode::Invalid);
    }
    let max = usize::try_from(max_bytes)
        .unwrap_or(usize::MAX)
        .min(READ_FILE_MAX_BYTES);
    let (descriptor, size) = open_sized(
        dir,
        PathFlags::empty(),
        name,
        OpenFlags::empty(),
        DescriptorFlags::READ,
    )?;
    let Descriptor::File(file) = descriptor else {
        return Err(ErrorCode::IsDirectory);
    };
    read_start(&file.file, size, max).map_err(ErrorCode::from)
}

/// Up to `max` bytes of `file` from its start, `size` being what `fstat`
/// said of its length, and whether the end was reached.
#[cfg(unix)]
fn read_start(file: &File, size: u64, max: usize) -> std::io::Result<(Vec<u8>, bool)> {
    use rustix::io::{Errno, pread};

    use crate::runtime::sandbox::make_blocking;

    // One byte more than the file has, so that a file that did not grow
    // is read whole by the first `pread`.
    let first = usize::try_from(size.saturating_add(1)).unwrap_or(usize::MAX);
    let mut data = Vec::with_capacity(first.min(max));
    let mut blocking = false;
    loop {
        if data.len() >= max {
            data.truncate(max);
            return Ok((data, false));
        }
        if data.len() == data.capacity() {
            let more = data.len().max(64 << 10).min(max - data.len());
            data.reserve_exact(more);
        }
        let before = data.len();
        let offset = before as u64;
        match pread(file, rustix::buffer::spare_capacity(&mut data), offset) {
            Ok(_) => {}
            Err(Errno::INTR) => continue,
            // The file is still non-blocking (`open_sized`), which only a
            // file system like FUSE heeds: made blocking, it is read again.
            Err(Errno::AGAIN) if !blocking => {
                make_blocking(file)?;
                blocking = true;
                continue;
            }
            Err(error) => return Err(error.into()),
        }
        let got = data.len() - before;
        // `pread` of a regular file returns less than asked only at its
        // end; a network or FUSE file system may cut a read at a page
        // boundary, so such a short read is confirmed by reading on.
        let short = data.len() < data.capacity();
        if got == 0 || (short && got % 4096 != 0) {
            // As the contract says: not the end when `max` bytes were read.
            let end = data.len() < max;
            data.truncate(max);
            return Ok((data, end));
        }
    }
}

/// Up to `max` bytes of `file` from its start, and whether the end was
/// reached: `std`'s way, the portable path.
#[cfg(any(not(unix), test))]
fn read_start_portable(file: &File, size: u64, max: usize) -> std::io::Result<(Vec<u8>, bool)> {
    use std::io::Read;

    let first = usize::try_from(size.saturating_add(1)).unwrap_or(usize::MAX);
    let mut data = Vec::with_capacity(first.min(max));
    file.take(u64::try_from(max).unwrap_or(u64::MAX))
        .read_to_end(&mut data)?;
    let end = data.len() < max;
    Ok((data, end))
}

#[cfg(not(unix))]
fn read_start(file: &File, size: u64, max: usize) -> std::io::Result<(Vec<u8>, bool)> {
    read_start_portable(file, size, max)
}

#[cfg(all(test, unix))]
mod tests {
    use wasmtime_wasi::filesystem::WasiFilesystemView;
    use wasmtime_wasi::p2::bindings::filesystem::types::HostDescriptor;

    use super::*;
    use crate::runtime::host::fs_lookups::fixture::{PATHS, big_file, borrow, mount};

    /// wasmtime-wasi's answer: `open-at` for reading without following,
    /// then `read`s until the end or `max` bytes, then the drop.
    #[allow(clippy::expect_used)] // a fixture that cannot be read fails the test
    async fn wasmtimes(
        state: &mut crate::runtime::host::fs_lookups::fixture::State,
        rep: u32,
        name: &str,
        max: usize,
    ) -> Contents {
        let opened = HostDescriptor::open_at(
            &mut state.filesystem(),
            borrow(rep),
            PathFlags::empty(),
            name.to_string(),
            OpenFlags::empty(),
            DescriptorFlags::READ,
        )
        .await
        .map_err(|error| error.downcast().expect("an error code"))?;
        let handle = opened.rep();
        if let Descriptor::Dir(_) = state.ctx().table.get(&opened).expect("opened") {
            // `read-file` reads regular files only.
            state.ctx().table.delete(opened).expect("closed");
            return Err(ErrorCode::IsDirectory);
        }
        let mut data = Vec::new();
        let mut end = false;
        while data.len() < max {
            let (bytes, at_end) = HostDescriptor::read(
                &mut state.filesystem(),
                borrow(handle),
                (max - data.len()) as u64,
                data.len() as u64,
            )
            .await
            .map_err(|error| error.downcast().expect("an error code"))?;
            data.extend_from_slice(&bytes);
            if at_end || bytes.is_empty() {
                end = true;
                break;
            }
        }
        // As `read-file` says: not the end whenever `max` bytes were read.
        end &= data.len() < max;
        state.ctx().table.delete(opened).expect("closed");
        Ok((data, end))
    }

    /// Every kind of name the fixture has (files, directories, symlinks in
    /// and out, a FIFO, names that are paths), at limits below, at and
    /// above the files' sizes: the answers are wasmtime-wasi's, but that a
    /// FIFO is refused, and that a name must be one name.
    #[tokio::test]
    async fn reads_answer_as_wasmtimes() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (mut state, rep) = mount(dir.path());
        big_file(dir.path());
        std::fs::write(dir.path().join("root/pages"), vec![7u8; 8192]).expect("a file");
        std::fs::write(dir.path().join("root/empty"), b"").expect("a file");
        let Descriptor::Dir(root) = state.ctx().table.get(&borrow(rep)).expect("the preopen")
        else {
            panic!("the preopen is a directory");
        };
        let root = root.clone();
        let names = PATHS
            .iter()
            .copied()
            .chain(["big", "pages", "empty", "", ".", ".."]);
        for name in names {
            for max in [0, 1, 4, 5, 6, 4096, 8192, 65_536, 200_000, 1 << 30] {
                let ours = read_file(&root, name, max as u64);
                let plain = !name.is_empty() && name != "." && name != ".." && !name.contains('/');
                if !plain {
                    assert_eq!(ours, Err(ErrorCode::Invalid), "{name:?}");
                    continue;
                }
                if name == "fifo" {
                    assert_eq!(ours, Err(ErrorCode::Unsupported), "{name}");
                    continue;
                }
                let theirs = wasmtimes(&mut state, rep, name, max.min(READ_FILE_MAX_BYTES)).await;
                assert_eq!(ours, theirs, "{name} max {max}");
            }
        }
    }

    /// The portable path gives the Unix path's answers.
    #[test]
    fn the_portable_read_answers_as_the_unix_one() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        for len in [0usize, 1, 4095, 4096, 4097, 65_536, 200_000] {
            let path = dir.path().join(format!("f{len}"));
            std::fs::write(&path, vec![b'x'; len]).expect("a file");
            for max in [0, 1, 4096, len.saturating_sub(1), len, len + 1, 1 << 20] {
                // A size from `fstat` that is right, too small and too big.
                for size in [len as u64, len as u64 / 2, len as u64 * 2 + 1] {
                    let file = File::open(&path).expect("the file");
                    let unix = read_start(&file, size, max).expect("read");
                    let file = File::open(&path).expect("the file");
                    let portable = read_start_portable(&file, size, max).expect("read");
                    assert_eq!(unix, portable, "len {len} max {max} size {size}");
                }
            }
        }
    }
}
