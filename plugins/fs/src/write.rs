//! The `fs` plugin's write tools: `write_file`, `edit_file`, `append_file`,
//! `mkdir`, `rename` and `copy_file`, all in category `write`.
//!
//! Whole-file writes (`write_file`, `edit_file`, `copy_file`) go through the
//! SDK's [`AtomicFile`], written beside the target, synced and then moved
//! into place by [`commit`]: a rename to replace, a hard link where an
//! existing file must not be replaced (so the check cannot race another
//! writer). A failure removes the temporary file; a trap (a time or memory
//! limit) cannot run that cleanup and may leave a `.<name>.toolcell-tmp-…`
//! file behind, but never a half-written target.
//!
//! Replacing a file this way gives it a new inode: hard links to the old file
//! keep the old contents, and the new file gets default permissions (WASI
//! cannot read or set modes, so an executable bit is not carried over).
//! A symlink at the target is followed, so the file it points to is written
//! and the link stays; the sandbox refuses a link that leads out of the
//! mounts. `rename` moves a symlink itself, as `mv` does.
//!
//! A path that exists but is a named pipe, a socket or a device is refused
//! before anything opens it, as the read tools refuse it: at the target of
//! `write_file`, `edit_file` and `append_file`, and at either end of
//! `copy_file`. `rename` opens nothing and moves one like any other entry.
//!
//! The pure parts (replacing text, building appended text, shortening
//! diffs) are plain functions with unit tests at the end.

use std::fmt::Write as _;
use std::fs::{self, File, OpenOptions};
use std::io::{self, ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use similar::TextDiff;
use toolcell_sdk::fs::AtomicFile;
use toolcell_sdk::schemars::JsonSchema;
use toolcell_sdk::serde::{Deserialize, Serialize};
use toolcell_sdk::{Category, Error, Output, Tool, host};

use crate::{DEFAULT_MAX_FILE_BYTES, human_size, not_regular, nul_at};

/// The longest diff `edit_file` returns (it is sent twice: as text and in
/// the structured content), so that a large edit does not push the result
/// over the host's `max_output_bytes`.
const DEFAULT_MAX_DIFF_BYTES: usize = 64 * 1024;
/// How many symlinks a path may pass through, as Linux allows.
const MAX_SYMLINK_HOPS: usize = 40;
const COPY_CHUNK_BYTES: usize = 1024 * 1024;

/// The write tools, for the plugin's tool list.
pub(crate) fn tools() -> Vec<Tool> {
    vec![
        Tool::new("write_file", write_file)
            .title("Write file")
            .description(
                "Create a file with the given text, or replace an existing file whole when \
                 `overwrite` is true (default false: an existing file is refused). The write is \
                 atomic: the file is either the old one or the complete new one. The directory \
                 must exist (see `mkdir`). To change part of a file, use `edit_file`.",
            )
            .category(Category::Write)
            .output_schema::<WriteFileResult>()
            .destructive(true)
            .idempotent(false)
            .open_world(false),
        Tool::new("edit_file", edit_file)
            .title("Edit file")
            .description(
                "Replace exact text in a UTF-8 text file and return a unified diff of the \
                 change. `old_string` must appear exactly once, unless `replace_all` is true; \
                 include enough surrounding lines to make it unique. Whitespace and line endings \
                 must match the file exactly. `dry_run` returns the diff without writing. The \
                 write is atomic.",
            )
            .category(Category::Write)
            .output_schema::<EditFileResult>()
            .destructive(true)
            .idempotent(false)
            .open_world(false),
        Tool::new("append_file", append_file)
            .title("Append to file")
            .description(
                "Append text to the end of a file, creating the file if it is missing. With \
                 `newline` (the default) the text is added as whole lines: a newline is added \
                 after it if it lacks one, and before it if the file does not end with one. \
                 With `newline` false the text is appended exactly as given.",
            )
            .category(Category::Write)
            .destructive(false)
            .idempotent(false)
            .open_world(false),
        Tool::new("mkdir", mkdir)
            .title("Make directory")
            .description(
                "Create a directory, and its missing parents unless `parents` is false. A \
                 directory that already exists is success.",
            )
            .category(Category::Write)
            .destructive(false)
            .idempotent(true)
            .open_world(false),
        Tool::new("rename", rename)
            .title("Rename or move")
            .description(
                "Rename or move a file, directory or symlink to the full new path \
                 `destination`. An existing destination is refused unless `overwrite` is true; \
                 a directory is never replaced. Both paths must be in writable directories.",
            )
            .category(Category::Write)
            .destructive(true)
            .idempotent(false)
            .open_world(false),
        Tool::new("copy_file", copy_file)
            .title("Copy file")
            .description(
                "Copy one regular file to the full new path `destination`. An existing \
                 destination is refused unless `overwrite` is true. The copy appears \
                 atomically, complete or not at all.",
            )
            .category(Category::Write)
            .destructive(false)
            .idempotent(false)
            .open_world(false),
    ]
}

/// Arguments of `write_file`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct WriteFileArgs {
    /// The file: an absolute path, or relative to the first granted directory.
    path: String,
    /// The complete new contents.
    content: String,
    /// Replace the file if it exists. Default false: an existing file is refused.
    #[serde(default)]
    overwrite: bool,
}

