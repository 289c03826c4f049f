//! The navigation router: `find_references` and `get_file_outline`.
//!
//! The tool logic (`references`, `outline`) is plain Rust over the [`host::IndexHost`]
//! trait; `component` adapts it to the WIT imports when built for `wasm32-wasip2`.

pub mod host;
pub mod outline;
pub mod references;
pub mod resolve;
pub mod tools;

use scryer_plugin_sdk::args::Args;
use scryer_plugin_sdk::{ToolError, ToolResult};

pub const PLUGIN_NAME: &str = "navigation";

/// Dispatches one call to the tool's logic.
pub fn call(
    host: &dyn host::IndexHost,
    tool: &str,
    arguments: &str,
    ctx: &host::Ctx,
) -> ToolResult<String> {
    let args = Args::parse(arguments)?;
    match tool {
        "find_references" => references::find_references(host, &args, ctx),
        "get_file_outline" => outline::get_file_outline(host, &args, ctx),
        other => Err(ToolError::not_found(format!(
            "the navigation router has no tool `{other}`; it offers find_references, get_file_outline"
        ))),
    }
}

#[cfg(target_arch = "wasm32")]
mod component;
