//! The union of every plugin's enabled tools.
//!
//! [`Toolbox::load`] loads each configured plugin (in parallel; a plugin that
//! fails is recorded in [`Toolbox::failures`] and the rest carry on), then
//! keeps the tools whose category is enabled and that pass the plugin's
//! `tools` allow-list. Builtins are added first, whatever the configuration's
//! order, and their tool names (served or not) are reserved: a third-party
//! tool of such a name is refused. Between the others, a tool name that an
//! earlier plugin already serves is refused for the later one, with an error
//! naming both, so a dropped-in plugin cannot take another's tool or stop the
//! server.
//! [`Route`] ties a tool to the plugin that runs it.
//!
//! The same goes for what contract 0.2.0 adds: every loaded plugin's fixed
//! resources, resource templates and prompts are served, and one that an
//! earlier plugin (builtins first) already serves (the same URI, template or
//! prompt name) is refused for the later plugin with an error naming both.

use std::borrow::Cow;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};

use crate::config::{CONTRACT_CATEGORIES, Config, PluginConfig, PluginSource, unknown_category};
use crate::runtime::builtin;
use crate::runtime::component_file::{ComponentFile, Wasm};
use crate::runtime::contract::v2::{PromptDescriptor, ResourceDescriptor, ResourceTemplate};
use crate::runtime::engine::{Capacity, Engine};
use crate::runtime::host::LazyImports;
use crate::runtime::offerings::template_prefix;
use crate::runtime::plugin::{Plugin, PluginSetup};
use crate::runtime::spec::ToolSpec;

/// A tool and the plugin that runs it.
#[derive(Clone)]
pub struct Route {
    /// The plugin.
    pub plugin: Arc<Plugin>,
    /// The tool.
    pub spec: Arc<ToolSpec>,
}

/// A plugin that could not be loaded.
#[derive(Debug)]
pub struct LoadFailure {
    /// The plugin's name.
    pub plugin: String,
    /// Why, with its causes.
    pub error: String,
}

/// A resource, resource template or prompt and the plugin that serves it.
#[derive(Clone)]
pub struct Offered<T> {
    /// The plugin.
    pub plugin: Arc<Plugin>,
    /// What it offers.
    pub item: T,
}

/// Every enabled tool, by name, builtins first, then in configuration order.
pub struct Toolbox {
    resources: Vec<Offered<ResourceDescriptor>>,
    templates: Vec<Offered<ResourceTemplate>>,
    prompts: Vec<Offered<PromptDescriptor>>,
    routes: Vec<Route>,
    by_name: HashMap<String, usize>,
    /// Every tool name of a builtin plugin, served or not, and its plugin.
    builtin_tools: HashMap<String, String>,
    disabled: Vec<Route>,
    plugins: Vec<Arc<Plugin>>,
    failures: Vec<LoadFailure>,
    errors: Vec<String>,
    warnings: Vec<String>,
}

impl Toolbox {
    /// Loads every plugin of `config`. A plugin that fails to load is
    /// recorded and logged; a tool whose name an earlier plugin already
    /// serves, and a category that nothing declares, are recorded as
    /// [`errors`](Toolbox::errors) and logged; the rest is served.
    pub fn load(config: &Config, engine: &Arc<Engine>) -> Result<Toolbox> {
        let imports = Arc::new(LazyImports::new(Arc::clone(engine)));
        // A builtin whose every tool is in a category that is off (`execute`, unless enabled)
        // would serve nothing: it is not loaded, and so costs no compile and no memory.
        let (plugins, gated_off): (Vec<&PluginConfig>, Vec<&PluginConfig>) =
            config.plugins.iter().partition(|plugin| {
                gated_by(plugin).is_none_or(|category| plugin.enables(&config.categories, category))
            });
        for plugin in gated_off {
            let category = gated_by(plugin).unwrap_or_default();
            // Not a warning: listing it for later is how a configuration offers it.
            tracing::info!(
                "plugin `{}` is not loaded: its tools are in category `{category}`, which is \
                 off; add \"{category}\" to [server] categories (or to the plugin's \
                 `categories`), or start with `--enable {category}`",
                plugin.name
            );
        }
        let loaded = in_parallel(&plugins, |plugin| {
            load_plugin(engine, &imports, plugin, config.max_component_bytes)
        });

        let mut toolbox = Toolbox {
            resources: Vec::new(),
            templates: Vec::new(),
            prompts: Vec::new(),
            routes: Vec::new(),
            by_name: HashMap::new(),
            builtin_tools: HashMap::new(),
            disabled: Vec::new(),
            plugins: Vec::new(),
            failures: Vec::new(),
            errors: Vec::new(),
            warnings: Vec::new(),
        };
        // Builtins first, whatever the order of the configuration: a third
        // party can never take a builtin's name (a tool, resource or prompt),
        // even when it is listed before the builtin.
        let (builtins, others): (Vec<_>, Vec<_>) = plugins
            .into_iter()
            .zip(loaded)
            .partition(|(plugin, _)| matches!(plugin.source, PluginSource::Builtin(_)));
        for (plugin_config, result) in builtins.into_iter().chain(others) {
            let plugin = match result {
                Ok(plugin) => Arc::new(plugin),
                Err(error) => {
                    let error = format!("{error:#}");
                    tracing::error!(plugin = %plugin_config.name, "plugin not loaded: {error}");
                    toolbox.failures.push(LoadFailure {
                        plugin: plugin_config.name.clone(),
                        error,
                    });
                    continue;
                }
            };
            toolbox.add(config, plugin_config, plugin);
        }
        toolbox.check_categories(config);
        for error in &toolbox.errors {
            tracing::error!("{error}");
        }
        Ok(toolbox)
    }

