//! `plugins.toml`: parsing and validation.
//!
//! [`Config`] is the validated file: the enabled categories, the server-wide [`Limits`] and one
//! [`PluginConfig`] per `[[plugin]]`, whose [`PluginSource`] and [`Mount`]s are already resolved
//! against the config file's directory (mounts canonicalised, so the sandbox sees the real
//! directory at its real path). A plugin's `[[plugin.tool]]` entries become its
//! [`PluginConfig::tools_overrides`]: a [`ToolOverride`] per tool name, whose mounts replace the
//! plugin's and whose limits are layered over them (server, then plugin, then tool); ask
//! [`PluginConfig::mounts_for`] and [`PluginConfig::limits_for`] rather than reading the fields.
//!
//! The file is parsed into an untyped [`toml::Table`] and walked by hand rather than deserialised
//! into serde types, so that one pass reports *every* problem (unknown keys, wrong types, bad
//! values, missing files) as a [`ConfigError`] naming the file, the key path
//! (`plugin[1] (fs).mounts[0].host`) and the reason. Messages show values and paths as written in
//! the file; a relative path that does not resolve also shows where it led.
//!
//! Errors are reported in a fixed order: within each table, unknown keys first (sorted), then the
//! known keys in the order the format documents them.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use toml::{Table, Value};

/// The categories enabled when `[server] categories` is absent.
pub const DEFAULT_CATEGORIES: &[&str] = &["read", "search", "vcs"];

/// The categories of the contract; a plugin may declare others.
pub const CONTRACT_CATEGORIES: &[&str] = &["read", "search", "write", "execute", "vcs", "network"];

/// What to say of a category that is none of `known`: the known ones, and
/// the one it is likely a misspelling of.
pub fn unknown_category(category: &str, known: &[&str]) -> String {
    let hint = known
        .iter()
        .find(|known| edit_distance(known, category) <= 2)
        .map(|known| format!("did you mean `{known}`? "))
        .unwrap_or_default();
    format!(
        "unknown category `{category}`; {hint}the known categories are {}",
        known.join(", ")
    )
}

/// The Levenshtein distance between two short strings.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

/// The `source` of [`Config::embedded_default`].
const EMBEDDED_SOURCE: &str = "<embedded default>";

/// Prefix of a `path` that names a plugin compiled into the binary.
const BUILTIN_PREFIX: &str = "builtin:";

/// The default of `max_concurrent_calls`.
const DEFAULT_MAX_CONCURRENT_CALLS: usize = 16;

/// The largest accepted `memory_mb`.
const MAX_MEMORY_MB: u64 = 4096;

const TOP_KEYS: &[&str] = &["server", "limits", "plugin"];
const SERVER_KEYS: &[&str] = &["categories"];
const LIMIT_KEYS: &[&str] = &["timeout_ms", "memory_mb", "max_output_bytes"];
const SERVER_LIMIT_KEYS: &[&str] = &[
    "timeout_ms",
    "memory_mb",
    "max_output_bytes",
    "max_concurrent_calls",
];
const PLUGIN_KEYS: &[&str] = &[
    "name", "path", "mounts", "env", "network", "tools", "config", "limits", "tool",
];
const TOOL_KEYS: &[&str] = &["name", "mounts", "limits"];
const MOUNT_KEYS: &[&str] = &["host", "mode"];

/// A plugin compiled into the binary, as the configuration sees it.
#[derive(Clone, Copy, Debug)]
pub struct KnownBuiltin<'a> {
    /// The name in `path = "builtin:NAME"`.
    pub name: &'a str,
    /// The keys its `config` table may have; any other is an error.
    pub config_keys: &'a [&'a str],
}

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
    /// The enabled tool categories (`[server] categories`); default [`DEFAULT_CATEGORIES`].
    pub categories: Vec<String>,
    /// The top-level `[limits]` with defaults applied.
    pub limits: Limits,
    /// How many tool calls may run at once, server-wide; default 16.
    pub max_concurrent_calls: usize,
    /// The `[[plugin]]` entries, in file order.
    pub plugins: Vec<PluginConfig>,
}

/// Resource limits of one tool call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time a call may take, in milliseconds; default 30000.
    pub timeout_ms: u64,
    /// Linear memory a plugin instance may grow to, in MiB; default 256, at most 4096.
    pub memory_mb: u64,
    /// Size of a call's output, in bytes; default 1048576 (1 MiB).
    pub max_output_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout_ms: 30_000,
            memory_mb: 256,
            max_output_bytes: 1_048_576,
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
    /// Values passed to the plugin, each in its string form; default empty.
    pub config: BTreeMap<String, String>,
    /// The top-level limits with this plugin's overrides applied.
    pub limits: Limits,
    /// Per-tool overrides (`[[plugin.tool]]`), by tool name; default none.
    ///
    /// Whether each named tool exists is only known once the plugin is loaded.
    pub tools_overrides: BTreeMap<String, ToolOverride>,
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

