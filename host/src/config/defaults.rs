//! Which folders the tools see when the user names none: the embedded
//! default configuration, the folders never mounted without being named,
//! and the [`MountPolicy`] that says where a session's calls get their
//! directories.

use std::path::{Path, PathBuf};

use toml::{Table, Value};

use super::types::{Config, ConfigError, Mount, MountArg};
use super::validate::{BUILTIN_PREFIX, validate};
use crate::builtins::Builtin;

/// The categories enabled when `[server] categories` is absent.
pub const DEFAULT_CATEGORIES: &[&str] = &["read", "search", "vcs"];

/// The `source` of [`Config::embedded_default`].
const EMBEDDED_SOURCE: &str = "<embedded default>";

/// The file read when no `--config` is given, in the directory Toolcell starts in.
const LOCAL_CONFIG: &str = "plugins.toml";

/// Where a session's calls get their directories when the configuration
/// leaves that to the client (the embedded default without `--mount`).
#[derive(Clone, Debug, Default)]
pub struct MountPolicy {
    /// Calls see the client's MCP roots, read-only, when it offers any;
    /// otherwise their configured mounts.
    pub client_roots: bool,
    /// Why nothing is mounted when the client offers no roots (for
    /// example, the server was started in `/`); said to the model, with how
    /// to grant a folder, when a call finds no directory.
    pub unmounted_reason: Option<String>,
    /// The categories enabled, for saying how to enable a disabled tool.
    pub categories: Vec<String>,
}

impl MountPolicy {
    /// What the model is told when `tool` has no folder to work in.
    pub fn no_folder(&self, tool: &str) -> String {
        let reason = self
            .unmounted_reason
            .as_deref()
            .unwrap_or("the configuration grants no directory");
        format!(
            "`{tool}` has no folder to work in: {reason}, and the client offers no MCP roots. \
             Grant a folder by starting Toolcell with `--mount DIR` (read-only; `--mount DIR:rw` \
             also allows writes), or with `--config FILE` naming a plugins.toml whose mounts list \
             the folders."
        )
    }
}

/// The configuration to serve and where its calls get their directories:
/// - `file` (`--config FILE`), exactly as it says;
/// - else the embedded default with `mounts` (`--mount DIR`), if any;
/// - else `./plugins.toml`, if it exists;
/// - else the embedded default with the client's roots, or `cwd` read-only
///   when the client offers none, unless [`implicit_mount_refusal`] refuses
///   it (then nothing, and the tools say how to grant a folder).
///
/// The embedded default serves the builtins marked `by_default`; `home` is
/// the user's home directory, never mounted implicitly.
pub fn choose(
    file: Option<&Path>,
    mounts: &[MountArg],
    cwd: &Path,
    home: Option<&Path>,
    builtins: &[Builtin],
) -> Result<(Config, MountPolicy), Vec<ConfigError>> {
    let defaults: Vec<Builtin> = builtins
        .iter()
        .copied()
        .filter(|builtin| builtin.by_default)
        .collect();
    let mut policy = MountPolicy::default();
    let local = Path::new(LOCAL_CONFIG);
    let config = match file {
        Some(path) => Config::load(path, builtins)?,
        None if !mounts.is_empty() => {
            if local.is_file() {
                tracing::info!("--mount given: serving the embedded default, not ./{LOCAL_CONFIG}");
            }
            Config::embedded_default(cwd, mounts, &defaults)?
        }
        None if local.is_file() => Config::load(local, builtins)?,
        None => {
            let cwd = canonical(cwd);
            let home = home.map(canonical);
            policy.client_roots = true;
            policy.unmounted_reason = implicit_mount_refusal(&cwd, home.as_deref());
            let implicit = match policy.unmounted_reason {
                Some(_) => Vec::new(),
                None => vec![MountArg {
                    path: ".".to_owned(),
                    writable: false,
                }],
            };
            Config::embedded_default(&cwd, &implicit, &defaults)?
        }
    };
    policy.categories = config.categories.clone();
    Ok((config, policy))
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The directory a client's root names, mounted read-only, if its URI is a
/// `file://` URI of a directory; else why not.
pub fn root_mount(uri: &str) -> Result<Mount, String> {
    let path: Option<PathBuf> = url::Url::parse(uri)
        .ok()
        .filter(|url| url.scheme() == "file")
        .and_then(|url| url.to_file_path().ok());
    let Some(path) = path else {
        return Err("not a file:// URI".to_string());
    };
    match std::fs::canonicalize(&path) {
        Ok(host) if host.is_dir() => Ok(Mount {
            host,
            writable: false,
        }),
        Ok(_) => Err("not a directory".to_string()),
        Err(error) => Err(error.to_string()),
    }
}

/// The mounts of a client's roots, in order; each root that names no
/// directory is left out and logged with why.
pub fn roots_mounts<'a>(uris: impl IntoIterator<Item = &'a str>) -> Vec<Mount> {
    uris.into_iter()
        .filter_map(|uri| {
            root_mount(uri)
                .map_err(|why| tracing::info!("ignoring root {uri:?}: {why}"))
                .ok()
        })
        .collect()
}

