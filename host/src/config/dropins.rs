//! Drop folders: each `NAME.wasm` in one is a plugin named `NAME`, granted
//! what an optional `NAME.toml` beside it grants, and nothing without one.
//!
//! [`Config::with_dropins`] scans the folders (`[server] plugin_dirs` and
//! `serve --plugins DIR`) and appends their plugins after the `[[plugin]]`
//! tables, folder by folder, each folder sorted by file name. A `NAME.toml`
//! holds the keys of a `[[plugin]]` table but `name` and `path`, and is
//! checked by the same code ([`validate::dropin`](super::validate)); its
//! relative paths resolve against the folder. A `NAME.toml` with no
//! `NAME.wasm` beside it names a registry's component (`path =
//! "oci://..."`) and nothing else. Whatever is wrong with one
//! file (a bad name, a name already taken, a `NAME.toml` that does not
//! validate or is too large) refuses that plugin alone, as a
//! [`ConfigError`] naming the file; a folder that cannot be read or holds
//! more than [`MAX_DROPIN_FILES`] files is refused whole.
//! [`folder_files`] lists what a folder holds, for the scan and for the
//! watcher that reloads on a change.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toml::Table;

use super::names::{PLUGIN_NAME_RULE, is_plugin_name};
use super::types::{Config, ConfigError, PluginConfig};
use super::validate;
use crate::limits::{MAX_DROPIN_FILES, MAX_DROPIN_TOML_BYTES};

/// The files of a drop folder that matter: `.wasm` and `.toml`, sorted by
/// name. Hidden files (an editor's `.x.wasm.swp`) are left out. More than
/// [`MAX_DROPIN_FILES`] is an error, and so is a folder that cannot be read.
pub fn folder_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read the folder: {e}"))?;
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot read the folder: {e}"))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        if name.starts_with('.') || !(name.ends_with(".wasm") || name.ends_with(".toml")) {
            continue;
        }
        if files.len() == MAX_DROPIN_FILES {
            return Err(format!(
                "holds more than {MAX_DROPIN_FILES} .wasm and .toml files (MAX_DROPIN_FILES): \
                 none of them is loaded; split it into several folders"
            ));
        }
        files.push(entry.path());
    }
    files.sort();
    Ok(files)
}

impl Config {
    /// This configuration with the plugins of its drop folders
    /// ([`Config::plugin_dirs`], then `extra_dirs`, each canonical) appended,
    /// and what was refused, one [`ConfigError`] per file (or folder).
    pub fn with_dropins(mut self, extra_dirs: &[PathBuf]) -> (Config, Vec<ConfigError>) {
        for dir in extra_dirs {
            if !self.plugin_dirs.contains(dir) {
                self.plugin_dirs.push(dir.clone());
            }
        }
        // Each name and where it came from, for the message of a clash.
        let mut taken: BTreeMap<String, String> = self
            .plugins
            .iter()
            .map(|plugin| {
                (
                    plugin.name.clone(),
                    format!("a [[plugin]] of {}", self.source),
                )
            })
            .collect();
        let mut refused = Vec::new();
        let mut added = Vec::new();
        for dir in &self.plugin_dirs {
            let files = match folder_files(dir) {
                Ok(files) => files,
                Err(reason) => {
                    refused.push(refusal(dir, "(folder)", reason));
                    continue;
                }
            };
            // Each NAME.wasm, and each NAME.toml alone (a registry's component, or
            // the settings of a component still being copied in).
            let dropins = files.iter().filter(|file| {
                has_extension(file, "wasm")
                    || (has_extension(file, "toml")
                        && !files.contains(&file.with_extension("wasm")))
            });
            for wasm in dropins {
                match self.dropin(dir, wasm, &files, &taken) {
                    Ok(plugin) => {
                        taken.insert(plugin.name.clone(), wasm.display().to_string());
                        added.push(plugin);
                    }
                    Err(errors) => refused.extend(errors),
                }
            }
        }
        self.plugins.extend(added);
        (self, refused)
    }

    /// The plugin `wasm` (a `NAME.wasm`, or a `NAME.toml` alone, of `dir`,
    /// whose files are `files`) is, or why it is refused.
    fn dropin(
        &self,
        dir: &Path,
        wasm: &Path,
        files: &[PathBuf],
        taken: &BTreeMap<String, String>,
    ) -> Result<PluginConfig, Vec<ConfigError>> {
        let name = wasm
            .file_stem()
            .and_then(|stem| stem.to_str())
            .unwrap_or_default();
        if !is_plugin_name(name) {
            return Err(vec![refusal(
                wasm,
                "(file name)",
                format!(
                    "invalid plugin name {name:?}: a drop-in is named after its file, and the \
                     name must be {PLUGIN_NAME_RULE}; rename the file"
                ),
            )]);
        }
        if let Some(first) = taken.get(name) {
            return Err(vec![refusal(
                wasm,
                "(file name)",
                format!(
                    "the plugin name {name:?} is already used by {first}: rename the file \
                     (plugin names must be unique)"
                ),
            )]);
        }
        let toml = wasm.with_extension("toml");
        let source = toml.display().to_string();
        let table = if files.contains(&toml) {
            read_table(&toml, &source)?
        } else {
            Table::new()
        };
        let component = has_extension(wasm, "wasm").then(|| wasm.to_path_buf());
        validate::dropin(&table, &source, dir, name, component, self.limits)
    }
}

