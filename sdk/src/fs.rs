//! Paths inside the sandbox.
//!
//! Every mount appears inside the sandbox under a name of its host path. On
//! Linux and macOS that is the host path itself, so absolute paths the model
//! sees are real paths. On a Windows host it is the host path in POSIX form:
//! `C:\Users\me\proj` is mounted as `/C:/Users/me/proj`, since the guest's
//! libc knows only `/` and no drive letters. [`resolve`] takes a path as the
//! user's OS writes it (`C:\Users\me\proj\a.txt`, `C:/Users/me/proj/a.txt`,
//! either case, or relative) to the sandbox's form, and [`display`] shows a
//! sandbox path back in the OS's form. The guest has no current directory: a
//! relative path is resolved against the plugin's **first mount**.
//!
//! The Python and JavaScript SDKs follow the same rule
//! (docs/authoring.md, "Paths").

use std::path::{Path, PathBuf};

use crate::__private::bindings::wasi::filesystem::preopens;
use crate::Error;

mod directory;

pub use directory::{Contents, Directory, Entry, Kind, Metadata, PendingMetadata};

/// The directories mounted for this call, in `plugins.toml` order.
pub fn mounts() -> Vec<PathBuf> {
    mount_names().into_iter().map(PathBuf::from).collect()
}

/// The mounts' names inside the sandbox, in order.
fn mount_names() -> Vec<String> {
    preopens::get_directories()
        .into_iter()
        .map(|(_, path)| path)
        .collect()
}

/// Resolves `path` as the user wrote it to a path inside the sandbox: an
/// absolute path names the same file in the sandbox's form; a relative one
/// is joined to the first mount. Fails for a relative path when the plugin
/// has no mount, and for a Windows drive-relative path (`C:foo`).
/// Containment is not checked here: the sandbox itself refuses anything
/// outside the mounts.
pub fn resolve(path: &str) -> Result<PathBuf, Error> {
    resolve_in(&mount_names(), path).map(PathBuf::from)
}

/// How `path`, a path inside the sandbox, is shown to the user: in Windows
/// form (`C:\Users\me\a.txt`) on a Windows host, as it is elsewhere.
pub fn display(path: &Path) -> String {
    let text = path.to_string_lossy();
    // Only a path of a drive's shape asks for the mounts.
    if drive_path(&text) {
        display_in(&mount_names(), &text)
    } else {
        text.into_owned()
    }
}

/// Whether the mounts are a Windows host's: a name such as `/C:/...`.
fn windows(mounts: &[String]) -> bool {
    mounts.iter().any(|mount| drive_path(mount))
}

/// Whether `path` is `/X:` or starts with `/X:/`, `X` a drive letter.
fn drive_path(path: &str) -> bool {
    let bytes = path.as_bytes();
    bytes.len() >= 3
        && bytes[0] == b'/'
        && bytes[1].is_ascii_alphabetic()
        && bytes[2] == b':'
        && (bytes.len() == 3 || bytes[3] == b'/')
}

/// [`resolve`] with the mounts named `mounts`.
fn resolve_in(mounts: &[String], written: &str) -> Result<String, Error> {
    let mut path = written.to_string();
    if windows(mounts) {
        path = path
            .strip_prefix(r"\\?\")
            .unwrap_or(&path)
            .replace('\\', "/");
        let bytes = path.as_bytes();
        if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
            if bytes.len() > 2 && bytes[2] != b'/' {
                return Err(Error::new(format!(
                    "`{written}` is relative to a drive's current folder; drive-relative paths \
                     are not supported: give a full path (`C:\\folder\\file`) or one relative \
                     to the first mounted folder"
                )));
            }
            path.insert(0, '/');
        }
        if path.starts_with('/') {
            return Ok(onto_mount(mounts, &path));
        }
    } else if path.starts_with('/') {
        return Ok(path);
    }
    match mounts.first() {
        Some(first) => Ok(format!("{}/{path}", first.trim_end_matches('/'))),
        None => Err(Error::new(format!(
            "`{path}` is relative, but this tool has no mounted directory to resolve it against"
        ))),
    }
}

