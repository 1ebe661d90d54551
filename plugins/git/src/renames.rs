//! Renames, as git finds them: the limit on how many files are compared pair by pair, the
//! pairing of same-named files past it, the rename search for one file that `git_blame` and
//! `git_log`'s `follow` make at a commit whose parent lacks it, and git's similarity estimate
//! that decides them all.

use gix::ObjectId;
use gix::bstr::{BString, ByteSlice};
use toolcell_sdk::Error;

use crate::diff::{FileChange, Kind, S_IFMT, Side, commit_tree, entry_mode, is_binary, within};
use crate::repo::{fail, read_blob};

/// Rename detection as git configures it: `diff.renameLimit` (default 1000)
/// bounds the files compared pair by pair.
pub fn rewrites(repo: &gix::Repository) -> gix::diff::Rewrites {
    let mut rewrites = gix::diff::Rewrites::default();
    if let Ok(Some(limit)) = repo.config_snapshot().try_integer("diff.renameLimit") {
        rewrites.limit = usize::try_from(limit).unwrap_or(0);
    }
    rewrites
}

/// How similar, in percent, two files with the same name must be for
/// [`pair_basenames`] to pair them: git's, halfway from the rename
/// threshold (50%) to 100%.
const BASENAME_SIMILARITY: u32 = 75;

/// The changes within `path`, as git gives them for `git diff -- path`:
/// git limits the files to `path` before it looks for renames, so a rename
/// from outside `path` is an addition, and one to outside it a deletion.
pub fn limit_to(changes: Vec<FileChange>, path: Option<&BString>) -> Vec<FileChange> {
    let inside = |side: &Option<Side>| {
        side.as_ref()
            .is_some_and(|side| within(side.path.as_bstr(), path))
    };
    let mut kept = Vec::new();
    for mut change in changes {
        match (inside(&change.old), inside(&change.new)) {
            (true, true) => kept.push(change),
            (false, false) => {}
            (false, true) => {
                if change.old.is_some() {
                    change.kind = Kind::Added;
                    change.old = None;
                    change.similarity = None;
                }
                kept.push(change);
            }
            (true, false) => {
                // A copy's source is still there, unchanged.
                if change.kind == Kind::Copied {
                    continue;
                }
                if change.new.is_some() {
                    change.kind = Kind::Deleted;
                    change.new = None;
                    change.similarity = None;
                }
                kept.push(change);
            }
        }
    }
    kept
}

/// When there were too many added and deleted files to compare every pair
/// (more than `limit` squared), pairs the ones whose file name (the part
/// after the last `/`) is the only one of its kind among both the deleted
/// and the added files, as git does before it gives up (its basename
/// matching): a pair at least 75% similar is a rename.
pub fn pair_basenames(
    repo: &gix::Repository,
    changes: &mut Vec<FileChange>,
    limit: usize,
) -> Result<(), Error> {
    let added: Vec<usize> = (0..changes.len())
        .filter(|index| changes[*index].kind == Kind::Added)
        .collect();
    let deleted: Vec<usize> = (0..changes.len())
        .filter(|index| changes[*index].kind == Kind::Deleted)
        .collect();
    let limit = limit as u128;
    if limit == 0 || (added.len() as u128) * (deleted.len() as u128) <= limit * limit {
        return Ok(());
    }
    let basename = |side: &Side| -> BString {
        side.path
            .rsplit_str("/")
            .next()
            .unwrap_or_default()
            .to_owned()
            .into()
    };
    let unique = |indices: &[usize], old: bool| {
        let mut by_name: std::collections::HashMap<BString, Option<usize>> =
            std::collections::HashMap::new();
        for index in indices {
            let side = if old {
                changes[*index].old.as_ref()
            } else {
                changes[*index].new.as_ref()
            };
            if let Some(side) = side {
                by_name
                    .entry(basename(side))
                    .and_modify(|found| *found = None)
                    .or_insert(Some(*index));
            }
        }
        by_name
    };
    let sources = unique(&deleted, true);
    let destinations = unique(&added, false);
    let mut paired = Vec::new();
    for index in deleted {
        let Some(old) = changes[index].old.clone() else {
            continue;
        };
        let (Some(Some(source)), Some(Some(destination))) = (
            sources.get(&basename(&old)),
            destinations.get(&basename(&old)),
        ) else {
            continue;
        };
        let Some(new) = changes[*destination].new.clone() else {
            continue;
        };
        if old.mode & S_IFMT != 0o100000 || new.mode & S_IFMT != 0o100000 {
            continue;
        }
        let read = |side: &Side| -> Result<Vec<u8>, Error> {
            Ok(repo
                .find_object(side.id)
                .map_err(|e| fail(&format!("cannot read {}", side.path), e))?
                .detach()
                .data)
        };
        let score = similarity(&read(&old)?, &read(&new)?);
        if score >= BASENAME_SIMILARITY {
            paired.push((*source, *destination, score));
        }
    }
    let mut gone = std::collections::HashSet::new();
    for (source, destination, score) in paired {
        let old = changes[source].old.take();
        let change = &mut changes[destination];
        change.kind = Kind::Renamed;
        change.old = old;
        change.similarity = Some(score);
        gone.insert(source);
    }
    let mut index = 0;
    changes.retain(|_| {
        index += 1;
        !gone.contains(&(index - 1))
    });
    Ok(())
}

