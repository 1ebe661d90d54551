//! The `fs` plugin: file tools.
//!
//! `read_file`, `tail`, `file_info` and `list_directory`, all in category
//! `read` and all read-only, so the host mounts every directory read-only for
//! them; and the write tools in [`write`], in category `write`. Paths are
//! absolute or relative to the first mount; the sandbox, not this code, keeps
//! them inside the mounts.
//!
//! Every tool that reads a file refuses anything but a regular file
//! (`not_regular`): a named pipe, a socket or a device is no file to read or
//! replace. The host's `open-at` never blocks and refuses to open them at
//! all (`unsupported`: `open(2)` of a named pipe would block until a writer
//! comes), so readers open first and then look at what they opened, through
//! its descriptor: a path swapped for a named pipe between a look and an
//! open cannot hang a call.
//!
//! It also offers every file under its mounts as a resource (see
//! [`resources`]).
//!
//! Configuration (`[plugin.config]` in `plugins.toml`):
//! - `max_file_bytes`: the largest file `read_file` reads whole, a resource
//!   read returns and `edit_file` edits (default 10 MiB).
//! - `max_diff_bytes`: the longest diff `edit_file` returns (default 64 KiB).

use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::time::SystemTime;

use toolcell_sdk::schemars::JsonSchema;
use toolcell_sdk::serde::{Deserialize, Serialize};
use toolcell_sdk::{Category, Error, Output, Tool, host};

mod resources;
mod write;

const DEFAULT_MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;
const DEFAULT_READ_LIMIT: usize = 2000;
const MAX_TAIL_LINES: usize = 10_000;
const MAX_LIST_ENTRIES: usize = 5000;
/// How much of a file's start is checked for NUL bytes, as git and ripgrep do.
const BINARY_PROBE_BYTES: usize = 8192;

/// The offset of a NUL byte in the first [`BINARY_PROBE_BYTES`] of a file,
/// which marks it as binary. `memchr` is SIMD in wasm; a byte loop here was
/// over a third of the guest's time in a 27 KB `read_file`.
fn nul_at(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(0, &bytes[..bytes.len().min(BINARY_PROBE_BYTES)])
}

fn tools() -> Vec<Tool> {
    let mut tools = vec![
        Tool::new("read_file", read_file)
            .title("Read file")
            .description(
                "Read a text file by lines. `offset` is the first line to return (1-based) and \
                 `limit` the number of lines (default 2000); a note at the end says how to \
                 continue when more lines remain. Binary files and files over the size limit \
                 are refused; use `tail` for the end of a large log.",
            )
            .category(Category::Read)
            .read_only()
            .open_world(false),
        Tool::new("tail", tail)
            .title("Tail file")
            .description("Return the last lines of a text file (default 10, at most 10000).")
            .category(Category::Read)
            .read_only()
            .open_world(false),
        Tool::new("file_info", file_info)
            .title("File info")
            .description(
                "Size, kind (file, directory, symlink), modified time and permissions of a \
                 path. A symlink is described itself, not followed.",
            )
            .category(Category::Read)
            .output_schema::<FileInfo>()
            .read_only()
            .open_world(false),
        Tool::new("list_directory", list_directory)
            .title("List directory")
            .description(
                "List a directory's entries sorted by name, directories marked with a trailing \
                 `/`. `all` includes names starting with `.`; `long` adds kind, size and \
                 modified time.",
            )
            .category(Category::Read)
            .read_only()
            .open_world(false),
    ];
    tools.extend(write::tools());
    tools
}

toolcell_sdk::export_plugin! {
    tools: tools,
    resources: resources::resources,
    templates: resources::templates,
}

/// Arguments of `read_file`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct ReadFileArgs {
    /// The file: an absolute path, or relative to the first granted directory.
    path: String,
    /// The first line to return, counting from 1. Default 1.
    #[schemars(range(min = 1))]
    offset: Option<u64>,
    /// How many lines to return at most. Default 2000.
    #[schemars(range(min = 1))]
    limit: Option<u64>,
    /// Prefix each line with its number, as `cat -n` does. Default false.
    #[serde(default)]
    line_numbers: bool,
}