impl Config {
    /// The configuration used when no file is given and `./plugins.toml` does not exist.
    ///
    /// One plugin per builtin (plugin name = builtin name, `path = "builtin:NAME"`), each with
    /// `mounts` (resolved against `base_dir`), default categories and limits, plus the `write`
    /// category when a mount is read-write. `source` is `"<embedded default>"`.
    pub fn embedded_default(
        base_dir: &Path,
        mounts: &[MountArg],
        builtins: &[Builtin],
    ) -> Result<Config, Vec<ConfigError>> {
        let mounts: Vec<Value> = mounts
            .iter()
            .map(|mount| {
                let mut table = Table::new();
                table.insert("host".to_owned(), Value::String(mount.path.clone()));
                let mode = if mount.writable { "rw" } else { "ro" };
                table.insert("mode".to_owned(), Value::String(mode.to_owned()));
                Value::Table(table)
            })
            .collect();
        let plugins = builtins
            .iter()
            .map(|builtin| {
                let mut plugin = Table::new();
                plugin.insert("name".to_owned(), Value::String(builtin.name.to_owned()));
                plugin.insert(
                    "path".to_owned(),
                    Value::String(format!("{BUILTIN_PREFIX}{}", builtin.name)),
                );
                plugin.insert("mounts".to_owned(), Value::Array(mounts.clone()));
                Value::Table(plugin)
            })
            .collect();
        let mut root = Table::new();
        root.insert("plugin".to_owned(), Value::Array(plugins));
        let mut config = validate(&root, EMBEDDED_SOURCE, base_dir, builtins)?;
        let writable = config
            .plugins
            .iter()
            .any(|plugin| plugin.mounts.iter().any(|mount| mount.writable));
        if writable {
            config.categories.push("write".to_owned());
        }
        Ok(config)
    }
}

/// Why `dir` must not be mounted without the user naming it, if it must not: the root, the
/// user's home directory or one of its ancestors, a temporary or media directory shared by
/// everyone, or a system directory (or, for those whose whole tree is the system's, anything
/// under one). Desktop clients often start servers in `/` or the home directory.
pub fn implicit_mount_refusal(dir: &Path, home: Option<&Path>) -> Option<String> {
    /// Never mounted implicitly, nor anything under them.
    const SYSTEM_TREES: &[&str] = &[
        "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run",
        "/sbin", "/sys", "/usr", "/var", "/private", "/System", "/Library",
    ];
    /// Never mounted implicitly themselves; their subdirectories may be.
    const SHARED_ROOTS: &[&str] = &[
        "/",
        "/home",
        "/Users",
        "/root",
        "/tmp",
        "/mnt",
        "/media",
        "/opt",
        "/srv",
        "/Volumes",
        "/Applications",
    ];
    let shown = dir.display();
    if dir == Path::new("/") {
        return Some("Toolcell was started in `/`, which is never mounted implicitly".to_owned());
    }
    if let Some(home) = home
        && home.starts_with(dir)
    {
        return Some(if dir == home {
            format!(
                "Toolcell was started in your home directory `{shown}`, which is never mounted implicitly"
            )
        } else {
            format!(
                "Toolcell was started in `{shown}`, which holds your home directory and is never mounted implicitly"
            )
        });
    }
    if SHARED_ROOTS.iter().any(|root| dir == Path::new(root)) {
        return Some(format!(
            "Toolcell was started in `{shown}`, which is never mounted implicitly"
        ));
    }
    if let Some(tree) = SYSTEM_TREES.iter().find(|tree| dir.starts_with(tree)) {
        return Some(format!(
            "Toolcell was started in `{shown}`, a system directory (under `{tree}`), which is \
             never mounted implicitly"
        ));
    }
    None
}

