//! File access for the searches.
//!
//! [`Fs`] is what the walker and the tools need from a file system: open a
//! directory by path, list it, open its entries by name, read a file. There
//! are two implementations: [`StdFs`] over `std::fs`, used natively (the
//! benchmark's baseline and the unit tests), and, inside the sandbox,
//! `WasiFs` over the raw WASI 0.2 filesystem interface.
//!
//! `WasiFs` exists because every WASI call crosses from the guest into
//! wasmtime and costs far more than the system call behind it. It does what
//! `std::fs` on wasm32-wasip2 cannot: it opens a file relative to the
//! directory handle the walk already holds (one path component, not a path
//! resolved again from the mount), takes each entry's kind from the listing,
//! and reads a small file with one call. Containment is wasmtime's, as for any
//! WASI access: it refuses `..` out of a mount and symlinks that point out.

use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

/// What a directory entry or path is. Symlinks are reported as such by
/// [`Fs::list`], never followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (not followed).
    Symlink,
    /// Anything else: a socket, a device, a FIFO.
    Other,
}

/// One entry of a directory listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The entry's name (one path component).
    pub name: String,
    /// What it is; a symlink is not followed.
    pub kind: Kind,
}

/// What [`Fs::stat`] tells about a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    /// What it is.
    pub kind: Kind,
    /// Its size in bytes.
    pub size: u64,
}

/// The file system operations the searches use.
///
/// Paths given to it are absolute and lexically normal (see [`normalize`]);
/// names are single path components taken from a listing.
pub trait Fs {
    /// An open directory.
    type Dir;
    /// An open file.
    type File: Read;

    /// Opens the directory at `path`, following symlinks.
    fn open_dir(&self, path: &Path) -> io::Result<Self::Dir>;
    /// What `path` is and its size, following symlinks.
    fn stat(&self, path: &Path) -> io::Result<Meta>;
    /// The entries of `dir`, in no particular order, without `.` and `..`.
    /// Entries whose names are not UTF-8 are left out.
    fn list(&self, dir: &Self::Dir) -> io::Result<Vec<Entry>>;
    /// Opens the subdirectory `name` of `dir`, without following a symlink.
    fn sub_dir(&self, dir: &Self::Dir, name: &str) -> io::Result<Self::Dir>;
    /// Opens the file `name` in `dir` for reading, without following a symlink.
    fn open(&self, dir: &Self::Dir, name: &str) -> io::Result<Self::File>;
    /// Opens the file at `path` for reading, following symlinks.
    fn open_path(&self, path: &Path) -> io::Result<Self::File>;

    /// Up to `limit` bytes of the file `name` in `dir` from its start,
    /// without following a symlink, and whether the end of the file was
    /// reached (`false` whenever `limit` bytes were read).
    fn read_file(&self, dir: &Self::Dir, name: &str, limit: usize) -> io::Result<(Vec<u8>, bool)> {
        let mut file = self.open(dir, name)?;
        let mut buf = Vec::new();
        let end = self.read_up_to(&mut file, &mut buf, limit)?;
        Ok((buf, end))
    }

    /// Appends up to `limit` more bytes of `file` to `buf`; returns `true`
    /// when the end of the file was reached, `false` when more may follow.
    fn read_up_to(
        &self,
        file: &mut Self::File,
        buf: &mut Vec<u8>,
        limit: usize,
    ) -> io::Result<bool> {
        let wanted = u64::try_from(limit).unwrap_or(u64::MAX);
        let read = file.by_ref().take(wanted).read_to_end(buf)?;
        Ok(read < limit)
    }
}

/// Lexically normalises an absolute path: removes `.` components and
/// applies `..` to the component before it (`..` at the root stays at the
/// root). Symlinks are not consulted: the sandbox resolves them itself and
/// refuses those that point out of a mount.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// [`Fs`] over `std::fs`, for native builds.
#[derive(Clone, Copy, Debug, Default)]
pub struct StdFs;

impl Fs for StdFs {
    type Dir = PathBuf;
    type File = std::fs::File;

