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
