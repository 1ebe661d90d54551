//! What the benchmark needs on disk: the release binaries, the perf plugin,
//! and a fixture directory with the files to read and the configurations to
//! start from.
//!
//! [`build`] runs cargo for `floor-server` and `toolcell` (release; the
//! latter as `cargo build --release --bin toolcell` builds it) and for
//! the perf plugin (wasm32-wasip2, in a target directory of its own so it
//! never invalidates the host build). [`Fixture`] lays out a temporary
//! directory: the files `read_file` reads, a `default/` directory with no
//! `plugins.toml` (so `toolcell serve` runs the embedded default there), and
//! a `plugins.toml` per plugin count.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use tempfile::TempDir;

/// The 3-byte file.
pub const SMALL: &str = "hi\n";

/// The size the second file is cut to, in bytes (at a line end).
const MEDIUM_BYTES: usize = 27 * 1000;

/// The workspace root, where cargo runs.
pub fn workspace_root() -> Result<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::canonicalize(&root).with_context(|| format!("cannot find {}", root.display()))
}

/// Where cargo puts its output: `$CARGO_TARGET_DIR`, else `<root>/target`.
pub fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(|dir| root.join(dir))
        .unwrap_or_else(|| root.join("target"))
}

/// The programs under test.
pub struct Binaries {
    /// `target/release/toolcell`, or what `--toolcell` named.
    pub toolcell: PathBuf,
    /// `target/release/floor-server`.
    pub floor: PathBuf,
    /// The perf plugin's component.
    pub plugin: PathBuf,
}

/// Builds what the benchmark runs; `toolcell` given means "use this binary,
/// do not build the host".
pub fn build(toolcell: Option<PathBuf>) -> Result<Binaries> {
    let root = workspace_root()?;
    let target = target_dir(&root);
    cargo(
        &root,
        &["build", "--release"],
        &["-p", "toolcell-perf", "--bin", "floor-server"],
        None,
    )?;
    if toolcell.is_none() {
        // Alone, as `cargo build --release --bin toolcell` and `cargo
        // install --path host` build it, so the binary's symbol names are
        // those that `host/hot-code/symbols.txt` lists. Built
        // together with toolcell-perf, tokio would get `process` and every
        // name a different hash.
        cargo(&root, &["build", "--release"], &["--bin", "toolcell"], None)?;
    }
    let plugin_target = target.join("perf-plugins");
    cargo(
        &root,
        &["build", "--release", "--target", "wasm32-wasip2"],
        &["-p", "toolcell-perf-plugin"],
        Some(&plugin_target),
    )?;
    let toolcell = match toolcell {
        Some(path) => std::fs::canonicalize(&path)
            .with_context(|| format!("no toolcell binary at {}", path.display()))?,
        None => target.join("release").join("toolcell"),
    };
    let binaries = Binaries {
        toolcell,
        floor: target.join("release").join("floor-server"),
        plugin: plugin_target
            .join("wasm32-wasip2")
            .join("release")
            .join("toolcell_perf_plugin.wasm"),
    };
    for path in [&binaries.toolcell, &binaries.floor, &binaries.plugin] {
        if !path.is_file() {
            bail!("cargo finished but {} is missing", path.display());
        }
    }
    Ok(binaries)
}

fn cargo(root: &Path, command: &[&str], packages: &[&str], target: Option<&Path>) -> Result<()> {
    let program = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cargo = Command::new(&program);
    cargo.current_dir(root).args(command).args(packages);
    if let Some(target) = target {
        cargo.arg("--target-dir").arg(target);
        // The outer build's settings are for the host, not for wasm.
        for var in [
            "CARGO_TARGET_DIR",
            "RUSTFLAGS",
            "CARGO_ENCODED_RUSTFLAGS",
            "CARGO_BUILD_RUSTFLAGS",
            "RUSTC_WORKSPACE_WRAPPER",
        ] {
            cargo.env_remove(var);
        }
    }
    let line = format!("cargo {} {}", command.join(" "), packages.join(" "));
    eprintln!("building: {line}");
    let status = cargo
        .status()
        .with_context(|| format!("cannot run {}", program.to_string_lossy()))?;
    if !status.success() {
        bail!("`{line}` failed ({status})");
    }
    Ok(())
}

