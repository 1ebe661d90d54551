//! Finding paths by name: the `glob` tool's engine, also used by
//! `concat_files`.
//!
//! A pattern is split into its literal leading directories (the walk starts
//! there, so `src/**/*.rs` never lists anything outside `src`) and the rest,
//! which `globset` matches against each path the walk reaches. Without `**`
//! the pattern also bounds the walk's depth: `*.rs` lists one directory.
//! `..` and `.` in the literal part are resolved lexically, so `../**` and
//! `/elsewhere/**` name a directory outside the mount, which the sandbox
//! refuses like any other path.

use std::io;
use std::path::{Path, PathBuf};

use globset::GlobBuilder;
use ignore::gitignore::GitignoreBuilder;
use toolcell_sdk::schemars::JsonSchema;
use toolcell_sdk::serde::{Deserialize, Serialize};

use crate::output::{Budget, json_len};
use crate::progress::Progress;
use crate::vfs::{self, Fs, Kind};
use crate::walk::{self, Flow, WalkOptions};

/// What kinds of entries a glob returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", rename_all = "lowercase")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub enum KindFilter {
    /// Regular files only.
    #[default]
    File,
    /// Directories only.
    Dir,
    /// Files, directories, symlinks and anything else.
    Any,
}

impl KindFilter {
    fn accepts(self, kind: Kind) -> bool {
        match self {
            KindFilter::File => kind == Kind::File,
            KindFilter::Dir => kind == Kind::Dir,
            KindFilter::Any => true,
        }
    }
}

/// What to look for.
#[derive(Clone, Debug)]
pub struct GlobOptions {
    /// The pattern: relative to the root, or absolute.
    pub pattern: String,
    /// Stop after this many paths.
    pub max_results: usize,
    /// Gitignore-style patterns, relative to the root, whose matches are
    /// left out (a directory's whole subtree with it).
    pub exclude: Vec<String>,
    /// Which kinds of entries to return.
    pub kind: KindFilter,
    /// The budget for text and structured content together.
    pub max_output_bytes: usize,
}

/// Why a glob could not run.
#[derive(Debug)]
#[non_exhaustive]
pub enum GlobError {
    /// The pattern or an exclude pattern is not a valid glob.
    Pattern(String),
    /// The directory the walk starts from cannot be opened.
    Base(PathBuf, io::Error),
}

/// The paths found: the tool's structured content.
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub struct GlobReport {
    /// Absolute paths, sorted (component by component).
    pub paths: Vec<String>,
    /// More paths match than are listed: `max_results` or the output's size
    /// cap cut the list.
    pub truncated: bool,
    /// Why the list is partial, and paths that could not be read, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl GlobReport {
    /// One path per line, then a summary line and the note.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for path in &self.paths {
            out.push_str(path);
            out.push('\n');
        }
        if self.paths.is_empty() {
            out.push_str("No paths match.\n");
        } else if self.truncated {
            out.push_str(&format!(
                "\n[{} paths shown; more match]\n",
                self.paths.len()
            ));
        }
        if let Some(note) = &self.note {
            out.push_str(&format!("[{note}]\n"));
        }
        out
    }
}

/// The pattern made absolute and split where the walk starts.
struct Split {
    /// The absolute, normal pattern that paths are matched against.
    full: String,
    /// The directory named by the pattern's literal leading components.
    base: PathBuf,
    /// How many components follow `base`, unless one is `**`.
    depth: Option<usize>,
}

fn has_glob_syntax(component: &str) -> bool {
    component.contains(['*', '?', '[', ']', '{', '}', '\\'])
}

