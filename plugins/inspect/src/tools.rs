//! The inspection router's tool definition.

use scryer_plugin_sdk::ToolSpec;
use serde_json::json;

pub fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec {
        budget_per_item: Some(("symbols", 500)),
        ..ToolSpec::query(
            "inspect_symbol",
            "What a symbol is, in one call: kind, location, signature, doc, the start of its source, \
            callers and callees (members for types), reference count and the ADRs that constrain it. \
            Each capped section names the tool with the rest. Same-named definitions come back as \
            candidates; names not in the project are looked up in its dependencies.",
            json!({
                "type": "object",
                "properties": {
                    "symbol": {"type": "string", "description": "name, Type::method or crate::path::name"},
                    "symbols": {"type": "array", "items": {"type": "string"}, "description": "several names (instead of symbol)"},
                    "file_path": {"type": "string", "description": "narrow to the definition in this file"},
                    "include": {"type": "array", "items": {"type": "string", "enum": ["snippet", "callers", "callees", "references", "invariants", "members"]}, "description": "sections (default all)"},
                    "snippet_lines": {"type": "integer", "description": "source lines shown (default 25)"}
                }
            }),
            1000,
        ).core()
        .guide("what is X", "inspect_symbol(symbol): header, snippet, callers, references, ADR invariants")
    }]
}
