//! `git_blame`: who last changed each line of a file, as of a revision.

use std::collections::{BinaryHeap, HashMap, HashSet};

use gix::ObjectId;
use gix::bstr::{BStr, BString, ByteSlice};
use gix::diff::blob::InternedInput;
use toolcell_sdk::schemars::JsonSchema;
use toolcell_sdk::serde::{Deserialize, Serialize};
use toolcell_sdk::{Error, Output};

use crate::renames;
use crate::repo::{self, Text, fail, iso_time};
use crate::slider;

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
    let (start, end) = (args.start_line.unwrap_or(1), args.end_line);
    if let Some(end) = end
        && end < start
    {
        return Err(Error::new(format!(
            "`end_line` ({end}) is before `start_line` ({start})"
        )));
    }
    let blob = blob_at(&commit, path.as_ref())?.ok_or_else(|| {
        Error::new(format!(
            "`{path}` is not a file at `{rev}`; `path` is relative to the working tree"
        ))
    })?;
    let contents = repo
        .find_object(blob)
        .map_err(|e| fail(&format!("cannot read `{path}` at `{rev}`"), e))?
        .detach()
        .data;
    let all_lines: Vec<&[u8]> = contents.lines_with_terminator().collect();
    let total = u32::try_from(all_lines.len()).unwrap_or(u32::MAX);
    if total == 0 {
        return Output::structured(
            &BlameReport {
                hunks: Vec::new(),
                commits: Vec::new(),
                truncated: false,
            },
            String::new(),
        );
    }
    if start > total {
        return Err(Error::new(format!(
            "`start_line` ({start}) is past the end of `{path}` ({total} lines)"
        )));
    }
    let end = end.unwrap_or(total).min(total);
    let origins = walk(&repo, commit.id, path.clone(), blob, start - 1..end)
        .map_err(|e| Error::new(format!("cannot blame `{path}` at `{rev}`: {}", e.message())))?;

    let mut commits: HashMap<ObjectId, BlameCommit> = HashMap::new();
    let mut hunks: Vec<BlameHunk> = Vec::new();
    let mut text = Text::new(repo::max_output_bytes() / 2);
    let mut previous: Option<&Origin> = None;
    for (index, origin) in origins.iter().enumerate() {
        let line_number = start + index as u32;
        let who = match commits.entry(origin.commit) {
            std::collections::hash_map::Entry::Occupied(known) => known.into_mut(),
            std::collections::hash_map::Entry::Vacant(new) => {
                new.insert(describe(&repo, origin.commit)?)
            }
        };
        // One hunk per run of lines from one commit that were adjacent
        // there too, as git groups them.
        let continues = previous.is_some_and(|before| {
            before.commit == origin.commit
                && before.path == origin.path
                && before.line + 1 == origin.line
        });
        match hunks.last_mut() {
            Some(hunk) if continues => hunk.lines += 1,
            _ => hunks.push(BlameHunk {
                start_line: line_number,
                lines: 1,
                commit: origin.commit.to_string(),
                original_path: (origin.path != path).then(|| repo::show_path(origin.path.as_ref())),
            }),
        }
        previous = Some(origin);
        if text.truncated {
            continue;
        }
        let short = origin.commit.to_hex_with_len(8).to_string();
        let date = who.date.get(..10).unwrap_or(&who.date);
        let line = all_lines[line_number as usize - 1].to_str_lossy();
        let line = line.trim_end_matches(['\n', '\r']);
        text.push(&format!(
            "{short} ({} {date} {line_number}) {line}\n",
            who.author
        ));
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

/// Where a line of the blamed file comes from: the commit that last changed
/// it, the file's path there and the line's index (0-based) in that version.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Origin {
    commit: ObjectId,
    path: BString,
    line: u32,
}

/// Lines not placed yet: each as its index in a commit's version of the
/// file and its index in the result, sorted.
type Lines = Vec<(u32, u32)>;

/// A commit that has lines not placed yet, and its version of the file.
struct Suspect {
    blob: ObjectId,
    /// The trees from the commit's root down to the file's directory: a
    /// parent whose tree on that path is one of these has the same file
    /// without reading further (git's tree diff prunes the same way).
    trees: Vec<ObjectId>,
    lines: Lines,
}

