//! Changes between two states of a repository, and `git_diff`.
//!
//! A [`FileChange`] pairs the old and new side of one path; the three
//! sources are two trees ([`tree_changes`]), HEAD against the index
//! ([`staged_changes`]) and the index against the working tree
//! ([`unstaged_changes`]). [`Renderer`] writes them as `git diff` does
//! (unified hunks with git's default function-name headers; binary files
//! named, not dumped), or as a summary with counts.
//!
//! Nothing is converted on the way: no textconv, no filters, no
//! end-of-line conversion; the bytes compared are the bytes stored.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;

use gix::ObjectId;
use gix::bstr::{BStr, BString, ByteSlice};
use gix::diff::blob::unified_diff::{ConsumeHunk, ContextSize, DiffLineKind, HunkHeader};
use gix::diff::blob::{InternedInput, UnifiedDiff};
use toolcell_sdk::schemars::JsonSchema;
use toolcell_sdk::serde::{Deserialize, Serialize};
use toolcell_sdk::{Error, Output};

use crate::renames::{limit_to, pair_basenames, rewrites, similarity};
use crate::repo::{self, Text, fail, show_path};
use crate::slider;
use crate::userdiff::{self, FuncName};

/// How much of a file's start is checked for NUL bytes, as git does.
const BINARY_PROBE_BYTES: usize = 8000;

/// The bits of a git mode that say what kind of entry it is (file, symlink,
/// submodule).
pub(crate) const S_IFMT: u32 = 0o170000;

/// Arguments of `git_diff`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
pub struct DiffArgs {
    /// The repository: a working tree or bare repository inside a mount. Default: the first mount.
    repo: Option<String>,
    /// The old revision (a branch, tag, id or `HEAD~1`): with `to`, two revisions are compared;
    /// alone, the revision is compared with the working tree (or with the index, `staged`).
    from: Option<String>,
    /// The new revision; needs `from`.
    to: Option<String>,
    /// Compare the index (what is staged) with HEAD (or with `from`) instead of the working tree
    /// with the index. Default false.
    #[serde(default)]
    staged: bool,
    /// Only this file or directory (relative to the working tree).
    path: Option<String>,
    /// Lines of context around each change. Default 3.
    #[schemars(range(min = 0, max = 1000))]
    context: Option<u32>,
    /// A summary instead of the diff: each file with its added and deleted line counts.
    /// Default false.
    #[serde(default)]
    stat: bool,
}

/// What `git_diff` returns besides the text.
#[derive(Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub struct DiffReport {
    /// The changed files, sorted by path.
    pub files: Vec<FileStat>,
    /// Whether the output cap cut the text before the last file, or left files out of `files`.
    pub truncated: bool,
    /// Filter and diff drivers the repository's configuration names, which were not run
    /// (`filter.NAME.clean`, `diff.NAME.textconv`, ...): contents were compared as stored.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub drivers_not_run: Vec<String>,
}

/// One changed file.
#[derive(Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub struct FileStat {
    /// The path (the new one for a rename).
    pub path: String,
    /// The old path of a rename or copy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    /// `added`, `deleted`, `modified`, `renamed`, `copied` or `unmerged`.
    pub status: String,
    /// Lines added (0 for a binary file).
    pub additions: u64,
    /// Lines deleted (0 for a binary file).
    pub deletions: u64,
    /// Whether either side is binary.
    pub binary: bool,
}

