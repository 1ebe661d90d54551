//! Toolcell: an MCP server whose tools are sandboxed WebAssembly components.

pub mod config;