/// Where the file is in a parent: its path, version and trees there.
type Source = (BString, ObjectId, Vec<ObjectId>);

/// git's blame: the commit, its version of the file and the `wanted` lines
/// of it start as the one suspect. Suspects are taken newest first by commit
/// time. A suspect passes every line to the first parent with the same
/// version of the file, and otherwise, parent by parent, the lines a diff
/// shows unchanged; the lines no parent takes were changed by the suspect.
/// A parent without the file is searched for a rename, only when no parent
/// has the same version (as git does); a shallow clone's edge commits count
/// as having no parents, as git counts them.
///
/// Each step reads the commits and the trees along the path until one is the
/// child's own (most steps read one commit and one root tree). Only the two
/// versions being compared are held at a time: memory grows with the lines
/// in flight, not with the file's history.
fn walk(
    repo: &gix::Repository,
    tip: ObjectId,
    path: BString,
    blob: ObjectId,
    wanted: std::ops::Range<u32>,
) -> Result<Vec<Origin>, Error> {
    let shallow: HashSet<ObjectId> = repo
        .shallow_commits()
        .map_err(|e| fail("cannot read the shallow clone's edge", e))?
        .map(|edge| edge.iter().copied().collect())
        .unwrap_or_default();
    let mut placed: Vec<Option<Origin>> = vec![None; wanted.len()];
    let mut pending: HashMap<(ObjectId, BString), Suspect> = HashMap::new();
    let mut queue: BinaryHeap<(i64, ObjectId, BString)> = BinaryHeap::new();
    let first = wanted.start;
    let tip_commit = repo
        .find_commit(tip)
        .map_err(|e| fail(&format!("cannot read commit {tip}"), e))?;
    let trees = locate(repo, &tip_commit, path.as_ref(), None)?
        .map(|(_, trees)| trees)
        .unwrap_or_default();
    pending.insert(
        (tip, path.clone()),
        Suspect {
            blob,
            trees,
            lines: wanted.map(|line| (line, line - first)).collect(),
        },
    );
    queue.push((commit_time(&tip_commit)?, tip, path));
    let mut last: Option<(ObjectId, Vec<u8>)> = None;

    'suspects: while let Some((_, id, path)) = queue.pop() {
        let Some(suspect) = pending.remove(&(id, path.clone())) else {
            continue;
        };
        let commit = repo
            .find_commit(id)
            .map_err(|e| fail(&format!("cannot read commit {id}"), e))?;
        let parents: Vec<ObjectId> = if shallow.contains(&id) {
            Vec::new()
        } else {
            commit.parent_ids().map(|parent| parent.detach()).collect()
        };
        // Where the file is in each parent, by its path alone; the first
        // parent with this very version takes every line.
        let mut sources: Vec<(gix::Commit<'_>, Option<Source>)> = Vec::with_capacity(parents.len());
        for parent_id in &parents {
            let parent = repo
                .find_commit(*parent_id)
                .map_err(|e| fail(&format!("cannot read commit {parent_id}"), e))?;
            let known = (suspect.trees.as_slice(), suspect.blob);
            let source = locate(repo, &parent, path.as_ref(), Some(known))?
                .map(|(blob, trees)| (path.clone(), blob, trees));
            if let Some((from, blob, trees)) = source.as_ref()
                && *blob == suspect.blob
            {
                let time = commit_time(&parent)?;
                let to = Target {
                    parent: *parent_id,
                    time,
                    path: from,
                    blob: *blob,
                    trees,
                };
                hand_over(&mut pending, &mut queue, to, suspect.lines);
                continue 'suspects;
            }
            sources.push((parent, source));
        }
        // A parent without the file: a rename, searched for only now (a
        // merge of a branch from before a rename usually takes the file from
        // the other parent, and then nothing is searched).
        for (parent, source) in &mut sources {
            if source.is_none()
                && let Some(earlier) = renames::renamed_from(repo, parent, &commit, &path)?
            {
                let trees = locate(repo, parent, earlier.path.as_ref(), None)?
                    .map(|(_, trees)| trees)
                    .unwrap_or_default();
                *source = Some((earlier.path, earlier.id, trees));
            }
        }
        let mut lines = suspect.lines;
        if sources.iter().any(|(_, source)| source.is_some()) {
            // Along a line of history, this version was the parent's side of
            // the previous comparison: read it once.
            let ours = match last.take() {
                Some((id, data)) if id == suspect.blob => data,
                _ => repo::read_blob(repo, suspect.blob)?,
            };
            for (parent, source) in sources {
                let Some((from, blob, trees)) = source else {
                    continue;
                };
                if lines.is_empty() {
                    break;
                }
                let theirs = repo::read_blob(repo, blob)?;
                let (kept, taken) = unchanged_in(&theirs, &ours, lines);
                lines = kept;
                let time = commit_time(&parent)?;
                let to = Target {
                    parent: parent.id,
                    time,
                    path: &from,
                    blob,
                    trees: &trees,
                };
                hand_over(&mut pending, &mut queue, to, taken);
                last = Some((blob, theirs));
            }
        }
        for (line, result) in lines {
            placed[result as usize] = Some(Origin {
                commit: id,
                path: path.clone(),
                line,
            });
        }
    }
    placed
        .into_iter()
        .map(|origin| origin.ok_or_else(|| Error::new("a line was left without a commit")))
        .collect()
}