/// What `write_file` returns as structured content.
#[derive(Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
struct WriteFileResult {
    /// The file written, resolved.
    path: String,
    /// How many bytes it now holds.
    bytes_written: u64,
    /// Whether the file is new (false: an existing file was replaced).
    created: bool,
}

fn write_file(args: WriteFileArgs) -> Result<Output, Error> {
    let path = toolcell_sdk::fs::resolve(&args.path)?;
    let target = follow_symlinks(&path)?;
    let created = match fs::metadata(&target) {
        Ok(meta) if meta.is_dir() => {
            return Err(Error::new(format!(
                "`{}` is a directory; write_file writes files",
                toolcell_sdk::fs::display(&path)
            )));
        }
        Ok(meta) if !meta.is_file() => {
            return Err(not_regular(&path, "write_file replaces regular files only"));
        }
        Ok(_) if !args.overwrite => return Err(exists_error(&path, WRITE_FILE_EXISTS_HINT)),
        Ok(_) => false,
        Err(e) if e.kind() == ErrorKind::NotFound => true,
        Err(e) => return Err(Error::io(&path, e)),
    };
    let mut temp = TempFile::beside(&target)?;
    temp.write_all(args.content.as_bytes())?;
    let existing = if args.overwrite {
        Existing::Replace
    } else {
        Existing::Refuse(WRITE_FILE_EXISTS_HINT)
    };
    commit(temp, &path, existing)?;
    let result = WriteFileResult {
        path: toolcell_sdk::fs::display(&path),
        bytes_written: args.content.len() as u64,
        created,
    };
    let text = format!(
        "wrote {} bytes to `{}` ({})",
        result.bytes_written,
        result.path,
        if created {
            "new file"
        } else {
            "replaced the existing file"
        }
    );
    Output::structured(&result, text)
}

const WRITE_FILE_EXISTS_HINT: &str =
    "pass overwrite=true to replace it whole, or use edit_file to change part of it";

/// Arguments of `edit_file`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct EditFileArgs {
    /// The file: an absolute path, or relative to the first granted directory.
    path: String,
    /// The exact text to replace, including whitespace. Must not be empty.
    old_string: String,
    /// The text to put in its place.
    new_string: String,
    /// Replace every occurrence. Default false: `old_string` must appear exactly once.
    #[serde(default)]
    replace_all: bool,
    /// Return the diff without writing anything. Default false.
    #[serde(default)]
    dry_run: bool,
}

/// What `edit_file` returns as structured content.
#[derive(Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
struct EditFileResult {
    /// The file edited, resolved.
    path: String,
    /// How many occurrences were replaced (or would be, in a dry run).
    replacements: usize,
    /// Whether this was a dry run, which wrote nothing.
    dry_run: bool,
    /// The change as a unified diff, shortened if very long.
    diff: String,
}