fn read_file(args: ReadFileArgs) -> Result<Output, Error> {
    let path = toolcell_sdk::fs::resolve(&args.path)?;
    let max_bytes = host::config("max_file_bytes")
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(DEFAULT_MAX_FILE_BYTES);
    let (file, size) = open_regular_file(&path, "read_file")?;
    if size > max_bytes {
        return Err(Error::new(format!(
            "`{}` is {}, over read_file's limit of {}; use `tail` for its end",
            toolcell_sdk::fs::display(&path),
            human_size(size),
            human_size(max_bytes)
        )));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(&path, e))?;
    if bytes.len() as u64 > max_bytes {
        // It grew past the limit after it was looked at.
        return Err(Error::new(format!(
            "`{}` is over read_file's limit of {}; use `tail` for its end",
            toolcell_sdk::fs::display(&path),
            human_size(max_bytes)
        )));
    }
    let text = decode_text(&path, bytes)?;

    let first = args.offset.unwrap_or(1).max(1);
    let limit = args.limit.map_or(DEFAULT_READ_LIMIT, saturating_usize);
    let skip = saturating_usize(first - 1);
    let total = line_count(text.as_bytes());
    if skip >= total && total > 0 {
        return Err(Error::new(format!(
            "offset {first} is past the end: `{}` has {total} lines",
            toolcell_sdk::fs::display(&path)
        )));
    }
    if skip == 0
        && total <= limit
        && !args.line_numbers
        && memchr::memchr(b'\r', text.as_bytes()).is_none()
    {
        // The whole file, as it is: no need to copy it line by line.
        let mut out = text;
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        return Ok(Output::text(out));
    }
    let mut out = String::with_capacity(text.len().min(1 << 20));
    let mut shown = 0;
    for (index, line) in text.lines().enumerate().skip(skip).take(limit) {
        if args.line_numbers {
            out.push_str(&format!("{:>6}\t", index + 1));
        }
        out.push_str(line);
        out.push('\n');
        shown += 1;
    }
    let last = skip + shown;
    if last < total {
        out.push_str(&format!(
            "\n[lines {}-{last} of {total}; continue with offset={}]\n",
            skip + 1,
            last + 1
        ));
    }
    Ok(Output::text(out))
}

/// Arguments of `tail`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct TailArgs {
    /// The file: an absolute path, or relative to the first granted directory.
    path: String,
    /// How many lines to return from the end. Default 10, at most 10000.
    #[serde(default = "ten")]
    #[schemars(range(min = 1, max = 10000))]
    lines: u64,
}

fn ten() -> u64 {
    10
}

fn tail(args: TailArgs) -> Result<Output, Error> {
    let path = toolcell_sdk::fs::resolve(&args.path)?;
    let wanted = saturating_usize(args.lines).min(MAX_TAIL_LINES);
    let (mut file, size) = open_regular_file(&path, "tail")?;

    // Read backwards in chunks until the chunk holds `wanted` complete lines
    // (one more newline than that, or the start of the file).
    let mut chunk: Vec<u8> = Vec::new();
    let mut start = size;
    let step: u64 = 64 * 1024;
    loop {
        let ignore_final = usize::from(chunk.last() == Some(&b'\n'));
        let newlines = chunk.iter().filter(|&&b| b == b'\n').count();
        if start == 0 || newlines >= wanted + ignore_final {
            break;
        }
        let next = start.saturating_sub(step);
        let mut piece = vec![0; saturating_usize(start - next)];
        file.seek(SeekFrom::Start(next))
            .and_then(|_| file.read_exact(&mut piece))
            .map_err(|e| Error::io(&path, e))?;
        piece.extend_from_slice(&chunk);
        chunk = piece;
        start = next;
    }
    if start > 0 {
        // Drop the partial first line of the chunk.
        if let Some(cut) = chunk.iter().position(|&b| b == b'\n') {
            chunk.drain(..=cut);
        }
    }
    let text = decode_text(&path, chunk)?;
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.len().saturating_sub(wanted);
    let mut out = lines[from..].join("\n");
    out.push('\n');
    Ok(Output::text(out))
}

