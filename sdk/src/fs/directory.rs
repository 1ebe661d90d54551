//! Directories opened once and asked about many entries by name.

use std::io;
use std::path::Path;
use std::time::Duration;

use crate::__private::bindings::wasi::clocks::wall_clock::Datetime;
use crate::__private::bindings::wasi::filesystem::preopens;
use crate::__private::bindings::wasi::filesystem::types::{
    Descriptor, DescriptorFlags, DescriptorStat, DescriptorType, ErrorCode, OpenFlags, PathFlags,
};
use crate::__private::files::toolcell::files0_2_0::metadata::{
    PendingStats, start_stat_paths, stat_paths,
};
use crate::__private::files::toolcell::files0_3_0::contents::read_file;

/// The most paths `stat-paths` takes in one call.
const PATHS_PER_CALL: usize = 1 << 16;

/// The longest path `stat-paths` answers.
const MAX_PATH_BYTES: usize = 4096;

/// The most path text `start-stat-paths` takes.
const PENDING_BYTES: usize = 16 << 20;

/// The most `read-file` reads at once.
const READ_FILE_BYTES: usize = 8 << 20;

/// The most one WASI `read` returns.
const READ_CHUNK: usize = 64 << 10;

/// A directory inside a mount, held open so that its entries can be
/// looked at by name.
///
/// `std::fs` resolves every path from its mount: wasi-libc finds the mount,
/// and the host walks the whole path again, for each file. A tool that
/// looks at many files of the same directories (a status of a working tree,
/// say) opens each directory once with [`Directory::open`] or
/// [`Directory::open_child`] and asks [`Directory::metadata`] for each name:
/// one host call per file, with one name to resolve. Or it asks
/// [`Directory::metadata_of_paths`] for all of them in one host call, which
/// Toolcell answers on several threads; or starts them with
/// [`Directory::start_metadata_of_paths`] and does other work meanwhile.
///
/// Containment is the sandbox's, as for `std::fs`: a name is resolved
/// beneath the directory, and nothing outside the mounts can be opened.
pub struct Directory {
    descriptor: Descriptor,
}

/// What [`Directory::metadata`] finds: the entry itself, never what a
/// symlink points at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metadata {
    /// What the entry is.
    pub kind: Kind,
    /// Its size in bytes (for a symlink, the length of its target).
    pub size: u64,
    /// When its contents last changed, since the Unix epoch, if the file
    /// system says.
    pub modified: Option<Duration>,
    /// When its metadata last changed, since the Unix epoch, if the file
    /// system says.
    pub changed: Option<Duration>,
}

/// What [`Directory::read_file`] read of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contents {
    /// The file's first bytes.
    pub bytes: Vec<u8>,
    /// Whether they are the whole file: `false` whenever as many bytes as
    /// asked for were read, even if none follow.
    pub whole: bool,
}

/// An entry of a directory, as [`Directory::entries`] lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Its name.
    pub name: String,
    /// What it is, if the listing says; a symlink is never followed.
    pub kind: Option<Kind>,
}

/// What kind of entry [`Metadata`] (or an [`Entry`]) describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A symbolic link.
    Symlink,
    /// Anything else: a FIFO, a socket, a device.
    Other,
}

