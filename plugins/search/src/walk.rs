//! The directory walk the tools share.
//!
//! [`walk`] visits a tree depth-first with each directory's entries sorted by
//! name, so paths come out in `Path` order and a capped walk stops as soon as
//! it has enough. [`WalkOptions`] says what is left out, the way ripgrep
//! decides it (the `ignore` crate's rules, applied here to listings the walk
//! already has, so no directory is probed for ignore files it does not hold):
//!
//! 1. `overrides` (grep's `glob` argument, ripgrep's `--glob`) first: a match
//!    includes or excludes whatever the other rules say;
//! 2. then ignore files, nearest directory first, `.rgignore` over `.ignore`
//!    over `.gitignore` over `.git/info/exclude`; `.gitignore` rules stop at
//!    the nearest directory holding `.git`. Unlike ripgrep, `.gitignore` is
//!    honoured without a `.git` directory (`rg --no-require-git`), because a
//!    mount is often a folder inside a repository whose `.git` the sandbox
//!    cannot see;
//! 3. then hidden names (starting with `.`), unless an ignore file
//!    whitelisted them;
//! 4. `excludes` (the glob tool's `exclude`), gitignore-style patterns
//!    relative to the root.
//!
//! Symlinks are reported as [`Kind::Symlink`] and never followed. Only
//! regular files are ever opened (ignore files among them): a named pipe
//! would block the open, and a device might never end.

use std::io;
use std::path::{Path, PathBuf};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::overrides::Override;

use crate::vfs::{Entry, Fs, Kind};

/// The largest ignore file read; the rest of a bigger one is ignored.
const MAX_IGNORE_FILE_BYTES: usize = 1024 * 1024;

/// How many walk errors are kept for the report (all are counted).
const MAX_ERRORS_KEPT: usize = 10;

/// What a walk leaves out. The default leaves out nothing.
#[derive(Clone, Debug, Default)]
pub struct WalkOptions {
    /// Leave out names starting with `.`.
    pub skip_hidden: bool,
    /// Honour `.gitignore`, `.ignore`, `.rgignore` and `.git/info/exclude`.
    pub ignore_files: bool,
    /// Also read the ignore files of the directories from this one (a mount)
    /// down to the root's parent, as ripgrep reads a search root's parents'.
    pub parents_from: Option<PathBuf>,
    /// Include/exclude globs, matched before everything else.
    pub overrides: Option<Override>,
    /// Gitignore-style patterns whose matches are left out (and, for a
    /// directory, not entered).
    pub excludes: Option<Gitignore>,
    /// Visit entries at most this deep (1 is the root's own entries).
    pub max_depth: Option<usize>,
}

/// What the visitor wants next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Go on; enter this entry if it is a directory.
    Continue,
    /// Go on, but do not enter this directory.
    Skip,
    /// End the walk.
    Stop,
}

/// One entry the walk reached.
pub struct Visit<'a, D> {
    /// The open directory holding the entry.
    pub dir: &'a D,
    /// The entry's name in `dir`.
    pub name: &'a str,
    /// The entry's absolute path.
    pub path: &'a str,
    /// What it is (a symlink is not followed).
    pub kind: Kind,
    /// 1 for the root's own entries.
    pub depth: usize,
}

/// What a walk met besides the entries it visited.
#[derive(Clone, Debug, Default)]
pub struct WalkSummary {
    /// Directories that could not be listed or entries that could not be
    /// read, at most ten of them, as `path: reason`.
    pub errors: Vec<String>,
    /// How many errors there were in all.
    pub error_count: usize,
    /// Whether the visitor ended the walk.
    pub stopped: bool,
}

impl WalkSummary {
    /// Records an error on `path`.
    pub fn error(&mut self, path: &str, error: &io::Error) {
        self.error_count += 1;
        if self.errors.len() < MAX_ERRORS_KEPT {
            self.errors.push(format!("{path}: {error}"));
        }
    }
}

/// The ignore rules found in one directory.
#[derive(Default)]
struct Level {
    /// The directory's path, which the rules are relative to.
    dir: String,
    /// `.rgignore`, `.ignore`, `.gitignore`, `.git/info/exclude`, in
    /// precedence order.
    matchers: [Option<Gitignore>; 4],
    /// The directory holds `.git`: `.gitignore` rules above it do not apply.
    has_git: bool,
}

