//! `git_branches`: branches and tags, what each points at, and the current one.

use gix::bstr::ByteSlice;
use toolcell_sdk::schemars::JsonSchema;
use toolcell_sdk::serde::{Deserialize, Serialize};
use toolcell_sdk::{Error, Output};

use crate::repo::{self, Text, fail};

/// Arguments of `git_branches`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
pub struct BranchesArgs {
    /// The repository: a working tree or bare repository inside a mount. Default: the first mount.
    repo: Option<String>,
    /// Also list remote-tracking branches (`origin/main`). Default false.
    #[serde(default)]
    remote: bool,
}

/// What `git_branches` returns.
#[derive(Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub struct BranchesReport {
    /// The branch HEAD is on, or null when HEAD is detached.
    pub current: Option<String>,
    /// The commit HEAD points at; null in a repository with no commits yet.
    pub head: Option<String>,
    /// Local branches (and remote-tracking ones with `remote`), sorted by name.
    pub branches: Vec<Ref>,
    /// Tags, sorted by name.
    pub tags: Vec<Ref>,
    /// Whether some were left out to stay under the output cap.
    pub truncated: bool,
}

/// A branch or tag.
#[derive(Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub struct Ref {
    /// The short name: `main`, `origin/main`, `v1.0`.
    pub name: String,
    /// The commit it points at (an annotated tag is peeled to it; a tag can also name a tree or
    /// a blob, whose id this is then).
    pub commit: Option<String>,
    /// Whether this is a remote-tracking branch.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub remote: bool,
    /// The branch a symbolic ref names, such as `origin/main` for `origin/HEAD` (which
    /// `git branch -r` shows as `origin/HEAD -> origin/main`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub points_to: Option<String>,
}

/// Runs `git_branches`.
pub fn git_branches(args: BranchesArgs) -> Result<Output, Error> {
    let repo = repo::open(args.repo.as_deref())?;
    let head = repo.head().map_err(|e| fail("cannot read HEAD", e))?;
    let current = head
        .referent_name()
        .map(|name| name.shorten().to_str_lossy().into_owned());
    let head_id = head.id().map(|id| id.to_string());
    let platform = repo
        .references()
        .map_err(|e| fail("cannot read the references", e))?;

    let mut branches = Vec::new();
    let locals = platform
        .local_branches()
        .map_err(|e| fail("cannot read the branches", e))?;
    collect(locals, false, &mut branches)?;
    if args.remote {
        let remotes = platform
            .remote_branches()
            .map_err(|e| fail("cannot read the remote branches", e))?;
        collect(remotes, true, &mut branches)?;
    }
    let mut tags = Vec::new();
    let tag_refs = platform
        .tags()
        .map_err(|e| fail("cannot read the tags", e))?;
    collect(tag_refs, false, &mut tags)?;
    branches.sort_by(|a, b| (a.remote, &a.name).cmp(&(b.remote, &b.name)));
    tags.sort_by(|a, b| a.name.cmp(&b.name));
    let mut budget = repo::max_output_bytes() / 2;
    let truncated = [
        repo::fit(&mut branches, &mut budget),
        repo::fit(&mut tags, &mut budget),
    ]
    .contains(&true);

    let mut text = Text::new(repo::max_output_bytes() / 2);
    match (&current, &head_id) {
        (Some(name), Some(id)) => text.push(&format!("HEAD: {name} at {id}\n")),
        (Some(name), None) => text.push(&format!("HEAD: {name} (no commits yet)\n")),
        (None, Some(id)) => text.push(&format!("HEAD: detached at {id}\n")),
        (None, None) => text.push("HEAD: unreadable\n"),
    };
    text.push(&format!("branches ({}):\n", branches.len()));
    for branch in &branches {
        let marker = if !branch.remote && current.as_deref() == Some(branch.name.as_str()) {
            "* "
        } else {
            "  "
        };
        let kind = if branch.remote { "remote " } else { "" };
        let arrow = branch
            .points_to
            .as_deref()
            .map(|target| format!(" -> {target}"))
            .unwrap_or_default();
        text.push(&format!(
            "{marker}{kind}{}{arrow} {}\n",
            branch.name,
            branch.commit.as_deref().unwrap_or("(unresolved)")
        ));
    }
    text.push(&format!("tags ({}):\n", tags.len()));
    for tag in &tags {
        text.push(&format!(
            "  {} {}\n",
            tag.name,
            tag.commit.as_deref().unwrap_or("(unresolved)")
        ));
    }
    if truncated {
        text.push("(output cap reached: some branches or tags are left out)\n");
    }
    let text = text.finish("(output cap reached; the listing stops here)");
    let report = BranchesReport {
        current,
        head: head_id,
        branches,
        tags,
        truncated,
    };
    Output::structured(&report, text)
}

fn collect<'r, E: std::error::Error>(
    refs: impl Iterator<Item = Result<gix::Reference<'r>, E>>,
    remote: bool,
    into: &mut Vec<Ref>,
) -> Result<(), Error> {
    for reference in refs {
        let mut reference = reference.map_err(|e| fail("cannot read a reference", e))?;
        let name = reference.name().shorten().to_str_lossy().into_owned();
        // A symbolic ref such as `origin/HEAD` is listed with what it
        // names, as `git branch -r` lists it.
        let points_to = match reference.target() {
            gix::refs::TargetRef::Symbolic(target) => {
                Some(target.shorten().to_str_lossy().into_owned())
            }
            gix::refs::TargetRef::Object(_) => None,
        };
        // The peeled id packed-refs records when it has one (git's `^` lines), so that listing
        // a thousand tags reads no object; otherwise tags are read until one names a non-tag.
        let commit = reference.peel_to_id().ok().map(|id| id.to_string());
        into.push(Ref {
            name,
            commit,
            remote,
            points_to,
        });
    }
    Ok(())
}
