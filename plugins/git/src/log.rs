//! `git_log`: commits reachable from a revision, newest first.
//!
//! The walk is git's default order: a queue by committer date, newest
//! first. With `path`, history is simplified as `git log -- <path>` does: a
//! commit is shown when the path differs from its parent; a merge that
//! leaves the path as one parent had it is not shown, and only that parent
//! is followed. With `follow`, the walk is `git log --follow`'s instead: no
//! simplification, every commit whose diff with its parent touches the path
//! (merges are not shown), and from a commit that renamed the file on, its
//! earlier name.
//!
//! A walk along a path looks at many more commits than it shows. It takes
//! their dates, trees and parents from the repository's commit-graph file
//! when there is one and git would use it, as git's walk does, and reads
//! from the object database only the commits it shows and those the graph
//! does not hold (written since).

use std::collections::{BinaryHeap, HashMap, HashSet};

use gix::ObjectId;
use gix::bstr::{BString, ByteSlice};
use toolcell_sdk::schemars::JsonSchema;
use toolcell_sdk::serde::{Deserialize, Serialize};
use toolcell_sdk::{Error, Output};

use crate::renames;
use crate::repo::{self, Text, fail, iso_time};

/// Arguments of `git_log`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
pub struct LogArgs {
    /// The repository: a working tree or bare repository inside a mount. Default: the first mount.
    repo: Option<String>,
    /// Where the history starts: a branch, tag, commit id or expression such as `HEAD~3`.
    /// Default `HEAD`.
    rev: Option<String>,
    /// The most commits to return. Default 20.
    #[schemars(range(min = 1, max = 10000))]
    max_count: Option<u64>,
    /// Commits to skip before the first one returned. Default 0.
    skip: Option<u64>,
    /// Only commits that changed this file or directory (relative to the working tree).
    path: Option<String>,
    /// With `path` naming a file: follow it across renames, listing the commits that changed it
    /// under its earlier names too (as `git log --follow`). Default false.
    #[serde(default)]
    follow: bool,
    /// Only commits committed at or after this date: `2024-05-01`, `2024-05-01T12:00:00Z`,
    /// `2 weeks ago`.
    since: Option<String>,
    /// Only commits committed at or before this date (same forms as `since`).
    until: Option<String>,
    /// Only commits whose author (`Name <email>`) contains this text.
    author: Option<String>,
    /// Only commits whose message contains this text.
    grep: Option<String>,
}

/// What `git_log` returns.
#[derive(Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub struct LogReport {
    /// The commits, newest first.
    pub commits: Vec<CommitInfo>,
    /// Whether more commits matched than were returned.
    pub more: bool,
}

/// One commit.
#[derive(Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub struct CommitInfo {
    /// The full commit id.
    pub id: String,
    /// The parents' ids.
    pub parents: Vec<String>,
    /// The author's name.
    pub author_name: String,
    /// The author's email.
    pub author_email: String,
    /// When it was authored, ISO 8601.
    pub author_date: String,
    /// The committer's name.
    pub committer_name: String,
    /// When it was committed, ISO 8601.
    pub committer_date: String,
    /// The first line of the message.
    pub subject: String,
    /// The rest of the message, when one commit was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
}