const IGNORE_FILES: [&str; 3] = [".rgignore", ".ignore", ".gitignore"];

/// Walks the directory `root` (absolute, normal), calling `visit` for every
/// entry the options let through, in `Path` order.
///
/// An error opening `root` itself is returned; errors below it are counted
/// in the summary and the walk goes on.
pub fn walk<F: Fs>(
    fs: &F,
    root: &Path,
    options: &WalkOptions,
    visit: &mut dyn FnMut(&Visit<'_, F::Dir>) -> Flow,
) -> io::Result<WalkSummary> {
    let dir = fs.open_dir(root)?;
    let mut walker = Walker {
        fs,
        options,
        levels: Vec::new(),
        summary: WalkSummary::default(),
        visit,
    };
    if let Some(mount) = options
        .parents_from
        .as_ref()
        .filter(|_| options.ignore_files)
    {
        walker.load_parents(mount, root);
    }
    let root_text = root.to_string_lossy();
    // The root's own path joins its entries' names without doubling `/`.
    let prefix = root_text.trim_end_matches('/');
    walker.walk_dir(&dir, prefix, 1);
    Ok(walker.summary)
}

struct Walker<'w, F: Fs> {
    fs: &'w F,
    options: &'w WalkOptions,
    levels: Vec<Level>,
    summary: WalkSummary,
    visit: &'w mut dyn FnMut(&Visit<'_, F::Dir>) -> Flow,
}

