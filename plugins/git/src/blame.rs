//! `git_blame`: who last changed each line of a file, as of a revision.

use std::collections::{BinaryHeap, HashMap, HashSet};

use gix::ObjectId;
use gix::bstr::{BStr, BString, ByteSlice};
use gix::diff::blob::{Algorithm, Diff, InternedInput};
use toolcell_sdk::schemars::JsonSchema;
use toolcell_sdk::serde::{Deserialize, Serialize};
use toolcell_sdk::{Error, Output};

use crate::diff;
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
    lines: Lines,
}

/// git's blame: the commit, its version of the file and the `wanted` lines
/// of it start as the one suspect. Suspects are taken newest first by commit
/// time. A suspect passes every line to a parent with the same version of
/// the file, and otherwise, parent by parent, the lines a diff shows
/// unchanged; the lines no parent takes were changed by the suspect. A
/// parent without the file is searched for a rename; a shallow clone's edge
/// commits count as having no parents, as git counts them.
///
/// Only the two versions being compared are held at a time: memory grows
/// with the lines in flight, not with the file's history.
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
    pending.insert(
        (tip, path.clone()),
        Suspect {
            blob,
            lines: wanted.map(|line| (line, line - first)).collect(),
        },
    );
    queue.push((commit_time(repo, tip)?, tip, path));
    let mut last: Option<(ObjectId, Vec<u8>)> = None;

    while let Some((_, id, path)) = queue.pop() {
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
        // Where the file is in each parent: its path and version there.
        let mut sources = Vec::with_capacity(parents.len());
        for parent_id in &parents {
            let parent = repo
                .find_commit(*parent_id)
                .map_err(|e| fail(&format!("cannot read commit {parent_id}"), e))?;
            let source = match blob_at(&parent, path.as_ref())? {
                Some(blob) => Some((path.clone(), blob)),
                None => diff::renamed_from(repo, &parent, &commit, &path)?
                    .map(|earlier| (earlier.path, earlier.id)),
            };
            sources.push((*parent_id, source));
        }
        // The same version in a parent: everything came from there.
        if let Some((parent, Some((from, blob)))) = sources.iter().find(|(_, source)| {
            source
                .as_ref()
                .is_some_and(|(_, blob)| *blob == suspect.blob)
        }) {
            hand_over(
                repo,
                &mut pending,
                &mut queue,
                *parent,
                from,
                *blob,
                suspect.lines,
            )?;
            continue;
        }
        let mut lines = suspect.lines;
        if sources.iter().any(|(_, source)| source.is_some()) {
            // Along a line of history, this version was the parent's side of
            // the previous comparison: read it once.
            let ours = match last.take() {
                Some((id, data)) if id == suspect.blob => data,
                _ => read_blob(repo, suspect.blob)?,
            };
            for (parent, source) in sources {
                let Some((from, blob)) = source else { continue };
                if lines.is_empty() {
                    break;
                }
                let theirs = read_blob(repo, blob)?;
                let (kept, taken) = unchanged_in(&theirs, &ours, lines);
                lines = kept;
                hand_over(repo, &mut pending, &mut queue, parent, &from, blob, taken)?;
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

/// Gives `lines` to the suspect `parent` (with the file at `path` as `blob`),
/// queueing it if it is new.
fn hand_over(
    repo: &gix::Repository,
    pending: &mut HashMap<(ObjectId, BString), Suspect>,
    queue: &mut BinaryHeap<(i64, ObjectId, BString)>,
    parent: ObjectId,
    path: &BString,
    blob: ObjectId,
    mut lines: Lines,
) -> Result<(), Error> {
    if lines.is_empty() {
        return Ok(());
    }
    match pending.entry((parent, path.clone())) {
        std::collections::hash_map::Entry::Occupied(mut known) => {
            let known = known.get_mut();
            known.lines.append(&mut lines);
            known.lines.sort_unstable();
        }
        std::collections::hash_map::Entry::Vacant(new) => {
            new.insert(Suspect { blob, lines });
            queue.push((commit_time(repo, parent)?, parent, path.clone()));
        }
    }
    Ok(())
}

/// Splits `lines` of `new` (sorted by their index in `new`) into those a
/// line diff from `old` shows changed, and those it shows unchanged, the
/// latter with their index in `old`.
fn unchanged_in(old: &[u8], new: &[u8], lines: Lines) -> (Lines, Lines) {
    let input = InternedInput::new(old, new);
    let mut diff = Diff::compute(Algorithm::Myers, &input);
    diff.postprocess_lines(&input);
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

fn read_blob(repo: &gix::Repository, id: ObjectId) -> Result<Vec<u8>, Error> {
    Ok(repo
        .find_object(id)
        .map_err(|e| fail(&format!("cannot read blob {id}"), e))?
        .detach()
        .data)
}

fn commit_time(repo: &gix::Repository, id: ObjectId) -> Result<i64, Error> {
    repo.find_commit(id)
        .and_then(|commit| Ok(commit.time()?.seconds))
        .map_err(|e| fail(&format!("cannot read commit {id}"), e))
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
