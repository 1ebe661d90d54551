//! `git_show`: a commit with its diff, or a file at a revision.

use gix::bstr::ByteSlice;
use toolcell_sdk::schemars::JsonSchema;
use toolcell_sdk::serde::Deserialize;
use toolcell_sdk::{Error, Output};

use crate::diff::{self, Renderer};
use crate::log;
use crate::repo::{self, Text, fail};

/// Arguments of `git_show`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
pub struct ShowArgs {
    /// The repository: a working tree or bare repository inside a mount. Default: the first mount.
    repo: Option<String>,
    /// The commit: a branch, tag, id or expression such as `HEAD~2`.
    rev: String,
    /// A file (or directory) to show as it is at `rev`, relative to the working tree, instead
    /// of the commit.
    path: Option<String>,
}

/// Runs `git_show`.
pub fn git_show(args: ShowArgs) -> Result<Output, Error> {
    let repo = repo::open(args.repo.as_deref())?;
    let max = repo::max_output_bytes() / 2;
    if let Some(path) = &args.path {
        let commit = repo::commit(&repo, &args.rev)?;
        return show_path(&repo, &commit, &args.rev, path, max);
    }
    let mut text = Text::new(max);
    // Annotated tags first, as `git show` prints them, down to what they
    // name: a commit, or a blob or tree shown as such.
    let mut object = repo::object(&repo, &args.rev)?;
    while object.kind == gix::object::Kind::Tag {
        let tag = object.into_tag();
        let decoded = tag
            .decode()
            .map_err(|e| fail(&format!("cannot read the tag `{}`", args.rev), e))?;
        text.push(&format!("tag {}\n", decoded.name.to_str_lossy()));
        if let Ok(Some(tagger)) = decoded.tagger() {
            let date = tagger
                .time()
                .map(|time| repo::iso_time(&time))
                .unwrap_or_default();
            text.push(&format!(
                "Tagger: {} <{}>\nDate:   {date}\n",
                tagger.name.to_str_lossy(),
                tagger.email.to_str_lossy()
            ));
        }
        text.push(&format!(
            "\n{}\n",
            decoded.message.to_str_lossy().trim_end()
        ));
        let target = decoded.target();
        object = repo
            .find_object(target)
            .map_err(|e| fail(&format!("cannot read the object {target}"), e))?;
    }
    match object.kind {
        gix::object::Kind::Blob => {
            let data = object.detach().data;
            let name = format!("`{}`", args.rev);
            let shown = show_blob(&name, &data, max.saturating_sub(text.len()));
            return Ok(Output::text(text.finish("") + &shown));
        }
        gix::object::Kind::Tree => {
            let tree = object.into_tree();
            let listing = list_tree(&tree, &args.rev, max.saturating_sub(text.len()))?;
            return Ok(Output::text(text.finish("") + &listing));
        }
        _ => {}
    }
    if !text.is_empty() {
        text.push("\n");
    }
    let commit = object
        .try_into_commit()
        .map_err(|e| fail(&format!("`{}` does not name a commit", args.rev), e))?;
    let info = log::describe(&commit, true)?;
    text.push(&format!("commit {}\n", info.id));
    if info.parents.len() > 1 {
        text.push(&format!("Merge: {}\n", info.parents.join(" ")));
    }
    text.push(&format!(
        "Author: {} <{}>\nDate:   {}\n\n    {}\n",
        info.author_name, info.author_email, info.author_date, info.subject
    ));
    if let Some(body) = info.body.as_deref().filter(|body| !body.is_empty()) {
        text.push("\n");
        for line in body.lines() {
            text.push(&format!("    {line}\n"));
        }
    }
    text.push("\n");
    let parents: Vec<_> = commit.parent_ids().collect();
    if parents.len() > 1 {
        text.push(&format!(
            "(a merge: no diff shown; use git_diff with from={} to={} for the changes it brought \
             to its first parent)\n",
            parents[0], info.id
        ));
        return Ok(Output::text(text.finish("")));
    }
    // A parent missing at the edge of a shallow clone: show the commit as a root.
    let parent = parents
        .first()
        .and_then(|id| repo.find_commit(id.detach()).ok());
    let changes = diff::tree_changes(&repo, parent.as_ref(), &commit, None)?;
    let mut renderer = Renderer::new(&repo, 3, max.saturating_sub(text.len()));
    renderer.patch(&changes)?;
    let note = format!(
        "(output cap reached: the diff stops here; {} files changed in all; use git_diff with \
         `path` for one file)",
        changes.len()
    );
    let diff_text = renderer.text.finish(&note);
    let mut text = text.finish("");
    text.push_str(&diff_text);
    Ok(Output::text(text))
}

