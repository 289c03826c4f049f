//! The symbol search router: `search_symbols`.
//!
//! Ranking is the host's (BM25 over names split into words, module paths, signatures
//! and docstrings, kept in memory); this router checks the question, builds the query
//! for `like_symbol`, filters by kind, pages, explains empty answers and fits the
//! answer to its budget. The logic is plain Rust over the SDK's
//! [`Host`](scryer_plugin_sdk::Host) trait, so it runs natively in tests.

pub mod search;
pub mod terms;

use scryer_plugin_sdk::args::Args;
use scryer_plugin_sdk::host::unknown_tool;
use scryer_plugin_sdk::{Ctx, Host, HostParam, Router, ToolResult, ToolSpec};
use serde_json::json;

pub fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec::query(
        "search_symbols",
        "Ranked search for definitions whose exact name you do not know, over the words of names, \
            module paths, signatures and docs. `like_symbol` finds symbols \
            similar to one (itself left out). scope_level dependencies searches the crates in \
            Cargo.lock.",
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "free text"},
                "like_symbol": {"type": "string", "description": "a name or path, instead of query"},
                "scope_level": {"type": "string", "enum": search::SCOPES, "description": "default workspace"},
                "crate_name": {"type": "string", "description": "one dependency crate"},
                "kind": {
                    "type": "array",
                    "items": {"type": "string", "enum": search::KINDS},
                    "description": "only these kinds"
                },
                "limit": {"type": "integer", "description": "1-50, default 20"},
                "offset": {"type": "integer", "description": "from next_offset"}
            }
        }),
        1500,
    ).core()
    .publishing(&[HostParam::Budget, HostParam::Project])
    .guide("find code", "search_symbols(query or like_symbol): ranked by name, path, signature, docs")]
}

pub struct Search;

impl Router for Search {
    const NAME: &'static str = "search";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn tools() -> Vec<ToolSpec> {
        tools()
    }

    fn call<H: Host + ?Sized>(host: &H, tool: &str, args: &Args, ctx: &Ctx) -> ToolResult<String> {
        match tool {
            "search_symbols" => search::search_symbols(host, args, ctx),
            other => Err(unknown_tool::<Search>(other)),
        }
    }
}

scryer_plugin_sdk::export_router!(crate::Search);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_definition_stays_small_and_portable() {
        let problems = scryer_plugin_sdk::host::definition_problems(&tools(), 960);
        assert!(problems.is_empty(), "{problems:#?}");
    }
}
