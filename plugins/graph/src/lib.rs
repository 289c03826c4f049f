//! The graph traversal router: `trace_call_hierarchy` and `calculate_blast_radius`.
//!
//! Both walk the host's stored edges (`edges-from`, `edges-to`), whose targets are
//! written names, tied to definitions at query time by the SDK's attribution
//! (`scryer_plugin_sdk::callgraph`). The logic is plain Rust over the SDK's
//! [`Host`](scryer_plugin_sdk::Host) trait; `export_router!` adapts it to the WIT imports
//! when built for `wasm32-wasip2`.

pub mod blast;
mod common;
pub mod tools;
pub mod trace;

#[cfg(test)]
mod tests;

use scryer_plugin_sdk::args::Args;
use scryer_plugin_sdk::host::unknown_tool;
use scryer_plugin_sdk::{Ctx, Host, Router, ToolResult, ToolSpec};

pub struct Graph;

impl Router for Graph {
    const NAME: &'static str = "graph";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn tools() -> Vec<ToolSpec> {
        tools::tools()
    }

    fn call<H: Host + ?Sized>(host: &H, tool: &str, args: &Args, ctx: &Ctx) -> ToolResult<String> {
        match tool {
            "trace_call_hierarchy" => trace::trace_call_hierarchy(host, args, ctx),
            "calculate_blast_radius" => blast::calculate_blast_radius(host, args, ctx),
            other => Err(unknown_tool::<Graph>(other)),
        }
    }
}

scryer_plugin_sdk::export_router!(crate::Graph);
