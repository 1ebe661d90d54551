//! MCP: the transports and the server they carry, on both protocol
//! revisions (2025-11-25 sessions, 2026-07-28 stateless requests).
//!
//! - [`server`]: the rmcp `ServerHandler`, and its concerns beside it.
//! - [`mcp`]: every conversion of what plugins offer and return into MCP.
//! - [`relay`]: a plugin's questions to the client, on each revision.
//! - [`stdio`] and [`http`]: the transports.

pub mod http;
pub mod mcp;
pub mod relay;
pub mod server;
pub mod stdio;
