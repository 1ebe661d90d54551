//! The untracked files of a working tree, as `git status` lists them:
//! not ignored, a wholly untracked directory as one `dir/`, and a directory
//! with no untracked file in it (empty, or all ignored) not at all.
//!
//! gix's directory walk finds the same, but in the sandbox each entry it
//! reads costs two host calls and a path resolved again from the mount, and
//! each name it classifies is a binary search of the whole index: on the
//! git project that walk was half of a status. [`find`] lists each directory
//! once through an open handle ([`Directory::entries`], one host call per
//! entry), compares the listing with the index's entries of that directory
//! (one pass over their sorted run), and asks gix's ignore rules only about
//! the names that are not tracked.
//!
//! It answers for the usual working tree and gives up (saying why; gix's
//! walk answers instead) on anything else: a case-insensitive or
//! Unicode-precomposing repository, a sparse index, a tracked path that is
//! now another kind of entry, a nested repository, something that is not a file, directory or
//! symlink, an entry it cannot read, or a tree deeper than [`MAX_DEPTH`].

use std::path::Path;

use foldhash::HashMap;
use gix::bstr::{BStr, BString, ByteSlice, ByteVec};
use gix::dir::entry::{Kind as DiskKind, Status};
use gix::index::State;
use gix::index::entry::Mode;
use toolcell_sdk::fs::{Directory, Entry, Kind};

/// The deepest directory the walk goes into before it gives up.
const MAX_DEPTH: usize = 256;

/// Why the walk leaves the answer to gix's.
pub type GiveUp = String;

/// The untracked entries of the working tree `workdir` of `repo`, whose
/// index is `index`, or why gix's walk must answer instead.
pub fn find(
    repo: &gix::Repository,
    index: &State,
    workdir: &Path,
) -> Result<Vec<gix::dir::Entry>, GiveUp> {
    let config = repo.config_snapshot();
    if repo
        .filesystem_options()
        .map_or(true, |options| options.ignore_case)
        || config.boolean("core.precomposeUnicode") == Some(true)
    {
        return Err("the repository ignores case or precomposes Unicode".to_owned());
    }
    if index.is_sparse() {
        return Err("the index is sparse".to_owned());
    }
    let excludes = repo
        .excludes(
            index,
            None,
            gix::worktree::stack::state::ignore::Source::WorktreeThenIdMappingIfNotSkipped,
        )
        .map_err(|e| format!("cannot read the ignore rules: {e}"))?;
    let mut walk = Walk {
        index,
        excludes,
        found: Vec::new(),
    };
    let root =
        Directory::open(workdir).map_err(|e| format!("cannot open the working tree: {e}"))?;
    let mut prefix = BString::default();
    walk.tracked_directory(&root, &mut prefix, 0..index.entries().len(), 0)?;
    Ok(walk.found)
}

/// What the index has under one name of a directory.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tracked {
    /// An entry of this mode.
    Entry(Mode),
    /// Entries below it: a directory.
    Directory,
}

struct Walk<'a> {
    index: &'a State,
    excludes: gix::AttributeStack<'a>,
    found: Vec<gix::dir::Entry>,
}

