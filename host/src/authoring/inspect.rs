//! `toolcell inspect`: whether Toolcell can load a component, what kind it is
//! (a contract plugin and its version, a WASI command, a plain component),
//! what it offers and which capabilities it imports. For a command or a
//! plain component, the derived schemas are shown whole, and the functions
//! that are not served with why.
//!
//! The contract version and the imports are read from the binary without
//! running it. The tools are what the plugin's `list-tools` returns when
//! Toolcell loads it as it would for `serve`: in a sandbox with nothing
//! granted (no mount, no environment variable, no host) and the default
//! limits.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use serde_json::Value;
use wasmparser::{Encoding, Parser, Payload};

use crate::config::{CONTRACT_CATEGORIES, Config, Limits, PluginConfig, PluginSource};
use crate::limits::DEFAULT_MAX_COMPONENT_MB;
use crate::runtime::component_file;
use crate::runtime::engine::{Capacity, Engine};
use crate::runtime::toolbox::Toolbox;

/// The contract package, without a version.
const CONTRACT: &str = "toolcell:plugin";
/// The contract versions this host loads.
pub const SUPPORTED: &[&str] = &["0.1.0", "0.2.0"];

/// The names a component imports and exports at its top level.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Interfaces {
    /// Imported names, such as `wasi:filesystem/types@0.2.3`.
    pub imports: Vec<String>,
    /// Exported names, such as `toolcell:plugin/tools@0.1.0`.
    pub exports: Vec<String>,
}

/// What a file is.
#[derive(Debug, PartialEq, Eq)]
pub enum Kind {
    /// A component, with its top-level imports and exports.
    Component(Interfaces),
    /// A core WebAssembly module: not a component.
    Module,
}

/// Reads the top-level imports and exports of a component, without
/// compiling or running it.
pub fn read_interfaces(bytes: &[u8]) -> Result<Kind> {
    let mut interfaces = Interfaces::default();
    // Nested modules and components report their own sections; only the
    // outermost ones matter.
    let mut depth = 0usize;
    for payload in Parser::new(0).parse_all(bytes) {
        match payload.context("not a valid WebAssembly binary")? {
            Payload::Version {
                encoding: Encoding::Module,
                ..
            } if depth == 0 => return Ok(Kind::Module),
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => match depth.checked_sub(1) {
                Some(outer) => depth = outer,
                None => break,
            },
            Payload::ComponentImportSection(reader) if depth == 0 => {
                for import in reader {
                    let import = import.context("a malformed import")?;
                    interfaces.imports.push(import.name.name.to_owned());
                }
            }
            Payload::ComponentExportSection(reader) if depth == 0 => {
                for export in reader {
                    let export = export.context("a malformed export")?;
                    interfaces.exports.push(export.name.name.to_owned());
                }
            }
            _ => {}
        }
    }
    Ok(Kind::Component(interfaces))
}

/// The contract version a component targets: the newest version among the
/// contract's interfaces it exports, if it exports `toolcell:plugin/tools`
/// (every version's plugins do; 0.2.0 adds `resources`, `prompts` and
/// `completions` beside 0.1.0's `tools`).
pub fn contract_version(interfaces: &Interfaces) -> Option<&str> {
    let versions = || {
        interfaces.exports.iter().filter_map(|name| {
            let (interface, version) = name.split_once('@')?;
            let rest = interface.strip_prefix(CONTRACT)?.strip_prefix('/')?;
            Some((rest, version))
        })
    };
    versions().find(|(rest, _)| *rest == "tools")?;
    versions().map(|(_, version)| version).max()
}

/// A capability a component's imports ask for, and the `plugins.toml` key
/// that grants it.
#[derive(Debug, PartialEq, Eq)]
pub struct Capability {
    /// What it is, for people.
    pub what: &'static str,
    /// How a configuration grants it.
    pub granted_by: &'static str,
    /// The imports that ask for it.
    pub imports: Vec<String>,
}

/// The capabilities the imports ask for, in a fixed order. Toolcell links
/// every WASI interface and denies by default, so an import is a request a
/// configuration may grant, not a grant.
pub fn capabilities(interfaces: &Interfaces) -> Vec<Capability> {
    const KINDS: &[(&str, &str, &[&str])] = &[
        (
            "files",
            "granted with `mounts`, folders read-only or read-write",
            &["wasi:filesystem/", "toolcell:files/"],
        ),
        (
            "environment variables",
            "granted with `env`, variables by name",
            &["wasi:cli/environment"],
        ),
        (
            "network",
            "granted with `network`, hosts by name; HTTP(S) only, sockets are always refused",
            &["wasi:http/", "wasi:sockets/"],
        ),
        (
            "host functions (log, progress, cancellation, config)",
            "always available; `config` holds the values",
            &["toolcell:plugin/host"],
        ),
    ];
    KINDS
        .iter()
        .filter_map(|(what, granted_by, prefixes)| {
            let imports: Vec<String> = interfaces
                .imports
                .iter()
                .filter(|name| prefixes.iter().any(|prefix| name.starts_with(prefix)))
                .cloned()
                .collect();
            (!imports.is_empty()).then_some(Capability {
                what,
                granted_by,
                imports,
            })
        })
        .collect()
}

