//! Several files in one result: the `concat_files` tool's engine.
//!
//! The files are the explicit `paths`, in the order given, then the files a
//! glob finds, in path order, each once. A dry run (the default) lists them
//! with their sizes and says which fit; a real run returns their contents,
//! each under a `==> path <==` header, whole files only, stopping before the
//! first that would pass `max_bytes` or the output cap.

use std::io;
use std::path::{Path, PathBuf};

use crate::glob::{self, GlobError, GlobOptions, KindFilter};
use crate::output::Budget;
use crate::progress::Progress;
use crate::vfs::{Fs, Kind};

/// The most files one call considers.
pub const MAX_FILES: usize = 1000;

/// What to concatenate.
#[derive(Clone, Debug, Default)]
pub struct ConcatOptions {
    /// Files, absolute and normal, in the order wanted.
    pub paths: Vec<PathBuf>,
    /// A glob pattern, relative to the root or absolute, for more files.
    pub glob: Option<String>,
    /// The most bytes of file contents to return.
    pub max_bytes: Option<usize>,
    /// List the files and sizes instead of returning contents.
    pub dry_run: bool,
    /// The budget for the whole text.
    pub max_output_bytes: usize,
}

/// Why the files could not be listed.
#[derive(Debug)]
#[non_exhaustive]
pub enum ConcatError {
    /// Neither `paths` nor `glob` was given.
    Nothing,
    /// An explicit path cannot be read.
    Path(PathBuf, io::Error),
    /// An explicit path is a directory.
    NotAFile(PathBuf),
    /// An explicit path is a named pipe, a socket or a device, which is
    /// never opened: that could block, or never end.
    Special(PathBuf),
    /// The glob failed.
    Glob(GlobError),
}

struct Item {
    path: String,
    size: u64,
}

/// Lists or concatenates the files; returns the text of the result.
pub fn concat<F: Fs>(fs: &F, root: &Path, options: &ConcatOptions) -> Result<String, ConcatError> {
    concat_with_progress(fs, root, options, &mut Progress::none())
}

/// [`concat()`], counting in `progress` each entry the glob walks, then each
/// file read.
pub fn concat_with_progress<F: Fs>(
    fs: &F,
    root: &Path,
    options: &ConcatOptions,
    progress: &mut Progress<'_>,
) -> Result<String, ConcatError> {
    if options.paths.is_empty() && options.glob.is_none() {
        return Err(ConcatError::Nothing);
    }
    let mut items: Vec<Item> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut listing_truncated = false;
    for path in &options.paths {
        let meta = fs
            .stat(path)
            .map_err(|e| ConcatError::Path(path.clone(), e))?;
        match meta.kind {
            Kind::File => {}
            Kind::Dir => return Err(ConcatError::NotAFile(path.clone())),
            Kind::Symlink | Kind::Other => return Err(ConcatError::Special(path.clone())),
        }
        let text = path.to_string_lossy().into_owned();
        if seen.insert(text.clone()) {
            items.push(Item {
                path: text,
                size: meta.size,
            });
        }
    }
    if let Some(pattern) = &options.glob {
        // Regular files only: the listing says what each entry is, so a
        // named pipe or a device is never opened.
        let found = glob::glob_with_progress(
            fs,
            root,
            &GlobOptions {
                pattern: pattern.clone(),
                max_results: MAX_FILES,
                exclude: Vec::new(),
                kind: KindFilter::File,
                max_output_bytes: usize::MAX,
            },
            progress,
        )
        .map_err(ConcatError::Glob)?;
        listing_truncated = found.truncated;
        for path in found.paths {
            if !seen.insert(path.clone()) {
                continue;
            }
            // A file that vanished or cannot be read is listed as empty and
            // reported when read.
            let size = fs.stat(Path::new(&path)).map_or(0, |meta| meta.size);
            items.push(Item { path, size });
        }
    }
    items.truncate(MAX_FILES);

    let budget_bytes = options
        .max_output_bytes
        .saturating_sub(crate::output::RESERVE);
    let max_bytes = options.max_bytes.unwrap_or(usize::MAX).min(budget_bytes);
    let clamped = options.max_bytes.is_some_and(|asked| asked > budget_bytes);
    let mut out = if options.dry_run {
        dry_run(&items, max_bytes, options.max_output_bytes)
    } else {
        contents(fs, &items, max_bytes, options.max_output_bytes, progress)
    };
    if listing_truncated {
        out.push_str(&format!(
            "[the glob matched more than {MAX_FILES} files; only the first {MAX_FILES} are considered]\n"
        ));
    }
    if clamped {
        out.push_str(&format!(
            "[max_bytes was lowered to {max_bytes}, what fits under the output cap (the plugin's \
             `max_output_bytes`)]\n"
        ));
    }
    Ok(out)
}