impl<F: Fs> Walker<'_, F> {
    /// Reads the ignore files of `mount` and of every directory between it
    /// and `root` (not `root` itself, whose files the walk reads).
    fn load_parents(&mut self, mount: &Path, root: &Path) {
        let Ok(below) = root.strip_prefix(mount) else {
            return;
        };
        let mut dir_path = mount.to_path_buf();
        for next in below.components() {
            if let Ok(dir) = self.fs.open_dir(&dir_path)
                && let Ok(entries) = self.fs.list(&dir)
            {
                let level = self.read_level(&dir, &dir_path.to_string_lossy(), &entries);
                self.levels.push(level);
            }
            dir_path.push(next);
        }
    }

    /// Visits the entries of `dir` (whose path is `dir_path`, without a
    /// trailing `/`); returns `false` when the walk should end.
    fn walk_dir(&mut self, dir: &F::Dir, dir_path: &str, depth: usize) -> bool {
        let mut entries = match self.fs.list(dir) {
            Ok(entries) => entries,
            Err(error) => {
                self.summary.error(display_dir(dir_path), &error);
                return true;
            }
        };
        entries.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        let pushed = self.options.ignore_files;
        if pushed {
            let level = self.read_level(dir, display_dir(dir_path), &entries);
            self.levels.push(level);
        }
        let go_on = self.visit_entries(dir, dir_path, depth, &entries);
        if pushed {
            self.levels.pop();
        }
        go_on
    }

    fn visit_entries(
        &mut self,
        dir: &F::Dir,
        dir_path: &str,
        depth: usize,
        entries: &[Entry],
    ) -> bool {
        let mut path = String::with_capacity(dir_path.len() + 64);
        for entry in entries {
            path.clear();
            path.push_str(dir_path);
            path.push('/');
            path.push_str(&entry.name);
            let is_dir = entry.kind == Kind::Dir;
            if self.is_left_out(&path, &entry.name, is_dir) {
                continue;
            }
            let flow = (self.visit)(&Visit {
                dir,
                name: &entry.name,
                path: &path,
                kind: entry.kind,
                depth,
            });
            match flow {
                Flow::Stop => {
                    self.summary.stopped = true;
                    return false;
                }
                Flow::Skip => continue,
                Flow::Continue => {}
            }
            if !is_dir || self.options.max_depth.is_some_and(|max| depth >= max) {
                continue;
            }
            let sub = match self.fs.sub_dir(dir, &entry.name) {
                Ok(sub) => sub,
                Err(error) => {
                    self.summary.error(&path, &error);
                    continue;
                }
            };
            if !self.walk_dir(&sub, &path, depth + 1) {
                return false;
            }
        }
        true
    }

    /// Whether the options leave out `path` (named `name`).
    fn is_left_out(&self, path: &str, name: &str, is_dir: bool) -> bool {
        let options = self.options;
        if let Some(overrides) = &options.overrides {
            match overrides.matched(path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        let mut whitelisted = false;
        if options.ignore_files {
            match self.ignore_files_match(path, is_dir) {
                Match::Ignore(()) => return true,
                Match::Whitelist(()) => whitelisted = true,
                Match::None => {}
            }
        }
        if options.skip_hidden && !whitelisted && name.starts_with('.') {
            return true;
        }
        options
            .excludes
            .as_ref()
            .is_some_and(|excludes| excludes.matched(path, is_dir).is_ignore())
    }

    /// The verdict of the ignore files on `path`: for each kind of file in
    /// precedence order, the nearest directory's match decides.
    fn ignore_files_match(&self, path: &str, is_dir: bool) -> Match<()> {
        for (kind, gitignore) in [false, false, true, true].into_iter().enumerate() {
            for level in self.levels.iter().rev() {
                if let Some(matcher) = &level.matchers[kind] {
                    match matcher.matched(relative_to(&level.dir, path), is_dir) {
                        Match::Ignore(_) => return Match::Ignore(()),
                        Match::Whitelist(_) => return Match::Whitelist(()),
                        Match::None => {}
                    }
                }
                // `.gitignore` and `exclude` rules stop at the repository root.
                if gitignore && level.has_git {
                    break;
                }
            }
        }
        Match::None
    }

    /// Reads the ignore files listed in `entries` of `dir`.
    fn read_level(&mut self, dir: &F::Dir, dir_path: &str, entries: &[Entry]) -> Level {
        let mut level = Level {
            dir: dir_path.to_string(),
            ..Level::default()
        };
        for entry in entries {
            let name = entry.name.as_str();
            if name == ".git" {
                level.has_git = true;
                if entry.kind == Kind::Dir {
                    level.matchers[3] = self.read_git_exclude(dir, dir_path);
                }
                continue;
            }
            let Some(slot) = IGNORE_FILES.iter().position(|file| *file == name) else {
                continue;
            };
            if entry.kind != Kind::File {
                continue;
            }
            let path = format!("{dir_path}/{name}");
            match self.fs.open(dir, name) {
                Ok(mut file) => {
                    let mut text = Vec::new();
                    match self
                        .fs
                        .read_up_to(&mut file, &mut text, MAX_IGNORE_FILE_BYTES)
                    {
                        Ok(_) => level.matchers[slot] = build_matcher(&path, &text),
                        Err(error) => self.summary.error(&path, &error),
                    }
                }
                Err(error) => self.summary.error(&path, &error),
            }
        }
        level
    }

    /// `.git/info/exclude` in `dir`, if there is one.
    fn read_git_exclude(&mut self, dir: &F::Dir, dir_path: &str) -> Option<Gitignore> {
        let path = format!("{dir_path}/.git/info/exclude");
        // No listing says what it is, so look before opening: a named pipe
        // there would block the open.
        if self.fs.stat(Path::new(&path)).ok()?.kind != Kind::File {
            return None;
        }
        let git = self.fs.sub_dir(dir, ".git").ok()?;
        let info = self.fs.sub_dir(&git, "info").ok()?;
        let mut file = self.fs.open(&info, "exclude").ok()?;
        let mut text = Vec::new();
        self.fs
            .read_up_to(&mut file, &mut text, MAX_IGNORE_FILE_BYTES)
            .ok()?;
        build_matcher(&path, &text)
    }
}

/// `/` for the root directory, whose entries are joined to an empty prefix.
fn display_dir(dir_path: &str) -> &str {
    if dir_path.is_empty() { "/" } else { dir_path }
}

/// A matcher for the ignore file at `path`, or `None` when it has no rules. Lines that are not valid globs are skipped, as git does.
///
/// The matcher is rooted at `.` and given paths relative to the file's
/// directory ([`relative_to`]), which is what it would make of them itself: the
/// `ignore` crate strips a matcher's root from a path with byte comparisons
/// on Unix, but through `std::path::Components` on any other target, WASI
/// among them, where that was about 5% of a grep's time.
fn build_matcher(path: &str, text: &[u8]) -> Option<Gitignore> {
    let mut builder = GitignoreBuilder::new(".");
    let text = String::from_utf8_lossy(text);
    let from = Some(PathBuf::from(path));
    for line in text.lines() {
        // A bad line is skipped; the others still apply.
        let _ = builder.add_line(from.clone(), line);
    }
    let matcher = builder.build().ok()?;
    (!matcher.is_empty()).then_some(matcher)
}

/// `path` relative to the directory `dir` (both absolute and normal), as a
/// matcher rooted at `dir` would strip it; a path not below `dir` is left
/// whole, as such a matcher leaves it.
fn relative_to<'p>(dir: &str, path: &'p str) -> &'p str {
    match path.strip_prefix(dir) {
        Some(rest) if rest.is_empty() || dir.ends_with('/') => rest,
        Some(rest) => rest.strip_prefix('/').unwrap_or(path),
        None => path,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vfs::StdFs;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    #[test]
    fn paths_are_made_relative_by_whole_components() {
        for (dir, path, relative) in [
            ("/a", "/a/b/c", "b/c"),
            ("/", "/b", "b"),
            ("/a", "/a", ""),
            ("/a", "/ab/c", "/ab/c"),
            ("/a", "/b", "/b"),
        ] {
            assert_eq!(relative_to(dir, path), relative, "{dir} {path}");
        }
    }

    fn files(root: &Path, options: &WalkOptions) -> Vec<String> {
        let root = std::fs::canonicalize(root).unwrap();
        let mut seen = Vec::new();
        walk(&StdFs, &root, options, &mut |visit| {
            if visit.kind == Kind::File {
                let relative = visit.path.strip_prefix(root.to_str().unwrap()).unwrap();
                seen.push(relative.trim_start_matches('/').to_string());
            }
            Flow::Continue
        })
        .unwrap();
        seen
    }

    fn grep_like() -> WalkOptions {
        WalkOptions {
            skip_hidden: true,
            ignore_files: true,
            ..WalkOptions::default()
        }
    }

    #[test]
    fn sorted_in_path_order() {
        let dir = tree(&[("b", ""), ("a-b", ""), ("a/b", ""), ("a/a", "")]);
        assert_eq!(
            files(dir.path(), &WalkOptions::default()),
            ["a/a", "a/b", "a-b", "b"]
        );
    }

    #[test]
    fn ignore_files_nest_and_whitelist() {
        let dir = tree(&[
            (".gitignore", "*.log\ntarget/\n"),
            ("keep.log", ""),
            ("src/.gitignore", "!keep.log\n"),
            ("src/keep.log", ""),
            ("src/main.rs", ""),
            ("target/out.rs", ""),
            (".hidden/x.rs", ""),
            ("sub/.ignore", "*.rs\n"),
            ("sub/.rgignore", "!a.rs\n"),
            ("sub/a.rs", ""),
            ("sub/b.rs", ""),
        ]);
        assert_eq!(
            files(dir.path(), &grep_like()),
            ["src/keep.log", "src/main.rs", "sub/a.rs"]
        );
    }

    #[test]
    fn gitignore_stops_at_a_nested_repository() {
        let dir = tree(&[
            (".gitignore", "*.txt\n"),
            ("a.txt", ""),
            ("inner/.git/HEAD", ""),
            ("inner/b.txt", ""),
            ("inner/.git/info/exclude", "*.md\n"),
            ("inner/c.md", ""),
        ]);
        assert_eq!(files(dir.path(), &grep_like()), ["inner/b.txt"]);
    }

    #[test]
    fn parents_ignore_files_apply_below_the_mount() {
        let dir = tree(&[
            (".gitignore", "*.gen\n"),
            ("sub/x.gen", ""),
            ("sub/x.rs", ""),
        ]);
        let mount = std::fs::canonicalize(dir.path()).unwrap();
        let options = WalkOptions {
            parents_from: Some(mount.clone()),
            ..grep_like()
        };
        assert_eq!(files(&mount.join("sub"), &options), ["x.rs"]);
        assert_eq!(files(&mount.join("sub"), &grep_like()), ["x.gen", "x.rs"]);
    }

    #[test]
    fn max_depth_and_excludes() {
        let dir = tree(&[
            ("a.rs", ""),
            ("d/b.rs", ""),
            ("d/e/c.rs", ""),
            ("node_modules/x.rs", ""),
        ]);
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let mut excludes = GitignoreBuilder::new(&root);
        excludes.add_line(None, "node_modules").unwrap();
        let options = WalkOptions {
            excludes: Some(excludes.build().unwrap()),
            max_depth: Some(2),
            ..WalkOptions::default()
        };
        assert_eq!(files(&root, &options), ["a.rs", "d/b.rs"]);
    }
}