    /// Links the plugins that were loaded before they were linked (builtins
    /// served from their remembered listings), one after another on a
    /// thread of their own, so that their first calls need not wait for it;
    /// one core stays free meanwhile. The server does it once it has
    /// answered `tools/list`, so that linking does not slow the start the
    /// client waits for. A call that comes first links its plugin itself;
    /// each link is done once (`Plugin::link_now`), so calling this again
    /// costs nothing.
    pub fn link_in_background(&self) {
        let waiting: Vec<Arc<Plugin>> = self
            .plugins
            .iter()
            .filter(|plugin| plugin.awaits_link())
            .cloned()
            .collect();
        if waiting.is_empty() {
            return;
        }
        let spawned = std::thread::Builder::new()
            .name("toolcell-link".to_string())
            .spawn(move || {
                for plugin in waiting {
                    plugin.link_now();
                }
            });
        if let Err(error) = spawned {
            tracing::debug!(
                "cannot link in the background ({error}); each plugin links at its first call"
            );
        }
    }

    /// Records an error for each enabled category that is neither one of
    /// the contract's six nor declared by a loaded plugin: a misspelt
    /// category silently serves nothing.
    fn check_categories(&mut self, config: &Config) {
        let mut declared: Vec<&str> = self
            .routes
            .iter()
            .chain(&self.disabled)
            .map(|route| route.spec.category.as_str())
            .filter(|category| !CONTRACT_CATEGORIES.contains(category))
            .collect();
        declared.sort_unstable();
        declared.dedup();
        let known: Vec<&str> = CONTRACT_CATEGORIES
            .iter()
            .copied()
            .chain(declared)
            .collect();
        let plugin_categories = config.plugins.iter().flat_map(|plugin| &plugin.categories);
        for category in config.categories.iter().chain(plugin_categories) {
            if known.contains(&category.as_str()) {
                continue;
            }
            let unsure = if self.failures.is_empty() {
                ""
            } else {
                " (a plugin that did not load may declare it)"
            };
            self.errors.push(format!(
                "{}: [server] categories: {}{unsure}",
                config.source,
                unknown_category(category, &known)
            ));
        }
    }