impl Config {
    /// Reads and validates the file at `path`.
    ///
    /// `path` is shown as given in messages; relative paths in the file resolve against its parent
    /// directory (or `.` if it has none).
    pub fn load(path: &Path, builtins: &[KnownBuiltin]) -> Result<Config, Vec<ConfigError>> {
        let source = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| {
            vec![ConfigError {
                file: source.clone(),
                key: "(file)".to_owned(),
                message: format!("cannot read file: {e}"),
            }]
        })?;
        Config::parse(&text, &source, base_dir(path), builtins)
    }

    /// Validates `text`; `source` names it in messages; relative paths resolve against `base_dir`.
    ///
    /// `builtins` are the plugins accepted in `path = "builtin:NAME"`.
    pub fn parse(
        text: &str,
        source: &str,
        base_dir: &Path,
        builtins: &[KnownBuiltin],
    ) -> Result<Config, Vec<ConfigError>> {
        let table = text
            .parse::<Table>()
            .map_err(|e| vec![syntax_error(source, text, &e)])?;
        Validator::new(source, base_dir, builtins).config(&table)
    }

    /// The configuration used when no file is given and `./plugins.toml` does not exist.
    ///
    /// One plugin per builtin (plugin name = builtin name, `path = "builtin:NAME"`), each with
    /// `mounts` (resolved against `base_dir`), default categories and limits, plus the `write`
    /// category when a mount is read-write. `source` is `"<embedded default>"`.
    pub fn embedded_default(
        base_dir: &Path,
        mounts: &[MountArg],
        builtins: &[KnownBuiltin],
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
        let mut config = Validator::new(EMBEDDED_SOURCE, base_dir, builtins).config(&root)?;
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

/// The directory relative paths in the file at `path` resolve against: its parent, or `.`.
fn base_dir(path: &Path) -> &Path {
    match path.parent() {
        // A bare file name has an empty parent, which must mean ".".
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// Turns the toml crate's parse error into one single-line error with its line and column.
fn syntax_error(source: &str, text: &str, error: &toml::de::Error) -> ConfigError {
    // The offending text helps when the parser's message does not name it ("duplicate key").
    let mut at = String::new();
    let key = match error.span() {
        Some(span) => {
            if let Some(snippet) = text.get(span.clone())
                && !snippet.trim().is_empty()
                && !snippet.contains('\n')
                && snippet.chars().count() <= 40
            {
                at = format!(" (at `{}`)", snippet.trim());
            }
            let before = text.get(..span.start).unwrap_or(text);
            let line = before.matches('\n').count() + 1;
            let line_start = before.rfind('\n').map_or(0, |i| i + 1);
            let column = before[line_start..].chars().count() + 1;
            format!("line {line}, column {column}")
        }
        None => "(syntax)".to_owned(),
    };
    let message = error
        .message()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    ConfigError {
        file: source.to_owned(),
        key,
        message: format!("invalid TOML: {message}{at}"),
    }
}

/// Walks the parsed file, collecting every error.
///
/// Each check records its errors and returns a fallback, so the walk always goes on; the built
/// [`Config`] is only returned when no error was recorded.
struct Validator<'a> {
    file: &'a str,
    base_dir: &'a Path,
    builtins: &'a [KnownBuiltin<'a>],
    errors: Vec<ConfigError>,
}

impl<'a> Validator<'a> {
    fn new(file: &'a str, base_dir: &'a Path, builtins: &'a [KnownBuiltin<'a>]) -> Self {
        Validator {
            file,
            base_dir,
            builtins,
            errors: Vec::new(),
        }
    }

    fn error(&mut self, key: impl Into<String>, message: impl Into<String>) {
        self.errors.push(ConfigError {
            file: self.file.to_owned(),
            key: key.into(),
            message: message.into(),
        });
    }

    fn config(mut self, root: &Table) -> Result<Config, Vec<ConfigError>> {
        self.unknown_keys(root, "", TOP_KEYS, &[]);

        let categories = match root.get("server").and_then(|v| self.table(v, "server")) {
            Some(server) => self.server(server),
            None => DEFAULT_CATEGORIES.iter().map(|c| (*c).to_owned()).collect(),
        };

        let mut max_concurrent_calls = DEFAULT_MAX_CONCURRENT_CALLS;
        let mut limits = Limits::default();
        if let Some(table) = root.get("limits").and_then(|v| self.table(v, "limits")) {
            limits = self.limits(table, "limits", limits);
            if let Some(value) = table.get("max_concurrent_calls") {
                let key = "limits.max_concurrent_calls";
                if let Some(n) = self.integer(value, key, 1, None) {
                    match usize::try_from(n) {
                        Ok(n) => max_concurrent_calls = n,
                        Err(_) => self.error(key, format!("{n} is too large")),
                    }
                }
            }
        }

        let mut plugins = Vec::new();
        if let Some(value) = root.get("plugin") {
            match value {
                Value::Array(items) => {
                    let mut seen = BTreeMap::new();
                    for (index, item) in items.iter().enumerate() {
                        if let Some(plugin) = self.plugin(index, item, limits, &mut seen) {
                            plugins.push(plugin);
                        }
                    }
                }
                other => self.error(
                    "plugin",
                    format!(
                        "expected an array of tables (`[[plugin]]`), found {}",
                        describe(other)
                    ),
                ),
            }
        }

        // With only builtin plugins, every category that can exist is known
        // now: a misspelt one is an error here. (Component files may declare
        // their own; the toolbox checks those once they are loaded.)
        let only_builtins = plugins
            .iter()
            .all(|plugin: &PluginConfig| matches!(plugin.source, PluginSource::Builtin(_)));
        if only_builtins && root.get("plugin").is_some() {
            for (index, category) in categories.iter().enumerate() {
                if !CONTRACT_CATEGORIES.contains(&category.as_str()) {
                    self.error(
                        format!("server.categories[{index}]"),
                        unknown_category(category, CONTRACT_CATEGORIES),
                    );
                }
            }
        }

        if self.errors.is_empty() {
            Ok(Config {
                source: self.file.to_owned(),
                categories,
                limits,
                max_concurrent_calls,
                plugins,
            })
        } else {
            Err(self.errors)
        }
    }

    fn server(&mut self, server: &Table) -> Vec<String> {
        self.unknown_keys(server, "server", SERVER_KEYS, &[]);
        match server.get("categories") {
            Some(value) => self.string_list(value, "server.categories", "category", |c| {
                (!is_category(c)).then(|| {
                    format!(
                        "invalid category {c:?}: must be 1 to 32 characters of a-z, 0-9 and `-`, \
                         starting with a letter"
                    )
                })
            }),
            None => DEFAULT_CATEGORIES.iter().map(|c| (*c).to_owned()).collect(),
        }
    }

    /// Applies the limits in `table` (at key path `path`) over `base`.
    ///
    /// `max_concurrent_calls` is accepted only in the top-level `[limits]` (and read by the caller).
    fn limits(&mut self, table: &Table, path: &str, base: Limits) -> Limits {
        if path == "limits" {
            self.unknown_keys(table, path, SERVER_LIMIT_KEYS, &[]);
        } else {
            self.unknown_keys(
                table,
                path,
                LIMIT_KEYS,
                &[(
                    "max_concurrent_calls",
                    "max_concurrent_calls is server-wide: set it in the top-level [limits]",
                )],
            );
        }
        let mut limits = base;
        let fields: [(&str, &mut u64, Option<u64>); 3] = [
            ("timeout_ms", &mut limits.timeout_ms, None),
            ("memory_mb", &mut limits.memory_mb, Some(MAX_MEMORY_MB)),
            ("max_output_bytes", &mut limits.max_output_bytes, None),
        ];
        for (name, field, max) in fields {
            if let Some(value) = table.get(name)
                && let Some(n) = self.integer(value, &join(path, name), 1, max)
            {
                *field = n;
            }
        }
        limits
    }

    /// A plugin's or a tool's `limits` (at key path `path`), which must be a table, over `base`.
    fn limits_table(&mut self, value: &Value, path: &str, base: Limits) -> Limits {
        match self.table(value, path) {
            Some(table) => self.limits(table, path, base),
            None => base,
        }
    }

    fn plugin(
        &mut self,
        index: usize,
        value: &Value,
        base_limits: Limits,
        seen: &mut BTreeMap<String, String>,
    ) -> Option<PluginConfig> {
        let position = format!("plugin[{index}]");
        let table = self.table(value, &position)?;

        let name = match table.get("name") {
            None => {
                self.error(&position, "missing required key `name`");
                None
            }
            Some(value) => self
                .string(value, &join(&position, "name"))
                .and_then(|name| {
                    if is_plugin_name(name) {
                        Some(name.to_owned())
                    } else {
                        self.error(
                        join(&position, "name"),
                        format!(
                            "invalid plugin name {name:?}: must be 1 to 64 characters of a-z, 0-9, \
                             `_` and `-`, starting with a letter or digit"
                        ),
                    );
                        None
                    }
                }),
        };
        // From here on, the name (when valid) helps the reader find the plugin.
        let prefix = match &name {
            Some(name) => format!("{position} ({name})"),
            None => position.clone(),
        };
        if let Some(name) = &name {
            match seen.get(name) {
                Some(first) => self.error(
                    join(&prefix, "name"),
                    format!("duplicate plugin name {name:?}: already used by {first}"),
                ),
                None => {
                    seen.insert(name.clone(), position.clone());
                }
            }
        }

        self.unknown_keys(table, &prefix, PLUGIN_KEYS, &[]);

        let source = match table.get("path") {
            None => {
                self.error(&prefix, "missing required key `path`");
                None
            }
            Some(value) => self.plugin_source(value, &join(&prefix, "path")),
        };

        let mounts = match table.get("mounts") {
            Some(value) => self.mounts(value, &join(&prefix, "mounts")),
            None => Vec::new(),
        };

        let env = match table.get("env") {
            Some(value) => {
                self.string_list(value, &join(&prefix, "env"), "environment variable", |v| {
                    (!is_env_name(v)).then(|| {
                    format!(
                        "invalid environment variable name {v:?}: must be letters, digits and `_`, \
                         not starting with a digit"
                    )
                })
                })
            }
            None => Vec::new(),
        };

        let network = match table.get("network") {
            Some(value) => self.string_list(value, &join(&prefix, "network"), "host", |v| {
                network_entry_problem(v)
            }),
            None => Vec::new(),
        };

        let tools = table.get("tools").map(|value| {
            let path = join(&prefix, "tools");
            let tools = self.string_list(value, &path, "tool", |t| {
                t.is_empty()
                    .then(|| "tool name must not be empty".to_owned())
            });
            if matches!(value, Value::Array(a) if a.is_empty()) {
                self.error(
                    path,
                    "empty allow-list would allow no tool: list tools, or remove `tools` to allow \
                     every tool in an enabled category",
                );
            }
            tools
        });

        let config = match table.get("config") {
            Some(value) => self.plugin_values(value, &join(&prefix, "config")),
            None => BTreeMap::new(),
        };
        // A builtin's keys are known here; a component file's are not.
        if let Some(PluginSource::Builtin(builtin)) = &source
            && let Some(known) = self.builtins.iter().find(|known| known.name == builtin)
        {
            for key in config.keys() {
                if !known.config_keys.contains(&key.as_str()) {
                    let expected = if known.config_keys.is_empty() {
                        "it reads none".to_owned()
                    } else {
                        format!("expected one of: {}", known.config_keys.join(", "))
                    };
                    self.error(
                        join(&join(&prefix, "config"), key),
                        format!("unknown key for builtin:{builtin} ({expected})"),
                    );
                }
            }
        }

        let limits = match table.get("limits") {
            Some(value) => self.limits_table(value, &join(&prefix, "limits"), base_limits),
            None => base_limits,
        };

        let tools_overrides = match table.get("tool") {
            Some(value) => self.tool_overrides(value, &join(&prefix, "tool"), limits),
            None => BTreeMap::new(),
        };

        Some(PluginConfig {
            name: name?,
            source: source?,
            mounts,
            env,
            network,
            tools,
            config,
            limits,
            tools_overrides,
        })
    }

    /// The `[[plugin.tool]]` entries at key path `path`, by name; `base_limits` are the plugin's.
    fn tool_overrides(
        &mut self,
        value: &Value,
        path: &str,
        base_limits: Limits,
    ) -> BTreeMap<String, ToolOverride> {
        let mut overrides = BTreeMap::new();
        let Value::Array(items) = value else {
            self.error(
                path,
                format!(
                    "expected an array of tables (`[[plugin.tool]]`), found {}",
                    describe(value)
                ),
            );
            return overrides;
        };
        // The first position of each name, for duplicate messages.
        let mut seen = BTreeMap::new();
        for (index, item) in items.iter().enumerate() {
            let position = format!("tool[{index}]");
            let key = format!("{path}[{index}]");
            let table = match item {
                Value::Table(table) => table,
                // `tool` for `tools` is an easy slip; say which one takes names.
                Value::String(_) => {
                    self.error(
                        key,
                        format!(
                            "expected a table, found {}: an allow-list of tool names is `tools`",
                            describe(item)
                        ),
                    );
                    continue;
                }
                other => {
                    self.error(key, format!("expected a table, found {}", describe(other)));
                    continue;
                }
            };
            let name = match table.get("name") {
                None => {
                    self.error(&key, "missing required key `name`");
                    None
                }
                Some(value) => self.string(value, &join(&key, "name")).and_then(|name| {
                    if is_tool_name(name) {
                        Some(name.to_owned())
                    } else {
                        self.error(
                            join(&key, "name"),
                            format!(
                                "invalid tool name {name:?}: must be 1 to 128 characters of A-Z, \
                                 a-z, 0-9, `_`, `-` and `.`"
                            ),
                        );
                        None
                    }
                }),
            };
            let prefix = match &name {
                Some(name) => format!("{key} ({name})"),
                None => key.clone(),
            };
            let mut duplicate = false;
            if let Some(name) = &name {
                match seen.get(name) {
                    Some(first) => {
                        duplicate = true;
                        self.error(
                            join(&prefix, "name"),
                            format!("duplicate tool name {name:?}: already used by {first}"),
                        );
                    }
                    None => {
                        seen.insert(name.clone(), position);
                    }
                }
            }

            self.unknown_keys(table, &prefix, TOOL_KEYS, &[]);

            let mounts = table
                .get("mounts")
                .map(|value| self.mounts(value, &join(&prefix, "mounts")));

            let limits = match table.get("limits") {
                Some(value) => self.limits_table(value, &join(&prefix, "limits"), base_limits),
                None => base_limits,
            };

            if let Some(name) = name
                && !duplicate
            {
                overrides.insert(name, ToolOverride { mounts, limits });
            }
        }
        overrides
    }

    /// The array of mount tables at key path `path`; the valid ones, in order.
    fn mounts(&mut self, value: &Value, path: &str) -> Vec<Mount> {
        let mut mounts = Vec::new();
        if let Some(items) = self.array(value, path, "an array of tables") {
            for (i, item) in items.iter().enumerate() {
                if let Some(mount) = self.mount(item, &format!("{path}[{i}]")) {
                    mounts.push(mount);
                }
            }
        }
        mounts
    }

    fn plugin_source(&mut self, value: &Value, key: &str) -> Option<PluginSource> {
        let written = self.string(value, key)?;
        if let Some(builtin) = written.strip_prefix(BUILTIN_PREFIX) {
            if self.builtins.iter().any(|known| known.name == builtin) {
                return Some(PluginSource::Builtin(builtin.to_owned()));
            }
            let available = if self.builtins.is_empty() {
                "this build has none".to_owned()
            } else {
                let names: Vec<&str> = self.builtins.iter().map(|known| known.name).collect();
                format!("available: {}", names.join(", "))
            };
            self.error(key, format!("unknown builtin {builtin:?} ({available})"));
            return None;
        }
        if written.is_empty() {
            self.error(key, "must not be empty");
            return None;
        }
        match std::fs::canonicalize(self.base_dir.join(written)) {
            Ok(path) if path.is_dir() => {
                self.error(
                    key,
                    format!("{written:?}: is a directory, expected a component file"),
                );
                None
            }
            Ok(path) => Some(PluginSource::File(path)),
            Err(e) => {
                self.error(key, format!("{written:?}: {}", io_reason(&e, "file")));
                None
            }
        }
    }

    fn mount(&mut self, value: &Value, path: &str) -> Option<Mount> {
        let table = self.table(value, path)?;
        self.unknown_keys(table, path, MOUNT_KEYS, &[]);

        let host = match table.get("host") {
            None => {
                self.error(path, "missing required key `host`");
                None
            }
            Some(value) => {
                let key = join(path, "host");
                self.string(value, &key).and_then(|written| {
                    if written.is_empty() {
                        self.error(key, "must not be empty");
                        return None;
                    }
                    let joined = self.base_dir.join(written);
                    // Say where a relative path led, so a mistake is plain.
                    let at = if Path::new(written).is_absolute() {
                        String::new()
                    } else {
                        format!(" (resolved to {})", resolved(&joined).display())
                    };
                    match std::fs::canonicalize(&joined) {
                        Ok(host) if host.is_dir() => Some(host),
                        Ok(_) => {
                            self.error(key, format!("{written:?}{at}: not a directory"));
                            None
                        }
                        Err(e) => {
                            let reason = io_reason(&e, "directory");
                            self.error(key, format!("{written:?}{at}: {reason}"));
                            None
                        }
                    }
                })
            }
        };

        let writable = match table.get("mode") {
            None => {
                self.error(
                    path,
                    r#"missing required key `mode` (expected "ro" or "rw")"#,
                );
                None
            }
            Some(value) => {
                let key = join(path, "mode");
                match self.string(value, &key) {
                    Some("ro") => Some(false),
                    Some("rw") => Some(true),
                    Some(other) => {
                        self.error(
                            key,
                            format!(r#"invalid mode {other:?}: expected "ro" or "rw""#),
                        );
                        None
                    }
                    None => None,
                }
            }
        };

        Some(Mount {
            host: host?,
            writable: writable?,
        })
    }

    fn plugin_values(&mut self, value: &Value, path: &str) -> BTreeMap<String, String> {
        let mut values = BTreeMap::new();
        let Some(table) = self.table(value, path) else {
            return values;
        };
        let mut keys: Vec<&String> = table.keys().collect();
        keys.sort();
        for key in keys {
            let Some(value) = table.get(key) else {
                continue;
            };
            let text = match value {
                Value::String(s) => s.clone(),
                Value::Integer(i) => i.to_string(),
                // The TOML form keeps a float recognisable as one (`1.0`, not `1`).
                Value::Float(_) => value.to_string(),
                Value::Boolean(b) => b.to_string(),
                other => {
                    self.error(
                        join(path, key),
                        format!(
                            "expected a string, integer, float or boolean, found {}",
                            describe(other)
                        ),
                    );
                    continue;
                }
            };
            values.insert(key.clone(), text);
        }
        values
    }

    /// Reports each key of `table` not in `known`; `special` gives a message for some of them.
    fn unknown_keys(
        &mut self,
        table: &Table,
        path: &str,
        known: &[&str],
        special: &[(&str, &str)],
    ) {
        let mut unknown: Vec<&String> = table
            .keys()
            .filter(|k| !known.contains(&k.as_str()))
            .collect();
        unknown.sort();
        for key in unknown {
            let message = match special.iter().find(|(k, _)| k == key) {
                Some((_, message)) => (*message).to_owned(),
                None => format!("unknown key (expected one of: {})", known.join(", ")),
            };
            self.error(join(path, key), message);
        }
    }

    /// An array of unique strings, each checked by `invalid` (which returns the reason if any).
    fn string_list(
        &mut self,
        value: &Value,
        path: &str,
        what: &str,
        invalid: impl Fn(&str) -> Option<String>,
    ) -> Vec<String> {
        let mut list = Vec::new();
        let Some(items) = self.array(value, path, "an array of strings") else {
            return list;
        };
        let mut seen = BTreeSet::new();
        for (i, item) in items.iter().enumerate() {
            let key = format!("{path}[{i}]");
            let Some(s) = self.string(item, &key) else {
                continue;
            };
            if let Some(reason) = invalid(s) {
                self.error(key, reason);
            } else if !seen.insert(s) {
                self.error(key, format!("duplicate {what} {s:?}"));
            } else {
                list.push(s.to_owned());
            }
        }
        list
    }

    fn table<'v>(&mut self, value: &'v Value, key: &str) -> Option<&'v Table> {
        match value {
            Value::Table(t) => Some(t),
            other => {
                self.error(key, format!("expected a table, found {}", describe(other)));
                None
            }
        }
    }

    fn array<'v>(&mut self, value: &'v Value, key: &str, expected: &str) -> Option<&'v [Value]> {
        match value {
            Value::Array(a) => Some(a),
            other => {
                self.error(
                    key,
                    format!("expected {expected}, found {}", describe(other)),
                );
                None
            }
        }
    }

    fn string<'v>(&mut self, value: &'v Value, key: &str) -> Option<&'v str> {
        match value {
            Value::String(s) => Some(s),
            other => {
                self.error(key, format!("expected a string, found {}", describe(other)));
                None
            }
        }
    }

    fn integer(&mut self, value: &Value, key: &str, min: u64, max: Option<u64>) -> Option<u64> {
        let Value::Integer(n) = value else {
            self.error(
                key,
                format!("expected an integer, found {}", describe(value)),
            );
            return None;
        };
        let n = *n;
        match u64::try_from(n) {
            Ok(v) if v < min => self.error(key, format!("must be at least {min}, found {n}")),
            Err(_) => self.error(key, format!("must be at least {min}, found {n}")),
            Ok(v) => match max {
                Some(max) if v > max => {
                    self.error(key, format!("must be at most {max}, found {n}"));
                }
                _ => return Some(v),
            },
        }
        None
    }
}

