//! Which folders the tools see when the user names none: the embedded
//! default configuration, the folders never mounted without being named,
//! and the [`MountPolicy`] that says where a session's calls get their
//! directories.

use std::path::{Path, PathBuf};

use toml::{Table, Value};

use super::names::{CATEGORY_RULE, CONTRACT_CATEGORIES, is_category, unknown_category};
use super::types::{Config, ConfigError, Mount, MountArg, PluginSource, Subscriptions};
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
    /// How many resources the session, and the server, may follow.
    pub subscriptions: Subscriptions,
}

impl MountPolicy {
    /// What the model is told when `tool` has no folder to work in.
    pub fn no_folder(&self, tool: &str) -> String {
        let reason = self
            .unmounted_reason
            .as_deref()
            .unwrap_or("the configuration grants no directory");
        let roots = if self.client_roots {
            ", and the client offers no MCP roots"
        } else {
            ""
        };
        format!(
            "`{tool}` has no folder to work in: {reason}{roots}. Grant a folder by starting \
             Toolcell with `--mount DIR` (read-only; `--mount DIR:rw` also allows writes), or \
             with `--config FILE` naming a plugins.toml whose mounts list the folders; in Claude \
             Desktop's Toolcell extension, choose folders in its settings."
        )
    }
}

/// What the command line says about the configuration to serve.
#[derive(Clone, Copy, Debug, Default)]
pub struct Choice<'a> {
    /// `--config FILE`.
    pub file: Option<&'a Path>,
    /// `--mount DIR[:ro|rw]` and the folders given as arguments.
    pub mounts: &'a [MountArg],
    /// `--named-only`: exactly the folders named, none if none; neither
    /// `./plugins.toml`, nor the client's roots, nor the current directory.
    /// For launchers that pass the folders the user chose (a Claude Desktop
    /// bundle's settings), where an empty choice must mean nothing.
    pub named_only: bool,
    /// `--enable CATEGORY`: categories enabled on top of the configuration's.
    pub enable: &'a [String],
}

