//! `git_blame`: who last changed each line of a file, as of a revision.

use std::collections::HashMap;

use gix::ObjectId;
use gix::bstr::ByteSlice;
use toolcell_sdk::schemars::JsonSchema;
use toolcell_sdk::serde::{Deserialize, Serialize};
use toolcell_sdk::{Error, Output};

use crate::repo::{self, Text, fail, iso_time};

/// Arguments of `git_blame`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
pub struct BlameArgs {
    /// The repository: a working tree or bare repository inside a mount. Default: the first mount.
    repo: Option<String>,
    /// The file, relative to the working tree.
    path: String,
    /// The revision whose version of the file is blamed. Default `HEAD`.
    rev: Option<String>,
    /// The first line to blame (1-based). Default 1.
    #[schemars(range(min = 1))]
    start_line: Option<u32>,
    /// The last line to blame (inclusive). Default: the end of the file.
    #[schemars(range(min = 1))]
    end_line: Option<u32>,
}

/// What `git_blame` returns.
#[derive(Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub struct BlameReport {
    /// Runs of consecutive lines last changed by the same commit, in file order.
    pub hunks: Vec<BlameHunk>,
    /// The commits named by the hunks.
    pub commits: Vec<BlameCommit>,
    /// Whether the output cap cut the text, or left hunks or commits out.
    pub truncated: bool,
}

/// Consecutive lines last changed by one commit.
#[derive(Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub struct BlameHunk {
    /// The first line, 1-based, in the blamed file.
    pub start_line: u32,
    /// How many lines.
    pub lines: u32,
    /// The commit that last changed them.
    pub commit: String,
    /// Their path in that commit, when the file had another name there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original_path: Option<String>,
}

/// A commit named by the blame.
#[derive(Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub struct BlameCommit {
    /// The full id.
    pub id: String,
    /// The author's name.
    pub author: String,
    /// When it was authored, ISO 8601.
    pub date: String,
    /// The first line of its message.
    pub subject: String,
}

/// Runs `git_blame`.
pub fn git_blame(args: BlameArgs) -> Result<Output, Error> {
    let repo = repo::open(args.repo.as_deref())?;
    let rev = args.rev.as_deref().unwrap_or("HEAD");
    let commit = repo::commit(&repo, rev)?;
    let path = repo::repo_path(&repo, &args.path)?;
    if path.is_empty() {
        return Err(Error::new("`path` must name a file"));
    }
    let mut options = gix::repository::blame_file::Options::default();
    if args.start_line.is_some() || args.end_line.is_some() {
        let start = args.start_line.unwrap_or(1);
        let end = args.end_line.unwrap_or(u32::MAX);
        if end < start {
            return Err(Error::new(format!(
                "`end_line` ({end}) is before `start_line` ({start})"
            )));
        }
        options.ranges = gix::blame::BlameRanges::from_one_based_inclusive_range(start..=end)
            .map_err(|e| fail("invalid line range", e))?;
    }
    options.since = shallow_edge(&repo)?;
    let outcome = repo
        .blame_file(path.as_bstr(), commit.id, options)
        .map_err(|e| fail(&format!("cannot blame `{path}` at `{rev}`"), e))?;

    let mut commits: HashMap<ObjectId, BlameCommit> = HashMap::new();
    let mut hunks = Vec::new();
    let mut text = Text::new(repo::max_output_bytes() / 2);
    for (entry, lines) in outcome.entries_with_lines() {
        let who = match commits.entry(entry.commit_id) {
            std::collections::hash_map::Entry::Occupied(known) => known.into_mut(),
            std::collections::hash_map::Entry::Vacant(new) => {
                new.insert(describe(&repo, entry.commit_id)?)
            }
        };
        let start = entry.start_in_blamed_file + 1;
        hunks.push(BlameHunk {
            start_line: start,
            lines: entry.len.get(),
            commit: entry.commit_id.to_string(),
            original_path: entry
                .source_file_name
                .as_ref()
                .map(|name| name.to_str_lossy().into_owned()),
        });
        if text.truncated {
            continue;
        }
        let short = entry.commit_id.to_hex_with_len(8).to_string();
        let date = who.date.get(..10).unwrap_or(&who.date);
        for (offset, line) in lines.iter().enumerate() {
            let line = line.to_str_lossy();
            let line = line.trim_end_matches(['\n', '\r']);
            let piece = format!(
                "{short} ({} {date} {}) {line}\n",
                who.author,
                start as usize + offset
            );
            if !text.push(&piece) {
                break;
            }
        }
    }
    let mut commits: Vec<BlameCommit> = commits.into_values().collect();
    commits.sort_by(|a, b| b.date.cmp(&a.date).then_with(|| a.id.cmp(&b.id)));
    let truncated = text.truncated;
    let text = text
        .finish("(output cap reached: call again with `start_line` and `end_line` for the rest)");
    Output::structured(
        &BlameReport {
            hunks,
            commits,
            truncated,
        },
        text,
    )
}

/// In a shallow clone, the time just after the newest commit at its edge:
/// blame stops there (the edge's parents are not in the repository) and
/// gives the lines it has not placed yet to the commit where it stopped, as
/// git does. (A commit older than the newest edge on another line of history
/// stops the blame too.)
fn shallow_edge(repo: &gix::Repository) -> Result<Option<gix::date::Time>, Error> {
    let Ok(Some(edge)) = repo.shallow_commits() else {
        return Ok(None);
    };
    let mut newest = None;
    for id in edge.iter() {
        let Ok(commit) = repo.find_commit(*id) else {
            continue;
        };
        let time = commit.time().map_err(|e| fail("cannot read a commit", e))?;
        newest = newest.max(Some(time.seconds));
    }
    Ok(newest.map(|seconds| gix::date::Time::new(seconds + 1, 0)))
}

fn describe(repo: &gix::Repository, id: ObjectId) -> Result<BlameCommit, Error> {
    let commit = repo
        .find_commit(id)
        .map_err(|e| fail(&format!("cannot read commit {id}"), e))?;
    let author = commit
        .author()
        .map_err(|e| fail("cannot read a commit", e))?;
    let time = author.time().map_err(|e| fail("cannot read a commit", e))?;
    let subject = commit
        .message()
        .map(|message| message.summary().to_str_lossy().into_owned())
        .unwrap_or_default();
    Ok(BlameCommit {
        id: id.to_string(),
        author: author.name.to_str_lossy().into_owned(),
        date: iso_time(&time),
        subject,
    })
}
