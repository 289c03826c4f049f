//! The symbol inspection router: `inspect_symbol`.
//!
//! The logic (`inspect`) is plain Rust over the SDK's [`Host`](scryer_plugin_sdk::Host)
//! trait: the index for the definition and its neighbours (tied by the SDK's
//! attribution), the files interface for the snippet, the docs interface and the
//! `scryer-decisions` library for the decisions that bear on it. `export_router!` adapts
//! it to the WIT imports when built for `wasm32-wasip2`.

pub mod inspect;
pub mod tools;

#[cfg(test)]
mod tests;

use scryer_plugin_sdk::args::Args;
use scryer_plugin_sdk::host::unknown_tool;
use scryer_plugin_sdk::{Ctx, Host, Router, ToolResult, ToolSpec};

pub struct Inspect;

impl Router for Inspect {
    const NAME: &'static str = "inspect";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn tools() -> Vec<ToolSpec> {
        tools::tools()
    }

    fn call<H: Host + ?Sized>(host: &H, tool: &str, args: &Args, ctx: &Ctx) -> ToolResult<String> {
        match tool {
            "inspect_symbol" => inspect::inspect_symbol(host, args, ctx),
            other => Err(unknown_tool::<Inspect>(other)),
        }
    }
}

scryer_plugin_sdk::export_router!(crate::Inspect);