/// The file `path` was in `parent` when `commit` renamed it to `path`, if
/// it did: git's rename search for one destination (its `single_follow`, as
/// `git blame` and `git log --follow` use it). Only the files `commit`
/// deleted are candidates: one with the same contents (the one with the same
/// name first), else the most similar, at least 50% similar (the same name
/// breaking a tie). One destination against the deletions, not every added
/// file against every deleted one: a walk that asks this at each commit
/// whose parent lacks the file pays for one file, not for the whole diff.
pub fn renamed_from(
    repo: &gix::Repository,
    parent: &gix::Commit<'_>,
    commit: &gix::Commit<'_>,
    path: &BString,
) -> Result<Option<Side>, Error> {
    source_of(repo, parent, commit, path, false)
}

/// The file `path` was renamed or copied from when `commit` added it, as
/// `git log --follow` searches: like [`renamed_from`], but every file of
/// `parent` is a candidate, kept ones too (git's follow search finds
/// copies harder), the deleted ones first among equals.
pub fn followed_from(
    repo: &gix::Repository,
    parent: &gix::Commit<'_>,
    commit: &gix::Commit<'_>,
    path: &BString,
) -> Result<Option<Side>, Error> {
    source_of(repo, parent, commit, path, true)
}

fn source_of(
    repo: &gix::Repository,
    parent: &gix::Commit<'_>,
    commit: &gix::Commit<'_>,
    path: &BString,
    copies: bool,
) -> Result<Option<Side>, Error> {
    use gix::object::tree::diff::ChangeDetached as C;
    let (old_tree, new_tree) = (commit_tree(parent)?, commit_tree(commit)?);
    let options = gix::diff::Options::default().with_rewrites(None);
    let changes = repo
        .diff_tree_to_tree(Some(&old_tree), Some(&new_tree), Some(options))
        .map_err(|e| fail("cannot compare the trees", e))?;
    let mut target = None;
    let mut deleted = Vec::new();
    for change in changes {
        match change {
            C::Addition {
                location,
                entry_mode: mode,
                id,
                ..
            } if location == *path && mode.is_blob() => target = Some(id),
            C::Deletion {
                location,
                entry_mode: mode,
                id,
                ..
            } if mode.is_blob() => deleted.push(Side {
                path: location,
                mode: entry_mode(mode),
                id,
                data: None,
            }),
            _ => {}
        }
    }
    let Some(target) = target else {
        return Ok(None);
    };
    if copies {
        // Every other file of the parent, after the deleted ones.
        let mut recorder = gix::traverse::tree::Recorder::default();
        old_tree
            .traverse()
            .breadthfirst(&mut recorder)
            .map_err(|e| fail(&format!("cannot read the tree of {}", parent.id), e))?;
        let gone: std::collections::HashSet<BString> =
            deleted.iter().map(|side| side.path.clone()).collect();
        for entry in recorder.records {
            if entry.mode.is_blob() && !gone.contains(&entry.filepath) {
                deleted.push(Side {
                    path: entry.filepath,
                    mode: entry_mode(entry.mode),
                    id: entry.oid,
                    data: None,
                });
            }
        }
    }
    let name = |path: &BString| path.rsplit_str("/").next().map(<[u8]>::to_owned);
    let same_name = |side: &Side| name(&side.path) == name(path);
    // Exact renames first, as git does.
    let mut exact = deleted.iter().filter(|side| side.id == target);
    if let Some(found) = exact.clone().find(|side| same_name(side)).or(exact.next()) {
        return Ok(Some(found.clone()));
    }
    let size = |id: ObjectId| -> Result<u64, Error> {
        repo.find_header(id)
            .map(|header| header.size())
            .map_err(|e| fail(&format!("cannot read blob {id}"), e))
    };
    let target_size = size(target)?;
    let mut ours: Option<Vec<u8>> = None;
    let mut best: Option<(u32, bool, &Side)> = None;
    for side in &deleted {
        // The bytes two files share are at most the smaller one: a pair
        // whose sizes differ by more than half cannot be 50% similar.
        let theirs = size(side.id)?;
        if theirs.min(target_size) * 2 < theirs.max(target_size) {
            continue;
        }
        if ours.is_none() {
            ours = Some(read_blob(repo, target)?);
        }
        let new = ours.as_deref().unwrap_or_default();
        let score = similarity(&read_blob(repo, side.id)?, new);
        if score < RENAME_SIMILARITY {
            continue;
        }
        let named = same_name(side);
        if best
            .is_none_or(|(top, top_named, _)| score > top || (score == top && named && !top_named))
        {
            best = Some((score, named, side));
        }
    }
    Ok(best.map(|(_, _, side)| side.clone()))
}