/// The blob at `path` in `commit`'s tree, if it is a file there, and the
/// trees from the root down to its directory. With `known` (the trees and
/// blob of the same path in another commit), a tree on the way that is one
/// of those gives that blob without reading further.
fn locate(
    repo: &gix::Repository,
    commit: &gix::Commit<'_>,
    path: &BStr,
    known: Option<(&[ObjectId], ObjectId)>,
) -> Result<Option<(ObjectId, Vec<ObjectId>)>, Error> {
    let unreadable = |e: &dyn std::fmt::Display| {
        Error::new(format!("cannot read the tree of {}: {e}", commit.id))
    };
    let parts: Vec<&[u8]> = path.split(|byte| *byte == b'/').collect();
    let mut id = commit.tree_id().map_err(|e| unreadable(&e))?.detach();
    let mut trees = Vec::with_capacity(parts.len());
    for (depth, part) in parts.iter().enumerate() {
        if let Some((known_trees, blob)) = known
            && known_trees.len() == parts.len()
            && known_trees[depth] == id
        {
            trees.extend_from_slice(&known_trees[depth..]);
            return Ok(Some((blob, trees)));
        }
        trees.push(id);
        let tree = repo.find_tree(id).map_err(|e| unreadable(&e))?;
        let Some(entry) = tree.find_entry(*part) else {
            return Ok(None);
        };
        let mode = entry.mode();
        let entry_id = entry.object_id();
        if depth + 1 == parts.len() {
            return Ok((mode.is_blob() || mode.is_link()).then_some((entry_id, trees)));
        }
        if !mode.is_tree() {
            return Ok(None);
        }
        id = entry_id;
    }
    Ok(None)
}

/// The suspect that lines are handed to.
struct Target<'a> {
    parent: ObjectId,
    time: i64,
    path: &'a BString,
    blob: ObjectId,
    trees: &'a [ObjectId],
}

/// Gives `lines` to the suspect `to`, queueing it if it is new.
fn hand_over(
    pending: &mut HashMap<(ObjectId, BString), Suspect>,
    queue: &mut BinaryHeap<(i64, ObjectId, BString)>,
    to: Target<'_>,
    mut lines: Lines,
) {
    if lines.is_empty() {
        return;
    }
    match pending.entry((to.parent, to.path.clone())) {
        std::collections::hash_map::Entry::Occupied(mut known) => {
            let known = known.get_mut();
            known.lines.append(&mut lines);
            known.lines.sort_unstable();
        }
        std::collections::hash_map::Entry::Vacant(new) => {
            new.insert(Suspect {
                blob: to.blob,
                trees: to.trees.to_vec(),
                lines,
            });
            queue.push((to.time, to.parent, to.path.clone()));
        }
    }
}

