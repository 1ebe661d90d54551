//! `plugins.toml` and the defaults when there is none.
//!
//! [`Config`] is the validated file: the enabled categories, the server-wide [`Limits`] and one
//! [`PluginConfig`] per `[[plugin]]`, whose [`PluginSource`] and [`Mount`]s are already resolved
//! against the config file's directory (mounts canonicalised, so the sandbox sees the real
//! directory at its real path). A plugin's `[[plugin.tool]]` entries become its
//! [`PluginConfig::tools_overrides`]: a [`ToolOverride`] per tool name, whose mounts replace the
//! plugin's and whose limits are layered over them (server, then plugin, then tool);
//! [`PluginConfig::mounts_for`] and [`PluginConfig::limits_for`] give what one tool gets.
//!
//! - `types`: the validated configuration.
//! - `validate`: reading `plugins.toml`, reporting every problem at once.
//! - `defaults`: which folders the tools see when the user names none ([`choose`],
//!   [`MountPolicy`], [`implicit_mount_refusal`]).
//! - `dropins`: drop folders, each `NAME.wasm` a plugin granted what its `NAME.toml` grants
//!   ([`Config::with_dropins`]).
//! - `names`: the name rules that the configuration, the runtime and `toolcell new` share.

mod defaults;
mod dropins;
mod names;
mod types;
mod validate;

pub use defaults::*;
pub use dropins::folder_files;
pub use names::*;
pub use types::*;

#[cfg(test)]
mod tests;
