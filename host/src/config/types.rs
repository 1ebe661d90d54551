//! The validated configuration: what [`validate`](super::validate) builds
//! from `plugins.toml`, and what [`defaults`](super::defaults) builds when
//! there is no file.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use crate::limits;

/// A directory for [`Config::embedded_default`], as the user wrote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MountArg {
    /// The path, relative to the base directory or absolute.
    pub path: String,
    /// Mounted read-write (`DIR:rw`) rather than read-only.
    pub writable: bool,
}

impl std::str::FromStr for MountArg {
    type Err = String;

    /// `DIR`, `DIR:ro` or `DIR:rw`; a colon followed by anything else is part
    /// of the path.
    fn from_str(text: &str) -> Result<MountArg, String> {
        let (path, writable) = match text.rsplit_once(':') {
            Some((path, "ro")) => (path, false),
            Some((path, "rw")) => (path, true),
            _ => (text, false),
        };
        if path.is_empty() {
            return Err(format!("{text:?}: expected DIR, DIR:ro or DIR:rw"));
        }
        Ok(MountArg {
            path: path.to_owned(),
            writable,
        })
    }
}

/// A validated `plugins.toml`.
#[derive(Clone, Debug)]
pub struct Config {
    /// The file as named by the user, or `"<embedded default>"`.
    pub source: String,
    /// The enabled tool categories (`[server] categories`); default
    /// [`DEFAULT_CATEGORIES`](super::DEFAULT_CATEGORIES).
    pub categories: Vec<String>,
    /// The top-level `[limits]` with defaults applied.
    pub limits: Limits,
    /// How many tool calls may run at once, server-wide; default
    /// [`limits::DEFAULT_MAX_CONCURRENT_CALLS`].
    pub max_concurrent_calls: usize,
    /// The largest component file loaded, in bytes (`[limits]
    /// max_component_mb`); default [`limits::DEFAULT_MAX_COMPONENT_MB`] MiB.
    pub max_component_bytes: u64,
    /// How many resources clients may have the server follow (`[limits]
    /// max_subscriptions` and `max_followed_resources`).
    pub subscriptions: Subscriptions,
    /// The `[[plugin]]` entries, in file order, then the drop folders' plugins once
    /// [`with_dropins`](Config::with_dropins) has added them.
    pub plugins: Vec<PluginConfig>,
    /// The drop folders of `[server] plugin_dirs`, canonical; default none.
    pub plugin_dirs: Vec<PathBuf>,
}

/// Resource limits of one tool call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time a call may take, in milliseconds; default
    /// [`limits::DEFAULT_TIMEOUT_MS`].
    pub timeout_ms: u64,
    /// Linear memory a plugin instance may grow to, in MiB; default
    /// [`limits::DEFAULT_MEMORY_MB`], at most [`limits::MAX_MEMORY_MB`].
    pub memory_mb: u64,
    /// Size of a call's output as JSON, in bytes; default
    /// [`limits::DEFAULT_MAX_OUTPUT_BYTES`].
    pub max_output_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout_ms: limits::DEFAULT_TIMEOUT_MS,
            memory_mb: limits::DEFAULT_MEMORY_MB,
            max_output_bytes: limits::DEFAULT_MAX_OUTPUT_BYTES,
        }
    }
}

/// Caps on followed resources (`resources/subscribe`, `subscriptions/listen`),
/// set in the top-level `[limits]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Subscriptions {
    /// The most resources one connection may follow; default
    /// [`limits::DEFAULT_MAX_SUBSCRIPTIONS`].
    pub per_connection: usize,
    /// The most distinct resources the server follows at once, across
    /// connections; default [`limits::DEFAULT_MAX_FOLLOWED_RESOURCES`].
    pub distinct: usize,
}

impl Default for Subscriptions {
    fn default() -> Self {
        Subscriptions {
            per_connection: limits::DEFAULT_MAX_SUBSCRIPTIONS,
            distinct: limits::DEFAULT_MAX_FOLLOWED_RESOURCES,
        }
    }
}

/// One validated `[[plugin]]`.
#[derive(Clone, Debug)]
pub struct PluginConfig {
    /// The plugin's unique name, matching `^[a-z0-9][a-z0-9_-]{0,63}$`.
    pub name: String,
    /// Where the component comes from.
    pub source: PluginSource,
    /// Host directories the plugin may see; default none.
    pub mounts: Vec<Mount>,
    /// Names of host environment variables passed through; default none.
    pub env: Vec<String>,
    /// Hosts the plugin may send HTTP(S) requests to: `host` (the scheme's
    /// default port) or `host:port`, lowercase; default none.
    pub network: Vec<String>,
    /// The tools allowed, if restricted; `None` allows every tool in an enabled category.
    pub tools: Option<Vec<String>>,
    /// Categories enabled for this plugin's tools alone, besides `[server] categories` (its
    /// `categories`); default none.
    pub categories: Vec<String>,
    /// Values passed to the plugin, each in its string form; default empty.
    pub config: BTreeMap<String, String>,
    /// The top-level limits with this plugin's overrides applied.
    pub limits: Limits,
    /// How many of this plugin's calls may run at once (its `limits.max_concurrent_calls`),
    /// within the server-wide cap; `None`: only the server-wide cap. The builtins of a gated
    /// category default to [`limits::DEFAULT_GATED_CONCURRENT_CALLS`].
    pub max_concurrent_calls: Option<usize>,
    /// Per-tool overrides (`[[plugin.tool]]`), by tool name; default none.
    ///
    /// Whether each named tool exists is only known once the plugin is loaded.
    pub tools_overrides: BTreeMap<String, ToolOverride>,
    /// `prefix`: put before the name of each of its tools that is not renamed; default none.
    pub prefix: Option<String>,
    /// `rename` in a `[[plugin.tool]]`: the name a tool is served by instead of its own, by its
    /// own name; default none. The plugin is still called by the tool's own name.
    pub renames: BTreeMap<String, String>,
}