/// Runs `git_log`.
pub fn git_log(args: LogArgs) -> Result<Output, Error> {
    let mut repo = repo::open(args.repo.as_deref())?;
    if args.path.is_some() {
        // A walk along a path remembers what it reads of each commit and tree (see `Walk`), and
        // reads each of them once: the object cache would only copy thousands of them in and out
        // (a quarter of a 50-commit `path` log on the git project's history). Of the delta base
        // cache it needs only the bases that consecutive trees share: a 2 MiB cache holds them,
        // and filling the 16 MiB that other tools use paged in memory for nothing (a 50-commit
        // `path` log on the git project's history took 49-54 ms with 2 MiB, 60-64 with 16).
        repo.object_cache_size(0);
        repo.objects.set_pack_cache(|| {
            Box::new(gix::odb::pack::cache::lru::MemoryCappedHashmap::new(
                2 << 20,
            ))
        });
    }
    let rev = args.rev.as_deref().unwrap_or("HEAD");
    let tip = repo::commit(&repo, rev)?;
    let path = args
        .path
        .as_deref()
        .map(|path| repo::repo_path(&repo, path))
        .transpose()?;
    let since = args.since.as_deref().map(parse_date).transpose()?;
    let until = args.until.as_deref().map(parse_date).transpose()?;
    let max = usize::try_from(args.max_count.unwrap_or(20)).unwrap_or(usize::MAX);
    let mut skip = args.skip.unwrap_or(0);
    let with_body = max == 1;

    let mut walk = Walk::new(&repo, tip.id, path, args.follow)?;
    let mut commits = Vec::new();
    let mut more = false;
    while let Some(commit) = walk.next()? {
        let committed = commit.time().map_err(|e| fail("cannot read a commit", e))?;
        if until.is_some_and(|until| committed.seconds > until) {
            continue;
        }
        if since.is_some_and(|since| committed.seconds < since) {
            continue;
        }
        let info = describe(&commit, with_body)?;
        if let Some(author) = &args.author {
            let who = format!("{} <{}>", info.author_name, info.author_email);
            if !who.contains(author.as_str()) {
                continue;
            }
        }
        if let Some(grep) = &args.grep {
            let message = commit.message_raw_sloppy();
            if !message.contains_str(grep.as_bytes()) {
                continue;
            }
        }
        if skip > 0 {
            skip -= 1;
            continue;
        }
        if commits.len() == max {
            more = true;
            break;
        }
        commits.push(info);
    }

    let mut budget = repo::max_output_bytes() / 2;
    if repo::fit(&mut commits, &mut budget) {
        more = true;
    }
    let mut text = Text::new(repo::max_output_bytes() / 2);
    let mut shown = 0;
    for commit in &commits {
        let piece = if with_body {
            long_form(commit)
        } else {
            format!(
                "{} {} {} <{}> {}\n",
                commit.id,
                commit.author_date,
                commit.author_name,
                commit.author_email,
                commit.subject
            )
        };
        if !text.push(&piece) {
            break;
        }
        shown += 1;
    }
    if commits.is_empty() {
        text.push("no commits match\n");
    } else if more && !text.truncated {
        text.push(&format!(
            "(more commits follow; call again with skip={} for the next ones)\n",
            args.skip.unwrap_or(0) + commits.len() as u64
        ));
    }
    let truncated = text.truncated;
    commits.truncate(shown);
    let report = LogReport {
        commits,
        more: more || truncated,
    };
    let text = text.finish(&format!(
        "(output cap reached after {shown} commits; call again with skip={} for the next ones)",
        args.skip.unwrap_or(0) + shown as u64
    ));
    Output::structured(&report, text)
}

fn long_form(commit: &CommitInfo) -> String {
    let mut text = format!("commit {}\n", commit.id);
    if commit.parents.len() > 1 {
        text.push_str(&format!("Merge: {}\n", commit.parents.join(" ")));
    }
    text.push_str(&format!(
        "Author: {} <{}>\nDate:   {}\n\n    {}\n",
        commit.author_name, commit.author_email, commit.author_date, commit.subject
    ));
    if let Some(body) = commit.body.as_deref().filter(|body| !body.is_empty()) {
        text.push('\n');
        for line in body.lines() {
            text.push_str(&format!("    {line}\n"));
        }
    }
    text
}

/// The facts about `commit` that `git_log` reports.
pub fn describe(commit: &gix::Commit<'_>, with_body: bool) -> Result<CommitInfo, Error> {
    let author = commit
        .author()
        .map_err(|e| fail("cannot read a commit", e))?;
    let committer = commit
        .committer()
        .map_err(|e| fail("cannot read a commit", e))?;
    let author_time = author.time().map_err(|e| fail("cannot read a commit", e))?;
    let committer_time = committer
        .time()
        .map_err(|e| fail("cannot read a commit", e))?;
    let message = commit
        .message()
        .map_err(|e| fail("cannot read a commit", e))?;
    let body = with_body.then(|| {
        message
            .body
            .map(|body| body.to_str_lossy().trim_end().to_owned())
            .unwrap_or_default()
    });
    Ok(CommitInfo {
        id: commit.id.to_string(),
        parents: commit.parent_ids().map(|id| id.to_string()).collect(),
        author_name: author.name.to_str_lossy().into_owned(),
        author_email: author.email.to_str_lossy().into_owned(),
        author_date: iso_time(&author_time),
        committer_name: committer.name.to_str_lossy().into_owned(),
        committer_date: iso_time(&committer_time),
        subject: subject(commit.message_raw_sloppy()),
        body,
    })
}

