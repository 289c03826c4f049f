//! The navigation router: `resolve_definition`, `find_references`,
//! `get_enclosing_scope`, `get_file_outline` and `get_type_contract`.
//!
//! The tool logic (`definition`, `references`, `scope`, `outline`, `contract`, with the
//! symbol lookup they share in `lookup`) is plain Rust over the SDK's
//! [`Host`](scryer_plugin_sdk::Host) trait; `export_router!` adapts it to the WIT imports
//! when built for `wasm32-wasip2`.

pub mod contract;
pub mod definition;
pub mod lookup;
pub mod outline;
pub mod references;
pub mod scope;
#[cfg(test)]
mod test_host;
pub mod tools;

use scryer_plugin_sdk::args::Args;
use scryer_plugin_sdk::host::unknown_tool;
use scryer_plugin_sdk::{Ctx, Host, Router, ToolResult, ToolSpec};

pub struct Navigation;

impl Router for Navigation {
    const NAME: &'static str = "navigation";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn tools() -> Vec<ToolSpec> {
        tools::tools()
    }

    fn call<H: Host + ?Sized>(host: &H, tool: &str, args: &Args, ctx: &Ctx) -> ToolResult<String> {
        match tool {
            "resolve_definition" => definition::resolve_definition(host, args, ctx),
            "find_references" => references::find_references(host, args, ctx),
            "get_enclosing_scope" => scope::get_enclosing_scope(host, args, ctx),
            "get_file_outline" => outline::get_file_outline(host, args, ctx),
            "get_type_contract" => contract::get_type_contract(host, args, ctx),
            other => Err(unknown_tool::<Navigation>(other)),
        }
    }
}

scryer_plugin_sdk::export_router!(crate::Navigation);