/// Splits `lines` of `new` (sorted by their index in `new`) into those a
/// line diff from `old` shows changed, and those it shows unchanged, the
/// latter with their index in `old`.
fn unchanged_in(old: &[u8], new: &[u8], lines: Lines) -> (Lines, Lines) {
    // git's blame diffs without context, so it cuts the common tail first;
    // the lines past the cut stay unchanged, shifted as those before it.
    let (old, new) = slider::trim_common_tail(old, new);
    let input = InternedInput::new(old, new);
    let diff = slider::line_diff(&input);
    let mut hunks = diff.hunks().peekable();
    // Lines after the hunks passed so far sit this far from their old place.
    let mut shift: i64 = 0;
    let (mut changed, mut unchanged) = (Vec::new(), Vec::new());
    for (line, result) in lines {
        while let Some(hunk) = hunks.next_if(|hunk| hunk.after.end <= line) {
            shift = i64::from(hunk.before.end) - i64::from(hunk.after.end);
        }
        match hunks.peek() {
            Some(hunk) if hunk.after.start <= line => changed.push((line, result)),
            _ => unchanged.push(((i64::from(line) + shift) as u32, result)),
        }
    }
    (changed, unchanged)
}

/// The blob at `path` in `commit`'s tree, if it is a file there.
fn blob_at(commit: &gix::Commit<'_>, path: &BStr) -> Result<Option<ObjectId>, Error> {
    let tree = commit
        .tree()
        .map_err(|e| fail(&format!("cannot read the tree of {}", commit.id), e))?;
    let entry = tree
        .lookup_entry(path.split(|byte| *byte == b'/'))
        .map_err(|e| fail(&format!("cannot read the tree of {}", commit.id), e))?;
    Ok(entry
        .filter(|entry| entry.mode().is_blob() || entry.mode().is_link())
        .map(|entry| entry.object_id()))
}

fn commit_time(commit: &gix::Commit<'_>) -> Result<i64, Error> {
    commit
        .time()
        .map(|time| time.seconds)
        .map_err(|e| fail(&format!("cannot read commit {}", commit.id), e))
}

fn describe(repo: &gix::Repository, id: ObjectId) -> Result<BlameCommit, Error> {
    let commit = repo
        .find_commit(id)
        .map_err(|e| fail(&format!("cannot read commit {id}"), e))?;
    let author = commit
        .author()
        .map_err(|e| fail("cannot read a commit", e))?;
    let time = author.time().map_err(|e| fail("cannot read a commit", e))?;
    let subject = crate::log::subject(commit.message_raw_sloppy());
    Ok(BlameCommit {
        id: id.to_string(),
        author: author.name.to_str_lossy().into_owned(),
        date: iso_time(&time),
        subject,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blames a file of a real clone natively and prints the time:
    /// `TOOLCELL_BLAME_REPO=/path/to/clone TOOLCELL_BLAME_PATH=builtin/log.c
    /// cargo test --release --manifest-path plugins/git/Cargo.toml -- --ignored
    /// --nocapture blame_a_real_history`.
    #[test]
    #[ignore = "needs a clone named by TOOLCELL_BLAME_REPO"]
    fn blame_a_real_history() -> Result<(), Error> {
        let (Ok(dir), Ok(path)) = (
            std::env::var("TOOLCELL_BLAME_REPO"),
            std::env::var("TOOLCELL_BLAME_PATH"),
        ) else {
            return Ok(());
        };
        let mut repo = gix::open_opts(&dir, gix::open::Options::isolated())
            .map_err(|e| fail("cannot open", e))?;
        repo.object_cache_size_if_unset(16 * 1024 * 1024);
        repo.objects.set_pack_cache(|| {
            Box::new(gix::odb::pack::cache::lru::MemoryCappedHashmap::new(
                24 * 1024 * 1024,
            ))
        });
        let commit = repo::commit(&repo, "HEAD")?;
        let path = BString::from(path);
        let blob = blob_at(&commit, path.as_ref())?.ok_or_else(|| Error::new("no such file"))?;
        let lines = repo::read_blob(&repo, blob)?
            .lines_with_terminator()
            .count() as u32;
        let start = std::time::Instant::now();
        let origins = walk(&repo, commit.id, path, blob, 0..lines)?;
        let commits: HashSet<ObjectId> = origins.iter().map(|origin| origin.commit).collect();
        eprintln!(
            "{lines} lines, {} commits, {:?}",
            commits.len(),
            start.elapsed()
        );
        for origin in &origins {
            println!("{} {}", origin.commit, origin.line + 1);
        }
        Ok(())
    }
}
