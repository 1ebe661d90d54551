//! Toolcell: an MCP server whose tools are sandboxed WebAssembly components.
//!
//! Three layers, each using only the ones below it:
//! - [`protocol`]: MCP. [`protocol::http`] (Streamable HTTP, with origin
//!   checks and tokens) and [`protocol::stdio`] (lines on stdin and stdout)
//!   carry [`protocol::server`], the rmcp `ServerHandler`, with its concerns
//!   beside it (call slots and deadlines, notifications, client roots,
//!   subscriptions, questions to the client); [`protocol::mcp`] converts
//!   what plugins offer and return into MCP; [`protocol::relay`] carries a
//!   plugin's questions to the client on each revision.
//! - [`runtime`]: the plugins, speaking the contract and no MCP.
//!   [`runtime::toolbox`] is the union of what every plugin offers;
//!   [`runtime::plugin`] one component, compiled once and instantiated per
//!   call in a fresh store with its limits; [`runtime::call`] the call API;
//!   [`runtime::host`] the interfaces the host implements for plugins.
//! - [`config`]: `plugins.toml`, validated with every error reported at once,
//!   and the defaults: which folders the tools see when none is named.
//!
//! Below them all, two leaves: [`limits`], every cap in one place, and
//! [`builtins`], the table of first-party plugins that `build.rs` builds.
//!
//! Beside the layers, for plugin authors, [`authoring`]: `toolcell new`,
//! `build` and `inspect`. The `toolcell` binary (`src/main.rs` and
//! `src/cli/`) parses the command line and calls these.

pub mod authoring;
pub mod builtins;
pub mod config;
pub mod limits;
pub mod protocol;
pub mod runtime;

// The build script's code layout (`hot-code/link.rs`), compiled here only
// so that its tests run with the crate's.
#[cfg(test)]
#[path = "../hot-code/link.rs"]
mod hot_code;
