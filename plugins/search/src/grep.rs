//! Content search: the `grep` tool's engine.
//!
//! [`grep`] walks a tree (or searches one file) with the walk's ripgrep
//! rules, reads each file with as few calls as it can, and searches it with
//! `grep-searcher` and `grep-regex`, ripgrep's own crates. It returns a
//! [`GrepReport`], which is both the tool's structured content and the source
//! of its text ([`GrepReport::text`]).
//!
//! Binary files are handled as ripgrep handles them when it walks a
//! directory: a file with no NUL byte is searched whole (read in one go,
//! searched as a slice); a file with one is searched through the same line
//! buffer ripgrep uses, which stops at the buffer holding the first NUL.

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use ignore::overrides::OverrideBuilder;
use toolcell_sdk::schemars::JsonSchema;
use toolcell_sdk::serde::Serialize;

use crate::literal::Required;
use crate::output::{self, Budget, json_len};
use crate::progress::Progress;
use crate::vfs::{Fs, Kind};
use crate::walk::{self, Flow, WalkOptions};

/// Files up to this size are read whole and searched as one slice; larger
/// ones are searched as a stream, so memory stays bounded.
const WHOLE_FILE_BYTES: usize = 8 * 1024 * 1024;

/// The most a streamed search's line buffer may grow to hold one line; a
/// file with a longer line is reported as unreadable instead of exhausting
/// the call's memory.
const MAX_STREAM_BUFFER_BYTES: usize = 64 * 1024 * 1024;

/// What to search for and how much to return.
#[derive(Clone, Debug)]
pub struct GrepOptions {
    /// A regular expression (Rust `regex` syntax), or a literal string when
    /// `fixed_strings`.
    pub pattern: String,
    /// Match case-insensitively (Unicode simple case folding).
    pub ignore_case: bool,
    /// Take `pattern` literally.
    pub fixed_strings: bool,
    /// Lines of context before and after each match.
    pub context: usize,
    /// Stop after this many matching lines (files, with `files_with_matches`).
    pub max_results: usize,
    /// Report only the paths of files that match.
    pub files_with_matches: bool,
    /// ripgrep `--glob`s: `*.rs` includes, `!*.md` excludes; they override
    /// ignore files.
    pub globs: Vec<String>,
    /// The budget for text and structured content together.
    pub max_output_bytes: usize,
    /// The mount holding the root, whose ignore files between it and the
    /// root also apply.
    pub parents_from: Option<PathBuf>,
}

impl GrepOptions {
    /// Options for `pattern` with the tool's defaults.
    pub fn new(pattern: impl Into<String>) -> GrepOptions {
        GrepOptions {
            pattern: pattern.into(),
            ignore_case: false,
            fixed_strings: false,
            context: 0,
            max_results: 500,
            files_with_matches: false,
            globs: Vec::new(),
            max_output_bytes: output::DEFAULT_MAX_OUTPUT_BYTES,
            parents_from: None,
        }
    }
}

/// Why a search could not start.
#[derive(Debug)]
#[non_exhaustive]
pub enum GrepError {
    /// The regular expression does not compile; the message is the regex
    /// crate's, which points at the problem.
    Pattern(String),
    /// A `glob` is not a valid glob.
    Glob(String),
    /// The root cannot be opened.
    Root(io::Error),
    /// The root is a named pipe, a socket or a device: opening it could block
    /// and reading it might never end.
    Special,
}

/// The result of a search: the tool's structured content.
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub struct GrepReport {
    /// The files with matches, in path order.
    pub files: Vec<FileMatches>,
    /// Matching lines reported (files, with `files_with_matches`).
    pub matches: u64,
    /// Files searched.
    pub files_searched: u64,
    /// The result stops early: more matches exist than `max_results`, or the
    /// output reached its size cap.
    pub truncated: bool,
    /// Why the result is partial, and files that were skipped, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One file's matches.
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub struct FileMatches {
    /// The file's absolute path.
    pub path: String,
    /// Matching lines and context lines, in order (empty with
    /// `files_with_matches`).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub lines: Vec<Line>,
}

/// One line of a file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub struct Line {
    /// The line number, from 1.
    pub line: u64,
    /// The line without its terminator; a very long line is cut to a window
    /// around its first match, with a marker.
    pub text: String,
    /// A context line, not a match.
    #[serde(skip_serializing_if = "is_false", default)]
    pub context: bool,
}

