//! Opening repositories and resolving revisions.

use std::path::{Path, PathBuf};

use toolcell_sdk::Error;

/// Opens the repository at `repo` (a working tree or a bare repository,
/// absolute or relative to the first mount; default: the first mount).
///
/// Only the repository's own configuration is read: no system, global or
/// user configuration, and no environment variables.
pub fn open(repo: Option<&str>) -> Result<gix::Repository, Error> {
    let path = toolcell_sdk::fs::resolve(repo.unwrap_or("."))?;
    open_at(&path)
}

fn open_at(path: &Path) -> Result<gix::Repository, Error> {
    if let Err(error) = std::fs::metadata(path) {
        return Err(Error::io(path, error));
    }
    let options = gix::open::Options::isolated();
    gix::open_opts(path, options).map_err(|error| not_a_repository(path, &error))
}

fn not_a_repository(path: &Path, error: &dyn std::fmt::Display) -> Error {
    let mounts = toolcell_sdk::fs::mounts()
        .iter()
        .map(|mount| mount.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    Error::new(format!(
        "not a git repository: `{}` ({error}); `repo` must be a working tree or a bare \
         repository inside a mount (mounts: {mounts})",
        path.display()
    ))
}

/// The working tree's root, or the git directory of a bare repository.
pub fn root(repo: &gix::Repository) -> PathBuf {
    repo.workdir()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| repo.git_dir().to_path_buf())
}

/// Any gix error as a tool error, with what was being done.
pub fn fail(what: &str, error: impl std::fmt::Display) -> Error {
    Error::new(format!("{what}: {error}"))
}