fn edit_file(args: EditFileArgs) -> Result<Output, Error> {
    let path = toolcell_sdk::fs::resolve(&args.path)?;
    let target = follow_symlinks(&path)?;
    let max_bytes = host::config("max_file_bytes")
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(DEFAULT_MAX_FILE_BYTES);
    let max_diff = host::config("max_diff_bytes")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(DEFAULT_MAX_DIFF_BYTES);

    // Looked at before it is opened: opening a named pipe would block.
    let meta = fs::metadata(&target).map_err(|e| Error::io(&path, e))?;
    if meta.is_dir() {
        return Err(Error::new(format!(
            "`{}` is a directory; edit_file edits files",
            toolcell_sdk::fs::display(&path)
        )));
    }
    if !meta.is_file() {
        return Err(not_regular(&path, "edit_file edits regular files only"));
    }
    if meta.len() > max_bytes {
        return Err(Error::new(format!(
            "`{}` is {}, over edit_file's limit of {}; use write_file to replace it whole",
            toolcell_sdk::fs::display(&path),
            human_size(meta.len()),
            human_size(max_bytes)
        )));
    }
    let file = File::open(&target).map_err(|e| Error::io(&path, e))?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(&path, e))?;
    if bytes.len() as u64 > max_bytes {
        // It grew past the limit after it was looked at.
        return Err(Error::new(format!(
            "`{}` is over edit_file's limit of {}; use write_file to replace it whole",
            toolcell_sdk::fs::display(&path),
            human_size(max_bytes)
        )));
    }
    let old_text = editable_text(&path, bytes)?;

    let (new_text, replacements) = replace(
        &old_text,
        &args.old_string,
        &args.new_string,
        args.replace_all,
    )
    .map_err(|refusal| refusal.into_error(&path))?;
    // The diff comes first: if it runs out of time, nothing has been written.
    let shown = toolcell_sdk::fs::display(&path);
    let diff = TextDiff::from_lines(&old_text, &new_text)
        .unified_diff()
        .context_radius(3)
        .header(&shown, &shown)
        .to_string();
    let diff = shorten_diff(&diff, max_diff);

    if !args.dry_run {
        let mut temp = TempFile::beside(&target)?;
        temp.write_all(new_text.as_bytes())?;
        commit(temp, &path, Existing::Replace)?;
    }
    let times = occurrences(replacements);
    let text = if args.dry_run {
        format!("dry run: would replace {times} in `{shown}`; nothing was written\n\n{diff}")
    } else {
        format!("replaced {times} in `{shown}`\n\n{diff}")
    };
    let result = EditFileResult {
        path: shown,
        replacements,
        dry_run: args.dry_run,
        diff,
    };
    Output::structured(&result, text)
}

/// Arguments of `append_file`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct AppendFileArgs {
    /// The file: an absolute path, or relative to the first granted directory.
    /// Created if missing.
    path: String,
    /// The text to append.
    content: String,
    /// Append whole lines: end `content` with a newline if it lacks one, and
    /// start a new line first if the file does not end with one. Default true;
    /// false appends `content` exactly as given.
    #[serde(default = "yes")]
    newline: bool,
}

fn yes() -> bool {
    true
}

fn append_file(args: AppendFileArgs) -> Result<Output, Error> {
    let path = toolcell_sdk::fs::resolve(&args.path)?;
    let last_byte = match fs::metadata(&path) {
        Ok(meta) if meta.is_dir() => {
            return Err(Error::new(format!(
                "`{}` is a directory; append_file appends to files",
                toolcell_sdk::fs::display(&path)
            )));
        }
        Ok(meta) if !meta.is_file() => {
            return Err(not_regular(
                &path,
                "append_file appends to regular files only",
            ));
        }
        Ok(meta) if meta.len() > 0 && args.newline => Some(last_byte(&path)?),
        Ok(_) => None,
        Err(e) if e.kind() == ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(&path, e)),
    };
    let text = appended_text(&args.content, args.newline, last_byte);
    let mut file = OpenOptions::new()
        .append(true)
        .create(true)
        .open(&path)
        .map_err(|e| create_error(&path, e))?;
    // One write, so a concurrent appender cannot land between the parts.
    file.write_all(text.as_bytes())
        .and_then(|()| file.flush())
        .map_err(|e| Error::io(&path, e))?;
    let size = file.metadata().map(|m| m.len()).ok();
    let mut out = format!(
        "appended {} bytes to `{}`",
        text.len(),
        toolcell_sdk::fs::display(&path)
    );
    if let Some(size) = size {
        let _ = write!(out, " (now {size} bytes)");
    }
    Ok(Output::text(out))
}

/// The last byte of a non-empty file.
fn last_byte(path: &Path) -> Result<u8, Error> {
    let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut byte = [0u8; 1];
    file.seek(SeekFrom::End(-1))
        .and_then(|_| file.read_exact(&mut byte))
        .map_err(|e| Error::io(path, e))?;
    Ok(byte[0])
}

