//! Opening repositories, resolving revisions and paths, and the output budget.

use std::path::{Path, PathBuf};

use gix::bstr::{BStr, BString, ByteSlice};
use toolcell_sdk::{Error, host};

/// The default output budget: under the host's default cap of 1 MiB, with
/// room for the envelope around the result.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 900 * 1024;

/// Opens the repository at `repo` (a working tree or a bare repository,
/// absolute or relative to the first mount; default: the first mount).
///
/// Only the repository's own configuration is read: no system, global or
/// user configuration, and no environment variables.
pub fn open(repo: Option<&str>) -> Result<gix::Repository, Error> {
    open_with_drivers(repo).map(|(repo, _)| repo)
}

/// [`open`], and the configured drivers left out: each as `filter.NAME.clean`
/// and the like.
///
/// Drivers never run in the sandbox (it cannot start processes), and gix
/// fails a status or diff that needs one it cannot start. So the
/// repository's filter drivers (`filter.*.clean`, `smudge`, `process`) and
/// diff drivers (`diff.*.textconv`, `command`) are taken out of its
/// configuration: contents are compared as stored, as git compares them for
/// a filter that is not configured and with `--no-textconv`.
pub fn open_with_drivers(repo: Option<&str>) -> Result<(gix::Repository, Vec<String>), Error> {
    let path = toolcell_sdk::fs::resolve(repo.unwrap_or("."))?;
    if let Err(error) = std::fs::metadata(&path) {
        return Err(Error::io(&path, error));
    }
    // The sandbox shows no permission bits, so every executable file would
    // look changed: compare contents only, as git does with this setting.
    // Nor does it show inode, device, owner or change time (WASI's stat has
    // sizes and times only), so the index's records of those never match and
    // every tracked file would be read and hashed: compare the modification
    // time and size, as `core.checkStat=minimal` makes git do. Files changed
    // after the index was written are still hashed (racy-git check).
    // The index's checksum is not verified when it is read: git verifies it
    // only in `git fsck`, and hashing a 10,000-entry index with
    // collision-detecting SHA-1 took 3% of a status.
    let options = gix::open::Options::isolated().config_overrides([
        "core.fileMode=false",
        "core.trustCTime=false",
        "core.checkStat=minimal",
        "index.skipHash=true",
    ]);
    let mut repo =
        gix::open_opts(&path, options).map_err(|error| not_a_repository(&path, &error))?;
    let drivers = drop_drivers(&mut repo)?;
    // Commits and trees are read over and over by walks, diffs and blame.
    repo.object_cache_size_if_unset(16 * 1024 * 1024);
    // Decoded delta bases: without them every object at the end of a delta
    // chain decodes the whole chain again (gix sets this cache only with its
    // `max-performance` feature, which also brings threads).
    repo.objects.set_pack_cache(|| {
        Box::new(gix::odb::pack::cache::lru::MemoryCappedHashmap::new(
            16 * 1024 * 1024,
        ))
    });
    Ok((repo, drivers))
}

/// Removes the driver commands from `repo`'s configuration (in memory);
/// returns the keys removed.
fn drop_drivers(repo: &mut gix::Repository) -> Result<Vec<String>, Error> {
    const KEYS: [(&str, &[&str]); 2] = [
        ("filter", &["clean", "smudge", "process"]),
        ("diff", &["textconv", "command"]),
    ];
    let has_drivers = KEYS.iter().any(|(section, keys)| {
        repo.config_snapshot()
            .plumbing()
            .sections_by_name(section)
            .into_iter()
            .flatten()
            .any(|found| keys.iter().any(|key| found.value(key).is_some()))
    });
    if !has_drivers {
        return Ok(Vec::new());
    }
    let mut dropped = Vec::new();
    let mut config = repo.config_snapshot_mut();
    for (name, keys) in KEYS {
        let ids: Vec<_> = config
            .sections_and_ids_by_name(name)
            .into_iter()
            .flatten()
            .map(|(_, id)| id)
            .collect();
        for id in ids {
            let Some(mut section) = config.section_mut_by_id(id) else {
                continue;
            };
            let subsection = section
                .header()
                .subsection_name()
                .map(|name| name.to_str_lossy().into_owned())
                .unwrap_or_default();
            for key in keys {
                while section.remove(key).is_some() {
                    let entry = format!("{name}.{subsection}.{key}");
                    if !dropped.contains(&entry) {
                        dropped.push(entry);
                    }
                }
            }
        }
    }
    config
        .commit()
        .map_err(|e| fail("cannot set the repository's configuration aside", e))?;
    Ok(dropped)
}