/// The subject as git's `%s` gives it: the first paragraph of the message
/// (after any blank lines), each line without its trailing whitespace,
/// joined with spaces; leading whitespace is kept.
pub fn subject(message: &gix::bstr::BStr) -> String {
    let lines = message
        .lines()
        .map(|line| line.trim_end())
        .skip_while(|line| line.is_empty())
        .take_while(|line| !line.is_empty());
    let mut subject = Vec::new();
    for line in lines {
        if !subject.is_empty() {
            subject.push(b' ');
        }
        subject.extend_from_slice(line);
    }
    subject.to_str_lossy().into_owned()
}

/// `input` as seconds since the epoch. A date alone (`2024-05-01`) takes
/// the current time of day, as git's date parsing does: `since: 2024-05-01`
/// at 15:00 means from 15:00 that day, not from midnight.
fn parse_date(input: &str) -> Result<i64, Error> {
    let now = gix::date::Zoned::now();
    let time = gix::date::parse(input, Some(now.clone())).map_err(|e| {
        Error::new(format!(
            "cannot read the date `{input}` ({e}); use a form such as `2024-05-01`, \
             `2024-05-01T12:00:00Z` or `2 weeks ago`"
        ))
    })?;
    if !is_date_only(input) {
        return Ok(time.seconds);
    }
    // gix reads a date alone as midnight UTC; git as that day in the local
    // time zone at the current time of day.
    let offset = i64::from(now.offset().seconds());
    let time_of_day = (now.timestamp().as_second() + offset).rem_euclid(86_400);
    Ok(time.seconds - offset + time_of_day)
}

/// Whether `input` is a date without a time: `YYYY-MM-DD`.
fn is_date_only(input: &str) -> bool {
    let bytes = input.trim().as_bytes();
    bytes.len() == 10
        && bytes.iter().enumerate().all(|(index, byte)| match index {
            4 | 7 => *byte == b'-',
            _ => byte.is_ascii_digit(),
        })
}

/// A walk in git's default order: newest committer date first, ties in
/// the order the commits were queued.
struct Walk<'r> {
    repo: &'r gix::Repository,
    queue: BinaryHeap<(i64, std::cmp::Reverse<u64>, ObjectId)>,
    seen: HashSet<ObjectId>,
    queued: u64,
    path: Option<BString>,
    /// Whether `path` changes to a file's earlier name at a rename.
    follow: bool,
    /// What the walk has read of each commit, so that each is decoded once
    /// however often it is asked about (as itself, and for each child).
    known: HashMap<ObjectId, Known>,
    /// The entry at `path` in the commits the walk has looked at.
    entries: HashMap<ObjectId, Entry>,
    /// The entry at the rest of `path` in the trees the walk has read, by depth (the number of
    /// components already taken) and tree id: consecutive commits mostly share the trees along
    /// the path, and each is read once.
    subtrees: HashMap<(usize, ObjectId), Entry>,
    /// The commit-graph, for a walk along a path (see the module's docs).
    graph: Option<gix::commitgraph::Graph>,
}

/// A commit as the walk needs it: its committer time, tree and parents.
#[derive(Clone)]
struct Known {
    time: i64,
    tree: ObjectId,
    parents: Vec<ObjectId>,
}

/// The mode and id of a tree entry, if there is one.
type Entry = Option<(gix::object::tree::EntryMode, ObjectId)>;

impl<'r> Walk<'r> {
    fn new(
        repo: &'r gix::Repository,
        tip: ObjectId,
        path: Option<BString>,
        follow: bool,
    ) -> Result<Self, Error> {
        let mut walk = Walk {
            repo,
            queue: BinaryHeap::new(),
            seen: HashSet::new(),
            queued: 0,
            path,
            follow,
            known: HashMap::new(),
            entries: HashMap::new(),
            subtrees: HashMap::new(),
            graph: None,
        };
        if walk.path.is_some() {
            walk.graph = commit_graph(repo);
        }
        walk.enqueue(tip)?;
        Ok(walk)
    }