    fn open_dir(&self, path: &Path) -> io::Result<PathBuf> {
        if std::fs::metadata(path)?.is_dir() {
            Ok(path.to_path_buf())
        } else {
            Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                "not a directory",
            ))
        }
    }

    fn stat(&self, path: &Path) -> io::Result<Meta> {
        let meta = std::fs::metadata(path)?;
        Ok(Meta {
            kind: kind_of(meta.file_type()),
            size: meta.len(),
        })
    }

    fn list(&self, dir: &PathBuf) -> io::Result<Vec<Entry>> {
        let mut entries = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            let kind = kind_of(entry.file_type()?);
            entries.push(Entry { name, kind });
        }
        Ok(entries)
    }

    fn sub_dir(&self, dir: &PathBuf, name: &str) -> io::Result<PathBuf> {
        Ok(dir.join(name))
    }

    fn open(&self, dir: &PathBuf, name: &str) -> io::Result<std::fs::File> {
        std::fs::File::open(dir.join(name))
    }

    fn open_path(&self, path: &Path) -> io::Result<std::fs::File> {
        std::fs::File::open(path)
    }
}

fn kind_of(file_type: std::fs::FileType) -> Kind {
    if file_type.is_symlink() {
        Kind::Symlink
    } else if file_type.is_dir() {
        Kind::Dir
    } else if file_type.is_file() {
        Kind::File
    } else {
        Kind::Other
    }
}

#[cfg(all(target_os = "wasi", target_env = "p2"))]
pub use wasi::WasiFs;

#[cfg(all(target_os = "wasi", target_env = "p2"))]
mod wasi {
    use std::io::{self, Read};
    use std::path::{Path, PathBuf};

    use wasip2::filesystem::preopens;
    use wasip2::filesystem::types::{
        Descriptor, DescriptorFlags, DescriptorType, ErrorCode, OpenFlags, PathFlags,
    };

    use super::{Entry, Fs, Kind, Meta};

    /// `toolcell:files/contents` (0.3.0), the host's read of a file in one
    /// call, on `wasip2`'s WASI types (the SDK's binding is on its own). A
    /// world of this plugin's own, as the SDK's is: two bindings of one
    /// world in one component would give it two sections of the same name.
    #[allow(unsafe_code, missing_docs, clippy::all)]
    mod files {
        toolcell_sdk::wit_bindgen::generate!({
            path: "../../wit",
            inline: "
                package toolcell-plugin:search;
                world files {
                    import toolcell:files/contents@0.3.0;
                }
            ",
            world: "toolcell-plugin:search/files",
            runtime_path: "::toolcell_sdk::wit_bindgen::rt",
            with: {
                "toolcell:files/contents@0.3.0": generate,
                "wasi:filesystem/types@0.2.12": wasip2::filesystem::types,
                "wasi:io/streams@0.2.12": wasip2::io::streams,
                "wasi:io/error@0.2.12": wasip2::io::error,
                "wasi:io/poll@0.2.12": wasip2::io::poll,
                "wasi:clocks/wall-clock@0.2.12": wasip2::clocks::wall_clock,
            },
        });
    }

    /// The most `read-file` reads of a file (the host's cap).
    const READ_FILE_MAX: usize = 8 << 20;

    /// The most wasmtime 48 returns from one `read` (its
    /// `MAX_READ_SIZE_ALLOC`): asking for more gains nothing.
    const CHUNK: usize = 64 * 1024;

    /// A short read of a multiple of this many bytes may not be the end.
    const PAGE: usize = 4096;

    /// [`Fs`] over the WASI 0.2 filesystem interface, inside the sandbox.
    pub struct WasiFs {
        preopens: Vec<(Descriptor, PathBuf)>,
    }

    /// An open WASI file and the offset of the next read.
    pub struct WasiFile {
        descriptor: Descriptor,
        offset: u64,
    }

    impl WasiFs {
        /// The mounts of this call, as WASI preopens.
        pub fn new() -> WasiFs {
            let preopens = preopens::get_directories()
                .into_iter()
                .map(|(descriptor, path)| (descriptor, PathBuf::from(path)))
                .collect();
            WasiFs { preopens }
        }

