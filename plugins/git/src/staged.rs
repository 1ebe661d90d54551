//! The staged changes: a tree (HEAD's by default) against the index, renames
//! included.
//!
//! gix turns the whole tree into an index (reading every tree object of the
//! commit) and compares the two indexes entry by entry. Git does less: the
//! index's cache tree records, per directory, the tree its entries would
//! write and how many entries that is, and a directory whose record is valid
//! and names the commit's own tree for it holds no staged change, so git
//! never opens it. [`changes`] does the same: it reads only the trees of
//! directories the cache tree does not vouch for, and hands gix's index diff
//! those trees' entries and the index's entries outside the vouched
//! directories. The diff tracks renames as before: a rename pairs a deletion
//! with an addition, and neither can lie in a vouched directory. With three
//! files staged in the git project that is three or four trees and a few
//! hundred entries instead of several hundred trees and 4,800 entries twice.

use std::borrow::Cow;
use std::ops::Range;

use foldhash::HashMap;
use gix::ObjectId;
use gix::bstr::{BStr, BString, ByteSlice, ByteVec};
use gix::index::State;
use gix::index::entry::{Flags, Mode, Stat};
use gix::index::extension::Tree as CacheTree;
use gix::objs::tree::EntryKind;

/// The changes from `tree` to `index` whose paths `patterns` match (all when
/// empty), in gix's status items.
pub fn changes(
    repo: &gix::Repository,
    tree: ObjectId,
    index: &State,
    patterns: &[BString],
) -> Result<Vec<gix::status::Item>, gix::Error> {
    // The common case of a clean index, with nothing to set up.
    if vouched(index.tree(), tree, index, BStr::new("")).is_some() {
        return Ok(Vec::new());
    }
    let (lhs, skipped) = unvouched_tree(repo, tree, index)?;
    let rhs = unvouched_index(index, skipped);
    let pathspec = repo
        .pathspec(
            false,
            patterns,
            true,
            index,
            gix::worktree::stack::state::attributes::Source::WorktreeThenIdMapping,
        )?
        .detach()?;
    let gix::PathspecDetached {
        mut stack,
        mut search,
        odb,
    } = pathspec;
    let mut resource_cache = repo.diff_resource_cache_for_tree_diff()?;
    let mut items = Vec::new();
    gix::diff::index(
        &lhs,
        &rhs,
        |change| {
            items.push(gix::status::Item::TreeIndex(change.into_owned()));
            Ok(gix::diff::index::Action::Continue(()))
        },
        Some(gix::diff::index::RewriteOptions {
            resource_cache: &mut resource_cache,
            find: repo,
            rewrites: gix::diff::Rewrites::default(),
        }),
        &mut search,
        &mut |path, case, is_dir, out| {
            let Some(stack) = stack.as_mut() else {
                return false;
            };
            let mode = if is_dir { Mode::DIR } else { Mode::FILE };
            stack
                .set_case(case)
                .at_entry(path, Some(mode), &odb)
                .is_ok_and(|platform| platform.matching_attributes(out))
        },
    )?;
    Ok(items)
}

/// The entries of `tree` outside the directories that `index`'s cache tree
/// vouches for, as an index (entries without stat data, as gix's
/// `State::from_tree` makes them), and the ranges of `index`'s entries in
/// those directories, in order. Only the trees of other directories are read.
fn unvouched_tree(
    repo: &gix::Repository,
    tree: ObjectId,
    index: &State,
) -> Result<(State, Vec<Range<usize>>), gix::Error> {
    let mut out = State::new(repo.object_hash());
    let mut skipped = Vec::new();
    let validate = gix::validate::path::component::Options::default();
    // Trees still to add, with their cache-tree record (if the index has
    // one for that directory) and their path with a trailing `/`.
    let mut pending: Vec<(ObjectId, Option<&CacheTree>, BString)> =
        vec![(tree, index.tree(), BString::default())];
    while let Some((tree, cache, prefix)) = pending.pop() {
        if let Some(range) = vouched(cache, tree, index, prefix.as_bstr()) {
            skipped.push(range);
            continue;
        }
        let children: HashMap<&[u8], &CacheTree> = cache
            .map(|cache| {
                cache
                    .children
                    .iter()
                    .map(|child| (child.name.as_slice(), child))
                    .collect()
            })
            .unwrap_or_default();
        let object = repo.find_tree(tree)?;
        for entry in object.iter() {
            let entry = entry?;
            let kind = entry.mode().kind();
            gix::validate::path::component(
                entry.filename(),
                (kind == EntryKind::Link).then_some(gix::validate::path::component::Mode::Symlink),
                validate,
            )
            .map_err(gix::Error::from_error)?;
            let mut path = prefix.clone();
            path.push_str(entry.filename());
            let mode = match kind {
                EntryKind::Tree => {
                    let child = children.get(entry.filename().as_bytes()).copied();
                    path.push(b'/');
                    pending.push((entry.object_id(), child, path));
                    continue;
                }
                EntryKind::Blob => Mode::FILE,
                EntryKind::BlobExecutable => Mode::FILE_EXECUTABLE,
                EntryKind::Link => Mode::SYMLINK,
                EntryKind::Commit => Mode::COMMIT,
            };
            out.dangerously_push_entry(
                Stat::default(),
                entry.object_id(),
                Flags::empty(),
                mode,
                path.as_bstr(),
            );
        }
    }
    out.sort_entries();
    // The vouched directories are never nested in one another: the walk
    // stops at each.
    skipped.sort_by_key(|range| range.start);
    Ok((out, skipped))
}

/// `index` without its entries in the `skipped` ranges (sorted, disjoint).
fn unvouched_index(index: &State, skipped: Vec<Range<usize>>) -> Cow<'_, State> {
    if skipped.is_empty() {
        return Cow::Borrowed(index);
    }
    let mut out = State::new(index.object_hash());
    let entries = index.entries();
    let mut from = 0;
    for range in skipped
        .into_iter()
        .chain(std::iter::once(entries.len()..entries.len()))
    {
        for entry in entries.get(from..range.start).unwrap_or_default() {
            out.dangerously_push_entry(
                entry.stat,
                entry.id,
                entry.flags,
                entry.mode,
                entry.path(index),
            );
        }
        from = range.end;
    }
    Cow::Owned(out)
}

/// The range of index entries of directory `prefix` (empty for the root,
/// else ending in `/`) when its cache-tree record says they write exactly `tree`: the
/// record is valid, names `tree`, and counts as many entries as the index
/// has there, none of them conflicted or only intended to be added.
fn vouched(
    cache: Option<&CacheTree>,
    tree: ObjectId,
    index: &State,
    prefix: &BStr,
) -> Option<Range<usize>> {
    let cache = cache?;
    let count = usize::try_from(cache.num_entries?).ok()?;
    if cache.id != tree {
        return None;
    }
    let range = index.prefixed_entries_range(prefix)?;
    let clean = index.entries()[range.clone()]
        .iter()
        .all(|entry| entry.stage_raw() == 0 && !entry.flags.contains(Flags::INTENT_TO_ADD));
    (range.len() == count && clean).then_some(range)
}