    /// The time, tree and parents of commit `id`, read once.
    fn known(&mut self, id: ObjectId) -> Result<Known, Error> {
        if let Some(known) = self.known.get(&id) {
            return Ok(known.clone());
        }
        if let Some(known) = self.graph.as_ref().and_then(|graph| from_graph(graph, id)) {
            self.known.insert(id, known.clone());
            return Ok(known);
        }
        let unreadable = |e: &dyn std::error::Error| fail(&format!("cannot read commit {id}"), e);
        let commit = self.repo.find_commit(id).map_err(|e| unreadable(&e))?;
        let known = Known {
            time: commit.time().map_err(|e| unreadable(&e))?.seconds,
            tree: commit.tree_id().map_err(|e| unreadable(&e))?.detach(),
            parents: commit.parent_ids().map(|id| id.detach()).collect(),
        };
        self.known.insert(id, known.clone());
        Ok(known)
    }

    fn enqueue(&mut self, id: ObjectId) -> Result<(), Error> {
        if !self.seen.insert(id) {
            return Ok(());
        }
        let time = self.known(id)?.time;
        self.queue.push((time, std::cmp::Reverse(self.queued), id));
        self.queued += 1;
        Ok(())
    }

    /// Commit `id`, to show.
    fn commit(&self, id: ObjectId) -> Result<gix::Commit<'r>, Error> {
        self.repo
            .find_commit(id)
            .map_err(|e| fail(&format!("cannot read commit {id}"), e))
    }

    /// The next commit to show.
    fn next(&mut self) -> Result<Option<gix::Commit<'r>>, Error> {
        if self.follow
            && let Some(path) = self.path.clone()
        {
            return self.next_followed(path);
        }
        while let Some((_, _, id)) = self.queue.pop() {
            let known = self.known(id)?;
            let Some(path) = self.path.clone() else {
                for parent in known.parents {
                    self.enqueue_parent(parent)?;
                }
                return self.commit(id).map(Some);
            };
            let mine = self.entry_of(id, known.tree, &path)?;
            let mut same_as = None;
            for parent in &known.parents {
                // A shallow clone's boundary: the parent is not there.
                let theirs = match self.entries.get(parent) {
                    Some(entry) => *entry,
                    None if self.has_commit(*parent) => {
                        let tree = self.known(*parent)?.tree;
                        self.entry_of(*parent, tree, &path)?
                    }
                    None => None,
                };
                if theirs == mine {
                    same_as = Some(*parent);
                    break;
                }
            }
            match same_as {
                Some(parent) => self.enqueue_parent(parent)?,
                None => {
                    let root = known.parents.is_empty();
                    for parent in known.parents {
                        self.enqueue_parent(parent)?;
                    }
                    if !(root && mine.is_none()) {
                        return self.commit(id).map(Some);
                    }
                }
            }
        }
        Ok(None)
    }

    /// The next commit to show when following `path` across renames, as
    /// `git log --follow` walks: no history simplification (git turns
    /// pruning off, since the path changes), every parent of every commit
    /// is walked, and a commit is shown when its diff with its parent
    /// touches the path. Merges are not shown (git's log does not diff
    /// them without `-m`). When a commit adds the path as a file, git's
    /// rename and copy search for that one destination runs, and a source
    /// found switches the path for the rest of the walk, on every branch,
    /// as git's one pathspec does.
    fn next_followed(&mut self, mut path: BString) -> Result<Option<gix::Commit<'r>>, Error> {
        while let Some((_, _, id)) = self.queue.pop() {
            let known = self.known(id)?;
            for parent in &known.parents {
                self.enqueue_parent(*parent)?;
            }
            if known.parents.len() > 1 {
                continue;
            }
            let mine = self.entry_of(id, known.tree, &path)?;
            // A root commit, or a shallow clone's boundary (git grafts it
            // as a root), is compared with the empty tree.
            let parent = known
                .parents
                .first()
                .copied()
                .filter(|parent| self.has_commit(*parent));
            let theirs = match parent {
                Some(parent) => {
                    let tree = self.known(parent)?.tree;
                    self.entry_of(parent, tree, &path)?
                }
                None => None,
            };
            if mine == theirs {
                continue;
            }
            let commit = self.commit(id)?;
            if let (Some((mode, _)), None, Some(parent)) = (mine, theirs, parent)
                && (mode.is_blob() || mode.is_link())
                && let Some(earlier) =
                    renames::followed_from(self.repo, &self.commit(parent)?, &commit, &path)?
            {
                path = earlier.path;
                self.path = Some(path.clone());
                self.entries.clear();
                self.subtrees.clear();
            }
            return Ok(Some(commit));
        }
        Ok(None)
    }

    /// The mode and id of the entry at `path` in commit `id`, whose tree is
    /// `tree`, remembered for the walk (a commit is asked about once as
    /// itself and once for each child) until the path changes.
    fn entry_of(&mut self, id: ObjectId, tree: ObjectId, path: &BString) -> Result<Entry, Error> {
        if let Some(entry) = self.entries.get(&id) {
            return Ok(*entry);
        }
        let entry = self
            .entry_in(tree, path)
            .map_err(|e| fail(&format!("cannot read the tree of {id}"), e))?;
        self.entries.insert(id, entry);
        Ok(entry)
    }

    /// The entry at `path` in tree `root`, reading only the trees along the path that the walk
    /// has not read before.
    fn entry_in(&mut self, root: ObjectId, path: &BString) -> Result<Entry, gix::Error> {
        if path.is_empty() {
            return Ok(Some((gix::object::tree::EntryKind::Tree.into(), root)));
        }
        let components: Vec<&[u8]> = path.split(|byte| *byte == b'/').collect();
        let mut visited = Vec::new();
        let mut tree = root;
        let mut entry = None;
        for (depth, component) in components.iter().enumerate() {
            if let Some(known) = self.subtrees.get(&(depth, tree)) {
                entry = *known;
                break;
            }
            visited.push((depth, tree));
            let object = self.repo.find_object(tree)?;
            let found = gix::objs::TreeRefIter::from_bytes(&object.data, self.repo.object_hash())
                .filter_map(Result::ok)
                .find(|item| item.filename == *component)
                .map(|item| (item.mode, item.oid.to_owned()));
            entry = found;
            match found {
                Some((mode, id)) if mode.is_tree() && depth + 1 < components.len() => tree = id,
                Some(_) if depth + 1 < components.len() => {
                    entry = None;
                    break;
                }
                _ => break,
            }
        }
        for key in visited {
            self.subtrees.insert(key, entry);
        }
        Ok(entry)
    }

    /// Whether commit `id` is in the repository (a commit-graph holds only commits that are).
    fn has_commit(&self, id: ObjectId) -> bool {
        self.known.contains_key(&id)
            || self
                .graph
                .as_ref()
                .is_some_and(|graph| graph.lookup(id).is_some())
            || self.repo.has_object(id)
    }

    /// Queues `parent`, unless it is missing (the edge of a shallow clone).
    fn enqueue_parent(&mut self, parent: ObjectId) -> Result<(), Error> {
        if self.has_commit(parent) {
            self.enqueue(parent)
        } else {
            Ok(())
        }
    }
}

