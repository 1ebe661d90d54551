//! Reading and checking `plugins.toml`.
//!
//! The file is parsed into an untyped [`toml::Table`] and walked by hand rather than deserialised
//! into serde types, so that one pass reports *every* problem (unknown keys, wrong types, bad
//! values, missing files) as a [`ConfigError`] naming the file, the key path
//! (`plugin[1] (fs).mounts[0].host`) and the reason. Messages show values and paths as written in
//! the file; a relative path that does not resolve also shows where it led.
//!
//! Errors are reported in a fixed order: within each table, unknown keys first (sorted), then the
//! known keys in the order the format documents them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toml::{Table, Value};

mod oci;
mod tools;
mod values;

use oci::OCI_PREFIX;
use values::{describe, io_reason, join, resolved, syntax_error};

use super::defaults::{DEFAULT_CATEGORIES, unmountable};
use super::names::{
    CATEGORY_RULE, CONTRACT_CATEGORIES, PLUGIN_NAME_RULE, is_category, is_env_name, is_plugin_name,
    is_tool_name, network_entry_problem, unknown_category,
};
use super::types::{Config, ConfigError, Limits, Mount, PluginConfig, PluginSource, Subscriptions};
use crate::builtins::Builtin;
use crate::limits;

/// Prefix of a `path` that names a plugin compiled into the binary.
pub(super) const BUILTIN_PREFIX: &str = "builtin:";

const TOP_KEYS: &[&str] = &["server", "limits", "plugin"];
const SERVER_KEYS: &[&str] = &["categories", "plugin_dirs"];
const LIMIT_KEYS: &[&str] = &["timeout_ms", "memory_mb", "max_output_bytes"];
const SERVER_LIMIT_KEYS: &[&str] = &[
    "timeout_ms",
    "memory_mb",
    "max_output_bytes",
    "max_concurrent_calls",
    "max_component_mb",
    "max_subscriptions",
    "max_followed_resources",
];
const PLUGIN_KEYS: &[&str] = &[
    "name",
    "path",
    "mounts",
    "env",
    "network",
    "tools",
    "categories",
    "config",
    "limits",
    "tool",
    "prefix",
    // A plugin from a registry (`path = "oci://..."`): see validate/oci.rs.
    "allow_unpinned",
    "verify",
    "insecure",
    "auth",
];
const TOOL_KEYS: &[&str] = &["name", "mounts", "limits", "rename"];
const MOUNT_KEYS: &[&str] = &["host", "mode"];

impl Config {
    /// Reads and validates the file at `path`.
    ///
    /// `path` is shown as given in messages; relative paths in the file resolve against its parent
    /// directory (or `.` if it has none).
    pub fn load(path: &Path, builtins: &[Builtin]) -> Result<Config, Vec<ConfigError>> {
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
        builtins: &[Builtin],
    ) -> Result<Config, Vec<ConfigError>> {
        let table = text
            .parse::<Table>()
            .map_err(|e| vec![syntax_error(source, text, &e)])?;
        validate(&table, source, base_dir, builtins)
    }
}

/// Validates a parsed configuration: `source` names it in messages, relative paths resolve
/// against `base_dir`, and `builtins` are the plugins accepted in `path = "builtin:NAME"`.
pub(super) fn validate(
    table: &Table,
    source: &str,
    base_dir: &Path,
    builtins: &[Builtin],
) -> Result<Config, Vec<ConfigError>> {
    Validator::new(source, base_dir, builtins).config(table)
}

/// Validates a drop folder's `NAME.toml` (parsed as `table`, named `source` in messages) for
/// the plugin `name` whose component is `component`: the keys of a `[[plugin]]` table but `name`
/// and `path`, checked by the same code, with relative paths resolved against `base_dir` (the
/// folder) and limits over `base_limits` (the server's).
pub(super) fn dropin(
    table: &Table,
    source: &str,
    base_dir: &Path,
    name: &str,
    component: Option<PathBuf>,
    base_limits: Limits,
) -> Result<PluginConfig, Vec<ConfigError>> {
    let mut validator = Validator::new(source, base_dir, &[]);
    validator.dropin = true;
    // Beside a NAME.wasm, the component is that file; alone, a NAME.toml
    // names a registry's component with `path = "oci://..."`.
    let keys: Vec<&str> = PLUGIN_KEYS
        .iter()
        .copied()
        .filter(|key| *key != "name" && (component.is_none() || *key != "path"))
        .collect();
    validator.unknown_keys(
        table,
        "",
        &keys,
        &[
            (
                "name",
                "a drop-in's name is its file name (NAME.wasm or NAME.toml): remove `name`",
            ),
            (
                "path",
                "a drop-in's component is NAME.wasm beside this file: remove `path` (a NAME.toml \
                 alone may name a registry's component, `path = \"oci://...\"`)",
            ),
        ],
    );
    let source = match component {
        Some(file) => Some(PluginSource::File(file)),
        None => match table.get("path") {
            Some(value)
                if value
                    .as_str()
                    .is_some_and(|path| path.starts_with(OCI_PREFIX)) =>
            {
                validator.plugin_source(value, "path")
            }
            Some(_) => {
                validator.error(
                    "path",
                    "a drop-in's `path` can only name a registry's component \
                     (\"oci://...\"): put a component file in the folder as NAME.wasm",
                );
                None
            }
            None => {
                validator.error(
                    "path",
                    "no NAME.wasm beside this file: add the component, or name one in a \
                     registry with `path = \"oci://...\"`",
                );
                None
            }
        },
    };
    // The registry keys (`verify`, `auth`, ...): only beside an `oci://` path.
    let source = validator.oci_keys(table, "", source);
    let plugin = source.and_then(|source| {
        validator.plugin_body(table, "", Some(name.to_owned()), Some(source), base_limits)
    });
    match plugin {
        Some(plugin) if validator.errors.is_empty() => Ok(plugin),
        _ => Err(validator.errors),
    }
}