/// The configuration to serve and where its calls get their directories:
/// - `choice.file` (`--config FILE`), exactly as it says;
/// - else the embedded default with `choice.mounts`, if any, or with none
///   when `choice.named_only`;
/// - else `./plugins.toml`, if it exists;
/// - else the embedded default with the client's roots, or `cwd` read-only
///   when the client offers none, unless [`implicit_mount_refusal`] refuses
///   it (then nothing, and the tools say how to grant a folder).
///
/// `choice.enable` adds categories to whichever configuration it is.
///
/// The embedded default serves the builtins marked `by_default` (those gated
/// by a category only when it is enabled); `home` is the user's home
/// directory, never mounted implicitly.
pub fn choose(
    choice: Choice<'_>,
    cwd: &Path,
    home: Option<&Path>,
    builtins: &[Builtin],
) -> Result<(Config, MountPolicy), Vec<ConfigError>> {
    let mut enabled: Vec<&str> = DEFAULT_CATEGORIES.to_vec();
    enabled.extend(choice.enable.iter().map(String::as_str));
    let defaults: Vec<Builtin> = builtins
        .iter()
        .copied()
        .filter(|builtin| {
            builtin.by_default && builtin.gated_by.is_none_or(|gate| enabled.contains(&gate))
        })
        .collect();
    let mut policy = MountPolicy::default();
    let local = Path::new(LOCAL_CONFIG);
    let config = match choice.file {
        Some(path) => Config::load(path, builtins)?,
        None if !choice.mounts.is_empty() || choice.named_only => {
            if local.is_file() {
                tracing::info!("folders named: serving the embedded default, not ./{LOCAL_CONFIG}");
            }
            if choice.mounts.is_empty() {
                policy.unmounted_reason = Some("no folder was chosen".to_owned());
            }
            Config::embedded_default(cwd, choice.mounts, &defaults)?
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
    let mut config = config;
    let only_builtins = config
        .plugins
        .iter()
        .all(|plugin| matches!(plugin.source, PluginSource::Builtin(_)));
    let mut errors = Vec::new();
    for category in choice.enable {
        if !is_category(category) {
            errors.push(command_line_error(format!(
                "invalid category {category:?}: must be {CATEGORY_RULE}"
            )));
        } else if only_builtins && !CONTRACT_CATEGORIES.contains(&category.as_str()) {
            errors.push(command_line_error(unknown_category(
                category,
                CONTRACT_CATEGORIES,
            )));
        } else if !config.categories.contains(category) {
            config.categories.push(category.clone());
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    policy.categories = config.categories.clone();
    policy.subscriptions = config.subscriptions;
    Ok((config, policy))
}

/// An error in `--enable`.
fn command_line_error(message: String) -> ConfigError {
    ConfigError {
        file: "<command line>".to_owned(),
        key: "--enable".to_owned(),
        message,
    }
}

fn canonical(path: &Path) -> PathBuf {
    dunce::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
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
    match dunce::canonicalize(&path) {
        Ok(host) if !host.is_dir() => Err("not a directory".to_string()),
        Ok(host) => match unmountable(&host) {
            Some(why) => Err(why.to_string()),
            None => Ok(Mount {
                host,
                writable: false,
            }),
        },
        Err(error) => Err(error.to_string()),
    }
}

/// Why the canonical directory `host` cannot be mounted at all, if it
/// cannot: a network share (a Windows UNC path, `\\server\share`), which the
/// sandbox's path resolution does not support.
pub fn unmountable(host: &Path) -> Option<&'static str> {
    let unc = host.to_str().is_some_and(|text| text.starts_with(r"\\"));
    unc.then_some(
        "a network share (UNC path) cannot be mounted; copy the files to a local folder, or \
         mount a local one",
    )
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

/// The OS families whose folders [`implicit_mount_refusal`] knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Os {
    /// Linux and the other Unixes but macOS.
    Unix,
    /// macOS.
    MacOs,
    /// Windows: names compare without regard to case, `\` and `/` both
    /// separate them, and a drive letter starts an absolute path.
    Windows,
}

impl Os {
    /// The OS this build runs on.
    pub const CURRENT: Os = if cfg!(windows) {
        Os::Windows
    } else if cfg!(target_os = "macos") {
        Os::MacOs
    } else {
        Os::Unix
    };
}

/// The folders never mounted without being named, per OS family: `trees`
/// with everything under them, `roots` themselves only (their subfolders
/// may be). `~` stands for the user's home folder, `%NAME%` for the folder an
/// environment variable names (skipped when it is not set). The user's home
/// folder and every folder that holds it are refused on every OS.
struct NeverMounted {
    trees: &'static [&'static str],
    roots: &'static [&'static str],
}

/// The table of [`NeverMounted`] folders, one row per OS family.
const NEVER_MOUNTED: &[(Os, NeverMounted)] = &[
    (
        Os::Unix,
        NeverMounted {
            trees: &[
                "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc",
                "/run", "/sbin", "/sys", "/usr", "/var",
            ],
            roots: &[
                "/", "/home", "/root", "/tmp", "/mnt", "/media", "/opt", "/srv",
            ],
        },
    ),
    (
        Os::MacOs,
        NeverMounted {
            trees: &[
                "/System",
                "/Library",
                "~/Library",
                "/Applications",
                "/private",
                "/Volumes",
                "/bin",
                "/sbin",
                "/usr",
                "/dev",
                "/etc",
                "/var",
                "/cores",
                "/opt/homebrew",
            ],
            roots: &["/", "/Users", "/tmp", "/opt"],
        },
    ),
    (
        Os::Windows,
        NeverMounted {
            trees: &[
                "%WINDIR%",
                "%SystemRoot%",
                "%ProgramFiles%",
                "%ProgramFiles(x86)%",
                "%ProgramW6432%",
                "%ProgramData%",
                "%APPDATA%",
                "%LOCALAPPDATA%",
                "~/AppData",
                "C:/Windows",
                "C:/Program Files",
                "C:/Program Files (x86)",
                "C:/ProgramData",
            ],
            roots: &["C:/Users", "%PUBLIC%", "%TEMP%", "%TMP%"],
        },
    ),
];

/// Why `dir` must not be mounted without the user naming it, if it must not
/// (see the `NEVER_MOUNTED` table): the root or a drive root, the user's home folder
/// or one that holds it, a folder shared by everyone, or a system folder.
/// Desktop clients often start servers in `/`, `C:\Windows\System32` or the
/// home folder.
pub fn implicit_mount_refusal(dir: &Path, home: Option<&Path>) -> Option<String> {
    let text = |path: &Path| path.to_string_lossy().into_owned();
    refusal(
        Os::CURRENT,
        &text(dir),
        home.map(text).as_deref(),
        &|name| std::env::var(name).ok(),
    )
}

/// [`implicit_mount_refusal`] for the folder `dir` on `os`, with `home` the
/// user's home folder and `env` the environment.
pub fn refusal(
    os: Os,
    dir: &str,
    home: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    let never = &NEVER_MOUNTED.iter().find(|(family, _)| *family == os)?.1;
    let parts = |path: &str| components(os, path);
    let here = parts(dir);
    let shown = dir;
    if here.len() <= 1 {
        let what = if os == Os::Windows {
            "a drive root"
        } else {
            "the root folder"
        };
        return Some(format!(
            "Toolcell was started in `{shown}`, {what}, which is never mounted implicitly"
        ));
    }
    if let Some(home) = home.map(parts)
        && home.starts_with(&here)
    {
        return Some(if home == here {
            format!(
                "Toolcell was started in your home directory `{shown}`, which is never mounted \
                 implicitly"
            )
        } else {
            format!(
                "Toolcell was started in `{shown}`, which holds your home directory and is never \
                 mounted implicitly"
            )
        });
    }
    // A listed folder as components: `~` and `%NAME%` expanded, or `None`
    // when what they stand for is unknown.
    let expand = |listed: &str| -> Option<Vec<String>> {
        if let Some(rest) = listed.strip_prefix('~') {
            return Some(parts(&format!("{}{rest}", home?)));
        }
        if let Some(name) = listed.strip_prefix('%').and_then(|l| l.strip_suffix('%')) {
            return env(name)
                .filter(|value| !value.is_empty())
                .map(|value| parts(&value));
        }
        Some(parts(listed))
    };
    if never
        .roots
        .iter()
        .filter_map(|root| expand(root))
        .any(|root| root == here)
    {
        return Some(format!(
            "Toolcell was started in `{shown}`, a folder shared by everyone, which is never \
             mounted implicitly"
        ));
    }
    let tree = never
        .trees
        .iter()
        .find(|tree| expand(tree).is_some_and(|tree| here.starts_with(&tree)));
    tree.map(|tree| {
        format!(
            "Toolcell was started in `{shown}`, a system or application folder (under \
             `{tree}`), which is never mounted implicitly"
        )
    })
}

/// The names that make up `path` on `os`, as compared: on Windows without
/// the `\\?\` prefix, split at `\` and `/`, lower case; elsewhere split at
/// `/`. The first is the root (`""` for `/`, the drive for Windows).
fn components(os: Os, path: &str) -> Vec<String> {
    match os {
        Os::Windows => {
            let path = path.strip_prefix(r"\\?\").unwrap_or(path);
            path.split(['\\', '/'])
                .filter(|name| !name.is_empty())
                .map(str::to_lowercase)
                .collect()
        }
        Os::Unix | Os::MacOs => std::iter::once("")
            .chain(path.split('/').filter(|name| !name.is_empty()))
            .map(str::to_owned)
            .collect(),
    }
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
        let canonical = dunce::canonicalize(dir.path()).unwrap();
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
    fn enable_adds_a_category_and_the_builtins_it_gates() {
        let dir = tempfile::tempdir().unwrap();
        let mounts = cwd_read_only();
        let serve = |enable: &[String]| {
            let choice = Choice {
                mounts: &mounts,
                enable,
                ..Choice::default()
            };
            choose(choice, dir.path(), None, crate::builtins::BUILTINS)
        };
        let names = |config: &Config| -> Vec<String> {
            config.plugins.iter().map(|p| p.name.clone()).collect()
        };

        // Off by default: the execute builtins are not in the embedded default.
        let (plain, policy) = serve(&[]).unwrap();
        assert_eq!(names(&plain), ["fs", "search", "git"]);
        assert_eq!(policy.categories, DEFAULT_CATEGORIES);

        let (config, policy) = serve(&["execute".to_owned()]).unwrap();
        assert_eq!(names(&config), ["fs", "search", "git", "python", "js"]);
        assert!(policy.categories.contains(&"execute".to_owned()));
        let caps: Vec<Option<usize>> = config
            .plugins
            .iter()
            .map(|p| p.max_concurrent_calls)
            .collect();
        let gated = Some(crate::limits::DEFAULT_GATED_CONCURRENT_CALLS);
        assert_eq!(caps, [None, None, None, gated, gated]);

        // Repeated, and any category: `write` is enabled without a writable mount.
        let (config, _) = serve(&["write".to_owned(), "write".to_owned()]).unwrap();
        let writes = config.categories.iter().filter(|c| *c == "write").count();
        assert_eq!(writes, 1);

        let errors = messages(serve(&["exectue".to_owned()]).map(|(config, _)| config));
        assert_eq!(
            errors,
            [
                "<command line>: --enable: unknown category `exectue`; did you mean `execute`? \
              the known categories are read, search, write, execute, vcs, network"
            ]
        );
        let errors = messages(serve(&["Bad Name".to_owned()]).map(|(config, _)| config));
        assert!(
            errors[0].contains("invalid category \"Bad Name\""),
            "{errors:?}"
        );
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

    /// The environment of a Windows user `ann`, as Windows sets it.
    fn windows_env(name: &str) -> Option<String> {
        let value = match name {
            "WINDIR" | "SystemRoot" => r"C:\Windows",
            "ProgramFiles" | "ProgramW6432" => r"C:\Program Files",
            "ProgramFiles(x86)" => r"C:\Program Files (x86)",
            "ProgramData" => r"C:\ProgramData",
            "APPDATA" => r"C:\Users\ann\AppData\Roaming",
            "LOCALAPPDATA" => r"C:\Users\ann\AppData\Local",
            "PUBLIC" => r"C:\Users\Public",
            "TEMP" | "TMP" => r"C:\Users\ann\AppData\Local\Temp",
            _ => return None,
        };
        Some(value.to_string())
    }

    #[test]
    fn windows_folders_never_mounted_implicitly() {
        let home = r"C:\Users\ann";
        let refused = |dir: &str| refusal(Os::Windows, dir, Some(home), &windows_env);
        for dir in [
            r"C:\",
            "D:",
            r"\\?\C:\",
            r"C:\Users",
            r"c:\users\ANN",
            r"C:\Windows",
            r"C:\Windows\System32",
            r"c:/windows/system32",
            r"\\?\C:\Windows\System32",
            r"C:\Program Files\Claude",
            r"C:\Program Files (x86)\App",
            r"C:\ProgramData\x",
            r"C:\Users\ann\AppData\Roaming\Claude",
            r"C:\Users\ann\AppData\Local\AnthropicClaude\app-1.0",
            r"C:\Users\Public",
        ] {
            assert!(refused(dir).is_some(), "{dir} should be refused");
        }
        for dir in [
            r"C:\Users\ann\projects\site",
            r"D:\work",
            r"C:\data",
            r"C:\Windows-projects",
            r"C:\Users\ann\AppDataBackup",
        ] {
            assert_eq!(refused(dir), None, "{dir} should be allowed");
        }
        assert!(refused(r"C:\").unwrap().contains("drive root"));
        assert!(refused(r"C:\Users\ann").unwrap().contains("home directory"));
        // Without the environment, the usual places are still known.
        let bare = |dir: &str| refusal(Os::Windows, dir, Some(home), &|_| None);
        assert!(bare(r"C:\Program Files\Claude").is_some());
        assert!(bare(r"C:\Users\ann\AppData\Local\x").is_some());
    }

    #[test]
    fn macos_folders_never_mounted_implicitly() {
        let home = "/Users/ann";
        let refused = |dir: &str| refusal(Os::MacOs, dir, Some(home), &|_| None);
        for dir in [
            "/",
            "/Users",
            "/Users/ann",
            "/System/Library",
            "/Library/Application Support",
            "/Users/ann/Library/Application Support/Claude",
            "/Applications/Claude.app/Contents",
            "/private/tmp",
            "/Volumes/USB",
            "/usr/local",
        ] {
            assert!(refused(dir).is_some(), "{dir} should be refused");
        }
        for dir in ["/Users/ann/code/site", "/Users/Shared/x", "/opt/work"] {
            assert_eq!(refused(dir), None, "{dir} should be allowed");
        }
    }
}