/// A note for results that compare contents in a repository whose
/// configuration names drivers (see [`open_with_drivers`]).
pub fn drivers_note(drivers: &[String]) -> Option<String> {
    (!drivers.is_empty()).then(|| {
        format!(
            "(not run: {}; the sandbox runs no filter or diff drivers, so contents are compared \
             as stored, as git does with `--no-textconv` and for a filter that is not configured)",
            drivers.join(", ")
        )
    })
}

fn not_a_repository(path: &Path, error: &dyn std::fmt::Display) -> Error {
    let mounts = toolcell_sdk::fs::mounts()
        .iter()
        .map(|mount| toolcell_sdk::fs::display(mount))
        .collect::<Vec<_>>()
        .join(", ");
    Error::new(format!(
        "not a git repository: `{}` ({error}); `repo` must be a working tree or a bare \
         repository inside a mount (mounts: {mounts})",
        toolcell_sdk::fs::display(path)
    ))
}

/// The bytes of blob `id`.
pub fn read_blob(repo: &gix::Repository, id: gix::ObjectId) -> Result<Vec<u8>, Error> {
    Ok(repo
        .find_object(id)
        .map_err(|e| fail(&format!("cannot read blob {id}"), e))?
        .detach()
        .data)
}

/// The commit `rev` names (a tag is peeled to its commit).
pub fn commit<'r>(repo: &'r gix::Repository, rev: &str) -> Result<gix::Commit<'r>, Error> {
    let object = object(repo, rev)?;
    object
        .peel_to_commit()
        .map_err(|e| fail(&format!("`{rev}` does not name a commit"), e))
}

/// The object `rev` names, not peeled.
pub fn object<'r>(repo: &'r gix::Repository, rev: &str) -> Result<gix::Object<'r>, Error> {
    let id = repo.rev_parse_single(rev).map_err(|e| {
        if rev == "HEAD" && repo.head().is_ok_and(|head| head.is_unborn()) {
            return Error::new("the repository has no commits yet (HEAD is an unborn branch)");
        }
        fail(
            &format!("cannot resolve the revision `{rev}`{}", borrowed(repo)),
            e,
        )
    })?;
    id.object()
        .map_err(|e| fail(&format!("cannot read `{rev}`{}", borrowed(repo)), e))
}

