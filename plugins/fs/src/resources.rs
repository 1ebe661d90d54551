//! Files as MCP resources: the template `file:///{+path}` reads any file
//! under the mounts by its absolute path, with the same sandbox and size
//! limit as `read_file`; text comes back as text, anything else as a blob
//! with its MIME type. The files at the top of each mount are listed as
//! resources (up to [`MAX_LISTED_PER_MOUNT`] each), and the template's
//! `path` completes from directory listings.
//!
//! Reads run read-only, with the plugin's mounts: the sandbox, not this
//! code, keeps every path inside them.

use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};

use toolcell_sdk::{Contents, Error, Resource, ResourceTemplate, Variables, host};

use crate::{DEFAULT_MAX_FILE_BYTES, human_size, nul_at, open_regular_file};

/// The URI template of every file under the mounts.
pub(crate) const FILE_TEMPLATE: &str = "file:///{+path}";
/// The most files listed as resources from the top of one mount.
const MAX_LISTED_PER_MOUNT: usize = 100;
/// The most completions offered for a path.
const MAX_COMPLETIONS: usize = 100;

/// The template of files.
pub(crate) fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(FILE_TEMPLATE, "file", read_by_template)
            .title("File")
            .description(
                "Any file under the granted folders, by its absolute path. Text files come back \
                 as text, others as base64 with their MIME type; files over the size limit are \
                 refused.",
            )
            .complete("path", complete_path),
    ]
}

/// The regular files at the top of each mount.
pub(crate) fn resources() -> Vec<Resource> {
    let mut listed = Vec::new();
    for mount in toolcell_sdk::fs::mounts() {
        let Ok(entries) = fs::read_dir(&mount) else {
            continue;
        };
        let mut files: Vec<(String, u64)> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let meta = entry.metadata().ok()?;
                meta.is_file()
                    .then(|| (entry.file_name().to_string_lossy().into_owned(), meta.len()))
            })
            .collect();
        files.sort();
        for (name, size) in files.into_iter().take(MAX_LISTED_PER_MOUNT) {
            let path = mount.join(&name);
            let uri = file_uri(&path);
            let reader_path = path.clone();
            listed.push(
                Resource::new(uri, name, move || read_file(&reader_path))
                    .mime_type(mime_type(&path))
                    .size(size),
            );
        }
    }
    listed
}

/// `file://` and the path, with the characters a URI cannot hold escaped.
fn file_uri(path: &Path) -> String {
    let mut uri = String::from("file://");
    for byte in path.to_string_lossy().bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~!$&'()*+,;=:@".contains(&byte) {
            uri.push(byte as char);
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

fn read_by_template(_uri: &str, variables: &Variables) -> Result<Contents, Error> {
    let relative = variables
        .get("path")
        .map(String::as_str)
        .unwrap_or_default();
    read_file(&PathBuf::from(format!("/{relative}")))
}

/// A file's contents: text when it is UTF-8 without NUL bytes, else a blob.
fn read_file(path: &Path) -> Result<Contents, Error> {
    let max_bytes = host::config("max_file_bytes")
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(DEFAULT_MAX_FILE_BYTES);
    // Refuses directories and special files, by what was opened.
    let (file, size) = open_regular_file(path, "resources/read")?;
    if size > max_bytes {
        return Err(too_big(path, size, max_bytes));
    }
    let bytes = read_at_most(file, path, max_bytes)?;
    let mime = mime_type(path);
    if nul_at(&bytes).is_some() {
        return Ok(Contents::blob(bytes, mime));
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(Contents::text(text).mime_type(mime)),
        Err(error) => Ok(Contents::blob(error.into_bytes(), mime)),
    }
}

fn read_at_most(file: File, path: &Path, max_bytes: u64) -> Result<Vec<u8>, Error> {
    let mut bytes = Vec::new();
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > max_bytes {
        // It grew past the limit after it was looked at.
        return Err(too_big(path, bytes.len() as u64, max_bytes));
    }
    Ok(bytes)
}

fn too_big(path: &Path, size: u64, max_bytes: u64) -> Error {
    Error::new(format!(
        "`{}` is {}, over the limit of {} for a resource; use the `tail` tool for its end",
        toolcell_sdk::fs::display(path),
        human_size(size),
        human_size(max_bytes)
    ))
}

/// The MIME type of `path` by its extension; `text/plain` for none known.
fn mime_type(path: &Path) -> String {
    mime_guess::from_path(path)
        .first_raw()
        .unwrap_or("text/plain")
        .to_string()
}

/// Completes the template's `path` (the part after `file:///`) from the
/// listing of the directory typed so far; directories end with `/`.
fn complete_path(typed: &str, _others: &Variables) -> Vec<String> {
    let (dir, prefix) = match typed.rfind('/') {
        Some(at) => (&typed[..=at], &typed[at + 1..]),
        None => ("", typed),
    };
    if dir.is_empty() {
        // The top: the mounts themselves, as the first segments of their paths.
        let mut values: Vec<String> = toolcell_sdk::fs::mounts()
            .iter()
            .filter_map(|mount| {
                let path = mount.to_string_lossy();
                let path = path.trim_start_matches('/');
                path.starts_with(prefix).then(|| format!("{path}/"))
            })
            .collect();
        values.sort();
        values.truncate(MAX_COMPLETIONS);
        return values;
    }
    let Ok(entries) = fs::read_dir(format!("/{dir}")) else {
        return Vec::new();
    };
    let mut values: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            if !name.starts_with(prefix) || (prefix.is_empty() && name.starts_with('.')) {
                return None;
            }
            let slash = if entry.file_type().ok()?.is_dir() {
                "/"
            } else {
                ""
            };
            Some(format!("{dir}{name}{slash}"))
        })
        .collect();
    values.sort();
    values.truncate(MAX_COMPLETIONS);
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_escape_what_a_uri_cannot_hold() {
        assert_eq!(
            file_uri(Path::new("/data/a b.txt")),
            "file:///data/a%20b.txt"
        );
        assert_eq!(file_uri(Path::new("/data/ü")), "file:///data/%C3%BC");
        assert_eq!(
            file_uri(Path::new("/data/x-1_2.md")),
            "file:///data/x-1_2.md"
        );
    }

    #[test]
    fn mime_types_come_from_the_extension() {
        assert_eq!(mime_type(Path::new("/a/b.png")), "image/png");
        assert_eq!(mime_type(Path::new("/a/README")), "text/plain");
    }
}
