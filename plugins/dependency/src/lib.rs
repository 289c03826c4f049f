//! The dependency discovery router: `get_crate_outline`.
//!
//! The host indexes the crates a project locks in `Cargo.lock` from the local cargo
//! registry, once, into a shared dependency index; this router turns one crate's
//! definitions into an outline of its modules and public items, explains crates it
//! cannot show, and fits the answer to its budget. The logic is plain Rust over the
//! SDK's [`Host`](scryer_plugin_sdk::Host) trait, so it runs natively in tests.

pub mod outline;
pub mod similar;

use scryer_plugin_sdk::args::Args;
use scryer_plugin_sdk::host::unknown_tool;
use scryer_plugin_sdk::{Ctx, Host, HostParam, Router, ToolResult, ToolSpec};
use serde_json::json;

pub fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec::query(
        "get_crate_outline",
        "Public API of a crate locked in Cargo.lock: its modules with their public types, traits, \
            functions and constants (line, shortened signature). \
            `module` narrows to a module and its submodules.",
        json!({
            "type": "object",
            "properties": {
                "crate_name": {"type": "string", "description": "as in Cargo.lock"},
                "version": {"type": "string", "description": "default: the locked one"},
                "module": {"type": "string", "description": "e.g. de or serde_json::de"},
                "offset": {"type": "integer", "description": "from next_offset"}
            },
            "required": ["crate_name"]
        }),
        1000,
    ).publishing(&[HostParam::Budget, HostParam::Project])
    .guide("dependencies", "get_crate_outline(crate_name): a locked crate's modules and types")]
}

pub struct Dependency;

impl Router for Dependency {
    const NAME: &'static str = "dependency";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn tools() -> Vec<ToolSpec> {
        tools()
    }

    fn call<H: Host + ?Sized>(host: &H, tool: &str, args: &Args, ctx: &Ctx) -> ToolResult<String> {
        match tool {
            "get_crate_outline" => outline::get_crate_outline(host, args, ctx),
            other => Err(unknown_tool::<Dependency>(other)),
        }
    }
}

scryer_plugin_sdk::export_router!(crate::Dependency);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_definition_stays_small_and_portable() {
        let problems = scryer_plugin_sdk::host::definition_problems(&tools(), 650);
        assert!(problems.is_empty(), "{problems:#?}");
    }

    #[test]
    fn an_unknown_tool_names_the_one_there_is() {
        let e = Dependency::call(
            &scryer_plugin_sdk::testing::MemHost::default(),
            "get_crate_outlines",
            &Args::parse("{}").unwrap(),
            &Ctx::default(),
        )
        .unwrap_err();
        assert!(e.message.contains("get_crate_outline"), "{}", e.message);
    }
}
