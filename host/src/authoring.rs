//! Writing plugins: `toolcell new` scaffolds a project, `toolcell build`
//! turns it into a component, `toolcell inspect` says whether Toolcell can
//! load one.
//!
//! Rust projects build with cargo; Python projects with componentize-py and
//! JavaScript projects with componentize-js, both installed on demand into
//! Toolcell's cache directory. Everything a build needs from this
//! repository, the WIT contract and the Python and JavaScript SDKs, is
//! embedded in the binary and written out next to those tools, so a plugin
//! author needs neither a clone nor a global install.

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::config::{PLUGIN_NAME_RULE, is_plugin_name};

/// The languages a plugin project can be written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Language {
    /// A `cdylib` crate on the `toolcell-sdk` crate, built with cargo.
    Rust,
    /// A Python module on the `toolcell` package, built with componentize-py.
    Python,
    /// An ES module on the `toolcell` module, built with componentize-js.
    Js,
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Language::Rust => "Rust",
            Language::Python => "Python",
            Language::Js => "JavaScript",
        })
    }
}

/// A plugin project found on disk.
#[derive(Debug)]
pub struct Project {
    /// The project's folder.
    pub dir: PathBuf,
    /// Its language, told by its manifest.
    pub language: Language,
    /// Its name, from its manifest: the plugin's name and the component's
    /// file name.
    pub name: String,
}

impl Project {
    /// Finds the project in `dir` by its manifest: `Cargo.toml`,
    /// `pyproject.toml` or `package.json`.
    pub fn find(dir: &Path) -> Result<Project> {
        let dir = dunce::canonicalize(dir)
            .with_context(|| format!("cannot open the project folder {}", dir.display()))?;
        let read = |file: &str| -> Result<Option<String>> {
            let path = dir.join(file);
            match std::fs::read_to_string(&path) {
                Ok(text) => Ok(Some(text)),
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(error) => Err(error).with_context(|| format!("cannot read {}", path.display())),
            }
        };
        let (language, name) = if let Some(text) = read("Cargo.toml")? {
            let manifest: toml::Table = toml::from_str(&text)
                .with_context(|| format!("{}: not valid TOML", dir.join("Cargo.toml").display()))?;
            let name = manifest
                .get("package")
                .and_then(|package| package.get("name"))
                .and_then(toml::Value::as_str)
                .context("Cargo.toml has no [package] name")?;
            (Language::Rust, name.to_owned())
        } else if let Some(text) = read("pyproject.toml")? {
            let manifest: toml::Table = toml::from_str(&text).with_context(|| {
                format!("{}: not valid TOML", dir.join("pyproject.toml").display())
            })?;
            let name = manifest
                .get("project")
                .and_then(|project| project.get("name"))
                .and_then(toml::Value::as_str)
                .context("pyproject.toml has no [project] name")?;
            (Language::Python, name.to_owned())
        } else if let Some(text) = read("package.json")? {
            let manifest: serde_json::Value = serde_json::from_str(&text).with_context(|| {
                format!("{}: not valid JSON", dir.join("package.json").display())
            })?;
            let name = manifest
                .get("name")
                .and_then(serde_json::Value::as_str)
                .context("package.json has no \"name\"")?;
            (Language::Js, name.to_owned())
        } else {
            bail!(
                "{} holds no plugin project: no Cargo.toml, pyproject.toml or package.json \
                 (`toolcell new NAME` writes one)",
                dir.display()
            );
        };
        check_name(&name)?;
        Ok(Project {
            dir,
            language,
            name,
        })
    }

    /// Where `toolcell build` writes the component: `<dir>/<name>.wasm`.
    pub fn component(&self) -> PathBuf {
        self.dir.join(format!("{}.wasm", self.name))
    }
}

/// A project name is also a plugin name, a package name and a file name:
/// a plugin name ([`PLUGIN_NAME_RULE`]) that starts with a letter, as
/// cargo, pip and npm package names must.
pub fn check_name(name: &str) -> Result<()> {
    if !is_plugin_name(name) || !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        bail!(
            "invalid plugin name {name:?}: use {PLUGIN_NAME_RULE}, and start it with a letter \
             (it names the plugin, its package and its .wasm file)"
        );
    }
    Ok(())
}

/// A file embedded in the binary: its path relative to the folder it is
/// written into, and its contents.
pub type Embedded = (&'static str, &'static str);

/// The contents of `$file`, a path relative to the repository's root, which
/// `build.rs` names in `TOOLCELL_SOURCES` (the repository, or the copy of
/// the files the crate embeds in a packaged crate).
macro_rules! source {
    ($file:expr) => {
        include_str!(concat!(env!("TOOLCELL_SOURCES"), "/", $file))
    };
}

macro_rules! embed {
    ($root:literal, $($file:literal),+ $(,)?) => {
        &[$(($file, source!(concat!($root, "/", $file)))),+]
    };
}

pub mod build;
pub mod inspect;
pub mod scaffold;