/// Arguments of `mkdir`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct MkdirArgs {
    /// The directory: an absolute path, or relative to the first granted directory.
    path: String,
    /// Create missing parent directories too. Default true.
    #[serde(default = "yes")]
    parents: bool,
}

fn mkdir(args: MkdirArgs) -> Result<Output, Error> {
    let path = toolcell_sdk::fs::resolve(&args.path)?;
    match fs::metadata(&path) {
        Ok(meta) if meta.is_dir() => {
            return Ok(Output::text(format!(
                "`{}` already exists; nothing to do",
                toolcell_sdk::fs::display(&path)
            )));
        }
        Ok(_) => return Err(not_a_directory(&path)),
        Err(_) => {}
    }
    let created = if args.parents {
        fs::create_dir_all(&path)
    } else {
        fs::create_dir(&path)
    };
    match created {
        Ok(()) => Ok(Output::text(format!(
            "created `{}`",
            toolcell_sdk::fs::display(&path)
        ))),
        // Another writer got there first.
        Err(e) if e.kind() == ErrorKind::AlreadyExists => match fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => Ok(Output::text(format!(
                "`{}` already exists; nothing to do",
                toolcell_sdk::fs::display(&path)
            ))),
            Ok(_) => Err(not_a_directory(&path)),
            // Such as a symlink the sandbox will not follow.
            Err(e) => Err(Error::io(&path, e)),
        },
        Err(e) if e.kind() == ErrorKind::NotFound && !args.parents && inside_mounts(&path) => {
            Err(Error::new(format!(
                "cannot create `{}`: its parent directory does not exist; pass parents=true to \
                 create it too",
                toolcell_sdk::fs::display(&path)
            )))
        }
        Err(e) => Err(Error::io(&path, e)),
    }
}

fn not_a_directory(path: &Path) -> Error {
    Error::new(format!(
        "`{}` already exists and is not a directory",
        toolcell_sdk::fs::display(path)
    ))
}

/// Arguments of `rename`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct RenameArgs {
    /// What to move: an absolute path, or relative to the first granted directory.
    source: String,
    /// Its full new path (not the directory to move it into).
    destination: String,
    /// Replace an existing file at `destination`. Default false. A directory
    /// is never replaced.
    #[serde(default)]
    overwrite: bool,
}

fn rename(args: RenameArgs) -> Result<Output, Error> {
    let source = toolcell_sdk::fs::resolve(&args.source)?;
    let destination = toolcell_sdk::fs::resolve(&args.destination)?;
    if source == destination {
        return Err(Error::new(format!(
            "source and destination are the same path, `{}`",
            toolcell_sdk::fs::display(&source)
        )));
    }
    let source_meta = fs::symlink_metadata(&source).map_err(|e| Error::io(&source, e))?;
    match fs::symlink_metadata(&destination) {
        Ok(meta) if meta.is_dir() => return Err(directory_destination(&destination)),
        Ok(_) if !args.overwrite => return Err(exists_error(&destination, OVERWRITE_HINT)),
        Ok(_) if source_meta.is_dir() => {
            return Err(Error::new(format!(
                "`{}` is a file and `{}` a directory; rename does not replace a file with a \
                 directory",
                toolcell_sdk::fs::display(&destination),
                toolcell_sdk::fs::display(&source)
            )));
        }
        _ => {}
    }

    if !args.overwrite && !source_meta.is_dir() {
        // A hard link fails if the destination exists, so nothing is replaced
        // even if it appeared since the check above.
        match fs::hard_link(&source, &destination) {
            Ok(()) => {
                fs::remove_file(&source).map_err(|e| {
                    Error::new(format!(
                        "linked `{}` to `{}` but could not remove the source ({}); both \
                         names now refer to the file",
                        toolcell_sdk::fs::display(&source),
                        toolcell_sdk::fs::display(&destination),
                        move_reason(&e, false)
                    ))
                })?;
                return Ok(moved(&source, &destination));
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                return Err(exists_error(&destination, OVERWRITE_HINT));
            }
            // No hard links here (another filesystem, say): rename below.
            Err(_) => {}
        }
    }
    if !args.overwrite && fs::symlink_metadata(&destination).is_ok() {
        return Err(exists_error(&destination, OVERWRITE_HINT));
    }
    // For a directory without overwrite, a destination created between the
    // check above and this rename may be replaced if it is an empty
    // directory: WASI has no rename that refuses to replace.
    fs::rename(&source, &destination).map_err(|e| move_error(&source, &destination, &e))?;
    Ok(moved(&source, &destination))
}

