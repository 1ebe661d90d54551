//! The `git` plugin: read-only git tools over the repositories in the mounts.
//!
//! Every tool is in category `vcs`, read-only, idempotent and not
//! open-world. Repositories are read with [gix], compiled to wasm32-wasip2;
//! nothing is run (no hooks, filters, diff or textconv drivers, credential
//! helpers), and the sandbox's preopens keep every read inside the mounts,
//! whatever a repository's `alternates`, `gitdir:` files or symlinks say.
//!
//! Modules:
//! - [`repo`] opens a repository (isolated from system, global and
//!   environment configuration), resolves revisions and words the errors.
//! - [`log`] is `git_log`; [`refs`] is `git_branches`; [`show`] is
//!   `git_show`; [`status`] is `git_status`; [`blame`] is `git_blame`.
//! - [`diff`] is `git_diff`, and the changes and patch text `git_show` and
//!   `git_status` share.
//! - [`preload`] checks every tracked file's metadata in one host call before
//!   a status compares the working tree, as git's preload-index does.
//!
//! gix reads packs, indexes and the commit-graph through memmap2, which has
//! no WASI backend; this crate's workspace patches it with `memmap/`, which
//! reads the files into memory instead (see that crate's docs), and patches
//! gix-pack with `vendor/gix-pack/`, which reads a pack entry by entry instead of
//! whole (see its TOOLCELL.md; tested in `pack_reads`).

pub mod blame;
pub mod diff;
pub mod log;
pub mod preload;
pub mod refs;
pub mod renames;
pub mod repo;
pub mod show;
pub mod slider;
pub mod staged;
pub mod status;
pub mod untracked;
pub mod userdiff;

#[cfg(test)]
mod pack_reads;

use toolcell_sdk::{Category, Tool};

fn tools() -> Vec<Tool> {
    vec![
        Tool::new("git_log", log::git_log)
            .title("Git log")
            .description(
                "List commits reachable from `rev` (default HEAD: a branch, tag, id or `HEAD~3`), \
                 newest first by commit date as `git log` does: id, parents, author, dates and \
                 subject; the whole message when `max_count` is 1. `path` keeps the commits \
                 that changed that file or directory; with `follow`, a file's commits under its \
                 earlier names too (as `git log --follow`); `since` and \
                 `until` take dates such as `2024-05-01` or `2 weeks ago`; `author` and `grep` \
                 keep commits whose author or message contains the text (plain text, case \
                 sensitive). `skip` pages through long histories.",
            )
            .category(Category::Vcs)
            .output_schema::<log::LogReport>()
            .read_only()
            .open_world(false),
        Tool::new("git_branches", refs::git_branches)
            .title("Git branches")
            .description(
                "List the local branches (and remote-tracking ones with `remote`) and the tags, \
                 each with the commit it points at, and which branch HEAD is on (or the commit \
                 of a detached HEAD).",
            )
            .category(Category::Vcs)
            .output_schema::<refs::BranchesReport>()
            .read_only()
            .open_world(false),
        Tool::new("git_status", status::git_status)
            .title("Git status")
            .description(
                "Show the working tree's status: the branch and how far it is ahead of and \
                 behind its upstream, staged changes (renames included), changes not staged, \
                 untracked files (respecting .gitignore; a wholly untracked directory as one \
                 `dir/`; `untracked: false` leaves them out) and conflicted paths.",
            )
            .category(Category::Vcs)
            .output_schema::<status::StatusReport>()
            .read_only()
            .open_world(false),
        Tool::new("git_diff", diff::git_diff)
            .title("Git diff")
            .description(
                "Show changes as a unified diff, as `git diff` does: by default the working \
                 tree against the index (unstaged changes); `staged` for the index against HEAD; \
                 `from` and `to` for two revisions; `from` alone for that revision against the \
                 working tree (with `staged`, against the index). Renames are detected. `path` \
                 limits it to a file or directory, `context` sets the lines around each change \
                 (default 3), `stat` gives only the changed files with added and deleted line \
                 counts. \
                 Binary files are named, not shown. Long output stops at a cap with a note. \
                 No textconv, filters or external diff drivers are run.",
            )
            .category(Category::Vcs)
            .output_schema::<diff::DiffReport>()
            .read_only()
            .open_world(false),
        Tool::new("git_show", show::git_show)
            .title("Git show")
            .description(
                "Show a commit (`rev`: a branch, tag, id or `HEAD~2`) with its message and \
                 its diff against its parent; or, with `path`, that file's contents (or that \
                 directory's listing) as they are at `rev`.",
            )
            .category(Category::Vcs)
            .read_only()
            .open_world(false),
        Tool::new("git_blame", blame::git_blame)
            .title("Git blame")
            .description(
                "Show, for each line of a file as it is at `rev` (default HEAD), the commit \
                 that last changed it, with its author and date. `start_line` and `end_line` \
                 (1-based, inclusive) limit it to a range.",
            )
            .category(Category::Vcs)
            .output_schema::<blame::BlameReport>()
            .read_only()
            .open_world(false),
    ]
}

toolcell_sdk::export_plugin!(tools);
