//! `[[plugin.tool]]` tables: what one tool of a plugin gets instead of the plugin's settings
//! (mounts, limits) and the name it is served by (`rename`).

use std::collections::BTreeMap;

use toml::Value;

use super::TOOL_KEYS;
use super::Validator;
use super::values::{describe, join};
use crate::config::names::{TOOL_NAME_RULE, is_tool_name};
use crate::config::types::{Limits, ToolOverride};

impl Validator<'_> {
    /// The `[[plugin.tool]]` entries at key path `path`, by name; `base_limits` are the plugin's.
    /// Their `rename`s go to `renames`, by tool name.
    pub(super) fn tool_overrides(
        &mut self,
        value: &Value,
        path: &str,
        base_limits: Limits,
        renames: &mut BTreeMap<String, String>,
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
                            format!("invalid tool name {name:?}: must be {TOOL_NAME_RULE}"),
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

            let rename = table.get("rename").and_then(|value| {
                let key = join(&prefix, "rename");
                let written = self.string(value, &key)?;
                if !is_tool_name(written) {
                    self.error(
                        key,
                        format!("invalid tool name {written:?}: must be {TOOL_NAME_RULE}"),
                    );
                    return None;
                }
                if renames.values().any(|taken| taken == written) {
                    self.error(
                        key,
                        format!("another tool of this plugin is already renamed {written:?}"),
                    );
                    return None;
                }
                Some(written.to_owned())
            });

            if let Some(name) = name
                && !duplicate
            {
                if let Some(rename) = rename {
                    renames.insert(name.clone(), rename);
                }
                overrides.insert(name, ToolOverride { mounts, limits });
            }
        }
        overrides
    }
}
