//! Toolcell's stand-in for [filetime](https://crates.io/crates/filetime):
//! file timestamps read and set through `std` alone.
//!
//! gix-index takes the index file's modification time with
//! `FileTime::from_last_modification_time`, which filetime 0.2 leaves
//! `unimplemented!()` on every wasm target, WASI included, so any gix call
//! that loads the index (status, diffs, blame) panics in the sandbox. `std`
//! reads and sets file times on WASI as everywhere else, so this crate
//! implements filetime's API on top of it. The git plugin's workspace
//! replaces filetime with it through `[patch.crates-io]`; nothing else that
//! Toolcell builds sees it (see `plugins/git/Cargo.toml`).
//!
//! Times are seconds and nanoseconds since the Unix epoch on every target
//! (filetime uses the Windows epoch for [`FileTime::seconds`] on Windows,
//! which this plugin is never built for).

use std::fmt;
use std::fs::{self, File, FileTimes};
use std::io;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A file timestamp: seconds and nanoseconds since the Unix epoch.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FileTime {
    seconds: i64,
    nanos: u32,
}

impl FileTime {
    /// The Unix epoch.
    pub const fn zero() -> FileTime {
        FileTime {
            seconds: 0,
            nanos: 0,
        }
    }

    /// The current time.
    pub fn now() -> FileTime {
        FileTime::from_system_time(SystemTime::now())
    }

    /// A time `seconds` and `nanos` after the Unix epoch (`seconds` may be
    /// negative).
    pub const fn from_unix_time(seconds: i64, nanos: u32) -> FileTime {
        FileTime {
            seconds: seconds + (nanos / 1_000_000_000) as i64,
            nanos: nanos % 1_000_000_000,
        }
    }

    /// The last modification time in `meta`, or the epoch when the platform
    /// does not record it.
    pub fn from_last_modification_time(meta: &fs::Metadata) -> FileTime {
        meta.modified()
            .map(FileTime::from_system_time)
            .unwrap_or_default()
    }

    /// The last access time in `meta`, or the epoch when the platform does
    /// not record it.
    pub fn from_last_access_time(meta: &fs::Metadata) -> FileTime {
        meta.accessed()
            .map(FileTime::from_system_time)
            .unwrap_or_default()
    }

    /// The creation time in `meta`, when the platform records one.
    pub fn from_creation_time(meta: &fs::Metadata) -> Option<FileTime> {
        meta.created().ok().map(FileTime::from_system_time)
    }

    /// `time` as a file time.
    pub fn from_system_time(time: SystemTime) -> FileTime {
        match time.duration_since(UNIX_EPOCH) {
            Ok(after) => FileTime {
                seconds: i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
                nanos: after.subsec_nanos(),
            },
            Err(before) => {
                let before = before.duration();
                let seconds = i64::try_from(before.as_secs()).unwrap_or(i64::MAX);
                match before.subsec_nanos() {
                    0 => FileTime {
                        seconds: -seconds,
                        nanos: 0,
                    },
                    nanos => FileTime {
                        seconds: -seconds - 1,
                        nanos: 1_000_000_000 - nanos,
                    },
                }
            }
        }
    }

    /// Whole seconds since the Unix epoch.
    pub const fn seconds(&self) -> i64 {
        self.seconds
    }

    /// Whole seconds since the Unix epoch.
    pub const fn unix_seconds(&self) -> i64 {
        self.seconds
    }

    /// The nanoseconds past [`FileTime::seconds`].
    pub const fn nanoseconds(&self) -> u32 {
        self.nanos
    }

    fn to_system_time(self) -> SystemTime {
        let nanos = Duration::from_nanos(u64::from(self.nanos));
        if self.seconds >= 0 {
            UNIX_EPOCH + Duration::from_secs(self.seconds.unsigned_abs()) + nanos
        } else {
            UNIX_EPOCH - Duration::from_secs(self.seconds.unsigned_abs()) + nanos
        }
    }
}

impl From<SystemTime> for FileTime {
    fn from(time: SystemTime) -> FileTime {
        FileTime::from_system_time(time)
    }
}

impl fmt::Display for FileTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:09}s", self.seconds, self.nanos)
    }
}

fn times(atime: Option<FileTime>, mtime: Option<FileTime>) -> FileTimes {
    let mut times = FileTimes::new();
    if let Some(atime) = atime {
        times = times.set_accessed(atime.to_system_time());
    }
    if let Some(mtime) = mtime {
        times = times.set_modified(mtime.to_system_time());
    }
    times
}

/// Sets the access and modification times of the file at `path`.
pub fn set_file_times(path: impl AsRef<Path>, atime: FileTime, mtime: FileTime) -> io::Result<()> {
    set_file_handle_times(
        &File::options().write(true).open(path)?,
        Some(atime),
        Some(mtime),
    )
}

/// Sets the modification time of the file at `path`.
pub fn set_file_mtime(path: impl AsRef<Path>, mtime: FileTime) -> io::Result<()> {
    set_file_handle_times(&File::options().write(true).open(path)?, None, Some(mtime))
}

/// Sets the access time of the file at `path`.
pub fn set_file_atime(path: impl AsRef<Path>, atime: FileTime) -> io::Result<()> {
    set_file_handle_times(&File::options().write(true).open(path)?, Some(atime), None)
}

/// Sets the times of an open file; `None` leaves that time as it is.
pub fn set_file_handle_times(
    file: &File,
    atime: Option<FileTime>,
    mtime: Option<FileTime>,
) -> io::Result<()> {
    file.set_times(times(atime, mtime))
}

/// Sets the times of a symlink itself: not supported through `std`.
pub fn set_symlink_file_times(
    _path: impl AsRef<Path>,
    _atime: FileTime,
    _mtime: FileTime,
) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "setting a symlink's own times is not supported",
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn times_round_trip() {
        for (seconds, nanos) in [(0, 0), (1_700_000_000, 123_456_700), (-1, 0), (-2, 5)] {
            let time = FileTime::from_unix_time(seconds, nanos);
            assert_eq!(FileTime::from_system_time(time.to_system_time()), time);
        }
        assert!(FileTime::from_unix_time(-1, 0) < FileTime::zero());
    }

    #[test]
    fn a_file_has_its_modification_time() {
        let dir = std::env::temp_dir().join(format!("filetime-stand-in-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("file");
        std::fs::write(&path, b"x").unwrap();
        let time = FileTime::from_unix_time(1_700_000_000, 0);
        set_file_mtime(&path, time).unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(FileTime::from_last_modification_time(&meta), time);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