/// Runs `git_diff`.
pub fn git_diff(args: DiffArgs) -> Result<Output, Error> {
    let (mut repo, drivers) = repo::open_with_drivers(args.repo.as_deref())?;
    // A diff reads each tree and blob once: an object cache would only
    // hold copies (up to its 16 MiB), never serve one.
    repo.object_cache_size(None);
    let path = args
        .path
        .as_deref()
        .map(|path| repo::repo_path(&repo, path))
        .transpose()?;
    let changes = match (&args.from, &args.to) {
        (Some(from), Some(to)) => {
            if args.staged {
                return Err(Error::new(
                    "`staged` compares the index with HEAD; leave it out when giving `from` and `to`",
                ));
            }
            let old = repo::commit(&repo, from)?;
            let new = repo::commit(&repo, to)?;
            tree_changes(&repo, Some(&old), &new, path.as_ref())?
        }
        (Some(from), None) => {
            let tree = repo::commit(&repo, from)?
                .tree_id()
                .map_err(|e| fail(&format!("cannot read the tree of `{from}`"), e))?
                .detach();
            if args.staged {
                staged_changes(&repo, Some(tree), path.as_ref())?
            } else {
                revision_worktree_changes(&repo, tree, path.as_ref())?
            }
        }
        (None, None) if args.staged => staged_changes(&repo, None, path.as_ref())?,
        (None, None) => unstaged_changes(&repo, path.as_ref())?,
        (None, Some(_)) => {
            return Err(Error::new(
                "`to` needs `from`: give both to compare two revisions, `from` alone to compare \
                 a revision with the working tree, or neither for the working tree against the \
                 index (`staged`: the index against HEAD)",
            ));
        }
    };
    let max = repo::max_output_bytes();
    let mut renderer = Renderer::new(&repo, args.context.unwrap_or(3), max / 2);
    let files = if args.stat {
        renderer.stat(&changes)?
    } else {
        renderer.patch(&changes)?
    };
    let mut files = files;
    let mut budget = max / 2;
    let truncated = repo::fit(&mut files, &mut budget) | renderer.text.truncated;
    let note = if args.stat {
        format!(
            "(output cap reached: the list stops here; {} files changed in all; narrow it with \
             `path`)",
            changes.len()
        )
    } else {
        format!(
            "(output cap reached: the diff stops here; {} files changed in all, each with its \
             line counts in the structured content; narrow it with `path`, or use `stat`)",
            changes.len()
        )
    };
    let mut text = renderer.text.finish(&note);
    if changes.is_empty() {
        text = "no changes\n".to_owned();
    }
    if let Some(note) = repo::drivers_note(&drivers) {
        text.push_str(&note);
        text.push('\n');
    }
    let report = DiffReport {
        files,
        truncated,
        drivers_not_run: drivers,
    };
    Output::structured(&report, text)
}

/// One side of a change: a path, its mode and its contents.
#[derive(Clone, Debug)]
pub struct Side {
    /// The path, relative to the working tree.
    pub path: BString,
    /// The git mode, such as 0o100644.
    pub mode: u32,
    /// The blob (or, for a submodule, the commit); for a working tree file,
    /// the id its contents would have.
    pub id: ObjectId,
    /// The contents, if read from the working tree already.
    pub data: Option<Vec<u8>>,
}

/// What happened to a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Only in the new state.
    Added,
    /// Only in the old state.
    Deleted,
    /// In both.
    Modified,
    /// Moved, maybe changed too.
    Renamed,
    /// Copied, maybe changed too.
    Copied,
    /// In conflict (in the index).
    Unmerged,
}

impl Kind {
    /// The kind as the tools' structured content names it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Added => "added",
            Kind::Deleted => "deleted",
            Kind::Modified => "modified",
            Kind::Renamed => "renamed",
            Kind::Copied => "copied",
            Kind::Unmerged => "unmerged",
        }
    }
}

/// The change to one path.
#[derive(Clone, Debug)]
pub struct FileChange {
    /// What happened.
    pub kind: Kind,
    /// The old side (none when added).
    pub old: Option<Side>,
    /// The new side (none when deleted).
    pub new: Option<Side>,
    /// How similar the two sides of a rename or copy are, in percent, when
    /// known already; otherwise computed when shown.
    pub similarity: Option<u32>,
}

impl FileChange {
    /// The path to show (the new one for a rename).
    pub fn path(&self) -> &BStr {
        self.new
            .as_ref()
            .or(self.old.as_ref())
            .map(|side| side.path.as_bstr())
            .unwrap_or_default()
    }
}

pub(crate) fn entry_mode(mode: gix::object::tree::EntryMode) -> u32 {
    mode.kind() as u32
}

fn index_mode(mode: gix::index::entry::Mode) -> u32 {
    mode.bits()
}

pub(crate) fn within(location: &BStr, path: Option<&BString>) -> bool {
    match path {
        None => true,
        Some(path) if path.is_empty() => true,
        Some(path) => {
            location == path.as_bstr()
                || (location.starts_with(path.as_slice())
                    && location.get(path.len()) == Some(&b'/'))
        }
    }
}

pub(crate) fn commit_tree<'r>(commit: &gix::Commit<'r>) -> Result<gix::Tree<'r>, Error> {
    commit
        .tree()
        .map_err(|e| fail(&format!("cannot read the tree of {}", commit.id), e))
}