/// Arguments of `file_info`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct FileInfoArgs {
    /// The path: absolute, or relative to the first granted directory.
    path: String,
}

/// What `file_info` returns as structured content.
#[derive(Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
struct FileInfo {
    /// The path, resolved.
    path: String,
    /// `file`, `directory`, `symlink` or `other`.
    kind: String,
    /// Size in bytes.
    size: u64,
    /// Last modification, RFC 3339 in UTC, if the filesystem records it.
    modified: Option<String>,
    /// Last access, RFC 3339 in UTC, if the filesystem records it.
    accessed: Option<String>,
    /// Creation, RFC 3339 in UTC, if the filesystem records it.
    created: Option<String>,
    /// Permissions as the sandbox reports them.
    permissions: Permissions,
    /// For a symlink, the path it points to.
    symlink_target: Option<String>,
}

/// Permissions of a path.
#[derive(Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
struct Permissions {
    /// Whether the file is read-only (for this sandbox, or on disk).
    readonly: bool,
}

fn file_info(args: FileInfoArgs) -> Result<Output, Error> {
    let path = toolcell_sdk::fs::resolve(&args.path)?;
    let meta = fs::symlink_metadata(&path).map_err(|e| Error::io(&path, e))?;
    let kind = kind_name(&meta.file_type());
    let symlink_target = if meta.file_type().is_symlink() {
        fs::read_link(&path)
            .ok()
            .map(|t| t.to_string_lossy().into_owned())
    } else {
        None
    };
    let info = FileInfo {
        path: toolcell_sdk::fs::display(&path),
        kind: kind.to_string(),
        size: meta.len(),
        modified: meta.modified().ok().map(rfc3339),
        accessed: meta.accessed().ok().map(rfc3339),
        created: meta.created().ok().map(rfc3339),
        permissions: Permissions {
            readonly: meta.permissions().readonly(),
        },
        symlink_target,
    };
    let mut text = format!(
        "path: {}\nkind: {}\nsize: {} bytes ({})\n",
        info.path,
        info.kind,
        info.size,
        human_size(info.size)
    );
    for (label, value) in [
        ("modified", &info.modified),
        ("accessed", &info.accessed),
        ("created", &info.created),
        ("symlink target", &info.symlink_target),
    ] {
        if let Some(value) = value {
            text.push_str(&format!("{label}: {value}\n"));
        }
    }
    text.push_str(&format!("readonly: {}\n", info.permissions.readonly));
    Output::structured(&info, text)
}

/// Arguments of `list_directory`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct ListDirectoryArgs {
    /// The directory: absolute, or relative to the first granted directory.
    path: String,
    /// Include entries whose names start with `.`. Default false.
    #[serde(default)]
    all: bool,
    /// Show kind, size and modified time for each entry. Default false.
    #[serde(default)]
    long: bool,
}