        /// The mount holding `path` (the longest match, component-wise) and
        /// the rest of the path relative to it. A path in no mount is
        /// `NotFound`: inside the sandbox it does not exist.
        fn locate(&self, path: &Path) -> io::Result<(&Descriptor, String)> {
            let (descriptor, rest) = self
                .preopens
                .iter()
                .filter_map(|(descriptor, mount)| {
                    path.strip_prefix(mount).ok().map(|rest| (descriptor, rest))
                })
                .max_by_key(|(_, rest)| std::cmp::Reverse(rest.components().count()))
                .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "not in any mount"))?;
            let rest = rest
                .to_str()
                .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not UTF-8"))?;
            let rest = if rest.is_empty() { "." } else { rest };
            Ok((descriptor, rest.to_string()))
        }
    }

    impl Default for WasiFs {
        fn default() -> WasiFs {
            WasiFs::new()
        }
    }

    impl Fs for WasiFs {
        type Dir = Descriptor;
        type File = WasiFile;

        fn open_dir(&self, path: &Path) -> io::Result<Descriptor> {
            let (mount, rest) = self.locate(path)?;
            mount
                .open_at(
                    PathFlags::SYMLINK_FOLLOW,
                    &rest,
                    OpenFlags::DIRECTORY,
                    DescriptorFlags::READ,
                )
                .map_err(error)
        }

        fn stat(&self, path: &Path) -> io::Result<Meta> {
            let (mount, rest) = self.locate(path)?;
            let stat = mount
                .stat_at(PathFlags::SYMLINK_FOLLOW, &rest)
                .map_err(error)?;
            Ok(Meta {
                kind: kind_of(stat.type_),
                size: stat.size,
            })
        }

        fn list(&self, dir: &Descriptor) -> io::Result<Vec<Entry>> {
            let stream = dir.read_directory().map_err(error)?;
            let mut entries = Vec::new();
            loop {
                match stream.read_directory_entry() {
                    Ok(Some(entry)) => entries.push(Entry {
                        name: entry.name,
                        kind: kind_of(entry.type_),
                    }),
                    Ok(None) => return Ok(entries),
                    // A name that is not UTF-8: skip it, as `StdFs` does.
                    Err(ErrorCode::IllegalByteSequence) => {}
                    Err(code) => return Err(error(code)),
                }
            }
        }

        fn sub_dir(&self, dir: &Descriptor, name: &str) -> io::Result<Descriptor> {
            dir.open_at(
                PathFlags::empty(),
                name,
                OpenFlags::DIRECTORY,
                DescriptorFlags::READ,
            )
            .map_err(error)
        }

        fn open(&self, dir: &Descriptor, name: &str) -> io::Result<WasiFile> {
            let descriptor = dir
                .open_at(
                    PathFlags::empty(),
                    name,
                    OpenFlags::empty(),
                    DescriptorFlags::READ,
                )
                .map_err(error)?;
            Ok(WasiFile {
                descriptor,
                offset: 0,
            })
        }

        fn open_path(&self, path: &Path) -> io::Result<WasiFile> {
            let (mount, rest) = self.locate(path)?;
            let descriptor = mount
                .open_at(
                    PathFlags::SYMLINK_FOLLOW,
                    &rest,
                    OpenFlags::empty(),
                    DescriptorFlags::READ,
                )
                .map_err(error)?;
            Ok(WasiFile {
                descriptor,
                offset: 0,
            })
        }

        /// One host call (`toolcell:files/contents`) in place of an
        /// `open-at`, a `read` and a drop; a `limit` above what the host
        /// reads at once goes the long way.
        fn read_file(
            &self,
            dir: &Descriptor,
            name: &str,
            limit: usize,
        ) -> io::Result<(Vec<u8>, bool)> {
            if limit > READ_FILE_MAX {
                let mut file = self.open(dir, name)?;
                let mut buf = Vec::new();
                let end = self.read_up_to(&mut file, &mut buf, limit)?;
                return Ok((buf, end));
            }
            files::toolcell::files0_3_0::contents::read_file(dir, name, limit as u64).map_err(error)
        }

        /// Reads in `CHUNK`s straight into `buf` (the first chunk becomes
        /// `buf` when it is empty).
        ///
        /// A read shorter than asked for, and not a whole number of pages,
        /// is taken as the end of the file: that saves the empty read that
        /// would otherwise end every file (measured: about 4% of a grep's
        /// CPU time, the same as asking `stat` for the size first).
        /// `pread` on a regular file returns less only at its end, and
        /// wasmtime makes one `pread` per read; a short read of whole pages,
        /// which is how a network or FUSE file system or a host with a
        /// smaller read cap would cut one, is confirmed by reading on.
        fn read_up_to(
            &self,
            file: &mut WasiFile,
            buf: &mut Vec<u8>,
            limit: usize,
        ) -> io::Result<bool> {
            let mut left = limit;
            while left > 0 {
                let wanted = left.min(CHUNK);
                let (data, _) = file
                    .descriptor
                    .read(wanted as u64, file.offset)
                    .map_err(error)?;
                let got = data.len().min(wanted);
                if got == 0 {
                    return Ok(true);
                }
                file.offset += got as u64;
                left -= got;
                if buf.is_empty() {
                    *buf = data;
                } else {
                    buf.extend_from_slice(&data[..got]);
                }
                if got < wanted && got % PAGE != 0 {
                    return Ok(true);
                }
            }
            Ok(false)
        }
    }

    impl Read for WasiFile {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let wanted = buf.len().min(CHUNK);
            let (data, _) = self
                .descriptor
                .read(wanted as u64, self.offset)
                .map_err(error)?;
            let got = data.len().min(wanted);
            buf[..got].copy_from_slice(&data[..got]);
            self.offset += got as u64;
            Ok(got)
        }
    }

    fn kind_of(kind: DescriptorType) -> Kind {
        match kind {
            DescriptorType::RegularFile => Kind::File,
            DescriptorType::Directory => Kind::Dir,
            DescriptorType::SymbolicLink => Kind::Symlink,
            _ => Kind::Other,
        }
    }

    /// A WASI error as the `io::Error` that `std::fs` would have returned.
    fn error(code: ErrorCode) -> io::Error {
        let kind = match code {
            ErrorCode::NoEntry => io::ErrorKind::NotFound,
            ErrorCode::Access | ErrorCode::NotPermitted => io::ErrorKind::PermissionDenied,
            ErrorCode::NotDirectory => io::ErrorKind::NotADirectory,
            ErrorCode::IsDirectory => io::ErrorKind::IsADirectory,
            ErrorCode::Exist => io::ErrorKind::AlreadyExists,
            ErrorCode::Invalid => io::ErrorKind::InvalidInput,
            ErrorCode::InsufficientMemory => io::ErrorKind::OutOfMemory,
            ErrorCode::Unsupported => io::ErrorKind::Unsupported,
            _ => io::ErrorKind::Other,
        };
        io::Error::new(kind, code.message())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_is_lexical() {
        let cases = [
            ("/a/b/../c", "/a/c"),
            ("/a/./b/", "/a/b"),
            ("/a/..", "/"),
            ("/..", "/"),
            ("/../../etc", "/etc"),
            ("/a/b/../../..", "/"),
        ];
        for (input, expected) in cases {
            assert_eq!(normalize(Path::new(input)), Path::new(expected), "{input}");
        }
    }

    #[test]
    fn read_up_to_reports_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"0123456789").unwrap();
        for (limit, eof, len) in [
            (4, false, 4),
            (10, false, 10),
            (11, true, 10),
            (100, true, 10),
        ] {
            let mut file = StdFs.open_path(&path).unwrap();
            let mut buf = Vec::new();
            let at_end = StdFs.read_up_to(&mut file, &mut buf, limit).unwrap();
            assert_eq!((at_end, buf.len()), (eof, len), "limit {limit}");
        }
    }
}
