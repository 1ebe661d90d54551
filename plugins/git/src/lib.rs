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
//! - [`log`] is `git_log`.
//!
//! gix reads packs, indexes and the commit-graph through memmap2, which has
//! no WASI backend; this crate's workspace patches it with `memmap/`, which
//! reads the files into memory instead (see that crate's docs).

pub mod log;
pub mod repo;

use toolcell_sdk::{Category, Tool};

fn tools() -> Vec<Tool> {
    vec![
        Tool::new("git_log", log::git_log)
            .title("Git log")
            .description(
                "List commits reachable from `rev` (default HEAD), newest first: id, parents, \
                 author, dates and subject.",
            )
            .category(Category::Vcs)
            .read_only()
            .open_world(false),
    ]
}

toolcell_sdk::export_plugin!(tools);