    fn add(&mut self, config: &Config, plugin_config: &PluginConfig, plugin: Arc<Plugin>) {
        for name in plugin_config.tools_overrides.keys() {
            if !plugin.tools().iter().any(|spec| &spec.guest == name) {
                self.warnings.push(format!(
                    "plugin `{}` has a [[plugin.tool]] entry for `{name}`, but offers no such tool",
                    plugin_config.name
                ));
            }
        }
        if let Some(allowed) = &plugin_config.tools {
            for name in allowed {
                if !plugin.tools().iter().any(|spec| &spec.name == name) {
                    self.warnings.push(format!(
                        "plugin `{}` lists tool `{name}` in `tools`, but offers no such tool",
                        plugin_config.name
                    ));
                }
            }
        }
        let builtin = matches!(plugin_config.source, PluginSource::Builtin(_));
        if builtin {
            for spec in plugin.tools() {
                self.builtin_tools
                    .entry(spec.name.clone())
                    .or_insert_with(|| plugin_config.name.clone());
            }
        }
        for spec in plugin.tools() {
            let route = Route {
                plugin: plugin.clone(),
                spec: spec.clone(),
            };
            let allowed = plugin_config
                .tools
                .as_ref()
                .is_none_or(|allowed| allowed.contains(&spec.name));
            if !builtin && let Some(owner) = self.builtin_tools.get(&spec.name) {
                self.errors.push(format!(
                    "tool `{}` of plugin `{}` is refused: `{}` is the name of a tool of the \
                     builtin plugin `{owner}` (builtin tool names are reserved, served or not)",
                    spec.name, plugin_config.name, spec.name
                ));
                continue;
            }
            if enabled(config, plugin_config, spec) {
                // Only served tools must have unique names: a plugin narrowed
                // with `tools = [...]` may offer a name another plugin serves.
                if let Some(&first) = self.by_name.get(&spec.name) {
                    self.errors.push(format!(
                        "tool `{}` of plugin `{}` is refused: plugin `{}` already serves a tool \
                         of that name (tool names must be unique; narrow one plugin with \
                         `tools = [...]`)",
                        spec.name,
                        plugin_config.name,
                        self.routes[first].plugin.name()
                    ));
                    continue;
                }
                self.by_name.insert(spec.name.clone(), self.routes.len());
                self.routes.push(route);
            } else {
                if allowed && plugin_config.tools.is_some() {
                    self.warnings.push(format!(
                        "plugin `{}` allows tool `{}`, but its category `{}` is not enabled in \
                         [server] categories",
                        plugin_config.name, spec.name, spec.category
                    ));
                }
                self.disabled.push(route);
            }
        }
        self.add_offerings(&plugin);
        self.plugins.push(plugin);
    }

    /// Adds `plugin`'s resources, templates and prompts, refusing each one
    /// an earlier plugin already serves.
    fn add_offerings(&mut self, plugin: &Arc<Plugin>) {
        let offerings = plugin.offerings();
        let add = |errors: &mut Vec<String>, kind: &str, key: &str, served_by: Option<&str>| {
            let Some(first) = served_by else {
                return true;
            };
            errors.push(format!(
                "{kind} `{key}` of plugin `{}` is refused: plugin `{first}` already serves it",
                plugin.name()
            ));
            false
        };
        for item in &offerings.resources {
            let first = self.resources.iter().find(|r| r.item.uri == item.uri);
            if add(
                &mut self.errors,
                "resource",
                &item.uri,
                first.map(|r| r.plugin.name()),
            ) {
                self.resources.push(Offered {
                    plugin: plugin.clone(),
                    item: item.clone(),
                });
            }
        }
        for item in &offerings.templates {
            let first = self
                .templates
                .iter()
                .find(|t| t.item.uri_template == item.uri_template);
            let key = &item.uri_template;
            if add(
                &mut self.errors,
                "resource template",
                key,
                first.map(|t| t.plugin.name()),
            ) {
                self.templates.push(Offered {
                    plugin: plugin.clone(),
                    item: item.clone(),
                });
            }
        }
        for item in &offerings.prompts {
            let first = self.prompts.iter().find(|p| p.item.name == item.name);
            if add(
                &mut self.errors,
                "prompt",
                &item.name,
                first.map(|p| p.plugin.name()),
            ) {
                self.prompts.push(Offered {
                    plugin: plugin.clone(),
                    item: item.clone(),
                });
            }
        }
    }

    /// Fixed resources listed at load time.
    pub fn resources(&self) -> &[Offered<ResourceDescriptor>] {
        &self.resources
    }

    /// Resource templates, builtins first, then in configuration order.
    pub fn templates(&self) -> &[Offered<ResourceTemplate>] {
        &self.templates
    }

    /// Prompts, builtins first, then in configuration order.
    pub fn prompts(&self) -> &[Offered<PromptDescriptor>] {
        &self.prompts
    }

    /// The prompt called `name`.
    pub fn prompt(&self, name: &str) -> Option<&Offered<PromptDescriptor>> {
        self.prompts.iter().find(|p| p.item.name == name)
    }

    /// The plugin that serves the template `uri_template`.
    pub fn template(&self, uri_template: &str) -> Option<&Offered<ResourceTemplate>> {
        self.templates
            .iter()
            .find(|t| t.item.uri_template == uri_template)
    }

    /// Whether any plugin offers resources or resource templates.
    pub fn serves_resources(&self) -> bool {
        !self.resources.is_empty() || !self.templates.is_empty()
    }