/// The report on `file`, and whether Toolcell can load it.
pub fn inspect(file: &Path, cache_dir: Option<std::path::PathBuf>) -> Result<(String, bool)> {
    // `oci://...`: the component pulled into the cache.
    let file = &*crate::runtime::oci::local_path(
        file,
        cache_dir.as_deref(),
        DEFAULT_MAX_COMPONENT_MB << 20,
    )?;
    let bytes = component_file::read(file, DEFAULT_MAX_COMPONENT_MB << 20)?;
    let mut out = String::new();
    let size = format_size(bytes.len());
    let interfaces = match read_interfaces(&bytes)? {
        Kind::Module => {
            writeln!(
                out,
                "{}: a core WebAssembly module ({size}), not a component: Toolcell loads \
                 components that export `{CONTRACT}/tools`. Build for wasm32-wasip2, or \
                 wrap the module with `wasm-tools component new`.",
                file.display()
            )?;
            return Ok((out, false));
        }
        Kind::Component(interfaces) => interfaces,
    };
    let command = interfaces
        .exports
        .iter()
        .any(|e| e.starts_with("wasi:cli/run"));
    let kind = match contract_version(&interfaces) {
        Some(version) => format!("a Toolcell plugin, contract {CONTRACT}@{version}"),
        None if interfaces.exports.is_empty() => {
            writeln!(
                out,
                "{}: a component ({size}) that does not target the Toolcell contract: it exports \
                 nothing, so there is nothing to serve (a plugin exports `{CONTRACT}/tools@{}`, \
                 `wasi:cli/run` or functions).",
                file.display(),
                SUPPORTED[0]
            )?;
            return Ok((out, false));
        }
        None if command => {
            "a WASI command (it exports wasi:cli/run), served as one tool: `args` and `stdin` in, \
             exit code, stdout and stderr out"
                .to_owned()
        }
        None => format!(
            "a plain component (it exports {}), each exported function served as a tool; it \
             does not target the Toolcell contract",
            interfaces.exports.join(", ")
        ),
    };
    writeln!(out, "{}: {kind} ({size})", file.display())?;
    let capabilities = capabilities(&interfaces);
    writeln!(
        out,
        "\nCapabilities it imports (plugins.toml grants each, or it gets none):"
    )?;
    if capabilities.is_empty() {
        writeln!(out, "  none")?;
    }
    for capability in &capabilities {
        writeln!(
            out,
            "  {}: {}\n    {}",
            capability.what,
            capability.granted_by,
            capability.imports.join(", ")
        )?;
    }
    // The rest is what every sandbox has: clocks, random numbers, streams,
    // stdio (to the host's log), the contract's types.
    let other: Vec<&str> = interfaces
        .imports
        .iter()
        .filter(|name| !capabilities.iter().any(|c| c.imports.contains(name)))
        .filter(|name| !name.starts_with(CONTRACT))
        .map(|name| name.split_once('@').map_or(name.as_str(), |(name, _)| name))
        .collect();
    if !other.is_empty() {
        writeln!(
            out,
            "  always available, nothing to grant:\n    {}",
            other.join(", ")
        )?;
    }

    let loadable = match load(file, cache_dir) {
        Ok(toolbox) => describe_tools(&mut out, &toolbox)?,
        Err(error) => {
            writeln!(out, "\nToolcell cannot load it: {error:#}")?;
            false
        }
    };
    if loadable {
        writeln!(out, "\nToolcell can load it.")?;
    }
    Ok((out, loadable))
}

/// Loads `file` as the only plugin of a configuration that grants nothing
/// and enables every category.
fn load(file: &Path, cache_dir: Option<std::path::PathBuf>) -> Result<Toolbox> {
    let name = file
        .file_stem()
        .and_then(|stem| stem.to_str())
        .filter(|stem| super::check_name(stem).is_ok())
        .unwrap_or("plugin")
        .to_owned();
    let config = Config {
        source: file.display().to_string(),
        categories: CONTRACT_CATEGORIES.iter().map(|c| c.to_string()).collect(),
        limits: Limits::default(),
        max_concurrent_calls: 1,
        max_component_bytes: DEFAULT_MAX_COMPONENT_MB << 20,
        subscriptions: Default::default(),
        plugin_dirs: Vec::new(),
        plugins: vec![PluginConfig {
            name,
            source: PluginSource::File(std::path::absolute(file)?),
            mounts: Vec::new(),
            env: Vec::new(),
            network: Vec::new(),
            tools: None,
            config: Default::default(),
            limits: Limits::default(),
            max_concurrent_calls: None,
            categories: Vec::new(),
            tools_overrides: Default::default(),
            prefix: None,
            renames: Default::default(),
        }],
    };
    let engine = Arc::new(Engine::new(cache_dir, Capacity::default())?);
    Toolbox::load(&config, &engine)
}