/// The `NAME.toml` at `path`, parsed, if it is at most
/// [`MAX_DROPIN_TOML_BYTES`] of TOML.
fn read_table(path: &Path, source: &str) -> Result<Table, Vec<ConfigError>> {
    let size = std::fs::metadata(path)
        .map_err(|e| vec![refusal(path, "(file)", format!("cannot read file: {e}"))])?
        .len();
    if size > MAX_DROPIN_TOML_BYTES {
        return Err(vec![refusal(
            path,
            "(file)",
            format!(
                "is {size} bytes, over the limit of {MAX_DROPIN_TOML_BYTES} bytes for a \
                 drop-in's settings (MAX_DROPIN_TOML_BYTES)"
            ),
        )]);
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| vec![refusal(path, "(file)", format!("cannot read file: {e}"))])?;
    text.parse::<Table>().map_err(|e| {
        let message = e.message().to_owned();
        let at = e
            .span()
            .map(|span| {
                let line = text[..span.start.min(text.len())].lines().count().max(1);
                format!("line {line}")
            })
            .unwrap_or_else(|| "(syntax)".to_owned());
        vec![ConfigError {
            file: source.to_owned(),
            key: at,
            message: format!("invalid TOML: {message}"),
        }]
    })
}

fn has_extension(path: &Path, extension: &str) -> bool {
    path.extension().is_some_and(|e| e == extension)
}

fn refusal(path: &Path, key: &str, message: impl Into<String>) -> ConfigError {
    ConfigError {
        file: path.display().to_string(),
        key: key.to_owned(),
        message: message.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::PluginSource;

    fn config(dir: &Path) -> Config {
        let text = format!(
            "[server]\nplugin_dirs = [{:?}]\n[[plugin]]\nname = \"taken\"\npath = \"builtin:fs\"\n",
            dir.display().to_string()
        );
        Config::parse(&text, "plugins.toml", dir, crate::builtins::BUILTINS).unwrap()
    }

    #[test]
    fn each_file_is_refused_alone() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dunce::canonicalize(dir.path()).unwrap();
        for name in ["b", "a", "Bad Name", "taken", "grants", "broken"] {
            std::fs::write(dir.join(format!("{name}.wasm")), b"x").unwrap();
        }
        std::fs::write(
            dir.join("grants.toml"),
            "env = [\"HOME\"]\n[limits]\ntimeout_ms = 5\n",
        )
        .unwrap();
        std::fs::write(dir.join("broken.toml"), "name = \"x\"\nmounts = 3\n").unwrap();
        std::fs::write(dir.join(".hidden.wasm"), b"x").unwrap();
        let (config, refused) = config(&dir).with_dropins(&[]);
        let names: Vec<&str> = config.plugins.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["taken", "a", "b", "grants"]);
        let a = &config.plugins[1];
        assert!(a.mounts.is_empty() && a.env.is_empty() && a.network.is_empty());
        assert_eq!(config.plugins[3].env, ["HOME"]);
        assert_eq!(config.plugins[3].limits.timeout_ms, 5);
        let messages: Vec<String> = refused.iter().map(ToString::to_string).collect();
        assert_eq!(messages.len(), 4, "{messages:#?}");
        assert!(messages[0].contains("Bad Name.wasm: (file name): invalid plugin name"));
        assert!(messages[1].contains("broken.toml: name: a drop-in's name is its file name"));
        assert!(messages[2].contains("broken.toml: mounts: expected an array"));
        assert!(messages[3].contains("taken.wasm: (file name): the plugin name \"taken\""));
    }

    #[test]
    fn a_toml_alone_names_a_registrys_component_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dunce::canonicalize(dir.path()).unwrap();
        let digest = "a".repeat(64);
        std::fs::write(
            dir.join("pulled.toml"),
            format!(
                "path = \"oci://127.0.0.1:5000/tools/pulled@sha256:{digest}\"\ninsecure = true\n"
            ),
        )
        .unwrap();
        std::fs::write(dir.join("local.toml"), "path = \"other.wasm\"\n").unwrap();
        std::fs::write(dir.join("waiting.toml"), "env = [\"HOME\"]\n").unwrap();
        // Beside a NAME.wasm, neither `path` nor a registry's keys belong.
        std::fs::write(dir.join("file.wasm"), b"x").unwrap();
        std::fs::write(dir.join("file.toml"), "verify = { key = \"k.pub\" }\n").unwrap();
        let (config, refused) = config(&dir).with_dropins(&[]);
        let names: Vec<&str> = config.plugins.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["taken", "pulled"]);
        let PluginSource::Oci(oci) = &config.plugins[1].source else {
            panic!("pulled.toml serves a registry's component");
        };
        assert!(oci.insecure);
        assert_eq!(
            oci.reference.digest.as_deref(),
            Some(format!("sha256:{digest}").as_str())
        );
        let messages: Vec<String> = refused.iter().map(ToString::to_string).collect();
        assert_eq!(messages.len(), 3, "{messages:#?}");
        assert!(
            messages[0].contains("file.toml: verify: only a plugin from a registry"),
            "{messages:#?}"
        );
        assert!(
            messages[1].contains("local.toml: path: a drop-in's `path` can only name a registry"),
            "{messages:#?}"
        );
        assert!(
            messages[2].contains("waiting.toml: path: no NAME.wasm beside this file"),
            "{messages:#?}"
        );
    }

    #[test]
    fn a_crowded_folder_is_refused_whole() {
        let dir = tempfile::tempdir().unwrap();
        for index in 0..=MAX_DROPIN_FILES {
            std::fs::write(dir.path().join(format!("p{index}.toml")), b"").unwrap();
        }
        let error = folder_files(dir.path()).unwrap_err();
        assert!(error.contains("MAX_DROPIN_FILES"), "{error}");
    }
}
