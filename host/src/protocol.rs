//! MCP: the transports and the server they carry, on both protocol
//! revisions (2025-11-25 sessions, 2026-07-28 stateless requests).

pub mod http;
pub mod relay;
pub mod server;
pub mod stdio;