/// Contract 0.1.0 as a folder of its own: its package (from
/// `wit/deps/plugin-0.1.0.wit`) at the top and the WASI packages it uses in
/// `deps/`. The Python and JavaScript SDKs build against it; with 0.2.0 in
/// the same folder, their generated module names would carry versions.
pub const WIT: &[Embedded] = &[
    ("plugin.wit", source!("wit/deps/plugin-0.1.0.wit")),
    ("deps/cli.wit", source!("wit/deps/cli.wit")),
    ("deps/clocks.wit", source!("wit/deps/clocks.wit")),
    ("deps/filesystem.wit", source!("wit/deps/filesystem.wit")),
    ("deps/http.wit", source!("wit/deps/http.wit")),
    ("deps/io.wit", source!("wit/deps/io.wit")),
    ("deps/random.wit", source!("wit/deps/random.wit")),
    ("deps/sockets.wit", source!("wit/deps/sockets.wit")),
];

/// Writes `files` under `dir`, creating folders, with each `{{key}}` of
/// `values` replaced by its value.
pub fn write_files(dir: &Path, files: &[(&str, &str)], values: &[(&str, &str)]) -> Result<()> {
    for (relative, contents) in files {
        let path = dir.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        let mut contents = (*contents).to_owned();
        for (key, value) in values {
            contents = contents.replace(&format!("{{{{{key}}}}}"), value);
        }
        std::fs::write(&path, contents)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// Writes `files` into a folder under `cache` named after what they are and
/// a digest of their contents, once: a folder that exists is complete,
/// since it is filled under a temporary name and renamed into place.
pub fn materialise(cache: &Path, what: &str, files: &[Embedded]) -> Result<PathBuf> {
    let mut listing = Vec::new();
    for (relative, contents) in files {
        for part in [relative.as_bytes(), contents.as_bytes()] {
            listing.extend_from_slice(part);
            listing.push(0);
        }
    }
    let dir = cache.join(format!("{what}-{}", &digest(&listing)[..16]));
    if dir.is_dir() {
        return Ok(dir);
    }
    std::fs::create_dir_all(cache).with_context(|| format!("cannot create {}", cache.display()))?;
    let staging = tempfile::Builder::new()
        .prefix(&format!(".{what}-"))
        .tempdir_in(cache)
        .with_context(|| format!("cannot create a folder in {}", cache.display()))?;
    write_files(staging.path(), files, &[])?;
    match std::fs::rename(staging.path(), &dir) {
        Ok(()) => {}
        // Another build put it there first.
        Err(_) if dir.is_dir() => {}
        Err(error) => {
            return Err(error).with_context(|| format!("cannot create {}", dir.display()));
        }
    }
    Ok(dir)
}

/// The SHA-256 of `bytes`, in hex.
fn digest(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file under `root`, relative to it, sorted.
    fn files_under(root: &Path) -> Vec<String> {
        let mut found = Vec::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    let relative = path.strip_prefix(root).unwrap();
                    found.push(relative.to_string_lossy().replace('\\', "/"));
                }
            }
        }
        found.sort();
        found
    }

    fn repo(path: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
    }

    #[test]
    fn the_embedded_contract_is_0_1_0_with_every_package_it_uses() {
        // Every file of wit/ but 0.2.0's own and the toolcell:files extension (which 0.1.0 does
        // not use; only the Rust SDK and the search plugin do), with 0.1.0's moved to the top.
        let mut expected: Vec<String> = files_under(&repo("wit"))
            .into_iter()
            .filter(|path| {
                !matches!(
                    path.as_str(),
                    "plugin.wit"
                        | "deps/files-0.1.0.wit"
                        | "deps/files-0.2.0.wit"
                        | "deps/files-0.3.0.wit"
                )
            })
            .map(|path| match path.as_str() {
                "deps/plugin-0.1.0.wit" => "plugin.wit".to_string(),
                _ => path,
            })
            .collect();
        expected.sort();
        let mut embedded: Vec<String> = WIT.iter().map(|(path, _)| path.to_string()).collect();
        embedded.sort();
        assert_eq!(embedded, expected);
        let top = WIT.iter().find(|(path, _)| *path == "plugin.wit");
        assert!(top.is_some_and(|(_, text)| text.contains("package toolcell:plugin@0.1.0;")));
    }

    #[test]
    fn names_follow_the_plugin_name_rules() {
        for good in ["hello", "word-count", "a1_b"] {
            check_name(good).unwrap();
        }
        for bad in ["", "Hello", "1abc", "-x", "a b", "a.b", &"x".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn materialise_writes_once_and_keeps_contents() {
        let cache = tempfile::tempdir().unwrap();
        let files: &[Embedded] = &[("a.txt", "one"), ("sub/b.txt", "two")];
        let first = materialise(cache.path(), "test", files).unwrap();
        assert_eq!(
            std::fs::read_to_string(first.join("sub/b.txt")).unwrap(),
            "two"
        );
        let again = materialise(cache.path(), "test", files).unwrap();
        assert_eq!(first, again);
        let other = materialise(cache.path(), "test", &[("a.txt", "changed")]).unwrap();
        assert_ne!(first, other);
    }

    #[test]
    fn projects_are_told_by_their_manifest() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("pyproject.toml"),
            "[project]\nname = \"wc\"\n",
        )
        .unwrap();
        let project = Project::find(dir.path()).unwrap();
        assert_eq!(
            (project.language, project.name.as_str()),
            (Language::Python, "wc")
        );
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[package]\nname = \"Bad Name\"\n",
        )
        .unwrap();
        let error = Project::find(dir.path()).unwrap_err().to_string();
        assert!(error.contains("invalid plugin name"), "{error}");
        let empty = tempfile::tempdir().unwrap();
        let error = Project::find(empty.path()).unwrap_err().to_string();
        assert!(error.contains("no plugin project"), "{error}");
    }
}