/// `path` with its leading names replaced by those of the mount they name
/// without regard to case (the longest such mount), as the mount spells
/// them; unchanged when it is under no mount.
fn onto_mount(mounts: &[String], path: &str) -> String {
    let names: Vec<&str> = path.split('/').filter(|name| !name.is_empty()).collect();
    let best = mounts
        .iter()
        .filter_map(|mount| {
            let prefix: Vec<&str> = mount.split('/').filter(|name| !name.is_empty()).collect();
            let matches = prefix.len() <= names.len()
                && prefix
                    .iter()
                    .zip(&names)
                    .all(|(a, b)| a.eq_ignore_ascii_case(b));
            matches.then_some((mount, prefix.len()))
        })
        .max_by_key(|(_, len)| *len);
    match best {
        Some((mount, len)) => {
            let mut resolved = mount.trim_end_matches('/').to_string();
            for name in &names[len..] {
                resolved.push('/');
                resolved.push_str(name);
            }
            resolved
        }
        None => path.to_string(),
    }
}

/// [`display`] with the mounts named `mounts`.
fn display_in(mounts: &[String], path: &str) -> String {
    if windows(mounts) && drive_path(path) {
        path[1..].replace('/', "\\")
    } else {
        path.to_string()
    }
}

/// What temporary names contain: `.<name>.toolcell-tmp-<16 hex digits>`.
pub const TEMP_MARKER: &str = ".toolcell-tmp-";

/// The longest file name most filesystems take, in bytes.
const MAX_NAME_BYTES: usize = 255;

/// How many temporary names a target has: how many writes to one file may
/// be under way at once.
const TEMP_SLOTS: u64 = 8;

/// A temporary file not written for this long belongs to a write that was
/// stopped (a call ended by its time or memory limit cannot remove its
/// own), and the next write to the same target removes it.
pub const STALE_TEMP: std::time::Duration = std::time::Duration::from_secs(600);

/// A file written under a temporary name beside its target and moved
/// into place only once complete, so that no reader ever sees half of
/// it.
///
/// [`AtomicFile::create`] makes `.<name>.toolcell-tmp-<slot>` in the
/// target's directory; [`AtomicFile::commit`] syncs it and renames it
/// over the target, or, when the target must not be replaced, hard-links
/// it there, which fails if the target exists, so the check cannot race
/// another writer. (Where hard links are unsupported, it checks, then
/// renames.) Dropping an uncommitted file removes it; a call stopped by a
/// trap or a limit cannot, and leaves the temporary file behind, never a
/// half-written target: the target's next write removes it once it is
/// [`STALE_TEMP`] old. A target has eight temporary names (`TEMP_SLOTS`), so
/// finding them takes a few `stat`s, not a directory listing.
pub struct AtomicFile {
    path: PathBuf,
    target: PathBuf,
    file: Option<std::fs::File>,
    committed: bool,
}

impl AtomicFile {
    /// Creates an empty temporary file beside `target`, first removing
    /// the target's temporary files that are [`STALE_TEMP`] old.
    pub fn create(target: &Path) -> std::io::Result<AtomicFile> {
        use std::io::{Error, ErrorKind};
        let (Some(dir), Some(name)) = (target.parent(), target.file_name()) else {
            return Err(Error::new(ErrorKind::InvalidInput, "not a file path"));
        };
        let name = name.to_string_lossy();
        let now = std::time::SystemTime::now();
        for slot in 0..TEMP_SLOTS {
            let path = dir.join(temp_name(&name, slot));
            let stale = std::fs::symlink_metadata(&path)
                .and_then(|meta| meta.modified())
                .is_ok_and(|written| {
                    now.duration_since(written)
                        .is_ok_and(|age| age >= STALE_TEMP)
                });
            if stale {
                // Best effort: a slot that stays taken is skipped below.
                let _ = std::fs::remove_file(&path);
            }
        }
        for slot in 0..TEMP_SLOTS {
            let path = dir.join(temp_name(&name, slot));
            let created = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path);
            match created {
                Ok(file) => {
                    return Ok(AtomicFile {
                        path,
                        target: target.to_path_buf(),
                        file: Some(file),
                        committed: false,
                    });
                }
                Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
        Err(Error::new(
            ErrorKind::AlreadyExists,
            format!(
                "{TEMP_SLOTS} other writes to {name} are under way or were stopped in the last \
                 {} minutes (their `.{name}{TEMP_MARKER}*` files): try again later",
                STALE_TEMP.as_secs() / 60
            ),
        ))
    }

    /// Appends `bytes`.
    pub fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        use std::io::Write;
        match self.file.as_mut() {
            Some(file) => file.write_all(bytes),
            None => Err(std::io::Error::other("the temporary file is closed")),
        }
    }