fn list_directory(args: ListDirectoryArgs) -> Result<Output, Error> {
    let path = toolcell_sdk::fs::resolve(&args.path)?;
    let meta = fs::metadata(&path).map_err(|e| Error::io(&path, e))?;
    if !meta.is_dir() {
        return Err(Error::new(format!(
            "`{}` is not a directory; use `file_info` or `read_file` for a file",
            toolcell_sdk::fs::display(&path)
        )));
    }
    let mut entries = Vec::new();
    for entry in fs::read_dir(&path).map_err(|e| Error::io(&path, e))? {
        let entry = entry.map_err(|e| Error::io(&path, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !args.all && name.starts_with('.') {
            continue;
        }
        entries.push((name, entry));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let total = entries.len();
    let mut out = String::new();
    for (name, entry) in entries.iter().take(MAX_LIST_ENTRIES) {
        let file_type = entry.file_type().ok();
        let is_dir = file_type.as_ref().is_some_and(|t| t.is_dir());
        let suffix = if is_dir { "/" } else { "" };
        if args.long {
            let meta = entry.metadata().ok();
            let kind = file_type.as_ref().map_or("other", kind_name);
            let size = meta.as_ref().map_or(0, |m| m.len());
            let modified = meta
                .and_then(|m| m.modified().ok())
                .map(rfc3339)
                .unwrap_or_else(|| "-".to_string());
            out.push_str(&format!(
                "{kind:<9} {size:>12}  {modified}  {name}{suffix}\n"
            ));
        } else {
            out.push_str(&format!("{name}{suffix}\n"));
        }
    }
    if total == 0 {
        out.push_str("(empty directory)\n");
    } else if total > MAX_LIST_ENTRIES {
        out.push_str(&format!(
            "\n[showing {MAX_LIST_ENTRIES} of {total} entries]\n"
        ));
    }
    Ok(Output::text(out))
}

/// How many lines `str::lines` would give, counted with SIMD.
fn line_count(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
        + usize::from(bytes.last().is_some_and(|&b| b != b'\n'))
}

/// Opens a regular file for `tool` to read and returns it with its size.
///
/// The file is opened first and then looked at through its descriptor, and
/// anything but a regular file refused (see the module documentation): what
/// is looked at is what was opened. The host refuses to open a special file
/// (`unsupported`), which gets the same message. The size is the file's
/// when it was opened; readers bound what they read by their limit, not by
/// it.
fn open_regular_file(path: &Path, tool: &str) -> Result<(File, u64), Error> {
    let rule = || format!("{tool} reads regular files only");
    // Native builds (the unit tests) have no host to refuse a named pipe
    // without blocking: there the path is looked at first.
    #[cfg(not(all(target_os = "wasi", target_env = "p2")))]
    if fs::metadata(path).is_ok_and(|meta| !meta.is_file() && !meta.is_dir()) {
        return Err(not_regular(path, &rule()));
    }
    let file = File::open(path).map_err(|e| {
        if refused_as_special(&e) {
            not_regular(path, &rule())
        } else {
            Error::io(path, e)
        }
    })?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if meta.is_dir() {
        return Err(Error::new(format!(
            "`{}` is a directory; use `list_directory`",
            toolcell_sdk::fs::display(path)
        )));
    }
    if !meta.is_file() {
        return Err(not_regular(path, &rule()));
    }
    Ok((file, meta.len()))
}

/// Whether an open failed because the host refuses to open a special file
/// (`unsupported`, `ENOTSUP` in wasi-libc, whose number is 58).
fn refused_as_special(error: &std::io::Error) -> bool {
    const WASI_ENOTSUP: i32 = 58;
    error.kind() == std::io::ErrorKind::Unsupported
        || (cfg!(all(target_os = "wasi", target_env = "p2"))
            && error.raw_os_error() == Some(WASI_ENOTSUP))
}

/// The error for `path`, which is neither a regular file nor a directory, and
/// which `rule` (such as "read_file reads regular files only") refuses. It
/// names what the path is where the sandbox tells.
pub(crate) fn not_regular(path: &Path, rule: &str) -> Error {
    Error::new(format!(
        "`{}` is {}, not a regular file; {rule}",
        toolcell_sdk::fs::display(path),
        special_kind(path)
    ))
}

/// What wasmtime-wasi reports as `unknown`: a named pipe, a socket, or
/// anything else its host does not name (it names devices only).
const UNKNOWN_SPECIAL: &str = "a special file (a named pipe, a socket or a device)";

/// What kind of special file `path` is, from the sandbox's stat. Asked only
/// once a path is refused, so it costs nothing on the way to a read.
#[cfg(all(target_os = "wasi", target_env = "p2"))]
fn special_kind(path: &Path) -> &'static str {
    use wasip2::filesystem::preopens;
    use wasip2::filesystem::types::{DescriptorType, PathFlags};

    // The mount holding `path`: the one that leaves the shortest rest.
    let located = preopens::get_directories()
        .into_iter()
        .filter_map(|(dir, mount)| {
            let rest = path.strip_prefix(&mount).ok()?;
            Some((dir, rest.components().count(), rest.to_str()?.to_string()))
        })
        .min_by_key(|(_, depth, _)| *depth);
    let Some((dir, _, rest)) = located else {
        return UNKNOWN_SPECIAL;
    };
    let rest = if rest.is_empty() { "." } else { rest.as_str() };
    match dir
        .stat_at(PathFlags::SYMLINK_FOLLOW, rest)
        .map(|stat| stat.type_)
    {
        Ok(DescriptorType::CharacterDevice) => "a character device",
        Ok(DescriptorType::BlockDevice) => "a block device",
        Ok(DescriptorType::Fifo) => "a named pipe (FIFO)",
        Ok(DescriptorType::Socket) => "a socket",
        _ => UNKNOWN_SPECIAL,
    }
}

/// What kind of special file `path` is (native builds: the unit tests).
#[cfg(not(all(target_os = "wasi", target_env = "p2")))]
fn special_kind(path: &Path) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if let Ok(meta) = fs::metadata(path) {
            let kind = meta.file_type();
            if kind.is_fifo() {
                return "a named pipe (FIFO)";
            } else if kind.is_socket() {
                return "a socket";
            } else if kind.is_char_device() {
                return "a character device";
            } else if kind.is_block_device() {
                return "a block device";
            }
        }
    }
    let _ = path;
    UNKNOWN_SPECIAL
}

