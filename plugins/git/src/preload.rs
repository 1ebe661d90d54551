//! Checking tracked files' stat information ahead of a status, as git's
//! preload-index does.
//!
//! gix's status looks at each tracked file on its own: it verifies every
//! directory on the way (none may be a symlink), then reads the file's
//! metadata by its full path. In the sandbox each of those is a walk of
//! `std::path` components, a look up of the mount in wasi-libc, and two host
//! calls. [`mark_unchanged`] asks for all of them at once instead
//! ([`toolcell_sdk::fs::Directory::metadata_of_paths`]): one host call, which
//! opens each directory once without following symlinks and stats the files
//! on several threads, as git does.
//!
//! An entry whose metadata matches the index, as gix would judge it, is
//! flagged `UPTODATE`, which gix's status then skips; every other entry
//! (changed, missing, racy, a symlink on the way, a name it cannot take) is
//! left for gix to judge in full. The flag only saves work: it is set
//! exactly when gix would find the entry unchanged from its metadata alone.

use std::path::Path;
use std::time::Duration;

use gix::bstr::{BStr, ByteSlice};
use gix::index::entry::{Flags, Mode, Stat, stat};
use toolcell_sdk::fs::{Directory, Kind, Metadata, PendingMetadata};

/// The working tree `workdir` opened for [`start`], when the repository's
/// settings ask for nothing the sandbox cannot show (executable bits) and
/// it can be opened.
pub fn open(repo: &gix::Repository, workdir: &Path) -> Option<Directory> {
    if repo.filesystem_options().ok()?.executable_bit {
        return None;
    }
    Directory::open(workdir).ok()
}

/// The stats of the tracked files of `index` (the index of the working tree
/// `root`), started on the host's threads: the status looks for untracked
/// files meanwhile, as git's preload runs beside its own work.
pub fn start<'d>(
    repo: &gix::Repository,
    index: &gix::index::File,
    root: &'d Directory,
) -> Option<Preload<'d>> {
    let options = repo.stat_options().ok()?;
    let symlinks = repo.filesystem_options().ok()?.symlink;
    let backing = index.path_backing();
    // The entries worth checking, and their paths (in the index's order,
    // which keeps each directory's files together).
    let (positions, paths): (Vec<usize>, Vec<&str>) = index
        .entries()
        .iter()
        .enumerate()
        .filter(|(_, entry)| {
            entry.stage_raw() == 0
                && matches!(
                    entry.mode,
                    Mode::FILE | Mode::FILE_EXECUTABLE | Mode::SYMLINK
                )
                && !entry.flags.intersects(
                    Flags::INTENT_TO_ADD
                        | Flags::UPTODATE
                        | Flags::SKIP_WORKTREE
                        | Flags::ASSUME_VALID
                        | Flags::FSMONITOR_VALID,
                )
        })
        .filter_map(|(position, entry)| Some((position, checkable(entry.path_in(backing))?)))
        .unzip();
    Some(Preload {
        positions,
        pending: root.start_metadata_of_paths(&paths),
        options,
        symlinks,
    })
}

/// Stats started by [`start`].
pub struct Preload<'d> {
    /// The entries statted, by position in the index.
    positions: Vec<usize>,
    pending: PendingMetadata<'d>,
    options: stat::Options,
    symlinks: bool,
}

impl Preload<'_> {
    /// Flags `UPTODATE` on each entry of `index` (a copy of the index the
    /// stats were started for) that gix's status would find unchanged from
    /// its metadata.
    pub fn mark_unchanged(self, index: &mut gix::index::File) {
        let timestamp = index.timestamp();
        let entries = index.entries_mut();
        for (position, metadata) in self.positions.into_iter().zip(self.pending.finish()) {
            let Ok(metadata) = metadata else {
                continue;
            };
            let entry = &mut entries[position];
            if unchanged(entry, &metadata, self.options, self.symlinks)
                .is_some_and(|now| !now.is_racy(timestamp, self.options))
            {
                entry.flags.insert(Flags::UPTODATE);
            }
        }
    }
}

/// The stat information of `metadata` as gix builds it from a WASI stat (no
/// device, inode or owner), when it matches `entry` as gix's status judges
/// it (the same checks, in the same order); the caller checks it is not
/// racy.
fn unchanged(
    entry: &gix::index::Entry,
    metadata: &Metadata,
    options: stat::Options,
    symlinks: bool,
) -> Option<Stat> {
    let (Some(modified), Some(changed)) = (time(metadata.modified), time(metadata.changed)) else {
        return None;
    };
    let (is_file, is_symlink) = (metadata.kind == Kind::File, metadata.kind == Kind::Symlink);
    if metadata.kind == Kind::Directory
        || entry
            .mode
            .change_to_match_fs_with_values(is_file, false, is_symlink, false, symlinks, false)
            .is_some()
    {
        return None;
    }
    let now = Stat {
        mtime: modified,
        ctime: changed,
        dev: 0,
        ino: 0,
        uid: 0,
        gid: 0,
        // Truncated to 32 bits, as git and gix do.
        size: metadata.size as u32,
    };
    (now.matches(&entry.stat, options) && (!entry.id.is_empty_blob() || entry.stat.size == 0))
        .then_some(now)
}

/// A time as the index records one; `None` when unknown or past what 32
/// bits of seconds hold (gix would record zero: leave those to it).
fn time(since_epoch: Option<Duration>) -> Option<stat::Time> {
    let since_epoch = since_epoch?;
    Some(stat::Time {
        secs: u32::try_from(since_epoch.as_secs()).ok()?,
        nsecs: since_epoch.subsec_nanos(),
    })
}

/// `path` as a string, or `None` for a path gix would check for itself:
/// empty components, `.`, `..`, a `.git` anywhere, or bytes that are not
/// UTF-8 (WASI paths are strings).
fn checkable(path: &BStr) -> Option<&str> {
    let path = path.to_str().ok()?;
    let odd = |name: &str| matches!(name, "" | "." | "..") || name.eq_ignore_ascii_case(".git");
    (!path.split('/').any(odd)).then_some(path)
}
