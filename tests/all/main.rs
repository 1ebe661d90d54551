//! Integration tests: they drive the real `toolcell` binary, over MCP and from the command line.
//!
//! One binary with one module per area (`support` is the harness). Test-only plugins live in
//! `tests/plugins/` and are built for wasm32-wasip2 on first use.

// A failing test should panic with a message; unwrapping is how it does so.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// The fixtures are Unix ones (symlinks, FIFOs, sockets, file modes, signals), so these tests run on
// Linux and macOS; on Windows the binary is driven by the smoke test under wine (tests/windows/).
#![cfg(unix)]

mod asking;
mod cli;
mod dropins;
mod execute_js;
mod execute_python;
mod features;
mod first_run;
mod fs;
mod git;
mod http;
mod isolation;
mod limits;
mod mcp;
mod network;
mod oci;
mod plain;
mod research;
mod sandbox;
mod schemas;
mod search;
mod subscriptions;
mod support;
mod write;