fn moved(source: &Path, destination: &Path) -> Output {
    Output::text(format!(
        "moved `{}` to `{}`",
        toolcell_sdk::fs::display(source),
        toolcell_sdk::fs::display(destination)
    ))
}

const OVERWRITE_HINT: &str = "pass overwrite=true to replace it";

/// An error for a rename that failed, naming both ends.
fn move_error(source: &Path, destination: &Path, error: &io::Error) -> Error {
    if !inside_mounts(destination) {
        return Error::io(destination, clone_error(error));
    }
    let across_mounts = mount_of(source) != mount_of(destination);
    Error::new(format!(
        "cannot move `{}` to `{}`: {}",
        toolcell_sdk::fs::display(source),
        toolcell_sdk::fs::display(destination),
        move_reason(error, across_mounts)
    ))
}

/// Why a rename (or the removal that ends a move) failed. `across_mounts`:
/// the two ends are in different mounts, perhaps different filesystems.
fn move_reason(error: &io::Error, across_mounts: bool) -> String {
    match error.kind() {
        ErrorKind::NotFound => "no such file or directory (does the destination's directory \
                                exist? `mkdir` creates it)"
            .to_string(),
        ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem => {
            "permission denied (both paths must be in read-write mounts; the sandbox refuses \
             writes to read-only mounts and paths that leave a granted directory, including \
             through `..` or a symlink)"
                .to_string()
        }
        ErrorKind::CrossesDevices => {
            "they are on different filesystems; use copy_file instead".to_string()
        }
        // The sandbox reports a cross-device rename as a plain I/O error.
        _ if across_mounts => format!(
            "{error}; the two paths are in different mounts, which may be different \
             filesystems that a rename cannot cross: use copy_file instead"
        ),
        _ => error.to_string(),
    }
}

/// The mount `path` lies in: the longest one it starts with.
fn mount_of(path: &Path) -> Option<PathBuf> {
    toolcell_sdk::fs::mounts()
        .into_iter()
        .filter(|mount| path.starts_with(mount))
        .max_by_key(|mount| mount.as_os_str().len())
}

fn clone_error(error: &io::Error) -> io::Error {
    io::Error::new(error.kind(), error.to_string())
}

/// Arguments of `copy_file`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct CopyFileArgs {
    /// The file to copy: an absolute path, or relative to the first granted directory.
    source: String,
    /// The copy's full path (not the directory to copy it into).
    destination: String,
    /// Replace an existing file at `destination`. Default false.
    #[serde(default)]
    overwrite: bool,
}

fn copy_file(args: CopyFileArgs) -> Result<Output, Error> {
    let source = toolcell_sdk::fs::resolve(&args.source)?;
    let destination = toolcell_sdk::fs::resolve(&args.destination)?;
    // Both ends are looked at before either is opened: opening a named pipe
    // would block.
    let meta = fs::metadata(&source).map_err(|e| Error::io(&source, e))?;
    if meta.is_dir() {
        return Err(Error::new(format!(
            "`{}` is a directory; copy_file copies one regular file",
            toolcell_sdk::fs::display(&source)
        )));
    }
    if !meta.is_file() {
        return Err(not_regular(&source, "copy_file copies regular files only"));
    }
    let target = follow_symlinks(&destination)?;
    match fs::metadata(&target) {
        Ok(meta) if meta.is_dir() => return Err(directory_destination(&destination)),
        Ok(meta) if !meta.is_file() => {
            return Err(not_regular(
                &destination,
                "copy_file replaces regular files only",
            ));
        }
        Ok(_) if !args.overwrite => return Err(exists_error(&destination, OVERWRITE_HINT)),
        _ => {}
    }

    let mut input = File::open(&source).map_err(|e| Error::io(&source, e))?;
    let mut temp = TempFile::beside(&target)?;
    let mut buffer = vec![0u8; COPY_CHUNK_BYTES];
    let mut copied: u64 = 0;
    loop {
        let read = match input.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io(&source, e)),
        };
        temp.write_all(&buffer[..read])?;
        copied += read as u64;
        if host::is_cancelled() {
            return Err(Error::new(format!(
                "cancelled; `{}` was left as it was",
                toolcell_sdk::fs::display(&destination)
            )));
        }
        host::progress(copied as f64, Some(meta.len() as f64), None);
    }
    let existing = if args.overwrite {
        Existing::Replace
    } else {
        Existing::Refuse(OVERWRITE_HINT)
    };
    commit(temp, &destination, existing)?;
    Ok(Output::text(format!(
        "copied {copied} bytes from `{}` to `{}`",
        toolcell_sdk::fs::display(&source),
        toolcell_sdk::fs::display(&destination)
    )))
}

