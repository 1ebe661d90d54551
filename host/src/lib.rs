//! Toolcell: an MCP server whose tools are sandboxed WebAssembly components.
//!
//! Three layers, each using only the ones below it:
//! - [`protocol`]: MCP. [`protocol::http`] (Streamable HTTP, with origin
//!   checks and tokens) and [`protocol::stdio`] (lines on stdin and stdout)
//!   carry [`protocol::server`], the rmcp `ServerHandler`: routing, call
//!   slots and deadlines, capabilities, the client's roots, both protocol
//!   revisions; [`protocol::relay`] carries a plugin's questions to the
//!   client (server-to-client requests, or 2026-07-28 `input_required`
//!   results).
//! - [`runtime`]: the plugins. [`runtime::toolbox`] is the union of what
//!   every plugin offers; [`runtime::plugin`] one component, compiled once
//!   and instantiated per call from an `InstancePre` in a fresh store with
//!   its limits; [`runtime::features`] checks and converts what contract
//!   0.2.0 adds (resources, prompts, completions); [`runtime::contract`] the
//!   WIT bindings; [`runtime::sandbox`] the WASI context of a call;
//!   [`runtime::engine`] the one wasmtime engine, the epoch ticker and the
//!   compile cache; [`runtime::builtin`] the first-party plugins embedded in
//!   the binary.
//! - [`config`]: `plugins.toml`, validated, with every error reported at once.
//!
//! Beside them, for plugin authors, [`authoring`]: `toolcell new`, `build`
//! and `inspect`.

pub mod authoring;
pub mod config;
pub mod protocol;
pub mod runtime;