    /// The plugins that offer resources (fixed ones or templates), each once,
    /// builtins first, then in configuration order.
    pub fn resource_plugins(&self) -> Vec<Arc<Plugin>> {
        let mut plugins: Vec<Arc<Plugin>> = Vec::new();
        let offering = self.resources.iter().map(|r| &r.plugin);
        for plugin in offering.chain(self.templates.iter().map(|t| &t.plugin)) {
            if !plugins.iter().any(|p| Arc::ptr_eq(p, plugin)) {
                plugins.push(plugin.clone());
            }
        }
        plugins
    }

    /// The plugins to ask for `uri`, most likely first: the one that listed
    /// it, else those with a template whose literal start it has (the
    /// longest first), else every plugin that offers resources.
    pub fn readers(&self, uri: &str) -> Vec<Arc<Plugin>> {
        if let Some(listed) = self.resources.iter().find(|r| r.item.uri == uri) {
            return vec![listed.plugin.clone()];
        }
        let mut matching: Vec<&Offered<ResourceTemplate>> = self
            .templates
            .iter()
            .filter(|t| uri.starts_with(template_prefix(&t.item.uri_template)))
            .collect();
        matching.sort_by_key(|t| std::cmp::Reverse(template_prefix(&t.item.uri_template).len()));
        let mut plugins: Vec<Arc<Plugin>> = Vec::new();
        for plugin in matching.into_iter().map(|t| &t.plugin) {
            if !plugins.iter().any(|p| Arc::ptr_eq(p, plugin)) {
                plugins.push(plugin.clone());
            }
        }
        if plugins.is_empty() {
            plugins = self.resource_plugins();
        }
        plugins
    }

    /// Whether any plugin offers completions for a prompt or a template.
    pub fn completes(&self) -> bool {
        let offering = self.prompts.iter().map(|p| &p.plugin);
        offering
            .chain(self.templates.iter().map(|t| &t.plugin))
            .any(|plugin| plugin.exports_completions())
    }

    /// The enabled tool called `name`.
    pub fn get(&self, name: &str) -> Option<&Route> {
        self.position(name).map(|index| &self.routes[index])
    }

    /// Where the enabled tool called `name` is in [`Toolbox::routes`].
    pub fn position(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// Every enabled tool, builtins first, then in configuration order.
    pub fn routes(&self) -> &[Route] {
        &self.routes
    }

    /// Tools that were loaded but are not served (category or allow-list).
    pub fn disabled(&self) -> &[Route] {
        &self.disabled
    }

    /// The plugins that loaded.
    pub fn plugins(&self) -> &[Arc<Plugin>] {
        &self.plugins
    }

    /// The plugins that did not load.
    pub fn failures(&self) -> &[LoadFailure] {
        &self.failures
    }

    /// Problems that leave part of the configuration unserved: a tool
    /// refused for a name clash, an unknown category. Logged at error;
    /// `toolcell check` fails on them.
    pub fn errors(&self) -> &[String] {
        &self.errors
    }

    /// Problems worth a warning, such as an allow-list naming no real tool.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Why `name` is not served, for a tool that a plugin offers but the
    /// configuration does not enable; `None` for a name no plugin offers.
    pub fn why_disabled(&self, config_categories: &[String], name: &str) -> Option<String> {
        let route = self.disabled.iter().find(|route| route.spec.name == name)?;
        let (plugin, category) = (route.plugin.name(), &route.spec.category);
        Some(if config_categories.contains(category) {
            format!(
                "tool `{name}` is not enabled: plugin `{plugin}`'s `tools` list in the \
                 configuration leaves it out; add it there to enable it"
            )
        } else {
            format!(
                "tool `{name}` is not enabled: its category `{category}` is off; add \
                 \"{category}\" to [server] categories in the configuration (plugins.toml), or \
                 start Toolcell with `--enable {category}`, to enable it"
            )
        })
    }
}

/// Whether `spec` is served: its category is enabled and it passes the
/// plugin's allow-list.
fn enabled(config: &Config, plugin: &PluginConfig, spec: &ToolSpec) -> bool {
    plugin.enables(&config.categories, &spec.category)
        && plugin
            .tools
            .as_ref()
            .is_none_or(|allowed| allowed.contains(&spec.name))
}

/// The category that gates `plugin` when it is a builtin whose tools are all in a category
/// that is off by default.
fn gated_by(plugin: &PluginConfig) -> Option<&'static str> {
    match &plugin.source {
        PluginSource::Builtin(name) => crate::builtins::find(name).and_then(|b| b.gated_by),
        _ => None,
    }
}