/// The repository's commit-graph, when git would walk with it: `core.commitGraph` is not off,
/// no object is replaced, the repository is not shallow (git turns it off for all three). A
/// graph that cannot be read (or a shallow file) is no graph: the walk reads the commits instead.
fn commit_graph(repo: &gix::Repository) -> Option<gix::commitgraph::Graph> {
    if repo.is_shallow().unwrap_or(true) {
        return None;
    }
    repo.commit_graph_if_enabled().ok().flatten()
}

/// What the graph says of commit `id`, if it holds it. A parent position the graph cannot
/// resolve makes it answer nothing, and the commit is read instead.
fn from_graph(graph: &gix::commitgraph::Graph, id: ObjectId) -> Option<Known> {
    let commit = graph.commit_by_id(id)?;
    let parents = commit
        .iter_parents()
        .map(|position| {
            position
                .ok()
                .map(|position| graph.id_at(position).to_owned())
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Known {
        time: i64::try_from(commit.committer_timestamp()).ok()?,
        tree: commit.root_tree_id().to_owned(),
        parents,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_are_gits_percent_s() {
        let subject = |text: &str| subject(text.into());
        assert_eq!(
            subject("  indented  \nsecond\n\nbody\n"),
            "  indented second"
        );
        assert_eq!(subject("\n\n one\n"), " one");
        assert_eq!(subject(""), "");
    }

    #[test]
    fn only_a_bare_date_takes_the_time_of_day() {
        assert!(is_date_only("2024-05-01"));
        assert!(!is_date_only("2024-05-01T12:00:00Z"));
        assert!(!is_date_only("2 weeks ago"));
        assert!(!is_date_only("20240501"));
    }
}