/// The directory relative paths in the file at `path` resolve against: its parent, or `.`.
pub(super) fn base_dir(path: &Path) -> &Path {
    match path.parent() {
        // A bare file name has an empty parent, which must mean ".".
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// Walks the parsed file, collecting every error.
///
/// Each check records its errors and returns a fallback, so the walk always goes on; the built
/// [`Config`] is only returned when no error was recorded.
struct Validator<'a> {
    file: &'a str,
    base_dir: &'a Path,
    builtins: &'a [Builtin],
    errors: Vec<ConfigError>,
    /// Validating a drop folder's `NAME.toml`, whose top-level `limits` is a plugin's.
    dropin: bool,
}

impl<'a> Validator<'a> {
    fn new(file: &'a str, base_dir: &'a Path, builtins: &'a [Builtin]) -> Self {
        Validator {
            file,
            base_dir,
            builtins,
            errors: Vec::new(),
            dropin: false,
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
        let plugin_dirs = match root
            .get("server")
            .and_then(Value::as_table)
            .and_then(|server| server.get("plugin_dirs"))
        {
            Some(value) => self.plugin_dirs(value, "server.plugin_dirs"),
            None => Vec::new(),
        };

        let mut max_concurrent_calls = limits::DEFAULT_MAX_CONCURRENT_CALLS;
        let mut max_component_mb = limits::DEFAULT_MAX_COMPONENT_MB;
        let mut subscriptions = Subscriptions::default();
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
            if let Some(value) = table.get("max_component_mb") {
                let key = "limits.max_component_mb";
                let max = Some(limits::MAX_COMPONENT_MB);
                if let Some(n) = self.integer(value, key, 1, max) {
                    max_component_mb = n;
                }
            }
            let caps = [
                ("max_subscriptions", &mut subscriptions.per_connection),
                ("max_followed_resources", &mut subscriptions.distinct),
            ];
            for (name, field) in caps {
                if let Some(value) = table.get(name) {
                    let key = join("limits", name);
                    let max = Some(limits::MAX_FOLLOWS as u64);
                    if let Some(n) = self.integer(value, &key, 1, max) {
                        // At most MAX_FOLLOWS, so it fits.
                        *field = usize::try_from(n).unwrap_or(limits::MAX_FOLLOWS);
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
                max_component_bytes: max_component_mb << 20,
                subscriptions,
                plugins,
                plugin_dirs,
            })
        } else {
            Err(self.errors)
        }
    }

    fn server(&mut self, server: &Table) -> Vec<String> {
        self.unknown_keys(server, "server", SERVER_KEYS, &[]);
        match server.get("categories") {
            Some(value) => self.string_list(value, "server.categories", "category", |c| {
                (!is_category(c))
                    .then(|| format!("invalid category {c:?}: must be {CATEGORY_RULE}"))
            }),
            None => DEFAULT_CATEGORIES.iter().map(|c| (*c).to_owned()).collect(),
        }
    }

    /// The drop folders of `[server] plugin_dirs` (at key path `path`), each resolved against
    /// the file's directory and canonical; the valid ones, in order.
    fn plugin_dirs(&mut self, value: &Value, path: &str) -> Vec<PathBuf> {
        let written = self.string_list(value, path, "folder", |dir| {
            dir.is_empty()
                .then(|| "a folder must not be empty".to_owned())
        });
        let mut dirs = Vec::new();
        for (index, dir) in written.iter().enumerate() {
            let key = format!("{path}[{index}]");
            let joined = self.base_dir.join(dir);
            let at = if Path::new(dir).is_absolute() {
                String::new()
            } else {
                format!(" (resolved to {})", resolved(&joined).display())
            };
            match dunce::canonicalize(&joined) {
                Ok(found) if found.is_dir() => dirs.push(found),
                Ok(_) => self.error(key, format!("{dir:?}{at}: not a directory")),
                Err(e) => {
                    let reason = io_reason(&e, "directory");
                    self.error(key, format!("{dir:?}{at}: {reason}"));
                }
            }
        }
        dirs
    }

    /// Applies the limits in `table` (at key path `path`) over `base`.
    ///
    /// `max_concurrent_calls` is read by the callers: the top-level `[limits]`'s and a plugin's.
    fn limits(&mut self, table: &Table, path: &str, base: Limits) -> Limits {
        if path == "limits" && !self.dropin {
            self.unknown_keys(table, path, SERVER_LIMIT_KEYS, &[]);
        } else {
            self.unknown_keys(
                table,
                path,
                LIMIT_KEYS,
                &[
                    (
                        "max_concurrent_calls",
                        "max_concurrent_calls is set for the server (the top-level [limits]) or a \
                         whole plugin (its `limits`), not for one tool",
                    ),
                    (
                        "max_component_mb",
                        "max_component_mb is server-wide: set it in the top-level [limits]",
                    ),
                    (
                        "max_subscriptions",
                        "max_subscriptions is server-wide: set it in the top-level [limits]",
                    ),
                    (
                        "max_followed_resources",
                        "max_followed_resources is server-wide: set it in the top-level [limits]",
                    ),
                ],
            );
        }
        let mut limits = base;
        let fields: [(&str, &mut u64, Option<u64>); 3] = [
            ("timeout_ms", &mut limits.timeout_ms, None),
            (
                "memory_mb",
                &mut limits.memory_mb,
                Some(limits::MAX_MEMORY_MB),
            ),
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
                            format!("invalid plugin name {name:?}: must be {PLUGIN_NAME_RULE}"),
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
        let source = self.oci_keys(table, &prefix, source);

        self.plugin_body(table, &prefix, name, source, base_limits)
    }

    /// What a `[[plugin]]` table holds besides `name` and `path` (mounts, env, network, tools,
    /// config, limits, tool overrides), at key path `prefix`: shared by `plugins.toml` and a
    /// drop folder's `NAME.toml`. `None` when `name` or `source` is missing.
    fn plugin_body(
        &mut self,
        table: &Table,
        prefix: &str,
        name: Option<String>,
        source: Option<PluginSource>,
        base_limits: Limits,
    ) -> Option<PluginConfig> {
        let prefix = prefix.to_owned();
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

        let categories = match table.get("categories") {
            Some(value) => self.string_list(value, &join(&prefix, "categories"), "category", |c| {
                (!is_category(c))
                    .then(|| format!("invalid category {c:?}: must be {CATEGORY_RULE}"))
            }),
            None => Vec::new(),
        };
        // A builtin's tools are in the contract's categories: any other is misspelt.
        if matches!(source, Some(PluginSource::Builtin(_))) {
            for category in &categories {
                if !CONTRACT_CATEGORIES.contains(&category.as_str()) {
                    self.error(
                        join(&prefix, "categories"),
                        unknown_category(category, CONTRACT_CATEGORIES),
                    );
                }
            }
        }

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

        // A plugin's `limits` may also cap how many of its calls run at once; a tool's may not.
        let mut plugin_limits = table.get("limits").cloned();
        let calls_key = join(&join(&prefix, "limits"), "max_concurrent_calls");
        let written_calls = plugin_limits
            .as_mut()
            .and_then(Value::as_table_mut)
            .and_then(|limits| limits.remove("max_concurrent_calls"));
        let limits = match &plugin_limits {
            Some(value) => self.limits_table(value, &join(&prefix, "limits"), base_limits),
            None => base_limits,
        };
        let gated = match &source {
            Some(PluginSource::Builtin(builtin)) => self
                .builtins
                .iter()
                .any(|known| known.name == builtin && known.gated_by.is_some()),
            _ => false,
        };
        let max_concurrent_calls = match written_calls {
            Some(value) => self
                .integer(&value, &calls_key, 1, None)
                .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
            None => gated.then_some(limits::DEFAULT_GATED_CONCURRENT_CALLS),
        };

        let mut renames = BTreeMap::new();
        let tools_overrides = match table.get("tool") {
            Some(value) => self.tool_overrides(value, &join(&prefix, "tool"), limits, &mut renames),
            None => BTreeMap::new(),
        };

        let tool_prefix = table.get("prefix").and_then(|value| {
            let key = join(&prefix, "prefix");
            let written = self.string(value, &key)?;
            if written.is_empty() || !is_tool_name(written) || written.len() > 32 {
                self.error(
                    key,
                    format!(
                        "invalid prefix {written:?}: must be 1 to 32 characters of A-Z, a-z, \
                         0-9, `_`, `-` and `.`"
                    ),
                );
                return None;
            }
            Some(written.to_owned())
        });

        Some(PluginConfig {
            name: name?,
            source: source?,
            mounts,
            env,
            network,
            tools,
            categories,
            config,
            limits,
            max_concurrent_calls,
            tools_overrides,
            prefix: tool_prefix,
            renames,
        })
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
        if written.starts_with(OCI_PREFIX) {
            return self.oci_source(written, key);
        }
        match dunce::canonicalize(self.base_dir.join(written)) {
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
                    match dunce::canonicalize(&joined) {
                        Ok(host) if !host.is_dir() => {
                            self.error(key, format!("{written:?}{at}: not a directory"));
                            None
                        }
                        Ok(host) => match unmountable(&host) {
                            Some(why) => {
                                self.error(key, format!("{written:?}{at}: {why}"));
                                None
                            }
                            None => Some(host),
                        },
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
}