/// A note for errors about missing objects when the repository borrows
/// objects from elsewhere (`objects/info/alternates`): the sandbox lets it
/// read only what lies in the mounts.
pub fn borrowed(repo: &gix::Repository) -> String {
    let alternates = repo.common_dir().join("objects/info/alternates");
    match std::fs::read_to_string(&alternates) {
        Ok(list) => format!(
            " (this repository borrows objects through `{}` from {}; only objects inside the \
             mounts can be read)",
            toolcell_sdk::fs::display(&alternates),
            list.lines()
                .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
                .map(|line| format!("`{}`", line.trim()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Err(_) => String::new(),
    }
}

/// The working tree of `repo`, or an error for a bare repository.
pub fn workdir(repo: &gix::Repository) -> Result<PathBuf, Error> {
    repo.workdir().map(Path::to_path_buf).ok_or_else(|| {
        Error::new(format!(
            "`{}` is a bare repository: it has no working tree or index to compare",
            repo.git_dir().display()
        ))
    })
}

/// `path` as git names it: relative to the working tree, `/`-separated.
/// An absolute path must lie in the working tree; a relative one is taken as
/// relative to the working tree already.
pub fn repo_path(repo: &gix::Repository, path: &str) -> Result<BString, Error> {
    let given = Path::new(path);
    let relative = if given.is_absolute() {
        let root = repo.workdir().unwrap_or_else(|| repo.git_dir());
        given
            .strip_prefix(root)
            .map_err(|_| {
                Error::new(format!(
                    "`{path}` is not inside the repository's working tree `{}`; give a path \
                     relative to it",
                    toolcell_sdk::fs::display(root)
                ))
            })?
            .to_path_buf()
    } else {
        given.to_path_buf()
    };
    let mut parts = Vec::new();
    for part in relative.components() {
        match part {
            std::path::Component::Normal(name) => parts.push(name.to_string_lossy().into_owned()),
            std::path::Component::CurDir => {}
            _ => {
                return Err(Error::new(format!(
                    "`{path}` must be a path inside the working tree, without `..`"
                )));
            }
        }
    }
    Ok(parts.join("/").into())
}

/// A git path for people: lossily decoded.
pub fn show_path(path: &BStr) -> String {
    path.to_str_lossy().into_owned()
}

/// A signature's time as ISO 8601 (`2024-01-02T03:04:05+01:00`).
pub fn iso_time(time: &gix::date::Time) -> String {
    time.format_or_unix(gix::date::time::format::ISO8601_STRICT)
}

/// Any gix error as a tool error, with what was being done and the causes
/// under it (gix's top-level messages often leave out the one that matters,
/// such as an allocation that failed).
pub fn fail(what: &str, error: impl std::error::Error) -> Error {
    let mut message = format!("{what}: {error}");
    let mut cause = error.source();
    while let Some(inner) = cause {
        let text = inner.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        cause = inner.source();
    }
    if message.contains("memory allocation failed") {
        message.push_str(
            " (the plugin ran out of memory: its linear memory may not grow past the \
             `memory_mb` limit, 256 MiB by default; plugins.toml raises it for the git plugin \
             with `limits = { memory_mb = ... }`)",
        );
    }
    Error::new(message)
}

/// The output budget: the plugin's `max_output_bytes` config value.
pub fn max_output_bytes() -> usize {
    host::config("max_output_bytes")
        .and_then(|value| value.trim().parse::<usize>().ok())
        .unwrap_or(DEFAULT_MAX_OUTPUT_BYTES)
}

/// Keeps the first of `items` whose JSON fits in what is left of `budget`,
/// and takes their size from it; returns whether any were dropped. The
/// structured content of a result counts against the host's output cap as
/// much as its text does.
pub fn fit<T: toolcell_sdk::serde::Serialize>(items: &mut Vec<T>, budget: &mut usize) -> bool {
    for (index, item) in items.iter().enumerate() {
        // A few bytes for the comma and the field around the list.
        let size =
            toolcell_sdk::serde_json::to_string(item).map_or(usize::MAX, |json| json.len() + 1);
        if size > *budget {
            items.truncate(index);
            *budget = 0;
            return true;
        }
        *budget -= size;
    }
    false
}

/// Text that stops growing at a byte budget, remembering that it did.
#[derive(Debug)]
pub struct Text {
    text: String,
    max: usize,
    /// Whether something did not fit.
    pub truncated: bool,
}

impl Text {
    /// Empty text with room for `max` bytes.
    pub fn new(max: usize) -> Text {
        Text {
            text: String::new(),
            max,
            truncated: false,
        }
    }

    /// Appends `piece` if it fits; returns whether it did. Once something
    /// has not fitted, nothing more is appended.
    pub fn push(&mut self, piece: &str) -> bool {
        if self.truncated || self.text.len() + piece.len() > self.max {
            self.truncated = true;
            return false;
        }
        self.text.push_str(piece);
        true
    }

    /// The bytes used so far.
    pub fn len(&self) -> usize {
        self.text.len()
    }

    /// Whether nothing was appended.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The text, with `note` after it when something did not fit.
    pub fn finish(mut self, note: &str) -> String {
        if self.truncated {
            if !self.text.ends_with('\n') && !self.text.is_empty() {
                self.text.push('\n');
            }
            self.text.push_str(note);
            self.text.push('\n');
        }
        self.text
    }
}