/// How many threads load plugins at once: one per core.
fn loader_threads() -> usize {
    super::cores()
}

/// The engine's instance pool for `config`: every call that may run at once,
/// every loader thread listing a plugin's tools, and a little slack; memories
/// as large as the largest `memory_mb`; and each call's share of the
/// process's `descriptor_limit`.
pub fn capacity(config: &Config, descriptor_limit: Option<u64>) -> Capacity {
    Capacity {
        instances: u32::try_from(config.max_concurrent_calls + loader_threads() + 4)
            .unwrap_or(u32::MAX),
        memory_bytes: config.largest_memory_mb() << 20,
        handles_per_call: crate::runtime::engine::handles_per_call(
            descriptor_limit,
            config.max_concurrent_calls,
        ),
    }
}

/// Runs `f` on every item, on at most [`loader_threads`] threads, and
/// returns the results in order. A panic becomes that item's error.
fn in_parallel<T: Sync, R: Send + Sync>(
    items: &[T],
    f: impl Fn(&T) -> Result<R> + Sync,
) -> Vec<Result<R>> {
    let slots: Vec<OnceLock<Result<R>>> = items.iter().map(|_| OnceLock::new()).collect();
    let next = AtomicUsize::new(0);
    let threads = loader_threads().min(items.len());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let (Some(item), Some(slot)) = (items.get(index), slots.get(index)) else {
                        return;
                    };
                    let result = std::panic::catch_unwind(AssertUnwindSafe(|| f(item)))
                        .unwrap_or_else(|_| Err(anyhow::anyhow!("loading panicked")));
                    let _ = slot.set(result);
                }
            });
        }
    });
    slots
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .unwrap_or_else(|| Err(anyhow::anyhow!("not loaded")))
        })
        .collect()
}

/// Environment variables that hold the server's own secrets, which no grant
/// passes to a plugin, and what each is.
const SERVER_SECRETS: &[(&str, &str)] = &[
    ("TOOLCELL_TOKEN", "the server's HTTP credential"),
    (
        "TOOLCELL_STATE_KEY",
        "the key that seals the server's requestState",
    ),
];

/// The component file at `path` and its SHA-256: remembered by the compile
/// cache for this version of the file, so that the file is not read (see
/// `component_file`), or else read and hashed now, and remembered.
fn file_component(engine: &Engine, path: &Path, max_bytes: u64) -> Result<(Wasm, [u8; 32])> {
    let mut file = ComponentFile::open(path, max_bytes)?;
    let known = match file.identity().cloned() {
        Some(identity) => Some((identity, file.sample()?)),
        None => None,
    };
    if let Some((identity, sample)) = &known
        && let Some(sha256) = engine.remembered_digest(identity, *sample)
    {
        return Ok((Wasm::unread(file, sha256), sha256));
    }
    let bytes = file.read()?;
    let sha256: [u8; 32] = Sha256::digest(&bytes).into();
    if let Some((identity, sample)) = &known {
        engine.remember_digest(identity, *sample, &sha256);
    }
    Ok((Wasm::bytes(Cow::Owned(bytes)), sha256))
}