fn is_false(value: &bool) -> bool {
    !value
}

/// Searches `root` (a directory or a file; absolute and normal).
pub fn grep<F: Fs>(fs: &F, root: &Path, options: &GrepOptions) -> Result<GrepReport, GrepError> {
    grep_with_progress(fs, root, options, &mut Progress::none())
}

/// [`grep`], counting each file searched in `progress`.
pub fn grep_with_progress<F: Fs>(
    fs: &F,
    root: &Path,
    options: &GrepOptions,
    progress: &mut Progress<'_>,
) -> Result<GrepReport, GrepError> {
    let matcher = build_matcher(options)?;
    let overrides = if options.globs.is_empty() {
        None
    } else {
        let mut builder = OverrideBuilder::new(root);
        for glob in &options.globs {
            builder
                .add(glob)
                .map_err(|e| GrepError::Glob(e.to_string()))?;
        }
        Some(
            builder
                .build()
                .map_err(|e| GrepError::Glob(e.to_string()))?,
        )
    };
    let mut search = Search::new(fs, &matcher, options);
    let root_text = root.to_string_lossy();

    match fs.stat(root).map_err(GrepError::Root)?.kind {
        Kind::Dir => {}
        Kind::File => {
            // An explicit file is searched whatever the ignore rules say.
            let file = fs.open_path(root).map_err(GrepError::Root)?;
            search.file(file, &root_text);
            return Ok(search.finish(None));
        }
        // A named pipe or a device could block or never end.
        Kind::Symlink | Kind::Other => return Err(GrepError::Special),
    }

    let walk_options = WalkOptions {
        skip_hidden: true,
        ignore_files: true,
        parents_from: options.parents_from.clone(),
        overrides,
        excludes: None,
        max_depth: None,
    };
    let summary = walk::walk(fs, root, &walk_options, &mut |visit| {
        if visit.kind != Kind::File {
            return Flow::Continue;
        }
        // Only regular files get here: the listing says what each entry is,
        // so a named pipe or a device is never opened.
        match fs.read_file(visit.dir, visit.name, WHOLE_FILE_BYTES) {
            Ok((buf, true)) => search.contents(&buf, visit.path),
            // Too big to read whole: searched as a stream from its start
            // (its first `WHOLE_FILE_BYTES` are read twice).
            Ok((_, false)) => match fs.open(visit.dir, visit.name) {
                Ok(file) => search.file(file, visit.path),
                Err(error) => search.summary_error(visit.path, &error),
            },
            Err(error) => search.summary_error(visit.path, &error),
        }
        let matches = search.found.report.matches;
        progress.tick(|files| format!("searched {files} files, matching lines so far: {matches}"));
        if search.stopped() {
            Flow::Stop
        } else {
            Flow::Continue
        }
    })
    .map_err(GrepError::Root)?;
    Ok(search.finish(Some(summary)))
}

fn build_matcher(options: &GrepOptions) -> Result<RegexMatcher, GrepError> {
    if !options.fixed_strings {
        // grep-regex reports syntax errors against the pattern wrapped in
        // `(?:..)`; parsing it alone first points at the pattern as written.
        regex_syntax::ast::parse::Parser::new()
            .parse(&options.pattern)
            .map_err(|e| GrepError::Pattern(e.to_string()))?;
    }
    RegexMatcherBuilder::new()
        .case_insensitive(options.ignore_case)
        .fixed_strings(options.fixed_strings)
        .line_terminator(Some(b'\n'))
        .build(&options.pattern)
        .map_err(|e| GrepError::Pattern(e.to_string()))
}

/// The state of one search across files.
struct Search<'a, F: Fs> {
    fs: &'a F,
    matcher: &'a RegexMatcher,
    /// A literal every match holds: a text file without it is not searched.
    required: Option<Required>,
    /// For files known to hold no NUL byte.
    text_searcher: Searcher,
    /// For files that hold one, or are too big to read whole.
    stream_searcher: Searcher,
    buf: Vec<u8>,
    found: Found,
    errors: walk::WalkSummary,
    binary_files: u64,
}

