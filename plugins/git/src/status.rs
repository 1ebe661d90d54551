//! `git_status`: the branch, its upstream, and staged, unstaged, untracked
//! and conflicted paths.
//!
//! [`items`] gathers the status, and `git_diff` uses it too: HEAD's tree
//! against the index with renames (`staged.rs`, from the cache tree), the
//! index against the working tree (gix's check, after `preload.rs` has
//! statted every tracked file in one host call), and the untracked files
//! under the ignore rules (`untracked.rs`, or gix's walk where it cannot
//! answer).

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use gix::ObjectId;
use gix::bstr::{BString, ByteSlice};
use toolcell_sdk::schemars::JsonSchema;
use toolcell_sdk::serde::{Deserialize, Serialize};
use toolcell_sdk::{Error, Output};

use crate::diff::{self, Kind};
use crate::preload;
use crate::repo::{self, Text, fail, show_path};
use crate::staged;
use crate::untracked;

/// Arguments of `git_status`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
pub struct StatusArgs {
    /// The repository: a working tree inside a mount. Default: the first mount.
    repo: Option<String>,
    /// List untracked files (a wholly untracked directory as one `dir/`). Default true.
    #[serde(default = "yes")]
    untracked: bool,
}

fn yes() -> bool {
    true
}

/// What `git_status` returns.
#[derive(Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub struct StatusReport {
    /// The branch HEAD is on; null when HEAD is detached.
    pub branch: Option<String>,
    /// The commit HEAD points at; null before the first commit.
    pub head: Option<String>,
    /// The upstream branch and how far HEAD is ahead of and behind it, when one is configured
    /// and present.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream: Option<Upstream>,
    /// Changes staged in the index (HEAD against the index), renames included.
    pub staged: Vec<PathChange>,
    /// Changes in the working tree not staged (the index against the working tree).
    pub unstaged: Vec<PathChange>,
    /// Untracked paths, not ignored; a wholly untracked directory as `dir/`.
    pub untracked: Vec<String>,
    /// Paths with merge conflicts.
    pub conflicted: Vec<String>,
    /// Whether some paths were left out to stay under the output cap.
    pub truncated: bool,
    /// Filter and diff drivers the repository's configuration names, which were not run
    /// (`filter.NAME.clean`, ...): the working tree was compared as stored.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub drivers_not_run: Vec<String>,
}

/// The upstream of the current branch.
#[derive(Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub struct Upstream {
    /// Such as `origin/main`.
    pub name: String,
    /// Commits on HEAD that the upstream lacks.
    pub ahead: u64,
    /// Commits on the upstream that HEAD lacks.
    pub behind: u64,
}

/// A changed path.
#[derive(Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub struct PathChange {
    /// The path (the new one for a rename).
    pub path: String,
    /// The old path of a rename or copy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    /// `added`, `deleted`, `modified`, `renamed`, `copied` or `typechange`.
    pub status: String,
}