fn dry_run(items: &[Item], max_bytes: usize, max_output_bytes: usize) -> String {
    let total: u64 = items.iter().map(|item| item.size).sum();
    let mut fitting = 0;
    let mut fitting_bytes: u64 = 0;
    for item in items {
        if fitting_bytes + item.size > max_bytes as u64 {
            break;
        }
        fitting += 1;
        fitting_bytes += item.size;
    }
    let mut budget = Budget::new(max_output_bytes);
    let mut out = format!(
        "{} files, {total} bytes in all; the first {fitting} ({fitting_bytes} bytes) fit in \
         {max_bytes} bytes:\n",
        items.len()
    );
    for (index, item) in items.iter().enumerate() {
        let mark = if index < fitting {
            ""
        } else {
            "  (does not fit)"
        };
        let line = format!("{:>12}  {}{mark}\n", item.size, item.path);
        if !budget.take(line.len()) {
            out.push_str(&format!(
                "[listing cut at the output cap: {} more files]\n",
                items.len() - index
            ));
            break;
        }
        out.push_str(&line);
    }
    out.push_str("[dry run: no file was read; call again with dry_run=false for the contents]\n");
    out
}

fn contents<F: Fs>(
    fs: &F,
    items: &[Item],
    max_bytes: usize,
    max_output_bytes: usize,
    progress: &mut Progress<'_>,
) -> String {
    let mut budget = Budget::new(max_output_bytes);
    let mut out = String::new();
    let mut included_bytes = 0usize;
    for (index, item) in items.iter().enumerate() {
        progress.tick(|_| format!("reading file {} of {}", index + 1, items.len()));
        let header = format!("==> {} <==\n", item.path);
        let left = max_bytes.saturating_sub(included_bytes);
        let mut bytes = Vec::new();
        let read = fs.open_path(Path::new(&item.path)).and_then(|mut file| {
            // One byte more than fits tells a file that does not fit.
            fs.read_up_to(&mut file, &mut bytes, left.saturating_add(1))
        });
        let body = match read {
            Err(error) => format!("[cannot read: {error}]\n"),
            Ok(_) if bytes.len() > left => {
                let reason = format!(
                    "stopped before `{}` ({} bytes), which would pass the limit of {max_bytes} \
                     bytes",
                    item.path, item.size
                );
                stop_note(&mut out, reason, items, index, included_bytes);
                return out;
            }
            Ok(_) if memchr::memchr(0, &bytes).is_some() => "[binary file, skipped]\n".to_string(),
            Ok(_) => {
                let mut text = String::from_utf8_lossy(&bytes).into_owned();
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                text
            }
        };
        let separator = usize::from(index > 0);
        if !budget.take(separator + header.len() + body.len()) {
            let reason = format!(
                "stopped before `{}`: the output reached its size cap (the plugin's \
                 `max_output_bytes`)",
                item.path
            );
            stop_note(&mut out, reason, items, index, included_bytes);
            return out;
        }
        if index > 0 {
            out.push('\n');
        }
        out.push_str(&header);
        out.push_str(&body);
        included_bytes += bytes.len();
    }
    if items.is_empty() {
        out.push_str("No files match.\n");
    }
    out
}

