//! The architectural-memory router: `query_adrs`, `record_adr`, `delete_adr`.
//!
//! The corpus (Markdown under `docs/adr`, `docs/learnings`, `docs/plans`, plus decision
//! rows in the database) is read through the host's `docs` interface and parsed and
//! ranked here, inside the component, by `scryer-decisions`. Writes go through
//! `docs-write`, which only this router is granted; the host confines them to the
//! project's `docs/adr`.

pub mod corpus;
pub mod delete;
pub mod query;
pub mod record;
pub mod tools;

use scryer_plugin_sdk::args::Args;
use scryer_plugin_sdk::host::unknown_tool;
use scryer_plugin_sdk::{Ctx, Host, Router, ToolResult, ToolSpec};

pub struct Memory;

/// Now, in milliseconds since the Unix epoch (the WASI wall clock in the component).
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl Router for Memory {
    const NAME: &'static str = "memory";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn tools() -> Vec<ToolSpec> {
        tools::tools()
    }

    fn call<H: Host + ?Sized>(host: &H, tool: &str, args: &Args, ctx: &Ctx) -> ToolResult<String> {
        match tool {
            "query_adrs" => query::query_adrs(host, args, ctx),
            "record_adr" => record::record_adr(host, args, ctx, now_ms()),
            "delete_adr" => delete::delete_adr(host, args, ctx),
            other => Err(unknown_tool::<Memory>(other)),
        }
    }
}

scryer_plugin_sdk::export_router!(crate::Memory);

#[cfg(test)]
mod tests;