/// The status items of `repo`: a tree (`tree`, default HEAD's) against the
/// index when `staged`, the index against the working tree (and untracked
/// files when `untracked`) when `unstaged`; limited to `path`.
pub fn items(
    repo: &gix::Repository,
    untracked: bool,
    path: Option<&BString>,
    tree: Option<ObjectId>,
    staged: bool,
    unstaged: bool,
) -> Result<Vec<gix::status::Item>, Error> {
    let workdir = repo::workdir(repo)?;
    let context = format!("cannot compute the status{}", repo::borrowed(repo));
    let patterns: Vec<BString> = path
        .filter(|path| !path.is_empty())
        .cloned()
        .into_iter()
        .collect();
    let shared = repo.index_or_empty().map_err(|e| fail(&context, e))?;
    let mut items = Vec::new();
    if staged {
        let tree = match tree {
            Some(tree) => tree,
            None => repo
                .head_tree_id_or_empty()
                .map_err(|e| fail(&context, e))?
                .detach(),
        };
        items = staged::changes(repo, tree, &shared, &patterns).map_err(|e| fail(&context, e))?;
    }
    if unstaged {
        // With no path to limit it, the working tree is compared whole:
        // every tracked file's metadata is asked for up front, in one host
        // call that stats on the host's threads while the untracked files
        // are looked for here.
        let root = patterns
            .is_empty()
            .then(|| preload::open(repo, &workdir))
            .flatten();
        let preload = root
            .as_ref()
            .and_then(|root| preload::start(repo, &shared, root));
        // The untracked files: found here if the working tree allows,
        // else by gix's walk along with the modifications.
        let found = if untracked && patterns.is_empty() {
            untracked::find(repo, &shared, &workdir)
                .inspect_err(|why| {
                    toolcell_sdk::host::log(
                        toolcell_sdk::host::LogLevel::Debug,
                        &format!("untracked files left to gix's walk: {why}"),
                    );
                })
                .ok()
        } else {
            None
        };
        let preloaded;
        let index: &gix::index::State = match preload {
            Some(preload) => {
                let mut index: gix::index::File = (**shared).clone();
                preload.mark_unchanged(&mut index);
                preloaded = index;
                &preloaded
            }
            None => &shared,
        };
        let dirwalk = if untracked && found.is_none() {
            let options = repo.dirwalk_options().map_err(|e| fail(&context, e))?;
            Some(options.emit_untracked(gix::dir::walk::EmissionMode::CollapseDirectory))
        } else {
            None
        };
        let submodules = Submodules {
            workdir: workdir.clone(),
            builtin: gix::status::index_worktree::BuiltinSubmoduleStatus::new(
                repo.clone().into_sync(),
                gix::status::Submodule::default(),
            )
            .map_err(|e| fail(&context, e))?,
        };
        let mut collect = Collect(Vec::new());
        repo.index_worktree_status(
            index,
            patterns,
            &mut collect,
            gix::status::plumbing::index_as_worktree::traits::FastEq,
            submodules,
            &mut gix::progress::Discard,
            &AtomicBool::new(false),
            gix::status::index_worktree::Options {
                sorting: None,
                dirwalk_options: dirwalk,
                rewrites: None,
                thread_limit: None,
            },
        )
        .map_err(|e| fail(&context, e))?;
        items.extend(collect.0);
        for entry in found.into_iter().flatten() {
            items.push(gix::status::Item::IndexWorktree(
                gix::status::index_worktree::Item::DirectoryContents {
                    entry,
                    collapsed_directory_status: None,
                },
            ));
        }
    }
    Ok(items)
}

/// Collects the index-against-working-tree items, leaving out those that
/// only tell that an entry's stat data is out of date.
struct Collect(Vec<gix::status::Item>);

impl<'index> gix::status::plumbing::index_as_worktree_with_renames::VisitEntry<'index> for Collect {
    type ContentChange = ();
    type SubmoduleStatus = gix::submodule::Status;

    fn visit_entry(
        &mut self,
        entry: gix::status::plumbing::index_as_worktree_with_renames::Entry<
            'index,
            Self::ContentChange,
            Self::SubmoduleStatus,
        >,
    ) {
        use gix::status::plumbing::index_as_worktree::EntryStatus;
        let item = gix::status::index_worktree::Item::from(entry);
        if let gix::status::index_worktree::Item::Modification {
            status: EntryStatus::NeedsUpdate(_),
            ..
        } = item
        {
            return;
        }
        self.0.push(gix::status::Item::IndexWorktree(item));
    }
}

/// gix's submodule status, asked only of submodules that are checked out
/// (whose directory has a `.git`). gix's own check opens the repository
/// again and reloads its index for every submodule, checked out or not;
/// git counts a submodule that is not checked out as unchanged, and so
/// does this.
#[derive(Clone)]
struct Submodules {
    workdir: PathBuf,
    builtin: gix::status::index_worktree::BuiltinSubmoduleStatus,
}

impl gix::status::plumbing::index_as_worktree::traits::SubmoduleStatus for Submodules {
    type Output = gix::submodule::Status;

    fn status(
        &mut self,
        entry: &gix::index::Entry,
        rela_path: &gix::bstr::BStr,
    ) -> Result<Option<Self::Output>, gix::Error> {
        let Ok(relative) = gix::path::from_bstr(rela_path) else {
            return self.builtin.status(entry, rela_path);
        };
        if std::fs::symlink_metadata(self.workdir.join(relative).join(".git")).is_err() {
            return Ok(None);
        }
        self.builtin.status(entry, rela_path)
    }
}