impl Directory {
    /// Opens the directory at `path`: absolute, or relative to the first
    /// mount (as [`resolve`](super::resolve) takes it). Symlinks on the way
    /// are followed as any path inside the mounts is.
    pub fn open(path: &Path) -> io::Result<Directory> {
        let path = super::resolve(&path.to_string_lossy())
            .map_err(|error| io::Error::new(io::ErrorKind::NotFound, error.message()))?;
        let (mount, rest) = preopens::get_directories()
            .into_iter()
            .filter_map(|(descriptor, mount)| {
                let rest = path.strip_prefix(&mount).ok()?.to_str()?.to_owned();
                Some((descriptor, rest))
            })
            .min_by_key(|(_, rest)| rest.len())
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("`{}` is in no mounted directory", path.display()),
                )
            })?;
        if rest.is_empty() {
            return Ok(Directory { descriptor: mount });
        }
        open(&mount, PathFlags::SYMLINK_FOLLOW, &rest)
    }

    /// Opens the entry `name` of this directory, which must be a directory
    /// and not a symlink to one.
    pub fn open_child(&self, name: &str) -> io::Result<Directory> {
        open(&self.descriptor, PathFlags::empty(), plain(name)?)
    }

    /// The metadata of the entry `name` of this directory, without following
    /// it if it is a symlink.
    pub fn metadata(&self, name: &str) -> io::Result<Metadata> {
        self.descriptor
            .stat_at(PathFlags::empty(), plain(name)?)
            .map(metadata)
            .map_err(error)
    }

    /// The entries of this directory (never `.` or `..`), each with its kind
    /// as the listing gives it, symlinks not followed: `None` when the file
    /// system does not say (ask [`Directory::metadata`]).
    ///
    /// One host call per entry: `std::fs::read_dir` makes two, and resolves
    /// the directory's path from its mount again. The whole listing is held
    /// in the plugin's memory, so it counts against the plugin's memory limit.
    pub fn entries(&self) -> io::Result<Vec<Entry>> {
        let stream = self.descriptor.read_directory().map_err(error)?;
        let mut entries = Vec::new();
        while let Some(entry) = stream.read_directory_entry().map_err(error)? {
            let kind = match entry.type_ {
                DescriptorType::Unknown => None,
                other => Some(kind(other)),
            };
            entries.push(Entry {
                name: entry.name,
                kind,
            });
        }
        Ok(entries)
    }

    /// The file `name` of this directory, from its start: at most `limit`
    /// bytes. One host call for up to 8 MiB (`toolcell:files` 0.3.0), where
    /// `std::fs::read` makes an open, a read per 64 KiB and a close, and
    /// resolves the path from its mount again; the rest of a bigger file,
    /// if `limit` asks for it, is read 64 KiB a call.
    ///
    /// `name` is one name, as for [`Directory::metadata`]. A symlink is not
    /// followed (an error), and only a regular file is read: a directory, a
    /// FIFO, a socket or a device is an error, and none is opened in a way
    /// that could block.
    pub fn read_file(&self, name: &str, limit: usize) -> io::Result<Contents> {
        let first = limit.min(READ_FILE_BYTES);
        let (mut bytes, end) =
            read_file(&self.descriptor, plain(name)?, first as u64).map_err(error)?;
        if end || bytes.len() < first || limit == first {
            let whole = end && bytes.len() < limit;
            return Ok(Contents { bytes, whole });
        }
        // More than one host call reads: the rest, through a descriptor.
        let file = self
            .descriptor
            .open_at(
                PathFlags::empty(),
                name,
                OpenFlags::empty(),
                DescriptorFlags::READ,
            )
            .map_err(error)?;
        while bytes.len() < limit {
            let wanted = (limit - bytes.len()).min(READ_CHUNK);
            let (more, _) = file
                .read(wanted as u64, bytes.len() as u64)
                .map_err(error)?;
            if more.is_empty() {
                return Ok(Contents { bytes, whole: true });
            }
            bytes.extend_from_slice(&more[..more.len().min(wanted)]);
        }
        Ok(Contents {
            bytes,
            whole: false,
        })
    }

    /// The metadata of each of `paths` beneath this directory, in order, in
    /// one host call that may stat on several threads (`toolcell:files`).
    ///
    /// A path is names separated by `/`, none empty, `.` or `..` (others get
    /// `InvalidInput`). No symlink is followed anywhere: a path through one
    /// is an error, and a path naming one gets the link's own metadata, as
    /// from [`Directory::metadata`]. List paths in sorted order, so that
    /// those of one directory come together.
    pub fn metadata_of_paths(&self, paths: &[impl AsRef<str>]) -> Vec<io::Result<Metadata>> {
        let mut found = Vec::with_capacity(paths.len());
        for part in paths.chunks(PATHS_PER_CALL) {
            let answers = stat_paths(&self.descriptor, &asked(part));
            found.extend(merge(part.iter().map(too_long), answers));
        }
        found
    }

    /// [`Directory::metadata_of_paths`], started on the host's threads: the
    /// plugin goes on while the host stats, and
    /// [`PendingMetadata::finish`] gives the answers (a status can look for
    /// untracked files meanwhile, say). A call holds one at a time: starting
    /// a second before the first is finished or dropped ends the call with
    /// an error. Dropped unfinished, the stats stop.
    pub fn start_metadata_of_paths<P: AsRef<str>>(&self, paths: &[P]) -> PendingMetadata<'_> {
        // What one start takes: so many paths, and so much text.
        let mut bytes = 0;
        let taken = paths
            .iter()
            .take(PATHS_PER_CALL)
            .take_while(|path| {
                bytes += path.as_ref().len().min(MAX_PATH_BYTES + 1);
                bytes <= PENDING_BYTES
            })
            .count();
        let first = &paths[..taken];
        let stats = start_stat_paths(&self.descriptor, &asked(first));
        PendingMetadata {
            dir: self,
            too_long: first.iter().map(|path| too_long(path)).collect(),
            stats,
            rest: paths[first.len()..]
                .iter()
                .map(|path| path.as_ref().to_owned())
                .collect(),
        }
    }
}