fn show_path(
    repo: &gix::Repository,
    commit: &gix::Commit<'_>,
    rev: &str,
    path: &str,
    max: usize,
) -> Result<Output, Error> {
    let rela = repo::repo_path(repo, path)?;
    let tree = commit
        .tree()
        .map_err(|e| fail(&format!("cannot read the tree of `{rev}`"), e))?;
    let object = if rela.is_empty() {
        tree.detach().data
    } else {
        let entry = tree
            .lookup_entry_by_path(rela.to_path_lossy())
            .map_err(|e| fail(&format!("cannot read the tree of `{rev}`"), e))?
            .ok_or_else(|| Error::new(format!("`{rela}` does not exist at `{rev}`")))?;
        if entry.mode().is_commit() {
            return Ok(Output::text(format!(
                "`{rela}` is a submodule at commit {}\n",
                entry.object_id()
            )));
        }
        let object = entry
            .object()
            .map_err(|e| fail(&format!("cannot read `{rela}` at `{rev}`"), e))?;
        if object.kind == gix::object::Kind::Tree {
            let tree = object.into_tree();
            return Ok(Output::text(list_tree(&tree, &rela.to_str_lossy(), max)?));
        }
        object.detach().data
    };
    if rela.is_empty() {
        let tree = repo
            .find_tree(
                commit
                    .tree_id()
                    .map_err(|e| fail("cannot read a commit", e))?,
            )
            .map_err(|e| fail("cannot read a tree", e))?;
        let _ = object;
        return Ok(Output::text(list_tree(&tree, "", max)?));
    }
    Ok(Output::text(show_blob(
        &format!("`{rela}` at `{rev}`"),
        &object,
        max,
    )))
}

/// A blob's contents as text, up to `max` bytes; a binary one (`name` says
/// what it is) described instead.
fn show_blob(name: &str, object: &[u8], max: usize) -> String {
    if diff::is_binary(object) {
        return format!(
            "{name} is a binary file of {} bytes; not shown\n",
            object.len()
        );
    }
    let contents = String::from_utf8_lossy(object);
    if contents.len() <= max {
        return contents.into_owned();
    }
    let mut end = max;
    while !contents.is_char_boundary(end) {
        end -= 1;
    }
    let shown = &contents[..end];
    let lines = shown.lines().count();
    format!(
        "{shown}\n(output cap reached: the first {end} of {} bytes, {lines} lines, are shown)\n",
        contents.len()
    )
}

fn list_tree(tree: &gix::Tree<'_>, prefix: &str, max: usize) -> Result<String, Error> {
    let mut text = Text::new(max);
    let title = if prefix.is_empty() { "." } else { prefix };
    text.push(&format!("tree {title}:\n"));
    for entry in tree.iter() {
        let entry = entry.map_err(|e| fail("cannot read a tree", e))?;
        let slash = if entry.mode().is_tree() { "/" } else { "" };
        if !text.push(&format!("  {}{slash}\n", entry.filename().to_str_lossy())) {
            break;
        }
    }
    Ok(text.finish("(output cap reached; the listing stops here)"))
}
