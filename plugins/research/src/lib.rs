//! The `research` plugin: a registry of research techniques, and arXiv to fill it.
//!
//! The registry is a directory of TOML files, one technique each (`registry.rs`), and it is the
//! plugin's **first mount** in `plugins.toml`. Two tools work on it:
//! - `research_query` (`query.rs`, category `read`, read-only): search, group by status, count,
//!   and find overlapping techniques.
//! - `research_add` (`add.rs`, category `network`): fetch a paper's metadata from the arXiv API
//!   (`arxiv.rs`) and write a new `not-started` record. It needs the mount `rw` and the API's
//!   host in the plugin's `network` grant.
//!
//! Each technique is also a resource (`research://technique/{id}`), and the prompt
//! `review_technique` reviews one with its papers (`resources.rs`).
//!
//! A record file that does not parse is skipped and named in every result's warnings.
//!
//! Configuration (`[plugin.config]` in `plugins.toml`):
//! - `arxiv_base_url`: where the arXiv API is (default `https://export.arxiv.org`); requests go
//!   to `{arxiv_base_url}/api/query?id_list=<id>`, so its host (with the port, if not the
//!   scheme's default) must be in the plugin's `network` list.

use toolcell_sdk::{Category, Error, Tool};

mod add;
mod arxiv;
mod query;
mod registry;
mod resources;

fn tools() -> Vec<Tool> {
    vec![
        Tool::new("research_query", query::research_query)
            .title("Query the research registry")
            .description(
                "Query the registry of research techniques (one record per technique: id, name, \
                 description, arXiv papers, topic, tags, status, priority, complexity, \
                 dependencies, decision history). `action` is one of: `search` (needs `query`; \
                 ranks techniques by how many of its words occur in id, name, tags, topic or \
                 description, weighted in that order), `status` (techniques grouped by status), \
                 `stats` (counts by status, topic and priority), `overlap` (needs \
                 `technique_id`; techniques whose tags, topic and papers overlap it by a \
                 Jaccard similarity of at least `threshold`, default 0.3). `status` narrows \
                 every action to one status. Record files that do not parse are listed as \
                 warnings.",
            )
            .category(Category::Read)
            .output_schema::<query::QueryResult>()
            .read_only()
            .open_world(false),
        Tool::new("research_add", add::research_add)
            .title("Add a paper to the research registry")
            .description(
                "Fetch a paper's title, abstract, date and authors from arXiv by its identifier \
                 (such as 1810.04805) and add it to the registry as a new `not-started` \
                 technique. The id is derived from the title unless `technique_id` is given. A \
                 paper the registry already lists, or an id already taken, is refused. \
                 `dry_run` fetches the paper and shows the record without writing it.",
            )
            .category(Category::Network)
            .output_schema::<add::AddResult>()
            // It only ever creates a new file, and a second identical call is refused as a
            // duplicate, so repeating it changes nothing further.
            .destructive(false)
            .idempotent(true)
            .open_world(true),
    ]
}

toolcell_sdk::export_plugin! {
    tools: tools,
    resources: resources::resources,
    templates: resources::templates,
    prompts: resources::prompts,
}

/// The registry in the first mount, read whole.
fn open_registry() -> Result<registry::Registry, Error> {
    let Some(dir) = toolcell_sdk::fs::mounts().into_iter().next() else {
        return Err(Error::new(
            "the research plugin has no registry: mount the registry directory as the \
             plugin's first mount in plugins.toml",
        ));
    };
    registry::load(&dir).map_err(|e| Error::io(&dir, e))
}
