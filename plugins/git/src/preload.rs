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
use toolcell_sdk::fs::{Directory, Kind, Metadata};

/// Flags `UPTODATE` on each entry of `index` (the index of the working tree
/// `workdir`) that gix's status would find unchanged from its metadata.
/// Does nothing when the repository's settings ask for what the sandbox
/// cannot show (executable bits) or `workdir` cannot be opened.
pub fn mark_unchanged(repo: &gix::Repository, index: &mut gix::index::File, workdir: &Path) {
    let (Ok(options), Ok(fs)) = (repo.stat_options(), repo.filesystem_options()) else {
        return;
    };
    if fs.executable_bit {
        return;
    }
    let Ok(root) = Directory::open(workdir) else {
        return;
    };
    let timestamp = index.timestamp();
    let (entries, backing) = index.entries_mut_and_pathbacking();
    // The entries worth checking, and their paths (in the index's order,
    // which keeps each directory's files together).
    let (positions, paths): (Vec<usize>, Vec<&str>) = entries
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
    let found = root.metadata_of_paths(&paths);
    for (position, metadata) in positions.into_iter().zip(found) {
        let Ok(metadata) = metadata else {
            continue;
        };
        let entry = &mut entries[position];
        if unchanged(entry, &metadata, options, fs.symlink)
            .is_some_and(|now| !now.is_racy(timestamp, options))
        {
            entry.flags.insert(Flags::UPTODATE);
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