/// Stats started by [`Directory::start_metadata_of_paths`].
pub struct PendingMetadata<'d> {
    dir: &'d Directory,
    /// Which of the paths started were too long to ask the host about.
    too_long: Vec<bool>,
    stats: PendingStats,
    /// The paths left for `finish`: past what one start takes.
    rest: Vec<String>,
}

impl PendingMetadata<'_> {
    /// The metadata of each path, in order, as
    /// [`Directory::metadata_of_paths`] gives it; waits for the stats still
    /// running.
    pub fn finish(self) -> Vec<io::Result<Metadata>> {
        let mut found = merge(self.too_long, PendingStats::finish(self.stats));
        found.extend(self.dir.metadata_of_paths(&self.rest));
        found
    }
}

/// The paths of `part` the host answers (up to 4 KiB).
fn asked(part: &[impl AsRef<str>]) -> Vec<String> {
    part.iter()
        .filter(|path| !too_long(path))
        .map(|path| path.as_ref().to_owned())
        .collect()
}

/// Whether `path` is longer than the host answers.
fn too_long(path: &impl AsRef<str>) -> bool {
    path.as_ref().len() > MAX_PATH_BYTES
}

/// The host's `answers` to the paths [`asked`] took, with those too long
/// (flagged in order by `too_long`) answered here.
fn merge(
    too_long: impl IntoIterator<Item = bool>,
    answers: Vec<Result<DescriptorStat, ErrorCode>>,
) -> Vec<io::Result<Metadata>> {
    let mut answers = answers.into_iter();
    too_long
        .into_iter()
        .map(|long| {
            if long {
                Err(error(ErrorCode::NameTooLong))
            } else {
                match answers.next() {
                    Some(answer) => answer.map(metadata).map_err(error),
                    None => Err(io::Error::other("the host answered too few paths")),
                }
            }
        })
        .collect()
}

/// `name` if it is one plain name: not empty, `.` or `..`, and without `/`.
fn plain(name: &str) -> io::Result<&str> {
    if matches!(name, "" | "." | "..") || name.contains('/') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{name}` is not the name of a directory entry"),
        ));
    }
    Ok(name)
}

fn open(parent: &Descriptor, follow: PathFlags, path: &str) -> io::Result<Directory> {
    parent
        .open_at(follow, path, OpenFlags::DIRECTORY, DescriptorFlags::READ)
        .map(|descriptor| Directory { descriptor })
        .map_err(error)
}

fn metadata(stat: DescriptorStat) -> Metadata {
    let time = |datetime: Option<Datetime>| {
        datetime.map(|time| Duration::new(time.seconds, time.nanoseconds))
    };
    Metadata {
        kind: kind(stat.type_),
        size: stat.size,
        modified: time(stat.data_modification_timestamp),
        changed: time(stat.status_change_timestamp),
    }
}

fn kind(kind: DescriptorType) -> Kind {
    match kind {
        DescriptorType::RegularFile => Kind::File,
        DescriptorType::Directory => Kind::Directory,
        DescriptorType::SymbolicLink => Kind::Symlink,
        _ => Kind::Other,
    }
}

/// A WASI error as `std::io` names it.
fn error(code: ErrorCode) -> io::Error {
    let kind = match code {
        ErrorCode::NoEntry => io::ErrorKind::NotFound,
        ErrorCode::Access | ErrorCode::NotPermitted => io::ErrorKind::PermissionDenied,
        ErrorCode::NotDirectory => io::ErrorKind::NotADirectory,
        ErrorCode::IsDirectory => io::ErrorKind::IsADirectory,
        ErrorCode::Invalid => io::ErrorKind::InvalidInput,
        ErrorCode::InsufficientMemory => io::ErrorKind::OutOfMemory,
        ErrorCode::Unsupported => io::ErrorKind::Unsupported,
        _ => io::ErrorKind::Other,
    };
    io::Error::new(kind, format!("{code:?}"))
}

#[cfg(test)]
mod tests {
    use super::plain;

    #[test]
    fn only_plain_names_are_entries() {
        for name in ["a", "a b", ".git", "ünï", "..."] {
            assert_eq!(plain(name).unwrap(), name);
        }
        for name in ["", ".", "..", "a/b", "/a", "a/"] {
            let error = plain(name).unwrap_err();
            assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput, "{name}");
        }
    }
}
