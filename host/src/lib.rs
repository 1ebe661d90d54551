//! Toolcell: an MCP server whose tools are sandboxed WebAssembly components.
//!
//! The pieces, in the order a request meets them:
//! - [`config`]: `plugins.toml`, validated, with every error reported at once.
//! - [`engine`]: the one wasmtime engine, the epoch ticker behind time limits
//!   and cancellation, and the on-disk compile cache.
//! - [`plugin`]: one component, compiled once, instantiated per call from an
//!   `InstancePre` in a fresh store with its limits.
//! - [`sandbox`]: the WASI context of a call, built from the plugin's grants.
//! - [`toolbox`]: the union of every plugin's enabled tools.
//! - [`server`]: the MCP `ServerHandler`: routing, call slots and deadlines,
//!   capabilities, the client's roots.
//! - [`stdio`]: the line transport on stdin and stdout.
//! - [`http`]: the Streamable HTTP transport, with origin checks and tokens.
//! - [`builtin`]: the first-party plugins embedded in the binary.
//!
//! Beside them, for plugin authors, [`authoring`]: `toolcell new`, `build`
//! and `inspect`.

pub mod authoring;
pub mod builtin;
pub mod config;
pub mod contract;
pub mod engine;
pub mod features;
pub mod http;
pub mod plugin;
pub mod relay;
pub mod sandbox;
pub mod server;
pub mod stdio;
pub mod toolbox;