/// `path.key`, quoting `key` when it is not a bare TOML key.
fn join(path: &str, key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let key = if bare {
        key.to_owned()
    } else {
        format!("{key:?}")
    };
    if path.is_empty() {
        key
    } else {
        format!("{path}.{key}")
    }
}

/// Where `path` leads: its longest existing ancestor canonicalised (symlinks and `..`
/// resolved), then the rest as written.
fn resolved(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut existing = path;
    loop {
        if let Ok(canonical) = std::fs::canonicalize(existing) {
            return rest
                .iter()
                .rev()
                .fold(canonical, |path, part| path.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name);
                existing = parent;
            }
            _ => return std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()),
        }
    }
}

/// A value's type, with the value itself when it is short (a scalar), for "found ..." messages.
fn describe(value: &Value) -> String {
    match value {
        Value::Array(_) | Value::Table(_) => value.type_str().to_owned(),
        scalar => format!("{} {scalar}", value.type_str()),
    }
}

/// Why a path could not be resolved; `what` is `file` or `directory`.
fn io_reason(error: &io::Error, what: &str) -> String {
    match error.kind() {
        io::ErrorKind::NotFound => format!("no such {what}"),
        io::ErrorKind::NotADirectory => "a component of the path is not a directory".to_owned(),
        io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => error.to_string(),
    }
}

