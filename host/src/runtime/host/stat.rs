//! A file's metadata as wasmtime-wasi's `stat-at` reports it, for the host's
//! own filesystem calls ([`super::fs_lookups`], [`super::stat_paths`]), so
//! that their answers are wasmtime-wasi's on every OS: the link count and
//! the device types come from each OS family's own metadata.

use std::fs::File;
use std::sync::Arc;

use cap_primitives::fs::{FileType, Metadata};
use wasmtime::component::{Resource, ResourceTable};
use wasmtime_wasi::filesystem::Descriptor;
use wasmtime_wasi::p2::bindings::clocks::wall_clock::Datetime;
use wasmtime_wasi::p2::bindings::filesystem::types::{DescriptorStat, DescriptorType};

/// The directory `descriptor` names; `None` if it is a file. A handle that
/// is not this call's is an error, which traps the guest, as in
/// wasmtime-wasi.
pub(crate) fn directory(
    table: &ResourceTable,
    descriptor: &Resource<Descriptor>,
) -> wasmtime::Result<Option<Arc<File>>> {
    Ok(match table.get(descriptor)? {
        Descriptor::Dir(dir) => Some(dir.dir.clone()),
        Descriptor::File(_) => None,
    })
}

/// `meta` as wasmtime-wasi's `stat-at` reports it. (Its "status change"
/// time is the creation time.)
pub(crate) fn descriptor_stat(meta: &Metadata) -> DescriptorStat {
    let time = |time: std::io::Result<cap_primitives::time::SystemTime>| {
        let since = time
            .ok()?
            .into_std()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        Some(Datetime {
            seconds: since.as_secs(),
            nanoseconds: since.subsec_nanos(),
        })
    };
    DescriptorStat {
        type_: descriptor_type(meta.file_type()),
        link_count: link_count(meta),
        size: meta.len(),
        data_access_timestamp: time(meta.accessed()),
        data_modification_timestamp: time(meta.modified()),
        status_change_timestamp: time(meta.created()),
    }
}

/// A file type as wasmtime-wasi reports it (a FIFO or a socket is unknown).
fn descriptor_type(kind: FileType) -> DescriptorType {
    if kind.is_dir() {
        DescriptorType::Directory
    } else if kind.is_symlink() {
        DescriptorType::SymbolicLink
    } else if kind.is_file() {
        DescriptorType::RegularFile
    } else {
        device_type(kind)
    }
}

#[cfg(unix)]
fn link_count(meta: &Metadata) -> u64 {
    cap_primitives::fs::MetadataExt::nlink(meta)
}

#[cfg(unix)]
fn device_type(kind: FileType) -> DescriptorType {
    use cap_primitives::fs::FileTypeExt;
    if kind.is_block_device() {
        DescriptorType::BlockDevice
    } else if kind.is_char_device() {
        DescriptorType::CharacterDevice
    } else {
        DescriptorType::Unknown
    }
}

#[cfg(windows)]
fn link_count(meta: &Metadata) -> u64 {
    // Metadata read through a handle always has it, as wasmtime-wasi's has.
    cap_primitives::fs::_WindowsByHandle::number_of_links(meta).map_or(1, u64::from)
}

#[cfg(windows)]
fn device_type(kind: FileType) -> DescriptorType {
    use cap_primitives::fs::_WindowsFileTypeExt;
    if kind.is_char_device() {
        DescriptorType::CharacterDevice
    } else {
        DescriptorType::Unknown
    }
}