/// The changes from `old`'s tree (the empty tree when `None`) to `new`'s,
/// with renames, limited to `path`.
pub fn tree_changes(
    repo: &gix::Repository,
    old: Option<&gix::Commit<'_>>,
    new: &gix::Commit<'_>,
    path: Option<&BString>,
) -> Result<Vec<FileChange>, Error> {
    let old_tree = old.map(commit_tree).transpose()?;
    let new_tree = commit_tree(new)?;
    let rewrites = rewrites(repo);
    let options = gix::diff::Options::default().with_rewrites(Some(rewrites));
    let detached = repo
        .diff_tree_to_tree(old_tree.as_ref(), Some(&new_tree), Some(options))
        .map_err(|e| fail("cannot compare the trees", e))?;
    use gix::object::tree::diff::ChangeDetached as C;
    let side = |path: &BString, mode: gix::object::tree::EntryMode, id: ObjectId| Side {
        path: path.clone(),
        mode: entry_mode(mode),
        id,
        data: None,
    };
    let mut changes = Vec::new();
    for change in detached {
        let change = match change {
            C::Addition {
                location,
                entry_mode,
                id,
                ..
            } if !entry_mode.is_tree() => FileChange {
                kind: Kind::Added,
                old: None,
                new: Some(side(&location, entry_mode, id)),
                similarity: None,
            },
            C::Deletion {
                location,
                entry_mode,
                id,
                ..
            } if !entry_mode.is_tree() => FileChange {
                kind: Kind::Deleted,
                old: Some(side(&location, entry_mode, id)),
                new: None,
                similarity: None,
            },
            C::Modification {
                location,
                previous_entry_mode,
                previous_id,
                entry_mode,
                id,
            } if !entry_mode.is_tree() && !previous_entry_mode.is_tree() => FileChange {
                kind: Kind::Modified,
                old: Some(side(&location, previous_entry_mode, previous_id)),
                new: Some(side(&location, entry_mode, id)),
                similarity: None,
            },
            C::Rewrite {
                source_location,
                source_entry_mode,
                source_id,
                diff,
                entry_mode,
                id,
                location,
                copy,
                ..
            } if !entry_mode.is_tree() => FileChange {
                kind: if copy { Kind::Copied } else { Kind::Renamed },
                old: Some(side(&source_location, source_entry_mode, source_id)),
                new: Some(side(&location, entry_mode, id)),
                similarity: diff.is_none().then_some(100),
            },
            _ => continue,
        };
        changes.push(change);
    }
    pair_basenames(repo, &mut changes, rewrites.limit)?;
    let mut changes = limit_to(changes, path);
    changes.sort_by(|a, b| a.path().cmp(b.path()));
    Ok(changes)
}

/// The changes from `tree` (default HEAD's) to the index, with renames,
/// limited to `path`.
pub fn staged_changes(
    repo: &gix::Repository,
    tree: Option<ObjectId>,
    path: Option<&BString>,
) -> Result<Vec<FileChange>, Error> {
    let items = crate::status::items(repo, false, path, tree, true, false)?;
    let mut changes = Vec::new();
    for item in items {
        if let gix::status::Item::TreeIndex(change) = item {
            changes.push(from_index_change(change));
        }
    }
    changes.sort_by(|a, b| a.path().cmp(b.path()));
    Ok(changes)
}

/// A change between HEAD's tree and the index as a [`FileChange`].
pub fn from_index_change(change: gix::diff::index::Change) -> FileChange {
    use gix::diff::index::Change as C;
    let side = |path: &BString, mode: gix::index::entry::Mode, id: ObjectId| Side {
        path: path.clone(),
        mode: index_mode(mode),
        id,
        data: None,
    };
    match change {
        C::Addition {
            location,
            entry_mode,
            id,
            ..
        } => FileChange {
            kind: Kind::Added,
            old: None,
            new: Some(side(&location.into_owned(), entry_mode, id.into_owned())),
            similarity: None,
        },
        C::Deletion {
            location,
            entry_mode,
            id,
            ..
        } => FileChange {
            kind: Kind::Deleted,
            old: Some(side(&location.into_owned(), entry_mode, id.into_owned())),
            new: None,
            similarity: None,
        },
        C::Modification {
            location,
            previous_entry_mode,
            previous_id,
            entry_mode,
            id,
            ..
        } => {
            let location = location.into_owned();
            FileChange {
                kind: Kind::Modified,
                old: Some(side(
                    &location,
                    previous_entry_mode,
                    previous_id.into_owned(),
                )),
                new: Some(side(&location, entry_mode, id.into_owned())),
                similarity: None,
            }
        }
        C::Rewrite {
            source_location,
            source_entry_mode,
            source_id,
            location,
            entry_mode,
            id,
            copy,
            ..
        } => FileChange {
            kind: if copy { Kind::Copied } else { Kind::Renamed },
            old: Some(side(
                &source_location.into_owned(),
                source_entry_mode,
                source_id.into_owned(),
            )),
            new: Some(side(&location.into_owned(), entry_mode, id.into_owned())),
            similarity: None,
        },
    }
}