/// Ends a partial result with a note naming what was left out: every file
/// before `index` was included, none from it on.
fn stop_note(
    out: &mut String,
    reason: String,
    items: &[Item],
    index: usize,
    included_bytes: usize,
) {
    let left_out: Vec<&str> = items[index..]
        .iter()
        .take(20)
        .map(|item| item.path.as_str())
        .collect();
    let more = items.len() - index - left_out.len();
    let mut note = format!(
        "\n[partial result: {index} of {} files included ({included_bytes} bytes); {}. Not \
         included: {}",
        items.len(),
        reason,
        left_out.join(", ")
    );
    if more > 0 {
        note.push_str(&format!(" and {more} more"));
    }
    note.push_str(". Ask for fewer files, or read large ones with read_file.]\n");
    out.push_str(&note);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vfs::StdFs;

    fn tree(files: &[(&str, &[u8])]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for (path, bytes) in files {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
        (dir, root)
    }

    fn options() -> ConcatOptions {
        ConcatOptions {
            max_output_bytes: crate::output::DEFAULT_MAX_OUTPUT_BYTES,
            ..ConcatOptions::default()
        }
    }

    #[test]
    fn paths_then_glob_each_once() {
        let (_dir, root) = tree(&[
            ("a.txt", b"alpha\n"),
            ("b.txt", b"beta"),
            ("c.md", b"gamma\n"),
        ]);
        let opts = ConcatOptions {
            paths: vec![root.join("c.md"), root.join("b.txt")],
            glob: Some("*.txt".into()),
            ..options()
        };
        let text = concat(&StdFs, &root, &opts).unwrap();
        let r = root.display();
        assert_eq!(
            text,
            format!(
                "==> {r}/c.md <==\ngamma\n\n==> {r}/b.txt <==\nbeta\n\n==> {r}/a.txt <==\nalpha\n"
            )
        );
    }

    #[test]
    fn dry_run_lists_sizes_and_what_fits() {
        let (_dir, root) = tree(&[("a.txt", b"12345"), ("b.txt", b"1234567890")]);
        let opts = ConcatOptions {
            glob: Some("*.txt".into()),
            max_bytes: Some(12),
            dry_run: true,
            ..options()
        };
        let text = concat(&StdFs, &root, &opts).unwrap();
        assert!(
            text.starts_with("2 files, 15 bytes in all; the first 1 (5 bytes) fit in 12 bytes:\n"),
            "{text}"
        );
        assert!(
            text.contains("10  ") && text.contains("b.txt  (does not fit)"),
            "{text}"
        );
        assert!(text.contains("dry run"), "{text}");
    }

    #[test]
    fn stops_before_the_file_that_does_not_fit() {
        let (_dir, root) = tree(&[
            ("a.txt", b"12345\n"),
            ("b.txt", b"1234567890\n"),
            ("c.txt", b"1\n"),
        ]);
        let opts = ConcatOptions {
            glob: Some("*.txt".into()),
            max_bytes: Some(12),
            ..options()
        };
        let text = concat(&StdFs, &root, &opts).unwrap();
        assert!(text.contains("12345\n"), "{text}");
        assert!(!text.contains("1234567890"), "{text}");
        assert!(
            text.contains("partial result: 1 of 3 files included (6 bytes)"),
            "{text}"
        );
        assert!(text.contains("b.txt") && text.contains("c.txt"), "{text}");
    }

    #[cfg(unix)]
    #[test]
    fn special_files_are_never_opened() {
        use crate::test_support::{bounded, mkfifo};
        let (dir, root) = tree(&[("a.txt", b"alpha\n")]);
        mkfifo(&root.join("pipe.txt"));
        let _socket = std::os::unix::net::UnixListener::bind(root.join("socket.txt"));
        let listed = {
            let root = root.clone();
            bounded(move || {
                let opts = ConcatOptions {
                    glob: Some("*".into()),
                    ..options()
                };
                concat(&StdFs, &root, &opts).unwrap()
            })
        };
        assert_eq!(listed, format!("==> {}/a.txt <==\nalpha\n", root.display()));
        let pipe = root.join("pipe.txt");
        let refused = bounded(move || {
            let opts = ConcatOptions {
                paths: vec![pipe],
                ..options()
            };
            concat(&StdFs, &root, &opts)
        });
        assert!(
            matches!(refused, Err(ConcatError::Special(_))),
            "{refused:?}"
        );
        drop(dir);
    }

    #[test]
    fn binary_files_are_skipped_and_errors_are_errors() {
        let (_dir, root) = tree(&[("bin", b"a\0b"), ("dir/x", b"")]);
        let opts = ConcatOptions {
            paths: vec![root.join("bin")],
            ..options()
        };
        assert!(
            concat(&StdFs, &root, &opts)
                .unwrap()
                .contains("[binary file, skipped]")
        );
        let missing = ConcatOptions {
            paths: vec![root.join("missing")],
            ..options()
        };
        assert!(matches!(
            concat(&StdFs, &root, &missing),
            Err(ConcatError::Path(..))
        ));
        let dir = ConcatOptions {
            paths: vec![root.join("dir")],
            ..options()
        };
        assert!(matches!(
            concat(&StdFs, &root, &dir),
            Err(ConcatError::NotAFile(_))
        ));
        assert!(matches!(
            concat(&StdFs, &root, &options()),
            Err(ConcatError::Nothing)
        ));
    }
}
