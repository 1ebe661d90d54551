//! `wasi:filesystem`'s `read` of a file descriptor, without wasmtime-wasi's
//! zeroing of the buffer first.
//!
//! wasmtime-wasi answers every `read` with a buffer of the length asked for
//! (at most 64 KiB), zeroed, then `pread` into it. A guest reading files whole
//! asks for a full 64 KiB each time, so each read paid for zeroing 64 KiB
//! whatever the file's size: a search of a 68 MB, 4,500-file tree spent
//! about 5% of its time in `memset` (a `perf` profile of the grep benchmark,
//! 2026-11-29). On Unix, [`read_at`] reads into the buffer's spare capacity
//! instead (rustix's `pread`), so the bytes the guest gets are only ever the
//! file's. Elsewhere it zeroes as wasmtime-wasi does, with the same answers.
//!
//! Everything else is wasmtime-wasi 48's: at most 64 KiB per read, end of
//! file only when nothing was read, `bad-descriptor` for a directory, the
//! same error codes. The read is done in place, on the call's thread, as the
//! call's context lets every file operation be (see `sandbox::wasi_ctx`).

use std::fs::File;

use anyhow::Result;
use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::WasiView;
use wasmtime_wasi::filesystem::Descriptor;
use wasmtime_wasi::p2::bindings::filesystem::types::ErrorCode;

use crate::runtime::sandbox::FILESYSTEM_TYPES;

/// The most one `read` returns: wasmtime-wasi's `MAX_READ_SIZE_ALLOC`.
const MAX_READ: usize = 64 * 1024;

/// Replaces `[method]descriptor.read` in `linker`, which already has WASI.
pub fn add_to_linker<T: WasiView + 'static>(linker: &mut Linker<T>) -> Result<()> {
    type Args = (Resource<Descriptor>, u64, u64);
    linker.allow_shadowing(true);
    linker.instance(FILESYSTEM_TYPES)?.func_wrap(
        "[method]descriptor.read",
        |mut store: StoreContextMut<'_, T>, (descriptor, len, offset): Args| {
            let descriptor = store.data_mut().ctx().table.get(&descriptor)?;
            Ok((read(descriptor, len, offset),))
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

/// `read(len, offset)` of `descriptor`: up to `len` bytes (at most 64 KiB)
/// from `offset`, and whether the end was reached (nothing was read).
fn read(descriptor: &Descriptor, len: u64, offset: u64) -> Result<(Vec<u8>, bool), ErrorCode> {
    let Descriptor::File(file) = descriptor else {
        return Err(ErrorCode::BadDescriptor);
    };
    let len = usize::try_from(len).unwrap_or(usize::MAX).min(MAX_READ);
    let buffer = read_at(&file.file, len, offset).map_err(ErrorCode::from)?;
    let end = buffer.is_empty();
    Ok((buffer, end))
}

/// Up to `len` bytes of `file` from `offset`, in one `pread`; the buffer is
/// never zeroed.
#[cfg(unix)]
fn read_at(file: &File, len: usize, offset: u64) -> std::io::Result<Vec<u8>> {
    let mut buffer = Vec::with_capacity(len);
    if len == 0 {
        // Still asked of the OS, which may refuse the offset.
        rustix::io::pread(file, &mut [0u8; 0], offset)?;
    } else {
        rustix::io::pread(file, rustix::buffer::spare_capacity(&mut buffer), offset)?;
    }
    Ok(buffer)
}

/// Up to `len` bytes of `file` from `offset`, in one read, into a zeroed
/// buffer: wasmtime-wasi's way.
#[cfg(not(unix))]
fn read_at(file: &File, len: usize, offset: u64) -> std::io::Result<Vec<u8>> {
    use std::os::windows::fs::FileExt;

    let mut buffer = vec![0; len];
    let read = file.seek_read(&mut buffer, offset)?;
    buffer.truncate(read);
    Ok(buffer)
}

#[cfg(all(test, unix))]
mod tests {
    use wasmtime_wasi::filesystem::WasiFilesystemView;
    use wasmtime_wasi::p2::bindings::filesystem::types::{
        DescriptorFlags, HostDescriptor, OpenFlags, PathFlags,
    };

    use super::*;
    use crate::runtime::host::fs_lookups::fixture::{big_file, borrow, mount};

    /// Around the fixture's 5-byte file, 64 KiB (the cap) and the big file.
    const LENGTHS: [u64; 11] = [
        0,
        1,
        4,
        5,
        6,
        4096,
        65_535,
        65_536,
        65_537,
        200_000,
        u64::MAX,
    ];
    const OFFSETS: [u64; 10] = [0, 1, 4, 5, 6, 65_536, 199_999, 200_000, 1 << 40, u64::MAX];

    /// Our reads answer as wasmtime-wasi's: every length and offset around
    /// a file's end and the 64 KiB cap, and a directory.
    #[tokio::test]
    async fn reads_answer_as_wasmtimes() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (mut state, rep) = mount(dir.path());
        big_file(dir.path());
        for (path, directory) in [("file", false), ("big", false), ("dir", true)] {
            let flags = if directory {
                OpenFlags::DIRECTORY
            } else {
                OpenFlags::empty()
            };
            let opened = HostDescriptor::open_at(
                &mut state.filesystem(),
                borrow(rep),
                PathFlags::empty(),
                path.to_string(),
                flags,
                DescriptorFlags::READ,
            )
            .await
            .expect("opened");
            let handle = opened.rep();
            for len in LENGTHS {
                for offset in OFFSETS {
                    let ours = read(
                        state.ctx().table.get(&borrow(handle)).expect("open"),
                        len,
                        offset,
                    );
                    let theirs =
                        HostDescriptor::read(&mut state.filesystem(), borrow(handle), len, offset)
                            .await
                            .map_err(|error| error.downcast().expect("an error code"));
                    assert_eq!(ours, theirs, "{path} len {len} offset {offset}");
                }
            }
            state.ctx().table.delete(opened).expect("closed");
        }
    }
}