/// `^[a-z0-9][a-z0-9_-]{0,63}$`
fn is_plugin_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && s.len() <= 64
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

/// `^[A-Za-z0-9_.-]{1,128}$`, the MCP tool name pattern.
fn is_tool_name(s: &str) -> bool {
    (1..=128).contains(&s.len())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// `^[a-z][a-z0-9-]{0,31}$`
fn is_category(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && s.len() <= 32
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// `^[A-Za-z_][A-Za-z0-9_]*$`
/// Splits `host:port`, `[v6]:port`, `host` or `[v6]`.
pub fn split_host_port(entry: &str) -> (&str, Option<&str>) {
    if entry.starts_with('[') {
        if let Some(end) = entry.find(']') {
            let (host, rest) = entry.split_at(end + 1);
            if rest.is_empty() {
                return (host, None);
            }
            if let Some(port) = rest.strip_prefix(':') {
                return (host, Some(port));
            }
        }
        return (entry, None);
    }
    match entry.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (entry, None),
    }
}

/// Why a `network` entry is not `host` or `host:port`, if it is not.
///
/// Hosts are exact names (no wildcards): lowercase letters, digits, `-` and
/// `.`, an IPv4 address, or an IPv6 address in brackets.
fn network_entry_problem(entry: &str) -> Option<String> {
    if entry.contains('/') {
        let host = entry.split("://").nth(1).unwrap_or(entry);
        let host = host.split('/').next().unwrap_or(host);
        return Some(format!(
            "{entry:?} is a URL: give only the host (and port), e.g. {host:?}"
        ));
    }
    let (host, port) = split_host_port(entry);
    if let Some(port) = port
        && !matches!(port.parse::<u16>(), Ok(p) if p > 0)
    {
        return Some(format!("invalid port in {entry:?}: expected 1-65535"));
    }
    let valid_host = if let Some(v6) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        v6.parse::<std::net::Ipv6Addr>().is_ok()
    } else {
        !host.is_empty()
            && host.len() <= 253
            && host
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
            && !host.starts_with(['.', '-'])
            && !host.ends_with(['.', '-'])
    };
    (!valid_host).then(|| {
        format!(
            "invalid host {entry:?}: expected an exact host name (lowercase, no scheme, path or \
             wildcard), optionally with `:port`, e.g. \"export.arxiv.org\" or \"127.0.0.1:8080\""
        )
    })
}

