//! The tools: arguments, descriptions, and the glue from the SDK to the engines.

use std::path::{Path, PathBuf};

use toolcell_sdk::schemars::JsonSchema;
use toolcell_sdk::serde::Deserialize;
use toolcell_sdk::{Category, Error, Output, Tool, host};

use crate::concat::{self, ConcatError, ConcatOptions};
use crate::glob::{self, GlobError, GlobOptions, GlobReport, KindFilter};
use crate::grep::{self, GrepError, GrepOptions, GrepReport};
use crate::output;
use crate::progress::Progress;
use crate::vfs::{self, WasiFs};

fn tools() -> Vec<Tool> {
    vec![
        Tool::new("glob", glob_tool)
            .title("Find paths")
            .description(
                "Find paths matching a glob pattern, sorted. `*` and `?` match within one path \
                 component, `**` matches any number of directories, `[abc]` and `{a,b}` as in \
                 shells. The pattern is relative to `path` (default: the first granted \
                 directory) or absolute. `kind` picks regular files (default), directories or \
                 any entry; `exclude` takes gitignore-style patterns (`node_modules`, \
                 `*.min.js`, `build/`). Hidden and git-ignored paths are included; `.git` \
                 directories are not entered; symlinks are listed, not followed. Returns at \
                 most `max_results` paths (default 1000) with `truncated` set when more match.",
            )
            .category(Category::Search)
            .output_schema::<GlobReport>()
            .read_only()
            .open_world(false),
        Tool::new("grep", grep_tool)
            .title("Search file contents")
            .description(
                "Search file contents with a regular expression (Rust regex syntax, like \
                 ripgrep), under `path` (a directory or one file; default: the first granted \
                 directory). Like ripgrep, it skips hidden files, files ignored by \
                 .gitignore/.ignore/.rgignore, and binary files. `glob` narrows the files \
                 (`*.rs`, `!tests/**`); `ignore_case`, `fixed_strings` (take the pattern \
                 literally) and `context` (lines before and after) work as in ripgrep. \
                 `files_with_matches` returns only the paths. Returns file, line number and \
                 line for each match, at most `max_results` matching lines (default 500), with \
                 `truncated` set when there are more.",
            )
            .category(Category::Search)
            .output_schema::<GrepReport>()
            .read_only()
            .open_world(false),
        Tool::new("concat_files", concat_tool)
            .title("Concatenate files")
            .description(
                "Return the contents of several text files in one result, each under a \
                 `==> path <==` header: the `paths` given, in order, then the files matching \
                 `glob` (relative to the first granted directory, or absolute). `dry_run` \
                 (the default) only lists the files with their sizes and which fit in \
                 `max_bytes`; call again with `dry_run: false` for the contents. Whole files \
                 only: it stops before the first file that would pass `max_bytes` or the \
                 output cap, and says which files were left out. Binary files are skipped.",
            )
            .category(Category::Search)
            .read_only()
            .open_world(false),
    ]
}

toolcell_sdk::export_plugin!(tools);

/// Arguments of `glob`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct GlobArgs {
    /// The glob pattern, such as `**/*.rs` or `src/*/mod.rs`: relative to `path`, or absolute.
    pattern: String,
    /// The directory the pattern is relative to. Default: the first granted directory.
    path: Option<String>,
    /// The most paths to return. Default 1000.
    #[serde(default = "default_glob_max")]
    #[schemars(range(min = 1, max = 100000))]
    max_results: u64,
    /// Gitignore-style patterns to leave out, relative to `path`: `node_modules`, `*.min.js`,
    /// `target/`. A matching directory is not entered.
    #[serde(default)]
    exclude: Vec<String>,
    /// `file` (regular files, the default), `dir` (directories) or `any`.
    #[serde(default)]
    kind: KindFilter,
}

fn default_glob_max() -> u64 {
    1000
}

fn glob_tool(args: GlobArgs) -> Result<Output, Error> {
    let root = root(args.path.as_deref())?;
    let options = GlobOptions {
        pattern: args.pattern,
        max_results: saturating_usize(args.max_results),
        exclude: args.exclude,
        kind: args.kind,
        max_output_bytes: max_output_bytes(),
    };
    let mut sink = report_progress;
    let report = glob::glob_with_progress(
        &WasiFs::new(),
        &root,
        &options,
        &mut Progress::new(&mut sink),
    )
    .map_err(glob_error)?;
    let text = report.text();
    Output::structured(&report, text)
}

fn glob_error(error: GlobError) -> Error {
    match error {
        GlobError::Pattern(message) => Error::new(format!("invalid glob pattern: {message}")),
        GlobError::Base(path, error) => Error::io(&path, error),
    }
}

/// Arguments of `grep`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct GrepArgs {
    /// The regular expression (Rust regex syntax, as in ripgrep), or a literal string with
    /// `fixed_strings`. It matches within one line.
    pattern: String,
    /// The directory or file to search. Default: the first granted directory.
    path: Option<String>,
    /// Only search files matching these globs (`*.rs`, `src/**`); a glob starting with `!`
    /// excludes (`!*.min.js`). As ripgrep's `--glob`, they override ignore files.
    #[serde(default)]
    glob: Vec<String>,
    /// Match regardless of case. Default false.
    #[serde(default)]
    ignore_case: bool,
    /// Take the pattern as a literal string, not a regular expression. Default false.
    #[serde(default)]
    fixed_strings: bool,
    /// Lines of context to show before and after each match. Default 0.
    #[schemars(range(min = 0, max = 100))]
    context: Option<u64>,
    /// The most matching lines to return (files, with `files_with_matches`). Default 500.
    #[serde(default = "default_grep_max")]
    #[schemars(range(min = 1, max = 100000))]
    max_results: u64,
    /// Return only the paths of the files that match. Default false.
    #[serde(default)]
    files_with_matches: bool,
}