fn split(root: &Path, pattern: &str) -> Split {
    let joined = if pattern.starts_with('/') {
        pattern.to_string()
    } else {
        format!("{}/{pattern}", root.to_string_lossy().trim_end_matches('/'))
    };
    let mut base = PathBuf::from("/");
    let mut rest: Vec<&str> = Vec::new();
    for component in joined.split('/').filter(|c| !c.is_empty()) {
        if rest.is_empty() && !has_glob_syntax(component) {
            base.push(component);
        } else {
            rest.push(component);
        }
    }
    let base = vfs::normalize(&base);
    let depth = (!rest.iter().any(|c| c.contains("**"))).then_some(rest.len());
    let base_text = base.to_string_lossy();
    let full = if rest.is_empty() {
        base_text.into_owned()
    } else {
        format!("{}/{}", base_text.trim_end_matches('/'), rest.join("/"))
    };
    Split { full, base, depth }
}

/// Finds the paths under `root` (absolute, normal) that match.
pub fn glob<F: Fs>(fs: &F, root: &Path, options: &GlobOptions) -> Result<GlobReport, GlobError> {
    glob_with_progress(fs, root, options, &mut Progress::none())
}

/// [`glob`], counting each entry the walk reaches in `progress`. Entries are
/// only listed, never opened, so a named pipe is listed like any file.
pub fn glob_with_progress<F: Fs>(
    fs: &F,
    root: &Path,
    options: &GlobOptions,
    progress: &mut Progress<'_>,
) -> Result<GlobReport, GlobError> {
    let split = split(root, &options.pattern);
    let matcher = GlobBuilder::new(&split.full)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|e| GlobError::Pattern(e.to_string()))?
        .compile_matcher();
    let mut excludes = GitignoreBuilder::new(root);
    for pattern in &options.exclude {
        excludes
            .add_line(None, pattern)
            .map_err(|e| GlobError::Pattern(e.to_string()))?;
    }
    let excludes = excludes
        .build()
        .map_err(|e| GlobError::Pattern(e.to_string()))?;

    let mut report = GlobReport::default();
    let mut budget = Budget::new(options.max_output_bytes);
    let max_results = options.max_results.max(1);
    let mut capped_by_output = false;

    if split.depth == Some(0) {
        // A literal path: it matches if it exists.
        let meta = fs
            .stat(&split.base)
            .map_err(|e| GlobError::Base(split.base.clone(), e))?;
        if options.kind.accepts(meta.kind) {
            report.paths.push(split.full);
        }
        return Ok(report);
    }

    let walk_options = WalkOptions {
        excludes: (!excludes.is_empty()).then_some(excludes),
        max_depth: split.depth,
        ..WalkOptions::default()
    };
    let summary = walk::walk(fs, &split.base, &walk_options, &mut |visit| {
        let matched = report.paths.len();
        progress.tick(|entries| format!("scanned {entries} entries, matches so far: {matched}"));
        if visit.kind == Kind::Dir && visit.name == ".git" {
            return Flow::Skip;
        }
        if !options.kind.accepts(visit.kind) || !matcher.is_match(visit.path) {
            return Flow::Continue;
        }
        if report.paths.len() == max_results {
            report.truncated = true;
            return Flow::Stop;
        }
        if !budget.take(visit.path.len() + 1 + json_len(visit.path) + 1) {
            report.truncated = true;
            capped_by_output = true;
            return Flow::Stop;
        }
        report.paths.push(visit.path.to_string());
        Flow::Continue
    })
    .map_err(|e| GlobError::Base(split.base.clone(), e))?;

    let mut notes = Vec::new();
    if capped_by_output {
        notes.push(
            "partial result: the output reached its size cap (the plugin's `max_output_bytes`); \
             narrow the pattern or add `exclude` patterns"
                .to_string(),
        );
    } else if report.truncated {
        notes.push(format!(
            "partial result: stopped at max_results={max_results}; more paths match"
        ));
    }
    if summary.error_count > 0 {
        let mut text = format!("{} path(s) could not be read", summary.error_count);
        for error in summary.errors.iter().take(5) {
            text.push_str(&format!("; {error}"));
        }
        notes.push(text);
    }
    if !notes.is_empty() {
        report.note = Some(notes.join(". "));
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vfs::StdFs;

    fn tree(files: &[&str]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for path in files {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        (dir, root)
    }

    fn options(pattern: &str) -> GlobOptions {
        GlobOptions {
            pattern: pattern.to_string(),
            max_results: 1000,
            exclude: Vec::new(),
            kind: KindFilter::File,
            max_output_bytes: crate::output::DEFAULT_MAX_OUTPUT_BYTES,
        }
    }

    fn found(root: &Path, options: &GlobOptions) -> Vec<String> {
        let prefix = format!("{}/", root.display());
        glob(&StdFs, root, options)
            .unwrap()
            .paths
            .iter()
            .map(|path| path.strip_prefix(&prefix).unwrap_or(path).to_string())
            .collect()
    }

    #[test]
    fn split_finds_the_literal_base() {
        let root = Path::new("/m");
        let s = split(root, "src/**/*.rs");
        assert_eq!(
            (s.full.as_str(), s.base.as_path(), s.depth),
            ("/m/src/**/*.rs", Path::new("/m/src"), None)
        );
        let s = split(root, "*.rs");
        assert_eq!((s.base.as_path(), s.depth), (Path::new("/m"), Some(1)));
        let s = split(root, "../**");
        assert_eq!((s.full.as_str(), s.base.as_path()), ("/**", Path::new("/")));
        let s = split(root, "/etc/*");
        assert_eq!(
            (s.full.as_str(), s.base.as_path(), s.depth),
            ("/etc/*", Path::new("/etc"), Some(1))
        );
        let s = split(root, "a/./b/../c.txt");
        assert_eq!((s.full.as_str(), s.depth), ("/m/a/c.txt", Some(0)));
    }

    #[test]
    fn matches_sorted_with_kinds_and_excludes() {
        let (_dir, root) = tree(&[
            "b.rs",
            "a/x.rs",
            "a/y.txt",
            "a-b.rs",
            "node_modules/m.rs",
            ".git/c.rs",
            ".h.rs",
        ]);
        assert_eq!(
            found(&root, &options("**/*.rs")),
            [".h.rs", "a/x.rs", "a-b.rs", "b.rs", "node_modules/m.rs"],
            "sorted component by component; `.git` is not entered"
        );
        assert_eq!(found(&root, &options("*.rs")), [".h.rs", "a-b.rs", "b.rs"]);
        let excluding = GlobOptions {
            exclude: vec!["node_modules".into(), "a-*".into()],
            ..options("**/*.rs")
        };
        assert_eq!(found(&root, &excluding), [".h.rs", "a/x.rs", "b.rs"]);
        let dirs = GlobOptions {
            kind: KindFilter::Dir,
            ..options("*")
        };
        assert_eq!(found(&root, &dirs), ["a", "node_modules"]);
        assert_eq!(found(&root, &options("a/x.rs")), ["a/x.rs"]);
        assert!(matches!(
            glob(&StdFs, &root, &options("a/none.rs")),
            Err(GlobError::Base(..))
        ));
    }

    #[cfg(unix)]
    #[test]
    fn special_files_are_listed_as_any_but_not_as_files() {
        let (_dir, root) = tree(&["a.txt"]);
        crate::test_support::mkfifo(&root.join("pipe.txt"));
        assert_eq!(found(&root, &options("*.txt")), ["a.txt"]);
        let any = GlobOptions {
            kind: KindFilter::Any,
            ..options("*.txt")
        };
        assert_eq!(found(&root, &any), ["a.txt", "pipe.txt"]);
    }

    #[test]
    fn max_results_truncates() {
        let (_dir, root) = tree(&["a", "b", "c"]);
        let capped = GlobOptions {
            max_results: 2,
            ..options("*")
        };
        let report = glob(&StdFs, &root, &capped).unwrap();
        assert!(report.truncated);
        assert_eq!(report.paths.len(), 2);
        let exact = GlobOptions {
            max_results: 3,
            ..options("*")
        };
        assert!(!glob(&StdFs, &root, &exact).unwrap().truncated);
    }
}