/// The changes from the index to the working tree, for tracked files,
/// limited to `path`.
pub fn unstaged_changes(
    repo: &gix::Repository,
    path: Option<&BString>,
) -> Result<Vec<FileChange>, Error> {
    let workdir = repo::workdir(repo)?;
    let items = crate::status::items(repo, false, path, None, false, true)?;
    let mut changes = Vec::new();
    for item in items {
        let gix::status::Item::IndexWorktree(item) = item else {
            continue;
        };
        use gix::status::index_worktree::Item as W;
        use gix::status::plumbing::index_as_worktree::{Change, EntryStatus};
        let W::Modification {
            entry,
            rela_path,
            status,
            ..
        } = item
        else {
            continue;
        };
        let old = Side {
            path: rela_path.clone(),
            mode: index_mode(entry.mode),
            id: entry.id,
            data: None,
        };
        let change = match status {
            EntryStatus::Conflict { .. } => FileChange {
                kind: Kind::Unmerged,
                old: None,
                new: Some(old),
                similarity: None,
            },
            EntryStatus::Change(Change::Removed) => FileChange {
                kind: Kind::Deleted,
                old: Some(old),
                new: None,
                similarity: None,
            },
            EntryStatus::Change(Change::Modification {
                executable_bit_changed,
                ..
            }) => {
                let mut mode = old.mode;
                if executable_bit_changed {
                    mode = if mode == 0o100755 { 0o100644 } else { 0o100755 };
                }
                let new = worktree_side(repo, &workdir, &rela_path, mode)?;
                FileChange {
                    kind: Kind::Modified,
                    old: Some(old),
                    new: Some(new),
                    similarity: None,
                }
            }
            EntryStatus::Change(Change::Type { worktree_mode }) => {
                let new = worktree_side(repo, &workdir, &rela_path, worktree_mode.bits())?;
                FileChange {
                    kind: Kind::Modified,
                    old: Some(old),
                    new: Some(new),
                    similarity: None,
                }
            }
            _ => continue,
        };
        changes.push(change);
    }
    changes.sort_by(|a, b| a.path().cmp(b.path()));
    Ok(changes)
}

/// The changes from `tree` to the working tree, for the files the index
/// tracks, as `git diff REV` gives them: the changes from the tree to the
/// index, carried on by those from the index to the working tree. Limited to
/// `path`.
pub fn revision_worktree_changes(
    repo: &gix::Repository,
    tree: ObjectId,
    path: Option<&BString>,
) -> Result<Vec<FileChange>, Error> {
    let mut later: std::collections::HashMap<BString, FileChange> = unstaged_changes(repo, path)?
        .into_iter()
        .map(|change| (change.path().to_owned(), change))
        .collect();
    let mut changes = Vec::new();
    for mut change in staged_changes(repo, Some(tree), path)? {
        let carried = change.new.as_ref().and_then(|new| later.remove(&new.path));
        if let Some(carried) = carried {
            match carried.new {
                // Deleted from the working tree since: gone, or never there.
                None if change.old.is_none() => continue,
                None => {
                    change.kind = Kind::Deleted;
                    change.new = None;
                }
                // Back to the revision's version: no change.
                Some(worktree)
                    if change.old.as_ref().is_some_and(|old| {
                        old.path == worktree.path
                            && old.id == worktree.id
                            && old.mode == worktree.mode
                    }) =>
                {
                    continue;
                }
                Some(worktree) => {
                    change.new = Some(worktree);
                    change.similarity = None;
                }
            }
        }
        changes.push(change);
    }
    // Files the index has as the revision had them: their change in the
    // working tree is their change from the revision.
    changes.extend(later.into_values());
    changes.sort_by(|a, b| a.path().cmp(b.path()));
    Ok(changes)
}