/// What the sink collects.
struct Found {
    report: GrepReport,
    max_results: usize,
    files_with_matches: bool,
    budget: Budget,
    /// `max_results` was reached: the next match ends the search.
    full: bool,
    /// The search ended early; the reason is in `capped_by_output`.
    stopped: bool,
    capped_by_output: bool,
}

impl<'a, F: Fs> Search<'a, F> {
    fn new(fs: &'a F, matcher: &'a RegexMatcher, options: &GrepOptions) -> Search<'a, F> {
        let context = if options.files_with_matches {
            0
        } else {
            options.context
        };
        let build = |binary| {
            SearcherBuilder::new()
                .line_number(true)
                .before_context(context)
                .after_context(context)
                .binary_detection(binary)
                .heap_limit(Some(MAX_STREAM_BUFFER_BYTES))
                .build()
        };
        Search {
            fs,
            matcher,
            required: Required::of(&options.pattern, options.fixed_strings, options.ignore_case),
            text_searcher: build(BinaryDetection::none()),
            stream_searcher: build(BinaryDetection::quit(b'\0')),
            buf: Vec::new(),
            found: Found {
                report: GrepReport::default(),
                max_results: options.max_results.max(1),
                files_with_matches: options.files_with_matches,
                budget: Budget::new(options.max_output_bytes),
                full: false,
                stopped: false,
                capped_by_output: false,
            },
            errors: walk::WalkSummary::default(),
            binary_files: 0,
        }
    }

    fn stopped(&self) -> bool {
        self.found.stopped
    }

    fn summary_error(&mut self, path: &str, error: &io::Error) {
        self.errors.error(path, error);
    }

    /// Searches one open file.
    fn file(&mut self, mut file: F::File, path: &str) {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        match self.fs.read_up_to(&mut file, &mut buf, WHOLE_FILE_BYTES) {
            Ok(true) => self.search(&buf, None, path),
            Ok(false) => self.search(&buf, Some(file), path),
            Err(error) => {
                self.found.report.files_searched += 1;
                self.errors.error(path, &error);
            }
        }
        self.buf = buf;
    }

    /// Searches one file read whole.
    fn contents(&mut self, buf: &[u8], path: &str) {
        self.search(buf, None, path);
    }

    /// Searches `buf`, the start of a file, and then `rest`, the file it
    /// came from, if it was not read whole.
    fn search(&mut self, buf: &[u8], rest: Option<F::File>, path: &str) {
        self.found.report.files_searched += 1;
        let mut sink = Collector {
            found: &mut self.found,
            matcher: self.matcher,
            path,
            binary: false,
        };
        let result = match rest {
            None if memchr::memchr(0, buf).is_none() => match &self.required {
                // Nothing to report: the sink would see no match and no context.
                Some(required) if !required.is_in(buf) => Ok(()),
                _ => self
                    .text_searcher
                    .search_slice(self.matcher, buf, &mut sink),
            },
            None => self
                .stream_searcher
                .search_reader(self.matcher, buf, &mut sink),
            Some(file) => {
                self.stream_searcher
                    .search_reader(self.matcher, buf.chain(file), &mut sink)
            }
        };
        if sink.binary {
            self.binary_files += 1;
        }
        if let Err(error) = result {
            self.errors.error(path, &error);
        }
    }

    fn finish(mut self, walk: Option<walk::WalkSummary>) -> GrepReport {
        let mut notes = Vec::new();
        let found = &self.found;
        if found.capped_by_output {
            notes.push(
                "partial result: the output reached its size cap (the plugin's \
                 `max_output_bytes`); narrow the search with `path`, `glob` or a more specific \
                 pattern"
                    .to_string(),
            );
        } else if found.report.truncated {
            notes.push(format!(
                "partial result: stopped at max_results={}; more matches exist",
                found.max_results
            ));
        }
        if self.binary_files > 0 {
            notes.push(format!(
                "{} binary file(s) (with NUL bytes) were not searched past their first NUL, as \
                 ripgrep does",
                self.binary_files
            ));
        }
        if let Some(walk) = walk {
            self.errors.error_count += walk.error_count;
            self.errors.errors.extend(walk.errors);
        }
        if self.errors.error_count > 0 {
            let mut text = format!("{} path(s) could not be read", self.errors.error_count);
            for error in self.errors.errors.iter().take(5) {
                text.push_str(&format!("; {error}"));
            }
            notes.push(text);
        }
        let mut report = self.found.report;
        if !notes.is_empty() {
            report.note = Some(notes.join(". "));
        }
        report
    }
}

