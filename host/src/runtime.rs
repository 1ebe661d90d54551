//! The plugins: components compiled once, run per call in a sandbox with
//! their limits, and the union of what they offer. Nothing here speaks MCP:
//! a run returns the contract's data, and `protocol::mcp` converts it.
//!
//! - [`toolbox`]: the union of every plugin's tools, resources and prompts.
//! - [`plugin`]: one component, compiled once and instantiated per call in a
//!   fresh store with its limits, bounded by its deadline.
//! - [`call`]: what a call is given and how it can fail.
//! - [`spec`]: a tool's checked descriptor and argument validation.
//! - [`offerings`]: resources, templates and prompts, checked at load.
//! - [`host`]: a call's store data and every interface the host implements.
//! - [`component_file`]: reading a component file with bounds; [`oci`]:
//!   components from OCI registries, pulled at load into a cache.
//! - [`plain`]: a plain component's exported functions as tools;
//!   [`command`]: a WASI command as one tool.
//! - [`sandbox`]: a call's WASI context; [`engine`]: the wasmtime engine and
//!   epoch ticker; [`codegen`]: the settings compiled code depends on;
//!   [`cache`]: the compile cache on disk; [`contract`]: the WIT bindings;
//!   [`builtin`]: the first-party plugins embedded in the binary.

pub mod builtin;
pub mod cache;
pub mod call;
pub mod codegen;
pub mod command;
pub mod component_file;
pub mod contract;
pub mod engine;
pub mod host;
pub mod oci;
pub mod offerings;
pub mod plain;
pub mod plugin;
pub mod sandbox;
pub mod spec;
pub mod toolbox;
pub mod watch;

use std::sync::OnceLock;

/// How many threads this process can run at once (the standard library's
/// `available_parallelism`, at least 1), read once: each reading opens the
/// process's cgroup files, about 0.1 ms on Linux, and a start used to read
/// it four times before loading a plugin (the async runtime, the loader,
/// the instance pool twice).
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}