/// A working tree file as the new side of a change: its contents (a
/// symlink's target) and the id they would have.
fn worktree_side(
    repo: &gix::Repository,
    workdir: &Path,
    path: &BString,
    mode: u32,
) -> Result<Side, Error> {
    let relative = gix::path::from_bstr(path.as_bstr())
        .map_err(|e| fail(&format!("cannot use the path `{path}`"), e))?;
    let full = workdir.join(relative);
    let data = if mode == 0o120000 {
        std::fs::read_link(&full)
            .map_err(|e| Error::io(&full, e))?
            .to_string_lossy()
            .into_owned()
            .into_bytes()
    } else {
        std::fs::read(&full).map_err(|e| Error::io(&full, e))?
    };
    let id = gix::objs::compute_hash(repo.object_hash(), gix::object::Kind::Blob, &data)
        .map_err(|e| fail("cannot hash a file", e))?;
    Ok(Side {
        path: path.clone(),
        mode,
        id,
        data: Some(data),
    })
}

/// Writes changes as text within a budget.
pub struct Renderer<'r> {
    repo: &'r gix::Repository,
    context: u32,
    /// The `diff` attribute of paths, from `.gitattributes`.
    attributes: RefCell<Attributes<'r>>,
    /// The text so far.
    pub text: Text,
}

