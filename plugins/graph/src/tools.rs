//! The graph router's tool definitions: names, descriptions, schemas, annotations.

use scryer_plugin_sdk::{HostParam, ToolSpec};
use serde_json::json;

pub fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec::query(
            "trace_call_hierarchy",
            "Callers (incoming) and/or callees (outgoing) of a function, up to `depth` hops, as a \
                tree: each node has its definition and the call site. Cycles are cut and marked; \
                same-named definitions come back as `ambiguous` candidates. `complete` is false when call \
                sites are tied by name only or unresolved.",
            json!({
                "type": "object",
                "properties": {
                    "symbol": {"type": "string", "description": "name, Type::method or crate::path::name"},
                    "direction": {"type": "string", "enum": ["incoming", "outgoing", "both"], "description": "default incoming"},
                    "depth": {"type": "integer", "description": "hops, 1-5 (default 2)"},
                    "file_path": {"type": "string", "description": "narrow to the definition in this file"},
                    "offset": {"type": "integer", "description": "first node of the page (0-based)"}
                },
                "required": ["symbol"]
            }),
            1000,
        ).publishing(&[HostParam::Budget, HostParam::Project])
        .guide("who uses X", "trace_call_hierarchy(symbol, direction): call chains"),
        ToolSpec::query(
            "calculate_blast_radius",
            "What a change may break: transitive callers, implementors, constructors and re-exporters of a \
                symbol (or of every symbol a file defines, counting only what lies outside it), \
                grouped by hop, with the affected files and counts. Needs `symbol` or `file_path`.",
            json!({
                "type": "object",
                "properties": {
                    "symbol": {"type": "string", "description": "name, Type::method or crate::path::name"},
                    "file_path": {"type": "string", "description": "a file: its symbols' callers; with symbol: narrows it"},
                    "depth": {"type": "integer", "description": "hops, 1-3 (default 3)"},
                    "offset": {"type": "integer", "description": "first item of the page (0-based)"}
                }
            }),
            1000,
        ).core()
        .guide("who uses X", "calculate_blast_radius(symbol or file_path): what a change reaches"),
    ]
}