fn default_grep_max() -> u64 {
    500
}

fn grep_tool(args: GrepArgs) -> Result<Output, Error> {
    let root = root(args.path.as_deref())?;
    let options = GrepOptions {
        ignore_case: args.ignore_case,
        fixed_strings: args.fixed_strings,
        context: saturating_usize(args.context.unwrap_or(0)),
        max_results: saturating_usize(args.max_results),
        files_with_matches: args.files_with_matches,
        globs: args.glob,
        max_output_bytes: max_output_bytes(),
        parents_from: mount_of(&root),
        ..GrepOptions::new(args.pattern.clone())
    };
    let mut sink = report_progress;
    let mut progress = Progress::new(&mut sink);
    let report = grep::grep_with_progress(&WasiFs::new(), &root, &options, &mut progress).map_err(
        |error| match error {
            GrepError::Pattern(message) => {
                Error::new(format!("invalid regex `{}`: {message}", args.pattern))
            }
            GrepError::Glob(message) => Error::new(format!("invalid glob: {message}")),
            GrepError::Root(error) => Error::io(&root, error),
            GrepError::Special => {
                special_file(&root, "grep searches regular files and directories")
            }
        },
    )?;
    let text = report.text();
    Output::structured(&report, text)
}

/// Arguments of `concat_files`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct ConcatArgs {
    /// Files to include, in this order: absolute, or relative to the first granted directory.
    #[serde(default)]
    paths: Vec<String>,
    /// A glob pattern for more files (`src/**/*.rs`), relative to the first granted directory
    /// or absolute; they follow `paths`, sorted.
    glob: Option<String>,
    /// The most bytes of file contents to return. Default and maximum: what fits in the
    /// output cap.
    #[schemars(range(min = 1))]
    max_bytes: Option<u64>,
    /// Only list the files, their sizes and which fit; read nothing. Default true.
    #[serde(default = "yes")]
    dry_run: bool,
}

fn yes() -> bool {
    true
}

fn concat_tool(args: ConcatArgs) -> Result<Output, Error> {
    let root = root(None)?;
    let paths = args
        .paths
        .iter()
        .map(|path| toolcell_sdk::fs::resolve(path).map(|path| vfs::normalize(&path)))
        .collect::<Result<Vec<_>, _>>()?;
    let options = ConcatOptions {
        paths,
        glob: args.glob,
        max_bytes: args.max_bytes.map(saturating_usize),
        dry_run: args.dry_run,
        max_output_bytes: max_output_bytes(),
    };
    let mut sink = report_progress;
    let mut progress = Progress::new(&mut sink);
    let text = concat::concat_with_progress(&WasiFs::new(), &root, &options, &mut progress)
        .map_err(|error| match error {
            ConcatError::Nothing => Error::new("give `paths`, `glob`, or both"),
            ConcatError::Path(path, error) => Error::io(&path, error),
            ConcatError::NotAFile(path) => Error::new(format!(
                "`{}` is a directory, not a regular file; use `glob` to select files in a \
                 directory",
                toolcell_sdk::fs::display(&path)
            )),
            ConcatError::Special(path) => {
                special_file(&path, "concat_files reads regular files only")
            }
            ConcatError::Glob(error) => glob_error(error),
        })?;
    Ok(Output::text(text))
}

/// Passes a progress report to the host, which sends it to the client if the
/// call asked for progress.
fn report_progress(done: u64, message: &str) {
    host::progress(done as f64, None, Some(message));
}

/// The error for `path`, a named pipe, a socket or a device, which `rule`
/// refuses. (The sandbox does not tell a named pipe from a socket.)
fn special_file(path: &Path, rule: &str) -> Error {
    Error::new(format!(
        "`{}` is a special file (a named pipe, a socket or a device), not a regular file; {rule}",
        toolcell_sdk::fs::display(path)
    ))
}

/// The directory or file a tool works under: `path` resolved against the
/// first mount, or the first mount itself; lexically normalised.
fn root(path: Option<&str>) -> Result<PathBuf, Error> {
    let path = toolcell_sdk::fs::resolve(path.unwrap_or("."))?;
    Ok(vfs::normalize(&path))
}

/// The mount holding `path`, whose ignore files above `path` apply too.
fn mount_of(path: &Path) -> Option<PathBuf> {
    toolcell_sdk::fs::mounts()
        .into_iter()
        .filter(|mount| path.starts_with(mount))
        .max_by_key(|mount| mount.components().count())
}

/// The output budget: the plugin's `max_output_bytes` config value.
fn max_output_bytes() -> usize {
    host::config("max_output_bytes")
        .and_then(|value| value.trim().parse::<usize>().ok())
        .unwrap_or(output::DEFAULT_MAX_OUTPUT_BYTES)
}

fn saturating_usize(value: u64) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}