/// The `grep-searcher` sink for one file.
struct Collector<'s> {
    found: &'s mut Found,
    matcher: &'s RegexMatcher,
    path: &'s str,
    binary: bool,
}

impl Collector<'_> {
    /// Adds a line to the current file's entry, or ends the search when the
    /// output budget is spent; returns whether to go on.
    fn push(&mut self, line: Line) -> bool {
        let found = &mut *self.found;
        let new_file = found
            .report
            .files
            .last()
            .is_none_or(|file| file.path != self.path);
        let mut cost = line_cost(&line);
        if new_file {
            cost += file_cost(self.path);
        } else if found
            .report
            .files
            .last()
            .and_then(|file| file.lines.last())
            .is_some_and(|last| last.line + 1 < line.line)
        {
            // The `--` between groups of context.
            cost += 3;
        }
        if !found.budget.take(cost) {
            found.stopped = true;
            found.capped_by_output = true;
            found.report.truncated = true;
            return false;
        }
        if new_file {
            found.report.files.push(FileMatches {
                path: self.path.to_string(),
                lines: Vec::new(),
            });
        }
        if let Some(file) = found.report.files.last_mut() {
            file.lines.push(line);
        }
        true
    }
}

impl Sink for Collector<'_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        if self.found.full {
            self.found.report.truncated = true;
            self.found.stopped = true;
            return Ok(false);
        }
        if self.found.files_with_matches {
            if !self.found.budget.take(file_cost(self.path)) {
                self.found.stopped = true;
                self.found.capped_by_output = true;
                self.found.report.truncated = true;
                return Ok(false);
            }
            self.found.report.files.push(FileMatches {
                path: self.path.to_string(),
                lines: Vec::new(),
            });
        } else {
            let bytes = output::trim_terminator(mat.bytes());
            let focus = if bytes.len() > output::MAX_LINE_BYTES {
                self.matcher
                    .find(bytes)
                    .ok()
                    .flatten()
                    .map_or(0, |m| m.start())
            } else {
                0
            };
            let line = Line {
                line: mat.line_number().unwrap_or(0),
                text: output::shorten_line(bytes, focus),
                context: false,
            };
            if !self.push(line) {
                return Ok(false);
            }
        }
        self.found.report.matches += 1;
        if self.found.report.matches >= self.found.max_results as u64 {
            self.found.full = true;
        }
        // With `files_with_matches`, one match is enough for this file.
        Ok(!self.found.files_with_matches)
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, io::Error> {
        // Once full, only the last match's trailing context is wanted; lines
        // before a further match belong to a match that will not be shown.
        if self.found.full && *context.kind() != SinkContextKind::After {
            return Ok(true);
        }
        let line = Line {
            line: context.line_number().unwrap_or(0),
            text: output::shorten_line(output::trim_terminator(context.bytes()), 0),
            context: true,
        };
        Ok(self.push(line))
    }

    fn binary_data(&mut self, _: &Searcher, _: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// The bytes a line adds to the text (`N:text\n`) and to the JSON
/// (`{"line":N,"text":"..","context":true},`).
fn line_cost(line: &Line) -> usize {
    let digits = line.line.checked_ilog10().unwrap_or(0) as usize + 1;
    let text = digits + 2 + line.text.len();
    let json = 8 + digits + 8 + json_len(&line.text) + 2 + 1 + if line.context { 15 } else { 0 };
    text + json
}

/// The bytes a file adds: its heading and blank line in the text, its
/// object in the JSON.
fn file_cost(path: &str) -> usize {
    let text = path.len() + 2;
    let json = 8 + json_len(path) + 11 + 3;
    text + json
}

impl GrepReport {
    /// The readable rendering: ripgrep's `--heading` layout (the path, then
    /// `N:line` for matches and `N-line` for context, `--` between groups),
    /// then a summary line and the note.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for (index, file) in self.files.iter().enumerate() {
            if index > 0 && !file.lines.is_empty() {
                out.push('\n');
            }
            out.push_str(&file.path);
            out.push('\n');
            // As in ripgrep, `--` separates groups only when there is context.
            let has_context = file.lines.iter().any(|line| line.context);
            let mut previous: Option<u64> = None;
            for line in &file.lines {
                if has_context && previous.is_some_and(|previous| previous + 1 < line.line) {
                    out.push_str("--\n");
                }
                previous = Some(line.line);
                let separator = if line.context { '-' } else { ':' };
                out.push_str(&format!("{}{separator}{}\n", line.line, line.text));
            }
        }
        if !self.files.is_empty() {
            out.push('\n');
        }
        let what = if self.files.iter().all(|file| file.lines.is_empty()) && self.matches > 0 {
            "matching files"
        } else {
            "matching lines"
        };
        if self.matches == 0 {
            out.push_str(&format!(
                "No matches ({} files searched).",
                self.files_searched
            ));
        } else {
            out.push_str(&format!(
                "{} {what} in {} files ({} files searched).",
                self.matches,
                self.files.len(),
                self.files_searched
            ));
        }
        if let Some(note) = &self.note {
            out.push_str(&format!("\n[{note}]"));
        }
        out.push('\n');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vfs::StdFs;

    struct Tree {
        _dir: tempfile::TempDir,
        root: PathBuf,
    }

    impl Tree {
        fn new(files: &[(&str, &[u8])]) -> Tree {
            let dir = tempfile::tempdir().unwrap();
            let root = std::fs::canonicalize(dir.path()).unwrap();
            for (path, bytes) in files {
                let path = root.join(path);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, bytes).unwrap();
            }
            Tree { _dir: dir, root }
        }

        fn grep(&self, options: &GrepOptions) -> GrepReport {
            grep(&StdFs, &self.root, options).unwrap()
        }

        /// `relative/path:line:text` for every match and context line.
        fn hits(&self, options: &GrepOptions) -> Vec<String> {
            let prefix = format!("{}/", self.root.display());
            let mut hits = Vec::new();
            for file in self.grep(options).files {
                let path = file.path.strip_prefix(&prefix).unwrap().to_string();
                if file.lines.is_empty() {
                    hits.push(path.clone());
                }
                for line in file.lines {
                    let separator = if line.context { '-' } else { ':' };
                    hits.push(format!("{path}:{}{separator}{}", line.line, line.text));
                }
            }
            hits
        }
    }

    #[test]
    fn finds_lines_in_path_order() {
        let tree = Tree::new(&[
            ("b.rs", b"fn b() {}\nlet x;\n"),
            ("a/z.rs", b"nothing\nfn z() {}\n"),
            ("a.txt", b"fn in text\n"),
        ]);
        assert_eq!(
            tree.hits(&GrepOptions::new("fn [a-z]+")),
            [
                "a/z.rs:2:fn z() {}",
                "a.txt:1:fn in text",
                "b.rs:1:fn b() {}"
            ]
        );
    }

    #[test]
    fn binary_files_stop_at_the_buffer_with_a_nul_like_ripgrep() {
        // The same files ripgrep 13 was run on: `bin1.txt` shows nothing (its
        // NUL is in the first buffer), `bin2.txt` only the match before the
        // buffer holding its NUL.
        let mut bin2 = b"foo early\n".to_vec();
        bin2.extend(std::iter::repeat_n(b'a', 70000));
        bin2.extend_from_slice(b"\nfoo mid\n\0\nfoo late\n");
        let tree = Tree::new(&[
            ("bin1.txt", b"foo one\nbar\0baz foo\nfoo three\n"),
            ("bin2.txt", &bin2),
            ("ok.txt", b"foo\n"),
        ]);
        let report = tree.grep(&GrepOptions::new("foo"));
        assert_eq!(
            tree.hits(&GrepOptions::new("foo")),
            ["bin2.txt:1:foo early", "ok.txt:1:foo"]
        );
        assert!(report.note.unwrap().contains("2 binary file(s)"));
    }

    #[test]
    fn context_lines_and_groups() {
        let text: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let tree = Tree::new(&[("f.txt", text.as_bytes())]);
        let options = GrepOptions {
            context: 1,
            ..GrepOptions::new("^line (5|6|15)$")
        };
        assert_eq!(
            tree.hits(&options),
            [
                "f.txt:4-line 4",
                "f.txt:5:line 5",
                "f.txt:6:line 6",
                "f.txt:7-line 7",
                "f.txt:14-line 14",
                "f.txt:15:line 15",
                "f.txt:16-line 16",
            ]
        );
        let text = tree.grep(&options).text();
        assert!(text.contains("7-line 7\n--\n14-line 14\n"), "{text}");
    }

    #[test]
    fn max_results_keeps_the_last_trailing_context_only() {
        let text: String = (1..=10).map(|i| format!("m{i}\n")).collect();
        let tree = Tree::new(&[("f.txt", text.as_bytes())]);
        let options = GrepOptions {
            context: 1,
            max_results: 2,
            ..GrepOptions::new("^m(2|3|8)$")
        };
        let report = tree.grep(&options);
        assert!(report.truncated);
        assert_eq!(report.matches, 2);
        assert_eq!(
            tree.hits(&options),
            ["f.txt:1-m1", "f.txt:2:m2", "f.txt:3:m3", "f.txt:4-m4"]
        );
        assert!(report.note.unwrap().contains("max_results=2"));

        // Exactly max_results matches: not truncated.
        let exact = GrepOptions {
            max_results: 3,
            ..options
        };
        assert!(!tree.grep(&exact).truncated);
    }

    #[test]
    fn files_with_matches_and_globs() {
        let tree = Tree::new(&[
            ("a.rs", b"x\nx\n"),
            ("b.md", b"x\n"),
            ("c/d.rs", b"y\n"),
            ("c/e.rs", b"x\n"),
        ]);
        let options = GrepOptions {
            files_with_matches: true,
            globs: vec!["*.rs".into()],
            ..GrepOptions::new("x")
        };
        assert_eq!(tree.hits(&options), ["a.rs", "c/e.rs"]);
        assert_eq!(tree.grep(&options).matches, 2);
        let excluding = GrepOptions {
            globs: vec!["!c/**".into()],
            ..options
        };
        assert_eq!(tree.hits(&excluding), ["a.rs", "b.md"]);
    }

    #[test]
    fn case_fixed_strings_and_unicode() {
        let tree = Tree::new(&[(
            "u.txt",
            "Grüße aus Köln\nÄPFEL und birnen\na.b\naxb\n".as_bytes(),
        )]);
        let ci = GrepOptions {
            ignore_case: true,
            ..GrepOptions::new("äpfel")
        };
        assert_eq!(tree.hits(&ci), ["u.txt:2:ÄPFEL und birnen"]);
        assert_eq!(
            tree.hits(&GrepOptions::new(r"\bK\w+n\b")),
            ["u.txt:1:Grüße aus Köln"]
        );
        let fixed = GrepOptions {
            fixed_strings: true,
            ..GrepOptions::new("a.b")
        };
        assert_eq!(tree.hits(&fixed), ["u.txt:3:a.b"]);
        assert_eq!(tree.hits(&GrepOptions::new("a.b")).len(), 2);
    }

    #[test]
    fn bad_patterns_and_globs_are_errors() {
        let tree = Tree::new(&[("a", b"")]);
        match grep(&StdFs, &tree.root, &GrepOptions::new("fn (")) {
            Err(GrepError::Pattern(message)) => {
                assert!(message.contains("unclosed group"), "{message}")
            }
            other => panic!("{other:?}"),
        }
        let options = GrepOptions {
            globs: vec!["a{".into()],
            ..GrepOptions::new("x")
        };
        assert!(matches!(
            grep(&StdFs, &tree.root, &options),
            Err(GrepError::Glob(_))
        ));
    }

    #[test]
    fn output_cap_stops_cleanly() {
        let text = "match this line please\n".repeat(100_000);
        let tree = Tree::new(&[("big.txt", text.as_bytes())]);
        let options = GrepOptions {
            max_results: 1_000_000,
            max_output_bytes: 64 * 1024,
            ..GrepOptions::new("match")
        };
        let report = tree.grep(&options);
        assert!(report.truncated);
        assert!(report.note.as_deref().unwrap().contains("size cap"));
        let json = toolcell_sdk::serde_json::to_string(&report).unwrap();
        let size = json.len() + report.text().len();
        assert!(size <= 64 * 1024, "{size}");
        assert!(size > 48 * 1024, "the budget should be mostly used: {size}");
    }

    #[test]
    fn a_file_root_is_searched_whatever_the_rules() {
        let tree = Tree::new(&[(".hidden.txt", b"needle\n"), (".gitignore", b"*.txt\n")]);
        assert!(tree.hits(&GrepOptions::new("needle")).is_empty());
        let report = grep(
            &StdFs,
            &tree.root.join(".hidden.txt"),
            &GrepOptions::new("needle"),
        )
        .unwrap();
        assert_eq!(report.matches, 1);
    }

    #[cfg(unix)]
    #[test]
    fn special_files_are_never_opened() {
        use crate::test_support::{bounded, mkfifo};
        let tree = Tree::new(&[
            ("a.txt", b"needle\n"),
            ("inner/.git/HEAD", b""),
            ("inner/b.txt", b"needle\n"),
        ]);
        for pipe in ["pipe.txt", ".gitignore", "inner/.git/info/exclude"] {
            let path = tree.root.join(pipe);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            mkfifo(&path);
        }
        let _socket = std::os::unix::net::UnixListener::bind(tree.root.join("socket.txt"));
        let root = tree.root.clone();
        let report = bounded(move || grep(&StdFs, &root, &GrepOptions::new("needle")).unwrap());
        assert_eq!(report.matches, 2, "{report:?}");
        assert_eq!(report.files_searched, 2, "{report:?}");
        assert_eq!(report.note, None);

        let pipe = tree.root.join("pipe.txt");
        let refused = bounded(move || grep(&StdFs, &pipe, &GrepOptions::new("needle")));
        assert!(matches!(refused, Err(GrepError::Special)), "{refused:?}");
    }

    #[test]
    fn progress_counts_files_searched() {
        let files: Vec<(String, &[u8])> = (0..1234)
            .map(|i| (format!("d{}/f{i}.txt", i % 7), &b"x\nneedle\n"[..]))
            .collect();
        let borrowed: Vec<(&str, &[u8])> = files.iter().map(|(p, b)| (p.as_str(), *b)).collect();
        let tree = Tree::new(&borrowed);
        let mut reports = Vec::new();
        let mut sink = |done: u64, message: &str| reports.push((done, message.to_string()));
        let options = GrepOptions {
            max_results: 100_000,
            ..GrepOptions::new("needle")
        };
        let report =
            grep_with_progress(&StdFs, &tree.root, &options, &mut Progress::new(&mut sink))
                .unwrap();
        assert_eq!(report.matches, 1234);
        assert_eq!(
            reports,
            [
                (
                    500,
                    "searched 500 files, matching lines so far: 500".to_string()
                ),
                (
                    1000,
                    "searched 1000 files, matching lines so far: 1000".to_string()
                ),
            ]
        );
    }

    #[test]
    fn long_lines_are_shortened_around_the_match() {
        let line = format!("{}NEEDLE{}\n", "x".repeat(100_000), "y".repeat(100_000));
        let tree = Tree::new(&[("long.txt", line.as_bytes())]);
        let report = tree.grep(&GrepOptions::new("NEEDLE"));
        let text = &report.files[0].lines[0].text;
        assert!(
            text.contains("NEEDLE") && text.len() < 600,
            "{}",
            text.len()
        );
        assert!(
            text.ends_with("[line of 200006 bytes, shortened]"),
            "{text}"
        );
    }
}