/// Runs `git_status`.
pub fn git_status(args: StatusArgs) -> Result<Output, Error> {
    let (repo, drivers) = repo::open_with_drivers(args.repo.as_deref())?;
    let head = repo.head().map_err(|e| fail("cannot read HEAD", e))?;
    let branch = head
        .referent_name()
        .map(|name| name.shorten().to_str_lossy().into_owned());
    let head_id = head.id().map(|id| id.detach());
    let upstream = match (head.referent_name(), head_id) {
        (Some(name), Some(id)) => upstream(&repo, name, id)?,
        _ => None,
    };

    let mut report = StatusReport {
        branch,
        head: head_id.map(|id| id.to_string()),
        upstream,
        staged: Vec::new(),
        unstaged: Vec::new(),
        untracked: Vec::new(),
        conflicted: Vec::new(),
        truncated: false,
        drivers_not_run: drivers,
    };
    let mut conflicted = HashSet::new();
    for item in items(&repo, args.untracked, None, None, true, true)? {
        use gix::status::index_worktree::Item as W;
        use gix::status::plumbing::index_as_worktree::{Change, EntryStatus};
        match item {
            gix::status::Item::TreeIndex(change) => {
                let change = diff::from_index_change(change);
                report.staged.push(path_change(&change));
            }
            gix::status::Item::IndexWorktree(W::Modification {
                rela_path, status, ..
            }) => {
                let path = show_path(rela_path.as_bstr());
                let status = match status {
                    EntryStatus::Conflict { .. } => {
                        if conflicted.insert(path.clone()) {
                            report.conflicted.push(path);
                        }
                        continue;
                    }
                    EntryStatus::Change(Change::Removed) => "deleted",
                    EntryStatus::Change(Change::Type { .. }) => "typechange",
                    EntryStatus::Change(Change::Modification { .. }) => "modified",
                    EntryStatus::Change(Change::SubmoduleModification(_)) => "modified",
                    EntryStatus::IntentToAdd => "added",
                    EntryStatus::NeedsUpdate(_) => continue,
                };
                report.unstaged.push(PathChange {
                    path,
                    old_path: None,
                    status: status.to_owned(),
                });
            }
            gix::status::Item::IndexWorktree(W::DirectoryContents { entry, .. }) => {
                if entry.status != gix::dir::entry::Status::Untracked {
                    continue;
                }
                let mut path = show_path(entry.rela_path.as_bstr());
                // A nested repository too is listed as a directory, as git lists it.
                if matches!(
                    entry.disk_kind,
                    Some(gix::dir::entry::Kind::Directory | gix::dir::entry::Kind::Repository)
                ) {
                    path.push('/');
                }
                report.untracked.push(path);
            }
            gix::status::Item::IndexWorktree(W::Rewrite { .. }) => {}
        }
    }
    // Conflicted paths also show up as index changes; list them once.
    report
        .staged
        .retain(|change| !conflicted.contains(&change.path));
    report.staged.sort_by(|a, b| a.path.cmp(&b.path));
    report.unstaged.sort_by(|a, b| a.path.cmp(&b.path));
    report.untracked.sort();
    report.conflicted.sort();
    let mut budget = repo::max_output_bytes() / 2;
    // Every list gets its chance, in the order they matter.
    let dropped = [
        repo::fit(&mut report.conflicted, &mut budget),
        repo::fit(&mut report.staged, &mut budget),
        repo::fit(&mut report.unstaged, &mut budget),
        repo::fit(&mut report.untracked, &mut budget),
    ];
    report.truncated = dropped.contains(&true);

    let text = render(&report);
    Output::structured(&report, text)
}

fn path_change(change: &diff::FileChange) -> PathChange {
    PathChange {
        path: show_path(change.path()),
        old_path: match change.kind {
            Kind::Renamed | Kind::Copied => {
                change.old.as_ref().map(|old| show_path(old.path.as_bstr()))
            }
            _ => None,
        },
        status: change.kind.name().to_owned(),
    }
}

fn render(report: &StatusReport) -> String {
    let mut text = Text::new(repo::max_output_bytes() / 2);
    let head = match (&report.branch, &report.head) {
        (Some(branch), Some(_)) => format!("On branch {branch}"),
        (Some(branch), None) => format!("On branch {branch} (no commits yet)"),
        (None, Some(id)) => format!("HEAD detached at {id}"),
        (None, None) => "HEAD unreadable".to_owned(),
    };
    text.push(&head);
    if let Some(upstream) = &report.upstream {
        text.push(&format!(
            "; upstream {}: ahead {}, behind {}",
            upstream.name, upstream.ahead, upstream.behind
        ));
    }
    text.push("\n");
    let sections: [(&str, Vec<String>); 4] = [
        ("Conflicted", report.conflicted.clone()),
        ("Staged", report.staged.iter().map(describe).collect()),
        ("Not staged", report.unstaged.iter().map(describe).collect()),
        ("Untracked", report.untracked.clone()),
    ];
    let mut clean = true;
    for (title, lines) in sections {
        if lines.is_empty() {
            continue;
        }
        clean = false;
        text.push(&format!("{title} ({}):\n", lines.len()));
        for line in lines {
            if !text.push(&format!("  {line}\n")) {
                break;
            }
        }
    }
    if clean {
        text.push("nothing to commit, working tree clean\n");
    }
    if report.truncated {
        text.push("(output cap reached: some paths are left out)\n");
    }
    if let Some(note) = repo::drivers_note(&report.drivers_not_run) {
        text.push(&note);
        text.push("\n");
    }
    text.finish("(output cap reached; the structured content has every path)")
}