#[cfg(test)]
// A failed unwrap is a failed test; the workspace lint is for non-test code.
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    use crate::config::tests::{BUILTINS, builtin, messages};
    use crate::config::{Limits, PluginSource};

    fn cwd_read_only() -> Vec<MountArg> {
        vec![".".parse().unwrap()]
    }

    #[test]
    fn embedded_default_mounts_what_it_is_given() {
        let dir = tempfile::tempdir().unwrap();
        let two = [BUILTINS[0], builtin("grep", &[])];
        let config = Config::embedded_default(dir.path(), &cwd_read_only(), &two).unwrap();
        assert_eq!(config.source, "<embedded default>");
        assert_eq!(config.categories, DEFAULT_CATEGORIES);
        assert_eq!(config.limits, Limits::default());
        assert_eq!(config.max_concurrent_calls, 16);
        let canonical = std::fs::canonicalize(dir.path()).unwrap();
        let names: Vec<&str> = config.plugins.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["fs", "grep"]);
        for plugin in &config.plugins {
            assert_eq!(plugin.source, PluginSource::Builtin(plugin.name.clone()));
            assert_eq!(
                plugin.mounts,
                [Mount {
                    host: canonical.clone(),
                    writable: false
                }]
            );
            assert_eq!(plugin.limits, Limits::default());
            assert_eq!(plugin.tools, None);
            assert!(plugin.tools_overrides.is_empty());
        }

        // No mounts at all, and a read-write one, which also enables writing.
        let none = Config::embedded_default(dir.path(), &[], BUILTINS).unwrap();
        assert!(none.plugins[0].mounts.is_empty());
        let rw = Config::embedded_default(dir.path(), &[".:rw".parse().unwrap()], BUILTINS);
        let rw = rw.unwrap();
        assert!(rw.plugins[0].mounts[0].writable);
        assert!(rw.categories.contains(&"write".to_owned()));
    }

    #[test]
    fn embedded_default_with_a_missing_mount_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone");
        let errors = messages(Config::embedded_default(&gone, &cwd_read_only(), BUILTINS));
        assert_eq!(
            errors,
            [format!(
                "<embedded default>: plugin[0] (fs).mounts[0].host: \".\" (resolved to {}): no \
                 such directory",
                gone.display()
            )]
        );
    }

    #[test]
    fn mount_arguments() {
        let parse = |text: &str| text.parse::<MountArg>();
        let mount = |path: &str, writable| MountArg {
            path: path.to_owned(),
            writable,
        };
        assert_eq!(parse("src"), Ok(mount("src", false)));
        assert_eq!(parse("src:ro"), Ok(mount("src", false)));
        assert_eq!(parse("/a/b:rw"), Ok(mount("/a/b", true)));
        assert_eq!(parse("c:\\x"), Ok(mount("c:\\x", false)));
        assert_eq!(parse("a:b:rw"), Ok(mount("a:b", true)));
        assert!(parse(":rw").is_err());
        assert!(parse("").is_err());
    }

    #[test]
    fn directories_never_mounted_implicitly() {
        let home = Path::new("/home/ann");
        let refused = |dir: &str| implicit_mount_refusal(Path::new(dir), Some(home));
        for dir in [
            "/",
            "/home",
            "/home/ann",
            "/etc",
            "/etc/nginx",
            "/usr/local/src",
            "/tmp",
            "/proc/self",
            "/var/lib",
        ] {
            assert!(refused(dir).is_some(), "{dir} should be refused");
        }
        for dir in [
            "/home/ann/project",
            "/tmp/work",
            "/srv/www",
            "/opt/app",
            "/data",
        ] {
            assert_eq!(refused(dir), None, "{dir} should be allowed");
        }
        assert!(refused("/home/ann").unwrap().contains("home directory"));
        assert!(refused("/").unwrap().contains("`/`"));
    }
}