fn is_env_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
// A failed unwrap is a failed test; the workspace lint is for non-test code.
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const BUILTINS: &[KnownBuiltin<'static>] = &[KnownBuiltin {
        name: "fs",
        config_keys: &["max_file_bytes", "max_diff_bytes"],
    }];

    fn parse_in(dir: &Path, text: &str) -> Result<Config, Vec<ConfigError>> {
        Config::parse(text, "plugins.toml", dir, BUILTINS)
    }

    fn messages(result: Result<Config, Vec<ConfigError>>) -> Vec<String> {
        match result {
            Ok(config) => panic!("expected errors, got {config:?}"),
            Err(errors) => errors.iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn empty_file_gets_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let config = parse_in(dir.path(), "").unwrap();
        assert_eq!(config.source, "plugins.toml");
        assert_eq!(config.categories, DEFAULT_CATEGORIES);
        assert_eq!(config.limits, Limits::default());
        assert_eq!(
            config.limits,
            Limits {
                timeout_ms: 30_000,
                memory_mb: 256,
                max_output_bytes: 1_048_576
            }
        );
        assert_eq!(config.max_concurrent_calls, 16);
        assert!(config.plugins.is_empty());
    }

    #[test]
    fn plugin_defaults_and_overrides() {
        let dir = tempfile::tempdir().unwrap();
        // A component file may declare its own categories, so `my-category`
        // is left for the toolbox to check once the plugins are loaded.
        std::fs::write(dir.path().join("own.wasm"), b"\0asm").unwrap();
        let text = r#"
            [server]
            categories = ["read", "write", "my-category"]

            [[plugin]]
            name = "own"
            path = "own.wasm"

            [limits]
            timeout_ms = 1000
            max_concurrent_calls = 4

            [[plugin]]
            name = "plain"
            path = "builtin:fs"

            [[plugin]]
            name = "tuned"
            path = "builtin:fs"
            env = ["HOME", "_X1"]
            tools = ["read_file"]
            limits = { memory_mb = 4096, max_output_bytes = 10 }
        "#;
        let config = parse_in(dir.path(), text).unwrap();
        assert_eq!(config.categories, ["read", "write", "my-category"]);
        assert_eq!(config.max_concurrent_calls, 4);
        let top = Limits {
            timeout_ms: 1000,
            ..Limits::default()
        };
        assert_eq!(config.limits, top);

        let plain = &config.plugins[1];
        assert_eq!(plain.name, "plain");
        assert_eq!(plain.source, PluginSource::Builtin("fs".to_owned()));
        assert!(plain.mounts.is_empty());
        assert!(plain.env.is_empty());
        assert_eq!(plain.tools, None);
        assert!(plain.config.is_empty());
        assert_eq!(plain.limits, top);
        assert!(plain.tools_overrides.is_empty());

        let tuned = &config.plugins[2];
        assert_eq!(tuned.env, ["HOME", "_X1"]);
        assert_eq!(tuned.tools, Some(vec!["read_file".to_owned()]));
        assert_eq!(
            tuned.limits,
            Limits {
                timeout_ms: 1000,
                memory_mb: 4096,
                max_output_bytes: 10
            }
        );
    }

    #[test]
    fn tool_overrides_layer_over_the_plugin() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("out")).unwrap();
        let text = r#"
            [limits]
            timeout_ms = 1000

            [[plugin]]
            name = "fs"
            path = "builtin:fs"
            mounts = [{ host = ".", mode = "ro" }]
            limits = { memory_mb = 128 }

            [[plugin.tool]]
            name = "write_file"
            mounts = [{ host = "./out", mode = "rw" }]
            limits = { max_output_bytes = 10 }

            [[plugin.tool]]
            name = "slow.search"
            limits = { timeout_ms = 9000, memory_mb = 512 }

            [[plugin.tool]]
            name = "Isolated-1"
            mounts = []
        "#;
        let config = parse_in(dir.path(), text).unwrap();
        let fs = &config.plugins[0];
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let out = root.join("out");
        let plugin_mounts = [Mount {
            host: root,
            writable: false,
        }];
        let plugin_limits = Limits {
            timeout_ms: 1000,
            memory_mb: 128,
            max_output_bytes: 1_048_576,
        };
        assert_eq!(fs.mounts, plugin_mounts);
        assert_eq!(fs.limits, plugin_limits);
        let names: Vec<&str> = fs.tools_overrides.keys().map(String::as_str).collect();
        assert_eq!(names, ["Isolated-1", "slow.search", "write_file"]);

        // Mounts replaced; limits: server timeout, plugin memory, tool output.
        let write_mounts = [Mount {
            host: out,
            writable: true,
        }];
        let write_limits = Limits {
            max_output_bytes: 10,
            ..plugin_limits
        };
        assert_eq!(
            fs.tools_overrides["write_file"],
            ToolOverride {
                mounts: Some(write_mounts.to_vec()),
                limits: write_limits,
            }
        );
        assert_eq!(fs.mounts_for("write_file"), write_mounts);
        assert_eq!(fs.limits_for("write_file"), write_limits);

        // No `mounts`: the plugin's; the tool's limits win over both levels above.
        assert_eq!(fs.tools_overrides["slow.search"].mounts, None);
        assert_eq!(fs.mounts_for("slow.search"), plugin_mounts);
        assert_eq!(
            fs.limits_for("slow.search"),
            Limits {
                timeout_ms: 9000,
                memory_mb: 512,
                max_output_bytes: 1_048_576,
            }
        );

        // `mounts = []` replaces the plugin's mounts with none; no `limits`: the plugin's.
        assert_eq!(fs.mounts_for("Isolated-1"), []);
        assert_eq!(fs.limits_for("Isolated-1"), plugin_limits);

        // A tool without an override, and names are case-sensitive.
        assert_eq!(fs.mounts_for("read_file"), plugin_mounts);
        assert_eq!(fs.limits_for("read_file"), plugin_limits);
        assert_eq!(fs.mounts_for("WRITE_FILE"), plugin_mounts);
    }

    #[test]
    fn inline_tool_array_is_the_same_as_tables() {
        let dir = tempfile::tempdir().unwrap();
        let tables = r#"
            [[plugin]]
            name = "fs"
            path = "builtin:fs"

            [[plugin.tool]]
            name = "a"
            mounts = [{ host = ".", mode = "rw" }]

            [[plugin.tool]]
            name = "b"
            limits = { timeout_ms = 5 }
        "#;
        let inline = r#"
            [[plugin]]
            name = "fs"
            path = "builtin:fs"
            tool = [
                { name = "a", mounts = [{ host = ".", mode = "rw" }] },
                { name = "b", limits = { timeout_ms = 5 } },
            ]
        "#;
        let from_tables = parse_in(dir.path(), tables).unwrap();
        let from_inline = parse_in(dir.path(), inline).unwrap();
        assert_eq!(from_tables.plugins[0].tools_overrides.len(), 2);
        assert_eq!(
            from_tables.plugins[0].tools_overrides,
            from_inline.plugins[0].tools_overrides
        );
    }

    #[test]
    fn mounts_are_canonicalised() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir_all(real.join("sub")).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
        let link = if cfg!(unix) { "link" } else { "real" };
        let text = format!(
            r#"
            [[plugin]]
            name = "fs"
            path = "builtin:fs"
            mounts = [
                {{ host = "real/sub/..", mode = "ro" }},
                {{ host = "{link}", mode = "rw" }},
            ]
            "#
        );
        let config = parse_in(dir.path(), &text).unwrap();
        let canonical = std::fs::canonicalize(&real).unwrap();
        assert_eq!(
            config.plugins[0].mounts,
            [
                Mount {
                    host: canonical.clone(),
                    writable: false
                },
                Mount {
                    host: canonical,
                    writable: true
                },
            ]
        );
    }

    #[test]
    fn file_plugin_resolves_against_the_config_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("plugins")).unwrap();
        std::fs::write(dir.path().join("plugins/echo.wasm"), b"\0asm").unwrap();
        let config_path = dir.path().join("plugins.toml");
        std::fs::write(
            &config_path,
            "[[plugin]]\nname = \"echo\"\npath = \"plugins/echo.wasm\"\n",
        )
        .unwrap();
        let config = Config::load(&config_path, BUILTINS).unwrap();
        assert_eq!(config.source, config_path.display().to_string());
        let expected = std::fs::canonicalize(dir.path().join("plugins/echo.wasm")).unwrap();
        assert!(expected.is_absolute());
        assert_eq!(config.plugins[0].source, PluginSource::File(expected));
    }

    #[test]
    fn config_values_are_stringified() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("p.wasm"), b"\0asm").unwrap();
        let text = r#"
            [[plugin]]
            name = "p"
            path = "p.wasm"
            config = { s = "text", i = -3, f = 1.0, g = 2.5, b = true, "odd key" = "x" }
        "#;
        let config = parse_in(dir.path(), text).unwrap();
        let values: Vec<(&str, &str)> = config.plugins[0]
            .config
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            values,
            [
                ("b", "true"),
                ("f", "1.0"),
                ("g", "2.5"),
                ("i", "-3"),
                ("odd key", "x"),
                ("s", "text"),
            ]
        );
    }

    #[test]
    fn unreadable_file_is_one_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("absent.toml");
        let errors = Config::load(&missing, BUILTINS).unwrap_err();
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].file, missing.display().to_string());
        assert_eq!(errors[0].key, "(file)");
        assert!(errors[0].message.starts_with("cannot read file: "));
    }

    #[test]
    fn base_dir_of_a_bare_file_name_is_dot() {
        assert_eq!(base_dir(Path::new("plugins.toml")), Path::new("."));
        assert_eq!(base_dir(Path::new("a/plugins.toml")), Path::new("a"));
        assert_eq!(base_dir(Path::new("/plugins.toml")), Path::new("/"));
    }

    fn cwd_read_only() -> Vec<MountArg> {
        vec![".".parse().unwrap()]
    }

    #[test]
    fn embedded_default_mounts_what_it_is_given() {
        let dir = tempfile::tempdir().unwrap();
        let two = [
            BUILTINS[0],
            KnownBuiltin {
                name: "grep",
                config_keys: &[],
            },
        ];
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
    fn edit_distances() {
        assert_eq!(edit_distance("search", "serach"), 2);
        assert_eq!(edit_distance("read", "read"), 0);
        assert_eq!(edit_distance("vcs", "network"), 7);
        assert_eq!(edit_distance("", "ab"), 2);
        assert!(unknown_category("serach", CONTRACT_CATEGORIES).contains("did you mean `search`?"));
        assert!(!unknown_category("fancy", CONTRACT_CATEGORIES).contains("did you mean"));
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

    #[test]
    fn name_patterns() {
        assert!(is_plugin_name("a"));
        assert!(is_plugin_name("0fs_x-y"));
        assert!(is_plugin_name(&"a".repeat(64)));
        assert!(!is_plugin_name(&"a".repeat(65)));
        assert!(!is_plugin_name(""));
        assert!(!is_plugin_name("-a"));
        assert!(!is_plugin_name("Fs"));
        assert!(is_category("vcs"));
        assert!(is_category("a-1"));
        assert!(!is_category("1a"));
        assert!(!is_category(&"a".repeat(33)));
        assert!(is_env_name("_"));
        assert!(is_env_name("Path_2"));
        assert!(!is_env_name("2X"));
        assert!(!is_env_name("A-B"));
        assert!(!is_env_name(""));
        assert!(is_tool_name("read_file"));
        assert!(is_tool_name("Git.log-2"));
        assert!(is_tool_name(&"a".repeat(128)));
        assert!(!is_tool_name(&"a".repeat(129)));
        assert!(!is_tool_name(""));
        assert!(!is_tool_name("read file"));
        assert!(!is_tool_name("ns/tool"));
        assert!(!is_tool_name("café"));
    }

    #[test]
    fn valid_full_example_parses() {
        let path = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/config/valid/full.toml"
        ));
        let config = match Config::load(path, BUILTINS) {
            Ok(config) => config,
            Err(errors) => panic!(
                "{}",
                errors
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
        };
        assert!(!config.plugins.is_empty());
        let overridden: Vec<(&str, Vec<&str>)> = config
            .plugins
            .iter()
            .map(|p| {
                let tools = p.tools_overrides.keys().map(String::as_str).collect();
                (p.name.as_str(), tools)
            })
            .collect();
        assert_eq!(
            overridden,
            [("fs", vec!["list_dir"]), ("fs-minimal", vec!["read_file"])]
        );
    }

    /// Each `tests/config/invalid/<case>.toml` must produce exactly the errors in `<case>.err`.
    /// With `TOOLCELL_BLESS=1`, writes the `.err` files instead.
    #[test]
    fn invalid_golden_files() {
        let dir = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/config/invalid"
        ));
        let canonical_dir = std::fs::canonicalize(dir).unwrap().display().to_string();
        let bless = std::env::var_os("TOOLCELL_BLESS").is_some_and(|v| v == "1");
        let mut cases: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|e| e == "toml"))
            .collect();
        cases.sort();
        assert!(cases.len() >= 12, "only {} cases", cases.len());

        let mut failures = Vec::new();
        for case in &cases {
            let file_name = case.file_name().unwrap().to_str().unwrap();
            let text = std::fs::read_to_string(case).unwrap();
            let actual = match Config::parse(&text, file_name, dir, BUILTINS) {
                Ok(_) => {
                    failures.push(format!("{file_name}: parsed without errors"));
                    continue;
                }
                // Resolved paths differ from machine to machine.
                Err(errors) => errors
                    .iter()
                    .map(|e| format!("{e}\n").replace(&canonical_dir, "<dir>"))
                    .collect::<String>(),
            };
            let err_path = case.with_extension("err");
            if bless {
                std::fs::write(&err_path, &actual).unwrap();
                continue;
            }
            let expected = std::fs::read_to_string(&err_path).unwrap_or_default();
            if actual != expected {
                failures.push(format!(
                    "{file_name}:\n--- expected\n{expected}--- actual\n{actual}"
                ));
            }
        }
        assert!(
            failures.is_empty(),
            "golden mismatches (rerun with TOOLCELL_BLESS=1 to update):\n{}",
            failures.join("\n")
        );
    }
}