fn load_plugin(
    engine: &Arc<Engine>,
    imports: &Arc<LazyImports>,
    config: &PluginConfig,
    max_component_bytes: u64,
) -> Result<Plugin> {
    let (wasm, sha256) = match &config.source {
        PluginSource::Builtin(name) => {
            let builtin = builtin::get(name).with_context(|| {
                format!(
                    "builtin plugin `{name}` is not in this build of toolcell: one built from \
                     the crates.io package leaves out the builtins too large for a crate; \
                     install a release archive (docs/install.md) or build from the repository"
                )
            })?;
            let wasm = Wasm::bytes(Cow::Borrowed(builtin.wasm)).with_compiled(builtin.compiled);
            (wasm, *builtin.sha256)
        }
        PluginSource::File(path) => file_component(engine, path, max_component_bytes)?,
        PluginSource::Oci(source) => {
            let pulled = super::oci::component(source, max_component_bytes)?;
            (Wasm::bytes(Cow::Owned(pulled.bytes)), pulled.sha256)
        }
    };
    let mut env = Vec::new();
    for name in &config.env {
        if let Some(what) = SERVER_SECRETS
            .iter()
            .find_map(|(secret, what)| (name == secret).then_some(what))
        {
            tracing::warn!(
                plugin = %config.name,
                "{name} is {what} and is never passed to plugins"
            );
            continue;
        }
        match std::env::var(name) {
            Ok(value) => env.push((name.clone(), value)),
            Err(_) => tracing::warn!(
                plugin = %config.name,
                "environment variable `{name}` is granted but not set (or not UTF-8); not passed"
            ),
        }
    }
    let started = std::time::Instant::now();
    let plugin = Plugin::load(
        engine.clone(),
        imports,
        PluginSetup {
            config,
            wasm,
            sha256,
            env,
            link_later: matches!(config.source, PluginSource::Builtin(_)),
        },
    )?;
    tracing::debug!(
        plugin = %config.name,
        tools = plugin.tools().len(),
        elapsed_ms = started.elapsed().as_secs_f64() * 1000.0,
        "plugin loaded"
    );
    Ok(plugin)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::runtime::component_file;

    /// The smallest valid component, and a different one of the same size.
    const COMPONENT: &[u8] = &[0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];
    const OTHER: &[u8] = &[0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x01];

    /// A warm start reads no component file: its digest is remembered for that version of the
    /// file, and the compile cache answers. A rewrite of the same size with its modification time
    /// put back is another version (its change time moved), and so is read; so is a file renamed
    /// into place; a file that changes after its digest was taken is an error when its bytes are
    /// needed. A file changed in the last two seconds is always read.
    #[test]
    fn a_component_file_is_read_only_when_its_version_is_new() {
        let cache = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.wasm");
        std::fs::write(&path, COMPONENT).unwrap();
        let big = dir.path().join("big.wasm");
        let mut bytes = vec![0u8; 512 * 1024];
        std::fs::write(&big, &bytes).unwrap();
        let sha: [u8; 32] = Sha256::digest(COMPONENT).into();
        let engine = || Engine::new(Some(cache.path().to_path_buf()), Capacity::default()).unwrap();

        // Just written: read every time.
        for _ in 0..2 {
            let (wasm, digest) = file_component(&engine(), &path, 1 << 20).unwrap();
            assert!(wasm.was_read(), "a file changed just now is read");
            assert_eq!(digest, sha);
        }
        std::thread::sleep(component_file::SETTLED + std::time::Duration::from_millis(100));

        let first = engine();
        let (mut wasm, digest) = file_component(&first, &path, 1 << 20).unwrap();
        assert!(wasm.was_read(), "a new version is read");
        assert_eq!(digest, sha);
        first.compile("c", &mut wasm, &digest).unwrap();
        let second = engine();
        let (mut wasm, digest) = file_component(&second, &path, 1 << 20).unwrap();
        assert!(!wasm.was_read(), "a known version is not read");
        assert_eq!(digest, sha);
        second.compile("c", &mut wasm, &digest).unwrap();
        assert!(!wasm.was_read(), "the compile cache answered");

        // A byte in the middle of a larger file, outside the sample, with the size and the
        // modification time kept: only the change time tells.
        let (wasm, _) = file_component(&engine(), &big, 1 << 20).unwrap();
        assert!(wasm.was_read());
        let (wasm, _) = file_component(&engine(), &big, 1 << 20).unwrap();
        assert!(!wasm.was_read());
        let modified = std::fs::metadata(&big).unwrap().modified().unwrap();
        bytes[256 * 1024] = 1;
        let file = std::fs::OpenOptions::new().write(true).open(&big).unwrap();
        std::io::Write::write_all(&mut &file, &bytes).unwrap();
        file.set_modified(modified).unwrap();
        drop(file);
        let (wasm, digest) = file_component(&engine(), &big, 1 << 20).unwrap();
        assert!(
            wasm.was_read(),
            "a rewrite of the same size and time is read"
        );
        assert_eq!(digest, <[u8; 32]>::from(Sha256::digest(&bytes)));

        // Known, then changed before its bytes were needed.
        let (mut wasm, _) = file_component(&engine(), &path, 1 << 20).unwrap();
        assert!(!wasm.was_read());
        std::fs::write(&path, OTHER).unwrap();
        let error = format!("{:#}", wasm.get().unwrap_err());
        assert!(
            error.contains("changed while the plugin was loading"),
            "{error}"
        );

        // Other bytes moved in by a rename are another file, and read.
        std::fs::write(dir.path().join("copy.wasm"), COMPONENT).unwrap();
        std::fs::rename(dir.path().join("copy.wasm"), &path).unwrap();
        let (wasm, digest) = file_component(&engine(), &path, 1 << 20).unwrap();
        assert!(wasm.was_read(), "a renamed-in file is read");
        assert_eq!(digest, sha);
    }
}
