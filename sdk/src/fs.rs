//! Paths inside the sandbox.
//!
//! Every mount appears at the same path as on the host, so absolute paths
//! the model sees are real paths. The guest has no current directory: a
//! relative path is resolved against the plugin's **first mount**.

use std::path::{Path, PathBuf};

use crate::__private::bindings::wasi::filesystem::preopens;
use crate::Error;

mod directory;

pub use directory::{Directory, Kind, Metadata};

/// The directories mounted for this call, in `plugins.toml` order.
pub fn mounts() -> Vec<PathBuf> {
    preopens::get_directories()
        .into_iter()
        .map(|(_, path)| PathBuf::from(path))
        .collect()
}

/// Resolves `path`: an absolute path is returned as it is; a relative
/// one is joined to the first mount. Fails for a relative path when the
/// plugin has no mount. Containment is not checked here: the sandbox
/// itself refuses anything outside the mounts.
pub fn resolve(path: &str) -> Result<PathBuf, Error> {
    let path = Path::new(path);
    if path.is_absolute() {
        return Ok(path.to_path_buf());
    }
    match mounts().into_iter().next() {
        Some(first) => Ok(first.join(path)),
        None => Err(Error::new(format!(
            "`{}` is relative, but this tool has no mounted directory to resolve it against",
            path.display()
        ))),
    }
}

/// What temporary names contain: `.<name>.toolcell-tmp-<16 hex digits>`.
pub const TEMP_MARKER: &str = ".toolcell-tmp-";

/// The longest file name most filesystems take, in bytes.
const MAX_NAME_BYTES: usize = 255;

/// A file written under a temporary name beside its target and moved
/// into place only once complete, so that no reader ever sees half of
/// it.
///
/// [`AtomicFile::create`] makes `.<name>.toolcell-tmp-<random>` in the
/// target's directory; [`AtomicFile::commit`] syncs it and renames it
/// over the target, or, when the target must not be replaced, hard-links
/// it there, which fails if the target exists, so the check cannot race
/// another writer. (Where hard links are unsupported, it checks, then
/// renames.) Dropping an uncommitted file removes it; a call stopped by a
/// trap cannot, and may leave the temporary file behind, but never a
/// half-written target.
pub struct AtomicFile {
    path: PathBuf,
    target: PathBuf,
    file: Option<std::fs::File>,
    committed: bool,
}

impl AtomicFile {
    /// Creates an empty temporary file beside `target`.
    pub fn create(target: &Path) -> std::io::Result<AtomicFile> {
        use std::hash::{BuildHasher, RandomState};
        use std::io::{Error, ErrorKind};
        let (Some(dir), Some(name)) = (target.parent(), target.file_name()) else {
            return Err(Error::new(ErrorKind::InvalidInput, "not a file path"));
        };
        let name = name.to_string_lossy();
        let state = RandomState::new();
        let mut attempt = 0u32;
        loop {
            let path = dir.join(temp_name(&name, state.hash_one(attempt)));
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
                Err(e) if e.kind() == ErrorKind::AlreadyExists && attempt < 8 => {
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
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

/// The temporary name for a target called `name`, shortened (at a
/// character boundary) to keep the whole within [`MAX_NAME_BYTES`].
fn temp_name(name: &str, random: u64) -> String {
    let suffix = format!("{TEMP_MARKER}{random:016x}");
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