impl Walk<'_> {
    /// Walks `dir` (at `prefix`, empty or ending in `/`), whose index
    /// entries are `range`.
    fn tracked_directory(
        &mut self,
        dir: &Directory,
        prefix: &mut BString,
        range: std::ops::Range<usize>,
        depth: usize,
    ) -> Result<(), GiveUp> {
        too_deep(depth, prefix.as_bstr())?;
        let index = self.index;
        let mut tracked: HashMap<&[u8], Tracked> = HashMap::default();
        // The entries below one name are together in the index: each name is
        // looked at once.
        let mut last: Option<(&[u8], Tracked)> = None;
        for entry in &index.entries()[range.clone()] {
            let path = entry.path(index);
            let rest = path
                .get(prefix.len()..)
                .ok_or_else(|| format!("the index entry `{path}` is out of order"))?;
            let (name, what) = match rest.find_byte(b'/') {
                Some(end) => (&rest[..end], Tracked::Directory),
                None => (rest, Tracked::Entry(entry.mode)),
            };
            if last == Some((name, what)) {
                continue;
            }
            last = Some((name, what));
            // Conflicted entries repeat a name with the same kind; a name
            // that is both a file and a directory is for gix to sort out.
            if entry.mode == Mode::DIR
                || name.is_empty()
                || *tracked.entry(name).or_insert(what) != what
            {
                return Err(format!("the index entry `{path}` is unusual"));
            }
        }
        for entry in list(dir, prefix.as_bstr())? {
            if entry.name == ".git" {
                continue;
            }
            let start = prefix.len();
            prefix.push_str(&entry.name);
            let kind = kind(dir, &entry, prefix.as_bstr())?;
            let went = match (tracked.get(entry.name.as_bytes()).copied(), kind) {
                (Some(Tracked::Entry(mode)), Kind::File | Kind::Symlink)
                    if mode != Mode::COMMIT =>
                {
                    Ok(())
                }
                (Some(Tracked::Entry(Mode::COMMIT)), Kind::Directory) => Ok(()),
                // Even an ignored directory is walked when it holds tracked
                // files: the ignore rules then exclude every untracked file
                // below it, as git's do.
                (Some(Tracked::Directory), Kind::Directory) => {
                    let child = open(dir, &entry.name, prefix.as_bstr())?;
                    prefix.push(b'/');
                    let range = index
                        .prefixed_entries_range(prefix.as_bstr())
                        .ok_or_else(|| format!("the index has nothing under `{prefix}`"))?;
                    self.tracked_directory(&child, prefix, range, depth + 1)
                }
                (Some(_), _) => Err(format!("`{prefix}` is tracked as another kind of entry")),
                (None, Kind::Other) => {
                    Err(format!("`{prefix}` is not a file, directory or symlink"))
                }
                (None, Kind::File | Kind::Symlink) => {
                    if !self.excluded(prefix.as_bstr(), false)? {
                        let disk = if kind == Kind::File {
                            DiskKind::File
                        } else {
                            DiskKind::Symlink
                        };
                        self.found.push(untracked(prefix.clone(), disk));
                    }
                    Ok(())
                }
                (None, Kind::Directory) => {
                    if !self.excluded(prefix.as_bstr(), true)? {
                        let child = open(dir, &entry.name, prefix.as_bstr())?;
                        prefix.push(b'/');
                        let shown = self.holds_untracked(&child, prefix, depth + 1)?;
                        prefix.pop();
                        if shown {
                            self.found
                                .push(untracked(prefix.clone(), DiskKind::Directory));
                        }
                    }
                    Ok(())
                }
            };
            prefix.truncate(start);
            went?;
        }
        Ok(())
    }

    /// Whether the untracked directory `dir` (at `prefix`, ending in `/`)
    /// holds a file or symlink that is not ignored, at any depth.
    fn holds_untracked(
        &mut self,
        dir: &Directory,
        prefix: &mut BString,
        depth: usize,
    ) -> Result<bool, GiveUp> {
        too_deep(depth, prefix.as_bstr())?;
        let entries = list(dir, prefix.as_bstr())?;
        if entries.iter().any(|entry| entry.name == ".git") {
            return Err(format!("`{prefix}` is a nested repository"));
        }
        for entry in entries {
            let start = prefix.len();
            prefix.push_str(&entry.name);
            let holds = match kind(dir, &entry, prefix.as_bstr())? {
                Kind::Other => Err(format!("`{prefix}` is not a file, directory or symlink")),
                Kind::File | Kind::Symlink => Ok(!self.excluded(prefix.as_bstr(), false)?),
                Kind::Directory => {
                    if self.excluded(prefix.as_bstr(), true)? {
                        Ok(false)
                    } else {
                        let child = open(dir, &entry.name, prefix.as_bstr())?;
                        prefix.push(b'/');
                        self.holds_untracked(&child, prefix, depth + 1)
                    }
                }
            };
            prefix.truncate(start);
            if holds? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether the ignore rules exclude `path` (no trailing `/`).
    fn excluded(&mut self, path: &BStr, is_dir: bool) -> Result<bool, GiveUp> {
        let mode = if is_dir { Mode::DIR } else { Mode::FILE };
        let platform = self
            .excludes
            .at_entry(path, Some(mode))
            .map_err(|e| format!("cannot read the ignore rules for `{path}`: {e}"))?;
        Ok(platform.is_excluded())
    }
}

fn too_deep(depth: usize, prefix: &BStr) -> Result<(), GiveUp> {
    if depth > MAX_DEPTH {
        return Err(format!(
            "`{prefix}` is more than {MAX_DEPTH} directories deep"
        ));
    }
    Ok(())
}

/// The entries of `dir`, at `prefix`.
fn list(dir: &Directory, prefix: &BStr) -> Result<Vec<Entry>, GiveUp> {
    dir.entries()
        .map_err(|e| format!("cannot list `{prefix}`: {e}"))
}

/// What `entry` of `dir` (at `path`) is, asked of the file system when the
/// listing does not say.
fn kind(dir: &Directory, entry: &Entry, path: &BStr) -> Result<Kind, GiveUp> {
    match entry.kind {
        Some(kind) => Ok(kind),
        None => dir
            .metadata(&entry.name)
            .map(|metadata| metadata.kind)
            .map_err(|e| format!("cannot stat `{path}`: {e}")),
    }
}

/// The directory `name` of `dir` (at `path`).
fn open(dir: &Directory, name: &str, path: &BStr) -> Result<Directory, GiveUp> {
    dir.open_child(name)
        .map_err(|e| format!("cannot open `{path}`: {e}"))
}

fn untracked(rela_path: BString, kind: DiskKind) -> gix::dir::Entry {
    gix::dir::Entry {
        rela_path,
        status: Status::Untracked,
        property: None,
        disk_kind: Some(kind),
        index_kind: None,
        pathspec_match: None,
    }
}
