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
//! It answers for the usual working tree and gives up (`None`, and gix's
//! walk answers instead) on anything else: a case-insensitive or
//! Unicode-precomposing repository, a sparse index, a tracked path that is
//! now another kind of entry, an ignored directory that holds tracked
//! files, a nested repository, something that is not a file, directory or
//! symlink, an entry it cannot read, or a tree deeper than [`MAX_DEPTH`].

use std::path::Path;

use foldhash::HashMap;
use gix::bstr::{BStr, BString, ByteSlice, ByteVec};
use gix::dir::entry::{Kind as DiskKind, Status};
use gix::index::State;
use gix::index::entry::Mode;
use toolcell_sdk::fs::{Directory, Kind};

/// The deepest directory the walk goes into before it gives up.
const MAX_DEPTH: usize = 256;

/// The untracked entries of the working tree `workdir` of `repo`, whose
/// index is `index`; `None` where gix's walk must answer instead.
pub fn find(repo: &gix::Repository, index: &State, workdir: &Path) -> Option<Vec<gix::dir::Entry>> {
    let config = repo.config_snapshot();
    if repo.filesystem_options().ok()?.ignore_case
        || config.boolean("core.precomposeUnicode") == Some(true)
        || index.is_sparse()
    {
        return None;
    }
    let excludes = repo
        .excludes(
            index,
            None,
            gix::worktree::stack::state::ignore::Source::WorktreeThenIdMappingIfNotSkipped,
        )
        .ok()?;
    let mut walk = Walk {
        index,
        excludes,
        found: Vec::new(),
    };
    let root = Directory::open(workdir).ok()?;
    let mut prefix = BString::default();
    walk.tracked_directory(&root, &mut prefix, 0..index.entries().len(), 0)?;
    Some(walk.found)
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
    ) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        let index = self.index;
        let mut tracked: HashMap<&[u8], Tracked> = HashMap::default();
        for entry in &index.entries()[range.clone()] {
            let rest = entry.path(index).get(prefix.len()..)?;
            let (name, what) = match rest.find_byte(b'/') {
                Some(end) => (&rest[..end], Tracked::Directory),
                None => (&rest[..], Tracked::Entry(entry.mode)),
            };
            if entry.mode == Mode::DIR || name.is_empty() {
                return None;
            }
            // Conflicted entries repeat a name with the same kind; a name
            // that is both a file and a directory is for gix to sort out.
            if *tracked.entry(name).or_insert(what) != what {
                return None;
            }
        }
        for entry in dir.entries().ok()? {
            if entry.name == ".git" {
                continue;
            }
            let kind = match entry.kind {
                Some(kind) => kind,
                None => dir.metadata(&entry.name).ok()?.kind,
            };
            let start = prefix.len();
            prefix.push_str(&entry.name);
            let went = match (tracked.get(entry.name.as_bytes()).copied(), kind) {
                (Some(Tracked::Entry(mode)), Kind::File | Kind::Symlink) if mode != Mode::COMMIT => {
                    Some(())
                }
                (Some(Tracked::Entry(Mode::COMMIT)), Kind::Directory) => Some(()),
                (Some(Tracked::Directory), Kind::Directory) => {
                    if self.excluded(prefix.as_bstr(), true)? {
                        None
                    } else {
                        let child = dir.open_child(&entry.name).ok()?;
                        prefix.push(b'/');
                        let range = index.prefixed_entries_range(prefix.as_bstr())?;
                        self.tracked_directory(&child, prefix, range, depth + 1)
                    }
                }
                (Some(_), _) | (None, Kind::Other) => None,
                (None, Kind::File | Kind::Symlink) => {
                    if !self.excluded(prefix.as_bstr(), false)? {
                        let disk = if kind == Kind::File {
                            DiskKind::File
                        } else {
                            DiskKind::Symlink
                        };
                        self.found.push(untracked(prefix.clone(), disk));
                    }
                    Some(())
                }
                (None, Kind::Directory) => {
                    if !self.excluded(prefix.as_bstr(), true)? {
                        let child = dir.open_child(&entry.name).ok()?;
                        prefix.push(b'/');
                        let shown = self.holds_untracked(&child, prefix, depth + 1)?;
                        prefix.pop();
                        if shown {
                            self.found.push(untracked(prefix.clone(), DiskKind::Directory));
                        }
                    }
                    Some(())
                }
            };
            prefix.truncate(start);
            went?;
        }
        Some(())
    }

    /// Whether the untracked directory `dir` (at `prefix`, ending in `/`)
    /// holds a file or symlink that is not ignored, at any depth.
    fn holds_untracked(&mut self, dir: &Directory, prefix: &mut BString, depth: usize) -> Option<bool> {
        if depth > MAX_DEPTH {
            return None;
        }
        let entries = dir.entries().ok()?;
        if entries.iter().any(|entry| entry.name == ".git") {
            // A nested repository: gix tells it apart.
            return None;
        }
        for entry in entries {
            let kind = match entry.kind {
                Some(kind) => kind,
                None => dir.metadata(&entry.name).ok()?.kind,
            };
            let start = prefix.len();
            prefix.push_str(&entry.name);
            let holds = match kind {
                Kind::Other => None,
                Kind::File | Kind::Symlink => Some(!self.excluded(prefix.as_bstr(), false)?),
                Kind::Directory => {
                    if self.excluded(prefix.as_bstr(), true)? {
                        Some(false)
                    } else {
                        let child = dir.open_child(&entry.name).ok()?;
                        prefix.push(b'/');
                        self.holds_untracked(&child, prefix, depth + 1)
                    }
                }
            };
            prefix.truncate(start);
            if holds? {
                return Some(true);
            }
        }
        Some(false)
    }

    /// Whether the ignore rules exclude `path` (no trailing `/`).
    fn excluded(&mut self, path: &BStr, is_dir: bool) -> Option<bool> {
        let mode = if is_dir { Mode::DIR } else { Mode::FILE };
        let platform = self.excludes.at_entry(path, Some(mode)).ok()?;
        Some(platform.is_excluded())
    }
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