fn describe(change: &PathChange) -> String {
    match &change.old_path {
        Some(old) => format!("{}: {old} -> {}", change.status, change.path),
        None => format!("{}: {}", change.status, change.path),
    }
}

/// The upstream of branch `name` and the ahead/behind counts of `head`
/// against it, if it has one that exists.
fn upstream(
    repo: &gix::Repository,
    name: &gix::refs::FullNameRef,
    head: ObjectId,
) -> Result<Option<Upstream>, Error> {
    let Some(Ok(tracking)) =
        repo.branch_remote_tracking_ref_name(name, gix::remote::Direction::Fetch)
    else {
        return Ok(None);
    };
    let Ok(Some(mut reference)) = repo.try_find_reference(tracking.as_ref()) else {
        return Ok(None);
    };
    let Ok(theirs) = reference.peel_to_id() else {
        return Ok(None);
    };
    let (ahead, behind) = ahead_behind(repo, head, theirs.detach()).map_err(|e| {
        fail(
            "cannot count the commits ahead of and behind the upstream",
            e,
        )
    })?;
    Ok(Some(Upstream {
        name: tracking.as_ref().shorten().to_str_lossy().into_owned(),
        ahead,
        behind,
    }))
}

/// Reached from HEAD.
const OURS: u8 = 1;
/// Reached from the upstream.
const THEIRS: u8 = 2;
const BOTH: u8 = OURS | THEIRS;
/// Put in the queue (once, ever).
const QUEUED: u8 = 4;
/// Taken out of the queue.
const DONE: u8 = 8;

/// How many commits `ours` has that `theirs` lacks, and the reverse, by
/// git's own walk (`ahead_behind()` in commit-reach.c): commits are taken
/// newest first (by generation number from the commit-graph file when it
/// has them, then by commit date), each marked with the tips that reach
/// it, and the walk stops as soon as every commit still queued is reached
/// from both: at the merge bases, never below them. Equal tips cost no walk
/// at all.
fn ahead_behind(
    repo: &gix::Repository,
    ours: ObjectId,
    theirs: ObjectId,
) -> Result<(u64, u64), gix::Error> {
    if ours == theirs {
        return Ok((0, 0));
    }
    // A missing or unreadable commit-graph only makes the walk slower.
    let cache = repo.commit_graph_if_enabled().ok().flatten();
    let mut graph = repo.revision_graph::<gix::revwalk::graph::Commit<u8>>(cache.as_ref());
    let mut queue = gix::revwalk::PriorityQueue::new();
    // Queued commits not yet reached from both tips: the walk goes on
    // while there is one.
    let mut live = 0usize;
    for (tip, side) in [(ours, OURS), (theirs, THEIRS)] {
        if let Some(commit) = graph.get_or_insert_full_commit(tip, |commit| commit.data |= side)?
            && commit.data & QUEUED == 0
        {
            commit.data |= QUEUED;
            queue.insert(key(commit), tip);
            live += 1;
        }
    }
    let (mut ahead, mut behind) = (0, 0);
    while live > 0 {
        let Some(id) = queue.pop_value() else {
            break;
        };
        let Some(commit) = graph.get_mut(&id) else {
            continue;
        };
        commit.data |= DONE;
        let side = commit.data & BOTH;
        match side {
            OURS => ahead += 1,
            THEIRS => behind += 1,
            _ => {}
        }
        if side != BOTH {
            live -= 1;
        }
        for parent in commit.parents.clone() {
            // A parent the repository lacks (a shallow clone) ends the line.
            graph.get_or_insert_full_commit(parent, |commit| {
                let before = commit.data;
                commit.data |= side;
                if before & QUEUED == 0 {
                    commit.data |= QUEUED;
                    queue.insert(key(commit), parent);
                    if side != BOTH {
                        live += 1;
                    }
                } else if before & DONE == 0 && before & BOTH != BOTH && commit.data & BOTH == BOTH
                {
                    live -= 1;
                }
            })?;
        }
    }
    Ok((ahead, behind))
}

/// The walk's order: generation number (unknown counts as newest, as git
/// counts it), then commit date.
fn key(commit: &gix::revwalk::graph::Commit<u8>) -> (u32, i64) {
    (commit.generation.unwrap_or(u32::MAX), commit.commit_time)
}