/// How similar, in percent, a deleted file must be to be the source of a
/// rename: git's default (`-M50%`).
const RENAME_SIMILARITY: u32 = 50;

/// How much of `new` comes from `old`, in percent of the larger file, as
/// git estimates it to find renames (`diffcore-delta.c`): each file is cut
/// into spans that end at a line break or after 64 bytes (a text file's CR
/// before LF left out), the spans are hashed, and the bytes `old` gives to
/// each hash are counted up to those `new` has under it. The figure decides
/// renames at git's thresholds and is the `similarity index` git prints.
pub fn similarity(old: &[u8], new: &[u8]) -> u32 {
    let larger = old.len().max(new.len());
    if larger == 0 {
        return 100;
    }
    let (old_spans, new_spans) = (spans(old), spans(new));
    let copied: u64 = old_spans
        .iter()
        .map(|(hash, bytes)| (*bytes).min(new_spans.get(hash).copied().unwrap_or(0)))
        .sum();
    (copied * 100 / larger as u64) as u32
}

/// The bytes of `data` under each span hash: git's `hash_chars`.
fn spans(data: &[u8]) -> std::collections::HashMap<u32, u64> {
    /// git's `HASHBASE`, a prime.
    const HASH_BASE: u32 = 107_927;
    const MAX_SPAN: u64 = 64;
    let text = !is_binary(data);
    let mut counts = std::collections::HashMap::new();
    let (mut high, mut low, mut length) = (0u32, 0u32, 0u64);
    for (at, &byte) in data.iter().enumerate() {
        if text && byte == b'\r' && data.get(at + 1) == Some(&b'\n') {
            continue;
        }
        (high, low) = (
            ((high << 7) ^ (low >> 25)).wrapping_add(u32::from(byte)),
            (low << 7) ^ (high >> 25),
        );
        length += 1;
        if length < MAX_SPAN && byte != b'\n' {
            continue;
        }
        *counts
            .entry(high.wrapping_add(low.wrapping_mul(0x61)) % HASH_BASE)
            .or_default() += length;
        (high, low, length) = (0, 0, 0);
    }
    if length > 0 {
        *counts
            .entry(high.wrapping_add(low.wrapping_mul(0x61)) % HASH_BASE)
            .or_default() += length;
    }
    counts
}