/// One `[[plugin.tool]]`: what a single tool of a plugin gets instead of the plugin's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolOverride {
    /// Replaces the plugin's mounts for this tool, when set.
    pub mounts: Option<Vec<Mount>>,
    /// The plugin's limits with this tool's overrides applied.
    pub limits: Limits,
}

impl Config {
    /// The largest `memory_mb` any plugin or tool is given.
    pub fn largest_memory_mb(&self) -> u64 {
        self.plugins
            .iter()
            .flat_map(|plugin| {
                std::iter::once(plugin.limits.memory_mb).chain(
                    plugin
                        .tools_overrides
                        .values()
                        .map(|tool| tool.limits.memory_mb),
                )
            })
            .max()
            .unwrap_or(Limits::default().memory_mb)
    }
}

impl PluginConfig {
    /// The mounts a tool gets: its override, or the plugin's.
    pub fn mounts_for(&self, tool: &str) -> &[Mount] {
        self.tools_overrides
            .get(tool)
            .and_then(|o| o.mounts.as_deref())
            .unwrap_or(&self.mounts)
    }

    /// The name tool `tool` (its own name) is served by: its `rename`, or
    /// itself with the plugin's `prefix`.
    pub fn served_name(&self, tool: &str) -> String {
        match self.renames.get(tool) {
            Some(name) => name.clone(),
            None => format!("{}{tool}", self.prefix.as_deref().unwrap_or_default()),
        }
    }

    /// Whether `category` is enabled for this plugin's tools: server-wide (`server`, the
    /// configuration's categories) or by the plugin's own `categories`.
    pub fn enables(&self, server: &[String], category: &str) -> bool {
        server.iter().chain(&self.categories).any(|c| c == category)
    }

    /// The limits a tool gets: its override, or the plugin's.
    pub fn limits_for(&self, tool: &str) -> Limits {
        self.tools_overrides
            .get(tool)
            .map_or(self.limits, |o| o.limits)
    }
}

/// Where a plugin's component comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PluginSource {
    /// A component compiled into the binary (`path = "builtin:NAME"`), by name.
    Builtin(String),
    /// A component file, as an absolute, canonical path.
    File(PathBuf),
    /// A component in an OCI registry (`path = "oci://..."`), pulled into the cache at load.
    Oci(OciSource),
}

/// A `[[plugin]]` whose `path` is `oci://REGISTRY/REPOSITORY[:TAG][@sha256:DIGEST]`, with the
/// table's registry keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OciSource {
    /// Where the component is.
    pub reference: OciReference,
    /// `allow_unpinned = true`: a tag without a digest is resolved at each load; default false.
    pub allow_unpinned: bool,
    /// `verify = { key = "..." }`: the cosign public key (PEM) whose signature the manifest must
    /// carry, as an absolute path; default none (no signature checked).
    pub verify_key: Option<PathBuf>,
    /// `insecure = true`: plain HTTP to a registry that is not on loopback; default false.
    pub insecure: bool,
    /// `auth = { ... }`: credentials from environment variables; default none (the Docker
    /// config file, else anonymous).
    pub auth: Option<OciAuth>,
}

/// A registry reference: `REGISTRY/REPOSITORY[:TAG][@sha256:DIGEST]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OciReference {
    /// The registry's host, with its port if written (`ghcr.io`, `localhost:5000`).
    pub registry: String,
    /// The repository path (`org/plugin`).
    pub repository: String,
    /// The tag, if written.
    pub tag: Option<String>,
    /// The manifest digest, `sha256:` and 64 lowercase hex digits, if written.
    pub digest: Option<String>,
}

/// Registry credentials read from the environment variables a `[[plugin]]` names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OciAuth {
    /// `auth = { username_env = "U", password_env = "P" }`: HTTP basic credentials (also used to
    /// ask the registry's token service).
    Basic {
        /// The variable holding the user name.
        username_env: String,
        /// The variable holding the password or access token.
        password_env: String,
    },
    /// `auth = { token_env = "T" }`: a bearer token sent as is.
    Token {
        /// The variable holding the token.
        token_env: String,
    },
}

/// A host directory made visible to a plugin, at the same path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mount {
    /// The canonical host path (symlinks and `..` resolved).
    pub host: PathBuf,
    /// Whether the plugin may write (`mode = "rw"`) or only read (`mode = "ro"`).
    pub writable: bool,
}

/// One problem in a configuration file.
///
/// Displays as `{file}: {key}: {message}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The file as named by the user.
    pub file: String,
    /// The key path, e.g. `plugin[1] (fs).mounts[0].mode`; for a problem with the file as a whole,
    /// `(file)` when it cannot be read and `line L, column C` (or `(syntax)`) when it is not TOML.
    pub key: String,
    /// What is wrong, showing values and paths as written in the file.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.file, self.key, self.message)
    }
}

impl std::error::Error for ConfigError {}