    /// Syncs the file and moves it to its target. With `replace` false,
    /// an existing target is left alone and the error's kind is
    /// `AlreadyExists`.
    pub fn commit(mut self, replace: bool) -> std::io::Result<()> {
        use std::io::{Error, ErrorKind};
        if let Some(file) = self.file.take() {
            file.sync_all()?;
        }
        if !replace {
            let exists = || Error::new(ErrorKind::AlreadyExists, "the target exists");
            match std::fs::hard_link(&self.path, &self.target) {
                // Dropping `self` removes the temporary name.
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == ErrorKind::AlreadyExists => return Err(exists()),
                Err(_) if std::fs::symlink_metadata(&self.target).is_ok() => {
                    return Err(exists());
                }
                Err(_) => {}
            }
        }
        std::fs::rename(&self.path, &self.target)?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        drop(self.file.take());
        if !self.committed {
            // Best effort: the error that brought us here matters more.
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The temporary name `slot` for a target called `name`, shortened (at a
/// character boundary) to keep the whole within [`MAX_NAME_BYTES`].
fn temp_name(name: &str, slot: u64) -> String {
    let suffix = format!("{TEMP_MARKER}{slot:016x}");
    let room = MAX_NAME_BYTES - 1 - suffix.len();
    let mut end = name.len().min(room);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!(".{}{suffix}", &name[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mount_list(mounts: &[&str]) -> Vec<String> {
        mounts.iter().map(|m| m.to_string()).collect()
    }

    #[test]
    fn unix_paths_are_as_written_or_under_the_first_mount() {
        let mounts = mount_list(&["/home/me/proj", "/data"]);
        let resolve = |path: &str| resolve_in(&mounts, path).map_err(|e| e.to_string());
        assert_eq!(resolve("/data/a.txt").unwrap(), "/data/a.txt");
        assert_eq!(resolve("a.txt").unwrap(), "/home/me/proj/a.txt");
        // A backslash is part of a Unix file name.
        assert_eq!(resolve(r"C:\x").unwrap(), r"/home/me/proj/C:\x");
        assert_eq!(display_in(&mounts, "/data/a.txt"), "/data/a.txt");
        assert!(resolve_in(&[], "a.txt").is_err());
    }

    #[test]
    fn windows_paths_are_translated_onto_the_mounts() {
        let mounts = mount_list(&["/C:/Users/Me/Proj", "/D:/data", "/D:/data/deep"]);
        let resolve = |path: &str| resolve_in(&mounts, path).map_err(|e| e.to_string());
        for written in [
            r"C:\Users\Me\Proj\a.txt",
            "C:/Users/Me/Proj/a.txt",
            r"c:\users\me\PROJ\a.txt",
            r"\\?\C:\Users\Me\Proj\a.txt",
            "/C:/Users/Me/Proj/a.txt",
            "a.txt",
            r".\a.txt",
        ] {
            let expected = if written.starts_with('.') {
                "/C:/Users/Me/Proj/./a.txt"
            } else {
                "/C:/Users/Me/Proj/a.txt"
            };
            assert_eq!(resolve(written).unwrap(), expected, "{written}");
        }
        // The longest mount wins; a sibling sharing a prefix is no mount's.
        assert_eq!(resolve(r"d:\DATA\Deep\x").unwrap(), "/D:/data/deep/x");
        assert_eq!(resolve(r"D:\data-evil\x").unwrap(), "/D:/data-evil/x");
        // Outside every mount: left for the sandbox to refuse.
        assert_eq!(
            resolve(r"C:\Windows\win.ini").unwrap(),
            "/C:/Windows/win.ini"
        );
        assert_eq!(
            resolve(r"..\secret.txt").unwrap(),
            "/C:/Users/Me/Proj/../secret.txt"
        );
        assert_eq!(resolve(r"\\.\C:\x").unwrap(), "//./C:/x");
        assert!(
            resolve("C:windows")
                .unwrap_err()
                .contains("drive-relative paths")
        );
        assert_eq!(
            display_in(&mounts, "/C:/Users/Me/Proj/a.txt"),
            r"C:\Users\Me\Proj\a.txt"
        );
        assert_eq!(display_in(&mounts, "/D:"), "D:");
        assert_eq!(display_in(&mounts, "relative/x"), "relative/x");
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "toolcell-sdk-{name}-{}-{:?}",
            std::process::id(),
            std::time::SystemTime::now()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn commit_creates_and_leaves_no_temp_file() {
        let dir = scratch("create");
        let target = dir.join("new.txt");
        let mut file = AtomicFile::create(&target).unwrap();
        file.write_all(b"hello").unwrap();
        file.commit(false).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"hello");
        assert_eq!(names(&dir), ["new.txt"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn commit_without_replace_keeps_an_existing_target() {
        let dir = scratch("refuse");
        let target = dir.join("old.txt");
        std::fs::write(&target, "old").unwrap();
        let mut file = AtomicFile::create(&target).unwrap();
        file.write_all(b"new").unwrap();
        let error = file.commit(false).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&target).unwrap(), b"old");
        assert_eq!(names(&dir), ["old.txt"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn commit_replaces_when_asked() {
        let dir = scratch("replace");
        let target = dir.join("old.txt");
        std::fs::write(&target, "old").unwrap();
        let mut file = AtomicFile::create(&target).unwrap();
        file.write_all(b"new").unwrap();
        file.commit(true).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert_eq!(names(&dir), ["old.txt"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_uncommitted_file_is_removed() {
        let dir = scratch("drop");
        let mut file = AtomicFile::create(&dir.join("t.txt")).unwrap();
        file.write_all(b"partial").unwrap();
        assert_eq!(names(&dir).len(), 1);
        drop(file);
        assert!(names(&dir).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn stale_temporary_files_of_the_target_go_and_fresh_ones_stay() {
        let dir = scratch("stale");
        let target = dir.join("t.txt");
        let aged = |slot: u64, secs: u64| {
            let path = dir.join(temp_name("t.txt", slot));
            std::fs::write(&path, b"stopped write").unwrap();
            let at = std::time::SystemTime::now() - std::time::Duration::from_secs(secs);
            std::fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(at)
                .unwrap();
            path
        };
        let stale = aged(0, STALE_TEMP.as_secs() + 60);
        let fresh = aged(1, 5);
        let other = dir.join(temp_name("other.txt", 0));
        std::fs::write(&other, b"another target's").unwrap();
        let mut file = AtomicFile::create(&target).unwrap();
        assert_eq!(file.path, stale, "the stale slot is taken again");
        assert!(fresh.exists(), "a write under way keeps its file");
        file.write_all(b"new").unwrap();
        file.commit(true).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert!(other.exists(), "only the target's own temporary files");

        // Every slot taken by writes under way: refused, saying why.
        let held: Vec<AtomicFile> = (0..TEMP_SLOTS - 1)
            .map(|_| AtomicFile::create(&target).unwrap())
            .collect();
        let refused = AtomicFile::create(&target).err().unwrap();
        assert_eq!(refused.kind(), std::io::ErrorKind::AlreadyExists);
        assert!(refused.to_string().contains("try again later"), "{refused}");
        drop(held);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn temp_names_fit_and_keep_characters_whole() {
        assert_eq!(
            temp_name("notes.txt", 0xab),
            ".notes.txt.toolcell-tmp-00000000000000ab"
        );
        let long = "é".repeat(200);
        let name = temp_name(&long, u64::MAX);
        assert!(name.len() <= MAX_NAME_BYTES, "{}", name.len());
        assert!(name.ends_with(".toolcell-tmp-ffffffffffffffff"));
    }
}