fn directory_destination(destination: &Path) -> Error {
    Error::new(format!(
        "`{}` is an existing directory; give the full new path, such as `{}`",
        toolcell_sdk::fs::display(destination),
        toolcell_sdk::fs::display(&destination.join("<name>"))
    ))
}

/// An [`AtomicFile`] whose errors name its target.
struct TempFile {
    file: AtomicFile,
    shown: PathBuf,
}

impl TempFile {
    /// Creates a new, empty temporary file in `target`'s directory.
    fn beside(target: &Path) -> Result<TempFile, Error> {
        let file = AtomicFile::create(target).map_err(|e| {
            if e.kind() == ErrorKind::InvalidInput {
                Error::new(format!(
                    "`{}` does not name a file",
                    toolcell_sdk::fs::display(target)
                ))
            } else {
                create_error(target, e)
            }
        })?;
        Ok(TempFile {
            file,
            shown: target.to_path_buf(),
        })
    }

    fn write_all(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.file
            .write_all(bytes)
            .map_err(|e| Error::io(&self.shown, e))
    }
}

/// What [`commit`] does when the target exists.
enum Existing<'a> {
    /// Replace it.
    Replace,
    /// Refuse, with this hint on how to proceed.
    Refuse(&'a str),
}

/// Moves a written temporary file to its target (`shown` is the path the
/// caller asked for, for messages).
fn commit(temp: TempFile, shown: &Path, existing: Existing) -> Result<(), Error> {
    let replace = matches!(existing, Existing::Replace);
    temp.file.commit(replace).map_err(|e| match existing {
        Existing::Refuse(hint) if e.kind() == ErrorKind::AlreadyExists => exists_error(shown, hint),
        _ => Error::io(shown, e),
    })
}

fn exists_error(path: &Path, hint: &str) -> Error {
    Error::new(format!(
        "`{}` already exists; {hint}",
        toolcell_sdk::fs::display(path)
    ))
}

/// An error for creating `path`, which says what to do about a missing
/// directory.
fn create_error(path: &Path, error: io::Error) -> Error {
    if error.kind() == ErrorKind::NotFound && inside_mounts(path) {
        let dir = path.parent().unwrap_or(path);
        return Error::new(format!(
            "cannot create `{}`: the directory `{}` does not exist; create it with `mkdir` first",
            toolcell_sdk::fs::display(path),
            toolcell_sdk::fs::display(dir)
        ));
    }
    Error::io(path, error)
}

fn inside_mounts(path: &Path) -> bool {
    toolcell_sdk::fs::mounts()
        .iter()
        .any(|mount| path.starts_with(mount))
}