/// Decodes file contents as UTF-8 text, refusing binary data.
fn decode_text(path: &Path, bytes: Vec<u8>) -> Result<String, Error> {
    if let Some(at) = nul_at(&bytes) {
        return Err(Error::new(format!(
            "`{}` looks like a binary file (NUL byte at offset {at}); these tools return text only",
            toolcell_sdk::fs::display(path)
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        Error::new(format!(
            "`{}` is not UTF-8 text (invalid byte at offset {}); these tools return text only",
            toolcell_sdk::fs::display(path),
            e.utf8_error().valid_up_to()
        ))
    })
}

fn kind_name(file_type: &fs::FileType) -> &'static str {
    if file_type.is_symlink() {
        "symlink"
    } else if file_type.is_dir() {
        "directory"
    } else if file_type.is_file() {
        "file"
    } else {
        "other"
    }
}

fn rfc3339(time: SystemTime) -> String {
    humantime::format_rfc3339_seconds(time).to_string()
}

fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

fn saturating_usize(value: u64) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[cfg(unix)]
    #[test]
    fn special_files_are_named_in_the_refusal() {
        let dir = std::env::temp_dir().join(format!("toolcell-fs-special-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let pipe = dir.join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&pipe).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo failed");
        let socket = dir.join("socket");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();

        let error = open_regular_file(&pipe, "read_file").unwrap_err();
        assert_eq!(
            error.message(),
            format!(
                "`{}` is a named pipe (FIFO), not a regular file; read_file reads regular \
                 files only",
                pipe.display()
            )
        );
        let error = open_regular_file(&socket, "tail").unwrap_err();
        assert!(
            error
                .message()
                .ends_with("is a socket, not a regular file; tail reads regular files only"),
            "{}",
            error.message()
        );
        let null = Path::new("/dev/null");
        if null.exists() {
            let error = open_regular_file(null, "read_file").unwrap_err();
            assert!(
                error.message().contains("a character device"),
                "{}",
                error.message()
            );
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn nul_at_looks_only_at_the_probe() {
        assert_eq!(nul_at(b""), None);
        assert_eq!(nul_at(b"text\n"), None);
        assert_eq!(nul_at(b"ab\0c\0"), Some(2));
        let mut late = vec![b'a'; BINARY_PROBE_BYTES];
        late[BINARY_PROBE_BYTES - 1] = 0;
        assert_eq!(nul_at(&late), Some(BINARY_PROBE_BYTES - 1));
        late[BINARY_PROBE_BYTES - 1] = b'a';
        late.push(0);
        assert_eq!(nul_at(&late), None);
    }

    #[test]
    fn line_count_matches_str_lines() {
        for text in [
            "",
            "a",
            "a\n",
            "a\nb",
            "a\n\nb\n",
            "\n",
            "\n\n",
            "a\r\nb\r\n",
        ] {
            assert_eq!(
                line_count(text.as_bytes()),
                text.lines().count(),
                "{text:?}"
            );
        }
    }
}