/// The benchmark's temporary directory, removed when dropped.
pub struct Fixture {
    _dir: TempDir,
    root: PathBuf,
    /// The 3-byte file.
    pub small: PathBuf,
    /// The 27 KB file.
    pub medium: PathBuf,
    /// Its contents.
    pub medium_text: String,
}

impl Fixture {
    /// Creates the directory and the two files.
    pub fn new() -> Result<Fixture> {
        let dir = tempfile::Builder::new()
            .prefix("toolcell-perf-")
            .tempdir()?;
        // Mounts appear to the guest at their canonical path.
        let root = std::fs::canonicalize(dir.path())?;
        let default = root.join("default");
        std::fs::create_dir(&default)?;
        let small = default.join("small.txt");
        std::fs::write(&small, SMALL)?;
        let medium_text = medium_text();
        let medium = default.join("medium.txt");
        std::fs::write(&medium, &medium_text)?;
        std::fs::create_dir(root.join("logs"))?;
        std::fs::create_dir(root.join("caches"))?;
        Ok(Fixture {
            _dir: dir,
            root,
            small,
            medium,
            medium_text,
        })
    }

    /// The fixture's root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The directory with no `plugins.toml`, where the files are: `toolcell
    /// serve` run here serves the embedded default with it mounted.
    pub fn default_dir(&self) -> PathBuf {
        self.root.join("default")
    }

    /// A new path for a server's log.
    pub fn log(&self, name: &str) -> PathBuf {
        self.root.join("logs").join(format!("{name}.log"))
    }

    /// A cache directory: the same name is the same directory (a warm cache
    /// once one server has filled it); a new name is an empty one.
    pub fn cache(&self, name: &str) -> Result<PathBuf> {
        let dir = self.root.join("caches").join(name);
        std::fs::create_dir_all(&dir)?;
        Ok(dir)
    }

    /// A `plugins.toml` loading `count` copies of `plugin`, copy `i` named
    /// `p<i>` and offering the one tool `p<i>_echo`.
    pub fn many_plugins(&self, plugin: &Path, count: usize) -> Result<PathBuf> {
        let path = self.root.join(format!("plugins-{count}.toml"));
        let wasm = plugin
            .to_str()
            .context("the plugin's path is not UTF-8")?
            .replace('\\', "\\\\")
            .replace('"', "\\\"");
        let mut text = String::new();
        for i in 0..count {
            text.push_str(&format!(
                "[[plugin]]\nname = \"p{i}\"\npath = \"{wasm}\"\nconfig = {{ prefix = \"p{i}\" }}\n\n"
            ));
        }
        std::fs::write(&path, text)?;
        Ok(path)
    }
}

/// About 27 KB of source-like text: short lines, quotes, indentation.
fn medium_text() -> String {
    let mut text = String::new();
    let mut i = 0;
    loop {
        let line = format!(
            "    let value_{i} = table.get(\"key {i}\").map(|v| v * {i}).unwrap_or({});\n",
            i % 7
        );
        if text.len() + line.len() > MEDIUM_BYTES {
            return text;
        }
        text.push_str(&line);
        i += 1;
    }
}

/// Waits until the cache files a start just wrote are older than the
/// server's `SETTLED` (2 s, `host/src/runtime/component_file.rs`): until
/// then, the server does not trust a file by its identity, so every start
/// reads and checksums each new cache entry whole (a Python component's is
/// 36 MB). A user's warm start comes long after the start that filled the
/// cache; the timed ones here do too.
pub async fn let_the_cache_settle() {
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
}