/// The path a chain of symlinks at `path` ends at; `path` itself if it is
/// not a symlink or does not exist. Only the last component is followed: the
/// sandbox resolves the directories on the way.
fn follow_symlinks(path: &Path) -> Result<PathBuf, Error> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_SYMLINK_HOPS {
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = fs::read_link(&current).map_err(|e| Error::io(&current, e))?;
                current = match current.parent() {
                    Some(dir) => dir.join(link),
                    None => link,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(Error::new(format!(
        "`{}` passes through more than {MAX_SYMLINK_HOPS} symlinks",
        toolcell_sdk::fs::display(path)
    )))
}

/// Decodes a file for `edit_file`, refusing binary data and other encodings.
fn editable_text(path: &Path, bytes: Vec<u8>) -> Result<String, Error> {
    if let Some(at) = nul_at(&bytes) {
        return Err(Error::new(format!(
            "`{}` looks like a binary file (NUL byte at offset {at}); edit_file edits UTF-8 \
             text only, use write_file to replace it whole",
            toolcell_sdk::fs::display(path)
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        Error::new(format!(
            "`{}` is not UTF-8 text (invalid byte at offset {}); edit_file edits UTF-8 text \
             only, use write_file to replace it whole",
            toolcell_sdk::fs::display(path),
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Why `edit_file` will not make a replacement.
#[derive(Debug, PartialEq, Eq)]
enum EditRefusal {
    /// `old_string` is empty.
    Empty,
    /// `old_string` and `new_string` are equal.
    Unchanged,
    /// `old_string` does not appear.
    NotFound,
    /// `old_string` appears this many times and `replace_all` is off.
    Ambiguous(usize),
}

impl EditRefusal {
    fn into_error(self, path: &Path) -> Error {
        let path = toolcell_sdk::fs::display(path);
        Error::new(match self {
            EditRefusal::Empty => "old_string is empty; give the exact text to replace (to \
                                   write a whole file, use write_file; to add at the end, \
                                   append_file)"
                .to_string(),
            EditRefusal::Unchanged => {
                "old_string and new_string are the same; there is nothing to change".to_string()
            }
            EditRefusal::NotFound => format!(
                "old_string was not found in `{path}`; it must match the file exactly, \
                 including whitespace, indentation and line endings (read the file again to \
                 copy the text)"
            ),
            EditRefusal::Ambiguous(count) => format!(
                "old_string appears {count} times in `{path}`; include more surrounding lines \
                 to make it unique, or pass replace_all=true to replace every occurrence"
            ),
        })
    }
}

/// Replaces `old` with `new` in `text`: the one occurrence, or every one with
/// `all`. Returns the new text and how many occurrences were replaced.
fn replace(text: &str, old: &str, new: &str, all: bool) -> Result<(String, usize), EditRefusal> {
    if old.is_empty() {
        return Err(EditRefusal::Empty);
    }
    if old == new {
        return Err(EditRefusal::Unchanged);
    }
    let count = text.matches(old).count();
    match count {
        0 => Err(EditRefusal::NotFound),
        1 => Ok((text.replacen(old, new, 1), 1)),
        _ if all => Ok((text.replace(old, new), count)),
        _ => Err(EditRefusal::Ambiguous(count)),
    }
}

/// "1 occurrence", "3 occurrences".
fn occurrences(count: usize) -> String {
    if count == 1 {
        "1 occurrence".to_string()
    } else {
        format!("{count} occurrences")
    }
}

/// What `append_file` writes: `content`, and with `newline` a newline after
/// it if it lacks one and one before it if the file's `last_byte` is not one
/// (`None`: the file is empty or missing).
fn appended_text(content: &str, newline: bool, last_byte: Option<u8>) -> String {
    if !newline {
        return content.to_string();
    }
    let mut text = String::with_capacity(content.len() + 2);
    if last_byte.is_some_and(|b| b != b'\n') {
        text.push('\n');
    }
    text.push_str(content);
    if !content.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// `diff`, cut at a line boundary to at most about `max` bytes, with a note
/// saying how much was left out.
fn shorten_diff(diff: &str, max: usize) -> String {
    if diff.len() <= max {
        return diff.to_string();
    }
    let mut end = max;
    while !diff.is_char_boundary(end) {
        end -= 1;
    }
    let end = diff[..end].rfind('\n').map_or(0, |at| at + 1);
    format!(
        "{}[diff shortened: showing {end} of {} bytes]\n",
        &diff[..end],
        diff.len()
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use std::hash::{BuildHasher, RandomState};

    #[test]
    fn replace_one_occurrence() {
        let (text, count) = replace("a b c", "b", "B", false).unwrap();
        assert_eq!((text.as_str(), count), ("a B c", 1));
    }

    #[test]
    fn replace_refuses_ambiguous_unless_all() {
        assert_eq!(
            replace("x x x", "x", "y", false),
            Err(EditRefusal::Ambiguous(3))
        );
        let (text, count) = replace("x x x", "x", "y", true).unwrap();
        assert_eq!((text.as_str(), count), ("y y y", 3));
    }

    #[test]
    fn replace_refuses_empty_missing_and_unchanged() {
        assert_eq!(replace("abc", "", "x", false), Err(EditRefusal::Empty));
        assert_eq!(replace("abc", "", "x", true), Err(EditRefusal::Empty));
        assert_eq!(replace("abc", "z", "x", false), Err(EditRefusal::NotFound));
        assert_eq!(replace("abc", "b", "b", false), Err(EditRefusal::Unchanged));
    }

    #[test]
    fn replace_counts_non_overlapping_matches() {
        // "aa" occurs twice without overlap in "aaaa", three times with it.
        assert_eq!(
            replace("aaaa", "aa", "b", false),
            Err(EditRefusal::Ambiguous(2))
        );
        assert_eq!(replace("aaaa", "aa", "b", true).unwrap().0, "bb");
    }

    #[test]
    fn replace_with_empty_string_deletes() {
        let (text, _) = replace("keep\ndrop\nkeep\n", "drop\n", "", false).unwrap();
        assert_eq!(text, "keep\nkeep\n");
    }

    #[test]
    fn replace_handles_multibyte_text() {
        let (text, _) = replace("größe → ok", "→", "=>", false).unwrap();
        assert_eq!(text, "größe => ok");
    }

    #[test]
    fn refusal_messages_say_what_to_do() {
        let path = Path::new("/m/f.txt");
        let ambiguous = EditRefusal::Ambiguous(4).into_error(path);
        assert_eq!(
            ambiguous.message(),
            "old_string appears 4 times in `/m/f.txt`; include more surrounding lines to make \
             it unique, or pass replace_all=true to replace every occurrence"
        );
        let missing = EditRefusal::NotFound.into_error(path);
        assert!(
            missing
                .message()
                .starts_with("old_string was not found in `/m/f.txt`"),
            "{}",
            missing.message()
        );
        let empty = EditRefusal::Empty.into_error(path);
        assert!(empty.message().starts_with("old_string is empty"));
    }

    #[test]
    fn appended_text_adds_newlines_around_lines() {
        assert_eq!(appended_text("x", true, None), "x\n");
        assert_eq!(appended_text("x\n", true, None), "x\n");
        assert_eq!(appended_text("x", true, Some(b'\n')), "x\n");
        assert_eq!(appended_text("x", true, Some(b'a')), "\nx\n");
        assert_eq!(appended_text("", true, None), "\n");
    }

    #[test]
    fn appended_text_is_exact_without_newline() {
        assert_eq!(appended_text("x", false, Some(b'a')), "x");
        assert_eq!(appended_text("x", false, None), "x");
        assert_eq!(appended_text("", false, None), "");
    }

    #[test]
    fn shorten_diff_cuts_at_a_line() {
        let diff = "line one\nline two\nline three\n";
        assert_eq!(shorten_diff(diff, 100), diff);
        assert_eq!(
            shorten_diff(diff, 12),
            "line one\n[diff shortened: showing 9 of 29 bytes]\n"
        );
    }

    #[test]
    fn unified_diff_has_header_and_hunks() {
        let diff = TextDiff::from_lines("a\nb\nc\n", "a\nB\nc\n")
            .unified_diff()
            .context_radius(3)
            .header("/m/f", "/m/f")
            .to_string();
        assert_eq!(
            diff,
            "--- /m/f\n+++ /m/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
        );
    }

    /// A scratch directory under the system's temporary directory.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "toolcell-fs-{name}-{}-{:x}",
            std::process::id(),
            RandomState::new().hash_one(0)
        ));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn commit_refuses_an_existing_target_with_the_hint() {
        let dir = scratch("refuse");
        let target = dir.join("old.txt");
        fs::write(&target, "old").unwrap();
        let mut temp = TempFile::beside(&target).unwrap();
        temp.write_all(b"new").unwrap();
        let error = commit(temp, &target, Existing::Refuse("do X")).unwrap_err();
        assert_eq!(
            error.message(),
            format!("`{}` already exists; do X", target.display())
        );
        assert_eq!(fs::read(&target).unwrap(), b"old");
        assert_eq!(names(&dir), ["old.txt"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn follow_symlinks_ends_at_the_file() {
        let dir = scratch("links");
        fs::write(dir.join("real.txt"), "x").unwrap();
        std::os::unix::fs::symlink("real.txt", dir.join("one")).unwrap();
        std::os::unix::fs::symlink("one", dir.join("two")).unwrap();
        assert_eq!(
            follow_symlinks(&dir.join("two")).unwrap(),
            dir.join("real.txt")
        );
        assert_eq!(
            follow_symlinks(&dir.join("missing")).unwrap(),
            dir.join("missing")
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