/// Writes the tools a loaded toolbox holds; false if the plugin failed.
fn describe_tools(out: &mut String, toolbox: &Toolbox) -> Result<bool> {
    if let Some(failure) = toolbox.failures().first() {
        writeln!(out, "\nToolcell cannot load it: {}", failure.error)?;
        return Ok(false);
    }
    let routes: Vec<_> = toolbox.routes().iter().chain(toolbox.disabled()).collect();
    writeln!(out, "\nTools ({}):", routes.len())?;
    let mut problems = toolbox.errors().to_vec();
    for route in routes {
        let spec = &route.spec;
        writeln!(
            out,
            "  {}  [{}]  {}",
            spec.name,
            spec.category,
            spec.annotation_words().join(", "),
        )?;
        writeln!(out, "    title: {}", spec.title)?;
        let first = spec.description.lines().next().unwrap_or_default();
        writeln!(out, "    {first}")?;
        let properties = spec
            .input_schema
            .get("properties")
            .and_then(|p| p.as_object())
            .map(|p| p.keys().cloned().collect::<Vec<_>>().join(", "))
            .unwrap_or_default();
        writeln!(
            out,
            "    arguments: {}{}",
            if properties.is_empty() {
                "none"
            } else {
                &properties
            },
            if spec.output_schema.is_some() {
                "; structured output with a schema"
            } else {
                ""
            }
        )?;
        if route.plugin.kind() != "contract" {
            // Derived by the host, so shown whole: what the model will see.
            writeln!(
                out,
                "    input schema: {}",
                Value::Object((*spec.input_schema).clone())
            )?;
            if let Some(output) = &spec.output_schema {
                writeln!(
                    out,
                    "    output schema: {}",
                    Value::Object((**output).clone())
                )?;
            }
        }
        if let Err(error) = spec.check_schema() {
            problems.push(format!("tool `{}`: {error}", spec.name));
        }
    }
    for plugin in toolbox.plugins() {
        if !plugin.refused().is_empty() {
            writeln!(out, "\nFunctions not served ({}):", plugin.refused().len())?;
        }
        for refused in plugin.refused() {
            writeln!(out, "  {}: {}", refused.function, refused.reason)?;
        }
    }
    for warning in toolbox.warnings() {
        writeln!(out, "  warning: {warning}")?;
    }
    if !problems.is_empty() {
        writeln!(out, "\nProblems:")?;
        for problem in &problems {
            writeln!(out, "  {problem}")?;
        }
    }
    Ok(problems.is_empty())
}

fn format_size(bytes: usize) -> String {
    if bytes >= 1024 * 1024 {
        format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
    } else {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_core_module_is_not_a_component() {
        // The smallest core module: magic and version 1.
        let module = b"\0asm\x01\0\0\0";
        assert_eq!(read_interfaces(module).unwrap(), Kind::Module);
        assert!(read_interfaces(b"not wasm").is_err());
    }

    #[test]
    fn capabilities_are_read_from_imports() {
        let interfaces = Interfaces {
            imports: vec![
                "wasi:filesystem/types@0.2.3".into(),
                "wasi:filesystem/preopens@0.2.3".into(),
                "wasi:clocks/monotonic-clock@0.2.3".into(),
                "toolcell:plugin/host@0.1.0".into(),
            ],
            exports: vec!["toolcell:plugin/tools@0.1.0".into()],
        };
        assert_eq!(contract_version(&interfaces), Some("0.1.0"));
        let found: Vec<&str> = capabilities(&interfaces).iter().map(|c| c.what).collect();
        assert_eq!(found[0], "files");
        assert_eq!(found.len(), 2, "{found:?}");
        let none = Interfaces {
            imports: vec![],
            exports: vec!["wasi:cli/run@0.2.0".into()],
        };
        assert_eq!(contract_version(&none), None);
        let newer = Interfaces {
            imports: vec![],
            exports: vec![
                "toolcell:plugin/tools@0.1.0".into(),
                "toolcell:plugin/resources@0.2.0".into(),
            ],
        };
        assert_eq!(contract_version(&newer), Some("0.2.0"));
    }
}
