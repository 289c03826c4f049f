//! How sessions reach the server: the MCP handler over any byte stream, streamable HTTP,
//! and the per-line checks and ordering every transport applies before a call is run.
//!
//! - `mcp.rs`: the rmcp `ServerHandler` of one session; the only module that speaks MCP
//!   protocol types.
//! - `http.rs`: MCP over streamable HTTP (Host and token checks, a session per HTTP
//!   session).
//! - `wire.rs`: the JSON-RPC line check applied before rmcp sees a message.
//! - `order.rs`: receipt order of one session's calls.
//!
//! The Unix-socket daemon that carries MCP bytes for local clients is `crate::daemon`.

pub mod http;
pub(crate) mod mcp;
pub mod order;
pub mod wire;
