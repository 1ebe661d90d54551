//! Checking tracked files' stat information ahead of a status, as git's
//! preload-index does.
//!
//! gix's status looks at each tracked file on its own: it verifies every
//! directory on the way (none may be a symlink), then reads the file's
//! metadata by its full path. In the sandbox each of those is a walk of
//! `std::path` components, a look up of the mount in wasi-libc, and two host
//! calls. [`mark_unchanged`] does the same check per directory instead: it
//! opens each directory of the index once, without following symlinks, and
//! asks for each file's metadata by name relative to it
//! ([`toolcell_sdk::fs::Directory`]), one host call per file. An entry whose metadata matches the index, as gix would judge it, is
//! flagged `UPTODATE`, which gix's status then skips; every other entry
//! (changed, missing, racy, a symlink on the way, a name it cannot take) is
//! left for gix to judge in full. The flag only saves work: it is set
//! exactly when gix would find the entry unchanged from its metadata alone.

use std::collections::HashMap;
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
    let mut directories = HashMap::new();
    let (entries, backing) = index.entries_mut_and_pathbacking();
    for entry in entries {
        if entry.stage_raw() != 0
            || !matches!(
                entry.mode,
                Mode::FILE | Mode::FILE_EXECUTABLE | Mode::SYMLINK
            )
            || entry.flags.intersects(
                Flags::INTENT_TO_ADD
                    | Flags::UPTODATE
                    | Flags::SKIP_WORKTREE
                    | Flags::ASSUME_VALID
                    | Flags::FSMONITOR_VALID,
            )
        {
            continue;
        }
        let Some((directory, name)) = split(entry.path_in(backing)) else {
            continue;
        };
        let parent = match directory {
            None => Some(&root),
            Some(directory) => open_directory(&mut directories, &root, directory),
        };
        let Some(Ok(metadata)) = parent.map(|parent| parent.metadata(name)) else {
            continue;
        };
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

/// `path` split into its directory (`None` at the top) and its name, or
/// `None` for a path gix would check for itself: empty components, `.`,
/// `..`, a `.git` anywhere, or bytes that are not UTF-8 (WASI names are
/// strings).
fn split(path: &BStr) -> Option<(Option<&str>, &str)> {
    let path = path.to_str().ok()?;
    if path
        .split('/')
        .any(|part| matches!(part, "" | "." | "..") || part.eq_ignore_ascii_case(".git"))
    {
        return None;
    }
    Some(match path.rsplit_once('/') {
        Some((directory, name)) => (Some(directory), name),
        None => (None, path),
    })
}

/// `directory` (relative to the working tree `root`), opened from its
/// parent without following symlinks, and kept in `open` with its parents
/// (`None` for one that could not be opened): gix counts a file under a
/// symlinked directory as deleted, and that judgment stays with gix.
fn open_directory<'a>(
    open: &'a mut HashMap<String, Option<Directory>>,
    root: &Directory,
    directory: &str,
) -> Option<&'a Directory> {
    if !open.contains_key(directory) {
        let opened = match directory.rsplit_once('/') {
            None => root.open_child(directory).ok(),
            Some((parent, name)) => {
                open_directory(open, root, parent).and_then(|parent| parent.open_child(name).ok())
            }
        };
        open.insert(directory.to_owned(), opened);
    }
    open.get(directory)?.as_ref()
}