impl<'r> Renderer<'r> {
    /// A renderer with `context` lines around changes and `max` bytes of text.
    pub fn new(repo: &'r gix::Repository, context: u32, max: usize) -> Renderer<'r> {
        Renderer {
            repo,
            context,
            attributes: RefCell::new(Attributes::new(repo)),
            text: Text::new(max),
        }
    }

    fn contents(&self, side: &Side) -> Result<Vec<u8>, Error> {
        if let Some(data) = &side.data {
            return Ok(data.clone());
        }
        if side.mode == 0o160000 {
            return Ok(format!("Subproject commit {}\n", side.id).into_bytes());
        }
        let blob = self.repo.find_object(side.id).map_err(|e| {
            fail(
                &format!("cannot read {}", show_path(side.path.as_bstr())),
                e,
            )
        })?;
        Ok(blob.detach().data)
    }

    /// Writes each change as a `git diff` patch; returns their summaries.
    pub fn patch(&mut self, changes: &[FileChange]) -> Result<Vec<FileStat>, Error> {
        let mut stats = Vec::new();
        for change in changes {
            let (stat, text) = self.one(change, true)?;
            stats.push(stat);
            if !self.text.truncated {
                self.text.push(&text);
            }
        }
        Ok(stats)
    }

    /// Writes a summary line per change and a total; returns the summaries.
    pub fn stat(&mut self, changes: &[FileChange]) -> Result<Vec<FileStat>, Error> {
        let mut stats = Vec::new();
        for change in changes {
            stats.push(self.one(change, false)?.0);
        }
        let width = stats.iter().map(|s| label(s).len()).max().unwrap_or(0);
        for stat in &stats {
            let counts = if stat.binary {
                "binary".to_owned()
            } else {
                format!("+{} -{}", stat.additions, stat.deletions)
            };
            self.text
                .push(&format!(" {:width$} | {counts}\n", label(stat)));
        }
        let added: u64 = stats.iter().map(|s| s.additions).sum();
        let deleted: u64 = stats.iter().map(|s| s.deletions).sum();
        self.text.push(&format!(
            " {} file{} changed, {added} insertion{}(+), {deleted} deletion{}(-)\n",
            stats.len(),
            plural(stats.len() as u64),
            plural(added),
            plural(deleted)
        ));
        Ok(stats)
    }

    /// The summary of one change and, with `patch`, its text.
    fn one(&self, change: &FileChange, patch: bool) -> Result<(FileStat, String), Error> {
        // Git shows a change of type (a file become a symlink, say) as the
        // deletion of the one and the creation of the other.
        if let (true, Kind::Modified, Some(old), Some(new)) =
            (patch, change.kind, &change.old, &change.new)
            && old.mode & S_IFMT != new.mode & S_IFMT
        {
            let deleted = FileChange {
                kind: Kind::Deleted,
                old: Some(old.clone()),
                new: None,
                similarity: None,
            };
            let added = FileChange {
                kind: Kind::Added,
                old: None,
                new: Some(new.clone()),
                similarity: None,
            };
            let (stat, _) = self.one(change, false)?;
            let (_, gone) = self.one(&deleted, true)?;
            let (_, created) = self.one(&added, true)?;
            return Ok((stat, gone + &created));
        }
        let path = show_path(change.path());
        let mut stat = FileStat {
            path: path.clone(),
            old_path: match change.kind {
                Kind::Renamed | Kind::Copied => {
                    change.old.as_ref().map(|old| show_path(old.path.as_bstr()))
                }
                _ => None,
            },
            status: change.kind.name().to_owned(),
            additions: 0,
            deletions: 0,
            binary: false,
        };
        if change.kind == Kind::Unmerged {
            return Ok((stat, format!("* Unmerged path {}\n", quote(&path))));
        }
        // A patch that can no longer be shown still has its line counts,
        // as git's `--numstat` would give them.
        if patch && self.text.truncated {
            return Ok((self.one(change, false)?.0, String::new()));
        }
        let old_data = change.old.as_ref().map(|s| self.contents(s)).transpose()?;
        let new_data = change.new.as_ref().map(|s| self.contents(s)).transpose()?;
        let old_bytes = old_data.as_deref().unwrap_or_default();
        let new_bytes = new_data.as_deref().unwrap_or_default();
        let (old_diff, new_diff) = {
            let mut attributes = self.attributes.borrow_mut();
            let mut diff_of = |side: &Option<Side>| {
                side.as_ref().map_or(DiffAttr::Unspecified, |side| {
                    attributes.diff(side.path.as_bstr())
                })
            };
            (diff_of(&change.old), diff_of(&change.new))
        };
        let binary_side = |attr: &DiffAttr, bytes: &[u8]| match attr {
            DiffAttr::Binary => true,
            DiffAttr::Text => false,
            DiffAttr::Unspecified | DiffAttr::Driver(_) => is_binary(bytes),
        };
        stat.binary = binary_side(&old_diff, old_bytes) || binary_side(&new_diff, new_bytes);
        // Git takes the hunk-header patterns of the old side's driver, else
        // of the new side's.
        let driver = [&old_diff, &new_diff]
            .into_iter()
            .find_map(|attr| match attr {
                DiffAttr::Driver(name) => self.attributes.borrow_mut().driver(name),
                _ => None,
            });
        let same = match (&change.old, &change.new) {
            (Some(old), Some(new)) => old.id == new.id,
            _ => false,
        };
        let mut hunks = String::new();
        if !stat.binary && !same {
            let (added, deleted) = unified(
                old_bytes,
                new_bytes,
                self.context,
                patch,
                driver.as_deref(),
                &mut hunks,
            );
            stat.additions = added;
            stat.deletions = deleted;
        }
        if !patch {
            return Ok((stat, String::new()));
        }
        let old_name = change
            .old
            .as_ref()
            .map_or(path.clone(), |side| show_path(side.path.as_bstr()));
        let mut text = format!(
            "diff --git {} {}\n",
            quote(&format!("a/{old_name}")),
            quote(&format!("b/{path}"))
        );
        let short = |id: &ObjectId| id.to_hex_with_len(7).to_string();
        let null = "0000000";
        match (&change.old, &change.new) {
            (None, Some(new)) => {
                text.push_str(&format!("new file mode {:06o}\n", new.mode));
                text.push_str(&format!("index {null}..{}\n", short(&new.id)));
            }
            (Some(old), None) => {
                text.push_str(&format!("deleted file mode {:06o}\n", old.mode));
                text.push_str(&format!("index {}..{null}\n", short(&old.id)));
            }
            (Some(old), Some(new)) => {
                if old.mode != new.mode {
                    text.push_str(&format!(
                        "old mode {:06o}\nnew mode {:06o}\n",
                        old.mode, new.mode
                    ));
                }
                if matches!(change.kind, Kind::Renamed | Kind::Copied) {
                    let similarity = change
                        .similarity
                        .unwrap_or_else(|| similarity(old_bytes, new_bytes));
                    let verb = if change.kind == Kind::Copied {
                        "copy"
                    } else {
                        "rename"
                    };
                    text.push_str(&format!(
                        "similarity index {similarity}%\n{verb} from {}\n{verb} to {}\n",
                        quote(&old_name),
                        quote(&path)
                    ));
                }
                if !same {
                    if old.mode == new.mode {
                        text.push_str(&format!(
                            "index {}..{} {:06o}\n",
                            short(&old.id),
                            short(&new.id),
                            new.mode
                        ));
                    } else {
                        text.push_str(&format!("index {}..{}\n", short(&old.id), short(&new.id)));
                    }
                }
            }
            (None, None) => {}
        }
        if same {
            return Ok((stat, text));
        }
        let a = if change.old.is_some() {
            quote(&format!("a/{old_name}"))
        } else {
            "/dev/null".to_owned()
        };
        let b = if change.new.is_some() {
            quote(&format!("b/{path}"))
        } else {
            "/dev/null".to_owned()
        };
        if stat.binary {
            text.push_str(&format!("Binary files {a} and {b} differ\n"));
        } else if !hunks.is_empty() {
            // Like GNU diff, git ends a file name holding a space with a tab.
            let tab = |name: &str| if name.contains(' ') { "\t" } else { "" };
            text.push_str(&format!("--- {a}{}\n+++ {b}{}\n", tab(&a), tab(&b)));
            text.push_str(&hunks);
        }
        Ok((stat, text))
    }
}

fn label(stat: &FileStat) -> String {
    match &stat.old_path {
        Some(old) => format!("{old} => {}", stat.path),
        None => stat.path.clone(),
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Whether git takes `data` for binary: a NUL byte near the start.
pub fn is_binary(data: &[u8]) -> bool {
    data[..data.len().min(BINARY_PROBE_BYTES)].contains(&0)
}

/// A path as git writes it with `core.quotePath=false`: as it is, unless
/// it holds a quote, a backslash or a control character, which are escaped
/// inside double quotes.
pub fn quote(path: &str) -> String {
    if !path
        .chars()
        .any(|c| c == '"' || c == '\\' || c.is_control())
    {
        return path.to_owned();
    }
    let mut quoted = String::from("\"");
    for c in path.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            '\n' => quoted.push_str("\\n"),
            '\t' => quoted.push_str("\\t"),
            c if c.is_control() => quoted.push_str(&format!("\\{:03o}", c as u32)),
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

/// Appends the unified hunks from `old` to `new` to `out` when `render`,
/// with headers from `funcname` (git's default rule without one); returns
/// the added and deleted line counts.
pub fn unified(
    old: &[u8],
    new: &[u8],
    context: u32,
    render: bool,
    funcname: Option<&FuncName>,
    out: &mut String,
) -> (u64, u64) {
    // As git's `-U0`, which cuts the common tail before diffing.
    let (old, new) = if context == 0 {
        slider::trim_common_tail(old, new)
    } else {
        (old, new)
    };
    let input = InternedInput::new(old, new);
    let diff = slider::line_diff(&input);
    let counts = (
        u64::from(diff.count_additions()),
        u64::from(diff.count_removals()),
    );
    if render {
        let old_lines: Vec<&[u8]> = old.lines_with_terminator().collect();
        let sink = Hunks {
            old_lines,
            funcname,
            out: String::new(),
        };
        if let Ok(text) =
            UnifiedDiff::new(&diff, &input, sink, ContextSize::symmetrical(context)).consume()
        {
            out.push_str(&text);
        }
    }
    counts
}

struct Hunks<'a> {
    old_lines: Vec<&'a [u8]>,
    funcname: Option<&'a FuncName>,
    out: String,
}

impl Hunks<'_> {
    /// The hunk header's function name: the nearest old line above the
    /// hunk's first line (`before_start`, 1-based) that the driver's
    /// patterns, or git's default rule, accept.
    fn function_name(&self, before_start: u32) -> Option<String> {
        let above = (before_start as usize)
            .saturating_sub(1)
            .min(self.old_lines.len());
        self.old_lines[..above]
            .iter()
            .rev()
            .find_map(|line| match self.funcname {
                Some(funcname) => funcname.header(line),
                None => userdiff::default_header(line),
            })
    }
}

impl ConsumeHunk for Hunks<'_> {
    type Out = String;

    fn consume_hunk(
        &mut self,
        header: HunkHeader,
        lines: &[(DiffLineKind, &[u8])],
    ) -> std::io::Result<()> {
        let range = |start: u32, len: u32| match len {
            0 => format!("{},0", start.saturating_sub(1)),
            1 => format!("{start}"),
            len => format!("{start},{len}"),
        };
        let mut head = format!(
            "@@ -{} +{} @@",
            range(header.before_hunk_start, header.before_hunk_len),
            range(header.after_hunk_start, header.after_hunk_len)
        );
        // For a pure insertion, `before_hunk_start` is the old line after
        // it, so the search starts at the line the insertion follows, as
        // git's does.
        if let Some(name) = self.function_name(header.before_hunk_start) {
            head.push(' ');
            head.push_str(&name);
        }
        self.out.push_str(&head);
        self.out.push('\n');
        for (kind, line) in lines {
            self.out.push(kind.to_prefix());
            self.out.push_str(&String::from_utf8_lossy(line));
            if !line.ends_with(b"\n") {
                self.out.push_str("\n\\ No newline at end of file\n");
            }
        }
        Ok(())
    }

    fn finish(self) -> String {
        self.out
    }
}

/// What a path's `diff` attribute says.
enum DiffAttr {
    /// Not set: binary when a NUL byte is near the start.
    Unspecified,
    /// `diff` set: always text.
    Text,
    /// `-diff` (or `binary`): always binary.
    Binary,
    /// `diff=NAME`: the driver `NAME` (its hunk-header patterns).
    Driver(String),
}

/// Looks up the `diff` attribute of paths in the repository's
/// `.gitattributes` files (those of the working tree, else of the index),
/// `info/attributes` and the global attributes file.
struct Attributes<'r> {
    repo: &'r gix::Repository,
    /// The attribute stack, built on first use; `None` inside when it
    /// could not be (the attributes are then taken as unspecified).
    stack: Option<Option<(gix::AttributeStack<'r>, gix::attrs::search::Outcome)>>,
    /// Drivers by name: `None` for a name without header patterns.
    drivers: HashMap<String, Option<std::rc::Rc<FuncName>>>,
}

impl<'r> Attributes<'r> {
    fn new(repo: &'r gix::Repository) -> Attributes<'r> {
        Attributes {
            repo,
            stack: None,
            drivers: HashMap::new(),
        }
    }

    fn build(
        repo: &'r gix::Repository,
    ) -> Option<(gix::AttributeStack<'r>, gix::attrs::search::Outcome)> {
        use gix::worktree::stack::state::attributes::Source;
        let index = repo.index_or_empty().ok()?;
        let source = if repo.workdir().is_some() {
            Source::WorktreeThenIdMapping
        } else {
            Source::IdMapping
        };
        let stack = repo.attributes_only(&index, source).ok()?;
        let outcome = stack.selected_attribute_matches(["diff"]);
        Some((stack, outcome))
    }

    /// The `diff` attribute of `path`.
    fn diff(&mut self, path: &BStr) -> DiffAttr {
        let repo = self.repo;
        let Some((stack, outcome)) = self.stack.get_or_insert_with(|| Self::build(repo)) else {
            return DiffAttr::Unspecified;
        };
        let Ok(platform) = stack.at_entry(path, None) else {
            return DiffAttr::Unspecified;
        };
        if !platform.matching_attributes(outcome) {
            return DiffAttr::Unspecified;
        }
        let Some(found) = outcome.iter_selected().next() else {
            return DiffAttr::Unspecified;
        };
        match found.assignment.state {
            gix::attrs::StateRef::Set => DiffAttr::Text,
            gix::attrs::StateRef::Unset => DiffAttr::Binary,
            gix::attrs::StateRef::Value(value) => {
                DiffAttr::Driver(value.as_bstr().to_str_lossy().into_owned())
            }
            gix::attrs::StateRef::Unspecified => DiffAttr::Unspecified,
        }
    }

    /// The hunk-header patterns of driver `name`: `diff.NAME.xfuncname`
    /// from the configuration, else git's builtin driver of that name.
    fn driver(&mut self, name: &str) -> Option<std::rc::Rc<FuncName>> {
        let repo = self.repo;
        self.drivers
            .entry(name.to_owned())
            .or_insert_with(|| {
                let configured = repo
                    .config_snapshot()
                    .string(format!("diff.{name}.xfuncname").as_str())
                    .and_then(|pattern| FuncName::new(&pattern.to_str_lossy(), false).ok());
                configured
                    .or_else(|| FuncName::builtin(name))
                    .map(std::rc::Rc::new)
            })
            .clone()
    }
}
